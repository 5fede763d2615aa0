//! The RX parser in rust-hdl's simulator, judged against the reference
//! codec: the shared vectors, every opcode on IPv4 and IPv6, payload sizes
//! around beat boundaries, a malformed frame for each drop reason, Ethernet
//! padding, back-to-back 1-beat frames at full rate, and random
//! backpressure. Runs are replayed on the generated Verilog under
//! Verilator.

use crate::common;

use common::frames::{self, frame_bytes, vectors};
use common::rx::{judge, run_parser, Traffic, FULL_SPEED};
use rocenic_hdl::frame::rx::rx_parser::RECORD_LATENCY;
use rocenic_wire::frame::internet_checksum;
use rocenic_wire::op;

/// Recomputes the IPv4 header checksum after an edit.
fn fix_ipv4_checksum(f: &mut [u8]) {
    f[24] = 0;
    f[25] = 0;
    let c = internet_checksum(&f[14..34]);
    f[24..26].copy_from_slice(&c.to_be_bytes());
}

/// Sets a big-endian 16-bit field.
fn set16(f: &mut [u8], at: usize, v: u16) {
    f[at..at + 2].copy_from_slice(&v.to_be_bytes());
}

/// Malformed frames, one or more per drop reason, with the reason the codec
/// gives (checked again by `judge`).
fn malformed() -> Vec<(Vec<u8>, &'static str)> {
    let v4 = |len| frame_bytes(op::SEND_ONLY, false, len, 77);
    let v6 = |len| frame_bytes(op::SEND_ONLY, true, len, 78);
    let mut out = Vec::new();
    let mut push = |f: Vec<u8>, why| out.push((f, why));
    push(v4(8)[..10].to_vec(), "truncated");
    push(v4(8)[..30].to_vec(), "truncated");
    push(v6(8)[..50].to_vec(), "truncated");
    let long = v4(300);
    push(long[..long.len() - 3].to_vec(), "truncated");
    push(long[..130].to_vec(), "truncated");
    let mut f = v4(8);
    set16(&mut f, 12, 0x0806);
    push(f, "ethertype");
    let mut f = v4(8);
    f[14] = 0x65;
    push(f, "ip_version");
    let mut f = v6(8);
    f[14] = 0x46;
    push(f, "ip_version");
    let mut f = v4(8);
    f[14] = 0x46;
    push(f, "ipv4_options");
    let mut f = v4(8);
    f[25] ^= 1;
    push(f, "ipv4_checksum");
    let mut f = v4(8);
    f[20] |= 0x20;
    fix_ipv4_checksum(&mut f);
    push(f, "ipv4_fragment");
    let mut f = v4(8);
    f[23] = 6;
    fix_ipv4_checksum(&mut f);
    push(f, "not_udp");
    let mut f = v6(8);
    f[20] = 6;
    push(f, "not_udp");
    let mut f = v4(8);
    set16(&mut f, 16, 19);
    fix_ipv4_checksum(&mut f);
    push(f, "ip_length");
    let mut f = v4(8);
    set16(&mut f, 16, 27);
    fix_ipv4_checksum(&mut f);
    push(f, "truncated");
    let mut f = v4(8);
    set16(&mut f, 36, 4790);
    push(f, "udp_port");
    let mut f = v6(8);
    set16(&mut f, 56, 4790);
    push(f, "udp_port");
    let mut f = v4(8);
    let udp_len = u16::from_be_bytes([f[38], f[39]]);
    set16(&mut f, 38, udp_len + 1);
    push(f, "udp_length");
    // IP length short of UDP + BTH.
    let mut f = v4(8);
    set16(&mut f, 16, 20 + 8 + 11);
    set16(&mut f, 38, 8 + 11);
    fix_ipv4_checksum(&mut f);
    push(f, "truncated");
    let mut f = v4(8);
    f[43] |= 1;
    push(f, "tver");
    let mut f = v6(8);
    f[62] = 0x15;
    push(f, "opcode");
    let mut f = v4(0);
    f[42] = op::COMPARE_SWAP;
    push(f, "header_opcode_mismatch");
    let mut f = v4(8);
    f[42] = op::ACKNOWLEDGE;
    push(f, "unexpected_payload");
    let mut f = v4(0);
    f[43] |= 0x10;
    push(f, "pad");
    // 4100 payload bytes: lengths fixed up by hand (the codec will not
    // encode it).
    let mut f = v4(4096);
    let icrc_at = f.len() - 4;
    f.splice(icrc_at..icrc_at, [1, 2, 3, 4]);
    let total = u16::from_be_bytes([f[16], f[17]]) + 4;
    set16(&mut f, 16, total);
    set16(&mut f, 38, total - 20);
    f[40] = 0;
    f[41] = 0;
    fix_ipv4_checksum(&mut f);
    push(f, "payload_too_large");
    // The parser does not verify UDP checksums: accepted (see rx_parser).
    let mut f = v6(8);
    f[60] ^= 0x10;
    push(f, "udp_checksum");
    let mut f = v4(8);
    f[60] ^= 0x80;
    push(f, "icrc");
    let mut f = v6(200);
    f[150] ^= 0x01;
    push(f, "icrc");
    let mut f = v6(8);
    let n = f.len();
    f[n - 1] ^= 0x40;
    push(f, "icrc");
    out
}

#[test]
fn shared_vectors_are_accepted_with_every_field() {
    let list: Vec<Vec<u8>> = vectors().into_iter().map(|(_, b)| b).collect();
    let run = run_parser(&list, FULL_SPEED, Some("rx_vectors"));
    assert_eq!(judge(&list, &run), vec!["accepted"; 3]);
    // Spot checks beside the field-by-field comparison.
    let (cnp, uc, ack) = (&run.records[0], &run.records[1], &run.records[2]);
    assert_eq!((cnp.opcode.to_u64(), cnp.becn), (0x81, true));
    assert_eq!((uc.mig_req, uc.pad_count.to_u64()), (true, 2));
    assert!(uc.has_payload && !ack.has_payload && !cnp.has_payload);
    assert_eq!(ack.psn.to_u64(), 0xFF_FFFE);
    assert_eq!(
        (ack.aeth_syndrome.to_u64(), ack.aeth_msn.to_u64()),
        (0x1F, 5)
    );
    assert_eq!(run.segments.len(), 1);
    assert_eq!(run.stats[0], 3);
}

#[test]
fn every_opcode_on_both_ip_versions() {
    let mut list = Vec::new();
    for (i, code) in frames::opcodes().into_iter().enumerate() {
        for ipv6 in [false, true] {
            list.push(frame_bytes(code, ipv6, (i * 53) % 150, 1000 + i as u64));
        }
    }
    let run = run_parser(&list, FULL_SPEED, Some("rx_opcodes"));
    let names = judge(&list, &run);
    assert!(names.iter().all(|n| *n == "accepted"), "{names:?}");
    // A read response and a SEND carry payload; an ACK does not.
    assert!(run.records.iter().any(|r| r.has_payload));
    assert!(run.records.iter().any(|r| !r.has_payload));
}

#[test]
fn payload_sizes_around_beat_boundaries() {
    let mut list = Vec::new();
    for (i, len) in [
        0usize, 1, 3, 4, 5, 6, 7, 8, 9, 10, 11, 60, 63, 64, 65, 66, 127, 128, 129, 4096,
    ]
    .into_iter()
    .enumerate()
    {
        // SEND_ONLY: header 54/74 bytes; WRITE_ONLY_IMM: 74/94 (RETH+ImmDt).
        list.push(frame_bytes(op::SEND_ONLY, i % 2 == 0, len, 2000 + i as u64));
        list.push(frame_bytes(
            op::WRITE_ONLY_IMM,
            i % 2 == 1,
            len,
            3000 + i as u64,
        ));
        list.push(frame_bytes(
            op::UD_SEND_ONLY_IMM,
            i % 3 == 0,
            len,
            4000 + i as u64,
        ));
    }
    let run = run_parser(&list, FULL_SPEED, None);
    let names = judge(&list, &run);
    assert!(names.iter().all(|n| *n == "accepted"), "{names:?}");
}

#[test]
fn each_drop_reason_is_named_as_the_codec_names_it() {
    let cases = malformed();
    let list: Vec<Vec<u8>> = cases.iter().map(|c| c.0.clone()).collect();
    let want: Vec<&str> = cases.iter().map(|c| c.1).collect();
    // Bracket each bad frame with a good one so a bad frame cannot leak
    // into its neighbours unnoticed.
    let mut mixed = Vec::new();
    let mut expect = Vec::new();
    for (i, (f, why)) in list.iter().zip(&want).enumerate() {
        mixed.push(frame_bytes(
            op::READ_RESPONSE_ONLY,
            i % 2 == 0,
            70,
            i as u64,
        ));
        expect.push("accepted");
        mixed.push(f.clone());
        expect.push(why);
    }
    let run = run_parser(&mixed, FULL_SPEED, Some("rx_malformed"));
    assert_eq!(judge(&mixed, &run), expect);
}

#[test]
fn ethernet_padding_and_trailing_bytes_are_ignored() {
    let mut list = Vec::new();
    // A 58-byte SEND with no payload, padded to the 60-byte minimum.
    let mut f = frame_bytes(op::SEND_ONLY, false, 0, 5);
    assert_eq!(f.len(), 58);
    f.resize(60, 0);
    list.push(f);
    // A 62-byte ACK padded to 64.
    let mut f = frame_bytes(op::ACKNOWLEDGE, false, 0, 6);
    f.resize(64, 0);
    list.push(f);
    // Frames followed by junk that spills into further beats: once the IP
    // length is reached the rest of the frame is swallowed.
    let mut f = frame_bytes(op::ACKNOWLEDGE, false, 0, 7);
    f.extend((0..150u32).map(|i| i as u8));
    list.push(f);
    let mut f = frame_bytes(op::SEND_ONLY, true, 70, 8);
    f.extend([0xEE; 64]);
    list.push(f);
    let mut f = frame_bytes(op::WRITE_ONLY, false, 10, 9);
    f.extend([0x11; 3]);
    list.push(f);
    list.push(frame_bytes(op::SEND_ONLY, false, 33, 10));
    let run = run_parser(&list, FULL_SPEED, Some("rx_padding"));
    assert_eq!(judge(&list, &run), vec!["accepted"; 6]);
}

#[test]
fn one_beat_frames_back_to_back_at_full_rate() {
    let list: Vec<Vec<u8>> = (0..60)
        .map(|i| match i % 3 {
            0 => frame_bytes(op::ACKNOWLEDGE, false, 0, i),
            1 => frame_bytes(op::SEND_ONLY, false, (i % 5) as usize, i),
            _ => frame_bytes(op::SEND_LAST_IMM, false, 0, i),
        })
        .collect();
    assert!(list.iter().all(|f| f.len() <= 64));
    let run = run_parser(&list, FULL_SPEED, Some("rx_one_beat"));
    judge(&list, &run);
    assert_eq!(run.refused, 0, "the parser never refused a beat");
    // One record per cycle, each a fixed latency after its frame.
    for (i, (&rec, &last)) in run
        .record_cycles
        .iter()
        .zip(&run.last_beat_cycles)
        .enumerate()
    {
        assert_eq!(rec - last, RECORD_LATENCY, "frame {i} latency");
    }
    assert!(run.record_cycles.windows(2).all(|w| w[1] == w[0] + 1));
}

#[test]
fn mixed_sizes_stream_at_one_beat_per_cycle() {
    let mut list = Vec::new();
    for i in 0..30u64 {
        let len = [0usize, 1, 63, 64, 65, 200, 1000][(i % 7) as usize];
        list.push(frame_bytes(op::WRITE_ONLY, i % 2 == 0, len, 50 + i));
        list.push(frame_bytes(op::ACKNOWLEDGE, i % 3 == 0, 0, 90 + i));
    }
    let beats: u64 = list.iter().map(|f| f.len().div_ceil(64) as u64).sum();
    let run = run_parser(&list, FULL_SPEED, None);
    judge(&list, &run);
    assert_eq!(run.refused, 0);
    // Every beat went in on consecutive cycles; the last record left a
    // fixed latency after the last beat.
    assert_eq!(*run.last_beat_cycles.last().unwrap(), beats - 1);
    assert_eq!(
        *run.record_cycles.last().unwrap(),
        beats - 1 + RECORD_LATENCY
    );
}

#[test]
fn random_backpressure_loses_and_reorders_nothing() {
    let mut list = Vec::new();
    for (i, code) in frames::opcodes().into_iter().enumerate().step_by(3) {
        list.push(frame_bytes(
            code,
            i % 2 == 0,
            (i * 97) % 300,
            7000 + i as u64,
        ));
    }
    let bad: Vec<Vec<u8>> = malformed().into_iter().map(|c| c.0).step_by(4).collect();
    for (i, b) in bad.into_iter().enumerate() {
        list.insert(2 * i + 1, b);
    }
    for (seed, p_valid, p_ready) in [(1, 0.6, 0.5), (2, 1.0, 0.3), (3, 0.9, 0.9)] {
        let replay = (seed == 1).then_some("rx_backpressure");
        let run = run_parser(
            &list,
            Traffic {
                p_valid,
                p_ready,
                seed,
            },
            replay,
        );
        judge(&list, &run);
    }
}

/// Random valid frames, most of them damaged at random: bit flips in the
/// headers or anywhere, truncation, trailing bytes, rewritten length fields.
fn mutated_frames(seed: u64, count: usize) -> Vec<Vec<u8>> {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let codes = frames::opcodes();
    (0..count)
        .map(|i| {
            let code = codes[rng.gen_range(0..codes.len())];
            let len = if rng.gen_bool(0.2) {
                rng.gen_range(0..=4096)
            } else {
                rng.gen_range(0..200)
            };
            let mut f = frame_bytes(code, rng.gen(), len, seed * 10_000 + i as u64);
            match rng.gen_range(0..8) {
                0 => {}
                1 | 2 => {
                    let at = rng.gen_range(0..f.len().min(110));
                    f[at] ^= 1 << rng.gen_range(0..8);
                }
                3 => {
                    let at = rng.gen_range(0..f.len());
                    f[at] ^= 1 << rng.gen_range(0..8);
                }
                4 => {
                    // A stream frame has at least one byte.
                    let keep = rng.gen_range(1..f.len());
                    f.truncate(keep);
                }
                5 => {
                    let extra = rng.gen_range(1..130);
                    f.extend((0..extra).map(|_| rng.gen::<u8>()));
                }
                6 => {
                    // An IP or UDP length field rewritten (IPv4 checksum
                    // fixed so the length check itself is reached).
                    let ipv6 = f[12] == 0x86;
                    let at = match (ipv6, rng.gen_bool(0.5)) {
                        (false, true) => 16,
                        (false, false) => 38,
                        (true, true) => 18,
                        (true, false) => 58,
                    };
                    let v = u16::from_be_bytes([f[at], f[at + 1]]);
                    let delta = rng.gen_range(1..70u16);
                    let new = if rng.gen() {
                        v.wrapping_add(delta)
                    } else {
                        v.wrapping_sub(delta)
                    };
                    set16(&mut f, at, new);
                    if !ipv6 {
                        fix_ipv4_checksum(&mut f);
                    }
                }
                _ => {
                    // A different opcode on the same bytes.
                    let at = if f[12] == 0x86 { 62 } else { 42 };
                    f[at] = codes[rng.gen_range(0..codes.len())];
                }
            }
            f
        })
        .collect()
}

#[test]
fn random_damage_is_judged_as_the_codec_judges_it() {
    let list = mutated_frames(11, 250);
    let run = run_parser(&list, FULL_SPEED, Some("rx_random"));
    let names = judge(&list, &run);
    // The mix exercises acceptance and a spread of reasons.
    let mut kinds: Vec<&str> = names.clone();
    kinds.sort_unstable();
    kinds.dedup();
    assert!(
        kinds.contains(&"accepted") && kinds.contains(&"icrc"),
        "{kinds:?}"
    );
    assert!(kinds.len() >= 8, "{kinds:?}");
}

#[test]
fn random_damage_under_backpressure() {
    let list = mutated_frames(12, 120);
    let run = run_parser(
        &list,
        Traffic {
            p_valid: 0.7,
            p_ready: 0.6,
            seed: 9,
        },
        None,
    );
    judge(&list, &run);
}

#[test]
fn ipv4_checksum_corner_cases_follow_the_codec() {
    // A header whose checksum is 0x0000 (the other words sum to a
    // multiple of 0xFFFF): accepted. The same header with 0xFFFF, the other
    // ones'-complement zero: rejected by the codec, which compares against
    // the computed value exactly.
    let mut f = frames::frame(op::SEND_ONLY, false, 16, 31);
    let zero = (0..=u16::MAX)
        .find_map(|id| {
            if let rocenic_wire::IpHeader::V4(h) = &mut f.ip {
                h.identification = id;
            }
            let b = f.encode().unwrap();
            (b[24] == 0 && b[25] == 0).then_some(b)
        })
        .expect("some identification gives checksum 0");
    let mut ones = zero.clone();
    ones[24] = 0xFF;
    ones[25] = 0xFF;
    let list = vec![zero, ones];
    let run = run_parser(&list, FULL_SPEED, Some("rx_ipv4_checksum"));
    assert_eq!(judge(&list, &run), vec!["accepted", "ipv4_checksum"]);
}

/// What a hand-driven parser emitted, for tests that drive it directly.
#[derive(Default)]
struct Seen {
    records: Vec<rocenic_hdl::frame::rx::header_record::HeaderRecord>,
    payload_beats: usize,
}

/// One cycle: offer `beat` (bytes, last) or nothing, with `reset`.
fn feed(
    sim: &mut rocenic_hdl_testbench::CycleSim<rocenic_hdl::frame::rx::rx_parser::RxParser>,
    seen: &mut Seen,
    beat: Option<(&[u8], bool)>,
    reset: bool,
) {
    use rocenic_hdl::primitives::wide::{bits_from_bytes, bits_from_words};
    sim.uut.reset.next = reset;
    sim.uut.rx.tvalid.next = beat.is_some();
    if let Some((bytes, last)) = beat {
        let mut data = bytes.to_vec();
        data.resize(64, 0);
        sim.uut.rx.tdata.next = bits_from_bytes(&data);
        let keep = if bytes.len() == 64 {
            u64::MAX
        } else {
            (1 << bytes.len()) - 1
        };
        sim.uut.rx.tkeep.next = bits_from_words(&[keep]);
        sim.uut.rx.tlast.next = last;
    }
    sim.settle();
    assert!(reset || beat.is_none() || sim.uut.rx.tready.val());
    if !reset && sim.uut.record.valid.val() {
        seen.records.push(sim.uut.record.record.val());
    }
    if !reset && sim.uut.payload.tvalid.val() {
        seen.payload_beats += 1;
    }
    sim.tick();
}

#[test]
fn reset_drops_frames_in_flight_and_clears_counters() {
    use rocenic_hdl::frame::rx::rx_parser::RxParser;
    use rocenic_hdl_testbench::CycleSim;
    use rust_hdl::prelude::*;

    let big = frame_bytes(op::WRITE_ONLY, false, 1000, 1);
    let small = frame_bytes(op::ACKNOWLEDGE, false, 0, 2);
    assert!(small.len() <= 64);
    let good: Vec<Vec<u8>> = (0..3)
        .map(|i| frame_bytes(op::SEND_ONLY, i == 1, 100, 3 + i))
        .collect();
    let mut sim = CycleSim::new(RxParser::default(), |p| &mut p.clock);
    sim.uut.payload.tready.next = true;
    sim.uut.record.ready.next = true;
    sim.uut.stat_select.next = bits(0);
    let mut seen = Seen::default();
    // The small frame is taken in, the big one is cut off by the reset,
    // and the reset comes before either record is out.
    feed(&mut sim, &mut seen, Some((&small, true)), false);
    for chunk in big.chunks(64).take(4) {
        feed(&mut sim, &mut seen, Some((chunk, false)), false);
    }
    feed(&mut sim, &mut seen, None, true);
    feed(&mut sim, &mut seen, None, true);
    sim.uut.reset.next = false;
    sim.settle();
    assert_eq!(sim.uut.stat_count.val().to_u64(), 0, "counters cleared");
    assert!(seen.records.is_empty() && seen.payload_beats == 0);
    for f in &good {
        let n = f.len().div_ceil(64);
        for (i, chunk) in f.chunks(64).enumerate() {
            feed(&mut sim, &mut seen, Some((chunk, i + 1 == n)), false);
        }
    }
    for _ in 0..12 {
        feed(&mut sim, &mut seen, None, false);
    }
    assert_eq!(
        seen.records.len(),
        3,
        "only the frames sent after the reset"
    );
    assert!(seen
        .records
        .iter()
        .all(|r| !r.drop && r.payload_len.to_u64() == 100));
    assert_eq!(
        seen.payload_beats,
        3 * 2,
        "two payload beats per 100-byte frame"
    );
    sim.uut.stat_select.next = bits(0);
    sim.settle();
    assert_eq!(sim.uut.stat_count.val().to_u64(), 3);
}
