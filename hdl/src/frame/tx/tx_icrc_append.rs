//! `TxIcrcAppend`: computes each outgoing frame's ICRC as the frame streams
//! through and appends it after the pad, least significant byte first.
//!
//! Ports: `clock`, `reset` (synchronous, high: drops everything in
//! flight); `up` (AXI-Stream in: a frame up to and including its pad, as
//! `TxFrameMerge` makes it) with `up_ipv6`, `up_udp_checksum` and
//! `up_end_bytes` (the last beat's byte count mod 64) beside each beat;
//! `down` (AXI-Stream out: the frame with its ICRC) with `down_ipv6` and
//! `down_udp_checksum` beside each beat.
//!
//! Latency: 7 cycles (the six advances `IcrcGenerator` needs from a
//! frame's end beat to its ICRC, then the output register); every beat
//! travels through a six-stage delay line in step with the generator, so
//! the end beat reaches the output stage together with its ICRC.
//!
//! The ICRC lands after the pad by a rotation among the 16 lanes a frame
//! can end at ([`end_lanes`]: headers are 2 mod 4 bytes long, 54 or 74 plus
//! extension headers in multiples of 4, and payload plus pad a multiple of
//! 4, so a frame ends 2, 6, .., 62 bytes into its last beat, never on a
//! beat boundary). `up_end_bytes` must be one of them, as it is for every
//! frame from `TxFrameMerge`.
//!
//! Throughput: one output beat per cycle. A frame ending in lane 62 needs
//! one more output beat than it came in with (two ICRC bytes in the end
//! beat, two in a beat of their own): the output sends that extra beat
//! while the input waits one cycle.

use crate::frame::crc::icrc_generator::IcrcGenerator;
use crate::frame::tx::tx_frame_merge::header_lengths;
use crate::primitives::byte_lane_select::ByteLaneSelect;
use crate::primitives::byte_rotator::ByteRotator;
use crate::primitives::stream::{AxisSink, AxisSource, DATA_BITS, KEEP_BITS};
use rust_hdl::prelude::*;

/// Advances from a frame's end beat entering `IcrcGenerator` to its ICRC.
pub const GENERATOR_LATENCY: usize = 6;

/// The lanes a frame's pad can end before (its byte count mod 64): every
/// header length is 2 mod 4 and payload plus pad a multiple of 4, so these
/// are 2, 6, .., 62, never 0. The ICRC is placed by a rotation among just
/// these, not by a general shifter.
pub fn end_lanes() -> Vec<usize> {
    let mut lanes: Vec<usize> = header_lengths()
        .iter()
        .flat_map(|h| (0..KEEP_BITS / 4).map(move |m| (h + 4 * m) % KEEP_BITS))
        .collect();
    lanes.sort_unstable();
    lanes.dedup();
    lanes
}

#[derive(LogicBlock)]
pub struct TxIcrcAppend {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub up: AxisSink<DATA_BITS, KEEP_BITS>,
    pub up_ipv6: Signal<In, Bit>,
    pub up_udp_checksum: Signal<In, Bit>,
    pub up_end_bytes: Signal<In, Bits<6>>,
    pub down: AxisSource<DATA_BITS, KEEP_BITS>,
    pub down_ipv6: Signal<Out, Bit>,
    pub down_udp_checksum: Signal<Out, Bit>,
    generator: IcrcGenerator,
    /// The ICRC (lanes 0..3) rotated up to the end lane; bytes that wrap
    /// past lane 63 land in lanes 0.. for the extra beat.
    place_rotate: ByteRotator<DATA_BITS>,
    /// The rotated ICRC's lanes from the end lane up, for the end beat.
    place_select: ByteLaneSelect<DATA_BITS, KEEP_BITS>,
    /// The last beat that came in did not end its frame.
    in_frame: DFF<Bit>,
    line_data: [DFF<Bits<DATA_BITS>>; GENERATOR_LATENCY],
    line_valid: [DFF<Bit>; GENERATOR_LATENCY],
    line_last: [DFF<Bit>; GENERATOR_LATENCY],
    line_end_bytes: [DFF<Bits<6>>; GENERATOR_LATENCY],
    line_ipv6: [DFF<Bit>; GENERATOR_LATENCY],
    line_udp_checksum: [DFF<Bit>; GENERATOR_LATENCY],
    out_data: DFF<Bits<DATA_BITS>>,
    out_keep: DFF<Bits<KEEP_BITS>>,
    out_last: DFF<Bit>,
    out_valid: DFF<Bit>,
    out_ipv6: DFF<Bit>,
    out_udp_checksum: DFF<Bit>,
    /// ICRC bytes that did not fit the end beat, waiting for their own.
    extra_pending: DFF<Bit>,
    extra_icrc: DFF<Bits<32>>,
    extra_keep: DFF<Bits<KEEP_BITS>>,
    all_lanes: Constant<Bits<KEEP_BITS>>,
    out_free: Signal<Local, Bit>,
    advance: Signal<Local, Bit>,
    /// Bytes of the end beat before the ICRC, 1..=64.
    end_lanes: Signal<Local, Bits<7>>,
    spill: Signal<Local, Bit>,
}

impl Default for TxIcrcAppend {
    fn default() -> Self {
        let ends = end_lanes();
        assert!(
            ends.iter().all(|&e| e % 4 == 2),
            "frames end 2 mod 4 bytes into a beat: {ends:?}"
        );
        // Rotating lane 0 up to lane e is a rotation down by 64 - e.
        let amounts: Vec<usize> = ends.iter().map(|e| KEEP_BITS - e).collect();
        TxIcrcAppend {
            clock: Default::default(),
            reset: Default::default(),
            up: Default::default(),
            up_ipv6: Default::default(),
            up_udp_checksum: Default::default(),
            up_end_bytes: Default::default(),
            down: Default::default(),
            down_ipv6: Default::default(),
            down_udp_checksum: Default::default(),
            generator: Default::default(),
            place_rotate: ByteRotator::new(&amounts),
            place_select: Default::default(),
            in_frame: Default::default(),
            line_data: Default::default(),
            line_valid: Default::default(),
            line_last: Default::default(),
            line_end_bytes: Default::default(),
            line_ipv6: Default::default(),
            line_udp_checksum: Default::default(),
            out_data: Default::default(),
            out_keep: Default::default(),
            out_last: Default::default(),
            out_valid: Default::default(),
            out_ipv6: Default::default(),
            out_udp_checksum: Default::default(),
            extra_pending: Default::default(),
            extra_icrc: Default::default(),
            extra_keep: Default::default(),
            all_lanes: Constant::new(bits(u64::MAX)),
            out_free: Default::default(),
            advance: Default::default(),
            end_lanes: Default::default(),
            spill: Default::default(),
        }
    }
}

impl Logic for TxIcrcAppend {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            in_frame,
            out_data,
            out_keep,
            out_last,
            out_valid,
            out_ipv6,
            out_udp_checksum,
            extra_pending,
            extra_icrc,
            extra_keep
        );
        for k in 0..6 {
            self.line_data[k].clock.next = self.clock.val();
            self.line_valid[k].clock.next = self.clock.val();
            self.line_last[k].clock.next = self.clock.val();
            self.line_end_bytes[k].clock.next = self.clock.val();
            self.line_ipv6[k].clock.next = self.clock.val();
            self.line_udp_checksum[k].clock.next = self.clock.val();
            self.line_data[k].d.next = self.line_data[k].q.val();
            self.line_valid[k].d.next = self.line_valid[k].q.val();
            self.line_last[k].d.next = self.line_last[k].q.val();
            self.line_end_bytes[k].d.next = self.line_end_bytes[k].q.val();
            self.line_ipv6[k].d.next = self.line_ipv6[k].q.val();
            self.line_udp_checksum[k].d.next = self.line_udp_checksum[k].q.val();
        }
        self.down.tdata.next = self.out_data.q.val();
        self.down.tkeep.next = self.out_keep.q.val();
        self.down.tlast.next = self.out_last.q.val();
        self.down.tvalid.next = self.out_valid.q.val();
        self.down_ipv6.next = self.out_ipv6.q.val();
        self.down_udp_checksum.next = self.out_udp_checksum.q.val();

        // The whole line moves when the output register takes its end, and
        // not while an extra ICRC beat is going out.
        self.out_free.next = !self.out_valid.q.val() | self.down.tready.val();
        self.advance.next = self.out_free.val() & !self.extra_pending.q.val();
        self.up.tready.next = self.advance.val();

        self.generator.clock.next = self.clock.val();
        self.generator.reset.next = self.reset.val();
        self.generator.advance.next = self.advance.val();
        self.generator.beat_valid.next = self.up.tvalid.val();
        self.generator.beat_first.next = !self.in_frame.q.val();
        self.generator.beat_ipv6.next = self.up_ipv6.val();
        self.generator.beat_end.next = self.up.tlast.val();
        self.generator.beat_end_bytes.next = self.up_end_bytes.val();
        self.generator.beat_data.next = self.up.tdata.val();

        self.end_lanes.next = bit_cast::<7, 6>(self.line_end_bytes[5].q.val());
        if !self.line_end_bytes[5].q.val().any() {
            self.end_lanes.next = bits::<7>(64);
        }
        self.place_rotate.operand.next = bit_cast::<DATA_BITS, 32>(self.generator.icrc.val());
        self.place_rotate.amount.next = bits::<6>(0) - self.line_end_bytes[5].q.val();
        self.place_select.when_set.next = self.place_rotate.rotated.val();
        self.place_select.when_clear.next = bits::<DATA_BITS>(0);
        self.place_select.lane_select.next = self.all_lanes.val() << self.end_lanes.val();
        self.spill.next = self.line_last[5].q.val() & (self.end_lanes.val() > bits::<7>(60));

        if self.advance.val() {
            self.line_data[0].d.next = self.up.tdata.val();
            self.line_valid[0].d.next = self.up.tvalid.val();
            self.line_last[0].d.next = self.up.tlast.val();
            self.line_end_bytes[0].d.next = self.up_end_bytes.val();
            self.line_ipv6[0].d.next = self.up_ipv6.val();
            self.line_udp_checksum[0].d.next = self.up_udp_checksum.val();
            for k in 1..6 {
                self.line_data[k].d.next = self.line_data[k - 1].q.val();
                self.line_valid[k].d.next = self.line_valid[k - 1].q.val();
                self.line_last[k].d.next = self.line_last[k - 1].q.val();
                self.line_end_bytes[k].d.next = self.line_end_bytes[k - 1].q.val();
                self.line_ipv6[k].d.next = self.line_ipv6[k - 1].q.val();
                self.line_udp_checksum[k].d.next = self.line_udp_checksum[k - 1].q.val();
            }
            if self.up.tvalid.val() {
                self.in_frame.d.next = !self.up.tlast.val();
            }
            // The end of the line goes out, with the ICRC after its last
            // byte if it ends a frame.
            self.out_valid.d.next = self.line_valid[5].q.val();
            self.out_data.d.next = self.line_data[5].q.val();
            self.out_keep.d.next = self.all_lanes.val();
            self.out_last.d.next = self.line_last[5].q.val() & !self.spill.val();
            self.out_ipv6.d.next = self.line_ipv6[5].q.val();
            self.out_udp_checksum.d.next = self.line_udp_checksum[5].q.val();
            if self.line_last[5].q.val() {
                self.out_data.d.next = self.line_data[5].q.val() | self.place_select.chosen.val();
                if !self.spill.val() {
                    self.out_keep.d.next = !(self.all_lanes.val() << (self.end_lanes.val() + 4));
                }
            }
            if self.line_valid[5].q.val() & self.spill.val() {
                self.extra_pending.d.next = true;
                self.extra_icrc.d.next = bit_cast::<32, DATA_BITS>(self.place_rotate.rotated.val());
                self.extra_keep.d.next = !(self.all_lanes.val() << (self.end_lanes.val() - 60));
            }
        } else if self.out_free.val() {
            // extra_pending: the rest of the ICRC in a beat of its own.
            self.out_valid.d.next = true;
            self.out_data.d.next = bit_cast::<512, 32>(self.extra_icrc.q.val());
            self.out_keep.d.next = self.extra_keep.q.val();
            self.out_last.d.next = true;
            self.extra_pending.d.next = false;
        }

        if self.reset.val() {
            self.in_frame.d.next = false;
            self.out_valid.d.next = false;
            self.extra_pending.d.next = false;
            for k in 0..6 {
                self.line_valid[k].d.next = false;
            }
        }
    }
}
