//! `ResponderPath`: the whole responder side of one NIC, request frames in,
//! host DMA writes, receive CQEs and response frames out. It joins five
//! blocks:
//!
//! ```text
//! rx -> ResponderDatapath -> rspq (queue commands) -> ResponseQueue
//!       (DMA writes, CQEs,      |                          |
//!        atomic DMA reads)   out_* (harness)        response packet
//!        writes issued / done -----------------> ResponseWriteGate
//!                                                          |
//!                       QpAddressRam (per-QP addressing) <- qpn
//!                                                          |
//!                       ResponseTransmitter (MR table, DMA reads,
//!                       TX builder) -> frame
//!   DMA reads: transmitter + atomic unit -> DmaReadArbiter -> dma
//! ```
//!
//! The oracle is the model NIC as a whole (`Nic::receive` for the frames
//! in, `Nic::transmit_from(.., TxClass::Response, qpn)` for the frames
//! out): the datapath executes SEND, WRITE, READ and atomics as the
//! model's `responder::on_request` does and issues the response-queue
//! commands the model's responder applies (ACK / NAK push, READ, atomic
//! ACK, drop-reads, flush); this block applies them to [`ResponseQueue`]
//! and frames what the queue presents.
//!
//! # Ports
//!
//! - `clock`; `reset` (synchronous, high): pulse once after power-up, then
//!   wait for `cfg_ready` (both MR tables swept). Resets the datapath, the
//!   transmitter (IPv4 identification back to 0) and the command logic;
//!   the QP context, response queue and address RAMs keep their contents.
//! - `rx` (AXI-Stream sink, 512/64): frames from the MAC.
//! - `frame` (AXI-Stream source, 512/64): response frames (ACK, NAK, RNR
//!   NAK, READ response, atomic ACK), in descriptor order.
//! - `qp_host`: the QP context's host port ([`ContextConfig`]), passed
//!   through to the datapath.
//! - `queue_host` ([`QueueCommand`], a sink): the driver's commands to the
//!   response queue, `OP_CONFIGURE` when it moves a QP to RTR, `OP_FLUSH`
//!   when it moves it to ERR. Arbitrated with the datapath's commands,
//!   alternating when both wait; a command offered to the queue stays
//!   offered until taken (the queue takes a push only once it has read
//!   that the QP's queue has room); a command is applied in the order it
//!   is accepted.
//! - `addr_*`: the per-QP address RAM's write port ([`QpAddressRam`]):
//!   `addr_write` with `addr_qpn` and the entry `addr_data`
//!   ([`QpAddress`], one port packed in field order).
//! - `cfg_*`: the MR table and MTT write ports, fanned out to both MR
//!   tables (the datapath's, for WRITE and receive buffers, and the
//!   transmitter's, for READ data); `cfg_ready` = both ready.
//! - `rq_post_*`, `rq_flush_*`, `cqe_*`: the datapath's receive WQE post
//!   port, its receive-queue flush port (a QP moved to ERR elsewhere) and
//!   its receive CQE stream, passed through.
//! - `dmaw_*`: the datapath's DMA write port (`dmaw_valid`, `_ready`,
//!   `_addr`, `_data`, `_keep`, `_first`, `_last`, `_req_addr`,
//!   `_req_len`), as `ResponderDatapath`'s `dma_*`.
//! - `dma` ([`DmaReadPort`]): the tagged DMA reads of the transmitter
//!   (READ data, tags 0..15) and of the datapath's atomic unit (tag 0x80:
//!   [`DmaReadArbiter`]'s client `b`), round robin.
//! - `out_*` (valid/ready): the per-frame outcome, the datapath's, in
//!   arrival order (see "The commit point").
//! - `deciding_qpn`, `deciding_ce` (out): the datapath's (the frame whose
//!   commands are being offered).
//! - `queue_fire` (out): high in the cycle the response queue accepts one
//!   of the datapath's commands (see "The commit point").
//! - `desc_fire` (out): high in the cycle a response descriptor leaves the
//!   response queue (into the write gate), with `desc_qpn` its QP: the
//!   frame it becomes is that QP's next response frame (frames leave in
//!   descriptor order; a READ packet whose range no longer translates is
//!   counted in `read_errors` instead).
//! - `stat_select` / `stat_count`: the datapath's counters.
//!   `queue_full_waits`: the datapath's pushes that found their QP's
//!   response queue full and waited (see "Waiting for the response
//!   queue"; 0 for SEND / WRITE traffic: ACKs merge and one NAK at a time
//!   is outstanding). `read_errors`,
//!   `payload_last_errors`: the transmitter's.
//!
//! # The commit point
//!
//! The datapath offers a frame's queue commands only once its outcome can
//! follow at once and issues the last in the cycle the outcome enters its
//! output register; frames are decided one at a time. So while `out_ready`
//! stays high (the NIC harness takes outcomes as they come), the first of
//! a frame's commands is accepted after the previous frame's outcome, and
//! **the moment the response queue starts to hold a frame's effects is the
//! first `queue_fire` after the previous outcome was accepted, or the
//! frame's own outcome if it has no command**. A scoreboard that hands the
//! frame to a shadow model then and asks the shadow for a QP's next
//! response at `desc_fire` sees the queue as the shadow's. (Between the
//! commands of one frame, drop-reads and the re-executed READ or a NAK and
//! the flush, the queue may present a packet; its head is the shadow's:
//! a void or a lazy flush never changes what is in front of a NAK or of
//! the items before it.)
//!
//! # Waiting for the response queue
//!
//! A push to a QP whose response queue is full is not taken until that
//! QP's head item has left ([`ResponseQueue`], "Capacity"), so the
//! datapath waits with the frame's outcome unpresented and takes no
//! further frame (head-of-line blocking of other QPs' requests for that
//! time). No deadlock: the queue drains through the transmitter, which
//! needs only the queue, the address RAM, its own MR table, DMA reads
//! and `frame.tready`, none of which the waiting datapath holds. The DMA
//! read arbiter is shared with the atomic unit, but a frame's commands
//! are offered only after its atomic finished (the original value is
//! the atomic ACK's), so the waiting datapath has no read outstanding;
//! its DMA writes drain on their own port. The commit point still holds:
//! a push is accepted (`queue_fire`) in the cycle the queue applies it,
//! so a frame whose first command waits is handed to the shadow only
//! when it is taken; when a later command of a frame waits (the READ
//! or NAK after its drop-reads), the shadow already holds it
//! while the queue does not, but the queue is full, so the packets that
//! leave meanwhile are the ones queued before it, the shadow's too, and
//! it is appended as soon as one has left, behind the same items.
//!
//! # No response before its data
//!
//! Every descriptor passes [`ResponseWriteGate`]: it is taken from the
//! queue at once (8 in order) and offered to the transmitter only once
//! the datapath's DMA write port has accepted the last beat of every
//! write request decided up to the frame that queued it (the queue item's
//! write sequence number, see `ResponderDatapath`, "Write sequence
//! numbers"). So an ACK, NAK or atomic ACK leaves after the data of the
//! packets it covers (and of every earlier packet) is written, and a READ
//! response's DMA reads start after the writes of the requests before it
//! (PCIe keeps a read behind earlier posted writes). The queue is never
//! held for it: its commands, and with them the decisions, go on.
//!
//! # Latency and throughput
//!
//! Decisions as [`ResponderDatapath`] (about 11 cycles per WRITE packet, 5
//! per other frame; its commands go to the queue as they come, 2 cycles
//! each). The queue presents a packet every 5 cycles at best and the
//! write gate adds two cycles of latency (more while it waits for writes:
//! an ACK after the last write of its packet is accepted), so at best one
//! response descriptor per 5 cycles (by construction), which ACK coalescing keeps
//! ahead of request packets of any size; the transmitter (one ACK frame
//! per cycle over IPv4) is not the bound.
//!
//! # Memory
//!
//! Block RAM: the datapath's (about 134 RAMB36), the transmitter's payload
//! buffer and MR table, the queue and the address RAM.

use crate::dma::dma_port::{DmaReadPort, DmaWritePort};
use crate::dma::dma_read_arbiter::DmaReadArbiter;
use crate::dma::mr_translate::MrConfigPortDefault;
use crate::primitives::stream::{Axis512Sink, AxisSource, DATA_BITS, KEEP_BITS};
use crate::qp::qp_address_ram::{QpAddress, QpAddressRam};
use crate::qp::qp_context::ContextConfig;
use crate::responder::outcome_stream::OutcomeStream;
use crate::responder::receive_queue::{ReceiveCqeStream, ReceivePost};
use crate::responder::responder_datapath::{ResponderDatapath, QPN_BITS};
use crate::responder::response_queue::{QueueCommand, ResponseQueue, DEFAULT_DEPTH_BITS};
use crate::responder::response_transmitter::ResponseTransmitter;
use crate::responder::response_write_gate::ResponseWriteGate;
use rust_hdl::prelude::*;

#[derive(LogicBlock, Default)]
pub struct ResponderPath {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub rx: Axis512Sink,
    pub frame: AxisSource<DATA_BITS, KEEP_BITS>,
    pub qp_host: ContextConfig<QPN_BITS>,
    pub queue_host: QueueCommand<QPN_BITS>,

    pub addr_write: Signal<In, Bit>,
    pub addr_qpn: Signal<In, Bits<QPN_BITS>>,
    pub addr_data: Signal<In, QpAddress>,

    pub cfg: MrConfigPortDefault,

    pub rq_post: ReceivePost<QPN_BITS>,
    pub rq_flush_valid: Signal<In, Bit>,
    pub rq_flush_ready: Signal<Out, Bit>,
    pub rq_flush_qpn: Signal<In, Bits<QPN_BITS>>,

    pub cqe: ReceiveCqeStream<24>,

    pub dmaw: DmaWritePort,

    pub dma: DmaReadPort,

    pub out: OutcomeStream,
    pub deciding_qpn: Signal<Out, Bits<24>>,
    pub deciding_ce: Signal<Out, Bit>,

    pub queue_fire: Signal<Out, Bit>,
    pub desc_fire: Signal<Out, Bit>,
    pub desc_qpn: Signal<Out, Bits<24>>,

    pub stat_select: Signal<In, Bits<3>>,
    pub stat_count: Signal<Out, Bits<32>>,
    pub queue_full_waits: Signal<Out, Bits<32>>,
    pub read_errors: Signal<Out, Bits<16>>,
    pub payload_last_errors: Signal<Out, Bits<16>>,

    datapath: ResponderDatapath,
    queue: ResponseQueue<QPN_BITS, DEFAULT_DEPTH_BITS>,
    /// Holds each descriptor until the DMA writes it depends on are done.
    write_gate: ResponseWriteGate,
    addresses: QpAddressRam<QPN_BITS>,
    transmitter: ResponseTransmitter,

    // ---- queue commands: the datapath's and the host's
    /// The host's command goes first the next time both wait.
    prefer_host: DFF<Bit>,
    /// A command was offered and not taken: the grant stays with its
    /// source (the queue reads the QP's record before it takes a push).
    hold: DFF<Bit>,
    held_own: DFF<Bit>,
    grant_own: Signal<Local, Bit>,
    own_accepted: Signal<Local, Bit>,
    host_accepted: Signal<Local, Bit>,
    /// Reads of the transmitter (READ data) and of the datapath's atomic
    /// unit onto the one DMA read port.
    read_arbiter: DmaReadArbiter,

    // ---- response packet to descriptor
    /// The address RAM's output holds the presented packet's QP.
    address_ready: DFF<Bit>,
    desc_offer: Signal<Local, Bit>,
    desc_taken: Signal<Local, Bit>,
}

impl Logic for ResponderPath {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, prefer_host, hold, held_own, address_ready);
        clock!(
            self,
            clock,
            datapath,
            queue,
            write_gate,
            addresses,
            transmitter,
            read_arbiter
        );
        self.read_arbiter.reset.next = self.reset.val();
        self.datapath.reset.next = self.reset.val();
        self.transmitter.reset.next = self.reset.val();
        self.write_gate.reset.next = self.reset.val();

        // ---- frames in; configuration, receive WQEs, CQEs and DMA
        // writes of the datapath, passed through
        self.datapath.rx.tdata.next = self.rx.tdata.val();
        self.datapath.rx.tkeep.next = self.rx.tkeep.val();
        self.datapath.rx.tlast.next = self.rx.tlast.val();
        self.datapath.rx.tvalid.next = self.rx.tvalid.val();
        self.rx.tready.next = self.datapath.rx.tready.val();
        ContextConfig::<QPN_BITS>::link(&mut self.qp_host, &mut self.datapath.qp_host);

        // One MR table per inner block, all written alike.
        self.cfg.ready.next = self.datapath.cfg.ready.val() & self.transmitter.cfg.ready.val();
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
        self.transmitter.cfg.mr_write.next = self.cfg.mr_write.val();
        self.transmitter.cfg.mr_index.next = self.cfg.mr_index.val();
        self.transmitter.cfg.mr_state.next = self.cfg.mr_state.val();
        self.transmitter.cfg.mr_variant.next = self.cfg.mr_variant.val();
        self.transmitter.cfg.mr_pd.next = self.cfg.mr_pd.val();
        self.transmitter.cfg.mr_base_va.next = self.cfg.mr_base_va.val();
        self.transmitter.cfg.mr_len.next = self.cfg.mr_len.val();
        self.transmitter.cfg.mr_access.next = self.cfg.mr_access.val();
        self.transmitter.cfg.mr_page_shift.next = self.cfg.mr_page_shift.val();
        self.transmitter.cfg.mr_mtt_base.next = self.cfg.mr_mtt_base.val();
        self.transmitter.cfg.mtt_write.next = self.cfg.mtt_write.val();
        self.transmitter.cfg.mtt_index.next = self.cfg.mtt_index.val();
        self.transmitter.cfg.mtt_addr.next = self.cfg.mtt_addr.val();

        ReceivePost::<QPN_BITS>::link(&mut self.rq_post, &mut self.datapath.rq_post);
        self.datapath.rq_flush_valid.next = self.rq_flush_valid.val();
        self.rq_flush_ready.next = self.datapath.rq_flush_ready.val();
        self.datapath.rq_flush_qpn.next = self.rq_flush_qpn.val();
        ReceiveCqeStream::<24>::link(&mut self.cqe, &mut self.datapath.cqe);

        DmaWritePort::link(&mut self.dmaw, &mut self.datapath.dma);

        self.datapath.stat_select.next = self.stat_select.val();
        self.stat_count.next = self.datapath.stat_count.val();

        // ---- queue commands (see "The commit point"): the datapath's
        // rspq stream and the host's, alternating when both wait.
        self.grant_own.next = self.datapath.rspq.valid.val()
            & (!self.queue_host.valid.val() | !self.prefer_host.q.val());
        if self.hold.q.val() {
            self.grant_own.next = self.held_own.q.val();
        }
        self.own_accepted.next = self.grant_own.val() & self.queue.command.ready.val();
        self.host_accepted.next = !self.grant_own.val() & self.queue.command.ready.val();
        self.datapath.rspq.ready.next = self.own_accepted.val();
        self.queue_fire.next = self.own_accepted.val();
        self.queue_host.ready.next = self.host_accepted.val();
        self.queue.command.valid.next = self.queue_host.valid.val();
        if self.grant_own.val() {
            self.queue.command.valid.next = self.datapath.rspq.valid.val();
        }
        self.hold.d.next = self.queue.command.valid.val() & !self.queue.command.ready.val();
        self.held_own.d.next = self.grant_own.val();
        self.queue.command.op.next = self.queue_host.op.val();
        self.queue.command.qpn.next = self.queue_host.qpn.val();
        self.queue.command.syndrome.next = self.queue_host.syndrome.val();
        self.queue.command.psn.next = self.queue_host.psn.val();
        self.queue.command.msn.next = self.queue_host.msn.val();
        self.queue.command.value.next = self.queue_host.value.val();
        self.queue.command.rkey.next = self.queue_host.rkey.val();
        self.queue.command.len.next = self.queue_host.len.val();
        self.queue.command.mtu_code.next = self.queue_host.mtu_code.val();
        // The host's commands push nothing: no writes to wait for.
        self.queue.command_wseq.next = 0.into();
        if self.grant_own.val() {
            self.queue.command.op.next = self.datapath.rspq.op.val();
            self.queue.command.qpn.next = self.datapath.rspq.qpn.val();
            self.queue.command.syndrome.next = self.datapath.rspq.syndrome.val();
            self.queue.command.psn.next = self.datapath.rspq.psn.val();
            self.queue.command.msn.next = self.datapath.rspq.msn.val();
            self.queue.command.value.next = self.datapath.rspq.value.val();
            self.queue.command.rkey.next = self.datapath.rspq.rkey.val();
            self.queue.command.len.next = self.datapath.rspq.len.val();
            self.queue.command.mtu_code.next = self.datapath.rspq.mtu_code.val();
            self.queue.command_wseq.next = self.datapath.rspq_wseq.val();
        }
        if self.own_accepted.val() {
            self.prefer_host.d.next = true;
        }
        if self.host_accepted.val() {
            self.prefer_host.d.next = false;
        }

        OutcomeStream::link(&mut self.out, &mut self.datapath.out);
        self.deciding_qpn.next = self.datapath.deciding_qpn.val();
        self.deciding_ce.next = self.datapath.deciding_ce.val();
        self.queue_full_waits.next = self.queue.full_waits.val();

        // ---- response packet -> write gate (taken at once while it has
        // room: the queue goes on) -> the QP's addressing -> transmitter.
        self.write_gate.in_valid.next = self.queue.packet.valid.val();
        self.queue.packet.ready.next = self.write_gate.in_ready.val();
        self.write_gate.in_packet.next.qpn = self.queue.packet.qpn.val();
        self.write_gate.in_packet.next.opcode = self.queue.packet.opcode.val();
        self.write_gate.in_packet.next.psn = self.queue.packet.psn.val();
        self.write_gate.in_packet.next.syndrome = self.queue.packet.syndrome.val();
        self.write_gate.in_packet.next.msn = self.queue.packet.msn.val();
        self.write_gate.in_packet.next.orig = self.queue.packet.orig.val();
        self.write_gate.in_packet.next.read = self.queue.packet.read.val();
        self.write_gate.in_packet.next.va = self.queue.packet.va.val();
        self.write_gate.in_packet.next.rkey = self.queue.packet.rkey.val();
        self.write_gate.in_packet.next.len = self.queue.packet.len.val();
        self.write_gate.in_packet.next.wseq = self.queue.packet.wseq.val();
        self.write_gate.writes_issued.next = self.datapath.writes_issued.val();
        self.write_gate.writes_done.next = self.datapath.writes_done.val();
        self.desc_fire.next = self.queue.packet.valid.val() & self.write_gate.in_ready.val();
        self.desc_qpn.next = bit_cast::<24, QPN_BITS>(self.queue.packet.qpn.val());

        // The gate's head stays until taken, so the address RAM is read at
        // its QPN while it waits and the descriptor offered once both are
        // ready (again after a write to that entry).
        self.addresses.write.next = self.addr_write.val();
        self.addresses.write_qpn.next = self.addr_qpn.val();
        self.addresses.write_data.next = self.addr_data.val();
        self.addresses.read_qpn.next = self.write_gate.out_packet.val().qpn;

        self.desc_offer.next = self.write_gate.out_valid.val() & self.address_ready.q.val();
        self.desc_taken.next = self.desc_offer.val() & self.transmitter.desc_ready.val();
        self.address_ready.d.next = self.write_gate.head_valid.val()
            & !self.desc_taken.val()
            & !(self.addr_write.val()
                & (self.addr_qpn.val() == self.write_gate.out_packet.val().qpn));
        self.write_gate.out_ready.next = self.desc_taken.val();

        self.transmitter.desc_valid.next = self.desc_offer.val();
        self.transmitter.desc_opcode.next = self.write_gate.out_packet.val().opcode;
        self.transmitter.desc_psn.next = self.write_gate.out_packet.val().psn;
        self.transmitter.desc_syndrome.next = self.write_gate.out_packet.val().syndrome;
        self.transmitter.desc_msn.next = self.write_gate.out_packet.val().msn;
        self.transmitter.desc_orig.next = self.write_gate.out_packet.val().orig;
        self.transmitter.desc_read.next = self.write_gate.out_packet.val().read;
        self.transmitter.desc_va.next = self.write_gate.out_packet.val().va;
        self.transmitter.desc_rkey.next = self.write_gate.out_packet.val().rkey;
        self.transmitter.desc_len.next = self.write_gate.out_packet.val().len;
        self.transmitter.desc_address.next = self.addresses.read_data.val();

        // ---- the transmitter's DMA reads and frames
        DmaReadPort::join(&mut self.transmitter.dma, &mut self.read_arbiter.a);
        DmaReadPort::join(&mut self.datapath.atomic_dma, &mut self.read_arbiter.b);
        DmaReadPort::link(&mut self.dma, &mut self.read_arbiter.dma);
        self.frame.tdata.next = self.transmitter.frame.tdata.val();
        self.frame.tkeep.next = self.transmitter.frame.tkeep.val();
        self.frame.tlast.next = self.transmitter.frame.tlast.val();
        self.frame.tvalid.next = self.transmitter.frame.tvalid.val();
        self.transmitter.frame.tready.next = self.frame.tready.val();
        self.read_errors.next = self.transmitter.read_errors.val();
        self.payload_last_errors.next = self.transmitter.payload_last_errors.val();

        if self.reset.val() {
            self.prefer_host.d.next = false;
            self.hold.d.next = false;
            self.address_ready.d.next = false;
        }
    }
}
