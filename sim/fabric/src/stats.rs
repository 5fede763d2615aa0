//! Counters the fabric keeps, and the capture event it reports to sinks.

use crate::{NodeId, Time};
use serde::Serialize;

/// Why the fabric threw a frame away.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DropReason {
    /// Link fault injection.
    Loss,
    /// The shared switch buffer had no room (tail drop).
    BufferFull,
    /// No node owns the destination MAC (broadcast included).
    UnknownDestination,
    /// Shorter than an Ethernet header: nothing to forward on.
    Runt,
    /// A lossless priority's frame beyond its ingress port's XOFF
    /// threshold plus headroom: the headroom is smaller than the link's
    /// round trip.
    HeadroomFull,
    /// A MAC Control frame the switch does not act on (802.3x PAUSE, a
    /// malformed PFC frame).
    UnsupportedControl,
}

/// Frames dropped, by reason.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct DropCounts {
    pub loss: u64,
    pub buffer_full: u64,
    pub unknown_destination: u64,
    pub runt: u64,
    pub headroom_full: u64,
    pub unsupported_control: u64,
}

impl DropCounts {
    pub fn total(&self) -> u64 {
        self.loss
            + self.buffer_full
            + self.unknown_destination
            + self.runt
            + self.headroom_full
            + self.unsupported_control
    }

    pub(crate) fn count(&mut self, reason: DropReason) {
        match reason {
            DropReason::Loss => self.loss += 1,
            DropReason::BufferFull => self.buffer_full += 1,
            DropReason::UnknownDestination => self.unknown_destination += 1,
            DropReason::Runt => self.runt += 1,
            DropReason::HeadroomFull => self.headroom_full += 1,
            DropReason::UnsupportedControl => self.unsupported_control += 1,
        }
    }
}

/// Per node: what it sent, what reached it, and its switch egress port.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct NodeStats {
    pub tx_frames: u64,
    pub tx_bytes: u64,
    pub rx_frames: u64,
    pub rx_bytes: u64,
    /// Frames CE-marked on the switch port towards this node.
    pub ecn_marked: u64,
    /// Frames tail-dropped for the switch port towards this node.
    pub buffer_drops: u64,
    /// Largest occupancy of the switch egress queue towards this node.
    pub egress_high_water_bytes: u64,
    /// PFC frames the switch sent this node: pauses (XOFF, refreshes
    /// included) and their ends (XON).
    pub pfc_xoff_sent: u64,
    pub pfc_xon_sent: u64,
    /// PFC frames this node sent the switch, which its egress port honoured.
    pub pfc_frames_received: u64,
}

/// Fabric-wide counters. Byte counts are frame bytes as the endpoints see
/// them (no FCS, preamble, padding or gap).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct FabricStats {
    pub emitted_frames: u64,
    pub emitted_bytes: u64,
    pub delivered_frames: u64,
    pub delivered_bytes: u64,
    pub dropped: DropCounts,
    /// Extra copies created by duplication faults.
    pub duplicated: u64,
    pub reordered: u64,
    /// Corrupted frames are still delivered; the receiver must reject them.
    pub corrupted: u64,
    pub ecn_marked: u64,
    /// Largest occupancy of the shared switch buffer.
    pub buffer_high_water_bytes: u64,
    /// PFC pause frames (XOFF, refreshes included) the switch sent.
    pub pfc_pauses: u64,
    pub nodes: Vec<NodeStats>,
}

/// What happened to a frame, as reported to capture sinks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CaptureKind {
    /// The node's transmitter took the frame (as the sender built it).
    Emitted,
    /// The frame reached the node (with any CE mark or corruption).
    Delivered,
    /// The frame was thrown away; `node` is the link it was lost on, or the
    /// sender for drops in the switch.
    Dropped { reason: DropReason },
}

/// One frame observed by the fabric.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct CaptureEvent<'a> {
    pub time: Time,
    pub node: NodeId,
    pub kind: CaptureKind,
    pub frame: &'a [u8],
}
