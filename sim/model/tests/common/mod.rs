//! Test harness: two NICs joined by a direct in-memory wire with latency,
//! serialisation at line rate and seeded drop / duplicate / reorder,
//! driven through the `Endpoint` methods by a small event loop; plus
//! helpers to connect a QP pair and register buffers.
#![allow(dead_code)]

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rocenic_fabric::{Endpoint, Time};
use rocenic_model::nic::{Nic, NicConfig};
use rocenic_model::verbs::*;
use rocenic_wire::RoceFrame;
use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr};

/// Decides the fate of one frame: `true` drops it. Gets the sending side
/// (0 or 1) and the decoded frame.
pub type Filter = Box<dyn FnMut(usize, &RoceFrame) -> bool>;

#[derive(Clone, Copy, Debug, Default)]
pub struct Faults {
    pub drop: f64,
    pub duplicate: f64,
    pub reorder: f64,
    /// Extra delay of a reordered frame, up to this (ns).
    pub reorder_ns: Time,
    /// Probability that an ECN-capable frame arrives marked CE.
    pub ce_mark: f64,
}

pub struct Pair {
    pub nics: [Nic; 2],
    pub now: Time,
    pub latency_ns: Time,
    pub faults: Faults,
    /// Drop every frame a side sends (a dead peer).
    pub mute: [bool; 2],
    pub filter: Option<Filter>,
    /// When set, every frame delivered is also appended here with its
    /// destination side, in delivery order (to replay it elsewhere).
    pub delivered: Option<Vec<(usize, Vec<u8>)>>,
    rng: ChaCha8Rng,
    /// (arrival time, sequence) -> (destination side, frame)
    in_flight: BTreeMap<(Time, u64), (usize, Vec<u8>)>,
    seq: u64,
    busy_until: [Time; 2],
    poke: [bool; 2],
    pub frames_dropped: u64,
    pub frames_duplicated: u64,
}

pub fn mac(i: u8) -> [u8; 6] {
    [0x02, 0, 0, 0, 0, i + 1]
}

pub fn ip(i: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(10, 0, 0, i + 1))
}

impl Pair {
    pub fn new(seed: u64) -> Pair {
        Pair::with_configs(
            seed,
            NicConfig::new(mac(0), ip(0)),
            NicConfig::new(mac(1), ip(1)),
        )
    }

    pub fn with_configs(seed: u64, a: NicConfig, b: NicConfig) -> Pair {
        Pair {
            nics: [Nic::new(a), Nic::new(b)],
            now: 0,
            latency_ns: 500,
            faults: Faults::default(),
            mute: [false; 2],
            filter: None,
            delivered: None,
            rng: ChaCha8Rng::seed_from_u64(seed),
            in_flight: BTreeMap::new(),
            seq: 0,
            busy_until: [0; 2],
            poke: [true; 2],
            frames_dropped: 0,
            frames_duplicated: 0,
        }
    }

    /// Work was posted: let both sides try to transmit.
    pub fn kick(&mut self) {
        self.poke = [true; 2];
    }

    fn send(&mut self, from: usize, mut frame: Vec<u8>) {
        let to = 1 - from;
        if self.mute[from] {
            self.frames_dropped += 1;
            return;
        }
        if let Some(filter) = self.filter.as_mut() {
            if let Ok(f) = RoceFrame::decode(&frame) {
                if filter(from, &f) {
                    self.frames_dropped += 1;
                    return;
                }
            }
        }
        let f = self.faults;
        if f.drop > 0.0 && self.rng.gen_bool(f.drop) {
            self.frames_dropped += 1;
            return;
        }
        if f.ce_mark > 0.0 && self.rng.gen_bool(f.ce_mark) {
            rocenic_wire::mark_ce(&mut frame);
        }
        let mut at = self.now + self.latency_ns;
        if f.reorder > 0.0 && self.rng.gen_bool(f.reorder) {
            at += self.rng.gen_range(1..=f.reorder_ns.max(1));
        }
        if f.duplicate > 0.0 && self.rng.gen_bool(f.duplicate) {
            self.frames_duplicated += 1;
            let later = at + self.rng.gen_range(1..=f.reorder_ns.max(100));
            self.seq += 1;
            self.in_flight
                .insert((later, self.seq), (to, frame.clone()));
        }
        self.seq += 1;
        self.in_flight.insert((at, self.seq), (to, frame));
    }

    /// One event step; false when nothing at all is pending.
    pub fn step(&mut self) -> bool {
        let mut next: Option<Time> = self.in_flight.keys().next().map(|k| k.0);
        let mut consider = |t: Time| next = Some(next.map_or(t, |n: Time| n.min(t)));
        for i in 0..2 {
            if self.poke[i] {
                consider(self.busy_until[i].max(self.now));
            }
            if let Some(d) = self.nics[i].next_deadline() {
                consider(d.max(self.now));
            }
        }
        let Some(t) = next else { return false };
        self.now = self.now.max(t);
        let now = self.now;
        while let Some(entry) = self.in_flight.first_entry() {
            if entry.key().0 > now {
                break;
            }
            let (to, frame) = entry.remove();
            if let Some(log) = self.delivered.as_mut() {
                log.push((to, frame.clone()));
            }
            self.nics[to].receive(now, frame);
            self.poke[to] = true;
        }
        for i in 0..2 {
            if self.nics[i].next_deadline().is_some_and(|d| d <= now) {
                self.nics[i].advance(now);
                self.poke[i] = true;
            }
        }
        for i in 0..2 {
            if self.poke[i] && self.busy_until[i] <= now {
                match self.nics[i].transmit(now) {
                    Some(frame) => {
                        let bits = (frame.len() as f64 + 24.0) * 8.0;
                        let ser = (bits * 1e9 / self.nics[i].config().line_rate_bps).ceil() as Time;
                        self.busy_until[i] = now + ser.max(1);
                        self.send(i, frame);
                    }
                    None => self.poke[i] = false,
                }
            }
        }
        true
    }

    /// Runs until nothing is pending or `limit_ns` of simulated time has
    /// passed since the call; returns whether it went idle.
    pub fn run(&mut self, limit_ns: Time) -> bool {
        let end = self.now + limit_ns;
        self.kick();
        let mut steps = 0u64;
        while self.now <= end {
            if !self.step() {
                return true;
            }
            steps += 1;
            assert!(steps < 50_000_000, "event loop does not converge");
        }
        false
    }

    /// Runs until `done` holds (checked between steps) or the limit.
    pub fn run_until(&mut self, limit_ns: Time, mut done: impl FnMut(&mut Pair) -> bool) -> bool {
        let end = self.now + limit_ns;
        self.kick();
        while self.now <= end {
            if done(self) {
                return true;
            }
            if !self.step() {
                return done(self);
            }
        }
        done(self)
    }
}

/// One side of a connected QP pair.
#[derive(Clone, Copy, Debug)]
pub struct Side {
    pub pd: PdId,
    pub scq: CqId,
    pub rcq: CqId,
    pub qpn: Qpn,
}

#[derive(Clone, Copy, Debug)]
pub struct ConnOpts {
    pub mtu: u32,
    pub timeout: u8,
    pub retry_cnt: u8,
    pub rnr_retry: u8,
    pub min_rnr_timer: u8,
    pub access: Access,
    pub max_rd_atomic: u8,
}

impl Default for ConnOpts {
    fn default() -> Self {
        ConnOpts {
            mtu: 1024,
            // 4.096 us * 2^8 ~ 1 ms
            timeout: 8,
            retry_cnt: 7,
            rnr_retry: 7,
            min_rnr_timer: 1,
            access: Access::ALL,
            max_rd_atomic: 16,
        }
    }
}

pub fn make_side(nic: &mut Nic) -> Side {
    let pd = nic.alloc_pd();
    let scq = nic.create_cq(1 << 16);
    let rcq = nic.create_cq(1 << 16);
    let qpn = nic.create_qp(pd, scq, rcq, QpCaps::default()).unwrap();
    Side { pd, scq, rcq, qpn }
}

/// Brings `qpn` of `nic` to RTS towards (`peer_nic_index`, `dest_qpn`).
pub fn bring_up(nic: &mut Nic, qpn: Qpn, peer: u8, dest_qpn: Qpn, psns: (u32, u32), o: &ConnOpts) {
    nic.modify_qp(
        qpn,
        ModifyQp::ToInit {
            access: o.access,
            pkey: 0xFFFF,
        },
    )
    .unwrap();
    nic.modify_qp(
        qpn,
        ModifyQp::ToRtr {
            remote: RemoteAddress {
                mac: mac(peer),
                ip: ip(peer),
            },
            dest_qpn,
            rq_psn: psns.0,
            path_mtu: o.mtu,
            max_dest_rd_atomic: 16,
            min_rnr_timer: o.min_rnr_timer,
        },
    )
    .unwrap();
    nic.modify_qp(
        qpn,
        ModifyQp::ToRts {
            sq_psn: psns.1,
            timeout: o.timeout,
            retry_cnt: o.retry_cnt,
            rnr_retry: o.rnr_retry,
            max_rd_atomic: o.max_rd_atomic,
        },
    )
    .unwrap();
}

/// A connected QP pair; PSNs start near the 24-bit wrap so every test
/// also crosses it.
pub fn connect(pair: &mut Pair, o: &ConnOpts) -> (Side, Side) {
    let a = make_side(&mut pair.nics[0]);
    let b = make_side(&mut pair.nics[1]);
    let psn_ab = 0xFF_FF00;
    let psn_ba = 0xFF_FFF0;
    bring_up(&mut pair.nics[0], a.qpn, 1, b.qpn, (psn_ba, psn_ab), o);
    bring_up(&mut pair.nics[1], b.qpn, 0, a.qpn, (psn_ab, psn_ba), o);
    (a, b)
}

/// A registered buffer.
#[derive(Clone, Copy, Debug)]
pub struct Buf {
    pub va: u64,
    pub len: u64,
    pub lkey: u32,
    pub rkey: u32,
}

impl Buf {
    pub fn sge(&self, off: u64, len: u32) -> Sge {
        Sge {
            addr: self.va + off,
            length: len,
            lkey: self.lkey,
        }
    }

    /// A WRITE to the start of this (remote) buffer.
    pub fn write_op(&self) -> SendOp {
        SendOp::Write {
            remote_addr: self.va,
            rkey: self.rkey,
        }
    }
}

pub fn buffer(nic: &mut Nic, pd: PdId, len: u64, access: Access) -> Buf {
    let va = nic.memory_mut().alloc(len.max(1), 4096);
    let keys = nic.reg_mr(pd, va, len.max(1), access).unwrap();
    Buf {
        va,
        len,
        lkey: keys.lkey,
        rkey: keys.rkey,
    }
}

pub fn fill(nic: &mut Nic, va: u64, data: &[u8]) {
    nic.memory_mut().write_va(va, data).unwrap();
}

pub fn read(nic: &Nic, va: u64, len: usize) -> Vec<u8> {
    let mut out = vec![0; len];
    nic.memory().read_va(va, &mut out).unwrap();
    out
}

pub fn pattern(seed: u64, len: usize) -> Vec<u8> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut v = vec![0; len];
    rng.fill(&mut v[..]);
    v
}

/// The message verbs (atomics are separate ops).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verb {
    Send,
    SendImm,
    SendInv,
    Write,
    WriteImm,
    Read,
}

impl Verb {
    /// The work request's operation: data moves from `src` to `dst` (the
    /// remote side is `dst`, or `src` for a READ); SEND with invalidate
    /// revokes `inv_rkey`.
    pub fn op(self, src: &Buf, dst: &Buf, inv_rkey: u32, imm: u32) -> SendOp {
        match self {
            Verb::Send => SendOp::Send,
            Verb::SendImm => SendOp::SendWithImm { imm },
            Verb::SendInv => SendOp::SendWithInv { rkey: inv_rkey },
            Verb::Write => SendOp::Write {
                remote_addr: dst.va,
                rkey: dst.rkey,
            },
            Verb::WriteImm => SendOp::WriteWithImm {
                remote_addr: dst.va,
                rkey: dst.rkey,
                imm,
            },
            Verb::Read => SendOp::Read {
                remote_addr: src.va,
                rkey: src.rkey,
            },
        }
    }

    /// Whether the verb consumes a receive WQE at the responder.
    pub fn needs_recv(self) -> bool {
        matches!(
            self,
            Verb::Send | Verb::SendImm | Verb::SendInv | Verb::WriteImm
        )
    }

    /// The receive WQE's SGL for a message to `dst` of up to `len` bytes
    /// (none for WRITE with immediate: its data goes by the RETH).
    pub fn recv_sgl(self, dst: &Buf, len: u64) -> Vec<Sge> {
        if self == Verb::WriteImm {
            Vec::new()
        } else {
            split_sgl(dst, len)
        }
    }

    /// The opcode of the requester's completion.
    pub fn send_opcode(self) -> WcOpcode {
        match self {
            Verb::Send | Verb::SendImm | Verb::SendInv => WcOpcode::Send,
            Verb::Write | Verb::WriteImm => WcOpcode::RdmaWrite,
            Verb::Read => WcOpcode::RdmaRead,
        }
    }

    /// The responder's completion of a `byte_len` message on QP `qpn`
    /// whose receive WQE was `wr_id` (see [`Verb::needs_recv`]), posted
    /// with `imm` and invalidating `inv_rkey` where the verb carries them.
    pub fn recv_cqe(self, wr_id: u64, qpn: Qpn, byte_len: u32, imm: u32, inv_rkey: u32) -> Cqe {
        Cqe {
            wr_id,
            status: WcStatus::Success,
            opcode: if self == Verb::WriteImm {
                WcOpcode::RecvRdmaWithImm
            } else {
                WcOpcode::Recv
            },
            qpn,
            byte_len,
            imm: matches!(self, Verb::SendImm | Verb::WriteImm).then_some(imm),
            invalidated_rkey: (self == Verb::SendInv).then_some(inv_rkey),
        }
    }
}

pub const ALL_VERBS: [Verb; 6] = [
    Verb::Send,
    Verb::SendImm,
    Verb::SendInv,
    Verb::Write,
    Verb::WriteImm,
    Verb::Read,
];

/// One operation of a workload from A to B.
#[derive(Clone, Copy, Debug)]
pub enum Op {
    Message(Verb, u64),
    FetchAdd(u64),
    /// Compare-and-swap whose compare value matches (or not).
    CmpSwap(bool),
}

/// Buffers for a message of `verb` from A to B (READ: B's bytes to A) of
/// `data`, each `slack` bytes longer: the source holds `data`, the
/// destination 0xEE bytes. Returns the source, the destination and the
/// index of the destination's NIC.
pub fn message_buffers(
    pair: &mut Pair,
    a: Side,
    b: Side,
    verb: Verb,
    data: &[u8],
    slack: u64,
) -> (Buf, Buf, usize) {
    let len = data.len() as u64 + slack;
    let (src_side, src_pd, dst_side, dst_pd) = if verb == Verb::Read {
        (1, b.pd, 0, a.pd)
    } else {
        (0, a.pd, 1, b.pd)
    };
    let src = buffer(&mut pair.nics[src_side], src_pd, len, Access::ALL);
    let dst = buffer(&mut pair.nics[dst_side], dst_pd, len, Access::ALL);
    fill(&mut pair.nics[src_side], src.va, data);
    fill(&mut pair.nics[dst_side], dst.va, &vec![0xEE; len as usize]);
    (src, dst, dst_side)
}

/// Splits `[0, len)` of `buf` into up to three SGEs of uneven sizes.
pub fn split_sgl(buf: &Buf, len: u64) -> Vec<Sge> {
    if len == 0 {
        return Vec::new();
    }
    if len < 3 {
        return vec![buf.sge(0, len as u32)];
    }
    let a = len / 3;
    let b = len / 2;
    vec![
        buf.sge(0, a as u32),
        buf.sge(a, (b - a) as u32),
        buf.sge(b, (len - b) as u32),
    ]
}

/// What a posted op must leave behind.
struct Expect {
    wr_id: u64,
    signaled: bool,
    opcode: WcOpcode,
    byte_len: u32,
    /// (side, va, bytes) that must be in memory afterwards.
    memory: Vec<(usize, u64, Vec<u8>)>,
    recv: Option<Cqe>,
}

/// Posts `ops` from A to B (every third unsignaled), runs the pair until
/// idle, and checks memory byte for byte and every completion exactly once
/// and in order. Returns false if the pair did not go idle in `limit_ns`.
pub fn run_workload(pair: &mut Pair, a: Side, b: Side, ops: &[Op], seed: u64, limit_ns: Time) {
    const SLACK: u64 = 8;
    let mut expects = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        let i = i as u64;
        let wr_id = (seed << 16) | i;
        let signaled = i % 3 != 2;
        let imm = 0xA000_0000 | i as u32;
        let mut memory = Vec::new();
        let mut recv = None;
        let (send_op, sgl, opcode, byte_len) = match *op {
            Op::Message(verb, size) => {
                let data = pattern(seed * 1000 + i, size as usize);
                let mut tail = data.clone();
                tail.extend_from_slice(&[0xEE; SLACK as usize]);
                let (src, dst, dst_side) = message_buffers(pair, a, b, verb, &data, SLACK);
                memory.push((dst_side, dst.va, tail));
                let local = if verb == Verb::Read { dst } else { src };
                let inv = buffer(&mut pair.nics[1], b.pd, 64, Access::ALL);
                let op = verb.op(&src, &dst, inv.rkey, imm);
                if verb.needs_recv() {
                    let recv_id = wr_id | 1 << 40;
                    pair.nics[1]
                        .post_recv(b.qpn, recv_wr(recv_id, verb.recv_sgl(&dst, size + SLACK)))
                        .unwrap();
                    recv = Some(verb.recv_cqe(recv_id, b.qpn, size as u32, imm, inv.rkey));
                }
                (op, split_sgl(&local, size), verb.send_opcode(), size as u32)
            }
            Op::FetchAdd(_) | Op::CmpSwap(_) => {
                let init = 0x1122_3344_5566_7788u64 ^ i;
                let target = buffer(&mut pair.nics[1], b.pd, 24, Access::ALL);
                let result = buffer(&mut pair.nics[0], a.pd, 8, Access::ALL);
                fill(&mut pair.nics[1], target.va + 8, &init.to_le_bytes());
                fill(&mut pair.nics[0], result.va, &[0xEE; 8]);
                let (op, after, opcode) = match *op {
                    Op::FetchAdd(add) => (
                        SendOp::FetchAdd {
                            remote_addr: target.va + 8,
                            rkey: target.rkey,
                            add,
                        },
                        init.wrapping_add(add),
                        WcOpcode::FetchAdd,
                    ),
                    Op::CmpSwap(equal) => {
                        let compare = if equal { init } else { !init };
                        let swap = 0xDEAD_BEEF_0000_0000 | i;
                        (
                            SendOp::CompareSwap {
                                remote_addr: target.va + 8,
                                rkey: target.rkey,
                                compare,
                                swap,
                            },
                            if equal { swap } else { init },
                            WcOpcode::CompSwap,
                        )
                    }
                    Op::Message(..) => unreachable!(),
                };
                memory.push((1, target.va + 8, after.to_le_bytes().to_vec()));
                memory.push((0, result.va, init.to_le_bytes().to_vec()));
                (op, vec![result.sge(0, 8)], opcode, 8)
            }
        };
        pair.nics[0]
            .post_send(
                a.qpn,
                SendWr {
                    wr_id,
                    op: send_op,
                    sgl,
                    signaled,
                    solicited: false,
                    fence: false,
                    inline_data: None,
                },
            )
            .unwrap();
        expects.push(Expect {
            wr_id,
            signaled,
            opcode,
            byte_len,
            memory,
            recv,
        });
    }
    assert!(pair.run(limit_ns), "did not go idle (seed {seed})");

    let sends = pair.nics[0].poll_cq(a.scq, usize::MAX);
    let want: Vec<Cqe> = expects
        .iter()
        .filter(|e| e.signaled)
        .map(|e| Cqe {
            wr_id: e.wr_id,
            status: WcStatus::Success,
            opcode: e.opcode,
            qpn: a.qpn,
            byte_len: e.byte_len,
            imm: None,
            invalidated_rkey: None,
        })
        .collect();
    assert_eq!(sends, want, "send completions (seed {seed})");
    let recvs = pair.nics[1].poll_cq(b.rcq, usize::MAX);
    let want: Vec<Cqe> = expects.iter().filter_map(|e| e.recv).collect();
    assert_eq!(recvs, want, "receive completions (seed {seed})");
    for (k, e) in expects.iter().enumerate() {
        for (side, va, bytes) in &e.memory {
            let got = read(&pair.nics[*side], *va, bytes.len());
            assert!(
                got == *bytes,
                "op {k} {:?}: memory on side {side} differs (seed {seed})",
                ops[k]
            );
        }
    }
    assert_eq!(pair.nics[0].qp_state(a.qpn), Ok(QpState::Rts));
    assert_eq!(pair.nics[1].qp_state(b.qpn), Ok(QpState::Rts));
}

/// A receive work request.
pub fn recv_wr(wr_id: u64, sgl: Vec<Sge>) -> RecvWr {
    RecvWr { wr_id, sgl }
}

/// The statuses of up to `max` completions polled from `cq`, oldest first.
pub fn statuses(nic: &mut Nic, cq: CqId, max: usize) -> Vec<WcStatus> {
    nic.poll_cq(cq, max).iter().map(|c| c.status).collect()
}

/// A signaled, unsolicited work request.
pub fn send_wr(wr_id: u64, op: SendOp, sgl: Vec<Sge>) -> SendWr {
    SendWr {
        wr_id,
        op,
        sgl,
        signaled: true,
        solicited: false,
        fence: false,
        inline_data: None,
    }
}
