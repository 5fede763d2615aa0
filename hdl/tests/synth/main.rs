//! The RTL flow and synthesizability checks: the `rocenic-hdl-export`
//! binary and `hdl/synth/rtl_flow.py` on blocks whose resources are known,
//! and the receive-path blocks under Yosys (`hierarchy -check`, `synth`,
//! `check -assert`).

mod rx_synth;
mod synth;
