//! `RequesterPath`: the whole requester side of one NIC, send WQEs and
//! response frames in, request frames, host DMA writes (READ data, atomic
//! results) and send CQEs out. It joins five blocks
//! (`docs/transport-core.md`, "The requester side"):
//!
//! ```text
//! rx -> ResponsePlacement -- headers --> RequesterEvents <-- posts, timers
//!        (payload FIFO,      <- command --   (context, completer,
//!         local MR check,    -- result -->    timers, WQE bodies)
//!         DMA writes)                          |  sendable     ^ grant requests
//!                                              v               |
//!                                            ReadySet ---------+
//!        grant --> QpAddressRam (per-QP addressing) --> RequesterDatapath
//!                                 (segmenter, MR check, DMA reads, TX builder)
//!                                 -> frame;  status --> EV_SENT
//! ```
//!
//! The oracle is the model NIC's requester half as a whole: `Nic::post_send`
//! for the WQEs in, `Nic::receive` for the response frames,
//! `Nic::fire_timers` for a QP's timer, and `Nic::transmit_from(..,
//! TxClass::Request, qpn)` for the frames out; a shadow model given those
//! inputs at the moments this block takes them predicts every frame, DMA
//! write and CQE (see "The shadow" below).
//!
//! # Ports
//!
//! - `clock`; `reset` (synchronous, high): pulse once after power-up, then
//!   wait for `cfg.ready` (both MR tables swept). Resets the event loop,
//!   the ready set, the placement path and the transmit datapath; the QP
//!   context, rings, timers, WQE bodies and the address RAM keep their
//!   contents.
//! - `rx` (AXI-Stream sink, 512/64): frames from the MAC; only response
//!   opcodes are taken (others are counted and dropped).
//! - `frame` (AXI-Stream source, 512/64): request frames, in grant order.
//! - `qp_host` ([`ContextConfig`]): the requester direction's context
//!   (the driver's `modify_qp`), linked through.
//! - `cfg_window`, `cfg_ack_req_interval` (in): the NIC's send window and
//!   AckReq interval ([`RequesterEvents`]).
//! - `addr_*`: the per-QP address RAM's write port ([`QpAddressRam`]):
//!   `addr_write` with `addr_qpn` and the entry `addr_data` ([`QpAddress`]);
//!   its PD also goes to a PD RAM the placement reads.
//! - `cfg` ([`MrConfigPort`](crate::dma::mr_translate::MrConfigPort)): fanned out
//!   to both MR tables (the transmit datapath's, for payload reads and the
//!   READ / atomic buffer checks, and the placement's, for its local-write
//!   check); `cfg.ready` = both ready.
//! - `post_*` (valid/ready): a send WQE, as [`RequesterEvents`]' `EV_POST`
//!   source; `post_result_*` (out): its answer (accepted, ring slot).
//! - `err_*` (valid/ready): a move to ERR from outside (`EV_TO_ERROR`).
//! - `cqe_*` (valid/ready): the send CQEs.
//! - `dma` ([`DmaReadPort`]): the transmit datapath's tagged payload reads.
//! - `dmaw` ([`DmaWritePort`]): the placement's DMA writes.
//! - For a scoreboard: `rsp_fire` (the event loop takes a response header:
//!   the frame's turn in the completer; `rsp_qpn` its QP, `rsp_ce` high if
//!   the frame was CE-marked), `done_valid` / `done_qpn` /
//!   `done_kind` (an event's write-back, `completer_datapath::EV_*`),
//!   `done_state` (the state it wrote back: `NicCore` hands a move to ERR
//!   to the responder side), and
//!   the transmit datapath's grant status `status_valid`, `status_qpn`,
//!   `status_next_psn`, `status_error` (the frames of the grant are the
//!   QP's next request frames, up to that send cursor).
//! - DCQCN's reaction point and pacing ([`DcqcnSender`], between the
//!   event loop's sendable pulses and the ready set): `now` (the time
//!   base, cycles), `rp` ([`RpParamsPort`]) and `pacing`
//!   ([`PacingParamsPort`]) in; the CNPs the placement path takes, each
//!   request frame the datapath makes, each grant's status (its frames'
//!   wire bytes, charged) and each address write (a QP connected: its
//!   rate reset) drive it. A throttled QP's grant carries at most
//!   [`THROTTLED_GRANT_BYTES`] of payload. Out: `rp_watch` and
//!   `pacing_watch` (every outcome of the reaction point and the gate,
//!   with its event), `dcqcn_cnps`, `dcqcn_cuts`, `dcqcn_lost`.
//! - `stat_select` / `stat_count`: the placement path's counters
//!   (`response_placement::STAT_*`); `payload_last_errors`: the TX
//!   builder's (0 unless broken).
//!
//! # How the blocks meet
//!
//! Each response header the event loop takes gets exactly one placement
//! command, in header order, which is what [`ResponsePlacement`] needs to
//! free the frame's payload: the completer's placement request (held with
//! its fields until answered) becomes a write command one cycle after it
//! rises (the QP's PD read from the PD RAM meanwhile), and its check
//! result is the completer's `place_result_*`; a response event decided
//! without having asked (dropped, an ACK or NAK, a placement of nothing;
//! the event loop's `decided_valid`) gets a discard command, and the next
//! header waits until that command has been accepted. Grants read the
//! QP's addressing first (one cycle, again after a write to that entry,
//! as the responder path does) and go to [`RequesterDatapath`]; its
//! status goes back as `EV_SENT`, with the grant-in-flight rule of
//! [`RequesterEvents`] keeping the QP's other events waiting meanwhile.
//! Sendable pulses go through the [`ReadySet`] into the grant requests.
//!
//! # The shadow
//!
//! A model `Nic` fed a WQE when the post is taken, a response frame at its
//! `rsp_fire` (the frames the parser drops, the model drops too), a QP's
//! timer at a timer event's `done_valid`, and asked for the QP's request
//! frames at each `status_valid` until its send cursor reaches
//! `status_next_psn`, sees the QP's state as this block does: nothing of a
//! granted QP but its posts is taken between its grant and its status.
//!
//! # Latency and throughput
//!
//! The event loop's, one event at a time in the completer, the next one
//! looked up meanwhile (events of other QPs in turn: a post 5 cycles, a
//! response the completer's time plus its placement, plus one each),
//! and the transmit datapath's (about one frame beat per cycle at MTU
//! 4096, up to 8 grants in flight); the address read adds one cycle per
//! grant.

use crate::codes::mtu;
use crate::congestion::dcqcn_reaction_point::RpParamsPort;
use crate::congestion::dcqcn_sender::{DcqcnSender, PacingWatch, RpWatch};
use crate::congestion::pacing_gate::PacingParamsPort;
use crate::dma::dma_port::{DmaReadPort, DmaWritePort};
use crate::dma::mr_translate::MrConfigPortDefault;
use crate::primitives::stream::{Axis512Sink, AxisSource, DATA_BITS, KEEP_BITS};
use crate::primitives::sync_ram::SyncRam;
use crate::qp::qp_address_ram::{QpAddress, QpAddressRam};
use crate::qp::qp_context::ContextConfig;
use crate::requester::completer_datapath::EV_RESPONSE;
use crate::requester::ready_set::ReadySet;
use crate::requester::requester_datapath::RequesterDatapath;
use crate::requester::requester_events::{RequesterEvents, SLOT_BITS};
use crate::requester::response_placement::ResponsePlacement;
use crate::requester::send_ports::{
    PostResult, QpErrorEvent, QpEventDone, SendCqeStream, SendPost, SentStatusEvent,
};
use rust_hdl::prelude::*;

/// Packets per transmit grant at most (`requester_datapath`'s
/// `grant_max_packets`): a longer WQE is granted again from its cursor,
/// so a QP's responses (a NAK above all) are taken between its grants
/// instead of after the whole WQE, and busy QPs take turns every few
/// packets as the model's per-packet round robin does. What a QP has
/// committed past a lost packet when its NAK is taken is sent again, so
/// the grant bounds Go-Back-N's cost: at 16 packets the RTL pair
/// retransmitted 1.9x the model's frames on Mix at 1 % loss, duplication
/// and reordering over six seeds, at 8 1.85x, at 4 1.13x. 4 packets are
/// 260 cycles of line at MTU 4096, more than the grant's turnaround
/// (its status comes at its last packet's local check, and the up to 5
/// packets of 4 KiB in the datapath's payload fetch hide the sent and
/// grant events), so one QP still streams at the framing bound.
pub const GRANT_PACKETS: u64 = 4;

/// Payload a throttled QP's grant carries at most (one packet at MTU
/// 4096, two at 2048, [`GRANT_PACKETS`] below): its frames then leave one
/// MTU-4096 frame's worth at a time, each paid for at its rate, instead
/// of in bursts of up to 16 KiB at the line rate. A switch marks a burst
/// as a whole and the receiver answers its marks with one CNP per
/// interval, so 16 flows in bursts earned a third of the model's CNPs
/// and were never fair (`docs/dcqcn.md`). Smaller MTUs keep 4 packets:
/// a QP asked again only after each grant's status could not reach its
/// rate with one packet of 1 KiB per turn.
pub const THROTTLED_GRANT_BYTES: u64 = 4096;
const _: () =
    assert!(THROTTLED_GRANT_BYTES >= 4096 && THROTTLED_GRANT_BYTES / 1024 >= GRANT_PACKETS);

/// The default build: 1024 QPs (`AP1` = `A + 1`, the ready set's FIFO
/// pointer).
pub type RequesterPathDefault = RequesterPath<10, 11>;

#[derive(LogicBlock)]
pub struct RequesterPath<const A: usize, const AP1: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub rx: Axis512Sink,
    pub frame: AxisSource<DATA_BITS, KEEP_BITS>,
    pub qp_host: ContextConfig<A>,
    pub cfg_window: Signal<In, Bits<32>>,
    pub cfg_ack_req_interval: Signal<In, Bits<32>>,

    pub addr_write: Signal<In, Bit>,
    pub addr_qpn: Signal<In, Bits<A>>,
    pub addr_data: Signal<In, QpAddress>,

    pub cfg: MrConfigPortDefault,

    pub post: SendPost<A>,

    pub post_result: PostResult<A, SLOT_BITS>,

    pub err: QpErrorEvent<A>,

    pub cqe: SendCqeStream<A, SLOT_BITS>,

    pub dma: DmaReadPort,
    pub dmaw: DmaWritePort,

    pub rsp_fire: Signal<Out, Bit>,
    pub rsp_qpn: Signal<Out, Bits<A>>,
    pub rsp_ce: Signal<Out, Bit>,
    pub done: QpEventDone<A>,
    pub status: SentStatusEvent,

    pub now: Signal<In, Bits<32>>,
    pub rp: RpParamsPort,
    pub pacing: PacingParamsPort,
    pub rp_watch: RpWatch<A>,
    pub pacing_watch: PacingWatch<A>,
    pub dcqcn_cnps: Signal<Out, Bits<32>>,
    pub dcqcn_cuts: Signal<Out, Bits<32>>,
    pub dcqcn_lost: Signal<Out, Bits<16>>,

    pub stat_select: Signal<In, Bits<3>>,
    pub stat_count: Signal<Out, Bits<32>>,
    pub payload_last_errors: Signal<Out, Bits<16>>,

    events: RequesterEvents<A>,
    dcqcn: DcqcnSender<A, AP1>,
    ready: ReadySet<A, AP1>,
    placement: ResponsePlacement,
    addresses: QpAddressRam<A>,
    /// Each QP's PD, for the placement's check (the address RAM's read
    /// port serves the grants).
    pds: SyncRam<Bits<32>, A>,
    datapath: RequesterDatapath,

    // ---- placement commands
    /// The completer's placement request was up last cycle: the PD RAM
    /// holds its QP's PD.
    place_seen: DFF<Bit>,
    /// The response event under way has had its placement command.
    placed: DFF<Bit>,
    /// A response event ended without placing: its discard is owed.
    discard_pending: DFF<Bit>,
    place_offer: Signal<Local, Bit>,
    cmd_taken: Signal<Local, Bit>,
    ev_response: Constant<Bits<3>>,

    // ---- grant to datapath
    /// The address RAM's output holds the offered grant's QP.
    address_ready: DFF<Bit>,
    grant_offer: Signal<Local, Bit>,
    grant_taken: Signal<Local, Bit>,
    grant_packets: Constant<Bits<16>>,
    throttled_packets_2048: Constant<Bits<16>>,
    throttled_packets_4096: Constant<Bits<16>>,
    mtu_2048: Constant<Bits<3>>,
    mtu_4096: Constant<Bits<3>>,
}

impl<const A: usize, const AP1: usize> Default for RequesterPath<A, AP1> {
    fn default() -> Self {
        RequesterPath {
            clock: Default::default(),
            reset: Default::default(),
            rx: Default::default(),
            frame: Default::default(),
            qp_host: Default::default(),
            cfg_window: Default::default(),
            cfg_ack_req_interval: Default::default(),
            addr_write: Default::default(),
            addr_qpn: Default::default(),
            addr_data: Default::default(),
            cfg: Default::default(),
            post: Default::default(),
            post_result: Default::default(),
            err: Default::default(),
            cqe: Default::default(),
            dma: Default::default(),
            dmaw: Default::default(),
            rsp_fire: Default::default(),
            rsp_qpn: Default::default(),
            rsp_ce: Default::default(),
            done: Default::default(),
            status: Default::default(),
            now: Default::default(),
            rp: Default::default(),
            pacing: Default::default(),
            rp_watch: Default::default(),
            pacing_watch: Default::default(),
            dcqcn_cnps: Default::default(),
            dcqcn_cuts: Default::default(),
            dcqcn_lost: Default::default(),
            stat_select: Default::default(),
            stat_count: Default::default(),
            payload_last_errors: Default::default(),
            events: Default::default(),
            dcqcn: Default::default(),
            ready: Default::default(),
            placement: Default::default(),
            addresses: Default::default(),
            pds: Default::default(),
            datapath: Default::default(),
            place_seen: Default::default(),
            placed: Default::default(),
            discard_pending: Default::default(),
            place_offer: Default::default(),
            cmd_taken: Default::default(),
            ev_response: Constant::new(bits::<3>(EV_RESPONSE)),
            address_ready: Default::default(),
            grant_offer: Default::default(),
            grant_taken: Default::default(),
            grant_packets: Constant::new(bits::<16>(GRANT_PACKETS)),
            throttled_packets_2048: Constant::new(bits::<16>(THROTTLED_GRANT_BYTES / 2048)),
            throttled_packets_4096: Constant::new(bits::<16>(THROTTLED_GRANT_BYTES / 4096)),
            mtu_2048: Constant::new(bits::<3>(mtu::IBA_2048 as u64)),
            mtu_4096: Constant::new(bits::<3>(mtu::IBA_4096 as u64)),
        }
    }
}

impl<const A: usize, const AP1: usize> Logic for RequesterPath<A, AP1> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            place_seen,
            placed,
            discard_pending,
            address_ready
        );
        clock!(self, clock, events, dcqcn, ready, placement, addresses, pds, datapath);
        self.dcqcn.reset.next = self.reset.val();
        self.events.reset.next = self.reset.val();
        self.ready.reset.next = self.reset.val();
        self.placement.reset.next = self.reset.val();
        self.datapath.reset.next = self.reset.val();

        // ---- host ports of the event loop, linked through
        ContextConfig::<A>::link(&mut self.qp_host, &mut self.events.qp_host);
        self.events.cfg_window.next = self.cfg_window.val();
        self.events.cfg_ack_req_interval.next = self.cfg_ack_req_interval.val();
        SendPost::<A>::link(&mut self.post, &mut self.events.post);
        PostResult::<A, SLOT_BITS>::link(&mut self.post_result, &mut self.events.post_result);
        QpErrorEvent::<A>::link(&mut self.err, &mut self.events.err);
        SendCqeStream::<A, SLOT_BITS>::link(&mut self.cqe, &mut self.events.cqe);
        // The inner timers run on their own: no forced expiries.
        self.events.hold_timers.next = false;
        self.events.timer_force_valid.next = false;
        self.events.timer_force_qpn.next = 0.into();
        self.events.timer_force_rnr.next = false;
        self.done.valid.next = self.events.done_valid.val();
        self.done.qpn.next = self.events.done_qpn.val();
        self.done.kind.next = self.events.done_kind.val();
        self.done.state.next = self.events.done_record.val().get_bits::<3>(0);

        // ---- MR configuration, one table per inner block, written alike
        self.cfg.ready.next = self.datapath.cfg.ready.val() & self.placement.cfg.ready.val();
        self.datapath.cfg.mr_write.next = self.cfg.mr_write.val();
        self.datapath.cfg.mr_index.next = self.cfg.mr_index.val();
        self.datapath.cfg.mr_state.next = self.cfg.mr_state.val();
        self.datapath.cfg.mr_variant.next = self.cfg.mr_variant.val();
        self.datapath.cfg.mr_pd.next = self.cfg.mr_pd.val();
        self.datapath.cfg.mr_base_va.next = self.cfg.mr_base_va.val();
        self.datapath.cfg.mr_len.next = self.cfg.mr_len.val();
        self.datapath.cfg.mr_access.next = self.cfg.mr_access.val();
        self.datapath.cfg.mr_page_shift.next = self.cfg.mr_page_shift.val();
        self.datapath.cfg.mr_mtt_base.next = self.cfg.mr_mtt_base.val();
        self.datapath.cfg.mtt_write.next = self.cfg.mtt_write.val();
        self.datapath.cfg.mtt_index.next = self.cfg.mtt_index.val();
        self.datapath.cfg.mtt_addr.next = self.cfg.mtt_addr.val();
        self.placement.cfg.mr_write.next = self.cfg.mr_write.val();
        self.placement.cfg.mr_index.next = self.cfg.mr_index.val();
        self.placement.cfg.mr_state.next = self.cfg.mr_state.val();
        self.placement.cfg.mr_variant.next = self.cfg.mr_variant.val();
        self.placement.cfg.mr_pd.next = self.cfg.mr_pd.val();
        self.placement.cfg.mr_base_va.next = self.cfg.mr_base_va.val();
        self.placement.cfg.mr_len.next = self.cfg.mr_len.val();
        self.placement.cfg.mr_access.next = self.cfg.mr_access.val();
        self.placement.cfg.mr_page_shift.next = self.cfg.mr_page_shift.val();
        self.placement.cfg.mr_mtt_base.next = self.cfg.mr_mtt_base.val();
        self.placement.cfg.mtt_write.next = self.cfg.mtt_write.val();
        self.placement.cfg.mtt_index.next = self.cfg.mtt_index.val();
        self.placement.cfg.mtt_addr.next = self.cfg.mtt_addr.val();

        // ---- response frames -> headers -> the event loop
        self.placement.rx.tdata.next = self.rx.tdata.val();
        self.placement.rx.tkeep.next = self.rx.tkeep.val();
        self.placement.rx.tlast.next = self.rx.tlast.val();
        self.placement.rx.tvalid.next = self.rx.tvalid.val();
        self.rx.tready.next = self.placement.rx.tready.val();
        // A discard owed to the previous header goes first.
        self.events.rsp_valid.next = self.placement.hdr_valid.val() & !self.discard_pending.q.val();
        self.placement.hdr_ready.next = self.events.rsp_ready.val();
        self.rsp_fire.next = self.events.rsp_ready.val();
        self.rsp_qpn.next = bit_cast::<A, 24>(self.placement.hdr_qpn.val());
        self.rsp_ce.next = self.placement.hdr_ce.val();
        self.events.rsp_qpn.next = bit_cast::<A, 24>(self.placement.hdr_qpn.val());
        self.events.rsp_opcode.next = self.placement.hdr_opcode.val();
        self.events.rsp_psn.next = self.placement.hdr_psn.val();
        self.events.rsp_has_aeth.next = self.placement.hdr_has_aeth.val();
        self.events.rsp_aeth_syndrome.next = self.placement.hdr_aeth_syndrome.val();
        self.events.rsp_payload_len.next = bit_cast::<32, 13>(self.placement.hdr_payload_len.val());
        self.events.rsp_atomic_orig.next = self.placement.hdr_atomic_orig.val();

        // ---- one placement command per header (see "How the blocks meet")
        self.pds.write_enable.next = self.addr_write.val();
        self.pds.write_address.next = self.addr_qpn.val();
        self.pds.write_data.next = self.addr_data.val().pd;
        self.pds.read_address.next = self.events.place_qpn.val();
        self.place_seen.d.next = self.events.place_valid.val();
        self.place_offer.next =
            self.events.place_valid.val() & self.place_seen.q.val() & !self.placed.q.val();
        self.placement.cmd_valid.next = self.place_offer.val() | self.discard_pending.q.val();
        self.placement.place_valid.next = !self.discard_pending.q.val();
        self.placement.place_atomic.next = self.events.place_atomic.val();
        self.placement.place_atomic_orig.next = self.events.place_atomic_orig.val();
        self.placement.place_lkey.next = self.events.place_lkey.val();
        self.placement.place_va.next = self.events.place_va.val();
        self.placement.place_len.next = self.events.place_len.val();
        self.placement.place_pd.next = self.pds.read_data.val();
        self.cmd_taken.next = self.placement.cmd_valid.val() & self.placement.cmd_ready.val();
        if self.cmd_taken.val() {
            if self.discard_pending.q.val() {
                self.discard_pending.d.next = false;
            } else {
                self.placed.d.next = true;
            }
        }
        if self.events.decided_valid.val()
            & (self.events.decided_kind.val() == self.ev_response.val())
        {
            self.placed.d.next = false;
            if !self.placed.q.val() {
                self.discard_pending.d.next = true;
            }
        }
        self.placement.res_ready.next = true;
        self.events.place_result_valid.next = self.placement.res_valid.val();
        self.events.place_result_error.next = self.placement.res_status.val().any();
        self.events.place_result_status.next = self.placement.res_status.val();
        DmaWritePort::link(&mut self.dmaw, &mut self.placement.dma);
        self.placement.stat_select.next = self.stat_select.val();
        self.stat_count.next = self.placement.stat_count.val();

        // ---- sendable QPs -> (DCQCN's pacing) -> grant requests
        self.dcqcn.sendable_valid.next = self.events.sendable_valid.val();
        self.dcqcn.sendable_qpn.next = self.events.sendable_qpn.val();
        self.ready.sendable_valid.next = self.dcqcn.ready_valid.val();
        self.ready.sendable_qpn.next = self.dcqcn.ready_qpn.val();
        self.dcqcn.now.next = self.now.val();
        RpParamsPort::link(&mut self.rp, &mut self.dcqcn.rp);
        PacingParamsPort::link(&mut self.pacing, &mut self.dcqcn.pacing);
        self.dcqcn.qp_reset_valid.next = self.addr_write.val();
        self.dcqcn.qp_reset_qpn.next = self.addr_qpn.val();
        self.dcqcn.cnp_valid.next = self.placement.cnp_valid.val();
        self.dcqcn.cnp_qpn.next = bit_cast::<A, 24>(self.placement.cnp_qpn.val());
        self.dcqcn.sent_valid.next = self.datapath.sent_valid.val();
        self.dcqcn.sent_qpn.next = bit_cast::<A, 24>(self.datapath.sent_qpn.val());
        self.dcqcn.sent_bytes.next = self.datapath.sent_bytes.val();
        self.dcqcn.charge_valid.next = self.datapath.status_valid.val();
        self.dcqcn.charge_qpn.next = bit_cast::<A, 24>(self.datapath.status_qpn.val());
        self.dcqcn.charge_bytes.next = self.datapath.status_wire_bytes.val();
        RpWatch::<A>::link(&mut self.rp_watch, &mut self.dcqcn.rp_watch);
        PacingWatch::<A>::link(&mut self.pacing_watch, &mut self.dcqcn.pacing_watch);
        self.dcqcn_cnps.next = self.dcqcn.cnps.val();
        self.dcqcn_cuts.next = self.dcqcn.cuts.val();
        self.dcqcn_lost.next = self.dcqcn.lost.val();
        self.events.greq_valid.next = self.ready.request_valid.val();
        self.ready.request_ready.next = self.events.greq_ready.val();
        self.events.greq_qpn.next = self.ready.request_qpn.val();

        // ---- grant + the QP's addressing -> transmit datapath. The event
        // loop holds a grant until it is taken, so the address RAM is read
        // at its QPN and the grant offered from the next cycle (again
        // after a write to that entry).
        self.addresses.write.next = self.addr_write.val();
        self.addresses.write_qpn.next = self.addr_qpn.val();
        self.addresses.write_data.next = self.addr_data.val();
        self.addresses.read_qpn.next = self.events.grant_qpn.val();
        self.grant_offer.next = self.events.grant_valid.val() & self.address_ready.q.val();
        self.grant_taken.next = self.grant_offer.val() & self.datapath.grant_ready.val();
        self.address_ready.d.next = self.events.grant_valid.val()
            & !self.grant_taken.val()
            & !(self.addr_write.val() & (self.addr_qpn.val() == self.events.grant_qpn.val()));
        self.events.grant_ready.next = self.grant_taken.val();
        self.datapath.grant_valid.next = self.grant_offer.val();
        self.datapath.grant_qpn.next = bit_cast::<24, A>(self.events.grant_qpn.val());
        self.datapath.grant_kind.next = self.events.grant_op.val();
        self.datapath.grant_len.next = self.events.grant_len.val();
        self.datapath.grant_first_psn.next = self.events.grant_first_psn.val();
        self.datapath.grant_start_psn.next = self.events.grant_start_psn.val();
        self.datapath.grant_mtu.next = self.events.grant_mtu.val();
        self.datapath.grant_remote_va.next = self.events.grant_remote_va.val();
        self.datapath.grant_rkey.next = self.events.grant_rkey.val();
        self.datapath.grant_imm.next = self.events.grant_imm.val();
        self.datapath.grant_compare.next = self.events.grant_compare.val();
        self.datapath.grant_swap_add.next = self.events.grant_swap_add.val();
        self.datapath.grant_solicited.next = self.events.grant_solicited.val();
        self.datapath.grant_una.next = self.events.grant_una.val();
        self.datapath.grant_window.next = self.events.grant_window.val();
        self.datapath.grant_ack_req_interval.next = self.events.grant_ack_req_interval.val();
        self.datapath.grant_max_packets.next = self.grant_packets.val();
        self.dcqcn.grant_qpn.next = self.events.grant_qpn.val();
        if self.dcqcn.grant_throttled.val() & (self.events.grant_mtu.val() == self.mtu_2048.val()) {
            self.datapath.grant_max_packets.next = self.throttled_packets_2048.val();
        }
        if self.dcqcn.grant_throttled.val() & (self.events.grant_mtu.val() == self.mtu_4096.val()) {
            self.datapath.grant_max_packets.next = self.throttled_packets_4096.val();
        }
        self.datapath.grant_lkey.next = self.events.grant_lkey.val();
        self.datapath.grant_local_va.next = self.events.grant_local_va.val();
        self.datapath.grant_address.next = self.addresses.read_data.val();

        // ---- the grant's status -> EV_SENT; frames and payload reads out
        self.events.sent_valid.next = self.datapath.status_valid.val();
        self.events.sent_qpn.next = bit_cast::<A, 24>(self.datapath.status_qpn.val());
        self.events.sent_next_psn.next = self.datapath.status_next_psn.val();
        self.events.sent_ackreq.next = self.datapath.status_ackreq.val();
        self.events.sent_ackreq_end.next = self.datapath.status_ackreq_end.val();
        self.events.sent_error.next = self.datapath.status_error.val();
        self.events.sent_status.next = self.datapath.status_status.val();
        self.status.valid.next = self.datapath.status_valid.val();
        self.status.qpn.next = self.datapath.status_qpn.val();
        self.status.next_psn.next = self.datapath.status_next_psn.val();
        self.status.error.next = self.datapath.status_error.val();
        DmaReadPort::link(&mut self.dma, &mut self.datapath.dma);
        self.frame.tdata.next = self.datapath.frame.tdata.val();
        self.frame.tkeep.next = self.datapath.frame.tkeep.val();
        self.frame.tlast.next = self.datapath.frame.tlast.val();
        self.frame.tvalid.next = self.datapath.frame.tvalid.val();
        self.datapath.frame.tready.next = self.frame.tready.val();
        self.payload_last_errors.next = self.datapath.payload_last_errors.val();

        if self.reset.val() {
            self.place_seen.d.next = false;
            self.placed.d.next = false;
            self.discard_pending.d.next = false;
            self.address_ready.d.next = false;
        }
    }
}
