//! `QpContext`: the QP context RAM of the RC transport. One
//! [`RECORD_BITS`]-bit record per QP ([`crate::qp::qp_context_record`] has the
//! layout) in a synchronous-read block RAM, behind a pipelined
//! read-modify-write port for the packet pipelines and a configuration
//! port for the host side (the driver's `modify_qp` and queries).
//!
//! The QP count is `2^A` (`A` address bits, 10 = 1024 QPs by default, up to
//! 14 = 16384); the client maps a 24-bit QPN to its index and range-checks
//! it before the lookup.
//!
//! # Ports
//!
//! - `clock`; `reset` (synchronous, high): drops lookups and a
//!   configuration operation in flight; the records are kept.
//! - `lookup` (in): `valid`, `qpn` (`A` bits), `tag` ([`TAG_BITS`] bits,
//!   carried through untouched for the client's own bookkeeping).
//! - `context` (out): `valid`, `qpn`, `tag`, `record`.
//! - `update` (in): `valid`, `qpn`, `record`: write `record` to `qpn`.
//! - `host` (the configuration port): `valid`, `qpn`, `mask`, `data`
//!   (in); `done`, `old`, `stalled` (out). See below. (`config` would be
//!   the natural name, but it is a Verilog keyword.)
//!
//! # The pipeline contract (cycle `t` = the cycle whose closing rising
//! edge samples the inputs)
//!
//! - A lookup presented in cycle `t` has its `context` presented in cycle
//!   `t + 2` ([`CONTEXT_LATENCY`]), `valid` high, `qpn` and `tag` as given.
//! - The client writes the new record back with `update` in cycle `t + 3`
//!   ([`UPDATE_OFFSET`]), from a register (see timing below), or leaves
//!   `update.valid` low to change nothing.
//! - Semantics are those of a plain array `M` in which the update
//!   presented in cycle `c` takes effect at the start of cycle `c`: the
//!   record presented in cycle `t + 2` is `M[qpn]` including every update
//!   presented up to and including cycle `t + 2`. So a lookup one cycle
//!   behind a lookup of the same QP sees that one's update: back-to-back
//!   packets of one QP, one per cycle, each see the previous packet's
//!   changes. Internally the RAM read at the edge closing cycle `t` holds
//!   updates up to cycle `t - 1`; the update of cycle `t` is forwarded from
//!   a register, that of cycle `t + 1` when the RAM data is registered, and
//!   that of cycle `t + 2` by a final bypass mux on `context.record`.
//! - Throughput: one lookup and one update per cycle, indefinitely.
//!
//! Timing: the final bypass makes `context.record` combinational in
//! `update` (one `A`-bit compare and a 2:1 mux). The client's
//! context-to-update path is therefore one cycle of logic ending in a
//! register; an update driven combinationally from `context` would close a
//! loop.
//!
//! # The configuration port
//!
//! One operation at a time, a masked read-modify-write: the host raises
//! `host.valid` with `qpn`, `mask` and `data` and holds them until
//! `host.done` is high for one cycle; then `host.old` holds the record
//! as it was before and the record becomes `(old & !mask) | (data & mask)`.
//! A read is a zero mask, a whole write an all-ones mask, a change of some
//! fields their [`crate::qp::qp_context_record::field_mask`]. The host changes
//! or drops its request in the cycle after `done`.
//!
//! The operation takes a cycle without a lookup (lower priority than the
//! pipeline) and then runs through the same pipeline as a lookup, its write
//! landing in the update slot three cycles later, which the client leaves
//! free since it had no lookup three cycles before. So the configuration
//! operation is ordered among the lookups exactly like one of them and the
//! pipeline timing never changes. `done` comes 3 cycles after the cycle it
//! took. While lookups fill every cycle it waits, and `host.stalled`
//! (registered) is high in each cycle after one it wanted and could not
//! take, so a client may leave a gap. At 100 GbE and 250 MHz even minimum
//! frames (84 byte times with preamble and gap) leave 0.68 free cycles in
//! 1.68 per packet. An `update` presented in the cycle a configuration
//! write lands breaks the contract and is dropped.
//!
//! # Memory
//!
//! [`SyncRam`]: simple dual-port (one read, one write port),
//! synchronous read, zero at power-up (every QP RESET), read-during-write
//! of one address undefined (`no_rw_check`): the pipeline forwards that
//! case itself, so the RAM needs no collision logic and maps to block RAM
//! in SDP mode (`make synth`).

use crate::primitives::sync_ram::SyncRam;
use crate::qp::qp_context_record::{RecordWords, RECORD_BITS, RECORD_WORDS};
use rust_hdl::prelude::*;

/// Client tag width.
pub const TAG_BITS: usize = 16;
/// Cycles from a lookup to its context.
pub const CONTEXT_LATENCY: u64 = 2;
/// Cycles from a lookup to the cycle its update is presented.
pub const UPDATE_OFFSET: u64 = 3;
/// Cycles from a configuration operation taking its slot to `done`.
pub const CONFIG_LATENCY: u64 = 3;
/// Default address bits: 1024 QPs.
pub const DEFAULT_QPN_BITS: usize = 10;

pub type Record = Bits<RECORD_BITS>;

#[derive(Clone, Debug, Default, LogicInterface)]
pub struct ContextLookup<const A: usize> {
    pub valid: Signal<In, Bit>,
    pub qpn: Signal<In, Bits<A>>,
    pub tag: Signal<In, Bits<TAG_BITS>>,
}

#[derive(Clone, Debug, Default, LogicInterface)]
pub struct ContextResult<const A: usize> {
    pub valid: Signal<Out, Bit>,
    pub qpn: Signal<Out, Bits<A>>,
    pub tag: Signal<Out, Bits<TAG_BITS>>,
    pub record: Signal<Out, Record>,
}

#[derive(Clone, Debug, Default, LogicInterface)]
pub struct ContextUpdate<const A: usize> {
    pub valid: Signal<In, Bit>,
    pub qpn: Signal<In, Bits<A>>,
    pub record: Signal<In, Record>,
}

#[derive(Clone, Debug, Default, LogicInterface)]
pub struct ContextConfig<const A: usize> {
    pub valid: Signal<In, Bit>,
    pub qpn: Signal<In, Bits<A>>,
    pub mask: Signal<In, Record>,
    pub data: Signal<In, Record>,
    pub done: Signal<Out, Bit>,
    pub old: Signal<Out, Record>,
    pub stalled: Signal<Out, Bit>,
}

/// The QP context RAM with its RMW pipeline (see the module doc).
#[derive(LogicBlock)]
pub struct QpContext<const A: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub lookup: ContextLookup<A>,
    pub context: ContextResult<A>,
    pub update: ContextUpdate<A>,
    pub host: ContextConfig<A>,
    ram: SyncRam<Record, A>,
    /// High in real use; low only in tests that show what forwarding
    /// prevents ([`QpContext::without_forwarding`]).
    forwarding: Constant<Bit>,
    // Stage 1: the RAM read is under way.
    s1_lookup: DFF<Bit>,
    s1_config: DFF<Bit>,
    s1_qpn: DFF<Bits<A>>,
    s1_tag: DFF<Bits<TAG_BITS>>,
    /// The update of the cycle the stage-1 read was clocked in.
    f1_valid: DFF<Bit>,
    f1_qpn: DFF<Bits<A>>,
    f1_record: DFF<Record>,
    // Stage 2: the record, forwarded up to the previous cycle's update.
    s2_lookup: DFF<Bit>,
    s2_config: DFF<Bit>,
    s2_qpn: DFF<Bits<A>>,
    s2_tag: DFF<Bits<TAG_BITS>>,
    s2_record: DFF<Record>,
    // The configuration write, presented as this cycle's update.
    w_valid: DFF<Bit>,
    w_qpn: DFF<Bits<A>>,
    w_record: DFF<Record>,
    config_busy: DFF<Bit>,
    config_done: DFF<Bit>,
    config_old: DFF<Record>,
    config_stalled: DFF<Bit>,
    /// This cycle's effective update: the configuration write or the
    /// client's.
    e_valid: Signal<Local, Bit>,
    e_qpn: Signal<Local, Bits<A>>,
    e_record: Signal<Local, Record>,
    issue: Signal<Local, Bit>,
    current: Signal<Local, Record>,
}

impl<const A: usize> QpContext<A> {
    fn build(forwarding: bool) -> Self {
        assert!((1..=14).contains(&A), "1 to 16384 QPs");
        QpContext {
            clock: Default::default(),
            reset: Default::default(),
            lookup: Default::default(),
            context: Default::default(),
            update: Default::default(),
            host: Default::default(),
            ram: Default::default(),
            forwarding: Constant::new(forwarding),
            s1_lookup: Default::default(),
            s1_config: Default::default(),
            s1_qpn: Default::default(),
            s1_tag: Default::default(),
            f1_valid: Default::default(),
            f1_qpn: Default::default(),
            f1_record: Default::default(),
            s2_lookup: Default::default(),
            s2_config: Default::default(),
            s2_qpn: Default::default(),
            s2_tag: Default::default(),
            s2_record: Default::default(),
            w_valid: Default::default(),
            w_qpn: Default::default(),
            w_record: Default::default(),
            config_busy: Default::default(),
            config_done: Default::default(),
            config_old: Default::default(),
            config_stalled: Default::default(),
            e_valid: Default::default(),
            e_qpn: Default::default(),
            e_record: Default::default(),
            issue: Default::default(),
            current: Default::default(),
        }
    }

    /// The block with forwarding removed: a lookup returns the RAM's record
    /// as of the cycle before it, missing up to three updates. For tests
    /// only; it breaks the contract.
    pub fn without_forwarding() -> Self {
        Self::build(false)
    }
}

impl<const A: usize> Default for QpContext<A> {
    fn default() -> Self {
        Self::build(true)
    }
}

impl<const A: usize> Logic for QpContext<A> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            s1_lookup,
            s1_config,
            s1_qpn,
            s1_tag,
            f1_valid,
            f1_qpn,
            f1_record,
            s2_lookup,
            s2_config,
            s2_qpn,
            s2_tag,
            s2_record,
            w_valid,
            w_qpn,
            w_record,
            config_busy,
            config_done,
            config_old,
            config_stalled
        );
        self.ram.clock.next = self.clock.val();

        // The update of this cycle: written at the closing edge, kept one
        // more cycle in f1 for the read clocked at the same edge.
        self.e_valid.next = self.update.valid.val() | self.w_valid.q.val();
        self.e_qpn.next = self.update.qpn.val();
        self.e_record.next = self.update.record.val();
        if self.w_valid.q.val() {
            self.e_qpn.next = self.w_qpn.q.val();
            self.e_record.next = self.w_record.q.val();
        }
        self.ram.write_enable.next = self.e_valid.val();
        self.ram.write_address.next = self.e_qpn.val();
        self.ram.write_data.next = self.e_record.val();
        self.f1_valid.d.next = self.e_valid.val();
        self.f1_qpn.d.next = self.e_qpn.val();
        self.f1_record.d.next = self.e_record.val();

        // Stage 0: a lookup, or else a waiting configuration operation,
        // starts the RAM read.
        self.issue.next =
            self.host.valid.val() & !self.config_busy.q.val() & !self.lookup.valid.val();
        self.ram.read_address.next = self.host.qpn.val();
        self.s1_qpn.d.next = self.host.qpn.val();
        if self.lookup.valid.val() {
            self.ram.read_address.next = self.lookup.qpn.val();
            self.s1_qpn.d.next = self.lookup.qpn.val();
        }
        self.s1_lookup.d.next = self.lookup.valid.val();
        self.s1_config.d.next = self.issue.val();
        self.s1_tag.d.next = self.lookup.tag.val();
        self.config_stalled.d.next =
            self.host.valid.val() & !self.config_busy.q.val() & self.lookup.valid.val();
        if self.issue.val() {
            self.config_busy.d.next = true;
        }

        // Stage 1: the RAM data, overridden by the updates it missed: the
        // one written at its own edge (f1) and this cycle's (newer wins).
        self.s2_record.d.next = self.ram.read_data.val();
        if self.forwarding.val()
            & self.f1_valid.q.val()
            & (self.f1_qpn.q.val() == self.s1_qpn.q.val())
        {
            self.s2_record.d.next = self.f1_record.q.val();
        }
        if self.forwarding.val() & self.e_valid.val() & (self.e_qpn.val() == self.s1_qpn.q.val()) {
            self.s2_record.d.next = self.e_record.val();
        }
        self.s2_lookup.d.next = self.s1_lookup.q.val();
        self.s2_config.d.next = self.s1_config.q.val();
        self.s2_qpn.d.next = self.s1_qpn.q.val();
        self.s2_tag.d.next = self.s1_tag.q.val();

        // Stage 2: the bypass of this cycle's update.
        self.current.next = self.s2_record.q.val();
        if self.forwarding.val() & self.e_valid.val() & (self.e_qpn.val() == self.s2_qpn.q.val()) {
            self.current.next = self.e_record.val();
        }
        self.context.valid.next = self.s2_lookup.q.val();
        self.context.qpn.next = self.s2_qpn.q.val();
        self.context.tag.next = self.s2_tag.q.val();
        self.context.record.next = self.current.val();

        // A configuration operation here computes its write for the update
        // slot of the next cycle, and reports.
        self.w_valid.d.next = self.s2_config.q.val();
        self.w_qpn.d.next = self.s2_qpn.q.val();
        self.w_record.d.next = (self.current.val() & !self.host.mask.val())
            | (self.host.data.val() & self.host.mask.val());
        self.config_done.d.next = self.s2_config.q.val();
        if self.s2_config.q.val() {
            self.config_old.d.next = self.current.val();
        }
        if self.config_done.q.val() {
            self.config_busy.d.next = false;
        }
        self.host.done.next = self.config_done.q.val();
        self.host.old.next = self.config_old.q.val();
        self.host.stalled.next = self.config_stalled.q.val();

        if self.reset.val() {
            self.s1_lookup.d.next = false;
            self.s1_config.d.next = false;
            self.s2_lookup.d.next = false;
            self.s2_config.d.next = false;
            self.w_valid.d.next = false;
            self.config_busy.d.next = false;
            self.config_done.d.next = false;
            self.config_stalled.d.next = false;
        }
    }
}

/// One cycle's inputs to [`QpContext`], for [`QpContextModel`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CycleInputs {
    pub reset: bool,
    /// `(qpn, tag)` of a lookup.
    pub lookup: Option<(u32, u32)>,
    /// `(qpn, record)` of an update.
    pub update: Option<(u32, RecordWords)>,
    /// The configuration request held on `host`.
    pub host: Option<HostRequest>,
}

/// A configuration operation: `record = (old & !mask) | (data & mask)`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HostRequest {
    pub qpn: u32,
    pub mask: RecordWords,
    pub data: RecordWords,
}

/// What [`QpContext`] presents in one cycle.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CycleOutputs {
    /// `(qpn, tag, record)` when `context.valid` is high.
    pub context: Option<(u32, u32, RecordWords)>,
    /// `host.old` when `host.done` is high.
    pub host_done: Option<RecordWords>,
    pub host_stalled: bool,
}

#[derive(Clone, Copy, Debug)]
enum Slot {
    Lookup {
        qpn: u32,
        tag: u32,
        raw: RecordWords,
    },
    Host {
        qpn: u32,
    },
}

/// The contract of [`QpContext`] as a plain array of records (the oracle
/// of its tests): updates take effect at the start of the cycle they are
/// presented in, a lookup's context shows the array two cycles later, a
/// configuration operation takes a cycle without a lookup and acts on the
/// array two cycles later, its write being the update of the cycle after.
/// Nothing here forwards: the array is always current.
#[derive(Clone, Debug)]
pub struct QpContextModel {
    records: Vec<RecordWords>,
    /// Lookups and configuration operations issued one and two cycles ago.
    s1: Option<Slot>,
    s2: Option<Slot>,
    /// The configuration write to apply as the next cycle's update.
    write: Option<(u32, RecordWords)>,
    busy: bool,
    done: Option<RecordWords>,
    stalled: bool,
    last_raw: Option<RecordWords>,
}

impl QpContextModel {
    /// `qpns` records, all zero (power-up).
    pub fn new(qpns: usize) -> Self {
        QpContextModel {
            records: vec![[0; RECORD_WORDS]; qpns],
            s1: None,
            s2: None,
            write: None,
            busy: false,
            done: None,
            stalled: false,
            last_raw: None,
        }
    }

    /// The record of `qpn` now (out-of-range QPNs read as zero).
    pub fn record(&self, qpn: u32) -> RecordWords {
        self.records
            .get(qpn as usize)
            .copied()
            .unwrap_or([0; RECORD_WORDS])
    }

    /// For the context of the last [`QpContextModel::cycle`]: the record as
    /// the RAM held it when the lookup read it, i.e. without the up to three
    /// updates forwarding adds. A design without forwarding shows this.
    pub fn raw_of_last_context(&self) -> Option<RecordWords> {
        self.last_raw
    }

    fn set(&mut self, qpn: u32, record: RecordWords) {
        if let Some(r) = self.records.get_mut(qpn as usize) {
            *r = record;
        }
    }

    /// One cycle: what the block presents given `inputs`, then the rising
    /// edge.
    pub fn cycle(&mut self, inputs: &CycleInputs) -> CycleOutputs {
        // The RAM as a lookup issued now reads it: before this cycle's update.
        let raw_now = inputs.lookup.map(|(qpn, _)| self.record(qpn));
        match self.write.take() {
            Some((qpn, record)) => self.set(qpn, record),
            None => {
                if let Some((qpn, record)) = inputs.update {
                    self.set(qpn, record);
                }
            }
        }
        let mut out = CycleOutputs {
            context: None,
            host_done: self.done,
            host_stalled: self.stalled,
        };
        self.last_raw = None;
        let mut write = None;
        let mut done = None;
        match self.s2 {
            Some(Slot::Lookup { qpn, tag, raw }) => {
                out.context = Some((qpn, tag, self.record(qpn)));
                self.last_raw = Some(raw);
            }
            Some(Slot::Host { qpn }) => {
                let old = self.record(qpn);
                // The request is held until `done`, so it is still there.
                let req = inputs.host.unwrap_or_default();
                let mut new = [0; RECORD_WORDS];
                for (i, w) in new.iter_mut().enumerate() {
                    *w = (old[i] & !req.mask[i]) | (req.data[i] & req.mask[i]);
                }
                write = Some((qpn, new));
                done = Some(old);
            }
            None => {}
        }
        // The rising edge.
        let issue = inputs.host.is_some() && !self.busy && inputs.lookup.is_none();
        self.stalled = inputs.host.is_some() && !self.busy && inputs.lookup.is_some();
        if self.done.is_some() {
            self.busy = false;
        }
        if issue {
            self.busy = true;
        }
        self.s2 = self.s1;
        self.s1 = match (inputs.lookup, inputs.host) {
            (Some((qpn, tag)), _) => Some(Slot::Lookup {
                qpn,
                tag,
                raw: raw_now.unwrap_or_default(),
            }),
            (None, Some(h)) if issue => Some(Slot::Host { qpn: h.qpn }),
            _ => None,
        };
        self.write = write;
        self.done = done;
        if inputs.reset {
            self.s1 = None;
            self.s2 = None;
            self.write = None;
            self.busy = false;
            self.done = None;
            self.stalled = false;
        }
        out
    }
}
