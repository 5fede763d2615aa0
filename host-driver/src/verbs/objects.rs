//! Creating, changing and destroying the objects: PDs, MRs, CQs and QPs,
//! each by one admin command.

use super::*;

impl<D: Device> Context<D> {
    /// `ibv_alloc_pd`.
    pub fn alloc_pd(&mut self) -> Result<Pd> {
        self.admin("CREATE_PD", |_| {}, None, false).map(Pd)
    }

    /// `ibv_dealloc_pd`: refused while an MR or QP uses it.
    pub fn dealloc_pd(&mut self, pd: Pd) -> Result<()> {
        let in_use = self.mrs.values().any(|m| m.pd == pd) || self.qps.values().any(|q| q.pd == pd);
        if in_use {
            return Err(Error::Busy("the PD is still used by an MR or a QP"));
        }
        self.admin_destroy("DESTROY_PD", inputs::PDN, pd.0)
            .map(drop)
    }

    /// `ibv_reg_mr` of `[addr, addr + length)` of memory from
    /// [`Context::alloc`].
    pub fn reg_mr(&mut self, pd: Pd, addr: u64, length: u64, access_flags: u8) -> Result<Mr> {
        use access::*;
        if access_flags & !(LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ | REMOTE_ATOMIC) != 0 {
            return Err(Error::BadAttribute("unknown access flags"));
        }
        if access_flags & (REMOTE_WRITE | REMOTE_ATOMIC) != 0 && access_flags & LOCAL_WRITE == 0 {
            return Err(Error::BadAttribute(
                "remote write or atomic access needs local write",
            ));
        }
        if length == 0 {
            return Err(Error::BadAttribute("a zero-length MR"));
        }
        let (page_size, pages) = self.device().pin(addr, length)?;
        let list: Vec<u8> = pages.iter().flat_map(|p| p.to_le_bytes()).collect();
        let key = self.admin(
            "REG_MR",
            |c| {
                use inputs::reg_mr::*;
                PDN.put(c, u64::from(pd.0));
                ACCESS.put(c, u64::from(access_flags));
                PAGE_SHIFT.put(c, u64::from(page_size.trailing_zeros()));
                PAGE_COUNT.put(c, pages.len() as u64);
                VA.put(c, addr);
                LENGTH.put(c, length);
            },
            Some(&list),
            false,
        )?;
        let mr = Mr {
            pd,
            addr,
            length,
            lkey: key,
            rkey: key,
            access: access_flags,
        };
        self.mrs.insert(key, mr);
        Ok(mr)
    }

    /// `ibv_dereg_mr`: once it returns, no access through the key
    /// succeeds.
    pub fn dereg_mr(&mut self, mr: Mr) -> Result<()> {
        self.admin_destroy("DEREG_MR", inputs::KEY, mr.lkey)?;
        self.mrs.remove(&mr.lkey);
        Ok(())
    }

    /// `ibv_create_cq` with at least `cqe` entries.
    pub fn create_cq(&mut self, cqe: u32) -> Result<Cq> {
        let log_size = cqe.max(2).next_power_of_two().trailing_zeros();
        if log_size > regs::limits::LOG_MAX_CQE {
            return Err(Error::BadAttribute("more CQEs than the device's max_cqe"));
        }
        let bytes = (cqe::LAYOUT.size as u64) << log_size;
        let (va, bus) = self.device().alloc_coherent(bytes)?;
        self.device().write(va, &vec![0; bytes as usize])?;
        let eqn = self.eqn;
        let cqn = self.admin(
            "CREATE_CQ",
            |c| {
                inputs::create_cq::LOG_SIZE.put(c, u64::from(log_size));
                inputs::create_cq::EQN.put(c, u64::from(eqn));
                inputs::create_cq::RING.put(c, bus);
            },
            None,
            false,
        )?;
        let ring = RingMemory {
            va,
            bus,
            log_size,
            log_stride: cqe::LAYOUT.size.trailing_zeros(),
        };
        self.cqs.insert(cqn, CqRing { ring, consumer: 0 });
        Ok(Cq {
            cqn,
            cqe: 1 << log_size,
        })
    }

    /// `ibv_destroy_cq`: refused while a QP uses it.
    pub fn destroy_cq(&mut self, cq: Cq) -> Result<()> {
        if self
            .qps
            .values()
            .any(|q| q.send_cq == cq.cqn || q.recv_cq == cq.cqn)
        {
            return Err(Error::Busy("the CQ is still used by a QP"));
        }
        self.admin_destroy("DESTROY_CQ", inputs::CQN, cq.cqn)?;
        self.cqs.remove(&cq.cqn);
        Ok(())
    }

    /// `ibv_create_qp` of an RC QP, in RESET.
    pub fn create_qp(&mut self, pd: Pd, send_cq: Cq, recv_cq: Cq, cap: QpCap) -> Result<Qp> {
        for cq in [send_cq, recv_cq] {
            if !self.cqs.contains_key(&cq.cqn) {
                return Err(Error::NoSuchObject("CQ", cq.cqn));
            }
        }
        let stride = |sges: u32, max_sge: fn(u32) -> usize, inline: u32| {
            wqe::LOG_STRIDES
                .into_iter()
                .find(|&s| {
                    sges as usize <= max_sge(s) && inline as usize <= wqe::send::max_inline(s)
                })
                .ok_or(Error::BadAttribute(
                    "more SGEs or inline bytes than a WQE holds",
                ))
        };
        if cap.max_inline_data > self.attr.max_inline_data {
            return Err(Error::BadAttribute(
                "max_inline_data beyond the device's cap_max_inline",
            ));
        }
        let sq_stride = stride(cap.max_send_sge, wqe::send::max_sge, cap.max_inline_data)?;
        let rq_stride = stride(cap.max_recv_sge, wqe::recv::max_sge, 0)?;
        let log_size = |wr: u32| {
            let log = wr.max(1).next_power_of_two().trailing_zeros();
            (wr != 0 && log <= regs::limits::LOG_MAX_QP_WR)
                .then_some(log.max(1))
                .ok_or(Error::BadAttribute("work requests: 1 ..= max_qp_wr"))
        };
        let (sq_log, rq_log) = (log_size(cap.max_send_wr)?, log_size(cap.max_recv_wr)?);
        let mut ring = |log_size: u32, log_stride: u32| -> Result<RingMemory> {
            let bytes = 1u64 << (log_size + log_stride);
            let (va, bus) = self.device().alloc_coherent(bytes)?;
            self.device().write(va, &vec![0; bytes as usize])?;
            Ok(RingMemory {
                va,
                bus,
                log_size,
                log_stride,
            })
        };
        let sq = ring(sq_log, sq_stride)?;
        let rq = ring(rq_log, rq_stride)?;
        let qpn = self.admin(
            "CREATE_QP",
            |c| {
                use inputs::create_qp::*;
                PDN.put(c, u64::from(pd.0));
                SEND_CQN.put(c, u64::from(send_cq.cqn));
                RECV_CQN.put(c, u64::from(recv_cq.cqn));
                SQ_LOG_SIZE.put(c, u64::from(sq.log_size));
                SQ_LOG_STRIDE.put(c, u64::from(sq.log_stride));
                RQ_LOG_SIZE.put(c, u64::from(rq.log_size));
                RQ_LOG_STRIDE.put(c, u64::from(rq.log_stride));
                SQ_RING.put(c, sq.bus);
                RQ_RING.put(c, rq.bus);
            },
            None,
            false,
        )?;
        self.qps.insert(
            qpn,
            QpRings {
                state: QpState::Reset,
                send_cq: send_cq.cqn,
                recv_cq: recv_cq.cqn,
                pd,
                sq: WorkQueue::new(sq),
                rq: WorkQueue::new(rq),
                max_inline: cap.max_inline_data,
            },
        );
        Ok(Qp { qp_num: qpn })
    }

    /// `ibv_modify_qp`: moves the QP to `attr.qp_state` (IBA table 91),
    /// applying the attributes `mask` names; the transition's required
    /// attributes must be among them.
    pub fn modify_qp(&mut self, qp: Qp, attr: &QpAttr, mask: u32) -> Result<()> {
        use attr_mask::*;
        let current = self.qp(qp)?.state;
        if mask & STATE == 0 {
            return Err(Error::BadAttribute("the mask must name the target state"));
        }
        let required = match (current, attr.qp_state) {
            (_, QpState::Reset | QpState::Err) => 0,
            (QpState::Reset, QpState::Init) => ACCESS_FLAGS | PKEY_INDEX,
            (QpState::Init, QpState::Rtr) => {
                AV | PATH_MTU | DEST_QPN | RQ_PSN | MAX_DEST_RD_ATOMIC | MIN_RNR_TIMER
            }
            (QpState::Rtr, QpState::Rts) => {
                SQ_PSN | TIMEOUT | RETRY_CNT | RNR_RETRY | MAX_QP_RD_ATOMIC
            }
            (state, _) => {
                return Err(Error::WrongQpState {
                    qpn: qp.qp_num,
                    state,
                })
            }
        };
        if mask & required != required {
            return Err(Error::BadAttribute(
                "the mask lacks an attribute the transition requires",
            ));
        }
        let mtu_code = match attr.path_mtu {
            256 => 1,
            512 => 2,
            1024 => 3,
            2048 => 4,
            4096 => 5,
            _ if mask & PATH_MTU == 0 => 0,
            _ => {
                return Err(Error::BadAttribute(
                    "path_mtu: 256, 512, 1024, 2048 or 4096",
                ))
            }
        };
        if mask & AV != 0 && attr.ah.is_none() {
            return Err(Error::BadAttribute(
                "AV in the mask without an address vector",
            ));
        }
        if attr.retry_cnt > 7 || attr.rnr_retry > 7 || attr.min_rnr_timer > 31 {
            return Err(Error::BadAttribute(
                "retry_cnt, rnr_retry: 0 ..= 7; min_rnr_timer: 0 ..= 31",
            ));
        }
        let max_rd = self.attr.max_qp_rd_atom;
        if u32::from(attr.max_rd_atomic) > max_rd || u32::from(attr.max_dest_rd_atomic) > max_rd {
            return Err(Error::BadAttribute(
                "max_rd_atomic above the device's max_qp_rd_atom",
            ));
        }
        let mut a = [0u8; attr::LAYOUT.size];
        for (field, value) in [
            (
                &attr::STATE,
                codes::QP_STATE.value_of(attr.qp_state.abi_name()),
            ),
            (&attr::PATH_MTU, mtu_code),
            (&attr::TIMEOUT, u64::from(attr.timeout)),
            (&attr::RETRY_CNT, u64::from(attr.retry_cnt)),
            (&attr::RNR_RETRY, u64::from(attr.rnr_retry)),
            (&attr::MIN_RNR_TIMER, u64::from(attr.min_rnr_timer)),
            (&attr::MAX_RD_ATOMIC, u64::from(attr.max_rd_atomic)),
            (
                &attr::MAX_DEST_RD_ATOMIC,
                u64::from(attr.max_dest_rd_atomic),
            ),
            (&attr::ACCESS, u64::from(attr.qp_access_flags)),
            (&attr::PKEY, u64::from(attr.pkey)),
            (&attr::DEST_QPN, u64::from(attr.dest_qp_num & 0xFF_FFFF)),
            (&attr::RQ_PSN, u64::from(attr.rq_psn & 0xFF_FFFF)),
            (&attr::SQ_PSN, u64::from(attr.sq_psn & 0xFF_FFFF)),
        ] {
            field.put(&mut a, value);
        }
        if let Some(ah) = attr.ah {
            attr::DMAC.put(&mut a, attr::mac_value(ah.dmac));
            attr::DSCP.put(&mut a, u64::from(ah.dscp & 0x3F));
            attr::UDP_SRC_PORT.put(&mut a, u64::from(ah.udp_src_port));
            attr::IPV6.put(&mut a, u64::from(ah.dgid.is_ipv6()));
            attr::LAYOUT.areas[1]
                .set(&mut a, &attr::gid_of(ah.dgid))
                .expect("16-byte GID");
        }
        self.admin(
            "MODIFY_QP",
            |c| {
                inputs::modify_qp::QPN.put(c, u64::from(qp.qp_num));
                inputs::modify_qp::ATTR_MASK.put(c, u64::from(mask));
            },
            Some(&a),
            false,
        )?;
        let rings = self.qps.get_mut(&qp.qp_num).expect("looked up above");
        rings.state = attr.qp_state;
        if attr.qp_state == QpState::Reset {
            rings.sq = WorkQueue::new(rings.sq.ring);
            rings.rq = WorkQueue::new(rings.rq.ring);
        }
        Ok(())
    }

    /// RESET -> INIT -> RTR -> RTS in three [`Context::modify_qp`]s, each
    /// with the attributes IBA requires for its step taken from `attr`
    /// (its `qp_state` is ignored): what perftest and rdma_cm do once the
    /// peer's QPN, PSN and address are known.
    pub fn connect_rc(&mut self, qp: Qp, attr: &QpAttr) -> Result<()> {
        use attr_mask::*;
        let steps = [
            (QpState::Init, ACCESS_FLAGS | PKEY_INDEX),
            (
                QpState::Rtr,
                AV | PATH_MTU | DEST_QPN | RQ_PSN | MAX_DEST_RD_ATOMIC | MIN_RNR_TIMER,
            ),
            (
                QpState::Rts,
                SQ_PSN | TIMEOUT | RETRY_CNT | RNR_RETRY | MAX_QP_RD_ATOMIC,
            ),
        ];
        for (qp_state, mask) in steps {
            self.modify_qp(qp, &QpAttr { qp_state, ..*attr }, STATE | mask)?;
        }
        Ok(())
    }

    /// `ibv_query_qp`: the device's view of the QP (its state included,
    /// which may have moved to ERR on its own).
    pub fn query_qp(&mut self, qp: Qp) -> Result<QpAttr> {
        self.qp(qp)?;
        self.admin(
            "QUERY_QP",
            |c| inputs::QPN.put(c, u64::from(qp.qp_num)),
            None,
            true,
        )?;
        let a = self.mailbox_output(attr::LAYOUT.size)?;
        let g = |f: &Field| get(&a, f);
        let state = QpState::from_abi(g(&attr::STATE)).unwrap_or(QpState::Err);
        if let Some(rings) = self.qps.get_mut(&qp.qp_num) {
            rings.state = state;
        }
        Ok(QpAttr {
            qp_state: state,
            path_mtu: match g(&attr::PATH_MTU) {
                code @ 1..=5 => 128 << code,
                _ => 0,
            },
            timeout: g(&attr::TIMEOUT) as u8,
            retry_cnt: g(&attr::RETRY_CNT) as u8,
            rnr_retry: g(&attr::RNR_RETRY) as u8,
            min_rnr_timer: g(&attr::MIN_RNR_TIMER) as u8,
            max_rd_atomic: g(&attr::MAX_RD_ATOMIC) as u8,
            max_dest_rd_atomic: g(&attr::MAX_DEST_RD_ATOMIC) as u8,
            qp_access_flags: g(&attr::ACCESS) as u8,
            pkey: g(&attr::PKEY) as u16,
            dest_qp_num: g(&attr::DEST_QPN) as u32,
            rq_psn: g(&attr::RQ_PSN) as u32,
            sq_psn: g(&attr::SQ_PSN) as u32,
            ah: None,
        })
    }

    /// `ibv_destroy_qp`: outstanding work is dropped without completions.
    pub fn destroy_qp(&mut self, qp: Qp) -> Result<()> {
        self.qp(qp)?;
        self.admin_destroy("DESTROY_QP", inputs::QPN, qp.qp_num)?;
        self.qps.remove(&qp.qp_num);
        Ok(())
    }
}
