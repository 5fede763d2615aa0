//! Fuzz target `decode`: arbitrary bytes into the RoCEv2 frame parser and
//! decoder. Neither may panic, and every frame they accept must survive an
//! encode/decode round trip.
//!
//! Each input is tried twice: as it is, and with its lengths, IPv4 header
//! checksum and ICRC made consistent. Random mutations almost never satisfy
//! a 16-bit checksum and a CRC at once, so without the second try the
//! fuzzer would stay in front of the checksum checks and never reach the
//! extension headers, payloads and padding behind them.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rocenic_wire::frame::internet_checksum;
use rocenic_wire::{
    icrc, pad_for, IpHeader, RoceFrame, BTH_LEN, ETHERTYPE_IPV4, ETHERTYPE_IPV6, ETH_LEN, ICRC_LEN,
    IPV4_LEN, IPV6_LEN, UDP_LEN,
};

/// The frame `encode` will actually describe. Two fields are derived when
/// encoding rather than copied, so a frame parsed from a non-canonical wire
/// image differs from its re-encoding in exactly these: the BTH pad count
/// always follows the payload length, and IPv6 always carries a UDP
/// checksum (RFC 8200 forbids a zero one).
fn canonical(frame: &RoceFrame) -> RoceFrame {
    let mut c = frame.clone();
    c.bth.pad_count = pad_for(c.payload.len()) as u8;
    if matches!(c.ip, IpHeader::V6(_)) {
        c.udp_checksum = true;
    }
    c
}

/// Anything the parser accepted is a frame the encoder can write (the parser
/// enforces the same opcode, header and length rules), and the result must
/// decode again, ICRC and checksums included, to the same frame; re-encoding
/// that is a fixed point.
fn round_trip(frame: &RoceFrame) {
    let bytes = frame
        .encode()
        .unwrap_or_else(|e| panic!("parsed frame does not encode: {e:?}\nframe: {frame:?}"));
    let again = RoceFrame::decode(&bytes).unwrap_or_else(|e| {
        panic!(
            "encode output does not decode ({}): {e:?}\nframe: {frame:?}",
            e.reason()
        )
    });
    assert_eq!(again, canonical(frame), "decode(encode(f)) != f");
    assert_eq!(
        again.encode().as_deref(),
        Ok(&bytes[..]),
        "encode is not a fixed point"
    );
}

/// Rewrites the IP and UDP lengths to cover the whole buffer, drops the UDP
/// checksum (zero means none), recomputes the IPv4 header checksum and
/// stores a correct ICRC in the last four bytes. Leaves a buffer too short
/// to hold those headers untouched.
fn make_consistent(frame: &mut [u8]) {
    if frame.len() < ETH_LEN {
        return;
    }
    let ethertype = u16::from_be_bytes([frame[12], frame[13]]);
    let ip_len = match ethertype {
        ETHERTYPE_IPV4 => IPV4_LEN,
        ETHERTYPE_IPV6 => IPV6_LEN,
        _ => return,
    };
    let l3 = &mut frame[ETH_LEN..];
    // Room for the headers the ICRC covers, then the ICRC.
    if l3.len() < ip_len + UDP_LEN + BTH_LEN + ICRC_LEN || l3.len() > usize::from(u16::MAX) {
        return;
    }
    let l3_len = l3.len() as u16;
    let udp_len = (l3.len() - ip_len) as u16;
    if ip_len == IPV4_LEN {
        l3[2..4].copy_from_slice(&l3_len.to_be_bytes());
        l3[10..12].copy_from_slice(&[0, 0]);
        let csum = internet_checksum(&l3[..IPV4_LEN]);
        l3[10..12].copy_from_slice(&csum.to_be_bytes());
    } else {
        l3[4..6].copy_from_slice(&udp_len.to_be_bytes());
    }
    l3[ip_len + 4..ip_len + 6].copy_from_slice(&udp_len.to_be_bytes());
    l3[ip_len + 6..ip_len + 8].copy_from_slice(&[0, 0]);
    let icrc_at = l3.len() - ICRC_LEN;
    if let Some(crc) = icrc::compute(&l3[..icrc_at], ip_len) {
        l3[icrc_at..].copy_from_slice(&crc.to_le_bytes());
    }
}

fn check(data: &[u8]) {
    let decoded = RoceFrame::decode(data);
    match RoceFrame::parse(data) {
        Ok(parsed) => {
            // decode is parse plus the ICRC check, nothing more.
            let icrc_ok = parsed.icrc_found == parsed.icrc_computed;
            assert_eq!(decoded.is_ok(), icrc_ok, "decode and parse disagree");
            if let Ok(frame) = &decoded {
                assert_eq!(frame, &parsed.frame);
            }
            round_trip(&parsed.frame);
        }
        Err(e) => {
            assert!(!e.reason().is_empty());
            assert!(decoded.is_err(), "decode accepted what parse refused");
        }
    }
}

fuzz_target!(|data: &[u8]| {
    check(data);
    let mut fixed = data.to_vec();
    make_consistent(&mut fixed);
    if fixed != data {
        check(&fixed);
    }
});
