//! `rocenic perf`: perftest's bandwidth and latency tests (`ib_write_bw`,
//! `ib_read_lat`, ...) through the verbs library on two simulated hosts.
//!
//! Everything goes the way an application's traffic goes: WQEs written
//! into rings and rung through doorbells, CQEs polled by owner bit. Time
//! is the fabric's simulated time, so the figures are the simulated NIC's,
//! independent of the machine that runs the simulation.
//!
//! - Bandwidth tests keep `tx_depth` WQEs in flight on each QP, every one
//!   signaled. `BW average` is all bytes over the time from the first post
//!   to the last completion; `BW peak` is the best rate over any
//!   `tx_depth` consecutive completions.
//! - `write_lat` and `send_lat` are ping-pongs as in perftest: each side
//!   answers the other's message with its own, and a sample is half the
//!   round trip. `write_lat` notices arrival by polling the last byte of
//!   the buffer, as perftest does. `read_lat` samples a whole READ, post
//!   to completion.

use crate::bound::{goodput_bound_gbps, Transfer, LINK_GBPS};
use anyhow::{bail, ensure, Context as _, Result};
use rocenic_driver::device::Device;
use rocenic_driver::model::{host_ip, host_mac, ModelCluster, ModelDevice};
use rocenic_driver::verbs::{
    access, AddressVector, Context, Cq, Mr, Opcode, Qp, QpAttr, QpCap, RecvWr, SendWr, Sge,
    WorkCompletion,
};
use serde::Serialize;

/// The tests, by perftest's names without the `ib_` prefix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
#[clap(rename_all = "snake_case")]
pub enum PerfTest {
    WriteBw,
    ReadBw,
    SendBw,
    AtomicBw,
    WriteLat,
    ReadLat,
    SendLat,
}

impl PerfTest {
    pub fn is_latency(self) -> bool {
        matches!(
            self,
            PerfTest::WriteLat | PerfTest::ReadLat | PerfTest::SendLat
        )
    }

    /// perftest's default message size.
    pub fn default_size(self) -> u64 {
        match self {
            PerfTest::AtomicBw => 8,
            _ if self.is_latency() => 2,
            _ => 65536,
        }
    }
}

#[derive(Clone, Debug)]
pub struct PerfConfig {
    pub test: PerfTest,
    pub sizes: Vec<u64>,
    /// Messages per QP (bandwidth) or samples (latency).
    pub iterations: u64,
    pub qps: u32,
    pub tx_depth: u32,
    /// 256 .. 4096.
    pub mtu: u32,
    pub seed: u64,
}

/// One row of a bandwidth test.
#[derive(Clone, Debug, Serialize)]
pub struct BwRow {
    pub test: PerfTest,
    pub bytes: u64,
    pub iterations: u64,
    pub bw_peak_gbps: f64,
    pub bw_avg_gbps: f64,
    pub msg_rate_mpps: f64,
    /// The framing bound of this transfer on a 100 GbE link, where one
    /// exists (none for atomics, whose rate is bounded by round trips).
    pub bound_gbps: Option<f64>,
    pub bound_mpps: Option<f64>,
}

/// One row of a latency test; microseconds.
#[derive(Clone, Debug, Serialize)]
pub struct LatRow {
    pub test: PerfTest,
    pub bytes: u64,
    pub iterations: u64,
    pub t_min_us: f64,
    pub t_max_us: f64,
    pub t_typical_us: f64,
    pub t_avg_us: f64,
    pub t_stdev_us: f64,
    pub t_99_us: f64,
    pub t_999_us: f64,
}

#[derive(Clone, Debug, Serialize)]
#[serde(untagged)]
pub enum PerfRow {
    Bw(BwRow),
    Lat(LatRow),
}

/// Each host's counters after a row, by their ABI names (what
/// `ethtool -S` would print), host 1 first.
pub type HostStats = [Vec<(&'static str, u64)>; 2];

/// The rows of a run, each with its hosts' counters.
#[derive(Clone, Debug)]
pub struct PerfRun {
    pub rows: Vec<PerfRow>,
    pub stats: Vec<HostStats>,
}

/// perftest's `-a`: 2 bytes to 8 MiB in powers of two.
pub fn all_sizes() -> Vec<u64> {
    (1..=23).map(|shift| 1u64 << shift).collect()
}

/// Simulated time allowed for one row before it is declared stuck.
const ROW_TIMEOUT_NS: u64 = 10_000_000_000;

/// One host's side of a test: its verbs context, CQ, QPs and buffers.
struct Side {
    ctx: Context<ModelDevice>,
    cq: Cq,
    qps: Vec<Qp>,
    /// One buffer per QP, each `size` bytes (at least 8): what peers
    /// write into and read from.
    bufs: Vec<u64>,
    /// Beside each, as large: where a ping-pong's outgoing message is
    /// built (so its arrival mark is never the sender's own).
    outgoing: Vec<u64>,
    mr: Mr,
    /// Send WQEs whose CQE has not been polled yet.
    unreaped: u64,
}

impl Side {
    fn sge(&self, q: usize, length: u64) -> Sge {
        Sge {
            addr: self.bufs[q],
            length: length as u32,
            lkey: self.mr.lkey,
        }
    }

    fn qp_index(&self, wc: &WorkCompletion) -> Result<usize> {
        self.qps
            .iter()
            .position(|qp| qp.qp_num == wc.qp_num)
            .with_context(|| format!("a completion of unknown QP {}", wc.qp_num))
    }

    fn now(&mut self) -> u64 {
        self.ctx.device().now_ns()
    }
}

fn check(wc: &WorkCompletion) -> Result<()> {
    ensure!(
        wc.is_success(),
        "wr_id {} completed {} (QP {})",
        wc.wr_id,
        wc.status,
        wc.qp_num
    );
    Ok(())
}

/// Two hosts, `qps` connected QP pairs, each with a `size`-byte buffer.
fn connect(config: &PerfConfig, size: u64) -> Result<(ModelCluster, Side, Side)> {
    let cluster = ModelCluster::new(2, config.seed, Default::default());
    let depth = config.tx_depth.max(1);
    let cap = QpCap {
        max_send_wr: depth,
        max_recv_wr: depth,
        max_send_sge: 1,
        max_recv_sge: 1,
        max_inline_data: 0,
    };
    let buf_len = size.max(8);
    let per_qp = 2 * buf_len;
    let all =
        access::LOCAL_WRITE | access::REMOTE_WRITE | access::REMOTE_READ | access::REMOTE_ATOMIC;
    let open = |n: u8| -> Result<Side> {
        let mut ctx = Context::open(cluster.device(n))?;
        let pd = ctx.alloc_pd()?;
        let cq = ctx.create_cq((2 * depth * config.qps).min(1 << 16))?;
        let region = ctx.alloc(per_qp * u64::from(config.qps))?;
        let mr = ctx.reg_mr(pd, region, per_qp * u64::from(config.qps), all)?;
        let qps = (0..config.qps)
            .map(|_| ctx.create_qp(pd, cq, cq, cap))
            .collect::<Result<Vec<_>, _>>()?;
        let bufs = (0..u64::from(config.qps))
            .map(|q| region + q * per_qp)
            .collect();
        let outgoing = (0..u64::from(config.qps))
            .map(|q| region + q * per_qp + buf_len)
            .collect();
        Ok(Side {
            ctx,
            cq,
            qps,
            bufs,
            outgoing,
            mr,
            unreaped: 0,
        })
    };
    let (mut a, mut b) = (open(1)?, open(2)?);
    let a_qpns: Vec<u32> = a.qps.iter().map(|q| q.qp_num).collect();
    let b_qpns: Vec<u32> = b.qps.iter().map(|q| q.qp_num).collect();
    for (side, peer, peer_qpns) in [(&mut a, 2u8, &b_qpns), (&mut b, 1u8, &a_qpns)] {
        for (qp, &dest) in side.qps.clone().into_iter().zip(peer_qpns.iter()) {
            let attr = QpAttr {
                path_mtu: config.mtu,
                qp_access_flags: all,
                dest_qp_num: dest,
                ah: Some(AddressVector {
                    dmac: host_mac(peer),
                    dgid: host_ip(peer),
                    dscp: 26,
                    udp_src_port: 0xC000 | dest as u16,
                }),
                ..QpAttr::default()
            };
            side.ctx.connect_rc(qp, &attr)?;
        }
    }
    Ok((cluster, a, b))
}

/// Runs the test at every size of `config`.
pub fn run(config: &PerfConfig) -> Result<PerfRun> {
    ensure!(config.qps >= 1, "at least one QP (-q)");
    ensure!(config.iterations >= 1, "at least one iteration (-n)");
    config
        .sizes
        .iter()
        .map(|&size| {
            if config.test == PerfTest::AtomicBw && size != 8 {
                bail!("atomics move 8 bytes (-s 8)");
            }
            if size > 1 << 31 {
                bail!("{size} bytes is more than a message carries (2^31)");
            }
            if config.test.is_latency() {
                latency(config, size).map(|(row, stats)| (PerfRow::Lat(row), stats))
            } else {
                bandwidth(config, size).map(|(row, stats)| (PerfRow::Bw(row), stats))
            }
        })
        .collect::<Result<Vec<_>>>()
        .map(|rows| {
            let (rows, stats) = rows.into_iter().unzip();
            PerfRun { rows, stats }
        })
}

fn stats(a: &mut Side, b: &mut Side) -> HostStats {
    [a.ctx.counters(), b.ctx.counters()]
}

fn bandwidth(config: &PerfConfig, size: u64) -> Result<(BwRow, HostStats)> {
    let (_cluster, mut a, mut b) = connect(config, size)?;
    let qps = a.qps.len();
    let depth = u64::from(config.tx_depth.max(1));
    let n = config.iterations;
    let (mut posted, mut completed) = (vec![0u64; qps], vec![0u64; qps]);
    let (mut recv_posted, mut recv_done) = (vec![0u64; qps], vec![0u64; qps]);
    let mut times = Vec::with_capacity((n * qps as u64) as usize);
    let start = a.now();
    let deadline = start + ROW_TIMEOUT_NS;
    while times.len() < (n * qps as u64) as usize {
        if config.test == PerfTest::SendBw {
            for q in 0..qps {
                while recv_posted[q] < n && recv_posted[q] - recv_done[q] < depth {
                    let wr = RecvWr {
                        wr_id: recv_posted[q],
                        sg_list: vec![b.sge(q, size)],
                    };
                    b.ctx.post_recv(b.qps[q], &wr)?;
                    recv_posted[q] += 1;
                }
            }
        }
        for q in 0..qps {
            while posted[q] < n && posted[q] - completed[q] < depth {
                let (remote_addr, rkey) = (b.bufs[q], b.mr.rkey);
                let opcode = match config.test {
                    PerfTest::WriteBw => Opcode::RdmaWrite { remote_addr, rkey },
                    PerfTest::ReadBw => Opcode::RdmaRead { remote_addr, rkey },
                    PerfTest::SendBw => Opcode::Send,
                    _ => Opcode::FetchAdd {
                        remote_addr,
                        rkey,
                        add: 1,
                    },
                };
                let wr = SendWr {
                    wr_id: posted[q],
                    opcode,
                    sg_list: vec![a.sge(q, size)],
                    signaled: true,
                    solicited: false,
                    fence: false,
                    inline: false,
                };
                a.ctx.post_send(a.qps[q], &wr)?;
                posted[q] += 1;
            }
        }
        let sent = a.ctx.poll_cq(a.cq, 64)?;
        for wc in &sent {
            check(wc)?;
            completed[a.qp_index(wc)?] += 1;
            times.push(a.now());
        }
        let received = if config.test == PerfTest::SendBw {
            b.ctx.poll_cq(b.cq, 64)?
        } else {
            Vec::new()
        };
        for wc in &received {
            check(wc)?;
            recv_done[b.qp_index(wc)?] += 1;
        }
        if sent.is_empty() && received.is_empty() {
            a.ctx.device().service();
        }
        ensure!(
            a.now() < deadline,
            "the test did not finish in simulated time"
        );
    }
    let elapsed_ns = (*times.last().expect("at least one completion") - start).max(1) as f64;
    let messages = times.len() as f64;
    let window = (depth as usize).min(times.len() - 1).max(1);
    let best_window_ns = times
        .windows(window + 1)
        .map(|w| w[window] - w[0])
        .min()
        .unwrap_or(elapsed_ns as u64)
        .max(1) as f64;
    let bits = 8.0 * size as f64;
    let transfer = match config.test {
        PerfTest::WriteBw => Some(Transfer::Write),
        PerfTest::ReadBw => Some(Transfer::Read),
        PerfTest::SendBw => Some(Transfer::Send),
        _ => None,
    };
    let bound_gbps = transfer.map(|t| goodput_bound_gbps(t, size, config.mtu, false, LINK_GBPS));
    let row = BwRow {
        test: config.test,
        bytes: size,
        iterations: n,
        bw_peak_gbps: (bits * window as f64 / best_window_ns).max(bits * messages / elapsed_ns),
        bw_avg_gbps: bits * messages / elapsed_ns,
        msg_rate_mpps: messages / elapsed_ns * 1e3,
        bound_gbps,
        bound_mpps: bound_gbps.map(|g| g * 1e3 / bits),
    };
    Ok((row, stats(&mut a, &mut b)))
}

fn latency(config: &PerfConfig, size: u64) -> Result<(LatRow, HostStats)> {
    let config = PerfConfig {
        qps: 1,
        ..config.clone()
    };
    let (_cluster, mut a, mut b) = connect(&config, size)?;
    let mut samples = Vec::with_capacity(config.iterations as usize);
    for i in 0..config.iterations {
        let sample = match config.test {
            PerfTest::ReadLat => {
                let start = a.now();
                let wr = SendWr {
                    wr_id: i,
                    opcode: Opcode::RdmaRead {
                        remote_addr: b.bufs[0],
                        rkey: b.mr.rkey,
                    },
                    sg_list: vec![a.sge(0, size)],
                    signaled: true,
                    solicited: false,
                    fence: false,
                    inline: false,
                };
                a.ctx.post_send(a.qps[0], &wr)?;
                check(&a.ctx.wait_cq(a.cq, 1, ROW_TIMEOUT_NS)?[0])?;
                a.now() - start
            }
            _ => {
                let start = a.now();
                ping(&config, &mut a, &mut b, i, size)?;
                ping(&config, &mut b, &mut a, i, size)?;
                let sample = (a.now() - start) / 2;
                // The senders' CQEs come after the sample has ended.
                for side in [&mut a, &mut b] {
                    while side.unreaped > 0 {
                        reap(side)?;
                        side.ctx.device().service();
                    }
                }
                sample
            }
        };
        samples.push(sample as f64 / 1e3);
    }
    let row = latency_row(config.test, size, samples);
    Ok((row, stats(&mut a, &mut b)))
}

/// Polls `side`'s CQ once: its send CQEs are reaped; returns whether a
/// receive completed.
fn reap(side: &mut Side) -> Result<bool> {
    let mut received = false;
    for wc in side.ctx.poll_cq(side.cq, 4)? {
        check(&wc)?;
        if wc.opcode.starts_with("RECV") {
            received = true;
        } else {
            side.unreaped -= 1;
        }
    }
    Ok(received)
}

/// One message of a ping-pong from `from` to `to`, returning as soon as
/// `to` sees it arrive (the sender's CQE is reaped later).
fn ping(config: &PerfConfig, from: &mut Side, to: &mut Side, i: u64, size: u64) -> Result<()> {
    let deadline = from.now() + ROW_TIMEOUT_NS;
    let mark = (i % 255 + 1) as u8;
    let write = config.test == PerfTest::WriteLat;
    if write {
        from.ctx.write(from.outgoing[0] + size - 1, &[mark])?;
    } else {
        let wr = RecvWr {
            wr_id: i,
            sg_list: vec![to.sge(0, size)],
        };
        to.ctx.post_recv(to.qps[0], &wr)?;
    }
    let opcode = if write {
        Opcode::RdmaWrite {
            remote_addr: to.bufs[0],
            rkey: to.mr.rkey,
        }
    } else {
        Opcode::Send
    };
    let wr = SendWr {
        wr_id: i,
        opcode,
        sg_list: vec![Sge {
            addr: from.outgoing[0],
            length: size as u32,
            lkey: from.mr.lkey,
        }],
        signaled: true,
        solicited: false,
        fence: false,
        inline: false,
    };
    from.ctx.post_send(from.qps[0], &wr)?;
    from.unreaped += 1;
    loop {
        ensure!(
            from.now() < deadline,
            "a ping did not arrive in simulated time"
        );
        let arrived = if write {
            to.ctx.read(to.bufs[0] + size - 1, 1)?[0] == mark
        } else {
            reap(to)?
        };
        if arrived {
            return Ok(());
        }
        to.ctx.device().service();
    }
}

fn latency_row(test: PerfTest, bytes: u64, mut us: Vec<f64>) -> LatRow {
    us.sort_by(f64::total_cmp);
    let n = us.len();
    let avg = us.iter().sum::<f64>() / n as f64;
    let var = us.iter().map(|t| (t - avg).powi(2)).sum::<f64>() / n as f64;
    let pct = |p: f64| us[(((n as f64) * p).ceil() as usize).clamp(1, n) - 1];
    LatRow {
        test,
        bytes,
        iterations: n as u64,
        t_min_us: us[0],
        t_max_us: us[n - 1],
        t_typical_us: us[n / 2],
        t_avg_us: avg,
        t_stdev_us: var.sqrt(),
        t_99_us: pct(0.99),
        t_999_us: pct(0.999),
    }
}

/// `ethtool -S`'s layout, one block per host.
pub fn render_stats(stats: &HostStats) -> String {
    let mut out = String::new();
    for (host, counters) in stats.iter().enumerate() {
        out += &format!("host {} NIC statistics:\n", host + 1);
        for (name, value) in counters {
            out += &format!("     {name}: {value}\n");
        }
    }
    out
}

const RULE: &str =
    "---------------------------------------------------------------------------------------";

/// perftest's table: a header, one line per row, a closing rule.
pub fn render(rows: &[PerfRow], report_gbits: bool) -> String {
    let mut out = String::new();
    let unit = if report_gbits { "Gb/sec" } else { "MB/sec" };
    let bw = |gbps: f64| if report_gbits { gbps } else { gbps * 1e3 / 8.0 };
    for (i, row) in rows.iter().enumerate() {
        match row {
            PerfRow::Bw(r) => {
                if i == 0 {
                    out += &format!(
                        "{RULE}\n #bytes     #iterations    BW peak[{unit}]    BW average[{unit}]   MsgRate[Mpps]\n"
                    );
                }
                out += &format!(
                    " {:<10} {:<10}       {:<16.2}   {:<16.2}     {:.6}\n",
                    r.bytes,
                    r.iterations,
                    bw(r.bw_peak_gbps),
                    bw(r.bw_avg_gbps),
                    r.msg_rate_mpps
                );
            }
            PerfRow::Lat(r) => {
                if i == 0 {
                    out += &format!(
                        "{RULE}\n #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec]\n"
                    );
                }
                out += &format!(
                    " {:<7}{:<10}     {:<10.2}     {:<10.2}   {:<10.2}       {:<10.2}     {:<10.2}      {:<10.2}             {:.2}\n",
                    r.bytes, r.iterations, r.t_min_us, r.t_max_us, r.t_typical_us, r.t_avg_us, r.t_stdev_us, r.t_99_us, r.t_999_us
                );
            }
        }
    }
    out += RULE;
    out += "\n";
    out
}
