//! `NicTop`: the NIC as a board instantiates it: the transport core
//! ([`NicCore`]) behind BAR0 ([`BarRegisters`], an AXI4-Lite target) and
//! the host ABI's counters ([`CounterBank`]). Software sets the core's
//! congestion control through BAR0's `congestion` block and reads what
//! the core counted through its `counters` block (`docs/abi.md`).
//!
//! ```text
//!   mmio --> BarRegisters --np, rp, pfc, cnp_dscp--> NicCore <-- rx, frame, dma, dmaw,
//!                 ^ counter port                        |         post, CQE, context ports
//!                 +------ CounterBank <--- events ------+
//! ```
//!
//! # Ports
//!
//! - `clock`; `reset` (synchronous, high): the core's reset (pulse once
//!   after power-up, then wait for `cfg.ready`), BAR0's registers to
//!   their reset values, every counter to 0.
//! - `mmio` ([`AxiLiteTarget`], BAR0's 14 address bits).
//! - Every port of [`NicCore`] of the same name and meaning, except `np`,
//!   `rp`, `pfc` and `cnp_dscp`, which BAR0's congestion registers drive
//!   (in the core's units, `CongestionRegisters`' conversions).
//!
//! # What this top does not hold yet
//!
//! The admin queue, the doorbell pages, WQE fetch, CQE and event writes
//! by DMA and MSI-X messages are still outside: the QP contexts, posts
//! and CQEs stay the core's ports. So BAR0's admin, EQ and MSI-X
//! registers read and write as the ABI says but drive nothing, the
//! admin queue's head stays 0, and `control.soft_reset` returns BAR0's
//! registers and the counters to their reset values (it reads 1 while
//! the counters clear) without resetting the core.
//!
//! # Counters
//!
//! The counters this top feeds, each exact after the bank's staleness
//! (`CounterBank`: 48 cycles):
//! - `rx_frames`, `rx_bytes`: frames and bytes the core takes on `rx`;
//!   `tx_frames`, `tx_bytes`: those it hands the MAC on `frame` (a
//!   beat's bytes are its `tkeep`, contiguous from lane 0 as the streams'
//!   contract says).
//! - `tx_cnps` (`cnp_fire`), `rx_cnps` and `rate_cuts` (a step of the
//!   core's `cnps_received` and `rate_cuts` counts), `rx_pause_frames`
//!   (`pause_frame`), `pause_watchdog_trips` (one per priority of
//!   `pause_trips`: trips of several priorities in one cycle are counted
//!   one per cycle after it; a priority cannot trip again within eight
//!   cycles, so none is lost), `mmio_unmapped` (BAR0's `unmapped`).
//! - The others (drops per reason, NAKs, retransmissions, timeouts,
//!   host-side errors) read 0: their sources join with the host side.
//!
//! # Latency and throughput
//!
//! The core's, unchanged: this top adds no stage to a stream or a DMA
//! port. An event reaches the bank's input in the cycle after its own
//! (a watchdog trip a cycle later, through its pending bits).
//! MMIO: `BarRegisters`'. A congestion register's write is on the core's
//! parameter port at the edge that takes it.

use crate::congestion::dcqcn_notification_point::NpParamsSource;
use crate::congestion::dcqcn_reaction_point::RpParamsSource;
use crate::congestion::dcqcn_sender::{PacingWatch, RpWatch};
use crate::congestion::pacing_gate::PacingParamsPort;
use crate::congestion::pfc_pause::PfcParamsSource;
use crate::dma::dma_port::{DmaReadPort, DmaWritePort};
use crate::dma::mr_translate::MrConfigPortDefault;
use crate::host::axi_lite::AxiLiteTarget;
use crate::host::bar_registers::{BarRegisters, ADDRESS_BITS};
use crate::host::counter_bank::{event_bit, CounterBank, AMOUNT_BITS};
use crate::nic::nic_core::NicCore;
use crate::primitives::stream::{Axis512Sink, AxisSource, DATA_BITS, KEEP_BITS};
use crate::qp::qp_address_ram::QpAddress;
use crate::qp::qp_context::ContextConfig;
use crate::requester::requester_events::SLOT_BITS;
use crate::requester::send_ports::{
    PostResult, QpEventDone, SendCqeStream, SendPost, SentStatusEvent,
};
use crate::responder::receive_queue::{ReceiveCqeStream, ReceivePost};
use crate::responder::responder_datapath::QPN_BITS;
use crate::responder::response_queue::QueueCommand;
use rust_hdl::prelude::*;

/// The counters [`NicTop`] feeds (see the module doc); the others read 0.
pub const FED_COUNTERS: [&str; 10] = [
    "rx_frames",
    "rx_bytes",
    "tx_frames",
    "tx_bytes",
    "tx_cnps",
    "rx_cnps",
    "rate_cuts",
    "rx_pause_frames",
    "pause_watchdog_trips",
    "mmio_unmapped",
];

/// The top (see the module doc).
#[derive(LogicBlock)]
pub struct NicTop {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub mmio: AxiLiteTarget<ADDRESS_BITS>,
    pub rx: Axis512Sink,
    pub frame: AxisSource<DATA_BITS, KEEP_BITS>,
    pub tx_priority: Signal<In, Bits<3>>,
    pub pfc_paused: Signal<Out, Bits<8>>,
    pub pfc_tripped: Signal<Out, Bits<8>>,
    pub pause_frame: Signal<Out, Bit>,
    pub pause_trips: Signal<Out, Bits<8>>,
    pub now: Signal<In, Bits<32>>,
    pub cnp_fire: Signal<Out, Bit>,
    pub cnp_qpn: Signal<Out, Bits<QPN_BITS>>,
    pub ce_events: Signal<Out, Bits<32>>,
    pub cnp_lost: Signal<Out, Bits<16>>,
    pub pacing: PacingParamsPort,
    pub rp_watch: RpWatch<QPN_BITS>,
    pub pacing_watch: PacingWatch<QPN_BITS>,
    pub cnps_received: Signal<Out, Bits<32>>,
    pub rate_cuts: Signal<Out, Bits<32>>,
    pub dcqcn_lost: Signal<Out, Bits<16>>,
    pub rsp_qp_host: ContextConfig<QPN_BITS>,
    pub req_qp_host: ContextConfig<QPN_BITS>,
    pub queue_host: QueueCommand<QPN_BITS>,
    pub cfg_window: Signal<In, Bits<32>>,
    pub cfg_ack_req_interval: Signal<In, Bits<32>>,
    pub addr_write: Signal<In, Bit>,
    pub addr_qpn: Signal<In, Bits<QPN_BITS>>,
    pub addr_data: Signal<In, QpAddress>,
    pub cfg: MrConfigPortDefault,
    pub rq_post: ReceivePost<QPN_BITS>,
    pub rcqe: ReceiveCqeStream<24>,
    pub post: SendPost<QPN_BITS>,
    pub post_result: PostResult<QPN_BITS, SLOT_BITS>,
    pub scqe: SendCqeStream<QPN_BITS, SLOT_BITS>,
    pub dma: DmaReadPort,
    pub dmaw: DmaWritePort,
    pub out_valid: Signal<Out, Bit>,
    pub out_ready: Signal<In, Bit>,
    pub out_qpn: Signal<Out, Bits<24>>,
    pub out_psn: Signal<Out, Bits<24>>,
    pub out_opcode: Signal<Out, Bits<8>>,
    pub out_verdict: Signal<Out, Bits<4>>,
    pub out_response_valid: Signal<Out, Bit>,
    pub out_response_syndrome: Signal<Out, Bits<8>>,
    pub queue_fire: Signal<Out, Bit>,
    pub desc_fire: Signal<Out, Bit>,
    pub desc_qpn: Signal<Out, Bits<24>>,
    pub rsp_fire: Signal<Out, Bit>,
    pub done: QpEventDone<QPN_BITS>,
    pub status: SentStatusEvent,
    pub stat_select: Signal<In, Bits<3>>,
    pub rsp_stat_count: Signal<Out, Bits<32>>,
    pub req_stat_count: Signal<Out, Bits<32>>,
    pub queue_full_waits: Signal<Out, Bits<32>>,
    pub read_errors: Signal<Out, Bits<16>>,
    pub rsp_payload_last_errors: Signal<Out, Bits<16>>,
    pub req_payload_last_errors: Signal<Out, Bits<16>>,
    pub to_err_from_responder: Signal<Out, Bits<16>>,
    pub to_err_from_requester: Signal<Out, Bits<16>>,

    core: NicCore,
    bar: BarRegisters,
    bank: CounterBank,

    // ---- the counters' events
    events: Signal<Local, Bits<64>>,
    events_q: DFF<Bits<64>>,
    /// The core's CNP and cut counts as last seen: a step is an event.
    cnps_seen: DFF<Bits<32>>,
    cuts_seen: DFF<Bits<32>>,
    /// Priorities whose watchdog trip is not counted yet.
    trips_pending: DFF<Bits<8>>,
    rx_beat: Signal<Local, Bit>,
    tx_beat: Signal<Local, Bit>,
    rx_amount: DFF<Bits<AMOUNT_BITS>>,
    tx_amount: DFF<Bits<AMOUNT_BITS>>,
    /// `k + 1`: the bytes of a beat whose last kept lane is `k`.
    lane_bytes: [Constant<Bits<AMOUNT_BITS>>; KEEP_BITS],
    rx_frames_bit: Constant<Bits<64>>,
    tx_frames_bit: Constant<Bits<64>>,
    tx_cnps_bit: Constant<Bits<64>>,
    rx_cnps_bit: Constant<Bits<64>>,
    rate_cuts_bit: Constant<Bits<64>>,
    rx_pause_frames_bit: Constant<Bits<64>>,
    pause_trips_bit: Constant<Bits<64>>,
    mmio_unmapped_bit: Constant<Bits<64>>,
}

impl Default for NicTop {
    fn default() -> Self {
        NicTop {
            clock: Default::default(),
            reset: Default::default(),
            mmio: Default::default(),
            rx: Default::default(),
            frame: Default::default(),
            tx_priority: Default::default(),
            pfc_paused: Default::default(),
            pfc_tripped: Default::default(),
            pause_frame: Default::default(),
            pause_trips: Default::default(),
            now: Default::default(),
            cnp_fire: Default::default(),
            cnp_qpn: Default::default(),
            ce_events: Default::default(),
            cnp_lost: Default::default(),
            pacing: Default::default(),
            rp_watch: Default::default(),
            pacing_watch: Default::default(),
            cnps_received: Default::default(),
            rate_cuts: Default::default(),
            dcqcn_lost: Default::default(),
            rsp_qp_host: Default::default(),
            req_qp_host: Default::default(),
            queue_host: Default::default(),
            cfg_window: Default::default(),
            cfg_ack_req_interval: Default::default(),
            addr_write: Default::default(),
            addr_qpn: Default::default(),
            addr_data: Default::default(),
            cfg: Default::default(),
            rq_post: Default::default(),
            rcqe: Default::default(),
            post: Default::default(),
            post_result: Default::default(),
            scqe: Default::default(),
            dma: Default::default(),
            dmaw: Default::default(),
            out_valid: Default::default(),
            out_ready: Default::default(),
            out_qpn: Default::default(),
            out_psn: Default::default(),
            out_opcode: Default::default(),
            out_verdict: Default::default(),
            out_response_valid: Default::default(),
            out_response_syndrome: Default::default(),
            queue_fire: Default::default(),
            desc_fire: Default::default(),
            desc_qpn: Default::default(),
            rsp_fire: Default::default(),
            done: Default::default(),
            status: Default::default(),
            stat_select: Default::default(),
            rsp_stat_count: Default::default(),
            req_stat_count: Default::default(),
            queue_full_waits: Default::default(),
            read_errors: Default::default(),
            rsp_payload_last_errors: Default::default(),
            req_payload_last_errors: Default::default(),
            to_err_from_responder: Default::default(),
            to_err_from_requester: Default::default(),
            core: Default::default(),
            bar: Default::default(),
            bank: Default::default(),
            events: Default::default(),
            events_q: Default::default(),
            cnps_seen: Default::default(),
            cuts_seen: Default::default(),
            trips_pending: Default::default(),
            rx_beat: Default::default(),
            tx_beat: Default::default(),
            rx_amount: Default::default(),
            tx_amount: Default::default(),
            lane_bytes: std::array::from_fn(|k| Constant::new(bits(k as u64 + 1))),
            rx_frames_bit: Constant::new(event_bit("rx_frames")),
            tx_frames_bit: Constant::new(event_bit("tx_frames")),
            tx_cnps_bit: Constant::new(event_bit("tx_cnps")),
            rx_cnps_bit: Constant::new(event_bit("rx_cnps")),
            rate_cuts_bit: Constant::new(event_bit("rate_cuts")),
            rx_pause_frames_bit: Constant::new(event_bit("rx_pause_frames")),
            pause_trips_bit: Constant::new(event_bit("pause_watchdog_trips")),
            mmio_unmapped_bit: Constant::new(event_bit("mmio_unmapped")),
        }
    }
}

impl Logic for NicTop {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(
            self,
            clock,
            core,
            bar,
            bank,
            events_q,
            cnps_seen,
            cuts_seen,
            trips_pending,
            rx_amount,
            tx_amount
        );
        self.core.reset.next = self.reset.val();
        self.bar.reset.next = self.reset.val();
        self.bank.reset.next = self.reset.val();

        // ---- BAR0 and its counters
        AxiLiteTarget::<ADDRESS_BITS>::link(&mut self.mmio, &mut self.bar.mmio);
        self.bank.clear.next = self.bar.soft_reset.val();
        self.bar.reset_busy.next = self.bank.clearing.val();
        self.bank.counter_index.next = self.bar.counter_index.val();
        self.bar.counter_value.next = self.bank.counter_value.val();
        self.bar.fatal.next = false;
        self.bar.fatal_set.next = bits::<32>(0);
        self.bar.asq_head.next = bits::<16>(0);
        self.bar.msix_pending.next = bits::<32>(0);
        self.bar.vector_lookup.next = false;
        self.bar.vector_lookup_index.next = bits::<5>(0);

        // ---- congestion control: BAR0's registers on the core's ports
        NpParamsSource::join(&mut self.bar.np, &mut self.core.np);
        RpParamsSource::join(&mut self.bar.rp, &mut self.core.rp);
        PfcParamsSource::join(&mut self.bar.pfc, &mut self.core.pfc);
        self.core.cnp_dscp.next = self.bar.cnp_dscp.val();

        // ---- the core's ports
        Axis512Sink::link(&mut self.rx, &mut self.core.rx);
        AxisSource::<DATA_BITS, KEEP_BITS>::link(&mut self.frame, &mut self.core.frame);
        self.core.tx_priority.next = self.tx_priority.val();
        self.pfc_paused.next = self.core.pfc_paused.val();
        self.pfc_tripped.next = self.core.pfc_tripped.val();
        self.pause_frame.next = self.core.pause_frame.val();
        self.pause_trips.next = self.core.pause_trips.val();
        self.core.now.next = self.now.val();
        self.cnp_fire.next = self.core.cnp_fire.val();
        self.cnp_qpn.next = self.core.cnp_qpn.val();
        self.ce_events.next = self.core.ce_events.val();
        self.cnp_lost.next = self.core.cnp_lost.val();
        PacingParamsPort::link(&mut self.pacing, &mut self.core.pacing);
        RpWatch::<QPN_BITS>::link(&mut self.rp_watch, &mut self.core.rp_watch);
        PacingWatch::<QPN_BITS>::link(&mut self.pacing_watch, &mut self.core.pacing_watch);
        self.cnps_received.next = self.core.cnps_received.val();
        self.rate_cuts.next = self.core.rate_cuts.val();
        self.dcqcn_lost.next = self.core.dcqcn_lost.val();
        ContextConfig::<QPN_BITS>::link(&mut self.rsp_qp_host, &mut self.core.rsp_qp_host);
        ContextConfig::<QPN_BITS>::link(&mut self.req_qp_host, &mut self.core.req_qp_host);
        QueueCommand::<QPN_BITS>::link(&mut self.queue_host, &mut self.core.queue_host);
        self.core.cfg_window.next = self.cfg_window.val();
        self.core.cfg_ack_req_interval.next = self.cfg_ack_req_interval.val();
        self.core.addr_write.next = self.addr_write.val();
        self.core.addr_qpn.next = self.addr_qpn.val();
        self.core.addr_data.next = self.addr_data.val();
        MrConfigPortDefault::link(&mut self.cfg, &mut self.core.cfg);
        ReceivePost::<QPN_BITS>::link(&mut self.rq_post, &mut self.core.rq_post);
        ReceiveCqeStream::<24>::link(&mut self.rcqe, &mut self.core.rcqe);
        SendPost::<QPN_BITS>::link(&mut self.post, &mut self.core.post);
        PostResult::<QPN_BITS, SLOT_BITS>::link(&mut self.post_result, &mut self.core.post_result);
        SendCqeStream::<QPN_BITS, SLOT_BITS>::link(&mut self.scqe, &mut self.core.scqe);
        DmaReadPort::link(&mut self.dma, &mut self.core.dma);
        DmaWritePort::link(&mut self.dmaw, &mut self.core.dmaw);
        self.out_valid.next = self.core.out_valid.val();
        self.core.out_ready.next = self.out_ready.val();
        self.out_qpn.next = self.core.out_qpn.val();
        self.out_psn.next = self.core.out_psn.val();
        self.out_opcode.next = self.core.out_opcode.val();
        self.out_verdict.next = self.core.out_verdict.val();
        self.out_response_valid.next = self.core.out_response_valid.val();
        self.out_response_syndrome.next = self.core.out_response_syndrome.val();
        self.queue_fire.next = self.core.queue_fire.val();
        self.desc_fire.next = self.core.desc_fire.val();
        self.desc_qpn.next = self.core.desc_qpn.val();
        self.rsp_fire.next = self.core.rsp_fire.val();
        QpEventDone::<QPN_BITS>::link(&mut self.done, &mut self.core.done);
        SentStatusEvent::link(&mut self.status, &mut self.core.status);
        self.core.stat_select.next = self.stat_select.val();
        self.rsp_stat_count.next = self.core.rsp_stat_count.val();
        self.req_stat_count.next = self.core.req_stat_count.val();
        self.queue_full_waits.next = self.core.queue_full_waits.val();
        self.read_errors.next = self.core.read_errors.val();
        self.rsp_payload_last_errors.next = self.core.rsp_payload_last_errors.val();
        self.req_payload_last_errors.next = self.core.req_payload_last_errors.val();
        self.to_err_from_responder.next = self.core.to_err_from_responder.val();
        self.to_err_from_requester.next = self.core.to_err_from_requester.val();

        // ---- the counters' events, registered once before the bank
        self.rx_beat.next = self.rx.tvalid.val() & self.rx.tready.val();
        self.tx_beat.next = self.frame.tvalid.val() & self.frame.tready.val();
        self.rx_amount.d.next = bits::<AMOUNT_BITS>(0);
        self.tx_amount.d.next = bits::<AMOUNT_BITS>(0);
        for k in 0..KEEP_BITS {
            if self.rx_beat.val() & self.rx.tkeep.val().get_bit(k) {
                self.rx_amount.d.next = self.lane_bytes[k].val();
            }
            if self.tx_beat.val() & self.frame.tkeep.val().get_bit(k) {
                self.tx_amount.d.next = self.lane_bytes[k].val();
            }
        }
        self.cnps_seen.d.next = self.core.cnps_received.val();
        self.cuts_seen.d.next = self.core.rate_cuts.val();
        self.trips_pending.d.next = (self.trips_pending.q.val()
            & (self.trips_pending.q.val() - bits::<8>(1)))
            | self.core.pause_trips.val();
        self.events.next = bits::<64>(0);
        if self.rx_beat.val() & self.rx.tlast.val() {
            self.events.next = self.events.val() | self.rx_frames_bit.val();
        }
        if self.tx_beat.val() & self.frame.tlast.val() {
            self.events.next = self.events.val() | self.tx_frames_bit.val();
        }
        if self.core.cnp_fire.val() {
            self.events.next = self.events.val() | self.tx_cnps_bit.val();
        }
        if self.core.cnps_received.val() != self.cnps_seen.q.val() {
            self.events.next = self.events.val() | self.rx_cnps_bit.val();
        }
        if self.core.rate_cuts.val() != self.cuts_seen.q.val() {
            self.events.next = self.events.val() | self.rate_cuts_bit.val();
        }
        if self.core.pause_frame.val() {
            self.events.next = self.events.val() | self.rx_pause_frames_bit.val();
        }
        if self.trips_pending.q.val().any() {
            self.events.next = self.events.val() | self.pause_trips_bit.val();
        }
        if self.bar.unmapped.val() {
            self.events.next = self.events.val() | self.mmio_unmapped_bit.val();
        }
        self.events_q.d.next = self.events.val();
        if self.reset.val() {
            self.events_q.d.next = bits::<64>(0);
            self.trips_pending.d.next = bits::<8>(0);
            self.rx_amount.d.next = bits::<AMOUNT_BITS>(0);
            self.tx_amount.d.next = bits::<AMOUNT_BITS>(0);
        }
        self.bank.events.next = self.events_q.q.val();
        self.bank.rx_bytes.next = self.rx_amount.q.val();
        self.bank.tx_bytes.next = self.tx_amount.q.val();
    }
}
