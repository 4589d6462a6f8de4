//! The examples driven by the official Python MCP client (`mcp` on PyPI), as a new user would:
//! the stdio server and the Streamable HTTP server (stateful and stateless), each in both protocol
//! eras: `mode="auto"` (which negotiates 2026-07-28, no handshake) and `mode="legacy"` (the
//! `initialize` handshake). Each run lists the tools (`mcpeyeIntent` and the reserved tool are
//! there), calls both tools with an intent and the reserved tool, then checks the ingest: every
//! call arrived exactly once, under the `clientInfo` the client itself set, with its intent.
//!
//! The client is installed into a venv under `target/` on first run (`tests/interop/py_driver.py`
//! drives it); without `python3` the tests say so and pass.

mod common;

use common::interop::*;
use mcpeye::testing::IngestReceiver;
use serde_json::json;

fn stdio_run(test: &str, mode: &str, era: Era, name: &str) {
    let python = or_skip!(python_with_mcp(test));
    let server = example("stdio_server");
    let ingest = IngestReceiver::start();
    let calls = interop_calls(name);
    let job = single_client_job(json!({"stdio": [server]}), mode, name, "1.0.0", &calls);
    // The client closes the server's stdin when it leaves and waits for it to exit: by then the
    // server has delivered what it captured.
    let report = drive(&python, &script("py_driver.py"), &job, &server_env(&ingest));
    assert_client_saw(&report["clients"][0], era);
    assert_ingest_got(&ingest, Some(&format!("{name}/1.0.0")), &calls);
}

fn http_run(test: &str, server_args: &[&str], mode: &str, era: Era, name: &str) {
    let python = or_skip!(python_with_mcp(test));
    let ingest = IngestReceiver::start();
    let server = HttpServer::start(&ingest, server_args);
    let calls = interop_calls(name);
    let job = single_client_job(json!({"url": server.url}), mode, name, "1.0.0", &calls);
    let report = drive(&python, &script("py_driver.py"), &job, &[]);
    let log = server.stderr();
    // SIGTERM makes the server deliver what it captured before it exits.
    server.terminate();
    assert_client_saw(&report["clients"][0], era);
    // A handshake-era client of a stateless server names itself only in `initialize`, a request
    // of its own: its calls cannot be attributed to it, nor to anyone else.
    let era_known = era == Era::Modern;
    let client = format!("{name}/1.0.0");
    let client = (!server_args.contains(&"--stateless") || era_known).then_some(client.as_str());
    let checked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| assert_ingest_got(&ingest, client, &calls)));
    if let Err(e) = checked {
        eprintln!("http_server {server_args:?} stderr:\n{log}");
        std::panic::resume_unwind(e);
    }
}

#[test]
fn python_auto_drives_stdio_in_2026_07_28() {
    stdio_run("python_auto_drives_stdio_in_2026_07_28", "auto", Era::Modern, "py-stdio-auto");
}

#[test]
fn python_legacy_drives_stdio_with_the_handshake() {
    stdio_run("python_legacy_drives_stdio_with_the_handshake", "legacy", Era::Handshake, "py-stdio-legacy");
}

#[test]
fn python_auto_drives_http_in_2026_07_28() {
    http_run("python_auto_drives_http_in_2026_07_28", &[], "auto", Era::Modern, "py-http-auto");
}

#[test]
fn python_legacy_drives_http_with_the_handshake() {
    http_run("python_legacy_drives_http_with_the_handshake", &[], "legacy", Era::Handshake, "py-http-legacy");
}

#[test]
fn python_auto_drives_stateless_http_in_2026_07_28() {
    http_run(
        "python_auto_drives_stateless_http_in_2026_07_28",
        &["--stateless"],
        "auto",
        Era::Modern,
        "py-http-stateless-auto",
    );
}

#[test]
fn python_legacy_drives_stateless_http_with_the_handshake() {
    http_run(
        "python_legacy_drives_stateless_http_with_the_handshake",
        &["--stateless"],
        "legacy",
        Era::Handshake,
        "py-http-stateless-legacy",
    );
}

/// Tools that ask (examples/conformance_server's elicitation and sampling tools) called by the
/// Python client with its `elicitation_callback` and `sampling_callback`: answered in either
/// era (2026-07-28 through `input_required` rounds, the handshake era through server-to-client
/// requests), and each logical call is exactly one event at the ingest, with its intent.
fn asking_run(test: &str, mode: &str, era: Era, name: &str) {
    let python = or_skip!(python_with_mcp(test));
    let ingest = IngestReceiver::start();
    let server = HttpServer::start_example("conformance_server", &ingest, &[]);
    let calls = [
        ("test_input_required_result_elicitation", format!("{name}: greet the user by name")),
        ("test_input_required_result_sampling", format!("{name}: ask the model for a capital")),
    ];
    let job = json!({
        "server": {"url": server.url},
        "mode": mode,
        "answers": {"elicitation": {"name": "Ada"}, "sampling": "Paris."},
        "clients": [{"name": name, "version": "1.0.0", "calls": calls.iter().map(|(tool, intent)| {
            json!({"tool": tool, "arguments": {"mcpeyeIntent": intent}})
        }).collect::<Vec<_>>()}],
    });
    let report = drive(&python, &script("py_driver.py"), &job, &[]);
    let log = server.stderr();
    server.terminate();
    let client = &report["clients"][0];
    let version = client["protocolVersion"].as_str().unwrap_or_default();
    match era {
        Era::Modern => assert_eq!(version, "2026-07-28", "{report}"),
        Era::Handshake => assert!(!version.is_empty() && version < "2026-07-28", "{report}"),
    }
    let results = client["results"].as_array().expect("results");
    assert_eq!(results[0], json!({"isError": false, "text": "Hello, Ada!"}), "{report}\n{log}");
    assert_eq!(results[1], json!({"isError": false, "text": "The model said: Paris."}), "{report}\n{log}");
    assert_eq!(client["asked"], json!({"elicitation": 1, "sampling": 1}), "{report}");

    let events: Vec<serde_json::Value> = posts(&ingest).into_iter().flat_map(|p| p.events).collect();
    assert_eq!(events.len(), calls.len(), "one event per logical call: {events:#?}\n{log}");
    for (tool, intent) in &calls {
        let of_tool: Vec<_> = events.iter().filter(|e| e["toolName"] == *tool).collect();
        assert_eq!(of_tool.len(), 1, "{events:#?}");
        assert_eq!(of_tool[0]["intent"], intent.as_str(), "{:#}", of_tool[0]);
        assert_eq!(of_tool[0]["isError"], false, "{:#}", of_tool[0]);
    }
}

#[test]
fn python_auto_answers_tools_that_ask_in_2026_07_28() {
    asking_run("python_auto_answers_tools_that_ask_in_2026_07_28", "auto", Era::Modern, "py-ask-auto");
}

#[test]
fn python_legacy_answers_tools_that_ask_with_the_handshake() {
    asking_run("python_legacy_answers_tools_that_ask_with_the_handshake", "legacy", Era::Handshake, "py-ask-legacy");
}
