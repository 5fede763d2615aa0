//! `RxParser`: the RoCEv2 receive parser. Takes Ethernet frames (no FCS)
//! from the MAC as a 512-bit AXI-Stream, checks them exactly as the
//! reference codec (`RoceFrame::decode`) does, and emits per frame one
//! header record (every header field, the verdict and its reason) and the
//! payload realigned to byte 0 with pad and ICRC removed.
//!
//! Ports:
//! - `clock`; `reset` (synchronous, high: drops frames in flight, clears the
//!   counters);
//! - `rx` (AXI-Stream sink, 512/64): frames, Ethernet header first;
//! - `payload` (AXI-Stream source) and `payload_drop` (valid with
//!   `payload.tlast`): the payload segments;
//! - `record` (valid/ready source of [`HeaderRecord`]): one per frame;
//! - `stat_select` (5 bits) / `stat_count` (32 bits): counter read port.
//!   Counter 0 counts accepted frames, counter `r` the frames dropped for
//!   [`DropReason`] code `r`.
//!
//! Contract with downstream blocks. Every input frame yields exactly one
//! record, in order. A frame whose headers pass the checks that beat 0
//! allows (all but truncation and ICRC) and that carries a non-empty
//! payload also yields one payload segment (its record has
//! `has_payload`): the payload bytes realigned to lane 0, full beats
//! except the last, whose `tkeep` is contiguous. The verdict is only known
//! at the end of the frame (ICRC, truncation), so payload beats are
//! forwarded cut-through and the segment's last beat carries `payload_drop`
//! equal to the record's `drop`; the record leaves together with that last
//! beat. A consumer must therefore buffer a segment before acting on it and
//! discard it when `payload_drop` is set, and must accept payload beats
//! without waiting for the record (which comes with the last beat). For a
//! frame cut short by the end of the stream the segment still ends with a
//! last beat (contents undefined, `payload_drop` set). Bytes past the IP
//! length (Ethernet padding) are ignored, as the codec ignores them.
//!
//! Drop reasons and their priority are the codec's (see [`DropReason`]),
//! with one exception: the UDP checksum is not verified (the checksum needs
//! the whole datagram before the header is judged; RoCEv2 protects the
//! packet with the ICRC, and IPv4 senders send zero). A frame the codec
//! rejects only for `udp_checksum` is accepted here.
//!
//! Pipeline (all stages move together on `advance`, which is high while
//! both output buffers have room; `rx.tready` is `advance`, so the parser
//! never stalls for its own reasons): A registers the input beat, takes
//! the header window (beats 0 and 1 side by side, byte-reversed so
//! big-endian fields are plain bit slices) and does the first level of
//! length arithmetic; P judges the header fields in the codec's order; B
//! runs the per-beat truncation checks, the ICRC checker and the payload
//! realigner (one rotation by the header length mod 64, merged with the
//! rotated previous beat); the verdict meets the ICRC result three
//! advances later and the payload waits two stages to meet it; the output
//! skid buffers add one cycle. Latency ([`RECORD_LATENCY`]): a frame's
//! record and last payload beat appear 7 cycles after the rising edge that
//! accepted the beat holding the frame's last ICRC byte (or its last beat,
//! if shorter); other payload beats 6 cycles after the edge that accepted
//! the input beat completing them. Throughput: one beat per cycle,
//! back-to-back frames of any length including 1-beat frames.

use crate::codes::opcode_headers::{ext, OpcodeHeaders};
use crate::frame::crc::icrc_checker::IcrcChecker;
use crate::frame::rx::header_record::{DropReason, HeaderRecord, HeaderRecordSource};
use crate::primitives::byte_lane_select::ByteLaneSelect;
use crate::primitives::byte_reverse::ByteReverse;
use crate::primitives::byte_rotator::ByteRotator;
use crate::primitives::skid_buffer::SkidBuffer;
use crate::primitives::stream::{Axis512Sink, Axis512Source};
use crate::primitives::wide::bits_from_words;
use rust_hdl::prelude::*;

/// One payload beat and the verdict that rides on a segment's last beat.
#[derive(Clone, Copy, Debug, Default, PartialEq, LogicStruct)]
pub struct PayloadBeat {
    pub data: Bits<512>,
    pub keep: Bits<64>,
    pub last: Bit,
    pub drop: Bit,
}

/// Cycles from the rising edge that accepts a frame's verdict beat (the
/// one holding its last ICRC byte, or its last beat) to the cycle its
/// record is presented.
pub const RECORD_LATENCY: u64 = 7;

/// Counters: accepted frames plus one per drop reason.
pub const STAT_COUNTERS: usize = DropReason::ALL.len() + 1;

/// Header lengths mod 64 for every opcode's header set on IPv4 and IPv6:
/// the only rotations the payload realigner needs.
pub fn payload_shifts() -> Vec<usize> {
    let mut shifts: Vec<usize> = crate::codes::opcode_headers::OPCODE_TABLE
        .iter()
        .flat_map(|&(_, set, _)| {
            [20usize, 40].map(|ip| (14 + ip + 8 + 12 + usize::from(ext::wire_len(set))) % 64)
        })
        .collect();
    shifts.sort_unstable();
    shifts.dedup();
    shifts
}

#[derive(LogicBlock)]
pub struct RxParser {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub rx: Axis512Sink,
    pub payload: Axis512Source,
    pub payload_drop: Signal<Out, Bit>,
    pub record: HeaderRecordSource,
    pub stat_select: Signal<In, Bits<5>>,
    pub stat_count: Signal<Out, Bits<32>>,

    opcode_table: OpcodeHeaders,
    window_reverse: ByteReverse<1024>,
    rotator: ByteRotator<512>,
    merge: ByteLaneSelect<512, 64>,
    icrc_check: IcrcChecker,
    payload_out: SkidBuffer<PayloadBeat>,
    record_out: SkidBuffer<HeaderRecord>,

    advance: Signal<Local, Bit>,
    // Stage A: the input beat.
    a_valid: DFF<Bit>,
    a_data: DFF<Bits<512>>,
    a_keep: DFF<Bits<64>>,
    a_last: DFF<Bit>,
    a_index: DFF<Bits<11>>,
    next_index: DFF<Bits<11>>,
    first_beat: DFF<Bits<512>>,
    // The header window, its fields and first-level arithmetic.
    window_low: Signal<Local, Bits<512>>,
    header: Signal<Local, Bits<1024>>,
    h_ipv6: Signal<Local, Bit>,
    h_eth_ok: Signal<Local, Bit>,
    h_ipv4_total: Signal<Local, Bits<16>>,
    h_ipv6_payload_len: Signal<Local, Bits<16>>,
    h_ipv4_checksum_sum: Signal<Local, Bits<20>>,
    h_next_header: Signal<Local, Bits<8>>,
    h_l3_len: Signal<Local, Bits<17>>,
    h_end: Signal<Local, Bits<17>>,
    h_end_minus_one: Signal<Local, Bits<17>>,
    h_udp_region: Signal<Local, Bits<17>>,
    h_udp_dst_port: Signal<Local, Bits<16>>,
    h_udp_len: Signal<Local, Bits<16>>,
    h_udp_checksum: Signal<Local, Bits<16>>,
    h_bth_byte1: Signal<Local, Bits<8>>,
    h_fixed: Signal<Local, Bits<7>>,
    h_has_reth: Signal<Local, Bit>,
    h_has_deth: Signal<Local, Bit>,
    h_has_atomic_eth: Signal<Local, Bit>,
    h_has_aeth: Signal<Local, Bit>,
    h_has_atomic_ack_eth: Signal<Local, Bit>,
    h_has_imm: Signal<Local, Bit>,
    h_has_ieth: Signal<Local, Bit>,
    parsed: Signal<Local, HeaderRecord>,
    record_a: DFF<HeaderRecord>,
    // Stage P: beat-0 facts, registered from A, judged here.
    p_valid: DFF<Bit>,
    p_data: DFF<Bits<512>>,
    p_keep: DFF<Bits<64>>,
    p_last: DFF<Bit>,
    p_index: DFF<Bits<11>>,
    pf_ipv6: DFF<Bit>,
    pf_eth_ok: DFF<Bit>,
    pf_version: DFF<Bits<4>>,
    pf_ihl: DFF<Bits<4>>,
    pf_fragment: DFF<Bit>,
    pf_next_header: DFF<Bits<8>>,
    pf_ipv4_total: DFF<Bits<16>>,
    pf_ipv4_checksum_field: DFF<Bits<16>>,
    pf_ipv4_checksum_sum: DFF<Bits<20>>,
    pf_l3_len: DFF<Bits<17>>,
    pf_end: DFF<Bits<17>>,
    pf_end_minus_one: DFF<Bits<17>>,
    pf_udp_region: DFF<Bits<17>>,
    pf_udp_dst_port: DFF<Bits<16>>,
    pf_udp_len: DFF<Bits<16>>,
    pf_tver: DFF<Bits<4>>,
    pf_known: DFF<Bit>,
    pf_has_payload: DFF<Bit>,
    pf_header_len: DFF<Bits<7>>,
    pf_fixed: DFF<Bits<7>>,
    pf_fixed_pad: DFF<Bits<7>>,
    pf_fixed_pad_plus_one: DFF<Bits<7>>,
    p_checksum_ok: Signal<Local, Bit>,
    p_ip_reason: Signal<Local, Bits<5>>,
    p_late_reason: Signal<Local, Bits<5>>,
    p_payload_len: Signal<Local, Bits<17>>,
    p_payload_len_minus_one: Signal<Local, Bits<17>>,
    p_last_bytes: Signal<Local, Bits<7>>,
    p_tail_room: Signal<Local, Bits<8>>,
    p_low_lane_count: Signal<Local, Bits<7>>,
    record_p: DFF<HeaderRecord>,
    // Per-frame facts, used while the frame's beats pass stage B.
    f_ipv6: DFF<Bit>,
    f_eth_ok: DFF<Bit>,
    f_ip_reason: DFF<Bits<5>>,
    f_late_reason: DFF<Bits<5>>,
    f_end_beat: DFF<Bits<11>>,
    f_end_bytes: DFF<Bits<6>>,
    f_segment: DFF<Bit>,
    f_payload_len: DFF<Bits<13>>,
    f_shift: DFF<Bits<6>>,
    f_body_first: DFF<Bits<7>>,
    f_body_last: DFF<Bits<7>>,
    f_last_beat: DFF<Bits<7>>,
    f_tail_in_one: DFF<Bit>,
    f_last_keep: DFF<Bits<64>>,
    f_low_lanes: DFF<Bits<64>>,
    // Stage B: checks, ICRC, realignment.
    b_valid: DFF<Bit>,
    b_data: DFF<Bits<512>>,
    b_keep: DFF<Bits<64>>,
    b_last: DFF<Bit>,
    b_index: DFF<Bits<11>>,
    closed: DFF<Bit>,
    live: Signal<Local, Bit>,
    at_end: Signal<Local, Bit>,
    verdict_point: Signal<Local, Bit>,
    end_lane: Signal<Local, Bits<6>>,
    truncated_eth: Signal<Local, Bit>,
    truncated_ip: Signal<Local, Bit>,
    truncated_end: Signal<Local, Bit>,
    pre_reason: Signal<Local, Bits<5>>,
    segment_beat: Signal<Local, Bit>,
    emit_body: Signal<Local, Bit>,
    carry: DFF<Bits<512>>,
    last_data: DFF<Bits<512>>,
    last_keep: DFF<Bits<64>>,
    pending_last: DFF<Bit>,
    // Payload waiting for the verdict.
    q1_valid: DFF<Bit>,
    q1_data: DFF<Bits<512>>,
    q1_keep: DFF<Bits<64>>,
    q1_last: DFF<Bit>,
    q2_valid: DFF<Bit>,
    q2_data: DFF<Bits<512>>,
    q2_keep: DFF<Bits<64>>,
    q2_last: DFF<Bit>,
    // Verdicts waiting for the ICRC.
    v1_valid: DFF<Bit>,
    v1_record: DFF<HeaderRecord>,
    v1_reason: DFF<Bits<5>>,
    v1_segment: DFF<Bit>,
    v2_valid: DFF<Bit>,
    v2_record: DFF<HeaderRecord>,
    v2_reason: DFF<Bits<5>>,
    v2_segment: DFF<Bit>,
    v3_valid: DFF<Bit>,
    v3_record: DFF<HeaderRecord>,
    v3_reason: DFF<Bits<5>>,
    v3_segment: DFF<Bit>,
    final_reason: Signal<Local, Bits<5>>,
    out_record: Signal<Local, HeaderRecord>,
    out_beat: Signal<Local, PayloadBeat>,
    stat: [DFF<Bits<32>>; STAT_COUNTERS],

    all_lanes: Constant<Bits<64>>,
    zero_record: Constant<HeaderRecord>,
    checksum_multiple: [Constant<Bits<20>>; 10],
    reason_truncated: Constant<Bits<5>>,
    reason_ethertype: Constant<Bits<5>>,
    reason_ip_version: Constant<Bits<5>>,
    reason_ipv4_options: Constant<Bits<5>>,
    reason_ipv4_checksum: Constant<Bits<5>>,
    reason_ipv4_fragment: Constant<Bits<5>>,
    reason_ip_length: Constant<Bits<5>>,
    reason_not_udp: Constant<Bits<5>>,
    reason_udp_port: Constant<Bits<5>>,
    reason_udp_length: Constant<Bits<5>>,
    reason_tver: Constant<Bits<5>>,
    reason_opcode: Constant<Bits<5>>,
    reason_header_opcode_mismatch: Constant<Bits<5>>,
    reason_unexpected_payload: Constant<Bits<5>>,
    reason_payload_too_large: Constant<Bits<5>>,
    reason_pad: Constant<Bits<5>>,
    reason_icrc: Constant<Bits<5>>,
    ext_reth: Constant<Bits<8>>,
    ext_aeth: Constant<Bits<8>>,
    ext_atomic_eth: Constant<Bits<8>>,
    ext_atomic_ack_eth: Constant<Bits<8>>,
    ext_imm: Constant<Bits<8>>,
    ext_ieth: Constant<Bits<8>>,
    ext_deth: Constant<Bits<8>>,
}

fn reason(r: DropReason) -> Constant<Bits<5>> {
    Constant::new(bits(u64::from(r.code())))
}

fn ext_bit(set: u8) -> Constant<Bits<8>> {
    Constant::new(bits(u64::from(set)))
}

impl Default for RxParser {
    fn default() -> Self {
        RxParser {
            clock: Default::default(),
            reset: Default::default(),
            rx: Default::default(),
            payload: Default::default(),
            payload_drop: Default::default(),
            record: Default::default(),
            stat_select: Default::default(),
            stat_count: Default::default(),
            opcode_table: Default::default(),
            window_reverse: Default::default(),
            rotator: ByteRotator::new(&payload_shifts()),
            merge: Default::default(),
            icrc_check: Default::default(),
            payload_out: Default::default(),
            record_out: Default::default(),
            advance: Default::default(),
            a_valid: Default::default(),
            a_data: Default::default(),
            a_keep: Default::default(),
            a_last: Default::default(),
            a_index: Default::default(),
            next_index: Default::default(),
            first_beat: Default::default(),
            window_low: Default::default(),
            header: Default::default(),
            h_ipv6: Default::default(),
            h_eth_ok: Default::default(),
            h_ipv4_total: Default::default(),
            h_ipv6_payload_len: Default::default(),
            h_ipv4_checksum_sum: Default::default(),
            h_next_header: Default::default(),
            h_l3_len: Default::default(),
            h_end: Default::default(),
            h_end_minus_one: Default::default(),
            h_udp_region: Default::default(),
            h_udp_dst_port: Default::default(),
            h_udp_len: Default::default(),
            h_udp_checksum: Default::default(),
            h_bth_byte1: Default::default(),
            h_fixed: Default::default(),
            h_has_reth: Default::default(),
            h_has_deth: Default::default(),
            h_has_atomic_eth: Default::default(),
            h_has_aeth: Default::default(),
            h_has_atomic_ack_eth: Default::default(),
            h_has_imm: Default::default(),
            h_has_ieth: Default::default(),
            parsed: Default::default(),
            record_a: Default::default(),
            p_valid: Default::default(),
            p_data: Default::default(),
            p_keep: Default::default(),
            p_last: Default::default(),
            p_index: Default::default(),
            pf_ipv6: Default::default(),
            pf_eth_ok: Default::default(),
            pf_version: Default::default(),
            pf_ihl: Default::default(),
            pf_fragment: Default::default(),
            pf_next_header: Default::default(),
            pf_ipv4_total: Default::default(),
            pf_ipv4_checksum_field: Default::default(),
            pf_ipv4_checksum_sum: Default::default(),
            pf_l3_len: Default::default(),
            pf_end: Default::default(),
            pf_end_minus_one: Default::default(),
            pf_udp_region: Default::default(),
            pf_udp_dst_port: Default::default(),
            pf_udp_len: Default::default(),
            pf_tver: Default::default(),
            pf_known: Default::default(),
            pf_has_payload: Default::default(),
            pf_header_len: Default::default(),
            pf_fixed: Default::default(),
            pf_fixed_pad: Default::default(),
            pf_fixed_pad_plus_one: Default::default(),
            p_checksum_ok: Default::default(),
            p_ip_reason: Default::default(),
            p_late_reason: Default::default(),
            p_payload_len: Default::default(),
            p_payload_len_minus_one: Default::default(),
            p_last_bytes: Default::default(),
            p_tail_room: Default::default(),
            p_low_lane_count: Default::default(),
            record_p: Default::default(),
            f_ipv6: Default::default(),
            f_eth_ok: Default::default(),
            f_ip_reason: Default::default(),
            f_late_reason: Default::default(),
            f_end_beat: Default::default(),
            f_end_bytes: Default::default(),
            f_segment: Default::default(),
            f_payload_len: Default::default(),
            f_shift: Default::default(),
            f_body_first: Default::default(),
            f_body_last: Default::default(),
            f_last_beat: Default::default(),
            f_tail_in_one: Default::default(),
            f_last_keep: Default::default(),
            f_low_lanes: Default::default(),
            b_valid: Default::default(),
            b_data: Default::default(),
            b_keep: Default::default(),
            b_last: Default::default(),
            b_index: Default::default(),
            closed: Default::default(),
            live: Default::default(),
            at_end: Default::default(),
            verdict_point: Default::default(),
            end_lane: Default::default(),
            truncated_eth: Default::default(),
            truncated_ip: Default::default(),
            truncated_end: Default::default(),
            pre_reason: Default::default(),
            segment_beat: Default::default(),
            emit_body: Default::default(),
            carry: Default::default(),
            last_data: Default::default(),
            last_keep: Default::default(),
            pending_last: Default::default(),
            q1_valid: Default::default(),
            q1_data: Default::default(),
            q1_keep: Default::default(),
            q1_last: Default::default(),
            q2_valid: Default::default(),
            q2_data: Default::default(),
            q2_keep: Default::default(),
            q2_last: Default::default(),
            v1_valid: Default::default(),
            v1_record: Default::default(),
            v1_reason: Default::default(),
            v1_segment: Default::default(),
            v2_valid: Default::default(),
            v2_record: Default::default(),
            v2_reason: Default::default(),
            v2_segment: Default::default(),
            v3_valid: Default::default(),
            v3_record: Default::default(),
            v3_reason: Default::default(),
            v3_segment: Default::default(),
            final_reason: Default::default(),
            out_record: Default::default(),
            out_beat: Default::default(),
            stat: Default::default(),
            all_lanes: Constant::new(bits_from_words(&[u64::MAX])),
            zero_record: Constant::new(HeaderRecord::default()),
            checksum_multiple: std::array::from_fn(|k| {
                Constant::new(bits(0xFFFF * (k as u64 + 1)))
            }),
            reason_truncated: reason(DropReason::Truncated),
            reason_ethertype: reason(DropReason::Ethertype),
            reason_ip_version: reason(DropReason::IpVersion),
            reason_ipv4_options: reason(DropReason::Ipv4Options),
            reason_ipv4_checksum: reason(DropReason::Ipv4Checksum),
            reason_ipv4_fragment: reason(DropReason::Ipv4Fragment),
            reason_ip_length: reason(DropReason::IpLength),
            reason_not_udp: reason(DropReason::NotUdp),
            reason_udp_port: reason(DropReason::UdpPort),
            reason_udp_length: reason(DropReason::UdpLength),
            reason_tver: reason(DropReason::Tver),
            reason_opcode: reason(DropReason::Opcode),
            reason_header_opcode_mismatch: reason(DropReason::HeaderOpcodeMismatch),
            reason_unexpected_payload: reason(DropReason::UnexpectedPayload),
            reason_payload_too_large: reason(DropReason::PayloadTooLarge),
            reason_pad: reason(DropReason::Pad),
            reason_icrc: reason(DropReason::Icrc),
            ext_reth: ext_bit(ext::RETH),
            ext_aeth: ext_bit(ext::AETH),
            ext_atomic_eth: ext_bit(ext::ATOMIC_ETH),
            ext_atomic_ack_eth: ext_bit(ext::ATOMIC_ACK_ETH),
            ext_imm: ext_bit(ext::IMM),
            ext_ieth: ext_bit(ext::IETH),
            ext_deth: ext_bit(ext::DETH),
        }
    }
}

impl Logic for RxParser {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            a_valid,
            a_data,
            a_keep,
            a_last,
            a_index,
            next_index,
            first_beat,
            record_a,
            p_valid,
            p_data,
            p_keep,
            p_last,
            p_index,
            pf_ipv6,
            pf_eth_ok,
            pf_version,
            pf_ihl,
            pf_fragment,
            pf_next_header,
            pf_ipv4_total,
            pf_ipv4_checksum_field,
            pf_ipv4_checksum_sum,
            pf_l3_len,
            pf_end,
            pf_end_minus_one,
            pf_udp_region,
            pf_udp_dst_port,
            pf_udp_len,
            pf_tver,
            pf_known,
            pf_has_payload,
            pf_header_len,
            pf_fixed,
            pf_fixed_pad,
            pf_fixed_pad_plus_one,
            record_p,
            f_ipv6,
            f_eth_ok,
            f_ip_reason,
            f_late_reason,
            f_end_beat,
            f_end_bytes,
            f_segment,
            f_payload_len,
            f_shift,
            f_body_first,
            f_body_last,
            f_last_beat,
            f_tail_in_one,
            f_last_keep,
            f_low_lanes,
            b_valid,
            b_data,
            b_keep,
            b_last,
            b_index,
            closed,
            carry,
            last_data,
            last_keep,
            pending_last,
            q1_valid,
            q1_data,
            q1_keep,
            q1_last,
            q2_valid,
            q2_data,
            q2_keep,
            q2_last,
            v1_valid,
            v1_record,
            v1_reason,
            v1_segment,
            v2_valid,
            v2_record,
            v2_reason,
            v2_segment,
            v3_valid,
            v3_record,
            v3_reason,
            v3_segment
        );
        for r in 0..STAT_COUNTERS {
            self.stat[r].clock.next = self.clock.val();
            self.stat[r].d.next = self.stat[r].q.val();
        }
        self.icrc_check.clock.next = self.clock.val();
        self.icrc_check.reset.next = self.reset.val();
        self.payload_out.clock.next = self.clock.val();
        self.payload_out.reset.next = self.reset.val();
        self.record_out.clock.next = self.clock.val();
        self.record_out.reset.next = self.reset.val();

        // Everything moves together while both outputs have room; the
        // buffers' readiness is registered, so no combinational path runs
        // from the consumers back into the pipeline.
        self.advance.next = self.payload_out.up_ready.val() & self.record_out.up_ready.val();
        self.rx.tready.next = self.advance.val();

        // ---- Stage A: accept a beat, number it within its frame.
        if self.advance.val() {
            self.a_valid.d.next = self.rx.tvalid.val();
            self.a_data.d.next = self.rx.tdata.val();
            self.a_keep.d.next = self.rx.tkeep.val();
            self.a_last.d.next = self.rx.tlast.val();
            self.a_index.d.next = self.next_index.q.val();
            if self.rx.tvalid.val() {
                if self.rx.tlast.val() {
                    self.next_index.d.next = 0.into();
                } else if self.next_index.q.val() != 2047 {
                    self.next_index.d.next = self.next_index.q.val() + 1;
                }
            }
        }

        // ---- The header window: beat 1 above beat 0 (beat 0 twice while
        // beat 0 itself is in A), byte-reversed so that frame byte n is
        // lane 127 - n and a big-endian field of w bytes at n is the bit
        // slice at 8 * (128 - n - w).
        self.window_low.next = self.first_beat.q.val();
        if self.a_index.q.val() == 0 {
            self.window_low.next = self.a_data.q.val();
        }
        self.window_reverse.operand.next = (bit_cast::<1024, 512>(self.a_data.q.val()) << 512)
            | bit_cast::<1024, 512>(self.window_low.val());
        self.header.next = self.window_reverse.reversed.val();

        // Fields at fixed offsets and the first level of arithmetic; the
        // checks on them are made in stage P, a cycle later, to keep each
        // stage to a couple of carry chains. EtherType at 12.
        self.h_ipv6.next = self.header.val().get_bits::<16>(8 * (128 - 12 - 2)) == 0x86DD;
        self.h_eth_ok.next =
            (self.header.val().get_bits::<16>(8 * (128 - 12 - 2)) == 0x0800) | self.h_ipv6.val();
        // IPv4 total length at 16, IPv6 payload length at 18, and the sum
        // of the ten IPv4 header words, checksum (at 24) included, judged
        // in stage P.
        self.h_ipv4_total.next = self.header.val().get_bits::<16>(8 * (128 - 16 - 2));
        self.h_ipv6_payload_len.next = self.header.val().get_bits::<16>(8 * (128 - 18 - 2));
        self.h_ipv4_checksum_sum.next =
            bit_cast::<20, 16>(self.header.val().get_bits::<16>(8 * (128 - 14 - 2)))
                + bit_cast::<20, 16>(self.header.val().get_bits::<16>(8 * (128 - 16 - 2)))
                + bit_cast::<20, 16>(self.header.val().get_bits::<16>(8 * (128 - 18 - 2)))
                + bit_cast::<20, 16>(self.header.val().get_bits::<16>(8 * (128 - 20 - 2)))
                + bit_cast::<20, 16>(self.header.val().get_bits::<16>(8 * (128 - 22 - 2)))
                + bit_cast::<20, 16>(self.header.val().get_bits::<16>(8 * (128 - 24 - 2)))
                + bit_cast::<20, 16>(self.header.val().get_bits::<16>(8 * (128 - 26 - 2)))
                + bit_cast::<20, 16>(self.header.val().get_bits::<16>(8 * (128 - 28 - 2)))
                + bit_cast::<20, 16>(self.header.val().get_bits::<16>(8 * (128 - 30 - 2)))
                + bit_cast::<20, 16>(self.header.val().get_bits::<16>(8 * (128 - 32 - 2)));
        // The IP length (l3), the frame offset just past the ICRC (end) and
        // the UDP datagram length the IP length implies (region).
        self.h_next_header.next = self.header.val().get_bits::<8>(8 * (128 - 23 - 1));
        self.h_l3_len.next = bit_cast::<17, 16>(self.h_ipv4_total.val());
        self.h_end.next = bit_cast::<17, 16>(self.h_ipv4_total.val()) + 14;
        self.h_end_minus_one.next = bit_cast::<17, 16>(self.h_ipv4_total.val()) + 13;
        self.h_udp_region.next = bit_cast::<17, 16>(self.h_ipv4_total.val()) - 20;
        self.h_udp_dst_port.next = self.header.val().get_bits::<16>(8 * (128 - 36 - 2));
        self.h_udp_len.next = self.header.val().get_bits::<16>(8 * (128 - 38 - 2));
        self.h_udp_checksum.next = self.header.val().get_bits::<16>(8 * (128 - 40 - 2));
        self.h_bth_byte1.next = self.header.val().get_bits::<8>(8 * (128 - 43 - 1));
        self.opcode_table.opcode.next = self.header.val().get_bits::<8>(8 * (128 - 42 - 1));
        if self.h_ipv6.val() {
            self.h_next_header.next = self.header.val().get_bits::<8>(8 * (128 - 20 - 1));
            self.h_l3_len.next = bit_cast::<17, 16>(self.h_ipv6_payload_len.val()) + 40;
            self.h_end.next = bit_cast::<17, 16>(self.h_ipv6_payload_len.val()) + 54;
            self.h_end_minus_one.next = bit_cast::<17, 16>(self.h_ipv6_payload_len.val()) + 53;
            self.h_udp_region.next = bit_cast::<17, 16>(self.h_ipv6_payload_len.val());
            self.h_udp_dst_port.next = self.header.val().get_bits::<16>(8 * (128 - 56 - 2));
            self.h_udp_len.next = self.header.val().get_bits::<16>(8 * (128 - 58 - 2));
            self.h_udp_checksum.next = self.header.val().get_bits::<16>(8 * (128 - 60 - 2));
            self.h_bth_byte1.next = self.header.val().get_bits::<8>(8 * (128 - 63 - 1));
            self.opcode_table.opcode.next = self.header.val().get_bits::<8>(8 * (128 - 62 - 1));
        }
        // UDP + BTH + extension headers + ICRC: the bytes of the UDP
        // datagram that are neither payload nor pad.
        self.h_fixed.next = bit_cast::<7, 5>(self.opcode_table.headers_len.val()) + 24;

        // Extension headers start at 54 (IPv4) or 74 (IPv6); ImmDt follows
        // a RETH or a DETH when the opcode carries one.
        self.h_has_reth.next = (self.opcode_table.headers.val() & self.ext_reth.val()) != 0;
        self.h_has_deth.next = (self.opcode_table.headers.val() & self.ext_deth.val()) != 0;
        self.h_has_atomic_eth.next =
            (self.opcode_table.headers.val() & self.ext_atomic_eth.val()) != 0;
        self.h_has_aeth.next = (self.opcode_table.headers.val() & self.ext_aeth.val()) != 0;
        self.h_has_atomic_ack_eth.next =
            (self.opcode_table.headers.val() & self.ext_atomic_ack_eth.val()) != 0;
        self.h_has_imm.next = (self.opcode_table.headers.val() & self.ext_imm.val()) != 0;
        self.h_has_ieth.next = (self.opcode_table.headers.val() & self.ext_ieth.val()) != 0;

        // The record fields, from the same window.
        self.parsed.next = self.zero_record.val();
        self.parsed.next.eth_dst = self.header.val().get_bits::<48>(8 * (128 - 6));
        self.parsed.next.eth_src = self.header.val().get_bits::<48>(8 * (128 - 6 - 6));
        self.parsed.next.ipv6 = self.h_ipv6.val();
        self.parsed.next.udp_checksum = self.h_udp_checksum.val() != 0;
        self.parsed.next.opcode = self.opcode_table.opcode.val();
        self.parsed.next.solicited = self.h_bth_byte1.val().get_bit(7);
        self.parsed.next.mig_req = self.h_bth_byte1.val().get_bit(6);
        self.parsed.next.pad_count = self.h_bth_byte1.val().get_bits::<2>(4);
        self.parsed.next.tver = self.h_bth_byte1.val().get_bits::<4>(0);
        self.parsed.next.has_deth = self.h_has_deth.val();
        self.parsed.next.has_reth = self.h_has_reth.val();
        self.parsed.next.has_atomic_eth = self.h_has_atomic_eth.val();
        self.parsed.next.has_aeth = self.h_has_aeth.val();
        self.parsed.next.has_atomic_ack_eth = self.h_has_atomic_ack_eth.val();
        self.parsed.next.has_imm = self.h_has_imm.val();
        self.parsed.next.has_ieth = self.h_has_ieth.val();
        if self.h_ipv6.val() {
            self.parsed.next.ip_src = self.header.val().get_bits::<128>(8 * (128 - 22 - 16));
            self.parsed.next.ip_dst = self.header.val().get_bits::<128>(8 * (128 - 38 - 16));
            self.parsed.next.dscp = self.header.val().get_bits::<6>(8 * (128 - 14 - 4) + 22);
            self.parsed.next.ecn = self.header.val().get_bits::<2>(8 * (128 - 14 - 4) + 20);
            self.parsed.next.ipv6_flow_label = self.header.val().get_bits::<20>(8 * (128 - 14 - 4));
            self.parsed.next.ttl = self.header.val().get_bits::<8>(8 * (128 - 21 - 1));
            self.parsed.next.udp_src_port = self.header.val().get_bits::<16>(8 * (128 - 54 - 2));
            self.parsed.next.pkey = self.header.val().get_bits::<16>(8 * (128 - 64 - 2));
            self.parsed.next.fecn = self.header.val().get_bit(8 * (128 - 66 - 1) + 7);
            self.parsed.next.becn = self.header.val().get_bit(8 * (128 - 66 - 1) + 6);
            self.parsed.next.dest_qp = self.header.val().get_bits::<24>(8 * (128 - 67 - 3));
            self.parsed.next.ack_req = self.header.val().get_bit(8 * (128 - 70 - 1) + 7);
            self.parsed.next.psn = self.header.val().get_bits::<24>(8 * (128 - 71 - 3));
        } else {
            self.parsed.next.ip_src =
                bit_cast::<128, 32>(self.header.val().get_bits::<32>(8 * (128 - 26 - 4)));
            self.parsed.next.ip_dst =
                bit_cast::<128, 32>(self.header.val().get_bits::<32>(8 * (128 - 30 - 4)));
            self.parsed.next.dscp = self.header.val().get_bits::<6>(8 * (128 - 15 - 1) + 2);
            self.parsed.next.ecn = self.header.val().get_bits::<2>(8 * (128 - 15 - 1));
            self.parsed.next.ipv4_identification =
                self.header.val().get_bits::<16>(8 * (128 - 18 - 2));
            self.parsed.next.ipv4_dont_fragment =
                self.header.val().get_bit(8 * (128 - 20 - 2) + 14);
            self.parsed.next.ttl = self.header.val().get_bits::<8>(8 * (128 - 22 - 1));
            self.parsed.next.udp_src_port = self.header.val().get_bits::<16>(8 * (128 - 34 - 2));
            self.parsed.next.pkey = self.header.val().get_bits::<16>(8 * (128 - 44 - 2));
            self.parsed.next.fecn = self.header.val().get_bit(8 * (128 - 46 - 1) + 7);
            self.parsed.next.becn = self.header.val().get_bit(8 * (128 - 46 - 1) + 6);
            self.parsed.next.dest_qp = self.header.val().get_bits::<24>(8 * (128 - 47 - 3));
            self.parsed.next.ack_req = self.header.val().get_bit(8 * (128 - 50 - 1) + 7);
            self.parsed.next.psn = self.header.val().get_bits::<24>(8 * (128 - 51 - 3));
        }
        if !self.h_ipv6.val() {
            if self.h_has_deth.val() {
                self.parsed.next.deth_qkey = self.header.val().get_bits::<32>(8 * (128 - 54 - 4));
                self.parsed.next.deth_src_qp = self.header.val().get_bits::<24>(8 * (128 - 59 - 3));
            }
            if self.h_has_reth.val() {
                self.parsed.next.reth_va = self.header.val().get_bits::<64>(8 * (128 - 54 - 8));
                self.parsed.next.reth_rkey = self.header.val().get_bits::<32>(8 * (128 - 62 - 4));
                self.parsed.next.reth_dma_len =
                    self.header.val().get_bits::<32>(8 * (128 - 66 - 4));
            }
            if self.h_has_atomic_eth.val() {
                self.parsed.next.atomic_va = self.header.val().get_bits::<64>(8 * (128 - 54 - 8));
                self.parsed.next.atomic_rkey = self.header.val().get_bits::<32>(8 * (128 - 62 - 4));
                self.parsed.next.atomic_swap_add =
                    self.header.val().get_bits::<64>(8 * (128 - 66 - 8));
                self.parsed.next.atomic_compare =
                    self.header.val().get_bits::<64>(8 * (128 - 74 - 8));
            }
            if self.h_has_aeth.val() {
                self.parsed.next.aeth_syndrome =
                    self.header.val().get_bits::<8>(8 * (128 - 54 - 1));
                self.parsed.next.aeth_msn = self.header.val().get_bits::<24>(8 * (128 - 55 - 3));
            }
            if self.h_has_atomic_ack_eth.val() {
                self.parsed.next.atomic_ack_orig =
                    self.header.val().get_bits::<64>(8 * (128 - 58 - 8));
            }
            if self.h_has_ieth.val() {
                self.parsed.next.ieth_rkey = self.header.val().get_bits::<32>(8 * (128 - 54 - 4));
            }
            if self.h_has_imm.val() {
                if self.h_has_reth.val() {
                    self.parsed.next.imm = self.header.val().get_bits::<32>(8 * (128 - 70 - 4));
                } else if self.h_has_deth.val() {
                    self.parsed.next.imm = self.header.val().get_bits::<32>(8 * (128 - 62 - 4));
                } else {
                    self.parsed.next.imm = self.header.val().get_bits::<32>(8 * (128 - 54 - 4));
                }
            }
        } else {
            if self.h_has_deth.val() {
                self.parsed.next.deth_qkey = self.header.val().get_bits::<32>(8 * (128 - 74 - 4));
                self.parsed.next.deth_src_qp = self.header.val().get_bits::<24>(8 * (128 - 79 - 3));
            }
            if self.h_has_reth.val() {
                self.parsed.next.reth_va = self.header.val().get_bits::<64>(8 * (128 - 74 - 8));
                self.parsed.next.reth_rkey = self.header.val().get_bits::<32>(8 * (128 - 82 - 4));
                self.parsed.next.reth_dma_len =
                    self.header.val().get_bits::<32>(8 * (128 - 86 - 4));
            }
            if self.h_has_atomic_eth.val() {
                self.parsed.next.atomic_va = self.header.val().get_bits::<64>(8 * (128 - 74 - 8));
                self.parsed.next.atomic_rkey = self.header.val().get_bits::<32>(8 * (128 - 82 - 4));
                self.parsed.next.atomic_swap_add =
                    self.header.val().get_bits::<64>(8 * (128 - 86 - 8));
                self.parsed.next.atomic_compare =
                    self.header.val().get_bits::<64>(8 * (128 - 94 - 8));
            }
            if self.h_has_aeth.val() {
                self.parsed.next.aeth_syndrome =
                    self.header.val().get_bits::<8>(8 * (128 - 74 - 1));
                self.parsed.next.aeth_msn = self.header.val().get_bits::<24>(8 * (128 - 75 - 3));
            }
            if self.h_has_atomic_ack_eth.val() {
                self.parsed.next.atomic_ack_orig =
                    self.header.val().get_bits::<64>(8 * (128 - 78 - 8));
            }
            if self.h_has_ieth.val() {
                self.parsed.next.ieth_rkey = self.header.val().get_bits::<32>(8 * (128 - 74 - 4));
            }
            if self.h_has_imm.val() {
                if self.h_has_reth.val() {
                    self.parsed.next.imm = self.header.val().get_bits::<32>(8 * (128 - 90 - 4));
                } else if self.h_has_deth.val() {
                    self.parsed.next.imm = self.header.val().get_bits::<32>(8 * (128 - 82 - 4));
                } else {
                    self.parsed.next.imm = self.header.val().get_bits::<32>(8 * (128 - 74 - 4));
                }
            }
        }

        if self.advance.val() {
            self.p_valid.d.next = self.a_valid.q.val();
            self.p_data.d.next = self.a_data.q.val();
            self.p_keep.d.next = self.a_keep.q.val();
            self.p_last.d.next = self.a_last.q.val();
            self.p_index.d.next = self.a_index.q.val();
            if self.a_valid.q.val() {
                // Beat 0 fixes the frame's geometry and header fields; the
                // record is taken from beat 0 and again, complete, from
                // beat 1.
                if self.a_index.q.val() == 0 {
                    self.first_beat.d.next = self.a_data.q.val();
                    self.pf_ipv6.d.next = self.h_ipv6.val();
                    self.pf_eth_ok.d.next = self.h_eth_ok.val();
                    self.pf_version.d.next =
                        self.header.val().get_bits::<4>(8 * (128 - 14 - 1) + 4);
                    self.pf_ihl.d.next = self.header.val().get_bits::<4>(8 * (128 - 14 - 1));
                    self.pf_fragment.d.next =
                        self.header.val().get_bits::<14>(8 * (128 - 20 - 2)) != 0;
                    self.pf_next_header.d.next = self.h_next_header.val();
                    self.pf_ipv4_total.d.next = self.h_ipv4_total.val();
                    self.pf_ipv4_checksum_field.d.next =
                        self.header.val().get_bits::<16>(8 * (128 - 24 - 2));
                    self.pf_ipv4_checksum_sum.d.next = self.h_ipv4_checksum_sum.val();
                    self.pf_l3_len.d.next = self.h_l3_len.val();
                    self.pf_end.d.next = self.h_end.val();
                    self.pf_end_minus_one.d.next = self.h_end_minus_one.val();
                    self.pf_udp_region.d.next = self.h_udp_region.val();
                    self.pf_udp_dst_port.d.next = self.h_udp_dst_port.val();
                    self.pf_udp_len.d.next = self.h_udp_len.val();
                    self.pf_tver.d.next = self.h_bth_byte1.val().get_bits::<4>(0);
                    self.pf_known.d.next = self.opcode_table.known.val();
                    self.pf_has_payload.d.next = self.opcode_table.has_payload.val();
                    // H = 14 + IP + 8 + 12 + extension headers.
                    self.pf_header_len.d.next =
                        bit_cast::<7, 5>(self.opcode_table.headers_len.val()) + 54;
                    if self.h_ipv6.val() {
                        self.pf_header_len.d.next =
                            bit_cast::<7, 5>(self.opcode_table.headers_len.val()) + 74;
                    }
                    self.pf_fixed.d.next = self.h_fixed.val();
                    self.pf_fixed_pad.d.next = self.h_fixed.val()
                        + bit_cast::<7, 2>(self.h_bth_byte1.val().get_bits::<2>(4));
                    self.pf_fixed_pad_plus_one.d.next = self.h_fixed.val()
                        + bit_cast::<7, 2>(self.h_bth_byte1.val().get_bits::<2>(4))
                        + 1;
                }
                if self.a_index.q.val() <= 1 {
                    self.record_a.d.next = self.parsed.val();
                }
            }
        }

        // ---- Stage P: the header checks, in the codec's order.
        // The codec accepts an IPv4 checksum equal to the complement of the
        // folded sum of the other nine words. Once version and IHL have
        // passed, word 0 is 0x45xx, so that sum is never zero, and the test
        // is equivalent to: the field is not 0xFFFF and the sum of all ten
        // words folds to 0xFFFF, i.e. is a non-zero multiple of 0xFFFF
        // (at most ten times it). Ten constant compares, no carry chain.
        self.p_checksum_ok.next = false;
        for k in 0..10 {
            if self.pf_ipv4_checksum_sum.q.val() == self.checksum_multiple[k].val() {
                self.p_checksum_ok.next = true;
            }
        }
        if self.pf_ipv4_checksum_field.q.val() == 0xFFFF {
            self.p_checksum_ok.next = false;
        }
        self.p_ip_reason.next = 0.into();
        if self.pf_ipv6.q.val() {
            if self.pf_version.q.val() != 6 {
                self.p_ip_reason.next = self.reason_ip_version.val();
            } else if self.pf_next_header.q.val() != 17 {
                self.p_ip_reason.next = self.reason_not_udp.val();
            }
        } else if self.pf_version.q.val() != 4 {
            self.p_ip_reason.next = self.reason_ip_version.val();
        } else if self.pf_ihl.q.val() != 5 {
            self.p_ip_reason.next = self.reason_ipv4_options.val();
        } else if !self.p_checksum_ok.val() {
            self.p_ip_reason.next = self.reason_ipv4_checksum.val();
        } else if self.pf_fragment.q.val() {
            self.p_ip_reason.next = self.reason_ipv4_fragment.val();
        } else if self.pf_next_header.q.val() != 17 {
            self.p_ip_reason.next = self.reason_not_udp.val();
        } else if self.pf_ipv4_total.q.val() < 20 {
            self.p_ip_reason.next = self.reason_ip_length.val();
        }
        // UDP and BTH checks; these assume the frame holds the whole IP
        // length (truncation is judged in stage B, with higher priority).
        // Each is a compare of the UDP region against a small number:
        // "after the BTH < headers + ICRC" is "region < fixed", "padded
        // != 0" is "region != fixed", "pad > padded" is "region < fixed +
        // pad", "payload > 4096" is "region > fixed + pad + 4096".
        self.p_late_reason.next = 0.into();
        if (!self.pf_ipv6.q.val() & (self.pf_l3_len.q.val() < 28))
            | (self.pf_ipv6.q.val() & (self.pf_l3_len.q.val() < 48))
        {
            self.p_late_reason.next = self.reason_truncated.val();
        } else if self.pf_udp_dst_port.q.val() != 4791 {
            self.p_late_reason.next = self.reason_udp_port.val();
        } else if bit_cast::<17, 16>(self.pf_udp_len.q.val()) != self.pf_udp_region.q.val() {
            self.p_late_reason.next = self.reason_udp_length.val();
        } else if self.pf_udp_region.q.val() < 20 {
            self.p_late_reason.next = self.reason_truncated.val();
        } else if self.pf_tver.q.val() != 0 {
            self.p_late_reason.next = self.reason_tver.val();
        } else if !self.pf_known.q.val() {
            self.p_late_reason.next = self.reason_opcode.val();
        } else if self.pf_udp_region.q.val() < bit_cast::<17, 7>(self.pf_fixed.q.val()) {
            self.p_late_reason.next = self.reason_header_opcode_mismatch.val();
        } else if !self.pf_has_payload.q.val()
            & (self.pf_udp_region.q.val() != bit_cast::<17, 7>(self.pf_fixed.q.val()))
        {
            self.p_late_reason.next = self.reason_unexpected_payload.val();
        } else if self.pf_udp_region.q.val() < bit_cast::<17, 7>(self.pf_fixed_pad.q.val()) {
            self.p_late_reason.next = self.reason_pad.val();
        } else if self.pf_udp_region.q.val() > bit_cast::<17, 7>(self.pf_fixed_pad.q.val()) + 4096 {
            self.p_late_reason.next = self.reason_payload_too_large.val();
        }

        // Payload geometry: it starts at H; output beat j holds bytes
        // H + 64j ..; the last one holds `last_bytes` and is complete in
        // the input beat where it starts when it fits there
        // (`tail_in_one`), else one beat later.
        self.p_payload_len.next =
            self.pf_udp_region.q.val() - bit_cast::<17, 7>(self.pf_fixed_pad.q.val());
        self.p_payload_len_minus_one.next =
            self.pf_udp_region.q.val() - bit_cast::<17, 7>(self.pf_fixed_pad_plus_one.q.val());
        self.p_last_bytes.next =
            bit_cast::<7, 6>(self.p_payload_len_minus_one.val().get_bits::<6>(0)) + 1;
        self.p_tail_room.next = bit_cast::<8, 6>(self.pf_header_len.q.val().get_bits::<6>(0))
            + bit_cast::<8, 7>(self.p_last_bytes.val());
        self.p_low_lane_count.next =
            bits::<7>(64) - bit_cast::<7, 6>(self.pf_header_len.q.val().get_bits::<6>(0));

        if self.advance.val() & self.p_valid.q.val() {
            if self.p_index.q.val() == 0 {
                self.f_ipv6.d.next = self.pf_ipv6.q.val();
                self.f_eth_ok.d.next = self.pf_eth_ok.q.val();
                self.f_ip_reason.d.next = self.p_ip_reason.val();
                self.f_late_reason.d.next = self.p_late_reason.val();
                self.f_end_beat.d.next = self.pf_end_minus_one.q.val().get_bits::<11>(6);
                self.f_end_bytes.d.next = self.pf_end.q.val().get_bits::<6>(0);
                self.f_segment.d.next = self.pf_eth_ok.q.val()
                    & (self.p_ip_reason.val() == 0)
                    & (self.p_late_reason.val() == 0)
                    & (self.p_payload_len.val() != 0);
                self.f_payload_len.d.next = bit_cast::<13, 17>(self.p_payload_len.val());
                self.f_shift.d.next = self.pf_header_len.q.val().get_bits::<6>(0);
                self.f_body_first.d.next =
                    bit_cast::<7, 1>(self.pf_header_len.q.val().get_bits::<1>(6)) + 1;
                self.f_body_last.d.next =
                    bit_cast::<7, 1>(self.pf_header_len.q.val().get_bits::<1>(6))
                        + bit_cast::<7, 6>(self.p_payload_len_minus_one.val().get_bits::<6>(6));
                self.f_last_beat.d.next =
                    bit_cast::<7, 1>(self.pf_header_len.q.val().get_bits::<1>(6))
                        + bit_cast::<7, 6>(self.p_payload_len_minus_one.val().get_bits::<6>(6));
                self.f_tail_in_one.d.next = self.p_tail_room.val() <= 64;
                if self.p_tail_room.val() > 64 {
                    self.f_last_beat.d.next =
                        bit_cast::<7, 1>(self.pf_header_len.q.val().get_bits::<1>(6))
                            + bit_cast::<7, 6>(self.p_payload_len_minus_one.val().get_bits::<6>(6))
                            + 1;
                }
                self.f_last_keep.d.next = !(self.all_lanes.val() << self.p_last_bytes.val());
                self.f_low_lanes.d.next = !(self.all_lanes.val() << self.p_low_lane_count.val());
            }
            if self.p_index.q.val() <= 1 {
                self.record_p.d.next = self.record_a.q.val();
            }
        }

        // ---- Stage B: beats of a frame up to its verdict point (the beat
        // holding the ICRC's last byte, or the frame's last beat if the
        // frame is shorter); later beats (Ethernet padding) are swallowed.
        if self.advance.val() {
            self.b_valid.d.next = self.p_valid.q.val();
            self.b_data.d.next = self.p_data.q.val();
            self.b_keep.d.next = self.p_keep.q.val();
            self.b_last.d.next = self.p_last.q.val();
            self.b_index.d.next = self.p_index.q.val();
        }
        self.live.next = self.b_valid.q.val() & !self.closed.q.val();
        self.at_end.next =
            self.f_eth_ok.q.val() & (self.b_index.q.val() == self.f_end_beat.q.val());
        self.verdict_point.next = self.live.val() & (self.at_end.val() | self.b_last.q.val());
        if self.advance.val() & self.b_valid.q.val() {
            if self.b_last.q.val() {
                self.closed.d.next = false;
            } else if self.verdict_point.val() {
                self.closed.d.next = true;
            }
        }

        self.icrc_check.advance.next = self.advance.val();
        self.icrc_check.beat_valid.next = self.live.val();
        self.icrc_check.beat_first.next = self.b_index.q.val() == 0;
        self.icrc_check.beat_ipv6.next = self.f_ipv6.q.val();
        self.icrc_check.beat_end.next = self.at_end.val();
        self.icrc_check.beat_end_bytes.next = self.f_end_bytes.q.val();
        self.icrc_check.beat_data.next = self.b_data.q.val();

        // Truncation, judged where the codec judges it: the frame must hold
        // the Ethernet header, then the IP header, then the IP length.
        self.end_lane.next = self.f_end_bytes.q.val() - 1;
        self.truncated_eth.next =
            (self.b_index.q.val() == 0) & self.b_last.q.val() & !self.b_keep.q.val().get_bit(13);
        self.truncated_ip.next =
            (self.b_index.q.val() == 0) & self.b_last.q.val() & !self.b_keep.q.val().get_bit(33);
        if self.f_ipv6.q.val() {
            self.truncated_ip.next = (self.b_index.q.val() == 0)
                & self.b_last.q.val()
                & !self.b_keep.q.val().get_bit(53);
        }
        self.truncated_end.next = self.b_last.q.val()
            & ((self.b_index.q.val() < self.f_end_beat.q.val())
                | ((self.b_index.q.val() == self.f_end_beat.q.val())
                    & !self.b_keep.q.val().get_bit(self.end_lane.val().index())));
        self.pre_reason.next = self.f_late_reason.q.val();
        if self.truncated_eth.val() {
            self.pre_reason.next = self.reason_truncated.val();
        } else if !self.f_eth_ok.q.val() {
            self.pre_reason.next = self.reason_ethertype.val();
        } else if self.truncated_ip.val() {
            self.pre_reason.next = self.reason_truncated.val();
        } else if self.f_ip_reason.q.val() != 0 {
            self.pre_reason.next = self.f_ip_reason.q.val();
        } else if self.truncated_end.val() {
            self.pre_reason.next = self.reason_truncated.val();
        }

        // Payload realignment: rotate each beat by the header length mod
        // 64; an output beat is the rotated previous beat's low lanes with
        // the rotated current beat's high lanes.
        self.rotator.operand.next = self.b_data.q.val();
        self.rotator.amount.next = self.f_shift.q.val();
        self.merge.when_set.next = self.carry.q.val();
        self.merge.when_clear.next = self.rotator.rotated.val();
        self.merge.lane_select.next = self.f_low_lanes.q.val();
        self.segment_beat.next = self.live.val() & self.f_segment.q.val();
        self.emit_body.next = self.segment_beat.val()
            & (self.b_index.q.val() >= bit_cast::<11, 7>(self.f_body_first.q.val()))
            & (self.b_index.q.val() <= bit_cast::<11, 7>(self.f_body_last.q.val()));
        if self.advance.val() {
            if self.live.val() {
                self.carry.d.next = self.rotator.rotated.val();
                if self.b_index.q.val() == 0 {
                    self.last_keep.d.next = 0.into();
                }
            }
            if self.segment_beat.val()
                & (self.b_index.q.val() == bit_cast::<11, 7>(self.f_last_beat.q.val()))
            {
                self.last_data.d.next = self.merge.chosen.val();
                if self.f_tail_in_one.q.val() {
                    self.last_data.d.next = self.rotator.rotated.val();
                }
                self.last_keep.d.next = self.f_last_keep.q.val();
            }
            // A segment's last beat leaves the step after the verdict
            // point, when no other beat of any frame can.
            self.pending_last.d.next = self.verdict_point.val() & self.f_segment.q.val();
            self.q1_valid.d.next = self.emit_body.val() | self.pending_last.q.val();
            self.q1_data.d.next = self.merge.chosen.val();
            self.q1_keep.d.next = self.all_lanes.val();
            self.q1_last.d.next = self.pending_last.q.val();
            if self.pending_last.q.val() {
                self.q1_data.d.next = self.last_data.q.val();
                self.q1_keep.d.next = self.last_keep.q.val();
            }
            self.q2_valid.d.next = self.q1_valid.q.val();
            self.q2_data.d.next = self.q1_data.q.val();
            self.q2_keep.d.next = self.q1_keep.q.val();
            self.q2_last.d.next = self.q1_last.q.val();

            self.v1_valid.d.next = self.verdict_point.val();
            self.v1_record.d.next = self.record_p.q.val();
            self.v1_record.d.next.payload_len = self.f_payload_len.q.val();
            self.v1_reason.d.next = self.pre_reason.val();
            self.v1_segment.d.next = self.f_segment.q.val();
            self.v2_valid.d.next = self.v1_valid.q.val();
            self.v2_record.d.next = self.v1_record.q.val();
            self.v2_reason.d.next = self.v1_reason.q.val();
            self.v2_segment.d.next = self.v1_segment.q.val();
            self.v3_valid.d.next = self.v2_valid.q.val();
            self.v3_record.d.next = self.v2_record.q.val();
            self.v3_reason.d.next = self.v2_reason.q.val();
            self.v3_segment.d.next = self.v2_segment.q.val();
        }

        // ---- Output: the verdict meets the ICRC result (the checker is
        // three advances behind stage B, like v3) and the payload's last
        // beat (two behind the step after the verdict point, like q2).
        self.final_reason.next = self.v3_reason.q.val();
        if (self.v3_reason.q.val() == 0) & !self.icrc_check.result_ok.val() {
            self.final_reason.next = self.reason_icrc.val();
        }
        self.out_record.next = self.v3_record.q.val();
        self.out_record.next.drop = self.final_reason.val() != 0;
        self.out_record.next.reason = self.final_reason.val();
        self.out_record.next.has_payload = self.v3_segment.q.val();
        self.out_beat.next.data = self.q2_data.q.val();
        self.out_beat.next.keep = self.q2_keep.q.val();
        self.out_beat.next.last = self.q2_last.q.val();
        self.out_beat.next.drop = self.q2_last.q.val() & (self.final_reason.val() != 0);
        self.record_out.up_valid.next = self.v3_valid.q.val() & self.advance.val();
        self.record_out.up_data.next = self.out_record.val();
        self.payload_out.up_valid.next = self.q2_valid.q.val() & self.advance.val();
        self.payload_out.up_data.next = self.out_beat.val();
        if self.advance.val() & self.v3_valid.q.val() {
            for r in 0..STAT_COUNTERS {
                if self.final_reason.val().index() == r {
                    self.stat[r].d.next = self.stat[r].q.val() + 1;
                }
            }
        }
        self.stat_count.next = 0.into();
        for r in 0..STAT_COUNTERS {
            if self.stat_select.val().index() == r {
                self.stat_count.next = self.stat[r].q.val();
            }
        }

        self.payload.tvalid.next = self.payload_out.down_valid.val();
        self.payload.tdata.next = self.payload_out.down_data.val().data;
        self.payload.tkeep.next = self.payload_out.down_data.val().keep;
        self.payload.tlast.next = self.payload_out.down_data.val().last;
        self.payload_drop.next = self.payload_out.down_data.val().drop;
        self.payload_out.down_ready.next = self.payload.tready.val();
        self.record.valid.next = self.record_out.down_valid.val();
        self.record.record.next = self.record_out.down_data.val();
        self.record_out.down_ready.next = self.record.ready.val();

        if self.reset.val() {
            self.a_valid.d.next = false;
            self.next_index.d.next = 0.into();
            self.p_valid.d.next = false;
            self.b_valid.d.next = false;
            self.closed.d.next = false;
            self.pending_last.d.next = false;
            self.q1_valid.d.next = false;
            self.q2_valid.d.next = false;
            self.v1_valid.d.next = false;
            self.v2_valid.d.next = false;
            self.v3_valid.d.next = false;
            for r in 0..STAT_COUNTERS {
                self.stat[r].d.next = 0.into();
            }
        }
    }
}
