//! Fabric configuration (links, faults, switch buffer, ECN congestion point)
//! and the one place that defines Ethernet wire occupancy.

use crate::Time;
use serde::Serialize;

/// Ethernet preamble and start-of-frame delimiter.
pub const PREAMBLE_SFD_BYTES: u64 = 8;
/// Frame check sequence (the frames the fabric carries exclude it).
pub const FCS_BYTES: u64 = 4;
/// Minimum inter-frame gap.
pub const IFG_BYTES: u64 = 12;
/// Minimum Ethernet frame, FCS included; shorter frames are padded.
pub const MIN_FRAME_BYTES: u64 = 64;

/// Bytes a frame occupies on an Ethernet link, the single definition of
/// framing overhead in the fabric:
///
/// `wire_bytes(len) = max(len + FCS 4, 64) + preamble/SFD 8 + IFG 12`
///
/// where `len` is the frame as the endpoints see it (destination MAC through
/// the end of the payload, FCS excluded). A 64-byte minimum frame therefore
/// occupies 84 bytes (6.72 ns at 100 Gb/s) and a 1500-byte frame 1524.
pub fn wire_bytes(frame_len: usize) -> u64 {
    (frame_len as u64 + FCS_BYTES).max(MIN_FRAME_BYTES) + PREAMBLE_SFD_BYTES + IFG_BYTES
}

/// Serialisation time of a frame in picoseconds at `rate_bps`.
///
/// Picoseconds keep back-to-back frames exact: 84 bytes at 100 Gb/s is
/// 6720 ps, and rounding that to whole nanoseconds per frame would skew
/// throughput by 4%.
pub fn serialisation_ps(frame_len: usize, rate_bps: f64) -> u64 {
    let bits = (wire_bytes(frame_len) * 8) as f64;
    ((bits * 1e12 / rate_bps).round() as u64).max(1)
}

/// Per-frame fault probabilities on one link, applied independently in each
/// direction of that link.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FaultConfig {
    /// The frame vanishes.
    pub loss: f64,
    /// A second identical copy arrives right after the frame.
    pub duplicate: f64,
    /// The frame is held back `reorder_delay_ns` so later frames overtake it.
    pub reorder: f64,
    pub reorder_delay_ns: Time,
    /// One bit flips in a field the receiver's checks cover (see
    /// [`crate::faults`]); the frame is still delivered.
    pub corrupt: f64,
}

impl FaultConfig {
    /// A perfect link.
    pub const NONE: FaultConfig = FaultConfig {
        loss: 0.0,
        duplicate: 0.0,
        reorder: 0.0,
        reorder_delay_ns: 0,
        corrupt: 0.0,
    };

    /// Loss, duplication and reordering each with probability `p`, reordered
    /// frames held back `reorder_delay_ns`; no corruption. The lossy link of
    /// most tests.
    pub fn lossy(p: f64, reorder_delay_ns: Time) -> FaultConfig {
        FaultConfig {
            loss: p,
            duplicate: p,
            reorder: p,
            reorder_delay_ns,
            corrupt: 0.0,
        }
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        for (name, p) in [
            ("loss", self.loss),
            ("duplicate", self.duplicate),
            ("reorder", self.reorder),
            ("corrupt", self.corrupt),
        ] {
            if !(0.0..=1.0).contains(&p) {
                return Err(ConfigError::Probability { name, value: p });
            }
        }
        Ok(())
    }
}

impl Default for FaultConfig {
    fn default() -> Self {
        FaultConfig::NONE
    }
}

/// A node's full-duplex link to the switch. The rate applies to both the
/// node's transmitter and the switch port that sends towards the node.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LinkConfig {
    pub rate_bps: f64,
    /// One-way propagation delay.
    pub latency_ns: Time,
    pub faults: FaultConfig,
}

impl Default for LinkConfig {
    fn default() -> Self {
        LinkConfig {
            rate_bps: 100e9,
            latency_ns: 500,
            faults: FaultConfig::NONE,
        }
    }
}

impl LinkConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        if !(self.rate_bps.is_finite() && self.rate_bps >= 1.0) {
            return Err(ConfigError::Rate(self.rate_bps));
        }
        self.faults.validate()
    }
}

/// The DCQCN congestion point (Zhu et al., SIGCOMM 2015): RED-like CE
/// marking on a switch egress queue of `q` bytes: `q <= kmin` never,
/// `kmin < q <= kmax` with probability `pmax * (q - kmin) / (kmax - kmin)`,
/// `q > kmax` always.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EcnConfig {
    pub kmin_bytes: u64,
    pub kmax_bytes: u64,
    pub pmax: f64,
    /// Mark a frame as it leaves the queue, on the bytes still queued
    /// behind it, so the mark does not wait out the queueing delay; false:
    /// as it arrives, on the bytes ahead of it.
    pub on_dequeue: bool,
}

impl Default for EcnConfig {
    /// The commonly cited DCQCN values: Kmin 5 KB, Kmax 200 KB, Pmax 1%.
    fn default() -> Self {
        EcnConfig {
            kmin_bytes: 5_000,
            kmax_bytes: 200_000,
            pmax: 0.01,
            on_dequeue: false,
        }
    }
}

impl EcnConfig {
    /// The marking probability for a frame that finds `queue_bytes` ahead of
    /// it in its egress queue.
    pub fn mark_probability(&self, queue_bytes: u64) -> f64 {
        if queue_bytes <= self.kmin_bytes {
            0.0
        } else if queue_bytes > self.kmax_bytes {
            1.0
        } else {
            // kmin < q <= kmax implies kmax > kmin: no division by zero.
            self.pmax * (queue_bytes - self.kmin_bytes) as f64
                / (self.kmax_bytes - self.kmin_bytes) as f64
        }
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.kmin_bytes > self.kmax_bytes {
            return Err(ConfigError::EcnThresholds {
                kmin: self.kmin_bytes,
                kmax: self.kmax_bytes,
            });
        }
        if !(0.0..=1.0).contains(&self.pmax) {
            return Err(ConfigError::Probability {
                name: "pmax",
                value: self.pmax,
            });
        }
        Ok(())
    }
}

/// Priority flow control (IEEE 802.1Qbb) at the switch, with static
/// per-ingress thresholds.
///
/// A frame's priority is its IP DSCP / 8 (the usual "trust DSCP" map:
/// RoCEv2's DSCP 26 is priority 3); a frame without an IP header is
/// priority 0. For each ingress port and lossless priority the switch
/// counts the bytes of that port's frames it holds. When they reach
/// `xoff_bytes` it sends the port's node a PFC frame pausing the priority
/// for `pause_quanta`, and sends it again each time half of that has
/// passed while the count stays above `xon_bytes`; when the count falls to
/// `xon_bytes` it sends an XON (time 0). What the node had already sent
/// when the XOFF reached it lands in the headroom above `xoff_bytes`; a
/// lossless frame that finds the port's count beyond `xoff_bytes +
/// headroom_bytes` is dropped (`headroom_full`), which only a headroom
/// smaller than the link's round trip allows. The headroom a port needs:
/// two link latencies at its rate, plus a maximum frame the node is
/// sending when the XOFF arrives, plus one the switch is sending ahead of
/// the XOFF (PFC frames jump the egress queue but not the frame on the
/// wire): 12,500 + 2 x 4,200 bytes at 100 Gb/s with 500 ns links.
///
/// With PFC on, each egress port keeps one queue per priority, served in
/// strict priority (7 first), and honours PFC frames from its node: a
/// paused priority's queue waits while the others flow.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PfcConfig {
    /// Lossless priorities (bit `i`: priority `i`).
    pub priorities: u8,
    pub xoff_bytes: u64,
    pub xon_bytes: u64,
    pub headroom_bytes: u64,
    /// The pause time XOFF frames carry, in quanta of 512 bit times at the
    /// port's rate (65,535 at 100 Gb/s: 335 us).
    pub pause_quanta: u16,
}

impl Default for PfcConfig {
    /// Priority 3 lossless; XOFF at 256 KiB, above the default ECN Kmax of
    /// 200 KB so that marking acts first; XON 32 KiB lower; 32 KiB of
    /// headroom; the longest pause, refreshed.
    fn default() -> Self {
        PfcConfig {
            priorities: 1 << 3,
            xoff_bytes: 256 << 10,
            xon_bytes: 224 << 10,
            headroom_bytes: 32 << 10,
            pause_quanta: 0xFFFF,
        }
    }
}

impl PfcConfig {
    /// The priority the switch gives a frame: its DSCP / 8, or 0 for a
    /// frame that is not IP.
    pub fn priority_of(frame: &[u8]) -> u8 {
        rocenic_wire::frame_dscp(frame).map_or(0, |dscp| dscp >> 3)
    }

    pub fn is_lossless(&self, priority: u8) -> bool {
        self.priorities & (1 << priority) != 0
    }

    /// The time `quanta` pause quanta last at `rate_bps`, in picoseconds.
    pub fn quanta_ps(quanta: u16, rate_bps: f64) -> u64 {
        let bits = (u64::from(quanta) * rocenic_wire::pfc::QUANTUM_BITS) as f64;
        (bits * 1e12 / rate_bps).round() as u64
    }

    pub fn validate(&self, ecn: Option<&EcnConfig>) -> Result<(), ConfigError> {
        if self.xon_bytes > self.xoff_bytes {
            return Err(ConfigError::PfcThresholds {
                xon: self.xon_bytes,
                xoff: self.xoff_bytes,
            });
        }
        if self.pause_quanta < 2 {
            return Err(ConfigError::PauseQuanta(self.pause_quanta));
        }
        match ecn {
            Some(e) if e.kmax_bytes >= self.xoff_bytes => Err(ConfigError::EcnAbovePfc {
                kmax: e.kmax_bytes,
                xoff: self.xoff_bytes,
            }),
            _ => Ok(()),
        }
    }
}

/// The single output-queued switch every node hangs off.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SwitchConfig {
    /// Shared by all egress queues; a frame that does not fit is tail-dropped.
    pub buffer_bytes: u64,
    /// Congestion point marking; `None` never marks.
    pub ecn: Option<EcnConfig>,
    /// Priority flow control; `None`: every priority is lossy, PFC frames
    /// from nodes are dropped (`unknown_destination`) and each egress port
    /// is one FIFO.
    pub pfc: Option<PfcConfig>,
    /// Forwarding pipeline delay added after a frame is fully received
    /// (store and forward) and before it joins its egress queue.
    pub latency_ns: Time,
}

impl Default for SwitchConfig {
    /// A 16 MiB shared buffer (a common data-centre ToR size), DCQCN marking
    /// with the commonly cited thresholds, no PFC, no extra pipeline delay.
    fn default() -> Self {
        SwitchConfig {
            buffer_bytes: 16 << 20,
            ecn: Some(EcnConfig::default()),
            pfc: None,
            latency_ns: 0,
        }
    }
}

impl SwitchConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.ecn.as_ref().map_or(Ok(()), EcnConfig::validate)?;
        self.pfc
            .as_ref()
            .map_or(Ok(()), |p| p.validate(self.ecn.as_ref()))
    }
}

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ConfigError {
    #[error("link rate {0} b/s is not a finite rate of at least 1 b/s")]
    Rate(f64),
    #[error("probability {name} = {value} is outside [0, 1]")]
    Probability { name: &'static str, value: f64 },
    #[error("ECN Kmin {kmin} exceeds Kmax {kmax}")]
    EcnThresholds { kmin: u64, kmax: u64 },
    #[error("PFC XON {xon} exceeds XOFF {xoff}")]
    PfcThresholds { xon: u64, xoff: u64 },
    #[error("PFC pause of {0} quanta is too short to refresh (at least 2)")]
    PauseQuanta(u16),
    #[error("ECN Kmax {kmax} is not below PFC XOFF {xoff}: pauses would come before marks")]
    EcnAbovePfc { kmax: u64, xoff: u64 },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_bytes_pads_and_adds_overhead() {
        assert_eq!(wire_bytes(0), 84);
        assert_eq!(wire_bytes(60), 84);
        assert_eq!(wire_bytes(61), 85);
        assert_eq!(wire_bytes(1500), 1524);
        assert_eq!(wire_bytes(976), 1000);
    }

    #[test]
    fn serialisation_is_exact_in_picoseconds() {
        assert_eq!(serialisation_ps(60, 100e9), 6_720);
        assert_eq!(serialisation_ps(976, 100e9), 80_000);
        assert_eq!(serialisation_ps(976, 25e9), 320_000);
        assert_eq!(serialisation_ps(1500, 10e9), 1_219_200);
    }

    #[test]
    fn mark_probability_follows_the_cp_rule() {
        let e = EcnConfig {
            kmin_bytes: 1000,
            kmax_bytes: 3000,
            pmax: 0.5,
            on_dequeue: false,
        };
        assert_eq!(e.mark_probability(0), 0.0);
        assert_eq!(e.mark_probability(1000), 0.0);
        assert_eq!(e.mark_probability(2000), 0.25);
        assert_eq!(e.mark_probability(3000), 0.5);
        assert_eq!(e.mark_probability(3001), 1.0);
        let step = EcnConfig {
            kmin_bytes: 10,
            kmax_bytes: 10,
            pmax: 0.1,
            on_dequeue: false,
        };
        assert_eq!(step.mark_probability(10), 0.0);
        assert_eq!(step.mark_probability(11), 1.0);
    }

    #[test]
    fn validation_rejects_nonsense() {
        let mut l = LinkConfig::default();
        assert!(l.validate().is_ok());
        l.rate_bps = f64::NAN;
        assert!(matches!(l.validate(), Err(ConfigError::Rate(r)) if r.is_nan()));
        l.rate_bps = 0.0;
        assert!(l.validate().is_err());
        l.rate_bps = 1e9;
        l.faults.loss = 1.5;
        assert!(matches!(
            l.validate(),
            Err(ConfigError::Probability { name: "loss", .. })
        ));
        let e = EcnConfig {
            kmin_bytes: 2,
            kmax_bytes: 1,
            pmax: 0.1,
            on_dequeue: false,
        };
        assert!(matches!(
            e.validate(),
            Err(ConfigError::EcnThresholds { .. })
        ));
        let mut switch = SwitchConfig {
            pfc: Some(PfcConfig::default()),
            ..SwitchConfig::default()
        };
        assert!(switch.validate().is_ok());
        switch.ecn.as_mut().unwrap().kmax_bytes = 256 << 10;
        assert!(matches!(
            switch.validate(),
            Err(ConfigError::EcnAbovePfc { .. })
        ));
        switch.ecn = None;
        switch.pfc.as_mut().unwrap().xon_bytes = (256 << 10) + 1;
        assert!(matches!(
            switch.validate(),
            Err(ConfigError::PfcThresholds { .. })
        ));
    }

    #[test]
    fn pause_quanta_are_512_bit_times() {
        assert_eq!(PfcConfig::quanta_ps(1, 100e9), 5_120);
        assert_eq!(PfcConfig::quanta_ps(0xFFFF, 100e9), 335_539_200);
        assert_eq!(PfcConfig::quanta_ps(10, 25e9), 204_800);
    }
}
