//! Response queue lockstep: the Verilated `response_queue` block (1024
//! QPs x 8 items) against its contract model (`ResponseQueueModel`: the
//! model responder's own `ResponseQueue` per QP), cycle by cycle. Every
//! descriptor the block presents and the test accepts must be the model's
//! next packet of that QP; the block picks which QP goes next (a ready-QP
//! FIFO, one packet per turn), the model fixes what each QP sends, so the
//! comparison is per QP. At the end both are drained.
//!
//! Back-pressure: a push that needs a slot in a full queue is not taken
//! until that QP's head item has left. Every cycle checks the block
//! against the model's bounds on its occupancy (voided READs are dropped
//! lazily at the head): a push is never taken while the model says the
//! queue is full, a wait (`full_waits`) is only counted when the model
//! says it may be full, and a push that waited is taken only after its
//! QP's head item left (a packet, or a voided READ dropped).
//!
//! The traffic: random pushes, READ voids, flushes and reconfigurations
//! over many QPs with dequeue backpressure, and the queue operations the
//! model's responders made in NIC-pair scenarios with loss, duplication
//! and reordering (every workload, READs of many sizes, MTU 256 to 4096),
//! replayed in order.

use crate::rtl_common::faults::lossy;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rocenic_hdl::responder::response_queue::CommandFields;
use rocenic_model::response_queue::{
    record_queue_ops, Command, Descriptor, QueueItem, QueueOp, ReadSlice, RespPacket,
    ResponseQueue, ResponseQueueModel,
};
use rocenic_sim::scenario::{run, ScenarioConfig, Workload};
use std::collections::HashMap;
use verilator_sys::{ResponseQueue as Rtl, Sim};

const A: usize = 10;
const D: usize = 3;

fn fields(c: &Command) -> CommandFields {
    match *c {
        Command::Configure { qpn, mtu } => CommandFields::configure(qpn, mtu),
        Command::PushAck { qpn, psn, msn } => CommandFields::push_ack(qpn, psn, msn),
        Command::PushNak {
            qpn,
            syndrome,
            psn,
            msn,
        } => CommandFields::push_nak(qpn, syndrome, psn, msn),
        Command::PushAtomicAck {
            qpn,
            psn,
            orig,
            msn,
        } => CommandFields::push_atomic_ack(qpn, psn, orig, msn),
        Command::PushRead {
            qpn,
            psn,
            va,
            rkey,
            len,
            msn,
        } => CommandFields::push_read(qpn, psn, va, rkey, len, msn),
        Command::DropReads {
            qpn,
            first_psn,
            npsn,
        } => CommandFields::drop_reads(qpn, first_psn, npsn),
        Command::Flush { qpn } => CommandFields::flush(qpn),
    }
}

struct Bench {
    sim: Sim<Rtl>,
    model: ResponseQueueModel,
    /// `full_waits` as last seen.
    waits_seen: u64,
    /// Packets sent per QP.
    qp_packets: HashMap<u32, u64>,
    /// The offered push waited when its QP had sent this many packets.
    waiting_since: Option<u64>,
    commands: u64,
    held: u64,
}

impl Bench {
    fn new() -> Bench {
        Bench {
            sim: Sim::<Rtl>::new().expect("response_queue is exported"),
            model: ResponseQueueModel::new(A, D),
            waits_seen: 0,
            qp_packets: HashMap::new(),
            waiting_since: None,
            commands: 0,
            held: 0,
        }
    }

    /// One cycle; whether `command` was accepted.
    fn step(&mut self, command: Option<Command>, ready: bool) -> bool {
        let f = command.map(|c| fields(&c)).unwrap_or_default();
        let s = &mut self.sim;
        s.set_bit(Rtl::COMMAND_VALID, command.is_some());
        s.set_u64(Rtl::COMMAND_OP, f.op);
        s.set_u64(Rtl::COMMAND_QPN, f.qpn);
        s.set_u64(Rtl::COMMAND_SYNDROME, f.syndrome);
        s.set_u64(Rtl::COMMAND_PSN, f.psn);
        s.set_u64(Rtl::COMMAND_MSN, f.msn);
        s.set_u64(Rtl::COMMAND_VALUE, f.value);
        s.set_u64(Rtl::COMMAND_RKEY, f.rkey);
        s.set_u64(Rtl::COMMAND_LEN, f.len);
        s.set_u64(Rtl::COMMAND_MTU_CODE, f.mtu_code);
        s.set_bit(Rtl::PACKET_READY, ready);
        s.eval();
        // A wait is counted the cycle after the push found its queue full
        // (no packet leaves in between).
        let waits = s.get_u64(Rtl::FULL_WAITS);
        if waits != self.waits_seen {
            assert_eq!(waits, self.waits_seen + 1, "cycle {}", s.cycle());
            let c = command.expect("a wait with a command offered");
            assert!(
                self.model.may_wait(&c),
                "cycle {}: {c:x?} waited, its queue not full",
                s.cycle()
            );
            self.waits_seen = waits;
            let sent = self.qp_packets.get(&c.qpn()).copied().unwrap_or(0);
            self.waiting_since = Some(sent);
        }
        let accepted = command.is_some() && s.get_bit(Rtl::COMMAND_READY);
        if s.get_bit(Rtl::PACKET_VALID) {
            if ready {
                let d = Descriptor {
                    qpn: s.get_u64(Rtl::PACKET_QPN) as u32,
                    packet: RespPacket {
                        opcode: s.get_u64(Rtl::PACKET_OPCODE) as u8,
                        psn: s.get_u64(Rtl::PACKET_PSN) as u32,
                        aeth: s.get_bit(Rtl::PACKET_AETH).then(|| {
                            (
                                s.get_u64(Rtl::PACKET_SYNDROME) as u8,
                                s.get_u64(Rtl::PACKET_MSN) as u32,
                            )
                        }),
                        atomic_orig: s
                            .get_bit(Rtl::PACKET_ATOMIC)
                            .then(|| s.get_u64(Rtl::PACKET_ORIG)),
                        read: s.get_bit(Rtl::PACKET_READ).then(|| ReadSlice {
                            va: s.get_u64(Rtl::PACKET_VA),
                            rkey: s.get_u64(Rtl::PACKET_RKEY) as u32,
                            offset: s.get_u64(Rtl::PACKET_OFFSET) as u32,
                            len: s.get_u64(Rtl::PACKET_LEN) as u32,
                        }),
                    },
                };
                if let Err(e) = self.model.accept(&d) {
                    panic!("cycle {}: {e}", s.cycle());
                }
                *self.qp_packets.entry(d.qpn).or_default() += 1;
            } else {
                self.held += 1;
            }
        }
        if let Some(c) = command.filter(|_| accepted) {
            if let Some(since) = self.waiting_since.take() {
                // A slot freed: a packet of the QP left, or the block
                // dropped a voided READ at its head.
                let sent = self.qp_packets.get(&c.qpn()).copied().unwrap_or(0);
                let q = c.qpn();
                assert!(
                    sent > since || self.model.min_slots(q) < self.model.queue(q).slots(),
                    "cycle {}: {c:x?} taken after a wait, its head never left",
                    s.cycle()
                );
            }
            if let Err(e) = self.model.take(&c) {
                panic!("cycle {}: {e}", s.cycle());
            }
            self.commands += 1;
        }
        s.tick();
        accepted
    }

    fn run(&mut self, command: Command, ready: &mut impl FnMut() -> bool) {
        while !self.step(Some(command), ready()) {}
    }

    fn drain(&mut self) {
        let mut idle = 0;
        while idle < 40 {
            let before = self.model.packets;
            self.step(None, true);
            idle = if self.model.packets == before {
                idle + 1
            } else {
                0
            };
        }
        if let Err(e) = self.model.settle_drained() {
            panic!("after draining: {e}");
        }
    }
}

#[test]
fn random_commands_over_many_qps_match_the_model() {
    let seed = 0x5e9_1001;
    eprintln!("seed {seed:#x}");
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut b = Bench::new();
    // 200 QPs spread over the 1024, some sharing FIFO turns heavily.
    let qpns: Vec<u32> = (0..200).map(|_| rng.gen_range(0..1 << A)).collect();
    let mut live: HashMap<u32, bool> = HashMap::new();
    let mut ready_rng = ChaCha8Rng::seed_from_u64(seed ^ 1);
    for &qpn in &qpns {
        let mtu = 256 << rng.gen_range(0..5);
        b.run(Command::Configure { qpn, mtu }, &mut || true);
        live.insert(qpn, true);
    }
    let (mut reads, mut voids, mut flushes) = (0, 0, 0);
    for cycle in 0..300_000u64 {
        let p_ready = [0.95, 0.5, 0.05][((cycle / 20_000) % 3) as usize];
        let mut ready = || ready_rng.gen_bool(p_ready);
        if !rng.gen_bool(0.3) {
            let r = ready();
            b.step(None, r);
            continue;
        }
        let qpn = qpns[rng.gen_range(0..qpns.len())];
        let psn = rng.gen_range(0..1u32 << 24);
        let msn = rng.gen_range(0..1u32 << 24);
        let c = match rng.gen_range(0..40) {
            0 => Command::Configure {
                qpn,
                mtu: 256 << rng.gen_range(0..5),
            },
            1..=14 => Command::PushAck { qpn, psn, msn },
            15..=16 => Command::PushNak {
                qpn,
                syndrome: [0x60, 0x61, 0x62, 0x63, 0x20 | rng.gen_range(0..32)]
                    [rng.gen_range(0..5)],
                psn,
                msn,
            },
            17..=21 => Command::PushAtomicAck {
                qpn,
                psn,
                orig: rng.gen(),
                msn,
            },
            22..=35 => Command::PushRead {
                qpn,
                psn,
                va: rng.gen(),
                rkey: rng.gen(),
                len: match rng.gen_range(0..5) {
                    0 => 0,
                    1 => rng.gen_range(1..=256),
                    2 => 4096 * rng.gen_range(1..4),
                    3 => rng.gen_range(1..=20_000),
                    _ => rng.gen_range(1 << 20..=1 << 22),
                },
                msn,
            },
            36..=38 => {
                let first = b
                    .model
                    .queue(qpn)
                    .items()
                    .find_map(|i| match i {
                        QueueItem::Read { psn, .. } => Some(*psn),
                        _ => None,
                    })
                    .unwrap_or(psn);
                Command::DropReads {
                    qpn,
                    first_psn: first.wrapping_sub(rng.gen_range(0..3)) & 0xFF_FFFF,
                    npsn: rng.gen_range(1..40),
                }
            }
            _ => Command::Flush { qpn },
        };
        // After a flush only a reconfiguration (as the responder does);
        // pushes to full queues wait; huge READs rarely, they take
        // thousands of packets.
        let allowed = match c {
            Command::Configure { .. } => true,
            Command::PushRead { len, .. } if len >= 1 << 20 => rng.gen_bool(0.01),
            _ => live[&qpn],
        };
        if !allowed {
            continue;
        }
        match c {
            Command::Configure { .. } => {
                live.insert(qpn, true);
            }
            Command::Flush { .. } => {
                live.insert(qpn, false);
                flushes += 1;
            }
            Command::PushRead { .. } => reads += 1,
            Command::DropReads { .. } => voids += 1,
            _ => {}
        }
        b.run(c, &mut ready);
    }
    b.drain();
    eprintln!(
        "seed {seed:#x}: {} commands ({reads} READs, {voids} voids, {flushes} flushes), \
         {} packets, {} held cycles, {} pushes waited for room, {} cycles",
        b.commands,
        b.model.packets,
        b.held,
        b.waits_seen,
        b.sim.cycle()
    );
    assert!(b.model.packets > 20_000);
    assert!(b.held > 10_000);
    assert!(b.waits_seen > 100, "{}", b.waits_seen);
}

/// Replays a scenario's queue operations on the block (and, as recorded,
/// on fresh model queues, which must send what the NIC's queues sent);
/// returns (commands, packets, deepest model NIC queue, pushes that waited
/// for room in the block's queue).
fn replay(name: &str, trace: &[(u64, QueueOp)], rng: &mut ChaCha8Rng) -> (u64, u64, usize, u64) {
    // Each model queue (a QP entering RTR) gets its own block QP; its MTU
    // is the one its transmit opportunities ran with.
    let mut mtu: HashMap<u64, u32> = HashMap::new();
    for (serial, op) in trace {
        if let QueueOp::Pop { mtu: m, .. } = op {
            let old = *mtu.entry(*serial).or_insert(*m);
            assert_eq!(old, *m, "{name}: MTU changed on queue {serial}");
        }
    }
    let mut qpn_of: HashMap<u64, u32> = HashMap::new();
    let mut flushed: HashMap<u64, bool> = HashMap::new();
    let mut b = Bench::new();
    let mut ready = || true;
    let mut max_slots = 0;
    let mut shadow: HashMap<u64, ResponseQueue<()>> = HashMap::new();
    for (serial, op) in trace {
        // The recording, replayed on the model alone, is self-consistent.
        let q = shadow.entry(*serial).or_default();
        match *op {
            QueueOp::PushAck { psn, msn } => q.push_ack(psn, msn),
            QueueOp::PushNak { syndrome, psn, msn } => q.push_nak(syndrome, psn, msn),
            QueueOp::PushAtomicAck { psn, orig, msn } => q.push_atomic_ack(psn, orig, msn),
            QueueOp::PushRead {
                psn,
                va,
                rkey,
                len,
                msn,
            } => q.push_read(psn, va, rkey, len, msn, ()),
            QueueOp::DropReads { first_psn, npsn } => q.drop_reads(first_psn, npsn),
            QueueOp::FlushToError => q.flush_to_error(),
            QueueOp::Pop { live, mtu, packet } => {
                assert_eq!(q.next_packet(live, mtu), packet, "{name}: recorded pop")
            }
        }
        max_slots = max_slots.max(q.slots());
        let next = qpn_of.len() as u32;
        let qpn = *qpn_of.entry(*serial).or_insert_with(|| {
            assert!(next < 1 << A, "{name}: more than 1024 queues");
            b.run(
                Command::Configure {
                    qpn: next,
                    mtu: mtu.get(serial).copied().unwrap_or(1024),
                },
                &mut ready,
            );
            next
        });
        let c = match *op {
            QueueOp::PushAck { psn, msn } => Command::PushAck { qpn, psn, msn },
            QueueOp::PushNak { syndrome, psn, msn } => Command::PushNak {
                qpn,
                syndrome,
                psn,
                msn,
            },
            QueueOp::PushAtomicAck { psn, orig, msn } => Command::PushAtomicAck {
                qpn,
                psn,
                orig,
                msn,
            },
            QueueOp::PushRead {
                psn,
                va,
                rkey,
                len,
                msn,
            } => Command::PushRead {
                qpn,
                psn,
                va,
                rkey,
                len,
                msn,
            },
            QueueOp::DropReads { first_psn, npsn } => Command::DropReads {
                qpn,
                first_psn,
                npsn,
            },
            QueueOp::FlushToError => {
                flushed.insert(*serial, true);
                Command::Flush { qpn }
            }
            QueueOp::Pop { live, .. } => {
                assert!(
                    live || flushed.get(serial).copied().unwrap_or(false),
                    "{name}: a queue not live without a flush"
                );
                // The model sent a packet here: let the block run a little.
                for _ in 0..rng.gen_range(0..8) {
                    let r = rng.gen_bool(0.8);
                    b.step(None, r);
                }
                continue;
            }
        };
        if !matches!(c, Command::Flush { .. }) {
            assert!(
                !flushed.get(serial).copied().unwrap_or(false),
                "{name}: a push after a flush"
            );
        }
        b.run(c, &mut ready);
    }
    b.drain();
    (b.commands, b.model.packets, max_slots, b.waits_seen)
}

#[test]
fn model_nic_traces_under_loss_match() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x5e9_2001);
    let (mut commands, mut packets, mut max_slots, mut stalls) = (0, 0, 0, 0);
    let mut read_pushes = 0;
    let mut voids = 0;
    for (k, workload) in [
        Workload::Read,
        Workload::Atomic,
        Workload::Mix,
        Workload::Write,
        Workload::Send,
    ]
    .into_iter()
    .enumerate()
    {
        for (loss, size, mtu) in [
            (0.03, 20_000, 1024),
            (0.05, 70_000, 4096),
            (0.05, 3000, 256),
            (0.02, 600, 512),
            (0.04, 9000, 2048),
        ] {
            let config = ScenarioConfig {
                workload,
                size,
                count: 12,
                qps: 3,
                mtu,
                faults: lossy(loss),
                seed: 900 + k as u64 * 10 + (loss * 100.0) as u64,
                ..ScenarioConfig::default()
            };
            let (report, trace) = record_queue_ops(|| run(&config, None).expect("scenario runs"));
            assert!(report.data_verified, "{config:?}: {:?}", report.mismatches);
            assert!(!trace.is_empty(), "{config:?}");
            read_pushes += trace
                .iter()
                .filter(|(_, o)| matches!(o, QueueOp::PushRead { .. }))
                .count();
            voids += trace
                .iter()
                .filter(|(_, o)| matches!(o, QueueOp::DropReads { .. }))
                .count();
            let name = format!("{workload:?} loss {loss} size {size} mtu {mtu}");
            let (c, p, m, w) = replay(&name, &trace, &mut rng);
            commands += c;
            packets += p;
            max_slots = max_slots.max(m);
            stalls += w;
        }
    }
    eprintln!(
        "traces: {commands} commands ({read_pushes} READ pushes, {voids} READ voids), \
         {packets} packets; deepest model NIC queue {max_slots} items, \
         {stalls} pushes waited for room in the block's 8"
    );
    assert!(read_pushes > 100 && voids > 0 && packets > 1000);
    assert!(stalls > 0, "the traces never filled a queue");
}

#[test]
fn a_push_to_a_full_queue_waits_until_its_qp_sends() {
    let seed = 0x5e9_3001;
    eprintln!("seed {seed:#x}");
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut b = Bench::new();
    let mut ready = || true;
    for qpn in 0..8 {
        b.run(Command::Configure { qpn, mtu: 256 }, &mut ready);
    }
    // Long READs on seven QPs take most dequeue turns, so QP 3's atomic
    // ACKs, NAKs and READs pile up faster than its turns pop them (no
    // voids, no flushes: the model's occupancy is the block's, so a push
    // is taken exactly when the model says it fits).
    let mut expected = 0;
    for qpn in (0..8).filter(|&q| q != 3) {
        let len = 40 * 256;
        b.run(
            Command::PushRead {
                qpn,
                psn: 100,
                va: 0x1000,
                rkey: 7,
                len,
                msn: 1,
            },
            &mut ready,
        );
        expected += 40;
    }
    let mut pushes = 0;
    for k in 0..60u32 {
        let c = match rng.gen_range(0..4) {
            0 => Command::PushNak {
                qpn: 3,
                syndrome: 0x60,
                psn: k,
                msn: k,
            },
            1 => Command::PushRead {
                qpn: 3,
                psn: k,
                va: rng.gen(),
                rkey: 9,
                len: rng.gen_range(1..=512),
                msn: k,
            },
            _ => Command::PushAtomicAck {
                qpn: 3,
                psn: k,
                orig: rng.gen(),
                msn: k,
            },
        };
        expected += match c {
            Command::PushRead { len, .. } => u64::from(len.div_ceil(256)),
            _ => 1,
        };
        b.run(c, &mut ready);
        pushes += 1;
    }
    let waits = b.waits_seen;
    b.drain();
    eprintln!(
        "{waits} of {pushes} pushes waited; {} packets, {} cycles",
        b.model.packets,
        b.sim.cycle()
    );
    assert!(waits >= 20, "{waits}");
    // Nothing lost; the order within each QP is checked packet by packet.
    assert_eq!(b.model.packets, expected);
}
