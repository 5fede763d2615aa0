//! Mixed RC traffic between two model NICs, for the lockstep tests that
//! replay what a model NIC decided (responses, send-queue operations) on an
//! RTL block: every verb both ways on a few QP pairs, SENDs whose receive
//! WQE comes late (RNR NAKs), and one WRITE with a bad R_Key (a remote
//! access NAK moves the requester's QP to ERR, which flushes it).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rocenic_fabric::{Fabric, FaultConfig, LinkConfig, NodeId, SwitchConfig};
use rocenic_model::nic::Nic;
use rocenic_model::verbs::{Access, CqId, QpCaps, Qpn, RecvWr, SendOp, SendWr, Sge, WcOpcode};
use rocenic_sim::scenario::{connect, nic_config, ScenarioConfig};

/// The shape of the exchange.
#[derive(Clone, Copy, Debug)]
pub struct MixedTraffic {
    /// QP pairs.
    pub qps: usize,
    /// Send WQEs each side posts on each QP (wr_id `1000 * qp + i`).
    pub msgs: usize,
    /// Send queue depth of every QP.
    pub max_send_wr: u32,
    /// Share of send WQEs that are signaled (1.0: all of them).
    pub signaled: f64,
    /// Every registered buffer starts filled with this byte (else zero);
    /// CMP_SWAP compares against eight of it, so some swaps succeed.
    pub fill: Option<u8>,
}

/// When the late receive WQEs are posted (ns into the exchange).
pub const LATE_RECVS_AT: u64 = 30_000;

/// Two connected model NICs with their traffic posted, before the fabric.
pub struct MixedPair {
    pub nics: [Nic; 2],
    pub cqs: [CqId; 2],
    /// Receive WQEs to post once the exchange has started: (NIC, QPN, WQE).
    pub late_recvs: Vec<(usize, Qpn, RecvWr)>,
    /// Send WQEs each side posted.
    pub sends: usize,
}

impl MixedPair {
    /// Builds the NICs; `prepare` runs on each NIC before anything is
    /// created on it (to switch a recorder on). The same arguments build
    /// the same pair.
    pub fn new(seed: u64, mtu: u32, shape: MixedTraffic, prepare: impl Fn(&mut Nic)) -> MixedPair {
        let config = ScenarioConfig {
            mtu,
            seed,
            timeout: 6,
            ..ScenarioConfig::default()
        };
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut nics = [
            Nic::new(nic_config(1, &config)),
            Nic::new(nic_config(2, &config)),
        ];
        let MixedTraffic { qps, msgs, .. } = shape;
        let buf = 24 * u64::from(mtu);
        let region = buf * msgs as u64;
        let caps = QpCaps {
            max_send_wr: shape.max_send_wr,
            max_recv_wr: 64,
            max_sge: 1,
        };
        let all = Access::LOCAL_WRITE
            | Access::REMOTE_WRITE
            | Access::REMOTE_READ
            | Access::REMOTE_ATOMIC;
        let compare = shape.fill.map_or(0, |b| u64::from_ne_bytes([b; 8]));
        let mut late_recvs = Vec::new();
        let mut cqs = Vec::new();
        let mut pairs = Vec::new();
        for nic in &mut nics {
            prepare(nic);
            let pd = nic.alloc_pd();
            let cq = nic.create_cq(4096);
            cqs.push(cq);
            let mut qpns = Vec::new();
            let mut bufs = Vec::new();
            for _ in 0..qps {
                qpns.push(nic.create_qp(pd, cq, cq, caps).unwrap());
                let va = nic.memory_mut().alloc(region, 4096);
                if let Some(b) = shape.fill {
                    nic.memory_mut()
                        .write_va(va, &vec![b; region as usize])
                        .unwrap();
                }
                let keys = nic.reg_mr(pd, va, region, all).unwrap();
                bufs.push((va, keys));
            }
            pairs.push((qpns, bufs));
        }
        let [a, b] = &mut nics;
        for q in 0..qps {
            connect(a, pairs[0].0[q], b, pairs[1].0[q], &config, &mut rng).unwrap();
        }
        for side in 0..2 {
            let peer = 1 - side;
            for q in 0..qps {
                let (qpn, (va, keys)) = (pairs[side].0[q], pairs[side].1[q]);
                let (peer_qpn, (peer_va, peer_keys)) = (pairs[peer].0[q], pairs[peer].1[q]);
                for i in 0..msgs {
                    let local = va + i as u64 * buf;
                    let remote_addr = peer_va + i as u64 * buf;
                    let rkey = peer_keys.rkey;
                    let bad_rkey = q == qps - 1 && side == 0 && i == msgs - 4;
                    let len = match rng.gen_range(0..4) {
                        0 => rng.gen_range(0..=64),
                        1 => u64::from(mtu) * rng.gen_range(1..=4),
                        _ => rng.gen_range(1..=buf),
                    } as u32;
                    let op = match if bad_rkey { 2 } else { rng.gen_range(0..6) } {
                        0 | 1 => SendOp::Read { remote_addr, rkey },
                        2 => SendOp::Write {
                            remote_addr,
                            rkey: if bad_rkey { rkey ^ 0x100 } else { rkey },
                        },
                        3 => SendOp::Send,
                        4 => SendOp::FetchAdd {
                            remote_addr: remote_addr & !7,
                            rkey,
                            add: 1,
                        },
                        _ => SendOp::CompareSwap {
                            remote_addr: remote_addr & !7,
                            rkey,
                            compare,
                            swap: 1,
                        },
                    };
                    let atomic = matches!(op, SendOp::FetchAdd { .. } | SendOp::CompareSwap { .. });
                    let len = if atomic { 8 } else { len };
                    if op == SendOp::Send {
                        let recv = RecvWr {
                            wr_id: i as u64,
                            sgl: vec![Sge {
                                addr: remote_addr,
                                length: buf as u32,
                                lkey: peer_keys.lkey,
                            }],
                        };
                        if rng.gen_bool(0.5) {
                            late_recvs.push((peer, peer_qpn, recv));
                        } else {
                            nics[peer].post_recv(peer_qpn, recv).unwrap();
                        }
                    }
                    let signaled = shape.signaled >= 1.0 || rng.gen_bool(shape.signaled);
                    let wr = SendWr {
                        wr_id: 1000 * q as u64 + i as u64,
                        op,
                        sgl: vec![Sge {
                            addr: local,
                            length: len,
                            lkey: keys.lkey,
                        }],
                        signaled,
                        solicited: false,
                        fence: false,
                        inline_data: None,
                    };
                    nics[side].post_send(qpn, wr).unwrap();
                }
            }
        }
        MixedPair {
            nics,
            cqs: [cqs[0], cqs[1]],
            late_recvs,
            sends: qps * msgs,
        }
    }
}

/// Two connected model NICs on a lossy fabric, their traffic posted and
/// the late receive WQEs posted at [`LATE_RECVS_AT`].
pub struct TrafficRun {
    pub fabric: Fabric<Nic>,
    pub ids: [NodeId; 2],
    pub cqs: [CqId; 2],
    /// Send WQEs each side posted.
    pub sends: usize,
}

impl TrafficRun {
    /// Runs a [`MixedPair`] on a fabric with `faults` on both links until
    /// the late receive WQEs are posted.
    pub fn start(
        seed: u64,
        mtu: u32,
        faults: FaultConfig,
        shape: MixedTraffic,
        prepare: impl Fn(&mut Nic),
    ) -> TrafficRun {
        let MixedPair {
            nics,
            cqs,
            late_recvs,
            sends,
        } = MixedPair::new(seed, mtu, shape, prepare);
        let link = LinkConfig {
            faults,
            ..LinkConfig::default()
        };
        let mut fabric = Fabric::new(seed, SwitchConfig::default());
        let [a, b] = nics;
        let ids = [fabric.add_node(a, link.clone()), fabric.add_node(b, link)];
        // The receives come late: the SENDs before them are RNR NAKed first.
        fabric.run_until(LATE_RECVS_AT);
        for (side, qpn, recv) in late_recvs {
            fabric.node_mut(ids[side]).post_recv(qpn, recv).unwrap();
        }
        TrafficRun {
            fabric,
            ids,
            cqs,
            sends,
        }
    }

    /// Runs until both sides have polled every send completion (all
    /// signaled) or 2 s of simulated time, then 1 ms more for the last
    /// responses in flight.
    pub fn run_until_sends_complete(&mut self) {
        let limit = 2_000_000_000;
        let want = self.sends;
        let mut done = [0usize; 2];
        let (ids, cqs) = (self.ids, self.cqs);
        while done.iter().any(|&d| d < want) && self.fabric.now() < limit {
            self.fabric.run_while(limit, |f| {
                (0..2).all(|s| f.node(ids[s]).cq_len(cqs[s]) == 0)
            });
            for (s, d) in done.iter_mut().enumerate() {
                *d += self
                    .fabric
                    .node_mut(ids[s])
                    .poll_cq(cqs[s], usize::MAX)
                    .iter()
                    .filter(|c| c.opcode != WcOpcode::Recv)
                    .count();
            }
        }
        self.fabric.run_until(self.fabric.now() + 1_000_000);
    }
}

/// A responder NIC's QP as the RTL must be set up.
#[derive(Clone, Copy, Debug)]
pub struct ResponderQp {
    pub qpn: Qpn,
    pub pd: rocenic_model::verbs::PdId,
    /// The expected PSN it was brought up with (the requester's first).
    pub epsn: u32,
    pub mtu: u32,
}

/// One-way traffic for the responder side: NIC 0 sends WRITEs, WRITEs
/// with immediate, SENDs and SENDs with immediate on a few QPs to NIC 1,
/// which only answers (ACK, NAK, RNR NAK); receive WQEs (one SGE, one per
/// SEND and WRITE with immediate) are posted to NIC 1 before the exchange
/// or, half of them, at [`LATE_RECVS_AT`] (RNR NAKs first). One WRITE of
/// the last QP has a bad R_Key.
pub struct ResponderPair {
    pub nics: [Nic; 2],
    pub cqs: [CqId; 2],
    pub qps: Vec<ResponderQp>,
    /// Receive WQEs posted to NIC 1 before the exchange, in order.
    pub early_recvs: Vec<(Qpn, RecvWr)>,
    /// Receive WQEs to post to NIC 1 at [`LATE_RECVS_AT`], in order.
    pub late_recvs: Vec<(Qpn, RecvWr)>,
    /// Send WQEs NIC 0 posted.
    pub sends: usize,
}

impl ResponderPair {
    /// The same arguments build the same pair.
    pub fn new(seed: u64, mtu: u32, ipv6: bool, qps: usize, msgs: usize) -> ResponderPair {
        let config = ScenarioConfig {
            mtu,
            seed,
            ipv6,
            timeout: 6,
            ..ScenarioConfig::default()
        };
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut nics = [
            Nic::new(nic_config(1, &config)),
            Nic::new(nic_config(2, &config)),
        ];
        let buf = 24 * u64::from(mtu);
        let region = buf * msgs as u64;
        let caps = QpCaps {
            max_send_wr: 64,
            max_recv_wr: 64,
            max_sge: 1,
        };
        let all = Access::LOCAL_WRITE
            | Access::REMOTE_WRITE
            | Access::REMOTE_READ
            | Access::REMOTE_ATOMIC;
        let mut cqs = Vec::new();
        let mut sides = Vec::new();
        for nic in &mut nics {
            let pd = nic.alloc_pd();
            let cq = nic.create_cq(4096);
            cqs.push(cq);
            let mut qs = Vec::new();
            for _ in 0..qps {
                let qpn = nic.create_qp(pd, cq, cq, caps).unwrap();
                let va = nic.memory_mut().alloc(region, 4096);
                let fill: Vec<u8> = (0..region).map(|_| rng.gen()).collect();
                nic.memory_mut().write_va(va, &fill).unwrap();
                let keys = nic.reg_mr(pd, va, region, all).unwrap();
                qs.push((qpn, pd, va, keys));
            }
            sides.push(qs);
        }
        let [a, b] = &mut nics;
        let mut rqps = Vec::new();
        for (ours, theirs) in sides[0].iter().zip(&sides[1]) {
            // `connect` draws the requester's first PSN first.
            let epsn = rng.clone().gen::<u32>() & 0xFF_FFFF;
            connect(a, ours.0, b, theirs.0, &config, &mut rng).unwrap();
            rqps.push(ResponderQp {
                qpn: theirs.0,
                pd: theirs.1,
                epsn,
                mtu,
            });
        }
        let (mut early_recvs, mut late_recvs) = (Vec::new(), Vec::new());
        for (q, (ours, theirs)) in sides[0].iter().zip(&sides[1]).enumerate() {
            let (qpn, _, va, keys) = *ours;
            let (peer_qpn, _, peer_va, peer_keys) = *theirs;
            for i in 0..msgs {
                let local = va + i as u64 * buf;
                let remote_addr = peer_va + i as u64 * buf;
                let rkey = peer_keys.rkey;
                let len = match rng.gen_range(0..4) {
                    0 => rng.gen_range(0..=64),
                    1 => u64::from(mtu) * rng.gen_range(1..=4),
                    _ => rng.gen_range(1..=buf),
                } as u32;
                let imm = rng.gen();
                // One WRITE with a bad R_Key: NAK remote access error, the
                // responder's QP to ERR (its receive WQEs flushed).
                let bad_rkey = q == qps - 1 && i == msgs - 3;
                let op = match if bad_rkey { 0 } else { rng.gen_range(0..4) } {
                    0 => SendOp::Write {
                        remote_addr,
                        rkey: if bad_rkey { rkey ^ 0x100 } else { rkey },
                    },
                    1 => SendOp::WriteWithImm {
                        remote_addr,
                        rkey,
                        imm,
                    },
                    2 => SendOp::Send,
                    _ => SendOp::SendWithImm { imm },
                };
                if !matches!(op, SendOp::Write { .. }) {
                    let recv = RecvWr {
                        wr_id: 1000 * q as u64 + i as u64,
                        sgl: vec![Sge {
                            addr: remote_addr,
                            length: buf as u32,
                            lkey: peer_keys.lkey,
                        }],
                    };
                    if rng.gen_bool(0.5) {
                        late_recvs.push((peer_qpn, recv));
                    } else {
                        nics[1].post_recv(peer_qpn, recv.clone()).unwrap();
                        early_recvs.push((peer_qpn, recv));
                    }
                }
                let wr = SendWr {
                    wr_id: 1000 * q as u64 + i as u64,
                    op,
                    sgl: vec![Sge {
                        addr: local,
                        length: len,
                        lkey: keys.lkey,
                    }],
                    signaled: true,
                    solicited: false,
                    fence: false,
                    inline_data: None,
                };
                nics[0].post_send(qpn, wr).unwrap();
            }
        }
        ResponderPair {
            nics,
            cqs: [cqs[0], cqs[1]],
            qps: rqps,
            early_recvs,
            late_recvs,
            sends: qps * msgs,
        }
    }
}
