//! TX header builder: turns a transport decision (BTH, extension headers,
//! payload) for a QP into an encoded RoCEv2 frame with this NIC's
//! addresses and the QP's path (the RTL's "TX: header builder + ICRC").

use crate::nic::{Env, TxClass};
use crate::qp::Qp;
use rocenic_wire::{
    ecn, udp_src_port, Bth, EthHeader, ExtHeaders, IpHeader, Ipv4Header, Ipv6Header, RoceFrame,
};
use std::net::IpAddr;

/// IPv4 TTL and IPv6 hop limit of every frame.
pub(crate) const HOP_LIMIT: u8 = 64;

/// Encodes one frame from `qp` to its peer. `ect` marks it ECN-capable
/// (data frames, when the NIC has ECN on). `None` only if the codec
/// refuses the frame, which is a model bug; it is counted, not panicked.
pub(crate) fn frame(
    env: &mut Env,
    qp: &Qp,
    class: TxClass,
    bth: Bth,
    ext: ExtHeaders,
    payload: Vec<u8>,
    ect: bool,
) -> Option<Vec<u8>> {
    let path = qp.path?;
    let ecn = if ect && env.config.ecn {
        ecn::ECT0
    } else {
        ecn::NOT_ECT
    };
    let dscp = if class == TxClass::Cnp {
        env.config.cnp_dscp
    } else {
        env.config.dscp
    } & 0x3F;
    let ip = match (path.local_ip, path.remote.ip) {
        (IpAddr::V4(src), IpAddr::V4(dst)) => {
            let id = &mut env.ip_id[class.ip_id_counter()];
            *id = id.wrapping_add(1);
            let identification = *id;
            IpHeader::V4(Ipv4Header {
                src,
                dst,
                dscp,
                ecn,
                identification,
                dont_fragment: true,
                ttl: HOP_LIMIT,
            })
        }
        (IpAddr::V6(src), IpAddr::V6(dst)) => IpHeader::V6(Ipv6Header {
            src,
            dst,
            dscp,
            ecn,
            flow_label: 0,
            hop_limit: HOP_LIMIT,
        }),
        _ => {
            env.count_tx_error("ip_version");
            return None;
        }
    };
    let f = RoceFrame {
        eth: EthHeader {
            dst: path.remote.mac,
            src: env.config.mac,
        },
        ip,
        udp_src_port: udp_src_port(qp.qpn, path.dest_qpn),
        udp_checksum: false,
        bth,
        ext,
        payload,
    };
    match f.encode() {
        Ok(bytes) => Some(bytes),
        Err(_) => {
            env.count_tx_error("encode");
            None
        }
    }
}
