//! The model and the conversation of each call through the official Python client, over
//! stateless MCP 2026-07-28 HTTP (`examples/http_server` with `MCPEYE_DEMO_ATTRIBUTION=1`): the
//! model the client puts in `_meta` (`call_tool(…, meta=…)`) and the conversation handle the
//! server hands out, echoed back by the client, are each call's (read from the example's
//! `before_send` log, since the wire has no key for them); the tool never sees the handle.
//! Without `python3` the test says so and passes.

mod common;

use common::interop::*;
use mcpeye::testing::IngestReceiver;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

#[test]
fn python_model_in_meta_and_a_conversation_round_trip_over_stateless_http() {
    let python = or_skip!(python_with_mcp("python_model_in_meta_and_a_conversation_round_trip_over_stateless_http"));
    let ingest = IngestReceiver::start();
    // One file per run: the example appends to it.
    let log = std::env::temp_dir().join(format!("mcpeye-attribution-{}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&log);
    let mut child = Command::new(example("http_server"))
        .args(["--port", "0", "--stateless"])
        .envs(server_env(&ingest))
        .env("MCPEYE_DEMO_ATTRIBUTION", "1")
        .env("MCPEYE_DEMO_ATTRIBUTION_LOG", &log)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("http_server starts");
    let (tx, rx) = mpsc::channel();
    let lines = BufReader::new(child.stderr.take().unwrap());
    std::thread::spawn(move || {
        for line in lines.lines().map_while(Result::ok) {
            if let Some(url) = line.split("listening on ").nth(1) {
                let _ = tx.send(url.trim().to_owned());
            }
        }
    });
    let url = rx.recv_timeout(Duration::from_secs(30)).expect("a `listening on` line");

    let model = |m: &str| json!({"io.modelcontextprotocol/aiInvocation": {"model": m}});
    let job = json!({
        "server": {"url": url},
        "mode": "2026-07-28",
        "concurrency": 1,
        "texts": true,
        "clients": [{"name": "py-attribution", "version": "1.0.0", "calls": [
            {"tool": "get_forecast", "arguments": {"city": "Oslo", "days": 1}, "meta": model("claude-sonnet-4")},
            {"tool": "get_forecast", "arguments": {"city": "Rome", "days": 1, "mcpeyeConversation": "$conversation"},
             "meta": model("claude-sonnet-4")},
            {"tool": "mcpeye_request_capability", "arguments": {"capability": "Export as CSV", "llm_model": "gpt-5"}},
        ]}],
    });
    let report = drive(&python, &script("py_driver.py"), &job, &[]);
    sigterm(&child);
    assert!(wait_for_exit(&mut child, Duration::from_secs(20)).is_some(), "the server exits on SIGTERM");

    let client = &report["clients"][0];
    assert_eq!(client["protocolVersion"], "2026-07-28", "{report}");
    let tools = &client["tools"];
    assert!(tools["get_forecast"].as_array().unwrap().contains(&json!("mcpeyeConversation")), "{report}");
    assert!(tools["mcpeye_request_capability"].as_array().unwrap().contains(&json!("llm_model")), "{report}");
    let results = client["results"].as_array().unwrap();
    let first = results[0]["texts"].as_array().unwrap();
    assert_eq!(first.len(), 2, "the forecast and the handle: {report}");
    let handle = first[1].as_str().unwrap().strip_prefix("conversation: ").unwrap();
    assert!(results[0]["text"].as_str().unwrap().starts_with("Forecast for Oslo"), "{report}");
    assert_eq!(results[1]["texts"].as_array().unwrap().len(), 1, "a handle brought back is not handed out again");
    assert!(results[1]["text"].as_str().unwrap().starts_with("Forecast for Rome"), "{report}");
    assert!(results.iter().all(|r| r["isError"] == false), "{report}");

    let logged: Vec<Value> = std::fs::read_to_string(&log)
        .expect("the attribution log")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        logged,
        [
            json!({"tool": "get_forecast", "model": "claude-sonnet-4", "session": handle}),
            json!({"tool": "get_forecast", "model": "claude-sonnet-4", "session": handle}),
            json!({"tool": "mcpeye_request_capability", "model": "gpt-5", "session": null}),
        ]
    );
    // At the ingest: the arguments as the tool saw them, without the handle or the model.
    let _ = std::fs::remove_file(&log);
    let events: Vec<Value> = posts(&ingest).into_iter().flat_map(|p| p.events).collect();
    assert_eq!(events.len(), 3, "{events:#?}");
    for e in &events {
        assert!(e["arguments"].get("mcpeyeConversation").is_none() && e["arguments"].get("llm_model").is_none(), "{e}");
    }
}
