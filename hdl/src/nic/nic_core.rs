//! `NicCore`: the whole RC transport of one NIC, the two halves joined
//! (`docs/transport-core.md`, "The core top level"): MAC frames in and
//! out, one host DMA read port, one host DMA write port, the driver's
//! configuration, post and completion ports.
//!
//! ```text
//!            +--> ResponderPath (requests) --- responses --+
//! rx -- fork |      | ERR verdict -> err_* ^ ERR hand-over    | FrameArbiter -> frame
//!            +--> RequesterPath (responses) -- requests ---+
//!                   CE events of both -> CnpGenerator -- CNPs -+
//!                   CNPs in, frames out -> DcqcnSender (in RequesterPath):
//!                   per-QP rate, pacing of the grants
//!   DMA writes: responder (with its atomic unit), requester placement
//!               -> DmaWriteArbiter -> dmaw
//!   DMA reads:  requester payload, responder (transmitter + atomic unit,
//!               already arbitrated inside) -> DmaReadArbiter -> dma
//! ```
//!
//! The oracle is the model `Nic` as a whole; each half keeps its own
//! contract (see `ResponderPath` and `RequesterPath`), and what this block
//! adds mirrors `completer::move_to_error`: a QP that one direction moves
//! to ERR is moved to ERR by the other one too.
//!
//! # Ports
//!
//! - `clock`; `reset` (synchronous, high): pulse once after power-up, then
//!   wait for `cfg.ready`. Resets both halves as their own `reset` does,
//!   the arbiters, the PFC pauses, the rx fork and the
//!   responder-to-requester ERR event (a pending one is dropped). The
//!   requester-to-responder hand-over keeps its queue and finishes the QP
//!   it was handing over (the queue and its per-QP flags must stay
//!   consistent, and the flags have no reset).
//! - `rx` (AXI-Stream sink, 512/64): frames from the MAC, copied to both
//!   halves. Each half takes only its own opcodes (the responder requests,
//!   the requester responses) and counts the others as dropped / not
//!   handled, so no opcode split is needed here; a beat moves on once both
//!   halves have taken it (each half's `tvalid` never depends on the other's
//!   `tready`: a half that took the beat waits with its `tvalid` low).
//! - `frame` (AXI-Stream source): [`FrameArbiter`] over the CNPs, the
//!   responder's frames and the requester's, in that order, whole frames.
//! - `now` (32 bits: the time base, in cycles; a free-running counter on a
//!   board), `np` ([`NpParamsPort`]: `enabled`, `interval` in cycles):
//!   DCQCN's notification point, [`CnpGenerator`]; `cnp_dscp` (6 bits) the
//!   CNPs' DSCP, and so their priority. A CE-marked frame is
//!   reported when the scoreboard hands it to the shadow model (see "CE
//!   events" below). `cnp_fire` / `cnp_qpn`: a CNP of that QP enters the
//!   transmitter (the next CNP frame out is the QP's; the `tx_cnps`
//!   pulse); `ce_events` (CE events decided) and `cnp_lost` (events or
//!   CNPs dropped for a full queue) count.
//! - `rp` ([`RpParamsPort`], periods in cycles of `now`) and `pacing`
//!   ([`PacingParamsPort`]): DCQCN's reaction point and pacing at the
//!   requester ([`DcqcnSender`](crate::congestion::dcqcn_sender::DcqcnSender)):
//!   a CNP the requester's receive path takes cuts its QP's rate, and a
//!   throttled QP's grants wait for its rate. `rp_watch` / `pacing_watch`
//!   report every outcome of the reaction point and the pacing gate with
//!   its event (for a checker); `cnps_received`, `rate_cuts` and
//!   `dcqcn_lost` count.
//! - `pfc` ([`PfcParamsPort`]) and `tx_priority` (3 bits: the priority of
//!   the core's frames, the driver's DSCP / 8): priority flow control.
//!   [`PfcPause`] taps the receive beats both halves take; while
//!   `tx_priority` is paused no request or response frame starts (one
//!   under way runs to its end), and while the CNPs' priority (`cnp_dscp`
//!   / 8) is, no CNP starts. `pfc_paused` / `pfc_tripped` (8 bits) are
//!   [`PfcPause`]'s `paused` / `tripped`; `pause_frame` and `pause_trips`
//!   its counter pulses (`rx_pause_frames`, `pause_watchdog_trips`).
//! - `rsp_qp_host`, `req_qp_host` ([`ContextConfig`]): each direction's QP
//!   context (the driver writes both on `modify_qp`). `rsp_qp_host` is
//!   shared with the requester-side ERR hand-over (see below): an operation
//!   is held to its `done` either way, so the host may wait a few cycles.
//! - `queue_host` ([`QueueCommand`]): the driver's response-queue commands
//!   (`OP_CONFIGURE`, `OP_FLUSH`), shared with the hand-over's `OP_FLUSH`.
//! - `cfg_window`, `cfg_ack_req_interval`: the requester's.
//! - `addr_*`: one address RAM write port, written to both halves' RAMs.
//! - `cfg` (MR table and MTT): fanned out to both halves (four MR tables
//!   in all); `cfg.ready` = both ready.
//! - `rq_post` / `rcqe`: receive WQEs and receive CQEs (the responder's).
//! - `post_*` / `post_result_*` / `scqe_*`: send WQEs, their answers and
//!   the send CQEs (the requester's). One CQE stream per direction.
//! - `dma` ([`DmaReadPort`]): tag bit 7 = client (0 requester, tags 0..15;
//!   1 responder, its tags 0..15 (transmitter) and 0x80 (atomic unit) carried
//!   as 0..15 and 0x40 in bits 0..6), read data routed back by tag.
//! - `dmaw` ([`DmaWritePort`]): [`DmaWriteArbiter`], bursts whole, round
//!   robin between the responder (a = its writes and its atomic results)
//!   and the requester's placements (b).
//! - For a scoreboard: the responder's outcome (`out_*`, its `out_ready`),
//!   `queue_fire`, `desc_fire` / `desc_qpn`; the requester's `rsp_fire`,
//!   `done_*`, `status_*` (their meaning in the two halves' docs).
//! - Counters: `stat_select` to both halves (`rsp_stat_count`,
//!   `req_stat_count`), `queue_full_waits`, `read_errors`, both
//!   `*_payload_last_errors`, `to_err_from_responder` /
//!   `to_err_from_requester` (hand-overs queued; a requester ERR event of a
//!   QP already queued is merged into that one and not counted).
//!
//! # The ERR events between the halves
//!
//! - **Responder to requester.** An outcome whose verdict moved the QP to
//!   ERR (invalid request, remote access, receive fault: the verdicts
//!   after which `ResponderDatapath` issues `OP_FLUSH`) is held as an
//!   `err_*` event (`EV_TO_ERROR`: flush the send queue with WR_FLUSH_ERR
//!   CQEs, stop the timer). While it waits, the next outcome waits (the
//!   outer `out_valid` is low), so none is lost.
//! - **Requester to responder.** A requester event of kind `EV_RESPONSE`,
//!   `EV_TIMER` or `EV_SENT` whose write-back state is ERR (retry exceeded,
//!   error NAK, local error; also such an event of a QP already in ERR,
//!   where the hand-over changes nothing) queues its QPN, unless the QP is
//!   queued already. Each queued QP is handed over as the model's
//!   `completer::move_to_error` does to the responder side: its responder
//!   context's `state` is written ERR (a masked write through
//!   `rsp_qp_host`, taking turns with the host's operations, a started
//!   one held to its `done`); then its receive queue is flushed (the
//!   responder path's `rq_flush_*`: every posted receive WQE, a SEND in
//!   progress's first, completes with WR_FLUSH_ERR on `rcqe`, in posting
//!   order, `completer::flush_receive_queue`); and `OP_FLUSH` goes to its
//!   response queue (before the host's commands). The flush waits for the
//!   state write so that no request decided after the flush can consume a
//!   WQE: it finds the QP in ERR and is refused (`check_request`'s
//!   `QpState`). `EV_TO_ERROR` itself is not echoed back.
//!
//!   **None is lost.** Requester events come as one-cycle pulses that
//!   cannot wait, and a hand-over may wait long (the host holding the
//!   context port, a receive flush of 16 WQEs behind a slow CQE
//!   consumer), so the queue must hold every QP that can be waiting: a
//!   per-QP "queued" flag (1024 x 1 bit of LUT RAM, read in the event's
//!   cycle, no reset) is set when a QP enters the queue and cleared when
//!   its hand-over is taken from it, and an event of a flagged QP is
//!   merged into the waiting hand-over (which has not started, so it
//!   still covers the event). The queue then holds each QP at most once,
//!   and at 1024 entries (one RAMB18 of 10-bit QPNs) it can never be full.
//!   Back-pressuring the requester's event loop instead would stall every
//!   QP's completions behind one slow flush. An event arriving while its
//!   QP's hand-over is under way queues it again (a second, harmless
//!   hand-over: state ERR again, nothing left to flush but WQEs posted
//!   since, which the model would also complete with WR_FLUSH_ERR).
//!
//! # CE events
//!
//! A request frame's CE mark is reported at its commit point (the first
//! accepted queue command after the previous outcome was taken, or else
//! its own outcome: `ResponderPath`, "The commit point"), with the QP of
//! the oldest frame whose outcome has not been taken (the presented
//! outcome's, or the one being decided); an outcome and the next frame's
//! first command in one cycle report two. A response frame's is reported
//! when the requester's event loop takes its header (`rsp_fire`). These
//! are the moments the shadow model takes the frames, so its notification
//! point decides on the same times in the same order. Only frames a half
//! takes for a QP in its table count (not a parser drop, not another
//! half's opcode). A QP has a path, and so gets CNPs, from its address
//! write until the host writes its responder context's state RESET or
//! INIT.
//!
//! # Latency and throughput
//!
//! The halves' own. Added here: the frame arbiter's register (1 cycle, one
//! beat per cycle); the rx fork, the DMA arbiters and the hand-overs are
//! combinational to their first register (0 cycles). Receive beats move at
//! the slower half's rate.
//!
//! # Memory
//!
//! The QP contexts, rings, WQE bodies, address RAMs and the four MR / MTT
//! table pairs (two per half, most of the block RAM) are in block RAM;
//! distributed RAM holds only the 32- and 64-deep FIFOs and buffers
//! (`hdl/tests/nic_core.rs` checks it; the size is in `docs/status.md`).
//!
//! # Verification
//!
//! Verilator `-Wall` clean (the TX builders' tkeep waivers for this file),
//! Yosys check clean. `sim/tests/nic/nic_core.rs`: the rx copy (every
//! frame reaches both halves, each takes exactly the opcodes the model's
//! `nic::frame_kind` gives it), the responder-to-requester ERR event, and
//! the requester-to-responder hand-over against a model `Nic`: error NAKs
//! fail QPs while the peer's SENDs consume receive WQEs (the responder
//! side refuses later requests as `check_request` does, the receive CQE
//! stream is the model's after `move_to_error`), and 40 QPs failing at
//! once with the host holding the context port and the CQE port stalling
//! (more than 16 waiting at once, none lost).

use crate::codes::{qp_state, request_verdict};
use crate::congestion::cnp_generator::CnpGenerator;
use crate::congestion::dcqcn_notification_point::NpParamsPort;
use crate::congestion::dcqcn_reaction_point::RpParamsPort;
use crate::congestion::dcqcn_sender::{PacingWatch, RpWatch};
use crate::congestion::pacing_gate::PacingParamsPort;
use crate::congestion::pfc_pause::{PfcParamsPort, PfcPause};
use crate::dma::dma_port::{DmaReadPort, DmaWritePort};
use crate::dma::dma_read_arbiter::DmaReadArbiter;
use crate::dma::dma_write_arbiter::DmaWriteArbiter;
use crate::dma::mr_translate::MrConfigPortDefault;
use crate::nic::frame_arbiter::FrameArbiter;
use crate::primitives::stream::{Axis512Sink, AxisSource, DATA_BITS, KEEP_BITS};
use crate::primitives::sync_fifo::SyncFifo;
use crate::qp::qp_address_ram::QpAddress;
use crate::qp::qp_context::{ContextConfig, Record};
use crate::qp::qp_context_record::RECORD_BITS;
use crate::requester::completer_datapath::{EV_RESPONSE, EV_SENT, EV_TIMER};
use crate::requester::requester_events::SLOT_BITS;
use crate::requester::requester_path::RequesterPathDefault;
use crate::requester::send_ports::{
    PostResult, QpEventDone, SendCqeStream, SendPost, SentStatusEvent,
};
use crate::responder::receive_queue::{FlagTable, ReceiveCqeStream, ReceivePost};
use crate::responder::responder_datapath::QPN_BITS;
use crate::responder::responder_path::ResponderPath;
use crate::responder::response_queue::{QueueCommand, OP_FLUSH};
use rust_hdl::prelude::*;

/// Who holds the responder context's host port.
const PORT_FREE: u64 = 0;
const PORT_HOST: u64 = 1;
const PORT_ERR: u64 = 2;

#[derive(LogicBlock)]
pub struct NicCore {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub rx: Axis512Sink,
    pub frame: AxisSource<DATA_BITS, KEEP_BITS>,
    pub pfc: PfcParamsPort,
    pub tx_priority: Signal<In, Bits<3>>,
    pub pfc_paused: Signal<Out, Bits<8>>,
    pub pfc_tripped: Signal<Out, Bits<8>>,
    pub pause_frame: Signal<Out, Bit>,
    pub pause_trips: Signal<Out, Bits<8>>,
    pub now: Signal<In, Bits<32>>,
    pub np: NpParamsPort,
    pub cnp_dscp: Signal<In, Bits<6>>,
    pub cnp_fire: Signal<Out, Bit>,
    pub cnp_qpn: Signal<Out, Bits<QPN_BITS>>,
    pub ce_events: Signal<Out, Bits<32>>,
    pub cnp_lost: Signal<Out, Bits<16>>,
    pub rp: RpParamsPort,
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

    responder: ResponderPath,
    requester: RequesterPathDefault,
    tx: FrameArbiter<DATA_BITS, KEEP_BITS>,
    pause: PfcPause,
    /// `tx_priority` is paused.
    data_paused: Signal<Local, Bit>,
    /// The CNPs' priority (`cnp_dscp` / 8) is paused.
    cnp_paused: Signal<Local, Bit>,
    /// The arbiter's `pause` bits of the response and request sources,
    /// of the CNP source, of all three.
    data_sources: Constant<Bits<3>>,
    cnp_source: Constant<Bits<3>>,
    all_sources: Constant<Bits<3>>,
    write_arbiter: DmaWriteArbiter,
    read_arbiter: DmaReadArbiter,

    // ---- DCQCN's notification point: CE events at the halves' commit
    // points
    cnps: CnpGenerator,
    /// The oldest request frame without a taken outcome is committed (a
    /// queue command of it was accepted).
    rsp_fed: DFF<Bit>,
    fed_after_outcome: Signal<Local, Bit>,
    commit_by_outcome: Signal<Local, Bit>,
    commit_by_command: Signal<Local, Bit>,
    outcome_ce: Signal<Local, Bit>,
    command_ce: Signal<Local, Bit>,
    command_qpn: Signal<Local, Bits<24>>,

    // ---- rx fork
    /// The half has taken the beat on offer; it waits for the other.
    rsp_took: DFF<Bit>,
    req_took: DFF<Bit>,
    rsp_has_beat: Signal<Local, Bit>,
    req_has_beat: Signal<Local, Bit>,
    beat_moves: Signal<Local, Bit>,

    // ---- DMA read tags of the responder: bit 7 -> bit 6 and back
    low_six: Constant<Bits<8>>,
    rsp_tag_inner: Constant<Bits<8>>,
    rsp_tag_outer: Constant<Bits<8>>,

    // ---- responder -> requester: EV_TO_ERROR
    rsp_err_pending: DFF<Bit>,
    rsp_err_qpn: DFF<Bits<QPN_BITS>>,
    outcome_taken: Signal<Local, Bit>,
    outcome_to_err: Signal<Local, Bit>,
    verdict_invalid: Constant<Bits<4>>,
    verdict_access: Constant<Bits<4>>,
    verdict_receive: Constant<Bits<4>>,
    rsp_err_count: DFF<Bits<16>>,

    // ---- requester -> responder: state ERR, receive flush, OP_FLUSH
    /// One entry per QP at most (see `queued`): never full.
    req_err_fifo: SyncFifo<Bits<QPN_BITS>, QPN_BITS, 11>,
    /// Per QP: in `req_err_fifo`, not yet taken.
    queued: FlagTable<QPN_BITS>,
    req_err_event: Signal<Local, Bit>,
    enqueue: Signal<Local, Bit>,
    /// The QP being handed over; its three writes still owed.
    work_qpn: DFF<Bits<QPN_BITS>>,
    ctx_owed: DFF<Bit>,
    rq_flush_owed: DFF<Bit>,
    flush_owed: DFF<Bit>,
    take_next: Signal<Local, Bit>,
    port_owner: DFF<Bits<2>>,
    port_chosen: Signal<Local, Bits<2>>,
    port_free: Constant<Bits<2>>,
    port_host: Constant<Bits<2>>,
    port_err: Constant<Bits<2>>,
    state_mask: Constant<Record>,
    state_err: Constant<Record>,
    ev_response: Constant<Bits<3>>,
    ev_timer: Constant<Bits<3>>,
    ev_sent: Constant<Bits<3>>,
    qp_err: Constant<Bits<3>>,
    op_flush: Constant<Bits<3>>,
    req_err_count: DFF<Bits<16>>,
}

impl Default for NicCore {
    fn default() -> Self {
        NicCore {
            clock: Default::default(),
            reset: Default::default(),
            rx: Default::default(),
            frame: Default::default(),
            pfc: Default::default(),
            tx_priority: Default::default(),
            pfc_paused: Default::default(),
            pfc_tripped: Default::default(),
            pause_frame: Default::default(),
            pause_trips: Default::default(),
            now: Default::default(),
            np: Default::default(),
            cnp_dscp: Default::default(),
            cnp_fire: Default::default(),
            cnp_qpn: Default::default(),
            ce_events: Default::default(),
            cnp_lost: Default::default(),
            rp: Default::default(),
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
            responder: Default::default(),
            requester: Default::default(),
            tx: Default::default(),
            pause: Default::default(),
            data_paused: Default::default(),
            cnp_paused: Default::default(),
            data_sources: Constant::new(bits(0b110)),
            cnp_source: Constant::new(bits(0b001)),
            all_sources: Constant::new(bits(0b111)),
            write_arbiter: Default::default(),
            read_arbiter: Default::default(),
            cnps: Default::default(),
            rsp_fed: Default::default(),
            fed_after_outcome: Default::default(),
            commit_by_outcome: Default::default(),
            commit_by_command: Default::default(),
            outcome_ce: Default::default(),
            command_ce: Default::default(),
            command_qpn: Default::default(),
            rsp_took: Default::default(),
            req_took: Default::default(),
            rsp_has_beat: Default::default(),
            req_has_beat: Default::default(),
            beat_moves: Default::default(),
            low_six: Constant::new(bits(0x3F)),
            rsp_tag_inner: Constant::new(bits(0x40)),
            rsp_tag_outer: Constant::new(bits(0x80)),
            rsp_err_pending: Default::default(),
            rsp_err_qpn: Default::default(),
            outcome_taken: Default::default(),
            outcome_to_err: Default::default(),
            verdict_invalid: Constant::new(bits::<4>(request_verdict::INVALID_REQUEST)),
            verdict_access: Constant::new(bits::<4>(request_verdict::REMOTE_ACCESS)),
            verdict_receive: Constant::new(bits::<4>(request_verdict::RECEIVE_FAULT)),
            rsp_err_count: Default::default(),
            req_err_fifo: Default::default(),
            queued: Default::default(),
            req_err_event: Default::default(),
            enqueue: Default::default(),
            work_qpn: Default::default(),
            ctx_owed: Default::default(),
            rq_flush_owed: Default::default(),
            flush_owed: Default::default(),
            take_next: Default::default(),
            port_owner: Default::default(),
            port_chosen: Default::default(),
            port_free: Constant::new(bits(PORT_FREE)),
            port_host: Constant::new(bits(PORT_HOST)),
            port_err: Constant::new(bits(PORT_ERR)),
            state_mask: Constant::new(bits(0b111)),
            state_err: Constant::new(bits::<RECORD_BITS>(u64::from(qp_state::ERR))),
            ev_response: Constant::new(bits(EV_RESPONSE)),
            ev_timer: Constant::new(bits(EV_TIMER)),
            ev_sent: Constant::new(bits(EV_SENT)),
            qp_err: Constant::new(bits::<3>(u64::from(qp_state::ERR))),
            op_flush: Constant::new(bits(OP_FLUSH)),
            req_err_count: Default::default(),
        }
    }
}

impl Logic for NicCore {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            rsp_took,
            req_took,
            rsp_err_pending,
            rsp_err_qpn,
            rsp_err_count,
            work_qpn,
            ctx_owed,
            rq_flush_owed,
            flush_owed,
            port_owner,
            req_err_count,
            rsp_fed
        );
        clock!(
            self,
            clock,
            responder,
            requester,
            tx,
            pause,
            write_arbiter,
            read_arbiter,
            req_err_fifo,
            queued
        );
        self.responder.reset.next = self.reset.val();
        self.requester.reset.next = self.reset.val();
        self.tx.reset.next = self.reset.val();
        self.pause.reset.next = self.reset.val();
        self.write_arbiter.reset.next = self.reset.val();
        self.read_arbiter.reset.next = self.reset.val();
        // Not reset: the FIFO holds exactly the QPs whose `queued` flag is
        // set, and the flags (LUT RAM) have no reset.
        self.req_err_fifo.reset.next = false;

        // ---- rx: one beat to both halves, each taking it when it can
        self.responder.rx.tdata.next = self.rx.tdata.val();
        self.responder.rx.tkeep.next = self.rx.tkeep.val();
        self.responder.rx.tlast.next = self.rx.tlast.val();
        self.responder.rx.tvalid.next = self.rx.tvalid.val() & !self.rsp_took.q.val();
        self.requester.rx.tdata.next = self.rx.tdata.val();
        self.requester.rx.tkeep.next = self.rx.tkeep.val();
        self.requester.rx.tlast.next = self.rx.tlast.val();
        self.requester.rx.tvalid.next = self.rx.tvalid.val() & !self.req_took.q.val();
        self.rsp_has_beat.next = self.rsp_took.q.val() | self.responder.rx.tready.val();
        self.req_has_beat.next = self.req_took.q.val() | self.requester.rx.tready.val();
        self.beat_moves.next = self.rsp_has_beat.val() & self.req_has_beat.val();
        self.rx.tready.next = self.beat_moves.val();
        if self.rx.tvalid.val() {
            self.rsp_took.d.next = self.rsp_has_beat.val() & !self.beat_moves.val();
            self.req_took.d.next = self.req_has_beat.val() & !self.beat_moves.val();
        }

        // ---- PFC: pauses from the beats taken, honoured at frame starts
        self.pause.rx_valid.next = self.rx.tvalid.val() & self.beat_moves.val();
        self.pause.rx_data.next = self.rx.tdata.val();
        self.pause.rx_keep.next = self.rx.tkeep.val();
        self.pause.rx_last.next = self.rx.tlast.val();
        PfcParamsPort::link(&mut self.pfc, &mut self.pause.cfg);
        self.data_paused.next = self
            .pause
            .paused
            .val()
            .get_bit(self.tx_priority.val().index());
        self.cnp_paused.next = self
            .pause
            .paused
            .val()
            .get_bit(self.cnp_dscp.val().get_bits::<3>(3).index());
        self.tx.pause.next = 0.into();
        if self.data_paused.val() {
            self.tx.pause.next = self.data_sources.val();
        }
        if self.cnp_paused.val() {
            self.tx.pause.next = self.cnp_source.val();
        }
        if self.data_paused.val() & self.cnp_paused.val() {
            self.tx.pause.next = self.all_sources.val();
        }
        self.pfc_paused.next = self.pause.paused.val();
        self.pfc_tripped.next = self.pause.tripped.val();
        self.pause_frame.next = self.pause.pause_frame.val();
        self.pause_trips.next = self.pause.trips.val();

        // ---- tx: CNPs, then responses, then requests, whole frames
        AxisSource::<DATA_BITS, KEEP_BITS>::join(&mut self.cnps.frame, &mut self.tx.cnp);
        self.tx.response.tdata.next = self.responder.frame.tdata.val();
        self.tx.response.tkeep.next = self.responder.frame.tkeep.val();
        self.tx.response.tlast.next = self.responder.frame.tlast.val();
        self.tx.response.tvalid.next = self.responder.frame.tvalid.val();
        self.responder.frame.tready.next = self.tx.response.tready.val();
        self.tx.request.tdata.next = self.requester.frame.tdata.val();
        self.tx.request.tkeep.next = self.requester.frame.tkeep.val();
        self.tx.request.tlast.next = self.requester.frame.tlast.val();
        self.tx.request.tvalid.next = self.requester.frame.tvalid.val();
        self.requester.frame.tready.next = self.tx.request.tready.val();
        self.frame.tdata.next = self.tx.frame.tdata.val();
        self.frame.tkeep.next = self.tx.frame.tkeep.val();
        self.frame.tlast.next = self.tx.frame.tlast.val();
        self.frame.tvalid.next = self.tx.frame.tvalid.val();
        self.tx.frame.tready.next = self.frame.tready.val();

        // ---- DMA writes: bursts whole, round robin
        DmaWritePort::join(&mut self.responder.dmaw, &mut self.write_arbiter.a);
        DmaWritePort::join(&mut self.requester.dmaw, &mut self.write_arbiter.b);
        DmaWritePort::link(&mut self.dmaw, &mut self.write_arbiter.dma);

        // ---- DMA reads: the responder's own client bit (7) rides in bit 6
        // under this arbiter's client bit.
        DmaReadPort::join(&mut self.requester.dma, &mut self.read_arbiter.a);
        DmaReadPort::link(&mut self.dma, &mut self.read_arbiter.dma);
        self.read_arbiter.b.req_valid.next = self.responder.dma.req_valid.val();
        self.responder.dma.req_ready.next = self.read_arbiter.b.req_ready.val();
        self.read_arbiter.b.req_tag.next = self.responder.dma.req_tag.val() & self.low_six.val();
        if self.responder.dma.req_tag.val().get_bit(7) {
            self.read_arbiter.b.req_tag.next =
                (self.responder.dma.req_tag.val() & self.low_six.val()) | self.rsp_tag_inner.val();
        }
        self.read_arbiter.b.req_addr.next = self.responder.dma.req_addr.val();
        self.read_arbiter.b.req_len.next = self.responder.dma.req_len.val();
        self.responder.dma.rd_valid.next = self.read_arbiter.b.rd_valid.val();
        self.read_arbiter.b.rd_ready.next = self.responder.dma.rd_ready.val();
        self.responder.dma.rd_tag.next = self.read_arbiter.b.rd_tag.val() & self.low_six.val();
        if self.read_arbiter.b.rd_tag.val().get_bit(6) {
            self.responder.dma.rd_tag.next =
                (self.read_arbiter.b.rd_tag.val() & self.low_six.val()) | self.rsp_tag_outer.val();
        }
        self.responder.dma.rd_data.next = self.read_arbiter.b.rd_data.val();
        self.responder.dma.rd_last.next = self.read_arbiter.b.rd_last.val();

        // ---- configuration shared by both halves
        self.responder.addr_write.next = self.addr_write.val();
        self.responder.addr_qpn.next = self.addr_qpn.val();
        self.responder.addr_data.next = self.addr_data.val();
        self.requester.addr_write.next = self.addr_write.val();
        self.requester.addr_qpn.next = self.addr_qpn.val();
        self.requester.addr_data.next = self.addr_data.val();
        self.cfg.ready.next = self.responder.cfg.ready.val() & self.requester.cfg.ready.val();
        self.responder.cfg.mr_write.next = self.cfg.mr_write.val();
        self.responder.cfg.mr_index.next = self.cfg.mr_index.val();
        self.responder.cfg.mr_state.next = self.cfg.mr_state.val();
        self.responder.cfg.mr_variant.next = self.cfg.mr_variant.val();
        self.responder.cfg.mr_pd.next = self.cfg.mr_pd.val();
        self.responder.cfg.mr_base_va.next = self.cfg.mr_base_va.val();
        self.responder.cfg.mr_len.next = self.cfg.mr_len.val();
        self.responder.cfg.mr_access.next = self.cfg.mr_access.val();
        self.responder.cfg.mr_page_shift.next = self.cfg.mr_page_shift.val();
        self.responder.cfg.mr_mtt_base.next = self.cfg.mr_mtt_base.val();
        self.responder.cfg.mtt_write.next = self.cfg.mtt_write.val();
        self.responder.cfg.mtt_index.next = self.cfg.mtt_index.val();
        self.responder.cfg.mtt_addr.next = self.cfg.mtt_addr.val();
        self.requester.cfg.mr_write.next = self.cfg.mr_write.val();
        self.requester.cfg.mr_index.next = self.cfg.mr_index.val();
        self.requester.cfg.mr_state.next = self.cfg.mr_state.val();
        self.requester.cfg.mr_variant.next = self.cfg.mr_variant.val();
        self.requester.cfg.mr_pd.next = self.cfg.mr_pd.val();
        self.requester.cfg.mr_base_va.next = self.cfg.mr_base_va.val();
        self.requester.cfg.mr_len.next = self.cfg.mr_len.val();
        self.requester.cfg.mr_access.next = self.cfg.mr_access.val();
        self.requester.cfg.mr_page_shift.next = self.cfg.mr_page_shift.val();
        self.requester.cfg.mr_mtt_base.next = self.cfg.mr_mtt_base.val();
        self.requester.cfg.mtt_write.next = self.cfg.mtt_write.val();
        self.requester.cfg.mtt_index.next = self.cfg.mtt_index.val();
        self.requester.cfg.mtt_addr.next = self.cfg.mtt_addr.val();
        ContextConfig::<QPN_BITS>::link(&mut self.req_qp_host, &mut self.requester.qp_host);
        self.requester.now.next = self.now.val();
        RpParamsPort::link(&mut self.rp, &mut self.requester.rp);
        PacingParamsPort::link(&mut self.pacing, &mut self.requester.pacing);
        RpWatch::<QPN_BITS>::link(&mut self.rp_watch, &mut self.requester.rp_watch);
        PacingWatch::<QPN_BITS>::link(&mut self.pacing_watch, &mut self.requester.pacing_watch);
        self.cnps_received.next = self.requester.dcqcn_cnps.val();
        self.rate_cuts.next = self.requester.dcqcn_cuts.val();
        self.dcqcn_lost.next = self.requester.dcqcn_lost.val();
        self.requester.cfg_window.next = self.cfg_window.val();
        self.requester.cfg_ack_req_interval.next = self.cfg_ack_req_interval.val();

        // ---- the responder's host ports, receive WQEs and CQEs
        ReceivePost::<QPN_BITS>::link(&mut self.rq_post, &mut self.responder.rq_post);
        ReceiveCqeStream::<24>::link(&mut self.rcqe, &mut self.responder.cqe);

        // ---- the requester's posts and send CQEs
        SendPost::<QPN_BITS>::link(&mut self.post, &mut self.requester.post);
        PostResult::<QPN_BITS, SLOT_BITS>::link(
            &mut self.post_result,
            &mut self.requester.post_result,
        );
        SendCqeStream::<QPN_BITS, SLOT_BITS>::link(&mut self.scqe, &mut self.requester.cqe);

        // ---- scoreboard signals and counters
        self.queue_fire.next = self.responder.queue_fire.val();
        self.desc_fire.next = self.responder.desc_fire.val();
        self.desc_qpn.next = self.responder.desc_qpn.val();
        self.rsp_fire.next = self.requester.rsp_fire.val();
        QpEventDone::<QPN_BITS>::link(&mut self.done, &mut self.requester.done);
        SentStatusEvent::link(&mut self.status, &mut self.requester.status);
        self.responder.stat_select.next = self.stat_select.val();
        self.requester.stat_select.next = self.stat_select.val();
        self.rsp_stat_count.next = self.responder.stat_count.val();
        self.req_stat_count.next = self.requester.stat_count.val();
        self.queue_full_waits.next = self.responder.queue_full_waits.val();
        self.read_errors.next = self.responder.read_errors.val();
        self.rsp_payload_last_errors.next = self.responder.payload_last_errors.val();
        self.req_payload_last_errors.next = self.requester.payload_last_errors.val();
        self.to_err_from_responder.next = self.rsp_err_count.q.val();
        self.to_err_from_requester.next = self.req_err_count.q.val();

        // ---- responder -> requester: an outcome that moved its QP to ERR
        // waits as the requester's EV_TO_ERROR; later outcomes wait for it.
        self.out_valid.next = self.responder.out.valid.val() & !self.rsp_err_pending.q.val();
        self.responder.out.ready.next = self.out_ready.val() & !self.rsp_err_pending.q.val();
        self.out_qpn.next = self.responder.out.qpn.val();
        self.out_psn.next = self.responder.out.psn.val();
        self.out_opcode.next = self.responder.out.opcode.val();
        self.out_verdict.next = self.responder.out.verdict.val();
        self.out_response_valid.next = self.responder.out.response_valid.val();
        self.out_response_syndrome.next = self.responder.out.response_syndrome.val();
        self.outcome_taken.next =
            self.responder.out.valid.val() & self.out_ready.val() & !self.rsp_err_pending.q.val();
        self.outcome_to_err.next = (self.responder.out.verdict.val() == self.verdict_invalid.val())
            | (self.responder.out.verdict.val() == self.verdict_access.val())
            | (self.responder.out.verdict.val() == self.verdict_receive.val());
        if self.outcome_taken.val() & self.outcome_to_err.val() {
            self.rsp_err_pending.d.next = true;
            self.rsp_err_qpn.d.next = self.responder.out.qpn.val().get_bits::<QPN_BITS>(0);
            self.rsp_err_count.d.next = self.rsp_err_count.q.val() + 1;
        }
        self.requester.err.valid.next = self.rsp_err_pending.q.val();
        self.requester.err.qpn.next = self.rsp_err_qpn.q.val();
        if self.rsp_err_pending.q.val() & self.requester.err.ready.val() {
            self.rsp_err_pending.d.next = false;
        }

        // ---- CE-marked frames to the notification point, each at the
        // moment the scoreboard hands its frame to the shadow model: a
        // request frame at its commit point (the first accepted queue
        // command after the previous outcome was taken, or else its own
        // outcome; `ResponderPath`, "The commit point"), a response when
        // the requester's event loop takes its header. The frame of a
        // command is the oldest without a taken outcome: the presented
        // outcome's, or else the one being decided.
        self.cnps.clock.next = self.clock.val();
        self.cnps.reset.next = self.reset.val();
        self.cnps.now.next = self.now.val();
        NpParamsPort::link(&mut self.np, &mut self.cnps.cfg);
        self.fed_after_outcome.next = self.rsp_fed.q.val() & !self.outcome_taken.val();
        self.commit_by_outcome.next = self.outcome_taken.val() & !self.rsp_fed.q.val();
        self.commit_by_command.next =
            self.responder.queue_fire.val() & !self.fed_after_outcome.val();
        self.rsp_fed.d.next = self.fed_after_outcome.val() | self.commit_by_command.val();
        self.outcome_ce.next = self.commit_by_outcome.val() & self.responder.out.ce.val();
        self.command_qpn.next = self.responder.deciding_qpn.val();
        self.command_ce.next = self.responder.deciding_ce.val();
        if self.responder.out.valid.val() & !self.outcome_taken.val() {
            self.command_qpn.next = self.responder.out.qpn.val();
            self.command_ce.next = self.responder.out.ce.val();
        }
        self.cnps.rsp_ce_valid.next =
            self.outcome_ce.val() | (self.commit_by_command.val() & self.command_ce.val());
        self.cnps.rsp_ce_qpn.next = self.command_qpn.val().get_bits::<QPN_BITS>(0);
        if self.outcome_ce.val() {
            self.cnps.rsp_ce_qpn.next = self.responder.out.qpn.val().get_bits::<QPN_BITS>(0);
        }
        self.cnps.rsp_ce2_valid.next =
            self.outcome_ce.val() & self.commit_by_command.val() & self.command_ce.val();
        self.cnps.rsp_ce2_qpn.next = self.command_qpn.val().get_bits::<QPN_BITS>(0);
        self.cnps.req_ce_valid.next = self.requester.rsp_fire.val() & self.requester.rsp_ce.val();
        self.cnps.req_ce_qpn.next = self.requester.rsp_qpn.val();
        self.cnps.addr_write.next = self.addr_write.val();
        self.cnps.addr_qpn.next = self.addr_qpn.val();
        self.cnps.addr_data.next = self.addr_data.val();
        self.cnps.cnp_dscp.next = self.cnp_dscp.val();
        self.cnp_fire.next = self.cnps.cnp_fire.val();
        self.cnp_qpn.next = self.cnps.cnp_qpn.val();
        self.ce_events.next = self.cnps.ce_events.val();
        self.cnp_lost.next = self.cnps.lost.val();
        if self.reset.val() {
            self.rsp_fed.d.next = false;
        }

        // ---- requester -> responder: a completer event that left its QP
        // in ERR queues the QP unless it is queued already (so the FIFO,
        // as deep as the QP table, never fills); taking it from the FIFO
        // clears its flag, then the state write, the receive flush and
        // OP_FLUSH follow.
        self.req_err_event.next = self.done.valid.val()
            & (self.done.state.val() == self.qp_err.val())
            & ((self.done.kind.val() == self.ev_response.val())
                | (self.done.kind.val() == self.ev_timer.val())
                | (self.done.kind.val() == self.ev_sent.val()));
        self.queued.read_address.next = self.done.qpn.val();
        self.enqueue.next = self.req_err_event.val() & !self.queued.read_data.val();
        self.req_err_fifo.write.next = self.enqueue.val();
        self.req_err_fifo.data_in.next = self.done.qpn.val();
        if self.enqueue.val() {
            self.req_err_count.d.next = self.req_err_count.q.val() + 1;
        }
        // The flag table has one write port: a take waits a cycle for an
        // enqueue (events never come every cycle).
        self.take_next.next = !self.ctx_owed.q.val()
            & !self.rq_flush_owed.q.val()
            & !self.flush_owed.q.val()
            & !self.req_err_fifo.empty.val()
            & !self.enqueue.val();
        self.req_err_fifo.read.next = self.take_next.val();
        self.queued.write_enable.next = self.enqueue.val() | self.take_next.val();
        self.queued.write_address.next = self.done.qpn.val();
        self.queued.write_data.next = true;
        if self.take_next.val() {
            self.queued.write_address.next = self.req_err_fifo.data_out.val();
            self.queued.write_data.next = false;
            self.work_qpn.d.next = self.req_err_fifo.data_out.val();
            self.ctx_owed.d.next = true;
            self.rq_flush_owed.d.next = true;
            self.flush_owed.d.next = true;
        }

        // The responder context's host port: the host's operation or the
        // hand-over's state write, the one started held to its `done`.
        self.port_chosen.next = self.port_owner.q.val();
        if self.port_owner.q.val() == self.port_free.val() {
            if self.ctx_owed.q.val() {
                self.port_chosen.next = self.port_err.val();
            } else if self.rsp_qp_host.valid.val() {
                self.port_chosen.next = self.port_host.val();
            }
        }
        self.port_owner.d.next = self.port_chosen.val();
        self.responder.qp_host.valid.next = self.rsp_qp_host.valid.val();
        self.responder.qp_host.qpn.next = self.rsp_qp_host.qpn.val();
        self.responder.qp_host.mask.next = self.rsp_qp_host.mask.val();
        self.responder.qp_host.data.next = self.rsp_qp_host.data.val();
        self.rsp_qp_host.done.next = false;
        self.rsp_qp_host.old.next = self.responder.qp_host.old.val();
        self.rsp_qp_host.stalled.next = false;
        if self.port_chosen.val() == self.port_err.val() {
            self.responder.qp_host.valid.next = true;
            self.responder.qp_host.qpn.next = self.work_qpn.q.val();
            self.responder.qp_host.mask.next = self.state_mask.val();
            self.responder.qp_host.data.next = self.state_err.val();
            if self.responder.qp_host.done.val() {
                self.ctx_owed.d.next = false;
                self.port_owner.d.next = self.port_free.val();
            }
        }
        if self.port_chosen.val() == self.port_host.val() {
            self.rsp_qp_host.done.next = self.responder.qp_host.done.val();
            self.rsp_qp_host.stalled.next = self.responder.qp_host.stalled.val();
            if self.responder.qp_host.done.val() {
                self.port_owner.d.next = self.port_free.val();
            }
        }
        // A QP the host puts back to RESET or INIT (state code 0 or 1,
        // bits 2:1 zero) has no path: the model sends it no CNP.
        self.cnps.path_clear.next = (self.port_chosen.val() == self.port_host.val())
            & self.responder.qp_host.done.val()
            & self.rsp_qp_host.mask.val().get_bits::<3>(0).any()
            & !self.rsp_qp_host.data.val().get_bits::<2>(1).any();
        self.cnps.path_clear_qpn.next = self.rsp_qp_host.qpn.val();

        // The receive queue's flush, once the state write is done: a
        // request decided after it finds the QP in ERR, so none consumes a
        // WQE the flush has not seen.
        self.responder.rq_flush_valid.next = self.rq_flush_owed.q.val() & !self.ctx_owed.q.val();
        self.responder.rq_flush_qpn.next = self.work_qpn.q.val();
        if self.rq_flush_owed.q.val() & !self.ctx_owed.q.val() & self.responder.rq_flush_ready.val()
        {
            self.rq_flush_owed.d.next = false;
        }

        // The response queue's host commands: the hand-over's flush first.
        self.responder.queue_host.valid.next = self.queue_host.valid.val();
        self.responder.queue_host.op.next = self.queue_host.op.val();
        self.responder.queue_host.qpn.next = self.queue_host.qpn.val();
        self.responder.queue_host.syndrome.next = self.queue_host.syndrome.val();
        self.responder.queue_host.psn.next = self.queue_host.psn.val();
        self.responder.queue_host.msn.next = self.queue_host.msn.val();
        self.responder.queue_host.value.next = self.queue_host.value.val();
        self.responder.queue_host.rkey.next = self.queue_host.rkey.val();
        self.responder.queue_host.len.next = self.queue_host.len.val();
        self.responder.queue_host.mtu_code.next = self.queue_host.mtu_code.val();
        self.queue_host.ready.next = self.responder.queue_host.ready.val();
        if self.flush_owed.q.val() {
            self.responder.queue_host.valid.next = true;
            self.responder.queue_host.op.next = self.op_flush.val();
            self.responder.queue_host.qpn.next = self.work_qpn.q.val();
            self.responder.queue_host.syndrome.next = 0.into();
            self.responder.queue_host.psn.next = 0.into();
            self.responder.queue_host.msn.next = 0.into();
            self.responder.queue_host.value.next = 0.into();
            self.responder.queue_host.rkey.next = 0.into();
            self.responder.queue_host.len.next = 0.into();
            self.responder.queue_host.mtu_code.next = 0.into();
            self.queue_host.ready.next = false;
            if self.responder.queue_host.ready.val() {
                self.flush_owed.d.next = false;
            }
        }

        if self.reset.val() {
            self.rsp_took.d.next = false;
            self.req_took.d.next = false;
            self.rsp_err_pending.d.next = false;
            self.port_owner.d.next = self.port_free.val();
        }
    }
}
