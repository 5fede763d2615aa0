//! `IcrcChecker`: checks the ICRC of received RoCEv2 frames, 64 bytes per
//! cycle, without extracting it.
//!
//! The CRC runs over the covered bytes and the four ICRC bytes themselves;
//! a message followed by its own CRC always leaves the same register (the
//! CRC-32 residue, `crc32_math::RESIDUE_REGISTER`). The last beat is
//! zero-filled to 64 bytes, which multiplies the register by `Aᶠⁱˡˡ`, so
//! instead of undoing the fill the register is compared with a 64-entry
//! table of `Aᶠⁱˡˡ·residue`: one 32-bit compare instead of six 32×32
//! matrix stages.
//!
//! Ports:
//! - `clock`, `reset` (synchronous), `advance` (clock enable: everything
//!   holds while it is low);
//! - the beat inputs of [`crate::frame::crc::icrc_mask::IcrcMask`]: `beat_valid`,
//!   `beat_first`, `beat_ipv6`, `beat_end` (the beat holding the last ICRC
//!   byte, i.e. IP header start + IP length), `beat_end_bytes`,
//!   `beat_data`;
//! - `result_valid` (high for the advance that carries the end beat's
//!   verdict) and `result_ok` (the ICRC matched).
//!
//! Latency: the verdict of an end beat presented at advance `t` is on the
//! outputs after advance `t + 3` (mask stage, data term, register).
//! Throughput: one beat per cycle, back-to-back frames of any length.

use crate::frame::crc::crc32_beat::Crc32Beat;
use crate::frame::crc::crc32_math::padded_residues;
use crate::frame::crc::icrc_mask::IcrcMask;
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct IcrcChecker {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub advance: Signal<In, Bit>,
    pub beat_valid: Signal<In, Bit>,
    pub beat_first: Signal<In, Bit>,
    pub beat_ipv6: Signal<In, Bit>,
    pub beat_end: Signal<In, Bit>,
    pub beat_end_bytes: Signal<In, Bits<6>>,
    pub beat_data: Signal<In, Bits<512>>,
    pub result_valid: Signal<Out, Bit>,
    pub result_ok: Signal<Out, Bit>,
    mask: IcrcMask,
    core: Crc32Beat,
    expected: Signal<Local, Bits<32>>,
    expected_term: DFF<Bits<32>>,
    expected_state: DFF<Bits<32>>,
    padded_residue: [Constant<Bits<32>>; 64],
}

impl Default for IcrcChecker {
    fn default() -> Self {
        let table = padded_residues();
        IcrcChecker {
            clock: Default::default(),
            reset: Default::default(),
            advance: Default::default(),
            beat_valid: Default::default(),
            beat_first: Default::default(),
            beat_ipv6: Default::default(),
            beat_end: Default::default(),
            beat_end_bytes: Default::default(),
            beat_data: Default::default(),
            result_valid: Default::default(),
            result_ok: Default::default(),
            mask: Default::default(),
            core: Default::default(),
            expected: Default::default(),
            expected_term: Default::default(),
            expected_state: Default::default(),
            padded_residue: table.map(|r| Constant::new(bits::<32>(u64::from(r)))),
        }
    }
}

impl Logic for IcrcChecker {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, expected_term, expected_state);
        self.mask.clock.next = self.clock.val();
        self.mask.reset.next = self.reset.val();
        self.mask.advance.next = self.advance.val();
        self.mask.beat_valid.next = self.beat_valid.val();
        self.mask.beat_first.next = self.beat_first.val();
        self.mask.beat_ipv6.next = self.beat_ipv6.val();
        self.mask.beat_end.next = self.beat_end.val();
        self.mask.beat_end_bytes.next = self.beat_end_bytes.val();
        self.mask.beat_data.next = self.beat_data.val();
        self.core.clock.next = self.clock.val();
        self.core.reset.next = self.reset.val();
        self.core.advance.next = self.advance.val();
        self.core.in_valid.next = self.mask.masked_valid.val();
        self.core.in_first.next = self.mask.masked_first.val();
        self.core.in_data.next = self.mask.masked_data.val();
        self.core.in_offset.next = self.mask.masked_offset.val();
        self.core.in_tag.next = self.mask.masked_tag.val();
        // The residue to expect is looked up as the beat enters the core
        // (the tag's low six bits are the end beat's zero fill) and
        // follows it through the core's two stages, so the final compare
        // starts from registers.
        self.expected.next = self.padded_residue[0].val();
        for fill in 0..64 {
            if self.mask.masked_tag.val().get_bits::<6>(0).index() == fill {
                self.expected.next = self.padded_residue[fill].val();
            }
        }
        if self.advance.val() {
            self.expected_term.d.next = self.expected.val();
            self.expected_state.d.next = self.expected_term.q.val();
        }
        self.result_valid.next = self.core.out_valid.val() & self.core.out_tag.val().get_bit(6);
        self.result_ok.next = self.core.out_state.val() == self.expected_state.q.val();
    }
}
