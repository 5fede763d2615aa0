//! An AXI4-Lite initiator for benches whose block has BAR0's
//! `AxiLiteTarget`: one transfer at a time, address and data together (as
//! the target requires), every response checked OKAY, the response ready
//! chosen by the bench each cycle so it can pause it at random.

use rocenic_hdl::host::axi_lite::AxiLiteTarget;
use rocenic_hdl::host::bar_registers::ADDRESS_BITS;
use rust_hdl::prelude::*;

pub trait AxiLiteInitiator {
    /// The target port of the block under test.
    fn mmio(&mut self) -> &mut AxiLiteTarget<ADDRESS_BITS>;
    /// Settles the combinational outputs of the current cycle.
    fn settle(&mut self);
    /// One clock edge, with whatever else the bench does each cycle.
    fn tick(&mut self);
    /// Whether `bready` / `rready` is high this cycle.
    fn response_ready(&mut self) -> bool {
        true
    }
    /// Before each transfer (idle cycles, for a bench that wants them).
    fn before_transfer(&mut self) {}

    /// One write of the 8-byte word at `addr`; returns when its response
    /// has been taken.
    fn axi_write(&mut self, addr: u32, data: u64, strobes: u8) {
        self.before_transfer();
        let m = self.mmio();
        m.awaddr.next = bits(u64::from(addr));
        m.wdata.next = bits(data);
        m.wstrb.next = bits(u64::from(strobes));
        m.awvalid.next = true;
        m.wvalid.next = true;
        loop {
            self.settle();
            let taken = self.mmio().awready.val();
            assert_eq!(taken, self.mmio().wready.val(), "address and data together");
            self.tick();
            if taken {
                break;
            }
        }
        self.mmio().awvalid.next = false;
        self.mmio().wvalid.next = false;
        loop {
            let ready = self.response_ready();
            self.mmio().bready.next = ready;
            self.settle();
            let done = ready && self.mmio().bvalid.val();
            if done {
                assert_eq!(self.mmio().bresp.val().to_u64(), 0, "OKAY");
            }
            self.tick();
            if done {
                break;
            }
        }
        self.mmio().bready.next = false;
    }

    /// One read of the 8-byte word holding `addr` (its high half only,
    /// when `addr` has bit 2 set).
    fn axi_read(&mut self, addr: u32) -> u64 {
        self.before_transfer();
        self.mmio().araddr.next = bits(u64::from(addr));
        self.mmio().arvalid.next = true;
        loop {
            self.settle();
            let taken = self.mmio().arready.val();
            self.tick();
            if taken {
                break;
            }
        }
        self.mmio().arvalid.next = false;
        loop {
            let ready = self.response_ready();
            self.mmio().rready.next = ready;
            self.settle();
            let data = self.mmio().rdata.val().to_u64();
            let done = ready && self.mmio().rvalid.val();
            if done {
                assert_eq!(self.mmio().rresp.val().to_u64(), 0, "OKAY");
            }
            self.tick();
            if done {
                self.mmio().rready.next = false;
                return data;
            }
        }
    }

    /// A 32-bit write, in the lane its address names.
    fn axi_write32(&mut self, addr: u32, value: u32) {
        let lane = (addr & 4) * 8;
        self.axi_write(addr & !7, u64::from(value) << lane, 0xF << (addr & 4));
    }

    /// A 32-bit read.
    fn axi_read32(&mut self, addr: u32) -> u32 {
        (self.axi_read(addr) >> ((addr & 4) * 8)) as u32
    }
}
