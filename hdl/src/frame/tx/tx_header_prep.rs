//! `TxHeaderPrep`: turns a TX header record into a frame job: the header
//! bytes in lane order (Ethernet II / IPv4 with its checksum or IPv6 / UDP to
//! port 4791 with its length / BTH with PadCnt / the extension headers the
//! opcode names), and the counts the frame merger steers by.
//!
//! Ports: `clock`, `reset` (synchronous, high: drops records in flight);
//! `header` (record handshake in, [`TxHeaderSink`]); `job` and `job_valid`
//! (out), `job_ready` (in): one [`TxJob`] per record, moving when
//! `job_valid && job_ready`.
//!
//! Latency: 3 cycles from a record moving in to its job being offered (input
//! register, length stage, header stage). Throughput: one record per cycle;
//! each stage holds one record and passes it on when the next is free, so a
//! stall of `job_ready` backs up through `header.ready` without losing or
//! repeating records.
//!
//! A record the codec would refuse (`rocenic_wire::EncodeError`: an opcode
//! RoCEv2 does not use, a payload on an opcode that carries none, a payload
//! over 4096 bytes) becomes a job with `drop` set: the merger swallows its
//! payload beats and sends nothing.

use crate::codes::opcode_headers::OpcodeHeaders;
use crate::frame::tx::tx_header::{TxHeader, TxHeaderSink};
use crate::primitives::byte_reverse::ByteReverse;
use rust_hdl::prelude::*;

/// Everything the frame merger needs about one frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, LogicStruct)]
pub struct TxJob {
    /// Header bytes in lane order (byte `k` in bits `8k+7:8k`), zero past
    /// the header.
    pub header_lanes: Bits<1024>,
    /// Header length H in bytes, 54..=102: H ≥ 64 fills a first beat; the
    /// payload starts in lane `H mod 64`.
    pub header_len: Bits<7>,
    /// Beats the payload stream carries for this frame: ceil(len / 64).
    pub payload_beats: Bits<8>,
    /// Bytes in the last payload beat, mod 64 (0: a full beat).
    pub payload_last_bytes: Bits<6>,
    /// Beats of the frame up to and including the pad (the ICRC is added
    /// later): ceil(E / 64) with E = H + len + pad.
    pub frame_beats: Bits<7>,
    /// E mod 64 (0: the last beat is full).
    pub frame_last_bytes: Bits<6>,
    /// The codec would refuse this record: swallow its payload, send nothing.
    pub drop: Bit,
    pub ipv6: Bit,
    /// The frame needs a UDP checksum (always on IPv6).
    pub udp_checksum: Bit,
}

#[derive(LogicBlock, Default)]
pub struct TxHeaderPrep {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub header: TxHeaderSink,
    pub job: Signal<Out, TxJob>,
    pub job_valid: Signal<Out, Bit>,
    pub job_ready: Signal<In, Bit>,
    opcode_table: OpcodeHeaders,
    reverse: ByteReverse<1024>,
    // Input register.
    in_record: DFF<TxHeader>,
    in_valid: DFF<Bit>,
    // Length stage.
    len_record: DFF<TxHeader>,
    len_valid: DFF<Bit>,
    len_headers: DFF<Bits<8>>,
    len_pad: DFF<Bits<2>>,
    len_udp: DFF<Bits<16>>,
    len_header_len: DFF<Bits<7>>,
    len_frame: DFF<Bits<13>>,
    len_drop: DFF<Bit>,
    /// Ones'-complement sum of the IPv4 header words, checksum excluded.
    len_ipv4_sum: DFF<Bits<20>>,
    // Header stage: the job.
    job_q: DFF<TxJob>,
    job_valid_q: DFF<Bit>,
    // Combinational intermediates.
    in_free: Signal<Local, Bit>,
    len_free: Signal<Local, Bit>,
    job_free: Signal<Local, Bit>,
    payload_len: Signal<Local, Bits<13>>,
    pad: Signal<Local, Bits<2>>,
    padded_len: Signal<Local, Bits<14>>,
    headers_len: Signal<Local, Bits<14>>,
    udp_len: Signal<Local, Bits<14>>,
    ip_len: Signal<Local, Bits<7>>,
    header_len: Signal<Local, Bits<7>>,
    sum_pair_a: Signal<Local, Bits<20>>,
    sum_pair_b: Signal<Local, Bits<20>>,
    sum_pair_c: Signal<Local, Bits<20>>,
    sum_pair_d: Signal<Local, Bits<20>>,
    sum_fold_1: Signal<Local, Bits<20>>,
    sum_fold_2: Signal<Local, Bits<17>>,
    ipv4_checksum: Signal<Local, Bits<16>>,
    eth_be: Signal<Local, Bits<112>>,
    ipv4_be: Signal<Local, Bits<160>>,
    ipv6_be: Signal<Local, Bits<320>>,
    bth_be: Signal<Local, Bits<96>>,
    ext_be: Signal<Local, Bits<224>>,
    transport_be: Signal<Local, Bits<384>>,
    header_be: Signal<Local, Bits<1024>>,
    frame_len: Signal<Local, Bits<13>>,
    job_next: Signal<Local, TxJob>,
}

impl Logic for TxHeaderPrep {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            in_record,
            in_valid,
            len_record,
            len_valid,
            len_headers,
            len_pad,
            len_udp,
            len_header_len,
            len_frame,
            len_drop,
            len_ipv4_sum,
            job_q,
            job_valid_q
        );
        // Each stage takes a new record when it is empty or its record
        // moves on this edge.
        self.job_free.next = !self.job_valid_q.q.val() | self.job_ready.val();
        self.len_free.next = !self.len_valid.q.val() | self.job_free.val();
        self.in_free.next = !self.in_valid.q.val() | self.len_free.val();
        self.header.ready.next = self.in_free.val();
        self.job.next = self.job_q.q.val();
        self.job_valid.next = self.job_valid_q.q.val();

        // ---- input register
        if self.in_free.val() {
            self.in_record.d.next = self.header.record.val();
            self.in_valid.d.next = self.header.valid.val();
        }

        // ---- length stage, from the input register
        self.opcode_table.opcode.next = self.in_record.q.val().opcode;
        self.payload_len.next = self.in_record.q.val().payload_len;
        // PadCnt = (-len) & 3.
        self.pad.next = bit_cast::<2, 13>(bits::<13>(0) - self.payload_len.val());
        self.padded_len.next =
            bit_cast::<14, 13>(self.payload_len.val()) + bit_cast::<14, 2>(self.pad.val());
        self.headers_len.next = bit_cast::<14, 5>(self.opcode_table.headers_len.val());
        // UDP length: UDP header and BTH (20), extension headers, payload, pad,
        // ICRC (4). rust-hdl's HDL subset takes literals, not named constants.
        self.udp_len.next = bits::<14>(24) + self.headers_len.val() + self.padded_len.val();
        if self.in_record.q.val().ipv6 {
            self.ip_len.next = bits::<7>(40);
        } else {
            self.ip_len.next = bits::<7>(20);
        }
        // Ethernet (14), IP, UDP and BTH (20), extension headers.
        self.header_len.next = bits::<7>(34)
            + self.ip_len.val()
            + bit_cast::<7, 5>(self.opcode_table.headers_len.val());
        // The IPv4 header words other than the checksum, in four pairs plus
        // the total length. Version/IHL = 0x45; protocol 17 (UDP).
        self.sum_pair_a.next = bits::<20>(0x4500)
            + (bit_cast::<20, 6>(self.in_record.q.val().dscp) << 2)
            + bit_cast::<20, 2>(self.in_record.q.val().ecn)
            + bit_cast::<20, 16>(self.in_record.q.val().ipv4_identification);
        self.sum_pair_b.next = (bit_cast::<20, 8>(self.in_record.q.val().ttl) << 8) + 17;
        if self.in_record.q.val().ipv4_dont_fragment {
            self.sum_pair_b.next = self.sum_pair_b.val() + 0x4000;
        }
        // Verilog cannot part-select a part-select, so struct fields are cut
        // with shifts and casts rather than `get_bits`.
        self.sum_pair_c.next = bit_cast::<20, 128>((self.in_record.q.val().ip_src >> 16) & 0xFFFF)
            + bit_cast::<20, 128>(self.in_record.q.val().ip_src & 0xFFFF);
        self.sum_pair_d.next = bit_cast::<20, 128>((self.in_record.q.val().ip_dst >> 16) & 0xFFFF)
            + bit_cast::<20, 128>(self.in_record.q.val().ip_dst & 0xFFFF);
        if self.len_free.val() {
            self.len_record.d.next = self.in_record.q.val();
            self.len_valid.d.next = self.in_valid.q.val();
            self.len_headers.d.next = self.opcode_table.headers.val();
            self.len_pad.d.next = self.pad.val();
            self.len_udp.d.next = bit_cast::<16, 14>(self.udp_len.val());
            self.len_header_len.d.next = self.header_len.val();
            self.len_frame.d.next = bit_cast::<13, 7>(self.header_len.val())
                + bit_cast::<13, 14>(self.padded_len.val());
            // What `RoceFrame::encode` refuses.
            self.len_drop.d.next = !self.opcode_table.known.val()
                | (!self.opcode_table.has_payload.val() & self.payload_len.val().any())
                | (self.payload_len.val() > bits::<13>(4096));
            // Total length = IPv4 header + UDP length.
            self.len_ipv4_sum.d.next = (self.sum_pair_a.val() + self.sum_pair_b.val())
                + (self.sum_pair_c.val() + self.sum_pair_d.val())
                + bit_cast::<20, 14>(self.udp_len.val())
                + bits::<20>(20);
        }

        // ---- header stage, from the length stage
        // Fold the carries back in twice (RFC 1071); the second fold cannot
        // carry again.
        self.sum_fold_1.next = bit_cast::<20, 16>(self.len_ipv4_sum.q.val().get_bits::<16>(0))
            + bit_cast::<20, 4>(self.len_ipv4_sum.q.val().get_bits::<4>(16));
        self.sum_fold_2.next = bit_cast::<17, 16>(self.sum_fold_1.val().get_bits::<16>(0))
            + bit_cast::<17, 4>(self.sum_fold_1.val().get_bits::<4>(16));
        self.ipv4_checksum.next = !self.sum_fold_2.val().get_bits::<16>(0);

        self.eth_be.next = (bit_cast::<112, 48>(self.len_record.q.val().eth_dst) << 64)
            | (bit_cast::<112, 48>(self.len_record.q.val().eth_src) << 16);
        if self.len_record.q.val().ipv6 {
            self.eth_be.next = self.eth_be.val() | bits::<112>(0x86DD);
        } else {
            self.eth_be.next = self.eth_be.val() | bits::<112>(0x0800);
        }
        self.ipv4_be.next = (bits::<160>(0x45) << 152)
            | (bit_cast::<160, 6>(self.len_record.q.val().dscp) << 146)
            | (bit_cast::<160, 2>(self.len_record.q.val().ecn) << 144)
            | (bit_cast::<160, 16>(self.len_udp.q.val() + bits::<16>(20)) << 128)
            | (bit_cast::<160, 16>(self.len_record.q.val().ipv4_identification) << 112)
            | (bit_cast::<160, 1>(self.len_record.q.val().ipv4_dont_fragment.into()) << 110)
            | (bit_cast::<160, 8>(self.len_record.q.val().ttl) << 88)
            | (bits::<160>(17) << 80)
            | (bit_cast::<160, 16>(self.ipv4_checksum.val()) << 64)
            | (bit_cast::<160, 32>(bit_cast::<32, 128>(self.len_record.q.val().ip_src)) << 32)
            | bit_cast::<160, 32>(bit_cast::<32, 128>(self.len_record.q.val().ip_dst));
        self.ipv6_be.next = (bits::<320>(6) << 316)
            | (bit_cast::<320, 6>(self.len_record.q.val().dscp) << 310)
            | (bit_cast::<320, 2>(self.len_record.q.val().ecn) << 308)
            | (bit_cast::<320, 20>(self.len_record.q.val().ipv6_flow_label) << 288)
            | (bit_cast::<320, 16>(self.len_udp.q.val()) << 272)
            | (bits::<320>(17) << 264)
            | (bit_cast::<320, 8>(self.len_record.q.val().ttl) << 256)
            | (bit_cast::<320, 128>(self.len_record.q.val().ip_src) << 128)
            | bit_cast::<320, 128>(self.len_record.q.val().ip_dst);
        self.bth_be.next = (bit_cast::<96, 8>(self.len_record.q.val().opcode) << 88)
            | (bit_cast::<96, 1>(self.len_record.q.val().solicited.into()) << 87)
            | (bit_cast::<96, 1>(self.len_record.q.val().mig_req.into()) << 86)
            | (bit_cast::<96, 2>(self.len_pad.q.val()) << 84)
            | (bit_cast::<96, 4>(self.len_record.q.val().tver) << 80)
            | (bit_cast::<96, 16>(self.len_record.q.val().pkey) << 64)
            | (bit_cast::<96, 1>(self.len_record.q.val().fecn.into()) << 63)
            | (bit_cast::<96, 1>(self.len_record.q.val().becn.into()) << 62)
            | (bit_cast::<96, 24>(self.len_record.q.val().dest_qp) << 32)
            | (bit_cast::<96, 1>(self.len_record.q.val().ack_req.into()) << 31)
            | bit_cast::<96, 24>(self.len_record.q.val().psn);
        // Extension headers in wire order (DETH, RETH, AtomicETH, AETH,
        // AtomicAckETH, ImmDt, IETH); the table never names two that would
        // start at the same byte, so ORing them in place is exact. A CNP's
        // 16 reserved bytes are zero.
        self.ext_be.next = bits::<224>(0);
        if self.len_headers.q.val().get_bit(6) {
            self.ext_be.next = self.ext_be.val()
                | (bit_cast::<224, 32>(self.len_record.q.val().deth_qkey) << 192)
                | (bit_cast::<224, 24>(self.len_record.q.val().deth_src_qp) << 160);
        }
        if self.len_headers.q.val().get_bit(0) {
            self.ext_be.next = self.ext_be.val()
                | (bit_cast::<224, 64>(self.len_record.q.val().reth_va) << 160)
                | (bit_cast::<224, 32>(self.len_record.q.val().reth_rkey) << 128)
                | (bit_cast::<224, 32>(self.len_record.q.val().reth_dma_len) << 96);
        }
        if self.len_headers.q.val().get_bit(2) {
            self.ext_be.next = self.ext_be.val()
                | (bit_cast::<224, 64>(self.len_record.q.val().atomic_va) << 160)
                | (bit_cast::<224, 32>(self.len_record.q.val().atomic_rkey) << 128)
                | (bit_cast::<224, 64>(self.len_record.q.val().atomic_swap_add) << 64)
                | bit_cast::<224, 64>(self.len_record.q.val().atomic_compare);
        }
        if self.len_headers.q.val().get_bit(1) {
            self.ext_be.next = self.ext_be.val()
                | (bit_cast::<224, 8>(self.len_record.q.val().aeth_syndrome) << 216)
                | (bit_cast::<224, 24>(self.len_record.q.val().aeth_msn) << 192);
        }
        if self.len_headers.q.val().get_bit(3) {
            self.ext_be.next = self.ext_be.val()
                | (bit_cast::<224, 64>(self.len_record.q.val().atomic_ack_orig) << 128);
        }
        // ImmDt follows RETH (byte 16), DETH (byte 8) or the BTH (byte 0).
        if self.len_headers.q.val().get_bit(4) {
            if self.len_headers.q.val().get_bit(0) {
                self.ext_be.next =
                    self.ext_be.val() | (bit_cast::<224, 32>(self.len_record.q.val().imm) << 64);
            } else if self.len_headers.q.val().get_bit(6) {
                self.ext_be.next =
                    self.ext_be.val() | (bit_cast::<224, 32>(self.len_record.q.val().imm) << 128);
            } else {
                self.ext_be.next =
                    self.ext_be.val() | (bit_cast::<224, 32>(self.len_record.q.val().imm) << 192);
            }
        }
        if self.len_headers.q.val().get_bit(5) {
            self.ext_be.next =
                self.ext_be.val() | (bit_cast::<224, 32>(self.len_record.q.val().ieth_rkey) << 192);
        }
        // UDP header (checksum zero here; a later stage fills it in when the
        // frame needs one), BTH, extension headers.
        self.transport_be.next = (bit_cast::<384, 16>(self.len_record.q.val().udp_src_port) << 368)
            | (bits::<384>(4791) << 352)
            | (bit_cast::<384, 16>(self.len_udp.q.val()) << 336)
            | (bit_cast::<384, 96>(self.bth_be.val()) << 224)
            | bit_cast::<384, 224>(self.ext_be.val());
        // Ethernet at byte 0, IP at byte 14, UDP at byte 34 (IPv4) or 54.
        self.header_be.next = bit_cast::<1024, 112>(self.eth_be.val()) << 912;
        if self.len_record.q.val().ipv6 {
            self.header_be.next = self.header_be.val()
                | (bit_cast::<1024, 320>(self.ipv6_be.val()) << 592)
                | (bit_cast::<1024, 384>(self.transport_be.val()) << 208);
        } else {
            self.header_be.next = self.header_be.val()
                | (bit_cast::<1024, 160>(self.ipv4_be.val()) << 752)
                | (bit_cast::<1024, 384>(self.transport_be.val()) << 368);
        }
        self.reverse.operand.next = self.header_be.val();

        self.frame_len.next = self.len_frame.q.val();
        self.job_next.next.header_lanes = self.reverse.reversed.val();
        self.job_next.next.header_len = self.len_header_len.q.val();
        self.job_next.next.payload_beats =
            bit_cast::<8, 14>((bit_cast::<14, 13>(self.len_record.q.val().payload_len) + 63) >> 6);
        self.job_next.next.payload_last_bytes =
            bit_cast::<6, 13>(self.len_record.q.val().payload_len);
        self.job_next.next.frame_beats =
            bit_cast::<7, 14>((bit_cast::<14, 13>(self.frame_len.val()) + 63) >> 6);
        self.job_next.next.frame_last_bytes = self.frame_len.val().get_bits::<6>(0);
        self.job_next.next.drop = self.len_drop.q.val();
        self.job_next.next.ipv6 = self.len_record.q.val().ipv6;
        self.job_next.next.udp_checksum =
            self.len_record.q.val().ipv6 | self.len_record.q.val().udp_checksum;
        if self.job_free.val() {
            self.job_q.d.next = self.job_next.val();
            self.job_valid_q.d.next = self.len_valid.q.val();
        }

        if self.reset.val() {
            self.in_valid.d.next = false;
            self.len_valid.d.next = false;
            self.job_valid_q.d.next = false;
        }
    }
}
