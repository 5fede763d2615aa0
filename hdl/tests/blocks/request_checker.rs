//! RequestChecker in rust-hdl's simulator: its context word has the QP
//! context record's layout field for field; a hand-checked request of
//! every kind of verdict, one per cycle back to back, each outcome in the
//! next cycle with the fields IBA chapter 9 prescribes (the
//! Verilator test in sim/tests/blocks/request_checker.rs runs the model's
//! `check_request` on random requests and real traces); the generated
//! Verilog replayed under Verilator agrees cycle by cycle; Yosys maps it to
//! logic and flip-flops only, no memory.

use rocenic_hdl::codes::{mtu, qp_state, request_verdict};
use rocenic_hdl::qp::qp_context_record::{
    record_words, ContextRecordBits, QpContextRecord, FIELDS,
};
use rocenic_hdl::responder::request_checker::*;
use rocenic_hdl_testbench::{verilog_of, xilinx_synth, CycleSim};
use rust_hdl::prelude::*;

#[test]
fn context_word_has_the_record_layout() {
    let r = ContextRecordBits::default();
    let ours = [
        ("state", r.get_my_offset_state(), r.get_my_width_state()),
        ("access", r.get_my_offset_access(), r.get_my_width_access()),
        (
            "path_mtu",
            r.get_my_offset_path_mtu(),
            r.get_my_width_path_mtu(),
        ),
        ("pkey", r.get_my_offset_pkey(), r.get_my_width_pkey()),
        ("pd", r.get_my_offset_pd(), r.get_my_width_pd()),
        (
            "dest_qpn",
            r.get_my_offset_dest_qpn(),
            r.get_my_width_dest_qpn(),
        ),
        (
            "addr_index",
            r.get_my_offset_addr_index(),
            r.get_my_width_addr_index(),
        ),
        (
            "sq_next_psn",
            r.get_my_offset_sq_next_psn(),
            r.get_my_width_sq_next_psn(),
        ),
        (
            "sq_send_psn",
            r.get_my_offset_sq_send_psn(),
            r.get_my_width_sq_send_psn(),
        ),
        (
            "sq_una_psn",
            r.get_my_offset_sq_una_psn(),
            r.get_my_width_sq_una_psn(),
        ),
        (
            "sq_max_sent_psn",
            r.get_my_offset_sq_max_sent_psn(),
            r.get_my_width_sq_max_sent_psn(),
        ),
        (
            "sq_ackreq_end_psn",
            r.get_my_offset_sq_ackreq_end_psn(),
            r.get_my_width_sq_ackreq_end_psn(),
        ),
        (
            "timeout",
            r.get_my_offset_timeout(),
            r.get_my_width_timeout(),
        ),
        (
            "retry_cnt",
            r.get_my_offset_retry_cnt(),
            r.get_my_width_retry_cnt(),
        ),
        (
            "rnr_retry",
            r.get_my_offset_rnr_retry(),
            r.get_my_width_rnr_retry(),
        ),
        (
            "retry_left",
            r.get_my_offset_retry_left(),
            r.get_my_width_retry_left(),
        ),
        (
            "rnr_left",
            r.get_my_offset_rnr_left(),
            r.get_my_width_rnr_left(),
        ),
        (
            "max_rd_atomic",
            r.get_my_offset_max_rd_atomic(),
            r.get_my_width_max_rd_atomic(),
        ),
        (
            "rd_atomic_outstanding",
            r.get_my_offset_rd_atomic_outstanding(),
            r.get_my_width_rd_atomic_outstanding(),
        ),
        (
            "rq_epsn",
            r.get_my_offset_rq_epsn(),
            r.get_my_width_rq_epsn(),
        ),
        ("rq_msn", r.get_my_offset_rq_msn(), r.get_my_width_rq_msn()),
        (
            "nak_sent",
            r.get_my_offset_nak_sent(),
            r.get_my_width_nak_sent(),
        ),
        (
            "max_dest_rd_atomic",
            r.get_my_offset_max_dest_rd_atomic(),
            r.get_my_width_max_dest_rd_atomic(),
        ),
        (
            "min_rnr_timer",
            r.get_my_offset_min_rnr_timer(),
            r.get_my_width_min_rnr_timer(),
        ),
        (
            "in_progress",
            r.get_my_offset_in_progress(),
            r.get_my_width_in_progress(),
        ),
    ];
    assert_eq!(ours.len(), FIELDS.len());
    for (f, (name, offset, width)) in FIELDS.iter().zip(ours) {
        assert_eq!((f.name, f.offset, f.width), (name, offset, width));
    }
}

/// One request and the QP state it meets.
#[derive(Clone, Copy)]
struct Req {
    record: QpContextRecord,
    message: [u64; 3],
    rq: bool,
    opcode: u8,
    psn: u32,
    ack_req: bool,
    len: u32,
    reth: Option<(u64, u32, u32)>,
}

/// What the outcome must show (`None`: not checked for this verdict).
struct Want {
    verdict: u64,
    response: Option<(u8, u32, u32)>,
    record: QpContextRecord,
    message: [u64; 3],
    place: Option<(u64, u32, u32, u32)>,
    npsn: Option<u32>,
}

fn qp() -> QpContextRecord {
    QpContextRecord {
        state: qp_state::RTS,
        access: 0xE,
        path_mtu: mtu::IBA_1024,
        pkey: 0xFFFF,
        dest_qpn: 0x12_3456,
        sq_send_psn: 0xAB_CDEF,
        rq_epsn: 100,
        rq_msn: 5,
        max_dest_rd_atomic: 4,
        min_rnr_timer: 14,
        ..Default::default()
    }
}

fn req(opcode: u8, psn: u32, len: u32) -> Req {
    Req {
        record: qp(),
        message: [0; 3],
        rq: true,
        opcode,
        psn,
        ack_req: true,
        len,
        reth: None,
    }
}

fn cases() -> Vec<(Req, Want)> {
    let base = qp();
    let with = |f: &dyn Fn(&mut QpContextRecord)| {
        let mut r = base;
        f(&mut r);
        r
    };
    let mut v = Vec::new();
    // SEND ONLY in order: executed, ACKed with the new MSN.
    v.push((
        req(0x04, 100, 10),
        Want {
            verdict: request_verdict::SEND,
            response: Some((0x1F, 100, 6)),
            record: with(&|r| {
                r.rq_epsn = 101;
                r.rq_msn = 6;
            }),
            message: [0; 3],
            place: None,
            npsn: None,
        },
    ));
    // Ahead across the 2^24 wrap: one sequence NAK with the expected PSN.
    let mut r = req(0x04, 1, 10);
    r.record.rq_epsn = 0xFF_FFFF;
    v.push((
        r,
        Want {
            verdict: request_verdict::OUT_OF_SEQUENCE,
            response: Some((0x60, 0xFF_FFFF, 5)),
            record: with(&|r| {
                r.rq_epsn = 0xFF_FFFF;
                r.nak_sent = 1;
            }),
            message: [0; 3],
            place: None,
            npsn: None,
        },
    ));
    // A duplicate WRITE: acknowledged again with expected - 1.
    v.push((
        req(0x0A, 99, 0),
        Want {
            verdict: request_verdict::DUPLICATE,
            response: Some((0x1F, 99, 5)),
            record: base,
            message: [0; 3],
            place: None,
            npsn: None,
        },
    ));
    // SEND FIRST without a receive WQE: RNR NAK with the timer code.
    let mut r = req(0x00, 100, 1024);
    r.rq = false;
    v.push((
        r,
        Want {
            verdict: request_verdict::RNR,
            response: Some((0x20 | 14, 100, 5)),
            record: with(&|r| r.nak_sent = 1),
            message: [0; 3],
            place: None,
            npsn: None,
        },
    ));
    // WRITE FIRST: the message opens with its RETH.
    let mut r = req(0x06, 100, 1024);
    r.ack_req = false;
    r.reth = Some((0x7000_0000_0000, 0xCAFE, 3000));
    v.push((
        r,
        Want {
            verdict: request_verdict::WRITE,
            response: None,
            record: with(&|r| {
                r.rq_epsn = 101;
                r.in_progress = 2;
            }),
            message: [0x7000_0000_0000, 0xCAFE | 3000 << 32, 1024],
            place: Some((0x7000_0000_0000, 0xCAFE, 1024, 3000)),
            npsn: None,
        },
    ));
    // WRITE MIDDLE that would end past the message: invalid, QP to ERR.
    let mut r = req(0x07, 100, 1024);
    r.record.in_progress = 2;
    r.message = [0x7000_0000_0000, 0xCAFE | 3000 << 32, 2000];
    v.push((
        r,
        Want {
            verdict: request_verdict::INVALID_REQUEST,
            response: Some((0x61, 100, 5)),
            record: with(&|r| {
                r.state = qp_state::ERR;
                r.in_progress = 2;
            }),
            message: r.message,
            place: None,
            npsn: None,
        },
    ));
    // READ of 2049 bytes at MTU 1024: three response PSNs.
    let mut r = req(0x0C, 100, 0);
    r.reth = Some((0x9000, 0x77, 2049));
    v.push((
        r,
        Want {
            verdict: request_verdict::READ,
            response: None,
            record: with(&|r| {
                r.rq_epsn = 103;
                r.rq_msn = 6;
            }),
            message: [0; 3],
            place: Some((0x9000, 0x77, 2049, 0)),
            npsn: Some(3),
        },
    ));
    // A QP in INIT: dropped, nothing changes.
    let mut r = req(0x04, 100, 10);
    r.record.state = qp_state::INIT;
    v.push((
        r,
        Want {
            verdict: request_verdict::QP_STATE,
            response: None,
            record: with(&|r| r.state = qp_state::INIT),
            message: [0; 3],
            place: None,
            npsn: None,
        },
    ));
    v
}

fn drive(sim: &mut CycleSim<RequestChecker>, r: Option<&Req>, tag: u64) {
    let u = &mut sim.uut;
    let Some(r) = r else {
        u.req_valid.next = false;
        return;
    };
    u.req_valid.next = true;
    u.req_tag.next = bits(tag);
    u.req_opcode.next = bits(r.opcode.into());
    u.req_psn.next = bits(r.psn.into());
    u.req_ack_req.next = r.ack_req;
    u.req_payload_len.next = bits(r.len.into());
    let (va, rkey, len) = r.reth.unwrap_or_default();
    u.req_has_reth.next = r.reth.is_some();
    u.req_reth_va.next = bits(va);
    u.req_reth_rkey.next = bits(rkey.into());
    u.req_reth_dma_len.next = bits(len.into());
    u.req_has_atomic_eth.next = false;
    u.req_rq_available.next = r.rq;
    u.req_context.next = r.record.to_bits();
    u.req_message.next = MessageState {
        va: bits(r.message[0]),
        rkey: bits(r.message[1] & 0xFFFF_FFFF),
        len: bits(r.message[1] >> 32),
        offset: bits(r.message[2]),
    };
}

fn check(sim: &CycleSim<RequestChecker>, w: &Want, tag: u64) {
    let u = &sim.uut;
    assert!(u.out_valid.val(), "request {tag}");
    assert_eq!(u.out_tag.val().to_u64(), tag);
    assert_eq!(u.out_verdict.val().to_u64(), w.verdict, "request {tag}");
    let response = u.out_response_valid.val().then(|| {
        (
            u.out_response_syndrome.val().to_u64() as u8,
            u.out_response_psn.val().to_u64() as u32,
            u.out_response_msn.val().to_u64() as u32,
        )
    });
    assert_eq!(response, w.response, "request {tag}");
    let packed: Bits<288> = u.out_context.val().into();
    assert_eq!(
        QpContextRecord::unpack(&record_words(packed)),
        w.record,
        "request {tag}"
    );
    let m = u.out_message.val();
    let message = [
        m.va.to_u64(),
        m.rkey.to_u64() | m.len.to_u64() << 32,
        m.offset.to_u64(),
    ];
    assert_eq!(message, w.message, "request {tag}");
    if let Some((va, rkey, len, whole)) = w.place {
        assert_eq!(
            (
                u.out_place_va.val().to_u64(),
                u.out_place_rkey.val().to_u64() as u32,
                u.out_place_len.val().to_u64() as u32,
            ),
            (va, rkey, len),
            "request {tag}"
        );
        if w.verdict == request_verdict::WRITE {
            assert_eq!(u.out_whole_len.val().to_u64() as u32, whole);
        }
    }
    if let Some(n) = w.npsn {
        assert_eq!(u.out_read_npsn.val().to_u64() as u32, n, "request {tag}");
    }
}

#[test]
fn every_verdict_back_to_back_one_cycle_later() {
    let mut sim = CycleSim::new(RequestChecker::default(), |b| &mut b.clock);
    sim.record();
    sim.uut.reset.next = true;
    drive(&mut sim, None, 0);
    sim.tick();
    sim.uut.reset.next = false;
    let cases = cases();
    for (n, (r, _)) in cases.iter().enumerate() {
        drive(&mut sim, Some(r), n as u64);
        sim.tick();
        sim.settle();
        check(&sim, &cases[n].1, n as u64);
    }
    drive(&mut sim, None, 0);
    sim.tick();
    sim.settle();
    assert!(!sim.uut.out_valid.val(), "no request, no outcome");
    let cycles = sim.replay_in_verilator("request_checker").unwrap();
    assert!(cycles >= cases.len());
}

#[test]
fn synthesizes_to_logic_without_memory() {
    let verilog = verilog_of::<RequestChecker>();
    let report = xilinx_synth("request_checker", &verilog).unwrap();
    assert!(
        report
            .cells
            .iter()
            .all(|(c, _)| !c.starts_with("RAM") && !c.starts_with("SRL")),
        "{}",
        report.log
    );
    // The outcome register: context and message words, placement and
    // pass-through; nothing else holds state.
    assert!(report.flip_flops() <= 1100, "{}", report.log);
    assert!(report.luts() > 0, "{}", report.log);
}
