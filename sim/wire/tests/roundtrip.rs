//! Property tests: every opcode round-trips through encode/decode on both IP
//! versions, and no byte string makes the decoder panic.

use proptest::prelude::*;
use rocenic_wire::opcode::OPCODES;
use rocenic_wire::*;
use std::net::{Ipv4Addr, Ipv6Addr};

fn ip_header() -> impl Strategy<Value = IpHeader> {
    prop_oneof![
        (
            any::<u32>(),
            any::<u32>(),
            0u8..64,
            0u8..4,
            any::<u16>(),
            any::<bool>(),
            any::<u8>()
        )
            .prop_map(|(s, d, dscp, ecn, identification, dont_fragment, ttl)| {
                IpHeader::V4(Ipv4Header {
                    src: Ipv4Addr::from(s),
                    dst: Ipv4Addr::from(d),
                    dscp,
                    ecn,
                    identification,
                    dont_fragment,
                    ttl,
                })
            }),
        (
            any::<u128>(),
            any::<u128>(),
            0u8..64,
            0u8..4,
            0u32..(1 << 20),
            any::<u8>()
        )
            .prop_map(|(s, d, dscp, ecn, flow_label, hop_limit)| {
                IpHeader::V6(Ipv6Header {
                    src: Ipv6Addr::from(s),
                    dst: Ipv6Addr::from(d),
                    dscp,
                    ecn,
                    flow_label,
                    hop_limit,
                })
            }),
    ]
}

fn bth(opcode: u8) -> impl Strategy<Value = Bth> {
    (
        any::<bool>(),
        any::<bool>(),
        any::<u16>(),
        any::<bool>(),
        any::<bool>(),
        0u32..=MASK24,
        any::<bool>(),
        0u32..=MASK24,
    )
        .prop_map(
            move |(solicited, mig_req, pkey, fecn, becn, dest_qp, ack_req, psn)| Bth {
                opcode,
                solicited,
                mig_req,
                pad_count: 0,
                tver: 0,
                pkey,
                fecn,
                becn,
                dest_qp,
                ack_req,
                psn,
            },
        )
}

fn ext_headers(set: ExtSet) -> impl Strategy<Value = ExtHeaders> {
    (
        (any::<u32>(), 0u32..=MASK24),
        (any::<u64>(), any::<u32>(), any::<u32>()),
        (any::<u64>(), any::<u32>(), any::<u64>(), any::<u64>()),
        (any::<u8>(), 0u32..=MASK24),
        any::<u64>(),
        any::<u32>(),
        any::<u32>(),
    )
        .prop_map(
            move |(deth, reth, atomic, aeth, orig, imm, ieth)| ExtHeaders {
                deth: set.contains(ExtSet::DETH).then_some(Deth {
                    qkey: deth.0,
                    src_qp: deth.1,
                }),
                reth: set.contains(ExtSet::RETH).then_some(Reth {
                    va: reth.0,
                    rkey: reth.1,
                    dma_len: reth.2,
                }),
                atomic_eth: set.contains(ExtSet::ATOMIC_ETH).then_some(AtomicEth {
                    va: atomic.0,
                    rkey: atomic.1,
                    swap_add: atomic.2,
                    compare: atomic.3,
                }),
                aeth: set.contains(ExtSet::AETH).then_some(Aeth {
                    syndrome: aeth.0,
                    msn: aeth.1,
                }),
                atomic_ack_eth: set
                    .contains(ExtSet::ATOMIC_ACK_ETH)
                    .then_some(AtomicAckEth { orig }),
                imm: set.contains(ExtSet::IMM).then_some(imm),
                ieth: set.contains(ExtSet::IETH).then_some(ieth),
            },
        )
}

/// Any valid frame: every opcode of the table, both IP versions, payloads
/// 0..=4096 bytes where the opcode carries one.
pub fn valid_frame() -> impl Strategy<Value = RoceFrame> {
    proptest::sample::select(OPCODES).prop_flat_map(|info| {
        let payload_len = if info.has_payload {
            0..=MAX_PAYLOAD
        } else {
            0..=0
        };
        (
            any::<[u8; 6]>(),
            any::<[u8; 6]>(),
            ip_header(),
            0xC000u16..=0xFFFF,
            any::<bool>(),
            bth(info.code),
            ext_headers(info.headers),
            proptest::collection::vec(any::<u8>(), payload_len),
        )
            .prop_map(
                |(dst, src, ip, udp_src_port, csum, mut bth, ext, payload)| {
                    bth.pad_count = pad_for(payload.len()) as u8;
                    RoceFrame {
                        eth: EthHeader { dst, src },
                        udp_checksum: csum || matches!(ip, IpHeader::V6(_)),
                        ip,
                        udp_src_port,
                        bth,
                        ext,
                        payload,
                    }
                },
            )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn encode_then_decode_is_identity(frame in valid_frame()) {
        let bytes = frame.encode().unwrap();
        prop_assert_eq!(bytes.len(), frame.wire_len());
        let back = RoceFrame::decode(&bytes).unwrap();
        prop_assert_eq!(&back, &frame);
        prop_assert_eq!(&back.encode().unwrap(), &bytes);
        let (dscp, ecn) = match frame.ip {
            IpHeader::V4(h) => (h.dscp, h.ecn),
            IpHeader::V6(h) => (h.dscp, h.ecn),
        };
        prop_assert_eq!(frame_dscp(&bytes), Some(dscp));
        prop_assert_eq!(frame_ecn(&bytes), Some(ecn));
    }

    #[test]
    fn every_truncation_is_an_error(frame in valid_frame(), cut in any::<prop::sample::Index>()) {
        let bytes = frame.encode().unwrap();
        let keep = cut.index(bytes.len());
        // Frames shorter than 60 bytes may legally carry Ethernet padding,
        // but a cut never leaves a frame that decodes.
        prop_assert!(RoceFrame::decode(&bytes[..keep]).is_err());
    }

    #[test]
    fn mutated_frames_never_panic(frame in valid_frame(), edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8)) {
        let mut bytes = frame.encode().unwrap();
        for (at, value) in edits {
            let i = at.index(bytes.len());
            bytes[i] = value;
        }
        let _ = RoceFrame::parse(&bytes);
        let _ = RoceFrame::decode(&bytes);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        let _ = RoceFrame::parse(&bytes);
        let _ = RoceFrame::decode(&bytes);
    }
}

#[test]
fn malformed_frames_give_the_right_error() {
    let frame = RoceFrame {
        eth: EthHeader {
            dst: [2, 0, 0, 0, 0, 2],
            src: [2, 0, 0, 0, 0, 1],
        },
        ip: IpHeader::V4(Ipv4Header {
            src: Ipv4Addr::new(10, 0, 0, 1),
            dst: Ipv4Addr::new(10, 0, 0, 2),
            dscp: 26,
            ecn: ecn::ECT0,
            identification: 1,
            dont_fragment: true,
            ttl: 64,
        }),
        udp_src_port: udp_src_port(17, 18),
        udp_checksum: false,
        bth: Bth::new(op::SEND_ONLY, 18, 100),
        ext: ExtHeaders::default(),
        payload: vec![0xAB; 5],
    };
    let good = frame.encode().unwrap();
    RoceFrame::decode(&good).unwrap();
    let l3 = ETH_LEN;
    let bth_at = l3 + IPV4_LEN + UDP_LEN;
    let reason = |edit: &dyn Fn(&mut Vec<u8>)| {
        let mut b = good.clone();
        edit(&mut b);
        RoceFrame::decode(&b).unwrap_err().reason()
    };
    assert_eq!(reason(&|b| b[12] = 0x88), "ethertype");
    assert_eq!(reason(&|b| b[l3] = 0x65), "ip_version");
    assert_eq!(reason(&|b| b[l3] = 0x46), "ipv4_options");
    assert_eq!(reason(&|b| b[l3 + 10] ^= 1), "ipv4_checksum");
    assert_eq!(reason(&|b| b[l3 + IPV4_LEN + 3] ^= 1), "udp_port");
    assert_eq!(reason(&|b| b[bth_at + 1] |= 1), "tver");
    assert_eq!(reason(&|b| b[bth_at] = 0x15), "opcode");
    assert_eq!(reason(&|b| b[bth_at + 9] ^= 1), "icrc");
    assert_eq!(reason(&|b| b.truncate(b.len() - 9)), "truncated");
    // An ACK whose length leaves room for a payload: the opcode carries none.
    assert_eq!(
        reason(&|b| b[bth_at] = op::ACKNOWLEDGE),
        "unexpected_payload"
    );
    // A WRITE FIRST needs a RETH the 12 bytes after the BTH cannot hold.
    assert_eq!(
        reason(&|b| b[bth_at] = op::WRITE_FIRST),
        "header_opcode_mismatch"
    );
    // Pad count 3 on an empty payload.
    let mut short = frame.clone();
    short.payload = vec![];
    let mut b = short.encode().unwrap();
    b[bth_at + 1] |= 0x30;
    assert_eq!(RoceFrame::decode(&b).unwrap_err().reason(), "pad");
}

#[test]
fn the_nic_receive_path_skips_only_the_udp_checksum() {
    let mut sample = sample_v6();
    sample.payload = vec![7; 33];
    let good = sample.encode().unwrap();
    let frame = RoceFrame::decode(&good).unwrap();
    let mut bad_udp = good.clone();
    let at = ETH_LEN + IPV6_LEN + 6;
    bad_udp[at] ^= 0x10;
    assert_eq!(
        RoceFrame::decode(&bad_udp).unwrap_err().reason(),
        "udp_checksum"
    );
    // The ICRC masks the checksum field, so the frame is otherwise intact.
    assert_eq!(
        RoceFrame::decode_with(&bad_udp, DecodeOptions::NIC).unwrap(),
        frame
    );
    let mut bad_payload = good.clone();
    let n = bad_payload.len();
    bad_payload[n - 10] ^= 1;
    assert_eq!(
        RoceFrame::decode_with(&bad_payload, DecodeOptions::NIC)
            .unwrap_err()
            .reason(),
        "icrc"
    );
}

fn sample_v6() -> RoceFrame {
    RoceFrame {
        eth: EthHeader {
            dst: [2, 0, 0, 0, 0, 2],
            src: [2, 0, 0, 0, 0, 1],
        },
        ip: IpHeader::V6(Ipv6Header {
            src: Ipv6Addr::LOCALHOST,
            dst: Ipv6Addr::from(7u128),
            dscp: 26,
            ecn: ecn::ECT0,
            flow_label: 0x12345,
            hop_limit: 64,
        }),
        udp_src_port: 0xC001,
        udp_checksum: true,
        bth: Bth::new(op::SEND_ONLY, 9, 1),
        ext: ExtHeaders::default(),
        payload: Vec::new(),
    }
}
