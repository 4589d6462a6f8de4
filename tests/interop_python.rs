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
use serde_json::{json, Value};

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

/// The intent a client states in `_meta` (`io.modelcontextprotocol/aiInvocation`.`userIntent`),
/// sent by the official client's `call_tool(…, meta=…)`: recorded with `intentSource: "native"`
/// when the call has no `mcpeyeIntent`; `mcpeyeIntent` wins when both are there; a blank one is no
/// intent.
#[test]
fn python_native_intent_in_meta_is_recorded() {
    let python = or_skip!(python_with_mcp("python_native_intent_in_meta_is_recorded"));
    let server = example("stdio_server");
    let ingest = IngestReceiver::start();
    let native = |intent: &str| json!({"io.modelcontextprotocol/aiInvocation": {"userIntent": intent, "model": "m-1"}});
    let calls = [
        (json!({"city": "Oslo", "days": 1}), native("[native a] The user wants to know if Oslo is dry tomorrow.")),
        (
            json!({"city": "Porto", "days": 1, "mcpeyeIntent": "[native b] Written for this server's analytics."}),
            native("[native b] the client's own summary"),
        ),
        (json!({"city": "Rome", "days": 1}), native("   ")),
    ];
    let job = json!({
        "server": {"stdio": [server]},
        "mode": "auto",
        "concurrency": 1,
        "clients": [{"name": "py-native", "version": "1.0.0", "calls": calls.iter().map(|(arguments, meta)| {
            json!({"tool": "get_forecast", "arguments": arguments, "meta": meta})
        }).collect::<Vec<_>>()}],
    });
    let report = drive(&python, &script("py_driver.py"), &job, &server_env(&ingest));
    let results = report["clients"][0]["results"].as_array().expect("results").clone();
    assert_eq!(results.len(), 3, "{report}");
    assert!(results.iter().all(|r| r["isError"] == false), "{report}");
    let events: Vec<Value> = posts(&ingest).into_iter().flat_map(|p| p.events).collect();
    let by_city = |city: &str| -> &Value {
        let found: Vec<&Value> = events.iter().filter(|e| e["arguments"]["city"] == city).collect();
        assert_eq!(found.len(), 1, "events for {city}: {events:#?}");
        found[0]
    };
    let oslo = by_city("Oslo");
    assert_eq!(oslo["intent"], "[native a] The user wants to know if Oslo is dry tomorrow.", "{oslo:#}");
    assert_eq!(oslo["intentSource"], "native", "{oslo:#}");
    let porto = by_city("Porto");
    assert_eq!(porto["intent"], "[native b] Written for this server's analytics.", "{porto:#}");
    assert_eq!(porto["intentSource"], "mcpeye", "{porto:#}");
    assert!(porto["arguments"].get("mcpeyeIntent").is_none(), "{porto:#}");
    let rome = by_city("Rome");
    assert!(rome.get("intent").is_none() && rome.get("intentSource").is_none(), "{rome:#}");
}

/// A tool the server does not have, called by the official client as an agent that made its
/// name up: answered with JSON-RPC invalid params (`-32602`, as MCP specifies), and exactly one
/// event at the ingest, with the call's intent, under the client's own name.
fn unknown_tool_run(test: &str, example_name: &str, mode: &str, name: &str) {
    let python = or_skip!(python_with_mcp(test));
    let server = example(example_name);
    let ingest = IngestReceiver::start();
    let intent = format!("[{name} z] The user wants a refund for order 1042.");
    let call =
        json!({"tool": "refund_order", "arguments": {"order": 1042, "mcpeyeIntent": intent}, "expectError": true});
    let job = json!({
        "server": {"stdio": [server]},
        "mode": mode,
        "concurrency": 1,
        "clients": [{"name": name, "version": "1.0.0", "calls": [call]}],
    });
    let report = drive(&python, &script("py_driver.py"), &job, &server_env(&ingest));
    let result = &report["clients"][0]["results"][0];
    assert_eq!(result["error"]["code"], -32602, "the client's report: {report}");
    let posts = posts(&ingest);
    let events: Vec<&serde_json::Value> = posts.iter().flat_map(|p| &p.events).collect();
    assert_eq!(events.len(), 1, "events at the ingest: {events:#?}");
    let event = events[0];
    assert_eq!(event["toolName"], "refund_order", "{event:#}");
    assert_eq!(event["intent"], intent.as_str(), "{event:#}");
    assert_eq!(event["isError"], true, "{event:#}");
    assert_eq!(event["errorMessage"], "unknown tool `refund_order`", "{event:#}");
    assert!(posts.iter().all(|p| p.client.as_deref() == Some(&format!("{name}/1.0.0"))), "identity.client");
    let gap = mcpeye::report::IntentGap::from_events(events.iter().copied());
    let listed: Vec<(&str, usize)> = gap.unknown_tools.iter().map(|u| (u.name.as_str(), u.calls)).collect();
    assert_eq!(listed, [("refund_order", 1)], "the Intent Gap's unknown tools");
}

#[test]
fn python_calls_an_unknown_tool_of_a_manifest_server() {
    let test = "python_calls_an_unknown_tool_of_a_manifest_server";
    unknown_tool_run(test, "stdio_server", "auto", "py-unknown-manifest");
}

#[test]
fn python_legacy_calls_an_unknown_tool_of_a_manifest_server() {
    let test = "python_legacy_calls_an_unknown_tool_of_a_manifest_server";
    unknown_tool_run(test, "stdio_server", "legacy", "py-unknown-manifest-legacy");
}

#[test]
fn python_calls_an_unknown_tool_of_an_instrumented_rmcp_server() {
    let test = "python_calls_an_unknown_tool_of_an_instrumented_rmcp_server";
    unknown_tool_run(test, "rmcp_instrumented", "auto", "py-unknown-instrumented");
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

/// Resources and prompts read by the official Python client, in both eras, from a server of its
/// own wrapped in `mcpeye::rmcp::observe` (examples/conformance_server): the client gets the
/// handler's answers, the ingest receives nothing for them (its events are tool calls), and the
/// server's `Stats` count each read with its URI and each prompt with its name.
fn reads_run(test: &str, mode: &str, name: &str) {
    let python = or_skip!(python_with_mcp(test));
    let ingest = IngestReceiver::start();
    let server = HttpServer::start_example("conformance_server", &ingest, &[]);
    let job = json!({
        "server": {"url": server.url},
        "mode": mode,
        "concurrency": 1,
        "clients": [{
            "name": name, "version": "1.0.0", "calls": [],
            "reads": ["test://static-text", "test://static-text"],
            "prompts": ["test_simple_prompt"],
        }],
    });
    let report = drive(&python, &script("py_driver.py"), &job, &server_env(&ingest));
    let client = &report["clients"][0];
    let text = "This is the content of the static text resource.";
    assert_eq!(client["reads"], json!([text, text]), "the handler's answers: {report}");
    assert_eq!(client["prompts"], json!(["This is a simple prompt for testing."]), "{report}");
    let log = server.log();
    server.terminate();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    let line = loop {
        let found =
            log.lock().unwrap().lines().find_map(|l| l.split("not sent to the ingest: ").nth(1).map(str::to_owned));
        match found {
            Some(line) => break line,
            None if std::time::Instant::now() < deadline => std::thread::sleep(std::time::Duration::from_millis(50)),
            None => panic!("no counts on the server's stderr:\n{}", log.lock().unwrap()),
        }
    };
    let counts: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(counts["resourcesRead"]["test://static-text"], 2, "{counts}");
    assert_eq!(counts["promptsGot"]["test_simple_prompt"], 1, "{counts}");
    assert_eq!(counts["methods"]["resources/read"], 2, "{counts}");
    assert_eq!(counts["methods"]["tools/list"], 1, "{counts}");
    let events: Vec<serde_json::Value> = posts(&ingest).into_iter().flat_map(|p| p.events).collect();
    assert!(events.is_empty(), "no event for reads and prompts: {events:#?}");
}

#[test]
fn python_reads_resources_and_prompts_of_an_observed_server() {
    reads_run("python_reads_resources_and_prompts_of_an_observed_server", "auto", "py-reader");
}

#[test]
fn python_legacy_reads_resources_and_prompts_of_an_observed_server() {
    reads_run("python_legacy_reads_resources_and_prompts_of_an_observed_server", "legacy", "py-reader-legacy");
}

/// The opt-in feedback tool (`ManifestBuilder::feedback`, on in the stdio example under
/// `MCPEYE_DEMO_FEEDBACK=1`) called by the official Python client, in both eras: listed with its
/// `category`, `text` and `task_completed`, answered with its acknowledgement, and one event at
/// the ingest of the tool `mcpeye_send_feedback` whose arguments are the feedback, redacted;
/// a call with an unknown category is an invalid-arguments error result, recorded as an error.
fn feedback_run(test: &str, mode: &str, era: Era, name: &str) {
    let python = or_skip!(python_with_mcp(test));
    let server = example("stdio_server");
    let ingest = IngestReceiver::start();
    let text = format!("[{name}] get_forecast has no hourly view; mail ada@example.com for details");
    let calls = [
        json!({"tool": "mcpeye_send_feedback", "arguments": {"category": "missing_capability", "text": text,
            "task_completed": false}}),
        json!({"tool": "mcpeye_send_feedback", "arguments": {"category": "complaint", "text": format!("[{name}] bad")}}),
    ];
    let job = json!({
        "server": {"stdio": [server]},
        "mode": mode,
        "concurrency": 1,
        "clients": [{"name": name, "version": "1.0.0", "calls": calls}],
    });
    let mut env = server_env(&ingest);
    env.push(("MCPEYE_DEMO_FEEDBACK", "1".to_owned()));
    let report = drive(&python, &script("py_driver.py"), &job, &env);
    let client = &report["clients"][0];
    let version = client["protocolVersion"].as_str().unwrap_or_default();
    match era {
        Era::Modern => assert_eq!(version, MODERN, "{report}"),
        Era::Handshake => assert!(!version.is_empty() && version < MODERN, "{report}"),
    }
    assert_eq!(client["tools"]["mcpeye_send_feedback"], json!(["category", "task_completed", "text"]), "{report}");
    let results = client["results"].as_array().expect("results");
    let ack = mcpeye::contract::FEEDBACK_TOOL_ACK;
    assert_eq!(results[0], json!({"isError": false, "text": ack}), "{report}");
    assert_eq!(results[1]["isError"], true, "{report}");
    assert!(results[1]["text"].as_str().is_some_and(|t| t.contains("`category`")), "{report}");

    let posts = posts(&ingest);
    assert!(posts.iter().all(|p| p.client.as_deref() == Some(&format!("{name}/1.0.0"))), "identity.client");
    let events: Vec<Value> = posts.into_iter().flat_map(|p| p.events).collect();
    assert_eq!(events.len(), 2, "{events:#?}");
    assert!(events.iter().all(|e| e["toolName"] == "mcpeye_send_feedback"), "{events:#?}");
    let sent = &events[0];
    let redacted = format!("[{name}] get_forecast has no hourly view; mail [REDACTED_EMAIL] for details");
    assert_eq!(
        sent["arguments"],
        json!({"category": "missing_capability", "text": redacted, "task_completed": false}),
        "{sent:#}"
    );
    assert_eq!((sent["isError"].clone(), sent["durationMs"].clone()), (json!(false), json!(0)), "{sent:#}");
    assert_eq!(sent["result"], json!({"content": [{"type": "text", "text": ack}]}), "{sent:#}");
    assert!(sent.get("intent").is_none(), "{sent:#}");
    assert_eq!(
        (events[1]["isError"].clone(), events[1]["arguments"]["category"].clone()),
        (json!(true), json!("complaint"))
    );
}

#[test]
fn python_auto_sends_feedback_in_2026_07_28() {
    feedback_run("python_auto_sends_feedback_in_2026_07_28", "auto", Era::Modern, "py-feedback-auto");
}

#[test]
fn python_legacy_sends_feedback_with_the_handshake() {
    feedback_run("python_legacy_sends_feedback_with_the_handshake", "legacy", Era::Handshake, "py-feedback-legacy");
}
