//! `DcqcnSender`: DCQCN at the sending NIC, between the requester's event
//! loop and its ready set. CNPs received and request frames sent drive
//! each QP's reaction point ([`DcqcnRateControl`]); every change of a QP's
//! rate goes to the [`PacingScheduler`]'s gate. A QP the event loop calls
//! sendable goes straight to the ready set while it runs at the line rate;
//! a throttled one is queued in the pacing scheduler instead and reaches
//! the ready set when the gate grants it, that is when its earlier frames
//! are paid for at its rate. Each grant is charged to its QP when its
//! frames are decided (the transmit datapath's status, before their data
//! is fetched and before the QP can be asked again), so a throttled QP's
//! grant (a few frames) starts while its count is not negative and pays
//! for all of its frames. A QP at the line rate is charged too (the gate
//! counts it at the line rate), so its first cut finds in its count the
//! frames already decided ahead of the wire, and the QP pays for them at
//! its new rate.
//!
//! Without CNPs nothing here touches the grant path: every QP stays at
//! the line rate, its sendable pulses reach the ready set in the cycle
//! they are made, as they would without this block.
//!
//! # Ports
//!
//! - `clock`; `reset` (synchronous, high; power-up only, as
//!   [`PacingScheduler`]'s and the rate control's scan's).
//! - `now` (32 bits, the time base in cycles), `rp`
//!   ([`RpParamsPort`], periods in cycles) and `pacing`
//!   ([`PacingParamsPort`]): linked through. Change `rp` with no event in
//!   flight.
//! - `qp_reset_valid` / `qp_reset_qpn`: a QP (re)connected: its reaction
//!   point record zeroed, its gate unthrottled.
//! - `cnp_valid` / `cnp_qpn`: a CNP arrived for the QP (the requester's
//!   receive path took it; its ICRC was good).
//! - `sent_valid` / `sent_qpn` / `sent_bytes` (16 bits: the frame's bytes,
//!   Ethernet header to ICRC): a request frame of the QP left; the
//!   reaction point's byte counter counts `sent_bytes`.
//! - `charge_valid` / `charge_qpn` / `charge_bytes` (24 bits): a grant's
//!   frames are decided; the gate charges what they will hold the wire
//!   for (each frame's bytes plus [`WIRE_OVERHEAD`] of preamble, FCS and
//!   gap, as the model's pacing), at most 65,535 bytes a grant (15
//!   MTU-4096 frames; the requester's grants are 4).
//! - `sendable_valid` / `sendable_qpn` (from the event loop) and
//!   `ready_valid` / `ready_qpn` (to the ready set's `sendable`): one
//!   pulse a cycle each.
//! - `grant_qpn` in, `grant_throttled` out (combinational): whether the
//!   QP the grant path is about to grant is throttled, so its grant can
//!   be kept short.
//! - Watch ports for counters and a checker that replays the two blocks
//!   on the model's functions: [`RpWatch`] (each reaction point outcome
//!   with its event's time and bytes) and [`PacingWatch`] (each gate
//!   outcome with its event's time). `cnps` (32 bits) counts the CNPs
//!   taken, `cuts` (32) the rate cuts, `lost` (16) CNP, sent or charge
//!   events dropped for a full queue (0 unless broken: each queue is
//!   drained faster than it can fill).
//!
//! # Latency and throughput
//!
//! A sendable pulse of a QP at the line rate: 0 cycles. A throttled QP's:
//! the pacing scheduler's (granted 6 cycles after the pulse at best), then
//! up to 16 grants wait for cycles without a direct pulse (the scheduler
//! is held while 13 wait). A CNP or sent event reaches the reaction point
//! 2 cycles after its pulse (a 16-entry queue each; a QP reset goes
//! first, then CNPs, then sent events); its rate change reaches the gate
//! 2 cycles after that and marks the QP throttled (or not) in the same
//! edge. A sendable pulse in the cycle the mark changes is routed by the
//! old mark.
//!
//! # Memory
//!
//! The reaction point's and the gate's records, the scan's and the
//! scheduler's queues and marks in block RAM; the per-QP throttled mark
//! (`2^A` x 1, twice: one read port for sendable pulses, one for grants)
//! and the four 16-entry queues in LUT RAM.

use crate::congestion::dcqcn_rate_control::DcqcnRateControl;
use crate::congestion::dcqcn_reaction_point::{
    RpParamsPort, RpRecord, KIND_CNP, KIND_RESET, KIND_SENT,
};
use crate::congestion::pacing_gate::{PacingParamsPort, PacingRecord};
use crate::congestion::pacing_scheduler::PacingScheduler;
use crate::primitives::sync_fifo::SyncFifo;
use crate::responder::receive_queue::FlagTable;
use rust_hdl::prelude::*;

/// Bytes a frame holds the wire beyond its Ethernet header to ICRC:
/// preamble and start delimiter (8), FCS (4), inter-frame gap (12).
pub const WIRE_OVERHEAD: u64 = 24;
/// Grants waiting for the ready set at which the scheduler is held: three
/// more may be in its gate's pipeline.
pub const GRANTS_HELD_AT: u64 = 13;

/// The default build: 1024 QPs.
pub type DcqcnSenderDefault = DcqcnSender<10, 11>;

/// Each reaction point outcome (one cycle), with its event: `kind`
/// (`dcqcn_reaction_point::KIND_*`), `now` and `bytes` as the event
/// had them, and the outcome's fields as [`DcqcnRateControl`]'s.
#[derive(Clone, Debug, Default, LogicInterface)]
pub struct RpWatch<const A: usize> {
    pub valid: Signal<Out, Bit>,
    pub kind: Signal<Out, Bits<2>>,
    pub qpn: Signal<Out, Bits<A>>,
    pub now: Signal<Out, Bits<32>>,
    pub bytes: Signal<Out, Bits<16>>,
    pub rate: Signal<Out, Bits<32>>,
    pub cut: Signal<Out, Bit>,
    pub held: Signal<Out, Bit>,
    pub increase: Signal<Out, Bits<2>>,
    pub record: Signal<Out, RpRecord>,
}

/// Each pacing gate outcome (one cycle), with its event: `kind`
/// (`pacing_scheduler::OUT_*`), `value` and `now` as the event had
/// them, `allowed` and the QP's `record` after it.
#[derive(Clone, Debug, Default, LogicInterface)]
pub struct PacingWatch<const A: usize> {
    pub valid: Signal<Out, Bit>,
    pub kind: Signal<Out, Bits<2>>,
    pub qpn: Signal<Out, Bits<A>>,
    pub value: Signal<Out, Bits<32>>,
    pub now: Signal<Out, Bits<32>>,
    pub allowed: Signal<Out, Bit>,
    pub record: Signal<Out, PacingRecord>,
}

/// A request frame sent or a grant charged: its QP and bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, LogicStruct)]
pub struct SentFrame {
    pub qpn: Bits<16>,
    pub bytes: Bits<16>,
}

/// The block (see the module doc); `AP1` = `A + 1`.
#[derive(LogicBlock)]
pub struct DcqcnSender<const A: usize, const AP1: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub now: Signal<In, Bits<32>>,
    pub rp: RpParamsPort,
    pub pacing: PacingParamsPort,
    pub qp_reset_valid: Signal<In, Bit>,
    pub qp_reset_qpn: Signal<In, Bits<A>>,
    pub cnp_valid: Signal<In, Bit>,
    pub cnp_qpn: Signal<In, Bits<A>>,
    pub sent_valid: Signal<In, Bit>,
    pub sent_qpn: Signal<In, Bits<A>>,
    pub sent_bytes: Signal<In, Bits<16>>,
    pub charge_valid: Signal<In, Bit>,
    pub charge_qpn: Signal<In, Bits<A>>,
    pub charge_bytes: Signal<In, Bits<24>>,
    pub sendable_valid: Signal<In, Bit>,
    pub sendable_qpn: Signal<In, Bits<A>>,
    pub ready_valid: Signal<Out, Bit>,
    pub ready_qpn: Signal<Out, Bits<A>>,
    pub grant_qpn: Signal<In, Bits<A>>,
    pub grant_throttled: Signal<Out, Bit>,
    pub rp_watch: RpWatch<A>,
    pub pacing_watch: PacingWatch<A>,
    pub cnps: Signal<Out, Bits<32>>,
    pub cuts: Signal<Out, Bits<32>>,
    pub lost: Signal<Out, Bits<16>>,

    rate: DcqcnRateControl<A, AP1>,
    pacer: PacingScheduler<A, AP1>,
    /// Per QP: its rate is below the line rate (two copies of one
    /// table: one answers for sendable pulses, one for grants).
    throttled: FlagTable<A>,
    throttled_for_grant: FlagTable<A>,
    cnp_queue: SyncFifo<Bits<16>, 4, 5>,
    sent_queue: SyncFifo<SentFrame, 4, 5>,
    charge_queue: SyncFifo<SentFrame, 4, 5>,
    grant_queue: SyncFifo<Bits<16>, 4, 5>,
    /// The time of the events whose outcomes both blocks present (each
    /// takes two cycles), and the reaction point's event's bytes.
    now1: DFF<Bits<32>>,
    now2: DFF<Bits<32>>,
    rp_bytes1: DFF<Bits<16>>,
    rp_bytes2: DFF<Bits<16>>,
    cnp_count: DFF<Bits<32>>,
    cut_count: DFF<Bits<32>>,
    lost_count: DFF<Bits<16>>,

    take_cnp: Signal<Local, Bit>,
    take_sent: Signal<Local, Bit>,
    rate_change: Signal<Local, Bit>,
    rp_reset: Signal<Local, Bit>,
    direct: Signal<Local, Bit>,
    losing: Signal<Local, Bit>,
    /// The QP of a rate change is throttled from now on.
    throttled_now: Signal<Local, Bit>,
    kind_reset: Constant<Bits<2>>,
    kind_cnp: Constant<Bits<2>>,
    kind_sent: Constant<Bits<2>>,
    held_at: Constant<Bits<5>>,
}

impl<const A: usize, const AP1: usize> Default for DcqcnSender<A, AP1> {
    fn default() -> Self {
        assert_eq!(A + 1, AP1, "AP1 = A + 1");
        assert!(A <= 16, "a QPN travels in 16 bits");
        DcqcnSender {
            clock: Default::default(),
            reset: Default::default(),
            now: Default::default(),
            rp: Default::default(),
            pacing: Default::default(),
            qp_reset_valid: Default::default(),
            qp_reset_qpn: Default::default(),
            cnp_valid: Default::default(),
            cnp_qpn: Default::default(),
            sent_valid: Default::default(),
            sent_qpn: Default::default(),
            sent_bytes: Default::default(),
            charge_valid: Default::default(),
            charge_qpn: Default::default(),
            charge_bytes: Default::default(),
            sendable_valid: Default::default(),
            sendable_qpn: Default::default(),
            ready_valid: Default::default(),
            ready_qpn: Default::default(),
            grant_qpn: Default::default(),
            grant_throttled: Default::default(),
            rp_watch: Default::default(),
            pacing_watch: Default::default(),
            cnps: Default::default(),
            cuts: Default::default(),
            lost: Default::default(),
            rate: Default::default(),
            pacer: Default::default(),
            throttled: Default::default(),
            throttled_for_grant: Default::default(),
            cnp_queue: Default::default(),
            sent_queue: Default::default(),
            charge_queue: Default::default(),
            grant_queue: Default::default(),
            now1: Default::default(),
            now2: Default::default(),
            rp_bytes1: Default::default(),
            rp_bytes2: Default::default(),
            cnp_count: Default::default(),
            cut_count: Default::default(),
            lost_count: Default::default(),
            take_cnp: Default::default(),
            take_sent: Default::default(),
            rate_change: Default::default(),
            rp_reset: Default::default(),
            direct: Default::default(),
            losing: Default::default(),
            throttled_now: Default::default(),
            kind_reset: Constant::new(bits(KIND_RESET)),
            kind_cnp: Constant::new(bits(KIND_CNP)),
            kind_sent: Constant::new(bits(KIND_SENT)),
            held_at: Constant::new(bits(GRANTS_HELD_AT)),
        }
    }
}

impl<const A: usize, const AP1: usize> Logic for DcqcnSender<A, AP1> {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(
            self,
            clock,
            rate,
            pacer,
            throttled,
            throttled_for_grant,
            cnp_queue,
            sent_queue,
            charge_queue,
            grant_queue
        );
        dff_setup!(self, clock, now1, now2, rp_bytes1, rp_bytes2, cnp_count, cut_count, lost_count);
        self.rate.reset.next = self.reset.val();
        self.pacer.reset.next = self.reset.val();
        self.cnp_queue.reset.next = self.reset.val();
        self.sent_queue.reset.next = self.reset.val();
        self.charge_queue.reset.next = self.reset.val();
        self.grant_queue.reset.next = self.reset.val();
        self.rate.now.next = self.now.val();
        self.pacer.now.next = self.now.val();
        RpParamsPort::link(&mut self.rp, &mut self.rate.cfg);
        PacingParamsPort::link(&mut self.pacing, &mut self.pacer.cfg);

        // ---- events in, each queued
        self.cnp_queue.write.next = self.cnp_valid.val();
        self.cnp_queue.data_in.next = bit_cast::<16, A>(self.cnp_qpn.val());
        self.sent_queue.write.next = self.sent_valid.val();
        self.sent_queue.data_in.next.qpn = bit_cast::<16, A>(self.sent_qpn.val());
        self.sent_queue.data_in.next.bytes = self.sent_bytes.val();
        self.charge_queue.write.next = self.charge_valid.val();
        self.charge_queue.data_in.next.qpn = bit_cast::<16, A>(self.charge_qpn.val());
        self.charge_queue.data_in.next.bytes = self.charge_bytes.val().get_bits::<16>(0);
        if self.charge_bytes.val().get_bits::<8>(16).any() {
            self.charge_queue.data_in.next.bytes = bits::<16>(0xFFFF);
        }
        self.losing.next = (self.cnp_valid.val() & self.cnp_queue.full.val())
            | (self.sent_valid.val() & self.sent_queue.full.val())
            | (self.charge_valid.val() & self.charge_queue.full.val());
        if self.losing.val() {
            self.lost_count.d.next = self.lost_count.q.val() + 1;
        }

        // ---- the reaction point: a QP reset, else a CNP, else a sent frame
        self.take_cnp.next = !self.qp_reset_valid.val() & !self.cnp_queue.empty.val();
        self.take_sent.next =
            !self.qp_reset_valid.val() & self.cnp_queue.empty.val() & !self.sent_queue.empty.val();
        self.cnp_queue.read.next = self.take_cnp.val();
        self.sent_queue.read.next = self.take_sent.val();
        self.rate.event_valid.next =
            self.qp_reset_valid.val() | self.take_cnp.val() | self.take_sent.val();
        self.rate.event_kind.next = self.kind_sent.val();
        self.rate.event_qpn.next = bit_cast::<A, 16>(self.sent_queue.data_out.val().qpn);
        self.rate.event_bytes.next = self.sent_queue.data_out.val().bytes;
        if self.take_cnp.val() {
            self.rate.event_kind.next = self.kind_cnp.val();
            self.rate.event_qpn.next = bit_cast::<A, 16>(self.cnp_queue.data_out.val());
            self.cnp_count.d.next = self.cnp_count.q.val() + 1;
        }
        if self.qp_reset_valid.val() {
            self.rate.event_kind.next = self.kind_reset.val();
            self.rate.event_qpn.next = self.qp_reset_qpn.val();
        }
        // (The scan's ticks take the cycles without an event; their bytes
        // are whatever the sent queue's head holds, which a tick ignores.)
        self.now1.d.next = self.now.val();
        self.now2.d.next = self.now1.q.val();
        self.rp_bytes1.d.next = self.sent_queue.data_out.val().bytes;
        self.rp_bytes2.d.next = self.rp_bytes1.q.val();

        // ---- a rate change: to the gate, and the QP's throttled mark
        self.rp_reset.next = self.rate.out_kind.val() == self.kind_reset.val();
        self.rate_change.next = self.rate.out_valid.val()
            & (self.rp_reset.val() | self.rate.out_cut.val() | self.rate.out_increase.val().any());
        if self.rate.out_valid.val() & self.rate.out_cut.val() {
            self.cut_count.d.next = self.cut_count.q.val() + 1;
        }
        self.pacer.rate_valid.next = self.rate_change.val();
        self.pacer.rate_reset.next = self.rp_reset.val();
        self.pacer.rate_qpn.next = self.rate.out_qpn.val();
        self.pacer.rate_value.next = self.rate.out_rate.val();
        self.throttled_now.next = !self.rp_reset.val()
            & self.rate.out_rate.val().any()
            & (self.rate.out_rate.val() < self.pacing.line_rate.val());
        self.throttled.write_enable.next = self.rate_change.val();
        self.throttled.write_address.next = self.rate.out_qpn.val();
        self.throttled.write_data.next = self.throttled_now.val();
        self.throttled_for_grant.write_enable.next = self.rate_change.val();
        self.throttled_for_grant.write_address.next = self.rate.out_qpn.val();
        self.throttled_for_grant.write_data.next = self.throttled_now.val();
        self.throttled_for_grant.read_address.next = self.grant_qpn.val();
        self.grant_throttled.next = self.throttled_for_grant.read_data.val();

        // ---- charges: each grant's frames, when no rate change takes the
        // gate
        self.pacer.charge_valid.next = !self.charge_queue.empty.val();
        self.pacer.charge_qpn.next = bit_cast::<A, 16>(self.charge_queue.data_out.val().qpn);
        self.pacer.charge_bytes.next = self.charge_queue.data_out.val().bytes;
        self.charge_queue.read.next = self.pacer.charge_ready.val();

        // ---- sendable QPs: at the line rate straight on, throttled ones
        // through the pacing scheduler (asked with 0 bytes: charges pay)
        self.throttled.read_address.next = self.sendable_qpn.val();
        self.direct.next = self.sendable_valid.val() & !self.throttled.read_data.val();
        self.pacer.work_valid.next = self.sendable_valid.val() & self.throttled.read_data.val();
        self.pacer.work_qpn.next = self.sendable_qpn.val();
        self.pacer.work_bytes.next = 0.into();
        self.grant_queue.write.next = self.pacer.grant_valid.val();
        self.grant_queue.data_in.next = bit_cast::<16, A>(self.pacer.grant_qpn.val());
        self.pacer.hold.next = self.grant_queue.fill.val() >= self.held_at.val();
        self.grant_queue.read.next = !self.direct.val();
        self.ready_valid.next = self.direct.val() | !self.grant_queue.empty.val();
        self.ready_qpn.next = self.sendable_qpn.val();
        if !self.direct.val() {
            self.ready_qpn.next = bit_cast::<A, 16>(self.grant_queue.data_out.val());
        }

        // ---- watch ports and counters
        self.rp_watch.valid.next = self.rate.out_valid.val();
        self.rp_watch.kind.next = self.rate.out_kind.val();
        self.rp_watch.qpn.next = self.rate.out_qpn.val();
        self.rp_watch.now.next = self.now2.q.val();
        self.rp_watch.bytes.next = self.rp_bytes2.q.val();
        self.rp_watch.rate.next = self.rate.out_rate.val();
        self.rp_watch.cut.next = self.rate.out_cut.val();
        self.rp_watch.held.next = self.rate.out_held.val();
        self.rp_watch.increase.next = self.rate.out_increase.val();
        self.rp_watch.record.next = self.rate.out_record.val();
        self.pacing_watch.valid.next = self.pacer.out_valid.val();
        self.pacing_watch.kind.next = self.pacer.out_kind.val();
        self.pacing_watch.qpn.next = self.pacer.out_qpn.val();
        self.pacing_watch.value.next = self.pacer.out_value.val();
        self.pacing_watch.now.next = self.now2.q.val();
        self.pacing_watch.allowed.next = self.pacer.out_allowed.val();
        self.pacing_watch.record.next = self.pacer.out_record.val();
        self.cnps.next = self.cnp_count.q.val();
        self.cuts.next = self.cut_count.q.val();
        self.lost.next = self.lost_count.q.val();
        if self.reset.val() {
            self.cnp_count.d.next = 0.into();
            self.cut_count.d.next = 0.into();
            self.lost_count.d.next = 0.into();
        }
    }
}
