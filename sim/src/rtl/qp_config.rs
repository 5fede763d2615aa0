//! A model QP's state in the RTL's terms: the QP context record the
//! driver's `modify_qp` leaves in the core, and the bit layouts of the
//! addresses the transmit side frames with.

use rocenic_hdl::qp_context_record::{mtu_code, state, QpContextRecord};
use rocenic_model::nic::QpContextView;
use rocenic_model::verbs::QpState;
use std::net::IpAddr;

/// The QP context record holding `view` (a QP in RESET has no path; its
/// MTU code is 0). Fields the model keeps elsewhere start as the driver
/// sets them: the retry budgets full, the ACK-request end and the highest
/// PSN sent at the send cursor, no message in progress.
pub fn context_record(view: &QpContextView) -> QpContextRecord {
    QpContextRecord {
        state: match view.state {
            QpState::Reset => state::RESET,
            QpState::Init => state::INIT,
            QpState::Rtr => state::RTR,
            QpState::Rts => state::RTS,
            QpState::Err => state::ERR,
        },
        access: u32::from(view.access & 0xF),
        path_mtu: mtu_code(view.mtu).unwrap_or(0),
        pkey: view.pkey.into(),
        pd: view.pd.0,
        dest_qpn: view.dest_qpn,
        sq_next_psn: view.sq_next_psn,
        sq_send_psn: view.sq_send_psn,
        sq_una_psn: view.sq_una_psn,
        sq_max_sent_psn: view.sq_send_psn,
        sq_ackreq_end_psn: view.sq_una_psn,
        timeout: view.timeout.into(),
        retry_cnt: view.retry_cnt.into(),
        rnr_retry: view.rnr_retry.into(),
        retry_left: view.retry_cnt.into(),
        rnr_left: view.rnr_retry.into(),
        max_rd_atomic: view.max_rd_atomic.into(),
        rq_epsn: view.rq_epsn,
        rq_msn: view.rq_msn,
        max_dest_rd_atomic: view.max_dest_rd_atomic.into(),
        min_rnr_timer: view.min_rnr_timer.into(),
        ..QpContextRecord::default()
    }
}

/// An IP address as the 128-bit port value (IPv4 in the low 32 bits).
pub fn ip_bits(ip: IpAddr) -> u128 {
    match ip {
        IpAddr::V4(a) => u128::from(u32::from(a)),
        IpAddr::V6(a) => u128::from(a),
    }
}

/// A MAC address as the 48-bit port value (first byte most significant).
pub fn mac_bits(m: [u8; 6]) -> u64 {
    m.iter().fold(0u64, |acc, &b| acc << 8 | u64::from(b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocenic_model::verbs::PdId;

    #[test]
    fn record_carries_the_responder_fields_and_packs() {
        let view = QpContextView {
            state: QpState::Rts,
            access: 0x0E,
            pd: PdId(3),
            pkey: 0xFFFF,
            mtu: 1024,
            dest_qpn: 0x12,
            max_dest_rd_atomic: 16,
            min_rnr_timer: 1,
            rq_epsn: 0xABCDEF,
            rq_msn: 7,
            sq_next_psn: 5,
            sq_send_psn: 4,
            sq_una_psn: 3,
            timeout: 14,
            retry_cnt: 7,
            rnr_retry: 7,
            max_rd_atomic: 16,
        };
        let r = context_record(&view);
        assert_eq!((r.state, r.path_mtu, r.rq_epsn), (state::RTS, 3, 0xABCDEF));
        assert_eq!((r.retry_left, r.sq_ackreq_end_psn), (7, 3));
        assert_eq!(QpContextRecord::unpack(&r.pack().expect("fits")), r);
        assert_eq!(ip_bits("10.0.0.2".parse().unwrap()), 0x0A00_0002);
        assert_eq!(mac_bits([2, 0, 0, 0, 0, 1]), 0x0200_0000_0001);
    }
}
