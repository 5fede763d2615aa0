//! The data path: WQEs into the rings and their doorbells, CQEs out by
//! owner bit, CQ arming and the event queue.

use super::*;

impl<D: Device> Context<D> {
    fn check_sges(&self, pd: Pd, sges: &[Sge]) -> Result<()> {
        for s in sges {
            let inside = self.mrs.get(&s.lkey).is_some_and(|mr| {
                mr.pd == pd
                    && s.addr >= mr.addr
                    && s.addr
                        .checked_add(u64::from(s.length))
                        .is_some_and(|end| end <= mr.addr + mr.length)
            });
            if !inside {
                return Err(Error::SgeOutsideMr {
                    addr: s.addr,
                    length: s.length,
                    lkey: s.lkey,
                });
            }
        }
        Ok(())
    }

    /// Where the QP's rings are and where its producers stand, as
    /// mlx5dv's direct verbs give them: for tools and tests that write a
    /// WQE or ring a doorbell themselves.
    pub fn qp_rings(&self, qp: Qp) -> Result<QpRingInfo> {
        let q = self.qp(qp)?;
        Ok(QpRingInfo {
            sq_va: q.sq.ring.va,
            sq_log_size: q.sq.ring.log_size,
            sq_log_stride: q.sq.ring.log_stride,
            sq_producer: q.sq.producer,
            rq_va: q.rq.ring.va,
            rq_log_size: q.rq.ring.log_size,
            rq_log_stride: q.rq.ring.log_stride,
            rq_producer: q.rq.producer,
        })
    }

    /// `ibv_post_send`: one WQE into the send ring, then the doorbell.
    pub fn post_send(&mut self, qp: Qp, wr: &SendWr) -> Result<()> {
        let rings = self.qp(qp)?.clone();
        if !matches!(rings.state, QpState::Rts | QpState::Err) {
            return Err(Error::WrongQpState {
                qpn: qp.qp_num,
                state: rings.state,
            });
        }
        rings.sq.check_room()?;
        let atomic = matches!(
            wr.opcode,
            Opcode::CompareSwap { .. } | Opcode::FetchAdd { .. }
        );
        let max = if atomic {
            1
        } else {
            wqe::send::max_sge(rings.sq.ring.log_stride)
        };
        check_sge_count(wr.sg_list.len(), max)?;
        if atomic && (wr.sg_list.len() != 1 || wr.sg_list[0].length != 8) {
            return Err(Error::BadAttribute("an atomic takes one 8-byte SGE"));
        }
        let inline_data = if wr.inline {
            Some(self.gather_inline(wr, rings.max_inline)?)
        } else {
            self.check_sges(rings.pd, &wr.sg_list)?;
            None
        };
        let slot = encode_send(
            wr,
            inline_data.as_deref(),
            rings.sq.producer,
            rings.sq.ring.log_stride,
        );
        let idle = rings.sq.producer == rings.sq.completed;
        if self.inline_doorbell && idle {
            self.post_through_window(qp, &slot)
        } else {
            self.post(qp, Queue::Send, &slot)
        }
    }

    /// The bytes an inline `wr` carries, read now from its SGEs (as
    /// libibverbs, without their L_Keys: they need not be registered).
    fn gather_inline(&mut self, wr: &SendWr, max_inline: u32) -> Result<Vec<u8>> {
        let data_out = matches!(
            wr.opcode,
            Opcode::Send
                | Opcode::SendWithImm { .. }
                | Opcode::SendWithInv { .. }
                | Opcode::RdmaWrite { .. }
                | Opcode::RdmaWriteWithImm { .. }
        );
        if !data_out {
            return Err(Error::BadAttribute(
                "inline data is for SEND and RDMA WRITE only",
            ));
        }
        let given: u64 = wr.sg_list.iter().map(|s| u64::from(s.length)).sum();
        if given > u64::from(max_inline) {
            return Err(Error::InlineTooLong {
                given,
                max: max_inline,
            });
        }
        let mut data = Vec::with_capacity(given as usize);
        for s in &wr.sg_list {
            data.extend(self.read(s.addr, s.length as usize)?);
        }
        Ok(data)
    }

    /// Mode of posting send WQEs: with `on`, a WQE posted while the QP's
    /// send ring is idle (every WQE before it reported complete) is also
    /// written through the QP's inline window, which rings its doorbell
    /// and spares the NIC the fetch (mlx5's BlueFlame); otherwise, and by
    /// default, through `sq_producer`.
    pub fn set_inline_doorbell(&mut self, on: bool) {
        self.inline_doorbell = on;
    }

    /// Writes `slot` at the send ring's producer index, then the same
    /// bytes into the QP's inline window, in ascending order: the write
    /// of the last word is the doorbell.
    fn post_through_window(&mut self, qp: Qp, slot: &[u8]) -> Result<()> {
        let sq = self
            .qps
            .get(&qp.qp_num)
            .expect("looked up by the caller")
            .sq;
        self.device()
            .write(sq.ring.slot_va(u64::from(sq.producer)), slot)?;
        let rings = self.qps.get_mut(&qp.qp_num).expect("looked up");
        rings.sq.producer = sq.producer.wrapping_add(1);
        let window = qp.qp_num * regs::PAGE_SIZE + regs::qp_doorbell::INLINE_WINDOW;
        for (offset, word) in (0u32..).step_by(4).zip(slot.chunks_exact(4)) {
            let value = u32::from_le_bytes(word.try_into().expect("4-byte chunks"));
            self.device().write32(2, window + offset, value);
        }
        Ok(())
    }

    /// `ibv_post_recv`: one WQE into the receive ring, then the doorbell.
    pub fn post_recv(&mut self, qp: Qp, wr: &RecvWr) -> Result<()> {
        let rings = self.qp(qp)?.clone();
        if rings.state == QpState::Reset {
            return Err(Error::WrongQpState {
                qpn: qp.qp_num,
                state: rings.state,
            });
        }
        rings.rq.check_room()?;
        check_sge_count(
            wr.sg_list.len(),
            wqe::recv::max_sge(rings.rq.ring.log_stride),
        )?;
        self.check_sges(rings.pd, &wr.sg_list)?;
        let mut slot = vec![0u8; 1 << rings.rq.ring.log_stride];
        wqe::recv::WR_ID.put(&mut slot, wr.wr_id);
        wqe::recv::SGE_COUNT.put(&mut slot, wr.sg_list.len() as u64);
        wqe::recv::INDEX.put(&mut slot, u64::from(rings.rq.producer));
        for (i, s) in wr.sg_list.iter().enumerate() {
            encode_sge(&mut slot[wqe::recv::SEGMENTS + 16 * i..], s);
        }
        self.post(qp, Queue::Recv, &slot)
    }

    /// Writes `slot` at the ring's producer index and rings the QP's
    /// doorbell with the index after it.
    fn post(&mut self, qp: Qp, queue: Queue, slot: &[u8]) -> Result<()> {
        let rings = self.qps.get(&qp.qp_num).expect("looked up by the caller");
        let (work, doorbell) = match queue {
            Queue::Send => (rings.sq, 0x000),
            Queue::Recv => (rings.rq, 0x004),
        };
        self.device()
            .write(work.ring.slot_va(u64::from(work.producer)), slot)?;
        let producer = work.producer.wrapping_add(1);
        let rings = self.qps.get_mut(&qp.qp_num).expect("looked up");
        match queue {
            Queue::Send => rings.sq.producer = producer,
            Queue::Recv => rings.rq.producer = producer,
        }
        let offset = qp.qp_num * regs::PAGE_SIZE + doorbell;
        self.device().write32(2, offset, u32::from(producer));
        Ok(())
    }

    /// `ibv_poll_cq`: up to `max` completions, oldest first; never waits.
    /// A polling loop on a simulated device gives it a turn
    /// ([`Device::service`]) when a round found nothing, so the device
    /// time of each completion is the time it was written.
    pub fn poll_cq(&mut self, cq: Cq, max: usize) -> Result<Vec<WorkCompletion>> {
        let mut ring = self
            .cqs
            .get(&cq.cqn)
            .ok_or(Error::NoSuchObject("CQ", cq.cqn))?
            .clone();
        let mut out = Vec::new();
        while out.len() < max {
            let mut e = [0u8; cqe::LAYOUT.size];
            self.device()
                .read(ring.ring.slot_va(ring.consumer), &mut e)?;
            if get(&e, &cqe::OWNER) != cqe::owner_for(ring.consumer, ring.ring.log_size) {
                break;
            }
            let wc = decode_cqe(&e);
            if let Some(q) = self.qps.get_mut(&wc.qp_num) {
                let next = wc.wqe_index.wrapping_add(1);
                if wc.opcode.starts_with("RECV") {
                    q.rq.completed = next;
                } else {
                    q.sq.completed = next;
                }
                if !wc.is_success() {
                    q.state = QpState::Err;
                }
            }
            out.push(wc);
            ring.consumer += 1;
        }
        if !out.is_empty() {
            let consumer = (ring.consumer & 0xFF_FFFF) as u32;
            self.device().write32(4, cq.cqn * regs::PAGE_SIZE, consumer);
            self.cqs.insert(cq.cqn, ring);
        }
        Ok(out)
    }

    /// `ibv_req_notify_cq`: an event at the CQ's next CQE (with
    /// `solicited_only`, its next solicited or error CQE).
    pub fn req_notify_cq(&mut self, cq: Cq, solicited_only: bool) -> Result<()> {
        use regs::cq_doorbell::{ARM, ARM_SOLICITED, CONSUMER};
        let ring = self
            .cqs
            .get(&cq.cqn)
            .ok_or(Error::NoSuchObject("CQ", cq.cqn))?;
        let mut word = [0u8; 4];
        CONSUMER.put(&mut word, ring.consumer & 0xFF_FFFF);
        let arm = if solicited_only { ARM_SOLICITED } else { ARM };
        arm.put(&mut word, 1);
        self.device()
            .write32(4, cq.cqn * regs::PAGE_SIZE, u32::from_le_bytes(word));
        Ok(())
    }

    /// The next event of this context's EQ, unarmed read.
    fn next_event(&mut self) -> Result<Option<Event>> {
        let mut e = [0u8; eqe::LAYOUT.size];
        let at = self.eq.slot_va(self.eq_consumer);
        self.device().read(at, &mut e)?;
        if get(&e, &eqe::OWNER) != cqe::owner_for(self.eq_consumer, self.eq.log_size) {
            return Ok(None);
        }
        self.eq_consumer += 1;
        self.ring_eq(false);
        Ok(Some(Event {
            event: name_of(&eqe::EVENT_TYPE, get(&e, &eqe::EVENT)),
            cause: name_of(&eqe::QP_ERROR_CAUSE, get(&e, &eqe::CAUSE)),
            object: get(&e, &eqe::OBJECT) as u32,
            detail: get(&e, &eqe::DETAIL) as u32,
        }))
    }

    fn ring_eq(&mut self, arm: bool) {
        use regs::eq_doorbell::{ARM, CONSUMER};
        let mut word = [0u8; 4];
        CONSUMER.put(&mut word, self.eq_consumer & 0xFF_FFFF);
        ARM.put(&mut word, u64::from(arm));
        let value = u32::from_le_bytes(word);
        let eqn = self.eqn;
        let offset = self
            .bar
            .register_offset(&regs::EVENT_QUEUES, "eq_doorbell", eqn);
        self.device().write32(0, offset, value);
    }

    /// The next event (an armed CQ's completion, a QP or CQ error),
    /// sleeping on the EQ's interrupt when there is none; `Timeout` after
    /// `timeout_ns` of device time.
    pub fn get_event(&mut self, timeout_ns: u64) -> Result<Event> {
        let deadline = self.device().now_ns().saturating_add(timeout_ns);
        loop {
            if let Some(event) = self.next_event()? {
                return Ok(event);
            }
            self.ring_eq(true);
            if let Some(event) = self.next_event()? {
                return Ok(event);
            }
            let left = deadline.saturating_sub(self.device().now_ns());
            if left == 0 || !self.device().wait_interrupt(EQ_VECTOR, left)? {
                return Err(Error::Timeout("an event"));
            }
        }
    }

    /// Polls until `count` completions arrived or `timeout_ns` of device
    /// time passed.
    pub fn wait_cq(
        &mut self,
        cq: Cq,
        count: usize,
        timeout_ns: u64,
    ) -> Result<Vec<WorkCompletion>> {
        let deadline = self.device().now_ns().saturating_add(timeout_ns);
        let mut got = Vec::new();
        while got.len() < count {
            let polled = self.poll_cq(cq, count - got.len())?;
            if polled.is_empty() {
                if self.device().now_ns() > deadline {
                    return Err(Error::Timeout("completions"));
                }
                self.device().service();
            }
            got.extend(polled);
        }
        Ok(got)
    }
}

fn encode_sge(at: &mut [u8], s: &Sge) {
    wqe::sge::ADDR.put(at, s.addr);
    wqe::sge::LENGTH.put(at, u64::from(s.length));
    wqe::sge::LKEY.put(at, u64::from(s.lkey));
}

/// The send WQE of `wr` at ring index `index`, in a slot of
/// `2^log_stride` bytes: with `inline_data` (at most
/// `wqe::send::max_inline(log_stride)` bytes) an INLINE WQE carrying it,
/// else one pointing at `wr`'s SGEs.
pub fn encode_send(
    wr: &SendWr,
    inline_data: Option<&[u8]>,
    index: u16,
    log_stride: u32,
) -> Vec<u8> {
    use wqe::send::*;
    let mut slot = vec![0u8; 1 << log_stride];
    let (name, remote_addr, rkey, imm) = match wr.opcode {
        Opcode::Send => ("SEND", 0, 0, 0),
        Opcode::SendWithImm { imm } => ("SEND_WITH_IMM", 0, 0, imm),
        Opcode::SendWithInv { rkey } => ("SEND_WITH_INV", 0, 0, rkey),
        Opcode::RdmaWrite { remote_addr, rkey } => ("RDMA_WRITE", remote_addr, rkey, 0),
        Opcode::RdmaWriteWithImm {
            remote_addr,
            rkey,
            imm,
        } => ("RDMA_WRITE_WITH_IMM", remote_addr, rkey, imm),
        Opcode::RdmaRead { remote_addr, rkey } => ("RDMA_READ", remote_addr, rkey, 0),
        Opcode::CompareSwap {
            remote_addr, rkey, ..
        } => ("ATOMIC_CMP_AND_SWP", remote_addr, rkey, 0),
        Opcode::FetchAdd {
            remote_addr, rkey, ..
        } => ("ATOMIC_FETCH_AND_ADD", remote_addr, rkey, 0),
    };
    let flag = |on: bool, name: &str| {
        if on {
            codes::SEND_FLAGS.value_of(name)
        } else {
            0
        }
    };
    let flags = flag(wr.signaled, "SIGNALED")
        | flag(wr.solicited, "SOLICITED")
        | flag(wr.fence, "FENCE")
        | flag(inline_data.is_some(), "INLINE");
    let sges: &[Sge] = if inline_data.is_some() {
        &[]
    } else {
        &wr.sg_list
    };
    for (field, value) in [
        (&OPCODE, codes::SEND_OPCODE.value_of(name)),
        (&FLAGS, flags),
        (&SGE_COUNT, sges.len() as u64),
        (&INLINE_LEN, inline_data.map_or(0, |d| d.len() as u64)),
        (&INDEX, u64::from(index)),
        (&WR_ID, wr.wr_id),
        (&REMOTE_ADDR, remote_addr),
        (&RKEY, u64::from(rkey)),
        (&IMM_OR_INVALIDATE, u64::from(imm)),
    ] {
        field.put(&mut slot, value);
    }
    match wr.opcode {
        Opcode::CompareSwap { compare, swap, .. } => {
            atomic::COMPARE_OR_ADD.put(&mut slot, compare);
            atomic::SWAP.put(&mut slot, swap);
        }
        Opcode::FetchAdd { add, .. } => atomic::COMPARE_OR_ADD.put(&mut slot, add),
        _ => {}
    }
    let first_sge = if let Opcode::CompareSwap { .. } | Opcode::FetchAdd { .. } = wr.opcode {
        atomic::RESULT_SGE
    } else {
        SEGMENTS
    };
    for (i, s) in sges.iter().enumerate() {
        encode_sge(&mut slot[first_sge + 16 * i..], s);
    }
    if let Some(data) = inline_data {
        slot[SEGMENTS..SEGMENTS + data.len()].copy_from_slice(data);
    }
    slot
}

/// A CQE read from a ring.
pub fn decode_cqe(e: &[u8]) -> WorkCompletion {
    let flags = get(e, &cqe::FLAGS);
    let extra = get(e, &cqe::IMM_OR_INVALIDATED) as u32;
    let has = |name: &str| flags & codes::CQE_FLAGS.value_of(name) != 0;
    WorkCompletion {
        wr_id: get(e, &cqe::WR_ID),
        status: name_of(&codes::WC_STATUS, get(e, &cqe::STATUS)),
        opcode: name_of(&codes::WC_OPCODE, get(e, &cqe::OPCODE)),
        qp_num: get(e, &cqe::QPN) as u32,
        byte_len: get(e, &cqe::BYTE_LEN) as u32,
        imm_data: has("WITH_IMM").then_some(extra),
        invalidated_rkey: has("WITH_INV").then_some(extra),
        wqe_index: get(e, &cqe::WQE_INDEX) as u16,
        vendor_err: get(e, &cqe::VENDOR_SYNDROME) as u8,
    }
}
