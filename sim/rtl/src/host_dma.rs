//! Host memory behind the core's DMA ports, cycle by cycle: what a vendor
//! PCIe DMA engine and the host's memory look like from the transport core
//! (`docs/transport-core.md`, "Host-side ports (streams)").
//!
//! - **Reads**: a request carries a tag, a host physical address and a
//!   length. After [`HostDmaConfig::read_latency`] cycles its data returns
//!   as 64-byte beats ([`ReadBeat`]) with the tag, byte 0 of the request in
//!   lane 0 of its first beat, `last` on the final beat. Beats of one tag
//!   come in order; with [`HostDmaConfig::reorder`] different tags
//!   interleave at completion boundaries ([`HostDmaConfig::completion_bytes`],
//!   like PCIe read completions split at the read completion boundary) and
//!   finish out of order.
//! - **Writes** are posted: each beat the core transfers lands in memory at
//!   once and is logged ([`DmaWrite`]) for the scoreboard, which compares
//!   the log with the reference model's predicted DMA writes.
//! - **Bandwidth**: each direction moves at most its bytes-per-cycle budget
//!   (a token bucket one beat deep), so the link, not the harness, limits
//!   throughput; a read beat and a write beat may move in the same cycle.
//!
//! The harness drives the core from [`HostDma::offered`] (the read beat
//! presented this cycle, valid never waiting for ready) and reports the
//! clock edge with [`HostDma::clock`], saying whether the core took it.
//! Everything is seeded: the same requests and seed give the same cycles.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rocenic_model::memory::HostMemory;
use std::collections::VecDeque;
use std::fmt;

/// Bytes in one data beat of the 512-bit DMA stream.
pub const BEAT_BYTES: usize = 64;

/// The host side's speed and ordering.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostDmaConfig {
    /// Cycles from the cycle a read request is accepted to the first cycle
    /// its first beat can be offered (the PCIe round trip plus the memory).
    pub read_latency: u64,
    /// Read data bytes the link delivers per cycle (at most one beat).
    pub read_bytes_per_cycle: u32,
    /// Write data bytes the link accepts per cycle (at most one beat).
    pub write_bytes_per_cycle: u32,
    /// Reads are answered in completions of at most this many bytes
    /// (a multiple of [`BEAT_BYTES`]); tags interleave only between them.
    pub completion_bytes: u32,
    /// Read requests in flight at once (the DMA engine's tag space).
    pub max_outstanding_reads: usize,
    /// Let completions of different tags overtake each other.
    pub reorder: bool,
    /// Seed of the reordering choices.
    pub seed: u64,
}

impl Default for HostDmaConfig {
    /// A PCIe Gen4 x16 host at a 250 MHz core clock: about 26 GB/s of data
    /// each way after protocol overhead (104 B/cycle, so one 64-byte beat
    /// every cycle), an 800 ns read round trip, 256-byte completions, 64
    /// tags, in order.
    fn default() -> Self {
        HostDmaConfig {
            read_latency: 200,
            read_bytes_per_cycle: 104,
            write_bytes_per_cycle: 104,
            completion_bytes: 256,
            max_outstanding_reads: 64,
            reorder: false,
            seed: 0,
        }
    }
}

/// One beat of read data on its way to the core.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadBeat {
    pub tag: u16,
    /// Bytes in lanes `0..len` are data; the rest are zero.
    pub data: [u8; BEAT_BYTES],
    /// Valid bytes, 1..=64.
    pub len: u8,
    /// The request's final beat.
    pub last: bool,
}

/// A DMA write as it landed in host memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DmaWrite {
    /// Cycle of the clock edge that transferred it.
    pub cycle: u64,
    /// Host physical address of `data[0]`.
    pub addr: u64,
    pub data: Vec<u8>,
}

/// A request the host cannot take; each is a bug in the core driving it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DmaError {
    /// The tag of a read still in flight was used again.
    TagInUse(u16),
    /// Zero bytes asked for: DMA engines reject zero-length reads.
    ZeroLength,
    /// More reads than [`HostDmaConfig::max_outstanding_reads`].
    TooManyReads,
    /// A write beat of 0 or more than 64 bytes.
    BadWriteBeat(usize),
    /// A write beat in a cycle without write bandwidth
    /// ([`HostDma::write_ready`] was low).
    WriteNotReady,
}

impl fmt::Display for DmaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DmaError::TagInUse(t) => write!(f, "DMA read tag {t} is still in flight"),
            DmaError::ZeroLength => write!(f, "zero-length DMA read"),
            DmaError::TooManyReads => write!(f, "more DMA reads in flight than tags"),
            DmaError::BadWriteBeat(n) => write!(f, "DMA write beat of {n} bytes"),
            DmaError::WriteNotReady => write!(f, "DMA write beat while the link was busy"),
        }
    }
}

impl std::error::Error for DmaError {}

#[derive(Clone, Debug)]
struct PendingRead {
    tag: u16,
    addr: u64,
    len: u64,
    /// Bytes already delivered.
    sent: u64,
    /// First cycle its data may be offered.
    ready_at: u64,
}

/// Host memory with its DMA read and write ports (see the module doc).
pub struct HostDma {
    config: HostDmaConfig,
    memory: HostMemory,
    rng: ChaCha8Rng,
    cycle: u64,
    reads: Vec<PendingRead>,
    /// Index into `reads` of the completion being delivered, if one is
    /// part-way through (completions are never interleaved inside).
    current: Option<usize>,
    offered: Option<ReadBeat>,
    read_credit: u64,
    write_credit: u64,
    writes: Vec<DmaWrite>,
    order: VecDeque<u16>,
}

impl HostDma {
    /// # Panics
    /// On a configuration no link has: zero bandwidth, zero tags, or a
    /// completion size that is not a non-zero multiple of 64.
    pub fn new(config: HostDmaConfig, memory: HostMemory) -> HostDma {
        assert!(config.read_bytes_per_cycle > 0 && config.write_bytes_per_cycle > 0);
        assert!(config.max_outstanding_reads > 0);
        assert!(
            config.completion_bytes > 0
                && (config.completion_bytes as usize).is_multiple_of(BEAT_BYTES),
            "completion size must be a multiple of {BEAT_BYTES} bytes"
        );
        let mut dma = HostDma {
            rng: ChaCha8Rng::seed_from_u64(config.seed),
            config,
            memory,
            cycle: 0,
            reads: Vec::new(),
            current: None,
            offered: None,
            read_credit: 0,
            write_credit: 0,
            writes: Vec::new(),
            order: VecDeque::new(),
        };
        dma.refill();
        dma
    }

    pub fn config(&self) -> &HostDmaConfig {
        &self.config
    }

    pub fn memory(&self) -> &HostMemory {
        &self.memory
    }

    pub fn memory_mut(&mut self) -> &mut HostMemory {
        &mut self.memory
    }

    /// The current cycle: the edge closing it is the next [`clock`](Self::clock).
    pub fn cycle(&self) -> u64 {
        self.cycle
    }

    /// Every write that landed, in order.
    pub fn writes(&self) -> &[DmaWrite] {
        &self.writes
    }

    /// Read requests accepted and not yet fully delivered.
    pub fn reads_in_flight(&self) -> usize {
        self.reads.len()
    }

    /// Tags of finished reads, in the order their last beats were taken.
    pub fn completion_order(&self) -> impl Iterator<Item = u16> + '_ {
        self.order.iter().copied()
    }

    /// Whether a read request presented this cycle would be accepted.
    pub fn read_request_ready(&self) -> bool {
        self.reads.len() < self.config.max_outstanding_reads
    }

    /// Accepts a read request in the current cycle.
    pub fn read_request(&mut self, tag: u16, addr: u64, len: u64) -> Result<(), DmaError> {
        if len == 0 {
            return Err(DmaError::ZeroLength);
        }
        if self.reads.iter().any(|r| r.tag == tag) {
            return Err(DmaError::TagInUse(tag));
        }
        if !self.read_request_ready() {
            return Err(DmaError::TooManyReads);
        }
        self.reads.push(PendingRead {
            tag,
            addr,
            len,
            sent: 0,
            ready_at: self.cycle + self.config.read_latency,
        });
        Ok(())
    }

    /// The read beat offered to the core in the current cycle.
    pub fn offered(&self) -> Option<&ReadBeat> {
        self.offered.as_ref()
    }

    /// Whether a write beat may be transferred in the current cycle.
    pub fn write_ready(&self) -> bool {
        self.write_credit >= BEAT_BYTES as u64
    }

    /// A write beat the core transfers in the current cycle (posted: it
    /// lands now). Only while [`write_ready`](Self::write_ready).
    pub fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), DmaError> {
        if data.is_empty() || data.len() > BEAT_BYTES {
            return Err(DmaError::BadWriteBeat(data.len()));
        }
        if !self.write_ready() {
            return Err(DmaError::WriteNotReady);
        }
        // A partial beat still occupies the link for a beat slot.
        self.write_credit -= BEAT_BYTES as u64;
        self.memory.write_phys(addr, data);
        self.writes.push(DmaWrite {
            cycle: self.cycle,
            addr,
            data: data.to_vec(),
        });
        Ok(())
    }

    /// The clock edge closing the current cycle; `taken` says whether the
    /// core's ready was high for the offered read beat.
    pub fn clock(&mut self, taken: bool) {
        if taken {
            if let Some(beat) = self.offered.take() {
                if beat.last {
                    self.order.push_back(beat.tag);
                }
            }
        }
        self.cycle += 1;
        self.refill();
    }

    fn refill(&mut self) {
        // Unused budget does not pile up beyond one beat: a link cannot
        // send a burst faster than its rate after an idle spell.
        let cap = BEAT_BYTES as u64;
        self.read_credit =
            (self.read_credit + u64::from(self.config.read_bytes_per_cycle)).min(cap);
        self.write_credit =
            (self.write_credit + u64::from(self.config.write_bytes_per_cycle)).min(cap);
        if self.offered.is_none() && self.read_credit >= cap {
            if let Some(beat) = self.next_beat() {
                self.read_credit -= cap;
                self.offered = Some(beat);
            }
        }
    }

    fn next_beat(&mut self) -> Option<ReadBeat> {
        let now = self.cycle;
        let idx = match self.current {
            Some(i) => i,
            None => {
                let eligible: Vec<usize> = (0..self.reads.len())
                    .filter(|&i| self.reads[i].ready_at <= now)
                    .collect();
                // `reads` keeps acceptance order, so the first is the oldest.
                let pick = if self.config.reorder && eligible.len() > 1 {
                    eligible[self.rng.gen_range(0..eligible.len())]
                } else {
                    *eligible.first()?
                };
                self.current = Some(pick);
                pick
            }
        };
        let r = &mut self.reads[idx];
        let n = (r.len - r.sent).min(BEAT_BYTES as u64) as usize;
        let mut data = [0u8; BEAT_BYTES];
        self.memory.read_phys(r.addr + r.sent, &mut data[..n]);
        r.sent += n as u64;
        let last = r.sent == r.len;
        let tag = r.tag;
        let completion = u64::from(self.config.completion_bytes);
        if last {
            self.reads.remove(idx);
            self.current = None;
        } else if r.sent.is_multiple_of(completion) {
            self.current = None;
        }
        Some(ReadBeat {
            tag,
            data,
            len: n as u8,
            last,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// Host memory with `len` bytes of a seeded pattern at a physical
    /// address; returns it and the address.
    fn memory_with_pattern(len: usize) -> (HostMemory, u64, Vec<u8>) {
        let mut mem = HostMemory::new(7);
        let va = mem.alloc(len as u64, 4096);
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let bytes: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
        mem.write_va(va, &bytes).unwrap();
        let (_, pages) = mem.pages(va, 4096).unwrap();
        (mem, pages[0], bytes)
    }

    /// Runs until every read is delivered; the consumer takes a beat when
    /// `ready(cycle)`. Returns each tag's bytes and the cycle of each
    /// taken beat.
    fn drain(
        dma: &mut HostDma,
        mut ready: impl FnMut(u64) -> bool,
    ) -> (HashMap<u16, Vec<u8>>, Vec<u64>) {
        let mut got: HashMap<u16, Vec<u8>> = HashMap::new();
        let mut cycles = Vec::new();
        let limit = dma.cycle() + 1_000_000;
        while dma.reads_in_flight() > 0 || dma.offered().is_some() {
            assert!(dma.cycle() < limit, "reads never finished");
            let take = ready(dma.cycle());
            if take {
                if let Some(b) = dma.offered() {
                    assert!((1..=64).contains(&b.len));
                    assert!(b.data[b.len as usize..].iter().all(|&x| x == 0));
                    got.entry(b.tag)
                        .or_default()
                        .extend_from_slice(&b.data[..b.len as usize]);
                    cycles.push(dma.cycle());
                }
            }
            dma.clock(take);
        }
        (got, cycles)
    }

    #[test]
    fn read_returns_memory_after_exactly_the_latency() {
        let (mem, pa, bytes) = memory_with_pattern(4096);
        let config = HostDmaConfig::default();
        let mut dma = HostDma::new(config, mem);
        dma.read_request(5, pa + 3, 1000).unwrap();
        let (got, cycles) = drain(&mut dma, |_| true);
        assert_eq!(got[&5], bytes[3..1003]);
        // 1000 bytes: 15 full beats and one of 40, one per cycle.
        assert_eq!(cycles.len(), 16);
        assert_eq!(cycles[0], config.read_latency);
        assert_eq!(*cycles.last().unwrap(), config.read_latency + 15);
        assert_eq!(dma.completion_order().collect::<Vec<_>>(), vec![5]);
    }

    #[test]
    fn bandwidth_limits_the_beat_rate() {
        let (mem, pa, _) = memory_with_pattern(4096);
        let config = HostDmaConfig {
            read_bytes_per_cycle: 16,
            read_latency: 10,
            ..HostDmaConfig::default()
        };
        let mut dma = HostDma::new(config, mem);
        for tag in 0..8 {
            dma.read_request(tag, pa, 4096).unwrap();
        }
        let (got, cycles) = drain(&mut dma, |_| true);
        assert_eq!(got.len(), 8);
        // 16 B/cycle: one 64-byte beat every 4 cycles.
        let span = cycles.last().unwrap() - cycles.first().unwrap();
        assert_eq!(cycles.len(), 8 * 64);
        assert_eq!(span, 4 * (cycles.len() as u64 - 1));
    }

    #[test]
    fn in_order_unless_reordering_and_never_inside_a_tag() {
        for reorder in [false, true] {
            let (mem, pa, bytes) = memory_with_pattern(8192);
            let config = HostDmaConfig {
                reorder,
                seed: 3,
                ..HostDmaConfig::default()
            };
            let mut dma = HostDma::new(config, mem);
            let lens: Vec<u64> = (0..32).map(|i| 1 + (i * 389) % 3000).collect();
            for (tag, &len) in lens.iter().enumerate() {
                dma.read_request(tag as u16, pa + tag as u64, len).unwrap();
            }
            let mut flip = ChaCha8Rng::seed_from_u64(9);
            let (got, _) = drain(&mut dma, |_| flip.gen_bool(0.7));
            for (tag, &len) in lens.iter().enumerate() {
                assert_eq!(
                    got[&(tag as u16)],
                    bytes[tag..tag + len as usize],
                    "tag {tag}"
                );
            }
            let order: Vec<u16> = dma.completion_order().collect();
            let sorted: Vec<u16> = (0..32).collect();
            assert_eq!(order == sorted, !reorder, "reorder = {reorder}: {order:?}");
        }
    }

    #[test]
    fn writes_land_are_logged_and_throttled() {
        let mut mem = HostMemory::new(1);
        let va = mem.alloc(8192, 4096);
        let (_, pages) = mem.pages(va, 4096).unwrap();
        let config = HostDmaConfig {
            write_bytes_per_cycle: 32,
            ..HostDmaConfig::default()
        };
        let mut dma = HostDma::new(config, mem);
        let mut written = 0u64;
        let mut first = None;
        while written < 4096 {
            if dma.write_ready() {
                first.get_or_insert(dma.cycle());
                dma.write(pages[0] + written, &[written as u8 ^ 0x5A; 64])
                    .unwrap();
                written += 64;
            } else {
                assert_eq!(dma.write(pages[0], &[0; 64]), Err(DmaError::WriteNotReady));
            }
            dma.clock(false);
        }
        let log = dma.writes();
        assert_eq!(log.len(), 64);
        // 32 B/cycle: a beat every other cycle.
        assert_eq!(log[63].cycle - log[0].cycle, 2 * 63);
        let mut back = vec![0u8; 64];
        dma.memory().read_phys(pages[0] + 64 * 9, &mut back);
        assert_eq!(back, vec![(64 * 9) as u8 ^ 0x5A; 64]);
        assert_eq!(dma.memory().stray_writes(), 0);
    }

    #[test]
    fn bad_requests_are_refused() {
        let (mem, pa, _) = memory_with_pattern(4096);
        let config = HostDmaConfig {
            max_outstanding_reads: 2,
            ..HostDmaConfig::default()
        };
        let mut dma = HostDma::new(config, mem);
        assert_eq!(dma.read_request(1, pa, 0), Err(DmaError::ZeroLength));
        dma.read_request(1, pa, 64).unwrap();
        assert_eq!(dma.read_request(1, pa, 64), Err(DmaError::TagInUse(1)));
        dma.read_request(2, pa, 64).unwrap();
        assert!(!dma.read_request_ready());
        assert_eq!(dma.read_request(3, pa, 64), Err(DmaError::TooManyReads));
        assert_eq!(dma.write(pa, &[]), Err(DmaError::BadWriteBeat(0)));
        assert_eq!(dma.write(pa, &[0; 65]), Err(DmaError::BadWriteBeat(65)));
    }
}
