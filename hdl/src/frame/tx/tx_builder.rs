//! `TxBuilder`: the RoCEv2 transmit header builder. One header record and
//! its payload in, one frame out, bit for bit what
//! `rocenic_wire::RoceFrame::encode` makes of the same fields: Ethernet II /
//! IPv4 (total length, header checksum) or IPv6 (payload length) / UDP to
//! port 4791 (length; checksum on IPv6, and on IPv4 when the record asks) /
//! BTH (PadCnt = -len & 3) / the extension headers the opcode names /
//! payload / zero pad / ICRC, least significant byte first.
//!
//! Ports:
//! - `clock`; `reset` (synchronous, high: drops every frame in flight;
//!   hold it for one cycle before use);
//! - `header` ([`TxHeaderSink`]): one [`crate::frame::tx::tx_header::TxHeader`] per
//!   frame;
//! - `payload` (AXI-Stream in, 512 bits): the frame's payload from lane 0,
//!   exactly ceil(len / 64) beats, nothing for an empty payload; `tlast`
//!   is checked against that count but the record's length rules;
//! - `frame` (AXI-Stream out, 512 bits): the frames, byte 0 in lane 0;
//! - `dropped_frames` (16-bit wrapping counter): records `encode` would
//!   refuse (an opcode RoCEv2 does not use, a payload on an opcode without
//!   one, over 4096 bytes): their payload is swallowed and nothing is sent;
//! - `payload_last_errors` (16-bit wrapping counter): payload beats whose
//!   `tlast` disagreed with the record's length.
//!
//! Pipeline: a register slice on `payload` (so `payload.tready` is a
//! register), [`TxHeaderPrep`] (record to header bytes and counts, 3
//! cycles), [`TxFrameMerge`] (payload shifted behind the header, pad, 2
//! cycles), [`TxIcrcAppend`] (7 cycles), [`TxUdpChecksum`] (3 cycles for a
//! frame without a UDP checksum; a checksummed one is held until it has
//! fully arrived, or by a fixed release delay, see [`TxBuilder::new`]).
//!
//! Latency without stalls (record and payload offered together, no UDP
//! checksum, no release delay): 15 cycles from the record to the first beat
//! of its frame (header stage 3, merger 2, ICRC 7, checksum stage 3); the
//! release delay adds to that.
//!
//! Throughput: one output beat per cycle, back to back across frames, with
//! no idle cycle on `frame` as long as records and payload keep up. A frame
//! with H header bytes (54..=102) and `len` payload bytes is exactly
//! ceil((H + len + pad + 4) / 64) beats and consumes ceil(len / 64)
//! payload beats, so per frame the payload input pauses for the difference:
//! 1 or 2 cycles (1 for a 4096-byte IPv4 SEND, 65 beats out of 64 in; 2 for
//! a 4096-byte IPv6 WRITE with immediate, 66 out of 64 in). Nothing else
//! costs a cycle: the header stage takes a record every cycle (one-beat ACKs
//! go out one per cycle), the next frame's first beat follows the previous
//! frame's last, and an ICRC that straddles into a beat of its own takes
//! that beat's cycle only. Frames that need a UDP checksum keep this rate
//! only with the full-rate release delay.

use crate::frame::tx::tx_frame_merge::TxFrameMerge;
use crate::frame::tx::tx_header::TxHeaderSink;
use crate::frame::tx::tx_header_prep::TxHeaderPrep;
use crate::frame::tx::tx_icrc_append::TxIcrcAppend;
use crate::frame::tx::tx_udp_checksum::TxUdpChecksum;
use crate::primitives::register_slice::AxisRegisterSlice;
use crate::primitives::stream::{AxisSink, AxisSource, DATA_BITS, KEEP_BITS};
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct TxBuilder {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub header: TxHeaderSink,
    pub payload: AxisSink<DATA_BITS, KEEP_BITS>,
    pub frame: AxisSource<DATA_BITS, KEEP_BITS>,
    pub dropped_frames: Signal<Out, Bits<16>>,
    pub payload_last_errors: Signal<Out, Bits<16>>,
    payload_slice: AxisRegisterSlice<DATA_BITS, KEEP_BITS>,
    prep: TxHeaderPrep,
    merge: TxFrameMerge,
    icrc: TxIcrcAppend,
    udp_sum: TxUdpChecksum,
}

impl Default for TxBuilder {
    fn default() -> Self {
        Self::new(0)
    }
}

impl TxBuilder {
    /// `release_delay` (0..=128 cycles) is [`TxUdpChecksum`]'s: 0 keeps
    /// frames without a UDP checksum (IPv4, the NIC's default) at the
    /// lowest latency; [`crate::frame::tx::tx_udp_checksum::FULL_RATE_RELEASE_DELAY`]
    /// delays every frame alike so that IPv6 frames, and IPv4 frames that
    /// ask for a UDP checksum, also go out back to back.
    pub fn new(release_delay: usize) -> Self {
        TxBuilder {
            clock: Default::default(),
            reset: Default::default(),
            header: Default::default(),
            payload: Default::default(),
            frame: Default::default(),
            dropped_frames: Default::default(),
            payload_last_errors: Default::default(),
            payload_slice: Default::default(),
            prep: Default::default(),
            merge: Default::default(),
            icrc: Default::default(),
            udp_sum: TxUdpChecksum::new(release_delay),
        }
    }
}

impl Logic for TxBuilder {
    #[hdl_gen]
    fn update(&mut self) {
        self.payload_slice.clock.next = self.clock.val();
        self.prep.clock.next = self.clock.val();
        self.merge.clock.next = self.clock.val();
        self.icrc.clock.next = self.clock.val();
        self.udp_sum.clock.next = self.clock.val();
        self.payload_slice.reset.next = self.reset.val();
        self.prep.reset.next = self.reset.val();
        self.merge.reset.next = self.reset.val();
        self.icrc.reset.next = self.reset.val();
        self.udp_sum.reset.next = self.reset.val();

        TxHeaderSink::link(&mut self.header, &mut self.prep.header);
        AxisSink::<DATA_BITS, KEEP_BITS>::link(&mut self.payload, &mut self.payload_slice.up);
        AxisSource::<DATA_BITS, KEEP_BITS>::join(
            &mut self.payload_slice.down,
            &mut self.merge.payload,
        );

        self.merge.job.next = self.prep.job.val();
        self.merge.job_valid.next = self.prep.job_valid.val();
        self.prep.job_ready.next = self.merge.job_ready.val();

        AxisSource::<DATA_BITS, KEEP_BITS>::join(&mut self.merge.frame, &mut self.icrc.up);
        self.icrc.up_ipv6.next = self.merge.frame_ipv6.val();
        self.icrc.up_udp_checksum.next = self.merge.frame_udp_checksum.val();
        self.icrc.up_end_bytes.next = self.merge.frame_end_bytes.val();

        AxisSource::<DATA_BITS, KEEP_BITS>::join(&mut self.icrc.down, &mut self.udp_sum.up);
        self.udp_sum.up_ipv6.next = self.icrc.down_ipv6.val();
        self.udp_sum.up_udp_checksum.next = self.icrc.down_udp_checksum.val();

        AxisSource::<DATA_BITS, KEEP_BITS>::link(&mut self.frame, &mut self.udp_sum.down);

        self.dropped_frames.next = self.merge.dropped_frames.val();
        self.payload_last_errors.next = self.merge.payload_last_errors.val();
    }
}
