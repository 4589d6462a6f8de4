//! `mcpeye`: the report of event logs and ingest payloads, and a local ingest to develop
//! against. The aggregation is the `mcpeye-report` crate; this binary parses arguments and
//! prints.
//!
//! ```text
//! mcpeye report events/*.jsonl payloads.jsonl --html report.html
//! mcpeye receive --port 3001 --out events.jsonl
//! mcpeye proxy -- npx -y @modelcontextprotocol/server-everything
//! ```

#![forbid(unsafe_code)]

mod proxy;
mod receive;

use clap::{value_parser, Arg, ArgAction, ArgMatches, Command};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use mcpeye_report::{terminal_safe, InputSection, ReportInput};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

fn cli() -> Command {
    Command::new("mcpeye")
        .version(env!("CARGO_PKG_VERSION"))
        .about("Reports on what agents did with an MCP server, from mcpeye's event logs and ingest payloads")
        .subcommand_required(true)
        .arg_required_else_help(true)
        .subcommand(
            Command::new("report")
                .about("Prints the report of event logs and ingest payload files")
                .long_about(
                    "Prints the report of event logs (Config::event_log, MCPEYE_EVENT_LOG_DIR) and ingest payload \
                     files (what any mcpeye SDK POSTs: one payload per line, or a JSON array): overview, Intent Gap, \
                     tools, paths, versions and models. A call found in several files is counted once. Sections \
                     that need data the input lacks (a payload file has no conversations) say so.",
                )
                .arg(
                    Arg::new("files")
                        .value_name("FILE")
                        .help("Event log or payload files; a directory means its *.jsonl files")
                        .num_args(1..)
                        .required(true)
                        .value_parser(value_parser!(PathBuf)),
                )
                .arg(
                    Arg::new("json")
                        .long("json")
                        .help("Print the report as JSON instead of text")
                        .action(ArgAction::SetTrue),
                )
                .arg(
                    Arg::new("html")
                        .long("html")
                        .value_name("FILE")
                        .help("Also write the report as one self-contained HTML page")
                        .value_parser(value_parser!(PathBuf)),
                ),
        )
        .subcommand(
            Command::new("receive")
                .about("Runs a local ingest that any mcpeye SDK can send to while developing")
                .long_about(
                    "Runs a local ingest: POST /ingest accepts the payloads any mcpeye SDK sends, appends each to \
                     a file (one payload per line, the input of `mcpeye report`) and prints a line per call as it \
                     arrives. Point the SDK at it with its ingest URL (http://127.0.0.1:PORT); port 3001 is the \
                     SDKs' default. Stop it with Ctrl-C.",
                )
                .arg(
                    Arg::new("port")
                        .long("port")
                        .value_name("N")
                        .help("Port to listen on (0: any free port)")
                        .default_value("3001")
                        .value_parser(value_parser!(u16)),
                )
                .arg(
                    Arg::new("bind")
                        .long("bind")
                        .value_name("ADDR")
                        .help("Address to listen on; other machines reach it only if you bind 0.0.0.0")
                        .default_value("127.0.0.1"),
                )
                .arg(
                    Arg::new("out")
                        .long("out")
                        .value_name("FILE")
                        .help("File the payloads are appended to")
                        .default_value("mcpeye-events.jsonl")
                        .value_parser(value_parser!(PathBuf)),
                )
                .arg(
                    Arg::new("secret")
                        .long("secret")
                        .value_name("SECRET")
                        .help("Refuse payloads (401) whose x-mcpeye-secret header is not this"),
                )
                .arg(
                    Arg::new("max-connections")
                        .long("max-connections")
                        .value_name("N")
                        .help("Connections served at once; more are answered 503 with Retry-After")
                        .default_value("512")
                        .value_parser(value_parser!(u16).range(1..)),
                ),
        )
        .subcommand(proxy::command())
}

fn main() -> ExitCode {
    let matches = cli().get_matches();
    let result = match matches.subcommand() {
        Some(("proxy", m)) => return proxy::main(m),
        Some(("report", m)) => report(m),
        Some(("receive", m)) => receive::run(receive::Options {
            bind: m.get_one::<String>("bind").cloned().unwrap_or_default(),
            port: m.get_one::<u16>("port").copied().unwrap_or(3001),
            out: m.get_one::<PathBuf>("out").cloned().unwrap_or_default(),
            secret: m.get_one::<String>("secret").cloned(),
            max_connections: m
                .get_one::<u16>("max-connections")
                .map_or(receive::DEFAULT_MAX_CONNECTIONS, |&n| n.into()),
        }),
        _ => Err("a command is needed: mcpeye report or mcpeye receive (see mcpeye --help)".into()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcpeye: {e}");
            ExitCode::FAILURE
        }
    }
}

fn report(m: &ArgMatches) -> Result<(), String> {
    let mut input = ReportInput::new();
    for path in m.get_many::<PathBuf>("files").into_iter().flatten() {
        input.read_path(path);
    }
    let report = with_progress(&input);
    tell_skipped(&report.input);
    if report.overview.calls == 0 {
        return Err(format!(
            "no call in the input ({} payload events, {} event log lines read): give event log files, payload \
             files, or a directory of .jsonl files",
            report.overview.payload_events, report.overview.log_lines
        ));
    }
    if let Some(html) = m.get_one::<PathBuf>("html") {
        write_html(html, &report.to_html())?;
        eprintln!("mcpeye: wrote {}", html.display());
    }
    let text = if m.get_flag("json") {
        let mut json = serde_json::to_string_pretty(&report).map_err(|e| format!("cannot write JSON: {e}"))?;
        json.push('\n');
        json
    } else {
        report.to_string()
    };
    print_out(&text)
}

/// The report, with a progress bar on stderr while the files are read, when stderr is a
/// terminal (nothing is written otherwise, so logs and pipes get only the report's lines).
fn with_progress(input: &ReportInput) -> mcpeye_report::Report {
    if !std::io::stderr().is_terminal() {
        return input.report();
    }
    let bar = ProgressBar::with_draw_target(Some(input.total_bytes()), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("mcpeye: reading {bytes}/{total_bytes} ({bytes_per_sec}, {eta} left) {wide_bar}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let report = input.report_with_progress(|bytes| bar.set_position(bytes));
    bar.finish_and_clear();
    report
}

/// What of the input was skipped, on stderr (the report itself has it all too).
fn tell_skipped(input: &InputSection) {
    for file in &input.unread_files {
        eprintln!("mcpeye: skipped {}", terminal_safe(file));
    }
    let lines: usize = input.skipped.values().sum();
    if lines > 0 {
        let reasons: Vec<String> = input.skipped.iter().map(|(why, n)| format!("{n} {why}")).collect();
        eprintln!("mcpeye: skipped {lines} lines ({})", reasons.join(", "));
        for p in &input.places {
            eprintln!("mcpeye:   {}:{}: {}", terminal_safe(&p.file), p.line, p.reason);
        }
    }
}

/// Writes to stdout; a reader that went away (`| head`) is not an error.
fn print_out(text: &str) -> Result<(), String> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(format!("cannot write to stdout: {e}")),
        _ => Ok(()),
    }
}

fn write_html(path: &Path, page: &str) -> Result<(), String> {
    std::fs::write(path, page).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_command_line_is_well_formed() {
        super::cli().debug_assert();
    }
}
