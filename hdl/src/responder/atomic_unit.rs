//! `AtomicUnit`: executes the responder's atomics (CMP_SWAP, FETCH_ADD) on
//! host memory: a DMA read of the 8 bytes, the arithmetic, a DMA write of
//! the 8 bytes back, and the original value out for the atomic ACK (and
//! for the QP's resources, [`crate::responder::rd_atomic_resources`]). The RTL of
//! `rocenic_model::responder::atomic_result`, which the model's
//! `execute_atomic` runs; host memory is little-endian, as the model's.
//!
//! # Ports
//!
//! - `clock`; `reset` (synchronous, high; not while a DMA read is in
//!   flight, whose data would then be taken for the next atomic): back to
//!   idle, the atomic in progress dropped.
//! - Atomic in (valid/ready, sampled in the accepting cycle): `in_tag`
//!   (the caller's, echoed), `in_addr` (host physical address, 8-byte
//!   aligned: the MR check and translation are done, and an aligned
//!   8-byte word never crosses a page), `in_opcode` (BTH opcode:
//!   `0x13` CMP_SWAP, anything else adds, as the model), `in_compare`,
//!   `in_swap_add` (numbers, already decoded from the AtomicETH).
//! - `dma` ([`DmaReadPort`]): the read request (registered) with
//!   `dma.req_tag` always [`DMA_TAG`] (the core's DMA arbiter maps it into
//!   its tag space and routes the read data back by tag), `dma.req_addr`,
//!   `dma.req_len` (8); the read data `dma.rd_tag`, `dma.rd_data` (byte 0
//!   of the request in lane 0 of the beat), `dma.rd_last`; `dma.rd_ready`
//!   is high while the read is awaited and the beat offered has
//!   [`DMA_TAG`] (a beat of another tag waits: it is not this block's).
//! - `dma_wr` ([`DmaWritePort`], posted): one beat, `dma_wr.first` and
//!   `dma_wr.last` high, `dma_wr.addr` the 64-byte-aligned address of
//!   lane 0, the new value in lanes `addr mod 64 ..+ 8` (and repeated in
//!   the others, which `dma_wr.keep` leaves out), `dma_wr.keep` marking
//!   them, `dma_wr.req_addr` = `in_addr`, `dma_wr.req_len` = 8.
//! - Result (valid/ready): `out_tag`, `out_orig` (the value read), after
//!   the write was taken.
//!
//! # Atomicity, latency and throughput
//!
//! One atomic in flight: the next read is requested only after the write
//! of the previous atomic was taken, so two atomics never interleave read
//! and write, whatever their addresses (a posted write is ordered before a
//! later read by the host link: PCIe never lets a read pass a posted
//! write). An atomic takes 1 cycle to be taken, 1+ for the read request,
//! the DMA read latency `L` (request accepted to data offered), 1 to take
//! the beat, 1+ for the write and 1+ for the result: `L + 5` cycles
//! without backpressure, so `250 MHz / (L + 5)` atomics per second (1.2 M/s
//! at an 800 ns read round trip, `L` = 200). That is the rate of
//! dependent atomics anyway (each must see the previous one's write).
//! No memory: registers only.

use crate::dma::dma_port::{DmaReadPort, DmaWritePort};
use rust_hdl::prelude::*;

/// The tag of every DMA read this block makes.
pub const DMA_TAG: u64 = 0;

/// BTH opcode of CMP_SWAP (every other opcode is FETCH_ADD).
const OPCODE_COMPARE_SWAP: u64 = 0x13;

/// States of the sequencer.
mod state {
    pub const IDLE: u64 = 0;
    pub const READ_REQUEST: u64 = 1;
    pub const READ_DATA: u64 = 2;
    pub const WRITE: u64 = 3;
    pub const RESULT: u64 = 4;
}

/// The atomic unit (see the module doc).
#[derive(LogicBlock)]
pub struct AtomicUnit {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,

    pub in_valid: Signal<In, Bit>,
    pub in_ready: Signal<Out, Bit>,
    pub in_tag: Signal<In, Bits<16>>,
    pub in_addr: Signal<In, Bits<64>>,
    pub in_opcode: Signal<In, Bits<8>>,
    pub in_compare: Signal<In, Bits<64>>,
    pub in_swap_add: Signal<In, Bits<64>>,

    pub dma: DmaReadPort,

    pub dma_wr: DmaWritePort,

    pub out_valid: Signal<Out, Bit>,
    pub out_ready: Signal<In, Bit>,
    pub out_tag: Signal<Out, Bits<16>>,
    pub out_orig: Signal<Out, Bits<64>>,

    state: DFF<Bits<3>>,
    tag: DFF<Bits<16>>,
    addr: DFF<Bits<64>>,
    cmp_swap: DFF<Bit>,
    compare: DFF<Bits<64>>,
    swap_add: DFF<Bits<64>>,
    orig: DFF<Bits<64>>,
    new_value: DFF<Bits<64>>,

    st_idle: Constant<Bits<3>>,
    st_read_request: Constant<Bits<3>>,
    st_read_data: Constant<Bits<3>>,
    st_write: Constant<Bits<3>>,
    st_result: Constant<Bits<3>>,
    opcode_compare_swap: Constant<Bits<8>>,
    dma_tag: Constant<Bits<8>>,

    /// The value read (lanes 0..8 of the beat, little-endian).
    read_value: Signal<Local, Bits<64>>,
}

impl Default for AtomicUnit {
    fn default() -> Self {
        let c3 = |v: u64| Constant::new(bits::<3>(v));
        AtomicUnit {
            clock: Default::default(),
            reset: Default::default(),
            in_valid: Default::default(),
            in_ready: Default::default(),
            in_tag: Default::default(),
            in_addr: Default::default(),
            in_opcode: Default::default(),
            in_compare: Default::default(),
            in_swap_add: Default::default(),
            dma: Default::default(),
            dma_wr: Default::default(),
            out_valid: Default::default(),
            out_ready: Default::default(),
            out_tag: Default::default(),
            out_orig: Default::default(),
            state: Default::default(),
            tag: Default::default(),
            addr: Default::default(),
            cmp_swap: Default::default(),
            compare: Default::default(),
            swap_add: Default::default(),
            orig: Default::default(),
            new_value: Default::default(),
            st_idle: c3(state::IDLE),
            st_read_request: c3(state::READ_REQUEST),
            st_read_data: c3(state::READ_DATA),
            st_write: c3(state::WRITE),
            st_result: c3(state::RESULT),
            opcode_compare_swap: Constant::new(bits::<8>(OPCODE_COMPARE_SWAP)),
            dma_tag: Constant::new(bits::<8>(DMA_TAG)),
            read_value: Default::default(),
        }
    }
}

impl Logic for AtomicUnit {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, state, tag, addr, cmp_swap, compare, swap_add, orig, new_value);
        self.read_value.next = self.dma.rd_data.val().get_bits::<64>(0);

        self.in_ready.next = self.state.q.val() == self.st_idle.val();
        self.dma.req_valid.next = self.state.q.val() == self.st_read_request.val();
        self.dma.req_tag.next = self.dma_tag.val();
        self.dma.req_addr.next = self.addr.q.val();
        self.dma.req_len.next = 8.into();
        self.dma.rd_ready.next = (self.state.q.val() == self.st_read_data.val())
            & (self.dma.rd_tag.val() == self.dma_tag.val());
        self.dma_wr.valid.next = self.state.q.val() == self.st_write.val();
        self.dma_wr.addr.next = self.addr.q.val() & !bits::<64>(63);
        // In every lane: `dma_wr.keep` picks the word's, and no shifter.
        self.dma_wr.data.next = bit_cast::<512, 64>(self.new_value.q.val())
            | (bit_cast::<512, 64>(self.new_value.q.val()) << 64)
            | (bit_cast::<512, 64>(self.new_value.q.val()) << 128)
            | (bit_cast::<512, 64>(self.new_value.q.val()) << 192)
            | (bit_cast::<512, 64>(self.new_value.q.val()) << 256)
            | (bit_cast::<512, 64>(self.new_value.q.val()) << 320)
            | (bit_cast::<512, 64>(self.new_value.q.val()) << 384)
            | (bit_cast::<512, 64>(self.new_value.q.val()) << 448);
        self.dma_wr.keep.next = bits::<64>(0xFF) << self.addr.q.val().get_bits::<6>(0);
        self.dma_wr.first.next = true;
        self.dma_wr.last.next = true;
        self.dma_wr.req_addr.next = self.addr.q.val();
        self.dma_wr.req_len.next = 8.into();
        self.out_valid.next = self.state.q.val() == self.st_result.val();
        self.out_tag.next = self.tag.q.val();
        self.out_orig.next = self.orig.q.val();

        if self.state.q.val() == self.st_idle.val() {
            if self.in_valid.val() {
                self.tag.d.next = self.in_tag.val();
                self.addr.d.next = self.in_addr.val();
                self.cmp_swap.d.next = self.in_opcode.val() == self.opcode_compare_swap.val();
                self.compare.d.next = self.in_compare.val();
                self.swap_add.d.next = self.in_swap_add.val();
                self.state.d.next = self.st_read_request.val();
            }
        } else if self.state.q.val() == self.st_read_request.val() {
            if self.dma.req_ready.val() {
                self.state.d.next = self.st_read_data.val();
            }
        } else if self.state.q.val() == self.st_read_data.val() {
            if self.dma.rd_valid.val()
                & self.dma.rd_last.val()
                & (self.dma.rd_tag.val() == self.dma_tag.val())
            {
                self.orig.d.next = self.read_value.val();
                if self.cmp_swap.q.val() {
                    if self.read_value.val() == self.compare.q.val() {
                        self.new_value.d.next = self.swap_add.q.val();
                    } else {
                        self.new_value.d.next = self.read_value.val();
                    }
                } else {
                    self.new_value.d.next = self.read_value.val() + self.swap_add.q.val();
                }
                self.state.d.next = self.st_write.val();
            }
        } else if self.state.q.val() == self.st_write.val() {
            if self.dma_wr.ready.val() {
                self.state.d.next = self.st_result.val();
            }
        } else if self.state.q.val() == self.st_result.val() {
            if self.out_ready.val() {
                self.state.d.next = self.st_idle.val();
            }
        } else {
            self.state.d.next = self.st_idle.val();
        }

        if self.reset.val() {
            self.state.d.next = self.st_idle.val();
        }
    }
}
