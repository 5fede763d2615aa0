//! The transport's codes as the RTL carries them: the BTH opcode table
//! (which extension headers follow each opcode), and per family of port
//! and record codes their values under the model's (or the IBA's) names,
//! with the conversions from and to the model's types. Blocks take their
//! constants from here (as `Constant<>` fields or `bits::<N>(CONST)`);
//! harnesses and tests convert through here instead of matching numbers
//! by hand, so each mapping exists once.

pub mod duplicate_class;
pub mod grant_refusal;
pub mod mr_state;
pub mod mr_status;
pub mod mtu;
pub mod opcode_headers;
pub mod qp_state;
pub mod request_verdict;
pub mod send_op_kind;
pub mod wc_opcode;
pub mod wc_status;
pub mod wqe_kind;
