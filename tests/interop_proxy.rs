//! `mcpeye proxy` with what nobody here wrote: the official TypeScript "everything" server (npm
//! `@modelcontextprotocol/server-everything`) and a server written with the official Python SDK
//! (`mcp` 2.3's `MCPServer`, `tests/interop/py_mcpserver.py`), each driven through the proxy by
//! the official Python client (both protocol eras where the server speaks them) and the
//! TypeScript client: the tools carry `mcpeyeIntent`, calls work, resources, prompts and
//! sampling pass, and every call reaches the ingest once, with its intent and the client's name.
//!
//! The clients and servers are installed under `target/` on first run; without `python3`, `node`
//! or `npm` the tests say so and pass, except under `CI=true`, where they fail.

mod common;

use common::interop::*;
use mcpeye::testing::IngestReceiver;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// `mcpeye proxy --event-log DIR -- SERVER...`, as a driver job's stdio server.
fn proxied(test: &str, server: &[&Path]) -> (Value, PathBuf) {
    let events = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("interop-proxy-{test}"));
    let _ = std::fs::remove_dir_all(&events);
    let mut command: Vec<String> = vec![mcpeye_cli().display().to_string(), "proxy".into(), "--event-log".into()];
    command.push(events.display().to_string());
    command.push("--".into());
    command.extend(server.iter().map(|p| p.display().to_string()));
    (json!({"stdio": command}), events)
}

/// A call of `tool` whose intent carries `mark`.
fn call_with_intent(tool: &str, mut arguments: Value, mark: &str) -> Value {
    arguments["mcpeyeIntent"] = json!(format!("[{mark}] the user needs {tool}"));
    json!({"tool": tool, "arguments": arguments})
}

/// Every event at the ingest, each POST checked to be under `client`.
fn events_of(ingest: &IngestReceiver, client: &str) -> Vec<Value> {
    let posts = posts(ingest);
    assert!(!posts.is_empty(), "nothing reached the ingest");
    for p in &posts {
        assert_eq!(p.client.as_deref(), Some(client), "identity.client of a POST");
    }
    posts.into_iter().flat_map(|p| p.events).collect()
}

/// The event whose intent holds `mark`: exactly one, with the intent and without it in its arguments.
fn event_marked<'a>(events: &'a [Value], mark: &str) -> &'a Value {
    let found: Vec<&Value> =
        events.iter().filter(|e| e["intent"].as_str().is_some_and(|i| i.contains(&format!("[{mark}]")))).collect();
    assert_eq!(found.len(), 1, "events marked {mark}: {events:#?}");
    assert!(found[0]["arguments"].get("mcpeyeIntent").is_none(), "{:#}", found[0]);
    found[0]
}

fn listed_with_intent(report: &Value, tools: &[&str]) {
    for tool in tools {
        let props = report["tools"][tool].as_array().unwrap_or_else(|| panic!("{tool} not listed: {report}"));
        assert!(props.iter().any(|p| p == "mcpeyeIntent"), "{tool}: {props:?}");
    }
    assert!(report["tools"]["mcpeye_request_capability"].is_array(), "the reserved tool is listed: {report}");
}

#[test]
fn the_everything_server_through_the_proxy_with_the_python_client() {
    let test = "the_everything_server_through_the_proxy_with_the_python_client";
    let python = or_skip!(python_with_mcp(test));
    let (node, everything) = or_skip!(everything_server(test));
    let ingest = IngestReceiver::start();
    let (server, _) = proxied("everything-py", &[&node, &everything, Path::new("stdio")]);
    let job = json!({
        "server": server, "mode": "auto", "concurrency": 1,
        "answers": {"sampling": "a sampled answer"},
        "clients": [{"name": "py-client", "version": "1.0.0",
            "calls": [
                call_with_intent("echo", json!({"message": "hello"}), "ev-a"),
                call_with_intent("get-sum", json!({"a": 2, "b": 3}), "ev-b"),
                call_with_intent("trigger-sampling-request", json!({"prompt": "say hi"}), "ev-c"),
                {"tool": "mcpeye_request_capability", "arguments": {"capability": "multiply two numbers"}},
            ],
            "reads": ["demo://resource/dynamic/text/1"],
            "prompts": ["simple-prompt"]}],
    });
    let report = &drive(&python, &script("py_driver.py"), &job, &server_env(&ingest))["clients"][0];
    listed_with_intent(report, &["echo", "get-sum", "trigger-sampling-request"]);
    let results = &report["results"];
    assert_eq!(results[0], json!({"isError": false, "text": "Echo: hello"}), "{report}");
    assert!(results[1]["text"].as_str().unwrap_or_default().contains('5'), "{report}");
    assert_eq!(results[2]["isError"], false, "{report}");
    assert_eq!(report["asked"]["sampling"], 1, "the server's sampling request reached the client: {report}");
    assert!(results[3]["text"].as_str().unwrap_or_default().starts_with("Thanks."), "{report}");
    assert!(report["reads"][0].is_string(), "the resource passed: {report}");
    assert!(report["prompts"][0].is_string(), "the prompt passed: {report}");

    let events = events_of(&ingest, "py-client/1.0.0");
    assert_eq!(events.len(), 4, "{events:#?}");
    assert_eq!(event_marked(&events, "ev-a")["arguments"], json!({"message": "hello"}));
    assert_eq!(event_marked(&events, "ev-b")["toolName"], "get-sum");
    assert_eq!(event_marked(&events, "ev-c")["isError"], false);
    assert!(events.iter().any(|e| e["arguments"]["capability"] == "multiply two numbers"), "{events:#?}");
}

fn python_sdk_server(test: &str, mode: &str, era: Era) {
    let python = or_skip!(python_with_mcp(test));
    let ingest = IngestReceiver::start();
    let (server, log) = proxied(&format!("mcpserver-{mode}"), &[&python, &script("py_mcpserver.py")]);
    let job = json!({
        "server": server, "mode": mode, "concurrency": 1,
        "clients": [{"name": "py-client", "version": "2.0.0",
            "calls": [
                call_with_intent("lookup_order", json!({"order_id": "A-1"}), "py-a"),
                call_with_intent("cancel_order", json!({"order_id": "A-1"}), "py-b"),
            ],
            "reads": ["orders://policy"],
            "prompts": ["summarize"]}],
    });
    let report = &drive(&python, &script("py_driver.py"), &job, &server_env(&ingest))["clients"][0];
    let version = report["protocolVersion"].as_str().unwrap_or_default();
    match era {
        Era::Modern => assert_eq!(version, MODERN, "{report}"),
        Era::Handshake => assert!(!version.is_empty() && version < MODERN, "{report}"),
    }
    listed_with_intent(report, &["lookup_order", "cancel_order"]);
    // The tool echoes the arguments the SDK handed it: no `mcpeyeIntent` among them.
    assert_eq!(report["results"][0]["text"], r#"{"include_items": false, "order_id": "A-1"}"#, "{report}");
    assert_eq!(report["results"][1]["isError"], true, "{report}");
    assert_eq!(report["reads"][0], "Returns are accepted within 30 days.");
    assert_eq!(report["prompts"][0], "Summarize the latest order.");

    let events = events_of(&ingest, "py-client/2.0.0");
    assert_eq!(events.len(), 2, "{events:#?}");
    assert_eq!(event_marked(&events, "py-a")["arguments"], json!({"order_id": "A-1"}));
    let failed = event_marked(&events, "py-b");
    assert!(failed["errorMessage"].as_str().unwrap_or_default().contains("has shipped already"), "{failed:#}");
    let lines = std::fs::read_dir(&log).expect("the event log").count();
    assert!(lines > 0, "an event log file in {}", log.display());
}

#[test]
fn a_python_sdk_server_through_the_proxy_in_the_2026_era() {
    python_sdk_server("a_python_sdk_server_through_the_proxy_in_the_2026_era", "auto", Era::Modern);
}

#[test]
fn a_python_sdk_server_through_the_proxy_with_the_handshake() {
    python_sdk_server("a_python_sdk_server_through_the_proxy_with_the_handshake", "legacy", Era::Handshake);
}

#[test]
fn the_everything_server_through_the_proxy_with_the_typescript_client() {
    let test = "the_everything_server_through_the_proxy_with_the_typescript_client";
    let (node, driver) = or_skip!(node_with_sdk(test));
    let (node_server, everything) = or_skip!(everything_server(test));
    let ingest = IngestReceiver::start();
    let (server, _) = proxied("everything-ts", &[&node_server, &everything, Path::new("stdio")]);
    let job = json!({
        "server": server, "mode": "legacy", "concurrency": 1,
        "clients": [{"name": "ts-client", "version": "3.0.0",
            "calls": [
                call_with_intent("echo", json!({"message": "from ts"}), "ts-a"),
                call_with_intent("get-sum", json!({"a": 4, "b": 5}), "ts-b"),
                {"tool": "mcpeye_request_capability", "arguments": {"capability": "divide"}},
            ]}],
    });
    let report = &drive(&node, &driver, &job, &server_env(&ingest))["clients"][0];
    listed_with_intent(report, &["echo", "get-sum"]);
    assert_eq!(report["results"][0]["text"], "Echo: from ts", "{report}");
    let events = events_of(&ingest, "ts-client/3.0.0");
    assert_eq!(events.len(), 3, "{events:#?}");
    assert_eq!(event_marked(&events, "ts-a")["arguments"], json!({"message": "from ts"}));
    event_marked(&events, "ts-b");
}

/// The everything server over Streamable HTTP (`node dist/index.js streamableHttp`) on a free
/// port; killed when dropped.
struct HttpEverything(std::process::Child);

impl HttpEverything {
    fn start(node: &Path, everything: &Path) -> (HttpEverything, String) {
        use std::io::BufRead;
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let mut child = std::process::Command::new(node)
            .arg(everything)
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("start the everything server");
        let mut lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
        let server = HttpEverything(child);
        let listening = lines.by_ref().map_while(Result::ok).any(|l| l.contains("listening on port"));
        assert!(listening, "the everything server did not say it listens");
        // Its later lines are drained, so that it never blocks on a full pipe.
        std::thread::spawn(move || lines.for_each(drop));
        (server, format!("http://127.0.0.1:{port}/mcp"))
    }
}

impl Drop for HttpEverything {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn the_everything_server_over_http_through_the_proxy_with_the_python_client() {
    let test = "the_everything_server_over_http_through_the_proxy_with_the_python_client";
    let python = or_skip!(python_with_mcp(test));
    let (node, everything) = or_skip!(everything_server(test));
    let (_server, url) = HttpEverything::start(&node, &everything);
    let ingest = IngestReceiver::start();
    let (mut server, _) = proxied("everything-http", &[]);
    // `--upstream URL` in place of the command.
    let stdio = server["stdio"].as_array_mut().unwrap();
    stdio.pop(); // the `--`
    stdio.extend([json!("--upstream"), json!(url), json!("--header"), json!("X-Proxy-Test: yes")]);
    let job = json!({
        "server": server, "mode": "auto", "concurrency": 1,
        "answers": {"sampling": "a sampled answer"},
        "clients": [{"name": "py-http", "version": "1.0.0",
            "calls": [
                call_with_intent("echo", json!({"message": "over http"}), "http-a"),
                call_with_intent("trigger-sampling-request", json!({"prompt": "say hi"}), "http-b"),
                {"tool": "mcpeye_request_capability", "arguments": {"capability": "square roots"}},
            ],
            "reads": ["demo://resource/dynamic/text/2"],
            "prompts": ["simple-prompt"]}],
    });
    let report = &drive(&python, &script("py_driver.py"), &job, &server_env(&ingest))["clients"][0];
    listed_with_intent(report, &["echo", "trigger-sampling-request"]);
    assert_eq!(report["results"][0], json!({"isError": false, "text": "Echo: over http"}), "{report}");
    assert_eq!(report["asked"]["sampling"], 1, "sampling crossed the event stream: {report}");
    assert!(report["reads"][0].is_string() && report["prompts"][0].is_string(), "{report}");
    let events = events_of(&ingest, "py-http/1.0.0");
    assert_eq!(events.len(), 3, "{events:#?}");
    assert_eq!(event_marked(&events, "http-a")["arguments"], json!({"message": "over http"}));
    event_marked(&events, "http-b");
}

/// `mcpeye proxy --listen 127.0.0.1:0 -- SERVER...`, reporting to `ingest`; its URL, from the
/// line it prints.
struct Listening {
    child: std::process::Child,
    url: String,
}

impl Listening {
    fn start(ingest: &IngestReceiver, server: &[&Path]) -> Listening {
        let mut args = vec![std::ffi::OsStr::new("--")];
        args.extend(server.iter().map(|p| p.as_os_str()));
        Listening::start_with(ingest, &args)
    }

    /// `mcpeye proxy --no-event-log --listen 127.0.0.1:0 ARGS...`.
    fn start_with(ingest: &IngestReceiver, args: &[&std::ffi::OsStr]) -> Listening {
        use std::io::BufRead;
        let mut child = std::process::Command::new(mcpeye_cli())
            .args(["proxy", "--no-event-log", "--listen", "127.0.0.1:0"])
            .args(args)
            .envs(server_env(ingest))
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("start mcpeye proxy --listen");
        let mut lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
        let url = lines
            .by_ref()
            .map_while(Result::ok)
            .find_map(|l| l.split("listening on ").nth(1).map(str::to_owned))
            .expect("the proxy says where it listens");
        std::thread::spawn(move || lines.for_each(drop));
        Listening { child, url }
    }

    /// SIGTERM, as a service manager stops it: it stops its servers and delivers the events.
    fn stop(mut self) -> std::process::ExitStatus {
        sigterm(&self.child);
        wait_for_exit(&mut self.child, std::time::Duration::from_secs(60)).expect("the proxy exits on SIGTERM")
    }
}

#[test]
fn the_everything_server_served_over_http_by_the_proxy_to_the_python_client() {
    let test = "the_everything_server_served_over_http_by_the_proxy_to_the_python_client";
    let python = or_skip!(python_with_mcp(test));
    let (node, everything) = or_skip!(everything_server(test));
    let ingest = IngestReceiver::start();
    let proxy = Listening::start(&ingest, &[&node, &everything, Path::new("stdio")]);
    let job = json!({
        "server": {"url": proxy.url}, "mode": "auto", "concurrency": 1,
        "answers": {"sampling": "a sampled answer"},
        "clients": [{"name": "py-remote", "version": "1.0.0",
            "calls": [
                call_with_intent("echo", json!({"message": "served over http"}), "listen-a"),
                call_with_intent("trigger-sampling-request", json!({"prompt": "say hi"}), "listen-b"),
                {"tool": "mcpeye_request_capability", "arguments": {"capability": "cube roots"}},
            ],
            "reads": ["demo://resource/dynamic/text/3"],
            "prompts": ["simple-prompt"]}],
    });
    let report = &drive(&python, &script("py_driver.py"), &job, &[])["clients"][0];
    listed_with_intent(report, &["echo", "trigger-sampling-request"]);
    assert_eq!(report["results"][0], json!({"isError": false, "text": "Echo: served over http"}), "{report}");
    assert_eq!(report["asked"]["sampling"], 1, "{report}");
    assert!(report["reads"][0].is_string() && report["prompts"][0].is_string(), "{report}");
    assert!(proxy.stop().success());
    let events = events_of(&ingest, "py-remote/1.0.0");
    assert_eq!(events.len(), 3, "{events:#?}");
    assert_eq!(event_marked(&events, "listen-a")["arguments"], json!({"message": "served over http"}));
    event_marked(&events, "listen-b");
}

#[test]
fn a_python_sdk_server_served_over_http_by_the_proxy_in_the_2026_era() {
    let test = "a_python_sdk_server_served_over_http_by_the_proxy_in_the_2026_era";
    let python = or_skip!(python_with_mcp(test));
    let ingest = IngestReceiver::start();
    let proxy = Listening::start(&ingest, &[&python, &script("py_mcpserver.py")]);
    let job = json!({
        "server": {"url": proxy.url}, "mode": "auto", "concurrency": 1,
        "clients": [{"name": "py-modern", "version": "1.0.0",
            "calls": [call_with_intent("lookup_order", json!({"order_id": "B-2"}), "modern-a")],
            "reads": ["orders://policy"], "prompts": ["summarize"]}],
    });
    let report = &drive(&python, &script("py_driver.py"), &job, &[])["clients"][0];
    assert_eq!(report["protocolVersion"], MODERN, "{report}");
    assert_eq!(report["results"][0]["text"], r#"{"include_items": false, "order_id": "B-2"}"#, "{report}");
    assert_eq!(report["reads"][0], "Returns are accepted within 30 days.");
    assert!(proxy.stop().success());
    let events = events_of(&ingest, "py-modern/1.0.0");
    assert_eq!(events.len(), 1, "{events:#?}");
    assert_eq!(event_marked(&events, "modern-a")["arguments"], json!({"order_id": "B-2"}));
}

#[test]
fn a_remote_server_put_behind_the_proxy_over_http_on_both_sides() {
    let test = "a_remote_server_put_behind_the_proxy_over_http_on_both_sides";
    let python = or_skip!(python_with_mcp(test));
    let (node, everything) = or_skip!(everything_server(test));
    let (_server, upstream) = HttpEverything::start(&node, &everything);
    let ingest = IngestReceiver::start();
    let proxy = Listening::start_with(&ingest, &["--upstream".as_ref(), upstream.as_ref()]);
    let job = json!({
        "server": {"url": proxy.url}, "mode": "auto", "concurrency": 1,
        "answers": {"sampling": "a sampled answer"},
        "clients": [{"name": "py-both", "version": "1.0.0",
            "calls": [
                call_with_intent("echo", json!({"message": "http both ways"}), "both-a"),
                call_with_intent("trigger-sampling-request", json!({"prompt": "say hi"}), "both-b"),
                {"tool": "mcpeye_request_capability", "arguments": {"capability": "logarithms"}},
            ],
            "reads": ["demo://resource/dynamic/text/4"],
            "prompts": ["simple-prompt"]}],
    });
    let report = &drive(&python, &script("py_driver.py"), &job, &[])["clients"][0];
    listed_with_intent(report, &["echo", "trigger-sampling-request"]);
    assert_eq!(report["results"][0], json!({"isError": false, "text": "Echo: http both ways"}), "{report}");
    assert_eq!(report["asked"]["sampling"], 1, "{report}");
    assert!(report["reads"][0].is_string() && report["prompts"][0].is_string(), "{report}");
    assert!(proxy.stop().success());
    let events = events_of(&ingest, "py-both/1.0.0");
    assert_eq!(events.len(), 3, "{events:#?}");
    assert_eq!(event_marked(&events, "both-a")["arguments"], json!({"message": "http both ways"}));
    event_marked(&events, "both-b");
}
