//! Property tests of MR protection and translation: every access inside a
//! region translates to physical segments holding exactly the bytes the CPU
//! sees at those addresses, and no access outside a region, or through a
//! key other than the current one, ever gets a translation.

use proptest::prelude::*;
use rocenic_model::memory::HostMemory;
use rocenic_model::mr::{DmaSegment, MrError, MrKeys, MrTable};
use rocenic_model::verbs::{Access, PdId};

const PD: PdId = PdId(7);
const PAGE_SIZES: [u64; 5] = [4 << 10, 8 << 10, 64 << 10, 1 << 20, 2 << 20];

/// One registered region filled with a position-dependent pattern.
struct Fixture {
    mem: HostMemory,
    table: MrTable,
    keys: MrKeys,
    base: u64,
    len: u64,
    page_size: u64,
}

/// A region of `len` bytes starting `back` bytes before the end of page
/// `first_page` of a fresh allocation, so it straddles page boundaries.
fn fixture(seed: u64, page_size: u64, first_page: u64, back: u64, len: u64) -> Fixture {
    let mut mem = HostMemory::new(seed);
    let pages = first_page + 1 + len.div_ceil(page_size) + 1;
    let va = mem.alloc(pages * page_size, page_size);
    let base = va + (first_page + 1) * page_size - back.clamp(1, page_size);
    let data: Vec<u8> = (0..len)
        .map(|i| (i ^ (i >> 8) ^ (i >> 16) ^ seed) as u8)
        .collect();
    mem.write_va(base, &data).unwrap();
    let mut table = MrTable::new(64, 4096);
    let keys = table
        .register(PD, base, len, Access::ALL, &mem)
        .expect("register");
    Fixture {
        mem,
        table,
        keys,
        base,
        len,
        page_size,
    }
}

fn gather(mem: &HostMemory, segs: &[DmaSegment]) -> Vec<u8> {
    let mut out = Vec::new();
    for s in segs {
        let mut b = vec![0u8; s.len as usize];
        mem.read_phys(s.phys, &mut b);
        out.extend(b);
    }
    out
}

fn region() -> impl Strategy<Value = (u64, u64, u64, u64, u64)> {
    (
        any::<u64>(),
        prop::sample::select(PAGE_SIZES.to_vec()),
        0u64..3,
        1u64..1 << 21,
        1u64..300_000,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn inside_translates_to_the_va_bytes(
        (seed, ps, first, back, len) in region(),
        a in any::<u64>(),
        b in any::<u64>(),
        remote in any::<bool>(),
    ) {
        let f = fixture(seed, ps, first, back, len);
        let off = a % f.len;
        let n = b % (f.len - off + 1);
        let va = f.base + off;
        let segs = if remote {
            f.table.translate_remote(f.keys.rkey, PD, va, n, Access::REMOTE_WRITE)
        } else {
            f.table.translate_local(f.keys.lkey, PD, va, n, Access::LOCAL_WRITE)
        }
        .unwrap();
        prop_assert_eq!(segs.iter().map(|s| s.len as u64).sum::<u64>(), n);
        let mut cur = va;
        for s in &segs {
            // Each segment is one page piece, starting where the CPU's page
            // table puts that VA.
            prop_assert!(s.len > 0);
            prop_assert!(s.phys % f.page_size + s.len as u64 <= f.page_size);
            prop_assert_eq!(s.phys, f.mem.va_to_pa(cur).unwrap());
            cur += s.len as u64;
        }
        let mut want = vec![0u8; n as usize];
        f.mem.read_va(va, &mut want).unwrap();
        prop_assert_eq!(gather(&f.mem, &segs), want);
    }

    #[test]
    fn dma_writes_through_segments_land_at_the_va(
        (seed, ps, first, back, len) in region(),
        a in any::<u64>(),
        b in any::<u64>(),
    ) {
        let mut f = fixture(seed, ps, first, back, len);
        let off = a % f.len;
        let n = b % (f.len - off + 1);
        let va = f.base + off;
        let segs = f
            .table
            .translate_remote(f.keys.rkey, PD, va, n, Access::REMOTE_WRITE)
            .unwrap();
        let data: Vec<u8> = (0..n).map(|i| (i * 31 + 5) as u8).collect();
        let mut done = 0usize;
        for s in &segs {
            f.mem.write_phys(s.phys, &data[done..done + s.len as usize]);
            done += s.len as usize;
        }
        prop_assert_eq!(f.mem.stray_writes(), 0);
        let mut got = vec![0u8; n as usize];
        f.mem.read_va(va, &mut got).unwrap();
        prop_assert_eq!(got, data);
        // The bytes just outside the access are untouched.
        let mut edge = [0u8; 1];
        if off > 0 {
            f.mem.read_va(va - 1, &mut edge).unwrap();
            prop_assert_eq!(edge[0], ((off - 1) ^ ((off - 1) >> 8) ^ ((off - 1) >> 16) ^ seed) as u8);
        }
    }

    #[test]
    fn outside_never_translates(
        (seed, ps, first, back, len) in region(),
        probe in 0u8..3,
        raw_va in any::<u64>(),
        edge_delta in prop_oneof![-3i64..=3, -70_000i64..70_000],
        small_n in 1u64..600,
        raw_n in any::<u64>(),
    ) {
        let f = fixture(seed, ps, first, back, len);
        // Probe anywhere, around the start, or around the end of the region,
        // where off-by-one bugs live.
        let (va, n) = match probe {
            0 => (raw_va, raw_n | 1),
            1 => (f.base.wrapping_add_signed(edge_delta), small_n),
            // The access ends edge_delta bytes from the region's end.
            _ => (
                (f.base + f.len).wrapping_add_signed(edge_delta).wrapping_sub(small_n),
                small_n,
            ),
        };
        let inside = va >= f.base
            && va.checked_add(n).is_some_and(|end| end <= f.base + f.len);
        prop_assume!(!inside);
        prop_assert_eq!(
            f.table.translate_remote(f.keys.rkey, PD, va, n, Access::REMOTE_READ),
            Err(MrError::OutOfBounds)
        );
        prop_assert_eq!(
            f.table.translate_local(f.keys.lkey, PD, va, n, Access::NONE),
            Err(MrError::OutOfBounds)
        );
    }

    #[test]
    fn only_the_current_key_translates(
        (seed, ps, first, back, len) in region(),
        key in any::<u32>(),
        rereg in 0usize..4,
    ) {
        let mut f = fixture(seed, ps, first, back, len);
        let mut old = vec![f.keys.rkey];
        for _ in 0..rereg {
            f.keys = f.table.reregister(f.keys.lkey).unwrap();
            old.push(f.keys.rkey);
        }
        let key = if key % 4 == 0 { old[key as usize / 4 % old.len()] } else { key };
        let r = f.table.translate_remote(key, PD, f.base, 1, Access::REMOTE_READ);
        if key == f.keys.rkey {
            prop_assert!(r.is_ok());
        } else {
            prop_assert!(matches!(r, Err(MrError::InvalidKey | MrError::StaleKey)));
        }
        // Whatever the key, a wrong PD never gets through either.
        prop_assert!(f.table.translate_remote(key, PdId(8), f.base, 1, Access::REMOTE_READ).is_err());
    }
}

/// `Nic::invalidate_mr`: the MR's keys fail as invalidated (remote and
/// local), re-registration revives it under a new key, and a key that
/// names no registration is refused.
#[test]
fn local_invalidation_stops_the_keys_until_re_registration() {
    use rocenic_model::nic::{Nic, NicConfig};
    use rocenic_model::verbs::VerbsError;
    let mut nic = Nic::new(NicConfig::new([2, 0, 0, 0, 0, 1], [10, 0, 0, 1].into()));
    let pd = nic.alloc_pd();
    let va = nic.memory_mut().alloc(8192, 4096);
    let keys = nic.reg_mr(pd, va, 8192, Access::ALL).unwrap();
    let remote = |nic: &Nic, key| {
        nic.mr_table()
            .translate_remote(key, pd, va, 64, Access::REMOTE_WRITE)
            .map(|_| ())
    };
    assert_eq!(remote(&nic, keys.rkey), Ok(()));
    nic.invalidate_mr(keys.rkey).unwrap();
    assert_eq!(remote(&nic, keys.rkey), Err(MrError::Invalidated));
    assert_eq!(
        nic.mr_table()
            .translate_local(keys.lkey, pd, va, 64, Access::LOCAL_WRITE)
            .map(|_| ()),
        Err(MrError::Invalidated)
    );
    let fresh = nic.rereg_mr(keys.lkey).unwrap();
    assert_eq!(remote(&nic, fresh.rkey), Ok(()));
    assert_eq!(remote(&nic, keys.rkey), Err(MrError::StaleKey));
    let nowhere = keys.rkey + (0x10 << 8);
    assert_eq!(
        nic.invalidate_mr(nowhere),
        Err(VerbsError::NoSuchMr(nowhere))
    );
}
