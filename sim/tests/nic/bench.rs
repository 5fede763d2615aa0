//! `rocenic bench`: the JSON rows it writes hold the figures the blocks
//! promise (one beat per cycle everywhere, no self-caused RX input stall,
//! fixed RX record and ICRC verdict latencies, a one-cycle register slice),
//! every sweep size appears, no value exceeds its physical bound, the
//! goodput rows of the RTL responder reach the framing bound for large
//! messages, the RTL requester's goodput and WQE-to-first-frame rows
//! exist with their parameters, and so do the rows of two RTL NICs
//! (message rate and goodput) with the model's figure beside each.

use serde_json::Value;
use std::process::Command;

#[test]
fn bench_rows_hold_the_promised_figures() {
    let path = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bench.json");
    let out = Command::new(env!("CARGO_BIN_EXE_rocenic"))
        .args(["bench", "--frames", "4", "--json", path.to_str().unwrap()])
        .output()
        .expect("rocenic runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(table.contains("rx_parser throughput: 1.000 beats/cycle at every size"));

    let rows: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let select = |block: &str, metric: &str| -> Vec<&Value> {
        rows.iter()
            .filter(|r| r["block"] == block && r["metric"] == metric)
            .collect()
    };
    for r in &rows {
        for key in ["block", "metric", "value", "unit", "frames", "clock_mhz"] {
            assert!(!r[key].is_null(), "{key} in {r}");
        }
        if let Some(bound) = r["bound"].as_f64() {
            let v = r["value"].as_f64().unwrap();
            if r["unit"] == "cycles" {
                assert!(v >= bound, "{r}");
            } else if r["metric"].as_str().unwrap().ends_with("_steady") {
                // The difference of two runs' ends carries a few ns of
                // their ACK timing: 2 ns in the 10.7 us between 2 and 4
                // messages of 64 KiB.
                assert!(v <= bound * (1.0 + 1e-3), "{r}");
            } else {
                assert!(v <= bound + 1e-9, "{r}");
            }
        }
    }
    for (block, metric) in [
        ("rx_parser", "throughput"),
        ("tx_builder", "throughput"),
        ("icrc_checker", "throughput"),
        ("axis_register_slice", "throughput"),
    ] {
        let sel = select(block, metric);
        assert!(!sel.is_empty());
        assert!(sel.iter().all(|r| r["value"] == 1.0), "{block} {metric}");
    }
    let sizes: Vec<u64> = select("rx_parser", "throughput")
        .iter()
        .map(|r| r["frame_bytes"].as_u64().unwrap())
        .collect();
    assert_eq!(sizes, rocenic_sim::bench::SWEEP.map(|s| s as u64).to_vec());
    assert!(select("rx_parser", "input_stalls_outputs_ready")
        .iter()
        .all(|r| r["value"] == 0.0));
    assert!(select("rx_parser", "latency_last_beat_in_to_record")
        .iter()
        .all(|r| r["value"] == rocenic_hdl::frame::rx::rx_parser::RECORD_LATENCY as f64));
    assert!(select("icrc_checker", "latency_end_beat_in_to_verdict")
        .iter()
        .all(|r| r["value"] == 3.0));
    assert_eq!(
        select(
            "axis_register_slice",
            "latency_first_beat_in_to_first_beat_out"
        )[0]["value"],
        1.0
    );
    // 512 bits at 250 MHz: a full beat is 128 Gb/s.
    let largest = select("rx_parser", "data_rate")
        .into_iter()
        .find(|r| r["frame_bytes"] == 4154)
        .unwrap();
    let expect = 4154.0 * 8.0 / (65.0 * 4.0);
    assert!((largest["value"].as_f64().unwrap() - expect).abs() < 1e-9);

    // Goodput with the RTL responder on the fabric: every size, against
    // the framing bound; 1 MiB messages come within 5 % of it (the
    // responder keeps up with the wire: a stall per packet would not).
    for metric in ["write_goodput", "read_goodput"] {
        let sel = select("responder_path", metric);
        let sizes: Vec<u64> = sel
            .iter()
            .map(|r| r["message_bytes"].as_u64().unwrap())
            .collect();
        assert_eq!(sizes, rocenic_sim::bench::GOODPUT_SIZES.to_vec());
        for r in &sel {
            assert_eq!(r["mtu"], 4096, "{r}");
            assert!(r["value"].as_f64().unwrap() > 0.0, "{r}");
            assert!(r["bound"].as_f64().is_some(), "{r}");
        }
        let mib = sel.last().unwrap();
        let (v, bound) = (
            mib["value"].as_f64().unwrap(),
            mib["bound"].as_f64().unwrap(),
        );
        assert!(v >= 0.95 * bound, "{metric} at 1 MiB: {v} of {bound}");
    }

    // Goodput with the RTL requester on the fabric against a model
    // responder: every size, each row with its MTU, peer, the host model's
    // DMA read latency and the framing bound, above zero; the steady rows
    // at the large sizes, and the steady WRITE rate within 1 % of the bound.
    let dma_read = rocenic_rtl::host_dma::HostDmaConfig::default().read_latency;
    for metric in ["write_goodput", "read_goodput"] {
        let sel = select("requester_path", metric);
        let sizes: Vec<u64> = sel
            .iter()
            .map(|r| r["message_bytes"].as_u64().unwrap())
            .collect();
        assert_eq!(sizes, rocenic_sim::bench::GOODPUT_SIZES.to_vec());
        let steady = select("requester_path", &format!("{metric}_steady"));
        let steady_sizes: Vec<u64> = steady
            .iter()
            .map(|r| r["message_bytes"].as_u64().unwrap())
            .collect();
        let want: Vec<u64> = rocenic_sim::bench::GOODPUT_SIZES
            .into_iter()
            .filter(|&s| s >= rocenic_sim::bench::STEADY_MIN_BYTES)
            .collect();
        assert_eq!(steady_sizes, want);
        for r in sel.iter().chain(&steady) {
            assert_eq!(
                (&r["mtu"], &r["peer"], &r["unit"]),
                (&4096.into(), &"model responder".into(), &"Gb/s".into()),
                "{r}"
            );
            assert_eq!(r["dma_read_latency_cycles"].as_u64(), Some(dma_read), "{r}");
            assert!(r["value"].as_f64().unwrap() > 0.0, "{r}");
            assert!(r["bound"].as_f64().unwrap() > 0.0, "{r}");
        }
        if metric == "write_goodput" {
            for r in &steady {
                let (v, bound) = (r["value"].as_f64().unwrap(), r["bound"].as_f64().unwrap());
                assert!(v >= 0.99 * bound, "steady WRITE: {r}");
            }
        } else {
            // READ FIRST / MIDDLE placements answer the event loop at the
            // MR's verdict: the responses are placed at the wire's rate
            // (about 75 % of the bound while every one waited for its
            // DMA writes).
            for r in &steady {
                let (v, bound) = (r["value"].as_f64().unwrap(), r["bound"].as_f64().unwrap());
                assert!(v >= 0.97 * bound, "steady READ: {r}");
            }
        }
    }

    // WQE in to first frame out: the cases in order, each with its verb,
    // size, MTU and the DMA read latency.
    let sel = select("requester_path", "wqe_to_first_frame");
    let cases: Vec<(String, u64)> = sel
        .iter()
        .map(|r| {
            (
                r["operation"].as_str().unwrap().to_owned(),
                r["message_bytes"].as_u64().unwrap(),
            )
        })
        .collect();
    let want: Vec<(String, u64)> = rocenic_sim::bench::FIRST_FRAME_CASES
        .iter()
        .map(|(v, s)| (v.name().to_owned(), *s))
        .collect();
    assert_eq!(cases, want);
    for r in &sel {
        assert_eq!(
            (&r["unit"], &r["mtu"]),
            (&"cycles".into(), &4096.into()),
            "{r}"
        );
        assert_eq!(r["dma_read_latency_cycles"].as_u64(), Some(dma_read), "{r}");
        assert!(r["value"].as_f64().unwrap() > 0.0, "{r}");
    }

    // The responder's ACK latency: a row per WRITE size, positive, with
    // the host model's DMA write latency stated.
    let sel = select("responder_path", "ack_latency");
    let sizes: Vec<u64> = sel
        .iter()
        .map(|r| r["message_bytes"].as_u64().unwrap())
        .collect();
    assert_eq!(sizes, rocenic_sim::bench::ACK_LATENCY_SIZES.to_vec());
    for r in &sel {
        assert_eq!(
            (&r["unit"], &r["mtu"]),
            (&"cycles".into(), &4096.into()),
            "{r}"
        );
        assert!(r["value"].as_f64().unwrap() > 0.0, "{r}");
        assert_eq!(
            r["dma_write_latency_cycles"].as_u64(),
            Some(rocenic_sim::bench::ACK_LATENCY_DMA_WRITE_CYCLES),
            "{r}"
        );
    }

    // Two RTL NICs: the message rate of 64-byte WRITEs, SENDs and READs on
    // 1, 8 and 64 QPs and the goodput at every size, each row with its
    // bound and the model's figure for the same run, both within the
    // bound; the model runs small messages on many QPs near it.
    for metric in [
        "write_message_rate",
        "send_message_rate",
        "read_message_rate",
    ] {
        let sel = select("nic_core_pair", metric);
        let qps: Vec<u64> = sel.iter().map(|r| r["qps"].as_u64().unwrap()).collect();
        assert_eq!(
            qps,
            rocenic_sim::bench::MESSAGE_RATE_QPS.map(u64::from).to_vec()
        );
        for r in &sel {
            assert_eq!(
                (&r["unit"], &r["message_bytes"]),
                (&"Mmsg/s".into(), &64.into())
            );
            let (v, model, bound) = (
                r["value"].as_f64().unwrap(),
                r["model_value"].as_f64().unwrap(),
                r["bound"].as_f64().unwrap(),
            );
            assert!(v > 0.0 && model <= bound * (1.0 + 1e-9), "{r}");
        }
        let many = sel.last().unwrap();
        let (model, bound) = (
            many["model_value"].as_f64().unwrap(),
            many["bound"].as_f64().unwrap(),
        );
        assert!(model >= 0.5 * bound, "the model on 64 QPs: {many}");
        // One QP's next 64-byte WRITE or SEND goes out before the previous
        // one's payload read has returned: its grant's status comes at the
        // packet's local check, not after the DMA read (one message per
        // read round trip, 266 cycles, before that).
        if metric != "read_message_rate" {
            let one = &sel[0];
            let cycles_per_message = rocenic_sim::bench::CLOCK_MHZ / one["value"].as_f64().unwrap();
            let read_latency = rocenic_rtl::host_dma::HostDmaConfig::default().read_latency;
            assert!(
                cycles_per_message < read_latency as f64,
                "{cycles_per_message} cycles per message on one QP: {one}"
            );
        }
    }
    for metric in ["write_goodput", "read_goodput"] {
        let sel = select("nic_core_pair", metric);
        let sizes: Vec<u64> = sel
            .iter()
            .map(|r| r["message_bytes"].as_u64().unwrap())
            .collect();
        assert_eq!(sizes, rocenic_sim::bench::GOODPUT_SIZES.to_vec());
        for r in sel
            .iter()
            .chain(&select("nic_core_pair", &format!("{metric}_steady")))
        {
            assert_eq!(r["peer"], "rtl core", "{r}");
            let model = r["model_value"].as_f64().unwrap();
            assert!(model > 0.0 && r["value"].as_f64().unwrap() > 0.0, "{r}");
        }
    }
}

/// Each ACK latency figure is measured on the expected frames: the last
/// request frame a WRITE's last packet with AckReq, the one frame out its
/// ACK (opcode, PSN, QP, an ACK syndrome), and the figure the cycles
/// between them, equal to the bench row's.
#[test]
fn ack_latency_is_measured_from_the_last_request_to_its_ack() {
    use rocenic_sim::bench::{responder_ack_latency, ACK_LATENCY_SIZES};
    use rocenic_wire::{op, RoceFrame};
    for size in ACK_LATENCY_SIZES {
        let l = responder_ack_latency(size).unwrap();
        assert_eq!(l.request_frames as u64, size.div_ceil(4096), "{size} B");
        let request = RoceFrame::decode(&l.last_request).unwrap();
        let ack = RoceFrame::decode(&l.ack).unwrap();
        let want = if size > 4096 {
            op::WRITE_LAST
        } else {
            op::WRITE_ONLY
        };
        assert_eq!((request.bth.opcode, request.bth.ack_req), (want, true));
        assert_eq!(ack.bth.opcode, op::ACKNOWLEDGE);
        assert_eq!(ack.bth.psn, request.bth.psn);
        assert_eq!(ack.ext.aeth.unwrap().syndrome >> 5, 0, "an ACK, not a NAK");
        assert!(l.ack_first_beat > l.last_request_beat);
        // No ACK before its data: after the last DMA write beat.
        assert!(
            l.ack_first_beat > l.last_dma_write,
            "{size} B: ACK at {}, last write at {}",
            l.ack_first_beat,
            l.last_dma_write
        );
        println!(
            "{size} B WRITE: ACK {} cycles after the last request beat, {} after the last DMA write",
            l.cycles(),
            l.ack_first_beat - l.last_dma_write
        );
    }
}

/// Each first-frame latency is measured from the WQE the core took to the
/// message's first packet: a WRITE or SEND frame cannot leave before its
/// payload came back from host memory (the host model's read latency), a
/// READ request has no payload and leaves sooner; the frame is the
/// verb's first packet.
#[test]
fn first_frame_latency_is_measured_from_the_post_to_the_first_frame() {
    use rocenic_sim::bench::{requester_first_frame_latency, FirstFrameVerb};
    use rocenic_wire::{op, RoceFrame};
    for (verb, size, opcode) in [
        (FirstFrameVerb::Write, 65536, op::WRITE_FIRST),
        (FirstFrameVerb::Read, 64, op::READ_REQUEST),
        (FirstFrameVerb::Send, 64, op::SEND_ONLY),
    ] {
        let l = requester_first_frame_latency(verb, size).unwrap();
        let f = RoceFrame::decode(&l.first_frame).unwrap();
        assert_eq!(f.bth.opcode, opcode, "{verb:?}");
        assert_eq!(
            l.request_frames as u64,
            if verb == FirstFrameVerb::Read {
                1
            } else {
                size.div_ceil(4096)
            }
        );
        if verb == FirstFrameVerb::Read {
            assert!(l.cycles() < l.dma_read_latency, "{verb:?}: {}", l.cycles());
        } else {
            assert!(l.cycles() > l.dma_read_latency, "{verb:?}: {}", l.cycles());
        }
        println!(
            "{verb:?} {size} B: first frame {} cycles after the WQE",
            l.cycles()
        );
    }
}
