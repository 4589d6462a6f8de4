//! Shared by the interop tests: the official MCP clients (Python `mcp`, TypeScript
//! `@modelcontextprotocol/sdk`) installed under `target/` by the tests themselves, the example
//! servers built and run as child processes, the client drivers of `tests/interop/`, and the
//! reading of what reached a loopback ingest.
//!
//! Children are bounded in time (a timeout kills them and fails the test with their output) and
//! quiet: their output is kept for failure messages only. Without `python3` or `node` on the
//! PATH the tests that need them say so on stderr and return, except under `CI=true`, where a
//! missing tool fails the test with what to install (a CI run that silently tested nothing
//! would look green).
#![allow(dead_code)] // each test crate uses part of it

use mcpeye::testing::IngestReceiver;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The Python client these tests were written against.
pub const MCP_PYPI: &str = "mcp==2.3.0";
/// The TypeScript SDK these tests were written against.
pub const TS_SDK_NPM: &str = "@modelcontextprotocol/sdk@1.32";
/// The protocol version of the era without the `initialize` handshake.
pub const MODERN: &str = "2026-07-28";
/// The project id and secret the example servers are started with.
pub const PROJECT_ID: &str = "interop";
pub const SECRET: &str = "interop-secret";

/// How long one driver run (install excluded) may take before it is killed.
pub const DRIVER_TIMEOUT: Duration = Duration::from_secs(120);

/// Returns `$e`'s value, or returns from the test when it is `None` (the tool it needs is absent).
#[macro_export]
macro_rules! or_skip {
    ($e:expr) => {
        match $e {
            Some(v) => v,
            None => return,
        }
    };
}

/// Whether the tests run in CI: `CI` set, as CI services set it (`CI=true`), and not `false`/`0`.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0")
}

/// A tool the test needs is missing: under CI the test fails saying what to install; elsewhere
/// it says why it does nothing, on the real stderr (libtest does not capture it), and the caller
/// returns.
pub fn skip(test: &str, why: &str, install: &str) {
    if in_ci() {
        panic!("{test}: {why}; CI is set, so this is a failure, not a skip: install {install}");
    }
    let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {why} (install {install} to run it)");
}

fn target_tmp() -> &'static Path {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
}

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A driver script of `tests/interop/`.
pub fn script(name: &str) -> PathBuf {
    repo().join("tests").join("interop").join(name)
}

fn found(program: &str) -> bool {
    Command::new(program).arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok()
}

fn run_ok(cmd: &mut Command, timeout: Duration) -> Output {
    let out = run(cmd, None, timeout);
    assert!(out.status.success(), "{cmd:?} failed ({}):\n{}\n{}", out.status, out.stdout, out.stderr);
    out
}

/// Builds `dir` with `make` in a fresh sibling folder, then renames it into place: a half-made
/// folder is never taken for a finished one, also when several test processes race.
fn install_atomically(dir: &Path, make: impl FnOnce(&Path)) {
    let staging = dir.with_extension(format!("tmp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    make(&staging);
    let _ = std::fs::remove_dir_all(dir);
    if std::fs::rename(&staging, dir).is_err() {
        let _ = std::fs::remove_dir_all(&staging); // another process installed it first
    }
}

/// A Python with the official MCP client, in a venv under `target/`; `None` (and a note on
/// stderr) without `python3`, a failure under CI.
pub fn python_with_mcp(test: &str) -> Option<PathBuf> {
    static LOCK: Mutex<()> = Mutex::new(());
    let host = std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_owned());
    if !found(&host) {
        skip(
            test,
            &format!("{host} not found (set PYTHON to use another interpreter)"),
            "Python 3 with venv and pip (Debian: apt-get install python3 python3-venv)",
        );
        return None;
    }
    let _one_at_a_time = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let venv = target_tmp().join("interop-venv");
    let python = venv.join("bin").join("python");
    let want = MCP_PYPI.split("==").nth(1).unwrap();
    let check = format!("import importlib.metadata as m, mcp; assert m.version('mcp') == '{want}'");
    let ready = |python: &Path| Command::new(python).args(["-c", &check]).output().is_ok_and(|o| o.status.success());
    if !ready(&python) {
        install_atomically(&venv, |dir| {
            run_ok(Command::new(&host).args(["-m", "venv"]).arg(dir), Duration::from_secs(120));
            run_ok(
                Command::new(dir.join("bin").join("python")).args([
                    "-m",
                    "pip",
                    "install",
                    "--quiet",
                    "--disable-pip-version-check",
                    MCP_PYPI,
                ]),
                Duration::from_secs(600),
            );
        });
        assert!(ready(&python), "{MCP_PYPI} is not importable from {}", python.display());
    }
    Some(python)
}

/// Whether `node` and `npm` are on the PATH; if not, `test` is skipped with what to install (a
/// failure under CI).
fn node_and_npm(test: &str) -> bool {
    ["node", "npm"].into_iter().all(|tool| {
        let there = found(tool);
        if !there {
            skip(
                test,
                &format!("{tool} not found"),
                "Node.js 18 or later with npm (Debian: apt-get install nodejs npm)",
            );
        }
        there
    })
}

/// `node` and a folder under `target/` where the TypeScript SDK is installed and
/// `ts_driver.mjs` sits next to it; `None` (and a note on stderr) without `node` or `npm`, a
/// failure under CI.
pub fn node_with_sdk(test: &str) -> Option<(PathBuf, PathBuf)> {
    static LOCK: Mutex<()> = Mutex::new(());
    if !node_and_npm(test) {
        return None;
    }
    let _one_at_a_time = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let dir = target_tmp().join("interop-node");
    let want = TS_SDK_NPM.rsplit('@').next().unwrap();
    let installed = dir.join("node_modules/@modelcontextprotocol/sdk/package.json");
    let ready = || {
        std::fs::read_to_string(&installed)
            .ok()
            .and_then(|s| serde_json::from_str::<Value>(&s).ok())
            .and_then(|p| p["version"].as_str().map(|v| v == want || v.starts_with(&format!("{want}."))))
            .unwrap_or(false)
    };
    if !ready() {
        install_atomically(&dir, |staging| {
            std::fs::create_dir_all(staging).unwrap();
            std::fs::write(staging.join("package.json"), r#"{"name":"mcpeye-interop","private":true,"type":"module"}"#)
                .unwrap();
            run_ok(
                Command::new("npm")
                    .args(["install", "--no-audit", "--no-fund", "--silent", TS_SDK_NPM])
                    .current_dir(staging),
                Duration::from_secs(600),
            );
        });
        assert!(ready(), "{TS_SDK_NPM} did not install into {}", dir.display());
    }
    // Next to its node_modules, so that its imports resolve (ESM ignores NODE_PATH).
    std::fs::copy(script("ts_driver.mjs"), dir.join("ts_driver.mjs")).expect("copy ts_driver.mjs");
    Some((PathBuf::from("node"), dir.join("ts_driver.mjs")))
}

/// `target/<profile>/examples/<name>`, an example of `examples/servers` (not a default member, so
/// `cargo test` does not build it), built here once per test process so that it is never stale.
pub fn example(name: &str) -> PathBuf {
    built(&["-p", "mcpeye-servers", "--example", name], &Path::new("examples").join(name))
}

/// `target/<profile>/mcpeye`, the command-line tool of `mcpeye-cli`, built here once per test
/// process (as [`example`]: the root package's tests do not build another package's binary).
pub fn mcpeye_cli() -> PathBuf {
    built(&["-p", "mcpeye-cli", "--bin", "mcpeye"], Path::new("mcpeye"))
}

/// Builds with `cargo build --quiet ARGS` into this test's target directory and profile, once
/// per test process and `ARGS`; the path of what was built under `target/<profile>/`.
fn built(args: &[&str], output: &Path) -> PathBuf {
    static BUILT: Mutex<Option<HashMap<String, Result<(), String>>>> = Mutex::new(None);
    let exe = std::env::current_exe().expect("test binary path");
    let profile_dir = exe.parent().and_then(Path::parent).expect("target/<profile>");
    let path = profile_dir.join(output);
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    let outcome = built.get_or_insert_with(HashMap::new).entry(args.join(" ")).or_insert_with(|| {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
        let mut cmd = Command::new(cargo);
        cmd.args(["build", "--quiet"]).args(args).current_dir(repo());
        // Not the variables cargo sets for this test process: build scripts that track them
        // (ring tracks CARGO_PKG_NAME, …) would rebuild here, and again in the next `cargo test`.
        for (key, _) in std::env::vars_os() {
            let key = key.to_string_lossy();
            let set_for_tests = [
                "CARGO_PKG_",
                "CARGO_BIN_",
                "CARGO_MANIFEST_",
                "CARGO_CRATE_",
                "CARGO_PRIMARY_",
                "CARGO_TARGET_TMPDIR",
                "CARGO_RUSTC_CURRENT_DIR",
                "OUT_DIR",
            ];
            if set_for_tests.iter().any(|p| key.starts_with(p)) {
                cmd.env_remove(&*key);
            }
        }
        cmd.arg("--target-dir").arg(profile_dir.parent().unwrap());
        if profile_dir.file_name().is_some_and(|p| p == "release") {
            cmd.arg("--release");
        }
        let out = run(&mut cmd, None, Duration::from_secs(900));
        if out.status.success() {
            Ok(())
        } else {
            Err(out.stderr)
        }
    });
    if let Err(stderr) = outcome {
        panic!("could not build {}:\n{stderr}", args.join(" "));
    }
    assert!(path.exists(), "{} was not built", path.display());
    path
}

/// The `MCPEYE_*` environment of an example server reporting to `ingest`.
pub fn server_env(ingest: &IngestReceiver) -> Vec<(&'static str, String)> {
    vec![
        ("MCPEYE_PROJECT_ID", PROJECT_ID.to_owned()),
        ("MCPEYE_INGEST_URL", ingest.url()),
        ("MCPEYE_INGEST_SECRET", SECRET.to_owned()),
    ]
}

/// What a finished child printed.
pub struct Output {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

fn drain(mut from: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = from.read_to_end(&mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

/// Runs `cmd` with `input` on its stdin; kills it and fails after `timeout`.
pub fn run(cmd: &mut Command, input: Option<&[u8]>, timeout: Duration) -> Output {
    cmd.stdin(if input.is_some() { Stdio::piped() } else { Stdio::null() });
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap_or_else(|e| panic!("could not start {cmd:?}: {e}"));
    if let Some(input) = input {
        let mut stdin = child.stdin.take().unwrap();
        let input = input.to_vec();
        std::thread::spawn(move || {
            let _ = stdin.write_all(&input);
        });
    }
    let stdout = drain(child.stdout.take().unwrap());
    let stderr = drain(child.stderr.take().unwrap());
    let status = wait_for_exit(&mut child, timeout);
    let (stdout, stderr) = (stdout.join().unwrap(), stderr.join().unwrap());
    let Some(status) = status else {
        panic!("{cmd:?} did not finish within {timeout:?}; killed.\nstdout:\n{stdout}\nstderr:\n{stderr}");
    };
    Output { status, stdout, stderr }
}

/// Waits for `child` to exit; after `timeout`, kills it and returns `None`.
pub fn wait_for_exit(child: &mut Child, timeout: Duration) -> Option<ExitStatus> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(status) = child.try_wait().expect("wait for a child") {
            return Some(status);
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Sends SIGTERM to a child of ours.
pub fn sigterm(child: &Child) {
    let status = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().expect("run kill");
    assert!(status.success(), "kill -TERM {} failed", child.id());
}

/// A client driver (`py_driver.py` or `ts_driver.mjs`) run on one job; the report it prints.
pub fn drive(program: &Path, script: &Path, job: &Value, env: &[(&str, String)]) -> Value {
    let mut cmd = Command::new(program);
    cmd.arg(script).envs(env.iter().map(|(k, v)| (k, v)));
    let out = run(&mut cmd, Some(job.to_string().as_bytes()), DRIVER_TIMEOUT);
    assert!(
        out.status.success(),
        "{} failed ({}):\n{}\nstdout:\n{}",
        script.file_name().unwrap().to_string_lossy(),
        out.status,
        out.stderr.trim_end(),
        out.stdout
    );
    serde_json::from_str(&out.stdout)
        .unwrap_or_else(|e| panic!("the driver's report is not JSON ({e}):\n{}", out.stdout))
}

/// `examples/http_server` running on a free port, reporting to an ingest.
pub struct HttpServer {
    child: Child,
    /// `http://127.0.0.1:PORT/mcp`, as the server printed it.
    pub url: String,
    stderr: Arc<Mutex<String>>,
}

impl HttpServer {
    /// Starts the example with `--port 0` and `args`, and waits for its `listening on` line.
    pub fn start(ingest: &IngestReceiver, args: &[&str]) -> HttpServer {
        HttpServer::start_example("http_server", ingest, args)
    }

    /// Like [`start`](Self::start), for another example that prints the same line.
    pub fn start_example(name: &str, ingest: &IngestReceiver, args: &[&str]) -> HttpServer {
        HttpServer::start_example_with(name, ingest, args, &[])
    }

    /// Like [`start_example`](Self::start_example), with `env` added to the server's environment.
    pub fn start_example_with(name: &str, ingest: &IngestReceiver, args: &[&str], env: &[(&str, &str)]) -> HttpServer {
        let exe = example(name);
        let mut child = Command::new(&exe)
            .args(["--port", "0"])
            .args(args)
            .envs(server_env(ingest))
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("could not start {}: {e}", exe.display()));
        let stderr = Arc::new(Mutex::new(String::new()));
        let (tx, rx) = mpsc::channel();
        let lines = BufReader::new(child.stderr.take().unwrap());
        let log = stderr.clone();
        std::thread::spawn(move || {
            for line in lines.lines().map_while(Result::ok) {
                if let Some(url) = line.split("listening on ").nth(1) {
                    let _ = tx.send(url.trim().to_owned());
                }
                let mut log = log.lock().unwrap_or_else(|e| e.into_inner());
                log.push_str(&line);
                log.push('\n');
            }
        });
        let mut server = HttpServer { child, url: String::new(), stderr };
        match rx.recv_timeout(Duration::from_secs(30)) {
            Ok(url) => server.url = url,
            Err(_) => panic!(
                "{name} {args:?} printed no `listening on http://127.0.0.1:PORT/mcp` line within 30 s:\n{}",
                server.stderr()
            ),
        }
        assert!(
            server.url.starts_with("http://127.0.0.1:") && server.url.ends_with("/mcp"),
            "unexpected address: {}",
            server.url
        );
        server
    }

    /// What the server wrote on stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// What the server writes on stderr, kept after [`terminate`](Self::terminate) too.
    pub fn log(&self) -> Arc<Mutex<String>> {
        self.stderr.clone()
    }

    /// SIGTERM, then waits (up to 10 s) for the exit, which delivers what it captured.
    pub fn terminate(mut self) -> ExitStatus {
        sigterm(&self.child);
        match wait_for_exit(&mut self.child, Duration::from_secs(10)) {
            Some(status) => status,
            None => panic!("http_server did not exit within 10 s of SIGTERM:\n{}", self.stderr()),
        }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// One POST the ingest received.
#[derive(Debug)]
pub struct Post {
    /// `identity.client`, when present.
    pub client: Option<String>,
    pub events: Vec<Value>,
}

/// Every POST the ingest received so far (accepted or not), checked for the project and secret.
pub fn posts(ingest: &IngestReceiver) -> Vec<Post> {
    ingest
        .requests()
        .iter()
        .map(|r| {
            let body = r.json().unwrap_or_else(|| panic!("a POST without a JSON body: {r:?}"));
            assert_eq!(r.header("x-mcpeye-secret"), Some(SECRET), "secret header of {body}");
            assert_eq!(body["projectId"], PROJECT_ID, "projectId of {body}");
            Post {
                client: body["identity"]["client"].as_str().map(str::to_owned),
                events: body["events"].as_array().cloned().unwrap_or_default(),
            }
        })
        .collect()
}

/// One tool call of a driver job, with the text that marks its event at the ingest.
pub struct Call {
    pub tool: &'static str,
    pub arguments: Value,
    /// Appears in exactly one event: this call's.
    pub mark: String,
}

impl Call {
    pub fn job(&self) -> Value {
        json!({"tool": self.tool, "arguments": self.arguments})
    }
}

/// The interop plan of one client: both tools with an intent (one answered with a tool error),
/// then the reserved tool. Every call carries `tag` (the client's name) in a unique mark.
pub fn interop_calls(tag: &str) -> Vec<Call> {
    let mark = |n: &str| format!("[{tag} {n}]");
    vec![
        Call {
            tool: "get_forecast",
            arguments: json!({"city": "Lisbon", "days": 2, "mcpeyeIntent":
                format!("{} The user is planning a weekend in Lisbon and wants to know whether to pack for rain.", mark("a"))}),
            mark: mark("a"),
        },
        Call {
            tool: "convert_temperature",
            arguments: json!({"value": 21.5, "unit": "C", "mcpeyeIntent":
                format!("{} The user is adapting a recipe for a reader who uses Fahrenheit.", mark("b"))}),
            mark: mark("b"),
        },
        Call {
            tool: "convert_temperature",
            arguments: json!({"value": 20, "unit": "K", "mcpeyeIntent":
                format!("{} The user wanted kelvin, which the tool does not offer.", mark("c"))}),
            mark: mark("c"),
        },
        Call {
            tool: "mcpeye_request_capability",
            arguments: json!({"capability": "get the forecast as an hourly chart",
                "context": format!("{} planning outdoor photos", mark("d"))}),
            mark: mark("d"),
        },
    ]
}

/// A driver job for one client running `calls` in order.
pub fn single_client_job(server: Value, mode: &str, name: &str, version: &str, calls: &[Call]) -> Value {
    json!({
        "server": server,
        "mode": mode,
        "concurrency": 1,
        "clients": [{"name": name, "version": version, "calls": calls.iter().map(Call::job).collect::<Vec<_>>()}],
    })
}

/// Which protocol era the client must have negotiated.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Era {
    /// `2026-07-28`: no handshake, `clientInfo` in each request's `_meta`.
    Modern,
    /// A version of the `initialize` handshake (2025-11-25 and before).
    Handshake,
}

/// Checks what one client saw of an [`interop_calls`] run.
pub fn assert_client_saw(report: &Value, era: Era) {
    let version = report["protocolVersion"].as_str().unwrap_or_default();
    match era {
        Era::Modern => assert_eq!(version, MODERN, "negotiated protocol version; report: {report}"),
        Era::Handshake => assert!(
            !version.is_empty() && version < MODERN,
            "a handshake-era version was expected, got {version:?}; report: {report}"
        ),
    }
    let tools = &report["tools"];
    let props = |t: &str| -> Vec<String> {
        serde_json::from_value(tools[t].clone()).unwrap_or_else(|_| panic!("{t} is not listed: {tools}"))
    };
    for (tool, want) in [("get_forecast", ["city", "days"]), ("convert_temperature", ["value", "unit"])] {
        let got = props(tool);
        for p in want.iter().chain(&["mcpeyeIntent"]) {
            assert!(got.iter().any(|g| g == p), "{tool} lists no `{p}` property: {got:?}");
        }
    }
    let reserved = props("mcpeye_request_capability");
    assert!(reserved.iter().any(|p| p == "capability"), "the reserved tool's properties: {reserved:?}");

    let results = report["results"].as_array().expect("results");
    let text = |i: usize| results[i]["text"].as_str().unwrap_or_default();
    assert_eq!(results.len(), 4, "{report}");
    assert_eq!(
        (results[0]["isError"].as_bool(), text(0).starts_with("Forecast for Lisbon")),
        (Some(false), true),
        "{report}"
    );
    assert_eq!((results[1]["isError"].as_bool(), text(1)), (Some(false), "70.7°F"), "{report}");
    assert_eq!((results[2]["isError"].as_bool(), text(2)), (Some(true), "unit must be \"C\" or \"F\""), "{report}");
    assert_eq!(results[3]["isError"].as_bool(), Some(false), "{report}");
    assert!(text(3).starts_with("Thanks. This capability request has been recorded"), "{report}");
}

/// The event of each call, found by its mark: exactly one per call, and no other events.
pub fn events_by_call<'a>(events: &'a [Value], calls: &[Call]) -> Vec<&'a Value> {
    let found: Vec<&Value> = calls
        .iter()
        .map(|c| {
            let of_call: Vec<&Value> = events.iter().filter(|e| e.to_string().contains(&c.mark)).collect();
            assert_eq!(of_call.len(), 1, "events of {} {}: {of_call:#?}", c.tool, c.mark);
            assert_eq!(of_call[0]["toolName"], c.tool, "{:#}", of_call[0]);
            of_call[0]
        })
        .collect();
    assert_eq!(events.len(), calls.len(), "events at the ingest: {events:#?}");
    found
}

/// Checks the ingest after an [`interop_calls`] run of one client: every call arrived exactly
/// once, with its intent, under `client`: the client's own `name/version`, or `None` where the
/// server cannot know it (a handshake-era client of a stateless server names itself only in
/// `initialize`, a request of its own), and then no other client's name either.
pub fn assert_ingest_got(ingest: &IngestReceiver, client: Option<&str>, calls: &[Call]) {
    let posts = posts(ingest);
    for p in &posts {
        assert_eq!(
            p.client.as_deref(),
            client,
            "identity.client of a POST ({} events; expected {})",
            p.events.len(),
            client.map_or("no client: the server cannot know it".to_owned(), |c| format!("the client's own {c}"))
        );
    }
    let events: Vec<Value> = posts.into_iter().flat_map(|p| p.events).collect();
    let found = events_by_call(&events, calls);
    for (call, event) in calls.iter().zip(found) {
        if let Some(intent) = call.arguments.get("mcpeyeIntent") {
            assert_eq!(&event["intent"], intent, "intent of {event:#}");
            assert!(
                event["arguments"].get("mcpeyeIntent").is_none(),
                "the intent stays out of the arguments: {event:#}"
            );
        }
        if let Some(capability) = call.arguments.get("capability") {
            assert_eq!(&event["arguments"]["capability"], capability, "the capability request: {event:#}");
        }
    }
    let failed = events.iter().find(|e| e.to_string().contains(&calls[2].mark)).unwrap();
    assert_eq!(failed["errorMessage"], "unit must be \"C\" or \"F\"", "{failed:#}");
}

/// The npm package of the official TypeScript "everything" server the proxy's tests run.
pub const EVERYTHING_NPM: &str = "@modelcontextprotocol/server-everything@2026.8.31";

/// `python3` itself (the standard library only), for the servers of `tests/interop/` written
/// against raw JSON-RPC; `None` (and a note on stderr) without it, a failure under CI.
pub fn python3(test: &str) -> Option<PathBuf> {
    let host = std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_owned());
    if !found(&host) {
        skip(test, &format!("{host} not found (set PYTHON to use another interpreter)"), "Python 3");
        return None;
    }
    Some(PathBuf::from(host))
}

/// `node` and the official "everything" server's entry point (`dist/index.js`), installed under
/// `target/` from npm; `None` (and a note on stderr) without `node` or `npm`, a failure under CI.
pub fn everything_server(test: &str) -> Option<(PathBuf, PathBuf)> {
    static LOCK: Mutex<()> = Mutex::new(());
    if !node_and_npm(test) {
        return None;
    }
    let _one_at_a_time = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let dir = target_tmp().join("proxy-everything");
    let entry = dir.join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    if !entry.exists() {
        install_atomically(&dir, |staging| {
            std::fs::create_dir_all(staging).unwrap();
            std::fs::write(staging.join("package.json"), r#"{"name":"mcpeye-proxy-interop","private":true}"#).unwrap();
            run_ok(
                Command::new("npm")
                    .args(["install", "--no-audit", "--no-fund", "--silent", EVERYTHING_NPM])
                    .current_dir(staging),
                Duration::from_secs(600),
            );
        });
        assert!(entry.exists(), "{EVERYTHING_NPM} did not install into {}", dir.display());
    }
    Some((PathBuf::from("node"), entry))
}
