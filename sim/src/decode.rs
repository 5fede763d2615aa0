//! `rocenic decode`: what the model's receive path makes of each frame of a
//! capture — accepted with its headers, or dropped with a reason. It checks
//! what the NIC checks (`DecodeOptions::NIC`).

use anyhow::{Context, Result};
use pcap_file::pcap::PcapReader;
use rocenic_wire::{opcode, DecodeError, DecodeOptions, RoceFrame};
use serde::Serialize;
use std::fs::File;
use std::path::Path;

/// One frame of a capture as the decoder judged it.
#[derive(Clone, Debug, Serialize)]
pub struct FrameReport {
    /// 1-based, as Wireshark numbers frames.
    pub frame: usize,
    pub ok: bool,
    /// Stable drop reason (`DecodeError::reason`), null when ok.
    pub error: Option<&'static str>,
    pub error_detail: Option<String>,
    pub opcode: Option<u8>,
    pub opcode_name: Option<&'static str>,
    pub dest_qp: Option<u32>,
    pub psn: Option<u32>,
    pub payload_len: Option<usize>,
    /// The frame's UDP checksum checked on the side: null when the frame
    /// carries none (zero) or its headers do not parse. The NIC does not
    /// verify it (`DecodeOptions::NIC`), so `false` here does not drop.
    pub udp_checksum_ok: Option<bool>,
    /// Every decoded header, present when the headers parsed (also for a
    /// frame dropped only for its ICRC).
    pub headers: Option<Headers>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Headers {
    pub eth: rocenic_wire::EthHeader,
    pub ip: rocenic_wire::IpHeader,
    pub udp_src_port: u16,
    pub bth: rocenic_wire::Bth,
    #[serde(flatten)]
    pub ext: rocenic_wire::ExtHeaders,
    pub icrc: u32,
}

/// Whether the frame's UDP checksum is right; `None` when its headers do
/// not parse or it carries no checksum (zero).
pub fn udp_checksum_ok(bytes: &[u8]) -> Option<bool> {
    let parsed = RoceFrame::parse_with(bytes, DecodeOptions::NIC).ok()?;
    parsed.frame.udp_checksum.then(|| {
        !matches!(
            RoceFrame::parse(bytes),
            Err(DecodeError::BadUdpChecksum { .. })
        )
    })
}

impl FrameReport {
    /// Frame number `index` of `bytes`, nothing judged yet.
    pub fn new(index: usize, bytes: &[u8]) -> FrameReport {
        FrameReport {
            frame: index,
            ok: false,
            error: None,
            error_detail: None,
            opcode: None,
            opcode_name: None,
            dest_qp: None,
            psn: None,
            payload_len: None,
            udp_checksum_ok: udp_checksum_ok(bytes),
            headers: None,
        }
    }

    /// Fills in the fields of a frame whose headers were read, with
    /// `payload_len` payload bytes and `icrc` as found on the wire.
    pub fn describe(&mut self, f: &RoceFrame, payload_len: usize, icrc: u32) {
        self.opcode = Some(f.bth.opcode);
        self.opcode_name = opcode::info(f.bth.opcode).map(|o| o.name);
        self.dest_qp = Some(f.bth.dest_qp);
        self.psn = Some(f.bth.psn);
        self.payload_len = Some(payload_len);
        self.headers = Some(Headers {
            eth: f.eth,
            ip: f.ip,
            udp_src_port: f.udp_src_port,
            bth: f.bth,
            ext: f.ext,
            icrc,
        });
    }
}

/// Judges one frame.
pub fn judge(index: usize, bytes: &[u8]) -> FrameReport {
    let mut report = FrameReport::new(index, bytes);
    let parsed = match RoceFrame::parse_with(bytes, DecodeOptions::NIC) {
        Ok(p) => p,
        Err(e) => {
            report.error = Some(e.reason());
            report.error_detail = Some(e.to_string());
            return report;
        }
    };
    let f = &parsed.frame;
    report.describe(f, f.payload.len(), parsed.icrc_found);
    if parsed.icrc_found == parsed.icrc_computed {
        report.ok = true;
    } else {
        let e = DecodeError::BadIcrc {
            found: parsed.icrc_found,
            computed: parsed.icrc_computed,
        };
        report.error = Some(e.reason());
        report.error_detail = Some(e.to_string());
    }
    report
}

/// Reads every frame of an Ethernet pcap.
pub fn read_pcap(path: &Path) -> Result<Vec<Vec<u8>>> {
    let file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut reader =
        PcapReader::new(file).with_context(|| format!("{} is not a pcap file", path.display()))?;
    let mut frames = Vec::new();
    while let Some(packet) = reader.next_packet() {
        let packet = packet.with_context(|| format!("{}: damaged pcap record", path.display()))?;
        frames.push(packet.data.into_owned());
    }
    Ok(frames)
}

/// Decodes every frame of a capture.
pub fn decode_pcap(path: &Path) -> Result<Vec<FrameReport>> {
    Ok(read_pcap(path)?
        .iter()
        .enumerate()
        .map(|(i, bytes)| judge(i + 1, bytes))
        .collect())
}
