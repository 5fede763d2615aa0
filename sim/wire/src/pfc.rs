//! Priority-based flow control frames (IEEE 802.1Qbb; a MAC Control
//! frame, IEEE 802.3 clause 31 and Annex 31D): EtherType 0x8808, opcode
//! 0x0101, a class-enable vector (one bit per priority, 0..7) and eight
//! pause times in quanta of 512 bit times, big-endian, `time[0]` first.
//! A time of 0 for an enabled priority ends its pause (XON). The frame is
//! sent to the reserved multicast address 01-80-C2-00-00-01 and padded to
//! the minimum frame (60 bytes without FCS; frames here carry no FCS).

use std::fmt;

/// The reserved destination of MAC Control frames.
pub const PFC_DEST_MAC: [u8; 6] = [0x01, 0x80, 0xC2, 0x00, 0x00, 0x01];
pub const MAC_CONTROL_ETHERTYPE: u16 = 0x8808;
pub const PFC_OPCODE: u16 = 0x0101;
/// The minimum Ethernet frame without its FCS: a PFC frame's length.
pub const PFC_FRAME_LEN: usize = 60;
/// The bytes a receiver reads: addresses, EtherType, opcode, the vector
/// and the eight times.
pub const PFC_FIELDS_LEN: usize = 34;
/// Bit times in one pause quantum.
pub const QUANTUM_BITS: u64 = 512;

/// One PFC frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PfcFrame {
    pub src_mac: [u8; 6],
    /// Bit `i`: `quanta[i]` applies to priority `i`.
    pub enable: u8,
    pub quanta: [u16; 8],
}

/// Why bytes are not a PFC frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PfcDecodeError {
    /// Shorter than the minimum frame.
    Short(usize),
    /// Not to the MAC Control address.
    Destination,
    /// Another EtherType: not a MAC Control frame.
    EtherType(u16),
    /// A MAC Control frame of another kind (0x0001 is 802.3x PAUSE).
    Opcode(u16),
}

impl fmt::Display for PfcDecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Short(n) => write!(f, "{n} bytes, shorter than a {PFC_FRAME_LEN}-byte frame"),
            Self::Destination => f.write_str("not to 01-80-C2-00-00-01"),
            Self::EtherType(t) => write!(f, "EtherType {t:#06x}, not MAC Control"),
            Self::Opcode(o) => write!(f, "MAC Control opcode {o:#06x}, not PFC"),
        }
    }
}

impl std::error::Error for PfcDecodeError {}

impl PfcFrame {
    /// The frame's 60 bytes (no FCS).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(PFC_FRAME_LEN);
        out.extend_from_slice(&PFC_DEST_MAC);
        out.extend_from_slice(&self.src_mac);
        out.extend_from_slice(&MAC_CONTROL_ETHERTYPE.to_be_bytes());
        out.extend_from_slice(&PFC_OPCODE.to_be_bytes());
        out.extend_from_slice(&u16::from(self.enable).to_be_bytes());
        for q in self.quanta {
            out.extend_from_slice(&q.to_be_bytes());
        }
        out.resize(PFC_FRAME_LEN, 0);
        out
    }

    /// A received frame's PFC fields. The upper byte of the class-enable
    /// vector is reserved and ignored, as is the padding.
    pub fn decode(bytes: &[u8]) -> Result<PfcFrame, PfcDecodeError> {
        if bytes.len() < PFC_FRAME_LEN {
            return Err(PfcDecodeError::Short(bytes.len()));
        }
        if bytes[..6] != PFC_DEST_MAC {
            return Err(PfcDecodeError::Destination);
        }
        let be16 = |at: usize| u16::from_be_bytes([bytes[at], bytes[at + 1]]);
        if be16(12) != MAC_CONTROL_ETHERTYPE {
            return Err(PfcDecodeError::EtherType(be16(12)));
        }
        if be16(14) != PFC_OPCODE {
            return Err(PfcDecodeError::Opcode(be16(14)));
        }
        let mut frame = PfcFrame {
            src_mac: bytes[6..12].try_into().expect("six bytes"),
            enable: bytes[17],
            quanta: [0; 8],
        };
        for (i, q) in frame.quanta.iter_mut().enumerate() {
            *q = be16(18 + 2 * i);
        }
        Ok(frame)
    }
}

/// How long `quanta` pause a link of `link_bps`, in ns.
pub fn pause_ns(quanta: u16, link_bps: f64) -> f64 {
    (u64::from(quanta) * QUANTUM_BITS) as f64 / link_bps * 1e9
}

#[cfg(test)]
mod tests {
    use super::*;

    fn storm() -> PfcFrame {
        PfcFrame {
            src_mac: [2, 0, 0, 0, 0, 9],
            enable: 0b1000_1001,
            quanta: [0xFFFF, 1, 2, 0x1234, 4, 5, 6, 0],
        }
    }

    #[test]
    fn encodes_the_802_1qbb_layout() {
        let bytes = storm().encode();
        assert_eq!(bytes.len(), 60);
        assert_eq!(
            bytes[..20],
            [
                0x01, 0x80, 0xC2, 0, 0, 1, 2, 0, 0, 0, 0, 9, 0x88, 0x08, 0x01, 0x01, 0x00, 0x89,
                0xFF, 0xFF
            ]
        );
        assert_eq!(bytes[24..26], [0x12, 0x34]);
        assert!(bytes[34..].iter().all(|&b| b == 0));
    }

    #[test]
    fn decodes_what_it_encodes_and_refuses_the_rest() {
        let bytes = storm().encode();
        assert_eq!(PfcFrame::decode(&bytes), Ok(storm()));
        let mut longer = bytes.clone();
        longer.extend_from_slice(&[0xEE; 10]);
        longer[16] = 0xAB;
        assert_eq!(PfcFrame::decode(&longer), Ok(storm()));
        assert_eq!(
            PfcFrame::decode(&bytes[..59]),
            Err(PfcDecodeError::Short(59))
        );
        let mut pause = bytes.clone();
        pause[15] = 0x00;
        assert_eq!(
            PfcFrame::decode(&pause),
            Err(PfcDecodeError::Opcode(0x0100))
        );
        let mut ip = bytes.clone();
        ip[12..14].copy_from_slice(&[0x08, 0x00]);
        assert_eq!(
            PfcFrame::decode(&ip),
            Err(PfcDecodeError::EtherType(0x0800))
        );
        let mut unicast = bytes;
        unicast[0] = 0x02;
        assert_eq!(PfcFrame::decode(&unicast), Err(PfcDecodeError::Destination));
    }

    #[test]
    fn a_full_pause_lasts_335_us_at_100_gbe() {
        let ns = pause_ns(0xFFFF, 100e9);
        assert!((ns - 335_539.2).abs() < 1e-6, "{ns}");
    }
}
