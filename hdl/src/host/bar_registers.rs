//! `BarRegisters`: BAR0 of the host interface, the register blocks of the
//! host ABI (`rocenic-abi`, `docs/abi.md`) behind an AXI4-Lite target.
//! Every offset, every constant and which dwords are mapped come from the
//! ABI's tables, so the RTL and the driver cannot disagree on one.
//!
//! # Ports
//!
//! - `clock`; `reset` (synchronous, high): every register to its ABI reset
//!   value.
//! - `mmio` ([`AxiLiteTarget`], 14 address bits: BAR0's 16 KiB).
//! - Control: `enable` (the `control.enable` bit), `soft_reset` (a
//!   one-cycle pulse when software writes `control.soft_reset`; this
//!   block's registers return to their reset values at the edge that ends
//!   the pulse, all but the MSI-X table's addresses and data, which PCIe
//!   leaves undefined after a reset), `reset_busy` (in:
//!   `control.soft_reset` reads it), `fatal` (in: `status.fatal`),
//!   `fatal_set` (in: bits or-ed into `fatal_cause` every cycle),
//!   `admin_eqn`.
//! - Admin queue: `asq_base`, `asq_log_size`, `acq_base`, `acq_log_size`
//!   (the registers' values), `asq_tail_valid` / `asq_tail` and
//!   `acq_head_valid` / `acq_head` (one-cycle doorbell pulses with the
//!   written index), `asq_head` (in).
//! - EQ doorbells: `eq_doorbell_valid` (pulse), `eq_doorbell_eqn`,
//!   `eq_doorbell_value` (the written word's defined bits: consumer index
//!   and arm).
//! - Counters: `counter_index` (out) / `counter_value` (in, 64 bits, the
//!   counter at the index presented in the cycle before: a synchronous
//!   read, as of a RAM or a registered mux).
//! - MSI-X: `msix_mask` (the vectors' mask bits), `msix_pending` (in: the
//!   PBA), and a lookup port for the message engine: `vector_lookup` with
//!   `vector_lookup_index` in one cycle gives `vector_address` and
//!   `vector_data` in the next (a lookup takes the table's read port; a
//!   BAR read of the table waits a cycle).
//! - Congestion control: `np`, `rp`, `pfc` and `cnp_dscp`, the
//!   congestion block's parameters in the core's units (its registers
//!   live in [`CongestionRegisters`], inside this block).
//! - `unmapped`: a one-cycle pulse per dword written, and per read, where
//!   no register is (the `mmio_unmapped` counter's event; a read counts
//!   the dword its address names, not the other half it also returns).
//!
//! # Accesses
//!
//! An access is carried out one 32-bit dword at a time: a write does its
//! low dword, then its high dword, each only if its four strobes are set;
//! a read of an 8-byte word reads its low dword, then its high one, and a
//! read whose address has bit 2 set (a 32-bit read of the high half)
//! skips the low dword, so a counter's low-half read latches the high
//! half that a separate high-half read returns.
//!
//! # Latency and throughput
//!
//! Write: `bvalid` 2 cycles after the edge that took the write. Read:
//! `rvalid` 4 cycles after the edge that took the address (2 for a
//! high-half read; a cycle more for each MSI-X lookup that holds the
//! table while it is read). One access at a time, writes first: the slow
//! path of configuration and admin doorbells (the QP and CQ doorbells
//! have pages of their own).

use crate::congestion::dcqcn_notification_point::NpParamsSource;
use crate::congestion::dcqcn_reaction_point::RpParamsSource;
use crate::congestion::pfc_pause::PfcParamsSource;
use crate::host::axi_lite::AxiLiteTarget;
use crate::host::congestion_registers::CongestionRegisters;
use crate::primitives::sync_ram::SyncRam;
use rocenic_abi::registers::{self as abi, Access, RegisterBlock};
use rust_hdl::prelude::*;
use std::collections::BTreeMap;

/// BAR0's byte-address bits.
pub const ADDRESS_BITS: usize = 14;
const DWORD_BITS: usize = ADDRESS_BITS - 2;
const _: () = assert!(abi::BAR0_SIZE == 1 << ADDRESS_BITS);
const _: () = assert!(abi::limits::EQS == 8 && abi::limits::MSIX_VECTORS == 32);
const _: () = assert!(abi::COUNTERS.len() <= 64);

const IDLE: u64 = 0;
const WRITE_LOW: u64 = 1;
const WRITE_HIGH: u64 = 2;
const WRITE_RESPONSE: u64 = 3;
const READ_LOW_ADDRESS: u64 = 4;
const READ_LOW_CAPTURE: u64 = 5;
const READ_HIGH_ADDRESS: u64 = 6;
const READ_HIGH_CAPTURE: u64 = 7;
const READ_RESPONSE: u64 = 8;

/// The dword index of register `name` of `block` (its low dword).
pub fn dword_of(block: &RegisterBlock, name: &str) -> u64 {
    let register = block
        .register(name)
        .unwrap_or_else(|| panic!("the ABI's {} block has no register {name}", block.name));
    u64::from((abi::bar0_offset(block) + register.offset) / 4)
}

fn dword_constant(block: &RegisterBlock, name: &str) -> Constant<Bits<DWORD_BITS>> {
    Constant::new(bits(dword_of(block, name)))
}

/// Every dword of BAR0 that holds a fixed value: the blocks' headers and
/// the device block (identity and capabilities).
pub fn constant_dwords() -> BTreeMap<u64, u32> {
    let mut dwords = BTreeMap::new();
    for (index, (offset, block)) in abi::BAR0_BLOCKS.iter().enumerate() {
        let fixed: Vec<abi::Register> = if block.name == abi::DEVICE.name {
            block.registers.to_vec()
        } else {
            Vec::new()
        };
        for r in block
            .header(abi::next_block_offset(index))
            .iter()
            .chain(&fixed)
        {
            assert!(r.access == Access::ReadOnly && r.width == 32 && r.count <= 1);
            dwords.insert(u64::from((offset + r.offset) / 4), r.reset as u32);
        }
    }
    dwords
}

/// Every dword some register of BAR0 occupies.
pub fn mapped_dwords() -> Vec<u64> {
    let mut dwords = Vec::new();
    for (index, (offset, block)) in abi::BAR0_BLOCKS.iter().enumerate() {
        for r in block
            .header(abi::next_block_offset(index))
            .iter()
            .chain(block.registers)
        {
            for n in 0..r.count.max(1) {
                let start = offset + r.offset_of(n);
                for byte in (0..r.width / 8).step_by(4) {
                    dwords.push(u64::from((start + byte) / 4));
                }
            }
        }
    }
    dwords.sort_unstable();
    dwords
}

/// BAR0 (see the module doc).
#[derive(LogicBlock)]
pub struct BarRegisters {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub mmio: AxiLiteTarget<ADDRESS_BITS>,

    pub enable: Signal<Out, Bit>,
    pub soft_reset: Signal<Out, Bit>,
    pub reset_busy: Signal<In, Bit>,
    pub fatal: Signal<In, Bit>,
    pub fatal_set: Signal<In, Bits<32>>,
    pub admin_eqn: Signal<Out, Bits<32>>,

    pub asq_base: Signal<Out, Bits<64>>,
    pub asq_log_size: Signal<Out, Bits<4>>,
    pub asq_tail_valid: Signal<Out, Bit>,
    pub asq_tail: Signal<Out, Bits<16>>,
    pub asq_head: Signal<In, Bits<16>>,
    pub acq_base: Signal<Out, Bits<64>>,
    pub acq_log_size: Signal<Out, Bits<4>>,
    pub acq_head_valid: Signal<Out, Bit>,
    pub acq_head: Signal<Out, Bits<16>>,

    pub eq_doorbell_valid: Signal<Out, Bit>,
    pub eq_doorbell_eqn: Signal<Out, Bits<3>>,
    pub eq_doorbell_value: Signal<Out, Bits<32>>,

    pub counter_index: Signal<Out, Bits<6>>,
    pub counter_value: Signal<In, Bits<64>>,

    pub msix_mask: Signal<Out, Bits<32>>,
    pub msix_pending: Signal<In, Bits<32>>,
    pub vector_lookup: Signal<In, Bit>,
    pub vector_lookup_index: Signal<In, Bits<5>>,
    pub vector_address: Signal<Out, Bits<64>>,
    pub vector_data: Signal<Out, Bits<32>>,

    pub np: NpParamsSource,
    pub rp: RpParamsSource,
    pub pfc: PfcParamsSource,
    pub cnp_dscp: Signal<Out, Bits<6>>,

    pub unmapped: Signal<Out, Bit>,

    congestion: CongestionRegisters,
    // The access in progress.
    state: DFF<Bits<4>>,
    dword: DFF<Bits<DWORD_BITS>>,
    write_data: DFF<Bits<64>>,
    write_strobes: DFF<Bits<8>>,
    read_data: DFF<Bits<64>>,
    /// The high half of the counter whose low half was read last.
    counter_high: DFF<Bits<32>>,
    /// The dword being read is the one the address named (not the high
    /// half a low-half read also returns).
    read_first: DFF<Bit>,

    // Registers.
    control_enable: DFF<Bit>,
    soft_reset_pulse: DFF<Bit>,
    fatal_cause: DFF<Bits<32>>,
    scratch: DFF<Bits<32>>,
    admin_eqn_value: DFF<Bits<32>>,
    asq_base_low: DFF<Bits<32>>,
    asq_base_high: DFF<Bits<32>>,
    asq_log_size_value: DFF<Bits<4>>,
    acq_base_low: DFF<Bits<32>>,
    acq_base_high: DFF<Bits<32>>,
    acq_log_size_value: DFF<Bits<4>>,
    asq_tail_pulse: DFF<Bit>,
    asq_tail_value: DFF<Bits<16>>,
    acq_head_pulse: DFF<Bit>,
    acq_head_value: DFF<Bits<16>>,
    eq_doorbell_pulse: DFF<Bit>,
    eq_doorbell_eqn_value: DFF<Bits<3>>,
    eq_doorbell_word: DFF<Bits<32>>,
    msix_mask_bits: DFF<Bits<32>>,
    unmapped_pulse: DFF<Bit>,
    vector_address_low: SyncRam<Bits<32>, 5>,
    vector_address_high: SyncRam<Bits<32>, 5>,
    vector_message_data: SyncRam<Bits<32>, 5>,
    constants: ROM<Bits<32>, DWORD_BITS>,
    mapped: ROM<Bit, DWORD_BITS>,

    // The dword operation of this cycle.
    high_half: Signal<Local, Bit>,
    half_data: Signal<Local, Bits<32>>,
    half_written: Signal<Local, Bit>,
    dword_write: Signal<Local, Bit>,
    dword_read: Signal<Local, Bit>,
    read_value: Signal<Local, Bits<32>>,
    eq_offset: Signal<Local, Bits<DWORD_BITS>>,
    in_eq_doorbells: Signal<Local, Bit>,
    counter_offset: Signal<Local, Bits<DWORD_BITS>>,
    in_counters: Signal<Local, Bit>,
    table_offset: Signal<Local, Bits<DWORD_BITS>>,
    in_msix_table: Signal<Local, Bit>,
    table_vector: Signal<Local, Bits<5>>,
    table_column: Signal<Local, Bits<2>>,
    table_wait: Signal<Local, Bit>,
    congestion_offset: Signal<Local, Bits<DWORD_BITS>>,
    in_congestion: Signal<Local, Bit>,

    at_control: Constant<Bits<DWORD_BITS>>,
    at_status: Constant<Bits<DWORD_BITS>>,
    at_fatal_cause: Constant<Bits<DWORD_BITS>>,
    at_scratch: Constant<Bits<DWORD_BITS>>,
    at_admin_eqn: Constant<Bits<DWORD_BITS>>,
    at_asq_base: Constant<Bits<DWORD_BITS>>,
    at_asq_log_size: Constant<Bits<DWORD_BITS>>,
    at_asq_tail: Constant<Bits<DWORD_BITS>>,
    at_asq_head: Constant<Bits<DWORD_BITS>>,
    at_acq_base: Constant<Bits<DWORD_BITS>>,
    at_acq_log_size: Constant<Bits<DWORD_BITS>>,
    at_acq_head: Constant<Bits<DWORD_BITS>>,
    at_eq_doorbells: Constant<Bits<DWORD_BITS>>,
    at_counters: Constant<Bits<DWORD_BITS>>,
    counter_dwords: Constant<Bits<DWORD_BITS>>,
    at_msix_table: Constant<Bits<DWORD_BITS>>,
    at_pending: Constant<Bits<DWORD_BITS>>,
    at_congestion: Constant<Bits<DWORD_BITS>>,
    congestion_dwords: Constant<Bits<DWORD_BITS>>,
    state_idle: Constant<Bits<4>>,
    state_write_low: Constant<Bits<4>>,
    state_write_high: Constant<Bits<4>>,
    state_write_response: Constant<Bits<4>>,
    state_read_low_address: Constant<Bits<4>>,
    state_read_low_capture: Constant<Bits<4>>,
    state_read_high_address: Constant<Bits<4>>,
    state_read_high_capture: Constant<Bits<4>>,
    state_read_response: Constant<Bits<4>>,
    admin_eqn_reset: Constant<Bits<32>>,
    /// The bits of an EQ doorbell the ABI defines (consumer index, arm).
    eq_doorbell_fields: Constant<Bits<32>>,
    all_vectors_masked: Constant<Bits<32>>,
    high_dword: Constant<Bits<DWORD_BITS>>,
    low_dword_mask: Constant<Bits<DWORD_BITS>>,
}

impl Default for BarRegisters {
    fn default() -> Self {
        let mapped: BTreeMap<Bits<DWORD_BITS>, Bit> = mapped_dwords()
            .into_iter()
            .map(|dword| (bits(dword), true))
            .collect();
        let constants = constant_dwords()
            .into_iter()
            .map(|(dword, value)| (bits(dword), bits(u64::from(value))))
            .collect();
        let admin_eqn = abi::CONTROL.register("admin_eqn").expect("admin_eqn");
        let masked = abi::MSIX
            .register("vector_control")
            .expect("vector_control");
        BarRegisters {
            clock: Default::default(),
            reset: Default::default(),
            mmio: Default::default(),
            enable: Default::default(),
            soft_reset: Default::default(),
            reset_busy: Default::default(),
            fatal: Default::default(),
            fatal_set: Default::default(),
            admin_eqn: Default::default(),
            asq_base: Default::default(),
            asq_log_size: Default::default(),
            asq_tail_valid: Default::default(),
            asq_tail: Default::default(),
            asq_head: Default::default(),
            acq_base: Default::default(),
            acq_log_size: Default::default(),
            acq_head_valid: Default::default(),
            acq_head: Default::default(),
            eq_doorbell_valid: Default::default(),
            eq_doorbell_eqn: Default::default(),
            eq_doorbell_value: Default::default(),
            counter_index: Default::default(),
            counter_value: Default::default(),
            msix_mask: Default::default(),
            msix_pending: Default::default(),
            vector_lookup: Default::default(),
            vector_lookup_index: Default::default(),
            vector_address: Default::default(),
            vector_data: Default::default(),
            np: Default::default(),
            rp: Default::default(),
            pfc: Default::default(),
            cnp_dscp: Default::default(),
            unmapped: Default::default(),
            congestion: Default::default(),
            state: Default::default(),
            dword: Default::default(),
            write_data: Default::default(),
            write_strobes: Default::default(),
            read_data: Default::default(),
            counter_high: Default::default(),
            read_first: Default::default(),
            control_enable: Default::default(),
            soft_reset_pulse: Default::default(),
            fatal_cause: Default::default(),
            scratch: Default::default(),
            admin_eqn_value: Default::default(),
            asq_base_low: Default::default(),
            asq_base_high: Default::default(),
            asq_log_size_value: Default::default(),
            acq_base_low: Default::default(),
            acq_base_high: Default::default(),
            acq_log_size_value: Default::default(),
            asq_tail_pulse: Default::default(),
            asq_tail_value: Default::default(),
            acq_head_pulse: Default::default(),
            acq_head_value: Default::default(),
            eq_doorbell_pulse: Default::default(),
            eq_doorbell_eqn_value: Default::default(),
            eq_doorbell_word: Default::default(),
            msix_mask_bits: Default::default(),
            unmapped_pulse: Default::default(),
            vector_address_low: Default::default(),
            vector_address_high: Default::default(),
            vector_message_data: Default::default(),
            constants: ROM::new(constants),
            mapped: ROM::new(mapped),
            high_half: Default::default(),
            half_data: Default::default(),
            half_written: Default::default(),
            dword_write: Default::default(),
            dword_read: Default::default(),
            read_value: Default::default(),
            eq_offset: Default::default(),
            in_eq_doorbells: Default::default(),
            counter_offset: Default::default(),
            in_counters: Default::default(),
            table_offset: Default::default(),
            in_msix_table: Default::default(),
            table_vector: Default::default(),
            table_column: Default::default(),
            table_wait: Default::default(),
            congestion_offset: Default::default(),
            in_congestion: Default::default(),
            at_control: dword_constant(&abi::CONTROL, "control"),
            at_status: dword_constant(&abi::CONTROL, "status"),
            at_fatal_cause: dword_constant(&abi::CONTROL, "fatal_cause"),
            at_scratch: dword_constant(&abi::CONTROL, "scratch"),
            at_admin_eqn: dword_constant(&abi::CONTROL, "admin_eqn"),
            at_asq_base: dword_constant(&abi::ADMIN, "asq_base"),
            at_asq_log_size: dword_constant(&abi::ADMIN, "asq_log_size"),
            at_asq_tail: dword_constant(&abi::ADMIN, "asq_tail"),
            at_asq_head: dword_constant(&abi::ADMIN, "asq_head"),
            at_acq_base: dword_constant(&abi::ADMIN, "acq_base"),
            at_acq_log_size: dword_constant(&abi::ADMIN, "acq_log_size"),
            at_acq_head: dword_constant(&abi::ADMIN, "acq_head"),
            at_eq_doorbells: dword_constant(&abi::EVENT_QUEUES, "eq_doorbell"),
            at_counters: Constant::new(bits(dword_of(&abi::COUNTERS_BLOCK, abi::COUNTERS[0].name))),
            counter_dwords: Constant::new(bits(2 * abi::COUNTERS.len() as u64)),
            at_msix_table: dword_constant(&abi::MSIX, "vector_address"),
            at_pending: dword_constant(&abi::MSIX, "pending"),
            at_congestion: Constant::new(bits(u64::from(abi::bar0_offset(&abi::CONGESTION) / 4))),
            congestion_dwords: Constant::new(bits(u64::from(abi::CONGESTION.size / 4))),
            state_idle: Constant::new(bits(IDLE)),
            state_write_low: Constant::new(bits(WRITE_LOW)),
            state_write_high: Constant::new(bits(WRITE_HIGH)),
            state_write_response: Constant::new(bits(WRITE_RESPONSE)),
            state_read_low_address: Constant::new(bits(READ_LOW_ADDRESS)),
            state_read_low_capture: Constant::new(bits(READ_LOW_CAPTURE)),
            state_read_high_address: Constant::new(bits(READ_HIGH_ADDRESS)),
            state_read_high_capture: Constant::new(bits(READ_HIGH_CAPTURE)),
            state_read_response: Constant::new(bits(READ_RESPONSE)),
            admin_eqn_reset: Constant::new(bits(admin_eqn.reset)),
            eq_doorbell_fields: Constant::new(bits(
                abi::EVENT_QUEUES
                    .register("eq_doorbell")
                    .expect("eq_doorbell")
                    .implemented(),
            )),
            all_vectors_masked: Constant::new(bits(if masked.reset & 1 == 1 {
                0xFFFF_FFFF
            } else {
                0
            })),
            high_dword: Constant::new(bits(1)),
            low_dword_mask: Constant::new(bits((1 << DWORD_BITS) - 2)),
        }
    }
}

impl Logic for BarRegisters {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            state,
            dword,
            write_data,
            write_strobes,
            read_data,
            counter_high,
            read_first,
            control_enable,
            soft_reset_pulse,
            fatal_cause,
            scratch,
            admin_eqn_value,
            asq_base_low,
            asq_base_high,
            asq_log_size_value,
            acq_base_low,
            acq_base_high,
            acq_log_size_value,
            asq_tail_pulse,
            asq_tail_value,
            acq_head_pulse,
            acq_head_value,
            eq_doorbell_pulse,
            eq_doorbell_eqn_value,
            eq_doorbell_word,
            msix_mask_bits,
            unmapped_pulse
        );
        clock!(
            self,
            clock,
            vector_address_low,
            vector_address_high,
            vector_message_data
        );

        // The dword of this cycle and where it falls.
        self.constants.address.next = self.dword.q.val();
        self.mapped.address.next = self.dword.q.val();
        self.high_half.next = self.dword.q.val().get_bit(0);
        self.half_data.next = self.write_data.q.val().get_bits::<32>(0);
        self.half_written.next = self.write_strobes.q.val().get_bits::<4>(0) == 0xF;
        if self.high_half.val() {
            self.half_data.next = self.write_data.q.val().get_bits::<32>(32);
            self.half_written.next = self.write_strobes.q.val().get_bits::<4>(4) == 0xF;
        }
        self.eq_offset.next = self.dword.q.val() - self.at_eq_doorbells.val();
        self.in_eq_doorbells.next = (self.dword.q.val() >= self.at_eq_doorbells.val())
            & (self.eq_offset.val() < bits::<DWORD_BITS>(8));
        self.counter_offset.next = self.dword.q.val() - self.at_counters.val();
        self.in_counters.next = (self.dword.q.val() >= self.at_counters.val())
            & (self.counter_offset.val() < self.counter_dwords.val());
        self.table_offset.next = self.dword.q.val() - self.at_msix_table.val();
        self.in_msix_table.next = (self.dword.q.val() >= self.at_msix_table.val())
            & (self.table_offset.val() < bits::<DWORD_BITS>(128));
        self.table_vector.next = self.table_offset.val().get_bits::<5>(2);
        self.table_column.next = self.table_offset.val().get_bits::<2>(0);
        // A lookup owns the table's read port this cycle.
        self.table_wait.next = self.vector_lookup.val() & self.in_msix_table.val();
        self.dword_write.next = ((self.state.q.val() == self.state_write_low.val())
            | (self.state.q.val() == self.state_write_high.val()))
            & self.half_written.val();
        self.dword_read.next = (self.state.q.val() == self.state_read_low_capture.val())
            | (self.state.q.val() == self.state_read_high_capture.val());

        // The congestion block's registers (its header dwords are the
        // constants').
        self.congestion.clock.next = self.clock.val();
        self.congestion.reset.next = self.reset.val() | self.soft_reset_pulse.q.val();
        self.congestion_offset.next = self.dword.q.val() - self.at_congestion.val();
        self.in_congestion.next = (self.dword.q.val() >= self.at_congestion.val())
            & (self.congestion_offset.val() < self.congestion_dwords.val())
            & (self.congestion_offset.val() >= bits::<DWORD_BITS>(4));
        self.congestion.read_dword.next = self.congestion_offset.val().get_bits::<6>(0);
        self.congestion.write_dword.next = self.congestion_offset.val().get_bits::<6>(0);
        self.congestion.write_data.next = self.half_data.val();
        self.congestion.write.next = self.dword_write.val() & self.in_congestion.val();
        NpParamsSource::link(&mut self.np, &mut self.congestion.np);
        RpParamsSource::link(&mut self.rp, &mut self.congestion.rp);
        PfcParamsSource::link(&mut self.pfc, &mut self.congestion.pfc);
        self.cnp_dscp.next = self.congestion.cnp_dscp.val();

        // Synchronous sources see the dword while it is being read.
        self.counter_index.next = self.counter_offset.val().get_bits::<6>(1);
        self.vector_address_low.read_address.next = self.table_vector.val();
        if self.vector_lookup.val() {
            self.vector_address_low.read_address.next = self.vector_lookup_index.val();
        }
        self.vector_address_high.read_address.next = self.vector_address_low.read_address.val();
        self.vector_message_data.read_address.next = self.vector_address_low.read_address.val();
        self.vector_address.next = bit_cast::<64, 32>(self.vector_address_low.read_data.val())
            | (bit_cast::<64, 32>(self.vector_address_high.read_data.val()) << 32);
        self.vector_data.next = self.vector_message_data.read_data.val();
        self.vector_address_low.write_address.next = self.table_vector.val();
        self.vector_address_high.write_address.next = self.table_vector.val();
        self.vector_message_data.write_address.next = self.table_vector.val();
        self.vector_address_low.write_data.next = self.half_data.val();
        self.vector_address_high.write_data.next = self.half_data.val();
        self.vector_message_data.write_data.next = self.half_data.val();
        self.vector_address_low.write_enable.next =
            self.dword_write.val() & self.in_msix_table.val() & (self.table_column.val() == 0);
        self.vector_address_high.write_enable.next =
            self.dword_write.val() & self.in_msix_table.val() & (self.table_column.val() == 1);
        self.vector_message_data.write_enable.next =
            self.dword_write.val() & self.in_msix_table.val() & (self.table_column.val() == 2);

        // What the dword reads.
        self.read_value.next = self.constants.data.val();
        if self.dword.q.val() == self.at_control.val() {
            self.read_value.next = bits::<32>(0);
            if self.control_enable.q.val() {
                self.read_value.next = bits::<32>(1);
            }
            if self.reset_busy.val() {
                self.read_value.next = self.read_value.val() | bits::<32>(2);
            }
        }
        if self.dword.q.val() == self.at_status.val() {
            self.read_value.next = bits::<32>(0);
            if self.control_enable.q.val() & !self.reset_busy.val() {
                self.read_value.next = bits::<32>(1);
            }
            if self.fatal.val() {
                self.read_value.next = self.read_value.val() | bits::<32>(2);
            }
        }
        if self.dword.q.val() == self.at_fatal_cause.val() {
            self.read_value.next = self.fatal_cause.q.val();
        }
        if self.dword.q.val() == self.at_scratch.val() {
            self.read_value.next = self.scratch.q.val();
        }
        if self.dword.q.val() == self.at_admin_eqn.val() {
            self.read_value.next = self.admin_eqn_value.q.val();
        }
        if self.dword.q.val() == self.at_asq_base.val() {
            self.read_value.next = self.asq_base_low.q.val();
        }
        if self.dword.q.val() == self.at_asq_base.val() + self.high_dword.val() {
            self.read_value.next = self.asq_base_high.q.val();
        }
        if self.dword.q.val() == self.at_asq_log_size.val() {
            self.read_value.next = bit_cast::<32, 4>(self.asq_log_size_value.q.val());
        }
        if self.dword.q.val() == self.at_asq_head.val() {
            self.read_value.next = bit_cast::<32, 16>(self.asq_head.val());
        }
        if self.dword.q.val() == self.at_acq_base.val() {
            self.read_value.next = self.acq_base_low.q.val();
        }
        if self.dword.q.val() == self.at_acq_base.val() + self.high_dword.val() {
            self.read_value.next = self.acq_base_high.q.val();
        }
        if self.dword.q.val() == self.at_acq_log_size.val() {
            self.read_value.next = bit_cast::<32, 4>(self.acq_log_size_value.q.val());
        }
        if self.in_counters.val() {
            self.read_value.next = self.counter_value.val().get_bits::<32>(0);
            if self.high_half.val() {
                self.read_value.next = self.counter_high.q.val();
            }
        }
        if self.in_msix_table.val() {
            self.read_value.next = self.vector_address_low.read_data.val();
            if self.table_column.val() == 1 {
                self.read_value.next = self.vector_address_high.read_data.val();
            }
            if self.table_column.val() == 2 {
                self.read_value.next = self.vector_message_data.read_data.val();
            }
            if self.table_column.val() == 3 {
                self.read_value.next = bits::<32>(0);
                if self
                    .msix_mask_bits
                    .q
                    .val()
                    .get_bit(self.table_vector.val().index())
                {
                    self.read_value.next = bits::<32>(1);
                }
            }
        }
        if self.dword.q.val() == self.at_pending.val() {
            self.read_value.next = self.msix_pending.val();
        }
        if self.in_congestion.val() {
            self.read_value.next = self.congestion.read_value.val();
        }

        // The AXI4-Lite handshakes: one access at a time, writes first.
        self.mmio.awready.next = (self.state.q.val() == self.state_idle.val())
            & self.mmio.awvalid.val()
            & self.mmio.wvalid.val();
        self.mmio.wready.next = self.mmio.awready.val();
        self.mmio.arready.next = (self.state.q.val() == self.state_idle.val())
            & self.mmio.arvalid.val()
            & !(self.mmio.awvalid.val() & self.mmio.wvalid.val());
        self.mmio.bresp.next = bits::<2>(0);
        self.mmio.rresp.next = bits::<2>(0);
        self.mmio.bvalid.next = self.state.q.val() == self.state_write_response.val();
        self.mmio.rvalid.next = self.state.q.val() == self.state_read_response.val();
        self.mmio.rdata.next = self.read_data.q.val();

        // The sequence of dword operations.
        if self.mmio.awready.val() {
            self.dword.d.next =
                self.mmio.awaddr.val().get_bits::<DWORD_BITS>(2) & self.low_dword_mask.val();
            self.write_data.d.next = self.mmio.wdata.val();
            self.write_strobes.d.next = self.mmio.wstrb.val();
            self.state.d.next = self.state_write_low.val();
        }
        if self.mmio.arready.val() {
            self.dword.d.next = self.mmio.araddr.val().get_bits::<DWORD_BITS>(2);
            self.read_data.d.next = bits::<64>(0);
            self.read_first.d.next = true;
            self.state.d.next = self.state_read_low_address.val();
            if self.mmio.araddr.val().get_bit(2) {
                self.state.d.next = self.state_read_high_address.val();
            }
        }
        if self.state.q.val() == self.state_write_low.val() {
            self.dword.d.next = self.dword.q.val() | self.high_dword.val();
            self.state.d.next = self.state_write_high.val();
        }
        if self.state.q.val() == self.state_write_high.val() {
            self.state.d.next = self.state_write_response.val();
        }
        if (self.state.q.val() == self.state_write_response.val()) & self.mmio.bready.val() {
            self.state.d.next = self.state_idle.val();
        }
        if (self.state.q.val() == self.state_read_low_address.val()) & !self.table_wait.val() {
            self.state.d.next = self.state_read_low_capture.val();
        }
        if self.state.q.val() == self.state_read_low_capture.val() {
            self.read_data.d.next = bit_cast::<64, 32>(self.read_value.val());
            self.dword.d.next = self.dword.q.val() | self.high_dword.val();
            self.state.d.next = self.state_read_high_address.val();
        }
        if (self.state.q.val() == self.state_read_high_address.val()) & !self.table_wait.val() {
            self.state.d.next = self.state_read_high_capture.val();
        }
        if self.state.q.val() == self.state_read_high_capture.val() {
            self.read_data.d.next =
                self.read_data.q.val() | (bit_cast::<64, 32>(self.read_value.val()) << 32);
            self.state.d.next = self.state_read_response.val();
        }
        if (self.state.q.val() == self.state_read_response.val()) & self.mmio.rready.val() {
            self.state.d.next = self.state_idle.val();
        }
        if self.dword_read.val() {
            self.read_first.d.next = false;
        }
        if self.dword_read.val() & self.in_counters.val() & !self.high_half.val() {
            self.counter_high.d.next = self.counter_value.val().get_bits::<32>(32);
        }

        // Writes.
        self.soft_reset_pulse.d.next = false;
        self.asq_tail_pulse.d.next = false;
        self.acq_head_pulse.d.next = false;
        self.eq_doorbell_pulse.d.next = false;
        self.unmapped_pulse.d.next = (self.dword_write.val()
            | (self.dword_read.val() & self.read_first.q.val()))
            & !self.mapped.data.val();
        self.fatal_cause.d.next = self.fatal_cause.q.val() | self.fatal_set.val();
        if self.dword_write.val() {
            if self.dword.q.val() == self.at_control.val() {
                self.control_enable.d.next = self.half_data.val().get_bit(0);
                self.soft_reset_pulse.d.next = self.half_data.val().get_bit(1);
            }
            if self.dword.q.val() == self.at_fatal_cause.val() {
                self.fatal_cause.d.next =
                    (self.fatal_cause.q.val() & !self.half_data.val()) | self.fatal_set.val();
            }
            if self.dword.q.val() == self.at_scratch.val() {
                self.scratch.d.next = self.half_data.val();
            }
            if self.dword.q.val() == self.at_admin_eqn.val() {
                self.admin_eqn_value.d.next = self.half_data.val();
            }
            if self.dword.q.val() == self.at_asq_base.val() {
                self.asq_base_low.d.next = self.half_data.val();
            }
            if self.dword.q.val() == self.at_asq_base.val() + self.high_dword.val() {
                self.asq_base_high.d.next = self.half_data.val();
            }
            if self.dword.q.val() == self.at_asq_log_size.val() {
                self.asq_log_size_value.d.next = self.half_data.val().get_bits::<4>(0);
            }
            if self.dword.q.val() == self.at_asq_tail.val() {
                self.asq_tail_pulse.d.next = true;
                self.asq_tail_value.d.next = self.half_data.val().get_bits::<16>(0);
            }
            if self.dword.q.val() == self.at_acq_base.val() {
                self.acq_base_low.d.next = self.half_data.val();
            }
            if self.dword.q.val() == self.at_acq_base.val() + self.high_dword.val() {
                self.acq_base_high.d.next = self.half_data.val();
            }
            if self.dword.q.val() == self.at_acq_log_size.val() {
                self.acq_log_size_value.d.next = self.half_data.val().get_bits::<4>(0);
            }
            if self.dword.q.val() == self.at_acq_head.val() {
                self.acq_head_pulse.d.next = true;
                self.acq_head_value.d.next = self.half_data.val().get_bits::<16>(0);
            }
            if self.in_eq_doorbells.val() {
                self.eq_doorbell_pulse.d.next = true;
                self.eq_doorbell_eqn_value.d.next = self.eq_offset.val().get_bits::<3>(0);
                self.eq_doorbell_word.d.next = self.half_data.val() & self.eq_doorbell_fields.val();
            }
            if self.in_msix_table.val() & (self.table_column.val() == 3) {
                self.msix_mask_bits.d.next = self.msix_mask_bits.q.val().replace_bit(
                    self.table_vector.val().index(),
                    self.half_data.val().get_bit(0),
                );
            }
        }

        self.enable.next = self.control_enable.q.val();
        self.soft_reset.next = self.soft_reset_pulse.q.val();
        self.admin_eqn.next = self.admin_eqn_value.q.val();
        self.asq_base.next = bit_cast::<64, 32>(self.asq_base_low.q.val())
            | (bit_cast::<64, 32>(self.asq_base_high.q.val()) << 32);
        self.asq_log_size.next = self.asq_log_size_value.q.val();
        self.asq_tail_valid.next = self.asq_tail_pulse.q.val();
        self.asq_tail.next = self.asq_tail_value.q.val();
        self.acq_base.next = bit_cast::<64, 32>(self.acq_base_low.q.val())
            | (bit_cast::<64, 32>(self.acq_base_high.q.val()) << 32);
        self.acq_log_size.next = self.acq_log_size_value.q.val();
        self.acq_head_valid.next = self.acq_head_pulse.q.val();
        self.acq_head.next = self.acq_head_value.q.val();
        self.eq_doorbell_valid.next = self.eq_doorbell_pulse.q.val();
        self.eq_doorbell_eqn.next = self.eq_doorbell_eqn_value.q.val();
        self.eq_doorbell_value.next = self.eq_doorbell_word.q.val();
        self.msix_mask.next = self.msix_mask_bits.q.val();
        self.unmapped.next = self.unmapped_pulse.q.val();

        // A soft reset returns the configuration to its reset values at the
        // edge that takes it; the access that wrote it still completes.
        if self.reset.val() | self.soft_reset_pulse.q.val() {
            self.control_enable.d.next = false;
            self.fatal_cause.d.next = bits::<32>(0);
            self.scratch.d.next = bits::<32>(0);
            self.admin_eqn_value.d.next = self.admin_eqn_reset.val();
            self.asq_base_low.d.next = bits::<32>(0);
            self.asq_base_high.d.next = bits::<32>(0);
            self.asq_log_size_value.d.next = bits::<4>(0);
            self.acq_base_low.d.next = bits::<32>(0);
            self.acq_base_high.d.next = bits::<32>(0);
            self.acq_log_size_value.d.next = bits::<4>(0);
            self.msix_mask_bits.d.next = self.all_vectors_masked.val();
        }
        if self.reset.val() {
            self.state.d.next = self.state_idle.val();
            self.soft_reset_pulse.d.next = false;
            self.asq_tail_pulse.d.next = false;
            self.acq_head_pulse.d.next = false;
            self.eq_doorbell_pulse.d.next = false;
            self.unmapped_pulse.d.next = false;
            self.counter_high.d.next = bits::<32>(0);
        }
    }
}
