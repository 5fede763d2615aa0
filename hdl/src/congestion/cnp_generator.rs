//! `CnpGenerator`: DCQCN's notification point in the NIC. The two halves
//! report each CE-marked frame they take for a QP; the
//! [`DcqcnNotificationPoint`] decides whether it earns a CNP (at most one
//! per `cfg.interval` per QP), and a [`CnpTransmitter`] frames the CNP to
//! the QP's peer from the QP's address entry. The model's counterpart is
//! `Nic::handle`'s `NotificationPoint::on_ce` and `queue_cnp`.
//!
//! # Ports
//!
//! - `clock`; `reset` (synchronous, high; hold it one cycle): drops the
//!   events and CNPs in flight and zeroes the counters. The per-QP records
//!   (last CNP time) and address entries keep their contents.
//! - `now` (32 bits): the time base the interval counts in (the core's
//!   cycles; a free-running counter on a board). Each event is stamped with
//!   `now` in the cycle it is reported, and decided with that stamp.
//! - `cfg` ([`NpParamsPort`]): `enabled`, `interval` (in `now` units;
//!   NVIDIA's `min_time_between_cnps`). Change them with no event in
//!   flight.
//! - `rsp_ce_valid` / `rsp_ce_qpn`, then `rsp_ce2_valid` / `rsp_ce2_qpn`:
//!   up to two CE events of the responder half in one cycle, in that
//!   order; `req_ce_valid` / `req_ce_qpn`: one of the requester half. No
//!   ready. Events of one cycle are decided in that order, the one a
//!   scoreboard feeding a shadow model the halves' frames sees.
//! - `addr_write`, `addr_qpn`, `addr_data` ([`QpAddress`]): the driver's
//!   address writes, as the halves' address RAMs take them. A write marks
//!   the QP as having a path and resets its record (a QP brought up again
//!   starts with no CNP sent, as a new model QP does).
//! - `path_clear`, `path_clear_qpn`: the QP has no path any more (the host
//!   put it back to RESET or INIT, where the model sends no CNP). Applied
//!   the cycle after, or once no address write takes the flag table; a
//!   second clear within two cycles of one held back replaces it (a
//!   context write takes longer than that).
//! - `cnp_dscp` (6 bits): the CNPs' DSCP ([`CnpTransmitter`]).
//! - `frame` (AXI-Stream source): the CNP frames.
//! - `cnp_fire` / `cnp_qpn`: a CNP of that QP enters the transmitter; its
//!   frame is the next CNP out (the `tx_cnps` counter's pulse, and the
//!   scoreboard's cue to ask the shadow for the QP's CNP).
//! - `ce_events` (32 bits, wrapping): CE events decided.
//! - `lost` (16 bits, wrapping): events or CNPs dropped because a queue
//!   was full (see below); 0 in any run the tests make.
//!
//! # Order and timing
//!
//! Each event input has a FIFO of its own (16 entries, each with its
//! stamp);
//! the oldest head goes to the notification point, one event per cycle,
//! on equal stamps in input order (`rsp_ce`, `rsp_ce2`, `req_ce`). The
//! FIFOs have the same latency, so no event still to come can be older
//! than a head: the point decides in stamp order, as the model decides in
//! arrival order. An address write's reset goes ahead of the events still
//! queued: rewrite a QP's address while it is quiet.
//!
//! Events come from frames, at most one a frame, and frames arrive at most
//! one a cycle, so the event FIFOs do not fill; the CNP queue (16 QPs)
//! can, behind a paused or stalled transmit port. An event or CNP that
//! finds its FIFO full is dropped (as a CNP lost on the wire would be)
//! and counted.
//!
//! A QP without a path (no address written since power-up, or cleared
//! since) gets no CNP: its record is still updated, as the model's `on_ce`
//! is for a QP whose `queue_cnp` finds no path.
//!
//! # Latency and throughput
//!
//! A CE event reaches the notification point 2 cycles after it is
//! reported (the FIFO), its outcome 2 cycles later, the CNP's address
//! read 2 more; the transmitter's TX builder then takes 15 cycles to the
//! first beat. One event per cycle; one CNP per 2 cycles (a CNP is 2
//! beats).
//!
//! # Memory
//!
//! The notification point's record RAM (1024 x 33 bits), an address RAM
//! of its own (1024 x 449 bits), 1024 x 1 bit of LUT RAM for the path
//! flags, four small FIFOs and the TX builder's buffers.

use crate::congestion::cnp_transmitter::CnpTransmitter;
use crate::congestion::dcqcn_notification_point::{DcqcnNotificationPoint, NpParamsPort};
use crate::primitives::stream::{AxisSource, DATA_BITS, KEEP_BITS};
use crate::primitives::sync_fifo::SyncFifo;
use crate::qp::qp_address_ram::{QpAddress, QpAddressRam};
use crate::qp::qp_context::DEFAULT_QPN_BITS;
use crate::responder::receive_queue::FlagTable;
use rust_hdl::prelude::*;

/// QPN bits of the default build.
const A: usize = DEFAULT_QPN_BITS;

/// A CE-marked frame's QP and the time it was reported.
#[derive(Clone, Copy, Debug, Default, PartialEq, LogicStruct)]
pub struct CeEvent {
    pub qpn: Bits<A>,
    pub stamp: Bits<32>,
}

#[derive(LogicBlock, Default)]
pub struct CnpGenerator {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub now: Signal<In, Bits<32>>,
    pub cfg: NpParamsPort,
    pub rsp_ce_valid: Signal<In, Bit>,
    pub rsp_ce_qpn: Signal<In, Bits<A>>,
    pub rsp_ce2_valid: Signal<In, Bit>,
    pub rsp_ce2_qpn: Signal<In, Bits<A>>,
    pub req_ce_valid: Signal<In, Bit>,
    pub req_ce_qpn: Signal<In, Bits<A>>,
    pub addr_write: Signal<In, Bit>,
    pub addr_qpn: Signal<In, Bits<A>>,
    pub addr_data: Signal<In, QpAddress>,
    pub path_clear: Signal<In, Bit>,
    pub path_clear_qpn: Signal<In, Bits<A>>,
    pub cnp_dscp: Signal<In, Bits<6>>,
    pub frame: AxisSource<DATA_BITS, KEEP_BITS>,
    pub cnp_fire: Signal<Out, Bit>,
    pub cnp_qpn: Signal<Out, Bits<A>>,
    pub ce_events: Signal<Out, Bits<32>>,
    pub lost: Signal<Out, Bits<16>>,

    rsp_events: SyncFifo<CeEvent, 4, 5>,
    rsp2_events: SyncFifo<CeEvent, 4, 5>,
    req_events: SyncFifo<CeEvent, 4, 5>,
    /// The QP whose address was written last cycle: its record is reset.
    reset_valid: DFF<Bit>,
    reset_qpn: DFF<Bits<A>>,
    /// A path clear not yet applied to the flag table.
    clear_valid: DFF<Bit>,
    clear_qpn: DFF<Bits<A>>,
    point: DcqcnNotificationPoint<A>,
    paths: FlagTable<A>,
    cnps: SyncFifo<Bits<A>, 4, 5>,
    addresses: QpAddressRam<A>,
    /// `addresses` presents the entry of the CNP queue's head.
    address_ready: DFF<Bit>,
    transmitter: CnpTransmitter,
    ce_count: DFF<Bits<32>>,
    lost_count: DFF<Bits<16>>,

    /// Head stamp differences: bit 31 set when the first is older.
    rsp2_before_rsp: Signal<Local, Bits<32>>,
    req_before_rsp: Signal<Local, Bits<32>>,
    req_before_rsp2: Signal<Local, Bits<32>>,
    take_rsp: Signal<Local, Bit>,
    take_rsp2: Signal<Local, Bit>,
    take_req: Signal<Local, Bit>,
    queue_cnp: Signal<Local, Bit>,
    offer: Signal<Local, Bit>,
    sends: Signal<Local, Bit>,
    /// An input FIFO or the CNP queue refuses a write (each one's own:
    /// a signal read after it is written would not settle in rust-hdl's
    /// simulator).
    rsp_lost: Signal<Local, Bit>,
    rsp2_lost: Signal<Local, Bit>,
    req_lost: Signal<Local, Bit>,
    cnp_lost: Signal<Local, Bit>,
}

impl Logic for CnpGenerator {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            reset_valid,
            reset_qpn,
            clear_valid,
            clear_qpn,
            address_ready,
            ce_count,
            lost_count
        );
        self.rsp_events.clock.next = self.clock.val();
        self.req_events.clock.next = self.clock.val();
        self.rsp2_events.clock.next = self.clock.val();
        self.rsp2_events.reset.next = self.reset.val();
        self.point.clock.next = self.clock.val();
        self.paths.clock.next = self.clock.val();
        self.cnps.clock.next = self.clock.val();
        self.addresses.clock.next = self.clock.val();
        self.transmitter.clock.next = self.clock.val();
        self.rsp_events.reset.next = self.reset.val();
        self.req_events.reset.next = self.reset.val();
        self.point.reset.next = self.reset.val();
        self.cnps.reset.next = self.reset.val();
        self.transmitter.reset.next = self.reset.val();

        // ---- events in, stamped, one FIFO per input
        self.rsp_events.write.next = self.rsp_ce_valid.val();
        self.rsp_events.data_in.next.qpn = self.rsp_ce_qpn.val();
        self.rsp_events.data_in.next.stamp = self.now.val();
        self.rsp_lost.next = self.rsp_ce_valid.val() & self.rsp_events.full.val();
        self.rsp2_events.write.next = self.rsp_ce2_valid.val();
        self.rsp2_events.data_in.next.qpn = self.rsp_ce2_qpn.val();
        self.rsp2_events.data_in.next.stamp = self.now.val();
        self.rsp2_lost.next = self.rsp_ce2_valid.val() & self.rsp2_events.full.val();
        self.req_events.write.next = self.req_ce_valid.val();
        self.req_events.data_in.next.qpn = self.req_ce_qpn.val();
        self.req_events.data_in.next.stamp = self.now.val();
        self.req_lost.next = self.req_ce_valid.val() & self.req_events.full.val();

        // ---- the oldest head to the notification point (input order on
        // equal stamps); an address write's record reset before any
        self.reset_valid.d.next = self.addr_write.val();
        self.reset_qpn.d.next = self.addr_qpn.val();
        self.rsp2_before_rsp.next =
            self.rsp2_events.data_out.val().stamp - self.rsp_events.data_out.val().stamp;
        self.req_before_rsp.next =
            self.req_events.data_out.val().stamp - self.rsp_events.data_out.val().stamp;
        self.req_before_rsp2.next =
            self.req_events.data_out.val().stamp - self.rsp2_events.data_out.val().stamp;
        self.take_rsp.next = !self.reset_valid.q.val()
            & !self.rsp_events.empty.val()
            & !(!self.rsp2_events.empty.val() & self.rsp2_before_rsp.val().get_bit(31))
            & !(!self.req_events.empty.val() & self.req_before_rsp.val().get_bit(31));
        self.take_rsp2.next = !self.reset_valid.q.val()
            & !self.take_rsp.val()
            & !self.rsp2_events.empty.val()
            & !(!self.req_events.empty.val() & self.req_before_rsp2.val().get_bit(31));
        self.take_req.next = !self.reset_valid.q.val()
            & !self.take_rsp.val()
            & !self.take_rsp2.val()
            & !self.req_events.empty.val();
        self.rsp_events.read.next = self.take_rsp.val();
        self.rsp2_events.read.next = self.take_rsp2.val();
        self.req_events.read.next = self.take_req.val();
        self.point.event_valid.next = self.reset_valid.q.val()
            | self.take_rsp.val()
            | self.take_rsp2.val()
            | self.take_req.val();
        self.point.event_reset.next = self.reset_valid.q.val();
        self.point.event_qpn.next = self.reset_qpn.q.val();
        self.point.now.next = 0.into();
        if self.take_rsp.val() {
            self.point.event_qpn.next = self.rsp_events.data_out.val().qpn;
            self.point.now.next = self.rsp_events.data_out.val().stamp;
        }
        if self.take_rsp2.val() {
            self.point.event_qpn.next = self.rsp2_events.data_out.val().qpn;
            self.point.now.next = self.rsp2_events.data_out.val().stamp;
        }
        if self.take_req.val() {
            self.point.event_qpn.next = self.req_events.data_out.val().qpn;
            self.point.now.next = self.req_events.data_out.val().stamp;
        }
        NpParamsPort::link(&mut self.cfg, &mut self.point.cfg);
        if self.take_rsp.val() | self.take_rsp2.val() | self.take_req.val() {
            self.ce_count.d.next = self.ce_count.q.val() + 1;
        }

        // ---- its CNPs, for QPs with a path, queued
        self.clear_valid.d.next =
            self.path_clear.val() | (self.clear_valid.q.val() & self.addr_write.val());
        if self.path_clear.val() {
            self.clear_qpn.d.next = self.path_clear_qpn.val();
        }
        self.paths.write_enable.next = self.addr_write.val() | self.clear_valid.q.val();
        self.paths.write_address.next = self.addr_qpn.val();
        self.paths.write_data.next = true;
        if !self.addr_write.val() {
            self.paths.write_address.next = self.clear_qpn.q.val();
            self.paths.write_data.next = false;
        }
        self.paths.read_address.next = self.point.out_qpn.val();
        self.queue_cnp.next =
            self.point.out_valid.val() & self.point.out_cnp.val() & self.paths.read_data.val();
        self.cnps.write.next = self.queue_cnp.val();
        self.cnps.data_in.next = self.point.out_qpn.val();
        self.cnp_lost.next = self.queue_cnp.val() & self.cnps.full.val();

        // ---- the head's address, then its frame
        self.addresses.write.next = self.addr_write.val();
        self.addresses.write_qpn.next = self.addr_qpn.val();
        self.addresses.write_data.next = self.addr_data.val();
        self.addresses.read_qpn.next = self.cnps.data_out.val();
        self.offer.next = self.address_ready.q.val() & !self.cnps.empty.val();
        self.transmitter.req_valid.next = self.offer.val();
        self.transmitter.req_address.next = self.addresses.read_data.val();
        self.transmitter.cnp_dscp.next = self.cnp_dscp.val();
        self.sends.next = self.offer.val() & self.transmitter.req_ready.val();
        self.cnps.read.next = self.sends.val();
        // The entry read at this edge is the head's unless the head leaves
        // or its entry is being rewritten.
        self.address_ready.d.next = !self.cnps.empty.val()
            & !self.sends.val()
            & !(self.addr_write.val() & (self.addr_qpn.val() == self.cnps.data_out.val()));
        self.cnp_fire.next = self.sends.val();
        self.cnp_qpn.next = self.cnps.data_out.val();
        AxisSource::<DATA_BITS, KEEP_BITS>::link(&mut self.frame, &mut self.transmitter.frame);

        self.lost_count.d.next = self.lost_count.q.val()
            + bit_cast::<16, 1>(self.rsp_lost.val().into())
            + bit_cast::<16, 1>(self.rsp2_lost.val().into())
            + bit_cast::<16, 1>(self.req_lost.val().into())
            + bit_cast::<16, 1>(self.cnp_lost.val().into());
        self.ce_events.next = self.ce_count.q.val();
        self.lost.next = self.lost_count.q.val();
        if self.reset.val() {
            self.reset_valid.d.next = false;
            self.clear_valid.d.next = false;
            self.address_ready.d.next = false;
            self.ce_count.d.next = 0.into();
            self.lost_count.d.next = 0.into();
        }
    }
}
