//! The list of RTL blocks exported to Verilog for simulation under Verilator.
//!
//! `verilator-sys` calls [`blocks`] from its build script, Verilates each
//! bridged entry and generates one Rust type per block, so adding a block
//! to the list is all it takes to get a cycle-accurate, Verilator-backed
//! model of it for the RTL-versus-reference-model tests.
//!
//! Every exported block must have a `clock: Signal<In, Clock>` port (the
//! bridge's `Sim` drives it) and its Verilog top module is rust-hdl's `top`.

use crate::congestion::dcqcn_notification_point::DcqcnNotificationPoint;
use crate::congestion::dcqcn_rate_control::DcqcnRateControlDefault;
use crate::congestion::dcqcn_reaction_point::{self, DcqcnReactionPoint};
use crate::congestion::pacing_gate::PacingGate;
use crate::congestion::pacing_scheduler::PacingSchedulerDefault;
use crate::congestion::pfc_pause::PfcPause;
use crate::dma::dma_read_arbiter::DmaReadArbiter;
use crate::dma::dma_write_arbiter::DmaWriteArbiter;
use crate::dma::dma_write_mover::DmaWriteMover;
use crate::dma::mr_translate::MrTranslateDefault;
use crate::frame::crc::icrc_checker::IcrcChecker;
use crate::frame::crc::icrc_generator::IcrcGenerator;
use crate::frame::rx::rx_parser::RxParser;
use crate::frame::tx::tx_builder::TxBuilder;
use crate::host::bar_registers::BarRegisters;
use crate::host::counter_bank::CounterBank;
use crate::host::cqe_writer::CqeWriter;
use crate::host::event_queues::EventQueues;
use crate::host::wqe_decoder::WqeDecoder;
use crate::host::wqe_fetch::WqeFetch;
use crate::nic::frame_arbiter::FrameArbiter;
use crate::nic::nic_core::NicCore;
use crate::nic::nic_top::NicTop;
use crate::primitives::register_slice::AxisRegisterSlice;
use crate::primitives::stream::{DATA_BITS, KEEP_BITS};
use crate::qp::qp_context::{QpContext, DEFAULT_QPN_BITS};
use crate::qp::qp_timers::QpTimers;
use crate::requester::completer_datapath::CompleterDatapathDefault;
use crate::requester::ready_set::ReadySetDefault;
use crate::requester::request_segmenter::RequestSegmenter;
use crate::requester::requester_datapath::RequesterDatapath;
use crate::requester::requester_events::RequesterEventsDefault;
use crate::requester::requester_path::RequesterPathDefault;
use crate::requester::response_checker::ResponseChecker;
use crate::requester::response_placement::ResponsePlacement;
use crate::requester::send_queue_tracker::SendQueueTrackerDefault;
use crate::requester::wqe_body_ram::WqeBodyRam;
use crate::responder::atomic_unit::AtomicUnit;
use crate::responder::rd_atomic_resources::RdAtomicResourcesDefault;
use crate::responder::receive_queue::ReceiveQueueDefault;
use crate::responder::request_checker::RequestChecker;
use crate::responder::responder_datapath::ResponderDatapath;
use crate::responder::responder_path::ResponderPath;
use crate::responder::response_queue::ResponseQueue;
use crate::responder::response_transmitter::ResponseTransmitter;
use crate::responder::response_write_gate::ResponseWriteGate;
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
    /// The Verilator bridge builds a Rust type of it. Off for a block that
    /// a bridged top already holds whole and that only the cocotb benches
    /// run alone: its C++ would cost minutes of every build for no test.
    pub bridged: bool,
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
            bridged: true,
        }
    }

    /// This block without a bridge type (see [`ExportedBlock::bridged`]).
    pub fn unbridged(self) -> Self {
        ExportedBlock {
            bridged: false,
            ..self
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
        // 1024 QPs x 8 queued responses in block RAM, ready-QP FIFO: the
        // lockstep tests' instance, where pushes to a full queue wait
        // often; the core builds 32 (`DEFAULT_DEPTH_BITS`).
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
        // frame and DMA arbiters, the ERR events between the halves. The
        // cocotb bench runs it alone; the Rust harnesses run it in nic_top.
        large::<NicCore>("nic_core").unbridged(),
        // The NIC as a board instantiates it: nic_core behind BAR0 and the
        // host ABI's counters.
        large::<NicTop>("nic_top"),
        // BAR0 of the host interface: the host ABI's register blocks behind
        // an AXI4-Lite target.
        ExportedBlock::new("bar_registers", BarRegisters::default()),
        // The completion queues: CQ ring state, CQE writes by DMA, CQ
        // doorbells, completion events, overflow refused.
        ExportedBlock::new("cqe_writer", CqeWriter::default()),
        // The event queues: EQ ring state, EQE writes by DMA, EQ doorbells,
        // MSI-X messages (pending while masked), overrun dropped.
        ExportedBlock::new("event_queues", EventQueues::default()),
        // The work rings' fetch engine: ring cursors, SQ/RQ doorbells,
        // WQE reads by DMA in batches within the transport's room.
        ExportedBlock::new("wqe_fetch", WqeFetch::default()),
        // A fetched send or receive WQE to the transport's codes and
        // fields, with the format checks that make it malformed.
        ExportedBlock::new("wqe_decoder", WqeDecoder::default()),
        // The host ABI's 64-bit counters in block RAM, behind BAR0's
        // counter port; per-counter accumulators flushed round robin.
        ExportedBlock::new("counter_bank", CounterBank::default()),
        // DCQCN's notification point: 1024 QPs' last CNP times in block
        // RAM, one CE-marked packet or reset per cycle.
        ExportedBlock::new(
            "dcqcn_notification_point",
            DcqcnNotificationPoint::<{ dcqcn_reaction_point::DEFAULT_QPN_BITS }>::default(),
        ),
        // DCQCN's reaction point: 1024 QPs' rate state in block RAM, one
        // CNP, sent-bytes or timer event per cycle.
        ExportedBlock::new(
            "dcqcn_reaction_point",
            DcqcnReactionPoint::<{ dcqcn_reaction_point::DEFAULT_QPN_BITS }>::default(),
        ),
        // The reaction point with its timer scan: a tick for a recovering
        // QP in every cycle without a CNP, sent-bytes or reset event.
        ExportedBlock::new("dcqcn_rate_control", DcqcnRateControlDefault::default()),
        // PFC on receive: pause timers per priority from PFC frames on the
        // receive stream, and the pause watchdog.
        ExportedBlock::new("pfc_pause", PfcPause::default()),
        // Per-QP rate pacing on transmit: 1024 QPs' rates and token counts
        // in block RAM, one send question or rate update per cycle.
        ExportedBlock::new(
            "pacing_gate",
            PacingGate::<{ dcqcn_reaction_point::DEFAULT_QPN_BITS }>::default(),
        ),
        // The gate with its scheduler: the QPs with a frame to start asked
        // in turn, held ones again a lap later.
        ExportedBlock::new("pacing_scheduler", PacingSchedulerDefault::default()),
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
                bridged: true,
            }
        })
        .expect("a thread")
        .join()
        .unwrap_or_else(|_| panic!("{name}'s Verilog"))
}
