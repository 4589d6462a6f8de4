//! [`TokenReport`]: what a `tools/list` costs a model, tool by tool, counted with OpenAI's
//! `o200k_base` byte-pair encoding (the `tiktoken-rs` crate, vocabulary built in).
//!
//! Each tool is counted as its descriptor's compact JSON, the form clients pass on to the model;
//! its parts (name, description, input and output schema) are counted alone, so they add up to
//! a little less than the total, which also pays for the keys, the punctuation, the title and
//! the annotations. The share of `mcpeyeIntent` is the descriptor's count with the property
//! minus its count without it. Other tokenizers (Claude's, Gemini's) cut text differently, so
//! read the figures as a close estimate for them; relative costs (which tool, how much the
//! intent adds) carry over.

use super::table::{grouped, Align, Table};
use crate::contract::{FEEDBACK_TOOL_NAME, INTENT_PARAM_NAME, RESERVED_TOOL_NAME};
use crate::model::meta::{CONVERSATION_PARAM_NAME, MODEL_PARAM_NAME};
use serde::Serialize;
use serde_json::Value;
use std::fmt;

// The public items repeat the module's `cfg`: rustdoc labels an item re-exported by `mcpeye`
// with the feature it needs only from the item's own attributes.

/// The encoding tokens are counted with.
#[cfg(feature = "tokens")]
pub const ENCODING: &str = "o200k_base";

/// Tokens of `text` in [`ENCODING`] (special tokens count as ordinary text). The vocabulary is
/// loaded on first use (about 0.1 s in a release build, 1 s in a debug build).
///
/// ```
/// assert_eq!(mcpeye::report::count_tokens("hello world"), 2);
/// ```
#[cfg(feature = "tokens")]
pub fn count_tokens(text: &str) -> usize {
    tiktoken_rs::o200k_base_singleton().count_ordinary(text)
}

fn count_json(value: &Value) -> usize {
    count_tokens(&value.to_string())
}

/// The token cost of one tool's descriptor in `tools/list`.
#[cfg(feature = "tokens")]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolTokens {
    /// The tool's name.
    pub name: String,
    /// Tokens of the name.
    pub name_tokens: usize,
    /// Tokens of the description.
    pub description: usize,
    /// Tokens of the input schema's compact JSON, `mcpeyeIntent` included.
    pub input_schema: usize,
    /// Tokens that `mcpeyeIntent` adds to the descriptor (0 with `intent = false`).
    pub intent: usize,
    /// Tokens that the opt-in attribution arguments (`llm_model`, `mcpeyeConversation`:
    /// docs/attribution.md) add to the descriptor (0 when they are not advertised).
    pub attribution: usize,
    /// Tokens of the output schema, when the tool has one.
    pub output_schema: Option<usize>,
    /// Tokens of the whole descriptor's compact JSON.
    pub total: usize,
}

impl ToolTokens {
    /// Counts one descriptor of a `tools/list`.
    fn of(descriptor: &Value) -> Self {
        let text = |key: &str| descriptor.get(key).and_then(Value::as_str).unwrap_or("");
        let total = count_json(descriptor);
        // The descriptor's count without these properties (`total` when it has none of them).
        let without = |names: &[&str]| match descriptor.pointer("/inputSchema/properties").and_then(Value::as_object) {
            Some(p) if names.iter().any(|n| p.contains_key(*n)) => {
                let mut bare = descriptor.clone();
                if let Some(p) = bare.pointer_mut("/inputSchema/properties").and_then(Value::as_object_mut) {
                    for n in names {
                        p.remove(*n);
                    }
                }
                count_json(&bare)
            }
            _ => total,
        };
        let without_intent = without(&[INTENT_PARAM_NAME]);
        let without_attribution = without(&[MODEL_PARAM_NAME, CONVERSATION_PARAM_NAME]);
        ToolTokens {
            name: text("name").to_owned(),
            name_tokens: count_tokens(text("name")),
            description: count_tokens(text("description")),
            input_schema: descriptor.get("inputSchema").map_or(0, count_json),
            intent: total.saturating_sub(without_intent),
            attribution: total.saturating_sub(without_attribution),
            output_schema: descriptor.get("outputSchema").map(count_json),
            total,
        }
    }
}

/// What a manifest's `tools/list` costs a model, per tool: from
/// `Manifest::token_report`, or from any `tools/list` array
/// with [`TokenReport::from_tools_list`]. `Display` prints the table; it also serialises to JSON.
///
/// ```
/// let manifest = mcpeye::Manifest::builder().build();   // only the reserved tool
/// let report = manifest.token_report();
/// assert!(report.tools.is_empty());
/// assert_eq!(report.total(), report.reserved.as_ref().unwrap().total);
/// println!("{report}");
/// ```
#[cfg(feature = "tokens")]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TokenReport {
    /// The encoding used: [`ENCODING`].
    pub encoding: &'static str,
    /// The server's tools, in `tools/list` order.
    pub tools: Vec<ToolTokens>,
    /// The reserved tool `mcpeye_request_capability`, when it is listed.
    pub reserved: Option<ToolTokens>,
    /// The opt-in feedback tool `mcpeye_send_feedback`, when it is listed.
    pub feedback: Option<ToolTokens>,
}

impl TokenReport {
    /// Counts the descriptors of a `tools/list` result's `tools` array (anything else counts as
    /// no tool).
    ///
    /// ```
    /// use mcpeye::report::TokenReport;
    /// let tools = serde_json::json!([{"name": "ping", "description": "Answer pong.",
    ///     "inputSchema": {"type": "object", "properties": {}}}]);
    /// let report = TokenReport::from_tools_list(&tools);
    /// assert_eq!(report.tools[0].name, "ping");
    /// assert_eq!(report.tools[0].intent, 0);
    /// ```
    pub fn from_tools_list(tools: &Value) -> Self {
        let mut report = TokenReport { encoding: ENCODING, tools: Vec::new(), reserved: None, feedback: None };
        for descriptor in tools.as_array().into_iter().flatten() {
            let counted = ToolTokens::of(descriptor);
            match counted.name.as_str() {
                RESERVED_TOOL_NAME => report.reserved = Some(counted),
                FEEDBACK_TOOL_NAME => report.feedback = Some(counted),
                _ => report.tools.push(counted),
            }
        }
        report
    }

    /// Tokens of every descriptor, mcpeye's own tools' included.
    ///
    /// ```
    /// let report = mcpeye::Manifest::builder().build().token_report();
    /// assert_eq!(report.total(), report.tools.iter().map(|t| t.total).sum::<usize>() + report.reserved_total());
    /// ```
    pub fn total(&self) -> usize {
        self.all().map(|t| t.total).sum()
    }

    /// Tokens that `mcpeyeIntent` adds, over all tools.
    ///
    /// ```
    /// let tools = serde_json::json!([{"name": "search", "inputSchema": {"type": "object", "properties": {
    ///     "mcpeyeIntent": {"type": "string", "description": "Why you call this tool."}}}}]);
    /// assert!(mcpeye::report::TokenReport::from_tools_list(&tools).intent_total() > 0);
    /// ```
    pub fn intent_total(&self) -> usize {
        self.all().map(|t| t.intent).sum()
    }

    /// Tokens that the attribution arguments (`llm_model`, `mcpeyeConversation`) add, over all
    /// tools.
    ///
    /// ```
    /// let manifest = mcpeye::Manifest::builder().model_argument(mcpeye::ModelArgument::ReservedTool).build();
    /// assert!(manifest.token_report().attribution_total() > 0);
    /// assert_eq!(mcpeye::Manifest::builder().build().token_report().attribution_total(), 0);
    /// ```
    pub fn attribution_total(&self) -> usize {
        self.all().map(|t| t.attribution).sum()
    }

    /// Tokens of the reserved tool (0 when it is not listed).
    ///
    /// ```
    /// let listed = mcpeye::Manifest::builder().build().token_report();
    /// assert!(listed.reserved_total() > 0);
    /// assert_eq!(mcpeye::report::TokenReport::from_tools_list(&serde_json::json!([])).reserved_total(), 0);
    /// ```
    pub fn reserved_total(&self) -> usize {
        self.reserved.as_ref().map_or(0, |t| t.total)
    }

    /// Tokens of the feedback tool (0 when it is not listed).
    ///
    /// ```
    /// let report = mcpeye::Manifest::builder().feedback(true).build().token_report();
    /// assert!(report.feedback_total() > 0);
    /// assert_eq!(report.total(), report.reserved_total() + report.feedback_total());
    /// assert_eq!(mcpeye::Manifest::builder().build().token_report().feedback_total(), 0);
    /// ```
    pub fn feedback_total(&self) -> usize {
        self.feedback.as_ref().map_or(0, |t| t.total)
    }

    /// The counts of the tool called `name`.
    ///
    /// ```
    /// let tools = serde_json::json!([{"name": "ping", "inputSchema": {"type": "object"}}]);
    /// let report = mcpeye::report::TokenReport::from_tools_list(&tools);
    /// assert!(report.tool("ping").is_some_and(|t| t.total > 0));
    /// assert!(report.tool("pong").is_none());
    /// ```
    pub fn tool(&self, name: &str) -> Option<&ToolTokens> {
        self.all().find(|t| t.name == name)
    }

    /// The report as a JSON value (the same as serialising it).
    ///
    /// ```
    /// let report = mcpeye::Manifest::builder().build().token_report();
    /// assert_eq!(report.to_json()["encoding"], "o200k_base");
    /// ```
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    fn all(&self) -> impl Iterator<Item = &ToolTokens> {
        self.tools.iter().chain(self.reserved.as_ref()).chain(self.feedback.as_ref())
    }
}

impl fmt::Display for TokenReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let total = self.total();
        writeln!(
            f,
            "Token cost of tools/list: {} tokens ({}; each tool counted as its compact JSON descriptor)",
            grouped(total),
            self.encoding
        )?;
        let mut table = Table::new(&[
            ("tool", Align::Left),
            ("name", Align::Right),
            ("description", Align::Right),
            ("input schema", Align::Right),
            ("of which mcpeyeIntent", Align::Right),
            ("output schema", Align::Right),
            ("total", Align::Right),
        ]);
        let row = |t: &ToolTokens, label: String| {
            [
                label,
                grouped(t.name_tokens),
                grouped(t.description),
                grouped(t.input_schema),
                if t.intent == 0 { "-".to_owned() } else { grouped(t.intent) },
                t.output_schema.map_or_else(|| "-".to_owned(), grouped),
                grouped(t.total),
            ]
        };
        for t in &self.tools {
            table.row(row(t, t.name.clone()));
        }
        for t in self.reserved.iter().chain(&self.feedback) {
            table.row(row(t, format!("{} (reserved)", t.name)));
        }
        table.rule();
        let n = self.all().count();
        table.row([
            format!("all {n} tool{}", if n == 1 { "" } else { "s" }),
            String::new(),
            String::new(),
            String::new(),
            grouped(self.intent_total()),
            String::new(),
            grouped(total),
        ]);
        table.write(f, 2)?;
        let intent = self.intent_total();
        if intent > 0 && total > 0 {
            writeln!(
                f,
                "  mcpeyeIntent adds {} tokens ({:.0} %); cut it with ManifestBuilder::intent_description(…) \
                 or #[mcpeye::tool(intent = false)]",
                grouped(intent),
                100.0 * intent as f64 / total as f64
            )?;
        }
        let attribution = self.attribution_total();
        if attribution > 0 && total > 0 {
            writeln!(
                f,
                "  llm_model and mcpeyeConversation add {} tokens ({:.0} %); see docs/attribution.md",
                grouped(attribution),
                100.0 * attribution as f64 / total as f64
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::INTENT_PARAM_DESCRIPTION;
    use crate::tool::manifest::{feedback_descriptor, reserved_descriptor};
    use serde_json::json;

    fn tool(intent: bool) -> Value {
        let mut schema = json!({"type": "object", "properties": {"q": {"type": "string", "description": "Words."}}});
        if intent {
            crate::schema::inject_intent(&mut schema);
        }
        json!({"name": "search", "description": "Search the catalogue.", "inputSchema": schema})
    }

    #[test]
    fn counts_are_real_bpe_tokens() {
        assert_eq!(count_tokens(""), 0);
        assert_eq!(count_tokens("hello world"), 2);
        // The contract's intent text is about a hundred tokens.
        let n = count_tokens(INTENT_PARAM_DESCRIPTION);
        assert!((80..140).contains(&n), "{n}");
    }

    #[test]
    fn the_intent_share_is_the_difference_it_makes() {
        let with = TokenReport::from_tools_list(&json!([tool(true), reserved_descriptor()]));
        let without = TokenReport::from_tools_list(&json!([tool(false)]));
        let t = &with.tools[0];
        assert_eq!(t.total - t.intent, without.tools[0].total);
        assert!(t.intent > count_tokens(INTENT_PARAM_DESCRIPTION), "{t:?}");
        assert_eq!(without.tools[0].intent, 0);
        assert!(t.name_tokens + t.description + t.input_schema < t.total);
        assert_eq!(t.output_schema, None);
        let reserved = with.reserved.as_ref().unwrap();
        assert_eq!(reserved.intent, 0);
        assert_eq!(with.total(), t.total + reserved.total);
        assert_eq!(with.intent_total(), t.intent);
    }

    #[test]
    fn output_schemas_are_counted_when_present() {
        let mut d = tool(false);
        d["outputSchema"] = json!({"type": "object", "properties": {"hits": {"type": "integer"}}});
        let report = TokenReport::from_tools_list(&json!([d]));
        assert!(report.tools[0].output_schema.is_some_and(|n| n > 5));
        assert!(report.to_json()["tools"][0]["outputSchema"].is_number());
    }

    #[test]
    fn the_table_names_every_tool_and_the_total() {
        let report = TokenReport::from_tools_list(&json!([tool(true), reserved_descriptor()]));
        let shown = report.to_string();
        assert!(shown.contains("search"), "{shown}");
        assert!(shown.contains("mcpeye_request_capability (reserved)"), "{shown}");
        assert!(shown.contains(&format!("{} tokens", grouped(report.total()))), "{shown}");
        assert!(!shown.contains(FEEDBACK_TOOL_NAME), "{shown}");
        assert!(shown.contains("mcpeyeIntent adds"), "{shown}");
    }

    #[test]
    fn the_feedback_tool_is_counted_apart_when_listed() {
        let report = TokenReport::from_tools_list(&json!([tool(true), reserved_descriptor(), feedback_descriptor()]));
        let feedback = report.feedback.as_ref().expect("counted");
        assert_eq!((feedback.name.as_str(), feedback.intent), (FEEDBACK_TOOL_NAME, 0));
        assert_eq!(report.tools.len(), 1, "not one of the server's tools");
        assert_eq!(report.total(), report.tools[0].total + report.reserved_total() + report.feedback_total());
        assert_eq!(report.tool(FEEDBACK_TOOL_NAME), Some(feedback));
        let shown = report.to_string();
        assert!(shown.contains("mcpeye_send_feedback (reserved)") && shown.contains("all 3 tools"), "{shown}");
        assert!(report.to_json()["feedback"]["total"].as_u64().is_some_and(|n| n > 50), "{}", report.to_json());
    }
}
