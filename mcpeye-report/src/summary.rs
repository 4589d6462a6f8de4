//! [`Report`]: the sections of `mcpeye report`, worked out of a
//! [`ReportInput`](crate::ReportInput). Each section says what data it needs when the input
//! lacks it, rather than showing nothing.

use serde::Serialize;
use std::collections::BTreeMap;

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
    /// Lines (or values of an array) skipped, for any reason ([`InputSection::skipped`]).
    pub skipped: usize,
}

/// A skipped line: where, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Place {
    /// The file (`text` or `value` for input given in memory).
    pub file: String,
    /// Its line, from 1.
    pub line: u64,
    /// Why it was skipped.
    pub reason: String,
}

/// What of the input could not be used, and where: every bad line costs only itself.
///
/// ```
/// use mcpeye_report::ReportInput;
/// let mut input = ReportInput::new();
/// input.read_str("{\"callId\":\"a\",\"toolName\":\"search\",\"durationMs\":\"12\"}\nnot json\n");
/// let report = input.report();
/// assert_eq!(report.input.skipped["durationMs not a non-negative integer"], 1);
/// assert_eq!((report.input.places[1].line, report.input.places[1].reason.as_str()), (2, "not JSON"));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct InputSection {
    /// Skipped lines (or array elements) by reason: not UTF-8, not JSON, too long, not an
    /// event, or a known key of the wrong type.
    pub skipped: BTreeMap<String, usize>,
    /// The first few skipped lines.
    pub places: Vec<Place>,
    /// Files not read (or not to their end), each with why.
    pub unread_files: Vec<String>,
    /// Calls that came before a call of their conversation that was already taken as later
    /// (more than a few places out of time order): their paths are counted in the order read.
    pub out_of_order: usize,
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
    /// Calls without an intent of their own given one by the user's `infer_intent` hook
    /// (the event log's `inferredIntent`), and those intents grouped: kept apart, as inferred.
    #[serde(skip_serializing_if = "is_zero")]
    pub with_inferred: usize,
    /// See [`with_inferred`](Self::with_inferred).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub inferred: Vec<Ask>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

fn is_false(b: &bool) -> bool {
    !*b
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
    /// Whether the intent was inferred by the user's hook (the call had none of its own).
    #[serde(skip_serializing_if = "is_false")]
    pub inferred: bool,
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
/// for (id, ts, error) in [("a", 1_764_576_000_001u64, true), ("b", 1_764_576_000_002, false), ("c", 1_764_576_000_003, true)] {
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

/// What a finding is about; each kind has its threshold and action (docs/report.md#findings).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum FindingKind {
    /// Argument errors naming one parameter of a tool, across users.
    ParameterErrors,
    /// One tool called three times or more in a row, in several conversations.
    Loop,
    /// A tool's error or retry rate rose with a new version, beyond chance.
    VersionRegression,
    /// A tool's error or retry rate fell with a new version, beyond chance.
    VersionImprovement,
    /// A capability request made by several users.
    CapabilityAsked,
    /// A tool name agents call that the server does not have.
    UnknownTool,
    /// A listed tool nobody calls while the others are called.
    NeverCalled,
    /// A tool much slower than the others at p95.
    SlowTool,
    /// Conversations that end on one tool's error.
    Abandonment,
    /// Reports sent through the feedback tool, grouped like asks.
    Feedback,
}

impl FindingKind {
    /// The kind as in the JSON (`parameter_errors`, `loop`, …).
    ///
    /// ```
    /// assert_eq!(mcpeye_report::FindingKind::ParameterErrors.as_str(), "parameter_errors");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            FindingKind::ParameterErrors => "parameter_errors",
            FindingKind::Loop => "loop",
            FindingKind::VersionRegression => "version_regression",
            FindingKind::VersionImprovement => "version_improvement",
            FindingKind::CapabilityAsked => "capability_asked",
            FindingKind::UnknownTool => "unknown_tool",
            FindingKind::NeverCalled => "never_called",
            FindingKind::SlowTool => "slow_tool",
            FindingKind::Abandonment => "abandonment",
            FindingKind::Feedback => "feedback",
        }
    }
}

/// One example behind a finding: an intent, an error message, an ask, a context, a feedback
/// report or a description, as the input holds it (redacted by the SDK that recorded it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Example {
    /// What the text is: `intent`, `error`, `ask`, `context`, `feedback` or `description`.
    pub what: String,
    /// The text (cut to 240 characters).
    pub text: String,
    /// An intent inferred by the user's hook, not given by the agent.
    #[serde(skip_serializing_if = "is_false")]
    pub inferred: bool,
}

/// One thing worth fixing, with its evidence and what to do: the report's "What to fix
/// first". Findings come ranked by impact (docs/report.md#findings).
///
/// ```
/// use mcpeye_report::{FindingKind, ReportInput};
/// let mut input = ReportInput::new();
/// for (i, user) in ["ana", "ben", "cleo"].iter().enumerate() {
///     input.read_str(&format!(
///         r#"{{"callId":"{i}","toolName":"export_csv","arguments":{{}},"isError":true,"errorMessage":"unknown tool `export_csv`","userId":"{user}"}}"#
///     ));
/// }
/// let report = input.report();
/// let f = &report.findings[0];
/// assert_eq!((f.kind, f.tool.as_deref()), (FindingKind::UnknownTool, Some("export_csv")));
/// assert_eq!(f.evidence["users"].as_u64(), Some(3));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Finding {
    /// What it is about.
    pub kind: FindingKind,
    /// The tool (or the unknown name), when it is about one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The parameter, when it is about one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parameter: Option<String>,
    /// The versions compared, `before → after`, for a version's finding.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// What was found, in one sentence with its numbers.
    pub what: String,
    /// The numbers behind it, by name (calls, users, conversations, rates, z…).
    pub evidence: BTreeMap<String, serde_json::Number>,
    /// A few examples (intents, error messages, asks), redacted as recorded.
    pub examples: Vec<Example>,
    /// What to do about it.
    pub action: String,
    /// What it weighs in the ranking: the calls it affected (docs/report.md#findings).
    pub impact: f64,
    /// The id of the report's section with its evidence (`tools`, `paths`, `versions`,
    /// `intent-gap`, `feedback`): the page links to it.
    pub section: String,
}

/// One category of the feedback tool's reports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct FeedbackCategory {
    /// `issue`, `missing_capability`, `other` or `praise` (another value counts as `other`).
    pub category: String,
    /// Reports of it.
    pub calls: usize,
    /// Of those, the ones that said the task was completed, and not completed.
    pub task_completed: usize,
    /// See [`task_completed`](Self::task_completed).
    pub task_not_completed: usize,
    /// The texts, grouped like the asks, most frequent first.
    pub reports: Vec<Ask>,
}

/// What agents reported through the feedback tool (`mcpeye_send_feedback`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct FeedbackSection {
    /// Reports, all categories.
    pub calls: usize,
    /// Per category that has reports, in the order issue, missing capability, other, praise.
    pub categories: Vec<FeedbackCategory>,
    /// What the section needs and the input lacks.
    pub needs: Vec<String>,
}

/// The report of `mcpeye report`: what to fix first, an overview, the Intent Gap, the tools, the paths agents
/// take, the tools across versions, the models and the feedback. `Display` prints it for a terminal,
/// [`to_html`](Self::to_html) makes a page, and `Serialize` gives it to scripts. Made by
/// [`ReportInput::report`](crate::ReportInput::report); every list is sorted, so the same input gives the same report.
///
/// ```
/// use mcpeye_report::ReportInput;
/// let mut input = ReportInput::new();
/// input.read_str(r#"{"v":1,"kind":"tools","ts":1764576000001,"tools":[{"name":"search","hash":"a1"},{"name":"export","hash":"b2"}]}
/// {"v":1,"kind":"call","ts":1764576000002,"callId":"1","tool":"search","session":"s","event":{"toolName":"search","isError":true,"errorMessage":"timeout"}}
/// {"v":1,"kind":"call","ts":1764576000003,"callId":"2","tool":"search","session":"s","event":{"toolName":"search","isError":false}}"#);
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
    /// What to fix first: the findings, ranked by impact.
    pub findings: Vec<Finding>,
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
    /// What agents reported through the feedback tool.
    pub feedback: FeedbackSection,
    /// What of the input was skipped, and where.
    pub input: InputSection,
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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::ReportInput;
    use mcpeye_runtime::contract::RESERVED_TOOL_NAME;

    /// A hand-made event log: tool lists of two server versions and two conversations.
    pub(crate) const LOG: &str = r#"{"v":1,"kind":"log","ts":1764576001000,"writer":"mcpeye-rs/0.1.0","pid":1}
{"v":1,"kind":"tools","ts":1764576001000,"serverVersion":"1.0","tools":[{"name":"search","hash":"s1","description":"Search."},{"name":"order","hash":"o1","description":"Order."},{"name":"refund","hash":"r1","description":"Refund an order."},{"name":"mcpeye_request_capability","hash":"m1"}]}
{"v":1,"kind":"call","ts":1764576001001,"callId":"c1","tool":"search","toolHash":"s1","session":"A","turn":"A1","model":"gpt-5","serverVersion":"1.0","event":{"callId":"c1","toolName":"search","arguments":{},"isError":false,"timestamp":1764576001001,"durationMs":10,"result":{"n":1},"intent":"Find a gift mug."}}
{"v":1,"kind":"call","ts":1764576001002,"callId":"c2","tool":"order","toolHash":"o1","session":"A","turn":"A1","model":"gpt-5","serverVersion":"1.0","event":{"callId":"c2","toolName":"order","arguments":{},"isError":true,"timestamp":1764576001002,"durationMs":30,"errorMessage":"out of stock","intent":"Order the blue mug."}}
{"v":1,"kind":"call","ts":1764576001003,"callId":"c3","tool":"order","toolHash":"o1","session":"A","turn":"A1","model":"gpt-5","serverVersion":"1.0","event":{"callId":"c3","toolName":"order","arguments":{},"isError":false,"timestamp":1764576001003,"durationMs":20,"result":{"ok":true}}}
{"v":1,"kind":"call","ts":1764576001004,"callId":"c4","tool":"mcpeye_request_capability","session":"A","turn":"A2","model":"gpt-5","serverVersion":"1.0","event":{"callId":"c4","toolName":"mcpeye_request_capability","arguments":{"capability":"export my orders as CSV","context":"yearly accounts"},"isError":false,"timestamp":1764576001004,"durationMs":0}}
{"v":1,"kind":"tools","ts":1764576002000,"serverVersion":"1.1","tools":[{"name":"search","hash":"s1","description":"Search."},{"name":"order","hash":"o2","description":"Order a product by SKU; check stock with search first."},{"name":"refund","hash":"r1","description":"Refund an order."},{"name":"mcpeye_request_capability","hash":"m1"}]}
{"v":1,"kind":"call","ts":1764576002001,"callId":"d1","tool":"search","toolHash":"s1","session":"B","turn":"B1","model":"claude-4","serverVersion":"1.1","event":{"callId":"d1","toolName":"search","arguments":{},"isError":false,"timestamp":1764576002001,"durationMs":12,"result":{"n":2}}}
{"v":1,"kind":"call","ts":1764576002002,"callId":"d2","tool":"search","toolHash":"s1","session":"B","turn":"B1","model":"claude-4","serverVersion":"1.1","event":{"callId":"d2","toolName":"search","arguments":{},"isError":false,"timestamp":1764576002002,"durationMs":14,"result":{"n":3}}}
{"v":1,"kind":"call","ts":1764576002003,"callId":"d3","tool":"search","toolHash":"s1","session":"B","turn":"B1","model":"claude-4","serverVersion":"1.1","event":{"callId":"d3","toolName":"search","arguments":{},"isError":false,"timestamp":1764576002003,"durationMs":16,"result":{"n":4}}}
{"v":1,"kind":"call","ts":1764576002004,"callId":"d4","tool":"order","toolHash":"o2","session":"B","turn":"B1","model":"claude-4","serverVersion":"1.1","event":{"callId":"d4","toolName":"order","arguments":{},"isError":false,"timestamp":1764576002004,"durationMs":25,"result":{"ok":true}}}
{"v":1,"kind":"call","ts":1764576002005,"callId":"d5","tool":"mcpeye_request_capability","session":"B","turn":"B2","model":"claude-4","serverVersion":"1.1","event":{"callId":"d5","toolName":"mcpeye_request_capability","arguments":{"capability":"Export orders to CSV."},"isError":false,"timestamp":1764576002005,"durationMs":0}}
{"v":1,"kind":"call","ts":1764576002006,"callId":"d6","tool":"export_csv","session":"B","turn":"B2","model":"claude-4","serverVersion":"1.1","event":{"callId":"d6","toolName":"export_csv","arguments":{},"isError":true,"timestamp":1764576002006,"durationMs":0,"errorMessage":"unknown tool `export_csv`"}}
{"v":1,"kind":"call","ts":1764576002007,"callId":"d7","tool":"order","toolHash":"o2","session":"B","turn":"B2","model":"claude-4","serverVersion":"1.1","event":{"callId":"d7","toolName":"order","arguments":{},"isError":true,"timestamp":1764576002007,"durationMs":22,"errorMessage":"card declined","intent":"Pay for the teapot."}}
{"v":1,"kind":"method","ts":1764576002008,"method":"resources/read","target":"docs://guide","isError":false,"session":"B"}
"#;

    /// The same kind of calls as ingest payloads: no session, no model, no tool list.
    pub(crate) const PAYLOADS: &str = r#"{"projectId":"p","identity":{"client":"quickstart/1.0","serverVersion":"0.1.0"},"events":[{"callId":"p1","toolName":"search","arguments":{},"isError":false,"timestamp":1764576000005,"durationMs":4,"result":{"n":1}},{"callId":"p2","toolName":"mcpeye_request_capability","arguments":{"capability":"export my order history as a CSV file"},"isError":false,"timestamp":1764576000006,"durationMs":0}]}
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
        assert_eq!((o.first_ms, o.last_ms), (Some(1_764_576_001_001), Some(1_764_576_002_007)));
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
