//! BAR0 of a Verilated block that has the host interface's AXI4-Lite
//! port (`mmio_*`, `nic_top`), as the driver's [`Mmio`]: so the harness
//! programs the NIC the way software does, through `rocenic-driver`'s
//! `Bar0` (discovery walk, ABI version, scratch check, named registers).
//!
//! Each access runs the clock until the block has answered it: a write
//! offers address and data together and waits for `bresp`; a read waits
//! for `rdata`. A 32-bit access takes the half of the 64-bit bus its
//! address names (bit 2), with that half's four strobes. An access the
//! block does not answer within [`ACCESS_CYCLES`] is abandoned, reads 0
//! and is kept as [`VerilatedBar::stuck`] (the `Mmio` trait has no
//! error path; the caller asks after its sequence of accesses).

use super::harness::NS_PER_CYCLE;
use super::RtlError;
use rocenic_driver::abi::registers::PORT_RATE_MBPS;
use rocenic_driver::bar0::{Bar0, Mmio};
use rocenic_model::dcqcn_integer::RpParams;
use rocenic_model::host_interface::congestion;
use rocenic_model::nic::NicConfig;
use verilator_sys::{Block, Input, Output, Sim};

/// Cycles an access may take before it counts as stuck (the BAR answers
/// in at most five).
pub const ACCESS_CYCLES: u64 = 64;

struct Ports<B: Block> {
    awaddr: Input<B>,
    awvalid: Input<B>,
    awready: Output<B>,
    wdata: Input<B>,
    wstrb: Input<B>,
    wvalid: Input<B>,
    bvalid: Output<B>,
    bready: Input<B>,
    araddr: Input<B>,
    arvalid: Input<B>,
    arready: Output<B>,
    rdata: Output<B>,
    rvalid: Output<B>,
    rready: Input<B>,
}

/// BAR0 of `sim`'s block (see the module doc).
pub struct VerilatedBar<'a, B: Block> {
    sim: &'a mut Sim<B>,
    p: Ports<B>,
    stuck: Option<RtlError>,
}

impl<'a, B: Block> VerilatedBar<'a, B> {
    /// The `mmio_*` port of `sim`'s block, idle.
    pub fn new(sim: &'a mut Sim<B>) -> Result<Self, RtlError> {
        let p = Ports {
            awaddr: B::input("mmio_awaddr")?,
            awvalid: B::input("mmio_awvalid")?,
            awready: B::output("mmio_awready")?,
            wdata: B::input("mmio_wdata")?,
            wstrb: B::input("mmio_wstrb")?,
            wvalid: B::input("mmio_wvalid")?,
            bvalid: B::output("mmio_bvalid")?,
            bready: B::input("mmio_bready")?,
            araddr: B::input("mmio_araddr")?,
            arvalid: B::input("mmio_arvalid")?,
            arready: B::output("mmio_arready")?,
            rdata: B::output("mmio_rdata")?,
            rvalid: B::output("mmio_rvalid")?,
            rready: B::input("mmio_rready")?,
        };
        for idle in [p.awvalid, p.wvalid, p.arvalid, p.bready, p.rready] {
            sim.set_bit(idle, false);
        }
        Ok(VerilatedBar {
            sim,
            p,
            stuck: None,
        })
    }

    /// The first access the block did not answer, if any.
    pub fn stuck(&mut self) -> Result<(), RtlError> {
        self.stuck.take().map_or(Ok(()), Err)
    }

    /// Runs the clock `cycles` cycles with the port idle.
    pub fn idle(&mut self, cycles: u64) {
        self.sim.ticks(cycles);
    }

    /// Ticks until `port` is high in a cycle, that cycle's edge included,
    /// and returns `sample`'s value in that cycle; `None` (kept as
    /// [`VerilatedBar::stuck`]) after [`ACCESS_CYCLES`] without it.
    fn until(&mut self, port: Output<B>, sample: Output<B>, what: &str) -> Option<u64> {
        for _ in 0..ACCESS_CYCLES {
            self.sim.eval();
            let value = self.sim.get_bit(port).then(|| self.sim.get_u64(sample));
            self.sim.tick();
            if value.is_some() {
                return value;
            }
        }
        self.stuck.get_or_insert(RtlError::Stuck {
            cycle: self.sim.cycle(),
            what: what.into(),
        });
        None
    }
}

/// The half of the 64-bit bus that byte offset `offset` names.
fn half(offset: u32) -> u32 {
    32 * ((offset >> 2) & 1)
}

impl<B: Block> Mmio for VerilatedBar<'_, B> {
    fn write32(&mut self, offset: u32, value: u32) {
        let p = &self.p;
        self.sim.set_u64(p.awaddr, offset.into());
        self.sim.set_u64(p.wdata, u64::from(value) << half(offset));
        self.sim.set_u64(p.wstrb, 0x0F << (half(offset) / 8));
        self.sim.set_bit(p.awvalid, true);
        self.sim.set_bit(p.wvalid, true);
        let (awready, bvalid, bready) = (p.awready, p.bvalid, p.bready);
        let taken = self.until(awready, awready, "BAR0 write address");
        let (awvalid, wvalid) = (self.p.awvalid, self.p.wvalid);
        self.sim.set_bit(awvalid, false);
        self.sim.set_bit(wvalid, false);
        if taken.is_some() {
            self.sim.set_bit(bready, true);
            self.until(bvalid, bvalid, "BAR0 write response");
            self.sim.set_bit(bready, false);
        }
    }

    fn read32(&mut self, offset: u32) -> u32 {
        let (araddr, arvalid, arready) = (self.p.araddr, self.p.arvalid, self.p.arready);
        let (rdata, rvalid, rready) = (self.p.rdata, self.p.rvalid, self.p.rready);
        self.sim.set_u64(araddr, offset.into());
        self.sim.set_bit(arvalid, true);
        let taken = self.until(arready, arready, "BAR0 read address");
        self.sim.set_bit(arvalid, false);
        if taken.is_none() {
            return 0;
        }
        self.sim.set_bit(rready, true);
        let word = self.until(rvalid, rdata, "BAR0 read data");
        self.sim.set_bit(rready, false);
        word.map_or(0, |w| (w >> half(offset)) as u32)
    }
}

/// Sets the NIC's congestion control to `config`'s through BAR0, as
/// software does (`Bar0::set_congestion`, every register of the block),
/// the reaction point on when `reacts`. Returns the reaction point's
/// parameters as the BAR converts those registers, for a checker of the
/// core's rates. `Unsupported` when the registers cannot hold `config`'s
/// values exactly (`congestion::registers_of`).
pub fn program_congestion<B: Block>(
    sim: &mut Sim<B>,
    config: &NicConfig,
    reacts: bool,
) -> Result<RpParams, RtlError> {
    let mut wanted = config.clone();
    wanted.dcqcn.reaction_point = reacts;
    let (registers, applied) = congestion::registers_of(&wanted)
        .map_err(|why| RtlError::Unsupported(format!("BAR0's congestion block: {why}")))?;
    let mut bar = Bar0::open(VerilatedBar::new(sim)?)
        .map_err(|e| RtlError::Mismatch(format!("BAR0: {e}")))?;
    for (name, value) in &registers {
        bar.set_congestion(name, *value)
            .map_err(|e| RtlError::Mismatch(format!("BAR0's congestion block: {e}")))?;
    }
    bar.mmio().stuck()?;
    RpParams::for_nic(
        &applied.dcqcn,
        f64::from(PORT_RATE_MBPS) * 1e6,
        NS_PER_CYCLE,
    )
    .map_err(RtlError::Mismatch)
}
