//! `RequesterDatapath`: the requester's transmit datapath. A transmit grant
//! (one send WQE of a QP, where to resume it, the send window and the QP's
//! addressing) becomes the request frames the model's requester sends for
//! it: [`RequestSegmenter`] cuts the WQE into packet descriptors, an
//! [`MrTranslate`] checks each packet's local buffer range through the
//! L_Key and splits a payload at page boundaries, one DMA read per page
//! segment fetches it from host memory, the tagged (possibly out of order)
//! read data is put back together per packet and realigned to lane 0, and
//! [`TxBuilder`] frames it behind the packet's headers. The oracle is
//! `rocenic_model::requester` (`segment_wqe`, `local_access`) and
//! `rocenic_model::tx::frame`: every frame equals what the model NIC
//! transmits for the same WQE, first transmission.
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
//!   (1024 cycles, `cfg_ready` low) and of the DMA tag counters (16
//!   cycles, `dma_rd_ready` low).
//! - Grant (valid/ready, sampled in the accepting cycle): `grant_qpn`
//!   (echoed on the status), the WQE as [`RequestSegmenter`]'s `wqe_*`
//!   inputs (`grant_kind` .. `grant_ack_req_interval`), the SGE
//!   (`grant_lkey`, `grant_local_va`; its length is `grant_len`), the QP's
//!   `grant_pd`, `grant_pkey`, and the frame addressing `grant_eth_dst`,
//!   `grant_eth_src`, `grant_ipv6`, `grant_ip_src`, `grant_ip_dst` (IPv4 in
//!   the low 32 bits), `grant_dscp`, `grant_ecn`, `grant_udp_src_port`.
//! - MR configuration: the inner [`MrTranslate`]'s `cfg_*` port as is.
//! - DMA read requests (valid/ready, registered): `dma_req_tag` (0..15:
//!   packet slot * 2 + page segment), `dma_req_addr`, `dma_req_len`. One
//!   per page segment of a packet's payload (at most two: a packet is at
//!   most 4096 bytes, a page at least 4 KiB). At most 16 in flight.
//! - DMA read data (valid/ready): `dma_rd_tag`, `dma_rd_data` (byte 0 of
//!   a request in lane 0 of its first beat, 64 bytes a beat), `dma_rd_last`.
//!   Beats of one tag in order; tags in any order.
//! - `frame` (AXI-Stream out, 512 bits, full backpressure): the frames.
//! - Status (a one-cycle pulse per grant, when its last packet is decided):
//!   `status_valid`, `status_qpn`, `status_error` (the WQE failed its local
//!   checks: the model's LocProtErr; no frame left from the failing packet
//!   on), `status_next_psn` / `status_cut` (the send cursor after the grant
//!   and whether the window stopped it, as the segmenter says).
//! - `payload_last_errors`: the TX builder's counter (0 unless broken).
//!
//! The IPv4 identification is a counter of IPv4 frames sent since reset
//! (the model's per-NIC counter, pre-incremented).
//!
//! # Latency and throughput
//!
//! Up to 8 grants are in the block at once (their local buffer and
//! addressing queued until their last descriptor is checked and their last
//! packet has left), so grants follow each other without waiting for the
//! previous one's DMA reads. Descriptors leave the segmenter one per cycle
//! into 8 packet slots of the payload buffer (a 1024 x 512-bit block RAM,
//! 128 beats a slot: 64 beats per page segment). A slot is taken when its
//! descriptor goes to the MR check and freed when its payload has been
//! read out, so up to 8 packets (32 KiB at MTU 4096) and 16 DMA reads are
//! in flight. A packet leaves (header to the TX builder, payload read out
//! of the buffer and realigned) once all its data is in, in order; readout
//! is one beat per cycle with about 2 idle cycles between packets (plus 1
//! when a page boundary splits a packet's bytes across two beats).
//!
//! With host reads of latency L cycles the sustained rate is about
//! min(1, 8 x MTU / 64 / (L + 20)) payload beats per cycle: the 8 slots
//! over the read latency bound it (the 16 tags never do, a packet needs at
//! most 2). Measured with MTU-4096 SENDs over IPv4: 0.985 frame beats per
//! cycle at L = 200 (the default host; 65 frame beats per 64 payload
//! beats, the TX builder's own pause), 0.967 at L = 400, 0.56 at L = 800.
//! One-packet WQEs cost about L / 8 cycles each (23 at L = 200). IPv6 frames are
//! held in the TX builder until their UDP checksum is summed (its release
//! delay is 0, the IPv4 setting), which slows IPv6 streams.

use crate::mr_translate::{MrTranslateDefault, STATUS_OK};
use crate::request_segmenter::RequestSegmenter;
use crate::stream::{AxisSource, DATA_BITS, KEEP_BITS};
use crate::sync_fifo::SyncFifo;
use crate::tx_builder::TxBuilder;
use crate::tx_header::TxHeader;
use rust_hdl::prelude::*;

/// Packet slots of the payload buffer (and packets in flight).
pub const SLOTS: u64 = 8;
/// DMA read tags: two page segments per slot.
pub const DMA_TAGS: u64 = 2 * SLOTS;
/// `status_error`: the WQE failed a local protection check (LocProtErr).
pub const STATUS_LOC_PROT_ERR: u64 = 1;
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
    pub cut: Bit,
    pub next_psn: Bits<24>,
}

/// What the translate stage needs of a grant.
#[derive(Clone, Copy, Debug, Default, PartialEq, LogicStruct)]
pub struct GrantLocal {
    pub kind: Bits<3>,
    pub lkey: Bits<32>,
    pub local_va: Bits<64>,
    pub pd: Bits<32>,
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

/// A packet's local check and where its payload sits in its slot.
#[derive(Clone, Copy, Debug, Default, PartialEq, LogicStruct)]
pub struct PacketInfo {
    pub failed: Bit,
    /// Bytes of the first page segment (region 0 of the slot).
    pub len_a: Bits<13>,
    /// Bytes of the second page segment (region 1), 0 if none.
    pub len_b: Bits<13>,
}

#[derive(LogicBlock)]
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
    pub grant_dest_qp: Signal<In, Bits<24>>,
    pub grant_remote_va: Signal<In, Bits<64>>,
    pub grant_rkey: Signal<In, Bits<32>>,
    pub grant_imm: Signal<In, Bits<32>>,
    pub grant_compare: Signal<In, Bits<64>>,
    pub grant_swap_add: Signal<In, Bits<64>>,
    pub grant_solicited: Signal<In, Bit>,
    pub grant_una: Signal<In, Bits<24>>,
    pub grant_window: Signal<In, Bits<32>>,
    pub grant_ack_req_interval: Signal<In, Bits<32>>,
    pub grant_lkey: Signal<In, Bits<32>>,
    pub grant_local_va: Signal<In, Bits<64>>,
    pub grant_pd: Signal<In, Bits<32>>,
    pub grant_pkey: Signal<In, Bits<16>>,
    pub grant_eth_dst: Signal<In, Bits<48>>,
    pub grant_eth_src: Signal<In, Bits<48>>,
    pub grant_ipv6: Signal<In, Bit>,
    pub grant_ip_src: Signal<In, Bits<128>>,
    pub grant_ip_dst: Signal<In, Bits<128>>,
    pub grant_dscp: Signal<In, Bits<6>>,
    pub grant_ecn: Signal<In, Bits<2>>,
    pub grant_udp_src_port: Signal<In, Bits<16>>,

    pub cfg_ready: Signal<Out, Bit>,
    pub cfg_mr_write: Signal<In, Bit>,
    pub cfg_mr_index: Signal<In, Bits<10>>,
    pub cfg_mr_state: Signal<In, Bits<2>>,
    pub cfg_mr_variant: Signal<In, Bits<8>>,
    pub cfg_mr_pd: Signal<In, Bits<32>>,
    pub cfg_mr_base_va: Signal<In, Bits<64>>,
    pub cfg_mr_len: Signal<In, Bits<64>>,
    pub cfg_mr_access: Signal<In, Bits<4>>,
    pub cfg_mr_page_shift: Signal<In, Bits<5>>,
    pub cfg_mr_mtt_base: Signal<In, Bits<14>>,
    pub cfg_mtt_write: Signal<In, Bit>,
    pub cfg_mtt_index: Signal<In, Bits<14>>,
    pub cfg_mtt_addr: Signal<In, Bits<64>>,

    pub dma_req_valid: Signal<Out, Bit>,
    pub dma_req_ready: Signal<In, Bit>,
    pub dma_req_tag: Signal<Out, Bits<8>>,
    pub dma_req_addr: Signal<Out, Bits<64>>,
    pub dma_req_len: Signal<Out, Bits<32>>,

    pub dma_rd_valid: Signal<In, Bit>,
    pub dma_rd_ready: Signal<Out, Bit>,
    pub dma_rd_tag: Signal<In, Bits<8>>,
    pub dma_rd_data: Signal<In, Bits<512>>,
    pub dma_rd_last: Signal<In, Bit>,

    pub frame: AxisSource<DATA_BITS, KEEP_BITS>,

    pub status_valid: Signal<Out, Bit>,
    pub status_qpn: Signal<Out, Bits<24>>,
    pub status_error: Signal<Out, Bits<2>>,
    pub status_next_psn: Signal<Out, Bits<24>>,
    pub status_cut: Signal<Out, Bit>,
    pub payload_last_errors: Signal<Out, Bits<16>>,

    segmenter: RequestSegmenter,
    translate: MrTranslateDefault,
    builder: TxBuilder,
    descs: SyncFifo<PacketDesc, 3, 4>,
    infos: SyncFifo<PacketInfo, 3, 4>,
    /// Payload buffer: address {slot, segment, beat}.
    buffer: RAM<Bits<512>, 10>,
    /// Per DMA tag: the buffer beat its next read beat goes to.
    beat_counts: RAM<Bits<6>, 4>,

    /// Grants accepted: their local buffer until their last descriptor is
    /// translated, their addressing until their last packet retires.
    grant_locals: SyncFifo<GrantLocal, 3, 4>,
    grant_frames: SyncFifo<GrantFrame, 3, 4>,
    /// A packet of the retiring grant failed: the rest of it is dropped.
    g_failed: DFF<Bit>,

    // Slots: taken in order at `alloc_slot`, leaving in order at `head_slot`.
    slots_used: DFF<Bits<4>>,
    alloc_slot: DFF<Bits<3>>,
    head_slot: DFF<Bits<3>>,
    /// Per tag: its page segment has all arrived (or there is none).
    tag_done: DFF<Bits<16>>,

    // Translation responses to DMA requests.
    x_len_a: DFF<Bits<13>>,
    x_failed: DFF<Bit>,
    q_valid: DFF<Bit>,
    q_tag: DFF<Bits<8>>,
    q_addr: DFF<Bits<64>>,
    q_len: DFF<Bits<32>>,

    // DMA read data into the buffer.
    clearing: DFF<Bit>,
    clear_index: DFF<Bits<4>>,
    w_valid: DFF<Bit>,
    w_tag: DFF<Bits<4>>,
    w_data: DFF<Bits<512>>,
    w_last: DFF<Bit>,
    /// The beat counter written at the last edge (forwarded: the RAM read
    /// at that edge may not see it).
    f_valid: DFF<Bit>,
    f_tag: DFF<Bits<4>>,
    f_next: DFF<Bits<6>>,

    // Header record to the TX builder.
    h_valid: DFF<Bit>,
    h_record: DFF<TxHeader>,
    ip_id: DFF<Bits<16>>,

    // Payload readout.
    rd_busy: DFF<Bit>,
    rd_issuing: DFF<Bit>,
    rd_slot: DFF<Bits<3>>,
    rd_seg: DFF<Bit>,
    rd_beat: DFF<Bits<6>>,
    rd_last_a: DFF<Bits<6>>,
    rd_last_b: DFF<Bits<6>>,
    rd_has_b: DFF<Bit>,
    rd_tail_a: DFF<Bits<7>>,
    rd_tail_b: DFF<Bits<7>>,
    m_valid: DFF<Bit>,
    m_addr: DFF<Bits<10>>,
    m_bytes: DFF<Bits<7>>,
    m_final: DFF<Bit>,
    acc: DFF<Bits<512>>,
    acc_n: DFF<Bits<7>>,
    flush: DFF<Bit>,
    o_valid: DFF<Bit>,
    o_data: DFF<Bits<512>>,
    o_keep: DFF<Bits<64>>,
    o_last: DFF<Bit>,

    s_valid: DFF<Bit>,
    s_qpn: DFF<Bits<24>>,
    s_error: DFF<Bits<2>>,
    s_next_psn: DFF<Bits<24>>,
    s_cut: DFF<Bit>,

    ones512: Constant<Bits<512>>,
    ones64: Constant<Bits<64>>,
    status_ok: Constant<Bits<3>>,

    grant_take: Signal<Local, Bit>,
    // Translate stage.
    t_is_payload: Signal<Local, Bit>,
    t_is_read: Signal<Local, Bit>,
    t_len: Signal<Local, Bits<32>>,
    t_offset: Signal<Local, Bits<32>>,
    t_va: Signal<Local, Bits<65>>,
    t_check: Signal<Local, Bit>,
    t_dma: Signal<Local, Bit>,
    t_room: Signal<Local, Bit>,
    t_go: Signal<Local, Bit>,
    // Response stage.
    x_slot: Signal<Local, Bits<3>>,
    x_check: Signal<Local, Bit>,
    x_dma_pkt: Signal<Local, Bit>,
    x_overflow: Signal<Local, Bit>,
    x_fail: Signal<Local, Bit>,
    x_seg: Signal<Local, Bit>,
    x_advance: Signal<Local, Bit>,
    x_take: Signal<Local, Bit>,
    x_done_set: Signal<Local, Bits<16>>,
    // Buffer write.
    w_ptr: Signal<Local, Bits<6>>,
    w_next: Signal<Local, Bits<6>>,
    w_done_set: Signal<Local, Bits<16>>,
    // Retire.
    head_done: Signal<Local, Bits<16>>,
    retire: Signal<Local, Bit>,
    drop_pkt: Signal<Local, Bit>,
    free_now: Signal<Local, Bit>,
    free_mask: Signal<Local, Bits<16>>,
    // Readout.
    advance: Signal<Local, Bit>,
    consume: Signal<Local, Bit>,
    issue: Signal<Local, Bit>,
    issue_addr: Signal<Local, Bits<10>>,
    in_masked: Signal<Local, Bits<512>>,
    combined: Signal<Local, Bits<512>>,
    leftover: Signal<Local, Bits<512>>,
    total: Signal<Local, Bits<8>>,
    packet_done: Signal<Local, Bit>,
    slots_freed: Signal<Local, Bits<4>>,
}

impl Default for RequesterDatapath {
    fn default() -> Self {
        RequesterDatapath {
            clock: Default::default(),
            reset: Default::default(),
            grant_valid: Default::default(),
            grant_ready: Default::default(),
            grant_qpn: Default::default(),
            grant_kind: Default::default(),
            grant_len: Default::default(),
            grant_first_psn: Default::default(),
            grant_start_psn: Default::default(),
            grant_mtu: Default::default(),
            grant_dest_qp: Default::default(),
            grant_remote_va: Default::default(),
            grant_rkey: Default::default(),
            grant_imm: Default::default(),
            grant_compare: Default::default(),
            grant_swap_add: Default::default(),
            grant_solicited: Default::default(),
            grant_una: Default::default(),
            grant_window: Default::default(),
            grant_ack_req_interval: Default::default(),
            grant_lkey: Default::default(),
            grant_local_va: Default::default(),
            grant_pd: Default::default(),
            grant_pkey: Default::default(),
            grant_eth_dst: Default::default(),
            grant_eth_src: Default::default(),
            grant_ipv6: Default::default(),
            grant_ip_src: Default::default(),
            grant_ip_dst: Default::default(),
            grant_dscp: Default::default(),
            grant_ecn: Default::default(),
            grant_udp_src_port: Default::default(),
            cfg_ready: Default::default(),
            cfg_mr_write: Default::default(),
            cfg_mr_index: Default::default(),
            cfg_mr_state: Default::default(),
            cfg_mr_variant: Default::default(),
            cfg_mr_pd: Default::default(),
            cfg_mr_base_va: Default::default(),
            cfg_mr_len: Default::default(),
            cfg_mr_access: Default::default(),
            cfg_mr_page_shift: Default::default(),
            cfg_mr_mtt_base: Default::default(),
            cfg_mtt_write: Default::default(),
            cfg_mtt_index: Default::default(),
            cfg_mtt_addr: Default::default(),
            dma_req_valid: Default::default(),
            dma_req_ready: Default::default(),
            dma_req_tag: Default::default(),
            dma_req_addr: Default::default(),
            dma_req_len: Default::default(),
            dma_rd_valid: Default::default(),
            dma_rd_ready: Default::default(),
            dma_rd_tag: Default::default(),
            dma_rd_data: Default::default(),
            dma_rd_last: Default::default(),
            frame: Default::default(),
            status_valid: Default::default(),
            status_qpn: Default::default(),
            status_error: Default::default(),
            status_next_psn: Default::default(),
            status_cut: Default::default(),
            payload_last_errors: Default::default(),
            segmenter: Default::default(),
            translate: Default::default(),
            builder: Default::default(),
            descs: Default::default(),
            infos: Default::default(),
            buffer: Default::default(),
            beat_counts: Default::default(),
            grant_locals: Default::default(),
            grant_frames: Default::default(),
            g_failed: Default::default(),
            slots_used: Default::default(),
            alloc_slot: Default::default(),
            head_slot: Default::default(),
            tag_done: Default::default(),
            x_len_a: Default::default(),
            x_failed: Default::default(),
            q_valid: Default::default(),
            q_tag: Default::default(),
            q_addr: Default::default(),
            q_len: Default::default(),
            clearing: Default::default(),
            clear_index: Default::default(),
            w_valid: Default::default(),
            w_tag: Default::default(),
            w_data: Default::default(),
            w_last: Default::default(),
            f_valid: Default::default(),
            f_tag: Default::default(),
            f_next: Default::default(),
            h_valid: Default::default(),
            h_record: Default::default(),
            ip_id: Default::default(),
            rd_busy: Default::default(),
            rd_issuing: Default::default(),
            rd_slot: Default::default(),
            rd_seg: Default::default(),
            rd_beat: Default::default(),
            rd_last_a: Default::default(),
            rd_last_b: Default::default(),
            rd_has_b: Default::default(),
            rd_tail_a: Default::default(),
            rd_tail_b: Default::default(),
            m_valid: Default::default(),
            m_addr: Default::default(),
            m_bytes: Default::default(),
            m_final: Default::default(),
            acc: Default::default(),
            acc_n: Default::default(),
            flush: Default::default(),
            o_valid: Default::default(),
            o_data: Default::default(),
            o_keep: Default::default(),
            o_last: Default::default(),
            s_valid: Default::default(),
            s_qpn: Default::default(),
            s_error: Default::default(),
            s_next_psn: Default::default(),
            s_cut: Default::default(),
            ones512: Constant::new(!Bits::<512>::default()),
            ones64: Constant::new(!Bits::<64>::default()),
            status_ok: Constant::new(bits::<3>(STATUS_OK)),
            grant_take: Default::default(),
            t_is_payload: Default::default(),
            t_is_read: Default::default(),
            t_len: Default::default(),
            t_offset: Default::default(),
            t_va: Default::default(),
            t_check: Default::default(),
            t_dma: Default::default(),
            t_room: Default::default(),
            t_go: Default::default(),
            x_slot: Default::default(),
            x_check: Default::default(),
            x_dma_pkt: Default::default(),
            x_overflow: Default::default(),
            x_fail: Default::default(),
            x_seg: Default::default(),
            x_advance: Default::default(),
            x_take: Default::default(),
            x_done_set: Default::default(),
            w_ptr: Default::default(),
            w_next: Default::default(),
            w_done_set: Default::default(),
            head_done: Default::default(),
            retire: Default::default(),
            drop_pkt: Default::default(),
            free_now: Default::default(),
            free_mask: Default::default(),
            advance: Default::default(),
            consume: Default::default(),
            issue: Default::default(),
            issue_addr: Default::default(),
            in_masked: Default::default(),
            combined: Default::default(),
            leftover: Default::default(),
            total: Default::default(),
            packet_done: Default::default(),
            slots_freed: Default::default(),
        }
    }
}

impl Logic for RequesterDatapath {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            g_failed,
            slots_used,
            alloc_slot,
            head_slot,
            tag_done,
            x_len_a,
            x_failed,
            q_valid,
            q_tag,
            q_addr,
            q_len,
            clearing,
            clear_index,
            w_valid,
            w_tag,
            w_data,
            w_last,
            f_valid,
            f_tag,
            f_next,
            h_valid,
            h_record,
            ip_id,
            rd_busy,
            rd_issuing,
            rd_slot,
            rd_seg,
            rd_beat,
            rd_last_a,
            rd_last_b,
            rd_has_b,
            rd_tail_a,
            rd_tail_b,
            m_valid,
            m_addr,
            m_bytes,
            m_final,
            acc,
            acc_n,
            flush,
            o_valid,
            o_data,
            o_keep,
            o_last,
            s_valid,
            s_qpn,
            s_error,
            s_next_psn,
            s_cut
        );
        self.segmenter.clock.next = self.clock.val();
        self.translate.clock.next = self.clock.val();
        self.builder.clock.next = self.clock.val();
        self.descs.clock.next = self.clock.val();
        self.infos.clock.next = self.clock.val();
        self.grant_locals.clock.next = self.clock.val();
        self.grant_frames.clock.next = self.clock.val();
        self.buffer.read_clock.next = self.clock.val();
        self.buffer.write_clock.next = self.clock.val();
        self.beat_counts.read_clock.next = self.clock.val();
        self.beat_counts.write_clock.next = self.clock.val();
        self.segmenter.reset.next = self.reset.val();
        self.translate.reset.next = self.reset.val();
        self.builder.reset.next = self.reset.val();
        self.descs.reset.next = self.reset.val();
        self.infos.reset.next = self.reset.val();
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
        self.segmenter.wqe_dest_qp.next = self.grant_dest_qp.val();
        self.segmenter.wqe_remote_va.next = self.grant_remote_va.val();
        self.segmenter.wqe_rkey.next = self.grant_rkey.val();
        self.segmenter.wqe_imm.next = self.grant_imm.val();
        self.segmenter.wqe_compare.next = self.grant_compare.val();
        self.segmenter.wqe_swap_add.next = self.grant_swap_add.val();
        self.segmenter.wqe_solicited.next = self.grant_solicited.val();
        self.segmenter.wqe_una.next = self.grant_una.val();
        self.segmenter.wqe_window.next = self.grant_window.val();
        self.segmenter.wqe_ack_req_interval.next = self.grant_ack_req_interval.val();
        self.grant_locals.write.next = self.grant_take.val();
        self.grant_locals.data_in.next.kind = self.grant_kind.val();
        self.grant_locals.data_in.next.lkey = self.grant_lkey.val();
        self.grant_locals.data_in.next.local_va = self.grant_local_va.val();
        self.grant_locals.data_in.next.pd = self.grant_pd.val();
        self.grant_frames.write.next = self.grant_take.val();
        self.grant_frames.data_in.next.qpn = self.grant_qpn.val();
        self.grant_frames.data_in.next.pkey = self.grant_pkey.val();
        self.grant_frames.data_in.next.eth_dst = self.grant_eth_dst.val();
        self.grant_frames.data_in.next.eth_src = self.grant_eth_src.val();
        self.grant_frames.data_in.next.ipv6 = self.grant_ipv6.val();
        self.grant_frames.data_in.next.ip_src = self.grant_ip_src.val();
        self.grant_frames.data_in.next.ip_dst = self.grant_ip_dst.val();
        self.grant_frames.data_in.next.dscp = self.grant_dscp.val();
        self.grant_frames.data_in.next.ecn = self.grant_ecn.val();
        self.grant_frames.data_in.next.udp_src_port = self.grant_udp_src_port.val();

        // ---- MR configuration passes through
        self.cfg_ready.next = self.translate.cfg_ready.val();
        self.translate.cfg_mr_write.next = self.cfg_mr_write.val();
        self.translate.cfg_mr_index.next = self.cfg_mr_index.val();
        self.translate.cfg_mr_state.next = self.cfg_mr_state.val();
        self.translate.cfg_mr_variant.next = self.cfg_mr_variant.val();
        self.translate.cfg_mr_pd.next = self.cfg_mr_pd.val();
        self.translate.cfg_mr_base_va.next = self.cfg_mr_base_va.val();
        self.translate.cfg_mr_len.next = self.cfg_mr_len.val();
        self.translate.cfg_mr_access.next = self.cfg_mr_access.val();
        self.translate.cfg_mr_page_shift.next = self.cfg_mr_page_shift.val();
        self.translate.cfg_mr_mtt_base.next = self.cfg_mr_mtt_base.val();
        self.translate.cfg_mtt_write.next = self.cfg_mtt_write.val();
        self.translate.cfg_mtt_index.next = self.cfg_mtt_index.val();
        self.translate.cfg_mtt_addr.next = self.cfg_mtt_addr.val();

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
        // A slot free, and the grant's local buffer readable.
        self.t_room.next = (self.slots_used.q.val() < 8) & !self.grant_locals.empty.val();
        self.translate.req_valid.next = self.segmenter.pkt_valid.val() & self.t_room.val();
        self.segmenter.pkt_ready.next = self.t_room.val() & self.translate.req_ready.val();
        self.t_go.next = self.segmenter.pkt_valid.val() & self.segmenter.pkt_ready.val();
        self.translate.req_key.next = self.grant_locals.data_out.val().lkey;
        self.translate.req_va.next = self.t_va.val().get_bits::<64>(0);
        self.translate.req_len.next = 0.into();
        if self.t_check.val() {
            self.translate.req_len.next = self.t_len.val();
        }
        self.translate.req_pd.next = self.grant_locals.data_out.val().pd;
        self.translate.req_access.next = 0.into();
        if !self.t_is_payload.val() {
            self.translate.req_access.next = 1.into(); // LOCAL_WRITE
        }
        self.translate.req_remote.next = false;
        // Tag: slot (2:0), checked (3), DMA (4), VA + offset overflowed (5).
        self.translate.req_tag.next = bit_cast::<16, 3>(self.alloc_slot.q.val());
        if self.t_check.val() {
            self.translate.req_tag.next = bit_cast::<16, 3>(self.alloc_slot.q.val()) | 0x08;
            if self.t_dma.val() {
                self.translate.req_tag.next = bit_cast::<16, 3>(self.alloc_slot.q.val()) | 0x18;
            }
        }
        if self.t_va.val().get_bit(64) {
            // Only a checked range has an offset to overflow with.
            self.translate.req_tag.next = bit_cast::<16, 3>(self.alloc_slot.q.val()) | 0x28;
            if self.t_dma.val() {
                self.translate.req_tag.next = bit_cast::<16, 3>(self.alloc_slot.q.val()) | 0x38;
            }
        }

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
        self.descs.data_in.next.cut = self.segmenter.pkt_cut.val();
        self.descs.data_in.next.next_psn = self.segmenter.pkt_next_psn.val();
        if self.t_go.val() {
            self.alloc_slot.d.next = self.alloc_slot.q.val() + 1;
        }
        self.grant_locals.read.next = self.t_go.val() & self.segmenter.pkt_wqe_end.val();

        // ---- translation responses: a failed check marks the packet; each
        // page segment of a payload becomes a DMA read (tag = slot * 2 +
        // segment); the last beat files the packet's info.
        self.x_slot.next = self.translate.resp_tag.val().get_bits::<3>(0);
        self.x_check.next = self.translate.resp_tag.val().get_bit(3);
        self.x_dma_pkt.next = self.translate.resp_tag.val().get_bit(4);
        self.x_overflow.next = self.translate.resp_tag.val().get_bit(5);
        self.x_fail.next = self.x_check.val()
            & ((self.translate.resp_status.val() != self.status_ok.val()) | self.x_overflow.val());
        self.x_seg.next =
            self.x_dma_pkt.val() & !self.x_fail.val() & self.translate.resp_has_seg.val();
        self.x_advance.next = !self.q_valid.q.val() | self.dma_req_ready.val();
        self.translate.resp_ready.next = self.x_advance.val();
        self.x_take.next = self.translate.resp_valid.val() & self.x_advance.val();
        if self.x_advance.val() {
            self.q_valid.d.next = self.x_take.val() & self.x_seg.val();
            self.q_tag.d.next = bit_cast::<8, 3>(self.x_slot.val()) << 1;
            if !self.translate.resp_first.val() {
                self.q_tag.d.next = (bit_cast::<8, 3>(self.x_slot.val()) << 1) | 1;
            }
            self.q_addr.d.next = self.translate.resp_phys.val();
            self.q_len.d.next = self.translate.resp_len.val();
        }
        self.dma_req_valid.next = self.q_valid.q.val();
        self.dma_req_tag.next = self.q_tag.q.val();
        self.dma_req_addr.next = self.q_addr.q.val();
        self.dma_req_len.next = self.q_len.q.val();

        self.infos.write.next = self.x_take.val() & self.translate.resp_last.val();
        self.infos.data_in.next.failed = self.x_fail.val();
        self.infos.data_in.next.len_a = 0.into();
        self.infos.data_in.next.len_b = 0.into();
        if self.x_seg.val() {
            self.infos.data_in.next.len_a = bit_cast::<13, 32>(self.translate.resp_len.val());
        }
        if !self.translate.resp_first.val() {
            self.infos.data_in.next.failed = self.x_fail.val() | self.x_failed.q.val();
            self.infos.data_in.next.len_a = self.x_len_a.q.val();
            if self.x_seg.val() {
                self.infos.data_in.next.len_b = bit_cast::<13, 32>(self.translate.resp_len.val());
            }
        }
        if self.x_take.val() & self.translate.resp_first.val() {
            self.x_failed.d.next = self.x_fail.val();
            self.x_len_a.d.next = 0.into();
            if self.x_seg.val() {
                self.x_len_a.d.next = bit_cast::<13, 32>(self.translate.resp_len.val());
            }
        } else if self.x_take.val() {
            self.x_failed.d.next = self.x_failed.q.val() | self.x_fail.val();
        }
        // Segments with no DMA read behind them are done at once: both for
        // a packet without one, the second for a single-page payload.
        self.x_done_set.next = 0.into();
        if self.x_take.val() & self.translate.resp_last.val() {
            if !self.x_seg.val() {
                self.x_done_set.next = bits::<16>(3) << (bit_cast::<16, 3>(self.x_slot.val()) << 1);
            } else if self.translate.resp_first.val() {
                self.x_done_set.next = bits::<16>(2) << (bit_cast::<16, 3>(self.x_slot.val()) << 1);
            }
        }

        // ---- DMA read data into the buffer at {tag, beat of the tag}
        self.dma_rd_ready.next = !self.clearing.q.val();
        self.w_valid.d.next = self.dma_rd_valid.val() & !self.clearing.q.val();
        self.w_tag.d.next = self.dma_rd_tag.val().get_bits::<4>(0);
        self.w_data.d.next = self.dma_rd_data.val();
        self.w_last.d.next = self.dma_rd_last.val();
        self.beat_counts.read_address.next = self.dma_rd_tag.val().get_bits::<4>(0);
        self.w_ptr.next = self.beat_counts.read_data.val();
        if self.f_valid.q.val() & (self.f_tag.q.val() == self.w_tag.q.val()) {
            self.w_ptr.next = self.f_next.q.val();
        }
        self.w_next.next = self.w_ptr.val() + 1;
        if self.w_last.q.val() {
            self.w_next.next = 0.into();
        }
        self.buffer.write_enable.next = self.w_valid.q.val();
        self.buffer.write_address.next =
            (bit_cast::<10, 4>(self.w_tag.q.val()) << 6) | bit_cast::<10, 6>(self.w_ptr.val());
        self.buffer.write_data.next = self.w_data.q.val();
        self.beat_counts.write_enable.next = self.w_valid.q.val();
        self.beat_counts.write_address.next = self.w_tag.q.val();
        self.beat_counts.write_data.next = self.w_next.val();
        self.f_valid.d.next = self.w_valid.q.val();
        self.f_tag.d.next = self.w_tag.q.val();
        self.f_next.d.next = self.w_next.val();
        self.w_done_set.next = 0.into();
        if self.w_valid.q.val() & self.w_last.q.val() {
            self.w_done_set.next = bits::<16>(1) << bit_cast::<16, 4>(self.w_tag.q.val());
        }
        if self.clearing.q.val() {
            self.beat_counts.write_enable.next = true;
            self.beat_counts.write_address.next = self.clear_index.q.val();
            self.beat_counts.write_data.next = 0.into();
            self.f_valid.d.next = false;
            self.clear_index.d.next = self.clear_index.q.val() + 1;
            if self.clear_index.q.val() == 15 {
                self.clearing.d.next = false;
            }
        }

        // ---- payload readout: segment A's beats, then B's, realigned
        // behind A's last bytes through an accumulator of 0..63 bytes.
        self.advance.next = !self.o_valid.q.val() | self.builder.payload.tready.val();
        self.consume.next = self.m_valid.q.val() & self.advance.val() & !self.flush.q.val();
        self.issue.next = self.rd_issuing.q.val() & (!self.m_valid.q.val() | self.consume.val());
        self.issue_addr.next = (bit_cast::<10, 3>(self.rd_slot.q.val()) << 7)
            | bit_cast::<10, 6>(self.rd_beat.q.val());
        if self.rd_seg.q.val() {
            self.issue_addr.next = (bit_cast::<10, 3>(self.rd_slot.q.val()) << 7)
                | 0x40
                | bit_cast::<10, 6>(self.rd_beat.q.val());
        }
        self.buffer.read_address.next = self.m_addr.q.val();
        if self.issue.val() {
            self.buffer.read_address.next = self.issue_addr.val();
            self.m_addr.d.next = self.issue_addr.val();
            self.m_valid.d.next = true;
            self.m_bytes.d.next = 64.into();
            self.m_final.d.next = false;
            self.rd_beat.d.next = self.rd_beat.q.val() + 1;
            if !self.rd_seg.q.val() & (self.rd_beat.q.val() == self.rd_last_a.q.val()) {
                self.m_bytes.d.next = self.rd_tail_a.q.val();
                self.rd_seg.d.next = true;
                self.rd_beat.d.next = 0.into();
                if !self.rd_has_b.q.val() {
                    self.m_final.d.next = true;
                    self.rd_issuing.d.next = false;
                }
            }
            if self.rd_seg.q.val() & (self.rd_beat.q.val() == self.rd_last_b.q.val()) {
                self.m_bytes.d.next = self.rd_tail_b.q.val();
                self.m_final.d.next = true;
                self.rd_issuing.d.next = false;
            }
        } else if self.consume.val() {
            self.m_valid.d.next = false;
        }

        self.in_masked.next = self.buffer.read_data.val()
            & (self.ones512.val()
                >> ((bits::<10>(64) - bit_cast::<10, 7>(self.m_bytes.q.val())) << 3));
        self.combined.next = self.acc.q.val()
            | (self.in_masked.val() << (bit_cast::<10, 7>(self.acc_n.q.val()) << 3));
        self.leftover.next = 0.into();
        if self.acc_n.q.val() != 0 {
            self.leftover.next = self.in_masked.val()
                >> ((bits::<10>(64) - bit_cast::<10, 7>(self.acc_n.q.val())) << 3);
        }
        self.total.next =
            bit_cast::<8, 7>(self.acc_n.q.val()) + bit_cast::<8, 7>(self.m_bytes.q.val());
        self.packet_done.next = false;
        if self.advance.val() {
            self.o_valid.d.next = false;
        }
        if self.flush.q.val() & self.advance.val() {
            self.o_valid.d.next = true;
            self.o_data.d.next = self.acc.q.val();
            self.o_keep.d.next =
                self.ones64.val() >> (bits::<7>(64) - bit_cast::<7, 7>(self.acc_n.q.val()));
            self.o_last.d.next = true;
            self.flush.d.next = false;
            self.acc.d.next = 0.into();
            self.acc_n.d.next = 0.into();
            self.packet_done.next = true;
        } else if self.consume.val() {
            if (self.total.val() >= 64) | self.m_final.q.val() {
                self.o_valid.d.next = true;
                self.o_data.d.next = self.combined.val();
                self.o_keep.d.next = self.ones64.val();
                if self.total.val() < 64 {
                    self.o_keep.d.next =
                        self.ones64.val() >> (bits::<7>(64) - bit_cast::<7, 8>(self.total.val()));
                }
                self.o_last.d.next = self.m_final.q.val() & (self.total.val() <= 64);
                self.acc.d.next = self.leftover.val();
                self.acc_n.d.next = bit_cast::<7, 8>(self.total.val() - 64);
                if self.m_final.q.val() {
                    if self.total.val() > 64 {
                        self.flush.d.next = true;
                    } else {
                        self.acc.d.next = 0.into();
                        self.acc_n.d.next = 0.into();
                        self.packet_done.next = true;
                    }
                }
            } else {
                self.acc.d.next = self.combined.val();
                self.acc_n.d.next = bit_cast::<7, 8>(self.total.val());
            }
        }
        self.builder.payload.tvalid.next = self.o_valid.q.val();
        self.builder.payload.tdata.next = self.o_data.q.val();
        self.builder.payload.tkeep.next = self.o_keep.q.val();
        self.builder.payload.tlast.next = self.o_last.q.val();

        // ---- retire: the head packet, once its data is in, sends its
        // header (and starts its readout) or is dropped.
        self.head_done.next =
            self.tag_done.q.val() >> (bit_cast::<16, 3>(self.head_slot.q.val()) << 1);
        self.retire.next = !self.descs.empty.val()
            & !self.infos.empty.val()
            & !self.grant_frames.empty.val()
            & (self.head_done.val().get_bits::<2>(0) == 3)
            & (!self.h_valid.q.val() | self.builder.header.ready.val())
            & (!self.rd_busy.q.val() | self.packet_done.val());
        self.descs.read.next = self.retire.val();
        self.grant_frames.read.next = self.retire.val() & self.descs.data_out.val().wqe_end;
        self.infos.read.next = self.retire.val();
        self.drop_pkt.next = self.g_failed.q.val()
            | self.infos.data_out.val().failed
            | !self.descs.data_out.val().packet;
        self.free_now.next = self.retire.val()
            & (self.drop_pkt.val() | (self.descs.data_out.val().payload_len == 0));
        if self.h_valid.q.val() & self.builder.header.ready.val() {
            self.h_valid.d.next = false;
        }
        self.s_valid.d.next = false;
        if self.packet_done.val() {
            self.rd_busy.d.next = false;
        }
        if self.retire.val() {
            self.head_slot.d.next = self.head_slot.q.val() + 1;
            if self.infos.data_out.val().failed {
                self.g_failed.d.next = true;
            }
            if self.descs.data_out.val().wqe_end {
                self.g_failed.d.next = false;
                self.s_valid.d.next = true;
                self.s_qpn.d.next = self.grant_frames.data_out.val().qpn;
                self.s_error.d.next = 0.into();
                if self.g_failed.q.val() | self.infos.data_out.val().failed {
                    self.s_error.d.next = 1.into();
                }
                self.s_next_psn.d.next = self.descs.data_out.val().next_psn;
                self.s_cut.d.next = self.descs.data_out.val().cut;
            }
            if !self.drop_pkt.val() {
                self.h_valid.d.next = true;
                if !self.grant_frames.data_out.val().ipv6 {
                    self.ip_id.d.next = self.ip_id.q.val() + 1;
                }
                if self.descs.data_out.val().payload_len != 0 {
                    self.rd_busy.d.next = true;
                    self.rd_issuing.d.next = true;
                    self.rd_slot.d.next = self.head_slot.q.val();
                    self.rd_seg.d.next = false;
                    self.rd_beat.d.next = 0.into();
                    self.rd_last_a.d.next =
                        bit_cast::<6, 13>((self.infos.data_out.val().len_a - 1) >> 6);
                    self.rd_tail_a.d.next =
                        bit_cast::<7, 13>(((self.infos.data_out.val().len_a - 1) & 63) + 1);
                    self.rd_has_b.d.next = self.infos.data_out.val().len_b != 0;
                    self.rd_last_b.d.next =
                        bit_cast::<6, 13>((self.infos.data_out.val().len_b - 1) >> 6);
                    self.rd_tail_b.d.next =
                        bit_cast::<7, 13>(((self.infos.data_out.val().len_b - 1) & 63) + 1);
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

        // ---- slots: taken by the translate stage, freed at retire (no
        // payload to read) or when the readout is done.
        self.free_mask.next = 0.into();
        if self.packet_done.val() {
            self.free_mask.next = bits::<16>(3) << (bit_cast::<16, 3>(self.rd_slot.q.val()) << 1);
        } else if self.free_now.val() {
            self.free_mask.next = bits::<16>(3) << (bit_cast::<16, 3>(self.head_slot.q.val()) << 1);
        }
        if self.packet_done.val() & self.free_now.val() {
            // Two slots leave at once: the one read out and the next head.
            self.free_mask.next = (bits::<16>(3) << (bit_cast::<16, 3>(self.rd_slot.q.val()) << 1))
                | (bits::<16>(3) << (bit_cast::<16, 3>(self.head_slot.q.val()) << 1));
        }
        self.tag_done.d.next = (self.tag_done.q.val() & !self.free_mask.val())
            | self.x_done_set.val()
            | self.w_done_set.val();
        // Slots taken minus slots freed this cycle (up to two leave).
        self.slots_freed.next = 0.into();
        if self.packet_done.val() & self.free_now.val() {
            self.slots_freed.next = 2.into();
        } else if self.packet_done.val() | self.free_now.val() {
            self.slots_freed.next = 1.into();
        }
        self.slots_used.d.next = self.slots_used.q.val() - self.slots_freed.val();
        if self.t_go.val() {
            self.slots_used.d.next = self.slots_used.q.val() + 1 - self.slots_freed.val();
        }

        AxisSource::<DATA_BITS, KEEP_BITS>::link(&mut self.frame, &mut self.builder.frame);
        self.payload_last_errors.next = self.builder.payload_last_errors.val();
        self.status_valid.next = self.s_valid.q.val();
        self.status_qpn.next = self.s_qpn.q.val();
        self.status_error.next = self.s_error.q.val();
        self.status_next_psn.next = self.s_next_psn.q.val();
        self.status_cut.next = self.s_cut.q.val();

        if self.reset.val() {
            self.g_failed.d.next = false;
            self.slots_used.d.next = 0.into();
            self.alloc_slot.d.next = 0.into();
            self.head_slot.d.next = 0.into();
            self.tag_done.d.next = 0.into();
            self.q_valid.d.next = false;
            self.clearing.d.next = true;
            self.clear_index.d.next = 0.into();
            self.w_valid.d.next = false;
            self.f_valid.d.next = false;
            self.h_valid.d.next = false;
            self.ip_id.d.next = 0.into();
            self.rd_busy.d.next = false;
            self.rd_issuing.d.next = false;
            self.m_valid.d.next = false;
            self.acc.d.next = 0.into();
            self.acc_n.d.next = 0.into();
            self.flush.d.next = false;
            self.o_valid.d.next = false;
            self.s_valid.d.next = false;
        }
    }
}
