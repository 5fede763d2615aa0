//! `ByteRotator`: rotates a beat right by a byte count taken from a fixed
//! set, the shifter of the payload realigner.
//!
//! Ports: `operand` (in, `D` bits), `amount` (in, 6 bits, bytes) and
//! `rotated` (out): lane `i` of `rotated` is lane `(i + amount) mod D/8` of
//! `operand`, so lane `amount` moves to lane 0. Amounts outside the set
//! given at elaboration pass the beat through unrotated. Combinational
//! (latency 0).
//!
//! A header is one of a dozen lengths, so the payload only ever needs a
//! dozen rotations: the Verilog is a case over the listed amounts, a 12:1
//! mux per bit (about three LUT6 levels). With all 64 amounts listed it is
//! a six-stage barrel instead, which is then the smaller of the two. The
//! simulation model rotates bytes directly.

use crate::primitives::wide::{bits_from_bytes, bits_to_bytes};
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct ByteRotator<const D: usize> {
    pub operand: Signal<In, Bits<D>>,
    pub amount: Signal<In, Bits<6>>,
    pub rotated: Signal<Out, Bits<D>>,
    _amounts: Vec<usize>,
}

impl<const D: usize> ByteRotator<D> {
    /// `amounts`: the rotations (in bytes, below `D / 8`) to support.
    pub fn new(amounts: &[usize]) -> Self {
        assert!(
            D.is_multiple_of(8) && D / 8 <= 64,
            "whole bytes, at most 64 lanes"
        );
        let mut list: Vec<usize> = amounts.to_vec();
        list.sort_unstable();
        list.dedup();
        assert!(
            list.iter().all(|&a| a < D / 8),
            "rotation below the lane count"
        );
        ByteRotator {
            operand: Default::default(),
            amount: Default::default(),
            rotated: Default::default(),
            _amounts: list,
        }
    }

    /// The rotation actually applied for `amount`.
    pub fn effective(&self, amount: usize) -> usize {
        if self._amounts.contains(&amount) {
            amount
        } else {
            0
        }
    }
}

impl<const D: usize> Logic for ByteRotator<D> {
    fn update(&mut self) {
        let by = self.effective(self.amount.val().index());
        let mut bytes = bits_to_bytes(self.operand.val());
        bytes.rotate_left(by);
        self.rotated.next = bits_from_bytes(&bytes);
    }

    fn connect(&mut self) {
        self.rotated.connect();
    }

    fn hdl(&self) -> Verilog {
        if D / 8 == 64 && self._amounts.len() == 64 {
            return Verilog::Custom(full_rotator_verilog());
        }
        let mut code = String::from("always @(*) begin\n    case (amount)\n");
        for &a in self._amounts.iter().filter(|&&a| a != 0) {
            let split = 8 * a;
            code.push_str(&format!(
                "        6'd{a}: rotated = {{operand[{}:0], operand[{}:{split}]}};\n",
                split - 1,
                D - 1
            ));
        }
        code.push_str("        default: rotated = operand;\n    endcase\nend\n");
        Verilog::Custom(code)
    }
}

/// Every rotation of a 64-lane beat: six stages of 2:1 lane multiplexers,
/// stage k rotating by 2^k lanes when amount bit k is set (three LUT6
/// levels). With all 64 amounts listed this is far smaller than the case
/// statement and needs no MUXF7/8 (Yosys figures: `docs/status.md`).
fn full_rotator_verilog() -> String {
    let mut code = String::from(
        "reg [511:0] rotate_stage_0, rotate_stage_1, rotate_stage_2, rotate_stage_3, rotate_stage_4;\n",
    );
    code.push_str("always @(*) begin\n");
    let names = [
        "operand",
        "rotate_stage_0",
        "rotate_stage_1",
        "rotate_stage_2",
        "rotate_stage_3",
        "rotate_stage_4",
        "rotated",
    ];
    for k in 0..6 {
        let split = 8 << k;
        let (from, to) = (names[k], names[k + 1]);
        code.push_str(&format!(
            "    {to} = amount[{k}] ? {{{from}[{}:0], {from}[511:{split}]}} : {from};\n",
            split - 1
        ));
    }
    code.push_str("end\n");
    code
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotates_by_listed_amounts_only() {
        let mut r = ByteRotator::<512>::new(&[2, 54, 0]);
        r.connect_all();
        let bytes: Vec<u8> = (0..64).collect();
        r.operand.next = bits_from_bytes(&bytes);
        for (amount, expect_first) in [(2usize, 2u8), (54, 54), (0, 0), (5, 0)] {
            r.amount.next = bits::<6>(amount as u64);
            assert!(simulate(&mut r, 10));
            let out = bits_to_bytes(r.rotated.val());
            assert_eq!(out[0], expect_first, "amount {amount}");
            assert_eq!(
                out[63],
                expect_first.wrapping_add(63) % 64,
                "amount {amount}"
            );
        }
        let v = generate_verilog(&r);
        assert!(v.contains("6'd54: rotated = {operand[431:0], operand[511:432]};"));
        assert!(!v.contains("6'd0:"));
    }
}
