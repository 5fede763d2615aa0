//! Writes `docs/abi.md` (or the path given) from the contract's tables.

use std::process::ExitCode;

fn main() -> ExitCode {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: rocenic-abi-doc PATH   (the page is docs/abi.md)");
        return ExitCode::from(2);
    };
    match std::fs::write(&path, rocenic_abi::markdown::render()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: cannot write {path}: {e}");
            ExitCode::FAILURE
        }
    }
}
