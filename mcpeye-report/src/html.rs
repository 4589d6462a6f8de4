//! The [`Report`] as one self-contained HTML page: no script, no network (a Content Security
//! Policy forbids every fetch), no external font; bars are inline SVG. Readable at a phone's
//! width: cards wrap, wide tables scroll inside their section.

use crate::render::{example_label, finding_heading, percent, period, section_title, version_label};
use crate::summary::{Report, VersionRow};
use mcpeye_runtime::report::table::grouped;
use std::fmt::Write;

const STYLE: &str = r#"
:root{--fg:#1d2433;--muted:#5b6475;--line:#e3e6ec;--bg:#f6f7f9;--card:#fff;--ok:#3b82f6;--err:#dc2626;--accent:#7c3aed}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:1040px;margin:0 auto;padding:16px}
header h1{margin:0;font-size:1.5rem}
header p{margin:2px 0 0;color:var(--muted)}
section{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:14px 16px;margin:16px 0}
h2{font-size:1.15rem;margin:0 0 8px}
h3{font-size:1rem;margin:14px 0 6px}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(120px,1fr));gap:10px;margin-top:14px}
.card{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:10px 12px}
.card b{display:block;font-size:1.4rem}
.card span{color:var(--muted);font-size:.85rem}
.scroll{overflow-x:auto}
table{border-collapse:collapse;width:100%;font-size:.9rem}
th,td{text-align:left;padding:5px 8px;border-bottom:1px solid var(--line);vertical-align:top}
th{color:var(--muted);font-weight:600;white-space:nowrap}
td.n,th.n{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}
td.bar{width:30%;min-width:90px}
td.sm{width:14%;min-width:60px}
svg.bar{display:block;width:100%;height:12px}
.needs{background:#fff8e6;border-left:4px solid #f0b429;padding:6px 10px;margin:8px 0;font-size:.9rem}
.muted{color:var(--muted)}
.err{color:var(--err)}
.legend{font-size:.8rem;color:var(--muted)}
.legend i{display:inline-block;width:10px;height:10px;border-radius:2px;margin:0 4px 0 10px;vertical-align:-1px}
code,.path{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.85rem}
ul{margin:4px 0;padding-left:20px}
details summary{cursor:pointer;color:var(--muted)}
.finding{border-left:4px solid var(--accent);padding:4px 10px;margin:10px 0}
.finding h3{margin:0 0 4px;font-size:1rem}
.finding .kind{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.8rem;color:var(--accent)}
.finding p{margin:4px 0}
.finding .action{font-weight:600}
ol.findings{padding-left:22px}
footer{color:var(--muted);font-size:.8rem;text-align:center;margin:20px 0}
@media (max-width:600px){main{padding:10px}section{padding:10px}th,td{padding:4px 5px}.hide-narrow{display:none}}
"#;

/// Escapes text for HTML content and attribute values.
fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A value from the input, escaped and isolated in `<bdi>`, so that its own direction (an
/// unclosed right-to-left override in a client name) cannot reorder the text around it.
fn val(text: &str) -> String {
    format!("<bdi>{}</bdi>", esc(text))
}

/// `1 wording`, `3 wordings`.
fn plural(n: usize, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}

/// A horizontal bar: `total` of `max` in blue, of which `part` in red.
fn bar(total: usize, part: usize, max: usize, label: &str) -> String {
    let w = |n: usize| if max == 0 { 0.0 } else { 100.0 * n as f64 / max as f64 };
    format!(
        r#"<svg class="bar" viewBox="0 0 100 10" preserveAspectRatio="none" role="img" aria-label="{}"><rect width="{:.2}" height="10" rx="1" fill="var(--ok)"/><rect x="{:.2}" width="{:.2}" height="10" fill="var(--err)"/></svg>"#,
        esc(label),
        w(total),
        w(total - part.min(total)),
        w(part.min(total))
    )
}

fn needs(out: &mut String, needs: &[String]) {
    for n in needs {
        let _ = write!(out, r#"<p class="needs">Needs {}.</p>"#, esc(n));
    }
}

fn legend(out: &mut String, ok: &str, err: &str) {
    let _ = write!(
        out,
        r#"<p class="legend"><i style="background:var(--ok)"></i>{}<i style="background:var(--err)"></i>{}</p>"#,
        esc(ok),
        esc(err)
    );
}

impl Report {
    /// The report as one HTML page, self-contained and without script.
    ///
    /// ```
    /// let page = mcpeye_report::ReportInput::new().report().to_html();
    /// assert!(page.starts_with("<!doctype html>") && !page.contains("<script"));
    /// ```
    pub fn to_html(&self) -> String {
        let mut out = String::with_capacity(32 * 1024);
        out.push_str("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
        out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">");
        out.push_str(
            // SAFETY: no unsafe code: the word is CSP's, allowing the page's one inline style sheet.
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">",
        );
        out.push_str("<title>mcpeye report</title><style>");
        out.push_str(STYLE);
        out.push_str("</style></head><body><main>\n");
        self.overview_html(&mut out);
        self.findings_html(&mut out);
        self.cards_html(&mut out);
        self.gap_html(&mut out);
        self.tools_html(&mut out);
        self.paths_html(&mut out);
        self.versions_html(&mut out);
        self.models_html(&mut out);
        self.feedback_html(&mut out);
        out.push_str("<footer>Made by <code>mcpeye report</code> from event logs and ingest payloads. No data left this machine.</footer>\n");
        out.push_str("</main></body></html>\n");
        out
    }

    fn overview_html(&self, out: &mut String) {
        let _ = writeln!(
            out,
            "<header><h1>mcpeye report</h1><p>{}</p></header>",
            esc(&period(self).unwrap_or_else(|| "no timestamps".into()))
        );
    }

    /// What to fix first, each finding linking to the section with its evidence.
    fn findings_html(&self, out: &mut String) {
        out.push_str("<section id=\"findings\"><h2>What to fix first</h2><p class=\"muted\">Ranked by impact: the calls each affected. Each kind has a threshold below which it says nothing (docs/report.md).</p>");
        if self.findings.is_empty() {
            out.push_str("<p>Nothing: no finding reached its threshold.</p>");
        } else {
            out.push_str("<ol class=\"findings\">");
            for f in &self.findings {
                let _ = write!(
                    out,
                    "<li class=\"finding\"><h3><span class=\"kind\">{}</span> {}</h3><p>{}</p>",
                    esc(f.kind.as_str()),
                    val(finding_heading(f).split_once(" · ").map_or("", |(_, rest)| rest)),
                    val(&f.what)
                );
                if !f.examples.is_empty() {
                    out.push_str("<ul>");
                    for e in &f.examples {
                        let _ = write!(
                            out,
                            "<li><span class=\"muted\">{}:</span> {}</li>",
                            esc(&example_label(e)),
                            val(&e.text)
                        );
                    }
                    out.push_str("</ul>");
                }
                let _ = write!(
                    out,
                    "<p class=\"action\">→ {}</p><p><a href=\"#{}\">Evidence: {}</a></p></li>",
                    val(&f.action),
                    esc(&f.section),
                    section_title(&f.section)
                );
            }
            out.push_str("</ol>");
        }
        out.push_str("</section>\n");
    }

    fn cards_html(&self, out: &mut String) {
        let o = &self.overview;
        out.push_str("<div class=\"cards\" id=\"overview\">");
        let cards = [
            (grouped(o.calls), "calls".to_owned()),
            (grouped(o.errors), format!("errors ({})", percent(o.error_rate))),
            (grouped(o.users), "users".to_owned()),
            (grouped(o.conversations), "conversations".to_owned()),
            (grouped(o.clients.len()), "clients".to_owned()),
            (grouped(o.models.len()), "models".to_owned()),
        ];
        for (value, label) in cards {
            let _ = write!(out, "<div class=\"card\"><b>{value}</b><span>{}</span></div>", esc(&label));
        }
        out.push_str("</div>\n");
        let mut lines = Vec::new();
        for (what, list) in [("Clients", &o.clients), ("Models", &o.models), ("Server versions", &o.server_versions)] {
            if !list.is_empty() {
                lines.push(format!("{what}: {}", list.iter().map(|v| val(v)).collect::<Vec<_>>().join(", ")));
            }
        }
        lines.push(format!(
            "Read {} payload events and {} event log lines; {} re-sent events counted once, {} lines skipped.",
            o.payload_events, o.log_lines, o.duplicates, o.skipped
        ));
        let _ = writeln!(out, "<p class=\"muted\">{}</p>", lines.join("<br>"));
        let skipped = crate::render::input_lines(&self.input);
        if !skipped.is_empty() {
            let items: Vec<String> = skipped.iter().map(|l| format!("<li>{}</li>", val(l))).collect();
            let _ = writeln!(out, "<div class=\"needs\">Input not used:<ul>{}</ul></div>", items.concat());
        }
    }

    fn gap_html(&self, out: &mut String) {
        let g = &self.intent_gap;
        out.push_str("<section id=\"intent-gap\"><h2>Intent Gap</h2><p class=\"muted\">What users asked for that no tool gives: capability requests, grouped when they say the same thing in other words.</p>");
        if !g.asks.is_empty() {
            let max = g.asks.iter().map(|a| a.count).max().unwrap_or(0);
            out.push_str("<div class=\"scroll\"><table><tr><th>ask</th><th class=\"n\">asked</th><th class=\"bar hide-narrow\"></th></tr>");
            for a in &g.asks {
                let _ = write!(out, "<tr><td>{}", val(&a.ask));
                if a.wordings.len() > 1 || !a.contexts.is_empty() {
                    let _ = write!(out, "<details><summary>{}", plural(a.wordings.len(), "wording"));
                    if !a.contexts.is_empty() {
                        let _ = write!(out, ", {}", plural(a.contexts.len(), "context"));
                    }
                    out.push_str("</summary><ul>");
                    for (w, n) in &a.wordings {
                        let _ = write!(out, "<li>{} <span class=\"muted\">×{n}</span></li>", val(w));
                    }
                    for c in &a.contexts {
                        let _ = write!(out, "<li class=\"muted\">context: {}</li>", val(c));
                    }
                    out.push_str("</ul></details>");
                }
                let _ = write!(
                    out,
                    "</td><td class=\"n\">{}</td><td class=\"bar hide-narrow\">{}</td></tr>",
                    a.count,
                    bar(a.count, 0, max, &format!("{} requests", a.count))
                );
            }
            out.push_str("</table></div>");
        }
        if !g.unknown_tools.is_empty() {
            out.push_str("<h3>Unknown tools agents tried</h3><ul>");
            for u in &g.unknown_tools {
                let _ = write!(out, "<li><code>{}</code> ×{}</li>", val(&u.name), u.calls);
            }
            out.push_str("</ul>");
        }
        if !g.failed.is_empty() {
            out.push_str("<h3>Calls with an intent that ended in an error</h3><div class=\"scroll\"><table><tr><th>tool</th><th>intent</th><th>error</th></tr>");
            for c in &g.failed {
                let _ = write!(
                    out,
                    "<tr><td><code>{}</code></td><td>{}{}</td><td class=\"err\">{}</td></tr>",
                    val(&c.tool),
                    if c.inferred { "<span class=\"muted\">(inferred)</span> " } else { "" },
                    val(&c.intent),
                    val(c.error.as_deref().unwrap_or(""))
                );
            }
            out.push_str("</table></div>");
        }
        if !g.intents.is_empty() {
            out.push_str("<h3>Intents per tool</h3>");
            for t in &g.intents {
                let _ = write!(
                    out,
                    "<details><summary><code>{}</code>: {} of {} calls with an intent, {} distinct{}</summary><ul>",
                    val(&t.tool),
                    t.with_intent,
                    t.calls,
                    t.intents.len(),
                    if t.with_inferred > 0 {
                        format!("; {} inferred by the hook", t.with_inferred)
                    } else {
                        String::new()
                    }
                );
                for i in &t.intents {
                    let _ = write!(out, "<li>{} <span class=\"muted\">×{}</span></li>", val(&i.ask), i.count);
                }
                for i in &t.inferred {
                    let _ = write!(
                        out,
                        "<li><span class=\"muted\">(inferred)</span> {} <span class=\"muted\">×{}</span></li>",
                        val(&i.ask),
                        i.count
                    );
                }
                out.push_str("</ul></details>");
            }
        }
        needs(out, &g.needs);
        out.push_str("</section>\n");
    }

    fn tools_html(&self, out: &mut String) {
        let t = &self.tools;
        out.push_str("<section id=\"tools\"><h2>Tools</h2>");
        if !t.tools.is_empty() {
            legend(out, "calls", "errors");
            let max = t.tools.iter().map(|r| r.calls).max().unwrap_or(0);
            out.push_str("<div class=\"scroll\"><table><tr><th>tool</th><th class=\"n\">calls</th><th class=\"n\">errors</th><th class=\"bar\"></th><th class=\"n\">p50</th><th class=\"n\">p95</th><th class=\"n\">p99</th><th class=\"n\">result</th></tr>");
            for r in &t.tools {
                let _ = write!(
                    out,
                    "<tr><td><code>{}</code></td><td class=\"n\">{}</td><td class=\"n{}\">{} ({})</td><td class=\"bar\">{}</td><td class=\"n\">{} ms</td><td class=\"n\">{} ms</td><td class=\"n\">{} ms</td><td class=\"n\">{}</td></tr>",
                    val(&r.tool),
                    grouped(r.calls),
                    if r.errors > 0 { " err" } else { "" },
                    grouped(r.errors),
                    percent(r.error_rate),
                    bar(r.calls, r.errors, max, &format!("{} calls, {} errors", r.calls, r.errors)),
                    r.p50_ms,
                    r.p95_ms,
                    r.p99_ms,
                    r.result_p50_bytes.map(|b| format!("{b} B")).unwrap_or_else(|| "–".into())
                );
            }
            out.push_str("</table></div><p class=\"legend\">Durations are percentiles (nearest rank); result is the median size of a successful call's result, in bytes of JSON.</p>");
        }
        if !t.never_called.is_empty() {
            out.push_str("<h3>Never called</h3><p>");
            let names: Vec<String> = t.never_called.iter().map(|n| format!("<code>{}</code>", val(n))).collect();
            out.push_str(&names.join(", "));
            out.push_str("</p>");
        }
        needs(out, &t.needs);
        out.push_str("</section>\n");
    }

    fn paths_html(&self, out: &mut String) {
        let p = &self.paths;
        out.push_str("<section id=\"paths\"><h2>Paths</h2>");
        if p.conversations > 0 {
            let _ = write!(
                out,
                "<p class=\"muted\">{} conversations, {} calls. A conversation is the conversation handle, else the session, else the turn.</p>",
                p.conversations, p.calls
            );
            if !p.sequences.is_empty() {
                let max = p.sequences.iter().map(|s| s.count).max().unwrap_or(0);
                out.push_str("<h3>Common sequences</h3><div class=\"scroll\"><table><tr><th>tools in a row</th><th class=\"n\">times</th><th class=\"bar hide-narrow\"></th></tr>");
                for s in p.sequences.iter().take(15) {
                    let path: Vec<String> = s.tools.iter().map(|t| val(t)).collect();
                    let _ = write!(
                        out,
                        "<tr><td class=\"path\">{}</td><td class=\"n\">{}</td><td class=\"bar hide-narrow\">{}</td></tr>",
                        path.join(" → "),
                        s.count,
                        bar(s.count, 0, max, &format!("{} times", s.count))
                    );
                }
                out.push_str("</table></div>");
            }
            if !p.loops.is_empty() {
                out.push_str("<h3>Loops</h3><ul>");
                for l in &p.loops {
                    let _ = write!(
                        out,
                        "<li><code>{}</code> called three times or more in a row, {}× (longest run {})</li>",
                        val(&l.tool),
                        l.runs,
                        l.longest
                    );
                }
                out.push_str("</ul>");
            }
            if !p.recoveries.is_empty() {
                out.push_str("<h3>After an error</h3><div class=\"scroll\"><table><tr><th>tool</th><th class=\"n\">errors</th><th class=\"n\">retried</th><th class=\"n\">recovered</th></tr>");
                for r in &p.recoveries {
                    let _ = write!(
                        out,
                        "<tr><td><code>{}</code></td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
                        val(&r.tool),
                        r.errors,
                        r.retried,
                        r.recovered
                    );
                }
                out.push_str("</table></div>");
            }
            let t = &p.turns;
            if t.turns > 0 {
                let _ = write!(
                    out,
                    "<h3>User turns</h3><p>{} turns, {} calls (at most {} in one turn): {} took several calls, \
                     <span class=\"err\">{} ended on an error</span>. A turn is the calls one request of the user led to, as the client's <code>turnId</code> groups them.</p>",
                    t.turns, t.calls, t.most_calls, t.with_several_calls, t.ended_on_error
                );
            }
            let _ = write!(out, "<h3>Ended on an error: {} of {}</h3>", p.ended_on_error_count, p.conversations);
            if !p.ended_on_error.is_empty() {
                out.push_str("<div class=\"scroll\"><table><tr><th>conversation</th><th class=\"n\">calls</th><th>last tool</th><th>error</th></tr>");
                for e in &p.ended_on_error {
                    let _ = write!(
                        out,
                        "<tr><td class=\"path\">{}</td><td class=\"n\">{}</td><td><code>{}</code></td><td class=\"err\">{}</td></tr>",
                        val(&e.conversation),
                        e.calls,
                        val(&e.tool),
                        val(e.error.as_deref().unwrap_or(""))
                    );
                }
                out.push_str("</table></div>");
            }
        }
        needs(out, &p.needs);
        out.push_str("</section>\n");
    }

    fn versions_html(&self, out: &mut String) {
        let v = &self.versions;
        out.push_str("<section id=\"versions\"><h2>Versions</h2><p class=\"muted\">Each tool across server versions and descriptions (a new description is a new hash): did a change help?</p>");
        if !v.tools.is_empty() {
            out.push_str("<div class=\"scroll\"><table><tr><th>tool</th><th>version</th><th class=\"n\">calls</th><th class=\"n\">error rate</th><th class=\"bar sm hide-narrow\"></th><th class=\"n\">retries</th><th>description</th></tr>");
            let mut last_tool = "";
            let mut last_description: Option<&str> = None;
            for r in &v.tools {
                let first = r.tool != last_tool;
                if first {
                    last_description = None;
                }
                let changed = !first && r.description.is_some() && r.description.as_deref() != last_description;
                let _ = write!(
                    out,
                    "<tr><td>{}</td><td class=\"path\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"bar sm hide-narrow\">{}</td><td class=\"n\">{}</td><td>{}{}</td></tr>",
                    if first { format!("<code>{}</code>", val(&r.tool)) } else { String::new() },
                    val(&version_label(r)),
                    r.calls,
                    percent(r.error_rate),
                    rate_bar(r),
                    r.retries.map_or_else(|| "–".into(), |n| n.to_string()),
                    if changed { "<b>changed:</b> " } else { "" },
                    val(r.description.as_deref().unwrap_or(""))
                );
                last_tool = &r.tool;
                if r.description.is_some() {
                    last_description = r.description.as_deref();
                }
            }
            out.push_str("</table></div>");
        }
        needs(out, &v.needs);
        out.push_str("</section>\n");
    }

    fn models_html(&self, out: &mut String) {
        let m = &self.models;
        out.push_str("<section id=\"models\"><h2>Models</h2>");
        if !m.models.is_empty() {
            let max = m.models.iter().map(|r| r.calls).max().unwrap_or(0);
            out.push_str("<div class=\"scroll\"><table><tr><th>model</th><th class=\"n\">calls</th><th class=\"n\">error rate</th><th class=\"bar\"></th><th class=\"n\">tools</th><th class=\"n\">asks</th></tr>");
            for r in &m.models {
                let _ = write!(
                    out,
                    "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"bar\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
                    val(&r.model),
                    grouped(r.calls),
                    percent(r.error_rate),
                    bar(r.calls, r.errors, max, &format!("{} calls, {} errors", r.calls, r.errors)),
                    r.tools,
                    r.asks
                );
            }
            out.push_str("</table></div>");
            if m.unknown_model_calls > 0 {
                let _ = write!(
                    out,
                    "<p class=\"muted\">{} of an unknown model.</p>",
                    crate::render::count(m.unknown_model_calls, "call")
                );
            }
        }
        needs(out, &m.needs);
        out.push_str("</section>\n");
    }
}

impl Report {
    fn feedback_html(&self, out: &mut String) {
        let fb = &self.feedback;
        out.push_str("<section id=\"feedback\"><h2>Feedback</h2><p class=\"muted\">What agents reported through the feedback tool (<code>mcpeye_send_feedback</code>), grouped like the asks.</p>");
        for c in &fb.categories {
            let _ = write!(
                out,
                "<h3>{}: {}</h3><p class=\"muted\">Task completed: {}, not completed: {}.</p><ul>",
                esc(&c.category.replace('_', " ")),
                plural(c.calls, "report"),
                c.task_completed,
                c.task_not_completed
            );
            for r in &c.reports {
                let _ = write!(out, "<li>{} <span class=\"muted\">×{}</span></li>", val(&r.ask), r.count);
            }
            out.push_str("</ul>");
        }
        needs(out, &fb.needs);
        out.push_str("</section>\n");
    }
}

/// A version's error rate as a bar out of 100 %.
fn rate_bar(r: &VersionRow) -> String {
    let per_mille = (r.error_rate * 1000.0).round() as usize;
    format!(
        r#"<svg class="bar" viewBox="0 0 100 10" preserveAspectRatio="none" role="img" aria-label="error rate {}"><rect width="100" height="10" rx="1" fill="var(--line)"/><rect width="{:.1}" height="10" rx="1" fill="var(--err)"/></svg>"#,
        percent(r.error_rate),
        per_mille as f64 / 10.0
    )
}

#[cfg(test)]
mod tests {
    use crate::ReportInput;

    #[test]
    fn the_page_is_self_contained_escaped_and_shows_every_section() {
        let mut input = ReportInput::new();
        input.read_str(crate::summary::tests::LOG);
        input.read_str(r#"{"toolName":"<script>alert(1)</script>","callId":"x","isError":false}"#);
        let page = input.report().to_html();
        assert!(!page.contains("<script"), "text is escaped");
        assert!(page.contains("&lt;script&gt;"));
        for forbidden in ["http://", "https://", "src=", "@import", "url("] {
            assert!(!page.contains(forbidden), "{forbidden} in the page");
        }
        for id in ["findings", "overview", "intent-gap", "tools", "paths", "versions", "models", "feedback"] {
            assert!(page.contains(&format!("id=\"{id}\"")), "{id}");
        }
        for needle in [
            "export my orders as CSV",
            "<b>changed:</b> <bdi>Order a product by SKU",
            "<bdi>search</bdi> → <bdi>order</bdi>",
            "<svg",
        ] {
            assert!(page.contains(needle), "{needle}");
        }
        // Each value is isolated, so that an unclosed override in one cannot reorder the next.
        let mut input = ReportInput::new();
        input.read_str(r#"{"projectId":"p","identity":{"client":"a\u202e"},"events":[{"callId":"y","toolName":"t","isError":false}]}"#);
        input.read_str(
            r#"{"projectId":"p","identity":{"client":"b"},"events":[{"callId":"z","toolName":"t","isError":false}]}"#,
        );
        assert!(input.report().to_html().contains("Clients: <bdi>a\u{202e}</bdi>, <bdi>b</bdi>"));
        // What was skipped is on the page too.
        let mut input = ReportInput::new();
        input.read_str("{\"toolName\":\"t\",\"isError\":false}\n{torn");
        let page = input.report().to_html();
        assert!(page.contains("Input not used:") && page.contains("text:2 (not JSON)"), "{page}");
        let empty = ReportInput::new().report().to_html();
        assert!(empty.contains("class=\"needs\""));
    }
}
