//! The transport's codes as the RTL carries them: the BTH opcode table
//! (which extension headers follow each opcode).

pub mod opcode_headers;
