//! A model QP's state in the RTL's terms: the QP context record the
//! driver's `modify_qp` leaves in the core, the per-QP address record
//! ([`QpAddress`]) the transmit side frames with, and the bit layouts of
//! its addresses.

use rocenic_hdl::codes::{mtu, qp_state};
use rocenic_hdl::primitives::wide::bits_from_words;
use rocenic_hdl::qp::qp_address_ram::QpAddress;
use rocenic_hdl::qp::qp_context_record::QpContextRecord;
use rocenic_model::nic::{QpContextView, QpTxAttrs};
use rocenic_model::verbs::Qpn;
use rocenic_wire::{ecn, udp_src_port};
use rust_hdl::prelude::bits;
use std::net::IpAddr;
use verilator_sys::{Block, Input, Sim};

/// The QP context record holding `view` (a QP in RESET has no path; its
/// MTU code is 0). Fields the model keeps elsewhere start as the driver
/// sets them: the retry budgets full, the ACK-request end and the highest
/// PSN sent at the send cursor, no message in progress.
pub fn context_record(view: &QpContextView) -> QpContextRecord {
    QpContextRecord {
        state: qp_state::encode(view.state),
        access: u32::from(view.access & 0xF),
        path_mtu: mtu::iba_code(view.mtu).unwrap_or(0),
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

/// QP `qpn`'s address record: the model's attributes of the QP and the
/// NIC's MAC, DSCP and ECN setting, as the model's frame builders use
/// them (the UDP source port from the QP pair, `ecn` the codepoint of
/// data frames).
pub fn qp_address(qpn: Qpn, a: &QpTxAttrs, nic_mac: [u8; 6], dscp: u8, ecn_on: bool) -> QpAddress {
    let wide = |v: u128| bits_from_words::<128>(&[v as u64, (v >> 64) as u64]);
    let ect = if ecn_on { ecn::ECT0 } else { ecn::NOT_ECT };
    QpAddress {
        pd: bits(a.pd.0.into()),
        dest_qp: bits(a.dest_qpn.into()),
        pkey: bits(a.pkey.into()),
        eth_dst: bits(mac_bits(a.remote_mac)),
        eth_src: bits(mac_bits(nic_mac)),
        ipv6: matches!(a.local_ip, IpAddr::V6(_)),
        ip_src: wide(ip_bits(a.local_ip)),
        ip_dst: wide(ip_bits(a.remote_ip)),
        dscp: bits((dscp & 0x3F).into()),
        ecn: bits(ect.into()),
        udp_src_port: bits(udp_src_port(qpn, a.dest_qpn).into()),
    }
}

/// Drives `port`, a [`QpAddress`] port of a Verilated block (one wide
/// port, the record packed), with `address`.
pub fn set_address<B: Block>(sim: &mut Sim<B>, port: Input<B>, address: &QpAddress) {
    sim.set(port, &address.to_words());
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
    use rocenic_model::verbs::{PdId, QpState};

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
        assert_eq!(
            (r.state, r.path_mtu, r.rq_epsn),
            (qp_state::RTS, mtu::IBA_1024, 0xABCDEF)
        );
        assert_eq!((r.retry_left, r.sq_ackreq_end_psn), (7, 3));
        assert_eq!(QpContextRecord::unpack(&r.pack().expect("fits")), r);
        assert_eq!(ip_bits("10.0.0.2".parse().unwrap()), 0x0A00_0002);
        assert_eq!(mac_bits([2, 0, 0, 0, 0, 1]), 0x0200_0000_0001);
    }

    #[test]
    fn address_record_takes_the_nic_setting_and_the_qp_pair() {
        let attrs = QpTxAttrs {
            pd: PdId(9),
            pkey: 0x8001,
            dest_qpn: 0x12_3456,
            remote_mac: [2, 0, 0, 0, 1, 0xAA],
            local_ip: "10.0.0.1".parse().unwrap(),
            remote_ip: "10.0.0.2".parse().unwrap(),
            mtu: 4096,
        };
        let a = qp_address(0x17, &attrs, [2, 0, 0, 0, 0, 0xBB], 0xC5, true);
        assert_eq!(
            (a.pd, a.dest_qp, a.pkey),
            (bits(9), bits(0x12_3456), bits(0x8001))
        );
        assert_eq!(
            (a.eth_dst, a.eth_src),
            (bits(0x0200_0000_01AA), bits(0x0200_0000_00BB))
        );
        assert!(!a.ipv6);
        assert_eq!(a.ip_src.get_bits::<64>(0), bits(0x0A00_0001));
        assert_eq!(a.ip_dst.get_bits::<64>(64), bits(0));
        assert_eq!((a.dscp, a.ecn), (bits(5), bits(ecn::ECT0.into())));
        assert_eq!(a.udp_src_port, bits(udp_src_port(0x17, 0x12_3456).into()));
        let v6 = QpTxAttrs {
            local_ip: "fd00::1".parse().unwrap(),
            ..attrs
        };
        let a = qp_address(0x17, &v6, [0; 6], 0, false);
        assert!(a.ipv6);
        assert_eq!(a.ip_src.get_bits::<64>(64), bits(0xFD00 << 48));
        assert_eq!(a.ecn, bits(ecn::NOT_ECT.into()));
    }
}
