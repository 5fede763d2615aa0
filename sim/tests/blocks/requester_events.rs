//! Requester event loop lockstep: the Verilated `RequesterEvents` (1024
//! QPs x 16 slots) replays every completer event two model NICs recorded
//! over lossy links (`Nic::record_completer`, the traces
//! `rtl_completer_datapath` replays; `rtl_common::completer`), but now
//! each event comes in on its own source port (posts with a random WQE
//! body, response headers, forced timer expiries with the inner timers
//! held, grant requests in the model's order, sent statuses as one-cycle
//! pulses, moves to ERR) and the context comes from the block's own RAM,
//! programmed once from the model's (`Nic::qp_context`, with each QP's
//! send-side state as its first event found it). Every written-back
//! record must be the model's after-state, and the side state, timer
//! command, placement, post result, grant (with the body posted for its
//! slot, the context's MTU and una, the NIC's window and AckReq
//! interval), "sendable" pulse and CQEs the model's; the context RAM at
//! the end equal to the model's. Two directed tests: a QP's response
//! waits while its grant is in flight, and with every source valid at
//! once each is served round robin.

use crate::rtl_common;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rocenic_fabric::FaultConfig;
use rocenic_hdl::codes::{grant_refusal, mtu, qp_state, wc_opcode, wc_status, wqe_kind};
use rocenic_hdl::qp::qp_context_record::{QpContextRecord, RECORD_WORDS};
use rocenic_hdl::requester::completer_datapath::{
    EV_GRANT, EV_POST, EV_RESPONSE, EV_SENT, EV_TIMER, EV_TO_ERROR, TIMER_ARM, TIMER_NONE,
    TIMER_STOP,
};
use rocenic_model::completer::{CompleterEvent, CompleterRecord, SqSnapshot, WqeOutcome};
use rocenic_model::requester::{may_send, send_window};
use rocenic_model::send_queue::SendCqe;
use rocenic_model::verbs::{Sge, WcOpcode, WcStatus};
use rocenic_rtl::host_ports::write_context;
use rocenic_rtl::qp_config::context_record;
use rtl_common::completer::*;
use std::collections::{BTreeMap, BTreeSet};
use verilator_sys::{RequesterEvents as Dut, Sim};

/// A WQE body as the block stores it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Body {
    op: u64,
    remote_va: u64,
    rkey: u64,
    imm: u64,
    compare: u64,
    swap_add: u64,
    solicited: bool,
}

impl Body {
    fn random(rng: &mut ChaCha8Rng) -> Body {
        Body {
            op: rng.gen_range(0..8),
            remote_va: rng.gen(),
            rkey: rng.gen::<u32>().into(),
            imm: rng.gen::<u32>().into(),
            compare: rng.gen(),
            swap_add: rng.gen(),
            solicited: rng.gen(),
        }
    }
}

/// A grant as the grant stream shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct GrantOut {
    qpn: u64,
    wqe: Granted,
    mtu: u64,
    una: u32,
    window: u64,
    ack_req_interval: u64,
    body: Body,
}

/// A done: (qpn, kind, record, retry_una, rnr_waiting, ack_running,
/// refusal, skipped).
type DoneSeen = (u64, u64, QpContextRecord, Option<u32>, bool, bool, u64, u64);

/// What one event produced.
#[derive(Clone, Debug, Default)]
struct Seen {
    done: Option<DoneSeen>,
    sendable: Option<u64>,
    timer: Option<(u64, Timer)>,
    post: Option<(u64, bool, u64)>,
    place: Option<(u64, Place)>,
    grant: Option<GrantOut>,
    cqes: Vec<(u64, u64, WcStatus, WcOpcode, u32)>,
    /// Cycles from the event offered to its done.
    latency: u64,
}

struct Bench {
    sim: Sim<Dut>,
    rng: ChaCha8Rng,
    cycles: u64,
    seen: Seen,
    /// Every done in order: (qpn, kind).
    dones: Vec<(u64, u64)>,
    /// The cycle of every done since the bench began (tests that clear
    /// `dones` leave this alone).
    done_cycles: Vec<u64>,
    /// Every grant in order.
    grants: Vec<GrantOut>,
    timer_cmds: u64,
    /// The model's answer to the current event's placement request, and
    /// the cycles to wait before giving it.
    answer: Option<Result<(), WcStatus>>,
    answer_delay: u64,
}

fn record_words(s: &Sim<Dut>, port: verilator_sys::Output<Dut>) -> QpContextRecord {
    let mut w = [0u64; RECORD_WORDS];
    s.get_into(port, &mut w);
    QpContextRecord::unpack(&w)
}

impl Bench {
    fn new(seed: u64) -> Bench {
        let mut sim = Sim::<Dut>::new().expect("requester_events is exported");
        sim.set_bit(Dut::RESET, true);
        sim.tick();
        sim.set_bit(Dut::RESET, false);
        sim.set_bit(Dut::HOLD_TIMERS, true);
        Bench {
            sim,
            rng: ChaCha8Rng::seed_from_u64(seed ^ 0xE7E7),
            cycles: 0,
            seen: Seen::default(),
            dones: Vec::new(),
            done_cycles: Vec::new(),
            grants: Vec::new(),
            timer_cmds: 0,
            answer: None,
            answer_delay: 0,
        }
    }

    /// One cycle: CQEs and grants taken at random; every output pulse
    /// recorded.
    fn cycle(&mut self) {
        let cqe_ready = self.rng.gen_bool(0.7);
        let grant_ready = self.rng.gen_bool(0.6);
        let s = &mut self.sim;
        s.set_bit(Dut::CQE_READY, cqe_ready);
        s.set_bit(Dut::GRANT_READY, grant_ready);
        s.set_bit(Dut::PLACE_RESULT_VALID, false);
        s.eval();
        // The placement stage's answer: the model's local check, after a
        // random wait.
        if s.get_bit(Dut::PLACE_VALID) {
            if self.answer_delay > 0 {
                self.answer_delay -= 1;
            } else {
                let answer = self
                    .answer
                    .take()
                    .expect("a placement request the model did not make");
                s.set_bit(Dut::PLACE_RESULT_VALID, true);
                s.set_bit(Dut::PLACE_RESULT_ERROR, answer.is_err());
                s.set_u64(
                    Dut::PLACE_RESULT_STATUS,
                    answer.err().map_or(0, wc_status::encode),
                );
            }
        }
        let seen = &mut self.seen;
        if s.get_bit(Dut::CQE_VALID) && cqe_ready {
            seen.cqes.push((
                s.get_u64(Dut::CQE_QPN),
                s.get_u64(Dut::CQE_SLOT),
                wc_status::decode(s.get_u64(Dut::CQE_STATUS)).expect("a WC status"),
                wc_opcode::decode_send(s.get_u64(Dut::CQE_OPCODE)).expect("a send WC opcode"),
                s.get_u64(Dut::CQE_BYTE_LEN) as u32,
            ));
        }
        if s.get_bit(Dut::DONE_VALID) {
            let qpn = s.get_u64(Dut::DONE_QPN);
            let kind = s.get_u64(Dut::DONE_KIND);
            seen.done = Some((
                qpn,
                kind,
                record_words(s, Dut::DONE_RECORD),
                s.get_bit(Dut::DONE_RETRY_UNA_VALID)
                    .then(|| s.get_u64(Dut::DONE_RETRY_UNA) as u32),
                s.get_bit(Dut::DONE_RNR_WAITING),
                s.get_bit(Dut::DONE_ACK_RUNNING),
                s.get_u64(Dut::DONE_GRANT_REFUSAL),
                s.get_u64(Dut::DONE_GRANT_SKIPPED),
            ));
            self.dones.push((qpn, kind));
            self.done_cycles.push(self.cycles);
            if s.get_bit(Dut::SENDABLE_VALID) {
                assert_eq!(s.get_u64(Dut::SENDABLE_QPN), qpn);
                seen.sendable = Some(qpn);
            }
        } else {
            assert!(!s.get_bit(Dut::SENDABLE_VALID), "sendable without done");
        }
        if s.get_bit(Dut::TIMER_CMD_VALID) {
            self.timer_cmds += 1;
            let op = if s.get_bit(Dut::TIMER_CMD_ARM) {
                TIMER_ARM
            } else {
                TIMER_STOP
            };
            seen.timer = Some((
                s.get_u64(Dut::TIMER_CMD_QPN),
                (
                    op,
                    s.get_bit(Dut::TIMER_CMD_KIND),
                    s.get_u64(Dut::TIMER_CMD_CODE),
                ),
            ));
        }
        if s.get_bit(Dut::POST_RESULT_VALID) {
            seen.post = Some((
                s.get_u64(Dut::POST_RESULT_QPN),
                s.get_bit(Dut::POST_RESULT_ACCEPTED),
                s.get_u64(Dut::POST_RESULT_SLOT),
            ));
        }
        if s.get_bit(Dut::PLACE_VALID) {
            let atomic = s.get_bit(Dut::PLACE_ATOMIC);
            seen.place = Some((
                s.get_u64(Dut::PLACE_QPN),
                Place {
                    atomic,
                    slot: s.get_u64(Dut::PLACE_SLOT),
                    lkey: s.get_u64(Dut::PLACE_LKEY) as u32,
                    va: s.get_u64(Dut::PLACE_VA),
                    offset: s.get_u64(Dut::PLACE_OFFSET),
                    len: s.get_u64(Dut::PLACE_LEN),
                    orig: atomic.then(|| s.get_u64(Dut::PLACE_ATOMIC_ORIG)),
                },
            ));
        }
        if s.get_bit(Dut::GRANT_VALID) && grant_ready {
            let g = GrantOut {
                qpn: s.get_u64(Dut::GRANT_QPN),
                wqe: Granted {
                    slot: s.get_u64(Dut::GRANT_SLOT),
                    kind: wqe_kind::decode(s.get_u64(Dut::GRANT_KIND)).expect("a WQE kind"),
                    opcode: wc_opcode::decode_send(s.get_u64(Dut::GRANT_OPCODE))
                        .expect("a send WC opcode"),
                    first_psn: s.get_u64(Dut::GRANT_FIRST_PSN) as u32,
                    npsn: s.get_u64(Dut::GRANT_NPSN) as u32,
                    len: s.get_u64(Dut::GRANT_LEN) as u32,
                    signaled: s.get_bit(Dut::GRANT_SIGNALED),
                    lkey: s.get_u64(Dut::GRANT_LKEY) as u32,
                    va: s.get_u64(Dut::GRANT_LOCAL_VA),
                    resume_psn: s.get_u64(Dut::GRANT_START_PSN) as u32,
                },
                mtu: s.get_u64(Dut::GRANT_MTU),
                una: s.get_u64(Dut::GRANT_UNA) as u32,
                window: s.get_u64(Dut::GRANT_WINDOW),
                ack_req_interval: s.get_u64(Dut::GRANT_ACK_REQ_INTERVAL),
                body: Body {
                    op: s.get_u64(Dut::GRANT_OP),
                    remote_va: s.get_u64(Dut::GRANT_REMOTE_VA),
                    rkey: s.get_u64(Dut::GRANT_RKEY),
                    imm: s.get_u64(Dut::GRANT_IMM),
                    compare: s.get_u64(Dut::GRANT_COMPARE),
                    swap_add: s.get_u64(Dut::GRANT_SWAP_ADD),
                    solicited: s.get_bit(Dut::GRANT_SOLICITED),
                },
            };
            self.seen.grant = Some(g);
            self.grants.push(g);
        }
        self.sim.tick();
        self.cycles += 1;
    }

    fn set_post(&mut self, q: u64, rec: &CompleterRecord, body: &Body) {
        let CompleterEvent::Post { record, sge, .. } = rec.event else {
            unreachable!()
        };
        let s = &mut self.sim;
        s.set_u64(Dut::POST_QPN, q);
        s.set_u64(Dut::POST_KIND, wqe_kind::encode(record.kind));
        s.set_u64(Dut::POST_OPCODE, wc_opcode::encode(record.opcode));
        s.set_u64(Dut::POST_NPSN, record.npsn.into());
        s.set_u64(Dut::POST_LEN, record.len.into());
        s.set_bit(Dut::POST_SIGNALED, record.signaled);
        s.set_u64(Dut::POST_STATUS, record.error.map_or(0, wc_status::encode));
        let sge = sge.unwrap_or(Sge {
            addr: 0,
            length: 0,
            lkey: 0,
        });
        s.set_u64(Dut::POST_LKEY, sge.lkey.into());
        s.set_u64(Dut::POST_VA, sge.addr);
        s.set_u64(Dut::POST_OP, body.op);
        s.set_u64(Dut::POST_REMOTE_VA, body.remote_va);
        s.set_u64(Dut::POST_RKEY, body.rkey);
        s.set_u64(Dut::POST_IMM, body.imm);
        s.set_u64(Dut::POST_COMPARE, body.compare);
        s.set_u64(Dut::POST_SWAP_ADD, body.swap_add);
        s.set_bit(Dut::POST_SOLICITED, body.solicited);
    }

    fn set_response(&mut self, q: u64, rec: &CompleterRecord) {
        let CompleterEvent::Response {
            opcode,
            psn,
            aeth,
            payload_len,
            atomic_orig,
        } = rec.event
        else {
            unreachable!()
        };
        let s = &mut self.sim;
        s.set_u64(Dut::RSP_QPN, q);
        s.set_u64(Dut::RSP_OPCODE, opcode.into());
        s.set_u64(Dut::RSP_PSN, psn.into());
        s.set_bit(Dut::RSP_HAS_AETH, aeth.is_some());
        s.set_u64(
            Dut::RSP_AETH_SYNDROME,
            aeth.map_or(0, |a| a.syndrome.into()),
        );
        s.set_u64(Dut::RSP_PAYLOAD_LEN, payload_len);
        s.set_u64(Dut::RSP_ATOMIC_ORIG, atomic_orig);
    }

    /// Offers `rec` (QP index `q`) on its source and runs to its done,
    /// then until its grant is taken and its CQEs are out.
    fn event(
        &mut self,
        q: u64,
        rec: &CompleterRecord,
        body: &Body,
        answer: Option<Result<(), WcStatus>>,
        at: &str,
    ) -> Seen {
        self.seen = Seen::default();
        self.answer = answer;
        self.answer_delay = self.rng.gen_range(0..=20);
        let start = self.cycles;
        let counts = (self.dones.len(), self.grants.len(), self.timer_cmds);
        let (valid, ready) = match rec.event {
            CompleterEvent::Post { .. } => {
                self.set_post(q, rec, body);
                (Some(Dut::POST_VALID), Some(Dut::POST_READY))
            }
            CompleterEvent::Response { .. } => {
                self.set_response(q, rec);
                (Some(Dut::RSP_VALID), Some(Dut::RSP_READY))
            }
            CompleterEvent::Timer { rnr, ack } => {
                assert!(rnr != ack, "one timer per QP: {at}");
                self.sim.set_u64(Dut::TIMER_FORCE_QPN, q);
                self.sim.set_bit(Dut::TIMER_FORCE_RNR, rnr);
                (Some(Dut::TIMER_FORCE_VALID), Some(Dut::TIMER_FORCE_READY))
            }
            CompleterEvent::Grant { .. } => {
                self.sim.set_u64(Dut::GREQ_QPN, q);
                (Some(Dut::GREQ_VALID), Some(Dut::GREQ_READY))
            }
            CompleterEvent::ToError => {
                self.sim.set_u64(Dut::ERR_QPN, q);
                (Some(Dut::ERR_VALID), Some(Dut::ERR_READY))
            }
            CompleterEvent::Sent {
                next_psn,
                ackreq_end,
                error,
                ..
            } => {
                let s = &mut self.sim;
                s.set_u64(Dut::SENT_QPN, q);
                s.set_u64(Dut::SENT_NEXT_PSN, next_psn.into());
                s.set_bit(Dut::SENT_ACKREQ, ackreq_end.is_some());
                s.set_u64(Dut::SENT_ACKREQ_END, ackreq_end.unwrap_or(0).into());
                s.set_bit(Dut::SENT_ERROR, error.is_some());
                s.set_u64(Dut::SENT_STATUS, error.map_or(0, wc_status::encode));
                s.set_bit(Dut::SENT_VALID, true);
                self.cycle();
                self.sim.set_bit(Dut::SENT_VALID, false);
                (None, None)
            }
            CompleterEvent::Clear => unreachable!("no clear source"),
        };
        if let Some(v) = valid {
            self.sim.set_bit(v, true);
        }
        let mut offered = valid.is_some();
        while self.seen.done.is_none() {
            if offered {
                self.sim.eval();
                if self.sim.get_bit(ready.unwrap()) {
                    self.cycle();
                    self.sim.set_bit(valid.unwrap(), false);
                    offered = false;
                    continue;
                }
            }
            self.cycle();
            assert!(self.cycles - start < 3000, "{at}: stuck");
        }
        assert!(!offered, "{at}: done before taken");
        self.seen.latency = self.cycles - start;
        // Registered pulses follow the done; the grant waits to be taken;
        // the last CQE may still be in the tracker's output register.
        let mut quiet = 0;
        while quiet < 3 {
            let busy = self.sim.get_bit(Dut::CQE_VALID) || self.sim.get_bit(Dut::GRANT_VALID);
            quiet = if busy { 0 } else { quiet + 1 };
            self.cycle();
        }
        assert!(
            self.dones.len() == counts.0 + 1
                && self.grants.len() <= counts.1 + 1
                && self.timer_cmds <= counts.2 + 1,
            "{at}: one done, at most one grant and one timer command"
        );
        std::mem::take(&mut self.seen)
    }

    /// The context record of `q` through the host port (a zero-mask RMW).
    fn read_context(&mut self, q: u64) -> QpContextRecord {
        let s = &mut self.sim;
        s.set_bit(Dut::QP_HOST_VALID, true);
        s.set_u64(Dut::QP_HOST_QPN, q);
        s.set(Dut::QP_HOST_MASK, &[0; RECORD_WORDS]);
        for _ in 0..20 {
            s.eval();
            if s.get_bit(Dut::QP_HOST_DONE) {
                let r = record_words(s, Dut::QP_HOST_OLD);
                s.tick();
                s.set_bit(Dut::QP_HOST_VALID, false);
                s.tick();
                return r;
            }
            s.tick();
        }
        panic!("host read of {q} never done");
    }
}

/// `rec` with the send-side state of `s`.
fn with_sq(mut rec: QpContextRecord, s: &SqSnapshot) -> QpContextRecord {
    rec.state = qp_state::encode(s.state);
    rec.sq_next_psn = s.next_psn;
    rec.sq_send_psn = s.send_psn;
    rec.sq_una_psn = s.una;
    rec.sq_max_sent_psn = s.max_sent_end;
    rec.sq_ackreq_end_psn = s.ackreq_end;
    rec.timeout = s.timeout.into();
    rec.retry_cnt = s.retry_cnt.into();
    rec.rnr_retry = s.rnr_retry.into();
    rec.retry_left = s.retry_left.into();
    rec.rnr_left = s.rnr_left.into();
    rec.path_mtu = mtu::iba_code(s.mtu).unwrap();
    rec.max_rd_atomic = s.max_rd_atomic.into();
    rec
}

fn event_kind(e: &CompleterEvent) -> u64 {
    match e {
        CompleterEvent::Post { .. } => EV_POST,
        CompleterEvent::Response { .. } => EV_RESPONSE,
        CompleterEvent::Timer { .. } => EV_TIMER,
        CompleterEvent::Grant { .. } => EV_GRANT,
        CompleterEvent::Sent { .. } => EV_SENT,
        CompleterEvent::ToError => EV_TO_ERROR,
        CompleterEvent::Clear => unreachable!(),
    }
}

/// One NIC's replay state.
struct Replay<'a> {
    bench: &'a mut Bench,
    base: u64,
    window: u64,
    ack_req_interval: u64,
    /// The record each QP's RAM entry must hold now.
    expected: BTreeMap<u64, QpContextRecord>,
    wr_ids: BTreeMap<(u64, u64), u64>,
    slot_of: BTreeMap<(u64, u32), (u64, Option<Sge>, rocenic_model::send_queue::WqeRecord)>,
    bodies: BTreeMap<(u64, u64), Body>,
    granted: BTreeSet<u64>,
    tally: &'a mut BTreeMap<&'static str, u64>,
    max_latency: u64,
}

impl Replay<'_> {
    fn run(
        &mut self,
        log: &[CompleterRecord],
        responses: &[rocenic_model::completer::ResponseRecord],
        what: &str,
    ) {
        let mut responses = responses.iter();
        for (i, rec) in log.iter().enumerate() {
            if rec.event == CompleterEvent::Clear {
                continue;
            }
            let q = self.base + u64::from(rec.qpn - 0x11);
            let at = format!("{what}: event {i} {rec:?}");
            let after = rec.after.expect("a finished event");
            let want_before = with_sq(self.expected[&q], &rec.before);
            assert_eq!(
                self.expected[&q], want_before,
                "{at}: the RAM's record is not the model's state before"
            );
            let response = match rec.event {
                CompleterEvent::Response { psn, .. } => {
                    let r = responses.next().expect("a response record per response");
                    assert_eq!(r.psn, psn, "{at}");
                    Some(r)
                }
                _ => None,
            };
            let body = Body::random(&mut self.bench.rng);
            let answer = response.and_then(|r| r.placement);
            let got = self.bench.event(q, rec, &body, answer, &at);
            assert!(self.bench.answer.is_none(), "{at}: no placement request");
            self.max_latency = self.max_latency.max(got.latency);
            let (dq, kind, record, retry_una, rnr_waiting, ack_running, refusal, skipped) =
                got.done.expect("a done");
            assert_eq!((dq, kind), (q, event_kind(&rec.event)), "{at}: done");
            let want = with_sq(self.expected[&q], &after);
            assert_eq!(record, want, "{at}: written-back record");
            self.expected.insert(q, want);
            assert_eq!(
                (retry_una, rnr_waiting, ack_running),
                (
                    after.retry_una,
                    after.rnr_until.is_some(),
                    after.ack_timer.is_some()
                ),
                "{at}: side state"
            );
            // The timer command (one per event at most, for the QP).
            let timer = match got.timer {
                Some((tq, t)) => {
                    assert_eq!(tq, q, "{at}: timer command QP");
                    t
                }
                None => (TIMER_NONE, false, 0),
            };
            match expected_timer(rec, &after) {
                Some(t) => assert_eq!(timer, t, "{at}: timer"),
                None if after.ack_timer.is_some() => assert!(
                    timer == (TIMER_NONE, false, 0)
                        || timer == (TIMER_ARM, false, rec.before.timeout.into()),
                    "{at}: timer {timer:?}"
                ),
                None => assert!(
                    timer.0 == TIMER_NONE || timer.0 == TIMER_STOP,
                    "{at}: timer {timer:?}"
                ),
            }
            if timer.0 != TIMER_NONE {
                *self.tally.entry("timer commands").or_insert(0) += 1;
            }
            // Placement.
            let place = response.and_then(|r| {
                let (offset, len, orig) = match r.wqe_outcome {
                    Some(WqeOutcome::Read(Ok(p))) => (p.offset, p.len, None),
                    Some(WqeOutcome::Atomic(Ok(()))) => {
                        let CompleterEvent::Response { atomic_orig, .. } = rec.event else {
                            unreachable!()
                        };
                        (0, 8, Some(atomic_orig))
                    }
                    _ => return None,
                };
                let (slot, sge, _) = self.slot_of[&(q, r.wqe.expect("a WQE").first_psn)];
                let sge = sge.expect("a local buffer");
                Some((
                    q,
                    Place {
                        atomic: orig.is_some(),
                        slot,
                        lkey: sge.lkey,
                        va: sge.addr.wrapping_add(offset),
                        offset,
                        len,
                        orig,
                    },
                ))
            });
            assert_eq!(got.place, place, "{at}: placement");
            if place.is_some() {
                *self.tally.entry("placements").or_insert(0) += 1;
            }
            // Post result.
            match rec.event {
                CompleterEvent::Post { record, wr_id, sge } => {
                    let (pq, accepted, slot) =
                        got.post.unwrap_or_else(|| panic!("{at}: no post result"));
                    assert!(pq == q && accepted, "{at}: post refused");
                    self.wr_ids.insert((q, slot), wr_id);
                    self.slot_of
                        .insert((q, record.first_psn), (slot, sge, record));
                    self.bodies.insert((q, slot), body);
                    *self.tally.entry("posts").or_insert(0) += 1;
                }
                _ => assert!(got.post.is_none(), "{at}: a post result"),
            }
            // Grant.
            match rec.event {
                CompleterEvent::Grant { wqe, skipped: sk } => {
                    assert_eq!(skipped, u64::from(sk), "{at}: skipped");
                    match wqe {
                        Ok(first) => {
                            let (slot, sge, r) = self.slot_of[&(q, first)];
                            let sge = sge.expect("a granted WQE has a buffer");
                            let want = GrantOut {
                                qpn: q,
                                wqe: Granted {
                                    slot,
                                    kind: r.kind,
                                    opcode: r.opcode,
                                    first_psn: r.first_psn,
                                    npsn: r.npsn,
                                    len: r.len,
                                    signaled: r.signaled,
                                    lkey: sge.lkey,
                                    va: sge.addr,
                                    resume_psn: after.send_psn,
                                },
                                mtu: mtu::iba_code(after.mtu).unwrap().into(),
                                una: after.una,
                                window: self.window,
                                ack_req_interval: self.ack_req_interval,
                                body: self.bodies[&(q, slot)],
                            };
                            assert_eq!(got.grant, Some(want), "{at}: grant");
                            self.granted.insert(q);
                            *self.tally.entry("grants").or_insert(0) += 1;
                        }
                        Err(why) => {
                            assert!(got.grant.is_none(), "{at}: a refused grant went out");
                            let code = grant_refusal::encode(Err(why));
                            assert_eq!(refusal, code, "{at}: refusal");
                            *self.tally.entry("grants refused").or_insert(0) += 1;
                        }
                    }
                }
                _ => assert!(
                    got.grant.is_none(),
                    "{at}: a grant out of a non-grant event"
                ),
            }
            if let CompleterEvent::Sent { .. } = rec.event {
                assert!(self.granted.remove(&q), "{at}: a sent without its grant");
                *self.tally.entry("sent statuses").or_insert(0) += 1;
            }
            // Sendable.
            let sendable = may_send(
                after.state,
                after.rnr_until.is_some(),
                after.send_psn,
                after.next_psn,
            )
            .is_ok()
                && !matches!(rec.event, CompleterEvent::Grant { .. })
                && !self.granted.contains(&q);
            assert_eq!(got.sendable, sendable.then_some(q), "{at}: sendable");
            if sendable {
                *self.tally.entry("sendable").or_insert(0) += 1;
            }
            // CQEs.
            let cqes: Vec<SendCqe> = got
                .cqes
                .iter()
                .map(|&(cq, slot, status, opcode, byte_len)| {
                    assert_eq!(cq, q, "{at}: CQE of another QP");
                    SendCqe {
                        wr_id: self.wr_ids[&(q, slot)],
                        status,
                        opcode,
                        byte_len,
                    }
                })
                .collect();
            assert_eq!(cqes, rec.cqes, "{at}: CQEs");
            *self.tally.entry("CQEs").or_insert(0) += cqes.len() as u64;
            *self.tally.entry("events").or_insert(0) += 1;
        }
        assert!(responses.next().is_none(), "{what}: responses left over");
    }
}

#[test]
fn model_traces_replayed_through_the_sources_match() {
    let mut tally = BTreeMap::new();
    let mut max_latency = 0;
    let mut cycles = 0;
    // One MTU per loss rate, and a 6-PSN window (grants the window holds
    // back, a local protection error at transmit).
    let runs = [
        (1024u32, 0.0, None),
        (256, 0.08, None),
        (4096, 0.3, None),
        (1024, 0.08, Some(6)),
    ];
    for (n, (mtu, loss, window)) in runs.into_iter().enumerate() {
        let seed = 0xE7_0000 ^ (n as u64) << 8 ^ (loss * 100.0) as u64;
        let trace = model_trace_full(
            seed,
            mtu,
            FaultConfig::lossy(loss, 4_000),
            window.map_or(Twist::None, Twist::Window),
        );
        let mut bench = Bench::new(seed);
        let what = format!("seed {seed:#x}, MTU {mtu}, loss {loss}, window {window:?}");
        // Program every QP once: the model's context, with the send-side
        // state its first event found.
        let mut expected = [BTreeMap::new(), BTreeMap::new()];
        for (side, expected) in expected.iter_mut().enumerate() {
            let base = side as u64 * 16;
            for (&qpn, view) in &trace.contexts[side] {
                let first = trace.logs[side]
                    .0
                    .iter()
                    .find(|r| r.qpn == qpn)
                    .expect("every QP has events");
                let rec = with_sq(context_record(view), &first.before);
                let q = base + u64::from(qpn - 0x11);
                write_context(&mut bench.sim, q as u32, &rec).unwrap();
                expected.insert(q, rec);
            }
        }
        for side in 0..2 {
            bench
                .sim
                .set_u64(Dut::CFG_WINDOW, send_window(trace.window[side]).into());
            bench.sim.set_u64(
                Dut::CFG_ACK_REQ_INTERVAL,
                trace.ack_req_interval[side].into(),
            );
            let mut replay = Replay {
                bench: &mut bench,
                base: side as u64 * 16,
                window: send_window(trace.window[side]).into(),
                ack_req_interval: trace.ack_req_interval[side].into(),
                expected: std::mem::take(&mut expected[side]),
                wr_ids: BTreeMap::new(),
                slot_of: BTreeMap::new(),
                bodies: BTreeMap::new(),
                granted: BTreeSet::new(),
                tally: &mut tally,
                max_latency: 0,
            };
            let (log, responses) = &trace.logs[side];
            replay.run(log, responses, &format!("{what}, NIC {side}"));
            replay.run(&trace.ends[side], &[], &format!("{what}, end, NIC {side}"));
            max_latency = max_latency.max(replay.max_latency);
            let expected = replay.expected;
            for (&q, want) in &expected {
                assert_eq!(bench.read_context(q), *want, "{what}: final context of {q}");
            }
            *tally.entry("final records").or_insert(0) += expected.len() as u64;
        }
        cycles += bench.cycles;
    }
    eprintln!("{cycles} cycles, at most {max_latency} per event; {tally:?}");
    for k in [
        "posts",
        "grants",
        "grants refused",
        "sent statuses",
        "placements",
        "sendable",
        "timer commands",
    ] {
        assert!(tally.get(k).copied().unwrap_or(0) > 0, "{k}: {tally:?}");
    }
    assert!(tally["events"] > 5_000, "{tally:?}");
}

/// A QP in RTS with nothing outstanding, PSNs from `psn`.
fn rts_record(psn: u32) -> QpContextRecord {
    QpContextRecord {
        state: 3,
        path_mtu: 5,
        sq_next_psn: psn,
        sq_send_psn: psn,
        sq_una_psn: psn,
        sq_max_sent_psn: psn,
        sq_ackreq_end_psn: psn,
        timeout: 6,
        retry_cnt: 7,
        rnr_retry: 7,
        retry_left: 7,
        rnr_left: 7,
        max_rd_atomic: 4,
        ..QpContextRecord::default()
    }
}

/// A one-packet signaled SEND posted to `q` (offered, not waited for).
fn offer_post(s: &mut Sim<Dut>, q: u64) {
    s.set_u64(Dut::POST_QPN, q);
    s.set_u64(Dut::POST_KIND, 0);
    s.set_u64(Dut::POST_OPCODE, 0);
    s.set_u64(Dut::POST_NPSN, 1);
    s.set_u64(Dut::POST_LEN, 100);
    s.set_bit(Dut::POST_SIGNALED, true);
    s.set_u64(Dut::POST_STATUS, 0);
    s.set_u64(Dut::POST_LKEY, 0x1234);
    s.set_u64(Dut::POST_VA, 0x10_0000 + q * 0x1000);
    s.set_u64(Dut::POST_REMOTE_VA, q);
    s.set_bit(Dut::POST_VALID, true);
}

/// An ACK of PSN `psn` for `q` (offered).
fn offer_ack(s: &mut Sim<Dut>, q: u64, psn: u32) {
    s.set_u64(Dut::RSP_QPN, q);
    s.set_u64(Dut::RSP_OPCODE, 0x11);
    s.set_u64(Dut::RSP_PSN, psn.into());
    s.set_bit(Dut::RSP_HAS_AETH, true);
    s.set_u64(Dut::RSP_AETH_SYNDROME, 0x1F);
    s.set_u64(Dut::RSP_PAYLOAD_LEN, 0);
    s.set_bit(Dut::RSP_VALID, true);
}

/// Runs until `valid`'s source is taken (clears it), at most `limit`
/// cycles; false if it was not.
fn until_taken(
    b: &mut Bench,
    valid: verilator_sys::Input<Dut>,
    ready: verilator_sys::Output<Dut>,
    limit: u64,
) -> bool {
    for _ in 0..limit {
        b.sim.eval();
        let taken = b.sim.get_bit(ready);
        b.cycle();
        if taken {
            b.sim.set_bit(valid, false);
            return true;
        }
    }
    false
}

/// QPs 7 (next PSN 100) and 8 (500) in RTS, one SEND posted to QP 7.
fn two_qps_one_post(seed: u64) -> (Bench, u64, u64) {
    let mut b = Bench::new(seed);
    let (q, other) = (7u64, 8u64);
    write_context(&mut b.sim, q as u32, &rts_record(100)).unwrap();
    write_context(&mut b.sim, other as u32, &rts_record(500)).unwrap();
    offer_post(&mut b.sim, q);
    assert!(until_taken(&mut b, Dut::POST_VALID, Dut::POST_READY, 50));
    (b, q, other)
}

#[test]
fn a_response_waits_while_its_qp_is_granted() {
    let (mut b, qa, qb) = two_qps_one_post(7);
    assert!(grant_within(&mut b, qa, 100));
    for _ in 0..60 {
        b.cycle();
    }
    let g = *b.grants.last().expect("QP 7 granted");
    assert_eq!((g.qpn, g.wqe.first_psn, g.body.remote_va), (qa, 100, qa));
    b.dones.clear();
    // While granted: its ACK waits; a post to it and another QP's move to
    // ERR go on.
    offer_ack(&mut b.sim, qa, 100);
    offer_post(&mut b.sim, qa);
    b.sim.set_u64(Dut::ERR_QPN, qb);
    b.sim.set_bit(Dut::ERR_VALID, true);
    let mut waited = 0;
    for _ in 0..400 {
        b.sim.eval();
        assert!(
            !b.sim.get_bit(Dut::RSP_READY),
            "the ACK was taken while granted"
        );
        for (v, r) in [
            (Dut::POST_VALID, Dut::POST_READY),
            (Dut::ERR_VALID, Dut::ERR_READY),
        ] {
            if b.sim.get_bit(r) {
                b.sim.set_bit(v, false);
            }
        }
        b.cycle();
        waited += 1;
    }
    b.dones.sort();
    assert_eq!(b.dones, [(qa, EV_POST), (qb, EV_TO_ERROR)], "{waited}");
    // The sent status ends the grant; the ACK goes in after it.
    offer_sent(&mut b, qa, 101);
    b.seen = Seen::default();
    assert!(until_taken(&mut b, Dut::RSP_VALID, Dut::RSP_READY, 200));
    for _ in 0..100 {
        b.cycle();
    }
    assert_eq!(
        b.dones,
        [
            (qa, EV_POST),
            (qb, EV_TO_ERROR),
            (qa, EV_SENT),
            (qa, EV_RESPONSE)
        ]
    );
    // The ACK completed the granted SEND (signaled, slot 0).
    assert!(
        b.seen
            .cqes
            .iter()
            .any(|c| c.0 == qa && c.1 == 0 && c.2 == WcStatus::Success),
        "{:?}",
        b.seen.cqes
    );
}

#[test]
fn a_qp_whose_response_waits_is_not_granted_first() {
    let (mut b, q, other) = two_qps_one_post(11);
    // Another QP's response is served: the grant source is next in turn.
    offer_ack(&mut b.sim, other, 499);
    assert!(until_taken(&mut b, Dut::RSP_VALID, Dut::RSP_READY, 50));
    // QP 7's grant request and its ACK (a duplicate: dropped) come
    // together. A grant taken first would hold the ACK back until the
    // grant's packets are decided, and Go-Back-N after a NAK would send
    // them again.
    offer_ack(&mut b.sim, q, 99);
    b.sim.set_u64(Dut::GREQ_QPN, q);
    b.sim.set_bit(Dut::GREQ_VALID, true);
    for _ in 0..200 {
        b.sim.eval();
        let taken = [
            (Dut::RSP_VALID, b.sim.get_bit(Dut::RSP_READY)),
            (Dut::GREQ_VALID, b.sim.get_bit(Dut::GREQ_READY)),
        ];
        b.cycle();
        for (valid, _) in taken.into_iter().filter(|t| t.1) {
            b.sim.set_bit(valid, false);
        }
    }
    assert_eq!(
        b.dones,
        [
            (q, EV_POST),
            (other, EV_RESPONSE),
            (q, EV_RESPONSE),
            (q, EV_GRANT)
        ]
    );
}

/// Ends QP `q`'s grant: its sent status with the send cursor at `next`.
fn offer_sent(b: &mut Bench, q: u64, next: u32) {
    let s = &mut b.sim;
    s.set_u64(Dut::SENT_QPN, q);
    s.set_u64(Dut::SENT_NEXT_PSN, next.into());
    s.set_bit(Dut::SENT_ACKREQ, true);
    s.set_u64(Dut::SENT_ACKREQ_END, next.into());
    s.set_bit(Dut::SENT_ERROR, false);
    s.set_bit(Dut::SENT_VALID, true);
    b.cycle();
    b.sim.set_bit(Dut::SENT_VALID, false);
}

/// Asks for a grant of `q` and runs until it is taken (true) or `limit`
/// cycles have passed with the request still waiting (false).
fn grant_within(b: &mut Bench, q: u64, limit: u64) -> bool {
    b.sim.set_u64(Dut::GREQ_QPN, q);
    b.sim.set_bit(Dut::GREQ_VALID, true);
    until_taken(b, Dut::GREQ_VALID, Dut::GREQ_READY, limit)
}

#[test]
fn a_grant_of_several_packets_in_flight_holds_the_next_grant() {
    let mut b = Bench::new(9);
    let (long, short_a, short_b) = (3u64, 4u64, 5u64);
    for (q, psn) in [(long, 100), (short_a, 300), (short_b, 500)] {
        write_context(&mut b.sim, q as u32, &rts_record(psn)).unwrap();
        offer_post(&mut b.sim, q);
        if q == long {
            b.sim.set_u64(Dut::POST_NPSN, 4);
            b.sim.set_u64(Dut::POST_LEN, 4 * 4096);
        }
        assert!(until_taken(&mut b, Dut::POST_VALID, Dut::POST_READY, 50));
    }
    // One-packet grants do not hold the next grant.
    assert!(grant_within(&mut b, short_a, 100));
    assert!(grant_within(&mut b, long, 100));
    // The 4-packet grant holds every other until its status is taken.
    assert!(
        !grant_within(&mut b, short_b, 400),
        "granted behind a long grant"
    );
    offer_sent(&mut b, long, 104);
    assert!(until_taken(&mut b, Dut::GREQ_VALID, Dut::GREQ_READY, 100));
    for _ in 0..60 {
        b.cycle();
    }
    let granted: Vec<u64> = b.grants.iter().map(|g| g.qpn).collect();
    assert_eq!(granted, [short_a, long, short_b]);
}

#[test]
fn every_source_is_served_round_robin() {
    const N: u64 = 12;
    let mut b = Bench::new(11);
    // Posts to QPs 100.., ACKs out of the window (dropped) to 200..,
    // forced ACK timeouts (nothing outstanding) to 300.., grant requests
    // for 400.. (each with a WQE posted first), moves to ERR of 500..;
    // each granted QP's sent status pulsed once its grant is taken.
    for group in 1..=5u64 {
        for i in 0..N {
            write_context(&mut b.sim, (group * 100 + i) as u32, &rts_record(1000)).unwrap();
        }
    }
    for i in 0..N {
        offer_post(&mut b.sim, 400 + i);
        assert!(until_taken(&mut b, Dut::POST_VALID, Dut::POST_READY, 100));
    }
    for _ in 0..100 {
        b.cycle();
    }
    b.dones.clear();
    let sources = [
        (Dut::POST_VALID, Dut::POST_READY),
        (Dut::RSP_VALID, Dut::RSP_READY),
        (Dut::TIMER_FORCE_VALID, Dut::TIMER_FORCE_READY),
        (Dut::GREQ_VALID, Dut::GREQ_READY),
        (Dut::ERR_VALID, Dut::ERR_READY),
    ];
    let mut next = [0u64; 5];
    let offer = |s: &mut Sim<Dut>, k: usize, i: u64| match k {
        0 => offer_post(s, 100 + i),
        1 => offer_ack(s, 200 + i, 5000),
        2 => {
            s.set_u64(Dut::TIMER_FORCE_QPN, 300 + i);
            s.set_bit(Dut::TIMER_FORCE_RNR, false);
            s.set_bit(Dut::TIMER_FORCE_VALID, true);
        }
        3 => {
            s.set_u64(Dut::GREQ_QPN, 400 + i);
            s.set_bit(Dut::GREQ_VALID, true);
        }
        _ => {
            s.set_u64(Dut::ERR_QPN, 500 + i);
            s.set_bit(Dut::ERR_VALID, true);
        }
    };
    for k in 0..5 {
        offer(&mut b.sim, k, 0);
    }
    let mut sent = 0;
    for _ in 0..20_000 {
        b.sim.eval();
        let taken: Vec<usize> = (0..sources.len())
            .filter(|&k| next[k] < N && b.sim.get_bit(sources[k].1))
            .collect();
        let grants = b.grants.len();
        b.cycle();
        for k in taken {
            next[k] += 1;
            b.sim.set_bit(sources[k].0, false);
        }
        for (k, &n) in next.iter().enumerate() {
            if n < N && !b.sim.get_bit(sources[k].0) {
                offer(&mut b.sim, k, n);
            }
        }
        if b.grants.len() > grants {
            let g = *b.grants.last().unwrap();
            let s = &mut b.sim;
            s.set_u64(Dut::SENT_QPN, g.qpn);
            s.set_u64(Dut::SENT_NEXT_PSN, 1001);
            s.set_bit(Dut::SENT_ACKREQ, false);
            s.set_bit(Dut::SENT_ERROR, false);
            s.set_bit(Dut::SENT_VALID, true);
            b.cycle();
            b.sim.set_bit(Dut::SENT_VALID, false);
            sent += 1;
        }
        if b.dones.len() as u64 == 6 * N {
            break;
        }
    }
    let count = |kind| b.dones.iter().filter(|d| d.1 == kind).count() as u64;
    for kind in [
        EV_POST,
        EV_RESPONSE,
        EV_TIMER,
        EV_GRANT,
        EV_SENT,
        EV_TO_ERROR,
    ] {
        assert_eq!(count(kind), N, "kind {kind}: {:?}", b.dones);
    }
    assert_eq!(sent, N);
    // While the post, response, timer and ERR sources all still had
    // events, each was served once in every six events at least.
    let last_full = [EV_POST, EV_RESPONSE, EV_TIMER, EV_TO_ERROR]
        .map(|k| b.dones.iter().rposition(|d| d.1 == k).unwrap())
        .into_iter()
        .min()
        .unwrap();
    for kind in [EV_POST, EV_RESPONSE, EV_TIMER, EV_TO_ERROR] {
        let at: Vec<usize> = b.dones[..=last_full]
            .iter()
            .enumerate()
            .filter(|(_, d)| d.1 == kind)
            .map(|(i, _)| i)
            .collect();
        assert!(at[0] < 6, "kind {kind} first at {}: {:?}", at[0], b.dones);
        for w in at.windows(2) {
            assert!(w[1] - w[0] <= 6, "kind {kind} waited: {:?}", b.dones);
        }
    }
    eprintln!(
        "round robin order: {:?}",
        b.dones.iter().map(|d| d.1).collect::<Vec<_>>()
    );
}

/// The completer's latency for a post in RTS: the edges from the cycle
/// it takes the event to the cycle of its `done_valid` (the five cycles
/// `completer_datapath`'s doc counts, both ends included).
const POST_LATENCY: u64 = 4;

/// Offers `n` one-packet posts back to back to the QPs of `qps` in turn
/// and returns the cycles from the first post's done to the last one's.
fn posts_done_span(qps: &[u64], n: usize) -> u64 {
    let mut b = Bench::new(13);
    for &q in qps {
        write_context(&mut b.sim, q as u32, &rts_record(100)).unwrap();
    }
    for i in 0..n {
        offer_post(&mut b.sim, qps[i % qps.len()]);
        assert!(
            until_taken(&mut b, Dut::POST_VALID, Dut::POST_READY, 100),
            "post {i} not taken"
        );
    }
    for _ in 0..50 {
        b.cycle();
    }
    assert_eq!(b.dones.len(), n, "{:?}", b.dones);
    assert!(b.dones.iter().all(|d| d.1 == EV_POST), "{:?}", b.dones);
    b.done_cycles[n - 1] - b.done_cycles[0]
}

#[test]
fn the_next_event_is_looked_up_while_the_completer_works() {
    const N: usize = 12;
    // Another QP's event is picked and looked up while the completer
    // works; it enters in the done's own cycle, while the done's
    // write-back is still to come.
    let alternating = posts_done_span(&[20, 21], N);
    assert_eq!(alternating, (N as u64 - 1) * POST_LATENCY);
    // The same QP's next event enters after the done is out (its lookup
    // sees the write-back): four cycles more.
    let one_qp = posts_done_span(&[20], N);
    assert_eq!(one_qp, (N as u64 - 1) * (POST_LATENCY + 4));
}
