//! Two hosts, one RDMA WRITE: register memory, connect two QPs, write,
//! poll the completion, verify the bytes at the peer.
//!
//! `cargo run -p rocenic-driver --example rdma_write`
//!
//! The NICs here are the reference model behind the host ABI on the
//! simulated fabric; on a board only the device handles change.

use rocenic_driver::device::Device;
use rocenic_driver::model::{host_address, ModelCluster};
use rocenic_driver::verbs::{access, Context, Opcode, QpAttr, QpCap, SendWr, Sge};

const BYTES: usize = 4096;

/// The attributes of a connection to `peer` (host number and QPN);
/// `connect_rc` takes the QP through INIT, RTR and RTS with them.
fn towards(peer: u8, peer_qpn: u32) -> QpAttr {
    QpAttr {
        qp_access_flags: access::REMOTE_WRITE | access::REMOTE_READ,
        dest_qp_num: peer_qpn,
        ah: Some(host_address(peer)),
        ..QpAttr::default()
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let cluster = ModelCluster::new(2, 1, Default::default());
    let mut a = Context::open(cluster.device(1))?;
    let mut b = Context::open(cluster.device(2))?;

    let cap = QpCap {
        max_send_wr: 64,
        max_recv_wr: 64,
        max_send_sge: 2,
        max_recv_sge: 2,
        max_inline_data: 0,
    };
    let (pd_a, pd_b) = (a.alloc_pd()?, b.alloc_pd()?);
    let (cq_a, cq_b) = (a.create_cq(64)?, b.create_cq(64)?);
    let qp_a = a.create_qp(pd_a, cq_a, cq_a, cap)?;
    let qp_b = b.create_qp(pd_b, cq_b, cq_b, cap)?;

    let source = a.alloc(BYTES as u64)?;
    let target = b.alloc(BYTES as u64)?;
    let message: Vec<u8> = (0..BYTES).map(|i| (i * 7 + 3) as u8).collect();
    a.write(source, &message)?;
    let mr_a = a.reg_mr(pd_a, source, BYTES as u64, access::LOCAL_WRITE)?;
    let mr_b = b.reg_mr(
        pd_b,
        target,
        BYTES as u64,
        access::LOCAL_WRITE | access::REMOTE_WRITE,
    )?;

    a.connect_rc(qp_a, &towards(2, qp_b.qp_num))?;
    b.connect_rc(qp_b, &towards(1, qp_a.qp_num))?;

    let write = SendWr {
        wr_id: 42,
        opcode: Opcode::RdmaWrite {
            remote_addr: target,
            rkey: mr_b.rkey,
        },
        sg_list: vec![Sge {
            addr: source,
            length: BYTES as u32,
            lkey: mr_a.lkey,
        }],
        signaled: true,
        solicited: false,
        fence: false,
        inline: false,
    };
    a.post_send(qp_a, &write)?;
    let wc = a.wait_cq(cq_a, 1, 1_000_000)?;
    let arrived = b.read(target, BYTES)?;
    let done_ns = a.device().now_ns();
    println!(
        "wr_id {} {} {} at {} ns; {} bytes at the peer {}",
        wc[0].wr_id,
        wc[0].opcode,
        wc[0].status,
        done_ns,
        BYTES,
        if arrived == message {
            "match"
        } else {
            "DIFFER"
        }
    );
    if !wc[0].is_success() || arrived != message {
        return Err("the RDMA WRITE did not arrive intact".into());
    }
    Ok(())
}
