//! The bytes of a RoCEv2 frame: the ICRC ([`crc`]), the receive parser
//! ([`rx`]: frame to header record and payload) and the transmit builder
//! ([`tx`]: header record and payload to frame). Every block here works on
//! one frame stream at 512 bits a beat and knows nothing of QPs.

pub mod crc;
pub mod rx;
pub mod tx;
