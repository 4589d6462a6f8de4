//! What to fix first: the findings, each worked out by an accumulator that the fold feeds call
//! by call (`Findings::call`, and in each conversation's time order `Findings::looped` and
//! `Findings::ended`), then [`Findings::evaluate`]d once with what the other sections counted
//! (the model is DataFusion's `Accumulator`: `update` per row, `evaluate` at the end).
//!
//! Memory grows with distinct things only: per (tool, parameter) named by argument errors, per
//! unknown name, per distinct capability wording and feedback text, its counts, a few examples,
//! and the distinct users and conversations behind it (64-bit fingerprints, at most
//! [`SPREAD_CAP`] of each); per tool that loops or ends conversations, counts.
//!
//! Each kind has a threshold below which it says nothing, so that a month without a problem
//! gives no finding; the thresholds are the constants below, documented in docs/report.md.

use crate::asks;
use crate::fold::fingerprint;
use crate::input::CallView;
use crate::render::percent;
use crate::summary::{Ask, Example, FeedbackCategory, FeedbackSection, Finding, FindingKind};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use serde_json::Number;
use std::collections::BTreeMap;

/// The feedback tool's reserved name (docs/wire-format.md: an event of a reserved tool name).
pub(crate) const FEEDBACK_TOOL: &str = "mcpeye_send_feedback";
/// The feedback tool's categories, in the order the report shows them.
const CATEGORIES: [&str; 4] = ["issue", "missing_capability", "other", "praise"];

/// `parameter_errors`: argument errors naming the parameter, at least…
pub(crate) const PARAM_MIN_ERRORS: usize = 5;
/// …and at least this share of the tool's calls.
pub(crate) const PARAM_MIN_SHARE: f64 = 0.05;
/// `parameter_errors`, `unknown_tool`, `feedback`: distinct users behind it, at least
/// (conversations when no call names a user).
pub(crate) const MIN_PEOPLE: usize = 2;
/// `capability_asked`: distinct users (conversations when no call names a user), at least.
pub(crate) const ASK_MIN_PEOPLE: usize = 3;
/// `loop`: a run is this many calls of one tool in a row, or more…
pub(crate) const LOOP_RUN: usize = 3;
/// …found in at least this many conversations…
pub(crate) const LOOP_MIN_CONVERSATIONS: usize = 3;
/// …with at least this share of the tool's calls in runs.
pub(crate) const LOOP_MIN_SHARE: f64 = 0.10;
/// `version_*`: calls on each side, at least…
pub(crate) const VERSION_MIN_CALLS: usize = 30;
/// …a two-sided two-proportion z-test significant at 1 % (|z| ≥ 2.576)…
pub(crate) const VERSION_Z: f64 = 2.576;
/// …and a change of at least 5 percentage points.
pub(crate) const VERSION_MIN_DELTA: f64 = 0.05;
/// `unknown_tool`: calls of the name, at least.
pub(crate) const UNKNOWN_MIN_CALLS: usize = 3;
/// `never_called`: calls of the listed tools, at least (so that "never" means something).
pub(crate) const NEVER_MIN_CALLS: usize = 100;
/// `slow_tool`: calls of the tool, and of each tool it is compared with, at least…
pub(crate) const SLOW_MIN_CALLS: usize = 20;
/// …its p95 at least this many times the median p95 of the others (at least two of them)…
pub(crate) const SLOW_FACTOR: u64 = 4;
/// …and at least one second.
pub(crate) const SLOW_MIN_MS: u64 = 1000;
/// `abandonment`: conversations ended on the tool's error, at least…
pub(crate) const ABANDON_MIN_CONVERSATIONS: usize = 3;
/// …and at least this share of the conversations whose last call was the tool.
pub(crate) const ABANDON_MIN_SHARE: f64 = 0.25;
/// Distinct users (and conversations) counted per thing, at most: enough for every threshold
/// and to tell a few from many, without a set the size of the user base per parameter.
pub(crate) const SPREAD_CAP: usize = 4096;
/// Examples of each sort kept per finding.
const EXAMPLES: usize = 3;
/// Characters of an example kept.
const EXAMPLE_CHARS: usize = 240;

type Id = u32;

/// The distinct users and conversations behind something, and its calls.
#[derive(Default, Clone)]
struct Spread {
    calls: usize,
    users: HashSet<u64>,
    conversations: HashSet<u64>,
}

impl Spread {
    fn add(&mut self, c: &CallView<'_>) {
        self.calls += 1;
        for (set, v) in [(&mut self.users, c.user), (&mut self.conversations, c.thread())] {
            if let Some(v) = v {
                if set.len() < SPREAD_CAP {
                    set.insert(fingerprint(v));
                }
            }
        }
    }

    fn merge(&mut self, other: &Spread) {
        self.calls += other.calls;
        for (mine, theirs) in [(&mut self.users, &other.users), (&mut self.conversations, &other.conversations)] {
            for &v in theirs {
                if mine.len() < SPREAD_CAP {
                    mine.insert(v);
                }
            }
        }
    }

    /// How many people: distinct users when a call named one, else distinct conversations,
    /// else calls (an input without either cannot tell people apart); and the noun.
    fn people(&self) -> (usize, &'static str) {
        if !self.users.is_empty() {
            (self.users.len(), "user")
        } else if !self.conversations.is_empty() {
            (self.conversations.len(), "conversation")
        } else {
            (self.calls, "call")
        }
    }

    fn evidence(&self, e: &mut Evidence) {
        e.int("users", self.users.len());
        e.int("conversations", self.conversations.len());
    }
}

/// A few distinct examples of each sort.
#[derive(Default, Clone)]
struct Examples(Vec<Example>);

impl Examples {
    fn add(&mut self, what: &'static str, text: &str, inferred: bool) {
        let text = text.trim();
        if text.is_empty() || self.0.iter().filter(|e| e.what == what).count() >= EXAMPLES {
            return;
        }
        let text: String = text.chars().take(EXAMPLE_CHARS).collect();
        if !self.0.iter().any(|e| e.what == what && e.text == text) {
            self.0.push(Example { what: what.to_owned(), text, inferred });
        }
    }

    /// The call's intent, its own or else the inferred one (marked).
    fn intent(&mut self, c: &CallView<'_>) {
        match (c.intent, c.inferred_intent) {
            (Some(i), _) => self.add("intent", i, false),
            (None, Some(i)) => self.add("intent", i, true),
            _ => {}
        }
    }
}

#[derive(Default)]
struct ParamStats {
    errors: Spread,
    examples: Examples,
}

#[derive(Default)]
struct LoopStats {
    runs: usize,
    conversations: usize,
    /// Calls in runs, and those beyond each run's first.
    calls: usize,
    repeated: usize,
    longest: usize,
    examples: Examples,
}

#[derive(Default)]
struct EndStats {
    /// Conversations whose last call was the tool, and those where it failed.
    ended: usize,
    on_error: usize,
    /// The calls of the conversations that ended on its error.
    calls: usize,
    examples: Examples,
}

#[derive(Default)]
struct UnknownStats {
    spread: Spread,
    examples: Examples,
}

/// One category's feedback texts, in order of first arrival.
#[derive(Default)]
struct FeedbackTexts {
    calls: usize,
    completed: usize,
    not_completed: usize,
    texts: Vec<(Box<str>, Spread, usize)>,
    index: HashMap<Box<str>, usize>,
}

/// The findings' state during the pass.
#[derive(Default)]
pub(crate) struct Findings {
    params: HashMap<Id, HashMap<Box<str>, ParamStats>>,
    loops: HashMap<Id, LoopStats>,
    ends: HashMap<Id, EndStats>,
    unknown: HashMap<Id, UnknownStats>,
    /// Per capability wording (`asks::wording_key`'s fingerprint), who asked.
    asks: HashMap<u64, Spread>,
    feedback: [FeedbackTexts; 4],
}

/// What the other sections counted, for [`Findings::evaluate`].
pub(crate) struct Facts<'a> {
    /// Tool names by id.
    pub names: &'a [Box<str>],
    /// The server's tools that were called.
    pub tools: Vec<ToolFacts<'a>>,
    /// Each tool's versions, in order of their first call.
    pub versions: Vec<VersionFacts<'a>>,
    /// The Intent Gap's grouped asks.
    pub asks: &'a [Ask],
    /// Whether a tool list was read, and the listed tools never called, with a description.
    pub tool_list: bool,
    pub never_called: Vec<(&'a str, Option<&'a str>)>,
}

/// A called tool's numbers.
pub(crate) struct ToolFacts<'a> {
    pub id: Id,
    pub calls: usize,
    pub p95_ms: u64,
    /// Its duration histogram (ms → calls).
    pub durations: &'a BTreeMap<u64, u64>,
}

/// One version of a tool.
pub(crate) struct VersionFacts<'a> {
    pub tool: Id,
    pub label: String,
    pub calls: usize,
    pub errors: usize,
    /// `None` without conversations.
    pub retries: Option<usize>,
    pub description: Option<&'a str>,
}

/// A finding's numbers, by name.
#[derive(Default)]
struct Evidence(BTreeMap<String, Number>);

impl Evidence {
    fn int(&mut self, k: &str, v: usize) {
        self.0.insert(k.to_owned(), Number::from(v as u64));
    }
    fn num(&mut self, k: &str, v: f64) {
        // Rounded: the evidence is for reading, and a stable JSON.
        if let Some(n) = Number::from_f64((v * 10_000.0).round() / 10_000.0) {
            self.0.insert(k.to_owned(), n);
        }
    }
}

/// The parameters an argument error names, each once, with its problem: the first segment of
/// each problem's path in the Rust SDK's message (`` invalid arguments: `filter.tags[2]`: expected
/// a string, got a number; `limit`: … `` names `filter` and `limit`). Other errors name none.
fn named_parameters(error: &str) -> impl Iterator<Item = (&str, &str)> {
    let problems = error.strip_prefix("invalid arguments: ").unwrap_or("");
    let mut seen: [&str; 8] = [""; 8];
    let mut n = 0;
    problems.split("; ").filter_map(move |problem| {
        let path = problem.strip_prefix('`')?.split('`').next()?;
        let param = path.split(['.', '[']).next()?;
        // The whole arguments (`arguments`) or a name not shown (`[…]`) is no parameter.
        if param.is_empty() || (param == "arguments" && path == "arguments") || seen[..n].contains(&param) {
            return None;
        }
        if n < seen.len() {
            seen[n] = param;
            n += 1;
        }
        Some((param, problem))
    })
}

impl Findings {
    /// A call, as read (`tool` is its number; `unknown` a name the server does not have;
    /// `reserved` mcpeye's own tools).
    pub(crate) fn call(&mut self, c: &CallView<'_>, tool: Id, unknown: bool, reserved: bool) {
        if let Some(capability) = c.capability {
            self.asks.entry(fingerprint(&asks::wording_key(capability))).or_default().add(c);
        }
        if c.tool == FEEDBACK_TOOL && !c.is_error {
            self.feedback(c);
        }
        if unknown {
            let u = self.unknown.entry(tool).or_default();
            u.spread.add(c);
            u.examples.intent(c);
        } else if c.is_error && !reserved {
            if let Some(error) = c.error {
                for (param, problem) in named_parameters(error) {
                    let by_tool = self.params.entry(tool).or_default();
                    if !by_tool.contains_key(param) {
                        by_tool.insert(param.into(), ParamStats::default());
                    }
                    let p = by_tool.get_mut(param).expect("inserted above");
                    p.errors.add(c);
                    p.examples.add("error", problem, false);
                    p.examples.intent(c);
                }
            }
        }
    }

    fn feedback(&mut self, c: &CallView<'_>) {
        let category = c.feedback.map(str::trim).and_then(|k| CATEGORIES.iter().position(|&x| x == k));
        let f = &mut self.feedback[category.unwrap_or(2)];
        f.calls += 1;
        match c.task_completed {
            Some(true) => f.completed += 1,
            Some(false) => f.not_completed += 1,
            None => {}
        }
        if let Some(text) = c.feedback_text {
            let i = match f.index.get(text) {
                Some(&i) => i,
                None => {
                    f.texts.push((text.into(), Spread::default(), 0));
                    f.index.insert(text.into(), f.texts.len() - 1);
                    f.texts.len() - 1
                }
            };
            let t = &mut f.texts[i];
            t.1.add(c);
            t.2 += usize::from(c.task_completed == Some(false));
        }
    }

    /// A call of a conversation, in time order, that makes its tool's run `run` calls long
    /// (called from `run` = [`LOOP_RUN`] on). `looped` is the conversation's tools already
    /// counted as looping, so that each conversation counts once per tool.
    pub(crate) fn looped(&mut self, looped: &mut Vec<Id>, tool: Id, run: usize, error: Option<&str>) {
        let l = self.loops.entry(tool).or_default();
        if run == LOOP_RUN {
            l.runs += 1;
            l.calls += LOOP_RUN;
            l.repeated += LOOP_RUN - 1;
        } else {
            l.calls += 1;
            l.repeated += 1;
        }
        l.longest = l.longest.max(run);
        if !looped.contains(&tool) {
            looped.push(tool);
            l.conversations += 1;
        }
        if let Some(e) = error {
            l.examples.add("error", e, false);
        }
    }

    /// A conversation's last call (in time order), at the end of the pass.
    pub(crate) fn ended(&mut self, tool: Id, is_error: bool, error: Option<&str>, calls: usize) {
        let e = self.ends.entry(tool).or_default();
        e.ended += 1;
        if is_error {
            e.on_error += 1;
            e.calls += calls;
            if let Some(m) = error {
                e.examples.add("error", m, false);
            }
        }
    }

    /// The findings ranked, and the Feedback section.
    pub(crate) fn evaluate(self, facts: &Facts<'_>) -> (Vec<Finding>, FeedbackSection) {
        let mut out = Vec::new();
        let name = |id: Id| facts.names[id as usize].to_string();
        let calls_of = |id: Id| facts.tools.iter().find(|t| t.id == id).map_or(0, |t| t.calls);
        self.parameter_errors(facts, &name, &calls_of, &mut out);
        self.loops(&name, &calls_of, &mut out);
        versions(facts, &name, &mut out);
        self.capabilities(facts, &mut out);
        self.unknown_tools(&name, &mut out);
        never_called(facts, &mut out);
        slow_tools(facts, &name, &mut out);
        self.abandonment(&name, &calls_of, &mut out);
        let feedback = self.feedback_section(&mut out);
        // Problems by the calls they affected; then what costs context but no call; then what
        // improved. Ties by kind, tool and parameter, so that the order is the same every time.
        let tier = |f: &Finding| match f.kind {
            FindingKind::VersionImprovement => 2,
            FindingKind::NeverCalled => 1,
            _ => 0,
        };
        let tokens = |f: &Finding| f.evidence.get("estimatedTokensPerTurn").and_then(Number::as_u64).unwrap_or(0);
        out.sort_by(|a, b| {
            tier(a)
                .cmp(&tier(b))
                .then(b.impact.total_cmp(&a.impact))
                .then(tokens(b).cmp(&tokens(a)))
                .then(a.kind.cmp(&b.kind))
                .then_with(|| (&a.tool, &a.parameter, &a.version).cmp(&(&b.tool, &b.parameter, &b.version)))
        });
        (out, feedback)
    }

    fn parameter_errors(
        &self,
        _facts: &Facts<'_>,
        name: &dyn Fn(Id) -> String,
        calls_of: &dyn Fn(Id) -> usize,
        out: &mut Vec<Finding>,
    ) {
        for (&tool, params) in &self.params {
            let calls = calls_of(tool);
            for (param, p) in params {
                let errors = p.errors.calls;
                let (people, noun) = p.errors.people();
                let share = rate(errors, calls);
                if errors < PARAM_MIN_ERRORS || people < MIN_PEOPLE || share < PARAM_MIN_SHARE {
                    continue;
                }
                let tool_name = name(tool);
                let mut e = Evidence::default();
                e.int("errors", errors);
                e.int("calls", calls);
                e.num("errorShare", share);
                p.errors.evidence(&mut e);
                out.push(Finding {
                    kind: FindingKind::ParameterErrors,
                    tool: Some(tool_name.clone()),
                    parameter: Some(param.to_string()),
                    version: None,
                    what: format!(
                        "{errors} argument errors named `{param}` ({} of {tool_name}'s {calls} calls), from {}",
                        percent(share),
                        plural(people, noun)
                    ),
                    evidence: e.0,
                    examples: p.examples.0.clone(),
                    action: format!(
                        "Describe `{param}` better in {tool_name}'s input schema (its format, allowed values, an example), or accept what agents send for it."
                    ),
                    impact: errors as f64,
                    section: "tools".into(),
                });
            }
        }
    }

    fn loops(&self, name: &dyn Fn(Id) -> String, calls_of: &dyn Fn(Id) -> usize, out: &mut Vec<Finding>) {
        for (&tool, l) in &self.loops {
            let calls = calls_of(tool);
            let share = rate(l.calls, calls);
            if calls == 0 || l.conversations < LOOP_MIN_CONVERSATIONS || share < LOOP_MIN_SHARE {
                continue;
            }
            let tool_name = name(tool);
            let mut e = Evidence::default();
            e.int("conversations", l.conversations);
            e.int("runs", l.runs);
            e.int("longest", l.longest);
            e.int("callsInRuns", l.calls);
            e.int("repeatedCalls", l.repeated);
            e.int("calls", calls);
            e.num("shareInRuns", share);
            out.push(Finding {
                kind: FindingKind::Loop,
                tool: Some(tool_name.clone()),
                parameter: None,
                version: None,
                what: format!(
                    "{tool_name} called {LOOP_RUN} times or more in a row in {} ({} runs, the longest {}): {} of its {calls} calls",
                    plural(l.conversations, "conversation"),
                    l.runs,
                    l.longest,
                    percent(share)
                ),
                evidence: e.0,
                examples: l.examples.0.clone(),
                action: format!(
                    "Make {tool_name}'s results and errors say what to do next (what to change, which tool to call instead), so that agents stop calling it again and again."
                ),
                impact: l.repeated as f64,
                section: "paths".into(),
            });
        }
    }

    fn capabilities(&self, facts: &Facts<'_>, out: &mut Vec<Finding>) {
        for ask in facts.asks {
            let mut spread = Spread::default();
            for (w, _) in &ask.wordings {
                if let Some(s) = self.asks.get(&fingerprint(&asks::wording_key(w))) {
                    spread.merge(s);
                }
            }
            let (people, noun) = spread.people();
            if people < ASK_MIN_PEOPLE {
                continue;
            }
            let mut e = Evidence::default();
            e.int("calls", ask.count);
            e.int("wordings", ask.wordings.len());
            spread.evidence(&mut e);
            let mut ex = Examples::default();
            for (w, _) in &ask.wordings {
                ex.add("ask", w, false);
            }
            for c in &ask.contexts {
                ex.add("context", c, false);
            }
            out.push(Finding {
                kind: FindingKind::CapabilityAsked,
                tool: None,
                parameter: None,
                version: None,
                what: format!(
                    "{} for “{}” from {} ({})",
                    plural(ask.count, "ask"),
                    ask.ask,
                    plural(people, noun),
                    plural(ask.wordings.len(), "wording")
                ),
                evidence: e.0,
                examples: ex.0,
                action: format!(
                    "Build it: a tool (or a parameter of one) for “{}”; the contexts say what for.",
                    ask.ask
                ),
                impact: ask.count as f64,
                section: "intent-gap".into(),
            });
        }
    }

    fn unknown_tools(&self, name: &dyn Fn(Id) -> String, out: &mut Vec<Finding>) {
        for (&tool, u) in &self.unknown {
            let (people, noun) = u.spread.people();
            if u.spread.calls < UNKNOWN_MIN_CALLS || people < MIN_PEOPLE {
                continue;
            }
            let tool_name = name(tool);
            let mut e = Evidence::default();
            e.int("calls", u.spread.calls);
            u.spread.evidence(&mut e);
            out.push(Finding {
                kind: FindingKind::UnknownTool,
                tool: Some(tool_name.clone()),
                parameter: None,
                version: None,
                what: format!(
                    "agents called {tool_name}, which the server does not have, {} times, from {}",
                    u.spread.calls,
                    plural(people, noun)
                ),
                evidence: e.0,
                examples: u.examples.0.clone(),
                action: format!(
                    "Add {tool_name} as an alias of the tool agents mean (their intents say which), or rename that tool to what they expect."
                ),
                impact: u.spread.calls as f64,
                section: "intent-gap".into(),
            });
        }
    }

    fn abandonment(&self, name: &dyn Fn(Id) -> String, calls_of: &dyn Fn(Id) -> usize, out: &mut Vec<Finding>) {
        for (&tool, e) in &self.ends {
            let share = rate(e.on_error, e.ended);
            // Only the server's tools: an unknown name is `unknown_tool`'s.
            if calls_of(tool) == 0 || e.on_error < ABANDON_MIN_CONVERSATIONS || share < ABANDON_MIN_SHARE {
                continue;
            }
            let tool_name = name(tool);
            let mut ev = Evidence::default();
            ev.int("conversations", e.on_error);
            ev.int("endedOnTool", e.ended);
            ev.num("share", share);
            ev.int("callsInThem", e.calls);
            out.push(Finding {
                kind: FindingKind::Abandonment,
                tool: Some(tool_name.clone()),
                parameter: None,
                version: None,
                what: format!(
                    "{} ended on an error of {tool_name} ({} of the {} whose last call was {tool_name}), after {} calls in all",
                    plural(e.on_error, "conversation"),
                    percent(share),
                    e.ended,
                    e.calls
                ),
                evidence: ev.0,
                examples: e.examples.0.clone(),
                action: format!(
                    "Make {tool_name}'s errors say how to recover (what to send instead, which tool to call), so that agents do not give up on them."
                ),
                impact: e.calls as f64,
                section: "paths".into(),
            });
        }
    }

    /// The Feedback section, and a finding per group of reports (not praise) from several
    /// people.
    fn feedback_section(&self, out: &mut Vec<Finding>) -> FeedbackSection {
        let mut section = FeedbackSection::default();
        for (category, f) in CATEGORIES.iter().zip(&self.feedback) {
            if f.calls == 0 {
                continue;
            }
            section.calls += f.calls;
            let grouped = asks::group_counted(f.texts.iter().map(|(t, s, _)| (&**t, s.calls)), true, crate::fold::KEEP);
            let mut reports = Vec::new();
            for (g, count) in grouped {
                let mut spread = Spread::default();
                let mut not_completed = 0;
                for &m in &g.members {
                    spread.merge(&f.texts[m].1);
                    not_completed += f.texts[m].2;
                }
                let ask = Ask { ask: g.wordings[0].0.clone(), count, wordings: g.wordings, contexts: Vec::new() };
                let (people, noun) = spread.people();
                if *category != "praise" && people >= MIN_PEOPLE {
                    let mut e = Evidence::default();
                    e.int("calls", count);
                    e.int("taskNotCompleted", not_completed);
                    spread.evidence(&mut e);
                    let mut ex = Examples::default();
                    for (w, _) in &ask.wordings {
                        ex.add("feedback", w, false);
                    }
                    out.push(Finding {
                        kind: FindingKind::Feedback,
                        tool: None,
                        parameter: None,
                        version: None,
                        what: format!(
                            "{} ({}) “{}” from {}, {not_completed} saying the task was not completed",
                            plural(count, "report"),
                            category.replace('_', " "),
                            ask.ask,
                            plural(people, noun)
                        ),
                        evidence: e.0,
                        examples: ex.0,
                        action: if *category == "missing_capability" {
                            format!("Build what it asks for (“{}”), as an ask of the Intent Gap.", ask.ask)
                        } else {
                            format!("Fix what it reports (“{}”); the wordings say it in the agents' words.", ask.ask)
                        },
                        impact: count as f64,
                        section: "feedback".into(),
                    });
                }
                reports.push(ask);
            }
            section.categories.push(FeedbackCategory {
                category: (*category).to_owned(),
                calls: f.calls,
                task_completed: f.completed,
                task_not_completed: f.not_completed,
                reports,
            });
        }
        if section.calls == 0 {
            section
                .needs
                .push(format!("calls of {FEEDBACK_TOOL} (ManifestBuilder::feedback(true)); none in the input"));
        }
        section
    }
}

/// `version_regression` / `version_improvement`: each tool's consecutive versions compared,
/// on the error rate and (with conversations) the retry rate, by a two-proportion z-test.
fn versions(facts: &Facts<'_>, name: &dyn Fn(Id) -> String, out: &mut Vec<Finding>) {
    for pair in facts.versions.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        if a.tool != b.tool || a.calls < VERSION_MIN_CALLS || b.calls < VERSION_MIN_CALLS {
            continue;
        }
        // The more significant of the two rates.
        let mut tests = vec![("error rate", a.errors, b.errors)];
        if let (Some(ra), Some(rb)) = (a.retries, b.retries) {
            tests.push(("retry rate", ra, rb));
        }
        let best = tests
            .into_iter()
            .map(|(metric, x1, x2)| {
                let (p1, p2) = (rate(x1, a.calls), rate(x2, b.calls));
                (metric, p1, p2, z_test(x1, a.calls, x2, b.calls))
            })
            .filter(|&(_, p1, p2, z)| z.abs() >= VERSION_Z && (p2 - p1).abs() >= VERSION_MIN_DELTA)
            .max_by(|x, y| x.3.abs().total_cmp(&y.3.abs()));
        let Some((metric, p1, p2, z)) = best else { continue };
        let tool = name(a.tool);
        let worse = p2 > p1;
        let mut e = Evidence::default();
        e.int("callsBefore", a.calls);
        e.int("callsAfter", b.calls);
        e.num("rateBefore", p1);
        e.num("rateAfter", p2);
        e.num("z", z);
        let mut ex = Examples::default();
        for d in [a.description, b.description].into_iter().flatten() {
            ex.add("description", d, false);
        }
        let version = format!("{} → {}", a.label, b.label);
        out.push(Finding {
            kind: if worse { FindingKind::VersionRegression } else { FindingKind::VersionImprovement },
            tool: Some(tool.clone()),
            parameter: None,
            what: format!(
                "{tool}'s {metric} {} from {} to {} with {version} ({} and {} calls; two-proportion z-test, z = {z:.1}, significant at 1 %)",
                if worse { "rose" } else { "fell" },
                percent(p1),
                percent(p2),
                a.calls,
                b.calls
            ),
            version: Some(version),
            evidence: e.0,
            examples: ex.0,
            action: if worse {
                format!("Look at what changed in {tool} between {} and {} (the descriptions are under Versions): fix it or go back.", a.label, b.label)
            } else {
                format!("Keep what changed in {tool} in {}; the same kind of change may help the other tools.", b.label)
            },
            impact: (p2 - p1).abs() * b.calls as f64,
            section: "versions".into(),
        });
    }
}

/// The two-proportion z statistic of `x1` in `n1` against `x2` in `n2` (pooled variance; 0
/// when both rates are 0 or 1).
fn z_test(x1: usize, n1: usize, x2: usize, n2: usize) -> f64 {
    let (n1f, n2f) = (n1 as f64, n2 as f64);
    let pooled = (x1 + x2) as f64 / (n1f + n2f);
    let se = (pooled * (1.0 - pooled) * (1.0 / n1f + 1.0 / n2f)).sqrt();
    if se == 0.0 {
        0.0
    } else {
        (x2 as f64 / n2f - x1 as f64 / n1f) / se
    }
}

/// `never_called`: listed tools nobody called while the others took enough calls.
fn never_called(facts: &Facts<'_>, out: &mut Vec<Finding>) {
    let called: usize = facts.tools.iter().map(|t| t.calls).sum();
    if !facts.tool_list || called < NEVER_MIN_CALLS {
        return;
    }
    for &(tool, description) in &facts.never_called {
        let tokens = estimated_tokens(tool, description);
        let mut e = Evidence::default();
        e.int("calls", 0);
        e.int("otherToolsCalls", called);
        e.int("estimatedTokensPerTurn", tokens);
        let mut ex = Examples::default();
        if let Some(d) = description {
            ex.add("description", d, false);
        }
        out.push(Finding {
            kind: FindingKind::NeverCalled,
            tool: Some(tool.to_owned()),
            parameter: None,
            version: None,
            what: format!(
                "{tool} is listed but was never called, while the other tools took {called} calls; its name and description cost about {tokens} tokens on every turn"
            ),
            evidence: e.0,
            examples: ex.0,
            action: format!(
                "Remove {tool} from the tool list, or describe it anew so that agents know when to call it."
            ),
            impact: 0.0,
            section: "tools".into(),
        });
    }
}

/// A tool's name and description in tokens, estimated at 4 bytes a token (`o200k_base` cuts
/// English prose at about that); the input schema is not in the event log's tool list, so the
/// real descriptor costs more (`Manifest::token_report` counts it).
fn estimated_tokens(name: &str, description: Option<&str>) -> usize {
    (name.len() + description.map_or(0, str::len)).div_ceil(4)
}

/// `slow_tool`: a tool whose p95 is many times the median p95 of the others.
fn slow_tools(facts: &Facts<'_>, name: &dyn Fn(Id) -> String, out: &mut Vec<Finding>) {
    let busy: Vec<&ToolFacts<'_>> = facts.tools.iter().filter(|t| t.calls >= SLOW_MIN_CALLS).collect();
    for t in &busy {
        let mut others: Vec<u64> = busy.iter().filter(|o| o.id != t.id).map(|o| o.p95_ms).collect();
        if others.len() < 2 {
            continue;
        }
        others.sort_unstable();
        // The lower median: with an even count, the smaller of the two middle values.
        let median = others[(others.len() - 1) / 2];
        if t.p95_ms < SLOW_MIN_MS || t.p95_ms < SLOW_FACTOR * median.max(1) {
            continue;
        }
        let slower: u64 = t.durations.range(median + 1..).map(|(_, n)| n).sum();
        let tool = name(t.id);
        let mut e = Evidence::default();
        e.int("calls", t.calls);
        e.int("p95Ms", t.p95_ms as usize);
        e.int("othersMedianP95Ms", median as usize);
        e.int("slowerThanOthersP95", slower as usize);
        out.push(Finding {
            kind: FindingKind::SlowTool,
            tool: Some(tool.clone()),
            parameter: None,
            version: None,
            what: format!(
                "{tool}'s p95 is {} ms, {:.0}× the other tools' median p95 of {median} ms; {slower} of its {} calls took longer than that",
                t.p95_ms,
                t.p95_ms as f64 / median.max(1) as f64,
                t.calls
            ),
            evidence: e.0,
            examples: Vec::new(),
            action: format!(
                "Make {tool} faster at the tail (cache, paginate, return early with a partial result), or say in its description that it is slow and when to avoid it."
            ),
            impact: slower as f64,
            section: "tools".into(),
        });
    }
}

fn rate(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}

fn plural(n: usize, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}
