//! The Verilated TX builder (`rocenic_hdl::frame::tx::tx_builder`) fed with header
//! records and payload streams, collecting the frames it sends, for
//! comparison with `RoceFrame::encode` of the same inputs.
//!
//! The builder takes a `header` channel (`header_record` /
//! `header_valid` / `header_ready`, one `TxHeader` per frame), a `payload`
//! AXI-Stream (exactly ceil(len / 64) beats per frame, none for an empty
//! payload) and sends on the `frame` AXI-Stream; `dropped_frames` counts
//! records the codec would refuse.

use super::stream::{
    AxisInPorts, AxisOutPorts, ChannelInPorts, HandshakeSource, ReceivedFrame, StreamSink,
    StreamSource,
};
use super::RtlError;
use rocenic_hdl::frame::tx::tx_header::TxHeader;
use rocenic_hdl::primitives::wide::{bits_from_words, bits_to_words};
use rocenic_wire::{Aeth, AtomicAckEth, AtomicEth, Deth, IpHeader, Reth, RoceFrame};
use rust_hdl::prelude::{Bits, Synth};
use verilator_sys::{Block, Sim};

fn field<const N: usize>(v: u128) -> Bits<N> {
    bits_from_words(&[v as u64, (v >> 64) as u64])
}

fn mac(m: [u8; 6]) -> u128 {
    m.iter().fold(0u128, |acc, &b| acc << 8 | u128::from(b))
}

/// The TX header record that asks the builder for `f` (its payload goes on
/// the payload stream). The pad count is the builder's to compute, the
/// extension headers sent are the opcode's.
pub fn tx_header_of(f: &RoceFrame) -> TxHeader {
    let (ipv6, src, dst, dscp, ecn, id, df, ttl, flow) = match &f.ip {
        IpHeader::V4(h) => (
            false,
            u128::from(u32::from(h.src)),
            u128::from(u32::from(h.dst)),
            h.dscp,
            h.ecn,
            h.identification,
            h.dont_fragment,
            h.ttl,
            0,
        ),
        IpHeader::V6(h) => (
            true,
            u128::from(h.src),
            u128::from(h.dst),
            h.dscp,
            h.ecn,
            0,
            false,
            h.hop_limit,
            h.flow_label,
        ),
    };
    let e = &f.ext;
    let deth = e.deth.unwrap_or(Deth { qkey: 0, src_qp: 0 });
    let reth = e.reth.unwrap_or(Reth {
        va: 0,
        rkey: 0,
        dma_len: 0,
    });
    let atomic = e.atomic_eth.unwrap_or(AtomicEth {
        va: 0,
        rkey: 0,
        swap_add: 0,
        compare: 0,
    });
    let aeth = e.aeth.unwrap_or(Aeth {
        syndrome: 0,
        msn: 0,
    });
    let atomic_ack = e.atomic_ack_eth.unwrap_or(AtomicAckEth { orig: 0 });
    let b = &f.bth;
    TxHeader {
        eth_dst: field(mac(f.eth.dst)),
        eth_src: field(mac(f.eth.src)),
        ipv6,
        ip_src: field(src),
        ip_dst: field(dst),
        dscp: field(dscp.into()),
        ecn: field(ecn.into()),
        ipv4_identification: field(id.into()),
        ipv4_dont_fragment: df,
        ttl: field(ttl.into()),
        ipv6_flow_label: field(flow.into()),
        udp_src_port: field(f.udp_src_port.into()),
        udp_checksum: f.udp_checksum,
        opcode: field(b.opcode.into()),
        solicited: b.solicited,
        mig_req: b.mig_req,
        tver: field(b.tver.into()),
        pkey: field(b.pkey.into()),
        fecn: b.fecn,
        becn: b.becn,
        dest_qp: field(b.dest_qp.into()),
        ack_req: b.ack_req,
        psn: field(b.psn.into()),
        deth_qkey: field(deth.qkey.into()),
        deth_src_qp: field(deth.src_qp.into()),
        reth_va: field(reth.va.into()),
        reth_rkey: field(reth.rkey.into()),
        reth_dma_len: field(reth.dma_len.into()),
        atomic_va: field(atomic.va.into()),
        atomic_rkey: field(atomic.rkey.into()),
        atomic_swap_add: field(atomic.swap_add.into()),
        atomic_compare: field(atomic.compare.into()),
        aeth_syndrome: field(aeth.syndrome.into()),
        aeth_msn: field(aeth.msn.into()),
        atomic_ack_orig: field(atomic_ack.orig.into()),
        imm: field(e.imm.unwrap_or(0).into()),
        ieth_rkey: field(e.ieth.unwrap_or(0).into()),
        payload_len: field(f.payload.len() as u128),
    }
}

/// The record as the port's little-endian words.
pub fn tx_header_words(f: &RoceFrame) -> Vec<u64> {
    let packed: Bits<{ TxHeader::BITS }> = tx_header_of(f).into();
    bits_to_words(packed)
}

/// How the builder is driven.
#[derive(Clone, Copy, Debug)]
pub struct TxDrive {
    /// Probability that an idle header input offers its next record.
    pub p_header_valid: f64,
    /// Probability that an idle payload input offers its next beat.
    pub p_payload_valid: f64,
    /// Probability that the frame output is ready in a cycle.
    pub p_frame_ready: f64,
    pub seed: u64,
}

impl Default for TxDrive {
    fn default() -> Self {
        TxDrive {
            p_header_valid: 1.0,
            p_payload_valid: 1.0,
            p_frame_ready: 1.0,
            seed: 0,
        }
    }
}

/// A run of the builder.
#[derive(Clone, Debug)]
pub struct TxRun {
    /// The frames sent, in order.
    pub frames: Vec<ReceivedFrame>,
    /// Per record: cycle it moved in.
    pub header_moved: Vec<u64>,
    /// Per non-empty payload: cycles its first and last beat moved in.
    pub payload_first: Vec<u64>,
    pub payload_last: Vec<u64>,
    /// Cycles from reset release to the last output beat.
    pub cycles: u64,
    /// Output beats sent.
    pub frame_beats: u64,
    /// The `dropped_frames` counter after the run.
    pub dropped: u64,
}

const HEADER: (&str, &str, &str) = ("header_record", "header_valid", "header_ready");
const PAYLOAD_IN: &str = "payload";
const FRAME_OUT: &str = "frame";

/// Sends `frames` (as header records and payload streams) through a fresh
/// Verilated builder `B` (the bridge's `TxBuilder`) and collects what it
/// sends. `expect_sent` frames must come out (the ones `encode` accepts).
pub fn run_tx_builder<B: Block>(
    frames: &[RoceFrame],
    expect_sent: usize,
    drive: TxDrive,
) -> Result<TxRun, RtlError> {
    let header = ChannelInPorts::<B>::named(HEADER.0, HEADER.1, HEADER.2)?;
    let payload = AxisInPorts::<B>::named(PAYLOAD_IN)?;
    let out = AxisOutPorts::<B>::named(FRAME_OUT, &[])?;
    let reset = B::input("reset")?;
    let dropped = B::output("dropped_frames")?;

    let mut headers = HandshakeSource::new(drive.p_header_valid, drive.seed);
    let mut payloads = StreamSource::new(drive.p_payload_valid, drive.seed ^ 0x7A);
    for f in frames {
        headers.push(tx_header_words(f));
        // An empty payload sends no beats.
        payloads.push_frame(&f.payload);
    }
    let mut sink = StreamSink::new(FRAME_OUT, drive.p_frame_ready, drive.seed ^ 0xF3);

    let mut sim = Sim::<B>::new()?;
    sim.set_bit(reset, true);
    header.drive(sim.dut_mut(), None);
    payload.drive(sim.dut_mut(), None);
    out.set_ready(sim.dut_mut(), false);
    sim.tick();
    sim.set_bit(reset, false);
    let start = sim.cycle();

    let beats: u64 = frames
        .iter()
        .map(|f| (f.payload.len() + 110).div_ceil(64) as u64 + 2)
        .sum();
    let p_slowest = drive
        .p_header_valid
        .min(drive.p_payload_valid)
        .min(drive.p_frame_ready)
        .max(0.01);
    let limit = start + 400 + (beats as f64 * 4.0 / p_slowest) as u64;
    let mut last_output = start;
    while !(headers.is_idle() && payloads.is_idle() && sink.frames().len() >= expect_sent) {
        if sim.cycle() > limit {
            return Err(RtlError::Stuck {
                cycle: sim.cycle(),
                what: format!(
                    "{} of {expect_sent} frames; {} records and {} payload beats taken",
                    sink.frames().len(),
                    headers.sent(),
                    payloads.beats_sent()
                ),
            });
        }
        headers.begin_cycle();
        payloads.begin_cycle();
        sink.begin_cycle();
        let dut = sim.dut_mut();
        header.drive(dut, headers.current());
        payload.drive(dut, payloads.current());
        out.set_ready(dut, sink.ready());
        sim.eval();
        let cycle = sim.cycle();
        if out.observe(sim.dut(), &mut sink, cycle)? {
            last_output = cycle;
        }
        let header_ready = header.ready(sim.dut());
        let payload_ready = payload.ready(sim.dut());
        headers.end_cycle(cycle, header_ready);
        payloads.end_cycle(cycle, payload_ready);
        sim.tick();
    }
    // Nothing more may come out.
    header.drive(sim.dut_mut(), None);
    payload.drive(sim.dut_mut(), None);
    out.set_ready(sim.dut_mut(), true);
    for _ in 0..(80 + 8) {
        sim.eval();
        if out.valid(sim.dut()) {
            return Err(RtlError::Mismatch(format!(
                "cycle {}: a frame beyond the {expect_sent} expected",
                sim.cycle()
            )));
        }
        sim.tick();
    }
    sim.eval();
    Ok(TxRun {
        frame_beats: sink.beats(),
        frames: sink.take_frames(),
        header_moved: headers.moved().to_vec(),
        payload_first: payloads.first_moved().to_vec(),
        payload_last: payloads.last_moved().to_vec(),
        cycles: last_output + 1 - start,
        dropped: sim.get_u64(dropped),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::frame_with;

    #[test]
    fn header_fields_land_at_their_offsets() {
        let f = frame_with(10, false, 33, 4);
        let h = tx_header_of(&f);
        let words = tx_header_words(&f);
        let get = |offset: usize, width: usize| -> u128 {
            (0..width).fold(0u128, |v, i| {
                let bit = offset + i;
                v | u128::from(words[bit / 64] >> (bit % 64) & 1) << i
            })
        };
        assert_eq!(get(h.get_my_offset_opcode(), 8), u128::from(f.bth.opcode));
        assert_eq!(get(h.get_my_offset_psn(), 24), u128::from(f.bth.psn));
        assert_eq!(get(h.get_my_offset_payload_len(), 13), 33);
        assert_eq!(get(h.get_my_offset_eth_dst(), 48), mac(f.eth.dst));
        let IpHeader::V4(ip) = f.ip else {
            panic!("IPv4")
        };
        assert_eq!(
            get(h.get_my_offset_ip_src(), 128),
            u128::from(u32::from(ip.src))
        );
    }
}
