//! `PayloadFetch`: a transmit path's packet payload fetch. Each request
//! (one packet: a key, a VA range, the PD and the rights it needs) takes
//! one of 8 packet slots, within a budget of payload bytes in flight; an
//! inner [`MrTranslate`](crate::dma::mr_translate::MrTranslate) checks
//! the range and splits it at page boundaries; one DMA read per page
//! segment fetches it; the tagged, possibly out of order, read data is put
//! back together per packet in a 1024 x 512-bit block RAM; packets leave
//! in request order, their payload realigned to lane 0 on an AXI stream.
//! Used by
//! [`crate::requester::requester_datapath`] (local key, request payloads) and
//! [`crate::responder::response_transmitter`] (R_Key, READ response data).
//!
//! # Ports
//!
//! - `clock`; `reset` (synchronous, high; hold it one cycle): drops
//!   everything in flight and starts the sweeps of the inner MR table
//!   (1024 cycles, `cfg.ready` low) and of the DMA tag counters (16
//!   cycles, `dma.rd_ready` low).
//! - `cfg`: the inner [`MrTranslate`](crate::dma::mr_translate::MrTranslate)'s configuration port
//!   ([`MrConfigPort`](crate::dma::mr_translate::MrConfigPort)), linked through.
//! - Request (valid/ready, combinational ready: a slot free and the
//!   translator ready): `req_key`, `req_va`, `req_len`, `req_pd`,
//!   `req_access`, `req_remote` as [`MrTranslate`](crate::dma::mr_translate::MrTranslate)'s; `req_check` (judge
//!   the range; when low the packet just keeps its place in order),
//!   `req_fetch` (and read its bytes: the packet's payload),
//!   `req_fail` (fail it whatever the table says, e.g. its VA overflowed).
//! - `dma` ([`DmaReadPort`]): read requests (registered) with `dma.req_tag`
//!   0..15 (slot * 2 + page segment), `dma.req_addr`, `dma.req_len`; read
//!   data `dma.rd_tag`, `dma.rd_data` (byte 0 of a request in lane 0 of
//!   its first beat), `dma.rd_last`; beats of one tag in order, tags in
//!   any order.
//! - Head (the oldest packet, once all its data is in and the previous
//!   payload has been read out): `head_valid`, `head_failed` (its check
//!   failed); `head_take` (in: it leaves at this edge), `head_send` (in,
//!   with `head_take`: stream its payload out; low drops it).
//! - `payload` (AXI-Stream out, 512 bits): the payloads of the packets
//!   taken with `head_send`, one frame each (none for an empty one).
//! - `checked_valid`, `checked_failed` (out): a one-cycle pulse per
//!   request, in request order, when its check is decided (long before its
//!   data is in): `checked_failed` as `head_failed` will say of it.
//!
//! # Latency and throughput
//!
//! A request is taken in any cycle a slot is free and the payload in
//! flight stays within [`BUDGET_UNITS`] (20 KiB; a request is always
//! taken when nothing is in flight); a slot is freed when its packet is
//! dropped or has no payload, or its payload has been read out, so up to
//! 8 packets (5 at 4 KiB each) and 16 DMA reads are in flight. Readout is
//! one beat per cycle with about 2 idle cycles between packets (plus 1
//! when a page boundary splits a packet's bytes across two beats). With
//! host reads of latency L cycles the sustained rate is about min(1, n x
//! packet bytes / 64 / (L + 20)) beats per cycle, n the packets in flight
//! (8, or 5 at 4 KiB).

use crate::codes::mr_status;
use crate::dma::dma_port::DmaReadPort;
use crate::dma::mr_translate::{MrConfigPortDefault, MrTranslateDefault};
use crate::primitives::stream::{AxisSource, DATA_BITS, KEEP_BITS};
use crate::primitives::sync_fifo::SyncFifo;
use rust_hdl::prelude::*;

/// Packet slots of the payload buffer (and packets in flight).
pub const SLOTS: u64 = 8;
/// DMA read tags: two page segments per slot.
pub const DMA_TAGS: u64 = 2 * SLOTS;
/// No request is taken that would put more than this many 512-byte units
/// (a packet's length rounded up) in flight, unless none is: 20 KiB, 5
/// packets of 4 KiB. A slot is held from its request to the end of its
/// readout, so on a 100 Gb/s link 5 such packets cover host reads of up
/// to about 280 cycles (one leaves every 83 cycles and lives the read
/// latency plus about 130); what is fetched beyond that only waits for
/// the link, where a Go-Back-N rewind can neither reach nor pass it: its
/// resend went out behind 8 packets (about 590 cycles) before this
/// budget. Small packets are bounded by the 8 slots alone.
pub const BUDGET_UNITS: u64 = 40;

/// A packet's range check and where its payload sits in its slot.
#[derive(Clone, Copy, Debug, Default, PartialEq, LogicStruct)]
pub struct PacketInfo {
    pub failed: Bit,
    /// Bytes of the first page segment (region 0 of the slot).
    pub len_a: Bits<13>,
    /// Bytes of the second page segment (region 1), 0 if none.
    pub len_b: Bits<13>,
}

#[derive(LogicBlock)]
pub struct PayloadFetch {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,

    pub req_valid: Signal<In, Bit>,
    pub req_ready: Signal<Out, Bit>,
    pub req_key: Signal<In, Bits<32>>,
    pub req_va: Signal<In, Bits<64>>,
    pub req_len: Signal<In, Bits<32>>,
    pub req_pd: Signal<In, Bits<32>>,
    pub req_access: Signal<In, Bits<4>>,
    pub req_remote: Signal<In, Bit>,
    pub req_check: Signal<In, Bit>,
    pub req_fetch: Signal<In, Bit>,
    pub req_fail: Signal<In, Bit>,

    pub head_valid: Signal<Out, Bit>,
    pub head_failed: Signal<Out, Bit>,
    pub head_take: Signal<In, Bit>,
    pub head_send: Signal<In, Bit>,

    pub cfg: MrConfigPortDefault,

    pub dma: DmaReadPort,

    pub payload: AxisSource<DATA_BITS, KEEP_BITS>,

    pub checked_valid: Signal<Out, Bit>,
    pub checked_failed: Signal<Out, Bit>,

    translate: MrTranslateDefault,
    infos: SyncFifo<PacketInfo, 3, 4>,
    /// Payload buffer: address {slot, segment, beat}.
    buffer: RAM<Bits<512>, 10>,
    /// Per DMA tag: the buffer beat its next read beat goes to.
    beat_counts: RAM<Bits<6>, 4>,

    // Slots: taken in order at `alloc_slot`, leaving in order at `head_slot`.
    slots_used: DFF<Bits<4>>,
    /// Payload units in flight (see [`BUDGET_UNITS`]) and each slot's (4
    /// bits a slot).
    units_used: DFF<Bits<7>>,
    slot_units: DFF<Bits<32>>,
    alloc_slot: DFF<Bits<3>>,
    head_slot: DFF<Bits<3>>,
    /// Per tag: its page segment has all arrived (or there is none).
    tag_done: DFF<Bits<16>>,

    // Translation responses to DMA requests.
    x_len_a: DFF<Bits<13>>,
    x_failed: DFF<Bit>,
    q_valid: DFF<Bit>,
    q_tag: DFF<Bits<8>>,
    q_addr: DFF<Bits<64>>,
    q_len: DFF<Bits<32>>,

    // DMA read data into the buffer.
    clearing: DFF<Bit>,
    clear_index: DFF<Bits<4>>,
    w_valid: DFF<Bit>,
    w_tag: DFF<Bits<4>>,
    w_data: DFF<Bits<512>>,
    w_last: DFF<Bit>,
    /// The beat counter written at the last edge (forwarded: the RAM read
    /// at that edge may not see it).
    f_valid: DFF<Bit>,
    f_tag: DFF<Bits<4>>,
    f_next: DFF<Bits<6>>,

    // Payload readout.
    rd_busy: DFF<Bit>,
    rd_issuing: DFF<Bit>,
    rd_slot: DFF<Bits<3>>,
    rd_seg: DFF<Bit>,
    rd_beat: DFF<Bits<6>>,
    rd_last_a: DFF<Bits<6>>,
    rd_last_b: DFF<Bits<6>>,
    rd_has_b: DFF<Bit>,
    rd_tail_a: DFF<Bits<7>>,
    rd_tail_b: DFF<Bits<7>>,
    m_valid: DFF<Bit>,
    m_addr: DFF<Bits<10>>,
    m_bytes: DFF<Bits<7>>,
    m_final: DFF<Bit>,
    acc: DFF<Bits<512>>,
    acc_n: DFF<Bits<7>>,
    flush: DFF<Bit>,
    o_valid: DFF<Bit>,
    o_data: DFF<Bits<512>>,
    o_keep: DFF<Bits<64>>,
    o_last: DFF<Bit>,

    ones512: Constant<Bits<512>>,
    ones64: Constant<Bits<64>>,
    status_ok: Constant<Bits<3>>,

    budget_units: Constant<Bits<7>>,

    // Request stage.
    req_units: Signal<Local, Bits<7>>,
    head_units: Signal<Local, Bits<7>>,
    rd_units: Signal<Local, Bits<7>>,
    units_freed: Signal<Local, Bits<7>>,
    t_room: Signal<Local, Bit>,
    t_go: Signal<Local, Bit>,
    // Response stage.
    x_slot: Signal<Local, Bits<3>>,
    x_check: Signal<Local, Bit>,
    x_fetch: Signal<Local, Bit>,
    x_forced: Signal<Local, Bit>,
    x_fail: Signal<Local, Bit>,
    x_seg: Signal<Local, Bit>,
    x_advance: Signal<Local, Bit>,
    x_take: Signal<Local, Bit>,
    x_done_set: Signal<Local, Bits<16>>,
    // Buffer write.
    w_ptr: Signal<Local, Bits<6>>,
    w_next: Signal<Local, Bits<6>>,
    w_done_set: Signal<Local, Bits<16>>,
    // Retire.
    head_done: Signal<Local, Bits<16>>,
    retire: Signal<Local, Bit>,
    free_now: Signal<Local, Bit>,
    free_mask: Signal<Local, Bits<16>>,
    // Readout.
    advance: Signal<Local, Bit>,
    consume: Signal<Local, Bit>,
    issue: Signal<Local, Bit>,
    issue_addr: Signal<Local, Bits<10>>,
    in_masked: Signal<Local, Bits<512>>,
    combined: Signal<Local, Bits<512>>,
    leftover: Signal<Local, Bits<512>>,
    total: Signal<Local, Bits<8>>,
    packet_done: Signal<Local, Bit>,
    slots_freed: Signal<Local, Bits<4>>,
}

impl Default for PayloadFetch {
    fn default() -> Self {
        PayloadFetch {
            clock: Default::default(),
            reset: Default::default(),
            req_valid: Default::default(),
            req_ready: Default::default(),
            req_key: Default::default(),
            req_va: Default::default(),
            req_len: Default::default(),
            req_pd: Default::default(),
            req_access: Default::default(),
            req_remote: Default::default(),
            req_check: Default::default(),
            req_fetch: Default::default(),
            req_fail: Default::default(),
            head_valid: Default::default(),
            head_failed: Default::default(),
            head_take: Default::default(),
            head_send: Default::default(),
            cfg: Default::default(),
            dma: Default::default(),
            payload: Default::default(),
            checked_valid: Default::default(),
            checked_failed: Default::default(),
            translate: Default::default(),
            infos: Default::default(),
            buffer: Default::default(),
            beat_counts: Default::default(),
            slots_used: Default::default(),
            units_used: Default::default(),
            slot_units: Default::default(),
            alloc_slot: Default::default(),
            head_slot: Default::default(),
            tag_done: Default::default(),
            x_len_a: Default::default(),
            x_failed: Default::default(),
            q_valid: Default::default(),
            q_tag: Default::default(),
            q_addr: Default::default(),
            q_len: Default::default(),
            clearing: Default::default(),
            clear_index: Default::default(),
            w_valid: Default::default(),
            w_tag: Default::default(),
            w_data: Default::default(),
            w_last: Default::default(),
            f_valid: Default::default(),
            f_tag: Default::default(),
            f_next: Default::default(),
            rd_busy: Default::default(),
            rd_issuing: Default::default(),
            rd_slot: Default::default(),
            rd_seg: Default::default(),
            rd_beat: Default::default(),
            rd_last_a: Default::default(),
            rd_last_b: Default::default(),
            rd_has_b: Default::default(),
            rd_tail_a: Default::default(),
            rd_tail_b: Default::default(),
            m_valid: Default::default(),
            m_addr: Default::default(),
            m_bytes: Default::default(),
            m_final: Default::default(),
            acc: Default::default(),
            acc_n: Default::default(),
            flush: Default::default(),
            o_valid: Default::default(),
            o_data: Default::default(),
            o_keep: Default::default(),
            o_last: Default::default(),
            ones512: Constant::new(!Bits::<512>::default()),
            ones64: Constant::new(!Bits::<64>::default()),
            status_ok: Constant::new(bits::<3>(mr_status::OK)),
            budget_units: Constant::new(bits::<7>(BUDGET_UNITS)),
            req_units: Default::default(),
            head_units: Default::default(),
            rd_units: Default::default(),
            units_freed: Default::default(),
            t_room: Default::default(),
            t_go: Default::default(),
            x_slot: Default::default(),
            x_check: Default::default(),
            x_fetch: Default::default(),
            x_forced: Default::default(),
            x_fail: Default::default(),
            x_seg: Default::default(),
            x_advance: Default::default(),
            x_take: Default::default(),
            x_done_set: Default::default(),
            w_ptr: Default::default(),
            w_next: Default::default(),
            w_done_set: Default::default(),
            head_done: Default::default(),
            retire: Default::default(),
            free_now: Default::default(),
            free_mask: Default::default(),
            advance: Default::default(),
            consume: Default::default(),
            issue: Default::default(),
            issue_addr: Default::default(),
            in_masked: Default::default(),
            combined: Default::default(),
            leftover: Default::default(),
            total: Default::default(),
            packet_done: Default::default(),
            slots_freed: Default::default(),
        }
    }
}

impl Logic for PayloadFetch {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            slots_used,
            units_used,
            slot_units,
            alloc_slot,
            head_slot,
            tag_done,
            x_len_a,
            x_failed,
            q_valid,
            q_tag,
            q_addr,
            q_len,
            clearing,
            clear_index,
            w_valid,
            w_tag,
            w_data,
            w_last,
            f_valid,
            f_tag,
            f_next,
            rd_busy,
            rd_issuing,
            rd_slot,
            rd_seg,
            rd_beat,
            rd_last_a,
            rd_last_b,
            rd_has_b,
            rd_tail_a,
            rd_tail_b,
            m_valid,
            m_addr,
            m_bytes,
            m_final,
            acc,
            acc_n,
            flush,
            o_valid,
            o_data,
            o_keep,
            o_last
        );
        self.translate.clock.next = self.clock.val();
        self.infos.clock.next = self.clock.val();
        self.buffer.read_clock.next = self.clock.val();
        self.buffer.write_clock.next = self.clock.val();
        self.beat_counts.read_clock.next = self.clock.val();
        self.beat_counts.write_clock.next = self.clock.val();
        self.translate.reset.next = self.reset.val();
        self.infos.reset.next = self.reset.val();

        // ---- MR configuration passes through
        MrConfigPortDefault::link(&mut self.cfg, &mut self.translate.cfg);

        // ---- request: takes a slot and goes to the translator; every
        // request gets one answer there, checked or not, so the answers
        // stay one per slot, in order.
        self.req_units.next = 0.into();
        if self.req_check.val() & self.req_fetch.val() {
            self.req_units.next = bit_cast::<7, 4>(self.req_len.val().get_bits::<4>(9));
            if self.req_len.val().get_bits::<9>(0).any() {
                self.req_units.next = bit_cast::<7, 4>(self.req_len.val().get_bits::<4>(9)) + 1;
            }
            // 4 KiB or more counts as 4 KiB: no packet is longer, and a
            // slot's count must fit its 4 bits, or the budget would leak.
            if self.req_len.val().get_bits::<20>(12).any() {
                self.req_units.next = 8.into();
            }
        }
        self.t_room.next = (self.slots_used.q.val() < 8)
            & ((self.units_used.q.val() == 0)
                | ((self.units_used.q.val() + self.req_units.val()) <= self.budget_units.val()));
        self.translate.req_valid.next = self.req_valid.val() & self.t_room.val();
        self.req_ready.next = self.t_room.val() & self.translate.req_ready.val();
        self.t_go.next = self.req_valid.val() & self.req_ready.val();
        self.translate.req_key.next = self.req_key.val();
        self.translate.req_va.next = self.req_va.val();
        self.translate.req_len.next = 0.into();
        if self.req_check.val() {
            self.translate.req_len.next = self.req_len.val();
        }
        self.translate.req_pd.next = self.req_pd.val();
        self.translate.req_access.next = self.req_access.val();
        self.translate.req_remote.next = self.req_remote.val();
        // Tag: slot (2:0), checked (3), fetched (4), failed regardless (5).
        self.translate.req_tag.next = bit_cast::<16, 3>(self.alloc_slot.q.val());
        if self.req_check.val() {
            self.translate.req_tag.next = bit_cast::<16, 3>(self.alloc_slot.q.val()) | 0x08;
            if self.req_fetch.val() {
                self.translate.req_tag.next = bit_cast::<16, 3>(self.alloc_slot.q.val()) | 0x18;
            }
            if self.req_fail.val() {
                self.translate.req_tag.next = bit_cast::<16, 3>(self.alloc_slot.q.val()) | 0x28;
                if self.req_fetch.val() {
                    self.translate.req_tag.next = bit_cast::<16, 3>(self.alloc_slot.q.val()) | 0x38;
                }
            }
        }
        if self.t_go.val() {
            self.alloc_slot.d.next = self.alloc_slot.q.val() + 1;
            self.slot_units.d.next = (self.slot_units.q.val()
                & !(bits::<32>(15) << (bit_cast::<32, 3>(self.alloc_slot.q.val()) << 2)))
                | (bit_cast::<32, 7>(self.req_units.val() & 15)
                    << (bit_cast::<32, 3>(self.alloc_slot.q.val()) << 2));
        }

        // ---- translation responses: a failed check marks the packet; each
        // page segment of a payload becomes a DMA read (tag = slot * 2 +
        // segment); the last beat files the packet's info.
        self.x_slot.next = self.translate.resp_tag.val().get_bits::<3>(0);
        self.x_check.next = self.translate.resp_tag.val().get_bit(3);
        self.x_fetch.next = self.translate.resp_tag.val().get_bit(4);
        self.x_forced.next = self.translate.resp_tag.val().get_bit(5);
        self.x_fail.next = self.x_check.val()
            & ((self.translate.resp_status.val() != self.status_ok.val()) | self.x_forced.val());
        self.x_seg.next =
            self.x_fetch.val() & !self.x_fail.val() & self.translate.resp_has_seg.val();
        self.x_advance.next = !self.q_valid.q.val() | self.dma.req_ready.val();
        self.translate.resp_ready.next = self.x_advance.val();
        self.x_take.next = self.translate.resp_valid.val() & self.x_advance.val();
        if self.x_advance.val() {
            self.q_valid.d.next = self.x_take.val() & self.x_seg.val();
            self.q_tag.d.next = bit_cast::<8, 3>(self.x_slot.val()) << 1;
            if !self.translate.resp_first.val() {
                self.q_tag.d.next = (bit_cast::<8, 3>(self.x_slot.val()) << 1) | 1;
            }
            self.q_addr.d.next = self.translate.resp_phys.val();
            self.q_len.d.next = self.translate.resp_len.val();
        }
        self.dma.req_valid.next = self.q_valid.q.val();
        self.dma.req_tag.next = self.q_tag.q.val();
        self.dma.req_addr.next = self.q_addr.q.val();
        self.dma.req_len.next = self.q_len.q.val();

        self.infos.write.next = self.x_take.val() & self.translate.resp_last.val();
        self.infos.data_in.next.failed = self.x_fail.val();
        self.infos.data_in.next.len_a = 0.into();
        self.infos.data_in.next.len_b = 0.into();
        if self.x_seg.val() {
            self.infos.data_in.next.len_a = bit_cast::<13, 32>(self.translate.resp_len.val());
        }
        if !self.translate.resp_first.val() {
            self.infos.data_in.next.failed = self.x_fail.val() | self.x_failed.q.val();
            self.infos.data_in.next.len_a = self.x_len_a.q.val();
            if self.x_seg.val() {
                self.infos.data_in.next.len_b = bit_cast::<13, 32>(self.translate.resp_len.val());
            }
        }
        self.checked_valid.next = self.infos.write.val();
        self.checked_failed.next = self.infos.data_in.val().failed;
        if self.x_take.val() & self.translate.resp_first.val() {
            self.x_failed.d.next = self.x_fail.val();
            self.x_len_a.d.next = 0.into();
            if self.x_seg.val() {
                self.x_len_a.d.next = bit_cast::<13, 32>(self.translate.resp_len.val());
            }
        } else if self.x_take.val() {
            self.x_failed.d.next = self.x_failed.q.val() | self.x_fail.val();
        }
        // Segments with no DMA read behind them are done at once: both for
        // a packet without one, the second for a single-page payload.
        self.x_done_set.next = 0.into();
        if self.x_take.val() & self.translate.resp_last.val() {
            if !self.x_seg.val() {
                self.x_done_set.next = bits::<16>(3) << (bit_cast::<16, 3>(self.x_slot.val()) << 1);
            } else if self.translate.resp_first.val() {
                self.x_done_set.next = bits::<16>(2) << (bit_cast::<16, 3>(self.x_slot.val()) << 1);
            }
        }

        // ---- DMA read data into the buffer at {tag, beat of the tag}
        self.dma.rd_ready.next = !self.clearing.q.val();
        self.w_valid.d.next = self.dma.rd_valid.val() & !self.clearing.q.val();
        self.w_tag.d.next = self.dma.rd_tag.val().get_bits::<4>(0);
        self.w_data.d.next = self.dma.rd_data.val();
        self.w_last.d.next = self.dma.rd_last.val();
        self.beat_counts.read_address.next = self.dma.rd_tag.val().get_bits::<4>(0);
        self.w_ptr.next = self.beat_counts.read_data.val();
        if self.f_valid.q.val() & (self.f_tag.q.val() == self.w_tag.q.val()) {
            self.w_ptr.next = self.f_next.q.val();
        }
        self.w_next.next = self.w_ptr.val() + 1;
        if self.w_last.q.val() {
            self.w_next.next = 0.into();
        }
        self.buffer.write_enable.next = self.w_valid.q.val();
        self.buffer.write_address.next =
            (bit_cast::<10, 4>(self.w_tag.q.val()) << 6) | bit_cast::<10, 6>(self.w_ptr.val());
        self.buffer.write_data.next = self.w_data.q.val();
        self.beat_counts.write_enable.next = self.w_valid.q.val();
        self.beat_counts.write_address.next = self.w_tag.q.val();
        self.beat_counts.write_data.next = self.w_next.val();
        self.f_valid.d.next = self.w_valid.q.val();
        self.f_tag.d.next = self.w_tag.q.val();
        self.f_next.d.next = self.w_next.val();
        self.w_done_set.next = 0.into();
        if self.w_valid.q.val() & self.w_last.q.val() {
            self.w_done_set.next = bits::<16>(1) << bit_cast::<16, 4>(self.w_tag.q.val());
        }
        if self.clearing.q.val() {
            self.beat_counts.write_enable.next = true;
            self.beat_counts.write_address.next = self.clear_index.q.val();
            self.beat_counts.write_data.next = 0.into();
            self.f_valid.d.next = false;
            self.clear_index.d.next = self.clear_index.q.val() + 1;
            if self.clear_index.q.val() == 15 {
                self.clearing.d.next = false;
            }
        }
        // ---- payload readout: segment A's beats, then B's, realigned
        // behind A's last bytes through an accumulator of 0..63 bytes.
        self.advance.next = !self.o_valid.q.val() | self.payload.tready.val();
        self.consume.next = self.m_valid.q.val() & self.advance.val() & !self.flush.q.val();
        self.issue.next = self.rd_issuing.q.val() & (!self.m_valid.q.val() | self.consume.val());
        self.issue_addr.next = (bit_cast::<10, 3>(self.rd_slot.q.val()) << 7)
            | bit_cast::<10, 6>(self.rd_beat.q.val());
        if self.rd_seg.q.val() {
            self.issue_addr.next = (bit_cast::<10, 3>(self.rd_slot.q.val()) << 7)
                | 0x40
                | bit_cast::<10, 6>(self.rd_beat.q.val());
        }
        self.buffer.read_address.next = self.m_addr.q.val();
        if self.issue.val() {
            self.buffer.read_address.next = self.issue_addr.val();
            self.m_addr.d.next = self.issue_addr.val();
            self.m_valid.d.next = true;
            self.m_bytes.d.next = 64.into();
            self.m_final.d.next = false;
            self.rd_beat.d.next = self.rd_beat.q.val() + 1;
            if !self.rd_seg.q.val() & (self.rd_beat.q.val() == self.rd_last_a.q.val()) {
                self.m_bytes.d.next = self.rd_tail_a.q.val();
                self.rd_seg.d.next = true;
                self.rd_beat.d.next = 0.into();
                if !self.rd_has_b.q.val() {
                    self.m_final.d.next = true;
                    self.rd_issuing.d.next = false;
                }
            }
            if self.rd_seg.q.val() & (self.rd_beat.q.val() == self.rd_last_b.q.val()) {
                self.m_bytes.d.next = self.rd_tail_b.q.val();
                self.m_final.d.next = true;
                self.rd_issuing.d.next = false;
            }
        } else if self.consume.val() {
            self.m_valid.d.next = false;
        }

        self.in_masked.next = self.buffer.read_data.val()
            & (self.ones512.val()
                >> ((bits::<10>(64) - bit_cast::<10, 7>(self.m_bytes.q.val())) << 3));
        self.combined.next = self.acc.q.val()
            | (self.in_masked.val() << (bit_cast::<10, 7>(self.acc_n.q.val()) << 3));
        self.leftover.next = 0.into();
        if self.acc_n.q.val() != 0 {
            self.leftover.next = self.in_masked.val()
                >> ((bits::<10>(64) - bit_cast::<10, 7>(self.acc_n.q.val())) << 3);
        }
        self.total.next =
            bit_cast::<8, 7>(self.acc_n.q.val()) + bit_cast::<8, 7>(self.m_bytes.q.val());
        self.packet_done.next = false;
        if self.advance.val() {
            self.o_valid.d.next = false;
        }
        if self.flush.q.val() & self.advance.val() {
            self.o_valid.d.next = true;
            self.o_data.d.next = self.acc.q.val();
            self.o_keep.d.next =
                self.ones64.val() >> (bits::<7>(64) - bit_cast::<7, 7>(self.acc_n.q.val()));
            self.o_last.d.next = true;
            self.flush.d.next = false;
            self.acc.d.next = 0.into();
            self.acc_n.d.next = 0.into();
            self.packet_done.next = true;
        } else if self.consume.val() {
            if (self.total.val() >= 64) | self.m_final.q.val() {
                self.o_valid.d.next = true;
                self.o_data.d.next = self.combined.val();
                self.o_keep.d.next = self.ones64.val();
                if self.total.val() < 64 {
                    self.o_keep.d.next =
                        self.ones64.val() >> (bits::<7>(64) - bit_cast::<7, 8>(self.total.val()));
                }
                self.o_last.d.next = self.m_final.q.val() & (self.total.val() <= 64);
                self.acc.d.next = self.leftover.val();
                self.acc_n.d.next = bit_cast::<7, 8>(self.total.val() - 64);
                if self.m_final.q.val() {
                    if self.total.val() > 64 {
                        self.flush.d.next = true;
                    } else {
                        self.acc.d.next = 0.into();
                        self.acc_n.d.next = 0.into();
                        self.packet_done.next = true;
                    }
                }
            } else {
                self.acc.d.next = self.combined.val();
                self.acc_n.d.next = bit_cast::<7, 8>(self.total.val());
            }
        }
        self.payload.tvalid.next = self.o_valid.q.val();
        self.payload.tdata.next = self.o_data.q.val();
        self.payload.tkeep.next = self.o_keep.q.val();
        self.payload.tlast.next = self.o_last.q.val();

        // ---- head: the oldest packet, once its data is in, leaves (its
        // readout starts) or is dropped.
        self.head_done.next =
            self.tag_done.q.val() >> (bit_cast::<16, 3>(self.head_slot.q.val()) << 1);
        self.head_valid.next = !self.infos.empty.val()
            & (self.head_done.val().get_bits::<2>(0) == 3)
            & (!self.rd_busy.q.val() | self.packet_done.val());
        self.head_failed.next = self.infos.data_out.val().failed;
        self.retire.next = self.head_valid.val() & self.head_take.val();
        self.infos.read.next = self.retire.val();
        self.free_now.next =
            self.retire.val() & (!self.head_send.val() | (self.infos.data_out.val().len_a == 0));
        if self.packet_done.val() {
            self.rd_busy.d.next = false;
        }
        if self.retire.val() & self.head_send.val() & (self.infos.data_out.val().len_a != 0) {
            self.rd_busy.d.next = true;
            self.rd_issuing.d.next = true;
            self.rd_slot.d.next = self.head_slot.q.val();
            self.rd_seg.d.next = false;
            self.rd_beat.d.next = 0.into();
            self.rd_last_a.d.next = bit_cast::<6, 13>((self.infos.data_out.val().len_a - 1) >> 6);
            self.rd_tail_a.d.next =
                bit_cast::<7, 13>(((self.infos.data_out.val().len_a - 1) & 63) + 1);
            self.rd_has_b.d.next = self.infos.data_out.val().len_b != 0;
            self.rd_last_b.d.next = bit_cast::<6, 13>((self.infos.data_out.val().len_b - 1) >> 6);
            self.rd_tail_b.d.next =
                bit_cast::<7, 13>(((self.infos.data_out.val().len_b - 1) & 63) + 1);
        }
        if self.retire.val() {
            self.head_slot.d.next = self.head_slot.q.val() + 1;
        }

        // ---- slots: taken by the translate stage, freed at retire (no
        // payload to read) or when the readout is done.
        self.free_mask.next = 0.into();
        if self.packet_done.val() {
            self.free_mask.next = bits::<16>(3) << (bit_cast::<16, 3>(self.rd_slot.q.val()) << 1);
        } else if self.free_now.val() {
            self.free_mask.next = bits::<16>(3) << (bit_cast::<16, 3>(self.head_slot.q.val()) << 1);
        }
        if self.packet_done.val() & self.free_now.val() {
            // Two slots leave at once: the one read out and the next head.
            self.free_mask.next = (bits::<16>(3) << (bit_cast::<16, 3>(self.rd_slot.q.val()) << 1))
                | (bits::<16>(3) << (bit_cast::<16, 3>(self.head_slot.q.val()) << 1));
        }
        self.tag_done.d.next = (self.tag_done.q.val() & !self.free_mask.val())
            | self.x_done_set.val()
            | self.w_done_set.val();
        // Slots taken minus slots freed this cycle (up to two leave).
        self.slots_freed.next = 0.into();
        if self.packet_done.val() & self.free_now.val() {
            self.slots_freed.next = 2.into();
        } else if self.packet_done.val() | self.free_now.val() {
            self.slots_freed.next = 1.into();
        }
        self.slots_used.d.next = self.slots_used.q.val() - self.slots_freed.val();
        if self.t_go.val() {
            self.slots_used.d.next = self.slots_used.q.val() + 1 - self.slots_freed.val();
        }
        self.head_units.next = bit_cast::<7, 32>(
            (self.slot_units.q.val() >> (bit_cast::<32, 3>(self.head_slot.q.val()) << 2)) & 15,
        );
        self.rd_units.next = bit_cast::<7, 32>(
            (self.slot_units.q.val() >> (bit_cast::<32, 3>(self.rd_slot.q.val()) << 2)) & 15,
        );
        self.units_freed.next = 0.into();
        if self.packet_done.val() {
            self.units_freed.next = self.rd_units.val();
        }
        if self.free_now.val() {
            self.units_freed.next = self.units_freed.val() + self.head_units.val();
        }
        self.units_used.d.next = self.units_used.q.val() - self.units_freed.val();
        if self.t_go.val() {
            self.units_used.d.next =
                self.units_used.q.val() + self.req_units.val() - self.units_freed.val();
        }

        if self.reset.val() {
            self.slots_used.d.next = 0.into();
            self.units_used.d.next = 0.into();
            self.alloc_slot.d.next = 0.into();
            self.head_slot.d.next = 0.into();
            self.tag_done.d.next = 0.into();
            self.q_valid.d.next = false;
            self.clearing.d.next = true;
            self.clear_index.d.next = 0.into();
            self.w_valid.d.next = false;
            self.f_valid.d.next = false;
            self.rd_busy.d.next = false;
            self.rd_issuing.d.next = false;
            self.m_valid.d.next = false;
            self.acc.d.next = 0.into();
            self.acc_n.d.next = 0.into();
            self.flush.d.next = false;
            self.o_valid.d.next = false;
        }
    }
}
