//! A Verilated block's DMA ports served by a [`HostDma`], found by name so
//! every block with the core's DMA port shapes (`payload_fetch`'s tagged
//! reads, `responder_datapath`'s posted writes) is driven by the same code.
//!
//! Each cycle: [`drive`](DmaReadPorts::drive) the inputs from the host's
//! state, evaluate, [`observe`](DmaReadPorts::observe) what moved (which
//! reaches the host at once), then clock the block and the host
//! ([`HostDma::clock`] with what the read side returned).

use super::host_dma::{HostDma, BEAT_BYTES};
use super::stream::{bytes_to_words, words_to_bytes, BEAT_WORDS};
use super::RtlError;
use verilator_sys::{Block, Input, Output, Sim, SimError};

/// Tagged read requests and read data: `<prefix>_req_valid/ready/tag/addr/len`,
/// `<prefix>_rd_valid/ready/tag/data/last`.
pub struct DmaReadPorts<B: Block> {
    req_valid: Output<B>,
    req_ready: Input<B>,
    req_tag: Output<B>,
    req_addr: Output<B>,
    req_len: Output<B>,
    rd_valid: Input<B>,
    rd_ready: Output<B>,
    rd_tag: Input<B>,
    rd_data: Input<B>,
    rd_last: Input<B>,
}

impl<B: Block> DmaReadPorts<B> {
    pub fn named(prefix: &str) -> Result<Self, SimError> {
        let i = |f: &str| B::input(&format!("{prefix}_{f}"));
        let o = |f: &str| B::output(&format!("{prefix}_{f}"));
        Ok(DmaReadPorts {
            req_valid: o("req_valid")?,
            req_ready: i("req_ready")?,
            req_tag: o("req_tag")?,
            req_addr: o("req_addr")?,
            req_len: o("req_len")?,
            rd_valid: i("rd_valid")?,
            rd_ready: o("rd_ready")?,
            rd_tag: i("rd_tag")?,
            rd_data: i("rd_data")?,
            rd_last: i("rd_last")?,
        })
    }

    /// The host's side for this cycle: request ready, the offered beat.
    pub fn drive(&self, sim: &mut Sim<B>, host: &HostDma) {
        sim.set_bit(self.req_ready, host.read_request_ready());
        match host.offered() {
            Some(b) => {
                sim.set_bit(self.rd_valid, true);
                sim.set_u64(self.rd_tag, b.tag.into());
                sim.set(self.rd_data, &bytes_to_words(&b.data));
                sim.set_bit(self.rd_last, b.last);
            }
            None => {
                sim.set_bit(self.rd_valid, false);
                sim.set_bit(self.rd_last, false);
            }
        }
    }

    /// After eval: hands an accepted request to the host; returns whether
    /// the offered beat was taken (for [`HostDma::clock`]).
    pub fn observe(&self, sim: &Sim<B>, host: &mut HostDma) -> Result<bool, RtlError> {
        if host.read_request_ready() && sim.get_bit(self.req_valid) {
            let tag = sim.get_u64(self.req_tag) as u16;
            let addr = sim.get_u64(self.req_addr);
            let len = sim.get_u64(self.req_len);
            host.read_request(tag, addr, len).map_err(|e| {
                RtlError::Mismatch(format!(
                    "DMA read request tag {tag} addr {addr:#x} len {len}: {e}"
                ))
            })?;
        }
        Ok(host.offered().is_some() && sim.get_bit(self.rd_ready))
    }
}

/// Posted write bursts: `<prefix>_valid/ready/addr/data/keep/first/last`
/// and the request's `<prefix>_req_addr/req_len` on every beat (AXI's AW
/// folded into W). Each beat is checked against the port's rules (data
/// aligned to host addresses, contiguous keep, bytes in address order,
/// the request delivered exactly) and lands in host memory.
pub struct DmaWritePorts<B: Block> {
    valid: Output<B>,
    ready: Input<B>,
    addr: Output<B>,
    data: Output<B>,
    keep: Output<B>,
    first: Output<B>,
    last: Output<B>,
    req_addr: Output<B>,
    req_len: Output<B>,
    /// The request in progress: start, length, bytes delivered.
    open: Option<(u64, u64, u64)>,
    beats: u64,
    bytes: u64,
}

impl<B: Block> DmaWritePorts<B> {
    pub fn named(prefix: &str) -> Result<Self, SimError> {
        let o = |f: &str| B::output(&format!("{prefix}_{f}"));
        Ok(DmaWritePorts {
            valid: o("valid")?,
            ready: B::input(&format!("{prefix}_ready"))?,
            addr: o("addr")?,
            data: o("data")?,
            keep: o("keep")?,
            first: o("first")?,
            last: o("last")?,
            req_addr: o("req_addr")?,
            req_len: o("req_len")?,
            open: None,
            beats: 0,
            bytes: 0,
        })
    }

    /// Sets ready for this cycle (the host's bandwidth permitting).
    pub fn drive(&self, sim: &mut Sim<B>, host: &HostDma, allow: bool) -> bool {
        let ready = allow && host.write_ready();
        sim.set_bit(self.ready, ready);
        ready
    }

    /// After eval: the beat that moved, if any, checked and written;
    /// returns its host address and bytes.
    pub fn observe(
        &mut self,
        sim: &Sim<B>,
        host: &mut HostDma,
        ready: bool,
    ) -> Result<Option<(u64, Vec<u8>)>, RtlError> {
        if !(ready && sim.get_bit(self.valid)) {
            return Ok(None);
        }
        let bad = |what: String| RtlError::Mismatch(format!("DMA write port: {what}"));
        let mut words = [0u64; BEAT_WORDS];
        sim.get_into(self.data, &mut words);
        let lanes = words_to_bytes(&words);
        let keep = sim.get_u64(self.keep);
        let addr = sim.get_u64(self.addr);
        let (req_addr, req_len) = (sim.get_u64(self.req_addr), sim.get_u64(self.req_len));
        if keep == 0 || !addr.is_multiple_of(BEAT_BYTES as u64) {
            return Err(bad(format!("beat at {addr:#x} keep {keep:#x}")));
        }
        let lo = u64::from(keep.trailing_zeros());
        let hi = 64 - u64::from(keep.leading_zeros());
        let run = if hi - lo == 64 {
            u64::MAX
        } else {
            ((1u64 << (hi - lo)) - 1) << lo
        };
        if keep != run {
            return Err(bad(format!("keep {keep:#x} not contiguous")));
        }
        if sim.get_bit(self.first) {
            if self.open.is_some() {
                return Err(bad("first beat inside a request".into()));
            }
            if !(1..=4096).contains(&req_len) {
                return Err(bad(format!("request length {req_len}")));
            }
            self.open = Some((req_addr, req_len, 0));
        }
        let Some((start, len, seen)) = self.open else {
            return Err(bad("beat outside a request".into()));
        };
        if (req_addr, req_len) != (start, len) || addr + lo != start + seen {
            return Err(bad(format!(
                "beat at {:#x} in request {start:#x}+{len} after {seen} bytes",
                addr + lo
            )));
        }
        let seen = seen + hi - lo;
        if seen > len {
            return Err(bad(format!("request {start:#x}+{len} overrun")));
        }
        self.open = Some((start, len, seen));
        if sim.get_bit(self.last) {
            if seen != len {
                return Err(bad(format!(
                    "request {start:#x} ends after {seen} of {len}"
                )));
            }
            self.open = None;
        }
        let bytes = lanes[lo as usize..hi as usize].to_vec();
        host.write(addr + lo, &bytes)
            .map_err(|e| bad(format!("host refused: {e}")))?;
        self.beats += 1;
        self.bytes += hi - lo;
        Ok(Some((addr + lo, bytes)))
    }

    /// No request is open (between bursts).
    pub fn idle(&self) -> bool {
        self.open.is_none()
    }

    pub fn beats(&self) -> u64 {
        self.beats
    }

    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}
