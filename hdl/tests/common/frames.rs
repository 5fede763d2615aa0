//! RoCEv2 test frames for the RTL tests, encoded with the reference codec
//! (`rocenic_wire`): the shared ICRC vectors, one frame of a chosen opcode,
//! IP version and payload size with random field values, and helpers to
//! split frames into 64-byte beats. Shared by the in-crate unit tests
//! (included by path) and the integration tests.

#![allow(dead_code)]

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rocenic_wire::opcode::{OpcodeInfo, OPCODES};
use rocenic_wire::*;
use std::net::{Ipv4Addr, Ipv6Addr};

/// The three frames of `sim/wire/tests/vectors/icrc.txt`, as bytes.
pub fn vectors() -> Vec<(String, Vec<u8>)> {
    include_str!("../../../sim/wire/tests/vectors/icrc.txt")
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let fields: Vec<&str> = l.split('|').map(str::trim).collect();
            let hex = fields[2];
            let bytes = (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex"))
                .collect();
            (fields[0].to_string(), bytes)
        })
        .collect()
}

/// A valid frame of `opcode` with random header values and `payload_len`
/// random payload bytes (forced to 0 for opcodes without payload).
pub fn frame(opcode: u8, ipv6: bool, payload_len: usize, seed: u64) -> RoceFrame {
    let info: &OpcodeInfo = opcode::info(opcode).expect("known opcode");
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
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
    let payload_len = if info.has_payload { payload_len } else { 0 };
    let payload: Vec<u8> = (0..payload_len).map(|_| rng.gen()).collect();
    let h = info.headers;
    let ext = ExtHeaders {
        deth: h.contains(ExtSet::DETH).then(|| Deth {
            qkey: rng.gen(),
            src_qp: rng.gen::<u32>() & MASK24,
        }),
        reth: h.contains(ExtSet::RETH).then(|| Reth {
            va: rng.gen(),
            rkey: rng.gen(),
            dma_len: rng.gen(),
        }),
        atomic_eth: h.contains(ExtSet::ATOMIC_ETH).then(|| AtomicEth {
            va: rng.gen(),
            rkey: rng.gen(),
            swap_add: rng.gen(),
            compare: rng.gen(),
        }),
        aeth: h.contains(ExtSet::AETH).then(|| Aeth {
            syndrome: rng.gen(),
            msn: rng.gen::<u32>() & MASK24,
        }),
        atomic_ack_eth: h
            .contains(ExtSet::ATOMIC_ACK_ETH)
            .then(|| AtomicAckEth { orig: rng.gen() }),
        imm: h.contains(ExtSet::IMM).then(|| rng.gen()),
        ieth: h.contains(ExtSet::IETH).then(|| rng.gen()),
    };
    let mut bth = Bth::new(info.code, rng.gen(), rng.gen());
    bth.solicited = rng.gen();
    bth.mig_req = rng.gen();
    bth.pkey = rng.gen();
    bth.fecn = rng.gen();
    bth.becn = rng.gen();
    bth.ack_req = rng.gen();
    RoceFrame {
        eth: EthHeader {
            dst: rng.gen(),
            src: rng.gen(),
        },
        udp_checksum: rng.gen() || ipv6,
        ip,
        udp_src_port: rng.gen_range(0xC000..=0xFFFF),
        bth,
        ext,
        payload,
    }
}

/// Encoded bytes of [`frame`].
pub fn frame_bytes(opcode: u8, ipv6: bool, payload_len: usize, seed: u64) -> Vec<u8> {
    frame(opcode, ipv6, payload_len, seed)
        .encode()
        .expect("valid frame")
}

/// Every opcode of the codec, in table order.
pub fn opcodes() -> Vec<u8> {
    OPCODES.iter().map(|o| o.code).collect()
}

/// A mix for the ICRC tests: the vectors, every opcode on both IP
/// versions, and the payload sizes around beat boundaries.
pub fn icrc_frames() -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = vectors().into_iter().map(|(_, b)| b).collect();
    for (i, op) in opcodes().into_iter().enumerate() {
        for ipv6 in [false, true] {
            out.push(frame_bytes(op, ipv6, (i * 37) % 200, i as u64));
        }
    }
    for (i, len) in [0usize, 1, 3, 4, 60, 64, 65, 127, 128, 4096]
        .into_iter()
        .enumerate()
    {
        for ipv6 in [false, true] {
            out.push(frame_bytes(op::SEND_ONLY, ipv6, len, 100 + i as u64));
        }
    }
    out
}
