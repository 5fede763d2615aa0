//! The Verilated `ResponderDatapath` against the reference model, frame by
//! frame. Two model NICs exchange RDMA WRITEs (and, in the SEND tests,
//! SENDs with and without immediate and WRITEs with immediate into
//! receive WQEs posted to the RTL in the model's order) over the model harness's
//! lossy wire (drop, duplicate, reorder); every frame delivered to the
//! responder NIC is captured and fed to the RTL, which starts from the
//! same QP contexts, MR table, MTT and host memory image (in `HostDma`).
//! Checked: each frame's outcome (verdict, duplicate class, ACK/NAK
//! syndrome, PSN, MSN) equals the model's `check_request` followed by its
//! `write_translation`; the host memory the RTL's DMA writes leave equals
//! the model's byte for byte, with no stray write and exactly the bytes of
//! executed WRITEs written; the DMA port's framing (address, length, keep,
//! first/last) holds; the counters agree. Random backpressure on the frame
//! input, the DMA port and the outcome port. Protection cases (wrong
//! R_Key, stale key variant, wrong PD, MR without remote write, out of
//! bounds, a multi-page WRITE whose whole range overruns the MR): nothing
//! written, NAK remote access error, the QP in ERR (later packets
//! dropped). Receive WQE refusals (buffer one byte short, buffer ending
//! inside a multi-packet SEND, unknown L_Key, L_Key of another PD, MR
//! without local write): NAK invalid request or remote operational error,
//! the WQE completed with LocLenErr / LocProtErr, the rest flushed. Every
//! receive CQE (wr_id, status, opcode, byte_len, immediate) equals the
//! model's, per QP in order. Every response-queue command on `rspq` (ACK,
//! NAK, READ, atomic ACK, drop-reads, flush) equals the operation the
//! model's responder applied (`responder::record_requests`), in order,
//! each frame's accepted before its outcome. READ / atomic runs (READs,
//! CMP_SWAP, FETCH_ADD and WRITEs on the same words, duplicates from loss
//! re-executed or replayed, the atomics' reads served by `HostDma` with
//! its 200-cycle latency) leave host memory as the model's; READ and
//! atomic protection cases (no MR, no QP right, no MR right, out of
//! bounds, misaligned) get the model's NAK and flush the QP to ERR. And
//! the throughput of back-to-back MTU-4096 WRITE and SEND packets.

use crate::harness;
use crate::rtl_common;

use harness::{bring_up, make_side, ConnOpts, Faults, Pair};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rocenic_hdl::codes::{duplicate_class, mtu, request_verdict};
use rocenic_hdl::qp::qp_context_record::QpContextRecord;
use rocenic_hdl::responder::responder_datapath::*;
use rocenic_hdl::responder::response_queue::{
    OP_DROP_READS, OP_FLUSH, OP_PUSH_ACK, OP_PUSH_ATOMIC_ACK, OP_PUSH_NAK, OP_PUSH_READ,
};
use rocenic_model::mr::{MrTable, DEFAULT_MAX_MRS, DEFAULT_MAX_MTT_ENTRIES};
use rocenic_model::responder::{
    record_checks, record_requests, send_placement, write_translation, CheckInput, CheckOutcome,
    DuplicateClass, Verdict,
};
use rocenic_model::response_queue::QueueOp;
use rocenic_model::verbs::{Access, CqId, PdId, Qpn, RecvWr, SendOp, SendWr, Sge};
use rocenic_rtl::dma_ports::DmaReadPorts;
use rocenic_rtl::host_dma::{HostDma, HostDmaConfig};
use rocenic_rtl::mr_config::load_mr_table;
use rocenic_rtl::stream::{AxisInPorts, StreamSource};
use rocenic_wire::RoceFrame;
use rtl_common::dma_write::DmaWriteCheck;
use rtl_common::responder::{model_cqe, post_recvs, read_cqe, write_context, RtlCqe};
use std::collections::{BTreeMap, VecDeque};
use verilator_sys::{ResponderDatapath as Dut, Sim};

/// A responder QP as the RTL must be set up.
#[derive(Clone, Copy, Debug)]
struct RespQp {
    qpn: Qpn,
    pd: PdId,
    mtu: u32,
    epsn: u32,
    rcq: CqId,
    opts: ConnOpts,
}

/// One run's setup: the model pair, the responder's QPs, every buffer on
/// the responder (compared at the end).
struct Setup {
    pair: Pair,
    qps: Vec<RespQp>,
    regions: Vec<(u64, u64)>,
    posted: usize,
    /// Receive WQEs posted to the responder, in posting order.
    recvs: Vec<(Qpn, RecvWr)>,
}

impl Setup {
    /// A fresh NIC pair, nothing set up yet.
    fn new(seed: u64) -> Setup {
        Setup {
            pair: Pair::new(seed),
            qps: Vec::new(),
            regions: Vec::new(),
            posted: 0,
            recvs: Vec::new(),
        }
    }
}

const PAGE_SIZES: [u64; 4] = [4096, 16384, 65536, 2 << 20];
const MTUS: [u32; 5] = [256, 512, 1024, 2048, 4096];

/// A connected QP pair, requester on NIC 0, responder on NIC 1.
fn connect(s: &mut Setup, rng: &mut ChaCha8Rng, mtu: u32) -> (Qpn, PdId, Qpn, PdId) {
    connect_with(s, rng, mtu, Access::ALL)
}

/// As [`connect`], the responder QP granting `access`.
fn connect_with(
    s: &mut Setup,
    rng: &mut ChaCha8Rng,
    mtu: u32,
    access: Access,
) -> (Qpn, PdId, Qpn, PdId) {
    let opts = ConnOpts {
        mtu,
        min_rnr_timer: rng.gen_range(0..32),
        // Finite (7 would retry forever): a WRITE with immediate that
        // never finds a receive WQE ends in an error, and the run ends.
        rnr_retry: rng.gen_range(0..7),
        access,
        ..ConnOpts::default()
    };
    let a = make_side(&mut s.pair.nics[0]);
    let b = make_side(&mut s.pair.nics[1]);
    let psn_ab = rng.gen_range(0..1 << 24);
    let psn_ba = rng.gen_range(0..1 << 24);
    bring_up(
        &mut s.pair.nics[0],
        a.qpn,
        1,
        b.qpn,
        (psn_ba, psn_ab),
        &opts,
    );
    bring_up(
        &mut s.pair.nics[1],
        b.qpn,
        0,
        a.qpn,
        (psn_ab, psn_ba),
        &opts,
    );
    s.qps.push(RespQp {
        qpn: b.qpn,
        pd: b.pd,
        mtu,
        epsn: psn_ab,
        rcq: b.rcq,
        opts,
    });
    (a.qpn, a.pd, b.qpn, b.pd)
}

/// A buffer on the responder, registered with `access` in `pd`.
fn target(s: &mut Setup, pd: PdId, len: u64, page: u64, access: Access) -> (u64, u32, u32) {
    let nic = &mut s.pair.nics[1];
    let va = nic.memory_mut().alloc(len, page);
    let keys = nic.reg_mr(pd, va, len, access).expect("register");
    s.regions.push((va, len));
    (va, keys.rkey, keys.lkey)
}

/// A source buffer on the requester with random bytes.
fn source(s: &mut Setup, rng: &mut ChaCha8Rng, pd: PdId, len: u64) -> (u64, u32) {
    let nic = &mut s.pair.nics[0];
    let va = nic.memory_mut().alloc(len.max(1), 4096);
    let data: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
    nic.memory_mut().write_va(va, &data).expect("fill");
    let keys = nic
        .reg_mr(pd, va, len.max(1), Access::LOCAL_WRITE)
        .expect("register");
    (va, keys.lkey)
}

#[allow(clippy::too_many_arguments)]
fn post_write(
    s: &mut Setup,
    a_qpn: Qpn,
    src: (u64, u32),
    len: u32,
    remote_addr: u64,
    rkey: u32,
    imm: Option<u32>,
) {
    let op = match imm {
        Some(imm) => SendOp::WriteWithImm {
            remote_addr,
            rkey,
            imm,
        },
        None => SendOp::Write { remote_addr, rkey },
    };
    post_send(s, a_qpn, src, len, op);
}

/// A receive WQE, to the model now and to the RTL before the replay.
fn post_recv(s: &mut Setup, qpn: Qpn, wr: RecvWr) {
    s.pair.nics[1].post_recv(qpn, wr.clone()).expect("recv");
    s.recvs.push((qpn, wr));
}

/// Any send-queue WR of `len` bytes with `buf` as its one SGE: the
/// source of a SEND or WRITE, the destination of a READ or atomic.
fn post_send(s: &mut Setup, a_qpn: Qpn, buf: (u64, u32), len: u32, op: SendOp) {
    s.posted += 1;
    s.pair.nics[0]
        .post_send(
            a_qpn,
            SendWr {
                wr_id: s.posted as u64,
                op,
                sgl: vec![Sge {
                    addr: buf.0,
                    length: len,
                    lkey: buf.1,
                }],
                signaled: true,
                solicited: false,
                fence: false,
                inline_data: None,
            },
        )
        .expect("post");
}

fn write_len(rng: &mut ChaCha8Rng, max: u32) -> u32 {
    let len = match rng.gen_range(0..10) {
        0 => 0,
        1..=2 => rng.gen_range(1..=200),
        3..=5 => rng.gen_range(200..=9000),
        6..=8 => rng.gen_range(9000..=70_000),
        _ => rng.gen_range(70_000..=1 << 20),
    };
    len.min(max)
}

/// Random WRITEs (with and without immediate) on `n` QPs, and with
/// `protection` one extra QP per protection case.
fn setup(seed: u64, n: usize, bytes_per_qp: u32, protection: bool) -> Setup {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut s = Setup::new(seed);
    for _ in 0..n {
        let mtu = MTUS[rng.gen_range(0..MTUS.len())];
        let (a_qpn, a_pd, b_qpn, b_pd) = connect(&mut s, &mut rng, mtu);
        let page = PAGE_SIZES[rng.gen_range(0..PAGE_SIZES.len())];
        let tlen = (1u64 << 20) + rng.gen_range(0..8192);
        let (tva, rkey, _) = target(&mut s, b_pd, tlen, page, Access::ALL);
        let src = source(&mut s, &mut rng, a_pd, 1 << 20);
        let mut budget = bytes_per_qp;
        let mut imms = 0;
        while budget > 0 {
            let len = write_len(&mut rng, budget.min(1 << 20));
            budget = budget.saturating_sub(len.max(64));
            let off = rng.gen_range(0..=tlen - u64::from(len));
            let imm = rng.gen_bool(0.2).then(|| rng.gen());
            imms += u32::from(imm.is_some());
            post_write(&mut s, a_qpn, src, len, tva + off, rkey, imm);
        }
        // Usually a receive WQE per immediate, sometimes fewer: RNR NAKs
        // and their retries.
        let recvs = if rng.gen_bool(0.7) { imms } else { imms / 2 };
        for i in 0..recvs {
            post_recv(
                &mut s,
                b_qpn,
                RecvWr {
                    wr_id: u64::from(i),
                    sgl: vec![],
                },
            );
        }
    }
    if protection {
        for case in 0..7 {
            let mtu = MTUS[rng.gen_range(0..MTUS.len())];
            // The last case: the QP itself grants no remote write (the
            // checker refuses, before any MR lookup).
            let qp_access = if case == 6 {
                Access(Access::LOCAL_WRITE.0 | Access::REMOTE_READ.0)
            } else {
                Access::ALL
            };
            let (a_qpn, a_pd, _, b_pd) = connect_with(&mut s, &mut rng, mtu, qp_access);
            let src = source(&mut s, &mut rng, a_pd, 1 << 16);
            let len = 20_000u64;
            let (va, rkey, _) = target(&mut s, b_pd, len, 4096, Access::ALL);
            let (bad_rkey, bad_va, wlen) = match case {
                // No MR at that index.
                0 => ((900 << 8) | 7, va, 3000),
                // A stale key variant.
                1 => {
                    let (_, old, old_lkey) = target(&mut s, b_pd, len, 4096, Access::ALL);
                    s.pair.nics[1].rereg_mr(old_lkey).expect("rereg");
                    (old, va + 100, 3000)
                }
                // An MR of another PD.
                2 => {
                    let pd2 = s.pair.nics[1].alloc_pd();
                    let (_, other, _) = target(&mut s, pd2, len, 4096, Access::ALL);
                    (other, va + 100, 3000)
                }
                // No remote write.
                3 => {
                    let access = Access(Access::LOCAL_WRITE.0 | Access::REMOTE_READ.0);
                    let (ro, ro_key, _) = target(&mut s, b_pd, len, 4096, access);
                    (ro_key, ro + 100, 3000)
                }
                // Past the end of the MR, crossing a page.
                4 => (rkey, va + len - 1000, 3000),
                // A multi-packet WRITE whose whole range overruns the MR:
                // refused at its FIRST packet, nothing of it lands.
                5 => (rkey, va + len - 2 * u64::from(mtu), 3 * mtu + 100),
                _ => (rkey, va, 3000),
            };
            post_write(&mut s, a_qpn, src, wlen, bad_va, bad_rkey, None);
            // Behind it, a good WRITE: dropped by the responder in ERR if
            // the requester sends it before the NAK arrives.
            post_write(&mut s, a_qpn, src, 5000, va, rkey, None);
        }
    }
    s
}

/// A responder QP's receive queue as the model's responder uses it: the
/// posted WQEs and the one of the SEND in progress.
#[derive(Default)]
struct RqMirror {
    posted: VecDeque<RecvWr>,
    in_progress: Option<RecvWr>,
}

/// What the RTL must say of one frame: the model's check, then its WRITE
/// translation or SEND placement.
#[derive(Clone, Debug, PartialEq)]
struct Outcome {
    qpn: u64,
    psn: u64,
    opcode: u64,
    verdict: u64,
    dup_class: Option<u64>,
    response: Option<(u64, u64, u64)>,
}

fn expected(
    i: &CheckInput,
    o: &CheckOutcome,
    ops: &[QueueOp],
    f: &RoceFrame,
    pd: PdId,
    mrs: &MrTable,
    rq: &mut RqMirror,
) -> (Outcome, u64, bool) {
    let mut verdict = request_verdict::encode(&o.verdict);
    let dup_class = match o.verdict {
        Verdict::Duplicate(c) => Some(duplicate_class::encode(c)),
        _ => None,
    };
    let mut response = o
        .response
        .map(|r| (u64::from(r.syndrome), u64::from(r.psn), u64::from(r.msn)));
    let mut written = 0;
    let mut fault = false;
    if let Verdict::Write {
        va,
        rkey,
        len,
        whole_len,
        take_wqe,
        ..
    } = o.verdict
    {
        match write_translation(mrs, pd, rkey, va, len, whole_len) {
            Ok(_) => {
                written = u64::from(len);
                if take_wqe {
                    rq.posted.pop_front();
                }
            }
            Err(_) => {
                fault = true;
                verdict = request_verdict::REMOTE_ACCESS;
                response = Some((0x62, u64::from(f.bth.psn), u64::from(i.msn)));
            }
        }
    }
    // A READ or atomic (new, or a duplicate READ re-executed) whose range
    // the model refused: its remote access NAK is the outcome's, the QP
    // went to ERR. An executed atomic writes its 8 bytes.
    let refused = ops.iter().find_map(|op| match op {
        QueueOp::PushNak { syndrome, psn, msn } if *syndrome == 0x62 => Some((*psn, *msn)),
        _ => None,
    });
    let read_or_atomic = matches!(
        o.verdict,
        Verdict::Read { .. }
            | Verdict::Atomic
            | Verdict::Duplicate(DuplicateClass::Read)
            | Verdict::Duplicate(DuplicateClass::Atomic)
    );
    if read_or_atomic {
        if let Some((p, m)) = refused {
            fault = true;
            verdict = request_verdict::REMOTE_ACCESS;
            response = Some((0x62, u64::from(p), u64::from(m)));
        } else if o.verdict == Verdict::Atomic {
            written = 8;
        }
    }
    if let Verdict::Send {
        offset,
        take_wqe,
        last,
        ..
    } = o.verdict
    {
        let wr = if take_wqe {
            rq.posted
                .pop_front()
                .expect("the checker saw a receive WQE")
        } else {
            rq.in_progress.take().expect("a SEND in progress")
        };
        let len = f.payload.len() as u64;
        match send_placement(mrs, pd, &wr.sgl, offset, len) {
            Ok(_) => {
                written = len;
                if !last {
                    rq.in_progress = Some(wr);
                }
            }
            Err((_, nak)) => {
                fault = true;
                verdict = request_verdict::RECEIVE_FAULT;
                response = Some((u64::from(nak), u64::from(f.bth.psn), u64::from(i.msn)));
            }
        }
    }
    (
        Outcome {
            qpn: u64::from(f.bth.dest_qp),
            psn: u64::from(f.bth.psn),
            opcode: u64::from(f.bth.opcode),
            verdict,
            dup_class,
            response,
        },
        written,
        fault,
    )
}

/// The block out of reset, its MR table swept.
fn fresh() -> Sim<Dut> {
    let mut sim = Sim::<Dut>::new().expect("responder_datapath is exported");
    sim.set_bit(Dut::RESET, true);
    sim.tick();
    sim.set_bit(Dut::RESET, false);
    for _ in 0..=DEFAULT_MAX_MRS + 4 {
        sim.eval();
        if sim.get_bit(Dut::CFG_READY) {
            return sim;
        }
        sim.tick();
    }
    panic!("MR table sweep did not finish");
}

/// The model's MR table and MTT into the block, one entry of each a cycle.
fn load_mrs(sim: &mut Sim<Dut>, t: &MrTable) {
    assert_eq!(t.mtt().len(), DEFAULT_MAX_MTT_ENTRIES);
    load_mr_table(sim, t, DEFAULT_MAX_MRS, DEFAULT_MAX_MTT_ENTRIES)
        .expect("the datapath passes the MR port through");
}

/// Each responder QP's context through the host port, as the driver's
/// `modify_qp` would leave it (RTS, expected PSN, MSN 0).
fn load_qps(sim: &mut Sim<Dut>, qps: &[RespQp]) {
    for q in qps {
        let record = QpContextRecord {
            state: 3,
            access: u32::from(q.opts.access.0 & 0xF),
            path_mtu: mtu::iba_code(q.mtu).expect("MTU"),
            pkey: 0xFFFF,
            pd: q.pd.0,
            rq_epsn: q.epsn,
            max_dest_rd_atomic: 16,
            min_rnr_timer: u32::from(q.opts.min_rnr_timer),
            ..QpContextRecord::default()
        };
        write_context(sim, q.qpn, &record);
    }
}

struct Replay {
    outcomes: Vec<Outcome>,
    cycles: u64,
    dma_beats: u64,
    dma_bytes: u64,
    rx_beats: u64,
    /// Cycle of the first rx beat moved and of the last DMA beat.
    first_rx: Option<u64>,
    last_rx: u64,
    first_dma: Option<u64>,
    last_dma: u64,
    rx_stalls: u64,
    stats: Vec<u64>,
    /// Receive CQEs in the order the RTL gave them.
    cqes: Vec<RtlCqe>,
    /// Response-queue commands in the order the RTL gave them.
    commands: Vec<Command>,
    /// Commands accepted before each outcome's cycle: a frame's commands
    /// are all taken before its outcome is presented.
    commands_before: Vec<usize>,
    dma_reads: u64,
}

/// A response-queue command: qpn, op, psn, syndrome, msn, value, R_Key,
/// length; fields the op does not use are 0.
type Command = (u64, u64, u64, u64, u64, u64, u64, u64);

/// The model's response-queue operation as the RTL's command.
fn model_command(qpn: u32, op: &QueueOp) -> Command {
    let q = u64::from(qpn);
    match *op {
        QueueOp::PushAck { psn, msn } => (q, OP_PUSH_ACK, psn.into(), 0, msn.into(), 0, 0, 0),
        QueueOp::PushNak { syndrome, psn, msn } => (
            q,
            OP_PUSH_NAK,
            psn.into(),
            syndrome.into(),
            msn.into(),
            0,
            0,
            0,
        ),
        QueueOp::PushAtomicAck { psn, orig, msn } => {
            (q, OP_PUSH_ATOMIC_ACK, psn.into(), 0, msn.into(), orig, 0, 0)
        }
        QueueOp::PushRead {
            psn,
            va,
            rkey,
            len,
            msn,
        } => (
            q,
            OP_PUSH_READ,
            psn.into(),
            0,
            msn.into(),
            va,
            rkey.into(),
            len.into(),
        ),
        QueueOp::DropReads { first_psn, npsn } => {
            (q, OP_DROP_READS, first_psn.into(), 0, 0, 0, 0, npsn.into())
        }
        QueueOp::FlushToError => (q, OP_FLUSH, 0, 0, 0, 0, 0, 0),
        QueueOp::Pop { .. } => panic!("a transmit opportunity inside a request"),
    }
}

/// The command on the RTL's `rspq` port now.
fn rtl_command(sim: &Sim<Dut>) -> Command {
    let q = sim.get_u64(Dut::RSPQ_QPN);
    let op = sim.get_u64(Dut::RSPQ_OP);
    let psn = sim.get_u64(Dut::RSPQ_PSN);
    let msn = sim.get_u64(Dut::RSPQ_MSN);
    let value = sim.get_u64(Dut::RSPQ_VALUE);
    let len = sim.get_u64(Dut::RSPQ_LEN);
    match op {
        OP_PUSH_ACK => (q, op, psn, 0, msn, 0, 0, 0),
        OP_PUSH_NAK => (q, op, psn, sim.get_u64(Dut::RSPQ_SYNDROME), msn, 0, 0, 0),
        OP_PUSH_ATOMIC_ACK => (q, op, psn, 0, msn, value, 0, 0),
        OP_PUSH_READ => (q, op, psn, 0, msn, value, sim.get_u64(Dut::RSPQ_RKEY), len),
        OP_DROP_READS => (q, op, psn, 0, 0, 0, 0, len),
        _ => (q, op, 0, 0, 0, 0, 0, 0),
    }
}

/// Posts `recvs`, then feeds `frames` to the RTL with the given handshake
/// probabilities (`p_out` also for the CQE stream), writing DMA beats
/// into `host`; `queries`: the RQ queries the model's checks made.
fn replay(
    sim: &mut Sim<Dut>,
    host: &mut HostDma,
    frames: &[Vec<u8>],
    recvs: &[(Qpn, RecvWr)],
    want_queries: usize,
    (p_in, p_dma, p_out): (f64, f64, f64),
    seed: u64,
) -> Replay {
    post_recvs(sim, recvs);
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5eed);
    let rx = AxisInPorts::<Dut>::named("rx").expect("rx ports");
    let atomic_dma = DmaReadPorts::<Dut>::named("atomic_dma").expect("atomic DMA read ports");
    let mut src = StreamSource::new(p_in, seed);
    for f in frames {
        assert!(src.push_frame(f), "seed {seed}: frame fits the stream");
    }
    let mut r = Replay {
        outcomes: Vec::new(),
        cycles: 0,
        dma_beats: 0,
        dma_bytes: 0,
        rx_beats: 0,
        first_rx: None,
        last_rx: 0,
        first_dma: None,
        last_dma: 0,
        rx_stalls: 0,
        stats: Vec::new(),
        cqes: Vec::new(),
        commands: Vec::new(),
        commands_before: Vec::new(),
        dma_reads: 0,
    };
    let mut queries = 0usize;
    let mut dma = DmaWriteCheck::<Dut>::named("dma", seed);
    let mut quiet = 0;
    let limit = 200_000 + 200 * src_beats(frames);
    while r.outcomes.len() < frames.len() || !src.is_idle() || quiet < 300 {
        assert!(
            r.cycles < limit,
            "seed {seed}: no progress ({} of {} outcomes)",
            r.outcomes.len(),
            frames.len()
        );
        src.begin_cycle();
        rx.drive(sim.dut_mut(), src.current());
        let allow = host.write_ready() && (p_dma >= 1.0 || rng.gen_bool(p_dma));
        let dma_ready = dma.drive(sim, host, allow);
        let out_ready = p_out >= 1.0 || rng.gen_bool(p_out);
        sim.set_bit(Dut::OUT_READY, out_ready);
        let cqe_ready = p_out >= 1.0 || rng.gen_bool(p_out);
        sim.set_bit(Dut::CQE_READY, cqe_ready);
        let rspq_ready = p_out >= 1.0 || rng.gen_bool(p_out);
        sim.set_bit(Dut::RSPQ_READY, rspq_ready);
        atomic_dma.drive(sim, host);
        sim.eval();
        let reads_before = host.reads_in_flight();
        let read_taken = atomic_dma.observe(sim, host).expect("atomic DMA read");
        if host.reads_in_flight() > reads_before {
            quiet = 0;
            r.dma_reads += 1;
        }
        let commands_before = r.commands.len();
        if sim.get_bit(Dut::RSPQ_VALID) && rspq_ready {
            quiet = 0;
            r.commands.push(rtl_command(sim));
        }
        let rx_ready = rx.ready(sim.dut());
        if src.current().is_some() && !rx_ready {
            r.rx_stalls += 1;
        }
        let query = sim.get_bit(Dut::RQ_QUERY);
        quiet += 1;
        if let Some(moved) = dma.observe(sim, host, dma_ready) {
            quiet = 0;
            r.dma_beats += 1;
            r.dma_bytes += moved.bytes;
            r.last_dma = r.cycles;
            r.first_dma.get_or_insert(r.cycles);
        }
        if sim.get_bit(Dut::CQE_VALID) && cqe_ready {
            quiet = 0;
            r.cqes.push(read_cqe(sim));
        }
        if sim.get_bit(Dut::OUT_VALID) && out_ready {
            quiet = 0;
            r.commands_before.push(commands_before);
            let response = sim.get_bit(Dut::OUT_RESPONSE_VALID).then(|| {
                (
                    sim.get_u64(Dut::OUT_RESPONSE_SYNDROME),
                    sim.get_u64(Dut::OUT_RESPONSE_PSN),
                    sim.get_u64(Dut::OUT_RESPONSE_MSN),
                )
            });
            let verdict = sim.get_u64(Dut::OUT_VERDICT);
            r.outcomes.push(Outcome {
                qpn: sim.get_u64(Dut::OUT_QPN),
                psn: sim.get_u64(Dut::OUT_PSN),
                opcode: sim.get_u64(Dut::OUT_OPCODE),
                verdict,
                dup_class: (verdict == request_verdict::DUPLICATE)
                    .then(|| sim.get_u64(Dut::OUT_DUP_CLASS)),
                response,
            });
        }
        sim.tick();
        if src.end_cycle(r.cycles, rx_ready).is_some() {
            r.rx_beats += 1;
            r.first_rx.get_or_insert(r.cycles);
            r.last_rx = r.cycles;
        }
        host.clock(read_taken);
        if query {
            queries += 1;
        }
        r.cycles += 1;
    }
    assert!(dma.idle(), "seed {seed}: a write request left open");
    assert_eq!(
        queries, want_queries,
        "seed {seed}: one RQ query per checked request"
    );
    for sel in 0..8 {
        sim.set_u64(Dut::STAT_SELECT, sel);
        sim.eval();
        r.stats.push(sim.get_u64(Dut::STAT_COUNT));
    }
    r
}

fn src_beats(frames: &[Vec<u8>]) -> u64 {
    frames.iter().map(|f| f.len().div_ceil(64) as u64).sum()
}

struct Summary {
    /// Response-queue commands by op.
    commands: BTreeMap<u64, u64>,
    /// QPs flushed to ERR, in order.
    flushed: Vec<u64>,
    dma_reads: u64,
    /// Duplicate READs and atomics.
    dup_reads_atomics: u64,
    frames: usize,
    writes: u64,
    faults: u64,
    receive_faults: u64,
    /// Receive CQEs by (status, opcode).
    cqes: BTreeMap<(u64, u64), u64>,
    bytes: u64,
    cycles: u64,
    verdicts: BTreeMap<u64, u64>,
}

/// Runs the model, replays the responder's frames into the RTL, compares.
/// `corrupt`: the probability that a frame is preceded by a copy with a
/// payload byte flipped, which the parser drops on its ICRC: its payload
/// must be discarded and its outcome say so, the frames around it
/// unaffected.
fn check_run(
    seed: u64,
    mut s: Setup,
    faults: Faults,
    handshakes: (f64, f64, f64),
    corrupt: f64,
) -> Summary {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xC0);
    s.pair.faults = faults;
    s.pair.delivered = Some(Vec::new());
    let image = s.pair.nics[1].memory().clone();
    let (idle, records) = record_requests(|| s.pair.run(20_000_000_000));
    let trace: Vec<(CheckInput, CheckOutcome)> =
        records.iter().map(|r| (r.input, r.outcome)).collect();
    println!(
        "seed {seed}: model idle {idle} at {} ns, {} checks",
        s.pair.now,
        trace.len()
    );
    let frames: Vec<Vec<u8>> = s
        .pair
        .delivered
        .take()
        .unwrap()
        .into_iter()
        .filter(|(to, _)| *to == 1)
        .map(|(_, f)| f)
        .collect();
    assert_eq!(
        frames.len(),
        trace.len(),
        "seed {seed}: every frame at the responder is a checked request"
    );
    let qps: BTreeMap<Qpn, RespQp> = s.qps.iter().map(|q| (q.qpn, *q)).collect();
    let mut mirrors: BTreeMap<Qpn, RqMirror> = BTreeMap::new();
    for (qpn, wr) in &s.recvs {
        mirrors
            .entry(*qpn)
            .or_default()
            .posted
            .push_back(wr.clone());
    }
    let mrs = s.pair.nics[1].mr_table();
    let mut want = Vec::new();
    let mut bytes = 0;
    let mut writes = 0;
    let mut faults_n = 0;
    let mut receive_faults = 0;
    let mut want_commands: Vec<Vec<Command>> = Vec::new();
    for (f, rec) in frames.iter().zip(&records) {
        let (i, o) = (&rec.input, &rec.outcome);
        let frame = RoceFrame::decode(f).expect("a valid frame");
        assert_eq!(
            rec.qpn, frame.bth.dest_qp,
            "seed {seed}: the record is the frame's"
        );
        let q = qps[&frame.bth.dest_qp];
        let rq = mirrors.entry(q.qpn).or_default();
        want_commands.push(
            rec.queue_ops
                .iter()
                .map(|op| model_command(rec.qpn, op))
                .collect(),
        );
        let (outcome, written, fault) = expected(i, o, &rec.queue_ops, &frame, q.pd, mrs, rq);
        bytes += written;
        writes += u64::from((outcome.verdict == 6 || outcome.verdict == 7) && written > 0);
        faults_n += u64::from(fault && outcome.verdict == request_verdict::REMOTE_ACCESS);
        receive_faults += u64::from(fault && outcome.verdict == request_verdict::RECEIVE_FAULT);
        want.push(outcome);
    }
    let queries = trace.len();
    let mut fed = Vec::new();
    let mut fed_want = Vec::new();
    // Commands of the frames up to each fed one.
    let mut fed_commands = Vec::new();
    let mut total_commands = 0;
    let mut dropped = 0;
    for ((f, w), c) in frames.iter().zip(&want).zip(&want_commands) {
        let frame = RoceFrame::decode(f).expect("a valid frame");
        if !frame.payload.is_empty() && rng.gen_bool(corrupt) {
            let mut bad = f.clone();
            let at = f.len() - 4 - usize::from(frame.bth.pad_count) - frame.payload.len();
            bad[at + rng.gen_range(0..frame.payload.len())] ^= 0x40;
            fed.push(bad);
            fed_want.push(Outcome {
                verdict: request_verdict::PARSER_DROP,
                dup_class: None,
                response: None,
                ..w.clone()
            });
            fed_commands.push(total_commands);
            dropped += 1;
        }
        fed.push(f.clone());
        fed_want.push(w.clone());
        total_commands += c.len();
        fed_commands.push(total_commands);
    }
    let (frames, want) = (fed, fed_want);

    let mut sim = fresh();
    load_mrs(&mut sim, mrs);
    load_qps(&mut sim, &s.qps);
    let mut host = HostDma::new(HostDmaConfig::default(), image);
    let r = replay(
        &mut sim, &mut host, &frames, &s.recvs, queries, handshakes, seed,
    );

    for (k, (got, want)) in r.outcomes.iter().zip(&want).enumerate() {
        assert_eq!(
            got, want,
            "seed {seed}: frame {k}: model input {:?} outcome {:?}",
            trace[k].0, trace[k].1
        );
    }
    assert_eq!(r.outcomes.len(), want.len());
    // Every response-queue command the model's responder applied, in
    // order, each frame's before its outcome.
    let want_flat: Vec<Command> = want_commands.iter().flatten().copied().collect();
    for (k, (got, w)) in r.commands.iter().zip(&want_flat).enumerate() {
        assert_eq!(got, w, "seed {seed}: command {k}");
    }
    assert_eq!(r.commands.len(), want_flat.len(), "seed {seed}: commands");
    for (k, (&before, &need)) in r.commands_before.iter().zip(&fed_commands).enumerate() {
        assert!(
            before >= need,
            "seed {seed}: outcome {k} presented before its frame's commands ({before} < {need})"
        );
    }
    let mut commands = BTreeMap::new();
    for c in &r.commands {
        *commands.entry(c.1).or_insert(0) += 1;
    }
    let flushed: Vec<u64> = r
        .commands
        .iter()
        .filter(|c| c.1 == OP_FLUSH)
        .map(|c| c.0)
        .collect();
    assert_eq!(
        r.dma_bytes, bytes,
        "seed {seed}: exactly the executed bytes written"
    );
    let model = s.pair.nics[1].memory();
    for &(va, len) in &s.regions {
        let mut a = vec![0u8; len as usize];
        let mut b = vec![0u8; len as usize];
        model.read_va(va, &mut a).expect("model memory");
        host.memory().read_va(va, &mut b).expect("rtl memory");
        let first = a.iter().zip(&b).position(|(x, y)| x != y);
        assert!(
            first.is_none(),
            "seed {seed}: memory differs at {va:#x} + {:?}",
            first
        );
    }
    assert_eq!(host.memory().stray_writes(), 0, "seed {seed}: stray DMA");
    // Every receive CQE, per QP in the model's order.
    let mut cqes = 0;
    for q in &s.qps {
        let model: Vec<RtlCqe> = s.pair.nics[1]
            .poll_cq(q.rcq, usize::MAX)
            .iter()
            .map(model_cqe)
            .collect();
        let rtl: Vec<RtlCqe> = r
            .cqes
            .iter()
            .filter(|c| c.0 == u64::from(q.qpn))
            .copied()
            .collect();
        assert_eq!(rtl, model, "seed {seed}: receive CQEs of QP {}", q.qpn);
        cqes += model.len();
    }
    assert_eq!(r.cqes.len(), cqes, "seed {seed}: no CQE of another QP");
    assert_eq!(r.stats[STAT_FRAMES as usize], frames.len() as u64);
    assert_eq!(r.stats[STAT_PARSER_DROPS as usize], dropped, "seed {seed}");
    assert_eq!(r.stats[STAT_WRITES as usize], writes, "seed {seed}");
    assert_eq!(r.stats[STAT_MR_FAULTS as usize], faults_n, "seed {seed}");
    assert_eq!(r.stats[STAT_DMA_BEATS as usize], r.dma_beats, "seed {seed}");
    assert_eq!(
        r.stats[STAT_RESPONSES as usize],
        want.iter().filter(|o| o.response.is_some()).count() as u64
    );
    let mut verdicts = BTreeMap::new();
    for o in &want {
        *verdicts.entry(o.verdict).or_insert(0) += 1;
    }
    let mut statuses = BTreeMap::new();
    for c in &r.cqes {
        *statuses.entry((c.2, c.3)).or_insert(0) += 1;
    }
    Summary {
        commands,
        flushed,
        dma_reads: r.dma_reads,
        dup_reads_atomics: want
            .iter()
            .filter(|o| matches!(o.dup_class, Some(1) | Some(2)))
            .count() as u64,
        frames: frames.len(),
        writes,
        faults: faults_n,
        receive_faults,
        cqes: statuses,
        bytes,
        cycles: r.cycles,
        verdicts,
    }
}

const LOSSY: Faults = Faults {
    drop: 0.01,
    duplicate: 0.01,
    reorder: 0.03,
    reorder_ns: 3000,
    ce_mark: 0.0,
};

#[test]
fn writes_over_a_lossy_wire_match_the_model() {
    let mut total_frames = 0;
    let mut verdicts: BTreeMap<u64, u64> = BTreeMap::new();
    for seed in [11u64, 12, 13] {
        let s = setup(seed, 4, 1 << 20, false);
        let sum = check_run(seed, s, LOSSY, (0.8, 0.7, 0.6), 0.02);
        println!(
            "seed {seed}: {} frames, {} WRITE packets executed, {} bytes written, {} cycles, verdicts {:?}",
            sum.frames, sum.writes, sum.bytes, sum.cycles, sum.verdicts
        );
        total_frames += sum.frames;
        for (v, n) in sum.verdicts {
            *verdicts.entry(v).or_insert(0) += n;
        }
    }
    // The runs exercised executed WRITEs, duplicates, sequence NAKs and
    // parser drops.
    for v in [
        request_verdict::OUT_OF_SEQUENCE,
        request_verdict::DUPLICATE,
        request_verdict::WRITE,
        request_verdict::PARSER_DROP,
    ] {
        assert!(
            verdicts.get(&v).copied().unwrap_or(0) > 0,
            "verdict {v} seen: {verdicts:?}"
        );
    }
    println!("{total_frames} frames, verdicts {verdicts:?}");
}

#[test]
fn protection_faults_write_nothing_and_move_the_qp_to_err() {
    for seed in [21u64, 22] {
        let s = setup(seed, 1, 1 << 16, true);
        let faults = if seed == 21 { Faults::default() } else { LOSSY };
        let sum = check_run(seed, s, faults, (0.9, 0.5, 0.5), 0.0);
        println!(
            "seed {seed}: {} frames, {} MR refusals, verdicts {:?}",
            sum.frames, sum.faults, sum.verdicts
        );
        assert!(
            sum.faults >= 6,
            "seed {seed}: every protection case refused once"
        );
    }
}

/// One 512 KiB WRITE (or with `send` a SEND into a receive WQE) at
/// `mtu`, 100 bytes off a 4 KiB page (every 4096-byte packet crosses a
/// page boundary), replayed back to back with no backpressure: (frames,
/// replay).
fn stream(mtu: u32, seed: u64, send: bool) -> (usize, Replay) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut s = Setup::new(seed);
    let (a_qpn, a_pd, _, b_pd) = connect(&mut s, &mut rng, mtu);
    let (va, rkey, lkey) = target(&mut s, b_pd, 1 << 20, 4096, Access::ALL);
    let src = source(&mut s, &mut rng, a_pd, 1 << 20);
    if send {
        let b_qpn = s.qps[0].qpn;
        post_recv(
            &mut s,
            b_qpn,
            RecvWr {
                wr_id: 77,
                sgl: vec![Sge {
                    addr: va + 100,
                    length: 512 << 10,
                    lkey,
                }],
            },
        );
        post_send(&mut s, a_qpn, src, 512 << 10, SendOp::Send);
    } else {
        post_write(&mut s, a_qpn, src, 512 << 10, va + 100, rkey, None);
    }
    s.pair.delivered = Some(Vec::new());
    let image = s.pair.nics[1].memory().clone();
    let (_, trace) = record_checks(|| s.pair.run(1_000_000_000));
    let frames: Vec<Vec<u8>> = s
        .pair
        .delivered
        .take()
        .unwrap()
        .into_iter()
        .filter(|(to, _)| *to == 1)
        .map(|(_, f)| f)
        .collect();
    let mut sim = fresh();
    load_mrs(&mut sim, s.pair.nics[1].mr_table());
    load_qps(&mut sim, &s.qps);
    let mut host = HostDma::new(HostDmaConfig::default(), image);
    let r = replay(
        &mut sim,
        &mut host,
        &frames,
        &s.recvs,
        trace.len(),
        (1.0, 1.0, 1.0),
        seed,
    );
    let mut a = vec![0u8; 512 << 10];
    let mut b = vec![0u8; 512 << 10];
    s.pair.nics[1].memory().read_va(va + 100, &mut a).unwrap();
    host.memory().read_va(va + 100, &mut b).unwrap();
    assert!(a == b, "mtu {mtu}: the message landed");
    assert_eq!(r.dma_bytes, 512 << 10);
    assert!(r
        .outcomes
        .iter()
        .all(|o| o.verdict == if send { 6 } else { 7 }));
    if send {
        assert_eq!(
            r.cqes,
            vec![(u64::from(s.qps[0].qpn), 77, 0, 5, 512 << 10, None)]
        );
    }
    let rx_span = r.last_rx - r.first_rx.unwrap() + 1;
    let dma_span = r.last_dma - r.first_dma.unwrap() + 1;
    println!(
        "MTU {mtu}: {} frames: {} rx beats in {rx_span} cycles ({:.4}/cycle, stalled {} cycles); \
         {} DMA beats ({} bytes) in {dma_span} cycles ({:.4}/cycle); \
         first DMA beat {} cycles after the first rx beat, last {} after the last",
        frames.len(),
        r.rx_beats,
        r.rx_beats as f64 / rx_span as f64,
        r.rx_stalls,
        r.dma_beats,
        r.dma_bytes,
        r.dma_beats as f64 / dma_span as f64,
        r.first_dma.unwrap() - r.first_rx.unwrap(),
        r.last_dma - r.last_rx,
    );
    (frames.len(), r)
}

fn rates(r: &Replay) -> (f64, f64) {
    let rx_span = r.last_rx - r.first_rx.unwrap() + 1;
    let dma_span = r.last_dma - r.first_dma.unwrap() + 1;
    (
        r.rx_beats as f64 / rx_span as f64,
        r.dma_beats as f64 / dma_span as f64,
    )
}

#[test]
fn mtu_4096_writes_stream_at_one_beat_per_cycle() {
    let (frames, r) = stream(4096, 31, false);
    assert_eq!(frames, 128);
    let (rx_rate, dma_rate) = rates(&r);
    // The input waits only while the first packet's whole-range check
    // (one MR beat per page of the message) holds the decisions back.
    assert!(r.rx_stalls < 64, "the input hardly waits");
    assert!(rx_rate > 0.99, "one input beat per cycle");
    assert!(dma_rate > 0.99, "one DMA beat per cycle");
}

/// Small packets are bounded by the one-packet-at-a-time decision: an
/// MTU-256 WRITE packet (5 input beats) takes about 12 cycles.
#[test]
fn mtu_256_writes_are_bounded_by_the_decision() {
    let (frames, r) = stream(256, 32, false);
    assert_eq!(frames, 2048);
    let (rx_rate, _) = rates(&r);
    let per_packet = (r.last_rx - r.first_rx.unwrap() + 1) as f64 / frames as f64;
    println!("MTU 256: {per_packet:.2} cycles per packet");
    assert!(per_packet < 14.0, "{per_packet} cycles per packet");
    assert!(rx_rate > 0.4, "{rx_rate}");
}

/// SENDs (with and without immediate) and WRITEs with immediate on `n`
/// QPs, one receive WQE of one SGE per message (a few bytes spare, or
/// exactly the message), posted in message order; with `rnr` some QPs get
/// only some of their WQEs (RNR NAKs, retries, and a requester that gives
/// up).
fn setup_sends(seed: u64, n: usize, bytes_per_qp: u32, rnr: bool) -> Setup {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut s = Setup::new(seed);
    for _ in 0..n {
        let mtu = MTUS[rng.gen_range(0..MTUS.len())];
        let (a_qpn, a_pd, b_qpn, b_pd) = connect(&mut s, &mut rng, mtu);
        let page = PAGE_SIZES[rng.gen_range(0..PAGE_SIZES.len())];
        let rlen = u64::from(bytes_per_qp) + 16 * 256 + 64;
        let (rva, _, rlkey) = target(&mut s, b_pd, rlen, page, Access::ALL);
        let (wva, wrkey, _) = target(&mut s, b_pd, 1 << 20, 4096, Access::ALL);
        let src = source(&mut s, &mut rng, a_pd, 1 << 20);
        let mut budget = bytes_per_qp;
        let mut at = rng.gen_range(0..64);
        let mut wqes = Vec::new();
        // The ring holds 16 WQEs per QP.
        while budget > 0 && wqes.len() < 16 {
            let len = write_len(&mut rng, budget.min(1 << 20));
            budget = budget.saturating_sub(len.max(64));
            let imm: u32 = rng.gen();
            match rng.gen_range(0..5) {
                0..=1 => post_send(&mut s, a_qpn, src, len, SendOp::Send),
                2..=3 => post_send(&mut s, a_qpn, src, len, SendOp::SendWithImm { imm }),
                _ => {
                    let off = rng.gen_range(0..=(1u64 << 20) - u64::from(len));
                    post_write(&mut s, a_qpn, src, len, wva + off, wrkey, Some(imm));
                }
            }
            let room = len
                + if rng.gen_bool(0.5) {
                    0
                } else {
                    rng.gen_range(1..200)
                };
            wqes.push(RecvWr {
                wr_id: rng.gen(),
                sgl: vec![Sge {
                    addr: rva + at,
                    length: room,
                    lkey: rlkey,
                }],
            });
            at += u64::from(room);
        }
        let keep = if rnr && rng.gen_bool(0.5) {
            wqes.len() / 2
        } else {
            wqes.len()
        };
        for wr in wqes.into_iter().take(keep) {
            post_recv(&mut s, b_qpn, wr);
        }
    }
    s
}

/// Receive WQEs that refuse their SEND, one QP per case, each followed by
/// a good SEND and WQE (flushed when the QP moves to ERR): a buffer one
/// byte short (single packet), a buffer ending in the third packet, an
/// L_Key of no MR, an L_Key of another PD, an MR without local write, and
/// a zero-length SEND into a zero-length buffer (fine) before a short one.
fn setup_receive_faults(seed: u64) -> Setup {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut s = Setup::new(seed);
    for case in 0..6 {
        let mtu = MTUS[rng.gen_range(0..MTUS.len())];
        let (a_qpn, a_pd, b_qpn, b_pd) = connect(&mut s, &mut rng, mtu);
        let src = source(&mut s, &mut rng, a_pd, 1 << 16);
        let (va, _, lkey) = target(&mut s, b_pd, 1 << 16, 4096, Access::ALL);
        let mut sge = |lkey: u32, addr: u64, length: u32| RecvWr {
            wr_id: rng.gen(),
            sgl: vec![Sge { addr, length, lkey }],
        };
        let (wr, len) = match case {
            0 => (sge(lkey, va + 10, 99), 100),
            1 => (sge(lkey, va + 10, 2 * mtu + 5), 4 * mtu),
            2 => (sge((900 << 8) | 7, va, 5000), 3000),
            3 => {
                let pd2 = s.pair.nics[1].alloc_pd();
                let (ova, _, olkey) = target(&mut s, pd2, 8192, 4096, Access::ALL);
                (sge(olkey, ova, 5000), 3000)
            }
            4 => {
                let access = Access(Access::REMOTE_READ.0);
                let (rva, _, rlkey) = target(&mut s, b_pd, 8192, 4096, access);
                (sge(rlkey, rva, 5000), 3000)
            }
            _ => {
                post_send(&mut s, a_qpn, src, 0, SendOp::Send);
                post_recv(&mut s, b_qpn, sge(lkey, va, 0));
                (sge(lkey, va + 100, 0), 1)
            }
        };
        post_send(&mut s, a_qpn, src, len, SendOp::Send);
        post_recv(&mut s, b_qpn, wr);
        let good = sge(lkey, va + 20_000, 5000);
        post_send(&mut s, a_qpn, src, 5000, SendOp::Send);
        post_recv(&mut s, b_qpn, good);
    }
    s
}

#[test]
fn sends_over_a_lossy_wire_match_the_model() {
    let mut verdicts: BTreeMap<u64, u64> = BTreeMap::new();
    let mut cqes: BTreeMap<(u64, u64), u64> = BTreeMap::new();
    for seed in [41u64, 42, 43] {
        let s = setup_sends(seed, 4, 1 << 20, seed != 41);
        let sum = check_run(seed, s, LOSSY, (0.8, 0.7, 0.6), 0.02);
        println!(
            "seed {seed}: {} frames, {} packets placed, {} bytes written, {} cycles, verdicts {:?}, receive CQEs (status, opcode) {:?}",
            sum.frames, sum.writes, sum.bytes, sum.cycles, sum.verdicts, sum.cqes
        );
        for (v, n) in sum.verdicts {
            *verdicts.entry(v).or_insert(0) += n;
        }
        for (c, n) in sum.cqes {
            *cqes.entry(c).or_insert(0) += n;
        }
    }
    // SENDs and WRITEs executed, duplicates, sequence and RNR NAKs; CQEs
    // of SENDs and of WRITEs with immediate.
    for v in [1, 2, 3, 6, 7] {
        assert!(
            verdicts.get(&v).copied().unwrap_or(0) > 0,
            "verdict {v}: {verdicts:?}"
        );
    }
    assert!(cqes.get(&(0, 5)).copied().unwrap_or(0) > 0, "{cqes:?}");
    assert!(cqes.get(&(0, 6)).copied().unwrap_or(0) > 0, "{cqes:?}");
}

#[test]
fn receive_wqe_refusals_complete_with_the_error_and_flush() {
    for seed in [51u64, 52] {
        let s = setup_receive_faults(seed);
        let faults = if seed == 51 { Faults::default() } else { LOSSY };
        let sum = check_run(seed, s, faults, (0.9, 0.5, 0.5), 0.0);
        println!(
            "seed {seed}: {} frames, verdicts {:?}, receive CQEs (status, opcode) {:?}",
            sum.frames, sum.verdicts, sum.cqes
        );
        assert_eq!(
            sum.receive_faults, 6,
            "seed {seed}: every case refused once"
        );
        // LocLenErr, LocProtErr and flushed WQEs.
        for status in [1, 3, 4] {
            assert!(
                sum.cqes.get(&(status, 5)).copied().unwrap_or(0) > 0,
                "{:?}",
                sum.cqes
            );
        }
    }
}

#[test]
fn mtu_4096_sends_stream_at_one_beat_per_cycle() {
    let (frames, r) = stream(4096, 33, true);
    assert_eq!(frames, 128);
    let (rx_rate, dma_rate) = rates(&r);
    let per_packet = (r.last_rx - r.first_rx.unwrap() + 1) as f64 / frames as f64;
    println!("SEND MTU 4096: {per_packet:.2} cycles per packet");
    assert!(r.rx_stalls < 16, "the input hardly waits");
    assert!(rx_rate > 0.99, "one input beat per cycle");
    assert!(dma_rate > 0.99, "one DMA beat per cycle");
}

/// Random READs, CMP_SWAPs, FETCH_ADDs and WRITEs on `n` QPs, the atomics
/// and some WRITEs on the same eight words (so an atomic must see the
/// WRITE before it and the atomic before it); with `protection` one more
/// QP per protection case of a READ or an atomic.
fn setup_reads_atomics(seed: u64, n: usize, ops_per_qp: usize, protection: bool) -> Setup {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut s = Setup::new(seed);
    for _ in 0..n {
        let mtu = MTUS[rng.gen_range(0..MTUS.len())];
        let (a_qpn, a_pd, _, b_pd) = connect(&mut s, &mut rng, mtu);
        let page = PAGE_SIZES[rng.gen_range(0..PAGE_SIZES.len())];
        let tlen = 1u64 << 17;
        let (tva, rkey, _) = target(&mut s, b_pd, tlen, page, Access::ALL);
        let data: Vec<u8> = (0..tlen).map(|_| rng.gen()).collect();
        s.pair.nics[1]
            .memory_mut()
            .write_va(tva, &data)
            .expect("fill");
        let local = source(&mut s, &mut rng, a_pd, 1 << 17);
        let words = tva + rng.gen_range(0..64) * 8;
        for _ in 0..ops_per_qp {
            let word = words + rng.gen_range(0..8) * 8;
            match rng.gen_range(0..10) {
                0..=3 => {
                    let len = write_len(&mut rng, 1 << 16);
                    let off = rng.gen_range(0..=tlen - u64::from(len));
                    let op = SendOp::Read {
                        remote_addr: tva + off,
                        rkey,
                    };
                    post_send(&mut s, a_qpn, local, len, op);
                }
                4..=5 => {
                    // Compare against what is likely there: small numbers
                    // the adds and swaps leave.
                    let op = SendOp::CompareSwap {
                        remote_addr: word,
                        rkey,
                        compare: rng.gen_range(0..4),
                        swap: rng.gen_range(0..4),
                    };
                    post_send(&mut s, a_qpn, local, 8, op);
                }
                6..=7 => {
                    let op = SendOp::FetchAdd {
                        remote_addr: word,
                        rkey,
                        add: rng.gen_range(0..3),
                    };
                    post_send(&mut s, a_qpn, local, 8, op);
                }
                _ => {
                    // Zeroes over the words (the source is random, its
                    // first bytes zeroed here), or a larger WRITE.
                    if rng.gen_bool(0.5) {
                        s.pair.nics[0]
                            .memory_mut()
                            .write_va(local.0, &[0u8; 64])
                            .expect("zero");
                        post_write(&mut s, a_qpn, local, 64, words, rkey, None);
                    } else {
                        let len = write_len(&mut rng, 1 << 16);
                        let off = rng.gen_range(0..=tlen - u64::from(len));
                        post_write(&mut s, a_qpn, local, len, tva + off, rkey, None);
                    }
                }
            }
        }
    }
    if protection {
        for case in 0..9 {
            let mtu = MTUS[rng.gen_range(0..MTUS.len())];
            // Cases 1 and 5: the QP grants no remote read / atomic.
            let qp_access = match case {
                1 => Access(Access::ALL.0 & !Access::REMOTE_READ.0),
                5 => Access(Access::ALL.0 & !Access::REMOTE_ATOMIC.0),
                _ => Access::ALL,
            };
            let (a_qpn, a_pd, _, b_pd) = connect_with(&mut s, &mut rng, mtu, qp_access);
            let local = source(&mut s, &mut rng, a_pd, 1 << 16);
            let len = 20_000u64;
            let (va, rkey, _) = target(&mut s, b_pd, len, 4096, Access::ALL);
            let no_mr = (900 << 8) | 7;
            let read = |remote_addr, rkey| SendOp::Read { remote_addr, rkey };
            let add = |remote_addr, rkey| SendOp::FetchAdd {
                remote_addr,
                rkey,
                add: 1,
            };
            let (op, olen) = match case {
                0 => (read(va, no_mr), 3000),
                1 => (read(va + 8, rkey), 3000),
                2 => {
                    let access = Access(Access::LOCAL_WRITE.0 | Access::REMOTE_WRITE.0);
                    let (wo, wo_key, _) = target(&mut s, b_pd, len, 4096, access);
                    (read(wo + 100, wo_key), 3000)
                }
                3 => (read(va + len - 1000, rkey), 3000),
                4 => (add(va, no_mr), 8),
                5 => (add(va + 64, rkey), 8),
                6 => {
                    let access = Access(Access::ALL.0 & !Access::REMOTE_ATOMIC.0);
                    let (na, na_key, _) = target(&mut s, b_pd, len, 4096, access);
                    (add(na + 64, na_key), 8)
                }
                7 => (add(va + len, rkey), 8),
                _ => (add(va + 4, rkey), 8),
            };
            post_send(&mut s, a_qpn, local, olen, op);
            // Behind it a good READ: dropped by the responder in ERR.
            post_send(&mut s, a_qpn, local, 5000, read(va, rkey));
        }
    }
    s
}

/// READs, atomics and WRITEs over a lossy wire (duplicate READs
/// re-executed, duplicate atomics replayed): outcomes, every response-queue
/// command and host memory as the model's.
#[test]
fn reads_and_atomics_over_a_lossy_wire_match_the_model() {
    let mut commands: BTreeMap<u64, u64> = BTreeMap::new();
    let mut verdicts: BTreeMap<u64, u64> = BTreeMap::new();
    let mut dups = 0;
    for seed in [61u64, 62, 63] {
        let s = setup_reads_atomics(seed, 4, 60, false);
        let lossy = Faults {
            drop: 0.03,
            duplicate: 0.03,
            ..LOSSY
        };
        let sum = check_run(seed, s, lossy, (0.8, 0.7, 0.6), 0.0);
        println!(
            "seed {seed}: {} frames, {} cycles, {} atomic DMA reads, verdicts {:?}, commands {:?}",
            sum.frames, sum.cycles, sum.dma_reads, sum.verdicts, sum.commands
        );
        // One 8-byte DMA read per executed atomic, none for a replayed one.
        assert_eq!(
            Some(&sum.dma_reads),
            sum.verdicts.get(&9),
            "seed {seed}: atomic reads"
        );
        for (v, n) in sum.verdicts {
            *verdicts.entry(v).or_insert(0) += n;
        }
        for (c, n) in sum.commands {
            *commands.entry(c).or_insert(0) += n;
        }
        dups += sum.dup_reads_atomics;
    }
    println!("commands {commands:?}, verdicts {verdicts:?}, duplicate READs / atomics {dups}");
    for op in [
        OP_PUSH_ACK,
        OP_PUSH_NAK,
        OP_PUSH_READ,
        OP_PUSH_ATOMIC_ACK,
        OP_DROP_READS,
    ] {
        assert!(
            commands.get(&op).copied().unwrap_or(0) > 0,
            "command {op}: {commands:?}"
        );
    }
    // READs and atomics executed, and their duplicates.
    for v in [7, 8, 9] {
        assert!(
            verdicts.get(&v).copied().unwrap_or(0) > 0,
            "verdict {v}: {verdicts:?}"
        );
    }
    assert!(dups > 0);
}

/// A READ or atomic refused (no MR, no QP right, no MR right, out of
/// bounds, misaligned): the model's NAK, the QP flushed to ERR, nothing
/// written, the READ behind it dropped.
#[test]
fn read_and_atomic_protection_faults_nak_and_move_the_qp_to_err() {
    for seed in [71u64, 72] {
        let s = setup_reads_atomics(seed, 0, 0, true);
        let faults = if seed == 71 { Faults::default() } else { LOSSY };
        let sum = check_run(seed, s, faults, (0.9, 0.5, 0.5), 0.0);
        println!(
            "seed {seed}: {} frames, verdicts {:?}, commands {:?}, flushed {:?}",
            sum.frames, sum.verdicts, sum.commands, sum.flushed
        );
        let mut flushed = sum.flushed.clone();
        flushed.sort_unstable();
        flushed.dedup();
        assert_eq!(
            flushed.len(),
            9,
            "seed {seed}: every case moved its QP to ERR"
        );
        // The QP's refusals (remote access, invalid request) and the MR's.
        assert!(sum.verdicts.get(&4).copied().unwrap_or(0) >= 1);
        assert!(sum.verdicts.get(&5).copied().unwrap_or(0) >= 8);
        assert_eq!(sum.commands.get(&OP_PUSH_READ), None, "seed {seed}");
        assert_eq!(sum.commands.get(&OP_PUSH_ATOMIC_ACK), None, "seed {seed}");
    }
}
