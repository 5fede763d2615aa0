//! The transmit datapath: a header record and a payload stream into a whole
//! RoCEv2 frame, stage by stage (header bytes, merge with the payload, UDP
//! checksum or IPv4 header checksum, pad and ICRC), joined in `tx_builder`.

pub mod tx_builder;
pub mod tx_frame_merge;
pub mod tx_header;
pub mod tx_header_prep;
pub mod tx_icrc_append;
pub mod tx_udp_checksum;
