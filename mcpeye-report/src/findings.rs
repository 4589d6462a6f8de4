//! What to fix first: the findings, each worked out by an accumulator that the fold feeds call
//! by call (`Findings::update`, and in each conversation's time order `Findings::looped` and
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
pub(crate) const FEEDBACK_TOOL: &str = mcpeye_runtime::contract::FEEDBACK_TOOL_NAME;
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
    pub durations: &'a rustc_hash::FxHashMap<u64, u64>,
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
    pub(crate) fn update(&mut self, c: &CallView<'_>, tool: Id, unknown: bool, reserved: bool) {
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
    /// (called from `run` = [`LOOP_RUN`] on). `looped` is the tool the conversation was last
    /// counted as looping on, so that a conversation counts once per tool (again only if it
    /// looped on another tool in between: one number a conversation, not a list).
    pub(crate) fn looped(&mut self, looped: &mut Id, tool: Id, run: usize, error: Option<&str>) {
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
        if *looped != tool {
            *looped = tool;
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
        self.parameter_errors(&name, &calls_of, &mut out);
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

    fn parameter_errors(&self, name: &dyn Fn(Id) -> String, calls_of: &dyn Fn(Id) -> usize, out: &mut Vec<Finding>) {
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
        let slower: u64 = t.durations.iter().filter(|&(&ms, _)| ms > median).map(|(_, n)| n).sum();
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Report, ReportInput};

    /// A hand-made event log, call by call, one millisecond apart.
    #[derive(Default)]
    struct Log {
        text: String,
        n: u64,
        /// The calls' duration (10 ms when 0).
        ms: u64,
    }

    impl Log {
        /// A call of `tool` in `session` by `user`; `error` its message when it failed; `event`
        /// and `line` more keys of the event and of the line (each starting with a comma).
        fn call(&mut self, tool: &str, session: &str, user: &str, error: Option<&str>, event: &str, line: &str) {
            self.n += 1;
            let (n, ts, ms) = (self.n, 1_764_576_000_000 + self.n, if self.ms == 0 { 10 } else { self.ms });
            let outcome = match error {
                Some(e) => format!(r#""isError":true,"errorMessage":{}"#, serde_json::json!(e)),
                None => r#""isError":false,"result":{"ok":true}"#.to_owned(),
            };
            self.text.push_str(&format!(
                r#"{{"v":1,"kind":"call","ts":{ts},"callId":"c{n}","tool":"{tool}","session":"{session}"{line},"event":{{"callId":"c{n}","toolName":"{tool}","arguments":{{}},{outcome},"timestamp":{ts},"durationMs":{ms},"userId":"{user}"{event}}}}}"#
            ));
            self.text.push('\n');
        }

        fn ok(&mut self, tool: &str, session: &str, user: &str) {
            self.call(tool, session, user, None, "", "");
        }

        fn raw(&mut self, line: &str) {
            self.text.push_str(line);
            self.text.push('\n');
        }

        fn report(&self) -> Report {
            let mut input = ReportInput::new();
            input.read_str(&self.text);
            input.report()
        }
    }

    fn kinds(r: &Report) -> Vec<(FindingKind, Option<&str>, Option<&str>)> {
        r.findings.iter().map(|f| (f.kind, f.tool.as_deref(), f.parameter.as_deref())).collect()
    }

    fn number(f: &Finding, key: &str) -> f64 {
        f.evidence[key].as_f64().unwrap_or_else(|| panic!("{key} in {:?}", f.evidence))
    }

    const DATE_ERROR: &str =
        "invalid arguments: `date`: expected a string, got a number; `limit`: expected an integer, got a string";

    /// `errors` argument errors of search naming `date`, spread over `users`, among 30 calls.
    fn parameter_log(errors: usize, users: usize) -> Log {
        let mut log = Log::default();
        for i in 0..30 {
            let user = format!("u{}", i % users.max(1));
            if i < errors {
                let intent = if i == 0 { r#","intent":"orders of last week""# } else { "" };
                log.call("search", &format!("s{i}"), &user, Some(DATE_ERROR), intent, "");
            } else {
                log.ok("search", &format!("s{i}"), &user);
            }
        }
        log
    }

    #[test]
    fn parameter_errors_are_found_across_users_and_not_below_the_threshold() {
        let r = parameter_log(PARAM_MIN_ERRORS, 2).report();
        // Both parameters the errors name.
        assert_eq!(
            kinds(&r),
            [
                (FindingKind::ParameterErrors, Some("search"), Some("date")),
                (FindingKind::ParameterErrors, Some("search"), Some("limit"))
            ]
        );
        let f = &r.findings[0];
        assert_eq!((number(f, "errors"), number(f, "users"), number(f, "calls")), (5.0, 2.0, 30.0));
        assert!(f.examples.iter().any(|e| e.what == "error" && e.text.starts_with("`date`: expected a string")));
        assert!(f.examples.iter().any(|e| e.what == "intent" && e.text == "orders of last week" && !e.inferred));
        assert!(f.action.contains("`date`"), "{}", f.action);
        // One error fewer, or one user.
        assert!(parameter_log(PARAM_MIN_ERRORS - 1, 2).report().findings.is_empty());
        assert!(parameter_log(PARAM_MIN_ERRORS, 1).report().findings.is_empty());
    }

    #[test]
    fn the_parameters_of_an_argument_error_are_the_first_segments_of_its_paths() {
        let named: Vec<&str> = named_parameters(
            "invalid arguments: `filter.tags[2]`: expected a string; `filter.from`: required; `arguments`: nested too deep; `[…]`: unknown; `limit`: expected an integer",
        )
        .map(|(p, _)| p)
        .collect();
        assert_eq!(named, ["filter", "limit"]);
        assert_eq!(named_parameters("out of stock: `limit` reached").count(), 0);
        assert_eq!(named_parameters("invalid arguments: the arguments must be a JSON object").count(), 0);
    }

    /// `conversations` conversations calling search three times in a row, then order.
    fn loop_log(conversations: usize) -> Log {
        let mut log = Log::default();
        for c in 0..6 {
            let s = format!("s{c}");
            let runs = if c < conversations { 3 } else { 1 };
            for _ in 0..runs {
                log.call("search", &s, "u", Some("no results"), "", "");
            }
            log.ok("order", &s, "u");
        }
        log
    }

    #[test]
    fn a_loop_is_found_in_several_conversations_and_not_in_fewer() {
        let r = loop_log(LOOP_MIN_CONVERSATIONS).report();
        assert_eq!(kinds(&r), [(FindingKind::Loop, Some("search"), None)]);
        let f = &r.findings[0];
        assert_eq!((number(f, "conversations"), number(f, "runs"), number(f, "repeatedCalls")), (3.0, 3.0, 6.0));
        assert_eq!(f.examples[0].text, "no results");
        assert_eq!(f.section, "paths");
        assert!(loop_log(LOOP_MIN_CONVERSATIONS - 1).report().findings.is_empty());
    }

    /// order under 1.0 then 1.1, `n` calls each, with these errors.
    fn version_log(n: usize, before: usize, after: usize) -> Log {
        let mut log = Log::default();
        for (version, errors) in [("1.0", before), ("1.1", after)] {
            for i in 0..n {
                let error = (i < errors).then_some("out of stock");
                let line = format!(r#","serverVersion":"{version}","toolHash":"h{version}""#);
                log.call("order", &format!("{version}-{i}"), &format!("u{i}"), error, "", &line);
                // Each conversation goes on, so that it does not end on the error.
                log.ok("search", &format!("{version}-{i}"), &format!("u{i}"));
            }
        }
        log
    }

    #[test]
    fn a_version_change_beyond_chance_is_found_with_its_test_and_not_below_its_minimum() {
        let r = version_log(VERSION_MIN_CALLS, 1, 10).report();
        assert_eq!(kinds(&r), [(FindingKind::VersionRegression, Some("order"), None)]);
        let f = &r.findings[0];
        assert_eq!(f.version.as_deref(), Some("1.0 · h1.0 → 1.1 · h1.1"));
        assert!(number(f, "z") >= VERSION_Z, "{:?}", f.evidence);
        assert!(f.what.contains("two-proportion z-test"), "{}", f.what);
        let better = version_log(VERSION_MIN_CALLS, 10, 1).report();
        assert_eq!(kinds(&better), [(FindingKind::VersionImprovement, Some("order"), None)]);
        // Too few calls on a side, or a change within chance.
        assert!(version_log(VERSION_MIN_CALLS - 1, 1, 10).report().findings.is_empty());
        assert!(version_log(VERSION_MIN_CALLS, 2, 4).report().findings.is_empty());
    }

    #[test]
    fn the_z_statistic_is_the_pooled_two_proportion_one() {
        // 10/100 against 20/100: pooled 0.15, se = sqrt(0.15 · 0.85 · 0.02) = 0.0505.
        assert!((z_test(10, 100, 20, 100) - 1.9803).abs() < 1e-3);
        assert_eq!(z_test(0, 50, 0, 50), 0.0);
    }

    fn ask_log(users: usize) -> Log {
        let mut log = Log::default();
        let wordings = ["export my orders as CSV", "Export orders to CSV.", "export my order history as a CSV file"];
        for u in 0..users {
            let event = format!(r#","arguments":{{"capability":"{}","context":"yearly accounts"}}"#, wordings[u % 3]);
            // The arguments key comes again: the last wins, as in JSON objects read here.
            log.call(
                mcpeye_runtime::contract::RESERVED_TOOL_NAME,
                &format!("s{u}"),
                &format!("u{u}"),
                None,
                &event,
                "",
            );
        }
        log
    }

    #[test]
    fn an_ask_of_several_users_is_found_and_not_of_fewer() {
        let r = ask_log(ASK_MIN_PEOPLE).report();
        assert_eq!(kinds(&r), [(FindingKind::CapabilityAsked, None, None)]);
        let f = &r.findings[0];
        assert_eq!((number(f, "calls"), number(f, "users"), number(f, "wordings")), (3.0, 3.0, 3.0));
        assert!(f.examples.iter().any(|e| e.what == "context" && e.text == "yearly accounts"));
        assert_eq!(f.section, "intent-gap");
        assert!(ask_log(ASK_MIN_PEOPLE - 1).report().findings.is_empty());
    }

    #[test]
    fn an_unknown_tool_tried_by_several_users_is_found_and_not_below() {
        let unknown = |calls: usize| {
            let mut log = Log::default();
            for i in 0..calls {
                let intent = r#","intent":"export the orders""#;
                let error = Some("unknown tool `export_csv`");
                log.call("export_csv", &format!("s{i}"), &format!("u{}", i % 2), error, intent, "");
                log.ok("search", &format!("s{i}"), "u");
            }
            log.report()
        };
        let r = unknown(UNKNOWN_MIN_CALLS);
        assert_eq!(kinds(&r), [(FindingKind::UnknownTool, Some("export_csv"), None)]);
        assert_eq!(r.findings[0].examples[0].text, "export the orders");
        assert!(unknown(UNKNOWN_MIN_CALLS - 1).findings.is_empty());
    }

    #[test]
    fn a_listed_tool_never_called_is_found_with_its_token_cost_once_the_others_are_called() {
        let never = |calls: usize| {
            let mut log = Log::default();
            log.raw(r#"{"v":1,"kind":"tools","ts":1764576000000,"tools":[{"name":"search","hash":"s1","description":"Search."},{"name":"refund","hash":"r1","description":"Refund an order by its id, in full or in part."},{"name":"mcpeye_send_feedback","hash":"f1"}]}"#);
            for i in 0..calls {
                log.ok("search", &format!("s{i}"), "u");
            }
            log.report()
        };
        let r = never(NEVER_MIN_CALLS);
        assert_eq!(kinds(&r), [(FindingKind::NeverCalled, Some("refund"), None)]);
        let f = &r.findings[0];
        // "refund" and its description: 6 + 46 bytes, at 4 bytes a token.
        assert_eq!(number(f, "estimatedTokensPerTurn"), 13.0);
        assert_eq!(f.examples[0].what, "description");
        assert!(never(NEVER_MIN_CALLS - 1).findings.is_empty());
    }

    #[test]
    fn a_tool_much_slower_than_the_others_at_p95_is_found_and_not_a_bit_slower() {
        let slow = |ms: u64| {
            let mut log = Log::default();
            for tool in ["a", "b", "c", "d"] {
                log.ms = if tool == "d" { ms } else { 10 };
                for i in 0..SLOW_MIN_CALLS {
                    log.ok(tool, &format!("{tool}{i}"), "u");
                }
            }
            log.report()
        };
        let r = slow(2000);
        assert_eq!(kinds(&r), [(FindingKind::SlowTool, Some("d"), None)]);
        let f = &r.findings[0];
        assert_eq!(
            (number(f, "p95Ms"), number(f, "othersMedianP95Ms"), number(f, "slowerThanOthersP95")),
            (2000.0, 10.0, 20.0)
        );
        assert!(slow(35).findings.is_empty(), "3.5× the others, under a second");
        assert!(slow(999).findings.is_empty(), "under a second");
    }

    #[test]
    fn conversations_ending_on_a_tools_error_are_found_and_not_fewer() {
        let ending = |ended: usize| {
            let mut log = Log::default();
            for c in 0..8 {
                let s = format!("s{c}");
                log.ok("search", &s, "u");
                log.call("pay", &s, "u", (c < ended).then_some("card declined"), "", "");
            }
            log.report()
        };
        let r = ending(ABANDON_MIN_CONVERSATIONS);
        assert_eq!(kinds(&r), [(FindingKind::Abandonment, Some("pay"), None)]);
        let f = &r.findings[0];
        assert_eq!((number(f, "conversations"), number(f, "endedOnTool"), number(f, "callsInThem")), (3.0, 8.0, 6.0));
        assert_eq!(f.examples[0].text, "card declined");
        assert!(ending(ABANDON_MIN_CONVERSATIONS - 1).findings.is_empty());
    }

    fn feedback_log(category: &str, users: usize) -> Log {
        let mut log = Log::default();
        for u in 0..users {
            let text = ["The date filter is ignored.", "the date filter is ignored"][u % 2];
            let event = format!(r#","arguments":{{"category":"{category}","text":"{text}","task_completed":false}}"#);
            log.call(FEEDBACK_TOOL, &format!("s{u}"), &format!("u{u}"), None, &event, "");
        }
        log
    }

    #[test]
    fn feedback_of_several_users_is_a_finding_and_praise_or_one_user_is_not() {
        let r = feedback_log("issue", MIN_PEOPLE).report();
        assert_eq!(kinds(&r), [(FindingKind::Feedback, None, None)]);
        assert_eq!(number(&r.findings[0], "taskNotCompleted"), 2.0);
        let fb = &r.feedback;
        assert_eq!(
            (fb.calls, fb.categories[0].category.as_str(), fb.categories[0].task_not_completed),
            (2, "issue", 2)
        );
        assert_eq!(fb.categories[0].reports[0].count, 2, "one report in two wordings");
        // Not a tool of the server's.
        assert!(r.tools.tools.is_empty());
        assert!(feedback_log("praise", 3).report().findings.is_empty());
        assert!(feedback_log("issue", 1).report().findings.is_empty());
        // An unknown category counts as other.
        let other = feedback_log("rant", 1).report().feedback;
        assert_eq!(other.categories[0].category, "other");
        assert!(Log::default().report().feedback.needs[0].contains(FEEDBACK_TOOL));
    }

    #[test]
    fn inferred_intents_are_used_where_a_call_has_none_and_marked() {
        let mut log = parameter_log(PARAM_MIN_ERRORS, 2);
        let inferred = r#","inferredIntent":"list the orders of a date""#;
        // A call with an intent of its own keeps it; the inferred one is used only without.
        log.call("search", "x", "u9", None, r#","intent":"own words""#, inferred);
        log.call("search", "y", "u9", Some(DATE_ERROR), "", inferred);
        let r = log.report();
        let search = r.intent_gap.intents.iter().find(|t| t.tool == "search").unwrap();
        assert_eq!((search.with_intent, search.with_inferred), (2, 1));
        assert_eq!(search.inferred[0].ask, "list the orders of a date");
        let failed = r.intent_gap.failed.iter().find(|f| f.inferred).unwrap();
        assert_eq!(failed.intent, "list the orders of a date");
        let f = &r.findings[0];
        assert!(f.examples.iter().any(|e| e.what == "intent" && e.inferred), "{:?}", f.examples);
        let json = r.to_json();
        assert_eq!(json["intentGap"]["failed"].as_array().unwrap().iter().filter(|f| f["inferred"] == true).count(), 1);
        assert!(r.to_string().contains("(inferred) list the orders of a date"), "{r}");
        assert!(r.to_html().contains("<span class=\"muted\">(inferred)</span> <bdi>list the orders of a date"));
        // Not a string: the line is skipped, counted by reason.
        let mut bad = Log::default();
        bad.call("search", "z", "u", None, "", r#","inferredIntent":42"#);
        assert_eq!(bad.report().input.skipped["inferredIntent not a string"], 1);
    }

    #[test]
    fn findings_are_ranked_by_the_calls_they_affected() {
        // 8 parameter errors against 3 unknown calls; improvements and never-called last.
        let mut log = parameter_log(8, 3);
        for i in 0..3 {
            log.call("export_csv", &format!("e{i}"), &format!("u{i}"), Some("unknown tool `export_csv`"), "", "");
        }
        let r = log.report();
        let order: Vec<FindingKind> = r.findings.iter().map(|f| f.kind).collect();
        // The 8 conversations of one call each end on search's error: 8 calls, ranked after
        // the parameter errors of the same weight by kind.
        assert_eq!(
            order,
            [
                FindingKind::ParameterErrors,
                FindingKind::ParameterErrors,
                FindingKind::Abandonment,
                FindingKind::UnknownTool
            ]
        );
        assert!(r.findings.windows(2).all(|w| w[0].impact >= w[1].impact));
    }
}
