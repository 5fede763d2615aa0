//! `DmaWriteMover`: writes one payload, given as a stream of lane-0-aligned
//! beats, to the one or two host segments its MR translation gave (the
//! page split of [`MrTranslate`](crate::dma::mr_translate::MrTranslate)), as
//! DMA write requests on a [`DmaWritePort`]: the bytes rotated onto their
//! host address lanes, one request per segment framed by `first` / `last`,
//! each beat with its 64-byte-aligned address and contiguous `keep`. The
//! write side shared by `responder_datapath` (WRITE / SEND payloads, the
//! model's `write_segments` in `responder::execute` / `send_placement`)
//! and `response_placement` (READ response payloads and atomic ACK values,
//! the model's `write_segments` in `completer::place_check`'s caller);
//! its oracle is the model's `mr::segment_spans` (which bytes of the
//! payload go to which physical address, what `write_segments` writes)
//! and [`request_beats`] here (how a request is cut into beats).
//!
//! # Ports
//!
//! - `clock`; `reset` (synchronous, high): drops the job in progress and
//!   empties the output buffer.
//! - Job (valid/ready, `job_*`): `job_len` payload bytes (1..=4096) to
//!   write to `job_seg0_addr` / `job_seg0_len` and, with
//!   `job_two_segments`, then to `job_seg1_addr` / `job_seg1_len`; the
//!   segment lengths add up to `job_len` and a second segment starts on a
//!   page (4 KiB or larger) boundary, as the MR page split gives them.
//!   `job_ready` is high while no job is in progress and also in the
//!   cycle the current job's last beat is sent (`job_done`), so jobs
//!   follow each other without an idle cycle.
//! - Payload (valid/ready, `in_valid` / `in_ready` / `in_data`): the job's
//!   `ceil(job_len / 64)` beats, byte 0 in lane 0 of the first; bytes past
//!   `job_len` in the last beat are ignored. `in_ready` depends on
//!   `in_valid` (a beat is taken only in a cycle it can be sent on).
//! - `dma` ([`DmaWritePort`]): the requests, from a two-entry output
//!   buffer (registers). The byte for host address `x` sits in lane
//!   `x mod 64`, `dma.addr` is the beat's 64-byte-aligned address and
//!   `dma.req_addr` / `dma.req_len` the segment's, on every beat.
//! - `other` ([`DmaWriteHost`]): another writer's bursts, passed into the
//!   same output buffer; only while no job is in progress (the user keeps
//!   them apart: `responder_datapath`'s atomic write waits for `idle`).
//! - `busy` (a job in progress), `job_done` (its last beat is sent this
//!   cycle), `idle` (no job and the output buffer empty: every beat taken
//!   so far is out).
//!
//! # Latency and throughput
//!
//! A job taken in cycle `t` sends its first beat into the output buffer at
//! `t + 1` (out on `dma` at `t + 2`), then one beat per cycle while the
//! payload and `dma.ready` keep up: `ceil((seg0_addr mod 64 + seg0_len) /
//! 64) + ceil(seg1_len / 64)` beats (the second segment starts in lane 0).
//! The next job's first beat follows
//! the previous job's last with no gap. The rotation is one
//! [`ByteRotator`] and a lane merge of the previous input beat: no
//! pipeline stage beyond the output buffer. No RAM: the registers are the
//! previous beat and the two-entry output buffer (synthesized size:
//! `docs/status.md`).

use crate::dma::dma_port::{DmaWriteHost, DmaWritePort};
use crate::primitives::byte_lane_select::ByteLaneSelect;
use crate::primitives::byte_rotator::ByteRotator;
use crate::primitives::skid_buffer::SkidBuffer;
use rust_hdl::prelude::*;

/// One beat of the DMA write port.
#[derive(Clone, Copy, Debug, Default, PartialEq, LogicStruct)]
pub struct DmaBeat {
    pub addr: Bits<64>,
    pub data: Bits<512>,
    pub keep: Bits<64>,
    pub first: Bit,
    pub last: Bit,
    pub req_addr: Bits<64>,
    pub req_len: Bits<13>,
}

#[derive(LogicBlock)]
pub struct DmaWriteMover {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,

    pub job_valid: Signal<In, Bit>,
    pub job_ready: Signal<Out, Bit>,
    pub job_len: Signal<In, Bits<13>>,
    pub job_seg0_addr: Signal<In, Bits<64>>,
    pub job_seg0_len: Signal<In, Bits<13>>,
    pub job_two_segments: Signal<In, Bit>,
    pub job_seg1_addr: Signal<In, Bits<64>>,
    pub job_seg1_len: Signal<In, Bits<13>>,

    pub in_valid: Signal<In, Bit>,
    pub in_ready: Signal<Out, Bit>,
    pub in_data: Signal<In, Bits<512>>,

    pub other: DmaWriteHost,
    pub dma: DmaWritePort,

    pub busy: Signal<Out, Bit>,
    pub job_done: Signal<Out, Bit>,
    pub idle: Signal<Out, Bit>,

    rotator: ByteRotator<512>,
    merge: ByteLaneSelect<512, 64>,
    dma_out: SkidBuffer<DmaBeat>,

    writing: DFF<Bit>,
    /// The first segment's lane: every input beat is rotated by it.
    shift: DFF<Bits<6>>,
    inputs_left: DFF<Bits<7>>,
    /// The previous input beat, rotated: its high lanes carry on.
    previous: DFF<Bits<512>>,
    beat_addr: DFF<Bits<64>>,
    lane: DFF<Bits<6>>,
    seg_left: DFF<Bits<13>>,
    seg_addr: DFF<Bits<64>>,
    seg_len: DFF<Bits<13>>,
    first_beat: DFF<Bit>,
    second_pending: DFF<Bit>,
    seg1_addr: DFF<Bits<64>>,
    seg1_len: DFF<Bits<13>>,
    have_input: Signal<Local, Bit>,
    room: Signal<Local, Bits<7>>,
    used: Signal<Local, Bits<7>>,
    lane_end: Signal<Local, Bits<7>>,
    keep: Signal<Local, Bits<64>>,
    seg_done: Signal<Local, Bit>,
    move_beat: Signal<Local, Bit>,
    all_lanes: Constant<Bits<64>>,
    low6: Constant<Bits<64>>,
}

impl Default for DmaWriteMover {
    fn default() -> Self {
        DmaWriteMover {
            clock: Default::default(),
            reset: Default::default(),
            job_valid: Default::default(),
            job_ready: Default::default(),
            job_len: Default::default(),
            job_seg0_addr: Default::default(),
            job_seg0_len: Default::default(),
            job_two_segments: Default::default(),
            job_seg1_addr: Default::default(),
            job_seg1_len: Default::default(),
            in_valid: Default::default(),
            in_ready: Default::default(),
            in_data: Default::default(),
            other: Default::default(),
            dma: Default::default(),
            busy: Default::default(),
            job_done: Default::default(),
            idle: Default::default(),
            rotator: ByteRotator::new(&(0..64).collect::<Vec<_>>()),
            merge: Default::default(),
            dma_out: Default::default(),
            writing: Default::default(),
            shift: Default::default(),
            inputs_left: Default::default(),
            previous: Default::default(),
            beat_addr: Default::default(),
            lane: Default::default(),
            seg_left: Default::default(),
            seg_addr: Default::default(),
            seg_len: Default::default(),
            first_beat: Default::default(),
            second_pending: Default::default(),
            seg1_addr: Default::default(),
            seg1_len: Default::default(),
            have_input: Default::default(),
            room: Default::default(),
            used: Default::default(),
            lane_end: Default::default(),
            keep: Default::default(),
            seg_done: Default::default(),
            move_beat: Default::default(),
            all_lanes: Constant::new(bits(u64::MAX)),
            low6: Constant::new(bits(63)),
        }
    }
}

impl Logic for DmaWriteMover {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            writing,
            shift,
            inputs_left,
            previous,
            beat_addr,
            lane,
            seg_left,
            seg_addr,
            seg_len,
            first_beat,
            second_pending,
            seg1_addr,
            seg1_len
        );
        clock!(self, clock, dma_out);
        self.dma_out.reset.next = self.reset.val();

        self.have_input.next = self.inputs_left.q.val() != 0;
        self.rotator.operand.next = 0.into();
        if self.have_input.val() {
            self.rotator.operand.next = self.in_data.val();
        }
        // Rotate left by the host address's lane: right by 64 - shift.
        self.rotator.amount.next = bits::<6>(0) - self.shift.q.val();
        // Lanes at or above the shift come from this input beat, those
        // below from the previous one.
        self.merge.when_set.next = self.rotator.rotated.val();
        self.merge.when_clear.next = self.previous.q.val();
        self.merge.lane_select.next = !((bits::<64>(1) << self.shift.q.val()) - 1);
        self.room.next = bits::<7>(64) - bit_cast::<7, 6>(self.lane.q.val());
        self.used.next = self.room.val();
        if self.seg_left.q.val() < bit_cast::<13, 7>(self.room.val()) {
            self.used.next = bit_cast::<7, 13>(self.seg_left.q.val());
        }
        self.lane_end.next = bit_cast::<7, 6>(self.lane.q.val()) + self.used.val();
        self.keep.next = (self.all_lanes.val() << self.lane.q.val())
            & (self.all_lanes.val() >> (bits::<7>(64) - self.lane_end.val()));
        self.seg_done.next = self.seg_left.q.val() == bit_cast::<13, 7>(self.used.val());
        self.dma_out.up_valid.next = false;
        self.dma_out.up_data.next.addr = self.beat_addr.q.val();
        self.dma_out.up_data.next.data = self.merge.chosen.val();
        self.dma_out.up_data.next.keep = self.keep.val();
        self.dma_out.up_data.next.first = self.first_beat.q.val();
        self.dma_out.up_data.next.last = self.seg_done.val();
        self.dma_out.up_data.next.req_addr = self.seg_addr.q.val();
        self.dma_out.up_data.next.req_len = self.seg_len.q.val();

        self.move_beat.next = false;
        self.in_ready.next = false;
        self.job_done.next = false;
        if self.writing.q.val() {
            self.move_beat.next =
                self.dma_out.up_ready.val() & (!self.have_input.val() | self.in_valid.val());
            if self.move_beat.val() {
                self.dma_out.up_valid.next = true;
                if self.have_input.val() {
                    self.in_ready.next = true;
                    self.inputs_left.d.next = self.inputs_left.q.val() - 1;
                    self.previous.d.next = self.rotator.rotated.val();
                }
                self.seg_left.d.next = self.seg_left.q.val() - bit_cast::<13, 7>(self.used.val());
                self.lane.d.next = 0.into();
                self.beat_addr.d.next = self.beat_addr.q.val() + 64;
                self.first_beat.d.next = false;
                if self.seg_done.val() {
                    if self.second_pending.q.val() {
                        // The next page: its address is page aligned, so
                        // its first byte is in lane 0 and the rotation
                        // carries on unchanged.
                        self.second_pending.d.next = false;
                        self.beat_addr.d.next = self.seg1_addr.q.val() & !self.low6.val();
                        self.lane.d.next =
                            bit_cast::<6, 64>(self.seg1_addr.q.val() & self.low6.val());
                        self.seg_addr.d.next = self.seg1_addr.q.val();
                        self.seg_len.d.next = self.seg1_len.q.val();
                        self.seg_left.d.next = self.seg1_len.q.val();
                        self.first_beat.d.next = true;
                    } else {
                        self.job_done.next = true;
                        self.writing.d.next = false;
                    }
                }
            }
        }

        // The next job starts in the cycle the previous one ends.
        self.job_ready.next = !self.writing.q.val() | self.job_done.val();
        if self.job_valid.val() & self.job_ready.val() {
            self.writing.d.next = true;
            self.shift.d.next = bit_cast::<6, 64>(self.job_seg0_addr.val() & self.low6.val());
            self.lane.d.next = bit_cast::<6, 64>(self.job_seg0_addr.val() & self.low6.val());
            self.inputs_left.d.next =
                bit_cast::<7, 14>((bit_cast::<14, 13>(self.job_len.val()) + 63) >> 6);
            self.previous.d.next = 0.into();
            self.beat_addr.d.next = self.job_seg0_addr.val() & !self.low6.val();
            self.seg_addr.d.next = self.job_seg0_addr.val();
            self.seg_len.d.next = self.job_seg0_len.val();
            self.seg_left.d.next = self.job_seg0_len.val();
            self.first_beat.d.next = true;
            self.second_pending.d.next = self.job_two_segments.val();
            self.seg1_addr.d.next = self.job_seg1_addr.val();
            self.seg1_len.d.next = self.job_seg1_len.val();
        }

        // Another writer's beats, while no job is in progress.
        self.other.ready.next = self.dma_out.up_ready.val();
        if self.other.valid.val() {
            self.dma_out.up_valid.next = true;
            self.dma_out.up_data.next.addr = self.other.addr.val();
            self.dma_out.up_data.next.data = self.other.data.val();
            self.dma_out.up_data.next.keep = self.other.keep.val();
            self.dma_out.up_data.next.first = self.other.first.val();
            self.dma_out.up_data.next.last = self.other.last.val();
            self.dma_out.up_data.next.req_addr = self.other.req_addr.val();
            self.dma_out.up_data.next.req_len = self.other.req_len.val();
        }

        self.dma_out.down_ready.next = self.dma.ready.val();
        self.dma.valid.next = self.dma_out.down_valid.val();
        self.dma.addr.next = self.dma_out.down_data.val().addr;
        self.dma.data.next = self.dma_out.down_data.val().data;
        self.dma.keep.next = self.dma_out.down_data.val().keep;
        self.dma.first.next = self.dma_out.down_data.val().first;
        self.dma.last.next = self.dma_out.down_data.val().last;
        self.dma.req_addr.next = self.dma_out.down_data.val().req_addr;
        self.dma.req_len.next = self.dma_out.down_data.val().req_len;

        self.busy.next = self.writing.q.val();
        self.idle.next = !self.writing.q.val() & !self.dma_out.down_valid.val();

        if self.reset.val() {
            self.writing.d.next = false;
        }
    }
}

/// One DMA write beat as the port carries it (the contract's model).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BeatModel {
    /// 64-byte-aligned host address of lane 0.
    pub addr: u64,
    pub keep: u64,
    /// The kept lanes' bytes, lanes `keep.trailing_zeros()..`.
    pub bytes: Vec<u8>,
    pub first: bool,
    pub last: bool,
}

/// How the mover cuts one write request of `bytes` at host address
/// `req_addr` into beats: lanes by host address, `first` on the first
/// beat, `last` on the last. `bytes` is 1..=4096 long and does not cross a
/// page.
pub fn request_beats(req_addr: u64, bytes: &[u8]) -> Vec<BeatModel> {
    let mut beats = Vec::new();
    let mut at = 0usize;
    while at < bytes.len() {
        let host = req_addr + at as u64;
        let lane = (host % 64) as usize;
        let n = (64 - lane).min(bytes.len() - at);
        let keep = if n == 64 {
            u64::MAX
        } else {
            ((1u64 << n) - 1) << lane
        };
        beats.push(BeatModel {
            addr: host - lane as u64,
            keep,
            bytes: bytes[at..at + n].to_vec(),
            first: at == 0,
            last: at + n == bytes.len(),
        });
        at += n;
    }
    beats
}
