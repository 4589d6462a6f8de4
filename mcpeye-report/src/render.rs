//! The [`Report`] as terminal tables (`Display`), and the formatting it shares with the page.

use crate::summary::{Example, Finding, InputSection, Report, VersionRow};
use mcpeye_runtime::report::table::{grouped, one_line, Align, Table};
use std::fmt;

/// Rows of a list the terminal shows (the JSON and the page have more).
const SHOWN: usize = 10;
/// Longest text in a cell.
const CELL: usize = 60;

/// `0.25` as `25 %`, `0.033` as `3.3 %`.
pub(crate) fn percent(rate: f64) -> String {
    let p = rate * 100.0;
    if p > 0.0 && p < 10.0 {
        format!("{p:.1} %")
    } else {
        format!("{p:.0} %")
    }
}

/// `1 call`, `3 calls`, with the count grouped.
pub(crate) fn count(n: usize, noun: &str) -> String {
    format!("{} {noun}{}", grouped(n), if n == 1 { "" } else { "s" })
}

/// Epoch milliseconds as `2026-12-03 15:32 UTC`.
pub(crate) fn date(ms: u64) -> String {
    let secs = ms / 1000;
    let days = (secs / 86_400) as i64;
    let (h, m) = ((secs % 86_400) / 3600, (secs % 3600) / 60);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let mo = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(mo <= 2);
    format!("{y:04}-{mo:02}-{d:02} {h:02}:{m:02} UTC")
}

/// The period of the overview, or `None` without timestamps.
pub(crate) fn period(report: &Report) -> Option<String> {
    let (first, last) = (report.overview.first_ms?, report.overview.last_ms?);
    Some(if date(first) == date(last) { date(first) } else { format!("{} to {}", date(first), date(last)) })
}

/// A version's label: `1.1 · o2a7…` (server version, descriptor hash).
pub(crate) fn version_label(row: &VersionRow) -> String {
    match (&row.server_version, &row.hash) {
        (Some(v), Some(h)) => format!("{v} · {h}"),
        (Some(v), None) => v.clone(),
        (None, Some(h)) => h.clone(),
        (None, None) => "?".into(),
    }
}

/// The title of the section a finding's evidence is in (its `section` is the page's anchor).
pub(crate) fn section_title(id: &str) -> &'static str {
    match id {
        "tools" => "Tools",
        "paths" => "Paths",
        "versions" => "Versions",
        "intent-gap" => "Intent Gap",
        "feedback" => "Feedback",
        _ => "Overview",
    }
}

/// A finding's heading: its kind and what it is about (`parameter_errors · search · limit`).
pub(crate) fn finding_heading(f: &Finding) -> String {
    let mut parts = vec![f.kind.as_str().to_owned()];
    parts.extend(f.tool.clone());
    parts.extend(f.parameter.clone());
    parts.extend(f.version.clone());
    parts.join(" · ")
}

/// An example's label: `error`, `intent`, `intent (inferred)`…
pub(crate) fn example_label(e: &Example) -> String {
    if e.inferred {
        format!("{} (inferred)", e.what)
    } else {
        e.what.clone()
    }
}

/// What of the input was skipped and where, one line each (none when all was read).
pub(crate) fn input_lines(input: &InputSection) -> Vec<String> {
    let mut lines = Vec::new();
    if !input.skipped.is_empty() {
        let reasons: Vec<String> = input.skipped.iter().map(|(why, n)| format!("{} {why}", grouped(*n))).collect();
        lines.push(format!("skipped lines: {}", reasons.join(", ")));
        let places: Vec<String> =
            input.places.iter().map(|p| format!("{}:{} ({})", p.file, p.line, p.reason)).collect();
        lines.push(format!("first skipped: {}", places.join(", ")));
    }
    for file in &input.unread_files {
        lines.push(format!("not read: {file}"));
    }
    if input.out_of_order > 0 {
        lines.push(format!(
            "{} taken out of time order in their conversation (logged long after later calls)",
            count(input.out_of_order, "call")
        ));
    }
    lines
}

fn needs(f: &mut fmt::Formatter<'_>, needs: &[String]) -> fmt::Result {
    for n in needs {
        writeln!(f, "  needs {n}")?;
    }
    Ok(())
}

fn more(f: &mut fmt::Formatter<'_>, total: usize) -> fmt::Result {
    if total > SHOWN {
        writeln!(f, "  … and {} more (--json or --html show them)", total - SHOWN)?;
    }
    Ok(())
}

/// The report's text with the input's values as they are; [`Report`]'s `Display` escapes it.
struct Raw<'a>(&'a Report);

/// The text report for a terminal: every character of the input that a terminal would act on
/// is escaped ([`terminal_safe`](crate::terminal_safe)).
impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&crate::terminal::safe_lines(&Raw(self).to_string()))
    }
}

impl fmt::Display for Raw<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let report = self.0;
        let o = &report.overview;
        writeln!(f, "mcpeye report")?;
        writeln!(f, "\nWhat to fix first (ranked by impact; thresholds in docs/report.md)")?;
        if report.findings.is_empty() {
            writeln!(f, "  nothing: no finding reached its threshold")?;
        }
        for (i, x) in report.findings.iter().take(SHOWN).enumerate() {
            writeln!(f, "  {}. {}", i + 1, finding_heading(x))?;
            writeln!(f, "     {}", one_line(&x.what, CELL * 3))?;
            for e in &x.examples {
                writeln!(f, "     e.g. {}: {}", example_label(e), one_line(&e.text, CELL + 10))?;
            }
            writeln!(f, "     → {}", one_line(&x.action, CELL * 3))?;
            writeln!(f, "     evidence: {}", section_title(&x.section))?;
        }
        more(f, report.findings.len())?;
        writeln!(f, "\nOverview")?;
        writeln!(
            f,
            "  {}, {} ({}), {}, {}",
            count(o.calls, "call"),
            count(o.errors, "error"),
            percent(o.error_rate),
            count(o.users, "user"),
            count(o.conversations, "conversation")
        )?;
        if let Some(p) = period(report) {
            writeln!(f, "  period: {p}")?;
        }
        for (what, list) in [("clients", &o.clients), ("models", &o.models), ("server versions", &o.server_versions)] {
            if !list.is_empty() {
                writeln!(f, "  {what}: {}", one_line(&list.join(", "), CELL * 2))?;
            }
        }
        writeln!(
            f,
            "  read: {} payload events, {} event log lines; {} re-sent counted once, {} lines skipped",
            o.payload_events, o.log_lines, o.duplicates, o.skipped
        )?;
        for line in input_lines(&report.input) {
            writeln!(f, "  {line}")?;
        }

        let g = &report.intent_gap;
        writeln!(f, "\nIntent Gap: what users asked for that no tool gives")?;
        if !g.asks.is_empty() {
            let mut t = Table::new(&[("asked", Align::Right), ("ask", Align::Left), ("wordings", Align::Right)]);
            for a in g.asks.iter().take(SHOWN) {
                t.row([grouped(a.count), one_line(&a.ask, CELL), a.wordings.len().to_string()]);
            }
            t.write(f, 2)?;
            more(f, g.asks.len())?;
        }
        if !g.unknown_tools.is_empty() {
            let names: Vec<String> = g.unknown_tools.iter().map(|u| format!("{} ({}×)", u.name, u.calls)).collect();
            writeln!(f, "  unknown tools tried: {}", one_line(&names.join(", "), CELL * 2))?;
        }
        if !g.failed.is_empty() {
            writeln!(f, "  calls with an intent that ended in an error:")?;
            let mut t = Table::new(&[("tool", Align::Left), ("intent", Align::Left), ("error", Align::Left)]);
            for c in g.failed.iter().take(SHOWN) {
                let mark = if c.inferred { "(inferred) " } else { "" };
                t.row([
                    c.tool.clone(),
                    one_line(&format!("{mark}{}", c.intent), CELL),
                    one_line(c.error.as_deref().unwrap_or(""), CELL / 2),
                ]);
            }
            t.write(f, 2)?;
            more(f, g.failed.len())?;
        }
        for t in g.intents.iter().take(SHOWN) {
            if t.with_intent > 0 {
                writeln!(f, "  intents for {} ({} of {} calls):", t.tool, t.with_intent, t.calls)?;
                for i in t.intents.iter().take(3) {
                    writeln!(f, "    {:>3}×  {}", i.count, one_line(&i.ask, CELL + 10))?;
                }
            }
            if t.with_inferred > 0 {
                writeln!(
                    f,
                    "  inferred intents for {} ({} of {} calls, by the infer_intent hook):",
                    t.tool, t.with_inferred, t.calls
                )?;
                for i in t.inferred.iter().take(3) {
                    writeln!(f, "    {:>3}×  (inferred) {}", i.count, one_line(&i.ask, CELL + 10))?;
                }
            }
        }
        needs(f, &g.needs)?;

        let tools = &report.tools;
        writeln!(f, "\nTools, most called first")?;
        if !tools.tools.is_empty() {
            let mut t = Table::new(&[
                ("tool", Align::Left),
                ("calls", Align::Right),
                ("errors", Align::Right),
                ("p50 ms", Align::Right),
                ("p95 ms", Align::Right),
                ("p99 ms", Align::Right),
                ("result p50", Align::Right),
            ]);
            for r in tools.tools.iter().take(SHOWN) {
                t.row([
                    r.tool.clone(),
                    grouped(r.calls),
                    format!("{} ({})", grouped(r.errors), percent(r.error_rate)),
                    r.p50_ms.to_string(),
                    r.p95_ms.to_string(),
                    r.p99_ms.to_string(),
                    r.result_p50_bytes.map(|b| format!("{b} B")).unwrap_or_default(),
                ]);
            }
            t.write(f, 2)?;
            more(f, tools.tools.len())?;
        }
        if !tools.never_called.is_empty() {
            writeln!(f, "  never called: {}", one_line(&tools.never_called.join(", "), CELL * 2))?;
        }
        needs(f, &tools.needs)?;

        let p = &report.paths;
        writeln!(f, "\nPaths within a conversation")?;
        if p.conversations > 0 {
            writeln!(f, "  {} conversations, {} calls", p.conversations, p.calls)?;
            for s in p.sequences.iter().take(5) {
                writeln!(f, "  {:>4}×  {}", s.count, s.tools.join(" → "))?;
            }
            for l in &p.loops {
                writeln!(f, "  loop: {} called 3+ times in a row {}× (longest {})", l.tool, l.runs, l.longest)?;
            }
            for r in &p.recoveries {
                writeln!(
                    f,
                    "  after an error of {}: retried {} of {}, recovered {}",
                    r.tool, r.retried, r.errors, r.recovered
                )?;
            }
            writeln!(f, "  {} ended on an error", count(p.ended_on_error_count, "conversation"))?;
            let turns = &p.turns;
            if turns.turns > 0 {
                writeln!(
                    f,
                    "  {} ({} calls, at most {} in one): {} took several calls, {} ended on an error",
                    count(turns.turns, "user turn"),
                    turns.calls,
                    turns.most_calls,
                    turns.with_several_calls,
                    turns.ended_on_error
                )?;
            }
            for e in p.ended_on_error.iter().take(5) {
                writeln!(
                    f,
                    "    {} ({} calls): {} — {}",
                    one_line(&e.conversation, 24),
                    e.calls,
                    e.tool,
                    one_line(e.error.as_deref().unwrap_or(""), CELL)
                )?;
            }
        }
        needs(f, &p.needs)?;

        let v = &report.versions;
        writeln!(f, "\nTools across versions")?;
        if !v.tools.is_empty() {
            let mut t = Table::new(&[
                ("tool", Align::Left),
                ("version", Align::Left),
                ("calls", Align::Right),
                ("error rate", Align::Right),
                ("retries", Align::Right),
                ("description", Align::Left),
            ]);
            for r in &v.tools {
                t.row([
                    r.tool.clone(),
                    version_label(r),
                    grouped(r.calls),
                    percent(r.error_rate),
                    r.retries.map(|n| n.to_string()).unwrap_or_else(|| "-".into()),
                    one_line(r.description.as_deref().unwrap_or(""), CELL),
                ]);
            }
            t.write(f, 2)?;
        }
        needs(f, &v.needs)?;

        let m = &report.models;
        writeln!(f, "\nModels")?;
        if !m.models.is_empty() {
            let mut t = Table::new(&[
                ("model", Align::Left),
                ("calls", Align::Right),
                ("error rate", Align::Right),
                ("tools", Align::Right),
                ("asks", Align::Right),
            ]);
            for r in m.models.iter().take(SHOWN) {
                t.row([
                    r.model.clone(),
                    grouped(r.calls),
                    percent(r.error_rate),
                    r.tools.to_string(),
                    r.asks.to_string(),
                ]);
            }
            t.write(f, 2)?;
            more(f, m.models.len())?;
            if m.unknown_model_calls > 0 {
                writeln!(f, "  {} of an unknown model", count(m.unknown_model_calls, "call"))?;
            }
        }
        needs(f, &m.needs)?;

        let fb = &report.feedback;
        writeln!(f, "\nFeedback: what agents reported through the feedback tool")?;
        for c in &fb.categories {
            writeln!(
                f,
                "  {}: {} (task completed {}, not completed {})",
                c.category.replace('_', " "),
                count(c.calls, "report"),
                c.task_completed,
                c.task_not_completed
            )?;
            for r in c.reports.iter().take(5) {
                writeln!(f, "    {:>3}×  {}", r.count, one_line(&r.ask, CELL + 10))?;
            }
        }
        needs(f, &fb.needs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ReportInput;

    #[test]
    fn dates_percentages_and_the_terminal_text() {
        assert_eq!(date(0), "1970-01-01 00:00 UTC");
        assert_eq!(date(1_764_770_000_000), "2025-12-03 13:53 UTC");
        assert_eq!(date(951_782_400_000), "2000-02-29 00:00 UTC");
        assert_eq!((percent(0.25), percent(0.033), percent(0.0)), ("25 %".into(), "3.3 %".into(), "0 %".into()));
        let mut input = ReportInput::new();
        input.read_str(crate::summary::tests::LOG);
        let text = input.report().to_string();
        for needle in [
            "mcpeye report\n\nWhat to fix first",
            "nothing: no finding reached its threshold",
            "11 calls, 3 errors (27 %)",
            "export my orders as CSV",
            "never called: refund",
            "search → order",
            "loop: search",
            "after an error of order: retried 1 of 1, recovered 1",
            "1 conversation ended on an error",
            "1.1 · o2",
            "claude-4",
        ] {
            assert!(text.contains(needle), "{needle}:\n{text}");
        }
        let empty = ReportInput::new().report().to_string();
        assert!(empty.contains("needs conversations"), "{empty}");
    }

    #[test]
    fn values_cannot_act_on_the_terminal() {
        let mut input = ReportInput::new();
        input.read_str(
            r#"{"projectId":"p","identity":{"client":"evil\u202eeno\u001b]52;c;cHduZWQ=\u0007"},"events":[{"callId":"a","toolName":"x\u001b[2Jy","isError":true,"errorMessage":"bad\u009b31m"}]}"#,
        );
        let text = input.report().to_string();
        assert!(!text.chars().any(|c| c != '\n' && (c.is_control() || c == '\u{202e}')), "{text:?}");
        for needle in [r"evil\u{202e}eno\u{1b}]52;c;cHduZWQ=\u{7}", r"x\u{1b}[2Jy"] {
            assert!(text.contains(needle), "{needle}:\n{text}");
        }
    }
}
