//! `DcqcnWatch`: the core's DCQCN sending side (`congestion::dcqcn_sender`)
//! driven with the model's parameters (BAR0's registers) and checked bit for bit against the
//! model's integer functions. Every outcome of the reaction point
//! (`rp_watch`) is replayed on `dcqcn_integer::react` with its event, and
//! every outcome of the pacing gate (`pacing_watch`) on `pacing::pace`:
//! the same events give the same Rc, Rt, alpha, timers and token counts.
//! What drives those events is checked by the harness beside it: the
//! CNPs the reaction point took against the CNPs the shadow model
//! received, the bytes it counted against the request frames the core
//! sent.

use rocenic_hdl::congestion::dcqcn_reaction_point::{
    model_record, KIND_CNP, KIND_RESET, KIND_SENT,
};
use rocenic_hdl::congestion::pacing_gate::PacingRecord as RtlPacingRecord;
use rocenic_hdl::congestion::pacing_scheduler::{OUT_CHARGE, OUT_QUESTION, OUT_RATE};
use rocenic_model::dcqcn_integer::{react, Increase, RpEvent, RpParams, RpRecord};
use rocenic_model::pacing::{pace, PacingEvent, PacingParams, PacingRecord};
use std::collections::HashMap;
use verilator_sys::{Block, Output, Sim, SimError};

/// The model's pacing parameters on the core's `pacing_*` inputs (the
/// reaction point's come from BAR0: `bar0::program_congestion`).
pub fn drive_pacing<B: Block>(sim: &mut Sim<B>, pacing: &PacingParams) -> Result<(), SimError> {
    sim.set_u64(B::input("pacing_line_rate")?, pacing.line_rate.into());
    sim.set_u64(B::input("pacing_byte_cost")?, pacing.byte_cost.into());
    sim.set(B::input("pacing_burst")?, &[pacing.burst]);
    Ok(())
}

/// What the watch has seen, for the harness's checks and the run's
/// statistics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DcqcnTally {
    /// CNPs the reaction point took.
    pub cnps: u64,
    /// Of them, the ones that cut a rate.
    pub cuts: u64,
    /// Bytes of the sent events (request frames, Ethernet header to ICRC).
    pub sent_bytes: u64,
    /// Rate increases (fast recovery, additive, hyper).
    pub increases: u64,
    /// Pacing questions held (a throttled QP waiting for its rate).
    pub held: u64,
    /// Outcomes compared with the model's.
    pub checked: u64,
}

/// The watch ports and the model's copy of every QP's records.
pub struct DcqcnWatch<B: Block> {
    rp: RpParams,
    pacing: PacingParams,
    rp_valid: Output<B>,
    rp_kind: Output<B>,
    rp_qpn: Output<B>,
    rp_now: Output<B>,
    rp_bytes: Output<B>,
    rp_rate: Output<B>,
    rp_cut: Output<B>,
    rp_held: Output<B>,
    rp_increase: Output<B>,
    rp_record: Output<B>,
    pace_valid: Output<B>,
    pace_kind: Output<B>,
    pace_qpn: Output<B>,
    pace_value: Output<B>,
    pace_now: Output<B>,
    pace_allowed: Output<B>,
    pace_record: Output<B>,
    lost: Output<B>,
    rp_records: HashMap<u64, RpRecord>,
    pacing_records: HashMap<u64, PacingRecord>,
    pub tally: DcqcnTally,
}

impl<B: Block> DcqcnWatch<B> {
    pub fn new(rp: RpParams, pacing: PacingParams) -> Result<Self, SimError> {
        Ok(DcqcnWatch {
            rp,
            pacing,
            rp_valid: B::output("rp_watch_valid")?,
            rp_kind: B::output("rp_watch_kind")?,
            rp_qpn: B::output("rp_watch_qpn")?,
            rp_now: B::output("rp_watch_now")?,
            rp_bytes: B::output("rp_watch_bytes")?,
            rp_rate: B::output("rp_watch_rate")?,
            rp_cut: B::output("rp_watch_cut")?,
            rp_held: B::output("rp_watch_held")?,
            rp_increase: B::output("rp_watch_increase")?,
            rp_record: B::output("rp_watch_record")?,
            pace_valid: B::output("pacing_watch_valid")?,
            pace_kind: B::output("pacing_watch_kind")?,
            pace_qpn: B::output("pacing_watch_qpn")?,
            pace_value: B::output("pacing_watch_value")?,
            pace_now: B::output("pacing_watch_now")?,
            pace_allowed: B::output("pacing_watch_allowed")?,
            pace_record: B::output("pacing_watch_record")?,
            lost: B::output("dcqcn_lost")?,
            rp_records: HashMap::new(),
            pacing_records: HashMap::new(),
            tally: DcqcnTally::default(),
        })
    }

    /// This cycle's outcomes (after `eval`), replayed on the model; the
    /// first difference is the error.
    pub fn observe(&mut self, sim: &Sim<B>) -> Result<(), String> {
        if sim.get_u64(self.lost) != 0 {
            return Err("the DCQCN sender lost a CNP, a sent frame or a charge".into());
        }
        if sim.get_bit(self.rp_valid) {
            let qpn = sim.get_u64(self.rp_qpn);
            let now = sim.get_u64(self.rp_now) as u32;
            let event = match sim.get_u64(self.rp_kind) {
                KIND_RESET => RpEvent::Reset,
                KIND_CNP => RpEvent::Cnp { now },
                KIND_SENT => RpEvent::Sent {
                    bytes: sim.get_u64(self.rp_bytes) as u16,
                },
                _ => RpEvent::Tick { now },
            };
            let record = self.rp_records.get(&qpn).copied().unwrap_or_default();
            let want = react(&self.rp, &record, event);
            let got = (
                model_record(&sim.get(self.rp_record)),
                sim.get_u64(self.rp_rate) as u32,
                sim.get_bit(self.rp_cut),
                sim.get_bit(self.rp_held),
                Increase::from_code(sim.get_u64(self.rp_increase)),
            );
            let wanted = (want.record, want.rate, want.cut, want.held, want.increase);
            if got != wanted {
                return Err(format!(
                    "reaction point, QP {qpn}, {event:?}: the core made {got:?}, the model {wanted:?}"
                ));
            }
            self.rp_records.insert(qpn, want.record);
            match event {
                RpEvent::Cnp { .. } => self.tally.cnps += 1,
                RpEvent::Sent { bytes } => self.tally.sent_bytes += u64::from(bytes),
                _ => {}
            }
            self.tally.cuts += u64::from(want.cut);
            self.tally.increases += u64::from(want.increase != Increase::None);
            self.tally.checked += 1;
        }
        if sim.get_bit(self.pace_valid) {
            let qpn = sim.get_u64(self.pace_qpn);
            let now = sim.get_u64(self.pace_now) as u32;
            let value = sim.get_u64(self.pace_value) as u32;
            let event = match sim.get_u64(self.pace_kind) {
                OUT_QUESTION => PacingEvent::Send(value as u16),
                OUT_RATE => PacingEvent::Rate(value),
                OUT_CHARGE => PacingEvent::Charge(value as u16),
                _ => PacingEvent::Reset,
            };
            let record = self.pacing_records.get(&qpn).copied().unwrap_or_default();
            let want = pace(&self.pacing, &record, event, now);
            let got = (
                RtlPacingRecord::model_from_words(&sim.get(self.pace_record)),
                sim.get_bit(self.pace_allowed),
            );
            if got != (want.record, want.allowed) {
                return Err(format!(
                    "pacing gate, QP {qpn}, {event:?} at {now}: the core made {got:?}, the model {:?}",
                    (want.record, want.allowed)
                ));
            }
            self.pacing_records.insert(qpn, want.record);
            if matches!(event, PacingEvent::Send(_)) && !want.allowed {
                self.tally.held += 1;
            }
            self.tally.checked += 1;
        }
        Ok(())
    }
}
