//! `rocenic`: run the simulated RoCEv2 NICs and inspect captures.

use anyhow::Result;
use clap::{Parser, Subcommand, ValueEnum};
use rocenic_sim::decode;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "rocenic", version, about = "rocenic RoCEv2 NIC simulator and tools")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum DecodeBackend {
    /// The reference model's codec.
    Model,
}

#[derive(Subcommand)]
enum Command {
    /// Decode every frame of a pcap as the NIC's receive path would.
    Decode {
        /// The capture (pcap, Ethernet link type).
        file: PathBuf,
        #[arg(long, value_enum, default_value = "model")]
        backend: DecodeBackend,
        /// Print one JSON object per frame (JSON Lines) instead of a table.
        #[arg(long)]
        json: bool,
    },
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("rocenic: error: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Decode {
            file,
            backend: DecodeBackend::Model,
            json,
        } => {
            let reports = decode::decode_pcap(&file)?;
            for r in &reports {
                if json {
                    println!("{}", serde_json::to_string(r)?);
                } else {
                    println!(
                        "{:>6} {:<4} {:<36} qp {:>8} psn {:>8} len {:>5} {}",
                        r.frame,
                        if r.ok { "ok" } else { "DROP" },
                        r.opcode_name.unwrap_or("-"),
                        r.dest_qp.map_or("-".into(), |q| q.to_string()),
                        r.psn.map_or("-".into(), |p| p.to_string()),
                        r.payload_len.map_or("-".into(), |l| l.to_string()),
                        r.error_detail.as_deref().unwrap_or("")
                    );
                }
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}
