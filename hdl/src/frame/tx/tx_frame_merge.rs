//! `TxFrameMerge`: merges each frame job's header bytes with its payload
//! beats, shifted to start right after the header, and zero pad, into the
//! frame stream (everything but the ICRC).
//!
//! Ports: `clock`, `reset` (synchronous, high: drops the frame in
//! progress); `job` / `job_valid` (in) / `job_ready` (out): one
//! [`TxJob`] per frame; `payload` (AXI-Stream in, byte 0 of the payload in
//! lane 0, exactly `job.payload_beats` beats per frame); `frame` (AXI-Stream
//! out) with `frame_ipv6`, `frame_udp_checksum` and `frame_end_bytes` (out;
//! bytes in the last beat mod 64, zero on other beats) beside every beat;
//! `dropped_frames` and `payload_last_errors` (out, 16-bit wrapping
//! counters): jobs swallowed because the codec would refuse them, and
//! payload beats whose `tlast` disagreed with the job's beat count (the
//! job's count is followed either way).
//!
//! Latency: 2 cycles from a job and its first payload beat being offered
//! to the first output beat (job register, output register); the next job
//! loads while the current frame's last beat goes out.
//!
//! Throughput: one output beat per cycle, back to back across frames: a
//! frame of H header bytes and L payload bytes takes ceil((H + L + pad) /
//! 64) cycles and consumes ceil(L / 64) payload beats, so the payload waits
//! the difference, one or two cycles, per frame.
//!
//! The header is 54..=102 bytes, so the payload lands at lane
//! s = H mod 64 of the beat after `H div 64` header-only beats: each payload
//! beat is rotated up by s lanes once; its low 64 - s bytes fill lanes s..63
//! of the current output beat and its high s bytes wait in `carried` for
//! lanes 0..s-1 of the next one, which the header tail fills instead for
//! the first payload beat. `payload.tready` is combinational from
//! `frame.tready` (wrap the block in register slices at a timing boundary).

use crate::codes::opcode_headers::{ext, OPCODE_TABLE};
use crate::frame::tx::tx_header_prep::TxJob;
use crate::primitives::byte_lane_select::ByteLaneSelect;
use crate::primitives::byte_rotator::ByteRotator;
use crate::primitives::stream::{AxisSink, AxisSource, DATA_BITS, KEEP_BITS};
use rust_hdl::prelude::*;

/// Every header length the builder produces: Ethernet, IPv4 or IPv6, UDP,
/// BTH and each opcode's extension headers.
pub fn header_lengths() -> Vec<usize> {
    let mut lens: Vec<usize> = OPCODE_TABLE
        .iter()
        .flat_map(|&(_, set, _)| [20, 40].map(|ip| 14 + ip + 20 + usize::from(ext::wire_len(set))))
        .collect();
    lens.sort_unstable();
    lens.dedup();
    lens
}

#[derive(LogicBlock)]
pub struct TxFrameMerge {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub job: Signal<In, TxJob>,
    pub job_valid: Signal<In, Bit>,
    pub job_ready: Signal<Out, Bit>,
    pub payload: AxisSink<DATA_BITS, KEEP_BITS>,
    pub frame: AxisSource<DATA_BITS, KEEP_BITS>,
    pub frame_ipv6: Signal<Out, Bit>,
    pub frame_udp_checksum: Signal<Out, Bit>,
    pub frame_end_bytes: Signal<Out, Bits<6>>,
    pub dropped_frames: Signal<Out, Bits<16>>,
    pub payload_last_errors: Signal<Out, Bits<16>>,
    payload_mask: ByteLaneSelect<DATA_BITS, KEEP_BITS>,
    rotate: ByteRotator<DATA_BITS>,
    merge: ByteLaneSelect<DATA_BITS, KEEP_BITS>,
    cur: DFF<TxJob>,
    cur_valid: DFF<Bit>,
    /// Output beats sent so far in this frame (payload beats swallowed, for
    /// a dropped frame).
    beat: DFF<Bits<8>>,
    /// The previous payload beat, rotated: its lanes below s open the next
    /// output beat.
    carried: DFF<Bits<DATA_BITS>>,
    out_data: DFF<Bits<DATA_BITS>>,
    out_keep: DFF<Bits<KEEP_BITS>>,
    out_last: DFF<Bit>,
    out_valid: DFF<Bit>,
    out_ipv6: DFF<Bit>,
    out_udp_checksum: DFF<Bit>,
    out_end_bytes: DFF<Bits<6>>,
    dropped: DFF<Bits<16>>,
    last_errors: DFF<Bits<16>>,
    all_lanes: Constant<Bits<KEEP_BITS>>,
    header_beats: Signal<Local, Bits<8>>,
    split: Signal<Local, Bits<6>>,
    payload_index: Signal<Local, Bits<8>>,
    consuming: Signal<Local, Bit>,
    payload_is_last: Signal<Local, Bit>,
    frame_is_last: Signal<Local, Bit>,
    advance: Signal<Local, Bit>,
    step: Signal<Local, Bit>,
    finishing: Signal<Local, Bit>,
}

impl Default for TxFrameMerge {
    fn default() -> Self {
        // Rotating lane 0 up to lane s is a rotation down by 64 - s. The
        // headers need 12 of the 64 rotations, but a rotator with all 64 is
        // a six-stage barrel (1536 LUT6 in Yosys) and smaller than a case
        // over the 12.
        let amounts: Vec<usize> = (0..KEEP_BITS).collect();
        TxFrameMerge {
            clock: Default::default(),
            reset: Default::default(),
            job: Default::default(),
            job_valid: Default::default(),
            job_ready: Default::default(),
            payload: Default::default(),
            frame: Default::default(),
            frame_ipv6: Default::default(),
            frame_udp_checksum: Default::default(),
            frame_end_bytes: Default::default(),
            dropped_frames: Default::default(),
            payload_last_errors: Default::default(),
            payload_mask: Default::default(),
            rotate: ByteRotator::new(&amounts),
            merge: Default::default(),
            cur: Default::default(),
            cur_valid: Default::default(),
            beat: Default::default(),
            carried: Default::default(),
            out_data: Default::default(),
            out_keep: Default::default(),
            out_last: Default::default(),
            out_valid: Default::default(),
            out_ipv6: Default::default(),
            out_udp_checksum: Default::default(),
            out_end_bytes: Default::default(),
            dropped: Default::default(),
            last_errors: Default::default(),
            all_lanes: Constant::new(bits(u64::MAX)),
            header_beats: Default::default(),
            split: Default::default(),
            payload_index: Default::default(),
            consuming: Default::default(),
            payload_is_last: Default::default(),
            frame_is_last: Default::default(),
            advance: Default::default(),
            step: Default::default(),
            finishing: Default::default(),
        }
    }
}

impl Logic for TxFrameMerge {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            cur,
            cur_valid,
            beat,
            carried,
            out_data,
            out_keep,
            out_last,
            out_valid,
            out_ipv6,
            out_udp_checksum,
            out_end_bytes,
            dropped,
            last_errors
        );
        self.frame.tdata.next = self.out_data.q.val();
        self.frame.tkeep.next = self.out_keep.q.val();
        self.frame.tlast.next = self.out_last.q.val();
        self.frame.tvalid.next = self.out_valid.q.val();
        self.frame_ipv6.next = self.out_ipv6.q.val();
        self.frame_udp_checksum.next = self.out_udp_checksum.q.val();
        self.frame_end_bytes.next = self.out_end_bytes.q.val();
        self.dropped_frames.next = self.dropped.q.val();
        self.payload_last_errors.next = self.last_errors.q.val();

        // H < 128, so H div 64 is bit 6 and the payload lane is H mod 64.
        self.header_beats.next = bit_cast::<8, 7>(self.cur.q.val().header_len >> 6);
        self.split.next = bit_cast::<6, 7>(self.cur.q.val().header_len);
        self.payload_index.next = self.beat.q.val() - self.header_beats.val();
        if self.cur.q.val().drop {
            self.consuming.next = self.beat.q.val() < self.cur.q.val().payload_beats;
            self.payload_index.next = self.beat.q.val();
            self.frame_is_last.next = (self.beat.q.val() + 1) >= self.cur.q.val().payload_beats;
        } else {
            self.consuming.next = (self.beat.q.val() >= self.header_beats.val())
                & (self.payload_index.val() < self.cur.q.val().payload_beats);
            self.frame_is_last.next =
                (self.beat.q.val() + 1) == bit_cast::<8, 7>(self.cur.q.val().frame_beats);
        }
        self.payload_is_last.next =
            (self.payload_index.val() + 1) == self.cur.q.val().payload_beats;

        // Output register free this edge; a frame step needs it (unless the
        // frame is dropped) and, when it takes a payload beat, that beat.
        self.advance.next = !self.out_valid.q.val() | self.frame.tready.val();
        self.step.next = self.cur_valid.q.val()
            & (self.advance.val() | self.cur.q.val().drop)
            & (!self.consuming.val() | self.payload.tvalid.val());
        self.payload.tready.next = self.cur_valid.q.val()
            & (self.advance.val() | self.cur.q.val().drop)
            & self.consuming.val();
        self.finishing.next = self.step.val() & self.frame_is_last.val();
        self.job_ready.next = !self.cur_valid.q.val() | self.finishing.val();

        // Zero the payload's bytes past its length (they become the pad).
        self.payload_mask.when_set.next = self.payload.tdata.val();
        self.payload_mask.when_clear.next = bits::<DATA_BITS>(0);
        self.payload_mask.lane_select.next = self.all_lanes.val();
        if self.payload_is_last.val() & self.cur.q.val().payload_last_bytes.any() {
            self.payload_mask.lane_select.next =
                !(self.all_lanes.val() << self.cur.q.val().payload_last_bytes);
        }
        self.rotate.operand.next = self.payload_mask.chosen.val();
        self.rotate.amount.next = bits::<6>(0) - self.split.val();

        // Lanes s..63 from this payload beat (none once the payload is
        // spent); lanes below s from the header or the previous beat.
        self.merge.when_set.next = bits::<DATA_BITS>(0);
        if self.consuming.val() {
            self.merge.when_set.next = self.rotate.rotated.val();
        }
        self.merge.lane_select.next = self.all_lanes.val() << self.split.val();
        if self.beat.q.val() < self.header_beats.val() {
            self.merge.lane_select.next = bits::<KEEP_BITS>(0);
        }
        self.merge.when_clear.next = self.carried.q.val();
        if self.beat.q.val() == 0 {
            self.merge.when_clear.next = bit_cast::<DATA_BITS, 1024>(self.cur.q.val().header_lanes);
        } else if (self.beat.q.val() == 1) & self.header_beats.val().any() {
            self.merge.when_clear.next =
                bit_cast::<DATA_BITS, 1024>(self.cur.q.val().header_lanes >> 512);
        }

        if self.advance.val() {
            self.out_valid.d.next = false;
        }
        if self.step.val() {
            self.beat.d.next = self.beat.q.val() + 1;
            if self.consuming.val() {
                self.carried.d.next = self.rotate.rotated.val();
                if self.payload.tlast.val() != self.payload_is_last.val() {
                    self.last_errors.d.next = self.last_errors.q.val() + 1;
                }
            }
            if !self.cur.q.val().drop {
                self.out_valid.d.next = true;
                self.out_data.d.next = self.merge.chosen.val();
                self.out_last.d.next = self.frame_is_last.val();
                self.out_keep.d.next = self.all_lanes.val();
                self.out_end_bytes.d.next = bits::<6>(0);
                if self.frame_is_last.val() & self.cur.q.val().frame_last_bytes.any() {
                    self.out_keep.d.next =
                        !(self.all_lanes.val() << self.cur.q.val().frame_last_bytes);
                }
                if self.frame_is_last.val() {
                    self.out_end_bytes.d.next = self.cur.q.val().frame_last_bytes;
                }
                self.out_ipv6.d.next = self.cur.q.val().ipv6;
                self.out_udp_checksum.d.next = self.cur.q.val().udp_checksum;
            }
            if self.finishing.val() & self.cur.q.val().drop {
                self.dropped.d.next = self.dropped.q.val() + 1;
            }
        }
        if self.job_ready.val() {
            self.cur.d.next = self.job.val();
            self.cur_valid.d.next = self.job_valid.val();
            self.beat.d.next = bits::<8>(0);
        }

        if self.reset.val() {
            self.cur_valid.d.next = false;
            self.out_valid.d.next = false;
            self.dropped.d.next = bits::<16>(0);
            self.last_errors.d.next = bits::<16>(0);
        }
    }
}
