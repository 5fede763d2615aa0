//! Test endpoints: a node that can send a planned stream of RoCEv2 frames
//! (paced or back to back) or frames pushed into it, and records every
//! frame it sent and received.

#![allow(dead_code)]

use rocenic_fabric::{Endpoint, Time};
use rocenic_wire::*;
use std::collections::VecDeque;
use std::net::Ipv4Addr;

pub fn mac(n: u8) -> [u8; 6] {
    [2, 0, 0, 0, 0, n]
}

/// IPv4 SEND-only frame bytes for a payload of `payload` bytes:
/// 14 + 20 + 8 + 12 + payload + pad + 4.
pub fn send_frame(src: [u8; 6], dst: [u8; 6], psn: u32, payload: usize, ecn: u8) -> Vec<u8> {
    send_frame_dscp(src, dst, psn, payload, ecn, 26)
}

/// [`send_frame`] with another DSCP (the switch's PFC priority is DSCP / 8).
pub fn send_frame_dscp(
    src: [u8; 6],
    dst: [u8; 6],
    psn: u32,
    payload: usize,
    ecn: u8,
    dscp: u8,
) -> Vec<u8> {
    RoceFrame {
        eth: EthHeader { dst, src },
        ip: IpHeader::V4(Ipv4Header {
            src: Ipv4Addr::new(10, 0, 0, src[5]),
            dst: Ipv4Addr::new(10, 0, 0, dst[5]),
            dscp,
            ecn,
            identification: psn as u16,
            dont_fragment: true,
            ttl: 64,
        }),
        udp_src_port: 0xC000 | u16::from(src[5]),
        udp_checksum: false,
        bth: Bth::new(op::SEND_ONLY, u32::from(dst[5]), psn),
        ext: ExtHeaders::default(),
        payload: (0..payload).map(|i| (i as u32 ^ psn) as u8).collect(),
    }
    .encode()
    .expect("test frame encodes")
}

/// A payload size giving a 1026-byte frame: 1050 bytes on the wire, 84 ns
/// at 100 Gb/s, 168 ns at 50 Gb/s, 336 ns at 25 Gb/s.
pub const PAYLOAD_1026: usize = 968;

#[derive(Clone, Debug)]
pub struct Plan {
    pub dst: [u8; 6],
    pub count: u32,
    pub payload: usize,
    /// Minimum spacing between the starts of two frames; 0 sends back to back.
    pub interval_ns: Time,
    pub start_ns: Time,
    /// ECN codepoint of frame `psn`.
    pub ecn: fn(u32) -> u8,
    /// Raw frames of this length (dst, src, filler) instead of RoCE frames.
    pub raw_len: Option<usize>,
    pub dscp: u8,
}

impl Plan {
    pub fn to(dst: [u8; 6], count: u32) -> Plan {
        Plan {
            dst,
            count,
            payload: PAYLOAD_1026,
            interval_ns: 0,
            start_ns: 0,
            ecn: |_| ecn::NOT_ECT,
            raw_len: None,
            dscp: 26,
        }
    }
}

#[derive(Debug)]
pub struct TestNode {
    pub mac: [u8; 6],
    pub plan: Option<Plan>,
    next_psn: u32,
    next_at: Time,
    /// Frames pushed by the test, sent before the plan.
    pub outbox: VecDeque<Vec<u8>>,
    pub sent: Vec<(Time, Vec<u8>)>,
    pub received: Vec<(Time, Vec<u8>)>,
    pub advances: u64,
    /// Honour PFC frames for the plan's priority (DSCP / 8), as a NIC on a
    /// link of this rate; `None` ignores them.
    pub pfc_rate_bps: Option<f64>,
    /// The plan sends nothing before this time (a received pause).
    pub paused_until: Time,
}

impl TestNode {
    pub fn sink(n: u8) -> TestNode {
        TestNode {
            mac: mac(n),
            plan: None,
            next_psn: 0,
            next_at: 0,
            outbox: VecDeque::new(),
            sent: Vec::new(),
            received: Vec::new(),
            advances: 0,
            pfc_rate_bps: None,
            paused_until: 0,
        }
    }

    pub fn source(n: u8, plan: Plan) -> TestNode {
        let mut t = TestNode::sink(n);
        t.next_at = plan.start_ns;
        t.plan = Some(plan);
        t
    }

    /// The node pauses its plan on PFC frames, as a NIC on a link of
    /// `rate_bps`.
    pub fn honouring_pfc(self, rate_bps: f64) -> TestNode {
        TestNode {
            pfc_rate_bps: Some(rate_bps),
            ..self
        }
    }

    fn planned_left(&self) -> bool {
        self.plan.as_ref().is_some_and(|p| self.next_psn < p.count)
    }
}

impl Endpoint for TestNode {
    fn mac(&self) -> [u8; 6] {
        self.mac
    }

    fn receive(&mut self, now: Time, frame: Vec<u8>) {
        if let (Some(rate), Ok(pfc), Some(plan)) = (
            self.pfc_rate_bps,
            pfc::PfcFrame::decode(&frame),
            self.plan.as_ref(),
        ) {
            let priority = usize::from(plan.dscp >> 3);
            if pfc.enable & (1 << priority) != 0 {
                let bits = u64::from(pfc.quanta[priority]) * pfc::QUANTUM_BITS;
                self.paused_until = now + (bits as f64 * 1e9 / rate).ceil() as Time;
            }
        }
        self.received.push((now, frame));
    }

    fn transmit(&mut self, now: Time) -> Option<Vec<u8>> {
        if let Some(f) = self.outbox.pop_front() {
            self.sent.push((now, f.clone()));
            return Some(f);
        }
        if !self.planned_left() || now < self.next_at || now < self.paused_until {
            return None;
        }
        let p = self.plan.as_ref()?;
        let psn = self.next_psn;
        let frame = match p.raw_len {
            Some(len) => {
                let mut f = vec![0xAB; len];
                let n = len.min(6);
                f[..n].copy_from_slice(&p.dst[..n]);
                if len > 6 {
                    let m = (len - 6).min(6);
                    f[6..6 + m].copy_from_slice(&self.mac[..m]);
                }
                f
            }
            None => send_frame_dscp(self.mac, p.dst, psn, p.payload, (p.ecn)(psn), p.dscp),
        };
        self.next_psn += 1;
        self.next_at = now + p.interval_ns;
        self.sent.push((now, frame.clone()));
        Some(frame)
    }

    fn next_deadline(&self) -> Option<Time> {
        // Back-to-back sending needs no timer: the fabric asks again when
        // the transmitter is idle.
        let paced = self.plan.as_ref().is_some_and(|p| p.interval_ns > 0);
        let paused = self.paused_until > self.next_at;
        (self.planned_left() && (paced || paused)).then_some(self.next_at.max(self.paused_until))
    }

    fn advance(&mut self, _now: Time) {
        self.advances += 1;
    }
}

pub fn psn_of(frame: &[u8]) -> u32 {
    RoceFrame::decode(frame).expect("decodes").bth.psn
}

/// Count within `sigmas` standard deviations of a binomial mean.
pub fn assert_binomial(observed: u64, n: u64, p: f64, sigmas: f64, what: &str) {
    let mean = n as f64 * p;
    let sd = (n as f64 * p * (1.0 - p)).sqrt();
    let dev = (observed as f64 - mean).abs();
    assert!(
        dev <= sigmas * sd + 1.0,
        "{what}: observed {observed}, expected {mean:.1} +- {:.1}",
        sigmas * sd
    );
}
