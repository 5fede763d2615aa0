//! Completer datapath lockstep: the Verilated `CompleterDatapath` (1024
//! QPs x 16 slots) replays every completer event two model NICs recorded
//! while exchanging SEND / WRITE / READ / atomics over links with loss,
//! duplication and reordering up to 30 % (RNR NAKs from late receive WQEs,
//! a remote access NAK that moves a QP to ERR, ACK timeouts, Go-Back-N,
//! retries exhausted), then a post to every QP in ERR and every QP back
//! to RESET: every send
//! WQE posted, every response packet, every timer that fired, every
//! transmit grant (the WQE the requester starts sending from, or why it
//! sends nothing) and its sent status (the packets it sent from that WQE
//! in a row), one run with a 6-PSN window so the window holds grants back
//! (`Nic::record_completer`, with the QP's send-side state before and
//! after each event and the send CQEs it wrote; `Nic::record_responses`
//! for the READ / atomic placement). Each event goes in with the context
//! fields the model had before it, as the core's event arbiter supplies
//! them; its context write-back, the completer's side state (retry una,
//! RNR wait, ACK timer running), its timer command, its placement, its
//! grant (WQE slot, record, local buffer, resume PSN, WQEs skipped, or the
//! refusal) and its CQEs (slot mapped back to wr_id, as the host does;
//! CQE output stalled at random) must be the model's. Each placement
//! request (which must be the model's, stable while it waits) is answered
//! after 0 to 20 cycles (at random) with the model's local check
//! (`ResponseRecord::placement`); a second test adds READs and atomics
//! whose local MR changes while the request is in flight, so the model's
//! check fails (LocProtErr) and the RTL must fail the WQE and move the QP
//! to ERR as the model does.

use crate::rtl_common;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rocenic_fabric::FaultConfig;
use rocenic_hdl::codes::{grant_refusal, mtu, qp_state, wc_opcode, wc_status, wqe_kind};
use rocenic_hdl::requester::completer_datapath::*;
use rocenic_model::completer::{CompleterEvent, CompleterRecord, ResponseRecord, WqeOutcome};
use rocenic_model::requester::GrantRefusal;
use rocenic_model::send_queue::{SendCqe, WqeRecord};
use rocenic_model::verbs::{QpState, Sge, WcOpcode, WcStatus};
use rtl_common::completer::*;
use std::collections::BTreeMap;
use verilator_sys::{CompleterDatapath as Dut, Sim};

#[derive(Clone, Debug, PartialEq, Eq)]
struct Done {
    qpn: u64,
    wb: WriteBack,
    timer: Timer,
    place: Option<Place>,
    post: Option<u64>,
    /// The grant outputs: the WQE or the refusal, and the WQEs skipped.
    grant: (Result<Granted, u64>, u64),
}

struct Bench {
    sim: Sim<Dut>,
    rng: ChaCha8Rng,
    ready_rate: f64,
    /// Every CQE the RTL emitted during the current event: (qpn, slot,
    /// status, opcode, byte_len).
    emitted: Vec<(u64, u64, WcStatus, WcOpcode, u32)>,
    events: u64,
    cycles: u64,
    max_cycles: u64,
    /// Cycles from an event offered to its done: the last one.
    last_latency: u64,
    /// Cycles the placement answer waited: the last one.
    last_place_delay: u64,
}

/// How the test answers a placement request: the model's local check.
type PlaceAnswer = Result<(), WcStatus>;

impl Bench {
    fn new(seed: u64, ready_rate: f64) -> Bench {
        let mut sim = Sim::<Dut>::new().expect("completer_datapath is exported");
        sim.set_bit(Dut::RESET, true);
        sim.tick();
        sim.set_bit(Dut::RESET, false);
        Bench {
            sim,
            rng: ChaCha8Rng::seed_from_u64(seed ^ 0xC0DA),
            ready_rate,
            emitted: Vec::new(),
            events: 0,
            cycles: 0,
            max_cycles: 0,
            last_latency: 0,
            last_place_delay: 0,
        }
    }

    fn drive(&mut self, q: u64, rec: &CompleterRecord) {
        let s = &mut self.sim;
        let b = &rec.before;
        // Inputs an event does not use carry garbage.
        let g = self.rng.gen::<u64>();
        s.set_u64(Dut::EV_QPN, q);
        s.set_u64(Dut::PKT_OPCODE, g & 0xFF);
        s.set_u64(Dut::PKT_PSN, (g >> 8) & 0xFF_FFFF);
        s.set_bit(Dut::PKT_HAS_AETH, g & 1 != 0);
        s.set_u64(Dut::PKT_AETH_SYNDROME, (g >> 32) & 0xFF);
        s.set_u64(Dut::PKT_PAYLOAD_LEN, g >> 40);
        s.set_u64(Dut::PKT_ATOMIC_ORIG, g.rotate_left(7));
        s.set_bit(Dut::TIMER_RNR, g & 2 != 0);
        s.set_u64(Dut::POST_KIND, (g >> 3) & 3);
        s.set_u64(Dut::POST_OPCODE, (g >> 5) & 7);
        s.set_u64(Dut::POST_NPSN, (g >> 12) & 0xFF_FFFF);
        s.set_u64(Dut::POST_LEN, g >> 20);
        s.set_bit(Dut::POST_SIGNALED, g & 4 != 0);
        s.set_u64(Dut::POST_STATUS, (g >> 50) & 0xF);
        s.set_u64(Dut::POST_LKEY, g >> 17);
        s.set_u64(Dut::POST_VA, g.rotate_left(23));
        s.set_u64(Dut::CTX_STATE, qp_state::encode(b.state).into());
        s.set_u64(Dut::CTX_NEXT_PSN, b.next_psn.into());
        s.set_u64(Dut::CTX_SEND_PSN, b.send_psn.into());
        s.set_u64(Dut::CTX_UNA_PSN, b.una.into());
        s.set_u64(Dut::CTX_MAX_SENT_PSN, b.max_sent_end.into());
        s.set_u64(Dut::CTX_ACKREQ_END_PSN, b.ackreq_end.into());
        s.set_u64(Dut::CTX_TIMEOUT, b.timeout.into());
        s.set_u64(Dut::CTX_RETRY_CNT, b.retry_cnt.into());
        s.set_u64(Dut::CTX_RNR_RETRY, b.rnr_retry.into());
        s.set_u64(Dut::CTX_RETRY_LEFT, b.retry_left.into());
        s.set_u64(Dut::CTX_RNR_LEFT, b.rnr_left.into());
        s.set_u64(Dut::CTX_PATH_MTU, mtu::iba_code(b.mtu).unwrap().into());
        s.set_u64(Dut::CTX_MAX_RD_ATOMIC, b.max_rd_atomic.into());
        s.set_u64(Dut::SENT_NEXT_PSN, (g >> 5) & 0xFF_FFFF);
        s.set_bit(Dut::SENT_ACKREQ, g & 8 != 0);
        s.set_u64(Dut::SENT_ACKREQ_END, (g >> 29) & 0xFF_FFFF);
        s.set_bit(Dut::SENT_ERROR, g & 16 != 0);
        s.set_u64(Dut::SENT_STATUS, (g >> 56) & 0xF);
        match rec.event {
            CompleterEvent::Post { record, sge, .. } => {
                s.set_u64(Dut::EV_KIND, EV_POST);
                if let Some(sge) = sge {
                    s.set_u64(Dut::POST_LKEY, sge.lkey.into());
                    s.set_u64(Dut::POST_VA, sge.addr);
                }
                s.set_u64(Dut::POST_KIND, wqe_kind::encode(record.kind));
                s.set_u64(Dut::POST_OPCODE, wc_opcode::encode(record.opcode));
                s.set_u64(Dut::POST_NPSN, record.npsn.into());
                s.set_u64(Dut::POST_LEN, record.len.into());
                s.set_bit(Dut::POST_SIGNALED, record.signaled);
                s.set_u64(Dut::POST_STATUS, record.error.map_or(0, wc_status::encode));
            }
            CompleterEvent::Response {
                opcode,
                psn,
                aeth,
                payload_len,
                atomic_orig,
            } => {
                s.set_u64(Dut::EV_KIND, EV_RESPONSE);
                s.set_u64(Dut::PKT_OPCODE, opcode.into());
                s.set_u64(Dut::PKT_PSN, psn.into());
                s.set_bit(Dut::PKT_HAS_AETH, aeth.is_some());
                if let Some(a) = aeth {
                    s.set_u64(Dut::PKT_AETH_SYNDROME, a.syndrome.into());
                }
                s.set_u64(Dut::PKT_PAYLOAD_LEN, payload_len);
                s.set_u64(Dut::PKT_ATOMIC_ORIG, atomic_orig);
            }
            CompleterEvent::Timer { rnr, ack } => {
                assert!(rnr != ack, "one timer per QP: {rec:?}");
                s.set_u64(Dut::EV_KIND, EV_TIMER);
                s.set_bit(Dut::TIMER_RNR, rnr);
            }
            CompleterEvent::Grant { .. } => s.set_u64(Dut::EV_KIND, EV_GRANT),
            CompleterEvent::Sent {
                next_psn,
                ackreq_end,
                error,
                ..
            } => {
                s.set_u64(Dut::EV_KIND, EV_SENT);
                s.set_u64(Dut::SENT_NEXT_PSN, next_psn.into());
                s.set_bit(Dut::SENT_ACKREQ, ackreq_end.is_some());
                if let Some(end) = ackreq_end {
                    s.set_u64(Dut::SENT_ACKREQ_END, end.into());
                }
                s.set_bit(Dut::SENT_ERROR, error.is_some());
                if let Some(e) = error {
                    s.set_u64(Dut::SENT_STATUS, wc_status::encode(e));
                }
            }
            CompleterEvent::Clear => s.set_u64(Dut::EV_KIND, EV_CLEAR),
            CompleterEvent::ToError => s.set_u64(Dut::EV_KIND, EV_TO_ERROR),
        }
    }

    /// One cycle: CQEs taken at random.
    fn cycle(&mut self) {
        let ready = self.rng.gen_bool(self.ready_rate);
        self.sim.set_bit(Dut::CQE_READY, ready);
        self.sim.eval();
        if self.sim.get_bit(Dut::CQE_VALID) && ready {
            let s = &self.sim;
            self.emitted.push((
                s.get_u64(Dut::CQE_QPN),
                s.get_u64(Dut::CQE_SLOT),
                wc_status::decode(s.get_u64(Dut::CQE_STATUS)).expect("a WC status"),
                wc_opcode::decode_send(s.get_u64(Dut::CQE_OPCODE)).expect("a send WC opcode"),
                s.get_u64(Dut::CQE_BYTE_LEN) as u32,
            ));
        }
    }

    fn observe(&self) -> Done {
        let s = &self.sim;
        let retry_una_valid = s.get_bit(Dut::DONE_RETRY_UNA_VALID);
        Done {
            qpn: s.get_u64(Dut::DONE_QPN),
            wb: WriteBack {
                state: s.get_u64(Dut::WB_STATE),
                next_psn: s.get_u64(Dut::WB_NEXT_PSN) as u32,
                send_psn: s.get_u64(Dut::WB_SEND_PSN) as u32,
                una: s.get_u64(Dut::WB_UNA_PSN) as u32,
                ackreq_end: s.get_u64(Dut::WB_ACKREQ_END_PSN) as u32,
                max_sent_end: s.get_u64(Dut::WB_MAX_SENT_PSN) as u32,
                retry_left: s.get_u64(Dut::WB_RETRY_LEFT) as u8,
                rnr_left: s.get_u64(Dut::WB_RNR_LEFT) as u8,
                retry_una: retry_una_valid.then(|| s.get_u64(Dut::DONE_RETRY_UNA) as u32),
                rnr_waiting: s.get_bit(Dut::DONE_RNR_WAITING),
                ack_running: s.get_bit(Dut::DONE_ACK_RUNNING),
            },
            timer: (
                s.get_u64(Dut::TIMER_OP),
                s.get_bit(Dut::TIMER_KIND),
                s.get_u64(Dut::TIMER_CODE),
            ),
            // Filled in by `event` from the request it answered.
            place: None,
            post: s
                .get_bit(Dut::POST_ACCEPTED)
                .then(|| s.get_u64(Dut::POST_SLOT)),
            grant: (
                if s.get_bit(Dut::GRANT_VALID) {
                    assert_eq!(s.get_u64(Dut::GRANT_REFUSAL), grant_refusal::OK);
                    Ok(Granted {
                        slot: s.get_u64(Dut::GRANT_SLOT),
                        kind: wqe_kind::decode(s.get_u64(Dut::GRANT_KIND)).expect("a WQE kind"),
                        opcode: wc_opcode::decode_send(s.get_u64(Dut::GRANT_OPCODE))
                            .expect("a send WC opcode"),
                        first_psn: s.get_u64(Dut::GRANT_FIRST_PSN) as u32,
                        npsn: s.get_u64(Dut::GRANT_NPSN) as u32,
                        len: s.get_u64(Dut::GRANT_LEN) as u32,
                        signaled: s.get_bit(Dut::GRANT_SIGNALED),
                        lkey: s.get_u64(Dut::GRANT_LKEY) as u32,
                        va: s.get_u64(Dut::GRANT_VA),
                        resume_psn: s.get_u64(Dut::GRANT_RESUME_PSN) as u32,
                    })
                } else {
                    Err(s.get_u64(Dut::GRANT_REFUSAL))
                },
                s.get_u64(Dut::GRANT_SKIPPED),
            ),
        }
    }

    /// The placement request as the outputs show it.
    fn place_request(&self) -> Place {
        let s = &self.sim;
        let atomic = s.get_bit(Dut::PLACE_ATOMIC);
        Place {
            atomic,
            slot: s.get_u64(Dut::PLACE_SLOT),
            lkey: s.get_u64(Dut::PLACE_LKEY) as u32,
            va: s.get_u64(Dut::PLACE_VA),
            offset: s.get_u64(Dut::PLACE_OFFSET),
            len: s.get_u64(Dut::PLACE_LEN),
            orig: atomic.then(|| s.get_u64(Dut::PLACE_ATOMIC_ORIG)),
        }
    }

    /// Runs one event to its done, then lets its CQEs out. A placement
    /// request is answered with `answer` after 0 to 20 cycles (at random);
    /// the answer inputs carry garbage while not valid.
    fn event(
        &mut self,
        q: u64,
        rec: &CompleterRecord,
        answer: Option<PlaceAnswer>,
        what: &str,
    ) -> Done {
        self.drive(q, rec);
        self.sim.set_bit(Dut::EV_VALID, true);
        let start = self.cycles;
        let mut offered = true;
        // The request seen, its answer's delay and the cycles waited.
        let mut request: Option<(Place, u64, u64)> = None;
        let mut answered = false;
        let done = loop {
            let g = self.rng.gen::<u8>();
            self.sim.set_bit(Dut::PLACE_RESULT_VALID, false);
            self.sim.set_bit(Dut::PLACE_RESULT_ERROR, g & 1 != 0);
            self.sim
                .set_u64(Dut::PLACE_RESULT_STATUS, u64::from(g >> 4));
            self.cycle();
            if self.sim.get_bit(Dut::DONE_VALID) {
                assert!(!offered, "{what}: done before the event was taken");
                assert!(
                    !self.sim.get_bit(Dut::PLACE_VALID),
                    "{what}: placement offered at done"
                );
                assert_eq!(
                    request.is_some(),
                    answered,
                    "{what}: done before the placement answer"
                );
                let mut d = self.observe();
                d.place = request.map(|r| r.0);
                self.sim.tick();
                self.cycles += 1;
                break d;
            }
            if self.sim.get_bit(Dut::PLACE_VALID) {
                assert!(!answered, "{what}: placement offered after its answer");
                let now = self.place_request();
                if request.is_none() {
                    request = Some((now, self.rng.gen_range(0..=20), 0));
                }
                let (first, delay, waited) = request.as_mut().expect("just set");
                assert_eq!(*first, now, "{what}: placement changed while offered");
                if *waited == *delay {
                    let answer = answer.unwrap_or_else(|| panic!("{what}: placement {now:?}"));
                    self.sim.set_bit(Dut::PLACE_RESULT_VALID, true);
                    self.sim.set_bit(Dut::PLACE_RESULT_ERROR, answer.is_err());
                    if let Err(status) = answer {
                        self.sim
                            .set_u64(Dut::PLACE_RESULT_STATUS, wc_status::encode(status));
                    }
                    self.last_place_delay = *delay;
                    answered = true;
                } else {
                    *waited += 1;
                }
            }
            let taken = offered && self.sim.get_bit(Dut::EV_READY);
            self.sim.tick();
            self.cycles += 1;
            if taken {
                offered = false;
                self.sim.set_bit(Dut::EV_VALID, false);
            }
            assert!(self.cycles - start < 2000, "{what}: stuck");
        };
        self.last_latency = self.cycles - start;
        self.max_cycles = self.max_cycles.max(self.last_latency);
        // The last CQE may still wait in the tracker's output register.
        loop {
            self.cycle();
            let valid = self.sim.get_bit(Dut::CQE_VALID);
            self.sim.tick();
            self.cycles += 1;
            if !valid {
                break;
            }
        }
        self.events += 1;
        done
    }
}

#[derive(Default)]
struct Tally {
    seen: BTreeMap<&'static str, u64>,
    /// (min, max) cycles from offered to done, per event class.
    latency: BTreeMap<&'static str, (u64, u64)>,
    events: usize,
    cqes: usize,
}

impl Tally {
    fn count(&mut self, k: &'static str) {
        *self.seen.entry(k).or_insert(0) += 1;
    }

    fn latency(&mut self, k: &'static str, cycles: u64) {
        let e = self.latency.entry(k).or_insert((u64::MAX, 0));
        *e = (e.0.min(cycles), e.1.max(cycles));
    }
}

fn replay(
    bench: &mut Bench,
    log: &[CompleterRecord],
    responses: &[ResponseRecord],
    base: u64,
    what: &str,
    tally: &mut Tally,
) {
    let index = |qpn: u32| base + u64::from(qpn - 0x11);
    let mut wr_ids: BTreeMap<(u64, u64), u64> = BTreeMap::new();
    // The slot, local buffer and record of each posted WQE, by its first
    // PSN.
    let mut slot_of: BTreeMap<(u64, u32), (u64, Option<Sge>, WqeRecord)> = BTreeMap::new();
    let mut responses = responses.iter();
    for (i, rec) in log.iter().enumerate() {
        let q = index(rec.qpn);
        let at = format!("{what}: event {i} {rec:?}");
        let after = rec.after.expect("a finished event");
        let response = match rec.event {
            CompleterEvent::Response { psn, .. } => {
                let r = responses.next().expect("a response record per response");
                assert_eq!(r.psn, psn, "{at}");
                Some(r)
            }
            _ => None,
        };
        // The placement stage's answer: the model's local check.
        let answer = response.and_then(|r| r.placement);
        let got = bench.event(q, rec, answer, &at);
        assert_eq!(got.qpn, q, "{at}");
        let want = if rec.event == CompleterEvent::Clear {
            // The host's modify_qp writes the context; the block forgets
            // its own state.
            WriteBack {
                retry_una: None,
                rnr_waiting: false,
                ack_running: false,
                ..WriteBack::of(&rec.before)
            }
        } else {
            WriteBack::of(&after)
        };
        assert_eq!(got.wb, want, "{at}: write-back");
        match expected_timer(rec, &after) {
            Some(t) => assert_eq!(got.timer, t, "{at}: timer"),
            None if after.ack_timer.is_some() => assert!(
                got.timer == (TIMER_NONE, false, 0)
                    || got.timer == (TIMER_ARM, false, rec.before.timeout.into()),
                "{at}: timer {:?}",
                got.timer
            ),
            None => assert!(
                got.timer.0 == TIMER_NONE || got.timer.0 == TIMER_STOP,
                "{at}: timer {:?}",
                got.timer
            ),
        }
        let place = response.and_then(|r| {
            let (offset, len, orig) = match r.wqe_outcome {
                Some(WqeOutcome::Read(Ok(p))) => (p.offset, p.len, None),
                Some(WqeOutcome::Atomic(Ok(()))) => {
                    let CompleterEvent::Response { atomic_orig, .. } = rec.event else {
                        unreachable!()
                    };
                    (0, 8, Some(atomic_orig))
                }
                _ => {
                    assert_eq!(r.placement, None, "{at}: a placement without its WQE check");
                    return None;
                }
            };
            assert!(r.placement.is_some(), "{at}: no local check recorded");
            let (slot, sge, _) = slot_of[&(q, r.wqe.expect("a WQE holds the PSN").first_psn)];
            let sge = sge.expect("a READ or atomic has a local buffer");
            Some(Place {
                atomic: orig.is_some(),
                slot,
                lkey: sge.lkey,
                va: sge.addr.wrapping_add(offset),
                offset,
                len,
                orig,
            })
        });
        assert_eq!(got.place, place, "{at}: placement");
        if let CompleterEvent::Post { record, wr_id, sge } = rec.event {
            let slot = got.post.unwrap_or_else(|| panic!("{at}: post refused"));
            wr_ids.insert((q, slot), wr_id);
            slot_of.insert((q, record.first_psn), (slot, sge, record));
        }
        match rec.event {
            CompleterEvent::Grant { wqe, skipped } => {
                let want = match wqe {
                    Ok(first) => {
                        let (slot, sge, r) = slot_of[&(q, first)];
                        let sge = sge.unwrap_or_else(|| panic!("{at}: a granted WQE has a buffer"));
                        Ok(Granted {
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
                        })
                    }
                    Err(why) => Err(grant_refusal::encode(Err(why))),
                };
                assert_eq!(got.grant, (want, u64::from(skipped)), "{at}: grant");
                match wqe {
                    Ok(_) => tally.count("grant"),
                    Err(GrantRefusal::NotRts) => tally.count("grant refused: not RTS"),
                    Err(GrantRefusal::RnrWait) => tally.count("grant refused: RNR wait"),
                    Err(GrantRefusal::Nothing) => tally.count("grant refused: nothing to send"),
                    Err(GrantRefusal::FailedWqe) => tally.count("grant refused: failed WQE"),
                    Err(GrantRefusal::RdAtomicLimit) => {
                        tally.count("grant refused: READ/atomic limit")
                    }
                }
                *tally.seen.entry("WQEs skipped").or_insert(0) += u64::from(skipped);
                if skipped > 0 {
                    tally.count("grant with skips");
                }
            }
            _ => assert!(
                got.grant.0.is_err(),
                "{at}: a grant out of a non-grant event"
            ),
        }
        let cqes: Vec<SendCqe> = std::mem::take(&mut bench.emitted)
            .into_iter()
            .map(|(cq, slot, status, opcode, byte_len)| {
                assert_eq!(cq, q, "{at}: CQE of another QP");
                SendCqe {
                    wr_id: *wr_ids
                        .get(&(q, slot))
                        .unwrap_or_else(|| panic!("{at}: CQE of slot {slot}, never posted")),
                    status,
                    opcode,
                    byte_len,
                }
            })
            .collect();
        assert_eq!(cqes, rec.cqes, "{at}: CQEs");
        tally.events += 1;
        tally.cqes += cqes.len();
        let class = match rec.event {
            CompleterEvent::Post { .. } if rec.before.state == QpState::Err => "post in ERR",
            CompleterEvent::Post { .. } => "post",
            CompleterEvent::Clear => "clear",
            CompleterEvent::Grant { .. } => "grant event",
            CompleterEvent::Sent { error: Some(_), .. } => "sent with local error",
            CompleterEvent::Sent { next_psn, .. } if next_psn == rec.before.send_psn => {
                "sent nothing (window)"
            }
            CompleterEvent::Sent {
                ackreq_end: Some(_),
                ..
            } => "sent with AckReq",
            CompleterEvent::Sent { .. } => "sent",
            CompleterEvent::ToError => "to ERR from outside",
            CompleterEvent::Timer { rnr: true, .. } => "rnr wait end",
            CompleterEvent::Timer { .. } => "ack timeout",
            CompleterEvent::Response { .. } if answer.is_some_and(|a| a.is_err()) => {
                "response, placement failed"
            }
            CompleterEvent::Response { .. } if place.is_some() => "response placed",
            CompleterEvent::Response { .. } if got.wb == WriteBack::of(&rec.before) => {
                "response without effect"
            }
            CompleterEvent::Response { .. } => "response",
        };
        tally.count(class);
        tally.latency(class, bench.last_latency);
        if let CompleterEvent::Response { opcode: 0x11, .. } = rec.event {
            if rec.cqes.len() == 1 && after.una != rec.before.una {
                tally.latency("ACK completing one WQE", bench.last_latency);
            }
        }
        if after.state == QpState::Err && rec.before.state != QpState::Err {
            tally.count("to ERR");
        }
        if after.retry_una.is_some() && after.retry_una != rec.before.retry_una {
            tally.count("go-back-n");
        }
        if after.rnr_until.is_some() && rec.before.rnr_until.is_none() {
            tally.count("rnr wait");
        }
        if matches!(rec.event, CompleterEvent::Sent { .. }) && got.timer.0 == TIMER_ARM {
            tally.count("ACK timer armed at sent");
        }
        if after.una != rec.before.una {
            tally.count("una moved");
        }
        if place.is_some() {
            tally.latency("placement answer delay", bench.last_place_delay);
            let net = bench.last_latency - bench.last_place_delay;
            tally.latency(
                if answer.is_some_and(|a| a.is_err()) {
                    "placement failed, less the answer delay"
                } else {
                    "placed, less the answer delay"
                },
                net,
            );
        }
        for c in &rec.cqes {
            match c.status {
                WcStatus::RetryExcErr => tally.count("retry exceeded"),
                WcStatus::RnrRetryExcErr => tally.count("rnr retry exceeded"),
                _ => {}
            }
        }
        if let Some(Err(status)) = answer {
            if after.state == QpState::Err {
                // The failed WQE was the oldest: it completes with its
                // own status, the rest flushed.
                assert!(rec.cqes.iter().any(|c| c.status == status), "{at}");
                tally.count("to ERR at a placement's local error");
            }
        }
    }
    assert!(responses.next().is_none(), "{what}: responses left over");
}

#[test]
fn model_traces_with_loss_duplication_and_reordering_match() {
    let mut tally = Tally::default();
    let mut max_cycles = 0;
    let mut cycles = 0;
    // Each MTU at four loss rates with the default window, and at 8 %
    // loss with a 6-PSN window (grants the window holds back).
    let runs = [256u32, 1024, 4096]
        .into_iter()
        .enumerate()
        .flat_map(|(n, mtu)| {
            [
                (0.0, None),
                (0.02, None),
                (0.08, None),
                (0.3, None),
                (0.08, Some(6)),
            ]
            .map(|(loss, window)| (n, mtu, loss, window))
        });
    for (n, mtu, loss, window) in runs {
        let seed = 0xC0_4D1E
            ^ (n as u64) << 8
            ^ (loss * 100.0) as u64
            ^ u64::from(window.unwrap_or(0)) << 16;
        let faults = FaultConfig::lossy(loss, 4_000);
        let twist = window.map_or(Twist::None, Twist::Window);
        let (logs, ends) = model_trace(seed, mtu, faults, twist);
        let mut bench = Bench::new(seed, 0.7);
        for (side, (log, responses)) in logs.iter().enumerate() {
            let what = format!(
                "trace seed {seed:#x}, MTU {mtu}, loss {loss}, window {window:?}, NIC {side}"
            );
            replay(
                &mut bench,
                log,
                responses,
                side as u64 * 16,
                &what,
                &mut tally,
            );
        }
        for (side, log) in ends.iter().enumerate() {
            let what = format!("end of seed {seed:#x}, MTU {mtu}, loss {loss}, NIC {side}");
            replay(&mut bench, log, &[], side as u64 * 16, &what, &mut tally);
        }
        max_cycles = max_cycles.max(bench.max_cycles);
        cycles += bench.cycles;
    }
    eprintln!(
        "{} events, {} send CQEs, {cycles} cycles, at most {max_cycles} per event; {:?}; \
         (min, max) cycles offered to done: {:?}",
        tally.events, tally.cqes, tally.seen, tally.latency
    );
    for k in [
        "post",
        "post in ERR",
        "clear",
        "to ERR from outside",
        "response",
        "response placed",
        "ack timeout",
        "rnr wait",
        "rnr wait end",
        "go-back-n",
        "to ERR",
        "una moved",
        "retry exceeded",
        "grant",
        "grant refused: not RTS",
        "grant refused: RNR wait",
        "grant refused: nothing to send",
        "sent",
        "sent with AckReq",
        "sent nothing (window)",
        "ACK timer armed at sent",
        "sent with local error",
        "grant refused: failed WQE",
    ] {
        assert!(
            tally.seen.get(k).copied().unwrap_or(0) > 0,
            "{k}: {:?}",
            tally.seen
        );
    }
    assert!(tally.events > 10_000, "{}", tally.events);
    // A post goes to the tracker as it is loaded and runs no drain (9
    // cycles while every ring command drained and waited for its own
    // issue cycle); an ACK goes to the checker with no ring lookup, its
    // walk to the tracker with the checker's decision and its drain
    // starts without a restart, and one with nothing lost ends without
    // `ST_DECIDE` (19 with all four).
    assert_eq!(tally.latency["post"], (5, 5), "{:?}", tally.latency);
    let (fastest_ack, _) = tally.latency["ACK completing one WQE"];
    assert!(fastest_ack <= 9, "{:?}", tally.latency);
}

#[test]
fn local_buffer_changed_in_flight_fails_the_wqe() {
    // READs and atomics whose local MR changes while the request is in
    // flight: the model's placement check fails (LocProtErr) and the RTL,
    // answered so by the placement stage, must fail the same WQE, leave
    // progress alone and move the QP to ERR with the same CQEs.
    let mut tally = Tally::default();
    let mut cycles = 0;
    for (mtu, loss) in [(256u32, 0.0), (1024, 0.02), (4096, 0.08)] {
        let seed = 0x10CA_1E44 ^ u64::from(mtu) ^ (loss * 100.0) as u64;
        let faults = FaultConfig::lossy(loss, 4_000);
        let (logs, ends) = model_trace(seed, mtu, faults, Twist::LocalBufferChanged);
        let mut bench = Bench::new(seed, 0.7);
        for (side, (log, responses)) in logs.iter().enumerate() {
            let what = format!("changed MRs: seed {seed:#x}, MTU {mtu}, loss {loss}, NIC {side}");
            replay(
                &mut bench,
                log,
                responses,
                side as u64 * 16,
                &what,
                &mut tally,
            );
        }
        for (side, log) in ends.iter().enumerate() {
            let what = format!("end of seed {seed:#x}, MTU {mtu}, loss {loss}, NIC {side}");
            replay(&mut bench, log, &[], side as u64 * 16, &what, &mut tally);
        }
        cycles += bench.cycles;
    }
    eprintln!(
        "{} events, {} send CQEs, {cycles} cycles; {:?}; (min, max) cycles: {:?}",
        tally.events, tally.cqes, tally.seen, tally.latency
    );
    for k in [
        "response placed",
        "response, placement failed",
        "to ERR at a placement's local error",
    ] {
        assert!(
            tally.seen.get(k).copied().unwrap_or(0) > 0,
            "{k}: {:?}",
            tally.seen
        );
    }
    // Every failed placement's WQE was the oldest: the QP went to ERR.
    assert_eq!(
        tally.seen["to ERR at a placement's local error"],
        tally.seen["response, placement failed"]
    );
    let delays = tally.latency["placement answer delay"];
    assert_eq!(delays, (0, 20), "every answer delay from 0 to 20 cycles");
}
