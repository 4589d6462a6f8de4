//! The Intent Gap of saved events: what users asked for that your tools could not give.
//!
//! ```text
//! cargo run --example intent_gap -- FILE          # a table in the terminal
//! cargo run --example intent_gap -- --json FILE   # the same as JSON, for scripts
//! ```
//!
//! `FILE` holds JSON Lines: one payload per line, as POSTed to the ingest
//! (`{"projectId":…,"identity":{…},"events":[…]}`), or one event per line; `-` reads stdin.
//! `cargo run --example quickstart` writes such a file and prints its path.

use mcpeye::report::IntentGap;
use std::io::{BufReader, Write};
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut json = false;
    let mut file = None;
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--json" => json = true,
            "-h" | "--help" => return usage(ExitCode::SUCCESS),
            _ if file.is_none() => file = Some(arg),
            _ => return usage(ExitCode::from(2)),
        }
    }
    let Some(file) = file else { return usage(ExitCode::from(2)) };
    let read = if file == "-" {
        IntentGap::from_json_lines(std::io::stdin().lock())
    } else {
        match std::fs::File::open(&file) {
            Ok(f) => IntentGap::from_json_lines(BufReader::new(f)),
            Err(e) => Err(e),
        }
    };
    let gap = match read {
        Ok(gap) => gap,
        Err(e) => {
            eprintln!("intent_gap: cannot read {file}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let out = if json { serde_json::to_string_pretty(&gap.to_json()).expect("JSON") } else { gap.to_string() };
    // A closed pipe (`| head`) is not an error worth a panic.
    let _ = writeln!(std::io::stdout().lock(), "{out}");
    ExitCode::SUCCESS
}

fn usage(code: ExitCode) -> ExitCode {
    eprintln!(
        "usage: cargo run --example intent_gap -- [--json] FILE   (JSON Lines of payloads or events; - for stdin)"
    );
    code
}
