//! `rocenic`: run the simulated RoCEv2 NICs and inspect captures.

use anyhow::{Context, Result};
use clap::{Parser, Subcommand, ValueEnum};
use rocenic_fabric::FaultConfig;
use rocenic_model::dcqcn::DcqcnConfig;
use rocenic_model::host_interface::congestion;
use rocenic_sim::decode;
use rocenic_sim::incast::{incast_pfc, run_incast_backend, IncastBackend, IncastConfig};
use rocenic_sim::plot::plot_incast;
use rocenic_sim::scenario::{self, Backend, ScenarioConfig, Workload};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "rocenic",
    version,
    about = "rocenic RoCEv2 NIC simulator and tools"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// A DCQCN parameter set (each in `docs/dcqcn.md`).
#[derive(Clone, Copy, Debug, ValueEnum)]
enum DcqcnParams {
    /// rocenic's set for 100 GbE.
    Rocenic,
    /// NVIDIA ConnectX's firmware defaults.
    Nvidia,
    /// The DCQCN paper's values (Zhu et al., SIGCOMM 2015).
    Paper,
}

/// The NIC behind the verbs library.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum PerfBackend {
    /// The reference model behind the host ABI.
    Model,
    /// The Verilated core behind the RTL host interface.
    Rtl,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum DecodeBackend {
    /// The reference model's codec.
    Model,
    /// The Verilated RTL RX parser with its in-line ICRC checker: what the
    /// hardware would do with each frame.
    Rtl,
}

fn probability(s: &str) -> Result<f64, String> {
    let p: f64 = s.parse().map_err(|e| format!("{e}"))?;
    if (0.0..=1.0).contains(&p) {
        Ok(p)
    } else {
        Err(format!("{p} is not a probability in 0..=1"))
    }
}

fn link_gbps(s: &str) -> Result<f64, String> {
    let gbps: f64 = s.parse().map_err(|e| format!("{e}"))?;
    if (1.0..=400.0).contains(&gbps) {
        Ok(gbps)
    } else {
        Err(format!("{gbps} Gb/s is not a link rate in 1 ..= 400"))
    }
}

fn page_size(s: &str) -> Result<u64, String> {
    let size: u64 = s.parse().map_err(|e| format!("{e}"))?;
    if size.is_power_of_two() && (4096..=2 << 20).contains(&size) {
        Ok(size)
    } else {
        Err(format!("{size} is not a power of two in 4096 ..= 2097152"))
    }
}

#[derive(Subcommand)]
enum Command {
    /// Run an RDMA workload between two simulated NICs and check every
    /// completion and every byte of memory.
    Sim {
        #[arg(long, value_enum, default_value = "model")]
        backend: Backend,
        #[arg(long, value_enum, default_value = "write")]
        workload: Workload,
        /// Message size in bytes (atomics always move 8).
        #[arg(long, default_value_t = 65536)]
        size: u64,
        /// Messages per QP.
        #[arg(long, default_value_t = 16)]
        count: u32,
        #[arg(long, default_value_t = 1)]
        qps: u32,
        /// Path MTU: 256, 512, 1024, 2048 or 4096.
        #[arg(long, default_value_t = 4096)]
        mtu: u32,
        /// Probability that a link loses a frame.
        #[arg(long, default_value_t = 0.0, value_parser = probability)]
        loss: f64,
        /// Probability that a link duplicates a frame.
        #[arg(long, default_value_t = 0.0, value_parser = probability)]
        dup: f64,
        /// Probability that a link delays a frame behind later ones.
        #[arg(long, default_value_t = 0.0, value_parser = probability)]
        reorder: f64,
        /// How long a reordered frame is held back, in nanoseconds.
        #[arg(long, default_value_t = 3000)]
        reorder_delay_ns: u64,
        /// Probability that a link flips a bit of a frame.
        #[arg(long, default_value_t = 0.0, value_parser = probability)]
        corrupt: f64,
        /// ECN marking in the switch and DCQCN in the NICs (with `--backend
        /// rtl`: the RTL cores' notification points, reaction points and
        /// pacing, checked against the model's integer DCQCN).
        #[arg(long)]
        ecn: bool,
        /// NIC A's link rate (Gb/s); a slower link than the other NIC's
        /// is the bottleneck, where the switch queues (and with --ecn
        /// marks) what that NIC sends.
        #[arg(long, default_value_t = 100.0, value_parser = link_gbps)]
        a_link_gbps: f64,
        /// NIC B's link rate (Gb/s).
        #[arg(long, default_value_t = 100.0, value_parser = link_gbps)]
        b_link_gbps: f64,
        /// Use IPv6 instead of IPv4.
        #[arg(long)]
        ipv6: bool,
        /// Host page size backing the buffers: 4096 ..= 2097152, a power of two.
        #[arg(long, default_value_t = 4096, value_parser = page_size)]
        page_size: u64,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Write every frame as its sender emitted it.
        #[arg(long)]
        pcap: Option<PathBuf>,
        /// Write the report as JSON.
        #[arg(long)]
        json: Option<PathBuf>,
    },
    /// Decode every frame of a pcap as the NIC's receive path would.
    Decode {
        /// The capture (pcap, Ethernet link type).
        file: PathBuf,
        #[arg(long, value_enum, default_value = "model")]
        backend: DecodeBackend,
        /// Print one JSON object per frame (JSON Lines) instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// DCQCN under incast: FLOWS senders stream RDMA WRITEs into one
    /// receiver through a 100 GbE bottleneck; reports per-window rates,
    /// fairness, utilisation and when fairness converged.
    Dcqcn {
        #[arg(long, default_value_t = 2)]
        flows: usize,
        /// The NICs: the model, or every NIC the Verilated core (each
        /// checked against its shadow model as it runs; the rocenic and
        /// paper parameter sets).
        #[arg(long, value_enum, default_value = "model")]
        backend: IncastBackend,
        /// Simulated time to run, in milliseconds.
        #[arg(long, default_value_t = 100.0)]
        duration_ms: f64,
        /// Measurement window, in microseconds.
        #[arg(long, default_value_t = 1000.0)]
        window_us: f64,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// The reaction and notification points' parameters.
        #[arg(long, value_enum, default_value = "rocenic")]
        params: DcqcnParams,
        /// One DCQCN parameter changed from the set, as BAR0's congestion
        /// block takes it: NVIDIA's name and unit (`--set
        /// rpg_time_reset=55 --set rpg_ai_rate=40`; docs/abi.md lists
        /// them). May repeat.
        #[arg(long = "set", value_name = "NAME=VALUE")]
        set: Vec<String>,
        /// Priority flow control at the switch (XOFF at 512 KiB per ingress
        /// port), honoured by the NICs; `--pfc false`: a lossy fabric.
        #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
        pfc: bool,
        /// The switch's shared buffer, KiB.
        #[arg(long, default_value_t = 32 << 10)]
        buffer_kib: u64,
        /// Size of each WRITE, bytes.
        #[arg(long, default_value_t = 1 << 20)]
        size: u64,
        /// WRITEs each flow sends in all; the run ends when all completed
        /// (default: keep sending until the end).
        #[arg(long)]
        messages: Option<u64>,
        #[arg(long)]
        json: Option<PathBuf>,
        /// Draw each flow's rate and the switch queue over time (PNG).
        #[arg(long)]
        plot: Option<PathBuf>,
    },
    /// Throughput and latency of the Verilated RTL datapath blocks (RX
    /// parser, TX builder, ICRC checker, register slice) in clock cycles at
    /// 250 MHz, over frame sizes from one beat to the largest RoCEv2 frame.
    Bench {
        /// Back-to-back frames per size.
        #[arg(long, default_value_t = 32)]
        frames: usize,
        /// Also write the rows as a JSON array.
        #[arg(long)]
        json: Option<PathBuf>,
    },
    /// perftest's tests (ib_write_bw, ib_read_lat, ...) through the verbs
    /// library on two simulated hosts: rings, doorbells and CQEs as an
    /// application drives them; figures in simulated time.
    Perf {
        #[arg(value_enum)]
        test: rocenic_sim::perf::PerfTest,
        /// Message size in bytes (perftest's default: 65536 for bandwidth,
        /// 2 for latency, 8 for atomics).
        #[arg(short = 's', long)]
        size: Option<u64>,
        /// Every size from 2 bytes to 8 MiB in powers of two.
        #[arg(short = 'a', long)]
        all: bool,
        /// Messages per QP (bandwidth) or samples (latency).
        #[arg(short = 'n', long, default_value_t = 1000)]
        iters: u64,
        /// QP pairs (bandwidth tests).
        #[arg(short = 'q', long, default_value_t = 1)]
        qp: u32,
        /// WQEs in flight per QP.
        #[arg(short = 't', long, default_value_t = 128)]
        tx_depth: u32,
        /// Path MTU: 256, 512, 1024, 2048 or 4096.
        #[arg(short = 'm', long, default_value_t = 4096)]
        mtu: u32,
        /// Bandwidth in Gb/s instead of MB/s.
        #[arg(long = "report_gbits", alias = "report-gbits")]
        report_gbits: bool,
        /// The NIC behind the driver. Only `model` exists yet: the driver's
        /// rtl backend waits for the RTL host interface.
        #[arg(long, value_enum, default_value = "model")]
        backend: PerfBackend,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Also print both hosts' counters after the last size, read
        /// through BAR0 (`ethtool -S`'s layout).
        #[arg(long)]
        stats: bool,
        /// Also write the rows as a JSON array.
        #[arg(long)]
        json: Option<PathBuf>,
    },
    /// Write seeded random valid RoCEv2 frames (every opcode, IPv4 and
    /// IPv6, payloads up to 4096 bytes) to a pcap, for cross-checking other
    /// decoders and the RTL.
    Frames {
        #[arg(long, default_value_t = 100)]
        count: usize,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[arg(long)]
        pcap: PathBuf,
    },
}

fn main() -> ExitCode {
    sigpipe::reset();
    match run(Cli::parse()) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("rocenic: error: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Sim {
            backend,
            workload,
            size,
            count,
            qps,
            mtu,
            loss,
            dup,
            reorder,
            reorder_delay_ns,
            corrupt,
            ecn,
            a_link_gbps,
            b_link_gbps,
            ipv6,
            page_size,
            seed,
            pcap,
            json,
        } => {
            let config = ScenarioConfig {
                workload,
                size,
                count,
                qps,
                mtu,
                faults: FaultConfig {
                    loss,
                    duplicate: dup,
                    reorder,
                    reorder_delay_ns,
                    corrupt,
                },
                ecn,
                a_link_bps: a_link_gbps * 1e9,
                b_link_bps: b_link_gbps * 1e9,
                seed,
                ipv6,
                page_size,
                ..ScenarioConfig::default()
            };
            if size > u64::from(u32::MAX) {
                anyhow::bail!("--size {size} exceeds the 2^32-1 byte RDMA message limit");
            }
            let report = scenario::run_backend(backend, &config, pcap.as_deref())?;
            println!(
                "{} {:?}: {}/{} messages completed, data {}, {} frames ({} retransmitted), {:.2} Gb/s goodput over {:.3} ms simulated",
                report.backend,
                report.workload,
                report.messages_completed,
                report.messages_posted,
                if report.data_verified { "verified" } else { "MISMATCH" },
                report.frames,
                report.retransmitted_frames,
                report.goodput_gbps,
                report.sim_time_ns as f64 / 1e6
            );
            if let (Some(cycles), Some(mhz)) = (report.cycles, report.clock_mhz) {
                println!(
                    "  RTL core: {cycles} cycles at {mhz:.0} MHz to the last completion ({} clocked, idle stretches skipped)",
                    report.core_active_cycles.unwrap_or(0)
                );
            }
            if let Some(bound) = report.goodput_bound_gbps {
                println!("  framing bound for back-to-back messages of this size: {bound:.2} Gb/s");
            }
            if ecn {
                let (a, b) = (&report.requester, &report.responder);
                println!(
                    "  ECN: {} frames marked by the switch",
                    report.fabric.ecn_marked
                );
                for (name, n, cuts) in
                    [("A", a, report.rate_cuts[0]), ("B", b, report.rate_cuts[1])]
                {
                    println!(
                        "    {name}: {} CE-marked frames in, {} CNPs out, {} CNPs in, {cuts} rate cuts",
                        n.ecn_ce_received, n.cnps_sent, n.cnps_received
                    );
                }
            }
            for m in &report.mismatches {
                println!("  mismatch: {m}");
            }
            if let Some(path) = &json {
                std::fs::write(path, serde_json::to_string_pretty(&report)? + "\n")
                    .with_context(|| format!("cannot write {}", path.display()))?;
            }
            let ok = report.data_verified && report.messages_completed == report.messages_posted;
            Ok(if ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
        Command::Dcqcn {
            flows,
            backend,
            duration_ms,
            window_us,
            seed,
            params,
            set,
            pfc,
            buffer_kib,
            size,
            messages,
            json,
            plot,
        } => {
            let mut dcqcn = match params {
                DcqcnParams::Rocenic => DcqcnConfig::rocenic(),
                DcqcnParams::Nvidia => DcqcnConfig::nvidia(),
                DcqcnParams::Paper => DcqcnConfig::paper(),
            };
            for assignment in &set {
                let (name, value) = assignment
                    .split_once('=')
                    .with_context(|| format!("--set {assignment}: NAME=VALUE"))?;
                let value: u32 = value.parse().with_context(|| {
                    format!("--set {assignment}: {value:?} is not a whole number")
                })?;
                congestion::set_dcqcn(&mut dcqcn, name, value)
                    .map_err(|why| anyhow::anyhow!("--set {assignment}: {why}"))?;
            }
            let config = IncastConfig {
                flows,
                duration_ns: (duration_ms * 1e6) as u64,
                window_ns: (window_us * 1e3) as u64,
                seed,
                dcqcn,
                pfc: pfc.then(incast_pfc),
                buffer_bytes: buffer_kib << 10,
                message_size: size,
                messages_per_flow: messages,
                ..IncastConfig::default()
            };
            let report = run_incast_backend(backend, &config)?;
            for s in &report.samples {
                let rates: Vec<String> = s.flow_gbps.iter().map(|r| format!("{r:6.2}")).collect();
                println!(
                    "{:>9.3} ms  jain {:.3}  util {:5.1}%  queue {:>8.0} B (max {:>8})  pfc {:>4}  drops {:>4}  Gb/s [{}]",
                    s.start_ns as f64 / 1e6,
                    s.jain,
                    s.utilisation * 100.0,
                    s.queue_bytes_mean,
                    s.queue_bytes_max,
                    s.pfc_pauses,
                    s.drops,
                    rates.join(" ")
                );
            }
            match report.convergence_ns {
                Some(t) => println!(
                    "converged after {:.3} ms: Jain {:.4}, utilisation {:.1}% of {} Gb/s; {} CNPs, {} ECN marks",
                    t as f64 / 1e6,
                    report.jain_after_convergence,
                    report.utilisation_after_convergence * 100.0,
                    report.line_rate_gbps,
                    report.cnps_sent,
                    report.ecn_marked
                ),
                None => println!(
                    "never settled at Jain >= {} and utilisation >= {}",
                    config.fairness_target, config.utilisation_target
                ),
            }
            if let Some(fixed) = report.fluid_fixed_point {
                println!(
                    "queue: mean {:.0} B from 1 ms; the DCQCN fluid model's fixed point {:.0} B (p* {:.4}): {:.1} x",
                    report.queue_bytes_mean_after_1ms,
                    fixed.queue_bytes,
                    fixed.marking_probability,
                    report.queue_bytes_mean_after_1ms / fixed.queue_bytes
                );
            }
            println!(
                "switch: {} ECN marks, {} PFC pauses, {} drops, largest queue {} B; senders: {} CNPs received, {} rate cuts, {} pauses taken, {} watchdog trips, {} frames retransmitted",
                report.ecn_marked,
                report.pfc_pauses,
                report.buffer_drops,
                report.queue_bytes_max,
                report.cnps_received,
                report.rate_cuts,
                report.rx_pause_frames,
                report.pause_watchdog_trips,
                report.retransmitted_frames
            );
            if let Some(m) = messages {
                let all = m * flows as u64;
                match report.completion_ns {
                    Some(t) => println!("all {all} WRITEs completed at {:.3} ms", t as f64 / 1e6),
                    None => println!("{} of {all} WRITEs completed", report.messages_completed),
                }
            }
            if let Some(path) = &json {
                std::fs::write(path, serde_json::to_string_pretty(&report)? + "\n")
                    .with_context(|| format!("cannot write {}", path.display()))?;
            }
            if let Some(path) = &plot {
                let title =
                    format!(
                    "DCQCN on the {} ({} parameters): {flows} flows into one {} Gb/s link, PFC {}",
                    if backend == IncastBackend::Rtl { "RTL cores" } else { "model" },
                    params
                        .to_possible_value()
                        .expect("no variant is skipped")
                        .get_name(),
                    report.line_rate_gbps,
                    if pfc { "on" } else { "off" }
                );
                plot_incast(&report, &title, path)?;
            }
            let done = match messages {
                Some(_) => report.completion_ns.is_some(),
                None => report.convergence_ns.is_some(),
            };
            Ok(if done {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
        Command::Bench { frames, json } => bench(frames, json.as_deref()),
        Command::Perf {
            test,
            size,
            all,
            iters,
            qp,
            tx_depth,
            mtu,
            report_gbits,
            backend,
            seed,
            stats,
            json,
        } => {
            if backend == PerfBackend::Rtl {
                anyhow::bail!(
                    "--backend rtl: the driver's rtl backend needs the RTL host interface \
                     (doorbells, WQE fetch, CQE write), which is not built yet; use --backend model"
                );
            }
            if ![256, 512, 1024, 2048, 4096].contains(&mtu) {
                anyhow::bail!("-m {mtu}: the path MTU is 256, 512, 1024, 2048 or 4096");
            }
            let sizes = match (all, size) {
                (true, Some(_)) => anyhow::bail!("-a runs every size; leave out -s"),
                (true, None) if test == rocenic_sim::perf::PerfTest::AtomicBw => vec![8],
                (true, None) => rocenic_sim::perf::all_sizes(),
                (false, size) => vec![size.unwrap_or(test.default_size())],
            };
            if let Some(&zero) = sizes.iter().find(|&&s| s == 0) {
                anyhow::bail!("-s {zero}: a message of at least one byte");
            }
            let config = rocenic_sim::perf::PerfConfig {
                test,
                sizes,
                iterations: iters,
                qps: qp,
                tx_depth,
                mtu,
                seed,
            };
            let run = rocenic_sim::perf::run(&config)?;
            let rows = run.rows;
            print!("{}", rocenic_sim::perf::render(&rows, report_gbits));
            if let (true, Some(last)) = (stats, run.stats.last()) {
                print!("{}", rocenic_sim::perf::render_stats(last));
            }
            if let Some(path) = json {
                std::fs::write(&path, serde_json::to_string_pretty(&rows)? + "\n")
                    .with_context(|| format!("cannot write {}", path.display()))?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Frames { count, seed, pcap } => {
            let mut writer = rocenic_fabric::PcapWriter::create(&pcap)
                .with_context(|| format!("cannot create {}", pcap.display()))?;
            for (i, frame) in rocenic_sim::frames::random_frames(seed, count)
                .iter()
                .enumerate()
            {
                let bytes = frame.encode().context("encoding a generated frame")?;
                writer
                    .write(i as u64 * 1_000, &bytes)
                    .with_context(|| format!("cannot write {}", pcap.display()))?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Decode {
            file,
            backend: DecodeBackend::Model,
            json,
        } => {
            let reports = decode::decode_pcap(&file)?;
            for r in &reports {
                if json {
                    println!("{}", serde_json::to_string(r)?);
                } else {
                    print_decode_row(r);
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Decode {
            file,
            backend: DecodeBackend::Rtl,
            json,
        } => decode_rtl(&file, json),
    }
}

/// `rocenic bench`.
#[cfg(feature = "rtl")]
fn bench(frames: usize, json: Option<&Path>) -> Result<ExitCode> {
    let rows = rocenic_sim::bench::run_bench(frames)?;
    print!("{}", rocenic_sim::bench::table(&rows));
    println!();
    for line in rocenic_sim::bench::summary(&rows) {
        println!("{line}");
    }
    if let Some(path) = json {
        std::fs::write(path, serde_json::to_string_pretty(&rows)? + "\n")
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `rocenic decode --backend rtl`.
#[cfg(feature = "rtl")]
fn decode_rtl(file: &Path, json: bool) -> Result<ExitCode> {
    let decoded = rocenic_sim::rtl_decode::decode_pcap(file)?;
    for r in &decoded.frames {
        if json {
            println!("{}", serde_json::to_string(r)?);
        } else {
            print_decode_row(&r.report);
        }
    }
    if !json {
        let counts: Vec<String> = decoded
            .counters
            .iter()
            .filter(|(_, n)| *n > 0)
            .map(|(name, n)| format!("{name} {n}"))
            .collect();
        println!(
            "RX parser counters: {}; {} cycles",
            counts.join(", "),
            decoded.cycles
        );
    }
    Ok(ExitCode::SUCCESS)
}

// Without the `rtl` feature the RTL commands stay on the command line (so
// `--help` is the same) and say why they cannot run.
#[cfg(not(feature = "rtl"))]
fn bench(_: usize, _: Option<&Path>) -> Result<ExitCode> {
    anyhow::bail!("rocenic bench: this rocenic was built without the `rtl` feature (no Verilated RTL); rebuild with default features")
}

#[cfg(not(feature = "rtl"))]
fn decode_rtl(_: &Path, _: bool) -> Result<ExitCode> {
    anyhow::bail!("rocenic decode --backend rtl: this rocenic was built without the `rtl` feature (no Verilated RTL); rebuild with default features")
}

/// One line of the `rocenic decode` table.
fn print_decode_row(r: &decode::FrameReport) {
    println!(
        "{:>6} {:<4} {:<36} qp {:>8} psn {:>8} len {:>5} {}",
        r.frame,
        if r.ok { "ok" } else { "DROP" },
        r.opcode_name.unwrap_or("-"),
        r.dest_qp.map_or("-".into(), |q| q.to_string()),
        r.psn.map_or("-".into(), |p| p.to_string()),
        r.payload_len.map_or("-".into(), |l| l.to_string()),
        r.error_detail.as_deref().unwrap_or("")
    );
}
