//! Capture and pcap: round trip through pcap-file, the emitted-frames pcap
//! of a run, and run-to-run determinism of everything the fabric reports.

mod common;

use common::*;
use pcap_file::pcap::PcapReader;
use pcap_file::{DataLink, TsResolution};
use rocenic_fabric::*;
use std::io::Cursor;
use std::sync::{Arc, Mutex};

fn read_pcap(bytes: &[u8]) -> Vec<(u128, Vec<u8>, u32)> {
    let mut r = PcapReader::new(Cursor::new(bytes)).expect("pcap header");
    let h = r.header();
    assert_eq!(h.ts_resolution, TsResolution::NanoSecond);
    assert_eq!(h.datalink, DataLink::ETHERNET);
    let mut out = Vec::new();
    while let Some(p) = r.next_packet() {
        let p = p.expect("pcap record");
        out.push((p.timestamp.as_nanos(), p.data.to_vec(), p.orig_len));
    }
    out
}

#[test]
fn pcap_round_trip_keeps_frames_and_nanosecond_timestamps() {
    let frames: Vec<(Time, Vec<u8>)> = [0u64, 1, 999_999_999, 1_000_000_001, 5_123_456_789]
        .iter()
        .enumerate()
        .map(|(i, &t)| (t, send_frame(mac(1), mac(2), i as u32, 10 * i, 0)))
        .collect();
    let mut w = PcapWriter::new(Vec::new()).unwrap();
    for (t, f) in &frames {
        w.write(*t, f).unwrap();
    }
    assert_eq!(w.frames(), 5);
    let bytes = w.finish().unwrap();
    // 24-byte header, nanosecond magic written little-endian.
    assert_eq!(bytes[..4], [0x4D, 0x3C, 0xB2, 0xA1]);
    let back = read_pcap(&bytes);
    assert_eq!(back.len(), frames.len());
    for ((t, f), (bt, bf, orig)) in frames.iter().zip(&back) {
        assert_eq!(u128::from(*t), *bt);
        assert_eq!(f, bf);
        assert_eq!(*orig as usize, f.len());
    }
}

#[test]
fn oversized_frames_are_truncated_to_the_snaplen() {
    let mut w = PcapWriter::new(Vec::new()).unwrap();
    let big = vec![7u8; 300_000];
    w.write(3, &big).unwrap();
    let bytes = w.finish().unwrap();
    // pcap-file's checked reader refuses orig_len > snaplen (Wireshark
    // does not), so read the raw record.
    let mut r = PcapReader::new(Cursor::new(&bytes)).unwrap();
    assert_eq!(r.header().snaplen, 262_144);
    let raw = r.next_raw_packet().unwrap().unwrap();
    assert_eq!(raw.incl_len, 262_144);
    assert_eq!(raw.orig_len, 300_000);
    assert_eq!(raw.data.len(), 262_144);
}

fn scenario(seed: u64) -> Fabric<TestNode> {
    let sw = SwitchConfig {
        buffer_bytes: 40 * 1026,
        ecn: Some(EcnConfig {
            kmin_bytes: 2_000,
            kmax_bytes: 30_000,
            pmax: 0.3,
            on_dequeue: false,
        }),
        pfc: None,
        latency_ns: 50,
    };
    let lossy = LinkConfig {
        faults: FaultConfig {
            loss: 0.02,
            duplicate: 0.02,
            reorder: 0.02,
            reorder_delay_ns: 300,
            corrupt: 0.02,
        },
        ..LinkConfig::default()
    };
    let mut f = Fabric::new(seed, sw);
    let ect = |_| rocenic_wire::ecn::ECT0;
    let mut p1 = Plan::to(mac(3), 2000);
    p1.ecn = ect;
    let mut p2 = Plan::to(mac(3), 2000);
    p2.ecn = ect;
    p2.interval_ns = 90;
    f.add_node(TestNode::source(1, p1), lossy.clone());
    f.add_node(TestNode::source(2, p2), LinkConfig::default());
    f.add_node(TestNode::sink(3), lossy);
    f
}

/// Every capture event of a run, serialised.
fn trace(seed: u64) -> (Vec<u8>, Vec<u8>, String) {
    let mut f = scenario(seed);
    let log = Arc::new(Mutex::new(Vec::new()));
    let l2 = log.clone();
    f.add_capture(Box::new(move |ev: &CaptureEvent| {
        let mut l = l2.lock().unwrap();
        l.extend_from_slice(&ev.time.to_le_bytes());
        l.extend_from_slice(&(ev.node.0 as u32).to_le_bytes());
        l.extend_from_slice(format!("{:?}", ev.kind).as_bytes());
        l.extend_from_slice(&(ev.frame.len() as u32).to_le_bytes());
        l.extend_from_slice(ev.frame);
    }));
    let pcap = f.capture_pcap(PcapWriter::new(Vec::new()).unwrap(), |ev| {
        ev.kind == CaptureKind::Emitted
    });
    f.run_until(10_000_000);
    let stats = serde_json::to_string(f.stats()).unwrap();
    let log = log.lock().unwrap().clone();
    (log, pcap.finish().unwrap(), stats)
}

#[test]
fn same_seed_same_bytes_different_seed_different_bytes() {
    let (log1, pcap1, stats1) = trace(42);
    let (log2, pcap2, stats2) = trace(42);
    assert!(log1.len() > 1_000_000);
    assert_eq!(log1, log2);
    assert_eq!(pcap1, pcap2);
    assert_eq!(stats1, stats2);
    let (log3, _, stats3) = trace(43);
    assert_ne!(log1, log3);
    assert_ne!(stats1, stats3);
    // The scenario exercises everything that depends on the seed.
    let s: serde_json::Value = serde_json::from_str(&stats1).unwrap();
    for key in ["duplicated", "reordered", "corrupted", "ecn_marked"] {
        assert!(s[key].as_u64().unwrap() > 0, "{key} never happened");
    }
    assert!(s["dropped"]["loss"].as_u64().unwrap() > 0);
    assert!(s["dropped"]["buffer_full"].as_u64().unwrap() > 0);
}

#[test]
fn emitted_pcap_file_holds_every_frame_as_sent() {
    let path = std::env::temp_dir().join(format!("rocenic-fabric-{}.pcap", std::process::id()));
    let mut f = scenario(5);
    let cap = f.capture_emitted_pcap(&path).unwrap();
    f.run_until(10_000_000);
    assert_eq!(cap.frames(), f.stats().emitted_frames);
    cap.finish().unwrap();
    let bytes = std::fs::read(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    let back = read_pcap(&bytes);

    assert!(back.windows(2).all(|w| w[0].0 <= w[1].0), "time order");
    let mut sent: Vec<(u128, Vec<u8>)> = Vec::new();
    for n in 0..f.node_count() {
        for (t, fr) in &f.node(NodeId(n)).sent {
            sent.push((u128::from(*t), fr.clone()));
        }
    }
    // Frames emitted in the same nanosecond may come in either order.
    let mut back: Vec<(u128, Vec<u8>)> = back.into_iter().map(|(t, d, _)| (t, d)).collect();
    back.sort();
    sent.sort();
    assert_eq!(back.len(), sent.len());
    for ((bt, bf), (st, sf)) in back.iter().zip(&sent) {
        assert_eq!(bt, st);
        assert_eq!(bf, sf);
    }
}

/// Independent oracle, when installed: tshark decodes the emitted-frames
/// pcap as RoCEv2 with the opcodes, PSNs, ECN and nanosecond times the
/// fabric recorded. Without tshark there is nothing to compare against.
#[test]
fn tshark_decodes_the_capture_when_available() {
    let Ok(probe) = std::process::Command::new("tshark").arg("-v").output() else {
        return;
    };
    assert!(probe.status.success());
    let path = std::env::temp_dir().join(format!("rocenic-tshark-{}.pcap", std::process::id()));
    let mut f = scenario(3);
    let cap = f.capture_emitted_pcap(&path).unwrap();
    f.run_until(200_000);
    cap.finish().unwrap();
    let out = std::process::Command::new("tshark")
        .args([
            "-r",
            path.to_str().unwrap(),
            "--disable-protocol",
            "rpcordma",
        ])
        .args(["-o", "frame.generate_epoch_time:TRUE"])
        .args(["-T", "fields", "-E", "separator=,"])
        .args([
            "-e",
            "frame.time_epoch",
            "-e",
            "eth.src",
            "-e",
            "ip.dsfield.ecn",
        ])
        .args(["-e", "infiniband.bth.opcode", "-e", "infiniband.bth.psn"])
        .output()
        .unwrap();
    std::fs::remove_file(&path).unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let rows: Vec<Vec<&str>> = text.lines().map(|l| l.split(',').collect()).collect();
    let mut sent: Vec<(Time, u8, u32)> = Vec::new();
    for n in 0..f.node_count() {
        for (t, fr) in &f.node(NodeId(n)).sent {
            sent.push((*t, fr[11], psn_of(fr)));
        }
    }
    sent.sort();
    assert!(sent.len() > 100);
    assert_eq!(rows.len(), sent.len());
    let mut seen: Vec<(Time, u8, u32)> = Vec::new();
    for r in &rows {
        assert_eq!(r.len(), 5, "{r:?}");
        let (secs, nanos) = r[0].split_once('.').unwrap();
        let t = secs.parse::<u64>().unwrap() * 1_000_000_000 + nanos.parse::<u64>().unwrap();
        let src = u8::from_str_radix(r[1].rsplit(':').next().unwrap(), 16).unwrap();
        assert_eq!(r[2], "2", "ECT(0) as sent");
        assert_eq!(r[3], "4", "SEND only");
        seen.push((t, src, r[4].parse().unwrap()));
    }
    seen.sort();
    assert_eq!(seen, sent);
}
