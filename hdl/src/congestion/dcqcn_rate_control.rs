//! `DcqcnRateControl`: the reaction point with its timer scan. CNP,
//! sent-bytes and reset events from the NIC go into
//! [`DcqcnReactionPoint`]; in every cycle without one, the scan feeds it a
//! tick for the oldest QP in a [`ReadySet`] of the QPs whose timers run.
//! A QP enters the set when an outcome says it needs ticks (`out_scan`:
//! after a cut, and while alpha decays) and leaves it with the tick whose
//! outcome says it no longer does, so idle QPs cost the scan nothing and
//! the scan's lap is as long as the set of recovering QPs.
//!
//! # Ports
//!
//! - `clock`; `reset` (synchronous, high; power-up only, as `ReadySet`'s).
//! - `event_valid`, `event_ready` (always high: the NIC's events are
//!   never held), `event_kind` (`KIND_RESET`, `KIND_CNP`, `KIND_SENT`;
//!   `KIND_TICK` too, an extra look at a QP), `event_qpn`, `event_bytes`;
//!   `now`, the time base of the deadlines.
//! - `cfg` ([`RpParamsPort`]): the reaction point's parameters, linked
//!   through.
//! - Outcomes, one per event, the scan's ticks included: `out_valid`,
//!   `out_kind` (the event's kind), `out_qpn`, `out_rate` (the rate to pace
//!   the QP at, kb/s), `out_scan`, `out_cut`, `out_held`,
//!   `out_increase`, `out_record`, as [`DcqcnReactionPoint`]'s.
//!
//! # Latency and throughput
//!
//! An event presented in cycle `c` has its outcome in `c + 2`; one event
//! per cycle. The scan offers a tick in every cycle without an event and
//! one QP per two cycles at best (`ReadySet`'s take rate); a QP whose
//! outcome asks for ticks in cycle `t` is in the set from `t + 1` and
//! offered from `t + 4`. A lap of the scan takes about two cycles per QP
//! in the set, and NIC events take cycles from the scan one for one. A
//! deadline is served at most one lap late and never drifts (the reaction
//! point advances deadlines by whole periods).

use crate::congestion::dcqcn_reaction_point::{
    DcqcnReactionPoint, RpParamsPort, RpRecord, KIND_TICK,
};
use crate::requester::ready_set::ReadySet;
use rust_hdl::prelude::*;

/// The default build: 1024 QPs.
pub type DcqcnRateControlDefault = DcqcnRateControl<10, 11>;

/// The reaction point and its scan (see the module doc); `AP1` = `A + 1`
/// (`ReadySet`'s FIFO pointer width).
#[derive(LogicBlock)]
pub struct DcqcnRateControl<const A: usize, const AP1: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub event_valid: Signal<In, Bit>,
    pub event_ready: Signal<Out, Bit>,
    pub event_kind: Signal<In, Bits<2>>,
    pub event_qpn: Signal<In, Bits<A>>,
    pub event_bytes: Signal<In, Bits<16>>,
    pub now: Signal<In, Bits<32>>,

    pub cfg: RpParamsPort,

    pub out_valid: Signal<Out, Bit>,
    pub out_kind: Signal<Out, Bits<2>>,
    pub out_qpn: Signal<Out, Bits<A>>,
    pub out_rate: Signal<Out, Bits<32>>,
    pub out_scan: Signal<Out, Bit>,
    pub out_cut: Signal<Out, Bit>,
    pub out_held: Signal<Out, Bit>,
    pub out_increase: Signal<Out, Bits<2>>,
    pub out_record: Signal<Out, RpRecord>,

    reaction: DcqcnReactionPoint<A>,
    scan: ReadySet<A, AP1>,
    /// The kinds of the two events in the reaction point's pipeline.
    kind1: DFF<Bits<2>>,
    kind2: DFF<Bits<2>>,
    kind_tick: Constant<Bits<2>>,
}

impl<const A: usize, const AP1: usize> Default for DcqcnRateControl<A, AP1> {
    fn default() -> Self {
        DcqcnRateControl {
            clock: Default::default(),
            reset: Default::default(),
            event_valid: Default::default(),
            event_ready: Default::default(),
            event_kind: Default::default(),
            event_qpn: Default::default(),
            event_bytes: Default::default(),
            now: Default::default(),
            cfg: Default::default(),
            out_valid: Default::default(),
            out_kind: Default::default(),
            out_qpn: Default::default(),
            out_rate: Default::default(),
            out_scan: Default::default(),
            out_cut: Default::default(),
            out_held: Default::default(),
            out_increase: Default::default(),
            out_record: Default::default(),
            reaction: Default::default(),
            scan: Default::default(),
            kind1: Default::default(),
            kind2: Default::default(),
            kind_tick: Constant::new(bits(KIND_TICK)),
        }
    }
}

impl<const A: usize, const AP1: usize> Logic for DcqcnRateControl<A, AP1> {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, reaction, scan);
        dff_setup!(self, clock, kind1, kind2);
        self.reaction.reset.next = self.reset.val();
        self.scan.reset.next = self.reset.val();

        // The NIC's event, else a tick for the scan's oldest QP.
        self.event_ready.next = true;
        self.scan.request_ready.next = !self.event_valid.val();
        self.reaction.event_valid.next = self.event_valid.val() | self.scan.request_valid.val();
        self.reaction.event_kind.next = self.event_kind.val();
        self.reaction.event_qpn.next = self.event_qpn.val();
        if !self.event_valid.val() {
            self.reaction.event_kind.next = self.kind_tick.val();
            self.reaction.event_qpn.next = self.scan.request_qpn.val();
        }
        self.reaction.event_bytes.next = self.event_bytes.val();
        self.reaction.now.next = self.now.val();
        self.kind1.d.next = self.reaction.event_kind.val();
        self.kind2.d.next = self.kind1.q.val();

        RpParamsPort::link(&mut self.cfg, &mut self.reaction.cfg);

        // An outcome that asks for ticks puts its QP in the scan.
        self.scan.sendable_valid.next =
            self.reaction.out_valid.val() & self.reaction.out_scan.val();
        self.scan.sendable_qpn.next = self.reaction.out_qpn.val();

        self.out_valid.next = self.reaction.out_valid.val();
        self.out_kind.next = self.kind2.q.val();
        self.out_qpn.next = self.reaction.out_qpn.val();
        self.out_rate.next = self.reaction.out_rate.val();
        self.out_scan.next = self.reaction.out_scan.val();
        self.out_cut.next = self.reaction.out_cut.val();
        self.out_held.next = self.reaction.out_held.val();
        self.out_increase.next = self.reaction.out_increase.val();
        self.out_record.next = self.reaction.out_record.val();
    }
}
