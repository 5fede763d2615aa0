//! Two-NIC RDMA scenarios over the simulated fabric: node A posts a
//! workload on `qps` connected QPs to node B, the fabric loses, duplicates,
//! reorders and corrupts frames as configured, and at the end every
//! completion and every byte of both hosts' buffers is compared with what a
//! straightforward sequential execution of the same verbs predicts.

use crate::bound::{goodput_bound_gbps, Transfer};
use anyhow::{bail, Context, Result};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rocenic_fabric::{EcnConfig, Fabric, FaultConfig, LinkConfig, NodeId, SwitchConfig, Time};
use rocenic_model::memory::HostMemory;
use rocenic_model::nic::{Nic, NicConfig};
pub use rocenic_model::node::ScenarioNode;
use rocenic_model::node::NS_PER_CYCLE;
use rocenic_model::verbs::*;
use serde::Serialize;
use std::collections::BTreeMap;
use std::net::IpAddr;
use std::path::Path;

/// The verbs a scenario exercises.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Workload {
    Write,
    Read,
    Send,
    Atomic,
    /// Every verb, chosen per message from the seed.
    Mix,
}

/// What the two NICs of a scenario are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Backend {
    /// Both NICs are the Rust reference model of the transport.
    Model,
    /// NIC B, the responder, is the Verilated responder half of the RTL
    /// core (`responder_path`), scored frame by frame against its shadow
    /// model; NIC A, the requester, is the model. Refuses `--ecn`: a half
    /// has no notification point.
    RtlResponder,
    /// NIC A, the requester, is the Verilated requester half of the RTL
    /// core (`requester_path`), scored frame by frame against its shadow
    /// model; NIC B, the responder, is the model. Refuses `--ecn`.
    RtlRequester,
    /// Both NICs are the whole Verilated NIC (`nic_top`: the core behind
    /// BAR0, one DMA port per direction), each scored by its own shadow
    /// model.
    /// With `--ecn` the cores run DCQCN: CNPs for CE-marked frames, and a
    /// rate per sending QP that the CNPs they receive cut and that paces
    /// its grants, checked bit for bit against the model's integer
    /// reaction point and pacing (the rocenic and paper parameter sets).
    Rtl,
}

impl Backend {
    pub fn name(self) -> &'static str {
        match self {
            Backend::Model => "model",
            Backend::RtlResponder => "rtl-responder",
            Backend::RtlRequester => "rtl-requester",
            Backend::Rtl => "rtl",
        }
    }
}

/// Runs `config` on the NICs `backend` names.
pub fn run_backend(
    backend: Backend,
    config: &ScenarioConfig,
    pcap: Option<&Path>,
) -> Result<Report> {
    match backend {
        Backend::Model => run(config, pcap),
        rtl => run_rtl_backend(rtl, config, pcap),
    }
}

/// An RTL `backend`: one or both NICs Verilated, each behind its shadow.
#[cfg(feature = "rtl")]
fn run_rtl_backend(
    backend: Backend,
    config: &ScenarioConfig,
    pcap: Option<&Path>,
) -> Result<Report> {
    use rocenic_rtl::core_nic::RtlCoreNic;
    use rocenic_rtl::host_dma::HostDmaConfig;
    use rocenic_rtl::nic::RtlNic;
    use rocenic_rtl::node::Node;
    use rocenic_rtl::requester_nic::RtlRequesterNic;
    let refuse_ecn = || {
        if config.ecn {
            bail!("--ecn: only the whole RTL core (--backend rtl) has DCQCN's notification point; its halves have none");
        }
        Ok(())
    };
    match backend {
        Backend::Model => run(config, pcap),
        Backend::RtlResponder => {
            refuse_ecn()?;
            type Core = verilator_sys::ResponderPath;
            let a = Node::<RtlNic<Core>>::Model(Box::new(Nic::new(nic_config(1, config))));
            let b = Node::Rtl(Box::new(RtlNic::<Core>::new(
                nic_config(2, config),
                HostDmaConfig::default(),
            )));
            run_on(backend.name(), a, b, pcap, config, |_, _| {})
        }
        Backend::RtlRequester => {
            refuse_ecn()?;
            type Core = verilator_sys::RequesterPath;
            let a = Node::Rtl(Box::new(RtlRequesterNic::<Core>::new(
                nic_config(1, config),
                HostDmaConfig::default(),
            )));
            let b = Node::<RtlRequesterNic<Core>>::Model(Box::new(Nic::new(nic_config(2, config))));
            run_on(backend.name(), a, b, pcap, config, |_, _| {})
        }
        Backend::Rtl => {
            type Core = verilator_sys::NicTop;
            let node = |n: u8| {
                Node::Rtl(Box::new(RtlCoreNic::<Core>::new(
                    nic_config(n, config),
                    HostDmaConfig::default(),
                )))
            };
            run_on(backend.name(), node(1), node(2), pcap, config, |_, _| {})
        }
    }
}

/// Without the `rtl` feature there is no Verilated core to run.
#[cfg(not(feature = "rtl"))]
fn run_rtl_backend(backend: Backend, _: &ScenarioConfig, _: Option<&Path>) -> Result<Report> {
    bail!(
        "--backend {}: this rocenic was built without the `rtl` feature (no Verilated RTL); rebuild with default features",
        backend.name()
    )
}

#[derive(Clone, Debug, Serialize)]
pub struct ScenarioConfig {
    pub workload: Workload,
    /// Message size in bytes (atomics always move 8).
    pub size: u64,
    /// Messages per QP.
    pub count: u32,
    pub qps: u32,
    pub mtu: u32,
    pub faults: FaultConfig,
    /// Mark data ECT(0), let the switch mark CE and run DCQCN.
    pub ecn: bool,
    /// The rates of NIC A's and NIC B's links, bits per second. A slower
    /// link is the bottleneck: the switch queues what the other NIC sends
    /// towards it, and with `ecn` marks it.
    pub a_link_bps: f64,
    pub b_link_bps: f64,
    pub seed: u64,
    pub ipv6: bool,
    /// Host page size backing the buffers (4 KiB ..= 2 MiB).
    pub page_size: u64,
    /// Local ACK timeout code: 4.096 us * 2^timeout.
    pub timeout: u8,
    pub retry_cnt: u8,
    /// Give up (and fail) when the simulated clock passes this.
    pub time_limit_ns: Time,
}

impl Default for ScenarioConfig {
    fn default() -> Self {
        ScenarioConfig {
            workload: Workload::Write,
            size: 4096,
            count: 16,
            qps: 1,
            mtu: 4096,
            faults: FaultConfig::default(),
            ecn: false,
            a_link_bps: 100e9,
            b_link_bps: 100e9,
            seed: 1,
            ipv6: false,
            page_size: 4096,
            timeout: 8,
            retry_cnt: 7,
            time_limit_ns: 10_000_000_000,
        }
    }
}

/// The outcome of a scenario, as `rocenic sim --json` writes it.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub backend: &'static str,
    /// Core clock cycles (at [`Report::clock_mhz`]) up to the last
    /// completion, when a node is an RTL core.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cycles: Option<u64>,
    /// Cycles the RTL cores were clocked (the harness skips a core's idle
    /// stretches).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub core_active_cycles: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clock_mhz: Option<f64>,
    /// Simulated clock cycles per second of wall time over the exchange:
    /// the simulation's speed, the one figure that varies between runs of
    /// the same seed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cycles_per_second: Option<f64>,
    pub workload: Workload,
    pub messages_posted: u64,
    pub messages_completed: u64,
    /// Every completion arrived once, in order, successfully, and both
    /// hosts' memory equals the prediction.
    pub data_verified: bool,
    /// Frames emitted by the NICs (retransmissions and duplicates included).
    pub frames: u64,
    pub retransmitted_frames: u64,
    /// Message payload bytes moved.
    pub bytes: u64,
    /// Bytes the NICs put on the wire (headers, ICRC, retransmissions).
    pub wire_bytes: u64,
    /// Time of the last completion.
    pub sim_time_ns: Time,
    /// Messages completed per second of simulated time.
    pub messages_per_second: f64,
    pub goodput_gbps: f64,
    /// The link's framing bound for back-to-back messages of this size
    /// ([`crate::bound`]); null for atomics and mixed workloads.
    pub goodput_bound_gbps: Option<f64>,
    /// The first few mismatches, when `data_verified` is false.
    pub mismatches: Vec<String>,
    pub completions_by_status: BTreeMap<String, u64>,
    pub requester: rocenic_model::nic::NicCounters,
    pub responder: rocenic_model::nic::NicCounters,
    /// DCQCN rate cuts at NIC A (the requester) and NIC B: the model's
    /// reaction points, or an RTL core's.
    pub rate_cuts: [u64; 2],
    pub fabric: rocenic_fabric::FabricStats,
}

/// One message of the workload and where its bytes live.
#[derive(Clone, Copy, Debug)]
enum Verb {
    Write,
    WriteImm(u32),
    Read,
    Send,
    SendImm(u32),
    FetchAdd(u64),
    /// `compare` is filled in by the prediction with the value the counter
    /// holds when this message executes, so every swap succeeds.
    CompareSwap {
        compare: u64,
        swap: u64,
    },
}

impl Verb {
    fn consumes_recv(self) -> bool {
        matches!(self, Verb::Send | Verb::SendImm(_) | Verb::WriteImm(_))
    }

    fn is_atomic(self) -> bool {
        matches!(self, Verb::FetchAdd(_) | Verb::CompareSwap { .. })
    }

    fn wc_opcode(self) -> WcOpcode {
        match self {
            Verb::Write | Verb::WriteImm(_) => WcOpcode::RdmaWrite,
            Verb::Read => WcOpcode::RdmaRead,
            Verb::Send | Verb::SendImm(_) => WcOpcode::Send,
            Verb::FetchAdd(_) => WcOpcode::FetchAdd,
            Verb::CompareSwap { .. } => WcOpcode::CompSwap,
        }
    }
}

/// Per-QP buffers on both hosts. Message `i` owns slot `i` of each data
/// buffer and 8 bytes at `8 * i` of the atomic result buffer.
struct QpPlan {
    a_qpn: Qpn,
    b_qpn: Qpn,
    verbs: Vec<Verb>,
    a_data: u64,
    a_atomic: u64,
    b_data: u64,
    b_counter: u64,
    a_lkey: u32,
    a_atomic_lkey: u32,
    b_lkey: u32,
    b_rkey: u32,
    b_counter_rkey: u32,
    /// The messages that take a receive WQE, in order.
    consumers: Vec<usize>,
    /// The next message to post, and the next of `consumers` whose
    /// receive WQE to post: the workload is posted as completions free
    /// room in the QP's queues.
    next_send: usize,
    next_recv: usize,
    sends_done: usize,
    recvs_done: usize,
    /// What the buffers must hold at the end.
    expect_a_data: Vec<u8>,
    expect_a_atomic: Vec<u8>,
    expect_b_data: Vec<u8>,
    expect_b_counter: u64,
}

impl QpPlan {
    /// The send WR of message `i`: its slot of the data buffers, or its 8
    /// bytes of the atomic result buffer and B's counter.
    fn send_wr(&self, i: usize, size: u64) -> SendWr {
        let verb = self.verbs[i];
        let data_sge = Sge {
            addr: self.a_data + i as u64 * size.max(1),
            length: size as u32,
            lkey: self.a_lkey,
        };
        let atomic_sge = Sge {
            addr: self.a_atomic + 8 * i as u64,
            length: 8,
            lkey: self.a_atomic_lkey,
        };
        let remote_addr = self.b_data + i as u64 * size.max(1);
        let rkey = self.b_rkey;
        let (op, sge) = match verb {
            Verb::Write => (SendOp::Write { remote_addr, rkey }, data_sge),
            Verb::WriteImm(imm) => (
                SendOp::WriteWithImm {
                    remote_addr,
                    rkey,
                    imm,
                },
                data_sge,
            ),
            Verb::Read => (SendOp::Read { remote_addr, rkey }, data_sge),
            Verb::Send => (SendOp::Send, data_sge),
            Verb::SendImm(imm) => (SendOp::SendWithImm { imm }, data_sge),
            Verb::FetchAdd(add) => (
                SendOp::FetchAdd {
                    remote_addr: self.b_counter,
                    rkey: self.b_counter_rkey,
                    add,
                },
                atomic_sge,
            ),
            Verb::CompareSwap { compare, swap } => (
                SendOp::CompareSwap {
                    remote_addr: self.b_counter,
                    rkey: self.b_counter_rkey,
                    compare,
                    swap,
                },
                atomic_sge,
            ),
        };
        SendWr {
            wr_id: i as u64,
            op,
            sgl: if size == 0 && !verb.is_atomic() {
                Vec::new()
            } else {
                vec![sge]
            },
            signaled: true,
            solicited: false,
            fence: false,
            inline_data: None,
        }
    }

    /// Posts the next messages while fewer than `window` are outstanding.
    fn post_sends<N: ScenarioNode + ?Sized>(
        &mut self,
        a: &mut N,
        window: usize,
        size: u64,
    ) -> Result<()> {
        while self.next_send < self.verbs.len() && self.next_send - self.sends_done < window {
            let i = self.next_send;
            a.post_send(self.a_qpn, self.send_wr(i, size))
                .with_context(|| format!("post_send of message {i} on QP {}", self.a_qpn))?;
            self.next_send += 1;
        }
        Ok(())
    }

    /// Posts receive WQEs for the next messages that take one, each into
    /// its message's slot, while fewer than `window` are outstanding.
    fn post_recvs<N: ScenarioNode + ?Sized>(
        &mut self,
        b: &mut N,
        window: usize,
        size: u64,
    ) -> Result<()> {
        while self.next_recv < self.consumers.len() && self.next_recv - self.recvs_done < window {
            let i = self.consumers[self.next_recv];
            let wr = RecvWr {
                wr_id: i as u64,
                sgl: vec![Sge {
                    addr: self.b_data + i as u64 * size.max(1),
                    length: size as u32,
                    lkey: self.b_lkey,
                }],
            };
            b.post_recv(self.b_qpn, wr)
                .with_context(|| format!("post_recv of message {i} on QP {}", self.b_qpn))?;
            self.next_recv += 1;
        }
        Ok(())
    }
}

fn mac(n: u8) -> [u8; 6] {
    [0x02, 0, 0, 0, 0, n]
}

fn ip(n: u8, v6: bool) -> IpAddr {
    if v6 {
        IpAddr::from([0xfd00, 0, 0, 0, 0, 0, 0, u16::from(n)])
    } else {
        IpAddr::from([10, 0, 0, n])
    }
}

/// The configuration of NIC number `n` in scenario `config`.
pub fn nic_config(n: u8, config: &ScenarioConfig) -> NicConfig {
    let mut nic_config = NicConfig::new(mac(n), ip(n, config.ipv6));
    nic_config.ecn = config.ecn;
    nic_config.dcqcn.enabled = config.ecn;
    nic_config.line_rate_bps = if n == 1 {
        config.a_link_bps
    } else {
        config.b_link_bps
    };
    nic_config
}

/// Connects `a_qpn` on `a` with `b_qpn` on `b` and brings both to RTS.
pub fn connect(
    a: &mut Nic,
    a_qpn: Qpn,
    b: &mut Nic,
    b_qpn: Qpn,
    config: &ScenarioConfig,
    rng: &mut ChaCha8Rng,
) -> Result<()> {
    let a_psn = rng.gen::<u32>() & 0xFF_FFFF;
    let b_psn = rng.gen::<u32>() & 0xFF_FFFF;
    let address = |nic: &Nic| RemoteAddress {
        mac: nic.config().mac,
        ip: nic.config().ip,
    };
    let (a_address, b_address) = (address(a), address(b));
    // READ / atomic requests in flight: as many as both ends allow.
    let rd_atomic = a.config().max_qp_rd_atom.min(b.config().max_qp_rd_atom);
    for (nic, qpn, remote, peer_qpn, rq_psn, sq_psn) in [
        (&mut *a, a_qpn, b_address, b_qpn, b_psn, a_psn),
        (&mut *b, b_qpn, a_address, a_qpn, a_psn, b_psn),
    ] {
        nic.modify_qp(
            qpn,
            ModifyQp::ToInit {
                access: Access::REMOTE_WRITE | Access::REMOTE_READ | Access::REMOTE_ATOMIC,
                pkey: 0xFFFF,
            },
        )?;
        nic.modify_qp(
            qpn,
            ModifyQp::ToRtr {
                remote,
                dest_qpn: peer_qpn,
                rq_psn,
                path_mtu: config.mtu,
                max_dest_rd_atomic: rd_atomic,
                min_rnr_timer: 1,
            },
        )?;
        nic.modify_qp(
            qpn,
            ModifyQp::ToRts {
                sq_psn,
                timeout: config.timeout,
                retry_cnt: config.retry_cnt,
                rnr_retry: 7,
                max_rd_atomic: rd_atomic,
            },
        )?;
    }
    Ok(())
}

fn random_bytes(rng: &mut ChaCha8Rng, len: u64) -> Vec<u8> {
    let mut v = vec![0; len as usize];
    rng.fill(&mut v[..]);
    v
}

fn choose_verb(workload: Workload, rng: &mut ChaCha8Rng) -> Verb {
    let atomic = |rng: &mut ChaCha8Rng| {
        if rng.gen_bool(0.5) {
            Verb::FetchAdd(rng.gen_range(1..1000))
        } else {
            Verb::CompareSwap {
                compare: 0,
                swap: rng.gen(),
            }
        }
    };
    match workload {
        Workload::Write => Verb::Write,
        Workload::Read => Verb::Read,
        Workload::Send => Verb::Send,
        Workload::Atomic => atomic(rng),
        Workload::Mix => match rng.gen_range(0..6) {
            0 => Verb::Write,
            1 => Verb::WriteImm(rng.gen()),
            2 => Verb::Read,
            3 => Verb::Send,
            4 => Verb::SendImm(rng.gen()),
            _ => atomic(rng),
        },
    }
}

/// Runs a scenario on the reference model. `pcap`, when given, receives
/// every frame as its sender emitted it.
pub fn run(config: &ScenarioConfig, pcap: Option<&Path>) -> Result<Report> {
    run_inspect(config, pcap, |_, _| {})
}

/// [`run`], handing the requester NIC and the responder NIC to `inspect`
/// at the end (their memory, MR tables and QPs, for RTL replays).
pub fn run_inspect(
    config: &ScenarioConfig,
    pcap: Option<&Path>,
    inspect: impl FnOnce(&Nic, &Nic),
) -> Result<Report> {
    let a = Nic::new(nic_config(1, config));
    let b = Nic::new(nic_config(2, config));
    run_on(Backend::Model.name(), a, b, pcap, config, inspect)
}

/// The scenario on two fabric nodes of kind `N` built with
/// [`nic_config`] 1 (the requester, A) and 2 (the responder, B);
/// `backend` names them in the report.
pub fn run_on<N: ScenarioNode>(
    backend: &'static str,
    mut a_node: N,
    mut b_node: N,
    pcap: Option<&Path>,
    config: &ScenarioConfig,
    inspect: impl FnOnce(&N, &N),
) -> Result<Report> {
    if !matches!(config.mtu, 256 | 512 | 1024 | 2048 | 4096) {
        bail!(
            "--mtu must be 256, 512, 1024, 2048 or 4096, not {}",
            config.mtu
        );
    }
    if config.qps == 0 || config.count == 0 {
        bail!("--qps and --count must be at least 1");
    }
    let mut rng = ChaCha8Rng::seed_from_u64(config.seed);
    let (a, b) = (a_node.verbs()?, b_node.verbs()?);
    let slot = config.size.max(1);
    let messages = u64::from(config.count);

    let a_pd = a.alloc_pd();
    let b_pd = b.alloc_pd();
    let a_cq = a.create_cq(config.count * config.qps * 2 + 16);
    let b_cq = b.create_cq(config.count * config.qps * 2 + 16);
    // Each QP keeps up to `window` messages posted (the device's queue
    // depth, e.g. an RTL core's rings) and posts more as they complete.
    let window = config
        .count
        .min(a.config().max_qp_wr)
        .min(b.config().max_qp_wr);
    let caps = QpCaps {
        max_send_wr: window,
        max_recv_wr: window,
        max_sge: 1,
    };
    let window = window as usize;
    let local_rw = Access::LOCAL_WRITE;
    let remote_all =
        Access::LOCAL_WRITE | Access::REMOTE_WRITE | Access::REMOTE_READ | Access::REMOTE_ATOMIC;

    let mut plans: Vec<QpPlan> = Vec::new();
    for _ in 0..config.qps {
        let a_qpn = a.create_qp(a_pd, a_cq, a_cq, caps)?;
        let b_qpn = b.create_qp(b_pd, b_cq, b_cq, caps)?;
        connect(a, a_qpn, b, b_qpn, config, &mut rng)?;

        let data_len = slot * messages;
        let a_data = a.memory_mut().alloc(data_len, config.page_size);
        let a_atomic = a.memory_mut().alloc(8 * messages, config.page_size);
        let b_data = b.memory_mut().alloc(data_len, config.page_size);
        let b_counter = b.memory_mut().alloc(8, config.page_size);
        let a_init = random_bytes(&mut rng, data_len);
        let b_init = random_bytes(&mut rng, data_len);
        let counter_init: u64 = rng.gen();
        a.memory_mut().write_va(a_data, &a_init)?;
        a.memory_mut()
            .write_va(a_atomic, &vec![0; 8 * messages as usize])?;
        b.memory_mut().write_va(b_data, &b_init)?;
        b.memory_mut()
            .write_va(b_counter, &counter_init.to_le_bytes())?;
        let registering = || {
            format!(
                "registering {data_len} bytes for QP {a_qpn} in {} KiB pages (the MTT holds {} pages per NIC; a larger --page-size needs fewer)",
                config.page_size / 1024,
                rocenic_model::mr::DEFAULT_MAX_MTT_ENTRIES
            )
        };
        let a_keys = a
            .reg_mr(a_pd, a_data, data_len, local_rw)
            .with_context(registering)?;
        let a_atomic_keys = a.reg_mr(a_pd, a_atomic, 8 * messages, local_rw)?;
        let b_keys = b
            .reg_mr(b_pd, b_data, data_len, remote_all)
            .with_context(registering)?;
        let b_counter_keys = b.reg_mr(b_pd, b_counter, 8, remote_all)?;

        let verbs: Vec<Verb> = (0..messages)
            .map(|_| choose_verb(config.workload, &mut rng))
            .collect();

        // Predict the end state by executing the verbs one after another.
        let mut expect_a_data = a_init.clone();
        let mut expect_a_atomic = vec![0u8; 8 * messages as usize];
        let mut expect_b_data = b_init.clone();
        let mut counter = counter_init;
        let mut verbs = verbs;
        for (i, verb) in verbs.iter_mut().enumerate() {
            let s = i * slot as usize;
            let range = s..s + config.size as usize;
            match verb {
                Verb::Write | Verb::WriteImm(_) | Verb::Send | Verb::SendImm(_) => {
                    expect_b_data[range.clone()].copy_from_slice(&a_init[range]);
                }
                Verb::Read => {
                    expect_a_data[range.clone()].copy_from_slice(&b_init[range]);
                }
                Verb::FetchAdd(add) => {
                    expect_a_atomic[8 * i..8 * i + 8].copy_from_slice(&counter.to_le_bytes());
                    counter = counter.wrapping_add(*add);
                }
                Verb::CompareSwap { compare, swap } => {
                    expect_a_atomic[8 * i..8 * i + 8].copy_from_slice(&counter.to_le_bytes());
                    *compare = counter;
                    counter = *swap;
                }
            }
        }

        let consumers = (0..verbs.len())
            .filter(|&i| verbs[i].consumes_recv())
            .collect();
        let mut plan = QpPlan {
            a_qpn,
            b_qpn,
            verbs,
            a_data,
            a_atomic,
            b_data,
            b_counter,
            a_lkey: a_keys.lkey,
            a_atomic_lkey: a_atomic_keys.lkey,
            b_lkey: b_keys.lkey,
            b_rkey: b_keys.rkey,
            b_counter_rkey: b_counter_keys.rkey,
            consumers,
            next_send: 0,
            next_recv: 0,
            sends_done: 0,
            recvs_done: 0,
            expect_a_data,
            expect_a_atomic,
            expect_b_data,
            expect_b_counter: counter,
        };
        plan.post_recvs(b, window, config.size)?;
        plan.post_sends(a, window, config.size)?;
        plans.push(plan);
    }

    let switch = SwitchConfig {
        ecn: config.ecn.then(EcnConfig::default),
        ..SwitchConfig::default()
    };
    let link = |rate_bps: f64| LinkConfig {
        rate_bps,
        faults: config.faults.clone(),
        ..LinkConfig::default()
    };
    let link_rate_bps = config.a_link_bps.min(config.b_link_bps);
    let mut fabric = Fabric::try_new(config.seed, switch)?;
    let started = std::time::Instant::now();
    let a_id = fabric.try_add_node(a_node, link(config.a_link_bps))?;
    let b_id = fabric.try_add_node(b_node, link(config.b_link_bps))?;
    let capture = match pcap {
        Some(path) => Some(
            fabric
                .capture_emitted_pcap(path)
                .with_context(|| format!("cannot create {}", path.display()))?,
        ),
        None => None,
    };

    let expected_send_cqes = messages * u64::from(config.qps);
    let expected_recv_cqes: u64 = plans
        .iter()
        .map(|p| p.verbs.iter().filter(|v| v.consumes_recv()).count() as u64)
        .sum();
    let mut send_cqes: BTreeMap<Qpn, Vec<Cqe>> = BTreeMap::new();
    let mut recv_cqes: BTreeMap<Qpn, Vec<Cqe>> = BTreeMap::new();
    let mut last_completion = 0;
    let mut seen = (0u64, 0u64);
    while (seen.0 < expected_send_cqes || seen.1 < expected_recv_cqes)
        && fabric.now() < config.time_limit_ns
    {
        // Run until a completion appears, so its time is exact.
        fabric.run_while(config.time_limit_ns, |f| {
            f.node(a_id).cq_len(a_cq) == 0
                && f.node(b_id).cq_len(b_cq) == 0
                && f.node(a_id).mismatch().is_none()
                && f.node(b_id).mismatch().is_none()
        });
        if fabric.node(a_id).mismatch().is_some() || fabric.node(b_id).mismatch().is_some() {
            break;
        }
        for cqe in poll_all(&mut fabric, a_id, a_cq) {
            seen.0 += 1;
            last_completion = fabric.now();
            if let Some(plan) = plans.iter_mut().find(|p| p.a_qpn == cqe.qpn) {
                plan.sends_done += 1;
                plan.post_sends(fabric.node_mut(a_id), window, config.size)?;
            }
            send_cqes.entry(cqe.qpn).or_default().push(cqe);
        }
        for cqe in poll_all(&mut fabric, b_id, b_cq) {
            seen.1 += 1;
            last_completion = fabric.now();
            if let Some(plan) = plans.iter_mut().find(|p| p.b_qpn == cqe.qpn) {
                plan.recvs_done += 1;
                plan.post_recvs(fabric.node_mut(b_id), window, config.size)?;
            }
            recv_cqes.entry(cqe.qpn).or_default().push(cqe);
        }
    }
    // Let stragglers (duplicates, late ACKs) drain so late corruption
    // would still show in the memory comparison.
    let settle = fabric.now() + 100_000;
    fabric.run_until(settle);
    for cqe in poll_all(&mut fabric, a_id, a_cq) {
        send_cqes.entry(cqe.qpn).or_default().push(cqe);
    }
    for cqe in poll_all(&mut fabric, b_id, b_cq) {
        recv_cqes.entry(cqe.qpn).or_default().push(cqe);
    }

    if let (Some(capture), Some(path)) = (capture, pcap) {
        capture
            .finish()
            .with_context(|| format!("cannot write {}", path.display()))?;
    }

    let mut mismatches = Vec::new();
    // An RTL node's scoreboard: the first difference from its shadow, or
    // what only the end of the run can tell.
    for (name, id) in [("A", a_id), ("B", b_id)] {
        let node = fabric.node_mut(id);
        if let Err(m) = node.finish_check() {
            mismatches.push(format!(
                "NIC {name}: the RTL core differs from its shadow model: {m}"
            ));
        }
    }
    let mut by_status: BTreeMap<String, u64> = BTreeMap::new();
    let mut completed = 0;
    for cqe in send_cqes.values().flatten() {
        *by_status.entry(format!("{:?}", cqe.status)).or_default() += 1;
        if cqe.status == WcStatus::Success {
            completed += 1;
        }
    }
    let (a, b) = (fabric.node(a_id), fabric.node(b_id));
    inspect(a, b);
    for plan in &plans {
        check_plan(plan, config, a, b, &send_cqes, &recv_cqes, &mut mismatches);
    }

    let moved: u64 = plans
        .iter()
        .flat_map(|p| p.verbs.iter())
        .map(|v| if v.is_atomic() { 8 } else { config.size })
        .sum();
    let requester = a.model_view().counters().clone();
    let responder = b.model_view().counters().clone();
    let core_cycles = match (a.core_cycles(), b.core_cycles()) {
        (None, None) => None,
        (x, y) => Some(x.unwrap_or(0).max(y.unwrap_or(0))),
    };
    let stats = fabric.stats().clone();
    let (goodput_gbps, messages_per_second) = if last_completion > 0 {
        let seconds = last_completion as f64 * 1e-9;
        (
            moved as f64 * 8.0 / last_completion as f64,
            completed as f64 / seconds,
        )
    } else {
        (0.0, 0.0)
    };
    let wall = started.elapsed().as_secs_f64();
    let transfer = match config.workload {
        Workload::Write => Some(Transfer::Write),
        Workload::Read => Some(Transfer::Read),
        Workload::Send => Some(Transfer::Send),
        Workload::Atomic | Workload::Mix => None,
    };
    let link_gbps = link_rate_bps / 1e9;
    let goodput_bound_gbps =
        transfer.map(|t| goodput_bound_gbps(t, config.size, config.mtu, config.ipv6, link_gbps));
    mismatches.truncate(20);
    Ok(Report {
        backend,
        cycles: core_cycles.map(|_| last_completion.div_ceil(NS_PER_CYCLE)),
        core_active_cycles: core_cycles,
        clock_mhz: core_cycles.map(|_| 1000.0 / NS_PER_CYCLE as f64),
        cycles_per_second: core_cycles
            .map(|_| fabric.now().div_ceil(NS_PER_CYCLE) as f64 / wall.max(f64::MIN_POSITIVE)),
        workload: config.workload,
        messages_posted: expected_send_cqes,
        messages_completed: completed,
        data_verified: mismatches.is_empty(),
        frames: requester.tx_frames + responder.tx_frames,
        retransmitted_frames: requester.retransmitted_frames + responder.retransmitted_frames,
        bytes: moved,
        wire_bytes: requester.tx_bytes + responder.tx_bytes,
        sim_time_ns: last_completion,
        messages_per_second,
        goodput_gbps,
        goodput_bound_gbps,
        mismatches,
        completions_by_status: by_status,
        requester,
        responder,
        rate_cuts: [a.congestion().rate_cuts, b.congestion().rate_cuts],
        fabric: stats,
    })
}

fn poll_all<N: ScenarioNode>(fabric: &mut Fabric<N>, node: NodeId, cq: CqId) -> Vec<Cqe> {
    fabric.node_mut(node).poll_cq(cq, usize::MAX)
}

fn check_plan<N: ScenarioNode>(
    plan: &QpPlan,
    config: &ScenarioConfig,
    a: &N,
    b: &N,
    send_cqes: &BTreeMap<Qpn, Vec<Cqe>>,
    recv_cqes: &BTreeMap<Qpn, Vec<Cqe>>,
    mismatches: &mut Vec<String>,
) {
    let qp = plan.a_qpn;
    let sends = send_cqes.get(&plan.a_qpn).map_or(&[][..], Vec::as_slice);
    if sends.len() != plan.verbs.len() {
        mismatches.push(format!(
            "QP {qp}: {} send completions for {} messages",
            sends.len(),
            plan.verbs.len()
        ));
    }
    for (i, (cqe, verb)) in sends.iter().zip(&plan.verbs).enumerate() {
        if cqe.wr_id != i as u64
            || cqe.status != WcStatus::Success
            || cqe.opcode != verb.wc_opcode()
        {
            mismatches.push(format!(
                "QP {qp}: completion {i} is wr_id {} {:?} {:?}, expected wr_id {i} Success {:?}",
                cqe.wr_id,
                cqe.status,
                cqe.opcode,
                verb.wc_opcode()
            ));
        }
    }
    let recvs = recv_cqes.get(&plan.b_qpn).map_or(&[][..], Vec::as_slice);
    let consumers: Vec<(usize, Verb)> = plan
        .verbs
        .iter()
        .copied()
        .enumerate()
        .filter(|(_, v)| v.consumes_recv())
        .collect();
    if recvs.len() != consumers.len() {
        mismatches.push(format!(
            "QP {}: {} receive completions for {} messages",
            plan.b_qpn,
            recvs.len(),
            consumers.len()
        ));
    }
    for (cqe, (i, verb)) in recvs.iter().zip(&consumers) {
        let (opcode, imm, len) = match verb {
            Verb::Send => (WcOpcode::Recv, None, config.size as u32),
            Verb::SendImm(imm) => (WcOpcode::Recv, Some(*imm), config.size as u32),
            // RDMA WRITE with immediate reports the length it wrote.
            Verb::WriteImm(imm) => (WcOpcode::RecvRdmaWithImm, Some(*imm), config.size as u32),
            _ => unreachable!("filtered to receive consumers"),
        };
        if cqe.wr_id != *i as u64
            || cqe.status != WcStatus::Success
            || cqe.opcode != opcode
            || cqe.imm != imm
            || cqe.byte_len != len
        {
            mismatches.push(format!(
                "QP {}: receive completion {cqe:?}, expected wr_id {i} {opcode:?} imm {imm:?} len {len}",
                plan.b_qpn
            ));
        }
    }
    compare(
        a.host_memory(),
        plan.a_data,
        &plan.expect_a_data,
        "A data",
        qp,
        mismatches,
    );
    compare(
        a.host_memory(),
        plan.a_atomic,
        &plan.expect_a_atomic,
        "A atomic results",
        qp,
        mismatches,
    );
    compare(
        b.host_memory(),
        plan.b_data,
        &plan.expect_b_data,
        "B data",
        qp,
        mismatches,
    );
    compare(
        b.host_memory(),
        plan.b_counter,
        &plan.expect_b_counter.to_le_bytes(),
        "B atomic counter",
        qp,
        mismatches,
    );
}

fn compare(
    memory: &HostMemory,
    va: u64,
    expect: &[u8],
    what: &str,
    qp: Qpn,
    mismatches: &mut Vec<String>,
) {
    let mut actual = vec![0; expect.len()];
    if let Err(e) = memory.read_va(va, &mut actual) {
        mismatches.push(format!("QP {qp}: {what}: {e}"));
        return;
    }
    if let Some(at) = actual.iter().zip(expect).position(|(x, y)| x != y) {
        mismatches.push(format!(
            "QP {qp}: {what} differs from byte {at} (got {:#04x}, expected {:#04x})",
            actual[at], expect[at]
        ));
    }
}
