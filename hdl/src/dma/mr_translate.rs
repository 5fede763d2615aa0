//! `MrTranslate`: DMA-to-MR translation with every protection check in
//! hardware — the RTL of `rocenic_model::mr::MrTable::translate_remote` /
//! `translate_local`, which is its oracle.
//!
//! Two synchronous-read RAMs that map to block RAM hold the state:
//!
//! - the MR table, `2^MR_BITS` entries of [`MrRamEntry`] (state, 8-bit key
//!   variant, PD, base VA, length, access flags, page shift, MTT base;
//!   211 bits), indexed by `key >> 8`;
//! - the MTT, `2^MTT_BITS` entries of one 64-bit host physical page address;
//!   an MR's pages sit at consecutive entries from its MTT base (wrapping
//!   at `2^MTT_BITS`).
//!
//! The NIC's defaults are 1024 MRs and 16384 MTT entries
//! ([`MrTranslateDefault`]).
//!
//! # Ports
//!
//! - `clock`; `reset` (synchronous, high): empties the pipeline and starts
//!   a sweep that writes every MR table entry free, `2^MR_BITS` cycles
//!   during which `cfg.ready` and `req_ready` are low. Pulse it once after
//!   power-up: block RAM content is otherwise undefined.
//! - `cfg` ([`MrConfigPort`], driver side; Verilog `cfg$mr_write` ..),
//!   ignored while `cfg.ready` is low: `cfg.mr_write` writes
//!   `cfg.mr_state` (a [`mr_state`] code; 3 reads as free), `cfg.mr_variant`,
//!   `cfg.mr_pd`, `cfg.mr_base_va`, `cfg.mr_len`, `cfg.mr_access`
//!   (`Access` bits), `cfg.mr_page_shift` (12..=21) and `cfg.mr_mtt_base`
//!   to entry `cfg.mr_index`; `cfg.mtt_write` writes `cfg.mtt_addr` to MTT
//!   entry `cfg.mtt_index`. Both may write in the same cycle. A request
//!   accepted after the writing edge sees the write.
//! - Requests (valid/ready): `req_key` (L_Key or R_Key), `req_va`,
//!   `req_len` (bytes, 32 bits as in a RETH), `req_pd` (the QP's PD),
//!   `req_access` (rights needed: `Access` bits; `NONE` for a local read),
//!   `req_remote` (an R_Key access, which must need a remote right) and a
//!   16-bit `req_tag` returned with the response.
//! - Responses (valid/ready): one or more beats per request, in request
//!   order, each carrying the request's `resp_tag` and `resp_status`
//!   (a [`mr_status`] code: [`mr_status::OK`] or the model's `MrError`) and `resp_first` / `resp_last`. An ok request of
//!   length n > 0 gets one beat per page it touches, with `resp_has_seg`
//!   high, the segment's host address `resp_phys` and length `resp_len`
//!   (never crossing a page of the MR), in address order. A refused or
//!   zero-length request gets one beat with `resp_has_seg` low and
//!   `resp_phys`/`resp_len` zero. The status rides on every beat (rather
//!   than in a beat of its own) so that a one-page request costs one beat
//!   and the block keeps up with one request per cycle.
//!
//! Checks, in the model's order: index beyond the table or entry free →
//! invalid key; variant ≠ `key & 0xff` → stale key; invalidated; PD;
//! access (`entry.access ⊇ need`, and a remote access must need a remote
//! right); bounds (length > 0 only: `va + len` overflowing 64 bits,
//! `va < base` or `va + len > base + len_mr`, in 65-bit arithmetic).
//! Zero-length requests are judged on key, state, PD and access only.
//!
//! # Latency and throughput
//!
//! The first response beat of a request accepted in cycle c is presented
//! in cycle c + 5 (five register stages: A MR table read, B registered
//! entry, S checks done / segment sequencer, O MTT read, P page address +
//! offset) when the response stream is not stalled. The block
//! accepts one request per cycle while every request needs a single beat
//! (one page touched, refused or zero length) and produces one segment
//! per cycle otherwise: a request of n > 1 beats holds the request stream
//! for n - 1 cycles. `req_ready` depends combinationally on `resp_ready`
//! (one global stall for the pipeline); put a register slice in front of
//! the block if that path gets long.
//!
//! The block RAMs are read again at the held address while the pipeline
//! stalls, so a stalled request never loses its table entry.

use crate::codes::{mr_state, mr_status};
use rust_hdl::prelude::*;

// `update` tells the entry states by literal comparisons (`hdl_gen`
// reads a constant's path as a signal name): the codes module's values.
const _: () = assert!(mr_state::FREE == 0 && mr_state::INVALIDATED == 2);

/// Remote rights (`REMOTE_WRITE | REMOTE_READ | REMOTE_ATOMIC`).
const REMOTE_ANY: u64 = 0b1110;
/// Smallest page shift; the datapath shifts by `page_shift - 12` after a
/// constant shift of 12, so its shifters have 16 positions, not 32.
const MIN_PAGE_SHIFT: u64 = 12;

/// One MR table word as the block RAM holds it.
#[derive(Clone, Copy, Debug, Default, PartialEq, LogicStruct)]
pub struct MrRamEntry {
    pub state: Bits<2>,
    pub variant: Bits<8>,
    pub pd: Bits<32>,
    pub base_va: Bits<64>,
    pub len: Bits<64>,
    pub access: Bits<4>,
    pub page_shift: Bits<5>,
    /// Zero-extended from `MTT_BITS`; a fixed width keeps the word one type
    /// for every table size.
    pub mtt_base: Bits<32>,
}

/// The MR configuration port: how the driver writes an MR table entry and
/// an MTT entry (both in the same cycle if it likes), as seen from the
/// block that owns the tables. `ready` is low during the reset sweep, when
/// writes are ignored. A composite that contains an [`MrTranslate`] declares
/// the same port and `link`s it to the inner one, so the Verilog ports are
/// `cfg$mr_write` .. at every level.
#[derive(Clone, Debug, Default, LogicInterface)]
pub struct MrConfigPort<const MR_BITS: usize, const MTT_BITS: usize> {
    pub ready: Signal<Out, Bit>,
    /// Write `mr_state` .. `mr_mtt_base` to MR table entry `mr_index`.
    pub mr_write: Signal<In, Bit>,
    pub mr_index: Signal<In, Bits<MR_BITS>>,
    /// A [`mr_state`] code; 3 reads as free.
    pub mr_state: Signal<In, Bits<2>>,
    pub mr_variant: Signal<In, Bits<8>>,
    pub mr_pd: Signal<In, Bits<32>>,
    pub mr_base_va: Signal<In, Bits<64>>,
    pub mr_len: Signal<In, Bits<64>>,
    /// `Access` bits.
    pub mr_access: Signal<In, Bits<4>>,
    /// 12..=21.
    pub mr_page_shift: Signal<In, Bits<5>>,
    pub mr_mtt_base: Signal<In, Bits<MTT_BITS>>,
    /// Write `mtt_addr` (a host page address) to MTT entry `mtt_index`.
    pub mtt_write: Signal<In, Bit>,
    pub mtt_index: Signal<In, Bits<MTT_BITS>>,
    pub mtt_addr: Signal<In, Bits<64>>,
}

/// The NIC's configuration port: 1024 MRs, 16384 MTT entries.
pub type MrConfigPortDefault = MrConfigPort<10, 14>;

/// The NIC's sizes: 1024 MRs, 16384 MTT entries.
pub type MrTranslateDefault = MrTranslate<10, 14>;

/// `MR_BITS`: MR table address bits (`2^MR_BITS` MRs, at most 24);
/// `MTT_BITS`: MTT address bits.
#[derive(LogicBlock)]
pub struct MrTranslate<const MR_BITS: usize, const MTT_BITS: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,

    pub cfg: MrConfigPort<MR_BITS, MTT_BITS>,

    pub req_valid: Signal<In, Bit>,
    pub req_ready: Signal<Out, Bit>,
    pub req_key: Signal<In, Bits<32>>,
    pub req_va: Signal<In, Bits<64>>,
    pub req_len: Signal<In, Bits<32>>,
    pub req_pd: Signal<In, Bits<32>>,
    pub req_access: Signal<In, Bits<4>>,
    pub req_remote: Signal<In, Bit>,
    pub req_tag: Signal<In, Bits<16>>,

    pub resp_valid: Signal<Out, Bit>,
    pub resp_ready: Signal<In, Bit>,
    pub resp_tag: Signal<Out, Bits<16>>,
    pub resp_status: Signal<Out, Bits<3>>,
    pub resp_first: Signal<Out, Bit>,
    pub resp_last: Signal<Out, Bit>,
    pub resp_has_seg: Signal<Out, Bit>,
    pub resp_phys: Signal<Out, Bits<64>>,
    pub resp_len: Signal<Out, Bits<32>>,

    mr_table: RAM<MrRamEntry, MR_BITS>,
    mtt: RAM<Bits<64>, MTT_BITS>,

    clearing: DFF<Bit>,
    clear_index: DFF<Bits<MR_BITS>>,

    // Stage A: request accepted; its MR table read is in flight.
    a_valid: DFF<Bit>,
    a_key: DFF<Bits<32>>,
    a_va: DFF<Bits<64>>,
    a_len: DFF<Bits<32>>,
    a_end: DFF<Bits<65>>,
    a_pd: DFF<Bits<32>>,
    a_need: DFF<Bits<4>>,
    a_remote: DFF<Bit>,
    a_tag: DFF<Bits<16>>,

    // Stage B: the entry registered beside the request.
    b_valid: DFF<Bit>,
    b_entry: DFF<MrRamEntry>,
    b_key: DFF<Bits<32>>,
    b_va: DFF<Bits<64>>,
    b_len: DFF<Bits<32>>,
    b_end: DFF<Bits<65>>,
    b_pd: DFF<Bits<32>>,
    b_need: DFF<Bits<4>>,
    b_remote: DFF<Bit>,
    b_tag: DFF<Bits<16>>,

    // Stage S: the segment sequencer; holds the next beat of a response.
    s_valid: DFF<Bit>,
    s_tag: DFF<Bits<16>>,
    s_status: DFF<Bits<3>>,
    s_has_seg: DFF<Bit>,
    s_first: DFF<Bit>,
    s_mtt_index: DFF<Bits<MTT_BITS>>,
    s_in_page: DFF<Bits<22>>,
    /// Bytes from `s_in_page` to the end of its page.
    s_room: DFF<Bits<22>>,
    /// Bytes of the request not yet in a beat.
    s_rem: DFF<Bits<32>>,
    s_page_size: DFF<Bits<22>>,

    // Stage O: one beat; its MTT read is in flight.
    o_valid: DFF<Bit>,
    o_tag: DFF<Bits<16>>,
    o_status: DFF<Bits<3>>,
    o_has_seg: DFF<Bit>,
    o_first: DFF<Bit>,
    o_last: DFF<Bit>,
    o_mtt_index: DFF<Bits<MTT_BITS>>,
    o_in_page: DFF<Bits<22>>,
    o_len: DFF<Bits<32>>,

    // Stage P: the response beat.
    p_valid: DFF<Bit>,
    p_tag: DFF<Bits<16>>,
    p_status: DFF<Bits<3>>,
    p_has_seg: DFF<Bit>,
    p_first: DFF<Bit>,
    p_last: DFF<Bit>,
    p_phys: DFF<Bits<64>>,
    p_len: DFF<Bits<32>>,

    /// Key bits above the index field of a table this size.
    key_beyond_table: Constant<Bits<32>>,
    last_index: Constant<Bits<MR_BITS>>,
    free_entry: Constant<MrRamEntry>,
    one22: Constant<Bits<22>>,
    remote_any: Constant<Bits<4>>,
    min_page_shift: Constant<Bits<5>>,
    status_ok: Constant<Bits<3>>,
    status_invalid_key: Constant<Bits<3>>,
    status_stale_key: Constant<Bits<3>>,
    status_invalidated: Constant<Bits<3>>,
    status_pd_mismatch: Constant<Bits<3>>,
    status_access_denied: Constant<Bits<3>>,
    status_out_of_bounds: Constant<Bits<3>>,

    /// The output register is free or being emptied: the back end moves.
    advance: Signal<Local, Bit>,
    /// Stage S takes a new request (it is empty or on its last beat).
    s_take: Signal<Local, Bit>,
    /// Stages A and B move.
    front_advance: Signal<Local, Bit>,
    entry: Signal<Local, MrRamEntry>,
    limit: Signal<Local, Bits<65>>,
    out_of_bounds: Signal<Local, Bit>,
    check_status: Signal<Local, Bits<3>>,
    page_shift_rel: Signal<Local, Bits<4>>,
    page_size: Signal<Local, Bits<22>>,
    in_page: Signal<Local, Bits<22>>,
    page_offset: Signal<Local, Bits<MTT_BITS>>,
    s_fits: Signal<Local, Bit>,
    s_last: Signal<Local, Bit>,
    s_seg_len: Signal<Local, Bits<32>>,
}

impl<const MR_BITS: usize, const MTT_BITS: usize> Default for MrTranslate<MR_BITS, MTT_BITS> {
    fn default() -> Self {
        assert!((1..=24).contains(&MR_BITS), "the key index is 24 bits");
        assert!(
            (1..=32).contains(&MTT_BITS),
            "MTT base is stored in 32 bits"
        );
        let status = |s: u64| Constant::new(bits::<3>(s));
        MrTranslate {
            clock: Default::default(),
            reset: Default::default(),
            cfg: Default::default(),
            req_valid: Default::default(),
            req_ready: Default::default(),
            req_key: Default::default(),
            req_va: Default::default(),
            req_len: Default::default(),
            req_pd: Default::default(),
            req_access: Default::default(),
            req_remote: Default::default(),
            req_tag: Default::default(),
            resp_valid: Default::default(),
            resp_ready: Default::default(),
            resp_tag: Default::default(),
            resp_status: Default::default(),
            resp_first: Default::default(),
            resp_last: Default::default(),
            resp_has_seg: Default::default(),
            resp_phys: Default::default(),
            resp_len: Default::default(),
            mr_table: Default::default(),
            mtt: Default::default(),
            clearing: Default::default(),
            clear_index: Default::default(),
            a_valid: Default::default(),
            a_key: Default::default(),
            a_va: Default::default(),
            a_len: Default::default(),
            a_end: Default::default(),
            a_pd: Default::default(),
            a_need: Default::default(),
            a_remote: Default::default(),
            a_tag: Default::default(),
            b_valid: Default::default(),
            b_entry: Default::default(),
            b_key: Default::default(),
            b_va: Default::default(),
            b_len: Default::default(),
            b_end: Default::default(),
            b_pd: Default::default(),
            b_need: Default::default(),
            b_remote: Default::default(),
            b_tag: Default::default(),
            s_valid: Default::default(),
            s_tag: Default::default(),
            s_status: Default::default(),
            s_has_seg: Default::default(),
            s_first: Default::default(),
            s_mtt_index: Default::default(),
            s_in_page: Default::default(),
            s_room: Default::default(),
            s_rem: Default::default(),
            s_page_size: Default::default(),
            o_valid: Default::default(),
            o_tag: Default::default(),
            o_status: Default::default(),
            o_has_seg: Default::default(),
            o_first: Default::default(),
            o_last: Default::default(),
            o_mtt_index: Default::default(),
            o_in_page: Default::default(),
            o_len: Default::default(),
            p_valid: Default::default(),
            p_tag: Default::default(),
            p_status: Default::default(),
            p_has_seg: Default::default(),
            p_first: Default::default(),
            p_last: Default::default(),
            p_phys: Default::default(),
            p_len: Default::default(),
            key_beyond_table: Constant::new(bits::<32>(
                (u32::MAX as u64) << (8 + MR_BITS) & u32::MAX as u64,
            )),
            last_index: Constant::new(bits::<MR_BITS>((1u64 << MR_BITS) - 1)),
            free_entry: Constant::new(MrRamEntry::default()),
            one22: Constant::new(bits::<22>(1)),
            remote_any: Constant::new(bits::<4>(REMOTE_ANY)),
            min_page_shift: Constant::new(bits::<5>(MIN_PAGE_SHIFT)),
            status_ok: status(mr_status::OK),
            status_invalid_key: status(mr_status::INVALID_KEY),
            status_stale_key: status(mr_status::STALE_KEY),
            status_invalidated: status(mr_status::INVALIDATED),
            status_pd_mismatch: status(mr_status::PD_MISMATCH),
            status_access_denied: status(mr_status::ACCESS_DENIED),
            status_out_of_bounds: status(mr_status::OUT_OF_BOUNDS),
            advance: Default::default(),
            s_take: Default::default(),
            front_advance: Default::default(),
            entry: Default::default(),
            limit: Default::default(),
            out_of_bounds: Default::default(),
            check_status: Default::default(),
            page_shift_rel: Default::default(),
            page_size: Default::default(),
            in_page: Default::default(),
            page_offset: Default::default(),
            s_fits: Default::default(),
            s_last: Default::default(),
            s_seg_len: Default::default(),
        }
    }
}

impl<const MR_BITS: usize, const MTT_BITS: usize> Logic for MrTranslate<MR_BITS, MTT_BITS> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            clearing,
            clear_index,
            a_valid,
            a_key,
            a_va,
            a_len,
            a_end,
            a_pd,
            a_need,
            a_remote,
            a_tag,
            b_valid,
            b_entry,
            b_key,
            b_va,
            b_len,
            b_end,
            b_pd,
            b_need,
            b_remote,
            b_tag,
            s_valid,
            s_tag,
            s_status,
            s_has_seg,
            s_first,
            s_mtt_index,
            s_in_page,
            s_room,
            s_rem,
            s_page_size,
            o_valid,
            o_tag,
            o_status,
            o_has_seg,
            o_first,
            o_last,
            o_mtt_index,
            o_in_page,
            o_len,
            p_valid,
            p_tag,
            p_status,
            p_has_seg,
            p_first,
            p_last,
            p_phys,
            p_len
        );
        self.mr_table.read_clock.next = self.clock.val();
        self.mr_table.write_clock.next = self.clock.val();
        self.mtt.read_clock.next = self.clock.val();
        self.mtt.write_clock.next = self.clock.val();

        // ---- stall control
        self.advance.next = !self.p_valid.q.val() | self.resp_ready.val();
        // S's current beat is its last: the request was refused, has no
        // bytes, or its remaining bytes fit the current page.
        self.s_fits.next = bit_cast::<32, 22>(self.s_room.q.val()) >= self.s_rem.q.val();
        self.s_last.next = !self.s_has_seg.q.val() | self.s_fits.val();
        self.s_take.next = !self.s_valid.q.val() | self.s_last.val();
        self.front_advance.next = self.advance.val() & self.s_take.val();
        self.cfg.ready.next = !self.clearing.q.val();
        self.req_ready.next = self.front_advance.val() & !self.clearing.q.val();

        // ---- configuration writes (the reset sweep has the port first)
        self.mr_table.write_enable.next = self.cfg.mr_write.val();
        self.mr_table.write_address.next = self.cfg.mr_index.val();
        self.mr_table.write_data.next.state = self.cfg.mr_state.val();
        self.mr_table.write_data.next.variant = self.cfg.mr_variant.val();
        self.mr_table.write_data.next.pd = self.cfg.mr_pd.val();
        self.mr_table.write_data.next.base_va = self.cfg.mr_base_va.val();
        self.mr_table.write_data.next.len = self.cfg.mr_len.val();
        self.mr_table.write_data.next.access = self.cfg.mr_access.val();
        self.mr_table.write_data.next.page_shift = self.cfg.mr_page_shift.val();
        self.mr_table.write_data.next.mtt_base =
            bit_cast::<32, MTT_BITS>(self.cfg.mr_mtt_base.val());
        self.mtt.write_enable.next = self.cfg.mtt_write.val() & !self.clearing.q.val();
        self.mtt.write_address.next = self.cfg.mtt_index.val();
        self.mtt.write_data.next = self.cfg.mtt_addr.val();
        if self.clearing.q.val() {
            self.mr_table.write_enable.next = true;
            self.mr_table.write_address.next = self.clear_index.q.val();
            self.mr_table.write_data.next = self.free_entry.val();
            self.clear_index.d.next = self.clear_index.q.val() + 1;
            if self.clear_index.q.val() == self.last_index.val() {
                self.clearing.d.next = false;
            }
        }

        // ---- stage A: accept; the MR table reads the key's index. While
        // the front stalls it reads A's index again, so the RAM output
        // stays A's entry.
        self.mr_table.read_address.next = self.a_key.q.val().get_bits::<MR_BITS>(8);
        if self.front_advance.val() {
            self.mr_table.read_address.next = self.req_key.val().get_bits::<MR_BITS>(8);
            self.a_valid.d.next = self.req_valid.val() & !self.clearing.q.val();
            self.a_key.d.next = self.req_key.val();
            self.a_va.d.next = self.req_va.val();
            self.a_len.d.next = self.req_len.val();
            self.a_end.d.next =
                bit_cast::<65, 64>(self.req_va.val()) + bit_cast::<65, 32>(self.req_len.val());
            self.a_pd.d.next = self.req_pd.val();
            self.a_need.d.next = self.req_access.val();
            self.a_remote.d.next = self.req_remote.val();
            self.a_tag.d.next = self.req_tag.val();

            // ---- stage B: register the entry (the block RAM's output
            // register).
            self.b_valid.d.next = self.a_valid.q.val();
            self.b_entry.d.next = self.mr_table.read_data.val();
            self.b_key.d.next = self.a_key.q.val();
            self.b_va.d.next = self.a_va.q.val();
            self.b_len.d.next = self.a_len.q.val();
            self.b_end.d.next = self.a_end.q.val();
            self.b_pd.d.next = self.a_pd.q.val();
            self.b_need.d.next = self.a_need.q.val();
            self.b_remote.d.next = self.a_remote.q.val();
            self.b_tag.d.next = self.a_tag.q.val();
        }

        // ---- checks on B, in the model's order
        self.entry.next = self.b_entry.q.val();
        self.limit.next =
            bit_cast::<65, 64>(self.entry.val().base_va) + bit_cast::<65, 64>(self.entry.val().len);
        self.out_of_bounds.next = self.b_end.q.val().get_bit(64)
            | (self.b_va.q.val() < self.entry.val().base_va)
            | (self.b_end.q.val() > self.limit.val());
        self.check_status.next = self.status_ok.val();
        if ((self.b_key.q.val() & self.key_beyond_table.val()) != 0)
            | (self.entry.val().state == 0)
            | (self.entry.val().state == 3)
        {
            self.check_status.next = self.status_invalid_key.val();
        } else if self.entry.val().variant != self.b_key.q.val().get_bits::<8>(0) {
            self.check_status.next = self.status_stale_key.val();
        } else if self.entry.val().state == 2 {
            self.check_status.next = self.status_invalidated.val();
        } else if self.entry.val().pd != self.b_pd.q.val() {
            self.check_status.next = self.status_pd_mismatch.val();
        } else if ((self.entry.val().access & self.b_need.q.val()) != self.b_need.q.val())
            | (self.b_remote.q.val() & ((self.b_need.q.val() & self.remote_any.val()) == 0))
        {
            self.check_status.next = self.status_access_denied.val();
        } else if (self.b_len.q.val() != 0) & self.out_of_bounds.val() {
            self.check_status.next = self.status_out_of_bounds.val();
        }
        // The first page: its MTT entry is the MR's base plus the page
        // distance from the MR's first page, taken modulo the MTT size
        // (only those bits of the page numbers matter).
        self.page_shift_rel.next =
            bit_cast::<4, 5>(self.entry.val().page_shift - self.min_page_shift.val());
        self.page_size.next = self.one22.val() << self.entry.val().page_shift;
        self.in_page.next = bit_cast::<22, 64>(self.b_va.q.val()) & (self.page_size.val() - 1);
        self.page_offset.next =
            bit_cast::<MTT_BITS, 64>((self.b_va.q.val() >> 12) >> self.page_shift_rel.val())
                - bit_cast::<MTT_BITS, 64>(
                    (self.entry.val().base_va >> 12) >> self.page_shift_rel.val(),
                );

        // ---- stage S: load a checked request, or step to its next page.
        self.s_seg_len.next = bit_cast::<32, 22>(self.s_room.q.val());
        if self.s_fits.val() {
            self.s_seg_len.next = self.s_rem.q.val();
        }
        self.mtt.read_address.next = self.o_mtt_index.q.val();
        if self.advance.val() {
            self.mtt.read_address.next = self.s_mtt_index.q.val();
            // ---- stage O: S's beat, its MTT read issued at this edge.
            self.o_valid.d.next = self.s_valid.q.val();
            self.o_tag.d.next = self.s_tag.q.val();
            self.o_status.d.next = self.s_status.q.val();
            self.o_has_seg.d.next = self.s_has_seg.q.val();
            self.o_first.d.next = self.s_first.q.val();
            self.o_last.d.next = self.s_last.val();
            self.o_mtt_index.d.next = self.s_mtt_index.q.val();
            self.o_in_page.d.next = self.s_in_page.q.val();
            self.o_len.d.next = self.s_seg_len.val();
            if self.s_take.val() {
                self.s_valid.d.next = self.b_valid.q.val();
                self.s_tag.d.next = self.b_tag.q.val();
                // Bubbles carry a defined status, so the outputs never
                // depend on unread (undefined) RAM words.
                self.s_status.d.next = self.status_ok.val();
                if self.b_valid.q.val() {
                    self.s_status.d.next = self.check_status.val();
                }
                self.s_has_seg.d.next = self.b_valid.q.val()
                    & (self.check_status.val() == self.status_ok.val())
                    & (self.b_len.q.val() != 0);
                self.s_first.d.next = true;
                self.s_mtt_index.d.next =
                    bit_cast::<MTT_BITS, 32>(self.entry.val().mtt_base) + self.page_offset.val();
                self.s_in_page.d.next = self.in_page.val();
                self.s_room.d.next = self.page_size.val() - self.in_page.val();
                self.s_rem.d.next = self.b_len.q.val();
                self.s_page_size.d.next = self.page_size.val();
            } else {
                self.s_first.d.next = false;
                self.s_mtt_index.d.next = self.s_mtt_index.q.val() + 1;
                self.s_in_page.d.next = 0.into();
                self.s_room.d.next = self.s_page_size.q.val();
                self.s_rem.d.next = self.s_rem.q.val() - bit_cast::<32, 22>(self.s_room.q.val());
            }

            // ---- stage P: the response beat, page address + offset.
            self.p_valid.d.next = self.o_valid.q.val();
            self.p_tag.d.next = self.o_tag.q.val();
            self.p_status.d.next = self.o_status.q.val();
            self.p_has_seg.d.next = self.o_has_seg.q.val();
            self.p_first.d.next = self.o_first.q.val();
            self.p_last.d.next = self.o_last.q.val();
            self.p_phys.d.next = 0.into();
            self.p_len.d.next = 0.into();
            if self.o_has_seg.q.val() {
                self.p_phys.d.next =
                    self.mtt.read_data.val() + bit_cast::<64, 22>(self.o_in_page.q.val());
                self.p_len.d.next = self.o_len.q.val();
            }
        }
        self.resp_valid.next = self.p_valid.q.val();
        self.resp_tag.next = self.p_tag.q.val();
        self.resp_status.next = self.p_status.q.val();
        self.resp_has_seg.next = self.p_has_seg.q.val();
        self.resp_first.next = self.p_first.q.val();
        self.resp_last.next = self.p_last.q.val();
        self.resp_phys.next = self.p_phys.q.val();
        self.resp_len.next = self.p_len.q.val();

        if self.reset.val() {
            self.clearing.d.next = true;
            self.clear_index.d.next = 0.into();
            self.a_valid.d.next = false;
            self.b_valid.d.next = false;
            self.s_valid.d.next = false;
            self.o_valid.d.next = false;
            self.p_valid.d.next = false;
        }
    }
}
