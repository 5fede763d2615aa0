//! `Gf2Matrix`: a constant matrix over GF(2) applied to a vector, the XOR
//! trees of the CRC engines.
//!
//! Ports: `operand` (in, `I` bits) and `product` (out, `O` bits, 2..=64):
//! product bit `o` is the parity of `operand & row[o]`, rows fixed at
//! elaboration from a [`LinearMap`]. Purely combinational (latency 0); its
//! depth is log6 of the widest row in LUT6 levels (4 for the 512-bit CRC
//! data term).
//!
//! rust-hdl's synthesizable subset cannot assign single bits of a signal
//! in a loop, so the Verilog is generated here (one reduction-XOR line per
//! output bit) and the simulation model computes the same parities on
//! 64-bit words, which also keeps the 512-bit simulation fast. The unit
//! tests below check the model against the map and the Verilog's shape;
//! the Verilog itself runs under Verilator inside the ICRC blocks
//! (`sim/tests/blocks/icrc.rs`).

use crate::frame::crc::crc32_math::LinearMap;
use crate::primitives::wide::{bits_from_words, bits_to_words, verilog_hex};
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct Gf2Matrix<const I: usize, const O: usize> {
    pub operand: Signal<In, Bits<I>>,
    pub product: Signal<Out, Bits<O>>,
    _map: LinearMap,
}

impl<const I: usize, const O: usize> Gf2Matrix<I, O> {
    pub fn new(map: LinearMap) -> Self {
        assert_eq!(map.inputs(), I, "matrix input width");
        assert_eq!(map.outputs(), O, "matrix output width");
        assert!((2..=64).contains(&O), "2 to 64 output bits");
        Gf2Matrix {
            operand: Default::default(),
            product: Default::default(),
            _map: map,
        }
    }

    pub fn map(&self) -> &LinearMap {
        &self._map
    }
}

impl<const I: usize, const O: usize> Logic for Gf2Matrix<I, O> {
    fn update(&mut self) {
        let x = bits_to_words(self.operand.val());
        self.product.next = bits_from_words(&[self._map.apply(&x)]);
    }

    fn connect(&mut self) {
        self.product.connect();
    }

    fn hdl(&self) -> Verilog {
        let mut code = String::from(
            "// product = M * operand over GF(2): each bit is the parity of the\n\
             // operand bits its row selects.\nalways @(*) begin\n",
        );
        for o in 0..O {
            code.push_str(&format!(
                "    product[{o}] = ^(operand & {});\n",
                verilog_hex(I, self._map.row(o))
            ));
        }
        code.push_str("end\n");
        Verilog::Custom(code)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::crc::crc32_math::zero_bytes_map;

    #[test]
    fn simulation_model_applies_the_map() {
        let map = zero_bytes_map(3);
        let mut m = Gf2Matrix::<32, 32>::new(map.clone());
        m.connect_all();
        for x in [1u64, 0xDEAD_BEEF, 0xFFFF_FFFF, 0x8000_0001] {
            m.operand.next = bits::<32>(x);
            assert!(simulate(&mut m, 10));
            assert_eq!(m.product.val().to_u64(), map.apply_u64(x));
        }
    }

    #[test]
    fn verilog_has_one_reduction_per_output_bit() {
        let mut m = Gf2Matrix::<32, 32>::new(zero_bytes_map(1));
        m.connect_all();
        let v = generate_verilog(&m);
        assert_eq!(v.matches("= ^(operand & 32'h").count(), 32);
        assert!(v.contains("product[31]"));
    }
}
