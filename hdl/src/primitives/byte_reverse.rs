//! `ByteReverse`: reverses the byte order of a value, turning a header
//! written as one big-endian number (first wire byte most significant) into
//! the datapath's lane order (first wire byte in bits 7:0).
//!
//! Ports: `operand` (in, `D` bits, a whole number of bytes) and `reversed`
//! (out, `D` bits): byte `k` of `reversed` is byte `D/8 - 1 - k` of
//! `operand`. Pure wiring (latency 0, no logic).
//!
//! rust-hdl's synthesizable subset cannot assign part-selects, so the
//! Verilog (one concatenation) is generated here beside an equivalent
//! simulation model that works on whole bytes, which is also far faster
//! than a loop of wide shifts in rust-hdl's simulator.

use crate::primitives::wide::{bits_from_bytes, bits_to_bytes};
use rust_hdl::prelude::*;

#[derive(LogicBlock, Default)]
pub struct ByteReverse<const D: usize> {
    pub operand: Signal<In, Bits<D>>,
    pub reversed: Signal<Out, Bits<D>>,
}

impl<const D: usize> Logic for ByteReverse<D> {
    fn update(&mut self) {
        assert!(D.is_multiple_of(8), "whole bytes");
        let mut bytes = bits_to_bytes(self.operand.val());
        bytes.reverse();
        self.reversed.next = bits_from_bytes(&bytes);
    }

    fn connect(&mut self) {
        self.reversed.connect();
    }

    fn hdl(&self) -> Verilog {
        // `{a, b, ...}` puts `a` in the most significant bits, so listing
        // the operand's bytes from byte 0 up reverses them.
        let lanes: Vec<String> = (0..D / 8)
            .map(|k| format!("operand[{}:{}]", 8 * k + 7, 8 * k))
            .collect();
        Verilog::Custom(format!(
            "always @(*) begin\n    reversed = {{{}}};\nend\n",
            lanes.join(", ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reverses_bytes() {
        let mut r = ByteReverse::<32>::default();
        r.connect_all();
        r.operand.next = bits(0x1122_3344);
        assert!(simulate(&mut r, 10));
        assert_eq!(r.reversed.val(), bits::<32>(0x4433_2211));
        let mut wide = ByteReverse::<1024>::default();
        wide.connect_all();
        let bytes: Vec<u8> = (0..128).collect();
        wide.operand.next = bits_from_bytes(&bytes);
        assert!(simulate(&mut wide, 10));
        let out = bits_to_bytes(wide.reversed.val());
        assert_eq!(out[0], 127);
        assert_eq!(out[127], 0);
        let v = generate_verilog(&r);
        assert!(
            v.contains("reversed = {operand[7:0], operand[15:8], operand[23:16], operand[31:24]};")
        );
    }
}
