//! Seeded random valid RoCEv2 frames for `rocenic frames`: every opcode of
//! the codec's table, both IP versions, payloads up to 4096 bytes (the
//! generator lives in `rocenic_wire::random`).

pub use rocenic_wire::random::random_frames;
