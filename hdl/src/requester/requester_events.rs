//! `RequesterEvents`: the event loop of the requester half of a NIC, the
//! control part of `requester_path` (`docs/transport-core.md`, "The
//! requester side"). Six event sources, round robin, one event at a time
//! in a [`CompleterDatapath`] with the QP's fields from this block's
//! own [`QpContext`] (the requester direction's copy of the record), and
//! each event's effects out: the context write-back (a second pass
//! through the context pipeline), the timer command into the inner
//! [`QpTimers`], the send CQEs, the post result, the READ response /
//! atomic ACK placement, the transmit grant with the WQE's body from the
//! [`WqeBodyRam`], and a "sendable" pulse for the
//! [`ReadySet`](crate::requester::ready_set::ReadySet). The model it mirrors is the completer side of
//! `Nic` (`post_send`, `on_response`, `on_timer`, `move_to_error`,
//! `next_request`'s `grant_choice` and its packets' `after_packet`);
//! `sim/tests/blocks/requester_events.rs` replays what a model NIC recorded.
//!
//! # Ports
//!
//! - `clock`; `reset` (synchronous, high): back to idle, the in-flight
//!   grant counts and the sent FIFO emptied; the RAMs keep their contents.
//! - `qp_host` ([`ContextConfig`]): the context's host port, linked
//!   through (the driver's `modify_qp`; a host write of the `sq_*` fields
//!   or `state` while an event of the QP is under way is overwritten by
//!   its write-back: the driver moves a QP to ERR with `EV_TO_ERROR`).
//! - `cfg_window`, `cfg_ack_req_interval` (in): the NIC's send window
//!   (`requester::send_window` of `max_outstanding_psns`) and AckReq
//!   interval, copied onto every grant.
//! - Sources (valid/ready; a source holds its fields until `ready`, which
//!   comes in the cycle the event enters the completer):
//!   - `EV_POST`: `post_*`: `qpn`, the completer's WQE fields (`kind`,
//!     `opcode` (CQE opcode), `npsn`, `len`, `signaled`, `status`, `lkey`,
//!     `va`) and the body ([`WqeBody`]: `op` (a [`crate::codes::send_op_kind`] code),
//!     `remote_va`, `rkey`, `imm`, `compare`, `swap_add`, `solicited`);
//!   - `EV_RESPONSE`: `rsp_*`: `qpn` and the completer's `pkt_*` fields
//!     (`opcode`, `psn`, `has_aeth`, `aeth_syndrome`, `payload_len`,
//!     `atomic_orig`);
//!   - `EV_TIMER`: the inner [`QpTimers`]' expiries, and `timer_force_*`
//!     (`qpn`, `rnr`): an expiry forced from outside (a harness that
//!     replays a model's timers); the inner one first. `hold_timers` high
//!     keeps the inner expiries waiting (they are taken once it drops);
//!   - `EV_GRANT`: `greq_qpn`, from the ready set; taken while fewer than
//!     [`MAX_GRANTS`] grants are in flight and fewer than
//!     [`MAX_LONG_GRANTS`] of them may carry more than one packet;
//!   - `EV_SENT`: `sent_*`, a one-cycle pulse (`requester_datapath`'s
//!     status: `qpn`, `next_psn`, `ackreq`, `ackreq_end`, `error`,
//!     `status`) into a 16-entry FIFO; at most 16 grants are in flight
//!     (granted, their status not yet taken), so it never overflows;
//!   - `EV_TO_ERROR`: `err_qpn`, a move to ERR from the responder half or
//!     the driver.
//! - `place_result_valid`, `place_result_error`, `place_result_status`
//!   (in): the placement's local-write check result (`response_placement`
//!   answers it), forwarded to the completer, which waits for it.
//! - `decided_valid`, `decided_kind` (out): a one-cycle pulse when the
//!   completer's decision of an event is final (its done; the completer
//!   takes the next event from the next cycle on), with the event's
//!   `EV_*`: what tracks the events in the completer's order (the
//!   placement commands of `requester_path`) follows this, not the done
//!   three cycles later.
//! - Done (out, a one-cycle pulse when the write-back is presented to the
//!   context): `done_valid`, `done_qpn`, `done_kind` (the completer's
//!   `EV_*`), `done_record` (the record written back), the completer's
//!   side state `done_retry_una_valid`, `done_retry_una`,
//!   `done_rnr_waiting`, `done_ack_running`, and for a grant event
//!   `done_grant_refusal` (`GRANT_*`) and `done_grant_skipped`.
//! - `sendable_valid`, `sendable_qpn` (out, with `done_valid`): the QP
//!   has something to send and may be granted (the model's
//!   `requester::may_send` on the written-back state, the QP not
//!   granted). A grant event is never sendable: granted, the QP is in
//!   flight; refused, only a later event can change why.
//! - `timer_cmd_*` (out, a registered pulse, one cycle after the command
//!   went into [`QpTimers`]): `qpn`, `arm` (low: stop), `kind` (high: RNR
//!   wait), `code`.
//! - Post result (out, a registered pulse one cycle after the completer's
//!   done): `post_result_valid`, `_qpn`, `_accepted`, `_slot`.
//! - Placement request (out, the completer's, held with its fields steady
//!   until `place_result_valid` answers it; the payload waits in the
//!   response path's FIFO meanwhile): `place_valid`, `place_qpn` and the
//!   completer's `place_*` fields.
//! - Grant (out, valid/ready, from registers; the WQE body from the body
//!   RAM's output, held while offered): `grant_qpn`, `grant_slot`, the
//!   ring's `grant_kind`, `grant_opcode`, `grant_first_psn`, `grant_npsn`,
//!   `grant_len`, `grant_signaled`, `grant_lkey`, `grant_local_va`,
//!   `grant_start_psn` (the resume PSN), the context's `grant_mtu` and
//!   `grant_una` (after the event), `grant_window` and
//!   `grant_ack_req_interval`, and the body `grant_op`,
//!   `grant_remote_va`, `grant_rkey`, `grant_imm`, `grant_compare`,
//!   `grant_swap_add`, `grant_solicited`: every input of
//!   `requester_datapath`'s grant but the QP's addressing (PD, peer,
//!   P_Key, MACs, IPs, DSCP, ECN, UDP port: `qp_address_ram` by QPN).
//!   While a grant waits here no other grant event is taken.
//! - `cqe` (out, valid/ready): the completer's send CQE stream.
//!
//! # The event loop
//!
//! Two stages. The front picks the next event while the completer works
//! on one: the first source with an event, from the one after the source
//! last served (round robin over post, response, timer, grant, sent, to
//! error), leaving out a source whose QP is the one in the completer (its
//! event must see that one's write-back) and grant requests while a
//! grant is in the completer. Its QP is looked up in the context and in
//! the "granted" RAM (cycle `t`); at `t + 2` the context arrives and is
//! kept. If the QP is granted and the event is a response, timer, grant
//! or move to ERR, it is not taken (the event may rewind `send_psn`,
//! which the grant's packets already went past; the model grants and
//! sends atomically): the next source is tried. Posts and sent statuses
//! always go on, and so do other QPs' events. A grant request for the QP
//! of the response on offer is not picked: a new grant would hold the
//! response (a NAK, say) back again, and what it sends Go-Back-N would
//! send again (the model takes a response when it arrives). Else the
//! event enters the completer with the record's fields as soon as the
//! completer is free (at `t + 2` at the earliest), and its source is
//! answered then; a response whose `rsp_valid` dropped meanwhile (it
//! waits for the discard of its predecessor's payload) or a grant request
//! while a grant is on offer is withdrawn. A response whose data is
//! placed: the completer's placement request goes out as it is and the
//! event waits for its answer.
//!
//! At the completer's done: the timer command, the body written (an
//! accepted post), the grant registered, the granted bit set (a grant;
//! with whether it may carry more than one packet) or, at the sent
//! status's entry, cleared; and the write-back: a second lookup of the
//! QP, whose record (with host changes since) gets the completer's fields
//! and is written back in the update slot three cycles later. The
//! completer takes the next event, looked up meanwhile, in its done's own
//! cycle, so it runs while the write-back does; the done's outputs are
//! kept per stage, since that event can be done two cycles later. Two
//! pairs wait for the cycle after the done instead: a sent status after
//! a grant (both write the granted bits and the grant count) and a
//! response after a response (the done may owe `requester_path` a
//! payload discard, which goes before the next header). A lookup never
//! meets the done's (the context has one lookup port), and one made after
//! the done sees its write-back (the context forwards updates into
//! lookups up to two cycles ahead). The QP of the done is left out of the
//! pick for one more cycle, so that its next event enters after the done
//! is out, as the shadow models of the harnesses expect. A timer expiry
//! waiting for a QP whose event just issued a timer command is dropped
//! (the command replaced that timer).
//!
//! # Latency and throughput
//!
//! An event of another QP than the one before enters the completer in
//! that one's done cycle (but for the two pairs above, a cycle later); an
//! event of the same QP four cycles later (in the cycle after the done
//! is out); an event after an idle spell 2 cycles after it is offered. So
//! a stream of events of QPs in turn costs the completer's latency less
//! one cycle each (posts to two QPs in turn: 4 cycles each, to one QP
//! 8). The done comes 3 cycles
//! after the completer's (the write-back). A source refused for its
//! granted QP costs the front 3 cycles.
//!
//! # Memory
//!
//! The context ([`QpContext`], 8 RAMB36 at 1024 QPs), the completer's
//! rings and side RAM, the timers' deadlines and the WQE bodies
//! ([`WqeBodyRam`]) in block RAM; the granted bits (`2^A` x 2) and the
//! sent FIFO (16 x 65 bits) are small enough that Yosys puts them in LUT
//! RAM (`hdl/tests/blocks/requester_events.rs` checks the mapping); the next
//! event's context record (288 bits) is kept in flip-flops.

use crate::codes::qp_state;
use crate::primitives::sync_fifo::SyncFifo;
use crate::primitives::sync_ram::SyncRam;
use crate::qp::qp_context::ContextConfig;
use crate::qp::qp_context::QpContext;
use crate::qp::qp_context_record::{ContextRecordBits, RECORD_BITS};
use crate::qp::qp_timers::QpTimers;
use crate::qp::record_fields::RecordFields;
use crate::requester::completer_datapath::{CompleterDatapath, EV_GRANT, EV_POST, EV_SENT};
use crate::requester::completer_datapath::{
    EV_RESPONSE, EV_TIMER, EV_TO_ERROR, TIMER_ARM, TIMER_NONE,
};
use crate::requester::send_ports::{PostResult, QpErrorEvent, SendCqeStream, SendPost};
use crate::requester::send_queue_tracker::DEFAULT_SLOT_BITS;
use crate::requester::wqe_body_ram::{WqeBody, WqeBodyRam};
use rust_hdl::prelude::*;

/// A done's outputs but its QPN and record: kept from the done to the
/// write-back's merge (`kept`, `sendable` unused), then to its write
/// (`out`, `sendable` decided at the merge).
#[derive(Clone, Copy, Debug, Default, PartialEq, LogicStruct)]
struct DoneOutputs {
    kind: Bits<3>,
    retry_una_valid: Bit,
    retry_una: Bits<24>,
    rnr_waiting: Bit,
    ack_running: Bit,
    refusal: Bits<3>,
    skipped: Bits<5>,
    sendable: Bit,
}

/// Ring slot bits (the completer's default: 16 outstanding WQEs per QP).
pub const SLOT_BITS: usize = DEFAULT_SLOT_BITS;
/// Grants in flight at most (the sent FIFO's depth).
pub const MAX_GRANTS: u64 = 16;
/// Grants of more than one packet in flight at most; while that many are,
/// no grant is taken (the size of the next is known only after its event).
/// A QP's responses wait while it is granted, and a QP stays granted until
/// the datapath has decided the last packet of every grant ahead of its
/// own: with a 16-packet grant of every busy QP queued, a response (a NAK,
/// a READ response after a loss) waited for microseconds and held up every
/// response behind it. One is enough to keep the line busy: its status
/// comes with up to 5 packets of 4 KiB still in the datapath's payload
/// fetch, which cover the next grant's turnaround. One-packet grants
/// (small messages, READ and atomic requests) pass quickly and fill up to
/// [`MAX_GRANTS`] while no longer one is in flight.
pub const MAX_LONG_GRANTS: u64 = 1;

/// Source indices of the round robin.
pub const SRC_POST: u64 = 0;
pub const SRC_RESPONSE: u64 = 1;
pub const SRC_TIMER: u64 = 2;
pub const SRC_GRANT: u64 = 3;
pub const SRC_SENT: u64 = 4;
pub const SRC_TO_ERROR: u64 = 5;

/// The completer is free.
const ST_IDLE: u64 = 0;
/// An event is in the completer.
const ST_BUSY: u64 = 1;

/// The next event: none picked.
const PF_IDLE: u64 = 0;
/// Its lookups are under way.
const PF_LOOKUP: u64 = 1;
/// Its context is presented (and kept): refused, or entered as soon as
/// the completer is free.
const PF_CONTEXT: u64 = 2;
/// Its context is kept; it waits for the completer.
const PF_WAIT: u64 = 3;

/// The default build: 1024 QPs.
pub type RequesterEventsDefault = RequesterEvents<10>;

/// A sent status as the FIFO keeps it (QPN up to 14 bits).
#[derive(Clone, Copy, Debug, Default, PartialEq, LogicStruct)]
pub struct SentStatus {
    pub qpn: Bits<14>,
    pub next_psn: Bits<24>,
    pub ackreq: Bit,
    pub ackreq_end: Bits<24>,
    pub error: Bit,
    pub status: Bits<4>,
}

/// The event loop (see the module doc).
#[derive(LogicBlock)]
pub struct RequesterEvents<const A: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub qp_host: ContextConfig<A>,
    pub cfg_window: Signal<In, Bits<32>>,
    pub cfg_ack_req_interval: Signal<In, Bits<32>>,

    pub post: SendPost<A>,

    pub rsp_valid: Signal<In, Bit>,
    pub rsp_ready: Signal<Out, Bit>,
    pub rsp_qpn: Signal<In, Bits<A>>,
    pub rsp_opcode: Signal<In, Bits<8>>,
    pub rsp_psn: Signal<In, Bits<24>>,
    pub rsp_has_aeth: Signal<In, Bit>,
    pub rsp_aeth_syndrome: Signal<In, Bits<8>>,
    pub rsp_payload_len: Signal<In, Bits<32>>,
    pub rsp_atomic_orig: Signal<In, Bits<64>>,

    pub hold_timers: Signal<In, Bit>,
    pub timer_force_valid: Signal<In, Bit>,
    pub timer_force_ready: Signal<Out, Bit>,
    pub timer_force_qpn: Signal<In, Bits<A>>,
    pub timer_force_rnr: Signal<In, Bit>,

    pub greq_valid: Signal<In, Bit>,
    pub greq_ready: Signal<Out, Bit>,
    pub greq_qpn: Signal<In, Bits<A>>,

    pub sent_valid: Signal<In, Bit>,
    pub sent_qpn: Signal<In, Bits<A>>,
    pub sent_next_psn: Signal<In, Bits<24>>,
    pub sent_ackreq: Signal<In, Bit>,
    pub sent_ackreq_end: Signal<In, Bits<24>>,
    pub sent_error: Signal<In, Bit>,
    pub sent_status: Signal<In, Bits<4>>,

    pub err: QpErrorEvent<A>,

    pub place_result_valid: Signal<In, Bit>,
    pub place_result_error: Signal<In, Bit>,
    pub place_result_status: Signal<In, Bits<4>>,

    pub decided_valid: Signal<Out, Bit>,
    pub decided_kind: Signal<Out, Bits<3>>,
    pub done_valid: Signal<Out, Bit>,
    pub done_qpn: Signal<Out, Bits<A>>,
    pub done_kind: Signal<Out, Bits<3>>,
    pub done_record: Signal<Out, Bits<288>>,
    pub done_retry_una_valid: Signal<Out, Bit>,
    pub done_retry_una: Signal<Out, Bits<24>>,
    pub done_rnr_waiting: Signal<Out, Bit>,
    pub done_ack_running: Signal<Out, Bit>,
    pub done_grant_refusal: Signal<Out, Bits<3>>,
    pub done_grant_skipped: Signal<Out, Bits<5>>,
    pub sendable_valid: Signal<Out, Bit>,
    pub sendable_qpn: Signal<Out, Bits<A>>,

    pub timer_cmd_valid: Signal<Out, Bit>,
    pub timer_cmd_qpn: Signal<Out, Bits<A>>,
    pub timer_cmd_arm: Signal<Out, Bit>,
    pub timer_cmd_kind: Signal<Out, Bit>,
    pub timer_cmd_code: Signal<Out, Bits<5>>,

    pub post_result: PostResult<A, SLOT_BITS>,

    pub place_valid: Signal<Out, Bit>,
    pub place_qpn: Signal<Out, Bits<A>>,
    pub place_atomic: Signal<Out, Bit>,
    pub place_slot: Signal<Out, Bits<SLOT_BITS>>,
    pub place_offset: Signal<Out, Bits<32>>,
    pub place_len: Signal<Out, Bits<32>>,
    pub place_atomic_orig: Signal<Out, Bits<64>>,
    pub place_lkey: Signal<Out, Bits<32>>,
    pub place_va: Signal<Out, Bits<64>>,

    pub grant_valid: Signal<Out, Bit>,
    pub grant_ready: Signal<In, Bit>,
    pub grant_qpn: Signal<Out, Bits<A>>,
    pub grant_slot: Signal<Out, Bits<SLOT_BITS>>,
    pub grant_kind: Signal<Out, Bits<2>>,
    pub grant_opcode: Signal<Out, Bits<3>>,
    pub grant_first_psn: Signal<Out, Bits<24>>,
    pub grant_npsn: Signal<Out, Bits<24>>,
    pub grant_len: Signal<Out, Bits<32>>,
    pub grant_signaled: Signal<Out, Bit>,
    pub grant_lkey: Signal<Out, Bits<32>>,
    pub grant_local_va: Signal<Out, Bits<64>>,
    pub grant_start_psn: Signal<Out, Bits<24>>,
    pub grant_mtu: Signal<Out, Bits<3>>,
    pub grant_una: Signal<Out, Bits<24>>,
    pub grant_window: Signal<Out, Bits<32>>,
    pub grant_ack_req_interval: Signal<Out, Bits<32>>,
    pub grant_op: Signal<Out, Bits<3>>,
    pub grant_remote_va: Signal<Out, Bits<64>>,
    pub grant_rkey: Signal<Out, Bits<32>>,
    pub grant_imm: Signal<Out, Bits<32>>,
    pub grant_compare: Signal<Out, Bits<64>>,
    pub grant_swap_add: Signal<Out, Bits<64>>,
    pub grant_solicited: Signal<Out, Bit>,

    pub cqe: SendCqeStream<A, SLOT_BITS>,

    contexts: QpContext<A>,
    /// The write-back's lookup: the record as it stands.
    context_fields: RecordFields,
    /// The next event's context fields (from its lookup, or kept).
    entry_fields: RecordFields,
    completer: CompleterDatapath<A, SLOT_BITS>,
    timers: QpTimers<A>,
    bodies: WqeBodyRam<A, SLOT_BITS>,
    /// Per QP: granted, its sent status not yet taken (bit 0), and the
    /// grant may carry more than one packet (bit 1).
    granted: SyncRam<Bits<2>, A>,
    sent_fifo: SyncFifo<SentStatus, 4, 5>,

    /// The completer's stage: `ST_IDLE` or `ST_BUSY`.
    state: DFF<Bits<1>>,
    /// The source served last (round robin from the one after it).
    last_source: DFF<Bits<3>>,
    // The next event, picked and looked up while the completer works.
    pf_state: DFF<Bits<2>>,
    pf_source: DFF<Bits<3>>,
    pf_kind: DFF<Bits<3>>,
    pf_qpn: DFF<Bits<A>>,
    /// The timer event is a forced one.
    pf_forced: DFF<Bit>,
    /// The event waits for its QP's grant.
    pf_held: DFF<Bit>,
    /// The QP's granted bits at the lookup.
    pf_granted: DFF<Bits<2>>,
    pf_record: DFF<Bits<RECORD_BITS>>,
    // The event in the completer.
    kind: DFF<Bits<3>>,
    qpn: DFF<Bits<A>>,
    body: DFF<WqeBody>,
    mtu: DFF<Bits<3>>,
    /// Its QP stays granted after it (a post to a granted QP).
    granted_after: DFF<Bit>,
    grants_in_flight: DFF<Bits<5>>,
    long_grants_in_flight: DFF<Bits<5>>,
    // The write-back: its lookup at the completer's done, the merge two
    // cycles later, the update and the done outputs three.
    wb_lookup: DFF<Bit>,
    wb_merge: DFF<Bit>,
    wb_write: DFF<Bit>,
    wb_qpn: DFF<Bits<A>>,
    is_granted: DFF<Bit>,
    // The completer's done, kept to the write-back.
    wb_state: DFF<Bits<3>>,
    wb_next_psn: DFF<Bits<24>>,
    wb_send_psn: DFF<Bits<24>>,
    wb_una: DFF<Bits<24>>,
    wb_max_sent: DFF<Bits<24>>,
    wb_ackreq_end: DFF<Bits<24>>,
    wb_retry_left: DFF<Bits<3>>,
    wb_rnr_left: DFF<Bits<3>>,
    kept: DFF<DoneOutputs>,
    merged: DFF<ContextRecordBits>,
    // The done outputs, taken from the fields above at the merge: an
    // event entered with the done can be done itself two cycles later
    // and overwrite them in the merge's cycle.
    out_qpn: DFF<Bits<A>>,
    out: DFF<DoneOutputs>,
    // Registered pulses.
    tc_valid: DFF<Bit>,
    tc_qpn: DFF<Bits<A>>,
    tc_arm: DFF<Bit>,
    tc_kind: DFF<Bit>,
    tc_code: DFF<Bits<5>>,
    pr_valid: DFF<Bit>,
    pr_accepted: DFF<Bit>,
    pr_slot: DFF<Bits<SLOT_BITS>>,
    // The grant on offer.
    g_valid: DFF<Bit>,
    g_qpn: DFF<Bits<A>>,
    g_slot: DFF<Bits<SLOT_BITS>>,
    g_kind: DFF<Bits<2>>,
    g_opcode: DFF<Bits<3>>,
    g_first_psn: DFF<Bits<24>>,
    g_npsn: DFF<Bits<24>>,
    g_len: DFF<Bits<32>>,
    g_signaled: DFF<Bit>,
    g_lkey: DFF<Bits<32>>,
    g_va: DFF<Bits<64>>,
    g_start_psn: DFF<Bits<24>>,
    g_mtu: DFF<Bits<3>>,
    g_una: DFF<Bits<24>>,

    src_post: Constant<Bits<3>>,
    src_response: Constant<Bits<3>>,
    src_timer: Constant<Bits<3>>,
    src_grant: Constant<Bits<3>>,
    src_sent: Constant<Bits<3>>,
    src_to_error: Constant<Bits<3>>,
    st_idle: Constant<Bits<1>>,
    st_busy: Constant<Bits<1>>,
    pf_idle: Constant<Bits<2>>,
    pf_lookup: Constant<Bits<2>>,
    pf_context: Constant<Bits<2>>,
    pf_wait: Constant<Bits<2>>,
    ev_post: Constant<Bits<3>>,
    ev_response: Constant<Bits<3>>,
    ev_timer: Constant<Bits<3>>,
    ev_grant: Constant<Bits<3>>,
    ev_sent: Constant<Bits<3>>,
    ev_to_error: Constant<Bits<3>>,
    timer_none: Constant<Bits<2>>,
    timer_arm: Constant<Bits<2>>,
    state_rts: Constant<Bits<3>>,
    max_grants: Constant<Bits<5>>,
    max_long_grants: Constant<Bits<5>>,
    /// PSNs of the WQE from the grant's resume PSN on, and whether that is
    /// more than one packet (a SEND or WRITE; READ and atomic requests are
    /// one packet).
    grant_left: Signal<Local, Bits<24>>,
    grant_long: Signal<Local, Bit>,
    wants: Signal<Local, Bits<6>>,
    after_last: Signal<Local, Bits<6>>,
    wants_after: Signal<Local, Bits<6>>,
    pick_from: Signal<Local, Bits<6>>,
    pick: Signal<Local, Bits<3>>,
    pick_qpn: Signal<Local, Bits<A>>,
    /// A grant may be taken: none on offer, and room in flight.
    grant_room: Signal<Local, Bit>,
    /// Each source's wanting QP is the one in the completer (its next
    /// event must see this one's write-back).
    busy_qpn: Signal<Local, Bits<6>>,
    busy: Signal<Local, Bit>,
    /// The next event may enter now: the completer is idle, or it is
    /// done and the two events touch nothing in common (see the entry).
    may_enter: Signal<Local, Bit>,
    entering: Signal<Local, Bit>,
    /// The next event's source no longer offers it: a grant request
    /// while a grant is on offer, a response waiting for a discard.
    withdrawn: Signal<Local, Bit>,
    expiry_first: Signal<Local, Bit>,
    timer_qpn: Signal<Local, Bits<A>>,
    done: Signal<Local, Bit>,
    fifo_head: Signal<Local, SentStatus>,
    grant_taken: Signal<Local, Bit>,
    behind: Signal<Local, Bits<24>>,
}

impl<const A: usize> Default for RequesterEvents<A> {
    fn default() -> Self {
        assert!(A <= 14, "QPNs of 14 bits at most (the sent FIFO's entry)");
        RequesterEvents {
            clock: Default::default(),
            reset: Default::default(),
            qp_host: Default::default(),
            cfg_window: Default::default(),
            cfg_ack_req_interval: Default::default(),
            post: Default::default(),
            rsp_valid: Default::default(),
            rsp_ready: Default::default(),
            rsp_qpn: Default::default(),
            rsp_opcode: Default::default(),
            rsp_psn: Default::default(),
            rsp_has_aeth: Default::default(),
            rsp_aeth_syndrome: Default::default(),
            rsp_payload_len: Default::default(),
            rsp_atomic_orig: Default::default(),
            hold_timers: Default::default(),
            timer_force_valid: Default::default(),
            timer_force_ready: Default::default(),
            timer_force_qpn: Default::default(),
            timer_force_rnr: Default::default(),
            greq_valid: Default::default(),
            greq_ready: Default::default(),
            greq_qpn: Default::default(),
            sent_valid: Default::default(),
            sent_qpn: Default::default(),
            sent_next_psn: Default::default(),
            sent_ackreq: Default::default(),
            sent_ackreq_end: Default::default(),
            sent_error: Default::default(),
            sent_status: Default::default(),
            err: Default::default(),
            place_result_valid: Default::default(),
            place_result_error: Default::default(),
            place_result_status: Default::default(),
            decided_valid: Default::default(),
            decided_kind: Default::default(),
            done_valid: Default::default(),
            done_qpn: Default::default(),
            done_kind: Default::default(),
            done_record: Default::default(),
            done_retry_una_valid: Default::default(),
            done_retry_una: Default::default(),
            done_rnr_waiting: Default::default(),
            done_ack_running: Default::default(),
            done_grant_refusal: Default::default(),
            done_grant_skipped: Default::default(),
            sendable_valid: Default::default(),
            sendable_qpn: Default::default(),
            timer_cmd_valid: Default::default(),
            timer_cmd_qpn: Default::default(),
            timer_cmd_arm: Default::default(),
            timer_cmd_kind: Default::default(),
            timer_cmd_code: Default::default(),
            post_result: Default::default(),
            place_valid: Default::default(),
            place_qpn: Default::default(),
            place_atomic: Default::default(),
            place_slot: Default::default(),
            place_offset: Default::default(),
            place_len: Default::default(),
            place_atomic_orig: Default::default(),
            place_lkey: Default::default(),
            place_va: Default::default(),
            grant_valid: Default::default(),
            grant_ready: Default::default(),
            grant_qpn: Default::default(),
            grant_slot: Default::default(),
            grant_kind: Default::default(),
            grant_opcode: Default::default(),
            grant_first_psn: Default::default(),
            grant_npsn: Default::default(),
            grant_len: Default::default(),
            grant_signaled: Default::default(),
            grant_lkey: Default::default(),
            grant_local_va: Default::default(),
            grant_start_psn: Default::default(),
            grant_mtu: Default::default(),
            grant_una: Default::default(),
            grant_window: Default::default(),
            grant_ack_req_interval: Default::default(),
            grant_op: Default::default(),
            grant_remote_va: Default::default(),
            grant_rkey: Default::default(),
            grant_imm: Default::default(),
            grant_compare: Default::default(),
            grant_swap_add: Default::default(),
            grant_solicited: Default::default(),
            cqe: Default::default(),
            contexts: Default::default(),
            context_fields: Default::default(),
            completer: Default::default(),
            timers: Default::default(),
            bodies: Default::default(),
            granted: Default::default(),
            sent_fifo: Default::default(),
            state: Default::default(),
            last_source: DFF::default(),
            pf_state: Default::default(),
            pf_source: Default::default(),
            pf_kind: Default::default(),
            pf_qpn: Default::default(),
            pf_forced: Default::default(),
            pf_held: Default::default(),
            pf_granted: Default::default(),
            pf_record: Default::default(),
            kind: Default::default(),
            qpn: Default::default(),
            body: Default::default(),
            mtu: Default::default(),
            granted_after: Default::default(),
            grants_in_flight: Default::default(),
            long_grants_in_flight: Default::default(),
            wb_lookup: Default::default(),
            wb_merge: Default::default(),
            wb_write: Default::default(),
            wb_qpn: Default::default(),
            is_granted: Default::default(),
            wb_state: Default::default(),
            wb_next_psn: Default::default(),
            wb_send_psn: Default::default(),
            wb_una: Default::default(),
            wb_max_sent: Default::default(),
            wb_ackreq_end: Default::default(),
            wb_retry_left: Default::default(),
            wb_rnr_left: Default::default(),
            kept: Default::default(),
            merged: Default::default(),
            out_qpn: Default::default(),
            out: Default::default(),
            tc_valid: Default::default(),
            tc_qpn: Default::default(),
            tc_arm: Default::default(),
            tc_kind: Default::default(),
            tc_code: Default::default(),
            pr_valid: Default::default(),
            pr_accepted: Default::default(),
            pr_slot: Default::default(),
            g_valid: Default::default(),
            g_qpn: Default::default(),
            g_slot: Default::default(),
            g_kind: Default::default(),
            g_opcode: Default::default(),
            g_first_psn: Default::default(),
            g_npsn: Default::default(),
            g_len: Default::default(),
            g_signaled: Default::default(),
            g_lkey: Default::default(),
            g_va: Default::default(),
            g_start_psn: Default::default(),
            g_mtu: Default::default(),
            g_una: Default::default(),
            src_post: Constant::new(bits::<3>(SRC_POST)),
            src_response: Constant::new(bits::<3>(SRC_RESPONSE)),
            src_timer: Constant::new(bits::<3>(SRC_TIMER)),
            src_grant: Constant::new(bits::<3>(SRC_GRANT)),
            src_sent: Constant::new(bits::<3>(SRC_SENT)),
            src_to_error: Constant::new(bits::<3>(SRC_TO_ERROR)),
            st_idle: Constant::new(bits::<1>(ST_IDLE)),
            st_busy: Constant::new(bits::<1>(ST_BUSY)),
            pf_idle: Constant::new(bits::<2>(PF_IDLE)),
            pf_lookup: Constant::new(bits::<2>(PF_LOOKUP)),
            pf_context: Constant::new(bits::<2>(PF_CONTEXT)),
            pf_wait: Constant::new(bits::<2>(PF_WAIT)),
            ev_post: Constant::new(bits::<3>(EV_POST)),
            ev_response: Constant::new(bits::<3>(EV_RESPONSE)),
            ev_timer: Constant::new(bits::<3>(EV_TIMER)),
            ev_grant: Constant::new(bits::<3>(EV_GRANT)),
            ev_sent: Constant::new(bits::<3>(EV_SENT)),
            ev_to_error: Constant::new(bits::<3>(EV_TO_ERROR)),
            timer_none: Constant::new(bits::<2>(TIMER_NONE)),
            timer_arm: Constant::new(bits::<2>(TIMER_ARM)),
            state_rts: Constant::new(bits::<3>(u64::from(qp_state::RTS))),
            max_grants: Constant::new(bits::<5>(MAX_GRANTS)),
            max_long_grants: Constant::new(bits::<5>(MAX_LONG_GRANTS)),
            grant_left: Default::default(),
            grant_long: Default::default(),
            wants: Default::default(),
            after_last: Default::default(),
            wants_after: Default::default(),
            pick_from: Default::default(),
            pick: Default::default(),
            pick_qpn: Default::default(),
            grant_room: Default::default(),
            busy_qpn: Default::default(),
            busy: Default::default(),
            may_enter: Default::default(),
            entering: Default::default(),
            withdrawn: Default::default(),
            entry_fields: Default::default(),
            expiry_first: Default::default(),
            timer_qpn: Default::default(),
            done: Default::default(),
            fifo_head: Default::default(),
            grant_taken: Default::default(),
            behind: Default::default(),
        }
    }
}

impl<const A: usize> Logic for RequesterEvents<A> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            state,
            last_source,
            pf_state,
            pf_source,
            pf_kind,
            pf_qpn,
            pf_forced,
            pf_held,
            pf_granted,
            pf_record,
            kind,
            qpn,
            body,
            mtu,
            granted_after,
            grants_in_flight,
            long_grants_in_flight,
            wb_lookup,
            wb_merge,
            wb_write,
            wb_qpn,
            is_granted,
            wb_state,
            wb_next_psn,
            wb_send_psn,
            wb_una,
            wb_max_sent,
            wb_ackreq_end,
            wb_retry_left,
            wb_rnr_left,
            kept,
            merged,
            out_qpn,
            out,
            tc_valid,
            tc_qpn,
            tc_arm,
            tc_kind,
            tc_code,
            pr_valid,
            pr_accepted,
            pr_slot,
            g_valid,
            g_qpn,
            g_slot,
            g_kind,
            g_opcode,
            g_first_psn,
            g_npsn,
            g_len,
            g_signaled,
            g_lkey,
            g_va,
            g_start_psn,
            g_mtu,
            g_una
        );
        clock!(self, clock, contexts, completer, timers, bodies, granted, sent_fifo);
        self.contexts.reset.next = self.reset.val();
        self.completer.reset.next = self.reset.val();
        self.sent_fifo.reset.next = self.reset.val();
        ContextConfig::<A>::link(&mut self.qp_host, &mut self.contexts.host);
        self.context_fields.record.next = self.contexts.context.record.val();
        self.entry_fields.record.next = self.pf_record.q.val();
        if self.pf_state.q.val() == self.pf_context.val() {
            self.entry_fields.record.next = self.contexts.context.record.val();
            self.pf_record.d.next = self.contexts.context.record.val();
        }
        self.done.next =
            (self.state.q.val() == self.st_busy.val()) & self.completer.done_valid.val();

        // ---- sent statuses: a pulse cannot wait
        self.sent_fifo.write.next = self.sent_valid.val();
        self.sent_fifo.data_in.next.qpn = bit_cast::<14, A>(self.sent_qpn.val());
        self.sent_fifo.data_in.next.next_psn = self.sent_next_psn.val();
        self.sent_fifo.data_in.next.ackreq = self.sent_ackreq.val();
        self.sent_fifo.data_in.next.ackreq_end = self.sent_ackreq_end.val();
        self.sent_fifo.data_in.next.error = self.sent_error.val();
        self.sent_fifo.data_in.next.status = self.sent_status.val();
        self.fifo_head.next = self.sent_fifo.data_out.val();
        self.sent_fifo.read.next = false;

        // ---- the round robin: the first source wanting from the one
        // after the last served, else the first wanting at all. A source
        // whose QP is in the completer waits for its write-back.
        self.expiry_first.next = self.timers.expiry.valid.val() & !self.hold_timers.val();
        self.timer_qpn.next = self.timer_force_qpn.val();
        if self.expiry_first.val() {
            self.timer_qpn.next = self.timers.expiry.qpn.val();
        }
        self.grant_room.next = !self.g_valid.q.val()
            & (self.grants_in_flight.q.val() < self.max_grants.val())
            & (self.long_grants_in_flight.q.val() < self.max_long_grants.val());
        self.busy_qpn.next = 0.into();
        // The QP in the completer, and the one whose done is one cycle old
        // (`wb_qpn`; the same QP unless an event entered with the done):
        // its next event enters after the done is out (`done_valid`), as
        // it did when events were taken one at a time.
        self.busy.next = self.state.q.val() == self.st_busy.val();
        if (self.busy.val() & (self.post.qpn.val() == self.qpn.q.val()))
            | (self.wb_lookup.q.val() & (self.post.qpn.val() == self.wb_qpn.q.val()))
        {
            self.busy_qpn.next = self.busy_qpn.val() | 1;
        }
        if (self.busy.val() & (self.rsp_qpn.val() == self.qpn.q.val()))
            | (self.wb_lookup.q.val() & (self.rsp_qpn.val() == self.wb_qpn.q.val()))
        {
            self.busy_qpn.next = self.busy_qpn.val() | 2;
        }
        if (self.busy.val() & (self.timer_qpn.val() == self.qpn.q.val()))
            | (self.wb_lookup.q.val() & (self.timer_qpn.val() == self.wb_qpn.q.val()))
        {
            self.busy_qpn.next = self.busy_qpn.val() | 4;
        }
        // A grant in the completer: the next waits for its offer.
        if (self.busy.val()
            & ((self.greq_qpn.val() == self.qpn.q.val())
                | (self.kind.q.val() == self.ev_grant.val())))
            | (self.wb_lookup.q.val() & (self.greq_qpn.val() == self.wb_qpn.q.val()))
        {
            self.busy_qpn.next = self.busy_qpn.val() | 8;
        }
        if (self.busy.val() & (bit_cast::<A, 14>(self.fifo_head.val().qpn) == self.qpn.q.val()))
            | (self.wb_lookup.q.val()
                & (bit_cast::<A, 14>(self.fifo_head.val().qpn) == self.wb_qpn.q.val()))
        {
            self.busy_qpn.next = self.busy_qpn.val() | 16;
        }
        if (self.busy.val() & (self.err.qpn.val() == self.qpn.q.val()))
            | (self.wb_lookup.q.val() & (self.err.qpn.val() == self.wb_qpn.q.val()))
        {
            self.busy_qpn.next = self.busy_qpn.val() | 32;
        }
        self.wants.next = 0.into();
        if self.post.valid.val() {
            self.wants.next = self.wants.val() | 1;
        }
        if self.rsp_valid.val() {
            self.wants.next = self.wants.val() | 2;
        }
        if self.expiry_first.val() | self.timer_force_valid.val() {
            self.wants.next = self.wants.val() | 4;
        }
        // A QP whose response waits is not granted again first: the
        // response (a NAK above all) waits while its QP is granted, and
        // each new grant would send more that Go-Back-N sends again.
        if self.greq_valid.val()
            & self.grant_room.val()
            & !(self.rsp_valid.val() & (self.rsp_qpn.val() == self.greq_qpn.val()))
        {
            self.wants.next = self.wants.val() | 8;
        }
        if !self.sent_fifo.empty.val() {
            self.wants.next = self.wants.val() | 16;
        }
        if self.err.valid.val() {
            self.wants.next = self.wants.val() | 32;
        }
        self.wants.next = self.wants.val() & !self.busy_qpn.val();
        self.after_last.next = 0x3E.into();
        if self.last_source.q.val() == 1 {
            self.after_last.next = 0x3C.into();
        }
        if self.last_source.q.val() == 2 {
            self.after_last.next = 0x38.into();
        }
        if self.last_source.q.val() == 3 {
            self.after_last.next = 0x30.into();
        }
        if self.last_source.q.val() == 4 {
            self.after_last.next = 0x20.into();
        }
        if self.last_source.q.val() == 5 {
            self.after_last.next = 0x00.into();
        }
        self.wants_after.next = self.wants.val() & self.after_last.val();
        self.pick_from.next = self.wants.val();
        if self.wants_after.val().any() {
            self.pick_from.next = self.wants_after.val();
        }
        self.pick.next = self.src_to_error.val();
        if self.pick_from.val().get_bit(4) {
            self.pick.next = self.src_sent.val();
        }
        if self.pick_from.val().get_bit(3) {
            self.pick.next = self.src_grant.val();
        }
        if self.pick_from.val().get_bit(2) {
            self.pick.next = self.src_timer.val();
        }
        if self.pick_from.val().get_bit(1) {
            self.pick.next = self.src_response.val();
        }
        if self.pick_from.val().get_bit(0) {
            self.pick.next = self.src_post.val();
        }
        self.pick_qpn.next = self.err.qpn.val();
        if self.pick.val() == self.src_post.val() {
            self.pick_qpn.next = self.post.qpn.val();
        }
        if self.pick.val() == self.src_response.val() {
            self.pick_qpn.next = self.rsp_qpn.val();
        }
        if self.pick.val() == self.src_timer.val() {
            self.pick_qpn.next = self.timer_qpn.val();
        }
        if self.pick.val() == self.src_grant.val() {
            self.pick_qpn.next = self.greq_qpn.val();
        }
        if self.pick.val() == self.src_sent.val() {
            self.pick_qpn.next = bit_cast::<A, 14>(self.fifo_head.val().qpn);
        }

        // ---- defaults
        self.contexts.lookup.valid.next = false;
        self.contexts.lookup.qpn.next = self.pick_qpn.val();
        self.contexts.lookup.tag.next = 0.into();
        self.contexts.update.valid.next = self.wb_write.q.val();
        self.contexts.update.qpn.next = self.out_qpn.q.val();
        self.contexts.update.record.next = self.merged.q.val().into();
        self.granted.read_address.next = self.pick_qpn.val();
        self.granted.write_enable.next = false;
        self.granted.write_address.next = self.pf_qpn.q.val();
        self.granted.write_data.next = 0.into();
        self.post.ready.next = false;
        self.rsp_ready.next = false;
        self.timer_force_ready.next = false;
        self.timers.expiry.ready.next = false;
        self.greq_ready.next = false;
        self.err.ready.next = false;
        self.tc_valid.d.next = false;
        self.pr_valid.d.next = false;

        // ---- the completer's event: the record's fields and the chosen
        // source's (held by the source until it is answered)
        self.completer.ev_valid.next = false;
        self.completer.ev_kind.next = self.pf_kind.q.val();
        self.completer.ev_qpn.next = self.pf_qpn.q.val();
        self.completer.pkt_opcode.next = self.rsp_opcode.val();
        self.completer.pkt_psn.next = self.rsp_psn.val();
        self.completer.pkt_has_aeth.next = self.rsp_has_aeth.val();
        self.completer.pkt_aeth_syndrome.next = self.rsp_aeth_syndrome.val();
        self.completer.pkt_payload_len.next = self.rsp_payload_len.val();
        self.completer.pkt_atomic_orig.next = self.rsp_atomic_orig.val();
        self.completer.timer_rnr.next = self.timers.expiry.kind.val();
        if self.pf_forced.q.val() {
            self.completer.timer_rnr.next = self.timer_force_rnr.val();
        }
        self.completer.post_kind.next = self.post.kind.val();
        self.completer.post_opcode.next = self.post.opcode.val();
        self.completer.post_npsn.next = self.post.npsn.val();
        self.completer.post_len.next = self.post.len.val();
        self.completer.post_signaled.next = self.post.signaled.val();
        self.completer.post_status.next = self.post.status.val();
        self.completer.post_lkey.next = self.post.lkey.val();
        self.completer.post_va.next = self.post.va.val();
        self.completer.sent_next_psn.next = self.fifo_head.val().next_psn;
        self.completer.sent_ackreq.next = self.fifo_head.val().ackreq;
        self.completer.sent_ackreq_end.next = self.fifo_head.val().ackreq_end;
        self.completer.sent_error.next = self.fifo_head.val().error;
        self.completer.sent_status.next = self.fifo_head.val().status;
        self.completer.ctx_state.next = self.entry_fields.fields.val().state;
        self.completer.ctx_next_psn.next = self.entry_fields.fields.val().sq_next_psn;
        self.completer.ctx_send_psn.next = self.entry_fields.fields.val().sq_send_psn;
        self.completer.ctx_una_psn.next = self.entry_fields.fields.val().sq_una_psn;
        self.completer.ctx_max_sent_psn.next = self.entry_fields.fields.val().sq_max_sent_psn;
        self.completer.ctx_ackreq_end_psn.next = self.entry_fields.fields.val().sq_ackreq_end_psn;
        self.completer.ctx_timeout.next = self.entry_fields.fields.val().timeout;
        self.completer.ctx_retry_cnt.next = self.entry_fields.fields.val().retry_cnt;
        self.completer.ctx_rnr_retry.next = self.entry_fields.fields.val().rnr_retry;
        self.completer.ctx_retry_left.next = self.entry_fields.fields.val().retry_left;
        self.completer.ctx_rnr_left.next = self.entry_fields.fields.val().rnr_left;
        self.completer.ctx_path_mtu.next = self.entry_fields.fields.val().path_mtu;
        self.completer.ctx_max_rd_atomic.next = self.entry_fields.fields.val().max_rd_atomic;

        // ---- timers: the done's command; expiries are taken as events
        self.timers.command.valid.next =
            self.done.val() & (self.completer.timer_op.val() != self.timer_none.val());
        self.timers.command.qpn.next = self.completer.done_qpn.val();
        self.timers.command.arm.next = self.completer.timer_op.val() == self.timer_arm.val();
        self.timers.command.kind.next = self.completer.timer_kind.val();
        self.timers.command.code.next = self.completer.timer_code.val();

        // ---- the WQE bodies: written at an accepted post, read at the
        // grant and held while it is offered
        self.bodies.write_enable.next = false;
        self.bodies.write_qpn.next = self.completer.done_qpn.val();
        self.bodies.write_slot.next = self.completer.post_slot.val();
        self.bodies.write_data.next = self.body.q.val();
        self.bodies.read_qpn.next = self.g_qpn.q.val();
        self.bodies.read_slot.next = self.g_slot.q.val();

        self.grant_left.next = self.completer.grant_first_psn.val()
            + self.completer.grant_npsn.val()
            - self.completer.grant_resume_psn.val();
        self.grant_long.next = !self.completer.grant_kind.val().get_bit(1)
            & self.grant_left.val().get_bits::<23>(1).any();

        // ---- the next event: picked and looked up while the completer
        // works on this one, entered when it is free
        // The next event enters in the done's cycle too, but for two
        // pairs: a sent status after a grant (both write the granted RAM
        // and the grant count), and a response after a response (the
        // done's decision may owe `requester_path` a discard, and the
        // next header must wait for it).
        self.entering.next = false;
        self.may_enter.next = (self.state.q.val() == self.st_idle.val())
            | (self.done.val()
                & !((self.kind.q.val() == self.ev_grant.val())
                    & (self.pf_source.q.val() == self.src_sent.val()))
                & !((self.kind.q.val() == self.ev_response.val())
                    & (self.pf_source.q.val() == self.src_response.val())));
        self.withdrawn.next = ((self.pf_source.q.val() == self.src_grant.val())
            & !self.grant_room.val())
            | ((self.pf_source.q.val() == self.src_response.val()) & !self.rsp_valid.val());
        if self.pf_state.q.val() == self.pf_idle.val() {
            // The done's write-back lookup has the context port.
            if self.wants.val().any() & !self.done.val() {
                self.pf_source.d.next = self.pick.val();
                self.pf_qpn.d.next = self.pick_qpn.val();
                self.pf_forced.d.next = !self.expiry_first.val();
                self.contexts.lookup.valid.next = true;
                self.pf_state.d.next = self.pf_lookup.val();
            }
        } else if self.pf_state.q.val() == self.pf_lookup.val() {
            self.pf_granted.d.next = self.granted.read_data.val();
            self.pf_held.d.next = self.granted.read_data.val().get_bit(0)
                & (self.pf_source.q.val() != self.src_post.val())
                & (self.pf_source.q.val() != self.src_sent.val());
            self.pf_kind.d.next = self.ev_to_error.val();
            if self.pf_source.q.val() == self.src_post.val() {
                self.pf_kind.d.next = self.ev_post.val();
            }
            if self.pf_source.q.val() == self.src_response.val() {
                self.pf_kind.d.next = self.ev_response.val();
            }
            if self.pf_source.q.val() == self.src_timer.val() {
                self.pf_kind.d.next = self.ev_timer.val();
            }
            if self.pf_source.q.val() == self.src_grant.val() {
                self.pf_kind.d.next = self.ev_grant.val();
            }
            if self.pf_source.q.val() == self.src_sent.val() {
                self.pf_kind.d.next = self.ev_sent.val();
            }
            self.pf_state.d.next = self.pf_context.val();
        } else if self.pf_held.q.val() {
            // Its QP is granted: not taken, the next source is tried.
            self.last_source.d.next = self.pf_source.q.val();
            self.pf_state.d.next = self.pf_idle.val();
        } else if self.withdrawn.val() {
            // Withdrawn meanwhile: a grant is on offer, or the response
            // waits behind its predecessor's discard (`requester_path`).
            self.pf_state.d.next = self.pf_idle.val();
        } else if self.may_enter.val() & self.completer.ev_ready.val() {
            self.entering.next = true;
            self.completer.ev_valid.next = true;
            self.last_source.d.next = self.pf_source.q.val();
            self.kind.d.next = self.pf_kind.q.val();
            self.qpn.d.next = self.pf_qpn.q.val();
            self.mtu.d.next = self.entry_fields.fields.val().path_mtu;
            self.granted_after.d.next = self.pf_granted.q.val().get_bit(0)
                & (self.pf_source.q.val() != self.src_sent.val());
            self.state.d.next = self.st_busy.val();
            self.pf_state.d.next = self.pf_idle.val();
            if self.pf_source.q.val() == self.src_post.val() {
                self.post.ready.next = true;
                self.body.d.next.op = self.post.op.val();
                self.body.d.next.remote_va = self.post.remote_va.val();
                self.body.d.next.rkey = self.post.rkey.val();
                self.body.d.next.imm = self.post.imm.val();
                self.body.d.next.compare = self.post.compare.val();
                self.body.d.next.swap_add = self.post.swap_add.val();
                self.body.d.next.solicited = self.post.solicited.val();
            }
            if self.pf_source.q.val() == self.src_response.val() {
                self.rsp_ready.next = true;
            }
            if self.pf_source.q.val() == self.src_timer.val() {
                if self.pf_forced.q.val() {
                    self.timer_force_ready.next = true;
                } else {
                    self.timers.expiry.ready.next = true;
                }
            }
            if self.pf_source.q.val() == self.src_grant.val() {
                self.greq_ready.next = true;
            }
            if self.pf_source.q.val() == self.src_sent.val() {
                self.sent_fifo.read.next = true;
                self.granted.write_enable.next = true;
                self.granted.write_data.next = 0.into();
                self.grants_in_flight.d.next = self.grants_in_flight.q.val() - 1;
                if self.pf_granted.q.val().get_bit(1) {
                    self.long_grants_in_flight.d.next = self.long_grants_in_flight.q.val() - 1;
                }
            }
            if self.pf_source.q.val() == self.src_to_error.val() {
                self.err.ready.next = true;
            }
        } else {
            self.pf_state.d.next = self.pf_wait.val();
        }

        // ---- the completer's done: its effects, and the write-back's
        // lookup of the record as it stands (host changes since included)
        if self.done.val() {
            if !self.entering.val() {
                self.state.d.next = self.st_idle.val();
            }
            self.contexts.lookup.valid.next = true;
            self.contexts.lookup.qpn.next = self.completer.done_qpn.val();
            self.wb_qpn.d.next = self.completer.done_qpn.val();
            self.kept.d.next.kind = self.kind.q.val();
            self.is_granted.d.next = self.granted_after.q.val();
            self.wb_state.d.next = self.completer.wb_state.val();
            self.wb_next_psn.d.next = self.completer.wb_next_psn.val();
            self.wb_send_psn.d.next = self.completer.wb_send_psn.val();
            self.wb_una.d.next = self.completer.wb_una_psn.val();
            self.wb_max_sent.d.next = self.completer.wb_max_sent_psn.val();
            self.wb_ackreq_end.d.next = self.completer.wb_ackreq_end_psn.val();
            self.wb_retry_left.d.next = self.completer.wb_retry_left.val();
            self.wb_rnr_left.d.next = self.completer.wb_rnr_left.val();
            self.kept.d.next.retry_una_valid = self.completer.done_retry_una_valid.val();
            self.kept.d.next.retry_una = self.completer.done_retry_una.val();
            self.kept.d.next.rnr_waiting = self.completer.done_rnr_waiting.val();
            self.kept.d.next.ack_running = self.completer.done_ack_running.val();
            self.kept.d.next.refusal = self.completer.grant_refusal.val();
            self.kept.d.next.skipped = self.completer.grant_skipped.val();

            self.tc_valid.d.next = self.completer.timer_op.val() != self.timer_none.val();
            self.tc_qpn.d.next = self.completer.done_qpn.val();
            self.tc_arm.d.next = self.completer.timer_op.val() == self.timer_arm.val();
            self.tc_kind.d.next = self.completer.timer_kind.val();
            self.tc_code.d.next = self.completer.timer_code.val();
            // The expiry on offer for this QP is older than the
            // command: the command replaced that timer.
            if (self.completer.timer_op.val() != self.timer_none.val())
                & self.timers.expiry.valid.val()
                & (self.timers.expiry.qpn.val() == self.completer.done_qpn.val())
            {
                self.timers.expiry.ready.next = true;
            }

            if self.kind.q.val() == self.ev_post.val() {
                self.pr_valid.d.next = true;
                self.bodies.write_enable.next = self.completer.post_accepted.val();
            }
            self.pr_accepted.d.next = self.completer.post_accepted.val();
            self.pr_slot.d.next = self.completer.post_slot.val();

            if (self.kind.q.val() == self.ev_grant.val()) & self.completer.grant_valid.val() {
                self.granted.write_enable.next = true;
                self.granted.write_address.next = self.completer.done_qpn.val();
                self.granted.write_data.next = 1.into();
                self.grants_in_flight.d.next = self.grants_in_flight.q.val() + 1;
                if self.grant_long.val() {
                    self.granted.write_data.next = 3.into();
                    self.long_grants_in_flight.d.next = self.long_grants_in_flight.q.val() + 1;
                }
                self.bodies.read_qpn.next = self.completer.done_qpn.val();
                self.bodies.read_slot.next = self.completer.grant_slot.val();
                self.g_valid.d.next = true;
                self.g_qpn.d.next = self.completer.done_qpn.val();
                self.g_slot.d.next = self.completer.grant_slot.val();
                self.g_kind.d.next = self.completer.grant_kind.val();
                self.g_opcode.d.next = self.completer.grant_opcode.val();
                self.g_first_psn.d.next = self.completer.grant_first_psn.val();
                self.g_npsn.d.next = self.completer.grant_npsn.val();
                self.g_len.d.next = self.completer.grant_len.val();
                self.g_signaled.d.next = self.completer.grant_signaled.val();
                self.g_lkey.d.next = self.completer.grant_lkey.val();
                self.g_va.d.next = self.completer.grant_va.val();
                self.g_start_psn.d.next = self.completer.grant_resume_psn.val();
                self.g_mtu.d.next = self.mtu.q.val();
                self.g_una.d.next = self.completer.wb_una_psn.val();
            }
        }

        // ---- the write-back: the record merged two cycles after its
        // lookup, written in the update slot one cycle later
        self.behind.next = self.wb_send_psn.q.val() - self.wb_next_psn.q.val();
        self.wb_lookup.d.next = self.done.val();
        self.wb_merge.d.next = self.wb_lookup.q.val();
        self.wb_write.d.next = self.wb_merge.q.val();
        if self.wb_merge.q.val() {
            self.merged.d.next = self.context_fields.fields.val();
            self.merged.d.next.state = self.wb_state.q.val();
            self.merged.d.next.sq_next_psn = self.wb_next_psn.q.val();
            self.merged.d.next.sq_send_psn = self.wb_send_psn.q.val();
            self.merged.d.next.sq_una_psn = self.wb_una.q.val();
            self.merged.d.next.sq_max_sent_psn = self.wb_max_sent.q.val();
            self.merged.d.next.sq_ackreq_end_psn = self.wb_ackreq_end.q.val();
            self.merged.d.next.retry_left = self.wb_retry_left.q.val();
            self.merged.d.next.rnr_left = self.wb_rnr_left.q.val();
            self.out_qpn.d.next = self.wb_qpn.q.val();
            self.out.d.next = self.kept.q.val();
            self.out.d.next.sendable = (self.wb_state.q.val() == self.state_rts.val())
                & !self.kept.q.val().rnr_waiting
                & self.behind.val().get_bit(23)
                & !self.is_granted.q.val()
                & (self.kept.q.val().kind != self.ev_grant.val());
        }

        // ---- decided, done, sendable
        self.decided_valid.next = self.done.val();
        self.decided_kind.next = self.kind.q.val();
        self.done_valid.next = self.wb_write.q.val();
        self.done_qpn.next = self.out_qpn.q.val();
        self.done_kind.next = self.out.q.val().kind;
        self.done_record.next = self.merged.q.val().into();
        self.done_retry_una_valid.next = self.out.q.val().retry_una_valid;
        self.done_retry_una.next = self.out.q.val().retry_una;
        self.done_rnr_waiting.next = self.out.q.val().rnr_waiting;
        self.done_ack_running.next = self.out.q.val().ack_running;
        self.done_grant_refusal.next = self.out.q.val().refusal;
        self.done_grant_skipped.next = self.out.q.val().skipped;
        self.sendable_valid.next = self.wb_write.q.val() & self.out.q.val().sendable;
        self.sendable_qpn.next = self.out_qpn.q.val();

        self.timer_cmd_valid.next = self.tc_valid.q.val();
        self.timer_cmd_qpn.next = self.tc_qpn.q.val();
        self.timer_cmd_arm.next = self.tc_arm.q.val();
        self.timer_cmd_kind.next = self.tc_kind.q.val();
        self.timer_cmd_code.next = self.tc_code.q.val();
        self.post_result.valid.next = self.pr_valid.q.val();
        self.post_result.qpn.next = self.wb_qpn.q.val();
        self.post_result.accepted.next = self.pr_accepted.q.val();
        self.post_result.slot.next = self.pr_slot.q.val();
        // The completer holds its placement request (fields steady) until
        // the answer comes.
        self.place_valid.next = self.completer.place_valid.val();
        self.place_qpn.next = self.qpn.q.val();
        self.place_atomic.next = self.completer.place_atomic.val();
        self.place_slot.next = self.completer.place_slot.val();
        self.place_offset.next = self.completer.place_offset.val();
        self.place_len.next = self.completer.place_len.val();
        self.place_atomic_orig.next = self.completer.place_atomic_orig.val();
        self.place_lkey.next = self.completer.place_lkey.val();
        self.place_va.next = self.completer.place_va.val();
        self.completer.place_result_valid.next = self.place_result_valid.val();
        self.completer.place_result_error.next = self.place_result_error.val();
        self.completer.place_result_status.next = self.place_result_status.val();

        // ---- the grant on offer
        self.grant_valid.next = self.g_valid.q.val();
        self.grant_taken.next = self.g_valid.q.val() & self.grant_ready.val();
        if self.grant_taken.val() {
            self.g_valid.d.next = false;
        }
        self.grant_qpn.next = self.g_qpn.q.val();
        self.grant_slot.next = self.g_slot.q.val();
        self.grant_kind.next = self.g_kind.q.val();
        self.grant_opcode.next = self.g_opcode.q.val();
        self.grant_first_psn.next = self.g_first_psn.q.val();
        self.grant_npsn.next = self.g_npsn.q.val();
        self.grant_len.next = self.g_len.q.val();
        self.grant_signaled.next = self.g_signaled.q.val();
        self.grant_lkey.next = self.g_lkey.q.val();
        self.grant_local_va.next = self.g_va.q.val();
        self.grant_start_psn.next = self.g_start_psn.q.val();
        self.grant_mtu.next = self.g_mtu.q.val();
        self.grant_una.next = self.g_una.q.val();
        self.grant_window.next = self.cfg_window.val();
        self.grant_ack_req_interval.next = self.cfg_ack_req_interval.val();
        self.grant_op.next = self.bodies.read_data.val().op;
        self.grant_remote_va.next = self.bodies.read_data.val().remote_va;
        self.grant_rkey.next = self.bodies.read_data.val().rkey;
        self.grant_imm.next = self.bodies.read_data.val().imm;
        self.grant_compare.next = self.bodies.read_data.val().compare;
        self.grant_swap_add.next = self.bodies.read_data.val().swap_add;
        self.grant_solicited.next = self.bodies.read_data.val().solicited;

        // ---- send CQEs, passed through
        SendCqeStream::<A, SLOT_BITS>::link(&mut self.cqe, &mut self.completer.cqe);

        if self.reset.val() {
            self.state.d.next = self.st_idle.val();
            self.pf_state.d.next = self.pf_idle.val();
            self.wb_lookup.d.next = false;
            self.wb_merge.d.next = false;
            self.wb_write.d.next = false;
            self.g_valid.d.next = false;
            self.grants_in_flight.d.next = 0.into();
            self.long_grants_in_flight.d.next = 0.into();
            self.tc_valid.d.next = false;
            self.pr_valid.d.next = false;
        }
    }
}
