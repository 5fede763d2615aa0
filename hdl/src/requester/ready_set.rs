//! `ReadySet`: the transmit scheduler's set of QPs with something to send,
//! a FIFO of QPNs with a per-QP "queued" bit so a QP is in it at most
//! once. `requester_events` pulses `sendable` when an event leaves a QP
//! with something to send (the model's `requester::may_send`, not
//! granted); the head goes out as the grant request stream, back into
//! `requester_events` as its `EV_GRANT` source. The QP leaves the set
//! when its request is taken; a refused grant does not put it back (only
//! a later event that says sendable does), so a QP whose WQE at the
//! cursor waits for a response is not asked again and again.
//!
//! # Ports
//!
//! - `clock`; `reset` (synchronous, high): empties the FIFO and drops a
//!   pulse in flight. Use it at power-up only: the queued bits keep their
//!   contents (zero at power-up).
//! - `sendable_valid`, `sendable_qpn` (in): a pulse, one QP per cycle at
//!   most; the QP is queued unless it is queued already. A pulse is
//!   decided in the cycle after it, so one in the cycle before its QP's
//!   request is taken counts as after the take and queues the QP again
//!   (a grant request too many is refused; one too few would lose work).
//! - Grant request (out, valid/ready): `request_valid`, `request_ready`,
//!   `request_qpn`, the oldest queued QP, from a register (held until
//!   taken).
//!
//! # Latency and throughput
//!
//! A pulse in cycle `t` is decided in `t + 1` (the queued bit read, with
//! the write of cycle `t` forwarded) and its QPN can be offered from
//! `t + 4` (FIFO write, the FIFO's two-edge read latency, the output
//! register). One pulse per cycle; one request taken per two cycles at
//! best (a take's queued-bit clear waits for a cycle without a set, and no
//! request is offered while it waits).
//!
//! # Memory
//!
//! The queued bits ([`SyncRam`], `2^A` x 1, zero at power-up) and the
//! FIFO ([`SyncFifo`], `2^A` x `A`: every QP fits at once), both block
//! RAM.

use crate::primitives::sync_fifo::SyncFifo;
use crate::primitives::sync_ram::SyncRam;
use rust_hdl::prelude::*;

/// The default build: 1024 QPs.
pub type ReadySetDefault = ReadySet<10, 11>;

/// The set (see the module doc); `AP1` = `A + 1` (the FIFO's pointer
/// width, which rust-hdl cannot compute in the type).
#[derive(LogicBlock)]
pub struct ReadySet<const A: usize, const AP1: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub sendable_valid: Signal<In, Bit>,
    pub sendable_qpn: Signal<In, Bits<A>>,
    pub request_valid: Signal<Out, Bit>,
    pub request_ready: Signal<In, Bit>,
    pub request_qpn: Signal<Out, Bits<A>>,
    queued: SyncRam<Bit, A>,
    fifo: SyncFifo<Bits<A>, A, AP1>,
    /// The pulse whose queued bit is being read.
    pulse_valid: DFF<Bit>,
    pulse_qpn: DFF<Bits<A>>,
    /// The queued-bit write of the previous cycle (the RAM read beside it
    /// did not see it).
    last_write: DFF<Bit>,
    last_qpn: DFF<Bits<A>>,
    last_value: DFF<Bit>,
    /// A taken QP whose queued bit is still to be cleared.
    clear_pending: DFF<Bit>,
    clear_qpn: DFF<Bits<A>>,
    head_valid: DFF<Bit>,
    head_qpn: DFF<Bits<A>>,
    is_queued: Signal<Local, Bit>,
    push: Signal<Local, Bit>,
    taken: Signal<Local, Bit>,
}

impl<const A: usize, const AP1: usize> Default for ReadySet<A, AP1> {
    fn default() -> Self {
        assert_eq!(A + 1, AP1, "AP1 = A + 1");
        ReadySet {
            clock: Default::default(),
            reset: Default::default(),
            sendable_valid: Default::default(),
            sendable_qpn: Default::default(),
            request_valid: Default::default(),
            request_ready: Default::default(),
            request_qpn: Default::default(),
            queued: Default::default(),
            fifo: Default::default(),
            pulse_valid: Default::default(),
            pulse_qpn: Default::default(),
            last_write: Default::default(),
            last_qpn: Default::default(),
            last_value: Default::default(),
            clear_pending: Default::default(),
            clear_qpn: Default::default(),
            head_valid: Default::default(),
            head_qpn: Default::default(),
            is_queued: Default::default(),
            push: Default::default(),
            taken: Default::default(),
        }
    }
}

impl<const A: usize, const AP1: usize> Logic for ReadySet<A, AP1> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            pulse_valid,
            pulse_qpn,
            last_write,
            last_qpn,
            last_value,
            clear_pending,
            clear_qpn,
            head_valid,
            head_qpn
        );
        clock!(self, clock, queued, fifo);
        self.fifo.reset.next = self.reset.val();

        self.pulse_valid.d.next = self.sendable_valid.val();
        self.pulse_qpn.d.next = self.sendable_qpn.val();
        self.queued.read_address.next = self.sendable_qpn.val();

        // The pulse's QP as queued now: a pending clear is newer than the
        // RAM, last cycle's write newer than the RAM's read.
        self.is_queued.next = self.queued.read_data.val();
        if self.last_write.q.val() & (self.last_qpn.q.val() == self.pulse_qpn.q.val()) {
            self.is_queued.next = self.last_value.q.val();
        }
        if self.clear_pending.q.val() & (self.clear_qpn.q.val() == self.pulse_qpn.q.val()) {
            self.is_queued.next = false;
        }
        // Taken in this very cycle: the pulse comes after the take.
        self.request_valid.next = self.head_valid.q.val() & !self.clear_pending.q.val();
        self.taken.next = self.request_valid.val() & self.request_ready.val();
        if self.taken.val() & (self.head_qpn.q.val() == self.pulse_qpn.q.val()) {
            self.is_queued.next = false;
        }
        self.push.next = self.pulse_valid.q.val() & !self.is_queued.val();

        // One queued-bit write per cycle: a set first, a pending clear in
        // the next free cycle (a set of the same QP supersedes it).
        self.queued.write_enable.next = false;
        self.queued.write_address.next = self.clear_qpn.q.val();
        self.queued.write_data.next = false;
        if self.push.val() {
            self.queued.write_enable.next = true;
            self.queued.write_address.next = self.pulse_qpn.q.val();
            self.queued.write_data.next = true;
            if self.clear_qpn.q.val() == self.pulse_qpn.q.val() {
                self.clear_pending.d.next = false;
            }
        } else if self.clear_pending.q.val() {
            self.queued.write_enable.next = true;
            self.clear_pending.d.next = false;
        }
        self.last_write.d.next = self.queued.write_enable.val();
        self.last_qpn.d.next = self.queued.write_address.val();
        self.last_value.d.next = self.queued.write_data.val();

        self.fifo.write.next = self.push.val();
        self.fifo.data_in.next = self.pulse_qpn.q.val();

        // The head in a register, offered while no clear waits (a take
        // only ever sets the clear, so a request once offered stays).
        // (`request_valid` and `taken` are set above.)
        self.request_qpn.next = self.head_qpn.q.val();
        if self.taken.val() {
            self.head_valid.d.next = false;
            // Unless the same QP is queued again in this cycle (its bit
            // then stays set).
            if !(self.push.val() & (self.pulse_qpn.q.val() == self.head_qpn.q.val())) {
                self.clear_pending.d.next = true;
                self.clear_qpn.d.next = self.head_qpn.q.val();
            }
        }
        self.fifo.read.next = false;
        if (!self.head_valid.q.val() | self.taken.val()) & !self.fifo.empty.val() {
            self.fifo.read.next = true;
            self.head_valid.d.next = true;
            self.head_qpn.d.next = self.fifo.data_out.val();
        }

        if self.reset.val() {
            self.pulse_valid.d.next = false;
            self.last_write.d.next = false;
            self.clear_pending.d.next = false;
            self.head_valid.d.next = false;
        }
    }
}
