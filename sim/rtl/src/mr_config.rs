//! Loads the reference model's MR table into any Verilated block that has
//! `mr_translate`'s configuration port (`cfg_mr_*`, `cfg_mtt_*`): the block
//! itself or a datapath that passes the port through. The port is found by
//! name, so one loader serves every such block.

use super::RtlError;
use rocenic_hdl::codes::mr_state;
use rocenic_model::mr::{MrState, MrTable};
use rocenic_model::mr::{DEFAULT_MAX_MRS, DEFAULT_MAX_MTT_ENTRIES};
use verilator_sys::Sim;
use verilator_sys::{Block, SimError};

/// Writes MR table entries `0..mrs` (key index `i` is L_Key/R_Key
/// `i << 8`; absent entries as free) and MTT entries `0..mtt_entries`, one
/// of each per cycle, then leaves both write strobes low.
pub fn load_mr_table<B: Block>(
    sim: &mut Sim<B>,
    table: &MrTable,
    mrs: usize,
    mtt_entries: usize,
) -> Result<(), SimError> {
    let mr_write = B::input("cfg_mr_write")?;
    let mr_index = B::input("cfg_mr_index")?;
    let mr_state = B::input("cfg_mr_state")?;
    let mr_variant = B::input("cfg_mr_variant")?;
    let mr_pd = B::input("cfg_mr_pd")?;
    let mr_base_va = B::input("cfg_mr_base_va")?;
    let mr_len = B::input("cfg_mr_len")?;
    let mr_access = B::input("cfg_mr_access")?;
    let mr_page_shift = B::input("cfg_mr_page_shift")?;
    let mr_mtt_base = B::input("cfg_mr_mtt_base")?;
    let mtt_write = B::input("cfg_mtt_write")?;
    let mtt_index = B::input("cfg_mtt_index")?;
    let mtt_addr = B::input("cfg_mtt_addr")?;
    let mtt = table.mtt();
    for i in 0..mrs.max(mtt_entries) {
        let e = (i < mrs)
            .then(|| table.entry((i as u32) << 8))
            .flatten()
            .copied();
        let state = mr_state::encode(e.map_or(MrState::Free, |e| e.state));
        sim.set_bit(mr_write, i < mrs);
        sim.set_u64(mr_index, i as u64);
        sim.set_u64(mr_state, state);
        sim.set_u64(mr_variant, e.map_or(0, |e| e.variant.into()));
        sim.set_u64(mr_pd, e.map_or(0, |e| e.pd.0.into()));
        sim.set_u64(mr_base_va, e.map_or(0, |e| e.base_va));
        sim.set_u64(mr_len, e.map_or(0, |e| e.len));
        sim.set_u64(mr_access, e.map_or(0, |e| e.access.0.into()));
        sim.set_u64(mr_page_shift, e.map_or(12, |e| e.page_shift.into()));
        sim.set_u64(mr_mtt_base, e.map_or(0, |e| e.mtt_base.into()));
        sim.set_bit(mtt_write, i < mtt_entries);
        sim.set_u64(mtt_index, i as u64);
        sim.set_u64(mtt_addr, mtt.get(i).copied().unwrap_or(0));
        sim.tick();
    }
    sim.set_bit(mr_write, false);
    sim.set_bit(mtt_write, false);
    Ok(())
}

/// A new core `B` out of reset (`reset` pulsed once), its MR tables swept
/// (`cfg_ready`) and loaded with `table`: the first steps of every NIC
/// harness.
pub fn start_core<B: Block>(table: &MrTable) -> Result<Sim<B>, RtlError> {
    let mut sim = Sim::<B>::new()?;
    let reset = B::input("reset")?;
    let cfg_ready = B::output("cfg_ready")?;
    sim.set_bit(reset, true);
    sim.tick();
    sim.set_bit(reset, false);
    let mut waited = 0;
    loop {
        sim.eval();
        if sim.get_bit(cfg_ready) {
            break;
        }
        sim.tick();
        waited += 1;
        if waited > 4 * DEFAULT_MAX_MRS as u64 {
            return Err(RtlError::Stuck {
                cycle: sim.cycle(),
                what: "cfg_ready after reset".into(),
            });
        }
    }
    load_mr_table(&mut sim, table, DEFAULT_MAX_MRS, DEFAULT_MAX_MTT_ENTRIES)?;
    Ok(sim)
}
