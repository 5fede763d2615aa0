//! `PacingScheduler`: the transmit scheduler that holds each sending QP to
//! its rate. A QP with a frame to start is queued once, with the frame's
//! size; the oldest queued QP is put to the [`PacingGate`] in every cycle
//! the gate is free; a QP the gate grants leaves with its grant, one it
//! holds goes to the back of a retry queue and is asked again a lap
//! later. New work and retries take turns, so a QP that just became ready
//! (an unthrottled one above all) waits for at most one retry, however
//! many throttled QPs wait, and idle QPs cost nothing but their RAM words.
//!
//! # Ports
//!
//! - `clock`; `reset` (synchronous, high): empties the queues and drops
//!   the questions in flight. Power-up only: the per-QP queued marks keep
//!   their contents (zero at power-up), so a reset with work queued leaves
//!   those QPs marked and never asked.
//! - `work_valid`, `work_qpn` (`A` bits), `work_bytes` (16 bits): a pulse,
//!   one per cycle at most: the QP has a frame of `work_bytes` to start.
//!   It is queued unless it is queued already (that pulse, its size
//!   included, is then ignored: pulse again after the grant).
//! - `rate_valid`, `rate_reset`, `rate_qpn`, `rate_value`: a rate update
//!   for the gate, never held (a question waits for it instead):
//!   `rate_reset` high unthrottles the QP and clears its count, else the
//!   QP is paced at `rate_value` kb/s (DCQCN's Rc) from now on.
//! - `charge_valid`, `charge_qpn`, `charge_bytes`, `charge_ready` (out:
//!   no rate update this cycle): frames of `charge_bytes` on the QP,
//!   which pays for them ([`PacingGate`]'s `event_charge`; an unthrottled
//!   QP is counted at the line rate), so a user may ask with `work_bytes`
//!   0 and pay per grant decided.
//! - `hold` (in): no question is asked while it is high (the grants'
//!   consumer has no room for three more).
//! - `now` (32 bits, the clock cycle count) and `cfg`
//!   ([`PacingParamsPort`]): the gate's, linked through.
//! - `grant_valid`, `grant_qpn`, `grant_bytes` (out): a pulse, the QP may
//!   start its frame now (it has been paid for). No ready: the consumer
//!   takes every grant.
//! - `out_valid`, `out_send`, `out_kind`, `out_value`, `out_qpn`,
//!   `out_allowed`, `out_record` (out): every outcome of the gate, as
//!   [`PacingGate`]'s, with the event that made it: `out_kind`
//!   ([`OUT_QUESTION`], [`OUT_RATE`], [`OUT_RESET`], [`OUT_CHARGE`];
//!   `out_send` = a question) and `out_value` (the question's or charge's
//!   bytes, the rate), for counters and a checker that replays the gate.
//!
//! # Latency and throughput
//!
//! A pulse in cycle `t` is decided in `t + 1` (a grant of its QP in that
//! very cycle counts as before it), can be asked from `t + 4` (the queue's
//! write and two-edge read, the head register) and granted two cycles
//! later: a lone QP that pulses again with each grant is granted every 6
//! cycles, 384 bytes' worth of a 100 GbE link's 512-bit beats, so frames
//! of that size and larger leave at the link's rate. One question per
//! cycle to the gate, less one for each rate update or charge (a rate
//! update first, then a charge, then a question).
//!
//! # Memory
//!
//! Two `2^A` x 1 marks (`SyncRam`): a QP is queued while the mark its
//! pulses flip differs from the one its grants copy, so each has one
//! writer and neither needs a read beside its write. Two `2^A`-entry
//! queues (`SyncFifo`) of [`PacingEntry`] (33 bits), each deep enough for
//! every QP at once. All block RAM; the gate's records too.

use crate::congestion::pacing_gate::{PacingGate, PacingParamsPort, PacingRecord};
use crate::primitives::sync_fifo::SyncFifo;
use crate::primitives::sync_ram::SyncRam;
use rust_hdl::prelude::*;

/// `out_kind`: a question for a queued QP.
pub const OUT_QUESTION: u64 = 0;
/// `out_kind`: a rate update.
pub const OUT_RATE: u64 = 1;
/// `out_kind`: a QP unthrottled (`rate_reset`).
pub const OUT_RESET: u64 = 2;
/// `out_kind`: a frame charged.
pub const OUT_CHARGE: u64 = 3;

/// The default build: 1024 QPs.
pub type PacingSchedulerDefault = PacingScheduler<10, 11>;

/// A queued QP: its QPN (the low `A` bits), its frame's size, and the
/// value its pulse gave its mark (the one its grant copies).
#[derive(Clone, Copy, Debug, Default, PartialEq, LogicStruct)]
pub struct PacingEntry {
    pub qpn: Bits<16>,
    pub bytes: Bits<16>,
    pub mark: Bit,
}

/// The scheduler (see the module doc); `AP1` = `A + 1` (the queues'
/// pointer width, which rust-hdl cannot compute in the type).
#[derive(LogicBlock)]
pub struct PacingScheduler<const A: usize, const AP1: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub work_valid: Signal<In, Bit>,
    pub work_qpn: Signal<In, Bits<A>>,
    pub work_bytes: Signal<In, Bits<16>>,
    pub rate_valid: Signal<In, Bit>,
    pub rate_reset: Signal<In, Bit>,
    pub rate_qpn: Signal<In, Bits<A>>,
    pub rate_value: Signal<In, Bits<32>>,
    pub charge_valid: Signal<In, Bit>,
    pub charge_qpn: Signal<In, Bits<A>>,
    pub charge_bytes: Signal<In, Bits<16>>,
    pub charge_ready: Signal<Out, Bit>,
    pub hold: Signal<In, Bit>,
    pub now: Signal<In, Bits<32>>,
    pub cfg: PacingParamsPort,

    pub grant_valid: Signal<Out, Bit>,
    pub grant_qpn: Signal<Out, Bits<A>>,
    pub grant_bytes: Signal<Out, Bits<16>>,
    pub out_valid: Signal<Out, Bit>,
    pub out_send: Signal<Out, Bit>,
    pub out_kind: Signal<Out, Bits<2>>,
    pub out_value: Signal<Out, Bits<32>>,
    pub out_qpn: Signal<Out, Bits<A>>,
    pub out_allowed: Signal<Out, Bit>,
    pub out_record: Signal<Out, PacingRecord>,

    gate: PacingGate<A>,
    /// Flipped by each pulse that queues the QP.
    pulse_marks: SyncRam<Bit, A>,
    /// Set to the pulse's mark by the QP's grant.
    grant_marks: SyncRam<Bit, A>,
    fresh: SyncFifo<PacingEntry, A, AP1>,
    retry: SyncFifo<PacingEntry, A, AP1>,

    /// The pulse whose marks are being read.
    pulse_valid: DFF<Bit>,
    pulse_qpn: DFF<Bits<A>>,
    pulse_bytes: DFF<Bits<16>>,
    /// Each mark's write of the previous cycle (the read beside it missed
    /// it).
    last_pulse_write: DFF<Bit>,
    last_pulse_qpn: DFF<Bits<A>>,
    last_pulse_mark: DFF<Bit>,
    last_grant_write: DFF<Bit>,
    last_grant_qpn: DFF<Bits<A>>,
    last_grant_mark: DFF<Bit>,
    /// The next QP to ask, and which queue gives the next one.
    head_valid: DFF<Bit>,
    head: DFF<PacingEntry>,
    prefer_retry: DFF<Bit>,
    /// The questions in the gate's two stages.
    asked1: DFF<Bit>,
    entry1: DFF<PacingEntry>,
    asked2: DFF<Bit>,
    entry2: DFF<PacingEntry>,
    /// The kind and value of the gate's two stages' events.
    kind1: DFF<Bits<2>>,
    value1: DFF<Bits<32>>,
    kind2: DFF<Bits<2>>,
    value2: DFF<Bits<32>>,
    event_kind: Signal<Local, Bits<2>>,
    charge: Signal<Local, Bit>,
    kind_rate: Constant<Bits<2>>,
    kind_reset: Constant<Bits<2>>,
    kind_charge: Constant<Bits<2>>,

    pulse_mark: Signal<Local, Bit>,
    grant_mark: Signal<Local, Bit>,
    push: Signal<Local, Bit>,
    pushed: Signal<Local, PacingEntry>,
    ask: Signal<Local, Bit>,
    grant: Signal<Local, Bit>,
    head_free: Signal<Local, Bit>,
    take_retry: Signal<Local, Bit>,
    take_fresh: Signal<Local, Bit>,
}

impl<const A: usize, const AP1: usize> Default for PacingScheduler<A, AP1> {
    fn default() -> Self {
        assert_eq!(A + 1, AP1, "AP1 = A + 1");
        assert!(A <= 16, "a QPN travels in 16 bits");
        PacingScheduler {
            clock: Default::default(),
            reset: Default::default(),
            work_valid: Default::default(),
            work_qpn: Default::default(),
            work_bytes: Default::default(),
            rate_valid: Default::default(),
            rate_reset: Default::default(),
            rate_qpn: Default::default(),
            rate_value: Default::default(),
            charge_valid: Default::default(),
            charge_qpn: Default::default(),
            charge_bytes: Default::default(),
            charge_ready: Default::default(),
            hold: Default::default(),
            now: Default::default(),
            cfg: Default::default(),
            grant_valid: Default::default(),
            grant_qpn: Default::default(),
            grant_bytes: Default::default(),
            out_valid: Default::default(),
            out_send: Default::default(),
            out_kind: Default::default(),
            out_value: Default::default(),
            out_qpn: Default::default(),
            out_allowed: Default::default(),
            out_record: Default::default(),
            gate: Default::default(),
            pulse_marks: SyncRam::block_ram(),
            grant_marks: SyncRam::block_ram(),
            fresh: Default::default(),
            retry: Default::default(),
            pulse_valid: Default::default(),
            pulse_qpn: Default::default(),
            pulse_bytes: Default::default(),
            last_pulse_write: Default::default(),
            last_pulse_qpn: Default::default(),
            last_pulse_mark: Default::default(),
            last_grant_write: Default::default(),
            last_grant_qpn: Default::default(),
            last_grant_mark: Default::default(),
            head_valid: Default::default(),
            head: Default::default(),
            prefer_retry: Default::default(),
            asked1: Default::default(),
            entry1: Default::default(),
            asked2: Default::default(),
            entry2: Default::default(),
            kind1: Default::default(),
            value1: Default::default(),
            kind2: Default::default(),
            value2: Default::default(),
            event_kind: Default::default(),
            charge: Default::default(),
            kind_rate: Constant::new(bits(OUT_RATE)),
            kind_reset: Constant::new(bits(OUT_RESET)),
            kind_charge: Constant::new(bits(OUT_CHARGE)),
            pulse_mark: Default::default(),
            grant_mark: Default::default(),
            push: Default::default(),
            pushed: Default::default(),
            ask: Default::default(),
            grant: Default::default(),
            head_free: Default::default(),
            take_retry: Default::default(),
            take_fresh: Default::default(),
        }
    }
}

impl<const A: usize, const AP1: usize> Logic for PacingScheduler<A, AP1> {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, gate, pulse_marks, grant_marks, fresh, retry);
        dff_setup!(
            self,
            clock,
            pulse_valid,
            pulse_qpn,
            pulse_bytes,
            last_pulse_write,
            last_pulse_qpn,
            last_pulse_mark,
            last_grant_write,
            last_grant_qpn,
            last_grant_mark,
            head_valid,
            head,
            prefer_retry,
            asked1,
            entry1,
            asked2,
            entry2,
            kind1,
            value1,
            kind2,
            value2
        );
        self.gate.reset.next = self.reset.val();
        self.fresh.reset.next = self.reset.val();
        self.retry.reset.next = self.reset.val();
        PacingParamsPort::link(&mut self.cfg, &mut self.gate.cfg);
        self.gate.now.next = self.now.val();

        // The gate's outcome of the question asked two cycles ago.
        self.grant.next =
            self.gate.out_valid.val() & self.asked2.q.val() & self.gate.out_allowed.val();
        self.grant_valid.next = self.grant.val();
        self.grant_qpn.next = bit_cast::<A, 16>(self.entry2.q.val().qpn);
        self.grant_bytes.next = self.entry2.q.val().bytes;
        self.out_valid.next = self.gate.out_valid.val();
        self.out_send.next = self.asked2.q.val();
        self.out_kind.next = self.kind2.q.val();
        self.out_value.next = self.value2.q.val();
        self.out_qpn.next = self.gate.out_qpn.val();
        self.out_allowed.next = self.gate.out_allowed.val();
        self.out_record.next = self.gate.out_record.val();
        self.grant_marks.write_enable.next = self.grant.val();
        self.grant_marks.write_address.next = bit_cast::<A, 16>(self.entry2.q.val().qpn);
        self.grant_marks.write_data.next = self.entry2.q.val().mark;
        self.last_grant_write.d.next = self.grant.val();
        self.last_grant_qpn.d.next = bit_cast::<A, 16>(self.entry2.q.val().qpn);
        self.last_grant_mark.d.next = self.entry2.q.val().mark;
        // A held QP goes to the back of the retry queue, its entry as it was.
        self.retry.write.next =
            self.gate.out_valid.val() & self.asked2.q.val() & !self.gate.out_allowed.val();
        self.retry.data_in.next = self.entry2.q.val();

        // A pulse: its QP's marks read, then compared with this cycle's and
        // last cycle's writes forwarded.
        self.pulse_marks.read_address.next = self.work_qpn.val();
        self.grant_marks.read_address.next = self.work_qpn.val();
        self.pulse_valid.d.next = self.work_valid.val() & !self.reset.val();
        self.pulse_qpn.d.next = self.work_qpn.val();
        self.pulse_bytes.d.next = self.work_bytes.val();
        self.pulse_mark.next = self.pulse_marks.read_data.val();
        if self.last_pulse_write.q.val() & (self.last_pulse_qpn.q.val() == self.pulse_qpn.q.val()) {
            self.pulse_mark.next = self.last_pulse_mark.q.val();
        }
        self.grant_mark.next = self.grant_marks.read_data.val();
        if self.last_grant_write.q.val() & (self.last_grant_qpn.q.val() == self.pulse_qpn.q.val()) {
            self.grant_mark.next = self.last_grant_mark.q.val();
        }
        if self.grant.val() & (self.grant_qpn.val() == self.pulse_qpn.q.val()) {
            self.grant_mark.next = self.entry2.q.val().mark;
        }
        self.push.next =
            self.pulse_valid.q.val() & (self.pulse_mark.val() == self.grant_mark.val());
        self.pulse_marks.write_enable.next = self.push.val();
        self.pulse_marks.write_address.next = self.pulse_qpn.q.val();
        self.pulse_marks.write_data.next = !self.pulse_mark.val();
        self.last_pulse_write.d.next = self.push.val();
        self.last_pulse_qpn.d.next = self.pulse_qpn.q.val();
        self.last_pulse_mark.d.next = !self.pulse_mark.val();
        self.pushed.next.qpn = bit_cast::<16, A>(self.pulse_qpn.q.val());
        self.pushed.next.bytes = self.pulse_bytes.q.val();
        self.pushed.next.mark = !self.pulse_mark.val();
        self.fresh.write.next = self.push.val();
        self.fresh.data_in.next = self.pushed.val();

        // The gate: a rate update, else a charge, else a question for the
        // head.
        self.charge_ready.next = !self.rate_valid.val();
        self.charge.next = self.charge_valid.val() & !self.rate_valid.val();
        self.ask.next = self.head_valid.q.val()
            & !self.rate_valid.val()
            & !self.charge_valid.val()
            & !self.hold.val();
        self.gate.event_valid.next = self.rate_valid.val() | self.charge.val() | self.ask.val();
        self.gate.event_reset.next = self.rate_valid.val() & self.rate_reset.val();
        self.gate.event_rate.next = self.rate_valid.val() & !self.rate_reset.val();
        self.gate.event_charge.next = self.charge.val();
        self.gate.event_qpn.next = self.rate_qpn.val();
        self.gate.event_value.next = self.rate_value.val();
        self.event_kind.next = self.kind_rate.val();
        if self.rate_reset.val() {
            self.event_kind.next = self.kind_reset.val();
        }
        if !self.rate_valid.val() {
            self.gate.event_qpn.next = bit_cast::<A, 16>(self.head.q.val().qpn);
            self.gate.event_value.next = bit_cast::<32, 16>(self.head.q.val().bytes);
            self.event_kind.next = 0.into();
            if self.charge_valid.val() {
                self.gate.event_qpn.next = self.charge_qpn.val();
                self.gate.event_value.next = bit_cast::<32, 16>(self.charge_bytes.val());
                self.event_kind.next = self.kind_charge.val();
            }
        }
        self.asked1.d.next = self.ask.val() & !self.reset.val();
        self.entry1.d.next = self.head.q.val();
        self.asked2.d.next = self.asked1.q.val() & !self.reset.val();
        self.entry2.d.next = self.entry1.q.val();
        self.kind1.d.next = self.event_kind.val();
        self.value1.d.next = self.gate.event_value.val();
        self.kind2.d.next = self.kind1.q.val();
        self.value2.d.next = self.value1.q.val();

        // The head, refilled from the two queues in turn.
        self.head_free.next = !self.head_valid.q.val() | self.ask.val();
        self.take_retry.next = self.head_free.val()
            & !self.retry.empty.val()
            & (self.prefer_retry.q.val() | self.fresh.empty.val());
        self.take_fresh.next =
            self.head_free.val() & !self.fresh.empty.val() & !self.take_retry.val();
        self.retry.read.next = self.take_retry.val();
        self.fresh.read.next = self.take_fresh.val();
        if self.ask.val() {
            self.head_valid.d.next = false;
        }
        if self.take_retry.val() {
            self.head_valid.d.next = true;
            self.head.d.next = self.retry.data_out.val();
            self.prefer_retry.d.next = false;
        }
        if self.take_fresh.val() {
            self.head_valid.d.next = true;
            self.head.d.next = self.fresh.data_out.val();
            self.prefer_retry.d.next = true;
        }

        if self.reset.val() {
            self.head_valid.d.next = false;
            self.last_pulse_write.d.next = false;
            self.last_grant_write.d.next = false;
        }
    }
}
