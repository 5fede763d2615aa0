//! `rocenic decode --backend rtl` against `--backend model` on one capture
//! of valid frames (made by `rocenic frames`) and malformed frames of every
//! drop reason: the JSON of both backends agrees field by field, except
//! the one documented difference (the RTL does not verify UDP checksums)
//! and the free-text detail; the table mode prints the parser's counters.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rocenic_fabric::PcapWriter;
use rocenic_rtl::gen::{malform, Malformation};
use rocenic_sim::decode::read_pcap;
use rocenic_wire::RoceFrame;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn rocenic(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_rocenic"))
        .args(args)
        .output()
        .expect("rocenic runs");
    assert!(
        out.status.success(),
        "rocenic {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("rtl_decode");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// A capture of `rocenic frames` output followed by malformed copies of
/// those frames (every kind, in turn) and an empty record.
fn mixed_capture(path: &Path) -> usize {
    let valid_path = scratch("valid.pcap");
    let valid_str = valid_path.to_str().unwrap();
    rocenic(&[
        "frames", "--count", "120", "--seed", "17", "--pcap", valid_str,
    ]);
    let valid = read_pcap(&valid_path).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(99);
    let mut all = valid.clone();
    for (i, bytes) in valid.iter().enumerate() {
        let f = RoceFrame::decode(bytes).unwrap();
        let kind = Malformation::ALL[i % Malformation::ALL.len()];
        all.push(malform(&f, kind, &mut rng));
    }
    all.push(Vec::new());
    let mut w = PcapWriter::create(path).unwrap();
    for (i, f) in all.iter().enumerate() {
        w.write(i as u64 * 1000, f).unwrap();
    }
    w.finish().unwrap();
    all.len()
}

fn json_lines(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect()
}

#[test]
fn model_and_rtl_backends_agree_on_random_and_malformed_frames() {
    let pcap = scratch("mixed.pcap");
    let count = mixed_capture(&pcap);
    let pcap = pcap.to_str().unwrap();
    let model = json_lines(&rocenic(&["decode", "--backend", "model", "--json", pcap]));
    let rtl = json_lines(&rocenic(&["decode", "--backend", "rtl", "--json", pcap]));
    assert_eq!(model.len(), count);
    assert_eq!(rtl.len(), count);

    let mut reasons = std::collections::BTreeSet::new();
    let mut udp_checksum_frames = 0;
    for (m, r) in model.iter().zip(&rtl) {
        let frame = &m["frame"];
        assert_eq!(frame, &r["frame"]);
        reasons.insert(m["error"].as_str().unwrap_or("ok").to_string());
        if m["udp_checksum_ok"] == false {
            // Neither receive path verifies it: accepted with every header.
            udp_checksum_frames += 1;
            assert_eq!(m["ok"], true, "frame {frame}");
        }
        for key in [
            "ok",
            "error",
            "opcode",
            "opcode_name",
            "dest_qp",
            "psn",
            "payload_len",
            "udp_checksum_ok",
            "headers",
        ] {
            assert_eq!(m[key], r[key], "frame {frame}: `{key}`");
        }
        // The hardware's own reason agrees with the model's error, and the
        // payload segment has the payload's length.
        if r["hw_reason_code"].is_null() {
            assert_eq!(
                m["error"], "truncated",
                "only the empty record skips the parser"
            );
        } else {
            assert_eq!(r["hw_reason"], m["error"], "frame {frame}");
        }
        if m["ok"] == true && m["payload_len"] != 0 {
            assert_eq!(r["hw_payload_bytes"], m["payload_len"], "frame {frame}");
        }
    }
    assert!(udp_checksum_frames > 0);
    // ok plus the 17 reasons the receive path checks.
    assert_eq!(reasons.len(), 18, "{reasons:?}");

    let table = rocenic(&["decode", "--backend", "rtl", pcap]);
    let accepted = model.iter().filter(|m| m["ok"] == true).count();
    assert!(
        table.contains(&format!("RX parser counters: accepted {accepted},")),
        "{}",
        table.lines().last().unwrap_or("")
    );
}
