//! `ResponseTransmitter`: the responder's transmit path. A response packet
//! descriptor (what [`crate::response_queue::ResponseQueue`] presents, plus
//! the QP's frame addressing and PD, read by the core from a per-QP table)
//! becomes the response frame the model's responder sends for it: ACK, NAK
//! and RNR NAK (AETH), atomic ACK (AETH + AtomicAckETH), READ RESPONSE
//! FIRST / MIDDLE / LAST / ONLY (AETH where the opcode has one) with its
//! payload read from host memory at transmit time: an [`MrTranslate`]
//! checks the packet's range through the READ's R_Key (REMOTE_READ, the
//! QP's PD) and splits it at page boundaries, one DMA read per page segment
//! fetches it, the tagged (possibly out of order) read data is put back
//! together per packet and realigned to lane 0, and [`TxBuilder`] frames it
//! behind the headers. The oracle is `rocenic_model::responder::next_output`
//! (`response_headers`) and `rocenic_model::tx::frame`: every frame equals
//! what the model NIC sends for the same descriptor.
//!
//! The fetch, reassembly and realignment stages are those of
//! [`crate::requester_datapath`] (same slot/tag scheme, same buffer), written
//! out again here rather than shared: factoring them into one block used by
//! both is still to do.
//!
//! # Ports
//!
//! - `clock`; `reset` (synchronous, high; hold it one cycle): drops
//!   everything in flight, zeroes the IPv4 identification counter and
//!   starts the sweeps of the inner MR table (1024 cycles, `cfg_ready` low)
//!   and of the DMA tag counters (16 cycles, `dma_rd_ready` low).
//! - Descriptor (valid/ready, sampled in the accepting cycle): the
//!   response queue's `opcode`, `psn`, `syndrome`, `msn`, `orig`, `read`,
//!   `va` (READ VA + offset of this packet), `rkey`, `len` (this packet's
//!   payload bytes, 0..=4096) as `desc_*`; which extension headers go out
//!   follows from the opcode, so the queue's `aeth` / `atomic` flags and
//!   `offset` are not inputs. With it the QP's `desc_pd`, `desc_dest_qp`,
//!   `desc_pkey` and frame addressing `desc_eth_dst`, `desc_eth_src`,
//!   `desc_ipv6`, `desc_ip_src`, `desc_ip_dst` (IPv4 in the low 32 bits),
//!   `desc_dscp`, `desc_ecn`, `desc_udp_src_port`. `desc_ecn` is the
//!   codepoint for data frames: READ responses carry it, ACKs, NAKs and
//!   atomic ACKs go out Not-ECT, as the model's `ect` says.
//! - MR configuration: the inner [`MrTranslate`]'s `cfg_*` port as is.
//! - DMA read requests (valid/ready, registered): `dma_req_tag` (0..15:
//!   packet slot * 2 + page segment), `dma_req_addr`, `dma_req_len`. At
//!   most two per packet (a packet is at most 4096 bytes, a page at least
//!   4 KiB), at most 16 in flight.
//! - DMA read data (valid/ready): `dma_rd_tag`, `dma_rd_data` (byte 0 of
//!   a request in lane 0 of its first beat, 64 bytes a beat),
//!   `dma_rd_last`. Beats of one tag in order; tags in any order.
//! - `frame` (AXI-Stream out, 512 bits, full backpressure): the frames, in
//!   descriptor order.
//! - `read_errors` (out, wrapping): READ response packets not sent because
//!   their range no longer translates (see below).
//! - `payload_last_errors`: the TX builder's counter (0 unless broken).
//!
//! # A READ whose MR no longer translates
//!
//! The model copies a READ's data when it executes the READ (after its
//! R_Key check); this block reads host memory when each packet is sent, so
//! the two differ only if the MR was deregistered, re-registered or
//! invalidated in between. Such a packet is not sent (no frame, no stale or
//! unchecked bytes on the wire) and counted in `read_errors`; the later
//! packets of the READ still go if they translate. The requester sees a
//! gap, times out or NAKs by sequence, and retries the READ, which the
//! responder then checks against the current MR table (and NAKs with a
//! remote access error) - the outcome a READ arriving after the
//! deregistration gets.
//!
//! # IPv4 identification
//!
//! A counter of the IPv4 frames this block sent since reset, pre-incremented
//! (the model's per-NIC counter). The model has one counter per NIC shared
//! by requests, responses and CNPs: in the NIC the requester's and this
//! block's frames must take their identification from one shared counter
//! (at the TX arbiter) for the frames to equal the model's; standing alone,
//! as verified here, this block's frames are the only ones counted.
//!
//! # Latency and throughput
//!
//! A descriptor is taken in any cycle with a packet slot free (8 slots of
//! the 1024 x 512-bit payload buffer, 128 beats a slot) and the MR check
//! ready; descriptors without payload take a slot too (freed when their
//! header leaves), so the order is kept by the slots alone. A packet
//! leaves (header to the TX builder, payload read out of the buffer and
//! realigned) once all its data is in, in order; readout is one beat per
//! cycle with about 2 idle cycles between packets. With host reads of
//! latency L cycles READ responses stream at about
//! min(1, 8 x MTU / 64 / (L + 20)) payload beats per cycle. ACK-type
//! frames (1 or 2 beats) are bounded by the TX builder's header rate.
//! Measured: see `sim/tests/rtl_response_transmitter.rs`.

use crate::mr_translate::{MrTranslateDefault, STATUS_OK};
use crate::stream::{AxisSource, DATA_BITS, KEEP_BITS};
use crate::sync_fifo::SyncFifo;
use crate::tx_builder::TxBuilder;
use crate::tx_header::TxHeader;
use rust_hdl::prelude::*;

/// Packet slots of the payload buffer (and packets in flight).
pub const SLOTS: u64 = 8;
/// DMA read tags: two page segments per slot.
pub const DMA_TAGS: u64 = 2 * SLOTS;
/// IPv4 TTL / IPv6 hop limit, as the model sends.
pub const HOP_LIMIT: u64 = 64;
/// `Access::REMOTE_READ`: the right a READ response's range needs.
pub const ACCESS_REMOTE_READ: u64 = 1 << 2;

/// One response packet waiting for its data: what its frame needs.
#[derive(Clone, Copy, Debug, Default, PartialEq, LogicStruct)]
pub struct ResponseDesc {
    pub opcode: Bits<8>,
    pub psn: Bits<24>,
    pub syndrome: Bits<8>,
    pub msn: Bits<24>,
    pub orig: Bits<64>,
    pub payload_len: Bits<13>,
    pub dest_qp: Bits<24>,
    pub pkey: Bits<16>,
    pub eth_dst: Bits<48>,
    pub eth_src: Bits<48>,
    pub ipv6: Bit,
    pub ip_src: Bits<128>,
    pub ip_dst: Bits<128>,
    pub dscp: Bits<6>,
    /// Already Not-ECT for frames without data.
    pub ecn: Bits<2>,
    pub udp_src_port: Bits<16>,
}

/// A packet's range check and where its payload sits in its slot.
#[derive(Clone, Copy, Debug, Default, PartialEq, LogicStruct)]
pub struct PacketInfo {
    pub failed: Bit,
    /// Bytes of the first page segment (region 0 of the slot).
    pub len_a: Bits<13>,
    /// Bytes of the second page segment (region 1), 0 if none.
    pub len_b: Bits<13>,
}
#[derive(LogicBlock)]
pub struct ResponseTransmitter {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,

    pub desc_valid: Signal<In, Bit>,
    pub desc_ready: Signal<Out, Bit>,
    pub desc_opcode: Signal<In, Bits<8>>,
    pub desc_psn: Signal<In, Bits<24>>,
    pub desc_syndrome: Signal<In, Bits<8>>,
    pub desc_msn: Signal<In, Bits<24>>,
    pub desc_orig: Signal<In, Bits<64>>,
    pub desc_read: Signal<In, Bit>,
    pub desc_va: Signal<In, Bits<64>>,
    pub desc_rkey: Signal<In, Bits<32>>,
    pub desc_len: Signal<In, Bits<16>>,
    pub desc_pd: Signal<In, Bits<32>>,
    pub desc_dest_qp: Signal<In, Bits<24>>,
    pub desc_pkey: Signal<In, Bits<16>>,
    pub desc_eth_dst: Signal<In, Bits<48>>,
    pub desc_eth_src: Signal<In, Bits<48>>,
    pub desc_ipv6: Signal<In, Bit>,
    pub desc_ip_src: Signal<In, Bits<128>>,
    pub desc_ip_dst: Signal<In, Bits<128>>,
    pub desc_dscp: Signal<In, Bits<6>>,
    pub desc_ecn: Signal<In, Bits<2>>,
    pub desc_udp_src_port: Signal<In, Bits<16>>,

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

    pub read_errors: Signal<Out, Bits<16>>,
    pub payload_last_errors: Signal<Out, Bits<16>>,

    translate: MrTranslateDefault,
    builder: TxBuilder,
    descs: SyncFifo<ResponseDesc, 3, 4>,
    infos: SyncFifo<PacketInfo, 3, 4>,
    /// Payload buffer: address {slot, segment, beat}.
    buffer: RAM<Bits<512>, 10>,
    /// Per DMA tag: the buffer beat its next read beat goes to.
    beat_counts: RAM<Bits<6>, 4>,

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
    read_error_count: DFF<Bits<16>>,

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

    ones512: Constant<Bits<512>>,
    ones64: Constant<Bits<64>>,
    status_ok: Constant<Bits<3>>,

    // Translate stage.
    t_len: Signal<Local, Bits<13>>,
    t_check: Signal<Local, Bit>,
    t_room: Signal<Local, Bit>,
    t_go: Signal<Local, Bit>,
    // Response stage.
    x_slot: Signal<Local, Bits<3>>,
    x_check: Signal<Local, Bit>,
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

impl Default for ResponseTransmitter {
    fn default() -> Self {
        ResponseTransmitter {
            clock: Default::default(),
            reset: Default::default(),
            desc_valid: Default::default(),
            desc_ready: Default::default(),
            desc_opcode: Default::default(),
            desc_psn: Default::default(),
            desc_syndrome: Default::default(),
            desc_msn: Default::default(),
            desc_orig: Default::default(),
            desc_read: Default::default(),
            desc_va: Default::default(),
            desc_rkey: Default::default(),
            desc_len: Default::default(),
            desc_pd: Default::default(),
            desc_dest_qp: Default::default(),
            desc_pkey: Default::default(),
            desc_eth_dst: Default::default(),
            desc_eth_src: Default::default(),
            desc_ipv6: Default::default(),
            desc_ip_src: Default::default(),
            desc_ip_dst: Default::default(),
            desc_dscp: Default::default(),
            desc_ecn: Default::default(),
            desc_udp_src_port: Default::default(),
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
            read_errors: Default::default(),
            payload_last_errors: Default::default(),
            translate: Default::default(),
            builder: Default::default(),
            descs: Default::default(),
            infos: Default::default(),
            buffer: Default::default(),
            beat_counts: Default::default(),
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
            read_error_count: Default::default(),
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
            ones512: Constant::new(!Bits::<512>::default()),
            ones64: Constant::new(!Bits::<64>::default()),
            status_ok: Constant::new(bits::<3>(STATUS_OK)),
            t_len: Default::default(),
            t_check: Default::default(),
            t_room: Default::default(),
            t_go: Default::default(),
            x_slot: Default::default(),
            x_check: Default::default(),
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

impl Logic for ResponseTransmitter {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
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
            read_error_count,
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
            o_last
        );
        self.translate.clock.next = self.clock.val();
        self.builder.clock.next = self.clock.val();
        self.descs.clock.next = self.clock.val();
        self.infos.clock.next = self.clock.val();
        self.buffer.read_clock.next = self.clock.val();
        self.buffer.write_clock.next = self.clock.val();
        self.beat_counts.read_clock.next = self.clock.val();
        self.beat_counts.write_clock.next = self.clock.val();
        self.translate.reset.next = self.reset.val();
        self.builder.reset.next = self.reset.val();
        self.descs.reset.next = self.reset.val();
        self.infos.reset.next = self.reset.val();

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

        // ---- descriptor: takes a slot and asks for its range check. Only
        // a READ response with bytes is checked (and fetched); every
        // descriptor goes through the translator all the same, so its
        // answers stay one per descriptor, in order.
        self.t_len.next = 0.into();
        if self.desc_read.val() {
            self.t_len.next = self.desc_len.val().get_bits::<13>(0);
        }
        self.t_check.next = self.t_len.val() != 0;
        self.t_room.next = self.slots_used.q.val() < 8;
        self.translate.req_valid.next = self.desc_valid.val() & self.t_room.val();
        self.desc_ready.next = self.t_room.val() & self.translate.req_ready.val();
        self.t_go.next = self.desc_valid.val() & self.desc_ready.val();
        self.translate.req_key.next = self.desc_rkey.val();
        self.translate.req_va.next = self.desc_va.val();
        self.translate.req_len.next = bit_cast::<32, 13>(self.t_len.val());
        self.translate.req_pd.next = self.desc_pd.val();
        self.translate.req_access.next = 4.into(); // ACCESS_REMOTE_READ
        self.translate.req_remote.next = true;
        // Tag: slot (2:0), checked and fetched (3).
        self.translate.req_tag.next = bit_cast::<16, 3>(self.alloc_slot.q.val());
        if self.t_check.val() {
            self.translate.req_tag.next = bit_cast::<16, 3>(self.alloc_slot.q.val()) | 0x08;
        }

        self.descs.write.next = self.t_go.val();
        self.descs.data_in.next.opcode = self.desc_opcode.val();
        self.descs.data_in.next.psn = self.desc_psn.val();
        self.descs.data_in.next.syndrome = self.desc_syndrome.val();
        self.descs.data_in.next.msn = self.desc_msn.val();
        self.descs.data_in.next.orig = self.desc_orig.val();
        self.descs.data_in.next.payload_len = self.t_len.val();
        self.descs.data_in.next.dest_qp = self.desc_dest_qp.val();
        self.descs.data_in.next.pkey = self.desc_pkey.val();
        self.descs.data_in.next.eth_dst = self.desc_eth_dst.val();
        self.descs.data_in.next.eth_src = self.desc_eth_src.val();
        self.descs.data_in.next.ipv6 = self.desc_ipv6.val();
        self.descs.data_in.next.ip_src = self.desc_ip_src.val();
        self.descs.data_in.next.ip_dst = self.desc_ip_dst.val();
        self.descs.data_in.next.dscp = self.desc_dscp.val();
        self.descs.data_in.next.ecn = 0.into();
        if self.desc_read.val() {
            self.descs.data_in.next.ecn = self.desc_ecn.val();
        }
        self.descs.data_in.next.udp_src_port = self.desc_udp_src_port.val();
        if self.t_go.val() {
            self.alloc_slot.d.next = self.alloc_slot.q.val() + 1;
        }

        // ---- translation responses: a failed check marks the packet; each
        // page segment of a payload becomes a DMA read (tag = slot * 2 +
        // segment); the last beat files the packet's info.
        self.x_slot.next = self.translate.resp_tag.val().get_bits::<3>(0);
        self.x_check.next = self.translate.resp_tag.val().get_bit(3);
        self.x_fail.next =
            self.x_check.val() & (self.translate.resp_status.val() != self.status_ok.val());
        self.x_seg.next =
            self.x_check.val() & !self.x_fail.val() & self.translate.resp_has_seg.val();
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
        // header (and starts its readout), or is dropped if its range
        // failed the check.
        self.head_done.next =
            self.tag_done.q.val() >> (bit_cast::<16, 3>(self.head_slot.q.val()) << 1);
        self.retire.next = !self.descs.empty.val()
            & !self.infos.empty.val()
            & (self.head_done.val().get_bits::<2>(0) == 3)
            & (!self.h_valid.q.val() | self.builder.header.ready.val())
            & (!self.rd_busy.q.val() | self.packet_done.val());
        self.descs.read.next = self.retire.val();
        self.infos.read.next = self.retire.val();
        self.drop_pkt.next = self.infos.data_out.val().failed;
        self.free_now.next = self.retire.val()
            & (self.drop_pkt.val() | (self.descs.data_out.val().payload_len == 0));
        if self.h_valid.q.val() & self.builder.header.ready.val() {
            self.h_valid.d.next = false;
        }
        if self.packet_done.val() {
            self.rd_busy.d.next = false;
        }
        if self.retire.val() {
            self.head_slot.d.next = self.head_slot.q.val() + 1;
            if self.drop_pkt.val() {
                self.read_error_count.d.next = self.read_error_count.q.val() + 1;
            } else {
                self.h_valid.d.next = true;
                if !self.descs.data_out.val().ipv6 {
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
        self.h_record.d.next.eth_dst = self.descs.data_out.val().eth_dst;
        self.h_record.d.next.eth_src = self.descs.data_out.val().eth_src;
        self.h_record.d.next.ipv6 = self.descs.data_out.val().ipv6;
        self.h_record.d.next.ip_src = self.descs.data_out.val().ip_src;
        self.h_record.d.next.ip_dst = self.descs.data_out.val().ip_dst;
        self.h_record.d.next.dscp = self.descs.data_out.val().dscp;
        self.h_record.d.next.ecn = self.descs.data_out.val().ecn;
        self.h_record.d.next.ipv4_identification = self.ip_id.q.val() + 1;
        self.h_record.d.next.ipv4_dont_fragment = !self.descs.data_out.val().ipv6;
        self.h_record.d.next.ttl = 64.into(); // HOP_LIMIT
        self.h_record.d.next.ipv6_flow_label = 0.into();
        self.h_record.d.next.udp_src_port = self.descs.data_out.val().udp_src_port;
        self.h_record.d.next.udp_checksum = false;
        self.h_record.d.next.opcode = self.descs.data_out.val().opcode;
        self.h_record.d.next.solicited = false;
        self.h_record.d.next.mig_req = false;
        self.h_record.d.next.tver = 0.into();
        self.h_record.d.next.pkey = self.descs.data_out.val().pkey;
        self.h_record.d.next.fecn = false;
        self.h_record.d.next.becn = false;
        self.h_record.d.next.dest_qp = self.descs.data_out.val().dest_qp;
        self.h_record.d.next.ack_req = false;
        self.h_record.d.next.psn = self.descs.data_out.val().psn;
        self.h_record.d.next.deth_qkey = 0.into();
        self.h_record.d.next.deth_src_qp = 0.into();
        self.h_record.d.next.reth_va = 0.into();
        self.h_record.d.next.reth_rkey = 0.into();
        self.h_record.d.next.reth_dma_len = 0.into();
        self.h_record.d.next.atomic_va = 0.into();
        self.h_record.d.next.atomic_rkey = 0.into();
        self.h_record.d.next.atomic_swap_add = 0.into();
        self.h_record.d.next.atomic_compare = 0.into();
        self.h_record.d.next.aeth_syndrome = self.descs.data_out.val().syndrome;
        self.h_record.d.next.aeth_msn = self.descs.data_out.val().msn;
        self.h_record.d.next.atomic_ack_orig = self.descs.data_out.val().orig;
        self.h_record.d.next.imm = 0.into();
        self.h_record.d.next.ieth_rkey = 0.into();
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
        self.read_errors.next = self.read_error_count.q.val();

        if self.reset.val() {
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
            self.read_error_count.d.next = 0.into();
            self.rd_busy.d.next = false;
            self.rd_issuing.d.next = false;
            self.m_valid.d.next = false;
            self.acc.d.next = 0.into();
            self.acc_n.d.next = 0.into();
            self.flush.d.next = false;
            self.o_valid.d.next = false;
        }
    }
}
