//! `rocenic decode --backend rtl`: what the Verilated RX parser (with its
//! in-line ICRC checker) does with each frame of a capture, reported in the
//! model backend's JSON shape plus the hardware's own drop reason.
//!
//! The frames go through one parser back to back, at full rate, as a MAC
//! would deliver them. An empty record never reaches the parser (a MAC
//! delivers no empty frame, and AXI-Stream cannot carry one); it is
//! reported dropped as truncated without a hardware reason.

use crate::decode::{read_pcap, FrameReport};
use anyhow::Result;
use rocenic_hdl::frame::rx::header_record::DropReason;
use rocenic_rtl::icrc::icrc_span;
use rocenic_rtl::rx::{run_rx_parser, RxDrive, RxOutput};
use rocenic_wire::ICRC_LEN;
use serde::Serialize;
use std::path::Path;
use verilator_sys::RxParser;

/// One frame as the RTL judged it.
#[derive(Clone, Debug, Serialize)]
pub struct RtlFrameReport {
    /// The model backend's fields, filled from the RTL's header record:
    /// `ok` and `error` are the parser's verdict; `headers` are present
    /// when the parser parsed them (accepted, or dropped only for the
    /// ICRC). `headers.icrc` is read from the frame: the parser checks the
    /// ICRC without extracting it.
    #[serde(flatten)]
    pub report: FrameReport,
    /// The record's drop reason code (0: accepted; see
    /// `rocenic_hdl::frame::rx::header_record::DropReason`), null when the frame never
    /// reached the parser.
    pub hw_reason_code: Option<u8>,
    /// Its name, as the parser's counters label it.
    pub hw_reason: Option<&'static str>,
    /// Bytes in the payload segment the parser emitted, null when none.
    pub hw_payload_bytes: Option<usize>,
}

/// A whole capture through the RTL.
#[derive(Clone, Debug, Serialize)]
pub struct RtlDecode {
    pub frames: Vec<RtlFrameReport>,
    /// The parser's counters after the capture: `accepted` and one per
    /// drop reason, by name.
    pub counters: Vec<(&'static str, u64)>,
    /// Clock cycles the capture took at one beat per cycle.
    pub cycles: u64,
}

fn report_of(index: usize, bytes: &[u8], out: &RxOutput) -> RtlFrameReport {
    let r = &out.record;
    let code = r.get("reason") as u8;
    let hw_reason = DropReason::from_code(code).map(DropReason::name);
    let mut report = FrameReport::new(index, bytes);
    report.ok = !r.dropped();
    if r.dropped() {
        report.error = Some(hw_reason.unwrap_or("unknown"));
        report.error_detail = Some(match hw_reason {
            Some(name) => format!("RX parser dropped the frame: {name} (code {code})"),
            None => format!("RX parser dropped the frame with unknown reason code {code}"),
        });
    }
    if !r.dropped() || hw_reason == Some("icrc") {
        let f = r.frame(Vec::new());
        // The parser checks the ICRC without extracting it: read it from the
        // frame for the report.
        let icrc = icrc_span(bytes).map_or(0, |s| {
            let at = s.end - ICRC_LEN;
            u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
        });
        report.describe(&f, r.payload_len(), icrc);
    }
    RtlFrameReport {
        report,
        hw_reason_code: Some(code),
        hw_reason,
        hw_payload_bytes: out.segment.as_ref().map(|s| s.bytes.len()),
    }
}

/// Runs `frames` (a capture's records, in order) through the RTL.
pub fn decode_frames(frames: &[Vec<u8>]) -> Result<RtlDecode> {
    let sendable: Vec<Vec<u8>> = frames.iter().filter(|f| !f.is_empty()).cloned().collect();
    let run = run_rx_parser::<RxParser>(&sendable, RxDrive::default())?;
    let mut outputs = run.outputs.iter();
    let mut reports = Vec::with_capacity(frames.len());
    for (i, bytes) in frames.iter().enumerate() {
        if bytes.is_empty() {
            let mut model = crate::decode::judge(i + 1, bytes);
            model.error_detail = Some("empty frame: a MAC delivers none to the parser".into());
            reports.push(RtlFrameReport {
                report: model,
                hw_reason_code: None,
                hw_reason: None,
                hw_payload_bytes: None,
            });
            continue;
        }
        let out = outputs
            .next()
            .ok_or_else(|| anyhow::anyhow!("the RX parser returned fewer records than frames"))?;
        reports.push(report_of(i + 1, bytes, out));
    }
    let names = std::iter::once("accepted").chain(DropReason::ALL.iter().map(|r| r.name()));
    Ok(RtlDecode {
        frames: reports,
        counters: names.zip(run.counters.iter().copied()).collect(),
        cycles: run.cycles,
    })
}

/// Decodes every frame of a capture with the RTL.
pub fn decode_pcap(path: &Path) -> Result<RtlDecode> {
    decode_frames(&read_pcap(path)?)
}
