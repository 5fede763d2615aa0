//! The RoCEv2 invariant CRC (IBA Annex A17.3.3, `rxe_icrc.c`).
//!
//! CRC-32 (zlib) over 8 bytes of 0xFF standing in for the masked LRH, then
//! the IP header, UDP header, BTH, extension headers, payload and pad, with
//! the fields a router may rewrite masked to ones: IPv4 TOS, TTL and header
//! checksum; IPv6 traffic class, flow label and hop limit; the UDP checksum;
//! BTH byte 4 (FECN, BECN, reserved).

use crate::headers::{BTH_LEN, UDP_LEN};

/// Computes the ICRC of `l3`, which starts at the IP header and runs up to
/// (not including) the ICRC field. `ip_len` is 20 for IPv4, 40 for IPv6.
/// `None` when `l3` cannot hold the IP, UDP and BTH headers.
pub fn compute(l3: &[u8], ip_len: usize) -> Option<u32> {
    if !matches!(ip_len, 20 | 40) || l3.len() < ip_len + UDP_LEN + BTH_LEN {
        return None;
    }
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(&[0xFF; 8]);

    let mut ip = [0u8; 40];
    ip[..ip_len].copy_from_slice(&l3[..ip_len]);
    if ip_len == 20 {
        ip[1] = 0xFF; // TOS: DSCP + ECN
        ip[8] = 0xFF; // TTL
        ip[10] = 0xFF; // header checksum
        ip[11] = 0xFF;
    } else {
        ip[0] |= 0x0F; // traffic class, high nibble
        ip[1] = 0xFF; // traffic class, low nibble + flow label
        ip[2] = 0xFF;
        ip[3] = 0xFF;
        ip[7] = 0xFF; // hop limit
    }
    hasher.update(&ip[..ip_len]);

    let mut udp = [0u8; UDP_LEN];
    udp.copy_from_slice(&l3[ip_len..ip_len + UDP_LEN]);
    udp[6] = 0xFF;
    udp[7] = 0xFF;
    hasher.update(&udp);

    let bth_at = ip_len + UDP_LEN;
    let mut bth = [0u8; BTH_LEN];
    bth.copy_from_slice(&l3[bth_at..bth_at + BTH_LEN]);
    bth[4] = 0xFF;
    hasher.update(&bth);

    hasher.update(&l3[bth_at + BTH_LEN..]);
    Some(hasher.finalize())
}
