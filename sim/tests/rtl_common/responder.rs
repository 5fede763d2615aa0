//! The responder side's host ports, driven by port name so that every
//! Verilated block that has them (the responder datapath, the responder
//! path, a NIC core) is configured the same way: QP context writes through
//! `qp_host_*`, receive WQE posts through `rq_post_*`, receive CQEs from
//! `cqe_*`, response-queue commands through `queue_host_*`, per-QP
//! addressing through `addr_*`.

use rocenic_hdl::qp_context_record::QpContextRecord;
use rocenic_model::nic::QpTxAttrs;
use rocenic_model::verbs::{Cqe, Qpn, RecvWr, Sge};
use rocenic_wire::{ecn, udp_src_port};
use std::net::IpAddr;
use verilator_sys::{Block, Sim};

/// An IP address as the RTL's 128-bit field holds it (IPv4 in the low 32
/// bits).
pub fn ip_bits(ip: IpAddr) -> u128 {
    match ip {
        IpAddr::V4(a) => u128::from(u32::from(a)),
        IpAddr::V6(a) => u128::from(a),
    }
}

/// A MAC address as a 48-bit field (first octet most significant).
pub fn mac_bits(m: [u8; 6]) -> u64 {
    m.iter().fold(0u64, |acc, &b| acc << 8 | u64::from(b))
}

/// Writes QP `qpn`'s whole context record through `qp_host_*` and waits
/// for `qp_host_done`.
pub fn write_context<B: Block>(sim: &mut Sim<B>, qpn: Qpn, record: &QpContextRecord) {
    let valid = B::input("qp_host_valid").expect("qp_host_valid");
    let words = record.pack().expect("record fits");
    let mut mask = [u64::MAX; 5];
    mask[4] = u64::from(u32::MAX);
    sim.set_bit(valid, true);
    sim.set_u64(B::input("qp_host_qpn").expect("qpn"), u64::from(qpn));
    sim.set(B::input("qp_host_mask").expect("mask"), &mask);
    sim.set(B::input("qp_host_data").expect("data"), &words);
    let done = B::output("qp_host_done").expect("qp_host_done");
    for _ in 0..20 {
        sim.eval();
        let finished = sim.get_bit(done);
        sim.tick();
        if finished {
            sim.set_bit(valid, false);
            sim.tick();
            return;
        }
    }
    panic!("QP {qpn}: context write never done");
}

/// Posts receive WQEs (one SGE at most) through `rq_post_*`, in order,
/// each accepted into its ring.
pub fn post_recvs<B: Block>(sim: &mut Sim<B>, recvs: &[(Qpn, RecvWr)]) {
    let input = |n: &str| B::input(&format!("rq_post_{n}")).expect("rq_post port");
    let output = |n: &str| B::output(&format!("rq_post_{n}")).expect("rq_post port");
    for (qpn, wr) in recvs {
        assert!(wr.sgl.len() <= 1, "one SGE per receive WQE");
        let sge = wr.sgl.first().copied().unwrap_or(Sge {
            addr: 0,
            length: 0,
            lkey: 0,
        });
        sim.set_bit(input("valid"), true);
        sim.set_u64(input("qpn"), u64::from(*qpn));
        sim.set_u64(input("wr_id"), wr.wr_id);
        sim.set_u64(input("lkey"), u64::from(sge.lkey));
        sim.set_u64(input("va"), sge.addr);
        sim.set_u64(input("len"), u64::from(sge.length));
        let mut waited = 0;
        loop {
            sim.eval();
            let taken = sim.get_bit(output("ready"));
            sim.tick();
            if taken {
                break;
            }
            waited += 1;
            assert!(waited < 1000, "post never taken");
        }
        sim.set_bit(input("valid"), false);
        let mut waited = 0;
        loop {
            sim.eval();
            if sim.get_bit(output("done")) {
                assert!(sim.get_bit(output("accepted")), "post accepted");
                sim.tick();
                break;
            }
            sim.tick();
            waited += 1;
            assert!(waited < 20, "post never done");
        }
    }
}

/// A receive CQE: qpn, wr_id, status, opcode, byte_len, immediate (codes
/// of the model's enums in declaration order).
pub type RtlCqe = (u64, u64, u64, u64, u64, Option<u64>);

pub fn model_cqe(c: &Cqe) -> RtlCqe {
    (
        u64::from(c.qpn),
        c.wr_id,
        c.status as u64,
        c.opcode as u64,
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

/// Sends one command through `queue_host_*` (the other fields zero) and
/// waits until it is accepted.
pub fn queue_command<B: Block>(sim: &mut Sim<B>, op: u64, qpn: Qpn, mtu_code: u64) {
    let input = |n: &str| B::input(&format!("queue_host_{n}")).expect("queue_host port");
    for n in ["syndrome", "psn", "msn", "value", "rkey", "len"] {
        sim.set_u64(input(n), 0);
    }
    sim.set_u64(input("op"), op);
    sim.set_u64(input("qpn"), u64::from(qpn));
    sim.set_u64(input("mtu_code"), mtu_code);
    sim.set_bit(input("valid"), true);
    let ready = B::output("queue_host_ready").expect("queue_host_ready");
    for _ in 0..100 {
        sim.eval();
        let taken = sim.get_bit(ready);
        sim.tick();
        if taken {
            sim.set_bit(input("valid"), false);
            return;
        }
    }
    panic!("queue command {op} of QP {qpn} never accepted");
}

/// Writes QP `qpn`'s entry of the per-QP address RAM (`addr_*`) from the
/// model's attributes and the NIC's MAC, DSCP and ECN setting, as the
/// response transmitter's descriptor takes them.
pub fn write_address<B: Block>(
    sim: &mut Sim<B>,
    qpn: Qpn,
    a: &QpTxAttrs,
    nic_mac: [u8; 6],
    dscp: u8,
    ecn_on: bool,
) {
    let input = |n: &str| B::input(&format!("addr_{n}")).expect("addr port");
    let wide = |v: u128| [v as u64, (v >> 64) as u64];
    sim.set_u64(input("qpn"), u64::from(qpn));
    sim.set_u64(input("pd"), u64::from(a.pd.0));
    sim.set_u64(input("dest_qp"), u64::from(a.dest_qpn));
    sim.set_u64(input("pkey"), u64::from(a.pkey));
    sim.set_u64(input("eth_dst"), mac_bits(a.remote_mac));
    sim.set_u64(input("eth_src"), mac_bits(nic_mac));
    sim.set_bit(input("ipv6"), matches!(a.local_ip, IpAddr::V6(_)));
    sim.set(input("ip_src"), &wide(ip_bits(a.local_ip)));
    sim.set(input("ip_dst"), &wide(ip_bits(a.remote_ip)));
    sim.set_u64(input("dscp"), u64::from(dscp & 0x3F));
    sim.set_u64(
        input("ecn"),
        u64::from(if ecn_on { ecn::ECT0 } else { ecn::NOT_ECT }),
    );
    sim.set_u64(
        input("udp_src_port"),
        u64::from(udp_src_port(qpn, a.dest_qpn)),
    );
    sim.set_bit(input("write"), true);
    sim.tick();
    sim.set_bit(input("write"), false);
}
