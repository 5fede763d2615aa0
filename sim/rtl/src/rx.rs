//! The Verilated RX parser (`rocenic_hdl::frame::rx::rx_parser`) fed from a frame
//! stream, what it said about each frame in the model's terms, and the
//! model's verdict to compare it with.
//!
//! The parser has an AXI-Stream input `rx`, a payload stream `payload`
//! whose last beat carries `payload_drop`, a header record channel
//! `record_record` / `record_valid` / `record_ready`, and a counter read
//! port `stat_select` / `stat_count`. Records are unpacked by the field
//! layout of `rocenic_hdl::frame::rx::header_record::HeaderRecord`, so a field added
//! there shows up here without an edit.
//!
//! The one documented difference from the model: the RTL does not verify
//! the UDP checksum (RoCEv2 relies on the ICRC; IPv4 senders send zero), so
//! [`model_rx`] judges a frame as the codec would with the checksum field
//! ignored.

use super::stream::{
    AxisInPorts, AxisOutPorts, ChannelOutPorts, HandshakeSink, StreamSink, StreamSource,
};
use super::RtlError;
use rocenic_hdl::frame::rx::header_record::{DropReason, HeaderRecord};
use rocenic_wire::*;
use std::net::{Ipv4Addr, Ipv6Addr};
use verilator_sys::{Block, Sim};

/// A header record as the RTL emitted it: every field of
/// `HeaderRecord::layout()` by name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RxRecord {
    fields: Vec<(&'static str, u128)>,
}

/// Record fields this harness reads; [`check_record_layout`] makes sure the
/// RTL's record still has them.
const FIELDS_USED: &[&str] = &[
    "drop",
    "reason",
    "has_payload",
    "eth_dst",
    "eth_src",
    "ipv6",
    "ip_src",
    "ip_dst",
    "dscp",
    "ecn",
    "ipv4_identification",
    "ipv4_dont_fragment",
    "ttl",
    "ipv6_flow_label",
    "udp_src_port",
    "udp_checksum",
    "opcode",
    "solicited",
    "mig_req",
    "pad_count",
    "tver",
    "pkey",
    "fecn",
    "becn",
    "dest_qp",
    "ack_req",
    "psn",
    "has_deth",
    "has_reth",
    "has_atomic_eth",
    "has_aeth",
    "has_atomic_ack_eth",
    "has_imm",
    "has_ieth",
    "deth_qkey",
    "deth_src_qp",
    "reth_va",
    "reth_rkey",
    "reth_dma_len",
    "atomic_va",
    "atomic_rkey",
    "atomic_swap_add",
    "atomic_compare",
    "aeth_syndrome",
    "aeth_msn",
    "atomic_ack_orig",
    "imm",
    "ieth_rkey",
    "payload_len",
];

/// Fails when the record layout lacks a field the harness reads.
pub fn check_record_layout() -> Result<(), RtlError> {
    let layout = HeaderRecord::layout();
    for name in FIELDS_USED {
        if !layout.iter().any(|(n, _)| n == name) {
            return Err(RtlError::Unsupported(format!(
                "the header record has no field `{name}`"
            )));
        }
    }
    Ok(())
}

impl RxRecord {
    /// Unpacks a record from the port's little-endian words.
    pub fn from_words(words: &[u64]) -> RxRecord {
        let mut at = 0usize;
        let fields = HeaderRecord::layout()
            .into_iter()
            .map(|(name, width)| {
                let mut v = 0u128;
                for i in 0..width.min(128) {
                    let bit = at + i;
                    if words
                        .get(bit / 64)
                        .is_some_and(|w| w >> (bit % 64) & 1 == 1)
                    {
                        v |= 1 << i;
                    }
                }
                at += width;
                (name, v)
            })
            .collect();
        RxRecord { fields }
    }

    /// A field's value; 0 for a name the layout does not have.
    pub fn get(&self, name: &str) -> u128 {
        self.fields
            .iter()
            .find(|(n, _)| *n == name)
            .map_or(0, |(_, v)| *v)
    }

    fn flag(&self, name: &str) -> bool {
        self.get(name) & 1 == 1
    }

    /// All fields in layout order.
    pub fn fields(&self) -> &[(&'static str, u128)] {
        &self.fields
    }

    pub fn dropped(&self) -> bool {
        self.flag("drop")
    }

    /// The drop reason's name (the model's `DecodeError::reason()`), `None`
    /// when the record carries code 0; an unknown code becomes `Err(code)`.
    pub fn reason(&self) -> Result<Option<&'static str>, u8> {
        match self.get("reason") as u8 {
            0 => Ok(None),
            code => DropReason::from_code(code)
                .map(|r| Some(r.name()))
                .ok_or(code),
        }
    }

    pub fn has_payload(&self) -> bool {
        self.flag("has_payload")
    }

    pub fn payload_len(&self) -> usize {
        self.get("payload_len") as usize
    }

    /// The record's headers as the codec's types, with `payload` as the
    /// frame's payload.
    pub fn frame(&self, payload: Vec<u8>) -> RoceFrame {
        let mac = |v: u128| {
            let b = (v as u64).to_be_bytes();
            [b[2], b[3], b[4], b[5], b[6], b[7]]
        };
        let ip = if self.flag("ipv6") {
            IpHeader::V6(Ipv6Header {
                src: Ipv6Addr::from(self.get("ip_src")),
                dst: Ipv6Addr::from(self.get("ip_dst")),
                dscp: self.get("dscp") as u8,
                ecn: self.get("ecn") as u8,
                flow_label: self.get("ipv6_flow_label") as u32,
                hop_limit: self.get("ttl") as u8,
            })
        } else {
            IpHeader::V4(Ipv4Header {
                src: Ipv4Addr::from(self.get("ip_src") as u32),
                dst: Ipv4Addr::from(self.get("ip_dst") as u32),
                dscp: self.get("dscp") as u8,
                ecn: self.get("ecn") as u8,
                identification: self.get("ipv4_identification") as u16,
                dont_fragment: self.flag("ipv4_dont_fragment"),
                ttl: self.get("ttl") as u8,
            })
        };
        let ext = ExtHeaders {
            deth: self.flag("has_deth").then(|| Deth {
                qkey: self.get("deth_qkey") as u32,
                src_qp: self.get("deth_src_qp") as u32,
            }),
            reth: self.flag("has_reth").then(|| Reth {
                va: self.get("reth_va") as u64,
                rkey: self.get("reth_rkey") as u32,
                dma_len: self.get("reth_dma_len") as u32,
            }),
            atomic_eth: self.flag("has_atomic_eth").then(|| AtomicEth {
                va: self.get("atomic_va") as u64,
                rkey: self.get("atomic_rkey") as u32,
                swap_add: self.get("atomic_swap_add") as u64,
                compare: self.get("atomic_compare") as u64,
            }),
            aeth: self.flag("has_aeth").then(|| Aeth {
                syndrome: self.get("aeth_syndrome") as u8,
                msn: self.get("aeth_msn") as u32,
            }),
            atomic_ack_eth: self.flag("has_atomic_ack_eth").then(|| AtomicAckEth {
                orig: self.get("atomic_ack_orig") as u64,
            }),
            imm: self.flag("has_imm").then(|| self.get("imm") as u32),
            ieth: self.flag("has_ieth").then(|| self.get("ieth_rkey") as u32),
        };
        RoceFrame {
            eth: EthHeader {
                dst: mac(self.get("eth_dst")),
                src: mac(self.get("eth_src")),
            },
            ip,
            udp_src_port: self.get("udp_src_port") as u16,
            udp_checksum: self.flag("udp_checksum"),
            bth: Bth {
                opcode: self.get("opcode") as u8,
                solicited: self.flag("solicited"),
                mig_req: self.flag("mig_req"),
                pad_count: self.get("pad_count") as u8,
                tver: self.get("tver") as u8,
                pkey: self.get("pkey") as u16,
                fecn: self.flag("fecn"),
                becn: self.flag("becn"),
                dest_qp: self.get("dest_qp") as u32,
                ack_req: self.flag("ack_req"),
                psn: self.get("psn") as u32,
            },
            ext,
            payload,
        }
    }

    /// Extension header fields that are not zero although their header is
    /// absent (the record promises zeros there).
    pub fn stray_fields(&self) -> Vec<&'static str> {
        let groups: [(&str, &[&str]); 7] = [
            ("has_deth", &["deth_qkey", "deth_src_qp"]),
            ("has_reth", &["reth_va", "reth_rkey", "reth_dma_len"]),
            (
                "has_atomic_eth",
                &[
                    "atomic_va",
                    "atomic_rkey",
                    "atomic_swap_add",
                    "atomic_compare",
                ],
            ),
            ("has_aeth", &["aeth_syndrome", "aeth_msn"]),
            ("has_atomic_ack_eth", &["atomic_ack_orig"]),
            ("has_imm", &["imm"]),
            ("has_ieth", &["ieth_rkey"]),
        ];
        groups
            .iter()
            .filter(|(has, _)| !self.flag(has))
            .flat_map(|(_, fields)| fields.iter().copied())
            .filter(|f| self.get(f) != 0)
            .collect()
    }
}

/// The model's judgement of a frame, in the RTL's terms.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RxExpect {
    pub drop: bool,
    /// `DecodeError::reason()`, `None` when accepted.
    pub reason: Option<&'static str>,
    /// The decoded frame whenever its headers parse (accepted, or dropped
    /// only for the ICRC).
    pub frame: Option<RoceFrame>,
}

/// What the model's receive path says about `bytes`: the codec with the
/// NIC's checks (`DecodeOptions::NIC`, which does not verify the UDP
/// checksum, like the RTL).
pub fn model_rx(bytes: &[u8]) -> RxExpect {
    let parsed = RoceFrame::parse_with(bytes, DecodeOptions::NIC);
    match parsed {
        Err(e) => RxExpect {
            drop: true,
            reason: Some(e.reason()),
            frame: None,
        },
        Ok(p) => {
            let ok = p.icrc_found == p.icrc_computed;
            RxExpect {
                drop: !ok,
                reason: (!ok).then_some("icrc"),
                frame: Some(p.frame),
            }
        }
    }
}

/// The payload segment the parser emitted for a frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RxSegment {
    pub bytes: Vec<u8>,
    /// `payload_drop` on the last beat.
    pub drop: bool,
    /// The last beat kept no byte (allowed only on a dropped segment).
    pub null_last: bool,
    pub first_cycle: u64,
    pub last_cycle: u64,
}

/// Everything the parser emitted for one input frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RxOutput {
    pub record: RxRecord,
    pub record_cycle: u64,
    pub segment: Option<RxSegment>,
}

/// Differences between what the RTL emitted for `bytes` and what the model
/// says; empty when they agree.
pub fn compare_rx(bytes: &[u8], out: &RxOutput) -> Vec<String> {
    let exp = model_rx(bytes);
    let mut diffs = Vec::new();
    let r = &out.record;
    if r.dropped() != exp.drop {
        diffs.push(format!("drop: rtl {} model {}", r.dropped(), exp.drop));
    }
    match r.reason() {
        Ok(reason) if reason == exp.reason => {}
        Ok(reason) => diffs.push(format!("reason: rtl {reason:?} model {:?}", exp.reason)),
        Err(code) => diffs.push(format!("reason: rtl code {code} is no drop reason")),
    }
    if let Some(seg) = &out.segment {
        if seg.drop != r.dropped() {
            diffs.push(format!(
                "payload_drop {} on the segment, record drop {}",
                seg.drop,
                r.dropped()
            ));
        }
        if !r.has_payload() {
            diffs.push("a payload segment for a record without has_payload".into());
        }
        if seg.null_last && !seg.drop {
            diffs.push("an accepted segment ends in a beat that keeps no byte".into());
        }
    } else if r.has_payload() {
        diffs.push("has_payload but no segment".into());
    }
    if let Some(want) = &exp.frame {
        let payload = out.segment.as_ref().map_or(Vec::new(), |s| s.bytes.clone());
        let got = r.frame(payload);
        if got.eth != want.eth {
            diffs.push(format!("eth: rtl {:?} model {:?}", got.eth, want.eth));
        }
        if got.ip != want.ip {
            diffs.push(format!("ip: rtl {:?} model {:?}", got.ip, want.ip));
        }
        if got.udp_src_port != want.udp_src_port {
            diffs.push(format!(
                "udp_src_port: rtl {} model {}",
                got.udp_src_port, want.udp_src_port
            ));
        }
        if got.udp_checksum != want.udp_checksum {
            diffs.push(format!(
                "udp_checksum: rtl {} model {}",
                got.udp_checksum, want.udp_checksum
            ));
        }
        if got.bth != want.bth {
            diffs.push(format!("bth: rtl {:?} model {:?}", got.bth, want.bth));
        }
        if got.ext != want.ext {
            diffs.push(format!("ext: rtl {:?} model {:?}", got.ext, want.ext));
        }
        let stray = r.stray_fields();
        if !stray.is_empty() {
            diffs.push(format!("fields of absent headers not zero: {stray:?}"));
        }
        if r.payload_len() != want.payload.len() {
            diffs.push(format!(
                "payload_len: rtl {} model {}",
                r.payload_len(),
                want.payload.len()
            ));
        }
        if r.has_payload() == want.payload.is_empty() {
            diffs.push(format!(
                "has_payload: rtl {} model payload {} bytes",
                r.has_payload(),
                want.payload.len()
            ));
        }
        if let Some(seg) = &out.segment {
            if seg.bytes != want.payload {
                let at = seg
                    .bytes
                    .iter()
                    .zip(&want.payload)
                    .position(|(a, b)| a != b)
                    .unwrap_or(seg.bytes.len().min(want.payload.len()));
                diffs.push(format!(
                    "payload: rtl {} bytes, model {}; first difference at byte {at}",
                    seg.bytes.len(),
                    want.payload.len()
                ));
            }
        }
    }
    diffs
}

/// How the parser is driven.
#[derive(Clone, Copy, Debug)]
pub struct RxDrive {
    /// Probability that an idle input offers its next beat in a cycle.
    pub p_valid: f64,
    /// Probability that the payload output is ready in a cycle.
    pub p_payload_ready: f64,
    /// Probability that the record output is ready in a cycle.
    pub p_record_ready: f64,
    pub seed: u64,
}

impl Default for RxDrive {
    fn default() -> Self {
        RxDrive {
            p_valid: 1.0,
            p_payload_ready: 1.0,
            p_record_ready: 1.0,
            seed: 0,
        }
    }
}

/// A run of the parser over a list of frames.
#[derive(Clone, Debug)]
pub struct RxRun {
    /// One per input frame, in order.
    pub outputs: Vec<RxOutput>,
    /// Per input frame: cycles at which its first and last beat moved in.
    pub input_first: Vec<u64>,
    pub input_last: Vec<u64>,
    /// Cycles from reset release to the last output.
    pub cycles: u64,
    /// Input beats offered.
    pub input_beats: u64,
    /// Cycles with a beat offered and `rx.tready` low.
    pub input_stalls: u64,
    /// Of those, cycles in which both outputs were ready: stalls the
    /// parser caused itself.
    pub self_stalls: u64,
    /// The parser's counters after the run: index 0 accepted frames, index
    /// `r` frames dropped for drop reason code `r`.
    pub counters: Vec<u64>,
}

/// Port names of the parser.
const RX_IN: &str = "rx";
const PAYLOAD_OUT: &str = "payload";
const PAYLOAD_DROP: &str = "payload_drop";
const RECORD: (&str, &str, &str) = ("record_record", "record_valid", "record_ready");

/// Runs `frames` through a fresh Verilated parser `B` (the bridge's
/// `RxParser`) under `drive`. Empty frames cannot be sent on AXI-Stream
/// and are refused.
pub fn run_rx_parser<B: Block>(frames: &[Vec<u8>], drive: RxDrive) -> Result<RxRun, RtlError> {
    check_record_layout()?;
    let rx = AxisInPorts::<B>::named(RX_IN)?;
    let payload = AxisOutPorts::<B>::named(PAYLOAD_OUT, &[PAYLOAD_DROP])?;
    let record = ChannelOutPorts::<B>::named(RECORD.0, RECORD.1, RECORD.2)?;
    let reset = B::input("reset")?;
    let stat_select = B::input("stat_select")?;
    let stat_count = B::output("stat_count")?;

    let mut source = StreamSource::new(drive.p_valid, drive.seed);
    for (i, f) in frames.iter().enumerate() {
        if !source.push_frame(f) {
            return Err(RtlError::Unsupported(format!(
                "frame {i} is empty: AXI-Stream cannot carry it"
            )));
        }
    }
    // A segment cut short by a truncated frame may close with a null beat;
    // `compare_rx` allows that only on a dropped segment.
    let mut payload_sink =
        StreamSink::new(PAYLOAD_OUT, drive.p_payload_ready, drive.seed ^ 0x9A7).allow_null_last();
    let mut record_sink = HandshakeSink::new("record", drive.p_record_ready, drive.seed ^ 0x4EC);

    let mut sim = Sim::<B>::new()?;
    sim.set_bit(reset, true);
    rx.drive(sim.dut_mut(), None);
    payload.set_ready(sim.dut_mut(), false);
    record.set_ready(sim.dut_mut(), false);
    sim.tick();
    sim.set_bit(reset, false);
    let start = sim.cycle();

    let total_beats: u64 = frames.iter().map(|f| f.len().div_ceil(64) as u64).sum();
    let p_slowest = drive
        .p_valid
        .min(drive.p_payload_ready)
        .min(drive.p_record_ready)
        .max(0.01);
    let limit =
        start + 200 + ((total_beats + 4 * frames.len() as u64) as f64 * 4.0 / p_slowest) as u64;
    let mut input_beats = 0;
    let mut input_stalls = 0;
    let mut self_stalls = 0;
    let mut last_output = start;
    let has_payload_bit: usize = HeaderRecord::layout()
        .iter()
        .take_while(|(name, _)| *name != "has_payload")
        .map(|(_, width)| width)
        .sum();
    let mut with_payload = 0;
    loop {
        let done_in = source.is_idle();
        let records = record_sink.received().len();
        if done_in
            && records >= frames.len()
            && !payload_sink.mid_frame()
            && payload_sink.frames().len() >= with_payload
        {
            break;
        }
        if sim.cycle() > limit {
            return Err(RtlError::Stuck {
                cycle: sim.cycle(),
                what: format!(
                    "{records} of {} records, {} payload segments, {} input beats left",
                    frames.len(),
                    payload_sink.frames().len(),
                    total_beats - source.beats_sent()
                ),
            });
        }
        source.begin_cycle();
        payload_sink.begin_cycle();
        record_sink.begin_cycle();
        let dut = sim.dut_mut();
        rx.drive(dut, source.current());
        payload.set_ready(dut, payload_sink.ready());
        record.set_ready(dut, record_sink.ready());
        sim.eval();
        let cycle = sim.cycle();
        let in_ready = rx.ready(sim.dut());
        if source.current().is_some() {
            input_beats += 1;
            if !in_ready {
                input_stalls += 1;
                if payload_sink.ready() && record_sink.ready() {
                    self_stalls += 1;
                }
            }
        }
        let record_moved = record.observe(sim.dut(), &mut record_sink, cycle)?;
        if record_moved {
            let words = &record_sink.received()[records].1;
            if words
                .get(has_payload_bit / 64)
                .is_some_and(|w| w >> (has_payload_bit % 64) & 1 == 1)
            {
                with_payload += 1;
            }
        }
        if payload.observe(sim.dut(), &mut payload_sink, cycle)? | record_moved {
            last_output = cycle;
        }
        source.end_cycle(cycle, in_ready);
        sim.tick();
    }

    // Nothing more may come out.
    rx.drive(sim.dut_mut(), None);
    payload.set_ready(sim.dut_mut(), true);
    record.set_ready(sim.dut_mut(), true);
    for _ in 0..12 {
        sim.eval();
        if payload.valid(sim.dut()) || sim.dut().get_bit(record.valid) {
            return Err(RtlError::Mismatch(format!(
                "cycle {}: output after every frame was accounted for",
                sim.cycle()
            )));
        }
        sim.tick();
    }

    let counters = (0..=DropReason::ALL.len() as u64)
        .map(|i| {
            sim.set_u64(stat_select, i);
            sim.eval();
            sim.get_u64(stat_count)
        })
        .collect();

    let mut segments = payload_sink.take_frames().into_iter();
    let mut outputs = Vec::with_capacity(frames.len());
    for (cycle, words) in record_sink.take_received() {
        let record = RxRecord::from_words(&words);
        let segment = if record.has_payload() {
            let seg = segments.next().ok_or_else(|| {
                RtlError::Mismatch(format!(
                    "record {} has a payload but the payload stream ran out",
                    outputs.len()
                ))
            })?;
            Some(RxSegment {
                drop: seg
                    .sideband
                    .first()
                    .and_then(|w| w.first())
                    .is_some_and(|w| w & 1 == 1),
                null_last: seg.null_last,
                bytes: seg.bytes,
                first_cycle: seg.first_cycle,
                last_cycle: seg.last_cycle,
            })
        } else {
            None
        };
        outputs.push(RxOutput {
            record,
            record_cycle: cycle,
            segment,
        });
    }
    if outputs.len() != frames.len() {
        return Err(RtlError::Mismatch(format!(
            "{} records for {} frames",
            outputs.len(),
            frames.len()
        )));
    }
    if let Some(extra) = segments.next() {
        return Err(RtlError::Mismatch(format!(
            "a payload segment of {} bytes with no record claiming it",
            extra.bytes.len()
        )));
    }
    Ok(RxRun {
        outputs,
        input_first: source.first_moved().to_vec(),
        input_last: source.last_moved().to_vec(),
        cycles: last_output + 1 - start,
        input_beats,
        input_stalls,
        self_stalls,
        counters,
    })
}

/// The counters a run over frames with these model verdicts should leave:
/// index 0 accepted, index `code` dropped for that reason.
pub fn expected_counters(expects: &[RxExpect]) -> Vec<u64> {
    let mut counts = vec![0u64; DropReason::ALL.len() + 1];
    for e in expects {
        let index = match e.reason {
            None => 0,
            Some(name) => DropReason::ALL
                .iter()
                .find(|r| r.name() == name)
                .map_or(0, |r| usize::from(r.code())),
        };
        counts[index] += 1;
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::{frame_with, malform, Malformation};
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn record_layout_has_every_field_read() {
        check_record_layout().unwrap();
    }

    #[test]
    fn model_receive_path_ignores_only_the_udp_checksum() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let f = frame_with(4, true, 100, 3);
        let bad = malform(&f, Malformation::UdpChecksum, &mut rng);
        assert_eq!(
            RoceFrame::decode(&bad).unwrap_err().reason(),
            "udp_checksum"
        );
        let exp = model_rx(&bad);
        assert!(!exp.drop);
        assert_eq!(exp.frame.as_ref(), Some(&f));
        let icrc = malform(&f, Malformation::Icrc, &mut rng);
        let exp = model_rx(&icrc);
        assert_eq!((exp.drop, exp.reason), (true, Some("icrc")));
        assert_eq!(exp.frame.unwrap().bth, f.bth);
        assert_eq!(
            expected_counters(&[model_rx(&bad), model_rx(&icrc)])[0..2],
            [1, 0]
        );
    }
}
