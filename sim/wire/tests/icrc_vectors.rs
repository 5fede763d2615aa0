//! The known-good frames of `vectors/icrc.txt` beside this file (each
//! line says where the frame was captured).

use rocenic_wire::{ecn, frame_ecn, mark_ce, DecodeError, RoceFrame, ETH_LEN};

struct Vector {
    name: String,
    bytes: Vec<u8>,
}

fn vectors() -> Vec<Vector> {
    let text = include_str!("vectors/icrc.txt");
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let fields: Vec<&str> = l.split('|').map(str::trim).collect();
            let hex = fields[2];
            let bytes = (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
                .collect();
            Vector {
                name: fields[0].to_string(),
                bytes,
            }
        })
        .collect()
}

#[test]
fn every_vector_decodes_with_a_correct_icrc() {
    let vs = vectors();
    assert_eq!(vs.len(), 3);
    for v in &vs {
        let frame = RoceFrame::decode(&v.bytes).unwrap_or_else(|e| panic!("{}: {e}", v.name));
        // Re-encoding reproduces the frame bit for bit.
        assert_eq!(frame.encode().unwrap(), v.bytes, "{}", v.name);
    }
}

#[test]
fn vector_fields_match_their_description() {
    let vs = vectors();
    let cnp = RoceFrame::decode(&vs[0].bytes).unwrap();
    assert_eq!(cnp.bth.opcode, 0x81);
    assert!(cnp.bth.becn);
    let uc = RoceFrame::decode(&vs[1].bytes).unwrap();
    assert_eq!(
        (uc.bth.opcode, uc.bth.mig_req, uc.bth.pad_count),
        (0x24, true, 2)
    );
    let ack = RoceFrame::decode(&vs[2].bytes).unwrap();
    assert_eq!(ack.bth.psn, 0xFF_FFFE);
    let aeth = ack.ext.aeth.unwrap();
    assert_eq!((aeth.syndrome, aeth.msn), (0x1F, 5));
}

/// Byte offsets the ICRC does not cover or masks, for a frame with an IPv4
/// header: Ethernet header, TOS, TTL, IP checksum, UDP checksum, BTH byte 4.
fn uncovered_ipv4(offset: usize) -> bool {
    let l3 = offset.wrapping_sub(ETH_LEN);
    offset < ETH_LEN || matches!(l3, 1 | 8 | 10 | 11 | 26 | 27 | 32)
}

#[test]
fn flipping_any_covered_bit_fails_the_icrc() {
    for v in vectors() {
        for byte in 0..v.bytes.len() {
            if uncovered_ipv4(byte) {
                continue;
            }
            for bit in 0..8 {
                let mut b = v.bytes.clone();
                b[byte] ^= 1 << bit;
                let parsed = RoceFrame::parse(&b);
                // Either the frame no longer parses (length, port, opcode…)
                // or its ICRC no longer matches: it is never accepted.
                if let Ok(p) = &parsed {
                    assert_ne!(
                        p.icrc_found, p.icrc_computed,
                        "{}: flip of byte {byte} bit {bit} kept the ICRC valid",
                        v.name
                    );
                }
                assert!(RoceFrame::decode(&b).is_err());
            }
        }
    }
}

#[test]
fn rewriting_masked_fields_keeps_the_icrc() {
    for v in vectors() {
        let mut b = v.bytes.clone();
        b[ETH_LEN + 8] = b[ETH_LEN + 8].wrapping_sub(7); // TTL
        b[ETH_LEN + 28 + 4] ^= 0xC0; // FECN, BECN
                                     // A switch that rewrites FECN must also rewrite (or zero) the UDP
                                     // checksum; the ICRC masks it either way.
        b[ETH_LEN + 26] = 0;
        b[ETH_LEN + 27] = 0;
        let ip = &mut b[ETH_LEN..ETH_LEN + 20];
        ip[10] = 0;
        ip[11] = 0;
        let csum = rocenic_wire::frame::internet_checksum(ip);
        ip[10..12].copy_from_slice(&csum.to_be_bytes());
        RoceFrame::decode(&b).unwrap_or_else(|e| panic!("{}: {e}", v.name));

        let mut marked = v.bytes.clone();
        if frame_ecn(&marked) == Some(ecn::NOT_ECT) {
            marked[ETH_LEN + 1] |= ecn::ECT0;
            let ip = &mut marked[ETH_LEN..ETH_LEN + 20];
            ip[10] = 0;
            ip[11] = 0;
            let csum = rocenic_wire::frame::internet_checksum(ip);
            ip[10..12].copy_from_slice(&csum.to_be_bytes());
        }
        assert!(mark_ce(&mut marked));
        assert_eq!(frame_ecn(&marked), Some(ecn::CE));
        RoceFrame::decode(&marked).unwrap_or_else(|e| panic!("{}: {e}", v.name));
    }
}

#[test]
fn a_wrong_icrc_is_reported_as_such() {
    let mut b = vectors()[2].bytes.clone();
    let n = b.len();
    b[n - 1] ^= 1;
    assert!(matches!(
        RoceFrame::decode(&b),
        Err(DecodeError::BadIcrc { .. })
    ));
}
