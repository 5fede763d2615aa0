//! Seeded fault injection on one direction of a link: loss, duplication,
//! reordering and single-bit corruption.
//!
//! Corruption models a bit error that slipped past the Ethernet FCS, so the
//! receiver's own checks (IPv4 header checksum, UDP checksum, ICRC, length
//! and version checks) must catch it. A few bits are covered by none of
//! those: the IPv6 traffic class, flow label and hop limit (masked by the
//! ICRC, outside the UDP pseudo-header), the UDP checksum field and BTH
//! byte 4 (FECN/BECN, masked by the ICRC) when the UDP checksum is off, and
//! Ethernet padding past the IP length. Flipping one of those would be a
//! fault nobody can observe, so the bit is drawn uniformly from the others.

use crate::config::FaultConfig;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rocenic_wire::{ETHERTYPE_IPV4, ETHERTYPE_IPV6, ETH_LEN, IPV4_LEN, IPV6_LEN, UDP_LEN};

/// What happens to one frame on one link direction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FaultDecision {
    pub lost: bool,
    pub corrupted: bool,
    pub duplicated: bool,
    pub reordered: bool,
}

/// The random source of one link direction.
#[derive(Clone, Debug)]
pub struct LinkFaults {
    rng: ChaCha8Rng,
}

impl LinkFaults {
    /// Each link direction draws from its own ChaCha stream of the fabric
    /// seed, so faults on one link never shift the draws of another.
    pub fn new(seed: u64, stream: u64) -> LinkFaults {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(stream);
        LinkFaults { rng }
    }

    /// Decides the fate of `frame`, corrupting it in place when so drawn.
    /// Always consumes four uniform draws (plus the bit position when
    /// corrupting) so the stream stays aligned whatever the probabilities.
    pub fn decide(&mut self, cfg: &FaultConfig, frame: &mut [u8]) -> FaultDecision {
        let lost = self.rng.gen::<f64>() < cfg.loss;
        let corrupt = self.rng.gen::<f64>() < cfg.corrupt;
        let duplicated = self.rng.gen::<f64>() < cfg.duplicate;
        let reordered = self.rng.gen::<f64>() < cfg.reorder;
        if lost {
            return FaultDecision {
                lost,
                ..FaultDecision::default()
            };
        }
        let corrupted = corrupt && corrupt_one_bit(&mut self.rng, frame);
        FaultDecision {
            lost,
            corrupted,
            duplicated,
            reordered,
        }
    }
}

/// Flips one uniformly chosen checked bit after the Ethernet header.
/// Returns false (frame untouched) when the frame has no such bit.
pub fn corrupt_one_bit(rng: &mut impl Rng, frame: &mut [u8]) -> bool {
    if frame.len() <= ETH_LEN {
        return false;
    }
    let first = ETH_LEN * 8;
    let total = frame.len() * 8 - first;
    let skip = unchecked_bits(frame);
    let eligible = total - skip.len();
    if eligible == 0 {
        return false;
    }
    let mut bit = first + rng.gen_range(0..eligible);
    // `skip` is sorted: walking it maps the k-th eligible bit to its index.
    for &s in &skip {
        if s <= bit {
            bit += 1;
        } else {
            break;
        }
    }
    frame[bit / 8] ^= 1 << (bit % 8);
    true
}

/// Bit indices (`byte * 8 + bit`, bit 0 the least significant) after the
/// Ethernet header that no receiver check covers, sorted and unique.
pub fn unchecked_bits(frame: &[u8]) -> Vec<usize> {
    let mut out = Vec::new();
    if frame.len() < ETH_LEN {
        return out;
    }
    let ethertype = u16::from_be_bytes([frame[12], frame[13]]);
    let l3 = ETH_LEN;
    let (ip_len, ip_total, proto) = match ethertype {
        ETHERTYPE_IPV4 if frame.len() >= l3 + IPV4_LEN && frame[l3] == 0x45 => {
            let total = usize::from(u16::from_be_bytes([frame[l3 + 2], frame[l3 + 3]]));
            (IPV4_LEN, total, frame[l3 + 9])
        }
        ETHERTYPE_IPV6 if frame.len() >= l3 + IPV6_LEN && frame[l3] >> 4 == 6 => {
            // Traffic class low nibble of byte 0 .. flow label, and hop limit.
            out.extend((l3 * 8)..(l3 * 8 + 4));
            out.extend(((l3 + 1) * 8)..((l3 + 4) * 8));
            out.extend(((l3 + 7) * 8)..((l3 + 8) * 8));
            let payload = usize::from(u16::from_be_bytes([frame[l3 + 4], frame[l3 + 5]]));
            (IPV6_LEN, IPV6_LEN + payload, frame[l3 + 6])
        }
        _ => return out,
    };

    let udp = l3 + ip_len;
    if proto == rocenic_wire::IP_PROTO_UDP && ip_total >= ip_len + UDP_LEN {
        if let (Some(c0), Some(c1)) = (frame.get(udp + 6), frame.get(udp + 7)) {
            let csum = u16::from_be_bytes([*c0, *c1]);
            if csum == 0 {
                out.extend(((udp + 6) * 8)..((udp + 8) * 8));
                let port = u16::from_be_bytes([frame[udp + 2], frame[udp + 3]]);
                let bth4 = udp + UDP_LEN + 4;
                if port == rocenic_wire::ROCEV2_UDP_PORT && bth4 < frame.len() {
                    out.extend((bth4 * 8)..((bth4 + 1) * 8));
                }
            } else if csum.count_ones() == 1 {
                // Clearing the only set bit turns the checksum off.
                let bit = csum.trailing_zeros() as usize;
                let byte = if bit >= 8 { udp + 6 } else { udp + 7 };
                out.push(byte * 8 + bit % 8);
            }
        }
    }

    let end = l3 + ip_total;
    if end < frame.len() {
        out.extend((end * 8)..(frame.len() * 8));
    }
    out.sort_unstable();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocenic_wire::*;
    use std::net::{Ipv4Addr, Ipv6Addr};

    fn frame(ip: IpHeader, udp_checksum: bool, payload_len: usize) -> Vec<u8> {
        let f = RoceFrame {
            eth: EthHeader {
                dst: [2, 0, 0, 0, 0, 2],
                src: [2, 0, 0, 0, 0, 1],
            },
            ip,
            udp_src_port: 0xC123,
            udp_checksum,
            bth: Bth::new(op::SEND_ONLY, 0x11, 0x22),
            ext: ExtHeaders::default(),
            payload: (0..payload_len).map(|i| i as u8).collect(),
        };
        f.encode().unwrap()
    }

    fn v4() -> IpHeader {
        IpHeader::V4(Ipv4Header {
            src: Ipv4Addr::new(10, 0, 0, 1),
            dst: Ipv4Addr::new(10, 0, 0, 2),
            dscp: 26,
            ecn: ecn::ECT0,
            identification: 7,
            dont_fragment: true,
            ttl: 64,
        })
    }

    fn v6() -> IpHeader {
        IpHeader::V6(Ipv6Header {
            src: Ipv6Addr::new(0xfe80, 0, 0, 0, 0, 0, 0, 1),
            dst: Ipv6Addr::new(0xfe80, 0, 0, 0, 0, 0, 0, 2),
            dscp: 26,
            ecn: ecn::ECT0,
            flow_label: 0x12345,
            hop_limit: 64,
        })
    }

    /// Every bit the corrupter may choose is caught by the decoder.
    fn assert_every_eligible_flip_detected(bytes: &[u8]) {
        assert!(RoceFrame::decode(bytes).is_ok());
        let skip = unchecked_bits(bytes);
        for bit in ETH_LEN * 8..bytes.len() * 8 {
            if skip.binary_search(&bit).is_ok() {
                continue;
            }
            let mut b = bytes.to_vec();
            b[bit / 8] ^= 1 << (bit % 8);
            assert!(
                RoceFrame::decode(&b).is_err(),
                "flip of bit {bit} (byte {}) went unnoticed",
                bit / 8
            );
        }
    }

    #[test]
    fn ipv4_without_udp_checksum_every_eligible_flip_is_caught() {
        let b = frame(v4(), false, 37);
        let skip = unchecked_bits(&b);
        // UDP checksum (16 bits) and BTH byte 4 (8 bits).
        assert_eq!(skip.len(), 24);
        assert_every_eligible_flip_detected(&b);
    }

    #[test]
    fn ipv4_with_udp_checksum_every_eligible_flip_is_caught() {
        let b = frame(v4(), true, 64);
        assert!(unchecked_bits(&b).len() <= 1);
        assert_every_eligible_flip_detected(&b);
    }

    #[test]
    fn ipv6_every_eligible_flip_is_caught() {
        let b = frame(v6(), true, 13);
        assert!(unchecked_bits(&b).len() >= 36);
        assert_every_eligible_flip_detected(&b);
    }

    #[test]
    fn ethernet_padding_is_not_a_target() {
        let mut b = frame(v4(), false, 0);
        let len = b.len();
        b.extend_from_slice(&[0; 10]);
        let skip = unchecked_bits(&b);
        assert!(skip.ends_with(&((len * 8)..(len + 10) * 8).collect::<Vec<_>>()));
    }

    #[test]
    fn corrupt_flips_exactly_one_bit_after_the_ethernet_header() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let orig = frame(v4(), false, 100);
        for _ in 0..200 {
            let mut b = orig.clone();
            assert!(corrupt_one_bit(&mut rng, &mut b));
            let diff: u32 = b.iter().zip(&orig).map(|(x, y)| (x ^ y).count_ones()).sum();
            assert_eq!(diff, 1);
            assert_eq!(b[..ETH_LEN], orig[..ETH_LEN]);
            assert!(RoceFrame::decode(&b).is_err());
        }
    }

    #[test]
    fn tiny_frames_are_left_alone() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut b = vec![0u8; ETH_LEN];
        assert!(!corrupt_one_bit(&mut rng, &mut b));
        let mut empty: Vec<u8> = Vec::new();
        assert!(!corrupt_one_bit(&mut rng, &mut empty));
        assert!(unchecked_bits(&[1, 2, 3]).is_empty());
    }

    #[test]
    fn zero_probabilities_never_fault() {
        let mut f = LinkFaults::new(9, 3);
        let orig = frame(v4(), false, 10);
        for _ in 0..1000 {
            let mut b = orig.clone();
            assert_eq!(
                f.decide(&FaultConfig::NONE, &mut b),
                FaultDecision::default()
            );
            assert_eq!(b, orig);
        }
    }

    #[test]
    fn certain_loss_wins_over_everything_else() {
        let mut f = LinkFaults::new(9, 3);
        let cfg = FaultConfig {
            loss: 1.0,
            duplicate: 1.0,
            reorder: 1.0,
            reorder_delay_ns: 5,
            corrupt: 1.0,
        };
        let orig = frame(v4(), false, 10);
        let mut b = orig.clone();
        let d = f.decide(&cfg, &mut b);
        assert!(d.lost && !d.corrupted && !d.duplicated && !d.reordered);
        assert_eq!(b, orig);
    }
}
