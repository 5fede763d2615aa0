//! `ResponsePlacement`: the requester's response receive path. Frames from
//! the MAC go through an [`RxParser`]; the response opcodes (ACK, NAK,
//! READ response first / middle / last / only, atomic ACK: the model's
//! `nic::frame_kind` = `Response`, 0x0D..=0x12) leave as response headers
//! for the completer (`completer_datapath`'s `EV_RESPONSE` fields) while
//! their payload waits in a FIFO; once the completer has decided, one
//! placement command per header says whether the payload (or an atomic
//! ACK's original value) is written to the WQE's local buffer, which a
//! local-write [`MrTranslate`](crate::dma::mr_translate::MrTranslate) checks and
//! splits at page boundaries before the bytes go out as DMA writes (the
//! [`DmaWriteMover`], as in `responder_datapath`). The
//! RTL of the receive split of the model's `Nic::handle` (`frame_kind`) and
//! of the placement in `completer::on_read_response` / `on_atomic_ack`
//! (`completer::place_check`: the SGL through `MrTable::translate_local`
//! with the QP's PD and LOCAL_WRITE, then `write_segments`, or the WQE's
//! local error).
//!
//! # Ports
//!
//! - `clock`; `reset` (synchronous, high): empties the FIFOs and the
//!   placement, clears the counters and starts the MR table sweep (pulse
//!   once after power-up, then wait for `cfg.ready`).
//! - `rx` (AXI-Stream sink, 512/64): Ethernet frames as the MAC gives
//!   them. `rx.tready` drops while the payload FIFO or the header FIFO is
//!   full (see below).
//! - Response headers (valid/ready, `hdr_*`), one per response frame the
//!   parser accepted, in arrival order: `hdr_qpn` (24 bits), and what
//!   `completer_datapath`'s `EV_RESPONSE` takes: `hdr_opcode` (its
//!   `pkt_opcode`), `hdr_psn`, `hdr_has_aeth`, `hdr_aeth_syndrome`,
//!   `hdr_payload_len` (13 bits), `hdr_atomic_orig` (the AtomicAckETH's
//!   original value, 0 without one); `hdr_ce`: the frame was CE-marked
//!   (for DCQCN's notification point). 32 headers are buffered.
//! - Placement command (valid/ready, `cmd_valid` / `cmd_ready`), exactly
//!   one per header taken, in header order: `place_valid` low discards the
//!   frame's payload (the completer dropped the response or placed
//!   nothing); high writes `place_len` bytes of the payload to `place_va`
//!   through L_Key `place_lkey` with the QP's PD `place_pd`, or with
//!   `place_atomic` the 8 bytes of `place_atomic_orig` (little-endian, as
//!   the model's host memory holds a u64) to `place_va`. A READ response's
//!   `place_len` is its payload length (the completer's placement); zero
//!   bytes are placed without a check, as the model's SGL walk does.
//! - Check result (valid/ready, `res_*`), one per command with
//!   `place_valid`, in command order: `res_status` is the [`wc_status`] code
//!   ([`wc_status::SUCCESS`] or [`wc_status::LOC_PROT_ERR`]) the model's
//!   `place_check` gives, `res_mr_status` the MR stage's `STATUS_*`
//!   reason. A refused placement writes nothing (the completer fails the
//!   WQE with `res_status`, the model's `local_error`). An ok result for
//!   a READ response LAST / ONLY or an atomic ACK is given once the last
//!   DMA beat of the placement is in the output register, so a completion
//!   that waits for it follows the data; for a READ response FIRST /
//!   MIDDLE (which completes nothing) it is given as the writer takes the
//!   job, before the writes, so the completer goes on to the next header
//!   while they run. The writer writes placements in order, so the
//!   message's LAST result still follows all of its data.
//!   LocLenErr is not produced: the local buffer is one SGE holding the
//!   whole WQE (the model's `post_send` makes a READ's length the SGL's and
//!   refuses atomics without exactly 8 bytes), and the completer's checks
//!   keep every placement inside the WQE.
//! - `cfg`: the inner MR translation's configuration port
//!   ([`MrConfigPort`](crate::dma::mr_translate::MrConfigPort)), linked through.
//! - `dma` ([`DmaWritePort`]): as `responder_datapath`'s: bursts framed by
//!   `first` / `last`, one request per page segment with `req_addr` /
//!   `req_len` on every beat, data lanes following host addresses
//!   (the byte for host address `x` in lane `x mod 64`, `addr` the beat's
//!   64-byte-aligned address), placements in command order.
//! - `stat_select` (3 bits) / `stat_count` (32): counters, see `STAT_*`.
//! - `cnp_valid` / `cnp_qpn` (24 bits, registered): a CNP (opcode 0x81)
//!   the parser accepted, for a QPN in the table, for DCQCN's reaction
//!   point (one cycle after its record is taken). The CNP is also counted
//!   as not a response.
//!
//! # What happens to a frame
//!
//! A frame the parser drops (malformed, bad ICRC; the codec's checks), a
//! frame that is not a response (requests and CNPs belong to the other
//! receive paths; unknown opcodes) and a response to a QPN beyond the
//! `2^10`-entry table are counted and their payload discarded; the NIC's
//! address, source and P_Key checks belong to the stage in front. Every
//! other frame's header goes to the header FIFO and its payload (if any)
//! stays in the payload FIFO until its placement command: discarded, or
//! checked by the MR stage (one request of `place_len` bytes, LOCAL_WRITE,
//! local key) and written on success, discarded on refusal.
//!
//! # Latency and throughput
//!
//! A header is presented 2 cycles after the parser's record (the parser's
//! [`RECORD_LATENCY`](crate::frame::rx::rx_parser::RECORD_LATENCY) after the frame's
//! last ICRC beat): one to write the FIFO, one for its read. A placement
//! takes the command, the MR round trip (about 7 cycles), then one DMA
//! beat per cycle from the [`DmaWriteMover`], `ceil((va mod 64 + len) /
//! 64)` beats (plus one at a page boundary). A READ FIRST / MIDDLE result
//! comes as the writer takes the job (about 10 cycles after the command
//! when the writer is free; otherwise once the previous placement's last
//! beat is taken), and the next command is taken while the writes run;
//! a LAST / ONLY or atomic result comes after its writes (about 75 cycles
//! for an MTU-4096 READ response, whose frame is 65 beats). So a READ
//! message's placement keeps up with MTU-4096 responses at line rate
//! (the writer's one beat per cycle is the bound) and small ones are
//! bounded by the ~10 cycles per placement.
//!
//! The payload FIFO holds 256 beats (block RAM): four MTU-4096 payloads
//! (64 beats each) waiting for their commands. When it is full the
//! parser's payload input stalls and `rx.tready` drops (the MAC holds the
//! frame); likewise when the header FIFO or the work FIFO is full. A
//! frame never waits for a command of its own header, so the FIFOs drain
//! as long as the completer answers the headers it took.
//!
//! Memory: the payload FIFO, the MR table, the MTT and the parser's
//! buffers in block RAM; the two 32-entry frame FIFOs in LUT RAM.

use crate::codes::wc_status;
use crate::dma::dma_port::DmaWritePort;
use crate::dma::dma_write_mover::DmaWriteMover;
use crate::dma::mr_translate::{MrConfigPortDefault, MrTranslateDefault};
use crate::frame::rx::rx_parser::RxParser;
use crate::primitives::stream::Axis512Sink;
use crate::primitives::stream::PayloadWord;
use crate::primitives::sync_fifo::SyncFifo;
use rust_hdl::prelude::*;

/// QP table address bits (1024 QPs): a higher QPN is not handled here.
pub const QPN_BITS: usize = 10;

/// Counters (`stat_select`): records taken from the parser.
pub const STAT_FRAMES: u64 = 0;
/// Frames the parser dropped (malformed, bad ICRC).
pub const STAT_PARSER_DROPS: u64 = 1;
/// Accepted frames that are not responses, or beyond the QP table.
pub const STAT_NOT_RESPONSES: u64 = 2;
/// Response headers queued for the completer.
pub const STAT_HEADERS: u64 = 3;
/// Placements written (ok results).
pub const STAT_PLACED: u64 = 4;
/// Placements refused by the MR stage (LocProtErr results).
pub const STAT_LOCAL_ERRORS: u64 = 5;
/// DMA write beats transferred.
pub const STAT_DMA_BEATS: u64 = 6;
/// Payload beats discarded.
pub const STAT_DISCARDED_BEATS: u64 = 7;

// `update` writes `res_status` as a literal (`hdl_gen` reads a
// constant's path as a signal name): SUCCESS or LOC_PROT_ERR.
const _: () = assert!(wc_status::SUCCESS == 0 && wc_status::LOC_PROT_ERR == 3);

/// Payload FIFO address bits: 256 beats.
const PAYLOAD_FIFO_BITS: usize = 8;
/// Header and work FIFO address bits: 32 frames.
const FRAME_FIFO_BITS: usize = 5;

/// What `completer_datapath`'s response event takes, with the QPN.
#[derive(Clone, Copy, Debug, Default, PartialEq, LogicStruct)]
pub struct ResponseHeader {
    pub qpn: Bits<24>,
    pub opcode: Bits<8>,
    pub psn: Bits<24>,
    pub has_aeth: Bit,
    pub aeth_syndrome: Bits<8>,
    pub payload_len: Bits<13>,
    pub atomic_orig: Bits<64>,
    /// The frame was CE-marked.
    pub ce: Bit,
}

/// One payload segment's or response's turn at the placement, in frame
/// order: a response waits for its command; anything else with a payload
/// segment has it discarded.
#[derive(Clone, Copy, Debug, Default, PartialEq, LogicStruct)]
pub struct PlacementWork {
    pub response: Bit,
    pub has_payload: Bit,
    /// A READ response FIRST / MIDDLE: its result goes out at the MR's
    /// verdict, not after its writes.
    pub early: Bit,
}

#[derive(LogicBlock, Default)]
pub struct ResponsePlacement {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub rx: Axis512Sink,

    pub hdr_valid: Signal<Out, Bit>,
    pub hdr_ready: Signal<In, Bit>,
    pub hdr_qpn: Signal<Out, Bits<24>>,
    pub hdr_opcode: Signal<Out, Bits<8>>,
    pub hdr_psn: Signal<Out, Bits<24>>,
    pub hdr_has_aeth: Signal<Out, Bit>,
    pub hdr_aeth_syndrome: Signal<Out, Bits<8>>,
    pub hdr_payload_len: Signal<Out, Bits<13>>,
    pub hdr_atomic_orig: Signal<Out, Bits<64>>,
    pub hdr_ce: Signal<Out, Bit>,
    pub cnp_valid: Signal<Out, Bit>,
    pub cnp_qpn: Signal<Out, Bits<24>>,

    pub cmd_valid: Signal<In, Bit>,
    pub cmd_ready: Signal<Out, Bit>,
    pub place_valid: Signal<In, Bit>,
    pub place_atomic: Signal<In, Bit>,
    pub place_atomic_orig: Signal<In, Bits<64>>,
    pub place_lkey: Signal<In, Bits<32>>,
    pub place_va: Signal<In, Bits<64>>,
    pub place_len: Signal<In, Bits<32>>,
    pub place_pd: Signal<In, Bits<32>>,

    pub res_valid: Signal<Out, Bit>,
    pub res_ready: Signal<In, Bit>,
    pub res_status: Signal<Out, Bits<4>>,
    pub res_mr_status: Signal<Out, Bits<3>>,

    pub cfg: MrConfigPortDefault,
    pub dma: DmaWritePort,

    pub stat_select: Signal<In, Bits<3>>,
    pub stat_count: Signal<Out, Bits<32>>,

    parser: RxParser,
    payload_fifo: SyncFifo<PayloadWord, PAYLOAD_FIFO_BITS, 9>,
    header_fifo: SyncFifo<ResponseHeader, FRAME_FIFO_BITS, 6>,
    work_fifo: SyncFifo<PlacementWork, FRAME_FIFO_BITS, 6>,
    mr: MrTranslateDefault,
    writer: DmaWriteMover,

    // ---- receive split
    record_take: Signal<Local, Bit>,
    is_response: Signal<Local, Bit>,
    beyond_table: Signal<Local, Bit>,
    cnp_taken: DFF<Bit>,
    cnp_taken_qpn: DFF<Bits<24>>,

    // ---- placement
    /// 0 idle (take work), 1 wait for the command, 2 MR request, 3 MR
    /// responses, 4 discard a payload segment, 5 present the result,
    /// 6 write, 7 hand the job to the writer once it is free.
    state: DFF<Bits<3>>,
    has_payload: DFF<Bit>,
    early: DFF<Bit>,
    /// The job in the writer is an atomic's value (`atomic` may already
    /// hold the next command's).
    writer_atomic: DFF<Bit>,
    job_offer: Signal<Local, Bit>,
    atomic: DFF<Bit>,
    orig: DFF<Bits<64>>,
    lkey: DFF<Bits<32>>,
    va: DFF<Bits<64>>,
    len: DFF<Bits<32>>,
    pd: DFF<Bits<32>>,
    fault: DFF<Bit>,
    mr_status: DFF<Bits<3>>,
    status: DFF<Bits<4>>,
    then_discard: DFF<Bit>,
    seg0_phys: DFF<Bits<64>>,
    seg0_len: DFF<Bits<13>>,
    two_segments: DFF<Bit>,
    seg1_phys: DFF<Bits<64>>,
    seg1_len: DFF<Bits<13>>,
    mr_beat_fault: Signal<Local, Bit>,
    /// The beat holds a segment, the first / the second.
    mr_seg0: Signal<Local, Bit>,
    mr_seg1: Signal<Local, Bit>,

    // ---- counters
    count_frames: DFF<Bits<32>>,
    count_parser_drops: DFF<Bits<32>>,
    count_not_responses: DFF<Bits<32>>,
    count_headers: DFF<Bits<32>>,
    count_placed: DFF<Bits<32>>,
    count_local_errors: DFF<Bits<32>>,
    count_dma_beats: DFF<Bits<32>>,
    count_discarded: DFF<Bits<32>>,
}

impl Logic for ResponsePlacement {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            state,
            has_payload,
            early,
            writer_atomic,
            atomic,
            orig,
            lkey,
            va,
            len,
            pd,
            fault,
            mr_status,
            status,
            then_discard,
            seg0_phys,
            seg0_len,
            two_segments,
            seg1_phys,
            seg1_len,
            count_frames,
            count_parser_drops,
            count_not_responses,
            cnp_taken,
            cnp_taken_qpn,
            count_headers,
            count_placed,
            count_local_errors,
            count_dma_beats,
            count_discarded
        );
        clock!(
            self,
            clock,
            parser,
            payload_fifo,
            header_fifo,
            work_fifo,
            mr,
            writer
        );
        self.parser.reset.next = self.reset.val();
        self.payload_fifo.reset.next = self.reset.val();
        self.header_fifo.reset.next = self.reset.val();
        self.work_fifo.reset.next = self.reset.val();
        self.mr.reset.next = self.reset.val();
        self.writer.reset.next = self.reset.val();
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

        // ---- the receive split: one record a cycle while both frame
        // FIFOs have room.
        self.is_response.next = (self.parser.record.record.val().opcode >= 0x0D)
            & (self.parser.record.record.val().opcode <= 0x12);
        // (A literal: rust-hdl prints a Rust constant's name into the Verilog.)
        self.beyond_table.next = self.parser.record.record.val().dest_qp.get_bits::<14>(10) != 0;
        self.parser.record.ready.next = !self.header_fifo.full.val() & !self.work_fifo.full.val();
        self.record_take.next = self.parser.record.valid.val() & self.parser.record.ready.val();
        self.header_fifo.data_in.next.qpn = self.parser.record.record.val().dest_qp;
        self.header_fifo.data_in.next.opcode = self.parser.record.record.val().opcode;
        self.header_fifo.data_in.next.psn = self.parser.record.record.val().psn;
        self.header_fifo.data_in.next.has_aeth = self.parser.record.record.val().has_aeth;
        self.header_fifo.data_in.next.aeth_syndrome = self.parser.record.record.val().aeth_syndrome;
        self.header_fifo.data_in.next.payload_len = self.parser.record.record.val().payload_len;
        self.header_fifo.data_in.next.atomic_orig = 0.into();
        self.header_fifo.data_in.next.ce = self.parser.record.record.val().ecn == 3;
        if self.parser.record.record.val().has_atomic_ack_eth {
            self.header_fifo.data_in.next.atomic_orig =
                self.parser.record.record.val().atomic_ack_orig;
        }
        self.work_fifo.data_in.next.response = false;
        self.work_fifo.data_in.next.has_payload = self.parser.record.record.val().has_payload;
        self.work_fifo.data_in.next.early = (self.parser.record.record.val().opcode == 0x0D)
            | (self.parser.record.record.val().opcode == 0x0E);
        self.header_fifo.write.next = false;
        self.work_fifo.write.next = false;
        if self.record_take.val() {
            self.count_frames.d.next = self.count_frames.q.val() + 1;
            if self.parser.record.record.val().drop {
                self.count_parser_drops.d.next = self.count_parser_drops.q.val() + 1;
                self.work_fifo.write.next = self.parser.record.record.val().has_payload;
            } else if !self.is_response.val() | self.beyond_table.val() {
                self.count_not_responses.d.next = self.count_not_responses.q.val() + 1;
                self.work_fifo.write.next = self.parser.record.record.val().has_payload;
            } else {
                self.count_headers.d.next = self.count_headers.q.val() + 1;
                self.header_fifo.write.next = true;
                self.work_fifo.write.next = true;
                self.work_fifo.data_in.next.response = true;
            }
        }

        // ---- headers out
        self.hdr_valid.next = !self.header_fifo.empty.val();
        self.header_fifo.read.next = !self.header_fifo.empty.val() & self.hdr_ready.val();
        self.hdr_qpn.next = self.header_fifo.data_out.val().qpn;
        self.hdr_ce.next = self.header_fifo.data_out.val().ce;
        self.cnp_taken.d.next = self.record_take.val()
            & !self.parser.record.record.val().drop
            & (self.parser.record.record.val().opcode == 0x81)
            & !self.beyond_table.val();
        self.cnp_taken_qpn.d.next = self.parser.record.record.val().dest_qp;
        self.cnp_valid.next = self.cnp_taken.q.val();
        self.cnp_qpn.next = self.cnp_taken_qpn.q.val();
        self.hdr_opcode.next = self.header_fifo.data_out.val().opcode;
        self.hdr_psn.next = self.header_fifo.data_out.val().psn;
        self.hdr_has_aeth.next = self.header_fifo.data_out.val().has_aeth;
        self.hdr_aeth_syndrome.next = self.header_fifo.data_out.val().aeth_syndrome;
        self.hdr_payload_len.next = self.header_fifo.data_out.val().payload_len;
        self.hdr_atomic_orig.next = self.header_fifo.data_out.val().atomic_orig;

        // ---- placement
        self.work_fifo.read.next = false;
        self.cmd_ready.next = false;
        self.res_valid.next = false;
        self.res_status.next = self.status.q.val();
        self.res_mr_status.next = self.mr_status.q.val();
        self.mr.req_valid.next = false;
        self.mr.req_key.next = self.lkey.q.val();
        self.mr.req_va.next = self.va.q.val();
        self.mr.req_len.next = self.len.q.val();
        self.mr.req_pd.next = self.pd.q.val();
        self.mr.req_access.next = bits::<4>(0b0001);
        self.mr.req_remote.next = false;
        self.mr.req_tag.next = 0.into();
        self.mr.resp_ready.next = false;
        self.mr_beat_fault.next = self.mr.resp_valid.val() & (self.mr.resp_status.val() != 0);

        // The writer's input: the FIFO's payload, or an atomic's value in
        // lanes 0..7. Its job is offered from the MR's last response beat
        // on (the segments are all in then; a one-page placement's segment
        // is that beat) until the writer takes it: a READ FIRST / MIDDLE
        // packet's result does not wait for its writes, so the previous
        // placement may still be writing. Payloads reach the writer in
        // FIFO order, one job after the other.
        self.writer.in_valid.next = self.writer_atomic.q.val() | !self.payload_fifo.empty.val();
        self.writer.in_data.next = self.payload_fifo.data_out.val().data;
        if self.writer_atomic.q.val() {
            self.writer.in_data.next = bit_cast::<512, 64>(self.orig.q.val());
        }
        self.payload_fifo.read.next = self.writer.in_ready.val() & !self.writer_atomic.q.val();
        self.mr_seg0.next =
            self.mr.resp_valid.val() & self.mr.resp_has_seg.val() & self.mr.resp_first.val();
        self.mr_seg1.next =
            self.mr.resp_valid.val() & self.mr.resp_has_seg.val() & !self.mr.resp_first.val();
        self.job_offer.next = false;
        self.writer.job_len.next = bit_cast::<13, 32>(self.len.q.val());
        self.writer.job_seg0_addr.next = self.seg0_phys.q.val();
        self.writer.job_seg0_len.next = self.seg0_len.q.val();
        if self.mr_seg0.val() {
            self.writer.job_seg0_addr.next = self.mr.resp_phys.val();
            self.writer.job_seg0_len.next = bit_cast::<13, 32>(self.mr.resp_len.val());
        }
        self.writer.job_two_segments.next = self.two_segments.q.val() | self.mr_seg1.val();
        self.writer.job_seg1_addr.next = self.seg1_phys.q.val();
        self.writer.job_seg1_len.next = self.seg1_len.q.val();
        if self.mr_seg1.val() {
            self.writer.job_seg1_addr.next = self.mr.resp_phys.val();
            self.writer.job_seg1_len.next = bit_cast::<13, 32>(self.mr.resp_len.val());
        }
        self.writer.other.valid.next = false;
        self.writer.other.addr.next = 0.into();
        self.writer.other.data.next = 0.into();
        self.writer.other.keep.next = 0.into();
        self.writer.other.first.next = false;
        self.writer.other.last.next = false;
        self.writer.other.req_addr.next = 0.into();
        self.writer.other.req_len.next = 0.into();

        if self.state.q.val() == 0 {
            if !self.work_fifo.empty.val() {
                self.work_fifo.read.next = true;
                self.has_payload.d.next = self.work_fifo.data_out.val().has_payload;
                self.early.d.next = self.work_fifo.data_out.val().early;
                if self.work_fifo.data_out.val().response {
                    self.state.d.next = bits::<3>(1);
                } else {
                    self.state.d.next = bits::<3>(4);
                }
            }
        } else if self.state.q.val() == 1 {
            self.cmd_ready.next = true;
            if self.cmd_valid.val() {
                self.atomic.d.next = self.place_atomic.val();
                self.orig.d.next = self.place_atomic_orig.val();
                self.lkey.d.next = self.place_lkey.val();
                self.va.d.next = self.place_va.val();
                self.len.d.next = self.place_len.val();
                if self.place_atomic.val() {
                    self.len.d.next = bits::<32>(8);
                }
                self.pd.d.next = self.place_pd.val();
                self.fault.d.next = false;
                self.mr_status.d.next = 0.into();
                self.status.d.next = 0.into();
                self.two_segments.d.next = false;
                self.then_discard.d.next = self.has_payload.q.val();
                if !self.place_valid.val() {
                    if self.has_payload.q.val() {
                        self.state.d.next = bits::<3>(4);
                    } else {
                        self.state.d.next = bits::<3>(0);
                    }
                } else if !self.place_atomic.val() & (self.place_len.val() == 0) {
                    // Zero bytes: the model's SGL walk checks nothing.
                    self.state.d.next = bits::<3>(5);
                } else {
                    self.state.d.next = bits::<3>(2);
                }
            }
        } else if (self.state.q.val() == 2) | (self.state.q.val() == 3) {
            if self.state.q.val() == 2 {
                self.mr.req_valid.next = true;
                if self.mr.req_ready.val() {
                    self.state.d.next = bits::<3>(3);
                }
            }
            self.mr.resp_ready.next = true;
            if self.mr_beat_fault.val() & !self.fault.q.val() {
                self.fault.d.next = true;
                self.mr_status.d.next = self.mr.resp_status.val();
            }
            if self.mr.resp_valid.val() & self.mr.resp_has_seg.val() {
                if self.mr.resp_first.val() {
                    self.seg0_phys.d.next = self.mr.resp_phys.val();
                    self.seg0_len.d.next = bit_cast::<13, 32>(self.mr.resp_len.val());
                } else {
                    self.two_segments.d.next = true;
                    self.seg1_phys.d.next = self.mr.resp_phys.val();
                    self.seg1_len.d.next = bit_cast::<13, 32>(self.mr.resp_len.val());
                }
            }
            if self.mr.resp_valid.val() & self.mr.resp_last.val() {
                if self.fault.q.val() | self.mr_beat_fault.val() {
                    // Nothing written: the WQE fails with LocProtErr.
                    self.status.d.next = bits::<4>(3);
                    self.count_local_errors.d.next = self.count_local_errors.q.val() + 1;
                    self.state.d.next = bits::<3>(5);
                } else {
                    self.then_discard.d.next = false;
                    self.job_offer.next = true;
                    self.state.d.next = bits::<3>(7);
                }
            }
        } else if self.state.q.val() == 7 {
            self.job_offer.next = true;
        } else if self.state.q.val() == 6 {
            if self.writer.job_done.val() {
                self.count_placed.d.next = self.count_placed.q.val() + 1;
                self.state.d.next = bits::<3>(5);
            }
        } else if self.state.q.val() == 5 {
            self.res_valid.next = true;
            if self.res_ready.val() {
                if self.then_discard.q.val() {
                    self.state.d.next = bits::<3>(4);
                } else {
                    self.state.d.next = bits::<3>(0);
                }
            }
        } else if self.state.q.val() == 4 {
            // The writer may still be taking an earlier payload's beats.
            if !self.payload_fifo.empty.val() & !self.writer.busy.val() {
                self.payload_fifo.read.next = true;
                self.count_discarded.d.next = self.count_discarded.q.val() + 1;
                if self.payload_fifo.data_out.val().last {
                    self.state.d.next = bits::<3>(0);
                }
            }
        }

        // The job taken: a READ FIRST / MIDDLE packet's result goes out
        // now (the MR's verdict is all it says; the writer writes in
        // order, so the LAST packet's result, given after its own writes,
        // still follows all of the message's data), any other waits for
        // its writes.
        self.writer.job_valid.next = self.job_offer.val();
        if self.job_offer.val() & self.writer.job_ready.val() {
            self.writer_atomic.d.next = self.atomic.q.val();
            if self.early.q.val() & !self.atomic.q.val() {
                self.count_placed.d.next = self.count_placed.q.val() + 1;
                self.state.d.next = bits::<3>(5);
            } else {
                self.state.d.next = bits::<3>(6);
            }
        }

        // ---- outputs
        DmaWritePort::link(&mut self.dma, &mut self.writer.dma);
        if self.dma.valid.val() & self.dma.ready.val() {
            self.count_dma_beats.d.next = self.count_dma_beats.q.val() + 1;
        }

        self.stat_count.next = self.count_frames.q.val();
        if self.stat_select.val() == 1 {
            self.stat_count.next = self.count_parser_drops.q.val();
        } else if self.stat_select.val() == 2 {
            self.stat_count.next = self.count_not_responses.q.val();
        } else if self.stat_select.val() == 3 {
            self.stat_count.next = self.count_headers.q.val();
        } else if self.stat_select.val() == 4 {
            self.stat_count.next = self.count_placed.q.val();
        } else if self.stat_select.val() == 5 {
            self.stat_count.next = self.count_local_errors.q.val();
        } else if self.stat_select.val() == 6 {
            self.stat_count.next = self.count_dma_beats.q.val();
        } else if self.stat_select.val() == 7 {
            self.stat_count.next = self.count_discarded.q.val();
        }

        if self.reset.val() {
            self.cnp_taken.d.next = false;
            self.state.d.next = bits::<3>(0);
            self.writer_atomic.d.next = false;
            self.count_frames.d.next = 0.into();
            self.count_parser_drops.d.next = 0.into();
            self.count_not_responses.d.next = 0.into();
            self.count_headers.d.next = 0.into();
            self.count_placed.d.next = 0.into();
            self.count_local_errors.d.next = 0.into();
            self.count_dma_beats.d.next = 0.into();
            self.count_discarded.d.next = 0.into();
        }
    }
}
