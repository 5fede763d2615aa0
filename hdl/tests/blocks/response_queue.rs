//! ResponseQueue in rust-hdl's simulator against its contract model
//! (`ResponseQueueModel`, i.e. the model's `ResponseQueue` per QP) on a
//! 4-QP, 4-item instance: random pushes (ACKs that merge, NAKs, atomic
//! ACKs, READs of 0 to 12 KiB at MTUs 256 to 4096), READ voids, flushes
//! and reconfigurations under random dequeue backpressure, every accepted
//! descriptor equal to the model's next packet of its QP; a push to a full
//! queue waits (not taken while the model says the queue is full, counted
//! once in `full_waits` only when the model says it may be full) and is
//! taken once a slot frees, nothing lost; the item RAM in block RAM, no LUT
//! RAM (Yosys synth_xilinx, 1024 QPs x 32, the default). The long runs
//! and the model NIC traces are under Verilator
//! (`sim/tests/blocks/response_queue.rs`).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rocenic_hdl::responder::response_queue::{CommandFields, ResponseQueue, DEFAULT_DEPTH_BITS};
use rocenic_hdl_testbench::{verilog_of, xilinx_synth, CycleSim};
use rocenic_model::response_queue::{
    Command, Descriptor, QueueItem, ReadSlice, RespPacket, ResponseQueueModel,
};
use rust_hdl::prelude::*;

const A: usize = 2;
const D: usize = 2;
type Small = ResponseQueue<A, D>;

/// The port values of a model command.
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
    sim: CycleSim<Small>,
    model: ResponseQueueModel,
    /// `full_waits` as last seen.
    waits_seen: u64,
}

impl Bench {
    fn new() -> Bench {
        Bench {
            sim: CycleSim::new(Small::default(), |b| &mut b.clock),
            model: ResponseQueueModel::new(A, D),
            waits_seen: 0,
        }
    }

    /// One cycle; whether `command` was accepted.
    fn step(&mut self, command: Option<Command>, ready: bool) -> bool {
        let f = command.map(|c| fields(&c)).unwrap_or_default();
        let u = &mut self.sim.uut;
        u.command.valid.next = command.is_some();
        u.command.op.next = bits(f.op);
        u.command.qpn.next = bits(f.qpn);
        u.command.syndrome.next = bits(f.syndrome);
        u.command.psn.next = bits(f.psn);
        u.command.msn.next = bits(f.msn);
        u.command.value.next = bits(f.value);
        u.command.rkey.next = bits(f.rkey);
        u.command.len.next = bits(f.len);
        u.command.mtu_code.next = bits(f.mtu_code);
        u.packet.ready.next = ready;
        self.sim.settle();
        let u = &self.sim.uut;
        // A wait is counted the cycle after the push found its queue full
        // (no packet leaves in between).
        let waits = u.full_waits.val().to_u64();
        if waits != self.waits_seen {
            assert_eq!(waits, self.waits_seen + 1, "cycle {}", self.sim.cycles());
            let c = command.expect("a wait with a command offered");
            assert!(
                self.model.may_wait(&c),
                "cycle {}: {c:x?} waited, its queue not full",
                self.sim.cycles()
            );
            self.waits_seen = waits;
        }
        let accepted = command.is_some() && u.command.ready.val();
        if u.packet.valid.val() && ready {
            let p = &u.packet;
            let d = Descriptor {
                qpn: p.qpn.val().to_u64() as u32,
                packet: RespPacket {
                    opcode: p.opcode.val().to_u64() as u8,
                    psn: p.psn.val().to_u64() as u32,
                    aeth: p
                        .aeth
                        .val()
                        .then(|| (p.syndrome.val().to_u64() as u8, p.msn.val().to_u64() as u32)),
                    atomic_orig: p.atomic.val().then(|| p.orig.val().to_u64()),
                    read: p.read.val().then(|| ReadSlice {
                        va: p.va.val().to_u64(),
                        rkey: p.rkey.val().to_u64() as u32,
                        offset: p.offset.val().to_u64() as u32,
                        len: p.len.val().to_u64() as u32,
                    }),
                },
            };
            if let Err(e) = self.model.accept(&d) {
                panic!("cycle {}: {e}", self.sim.cycles());
            }
        }
        if accepted {
            if let Err(e) = self.model.take(&command.unwrap()) {
                panic!("cycle {}: {e}", self.sim.cycles());
            }
        }
        self.sim.tick();
        accepted
    }

    fn run(&mut self, command: Command, rng: &mut ChaCha8Rng, p_ready: f64) {
        while !self.step(Some(command), rng.gen_bool(p_ready)) {}
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

fn random_command(rng: &mut ChaCha8Rng, model: &ResponseQueueModel) -> Option<Command> {
    let qpn = rng.gen_range(0..1u32 << A);
    let psn = rng.gen_range(0..1u32 << 24);
    let msn = rng.gen_range(0..1u32 << 24);
    let c = match rng.gen_range(0..20) {
        0 => Command::Configure {
            qpn,
            mtu: 256 << rng.gen_range(0..5),
        },
        1..=6 => Command::PushAck { qpn, psn, msn },
        7 => Command::PushNak {
            qpn,
            syndrome: [0x60, 0x61, 0x62, 0x20 | rng.gen_range(0..32)][rng.gen_range(0..4)],
            psn,
            msn,
        },
        8..=9 => Command::PushAtomicAck {
            qpn,
            psn,
            orig: rng.gen(),
            msn,
        },
        10..=16 => Command::PushRead {
            qpn,
            psn,
            va: rng.gen(),
            rkey: rng.gen(),
            len: match rng.gen_range(0..4) {
                0 => 0,
                1 => rng.gen_range(1..=256),
                2 => rng.gen_range(1..=4 * 1024),
                _ => rng.gen_range(1..=12 * 1024),
            },
            msn,
        },
        17..=18 => {
            // A READ restart: void the queued READs of a range around one.
            let first = model
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
                npsn: rng.gen_range(1..8),
            }
        }
        _ => Command::Flush { qpn },
    };
    // Pushes to a full queue included: they wait.
    Some(c)
}

#[test]
fn random_commands_and_backpressure_match_the_model() {
    let seed = 0x5e9_0001;
    eprintln!("seed {seed:#x}");
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut b = Bench::new();
    let mut live = [false; 1 << A];
    for qpn in 0..1u32 << A {
        b.run(Command::Configure { qpn, mtu: 256 }, &mut rng, 1.0);
        live[qpn as usize] = true;
    }
    let mut commands = 0;
    for cycle in 0..6000u64 {
        let p_ready = if (cycle / 500) % 2 == 0 { 0.9 } else { 0.2 };
        let command = rng
            .gen_bool(0.4)
            .then(|| random_command(&mut rng, &b.model))
            .flatten()
            .filter(|c| match c {
                Command::Configure { .. } => true,
                c => live[c.qpn() as usize],
            });
        if let Some(c) = command {
            b.run(c, &mut rng, p_ready);
            commands += 1;
            match c {
                Command::Configure { qpn, .. } => live[qpn as usize] = true,
                Command::Flush { qpn } => live[qpn as usize] = false,
                _ => {}
            }
        } else {
            b.step(None, rng.gen_bool(p_ready));
        }
    }
    b.drain();
    eprintln!(
        "seed {seed:#x}: {commands} commands, {} packets, {} cycles",
        b.model.packets,
        b.sim.cycles()
    );
    assert!(b.model.packets > 300);
    assert!(b.waits_seen > 0, "no push waited");
}

#[test]
fn a_push_to_a_full_queue_waits_for_a_slot() {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut b = Bench::new();
    for qpn in 0..4 {
        b.run(Command::Configure { qpn, mtu: 256 }, &mut rng, 1.0);
    }
    // Long READs on three QPs take most dequeue turns, so QP 1's atomic
    // ACKs pile up faster than its turns pop them: pushes wait (no voids,
    // no flushes: the model's occupancy is the block's).
    for qpn in [0, 2, 3] {
        let c = Command::PushRead {
            qpn,
            psn: 100,
            va: 0x1000,
            rkey: 7,
            len: 30 * 256,
            msn: 1,
        };
        b.run(c, &mut rng, 1.0);
    }
    for k in 0..12u32 {
        let c = Command::PushAtomicAck {
            qpn: 1,
            psn: k,
            orig: u64::from(k) * 3,
            msn: k,
        };
        b.run(c, &mut rng, 1.0);
    }
    // The tail is an atomic ACK: an ACK needs a slot too.
    b.run(
        Command::PushAck {
            qpn: 1,
            psn: 99,
            msn: 9,
        },
        &mut rng,
        1.0,
    );
    let waits = b.waits_seen;
    eprintln!("{waits} of 13 pushes waited");
    assert!(waits >= 4, "{waits}");
    b.drain();
    // Nothing lost; the order within QP 1 is checked packet by packet.
    assert_eq!(b.model.packets, 3 * 30 + 13);
    assert_eq!(b.sim.uut.full_waits.val().to_u64(), waits);
}

#[test]
fn item_ram_maps_to_block_ram() {
    let verilog = verilog_of::<ResponseQueue<10, DEFAULT_DEPTH_BITS>>();
    let report = xilinx_synth("response_queue_1024x32", &verilog).unwrap();
    let (b36, b18) = (report.count("RAMB36E2"), report.count("RAMB18E2"));
    // 32768 x 187 item bits need 6.0 Mbit: 167 RAMB36 at least.
    assert_eq!(DEFAULT_DEPTH_BITS, 5);
    assert!(2 * b36 + b18 >= 2 * 167, "{}", report.log);
    assert!(
        report
            .cells
            .iter()
            .all(|(c, _)| !c.starts_with("RAM32") && !c.starts_with("RAM64")),
        "{}",
        report.log
    );
}
