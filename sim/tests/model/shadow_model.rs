//! The scoreboard's mechanism, checked on the model alone: a shadow NIC
//! given another NIC's inputs at their times (received frames, receive
//! WQEs posted, its timers fired QP by QP in any order) and asked for the
//! frame of the QP and class that NIC sent (`Nic::tx_class_of`,
//! `Nic::transmit_from`) predicts every frame, every CQE and the final
//! host memory exactly. The RTL NIC's scoreboard is this with the RTL in
//! the recorded NIC's place; if the model's transmit, timer or receive
//! path had state the shadow entry points did not reach, this would fail.

// Only the model traffic of the RTL tests' shared pieces: this test runs
// without the `rtl` feature (no Verilator).
use crate::traffic;

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rocenic_fabric::{Endpoint, Fabric, FaultConfig, LinkConfig, SwitchConfig, Time};
use rocenic_model::nic::{Nic, TxClass};
use rocenic_model::verbs::{Qpn, RecvWr};
use std::collections::BTreeMap;
use traffic::{MixedPair, MixedTraffic, LATE_RECVS_AT};

/// One input or output of a NIC, at its time.
#[derive(Clone, Debug)]
enum Event {
    Receive(Time, Vec<u8>),
    Transmit(Time, Vec<u8>),
    Advance(Time),
    PostRecv(Qpn, RecvWr),
}

/// A NIC on the fabric whose every input and output is logged.
struct Recorded {
    nic: Nic,
    log: Vec<Event>,
}

impl Endpoint for Recorded {
    fn mac(&self) -> [u8; 6] {
        self.nic.mac()
    }
    fn receive(&mut self, now: Time, frame: Vec<u8>) {
        self.log.push(Event::Receive(now, frame.clone()));
        self.nic.receive(now, frame);
    }
    fn transmit(&mut self, now: Time) -> Option<Vec<u8>> {
        let frame = self.nic.transmit(now)?;
        self.log.push(Event::Transmit(now, frame.clone()));
        Some(frame)
    }
    fn next_deadline(&self) -> Option<Time> {
        self.nic.next_deadline()
    }
    fn advance(&mut self, now: Time) {
        self.log.push(Event::Advance(now));
        self.nic.advance(now);
    }
}

/// Replays `log` into `shadow` (with `timers` false, never firing its
/// timers); returns the frames predicted per class, or the first frame
/// the shadow did not predict.
fn replay(
    shadow: &mut Nic,
    log: &[Event],
    timers: bool,
    rng: &mut ChaCha8Rng,
) -> Result<BTreeMap<TxClass, usize>, String> {
    let qpns = shadow.qpns();
    let mut classes = BTreeMap::new();
    for (i, e) in log.iter().enumerate() {
        match e {
            Event::Receive(now, frame) => shadow.receive(*now, frame.clone()),
            Event::PostRecv(qpn, wr) => shadow.post_recv(*qpn, wr.clone()).unwrap(),
            Event::Advance(now) if timers => {
                // The RTL's timer scan visits QPs in its own order.
                let mut order = qpns.clone();
                order.shuffle(rng);
                for &qpn in &order {
                    shadow.fire_timers(*now, qpn);
                }
            }
            Event::Advance(_) => {}
            Event::Transmit(now, frame) => {
                let (class, qpn) = shadow
                    .tx_class_of(frame)
                    .ok_or_else(|| format!("event {i}: a frame of no QP"))?;
                if shadow.transmit_from(*now, class, qpn).as_ref() != Some(frame) {
                    return Err(format!("event {i}: {class:?} of QP {qpn} not predicted"));
                }
                *classes.entry(class).or_insert(0) += 1;
            }
        }
    }
    Ok(classes)
}

#[test]
fn a_shadow_fed_a_nics_inputs_predicts_its_frames_cqes_and_memory() {
    let shape = MixedTraffic {
        qps: 3,
        msgs: 24,
        max_send_wr: 64,
        signaled: 0.8,
        fill: Some(0x5A),
    };
    let mut total = BTreeMap::new();
    for (seed, mtu, loss) in [(1u64, 256u32, 0.0), (2, 1024, 0.02), (3, 4096, 0.05)] {
        let what = format!("seed {seed}, MTU {mtu}, loss {loss}");
        let faults = FaultConfig::lossy(loss, 4_000);
        let recorded = MixedPair::new(seed, mtu, shape, |_| {});
        let mut shadows = MixedPair::new(seed, mtu, shape, |_| {});
        let mut blind = MixedPair::new(seed, mtu, shape, |_| {});
        let link = LinkConfig {
            faults,
            ..LinkConfig::default()
        };
        let mut fabric = Fabric::new(seed, SwitchConfig::default());
        let [a, b] = recorded.nics;
        let ids = [
            fabric.add_node(
                Recorded {
                    nic: a,
                    log: Vec::new(),
                },
                link.clone(),
            ),
            fabric.add_node(
                Recorded {
                    nic: b,
                    log: Vec::new(),
                },
                link,
            ),
        ];
        fabric.run_until(LATE_RECVS_AT);
        for (side, qpn, wr) in recorded.late_recvs {
            let node = fabric.node_mut(ids[side]);
            node.log.push(Event::PostRecv(qpn, wr.clone()));
            node.nic.post_recv(qpn, wr).unwrap();
        }
        fabric.run_until(500_000_000);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let sides = ids.iter().zip(&mut shadows.nics).zip(&mut blind.nics);
        for (side, ((&id, shadow), blind)) in sides.enumerate() {
            let what = format!("{what}, NIC {side}");
            let node = fabric.node_mut(id);
            let classes =
                replay(shadow, &node.log, true, &mut rng).unwrap_or_else(|e| panic!("{what}: {e}"));
            // The timers matter: under loss a shadow that never fires them
            // stops predicting (Go-Back-N after a timeout).
            if loss > 0.0 {
                assert!(replay(blind, &node.log, false, &mut rng).is_err(), "{what}");
            }
            for (c, n) in classes {
                *total.entry(c).or_insert(0) += n;
            }
            let cq = recorded.cqs[side];
            assert_eq!(
                shadow.poll_cq(cq, usize::MAX),
                node.nic.poll_cq(cq, usize::MAX),
                "{what}: CQEs"
            );
            assert!(shadow.memory() == node.nic.memory(), "{what}: host memory");
        }
    }
    eprintln!("frames predicted per class: {total:?}");
    assert!(
        total.get(&TxClass::Request).copied().unwrap_or(0) > 1000,
        "{total:?}"
    );
    assert!(
        total.get(&TxClass::Response).copied().unwrap_or(0) > 1000,
        "{total:?}"
    );
}
