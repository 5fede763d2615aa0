//! The command line as a shell pipeline uses it.

use std::io::{BufRead, BufReader};
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};

/// `rocenic dcqcn ... | head -1`: the reader goes away after one line of
/// thousands; the CLI ends as Unix tools do (SIGPIPE), not with a panic.
#[test]
fn a_reader_that_stops_early_ends_the_cli_quietly() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rocenic"))
        .args([
            "dcqcn",
            "--flows",
            "2",
            "--duration-ms",
            "4",
            "--window-us",
            "1",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("rocenic starts");
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    assert!(line.contains("jain"), "{line}");
    drop(out);
    let done = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(done.status.signal(), Some(13), "{:?}", done.status);
}
