//! The receive datapath's front end: Ethernet / IPv4 / IPv6 / UDP / BTH and
//! extension headers parsed into one header record, the payload realigned
//! to lane 0, pad and ICRC removed, every drop counted by reason.

pub mod header_record;
pub mod rx_parser;
