//! `ByteLaneSelect`: a per-byte-lane 2:1 multiplexer, used to merge two
//! realigned beats and to zero the bytes a CRC must not see.
//!
//! Ports: `when_set`, `when_clear` (in, `D` bits), `lane_select` (in, `K` =
//! `D / 8` bits) and `chosen` (out): byte lane `i` of `chosen` is lane `i` of
//! `when_set` if `lane_select[i]` is high, else lane `i` of `when_clear`.
//! Combinational (latency 0), one LUT level.
//!
//! rust-hdl's synthesizable subset has no part-select assignment, so the
//! Verilog (one line per lane) is generated here, beside an equivalent
//! simulation model.

use crate::primitives::wide::{bits_from_bytes, bits_to_bytes};
use rust_hdl::prelude::*;

#[derive(LogicBlock, Default)]
pub struct ByteLaneSelect<const D: usize, const K: usize> {
    pub when_set: Signal<In, Bits<D>>,
    pub when_clear: Signal<In, Bits<D>>,
    pub lane_select: Signal<In, Bits<K>>,
    pub chosen: Signal<Out, Bits<D>>,
}

impl<const D: usize, const K: usize> Logic for ByteLaneSelect<D, K> {
    fn update(&mut self) {
        assert_eq!(D, 8 * K, "one select bit per byte lane");
        let set = bits_to_bytes(self.when_set.val());
        let clear = bits_to_bytes(self.when_clear.val());
        let select = self.lane_select.val();
        let chosen: Vec<u8> = (0..K)
            .map(|i| if select.get_bit(i) { set[i] } else { clear[i] })
            .collect();
        self.chosen.next = bits_from_bytes(&chosen);
    }

    fn connect(&mut self) {
        self.chosen.connect();
    }

    fn hdl(&self) -> Verilog {
        let mut code = String::from("always @(*) begin\n");
        for i in 0..K {
            let (hi, lo) = (8 * i + 7, 8 * i);
            code.push_str(&format!(
                "    chosen[{hi}:{lo}] = lane_select[{i}] ? when_set[{hi}:{lo}] : when_clear[{hi}:{lo}];\n"
            ));
        }
        code.push_str("end\n");
        Verilog::Custom(code)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_each_lane_from_its_side() {
        let mut s = ByteLaneSelect::<512, 64>::default();
        s.connect_all();
        s.when_set.next = bits_from_bytes(&[0xAA; 64]);
        s.when_clear.next = bits_from_bytes(&[0x55; 64]);
        s.lane_select.next = bits::<64>(0x8000_0000_0000_0003);
        assert!(simulate(&mut s, 10));
        let out = bits_to_bytes(s.chosen.val());
        assert_eq!(&out[..3], &[0xAA, 0xAA, 0x55]);
        assert_eq!(out[63], 0xAA);
        assert_eq!(out[62], 0x55);
        let v = generate_verilog(&s);
        assert!(v.contains(
            "chosen[511:504] = lane_select[63] ? when_set[511:504] : when_clear[511:504];"
        ));
    }
}
