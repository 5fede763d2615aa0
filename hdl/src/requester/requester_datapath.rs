//! `RequesterDatapath`: the requester's transmit datapath. A transmit grant
//! (one send WQE of a QP, where to resume it, the send window and the QP's
//! addressing) becomes the request frames the model's requester sends for
//! it: [`RequestSegmenter`] cuts the WQE into packet descriptors, an
//! [`MrTranslate`](crate::dma::mr_translate::MrTranslate) checks each packet's local buffer range through the
//! L_Key and splits a payload at page boundaries, one DMA read per page
//! segment fetches it from host memory, the tagged (possibly out of order)
//! read data is put back together per packet and realigned to lane 0, and
//! [`TxBuilder`] frames it behind the packet's headers. The oracle is
//! `rocenic_model::requester` (`segment_wqe`, `local_access`) and
//! `rocenic_model::tx::frame`: every frame equals what the model NIC
//! transmits for the same WQE, first transmission.
//!
//! The key check, DMA reads, reassembly and realignment are a
//! [`PayloadFetch`], the block the response transmitter uses too.
//!
//! Limits: the WQE's local SGL is one SGE (L_Key, VA, length = the
//! message length), so a local length error cannot arise here (the model
//! raises it only for an SGL shorter than the message); the P_Key comes
//! with the grant, TTL 64, DF, flow label 0 and no UDP checksum are the
//! model's fixed choices.
//!
//! # Ports
//!
//! - `clock`; `reset` (synchronous, high; hold it one cycle): drops
//!   everything in flight and starts the sweeps of the inner MR table
//!   (1024 cycles, `cfg.ready` low) and of the DMA tag counters (16
//!   cycles, `dma.rd_ready` low).
//! - Grant (valid/ready, sampled in the accepting cycle): `grant_qpn`
//!   (echoed on the status), the WQE as [`RequestSegmenter`]'s `wqe_*`
//!   inputs (`grant_kind` .. `grant_ack_req_interval`, `grant_max_packets`;
//!   the destination QP is the address's), the SGE (`grant_lkey`, `grant_local_va`; its
//!   length is `grant_len`), and `grant_address` ([`QpAddress`], one port
//!   packed in field order, the record of the QP's address RAM entry): the
//!   QP's PD, destination QP, P_Key and frame addressing (`ecn` the
//!   codepoint every request frame carries).
//! - `cfg`: the inner [`MrTranslate`](crate::dma::mr_translate::MrTranslate)'s configuration port
//!   ([`MrConfigPort`](crate::dma::mr_translate::MrConfigPort)), linked through.
//! - `dma` ([`DmaReadPort`], the inner [`PayloadFetch`]'s, linked
//!   through): read requests (registered) with `dma.req_tag` 0..15
//!   (packet slot * 2 + page segment), `dma.req_addr`, `dma.req_len`. One
//!   per page segment of a packet's payload (at most two: a packet is at
//!   most 4096 bytes, a page at least 4 KiB). At most 16 in flight. Read
//!   data: `dma.rd_tag`, `dma.rd_data` (byte 0 of a request in lane 0 of
//!   its first beat, 64 bytes a beat), `dma.rd_last`. Beats of one tag in
//!   order; tags in any order.
//! - `frame` (AXI-Stream out, 512 bits, full backpressure): the frames.
//! - Status (a one-cycle pulse per grant, when the local check of its last
//!   packet is decided, before that packet's data is fetched: what the
//!   grant sends is then fixed): what `completer_datapath`'s `EV_SENT`
//!   takes. `status_valid`,
//!   `status_qpn`, `status_error` with `status_status` (the WQE failed its
//!   local checks: the model's LocProtErr, [`wc_status::LOC_PROT_ERR`]; no frame left from the failing packet on),
//!   `status_next_psn` (the send cursor after the grant: the PSN after its
//!   last frame, the failing packet's PSN on an error),
//!   `status_ackreq` / `status_ackreq_end` (a frame of the grant carried
//!   AckReq; the PSN after the last such frame, as the model's
//!   `requester::after_packet` moves `ackreq_end`), `status_cut` (the
//!   window or the packet cap stopped the grant, as the segmenter says),
//!   `status_wire_bytes` (24 bits: what the grant's frames will hold the
//!   wire for, each frame's bytes plus 24 of preamble, FCS and gap, the
//!   frames of failing packets not counted; DCQCN's pacing charges it).
//! - `sent_valid`, `sent_qpn`, `sent_bytes` (16 bits, registered): a
//!   request frame's header went to the TX builder: the grant's QP and the
//!   frame's bytes, Ethernet header to ICRC (for DCQCN's byte counter).
//! - `payload_last_errors`: the TX builder's counter (0 unless broken).
//!
//! The IPv4 identification is a counter of IPv4 frames sent since reset,
//! pre-incremented: the model NIC's counter for request frames
//! (`TxClass::ip_id_counter`; responses and CNPs count on their own).
//!
//! # Latency and throughput
//!
//! A grant's status comes a few cycles after its last descriptor took a
//! packet slot (the MR check's latency), not after the DMA read latency,
//! so the event loop can grant the QP again while its packets are still
//! being fetched: one QP's one-packet WQEs follow each other at the event
//! loop's pace, not one per read round trip. Up to 8 grants are in the block at once (their local buffer and
//! addressing queued until their last descriptor is checked and their last
//! packet has left), so grants follow each other without waiting for the
//! previous one's DMA reads. Descriptors leave the segmenter one per cycle
//! into 8 packet slots of the payload buffer (a 1024 x 512-bit block RAM,
//! 128 beats a slot: 64 beats per page segment). A slot is taken when its
//! descriptor goes to the MR check and freed when its payload has been
//! read out, so up to 8 packets (5 at MTU 4096: the fetch's budget of 20
//! KiB in flight, `payload_fetch::BUDGET_UNITS`) and 16 DMA reads are in
//! flight. A packet leaves (header to the TX builder, payload read out
//! of the buffer and realigned) once all its data is in, in order; readout
//! is one beat per cycle with about 2 idle cycles between packets (plus 1
//! when a page boundary splits a packet's bytes across two beats).
//!
//! With host reads of latency L cycles the sustained rate is about
//! min(1, n x MTU / 64 / (L + 20)) payload beats per cycle, n the packets
//! in flight (8, or 5 at MTU 4096): they over the read latency bound it
//! (the 16 tags never do, a packet needs at most 2); a frame carries 65
//! beats per 64 payload beats at MTU 4096 (the TX builder's own pause).
//! One-packet WQEs cost about L / 8 cycles each (the figures per L:
//! `docs/status.md`). IPv6 frames are held in the TX builder until their
//! UDP checksum is summed (its release delay is 0, the IPv4 setting),
//! which slows IPv6 streams.

use crate::codes::opcode_headers::OpcodeHeaders;
use crate::codes::wc_status;
use crate::dma::dma_port::DmaReadPort;
use crate::dma::mr_translate::MrConfigPortDefault;
use crate::dma::payload_fetch::PayloadFetch;
use crate::frame::tx::tx_builder::TxBuilder;
use crate::frame::tx::tx_header::TxHeader;
use crate::primitives::stream::{AxisSource, DATA_BITS, KEEP_BITS};
use crate::primitives::sync_fifo::SyncFifo;
use crate::qp::qp_address_ram::QpAddress;
use crate::requester::request_segmenter::RequestSegmenter;
use rust_hdl::prelude::*;

pub use crate::dma::payload_fetch::{DMA_TAGS, SLOTS};
// `update` writes `status_status` as a literal (`hdl_gen` reads a
// constant's path as a signal name): 0 or LOC_PROT_ERR.
const _: () = assert!(wc_status::SUCCESS == 0 && wc_status::LOC_PROT_ERR == 3);
// `update` adds the wire overhead of each frame as a literal.
const _: () = assert!(crate::congestion::dcqcn_sender::WIRE_OVERHEAD == 24);
/// IPv4 TTL / IPv6 hop limit, as the model sends.
pub const HOP_LIMIT: u64 = 64;

/// One packet descriptor waiting for its data: what its header needs.
#[derive(Clone, Copy, Debug, Default, PartialEq, LogicStruct)]
pub struct PacketDesc {
    pub packet: Bit,
    pub opcode: Bits<8>,
    pub psn: Bits<24>,
    pub dest_qp: Bits<24>,
    pub ack_req: Bit,
    pub solicited: Bit,
    pub remote_va: Bits<64>,
    pub rkey: Bits<32>,
    pub dma_len: Bits<32>,
    pub imm: Bits<32>,
    pub swap_add: Bits<64>,
    pub compare: Bits<64>,
    pub payload_len: Bits<13>,
    pub wqe_end: Bit,
    /// The frame's bytes, Ethernet header to ICRC.
    pub bytes: Bits<16>,
}

/// One packet descriptor waiting for its check: what the grant's status
/// needs of it.
#[derive(Clone, Copy, Debug, Default, PartialEq, LogicStruct)]
pub struct PacketCheck {
    pub qpn: Bits<24>,
    pub packet: Bit,
    pub psn: Bits<24>,
    pub ack_req: Bit,
    pub wqe_end: Bit,
    pub cut: Bit,
    pub next_psn: Bits<24>,
    /// The frame's bytes, Ethernet header to ICRC.
    pub bytes: Bits<16>,
}

/// What the translate stage needs of a grant.
#[derive(Clone, Copy, Debug, Default, PartialEq, LogicStruct)]
pub struct GrantLocal {
    pub qpn: Bits<24>,
    pub kind: Bits<3>,
    pub lkey: Bits<32>,
    pub local_va: Bits<64>,
    pub pd: Bits<32>,
    pub ipv6: Bit,
}

/// What a grant's frames and status need at retire.
#[derive(Clone, Copy, Debug, Default, PartialEq, LogicStruct)]
pub struct GrantFrame {
    pub qpn: Bits<24>,
    pub pkey: Bits<16>,
    pub eth_dst: Bits<48>,
    pub eth_src: Bits<48>,
    pub ipv6: Bit,
    pub ip_src: Bits<128>,
    pub ip_dst: Bits<128>,
    pub dscp: Bits<6>,
    pub ecn: Bits<2>,
    pub udp_src_port: Bits<16>,
}

#[derive(LogicBlock, Default)]
pub struct RequesterDatapath {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,

    pub grant_valid: Signal<In, Bit>,
    pub grant_ready: Signal<Out, Bit>,
    pub grant_qpn: Signal<In, Bits<24>>,
    pub grant_kind: Signal<In, Bits<3>>,
    pub grant_len: Signal<In, Bits<32>>,
    pub grant_first_psn: Signal<In, Bits<24>>,
    pub grant_start_psn: Signal<In, Bits<24>>,
    pub grant_mtu: Signal<In, Bits<3>>,
    pub grant_remote_va: Signal<In, Bits<64>>,
    pub grant_rkey: Signal<In, Bits<32>>,
    pub grant_imm: Signal<In, Bits<32>>,
    pub grant_compare: Signal<In, Bits<64>>,
    pub grant_swap_add: Signal<In, Bits<64>>,
    pub grant_solicited: Signal<In, Bit>,
    pub grant_una: Signal<In, Bits<24>>,
    pub grant_window: Signal<In, Bits<32>>,
    pub grant_ack_req_interval: Signal<In, Bits<32>>,
    pub grant_max_packets: Signal<In, Bits<16>>,
    pub grant_lkey: Signal<In, Bits<32>>,
    pub grant_local_va: Signal<In, Bits<64>>,
    /// The QP's PD, destination QP and frame addressing.
    pub grant_address: Signal<In, QpAddress>,

    pub cfg: MrConfigPortDefault,

    pub dma: DmaReadPort,

    pub frame: AxisSource<DATA_BITS, KEEP_BITS>,

    pub status_valid: Signal<Out, Bit>,
    pub status_qpn: Signal<Out, Bits<24>>,
    pub status_error: Signal<Out, Bit>,
    pub status_status: Signal<Out, Bits<4>>,
    pub status_next_psn: Signal<Out, Bits<24>>,
    pub status_ackreq: Signal<Out, Bit>,
    pub status_ackreq_end: Signal<Out, Bits<24>>,
    pub status_cut: Signal<Out, Bit>,
    pub status_wire_bytes: Signal<Out, Bits<24>>,
    pub sent_valid: Signal<Out, Bit>,
    pub sent_qpn: Signal<Out, Bits<24>>,
    pub sent_bytes: Signal<Out, Bits<16>>,
    pub payload_last_errors: Signal<Out, Bits<16>>,

    segmenter: RequestSegmenter,
    fetch: PayloadFetch,
    builder: TxBuilder,
    /// Descriptors in the fetch's slots, in order (8 at most).
    descs: SyncFifo<PacketDesc, 3, 4>,
    /// The same descriptors until their check is decided, and the checks'
    /// outcomes (failed), both in order: the status stage pairs them.
    checks: SyncFifo<PacketCheck, 3, 4>,
    results: SyncFifo<Bit, 3, 4>,

    /// Grants accepted: their local buffer until their last descriptor is
    /// translated, their addressing until their last packet retires.
    grant_locals: SyncFifo<GrantLocal, 3, 4>,
    grant_frames: SyncFifo<GrantFrame, 3, 4>,
    /// A packet of the retiring grant failed: the rest of it is dropped.
    g_failed: DFF<Bit>,
    /// A packet of the grant being checked failed (the rest of it will be
    /// dropped), its cursor at the failing packet.
    c_failed: DFF<Bit>,
    c_fail_psn: DFF<Bits<24>>,
    /// A frame of the grant being checked will carry AckReq; the PSN after
    /// the last one.
    c_ackreq: DFF<Bit>,
    c_ackreq_end: DFF<Bits<24>>,

    // Header record to the TX builder.
    h_valid: DFF<Bit>,
    h_record: DFF<TxHeader>,
    ip_id: DFF<Bits<16>>,
    /// The frame whose header was just made: its QP and bytes.
    sent_frame: DFF<Bit>,
    sent_frame_qpn: DFF<Bits<24>>,
    sent_frame_bytes: DFF<Bits<16>>,
    opcode_table: OpcodeHeaders,
    /// Eth + IP + UDP + BTH + ICRC bytes.
    frame_base: Signal<Local, Bits<16>>,
    frame_bytes: Signal<Local, Bits<16>>,
    /// The wire bytes of the grant's packets checked so far that will be
    /// sent, with the one being checked; the grant's total, for its status.
    c_wire_bytes: DFF<Bits<24>>,
    c_sent_wire: Signal<Local, Bits<24>>,
    s_wire_bytes: DFF<Bits<24>>,

    s_valid: DFF<Bit>,
    s_qpn: DFF<Bits<24>>,
    s_error: DFF<Bit>,
    s_next_psn: DFF<Bits<24>>,
    s_ackreq: DFF<Bit>,
    s_ackreq_end: DFF<Bits<24>>,
    s_cut: DFF<Bit>,

    grant_take: Signal<Local, Bit>,
    // Translate stage.
    t_is_payload: Signal<Local, Bit>,
    t_is_read: Signal<Local, Bit>,
    t_len: Signal<Local, Bits<32>>,
    t_offset: Signal<Local, Bits<32>>,
    t_va: Signal<Local, Bits<65>>,
    t_check: Signal<Local, Bit>,
    t_dma: Signal<Local, Bit>,
    t_go: Signal<Local, Bit>,
    // Status.
    c_go: Signal<Local, Bit>,
    c_drop: Signal<Local, Bit>,
    c_fails_now: Signal<Local, Bit>,
    c_asks_ack: Signal<Local, Bit>,
    // Retire.
    retire: Signal<Local, Bit>,
    drop_pkt: Signal<Local, Bit>,
}

impl Logic for RequesterDatapath {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            g_failed,
            c_failed,
            c_fail_psn,
            c_ackreq,
            c_ackreq_end,
            h_valid,
            h_record,
            ip_id,
            s_valid,
            s_qpn,
            s_error,
            s_next_psn,
            s_ackreq,
            s_ackreq_end,
            s_cut,
            sent_frame,
            sent_frame_qpn,
            sent_frame_bytes,
            c_wire_bytes,
            s_wire_bytes
        );
        self.segmenter.clock.next = self.clock.val();
        self.fetch.clock.next = self.clock.val();
        self.builder.clock.next = self.clock.val();
        self.descs.clock.next = self.clock.val();
        self.checks.clock.next = self.clock.val();
        self.results.clock.next = self.clock.val();
        self.grant_locals.clock.next = self.clock.val();
        self.grant_frames.clock.next = self.clock.val();
        self.segmenter.reset.next = self.reset.val();
        self.fetch.reset.next = self.reset.val();
        self.builder.reset.next = self.reset.val();
        self.descs.reset.next = self.reset.val();
        self.checks.reset.next = self.reset.val();
        self.results.reset.next = self.reset.val();
        self.grant_locals.reset.next = self.reset.val();
        self.grant_frames.reset.next = self.reset.val();

        // ---- grant: the WQE straight into the segmenter, the rest queued
        // for its packets (up to 4 grants in flight).
        self.segmenter.wqe_valid.next =
            self.grant_valid.val() & !self.grant_locals.full.val() & !self.grant_frames.full.val();
        self.grant_ready.next = !self.grant_locals.full.val()
            & !self.grant_frames.full.val()
            & self.segmenter.wqe_ready.val();
        self.grant_take.next = self.grant_valid.val() & self.grant_ready.val();
        self.segmenter.wqe_tag.next = 0.into();
        self.segmenter.wqe_kind.next = self.grant_kind.val();
        self.segmenter.wqe_len.next = self.grant_len.val();
        self.segmenter.wqe_first_psn.next = self.grant_first_psn.val();
        self.segmenter.wqe_start_psn.next = self.grant_start_psn.val();
        self.segmenter.wqe_mtu.next = self.grant_mtu.val();
        self.segmenter.wqe_dest_qp.next = self.grant_address.val().dest_qp;
        self.segmenter.wqe_remote_va.next = self.grant_remote_va.val();
        self.segmenter.wqe_rkey.next = self.grant_rkey.val();
        self.segmenter.wqe_imm.next = self.grant_imm.val();
        self.segmenter.wqe_compare.next = self.grant_compare.val();
        self.segmenter.wqe_swap_add.next = self.grant_swap_add.val();
        self.segmenter.wqe_solicited.next = self.grant_solicited.val();
        self.segmenter.wqe_una.next = self.grant_una.val();
        self.segmenter.wqe_window.next = self.grant_window.val();
        self.segmenter.wqe_ack_req_interval.next = self.grant_ack_req_interval.val();
        self.segmenter.wqe_max_packets.next = self.grant_max_packets.val();
        self.grant_locals.write.next = self.grant_take.val();
        self.grant_locals.data_in.next.qpn = self.grant_qpn.val();
        self.grant_locals.data_in.next.kind = self.grant_kind.val();
        self.grant_locals.data_in.next.lkey = self.grant_lkey.val();
        self.grant_locals.data_in.next.local_va = self.grant_local_va.val();
        self.grant_locals.data_in.next.pd = self.grant_address.val().pd;
        self.grant_locals.data_in.next.ipv6 = self.grant_address.val().ipv6;
        self.grant_frames.write.next = self.grant_take.val();
        self.grant_frames.data_in.next.qpn = self.grant_qpn.val();
        self.grant_frames.data_in.next.pkey = self.grant_address.val().pkey;
        self.grant_frames.data_in.next.eth_dst = self.grant_address.val().eth_dst;
        self.grant_frames.data_in.next.eth_src = self.grant_address.val().eth_src;
        self.grant_frames.data_in.next.ipv6 = self.grant_address.val().ipv6;
        self.grant_frames.data_in.next.ip_src = self.grant_address.val().ip_src;
        self.grant_frames.data_in.next.ip_dst = self.grant_address.val().ip_dst;
        self.grant_frames.data_in.next.dscp = self.grant_address.val().dscp;
        self.grant_frames.data_in.next.ecn = self.grant_address.val().ecn;
        self.grant_frames.data_in.next.udp_src_port = self.grant_address.val().udp_src_port;

        // ---- MR configuration passes through
        MrConfigPortDefault::link(&mut self.cfg, &mut self.fetch.cfg);

        DmaReadPort::link(&mut self.dma, &mut self.fetch.dma);

        // ---- translate stage: each descriptor takes a slot and asks for its
        // local check (the model's `local_access`): SEND/WRITE read their
        // payload (no right needed), a READ's remaining response bytes and
        // an atomic's 8-byte result will be written (LOCAL_WRITE). An empty
        // range is not checked. Every descriptor is sent, checked or not,
        // so responses stay one per descriptor, in order.
        self.t_is_payload.next = self.grant_locals.data_out.val().kind <= 4;
        self.t_is_read.next = self.grant_locals.data_out.val().kind == 5;
        self.t_offset.next = self.segmenter.pkt_payload_offset.val();
        self.t_len.next = bit_cast::<32, 13>(self.segmenter.pkt_payload_len.val());
        if self.t_is_read.val() {
            self.t_len.next = self.segmenter.pkt_dma_len.val();
        } else if !self.t_is_payload.val() {
            self.t_offset.next = 0.into();
            self.t_len.next = 8.into();
        }
        self.t_va.next = bit_cast::<65, 64>(self.grant_locals.data_out.val().local_va)
            + bit_cast::<65, 32>(self.t_offset.val());
        self.t_check.next = self.segmenter.pkt_packet.val() & (self.t_len.val() != 0);
        self.t_dma.next = self.t_check.val() & self.t_is_payload.val();
        // A slot free in the fetch, and the grant's local buffer readable.
        self.fetch.req_valid.next = self.segmenter.pkt_valid.val() & !self.grant_locals.empty.val();
        self.segmenter.pkt_ready.next = !self.grant_locals.empty.val() & self.fetch.req_ready.val();
        self.t_go.next = self.segmenter.pkt_valid.val() & self.segmenter.pkt_ready.val();
        self.fetch.req_key.next = self.grant_locals.data_out.val().lkey;
        self.fetch.req_va.next = self.t_va.val().get_bits::<64>(0);
        self.fetch.req_len.next = self.t_len.val();
        self.fetch.req_pd.next = self.grant_locals.data_out.val().pd;
        self.fetch.req_access.next = 0.into();
        if !self.t_is_payload.val() {
            self.fetch.req_access.next = 1.into(); // LOCAL_WRITE
        }
        self.fetch.req_remote.next = false;
        // VA + offset past 2^64 fails the packet (only a checked range has
        // an offset to overflow with).
        self.fetch.req_check.next = self.t_check.val() | self.t_va.val().get_bit(64);
        self.fetch.req_fetch.next = self.t_dma.val();
        self.fetch.req_fail.next = self.t_va.val().get_bit(64);

        self.descs.write.next = self.t_go.val();
        self.descs.data_in.next.packet = self.segmenter.pkt_packet.val();
        self.descs.data_in.next.opcode = self.segmenter.pkt_opcode.val();
        self.descs.data_in.next.psn = self.segmenter.pkt_psn.val();
        self.descs.data_in.next.dest_qp = self.segmenter.pkt_dest_qp.val();
        self.descs.data_in.next.ack_req = self.segmenter.pkt_ack_req.val();
        self.descs.data_in.next.solicited = self.segmenter.pkt_solicited.val();
        self.descs.data_in.next.remote_va = self.segmenter.pkt_remote_va.val();
        self.descs.data_in.next.rkey = self.segmenter.pkt_rkey.val();
        self.descs.data_in.next.dma_len = self.segmenter.pkt_dma_len.val();
        self.descs.data_in.next.imm = self.segmenter.pkt_imm.val();
        self.descs.data_in.next.swap_add = self.segmenter.pkt_swap_add.val();
        self.descs.data_in.next.compare = self.segmenter.pkt_compare.val();
        self.descs.data_in.next.payload_len = self.segmenter.pkt_payload_len.val();
        self.descs.data_in.next.wqe_end = self.segmenter.pkt_wqe_end.val();
        // The frame's bytes: Eth + IP + UDP + BTH + ICRC, the opcode's
        // extension headers, the payload padded to 4 bytes.
        self.opcode_table.opcode.next = self.segmenter.pkt_opcode.val();
        self.frame_base.next = bits::<16>(58);
        if self.grant_locals.data_out.val().ipv6 {
            self.frame_base.next = bits::<16>(78);
        }
        self.frame_bytes.next = self.frame_base.val()
            + bit_cast::<16, 5>(self.opcode_table.headers_len.val())
            + ((bit_cast::<16, 13>(self.segmenter.pkt_payload_len.val()) + 3) & bits::<16>(0xFFFC));
        self.descs.data_in.next.bytes = self.frame_bytes.val();
        self.checks.data_in.next.bytes = self.frame_bytes.val();
        self.checks.write.next = self.t_go.val();
        self.checks.data_in.next.qpn = self.grant_locals.data_out.val().qpn;
        self.checks.data_in.next.packet = self.segmenter.pkt_packet.val();
        self.checks.data_in.next.psn = self.segmenter.pkt_psn.val();
        self.checks.data_in.next.ack_req = self.segmenter.pkt_ack_req.val();
        self.checks.data_in.next.wqe_end = self.segmenter.pkt_wqe_end.val();
        self.checks.data_in.next.cut = self.segmenter.pkt_cut.val();
        self.checks.data_in.next.next_psn = self.segmenter.pkt_next_psn.val();
        self.grant_locals.read.next = self.t_go.val() & self.segmenter.pkt_wqe_end.val();

        // ---- status: each descriptor's check outcome, in order; the
        // grant's status goes out at its last descriptor's, before its
        // data is fetched (the model decides a packet when it sends it, and
        // nothing after the check can change what the grant sends).
        self.results.write.next = self.fetch.checked_valid.val();
        self.results.data_in.next = self.fetch.checked_failed.val();
        self.c_go.next = !self.checks.empty.val() & !self.results.empty.val();
        self.checks.read.next = self.c_go.val();
        self.results.read.next = self.c_go.val();
        self.c_drop.next = self.c_failed.q.val()
            | self.results.data_out.val()
            | !self.checks.data_out.val().packet;
        // The first failing packet is where the cursor stops (the model
        // sends nothing of the WQE from it on).
        self.c_fails_now.next = !self.c_failed.q.val() & self.results.data_out.val();
        self.c_asks_ack.next = !self.c_drop.val() & self.checks.data_out.val().ack_req;
        self.s_valid.d.next = false;
        self.c_sent_wire.next = self.c_wire_bytes.q.val();
        if !self.c_drop.val() {
            self.c_sent_wire.next = self.c_wire_bytes.q.val()
                + bit_cast::<24, 16>(self.checks.data_out.val().bytes)
                + bits::<24>(24); // WIRE_OVERHEAD
        }
        if self.c_go.val() {
            self.c_wire_bytes.d.next = self.c_sent_wire.val();
            if self.results.data_out.val() {
                self.c_failed.d.next = true;
            }
            if self.c_fails_now.val() {
                self.c_fail_psn.d.next = self.checks.data_out.val().psn;
            }
            if self.c_asks_ack.val() {
                self.c_ackreq.d.next = true;
                self.c_ackreq_end.d.next = self.checks.data_out.val().next_psn;
            }
            if self.checks.data_out.val().wqe_end {
                self.c_failed.d.next = false;
                self.c_ackreq.d.next = false;
                self.c_wire_bytes.d.next = 0.into();
                self.s_wire_bytes.d.next = self.c_sent_wire.val();
                self.s_valid.d.next = true;
                self.s_qpn.d.next = self.checks.data_out.val().qpn;
                self.s_error.d.next = self.c_failed.q.val() | self.results.data_out.val();
                self.s_next_psn.d.next = self.checks.data_out.val().next_psn;
                if self.c_failed.q.val() {
                    self.s_next_psn.d.next = self.c_fail_psn.q.val();
                } else if self.results.data_out.val() {
                    self.s_next_psn.d.next = self.checks.data_out.val().psn;
                }
                self.s_ackreq.d.next = self.c_ackreq.q.val() | self.c_asks_ack.val();
                self.s_ackreq_end.d.next = self.c_ackreq_end.q.val();
                if self.c_asks_ack.val() {
                    self.s_ackreq_end.d.next = self.checks.data_out.val().next_psn;
                }
                self.s_cut.d.next = self.checks.data_out.val().cut;
            }
        }

        // ---- retire: the head packet, once its data is in, sends its
        // header (its payload follows from the fetch) or is dropped.
        self.retire.next = !self.descs.empty.val()
            & !self.grant_frames.empty.val()
            & self.fetch.head_valid.val()
            & (!self.h_valid.q.val() | self.builder.header.ready.val());
        self.descs.read.next = self.retire.val();
        self.grant_frames.read.next = self.retire.val() & self.descs.data_out.val().wqe_end;
        self.drop_pkt.next = self.g_failed.q.val()
            | self.fetch.head_failed.val()
            | !self.descs.data_out.val().packet;
        self.fetch.head_take.next = self.retire.val();
        self.fetch.head_send.next = !self.drop_pkt.val();
        if self.h_valid.q.val() & self.builder.header.ready.val() {
            self.h_valid.d.next = false;
        }
        if self.retire.val() {
            if self.fetch.head_failed.val() {
                self.g_failed.d.next = true;
            }
            if self.descs.data_out.val().wqe_end {
                self.g_failed.d.next = false;
            }
            if !self.drop_pkt.val() {
                self.h_valid.d.next = true;
                if !self.grant_frames.data_out.val().ipv6 {
                    self.ip_id.d.next = self.ip_id.q.val() + 1;
                }
            }
        }
        self.h_record.d.next.eth_dst = self.grant_frames.data_out.val().eth_dst;
        self.h_record.d.next.eth_src = self.grant_frames.data_out.val().eth_src;
        self.h_record.d.next.ipv6 = self.grant_frames.data_out.val().ipv6;
        self.h_record.d.next.ip_src = self.grant_frames.data_out.val().ip_src;
        self.h_record.d.next.ip_dst = self.grant_frames.data_out.val().ip_dst;
        self.h_record.d.next.dscp = self.grant_frames.data_out.val().dscp;
        self.h_record.d.next.ecn = self.grant_frames.data_out.val().ecn;
        self.h_record.d.next.ipv4_identification = self.ip_id.q.val() + 1;
        self.h_record.d.next.ipv4_dont_fragment = !self.grant_frames.data_out.val().ipv6;
        self.h_record.d.next.ttl = 64.into(); // HOP_LIMIT
        self.h_record.d.next.ipv6_flow_label = 0.into();
        self.h_record.d.next.udp_src_port = self.grant_frames.data_out.val().udp_src_port;
        self.h_record.d.next.udp_checksum = false;
        self.h_record.d.next.opcode = self.descs.data_out.val().opcode;
        self.h_record.d.next.solicited = self.descs.data_out.val().solicited;
        self.h_record.d.next.mig_req = false;
        self.h_record.d.next.tver = 0.into();
        self.h_record.d.next.pkey = self.grant_frames.data_out.val().pkey;
        self.h_record.d.next.fecn = false;
        self.h_record.d.next.becn = false;
        self.h_record.d.next.dest_qp = self.descs.data_out.val().dest_qp;
        self.h_record.d.next.ack_req = self.descs.data_out.val().ack_req;
        self.h_record.d.next.psn = self.descs.data_out.val().psn;
        self.h_record.d.next.deth_qkey = 0.into();
        self.h_record.d.next.deth_src_qp = 0.into();
        self.h_record.d.next.reth_va = self.descs.data_out.val().remote_va;
        self.h_record.d.next.reth_rkey = self.descs.data_out.val().rkey;
        self.h_record.d.next.reth_dma_len = self.descs.data_out.val().dma_len;
        self.h_record.d.next.atomic_va = self.descs.data_out.val().remote_va;
        self.h_record.d.next.atomic_rkey = self.descs.data_out.val().rkey;
        self.h_record.d.next.atomic_swap_add = self.descs.data_out.val().swap_add;
        self.h_record.d.next.atomic_compare = self.descs.data_out.val().compare;
        self.h_record.d.next.aeth_syndrome = 0.into();
        self.h_record.d.next.aeth_msn = 0.into();
        self.h_record.d.next.atomic_ack_orig = 0.into();
        self.h_record.d.next.imm = self.descs.data_out.val().imm;
        self.h_record.d.next.ieth_rkey = self.descs.data_out.val().imm;
        self.h_record.d.next.payload_len = self.descs.data_out.val().payload_len;
        if !self.retire.val() {
            self.h_record.d.next = self.h_record.q.val();
        }
        self.builder.header.valid.next = self.h_valid.q.val();
        self.builder.header.record.next = self.h_record.q.val();

        // ---- each frame sent, for DCQCN: its QP and its bytes
        self.sent_frame.d.next = self.retire.val() & !self.drop_pkt.val() & !self.reset.val();
        self.sent_frame_qpn.d.next = self.grant_frames.data_out.val().qpn;
        self.sent_frame_bytes.d.next = self.descs.data_out.val().bytes;
        self.sent_valid.next = self.sent_frame.q.val();
        self.sent_qpn.next = self.sent_frame_qpn.q.val();
        self.sent_bytes.next = self.sent_frame_bytes.q.val();

        AxisSource::<DATA_BITS, KEEP_BITS>::link(&mut self.frame, &mut self.builder.frame);
        AxisSource::<DATA_BITS, KEEP_BITS>::join(
            &mut self.fetch.payload,
            &mut self.builder.payload,
        );
        self.payload_last_errors.next = self.builder.payload_last_errors.val();
        self.status_valid.next = self.s_valid.q.val();
        self.status_qpn.next = self.s_qpn.q.val();
        self.status_error.next = self.s_error.q.val();
        self.status_status.next = 0.into();
        if self.s_error.q.val() {
            self.status_status.next = 3.into(); // wc_status::LOC_PROT_ERR
        }
        self.status_next_psn.next = self.s_next_psn.q.val();
        self.status_ackreq.next = self.s_ackreq.q.val();
        self.status_ackreq_end.next = self.s_ackreq_end.q.val();
        self.status_cut.next = self.s_cut.q.val();
        self.status_wire_bytes.next = self.s_wire_bytes.q.val();

        if self.reset.val() {
            self.g_failed.d.next = false;
            self.c_failed.d.next = false;
            self.c_ackreq.d.next = false;
            self.c_wire_bytes.d.next = 0.into();
            self.h_valid.d.next = false;
            self.ip_id.d.next = 0.into();
            self.s_valid.d.next = false;
        }
    }
}
