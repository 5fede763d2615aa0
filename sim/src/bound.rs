//! The Ethernet framing bound of an RDMA transfer: the goodput a perfect
//! NIC reaches when the data direction of the link is never idle, so every
//! byte on the wire is a frame of the message (headers, pad, ICRC, FCS,
//! preamble and inter-frame gap included) and nothing else. ACKs and READ
//! requests travel the other direction of a full-duplex link and cost the
//! data direction nothing.
//!
//! Frame sizes come from the codec's own opcode table
//! ([`RoceFrame::wire_len`]) and the fabric's framing
//! ([`rocenic_fabric::wire_bytes`]), so this bound and the simulated links
//! agree by construction. At MTU 4096 over IPv4 a full data frame is 4154
//! bytes and occupies 4178 on the wire: a 1 MiB WRITE reaches at most
//! 98.04 Gb/s of a 100 Gb/s link.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rocenic_wire::{op, opcode, random::frame_of, RoceFrame};
use serde::Serialize;

/// Line rate of the primary configuration, Gb/s.
pub const LINK_GBPS: f64 = 100.0;

/// Which frames carry the message's data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Transfer {
    /// RDMA WRITE requests (RETH on the first packet).
    Write,
    /// RDMA READ responses (AETH on the first and last packet).
    Read,
    /// SEND requests.
    Send,
}

impl Transfer {
    /// The opcodes of an `n`-packet message: (only, first, middle, last).
    fn opcodes(self) -> (u8, u8, u8, u8) {
        match self {
            Transfer::Write => (
                op::WRITE_ONLY,
                op::WRITE_FIRST,
                op::WRITE_MIDDLE,
                op::WRITE_LAST,
            ),
            Transfer::Read => (
                op::READ_RESPONSE_ONLY,
                op::READ_RESPONSE_FIRST,
                op::READ_RESPONSE_MIDDLE,
                op::READ_RESPONSE_LAST,
            ),
            Transfer::Send => (
                op::SEND_ONLY,
                op::SEND_FIRST,
                op::SEND_MIDDLE,
                op::SEND_LAST,
            ),
        }
    }
}

/// Bytes of a frame as the endpoints see it (FCS excluded), from the
/// codec's opcode table.
fn frame_len(opcode: u8, ipv6: bool, payload: usize) -> usize {
    let info = opcode::info(opcode).expect("data opcodes are in the table");
    // The length depends only on opcode, IP version and payload size; the
    // generator fills the rest.
    let frame: RoceFrame = frame_of(&mut ChaCha8Rng::seed_from_u64(0), info, ipv6, payload);
    frame.wire_len()
}

/// Wire bytes of one `message`-byte transfer at path MTU `mtu` in the data
/// direction. A zero-byte message is one empty packet.
pub fn message_wire_bytes(transfer: Transfer, message: u64, mtu: u32, ipv6: bool) -> u64 {
    let mtu = u64::from(mtu);
    let packets = message.div_ceil(mtu).max(1);
    let (only, first, middle, last) = transfer.opcodes();
    let wire = |opcode, payload: u64| {
        rocenic_fabric::wire_bytes(frame_len(opcode, ipv6, payload as usize))
    };
    if packets == 1 {
        return wire(only, message);
    }
    let tail = message - (packets - 1) * mtu;
    wire(first, mtu) + (packets - 2) * wire(middle, mtu) + wire(last, tail)
}

/// Goodput bound in Gb/s of back-to-back `message`-byte transfers on a
/// `link_gbps` link.
pub fn goodput_bound_gbps(
    transfer: Transfer,
    message: u64,
    mtu: u32,
    ipv6: bool,
    link_gbps: f64,
) -> f64 {
    let wire = message_wire_bytes(transfer, message, mtu, ipv6);
    link_gbps * message as f64 / wire as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_mebibyte_write_at_mtu_4096() {
        // 256 frames of 4096 bytes: Ethernet 14 + IPv4 20 + UDP 8 + BTH 12
        // + ICRC 4 = 58 bytes of headers, RETH 16 more on the first, then
        // FCS 4 + preamble 8 + gap 12 on the wire.
        let wire = message_wire_bytes(Transfer::Write, 1 << 20, 4096, false);
        assert_eq!(wire, 256 * (4096 + 58 + 24) + 16);
        let bound = goodput_bound_gbps(Transfer::Write, 1 << 20, 4096, false, LINK_GBPS);
        assert!((bound - 98.0368).abs() < 1e-3, "{bound}");
    }

    #[test]
    fn small_and_odd_messages() {
        // 64-byte WRITE_ONLY: 58 + RETH 16 + 64 = 138 bytes, 162 on the wire.
        assert_eq!(message_wire_bytes(Transfer::Write, 64, 4096, false), 162);
        // A zero-byte WRITE is one frame of 74 bytes, padded to the
        // Ethernet minimum (64 with FCS is exceeded: 78), then 20 more.
        assert_eq!(message_wire_bytes(Transfer::Write, 0, 4096, false), 74 + 24);
        // 1 byte of SEND is padded to 4 by the BTH pad count.
        assert_eq!(
            message_wire_bytes(Transfer::Send, 1, 256, false),
            58 + 4 + 24
        );
        // READ responses: AETH (4) on FIRST and LAST, not MIDDLE; IPv6 adds
        // 20 per frame. 600 bytes at MTU 256: 256 + 256 + 88.
        let frame = |payload: u64| 58 + 20 + payload + 24;
        assert_eq!(
            message_wire_bytes(Transfer::Read, 600, 256, true),
            frame(256 + 4) + frame(256) + frame(88 + 4)
        );
    }

    #[test]
    fn bound_rises_with_message_size_and_mtu() {
        let mut last = 0.0;
        for shift in 6..=20 {
            let b = goodput_bound_gbps(Transfer::Write, 1 << shift, 4096, false, LINK_GBPS);
            assert!(b >= last && b < LINK_GBPS, "{shift}: {b}");
            last = b;
        }
        let small_mtu = goodput_bound_gbps(Transfer::Write, 1 << 20, 256, false, LINK_GBPS);
        assert!(small_mtu < last - 20.0, "{small_mtu} vs {last}");
    }
}
