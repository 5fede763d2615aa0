//! Per-QP state: the context record's bit layout, the context RAM with its
//! forwarding read-modify-write, the record seen as fields, the per-QP
//! address table (peer MAC and IP), the ring storage of per-QP slots, and the
//! local ACK timeout / RNR wait timers.

pub mod qp_address_ram;
pub mod qp_context;
pub mod qp_context_record;
pub mod qp_slot_ram;
pub mod qp_timers;
pub mod record_fields;
