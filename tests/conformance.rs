//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, pinned in
//! `scripts/conformance.sh`) against `examples/conformance_server.rs`, as `scripts/conformance.sh`
//! runs it: every server scenario passes or is in `conformance/expected-failures.yml` with its
//! reason. The server ships its events to a loopback ingest, where every tool call the suite made
//! must appear exactly once, with its outcome.
//!
//! Needs Node.js 20+ (`npx`); without it the test says so and passes. The suite is installed into
//! `target/conformance/` on first run.

use mcpeye::testing::IngestReceiver;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Every tool call the suite's server scenarios make: (tool, isError). Each is made once.
const CALLS: &[(&str, bool)] = &[
    ("test_audio_content", false),
    ("test_elicitation", false),
    ("test_elicitation_sep1034_defaults", false),
    ("test_elicitation_sep1330_enums", false),
    ("test_embedded_resource", false),
    ("test_error_handling", true),
    ("test_image_content", false),
    ("test_multiple_content_types", false),
    ("test_reconnection", false),
    ("test_sampling", false),
    ("test_simple_text", false),
    ("test_tool_with_logging", false),
    ("test_tool_with_progress", false),
];

/// The number of server scenarios of the pinned suite.
const SCENARIOS: usize = 32;

/// `target/<profile>`, from this test's own path.
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    exe.parent().and_then(Path::parent).expect("target/<profile>/deps").to_path_buf()
}

/// `target/<profile>/examples/conformance_server`, built if this test runs on its own.
fn server() -> PathBuf {
    let path = profile_dir().join("examples").join(format!("conformance_server{}", std::env::consts::EXE_SUFFIX));
    if !path.exists() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
        let status = Command::new(cargo)
            .args(["build", "--example", "conformance_server"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .expect("cargo build");
        assert!(status.success(), "could not build examples/conformance_server");
    }
    path
}

#[test]
fn the_conformance_suite_passes_and_every_call_is_recorded_once() {
    if Command::new("npx").arg("--version").output().is_err() {
        eprintln!("skipping the MCP conformance suite: `npx` (Node.js 20+) is not installed");
        return;
    }
    let ingest = IngestReceiver::start();
    let target = profile_dir().parent().expect("target dir").to_path_buf();
    let out = Command::new(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts").join("conformance.sh"))
        .env("CARGO_TARGET_DIR", &target)
        .env("CONFORMANCE_SERVER", server())
        .env("MCPEYE_INGEST_URL", ingest.url())
        .env("MCPEYE_PROJECT_ID", "conformance-test")
        .env_remove("MCPEYE_INGEST_SECRET")
        .output()
        .expect("scripts/conformance.sh runs");
    let table = String::from_utf8_lossy(&out.stdout);
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the conformance suite failed:\n{table}\n{log}");

    let rows: Vec<(&str, &str)> =
        table.lines().skip(2).filter_map(|l| l.strip_prefix("| ")?.strip_suffix(" |")?.split_once(" | ")).collect();
    assert_eq!(rows.len(), SCENARIOS, "one row per server scenario:\n{table}");
    for (scenario, result) in &rows {
        assert!(result.starts_with("pass") || result.starts_with("expected failure: "), "{scenario}: {result}");
    }

    // The script stops the server with SIGTERM, which delivers what it captured before exiting.
    let requests = ingest.requests();
    let mut seen: BTreeMap<&str, Vec<&Value>> = BTreeMap::new();
    let bodies: Vec<Value> = requests.iter().filter_map(|r| r.json()).collect();
    for body in &bodies {
        assert_eq!(body["projectId"], "conformance-test");
        let client = body["identity"]["client"].as_str().unwrap_or_default();
        assert!(!client.is_empty(), "every payload names its client: {body}");
        for event in body["events"].as_array().expect("events") {
            seen.entry(event["toolName"].as_str().expect("toolName")).or_default().push(event);
        }
    }
    let recorded: Vec<(&str, bool)> = seen
        .iter()
        .flat_map(|(tool, events)| events.iter().map(move |e| (*tool, e["isError"].as_bool().expect("isError"))))
        .collect();
    assert_eq!(recorded, CALLS, "each call of the suite recorded exactly once, with its outcome");

    let one = |tool: &str| seen[tool][0];
    assert_eq!(one("test_error_handling")["errorMessage"], "This tool intentionally returns an error for testing");
    assert_eq!(one("test_simple_text")["result"]["content"][0]["text"], "This is a simple text response for testing.");
    assert_eq!(
        one("test_image_content")["result"]["content"][0]["data"],
        json!({"[truncated]": true, "bytes": 98}), // 96 characters of base64 and the quotes
        "base64 payloads are recorded as the truncation marker"
    );
    assert_eq!(one("test_sampling")["arguments"], json!({"prompt": "Test prompt for sampling"}));
    let sampled = one("test_sampling")["result"]["content"][0]["text"].as_str().unwrap_or_default();
    assert!(sampled.starts_with("LLM response: "), "{sampled}");
}
