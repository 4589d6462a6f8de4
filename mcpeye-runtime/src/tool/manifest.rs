//! The manifest: the tools of a server, checked once at start-up, and their `tools/list`
//! descriptors. Calls go through [`Manifest::call`] / [`Manifest::call_async`] (see
//! `dispatch.rs`).

use crate::contract::{
    CAPABILITY_PARAM_DESCRIPTION, CONTEXT_PARAM_DESCRIPTION, FEEDBACK_CATEGORIES, FEEDBACK_CATEGORY_DESCRIPTION,
    FEEDBACK_TASK_COMPLETED_DESCRIPTION, FEEDBACK_TEXT_DESCRIPTION, FEEDBACK_TOOL_DESCRIPTION, FEEDBACK_TOOL_NAME,
    INTENT_PARAM_DESCRIPTION, RESERVED_TOOL_DESCRIPTION, RESERVED_TOOL_NAME,
};
use crate::model::meta::{
    ModelArgument, CONVERSATION_PARAM_DESCRIPTION, CONVERSATION_PARAM_NAME, MODEL_PARAM_DESCRIPTION, MODEL_PARAM_NAME,
};
use crate::schema;
use crate::tool::def::Handler;
use crate::tool::def::{StateMap, ToolDef};
use crate::tracker::active_tracker;
use crate::tracker::Tracker;
use mcpeye_contract::{icon_problem, timeout_problem, tool_description_problem, tool_name_problem, tool_title_problem};
use serde_json::{json, Map, Value};
use std::any::Any;
use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

/// Everything wrong with a set of tools, found when a manifest is built. Its `Display` lists
/// every problem, one per line, each naming the tool, where it is defined and how to fix it.
///
/// ```
/// use mcpeye::Manifest;
///
/// /// Report a sale.
/// #[mcpeye::tool]
/// fn report_sale(
///     /// Amount in cents.
///     cents: u64,
///     sales: mcpeye::State<std::sync::Mutex<Vec<u64>>>,
/// ) {
///     sales.lock().unwrap().push(cents);
/// }
///
/// # fn main() {
/// // The tool needs state that was never registered.
/// let err = Manifest::builder().tools(mcpeye::tool_defs![report_sale]).try_build().unwrap_err();
/// assert_eq!(err.problems.len(), 1);
/// assert_eq!(err.problems[0].tool, "report_sale");
/// eprintln!("{err}"); // one line per problem, each saying how to fix it
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestError {
    /// One entry per problem.
    pub problems: Vec<ManifestProblem>,
}

/// One problem found while building a manifest.
///
/// ```
/// use mcpeye::{Manifest, ManifestError};
///
/// fn explain(err: &ManifestError) -> Vec<String> {
///     err.problems.iter().map(|p| format!("{}: {} ({})", p.tool, p.message, p.rule)).collect()
/// }
///
/// let blank = Manifest::builder().intent_description("  ").try_build().unwrap_err();
/// assert_eq!(explain(&blank).len(), 1);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestProblem {
    /// The tool's name.
    pub tool: String,
    /// Where the tool is defined (`crate::module::function (src/file.rs:12)`).
    pub location: String,
    /// JSON path inside the tool's input schema, `""` when the problem is not in a schema; a
    /// problem of the output schema has its path prefixed with [`OUTPUT_SCHEMA_PATH`].
    pub path: String,
    /// Short rule id (`missing-description`, `duplicate-name`, …).
    pub rule: &'static str,
    /// What is wrong and how to fix it.
    pub message: String,
}

/// The prefix of [`ManifestProblem::path`] for a problem in a tool's output schema.
///
/// ```
/// use mcpeye::handwritten::OUTPUT_SCHEMA_PATH;
/// use mcpeye::ManifestProblem;
///
/// fn in_output_schema(p: &ManifestProblem) -> bool {
///     p.path.starts_with(OUTPUT_SCHEMA_PATH)
/// }
/// # let _ = in_output_schema;
/// ```
pub const OUTPUT_SCHEMA_PATH: &str = "outputSchema";

impl fmt::Display for ManifestProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "tool `{}` at {}", self.tool, self.location)?;
        if let Some(path) = self.path.strip_prefix(OUTPUT_SCHEMA_PATH) {
            write!(f, ", output schema {}", if path.is_empty() { "(root)" } else { path })?;
        } else if !self.path.is_empty() {
            write!(f, ", input schema {}", self.path)?;
        }
        write!(f, ": [{}] {}", self.rule, self.message)
    }
}

impl fmt::Display for ManifestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "mcpeye: the tool manifest has {} problem(s):", self.problems.len())?;
        for p in &self.problems {
            write!(f, "\n  - {p}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ManifestError {}

/// The problem of a replacement description of `mcpeyeIntent` (blank or too long), reported at
/// `location`, the setter that was given it.
pub(crate) fn intent_description_problem(description: &str, location: &str) -> Option<ManifestProblem> {
    let p = tool_description_problem(description)?;
    Some(ManifestProblem {
        tool: crate::contract::INTENT_PARAM_NAME.to_owned(),
        location: location.to_owned(),
        path: String::new(),
        rule: p.rule().id(),
        message: format!(
            "the description given to `intent_description` is {}; agents read it to fill `mcpeyeIntent` \
             (leave it unset for the contract's text)",
            match p {
                mcpeye_contract::DescriptionProblem::TooLong { chars } => format!("{chars} characters long"),
                _ => "blank".to_owned(),
            }
        ),
    })
}

/// Builds a [`Manifest`]: choose the tools, register state, then [`build`](Self::build).
///
/// `mcpeye::tools!()` and `mcpeye::tools![a, b]` are shorthands for the common cases; use the
/// builder when tools take `State<T>` parameters or to turn the reserved tool off.
///
/// ```
/// let manifest = mcpeye::Manifest::builder()
///     .capture_missing_capabilities(false)
///     .build();
/// assert_eq!(manifest.tools_list(), serde_json::json!([]));
/// ```
#[derive(Default)]
pub struct ManifestBuilder {
    defs: Vec<&'static ToolDef>,
    states: StateMap,
    capture_missing_capabilities: Option<bool>,
    intent_description: Option<Cow<'static, str>>,
    tracker: Option<Tracker>,
    attribution: Attribution,
    feedback: bool,
}

/// The opt-in arguments a manifest advertises and strips for attribution
/// (`docs/attribution.md`): `llm_model` and the conversation handle.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Attribution {
    pub(crate) model_argument: ModelArgument,
    pub(crate) conversations: bool,
}

impl Attribution {
    /// Whether calls have anything to strip (the one test a call pays when nothing is configured).
    #[inline(always)]
    pub(crate) fn any(self) -> bool {
        self.conversations || self.model_argument != ModelArgument::Off
    }
}

impl fmt::Debug for ManifestBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ManifestBuilder")
            .field("tools", &self.defs.iter().map(|d| d.name).collect::<Vec<_>>())
            .field("states", &self.states.0.len())
            .field("capture_missing_capabilities", &self.capture_missing_capabilities)
            .field("intent_description", &self.intent_description)
            .field("feedback", &self.feedback)
            .finish()
    }
}

impl ManifestBuilder {
    /// Adds every tool registered with `#[mcpeye::tool]` in the crates linked into the program.
    /// A crate that is linked but never referenced contributes nothing: `use that_crate as _;`.
    ///
    /// ```
    /// /// Say hello.
    /// #[mcpeye::tool]
    /// fn hello() -> String {
    ///     "hello".into()
    /// }
    ///
    /// # fn main() {
    /// let manifest = mcpeye::Manifest::builder().registered().build();
    /// assert!(manifest.has_tool("hello"));
    /// # }
    /// ```
    pub fn registered(mut self) -> Self {
        self.defs.extend(crate::tool::def::registered());
        self
    }

    /// Adds these tools (see `mcpeye::tool_defs![…]`).
    ///
    /// ```
    /// /// Say hello.
    /// #[mcpeye::tool]
    /// fn hello() -> String {
    ///     "hello".into()
    /// }
    ///
    /// # fn main() {
    /// let manifest = mcpeye::Manifest::builder().tools(mcpeye::tool_defs![hello]).build();
    /// assert_eq!(manifest.tool_names().collect::<Vec<_>>(), ["hello"]);
    /// # }
    /// ```
    pub fn tools(mut self, defs: impl IntoIterator<Item = &'static ToolDef>) -> Self {
        self.defs.extend(defs);
        self
    }

    /// Registers a value handed to every `State<T>` parameter of type `T` (one value per type;
    /// registering a type again replaces the value).
    ///
    /// ```
    /// use mcpeye::State;
    ///
    /// struct Greeting {
    ///     word: String,
    /// }
    ///
    /// /// Greet someone.
    /// #[mcpeye::tool]
    /// fn greet(
    ///     /// Who to greet.
    ///     name: String,
    ///     greeting: State<Greeting>,
    /// ) -> String {
    ///     format!("{}, {name}!", greeting.word)
    /// }
    ///
    /// # fn main() {
    /// let manifest = mcpeye::Manifest::builder()
    ///     .tools(mcpeye::tool_defs![greet])
    ///     .state(Greeting { word: "Hello".into() })
    ///     .build();
    /// assert_eq!(manifest.call("greet", serde_json::json!({"name": "Ada"}))["content"][0]["text"], "Hello, Ada!");
    /// # }
    /// ```
    pub fn state<T: Any + Send + Sync>(self, value: T) -> Self {
        self.state_arc(Arc::new(value))
    }

    /// Like [`state`](Self::state), for a value already shared.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    ///
    /// let orders = Arc::new(Mutex::new(Vec::<u64>::new()));
    /// let manifest = mcpeye::Manifest::builder().state_arc(orders.clone()).build();
    /// // The tools' `State<Mutex<Vec<u64>>>` and `orders` are the same value.
    /// # drop(manifest);
    /// ```
    pub fn state_arc<T: Any + Send + Sync>(mut self, value: Arc<T>) -> Self {
        self.states.0.insert(std::any::TypeId::of::<T>(), value);
        self
    }

    /// Whether the reserved tool `mcpeye_request_capability` is listed and answered. Default:
    /// the tracker's `capture_missing_capabilities` setting, `true` without one.
    ///
    /// ```
    /// let manifest = mcpeye::Manifest::builder().capture_missing_capabilities(false).build();
    /// assert!(!manifest.has_tool("mcpeye_request_capability"));
    /// ```
    pub fn capture_missing_capabilities(mut self, on: bool) -> Self {
        self.capture_missing_capabilities = Some(on);
        self
    }

    /// Whether the opt-in feedback tool `mcpeye_send_feedback` is listed (after the reserved
    /// tool) and answered. Default: off.
    ///
    /// An agent calls it with a `category` (`issue`, `praise`, `missing_capability`, `other`), a
    /// `text` and, optionally, `task_completed`; mcpeye answers it with
    /// [`FEEDBACK_TOOL_ACK`](crate::contract::FEEDBACK_TOOL_ACK), never reaching a handler, and
    /// records it as any call, redacted (docs/wire-format.md#feedback-tool). A call with a blank
    /// `text`, an unknown `category` or a value of the wrong type is answered with an
    /// invalid-arguments error, recorded as such.
    ///
    /// ```
    /// let manifest = mcpeye::Manifest::builder().feedback(true).build();
    /// assert!(manifest.has_tool("mcpeye_send_feedback"));
    /// let args = serde_json::json!({"category": "issue", "text": "search ignores the date filter", "task_completed": false});
    /// assert_eq!(manifest.call("mcpeye_send_feedback", args)["isError"], serde_json::Value::Null);
    /// assert!(!mcpeye::Manifest::builder().build().has_tool("mcpeye_send_feedback"));
    /// ```
    pub fn feedback(mut self, on: bool) -> Self {
        self.feedback = on;
        self
    }

    /// The description of the `mcpeyeIntent` property added to every tool's input schema
    /// (tools with `intent = false` excepted). Default, and byte for byte the other SDKs' text:
    /// [`INTENT_PARAM_DESCRIPTION`](crate::contract::INTENT_PARAM_DESCRIPTION), about 100
    /// tokens per tool.
    ///
    /// A shorter text makes every `tools/list` cheaper (see `Manifest::token_report`, feature
    /// `tokens`), at a price: the contract's text is what asks agents for 25 to 35 words and for
    /// the capability the user was missing, which is what the Intent Gap is made of. A blank
    /// text, or one over 8192 characters, is a problem reported by [`try_build`](Self::try_build).
    ///
    /// ```
    /// let manifest = mcpeye::Manifest::builder()
    ///     .registered()
    ///     .intent_description("Why the user needs this call; name any capability they lack.")
    ///     .build();
    /// # drop(manifest);
    /// ```
    pub fn intent_description(mut self, description: impl Into<Cow<'static, str>>) -> Self {
        self.intent_description = Some(description.into());
        self
    }

    /// Records into this tracker instead of the process-wide one installed by `mcpeye::init`.
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let (tracker, sink) = mcpeye::testing::MemorySink::new();
    /// let manifest = mcpeye::Manifest::builder().tracker(tracker.clone()).build();
    /// manifest.call("mcpeye_request_capability", serde_json::json!({"capability": "CSV export"}));
    /// tracker.flush(Duration::from_secs(5));
    /// assert_eq!(sink.events().len(), 1);
    /// ```
    pub fn tracker(mut self, tracker: Tracker) -> Self {
        self.tracker = Some(tracker);
        self
    }

    /// Builds the manifest, or returns every problem found.
    ///
    /// ```
    /// let manifest = match mcpeye::Manifest::builder().registered().try_build() {
    ///     Ok(manifest) => manifest,
    ///     Err(problems) => {
    ///         eprintln!("{problems}"); // every problem, one per line
    ///         std::process::exit(1);
    ///     }
    /// };
    /// # drop(manifest);
    /// ```
    pub fn try_build(self) -> Result<Manifest, ManifestError> {
        let mut problems = Vec::new();
        let mut defs = self.defs;
        defs.sort_by(|a, b| a.name.cmp(b.name));
        // The same definition added twice (registered() plus tools![…]) is one tool, not a clash.
        defs.dedup_by(|a, b| std::ptr::eq(*a, *b));

        let mut entries = Vec::with_capacity(defs.len());
        for (i, def) in defs.iter().enumerate() {
            let problem = |path: &str, rule: &'static str, message: String| ManifestProblem {
                tool: def.name.to_owned(),
                location: def.location(),
                path: path.to_owned(),
                rule,
                message,
            };
            if let Some(prev) = i.checked_sub(1).map(|j| defs[j]) {
                if prev.name == def.name {
                    problems.push(problem(
                        "",
                        "duplicate-name",
                        format!(
                            "the name is also used by {}; give one of them `#[mcpeye::tool(name = \"…\")]`",
                            prev.location()
                        ),
                    ));
                }
            }
            // The same rules, and words, as `#[mcpeye::tool]` at compile time (mcpeye-contract).
            if let Some(p) = tool_name_problem(def.name) {
                problems.push(problem("", p.rule().id(), p.to_string()));
            }
            if let Some(p) = tool_description_problem(def.description) {
                problems.push(problem("", p.rule().id(), p.to_string()));
            }
            for state in def.states {
                if !self.states.0.contains_key(&(state.type_id)()) {
                    problems.push(problem(
                        "",
                        "missing-state",
                        format!(
                            "the tool takes `State<{0}>` but no `{0}` is registered; add `.state(value)` to the manifest builder",
                            (state.type_name)()
                        ),
                    ));
                }
            }
            if let Some(p) = def.title.and_then(tool_title_problem) {
                problems.push(problem("", p.rule().id(), p.to_string()));
            }
            if let Some(timeout) = def.timeout {
                let ms = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX);
                if let Some(p) = timeout_problem(ms, matches!(def.handler, Handler::Async(_))) {
                    problems.push(problem("", p.rule().id(), p.to_string()));
                }
            }
            for icon in def.icons {
                if let Some(p) = icon_problem(icon.src, icon.mime_type, icon.theme) {
                    problems.push(problem("", p.rule().id(), p.to_string()));
                }
            }
            let schema = if def.normalize_schema {
                let schema = schema::normalize((def.input_schema)());
                for p in schema::validate(&schema) {
                    problems.push(problem(&p.path, p.rule, p.message));
                }
                schema
            } else {
                let schema = (def.input_schema)().to_value();
                for p in schema::validate_as_is(&schema) {
                    problems.push(problem(&p.path, p.rule, p.message));
                }
                schema
            };
            let output_schema = schema::output_schema((def.output_schema)());
            if let Some(output) = &output_schema {
                for p in schema::validate(output) {
                    let path = format!("{OUTPUT_SCHEMA_PATH}{}", p.path);
                    let message = format!(
                        "{} (the tool's output schema, from its return type; `#[mcpeye::tool(output_schema = false)]` leaves it out)",
                        p.message
                    );
                    problems.push(problem(&path, p.rule, message));
                }
            }
            entries.push(ToolEntry { def, schema, output_schema });
        }
        let intent_description = self.intent_description.unwrap_or(Cow::Borrowed(INTENT_PARAM_DESCRIPTION));
        problems.extend(intent_description_problem(&intent_description, "ManifestBuilder::intent_description"));
        if !problems.is_empty() {
            return Err(ManifestError { problems });
        }

        let reserved = self
            .capture_missing_capabilities
            .or_else(|| active_tracker(self.tracker.as_ref()).map(|t| t.capture_missing_capabilities()))
            .unwrap_or(true);
        let attribution = self.attribution;
        let mut list: Vec<Value> = entries.iter().map(|e| e.descriptor(&intent_description, attribution)).collect();
        let feedback = self.feedback;
        let own = [(reserved, reserved_descriptor as fn() -> Value), (feedback, feedback_descriptor)];
        for (_, descriptor) in own.into_iter().filter(|(on, _)| *on) {
            let mut descriptor = descriptor();
            if attribution.model_argument.on(true) {
                schema::inject_property(&mut descriptor["inputSchema"], MODEL_PARAM_NAME, MODEL_PARAM_DESCRIPTION);
            }
            list.push(descriptor);
        }
        let index = entries.iter().enumerate().map(|(i, e)| (e.def.name, i)).collect();
        Ok(Manifest {
            entries,
            index,
            states: self.states,
            reserved,
            feedback,
            tracker: self.tracker,
            attribution,
            tools_list: Value::Array(list),
        })
    }

    /// Advertises the `llm_model` argument where `at` says, for clients that do not state their
    /// model in `_meta`; it is taken out of the arguments before the handler runs, and the
    /// model it names is the call's ([`Origin::model`](crate::Origin::model)). Default:
    /// [`ModelArgument::Off`]. See `docs/attribution.md#model`.
    ///
    /// ```
    /// use mcpeye::{Manifest, ModelArgument};
    /// let manifest = Manifest::builder().model_argument(ModelArgument::EveryTool).build();
    /// assert!(manifest.tools_list()[0]["inputSchema"]["properties"]["llm_model"].is_object());
    /// ```
    pub fn model_argument(mut self, at: ModelArgument) -> Self {
        self.attribution.model_argument = at;
        self
    }

    /// Opt-in conversation handles, for protocols without sessions (MCP 2026-07-28 over
    /// stateless HTTP): every tool gets the optional `mcpeyeConversation` argument; a call
    /// that comes without a valid handle and has no transport session gets a new handle, handed
    /// out as one more text item of its result (`conversation: cv_…`: the one change mcpeye
    /// makes to a handler's result, and only with this option); a call that brings it back has
    /// it as its session. Default: off. See `docs/attribution.md#conversation`.
    ///
    /// ```
    /// let manifest = mcpeye::Manifest::builder().conversations(true).build();
    /// let out = manifest.call("mcpeye_request_capability", serde_json::json!({"capability": "CSV export"}));
    /// assert!(out["content"].as_array().unwrap().len() == 1); // the reserved tool takes no part
    /// ```
    pub fn conversations(mut self, on: bool) -> Self {
        self.attribution.conversations = on;
        self
    }

    /// Builds the manifest; panics with every problem listed (a server should refuse to start
    /// with tools that clients would reject).
    ///
    /// ```
    /// let manifest = mcpeye::Manifest::builder().registered().build();
    /// assert!(manifest.captures_missing_capabilities());
    /// ```
    #[track_caller]
    pub fn build(self) -> Manifest {
        match self.try_build() {
            Ok(m) => m,
            Err(e) => panic!("{e}"),
        }
    }
}

impl ToolEntry {
    /// Whether the tool's own schema has the property `name` (then it is the tool's: mcpeye
    /// neither advertises nor strips it).
    pub(crate) fn declares(&self, name: &str) -> bool {
        self.schema.get("properties").and_then(|p| p.get(name)).is_some()
    }
}

pub(crate) struct ToolEntry {
    pub(crate) def: &'static ToolDef,
    /// Normalised input schema without `mcpeyeIntent`: describes invalid arguments.
    pub(crate) schema: Value,
    /// Normalised output schema, when the tool has one.
    pub(crate) output_schema: Option<Value>,
}

impl ToolEntry {
    /// The `tools/list` descriptor, with `mcpeyeIntent` described by `intent_description`
    /// unless the tool has `intent = false`.
    fn descriptor(&self, intent_description: &str, attribution: Attribution) -> Value {
        let def = self.def;
        let mut input_schema = self.schema.clone();
        if def.intent {
            schema::inject_intent_described(&mut input_schema, intent_description);
            // The attribution arguments go where the intent goes: a tool with `intent = false`
            // keeps its schema as written.
            if attribution.model_argument.on(false) && !self.declares(MODEL_PARAM_NAME) {
                schema::inject_property(&mut input_schema, MODEL_PARAM_NAME, MODEL_PARAM_DESCRIPTION);
            }
            if attribution.conversations && !self.declares(CONVERSATION_PARAM_NAME) {
                schema::inject_property(&mut input_schema, CONVERSATION_PARAM_NAME, CONVERSATION_PARAM_DESCRIPTION);
            }
        }
        let mut m = Map::new();
        m.insert("name".into(), Value::String(def.name.into()));
        if let Some(title) = def.title {
            m.insert("title".into(), Value::String(title.into()));
        }
        m.insert("description".into(), Value::String(def.description.into()));
        m.insert("inputSchema".into(), input_schema);
        if let Some(output) = &self.output_schema {
            m.insert("outputSchema".into(), output.clone());
        }
        let a = &def.annotations;
        let mut hints = Map::new();
        for (key, v) in [
            ("readOnlyHint", a.read_only),
            ("destructiveHint", a.destructive),
            ("idempotentHint", a.idempotent),
            ("openWorldHint", a.open_world),
        ] {
            if let Some(v) = v {
                hints.insert(key.into(), Value::Bool(v));
            }
        }
        if !hints.is_empty() {
            m.insert("annotations".into(), Value::Object(hints));
        }
        if !def.icons.is_empty() {
            let icons = def.icons.iter().map(|icon| {
                let mut i = Map::new();
                i.insert("src".into(), Value::String(icon.src.into()));
                if let Some(mime) = icon.mime_type {
                    i.insert("mimeType".into(), Value::String(mime.into()));
                }
                if !icon.sizes.is_empty() {
                    i.insert("sizes".into(), icon.sizes.iter().map(|s| Value::String((*s).into())).collect());
                }
                if let Some(theme) = icon.theme {
                    i.insert("theme".into(), Value::String(theme.into()));
                }
                Value::Object(i)
            });
            m.insert("icons".into(), Value::Array(icons.collect()));
        }
        Value::Object(m)
    }
}

/// The `tools/list` descriptor of the reserved tool `mcpeye_request_capability`
/// (docs/wire-format.md#reserved-tool, #constants).
pub fn reserved_descriptor() -> Value {
    json!({
        "name": RESERVED_TOOL_NAME,
        "description": RESERVED_TOOL_DESCRIPTION,
        "inputSchema": {
            "type": "object",
            "properties": {
                "capability": {"type": "string", "description": CAPABILITY_PARAM_DESCRIPTION},
                "context": {"type": "string", "description": CONTEXT_PARAM_DESCRIPTION},
            },
            "required": ["capability"],
        },
    })
}

/// The `tools/list` descriptor of the opt-in feedback tool `mcpeye_send_feedback`
/// (docs/wire-format.md#feedback-tool, #constants): no `mcpeyeIntent`, a required `category`
/// of [`FEEDBACK_CATEGORIES`], a required `text` and an optional boolean `task_completed`.
///
/// ```
/// let d = mcpeye_runtime::forwarded::feedback_descriptor();
/// assert_eq!(d["name"], "mcpeye_send_feedback");
/// assert_eq!(d["inputSchema"]["required"], serde_json::json!(["category", "text"]));
/// ```
pub fn feedback_descriptor() -> Value {
    json!({
        "name": FEEDBACK_TOOL_NAME,
        "description": FEEDBACK_TOOL_DESCRIPTION,
        "inputSchema": {
            "type": "object",
            "properties": {
                "category": {"type": "string", "enum": FEEDBACK_CATEGORIES, "description": FEEDBACK_CATEGORY_DESCRIPTION},
                "text": {"type": "string", "description": FEEDBACK_TEXT_DESCRIPTION},
                "task_completed": {"type": "boolean", "description": FEEDBACK_TASK_COMPLETED_DESCRIPTION},
            },
            "required": ["category", "text"],
        },
    })
}

/// The tools of a server: their `tools/list` descriptors and the dispatcher of `tools/call`.
///
/// `Send + Sync`: build one at start-up and share it (`Arc<Manifest>` or a `static`) across
/// threads and tasks.
///
/// ```
/// /// Add two integers.
/// #[mcpeye::tool(read_only)]
/// fn add(
///     /// The first term.
///     a: i64,
///     /// The second term.
///     b: i64,
/// ) -> i64 {
///     a + b
/// }
///
/// # fn main() {
/// let manifest = mcpeye::tools![add];
///
/// // tools/list: the tools by name, then the reserved tool.
/// let tools = manifest.tools_list();
/// assert_eq!(tools[0]["name"], "add");
/// assert_eq!(tools[0]["inputSchema"]["required"], serde_json::json!(["a", "b"]));
/// assert_eq!(tools[1]["name"], "mcpeye_request_capability");
///
/// // tools/call, recorded with its intent (which the tool never sees).
/// let args = serde_json::json!({"a": 2, "b": 3, "mcpeyeIntent": "The user is checking an invoice total."});
/// assert_eq!(manifest.call("add", args)["content"][0]["text"], "5");
/// assert_eq!(manifest.call("add", serde_json::json!({"a": "two"}))["isError"], true);
/// # }
/// ```
pub struct Manifest {
    pub(crate) entries: Vec<ToolEntry>,
    pub(crate) index: HashMap<&'static str, usize>,
    pub(crate) states: StateMap,
    pub(crate) reserved: bool,
    /// Whether the feedback tool is listed and answered.
    pub(crate) feedback: bool,
    pub(crate) tracker: Option<Tracker>,
    pub(crate) attribution: Attribution,
    pub(crate) tools_list: Value,
}

impl fmt::Debug for Manifest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Manifest")
            .field("tools", &self.entries.iter().map(|e| e.def.name).collect::<Vec<_>>())
            .field("reserved_tool", &self.reserved)
            .field("feedback_tool", &self.feedback)
            .finish()
    }
}

impl Manifest {
    /// A builder with no tools.
    ///
    /// ```
    /// let manifest = mcpeye::Manifest::builder().registered().build();
    /// # drop(manifest);
    /// ```
    pub fn builder() -> ManifestBuilder {
        ManifestBuilder::default()
    }

    /// The `tools` array of a `tools/list` result: the tools sorted by name, then the reserved
    /// tool (unless turned off), then the feedback tool (when turned on). Byte-for-byte
    /// deterministic.
    ///
    /// ```
    /// let manifest = mcpeye::Manifest::builder().build();
    /// let result = serde_json::json!({"tools": manifest.tools_list()}); // the `tools/list` result
    /// assert_eq!(result["tools"][0]["name"], "mcpeye_request_capability");
    /// ```
    pub fn tools_list(&self) -> Value {
        self.tools_list.clone()
    }

    /// The names of the tools, sorted, without mcpeye's own tools.
    ///
    /// ```
    /// let manifest = mcpeye::Manifest::builder().build();
    /// assert_eq!(manifest.tool_names().count(), 0); // the reserved tool is not counted
    /// ```
    pub fn tool_names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.entries.iter().map(|e| e.def.name)
    }

    /// The definition of the tool called `name`.
    ///
    /// ```
    /// /// Say hello.
    /// #[mcpeye::tool(read_only)]
    /// fn hello() -> String {
    ///     "hello".into()
    /// }
    ///
    /// # fn main() {
    /// let manifest = mcpeye::tools![hello];
    /// assert_eq!(manifest.tool("hello").unwrap().annotations.read_only, Some(true));
    /// assert!(manifest.tool("mcpeye_request_capability").is_none()); // not a definition
    /// # }
    /// ```
    pub fn tool(&self, name: &str) -> Option<&'static ToolDef> {
        self.index.get(name).map(|&i| self.entries[i].def)
    }

    /// Whether the reserved tool is listed and answered.
    ///
    /// ```
    /// assert!(mcpeye::Manifest::builder().build().captures_missing_capabilities());
    /// ```
    pub fn captures_missing_capabilities(&self) -> bool {
        self.reserved
    }

    /// Whether `name` is a tool of this manifest (mcpeye's own tools included when listed).
    ///
    /// ```
    /// let manifest = mcpeye::Manifest::builder().build();
    /// assert!(manifest.has_tool("mcpeye_request_capability"));
    /// assert!(!manifest.has_tool("export_csv"));
    /// ```
    pub fn has_tool(&self, name: &str) -> bool {
        self.index.contains_key(name) || self.own_tool(name).is_some()
    }

    /// Which of mcpeye's own tools, listed by this manifest, `name` is.
    #[inline(always)]
    pub(crate) fn own_tool(&self, name: &str) -> Option<OwnTool> {
        if self.reserved && name == RESERVED_TOOL_NAME {
            Some(OwnTool::Capability)
        } else if self.feedback && name == FEEDBACK_TOOL_NAME {
            Some(OwnTool::Feedback)
        } else {
            None
        }
    }

    /// What this manifest's `tools/list` costs a model, per tool, in `o200k_base` tokens: name,
    /// description, input schema (and how much of it `mcpeyeIntent` is), output schema, total,
    /// and the reserved tool. `Display` prints a table. Feature `tokens`.
    ///
    /// ```
    /// let manifest = mcpeye::Manifest::builder().registered().build();
    /// let report = manifest.token_report();
    /// eprintln!("{report}");
    /// assert!(report.total() >= report.reserved_total());
    /// ```
    #[cfg(feature = "tokens")]
    pub fn token_report(&self) -> crate::report::TokenReport {
        crate::report::TokenReport::from_tools_list(&self.tools_list)
    }

    pub(crate) fn lookup(&self, name: &str) -> Option<&ToolEntry> {
        self.index.get(name).map(|&i| &self.entries[i])
    }

    /// Whether any tool's handler is async (else every call can be answered without awaiting).
    #[cfg_attr(not(feature = "rmcp"), allow(dead_code))]
    pub(crate) fn has_async_tools(&self) -> bool {
        self.entries.iter().any(|e| matches!(e.def.handler, crate::tool::def::Handler::Async(_)))
    }
}

/// mcpeye's own tools, answered by mcpeye and never by a handler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OwnTool {
    /// `mcpeye_request_capability`.
    Capability,
    /// `mcpeye_send_feedback`.
    Feedback,
}

impl OwnTool {
    /// The tool's name.
    pub(crate) fn name(self) -> &'static str {
        match self {
            OwnTool::Capability => RESERVED_TOOL_NAME,
            OwnTool::Feedback => FEEDBACK_TOOL_NAME,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::INTENT_PARAM_NAME;

    #[test]
    fn reserved_descriptor_is_exact() {
        let d = reserved_descriptor();
        assert_eq!(d["inputSchema"]["required"], json!(["capability"]));
        assert_eq!(d["description"], RESERVED_TOOL_DESCRIPTION);
        assert!(d["inputSchema"]["properties"].get(INTENT_PARAM_NAME).is_none());
    }

    #[test]
    fn the_feedback_tool_is_listed_only_when_asked_for_and_last() {
        let names = |m: &Manifest| -> Vec<String> {
            m.tools_list().as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect()
        };
        assert_eq!(names(&Manifest::builder().build()), [RESERVED_TOOL_NAME]);
        assert_eq!(names(&Manifest::builder().feedback(true).build()), [RESERVED_TOOL_NAME, FEEDBACK_TOOL_NAME]);
        let alone = Manifest::builder().feedback(true).capture_missing_capabilities(false).build();
        assert_eq!(names(&alone), [FEEDBACK_TOOL_NAME]);
        assert!(alone.has_tool(FEEDBACK_TOOL_NAME) && !alone.has_tool(RESERVED_TOOL_NAME));
        let d = feedback_descriptor();
        assert_eq!(d["inputSchema"]["properties"]["category"]["enum"], json!(FEEDBACK_CATEGORIES));
        assert!(d["inputSchema"]["properties"].get(INTENT_PARAM_NAME).is_none());
        let with_model = Manifest::builder().feedback(true).model_argument(crate::ModelArgument::ReservedTool).build();
        assert!(with_model.tools_list()[1]["inputSchema"]["properties"][MODEL_PARAM_NAME].is_object());
    }
}
