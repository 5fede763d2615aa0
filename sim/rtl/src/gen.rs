//! Frames for the RTL harnesses: valid frames of a chosen shape (opcode, IP
//! version, payload length; every other field seeded at random) and
//! malformed copies that break one rule each, one per drop reason of the
//! model's decoder.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rocenic_wire::opcode::OPCODES;
use rocenic_wire::*;

/// A valid frame with opcode `OPCODES[opcode_index % len]`, IPv6 or IPv4,
/// `payload_len` payload bytes (0 for opcodes without payload, at most
/// 4096) and every other field drawn from `seed`.
pub fn frame_with(opcode_index: usize, ipv6: bool, payload_len: usize, seed: u64) -> RoceFrame {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let info = &OPCODES[opcode_index % OPCODES.len()];
    rocenic_wire::random::frame_of(&mut rng, info, ipv6, payload_len)
}

/// A valid RC SEND_ONLY frame of exactly `wire_len` bytes when one exists
/// (58 ..= 4154 bytes, 2 more than a multiple of four, as every RoCEv2
/// frame is), else the nearest longer one; IPv4 without UDP checksum, as
/// the NIC sends. For throughput sweeps.
pub fn frame_of_len(wire_len: usize, seed: u64) -> RoceFrame {
    // SEND_ONLY on IPv4: 14 + 20 + 8 + 12 = 54 header bytes + ICRC.
    let overhead = ETH_LEN + IPV4_LEN + UDP_LEN + BTH_LEN + ICRC_LEN;
    let room = wire_len.saturating_sub(overhead);
    // Payload plus pad must fill the room: pick the payload whose padded
    // length is the room rounded up to four bytes.
    let payload = room.div_ceil(4) * 4;
    let send_only = OPCODES
        .iter()
        .position(|o| o.code == op::SEND_ONLY)
        .unwrap_or(0);
    let mut f = frame_with(send_only, false, payload.min(MAX_PAYLOAD), seed);
    f.udp_checksum = false;
    f
}

/// One way to break a valid frame, named for the drop reason the model's
/// decoder gives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Malformation {
    /// Cut short at a random length.
    Truncated,
    Ethertype,
    IpVersion,
    Ipv4Options,
    Ipv4Checksum,
    Ipv4Fragment,
    IpLength,
    NotUdp,
    UdpPort,
    UdpLength,
    UdpChecksum,
    Tver,
    Opcode,
    HeaderOpcodeMismatch,
    UnexpectedPayload,
    PayloadTooLarge,
    Pad,
    Icrc,
    /// Ethernet minimum-size padding after the ICRC: still valid.
    TrailingPad,
}

impl Malformation {
    pub const ALL: [Malformation; 19] = [
        Malformation::Truncated,
        Malformation::Ethertype,
        Malformation::IpVersion,
        Malformation::Ipv4Options,
        Malformation::Ipv4Checksum,
        Malformation::Ipv4Fragment,
        Malformation::IpLength,
        Malformation::NotUdp,
        Malformation::UdpPort,
        Malformation::UdpLength,
        Malformation::UdpChecksum,
        Malformation::Tver,
        Malformation::Opcode,
        Malformation::HeaderOpcodeMismatch,
        Malformation::UnexpectedPayload,
        Malformation::PayloadTooLarge,
        Malformation::Pad,
        Malformation::Icrc,
        Malformation::TrailingPad,
    ];
}

fn be16(b: &[u8], at: usize) -> usize {
    usize::from(u16::from_be_bytes([b[at], b[at + 1]]))
}

fn put16(b: &mut [u8], at: usize, v: usize) {
    b[at..at + 2].copy_from_slice(&(v as u16).to_be_bytes());
}

/// Recomputes the IPv4 header checksum, the ICRC and (when the frame
/// carries one) the UDP checksum after an edit, so only the intended rule
/// is broken. The IP and UDP lengths are taken as they stand.
fn refresh(b: &mut [u8]) {
    refresh_checksums(b, true);
}

/// [`refresh`], leaving the ICRC alone when `icrc` is false.
fn refresh_checksums(b: &mut [u8], icrc: bool) {
    let v6 = be16(b, 12) == usize::from(ETHERTYPE_IPV6);
    let ip_len = if v6 { IPV6_LEN } else { IPV4_LEN };
    let ip = ETH_LEN;
    if !v6 && b.len() >= ip + IPV4_LEN {
        b[ip + 10] = 0;
        b[ip + 11] = 0;
        let c = frame::internet_checksum(&b[ip..ip + IPV4_LEN]);
        b[ip + 10..ip + 12].copy_from_slice(&c.to_be_bytes());
    }
    let l3_len = if v6 {
        ip_len + be16(b, ip + 4)
    } else {
        be16(b, ip + 2)
    };
    let end = (ETH_LEN + l3_len).min(b.len());
    if end < ETH_LEN + ip_len + UDP_LEN + BTH_LEN + ICRC_LEN {
        return;
    }
    if icrc {
        if let Some(c) = icrc::compute(&b[ip..end - ICRC_LEN], ip_len) {
            b[end - ICRC_LEN..end].copy_from_slice(&c.to_le_bytes());
        }
    }
    let udp = ip + ip_len;
    if b[udp + 6] != 0 || b[udp + 7] != 0 {
        b[udp + 6] = 0;
        b[udp + 7] = 0;
        let c = udp_checksum_of(&b[ip..end], ip_len);
        b[udp + 6..udp + 8].copy_from_slice(&c.to_be_bytes());
    }
}

/// The UDP checksum as `RoceFrame::encode` computes it (RFC 768 over the
/// pseudo-header; zero becomes 0xFFFF).
fn udp_checksum_of(l3: &[u8], ip_len: usize) -> u16 {
    let udp = &l3[ip_len..];
    let mut pseudo = Vec::with_capacity(40 + udp.len());
    if ip_len == IPV4_LEN {
        pseudo.extend_from_slice(&l3[12..20]);
        pseudo.extend_from_slice(&[0, IP_PROTO_UDP]);
        pseudo.extend_from_slice(&(udp.len() as u16).to_be_bytes());
    } else {
        pseudo.extend_from_slice(&l3[8..40]);
        pseudo.extend_from_slice(&(udp.len() as u32).to_be_bytes());
        pseudo.extend_from_slice(&[0, 0, 0, IP_PROTO_UDP]);
    }
    pseudo.extend_from_slice(udp);
    match frame::internet_checksum(&pseudo) {
        0 => 0xFFFF,
        c => c,
    }
}

/// The frame's bytes up to `head_end`, then `body`, then a fresh ICRC,
/// with the IP and UDP lengths set to the new size and every checksum made
/// good.
fn rebuild(b: &[u8], head_end: usize, body: &[u8]) -> Vec<u8> {
    let v6 = be16(b, 12) == usize::from(ETHERTYPE_IPV6);
    let ip_len = if v6 { IPV6_LEN } else { IPV4_LEN };
    let mut out = b[..head_end].to_vec();
    out.extend_from_slice(body);
    out.extend_from_slice(&[0; ICRC_LEN]);
    let l3 = out.len() - ETH_LEN;
    if v6 {
        put16(&mut out, ETH_LEN + 4, l3 - IPV6_LEN);
    } else {
        put16(&mut out, ETH_LEN + 2, l3);
    }
    put16(&mut out, ETH_LEN + ip_len + 4, l3 - ip_len);
    refresh(&mut out);
    out
}

fn random_bytes(rng: &mut ChaCha8Rng, n: usize) -> Vec<u8> {
    (0..n).map(|_| rng.gen()).collect()
}

/// `frame` broken by `kind`, with checksums and ICRC made good again so
/// that `kind` is the first rule the decoder finds broken. Rules that only
/// IPv4 has (`Ipv4*`, `IpLength`: an IPv6 payload length cannot be shorter
/// than its own header) break the IP version instead on an IPv6 frame.
/// Draws the details (cut point, wrong values) from `rng`.
pub fn malform(frame: &RoceFrame, kind: Malformation, rng: &mut ChaCha8Rng) -> Vec<u8> {
    let mut b = frame.encode().expect("a valid frame encodes");
    let v6 = matches!(frame.ip, IpHeader::V6(_));
    let ip = ETH_LEN;
    let ip_len = if v6 { IPV6_LEN } else { IPV4_LEN };
    let udp = ip + ip_len;
    let bth = udp + UDP_LEN;
    let ext_at = bth + BTH_LEN;
    let info = opcode::info(frame.bth.opcode).expect("valid opcode");
    let payload_at = ext_at + info.headers.wire_len();
    let set_pad = |b: &mut Vec<u8>, pad: usize| b[bth + 1] = (b[bth + 1] & 0xCF) | (pad as u8) << 4;
    let ipv4_only = matches!(
        kind,
        Malformation::Ipv4Options
            | Malformation::Ipv4Checksum
            | Malformation::Ipv4Fragment
            | Malformation::IpLength
    );
    if v6 && ipv4_only {
        return malform(frame, Malformation::IpVersion, rng);
    }
    match kind {
        Malformation::Truncated => {
            // Any cut leaves fewer bytes than the IP length promises.
            let cut = rng.gen_range(1..b.len());
            b.truncate(cut);
            return b;
        }
        Malformation::Ethertype => {
            let other = [0x0806u16, 0x8100, 0x88CC, 0x8915][rng.gen_range(0..4)];
            b[12..14].copy_from_slice(&other.to_be_bytes());
            return b;
        }
        Malformation::IpVersion => {
            let version = if v6 { 4 } else { 6 };
            b[ip] = (b[ip] & 0x0F) | version << 4;
            return b;
        }
        Malformation::Ipv4Options => b[ip] = 0x40 | rng.gen_range(6..16),
        Malformation::Ipv4Checksum => {
            b[ip + 10] ^= 1 << rng.gen_range(0..8);
            return b;
        }
        Malformation::Ipv4Fragment => {
            // More-fragments, or a fragment offset.
            if rng.gen() {
                b[ip + 6] |= 0x20;
            } else {
                b[ip + 7] |= 1 << rng.gen_range(0..8);
            }
        }
        Malformation::IpLength => put16(&mut b, ip + 2, rng.gen_range(0..IPV4_LEN)),
        Malformation::NotUdp => {
            let proto = [6u8, 1, 0x91][rng.gen_range(0..3)];
            b[if v6 { ip + 6 } else { ip + 9 }] = proto;
        }
        Malformation::UdpPort => {
            let port = [4789u16, 4790, 4792, 53][rng.gen_range(0..4)];
            put16(&mut b, udp + 2, usize::from(port));
        }
        Malformation::UdpLength => {
            let len = be16(&b, udp + 4);
            put16(&mut b, udp + 4, len ^ (1 << rng.gen_range(0..12)));
        }
        Malformation::UdpChecksum => {
            // Present and wrong; the ICRC does not cover it.
            let c = be16(&b, udp + 6);
            put16(&mut b, udp + 6, if c == 0 { 0x1234 } else { c ^ 0x0100 });
            return b;
        }
        Malformation::Tver => b[bth + 1] = (b[bth + 1] & 0xF0) | rng.gen_range(1..16),
        Malformation::Opcode => {
            let unknown: Vec<u8> = (0..=255u8).filter(|c| opcode::info(*c).is_none()).collect();
            b[bth] = unknown[rng.gen_range(0..unknown.len())];
        }
        Malformation::HeaderOpcodeMismatch => {
            // An atomic request (28 header bytes) with fewer after the BTH.
            let n = rng.gen_range(0..ATOMIC_ETH_LEN);
            let body = random_bytes(rng, n);
            let mut out = rebuild(&b, ext_at, &body);
            out[bth] = op::COMPARE_SWAP;
            refresh(&mut out);
            return out;
        }
        Malformation::UnexpectedPayload => {
            // An ACK (AETH only) with bytes between AETH and ICRC.
            let n = rng.gen_range(AETH_LEN + 1..AETH_LEN + 64);
            let body = random_bytes(rng, n);
            let mut out = rebuild(&b, ext_at, &body);
            out[bth] = op::ACKNOWLEDGE;
            refresh(&mut out);
            return out;
        }
        Malformation::PayloadTooLarge => {
            // A SEND_ONLY with 4097..=4100 payload bytes and its pad.
            let len = MAX_PAYLOAD + rng.gen_range(1..=4);
            let pad = pad_for(len);
            let mut body = random_bytes(rng, len);
            body.resize(len + pad, 0);
            let mut out = rebuild(&b, ext_at, &body);
            out[bth] = op::SEND_ONLY;
            set_pad(&mut out, pad);
            refresh(&mut out);
            return out;
        }
        Malformation::Pad => {
            // A pad count above the bytes after the headers, which must be
            // fewer than three (none for an opcode without payload).
            if info.has_payload {
                let padded = rng.gen_range(0..3);
                let body = random_bytes(rng, padded);
                let mut out = rebuild(&b, payload_at, &body);
                set_pad(&mut out, rng.gen_range(padded + 1..=3));
                refresh(&mut out);
                return out;
            }
            set_pad(&mut b, rng.gen_range(1..=3));
        }
        Malformation::Icrc => {
            // A bit of the ICRC or of the payload; the UDP checksum (which
            // covers both) is made good again.
            let end = b.len();
            let from = if rng.gen() {
                payload_at
            } else {
                end - ICRC_LEN
            };
            let at = rng.gen_range(from..end);
            b[at] ^= 1 << rng.gen_range(0..8);
            refresh_checksums(&mut b, false);
            return b;
        }
        Malformation::TrailingPad => {
            let extra = rng.gen_range(1..40);
            b.extend(random_bytes(rng, extra));
            return b;
        }
    }
    refresh(&mut b);
    b
}

/// The model decoder's reason for a frame broken by `kind` (`None`: still
/// valid), given the IP version of the original frame.
pub fn expected_reason(kind: Malformation, ipv6: bool) -> Option<&'static str> {
    Some(match kind {
        Malformation::Ipv4Options
        | Malformation::Ipv4Checksum
        | Malformation::Ipv4Fragment
        | Malformation::IpLength
            if ipv6 =>
        {
            "ip_version"
        }
        Malformation::Truncated => "truncated",
        Malformation::Ethertype => "ethertype",
        Malformation::IpVersion => "ip_version",
        Malformation::Ipv4Options => "ipv4_options",
        Malformation::Ipv4Checksum => "ipv4_checksum",
        Malformation::Ipv4Fragment => "ipv4_fragment",
        Malformation::IpLength => "ip_length",
        Malformation::NotUdp => "not_udp",
        Malformation::UdpPort => "udp_port",
        Malformation::UdpLength => "udp_length",
        Malformation::UdpChecksum => "udp_checksum",
        Malformation::Tver => "tver",
        Malformation::Opcode => "opcode",
        Malformation::HeaderOpcodeMismatch => "header_opcode_mismatch",
        Malformation::UnexpectedPayload => "unexpected_payload",
        Malformation::PayloadTooLarge => "payload_too_large",
        Malformation::Pad => "pad",
        Malformation::Icrc => "icrc",
        Malformation::TrailingPad => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_are_valid_and_exact() {
        for (i, info) in OPCODES.iter().enumerate() {
            for v6 in [false, true] {
                for len in [0, 1, 3, 4, 64, 4096] {
                    let f = frame_with(i, v6, len, i as u64);
                    assert_eq!(f.bth.opcode, info.code);
                    let want = if info.has_payload { len } else { 0 };
                    assert_eq!(f.payload.len(), want);
                    assert_eq!(RoceFrame::decode(&f.encode().unwrap()).unwrap(), f);
                }
            }
        }
        for len in (58..=4154).step_by(4) {
            assert_eq!(frame_of_len(len, 1).encode().unwrap().len(), len);
        }
        for len in [59, 64, 65, 127, 128, 129, 1500, 4151] {
            let wire = frame_of_len(len, 1).encode().unwrap().len();
            assert!(wire > len && wire < len + 4, "{len} -> {wire}");
        }
    }

    #[test]
    fn each_malformation_gets_its_reason_from_the_model() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        for seed in 0..80u64 {
            let len = [0, 1, 2, 3, 5, 61, 64, 300, 4096][seed as usize % 9];
            let f = frame_with(seed as usize * 7, seed % 2 == 0, len, seed);
            let v6 = f.ip.header_len() == IPV6_LEN;
            for kind in Malformation::ALL {
                let bytes = malform(&f, kind, &mut rng);
                let got = RoceFrame::decode(&bytes);
                match expected_reason(kind, v6) {
                    None => assert_eq!(got.as_ref(), Ok(&f)),
                    Some(want) => assert_eq!(
                        got.as_ref().map_err(|e| e.reason()),
                        Err(want),
                        "{kind:?} on opcode {:#x} v6 {v6} len {len} seed {seed}",
                        f.bth.opcode
                    ),
                }
            }
        }
    }
}
