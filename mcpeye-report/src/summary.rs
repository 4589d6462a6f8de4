//! [`Report`]: the sections of `mcpeye report`, worked out of a [`ReportInput`]. Each section
//! says what data it needs when the input lacks it, rather than showing nothing.

use crate::asks;
use crate::input::{Call, ReportInput};
use mcpeye_runtime::contract::RESERVED_TOOL_NAME;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// Rows kept per list in a section (the most significant first).
const KEEP: usize = 50;

/// What the input holds, in a few numbers.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Overview {
    /// Distinct calls (by `callId`).
    pub calls: usize,
    /// Of those, the ones that ended in an error.
    pub errors: usize,
    /// `errors / calls` (0 when there is no call).
    pub error_rate: f64,
    /// Distinct users (`userId`, else `userEmail`).
    pub users: usize,
    /// Distinct clients (the payload identity's `client`).
    pub clients: Vec<String>,
    /// Distinct models (event log only).
    pub models: Vec<String>,
    /// Distinct server versions.
    pub server_versions: Vec<String>,
    /// Distinct conversations (conversation, session or turn; event log only).
    pub conversations: usize,
    /// Requests of other methods (event log only).
    pub method_requests: usize,
    /// Earliest and latest call timestamps (epoch ms).
    pub first_ms: Option<u64>,
    /// See [`first_ms`](Self::first_ms).
    pub last_ms: Option<u64>,
    /// Events read from payloads, and lines read from event logs.
    pub payload_events: usize,
    /// See [`payload_events`](Self::payload_events).
    pub log_lines: usize,
    /// Events seen again (same `callId`) and counted once.
    pub duplicates: usize,
    /// Lines that were neither a payload, an event nor a known log line.
    pub skipped: usize,
}

/// One ask: capability requests (or intents) that say the same thing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Ask {
    /// Its most frequent wording.
    pub ask: String,
    /// How many calls asked it.
    pub count: usize,
    /// Every wording, most frequent first, with its count.
    pub wordings: Vec<(String, usize)>,
    /// The distinct `context` arguments given with it, in order of arrival.
    pub contexts: Vec<String>,
}

/// The intents agents gave for one tool, grouped like the asks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolIntents {
    /// The tool.
    pub tool: String,
    /// Its calls, and those with an intent.
    pub calls: usize,
    /// See [`calls`](Self::calls).
    pub with_intent: usize,
    /// The intents, grouped, most frequent first.
    pub intents: Vec<Ask>,
}

/// A call with an intent that ended in an error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct FailedAsk {
    /// The tool.
    pub tool: String,
    /// The intent.
    pub intent: String,
    /// The error message, when there is one.
    pub error: Option<String>,
}

/// A name agents called that the server does not have.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Unknown {
    /// The name.
    pub name: String,
    /// Calls of it.
    pub calls: usize,
}

/// The Intent Gap: what users asked for that the tools could not give.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct GapSection {
    /// Capability requests grouped by meaning (`report::asks`), most asked first.
    pub asks: Vec<Ask>,
    /// Intents per tool.
    pub intents: Vec<ToolIntents>,
    /// Calls with an intent that ended in an error, in order of arrival.
    pub failed: Vec<FailedAsk>,
    /// Unknown tools, most called first.
    pub unknown_tools: Vec<Unknown>,
    /// What the section needs and the input lacks.
    pub needs: Vec<String>,
}

/// One tool's calls.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolRow {
    /// The tool.
    pub tool: String,
    /// Calls, errors and their ratio.
    pub calls: usize,
    /// See [`calls`](Self::calls).
    pub errors: usize,
    /// See [`calls`](Self::calls).
    pub error_rate: f64,
    /// Duration percentiles in ms (nearest rank).
    pub p50_ms: u64,
    /// See [`p50_ms`](Self::p50_ms).
    pub p95_ms: u64,
    /// See [`p50_ms`](Self::p50_ms).
    pub p99_ms: u64,
    /// Median and largest `result` in bytes of JSON (successful calls).
    pub result_p50_bytes: Option<u64>,
    /// See [`result_p50_bytes`](Self::result_p50_bytes).
    pub result_max_bytes: Option<u64>,
    /// The last error message.
    pub last_error: Option<String>,
}

/// The tools: how each is used, and which are never called.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolsSection {
    /// The server's tools that were called (not the reserved tool, not unknown names), most
    /// called first.
    pub tools: Vec<ToolRow>,
    /// Tools in a tool list that no call used, by name (the reserved tool left out).
    pub never_called: Vec<String>,
    /// What the section needs and the input lacks.
    pub needs: Vec<String>,
}

/// A sequence of tools and how often conversations took it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Sequence {
    /// The tools, in order.
    pub tools: Vec<String>,
    /// How often it occurred.
    pub count: usize,
}

/// Calls of one tool repeated back to back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Loop {
    /// The tool.
    pub tool: String,
    /// Runs of three calls or more in a row, and the longest.
    pub runs: usize,
    /// See [`runs`](Self::runs).
    pub longest: usize,
}

/// What followed a tool's errors within a conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Recovery {
    /// The tool.
    pub tool: String,
    /// Its errors followed by another call in the conversation.
    pub errors: usize,
    /// Errors whose next call retried the same tool.
    pub retried: usize,
    /// Retries that succeeded.
    pub recovered: usize,
}

/// A conversation whose last call ended in an error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Ending {
    /// The conversation.
    pub conversation: String,
    /// Its calls.
    pub calls: usize,
    /// The last call's tool and error.
    pub tool: String,
    /// See [`tool`](Self::tool).
    pub error: Option<String>,
}

/// The paths agents take within a conversation.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct PathsSection {
    /// Conversations read, and their calls.
    pub conversations: usize,
    /// See [`conversations`](Self::conversations).
    pub calls: usize,
    /// Sequences of two and three tools, most frequent first (seen at least twice).
    pub sequences: Vec<Sequence>,
    /// Tools called three times or more in a row.
    pub loops: Vec<Loop>,
    /// What followed errors.
    pub recoveries: Vec<Recovery>,
    /// Conversations that ended on an error.
    pub ended_on_error: Vec<Ending>,
    /// How many conversations ended on an error (the list keeps the first 50).
    pub ended_on_error_count: usize,
    /// The user turns within them (the client's `aiInvocation.turnId`).
    pub turns: Turns,
    /// What the section needs and the input lacks.
    pub needs: Vec<String>,
}

/// The user turns: the calls one request of the user led to, as the client groups them
/// (`aiInvocation.turnId`, event log only).
///
/// ```
/// use mcpeye_report::ReportInput;
/// let mut input = ReportInput::new();
/// for (id, ts, error) in [("a", 1, true), ("b", 2, false), ("c", 3, true)] {
///     input.read_str(&format!(
///         r#"{{"v":1,"kind":"call","ts":{ts},"callId":"{id}","tool":"search","turn":"t1","event":{{"callId":"{id}","toolName":"search","isError":{error}}}}}"#
///     ));
/// }
/// let turns = input.report().paths.turns;
/// assert_eq!((turns.turns, turns.most_calls, turns.ended_on_error), (1, 3, 1));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Turns {
    /// Turns read, and their calls.
    pub turns: usize,
    /// See [`turns`](Self::turns).
    pub calls: usize,
    /// The calls of the longest turn.
    pub most_calls: usize,
    /// Turns with more than one call (the agent needed several tools, or several tries).
    pub with_several_calls: usize,
    /// Turns whose last call ended in an error: the user's request was left on a failure.
    pub ended_on_error: usize,
}

/// One version of a tool: a server version, a descriptor hash, or both.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct VersionRow {
    /// The tool.
    pub tool: String,
    /// The server version and descriptor hash of its calls.
    pub server_version: Option<String>,
    /// See [`server_version`](Self::server_version).
    pub hash: Option<String>,
    /// The tool's description in this version (from the tool lists).
    pub description: Option<String>,
    /// Epoch ms of its first call.
    pub first_ms: u64,
    /// Calls, errors, error rate.
    pub calls: usize,
    /// See [`calls`](Self::calls).
    pub errors: usize,
    /// See [`calls`](Self::calls).
    pub error_rate: f64,
    /// Calls that retried the tool right after it failed in the same conversation (`None`
    /// without conversations).
    pub retries: Option<usize>,
}

/// Tools across server versions and descriptions: whether a change helped.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct VersionsSection {
    /// Per tool that has more than one version, its versions by first call.
    pub tools: Vec<VersionRow>,
    /// What the section needs and the input lacks.
    pub needs: Vec<String>,
}

/// One model's calls.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ModelRow {
    /// The model.
    pub model: String,
    /// Calls, errors, error rate.
    pub calls: usize,
    /// See [`calls`](Self::calls).
    pub errors: usize,
    /// See [`calls`](Self::calls).
    pub error_rate: f64,
    /// Distinct tools it called.
    pub tools: usize,
    /// Capability requests it made.
    pub asks: usize,
}

/// Calls per model.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ModelsSection {
    /// Models, most calls first.
    pub models: Vec<ModelRow>,
    /// Calls whose model is not known.
    pub unknown_model_calls: usize,
    /// What the section needs and the input lacks.
    pub needs: Vec<String>,
}

/// The report of `mcpeye report`: an overview, the Intent Gap, the tools, the paths agents
/// take, the tools across versions, and the models. `Display` prints it for a terminal,
/// [`to_html`](Self::to_html) makes a page, and `Serialize` gives it to scripts. Made by
/// [`ReportInput::report`]; every list is sorted, so the same input gives the same report.
///
/// ```
/// use mcpeye_report::ReportInput;
/// let mut input = ReportInput::new();
/// input.read_str(r#"{"v":1,"kind":"tools","ts":1,"tools":[{"name":"search","hash":"a1"},{"name":"export","hash":"b2"}]}
/// {"v":1,"kind":"call","ts":2,"callId":"1","tool":"search","session":"s","event":{"toolName":"search","isError":true,"errorMessage":"timeout"}}
/// {"v":1,"kind":"call","ts":3,"callId":"2","tool":"search","session":"s","event":{"toolName":"search","isError":false}}"#);
/// let report = input.report();
/// assert_eq!(report.tools.never_called, ["export"]);
/// assert_eq!(report.paths.recoveries[0].recovered, 1);
/// assert!(report.to_string().contains("never called"));
/// assert!(report.to_html().contains("<svg"));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Report {
    /// What the input holds.
    pub overview: Overview,
    /// What users asked for that the tools could not give.
    pub intent_gap: GapSection,
    /// The tools.
    pub tools: ToolsSection,
    /// The paths agents take.
    pub paths: PathsSection,
    /// The tools across versions.
    pub versions: VersionsSection,
    /// The models.
    pub models: ModelsSection,
}

impl Report {
    /// The report as JSON (the same as serialising it).
    ///
    /// ```
    /// let mut input = mcpeye_report::ReportInput::new();
    /// input.read_str(r#"{"callId":"a","toolName":"search","isError":false}"#);
    /// assert_eq!(input.report().to_json()["overview"]["calls"], 1);
    /// ```
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }
}

const NEEDS_LOG: &str = "the event log (Config::event_log): ingest payloads have no key for it";

impl ReportInput {
    /// The report of what was read.
    ///
    /// ```
    /// let mut input = mcpeye_report::ReportInput::new();
    /// input.read_str(r#"{"callId":"a","toolName":"search","isError":true,"errorMessage":"timeout"}"#);
    /// let report = input.report();
    /// assert_eq!((report.overview.calls, report.overview.errors), (1, 1));
    /// ```
    pub fn report(&self) -> Report {
        let calls = &self.calls;
        Report {
            overview: self.overview(),
            intent_gap: gap(calls),
            tools: tools(calls, self),
            paths: paths(calls),
            versions: versions(calls, self),
            models: models(calls),
        }
    }

    fn overview(&self) -> Overview {
        let calls = &self.calls;
        let distinct = |f: &dyn Fn(&Call) -> Option<&str>| -> Vec<String> {
            calls.iter().filter_map(f).map(str::to_owned).collect::<BTreeSet<_>>().into_iter().collect()
        };
        let errors = calls.iter().filter(|c| c.is_error).count();
        let times = calls.iter().map(|c| c.ts).filter(|&t| t > 0);
        Overview {
            calls: calls.len(),
            errors,
            error_rate: rate(errors, calls.len()),
            users: distinct(&|c| c.user.as_deref()).len(),
            clients: distinct(&|c| c.client.as_deref()),
            models: distinct(&|c| c.model.as_deref()),
            server_versions: distinct(&|c| c.server_version.as_deref()),
            conversations: distinct(&|c| c.thread()).len(),
            method_requests: self.methods.len(),
            first_ms: times.clone().min(),
            last_ms: times.max(),
            payload_events: self.payload_events,
            log_lines: self.log_lines,
            duplicates: self.duplicates,
            skipped: self.skipped,
        }
    }
}

fn rate(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}

/// Nearest-rank percentile of sorted values.
fn percentile(sorted: &[u64], p: usize) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = (p * sorted.len()).div_ceil(100).max(1);
    sorted[rank - 1]
}

/// Groups texts into asks (`report::asks`), with the contexts of their calls.
fn grouped_asks(texts: &[(&str, Option<&str>)]) -> Vec<Ask> {
    asks::group(texts.iter().map(|(t, _)| *t))
        .into_iter()
        .take(KEEP)
        .map(|g| {
            let mut contexts: Vec<String> = Vec::new();
            for &i in &g.members {
                if let Some(c) = texts[i].1 {
                    if !contexts.iter().any(|k| k == c) {
                        contexts.push(c.to_owned());
                    }
                }
            }
            Ask { ask: g.wordings[0].0.clone(), count: g.count(), wordings: g.wordings, contexts }
        })
        .collect()
}

/// A text and the context given with it.
type TextsInContext<'a> = Vec<(&'a str, Option<&'a str>)>;

fn gap(calls: &[Call]) -> GapSection {
    let requests: TextsInContext<'_> =
        calls.iter().filter_map(|c| Some((c.capability.as_deref()?, c.context.as_deref()))).collect();
    let mut by_tool: BTreeMap<&str, (usize, TextsInContext<'_>)> = BTreeMap::new();
    let mut failed = Vec::new();
    let mut unknown: BTreeMap<&str, usize> = BTreeMap::new();
    for c in calls {
        if c.tool == RESERVED_TOOL_NAME {
            continue;
        }
        if c.is_unknown_tool() {
            *unknown.entry(&c.tool).or_default() += 1;
            continue;
        }
        let entry = by_tool.entry(&c.tool).or_default();
        entry.0 += 1;
        if let Some(intent) = &c.intent {
            entry.1.push((intent, None));
            if c.is_error && failed.len() < KEEP {
                failed.push(FailedAsk { tool: c.tool.clone(), intent: intent.clone(), error: c.error.clone() });
            }
        }
    }
    let mut intents: Vec<ToolIntents> = by_tool
        .into_iter()
        .filter(|(_, (_, texts))| !texts.is_empty())
        .map(|(tool, (calls, texts))| ToolIntents {
            tool: tool.to_owned(),
            calls,
            with_intent: texts.len(),
            intents: grouped_asks(&texts),
        })
        .collect();
    intents.sort_by(|a, b| b.with_intent.cmp(&a.with_intent).then_with(|| a.tool.cmp(&b.tool)));
    let mut unknown_tools: Vec<Unknown> =
        unknown.into_iter().map(|(name, calls)| Unknown { name: name.to_owned(), calls }).collect();
    unknown_tools.sort_by(|a, b| b.calls.cmp(&a.calls).then_with(|| a.name.cmp(&b.name)));
    let mut needs = Vec::new();
    if requests.is_empty() {
        needs.push(format!(
            "capability requests: calls of {RESERVED_TOOL_NAME} (listed unless Config::capture_missing_capabilities(false)); none in the input"
        ));
    }
    if intents.is_empty() {
        needs.push(
            "intents: the mcpeyeIntent argument agents fill (or the client's _meta aiInvocation); no call carried one"
                .into(),
        );
    }
    GapSection { asks: grouped_asks(&requests), intents, failed, unknown_tools, needs }
}

fn tools(calls: &[Call], input: &ReportInput) -> ToolsSection {
    let mut by_tool: BTreeMap<&str, Vec<&Call>> = BTreeMap::new();
    for c in calls.iter().filter(|c| c.tool != RESERVED_TOOL_NAME && !c.is_unknown_tool()) {
        by_tool.entry(&c.tool).or_default().push(c);
    }
    let mut rows: Vec<ToolRow> = by_tool
        .iter()
        .map(|(tool, calls)| {
            let mut durations: Vec<u64> = calls.iter().map(|c| c.duration_ms).collect();
            durations.sort_unstable();
            let mut sizes: Vec<u64> = calls.iter().filter_map(|c| c.result_bytes).collect();
            sizes.sort_unstable();
            let errors = calls.iter().filter(|c| c.is_error).count();
            ToolRow {
                tool: (*tool).to_owned(),
                calls: calls.len(),
                errors,
                error_rate: rate(errors, calls.len()),
                p50_ms: percentile(&durations, 50),
                p95_ms: percentile(&durations, 95),
                p99_ms: percentile(&durations, 99),
                result_p50_bytes: (!sizes.is_empty()).then(|| percentile(&sizes, 50)),
                result_max_bytes: sizes.last().copied(),
                last_error: calls.iter().rev().find_map(|c| c.error.clone()),
            }
        })
        .collect();
    rows.sort_by(|a, b| b.calls.cmp(&a.calls).then_with(|| a.tool.cmp(&b.tool)));
    let listed: BTreeSet<&str> = input
        .tool_lists
        .iter()
        .flat_map(|l| l.tools.iter().map(|t| t.name.as_str()))
        .filter(|n| *n != RESERVED_TOOL_NAME)
        .collect();
    let never_called = listed.into_iter().filter(|n| !by_tool.contains_key(n)).map(str::to_owned).collect();
    let mut needs = Vec::new();
    if input.tool_lists.is_empty() {
        needs.push(format!("tools never called: the tool list, from {NEEDS_LOG}"));
    }
    ToolsSection { tools: rows, never_called, needs }
}

/// The calls of each conversation, in order (by timestamp, then as read).
fn threads(calls: &[Call]) -> BTreeMap<&str, Vec<&Call>> {
    let mut threads: BTreeMap<&str, Vec<&Call>> = BTreeMap::new();
    for c in calls {
        if let Some(t) = c.thread() {
            threads.entry(t).or_default().push(c);
        }
    }
    for calls in threads.values_mut() {
        calls.sort_by_key(|c| c.ts);
    }
    threads
}

/// The turns of the calls that name one, each in order.
fn turns(calls: &[Call]) -> Turns {
    let mut by_turn: BTreeMap<&str, Vec<&Call>> = BTreeMap::new();
    for c in calls {
        if let Some(t) = c.turn.as_deref() {
            by_turn.entry(t).or_default().push(c);
        }
    }
    let mut turns = Turns { turns: by_turn.len(), ..Turns::default() };
    for calls in by_turn.values_mut() {
        calls.sort_by_key(|c| c.ts);
        turns.calls += calls.len();
        turns.most_calls = turns.most_calls.max(calls.len());
        turns.with_several_calls += usize::from(calls.len() > 1);
        turns.ended_on_error += usize::from(calls.last().is_some_and(|c| c.is_error));
    }
    turns
}

fn paths(calls: &[Call]) -> PathsSection {
    let threads = threads(calls);
    let turns = turns(calls);
    let turns_need = (turns.turns == 0).then(|| {
        format!("turns: the client's _meta aiInvocation.turnId (the MCP proposal for AI invocation metadata), from {NEEDS_LOG}")
    });
    if threads.is_empty() {
        let mut needs = vec![format!("conversations: a session, conversation or turn per call, from {NEEDS_LOG}")];
        needs.extend(turns_need);
        return PathsSection { needs, ..PathsSection::default() };
    }
    let mut sequences: BTreeMap<Vec<&str>, usize> = BTreeMap::new();
    let mut loops: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut recoveries: BTreeMap<&str, (usize, usize, usize)> = BTreeMap::new();
    let mut ended = Vec::new();
    let mut ended_count = 0;
    for (id, calls) in &threads {
        let tools: Vec<&str> = calls.iter().map(|c| c.tool.as_str()).collect();
        for n in [2, 3] {
            for w in tools.windows(n) {
                *sequences.entry(w.to_vec()).or_default() += 1;
            }
        }
        let mut run = 1;
        for i in 1..=tools.len() {
            if i < tools.len() && tools[i] == tools[i - 1] {
                run += 1;
                continue;
            }
            if run >= 3 {
                let l = loops.entry(tools[i - 1]).or_default();
                l.0 += 1;
                l.1 = l.1.max(run);
            }
            run = 1;
        }
        for pair in calls.windows(2) {
            if pair[0].is_error {
                let r = recoveries.entry(&pair[0].tool).or_default();
                r.0 += 1;
                if pair[1].tool == pair[0].tool {
                    r.1 += 1;
                    r.2 += usize::from(!pair[1].is_error);
                }
            }
        }
        if let Some(last) = calls.last().filter(|c| c.is_error) {
            ended_count += 1;
            if ended.len() < KEEP {
                ended.push(Ending {
                    conversation: (*id).to_owned(),
                    calls: calls.len(),
                    tool: last.tool.clone(),
                    error: last.error.clone(),
                });
            }
        }
    }
    let mut sequences: Vec<Sequence> = sequences
        .into_iter()
        .filter(|(_, n)| *n >= 2)
        .map(|(tools, count)| Sequence { tools: tools.into_iter().map(str::to_owned).collect(), count })
        .collect();
    sequences.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.tools.cmp(&b.tools)));
    sequences.truncate(KEEP);
    let mut loops: Vec<Loop> =
        loops.into_iter().map(|(tool, (runs, longest))| Loop { tool: tool.to_owned(), runs, longest }).collect();
    loops.sort_by(|a, b| b.runs.cmp(&a.runs).then_with(|| a.tool.cmp(&b.tool)));
    let mut recoveries: Vec<Recovery> = recoveries
        .into_iter()
        .map(|(tool, (errors, retried, recovered))| Recovery { tool: tool.to_owned(), errors, retried, recovered })
        .collect();
    recoveries.sort_by(|a, b| b.errors.cmp(&a.errors).then_with(|| a.tool.cmp(&b.tool)));
    ended.sort_by(|a, b| b.calls.cmp(&a.calls).then_with(|| a.conversation.cmp(&b.conversation)));
    PathsSection {
        conversations: threads.len(),
        calls: threads.values().map(Vec::len).sum(),
        sequences,
        loops,
        recoveries,
        ended_on_error: ended,
        ended_on_error_count: ended_count,
        turns,
        needs: turns_need.into_iter().collect(),
    }
}

fn versions(calls: &[Call], input: &ReportInput) -> VersionsSection {
    let descriptions: BTreeMap<(&str, &str), &str> = input
        .tool_lists
        .iter()
        .flat_map(|l| l.tools.iter())
        .filter_map(|t| Some(((t.name.as_str(), t.hash.as_str()), t.description.as_deref()?)))
        .collect();
    // A retry: the next call of the conversation calls the same tool after it failed.
    let mut retries: BTreeSet<*const Call> = BTreeSet::new();
    let threads = threads(calls);
    for calls in threads.values() {
        for pair in calls.windows(2) {
            if pair[0].is_error && pair[1].tool == pair[0].tool {
                retries.insert(pair[1] as *const Call);
            }
        }
    }
    type Key<'a> = (&'a str, Option<&'a str>, Option<&'a str>);
    let mut rows: BTreeMap<Key<'_>, VersionRow> = BTreeMap::new();
    for c in calls.iter().filter(|c| c.tool != RESERVED_TOOL_NAME && !c.is_unknown_tool()) {
        if c.server_version.is_none() && c.tool_hash.is_none() {
            continue;
        }
        let key = (c.tool.as_str(), c.server_version.as_deref(), c.tool_hash.as_deref());
        let row = rows.entry(key).or_insert_with(|| VersionRow {
            tool: c.tool.clone(),
            server_version: c.server_version.clone(),
            hash: c.tool_hash.clone(),
            description: c
                .tool_hash
                .as_deref()
                .and_then(|h| descriptions.get(&(c.tool.as_str(), h)))
                .map(|d| (*d).to_owned()),
            first_ms: c.ts,
            calls: 0,
            errors: 0,
            error_rate: 0.0,
            retries: (!threads.is_empty()).then_some(0),
        });
        row.first_ms = row.first_ms.min(c.ts);
        row.calls += 1;
        row.errors += usize::from(c.is_error);
        row.error_rate = rate(row.errors, row.calls);
        if retries.contains(&(c as *const Call)) {
            row.retries = row.retries.map(|r| r + 1);
        }
    }
    let mut per_tool: BTreeMap<String, Vec<VersionRow>> = BTreeMap::new();
    for row in rows.into_values() {
        per_tool.entry(row.tool.clone()).or_default().push(row);
    }
    let mut tools = Vec::new();
    for (_, mut versions) in per_tool.into_iter().filter(|(_, v)| v.len() > 1) {
        versions.sort_by(|a, b| {
            a.first_ms.cmp(&b.first_ms).then_with(|| (&a.server_version, &a.hash).cmp(&(&b.server_version, &b.hash)))
        });
        tools.extend(versions);
    }
    let mut needs = Vec::new();
    if calls.iter().all(|c| c.server_version.is_none() && c.tool_hash.is_none()) {
        needs.push(format!(
            "versions: the identity's serverVersion (Identity::server_version) or the descriptor hashes of {NEEDS_LOG}"
        ));
    } else if tools.is_empty() {
        needs.push("a second version: every tool was called under one server version and one description".into());
    }
    if threads.is_empty() {
        needs.push(format!("retries: conversations, from {NEEDS_LOG}"));
    }
    VersionsSection { tools, needs }
}

fn models(calls: &[Call]) -> ModelsSection {
    let mut by_model: BTreeMap<&str, (usize, usize, BTreeSet<&str>, usize)> = BTreeMap::new();
    let mut unknown = 0;
    for c in calls {
        let Some(model) = c.model.as_deref() else {
            unknown += 1;
            continue;
        };
        let m = by_model.entry(model).or_default();
        m.0 += 1;
        m.1 += usize::from(c.is_error);
        if c.tool != RESERVED_TOOL_NAME {
            m.2.insert(&c.tool);
        }
        m.3 += usize::from(c.capability.is_some());
    }
    let mut models: Vec<ModelRow> = by_model
        .into_iter()
        .map(|(model, (calls, errors, tools, asks))| ModelRow {
            model: model.to_owned(),
            calls,
            errors,
            error_rate: rate(errors, calls),
            tools: tools.len(),
            asks,
        })
        .collect();
    models.sort_by(|a, b| b.calls.cmp(&a.calls).then_with(|| a.model.cmp(&b.model)));
    let needs = if models.is_empty() {
        vec![format!(
            "the model of each call (the client's _meta, or ManifestBuilder::model_argument), from {NEEDS_LOG}"
        )]
    } else {
        Vec::new()
    };
    ModelsSection { models, unknown_model_calls: unknown, needs }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A hand-made event log: tool lists of two server versions and two conversations.
    pub(crate) const LOG: &str = r#"{"v":1,"kind":"log","ts":1000,"writer":"mcpeye-rs/0.1.0","pid":1}
{"v":1,"kind":"tools","ts":1000,"serverVersion":"1.0","tools":[{"name":"search","hash":"s1","description":"Search."},{"name":"order","hash":"o1","description":"Order."},{"name":"refund","hash":"r1","description":"Refund an order."},{"name":"mcpeye_request_capability","hash":"m1"}]}
{"v":1,"kind":"call","ts":1001,"callId":"c1","tool":"search","toolHash":"s1","session":"A","turn":"A1","model":"gpt-5","serverVersion":"1.0","event":{"callId":"c1","toolName":"search","arguments":{},"isError":false,"timestamp":1001,"durationMs":10,"result":{"n":1},"intent":"Find a gift mug."}}
{"v":1,"kind":"call","ts":1002,"callId":"c2","tool":"order","toolHash":"o1","session":"A","turn":"A1","model":"gpt-5","serverVersion":"1.0","event":{"callId":"c2","toolName":"order","arguments":{},"isError":true,"timestamp":1002,"durationMs":30,"errorMessage":"out of stock","intent":"Order the blue mug."}}
{"v":1,"kind":"call","ts":1003,"callId":"c3","tool":"order","toolHash":"o1","session":"A","turn":"A1","model":"gpt-5","serverVersion":"1.0","event":{"callId":"c3","toolName":"order","arguments":{},"isError":false,"timestamp":1003,"durationMs":20,"result":{"ok":true}}}
{"v":1,"kind":"call","ts":1004,"callId":"c4","tool":"mcpeye_request_capability","session":"A","turn":"A2","model":"gpt-5","serverVersion":"1.0","event":{"callId":"c4","toolName":"mcpeye_request_capability","arguments":{"capability":"export my orders as CSV","context":"yearly accounts"},"isError":false,"timestamp":1004,"durationMs":0}}
{"v":1,"kind":"tools","ts":2000,"serverVersion":"1.1","tools":[{"name":"search","hash":"s1","description":"Search."},{"name":"order","hash":"o2","description":"Order a product by SKU; check stock with search first."},{"name":"refund","hash":"r1","description":"Refund an order."},{"name":"mcpeye_request_capability","hash":"m1"}]}
{"v":1,"kind":"call","ts":2001,"callId":"d1","tool":"search","toolHash":"s1","session":"B","turn":"B1","model":"claude-4","serverVersion":"1.1","event":{"callId":"d1","toolName":"search","arguments":{},"isError":false,"timestamp":2001,"durationMs":12,"result":{"n":2}}}
{"v":1,"kind":"call","ts":2002,"callId":"d2","tool":"search","toolHash":"s1","session":"B","turn":"B1","model":"claude-4","serverVersion":"1.1","event":{"callId":"d2","toolName":"search","arguments":{},"isError":false,"timestamp":2002,"durationMs":14,"result":{"n":3}}}
{"v":1,"kind":"call","ts":2003,"callId":"d3","tool":"search","toolHash":"s1","session":"B","turn":"B1","model":"claude-4","serverVersion":"1.1","event":{"callId":"d3","toolName":"search","arguments":{},"isError":false,"timestamp":2003,"durationMs":16,"result":{"n":4}}}
{"v":1,"kind":"call","ts":2004,"callId":"d4","tool":"order","toolHash":"o2","session":"B","turn":"B1","model":"claude-4","serverVersion":"1.1","event":{"callId":"d4","toolName":"order","arguments":{},"isError":false,"timestamp":2004,"durationMs":25,"result":{"ok":true}}}
{"v":1,"kind":"call","ts":2005,"callId":"d5","tool":"mcpeye_request_capability","session":"B","turn":"B2","model":"claude-4","serverVersion":"1.1","event":{"callId":"d5","toolName":"mcpeye_request_capability","arguments":{"capability":"Export orders to CSV."},"isError":false,"timestamp":2005,"durationMs":0}}
{"v":1,"kind":"call","ts":2006,"callId":"d6","tool":"export_csv","session":"B","turn":"B2","model":"claude-4","serverVersion":"1.1","event":{"callId":"d6","toolName":"export_csv","arguments":{},"isError":true,"timestamp":2006,"durationMs":0,"errorMessage":"unknown tool `export_csv`"}}
{"v":1,"kind":"call","ts":2007,"callId":"d7","tool":"order","toolHash":"o2","session":"B","turn":"B2","model":"claude-4","serverVersion":"1.1","event":{"callId":"d7","toolName":"order","arguments":{},"isError":true,"timestamp":2007,"durationMs":22,"errorMessage":"card declined","intent":"Pay for the teapot."}}
{"v":1,"kind":"method","ts":2008,"method":"resources/read","target":"docs://guide","isError":false,"session":"B"}
"#;

    /// The same kind of calls as ingest payloads: no session, no model, no tool list.
    pub(crate) const PAYLOADS: &str = r#"{"projectId":"p","identity":{"client":"quickstart/1.0","serverVersion":"0.1.0"},"events":[{"callId":"p1","toolName":"search","arguments":{},"isError":false,"timestamp":5,"durationMs":4,"result":{"n":1}},{"callId":"p2","toolName":"mcpeye_request_capability","arguments":{"capability":"export my order history as a CSV file"},"isError":false,"timestamp":6,"durationMs":0}]}
"#;

    fn report_of(text: &str) -> Report {
        let mut input = ReportInput::new();
        input.read_str(text);
        input.report()
    }

    #[test]
    fn overview_counts_calls_users_clients_models_and_the_period() {
        let r = report_of(LOG);
        let o = &r.overview;
        assert_eq!((o.calls, o.errors, o.conversations, o.method_requests), (11, 3, 2, 1));
        assert_eq!(o.models, ["claude-4", "gpt-5"]);
        assert_eq!(o.server_versions, ["1.0", "1.1"]);
        assert_eq!((o.first_ms, o.last_ms), (Some(1001), Some(2007)));
        let p = report_of(PAYLOADS);
        assert_eq!((p.overview.calls, p.overview.clients.as_slice()), (2, ["quickstart/1.0".to_owned()].as_slice()));
    }

    #[test]
    fn the_intent_gap_groups_asks_in_other_words() {
        let mut input = ReportInput::new();
        input.read_str(LOG);
        input.read_str(PAYLOADS);
        let gap = input.report().intent_gap;
        assert_eq!(gap.asks.len(), 1, "{:?}", gap.asks);
        assert_eq!(gap.asks[0].count, 3);
        assert_eq!(gap.asks[0].contexts, ["yearly accounts"]);
        assert_eq!(gap.unknown_tools, [Unknown { name: "export_csv".into(), calls: 1 }]);
        let failed: Vec<(&str, &str)> = gap.failed.iter().map(|f| (f.tool.as_str(), f.intent.as_str())).collect();
        assert_eq!(failed, [("order", "Order the blue mug."), ("order", "Pay for the teapot.")]);
        assert_eq!(
            gap.intents.iter().map(|t| (t.tool.as_str(), t.with_intent)).collect::<Vec<_>>(),
            [("order", 2), ("search", 1)]
        );
        assert!(gap.needs.is_empty());
        let empty = report_of("").intent_gap;
        assert_eq!(empty.needs.len(), 2);
    }

    #[test]
    fn tools_have_percentiles_sizes_and_the_never_called() {
        let t = report_of(LOG).tools;
        let search = t.tools.iter().find(|r| r.tool == "search").unwrap();
        assert_eq!((search.calls, search.errors, search.p50_ms, search.p95_ms, search.p99_ms), (4, 0, 12, 16, 16));
        assert_eq!((search.result_p50_bytes, search.result_max_bytes), (Some(7), Some(7)));
        let order = t.tools.iter().find(|r| r.tool == "order").unwrap();
        assert_eq!((order.calls, order.errors, order.last_error.as_deref()), (4, 2, Some("card declined")));
        assert_eq!(t.never_called, ["refund"]);
        assert!(t.tools.iter().all(|r| r.tool != "export_csv" && r.tool != RESERVED_TOOL_NAME));
        assert!(t.needs.is_empty());
        let p = report_of(PAYLOADS).tools;
        assert!(p.never_called.is_empty() && p.needs[0].contains("tool list"), "{:?}", p.needs);
    }

    #[test]
    fn paths_find_sequences_loops_recoveries_and_error_endings() {
        let p = report_of(LOG).paths;
        assert_eq!((p.conversations, p.calls), (2, 11));
        assert_eq!(p.loops, [Loop { tool: "search".into(), runs: 1, longest: 3 }]);
        let order = p.recoveries.iter().find(|r| r.tool == "order").unwrap();
        assert_eq!((order.errors, order.retried, order.recovered), (1, 1, 1));
        assert_eq!(p.ended_on_error_count, 1);
        assert_eq!((p.ended_on_error[0].conversation.as_str(), p.ended_on_error[0].tool.as_str()), ("B", "order"));
        // search → order occurs in both conversations.
        assert!(p.sequences.iter().any(|s| s.tools == ["search", "order"] && s.count == 2), "{:?}", p.sequences);
        let none = report_of(PAYLOADS).paths;
        assert!(none.sequences.is_empty() && none.needs[0].contains("event log"), "{:?}", none.needs);
    }

    #[test]
    fn paths_count_the_user_turns_and_those_left_on_an_error() {
        let p = report_of(LOG).paths;
        assert_eq!(p.turns, Turns { turns: 4, calls: 11, most_calls: 4, with_several_calls: 3, ended_on_error: 1 });
        assert!(p.needs.is_empty(), "{:?}", p.needs);
        // Sessions without turns: the paths are there, and the turns say what they need.
        let without = report_of(&LOG.replace(",\"turn\":", ",\"t\":")).paths;
        assert_eq!((without.conversations, without.turns.turns), (2, 0));
        assert!(without.needs.iter().any(|n| n.contains("turnId")), "{:?}", without.needs);
    }

    #[test]
    fn versions_compare_a_tool_before_and_after_its_description_changed() {
        let v = report_of(LOG).versions;
        type Row<'a> = (Option<&'a str>, Option<&'a str>, usize, usize, Option<usize>);
        let order: Vec<Row<'_>> = v
            .tools
            .iter()
            .filter(|r| r.tool == "order")
            .map(|r| (r.server_version.as_deref(), r.hash.as_deref(), r.calls, r.errors, r.retries))
            .collect();
        assert_eq!(order, [(Some("1.0"), Some("o1"), 2, 1, Some(1)), (Some("1.1"), Some("o2"), 2, 1, Some(0))]);
        let after = v.tools.iter().find(|r| r.hash.as_deref() == Some("o2")).unwrap();
        assert_eq!(after.description.as_deref(), Some("Order a product by SKU; check stock with search first."));
        // search changed server version, not description: two rows too.
        assert_eq!(v.tools.iter().filter(|r| r.tool == "search").count(), 2);
        let p = report_of(PAYLOADS).versions;
        assert!(p.tools.is_empty() && p.needs.iter().any(|n| n.contains("second version")), "{:?}", p.needs);
        assert!(report_of(r#"{"toolName":"a","callId":"x"}"#).versions.needs[0].contains("serverVersion"));
    }

    #[test]
    fn models_count_calls_errors_tools_and_asks() {
        let m = report_of(LOG).models;
        let rows: Vec<(&str, usize, usize, usize, usize)> =
            m.models.iter().map(|r| (r.model.as_str(), r.calls, r.errors, r.tools, r.asks)).collect();
        assert_eq!(rows, [("claude-4", 7, 2, 3, 1), ("gpt-5", 4, 1, 2, 1)]);
        let p = report_of(PAYLOADS).models;
        assert!(p.models.is_empty() && p.needs[0].contains("model"));
        assert_eq!(p.unknown_model_calls, 2);
    }

    #[test]
    fn the_same_input_gives_the_same_report_whatever_the_file_order() {
        let mut a = ReportInput::new();
        a.read_str(LOG);
        a.read_str(PAYLOADS);
        let mut b = ReportInput::new();
        b.read_str(PAYLOADS);
        b.read_str(LOG);
        let (ra, rb) = (a.report(), b.report());
        assert_eq!(ra.tools, rb.tools);
        assert_eq!(ra.paths, rb.paths);
        assert_eq!(ra.models, rb.models);
        assert_eq!(ra.to_json().to_string(), a.report().to_json().to_string());
    }
}
