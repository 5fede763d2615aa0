//! The Verilated `NicCore`: what the top adds to its two halves (each runs
//! in about a second of release time; the rx copy and the responder-to-
//! requester ERR event; transmit and DMA arbitration are not covered yet). The
//! halves themselves are checked against shadow model NICs in their own
//! tests (`rtl_responder_path.rs`, the requester's harness).
//!
//! The rx copy: random valid frames of every opcode (IPv4 and IPv6, QPNs
//! inside the 1024-QP table, payloads up to 300 bytes), offered with random
//! gaps while the outcome port back-pressures at random. Every frame must
//! reach both halves whole (each half's parser counts it), the responder
//! must handle exactly the frames the model's `nic::frame_kind` calls
//! requests (the others it counts as not handled) and the requester take a
//! response header for exactly the frames it calls responses (the others
//! counted as not responses), with no parser drop on either side and one
//! responder outcome per frame. No QP is configured, so no QP moves to
//! ERR and nothing is sent: both hand-over counters stay 0, no frame and
//! no DMA request comes out.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rocenic_hdl::qp_context_record::QpContextRecord;
use rocenic_hdl::responder_datapath::{STAT_FRAMES as RSP_FRAMES, STAT_NOT_HANDLED};
use rocenic_hdl::response_placement::{
    STAT_FRAMES as REQ_FRAMES, STAT_HEADERS, STAT_NOT_RESPONSES, STAT_PARSER_DROPS,
};
use rocenic_model::nic::{frame_kind, FrameKind};
use rocenic_sim::rtl::gen::frame_with;
use rocenic_sim::rtl::stream::{AxisInPorts, StreamSource};
use rocenic_wire::opcode::OPCODES;
use verilator_sys::{Block, NicCore as Dut, Sim};

fn stat(sim: &mut Sim<Dut>, select: u64) -> (u64, u64) {
    sim.set_u64(Dut::STAT_SELECT, select);
    sim.eval();
    (
        sim.get_u64(Dut::RSP_STAT_COUNT),
        sim.get_u64(Dut::REQ_STAT_COUNT),
    )
}

#[test]
fn every_frame_reaches_both_halves_and_each_takes_its_own() {
    for seed in [1u64, 2] {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut sim = Sim::<Dut>::new().expect("sim");
        sim.set_bit(Dut::RESET, true);
        sim.tick();
        sim.set_bit(Dut::RESET, false);
        sim.set_bit(Dut::FRAME_TREADY, true);
        sim.set_bit(Dut::SCQE_READY, true);
        sim.set_bit(Dut::RCQE_READY, true);
        sim.set_bit(Dut::DMAW_READY, true);
        sim.set_bit(Dut::DMA_REQ_READY, true);
        let mut waited = 0;
        loop {
            sim.eval();
            if sim.get_bit(Dut::CFG_READY) {
                break;
            }
            sim.tick();
            waited += 1;
            assert!(waited < 5000, "seed {seed}: MR tables never swept");
        }

        let rx = AxisInPorts::<Dut>::named("rx").expect("rx ports");
        let mut src = StreamSource::new(0.7, seed);
        let (mut requests, mut responses, mut frames) = (0u64, 0u64, 0u64);
        for _ in 0..400 {
            let index = rng.gen_range(0..OPCODES.len());
            let mut frame = frame_with(index, rng.gen(), rng.gen_range(0..300), rng.gen());
            frame.bth.dest_qp = rng.gen_range(0..1024);
            let Ok(bytes) = frame.encode() else { continue };
            if !src.push_frame(&bytes) {
                continue;
            }
            frames += 1;
            match frame_kind(frame.bth.opcode) {
                FrameKind::Request => requests += 1,
                FrameKind::Response => responses += 1,
                _ => {}
            }
        }
        assert!(
            requests > 50 && responses > 20,
            "seed {seed}: {requests} {responses}"
        );

        let (mut outcomes, mut rsp_fires, mut quiet) = (0u64, 0u64, 0u64);
        while quiet < 400 {
            quiet += 1;
            src.begin_cycle();
            rx.drive(sim.dut_mut(), src.current());
            let out_ready = rng.gen_bool(0.6);
            sim.set_bit(Dut::OUT_READY, out_ready);
            sim.eval();
            assert!(
                !sim.get_bit(Dut::FRAME_TVALID),
                "seed {seed}: no frame to send"
            );
            assert!(!sim.get_bit(Dut::DMA_REQ_VALID), "seed {seed}: no DMA read");
            assert!(!sim.get_bit(Dut::DMAW_VALID), "seed {seed}: no DMA write");
            if sim.get_bit(Dut::OUT_VALID) && out_ready {
                outcomes += 1;
                quiet = 0;
            }
            if sim.get_bit(Dut::RSP_FIRE) {
                rsp_fires += 1;
                quiet = 0;
            }
            let ready = rx.ready(sim.dut());
            if src.current().is_some() {
                quiet = 0;
            }
            src.end_cycle(sim.cycle(), ready);
            sim.tick();
            assert!(sim.cycle() < 2_000_000, "seed {seed}: stuck");
        }
        assert!(src.is_idle(), "seed {seed}: rx stalled");
        assert_eq!(
            stat(&mut sim, RSP_FRAMES).0,
            frames,
            "seed {seed}: responder frames"
        );
        assert_eq!(
            stat(&mut sim, STAT_NOT_HANDLED).0,
            frames - requests,
            "seed {seed}: responder takes only requests"
        );
        assert_eq!(outcomes, frames, "seed {seed}: one outcome per frame");
        assert_eq!(
            stat(&mut sim, REQ_FRAMES).1,
            frames,
            "seed {seed}: requester frames"
        );
        assert_eq!(stat(&mut sim, STAT_PARSER_DROPS).1, 0, "seed {seed}");
        assert_eq!(
            stat(&mut sim, STAT_NOT_RESPONSES).1,
            frames - responses,
            "seed {seed}: requester takes only responses"
        );
        assert_eq!(stat(&mut sim, STAT_HEADERS).1, responses, "seed {seed}");
        assert_eq!(
            rsp_fires, responses,
            "seed {seed}: every header to the event loop"
        );
        assert_eq!(sim.get_u64(Dut::TO_ERR_FROM_RESPONDER), 0, "seed {seed}");
        assert_eq!(sim.get_u64(Dut::TO_ERR_FROM_REQUESTER), 0, "seed {seed}");
        eprintln!(
            "seed {seed}: {frames} frames ({requests} requests, {responses} responses) through both halves in {} cycles",
            sim.cycle()
        );
    }
}

/// Writes `record` to QP `qpn`'s context through `<prefix>_qp_host_*`
/// (all fields) and returns the record it replaced.
fn write_context(sim: &mut Sim<Dut>, prefix: &str, qpn: u64, record: &QpContextRecord) -> Vec<u64> {
    let port = |n: &str| Dut::input(&format!("{prefix}_qp_host_{n}")).expect("context port");
    let done = Dut::output(&format!("{prefix}_qp_host_done")).expect("done");
    let old = Dut::output(&format!("{prefix}_qp_host_old")).expect("old");
    let mut mask = [u64::MAX; 5];
    mask[4] = u64::from(u32::MAX);
    sim.set_bit(port("valid"), true);
    sim.set_u64(port("qpn"), qpn);
    sim.set(port("mask"), &mask);
    sim.set(port("data"), &record.pack().expect("record fits"));
    for _ in 0..100 {
        sim.eval();
        if sim.get_bit(done) {
            let was = sim.get(old);
            sim.tick();
            sim.set_bit(port("valid"), false);
            sim.tick();
            return was;
        }
        sim.tick();
    }
    panic!("{prefix} context write never done");
}

/// A responder refusal moving QP q to ERR reaches the requester side: a
/// RDMA WRITE ONLY in sequence to a QP without the remote-write right is
/// refused (NAK remote access, QP to ERR: the model's `check_request`
/// outcome `to_error`, then `move_to_error`), and the requester's event
/// loop then takes `EV_TO_ERROR` for q, writing its own context's state to
/// ERR; the requester contexts of the other QPs are untouched.
#[test]
fn a_responder_refusal_moves_the_requester_side_to_err() {
    use rocenic_hdl::completer_datapath::EV_TO_ERROR;
    use rocenic_hdl::qp_context_record::state;
    use rocenic_hdl::request_checker::VERDICT_REMOTE_ACCESS;
    use rocenic_wire::op;
    for seed in [3u64, 4, 5] {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut sim = Sim::<Dut>::new().expect("sim");
        sim.set_bit(Dut::RESET, true);
        sim.tick();
        sim.set_bit(Dut::RESET, false);
        sim.set_bit(Dut::FRAME_TREADY, true);
        sim.set_bit(Dut::SCQE_READY, true);
        sim.set_bit(Dut::RCQE_READY, true);
        sim.set_bit(Dut::DMAW_READY, true);
        sim.set_bit(Dut::DMA_REQ_READY, true);
        sim.set_bit(Dut::OUT_READY, true);
        for _ in 0..5000 {
            sim.eval();
            if sim.get_bit(Dut::CFG_READY) {
                break;
            }
            sim.tick();
        }
        let q: u64 = rng.gen_range(0..1024);
        let other = (q + 1) % 1024;
        let epsn: u32 = rng.gen_range(0..1 << 24);
        let responder = QpContextRecord {
            state: state::RTR,
            access: 0,
            path_mtu: 5,
            rq_epsn: epsn,
            ..QpContextRecord::default()
        };
        write_context(&mut sim, "rsp", q, &responder);
        let requester = QpContextRecord {
            state: state::RTS,
            path_mtu: 5,
            sq_next_psn: 7,
            sq_send_psn: 7,
            sq_una_psn: 7,
            ..QpContextRecord::default()
        };
        write_context(&mut sim, "req", q, &requester);
        write_context(&mut sim, "req", other, &requester);

        let index = OPCODES
            .iter()
            .position(|o| o.code == op::WRITE_ONLY)
            .unwrap();
        let mut frame = frame_with(index, rng.gen(), 64, rng.gen());
        frame.bth.dest_qp = q as u32;
        frame.bth.psn = epsn;
        if let Some(reth) = frame.ext.reth.as_mut() {
            reth.dma_len = 64;
        }
        let rx = AxisInPorts::<Dut>::named("rx").expect("rx ports");
        let mut src = StreamSource::new(1.0, seed);
        assert!(src.push_frame(&frame.encode().expect("frame")));
        let mut verdict = None;
        let mut to_error_done = Vec::new();
        for _ in 0..3000 {
            src.begin_cycle();
            rx.drive(sim.dut_mut(), src.current());
            sim.eval();
            if sim.get_bit(Dut::OUT_VALID) {
                verdict = Some(sim.get_u64(Dut::OUT_VERDICT));
            }
            if sim.get_bit(Dut::DONE_VALID) {
                to_error_done.push((
                    sim.get_u64(Dut::DONE_KIND),
                    sim.get_u64(Dut::DONE_QPN),
                    sim.get_u64(Dut::DONE_STATE),
                ));
            }
            let ready = rx.ready(sim.dut());
            src.end_cycle(sim.cycle(), ready);
            sim.tick();
        }
        assert_eq!(verdict, Some(VERDICT_REMOTE_ACCESS), "seed {seed}: refused");
        assert_eq!(sim.get_u64(Dut::TO_ERR_FROM_RESPONDER), 1, "seed {seed}");
        assert_eq!(
            to_error_done,
            vec![(EV_TO_ERROR, q, u64::from(state::ERR))],
            "seed {seed}: one EV_TO_ERROR for q"
        );
        // Nothing came back the other way: the requester's ERR move was
        // the responder's own.
        assert_eq!(sim.get_u64(Dut::TO_ERR_FROM_REQUESTER), 0, "seed {seed}");
        let in_err = QpContextRecord {
            state: state::ERR,
            ..QpContextRecord::default()
        };
        let was = write_context(&mut sim, "req", q, &in_err);
        assert_eq!(
            QpContextRecord::unpack(&was).state,
            state::ERR,
            "seed {seed}: q in ERR"
        );
        let was = write_context(&mut sim, "req", other, &requester);
        assert_eq!(
            QpContextRecord::unpack(&was).state,
            state::RTS,
            "seed {seed}: other untouched"
        );
        eprintln!(
            "seed {seed}: QP {q} refused at the responder, EV_TO_ERROR taken by the requester"
        );
    }
}
