//! `mcpeye proxy -- COMMAND [ARGS...]`: any MCP server over stdio, run as a child, with the
//! analytics of a server written with mcpeye. Each message is a line of JSON; the proxy
//! forwards every line as it came in both directions, except where [`relay`] says otherwise.
//!
//! ```text
//! client ─stdin→ [client pump] ─→ child's stdin
//! client ←stdout─ [server pump] ←─ child's stdout      child's stderr → the proxy's stderr
//! ```

mod child;
mod listen;
mod relay;
mod upstream;

use clap::{value_parser, Arg, ArgAction, ArgMatches, Command};
use mcpeye_runtime::{Config, Tracker, Transport};
use relay::{Action, Relay};
use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{ChildStdin, ExitCode};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;
use upstream::Upstream;

/// The project id when neither `--project` nor `MCPEYE_PROJECT_ID` names one.
const DEFAULT_PROJECT: &str = "mcpeye-proxy";

pub fn command() -> Command {
    Command::new("proxy")
        .about("Runs any MCP server (stdio) behind a proxy that records its tool calls and their intents")
        .long_about(
            "Runs an MCP server as a child process over stdio and relays every JSON-RPC message between it and the \
             client unchanged (requests, results, errors, notifications, the server's own requests: sampling, \
             elicitation, roots; progress, cancellation, list_changed, pagination, _meta; both protocol eras), \
             except that tools/list results gain the optional mcpeyeIntent parameter on every object input schema \
             that does not declare it and the reserved tool mcpeye_request_capability (answered by the proxy, never \
             forwarded; with --feedback also mcpeye_send_feedback, through which agents send feedback on the tools), \
             and tools/call requests have mcpeyeIntent taken out before the server sees them. Each call \
             is recorded with its client, session, intent, arguments, result or error and duration, exactly as a \
             server written with mcpeye records it.\n\n\
             With --upstream URL the server is a Streamable HTTP endpoint instead of a command: each message is \
             POSTed with the --header values, the session id and protocol version the server gave, and the answers \
             (JSON or event streams) are relayed back; the client still talks to the proxy over stdio. With \
             --listen ADDR the proxy serves Streamable HTTP at http://ADDR/mcp instead of stdio, starting the \
             command once per session, until SIGTERM or Ctrl-C.\n\n\
             Put it in a client's configuration in place of the server's command:\n  \
             \"command\": \"mcpeye\", \"args\": [\"proxy\", \"--\", \"npx\", \"-y\", \
             \"@modelcontextprotocol/server-everything\"]\n\n\
             Analytics are configured as for any mcpeye server: MCPEYE_PROJECT_ID, MCPEYE_INGEST_URL, \
             MCPEYE_INGEST_SECRET, MCPEYE_EVENT_LOG_DIR, MCPEYE_OUTBOX_DIR and the other MCPEYE_* variables \
             (Config::from_env), or the options below; an option wins over its variable, except the project, where \
             MCPEYE_PROJECT_ID wins as it does for every server. The event log is on by default, in \
             $XDG_DATA_HOME/mcpeye/events (else ~/.local/share/mcpeye/events), so that `mcpeye report DIR` works \
             without any ingest.\n\n\
             The server's stderr is the proxy's. When the server exits, the proxy exits with its status (128+N for \
             signal N); a request it left unanswered is answered with a JSON-RPC error (-32603) and recorded. When \
             the client closes stdin (or the proxy gets SIGTERM, SIGINT or SIGHUP), the server's stdin is closed, \
             then it gets SIGTERM, then SIGKILL, each after the grace period, and the events are delivered. A line the server writes to stdout that is not JSON is dropped with a note on \
             stderr. The proxy writes nothing but protocol messages to stdout; at exit it says on stderr what \
             became of the events.",
        )
        .arg(
            Arg::new("project")
                .long("project")
                .value_name("ID")
                .help("Project id of the events (MCPEYE_PROJECT_ID wins when set; default mcpeye-proxy)"),
        )
        .arg(
            Arg::new("ingest").long("ingest").value_name("URL").help(
                "Base URL of the ingest the events are sent to (else MCPEYE_INGEST_URL, else http://localhost:3001)",
            ),
        )
        .arg(
            Arg::new("event-log")
                .long("event-log")
                .value_name("DIR")
                .help("Directory of the local event log (else MCPEYE_EVENT_LOG_DIR, else the per-user data directory)")
                .value_parser(value_parser!(PathBuf)),
        )
        .arg(
            Arg::new("no-event-log")
                .long("no-event-log")
                .help("Write no event log (the events still go to the ingest)")
                .action(ArgAction::SetTrue)
                .conflicts_with("event-log"),
        )
        .arg(
            Arg::new("outbox")
                .long("outbox")
                .value_name("DIR")
                .help("Keep undelivered events on disk there, sent at the next start (else MCPEYE_OUTBOX_DIR)")
                .value_parser(value_parser!(PathBuf)),
        )
        .arg(
            Arg::new("feedback")
                .long("feedback")
                .help("Also list mcpeye_send_feedback, answered by the proxy: agents send feedback on the tools through it")
                .action(ArgAction::SetTrue),
        )
        .arg(
            Arg::new("grace")
                .long("grace")
                .value_name("SECONDS")
                .help("How long the server has to exit once the client leaves, before SIGTERM and again before SIGKILL")
                .default_value("2")
                .value_parser(value_parser!(u64)),
        )
        .arg(
            // The baseline of BENCHMARKS.md's proxy figures: the same relay, nothing looked at.
            Arg::new("bare")
                .long("bare")
                .help("Relay every line as it came, without analytics (a benchmark's baseline)")
                .action(ArgAction::SetTrue)
                .hide(true),
        )
        .arg(
            Arg::new("flush-timeout")
                .long("flush-timeout")
                .value_name("SECONDS")
                .help("How long the events captured may take to be delivered at exit")
                .default_value("2")
                .value_parser(value_parser!(u64)),
        )
        .arg(
            Arg::new("upstream")
                .long("upstream")
                .value_name("URL")
                .help("The server is this Streamable HTTP endpoint (http:// or https://) instead of a command")
                .conflicts_with("command"),
        )
        .arg(
            Arg::new("listen")
                .long("listen")
                .value_name("ADDR")
                .help("Serve Streamable HTTP to clients on ADDR (HOST:PORT, or a port on 127.0.0.1) at /mcp, a server started per session (with --upstream: a session of it)"),
        )
        .arg(
            Arg::new("header")
                .long("header")
                .value_name("NAME: VALUE")
                .help("A header sent with every request to --upstream (repeatable), e.g. \"Authorization: Bearer …\"")
                .action(ArgAction::Append)
                .requires("upstream"),
        )
        .arg(
            Arg::new("command")
                .value_name("COMMAND")
                .help("The MCP server's command and its arguments, after --")
                .num_args(1..)
                .last(true)
                .required_unless_present("upstream")
                .value_parser(value_parser!(OsString)),
        )
}

/// Runs the proxy; its exit code is the server's.
pub fn main(m: &ArgMatches) -> ExitCode {
    match run(m) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("mcpeye proxy: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The analytics' configuration: `Config::from_env`, the options over it, and the event log in
/// the per-user data directory unless one is named or refused.
fn config(m: &ArgMatches) -> Config {
    let project = m.get_one::<String>("project").map_or(DEFAULT_PROJECT, String::as_str);
    let mut config = Config::from_env(project);
    if let Some(url) = m.get_one::<String>("ingest") {
        config = config.ingest_url(url);
    }
    let env_dir = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    match m.get_one::<PathBuf>("event-log") {
        Some(dir) => config = config.event_log(dir),
        // `from_env` reads MCPEYE_EVENT_LOG_DIR itself when the code names no directory.
        None if m.get_flag("no-event-log") || env_dir("MCPEYE_EVENT_LOG_DIR").is_some() => {}
        None => {
            if let Some(dir) = default_event_log_dir() {
                config = config.event_log(dir);
            }
        }
    }
    if let Some(dir) = m.get_one::<PathBuf>("outbox").cloned().or_else(|| env_dir("MCPEYE_OUTBOX_DIR")) {
        config = config.outbox_dir(dir);
    }
    config
}

/// `$XDG_DATA_HOME/mcpeye/events`, else `~/.local/share/mcpeye/events` (the XDG default).
fn default_event_log_dir() -> Option<PathBuf> {
    let absolute = |v: OsString| Some(PathBuf::from(v)).filter(|p| p.is_absolute());
    let data = std::env::var_os("XDG_DATA_HOME")
        .and_then(absolute)
        .or_else(|| std::env::var_os("HOME").and_then(absolute).map(|h| h.join(".local").join("share")))?;
    Some(data.join("mcpeye").join("events"))
}

/// What ends the relay.
enum Ended {
    /// The client closed stdin (or stopped reading stdout).
    ClientGone,
    /// The server closed its stdout: it exited (or is about to).
    ServerClosed,
}

fn run(m: &ArgMatches) -> Result<ExitCode, String> {
    let command: Vec<OsString> = m.get_many::<OsString>("command").into_iter().flatten().cloned().collect();
    let grace = Duration::from_secs(m.get_one::<u64>("grace").copied().unwrap_or(2));
    let upstream = match m.get_one::<String>("upstream") {
        Some(url) => {
            let headers = m.get_many::<String>("header").into_iter().flatten().map(|h| upstream::parse_header(h));
            let headers: Vec<(String, String)> = headers.collect::<Result<_, _>>()?;
            Upstream::new(url, headers.clone())?;
            Some((url.clone(), headers))
        }
        None => None,
    };
    if let Some(addr) = m.get_one::<String>("listen") {
        let addr = listen::address(addr);
        let socket = std::net::TcpListener::bind(&addr).map_err(|e| format!("cannot listen on {addr}: {e}"))?;
        let tracker = Tracker::new(config(m)).map_err(|e| format!("the analytics' configuration: {e}"))?;
        let local = socket.local_addr().map_err(|e| e.to_string())?;
        let serves = match upstream {
            Some((url, headers)) => listen::Serves::Upstream(url, headers),
            None => listen::Serves::Command(command),
        };
        let listener = listen::Listener::new(serves, grace, tracker.clone(), m.get_flag("feedback"));
        let serving = listener.clone();
        std::thread::spawn(move || serving.serve(socket));
        eprintln!("mcpeye proxy: listening on http://{local}/mcp");
        let (stopped, stop) = mpsc::channel();
        on_stop_signal(move || {
            let _ = stopped.send(());
        });
        let _ = stop.recv();
        listener.stop_all();
        shut_down(&tracker, flush_timeout(m));
        return Ok(ExitCode::SUCCESS);
    }
    if let Some((url, headers)) = upstream {
        let upstream = Upstream::new(&url, headers)?;
        let tracker = Tracker::new(config(m)).map_err(|e| format!("the analytics' configuration: {e}"))?;
        return Ok(run_upstream(upstream, tracker, flush_timeout(m), m.get_flag("feedback")));
    }
    let (program, args) = command.split_first().ok_or("a server command is needed after --")?;
    let tracker = Tracker::new(config(m)).map_err(|e| format!("the analytics' configuration: {e}"))?;
    let mut server = match child::Server::spawn(program, args) {
        Ok(server) => server,
        Err(e) => {
            tracker.shutdown(Duration::ZERO);
            return Err(format!("cannot start the server `{}`: {e}", program.to_string_lossy()));
        }
    };
    let (to_server, from_server) = server.pipes();
    let relay = Arc::new(Relay::new(tracker.clone(), Transport::Stdio).with_feedback(m.get_flag("feedback")));
    let client = Arc::new(ToClient::default());
    let bare = m.get_flag("bare");
    let (ended, ends) = mpsc::channel();
    let ended_by_signal = ended.clone();
    {
        let (relay, client, ended) = (relay.clone(), client.clone(), ended.clone());
        std::thread::spawn(move || {
            pump_client(&relay, &client, to_server, bare);
            let _ = ended.send(Ended::ClientGone);
        });
    }
    let server_done = {
        let (relay, client) = (relay.clone(), client.clone());
        std::thread::spawn(move || {
            pump_server(&relay, &client, from_server, &ended, bare);
            let _ = ended.send(Ended::ServerClosed);
        })
    };
    {
        // SIGTERM or Ctrl-C to the proxy stops the server as a client that leaves does, so
        // that the events are delivered.
        let ended = ended_by_signal;
        on_stop_signal(move || {
            let _ = ended.send(Ended::ClientGone);
        });
    }
    let status = match ends.recv() {
        Ok(Ended::ServerClosed) | Err(_) => server.wait_or_stop(grace),
        Ok(Ended::ClientGone) => server.stop(grace),
    };
    // The server's last lines are read before the requests it left are answered; a descendant
    // that still holds its stdout is not waited for beyond the grace period.
    let deadline = std::time::Instant::now() + grace;
    while !server_done.is_finished() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    for line in relay.server_gone("exited") {
        client.send(&line);
    }
    shut_down(&tracker, flush_timeout(m));
    Ok(child::exit_code(status))
}

/// Runs `stop` (once, on a thread of its own) when the proxy gets SIGTERM, SIGINT or SIGHUP.
fn on_stop_signal(stop: impl FnOnce() + Send + 'static) {
    #[cfg(unix)]
    {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        match signal_hook::iterator::Signals::new([SIGTERM, SIGINT, SIGHUP]) {
            Ok(mut signals) => {
                std::thread::spawn(move || {
                    if signals.forever().next().is_some() {
                        stop();
                    }
                });
            }
            Err(e) => eprintln!("mcpeye proxy: cannot handle SIGTERM (the events in memory are lost if it comes): {e}"),
        }
    }
    #[cfg(not(unix))]
    drop(stop);
}

/// `--flush-timeout`.
fn flush_timeout(m: &ArgMatches) -> Duration {
    Duration::from_secs(m.get_one::<u64>("flush-timeout").copied().unwrap_or(2))
}

/// Delivers the events captured within `timeout`, and says on stderr what became of them.
fn shut_down(tracker: &Tracker, timeout: Duration) {
    let report = tracker.shutdown(timeout);
    eprintln!("mcpeye proxy: analytics at exit: {report}");
}

/// The relay in front of a Streamable HTTP server, until the client closes stdin: each message
/// POSTed on a thread of its own, the answers handed back as they come.
fn run_upstream(upstream: Upstream, tracker: Tracker, flush_timeout: Duration, feedback: bool) -> ExitCode {
    let upstream = Arc::new(upstream);
    let relay = Arc::new(Relay::new(tracker.clone(), Transport::Stdio).with_feedback(feedback));
    let client = Arc::new(ToClient::default());
    let end = {
        let (relay, client, upstream) = (relay.clone(), client.clone(), upstream.clone());
        move || {
            upstream.close();
            for line in relay.server_gone("was left by its client") {
                client.send(&line);
            }
            shut_down(&tracker, flush_timeout);
        }
    };
    {
        // SIGTERM or Ctrl-C ends the session as a client that leaves does, events delivered.
        let end = end.clone();
        on_stop_signal(move || {
            end();
            std::process::exit(0);
        });
    }
    client_lines(|line| {
        let message = match relay.client_line(line) {
            Action::Forward => line.to_vec(),
            Action::Replace(changed) => changed,
            Action::Answer(answer) => {
                client.send(&answer);
                return true;
            }
            Action::Drop => return true,
        };
        let id = request_id(line);
        let is_request = id.is_some();
        let (relay, client, upstream) = (relay.clone(), client.clone(), upstream.clone());
        let post = move || {
            let deliver = |m: &[u8]| {
                to_client(&relay, &client, m);
            };
            if let Err(e) = upstream.post(&message, None, &deliver, &|_, m| deliver(m)) {
                eprintln!("mcpeye proxy: {e}");
                let failed = format!("the upstream MCP server did not answer: {e}");
                if let Some(answer) = id.and_then(|id| relay.fail(&id, &failed)) {
                    client.send(&answer);
                }
            }
            if upstream.should_listen() {
                // The session's GET stream lasts as long as the session: a thread of its own.
                let (relay, client, upstream) = (relay.clone(), client.clone(), upstream.clone());
                std::thread::spawn(move || {
                    upstream.listen(&|m: &[u8]| {
                        to_client(&relay, &client, m);
                    })
                });
            }
        };
        // A request on a thread of its own (its answer may take minutes); a notification or an
        // answer of the client's is acknowledged at once, and sent before the next message is
        // read, so that the server gets them in the client's order (`initialized` before the
        // requests that follow it, a cancellation after its request).
        match is_request {
            true => drop(std::thread::spawn(post)),
            false => post(),
        }
        true
    });
    end();
    ExitCode::SUCCESS
}

/// The id (its JSON text) of a request; `None` for a notification or an answer.
pub(super) fn request_id(line: &[u8]) -> Option<String> {
    let message: serde_json::Value = serde_json::from_slice(line).ok()?;
    message.get("method")?;
    message.get("id").map(serde_json::Value::to_string)
}

/// Hands one message of the server to the client (changed or dropped as the relay says); false
/// once the client is gone.
fn to_client(relay: &Relay, client: &ToClient, line: &[u8]) -> bool {
    match relay.server_line(line) {
        Action::Forward => client.send(line),
        Action::Replace(changed) | Action::Answer(changed) => client.send(&changed),
        Action::Drop => {
            let shown = String::from_utf8_lossy(&line[..line.len().min(200)]).trim_end().to_owned();
            eprintln!("mcpeye proxy: the server wrote a line to stdout that is not JSON-RPC; dropped: {shown}");
            true
        }
    }
}

/// The proxy's stdout: whole messages, one writer at a time; once a write fails the client is
/// gone and the rest is dropped.
#[derive(Default)]
struct ToClient {
    out: Mutex<()>,
    gone: AtomicBool,
}

impl ToClient {
    /// Writes one message as one line (an HTTP server's messages come without the newline);
    /// false once the client is gone.
    fn send(&self, line: &[u8]) -> bool {
        if self.gone.load(Ordering::Relaxed) {
            return false;
        }
        let _one_at_a_time = self.out.lock().unwrap_or_else(|e| e.into_inner());
        let mut out = std::io::stdout().lock();
        let newline: &[u8] = if line.ends_with(b"\n") { b"" } else { b"\n" };
        let sent = out.write_all(line).and_then(|()| out.write_all(newline)).and_then(|()| out.flush()).is_ok();
        if !sent {
            self.gone.store(true, Ordering::Relaxed);
        }
        sent
    }
}

/// Reads the client's messages and forwards them to the server until the client closes stdin;
/// the server's stdin is then closed (MCP's first step in shutting a stdio server down).
fn pump_client(relay: &Relay, client: &ToClient, mut to_server: ChildStdin, bare: bool) {
    client_lines(|line| {
        if bare {
            return write_line(&mut to_server, line).is_ok();
        }
        let written = match relay.client_line(line) {
            Action::Forward => write_line(&mut to_server, line),
            Action::Replace(changed) => write_line(&mut to_server, &changed),
            Action::Answer(answer) => {
                client.send(&answer);
                Ok(())
            }
            Action::Drop => Ok(()),
        };
        // The server is gone: what the client sends now is answered when the relay ends.
        written.is_ok()
    });
}

/// Calls `each` with the client's messages on stdin, one a line (blank lines skipped), until the
/// client closes stdin or `each` returns false.
fn client_lines(mut each: impl FnMut(&[u8]) -> bool) {
    let mut input = std::io::stdin().lock();
    let mut line = Vec::new();
    loop {
        line.clear();
        match input.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        if !line.iter().all(u8::is_ascii_whitespace) && !each(&line) {
            return;
        }
    }
}

fn write_line(to: &mut ChildStdin, line: &[u8]) -> std::io::Result<()> {
    to.write_all(line)?;
    if !line.ends_with(b"\n") {
        to.write_all(b"\n")?;
    }
    to.flush()
}

/// Reads the server's messages and forwards them to the client until the server closes stdout.
fn pump_server(relay: &Relay, client: &ToClient, from_server: impl Read, ended: &mpsc::Sender<Ended>, bare: bool) {
    let mut input = BufReader::with_capacity(64 * 1024, from_server);
    let mut line = Vec::new();
    let mut told = false;
    loop {
        line.clear();
        match input.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let sent = if bare { client.send(&line) } else { to_client(relay, client, &line) };
        // Still read (and recorded) after the client left: a server blocked on a full pipe
        // would never exit.
        if !sent && !told {
            told = true;
            let _ = ended.send(Ended::ClientGone);
        }
    }
}
