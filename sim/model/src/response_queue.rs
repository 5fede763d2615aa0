//! The responder's per-QP queue of what it owes the requester (ACK, NAK,
//! atomic ACK, READ response), and the packet descriptors it yields at
//! transmit time: the contract of the RTL `response_queue` block, which
//! the model's responder uses as its own queue.
//!
//! - An ACK merges into a queued ACK at the tail (ACKs are cumulative).
//! - A READ is split by the path MTU at transmit time; AETH on ONLY, FIRST
//!   and LAST. Its data is not part of the contract (`D`: the model keeps
//!   the bytes read at execution, the RTL re-reads them by DMA from the
//!   descriptor's VA and length).
//! - Out of RTR/RTS (`live` false) only NAKs leave; the rest is dropped as
//!   it reaches the head.
//! - [`ResponseQueue::drop_reads`] (a duplicate READ restarting an earlier
//!   one) voids the queued READs of a PSN range in place: a voided READ
//!   keeps its slot until it reaches the head and is dropped there, as in
//!   the RTL. The responder always queues the restarted READ (or a NAK)
//!   right after, so no ACK can merge across a void.

use crate::trace::{self, Trace};
use rocenic_wire::{op, psn, syndrome, MASK24};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};

/// One queued response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum QueueItem<D> {
    /// ACK, RNR NAK or NAK (by syndrome).
    Ack {
        syndrome: u8,
        psn: u32,
        msn: u32,
    },
    AtomicAck {
        psn: u32,
        orig: u64,
        msn: u32,
    },
    /// READ response packets from `psn` on, `sent` of them already gone.
    Read {
        psn: u32,
        va: u64,
        rkey: u32,
        len: u32,
        msn: u32,
        sent: u32,
        void: bool,
        data: D,
    },
}

impl<D> QueueItem<D> {
    /// The item may still be sent (`live`: QP in RTR or RTS): a voided
    /// READ never, and once the QP left RTR/RTS only NAKs. The queue drops
    /// the others when they reach the head.
    pub fn may_leave(&self, live: bool) -> bool {
        match self {
            QueueItem::Ack { syndrome: s, .. } => live || s & syndrome::TYPE_MASK != 0,
            QueueItem::AtomicAck { .. } => live,
            QueueItem::Read { void, .. } => live && !void,
        }
    }
}

/// The READ part of a response packet descriptor: the bytes to send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadSlice {
    /// Remote VA of this packet's first byte (READ VA + offset).
    pub va: u64,
    pub rkey: u32,
    /// Offset of this packet's payload in the READ.
    pub offset: u32,
    /// Payload bytes of this packet (0 for a zero-length READ).
    pub len: u32,
}

/// One response packet, as the transmit side builds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RespPacket {
    pub opcode: u8,
    pub psn: u32,
    /// AETH (syndrome, MSN mod 2^24), when the opcode carries one.
    pub aeth: Option<(u8, u32)>,
    /// AtomicAckETH original value.
    pub atomic_orig: Option<u64>,
    pub read: Option<ReadSlice>,
}

/// Response packets of a READ of `len` bytes: one at least.
pub fn read_packets(len: u32, mtu: u32) -> u32 {
    len.div_ceil(mtu).max(1)
}

/// An operation on a queue, as recorded by [`record_queue_ops`]: the
/// queue's serial number (a fresh queue = a QP (re)entering RTR) and what
/// was done to it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum QueueOp {
    PushAck {
        psn: u32,
        msn: u32,
    },
    PushNak {
        syndrome: u8,
        psn: u32,
        msn: u32,
    },
    PushAtomicAck {
        psn: u32,
        orig: u64,
        msn: u32,
    },
    PushRead {
        psn: u32,
        va: u64,
        rkey: u32,
        len: u32,
        msn: u32,
    },
    DropReads {
        first_psn: u32,
        npsn: u32,
    },
    FlushToError,
    /// A transmit opportunity and what it yielded.
    Pop {
        live: bool,
        mtu: u32,
        packet: Option<RespPacket>,
    },
}

thread_local! {
    static OP_TRACE: Trace<(u64, QueueOp)> = const { Trace::new(None) };
}

thread_local! {
    static CAPTURE: Trace<QueueOp> = const { Trace::new(None) };
}

/// Runs `f` collecting the operations it applies to response queues of
/// this thread, in order (what one request did to its QP's queue; see
/// `responder::record_requests`). Nests: an outer capture sees none of
/// the inner one's operations.
pub fn capture_ops<R>(f: impl FnOnce() -> R) -> (R, Vec<QueueOp>) {
    trace::record(&CAPTURE, f)
}

static NEXT_SERIAL: AtomicU64 = AtomicU64::new(0);

/// Runs `f` recording every operation on the response queues of this
/// thread, in order, tagged with the queue's serial number.
pub fn record_queue_ops<R>(f: impl FnOnce() -> R) -> (R, Vec<(u64, QueueOp)>) {
    trace::record(&OP_TRACE, f)
}

/// A per-QP response queue (unbounded; the RTL's holds `2^D` items).
#[derive(Clone, Debug)]
pub struct ResponseQueue<D> {
    serial: u64,
    items: VecDeque<QueueItem<D>>,
}

impl<D> Default for ResponseQueue<D> {
    fn default() -> Self {
        ResponseQueue {
            serial: NEXT_SERIAL.fetch_add(1, Ordering::Relaxed),
            items: VecDeque::new(),
        }
    }
}

impl<D> ResponseQueue<D> {
    fn record(&self, op: QueueOp) {
        trace::push(&CAPTURE, || op.clone());
        trace::push(&OP_TRACE, || (self.serial, op));
    }

    /// Items queued, voided READs included (the RTL's occupancy, as long
    /// as nothing was flushed: it drops flushed items at the head).
    pub fn slots(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn items(&self) -> impl Iterator<Item = &QueueItem<D>> {
        self.items.iter()
    }

    /// A `push_ack` now would merge into the tail instead of taking a slot.
    pub fn ack_merges(&self) -> bool {
        matches!(self.items.back(), Some(QueueItem::Ack { syndrome: s, .. })
            if *s == syndrome::ACK_UNLIMITED_CREDITS)
    }

    /// Queues an ACK, merging it into a queued ACK just before it: ACKs
    /// are cumulative, so the later one says everything the earlier did.
    pub fn push_ack(&mut self, psn: u32, msn: u32) {
        self.record(QueueOp::PushAck { psn, msn });
        if self.ack_merges() {
            if let Some(QueueItem::Ack { psn: p, msn: m, .. }) = self.items.back_mut() {
                *p = psn;
                *m = msn;
                return;
            }
        }
        self.items.push_back(QueueItem::Ack {
            syndrome: syndrome::ACK_UNLIMITED_CREDITS,
            psn,
            msn,
        });
    }

    /// Queues a NAK or RNR NAK (never merged).
    pub fn push_nak(&mut self, syndrome: u8, psn: u32, msn: u32) {
        self.record(QueueOp::PushNak { syndrome, psn, msn });
        self.items.push_back(QueueItem::Ack { syndrome, psn, msn });
    }

    pub fn push_atomic_ack(&mut self, psn: u32, orig: u64, msn: u32) {
        self.record(QueueOp::PushAtomicAck { psn, orig, msn });
        self.items
            .push_back(QueueItem::AtomicAck { psn, orig, msn });
    }

    /// Queues the responses of a READ of `len` bytes at `va` from `psn`.
    pub fn push_read(&mut self, psn: u32, va: u64, rkey: u32, len: u32, msn: u32, data: D) {
        self.record(QueueOp::PushRead {
            psn,
            va,
            rkey,
            len,
            msn,
        });
        self.items.push_back(QueueItem::Read {
            psn,
            va,
            rkey,
            len,
            msn,
            sent: 0,
            void: false,
            data,
        });
    }

    /// Voids the queued READs starting in `[first_psn, first_psn + npsn)`.
    pub fn drop_reads(&mut self, first_psn: u32, npsn: u32) {
        self.record(QueueOp::DropReads { first_psn, npsn });
        for item in &mut self.items {
            if let QueueItem::Read { psn: q, void, .. } = item {
                let d = psn::diff(*q, first_psn);
                if d >= 0 && (d as u32) < npsn {
                    *void = true;
                }
            }
        }
    }

    /// The QP moved to ERR: only queued NAKs may still leave.
    pub fn flush_to_error(&mut self) {
        self.record(QueueOp::FlushToError);
        self.items.retain(
            |i| matches!(i, QueueItem::Ack { syndrome: s, .. } if s & syndrome::TYPE_MASK != 0),
        );
    }

    /// The next response packet (`live`: QP in RTR or RTS), passing it and
    /// the READ's data to `f`; the item is popped when its last packet
    /// went. Items that may not leave are dropped on the way.
    pub fn next_packet_with<R>(
        &mut self,
        live: bool,
        mtu: u32,
        f: impl FnOnce(&RespPacket, Option<&D>) -> R,
    ) -> Option<R> {
        let packet = loop {
            let item = self.items.front_mut()?;
            if !item.may_leave(live) {
                self.items.pop_front();
                continue;
            }
            let (packet, done) = match item {
                QueueItem::Ack {
                    syndrome: s,
                    psn,
                    msn,
                } => {
                    let p = RespPacket {
                        opcode: op::ACKNOWLEDGE,
                        psn: *psn,
                        aeth: Some((*s, *msn & MASK24)),
                        atomic_orig: None,
                        read: None,
                    };
                    (p, true)
                }
                QueueItem::AtomicAck { psn, orig, msn } => {
                    let p = RespPacket {
                        opcode: op::ATOMIC_ACKNOWLEDGE,
                        psn: *psn,
                        aeth: Some((syndrome::ACK_UNLIMITED_CREDITS, *msn & MASK24)),
                        atomic_orig: Some(*orig),
                        read: None,
                    };
                    (p, true)
                }
                QueueItem::Read {
                    psn: first,
                    va,
                    rkey,
                    len,
                    msn,
                    sent,
                    ..
                } => {
                    let n = read_packets(*len, mtu);
                    let i = *sent;
                    let offset = (u64::from(i) * u64::from(mtu)).min(u64::from(*len)) as u32;
                    let opcode = match (i == 0, i + 1 == n) {
                        (true, true) => op::READ_RESPONSE_ONLY,
                        (true, false) => op::READ_RESPONSE_FIRST,
                        (false, true) => op::READ_RESPONSE_LAST,
                        (false, false) => op::READ_RESPONSE_MIDDLE,
                    };
                    let p = RespPacket {
                        opcode,
                        psn: psn::add(*first, i),
                        aeth: (opcode != op::READ_RESPONSE_MIDDLE)
                            .then_some((syndrome::ACK_UNLIMITED_CREDITS, *msn & MASK24)),
                        atomic_orig: None,
                        read: Some(ReadSlice {
                            va: va.wrapping_add(u64::from(offset)),
                            rkey: *rkey,
                            offset,
                            len: (*len - offset).min(mtu),
                        }),
                    };
                    *sent += 1;
                    (p, *sent >= n)
                }
            };
            if !done {
                break packet;
            }
            let item = self.items.pop_front().expect("the front item");
            let data = match &item {
                QueueItem::Read { data, .. } => Some(data),
                _ => None,
            };
            self.record(QueueOp::Pop {
                live,
                mtu,
                packet: Some(packet),
            });
            return Some(f(&packet, data));
        };
        self.record(QueueOp::Pop {
            live,
            mtu,
            packet: Some(packet),
        });
        let data = match self.items.front() {
            Some(QueueItem::Read { data, .. }) => Some(data),
            _ => None,
        };
        Some(f(&packet, data))
    }

    /// [`Self::next_packet_with`] without the data.
    pub fn next_packet(&mut self, live: bool, mtu: u32) -> Option<RespPacket> {
        self.next_packet_with(live, mtu, |p, _| *p)
    }
}

/// A command to the RTL block's queues, for [`ResponseQueueModel`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    Configure {
        qpn: u32,
        mtu: u32,
    },
    PushAck {
        qpn: u32,
        psn: u32,
        msn: u32,
    },
    PushNak {
        qpn: u32,
        syndrome: u8,
        psn: u32,
        msn: u32,
    },
    PushAtomicAck {
        qpn: u32,
        psn: u32,
        orig: u64,
        msn: u32,
    },
    PushRead {
        qpn: u32,
        psn: u32,
        va: u64,
        rkey: u32,
        len: u32,
        msn: u32,
    },
    DropReads {
        qpn: u32,
        first_psn: u32,
        npsn: u32,
    },
    Flush {
        qpn: u32,
    },
}

impl Command {
    pub fn qpn(&self) -> u32 {
        match *self {
            Command::Configure { qpn, .. }
            | Command::PushAck { qpn, .. }
            | Command::PushNak { qpn, .. }
            | Command::PushAtomicAck { qpn, .. }
            | Command::PushRead { qpn, .. }
            | Command::DropReads { qpn, .. }
            | Command::Flush { qpn } => qpn,
        }
    }
}

/// The `packet` port values, decoded: the QP and its packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Descriptor {
    pub qpn: u32,
    pub packet: RespPacket,
}

/// The block's contract: one model queue
/// (`rocenic_model::response_queue::ResponseQueue`) per QP with the QP's
/// live bit and MTU, and a capacity of `2^D` items. A push that needs a
/// slot while its QP's queue is full is not taken (back-pressure: it waits
/// until the head item has left); the block drops items that may not
/// leave (voided READs) lazily at the head, so its occupancy lies between
/// [`Self::min_slots`] and the model's [`ResponseQueue::slots`].
/// Descriptors are checked per QP, in whatever order the QPs take turns.
pub struct ResponseQueueModel {
    queues: Vec<ResponseQueue<()>>,
    live: Vec<bool>,
    mtu: Vec<u32>,
    capacity: usize,
    pub packets: u64,
}

impl ResponseQueueModel {
    pub fn new(qpn_bits: usize, depth_bits: usize) -> Self {
        let n = 1 << qpn_bits;
        ResponseQueueModel {
            queues: (0..n).map(|_| ResponseQueue::default()).collect(),
            live: vec![false; n],
            mtu: vec![256; n],
            capacity: 1 << depth_bits,
            packets: 0,
        }
    }

    pub fn queue(&self, qpn: u32) -> &ResponseQueue<()> {
        &self.queues[qpn as usize]
    }

    /// `command` is a push that takes a slot (not an ACK merging into a
    /// tail ACK).
    pub fn needs_slot(&self, command: &Command) -> bool {
        let q = &self.queues[command.qpn() as usize];
        match command {
            Command::PushAck { .. } => !q.ack_merges(),
            Command::PushNak { .. } | Command::PushAtomicAck { .. } | Command::PushRead { .. } => {
                true
            }
            _ => false,
        }
    }

    /// The least occupancy the block can have for `qpn`: the model's items
    /// less those at the head the block may already have dropped without
    /// a packet (voided READs; any but NAKs once the QP is not live).
    pub fn min_slots(&self, qpn: u32) -> usize {
        let live = self.live[qpn as usize];
        let q = &self.queues[qpn as usize];
        let dropped = q.items().take_while(|i| !i.may_leave(live)).count();
        q.slots() - dropped
    }

    /// A push to `qpn` now may have to wait (its QP's queue may be full).
    pub fn may_wait(&self, command: &Command) -> bool {
        self.needs_slot(command) && self.queue(command.qpn()).slots() >= self.capacity
    }

    /// A push to `qpn` now must wait (its QP's queue is full whatever the
    /// block dropped at the head).
    pub fn must_wait(&self, command: &Command) -> bool {
        self.needs_slot(command) && self.min_slots(command.qpn()) >= self.capacity
    }

    /// The block took `command`: it must have fitted; applies it.
    pub fn take(&mut self, command: &Command) -> Result<(), String> {
        if self.must_wait(command) {
            return Err(format!(
                "QP {}: {command:x?} taken while its queue was full",
                command.qpn()
            ));
        }
        self.apply(command);
        Ok(())
    }

    /// Applies `command` (the model's queues are unbounded).
    pub fn apply(&mut self, command: &Command) {
        let i = command.qpn() as usize;
        let q = &mut self.queues[i];
        match *command {
            Command::Configure { mtu, .. } => {
                *q = ResponseQueue::default();
                self.live[i] = true;
                self.mtu[i] = mtu;
            }
            Command::PushAck { psn, msn, .. } => q.push_ack(psn, msn),
            Command::PushNak {
                syndrome, psn, msn, ..
            } => q.push_nak(syndrome, psn, msn),
            Command::PushAtomicAck { psn, orig, msn, .. } => q.push_atomic_ack(psn, orig, msn),
            Command::PushRead {
                psn,
                va,
                rkey,
                len,
                msn,
                ..
            } => q.push_read(psn, va, rkey, len, msn, ()),
            Command::DropReads {
                first_psn, npsn, ..
            } => q.drop_reads(first_psn, npsn),
            Command::Flush { .. } => {
                q.flush_to_error();
                self.live[i] = false;
            }
        }
    }

    /// Checks a descriptor the block presented and that was accepted: it
    /// must be the next packet of its QP.
    pub fn accept(&mut self, d: &Descriptor) -> Result<(), String> {
        let i = d.qpn as usize;
        let want = self.queues[i].next_packet(self.live[i], self.mtu[i]);
        self.packets += 1;
        if want != Some(d.packet) {
            return Err(format!(
                "QP {}: block sent {:x?}, model {:x?}",
                d.qpn, d.packet, want
            ));
        }
        Ok(())
    }

    /// After the block went idle: no QP may have a packet left; what
    /// remains (items that may not leave) is dropped, as the block did.
    pub fn settle_drained(&mut self) -> Result<(), String> {
        for (i, q) in self.queues.iter_mut().enumerate() {
            if let Some(p) = q.next_packet(self.live[i], self.mtu[i]) {
                return Err(format!("QP {i}: {p:x?} never sent"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(q: &mut ResponseQueue<()>, live: bool, mtu: u32) -> Vec<RespPacket> {
        std::iter::from_fn(|| q.next_packet(live, mtu)).collect()
    }

    #[test]
    fn acks_merge_only_into_a_tail_ack() {
        let mut q = ResponseQueue::default();
        q.push_ack(1, 10);
        q.push_ack(2, 11);
        q.push_nak(syndrome::NAK_PSN_SEQUENCE_ERROR, 3, 11);
        q.push_ack(4, 12);
        assert_eq!(q.slots(), 3);
        let p = drain(&mut q, true, 256);
        assert_eq!(
            p.iter().map(|p| (p.psn, p.aeth)).collect::<Vec<_>>(),
            [
                (2, Some((0x1F, 11))),
                (3, Some((syndrome::NAK_PSN_SEQUENCE_ERROR, 11))),
                (4, Some((0x1F, 12)))
            ]
        );
    }

    #[test]
    fn reads_split_by_mtu_with_aeth_on_first_and_last() {
        let mut q = ResponseQueue::default();
        q.push_read(0xFF_FFFE, 0x1000, 5, 600, 7, ());
        q.push_read(9, 0x2000, 5, 0, 8, ());
        let p = drain(&mut q, true, 256);
        let ops: Vec<_> = p.iter().map(|p| p.opcode).collect();
        assert_eq!(
            ops,
            [
                op::READ_RESPONSE_FIRST,
                op::READ_RESPONSE_MIDDLE,
                op::READ_RESPONSE_LAST,
                op::READ_RESPONSE_ONLY
            ]
        );
        assert_eq!(
            p.iter().map(|p| p.psn).collect::<Vec<_>>(),
            [0xFF_FFFE, 0xFF_FFFF, 0, 9]
        );
        assert!(p[1].aeth.is_none() && p[2].aeth == Some((0x1F, 7)));
        let r = p[2].read.unwrap();
        assert_eq!((r.va, r.offset, r.len), (0x1200, 512, 88));
        assert_eq!(p[3].read.unwrap().len, 0);
    }

    #[test]
    fn voided_reads_and_flush_leave_nothing_but_naks() {
        let mut q = ResponseQueue::default();
        q.push_read(100, 0, 1, 1000, 1, ());
        q.push_atomic_ack(104, 42, 2);
        q.push_read(105, 0, 1, 10, 3, ());
        q.drop_reads(100, 4);
        assert_eq!(q.slots(), 3);
        let p = drain(&mut q, true, 256);
        assert_eq!(p.iter().map(|p| p.psn).collect::<Vec<_>>(), [104, 105]);
        q.push_ack(1, 1);
        q.push_nak(syndrome::NAK_REMOTE_ACCESS_ERROR, 2, 1);
        q.push_atomic_ack(3, 0, 1);
        q.flush_to_error();
        let p = drain(&mut q, false, 256);
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].aeth, Some((syndrome::NAK_REMOTE_ACCESS_ERROR, 1)));
    }
}
