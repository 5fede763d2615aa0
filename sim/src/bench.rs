//! `rocenic bench`: throughput and latency of the Verilated datapath blocks,
//! counted in clock cycles (250 MHz, 4 ns per cycle), over a sweep of frame
//! sizes from one beat to the largest RoCEv2 frame, including sizes just
//! over a beat boundary.
//!
//! Throughput comes from back-to-back frames with every output always
//! ready, so any bubble is the block's own; latency from one frame through
//! an idle block. Every run is also checked for correctness (the RX parser
//! against the model decoder, the TX builder against `RoceFrame::encode`),
//! so a figure is never reported for a block that got the frames wrong.

use rocenic_rtl::gen::{frame_of_len, frame_with};
use rocenic_rtl::host_dma::HostDmaConfig;
use rocenic_rtl::icrc::{run_icrc_checker, IcrcDrive};
use rocenic_rtl::rx::{compare_rx, run_rx_parser, RxDrive};
use rocenic_rtl::stream::{AxisInPorts, AxisOutPorts, StreamSink, StreamSource, BEAT_BYTES};
use rocenic_rtl::tx::{run_tx_builder, TxDrive};
use rocenic_rtl::RtlError;
use rocenic_wire::RoceFrame;
use serde::Serialize;
use std::fmt::Write as _;
use verilator_sys::{AxisRegisterSlice, RxParser, Sim, TxBuilder};

/// Core clock of the datapath.
pub const CLOCK_MHZ: f64 = 250.0;
/// 512 bits per cycle at 250 MHz.
pub const RAW_GBPS: f64 = 512.0 * CLOCK_MHZ / 1000.0;

/// Frame sizes of the sweep (bytes on the wire, no FCS). Every RoCEv2
/// frame is 2 bytes over a multiple of four (14-byte Ethernet header, all
/// else in 4-byte units), so the sizes around each beat boundary are
/// 4k + 2: 62 fills one beat, 66 is the smallest two-beat frame, 126/130
/// straddle the next boundary, and so on up to the largest RoCEv2 frame
/// (4096-byte payload behind IPv4). 58 is the smallest frame (an empty
/// SEND); 66..=74 are the sizes at which one frame per beat group falls
/// short of the 100 GbE frame rate.
pub const SWEEP: [usize; 24] = [
    58, 62, 66, 70, 74, 78, 82, 102, 126, 130, 190, 194, 254, 258, 510, 514, 1026, 1502, 2050,
    2114, 4098, 4130, 4150, 4154,
];

/// One measurement.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct BenchRow {
    pub block: &'static str,
    pub metric: &'static str,
    pub value: f64,
    pub unit: &'static str,
    /// Frame size in bytes (without FCS).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frame_bytes: Option<usize>,
    /// Beats per frame on the 512-bit bus.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frame_beats: Option<usize>,
    /// "ipv4" or "ipv6".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ip: Option<&'static str>,
    /// Message size in bytes, for the goodput rows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message_bytes: Option<u64>,
    /// Path MTU of the goodput rows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mtu: Option<u32>,
    /// What is at the other end of a goodput row's fabric, where it is
    /// not RTL.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peer: Option<&'static str>,
    /// Cycles the host model takes to accept a DMA write, for the
    /// latency rows that include DMA writes (0: posted, one beat a cycle).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dma_write_latency_cycles: Option<u64>,
    /// The host model's DMA read latency (`HostDmaConfig::read_latency`:
    /// from a read request taken to its first data beat offered), for the
    /// rows of a core that reads its payload from host memory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dma_read_latency_cycles: Option<u64>,
    /// The verb of a latency row: "write", "read" or "send".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operation: Option<&'static str>,
    /// QPs the messages of a fabric row are spread over.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub qps: Option<u32>,
    /// The reference model's figure for the same run (both NICs the
    /// model), for the rows measured on the fabric.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_value: Option<f64>,
    /// Frames in the run.
    pub frames: usize,
    /// The physical limit of the metric, where one exists.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bound: Option<f64>,
    /// What 100 GbE carries of frames this size, in Gb/s of frame bytes
    /// (each frame also costs 4 FCS, 8 preamble and 12 gap bytes on the
    /// wire); rows in Gb/s must reach it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ethernet_100g_gbps: Option<f64>,
    pub clock_mhz: f64,
}

fn row(block: &'static str, metric: &'static str, value: f64, unit: &'static str) -> BenchRow {
    BenchRow {
        block,
        metric,
        value,
        unit,
        frame_bytes: None,
        frame_beats: None,
        ip: None,
        message_bytes: None,
        mtu: None,
        peer: None,
        dma_write_latency_cycles: None,
        dma_read_latency_cycles: None,
        operation: None,
        qps: None,
        model_value: None,
        frames: 1,
        bound: None,
        ethernet_100g_gbps: None,
        clock_mhz: CLOCK_MHZ,
    }
}

impl BenchRow {
    fn sized(mut self, bytes: usize, frames: usize) -> BenchRow {
        self.frame_bytes = Some(bytes);
        self.frame_beats = Some(bytes.div_ceil(BEAT_BYTES));
        self.frames = frames;
        self
    }

    fn ip(mut self, ipv6: bool) -> BenchRow {
        self.ip = Some(if ipv6 { "ipv6" } else { "ipv4" });
        self
    }

    fn bound(mut self, bound: f64) -> BenchRow {
        self.bound = Some(bound);
        self
    }

    fn goodput(mut self, message: u64, mtu: u32, peer: &'static str) -> BenchRow {
        self.message_bytes = Some(message);
        self.mtu = Some(mtu);
        self.peer = Some(peer);
        self
    }

    fn line_rate(mut self) -> BenchRow {
        if let Some(l) = self.frame_bytes {
            self.ethernet_100g_gbps = Some(100.0 * l as f64 / (l + 24) as f64);
        }
        self
    }
}

/// Frame bytes per cycle as Gb/s at the core clock.
fn gbps(bytes: usize, cycles: u64) -> f64 {
    bytes as f64 * 8.0 * CLOCK_MHZ / 1000.0 / cycles.max(1) as f64
}

fn copies(bytes: usize, count: usize, ipv6: bool) -> Vec<RoceFrame> {
    (0..count)
        .map(|k| {
            let mut f = frame_of_len(bytes, (bytes * 1000 + k) as u64);
            if ipv6 {
                // The same opcode and payload behind an IPv6 header.
                let send_only = rocenic_wire::opcode::OPCODES
                    .iter()
                    .position(|o| o.code == f.bth.opcode)
                    .unwrap_or(0);
                f = frame_with(send_only, true, f.payload.len(), k as u64);
            }
            f
        })
        .collect()
}

fn encode(frames: &[RoceFrame]) -> Vec<Vec<u8>> {
    frames
        .iter()
        .map(|f| f.encode().expect("generated frames encode"))
        .collect()
}

/// RX parser: back-to-back throughput, self-caused input stalls, and the
/// latency of an idle parser, at every size of the sweep.
fn bench_rx(count: usize, rows: &mut Vec<BenchRow>) -> Result<(), RtlError> {
    const B: &str = "rx_parser";
    for &size in &SWEEP {
        let frames = encode(&copies(size, count, false));
        let bytes = frames[0].len();
        let run = run_rx_parser::<RxParser>(&frames, RxDrive::default())?;
        check_rx(&frames, &run.outputs)?;
        let beats = run.input_beats;
        let span = run.input_last.last().copied().unwrap_or(0) + 1 - run.input_first[0];
        let total: usize = frames.iter().map(Vec::len).sum();
        rows.push(
            row(B, "throughput", beats as f64 / span as f64, "beats/cycle")
                .sized(bytes, count)
                .bound(1.0),
        );
        rows.push(
            row(B, "data_rate", gbps(total, span), "Gb/s")
                .sized(bytes, count)
                .bound(RAW_GBPS)
                .line_rate(),
        );
        rows.push(
            row(
                B,
                "input_stalls_outputs_ready",
                run.self_stalls as f64,
                "cycles",
            )
            .sized(bytes, count)
            .bound(0.0),
        );

        let one = run_rx_parser::<RxParser>(&frames[..1], RxDrive::default())?;
        check_rx(&frames[..1], &one.outputs)?;
        let out = &one.outputs[0];
        if let Some(seg) = &out.segment {
            rows.push(
                row(
                    B,
                    "latency_first_beat_in_to_first_payload_out",
                    (seg.first_cycle - one.input_first[0]) as f64,
                    "cycles",
                )
                .sized(bytes, 1),
            );
        }
        rows.push(
            row(
                B,
                "latency_last_beat_in_to_record",
                (out.record_cycle - one.input_last[0]) as f64,
                "cycles",
            )
            .sized(bytes, 1),
        );
    }
    Ok(())
}

fn check_rx(frames: &[Vec<u8>], outputs: &[rocenic_rtl::rx::RxOutput]) -> Result<(), RtlError> {
    for (i, (f, o)) in frames.iter().zip(outputs).enumerate() {
        let diffs = compare_rx(f, o);
        if !diffs.is_empty() {
            return Err(RtlError::Mismatch(format!(
                "rx_parser frame {i}: {}",
                diffs.join("; ")
            )));
        }
    }
    Ok(())
}

/// TX builder: back-to-back output rate (IPv4 without UDP checksum, what
/// the NIC sends, and IPv6, which the builder stores and forwards for its
/// UDP checksum) and the latency of an idle builder.
fn bench_tx(count: usize, rows: &mut Vec<BenchRow>) -> Result<(), RtlError> {
    const B: &str = "tx_builder";
    for ipv6 in [false, true] {
        for &size in &SWEEP {
            let frames = copies(size, count, ipv6);
            let want = encode(&frames);
            let bytes = want[0].len();
            let run = run_tx_builder::<TxBuilder>(&frames, frames.len(), TxDrive::default())?;
            check_tx(&want, &run.frames)?;
            let first = run.frames[0].first_cycle;
            let last = run.frames.last().map_or(first, |f| f.last_cycle);
            let span = last + 1 - first;
            let total: usize = want.iter().map(Vec::len).sum();
            rows.push(
                row(
                    B,
                    "throughput",
                    run.frame_beats as f64 / span as f64,
                    "beats/cycle",
                )
                .sized(bytes, count)
                .ip(ipv6)
                .bound(1.0),
            );
            rows.push(
                row(B, "data_rate", gbps(total, span), "Gb/s")
                    .sized(bytes, count)
                    .ip(ipv6)
                    .bound(RAW_GBPS)
                    .line_rate(),
            );

            let one = run_tx_builder::<TxBuilder>(&frames[..1], 1, TxDrive::default())?;
            check_tx(&want[..1], &one.frames)?;
            let out = &one.frames[0];
            rows.push(
                row(
                    B,
                    "latency_record_in_to_first_beat_out",
                    (out.first_cycle - one.header_moved[0]) as f64,
                    "cycles",
                )
                .sized(bytes, 1)
                .ip(ipv6),
            );
            if let Some(&last_in) = one.payload_last.first() {
                rows.push(
                    row(
                        B,
                        "latency_last_payload_in_to_last_beat_out",
                        (out.last_cycle - last_in) as f64,
                        "cycles",
                    )
                    .sized(bytes, 1)
                    .ip(ipv6),
                );
            }
        }
    }
    // Sizes alternating between the largest and the smallest frame: a
    // frame the builder stores and forwards (IPv6, for its UDP checksum)
    // cannot leave before it has fully arrived, so it may leave a gap
    // behind a short predecessor.
    for ipv6 in [false, true] {
        let frames: Vec<RoceFrame> = (0..count)
            .flat_map(|k| {
                let big = copies(4154, 1, ipv6).remove(0);
                let mut small = copies(62, 1, ipv6).remove(0);
                small.bth.psn = k as u32;
                [big, small]
            })
            .collect();
        let want = encode(&frames);
        let run = run_tx_builder::<TxBuilder>(&frames, frames.len(), TxDrive::default())?;
        check_tx(&want, &run.frames)?;
        let first = run.frames[0].first_cycle;
        let last = run.frames.last().map_or(first, |f| f.last_cycle);
        rows.push(BenchRow {
            frames: frames.len(),
            ..row(
                B,
                "throughput_mixed_largest_smallest",
                run.frame_beats as f64 / (last + 1 - first) as f64,
                "beats/cycle",
            )
            .ip(ipv6)
            .bound(1.0)
        });
    }
    Ok(())
}

fn check_tx(want: &[Vec<u8>], got: &[rocenic_rtl::stream::ReceivedFrame]) -> Result<(), RtlError> {
    for (i, (w, g)) in want.iter().zip(got).enumerate() {
        if *w != g.bytes {
            return Err(RtlError::Mismatch(format!(
                "tx_builder frame {i} differs from RoceFrame::encode"
            )));
        }
    }
    Ok(())
}

/// ICRC checker: verdict rate and the latency from the end beat to the
/// verdict.
fn bench_icrc(count: usize, rows: &mut Vec<BenchRow>) -> Result<(), RtlError> {
    const B: &str = "icrc_checker";
    for &size in &SWEEP {
        let frames = encode(&copies(size, count, false));
        let bytes = frames[0].len();
        let run = run_icrc_checker(&frames, IcrcDrive::default())?;
        if !run.verdicts.iter().all(|&ok| ok) {
            return Err(RtlError::Mismatch(format!(
                "icrc_checker failed a valid {bytes}-byte frame"
            )));
        }
        let beats = frames
            .iter()
            .map(|f| f.len().div_ceil(BEAT_BYTES) as u64)
            .sum::<u64>();
        let latency = run.latency[0];
        rows.push(
            row(
                B,
                "throughput",
                beats as f64 / (run.cycles - latency) as f64,
                "beats/cycle",
            )
            .sized(bytes, count)
            .bound(1.0),
        );
        rows.push(
            row(
                B,
                "latency_end_beat_in_to_verdict",
                latency as f64,
                "cycles",
            )
            .sized(bytes, 1),
        );
    }
    Ok(())
}

/// The 512-bit register slice, the building block at every timing
/// boundary: full rate and its one-cycle latency.
fn bench_register_slice(count: usize, rows: &mut Vec<BenchRow>) -> Result<(), RtlError> {
    const B: &str = "axis_register_slice";
    let frames = encode(&copies(1500, count, false));
    let up = AxisInPorts::<AxisRegisterSlice>::named("up")?;
    let down = AxisOutPorts::<AxisRegisterSlice>::named("down", &[])?;
    let mut sim = Sim::<AxisRegisterSlice>::new()?;
    let mut source = StreamSource::new(1.0, 1);
    for f in &frames {
        source.push_frame(f);
    }
    let mut sink = StreamSink::new("down", 1.0, 2);
    sim.set_bit(AxisRegisterSlice::RESET, true);
    sim.tick();
    sim.set_bit(AxisRegisterSlice::RESET, false);
    let limit = sim.cycle() + 10_000 + 100 * count as u64;
    while sink.frames().len() < frames.len() {
        if sim.cycle() > limit {
            return Err(RtlError::Stuck {
                cycle: sim.cycle(),
                what: "register slice output".into(),
            });
        }
        source.begin_cycle();
        sink.begin_cycle();
        up.drive(sim.dut_mut(), source.current());
        down.set_ready(sim.dut_mut(), sink.ready());
        sim.eval();
        let cycle = sim.cycle();
        down.observe(sim.dut(), &mut sink, cycle)?;
        let ready = up.ready(sim.dut());
        source.end_cycle(cycle, ready);
        sim.tick();
    }
    let out = sink.frames();
    if out.iter().zip(&frames).any(|(o, f)| o.bytes != *f) {
        return Err(RtlError::Mismatch("register slice changed a frame".into()));
    }
    let beats = sink.beats();
    let span = out.last().map_or(0, |f| f.last_cycle) + 1 - out[0].first_cycle;
    let bytes = frames[0].len();
    rows.push(
        row(B, "throughput", beats as f64 / span as f64, "beats/cycle")
            .sized(bytes, count)
            .bound(1.0),
    );
    rows.push(
        row(
            B,
            "latency_first_beat_in_to_first_beat_out",
            (out[0].first_cycle - source.first_moved()[0]) as f64,
            "cycles",
        )
        .sized(bytes, 1),
    );
    Ok(())
}

/// Runs every benchmark with `count` back-to-back frames per size.
pub fn run_bench(count: usize) -> Result<Vec<BenchRow>, RtlError> {
    let count = count.max(2);
    let mut rows = Vec::new();
    bench_rx(count, &mut rows)?;
    bench_tx(count, &mut rows)?;
    bench_icrc(count, &mut rows)?;
    bench_register_slice(count, &mut rows)?;
    bench_responder_goodput(count, &mut rows)?;
    bench_responder_ack_latency(&mut rows)?;
    bench_requester_goodput(count, &mut rows)?;
    bench_requester_first_frame_latency(&mut rows)?;
    bench_pair_message_rate(count, &mut rows)?;
    bench_pair_goodput(count, &mut rows)?;
    Ok(rows)
}

/// QP counts of the two-RTL-NIC message rate rows.
pub const MESSAGE_RATE_QPS: [u32; 3] = [1, 8, 64];

/// Size of the messages of the message rate rows.
pub const MESSAGE_RATE_BYTES: u64 = 64;

/// Runs `config` on `backend` and checks it completed and verified.
fn verified_run(
    backend: crate::scenario::Backend,
    config: &crate::scenario::ScenarioConfig,
    what: &str,
) -> Result<crate::scenario::Report, RtlError> {
    let report = crate::scenario::run_backend(backend, config, None)
        .map_err(|e| RtlError::Mismatch(format!("{what}: {e:#}")))?;
    if !report.data_verified || report.messages_completed != report.messages_posted {
        return Err(RtlError::Mismatch(format!(
            "{what}: {:?}",
            report.mismatches
        )));
    }
    Ok(report)
}

/// Message rate of two RTL NICs (`rocenic sim --backend rtl`, both cores
/// Verilated) for 64-byte WRITEs, SENDs and READs spread over 1, 8 and
/// 64 QPs, `64 x count` messages in all, from the start of the run to the
/// last completion, with the framing bound of back-to-back messages of
/// that size and the model's rate on the same run beside it.
fn bench_pair_message_rate(count: usize, rows: &mut Vec<BenchRow>) -> Result<(), RtlError> {
    use crate::scenario::{Backend, ScenarioConfig, Workload};
    let total = 64 * count.max(2) as u32;
    for (workload, metric) in [
        (Workload::Write, "write_message_rate"),
        (Workload::Send, "send_message_rate"),
        (Workload::Read, "read_message_rate"),
    ] {
        for qps in MESSAGE_RATE_QPS {
            let config = ScenarioConfig {
                workload,
                size: MESSAGE_RATE_BYTES,
                count: (total / qps).max(1),
                qps,
                mtu: 4096,
                ..ScenarioConfig::default()
            };
            let what = format!("nic_core pair {workload:?} {qps} QPs x {}", config.count);
            let rtl = verified_run(Backend::Rtl, &config, &what)?;
            let model = verified_run(Backend::Model, &config, &what)?;
            let mut r = row(
                "nic_core_pair",
                metric,
                rtl.messages_per_second / 1e6,
                "Mmsg/s",
            )
            .ip(false)
            .goodput(MESSAGE_RATE_BYTES, 4096, "rtl core");
            r.qps = Some(qps);
            r.frames = rtl.frames as usize;
            r.bound = rtl
                .goodput_bound_gbps
                .map(|g| g * 1e3 / (8 * MESSAGE_RATE_BYTES) as f64);
            r.model_value = Some(model.messages_per_second / 1e6);
            rows.push(r);
        }
    }
    Ok(())
}

/// WRITE and READ goodput of two RTL NICs, as [`bench_goodput`] measures
/// the halves.
fn bench_pair_goodput(count: usize, rows: &mut Vec<BenchRow>) -> Result<(), RtlError> {
    use crate::scenario::Backend;
    let start = rows.len();
    bench_goodput(Backend::Rtl, "nic_core_pair", "rtl core", count, rows)?;
    for r in &mut rows[start..] {
        r.dma_read_latency_cycles = Some(HostDmaConfig::default().read_latency);
    }
    Ok(())
}

/// Message sizes of the goodput rows.
pub const GOODPUT_SIZES: [u64; 6] = [64, 1024, 4096, 65536, 256 << 10, 1 << 20];

/// WRITE and READ goodput with the RTL responder half on the fabric
/// (`rocenic sim --backend rtl-responder`) and a model requester: the
/// responder's side, WRITE placement keeping up with the wire, READ
/// responses fetched by DMA and framed at line rate. See [`bench_goodput`].
fn bench_responder_goodput(count: usize, rows: &mut Vec<BenchRow>) -> Result<(), RtlError> {
    use crate::scenario::Backend;
    bench_goodput(
        Backend::RtlResponder,
        "responder_path",
        "model requester",
        count,
        rows,
    )
}

/// WRITE and READ goodput with the RTL requester half on the fabric
/// (`rocenic sim --backend rtl-requester`) and a model responder: WRITE
/// payload read from host memory by DMA (the host model's read latency
/// in the row) and framed, READ responses placed by
/// `response_placement`. See [`bench_goodput`].
fn bench_requester_goodput(count: usize, rows: &mut Vec<BenchRow>) -> Result<(), RtlError> {
    use crate::scenario::Backend;
    let start = rows.len();
    bench_goodput(
        Backend::RtlRequester,
        "requester_path",
        "model responder",
        count,
        rows,
    )?;
    for r in &mut rows[start..] {
        r.dma_read_latency_cycles = Some(HostDmaConfig::default().read_latency);
    }
    Ok(())
}

/// Smallest message of the steady goodput rows: below it a run of at
/// most 16 messages is mostly fill and drain, and the difference of two
/// such runs says more about their ends than about the rate.
pub const STEADY_MIN_BYTES: u64 = 65536;

/// Goodput rows of `backend` (one QP, MTU 4096, IPv4, lossless 100 GbE
/// links, `count` (at most 16) messages of each [`GOODPUT_SIZES`] size)
/// against the framing bound of back-to-back messages:
///
/// - `<verb>_goodput`: the scenario report's `goodput_gbps`, from the
///   start of the run to the last completion, so the pipeline fill before
///   the first frame and the round trip after the last are in it;
/// - `<verb>_goodput_steady`, at [`STEADY_MIN_BYTES`] and more: the same
///   run against one with half the messages, the extra bytes over the
///   extra time to the last completion. Fill and drain cancel, so it is
///   the rate a long run tends to, and any bubble per message or per
///   window stays in it. The two runs' ends differ by a few ns of ACK
///   timing, so it may pass the bound by a few parts in 10^4 (2 ns in the
///   10.7 us between 2 and 4 messages of 64 KiB).
///
/// Every run is verified (completions, memory, the core against its
/// shadow).
fn bench_goodput(
    backend: crate::scenario::Backend,
    block: &'static str,
    peer: &'static str,
    count: usize,
    rows: &mut Vec<BenchRow>,
) -> Result<(), RtlError> {
    use crate::scenario::{Backend, Report, ScenarioConfig, Workload};
    let count = count.clamp(2, 16) as u32;
    for (workload, metric, steady) in [
        (Workload::Write, "write_goodput", "write_goodput_steady"),
        (Workload::Read, "read_goodput", "read_goodput_steady"),
    ] {
        for size in GOODPUT_SIZES {
            let config = |count: u32| ScenarioConfig {
                workload,
                size,
                count,
                mtu: 4096,
                page_size: 2 << 20,
                ..ScenarioConfig::default()
            };
            let what = |count: u32| format!("{block} {workload:?} {count} x {size} B");
            let run = |backend, count: u32| verified_run(backend, &config(count), &what(count));
            // The same run's figure with both NICs the model, and the
            // rate between the half and the full run.
            let steady_gbps = |full: &Report, half: &Report| {
                let extra_ns = full.sim_time_ns.saturating_sub(half.sim_time_ns);
                (full.bytes - half.bytes) as f64 * 8.0 / extra_ns.max(1) as f64
            };
            let full = run(backend, count)?;
            let model = run(Backend::Model, count)?;
            let mut r = row(block, metric, full.goodput_gbps, "Gb/s")
                .ip(false)
                .goodput(size, 4096, peer);
            r.frames = full.frames as usize;
            r.bound = full.goodput_bound_gbps;
            r.model_value = Some(model.goodput_gbps);
            let steady = if size >= STEADY_MIN_BYTES {
                let half = run(backend, count / 2)?;
                let model_half = run(Backend::Model, count / 2)?;
                Some(BenchRow {
                    metric: steady,
                    value: steady_gbps(&full, &half),
                    frames: (full.frames - half.frames) as usize,
                    model_value: Some(steady_gbps(&model, &model_half)),
                    ..r.clone()
                })
            } else {
                None
            };
            rows.push(r);
            rows.extend(steady);
        }
    }
    Ok(())
}

/// Message sizes of the responder's ACK latency rows.
pub const ACK_LATENCY_SIZES: [u64; 3] = [64, 4096, 65536];

/// One RDMA WRITE through the RTL responder half and the ACK it earns
/// ([`responder_ack_latency`]).
#[derive(Clone, Debug)]
pub struct AckLatency {
    /// Request frames the core took.
    pub request_frames: usize,
    /// Core cycle in which the last beat of the last request frame was
    /// accepted at the core's rx port.
    pub last_request_beat: u64,
    /// Core cycle in which the first beat of the ACK left its tx port.
    pub ack_first_beat: u64,
    /// Core cycle in which the host DMA write port accepted the WRITE's
    /// last beat (the ACK must come later: `response_write_gate`).
    pub last_dma_write: u64,
    /// The last request frame (AckReq set) and the ACK, as on the wire.
    pub last_request: Vec<u8>,
    pub ack: Vec<u8>,
}

impl AckLatency {
    /// From the last request beat in to the first ACK beat out.
    pub fn cycles(&self) -> u64 {
        self.ack_first_beat - self.last_request_beat
    }
}

/// The host model's DMA write latency in the ACK latency runs: writes are
/// posted and `HostDmaConfig::default()` takes a beat every cycle.
pub const ACK_LATENCY_DMA_WRITE_CYCLES: u64 = 0;

/// A model requester sends one RDMA WRITE of `message_bytes` (MTU 4096,
/// IPv4, AckReq on its last packet, lossless 100 GbE links) to the RTL
/// responder half (`responder_path` in an `RtlNic`, scored against its
/// shadow); the core's port log gives the cycles. The ACK waits until the
/// host port accepted the WRITE's last DMA write beat
/// (`response_write_gate`): 49 cycles at 64 B, 109 at 4 KiB and 64 KiB
/// (24 after that beat, 27 at 64 B; 47 at every size while the ACK did not wait for
/// its data). The run must complete
/// the WRITE, place its bytes, and the core must answer with exactly one
/// frame, an ACK of the last PSN to the requester's QP.
pub fn responder_ack_latency(message_bytes: u64) -> Result<AckLatency, RtlError> {
    use crate::scenario::{connect, nic_config, ScenarioConfig};
    use rand::{Rng, SeedableRng};
    use rocenic_fabric::{Fabric, LinkConfig, SwitchConfig};
    use rocenic_model::nic::Nic;
    use rocenic_model::verbs::{Access, QpCaps, SendOp, SendWr, Sge, WcStatus};
    use rocenic_rtl::nic::RtlNic;
    use rocenic_rtl::node::Node;
    use rocenic_wire::op;
    use verilator_sys::ResponderPath;

    let fail = |what: String| RtlError::Mismatch(format!("ACK latency, {message_bytes} B: {what}"));
    let config = ScenarioConfig {
        mtu: 4096,
        ..ScenarioConfig::default()
    };
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(message_bytes);
    let mut a = Nic::new(nic_config(1, &config));
    let mut rtl = RtlNic::<ResponderPath>::new(nic_config(2, &config), HostDmaConfig::default());
    rtl.log_port_frames();
    let b = rtl.setup()?;
    let caps = QpCaps {
        max_send_wr: 1,
        max_recv_wr: 1,
        max_sge: 1,
    };
    let (a_pd, b_pd) = (a.alloc_pd(), b.alloc_pd());
    let (a_cq, b_cq) = (a.create_cq(4), b.create_cq(4));
    let verbs = |e: rocenic_model::verbs::VerbsError| fail(e.to_string());
    let qa = a.create_qp(a_pd, a_cq, a_cq, caps).map_err(verbs)?;
    let qb = b.create_qp(b_pd, b_cq, b_cq, caps).map_err(verbs)?;
    connect(&mut a, qa, b, qb, &config, &mut rng).map_err(|e| fail(e.to_string()))?;
    let data: Vec<u8> = (0..message_bytes).map(|_| rng.gen()).collect();
    let a_va = a.memory_mut().alloc(message_bytes, 4096);
    a.memory_mut()
        .write_va(a_va, &data)
        .map_err(|e| fail(e.to_string()))?;
    let a_key = a
        .reg_mr(a_pd, a_va, message_bytes, Access::LOCAL_WRITE)
        .map_err(verbs)?;
    let b_va = b.memory_mut().alloc(message_bytes, 4096);
    let b_key = b
        .reg_mr(
            b_pd,
            b_va,
            message_bytes,
            Access::LOCAL_WRITE | Access::REMOTE_WRITE,
        )
        .map_err(verbs)?;
    a.post_send(
        qa,
        SendWr {
            wr_id: 1,
            op: SendOp::Write {
                remote_addr: b_va,
                rkey: b_key.rkey,
            },
            sgl: vec![Sge {
                addr: a_va,
                length: message_bytes as u32,
                lkey: a_key.lkey,
            }],
            signaled: true,
            solicited: false,
            fence: false,
            inline_data: None,
        },
    )
    .map_err(verbs)?;

    let mut fabric = Fabric::new(1, SwitchConfig::default());
    let a_id = fabric.add_node(
        Node::<RtlNic<ResponderPath>>::Model(Box::new(a)),
        LinkConfig::default(),
    );
    let b_id = fabric.add_node(Node::Rtl(Box::new(rtl)), LinkConfig::default());
    let mut done = Vec::new();
    while done.is_empty() && fabric.now() < 1_000_000 {
        let until = fabric.now() + 1_000;
        fabric.run_until(until);
        if let Some(m) = fabric.node(b_id).rtl().and_then(|r| r.mismatch()) {
            return Err(fail(m.to_owned()));
        }
        if let Some(a) = fabric.node_mut(a_id).model_mut() {
            done = a.poll_cq(a_cq, 1);
        }
    }
    if done.first().map(|c| c.status) != Some(WcStatus::Success) {
        return Err(fail(format!("the WRITE completed as {done:?}")));
    }
    let rtl = fabric
        .node_mut(b_id)
        .rtl_mut()
        .ok_or_else(|| fail("no RTL node".into()))?;
    rtl.finish_check().map_err(fail)?;
    let mut placed = vec![0; message_bytes as usize];
    rtl.memory()
        .read_va(b_va, &mut placed)
        .map_err(|e| fail(e.to_string()))?;
    if placed != data {
        return Err(fail("the WRITE's bytes are not in place".into()));
    }
    let log = rtl.port_log().ok_or_else(|| fail("no port log".into()))?;
    let (last_request_beat, last_request) = log
        .rx
        .last()
        .cloned()
        .ok_or_else(|| fail("no request frame".into()))?;
    let request =
        rocenic_wire::RoceFrame::decode(&last_request).map_err(|e| fail(e.to_string()))?;
    if !(matches!(request.bth.opcode, op::WRITE_LAST | op::WRITE_ONLY) && request.bth.ack_req) {
        return Err(fail(format!("the last request is {:?}", request.bth)));
    }
    let [(ack_first_beat, ack)] = &log.tx[..] else {
        return Err(fail(format!("{} frames out, not one ACK", log.tx.len())));
    };
    let f = rocenic_wire::RoceFrame::decode(ack).map_err(|e| fail(e.to_string()))?;
    let is_ack = f.bth.opcode == op::ACKNOWLEDGE
        && f.bth.psn == request.bth.psn
        && f.bth.dest_qp == qa
        && f.ext.aeth.as_ref().is_some_and(|a| a.syndrome >> 5 == 0);
    if !is_ack {
        return Err(fail(format!(
            "the frame out is no ACK of PSN {}: {:?} {:?}",
            request.bth.psn, f.bth, f.ext.aeth
        )));
    }
    let last_dma_write = log
        .dma_writes
        .last()
        .map(|w| w.0)
        .ok_or_else(|| fail("no DMA write".into()))?;
    Ok(AckLatency {
        request_frames: log.rx.len(),
        last_request_beat,
        ack_first_beat: *ack_first_beat,
        last_dma_write,
        last_request,
        ack: ack.clone(),
    })
}

/// The responder's ACK latency rows: cycles from the last beat of a
/// WRITE's last request frame in to the first beat of its ACK out, at
/// [`ACK_LATENCY_SIZES`], MTU 4096.
fn bench_responder_ack_latency(rows: &mut Vec<BenchRow>) -> Result<(), RtlError> {
    for size in ACK_LATENCY_SIZES {
        let l = responder_ack_latency(size)?;
        let mut r = row("responder_path", "ack_latency", l.cycles() as f64, "cycles")
            .ip(false)
            .goodput(size, 4096, "model requester");
        r.frames = l.request_frames;
        r.dma_write_latency_cycles = Some(ACK_LATENCY_DMA_WRITE_CYCLES);
        rows.push(r);
    }
    Ok(())
}

/// The verbs of the first-frame latency rows: WRITE at each
/// [`FIRST_FRAME_SIZES`] size, then a 64-byte READ and a 64-byte SEND.
pub const FIRST_FRAME_CASES: [(FirstFrameVerb, u64); 5] = [
    (FirstFrameVerb::Write, 64),
    (FirstFrameVerb::Write, 4096),
    (FirstFrameVerb::Write, 65536),
    (FirstFrameVerb::Read, 64),
    (FirstFrameVerb::Send, 64),
];

/// The verb of a first-frame latency run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FirstFrameVerb {
    Write,
    Read,
    Send,
}

impl FirstFrameVerb {
    pub fn name(self) -> &'static str {
        match self {
            FirstFrameVerb::Write => "write",
            FirstFrameVerb::Read => "read",
            FirstFrameVerb::Send => "send",
        }
    }
}

/// One send WQE through the RTL requester half
/// ([`requester_first_frame_latency`]).
#[derive(Clone, Debug)]
pub struct FirstFrameLatency {
    /// Request frames the core emitted.
    pub request_frames: usize,
    /// Core cycle in which the core took the WQE on its post port.
    pub wqe_taken: u64,
    /// Core cycle in which the first beat of the first request frame left
    /// its tx port.
    pub first_beat: u64,
    /// That frame, as on the wire.
    pub first_frame: Vec<u8>,
    /// The host model's DMA read latency of the run.
    pub dma_read_latency: u64,
}

impl FirstFrameLatency {
    /// From the WQE taken to the first request beat out.
    pub fn cycles(&self) -> u64 {
        self.first_beat - self.wqe_taken
    }
}

/// The RTL requester half (`requester_path` in an `RtlRequesterNic`,
/// scored against its shadow, `HostDmaConfig::default()`) posts one
/// signaled `verb` of `message_bytes` (MTU 4096, IPv4, lossless 100 GbE
/// links) to a model responder; the core's port log gives the cycles. The
/// run must complete the WQE successfully with the data in place, and the
/// core's first frame must be the message's first packet (PSN of the
/// QP's start, the verb's FIRST or ONLY opcode).
pub fn requester_first_frame_latency(
    verb: FirstFrameVerb,
    message_bytes: u64,
) -> Result<FirstFrameLatency, RtlError> {
    use crate::scenario::{connect, nic_config, ScenarioConfig};
    use rand::{Rng, SeedableRng};
    use rocenic_fabric::{Fabric, LinkConfig, SwitchConfig};
    use rocenic_model::nic::Nic;
    use rocenic_model::verbs::{Access, QpCaps, RecvWr, SendOp, SendWr, Sge, WcStatus};
    use rocenic_rtl::node::Node;
    use rocenic_rtl::requester_nic::RtlRequesterNic;
    use rocenic_wire::op;
    use verilator_sys::RequesterPath;

    let fail = |what: String| {
        RtlError::Mismatch(format!(
            "first-frame latency, {} {message_bytes} B: {what}",
            verb.name()
        ))
    };
    let verbs = |e: rocenic_model::verbs::VerbsError| fail(e.to_string());
    let config = ScenarioConfig {
        mtu: 4096,
        ..ScenarioConfig::default()
    };
    let dma = HostDmaConfig::default();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(message_bytes);
    let mut rtl = RtlRequesterNic::<RequesterPath>::new(nic_config(1, &config), dma);
    rtl.log_port_frames();
    let mut b = Nic::new(nic_config(2, &config));
    let a = rtl.setup()?;
    let caps = QpCaps {
        max_send_wr: 1,
        max_recv_wr: 1,
        max_sge: 1,
    };
    let (a_pd, b_pd) = (a.alloc_pd(), b.alloc_pd());
    let (a_cq, b_cq) = (a.create_cq(4), b.create_cq(4));
    let qa = a.create_qp(a_pd, a_cq, a_cq, caps).map_err(verbs)?;
    let qb = b.create_qp(b_pd, b_cq, b_cq, caps).map_err(verbs)?;
    connect(a, qa, &mut b, qb, &config, &mut rng).map_err(|e| fail(e.to_string()))?;
    let a_data: Vec<u8> = (0..message_bytes).map(|_| rng.gen()).collect();
    let b_data: Vec<u8> = (0..message_bytes).map(|_| rng.gen()).collect();
    let a_va = a.memory_mut().alloc(message_bytes, 4096);
    a.memory_mut()
        .write_va(a_va, &a_data)
        .map_err(|e| fail(e.to_string()))?;
    let a_key = a
        .reg_mr(a_pd, a_va, message_bytes, Access::LOCAL_WRITE)
        .map_err(verbs)?;
    let b_va = b.memory_mut().alloc(message_bytes, 4096);
    b.memory_mut()
        .write_va(b_va, &b_data)
        .map_err(|e| fail(e.to_string()))?;
    let b_key = b
        .reg_mr(
            b_pd,
            b_va,
            message_bytes,
            Access::LOCAL_WRITE | Access::REMOTE_WRITE | Access::REMOTE_READ,
        )
        .map_err(verbs)?;
    let start_psn = a.qp_context(qa).map(|v| v.sq_send_psn);
    let (send_op, opcodes) = match verb {
        FirstFrameVerb::Write => (
            SendOp::Write {
                remote_addr: b_va,
                rkey: b_key.rkey,
            },
            [op::WRITE_ONLY, op::WRITE_FIRST],
        ),
        FirstFrameVerb::Read => (
            SendOp::Read {
                remote_addr: b_va,
                rkey: b_key.rkey,
            },
            [op::READ_REQUEST, op::READ_REQUEST],
        ),
        FirstFrameVerb::Send => {
            b.post_recv(
                qb,
                RecvWr {
                    wr_id: 7,
                    sgl: vec![Sge {
                        addr: b_va,
                        length: message_bytes as u32,
                        lkey: b_key.lkey,
                    }],
                },
            )
            .map_err(verbs)?;
            (SendOp::Send, [op::SEND_ONLY, op::SEND_FIRST])
        }
    };
    rtl.post_send(
        qa,
        SendWr {
            wr_id: 1,
            op: send_op,
            sgl: vec![Sge {
                addr: a_va,
                length: message_bytes as u32,
                lkey: a_key.lkey,
            }],
            signaled: true,
            solicited: false,
            fence: false,
            inline_data: None,
        },
    );

    let mut fabric = Fabric::new(1, SwitchConfig::default());
    let a_id = fabric.add_node(Node::Rtl(Box::new(rtl)), LinkConfig::default());
    let b_id = fabric.add_node(
        Node::<RtlRequesterNic<RequesterPath>>::Model(Box::new(b)),
        LinkConfig::default(),
    );
    let mut done = Vec::new();
    while done.is_empty() && fabric.now() < 1_000_000 {
        let until = fabric.now() + 1_000;
        fabric.run_until(until);
        let Some(rtl) = fabric.node_mut(a_id).rtl_mut() else {
            return Err(fail("no RTL node".into()));
        };
        if let Some(m) = rtl.mismatch() {
            return Err(fail(m.to_owned()));
        }
        done = rtl.poll_cq(a_cq, 1);
    }
    if done.first().map(|c| c.status) != Some(WcStatus::Success) {
        return Err(fail(format!("the WQE completed as {done:?}")));
    }
    let b_memory = fabric
        .node(b_id)
        .model()
        .ok_or_else(|| fail("no model node".into()))?
        .memory()
        .clone();
    let rtl = fabric
        .node_mut(a_id)
        .rtl_mut()
        .ok_or_else(|| fail("no RTL node".into()))?;
    rtl.finish_check().map_err(fail)?;
    // A WRITE or SEND moves A's bytes to B, a READ B's to A.
    let (memory, va, want) = match verb {
        FirstFrameVerb::Read => (rtl.memory(), a_va, &b_data),
        _ => (&b_memory, b_va, &a_data),
    };
    let mut placed = vec![0; message_bytes as usize];
    memory
        .read_va(va, &mut placed)
        .map_err(|e| fail(e.to_string()))?;
    if placed != *want {
        return Err(fail("the message's bytes are not in place".into()));
    }
    let log = rtl.port_log().ok_or_else(|| fail("no port log".into()))?;
    let [(wqe_taken, _, 1)] = log.posts[..] else {
        return Err(fail(format!("posts taken: {:?}", log.posts)));
    };
    let (first_beat, first_frame) = log
        .tx
        .first()
        .cloned()
        .ok_or_else(|| fail("no request frame".into()))?;
    let f = rocenic_wire::RoceFrame::decode(&first_frame).map_err(|e| fail(e.to_string()))?;
    let want_opcode = opcodes[usize::from(message_bytes > 4096)];
    if f.bth.opcode != want_opcode || f.bth.dest_qp != qb || Some(f.bth.psn) != start_psn {
        return Err(fail(format!(
            "the first frame is not the message's first packet: {:?}",
            f.bth
        )));
    }
    Ok(FirstFrameLatency {
        request_frames: log.tx.len(),
        wqe_taken,
        first_beat,
        first_frame,
        dma_read_latency: dma.read_latency,
    })
}

/// The requester's first-frame latency rows: cycles from the core taking
/// a WQE on its post port to the first beat of its first request frame
/// out, for [`FIRST_FRAME_CASES`], MTU 4096, the host model's DMA read
/// latency in the row.
fn bench_requester_first_frame_latency(rows: &mut Vec<BenchRow>) -> Result<(), RtlError> {
    for (verb, size) in FIRST_FRAME_CASES {
        let l = requester_first_frame_latency(verb, size)?;
        let mut r = row(
            "requester_path",
            "wqe_to_first_frame",
            l.cycles() as f64,
            "cycles",
        )
        .ip(false)
        .goodput(size, 4096, "model responder");
        r.frames = l.request_frames;
        r.operation = Some(verb.name());
        r.dma_read_latency_cycles = Some(l.dma_read_latency);
        rows.push(r);
    }
    Ok(())
}

/// The rows as a human-readable table.
pub fn table(rows: &[BenchRow]) -> String {
    let mut out = format!(
        "{:<20} {:<44} {:>6} {:>5} {:>4} {:>10} {:<12} {:>8} {:>9} {:>8}\n",
        "block", "metric", "bytes", "beats", "ip", "value", "unit", "bound", "100GbE", "model"
    );
    let opt = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.2}"));
    for r in rows {
        let _ = writeln!(
            out,
            "{:<20} {:<44} {:>6} {:>5} {:>4} {:>10.3} {:<12} {:>8} {:>9} {:>8}",
            r.block,
            match (r.operation, r.qps) {
                (Some(o), _) => format!("{} ({o})", r.metric),
                (None, Some(q)) => format!("{} ({q} QPs)", r.metric),
                (None, None) => r.metric.to_string(),
            },
            r.frame_bytes
                .map(|b| b as u64)
                .or(r.message_bytes)
                .map_or("-".into(), |b| b.to_string()),
            r.frame_beats.map_or("-".into(), |b| b.to_string()),
            r.ip.unwrap_or("-"),
            r.value,
            r.unit,
            opt(r.bound),
            opt(r.ethernet_100g_gbps),
            opt(r.model_value),
        );
    }
    out
}

/// One line per block and metric: its range over the sweep (or the one
/// value it has at every size), and the sizes at which a data rate falls
/// short of what 100 GbE delivers.
pub fn summary(rows: &[BenchRow]) -> Vec<String> {
    let mut keys: Vec<(&str, &str, Option<&str>)> = Vec::new();
    for r in rows {
        let k = (r.block, r.metric, r.ip);
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    keys.into_iter()
        .map(|(block, metric, ip)| {
            let group: Vec<&BenchRow> = rows
                .iter()
                .filter(|r| r.block == block && r.metric == metric && r.ip == ip)
                .collect();
            let min = group.iter().map(|r| r.value).fold(f64::INFINITY, f64::min);
            let max = group
                .iter()
                .map(|r| r.value)
                .fold(f64::NEG_INFINITY, f64::max);
            let unit = group[0].unit;
            let ip = ip.map_or(String::new(), |ip| format!(" ({ip})"));
            let mut line = if group.len() == 1 {
                format!("{block}{ip} {metric}: {min:.3} {unit}")
            } else if (max - min).abs() < 1e-9 {
                format!("{block}{ip} {metric}: {min:.3} {unit} at every size")
            } else {
                format!("{block}{ip} {metric}: {min:.3} .. {max:.3} {unit}")
            };
            let short: Vec<String> = group
                .iter()
                .filter(|r| r.ethernet_100g_gbps.is_some_and(|need| r.value < need))
                .filter_map(|r| r.frame_bytes.map(|b| b.to_string()))
                .collect();
            if !short.is_empty() {
                line.push_str(&format!(
                    "; below the 100 GbE line rate for {}-byte frames",
                    short.join(", ")
                ));
            }
            line
        })
        .collect()
}
