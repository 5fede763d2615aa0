//! The admin queue: commands fetched from the submission ring in order,
//! each run to its end and answered by one completion in the completion
//! ring (`rocenic_abi::admin`).

use super::event_queues::EventQueues;
use super::work_queues::{CqRing, QpRings, Ring, WorkQueues};
use crate::nic::Nic;
use crate::verbs::{Access, CqId, ModifyQp, PdId, QpCaps, QpState, RemoteAddress, VerbsError};
use rocenic_abi::admin::{self, completion, inputs, qp_attributes as attr};
use rocenic_abi::codes;
use rocenic_abi::layout::Field;
use rocenic_abi::registers::limits;
use rocenic_abi::{cqe, wqe};

/// Where the two rings are (the admin block's registers).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AdminRings {
    pub asq_base: u64,
    pub asq_log_size: u32,
    pub acq_base: u64,
    pub acq_log_size: u32,
}

/// The queue's indexes (mod 2^16).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AdminQueue {
    tail: u16,
    head: u16,
    completed: u16,
    consumed: u16,
}

/// An admin status by its ABI name.
fn status(name: &str) -> u8 {
    admin::STATUS.value_of(name) as u8
}

type AdminResult = Result<u32, u8>;

fn verbs_status(e: VerbsError) -> u8 {
    status(match e {
        VerbsError::NoSuchQp(_)
        | VerbsError::NoSuchCq(_)
        | VerbsError::NoSuchPd(_)
        | VerbsError::NoSuchMr(_) => "NO_SUCH_OBJECT",
        VerbsError::WrongQpState { .. } => "BAD_STATE",
        VerbsError::Busy => "BUSY",
        VerbsError::NoResources => "NO_RESOURCES",
        VerbsError::InvalidAttribute(_) | VerbsError::QueueFull | VerbsError::TooManySges => {
            "BAD_PARAMETER"
        }
    })
}

impl AdminQueue {
    /// Commands the device has taken (`asq_head`).
    pub fn head(&self) -> u16 {
        self.head
    }

    /// `asq_tail` written.
    pub fn ring_tail(&mut self, tail: u16) {
        self.tail = tail;
    }

    /// `acq_head` written.
    pub fn consumed(&mut self, head: u16) {
        self.consumed = head;
    }

    /// Runs the commands rung so far while the completion ring has room;
    /// returns the tokens of those completed.
    pub fn run(
        &mut self,
        rings: AdminRings,
        nic: &mut Nic,
        queues: &mut WorkQueues,
        eqs: &mut EventQueues,
    ) -> Vec<u32> {
        let mut done = Vec::new();
        if !(1..=12).contains(&rings.asq_log_size) || rings.acq_log_size != rings.asq_log_size {
            return done;
        }
        let size = 1u16 << rings.asq_log_size;
        while self.head != self.tail && self.completed.wrapping_sub(self.consumed) < size {
            let slot = u64::from(self.head % size);
            let mut command = [0u8; admin::COMMAND.size];
            nic.memory().read_phys(
                rings.asq_base + slot * admin::COMMAND.size as u64,
                &mut command,
            );
            let outcome = execute(&command, nic, queues, eqs);
            let mut entry = [0u8; completion::LAYOUT.size];
            let get = |f: &Field| f.get(&command).unwrap_or(0);
            completion::TOKEN.put(&mut entry, get(&admin::TOKEN));
            match outcome {
                Ok(result) => completion::RESULT.put(&mut entry, u64::from(result)),
                Err(s) => completion::STATUS.put(&mut entry, u64::from(s)),
            }
            completion::OWNER.put(
                &mut entry,
                cqe::owner_for(u64::from(self.completed), rings.acq_log_size),
            );
            let at = u64::from(self.completed % size) * completion::LAYOUT.size as u64;
            nic.memory_mut().write_phys(rings.acq_base + at, &entry);
            self.head = self.head.wrapping_add(1);
            self.completed = self.completed.wrapping_add(1);
            done.push(get(&admin::TOKEN) as u32);
        }
        done
    }
}

/// A mailbox of `len` bytes at bus address `at`.
fn mailbox(nic: &Nic, at: u64, len: usize) -> Result<Vec<u8>, u8> {
    if at == 0 {
        return Err(status("BAD_PARAMETER"));
    }
    let mut buf = vec![0; len];
    nic.memory().read_phys(at, &mut buf);
    Ok(buf)
}

fn execute(
    command: &[u8],
    nic: &mut Nic,
    queues: &mut WorkQueues,
    eqs: &mut EventQueues,
) -> AdminResult {
    let get = |f: &Field| f.get(command).unwrap_or(0);
    let opcode = admin::OPCODE
        .by_value(get(&admin::OPCODE_FIELD))
        .map(|c| c.name)
        .unwrap_or("");
    let u32_of = |f: &Field| get(f) as u32;
    match opcode {
        "CREATE_PD" => Ok(nic.alloc_pd().0),
        "DESTROY_PD" => nic
            .dealloc_pd(PdId(u32_of(&inputs::PDN)))
            .map(|()| 0)
            .map_err(verbs_status),
        "REG_MR" => reg_mr(command, nic),
        "DEREG_MR" => nic
            .dereg_mr(u32_of(&inputs::KEY))
            .map(|()| 0)
            .map_err(verbs_status),
        "CREATE_CQ" => {
            let log_size = u32_of(&inputs::create_cq::LOG_SIZE);
            let ring = get(&inputs::create_cq::RING);
            let eqn = u32_of(&inputs::create_cq::EQN);
            if !(1..=limits::LOG_MAX_CQE).contains(&log_size) || !ring.is_multiple_of(4096) {
                return Err(status("BAD_PARAMETER"));
            }
            if !eqs.exists(eqn) {
                return Err(status("NO_SUCH_OBJECT"));
            }
            let cq = nic.create_cq(1 << log_size);
            if cq.0 >= limits::CQS {
                nic.destroy_cq(cq).map_err(verbs_status)?;
                return Err(status("NO_RESOURCES"));
            }
            queues.add_cq(cq, CqRing::new(ring, log_size, eqn));
            Ok(cq.0)
        }
        "DESTROY_CQ" => {
            let cq = CqId(u32_of(&inputs::CQN));
            nic.destroy_cq(cq).map_err(verbs_status)?;
            queues.remove_cq(cq);
            Ok(0)
        }
        "CREATE_QP" => create_qp(command, nic, queues),
        "MODIFY_QP" => modify_qp(command, nic, queues),
        "QUERY_QP" => query_qp(command, nic),
        "DESTROY_QP" => {
            let qpn = u32_of(&inputs::QPN);
            nic.destroy_qp(qpn).map_err(verbs_status)?;
            queues.remove_qp(qpn);
            Ok(0)
        }
        "CREATE_EQ" => {
            use inputs::create_eq::*;
            let log_size = u32_of(&LOG_SIZE);
            let vector = get(&VECTOR);
            let ring = get(&RING);
            let fits = (1..=23).contains(&log_size)
                && vector < u64::from(limits::MSIX_VECTORS)
                && ring.is_multiple_of(4096);
            if !fits {
                return Err(status("BAD_PARAMETER"));
            }
            eqs.create(ring, log_size, vector as u16)
                .ok_or(status("NO_RESOURCES"))
        }
        "DESTROY_EQ" => {
            let eqn = u32_of(&inputs::EQN);
            if queues.eq_in_use(eqn) {
                return Err(status("BUSY"));
            }
            eqs.destroy(eqn)
                .then_some(0)
                .ok_or(status("NO_SUCH_OBJECT"))
        }
        _ => Err(status("BAD_OPCODE")),
    }
}

fn reg_mr(command: &[u8], nic: &mut Nic) -> AdminResult {
    use inputs::reg_mr::*;
    let get = |f: &Field| f.get(command).unwrap_or(0);
    let page_shift = get(&PAGE_SHIFT);
    let count = get(&PAGE_COUNT) as usize;
    if !(12..=30).contains(&page_shift) || count == 0 || count > limits::MTT_ENTRIES as usize {
        return Err(status("BAD_PARAMETER"));
    }
    let list = mailbox(nic, get(&admin::IN_MAILBOX), 8 * count)?;
    let pages: Vec<u64> = list
        .chunks_exact(8)
        .map(|p| u64::from_le_bytes(p.try_into().expect("8-byte chunks")))
        .collect();
    nic.reg_mr_pages(
        PdId(get(&PDN) as u32),
        get(&VA),
        get(&LENGTH),
        Access(get(&ACCESS) as u8),
        1 << page_shift,
        &pages,
    )
    .map(|keys| keys.lkey)
    .map_err(verbs_status)
}

fn create_qp(command: &[u8], nic: &mut Nic, queues: &mut WorkQueues) -> AdminResult {
    use inputs::create_qp::*;
    let get = |f: &Field| f.get(command).unwrap_or(0);
    let ring = |base: &Field, log_size: &Field, log_stride: &Field| {
        let ring = Ring {
            base: get(base),
            log_size: get(log_size) as u32,
            log_stride: get(log_stride) as u32,
        };
        let fits = (1..=limits::LOG_MAX_QP_WR).contains(&ring.log_size)
            && wqe::LOG_STRIDES.contains(&ring.log_stride)
            && ring.base.is_multiple_of(4096);
        fits.then_some(ring).ok_or(status("BAD_PARAMETER"))
    };
    let sq = ring(&SQ_RING, &SQ_LOG_SIZE, &SQ_LOG_STRIDE)?;
    let rq = ring(&RQ_RING, &RQ_LOG_SIZE, &RQ_LOG_STRIDE)?;
    let (send_cq, recv_cq) = (CqId(get(&SEND_CQN) as u32), CqId(get(&RECV_CQN) as u32));
    let caps = QpCaps {
        max_send_wr: 1 << sq.log_size,
        max_recv_wr: 1 << rq.log_size,
        max_sge: (wqe::send::max_sge(sq.log_stride)).max(wqe::recv::max_sge(rq.log_stride)) as u32,
    };
    let qpn = nic
        .create_qp(PdId(get(&PDN) as u32), send_cq, recv_cq, caps)
        .map_err(verbs_status)?;
    if qpn >= limits::QPS {
        nic.destroy_qp(qpn).map_err(verbs_status)?;
        return Err(status("NO_RESOURCES"));
    }
    queues.add_qp(qpn, QpRings::new(sq, rq, send_cq, recv_cq));
    Ok(qpn)
}

/// The `mtu` code of a path MTU in bytes, and back.
fn mtu_bytes(code: u64) -> Option<u32> {
    (1..=5).contains(&code).then(|| 128 << code)
}

fn modify_qp(command: &[u8], nic: &mut Nic, queues: &mut WorkQueues) -> AdminResult {
    use inputs::modify_qp::*;
    let qpn = QPN.get(command).unwrap_or(0) as u32;
    let mask = ATTR_MASK.get(command).unwrap_or(0);
    let a = mailbox(
        nic,
        admin::IN_MAILBOX.get(command).unwrap_or(0),
        attr::LAYOUT.size,
    )?;
    let get = |f: &Field| f.get(&a).unwrap_or(0);
    let bit = |name: &str| codes::QP_ATTR_MASK.value_of(name);
    let has = |names: &[&str]| names.iter().all(|n| mask & bit(n) != 0);
    if !has(&["STATE"]) {
        return Err(status("BAD_PARAMETER"));
    }
    let current = nic.qp_state(qpn).map_err(verbs_status)?;
    let target = codes::QP_STATE
        .by_value(get(&attr::STATE))
        .map(|c| c.name)
        .ok_or(status("BAD_PARAMETER"))?;
    let missing = || status("BAD_PARAMETER");
    let change = match (current, target) {
        (_, "ERR") => ModifyQp::ToErr,
        (_, "RESET") => ModifyQp::ToReset,
        (QpState::Reset, "INIT") => {
            if !has(&["ACCESS_FLAGS", "PKEY_INDEX"]) {
                return Err(missing());
            }
            ModifyQp::ToInit {
                access: Access(get(&attr::ACCESS) as u8),
                pkey: get(&attr::PKEY) as u16,
            }
        }
        (QpState::Init, "RTR") => {
            let required = [
                "AV",
                "PATH_MTU",
                "DEST_QPN",
                "RQ_PSN",
                "MAX_DEST_RD_ATOMIC",
                "MIN_RNR_TIMER",
            ];
            if !has(&required) {
                return Err(missing());
            }
            let dgid = attr::LAYOUT.areas[1].get(&a).map_err(|_| missing())?;
            let dgid: [u8; 16] = dgid.try_into().map_err(|_| missing())?;
            ModifyQp::ToRtr {
                remote: RemoteAddress {
                    mac: attr::mac_of(get(&attr::DMAC)),
                    ip: attr::address_of_gid(dgid, get(&attr::IPV6) != 0),
                },
                dest_qpn: get(&attr::DEST_QPN) as u32,
                rq_psn: get(&attr::RQ_PSN) as u32,
                path_mtu: mtu_bytes(get(&attr::PATH_MTU)).ok_or(missing())?,
                max_dest_rd_atomic: get(&attr::MAX_DEST_RD_ATOMIC) as u8,
                min_rnr_timer: get(&attr::MIN_RNR_TIMER) as u8,
            }
        }
        (QpState::Rtr, "RTS") => {
            let required = [
                "SQ_PSN",
                "TIMEOUT",
                "RETRY_CNT",
                "RNR_RETRY",
                "MAX_QP_RD_ATOMIC",
            ];
            if !has(&required) {
                return Err(missing());
            }
            ModifyQp::ToRts {
                sq_psn: get(&attr::SQ_PSN) as u32,
                timeout: get(&attr::TIMEOUT) as u8,
                retry_cnt: get(&attr::RETRY_CNT) as u8,
                rnr_retry: get(&attr::RNR_RETRY) as u8,
                max_rd_atomic: get(&attr::MAX_RD_ATOMIC) as u8,
            }
        }
        _ => return Err(status("BAD_STATE")),
    };
    let into_reset = matches!(change, ModifyQp::ToReset);
    nic.modify_qp(qpn, change).map_err(verbs_status)?;
    if into_reset {
        queues.reset_qp(qpn);
    }
    Ok(0)
}

fn query_qp(command: &[u8], nic: &mut Nic) -> AdminResult {
    let qpn = inputs::QPN.get(command).unwrap_or(0) as u32;
    let out = admin::OUT_MAILBOX.get(command).unwrap_or(0);
    if out == 0 {
        return Err(status("BAD_PARAMETER"));
    }
    let view = nic.qp_context(qpn).ok_or(status("NO_SUCH_OBJECT"))?;
    let mut a = [0u8; attr::LAYOUT.size];
    let state = match view.state {
        QpState::Reset => "RESET",
        QpState::Init => "INIT",
        QpState::Rtr => "RTR",
        QpState::Rts => "RTS",
        QpState::Err => "ERR",
    };
    attr::STATE.put(&mut a, codes::QP_STATE.value_of(state));
    let mtu_code = (1..=5u64)
        .find(|&c| mtu_bytes(c) == Some(view.mtu))
        .unwrap_or(0);
    for (field, value) in [
        (&attr::PATH_MTU, mtu_code),
        (&attr::TIMEOUT, u64::from(view.timeout)),
        (&attr::RETRY_CNT, u64::from(view.retry_cnt)),
        (&attr::RNR_RETRY, u64::from(view.rnr_retry)),
        (&attr::MIN_RNR_TIMER, u64::from(view.min_rnr_timer)),
        (&attr::MAX_RD_ATOMIC, u64::from(view.max_rd_atomic)),
        (
            &attr::MAX_DEST_RD_ATOMIC,
            u64::from(view.max_dest_rd_atomic),
        ),
        (&attr::ACCESS, u64::from(view.access)),
        (&attr::PKEY, u64::from(view.pkey)),
        (&attr::DEST_QPN, u64::from(view.dest_qpn)),
        (&attr::RQ_PSN, u64::from(view.rq_epsn)),
        (&attr::SQ_PSN, u64::from(view.sq_next_psn)),
        (&attr::SMAC, attr::mac_value(nic.config().mac)),
    ] {
        field.put(&mut a, value);
    }
    if let Some(tx) = nic.qp_tx_attrs(qpn) {
        attr::DMAC.put(&mut a, attr::mac_value(tx.remote_mac));
        attr::IPV6.put(&mut a, u64::from(tx.remote_ip.is_ipv6()));
        let [sgid, dgid] = [attr::LAYOUT.areas[0], attr::LAYOUT.areas[1]];
        sgid.set(&mut a, &attr::gid_of(tx.local_ip))
            .expect("16-byte GID");
        dgid.set(&mut a, &attr::gid_of(tx.remote_ip))
            .expect("16-byte GID");
    }
    nic.memory_mut().write_phys(out, &a);
    Ok(0)
}
