//! Headless Chromium (Debian's `chromium`; `.ci/run` installs it) for the tests that look at the
//! HTML report: the root crate's, `mcpeye-cli`'s and `mcpeye-report`'s (those two include this
//! file by `#[path]`).

// Each test uses some of these.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The browser on `PATH`, if there is one.
pub fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |dir| dir.join(name)))
        .find(|p| p.is_file())
}

/// Chromium run headless with `args`, loading nothing from the network: every host resolves to
/// nothing, so a page that fetched anything would log the failure.
pub fn headless(browser: &Path, args: &[&str]) -> Output {
    Command::new(browser)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run"])
        .arg("--host-resolver-rules=MAP * ~NOTFOUND")
        .args(["--enable-logging=stderr", "--v=0"])
        .args(args)
        .output()
        .expect("chromium runs")
}

/// The page at `file` as Chromium renders it (`--dump-dom`), and what Chromium logged.
pub fn rendered(browser: &Path, file: &Path) -> (String, String) {
    let out = headless(browser, &["--dump-dom", &format!("file://{}", file.display())]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// The lines of Chromium's log that tell of a problem with the page: a console message, a
/// refused load (the CSP), a network error, an uncaught exception.
pub fn page_problems(log: &str) -> Vec<&str> {
    log.lines()
        .filter(|l| {
            l.contains("CONSOLE") || l.contains("Refused to") || l.contains("net::ERR") || l.contains("Uncaught")
        })
        .collect()
}
