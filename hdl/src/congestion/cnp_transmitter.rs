//! `CnpTransmitter`: frames a congestion notification packet (RoCEv2 CNP,
//! BTH opcode 0x81) to a QP's peer from the QP's address entry: the
//! frame `rocenic_model::nic::Nic` sends for `TxClass::Cnp` (its
//! `queue_cnp`), byte for byte. As ConnectX NICs send it: BTH with P_Key
//! 0xFFFF, BECN set, the peer's QPN as destination QP (the QP whose rate
//! the peer's reaction point cuts), AckReq 0, PSN 0; then 16 zero bytes
//! and the ICRC. The IP header is Not-ECT with the NIC's CNP DSCP, TTL /
//! hop limit 64, DF set on IPv4; the UDP source port is the QP's.
//!
//! # Ports
//!
//! - `clock`; `reset` (synchronous, high; hold it one cycle): drops the
//!   frames in flight and zeroes the IPv4 identification counter.
//! - `req_valid` / `req_ready`, `req_address` ([`QpAddress`], as
//!   [`QpAddressRam`](crate::qp::qp_address_ram::QpAddressRam) reads it
//!   out): one CNP to send, sampled in the accepting cycle.
//! - `cnp_dscp` (6 bits): the DSCP of every CNP (the model's
//!   `NicConfig::cnp_dscp`, NVIDIA's `cnp_dscp`).
//! - `frame` (AXI-Stream source, 512 bits, full backpressure): the frames,
//!   in request order.
//!
//! # IPv4 identification
//!
//! A counter of the IPv4 CNPs sent since reset, pre-incremented: the model
//! numbers CNPs with a counter of their own (`TxClass::ip_id_counter`), as
//! [`ResponseTransmitter`](crate::responder::response_transmitter::ResponseTransmitter)
//! does its responses.
//!
//! # Latency and throughput
//!
//! One request per cycle while the builder takes headers; the builder's
//! latency (15 cycles to the first beat over IPv4). A CNP is 2 beats
//! (70 bytes over IPv4, 90 over IPv6), so CNPs stream at one per 2 cycles.

use crate::frame::tx::tx_builder::TxBuilder;
use crate::frame::tx::tx_header::TxHeader;
use crate::primitives::stream::{AxisSource, DATA_BITS, KEEP_BITS};
use crate::qp::qp_address_ram::QpAddress;
use crate::responder::response_transmitter::HOP_LIMIT;
use rust_hdl::prelude::*;

/// BTH opcode of a CNP.
pub const OPCODE_CNP: u64 = 0x81;
/// BTH P_Key of a CNP (the default partition's, as ConnectX sends it).
pub const CNP_PKEY: u64 = 0xFFFF;

#[derive(LogicBlock)]
pub struct CnpTransmitter {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub req_valid: Signal<In, Bit>,
    pub req_ready: Signal<Out, Bit>,
    pub req_address: Signal<In, QpAddress>,
    pub cnp_dscp: Signal<In, Bits<6>>,
    pub frame: AxisSource<DATA_BITS, KEEP_BITS>,

    builder: TxBuilder,
    h_valid: DFF<Bit>,
    h_record: DFF<TxHeader>,
    ip_id: DFF<Bits<16>>,
    take: Signal<Local, Bit>,
    template: Constant<TxHeader>,
}

impl Default for CnpTransmitter {
    fn default() -> Self {
        CnpTransmitter {
            clock: Default::default(),
            reset: Default::default(),
            req_valid: Default::default(),
            req_ready: Default::default(),
            req_address: Default::default(),
            cnp_dscp: Default::default(),
            frame: Default::default(),
            builder: Default::default(),
            h_valid: Default::default(),
            h_record: Default::default(),
            ip_id: Default::default(),
            take: Default::default(),
            template: Constant::new(TxHeader {
                ttl: bits(HOP_LIMIT),
                opcode: bits(OPCODE_CNP),
                pkey: bits(CNP_PKEY),
                becn: true,
                ..TxHeader::default()
            }),
        }
    }
}

impl Logic for CnpTransmitter {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, h_valid, h_record, ip_id);
        self.builder.clock.next = self.clock.val();
        self.builder.reset.next = self.reset.val();

        self.take.next =
            self.req_valid.val() & (!self.h_valid.q.val() | self.builder.header.ready.val());
        self.req_ready.next = !self.h_valid.q.val() | self.builder.header.ready.val();
        if self.h_valid.q.val() & self.builder.header.ready.val() {
            self.h_valid.d.next = false;
        }
        if self.take.val() {
            self.h_valid.d.next = true;
            if !self.req_address.val().ipv6 {
                self.ip_id.d.next = self.ip_id.q.val() + 1;
            }
        }
        // The fields a CNP fixes come from the template, the rest from
        // the QP's address entry.
        self.h_record.d.next = self.template.val();
        self.h_record.d.next.eth_dst = self.req_address.val().eth_dst;
        self.h_record.d.next.eth_src = self.req_address.val().eth_src;
        self.h_record.d.next.ipv6 = self.req_address.val().ipv6;
        self.h_record.d.next.ip_src = self.req_address.val().ip_src;
        self.h_record.d.next.ip_dst = self.req_address.val().ip_dst;
        self.h_record.d.next.dscp = self.cnp_dscp.val();
        self.h_record.d.next.ipv4_identification = self.ip_id.q.val() + 1;
        self.h_record.d.next.ipv4_dont_fragment = !self.req_address.val().ipv6;
        self.h_record.d.next.udp_src_port = self.req_address.val().udp_src_port;
        self.h_record.d.next.dest_qp = self.req_address.val().dest_qp;
        if !self.take.val() {
            self.h_record.d.next = self.h_record.q.val();
        }
        self.builder.header.valid.next = self.h_valid.q.val();
        self.builder.header.record.next = self.h_record.q.val();

        // A CNP has no payload: the 16 reserved bytes are the builder's.
        self.builder.payload.tvalid.next = false;
        self.builder.payload.tdata.next = 0.into();
        self.builder.payload.tkeep.next = 0.into();
        self.builder.payload.tlast.next = false;
        AxisSource::<DATA_BITS, KEEP_BITS>::link(&mut self.frame, &mut self.builder.frame);

        if self.reset.val() {
            self.h_valid.d.next = false;
            self.ip_id.d.next = 0.into();
        }
    }
}
