//! `ResponseWriteGate`: holds each response packet descriptor until the
//! DMA writes it depends on were accepted by the host's DMA write port, so
//! an ACK, NAK or atomic ACK never leaves before the data it acknowledges
//! is written, and a READ response never reads memory ahead of an earlier
//! request's posted writes. It sits between `response_queue`'s packet
//! output and the response transmitter in `responder_path`.
//!
//! # The rule, as sequence numbers
//!
//! `responder_datapath` counts the DMA write requests it decides
//! (`writes_issued`: a WRITE or SEND packet's one or two page segments
//! when its placement job is queued, an atomic's result write when the
//! atomic starts) and the requests whose last beat the DMA write port
//! accepted (`writes_done`), both modulo `2^8`, in the same order (the
//! writes leave in decision order). Each response-queue command carries
//! the issued count once its frame's own writes are counted (`wseq`); the
//! queue keeps it with the item (a merged ACK takes the later one). A
//! descriptor may leave once `writes_done` has reached its `wseq`. So an
//! ACK covering PSN `p` waits for the writes of every packet decided up to
//! and including `p`'s (all QPs': the count is global, which is stricter
//! than needed and costs nothing measurable, see below), and what PCIe
//! then guarantees (posted writes stay ordered ahead of later reads and
//! of the peer's requests that follow our response) makes the data
//! visible before anyone can act on the response.
//!
//! Wrap-safe comparison: the writes not yet done number `pending =
//! issued - done` (mod 256), at most 35 (16 queued jobs of two segments
//! plus one in the mover, or one atomic); a stamp is still pending iff
//! `issued - wseq < pending` (mod 256), i.e. it lies in the window of
//! writes not done. A stamp can never be judged done while its writes are
//! outstanding. A descriptor older than 256 - 35 write requests (an item
//! that sat in the response queue that long) may alias into the window
//! and wait at most until the writes then outstanding are done, which
//! never needs the queue or the transmitter: no deadlock.
//!
//! # Why a FIFO and not a hold in the queue
//!
//! Holding a descriptor at the queue's output stops the queue's commands
//! (a presented descriptor never changes), so the next packet's ACK push,
//! and with it the next decision and its placement job, would wait for the
//! previous packet's writes: back-to-back 4 KiB WRITEs lose a few cycles
//! per packet, cumulatively. Dequeuing again instead of waiting would let
//! the next packet's ACK merge into a waiting one and postpone it for as
//! long as packets keep coming. The gate takes descriptors from the queue
//! at once (the queue goes on with commands and merges only into items
//! still queued, as the model's queue does between transmissions) and
//! holds them here in order: frames still leave in the order the queue
//! gave them (`desc_fire` stays the moment a descriptor leaves the queue).
//!
//! # Ports
//!
//! - `clock`; `reset` (synchronous, high): empties the FIFO.
//! - `in_*` (valid/ready): a descriptor ([`GatedPacket`]), from the
//!   queue's `packet` port. `in_ready` = not full.
//! - `out_*` (valid/ready): the oldest descriptor, offered once its
//!   `wseq` is done ([`covered`]). `head_valid` (out): a descriptor is
//!   at the head, covered or not (`out_packet` is it and stays until
//!   taken), so a per-QP lookup can start while it waits.
//! - `writes_issued`, `writes_done` (in, 8 bits): the datapath's counts.
//!
//! # Latency and throughput
//!
//! 2 cycles from `in` to `out` when the writes are done (the FIFO's
//! registered read), one descriptor per cycle. 8 descriptors (LUT RAM): the
//! queue presents one per 5 cycles at best, and a head descriptor waits at
//! most for the writes outstanding (an MTU-4096 packet's 65 beats behind
//! the decision), so 8 are 40 cycles of queue output; when full, the queue
//! simply waits.

use crate::primitives::sync_fifo::SyncFifo;
use crate::qp::qp_context::DEFAULT_QPN_BITS;
use crate::responder::response_queue::WSEQ_BITS;
use rust_hdl::prelude::*;

/// FIFO address bits: 8 descriptors.
pub const GATE_FIFO_BITS: usize = 3;

/// One response packet descriptor, as `response_queue` presents it (the
/// fields the transmitter takes) with its write sequence number.
#[derive(Clone, Copy, Debug, Default, PartialEq, LogicStruct)]
pub struct GatedPacket {
    pub qpn: Bits<DEFAULT_QPN_BITS>,
    pub opcode: Bits<8>,
    pub psn: Bits<24>,
    pub syndrome: Bits<8>,
    pub msn: Bits<24>,
    pub orig: Bits<64>,
    pub read: Bit,
    pub va: Bits<64>,
    pub rkey: Bits<32>,
    pub len: Bits<16>,
    pub wseq: Bits<WSEQ_BITS>,
}

/// The gate's contract: a descriptor stamped `wseq` may leave when the
/// datapath has issued `issued` and completed `done` write requests
/// (all mod 256): `wseq` is not in the window of writes outstanding.
pub fn covered(issued: u8, done: u8, wseq: u8) -> bool {
    issued.wrapping_sub(wseq) >= issued.wrapping_sub(done)
}

#[derive(LogicBlock, Default)]
pub struct ResponseWriteGate {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub in_valid: Signal<In, Bit>,
    pub in_ready: Signal<Out, Bit>,
    pub in_packet: Signal<In, GatedPacket>,
    pub out_valid: Signal<Out, Bit>,
    pub out_ready: Signal<In, Bit>,
    pub out_packet: Signal<Out, GatedPacket>,
    pub head_valid: Signal<Out, Bit>,
    pub writes_issued: Signal<In, Bits<WSEQ_BITS>>,
    pub writes_done: Signal<In, Bits<WSEQ_BITS>>,
    fifo: SyncFifo<GatedPacket, GATE_FIFO_BITS, 4>,
    /// Write requests outstanding, and the head's distance behind the
    /// issued count.
    pending: Signal<Local, Bits<WSEQ_BITS>>,
    head_age: Signal<Local, Bits<WSEQ_BITS>>,
    head_covered: Signal<Local, Bit>,
}

impl Logic for ResponseWriteGate {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, fifo);
        self.fifo.reset.next = self.reset.val();
        self.fifo.data_in.next = self.in_packet.val();
        self.fifo.write.next = self.in_valid.val() & !self.fifo.full.val();
        self.in_ready.next = !self.fifo.full.val();

        self.pending.next = self.writes_issued.val() - self.writes_done.val();
        self.head_age.next = self.writes_issued.val() - self.fifo.data_out.val().wseq;
        self.head_covered.next = self.head_age.val() >= self.pending.val();
        self.out_valid.next = !self.fifo.empty.val() & self.head_covered.val();
        self.out_packet.next = self.fifo.data_out.val();
        self.head_valid.next = !self.fifo.empty.val();
        self.fifo.read.next = self.out_valid.val() & self.out_ready.val();
    }
}
