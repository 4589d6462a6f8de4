//! The stdio example driven by the official Python MCP SDK (`mcp` on PyPI), as a new user
//! would: tools listed with `mcpeyeIntent`, calls answered, and the events that reach the
//! ingest. The test installs the client into a venv under `target/` on first run.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The client version this test was written against.
const MCP_PYPI: &str = "mcp==2.3.0";

fn run(cmd: &mut Command) -> std::process::Output {
    let out = cmd.output().unwrap_or_else(|e| panic!("could not run {cmd:?}: {e}"));
    assert!(out.status.success(), "{cmd:?} failed:\n{}", String::from_utf8_lossy(&out.stderr));
    out
}

/// A Python with the official MCP client, in a venv of our own.
fn python_with_mcp() -> PathBuf {
    let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join("interop-venv");
    let python = venv.join("bin").join("python");
    let ready =
        python.exists() && Command::new(&python).args(["-c", "import mcp"]).output().is_ok_and(|o| o.status.success());
    if !ready {
        let host = std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_owned());
        run(Command::new(&host).args(["-m", "venv"]).arg(&venv));
        run(Command::new(&python).args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check", MCP_PYPI]));
    }
    python
}

/// `target/debug/examples/stdio_server`, built if this test runs on its own.
fn stdio_server() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    let profile_dir = exe.parent().and_then(Path::parent).expect("target/<profile>");
    let server = profile_dir.join("examples").join("stdio_server");
    if !server.exists() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
        run(Command::new(cargo).args(["build", "--example", "stdio_server"]).current_dir(env!("CARGO_MANIFEST_DIR")));
    }
    server
}

#[test]
fn official_python_client_drives_the_stdio_server() {
    let python = python_with_mcp();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts").join("interop_client.py");
    let out = run(Command::new(python).arg(script).arg(stdio_server()));
    let report: Value = serde_json::from_slice(&out.stdout).expect("the script prints one JSON document");

    let client = &report["client"];
    assert_eq!(client["serverInfo"], "mcpeye-stdio-demo");
    assert_eq!(client["tools"]["get_forecast"], serde_json::json!(["city", "days", "mcpeyeIntent"]));
    assert_eq!(client["tools"]["mcpeye_request_capability"], serde_json::json!(["capability", "context"]));
    let calls = client["calls"].as_array().unwrap();
    assert_eq!(calls[0]["isError"], false);
    assert_eq!(calls[1]["isError"], true);
    assert!(calls[2]["text"].as_str().unwrap().starts_with("Thanks. This capability request has been recorded"));

    let events: Vec<&Value> = report["ingest"]
        .as_array()
        .unwrap()
        .iter()
        .inspect(|r| assert_eq!(r["secret"], "interop-secret"))
        .flat_map(|r| r["body"]["events"].as_array().unwrap())
        .collect();
    let names: Vec<&str> = events.iter().map(|e| e["toolName"].as_str().unwrap()).collect();
    assert_eq!(names, ["get_forecast", "convert_temperature", "mcpeye_request_capability"]);
    assert!(events[0]["arguments"].get("mcpeyeIntent").is_none(), "the intent is stripped from the arguments");
    assert!(events[0]["intent"].as_str().unwrap().contains("weekend in Lisbon"));
    assert_eq!(events[1]["errorMessage"], "unit must be \"C\" or \"F\"");
    let body = &report["ingest"][0]["body"];
    assert!(
        body["identity"]["client"].as_str().is_some_and(|c| !c.is_empty()),
        "the client's initialize clientInfo names the client: {body}"
    );
}
