//! The host-side configuration ports of the responder side, driven by
//! port name so that every Verilated block that has them (the responder
//! datapath, the responder path, a NIC core) is configured the same way:
//! QP context writes through `qp_host_*`, receive WQE posts through
//! `rq_post_*`, response-queue commands through `queue_host_*`, per-QP
//! addressing through `addr_*`. Each call runs the clock until its port
//! has taken the operation.

use super::qp_config::{qp_address, set_address};
use super::RtlError;
use rocenic_hdl::qp::qp_context_record::QpContextRecord;
use rocenic_model::nic::QpTxAttrs;
use rocenic_model::verbs::{Qpn, RecvWr, Sge};
use verilator_sys::{Block, Input, Output, Sim};

/// Ticks until `port` is high in a cycle (that cycle's edge included), at
/// most `limit` cycles.
fn tick_until<B: Block>(
    sim: &mut Sim<B>,
    port: Output<B>,
    limit: u32,
    what: &str,
) -> Result<(), RtlError> {
    for _ in 0..limit {
        sim.eval();
        let high = sim.get_bit(port);
        sim.tick();
        if high {
            return Ok(());
        }
    }
    Err(RtlError::Stuck {
        cycle: sim.cycle(),
        what: what.into(),
    })
}

/// Writes QP `qpn`'s whole context record through `qp_host_*` and waits
/// for `qp_host_done`.
pub fn write_context<B: Block>(
    sim: &mut Sim<B>,
    qpn: Qpn,
    record: &QpContextRecord,
) -> Result<(), RtlError> {
    write_context_at(sim, "qp_host", qpn, record)
}

/// [`write_context`] through the context port named `port` (a NIC core
/// has one per direction: `rsp_qp_host`, `req_qp_host`).
pub fn write_context_at<B: Block>(
    sim: &mut Sim<B>,
    port: &str,
    qpn: Qpn,
    record: &QpContextRecord,
) -> Result<(), RtlError> {
    let valid = B::input(&format!("{port}_valid"))?;
    let words = record
        .pack()
        .map_err(|e| RtlError::Unsupported(format!("QP {qpn} context: {e:?}")))?;
    let mut mask = [u64::MAX; 5];
    mask[4] = u64::from(u32::MAX);
    sim.set_bit(valid, true);
    sim.set_u64(B::input(&format!("{port}_qpn"))?, u64::from(qpn));
    sim.set(B::input(&format!("{port}_mask"))?, &mask);
    sim.set(B::input(&format!("{port}_data"))?, &words);
    let done = B::output(&format!("{port}_done"))?;
    tick_until(sim, done, 20, "qp_host_done")?;
    sim.set_bit(valid, false);
    sim.tick();
    Ok(())
}

/// The receive-WQE post port (`rq_post_*`): a WQE offered with `valid`
/// is taken in a cycle `ready` is high, and a few cycles later `done`
/// says whether its ring `accepted` it (low: full).
pub struct RecvPostPorts<B: Block> {
    valid: Input<B>,
    qpn: Input<B>,
    wr_id: Input<B>,
    lkey: Input<B>,
    va: Input<B>,
    len: Input<B>,
    ready: Output<B>,
    done: Output<B>,
    accepted: Output<B>,
}

impl<B: Block> RecvPostPorts<B> {
    pub fn named() -> Result<Self, RtlError> {
        let input = |n: &str| B::input(&format!("rq_post_{n}"));
        let output = |n: &str| B::output(&format!("rq_post_{n}"));
        Ok(RecvPostPorts {
            valid: input("valid")?,
            qpn: input("qpn")?,
            wr_id: input("wr_id")?,
            lkey: input("lkey")?,
            va: input("va")?,
            len: input("len")?,
            ready: output("ready")?,
            done: output("done")?,
            accepted: output("accepted")?,
        })
    }

    /// Offers `wr` of `qpn` this cycle, or nothing. The core takes one SGE
    /// (none: a zero-length buffer).
    pub fn drive(&self, sim: &mut Sim<B>, post: Option<(Qpn, &RecvWr)>) -> Result<(), RtlError> {
        let Some((qpn, wr)) = post else {
            sim.set_bit(self.valid, false);
            return Ok(());
        };
        if wr.sgl.len() > 1 {
            return Err(RtlError::Unsupported(format!(
                "receive WQE {} with {} SGEs (the core takes one)",
                wr.wr_id,
                wr.sgl.len()
            )));
        }
        let sge = wr.sgl.first().copied().unwrap_or(Sge {
            addr: 0,
            length: 0,
            lkey: 0,
        });
        sim.set_bit(self.valid, true);
        sim.set_u64(self.qpn, u64::from(qpn));
        sim.set_u64(self.wr_id, wr.wr_id);
        sim.set_u64(self.lkey, u64::from(sge.lkey));
        sim.set_u64(self.va, sge.addr);
        sim.set_u64(self.len, u64::from(sge.length));
        Ok(())
    }

    /// After `eval`: an offered WQE is taken at this edge.
    pub fn ready(&self, sim: &Sim<B>) -> bool {
        sim.get_bit(self.ready)
    }

    /// After `eval`: `Some(accepted)` in the cycle a taken WQE's result
    /// comes.
    pub fn result(&self, sim: &Sim<B>) -> Option<bool> {
        sim.get_bit(self.done).then(|| sim.get_bit(self.accepted))
    }
}

/// Posts one receive WQE (one SGE at most) through `rq_post_*` and waits
/// until it is in its ring; `Ok(false)` if the ring refused it (full).
pub fn post_recv<B: Block>(sim: &mut Sim<B>, qpn: Qpn, wr: &RecvWr) -> Result<bool, RtlError> {
    let port = RecvPostPorts::<B>::named()?;
    port.drive(sim, Some((qpn, wr)))?;
    tick_until(sim, port.ready, 1000, "rq_post_ready")?;
    port.drive(sim, None)?;
    for _ in 0..20 {
        sim.eval();
        if let Some(accepted) = port.result(sim) {
            sim.tick();
            return Ok(accepted);
        }
        sim.tick();
    }
    Err(RtlError::Stuck {
        cycle: sim.cycle(),
        what: "rq_post_done".into(),
    })
}

/// Sends one command through `queue_host_*` (the other fields zero) and
/// waits until it is accepted.
pub fn queue_command<B: Block>(
    sim: &mut Sim<B>,
    op: u64,
    qpn: Qpn,
    mtu_code: u64,
) -> Result<(), RtlError> {
    let input = |n: &str| B::input(&format!("queue_host_{n}"));
    for n in ["syndrome", "psn", "msn", "value", "rkey", "len"] {
        sim.set_u64(input(n)?, 0);
    }
    sim.set_u64(input("op")?, op);
    sim.set_u64(input("qpn")?, u64::from(qpn));
    sim.set_u64(input("mtu_code")?, mtu_code);
    sim.set_bit(input("valid")?, true);
    tick_until(sim, B::output("queue_host_ready")?, 100, "queue_host_ready")?;
    sim.set_bit(input("valid")?, false);
    Ok(())
}

/// Writes QP `qpn`'s entry of the per-QP address RAM (`addr_qpn`,
/// `addr_data`) from the model's attributes and the NIC's MAC, DSCP and
/// ECN setting ([`qp_address`]).
pub fn write_address<B: Block>(
    sim: &mut Sim<B>,
    qpn: Qpn,
    a: &QpTxAttrs,
    nic_mac: [u8; 6],
    dscp: u8,
    ecn_on: bool,
) -> Result<(), RtlError> {
    let write = B::input("addr_write")?;
    sim.set_u64(B::input("addr_qpn")?, u64::from(qpn));
    let entry = qp_address(qpn, a, nic_mac, dscp, ecn_on);
    set_address(sim, B::input("addr_data")?, &entry);
    sim.set_bit(write, true);
    sim.tick();
    sim.set_bit(write, false);
    Ok(())
}
