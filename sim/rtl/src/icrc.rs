//! The Verilated ICRC checker (`rocenic_hdl::frame::crc::icrc_checker`) fed from a
//! frame stream, and the model's verdict on the same bytes.
//!
//! The checker is told where the covered bytes end (`beat_end`,
//! `beat_end_bytes`) rather than finding it itself; in the NIC the RX
//! parser does that from the IP length in the first beat, and so does this
//! adapter ([`icrc_span`]). Beats of a frame past that end (Ethernet
//! minimum-size padding) still move on the stream but are not presented.
//! The checker has no ready; its `advance` (clock enable) is the stall, so
//! the stream moves exactly when `advance` is high.

use super::stream::{StreamSource, BEAT_BYTES};
use super::RtlError;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rocenic_wire::{icrc, BTH_LEN, ETHERTYPE_IPV6, ETH_LEN, ICRC_LEN, UDP_LEN};
use verilator_sys::{Block, IcrcChecker, Sim};

/// Where a frame's ICRC-covered bytes are, as the receive path finds them
/// from the first beat.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IcrcSpan {
    pub ipv6: bool,
    /// IP header length: 20 or 40.
    pub ip_len: usize,
    /// Frame bytes up to and including the ICRC: Ethernet header + the IP
    /// length.
    pub end: usize,
}

/// The span of `frame`'s ICRC, or `None` when its IP length does not leave
/// room for IP, UDP, BTH and ICRC inside the frame (the parser drops such a
/// frame before the ICRC matters).
pub fn icrc_span(frame: &[u8]) -> Option<IcrcSpan> {
    let word = |at: usize| {
        Some(usize::from(u16::from_be_bytes([
            *frame.get(at)?,
            *frame.get(at + 1)?,
        ])))
    };
    let ipv6 = word(12)? == usize::from(ETHERTYPE_IPV6);
    let (ip_len, end) = if ipv6 {
        (40, ETH_LEN + 40 + word(ETH_LEN + 4)?)
    } else {
        (20, ETH_LEN + word(ETH_LEN + 2)?)
    };
    (end >= ETH_LEN + ip_len + UDP_LEN + BTH_LEN + ICRC_LEN && end <= frame.len())
        .then_some(IcrcSpan { ipv6, ip_len, end })
}

/// The model's verdict: the ICRC field matches `rocenic_wire::icrc::compute`
/// over the span. `None` when the frame has no span.
pub fn model_icrc_ok(frame: &[u8]) -> Option<bool> {
    let span = icrc_span(frame)?;
    let at = span.end - ICRC_LEN;
    let computed = icrc::compute(&frame[ETH_LEN..at], span.ip_len)?;
    let found = u32::from_le_bytes([frame[at], frame[at + 1], frame[at + 2], frame[at + 3]]);
    Some(found == computed)
}

/// The bits of frame byte `at` that the ICRC of a frame with `span`
/// covers: 0 outside the span, all but the masked bits inside it.
pub fn covered_mask(span: &IcrcSpan, at: usize) -> u8 {
    if !(ETH_LEN..span.end).contains(&at) {
        return 0;
    }
    masked_bytes(span)
        .iter()
        .filter(|(m, _)| *m == at)
        .fold(0xFF, |covered, (_, bits)| covered & !bits)
}

/// Bytes (frame offset, bit mask) a router may rewrite without breaking the
/// ICRC: IPv4 TOS, TTL, header checksum; IPv6 traffic class, flow label,
/// hop limit; the UDP checksum; BTH byte 4.
pub fn masked_bytes(span: &IcrcSpan) -> Vec<(usize, u8)> {
    let ip = ETH_LEN;
    let mut m = if span.ipv6 {
        vec![
            (ip, 0x0F),
            (ip + 1, 0xFF),
            (ip + 2, 0xFF),
            (ip + 3, 0xFF),
            (ip + 7, 0xFF),
        ]
    } else {
        vec![
            (ip + 1, 0xFF),
            (ip + 8, 0xFF),
            (ip + 10, 0xFF),
            (ip + 11, 0xFF),
        ]
    };
    let udp = ip + span.ip_len;
    m.extend([(udp + 6, 0xFF), (udp + 7, 0xFF), (udp + UDP_LEN + 4, 0xFF)]);
    m
}

/// How the checker is driven.
#[derive(Clone, Copy, Debug)]
pub struct IcrcDrive {
    /// Probability that an idle input offers its next beat in a cycle.
    pub p_valid: f64,
    /// Probability that `advance` is high in a cycle (1.0: never stalls).
    pub p_advance: f64,
    pub seed: u64,
}

impl Default for IcrcDrive {
    fn default() -> Self {
        IcrcDrive {
            p_valid: 1.0,
            p_advance: 1.0,
            seed: 0,
        }
    }
}

/// What the checker said about a list of frames.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IcrcRun {
    /// One verdict per frame, in order: the ICRC matched.
    pub verdicts: Vec<bool>,
    /// Per frame: cycles from its end beat moving in to its verdict.
    pub latency: Vec<u64>,
    /// Cycles from reset release to the last verdict.
    pub cycles: u64,
    /// Cycles in which the input was offered a beat and `advance` was low.
    pub stalled_cycles: u64,
}

/// Runs `frames` through a fresh Verilated checker. Every frame needs an
/// [`icrc_span`].
pub fn run_icrc_checker(frames: &[Vec<u8>], drive: IcrcDrive) -> Result<IcrcRun, RtlError> {
    let spans = frames
        .iter()
        .enumerate()
        .map(|(i, f)| {
            icrc_span(f).ok_or_else(|| {
                RtlError::Unsupported(format!(
                    "frame {i}: no ICRC span (IP length outside the frame)"
                ))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut sim = Sim::<IcrcChecker>::new()?;
    let mut rng = ChaCha8Rng::seed_from_u64(drive.seed ^ 0x1C8C);
    let mut source = StreamSource::new(drive.p_valid, drive.seed);
    for f in frames {
        source.push_frame(f);
    }
    sim.set_bit(IcrcChecker::RESET, true);
    sim.set_bit(IcrcChecker::ADVANCE, true);
    sim.tick();
    sim.set_bit(IcrcChecker::RESET, false);
    let start = sim.cycle();

    let mut beat_in_frame = 0usize;
    let mut end_moved: Vec<u64> = Vec::new();
    let mut verdicts = Vec::new();
    let mut latency = Vec::new();
    let mut stalled_cycles = 0;
    let mut last_verdict = start;
    let limit = start + 64 + 4 * frames.iter().map(|f| f.len() as u64 / 16 + 8).sum::<u64>();
    while verdicts.len() < frames.len() {
        if sim.cycle() > limit {
            return Err(RtlError::Stuck {
                cycle: sim.cycle(),
                what: format!("{} of {} ICRC verdicts", verdicts.len(), frames.len()),
            });
        }
        source.begin_cycle();
        let advance = drive.p_advance >= 1.0 || rng.gen_bool(drive.p_advance);
        let presented = match (source.current(), source.current_frame()) {
            (Some(beat), Some(index)) => {
                let span = spans[index];
                let end_beat = (span.end - 1) / BEAT_BYTES;
                (beat_in_frame <= end_beat).then_some((*beat, span, beat_in_frame == end_beat))
            }
            _ => None,
        };
        let dut = sim.dut_mut();
        match presented {
            Some((beat, span, end)) => {
                dut.set_bit(IcrcChecker::BEAT_VALID, true);
                dut.set_bit(IcrcChecker::BEAT_FIRST, beat_in_frame == 0);
                dut.set_bit(IcrcChecker::BEAT_IPV6, span.ipv6);
                dut.set_bit(IcrcChecker::BEAT_END, end);
                dut.set_u64(
                    IcrcChecker::BEAT_END_BYTES,
                    if end {
                        (span.end % BEAT_BYTES) as u64
                    } else {
                        0
                    },
                );
                dut.set(IcrcChecker::BEAT_DATA, &beat.data);
            }
            None => {
                dut.set_bit(IcrcChecker::BEAT_VALID, false);
                dut.set_bit(IcrcChecker::BEAT_END, false);
            }
        }
        dut.set_bit(IcrcChecker::ADVANCE, advance);
        sim.eval();
        let cycle = sim.cycle();
        if advance && sim.get_bit(IcrcChecker::RESULT_VALID) {
            let Some(&moved) = end_moved.get(verdicts.len()) else {
                return Err(RtlError::Mismatch(format!(
                    "cycle {cycle}: a verdict with no frame end before it"
                )));
            };
            verdicts.push(sim.get_bit(IcrcChecker::RESULT_OK));
            latency.push(cycle - moved);
            last_verdict = cycle;
        }
        if source.current().is_some() && !advance {
            stalled_cycles += 1;
        }
        if let Some(beat) = source.end_cycle(cycle, advance) {
            if presented.is_some_and(|(_, _, end)| end) {
                end_moved.push(cycle);
            }
            beat_in_frame = if beat.last { 0 } else { beat_in_frame + 1 };
        }
        sim.tick();
    }
    // No verdict may follow without a frame.
    sim.set_bit(IcrcChecker::BEAT_VALID, false);
    sim.set_bit(IcrcChecker::BEAT_END, false);
    sim.set_bit(IcrcChecker::ADVANCE, true);
    for _ in 0..8 {
        sim.eval();
        if sim.get_bit(IcrcChecker::RESULT_VALID) {
            return Err(RtlError::Mismatch(format!(
                "cycle {}: a verdict after the last frame",
                sim.cycle()
            )));
        }
        sim.tick();
    }
    Ok(IcrcRun {
        verdicts,
        latency,
        cycles: last_verdict + 1 - start,
        stalled_cycles,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocenic_wire::random::random_frames;

    #[test]
    fn span_and_model_verdict_follow_the_ip_length() {
        for f in random_frames(3, 50) {
            let bytes = f.encode().unwrap();
            let span = icrc_span(&bytes).unwrap();
            assert_eq!(span.end, bytes.len());
            assert_eq!(model_icrc_ok(&bytes), Some(true));
            let mut padded = bytes.clone();
            padded.extend([0xEE; 7]);
            assert_eq!(icrc_span(&padded).unwrap().end, bytes.len());
            assert_eq!(model_icrc_ok(&padded), Some(true));
            let mut bad = bytes.clone();
            let at = (0..bytes.len())
                .rev()
                .find(|&at| covered_mask(&span, at) == 0xFF)
                .unwrap();
            assert_eq!(at, bytes.len() - 1, "the ICRC itself is covered");
            bad[at] ^= 1;
            assert_eq!(covered_mask(&span, ETH_LEN - 1), 0);
            assert_eq!(covered_mask(&span, ETH_LEN + span.ip_len + 6), 0);
            assert_eq!(model_icrc_ok(&bad), Some(false));
        }
        assert_eq!(icrc_span(&[0u8; 20]), None);
    }
}
