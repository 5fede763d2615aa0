//! `RequestSegmenter`: the heart of the RTL requester. It turns one send
//! WQE and the PSN to resume from into request packet descriptors, one per
//! cycle: opcode, PSN, AckReq, extension headers and where the payload
//! lies in the message, everything the TX builder and the payload DMA need.
//! Its oracle is `rocenic_model::requester`: every descriptor equals
//! `plan_request` at its PSN, and the window stops a WQE where
//! `window_gate` says the model's requester would wait.
//!
//! # Ports
//!
//! - `clock`; `reset` (synchronous, high): drops the WQE in progress and
//!   the descriptor on the output.
//! - WQE in (valid/ready; the fields are sampled in the accepting cycle):
//!   `wqe_tag` (32 bits, the client's own, e.g. QP and WQE index, returned
//!   on every descriptor), `wqe_kind` (a [`send_op_kind`] code), `wqe_len` (bytes, at most
//!   2^31), `wqe_first_psn` (the WQE's first PSN), `wqe_start_psn` (where
//!   to resume: the first PSN, or one within the WQE after a Go-Back-N
//!   rewind), `wqe_mtu` (path MTU as the IBA code, 1 = 256 .. 5 = 4096),
//!   `wqe_dest_qp`, `wqe_remote_va` / `wqe_rkey` (RETH or AtomicETH),
//!   `wqe_imm` (the immediate of SEND/WRITE with immediate, or the R_Key
//!   that SEND with invalidate invalidates), `wqe_compare` / `wqe_swap_add`
//!   (AtomicETH), `wqe_solicited`, and the send window as it stands:
//!   `wqe_una` (oldest unacknowledged PSN), `wqe_window` (the configured
//!   `max_outstanding_psns`, clamped to 1..=2^22 here as the model does)
//!   and `wqe_ack_req_interval` (AckReq on every n-th packet of a message,
//!   0 for none); `wqe_max_packets` (the grant's cap: the WQE stops after
//!   that many packets, as if the window had stopped it, with `pkt_cut`
//!   and the cursor in `pkt_next_psn`; 0 for no cap).
//! - Descriptors out (valid/ready, registered, full backpressure): `pkt_tag`;
//!   `pkt_packet` (low only for a WQE the window stops before its first
//!   packet: that descriptor carries just `pkt_tag`, `pkt_wqe_end`,
//!   `pkt_cut` and `pkt_next_psn`); `pkt_opcode`, `pkt_psn`, `pkt_dest_qp`,
//!   `pkt_ack_req`, `pkt_solicited`; `pkt_first` / `pkt_last` (the
//!   packet opens / ends the message; a READ request and an atomic are
//!   both); `pkt_has_reth` (`pkt_remote_va`, `pkt_rkey`, `pkt_dma_len`),
//!   `pkt_has_imm` / `pkt_has_ieth` (`pkt_imm`), `pkt_has_atomic`
//!   (`pkt_remote_va`, `pkt_rkey`, `pkt_swap_add`, `pkt_compare`);
//!   `pkt_payload_offset` / `pkt_payload_len` (the payload's bytes within
//!   the message; a READ's offset is where its remaining response bytes
//!   land, its length 0); `pkt_psns` (PSNs consumed: a READ request covers
//!   every remaining response); `pkt_wqe_end` (the WQE's last descriptor:
//!   the message's last packet, or the window stops the WQE after it),
//!   with `pkt_cut` (the window or the packet cap stopped it) and
//!   `pkt_next_psn` (the send cursor after it: the PSN after the WQE, or
//!   the first PSN not sent).
//!   PSNs are mod 2^24.
//!
//! The window rule is the model's: a packet at PSN p consuming k PSNs
//! waits when `max(p + k - una, 0) > window` and `p != una`, and asks for
//! an ACK when `max(p + k - una, 0) >= window`. The packet cap changes no
//! packet (AckReq stays the window's and the interval's), only where the
//! WQE's descriptors end: the model's `segment_grant`.
//!
//! # Latency and throughput
//!
//! A WQE accepted in cycle c presents its first descriptor in cycle c + 2
//! (the WQE register, then the descriptor register), except a WQE resumed
//! after its first PSN whose AckReq interval is not a power of two: a
//! serial divider first finds the packet's place in the interval,
//! [`DIVIDER_CYCLES`] more cycles (Go-Back-N resumes are rare; a power of
//! two is a mask). Descriptors leave at one per cycle while `pkt_ready` is
//! high, across WQEs too: the next WQE is accepted in the cycle the
//! current one's last descriptor is taken, so back-to-back WQEs leave no
//! bubble. `wqe_ready` depends combinationally on `pkt_ready`.
//!
//! Offsets are `i * MTU` by a shift when a WQE is loaded and by adding
//! the MTU per packet; there are no multipliers.

use crate::codes::send_op_kind;
use rust_hdl::prelude::*;

// `update` tells the kinds by literal comparisons (`hdl_gen` reads a
// constant's path as a signal name): the codes module's order.
const _: () = assert!(
    send_op_kind::SEND == 0
        && send_op_kind::SEND_WITH_IMM == 1
        && send_op_kind::SEND_WITH_INV == 2
        && send_op_kind::WRITE == 3
        && send_op_kind::WRITE_WITH_IMM == 4
        && send_op_kind::READ == 5
        && send_op_kind::COMPARE_SWAP == 6
        && send_op_kind::FETCH_ADD == 7
);

/// Cycles from a WQE accepted to its first descriptor presented.
pub const LATENCY: u64 = 2;
/// Extra cycles before the first descriptor of a WQE resumed after its
/// first PSN with an AckReq interval that is not a power of two: one per
/// bit of the 24-bit packet count.
pub const DIVIDER_CYCLES: u64 = 24;

#[derive(LogicBlock, Default)]
pub struct RequestSegmenter {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,

    pub wqe_valid: Signal<In, Bit>,
    pub wqe_ready: Signal<Out, Bit>,
    pub wqe_tag: Signal<In, Bits<32>>,
    pub wqe_kind: Signal<In, Bits<3>>,
    pub wqe_len: Signal<In, Bits<32>>,
    pub wqe_first_psn: Signal<In, Bits<24>>,
    pub wqe_start_psn: Signal<In, Bits<24>>,
    pub wqe_mtu: Signal<In, Bits<3>>,
    pub wqe_dest_qp: Signal<In, Bits<24>>,
    pub wqe_remote_va: Signal<In, Bits<64>>,
    pub wqe_rkey: Signal<In, Bits<32>>,
    pub wqe_imm: Signal<In, Bits<32>>,
    pub wqe_compare: Signal<In, Bits<64>>,
    pub wqe_swap_add: Signal<In, Bits<64>>,
    pub wqe_solicited: Signal<In, Bit>,
    pub wqe_una: Signal<In, Bits<24>>,
    pub wqe_window: Signal<In, Bits<32>>,
    pub wqe_ack_req_interval: Signal<In, Bits<32>>,
    pub wqe_max_packets: Signal<In, Bits<16>>,

    pub pkt_valid: Signal<Out, Bit>,
    pub pkt_ready: Signal<In, Bit>,
    pub pkt_tag: Signal<Out, Bits<32>>,
    pub pkt_packet: Signal<Out, Bit>,
    pub pkt_opcode: Signal<Out, Bits<8>>,
    pub pkt_psn: Signal<Out, Bits<24>>,
    pub pkt_dest_qp: Signal<Out, Bits<24>>,
    pub pkt_ack_req: Signal<Out, Bit>,
    pub pkt_solicited: Signal<Out, Bit>,
    pub pkt_first: Signal<Out, Bit>,
    pub pkt_last: Signal<Out, Bit>,
    pub pkt_has_reth: Signal<Out, Bit>,
    pub pkt_has_imm: Signal<Out, Bit>,
    pub pkt_has_ieth: Signal<Out, Bit>,
    pub pkt_has_atomic: Signal<Out, Bit>,
    pub pkt_remote_va: Signal<Out, Bits<64>>,
    pub pkt_rkey: Signal<Out, Bits<32>>,
    pub pkt_dma_len: Signal<Out, Bits<32>>,
    pub pkt_imm: Signal<Out, Bits<32>>,
    pub pkt_swap_add: Signal<Out, Bits<64>>,
    pub pkt_compare: Signal<Out, Bits<64>>,
    pub pkt_payload_offset: Signal<Out, Bits<32>>,
    pub pkt_payload_len: Signal<Out, Bits<13>>,
    pub pkt_psns: Signal<Out, Bits<24>>,
    pub pkt_wqe_end: Signal<Out, Bit>,
    pub pkt_cut: Signal<Out, Bit>,
    pub pkt_next_psn: Signal<Out, Bits<24>>,

    // The WQE in progress, positioned at its next packet.
    w_valid: DFF<Bit>,
    w_tag: DFF<Bits<32>>,
    w_kind: DFF<Bits<3>>,
    w_len: DFF<Bits<32>>,
    w_mtu: DFF<Bits<13>>,
    w_dest_qp: DFF<Bits<24>>,
    w_remote_va: DFF<Bits<64>>,
    w_rkey: DFF<Bits<32>>,
    w_imm: DFF<Bits<32>>,
    w_compare: DFF<Bits<64>>,
    w_swap_add: DFF<Bits<64>>,
    w_solicited: DFF<Bit>,
    w_una: DFF<Bits<24>>,
    w_window: DFF<Bits<24>>,
    w_interval: DFF<Bits<32>>,
    w_interval_on: DFF<Bit>,
    /// `(i + 1) mod interval` for the packet at index i: AckReq at 0.
    w_phase: DFF<Bits<24>>,
    /// The divider computes `w_phase` of a resumed WQE; nothing leaves.
    w_dividing: DFF<Bit>,
    w_divide_step: DFF<Bits<5>>,
    /// The packet count still to shift into the remainder, MSB first.
    w_dividend: DFF<Bits<24>>,
    w_psn: DFF<Bits<24>>,
    w_first: DFF<Bit>,
    w_offset: DFF<Bits<32>>,
    /// Message bytes from `w_offset` on.
    w_rem: DFF<Bits<32>>,
    /// PSNs from `w_psn` to the WQE's end (a READ request's `psns`).
    w_read_psns: DFF<Bits<24>>,
    /// The grant's packet cap (0: none) and the packets sent of it.
    w_max_packets: DFF<Bits<16>>,
    w_packets: DFF<Bits<16>>,

    // The descriptor register.
    o_valid: DFF<Bit>,
    o_tag: DFF<Bits<32>>,
    o_packet: DFF<Bit>,
    o_opcode: DFF<Bits<8>>,
    o_psn: DFF<Bits<24>>,
    o_dest_qp: DFF<Bits<24>>,
    o_ack_req: DFF<Bit>,
    o_solicited: DFF<Bit>,
    o_first: DFF<Bit>,
    o_last: DFF<Bit>,
    o_has_reth: DFF<Bit>,
    o_has_imm: DFF<Bit>,
    o_has_ieth: DFF<Bit>,
    o_has_atomic: DFF<Bit>,
    o_remote_va: DFF<Bits<64>>,
    o_rkey: DFF<Bits<32>>,
    o_dma_len: DFF<Bits<32>>,
    o_imm: DFF<Bits<32>>,
    o_swap_add: DFF<Bits<64>>,
    o_compare: DFF<Bits<64>>,
    o_payload_offset: DFF<Bits<32>>,
    o_payload_len: DFF<Bits<13>>,
    o_psns: DFF<Bits<24>>,
    o_wqe_end: DFF<Bit>,
    o_cut: DFF<Bit>,
    o_next_psn: DFF<Bits<24>>,

    /// The descriptor register is free or being emptied.
    take: Signal<Local, Bit>,
    /// A WQE is loaded and its phase known: its packet leaves on `take`.
    emit: Signal<Local, Bit>,
    load_count: Signal<Local, Bits<24>>,
    load_interval_pow2: Signal<Local, Bit>,
    divide_partial: Signal<Local, Bits<32>>,
    load: Signal<Local, Bit>,
    // WQE load: where the start PSN sits in the message.
    load_shift: Signal<Local, Bits<4>>,
    load_mtu: Signal<Local, Bits<13>>,
    load_index: Signal<Local, Bits<24>>,
    load_offset: Signal<Local, Bits<32>>,
    load_npsn: Signal<Local, Bits<32>>,
    // The current packet.
    is_send: Signal<Local, Bit>,
    is_write: Signal<Local, Bit>,
    is_read: Signal<Local, Bit>,
    is_atomic: Signal<Local, Bit>,
    is_cmp_swap: Signal<Local, Bit>,
    /// SEND or WRITE with immediate.
    is_imm: Signal<Local, Bit>,
    /// SEND with invalidate.
    is_inv: Signal<Local, Bit>,
    fits: Signal<Local, Bit>,
    msg_last: Signal<Local, Bit>,
    psns: Signal<Local, Bits<24>>,
    in_flight_raw: Signal<Local, Bits<24>>,
    in_flight: Signal<Local, Bits<24>>,
    next_in_flight_raw: Signal<Local, Bits<24>>,
    next_in_flight: Signal<Local, Bits<24>>,
    stop_now: Signal<Local, Bit>,
    stop_next: Signal<Local, Bit>,
    stop_cap: Signal<Local, Bit>,
    window_full: Signal<Local, Bit>,
    wqe_end: Signal<Local, Bit>,
    opcode: Signal<Local, Bits<8>>,
}

impl Logic for RequestSegmenter {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            w_valid,
            w_tag,
            w_kind,
            w_len,
            w_mtu,
            w_dest_qp,
            w_remote_va,
            w_rkey,
            w_imm,
            w_compare,
            w_swap_add,
            w_solicited,
            w_una,
            w_window,
            w_interval,
            w_interval_on,
            w_phase,
            w_dividing,
            w_divide_step,
            w_dividend,
            w_psn,
            w_first,
            w_offset,
            w_rem,
            w_read_psns,
            w_max_packets,
            w_packets,
            o_valid,
            o_tag,
            o_packet,
            o_opcode,
            o_psn,
            o_dest_qp,
            o_ack_req,
            o_solicited,
            o_first,
            o_last,
            o_has_reth,
            o_has_imm,
            o_has_ieth,
            o_has_atomic,
            o_remote_va,
            o_rkey,
            o_dma_len,
            o_imm,
            o_swap_add,
            o_compare,
            o_payload_offset,
            o_payload_len,
            o_psns,
            o_wqe_end,
            o_cut,
            o_next_psn
        );

        // ---- the current packet of the WQE in progress
        // The `send_op_kind` codes.
        self.is_send.next = self.w_kind.q.val() <= 2;
        self.is_write.next = (self.w_kind.q.val() == 3) | (self.w_kind.q.val() == 4);
        self.is_read.next = self.w_kind.q.val() == 5;
        self.is_atomic.next = self.w_kind.q.val() >= 6;
        self.is_cmp_swap.next = self.w_kind.q.val() == 6;
        self.is_imm.next = (self.w_kind.q.val() == 1) | (self.w_kind.q.val() == 4);
        self.is_inv.next = self.w_kind.q.val() == 2;
        self.fits.next = self.w_rem.q.val() <= bit_cast::<32, 13>(self.w_mtu.q.val());
        self.msg_last.next = self.fits.val() | self.is_read.val() | self.is_atomic.val();
        self.psns.next = 1.into();
        if self.is_read.val() {
            self.psns.next = self.w_read_psns.q.val();
        }
        // PSN distances are signed 24-bit; in flight is never below 0.
        self.in_flight_raw.next = self.w_psn.q.val() + self.psns.val() - self.w_una.q.val();
        self.in_flight.next = self.in_flight_raw.val();
        if self.in_flight_raw.val().get_bit(23) {
            self.in_flight.next = 0.into();
        }
        self.next_in_flight_raw.next = self.in_flight_raw.val() + 1;
        self.next_in_flight.next = self.next_in_flight_raw.val();
        if self.next_in_flight_raw.val().get_bit(23) {
            self.next_in_flight.next = 0.into();
        }
        self.window_full.next = self.in_flight.val() >= self.w_window.q.val();
        // Only a WQE's first descriptor can meet a closed window: a later
        // packet's stop ends the WQE one descriptor early (`stop_next`).
        self.stop_now.next = (self.in_flight.val() > self.w_window.q.val())
            & (self.w_psn.q.val() != self.w_una.q.val());
        self.stop_next.next = !self.msg_last.val()
            & (self.next_in_flight.val() > self.w_window.q.val())
            & ((self.w_psn.q.val() + 1) != self.w_una.q.val());
        // The cap ends the grant after its packet like `stop_next`.
        self.stop_cap.next = !self.msg_last.val()
            & (self.w_max_packets.q.val() != 0)
            & ((self.w_packets.q.val() + 1) == self.w_max_packets.q.val());
        self.wqe_end.next =
            self.stop_now.val() | self.msg_last.val() | self.stop_next.val() | self.stop_cap.val();

        // Opcodes as `rocenic_wire::op` numbers them.
        self.opcode.next = 0x01.into(); // SEND_MIDDLE
        if self.is_read.val() {
            self.opcode.next = 0x0C.into(); // RDMA_READ_REQUEST
        } else if self.is_cmp_swap.val() {
            self.opcode.next = 0x13.into(); // COMPARE_SWAP
        } else if self.is_atomic.val() {
            self.opcode.next = 0x14.into(); // FETCH_ADD
        } else if self.is_write.val() {
            if self.w_first.q.val() & self.fits.val() {
                self.opcode.next = 0x0A.into(); // RDMA_WRITE_ONLY
                if self.is_imm.val() {
                    self.opcode.next = 0x0B.into(); // RDMA_WRITE_ONLY_IMM
                }
            } else if self.w_first.q.val() {
                self.opcode.next = 0x06.into(); // RDMA_WRITE_FIRST
            } else if self.fits.val() {
                self.opcode.next = 0x08.into(); // RDMA_WRITE_LAST
                if self.is_imm.val() {
                    self.opcode.next = 0x09.into(); // RDMA_WRITE_LAST_IMM
                }
            } else {
                self.opcode.next = 0x07.into(); // RDMA_WRITE_MIDDLE
            }
        } else if self.w_first.q.val() & self.fits.val() {
            self.opcode.next = 0x04.into(); // SEND_ONLY
            if self.is_imm.val() {
                self.opcode.next = 0x05.into(); // SEND_ONLY_IMM
            } else if self.is_inv.val() {
                self.opcode.next = 0x17.into(); // SEND_ONLY_INV
            }
        } else if self.w_first.q.val() {
            self.opcode.next = 0x00.into(); // SEND_FIRST
        } else if self.fits.val() {
            self.opcode.next = 0x02.into(); // SEND_LAST
            if self.is_imm.val() {
                self.opcode.next = 0x03.into(); // SEND_LAST_IMM
            } else if self.is_inv.val() {
                self.opcode.next = 0x16.into(); // SEND_LAST_INV
            }
        }

        // ---- handshakes
        self.take.next = !self.o_valid.q.val() | self.pkt_ready.val();
        self.emit.next = self.w_valid.q.val() & !self.w_dividing.q.val();
        self.wqe_ready.next =
            !self.w_valid.q.val() | (self.take.val() & self.emit.val() & self.wqe_end.val());
        self.load.next = self.wqe_valid.val() & self.wqe_ready.val();

        // ---- the descriptor register
        if self.take.val() {
            self.o_valid.d.next = self.emit.val();
            self.o_tag.d.next = self.w_tag.q.val();
            self.o_packet.d.next = !self.stop_now.val();
            self.o_opcode.d.next = self.opcode.val();
            self.o_psn.d.next = self.w_psn.q.val();
            self.o_dest_qp.d.next = self.w_dest_qp.q.val();
            self.o_ack_req.d.next = self.msg_last.val()
                | self.window_full.val()
                | (self.w_interval_on.q.val() & (self.w_phase.q.val() == 0));
            self.o_solicited.d.next = (self.is_send.val() | self.is_write.val())
                & self.fits.val()
                & self.w_solicited.q.val();
            self.o_first.d.next = self.w_first.q.val();
            self.o_last.d.next = self.msg_last.val();
            self.o_has_reth.d.next =
                self.is_read.val() | (self.is_write.val() & self.w_first.q.val());
            self.o_has_imm.d.next = self.is_imm.val() & self.fits.val();
            self.o_has_ieth.d.next = self.is_inv.val() & self.fits.val();
            self.o_has_atomic.d.next = self.is_atomic.val();
            self.o_remote_va.d.next = self.w_remote_va.q.val();
            self.o_dma_len.d.next = self.w_len.q.val();
            self.o_payload_offset.d.next = self.w_offset.q.val();
            self.o_payload_len.d.next = 0.into();
            if self.is_read.val() {
                self.o_remote_va.d.next =
                    self.w_remote_va.q.val() + bit_cast::<64, 32>(self.w_offset.q.val());
                self.o_dma_len.d.next = self.w_rem.q.val();
            } else if self.is_atomic.val() {
                self.o_payload_offset.d.next = 0.into();
            } else if self.fits.val() {
                self.o_payload_len.d.next = bit_cast::<13, 32>(self.w_rem.q.val());
            } else {
                self.o_payload_len.d.next = self.w_mtu.q.val();
            }
            self.o_rkey.d.next = self.w_rkey.q.val();
            self.o_imm.d.next = self.w_imm.q.val();
            self.o_swap_add.d.next = self.w_swap_add.q.val();
            self.o_compare.d.next = 0.into();
            if self.is_cmp_swap.val() {
                self.o_compare.d.next = self.w_compare.q.val();
            }
            self.o_psns.d.next = self.psns.val();
            self.o_wqe_end.d.next = self.wqe_end.val();
            self.o_cut.d.next = self.stop_now.val() | self.stop_next.val() | self.stop_cap.val();
            self.o_next_psn.d.next = self.w_psn.q.val() + self.psns.val();
            if self.stop_now.val() {
                self.o_next_psn.d.next = self.w_psn.q.val();
            }
        }
        // ---- step to the next packet, or finish the WQE
        if self.take.val() & self.emit.val() {
            self.w_psn.d.next = self.w_psn.q.val() + 1;
            self.w_first.d.next = false;
            self.w_packets.d.next = self.w_packets.q.val() + 1;
            self.w_phase.d.next = self.w_phase.q.val() + 1;
            if (bit_cast::<32, 24>(self.w_phase.q.val()) + 1) == self.w_interval.q.val() {
                self.w_phase.d.next = 0.into();
            }
            self.w_offset.d.next = self.w_offset.q.val() + bit_cast::<32, 13>(self.w_mtu.q.val());
            self.w_rem.d.next = self.w_rem.q.val() - bit_cast::<32, 13>(self.w_mtu.q.val());
            if self.wqe_end.val() {
                self.w_valid.d.next = false;
            }
        }

        // ---- restoring division, one bit per cycle: w_phase becomes the
        // packet count modulo the interval.
        self.divide_partial.next = (bit_cast::<32, 24>(self.w_phase.q.val()) << 1)
            | bit_cast::<32, 24>(self.w_dividend.q.val() >> 23);
        if self.w_dividing.q.val() {
            self.w_phase.d.next = bit_cast::<24, 32>(self.divide_partial.val());
            if self.divide_partial.val() >= self.w_interval.q.val() {
                self.w_phase.d.next =
                    bit_cast::<24, 32>(self.divide_partial.val() - self.w_interval.q.val());
            }
            self.w_dividend.d.next = self.w_dividend.q.val() << 1;
            self.w_divide_step.d.next = self.w_divide_step.q.val() + 1;
            if self.w_divide_step.q.val() == 23 {
                self.w_dividing.d.next = false;
            }
        }

        // ---- WQE load: the start PSN's packet index, offset and the
        // PSNs a READ request resumed there covers.
        self.load_shift.next = bit_cast::<4, 3>(self.wqe_mtu.val()) + 7;
        self.load_mtu.next = 256.into();
        if self.wqe_mtu.val() == 2 {
            self.load_mtu.next = 512.into();
        } else if self.wqe_mtu.val() == 3 {
            self.load_mtu.next = 1024.into();
        } else if self.wqe_mtu.val() == 4 {
            self.load_mtu.next = 2048.into();
        } else if self.wqe_mtu.val() == 5 {
            self.load_mtu.next = 4096.into();
        }
        self.load_index.next = self.wqe_start_psn.val() - self.wqe_first_psn.val();
        self.load_offset.next = bit_cast::<32, 24>(self.load_index.val()) << self.load_shift.val();
        self.load_npsn.next = (self.wqe_len.val() + bit_cast::<32, 13>(self.load_mtu.val()) - 1)
            >> self.load_shift.val();
        if self.wqe_len.val() == 0 {
            self.load_npsn.next = 1.into();
        }
        self.load_count.next = self.load_index.val() + 1;
        self.load_interval_pow2.next =
            (self.wqe_ack_req_interval.val() & (self.wqe_ack_req_interval.val() - 1)) == 0;
        if self.load.val() {
            self.w_valid.d.next = true;
            self.w_tag.d.next = self.wqe_tag.val();
            self.w_kind.d.next = self.wqe_kind.val();
            self.w_len.d.next = self.wqe_len.val();
            self.w_mtu.d.next = self.load_mtu.val();
            self.w_dest_qp.d.next = self.wqe_dest_qp.val();
            self.w_remote_va.d.next = self.wqe_remote_va.val();
            self.w_rkey.d.next = self.wqe_rkey.val();
            self.w_imm.d.next = self.wqe_imm.val();
            self.w_compare.d.next = self.wqe_compare.val();
            self.w_swap_add.d.next = self.wqe_swap_add.val();
            self.w_solicited.d.next = self.wqe_solicited.val();
            self.w_una.d.next = self.wqe_una.val();
            self.w_window.d.next = bit_cast::<24, 32>(self.wqe_window.val());
            if self.wqe_window.val() == 0 {
                self.w_window.d.next = 1.into();
            } else if self.wqe_window.val() > 0x40_0000 {
                self.w_window.d.next = 0x40_0000.into();
            }
            self.w_interval.d.next = self.wqe_ack_req_interval.val();
            self.w_interval_on.d.next = self.wqe_ack_req_interval.val() != 0;
            // The count's phase: a mask for a power of two (and 0), 1 for
            // a first packet (the interval is then at least 3), else the
            // divider's remainder.
            self.w_dividing.d.next = false;
            self.w_phase.d.next =
                self.load_count.val() & bit_cast::<24, 32>(self.wqe_ack_req_interval.val() - 1);
            if !self.load_interval_pow2.val() {
                if self.load_index.val() == 0 {
                    self.w_phase.d.next = 1.into();
                } else {
                    self.w_dividing.d.next = true;
                    self.w_phase.d.next = 0.into();
                    self.w_divide_step.d.next = 0.into();
                    self.w_dividend.d.next = self.load_count.val();
                }
            }
            self.w_psn.d.next = self.wqe_start_psn.val();
            self.w_first.d.next = self.load_index.val() == 0;
            self.w_offset.d.next = self.load_offset.val();
            self.w_rem.d.next = self.wqe_len.val() - self.load_offset.val();
            self.w_read_psns.d.next =
                bit_cast::<24, 32>(self.load_npsn.val()) - self.load_index.val();
            self.w_max_packets.d.next = self.wqe_max_packets.val();
            self.w_packets.d.next = 0.into();
        }

        self.pkt_valid.next = self.o_valid.q.val();
        self.pkt_tag.next = self.o_tag.q.val();
        self.pkt_packet.next = self.o_packet.q.val();
        self.pkt_opcode.next = self.o_opcode.q.val();
        self.pkt_psn.next = self.o_psn.q.val();
        self.pkt_dest_qp.next = self.o_dest_qp.q.val();
        self.pkt_ack_req.next = self.o_ack_req.q.val();
        self.pkt_solicited.next = self.o_solicited.q.val();
        self.pkt_first.next = self.o_first.q.val();
        self.pkt_last.next = self.o_last.q.val();
        self.pkt_has_reth.next = self.o_has_reth.q.val();
        self.pkt_has_imm.next = self.o_has_imm.q.val();
        self.pkt_has_ieth.next = self.o_has_ieth.q.val();
        self.pkt_has_atomic.next = self.o_has_atomic.q.val();
        self.pkt_remote_va.next = self.o_remote_va.q.val();
        self.pkt_rkey.next = self.o_rkey.q.val();
        self.pkt_dma_len.next = self.o_dma_len.q.val();
        self.pkt_imm.next = self.o_imm.q.val();
        self.pkt_swap_add.next = self.o_swap_add.q.val();
        self.pkt_compare.next = self.o_compare.q.val();
        self.pkt_payload_offset.next = self.o_payload_offset.q.val();
        self.pkt_payload_len.next = self.o_payload_len.q.val();
        self.pkt_psns.next = self.o_psns.q.val();
        self.pkt_wqe_end.next = self.o_wqe_end.q.val();
        self.pkt_cut.next = self.o_cut.q.val();
        self.pkt_next_psn.next = self.o_next_psn.q.val();

        if self.reset.val() {
            self.w_valid.d.next = false;
            self.w_dividing.d.next = false;
            self.o_valid.d.next = false;
        }
    }
}
