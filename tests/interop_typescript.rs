//! The examples driven by the official TypeScript SDK (`@modelcontextprotocol/sdk` on npm), as a
//! new user would: the stdio server through `StdioClientTransport`, the Streamable HTTP server
//! (stateful and stateless) through `StreamableHTTPClientTransport`. This SDK speaks the
//! `initialize` handshake. Each run lists the tools, calls both tools with an intent and the
//! reserved tool, then checks the ingest: every call arrived exactly once, under the client's own
//! `clientInfo`, with its intent.
//!
//! The SDK is installed with npm under `target/` on first run (`tests/interop/ts_driver.mjs`
//! drives it); without `node`/`npm` the tests say so and pass.

mod common;

use common::interop::*;
use mcpeye::testing::IngestReceiver;
use serde_json::json;

const VERSION: &str = "1.32.0";

#[test]
fn typescript_drives_stdio() {
    let (node, driver) = or_skip!(node_with_sdk("typescript_drives_stdio"));
    let server = example("stdio_server");
    let ingest = IngestReceiver::start();
    let calls = interop_calls("ts-stdio");
    let job = single_client_job(json!({"stdio": [server]}), "legacy", "ts-stdio", VERSION, &calls);
    // `client.close()` closes the server's stdin and waits for it to exit (then signals it).
    let report = drive(&node, &driver, &job, &server_env(&ingest));
    assert_client_saw(&report["clients"][0], Era::Handshake);
    assert_ingest_got(&ingest, Some(&format!("ts-stdio/{VERSION}")), &calls);
}

fn http_run(test: &str, server_args: &[&str], name: &str) {
    let (node, driver) = or_skip!(node_with_sdk(test));
    let ingest = IngestReceiver::start();
    let server = HttpServer::start(&ingest, server_args);
    let calls = interop_calls(name);
    let job = single_client_job(json!({"url": server.url}), "legacy", name, VERSION, &calls);
    let report = drive(&node, &driver, &job, &[]);
    let log = server.stderr();
    server.terminate();
    assert_client_saw(&report["clients"][0], Era::Handshake);
    // This SDK speaks the handshake: on a stateless server it names itself only in `initialize`,
    // a request of its own, so its calls cannot be attributed to it, nor to anyone else.
    let client = format!("{name}/{VERSION}");
    let client = (!server_args.contains(&"--stateless")).then_some(client.as_str());
    let checked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| assert_ingest_got(&ingest, client, &calls)));
    if let Err(e) = checked {
        eprintln!("http_server {server_args:?} stderr:\n{log}");
        std::panic::resume_unwind(e);
    }
}

#[test]
fn typescript_drives_http() {
    http_run("typescript_drives_http", &[], "ts-http");
}

#[test]
fn typescript_drives_stateless_http() {
    http_run("typescript_drives_stateless_http", &["--stateless"], "ts-http-stateless");
}
