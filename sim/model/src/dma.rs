//! DMA through memory-region translation. Every byte the transport moves
//! between host memory and the wire goes through `MrTable::translate_*`
//! and then physical reads and writes, as the RTL's MR-translate and DMA
//! blocks do: nothing outside a registered MR is ever touched, and a
//! failed check happens before any byte is written.

use crate::memory::HostMemory;
use crate::mr::{segment_spans, DmaSegment, MrTable};
use crate::verbs::{Access, PdId, Sge};

/// Why a local scatter/gather access failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LocalError {
    /// The SGL is shorter than the bytes asked for.
    Length,
    /// A key, PD, access right or bound check failed.
    Protection,
}

/// Total bytes an SGL describes.
pub(crate) fn sgl_len(sgl: &[Sge]) -> u64 {
    sgl.iter().map(|s| u64::from(s.length)).sum()
}

/// Translates bytes `[offset, offset + len)` of an SGL into physical
/// segments, checking every SGE touched against its L_Key.
pub(crate) fn sgl_segments(
    mrs: &MrTable,
    pd: PdId,
    sgl: &[Sge],
    offset: u64,
    len: u64,
    need: Access,
) -> Result<Vec<DmaSegment>, LocalError> {
    let mut out = Vec::new();
    let mut skip = offset;
    let mut left = len;
    for sge in sgl {
        if left == 0 {
            break;
        }
        let sl = u64::from(sge.length);
        if skip >= sl {
            skip -= sl;
            continue;
        }
        let take = (sl - skip).min(left);
        let va = sge.addr.checked_add(skip).ok_or(LocalError::Protection)?;
        let segs = mrs
            .translate_local(sge.lkey, pd, va, take, need)
            .map_err(|_| LocalError::Protection)?;
        out.extend(segs);
        skip = 0;
        left -= take;
    }
    if left > 0 {
        return Err(LocalError::Length);
    }
    Ok(out)
}

pub(crate) fn read_segments(mem: &HostMemory, segs: &[DmaSegment]) -> Vec<u8> {
    let total: usize = segs.iter().map(|s| s.len as usize).sum();
    let mut out = vec![0; total];
    let mut at = 0;
    for s in segs {
        let n = s.len as usize;
        mem.read_phys(s.phys, &mut out[at..at + n]);
        at += n;
    }
    out
}

/// Writes `data` across `segs`, which must describe exactly `data.len()`
/// bytes (the caller translated that length).
pub(crate) fn write_segments(mem: &mut HostMemory, segs: &[DmaSegment], data: &[u8]) {
    for (phys, range) in segment_spans(segs, data.len()) {
        mem.write_phys(phys, &data[range]);
    }
}
