//! Seeded random valid frames for tests and cross-checks: any opcode of the
//! table, IPv4 or IPv6, every header field drawn at random. Feature
//! `random`.

use crate::opcode::{OpcodeInfo, OPCODES};
use crate::*;
use rand::{Rng, SeedableRng};
use std::net::{Ipv4Addr, Ipv6Addr};

/// A valid frame of `info`'s opcode on IPv6 or IPv4 with `payload_len`
/// random payload bytes (none for opcodes without payload, at most 4096);
/// every other field is drawn from `rng`.
pub fn frame_of(
    rng: &mut impl Rng,
    info: &OpcodeInfo,
    ipv6: bool,
    payload_len: usize,
) -> RoceFrame {
    let ip = if ipv6 {
        IpHeader::V6(Ipv6Header {
            src: Ipv6Addr::from(rng.gen::<u128>()),
            dst: Ipv6Addr::from(rng.gen::<u128>()),
            dscp: rng.gen_range(0..64),
            ecn: rng.gen_range(0..4),
            flow_label: rng.gen_range(0..1 << 20),
            hop_limit: rng.gen(),
        })
    } else {
        IpHeader::V4(Ipv4Header {
            src: Ipv4Addr::from(rng.gen::<u32>()),
            dst: Ipv4Addr::from(rng.gen::<u32>()),
            dscp: rng.gen_range(0..64),
            ecn: rng.gen_range(0..4),
            identification: rng.gen(),
            dont_fragment: rng.gen(),
            ttl: rng.gen(),
        })
    };
    let len = if info.has_payload {
        payload_len.min(MAX_PAYLOAD)
    } else {
        0
    };
    let payload: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
    let ext = ext_headers(rng, info.headers);
    let mut bth = Bth::new(info.code, rng.gen(), rng.gen());
    bth.solicited = rng.gen();
    bth.mig_req = rng.gen();
    bth.pkey = rng.gen();
    bth.fecn = rng.gen();
    bth.becn = rng.gen();
    bth.ack_req = rng.gen();
    bth.pad_count = pad_for(payload.len()) as u8;
    RoceFrame {
        eth: EthHeader {
            dst: rng.gen(),
            src: rng.gen(),
        },
        udp_checksum: ipv6 || rng.gen(),
        ip,
        udp_src_port: rng.gen_range(0xC000..=0xFFFF),
        bth,
        ext,
        payload,
    }
}

/// The extension headers of `set`, every field drawn from `rng`.
pub fn ext_headers(rng: &mut impl Rng, set: ExtSet) -> ExtHeaders {
    ExtHeaders {
        deth: set.contains(ExtSet::DETH).then(|| Deth {
            qkey: rng.gen(),
            src_qp: rng.gen::<u32>() & MASK24,
        }),
        reth: set.contains(ExtSet::RETH).then(|| Reth {
            va: rng.gen(),
            rkey: rng.gen(),
            dma_len: rng.gen(),
        }),
        atomic_eth: set.contains(ExtSet::ATOMIC_ETH).then(|| AtomicEth {
            va: rng.gen(),
            rkey: rng.gen(),
            swap_add: rng.gen(),
            compare: rng.gen(),
        }),
        aeth: set.contains(ExtSet::AETH).then(|| Aeth {
            syndrome: rng.gen(),
            msn: rng.gen::<u32>() & MASK24,
        }),
        atomic_ack_eth: set
            .contains(ExtSet::ATOMIC_ACK_ETH)
            .then(|| AtomicAckEth { orig: rng.gen() }),
        imm: set.contains(ExtSet::IMM).then(|| rng.gen()),
        ieth: set.contains(ExtSet::IETH).then(|| rng.gen()),
    }
}

/// Any valid frame: a random opcode and IP version; payloads mostly short
/// (0..8 and 0..300 bytes), a quarter anywhere up to 4096.
pub fn random_frame(rng: &mut impl Rng) -> RoceFrame {
    let info = &OPCODES[rng.gen_range(0..OPCODES.len())];
    let ipv6 = rng.gen_bool(0.5);
    let payload_len = match rng.gen_range(0..4) {
        0 => rng.gen_range(0..8),
        1 => rng.gen_range(0..=MAX_PAYLOAD),
        _ => rng.gen_range(0..300),
    };
    frame_of(rng, info, ipv6, payload_len)
}

/// `count` frames from `seed`; the same seed always gives the same frames.
pub fn random_frames(seed: u64, count: usize) -> Vec<RoceFrame> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    (0..count).map(|_| random_frame(&mut rng)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_are_valid_deterministic_and_cover_every_opcode() {
        let frames = random_frames(7, 2000);
        assert_eq!(frames, random_frames(7, 2000));
        assert_ne!(frames, random_frames(8, 2000));
        for f in &frames {
            let bytes = f.encode().unwrap();
            assert_eq!(&RoceFrame::decode(&bytes).unwrap(), f);
        }
        for info in OPCODES {
            assert!(
                frames.iter().any(|f| f.bth.opcode == info.code),
                "{}",
                info.name
            );
        }
    }
}
