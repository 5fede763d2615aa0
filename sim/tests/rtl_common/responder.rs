//! The responder side's host ports in tests: the library's port drivers
//! (`rocenic_rtl::host_ports`) that panic on a stuck port, and the
//! receive CQE as a tuple for comparisons.

use rocenic_hdl::codes::{wc_opcode, wc_status};
use rocenic_hdl::qp::qp_context_record::QpContextRecord;
use rocenic_model::nic::QpTxAttrs;
use rocenic_model::verbs::{Cqe, Qpn, RecvWr};
use rocenic_rtl::host_ports;
use verilator_sys::{Block, Sim};

/// Writes QP `qpn`'s whole context record through `qp_host_*`.
pub fn write_context<B: Block>(sim: &mut Sim<B>, qpn: Qpn, record: &QpContextRecord) {
    host_ports::write_context(sim, qpn, record).expect("QP context write");
}

/// Posts receive WQEs through `rq_post_*`, in order, each accepted.
pub fn post_recvs<B: Block>(sim: &mut Sim<B>, recvs: &[(Qpn, RecvWr)]) {
    for (qpn, wr) in recvs {
        assert!(
            host_ports::post_recv(sim, *qpn, wr).expect("post"),
            "post accepted"
        );
    }
}

/// Sends one command through `queue_host_*` and waits until it is taken.
pub fn queue_command<B: Block>(sim: &mut Sim<B>, op: u64, qpn: Qpn, mtu_code: u64) {
    host_ports::queue_command(sim, op, qpn, mtu_code).expect("queue command");
}

/// Writes QP `qpn`'s entry of the per-QP address RAM.
pub fn write_address<B: Block>(
    sim: &mut Sim<B>,
    qpn: Qpn,
    a: &QpTxAttrs,
    nic_mac: [u8; 6],
    dscp: u8,
    ecn_on: bool,
) {
    host_ports::write_address(sim, qpn, a, nic_mac, dscp, ecn_on).expect("address write");
}

/// A receive CQE: qpn, wr_id, status, opcode, byte_len, immediate (as
/// `codes::{wc_status, wc_opcode}` code them).
pub type RtlCqe = (u64, u64, u64, u64, u64, Option<u64>);

pub fn model_cqe(c: &Cqe) -> RtlCqe {
    (
        u64::from(c.qpn),
        c.wr_id,
        wc_status::encode(c.status),
        wc_opcode::encode(c.opcode),
        u64::from(c.byte_len),
        c.imm.map(u64::from),
    )
}

/// The CQE on `cqe_*` (sampled after `eval`).
pub fn read_cqe<B: Block>(sim: &Sim<B>) -> RtlCqe {
    let get = |n: &str| sim.get_u64(B::output(&format!("cqe_{n}")).expect("cqe port"));
    (
        get("qpn"),
        get("wr_id"),
        get("status"),
        get("opcode"),
        get("byte_len"),
        (get("imm_valid") != 0).then(|| get("imm")),
    )
}
