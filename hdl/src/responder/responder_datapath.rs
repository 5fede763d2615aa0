//! `ResponderDatapath`: the RC responder's receive path, frames in; host
//! DMA writes and atomic reads, receive CQEs, response-queue commands and
//! per-packet outcomes out. It wires [`RxParser`], a [`QpContext`] with a
//! per-QP message-in-progress RAM beside it, the [`RequestChecker`], an
//! [`MrTranslate`](crate::dma::mr_translate::MrTranslate), the [`ReceiveQueue`],
//! the READ / atomic resources ([`RdAtomicResources`]) and the
//! [`AtomicUnit`] into the model's `responder::on_request` for SEND, RDMA
//! WRITE (with and without immediate), RDMA READ, CMP_SWAP and FETCH_ADD,
//! new and duplicate; its oracle is the model's `check_request` followed
//! by `write_translation` (a WRITE's target) or `send_placement` (a SEND
//! packet in its receive WQE), the receive CQEs of `execute_send` /
//! `execute`, the flush of `completer::flush_receive_queue` when the QP
//! moves to ERR, `execute_read` / `execute_atomic` / `duplicate` for READ
//! and atomics, and the response-queue operations the model's responder
//! applies for each request (`responder::record_requests`).
//!
//! # Ports
//!
//! - `clock`; `reset` (synchronous, high): empties the pipeline, restarts
//!   the MR table sweep (see [`MrTranslate`](crate::dma::mr_translate::MrTranslate): pulse once after power-up,
//!   then wait for `cfg.ready`); QP records and messages are kept.
//! - `rx` (AXI-Stream sink, 512/64): Ethernet frames as the MAC gives them.
//! - `qp_host`: the QP context RAM's configuration port
//!   ([`ContextConfig`], a masked read-modify-write per operation), for
//!   the driver's `modify_qp`. `cfg`: the inner
//!   [`MrTranslate`](crate::dma::mr_translate::MrTranslate)'s configuration port
//!   ([`MrConfigPort`](crate::dma::mr_translate::MrConfigPort)), linked through.
//! - `rq_query` (out) / `rq_qpn` (out, 24 bits): for observation, high in
//!   the cycle the checker asks the receive queue whether QP `rq_qpn`
//!   holds a receive WQE (a message start that consumes one gets an RNR
//!   NAK without).
//! - `rq_post_*` (valid/ready): the driver's `post_recv`, one WQE of one
//!   SGE (`rq_post_qpn`, `_wr_id`, `_lkey`, `_va`, `_len`), taken while no
//!   frame is being decided (a post then takes the receive queue for 3
//!   cycles); `rq_post_done` is high for one cycle when it is in the ring,
//!   with `rq_post_accepted` low if the QP's ring (16 WQEs) was full.
//! - `rq_flush_*` (valid/ready): a flush from outside (the QP moved to
//!   ERR elsewhere, e.g. by the requester): every receive WQE of QP
//!   `rq_flush_qpn` completes with WR_FLUSH_ERR on the CQE stream, oldest
//!   first, as the datapath's own flush (`completer::flush_receive_queue`).
//!   Taken as a post is, while no frame is being decided, ahead of a post
//!   (`rq_post_ready` is low while `rq_flush_valid` is high); the flush
//!   then holds the receive queue for 3 cycles plus one per WQE.
//! - Receive CQE stream (valid/ready, `cqe_*`): `cqe_qpn`, `cqe_wr_id`,
//!   `cqe_status`, `cqe_opcode`, `cqe_byte_len`, `cqe_imm_valid`,
//!   `cqe_imm`, codes as [`ReceiveQueue`]'s; per QP in the order of the
//!   model's receive CQ. While it waits the decisions wait.
//! - `dma` ([`DmaWritePort`], valid/ready): a write request is a burst of
//!   beats framed by `dma.first` / `dma.last`; every beat carries the
//!   request's host address `dma.req_addr` and length `dma.req_len`
//!   (1..=4096 bytes, never crossing a page of the MR: AXI's AW channel
//!   folded into W). Data is aligned to host addresses, as a PCIe DMA
//!   engine takes it: `dma.addr` is the 64-byte-aligned host address of
//!   lane 0 and the byte for host address `x` sits in lane `x mod 64`;
//!   `dma.keep` marks the request's bytes in the beat (contiguous). Beats
//!   of consecutive requests follow in address order within a packet and
//!   packets in arrival order.
//! - Outcome (valid/ready, `out_*`): one per frame, in arrival order, once
//!   the frame is decided (its payload may still be on its way to DMA):
//!   `out_qpn`, `out_psn`, `out_opcode`, `out_verdict` (a
//!   [`request_verdict`] code: the checker's; [`request_verdict::REMOTE_ACCESS`]
//!   also when the MR refused an executed WRITE, then `out_mr_status` says
//!   why; [`request_verdict::RECEIVE_FAULT`] when the receive WQE refused a
//!   SEND packet; plus [`request_verdict::PARSER_DROP`] and
//!   [`request_verdict::NOT_HANDLED`]), `out_dup_class`,
//!   the ACK/NAK to queue (`out_response_valid`, `_syndrome`, `_psn`,
//!   `_msn`), and for the later stages `out_take_wqe`, `out_last`,
//!   `out_place_va` / `_rkey` / `_len`; `out_ce`: the frame is a
//!   CE-marked request for a QP in the table (for DCQCN's notification
//!   point).
//! - `deciding_qpn`, `deciding_ce` (out): the same two fields of the frame
//!   being decided, valid while its commands are offered on `rspq`.
//! - `rspq` (valid/ready, [`QueueCommandSource`]: `rspq_op`, `_qpn`,
//!   `_syndrome`, `_psn`, `_msn`, `_value`, `_rkey`, `_len`; `_mtu_code`
//!   always 0): every command the model's responder applies to the QP's
//!   response queue for the frame, in the model's order, for
//!   [`ResponseQueue`](crate::responder::response_queue::ResponseQueue)'s command
//!   port: `OP_DROP_READS` (a duplicate READ re-executed: `psn` / `len`
//!   the recorded READ's first PSN and PSN count), then `OP_PUSH_ACK` /
//!   `OP_PUSH_NAK` (the ACK/NAK the outcome carries, by its syndrome's
//!   type), `OP_PUSH_READ` (`psn`, `value` = VA, `rkey`, `len`, `msn`) or
//!   `OP_PUSH_ATOMIC_ACK` (`psn`, `value` = the original value, `msn`),
//!   then `OP_FLUSH` when the frame moved the QP to ERR. **A frame's
//!   commands are offered only once its outcome can follow at once, and
//!   the last is accepted in the cycle the outcome enters the output
//!   register**, so a consumer that accepts outcomes as they come sees
//!   the outcome one cycle after the frame's last command (a scoreboard
//!   comparing queue contents per frame relies on it). While a command
//!   waits the decisions wait.
//! - `rspq_wseq` (out, 8 bits), with `rspq`: the write sequence number the
//!   command depends on; `writes_issued`, `writes_done` (out, 8 bits): the
//!   counts it is compared with (see "Write sequence numbers").
//! - `atomic_dma` ([`DmaReadPort`]): the atomic's 8-byte read (tag
//!   [`crate::responder::atomic_unit::DMA_TAG`]), [`AtomicUnit`]'s port linked
//!   through (a beat of another tag is left waiting). The atomic's 8-byte
//!   posted write is one beat on the DMA write port (`dma_*`), after
//!   every earlier packet's beats and before any later one's.
//! - `stat_select` (3 bits) / `stat_count` (32): counters, see `STAT_*`.
//!
//! # What happens to a frame
//!
//! The parser's drops and frames this block does not handle (not a
//! request opcode, or a QPN beyond the `2^10`-entry table; the NIC's
//! address, source and P_Key checks belong to the stage in front) get an
//! outcome and their payload is discarded. A request goes through the QP
//! context lookup and the checker. Every verdict but an executed WRITE or
//! SEND is final: the checker's context and message are written back and
//! the payload (a duplicate's, a NAKed one's) is discarded; a checker
//! verdict that moves the QP to ERR (invalid request, remote access)
//! also flushes its receive queue.
//!
//! An executed READ's RETH range goes through the MR stage with its
//! R_Key, the QP's PD and remote read (zero bytes check nothing); then
//! the READ is pushed to the QP's resources (`max_dest_rd_atomic` of them,
//! the oldest leaving first) and queued (`OP_PUSH_READ`, the MSN after
//! it); its data is read at transmit time by the response transmitter.
//! An executed atomic's 8 bytes (the checker refused a misaligned one with
//! NAK invalid request) go through the MR stage with remote atomic; then,
//! once every earlier packet's DMA writes are out (a read never passes a
//! posted write, so the atomic sees them), the atomic unit reads the word
//! on the DMA read port, writes the result on the DMA write port and
//! gives the original value, which is pushed to the resources and queued
//! (`OP_PUSH_ATOMIC_ACK`). An MR refusal of either is handled as a
//! WRITE's: nothing is done, NAK remote access error with the MSN before
//! the packet, the QP to ERR with its responder fields as before.
//!
//! A duplicate READ or atomic is looked up in the resources (the newest
//! entry holding its PSN): no entry or a READ that does not fit the
//! recorded one is dropped; a duplicate atomic is answered with the
//! recorded original value (`OP_PUSH_ATOMIC_ACK`, current MSN, nothing
//! executed); a duplicate READ voids the recorded READ's queued
//! responses (`OP_DROP_READS`) and is re-executed with the recorded
//! R_Key: the QP's remote read right and the MR are checked again, and
//! it is queued (`OP_PUSH_READ`, current MSN) or refused as above (NAK
//! remote access, QP to ERR, `OP_FLUSH`).
//!
//! An executed SEND packet reads the head receive WQE (the WQE stays at
//! the head while its message is in progress) and places its bytes at
//! the message offset the checker gives, as the model's `send_placement`
//! decides for one SGE: the part that fits in the SGE goes through the
//! MR stage with the WQE's L_Key, the QP's PD and local write; an L_Key
//! refusal is LocProtErr with NAK remote operational error, a packet
//! that does not fit is LocLenErr with NAK invalid request (the L_Key
//! check first). A refusal writes nothing, completes the WQE with that
//! status (byte_len 0), moves the QP to ERR as an MR refusal of a WRITE
//! does and flushes the rest of the receive queue. The last packet of a
//! SEND completes the WQE: RECV, byte_len = the message's bytes,
//! immediate if any. A WRITE with immediate (LAST or ONLY) completes the
//! head WQE once its bytes passed the MR stage: RECV_RDMA_WITH_IMM,
//! byte_len = the message's RETH length. SEND with invalidate is
//! executed as a SEND: the invalidation of the IETH's R_Key and its CQE
//! field are not done here (the model does both).
//!
//! An executed WRITE with bytes (or a WRITE FIRST's whole RETH range) is
//! translated by the MR stage with R_Key, the QP's PD, remote write and
//! bounds checks: first the whole RETH range of a WRITE FIRST (the model
//! checks it before the first byte lands), then this packet's bytes. If
//! every beat comes back ok, the packet's payload is written to the
//! segments; otherwise nothing is written, the outcome is NAK remote
//! access error with the QP's MSN before the packet, and the QP moves to
//! ERR with its PSN, MSN and message as before the packet (the model keeps
//! none of the checker's state then).
//!
//! # Write sequence numbers
//!
//! So that no response leaves before the DMA writes it depends on were
//! accepted by the host (`response_write_gate`), the block counts DMA
//! write requests modulo 256: `writes_issued` goes up by a packet's one or
//! two page segments in the cycle its placement job is queued (with its
//! outcome) and by one when an atomic starts (its result write);
//! `writes_done` by one for every beat with `dma.last` the DMA port
//! accepts. Both follow the one order in which requests leave the port.
//! Every queue command carries `rspq_wseq` = `writes_issued` plus the
//! frame's own segments (counted at its emit, at the latest in the cycle
//! its last command is taken): the writes of this frame and of every frame
//! decided before it. A write job of a frame is queued no later than its
//! commands are taken, so a response waiting for them never waits for
//! anything that needs the queue.
//!
//! # The hazard, and the design around it
//!
//! The QP context gives one cycle from record to write-back, the
//! checker's one cycle, but the MR verdict comes about ten cycles after
//! the lookup. So decisions are made one packet at a time: the lookup of
//! the next frame waits until the previous frame's outcome is final. The
//! checker's new context and message are written at the lookup's update
//! slot (`t + 3`) whatever comes next; if the MR then refuses the WRITE,
//! a second lookup of the QP writes it to ERR with the old fields back
//! (in its own update slot, so the context's contract holds and host
//! operations stay ordered among the lookups). Back-to-back packets of
//! one QP therefore always see each other's context and message, and the
//! message RAM needs no forwarding: it is read at `t + 1` and written at
//! `t + 3` of one lookup, before the next lookup starts.
//!
//! # Latency and throughput
//!
//! Decision: a frame's record is taken in cycle `t`; its checker outcome
//! is in cycle `t + 3`; a frame needing no MR check is emitted at `t + 4`
//! and the next record taken at `t + 5`. An executed WRITE adds the MR
//! round trip: one request (two for a WRITE FIRST) and the response beats,
//! about 7 cycles, plus one beat per page of a WRITE FIRST's message;
//! an MR refusal adds the four-cycle fix-up lookup. So about 11 cycles per
//! WRITE packet, 5 per other frame. A SEND
//! packet adds the receive queue's peek (about 5 cycles) before its MR
//! round trip, its last packet a complete (about 4 more). Each
//! response-queue command takes a cycle, the last one in the cycle the
//! outcome is emitted (a frame with one ACK costs no extra cycle when the
//! queue is ready). A READ adds its MR round trip and the resource push
//! (3 cycles); an atomic its MR round trip, the wait for earlier DMA
//! writes to drain, the atomic unit's `L + 5` cycles at DMA read latency
//! `L` and the push; a duplicate READ / atomic the resource lookup (4 +
//! one per newer entry walked).
//!
//! Data: the payload goes cut-through from the parser into a 256-beat
//! FIFO (block RAM) and from there, one beat per cycle, through the
//! [`DmaWriteMover`] (byte rotation, page segments) to the DMA port: `ceil((addr mod 64 + len) / 64)` beats per
//! packet, the next packet's first beat right after the previous one's
//! last. Decisions run ahead of the data by up to 16 packets (the job
//! FIFO). An MTU-4096 WRITE packet is 65 input beats with its headers
//! (RETH, ICRC) and 64 or 65 DMA beats, so back-to-back MTU-4096 packets
//! stream at one beat per cycle, bounded by the input stream itself.
//! Smaller packets are bounded by the one-at-a-time decision (about 11
//! cycles per WRITE packet: 256-byte packets, 5 input beats, run at 45%
//! of line rate). A WRITE FIRST's whole-range check costs one MR beat
//! per page of the message (128 for 512 KiB in 4 KiB pages), during which
//! the parser's two-record output buffer fills and the input waits, once
//! per such message. The parser's `rx.tready` also drops when the payload
//! FIFO is full.
//!
//! Memory: block RAM for the parser's buffers, the context and message
//! RAMs, the MR table and MTT, the receive queue's rings (1024 QPs x 16
//! WQEs x 192 bits, 88 RAMB36) and the resources (1024 QPs x 16 entries x
//! 177 bits, about 80 RAMB36).

use crate::codes::{request_verdict, wc_opcode, wc_status};
use crate::dma::dma_port::{DmaReadPort, DmaWritePort};
use crate::dma::dma_write_mover::DmaWriteMover;
use crate::dma::mr_translate::{MrConfigPortDefault, MrTranslateDefault};
use crate::frame::rx::header_record::HeaderRecord;
use crate::frame::rx::rx_parser::RxParser;
use crate::primitives::skid_buffer::SkidBuffer;
use crate::primitives::stream::{Axis512Sink, PayloadWord};
use crate::primitives::sync_fifo::SyncFifo;
use crate::qp::qp_context::{ContextConfig, QpContext, DEFAULT_QPN_BITS};
use crate::qp::qp_context_record::ContextRecordBits;
use crate::qp::record_fields::RecordFields;
use crate::responder::atomic_unit::AtomicUnit;
use crate::responder::outcome_stream::OutcomeStream;
use crate::responder::rd_atomic_resources::RdAtomicResources;
use crate::responder::receive_queue::{
    ReceiveCqeStream, ReceivePost, ReceiveQueue, DEFAULT_SLOT_BITS,
};
use crate::responder::request_checker::{MessageState, RequestChecker};
use crate::responder::response_queue::{QueueCommandSource, WSEQ_BITS};
use rust_hdl::prelude::*;

/// QP table address bits (1024 QPs), as the exported `qp_context`.
pub const QPN_BITS: usize = DEFAULT_QPN_BITS;

// `update` writes the receive CQE's codes as literals (`hdl_gen` reads a
// constant's path as a signal name); they must be the codes module's.
const _: () = assert!(
    wc_status::SUCCESS == 0
        && wc_status::LOC_PROT_ERR == 3
        && wc_opcode::RECV == 5
        && wc_opcode::RECV_RDMA_WITH_IMM == 6
        && request_verdict::SEND == 6
);

/// Counters (`stat_select`): records taken from the parser.
pub const STAT_FRAMES: u64 = 0;
/// Frames the parser dropped.
pub const STAT_PARSER_DROPS: u64 = 1;
/// Frames not handled here ([`request_verdict::NOT_HANDLED`]).
pub const STAT_NOT_HANDLED: u64 = 2;
/// WRITE and SEND packets executed with their payload written.
pub const STAT_WRITES: u64 = 3;
/// ACKs and NAKs queued (`out_response_valid`).
pub const STAT_RESPONSES: u64 = 4;
/// WRITEs refused by the MR stage (NAK remote access, QP to ERR).
pub const STAT_MR_FAULTS: u64 = 5;
/// DMA write beats transferred.
pub const STAT_DMA_BEATS: u64 = 6;
/// Payload beats discarded.
pub const STAT_DISCARDED_BEATS: u64 = 7;

/// READ / atomic resources per QP: 16 (`max_dest_rd_atomic` <= 16).
const RESOURCE_SLOT_BITS: usize = 4;

/// Payload FIFO address bits: 256 beats, four MTU-4096 packets.
const PAYLOAD_FIFO_BITS: usize = 8;
/// Placement job FIFO address bits: decisions ahead of the data.
const JOB_FIFO_BITS: usize = 4;

/// What to do with one payload segment: discard it, or write it to one or
/// two host segments (a packet of at most 4096 bytes crosses at most one
/// page boundary, pages being at least 4 KiB).
#[derive(Clone, Copy, Debug, Default, PartialEq, LogicStruct)]
pub struct PlacementJob {
    pub write: Bit,
    pub len: Bits<13>,
    pub two_segments: Bit,
    pub seg0_phys: Bits<64>,
    pub seg0_len: Bits<13>,
    pub seg1_phys: Bits<64>,
    pub seg1_len: Bits<13>,
}

/// One frame's outcome.
#[derive(Clone, Copy, Debug, Default, PartialEq, LogicStruct)]
pub struct ResponderOutcome {
    pub qpn: Bits<24>,
    pub psn: Bits<24>,
    pub opcode: Bits<8>,
    pub verdict: Bits<4>,
    pub dup_class: Bits<2>,
    pub response_valid: Bit,
    pub response_syndrome: Bits<8>,
    pub response_psn: Bits<24>,
    pub response_msn: Bits<24>,
    pub take_wqe: Bit,
    pub last: Bit,
    pub mr_status: Bits<3>,
    pub place_va: Bits<64>,
    pub place_rkey: Bits<32>,
    pub place_len: Bits<32>,
    /// The frame is a CE-marked request for a QP in the table (DCQCN's
    /// notification point hears of it).
    pub ce: Bit,
}

#[derive(LogicBlock, Default)]
pub struct ResponderDatapath {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub rx: Axis512Sink,
    pub qp_host: ContextConfig<QPN_BITS>,

    pub cfg: MrConfigPortDefault,

    pub rq_query: Signal<Out, Bit>,
    pub rq_qpn: Signal<Out, Bits<24>>,

    pub rq_post: ReceivePost<QPN_BITS>,
    pub rq_flush_valid: Signal<In, Bit>,
    pub rq_flush_ready: Signal<Out, Bit>,
    pub rq_flush_qpn: Signal<In, Bits<QPN_BITS>>,

    pub cqe: ReceiveCqeStream<24>,

    pub dma: DmaWritePort,

    pub out: OutcomeStream,
    pub deciding_qpn: Signal<Out, Bits<24>>,
    pub deciding_ce: Signal<Out, Bit>,

    pub rspq: QueueCommandSource<QPN_BITS>,
    pub rspq_wseq: Signal<Out, Bits<WSEQ_BITS>>,
    pub writes_issued: Signal<Out, Bits<WSEQ_BITS>>,
    pub writes_done: Signal<Out, Bits<WSEQ_BITS>>,

    pub atomic_dma: DmaReadPort,

    pub stat_select: Signal<In, Bits<3>>,
    pub stat_count: Signal<Out, Bits<32>>,

    parser: RxParser,
    contexts: QpContext<QPN_BITS>,
    context_fields: RecordFields,
    messages: RAM<MessageState, QPN_BITS>,
    // (`checker` is a SystemVerilog keyword.)
    request_check: RequestChecker,
    mr: MrTranslateDefault,
    rq: ReceiveQueue<QPN_BITS, DEFAULT_SLOT_BITS>,
    resources: RdAtomicResources<QPN_BITS, RESOURCE_SLOT_BITS>,
    atomic: AtomicUnit,
    payload_fifo: SyncFifo<PayloadWord, PAYLOAD_FIFO_BITS, 9>,
    job_fifo: SyncFifo<PlacementJob, JOB_FIFO_BITS, 5>,
    writer: DmaWriteMover,
    outcome_out: SkidBuffer<ResponderOutcome>,

    // ---- decision
    /// 0 idle (take a record), 1 lookup in flight (t + 1), 2 check
    /// (t + 2), 3 decide and write back (t + 3), 4 MR request for a WRITE
    /// FIRST's whole range, 5 MR request for the packet, 6 MR responses,
    /// 7..10 the fix-up lookup after an MR refusal (issue, t + 1, t + 2,
    /// write at t + 3), 11 emit outcome and job, 12 peek the receive WQE
    /// (SEND), 13 place the SEND packet in it, 14 complete the receive
    /// WQE, 15 flush the receive queue (the QP went to ERR), 16 look a
    /// duplicate READ / atomic up in the resources, 17 start the atomic
    /// once earlier DMA writes are out, 18 the atomic in flight, 19 push
    /// the executed READ / atomic to the resources.
    state: DFF<Bits<5>>,
    qpn: DFF<Bits<QPN_BITS>>,
    opcode: DFF<Bits<8>>,
    psn: DFF<Bits<24>>,
    ack_req: DFF<Bit>,
    payload_len: DFF<Bits<13>>,
    has_payload: DFF<Bit>,
    has_reth: DFF<Bit>,
    reth_va: DFF<Bits<64>>,
    reth_rkey: DFF<Bits<32>>,
    reth_dma_len: DFF<Bits<32>>,
    has_atomic_eth: DFF<Bit>,
    atomic_va: DFF<Bits<64>>,
    atomic_rkey: DFF<Bits<32>>,
    atomic_swap_add: DFF<Bits<64>>,
    atomic_compare: DFF<Bits<64>>,
    // ---- READ / atomic execution and the response-queue commands
    /// The MR stage checks a READ's or an atomic's range (`ra_access`),
    /// nothing is written.
    ra_mode: DFF<Bit>,
    ra_access: DFF<Bits<4>>,
    /// A duplicate READ re-executed from its resource.
    ra_dup: DFF<Bit>,
    /// Load a READ's range check this cycle, with this R_Key (the RETH's,
    /// or a re-executed duplicate's recorded one).
    load_read_check: Signal<Local, Bit>,
    read_rkey: Signal<Local, Bits<32>>,
    /// A resources / atomic-unit command of this state was taken.
    ra_issued: DFF<Bit>,
    read_npsn: DFF<Bits<24>>,
    /// The frame's main queue command: 0 the outcome's ACK/NAK (if any),
    /// 1 a READ's responses, 2 an atomic ACK.
    main_kind: DFF<Bits<2>>,
    /// READ VA or atomic original value; R_Key and length of a READ; the
    /// MSN the READ / atomic ACK carries.
    q_value: DFF<Bits<64>>,
    q_rkey: DFF<Bits<32>>,
    q_len: DFF<Bits<32>>,
    q_msn: DFF<Bits<24>>,
    /// A drop-reads command (a duplicate READ restarts the recorded one).
    q_drop: DFF<Bit>,
    drop_psn: DFF<Bits<24>>,
    drop_npsn: DFF<Bits<24>>,
    /// Commands of this frame already taken by the queue.
    done_drop: DFF<Bit>,
    done_main: DFF<Bit>,
    done_flush: DFF<Bit>,
    need_drop: Signal<Local, Bit>,
    need_main: Signal<Local, Bit>,
    need_flush: Signal<Local, Bit>,
    /// At most one command is left and the queue takes it now.
    commands_clear: Signal<Local, Bit>,
    /// Earlier packets' DMA writes are all out (an atomic may read).
    writes_drained: Signal<Local, Bit>,
    // ---- write sequence numbers (see "Write sequence numbers")
    /// DMA write requests decided (jobs' segments, atomic writes).
    write_issued: DFF<Bits<WSEQ_BITS>>,
    /// DMA write requests whose last beat the port accepted.
    write_done: DFF<Bits<WSEQ_BITS>>,
    /// The DMA write requests of the frame being decided.
    own_writes: Signal<Local, Bits<WSEQ_BITS>>,
    /// The context and message as read, for an MR refusal's fix-up.
    old_context: DFF<ContextRecordBits>,
    old_message: DFF<MessageState>,
    fixed_context: DFF<ContextRecordBits>,
    place_va: DFF<Bits<64>>,
    place_rkey: DFF<Bits<32>>,
    place_len: DFF<Bits<32>>,
    whole_len: DFF<Bits<32>>,
    mr_fault: DFF<Bit>,
    mr_status: DFF<Bits<3>>,
    // ---- receive WQE placement (SEND) and receive completions
    /// The packet goes through the MR stage as a SEND: the receive WQE's
    /// L_Key, local write.
    send_mode: DFF<Bit>,
    /// This SEND packet's offset in its message.
    recv_offset: DFF<Bits<32>>,
    /// The head receive WQE's one SGE.
    sge_lkey: DFF<Bits<32>>,
    sge_va: DFF<Bits<64>>,
    sge_len: DFF<Bits<32>>,
    /// The SGE ends inside the packet: a length error once the part that
    /// fits passed the L_Key check (protection wins, as in the model).
    send_short: DFF<Bit>,
    /// The receive WQE refused the SEND packet (`nak_syndrome` says how).
    recv_fault: DFF<Bit>,
    nak_syndrome: DFF<Bits<8>>,
    take_wqe: DFF<Bit>,
    last: DFF<Bit>,
    has_imm: DFF<Bit>,
    imm: DFF<Bits<32>>,
    /// The receive CQE the complete command gives.
    complete_status: DFF<Bits<4>>,
    complete_opcode: DFF<Bits<3>>,
    complete_byte_len: DFF<Bits<32>>,
    complete_imm_valid: DFF<Bit>,
    /// A flush (the QP moved to ERR) follows the complete.
    then_flush: DFF<Bit>,
    /// The receive-queue command of this state was taken; its result is
    /// awaited.
    rq_issued: DFF<Bit>,
    sge_room: Signal<Local, Bits<32>>,
    send_take: Signal<Local, Bits<32>>,
    outcome: DFF<ResponderOutcome>,
    job: DFF<PlacementJob>,
    record: Signal<Local, HeaderRecord>,
    is_request: Signal<Local, Bit>,
    beyond_table: Signal<Local, Bit>,
    mr_beat_fault: Signal<Local, Bit>,
    emit: Signal<Local, Bit>,
    /// The outcome buffer and the job FIFO can take this frame now.
    emit_room: Signal<Local, Bit>,

    // ---- placement jobs: written by `writer`, or discarded here
    /// A payload segment is being discarded.
    discarding: DFF<Bit>,
    /// The discard ends this cycle.
    discard_done: Signal<Local, Bit>,
    /// Neither writing nor discarding past this cycle: a job may start.
    job_start: Signal<Local, Bit>,

    // ---- counters
    count_frames: DFF<Bits<32>>,
    count_parser_drops: DFF<Bits<32>>,
    count_not_handled: DFF<Bits<32>>,
    count_writes: DFF<Bits<32>>,
    count_responses: DFF<Bits<32>>,
    count_mr_faults: DFF<Bits<32>>,
    count_dma_beats: DFF<Bits<32>>,
    count_discarded: DFF<Bits<32>>,
}

impl Logic for ResponderDatapath {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            write_issued,
            write_done,
            state,
            qpn,
            opcode,
            psn,
            ack_req,
            payload_len,
            has_payload,
            has_reth,
            reth_va,
            reth_rkey,
            reth_dma_len,
            has_atomic_eth,
            atomic_va,
            atomic_rkey,
            atomic_swap_add,
            atomic_compare,
            ra_mode,
            ra_access,
            ra_dup,
            ra_issued,
            read_npsn,
            main_kind,
            q_value,
            q_rkey,
            q_len,
            q_msn,
            q_drop,
            drop_psn,
            drop_npsn,
            done_drop,
            done_main,
            done_flush,
            old_context,
            old_message,
            fixed_context,
            place_va,
            place_rkey,
            place_len,
            whole_len,
            mr_fault,
            mr_status,
            send_mode,
            recv_offset,
            sge_lkey,
            sge_va,
            sge_len,
            send_short,
            recv_fault,
            nak_syndrome,
            take_wqe,
            last,
            has_imm,
            imm,
            complete_status,
            complete_opcode,
            complete_byte_len,
            complete_imm_valid,
            then_flush,
            rq_issued,
            outcome,
            job,
            discarding,
            count_frames,
            count_parser_drops,
            count_not_handled,
            count_writes,
            count_responses,
            count_mr_faults,
            count_dma_beats,
            count_discarded
        );
        clock!(
            self,
            clock,
            parser,
            contexts,
            request_check,
            mr,
            rq,
            resources,
            atomic,
            payload_fifo,
            job_fifo,
            writer,
            outcome_out
        );
        self.messages.read_clock.next = self.clock.val();
        self.messages.write_clock.next = self.clock.val();
        self.parser.reset.next = self.reset.val();
        self.contexts.reset.next = self.reset.val();
        self.request_check.reset.next = self.reset.val();
        self.mr.reset.next = self.reset.val();
        self.rq.reset.next = self.reset.val();
        self.resources.reset.next = self.reset.val();
        self.atomic.reset.next = self.reset.val();
        self.payload_fifo.reset.next = self.reset.val();
        self.job_fifo.reset.next = self.reset.val();
        self.writer.reset.next = self.reset.val();
        self.outcome_out.reset.next = self.reset.val();

        // ---- configuration, passed through
        self.contexts.host.valid.next = self.qp_host.valid.val();
        self.contexts.host.qpn.next = self.qp_host.qpn.val();
        self.contexts.host.mask.next = self.qp_host.mask.val();
        self.contexts.host.data.next = self.qp_host.data.val();
        self.qp_host.done.next = self.contexts.host.done.val();
        self.qp_host.old.next = self.contexts.host.old.val();
        self.qp_host.stalled.next = self.contexts.host.stalled.val();
        MrConfigPortDefault::link(&mut self.cfg, &mut self.mr.cfg);

        // ---- frames into the parser; payload cut-through into the FIFO
        self.parser.rx.tdata.next = self.rx.tdata.val();
        self.parser.rx.tkeep.next = self.rx.tkeep.val();
        self.parser.rx.tlast.next = self.rx.tlast.val();
        self.parser.rx.tvalid.next = self.rx.tvalid.val();
        self.rx.tready.next = self.parser.rx.tready.val();
        self.parser.stat_select.next = 0.into();
        self.parser.payload.tready.next = !self.payload_fifo.full.val();
        self.payload_fifo.write.next =
            self.parser.payload.tvalid.val() & !self.payload_fifo.full.val();
        self.payload_fifo.data_in.next.data = self.parser.payload.tdata.val();
        self.payload_fifo.data_in.next.last = self.parser.payload.tlast.val();

        // ---- decision defaults
        self.record.next = self.parser.record.record.val();
        self.parser.record.ready.next = false;
        self.is_request.next = (self.record.val().opcode <= 0x0C)
            | (self.record.val().opcode == 0x13)
            | (self.record.val().opcode == 0x14)
            | (self.record.val().opcode == 0x16)
            | (self.record.val().opcode == 0x17);
        self.beyond_table.next = self.record.val().dest_qp.get_bits::<14>(10) != 0;

        self.contexts.lookup.valid.next = false;
        self.contexts.lookup.qpn.next = self.qpn.q.val();
        self.contexts.lookup.tag.next = 0.into();
        self.contexts.update.valid.next = false;
        self.contexts.update.qpn.next = self.qpn.q.val();
        self.contexts.update.record.next = self.request_check.out_context.val().into();
        self.context_fields.record.next = self.contexts.context.record.val();

        // The message RAM is read at the edge closing t + 1 (the address
        // register is loaded at the edge closing t), so its word is there
        // at t + 2 beside the context record.
        self.messages.read_address.next = self.qpn.q.val();
        self.messages.write_address.next = self.qpn.q.val();
        self.messages.write_enable.next = false;
        self.messages.write_data.next = self.request_check.out_message.val();

        self.request_check.req_valid.next = false;
        self.request_check.req_tag.next = 0.into();
        self.request_check.req_opcode.next = self.opcode.q.val();
        self.request_check.req_psn.next = self.psn.q.val();
        self.request_check.req_ack_req.next = self.ack_req.q.val();
        self.request_check.req_payload_len.next = self.payload_len.q.val();
        self.request_check.req_has_reth.next = self.has_reth.q.val();
        self.request_check.req_reth_va.next = self.reth_va.q.val();
        self.request_check.req_reth_rkey.next = self.reth_rkey.q.val();
        self.request_check.req_reth_dma_len.next = self.reth_dma_len.q.val();
        self.request_check.req_has_atomic_eth.next = self.has_atomic_eth.q.val();
        self.request_check.req_atomic_va.next = self.atomic_va.q.val();
        self.request_check.req_atomic_rkey.next = self.atomic_rkey.q.val();
        self.request_check.req_atomic_swap_add.next = self.atomic_swap_add.q.val();
        self.request_check.req_atomic_compare.next = self.atomic_compare.q.val();
        self.request_check.req_context.next = self.context_fields.fields.val();
        self.request_check.req_message.next = self.messages.read_data.val();
        self.rq.query_qpn.next = self.qpn.q.val();
        self.request_check.req_rq_available.next = self.rq.query_available.val();
        self.rq_query.next = self.state.q.val() == 2;
        self.rq_qpn.next = bit_cast::<24, QPN_BITS>(self.qpn.q.val());

        // The receive queue's command port: the host's posts while no
        // frame is being decided, the decision's peek / complete / flush.
        self.rq.cmd_valid.next = false;
        self.rq.cmd_op.next = 0.into();
        self.rq.cmd_qpn.next = self.rq_post.qpn.val();
        self.rq.cmd_wr_id.next = self.rq_post.wr_id.val();
        self.rq.cmd_lkey.next = self.rq_post.lkey.val();
        self.rq.cmd_va.next = self.rq_post.va.val();
        self.rq.cmd_len.next = self.rq_post.len.val();
        self.rq.cmd_status.next = self.complete_status.q.val();
        self.rq.cmd_opcode.next = self.complete_opcode.q.val();
        self.rq.cmd_byte_len.next = self.complete_byte_len.q.val();
        self.rq.cmd_imm_valid.next = self.complete_imm_valid.q.val();
        self.rq.cmd_imm.next = self.imm.q.val();
        self.rq_flush_ready.next = (self.state.q.val() == 0) & self.rq.cmd_ready.val();
        self.rq_post.ready.next =
            (self.state.q.val() == 0) & self.rq.cmd_ready.val() & !self.rq_flush_valid.val();
        self.rq_post.done.next = self.rq.res_valid.val() & (self.rq.res_op.val() == 0);
        self.rq_post.accepted.next = self.rq.res_accepted.val();
        self.rq.cqe.ready.next = self.cqe.ready.val();
        self.cqe.valid.next = self.rq.cqe.valid.val();
        self.cqe.qpn.next = bit_cast::<24, QPN_BITS>(self.rq.cqe.qpn.val());
        self.cqe.wr_id.next = self.rq.cqe.wr_id.val();
        self.cqe.status.next = self.rq.cqe.status.val();
        self.cqe.opcode.next = self.rq.cqe.opcode.val();
        self.cqe.byte_len.next = self.rq.cqe.byte_len.val();
        self.cqe.imm_valid.next = self.rq.cqe.imm_valid.val();
        self.cqe.imm.next = self.rq.cqe.imm.val();
        self.sge_room.next = self.sge_len.q.val() - self.recv_offset.q.val();
        self.send_take.next = self.sge_room.val();
        if bit_cast::<32, 13>(self.payload_len.q.val()) < self.sge_room.val() {
            self.send_take.next = bit_cast::<32, 13>(self.payload_len.q.val());
        }

        self.mr.req_valid.next = false;
        self.mr.req_key.next = self.place_rkey.q.val();
        self.mr.req_va.next = self.place_va.q.val();
        self.mr.req_len.next = self.place_len.q.val();
        self.mr.req_pd.next = bit_cast::<32, 16>(self.old_context.q.val().pd);
        // REMOTE_WRITE through an R_Key, or for a SEND LOCAL_WRITE through
        // the receive WQE's L_Key.
        self.mr.req_access.next = bits::<4>(0b0010);
        self.mr.req_remote.next = true;
        if self.send_mode.q.val() {
            self.mr.req_access.next = bits::<4>(0b0001);
            self.mr.req_remote.next = false;
        }
        if self.ra_mode.q.val() {
            self.mr.req_access.next = self.ra_access.q.val();
        }

        // The READ / atomic resources: the decision's push and lookup.
        self.resources.cmd_valid.next = false;
        self.resources.cmd_op.next = bits::<2>(1);
        self.resources.cmd_qpn.next = self.qpn.q.val();
        self.resources.cmd_limit.next =
            bit_cast::<8, 5>(self.old_context.q.val().max_dest_rd_atomic);
        self.resources.cmd_kind.next = self.has_atomic_eth.q.val();
        self.resources.cmd_opcode.next = self.opcode.q.val();
        self.resources.cmd_psn.next = self.psn.q.val();
        self.resources.cmd_npsn.next = self.read_npsn.q.val();
        self.resources.cmd_va.next = self.reth_va.q.val();
        self.resources.cmd_rkey.next = self.reth_rkey.q.val();
        self.resources.cmd_len.next = self.reth_dma_len.q.val();
        self.resources.cmd_orig.next = self.q_value.q.val();
        self.resources.cmd_path_mtu.next = self.old_context.q.val().path_mtu;

        // The atomic unit: its 8-byte read on the DMA read port, its write
        // into the DMA write stream (the writer is idle meanwhile).
        self.atomic.in_valid.next = false;
        self.atomic.in_tag.next = 0.into();
        self.atomic.in_addr.next = self.job.q.val().seg0_phys;
        self.atomic.in_opcode.next = self.opcode.q.val();
        self.atomic.in_compare.next = self.atomic_compare.q.val();
        self.atomic.in_swap_add.next = self.atomic_swap_add.q.val();
        self.atomic.out_ready.next = false;
        DmaReadPort::link(&mut self.atomic_dma, &mut self.atomic.dma);
        self.writes_drained.next =
            !self.discarding.q.val() & self.writer.idle.val() & self.job_fifo.empty.val();

        // The response-queue commands of the frame, in the model's order:
        // drop-reads, then the ACK / NAK / READ / atomic ACK, then flush.
        self.need_drop.next = self.q_drop.q.val() & !self.done_drop.q.val();
        self.need_main.next = ((self.main_kind.q.val() != 0) | self.outcome.q.val().response_valid)
            & !self.done_main.q.val();
        self.need_flush.next = ((self.outcome.q.val().verdict == 4)
            | (self.outcome.q.val().verdict == 5)
            | (self.outcome.q.val().verdict == 12))
            & !self.done_flush.q.val();
        self.commands_clear.next =
            !(self.need_drop.val() | self.need_main.val() | self.need_flush.val())
                | (self.rspq.ready.val()
                    & !(self.need_drop.val() & self.need_main.val())
                    & !(self.need_drop.val() & self.need_flush.val())
                    & !(self.need_main.val() & self.need_flush.val()));
        self.rspq.valid.next = false;
        self.rspq.qpn.next = self.qpn.q.val();
        self.rspq.syndrome.next = self.outcome.q.val().response_syndrome;
        self.rspq.psn.next = self.psn.q.val();
        self.rspq.msn.next = self.q_msn.q.val();
        self.rspq.value.next = self.q_value.q.val();
        self.rspq.rkey.next = self.q_rkey.q.val();
        self.rspq.len.next = self.q_len.q.val();
        self.rspq.mtu_code.next = 0.into();
        // A command depends on every write decided so far and on the
        // frame's own (counted at emit, with the command or after it).
        self.own_writes.next = 0.into();
        if self.has_payload.q.val() & self.job.q.val().write {
            self.own_writes.next = 1.into();
            if self.job.q.val().two_segments {
                self.own_writes.next = 2.into();
            }
        }
        self.rspq_wseq.next = self.write_issued.q.val() + self.own_writes.val();
        if self.need_drop.val() {
            self.rspq.op.next = bits::<3>(5);
            self.rspq.psn.next = self.drop_psn.q.val();
            self.rspq.len.next = bit_cast::<32, 24>(self.drop_npsn.q.val());
        } else if self.need_main.val() {
            if self.main_kind.q.val() == 1 {
                self.rspq.op.next = bits::<3>(4);
            } else if self.main_kind.q.val() == 2 {
                self.rspq.op.next = bits::<3>(3);
            } else {
                // AETH syndrome type 00 is an ACK; RNR NAKs and NAKs are
                // never merged.
                self.rspq.psn.next = self.outcome.q.val().response_psn;
                self.rspq.msn.next = self.outcome.q.val().response_msn;
                if self.outcome.q.val().response_syndrome.get_bits::<2>(5) == 0 {
                    self.rspq.op.next = bits::<3>(1);
                } else {
                    self.rspq.op.next = bits::<3>(2);
                }
            }
        } else {
            self.rspq.op.next = bits::<3>(6);
        }
        self.mr.req_tag.next = 1.into();
        self.mr.resp_ready.next = false;
        self.mr_beat_fault.next = self.mr.resp_valid.val() & (self.mr.resp_status.val() != 0);

        self.outcome_out.up_valid.next = false;
        self.outcome_out.up_data.next = self.outcome.q.val();
        self.job_fifo.write.next = false;
        self.job_fifo.data_in.next = self.job.q.val();
        self.emit.next = false;
        self.emit_room.next = false;
        self.load_read_check.next = false;
        self.read_rkey.next = self.reth_rkey.q.val();

        if self.state.q.val() == 0 {
            if self.rq_flush_valid.val() & self.rq.cmd_ready.val() {
                self.rq.cmd_valid.next = true;
                self.rq.cmd_op.next = bits::<3>(3);
                self.rq.cmd_qpn.next = self.rq_flush_qpn.val();
            } else if self.rq_post.valid.val() & self.rq.cmd_ready.val() {
                self.rq.cmd_valid.next = true;
            } else if self.parser.record.valid.val() {
                self.parser.record.ready.next = true;
                self.has_imm.d.next = self.record.val().has_imm;
                self.imm.d.next = self.record.val().imm;
                self.opcode.d.next = self.record.val().opcode;
                self.psn.d.next = self.record.val().psn;
                self.ack_req.d.next = self.record.val().ack_req;
                self.payload_len.d.next = self.record.val().payload_len;
                self.has_payload.d.next = self.record.val().has_payload;
                self.has_reth.d.next = self.record.val().has_reth;
                self.reth_va.d.next = self.record.val().reth_va;
                self.reth_rkey.d.next = self.record.val().reth_rkey;
                self.reth_dma_len.d.next = self.record.val().reth_dma_len;
                self.has_atomic_eth.d.next = self.record.val().has_atomic_eth;
                self.atomic_va.d.next = self.record.val().atomic_va;
                self.atomic_rkey.d.next = self.record.val().atomic_rkey;
                self.atomic_swap_add.d.next = self.record.val().atomic_swap_add;
                self.atomic_compare.d.next = self.record.val().atomic_compare;
                self.ra_mode.d.next = false;
                self.ra_dup.d.next = false;
                self.ra_issued.d.next = false;
                self.main_kind.d.next = 0.into();
                self.q_drop.d.next = false;
                self.done_drop.d.next = false;
                self.done_main.d.next = false;
                self.done_flush.d.next = false;
                self.qpn.d.next = bit_cast::<QPN_BITS, 24>(self.record.val().dest_qp);
                self.outcome.d.next.qpn = self.record.val().dest_qp;
                self.outcome.d.next.ce = self.record.val().ecn == 3;
                self.outcome.d.next.psn = self.record.val().psn;
                self.outcome.d.next.opcode = self.record.val().opcode;
                self.outcome.d.next.dup_class = bits::<2>(3);
                self.outcome.d.next.response_valid = false;
                self.outcome.d.next.response_syndrome = 0.into();
                self.outcome.d.next.response_psn = 0.into();
                self.outcome.d.next.response_msn = 0.into();
                self.outcome.d.next.take_wqe = false;
                self.outcome.d.next.last = false;
                self.outcome.d.next.mr_status = 0.into();
                self.outcome.d.next.place_va = 0.into();
                self.outcome.d.next.place_rkey = 0.into();
                self.outcome.d.next.place_len = 0.into();
                self.job.d.next.write = false;
                self.job.d.next.len = self.record.val().payload_len;
                self.job.d.next.two_segments = false;
                self.job.d.next.seg0_phys = 0.into();
                self.job.d.next.seg0_len = 0.into();
                self.job.d.next.seg1_phys = 0.into();
                self.job.d.next.seg1_len = 0.into();
                self.count_frames.d.next = self.count_frames.q.val() + 1;
                if self.record.val().drop {
                    self.outcome.d.next.verdict = bits::<4>(10);
                    self.outcome.d.next.ce = false;
                    self.count_parser_drops.d.next = self.count_parser_drops.q.val() + 1;
                    self.state.d.next = bits::<5>(11);
                } else if !self.is_request.val() | self.beyond_table.val() {
                    self.outcome.d.next.verdict = bits::<4>(11);
                    self.outcome.d.next.ce = false;
                    self.count_not_handled.d.next = self.count_not_handled.q.val() + 1;
                    self.state.d.next = bits::<5>(11);
                } else {
                    self.contexts.lookup.valid.next = true;
                    self.contexts.lookup.qpn.next =
                        bit_cast::<QPN_BITS, 24>(self.record.val().dest_qp);
                    self.state.d.next = bits::<5>(1);
                }
            }
        } else if self.state.q.val() == 1 {
            self.state.d.next = bits::<5>(2);
        } else if self.state.q.val() == 2 {
            // t + 2: the record (forwarded by the context RAM) and the
            // message word meet the checker.
            self.request_check.req_valid.next = true;
            self.old_context.d.next = self.context_fields.fields.val();
            self.old_message.d.next = self.messages.read_data.val();
            self.state.d.next = bits::<5>(3);
        } else if self.state.q.val() == 3 {
            // t + 3: the update slot. The checker's state is written back
            // now; an MR refusal undoes it with a second lookup.
            self.contexts.update.valid.next = true;
            self.messages.write_enable.next = true;
            self.outcome.d.next.verdict = self.request_check.out_verdict.val();
            self.outcome.d.next.dup_class = self.request_check.out_dup_class.val();
            self.outcome.d.next.response_valid = self.request_check.out_response_valid.val();
            self.outcome.d.next.response_syndrome = self.request_check.out_response_syndrome.val();
            self.outcome.d.next.response_psn = self.request_check.out_response_psn.val();
            self.outcome.d.next.response_msn = self.request_check.out_response_msn.val();
            self.outcome.d.next.take_wqe = self.request_check.out_take_wqe.val();
            self.outcome.d.next.last = self.request_check.out_last.val();
            self.outcome.d.next.place_va = self.request_check.out_place_va.val();
            self.outcome.d.next.place_rkey = self.request_check.out_place_rkey.val();
            self.outcome.d.next.place_len = self.request_check.out_place_len.val();
            self.place_va.d.next = self.request_check.out_place_va.val();
            self.place_rkey.d.next = self.request_check.out_place_rkey.val();
            self.place_len.d.next = self.request_check.out_place_len.val();
            self.whole_len.d.next = self.request_check.out_whole_len.val();
            self.mr_fault.d.next = false;
            self.mr_status.d.next = 0.into();
            self.send_mode.d.next = false;
            self.recv_fault.d.next = false;
            self.then_flush.d.next = false;
            self.rq_issued.d.next = false;
            self.recv_offset.d.next = self.request_check.out_recv_offset.val();
            self.read_npsn.d.next = self.request_check.out_read_npsn.val();
            self.q_msn.d.next = self.request_check.out_context.val().rq_msn;
            self.q_value.d.next = self.reth_va.q.val();
            self.q_rkey.d.next = self.reth_rkey.q.val();
            self.q_len.d.next = self.reth_dma_len.q.val();
            self.take_wqe.d.next = self.request_check.out_take_wqe.val();
            self.last.d.next = self.request_check.out_last.val();
            // The receive CQE of a successful end: a SEND's bytes so far
            // with this packet's, or a WRITE with immediate's message
            // length (its RETH's, or the one in progress).
            self.complete_status.d.next = 0.into();
            self.complete_imm_valid.d.next = self.has_imm.q.val();
            if self.request_check.out_verdict.val() == 6 {
                self.complete_opcode.d.next = bits::<3>(5);
                self.complete_byte_len.d.next = self.request_check.out_recv_offset.val()
                    + bit_cast::<32, 13>(self.payload_len.q.val());
            } else {
                self.complete_opcode.d.next = bits::<3>(6);
                if self.has_reth.q.val() {
                    self.complete_byte_len.d.next = self.reth_dma_len.q.val();
                } else {
                    self.complete_byte_len.d.next = self.old_message.q.val().len;
                }
            }
            if (self.request_check.out_verdict.val() == 7)
                & ((self.request_check.out_place_len.val() != 0)
                    | (self.request_check.out_whole_len.val() != 0))
            {
                if self.request_check.out_whole_len.val() != 0 {
                    self.state.d.next = bits::<5>(4);
                } else {
                    self.state.d.next = bits::<5>(5);
                }
            } else if (self.request_check.out_verdict.val() == 7)
                & self.request_check.out_take_wqe.val()
            {
                self.state.d.next = bits::<5>(14);
            } else if self.request_check.out_verdict.val() == 6 {
                self.state.d.next = bits::<5>(12);
            } else if self.request_check.out_verdict.val() == 8 {
                // A READ: its range through the R_Key with remote read
                // (zero bytes check nothing), then its resource and its
                // responses queued.
                self.load_read_check.next = true;
                if self.reth_dma_len.q.val() == 0 {
                    self.state.d.next = bits::<5>(19);
                } else {
                    self.state.d.next = bits::<5>(5);
                }
            } else if self.request_check.out_verdict.val() == 9 {
                // An atomic: its 8 bytes through the R_Key with remote
                // atomic (the checker refused a misaligned one).
                self.place_va.d.next = self.atomic_va.q.val();
                self.place_rkey.d.next = self.atomic_rkey.q.val();
                self.place_len.d.next = 8.into();
                self.ra_mode.d.next = true;
                self.ra_access.d.next = bits::<4>(0b1000);
                self.state.d.next = bits::<5>(5);
            } else if (self.request_check.out_verdict.val() == 2)
                & ((self.request_check.out_dup_class.val() == 1)
                    | (self.request_check.out_dup_class.val() == 2))
            {
                self.state.d.next = bits::<5>(16);
            } else if (self.request_check.out_verdict.val() == 4)
                | (self.request_check.out_verdict.val() == 5)
            {
                // The checker moved the QP to ERR: its receive WQEs are
                // flushed.
                self.state.d.next = bits::<5>(15);
            } else {
                self.state.d.next = bits::<5>(11);
            }
        } else if (self.state.q.val() == 4) | (self.state.q.val() == 5) | (self.state.q.val() == 6)
        {
            if self.state.q.val() == 4 {
                self.mr.req_valid.next = true;
                self.mr.req_len.next = self.whole_len.q.val();
                self.mr.req_tag.next = 0.into();
                if self.mr.req_ready.val() {
                    self.state.d.next = bits::<5>(5);
                }
            }
            if self.state.q.val() == 5 {
                self.mr.req_valid.next = true;
                if self.mr.req_ready.val() {
                    self.state.d.next = bits::<5>(6);
                }
            }
            // Collect the responses: any refusal fails the packet; the
            // placement request's segments become the job.
            self.mr.resp_ready.next = true;
            if self.mr_beat_fault.val() & !self.mr_fault.q.val() {
                self.mr_fault.d.next = true;
                self.mr_status.d.next = self.mr.resp_status.val();
            }
            if self.mr.resp_valid.val() & (self.mr.resp_tag.val() == 1) & self.mr.resp_has_seg.val()
            {
                if self.mr.resp_first.val() {
                    self.job.d.next.seg0_phys = self.mr.resp_phys.val();
                    self.job.d.next.seg0_len = bit_cast::<13, 32>(self.mr.resp_len.val());
                } else {
                    self.job.d.next.two_segments = true;
                    self.job.d.next.seg1_phys = self.mr.resp_phys.val();
                    self.job.d.next.seg1_len = bit_cast::<13, 32>(self.mr.resp_len.val());
                }
            }
            if self.mr.resp_valid.val() & (self.mr.resp_tag.val() == 1) & self.mr.resp_last.val() {
                if self.mr_fault.q.val() | self.mr_beat_fault.val() {
                    if self.send_mode.q.val() {
                        // The receive WQE's L_Key refused: LocProtErr,
                        // NAK remote operational error.
                        self.recv_fault.d.next = true;
                        self.complete_status.d.next = bits::<4>(3);
                        self.complete_byte_len.d.next = 0.into();
                        self.complete_imm_valid.d.next = false;
                        self.nak_syndrome.d.next = bits::<8>(0x63);
                    }
                    self.state.d.next = bits::<5>(7);
                } else if self.send_mode.q.val() & self.send_short.q.val() {
                    // The receive buffer ends inside the packet: LocLenErr,
                    // NAK invalid request.
                    self.recv_fault.d.next = true;
                    self.complete_status.d.next = bits::<4>(1);
                    self.complete_byte_len.d.next = 0.into();
                    self.complete_imm_valid.d.next = false;
                    self.nak_syndrome.d.next = bits::<8>(0x61);
                    self.state.d.next = bits::<5>(7);
                } else if self.ra_mode.q.val() {
                    if self.has_atomic_eth.q.val() {
                        self.state.d.next = bits::<5>(17);
                    } else if self.ra_dup.q.val() {
                        self.main_kind.d.next = bits::<2>(1);
                        self.state.d.next = bits::<5>(11);
                    } else {
                        self.state.d.next = bits::<5>(19);
                    }
                } else {
                    self.job.d.next.write = true;
                    self.state.d.next = bits::<5>(11);
                    if self.send_mode.q.val() {
                        if self.last.q.val() {
                            self.state.d.next = bits::<5>(14);
                        }
                    } else if self.take_wqe.q.val() {
                        self.state.d.next = bits::<5>(14);
                    }
                }
            }
        } else if self.state.q.val() == 7 {
            self.contexts.lookup.valid.next = true;
            self.state.d.next = bits::<5>(8);
        } else if self.state.q.val() == 8 {
            self.state.d.next = bits::<5>(9);
        } else if self.state.q.val() == 9 {
            // The record as it is now (a host operation may have changed
            // it) with the responder's fields as before the packet.
            self.fixed_context.d.next = self.context_fields.fields.val();
            self.fixed_context.d.next.state = bits::<3>(4);
            self.fixed_context.d.next.rq_epsn = self.old_context.q.val().rq_epsn;
            self.fixed_context.d.next.rq_msn = self.old_context.q.val().rq_msn;
            self.fixed_context.d.next.in_progress = self.old_context.q.val().in_progress;
            self.fixed_context.d.next.nak_sent = false;
            self.state.d.next = bits::<5>(10);
        } else if self.state.q.val() == 10 {
            self.contexts.update.valid.next = true;
            self.contexts.update.record.next = self.fixed_context.q.val().into();
            self.messages.write_enable.next = true;
            self.messages.write_data.next = self.old_message.q.val();
            self.outcome.d.next.response_valid = true;
            self.outcome.d.next.response_psn = self.psn.q.val();
            self.outcome.d.next.response_msn = self.old_context.q.val().rq_msn;
            self.outcome.d.next.take_wqe = false;
            self.outcome.d.next.mr_status = self.mr_status.q.val();
            if self.recv_fault.q.val() {
                // The receive WQE completes with the error, then the
                // rest of the queue is flushed.
                self.outcome.d.next.verdict = bits::<4>(12);
                self.outcome.d.next.response_syndrome = self.nak_syndrome.q.val();
                self.then_flush.d.next = true;
                self.state.d.next = bits::<5>(14);
            } else {
                self.outcome.d.next.verdict = bits::<4>(5);
                self.outcome.d.next.response_syndrome = bits::<8>(0x62);
                self.count_mr_faults.d.next = self.count_mr_faults.q.val() + 1;
                self.state.d.next = bits::<5>(15);
            }
        } else if self.state.q.val() == 12 {
            // SEND: the head receive WQE (the checker saw one, or the
            // message in progress keeps it there).
            self.rq.cmd_op.next = bits::<3>(1);
            self.rq.cmd_qpn.next = self.qpn.q.val();
            if !self.rq_issued.q.val() {
                self.rq.cmd_valid.next = true;
                if self.rq.cmd_ready.val() {
                    self.rq_issued.d.next = true;
                }
            } else if self.rq.res_valid.val() {
                self.rq_issued.d.next = false;
                self.sge_lkey.d.next = self.rq.res_lkey.val();
                self.sge_va.d.next = self.rq.res_va.val();
                self.sge_len.d.next = self.rq.res_len.val();
                self.state.d.next = bits::<5>(13);
            }
        } else if self.state.q.val() == 13 {
            // The model's `send_placement` for one SGE: no bytes place
            // nothing; a packet starting at or past the SGE's end is a
            // length error; otherwise the part that fits goes through
            // the L_Key (a refusal wins over the length error).
            self.place_rkey.d.next = self.sge_lkey.q.val();
            self.place_va.d.next =
                self.sge_va.q.val() + bit_cast::<64, 32>(self.recv_offset.q.val());
            self.place_len.d.next = self.send_take.val();
            self.send_short.d.next =
                self.send_take.val() != bit_cast::<32, 13>(self.payload_len.q.val());
            if self.payload_len.q.val() == 0 {
                if self.last.q.val() {
                    self.state.d.next = bits::<5>(14);
                } else {
                    self.state.d.next = bits::<5>(11);
                }
            } else if self.recv_offset.q.val() >= self.sge_len.q.val() {
                self.recv_fault.d.next = true;
                self.complete_status.d.next = bits::<4>(1);
                self.complete_byte_len.d.next = 0.into();
                self.complete_imm_valid.d.next = false;
                self.nak_syndrome.d.next = bits::<8>(0x61);
                self.state.d.next = bits::<5>(7);
            } else {
                self.send_mode.d.next = true;
                self.state.d.next = bits::<5>(5);
            }
        } else if self.state.q.val() == 14 {
            // Complete the head receive WQE with its CQE.
            self.rq.cmd_op.next = bits::<3>(2);
            self.rq.cmd_qpn.next = self.qpn.q.val();
            if !self.rq_issued.q.val() {
                self.rq.cmd_valid.next = true;
                if self.rq.cmd_ready.val() {
                    self.rq_issued.d.next = true;
                }
            } else if self.rq.res_valid.val() {
                self.rq_issued.d.next = false;
                if self.then_flush.q.val() {
                    self.state.d.next = bits::<5>(15);
                } else {
                    self.state.d.next = bits::<5>(11);
                }
            }
        } else if self.state.q.val() == 15 {
            // The QP went to ERR: every receive WQE left (a SEND in
            // progress's first) completes with WR_FLUSH_ERR.
            self.rq.cmd_op.next = bits::<3>(3);
            self.rq.cmd_qpn.next = self.qpn.q.val();
            if !self.rq_issued.q.val() {
                self.rq.cmd_valid.next = true;
                if self.rq.cmd_ready.val() {
                    self.rq_issued.d.next = true;
                }
            } else if self.rq.res_valid.val() {
                self.rq_issued.d.next = false;
                self.state.d.next = bits::<5>(11);
            }
        } else if self.state.q.val() == 16 {
            // A duplicate READ or atomic: the newest resource holding its
            // PSN decides (the model's `duplicate_answer`).
            self.resources.cmd_op.next = bits::<2>(2);
            if !self.ra_issued.q.val() {
                self.resources.cmd_valid.next = true;
                if self.resources.cmd_ready.val() {
                    self.ra_issued.d.next = true;
                }
            } else if self.resources.res_valid.val() {
                self.ra_issued.d.next = false;
                self.state.d.next = bits::<5>(11);
                if self.resources.res_answer.val() == 2 {
                    // Re-executed with the recorded R_Key, the queued
                    // answers of the recorded READ voided first; the
                    // QP's remote read right and the MR are checked again.
                    self.q_drop.d.next = true;
                    self.drop_psn.d.next = self.resources.res_first_psn.val();
                    self.drop_npsn.d.next = self.resources.res_npsn.val();
                    self.q_rkey.d.next = self.resources.res_rkey.val();
                    self.load_read_check.next = true;
                    self.read_rkey.next = self.resources.res_rkey.val();
                    self.ra_dup.d.next = true;
                    if self.reth_dma_len.q.val() == 0 {
                        self.main_kind.d.next = bits::<2>(1);
                    } else if !self.old_context.q.val().access.get_bit(2) {
                        self.state.d.next = bits::<5>(7);
                    } else {
                        self.state.d.next = bits::<5>(5);
                    }
                } else if self.resources.res_answer.val() == 3 {
                    self.main_kind.d.next = bits::<2>(2);
                    self.q_value.d.next = self.resources.res_orig.val();
                }
            }
        } else if self.state.q.val() == 17 {
            // The atomic reads only after every earlier packet's DMA
            // writes are out (a read never passes a posted write).
            if self.writes_drained.val() {
                self.atomic.in_valid.next = true;
                if self.atomic.in_ready.val() {
                    // Its one-beat result write.
                    self.write_issued.d.next = self.write_issued.q.val() + 1;
                    self.state.d.next = bits::<5>(18);
                }
            }
        } else if self.state.q.val() == 18 {
            self.atomic.out_ready.next = true;
            if self.atomic.out_valid.val() {
                self.q_value.d.next = self.atomic.out_orig.val();
                self.state.d.next = bits::<5>(19);
            }
        } else if self.state.q.val() == 19 {
            // The executed READ or atomic into the QP's resources.
            self.resources.cmd_op.next = bits::<2>(1);
            if !self.ra_issued.q.val() {
                self.resources.cmd_valid.next = true;
                if self.resources.cmd_ready.val() {
                    self.ra_issued.d.next = true;
                }
            } else if self.resources.res_valid.val() {
                self.ra_issued.d.next = false;
                if self.has_atomic_eth.q.val() {
                    self.main_kind.d.next = bits::<2>(2);
                } else {
                    self.main_kind.d.next = bits::<2>(1);
                }
                self.state.d.next = bits::<5>(11);
            }
        } else if self.state.q.val() == 11 {
            // Commands go only while the outcome can follow them at once,
            // so a consumer that takes outcomes as they come sees the
            // frame's queue effects and its outcome together.
            self.emit_room.next = self.outcome_out.up_ready.val()
                & (!self.has_payload.q.val() | !self.job_fifo.full.val());
            if (self.need_drop.val() | self.need_main.val() | self.need_flush.val())
                & self.emit_room.val()
            {
                self.rspq.valid.next = true;
                if self.rspq.ready.val() {
                    if self.need_drop.val() {
                        self.done_drop.d.next = true;
                    } else if self.need_main.val() {
                        self.done_main.d.next = true;
                    } else {
                        self.done_flush.d.next = true;
                    }
                }
            }
            self.emit.next = self.emit_room.val() & self.commands_clear.val();
            if self.emit.val() {
                self.write_issued.d.next = self.write_issued.q.val() + self.own_writes.val();
                self.outcome_out.up_valid.next = true;
                self.job_fifo.write.next = self.has_payload.q.val();
                if self.outcome.q.val().response_valid {
                    self.count_responses.d.next = self.count_responses.q.val() + 1;
                }
                if self.job.q.val().write {
                    self.count_writes.d.next = self.count_writes.q.val() + 1;
                }
                self.state.d.next = bits::<5>(0);
            }
        } else {
            self.state.d.next = bits::<5>(0);
        }
        // A READ's range check, new or re-executed: its RETH range through
        // `read_rkey` with remote read.
        if self.load_read_check.val() {
            self.place_va.d.next = self.reth_va.q.val();
            self.place_rkey.d.next = self.read_rkey.val();
            self.place_len.d.next = self.reth_dma_len.q.val();
            self.ra_mode.d.next = true;
            self.ra_access.d.next = bits::<4>(0b0100);
        }

        // ---- placement jobs, one at a time: a write goes to the writer,
        // a discard is done here.
        self.payload_fifo.read.next = self.writer.in_ready.val();
        self.writer.in_valid.next = !self.payload_fifo.empty.val();
        self.writer.in_data.next = self.payload_fifo.data_out.val().data;
        self.discard_done.next = false;
        if self.discarding.q.val() & !self.payload_fifo.empty.val() {
            self.payload_fifo.read.next = true;
            self.count_discarded.d.next = self.count_discarded.q.val() + 1;
            if self.payload_fifo.data_out.val().last {
                self.discard_done.next = true;
                self.discarding.d.next = false;
            }
        }
        // The next job starts in the cycle the previous one ends, so
        // packets follow each other without an idle beat.
        self.job_start.next = (!self.discarding.q.val() | self.discard_done.val())
            & self.writer.job_ready.val()
            & !self.job_fifo.empty.val();
        self.job_fifo.read.next = self.job_start.val();
        self.writer.job_valid.next = self.job_start.val() & self.job_fifo.data_out.val().write;
        self.writer.job_len.next = self.job_fifo.data_out.val().len;
        self.writer.job_seg0_addr.next = self.job_fifo.data_out.val().seg0_phys;
        self.writer.job_seg0_len.next = self.job_fifo.data_out.val().seg0_len;
        self.writer.job_two_segments.next = self.job_fifo.data_out.val().two_segments;
        self.writer.job_seg1_addr.next = self.job_fifo.data_out.val().seg1_phys;
        self.writer.job_seg1_len.next = self.job_fifo.data_out.val().seg1_len;
        if self.job_start.val() & !self.job_fifo.data_out.val().write {
            self.discarding.d.next = true;
        }

        // The atomic's posted write: the writer is idle while it runs.
        DmaWritePort::join(&mut self.atomic.dma_wr, &mut self.writer.other);

        // ---- outputs
        DmaWritePort::link(&mut self.dma, &mut self.writer.dma);
        if self.dma.valid.val() & self.dma.ready.val() {
            self.count_dma_beats.d.next = self.count_dma_beats.q.val() + 1;
            if self.dma.last.val() {
                self.write_done.d.next = self.write_done.q.val() + 1;
            }
        }
        self.writes_issued.next = self.write_issued.q.val();
        self.writes_done.next = self.write_done.q.val();

        self.outcome_out.down_ready.next = self.out.ready.val();
        self.out.valid.next = self.outcome_out.down_valid.val();
        self.out.qpn.next = self.outcome_out.down_data.val().qpn;
        self.out.psn.next = self.outcome_out.down_data.val().psn;
        self.out.opcode.next = self.outcome_out.down_data.val().opcode;
        self.out.verdict.next = self.outcome_out.down_data.val().verdict;
        self.out.ce.next = self.outcome_out.down_data.val().ce;
        self.deciding_qpn.next = self.outcome.q.val().qpn;
        self.deciding_ce.next = self.outcome.q.val().ce;
        self.out.dup_class.next = self.outcome_out.down_data.val().dup_class;
        self.out.response_valid.next = self.outcome_out.down_data.val().response_valid;
        self.out.response_syndrome.next = self.outcome_out.down_data.val().response_syndrome;
        self.out.response_psn.next = self.outcome_out.down_data.val().response_psn;
        self.out.response_msn.next = self.outcome_out.down_data.val().response_msn;
        self.out.take_wqe.next = self.outcome_out.down_data.val().take_wqe;
        self.out.last.next = self.outcome_out.down_data.val().last;
        self.out.mr_status.next = self.outcome_out.down_data.val().mr_status;
        self.out.place_va.next = self.outcome_out.down_data.val().place_va;
        self.out.place_rkey.next = self.outcome_out.down_data.val().place_rkey;
        self.out.place_len.next = self.outcome_out.down_data.val().place_len;

        self.stat_count.next = self.count_frames.q.val();
        if self.stat_select.val() == 1 {
            self.stat_count.next = self.count_parser_drops.q.val();
        } else if self.stat_select.val() == 2 {
            self.stat_count.next = self.count_not_handled.q.val();
        } else if self.stat_select.val() == 3 {
            self.stat_count.next = self.count_writes.q.val();
        } else if self.stat_select.val() == 4 {
            self.stat_count.next = self.count_responses.q.val();
        } else if self.stat_select.val() == 5 {
            self.stat_count.next = self.count_mr_faults.q.val();
        } else if self.stat_select.val() == 6 {
            self.stat_count.next = self.count_dma_beats.q.val();
        } else if self.stat_select.val() == 7 {
            self.stat_count.next = self.count_discarded.q.val();
        }

        if self.reset.val() {
            self.state.d.next = bits::<5>(0);
            self.discarding.d.next = false;
            self.write_issued.d.next = 0.into();
            self.write_done.d.next = 0.into();
            self.count_frames.d.next = 0.into();
            self.count_parser_drops.d.next = 0.into();
            self.count_not_handled.d.next = 0.into();
            self.count_writes.d.next = 0.into();
            self.count_responses.d.next = 0.into();
            self.count_mr_faults.d.next = 0.into();
            self.count_dma_beats.d.next = 0.into();
            self.count_discarded.d.next = 0.into();
        }
    }
}
