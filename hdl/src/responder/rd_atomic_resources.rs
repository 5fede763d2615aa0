//! `RdAtomicResources`: the responder's READ/atomic resources (IBA
//! 9.7.5.1.3), per QP a FIFO of the READs and atomics it executed, kept to
//! answer their duplicates without executing them twice: a retried READ is
//! re-executed only if it fits the recorded one (and the response queue
//! drops what it still holds of the recorded READ's answers), a retried
//! atomic is answered with the original value it read. The RTL of
//! `rocenic_model::responder`'s `push_resource` and `duplicate_answer`
//! (`find_resource` + `read_fits`), which the model's responder itself
//! runs.
//!
//! `2^A` QPs (index, the client maps the QPN) of `2^D` entries each (build
//! parameters; defaults 1024 QPs x 16 entries, enough for
//! `max_dest_rd_atomic` <= 16; `D` <= 7).
//!
//! # Ports
//!
//! - `clock`; `reset` (synchronous, high): back to idle. The resources are
//!   kept; a command cut short leaves its QP as it was (every write
//!   happens in one cycle).
//! - Command (valid/ready; `cmd_ready` is high when the block is idle):
//!   `cmd_op` ([`OP_CLEAR`], [`OP_PUSH`], [`OP_LOOKUP`]), `cmd_qpn`, and
//!   - clear (the QP enters RTR): nothing more;
//!   - push (a READ or atomic executed): `cmd_limit` (the QP's
//!     `max_dest_rd_atomic`; 0 counts as 1, more than `2^D` as `2^D`: the
//!     FIFO then drops its oldest entries), `cmd_kind` ([`KIND_READ`]:
//!     `cmd_psn` = first PSN, `cmd_npsn` (>= 1), `cmd_va`, `cmd_rkey`,
//!     `cmd_len` = the RETH; [`KIND_ATOMIC`]: `cmd_psn`, `cmd_orig` = the
//!     value the atomic read);
//!   - lookup (a duplicate READ or atomic): `cmd_opcode` (BTH opcode),
//!     `cmd_psn`, for a READ its RETH `cmd_va` / `cmd_rkey` / `cmd_len`
//!     and the QP's `cmd_path_mtu` (IBA code 1..5 = 256..4096 bytes).
//! - Result: `res_valid` is high for one cycle when a command is finished,
//!   with `res_op`, `res_qpn` and for a lookup `res_found` (a resource
//!   holds the PSN, of either kind), `res_kind` (its kind), `res_answer`:
//!   - [`ANSWER_NO_RESOURCE`]: no resource of the request's kind holds the
//!     PSN (or the opcode is neither READ nor atomic): drop;
//!   - [`ANSWER_MISMATCH`]: a READ holds it but the retried READ does not
//!     fit (other R_Key, outside the recorded range, or more response PSNs
//!     than are left): drop;
//!   - [`ANSWER_READ`]: re-execute with `res_rkey`; `res_first_psn` /
//!     `res_npsn` are the recorded READ's, for the response queue's
//!     drop-reads operation;
//!   - [`ANSWER_ATOMIC`]: answer with `res_orig`.
//!
//! # Semantics (the model's)
//!
//! - push: while the FIFO holds `max(1, limit)` entries or more, the
//!   oldest leaves; the new one is appended;
//! - lookup: the newest entry whose PSN range holds `cmd_psn` decides (a
//!   READ's `first_psn .. first_psn + npsn`, an atomic's PSN; 24-bit PSN
//!   arithmetic across the wrap). A READ lookup that finds a READ fits
//!   when the R_Keys are equal, `va >= recorded va`, `va + len` does not
//!   wrap and is at most the recorded end, and
//!   `max(1, ceil(len / MTU))` is at most the recorded PSNs from `cmd_psn`
//!   on.
//!
//! # Latency and throughput
//!
//! One command at a time (duplicates are rare; pushes come at most one per
//! executed READ/atomic). A command takes 1 cycle to be taken, 1 to read
//! the QP's pointers and, for a lookup, `k` cycles of walk from the newest
//! entry (one entry per cycle, `k` = 1 + the entries newer than the one
//! found, at most `2^D`) and 1 to decide; the result comes in the last
//! cycle, which also writes the pointers back. So clear and push take 3
//! cycles, a lookup `4 + k`: 5 to 20 at `D` = 4 (4 with no entries).
//!
//! # Memory
//!
//! The entries: `2^(A+D)` records of [`RECORD_BITS`] bits (layout in
//! [`record`]) in one simple dual-port, synchronous-read RAM addressed
//! `{qpn, slot}` (block RAM). An atomic is stored as a one-PSN entry with
//! its original value in the VA field. The pointers: a second such RAM of
//! `2^A` 16-bit words `{count[15:8], head[7:0]}`, zero (every FIFO empty) at
//! power-up; the entries have no initial value (only slots a push wrote are
//! walked). A read never meets a write to the same address (a push writes
//! its entry and the pointers at least two cycles before the next command
//! reads them), so neither RAM needs collision logic.

use crate::primitives::sync_ram::SyncRam;
use crate::qp::qp_slot_ram::QpSlotRam;
use rust_hdl::prelude::*;

/// `cmd_op` codes.
pub const OP_CLEAR: u64 = 0;
pub const OP_PUSH: u64 = 1;
pub const OP_LOOKUP: u64 = 2;

/// `cmd_kind` / `res_kind` codes.
pub const KIND_READ: u64 = 0;
pub const KIND_ATOMIC: u64 = 1;

/// `res_answer` codes (the model's `DuplicateAnswer`).
pub const ANSWER_NO_RESOURCE: u64 = 0;
pub const ANSWER_MISMATCH: u64 = 1;
pub const ANSWER_READ: u64 = 2;
pub const ANSWER_ATOMIC: u64 = 3;

/// BTH opcodes the lookup tells apart.
const OPCODE_READ_REQUEST: u64 = 0x0C;
const OPCODE_COMPARE_SWAP: u64 = 0x13;
const OPCODE_FETCH_ADD: u64 = 0x14;

/// Default QP index bits: 1024 QPs.
pub const DEFAULT_QPN_BITS: usize = 10;
/// Default entry bits: 16 resources per QP.
pub const DEFAULT_SLOT_BITS: usize = 4;

/// Bits of one entry.
pub const RECORD_BITS: usize = 177;

/// The entry layout, least significant bit first: `(offset, width)`.
pub mod record {
    pub const KIND: (usize, usize) = (0, 1);
    pub const FIRST_PSN: (usize, usize) = (1, 24);
    /// 1 for an atomic.
    pub const NPSN: (usize, usize) = (25, 24);
    /// A READ's VA; an atomic's original value.
    pub const VA: (usize, usize) = (49, 64);
    pub const RKEY: (usize, usize) = (113, 32);
    pub const LEN: (usize, usize) = (145, 32);
}

pub type Word = Bits<RECORD_BITS>;

/// States of the command sequencer.
mod state {
    pub const IDLE: u64 = 0;
    /// The QP's pointers arrive.
    pub const LOAD: u64 = 1;
    /// One entry per cycle from the newest.
    pub const WALK: u64 = 2;
    /// The entry found is held; the fits rule is evaluated.
    pub const DECIDE: u64 = 3;
    /// Pointers written back, result out.
    pub const FINISH: u64 = 4;
}

/// The resource FIFOs (see the module doc).
#[derive(LogicBlock)]
pub struct RdAtomicResources<const A: usize, const D: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,

    pub cmd_valid: Signal<In, Bit>,
    pub cmd_ready: Signal<Out, Bit>,
    pub cmd_op: Signal<In, Bits<2>>,
    pub cmd_qpn: Signal<In, Bits<A>>,
    pub cmd_limit: Signal<In, Bits<8>>,
    pub cmd_kind: Signal<In, Bit>,
    pub cmd_opcode: Signal<In, Bits<8>>,
    pub cmd_psn: Signal<In, Bits<24>>,
    pub cmd_npsn: Signal<In, Bits<24>>,
    pub cmd_va: Signal<In, Bits<64>>,
    pub cmd_rkey: Signal<In, Bits<32>>,
    pub cmd_len: Signal<In, Bits<32>>,
    pub cmd_orig: Signal<In, Bits<64>>,
    pub cmd_path_mtu: Signal<In, Bits<3>>,

    pub res_valid: Signal<Out, Bit>,
    pub res_op: Signal<Out, Bits<2>>,
    pub res_qpn: Signal<Out, Bits<A>>,
    pub res_found: Signal<Out, Bit>,
    pub res_kind: Signal<Out, Bit>,
    pub res_answer: Signal<Out, Bits<2>>,
    pub res_first_psn: Signal<Out, Bits<24>>,
    pub res_npsn: Signal<Out, Bits<24>>,
    pub res_rkey: Signal<Out, Bits<32>>,
    pub res_orig: Signal<Out, Bits<64>>,

    entries: ResourceRam<A, D>,
    /// `{count[15:8], head[7:0]}` per QP, zero (every FIFO empty) at power-up.
    pointers: SyncRam<Bits<16>, A>,

    state: DFF<Bits<3>>,
    // The command.
    op: DFF<Bits<2>>,
    qpn: DFF<Bits<A>>,
    limit: DFF<Bits<8>>,
    opcode: DFF<Bits<8>>,
    psn: DFF<Bits<24>>,
    req_va: DFF<Bits<64>>,
    req_rkey: DFF<Bits<32>>,
    req_len: DFF<Bits<32>>,
    mtu_shift: DFF<Bits<4>>,
    push_word: DFF<Word>,
    // The QP's FIFO.
    head: DFF<Bits<D>>,
    count: DFF<Bits<8>>,
    /// Walk position from the head (the entry whose data arrives).
    index: DFF<Bits<8>>,
    // The entry found and `psn - first_psn`.
    found: DFF<Bit>,
    held: DFF<Word>,
    held_into: DFF<Bits<24>>,
    // The result.
    answer: DFF<Bits<2>>,

    st_idle: Constant<Bits<3>>,
    st_load: Constant<Bits<3>>,
    st_walk: Constant<Bits<3>>,
    st_decide: Constant<Bits<3>>,
    st_finish: Constant<Bits<3>>,
    op_clear: Constant<Bits<2>>,
    op_push: Constant<Bits<2>>,
    answer_no_resource: Constant<Bits<2>>,
    answer_mismatch: Constant<Bits<2>>,
    answer_read: Constant<Bits<2>>,
    answer_atomic: Constant<Bits<2>>,
    opcode_read_request: Constant<Bits<8>>,
    opcode_compare_swap: Constant<Bits<8>>,
    opcode_fetch_add: Constant<Bits<8>>,
    depth: Constant<Bits<8>>,

    // The QP's pointers as read.
    ptr_head: Signal<Local, Bits<D>>,
    ptr_count: Signal<Local, Bits<8>>,
    /// `min(max(1, limit), 2^D)`.
    cap: Signal<Local, Bits<8>>,
    /// The FIFO after the push's evictions: head and count.
    kept_head: Signal<Local, Bits<D>>,
    kept_count: Signal<Local, Bits<8>>,
    // The entry arriving in the walk.
    walk_first_psn: Signal<Local, Bits<24>>,
    walk_npsn: Signal<Local, Bits<24>>,
    walk_into: Signal<Local, Bits<24>>,
    walk_holds: Signal<Local, Bit>,
    // The held entry's fields and the fits rule.
    h_kind: Signal<Local, Bit>,
    h_npsn: Signal<Local, Bits<24>>,
    h_va: Signal<Local, Bits<64>>,
    h_rkey: Signal<Local, Bits<32>>,
    h_len: Signal<Local, Bits<32>>,
    h_end: Signal<Local, Bits<64>>,
    req_end: Signal<Local, Bits<64>>,
    psns_left: Signal<Local, Bits<33>>,
    /// `len + mtu - 1`, then shifted: the READ's response PSNs.
    len_round: Signal<Local, Bits<33>>,
    psns_needed: Signal<Local, Bits<33>>,
    fits: Signal<Local, Bit>,
    is_atomic_opcode: Signal<Local, Bit>,
}

impl<const A: usize, const D: usize> Default for RdAtomicResources<A, D> {
    fn default() -> Self {
        assert!((1..=14).contains(&A), "1 to 16384 QPs");
        assert!((1..=7).contains(&D), "2 to 128 entries per QP");
        let c3 = |v: u64| Constant::new(bits::<3>(v));
        let c2 = |v: u64| Constant::new(bits::<2>(v));
        let c8 = |v: u64| Constant::new(bits::<8>(v));
        RdAtomicResources {
            clock: Default::default(),
            reset: Default::default(),
            cmd_valid: Default::default(),
            cmd_ready: Default::default(),
            cmd_op: Default::default(),
            cmd_qpn: Default::default(),
            cmd_limit: Default::default(),
            cmd_kind: Default::default(),
            cmd_opcode: Default::default(),
            cmd_psn: Default::default(),
            cmd_npsn: Default::default(),
            cmd_va: Default::default(),
            cmd_rkey: Default::default(),
            cmd_len: Default::default(),
            cmd_orig: Default::default(),
            cmd_path_mtu: Default::default(),
            res_valid: Default::default(),
            res_op: Default::default(),
            res_qpn: Default::default(),
            res_found: Default::default(),
            res_kind: Default::default(),
            res_answer: Default::default(),
            res_first_psn: Default::default(),
            res_npsn: Default::default(),
            res_rkey: Default::default(),
            res_orig: Default::default(),
            entries: Default::default(),
            pointers: Default::default(),
            state: Default::default(),
            op: Default::default(),
            qpn: Default::default(),
            limit: Default::default(),
            opcode: Default::default(),
            psn: Default::default(),
            req_va: Default::default(),
            req_rkey: Default::default(),
            req_len: Default::default(),
            mtu_shift: Default::default(),
            push_word: Default::default(),
            head: Default::default(),
            count: Default::default(),
            index: Default::default(),
            found: Default::default(),
            held: Default::default(),
            held_into: Default::default(),
            answer: Default::default(),
            st_idle: c3(state::IDLE),
            st_load: c3(state::LOAD),
            st_walk: c3(state::WALK),
            st_decide: c3(state::DECIDE),
            st_finish: c3(state::FINISH),
            op_clear: c2(OP_CLEAR),
            op_push: c2(OP_PUSH),
            answer_no_resource: c2(ANSWER_NO_RESOURCE),
            answer_mismatch: c2(ANSWER_MISMATCH),
            answer_read: c2(ANSWER_READ),
            answer_atomic: c2(ANSWER_ATOMIC),
            opcode_read_request: c8(OPCODE_READ_REQUEST),
            opcode_compare_swap: c8(OPCODE_COMPARE_SWAP),
            opcode_fetch_add: c8(OPCODE_FETCH_ADD),
            depth: c8(1 << D),
            ptr_head: Default::default(),
            ptr_count: Default::default(),
            cap: Default::default(),
            kept_head: Default::default(),
            kept_count: Default::default(),
            walk_first_psn: Default::default(),
            walk_npsn: Default::default(),
            walk_into: Default::default(),
            walk_holds: Default::default(),
            h_kind: Default::default(),
            h_npsn: Default::default(),
            h_va: Default::default(),
            h_rkey: Default::default(),
            h_len: Default::default(),
            h_end: Default::default(),
            req_end: Default::default(),
            psns_left: Default::default(),
            len_round: Default::default(),
            psns_needed: Default::default(),
            fits: Default::default(),
            is_atomic_opcode: Default::default(),
        }
    }
}

impl<const A: usize, const D: usize> Logic for RdAtomicResources<A, D> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, state, op, qpn, limit, opcode, psn, req_va, req_rkey, req_len, mtu_shift,
            push_word, head, count, index, found, held, held_into, answer
        );
        self.entries.clock.next = self.clock.val();
        self.pointers.clock.next = self.clock.val();

        // ---- the pointers and the push's evictions
        self.ptr_head.next = self.pointers.read_data.val().get_bits::<D>(0);
        self.ptr_count.next = self.pointers.read_data.val().get_bits::<8>(8);
        self.cap.next = self.limit.q.val();
        if self.limit.q.val() == 0 {
            self.cap.next = 1.into();
        }
        if self.limit.q.val() > self.depth.val() {
            self.cap.next = self.depth.val();
        }
        self.kept_head.next = self.ptr_head.val();
        self.kept_count.next = self.ptr_count.val();
        if self.ptr_count.val() >= self.cap.val() {
            // The oldest `count - cap + 1` leave.
            self.kept_head.next =
                self.ptr_head.val() + bit_cast::<D, 8>(self.ptr_count.val() - self.cap.val() + 1);
            self.kept_count.next = self.cap.val() - 1;
        }

        // ---- the entry arriving in the walk
        self.walk_first_psn.next = self.entries.read_data.val().get_bits::<24>(1);
        self.walk_npsn.next = self.entries.read_data.val().get_bits::<24>(25);
        self.walk_into.next = self.psn.q.val() - self.walk_first_psn.val();
        self.walk_holds.next =
            !self.walk_into.val().get_bit(23) & (self.walk_into.val() < self.walk_npsn.val());

        // ---- the held entry and the fits rule
        self.h_kind.next = self.held.q.val().get_bit(0);
        self.h_npsn.next = self.held.q.val().get_bits::<24>(25);
        self.h_va.next = self.held.q.val().get_bits::<64>(49);
        self.h_rkey.next = self.held.q.val().get_bits::<32>(113);
        self.h_len.next = self.held.q.val().get_bits::<32>(145);
        self.h_end.next = self.h_va.val() + bit_cast::<64, 32>(self.h_len.val());
        self.req_end.next = self.req_va.q.val() + bit_cast::<64, 32>(self.req_len.q.val());
        self.psns_left.next = bit_cast::<33, 24>(self.h_npsn.val() - self.held_into.q.val());
        self.len_round.next = bit_cast::<33, 32>(self.req_len.q.val())
            + ((bits::<33>(1) << self.mtu_shift.q.val()) - 1);
        self.psns_needed.next = self.len_round.val() >> self.mtu_shift.q.val();
        if self.psns_needed.val() == 0 {
            self.psns_needed.next = 1.into();
        }
        self.fits.next = (self.req_rkey.q.val() == self.h_rkey.val())
            & (self.req_va.q.val() >= self.h_va.val())
            & (self.req_end.val() >= self.req_va.q.val())
            & (self.req_end.val() <= self.h_end.val())
            & (self.psns_needed.val() <= self.psns_left.val());
        self.is_atomic_opcode.next = (self.opcode.q.val() == self.opcode_compare_swap.val())
            | (self.opcode.q.val() == self.opcode_fetch_add.val());

        // ---- defaults: nothing written, the walk's next entry read
        self.cmd_ready.next = false;
        self.pointers.read_address.next = self.cmd_qpn.val();
        self.pointers.write_enable.next = false;
        self.pointers.write_address.next = self.qpn.q.val();
        self.pointers.write_data.next =
            (bit_cast::<16, 8>(self.count.q.val()) << 8) | bit_cast::<16, D>(self.head.q.val());
        self.entries.read_qpn.next = self.qpn.q.val();
        self.entries.read_slot.next = self.head.q.val() + bit_cast::<D, 8>(self.index.q.val()) - 1;
        self.entries.write_enable.next = false;
        self.entries.write_qpn.next = self.qpn.q.val();
        self.entries.write_slot.next =
            self.kept_head.val() + bit_cast::<D, 8>(self.kept_count.val());
        self.entries.write_data.next = self.push_word.q.val();

        if self.state.q.val() == self.st_idle.val() {
            self.cmd_ready.next = true;
            if self.cmd_valid.val() {
                self.op.d.next = self.cmd_op.val();
                self.qpn.d.next = self.cmd_qpn.val();
                self.limit.d.next = self.cmd_limit.val();
                self.opcode.d.next = self.cmd_opcode.val();
                self.psn.d.next = self.cmd_psn.val();
                self.req_va.d.next = self.cmd_va.val();
                self.req_rkey.d.next = self.cmd_rkey.val();
                self.req_len.d.next = self.cmd_len.val();
                self.mtu_shift.d.next = bit_cast::<4, 3>(self.cmd_path_mtu.val()) + 7;
                if self.cmd_kind.val() {
                    self.push_word.d.next = bits::<RECORD_BITS>(1)
                        | (bit_cast::<RECORD_BITS, 24>(self.cmd_psn.val()) << 1)
                        | (bits::<RECORD_BITS>(1) << 25)
                        | (bit_cast::<RECORD_BITS, 64>(self.cmd_orig.val()) << 49);
                } else {
                    self.push_word.d.next = (bit_cast::<RECORD_BITS, 24>(self.cmd_psn.val()) << 1)
                        | (bit_cast::<RECORD_BITS, 24>(self.cmd_npsn.val()) << 25)
                        | (bit_cast::<RECORD_BITS, 64>(self.cmd_va.val()) << 49)
                        | (bit_cast::<RECORD_BITS, 32>(self.cmd_rkey.val()) << 113)
                        | (bit_cast::<RECORD_BITS, 32>(self.cmd_len.val()) << 145);
                }
                self.state.d.next = self.st_load.val();
            }
        } else if self.state.q.val() == self.st_load.val() {
            self.head.d.next = self.ptr_head.val();
            self.count.d.next = self.ptr_count.val();
            self.found.d.next = false;
            self.held.d.next = 0.into();
            self.held_into.d.next = 0.into();
            self.answer.d.next = self.answer_no_resource.val();
            self.state.d.next = self.st_finish.val();
            if self.op.q.val() == self.op_clear.val() {
                self.count.d.next = 0.into();
            } else if self.op.q.val() == self.op_push.val() {
                self.entries.write_enable.next = true;
                self.head.d.next = self.kept_head.val();
                self.count.d.next = self.kept_count.val() + 1;
            } else if self.ptr_count.val() != 0 {
                // Lookup: newest first.
                self.entries.read_slot.next =
                    self.ptr_head.val() + bit_cast::<D, 8>(self.ptr_count.val()) - 1;
                self.index.d.next = self.ptr_count.val() - 1;
                self.state.d.next = self.st_walk.val();
            }
        } else if self.state.q.val() == self.st_walk.val() {
            self.index.d.next = self.index.q.val() - 1;
            if self.walk_holds.val() {
                self.found.d.next = true;
                self.held.d.next = self.entries.read_data.val();
                self.held_into.d.next = self.walk_into.val();
                self.state.d.next = self.st_decide.val();
            } else if self.index.q.val() == 0 {
                self.state.d.next = self.st_finish.val();
            }
        } else if self.state.q.val() == self.st_decide.val() {
            if (self.opcode.q.val() == self.opcode_read_request.val()) & !self.h_kind.val() {
                if self.fits.val() {
                    self.answer.d.next = self.answer_read.val();
                } else {
                    self.answer.d.next = self.answer_mismatch.val();
                }
            } else if self.is_atomic_opcode.val() & self.h_kind.val() {
                self.answer.d.next = self.answer_atomic.val();
            }
            self.state.d.next = self.st_finish.val();
        } else if self.state.q.val() == self.st_finish.val() {
            self.pointers.write_enable.next = true;
            self.state.d.next = self.st_idle.val();
        } else {
            self.state.d.next = self.st_idle.val();
        }

        self.res_valid.next = self.state.q.val() == self.st_finish.val();
        self.res_op.next = self.op.q.val();
        self.res_qpn.next = self.qpn.q.val();
        self.res_found.next = self.found.q.val();
        self.res_kind.next = self.h_kind.val();
        self.res_answer.next = self.answer.q.val();
        self.res_first_psn.next = self.held.q.val().get_bits::<24>(1);
        self.res_npsn.next = self.h_npsn.val();
        self.res_rkey.next = self.h_rkey.val();
        self.res_orig.next = self.h_va.val();

        if self.reset.val() {
            self.state.d.next = self.st_idle.val();
        }
    }
}

/// The entry RAM: `2^(A+D)` records addressed `{qpn, slot}` (see the
/// module doc); the block never reads the address it writes in the same
/// cycle.
pub type ResourceRam<const A: usize, const D: usize> = QpSlotRam<Word, A, D>;

/// The default build: 1024 QPs x 16 entries.
pub type RdAtomicResourcesDefault = RdAtomicResources<DEFAULT_QPN_BITS, DEFAULT_SLOT_BITS>;
