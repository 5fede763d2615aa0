//! The end-of-run check of a transmit path that reads its payload by DMA
//! (`requester_datapath`, `response_transmitter`): once its input has
//! stopped, nothing more may come out of it.

use rocenic_rtl::host_dma::HostDma;
use rocenic_rtl::stream::AxisOutPorts;
use verilator_sys::{Block, Sim};

/// Cycles the drain is watched for: longer than any read latency the
/// tests configure plus a packet's readout.
pub const DRAIN_CYCLES: usize = 200;

/// With the frame stream always ready and the caller's input valid already
/// low: for [`DRAIN_CYCLES`] cycles no frame beat and no DMA read request
/// (`dma_req_valid`); then no DMA read is left unanswered and the TX
/// builder counted no payload / `tlast` mismatch (`payload_last_errors`).
pub fn assert_drained<B: Block>(sim: &mut Sim<B>, out: &AxisOutPorts<B>, host: &mut HostDma) {
    let dma_req_valid = B::output("dma_req_valid").expect("a DMA read port");
    let payload_last_errors = B::output("payload_last_errors").expect("a TX builder counter");
    out.set_ready(sim.dut_mut(), true);
    for _ in 0..DRAIN_CYCLES {
        sim.eval();
        assert!(!out.valid(sim.dut()), "a frame nobody asked for");
        assert!(!sim.get_bit(dma_req_valid), "a DMA read after the end");
        host.clock(false);
        sim.tick();
    }
    assert_eq!(host.reads_in_flight(), 0, "DMA reads left unanswered");
    assert_eq!(
        sim.get_u64(payload_last_errors),
        0,
        "payload / tlast mismatches"
    );
}
