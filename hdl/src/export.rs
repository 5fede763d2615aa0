//! The list of RTL blocks exported to Verilog for simulation under Verilator.
//!
//! `verilator-sys` calls [`blocks`] from its build script, Verilates each
//! entry and generates one Rust type per block, so adding a block to the
//! list is all it takes to get a cycle-accurate, Verilator-backed model of it
//! for the RTL-versus-reference-model tests.
//!
//! Every exported block must have a `clock: Signal<In, Clock>` port (the
//! bridge's `Sim` drives it) and its Verilog top module is rust-hdl's `top`.

use crate::atomic_unit::AtomicUnit;
use crate::completer_datapath::CompleterDatapathDefault;
use crate::dma_read_arbiter::DmaReadArbiter;
use crate::dma_write_arbiter::DmaWriteArbiter;
use crate::dma_write_mover::DmaWriteMover;
use crate::frame_arbiter::FrameArbiter;
use crate::icrc_checker::IcrcChecker;
use crate::icrc_generator::IcrcGenerator;
use crate::mr_translate::MrTranslateDefault;
use crate::nic_core::NicCore;
use crate::qp_context::{QpContext, DEFAULT_QPN_BITS};
use crate::qp_timers::QpTimers;
use crate::rd_atomic_resources::RdAtomicResourcesDefault;
use crate::ready_set::ReadySetDefault;
use crate::receive_queue::ReceiveQueueDefault;
use crate::register_slice::AxisRegisterSlice;
use crate::request_checker::RequestChecker;
use crate::request_segmenter::RequestSegmenter;
use crate::requester_datapath::RequesterDatapath;
use crate::requester_events::RequesterEventsDefault;
use crate::requester_path::RequesterPathDefault;
use crate::responder_datapath::ResponderDatapath;
use crate::responder_path::ResponderPath;
use crate::response_checker::ResponseChecker;
use crate::response_placement::ResponsePlacement;
use crate::response_queue::ResponseQueue;
use crate::response_transmitter::ResponseTransmitter;
use crate::response_write_gate::ResponseWriteGate;
use crate::rx_parser::RxParser;
use crate::send_queue_tracker::SendQueueTrackerDefault;
use crate::stream::{DATA_BITS, KEEP_BITS};
use crate::tx_builder::TxBuilder;
use crate::wqe_body_ram::WqeBodyRam;
use rust_hdl::prelude::*;

/// One block ready for Verilator: its name and its full Verilog hierarchy.
#[derive(Clone, Debug)]
pub struct ExportedBlock {
    /// Lower snake case; becomes the generated Rust type name in CamelCase
    /// (`bridge_check` → `BridgeCheck`), so it must be unique in the list.
    pub name: &'static str,
    /// Output of rust-hdl's `generate_verilog` for the block (top module
    /// `top`, sub-modules `top$child`).
    pub verilog: String,
}

impl ExportedBlock {
    /// Connects `block`, runs rust-hdl's design checks and generates its
    /// Verilog. A block that fails the checks is a design error, which rust-hdl
    /// reports by panicking; in the build script that becomes a build error.
    pub fn new<B: Block>(name: &'static str, mut block: B) -> Self {
        block.connect_all();
        ExportedBlock {
            name,
            verilog: generate_verilog(&block),
        }
    }
}

/// Every block the Verilator bridge builds, in a fixed order.
pub fn blocks() -> Vec<ExportedBlock> {
    vec![
        ExportedBlock::new(
            "axis_register_slice",
            AxisRegisterSlice::<DATA_BITS, KEEP_BITS>::default(),
        ),
        ExportedBlock::new("bridge_check", BridgeCheck::default()),
        ExportedBlock::new("icrc_checker", IcrcChecker::default()),
        ExportedBlock::new("icrc_generator", IcrcGenerator::default()),
        ExportedBlock::new("rx_parser", RxParser::default()),
        // Release delay 0: IPv4 frames at full rate and lowest latency;
        // IPv6 frames exact but held until summed (see `TxBuilder::new`).
        ExportedBlock::new("tx_builder", TxBuilder::default()),
        // 1024 MRs, 16384 MTT entries, both in block RAM.
        ExportedBlock::new("mr_translate", MrTranslateDefault::default()),
        // 1024 QPs, 288-bit records in block RAM.
        ExportedBlock::new("qp_context", QpContext::<DEFAULT_QPN_BITS>::default()),
        // The completer's per-response decision; no state.
        ExportedBlock::new("response_checker", ResponseChecker::default()),
        // One request packet descriptor per cycle from a send WQE.
        ExportedBlock::new("request_segmenter", RequestSegmenter::default()),
        // The responder's per-request decision, one cycle, no memory.
        ExportedBlock::new("request_checker", RequestChecker::default()),
        // 1024 QPs' ACK timeout / RNR wait deadlines in one block RAM.
        ExportedBlock::new("qp_timers", QpTimers::<DEFAULT_QPN_BITS>::default()),
        // The ACK engine's WQE rings: 1024 QPs x 16 slots in block RAM.
        ExportedBlock::new("send_queue_tracker", SendQueueTrackerDefault::default()),
        // Receive WQE rings: 1024 QPs x 16 one-SGE WQEs in block RAM.
        ExportedBlock::new("receive_queue", ReceiveQueueDefault::default()),
        // The responder's READ/atomic resources: 1024 QPs x 16 in block RAM.
        ExportedBlock::new("rd_atomic_resources", RdAtomicResourcesDefault::default()),
        // CMP_SWAP / FETCH_ADD through DMA read and write, one at a time.
        ExportedBlock::new("atomic_unit", AtomicUnit::default()),
        // SEND / RDMA WRITE receive path: frames to DMA writes, receive
        // CQEs and verdicts.
        ExportedBlock::new("responder_datapath", ResponderDatapath::default()),
        // The requester's response receive path: parser, header and
        // payload FIFOs, local-write MR check, DMA writes.
        ExportedBlock::new("response_placement", ResponsePlacement::default()),
        // One completer event of one QP: WQE ring, response check, context
        // write-back, timer command, placement, send CQEs.
        ExportedBlock::new("completer_datapath", CompleterDatapathDefault::default()),
        // Grant to request frames: segmenter, MR check, DMA reassembly, TX
        // builder; an 8-packet payload buffer in block RAM.
        ExportedBlock::new("requester_datapath", RequesterDatapath::default()),
        // 1024 QPs x 8 queued responses in block RAM, ready-QP FIFO.
        ExportedBlock::new("response_queue", ResponseQueue::<10, 3>::default()),
        // CNP, response and request frames into the MAC stream, whole
        // frames, strict priority.
        ExportedBlock::new(
            "frame_arbiter",
            FrameArbiter::<DATA_BITS, KEEP_BITS>::default(),
        ),
        // Two tagged DMA read clients onto one host read port, round robin,
        // data routed back by the tag's top bit.
        ExportedBlock::new("dma_read_arbiter", DmaReadArbiter::default()),
        // Two posted DMA write clients onto one host write port, whole
        // bursts, round robin.
        ExportedBlock::new("dma_write_arbiter", DmaWriteArbiter::default()),
        // A payload stream onto its page segments as DMA write requests
        // (both receive paths' writer).
        ExportedBlock::new("dma_write_mover", DmaWriteMover::default()),
        // Response descriptors to response frames: R_Key check, DMA
        // reassembly of READ data, TX builder; 8-packet buffer in block RAM.
        ExportedBlock::new("response_transmitter", ResponseTransmitter::default()),
        // Response descriptors held in order until the DMA writes they
        // depend on were accepted (8-entry FIFO, sequence numbers).
        ExportedBlock::new("response_write_gate", ResponseWriteGate::default()),
        // The responder side of a NIC: receive path, outcomes to queue
        // commands, response queue, per-QP address RAM, transmit path.
        ExportedBlock::new("responder_path", ResponderPath::default()),
        // 1024 QPs x 16 slots of WQE bodies (remote side, operands).
        ExportedBlock::new("wqe_body_ram", WqeBodyRam::<10, 4>::default()),
        // The transmit scheduler's FIFO of sendable QPs, each once.
        ExportedBlock::new("ready_set", ReadySetDefault::default()),
        // The requester half's event loop: six sources round robin, own
        // QP context, completer datapath, timers, WQE bodies.
        ExportedBlock::new("requester_events", RequesterEventsDefault::default()),
        // The requester half of a NIC: event loop, ready set, response
        // placement, address RAM, transmit datapath.
        large::<RequesterPathDefault>("requester_path"),
        // The whole transport of one NIC: both halves, the rx copy, the
        // frame and DMA arbiters, the ERR events between the halves.
        large::<NicCore>("nic_core"),
    ]
}

/// A composite built boxed and connected on a thread of its own: the
/// construction of `requester_path` (a 0.7 MB struct and its parts'
/// temporaries) or `nic_core` outgrows a test thread's 2 MiB stack.
fn large<B: Block + Default + 'static>(name: &'static str) -> ExportedBlock {
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || {
            let mut block = Box::<B>::default();
            block.connect_all();
            ExportedBlock {
                name,
                verilog: generate_verilog(&*block),
            }
        })
        .expect("a thread")
        .join()
        .unwrap_or_else(|_| panic!("{name}'s Verilog"))
}

/// A small configuration interface, so the bridge is exercised on rust-hdl's
/// `iface$field` port naming.
#[derive(Clone, Debug, Default, LogicInterface)]
pub struct CountPort {
    /// Count the cycles at whose rising edge this is high.
    pub enable: Signal<In, Bit>,
    /// Number of enabled rising edges since power-up, wrapping.
    pub count: Signal<Out, Bits<32>>,
}

/// Self-test block for the Verilator bridge, not part of the NIC.
///
/// It covers what every later block relies on: a 512-bit datapath register
/// (`y` is `a ^ b` as sampled at the previous rising edge), combinational
/// outputs of every storage class Verilator uses (1..=8, ..=16, ..=32, ..=64
/// and wide word arrays; `nN` is the bitwise NOT of `wN` within N bits),
/// OR-reductions `anyN` that Verilator computes over whole storage words, so
/// bits above a port's width left set by the bridge would show up, and a
/// counter behind an interface port.
#[derive(LogicBlock, Default)]
pub struct BridgeCheck {
    pub clock: Signal<In, Clock>,
    pub a: Signal<In, Bits<512>>,
    pub b: Signal<In, Bits<512>>,
    pub y: Signal<Out, Bits<512>>,
    pub w1: Signal<In, Bit>,
    pub n1: Signal<Out, Bit>,
    pub w12: Signal<In, Bits<12>>,
    pub n12: Signal<Out, Bits<12>>,
    pub any12: Signal<Out, Bit>,
    pub w33: Signal<In, Bits<33>>,
    pub n33: Signal<Out, Bits<33>>,
    pub w64: Signal<In, Bits<64>>,
    pub n64: Signal<Out, Bits<64>>,
    pub w100: Signal<In, Bits<100>>,
    pub n100: Signal<Out, Bits<100>>,
    pub any100: Signal<Out, Bit>,
    pub counter: CountPort,
    xor_q: DFF<Bits<512>>,
    count_q: DFF<Bits<32>>,
}

impl Logic for BridgeCheck {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, xor_q, count_q);
        self.xor_q.d.next = self.a.val() ^ self.b.val();
        self.y.next = self.xor_q.q.val();
        self.n1.next = !self.w1.val();
        self.n12.next = !self.w12.val();
        self.n33.next = !self.w33.val();
        self.n64.next = !self.w64.val();
        self.n100.next = !self.w100.val();
        self.any12.next = self.w12.val().any();
        self.any100.next = self.w100.val().any();
        if self.counter.enable.val() {
            self.count_q.d.next = self.count_q.q.val() + 1;
        }
        self.counter.count.next = self.count_q.q.val();
    }
}
