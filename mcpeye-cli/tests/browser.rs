//! The HTML report in a real browser (Debian's `chromium`, headless): the page of a scripted
//! shop session shows its sections once rendered, logs no error, loads nothing, and renders at
//! a phone's width and a desktop's. `.ci/run` installs chromium; without it this test fails
//! under `CI=true` and is skipped, with a note, elsewhere.

#[path = "../../tests/common/chromium.rs"]
mod chromium;

use chromium::{chromium, headless, page_problems};
use std::path::Path;
use std::process::Command;

#[test]
fn the_html_report_renders_in_chromium_without_errors() {
    let Some(browser) = chromium() else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "chromium is missing: .ci/run installs it (apt-get install -y chromium)"
        );
        eprintln!("note: chromium is not installed; the browser test is skipped (apt-get install -y chromium)");
        return;
    };
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let dir = std::env::temp_dir().join(format!("mcpeye-browser-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let page = dir.join("report.html");
    let status = Command::new(env!("CARGO_BIN_EXE_mcpeye"))
        .args(["report", "--html"])
        .arg(&page)
        .arg(fixtures.join("events.jsonl"))
        .arg(fixtures.join("payloads.jsonl"))
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let url = format!("file://{}", page.display());

    let dom = headless(&browser, &["--dump-dom", &url]);
    assert!(dom.status.success(), "{}", String::from_utf8_lossy(&dom.stderr));
    let text = String::from_utf8_lossy(&dom.stdout);
    // The findings come first (the fixtures' session is too small for any: the page says so).
    let findings = text.find("<h2>What to fix first</h2>").expect("the findings section");
    assert!(findings < text.find("<h2>Intent Gap</h2>").unwrap_or(0), "the findings come first");
    for needle in [
        "Nothing: no finding reached its threshold.",
        "<h2>Feedback</h2>",
        "<h2>Intent Gap</h2>",
        "export my orders as CSV",
        "3 wordings",
        "<h2>Tools</h2>",
        "track_parcel",
        "<h2>Paths</h2>",
        "<bdi>search_products</bdi> → <bdi>place_order</bdi>",
        "Ended on an error: 1 of 6",
        "<h2>Versions</h2>",
        "<b>changed:</b> <bdi>Place an order for a product by its SKU",
        "<h2>Models</h2>",
        "claude-sonnet-4.5",
        "<svg class=\"bar\"",
    ] {
        assert!(text.contains(needle), "{needle} not in the rendered page");
    }
    let log = String::from_utf8_lossy(&dom.stderr);
    let problems = page_problems(&log);
    assert!(problems.is_empty(), "the page logged: {problems:#?}");

    for (name, size) in [("desktop", "1100,1600"), ("phone", "390,1600")] {
        let png = dir.join(format!("{name}.png"));
        let shot =
            headless(&browser, &[&format!("--screenshot={}", png.display()), &format!("--window-size={size}"), &url]);
        assert!(shot.status.success(), "{}", String::from_utf8_lossy(&shot.stderr));
        let bytes = std::fs::read(&png).unwrap();
        assert!(bytes.starts_with(b"\x89PNG") && bytes.len() > 10_000, "{name}: {} bytes", bytes.len());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
