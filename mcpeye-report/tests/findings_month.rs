//! A scripted month of a shop server's calls (600 conversations of 40 users, two server
//! versions), generated in-process and deterministically, with one planted problem of each
//! finding's kind: the report finds each, on the right tool and parameter, ranked by impact,
//! with its evidence, in the text, the JSON and the page (rendered by Chromium when it is
//! installed: `.ci/run` installs it, and under `CI=true` its absence fails the test). The same
//! month without the planted problems gives no finding at all. And the argument errors the Rust
//! SDK records, through a real `Manifest`, name their parameter as the findings read it.

#[path = "../../tests/common/chromium.rs"]
mod chromium;

use chromium::{chromium, page_problems, rendered};
use mcpeye_report::{FindingKind, Report, ReportInput};
use serde_json::{json, Value};
use std::path::Path;

/// 2026-11-01 00:00 UTC, in epoch milliseconds.
const START: u64 = 1_793_491_200_000;
const DAY: u64 = 86_400_000;
const CONVERSATIONS: u64 = 600;
const USERS: u64 = 40;
const RESERVED: &str = "mcpeye_request_capability";
const FEEDBACK: &str = "mcpeye_send_feedback";

/// A small linear congruential generator: the same month everywhere.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

/// One call to write: tool, error, arguments, duration.
struct Step {
    tool: &'static str,
    error: Option<&'static str>,
    arguments: Value,
    ms: u64,
}

fn ok(tool: &'static str, ms: u64) -> Step {
    Step { tool, error: None, arguments: json!({}), ms }
}

fn failed(tool: &'static str, error: &'static str, ms: u64) -> Step {
    Step { tool, error: Some(error), arguments: json!({}), ms }
}

fn tools_line(ts: u64, version: &str) -> String {
    let (address, order) = if version == "1.0" {
        ("Update the delivery address of an order.", "Get an order.")
    } else {
        (
            "Update the delivery address; give the postcode with its space, as printed on the label.",
            "Get an order by its id (ord_ and digits), as search_orders returns it.",
        )
    };
    let tools = json!([
        {"name": "search_orders", "hash": "so1", "description": "Search the user's orders by text and date (YYYY-MM-DD)."},
        {"name": "get_order", "hash": format!("go{version}"), "description": order},
        {"name": "update_address", "hash": format!("ua{version}"), "description": address},
        {"name": "track_parcel", "hash": "tp1", "description": "Where an order's parcel is."},
        {"name": "pay", "hash": "pa1", "description": "Pay an order with the user's saved card."},
        {"name": "export_report", "hash": "ex1", "description": "A PDF report of the user's orders of a year."},
        {"name": "refund", "hash": "rf1", "description": "Refund an order, in full or in part, to the card it was paid with."},
        {"name": RESERVED, "hash": "mc1"},
        {"name": FEEDBACK, "hash": "fb1"},
    ]);
    json!({"v": 1, "kind": "tools", "ts": ts, "serverVersion": version, "tools": tools}).to_string()
}

fn hash(tool: &str, version: &str) -> Option<String> {
    Some(match tool {
        "search_orders" => "so1".into(),
        "get_order" => format!("go{version}"),
        "update_address" => format!("ua{version}"),
        "track_parcel" => "tp1".into(),
        "pay" => "pa1".into(),
        "export_report" => "ex1".into(),
        "refund" => "rf1".into(),
        _ => return None,
    })
}

/// The month's event log: with `planted`, one problem of each kind.
fn month(planted: bool) -> String {
    let mut rng = Lcg(45);
    let mut out = vec![
        json!({"v": 1, "kind": "log", "ts": START, "writer": "findings_month", "pid": 1}).to_string(),
        tools_line(START, "1.0"),
    ];
    let mut n = 0;
    let middle: &[&'static str] = if planted {
        &["update_address", "track_parcel", "pay", "export_report"]
    } else {
        &["update_address", "track_parcel", "pay", "export_report", "refund"]
    };
    for c in 0..CONVERSATIONS {
        let start = START + c * 30 * DAY / CONVERSATIONS;
        let second_half = c >= CONVERSATIONS / 2;
        if c == CONVERSATIONS / 2 {
            out.push(tools_line(start, "1.1"));
        }
        let version = if second_half { "1.1" } else { "1.0" };
        let user = format!("u{}", c % USERS);
        let ms = |rng: &mut Lcg| 20 + rng.below(180);
        // The conversation's story: search, one to three other tools, then the order.
        let mut steps = Vec::new();
        if planted && c % 4 == 0 {
            // parameter_errors: agents send `date` as a number, then retry with a string.
            let error = "invalid arguments: `date`: expected a string, got a number";
            steps.push(failed("search_orders", error, 1));
        }
        steps.push(ok("search_orders", ms(&mut rng)));
        let mut last = "search_orders";
        for _ in 0..1 + rng.below(3) {
            let mut tool = middle[rng.below(middle.len() as u64) as usize];
            while tool == last {
                tool = middle[rng.below(middle.len() as u64) as usize];
            }
            let mut step_ms = ms(&mut rng);
            if planted && tool == "export_report" && rng.below(10) < 4 {
                // slow_tool: a year's report, built on every call.
                step_ms = 2_500 + rng.below(1_500);
            }
            if planted && tool == "update_address" && second_half && rng.below(10) < 3 {
                // version_regression: the new description's postcode rule is rejected.
                steps.push(failed("update_address", "address rejected: postcode format", ms(&mut rng)));
            }
            if tool == "track_parcel" && planted && c % 10 == 1 {
                // loop: "pending" tells the agent nothing, so it asks again.
                for _ in 0..3 {
                    steps.push(ok("track_parcel", ms(&mut rng)));
                }
            }
            steps.push(ok(tool, step_ms));
            last = tool;
        }
        if planted && c % 25 == 2 {
            // unknown_tool: agents try a tool the server does not have.
            steps.push(failed("cancel_order", "unknown tool `cancel_order`", 0));
        }
        if planted && c % 15 == 4 {
            // capability_asked: in other words, by many users.
            let ask = ["export my orders as CSV", "Export orders to CSV.", "export my order history as a CSV file"]
                [(c / 15 % 3) as usize];
            let mut s = ok(RESERVED, 0);
            s.arguments = json!({"capability": ask, "context": "for the yearly accounts"});
            steps.push(s);
        }
        if !planted && c < 3 {
            // Asks of one user each, on three different things: no finding.
            let ask =
                ["book a courier pickup", "wrap the order as a gift", "translate the invoice to German"][c as usize];
            let mut s = ok(RESERVED, 0);
            s.arguments = json!({"capability": ask});
            steps.push(s);
        }
        if planted && c % 20 == 7 {
            // feedback: the same issue, from several users.
            let text = ["search_orders ignores the date filter", "Search orders ignores the date filter."]
                [(c / 20 % 2) as usize];
            let mut s = ok(FEEDBACK, 0);
            s.arguments = json!({"category": "issue", "text": text, "task_completed": false});
            steps.push(s);
        }
        if c % 50 == 9 {
            // Praise, and one user's issue once: no finding.
            let (category, text) =
                if c == 9 { ("issue", "the map of the parcel is small") } else { ("praise", "quick answers") };
            let mut s = ok(FEEDBACK, 0);
            s.arguments = json!({"category": category, "text": text, "task_completed": true});
            steps.push(s);
        }
        if planted && c % 10 == 3 {
            // abandonment: the card is declined and the conversation ends there.
            steps.push(failed("pay", "card declined", ms(&mut rng)));
        } else {
            if planted && !second_half && rng.below(10) < 3 {
                // version_improvement: 1.0's description did not say what an order id looks like.
                steps.push(failed("get_order", "no order `12345`: ids look like ord_123", ms(&mut rng)));
            }
            steps.push(ok("get_order", ms(&mut rng)));
        }
        for (i, s) in steps.into_iter().enumerate() {
            n += 1;
            let ts = start + i as u64 * 2_000;
            let mut event = json!({
                "callId": format!("m{n}"), "toolName": s.tool, "arguments": s.arguments,
                "isError": s.error.is_some(), "timestamp": ts, "durationMs": s.ms, "userId": user,
            });
            match s.error {
                Some(e) => event["errorMessage"] = json!(e),
                None => event["result"] = json!({"content": [{"type": "text", "text": "ok"}]}),
            }
            let mut line = json!({
                "v": 1, "kind": "call", "ts": ts, "callId": format!("m{n}"), "tool": s.tool,
                "session": format!("conv-{c}"), "model": "claude-sonnet-4.5", "serverVersion": version, "event": event,
            });
            if let Some(h) = hash(s.tool, version) {
                line["toolHash"] = json!(h);
            }
            out.push(line.to_string());
        }
    }
    out.join("\n") + "\n"
}

fn report(planted: bool) -> Report {
    let mut input = ReportInput::new();
    input.read_str(&month(planted));
    input.report()
}

#[test]
fn a_month_with_one_planted_problem_of_each_kind_gives_each_ranked_with_its_evidence() {
    // scripts/report_png.sh takes the month from here for README's picture.
    if let Some(path) = std::env::var_os("MCPEYE_FINDINGS_MONTH") {
        std::fs::write(path, month(true)).unwrap();
    }
    let r = report(true);
    assert_eq!(r.input.skipped.len(), 0, "{:?}", r.input);
    let found: Vec<(FindingKind, Option<&str>, Option<&str>)> =
        r.findings.iter().map(|f| (f.kind, f.tool.as_deref(), f.parameter.as_deref())).collect();
    let mut expected = vec![
        (FindingKind::ParameterErrors, Some("search_orders"), Some("date")),
        (FindingKind::Loop, Some("track_parcel"), None),
        (FindingKind::VersionRegression, Some("update_address"), None),
        (FindingKind::VersionImprovement, Some("get_order"), None),
        (FindingKind::CapabilityAsked, None, None),
        (FindingKind::UnknownTool, Some("cancel_order"), None),
        (FindingKind::NeverCalled, Some("refund"), None),
        (FindingKind::SlowTool, Some("export_report"), None),
        (FindingKind::Abandonment, Some("pay"), None),
        (FindingKind::Feedback, None, None),
    ];
    let mut sorted = found.clone();
    sorted.sort();
    expected.sort();
    assert_eq!(sorted, expected, "found: {found:#?}");

    // Ranked: the problems by the calls they affected, then the tool nobody calls, then what
    // improved.
    let n = r.findings.len();
    assert!(r.findings[..n - 2].windows(2).all(|w| w[0].impact >= w[1].impact), "{found:#?}");
    assert_eq!(
        (r.findings[n - 2].kind, r.findings[n - 1].kind),
        (FindingKind::NeverCalled, FindingKind::VersionImprovement)
    );

    // The evidence of each.
    let get = |kind: FindingKind| r.findings.iter().find(|f| f.kind == kind).unwrap();
    let num = |kind: FindingKind, key: &str| get(kind).evidence[key].as_f64().unwrap();
    assert_eq!(num(FindingKind::ParameterErrors, "errors"), 150.0);
    assert_eq!(num(FindingKind::ParameterErrors, "users"), 10.0, "every 4th conversation of 40 users");
    assert_eq!(num(FindingKind::Abandonment, "conversations"), 60.0);
    assert_eq!(num(FindingKind::UnknownTool, "calls"), 24.0);
    assert_eq!(num(FindingKind::CapabilityAsked, "calls"), 40.0);
    assert_eq!(num(FindingKind::Feedback, "calls"), 30.0);
    assert!(num(FindingKind::Loop, "conversations") >= 3.0);
    assert!(num(FindingKind::VersionRegression, "rateAfter") > num(FindingKind::VersionRegression, "rateBefore"));
    assert!(num(FindingKind::VersionRegression, "z") >= 2.576);
    assert!(num(FindingKind::SlowTool, "p95Ms") >= 2_500.0);
    assert!(num(FindingKind::NeverCalled, "estimatedTokensPerTurn") > 0.0);
    assert_eq!(get(FindingKind::VersionRegression).version.as_deref(), Some("1.0 · ua1.0 → 1.1 · ua1.1"));
    assert!(get(FindingKind::ParameterErrors)
        .examples
        .iter()
        .any(|e| e.text == "`date`: expected a string, got a number"));
    assert!(get(FindingKind::Abandonment).examples.iter().any(|e| e.text == "card declined"));
    assert!(get(FindingKind::CapabilityAsked).what.contains("CSV"));
    assert_eq!(get(FindingKind::CapabilityAsked).evidence["wordings"].as_u64(), Some(3));
    assert!(r.findings.iter().all(|f| !f.action.is_empty() && !f.section.is_empty()));

    // The JSON.
    let json = r.to_json();
    let first = &json["findings"][0];
    for key in ["kind", "evidence", "examples", "action"] {
        assert!(first.get(key).is_some(), "{key} in {first}");
    }
    let param = json["findings"].as_array().unwrap().iter().find(|f| f["kind"] == "parameter_errors").unwrap();
    assert_eq!((param["tool"].as_str(), param["parameter"].as_str()), (Some("search_orders"), Some("date")));
    assert_eq!(json["feedback"]["categories"][0]["category"], "issue");

    // The text: the findings first, in their order.
    let text = r.to_string();
    let at = text.find("What to fix first").unwrap();
    assert!(at < text.find("Intent Gap").unwrap() && at < text.find("Overview").unwrap(), "{text}");
    let mut from = at;
    for f in &r.findings {
        let heading = f.kind.as_str();
        let i = text[from..].find(heading).unwrap_or_else(|| panic!("{heading} after {from}:\n{text}"));
        from += i + heading.len();
    }
    assert!(text.contains("parameter_errors · search_orders · date"), "{text}");

    // The page: the findings before every section, each linking to its section.
    let page = r.to_html();
    let findings_at = page.find("id=\"findings\"").unwrap();
    assert!(findings_at < page.find("id=\"overview\"").unwrap());
    for f in &r.findings {
        assert!(page.contains(&format!("href=\"#{}\"", f.section)));
        assert!(page.contains(&format!("id=\"{}\"", f.section)), "{} has no section", f.section);
    }
    assert_eq!(page.matches("<li class=\"finding\">").count(), r.findings.len());
    in_chromium(&page, &r);
}

#[test]
fn the_same_month_without_the_planted_problems_gives_no_finding() {
    let r = report(false);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    // It is the same kind of month: as many conversations, two versions, feedback and asks.
    assert_eq!(r.overview.conversations, CONVERSATIONS as usize);
    assert_eq!(r.overview.users, USERS as usize);
    assert!(r.versions.tools.len() > 2 && r.feedback.calls > 0 && r.intent_gap.asks.len() == 3);
    assert!(r.to_string().contains("nothing: no finding reached its threshold"));
    assert!(r.to_html().contains("Nothing: no finding reached its threshold."));
}

/// The page as Chromium renders it: the findings come first, one per item, and nothing is
/// logged (as `mcpeye-cli/tests/browser.rs` checks the rest of the page).
fn in_chromium(page: &str, r: &Report) {
    let Some(browser) = chromium() else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "chromium is missing: .ci/run installs it (apt-get install -y chromium)"
        );
        eprintln!("note: chromium is not installed; the browser part is skipped (apt-get install -y chromium)");
        return;
    };
    let dir = std::env::temp_dir().join(format!("mcpeye-findings-month-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("report.html");
    std::fs::write(&file, page).unwrap();
    let (text, log) = rendered(&browser, &file);
    let findings_at = text.find("<h2>What to fix first</h2>").expect("the findings are rendered");
    assert!(findings_at < text.find("<h2>Intent Gap</h2>").unwrap());
    assert_eq!(text.matches("<li class=\"finding\">").count(), r.findings.len());
    assert!(text.contains("<span class=\"kind\">parameter_errors</span>"));
    assert!(text.contains("<a href=\"#paths\">Evidence: Paths</a>"));
    let problems = page_problems(&log);
    assert!(problems.is_empty(), "the page logged: {problems:#?}");
    let _ = std::fs::remove_dir_all(Path::new(&dir));
}

/// Search the user's orders.
#[mcpeye::tool]
fn search_orders(
    /// The day, YYYY-MM-DD.
    date: String,
) -> String {
    date
}

#[test]
fn argument_errors_as_the_rust_sdk_records_them_name_their_parameter() {
    use mcpeye::{testing::MemorySink, Manifest};
    let (tracker, sink) = MemorySink::new();
    let manifest = Manifest::builder().tools(mcpeye::tool_defs![search_orders]).tracker(tracker.clone()).build();
    for i in 0..20 {
        // One call in four sends the day as a number.
        let date = if i % 4 == 0 { json!(20261103) } else { json!("2026-11-03") };
        manifest.call("search_orders", json!({ "date": date }));
    }
    assert!(tracker.flush(std::time::Duration::from_secs(5)).completed);
    let mut input = ReportInput::new();
    for payload in sink.payloads() {
        input.add_value(&payload);
    }
    let r = input.report();
    // Payloads name no user nor conversation: the people are the calls.
    let f = &r.findings[0];
    assert_eq!(
        (f.kind, f.tool.as_deref(), f.parameter.as_deref()),
        (FindingKind::ParameterErrors, Some("search_orders"), Some("date"))
    );
    assert_eq!(f.evidence["errors"].as_u64(), Some(5));
    assert!(f.examples[0].text.starts_with("`date`: expected a string"), "{:?}", f.examples);
}
