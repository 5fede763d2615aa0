//! Host memory of one simulated machine: a sparse host-physical address
//! space (what the NIC's DMA engine sees) and one process's virtual address
//! space on top of it (what verbs and the CPU see).
//!
//! Physical pages are scattered deterministically from a seed, above 4 GiB
//! and never physically adjacent to the previous page of the same buffer, so
//! any DMA path that assumes "virtually contiguous = physically contiguous",
//! or truncates addresses to 32 bits, reads and writes the wrong bytes and
//! the tests see it. Allocations are separated by unmapped guard gaps so a
//! range can never silently run from one buffer into the next.
//!
//! Storage is kept in 4 KiB granules that only exist once written, whatever
//! the mapping page size, so a 2 MiB-page buffer costs nothing until used.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use std::collections::BTreeMap;

/// Storage granule of physical memory; independent of mapping page sizes.
const GRANULE: u64 = 4096;
const GRANULE_SHIFT: u32 = 12;

/// Physical pages live in [PHYS_BASE, PHYS_BASE + PHYS_SPAN): above 4 GiB so
/// every DMA address needs more than 32 bits.
const PHYS_BASE: u64 = 1 << 32;
const PHYS_SPAN: u64 = 1 << 40;
/// Width of host physical addresses (x86-64's architectural maximum): DMA
/// at or above 2^52 reaches nothing; reads give zero, writes are dropped
/// and counted as stray.
pub const PHYS_LIMIT: u64 = 1 << 52;

/// User virtual addresses start around here (seeded offset on top), far
/// from the physical window so a VA used as a PA (or the reverse) misses.
const VA_BASE: u64 = 0x0000_7f00_0000_0000;
/// Unmapped gap after every allocation.
const VA_GUARD: u64 = 2 << 20;

pub const MIN_PAGE_SIZE: u64 = 4 << 10;
pub const MAX_PAGE_SIZE: u64 = 2 << 20;

/// Random placement attempts per page before falling back to a scan.
const PLACEMENT_TRIES: u32 = 64;

#[derive(Debug, thiserror::Error, PartialEq, Eq, Clone, Copy, Serialize)]
pub enum MemoryError {
    /// No mapping covers this virtual address.
    #[error("virtual address {va:#x} is not mapped")]
    Unmapped { va: u64 },
    /// `va + len` does not fit in 64 bits.
    #[error("range {va:#x} + {len:#x} overflows the address space")]
    Overflow { va: u64, len: u64 },
}

/// One allocation: a run of virtual pages and the physical page behind each.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Mapping {
    page_size: u64,
    /// Physical address of each page, in virtual order.
    phys: Vec<u64>,
}

impl Mapping {
    fn len(&self) -> u64 {
        self.page_size * self.phys.len() as u64
    }
}

/// Sparse host physical memory plus one virtual address space. Equal
/// memories hold the same bytes at the same addresses and hand out the
/// same addresses next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostMemory {
    rng: ChaCha8Rng,
    /// 4 KiB granule number -> contents. Absent granules read as zero.
    store: BTreeMap<u64, Box<[u8]>>,
    /// Physical pages handed out: start -> end (exclusive). Never overlap.
    allocated: BTreeMap<u64, u64>,
    /// Mapping start VA -> mapping.
    maps: BTreeMap<u64, Mapping>,
    next_va: u64,
    stray: u64,
}

impl HostMemory {
    pub fn new(seed: u64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        // Seeded VA base: two machines in one simulation get different
        // addresses, so mixing up local and remote VAs is caught.
        let next_va = VA_BASE + (rng.gen_range(0..4096u64) << 30);
        HostMemory {
            rng,
            store: BTreeMap::new(),
            allocated: BTreeMap::new(),
            maps: BTreeMap::new(),
            next_va,
            stray: 0,
        }
    }

    /// Allocates `len` bytes of virtual memory backed by physical pages of
    /// `page_size` (power of two, 4 KiB ..= 2 MiB), placed non-contiguously
    /// in physical space (deterministically from the seed), so MR
    /// translation is really exercised. Returns the VA (aligned to
    /// page_size). len 0 still returns a valid address (one page).
    ///
    /// # Panics
    /// On an invalid `page_size`, or when the request exceeds the simulated
    /// physical memory (1 TiB): host programming errors, like an OOM abort.
    pub fn alloc(&mut self, len: u64, page_size: u64) -> u64 {
        assert!(
            page_size.is_power_of_two() && (MIN_PAGE_SIZE..=MAX_PAGE_SIZE).contains(&page_size),
            "page size {page_size:#x} is not a power of two in 4 KiB ..= 2 MiB"
        );
        let npages = len.div_ceil(page_size).max(1);
        assert!(
            npages <= PHYS_SPAN / page_size,
            "allocation of {len:#x} bytes exceeds simulated physical memory"
        );
        let va = self.next_va.next_multiple_of(page_size);
        let mut phys = Vec::with_capacity(npages as usize);
        let mut prev: Option<u64> = None;
        for _ in 0..npages {
            let pa = self.place_page(page_size, prev);
            self.allocated.insert(pa, pa + page_size);
            phys.push(pa);
            prev = Some(pa);
        }
        let mapping = Mapping { page_size, phys };
        self.next_va = va + mapping.len() + VA_GUARD;
        self.maps.insert(va, mapping);
        va
    }

    /// Allocates `len` bytes whose physical pages are contiguous, what a
    /// driver's coherent DMA allocation gives a ring: returns the VA and
    /// the bus address of its first byte, both 4 KiB aligned (the bus
    /// address aligned to the size rounded up to a power of two).
    ///
    /// # Panics
    /// When the request exceeds the simulated physical memory.
    pub fn alloc_contiguous(&mut self, len: u64) -> (u64, u64) {
        let npages = len.div_ceil(MIN_PAGE_SIZE).max(1);
        let span = (npages * MIN_PAGE_SIZE).next_power_of_two();
        assert!(
            span <= PHYS_SPAN,
            "allocation of {len:#x} bytes exceeds simulated physical memory"
        );
        let pa = self.place_page(span, None);
        self.allocated.insert(pa, pa + npages * MIN_PAGE_SIZE);
        let va = self.next_va.next_multiple_of(MIN_PAGE_SIZE);
        let mapping = Mapping {
            page_size: MIN_PAGE_SIZE,
            phys: (0..npages).map(|i| pa + i * MIN_PAGE_SIZE).collect(),
        };
        self.next_va = va + mapping.len() + VA_GUARD;
        self.maps.insert(va, mapping);
        (va, pa)
    }

    /// Picks a free, aligned physical page that does not directly follow
    /// `prev` (the previous page of the same buffer).
    fn place_page(&mut self, page_size: u64, prev: Option<u64>) -> u64 {
        let frames = PHYS_SPAN / page_size;
        let acceptable = |this: &Self, pa: u64| {
            Some(pa) != prev.map(|p| p + page_size) && this.phys_free(pa, page_size)
        };
        for _ in 0..PLACEMENT_TRIES {
            let pa = PHYS_BASE + self.rng.gen_range(0..frames) * page_size;
            if acceptable(self, pa) {
                return pa;
            }
        }
        // Nearly full: scan from a random frame so the result stays seeded.
        let start = self.rng.gen_range(0..frames);
        (0..frames)
            .map(|i| PHYS_BASE + ((start + i) % frames) * page_size)
            .find(|&pa| acceptable(self, pa))
            .expect("simulated physical memory exhausted")
    }

    fn phys_free(&self, pa: u64, len: u64) -> bool {
        self.allocated
            .range(..pa + len)
            .next_back()
            .is_none_or(|(_, &end)| end <= pa)
    }

    /// The mapping containing `va`, with its start address.
    fn mapping_at(&self, va: u64) -> Option<(u64, &Mapping)> {
        let (&start, m) = self.maps.range(..=va).next_back()?;
        (va - start < m.len()).then_some((start, m))
    }

    /// Host physical address of one virtual address.
    pub fn va_to_pa(&self, va: u64) -> Result<u64, MemoryError> {
        let (start, m) = self.mapping_at(va).ok_or(MemoryError::Unmapped { va })?;
        let off = va - start;
        Ok(m.phys[(off / m.page_size) as usize] + off % m.page_size)
    }

    /// Physical pieces of [va, va+len), each within one page; fails before
    /// anything is touched if any byte is unmapped.
    fn phys_segments(&self, va: u64, len: u64) -> Result<Vec<(u64, u64)>, MemoryError> {
        let end = va
            .checked_add(len)
            .ok_or(MemoryError::Overflow { va, len })?;
        let mut segs = Vec::new();
        let mut cur = va;
        while cur < end {
            let (start, m) = self
                .mapping_at(cur)
                .ok_or(MemoryError::Unmapped { va: cur })?;
            let map_end = start + m.len();
            while cur < end && cur < map_end {
                let off = cur - start;
                let in_page = off % m.page_size;
                let n = (m.page_size - in_page).min(end - cur);
                segs.push((m.phys[(off / m.page_size) as usize] + in_page, n));
                cur += n;
            }
        }
        Ok(segs)
    }

    /// CPU read through the page table.
    pub fn read_va(&self, va: u64, buf: &mut [u8]) -> Result<(), MemoryError> {
        let segs = self.phys_segments(va, buf.len() as u64)?;
        let mut done = 0usize;
        for (pa, n) in segs {
            let n = n as usize;
            self.read_phys(pa, &mut buf[done..done + n]);
            done += n;
        }
        Ok(())
    }

    /// CPU write through the page table; all or nothing.
    pub fn write_va(&mut self, va: u64, data: &[u8]) -> Result<(), MemoryError> {
        let segs = self.phys_segments(va, data.len() as u64)?;
        let mut done = 0usize;
        for (pa, n) in segs {
            let n = n as usize;
            self.write_phys(pa, &data[done..done + n]);
            done += n;
        }
        Ok(())
    }

    /// DMA read of host physical memory. Unwritten memory reads as zero,
    /// and so do bytes at or above [`PHYS_LIMIT`].
    pub fn read_phys(&self, pa: u64, buf: &mut [u8]) {
        let len = clamp_len(pa, buf.len());
        buf[len..].fill(0);
        let buf = &mut buf[..len];
        if len == 0 {
            return;
        }
        let first = pa >> GRANULE_SHIFT;
        let last = (pa + len as u64 - 1) >> GRANULE_SHIFT;
        // Walk the granules in order, zero-filling holes between stored ones.
        let mut filled = 0usize;
        for (&g, data) in self.store.range(first..=last) {
            let g_start = g << GRANULE_SHIFT;
            let copy_from = g_start.max(pa);
            let dst = (copy_from - pa) as usize;
            buf[filled..dst].fill(0);
            let n = ((g_start + GRANULE).min(pa + len as u64) - copy_from) as usize;
            let src = (copy_from - g_start) as usize;
            buf[dst..dst + n].copy_from_slice(&data[src..src + n]);
            filled = dst + n;
        }
        buf[filled..].fill(0);
    }

    /// DMA write of host physical memory. Bytes outside every page the
    /// allocator handed out are still stored (real DMA would land somewhere)
    /// but counted in [`stray_writes`](Self::stray_writes); bytes at or
    /// above [`PHYS_LIMIT`] are dropped and counted too.
    pub fn write_phys(&mut self, pa: u64, data: &[u8]) {
        let len = clamp_len(pa, data.len());
        self.stray += (data.len() - len) as u64 + len as u64 - self.covered(pa, len as u64);
        let mut done = 0usize;
        while done < len {
            let addr = pa + done as u64;
            let in_g = (addr % GRANULE) as usize;
            let n = (GRANULE as usize - in_g).min(len - done);
            let g = self
                .store
                .entry(addr >> GRANULE_SHIFT)
                .or_insert_with(|| vec![0u8; GRANULE as usize].into_boxed_slice());
            g[in_g..in_g + n].copy_from_slice(&data[done..done + n]);
            done += n;
        }
    }

    /// Bytes of [pa, pa+len) inside allocated physical pages.
    fn covered(&self, pa: u64, len: u64) -> u64 {
        let end = pa + len;
        let before = self.allocated.range(..pa).next_back();
        before
            .into_iter()
            .chain(self.allocated.range(pa..end))
            .map(|(&s, &e)| e.min(end).saturating_sub(s.max(pa)))
            .sum()
    }

    /// The physical page list backing [va, va+len) and its page size — what
    /// MR registration pins. The range must lie within one allocation (the
    /// guard gaps make any other range unmapped). `len` 0 gives no pages.
    pub fn pages(&self, va: u64, len: u64) -> Result<(u64, Vec<u64>), MemoryError> {
        let end = va
            .checked_add(len)
            .ok_or(MemoryError::Overflow { va, len })?;
        let (start, m) = self.mapping_at(va).ok_or(MemoryError::Unmapped { va })?;
        let map_end = start + m.len();
        if end > map_end {
            return Err(MemoryError::Unmapped { va: map_end });
        }
        if len == 0 {
            return Ok((m.page_size, Vec::new()));
        }
        let first = ((va - start) / m.page_size) as usize;
        let last = ((end - 1 - start) / m.page_size) as usize;
        Ok((m.page_size, m.phys[first..=last].to_vec()))
    }

    /// Bytes ever written through write_phys outside any page the allocator
    /// handed out — must stay 0 (tests use it to prove no stray DMA).
    pub fn stray_writes(&self) -> u64 {
        self.stray
    }

    /// Bytes of physical storage actually materialised (4 KiB granules).
    pub fn resident_bytes(&self) -> u64 {
        self.store.len() as u64 * GRANULE
    }
}

/// How much of a `len`-byte access at `pa` lies below [`PHYS_LIMIT`].
fn clamp_len(pa: u64, len: usize) -> usize {
    (len as u64).min(PHYS_LIMIT.saturating_sub(pa)) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern(len: usize, salt: u8) -> Vec<u8> {
        (0..len)
            .map(|i| (i as u32).wrapping_mul(2_654_435_761).to_le_bytes()[3] ^ salt)
            .collect()
    }

    #[test]
    fn alloc_is_page_aligned_and_len_zero_gets_a_page() {
        let mut m = HostMemory::new(1);
        for ps in [4 << 10, 8 << 10, 64 << 10, 1 << 20, 2 << 20] {
            let va = m.alloc(0, ps);
            assert_eq!(va % ps, 0);
            let (size, pages) = m.pages(va, ps).unwrap();
            assert_eq!(size, ps);
            assert_eq!(pages.len(), 1);
            assert_eq!(pages[0] % ps, 0);
            assert!(m.pages(va, ps + 1).is_err());
        }
    }

    #[test]
    fn physical_pages_are_scattered_above_4g_and_disjoint() {
        let mut m = HostMemory::new(7);
        let mut all = Vec::new();
        for ps in [4u64 << 10, 2 << 20] {
            let va = m.alloc(64 * ps, ps);
            let (_, pages) = m.pages(va, 64 * ps).unwrap();
            assert_eq!(pages.len(), 64);
            for w in pages.windows(2) {
                assert_ne!(w[1], w[0] + ps, "consecutive pages physically adjacent");
            }
            all.extend(pages.iter().map(|&p| (p, p + ps)));
        }
        assert!(all.iter().all(|&(s, _)| s >= 1 << 32));
        all.sort();
        for w in all.windows(2) {
            assert!(w[0].1 <= w[1].0, "physical pages overlap");
        }
    }

    #[test]
    fn placement_is_deterministic_per_seed() {
        let layout = |seed| {
            let mut m = HostMemory::new(seed);
            let va = m.alloc(10 * 4096, 4096);
            (va, m.pages(va, 10 * 4096).unwrap())
        };
        assert_eq!(layout(3), layout(3));
        assert_ne!(layout(3).1, layout(4).1);
    }

    #[test]
    fn cross_page_va_io_roundtrips_and_lands_in_the_right_pages() {
        for ps in [4u64 << 10, 16 << 10, 2 << 20] {
            let mut m = HostMemory::new(11);
            let va = m.alloc(3 * ps, ps);
            let start = va + ps - 100;
            let data = pattern(ps as usize + 300, 0x5a);
            m.write_va(start, &data).unwrap();
            let mut back = vec![0u8; data.len()];
            m.read_va(start, &mut back).unwrap();
            assert_eq!(back, data);
            // The same bytes seen through the physical pages directly.
            let (_, pages) = m.pages(va, 3 * ps).unwrap();
            let mut p = [0u8; 100];
            m.read_phys(pages[0] + ps - 100, &mut p);
            assert_eq!(&p[..], &data[..100]);
            let mut q = vec![0u8; ps as usize];
            m.read_phys(pages[1], &mut q);
            assert_eq!(&q[..], &data[100..100 + ps as usize]);
            let mut r = [0u8; 200];
            m.read_phys(pages[2], &mut r);
            assert_eq!(&r[..], &data[100 + ps as usize..]);
            assert_eq!(m.va_to_pa(start + 100).unwrap(), pages[1]);
            assert_eq!(m.stray_writes(), 0);
        }
    }

    #[test]
    fn unmapped_and_overflowing_ranges_fail_without_writing() {
        let mut m = HostMemory::new(5);
        let va = m.alloc(8192, 4096);
        let mut b = [0u8; 16];
        assert_eq!(
            m.read_va(va - 1, &mut b),
            Err(MemoryError::Unmapped { va: va - 1 })
        );
        // Runs off the end into the guard gap: nothing may be written.
        assert_eq!(
            m.write_va(va + 8192 - 8, &[0xff; 16]),
            Err(MemoryError::Unmapped { va: va + 8192 })
        );
        m.read_va(va + 8192 - 8, &mut b[..8]).unwrap();
        assert_eq!(b[..8], [0; 8]);
        assert_eq!(
            m.read_va(u64::MAX - 3, &mut b),
            Err(MemoryError::Overflow {
                va: u64::MAX - 3,
                len: 16
            })
        );
        assert!(m.pages(va, u64::MAX).is_err());
        assert_eq!(
            m.pages(0x1000, 1),
            Err(MemoryError::Unmapped { va: 0x1000 })
        );
        assert_eq!(m.va_to_pa(0), Err(MemoryError::Unmapped { va: 0 }));
    }

    #[test]
    fn allocations_are_separated_by_guard_gaps() {
        let mut m = HostMemory::new(9);
        let a = m.alloc(4096, 4096);
        let b = m.alloc(4096, 4096);
        assert!(b >= a + 4096 + VA_GUARD);
        assert!(m.pages(a, 4096 + 1).is_err());
        assert!(m.read_va(a + 4095, &mut [0u8; 2]).is_err());
    }

    #[test]
    fn storage_is_sparse_with_huge_pages() {
        let mut m = HostMemory::new(2);
        let va = m.alloc(64 << 20, 2 << 20);
        assert_eq!(m.resident_bytes(), 0);
        let mut b = vec![1u8; 1 << 20];
        m.read_va(va + (3 << 20), &mut b).unwrap();
        assert!(b.iter().all(|&x| x == 0));
        m.write_va(va + (5 << 20) + 10, &[7]).unwrap();
        assert_eq!(m.resident_bytes(), GRANULE);
    }

    #[test]
    fn megabyte_buffers_roundtrip() {
        let mut m = HostMemory::new(4);
        let va = m.alloc(4 << 20, 4096);
        let data = pattern(1 << 20, 3);
        m.write_va(va + 123, &data).unwrap();
        let mut back = vec![0u8; data.len()];
        m.read_va(va + 123, &mut back).unwrap();
        assert_eq!(back, data);
        assert_eq!(m.resident_bytes(), 257 * GRANULE);
    }

    #[test]
    fn phys_reads_zero_fill_holes_between_written_granules() {
        let mut m = HostMemory::new(0);
        let base = 1u64 << 33;
        m.write_phys(base + 10, &[1, 2, 3]);
        m.write_phys(base + 2 * GRANULE + 5, &[9]);
        let mut b = vec![0xeeu8; 3 * GRANULE as usize];
        m.read_phys(base, &mut b);
        let mut want = vec![0u8; b.len()];
        want[10..13].copy_from_slice(&[1, 2, 3]);
        want[2 * GRANULE as usize + 5] = 9;
        assert_eq!(b, want);
    }

    #[test]
    fn stray_writes_count_bytes_outside_allocated_pages() {
        let mut m = HostMemory::new(6);
        let va = m.alloc(4096, 4096);
        let pa = m.va_to_pa(va).unwrap();
        m.write_phys(pa, &[0; 4096]);
        assert_eq!(m.stray_writes(), 0);
        // 10 bytes before the page, 6 inside.
        m.write_phys(pa - 10, &[0; 16]);
        assert_eq!(m.stray_writes(), 10);
        // Straddling the top of physical space: 2 bytes stored, 2 dropped,
        // all 4 stray; nothing near 2^64 may panic.
        m.write_phys(PHYS_LIMIT - 2, &[1; 4]);
        assert_eq!(m.stray_writes(), 14);
        let mut b = [9u8; 4];
        m.read_phys(PHYS_LIMIT - 2, &mut b);
        assert_eq!(b, [1, 1, 0, 0]);
        m.write_phys(u64::MAX, &[1; 8]);
        assert_eq!(m.stray_writes(), 22);
        m.read_phys(u64::MAX - 3, &mut b);
        assert_eq!(b, [0; 4]);
    }
}
