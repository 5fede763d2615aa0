//! The BTH opcode table: which extension headers follow the BTH and whether
//! a payload may follow them (IBA Vol. 1 table 38, `rxe_opcode.c`).

use serde::Serialize;

/// A set of extension headers, in wire order after the BTH.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize)]
pub struct ExtSet(u8);

impl ExtSet {
    pub const NONE: ExtSet = ExtSet(0);
    pub const RETH: ExtSet = ExtSet(1 << 0);
    pub const AETH: ExtSet = ExtSet(1 << 1);
    pub const ATOMIC_ETH: ExtSet = ExtSet(1 << 2);
    pub const ATOMIC_ACK_ETH: ExtSet = ExtSet(1 << 3);
    pub const IMM: ExtSet = ExtSet(1 << 4);
    pub const IETH: ExtSet = ExtSet(1 << 5);
    pub const DETH: ExtSet = ExtSet(1 << 6);
    /// The 16 reserved zero bytes of a CNP.
    pub const CNP_RESERVED: ExtSet = ExtSet(1 << 7);

    pub const fn union(self, other: ExtSet) -> ExtSet {
        ExtSet(self.0 | other.0)
    }

    pub const fn without(self, other: ExtSet) -> ExtSet {
        ExtSet(self.0 & !other.0)
    }

    pub const fn contains(self, other: ExtSet) -> bool {
        self.0 & other.0 == other.0
    }

    pub const fn bits(self) -> u8 {
        self.0
    }

    /// Each header with the bytes it occupies on the wire.
    const WIRE_LENS: [(ExtSet, usize); 8] = [
        (Self::DETH, crate::headers::DETH_LEN),
        (Self::RETH, crate::headers::RETH_LEN),
        (Self::ATOMIC_ETH, crate::headers::ATOMIC_ETH_LEN),
        (Self::AETH, crate::headers::AETH_LEN),
        (Self::ATOMIC_ACK_ETH, crate::headers::ATOMIC_ACK_ETH_LEN),
        (Self::IMM, crate::headers::IMM_LEN),
        (Self::IETH, crate::headers::IETH_LEN),
        (Self::CNP_RESERVED, crate::headers::CNP_RESERVED_LEN),
    ];

    /// Bytes the headers in this set occupy on the wire.
    pub const fn wire_len(self) -> usize {
        let mut len = 0;
        let mut i = 0;
        while i < Self::WIRE_LENS.len() {
            let (header, header_len) = Self::WIRE_LENS[i];
            if self.contains(header) {
                len += header_len;
            }
            i += 1;
        }
        len
    }
}

/// Static facts about one opcode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpcodeInfo {
    pub code: u8,
    pub name: &'static str,
    pub headers: ExtSet,
    /// A payload may follow the headers (it may still be empty).
    pub has_payload: bool,
}

/// Named opcode values (RC unless prefixed).
pub mod op {
    pub const SEND_FIRST: u8 = 0x00;
    pub const SEND_MIDDLE: u8 = 0x01;
    pub const SEND_LAST: u8 = 0x02;
    pub const SEND_LAST_IMM: u8 = 0x03;
    pub const SEND_ONLY: u8 = 0x04;
    pub const SEND_ONLY_IMM: u8 = 0x05;
    pub const WRITE_FIRST: u8 = 0x06;
    pub const WRITE_MIDDLE: u8 = 0x07;
    pub const WRITE_LAST: u8 = 0x08;
    pub const WRITE_LAST_IMM: u8 = 0x09;
    pub const WRITE_ONLY: u8 = 0x0A;
    pub const WRITE_ONLY_IMM: u8 = 0x0B;
    pub const READ_REQUEST: u8 = 0x0C;
    pub const READ_RESPONSE_FIRST: u8 = 0x0D;
    pub const READ_RESPONSE_MIDDLE: u8 = 0x0E;
    pub const READ_RESPONSE_LAST: u8 = 0x0F;
    pub const READ_RESPONSE_ONLY: u8 = 0x10;
    pub const ACKNOWLEDGE: u8 = 0x11;
    pub const ATOMIC_ACKNOWLEDGE: u8 = 0x12;
    pub const COMPARE_SWAP: u8 = 0x13;
    pub const FETCH_ADD: u8 = 0x14;
    pub const SEND_LAST_INV: u8 = 0x16;
    pub const SEND_ONLY_INV: u8 = 0x17;
    /// Offset of the UC opcode block (same low 5 bits as RC for SEND/WRITE).
    pub const UC: u8 = 0x20;
    pub const UD_SEND_ONLY: u8 = 0x64;
    pub const UD_SEND_ONLY_IMM: u8 = 0x65;
    pub const CNP: u8 = 0x81;
}

macro_rules! opcodes {
    ($( $code:expr => $name:literal, [$($h:ident),*], $payload:literal; )*) => {
        /// Every opcode the codec understands.
        pub const OPCODES: &[OpcodeInfo] = &[
            $( OpcodeInfo {
                code: $code,
                name: $name,
                headers: ExtSet::NONE $(.union(ExtSet::$h))*,
                has_payload: $payload,
            }, )*
        ];
    };
}

opcodes! {
    0x00 => "RC_SEND_FIRST", [], true;
    0x01 => "RC_SEND_MIDDLE", [], true;
    0x02 => "RC_SEND_LAST", [], true;
    0x03 => "RC_SEND_LAST_WITH_IMMEDIATE", [IMM], true;
    0x04 => "RC_SEND_ONLY", [], true;
    0x05 => "RC_SEND_ONLY_WITH_IMMEDIATE", [IMM], true;
    0x06 => "RC_RDMA_WRITE_FIRST", [RETH], true;
    0x07 => "RC_RDMA_WRITE_MIDDLE", [], true;
    0x08 => "RC_RDMA_WRITE_LAST", [], true;
    0x09 => "RC_RDMA_WRITE_LAST_WITH_IMMEDIATE", [IMM], true;
    0x0A => "RC_RDMA_WRITE_ONLY", [RETH], true;
    0x0B => "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", [RETH, IMM], true;
    0x0C => "RC_RDMA_READ_REQUEST", [RETH], false;
    0x0D => "RC_RDMA_READ_RESPONSE_FIRST", [AETH], true;
    0x0E => "RC_RDMA_READ_RESPONSE_MIDDLE", [], true;
    0x0F => "RC_RDMA_READ_RESPONSE_LAST", [AETH], true;
    0x10 => "RC_RDMA_READ_RESPONSE_ONLY", [AETH], true;
    0x11 => "RC_ACKNOWLEDGE", [AETH], false;
    0x12 => "RC_ATOMIC_ACKNOWLEDGE", [AETH, ATOMIC_ACK_ETH], false;
    0x13 => "RC_COMPARE_SWAP", [ATOMIC_ETH], false;
    0x14 => "RC_FETCH_ADD", [ATOMIC_ETH], false;
    0x16 => "RC_SEND_LAST_WITH_INVALIDATE", [IETH], true;
    0x17 => "RC_SEND_ONLY_WITH_INVALIDATE", [IETH], true;
    0x20 => "UC_SEND_FIRST", [], true;
    0x21 => "UC_SEND_MIDDLE", [], true;
    0x22 => "UC_SEND_LAST", [], true;
    0x23 => "UC_SEND_LAST_WITH_IMMEDIATE", [IMM], true;
    0x24 => "UC_SEND_ONLY", [], true;
    0x25 => "UC_SEND_ONLY_WITH_IMMEDIATE", [IMM], true;
    0x26 => "UC_RDMA_WRITE_FIRST", [RETH], true;
    0x27 => "UC_RDMA_WRITE_MIDDLE", [], true;
    0x28 => "UC_RDMA_WRITE_LAST", [], true;
    0x29 => "UC_RDMA_WRITE_LAST_WITH_IMMEDIATE", [IMM], true;
    0x2A => "UC_RDMA_WRITE_ONLY", [RETH], true;
    0x2B => "UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", [RETH, IMM], true;
    0x64 => "UD_SEND_ONLY", [DETH], true;
    0x65 => "UD_SEND_ONLY_WITH_IMMEDIATE", [DETH, IMM], true;
    0x81 => "CNP", [CNP_RESERVED], false;
}

/// Looks up an opcode; `None` for codes the codec does not carry.
pub fn info(code: u8) -> Option<&'static OpcodeInfo> {
    OPCODES.iter().find(|o| o.code == code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_sorted_and_unique() {
        assert!(OPCODES.windows(2).all(|w| w[0].code < w[1].code));
    }

    #[test]
    fn header_lengths_follow_the_card() {
        assert_eq!(info(op::WRITE_ONLY_IMM).unwrap().headers.wire_len(), 20);
        assert_eq!(info(op::ATOMIC_ACKNOWLEDGE).unwrap().headers.wire_len(), 12);
        assert_eq!(info(op::COMPARE_SWAP).unwrap().headers.wire_len(), 28);
        assert_eq!(info(op::CNP).unwrap().headers.wire_len(), 16);
        assert!(info(0x15).is_none());
    }
}
