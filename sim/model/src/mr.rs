//! Memory regions: PD-scoped registrations with L_Key/R_Key, access rights,
//! bounds, and a memory translation table (MTT) mapping them to host
//! physical pages — the model of the RTL's "MR translate + check" block.
//!
//! The state mirrors what the RTL holds, entry for entry, so the block can
//! be scoreboarded against this model:
//! - MR table (BRAM indexed by key >> 8, `max_mrs` entries): state
//!   (free / valid / invalidated), 8-bit key variant, PD, base VA, length,
//!   access flags, page size (as a shift), MTT base index.
//! - MTT (BRAM, `max_mtt_entries` entries): one host physical page address
//!   per page of each MR, an MR's pages at consecutive entries from its
//!   MTT base.
//!
//! Keys are `(index << 8) | variant`, as in rxe. The variant of a table
//! entry advances on every registration of that entry and every
//! re-registration, so keys of an earlier registration fail as
//! [`MrError::StaleKey`]; key 0 is never issued. L_Key and R_Key are equal.
//!
//! Access rules (IBA 10.6.3.1): REMOTE_WRITE and REMOTE_ATOMIC need
//! LOCAL_WRITE at registration; local reads need no right; local writes
//! need LOCAL_WRITE; remote operations need their remote right.
//!
//! Zero-length accesses are allowed when key, state, PD and access rights
//! check out, whatever the address (nothing is touched, as in rxe); they
//! translate to no segments. Whether a zero-length RDMA operation is
//! checked at all (IBA C9-88 lets the responder skip it) is the
//! responder's decision, not this table's.

use crate::memory::HostMemory;
use crate::verbs::{Access, PdId, VerbsError};
use serde::Serialize;
use std::collections::BTreeSet;

/// Keys of one registration. They are equal; both are returned because
/// verbs users keep them apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct MrKeys {
    pub lkey: u32,
    pub rkey: u32,
}

/// A piece of host physical memory for one DMA request; never crosses a
/// page of the MR it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DmaSegment {
    pub phys: u64,
    pub len: u32,
}

/// Which bytes of a `len`-byte payload go to which physical address when
/// it is written across `segs` (the translation of that length): one
/// `(phys, range)` per segment that receives bytes, in payload order. What
/// the DMA writes of `write_segments` do, one request per segment (the
/// RTL's `dma_write_mover` sends exactly these requests).
pub fn segment_spans(segs: &[DmaSegment], len: usize) -> Vec<(u64, std::ops::Range<usize>)> {
    let mut spans = Vec::new();
    let mut at = 0;
    for s in segs {
        let n = (s.len as usize).min(len - at);
        if n > 0 {
            spans.push((s.phys, at..at + n));
        }
        at += n;
    }
    spans
}

/// Why an access through a key was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error, Serialize)]
pub enum MrError {
    /// The key's index is beyond the table or names no registered MR.
    #[error("invalid key")]
    InvalidKey,
    /// The index is registered, but with another key variant.
    #[error("stale key")]
    StaleKey,
    /// The MR was remotely invalidated and not re-registered since.
    #[error("memory region invalidated")]
    Invalidated,
    #[error("protection domain mismatch")]
    PdMismatch,
    #[error("access right missing")]
    AccessDenied,
    #[error("access out of bounds")]
    OutOfBounds,
}

/// Default table sizes of the NIC (and the RTL).
pub const DEFAULT_MAX_MRS: usize = 1024;
pub const DEFAULT_MAX_MTT_ENTRIES: usize = 16384;

/// The index field of a key is 24 bits wide.
const MAX_INDEX_COUNT: usize = 1 << 24;

const REMOTE_ANY: Access =
    Access(Access::REMOTE_WRITE.0 | Access::REMOTE_READ.0 | Access::REMOTE_ATOMIC.0);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum MrState {
    Free,
    Valid,
    Invalidated,
}

/// One MR table entry, as the RTL stores it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct MrEntry {
    pub state: MrState,
    /// Low 8 bits of the current key; kept while the entry is free so the
    /// next registration of this index moves on from it.
    pub variant: u8,
    pub pd: PdId,
    pub base_va: u64,
    pub len: u64,
    pub access: Access,
    pub page_shift: u8,
    pub mtt_base: u32,
}

impl MrEntry {
    const FREE: MrEntry = MrEntry {
        state: MrState::Free,
        variant: 0,
        pd: PdId(0),
        base_va: 0,
        len: 0,
        access: Access::NONE,
        page_shift: 0,
        mtt_base: 0,
    };

    /// MTT entries this MR occupies (pages touched by [base_va, base_va+len)).
    fn npages(&self) -> u64 {
        if self.state == MrState::Free {
            return 0;
        }
        let first = self.base_va >> self.page_shift;
        let last = (self.base_va + self.len - 1) >> self.page_shift;
        last - first + 1
    }
}

/// The MR table and its MTT.
#[derive(Debug, Clone)]
pub struct MrTable {
    max_mrs: usize,
    /// Grows up to `max_mrs` as indexes are first used.
    entries: Vec<MrEntry>,
    /// Indexes below `entries.len()` that are free, reused lowest first.
    free_indexes: BTreeSet<u32>,
    mtt: Vec<u64>,
    mtt_used: usize,
}

fn key_of(index: u32, variant: u8) -> u32 {
    (index << 8) | variant as u32
}

/// The variant after `v` for `index`, skipping the one that would make key 0.
/// The checks of a registration that need no memory: known access flags,
/// remote write or atomic only with local write, at least one byte (like
/// ib_umem_get).
fn check_request(access: Access, len: u64) -> Result<(), VerbsError> {
    if !Access::ALL.contains(access) {
        return Err(VerbsError::InvalidAttribute("unknown access flags"));
    }
    let needs_local_write = Access(Access::REMOTE_WRITE.0 | Access::REMOTE_ATOMIC.0);
    if access.0 & needs_local_write.0 != 0 && !access.contains(Access::LOCAL_WRITE) {
        return Err(VerbsError::InvalidAttribute(
            "remote write/atomic access requires local write",
        ));
    }
    if len == 0 {
        return Err(VerbsError::InvalidAttribute("zero-length memory region"));
    }
    Ok(())
}

fn next_variant(index: u32, v: u8) -> u8 {
    let n = v.wrapping_add(1);
    if key_of(index, n) == 0 {
        n.wrapping_add(1)
    } else {
        n
    }
}

impl MrTable {
    /// `max_mrs` is capped at 2^24 (the key's index field); `max_mtt_entries`
    /// at 2^32. The NIC uses [`DEFAULT_MAX_MRS`] and
    /// [`DEFAULT_MAX_MTT_ENTRIES`].
    pub fn new(max_mrs: usize, max_mtt_entries: usize) -> Self {
        MrTable {
            max_mrs: max_mrs.min(MAX_INDEX_COUNT),
            entries: Vec::new(),
            free_indexes: BTreeSet::new(),
            mtt: vec![0; max_mtt_entries.min(u32::MAX as usize)],
            mtt_used: 0,
        }
    }

    /// Registers [va, va+len) of `mem` in `pd`: pins its physical pages into
    /// the MTT and returns fresh keys.
    pub fn register(
        &mut self,
        pd: PdId,
        va: u64,
        len: u64,
        access: Access,
        mem: &HostMemory,
    ) -> Result<MrKeys, VerbsError> {
        check_request(access, len)?;
        let (page_size, pages) = mem
            .pages(va, len)
            .map_err(|_| VerbsError::InvalidAttribute("memory region not mapped"))?;
        self.register_pages(pd, va, len, access, page_size, &pages)
    }

    /// Registers [va, va+len) backed by `pages` (bus addresses of pages of
    /// `page_size`, the first holding `va`): what a driver's REG_MR hands
    /// the NIC. The list must cover the range exactly.
    pub fn register_pages(
        &mut self,
        pd: PdId,
        va: u64,
        len: u64,
        access: Access,
        page_size: u64,
        pages: &[u64],
    ) -> Result<MrKeys, VerbsError> {
        check_request(access, len)?;
        if !page_size.is_power_of_two() || page_size < 4096 {
            return Err(VerbsError::InvalidAttribute("page size"));
        }
        let covered = (va % page_size)
            .checked_add(len)
            .map(|b| b.div_ceil(page_size));
        if covered != Some(pages.len() as u64) || pages.iter().any(|p| !p.is_multiple_of(page_size))
        {
            return Err(VerbsError::InvalidAttribute(
                "the page list does not cover the region with aligned pages",
            ));
        }
        let index = self.free_index().ok_or(VerbsError::NoResources)?;
        let mtt_base = self.alloc_mtt(pages.len()).ok_or(VerbsError::NoResources)?;
        self.mtt[mtt_base..mtt_base + pages.len()].copy_from_slice(pages);
        self.mtt_used += pages.len();

        if index as usize == self.entries.len() {
            self.entries.push(MrEntry::FREE);
        } else {
            self.free_indexes.remove(&index);
        }
        let e = &mut self.entries[index as usize];
        *e = MrEntry {
            state: MrState::Valid,
            variant: next_variant(index, e.variant),
            pd,
            base_va: va,
            len,
            access,
            page_shift: page_size.trailing_zeros() as u8,
            mtt_base: mtt_base as u32,
        };
        let key = key_of(index, e.variant);
        Ok(MrKeys {
            lkey: key,
            rkey: key,
        })
    }

    /// Same region, key variant + 1: old keys become stale. Also revives a
    /// remotely invalidated MR.
    pub fn reregister(&mut self, lkey: u32) -> Result<MrKeys, VerbsError> {
        let index = self.lookup(lkey).map_err(|_| VerbsError::NoSuchMr(lkey))?;
        let e = &mut self.entries[index];
        e.variant = next_variant(index as u32, e.variant);
        e.state = MrState::Valid;
        let key = key_of(index as u32, e.variant);
        Ok(MrKeys {
            lkey: key,
            rkey: key,
        })
    }

    /// Frees the MR and its MTT entries.
    pub fn deregister(&mut self, lkey: u32) -> Result<(), VerbsError> {
        let index = self.lookup(lkey).map_err(|_| VerbsError::NoSuchMr(lkey))?;
        self.mtt_used -= self.entries[index].npages() as usize;
        let e = &mut self.entries[index];
        *e = MrEntry {
            variant: e.variant,
            ..MrEntry::FREE
        };
        self.free_indexes.insert(index as u32);
        Ok(())
    }

    /// Remote invalidation (SEND with Invalidate, IBA 10.6.6): the MR must
    /// belong to the QP's PD. Invalidating an already invalidated MR
    /// succeeds again, as in rxe.
    pub fn invalidate(&mut self, rkey: u32, pd: PdId) -> Result<(), MrError> {
        let index = self.lookup(rkey)?;
        let e = &mut self.entries[index];
        if e.pd != pd {
            return Err(MrError::PdMismatch);
        }
        e.state = MrState::Invalidated;
        Ok(())
    }

    /// Whether any registered MR (valid or invalidated) is in `pd`.
    pub fn uses_pd(&self, pd: PdId) -> bool {
        self.entries
            .iter()
            .any(|e| e.state != MrState::Free && e.pd == pd)
    }

    /// Checks key (table index + 8-bit key variant), PD, access rights and
    /// bounds (with overflow-safe arithmetic), then translates [va, va+len)
    /// through the MTT into host physical segments split at page
    /// boundaries. `need` must name at least one remote right.
    pub fn translate_remote(
        &self,
        rkey: u32,
        pd: PdId,
        va: u64,
        len: u64,
        need: Access,
    ) -> Result<Vec<DmaSegment>, MrError> {
        let index = self.check(rkey, pd, need)?;
        if need.0 & REMOTE_ANY.0 == 0 {
            // An R_Key is only ever good for a remote operation.
            return Err(MrError::AccessDenied);
        }
        self.translate(index, va, len)
    }

    /// As [`translate_remote`](Self::translate_remote) for the NIC's own
    /// accesses through an L_Key: `Access::NONE` to read (send payload,
    /// READ/atomic request source), `LOCAL_WRITE` to write (receive buffers,
    /// READ/atomic results).
    pub fn translate_local(
        &self,
        lkey: u32,
        pd: PdId,
        va: u64,
        len: u64,
        need: Access,
    ) -> Result<Vec<DmaSegment>, MrError> {
        let index = self.check(lkey, pd, need)?;
        self.translate(index, va, len)
    }

    /// Registered MRs (valid or invalidated).
    pub fn len(&self) -> usize {
        self.entries.len() - self.free_indexes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// MTT entries not held by any MR.
    pub fn mtt_free(&self) -> usize {
        self.mtt.len() - self.mtt_used
    }

    /// The table entry a key's index selects, whatever its variant or state
    /// (for scoreboards and debugging).
    pub fn entry(&self, key: u32) -> Option<&MrEntry> {
        self.entries.get((key >> 8) as usize)
    }

    /// The MTT as the RTL holds it (for scoreboards and debugging).
    pub fn mtt(&self) -> &[u64] {
        &self.mtt
    }

    /// Index of the registered MR this key names with its current variant,
    /// in any state other than free.
    fn lookup(&self, key: u32) -> Result<usize, MrError> {
        let index = (key >> 8) as usize;
        let e = self.entries.get(index).ok_or(MrError::InvalidKey)?;
        if e.state == MrState::Free {
            return Err(MrError::InvalidKey);
        }
        if e.variant != key as u8 {
            return Err(MrError::StaleKey);
        }
        Ok(index)
    }

    fn check(&self, key: u32, pd: PdId, need: Access) -> Result<usize, MrError> {
        let index = self.lookup(key)?;
        let e = &self.entries[index];
        if e.state == MrState::Invalidated {
            return Err(MrError::Invalidated);
        }
        if e.pd != pd {
            return Err(MrError::PdMismatch);
        }
        if !e.access.contains(need) {
            return Err(MrError::AccessDenied);
        }
        Ok(index)
    }

    fn translate(&self, index: usize, va: u64, len: u64) -> Result<Vec<DmaSegment>, MrError> {
        if len == 0 {
            return Ok(Vec::new());
        }
        let e = &self.entries[index];
        // base_va + len cannot overflow: registration found it mapped.
        let end = va.checked_add(len).ok_or(MrError::OutOfBounds)?;
        if va < e.base_va || end > e.base_va + e.len {
            return Err(MrError::OutOfBounds);
        }
        let page_size = 1u64 << e.page_shift;
        // Offsets from the start of the MR's first page, which is MTT entry 0.
        let first_page_va = e.base_va & !(page_size - 1);
        let mut segs = Vec::with_capacity(((len >> e.page_shift) + 2) as usize);
        let mut off = va - first_page_va;
        let end_off = end - first_page_va;
        while off < end_off {
            let in_page = off & (page_size - 1);
            let n = (page_size - in_page).min(end_off - off);
            let page = self.mtt[e.mtt_base as usize + (off >> e.page_shift) as usize];
            segs.push(DmaSegment {
                phys: page + in_page,
                len: n as u32,
            });
            off += n;
        }
        Ok(segs)
    }

    fn free_index(&self) -> Option<u32> {
        match self.free_indexes.first() {
            Some(&i) => Some(i),
            None if self.entries.len() < self.max_mrs => Some(self.entries.len() as u32),
            None => None,
        }
    }

    /// First-fit run of `n` consecutive MTT entries. When free entries
    /// suffice but are fragmented, live MRs' runs are compacted towards 0
    /// first: the driver can do that under traffic by copying a run and
    /// then rewriting the MR entry's MTT base in one write.
    fn alloc_mtt(&mut self, n: usize) -> Option<usize> {
        if n > self.mtt_free() {
            return None;
        }
        if let Some(base) = self.find_gap(n) {
            return Some(base);
        }
        self.compact_mtt();
        Some(self.mtt_used)
    }

    /// Live MR indexes in MTT order.
    fn by_mtt_base(&self) -> Vec<usize> {
        let mut live: Vec<usize> = (0..self.entries.len())
            .filter(|&i| self.entries[i].state != MrState::Free)
            .collect();
        live.sort_by_key(|&i| self.entries[i].mtt_base);
        live
    }

    fn find_gap(&self, n: usize) -> Option<usize> {
        let mut cursor = 0usize;
        for i in self.by_mtt_base() {
            let e = &self.entries[i];
            if e.mtt_base as usize - cursor >= n {
                return Some(cursor);
            }
            cursor = e.mtt_base as usize + e.npages() as usize;
        }
        (self.mtt.len() - cursor >= n).then_some(cursor)
    }

    fn compact_mtt(&mut self) {
        let mut cursor = 0usize;
        for i in self.by_mtt_base() {
            let base = self.entries[i].mtt_base as usize;
            let n = self.entries[i].npages() as usize;
            // Moving runs down in base order never overwrites a later run.
            self.mtt.copy_within(base..base + n, cursor);
            self.entries[i].mtt_base = cursor as u32;
            cursor += n;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PD: PdId = PdId(1);
    const RW: Access = Access(
        Access::LOCAL_WRITE.0
            | Access::REMOTE_READ.0
            | Access::REMOTE_WRITE.0
            | Access::REMOTE_ATOMIC.0,
    );

    fn setup(pages: u64, page_size: u64) -> (HostMemory, MrTable, u64) {
        let mut mem = HostMemory::new(42);
        let va = mem.alloc(pages * page_size, page_size);
        (
            mem,
            MrTable::new(DEFAULT_MAX_MRS, DEFAULT_MAX_MTT_ENTRIES),
            va,
        )
    }

    /// Concatenated physical bytes of the segments.
    fn gather(mem: &HostMemory, segs: &[DmaSegment]) -> Vec<u8> {
        let mut out = Vec::new();
        for s in segs {
            let mut b = vec![0u8; s.len as usize];
            mem.read_phys(s.phys, &mut b);
            out.extend(b);
        }
        out
    }

    #[test]
    fn keys_encode_index_and_variant_and_are_never_zero() {
        let (mem, mut t, va) = setup(4, 4096);
        let a = t.register(PD, va, 100, RW, &mem).unwrap();
        let b = t.register(PD, va, 100, RW, &mem).unwrap();
        assert_eq!(a.lkey, a.rkey);
        assert_eq!(a.lkey >> 8, 0);
        assert_eq!(b.lkey >> 8, 1);
        assert_ne!(a.lkey, 0);
        // Cycle index 0's variant through a full wrap: never key 0, and
        // every key differs from the one before.
        let mut key = a.lkey;
        for _ in 0..600 {
            let k = t.reregister(key).unwrap();
            assert_ne!(k.lkey, 0);
            assert_ne!(k.lkey, key);
            assert_eq!(k.lkey >> 8, 0);
            key = k.lkey;
        }
        assert!(t.translate_local(key, PD, va, 1, Access::NONE).is_ok());
    }

    #[test]
    fn every_error_path() {
        let (mem, mut t, va) = setup(4, 4096);
        let k = t
            .register(
                PD,
                va + 10,
                5000,
                Access::LOCAL_WRITE | Access::REMOTE_READ,
                &mem,
            )
            .unwrap()
            .rkey;
        let r = |t: &MrTable, key, pd, a: u64, l, need| t.translate_remote(key, pd, a, l, need);
        let read = Access::REMOTE_READ;
        assert!(r(&t, k, PD, va + 10, 5000, read).is_ok());
        // Wrong index: beyond the table, and an index never registered.
        assert_eq!(
            r(&t, 0xffff_ff01, PD, va + 10, 1, read),
            Err(MrError::InvalidKey)
        );
        assert_eq!(
            r(&t, k + 0x100, PD, va + 10, 1, read),
            Err(MrError::InvalidKey)
        );
        // Wrong variant.
        assert_eq!(
            r(&t, k ^ 0x80, PD, va + 10, 1, read),
            Err(MrError::StaleKey)
        );
        assert_eq!(
            r(&t, k, PdId(2), va + 10, 1, read),
            Err(MrError::PdMismatch)
        );
        assert_eq!(
            r(&t, k, PD, va + 10, 1, Access::REMOTE_WRITE),
            Err(MrError::AccessDenied)
        );
        assert_eq!(
            r(&t, k, PD, va + 10, 1, Access::REMOTE_ATOMIC),
            Err(MrError::AccessDenied)
        );
        // An R_Key with no remote right asked for is not a remote access.
        assert_eq!(
            r(&t, k, PD, va + 10, 1, Access::NONE),
            Err(MrError::AccessDenied)
        );
        // Bounds: one byte before, one byte past the end, and wrapping.
        assert_eq!(r(&t, k, PD, va + 9, 1, read), Err(MrError::OutOfBounds));
        assert_eq!(r(&t, k, PD, va + 10, 5001, read), Err(MrError::OutOfBounds));
        assert_eq!(r(&t, k, PD, va + 5010, 1, read), Err(MrError::OutOfBounds));
        assert!(r(&t, k, PD, va + 5009, 1, read).is_ok());
        assert_eq!(
            r(&t, k, PD, va + 20, u64::MAX, read),
            Err(MrError::OutOfBounds)
        );
        assert_eq!(r(&t, k, PD, u64::MAX, 2, read), Err(MrError::OutOfBounds));
        // Zero length with a good key: allowed anywhere, no segments.
        assert_eq!(r(&t, k, PD, 0, 0, read), Ok(vec![]));
        assert_eq!(r(&t, k ^ 1, PD, 0, 0, read), Err(MrError::StaleKey));
        // Stale after re-registration, new key works.
        let k2 = t.reregister(k).unwrap().rkey;
        assert_eq!(r(&t, k, PD, va + 10, 1, read), Err(MrError::StaleKey));
        assert!(r(&t, k2, PD, va + 10, 1, read).is_ok());
        assert_eq!(t.reregister(k), Err(VerbsError::NoSuchMr(k)));
        assert_eq!(t.deregister(k), Err(VerbsError::NoSuchMr(k)));
        // Invalidate: wrong PD refused, then every access refused.
        assert_eq!(t.invalidate(k2, PdId(9)), Err(MrError::PdMismatch));
        assert_eq!(t.invalidate(k, PD), Err(MrError::StaleKey));
        t.invalidate(k2, PD).unwrap();
        t.invalidate(k2, PD).unwrap();
        assert_eq!(r(&t, k2, PD, va + 10, 1, read), Err(MrError::Invalidated));
        assert_eq!(
            t.translate_local(k2, PD, va + 10, 1, Access::NONE),
            Err(MrError::Invalidated)
        );
        assert_eq!(r(&t, k2, PD, 0, 0, read), Err(MrError::Invalidated));
        let k3 = t.reregister(k2).unwrap().rkey;
        assert!(r(&t, k3, PD, va + 10, 1, read).is_ok());
        // Deregistered: the index is free, so the key is invalid.
        t.deregister(k3).unwrap();
        assert_eq!(r(&t, k3, PD, va + 10, 1, read), Err(MrError::InvalidKey));
        assert_eq!(t.invalidate(k3, PD), Err(MrError::InvalidKey));
        assert_eq!(t.deregister(k3), Err(VerbsError::NoSuchMr(k3)));
    }

    #[test]
    fn local_access_rules() {
        let (mem, mut t, va) = setup(1, 4096);
        let ro = t.register(PD, va, 4096, Access::NONE, &mem).unwrap().lkey;
        let rw = t
            .register(PD, va, 4096, Access::LOCAL_WRITE, &mem)
            .unwrap()
            .lkey;
        assert!(t.translate_local(ro, PD, va, 64, Access::NONE).is_ok());
        assert_eq!(
            t.translate_local(ro, PD, va, 64, Access::LOCAL_WRITE),
            Err(MrError::AccessDenied)
        );
        assert!(t
            .translate_local(rw, PD, va, 64, Access::LOCAL_WRITE)
            .is_ok());
        assert_eq!(
            t.translate_remote(rw, PD, va, 64, Access::REMOTE_READ),
            Err(MrError::AccessDenied)
        );
        assert_eq!(
            t.translate_local(rw, PdId(3), va, 64, Access::NONE),
            Err(MrError::PdMismatch)
        );
    }

    #[test]
    fn registration_checks_attributes() {
        let (mem, mut t, va) = setup(2, 4096);
        for bad in [Access::REMOTE_WRITE, Access::REMOTE_ATOMIC, Access(0x10)] {
            assert!(matches!(
                t.register(PD, va, 10, bad | Access::REMOTE_READ, &mem),
                Err(VerbsError::InvalidAttribute(_))
            ));
        }
        assert!(matches!(
            t.register(PD, va, 0, Access::NONE, &mem),
            Err(VerbsError::InvalidAttribute(_))
        ));
        // Past the allocation and wrapping the address space.
        assert!(matches!(
            t.register(PD, va, 8193, Access::NONE, &mem),
            Err(VerbsError::InvalidAttribute(_))
        ));
        assert!(matches!(
            t.register(PD, va, u64::MAX, Access::NONE, &mem),
            Err(VerbsError::InvalidAttribute(_))
        ));
        assert!(t.is_empty());
        assert_eq!(t.mtt_free(), DEFAULT_MAX_MTT_ENTRIES);
    }

    #[test]
    fn translations_cross_pages_and_reassemble_exactly() {
        for ps in [4096u64, 2 << 20] {
            let (mut mem, mut t, va) = setup(4, ps);
            // A region starting and ending mid-page, spanning four pages.
            let base = va + ps / 2 + 3;
            let len = 3 * ps - 7;
            let data: Vec<u8> = (0..len).map(|i| (i * 7 + i / 251) as u8).collect();
            mem.write_va(base, &data).unwrap();
            let k = t.register(PD, base, len, RW, &mem).unwrap();
            assert_eq!(t.mtt_free(), DEFAULT_MAX_MTT_ENTRIES - 4);
            let segs = t
                .translate_remote(k.rkey, PD, base, len, Access::REMOTE_READ)
                .unwrap();
            assert_eq!(segs.len(), 4);
            assert_eq!(segs[0].len as u64, ps - (ps / 2 + 3));
            for s in &segs {
                // Never crosses a page boundary.
                assert!(s.phys % ps + s.len as u64 <= ps);
            }
            assert_eq!(gather(&mem, &segs), data);
            // A sub-range across one boundary.
            let a = va + 2 * ps - 5;
            let segs = t
                .translate_local(k.lkey, PD, a, 300, Access::LOCAL_WRITE)
                .unwrap();
            assert_eq!(segs.len(), 2);
            assert_eq!(segs[0].phys, mem.va_to_pa(a).unwrap());
            let mut want = vec![0u8; 300];
            mem.read_va(a, &mut want).unwrap();
            assert_eq!(gather(&mem, &segs), want);
            // DMA writes through the segments show up at the VA.
            for (i, s) in segs.iter().enumerate() {
                mem.write_phys(s.phys, &vec![0xa0 + i as u8; s.len as usize]);
            }
            let mut got = vec![0u8; 300];
            mem.read_va(a, &mut got).unwrap();
            let split = segs[0].len as usize;
            assert!(got[..split].iter().all(|&b| b == 0xa0));
            assert!(got[split..].iter().all(|&b| b == 0xa1));
            assert_eq!(mem.stray_writes(), 0);
        }
    }

    #[test]
    fn deregistration_frees_mtt_entries_and_fragmentation_is_compacted() {
        let mut mem = HostMemory::new(1);
        let va = mem.alloc(10 * 4096, 4096);
        let mut t = MrTable::new(16, 10);
        let a = t.register(PD, va, 3 * 4096, Access::NONE, &mem).unwrap();
        let b = t.register(PD, va, 4 * 4096, Access::NONE, &mem).unwrap();
        let c = t.register(PD, va, 3 * 4096, Access::NONE, &mem).unwrap();
        assert_eq!(t.mtt_free(), 0);
        assert_eq!(
            t.register(PD, va, 1, Access::NONE, &mem),
            Err(VerbsError::NoResources)
        );
        // Free 3 + 3 entries at both ends: 6 free, but no 4-entry run.
        t.deregister(a.lkey).unwrap();
        t.deregister(c.lkey).unwrap();
        assert_eq!(t.mtt_free(), 6);
        assert_eq!(
            t.register(PD, va, 7 * 4096, Access::NONE, &mem),
            Err(VerbsError::NoResources)
        );
        let d = t
            .register(PD, va + 4096, 5 * 4096, Access::NONE, &mem)
            .unwrap();
        assert_eq!(t.mtt_free(), 1);
        // Both MRs still translate to the right pages after compaction.
        let (_, pages) = mem.pages(va, 10 * 4096).unwrap();
        for (key, first, n) in [(b.lkey, 0usize, 4usize), (d.lkey, 1, 5)] {
            let segs = t
                .translate_local(
                    key,
                    PD,
                    va + first as u64 * 4096,
                    n as u64 * 4096,
                    Access::NONE,
                )
                .unwrap();
            let got: Vec<u64> = segs.iter().map(|s| s.phys).collect();
            assert_eq!(got, pages[first..first + n]);
        }
        t.deregister(b.lkey).unwrap();
        t.deregister(d.lkey).unwrap();
        assert_eq!(t.mtt_free(), 10);
        assert!(t.is_empty());
    }

    #[test]
    fn table_capacity_and_index_reuse_with_fresh_variant() {
        let (mem, _, va) = setup(1, 4096);
        let mut t = MrTable::new(3, 100);
        let keys: Vec<u32> = (0..3)
            .map(|_| t.register(PD, va, 1, Access::NONE, &mem).unwrap().lkey)
            .collect();
        assert_eq!(
            t.register(PD, va, 1, Access::NONE, &mem),
            Err(VerbsError::NoResources)
        );
        assert_eq!(t.len(), 3);
        t.deregister(keys[1]).unwrap();
        let again = t.register(PD, va, 1, Access::NONE, &mem).unwrap().lkey;
        assert_eq!(again >> 8, 1);
        assert_ne!(again, keys[1]);
        assert_eq!(
            t.translate_local(keys[1], PD, va, 1, Access::NONE),
            Err(MrError::StaleKey)
        );
        assert!(t.translate_local(again, PD, va, 1, Access::NONE).is_ok());
    }

    #[test]
    fn uses_pd_tracks_live_registrations() {
        let (mem, mut t, va) = setup(1, 4096);
        assert!(!t.uses_pd(PD));
        let k = t.register(PD, va, 8, Access::NONE, &mem).unwrap();
        assert!(t.uses_pd(PD));
        assert!(!t.uses_pd(PdId(2)));
        t.invalidate(k.rkey, PD).unwrap();
        assert!(t.uses_pd(PD));
        t.deregister(k.lkey).unwrap();
        assert!(!t.uses_pd(PD));
    }

    #[test]
    fn entry_mirrors_rtl_fields() {
        let (mem, mut t, va) = setup(3, 4096);
        let k = t
            .register(PD, va + 100, 5000, Access::LOCAL_WRITE, &mem)
            .unwrap();
        let e = *t.entry(k.lkey).unwrap();
        assert_eq!(e.state, MrState::Valid);
        assert_eq!(e.variant, k.lkey as u8);
        assert_eq!((e.base_va, e.len, e.page_shift), (va + 100, 5000, 12));
        let (_, pages) = mem.pages(va + 100, 5000).unwrap();
        let base = e.mtt_base as usize;
        assert_eq!(&t.mtt()[base..base + 2], &pages[..]);
    }
}
