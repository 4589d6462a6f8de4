//! [`IntentGap`]: what users wanted and could not get, summarised from captured events.
//!
//! It reads events in their wire form (`docs/wire-format.md#event`), wherever they were kept:
//! a `testing::MemorySink`, an
//! `testing::IngestReceiver`, or a JSON Lines file of payloads. Events
//! are counted once per `callId` (delivery is at least once, so a payload may come twice).

use super::table::{grouped, one_line, Align, Table};
use crate::contract::{FEEDBACK_TOOL_NAME, RESERVED_TOOL_NAME};
use serde::Serialize;
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::io::BufRead;

/// How many intents per tool, and rows per section, the table shows (the JSON has them all).
const SHOWN: usize = 5;
/// Longest text in a cell of the table.
const CELL: usize = 72;

/// A capability users asked for through `mcpeye_request_capability`, with the requests that
/// said the same thing (compared without case, surrounding whitespace and final punctuation).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct CapabilityRequest {
    /// The capability, as first written.
    pub capability: String,
    /// How many calls asked for it.
    pub count: usize,
    /// The distinct `context` arguments given with it, in order of arrival.
    pub contexts: Vec<String>,
}

/// One intent an agent gave for calls of a tool, and how often.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct IntentCount {
    /// The intent, as recorded.
    pub intent: String,
    /// Calls that gave exactly this intent.
    pub count: usize,
}

/// The calls of one tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolActivity {
    /// The tool's name.
    pub tool: String,
    /// Calls recorded.
    pub calls: usize,
    /// Calls that ended in an error (`isError`).
    pub errors: usize,
    /// The last error message recorded, if any.
    pub last_error: Option<String>,
    /// The intents given, most frequent first, then in order of arrival.
    pub intents: Vec<IntentCount>,
}

impl ToolActivity {
    /// Calls that carried an intent.
    ///
    /// ```
    /// use serde_json::json;
    /// let events = [
    ///     json!({"callId": "a", "toolName": "search", "isError": false, "intent": "Find a mug."}),
    ///     json!({"callId": "b", "toolName": "search", "isError": false}),
    /// ];
    /// assert_eq!(mcpeye::report::IntentGap::from_events(&events).tools[0].calls_with_intent(), 1);
    /// ```
    pub fn calls_with_intent(&self) -> usize {
        self.intents.iter().map(|i| i.count).sum()
    }
}

/// A call with an intent that ended in an error: a user who wanted something and did not get it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct FailedIntent {
    /// The tool called.
    pub tool: String,
    /// What the agent said the user wanted.
    pub intent: String,
    /// The error message, when there is one.
    pub error: Option<String>,
    /// The event's `callId`.
    pub call_id: Option<String>,
}

/// A tool that agents called and the server does not have.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct UnknownTool {
    /// The name the agent used.
    pub name: String,
    /// How many calls used it.
    pub calls: usize,
}

/// What one model did: its calls, and the capabilities it asked for (from events that know
/// their model: [`IntentGap::from_attributed_events`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ModelActivity {
    /// The model, as the request named it.
    pub model: String,
    /// Calls it made (the reserved tool's included).
    pub calls: usize,
    /// The capabilities it asked for through `mcpeye_request_capability`, most asked first.
    pub capability_requests: Vec<CapabilityCount>,
}

/// A capability and how often it was asked for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct CapabilityCount {
    /// The capability, as first written.
    pub capability: String,
    /// How many calls asked for it.
    pub count: usize,
}

/// One conversation (a session, or a conversation handle: docs/attribution.md#conversation):
/// the tools it called, in order, and whether it ended up asking for a missing capability.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Conversation {
    /// The session id or handle.
    pub id: String,
    /// Calls in it.
    pub calls: usize,
    /// Calls that ended in an error.
    pub errors: usize,
    /// The tools called, in order of arrival (the reserved tool included), at most 50.
    pub journey: Vec<String>,
    /// The capabilities it asked for.
    pub capability_requests: Vec<String>,
}

/// What agents read besides calling tools, from a tracker's [`Stats`](crate::Stats)
/// ([`IntentGap::with_reads`]): these requests never reach the ingest, so events cannot tell.
///
/// ```
/// use mcpeye::report::IntentGap;
/// let mut stats = mcpeye::Stats::default();
/// stats.resources_read.insert("docs://guide".into(), 3);
/// let gap = IntentGap::from_events(&[]).with_reads(&stats);
/// let reads = gap.reads.unwrap();
/// assert_eq!((reads.resources[0].name.as_str(), reads.resources[0].count), ("docs://guide", 3));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Reads {
    /// Resources read (`resources/read`), by URI, most read first.
    pub resources: Vec<ReadCount>,
    /// Prompts got (`prompts/get`), by name, most got first.
    pub prompts: Vec<ReadCount>,
    /// Requests per method other than `tools/call` (the lists and `completion/complete`
    /// included), with how many were answered with an error, in method order.
    pub methods: Vec<MethodRequests>,
}

/// A resource URI or a prompt name, and how often agents asked for it.
///
/// ```
/// let mut stats = mcpeye::Stats::default();
/// stats.prompts_got.insert("review".into(), 2);
/// let gap = mcpeye::report::IntentGap::default().with_reads(&stats);
/// let prompt: &mcpeye::report::ReadCount = &gap.reads.as_ref().unwrap().prompts[0];
/// assert_eq!((prompt.name.as_str(), prompt.count), ("review", 2));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ReadCount {
    /// The URI or the name, as the client sent it (`_OTHER` past 256 distinct ones).
    pub name: String,
    /// Requests for it.
    pub count: u64,
}

/// The requests of one method ([`Reads::methods`]).
///
/// ```
/// let mut stats = mcpeye::Stats::default();
/// stats.methods.insert("tools/list".into(), mcpeye::MethodCount::default());
/// let gap = mcpeye::report::IntentGap::default().with_reads(&stats);
/// let list: &mcpeye::report::MethodRequests = &gap.reads.as_ref().unwrap().methods[0];
/// assert_eq!((list.method.as_str(), list.requests, list.errors), ("tools/list", 0, 0));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct MethodRequests {
    /// The method, e.g. `resources/read`.
    pub method: String,
    /// Requests received.
    pub requests: u64,
    /// Of those, the ones answered with a JSON-RPC error.
    pub errors: u64,
}

/// Longest journey kept per conversation.
const MAX_JOURNEY: usize = 50;

/// The Intent Gap of a set of captured events: the capabilities users asked for, the tools most
/// called and most failing, the intents given per tool, the calls with an intent that ended in
/// an error, and the unknown tools agents tried. `Display` prints terminal tables;
/// [`to_json`](Self::to_json) (or `Serialize`) gives the same for scripts.
///
/// ```
/// use mcpeye::report::IntentGap;
/// use serde_json::json;
/// let events = [
///     json!({"callId": "a", "toolName": "mcpeye_request_capability", "isError": false,
///            "arguments": {"capability": "Export as CSV", "context": "yearly accounts"}}),
///     json!({"callId": "b", "toolName": "search", "isError": true, "arguments": {},
///            "errorMessage": "timeout", "intent": "Find a gift mug."}),
///     json!({"callId": "b", "toolName": "search", "isError": true, "arguments": {}}),  // a re-send
/// ];
/// let gap = IntentGap::from_events(&events);
/// assert_eq!((gap.calls, gap.duplicates), (2, 1));
/// assert_eq!(gap.capability_requests[0].capability, "Export as CSV");
/// assert_eq!(gap.failed_intents[0].error.as_deref(), Some("timeout"));
/// println!("{gap}");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct IntentGap {
    /// Distinct calls read (events with a `callId` already seen are left out).
    pub calls: usize,
    /// Events left out because their `callId` was already seen.
    pub duplicates: usize,
    /// Lines of a JSON Lines input that were neither a payload nor an event.
    pub skipped_lines: usize,
    /// Capabilities asked for, most asked first.
    pub capability_requests: Vec<CapabilityRequest>,
    /// The server's tools (not mcpeye's own reserved and feedback tools, not unknown names),
    /// most called first.
    pub tools: Vec<ToolActivity>,
    /// Calls with an intent that ended in an error, in order of arrival.
    pub failed_intents: Vec<FailedIntent>,
    /// Names of tools that do not exist, most called first.
    pub unknown_tools: Vec<UnknownTool>,
    /// Calls and capability requests per model, most calls first. Only events that know their
    /// model fill it ([`from_attributed_events`](Self::from_attributed_events)): the wire has
    /// no key for the model.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub models: Vec<ModelActivity>,
    /// Conversations, most calls first; likewise only from
    /// [`from_attributed_events`](Self::from_attributed_events) (the wire has no session key).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub conversations: Vec<Conversation>,
    /// What agents read (resources, prompts) and the other methods they sent, once
    /// [`with_reads`](Self::with_reads) gave a tracker's counts: never from events.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reads: Option<Reads>,
}

impl IntentGap {
    /// The summary of these events (objects in the wire form; anything else is ignored).
    ///
    /// ```
    /// let event = serde_json::json!({"callId": "a", "toolName": "search", "isError": false});
    /// let gap = mcpeye::report::IntentGap::from_events([&event, &event]);
    /// assert_eq!((gap.calls, gap.duplicates), (1, 1));
    /// ```
    pub fn from_events<'a>(events: impl IntoIterator<Item = &'a Value>) -> Self {
        let mut builder = Builder::default();
        for event in events {
            builder.add(event);
        }
        builder.finish()
    }

    /// The summary of events as [`Config::before_send`](crate::Config::before_send) sees them,
    /// which know what the wire does not: each call's model and session (or conversation
    /// handle). Collect them in a `before_send` that returns each event unchanged; the result
    /// also has [`models`](Self::models) and [`conversations`](Self::conversations).
    ///
    /// ```
    /// # #[cfg(feature = "testing")] {
    /// use mcpeye::{report::IntentGap, testing::MemorySink, Config, Manifest, Origin};
    /// use std::sync::{Arc, Mutex};
    /// let seen = Arc::new(Mutex::new(Vec::new()));
    /// let keep = seen.clone();
    /// let config = Config::new("p").before_send(move |e| { keep.lock().unwrap().push(e.clone()); Some(e) });
    /// let (tracker, _sink) = MemorySink::with_config(config).unwrap();
    /// let manifest = Manifest::builder().tracker(tracker.clone()).build();
    /// let origin = Origin::default().with_model("gpt-5").with_session_id("s1");
    /// manifest.call_from(&origin, "mcpeye_request_capability", serde_json::json!({"capability": "CSV export"}));
    /// tracker.flush(std::time::Duration::from_secs(5));
    /// let gap = IntentGap::from_attributed_events(seen.lock().unwrap().iter());
    /// assert_eq!(gap.models[0].model, "gpt-5");
    /// assert_eq!(gap.models[0].capability_requests[0].capability, "CSV export");
    /// assert_eq!(gap.conversations[0].journey, ["mcpeye_request_capability"]);
    /// # }
    /// ```
    pub fn from_attributed_events<'a>(events: impl IntoIterator<Item = &'a crate::Event>) -> Self {
        let mut builder = Builder::default();
        for event in events {
            let mut wire = serde_json::Map::new();
            wire.insert("toolName".into(), Value::from(event.tool_name.as_ref()));
            wire.insert("arguments".into(), event.arguments.clone());
            wire.insert("isError".into(), Value::Bool(event.is_error()));
            if let Some(m) = event.outcome.error_message() {
                wire.insert("errorMessage".into(), Value::from(m));
            }
            if let Some((intent, _)) = &event.intent {
                wire.insert("intent".into(), Value::from(intent.as_str()));
            }
            builder.add_attributed(&Value::Object(wire), event.model(), event.session_id());
        }
        builder.finish()
    }

    /// The summary of the events of these payloads (`{"projectId", "identity", "events": […]}`).
    ///
    /// ```
    /// let payload = serde_json::json!({"projectId": "p", "identity": {},
    ///     "events": [{"callId": "a", "toolName": "search", "isError": true, "errorMessage": "timeout"}]});
    /// let gap = mcpeye::report::IntentGap::from_payloads([&payload]);
    /// assert_eq!(gap.tools[0].errors, 1);
    /// ```
    pub fn from_payloads<'a>(payloads: impl IntoIterator<Item = &'a Value>) -> Self {
        Self::from_events(payloads.into_iter().filter_map(|p| p["events"].as_array()).flatten())
    }

    /// Reads JSON Lines: each line a payload (as POSTed to the ingest), or a single event.
    /// Blank lines are ignored; other lines are counted in [`skipped_lines`](Self::skipped_lines).
    ///
    /// ```
    /// let lines = r#"{"projectId":"p","identity":{},"events":[{"callId":"a","toolName":"t","isError":false}]}
    /// not json"#;
    /// let gap = mcpeye::report::IntentGap::from_json_lines(lines.as_bytes())?;
    /// assert_eq!((gap.calls, gap.skipped_lines), (1, 1));
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn from_json_lines(reader: impl BufRead) -> std::io::Result<Self> {
        let mut builder = Builder::default();
        for line in reader.lines() {
            let line = line?;
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<Value>(&line) {
                Ok(Value::Object(o)) if o.get("events").is_some_and(Value::is_array) => {
                    o["events"].as_array().into_iter().flatten().for_each(|e| builder.add(e));
                }
                Ok(event @ Value::Object(_)) if event.get("toolName").is_some_and(Value::is_string) => {
                    builder.add(&event)
                }
                _ => builder.gap.skipped_lines += 1,
            }
        }
        Ok(builder.finish())
    }

    /// The summary with what agents read besides calling tools: the resources read, the
    /// prompts got and the requests of each other method, from a tracker's counters. The
    /// ingest receives none of these requests (its events are tool calls), so only the process
    /// that served them knows them.
    ///
    /// ```
    /// use mcpeye::report::IntentGap;
    /// let stats = mcpeye::Tracker::from_fn(|_| {}).stats();
    /// let gap = IntentGap::from_events(&[]).with_reads(&stats);
    /// let reads = gap.reads.as_ref().unwrap();
    /// assert!(reads.resources.is_empty() && reads.prompts.is_empty());
    /// assert!(gap.to_string().contains("What agents read"));
    /// ```
    pub fn with_reads(mut self, stats: &crate::Stats) -> Self {
        let most_first = |map: &std::collections::BTreeMap<String, u64>| {
            let mut counts: Vec<ReadCount> =
                map.iter().map(|(name, &count)| ReadCount { name: name.clone(), count }).collect();
            // Stable: equal counts stay in name order.
            counts.sort_by_key(|c| std::cmp::Reverse(c.count));
            counts
        };
        let methods = stats
            .methods
            .iter()
            .map(|(method, c)| MethodRequests { method: method.clone(), requests: c.requests, errors: c.errors })
            .collect();
        self.reads = Some(Reads {
            resources: most_first(&stats.resources_read),
            prompts: most_first(&stats.prompts_got),
            methods,
        });
        self
    }

    /// The tools that failed at least once, most errors first.
    ///
    /// ```
    /// use serde_json::json;
    /// let events = [
    ///     json!({"callId": "a", "toolName": "search", "isError": true}),
    ///     json!({"callId": "b", "toolName": "order", "isError": false}),
    /// ];
    /// let gap = mcpeye::report::IntentGap::from_events(&events);
    /// assert_eq!(gap.most_failing().iter().map(|t| t.tool.as_str()).collect::<Vec<_>>(), ["search"]);
    /// ```
    pub fn most_failing(&self) -> Vec<&ToolActivity> {
        let mut failing: Vec<&ToolActivity> = self.tools.iter().filter(|t| t.errors > 0).collect();
        failing.sort_by(|a, b| b.errors.cmp(&a.errors).then_with(|| a.tool.cmp(&b.tool)));
        failing
    }

    /// The summary as JSON (the same as serialising it).
    ///
    /// ```
    /// let event = serde_json::json!({"callId": "a", "toolName": "search", "isError": false});
    /// let json = mcpeye::report::IntentGap::from_events([&event]).to_json();
    /// assert_eq!(json["tools"][0]["tool"], "search");
    /// ```
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// Collects events, then sorts the groups.
#[derive(Default)]
struct Builder {
    gap: IntentGap,
    seen: HashSet<String>,
    capabilities: HashMap<String, usize>,
    tools: HashMap<String, usize>,
    unknown: HashMap<String, usize>,
    models: HashMap<String, usize>,
    conversations: HashMap<String, usize>,
}

impl Builder {
    /// [`add`](Self::add), and the event's model and conversation counted.
    fn add_attributed(&mut self, event: &Value, model: Option<&str>, conversation: Option<&str>) {
        let Some(tool) = event.get("toolName").and_then(Value::as_str) else { return };
        let is_error = event.get("isError").and_then(Value::as_bool).unwrap_or(false);
        let capability = (tool == RESERVED_TOOL_NAME && !is_error)
            .then(|| event["arguments"].get("capability").and_then(Value::as_str).map(str::trim))
            .flatten()
            .filter(|c| !c.is_empty());
        if let Some(model) = model {
            let i = *self.models.entry(model.to_owned()).or_insert_with(|| {
                self.gap.models.push(ModelActivity {
                    model: model.to_owned(),
                    calls: 0,
                    capability_requests: Vec::new(),
                });
                self.gap.models.len() - 1
            });
            let m = &mut self.gap.models[i];
            m.calls += 1;
            if let Some(c) = capability {
                let key = group_key(c);
                match m.capability_requests.iter_mut().find(|r| group_key(&r.capability) == key) {
                    Some(r) => r.count += 1,
                    None => m.capability_requests.push(CapabilityCount { capability: c.to_owned(), count: 1 }),
                }
            }
        }
        if let Some(id) = conversation {
            let i = *self.conversations.entry(id.to_owned()).or_insert_with(|| {
                self.gap.conversations.push(Conversation {
                    id: id.to_owned(),
                    calls: 0,
                    errors: 0,
                    journey: Vec::new(),
                    capability_requests: Vec::new(),
                });
                self.gap.conversations.len() - 1
            });
            let c = &mut self.gap.conversations[i];
            c.calls += 1;
            c.errors += usize::from(is_error);
            if c.journey.len() < MAX_JOURNEY {
                c.journey.push(tool.to_owned());
            }
            if let Some(cap) = capability {
                c.capability_requests.push(cap.to_owned());
            }
        }
        self.add(event);
    }

    fn add(&mut self, event: &Value) {
        let Some(tool) = event.get("toolName").and_then(Value::as_str) else { return };
        if let Some(id) = event.get("callId").and_then(Value::as_str) {
            if !self.seen.insert(id.to_owned()) {
                self.gap.duplicates += 1;
                return;
            }
        }
        self.gap.calls += 1;
        let is_error = event.get("isError").and_then(Value::as_bool).unwrap_or(false);
        let error = event.get("errorMessage").and_then(Value::as_str);
        let intent = event.get("intent").and_then(Value::as_str).filter(|i| !i.trim().is_empty());

        if tool == RESERVED_TOOL_NAME {
            let text = |key: &str| event["arguments"].get(key).and_then(Value::as_str).map(str::trim);
            if let Some(capability) = text("capability").filter(|c| !c.is_empty() && !is_error) {
                let i = *self.capabilities.entry(group_key(capability)).or_insert_with(|| {
                    self.gap.capability_requests.push(CapabilityRequest {
                        capability: capability.to_owned(),
                        count: 0,
                        contexts: Vec::new(),
                    });
                    self.gap.capability_requests.len() - 1
                });
                let request = &mut self.gap.capability_requests[i];
                request.count += 1;
                if let Some(context) = text("context").filter(|c| !c.is_empty()) {
                    if !request.contexts.iter().any(|c| c == context) {
                        request.contexts.push(context.to_owned());
                    }
                }
            }
            return;
        }
        // Feedback is mcpeye's own tool, not one of the server's: `mcpeye report` shows it.
        if tool == FEEDBACK_TOOL_NAME {
            return;
        }
        if is_error && error.is_some_and(|e| e.starts_with("unknown tool `")) {
            let i = *self.unknown.entry(tool.to_owned()).or_insert_with(|| {
                self.gap.unknown_tools.push(UnknownTool { name: tool.to_owned(), calls: 0 });
                self.gap.unknown_tools.len() - 1
            });
            self.gap.unknown_tools[i].calls += 1;
            return;
        }
        let i = *self.tools.entry(tool.to_owned()).or_insert_with(|| {
            self.gap.tools.push(ToolActivity {
                tool: tool.to_owned(),
                calls: 0,
                errors: 0,
                last_error: None,
                intents: Vec::new(),
            });
            self.gap.tools.len() - 1
        });
        let activity = &mut self.gap.tools[i];
        activity.calls += 1;
        if is_error {
            activity.errors += 1;
            if let Some(e) = error {
                activity.last_error = Some(e.to_owned());
            }
        }
        if let Some(intent) = intent {
            match activity.intents.iter_mut().find(|i| i.intent == intent) {
                Some(seen) => seen.count += 1,
                None => activity.intents.push(IntentCount { intent: intent.to_owned(), count: 1 }),
            }
            if is_error {
                self.gap.failed_intents.push(FailedIntent {
                    tool: tool.to_owned(),
                    intent: intent.to_owned(),
                    error: error.map(str::to_owned),
                    call_id: event.get("callId").and_then(Value::as_str).map(str::to_owned),
                });
            }
        }
    }

    fn finish(self) -> IntentGap {
        let mut gap = self.gap;
        // Stable sorts: ties keep the order of arrival.
        gap.capability_requests.sort_by_key(|r| std::cmp::Reverse(r.count));
        gap.tools.sort_by(|a, b| b.calls.cmp(&a.calls).then_with(|| a.tool.cmp(&b.tool)));
        for t in &mut gap.tools {
            t.intents.sort_by_key(|i| std::cmp::Reverse(i.count));
        }
        gap.unknown_tools.sort_by_key(|u| std::cmp::Reverse(u.calls));
        gap.models.sort_by(|a, b| b.calls.cmp(&a.calls).then_with(|| a.model.cmp(&b.model)));
        for m in &mut gap.models {
            m.capability_requests.sort_by_key(|r| std::cmp::Reverse(r.count));
        }
        gap.conversations.sort_by_key(|c| std::cmp::Reverse(c.calls));
        gap
    }
}

/// Requests that differ only in case, spacing or final punctuation are one capability.
fn group_key(capability: &str) -> String {
    let flat = capability.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase();
    flat.trim_end_matches(['.', '!', '?', ';', ',']).trim_end().to_owned()
}

fn more(f: &mut fmt::Formatter<'_>, shown: usize, total: usize, what: &str) -> fmt::Result {
    if total > shown {
        writeln!(f, "  … and {} more {what} (see the JSON)", total - shown)?;
    }
    Ok(())
}

impl fmt::Display for IntentGap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Intent Gap: {} call{}", grouped(self.calls), if self.calls == 1 { "" } else { "s" })?;
        if self.duplicates > 0 {
            write!(
                f,
                " ({} re-sent event{} counted once)",
                self.duplicates,
                if self.duplicates == 1 { "" } else { "s" }
            )?;
        }
        if self.skipped_lines > 0 {
            write!(
                f,
                ", {} unreadable line{} skipped",
                self.skipped_lines,
                if self.skipped_lines == 1 { "" } else { "s" }
            )?;
        }
        writeln!(f)?;

        writeln!(f, "\nCapabilities users asked for ({RESERVED_TOOL_NAME}), most asked first")?;
        if self.capability_requests.is_empty() {
            writeln!(f, "  (none)")?;
        } else {
            let mut t = Table::new(&[("asked", Align::Right), ("capability", Align::Left), ("context", Align::Left)]);
            for r in self.capability_requests.iter().take(SHOWN * 2) {
                let context = match r.contexts.len() {
                    0 => String::new(),
                    1 => one_line(&r.contexts[0], CELL / 2),
                    n => format!("{} (+{} more)", one_line(&r.contexts[0], CELL / 2), n - 1),
                };
                t.row([grouped(r.count), one_line(&r.capability, CELL), context]);
            }
            t.write(f, 2)?;
            more(f, SHOWN * 2, self.capability_requests.len(), "capabilities")?;
        }

        writeln!(f, "\nTools, most called first")?;
        if self.tools.is_empty() {
            writeln!(f, "  (none)")?;
        } else {
            let mut t = Table::new(&[
                ("tool", Align::Left),
                ("calls", Align::Right),
                ("errors", Align::Right),
                ("error rate", Align::Right),
                ("with intent", Align::Right),
            ]);
            for a in self.tools.iter().take(SHOWN * 2) {
                t.row([
                    a.tool.clone(),
                    grouped(a.calls),
                    grouped(a.errors),
                    format!("{:.0} %", 100.0 * a.errors as f64 / a.calls.max(1) as f64),
                    grouped(a.calls_with_intent()),
                ]);
            }
            t.write(f, 2)?;
            more(f, SHOWN * 2, self.tools.len(), "tools")?;
        }

        let failing = self.most_failing();
        writeln!(f, "\nTools most failing")?;
        if failing.is_empty() {
            writeln!(f, "  (none)")?;
        } else {
            let mut t = Table::new(&[
                ("tool", Align::Left),
                ("errors", Align::Right),
                ("of calls", Align::Right),
                ("last error", Align::Left),
            ]);
            for a in failing.iter().take(SHOWN) {
                t.row([
                    a.tool.clone(),
                    grouped(a.errors),
                    grouped(a.calls),
                    a.last_error.as_deref().map(|e| one_line(e, CELL)).unwrap_or_default(),
                ]);
            }
            t.write(f, 2)?;
            more(f, SHOWN, failing.len(), "tools")?;
        }

        writeln!(f, "\nIntents per tool")?;
        let with_intents: Vec<&ToolActivity> = self.tools.iter().filter(|t| !t.intents.is_empty()).collect();
        if with_intents.is_empty() {
            writeln!(f, "  (none)")?;
        }
        for a in with_intents {
            writeln!(f, "  {} ({} of {} calls)", a.tool, grouped(a.calls_with_intent()), grouped(a.calls))?;
            for i in a.intents.iter().take(SHOWN) {
                writeln!(f, "    {:>3}×  {}", i.count, one_line(&i.intent, CELL + 20))?;
            }
            if a.intents.len() > SHOWN {
                writeln!(f, "    … and {} more intents (see the JSON)", a.intents.len() - SHOWN)?;
            }
        }

        writeln!(f, "\nCalls with an intent that ended in an error")?;
        if self.failed_intents.is_empty() {
            writeln!(f, "  (none)")?;
        } else {
            let mut t = Table::new(&[("tool", Align::Left), ("intent", Align::Left), ("error", Align::Left)]);
            for c in self.failed_intents.iter().take(SHOWN * 2) {
                t.row([
                    c.tool.clone(),
                    one_line(&c.intent, CELL),
                    c.error.as_deref().map(|e| one_line(e, CELL / 2)).unwrap_or_default(),
                ]);
            }
            t.write(f, 2)?;
            more(f, SHOWN * 2, self.failed_intents.len(), "calls")?;
        }

        if !self.unknown_tools.is_empty() {
            writeln!(f, "\nUnknown tools agents tried")?;
            let mut t = Table::new(&[("tool", Align::Left), ("calls", Align::Right)]);
            for u in self.unknown_tools.iter().take(SHOWN * 2) {
                t.row([one_line(&u.name, CELL), grouped(u.calls)]);
            }
            t.write(f, 2)?;
            more(f, SHOWN * 2, self.unknown_tools.len(), "names")?;
        }

        if !self.models.is_empty() {
            writeln!(f, "\nModels, most calls first, with the capabilities each asked for")?;
            let mut t = Table::new(&[("model", Align::Left), ("calls", Align::Right), ("asked for", Align::Left)]);
            for m in self.models.iter().take(SHOWN * 2) {
                let asked: Vec<String> =
                    m.capability_requests.iter().take(3).map(|r| format!("{}× {}", r.count, r.capability)).collect();
                t.row([one_line(&m.model, CELL / 2), grouped(m.calls), one_line(&asked.join("; "), CELL)]);
            }
            t.write(f, 2)?;
            more(f, SHOWN * 2, self.models.len(), "models")?;
        }

        if !self.conversations.is_empty() {
            writeln!(f, "\nConversations, most calls first")?;
            let mut t = Table::new(&[
                ("conversation", Align::Left),
                ("calls", Align::Right),
                ("errors", Align::Right),
                ("journey", Align::Left),
            ]);
            for c in self.conversations.iter().take(SHOWN) {
                t.row([
                    one_line(&c.id, 28),
                    grouped(c.calls),
                    grouped(c.errors),
                    one_line(&c.journey.join(" → "), CELL),
                ]);
            }
            t.write(f, 2)?;
            more(f, SHOWN, self.conversations.len(), "conversations")?;
        }

        if let Some(reads) = &self.reads {
            writeln!(f, "\nWhat agents read (resources/read, prompts/get; counted here, never sent to the ingest)")?;
            if reads.resources.is_empty() && reads.prompts.is_empty() {
                writeln!(f, "  (none)")?;
            } else {
                let mut t = Table::new(&[("read", Align::Right), ("what", Align::Left), ("name", Align::Left)]);
                let rows =
                    reads.resources.iter().map(|r| ("resource", r)).chain(reads.prompts.iter().map(|p| ("prompt", p)));
                for (kind, r) in rows.take(SHOWN * 2) {
                    t.row([grouped(r.count as usize), kind.to_owned(), one_line(&r.name, CELL)]);
                }
                t.write(f, 2)?;
                more(f, SHOWN * 2, reads.resources.len() + reads.prompts.len(), "resources and prompts")?;
            }
            if !reads.methods.is_empty() {
                let mut t =
                    Table::new(&[("method", Align::Left), ("requests", Align::Right), ("errors", Align::Right)]);
                for m in &reads.methods {
                    t.row([m.method.clone(), grouped(m.requests as usize), grouped(m.errors as usize)]);
                }
                t.write(f, 2)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn event(id: &str, tool: &str, error: Option<&str>, intent: Option<&str>) -> Value {
        let mut e = json!({"callId": id, "toolName": tool, "arguments": {}, "isError": error.is_some(),
                           "timestamp": 1, "durationMs": 0});
        if let Some(m) = error {
            e["errorMessage"] = json!(m);
        }
        if let Some(i) = intent {
            e["intent"] = json!(i);
            e["intentSource"] = json!("mcpeye");
        }
        e
    }

    fn request(id: &str, capability: &str, context: Option<&str>) -> Value {
        let mut e = event(id, RESERVED_TOOL_NAME, None, None);
        e["arguments"] = json!({"capability": capability});
        if let Some(c) = context {
            e["arguments"]["context"] = json!(c);
        }
        e
    }

    fn sample() -> Vec<Value> {
        vec![
            event("1", "search", None, Some("Find a mug.")),
            event("2", "search", None, Some("Find a mug.")),
            event("3", "search", None, Some("Compare teapots.")),
            event("4", "order", Some("out of stock"), Some("Order the blue mug.")),
            event("5", "order", Some("no such SKU"), None),
            event("6", "order", None, None),
            request("7", "Export orders as CSV", Some("yearly accounts")),
            request("8", "  export orders as csv. ", Some("tax return")),
            request("9", "Track a parcel", None),
            event("10", "refund", Some("unknown tool `refund`"), None),
            event("4", "order", Some("out of stock"), Some("Order the blue mug.")),
        ]
    }

    #[test]
    fn feedback_is_a_call_but_not_one_of_the_servers_tools() {
        let mut feedback = event("1", FEEDBACK_TOOL_NAME, None, None);
        feedback["arguments"] = json!({"category": "issue", "text": "search ignores the colour"});
        let gap = IntentGap::from_events(&[feedback, event("2", "search", None, None)]);
        assert_eq!(gap.calls, 2);
        let tools: Vec<&str> = gap.tools.iter().map(|t| t.tool.as_str()).collect();
        assert_eq!(tools, ["search"]);
    }

    #[test]
    fn groups_counts_and_orders() {
        let gap = IntentGap::from_events(&sample());
        assert_eq!((gap.calls, gap.duplicates), (10, 1));
        let caps: Vec<(&str, usize)> =
            gap.capability_requests.iter().map(|r| (r.capability.as_str(), r.count)).collect();
        assert_eq!(caps, [("Export orders as CSV", 2), ("Track a parcel", 1)]);
        assert_eq!(gap.capability_requests[0].contexts, ["yearly accounts", "tax return"]);
        let tools: Vec<(&str, usize, usize)> = gap.tools.iter().map(|t| (t.tool.as_str(), t.calls, t.errors)).collect();
        assert_eq!(tools, [("order", 3, 2), ("search", 3, 0)]);
        assert_eq!(gap.tools[1].intents[0], IntentCount { intent: "Find a mug.".into(), count: 2 });
        assert_eq!(gap.tools[1].calls_with_intent(), 3);
        assert_eq!(gap.most_failing().iter().map(|t| t.tool.as_str()).collect::<Vec<_>>(), ["order"]);
        assert_eq!(gap.failed_intents.len(), 1);
        assert_eq!(gap.failed_intents[0].error.as_deref(), Some("out of stock"));
        assert_eq!(gap.unknown_tools, [UnknownTool { name: "refund".into(), calls: 1 }]);
    }

    #[test]
    fn json_and_table_say_the_same() {
        let gap = IntentGap::from_events(&sample());
        let j = gap.to_json();
        assert_eq!(j["capabilityRequests"][0]["count"], 2);
        assert_eq!(j["tools"][0]["tool"], "order");
        assert_eq!(j["failedIntents"][0]["intent"], "Order the blue mug.");
        let shown = gap.to_string();
        for needle in
            ["Export orders as CSV", "yearly accounts (+1 more)", "out of stock", "Order the blue mug.", "refund"]
        {
            assert!(shown.contains(needle), "{needle}: {shown}");
        }
        assert!(IntentGap::default().to_string().contains("(none)"));
    }

    #[test]
    fn reads_come_from_the_counters_most_read_first() {
        let mut stats = crate::Stats::default();
        stats.resources_read.insert("docs://a".into(), 1);
        stats.resources_read.insert("docs://b".into(), 3);
        stats.prompts_got.insert("review".into(), 2);
        stats.methods.insert("resources/read".into(), crate::MethodCount { requests: 4, errors: 1 });
        let gap = IntentGap::from_events(&sample()).with_reads(&stats);
        let reads = gap.reads.as_ref().unwrap();
        let resources: Vec<(&str, u64)> = reads.resources.iter().map(|r| (r.name.as_str(), r.count)).collect();
        assert_eq!(resources, [("docs://b", 3), ("docs://a", 1)]);
        assert_eq!(reads.prompts[0], ReadCount { name: "review".into(), count: 2 });
        assert_eq!(reads.methods[0], MethodRequests { method: "resources/read".into(), requests: 4, errors: 1 });
        assert_eq!(gap.to_json()["reads"]["resources"][0]["name"], "docs://b");
        let shown = gap.to_string();
        for needle in ["What agents read", "docs://b", "review", "resources/read"] {
            assert!(shown.contains(needle), "{needle}: {shown}");
        }
        // Without counters given, the summary says nothing of reads.
        assert!(IntentGap::from_events(&sample()).to_json().get("reads").is_none());
    }

    #[test]
    fn json_lines_take_payloads_or_events() {
        let payload = json!({"projectId": "p", "identity": {}, "events": [event("1", "a", None, None)]});
        let text = format!("{payload}\n\n{}\n[1]\nnot json\n", event("2", "b", None, None));
        let gap = IntentGap::from_json_lines(text.as_bytes()).unwrap();
        assert_eq!((gap.calls, gap.skipped_lines), (2, 2));
        let again = IntentGap::from_payloads(&[payload]);
        assert_eq!(again.calls, 1);
    }
}
