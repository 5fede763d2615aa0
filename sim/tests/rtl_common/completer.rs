//! The completer's recorded model traces and their expected values,
//! shared by the completer datapath and requester event loop lockstep
//! tests: two model NICs' completer events (`Nic::record_completer`) and
//! response records over lossy links, the codes the RTL uses for the
//! model's enums, and the timer command a recorded event calls for.

use super::traffic::{MixedPair, MixedTraffic, TrafficRun, LATE_RECVS_AT};
use rocenic_fabric::FaultConfig;
use rocenic_fabric::{Fabric, LinkConfig, SwitchConfig};
use rocenic_hdl::codes::qp_state;
use rocenic_hdl::requester::completer_datapath::*;
use rocenic_hdl::requester::send_queue_tracker::DEFAULT_SLOT_BITS;
use rocenic_model::completer::{
    CompleterEvent, CompleterRecord, ResponseRecord, SqSnapshot, WqeKind,
};
use rocenic_model::nic::Nic;
use rocenic_model::nic::QpContextView;
use rocenic_model::verbs::{Access, PdId, Qpn};
use rocenic_model::verbs::{ModifyQp, QpState, SendOp, SendWr, Sge, WcOpcode};
use rocenic_wire::psn;
use std::collections::BTreeMap;

pub const DEPTH: usize = 1 << DEFAULT_SLOT_BITS;

/// The write-back and side state as the block's ports show them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriteBack {
    pub state: u64,
    pub next_psn: u32,
    pub send_psn: u32,
    pub una: u32,
    pub ackreq_end: u32,
    pub max_sent_end: u32,
    pub retry_left: u8,
    pub rnr_left: u8,
    pub retry_una: Option<u32>,
    pub rnr_waiting: bool,
    /// The side RAM's "ACK timer running" bit: the model's `ack_timer`.
    pub ack_running: bool,
}

impl WriteBack {
    pub fn of(s: &SqSnapshot) -> WriteBack {
        WriteBack {
            state: qp_state::encode(s.state).into(),
            next_psn: s.next_psn,
            send_psn: s.send_psn,
            una: s.una,
            ackreq_end: s.ackreq_end,
            max_sent_end: s.max_sent_end,
            retry_left: s.retry_left,
            rnr_left: s.rnr_left,
            retry_una: s.retry_una,
            rnr_waiting: s.rnr_until.is_some(),
            ack_running: s.ack_timer.is_some(),
        }
    }
}

/// (op, RNR kind, code) of the timer command.
pub type Timer = (u64, bool, u64);

/// Where a response's data goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Place {
    pub atomic: bool,
    pub slot: u64,
    pub lkey: u32,
    /// The buffer's VA plus the offset.
    pub va: u64,
    pub offset: u64,
    pub len: u64,
    /// For an atomic ACK.
    pub orig: Option<u64>,
}

/// A granted WQE as the grant outputs show it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Granted {
    pub slot: u64,
    pub kind: WqeKind,
    pub opcode: WcOpcode,
    pub first_psn: u32,
    pub npsn: u32,
    pub len: u32,
    pub signaled: bool,
    pub lkey: u32,
    pub va: u64,
    pub resume_psn: u32,
}

pub type Logs = [(Vec<CompleterRecord>, Vec<ResponseRecord>); 2];

/// What a traffic run adds to the mixed traffic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Twist {
    None,
    /// The NICs' send window (`max_outstanding_psns`) set to this many
    /// PSNs, and on NIC 0 a SEND with an unregistered L_Key posted to the
    /// first QP with room once the traffic runs (a local protection error
    /// at transmit: the WQE fails, grants stop at it until it is the
    /// oldest, then the QP moves to ERR).
    Window(u32),
    /// Every QP of both NICs ends its traffic with a READ or an atomic
    /// (alternately) into a buffer that is an MR of its own, and a WRITE
    /// behind it. Once the request is sent and the WQE is the oldest
    /// unacknowledged one (so no rewind for an older WQE sends it again),
    /// before its response, the MR is deregistered and the buffer
    /// registered again shorter or without LOCAL_WRITE (new keys): the
    /// placement's local check fails (LocProtErr), the WQE fails, and the
    /// QP moves to ERR (a placed response's WQE is always the oldest: its
    /// implicit ACK covers the rest), the WRITE flushed. A request sent
    /// again after the change (its response lost) fails at transmit
    /// instead; a response that acknowledges older WQEs and answers the
    /// victim at once leaves no moment to change it.
    LocalBufferChanged,
}

/// A READ / atomic of [`Twist::LocalBufferChanged`] whose MR is to change.
pub struct Victim {
    side: usize,
    qpn: Qpn,
    first_psn: u32,
    end_psn: u32,
    pd: PdId,
    lkey: u32,
    va: u64,
    len: u32,
    /// Registered again shorter (else without LOCAL_WRITE).
    shorter: bool,
}

impl Victim {
    /// The QP is in RTS, the WQE was sent, is the oldest unacknowledged
    /// one and not fully answered.
    fn in_flight(&self, nic: &Nic) -> bool {
        let ctx = nic.qp_context(self.qpn).expect("the QP exists");
        let (una, send) = (ctx.sq_una_psn, ctx.sq_send_psn);
        ctx.state == QpState::Rts
            && psn::diff(una, self.first_psn) >= 0
            && psn::diff(una, self.end_psn) < 0
            && psn::diff(send, una) > 0
    }

    /// The QP left RTS or the WQE was answered: no change any more.
    fn past(&self, nic: &Nic) -> bool {
        let ctx = nic.qp_context(self.qpn).expect("the QP exists");
        ctx.state != QpState::Rts || psn::diff(ctx.sq_una_psn, self.end_psn) >= 0
    }
}

/// Posts the READs / atomics of [`Twist::LocalBufferChanged`] (and a
/// WRITE behind each) on every QP of both NICs.
pub fn post_victims(nics: &mut [Nic; 2], mtu: u32) -> Vec<Victim> {
    let mut victims = Vec::new();
    for side in 0..2 {
        let [a, b] = nics;
        let (nic, peer) = if side == 0 { (a, b) } else { (b, a) };
        for (i, qpn) in nic.qpns().into_iter().enumerate() {
            let ctx = nic.qp_context(qpn).expect("the QP exists");
            let peer_pd = peer.qp_context(ctx.dest_qpn).expect("its peer").pd;
            let atomic = (side + i) % 2 == 1;
            let len = if atomic { 8 } else { 3 * mtu };
            let target = peer.memory_mut().alloc(len.into(), 4096);
            let remote = Access::LOCAL_WRITE | Access::REMOTE_READ | Access::REMOTE_ATOMIC;
            let rkey = peer
                .reg_mr(peer_pd, target, len.into(), remote)
                .unwrap()
                .rkey;
            let va = nic.memory_mut().alloc(len.into(), 4096);
            let lkey = nic
                .reg_mr(ctx.pd, va, len.into(), Access::LOCAL_WRITE)
                .unwrap()
                .lkey;
            let op = if atomic {
                SendOp::FetchAdd {
                    remote_addr: target,
                    rkey,
                    add: 1,
                }
            } else {
                SendOp::Read {
                    remote_addr: target,
                    rkey,
                }
            };
            let wr_id = 0xA000 + 0x100 * side as u64 + 2 * i as u64;
            let wr = |wr_id, op, length| SendWr {
                wr_id,
                op,
                sgl: vec![Sge {
                    addr: va,
                    length,
                    lkey,
                }],
                signaled: true,
                solicited: false,
                fence: false,
                inline_data: None,
            };
            nic.post_send(qpn, wr(wr_id, op, len)).unwrap();
            let end_psn = nic.qp_context(qpn).expect("the QP exists").sq_next_psn;
            // Empty: its buffer is never checked.
            let behind = SendOp::Write {
                remote_addr: target,
                rkey,
            };
            nic.post_send(qpn, wr(wr_id + 1, behind, 0)).unwrap();
            victims.push(Victim {
                side,
                qpn,
                first_psn: ctx.sq_next_psn,
                end_psn,
                pd: ctx.pd,
                lkey,
                va,
                len,
                shorter: i % 2 == 0,
            });
        }
    }
    victims
}

/// [`TrafficRun::start`] for a pair with victims: the fabric runs event
/// by event while a victim waits, and each victim's MR changes in the
/// event after its request left.
pub fn start_changing(seed: u64, faults: FaultConfig, pair: MixedPair, mtu: u32) -> TrafficRun {
    let MixedPair {
        mut nics,
        cqs,
        late_recvs,
        sends,
    } = pair;
    let mut victims = post_victims(&mut nics, mtu);
    let link = LinkConfig {
        faults,
        ..LinkConfig::default()
    };
    let mut fabric = Fabric::new(seed, SwitchConfig::default());
    let [a, b] = nics;
    let ids = [fabric.add_node(a, link.clone()), fabric.add_node(b, link)];
    let mut late_recvs = Some(late_recvs);
    let limit = 20_000_000;
    while fabric.now() < limit && (late_recvs.is_some() || !victims.is_empty()) {
        let until = if late_recvs.is_some() {
            LATE_RECVS_AT
        } else {
            limit
        };
        fabric.run_while(until, |f| {
            !victims.iter().any(|v| v.in_flight(f.node(ids[v.side])))
        });
        if fabric.now() >= LATE_RECVS_AT {
            for (side, qpn, recv) in late_recvs.take().into_iter().flatten() {
                fabric.node_mut(ids[side]).post_recv(qpn, recv).unwrap();
            }
        }
        victims.retain(|v| {
            let nic = fabric.node_mut(ids[v.side]);
            if v.past(nic) {
                return false;
            }
            if !v.in_flight(nic) {
                return true;
            }
            nic.dereg_mr(v.lkey).unwrap();
            let (len, access) = if v.shorter {
                (4, Access::LOCAL_WRITE)
            } else {
                (v.len.into(), Access::NONE)
            };
            nic.reg_mr(v.pd, v.va, len, access).unwrap();
            false
        });
    }
    TrafficRun {
        fabric,
        ids,
        cqs,
        sends,
    }
}

/// Every completer event and response record of the two NICs, and the
/// events of the end: ERR posts and the move to RESET.
/// `twist`: what the run adds to the mixed traffic ([`Twist`]).
pub fn model_trace(
    seed: u64,
    mtu: u32,
    faults: FaultConfig,
    twist: Twist,
) -> (Logs, [Vec<CompleterRecord>; 2]) {
    let t = model_trace_full(seed, mtu, faults, twist);
    (t.logs, t.ends)
}

/// A recorded trace with what the NICs were set up with.
pub struct Trace {
    pub logs: Logs,
    pub ends: [Vec<CompleterRecord>; 2],
    /// Each NIC's QP contexts after the traffic, before the end.
    pub contexts: [BTreeMap<u32, QpContextView>; 2],
    /// Each NIC's `max_outstanding_psns` and `ack_req_interval`.
    pub window: [u32; 2],
    pub ack_req_interval: [u32; 2],
}

/// [`model_trace`] with the NICs' contexts and send settings.
pub fn model_trace_full(seed: u64, mtu: u32, faults: FaultConfig, twist: Twist) -> Trace {
    let changing = twist == Twist::LocalBufferChanged;
    let shape = MixedTraffic {
        qps: 3,
        // Room for a victim and the WRITE behind it.
        msgs: if changing { DEPTH - 2 } else { DEPTH },
        max_send_wr: DEPTH as u32,
        signaled: 0.8,
        fill: None,
    };
    let prepare = |nic: &mut Nic| {
        nic.record_completer();
        nic.record_responses();
        if let Twist::Window(w) = twist {
            nic.config_mut().max_outstanding_psns = w;
        }
    };
    let mut run = if changing {
        start_changing(seed, faults, MixedPair::new(seed, mtu, shape, prepare), mtu)
    } else {
        TrafficRun::start(seed, mtu, faults, shape, prepare)
    };
    if let Twist::Window(_) = twist {
        let bad = SendWr {
            wr_id: 0xBAD,
            op: SendOp::Send,
            sgl: vec![Sge {
                addr: 0x1000,
                length: 2 * mtu,
                lkey: 0x7777_7700,
            }],
            signaled: true,
            solicited: false,
            fence: false,
            inline_data: None,
        };
        let mut posted = false;
        while !posted && run.fabric.now() < 1_000_000 {
            let nic = run.fabric.node_mut(run.ids[0]);
            posted = nic
                .qpns()
                .into_iter()
                .any(|qpn| nic.post_send(qpn, bad.clone()).is_ok());
            let t = run.fabric.now();
            run.fabric.run_until(t + 5_000);
        }
        assert!(posted, "a send queue with room");
    }
    run.fabric.run_until(2_000_000_000);
    let logs = [0, 1].map(|s| {
        let nic = run.fabric.node_mut(run.ids[s]);
        (nic.take_completer_log(), nic.take_response_log())
    });
    let contexts = [0, 1].map(|s| {
        let nic = run.fabric.node(run.ids[s]);
        nic.qpns()
            .into_iter()
            .filter_map(|q| Some((q, nic.qp_context(q)?)))
            .collect()
    });
    let window = [0, 1].map(|s| run.fabric.node(run.ids[s]).config().max_outstanding_psns);
    let ack_req_interval = [0, 1].map(|s| run.fabric.node(run.ids[s]).config().ack_req_interval);
    // Then a WQE posted to every QP in ERR (flushed at once), and every
    // QP back to RESET.
    let ends = [0, 1].map(|s| {
        let nic = run.fabric.node_mut(run.ids[s]);
        for qpn in nic.qpns() {
            if nic.qp_state(qpn) == Ok(QpState::Err) {
                let wr = SendWr {
                    wr_id: 0xE000 + u64::from(qpn),
                    op: SendOp::Send,
                    sgl: vec![Sge {
                        addr: 0x1000,
                        length: 3 * mtu,
                        lkey: 0,
                    }],
                    signaled: true,
                    solicited: false,
                    fence: false,
                    inline_data: None,
                };
                nic.post_send(qpn, wr).expect("a post to ERR completes");
            }
            nic.modify_qp(qpn, ModifyQp::ToReset).expect("to RESET");
        }
        nic.take_completer_log()
    });
    Trace {
        logs,
        ends,
        contexts,
        window,
        ack_req_interval,
    }
}

/// The timer command the model's change of its two timers calls for;
/// `None`: more than one is right (no timer before or after: stop or
/// nothing; the same ACK deadline: re-arm or nothing).
pub fn expected_timer(rec: &CompleterRecord, after: &SqSnapshot) -> Option<Timer> {
    let b = &rec.before;
    let timer_event = matches!(rec.event, CompleterEvent::Timer { .. });
    if after.rnr_until.is_some() && after.rnr_until != b.rnr_until {
        let CompleterEvent::Response {
            aeth: Some(aeth), ..
        } = rec.event
        else {
            panic!("an RNR wait starts on an RNR NAK: {rec:?}");
        };
        return Some((TIMER_ARM, true, u64::from(aeth.syndrome & 0x1F)));
    }
    if after.ack_timer.is_some() && after.ack_timer != b.ack_timer {
        return Some((TIMER_ARM, false, b.timeout.into()));
    }
    if after.ack_timer.is_some() && after.ack_timer == b.ack_timer {
        // Unchanged, or re-armed at the same time the last arming was
        // (two responses in one ns): the same deadline either way.
        return None;
    }
    if after.ack_timer.is_none() && after.rnr_until.is_none() {
        let running = b.ack_timer.is_some() || b.rnr_until.is_some();
        if running && !timer_event {
            return Some((TIMER_STOP, false, 0));
        }
        return None;
    }
    Some((TIMER_NONE, false, 0))
}
