//! Deterministic discrete-event Ethernet fabric: NIC ports, links with
//! bandwidth and latency, a shared-buffer output-queued switch with ECN
//! marking and priority flow control, seeded fault injection, and pcap capture.
//!
//! Time is in nanoseconds. The same seed gives the same run, byte for byte.

/// Simulation time in nanoseconds.
pub type Time = u64;

pub mod config;
pub mod engine;
pub mod faults;
pub mod pcap;
pub mod stats;

pub use config::{
    serialisation_ps, wire_bytes, ConfigError, EcnConfig, FaultConfig, LinkConfig, PfcConfig,
    SwitchConfig,
};
pub use engine::{switch_port_mac, CaptureSink, Fabric, NodeId};
pub use pcap::{PcapCapture, PcapWriter};
pub use stats::{CaptureEvent, CaptureKind, DropCounts, DropReason, FabricStats, NodeStats};

/// Anything with one Ethernet port that the fabric can drive: the reference
/// model NIC, and later the Verilated RTL NIC.
///
/// The fabric calls these with non-decreasing `now`. It calls `advance` at
/// (or after) every time `next_deadline` named, and asks `transmit` for a
/// frame whenever the port's transmitter is idle: after `advance`, after
/// `receive`, and when the previous frame finished serialising.
pub trait Endpoint {
    /// The port's MAC address; the switch forwards frames to it.
    fn mac(&self) -> [u8; 6];

    /// A frame arrived from the wire (FCS already stripped).
    fn receive(&mut self, now: Time, frame: Vec<u8>);

    /// The transmitter is idle: hand over the next frame to send now, if
    /// one is ready (rate limiting included).
    fn transmit(&mut self, now: Time) -> Option<Vec<u8>>;

    /// The earliest time after which the endpoint must run again: a timer
    /// expiry, or the moment a paced queue may send. `None` when idle.
    fn next_deadline(&self) -> Option<Time>;

    /// Fire whatever timers are due at `now`.
    fn advance(&mut self, now: Time);
}
