//! The event queues and their MSI-X messages (`rocenic_abi::eqe`).
//!
//! Each event is one 16-byte EQE written into its EQ's ring with the
//! owner bit of its pass. An EQ that is armed then sends its MSI-X vector
//! (the vector's data written at its address) and disarms; a masked
//! vector holds the message as pending until it is unmasked. A full EQ
//! is never overwritten: it is overrun, and, as mlx5 treats an overrun,
//! drops that event and every later one until it is destroyed.

use super::ConsumedRing;
use crate::memory::HostMemory;
use rocenic_abi::eqe;
use rocenic_abi::registers::limits;
use std::collections::BTreeMap;

/// An event for an EQ, its fields by their ABI names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event {
    pub eqn: u32,
    /// An `event_type` name.
    pub event: &'static str,
    /// A `qp_error_cause` name.
    pub cause: &'static str,
    pub object: u32,
    pub detail: u32,
}

/// An MSI-X vector as the table holds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Vector {
    pub address: u64,
    pub data: u32,
    pub masked: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct EqRing {
    base: u64,
    log_size: u32,
    vector: u16,
    indexes: ConsumedRing,
    armed: bool,
    overrun: bool,
}

/// The EQs and the vectors' pending bits.
#[derive(Clone, Debug, Default)]
pub struct EventQueues {
    eqs: BTreeMap<u32, EqRing>,
    pending: u64,
    /// MSI-X messages sent, per vector.
    sent: BTreeMap<u16, u64>,
    /// Events dropped by overrun EQs.
    pub dropped: u64,
}

impl EventQueues {
    /// CREATE_EQ: the lowest free EQ number, or `None` when all are used.
    pub fn create(&mut self, base: u64, log_size: u32, vector: u16) -> Option<u32> {
        let eqn = (0..limits::EQS).find(|n| !self.eqs.contains_key(n))?;
        self.eqs.insert(
            eqn,
            EqRing {
                base,
                log_size,
                vector,
                indexes: ConsumedRing::default(),
                armed: false,
                overrun: false,
            },
        );
        Some(eqn)
    }

    pub fn exists(&self, eqn: u32) -> bool {
        self.eqs.contains_key(&eqn)
    }

    pub fn destroy(&mut self, eqn: u32) -> bool {
        self.eqs.remove(&eqn).is_some()
    }

    /// MSI-X messages sent on `vector` so far.
    pub fn messages_sent(&self, vector: u16) -> u64 {
        self.sent.get(&vector).copied().unwrap_or(0)
    }

    /// The pending bit array.
    pub fn pending(&self) -> u64 {
        self.pending
    }

    fn signal(&mut self, vector: u16, memory: &mut HostMemory, table: &dyn Fn(u16) -> Vector) {
        let v = table(vector);
        if v.masked {
            self.pending |= 1 << vector;
            return;
        }
        self.pending &= !(1 << vector);
        memory.write_phys(v.address, &v.data.to_le_bytes());
        *self.sent.entry(vector).or_default() += 1;
    }

    /// A vector was unmasked: its pending message goes now.
    pub fn unmasked(
        &mut self,
        vector: u16,
        memory: &mut HostMemory,
        table: &dyn Fn(u16) -> Vector,
    ) {
        if self.pending & (1 << vector) != 0 {
            self.signal(vector, memory, table);
        }
    }

    /// An EQ doorbell: the consumer index and arming. Returns false when
    /// refused (no such EQ, or a consumer beyond the producer).
    pub fn doorbell(
        &mut self,
        eqn: u32,
        consumer: u32,
        arm: bool,
        memory: &mut HostMemory,
        table: &dyn Fn(u16) -> Vector,
    ) -> bool {
        let Some(eq) = self.eqs.get_mut(&eqn) else {
            return false;
        };
        if !eq.indexes.consume(consumer) {
            return false;
        }
        if arm {
            eq.armed = true;
            if eq.indexes.in_ring() > 0 {
                eq.armed = false;
                let vector = eq.vector;
                self.signal(vector, memory, table);
            }
        }
        true
    }

    /// Writes `event`'s EQE, then the EQ's message if it is armed.
    pub fn post(&mut self, event: Event, memory: &mut HostMemory, table: &dyn Fn(u16) -> Vector) {
        let Some(eq) = self.eqs.get_mut(&event.eqn) else {
            self.dropped += 1;
            return;
        };
        if eq.overrun || eq.indexes.in_ring() >= 1 << eq.log_size {
            eq.overrun = true;
            self.dropped += 1;
            return;
        }
        let mut entry = [0u8; eqe::LAYOUT.size];
        eqe::EVENT.put(&mut entry, eqe::EVENT_TYPE.value_of(event.event));
        eqe::CAUSE.put(&mut entry, eqe::QP_ERROR_CAUSE.value_of(event.cause));
        eqe::OBJECT.put(&mut entry, u64::from(event.object));
        eqe::DETAIL.put(&mut entry, u64::from(event.detail));
        eqe::OWNER.put(
            &mut entry,
            rocenic_abi::cqe::owner_for(eq.indexes.produced, eq.log_size),
        );
        let at = eq.base + (eq.indexes.produced % (1 << eq.log_size)) * entry.len() as u64;
        memory.write_phys(at, &entry);
        eq.indexes.produced += 1;
        if eq.armed {
            eq.armed = false;
            let vector = eq.vector;
            self.signal(vector, memory, table);
        }
    }
}
