//! The report of a real session, end to end: the official Python MCP client (`mcp` on PyPI)
//! drives the stdio example server twice, as two versions of the server (`MCPEYE_DEMO_VERSION=2`
//! describes `get_forecast` anew and adds `get_alerts`), each writing the local event log
//! (`MCPEYE_EVENT_LOG_DIR`). Every call carries the MCP proposal's `aiInvocation` objects in
//! `_meta` (a model, a reason, the user's words, a turn). The session has a loop (the same tool
//! three times in a row), a recovery (an error, then the same tool again that succeeds), a
//! tool never called, and a report through the opt-in feedback tool (`MCPEYE_DEMO_FEEDBACK=1`).
//! `mcpeye report` (built from `mcpeye-cli`) reads the log back and shows each, in the
//! terminal, as JSON and as HTML rendered by Chromium.
//!
//! Without `python3` the test says so and passes, as the other interop tests do; under
//! `CI=true` a missing `python3` or chromium fails it.

#[path = "common/chromium.rs"]
mod chromium;
mod common;

use chromium::{chromium, page_problems, rendered};
use common::interop::*;
use mcpeye::testing::IngestReceiver;
use serde_json::{json, Value};
use std::path::Path;
use std::process::Command;

const AI: &str = "io.modelcontextprotocol/aiInvocation";
const MODEL: &str = "claude-sonnet-4.5";
const USER: &str = "Plan a rainy weekend in Lisbon";
const FEEDBACK: &str = "The user wanted weather alerts sent by email; no tool sends them.";
const TEST: &str = "python_sessions_against_two_server_versions_give_a_report_with_each_finding";

/// One call of the driver's job, with the proposal's objects in `_meta`.
fn call(tool: &str, arguments: Value, turn: &str, reason: &str) -> Value {
    let meta = json!({AI: {
        "model": {"name": MODEL},
        "invocationReason": {"text": reason},
        "userIntent": {"text": USER, "redacted": false},
        "turnId": turn,
    }});
    json!({"tool": tool, "arguments": arguments, "meta": meta})
}

/// `mcpeye ARGS`: its stdout, after checking it succeeded.
fn mcpeye(args: &[&str], dir: &Path) -> String {
    let out = Command::new(mcpeye_cli()).args(args).arg(dir).output().expect("mcpeye runs");
    assert!(out.status.success(), "mcpeye {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("UTF-8")
}

#[test]
fn python_sessions_against_two_server_versions_give_a_report_with_each_finding() {
    let python = or_skip!(python_with_mcp(TEST));
    let browser = chromium();
    if browser.is_none() && in_ci() {
        panic!("{TEST}: chromium is missing; CI is set, so this is a failure: apt-get install -y chromium");
    }
    let server = example("stdio_server");
    let dir = std::env::temp_dir().join(format!("mcpeye-interop-report-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let ingest = IngestReceiver::start();
    let sessions = [
        (
            "1",
            vec![
                // A loop: the same tool three times in a row.
                call("get_forecast", json!({"city": "Lisbon", "days": 2}), "t1", "Check the weekend forecast."),
                call("get_forecast", json!({"city": "Lisbon", "days": 3}), "t1", "Check one more day."),
                call("get_forecast", json!({"city": "Lisbon", "days": 4}), "t1", "Check yet one more day."),
                // A recovery: an error, then the same tool again that succeeds.
                call("get_forecast", json!({"city": "Lisbon", "days": 10}), "t2", "Look ten days ahead."),
                call("get_forecast", json!({"city": "Lisbon", "days": 7}), "t2", "Look a week ahead instead."),
                call("convert_temperature", json!({"value": 20, "unit": "C"}), "t3", "Convert to Fahrenheit."),
                // The opt-in feedback tool (`MCPEYE_DEMO_FEEDBACK=1`), answered by mcpeye itself.
                call(
                    "mcpeye_send_feedback",
                    json!({"category": "missing_capability", "text": FEEDBACK, "task_completed": false}),
                    "t3",
                    "Say what was missing.",
                ),
            ],
        ),
        (
            // The next version: get_forecast described anew, get_alerts added and never called.
            "2",
            vec![
                call("get_forecast", json!({"city": "Porto", "days": 5}), "t4", "Check Porto too."),
                call("get_forecast", json!({"city": "Faro"}), "t4", "Check Faro as well."),
                call("convert_temperature", json!({"value": 68, "unit": "F"}), "t4", "Convert back to Celsius."),
            ],
        ),
    ];
    for (version, calls) in sessions {
        let job = json!({
            "server": {"stdio": [server]},
            "mode": "auto",
            "concurrency": 1,
            "clients": [{"name": "py-report", "version": "1.0.0", "calls": calls}],
        });
        let mut env = server_env(&ingest);
        env.push(("MCPEYE_EVENT_LOG_DIR", dir.display().to_string()));
        env.push(("MCPEYE_DEMO_VERSION", version.to_owned()));
        env.push(("MCPEYE_DEMO_FEEDBACK", "1".to_owned()));
        let report = drive(&python, &script("py_driver.py"), &job, &env);
        let errors: Vec<bool> =
            report["clients"][0]["results"].as_array().unwrap().iter().map(|r| r["isError"] == true).collect();
        let expected =
            if version == "1" { vec![false, false, false, true, false, false, false] } else { vec![false; 3] };
        assert_eq!(errors, expected, "{report}");
    }

    // The wire: each call's intent is the client's invocationReason (native); nothing else of
    // aiInvocation travels.
    let mut events = ingest.events();
    assert_eq!(events.len(), 10);
    let at = events.iter().position(|e| e["toolName"] == "mcpeye_send_feedback").expect("the feedback event");
    let feedback = events.remove(at);
    // The feedback event: the reserved tool's shape (docs/wire-format.md#feedback-tool), no intent.
    assert_eq!(feedback["arguments"]["category"], "missing_capability", "{feedback}");
    assert_eq!(feedback["arguments"]["text"], FEEDBACK, "{feedback}");
    assert_eq!((&feedback["durationMs"], feedback.get("intent")), (&json!(0), None), "{feedback}");
    assert!(events.iter().all(|e| e["intentSource"] == "native"), "{events:#?}");
    assert_eq!(events[0]["intent"], "Check the weekend forecast.");
    assert!(events.iter().all(|e| !e.to_string().contains(USER)), "{events:#?}");
    // The log: the same events, with the turn, the model and the user's words.
    let mut lines: Vec<Value> = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        lines.extend(text.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()));
    }
    let logged: Vec<&Value> =
        lines.iter().filter(|l| l["kind"] == "call" && l["tool"] != "mcpeye_send_feedback").collect();
    assert_eq!(logged.len(), 9);
    for c in &logged {
        assert_eq!((c["model"].as_str(), c["userIntent"].as_str()), (Some(MODEL), Some(USER)), "{c}");
        assert_eq!(c["userIntentRedacted"], false, "{c}");
        assert!(c["turn"].as_str().is_some_and(|t| t.starts_with('t')), "{c}");
        assert!(c.get("invocationReason").is_none(), "the reason is the event's intent: {c}");
    }

    // JSON: every finding, right.
    let j: Value = serde_json::from_str(&mcpeye(&["report", "--json"], &dir)).expect("JSON");
    assert_eq!((&j["overview"]["calls"], &j["overview"]["errors"]), (&json!(10), &json!(1)), "{j:#}");
    assert_eq!(j["overview"]["serverVersions"], json!([env!("CARGO_PKG_VERSION"), "2.0.0"]), "{j:#}");
    assert_eq!(j["tools"]["neverCalled"], json!(["get_alerts"]), "{j:#}");
    let loops = &j["paths"]["loops"];
    assert_eq!(loops, &json!([{"tool": "get_forecast", "runs": 1, "longest": 3}]), "{j:#}");
    let recoveries = &j["paths"]["recoveries"];
    assert_eq!(recoveries, &json!([{"tool": "get_forecast", "errors": 1, "retried": 1, "recovered": 1}]), "{j:#}");
    assert_eq!(
        j["paths"]["turns"],
        json!({"turns": 4, "calls": 10, "mostCalls": 3, "withSeveralCalls": 4, "endedOnError": 0}),
        "{j:#}"
    );
    assert_eq!(j["models"]["models"][0]["model"], MODEL, "{j:#}");
    assert_eq!(j["models"]["models"][0]["calls"], 10, "{j:#}");
    // What the agent sent through the feedback tool, in its category, not among the tools.
    let category = &j["feedback"]["categories"][0];
    assert_eq!((&j["feedback"]["calls"], &category["category"]), (&json!(1), &json!("missing_capability")), "{j:#}");
    assert_eq!((&category["taskNotCompleted"], &category["reports"][0]["ask"]), (&json!(1), &json!(FEEDBACK)), "{j:#}");
    assert!(j["tools"]["tools"].as_array().unwrap().iter().all(|t| t["tool"] != "mcpeye_send_feedback"), "{j:#}");
    // One report from one user is below the feedback finding's threshold (two people).
    assert_eq!(j["findings"], json!([]), "{j:#}");
    // The description change of get_forecast, with the error rates and retries before and after.
    let forecast: Vec<&Value> =
        j["versions"]["tools"].as_array().unwrap().iter().filter(|v| v["tool"] == "get_forecast").collect();
    assert_eq!(forecast.len(), 2, "{j:#}");
    let (before, after) = (forecast[0], forecast[1]);
    assert_eq!(before["serverVersion"], env!("CARGO_PKG_VERSION"));
    assert_eq!(after["serverVersion"], "2.0.0");
    assert_ne!(before["hash"], after["hash"], "a new description is a new hash");
    assert!(before["description"].as_str().unwrap().starts_with("Look up the weather forecast of a city (demo data)"));
    assert!(after["description"].as_str().unwrap().starts_with("Look up the weather forecast of a city, day by day"));
    let figures =
        |v: &Value| (v["calls"].as_u64(), v["errors"].as_u64(), v["errorRate"].as_f64(), v["retries"].as_u64());
    assert_eq!(figures(before), (Some(5), Some(1), Some(0.2), Some(1)));
    assert_eq!(figures(after), (Some(2), Some(0), Some(0.0), Some(0)));

    // The terminal.
    let text = mcpeye(&["report"], &dir);
    for needle in [
        "10 calls, 1 error",
        FEEDBACK,
        "never called: get_alerts",
        "loop: get_forecast called 3+ times in a row 1× (longest 3)",
        "after an error of get_forecast: retried 1 of 1, recovered 1",
        "4 user turns (10 calls, at most 3 in one)",
        "missing capability: 1 report (task completed 0, not completed 1)",
        "2.0.0 · ",
        "20 %",
        "Look up the weather forecast of a city, day by day",
        MODEL,
    ] {
        assert!(text.contains(needle), "{needle:?} not in:\n{text}");
    }

    // The page, as Chromium renders it.
    let page = dir.join("report.html");
    mcpeye(&["report", "--html", page.to_str().unwrap()], &dir);
    let Some(browser) = browser else {
        let _ = std::fs::remove_dir_all(&dir);
        eprintln!("note: {TEST}: chromium is not installed; the browser part is skipped (apt-get install -y chromium)");
        return;
    };
    let (dom, log) = rendered(&browser, &page);
    for needle in [
        "<h2>Tools</h2>",
        "get_alerts",
        "<h2>Paths</h2>",
        "<code><bdi>get_forecast</bdi></code> called three times or more in a row, 1× (longest run 3)",
        "<h3>User turns</h3><p>4 turns, 10 calls",
        "<h2>Versions</h2>",
        "<b>changed:</b> <bdi>Look up the weather forecast of a city, day by day",
        "aria-label=\"error rate 20 %\"",
        "<h2>Models</h2>",
        MODEL,
        FEEDBACK,
    ] {
        assert!(dom.contains(needle), "{needle} not in the rendered page:\n{dom}");
    }
    let problems = page_problems(&log);
    assert!(problems.is_empty(), "the page logged: {problems:#?}");
    std::fs::remove_dir_all(&dir).unwrap();
}
