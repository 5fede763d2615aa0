//! Nanosecond-resolution pcap output (linktype Ethernet) for Wireshark and
//! tshark, and a capture sink that writes fabric events into it.

use crate::engine::{CaptureSink, Fabric};
use crate::stats::{CaptureEvent, CaptureKind};
use crate::{Endpoint, Time};
use pcap_file::pcap::{PcapHeader, PcapPacket};
use pcap_file::{DataLink, Endianness, PcapError, TsResolution};
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// Largest frame stored whole (libpcap's maximum snapshot length); longer
/// frames are truncated in the file with their original length kept, as
/// capture tools do.
pub const SNAPLEN: u32 = 262_144;

/// Writes Ethernet frames with nanosecond timestamps (simulation time).
pub struct PcapWriter<W: Write = BufWriter<File>> {
    inner: pcap_file::pcap::PcapWriter<W>,
    frames: u64,
}

impl PcapWriter<BufWriter<File>> {
    /// Creates (truncates) the file at `path` and writes the pcap header.
    pub fn create(path: impl AsRef<Path>) -> io::Result<Self> {
        PcapWriter::new(BufWriter::new(File::create(path)?))
    }
}

fn to_io(e: PcapError) -> io::Error {
    match e {
        PcapError::IoError(e) => e,
        other => io::Error::new(io::ErrorKind::InvalidData, other),
    }
}

impl<W: Write> PcapWriter<W> {
    /// Writes the pcap header to `writer`. Little-endian whatever the host,
    /// so the same run gives the same file everywhere.
    pub fn new(writer: W) -> io::Result<Self> {
        let header = PcapHeader {
            snaplen: SNAPLEN,
            datalink: DataLink::ETHERNET,
            ts_resolution: TsResolution::NanoSecond,
            endianness: Endianness::Little,
            ..PcapHeader::default()
        };
        let inner = pcap_file::pcap::PcapWriter::with_header(writer, header).map_err(to_io)?;
        Ok(PcapWriter { inner, frames: 0 })
    }

    /// Appends one frame (FCS excluded) seen at `time_ns`.
    pub fn write(&mut self, time_ns: Time, frame: &[u8]) -> io::Result<()> {
        let orig_len = u32::try_from(frame.len()).unwrap_or(u32::MAX);
        let kept = &frame[..frame.len().min(SNAPLEN as usize)];
        let packet = PcapPacket::new(Duration::from_nanos(time_ns), orig_len, kept);
        self.inner.write_packet(&packet).map_err(to_io)?;
        self.frames += 1;
        Ok(())
    }

    /// Frames written so far.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// Flushes and hands back the underlying writer.
    pub fn finish(self) -> io::Result<W> {
        let mut w = self.inner.into_writer();
        w.flush()?;
        Ok(w)
    }
}

struct Shared<W: Write> {
    writer: Option<PcapWriter<W>>,
    error: Option<io::Error>,
}

/// Handle on a pcap file being filled by a fabric capture sink. A write
/// error stops the capture and is reported by [`PcapCapture::finish`].
pub struct PcapCapture<W: Write = BufWriter<File>> {
    shared: Arc<Mutex<Shared<W>>>,
}

impl<W: Write + Send + 'static> PcapCapture<W> {
    /// A sink writing the events `filter` accepts, and its handle.
    pub fn sink(
        writer: PcapWriter<W>,
        mut filter: impl FnMut(&CaptureEvent) -> bool + Send + 'static,
    ) -> (CaptureSink, PcapCapture<W>) {
        let shared = Arc::new(Mutex::new(Shared {
            writer: Some(writer),
            error: None,
        }));
        let inner = Arc::clone(&shared);
        let sink: CaptureSink = Box::new(move |ev: &CaptureEvent| {
            if !filter(ev) {
                return;
            }
            let mut s = inner.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(w) = s.writer.as_mut() {
                if let Err(e) = w.write(ev.time, ev.frame) {
                    s.writer = None;
                    s.error = Some(e);
                }
            }
        });
        (sink, PcapCapture { shared })
    }

    /// Frames written so far.
    pub fn frames(&self) -> u64 {
        let s = self.shared.lock().unwrap_or_else(PoisonError::into_inner);
        s.writer.as_ref().map_or(0, PcapWriter::frames)
    }

    /// Stops the capture (later events are ignored), flushes, and returns
    /// the writer or the first error met.
    pub fn finish(self) -> io::Result<W> {
        let mut s = self.shared.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(e) = s.error.take() {
            return Err(e);
        }
        match s.writer.take() {
            Some(w) => w.finish(),
            None => Err(io::Error::other("pcap capture already finished")),
        }
    }
}

impl<E: Endpoint> Fabric<E> {
    /// Adds a capture of the events `filter` accepts into `writer`.
    pub fn capture_pcap<W: Write + Send + 'static>(
        &mut self,
        writer: PcapWriter<W>,
        filter: impl FnMut(&CaptureEvent) -> bool + Send + 'static,
    ) -> PcapCapture<W> {
        let (sink, handle) = PcapCapture::sink(writer, filter);
        self.add_capture(sink);
        handle
    }

    /// Captures every frame as its sender emitted it into a pcap file.
    pub fn capture_emitted_pcap(&mut self, path: impl AsRef<Path>) -> io::Result<PcapCapture> {
        let writer = PcapWriter::create(path)?;
        Ok(self.capture_pcap(writer, |ev| ev.kind == CaptureKind::Emitted))
    }
}
