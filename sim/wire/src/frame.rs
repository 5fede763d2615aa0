//! A whole RoCEv2 frame: encode to bytes and decode from bytes.
//!
//! Decoding never panics: anything that is not a well-formed RoCEv2 frame
//! comes back as a [`DecodeError`] naming the first thing found wrong.

use crate::headers::*;
use crate::icrc;
use crate::opcode::{self, ExtSet};
use serde::Serialize;
use std::net::{Ipv4Addr, Ipv6Addr};

/// Largest payload a single RoCEv2 packet may carry (path MTU 4096).
pub const MAX_PAYLOAD: usize = 4096;

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RoceFrame {
    pub eth: EthHeader,
    pub ip: IpHeader,
    pub udp_src_port: u16,
    /// The UDP checksum is computed (true) or sent as zero, which RoCEv2
    /// allows on IPv4. UDP over IPv6 always carries one (RFC 8200 8.1).
    pub udp_checksum: bool,
    pub bth: Bth,
    pub ext: ExtHeaders,
    pub payload: Vec<u8>,
}

/// Where in the frame a decode stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Layer {
    Ethernet,
    Ip,
    Udp,
    Bth,
    ExtHeaders,
    Icrc,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum DecodeError {
    #[error("truncated in {layer:?}: need {need} bytes, have {have}")]
    Truncated {
        layer: Layer,
        need: usize,
        have: usize,
    },
    #[error("EtherType {0:#06x} is neither IPv4 nor IPv6")]
    UnsupportedEtherType(u16),
    #[error("IP version {found} does not match EtherType (expected {expected})")]
    IpVersionMismatch { expected: u8, found: u8 },
    #[error("IPv4 header length {0} words: options are not used by RoCEv2")]
    Ipv4Options(u8),
    #[error("IPv4 header checksum {found:#06x}, computed {computed:#06x}")]
    BadIpv4Checksum { found: u16, computed: u16 },
    #[error("IPv4 fragment: RoCEv2 packets are never fragmented")]
    Ipv4Fragment,
    #[error("IP length {ip_len} is shorter than its own headers")]
    BadIpLength { ip_len: usize },
    #[error("IP protocol / next header {0} is not UDP")]
    NotUdp(u8),
    #[error("UDP destination port {0} is not 4791")]
    WrongUdpPort(u16),
    #[error("UDP length {udp_len} does not match the IP payload length {ip_payload}")]
    UdpLengthMismatch { udp_len: usize, ip_payload: usize },
    #[error("UDP checksum {found:#06x}, computed {computed:#06x}")]
    BadUdpChecksum { found: u16, computed: u16 },
    #[error("BTH transport version {0} is not 0")]
    BadTver(u8),
    #[error("opcode {0:#04x} is not a RoCEv2 opcode")]
    UnknownOpcode(u8),
    #[error("opcode {opcode:#04x} needs {need} bytes of headers, the packet has {have}")]
    HeaderOpcodeMismatch {
        opcode: u8,
        need: usize,
        have: usize,
    },
    #[error("opcode {opcode:#04x} carries no payload, the packet has {len} bytes")]
    UnexpectedPayload { opcode: u8, len: usize },
    #[error("payload of {len} bytes exceeds the 4096-byte maximum")]
    PayloadTooLarge { len: usize },
    #[error("pad count {pad} is larger than the {payload} bytes after the headers")]
    PadTooLarge { pad: u8, payload: usize },
    #[error("ICRC {found:#010x}, computed {computed:#010x}")]
    BadIcrc { found: u32, computed: u32 },
}

impl DecodeError {
    /// A short stable name for counters and JSON.
    pub fn reason(&self) -> &'static str {
        match self {
            DecodeError::Truncated { .. } => "truncated",
            DecodeError::UnsupportedEtherType(_) => "ethertype",
            DecodeError::IpVersionMismatch { .. } => "ip_version",
            DecodeError::Ipv4Options(_) => "ipv4_options",
            DecodeError::BadIpv4Checksum { .. } => "ipv4_checksum",
            DecodeError::Ipv4Fragment => "ipv4_fragment",
            DecodeError::BadIpLength { .. } => "ip_length",
            DecodeError::NotUdp(_) => "not_udp",
            DecodeError::WrongUdpPort(_) => "udp_port",
            DecodeError::UdpLengthMismatch { .. } => "udp_length",
            DecodeError::BadUdpChecksum { .. } => "udp_checksum",
            DecodeError::BadTver(_) => "tver",
            DecodeError::UnknownOpcode(_) => "opcode",
            DecodeError::HeaderOpcodeMismatch { .. } => "header_opcode_mismatch",
            DecodeError::UnexpectedPayload { .. } => "unexpected_payload",
            DecodeError::PayloadTooLarge { .. } => "payload_too_large",
            DecodeError::PadTooLarge { .. } => "pad",
            DecodeError::BadIcrc { .. } => "icrc",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EncodeError {
    #[error("opcode {0:#04x} is not a RoCEv2 opcode")]
    UnknownOpcode(u8),
    #[error("opcode {opcode:#04x} takes headers {expected:?}, the frame has {present:?}")]
    HeadersDoNotMatchOpcode {
        opcode: u8,
        expected: ExtSet,
        present: ExtSet,
    },
    #[error("opcode {opcode:#04x} carries no payload, the frame has {len} bytes")]
    UnexpectedPayload { opcode: u8, len: usize },
    #[error("payload of {len} bytes exceeds the 4096-byte maximum")]
    PayloadTooLarge { len: usize },
}

/// Which optional checks a decode makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DecodeOptions {
    /// Verify a non-zero UDP checksum.
    pub verify_udp_checksum: bool,
}

impl DecodeOptions {
    /// Everything the codec can check: what `decode` and `parse` do.
    pub const STRICT: DecodeOptions = DecodeOptions {
        verify_udp_checksum: true,
    };

    /// What rocenic's NIC receive path checks, in the model and in the RTL
    /// alike. The UDP checksum is not verified: the ICRC covers every byte
    /// the UDP checksum covers (IP addresses, protocol, lengths, UDP header,
    /// payload) and masks only the checksum field itself, so the checksum
    /// adds no protection on a RoCEv2 receive path.
    pub const NIC: DecodeOptions = DecodeOptions {
        verify_udp_checksum: false,
    };
}

/// The result of parsing a frame before its ICRC is judged: lets a tool
/// show the fields of a frame whose ICRC is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parsed {
    pub frame: RoceFrame,
    pub icrc_found: u32,
    pub icrc_computed: u32,
}

impl RoceFrame {
    /// Bytes on the wire without FCS (and without Ethernet minimum-size pad).
    pub fn wire_len(&self) -> usize {
        let headers = opcode::info(self.bth.opcode).map_or(0, |o| o.headers.wire_len());
        ETH_LEN
            + self.ip.header_len()
            + UDP_LEN
            + BTH_LEN
            + headers
            + self.payload.len()
            + pad_for(self.payload.len())
            + ICRC_LEN
    }

    pub fn encode(&self) -> Result<Vec<u8>, EncodeError> {
        let info =
            opcode::info(self.bth.opcode).ok_or(EncodeError::UnknownOpcode(self.bth.opcode))?;
        let expected = info.headers.without(ExtSet::CNP_RESERVED);
        let present = self.ext.present();
        if expected != present {
            return Err(EncodeError::HeadersDoNotMatchOpcode {
                opcode: info.code,
                expected,
                present,
            });
        }
        if !info.has_payload && !self.payload.is_empty() {
            return Err(EncodeError::UnexpectedPayload {
                opcode: info.code,
                len: self.payload.len(),
            });
        }
        if self.payload.len() > MAX_PAYLOAD {
            return Err(EncodeError::PayloadTooLarge {
                len: self.payload.len(),
            });
        }

        let pad = pad_for(self.payload.len());
        let ip_len = self.ip.header_len();
        let udp_len =
            UDP_LEN + BTH_LEN + info.headers.wire_len() + self.payload.len() + pad + ICRC_LEN;
        let mut out = Vec::with_capacity(ETH_LEN + ip_len + udp_len);

        out.extend_from_slice(&self.eth.dst);
        out.extend_from_slice(&self.eth.src);
        match &self.ip {
            IpHeader::V4(h) => {
                out.extend_from_slice(&ETHERTYPE_IPV4.to_be_bytes());
                write_ipv4(h, ip_len + udp_len, &mut out);
            }
            IpHeader::V6(h) => {
                out.extend_from_slice(&ETHERTYPE_IPV6.to_be_bytes());
                write_ipv6(h, udp_len, &mut out);
            }
        }
        out.extend_from_slice(&self.udp_src_port.to_be_bytes());
        out.extend_from_slice(&ROCEV2_UDP_PORT.to_be_bytes());
        out.extend_from_slice(&(udp_len as u16).to_be_bytes());
        out.extend_from_slice(&[0, 0]);

        let mut bth = self.bth;
        bth.pad_count = pad as u8;
        let at = out.len();
        out.resize(at + BTH_LEN, 0);
        bth.write(&mut out[at..]);
        self.ext.write(info.headers, &mut out);
        out.extend_from_slice(&self.payload);
        out.resize(out.len() + pad, 0);

        let crc = icrc::compute(&out[ETH_LEN..], ip_len).expect("headers were just written");
        out.extend_from_slice(&crc.to_le_bytes());

        if self.udp_checksum || matches!(self.ip, IpHeader::V6(_)) {
            let csum = udp_checksum(&out[ETH_LEN..], ip_len);
            let at = ETH_LEN + ip_len + 6;
            out[at..at + 2].copy_from_slice(&csum.to_be_bytes());
        }
        Ok(out)
    }

    /// Decodes and checks a frame, ICRC included.
    pub fn decode(bytes: &[u8]) -> Result<RoceFrame, DecodeError> {
        Self::decode_with(bytes, DecodeOptions::STRICT)
    }

    /// `decode` with a choice of optional checks.
    pub fn decode_with(bytes: &[u8], options: DecodeOptions) -> Result<RoceFrame, DecodeError> {
        let parsed = Self::parse_with(bytes, options)?;
        if parsed.icrc_found != parsed.icrc_computed {
            return Err(DecodeError::BadIcrc {
                found: parsed.icrc_found,
                computed: parsed.icrc_computed,
            });
        }
        Ok(parsed.frame)
    }

    /// Decodes every header and checks everything except the ICRC, which is
    /// reported found and computed.
    pub fn parse(bytes: &[u8]) -> Result<Parsed, DecodeError> {
        Self::parse_with(bytes, DecodeOptions::STRICT)
    }

    /// `parse` with a choice of optional checks.
    pub fn parse_with(bytes: &[u8], options: DecodeOptions) -> Result<Parsed, DecodeError> {
        need(bytes, ETH_LEN, Layer::Ethernet)?;
        let mut dst = [0; 6];
        let mut src = [0; 6];
        dst.copy_from_slice(&bytes[0..6]);
        src.copy_from_slice(&bytes[6..12]);
        let eth = EthHeader { dst, src };
        let ethertype = u16::from_be_bytes([bytes[12], bytes[13]]);
        let l3 = &bytes[ETH_LEN..];

        let (ip, ip_len, l3_len) = match ethertype {
            ETHERTYPE_IPV4 => parse_ipv4(l3)?,
            ETHERTYPE_IPV6 => parse_ipv6(l3)?,
            other => return Err(DecodeError::UnsupportedEtherType(other)),
        };
        // Bytes past the IP length are Ethernet minimum-frame padding.
        let l3 = &l3[..l3_len];

        need(l3, ip_len + UDP_LEN, Layer::Udp)?;
        let udp = &l3[ip_len..];
        let udp_src_port = u16::from_be_bytes([udp[0], udp[1]]);
        let dst_port = u16::from_be_bytes([udp[2], udp[3]]);
        let udp_len = usize::from(u16::from_be_bytes([udp[4], udp[5]]));
        let udp_csum = u16::from_be_bytes([udp[6], udp[7]]);
        if dst_port != ROCEV2_UDP_PORT {
            return Err(DecodeError::WrongUdpPort(dst_port));
        }
        if udp_len != l3_len - ip_len {
            return Err(DecodeError::UdpLengthMismatch {
                udp_len,
                ip_payload: l3_len - ip_len,
            });
        }
        if options.verify_udp_checksum && udp_csum != 0 {
            let computed = udp_checksum(l3, ip_len);
            if computed != udp_csum {
                return Err(DecodeError::BadUdpChecksum {
                    found: udp_csum,
                    computed,
                });
            }
        }

        let bth_at = ip_len + UDP_LEN;
        need(l3, bth_at + BTH_LEN, Layer::Bth)?;
        let bth = Bth::read(&l3[bth_at..]);
        if bth.tver != 0 {
            return Err(DecodeError::BadTver(bth.tver));
        }
        let info = opcode::info(bth.opcode).ok_or(DecodeError::UnknownOpcode(bth.opcode))?;

        let ext_at = bth_at + BTH_LEN;
        let headers_len = info.headers.wire_len();
        let after_bth = l3_len - ext_at;
        if after_bth < headers_len + ICRC_LEN {
            return Err(DecodeError::HeaderOpcodeMismatch {
                opcode: bth.opcode,
                need: headers_len + ICRC_LEN,
                have: after_bth,
            });
        }
        let ext = ExtHeaders::read(info.headers, &l3[ext_at..]);

        let payload_at = ext_at + headers_len;
        let icrc_at = l3_len - ICRC_LEN;
        let padded = icrc_at - payload_at;
        if !info.has_payload && padded != 0 {
            return Err(DecodeError::UnexpectedPayload {
                opcode: bth.opcode,
                len: padded,
            });
        }
        let pad = usize::from(bth.pad_count);
        if pad > padded {
            return Err(DecodeError::PadTooLarge {
                pad: bth.pad_count,
                payload: padded,
            });
        }
        if padded - pad > MAX_PAYLOAD {
            return Err(DecodeError::PayloadTooLarge { len: padded - pad });
        }
        let payload = l3[payload_at..icrc_at - pad].to_vec();

        let icrc_found = u32::from_le_bytes([
            l3[icrc_at],
            l3[icrc_at + 1],
            l3[icrc_at + 2],
            l3[icrc_at + 3],
        ]);
        let icrc_computed =
            icrc::compute(&l3[..icrc_at], ip_len).ok_or(DecodeError::Truncated {
                layer: Layer::Icrc,
                need: bth_at + BTH_LEN,
                have: icrc_at,
            })?;
        Ok(Parsed {
            frame: RoceFrame {
                eth,
                ip,
                udp_src_port,
                udp_checksum: udp_csum != 0,
                bth,
                ext,
                payload,
            },
            icrc_found,
            icrc_computed,
        })
    }
}

/// Pad bytes that bring a payload to a multiple of four.
pub fn pad_for(payload_len: usize) -> usize {
    payload_len.wrapping_neg() & 3
}

fn need(b: &[u8], n: usize, layer: Layer) -> Result<(), DecodeError> {
    if b.len() < n {
        Err(DecodeError::Truncated {
            layer,
            need: n,
            have: b.len(),
        })
    } else {
        Ok(())
    }
}

fn write_ipv4(h: &Ipv4Header, total_len: usize, out: &mut Vec<u8>) {
    let at = out.len();
    out.push(0x45);
    out.push((h.dscp << 2) | (h.ecn & 3));
    out.extend_from_slice(&(total_len as u16).to_be_bytes());
    out.extend_from_slice(&h.identification.to_be_bytes());
    out.extend_from_slice(&(if h.dont_fragment { 0x4000u16 } else { 0 }).to_be_bytes());
    out.push(h.ttl);
    out.push(IP_PROTO_UDP);
    out.extend_from_slice(&[0, 0]);
    out.extend_from_slice(&h.src.octets());
    out.extend_from_slice(&h.dst.octets());
    let csum = internet_checksum(&out[at..at + IPV4_LEN]);
    out[at + 10..at + 12].copy_from_slice(&csum.to_be_bytes());
}

fn write_ipv6(h: &Ipv6Header, payload_len: usize, out: &mut Vec<u8>) {
    let tc = u32::from((h.dscp << 2) | (h.ecn & 3));
    let word = (6u32 << 28) | (tc << 20) | (h.flow_label & 0xF_FFFF);
    out.extend_from_slice(&word.to_be_bytes());
    out.extend_from_slice(&(payload_len as u16).to_be_bytes());
    out.push(IP_PROTO_UDP);
    out.push(h.hop_limit);
    out.extend_from_slice(&h.src.octets());
    out.extend_from_slice(&h.dst.octets());
}

/// Returns the header, its length and the IP total length.
fn parse_ipv4(l3: &[u8]) -> Result<(IpHeader, usize, usize), DecodeError> {
    need(l3, IPV4_LEN, Layer::Ip)?;
    let version = l3[0] >> 4;
    if version != 4 {
        return Err(DecodeError::IpVersionMismatch {
            expected: 4,
            found: version,
        });
    }
    let ihl = l3[0] & 0xF;
    if ihl != 5 {
        return Err(DecodeError::Ipv4Options(ihl));
    }
    let found = u16::from_be_bytes([l3[10], l3[11]]);
    let mut copy = [0u8; IPV4_LEN];
    copy.copy_from_slice(&l3[..IPV4_LEN]);
    copy[10] = 0;
    copy[11] = 0;
    let computed = internet_checksum(&copy);
    if found != computed {
        return Err(DecodeError::BadIpv4Checksum { found, computed });
    }
    let flags_frag = u16::from_be_bytes([l3[6], l3[7]]);
    if flags_frag & 0x3FFF != 0 {
        return Err(DecodeError::Ipv4Fragment);
    }
    if l3[9] != IP_PROTO_UDP {
        return Err(DecodeError::NotUdp(l3[9]));
    }
    let total = usize::from(u16::from_be_bytes([l3[2], l3[3]]));
    if total < IPV4_LEN {
        return Err(DecodeError::BadIpLength { ip_len: total });
    }
    need(l3, total, Layer::Ip)?;
    let header = Ipv4Header {
        src: Ipv4Addr::new(l3[12], l3[13], l3[14], l3[15]),
        dst: Ipv4Addr::new(l3[16], l3[17], l3[18], l3[19]),
        dscp: l3[1] >> 2,
        ecn: l3[1] & 3,
        identification: u16::from_be_bytes([l3[4], l3[5]]),
        dont_fragment: flags_frag & 0x4000 != 0,
        ttl: l3[8],
    };
    Ok((IpHeader::V4(header), IPV4_LEN, total))
}

fn parse_ipv6(l3: &[u8]) -> Result<(IpHeader, usize, usize), DecodeError> {
    need(l3, IPV6_LEN, Layer::Ip)?;
    let word = be32(l3);
    let version = (word >> 28) as u8;
    if version != 6 {
        return Err(DecodeError::IpVersionMismatch {
            expected: 6,
            found: version,
        });
    }
    if l3[6] != IP_PROTO_UDP {
        return Err(DecodeError::NotUdp(l3[6]));
    }
    let payload_len = usize::from(u16::from_be_bytes([l3[4], l3[5]]));
    need(l3, IPV6_LEN + payload_len, Layer::Ip)?;
    let tc = ((word >> 20) & 0xFF) as u8;
    let mut src = [0; 16];
    let mut dst = [0; 16];
    src.copy_from_slice(&l3[8..24]);
    dst.copy_from_slice(&l3[24..40]);
    let header = Ipv6Header {
        src: Ipv6Addr::from(src),
        dst: Ipv6Addr::from(dst),
        dscp: tc >> 2,
        ecn: tc & 3,
        flow_label: word & 0xF_FFFF,
        hop_limit: l3[7],
    };
    Ok((IpHeader::V6(header), IPV6_LEN, IPV6_LEN + payload_len))
}

/// RFC 1071 ones'-complement checksum.
pub fn internet_checksum(bytes: &[u8]) -> u16 {
    !fold(sum16(bytes, 0))
}

fn sum16(bytes: &[u8], mut acc: u32) -> u32 {
    let mut chunks = bytes.chunks_exact(2);
    for c in &mut chunks {
        acc += u32::from(u16::from_be_bytes([c[0], c[1]]));
    }
    if let [last] = chunks.remainder() {
        acc += u32::from(*last) << 8;
    }
    acc
}

fn fold(mut acc: u32) -> u16 {
    while acc > 0xFFFF {
        acc = (acc & 0xFFFF) + (acc >> 16);
    }
    acc as u16
}

/// UDP checksum over the pseudo-header of the IP header at the start of
/// `l3` (IPv4 or IPv6) and the UDP datagram after it.
fn udp_checksum(l3: &[u8], ip_len: usize) -> u16 {
    let udp = &l3[ip_len..];
    let mut acc = 0;
    if ip_len == IPV4_LEN {
        acc = sum16(&l3[12..20], acc);
    } else {
        acc = sum16(&l3[8..40], acc);
    }
    acc += u32::from(IP_PROTO_UDP) + udp.len() as u32;
    // The checksum field counts as zero while summing.
    acc = sum16(&udp[..6], acc);
    acc = sum16(&udp[8..], acc);
    match !fold(acc) {
        0 => 0xFFFF,
        c => c,
    }
}
