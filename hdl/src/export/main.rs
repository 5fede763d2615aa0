//! Writes the Verilog of every block in `rocenic_hdl::export::blocks()` to a
//! directory, one `<name>.v` per block, for the lint and synthesis flow
//! (`make verilog`, `make lint-rtl`, `make synth`).
//!
//! A file whose content did not change is left untouched, so its timestamp
//! keeps make and the flow's caches quiet; files of blocks that left the
//! registry are removed, so a stale block never shows up in a report.
//! `blocks.txt` lists the block names in registry order.

use rocenic_hdl::export::{blocks, ExportedBlock};
use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

const USAGE: &str = "usage: rocenic-hdl-export [--list] [--only NAME]... OUT_DIR\n\
\n\
Writes OUT_DIR/<block>.v for every block in rocenic_hdl::export::blocks()\n\
and OUT_DIR/blocks.txt with their names. --list prints the names only;\n\
--only restricts the export to the named blocks (may repeat).";

/// Name of the index file; `.txt` so the flow never mistakes it for Verilog.
const INDEX: &str = "blocks.txt";

#[derive(Debug, PartialEq)]
struct Args {
    list: bool,
    only: Vec<String>,
    out_dir: Option<PathBuf>,
}

fn parse_args(args: impl IntoIterator<Item = String>) -> Result<Args, String> {
    let mut parsed = Args {
        list: false,
        only: Vec::new(),
        out_dir: None,
    };
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--list" => parsed.list = true,
            "--only" => match args.next() {
                Some(name) => parsed.only.push(name),
                None => return Err("--only needs a block name".into()),
            },
            "-h" | "--help" => return Err(String::new()),
            flag if flag.starts_with('-') => return Err(format!("unknown option {flag}")),
            _ if parsed.out_dir.is_some() => return Err("more than one OUT_DIR".into()),
            _ => parsed.out_dir = Some(PathBuf::from(arg)),
        }
    }
    if !parsed.list && parsed.out_dir.is_none() {
        return Err("OUT_DIR is missing".into());
    }
    Ok(parsed)
}

/// Writes `content` to `path` unless the file already holds exactly that.
fn write_if_changed(path: &Path, content: &str) -> std::io::Result<bool> {
    if fs::read(path).is_ok_and(|old| old == content.as_bytes()) {
        return Ok(false);
    }
    // Write to a temporary name first: an interrupted export must not leave
    // a truncated block behind that looks current to make.
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    fs::write(&tmp, content)?;
    fs::rename(&tmp, path)?;
    Ok(true)
}

fn export(out_dir: &Path, selected: &[ExportedBlock], all_names: &[&str]) -> Result<(), String> {
    fs::create_dir_all(out_dir).map_err(|e| format!("cannot create {}: {e}", out_dir.display()))?;
    for block in selected {
        let path = out_dir.join(format!("{}.v", block.name));
        let changed = write_if_changed(&path, &block.verilog)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        let state = if changed { "written" } else { "unchanged" };
        println!("{state:9} {}", path.display());
    }
    // Only a full export knows which `.v` files are stale.
    if selected.len() == all_names.len() {
        let known: BTreeSet<String> = all_names.iter().map(|n| format!("{n}.v")).collect();
        let entries =
            fs::read_dir(out_dir).map_err(|e| format!("cannot list {}: {e}", out_dir.display()))?;
        for entry in entries.flatten() {
            let file = entry.file_name().to_string_lossy().into_owned();
            if file.ends_with(".v") && !known.contains(&file) {
                fs::remove_file(entry.path())
                    .map_err(|e| format!("cannot remove {}: {e}", entry.path().display()))?;
                println!("{:9} {}", "removed", entry.path().display());
            }
        }
        let index: String = all_names.iter().map(|n| format!("{n}\n")).collect();
        let path = out_dir.join(INDEX);
        write_if_changed(&path, &index)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(())
}

fn run() -> Result<(), String> {
    let args = parse_args(std::env::args().skip(1))?;
    let all = blocks();
    let all_names: Vec<&str> = all.iter().map(|b| b.name).collect();
    if let Some(unknown) = args.only.iter().find(|n| !all_names.contains(&n.as_str())) {
        return Err(format!(
            "no block named `{unknown}`; known: {}",
            all_names.join(", ")
        ));
    }
    if args.list {
        for name in &all_names {
            println!("{name}");
        }
        return Ok(());
    }
    let selected: Vec<ExportedBlock> = all
        .into_iter()
        .filter(|b| args.only.is_empty() || args.only.iter().any(|n| n == b.name))
        .collect();
    let out_dir = args.out_dir.expect("checked by parse_args");
    export(&out_dir, &selected, &all_names)
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            if !message.is_empty() {
                eprintln!("rocenic-hdl-export: {message}");
            }
            eprintln!("{USAGE}");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(args: &[&str]) -> Vec<String> {
        args.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn parses_out_dir_and_repeated_only() {
        let args = parse_args(strings(&["--only", "a", "out", "--only", "b"])).unwrap();
        assert_eq!(
            args,
            Args {
                list: false,
                only: vec!["a".into(), "b".into()],
                out_dir: Some(PathBuf::from("out")),
            }
        );
    }

    #[test]
    fn rejects_bad_command_lines() {
        assert!(parse_args(strings(&[])).is_err());
        assert!(parse_args(strings(&["a", "b"])).is_err());
        assert!(parse_args(strings(&["--only"])).is_err());
        assert!(parse_args(strings(&["--bogus", "out"])).is_err());
        assert!(parse_args(strings(&["--list"])).unwrap().list);
    }
}
