//! The message workload of the RTL halves on the fabric (`nic_requester`,
//! `nic_responder`): connected QP pairs from a requester NIC `a` to a
//! responder NIC `b` with a buffer on each side, and random messages over
//! them. Both tests draw from one seeded RNG in this order, so a case's
//! seed gives the same workload in either.

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rocenic_model::mr::MrKeys;
use rocenic_model::nic::Nic;
use rocenic_model::verbs::{Access, CqId, QpCaps, Qpn};
use rocenic_sim::scenario::{connect, ScenarioConfig};

/// One QP pair's buffers: `(va_a, keys_a, va_b, keys_b, data, b_init)`,
/// the requester's buffer and its keys, the responder's and its keys, the
/// message bytes the requester's buffer starts with and the bytes the
/// responder's starts with.
pub type QpBuffers = (u64, MrKeys, u64, MrKeys, Vec<u8>, Vec<u8>);

/// The QP pairs, in order, with their CQs (one per side) and buffers.
pub struct MessageQps {
    pub a_cq: CqId,
    pub b_cq: CqId,
    pub qpns: Vec<(Qpn, Qpn)>,
    pub bufs: Vec<QpBuffers>,
}

/// `qps` QP pairs from `a` to `b` connected as `config` says, each
/// taking `msgs` WQEs a queue, with a `region`-byte buffer on both sides
/// filled with random bytes; the responder's is open to remote writes,
/// READs and atomics.
pub fn connected_qps(
    a: &mut Nic,
    b: &mut Nic,
    qps: usize,
    msgs: usize,
    region: u64,
    config: &ScenarioConfig,
    rng: &mut ChaCha8Rng,
) -> MessageQps {
    let caps = QpCaps {
        max_send_wr: msgs as u32,
        max_recv_wr: msgs as u32,
        max_sge: 1,
    };
    let (a_pd, b_pd) = (a.alloc_pd(), b.alloc_pd());
    let (a_cq, b_cq) = (a.create_cq(4096), b.create_cq(4096));
    let mut qpns = Vec::new();
    let mut bufs = Vec::new();
    for _ in 0..qps {
        let qa = a.create_qp(a_pd, a_cq, a_cq, caps).unwrap();
        let qb = b.create_qp(b_pd, b_cq, b_cq, caps).unwrap();
        connect(a, qa, b, qb, config, rng).unwrap();
        let va_a = a.memory_mut().alloc(region, 4096);
        let data: Vec<u8> = (0..region).map(|_| rng.gen()).collect();
        a.memory_mut().write_va(va_a, &data).unwrap();
        let keys_a = a.reg_mr(a_pd, va_a, region, Access::LOCAL_WRITE).unwrap();
        let va_b = b.memory_mut().alloc(region, 4096);
        // READs bring these bytes back; writes and SENDs overwrite others.
        let b_init: Vec<u8> = (0..region).map(|_| rng.gen()).collect();
        b.memory_mut().write_va(va_b, &b_init).unwrap();
        let keys_b = b
            .reg_mr(
                b_pd,
                va_b,
                region,
                Access::LOCAL_WRITE
                    | Access::REMOTE_WRITE
                    | Access::REMOTE_READ
                    | Access::REMOTE_ATOMIC,
            )
            .unwrap();
        qpns.push((qa, qb));
        bufs.push((va_a, keys_a, va_b, keys_b, data, b_init));
    }
    MessageQps {
        a_cq,
        b_cq,
        qpns,
        bufs,
    }
}

/// A message of kind `K` on QP pair `qp`.
pub struct Message<K> {
    pub qp: usize,
    pub kind: K,
    /// Offset of the message in its QP's buffers on both sides.
    pub offset: u64,
    pub len: u64,
}

/// `msgs` rounds of one message on each of `qps` QPs, round `i` at offset
/// `i * slot`: a kind drawn from `kinds`, a length biased to the edges
/// (up to 64 bytes, whole MTUs, anything up to the slot) or 8 bytes for
/// an `atomic` kind.
pub fn random_messages<K: Copy>(
    rng: &mut ChaCha8Rng,
    msgs: usize,
    qps: usize,
    mtu: u32,
    slot: u64,
    kinds: &[K],
    atomic: impl Fn(K) -> bool,
) -> Vec<Message<K>> {
    let mut messages = Vec::new();
    for i in 0..msgs {
        for q in 0..qps {
            let len = match rng.gen_range(0..4) {
                0 => rng.gen_range(0..=64),
                1 => u64::from(mtu) * rng.gen_range(1..=3),
                _ => rng.gen_range(1..=slot),
            };
            let kind = kinds[rng.gen_range(0..kinds.len())];
            messages.push(Message {
                qp: q,
                kind,
                offset: i as u64 * slot,
                len: if atomic(kind) { 8 } else { len },
            });
        }
    }
    messages
}
