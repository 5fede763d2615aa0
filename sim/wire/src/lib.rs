//! The RoCEv2 wire codec: Ethernet II, IPv4/IPv6, UDP 4791, BTH and every
//! extension header, pad, and the ICRC with its masking rules; and the
//! priority flow control (PFC) frames of the lossless fabric ([`pfc`]).
//!
//! Both the reference model and the RTL scoreboards speak this codec. Its
//! sources: the InfiniBand Architecture Specification Vol. 1, chapter 9
//! (BTH, the extension headers, the opcode table) and section 7.8.1 (the
//! invariant CRC), and its Annex A17, RoCEv2 (UDP destination port 4791,
//! the ICRC over the IP and UDP headers with their variant fields masked);
//! RFC 791 and RFC 8200 (IPv4, IPv6), RFC 768 (UDP).

pub mod frame;
pub mod headers;
pub mod icrc;
pub mod opcode;
pub mod pfc;
pub mod random;

pub use frame::{
    pad_for, DecodeError, DecodeOptions, EncodeError, Layer, Parsed, RoceFrame, MAX_PAYLOAD,
};
pub use headers::*;
pub use opcode::{op, ExtSet, OpcodeInfo};

/// 24-bit PSN arithmetic (reference card: `a` is after `b` when
/// `((a - b) << 8) as i32 > 0`).
pub mod psn {
    use crate::headers::MASK24;

    pub fn add(psn: u32, n: u32) -> u32 {
        psn.wrapping_add(n) & MASK24
    }

    pub fn sub(psn: u32, n: u32) -> u32 {
        psn.wrapping_sub(n) & MASK24
    }

    /// Signed distance `a - b` in PSN space, in -2^23 .. 2^23.
    pub fn diff(a: u32, b: u32) -> i32 {
        (a.wrapping_sub(b) << 8) as i32 >> 8
    }

    pub fn after(a: u32, b: u32) -> bool {
        diff(a, b) > 0
    }
}

/// The UDP source port Linux derives from a QP pair
/// (`rdma_calc_flow_label` then `rdma_flow_label_to_udp_sport`).
pub fn udp_src_port(local_qpn: u32, remote_qpn: u32) -> u16 {
    let mut v = u64::from(local_qpn) * u64::from(remote_qpn);
    v ^= v >> 20;
    v ^= v >> 40;
    let fl = (v & 0xF_FFFF) as u32;
    (((fl & 0x3FFF) ^ ((fl & 0xF_C000) >> 14)) | 0xC000) as u16
}

/// Reads the IP ECN codepoint of an encoded frame; `None` when the frame is
/// too short or not IP.
pub fn frame_ecn(frame: &[u8]) -> Option<u8> {
    match ethertype(frame)? {
        ETHERTYPE_IPV4 => frame.get(ETH_LEN + 1).map(|tos| tos & 3),
        ETHERTYPE_IPV6 => {
            let b = frame.get(ETH_LEN + 1)?;
            Some((b >> 4) & 3)
        }
        _ => None,
    }
}

/// Reads the IP DSCP (the traffic class's upper six bits) of an encoded
/// frame; `None` when the frame is too short or not IP.
pub fn frame_dscp(frame: &[u8]) -> Option<u8> {
    match ethertype(frame)? {
        ETHERTYPE_IPV4 => frame.get(ETH_LEN + 1).map(|tos| tos >> 2),
        ETHERTYPE_IPV6 => {
            let high = frame.get(ETH_LEN)?;
            let low = frame.get(ETH_LEN + 1)?;
            Some(((high & 0x0F) << 2) | (low >> 6))
        }
        _ => None,
    }
}

/// Marks an ECN-capable frame Congestion Experienced in place, as a switch
/// does, fixing the IPv4 header checksum. The ICRC masks these bits, so it
/// stays valid. Returns false (and leaves the frame alone) for a Not-ECT or
/// non-IP frame.
pub fn mark_ce(frame: &mut [u8]) -> bool {
    match frame_ecn(frame) {
        Some(ecn::NOT_ECT) | None => false,
        Some(_) => {
            match ethertype(frame) {
                Some(ETHERTYPE_IPV4) if frame.len() >= ETH_LEN + IPV4_LEN => {
                    frame[ETH_LEN + 1] |= ecn::CE;
                    let ip = &mut frame[ETH_LEN..ETH_LEN + IPV4_LEN];
                    ip[10] = 0;
                    ip[11] = 0;
                    let csum = frame::internet_checksum(ip);
                    ip[10..12].copy_from_slice(&csum.to_be_bytes());
                }
                _ => frame[ETH_LEN + 1] |= ecn::CE << 4,
            }
            true
        }
    }
}

fn ethertype(frame: &[u8]) -> Option<u16> {
    Some(u16::from_be_bytes([*frame.get(12)?, *frame.get(13)?]))
}
