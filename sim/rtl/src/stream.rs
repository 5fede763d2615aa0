//! AXI-Stream driver and scoreboard for the Verilated 512-bit blocks.
//!
//! [`StreamSource`] cuts frames into beats (byte 0 in bits 7:0 of word 0,
//! unused lanes of a last beat filled with junk so a block that reads them
//! is caught) and offers them with optional random valid gaps, holding each
//! offered beat until it moves, as AXI-Stream requires. [`StreamSink`]
//! deasserts ready at random, reassembles frames from beats and checks the
//! AXI rules on what it receives: data, keep, last and sideband stable while
//! valid && !ready, valid never withdrawn from a stalled beat, non-last beats
//! full, last beats keeping 1..=64 contiguous bytes from lane 0.
//! [`HandshakeSource`] and [`HandshakeSink`] do the same for a plain
//! valid/ready channel carrying one value per transfer (a header record).
//!
//! The cores are port-agnostic; [`AxisInPorts`], [`AxisOutPorts`] and
//! [`ChannelInPorts`] / [`ChannelOutPorts`] bind them to a block's ports by
//! name (`payload` finds `payload_tdata`, `payload_tkeep`, ...), so one
//! driver serves every block.
//!
//! Cycle protocol, per clock: `begin_cycle` on every core (sources decide
//! what to offer, sinks whether to be ready), drive the ports, `Sim::eval`,
//! `observe`/`end_cycle` with what the ports show, then `Sim::tick`. A
//! transfer happens when valid and ready are both high at that eval, which
//! is what the following rising edge samples.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::VecDeque;
use std::fmt;
use verilator_sys::{Block, Input, Output, SimError};

/// Bytes per beat of the 512-bit datapath.
pub const BEAT_BYTES: usize = 64;
/// `u64` words per beat.
pub const BEAT_WORDS: usize = BEAT_BYTES / 8;

/// One AXI-Stream beat.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Beat {
    /// Byte `k` of the beat in bits `8k+7:8k`, words least significant first.
    pub data: [u64; BEAT_WORDS],
    pub keep: u64,
    pub last: bool,
}

impl Beat {
    /// A beat holding `chunk` (1..=64 bytes) in its low lanes; `fill` goes
    /// into the lanes above it.
    pub fn from_bytes(chunk: &[u8], last: bool, fill: &[u8; BEAT_BYTES]) -> Beat {
        debug_assert!(!chunk.is_empty() && chunk.len() <= BEAT_BYTES);
        let mut bytes = *fill;
        bytes[..chunk.len()].copy_from_slice(chunk);
        Beat {
            data: bytes_to_words(&bytes),
            keep: keep_mask(chunk.len()),
            last,
        }
    }

    /// All 64 lanes, kept or not.
    pub fn lanes(&self) -> [u8; BEAT_BYTES] {
        words_to_bytes(&self.data)
    }

    /// Number of kept bytes when `keep` is contiguous from lane 0.
    pub fn kept_bytes(&self) -> Option<usize> {
        let n = self.keep.trailing_ones() as usize;
        (keep_mask(n) == self.keep).then_some(n)
    }
}

/// `keep` with the low `n` bytes (0..=64) set.
pub fn keep_mask(n: usize) -> u64 {
    if n >= 64 {
        u64::MAX
    } else {
        (1u64 << n) - 1
    }
}

pub fn bytes_to_words(bytes: &[u8; BEAT_BYTES]) -> [u64; BEAT_WORDS] {
    std::array::from_fn(|i| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&bytes[8 * i..8 * i + 8]);
        u64::from_le_bytes(w)
    })
}

pub fn words_to_bytes(words: &[u64; BEAT_WORDS]) -> [u8; BEAT_BYTES] {
    let mut out = [0u8; BEAT_BYTES];
    for (i, w) in words.iter().enumerate() {
        out[8 * i..8 * i + 8].copy_from_slice(&w.to_le_bytes());
    }
    out
}

/// Beats of one frame, its unused last-beat lanes filled from `rng`.
/// `None` for an empty frame, which AXI-Stream cannot carry.
pub fn frame_beats(frame: &[u8], rng: &mut ChaCha8Rng) -> Option<Vec<Beat>> {
    if frame.is_empty() {
        return None;
    }
    let n = frame.len().div_ceil(BEAT_BYTES);
    Some(
        frame
            .chunks(BEAT_BYTES)
            .enumerate()
            .map(|(i, chunk)| {
                let mut fill = [0u8; BEAT_BYTES];
                if chunk.len() < BEAT_BYTES {
                    rng.fill(&mut fill[..]);
                }
                Beat::from_bytes(chunk, i + 1 == n, &fill)
            })
            .collect(),
    )
}

/// A broken AXI-Stream (or handshake) rule, or a stream the harness cannot
/// drive; says where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AxiViolation {
    pub cycle: u64,
    pub channel: String,
    pub what: String,
}

impl fmt::Display for AxiViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cycle {}: {}: {}", self.cycle, self.channel, self.what)
    }
}

impl std::error::Error for AxiViolation {}

/// Drives frames as beats, with valid gaps at random: when idle, the next
/// beat is offered with probability `p_valid` each cycle.
pub struct StreamSource {
    /// Pending beats with the index of the frame each belongs to.
    beats: VecDeque<(usize, Beat)>,
    frames_pushed: usize,
    p_valid: f64,
    rng: ChaCha8Rng,
    offering: bool,
    beats_sent: u64,
    /// Per frame: cycles at which its first and last beat moved.
    first_moved: Vec<u64>,
    last_moved: Vec<u64>,
}

impl StreamSource {
    pub fn new(p_valid: f64, seed: u64) -> StreamSource {
        StreamSource {
            beats: VecDeque::new(),
            frames_pushed: 0,
            p_valid: p_valid.clamp(0.0, 1.0),
            rng: ChaCha8Rng::seed_from_u64(seed),
            offering: false,
            beats_sent: 0,
            first_moved: Vec::new(),
            last_moved: Vec::new(),
        }
    }

    /// Queues a frame; `false` (and nothing queued) for an empty frame.
    pub fn push_frame(&mut self, frame: &[u8]) -> bool {
        let Some(beats) = frame_beats(frame, &mut self.rng) else {
            return false;
        };
        let index = self.frames_pushed;
        self.frames_pushed += 1;
        self.beats.extend(beats.into_iter().map(|b| (index, b)));
        true
    }

    /// Decides whether a beat is offered this cycle (an offered beat stays
    /// offered until it moves).
    pub fn begin_cycle(&mut self) {
        if !self.offering && !self.beats.is_empty() {
            self.offering = self.p_valid >= 1.0 || self.rng.gen_bool(self.p_valid);
        }
    }

    /// [`StreamSource::begin_cycle`], but with `hold` no new frame
    /// starts (a frame under way goes on): the sink's side must not see
    /// the next frame yet.
    pub fn begin_cycle_holding(&mut self, hold: bool) {
        let at_frame_start = self
            .beats
            .front()
            .is_some_and(|(i, _)| self.first_moved.len() == *i);
        if hold && !self.offering && at_frame_start {
            return;
        }
        self.begin_cycle();
    }

    /// Frames queued whose first beat has not moved yet.
    pub fn frames_not_started(&self) -> usize {
        self.frames_pushed - self.first_moved.len()
    }

    /// The beat on the bus this cycle, if any.
    pub fn current(&self) -> Option<&Beat> {
        if self.offering {
            self.beats.front().map(|(_, b)| b)
        } else {
            None
        }
    }

    /// Whether the beat on the bus is the first of its frame.
    pub fn current_is_first(&self) -> bool {
        self.offering
            && self
                .beats
                .front()
                .is_some_and(|(i, _)| self.first_moved.len() == *i)
    }

    /// Index of the frame the current (or next) beat belongs to.
    pub fn current_frame(&self) -> Option<usize> {
        self.beats.front().map(|(i, _)| *i)
    }

    /// Ends the cycle: with `ready` high the offered beat moved at `cycle`.
    /// Returns the moved beat.
    pub fn end_cycle(&mut self, cycle: u64, ready: bool) -> Option<Beat> {
        if !(self.offering && ready) {
            return None;
        }
        let (index, beat) = self.beats.pop_front()?;
        self.offering = false;
        self.beats_sent += 1;
        if self.first_moved.len() == index {
            self.first_moved.push(cycle);
        }
        if beat.last {
            self.last_moved.push(cycle);
        }
        Some(beat)
    }

    pub fn is_idle(&self) -> bool {
        self.beats.is_empty()
    }

    pub fn beats_sent(&self) -> u64 {
        self.beats_sent
    }

    /// Frames queued so far.
    pub fn frames_pushed(&self) -> usize {
        self.frames_pushed
    }

    /// Per frame sent: cycle its first beat moved.
    pub fn first_moved(&self) -> &[u64] {
        &self.first_moved
    }

    /// Per frame sent: cycle its last beat moved.
    pub fn last_moved(&self) -> &[u64] {
        &self.last_moved
    }
}

/// One frame reassembled by a [`StreamSink`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReceivedFrame {
    pub bytes: Vec<u8>,
    /// Cycles at which the first and the last beat moved.
    pub first_cycle: u64,
    pub last_cycle: u64,
    /// The sideband ports' values on the last beat.
    pub sideband: Vec<Vec<u64>>,
    /// The last beat kept no byte (only with [`StreamSink::allow_null_last`]).
    pub null_last: bool,
}

/// Receives beats with ready deasserted at random (ready with probability
/// `p_ready` each cycle), reassembles frames and checks the AXI rules.
pub struct StreamSink {
    name: String,
    p_ready: f64,
    rng: ChaCha8Rng,
    ready: bool,
    stalled: Option<(Beat, Vec<Vec<u64>>)>,
    partial: Vec<u8>,
    partial_first: u64,
    frames: Vec<ReceivedFrame>,
    beats: u64,
    valid_cycles: u64,
    ready_cycles: u64,
    allow_null_last: bool,
}

impl StreamSink {
    pub fn new(name: &str, p_ready: f64, seed: u64) -> StreamSink {
        StreamSink {
            name: name.to_string(),
            p_ready: p_ready.clamp(0.0, 1.0),
            rng: ChaCha8Rng::seed_from_u64(seed),
            ready: false,
            stalled: None,
            partial: Vec::new(),
            partial_first: 0,
            frames: Vec::new(),
            beats: 0,
            valid_cycles: 0,
            ready_cycles: 0,
            allow_null_last: false,
        }
    }

    /// Accepts a last beat that keeps no byte (AXI-Stream null bytes), which
    /// a block may use to close a packet it is discarding anyway; the frame
    /// is marked [`ReceivedFrame::null_last`].
    pub fn allow_null_last(mut self) -> StreamSink {
        self.allow_null_last = true;
        self
    }

    /// Decides this cycle's ready.
    pub fn begin_cycle(&mut self) {
        self.ready = self.p_ready >= 1.0 || self.rng.gen_bool(self.p_ready);
    }

    pub fn ready(&self) -> bool {
        self.ready
    }

    /// What the block shows this cycle (after eval). Returns true when a
    /// beat moved; a completed frame lands in [`StreamSink::frames`].
    pub fn observe(
        &mut self,
        cycle: u64,
        valid: bool,
        beat: &Beat,
        sideband: &[Vec<u64>],
    ) -> Result<bool, AxiViolation> {
        let violation = |what: String| AxiViolation {
            cycle,
            channel: self.name.clone(),
            what: format!("{what} (after {} complete frames)", self.frames.len()),
        };
        if let Some((held, held_side)) = self.stalled.take() {
            if !valid {
                return Err(violation("valid withdrawn from a stalled beat".into()));
            }
            if held != *beat {
                return Err(violation(format!(
                    "stalled beat changed: was {held:x?}, now {beat:x?}"
                )));
            }
            if held_side != sideband {
                return Err(violation(format!(
                    "sideband changed under a stalled beat: was {held_side:x?}, now {sideband:x?}"
                )));
            }
        }
        if self.ready {
            self.ready_cycles += 1;
        }
        if !valid {
            return Ok(false);
        }
        self.valid_cycles += 1;
        if !beat.last && beat.keep != u64::MAX {
            return Err(violation(format!(
                "non-last beat keeps {:#018x}, not all 64 bytes",
                beat.keep
            )));
        }
        let kept = match beat.kept_bytes() {
            Some(n) if n > 0 => n,
            Some(0) if beat.last && self.allow_null_last => 0,
            _ => {
                return Err(violation(format!(
                    "keep {:#018x} is not 1..=64 contiguous bytes from lane 0",
                    beat.keep
                )))
            }
        };
        if !self.ready {
            self.stalled = Some((*beat, sideband.to_vec()));
            return Ok(false);
        }
        if self.partial.is_empty() {
            self.partial_first = cycle;
        }
        self.partial.extend_from_slice(&beat.lanes()[..kept]);
        self.beats += 1;
        if beat.last {
            self.frames.push(ReceivedFrame {
                bytes: std::mem::take(&mut self.partial),
                first_cycle: self.partial_first,
                last_cycle: cycle,
                sideband: sideband.to_vec(),
                null_last: kept == 0,
            });
        }
        Ok(true)
    }

    pub fn frames(&self) -> &[ReceivedFrame] {
        &self.frames
    }

    pub fn take_frames(&mut self) -> Vec<ReceivedFrame> {
        std::mem::take(&mut self.frames)
    }

    /// A frame has started but its last beat has not arrived.
    pub fn mid_frame(&self) -> bool {
        !self.partial.is_empty()
    }

    pub fn beats(&self) -> u64 {
        self.beats
    }

    /// Cycles in which valid was high.
    pub fn valid_cycles(&self) -> u64 {
        self.valid_cycles
    }

    /// Cycles in which this sink was ready.
    pub fn ready_cycles(&self) -> u64 {
        self.ready_cycles
    }
}

/// Offers values on a valid/ready channel in order, with random gaps like
/// [`StreamSource`].
pub struct HandshakeSource {
    items: VecDeque<Vec<u64>>,
    p_valid: f64,
    rng: ChaCha8Rng,
    offering: bool,
    sent: u64,
    moved: Vec<u64>,
}

impl HandshakeSource {
    pub fn new(p_valid: f64, seed: u64) -> HandshakeSource {
        HandshakeSource {
            items: VecDeque::new(),
            p_valid: p_valid.clamp(0.0, 1.0),
            rng: ChaCha8Rng::seed_from_u64(seed),
            offering: false,
            sent: 0,
            moved: Vec::new(),
        }
    }

    pub fn push(&mut self, value: Vec<u64>) {
        self.items.push_back(value);
    }

    pub fn begin_cycle(&mut self) {
        if !self.offering && !self.items.is_empty() {
            self.offering = self.p_valid >= 1.0 || self.rng.gen_bool(self.p_valid);
        }
    }

    pub fn current(&self) -> Option<&Vec<u64>> {
        if self.offering {
            self.items.front()
        } else {
            None
        }
    }

    pub fn end_cycle(&mut self, cycle: u64, ready: bool) -> bool {
        if self.offering && ready && self.items.pop_front().is_some() {
            self.offering = false;
            self.sent += 1;
            self.moved.push(cycle);
            true
        } else {
            false
        }
    }

    pub fn is_idle(&self) -> bool {
        self.items.is_empty()
    }

    pub fn sent(&self) -> u64 {
        self.sent
    }

    /// Cycle at which each value moved.
    pub fn moved(&self) -> &[u64] {
        &self.moved
    }
}

/// Receives values from a valid/ready channel with random ready, checking
/// that a stalled value holds still.
pub struct HandshakeSink {
    name: String,
    p_ready: f64,
    rng: ChaCha8Rng,
    ready: bool,
    stalled: Option<Vec<u64>>,
    received: Vec<(u64, Vec<u64>)>,
}

impl HandshakeSink {
    pub fn new(name: &str, p_ready: f64, seed: u64) -> HandshakeSink {
        HandshakeSink {
            name: name.to_string(),
            p_ready: p_ready.clamp(0.0, 1.0),
            rng: ChaCha8Rng::seed_from_u64(seed),
            ready: false,
            stalled: None,
            received: Vec::new(),
        }
    }

    pub fn begin_cycle(&mut self) {
        self.ready = self.p_ready >= 1.0 || self.rng.gen_bool(self.p_ready);
    }

    pub fn ready(&self) -> bool {
        self.ready
    }

    pub fn observe(
        &mut self,
        cycle: u64,
        valid: bool,
        value: &[u64],
    ) -> Result<bool, AxiViolation> {
        if let Some(held) = self.stalled.take() {
            let what = if !valid {
                Some("valid withdrawn from a stalled value".to_string())
            } else if held != value {
                Some(format!(
                    "stalled value changed: was {held:x?}, now {value:x?}"
                ))
            } else {
                None
            };
            if let Some(what) = what {
                return Err(AxiViolation {
                    cycle,
                    channel: self.name.clone(),
                    what,
                });
            }
        }
        if !valid {
            return Ok(false);
        }
        if self.ready {
            self.received.push((cycle, value.to_vec()));
            Ok(true)
        } else {
            self.stalled = Some(value.to_vec());
            Ok(false)
        }
    }

    /// Values received with the cycle each moved.
    pub fn received(&self) -> &[(u64, Vec<u64>)] {
        &self.received
    }

    pub fn take_received(&mut self) -> Vec<(u64, Vec<u64>)> {
        std::mem::take(&mut self.received)
    }
}

/// Junk shown on an idle bus, so a block that samples data without valid
/// gives itself away.
const IDLE_DATA: [u64; BEAT_WORDS] = [0xDEAD_BEEF_BAD0_F00D; BEAT_WORDS];

/// The input stream ports of block `B` (`<prefix>_tdata` etc.).
pub struct AxisInPorts<B: Block> {
    pub tdata: Input<B>,
    pub tkeep: Input<B>,
    pub tlast: Input<B>,
    pub tvalid: Input<B>,
    pub tready: Output<B>,
}

impl<B: Block> AxisInPorts<B> {
    pub fn named(prefix: &str) -> Result<Self, SimError> {
        Ok(AxisInPorts {
            tdata: B::input(&format!("{prefix}_tdata"))?,
            tkeep: B::input(&format!("{prefix}_tkeep"))?,
            tlast: B::input(&format!("{prefix}_tlast"))?,
            tvalid: B::input(&format!("{prefix}_tvalid"))?,
            tready: B::output(&format!("{prefix}_tready"))?,
        })
    }

    pub fn drive(&self, dut: &mut B, beat: Option<&Beat>) {
        match beat {
            Some(b) => {
                dut.set(self.tdata, &b.data);
                dut.set_u64(self.tkeep, b.keep);
                dut.set_bit(self.tlast, b.last);
                dut.set_bit(self.tvalid, true);
            }
            None => {
                dut.set(self.tdata, &IDLE_DATA);
                dut.set_u64(self.tkeep, 0);
                dut.set_bit(self.tlast, false);
                dut.set_bit(self.tvalid, false);
            }
        }
    }

    pub fn ready(&self, dut: &B) -> bool {
        dut.get_bit(self.tready)
    }
}

/// The output stream ports of block `B`, with optional sideband outputs
/// that travel with each beat.
pub struct AxisOutPorts<B: Block> {
    pub tdata: Output<B>,
    pub tkeep: Output<B>,
    pub tlast: Output<B>,
    pub tvalid: Output<B>,
    pub tready: Input<B>,
    pub sideband: Vec<Output<B>>,
}

impl<B: Block> AxisOutPorts<B> {
    /// `sideband` names further outputs (full port names) that must hold
    /// still with the beat and are recorded on each frame's last beat.
    pub fn named(prefix: &str, sideband: &[&str]) -> Result<Self, SimError> {
        Ok(AxisOutPorts {
            tdata: B::output(&format!("{prefix}_tdata"))?,
            tkeep: B::output(&format!("{prefix}_tkeep"))?,
            tlast: B::output(&format!("{prefix}_tlast"))?,
            tvalid: B::output(&format!("{prefix}_tvalid"))?,
            tready: B::input(&format!("{prefix}_tready"))?,
            sideband: sideband
                .iter()
                .map(|n| B::output(n))
                .collect::<Result<_, _>>()?,
        })
    }

    pub fn set_ready(&self, dut: &mut B, ready: bool) {
        dut.set_bit(self.tready, ready);
    }

    pub fn valid(&self, dut: &B) -> bool {
        dut.get_bit(self.tvalid)
    }

    pub fn beat(&self, dut: &B) -> Beat {
        let mut data = [0u64; BEAT_WORDS];
        dut.get_into(self.tdata, &mut data);
        Beat {
            data,
            keep: dut.get_u64(self.tkeep),
            last: dut.get_bit(self.tlast),
        }
    }

    pub fn sideband(&self, dut: &B) -> Vec<Vec<u64>> {
        self.sideband.iter().map(|&p| dut.get(p)).collect()
    }

    /// Feeds this cycle's output into `sink` (after eval).
    pub fn observe(
        &self,
        dut: &B,
        sink: &mut StreamSink,
        cycle: u64,
    ) -> Result<bool, AxiViolation> {
        let valid = self.valid(dut);
        let beat = self.beat(dut);
        let side = self.sideband(dut);
        sink.observe(cycle, valid, &beat, &side)
    }
}

/// A valid/ready input channel of block `B` carrying one value.
pub struct ChannelInPorts<B: Block> {
    pub value: Input<B>,
    pub valid: Input<B>,
    pub ready: Output<B>,
}

impl<B: Block> ChannelInPorts<B> {
    /// `value`, `valid` and `ready` are full port names.
    pub fn named(value: &str, valid: &str, ready: &str) -> Result<Self, SimError> {
        Ok(ChannelInPorts {
            value: B::input(value)?,
            valid: B::input(valid)?,
            ready: B::output(ready)?,
        })
    }

    pub fn drive(&self, dut: &mut B, value: Option<&Vec<u64>>) {
        match value {
            Some(v) => {
                dut.set(self.value, v);
                dut.set_bit(self.valid, true);
            }
            None => {
                dut.set(self.value, &IDLE_DATA);
                dut.set_bit(self.valid, false);
            }
        }
    }

    pub fn ready(&self, dut: &B) -> bool {
        dut.get_bit(self.ready)
    }
}

/// A valid/ready output channel of block `B` carrying one value.
pub struct ChannelOutPorts<B: Block> {
    pub value: Output<B>,
    pub valid: Output<B>,
    pub ready: Input<B>,
}

impl<B: Block> ChannelOutPorts<B> {
    pub fn named(value: &str, valid: &str, ready: &str) -> Result<Self, SimError> {
        Ok(ChannelOutPorts {
            value: B::output(value)?,
            valid: B::output(valid)?,
            ready: B::input(ready)?,
        })
    }

    pub fn set_ready(&self, dut: &mut B, ready: bool) {
        dut.set_bit(self.ready, ready);
    }

    pub fn observe(
        &self,
        dut: &B,
        sink: &mut HandshakeSink,
        cycle: u64,
    ) -> Result<bool, AxiViolation> {
        let valid = dut.get_bit(self.valid);
        let value = dut.get(self.value);
        sink.observe(cycle, valid, &value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn beats_carry_byte_zero_in_the_low_lane_and_junk_above_the_end() {
        let frame: Vec<u8> = (0..130u32).map(|i| i as u8).collect();
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let beats = frame_beats(&frame, &mut rng).unwrap();
        assert_eq!(beats.len(), 3);
        assert_eq!(beats[0].data[0] & 0xFF, 0);
        assert_eq!(beats[0].data[0] >> 8 & 0xFF, 1);
        assert_eq!(beats[1].data[0] & 0xFF, 64);
        assert_eq!(
            [beats[0].last, beats[1].last, beats[2].last],
            [false, false, true]
        );
        assert_eq!(beats[2].keep, 0b11);
        assert_eq!(beats[2].kept_bytes(), Some(2));
        assert_ne!(beats[2].lanes()[2..], [0u8; 62][..], "junk fill");
        assert!(frame_beats(&[], &mut rng).is_none());
    }

    #[test]
    fn sink_reassembles_and_flags_each_rule() {
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let frame: Vec<u8> = (0..100u32).map(|i| (i * 7) as u8).collect();
        let beats = frame_beats(&frame, &mut rng).unwrap();
        let mut sink = StreamSink::new("out", 1.0, 3);
        for (c, b) in beats.iter().enumerate() {
            sink.begin_cycle();
            assert!(sink.observe(c as u64, true, b, &[]).unwrap());
        }
        assert_eq!(sink.frames()[0].bytes, frame);

        // A stalled beat that changes, or loses valid, is a violation.
        let mut sink = StreamSink::new("out", 0.0, 3);
        sink.begin_cycle();
        assert!(!sink.observe(0, true, &beats[0], &[]).unwrap());
        sink.begin_cycle();
        assert!(sink.observe(1, true, &beats[1], &[]).is_err());
        let mut sink = StreamSink::new("out", 0.0, 3);
        sink.begin_cycle();
        sink.observe(0, true, &beats[0], &[vec![1]]).unwrap();
        sink.begin_cycle();
        assert!(sink.observe(1, false, &beats[0], &[vec![1]]).is_err());
        let mut sink = StreamSink::new("out", 0.0, 3);
        sink.begin_cycle();
        sink.observe(0, true, &beats[0], &[vec![1]]).unwrap();
        sink.begin_cycle();
        assert!(sink.observe(1, true, &beats[0], &[vec![2]]).is_err());

        // Keep rules.
        let mut sink = StreamSink::new("out", 1.0, 3);
        sink.begin_cycle();
        let mut partial = beats[0];
        partial.keep = 0xFF;
        assert!(sink.observe(0, true, &partial, &[]).is_err());
        let mut holes = beats[1];
        holes.keep = 0b101;
        assert!(sink.observe(0, true, &holes, &[]).is_err());
        let mut empty = beats[1];
        empty.keep = 0;
        assert!(sink.observe(0, true, &empty, &[]).is_err());
        let mut lenient = StreamSink::new("out", 1.0, 3).allow_null_last();
        lenient.begin_cycle();
        assert!(lenient.observe(0, true, &beats[0], &[]).unwrap());
        assert!(lenient.observe(1, true, &empty, &[]).unwrap());
        assert!(lenient.frames()[0].null_last);
        assert_eq!(lenient.frames()[0].bytes, frame[..64]);
        let mut null_middle = empty;
        null_middle.last = false;
        assert!(lenient.observe(2, true, &null_middle, &[]).is_err());
    }

    #[test]
    fn source_holds_a_beat_until_it_moves_and_gaps_follow_the_seed() {
        let mut src = StreamSource::new(0.5, 9);
        assert!(src.push_frame(&[1; 200]));
        assert!(!src.push_frame(&[]));
        let mut cycle = 0;
        let mut moved = Vec::new();
        let mut idle = 0;
        while !src.is_idle() {
            src.begin_cycle();
            let offered = src.current().copied();
            if offered.is_none() {
                idle += 1;
            }
            // Ready only on odd cycles: the same beat must be re-offered.
            let before = src.current().copied();
            if let Some(b) = src.end_cycle(cycle, cycle % 2 == 1) {
                moved.push(b);
            } else if before.is_some() {
                src.begin_cycle();
                assert_eq!(src.current().copied(), before);
                // begin_cycle was called twice this cycle on purpose; the
                // offer must not change.
            }
            cycle += 1;
        }
        assert_eq!(moved.len(), 4);
        assert!(idle > 0, "p_valid 0.5 leaves gaps");
        assert_eq!(src.first_moved().len(), 1);
        assert_eq!(src.last_moved().len(), 1);
    }
}
