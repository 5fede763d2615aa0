//! `TxUdpChecksum`: fills in the UDP checksum of the frames that need one
//! (every IPv6 frame, RFC 8200 section 8.1; IPv4 frames whose record asked
//! for it), storing such a frame until its last byte is summed because the
//! checksum travels in the header; other frames pass straight through.
//!
//! Ports: `clock`, `reset` (synchronous, high: empties the block); `up`
//! (AXI-Stream in: whole frames with the ICRC and a zero UDP checksum, as
//! `TxIcrcAppend` makes them) with `up_ipv6` and `up_udp_checksum` beside
//! each beat; `down` (AXI-Stream out).
//!
//! The checksum (RFC 768) is the ones'-complement sum of the pseudo-header
//! (addresses, protocol 17, UDP length) and the UDP datagram (header with a
//! zero checksum, BTH, extension headers, payload, pad, ICRC), complemented,
//! 0 sent as 0xFFFF. In the frame the addresses sit right before the UDP
//! header, so that is the sum of the frame's 16-bit words from the source
//! address on (byte 26 on IPv4, 22 on IPv6) plus 17 plus the UDP length
//! again. Ones'-complement sums commute with byte swapping (RFC 1071), so
//! the block adds the little-endian lane pairs as they are and the result
//! lands in the checksum lanes without swapping back.
//!
//! Storage: a 128-beat FIFO (two frames of the largest size, so frames can
//! stream through at full rate while the next one is summed) and a 128-entry
//! checksum FIFO, which cannot overflow: each entry belongs to a frame whose
//! first beat is still stored.
//!
//! Latency (no stalls): 3 cycles for a beat of a frame without a checksum
//! (readable FIFO pointer, registered RAM read, output register); the first
//! beat of a checksummed frame leaves 7 cycles after its frame's last beat
//! came in (five sum stages, the checksum FIFO, the output register). Each
//! sum stage has at most two adder levels. A
//! release delay D set at construction ([`TxUdpChecksum::new`]) holds every
//! beat at least D + 2 cycles instead of 3.
//!
//! Throughput: one beat per cycle in and out. Without a release delay,
//! frames without a checksum leave back to back, but a checksummed frame
//! cannot start before it has fully arrived, so it leaves a gap behind a
//! shorter predecessor. With [`FULL_RATE_RELEASE_DELAY`] (70 cycles, the
//! smallest that covers the largest frame, 66 beats) every frame is delayed
//! alike and any mix leaves back to back.

use crate::primitives::stream::{AxisSink, AxisSource, DATA_BITS, KEEP_BITS};
use crate::primitives::sync_fifo::SyncFifo;
use crate::primitives::wide::bits_from_bytes;
use rust_hdl::prelude::*;

/// One stored beat.
#[derive(Clone, Copy, Debug, Default, PartialEq, LogicStruct)]
pub struct HeldBeat {
    pub data: Bits<DATA_BITS>,
    pub keep: Bits<KEEP_BITS>,
    pub last: Bit,
    pub first: Bit,
    /// The beat's frame gets a UDP checksum.
    pub checksum: Bit,
    pub ipv6: Bit,
}

/// Frame bytes of the UDP checksum field.
pub const IPV4_CHECKSUM_AT: usize = 40;
pub const IPV6_CHECKSUM_AT: usize = 60;
/// First byte summed: the source address.
pub const IPV4_SUM_FROM: usize = 26;
pub const IPV6_SUM_FROM: usize = 22;

/// A first beat with the bytes before `from` and the checksum field
/// cleared.
fn first_beat_and(from: usize, checksum_at: usize) -> Bits<DATA_BITS> {
    let mut bytes = [0xFFu8; 64];
    bytes[..from].iter_mut().for_each(|b| *b = 0);
    bytes[checksum_at] = 0;
    bytes[checksum_at + 1] = 0;
    bits_from_bytes(&bytes)
}

/// Every byte but the checksum field.
fn checksum_clear(checksum_at: usize) -> Bits<DATA_BITS> {
    first_beat_and(0, checksum_at)
}

#[derive(LogicBlock)]
pub struct TxUdpChecksum {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub up: AxisSink<DATA_BITS, KEEP_BITS>,
    pub up_ipv6: Signal<In, Bit>,
    pub up_udp_checksum: Signal<In, Bit>,
    pub down: AxisSource<DATA_BITS, KEEP_BITS>,
    beats: SyncFifo<HeldBeat, 7, 8>,
    sums: SyncFifo<Bits<16>, 7, 8>,
    in_frame: DFF<Bit>,
    // Sum stage 1: two partial sums of the accepted beat.
    part_a: DFF<Bits<66>>,
    part_b: DFF<Bits<66>>,
    part_extra: DFF<Bits<17>>,
    part_valid: DFF<Bit>,
    part_first: DFF<Bit>,
    part_last: DFF<Bit>,
    part_checksum: DFF<Bit>,
    // Sum stage 2: the beat's sum.
    beat_sum: DFF<Bits<67>>,
    beat_valid: DFF<Bit>,
    beat_first: DFF<Bit>,
    /// The beat ends a frame that gets a checksum.
    beat_ends_sum: DFF<Bit>,
    // Sum stage 3: the running sum of the frame.
    total: DFF<Bits<80>>,
    chunks_valid: DFF<Bit>,
    // Sum stages 4 and 5: reduce to 16 bits.
    chunk_sum: DFF<Bits<19>>,
    fold_valid: DFF<Bit>,
    out_data: DFF<Bits<DATA_BITS>>,
    out_keep: DFF<Bits<KEEP_BITS>>,
    out_last: DFF<Bit>,
    out_valid: DFF<Bit>,
    /// Bit k: a beat came in k + 1 edges ago.
    arrivals: DFF<Bits<128>>,
    /// Stored beats old enough to leave.
    eligible: DFF<Bits<8>>,
    /// Which `arrivals` bit makes a beat eligible (the release delay).
    release_tap: Constant<Bits<7>>,
    release_immediately: Constant<Bit>,
    newly_eligible: Signal<Local, Bit>,
    popping: Signal<Local, Bit>,
    ipv4_first_and: Constant<Bits<DATA_BITS>>,
    ipv6_first_and: Constant<Bits<DATA_BITS>>,
    ipv4_checksum_clear: Constant<Bits<DATA_BITS>>,
    ipv6_checksum_clear: Constant<Bits<DATA_BITS>>,
    accepted: Signal<Local, Bit>,
    summed: Signal<Local, Bits<DATA_BITS>>,
    running: Signal<Local, Bits<80>>,
    fold_1: Signal<Local, Bits<17>>,
    fold_2: Signal<Local, Bits<16>>,
    frame_checksum: Signal<Local, Bits<16>>,
    head: Signal<Local, HeldBeat>,
    head_needs_sum: Signal<Local, Bit>,
    can_pop: Signal<Local, Bit>,
    out_free: Signal<Local, Bit>,
}

impl Default for TxUdpChecksum {
    fn default() -> Self {
        Self::new(0)
    }
}

/// A release delay under which frames of any length, checksummed or not,
/// leave back to back when they came in back to back: the largest frame
/// (66 beats) has arrived and been summed by the time its first beat is
/// this old (69 leaves a gap before such a frame, `hdl/tests/tx_udp_checksum.rs`).
pub const FULL_RATE_RELEASE_DELAY: usize = 70;

impl TxUdpChecksum {
    /// `release_delay`: cycles a beat stays at least (0..=128). Zero lets
    /// frames without a checksum cut through; [`FULL_RATE_RELEASE_DELAY`]
    /// delays every frame alike so that checksummed frames never leave a
    /// gap.
    pub fn new(release_delay: usize) -> Self {
        assert!(release_delay <= 128, "release delay 0..=128 cycles");
        TxUdpChecksum {
            clock: Default::default(),
            reset: Default::default(),
            up: Default::default(),
            up_ipv6: Default::default(),
            up_udp_checksum: Default::default(),
            down: Default::default(),
            beats: Default::default(),
            sums: Default::default(),
            in_frame: Default::default(),
            part_a: Default::default(),
            part_b: Default::default(),
            part_extra: Default::default(),
            part_valid: Default::default(),
            part_first: Default::default(),
            part_last: Default::default(),
            part_checksum: Default::default(),
            beat_sum: Default::default(),
            beat_valid: Default::default(),
            beat_first: Default::default(),
            beat_ends_sum: Default::default(),
            total: Default::default(),
            chunks_valid: Default::default(),
            chunk_sum: Default::default(),
            fold_valid: Default::default(),
            out_data: Default::default(),
            out_keep: Default::default(),
            out_last: Default::default(),
            out_valid: Default::default(),
            arrivals: Default::default(),
            eligible: Default::default(),
            release_tap: Constant::new(bits(release_delay.saturating_sub(1) as u64)),
            release_immediately: Constant::new(release_delay == 0),
            newly_eligible: Default::default(),
            popping: Default::default(),
            ipv4_first_and: Constant::new(first_beat_and(IPV4_SUM_FROM, IPV4_CHECKSUM_AT)),
            ipv6_first_and: Constant::new(first_beat_and(IPV6_SUM_FROM, IPV6_CHECKSUM_AT)),
            ipv4_checksum_clear: Constant::new(checksum_clear(IPV4_CHECKSUM_AT)),
            ipv6_checksum_clear: Constant::new(checksum_clear(IPV6_CHECKSUM_AT)),
            accepted: Default::default(),
            summed: Default::default(),
            running: Default::default(),
            fold_1: Default::default(),
            fold_2: Default::default(),
            frame_checksum: Default::default(),
            head: Default::default(),
            head_needs_sum: Default::default(),
            can_pop: Default::default(),
            out_free: Default::default(),
        }
    }
}

impl Logic for TxUdpChecksum {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            in_frame,
            part_a,
            part_b,
            part_extra,
            part_valid,
            part_first,
            part_last,
            part_checksum,
            beat_sum,
            beat_valid,
            beat_first,
            beat_ends_sum,
            total,
            chunks_valid,
            chunk_sum,
            fold_valid,
            out_data,
            out_keep,
            out_last,
            out_valid,
            arrivals,
            eligible
        );
        self.beats.clock.next = self.clock.val();
        self.beats.reset.next = self.reset.val();
        self.sums.clock.next = self.clock.val();
        self.sums.reset.next = self.reset.val();
        self.down.tdata.next = self.out_data.q.val();
        self.down.tkeep.next = self.out_keep.q.val();
        self.down.tlast.next = self.out_last.q.val();
        self.down.tvalid.next = self.out_valid.q.val();

        // ---- write side: every beat is stored and summed.
        self.up.tready.next = !self.beats.full.val();
        self.accepted.next = self.up.tvalid.val() & !self.beats.full.val();
        self.beats.write.next = self.accepted.val();
        self.beats.data_in.next.data = self.up.tdata.val();
        self.beats.data_in.next.keep = self.up.tkeep.val();
        self.beats.data_in.next.last = self.up.tlast.val();
        self.beats.data_in.next.first = !self.in_frame.q.val();
        self.beats.data_in.next.checksum = self.up_udp_checksum.val();
        self.beats.data_in.next.ipv6 = self.up_ipv6.val();
        if self.accepted.val() {
            self.in_frame.d.next = !self.up.tlast.val();
        }
        self.summed.next = self.up.tdata.val();
        if !self.in_frame.q.val() {
            if self.up_ipv6.val() {
                self.summed.next = self.up.tdata.val() & self.ipv6_first_and.val();
            } else {
                self.summed.next = self.up.tdata.val() & self.ipv4_first_and.val();
            }
        }
        // The ones'-complement sum of 16-bit words is their sum mod 0xFFFF,
        // and 2^16 = 1 mod 0xFFFF, so eight 64-bit lane words can be added
        // with plain carries and folded to 16 bits at the end of the frame.
        // (A 64-bit lane word is four byte-swapped wire words.)
        self.part_valid.d.next = self.accepted.val();
        if self.accepted.val() {
            self.part_a.d.next = (bit_cast::<66, 64>(self.summed.val().get_bits::<64>(0))
                + bit_cast::<66, 64>(self.summed.val().get_bits::<64>(64)))
                + (bit_cast::<66, 64>(self.summed.val().get_bits::<64>(128))
                    + bit_cast::<66, 64>(self.summed.val().get_bits::<64>(192)));
            self.part_b.d.next = (bit_cast::<66, 64>(self.summed.val().get_bits::<64>(256))
                + bit_cast::<66, 64>(self.summed.val().get_bits::<64>(320)))
                + (bit_cast::<66, 64>(self.summed.val().get_bits::<64>(384))
                    + bit_cast::<66, 64>(self.summed.val().get_bits::<64>(448)));
            self.part_first.d.next = !self.in_frame.q.val();
            self.part_last.d.next = self.up.tlast.val();
            self.part_checksum.d.next = self.up_udp_checksum.val();
            // The pseudo-header's protocol (17, byte-swapped: 0x1100) and its
            // copy of the UDP length (frame bytes 38-39 or 58-59).
            self.part_extra.d.next = bits::<17>(0);
            if !self.in_frame.q.val() {
                if self.up_ipv6.val() {
                    self.part_extra.d.next =
                        bit_cast::<17, 16>(self.up.tdata.val().get_bits::<16>(464)) + 0x1100;
                } else {
                    self.part_extra.d.next =
                        bit_cast::<17, 16>(self.up.tdata.val().get_bits::<16>(304)) + 0x1100;
                }
            }
        }

        // ---- sum stage 2: the beat's sum (one three-input adder).
        self.beat_valid.d.next = self.part_valid.q.val();
        self.beat_first.d.next = self.part_first.q.val();
        self.beat_ends_sum.d.next = self.part_last.q.val() & self.part_checksum.q.val();
        self.beat_sum.d.next = bit_cast::<67, 66>(self.part_a.q.val())
            + bit_cast::<67, 66>(self.part_b.q.val())
            + bit_cast::<67, 17>(self.part_extra.q.val());

        // ---- sum stage 3: add the beat to its frame's running sum (at most
        // 66 beats of under 2^67 each: 80 bits never overflow).
        self.running.next = self.total.q.val();
        if self.beat_first.q.val() {
            self.running.next = bits::<80>(0);
        }
        self.running.next = self.running.val() + bit_cast::<80, 67>(self.beat_sum.q.val());
        self.chunks_valid.d.next = false;
        if self.beat_valid.q.val() {
            self.total.d.next = self.running.val();
            self.chunks_valid.d.next = self.beat_ends_sum.q.val();
        }

        // ---- sum stage 4: the five 16-bit chunks of the frame's sum.
        self.chunk_sum.d.next = (bit_cast::<19, 16>(self.total.q.val().get_bits::<16>(0))
            + bit_cast::<19, 16>(self.total.q.val().get_bits::<16>(16)))
            + (bit_cast::<19, 16>(self.total.q.val().get_bits::<16>(32))
                + bit_cast::<19, 16>(self.total.q.val().get_bits::<16>(48)))
            + bit_cast::<19, 16>(self.total.q.val().get_bits::<16>(64));
        self.fold_valid.d.next = self.chunks_valid.q.val();

        // ---- sum stage 5: fold the carries in, complement, queue.
        self.fold_1.next = bit_cast::<17, 16>(self.chunk_sum.q.val().get_bits::<16>(0))
            + bit_cast::<17, 3>(self.chunk_sum.q.val().get_bits::<3>(16));
        self.fold_2.next = self.fold_1.val().get_bits::<16>(0)
            + bit_cast::<16, 1>(self.fold_1.val().get_bits::<1>(16));
        self.frame_checksum.next = !self.fold_2.val();
        if !self.frame_checksum.val().any() {
            // RFC 768: a computed zero is sent as all ones.
            self.frame_checksum.next = bits::<16>(0xFFFF);
        }
        self.sums.write.next = self.fold_valid.q.val();
        self.sums.data_in.next = self.frame_checksum.val();

        // ---- read side: a checksummed frame waits for its sum.
        self.head.next = self.beats.data_out.val();
        self.head_needs_sum.next = self.head.val().first & self.head.val().checksum;
        self.can_pop.next = !self.beats.empty.val()
            & self.eligible.q.val().any()
            & (!self.head_needs_sum.val() | !self.sums.empty.val());
        self.out_free.next = !self.out_valid.q.val() | self.down.tready.val();
        self.popping.next = self.out_free.val() & self.can_pop.val();
        self.beats.read.next = self.popping.val();
        self.sums.read.next = self.popping.val() & self.head_needs_sum.val();
        // Release delay: a beat becomes eligible to leave that many edges
        // after it came in (at once with no delay).
        self.arrivals.d.next =
            (self.arrivals.q.val() << 1) | bit_cast::<128, 1>(self.accepted.val().into());
        self.newly_eligible.next = self
            .arrivals
            .q
            .val()
            .get_bit(self.release_tap.val().index());
        if self.release_immediately.val() {
            self.newly_eligible.next = self.accepted.val();
        }
        if self.newly_eligible.val() & !self.popping.val() {
            self.eligible.d.next = self.eligible.q.val() + 1;
        } else if !self.newly_eligible.val() & self.popping.val() {
            self.eligible.d.next = self.eligible.q.val() - 1;
        }
        if self.out_free.val() {
            self.out_valid.d.next = self.can_pop.val();
            self.out_data.d.next = self.head.val().data;
            self.out_keep.d.next = self.head.val().keep;
            self.out_last.d.next = self.head.val().last;
            if self.head_needs_sum.val() {
                if self.head.val().ipv6 {
                    self.out_data.d.next = (self.head.val().data & self.ipv6_checksum_clear.val())
                        | (bit_cast::<DATA_BITS, 16>(self.sums.data_out.val()) << 480);
                } else {
                    self.out_data.d.next = (self.head.val().data & self.ipv4_checksum_clear.val())
                        | (bit_cast::<DATA_BITS, 16>(self.sums.data_out.val()) << 320);
                }
            }
        }

        if self.reset.val() {
            self.in_frame.d.next = false;
            self.part_valid.d.next = false;
            self.beat_valid.d.next = false;
            self.chunks_valid.d.next = false;
            self.fold_valid.d.next = false;
            self.out_valid.d.next = false;
            self.arrivals.d.next = bits::<128>(0);
            self.eligible.d.next = bits::<8>(0);
        }
    }
}
