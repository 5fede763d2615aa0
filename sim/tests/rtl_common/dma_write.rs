//! The DMA write port check shared by the lockstep tests of the blocks
//! that write (`dma_write_mover`, `response_placement`,
//! `responder_datapath`): every beat that moves is checked for the port's
//! framing ([`DmaWritePorts::observe`]: `keep` contiguous and not empty,
//! `addr` 64-byte aligned, `first` / `last` framing one request of
//! 1..=4096 bytes whose `req_addr` / `req_len` hold on every beat, bytes in
//! address order, the request delivered exactly) and written to the host
//! memory; each finished request is returned whole, so a test compares it
//! with the model's write ([`expect_write`]).

use rocenic_rtl::dma_ports::DmaWritePorts;
use rocenic_rtl::host_dma::HostDma;
use verilator_sys::{Block, Sim};

/// One beat that moved on the port.
pub struct MovedBeat {
    /// Bytes the beat carried.
    pub bytes: u64,
    /// The request this beat ended: its host address and bytes.
    pub request: Option<(u64, Vec<u8>)>,
}

/// The check of one DMA write port (`<prefix>_valid` ..).
pub struct DmaWriteCheck<B: Block> {
    ports: DmaWritePorts<B>,
    /// The request in progress: host address and bytes so far.
    open: Option<(u64, Vec<u8>)>,
    seed: u64,
}

impl<B: Block> DmaWriteCheck<B> {
    /// The port named `prefix`; `seed` is printed with every failure.
    pub fn named(prefix: &str, seed: u64) -> Self {
        DmaWriteCheck {
            ports: DmaWritePorts::named(prefix).expect("DMA write ports"),
            open: None,
            seed,
        }
    }

    /// Before eval: ready for this cycle if `allow` and the host has room;
    /// returns it.
    pub fn drive(&self, sim: &mut Sim<B>, host: &HostDma, allow: bool) -> bool {
        self.ports.drive(sim, host, allow)
    }

    /// After eval, with the ready [`DmaWriteCheck::drive`] gave: the beat
    /// that moved, checked and written to `host`.
    pub fn observe(&mut self, sim: &Sim<B>, host: &mut HostDma, ready: bool) -> Option<MovedBeat> {
        let seed = self.seed;
        let (addr, bytes) = self
            .ports
            .observe(sim, host, ready)
            .unwrap_or_else(|e| panic!("seed {seed}: {e}"))?;
        let n = bytes.len() as u64;
        let (start, mut seen) = self.open.take().unwrap_or((addr, Vec::new()));
        seen.extend_from_slice(&bytes);
        let request = if self.ports.idle() {
            Some((start, seen))
        } else {
            self.open = Some((start, seen));
            None
        };
        Some(MovedBeat { bytes: n, request })
    }

    /// No request is open (between bursts).
    pub fn idle(&self) -> bool {
        self.open.is_none() && self.ports.idle()
    }
}

/// A finished request equals the model's next write (host address and
/// bytes).
pub fn expect_write(got: &(u64, Vec<u8>), want: Option<(u64, Vec<u8>)>, seed: u64) {
    let (start, bytes) = got;
    let want = want
        .unwrap_or_else(|| panic!("seed {seed}: a DMA write at {start:#x} the model did not make"));
    assert_eq!(*start, want.0, "seed {seed}: write address");
    assert!(
        *bytes == want.1,
        "seed {seed}: bytes of the write at {start:#x} ({} bytes, model {})",
        bytes.len(),
        want.1.len()
    );
}
