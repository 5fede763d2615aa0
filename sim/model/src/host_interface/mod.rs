//! The host interface of the model NIC: the reference model behind the
//! registers and rings of the host ABI (`rocenic_abi`, `docs/abi.md`), so a
//! driver talks to it exactly as to a board.
//!
//! A [`HostInterface`] owns one [`Nic`] and its host memory. Software
//! reaches it only through MMIO ([`HostInterface::read32`] /
//! [`HostInterface::write32`] on BAR0, the QP doorbell pages of BAR2 and
//! the CQ doorbell pages of BAR4) and through the host memory it shares
//! with the NIC (rings, mailboxes, buffers). The NIC in turn only reads
//! and writes that memory by bus address: it fetches admin commands and
//! WQEs and writes admin completions and CQEs, each CQE after the data it
//! reports and with the owner bit of its pass.
//!
//! - [`admin`]: the admin queue and its commands.
//! - [`work_queues`]: the QP doorbells, WQE fetch and decode, and the CQ
//!   rings the completions are written to.
//! - [`congestion`]: the DCQCN and PFC parameters of BAR0's congestion
//!   block, applied to the NIC as they are written.
//! - [`event_queues`]: EQEs and MSI-X messages: completion events of
//!   armed CQs, QP and CQ errors (on the EQ of the QP's send CQ, or the
//!   CQ's), admin completions (on `admin_eqn`).
//!
//! Inline WQEs are copied out of the ring when fetched; a WQE written
//! into the QP page's inline window replaces the fetch when it is the
//! next in line. FENCE and the SE bit go to the transport model, which
//! honours them. MMIO and DMA take no simulated time here; the RTL
//! backend's PCIe host model is where they do.

pub mod admin;
pub mod congestion;
pub mod event_queues;
pub mod work_queues;

use crate::nic::{Nic, NicConfig};
use crate::Time;
use admin::AdminQueue;
use event_queues::{Event, EventQueues, Vector};
use rocenic_abi::registers::{self as abi, control_bits, Access, RegisterAt};
use std::collections::BTreeMap;
use work_queues::{Queue, WorkQueues};

/// The indexes of a ring the NIC writes and software consumes (a CQ, an
/// EQ): entries written since creation, and the consumer index software
/// last rang (mod 2^24).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ConsumedRing {
    pub produced: u64,
    pub consumer: u32,
}

const INDEX_MASK_24: u64 = (1 << 24) - 1;

impl ConsumedRing {
    /// Entries written and not yet consumed.
    pub fn in_ring(&self) -> u64 {
        (self.produced - u64::from(self.consumer)) & INDEX_MASK_24
    }

    /// A consumer doorbell: refused (false) when it would consume entries
    /// not written yet.
    pub fn consume(&mut self, consumer: u32) -> bool {
        let advance = u64::from(consumer.wrapping_sub(self.consumer)) & INDEX_MASK_24;
        let taken = advance <= self.in_ring();
        if taken {
            self.consumer = consumer;
        }
        taken
    }
}

/// The counters only the host interface sees (the rest come from
/// [`crate::nic::NicCounters`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HostCounters {
    pub doorbell_errors: u64,
    pub wqe_errors: u64,
    pub dma_read_errors: u64,
    pub cq_overflows: u64,
    pub mmio_unmapped: u64,
    pub retry_exceeded: u64,
}

/// The model NIC behind its BARs.
pub struct HostInterface {
    nic: Nic,
    /// Read-write registers by BAR0 offset of their 32-bit half: what
    /// software last wrote there (reset values until then).
    stored: BTreeMap<u32, u32>,
    /// The high half a counter's low-half read latched.
    latched_high: u32,
    admin: AdminQueue,
    queues: WorkQueues,
    events: EventQueues,
    counters: HostCounters,
}

impl HostInterface {
    /// The NIC of `config` with its congestion parameters at the
    /// registers' reset values.
    pub fn new(config: NicConfig) -> HostInterface {
        HostInterface {
            nic: Nic::new(congestion::at_reset(config)),
            stored: BTreeMap::new(),
            latched_high: 0,
            admin: AdminQueue::default(),
            queues: WorkQueues::default(),
            events: EventQueues::default(),
            counters: HostCounters::default(),
        }
    }

    /// The NIC, for what a host sees without MMIO (its memory) and for
    /// checks; setup goes through the registers.
    pub fn nic(&self) -> &Nic {
        &self.nic
    }

    /// The host's memory: where software puts rings and buffers.
    pub fn memory_mut(&mut self) -> &mut crate::memory::HostMemory {
        self.nic.memory_mut()
    }

    pub fn host_counters(&self) -> &HostCounters {
        &self.counters
    }

    fn enabled(&self) -> bool {
        self.control_register("control") & 1 != 0
    }

    /// A register of the control block as software wrote it.
    fn control_register(&self, name: &str) -> u32 {
        let r = abi::CONTROL
            .register(name)
            .unwrap_or_else(|| panic!("the control block has no {name}"));
        self.stored_value(abi::bar0_offset(&abi::CONTROL) + r.offset)
    }

    fn stored_value(&self, offset: u32) -> u32 {
        stored_value(&self.stored, offset)
    }

    /// A 32-bit MMIO read of `bar` at `offset` (4-byte aligned).
    pub fn read32(&mut self, bar: u8, offset: u32) -> u32 {
        if bar != 0 {
            // Doorbell pages are write-only.
            return 0;
        }
        let Some(at) = abi::bar0_register_at(offset) else {
            self.counters.mmio_unmapped += 1;
            return 0;
        };
        let half = at.byte / 4;
        match (at.block.name, at.register.name) {
            ("control", "status") => u32::from(self.enabled()) << control_bits::READY.bit,
            ("admin", "asq_head") => u32::from(self.admin.head()),
            ("msix", "pending") => (self.events.pending() >> (32 * half)) as u32,
            ("counters", name) if at.register.width == 64 => {
                if half == 1 {
                    return self.latched_high;
                }
                let value = self.counter(name);
                self.latched_high = (value >> 32) as u32;
                value as u32
            }
            _ if at.register.access == Access::WriteOnly => 0,
            _ => self.stored_value(offset),
        }
    }

    /// A 32-bit MMIO write of `bar` at `offset` (4-byte aligned).
    pub fn write32(&mut self, bar: u8, offset: u32, value: u32) {
        match bar {
            2 => return self.qp_doorbell(offset, value),
            4 => return self.cq_doorbell(offset, value),
            0 => {}
            _ => {
                self.counters.mmio_unmapped += 1;
                return;
            }
        }
        let Some(at) = abi::bar0_register_at(offset) else {
            self.counters.mmio_unmapped += 1;
            return;
        };
        match (at.block.name, at.register.name) {
            ("control", "control") => {
                if control_bits::SOFT_RESET.get(&value.to_le_bytes()) == Ok(1) {
                    return self.soft_reset();
                }
                self.store(&at, offset, value);
                self.service();
            }
            ("admin", "asq_tail") => {
                self.admin.ring_tail(value as u16);
                self.service();
            }
            ("admin", "acq_head") => {
                self.admin.consumed(value as u16);
                self.service();
            }
            ("event_queues", "eq_doorbell") => {
                use abi::eq_doorbell::{ARM, CONSUMER};
                let word = value.to_le_bytes();
                let consumer = CONSUMER.get(&word).unwrap_or(0) as u32;
                let arm = ARM.get(&word) == Ok(1);
                let table = msix_table(&self.stored);
                let memory = self.nic.memory_mut();
                if !self
                    .events
                    .doorbell(at.instance, consumer, arm, memory, &table)
                {
                    self.counters.doorbell_errors += 1;
                }
            }
            ("congestion", _) if at.register.access == Access::ReadWrite => {
                self.store(&at, offset, value);
                let base = abi::bar0_offset(&abi::CONGESTION);
                let stored = &self.stored;
                let register = |name: &str| {
                    let r = abi::CONGESTION
                        .register(name)
                        .unwrap_or_else(|| panic!("the congestion block has no {name}"));
                    stored_value(stored, base + r.offset)
                };
                congestion::apply(register, self.nic.config_mut());
            }
            ("msix", "vector_control") => {
                self.store(&at, offset, value);
                let table = msix_table(&self.stored);
                let memory = self.nic.memory_mut();
                self.events.unmasked(at.instance as u16, memory, &table);
            }
            _ => match at.register.access {
                Access::ReadWrite => self.store(&at, offset, value),
                Access::WriteOneToClear => {
                    let kept = self.stored_value(offset) & !value;
                    self.stored.insert(offset, kept);
                }
                // Read-only registers ignore writes, and every doorbell
                // is handled above.
                Access::ReadOnly | Access::WriteOnly => {}
            },
        }
    }

    /// MSI-X messages sent on `vector` so far.
    pub fn msix_messages(&self, vector: u16) -> u64 {
        self.events.messages_sent(vector)
    }

    fn post_events(&mut self, events: Vec<Event>) {
        if events.is_empty() {
            return;
        }
        let table = msix_table(&self.stored);
        for event in events {
            self.events.post(event, self.nic.memory_mut(), &table);
        }
    }

    fn store(&mut self, at: &RegisterAt, offset: u32, value: u32) {
        let implemented = (at.register.implemented() >> (8 * (at.byte & !3))) as u32;
        self.stored.insert(offset, value & implemented);
    }

    /// `control.soft_reset`: every object destroyed, counters cleared, the
    /// registers back to their reset values; host memory is the host's
    /// and stays.
    fn soft_reset(&mut self) {
        let config = congestion::at_reset(self.nic.config().clone());
        let memory = std::mem::replace(self.nic.memory_mut(), crate::memory::HostMemory::new(0));
        self.nic = Nic::new(config);
        *self.nic.memory_mut() = memory;
        self.stored.clear();
        self.admin = AdminQueue::default();
        self.queues = WorkQueues::default();
        self.events = EventQueues::default();
        self.counters = HostCounters::default();
    }

    fn qp_doorbell(&mut self, offset: u32, value: u32) {
        if !self.enabled() {
            return;
        }
        let qpn = offset / abi::PAGE_SIZE;
        use abi::qp_doorbell::{INLINE_WINDOW, INLINE_WINDOW_SIZE};
        let window = INLINE_WINDOW..INLINE_WINDOW + INLINE_WINDOW_SIZE;
        let (nic, counters) = (&mut self.nic, &mut self.counters);
        match offset % abi::PAGE_SIZE {
            0x000 => self
                .queues
                .doorbell(nic, counters, qpn, Queue::Send, value as u16),
            0x004 => self
                .queues
                .doorbell(nic, counters, qpn, Queue::Recv, value as u16),
            at if window.contains(&at) => {
                let at = (at - INLINE_WINDOW) as usize;
                self.queues.inline_window(nic, counters, qpn, at, value)
            }
            _ => {
                counters.mmio_unmapped += 1;
                return;
            }
        }
        self.service();
    }

    fn cq_doorbell(&mut self, offset: u32, value: u32) {
        if !self.enabled() {
            return;
        }
        match offset % abi::PAGE_SIZE {
            0x000 => self
                .queues
                .cq_doorbell(&mut self.counters, offset / abi::PAGE_SIZE, value),
            _ => self.counters.mmio_unmapped += 1,
        }
        self.service();
    }

    /// What the NIC does without being asked: admin commands, WQEs that
    /// waited for room in the PSN window, and the CQEs of completed work.
    fn service(&mut self) {
        if !self.enabled() {
            return;
        }
        let rings = admin::AdminRings {
            asq_base: self.register64("asq_base"),
            asq_log_size: self.register64("asq_log_size") as u32,
            acq_base: self.register64("acq_base"),
            acq_log_size: self.register64("acq_log_size") as u32,
        };
        let admin_eqn = self.control_register("admin_eqn");
        let done = self
            .admin
            .run(rings, &mut self.nic, &mut self.queues, &mut self.events);
        let admin_events = done
            .into_iter()
            .filter(|_| admin_eqn != u32::MAX)
            .map(|token| Event {
                eqn: admin_eqn,
                event: "ADMIN_COMPLETION",
                cause: "NONE",
                object: 0,
                detail: token,
            });
        let mut events: Vec<Event> = admin_events.collect();
        self.queues.service(&mut self.nic, &mut self.counters);
        events.extend(self.queues.take_events());
        self.post_events(events);
    }

    /// An admin block register's value as software wrote it.
    fn register64(&self, name: &str) -> u64 {
        let r = abi::ADMIN
            .register(name)
            .unwrap_or_else(|| panic!("the admin block has no {name}"));
        let at = abi::bar0_offset(&abi::ADMIN) + r.offset;
        let low = u64::from(self.stored_value(at));
        if r.width == 64 {
            low | u64::from(self.stored_value(at + 4)) << 32
        } else {
            low
        }
    }

    /// A counter of the counters block by its ABI name.
    pub fn counter(&self, name: &str) -> u64 {
        let c = self.nic.counters();
        let host = &self.counters;
        let drop = |reason: &str| c.rx_dropped.get(reason).copied().unwrap_or(0);
        match name {
            "rx_frames" => c.rx_frames,
            "rx_bytes" => c.rx_bytes,
            "tx_frames" => c.tx_frames,
            "tx_bytes" => c.tx_bytes,
            "rx_duplicate_requests" => c.duplicate_requests,
            "tx_retransmitted_frames" => c.retransmitted_frames,
            "tx_naks_psn_seq_err" => c.naks_sent.psn_sequence,
            "tx_naks_invalid_request" => c.naks_sent.invalid_request,
            "tx_naks_remote_access" => c.naks_sent.remote_access,
            "tx_naks_remote_operational" => c.naks_sent.remote_operational,
            "tx_rnr_naks" => c.naks_sent.rnr,
            "rx_naks_psn_seq_err" => c.naks_received.psn_sequence,
            "rx_naks_invalid_request" => c.naks_received.invalid_request,
            "rx_naks_remote_access" => c.naks_received.remote_access,
            "rx_naks_remote_operational" => c.naks_received.remote_operational,
            "rx_rnr_naks" => c.naks_received.rnr,
            "local_ack_timeouts" => c.timeouts,
            "retry_exceeded" => host.retry_exceeded,
            "tx_cnps" => c.cnps_sent,
            "rx_cnps" => c.cnps_received,
            "rate_cuts" => self.nic.rate_cuts(),
            "rx_pause_frames" => c.rx_pause_frames,
            "pause_watchdog_trips" => c.pause_watchdog_trips,
            "doorbell_errors" => host.doorbell_errors,
            "wqe_errors" => host.wqe_errors,
            "dma_read_errors" => host.dma_read_errors,
            "cq_overflows" => host.cq_overflows + c.cq_overflows,
            "mmio_unmapped" => host.mmio_unmapped,
            _ => name.strip_prefix("rx_drop_").map_or(0, drop),
        }
    }
}

/// A BAR0 word as software last wrote it, or its reset value.
fn stored_value(stored: &BTreeMap<u32, u32>, offset: u32) -> u32 {
    stored
        .get(&offset)
        .copied()
        .unwrap_or_else(|| abi::bar0_reset_read32(offset))
}

/// The MSI-X table as software wrote it, by vector.
fn msix_table(stored: &BTreeMap<u32, u32>) -> impl Fn(u16) -> Vector + '_ {
    let register = |name: &str| {
        abi::MSIX
            .register(name)
            .unwrap_or_else(|| panic!("the MSI-X block has no {name}"))
    };
    let base = abi::bar0_offset(&abi::MSIX);
    let (address, data, control) = (
        register("vector_address"),
        register("vector_data"),
        register("vector_control"),
    );
    move |vector: u16| {
        let at = |r: &abi::Register| base + r.offset_of(u32::from(vector));
        let read = |offset: u32| stored_value(stored, offset);
        Vector {
            address: u64::from(read(at(address))) | u64::from(read(at(address) + 4)) << 32,
            data: read(at(data)),
            masked: read(at(control)) & 1 != 0,
        }
    }
}

impl rocenic_fabric::Endpoint for HostInterface {
    fn mac(&self) -> [u8; 6] {
        self.nic.mac()
    }

    fn receive(&mut self, now: Time, frame: Vec<u8>) {
        if self.enabled() {
            self.nic.receive(now, frame);
            self.service();
        }
    }

    fn transmit(&mut self, now: Time) -> Option<Vec<u8>> {
        if !self.enabled() {
            return None;
        }
        let frame = self.nic.transmit(now);
        self.service();
        frame
    }

    fn next_deadline(&self) -> Option<Time> {
        self.nic.next_deadline()
    }

    fn advance(&mut self, now: Time) {
        self.nic.advance(now);
        self.service();
    }
}
