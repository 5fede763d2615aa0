//! Protection, checked in RTL: a model requester sends WRITE, READ,
//! FETCH_ADD, CMP_SWAP and SEND requests to an `RtlNic` whose core is
//! `responder_path`, each through an R_Key (or, for a SEND, into a receive
//! WQE whose L_Key) that is wrong, stale (MR re-registered: same index,
//! new key variant), of an invalidated MR, of another PD, without the needed access right, or
//! out of bounds (below the base, past the end, a length wrapping past
//! 2^64), and in-bounds accesses that cross pages of a several-page MR.
//!
//! For each case the shadow scoreboard checks the core's NAK frame byte
//! for byte; independently of it the requester's completion must be the
//! spec's error (remote access for an R_Key, remote operational for a
//! receive WQE's L_Key, with the responder's receive CQE a local
//! protection error), both QPs must be in ERR, the request behind the bad
//! one must be flushed and never land, and — the key property — the RTL
//! NIC's whole host memory must equal its snapshot from before the run
//! (plus, for an allowed access, exactly the bytes it legitimately wrote;
//! for a SEND refused in a later packet, the in-bounds packets before it).

use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rocenic_fabric::{Fabric, LinkConfig, SwitchConfig};
use rocenic_model::memory::HostMemory;
use rocenic_model::nic::Nic;
use rocenic_model::verbs::{
    Access, Cqe, QpCaps, QpState, RecvWr, SendOp, SendWr, Sge, WcOpcode, WcStatus,
};
use rocenic_rtl::host_dma::HostDmaConfig;
use rocenic_rtl::nic::RtlNic;
use rocenic_rtl::node::Node;
use rocenic_sim::scenario::{connect, nic_config, ScenarioConfig};
use rocenic_wire::{op, syndrome, RoceFrame};
use verilator_sys::ResponderPath;

type Core = ResponderPath;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Write,
    Read,
    FetchAdd,
    CmpSwap,
    /// A SEND into a receive WQE whose SGE is the case's MR range.
    Send,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Violation {
    /// In bounds, crossing a page boundary of the MR: allowed.
    None,
    /// A key whose index names no registered MR.
    WrongKey,
    /// The MR's key before it was re-registered.
    StaleKey,
    /// The MR was invalidated (`Nic::invalidate_mr`) and not re-registered.
    Invalidated,
    /// The MR belongs to another PD than the QP.
    WrongPd,
    /// The MR lacks the right the operation needs.
    MissingAccess,
    /// The range starts below the MR's base.
    BelowBase,
    /// The range runs past the MR's end (from inside its last page): a
    /// WRITE's or READ's anywhere in the range (refused whole at its first
    /// packet), a SEND's in any of its packets (the packets before it are
    /// placed, the rest refused).
    PastEnd,
    /// `va + len` wraps past 2^64.
    LenOverflow,
}

const OPS: [Op; 5] = [Op::Write, Op::Read, Op::FetchAdd, Op::CmpSwap, Op::Send];
const VIOLATIONS: [Violation; 9] = [
    Violation::None,
    Violation::WrongKey,
    Violation::StaleKey,
    Violation::Invalidated,
    Violation::WrongPd,
    Violation::MissingAccess,
    Violation::BelowBase,
    Violation::PastEnd,
    Violation::LenOverflow,
];

#[derive(Clone, Copy, Debug)]
struct Case {
    op: Op,
    violation: Violation,
    /// Host page size behind the MR (the MR spans several pages).
    page_size: u64,
    /// Where in its allowed range the access starts, in 1/256ths.
    offset: u8,
    /// Requested length (atomics move 8 bytes whatever it says).
    len: u64,
    mtu: u32,
    seed: u64,
}

/// The right `op` needs of the MR.
fn needed(op: Op) -> Access {
    match op {
        Op::Write => Access::REMOTE_WRITE,
        Op::Read => Access::REMOTE_READ,
        Op::FetchAdd | Op::CmpSwap => Access::REMOTE_ATOMIC,
        Op::Send => Access::LOCAL_WRITE,
    }
}

/// Picks `lo + frac * (hi - lo)` for `frac` in 1/256ths, `hi` exclusive.
fn pick(lo: u64, hi: u64, frac: u8) -> u64 {
    if hi <= lo {
        return lo;
    }
    lo + (hi - lo) * u64::from(frac) / 256
}

struct Run {
    /// The frames the core emitted, and the PSN of the packet a refusal
    /// NAKs.
    frames_out: Vec<RoceFrame>,
    nak_psn: u32,
    /// The refused packet's index in its message.
    refused_packet: u64,
    /// The access's length.
    len: u64,
    /// The requester's completions, in order: the case's request, then
    /// the trailing in-bounds WRITE.
    sent: Vec<Cqe>,
    received: Vec<Cqe>,
    naks_remote_access: u64,
    naks_remote_operational: u64,
    requester_state: QpState,
    responder_state: QpState,
    frames_emitted: u64,
    cycles: u64,
}

fn run(case: Case) -> Run {
    let Case {
        op,
        violation,
        page_size,
        mtu,
        seed,
        ..
    } = case;
    let config = ScenarioConfig {
        mtu,
        seed,
        timeout: 8,
        ..ScenarioConfig::default()
    };
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut a = Nic::new(nic_config(1, &config));
    let mut rtl = RtlNic::<Core>::new(nic_config(2, &config), HostDmaConfig::default());
    rtl.log_port_frames();
    let b = rtl.setup().expect("before the run");
    let caps = QpCaps {
        max_send_wr: 4,
        max_recv_wr: 4,
        max_sge: 1,
    };
    let (a_pd, b_pd, other_pd) = (a.alloc_pd(), b.alloc_pd(), b.alloc_pd());
    let (a_cq, b_cq) = (a.create_cq(64), b.create_cq(64));
    let qa = a.create_qp(a_pd, a_cq, a_cq, caps).unwrap();
    let qb = b.create_qp(b_pd, b_cq, b_cq, caps).unwrap();
    connect(&mut a, qa, b, qb, &config, &mut rng).unwrap();

    // The case's MR: 3 or 4 pages, its base 8-aligned but not page
    // aligned, its end 8-aligned inside the last page, unmapped-free
    // margins below and above it in the same allocation.
    let pages = rng.gen_range(3..=4u64);
    let alloc_len = pages * page_size;
    let va_alloc = b.memory_mut().alloc(alloc_len, page_size);
    let fill: Vec<u8> = (0..alloc_len).map(|_| rng.gen()).collect();
    b.memory_mut().write_va(va_alloc, &fill).unwrap();
    let lo = 8 * rng.gen_range(1..page_size / 16);
    let hi = 8 * rng.gen_range(1..page_size / 16);
    let (base, mr_len) = (va_alloc + lo, alloc_len - lo - hi);
    let end = base + mr_len;
    let all =
        Access::LOCAL_WRITE | Access::REMOTE_WRITE | Access::REMOTE_READ | Access::REMOTE_ATOMIC;
    let access = if violation == Violation::MissingAccess {
        match op {
            Op::Send => Access::REMOTE_READ,
            _ => Access(all.0 & !needed(op).0),
        }
    } else {
        all
    };
    let pd = if violation == Violation::WrongPd {
        other_pd
    } else {
        b_pd
    };
    let keys = b.reg_mr(pd, base, mr_len, access).unwrap();
    let key = match violation {
        Violation::StaleKey => {
            let fresh = b.rereg_mr(keys.lkey).unwrap();
            assert_ne!(fresh.rkey, keys.rkey);
            keys.rkey
        }
        Violation::Invalidated => {
            b.invalidate_mr(keys.rkey).unwrap();
            keys.rkey
        }
        // Another index, never registered on this NIC.
        Violation::WrongKey => keys.rkey + (0x40 << 8),
        _ => keys.rkey,
    };
    // The trailing request: 16 bytes at the start of a good MR.
    let good_va = b.memory_mut().alloc(64, 4096);
    b.memory_mut().write_va(good_va, &[0x5A; 64]).unwrap();
    let good = b.reg_mr(b_pd, good_va, 64, all).unwrap();

    // The access: an atomic moves 8 aligned bytes.
    let atomic = matches!(op, Op::FetchAdd | Op::CmpSwap);
    let len = if atomic {
        8
    } else {
        case.len.clamp(2, mr_len - 8)
    };
    let mtu64 = u64::from(mtu);
    let first_packet = len.min(mtu64);
    let align = |v: u64| if atomic { v & !7 } else { v };
    let frac = case.offset;
    // The packet the responder refuses (0 but for a SEND running past the
    // end in a later packet).
    let mut refused_packet = 0;
    let va = match violation {
        Violation::BelowBase => align(base - 1 - pick(0, lo.min(first_packet), frac)),
        Violation::PastEnd if atomic => end + 8 * u64::from(frac % 4),
        Violation::PastEnd if op == Op::Send => {
            // The end falls strictly inside packet `k`.
            let packets = len.div_ceil(mtu64);
            let mut k = u64::from(frac) % packets;
            if len - k * mtu64 < 2 {
                k = 0;
            }
            refused_packet = k;
            let packet_len = (len - k * mtu64).min(mtu64);
            end - k * mtu64 - 1 - pick(0, packet_len - 1, frac)
        }
        Violation::PastEnd => end - len + 1 + pick(0, len - 1, frac),
        Violation::LenOverflow => {
            if atomic {
                u64::MAX - 7
            } else {
                u64::MAX - pick(0, first_packet - 1, frac)
            }
        }
        // In bounds and across a page boundary inside the MR (an atomic
        // cannot cross one: any aligned word).
        _ => {
            let boundary = (base / page_size + 1 + u64::from(frac) % (pages - 1)) * page_size;
            let latest = (end - len).min(boundary - 1);
            let earliest = boundary.saturating_sub(len - 1).max(base);
            align(pick(earliest, latest + 1, frac))
        }
    };
    if violation == Violation::None {
        assert!(va >= base && va + len <= end, "{case:?}: in bounds");
        assert!(
            atomic || va / page_size != (va + len - 1) / page_size,
            "{case:?}: across a page boundary"
        );
    }

    // The requester's buffers: the payload source / READ and atomic
    // target, and the trailing WRITE's source.
    let a_len = len.max(16) + 64;
    let a_va = a.memory_mut().alloc(a_len, 4096);
    let a_data: Vec<u8> = (0..a_len).map(|_| rng.gen()).collect();
    a.memory_mut().write_va(a_va, &a_data).unwrap();
    let a_keys = a.reg_mr(a_pd, a_va, a_len, Access::LOCAL_WRITE).unwrap();
    if op == Op::Send {
        // L_Key and R_Key are equal: the case's key names the WQE's MR.
        let lkey = key;
        b.post_recv(
            qb,
            RecvWr {
                wr_id: 7,
                sgl: vec![Sge {
                    addr: va,
                    length: len as u32,
                    lkey,
                }],
            },
        )
        .unwrap();
    }
    let snapshot: HostMemory = b.memory().clone();
    let requester_before: HostMemory = a.memory().clone();

    let op_wr = match op {
        Op::Write => SendOp::Write {
            remote_addr: va,
            rkey: key,
        },
        Op::Read => SendOp::Read {
            remote_addr: va,
            rkey: key,
        },
        Op::FetchAdd => SendOp::FetchAdd {
            remote_addr: va,
            rkey: key,
            add: 0x0123_4567,
        },
        // Compare with the word the MR holds, so an allowed one swaps.
        Op::CmpSwap => {
            let mut word = [0; 8];
            snapshot.read_va(va, &mut word).unwrap_or_default();
            SendOp::CompareSwap {
                remote_addr: va,
                rkey: key,
                compare: u64::from_le_bytes(word),
                swap: 0xFEED_FACE_CAFE_BEEF,
            }
        }
        Op::Send => SendOp::Send,
    };
    for (wr_id, op, addr, length) in [
        (1, op_wr, a_va, len as u32),
        (
            2,
            SendOp::Write {
                remote_addr: good_va,
                rkey: good.rkey,
            },
            a_va + a_len - 16,
            16,
        ),
    ] {
        a.post_send(
            qa,
            SendWr {
                wr_id,
                op,
                sgl: vec![Sge {
                    addr,
                    length,
                    lkey: a_keys.lkey,
                }],
                signaled: true,
                solicited: false,
                fence: false,
                inline_data: None,
            },
        )
        .unwrap();
    }

    let mut fabric = Fabric::new(seed, SwitchConfig::default());
    let a_id = fabric.add_node(
        Node::<RtlNic<Core>>::Model(Box::new(a)),
        LinkConfig::default(),
    );
    let b_id = fabric.add_node(Node::Rtl(Box::new(rtl)), LinkConfig::default());
    let mut sent = Vec::new();
    let mut received = Vec::new();
    let want_received = usize::from(op == Op::Send);
    while (sent.len() < 2 || received.len() < want_received) && fabric.now() < 5_000_000 {
        let until = fabric.now() + 10_000;
        fabric.run_until(until);
        if let Some(m) = fabric.node(b_id).rtl().and_then(|r| r.mismatch()) {
            panic!("{case:?}: scoreboard: {m}");
        }
        sent.extend(fabric.node_mut(a_id).model_mut().unwrap().poll_cq(a_cq, 8));
        received.extend(fabric.node_mut(b_id).rtl_mut().unwrap().poll_cq(b_cq, 8));
    }
    let settle = fabric.now() + 50_000;
    fabric.run_until(settle);
    sent.extend(fabric.node_mut(a_id).model_mut().unwrap().poll_cq(a_cq, 8));
    received.extend(fabric.node_mut(b_id).rtl_mut().unwrap().poll_cq(b_cq, 8));
    let rtl = fabric.node_mut(b_id).rtl_mut().unwrap();
    if let Err(m) = rtl.finish_check() {
        panic!("{case:?}: scoreboard at the end: {m}");
    }

    // What the RTL NIC's memory must hold: the snapshot, plus for an
    // allowed request its bytes and the trailing WRITE's.
    let mut want = snapshot.clone();
    let requester = fabric.node(a_id).model().unwrap();
    if violation == Violation::None {
        match op {
            Op::Write | Op::Send => {
                want.write_va(va, &a_data[..len as usize]).unwrap();
            }
            Op::Read => {
                let mut got = vec![0; len as usize];
                requester.memory().read_va(a_va, &mut got).unwrap();
                let mut held = vec![0; len as usize];
                snapshot.read_va(va, &mut held).unwrap();
                assert!(
                    got == held,
                    "{case:?}: READ across pages brought the MR's bytes"
                );
            }
            Op::FetchAdd | Op::CmpSwap => {
                let mut word = [0; 8];
                snapshot.read_va(va, &mut word).unwrap();
                let old = u64::from_le_bytes(word);
                let new = if op == Op::FetchAdd {
                    old.wrapping_add(0x0123_4567)
                } else {
                    0xFEED_FACE_CAFE_BEEF
                };
                want.write_va(va, &new.to_le_bytes()).unwrap();
                requester.memory().read_va(a_va, &mut word).unwrap();
                assert_eq!(u64::from_le_bytes(word), old, "{case:?}: original value");
            }
        }
        want.write_va(good_va, &a_data[(a_len - 16) as usize..])
            .unwrap();
    } else {
        // A SEND refused in a later packet: the packets before it were
        // placed, in bounds.
        let placed = (refused_packet * mtu64) as usize;
        want.write_va(va, &a_data[..placed]).unwrap();
        // Nothing reached the requester's memory.
        assert!(
            *requester.memory() == requester_before,
            "{case:?}: the requester's memory changed"
        );
    }
    let rtl = fabric.node(b_id).rtl().unwrap();
    assert_eq!(rtl.memory().stray_writes(), 0, "{case:?}");
    assert!(
        *rtl.memory() == want,
        "{case:?}: the RTL NIC's host memory differs from the snapshot{}",
        if violation == Violation::None {
            " plus the allowed writes"
        } else {
            ""
        }
    );
    let stats = rtl.stats();
    let log = rtl.port_log().unwrap();
    let decode = |f: &Vec<u8>| RoceFrame::decode(f).unwrap();
    let counters = &rtl.shadow().counters().naks_sent;
    Run {
        refused_packet,
        frames_out: log.tx.iter().map(|(_, f)| decode(f)).collect(),
        nak_psn: (decode(&log.rx[0].1).bth.psn + refused_packet as u32) & 0xFF_FFFF,
        len,
        sent,
        received,
        naks_remote_access: counters.remote_access,
        naks_remote_operational: counters.remote_operational,
        requester_state: fabric.node(a_id).model().unwrap().qp_state(qa).unwrap(),
        responder_state: rtl.shadow().qp_state(qb).unwrap(),
        frames_emitted: stats.frames_out,
        cycles: stats.cycles,
    }
}

fn check(case: Case) -> Run {
    let r = run(case);
    let statuses: Vec<(u64, WcStatus)> = r.sent.iter().map(|c| (c.wr_id, c.status)).collect();
    if case.violation == Violation::None {
        assert_eq!(
            statuses,
            [(1, WcStatus::Success), (2, WcStatus::Success)],
            "{case:?}"
        );
        assert_eq!(
            (r.naks_remote_access, r.naks_remote_operational),
            (0, 0),
            "{case:?}"
        );
        assert_eq!(r.requester_state, QpState::Rts, "{case:?}");
        assert_eq!(r.responder_state, QpState::Rts, "{case:?}");
        if case.op == Op::Send {
            assert_eq!(r.received.len(), 1, "{case:?}");
            let c = &r.received[0];
            assert_eq!(
                (c.wr_id, c.status, c.opcode, u64::from(c.byte_len)),
                (7, WcStatus::Success, WcOpcode::Recv, r.len),
                "{case:?}"
            );
        }
    } else {
        // IBA 9.7.5.2.8: an R_Key violation is a remote access error; a
        // receive WQE the responder cannot use (its L_Key) a remote
        // operational error, the receive WQE completing in error. Either
        // moves both QPs to ERR; the request behind it is flushed.
        let (status, nak) = if case.op == Op::Send {
            (WcStatus::RemOpErr, (0, 1))
        } else {
            (WcStatus::RemAccessErr, (1, 0))
        };
        assert_eq!(
            statuses,
            [(1, status), (2, WcStatus::WrFlushErr)],
            "{case:?}"
        );
        assert_eq!(
            (r.naks_remote_access, r.naks_remote_operational),
            nak,
            "{case:?}: the core's NAK"
        );
        // Independently of the shadow: the core's one frame out is that
        // NAK, of the refused packet's PSN.
        let want = if case.op == Op::Send {
            syndrome::NAK_REMOTE_OPERATIONAL_ERROR
        } else {
            syndrome::NAK_REMOTE_ACCESS_ERROR
        };
        let nak = r
            .frames_out
            .first()
            .map(|f| (f.bth.opcode, f.bth.psn, f.ext.aeth.map(|a| a.syndrome)));
        assert_eq!(
            (r.frames_emitted, nak),
            (1, Some((op::ACKNOWLEDGE, r.nak_psn, Some(want)))),
            "{case:?}: the core's NAK"
        );
        assert_eq!(r.requester_state, QpState::Err, "{case:?}");
        assert_eq!(r.responder_state, QpState::Err, "{case:?}");
        if case.op == Op::Send {
            let recv: Vec<(u64, WcStatus)> =
                r.received.iter().map(|c| (c.wr_id, c.status)).collect();
            assert_eq!(recv, [(7, WcStatus::LocProtErr)], "{case:?}");
        } else {
            assert!(r.received.is_empty(), "{case:?}: {:?}", r.received);
        }
    }
    r
}

#[test]
fn every_violation_of_every_operation_is_refused_in_rtl() {
    let mut cases = 0;
    let mut cycles = 0;
    for (i, violation) in VIOLATIONS.into_iter().enumerate() {
        for (j, op) in OPS.into_iter().enumerate() {
            let case = Case {
                op,
                violation,
                page_size: [4096, 16384][(i + j) % 2],
                offset: (37 * (i * 5 + j) % 256) as u8,
                len: [3000, 5000, 700, 8, 9000][j],
                mtu: 1024,
                seed: (i * 5 + j) as u64,
            };
            let r = check(case);
            cases += 1;
            cycles += r.cycles;
        }
    }
    println!("{cases} cases, {cycles} core cycles");
}

/// A SEND whose receive buffer runs past the MR's end in its fourth
/// packet: the three packets before it are placed (they are in bounds),
/// the fourth is refused with a remote operational error NAK of its PSN
/// and nothing of it or after it lands.
#[test]
fn send_refused_in_a_later_packet_places_only_the_packets_before() {
    for page_size in [4096, 65536] {
        let case = Case {
            op: Op::Send,
            violation: Violation::PastEnd,
            page_size,
            offset: 3,
            len: 9000,
            mtu: 1024,
            seed: 99,
        };
        let r = check(case);
        assert_eq!(r.refused_packet, 3, "{case:?}");
        println!(
            "{case:?}: NAK of PSN {}, {} core cycles",
            r.nak_psn, r.cycles
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    /// Random (violation, operation, offset, length, page size); a failure
    /// prints the case (its seed included) and shrinks it.
    #[test]
    fn random_protection_cases_in_rtl(
        violation in proptest::sample::select(VIOLATIONS.to_vec()),
        op in proptest::sample::select(OPS.to_vec()),
        offset in any::<u8>(),
        len in 2u64..12_000,
        page_size in proptest::sample::select(vec![4096u64, 8192, 65536]),
        mtu in proptest::sample::select(vec![256u32, 1024, 4096]),
        seed in any::<u64>(),
    ) {
        check(Case { op, violation, page_size, offset, len, mtu, seed });
    }
}
