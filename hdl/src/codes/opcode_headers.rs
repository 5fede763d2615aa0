//! `OpcodeHeaders`: the BTH opcode table as a ROM: which extension headers
//! follow the BTH, their length, and whether a payload may follow (IBA
//! Vol. 1 table 38, `rxe_opcode.c`, `rocenic_wire::opcode::OPCODES`).
//!
//! Ports: `opcode` (in, 8 bits); `known` (out) is low for codes RoCEv2 does
//! not use; `headers` (out, 8 bits) is the header set with the bit numbering
//! of `rocenic_wire::opcode::ExtSet` ([`ext`]); `headers_len` (out, 5 bits)
//! is their length in bytes (0..=28); `has_payload` (out). Combinational
//! (latency 0): a 256-entry, 15-bit constant table, which synthesizes to a
//! few LUT levels.

use rust_hdl::prelude::*;

/// Extension-header bits, numbered as `rocenic_wire::opcode::ExtSet`.
pub mod ext {
    pub const RETH: u8 = 1 << 0;
    pub const AETH: u8 = 1 << 1;
    pub const ATOMIC_ETH: u8 = 1 << 2;
    pub const ATOMIC_ACK_ETH: u8 = 1 << 3;
    pub const IMM: u8 = 1 << 4;
    pub const IETH: u8 = 1 << 5;
    pub const DETH: u8 = 1 << 6;
    /// The 16 reserved zero bytes of a CNP.
    pub const CNP_RESERVED: u8 = 1 << 7;

    /// Wire length of the headers in `set`.
    pub const fn wire_len(set: u8) -> u8 {
        let mut len = 0;
        if set & RETH != 0 {
            len += 16;
        }
        if set & AETH != 0 {
            len += 4;
        }
        if set & ATOMIC_ETH != 0 {
            len += 28;
        }
        if set & ATOMIC_ACK_ETH != 0 {
            len += 8;
        }
        if set & IMM != 0 {
            len += 4;
        }
        if set & IETH != 0 {
            len += 4;
        }
        if set & DETH != 0 {
            len += 8;
        }
        if set & CNP_RESERVED != 0 {
            len += 16;
        }
        len
    }
}

/// Every opcode RoCEv2 carries: (code, extension headers, payload allowed).
pub const OPCODE_TABLE: &[(u8, u8, bool)] = {
    use ext::*;
    &[
        (0x00, 0, true),
        (0x01, 0, true),
        (0x02, 0, true),
        (0x03, IMM, true),
        (0x04, 0, true),
        (0x05, IMM, true),
        (0x06, RETH, true),
        (0x07, 0, true),
        (0x08, 0, true),
        (0x09, IMM, true),
        (0x0A, RETH, true),
        (0x0B, RETH | IMM, true),
        (0x0C, RETH, false),
        (0x0D, AETH, true),
        (0x0E, 0, true),
        (0x0F, AETH, true),
        (0x10, AETH, true),
        (0x11, AETH, false),
        (0x12, AETH | ATOMIC_ACK_ETH, false),
        (0x13, ATOMIC_ETH, false),
        (0x14, ATOMIC_ETH, false),
        (0x16, IETH, true),
        (0x17, IETH, true),
        (0x20, 0, true),
        (0x21, 0, true),
        (0x22, 0, true),
        (0x23, IMM, true),
        (0x24, 0, true),
        (0x25, IMM, true),
        (0x26, RETH, true),
        (0x27, 0, true),
        (0x28, 0, true),
        (0x29, IMM, true),
        (0x2A, RETH, true),
        (0x2B, RETH | IMM, true),
        (0x64, DETH, true),
        (0x65, DETH | IMM, true),
        (0x81, CNP_RESERVED, false),
    ]
};

/// Bits of one ROM entry: headers (8), has_payload (1), known (1),
/// headers_len (5), one spare.
const ENTRY_BITS: usize = 16;
const ROM_BITS: usize = 256 * ENTRY_BITS;

/// The ROM entry of `code` as a plain number (zero for unknown codes).
pub fn rom_entry(code: u8) -> u16 {
    OPCODE_TABLE
        .iter()
        .find(|(c, _, _)| *c == code)
        .map_or(0, |&(_, set, payload)| {
            u16::from(set) | u16::from(payload) << 8 | 1 << 9 | u16::from(ext::wire_len(set)) << 10
        })
}

#[derive(LogicBlock)]
pub struct OpcodeHeaders {
    pub opcode: Signal<In, Bits<8>>,
    pub known: Signal<Out, Bit>,
    pub headers: Signal<Out, Bits<8>>,
    pub headers_len: Signal<Out, Bits<5>>,
    pub has_payload: Signal<Out, Bit>,
    rom: Constant<Bits<ROM_BITS>>,
    entry: Signal<Local, Bits<ENTRY_BITS>>,
}

impl Default for OpcodeHeaders {
    fn default() -> Self {
        let mut rom = Bits::<ROM_BITS>::default();
        for code in 0..=255u8 {
            rom.set_bits::<ENTRY_BITS>(
                usize::from(code) * ENTRY_BITS,
                bits(u64::from(rom_entry(code))),
            );
        }
        OpcodeHeaders {
            opcode: Default::default(),
            known: Default::default(),
            headers: Default::default(),
            headers_len: Default::default(),
            has_payload: Default::default(),
            rom: Constant::new(rom),
            entry: Default::default(),
        }
    }
}

impl Logic for OpcodeHeaders {
    #[hdl_gen]
    fn update(&mut self) {
        // 16 = ENTRY_BITS: the HDL subset takes literals, not named constants.
        self.entry.next = self
            .rom
            .val()
            .get_bits::<16>(self.opcode.val().index() * 16);
        self.headers.next = self.entry.val().get_bits::<8>(0);
        self.has_payload.next = self.entry.val().get_bit(8);
        self.known.next = self.entry.val().get_bit(9);
        self.headers_len.next = self.entry.val().get_bits::<5>(10);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rom_follows_the_table() {
        let mut t = OpcodeHeaders::default();
        t.connect_all();
        for code in [0x00u8, 0x0B, 0x0C, 0x12, 0x13, 0x15, 0x65, 0x81, 0xFF] {
            t.opcode.next = bits(u64::from(code));
            assert!(simulate(&mut t, 10));
            let entry = OPCODE_TABLE.iter().find(|e| e.0 == code);
            assert_eq!(t.known.val(), entry.is_some(), "{code:#x}");
            let (set, payload) = entry.map_or((0, false), |e| (e.1, e.2));
            assert_eq!(t.headers.val().to_u8(), set, "{code:#x}");
            assert_eq!(t.has_payload.val(), payload, "{code:#x}");
            assert_eq!(t.headers_len.val().to_u8(), ext::wire_len(set), "{code:#x}");
        }
    }

    #[test]
    fn generates_verilog() {
        let mut t = OpcodeHeaders::default();
        t.connect_all();
        let v = generate_verilog(&t);
        assert!(v.contains("module top"), "{v}");
    }
}
