//! `ResponseTransmitter`: the responder's transmit path. A response packet
//! descriptor (what [`crate::responder::response_queue::ResponseQueue`] presents, plus
//! the QP's frame addressing and PD, read by the core from a per-QP table)
//! becomes the response frame the model's responder sends for it: ACK, NAK
//! and RNR NAK (AETH), atomic ACK (AETH + AtomicAckETH), READ RESPONSE
//! FIRST / MIDDLE / LAST / ONLY (AETH where the opcode has one) with its
//! payload read from host memory at transmit time: an [`MrTranslate`](crate::dma::mr_translate::MrTranslate)
//! (inside a [`PayloadFetch`]) checks the packet's range through the READ's R_Key (REMOTE_READ, the
//! QP's PD) and splits it at page boundaries, one DMA read per page segment
//! fetches it, the tagged (possibly out of order) read data is put back
//! together per packet and realigned to lane 0, and [`TxBuilder`] frames it
//! behind the headers. The oracle is `rocenic_model::responder::next_output`
//! (`response_headers`) and `rocenic_model::tx::frame`: every frame equals
//! what the model NIC sends for the same descriptor.
//!
//! The fetch, reassembly and realignment are a [`PayloadFetch`], the same
//! block the requester's transmit path uses.
//!
//! # Ports
//!
//! - `clock`; `reset` (synchronous, high; hold it one cycle): drops
//!   everything in flight, zeroes the IPv4 identification counter and
//!   starts the sweeps of the inner MR table (1024 cycles, `cfg.ready` low)
//!   and of the DMA tag counters (16 cycles, `dma.rd_ready` low).
//! - Descriptor (valid/ready, sampled in the accepting cycle): the
//!   response queue's `opcode`, `psn`, `syndrome`, `msn`, `orig`, `read`,
//!   `va` (READ VA + offset of this packet), `rkey`, `len` (this packet's
//!   payload bytes, 0..=4096) as `desc_*`; which extension headers go out
//!   follows from the opcode, so the queue's `aeth` / `atomic` flags and
//!   `offset` are not inputs. With it `desc_address`
//!   ([`QpAddress`], one port packed in field order, as
//!   [`QpAddressRam`](crate::qp::qp_address_ram::QpAddressRam) reads it out):
//!   the QP's PD, destination QP, P_Key and frame addressing. Its `ecn`
//!   is the codepoint for data frames: READ responses carry it, ACKs,
//!   NAKs and atomic ACKs go out Not-ECT, as the model's `ect` says.
//! - `cfg`: the inner [`MrTranslate`](crate::dma::mr_translate::MrTranslate)'s configuration port
//!   ([`MrConfigPort`](crate::dma::mr_translate::MrConfigPort)), linked through.
//! - `dma` ([`DmaReadPort`]): [`PayloadFetch`]'s, linked through (tags
//!   0..15, at most two reads per packet, 16 in flight).
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
//! A counter of the IPv4 frames this block sent since reset, pre-incremented:
//! the model NIC's counter for response frames. The model numbers requests,
//! responses and CNPs with one counter each (`TxClass::ip_id_counter`;
//! every RoCEv2 frame has DF set, and RFC 6864 lets such a frame carry any
//! identification), so each frame builder of the NIC keeps its own and the
//! frames still equal the model's whatever order the TX arbiter picks.
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
//! frames (1 or 2 beats) are bounded by the TX builder's header rate: one
//! ACK frame per cycle over IPv4, one per 2 cycles over IPv6 (two beats,
//! held for the UDP checksum). An MTU-4096 READ response is 65 frame beats
//! per 64 payload beats.

use crate::dma::dma_port::DmaReadPort;
use crate::dma::mr_translate::MrConfigPortDefault;
use crate::dma::payload_fetch::PayloadFetch;
use crate::frame::tx::tx_builder::TxBuilder;
use crate::frame::tx::tx_header::TxHeader;
use crate::primitives::stream::{AxisSource, DATA_BITS, KEEP_BITS};
use crate::primitives::sync_fifo::SyncFifo;
use crate::qp::qp_address_ram::QpAddress;
use rust_hdl::prelude::*;

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

#[derive(LogicBlock, Default)]
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
    /// The QP's PD and frame addressing, as the address RAM holds them.
    pub desc_address: Signal<In, QpAddress>,

    pub cfg: MrConfigPortDefault,

    pub dma: DmaReadPort,

    pub frame: AxisSource<DATA_BITS, KEEP_BITS>,

    pub read_errors: Signal<Out, Bits<16>>,
    pub payload_last_errors: Signal<Out, Bits<16>>,

    fetch: PayloadFetch,
    builder: TxBuilder,
    /// Descriptors in the fetch's slots, in order (8 at most).
    descs: SyncFifo<ResponseDesc, 3, 4>,

    // Header record to the TX builder.
    h_valid: DFF<Bit>,
    h_record: DFF<TxHeader>,
    ip_id: DFF<Bits<16>>,
    read_error_count: DFF<Bits<16>>,

    t_len: Signal<Local, Bits<13>>,
    t_go: Signal<Local, Bit>,
    retire: Signal<Local, Bit>,
}

impl Logic for ResponseTransmitter {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, h_valid, h_record, ip_id, read_error_count);
        self.fetch.clock.next = self.clock.val();
        self.builder.clock.next = self.clock.val();
        self.descs.clock.next = self.clock.val();
        self.fetch.reset.next = self.reset.val();
        self.builder.reset.next = self.reset.val();
        self.descs.reset.next = self.reset.val();

        // ---- MR configuration and DMA pass through to the fetch
        MrConfigPortDefault::link(&mut self.cfg, &mut self.fetch.cfg);
        DmaReadPort::link(&mut self.dma, &mut self.fetch.dma);

        // ---- descriptor: its range to the fetch (only a READ response
        // with bytes is checked and fetched: REMOTE_READ through the R_Key
        // in the QP's PD), the rest of it queued for its frame.
        self.t_len.next = 0.into();
        if self.desc_read.val() {
            self.t_len.next = self.desc_len.val().get_bits::<13>(0);
        }
        self.fetch.req_valid.next = self.desc_valid.val();
        self.desc_ready.next = self.fetch.req_ready.val();
        self.t_go.next = self.desc_valid.val() & self.fetch.req_ready.val();
        self.fetch.req_key.next = self.desc_rkey.val();
        self.fetch.req_va.next = self.desc_va.val();
        self.fetch.req_len.next = bit_cast::<32, 13>(self.t_len.val());
        self.fetch.req_pd.next = self.desc_address.val().pd;
        self.fetch.req_access.next = 4.into(); // ACCESS_REMOTE_READ
        self.fetch.req_remote.next = true;
        self.fetch.req_check.next = self.t_len.val() != 0;
        self.fetch.req_fetch.next = true;
        self.fetch.req_fail.next = false;

        self.descs.write.next = self.t_go.val();
        self.descs.data_in.next.opcode = self.desc_opcode.val();
        self.descs.data_in.next.psn = self.desc_psn.val();
        self.descs.data_in.next.syndrome = self.desc_syndrome.val();
        self.descs.data_in.next.msn = self.desc_msn.val();
        self.descs.data_in.next.orig = self.desc_orig.val();
        self.descs.data_in.next.payload_len = self.t_len.val();
        self.descs.data_in.next.dest_qp = self.desc_address.val().dest_qp;
        self.descs.data_in.next.pkey = self.desc_address.val().pkey;
        self.descs.data_in.next.eth_dst = self.desc_address.val().eth_dst;
        self.descs.data_in.next.eth_src = self.desc_address.val().eth_src;
        self.descs.data_in.next.ipv6 = self.desc_address.val().ipv6;
        self.descs.data_in.next.ip_src = self.desc_address.val().ip_src;
        self.descs.data_in.next.ip_dst = self.desc_address.val().ip_dst;
        self.descs.data_in.next.dscp = self.desc_address.val().dscp;
        self.descs.data_in.next.ecn = 0.into();
        if self.desc_read.val() {
            self.descs.data_in.next.ecn = self.desc_address.val().ecn;
        }
        self.descs.data_in.next.udp_src_port = self.desc_address.val().udp_src_port;

        // ---- retire: the head packet, once its data is in, sends its
        // header (its payload follows from the fetch), or is dropped if
        // its range failed the check.
        self.retire.next = !self.descs.empty.val()
            & self.fetch.head_valid.val()
            & (!self.h_valid.q.val() | self.builder.header.ready.val());
        self.descs.read.next = self.retire.val();
        self.fetch.head_take.next = self.retire.val();
        self.fetch.head_send.next = !self.fetch.head_failed.val();
        if self.h_valid.q.val() & self.builder.header.ready.val() {
            self.h_valid.d.next = false;
        }
        if self.retire.val() {
            if self.fetch.head_failed.val() {
                self.read_error_count.d.next = self.read_error_count.q.val() + 1;
            } else {
                self.h_valid.d.next = true;
                if !self.descs.data_out.val().ipv6 {
                    self.ip_id.d.next = self.ip_id.q.val() + 1;
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

        AxisSource::<DATA_BITS, KEEP_BITS>::link(&mut self.frame, &mut self.builder.frame);
        AxisSource::<DATA_BITS, KEEP_BITS>::join(
            &mut self.fetch.payload,
            &mut self.builder.payload,
        );
        self.payload_last_errors.next = self.builder.payload_last_errors.val();
        self.read_errors.next = self.read_error_count.q.val();

        if self.reset.val() {
            self.h_valid.d.next = false;
            self.ip_id.d.next = 0.into();
            self.read_error_count.d.next = 0.into();
        }
    }
}
