//! [`instrument`]: an existing rmcp `ToolRouter` given intent capture, the reserved tool and one
//! record per call, its tools untouched.

use super::client::Clients;
use super::rounds::InstrumentedRound;
use crate::contract::{FEEDBACK_TOOL_NAME, INTENT_PARAM_DESCRIPTION, INTENT_PARAM_NAME, RESERVED_TOOL_NAME};
use crate::dispatch::CatchUnwind;
use crate::dispatch::{attribute, call_intent, panic_message, take_intent, AttributionArgs, PANIC, PANIC_ANSWER};
use crate::json::flat::flatten;
use crate::model::meta::{
    handle_text, CONVERSATION_PARAM_DESCRIPTION, CONVERSATION_PARAM_NAME, MODEL_PARAM_DESCRIPTION, MODEL_PARAM_NAME,
};
use crate::model::record::CallOutcome;
use crate::record::flatten_texts;
use crate::record::{Arguments, TrackedCall};
use crate::schema::inject_intent_described;
use crate::schema::inject_property;
use crate::telemetry::CallSpan;
use crate::tool::manifest::Attribution;
use crate::tool::manifest::{intent_description_problem, Manifest, ManifestError};
use crate::tracker::active_tracker;
use crate::tracker::Tracker;
use ::rmcp::handler::server::router::tool::{ToolRoute, ToolRouter};
use ::rmcp::handler::server::tool::ToolCallContext;
use ::rmcp::model::{CallToolResponse, CallToolResult, ContentBlock, JsonObject, ResultType, Tool};
use ::rmcp::ErrorData;
use serde_json::{Map, Value};
use std::any::{Any, TypeId};
use std::borrow::Cow;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::{Arc, RwLock};
use std::task::{Context, Poll};

type SendFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Instruments the tools of an rmcp `ToolRouter`, recording into the process-wide tracker
/// installed by `mcpeye::init` (looked up at each call; nothing is recorded while there is
/// none).
///
/// - every tool whose input schema is an object gains the optional `mcpeyeIntent` property,
///   except a tool that declares `mcpeyeIntent` itself (it owns it: no injection, no stripping);
/// - the reserved tool `mcpeye_request_capability` is added and answered locally with the
///   acknowledgement, unless the installed tracker's `capture_missing_capabilities()` is false
///   or the router already has a tool of that name (the opt-in feedback tool likewise, with
///   [`Instrument::feedback`]);
/// - every call has `mcpeyeIntent` removed from its arguments before the tool runs, is timed,
///   and is recorded once with its outcome (see the [module docs](super)); the client's
///   `clientInfo` is handed to the tracker once per session.
/// - a result the tool built without rmcp's constructors gets `resultType: "complete"`, which
///   MCP 2026-07-28 clients require (rmcp leaves it out for older clients).
///
/// Routes keep their names, descriptions, annotations and disabled state. Apply it once, when
/// the router is built: `Self { tool_router: mcpeye::rmcp::instrument(Self::tool_router()) }`.
///
/// ```
/// use rmcp::handler::server::router::tool::ToolRouter;
/// use rmcp::{tool, tool_handler, tool_router, ServerHandler, ServiceExt};
///
/// #[derive(Clone)]
/// struct Clock {
///     tool_router: ToolRouter<Self>,
/// }
///
/// #[tool_router]
/// impl Clock {
///     fn new() -> Self {
///         Self { tool_router: mcpeye::rmcp::instrument(Self::tool_router()) }
///     }
///
///     #[tool(description = "Tell the time.")]
///     fn now(&self) -> String {
///         "noon".to_owned()
///     }
/// }
///
/// #[tool_handler(router = self.tool_router)]
/// impl ServerHandler for Clock {}
///
/// async fn serve() -> Result<(), Box<dyn std::error::Error>> {
///     let _guard = mcpeye::init(mcpeye::Config::from_env("proj_clock"))?; // before instrumenting
///     Clock::new().serve(rmcp::transport::stdio()).await?.waiting().await?;
///     Ok(())
/// }
///
/// let router = Clock::new().tool_router;
/// assert!(router.get("now").unwrap().input_schema["properties"]["mcpeyeIntent"].is_object());
/// assert!(router.has_route("mcpeye_request_capability"));
/// ```
pub fn instrument<S: Send + Sync + 'static>(router: ToolRouter<S>) -> ToolRouter<S> {
    instrument_router(router, None, INTENT_PARAM_DESCRIPTION, Attribution::default(), false)
}

/// [`instrument`] with options (the one way to give it any): the tracker to record into, another description of
/// `mcpeyeIntent` (as `ManifestBuilder::intent_description` gives a manifest: a shorter text
/// costs fewer tokens in every `tools/list`).
///
/// ```
/// use rmcp::{tool, tool_router};
///
/// struct Clock;
///
/// #[tool_router]
/// impl Clock {
///     #[tool(description = "Tell the time.")]
///     fn now(&self) -> String {
///         "noon".to_owned()
///     }
/// }
///
/// let router = mcpeye::rmcp::Instrument::new()
///     .intent_description("Why the user needs this call; name any capability the tools lack.")
///     .apply(Clock::tool_router());
/// let schema = &router.get("now").unwrap().input_schema;
/// assert!(schema["properties"]["mcpeyeIntent"]["description"].as_str().unwrap().starts_with("Why the user"));
/// ```
#[derive(Clone, Default)]
#[must_use = "an `Instrument` does nothing until it is applied to a router"]
pub struct Instrument {
    tracker: Option<Tracker>,
    intent_description: Option<Cow<'static, str>>,
    attribution: Attribution,
    feedback: bool,
}

impl Instrument {
    /// The options of [`instrument`]: the process-wide tracker and the contract's description.
    ///
    /// ```
    /// # use rmcp::{tool, tool_router};
    /// # struct Clock;
    /// # #[tool_router]
    /// # impl Clock {
    /// #     #[tool(description = "Tell the time.")]
    /// #     fn now(&self) -> String {
    /// #         "noon".to_owned()
    /// #     }
    /// # }
    /// // The same as `mcpeye::rmcp::instrument(Clock::tool_router())`.
    /// let router = mcpeye::rmcp::Instrument::new().apply(Clock::tool_router());
    /// assert!(router.has_route("mcpeye_request_capability"));
    /// ```
    pub fn new() -> Self {
        Instrument::default()
    }

    /// Records into `tracker` instead of the process-wide tracker.
    ///
    /// ```
    /// # use rmcp::{tool, tool_router};
    /// # struct Clock;
    /// # #[tool_router]
    /// # impl Clock {
    /// #     #[tool(description = "Tell the time.")]
    /// #     fn now(&self) -> String {
    /// #         "noon".to_owned()
    /// #     }
    /// # }
    /// let (tracker, _sink) = mcpeye::testing::MemorySink::new();
    /// let router = mcpeye::rmcp::Instrument::new().tracker(tracker).apply(Clock::tool_router());
    /// # drop(router);
    /// ```
    pub fn tracker(mut self, tracker: Tracker) -> Self {
        self.tracker = Some(tracker);
        self
    }

    /// Describes `mcpeyeIntent` with `description` in every instrumented tool's input schema.
    /// Keep the request for the capability the user missed in it: a terse text tends to get
    /// terse intents.
    ///
    /// ```
    /// # use rmcp::{tool, tool_router};
    /// # struct Clock;
    /// # #[tool_router]
    /// # impl Clock {
    /// #     #[tool(description = "Tell the time.")]
    /// #     fn now(&self) -> String {
    /// #         "noon".to_owned()
    /// #     }
    /// # }
    /// let router = mcpeye::rmcp::Instrument::new()
    ///     .intent_description("Why the user needs this, and any capability the tools lack, in 25-35 words.")
    ///     .apply(Clock::tool_router());
    /// # drop(router);
    /// ```
    pub fn intent_description(mut self, description: impl Into<Cow<'static, str>>) -> Self {
        self.intent_description = Some(description.into());
        self
    }

    /// Advertises the `llm_model` argument where `at` says, taken out before the tool runs, as
    /// `ManifestBuilder::model_argument` does (see `docs/attribution.md#model`).
    ///
    /// ```
    /// use rmcp::{tool, tool_router};
    /// struct Clock;
    /// #[tool_router]
    /// impl Clock {
    ///     #[tool(description = "Tell the time.")]
    ///     fn now(&self) -> String {
    ///         "noon".to_owned()
    ///     }
    /// }
    /// let router = mcpeye::rmcp::Instrument::new()
    ///     .model_argument(mcpeye::ModelArgument::EveryTool)
    ///     .apply(Clock::tool_router());
    /// assert!(router.get("now").unwrap().input_schema["properties"]["llm_model"].is_object());
    /// ```
    pub fn model_argument(mut self, at: crate::ModelArgument) -> Self {
        self.attribution.model_argument = at;
        self
    }

    /// Opt-in conversation handles, as `ManifestBuilder::conversations` gives a manifest (see
    /// `docs/attribution.md#conversation`): the handle minted for a call without a session is
    /// handed out as one more text item of its result.
    ///
    /// ```
    /// use rmcp::{tool, tool_router};
    /// struct Clock;
    /// #[tool_router]
    /// impl Clock {
    ///     #[tool(description = "Tell the time.")]
    ///     fn now(&self) -> String {
    ///         "noon".to_owned()
    ///     }
    /// }
    /// let router = mcpeye::rmcp::Instrument::new().conversations(true).apply(Clock::tool_router());
    /// assert!(router.get("now").unwrap().input_schema["properties"]["mcpeyeConversation"].is_object());
    /// ```
    pub fn conversations(mut self, on: bool) -> Self {
        self.attribution.conversations = on;
        self
    }

    /// Adds the opt-in feedback tool `mcpeye_send_feedback`, answered and recorded exactly as
    /// `ManifestBuilder::feedback` has a manifest do it (docs/wire-format.md#feedback-tool),
    /// unless the router already has a tool of that name. Default: off.
    ///
    /// ```
    /// use rmcp::{tool, tool_router};
    /// struct Clock;
    /// #[tool_router]
    /// impl Clock {
    ///     #[tool(description = "Tell the time.")]
    ///     fn now(&self) -> String {
    ///         "noon".to_owned()
    ///     }
    /// }
    /// let router = mcpeye::rmcp::Instrument::new().feedback(true).apply(Clock::tool_router());
    /// assert!(router.has_route("mcpeye_send_feedback"));
    /// assert!(!mcpeye::rmcp::instrument(Clock::tool_router()).has_route("mcpeye_send_feedback"));
    /// ```
    pub fn feedback(mut self, on: bool) -> Self {
        self.feedback = on;
        self
    }

    /// Instruments `router`; a blank or over-long intent description is an error naming the
    /// rule, and the router is not changed.
    ///
    /// ```
    /// # use rmcp::{tool, tool_router};
    /// # struct Clock;
    /// # #[tool_router]
    /// # impl Clock {
    /// #     #[tool(description = "Tell the time.")]
    /// #     fn now(&self) -> String {
    /// #         "noon".to_owned()
    /// #     }
    /// # }
    /// let err = mcpeye::rmcp::Instrument::new().intent_description(" ").try_apply(Clock::tool_router()).unwrap_err();
    /// eprintln!("{err}"); // names the rule broken and the setter that was given the text
    /// ```
    pub fn try_apply<S: Send + Sync + 'static>(self, router: ToolRouter<S>) -> Result<ToolRouter<S>, ManifestError> {
        let description = self.intent_description.unwrap_or(Cow::Borrowed(INTENT_PARAM_DESCRIPTION));
        if let Some(problem) = intent_description_problem(&description, "Instrument::intent_description") {
            return Err(ManifestError { problems: vec![problem] });
        }
        Ok(instrument_router(router, self.tracker, &description, self.attribution, self.feedback))
    }

    /// Instruments `router`; panics with the problem when the intent description is blank or
    /// over-long (a server should refuse to start with a schema clients would reject), as
    /// `ManifestBuilder::build` does.
    ///
    /// ```
    /// # use rmcp::{tool, tool_router};
    /// # struct Clock;
    /// # #[tool_router]
    /// # impl Clock {
    /// #     #[tool(description = "Tell the time.")]
    /// #     fn now(&self) -> String {
    /// #         "noon".to_owned()
    /// #     }
    /// # }
    /// let router = mcpeye::rmcp::Instrument::new().conversations(true).apply(Clock::tool_router());
    /// assert!(router.has_route("now"));
    /// ```
    #[track_caller]
    pub fn apply<S: Send + Sync + 'static>(self, router: ToolRouter<S>) -> ToolRouter<S> {
        match self.try_apply(router) {
            Ok(router) => router,
            Err(e) => panic!("{e}"),
        }
    }
}

/// The router made by `make`, [instrumented](instrument) once and kept for the life of the
/// process: for rmcp's default style, where `#[tool_handler]` rebuilds the router on every
/// request.
///
/// ```
/// use rmcp::{tool, tool_handler, tool_router, ServerHandler};
///
/// struct Clock;
///
/// #[tool_router]
/// impl Clock {
///     #[tool(description = "Tell the time.")]
///     fn now(&self) -> String {
///         "noon".to_owned()
///     }
/// }
///
/// #[tool_handler(router = mcpeye::rmcp::instrumented(Self::tool_router))]
/// impl ServerHandler for Clock {}
///
/// let tool = Clock.get_tool("now").unwrap();
/// assert!(tool.input_schema["properties"]["mcpeyeIntent"].is_object());
/// let router = mcpeye::rmcp::instrumented(Clock::tool_router);
/// assert!(std::ptr::eq(router, mcpeye::rmcp::instrumented(Clock::tool_router)));
/// ```
///
/// Routers are told apart by the type of `make`: pass the function itself (or a closure), not
/// a `fn` pointer. The first call reads the process-wide tracker's settings, so make it after
/// `mcpeye::init` (the first request is).
pub fn instrumented<S, F>(make: F) -> &'static ToolRouter<S>
where
    S: Send + Sync + 'static,
    F: Fn() -> ToolRouter<S> + 'static,
{
    type Cache = Vec<(TypeId, &'static (dyn Any + Send + Sync))>;
    static CACHE: RwLock<Cache> = RwLock::new(Vec::new());
    let key = TypeId::of::<F>();
    let find =
        |cache: &Cache| cache.iter().find(|(k, _)| *k == key).and_then(|(_, r)| r.downcast_ref::<ToolRouter<S>>());
    if let Some(r) = find(&CACHE.read().unwrap_or_else(|e| e.into_inner())) {
        return r;
    }
    // Built outside the lock: `make` is the user's code.
    let built = instrument_router(make(), None, INTENT_PARAM_DESCRIPTION, Attribution::default(), false);
    let mut cache = CACHE.write().unwrap_or_else(|e| e.into_inner());
    if let Some(r) = find(&cache) {
        return r;
    }
    // One router per router-making function: a bounded, deliberate leak.
    let router: &'static ToolRouter<S> = Box::leak(Box::new(built));
    cache.push((key, router));
    router
}

/// What every wrapped route of one instrumented router shares.
struct Instrumented {
    tracker: Option<Tracker>,
    clients: &'static Clients,
    attribution: Attribution,
}

impl Instrumented {
    fn tracker(&self) -> Option<Tracker> {
        active_tracker(self.tracker.as_ref()).map(Cow::into_owned)
    }
}

fn instrument_router<S: Send + Sync + 'static>(
    mut router: ToolRouter<S>,
    tracker: Option<Tracker>,
    intent_description: &str,
    attribution: Attribution,
    feedback: bool,
) -> ToolRouter<S> {
    let reserved = active_tracker(tracker.as_ref()).is_none_or(|t| t.capture_missing_capabilities());
    let shared = Arc::new(Instrumented { tracker, clients: Clients::shared(), attribution });
    for route in router.map.values_mut() {
        let mut attr = route.attr.clone();
        let strip = inject(&mut attr.input_schema, intent_description);
        // Where the intent goes, and not over a property the tool declares itself.
        let declares_conversation =
            attr.input_schema.get("properties").and_then(|p| p.get(CONVERSATION_PARAM_NAME)).is_some();
        let mut add = |name: &str, description: &str| {
            let declared = attr.input_schema.get("properties").and_then(|p| p.get(name)).is_some();
            if strip && !declared {
                let mut v = Value::Object(std::mem::take(Arc::make_mut(&mut attr.input_schema)));
                inject_property(&mut v, name, description);
                if let Value::Object(m) = v {
                    *Arc::make_mut(&mut attr.input_schema) = m;
                }
            }
            strip && !declared
        };
        let model = attribution.model_argument.on(false) && add(MODEL_PARAM_NAME, MODEL_PARAM_DESCRIPTION);
        let mints = attribution.conversations && add(CONVERSATION_PARAM_NAME, CONVERSATION_PARAM_DESCRIPTION);
        let conversation = attribution.conversations && !declares_conversation;
        let takes = AttributionArgs { model, conversation, mints };
        *route = wrap(attr, route.call.clone(), strip, takes, shared.clone());
    }
    // A tool of the router's own keeps its name: mcpeye's is then left out.
    let reserved = reserved && !router.map.contains_key(RESERVED_TOOL_NAME);
    let feedback = feedback && !router.map.contains_key(FEEDBACK_TOOL_NAME);
    if reserved || feedback {
        let manifest = Arc::new(own_tools(&shared, reserved, feedback));
        for descriptor in manifest.tools_list().as_array().into_iter().flatten() {
            router.add_route(own_route(shared.clone(), manifest.clone(), descriptor));
        }
    }
    router
}

/// Adds `mcpeyeIntent`, described by `description`, to an object schema that does not declare
/// it; tells whether it did.
fn inject(schema: &mut Arc<JsonObject>, description: &str) -> bool {
    let props = schema.get("properties");
    let is_object = schema.get("type").and_then(Value::as_str) == Some("object");
    if !is_object || props.is_some_and(|p| !p.is_object() || p.get(INTENT_PARAM_NAME).is_some()) {
        return false;
    }
    let obj = Arc::make_mut(schema);
    obj.entry("properties").or_insert_with(|| Value::Object(Map::new()));
    let mut value = Value::Object(std::mem::take(obj));
    inject_intent_described(&mut value, description);
    if let Value::Object(m) = value {
        *obj = m;
    }
    true
}

/// The attribution arguments of an instrumented call taken out ([`attribute`]): the origin gets
/// the model and the conversation; the handle minted for it, when one was.
fn attribute_into(
    takes: AttributionArgs,
    name: &str,
    arguments: Option<&mut JsonObject>,
    origin: &mut crate::model::record::Origin,
    tracker: Option<&Tracker>,
) -> Option<Arc<str>> {
    let (attributed, minted) = attribute(takes, name, arguments?, origin, tracker);
    if let Some(attributed) = attributed {
        *origin = attributed;
    }
    minted
}

/// The response with the conversation handle minted for its call handed out, as one more text
/// item of a complete result (the one change to a tool's result, opt-in).
fn hand_out(response: &mut Response, handle: &str) {
    if let Ok(CallToolResponse::Complete(r)) = response {
        r.content.push(ContentBlock::text(handle_text(handle)));
    }
}

type DynCall<S> = Arc<::rmcp::handler::server::tool::DynCallToolHandler<S>>;
type Response = Result<CallToolResponse, ErrorData>;

fn wrap<S: Send + Sync + 'static>(
    attr: Tool,
    inner: DynCall<S>,
    strips_intent: bool,
    takes: AttributionArgs,
    shared: Arc<Instrumented>,
) -> ToolRoute<S> {
    let name = attr.name.clone();
    let attributes = takes.model || takes.conversation;
    ToolRoute::new_dyn(attr, move |mut ctx: ToolCallContext<'_, S>| {
        // Stripped with or without a tracker: the tool must never see the property.
        let intent = if strips_intent { ctx.arguments.as_mut().and_then(take_intent) } else { None };
        let Some(tracker) = shared.tracker() else {
            if attributes {
                let mut origin = crate::model::record::Origin::NONE;
                attribute_into(takes, &name, ctx.arguments.as_mut(), &mut origin, None);
            }
            // Without a tracker nothing is recorded, but a panic is still answered.
            let call = catch_unwind(AssertUnwindSafe(|| inner(ctx)));
            return Box::pin(async move {
                let Ok(call) = call else { return panicked() };
                match CatchUnwind(call).await {
                    Ok(mut response) => {
                        mark_complete(&mut response);
                        response
                    }
                    Err(_) => panicked(),
                }
            });
        };
        // MCP 2026-07-28: the tool may answer `input_required`; what crosses its rounds is
        // wrapped around its own state.
        let mut intent = intent;
        let round = match super::rounds::is_stateless_era(&ctx.request_context) {
            false => None,
            true => {
                let text = intent.as_ref().map(|(t, _)| t.as_str());
                let opened = InstrumentedRound::open(
                    &ctx.request_context,
                    &name,
                    ctx.arguments.as_ref(),
                    text,
                    &mut ctx.request_state,
                );
                match opened {
                    Ok(round) => Some(Box::new(round)),
                    Err(e) => return Box::pin(std::future::ready(Err(e))),
                }
            }
        };
        let earlier = round.as_ref().and_then(|r| r.earlier());
        if let Some((_, Some(first))) = &earlier {
            intent = Some(first.clone());
        }
        let round = round.map(|mut round| {
            round.intent = intent.clone();
            round
        });
        // The arguments go to the tool: the record takes them now (flattened, not cloned).
        // The origin is dropped where it is (`drop(origin)` would copy it first).
        let mut minted = None;
        let mut call = {
            let mut origin = shared.clients.origin(&ctx.request_context);
            if tracker.identifies() {
                origin.request = Some(Arc::new(crate::model::record::RequestExtra::of(&ctx.request_context)));
            }
            if attributes {
                minted = attribute_into(takes, &name, ctx.arguments.as_mut(), &mut origin, Some(&tracker));
            }
            let intent = call_intent(intent, &origin);
            TrackedCall::begin(
                Some(&tracker),
                name.clone(),
                true,
                Arguments::Borrowed(ctx.arguments.as_ref()),
                intent,
                &origin,
            )
        };
        if let Some((ago, _)) = earlier {
            call.started_earlier(ago);
        }
        let ct = ctx.request_context.ct.clone();
        let cancelled = move || ct.is_cancelled();
        // The span entered by a guard rather than `in_scope`: the context is then moved into one
        // closure, not copied into each closure on the way.
        let inner = &inner;
        let ran = {
            let _entered = call.span.as_ref().map(CallSpan::enter);
            catch_unwind(AssertUnwindSafe(move || inner(ctx)))
        };
        let future = match ran {
            Ok(future) => Running::Tool(CatchUnwind(future)),
            Err(payload) => Running::Panicked(payload),
        };
        let recorded = Recorded { future, call: Some(call), tracker, cancelled, round };
        match minted {
            None => Box::pin(recorded),
            Some(handle) => Box::pin(async move {
                let mut response = recorded.await;
                hand_out(&mut response, &handle);
                response
            }),
        }
    })
}

/// An instrumented call: the tool's future, polled with the call's span current and its panic
/// caught, then the record ([`Recorded::conclude`]). Written by hand rather than as an `async` block,
/// whose state would hold the call, the tool's future and its response side by side.
struct Recorded<'a, C> {
    future: Running<'a>,
    /// Taken by [`Recorded::conclude`] (always there until then).
    call: Option<TrackedCall>,
    tracker: Tracker,
    /// Whether the client cancelled the request.
    cancelled: C,
    /// A call of MCP 2026-07-28: its round, and the intent of its first round.
    round: Option<Box<InstrumentedRound>>,
}

enum Running<'a> {
    Tool(CatchUnwind<SendFuture<'a, Response>>),
    /// Calling the route panicked: the payload, until it is concluded.
    Panicked(Box<dyn Any + Send>),
    /// Concluded (or being polled).
    Done,
}

impl<C: Fn() -> bool + Unpin> Future for Recorded<'_, C> {
    type Output = Response;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Response> {
        let this = &mut *self;
        let payload = match std::mem::replace(&mut this.future, Running::Done) {
            Running::Tool(mut future) => {
                let mut poll = || Pin::new(&mut future).poll(cx);
                let polled = match &this.call {
                    Some(TrackedCall { span: Some(span), .. }) => span.in_scope(poll),
                    _ => poll(),
                };
                match polled {
                    Poll::Pending => {
                        this.future = Running::Tool(future);
                        return Poll::Pending;
                    }
                    // The tool's future is gone before the record is made, as it would be in an
                    // `async` block; the response is returned from where it was polled (each
                    // move of it copies a couple of hundred bytes).
                    Poll::Ready(Ok(mut response)) => {
                        drop(future);
                        if let (Ok(CallToolResponse::InputRequired(asks)), Some(round)) = (&mut response, &this.round) {
                            round.seal(asks);
                            this.tracker.count_round(true, &[]);
                        }
                        this.conclude(Ok(&response));
                        mark_complete(&mut response);
                        return Poll::Ready(response);
                    }
                    Poll::Ready(Err(payload)) => {
                        drop(future);
                        payload
                    }
                }
            }
            Running::Panicked(payload) => payload,
            Running::Done => panic!("an instrumented call polled after it ended"),
        };
        this.conclude(Err(&*payload));
        Poll::Ready(panicked())
    }
}

impl<C: Fn() -> bool> Recorded<'_, C> {
    /// Records what the route answered (see the [module docs](super)), once; the caller then
    /// returns it or resumes the panic. A call that ends after the client cancelled it is
    /// recorded as cancelled.
    fn conclude(&mut self, response: Result<&Response, &(dyn Any + Send)>) {
        let Some(call) = self.call.take() else { return };
        let tracker = Some(&self.tracker);
        // The response is borrowed: it is large, and the caller returns it as it is.
        let (outcome, rpc_code) = match response {
            Ok(_) if (self.cancelled)() => (CallOutcome::cancelled(None), None),
            Ok(Ok(CallToolResponse::Complete(r))) if r.is_error == Some(true) => {
                (CallOutcome::Error { message: joined_text(r), reason: None }, None)
            }
            // The record is the result as `result_json` makes it, flattened without that JSON.
            Ok(Ok(CallToolResponse::Complete(r))) => return call.end_with(tracker, r, flatten_result, result_json),
            Ok(Ok(CallToolResponse::Task(t))) => {
                (CallOutcome::Success { result: serde_json::to_value(t).unwrap_or(Value::Null) }, None)
            }
            // An `input_required` round (or a kind of response rmcp adds later) is not the end of
            // the call: the round that completes it is recorded.
            Ok(Ok(_)) => return,
            // The JSON-RPC error code is the reason (and, on the span, `rpc.response.status_code`).
            Ok(Err(e)) => {
                let code = i64::from(e.code.0);
                (CallOutcome::error_with_reason(e.message.to_string(), code.to_string()), Some(code))
            }
            Err(p) => (CallOutcome::error_with_reason(panic_message(p), PANIC), None),
        };
        call.end(tracker, outcome, rpc_code);
    }
}

/// The answer to a call whose tool panicked (recorded first, when there is a tracker): an
/// internal error, so that the client is answered (rmcp would leave the request unanswered) and
/// a task ends `failed`; the panic's message stays on the server.
fn panicked() -> Response {
    Err(ErrorData::internal_error(PANIC_ANSWER, None))
}

/// Gives a result the tool built without rmcp's constructors (from JSON, or `Default`)
/// `resultType: "complete"`, which MCP 2026-07-28 requires on every result; rmcp removes it
/// again for a client of an older version, and nothing else of the result changes.
fn mark_complete(response: &mut Response) {
    if let Ok(CallToolResponse::Complete(r)) = response {
        r.result_type.get_or_insert(ResultType::COMPLETE);
    }
}

/// The result as recorded: as sent, without rmcp's `resultType` discriminator (absent for most
/// peers, and not part of what the tool produced), and with the base64 `data` and `blob` of its
/// image, audio and embedded resource items as the truncation marker of their size, as
/// `#[mcpeye::tool]` results record them (binary never goes to the analytics wire).
fn result_json(r: &CallToolResult) -> Value {
    let mut v = serde_json::to_value(r).unwrap_or(Value::Null);
    if let Value::Object(m) = &mut v {
        m.shift_remove(RESULT_TYPE);
        if let Some(Value::Array(items)) = m.get_mut("content") {
            for item in items.iter_mut() {
                *item = crate::model::result::record_content_item(std::mem::take(item));
            }
        }
    }
    v
}

/// Appends the node of [`result_json`]`(r)` to `out` within `budget`; false, with `out` as it
/// was, when it does not fit (or nests too deep).
fn flatten_result(r: &CallToolResult, out: &mut Vec<u8>, budget: usize) -> bool {
    // Text items without `_meta` or annotations, and nothing else: the common result, written
    // from its texts alone, without building its JSON.
    let plain_text =
        |c: &ContentBlock| matches!(c, ContentBlock::Text(t) if t.meta.is_none() && t.annotations.is_none());
    if r.structured_content.is_none() && r.meta.is_none() && r.content.iter().all(plain_text) {
        let texts = r.content.iter().map(|c| match c {
            ContentBlock::Text(t) => t.text.as_str(),
            _ => "",
        });
        return flatten_texts(texts, None, r.is_error, out, budget);
    }
    // Rarer results (structured content, annotations, `_meta`, binary items): through the
    // recorded JSON, whose binary payloads are markers.
    flatten(&result_json(r), out, budget)
}

/// rmcp's discriminator key in a serialised `CallToolResult`.
const RESULT_TYPE: &str = "resultType";

/// The `text` of the text items joined with `"\n"`, or `None` when there are none.
fn joined_text(r: &CallToolResult) -> Option<String> {
    let texts: Vec<&str> = r.content.iter().filter_map(|c| c.as_text()).map(|t| t.text.as_str()).collect();
    (!texts.is_empty()).then(|| texts.join("\n"))
}

/// A tool-less manifest with mcpeye's own tools (the reserved tool, the feedback tool, as
/// asked), which answers them so that their answers and records are exactly those of a
/// manifest-served server.
fn own_tools(shared: &Instrumented, reserved: bool, feedback: bool) -> Manifest {
    let mut builder = Manifest::builder()
        .capture_missing_capabilities(reserved)
        .feedback(feedback)
        .model_argument(shared.attribution.model_argument)
        .conversations(shared.attribution.conversations);
    if let Some(t) = &shared.tracker {
        builder = builder.tracker(t.clone());
    }
    builder.build()
}

/// The route of one of mcpeye's own tools, `descriptor` of `manifest` (with `llm_model` when
/// asked for), answered by that manifest.
fn own_route<S: Send + Sync + 'static>(
    shared: Arc<Instrumented>,
    manifest: Arc<Manifest>,
    descriptor: &Value,
) -> ToolRoute<S> {
    let name = descriptor["name"].as_str().unwrap_or_default().to_owned();
    let schema = descriptor["inputSchema"].as_object().cloned().unwrap_or_default();
    let description = descriptor["description"].as_str().unwrap_or_default().to_owned();
    let tool = Tool::new(name.clone(), description, schema);
    ToolRoute::new_dyn(tool, move |ctx: ToolCallContext<'_, S>| {
        let mut origin = shared.clients.origin(&ctx.request_context);
        let tracker = manifest.active_tracker();
        let tracker = tracker.as_deref();
        if tracker.is_some_and(Tracker::identifies) {
            origin.request = Some(Arc::new(crate::model::record::RequestExtra::of(&ctx.request_context)));
        }
        let arguments = ctx.arguments.map(Value::Object).unwrap_or(Value::Null);
        let response = match manifest.try_call_result(tracker, &origin, &name, arguments) {
            Ok(v) => super::complete_response(v),
            Err(e) => Err(ErrorData::invalid_params(e.to_string(), None)),
        };
        Box::pin(std::future::ready(response))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::record::Origin;
    use ::rmcp::model::ResourceContents;
    use std::future::Future;
    use std::pin::Pin;
    use std::sync::Mutex;
    use std::task::Context;

    #[test]
    fn a_panic_is_recorded_then_answered() {
        let records = Arc::new(Mutex::new(Vec::new()));
        let sink = records.clone();
        let tracker = Tracker::from_fn(move |r| sink.lock().unwrap().push(r));
        let args = serde_json::json!({"q": "x"});
        let intent = Some(("why".into(), crate::IntentSource::Mcpeye));
        let arguments = Arguments::Borrowed(args.as_object());
        let call = TrackedCall::begin(Some(&tracker), "search".into(), true, arguments, intent, &Origin::default());
        let future: SendFuture<'_, Response> = Box::pin(async { panic!("search exploded") });
        let future = Running::Tool(CatchUnwind(future));
        let mut recorded = Recorded { future, call: Some(call), tracker, cancelled: || false, round: None };
        let waker = std::task::Waker::noop();
        let polled = Pin::new(&mut recorded).poll(&mut Context::from_waker(waker));
        let Poll::Ready(Err(answer)) = polled else { panic!("answered: {polled:?}") };
        assert_eq!(answer.code, ::rmcp::model::ErrorCode::INTERNAL_ERROR);
        assert_eq!(answer.message, PANIC_ANSWER, "the panic's message stays on the server");
        let recs = records.lock().unwrap();
        assert_eq!(recs.len(), 1);
        assert!(recs[0].is_error() && recs[0].result().is_none());
        assert_eq!(recs[0].error_message(), Some("the tool panicked: search exploded"));
        assert_eq!(recs[0].intent, Some(("why".into(), crate::IntentSource::Mcpeye)));
    }

    /// A pipeline records an rmcp result flattened straight from it (text items from their
    /// texts): the same node as the JSON `result_json` makes of it, within any budget.
    #[test]
    fn results_flatten_as_their_json() {
        use crate::json::flat::flatten;
        use ::rmcp::model::{Annotations, MetaObject, ResultType, TextContent};
        let mut complete = CallToolResult::success(vec![ContentBlock::text("3 invoices found")]);
        complete.result_type = Some(ResultType::COMPLETE);
        let mut not_error = CallToolResult::success(vec![ContentBlock::text("a"), ContentBlock::text("")]);
        not_error.is_error = Some(false);
        let mut with_meta = CallToolResult::success(vec![ContentBlock::text("x\u{1}é")]);
        with_meta.meta = Some(MetaObject(serde_json::json!({"k": 1}).as_object().cloned().unwrap()));
        let text_meta =
            TextContent::new("t").with_meta(MetaObject(serde_json::json!({"a": [1]}).as_object().cloned().unwrap()));
        let mut annotations = Annotations::default();
        annotations.priority = Some(0.5);
        let annotated = TextContent::new("t").with_annotations(annotations);
        let results = [
            complete.clone(),
            not_error,
            with_meta,
            CallToolResult::success(vec![ContentBlock::Text(text_meta), ContentBlock::text("u")]),
            CallToolResult::success(vec![ContentBlock::text("u"), ContentBlock::Text(annotated)]),
            CallToolResult::success(vec![
                ContentBlock::text("a \"b\"\n"),
                ContentBlock::text("界🔑"),
                ContentBlock::text(""),
            ]),
            CallToolResult::success(vec![ContentBlock::text("a \"b\"\n"), ContentBlock::image("AAAA", "image/png")]),
            CallToolResult::structured(serde_json::json!({"n": [1, 2.5, null], "s": "x"})),
            CallToolResult::error(vec![ContentBlock::text("no")]),
            CallToolResult::success(vec![]),
        ];
        for r in &results {
            let mut via_json = Vec::new();
            assert!(flatten(&result_json(r), &mut via_json, usize::MAX));
            let mut written = b"prefix".to_vec();
            assert!(flatten_result(r, &mut written, usize::MAX), "{r:?}");
            assert_eq!(written[6..], via_json[..], "{r:?}");
            for budget in [via_json.len(), via_json.len() - 1, 8] {
                let mut cut = b"prefix".to_vec();
                assert_eq!(flatten_result(r, &mut cut, budget), budget >= via_json.len(), "{r:?} {budget}");
                assert_eq!(cut.len(), if budget >= via_json.len() { 6 + via_json.len() } else { 6 }, "{r:?} {budget}");
            }
        }
    }

    /// Image, audio and blob items are recorded with the truncation marker of their base64; text,
    /// links and text resources as they are.
    #[test]
    fn binary_items_are_recorded_as_markers() {
        let png = "iVBORw0KGgo".repeat(100);
        let r = CallToolResult::success(vec![
            ContentBlock::text("chart"),
            ContentBlock::image(png.clone(), "image/png"),
            ContentBlock::audio("UklGRg==", "audio/wav"),
            ContentBlock::resource(ResourceContents::blob("JVBERi0=", "file:///r.pdf")),
            ContentBlock::embedded_text("file:///n.txt", "notes"),
        ]);
        let marker = |n: usize| serde_json::json!({"[truncated]": true, "bytes": n});
        let expected = serde_json::json!({"content": [
            {"type": "text", "text": "chart"},
            {"type": "image", "data": marker(png.len() + 2), "mimeType": "image/png"},
            {"type": "audio", "data": marker(10), "mimeType": "audio/wav"},
            {"type": "resource", "resource": {"uri": "file:///r.pdf", "blob": marker(10)}},
            {"type": "resource", "resource": {"uri": "file:///n.txt", "mimeType": "text/plain", "text": "notes"}},
        ], "isError": false});
        assert_eq!(result_json(&r), expected);
        let (mut written, mut via_json) = (Vec::new(), Vec::new());
        assert!(flatten_result(&r, &mut written, usize::MAX));
        assert!(flatten(&expected, &mut via_json, usize::MAX));
        assert_eq!(written, via_json);
        assert!(!String::from_utf8_lossy(&written).contains("iVBOR"));
    }

    #[test]
    fn injection_leaves_owned_and_non_object_schemas_alone() {
        let obj = |v: Value| Arc::new(v.as_object().cloned().unwrap());
        let mut owned = obj(serde_json::json!({"type": "object", "properties": {"mcpeyeIntent": {"type": "integer"}}}));
        let before = owned.clone();
        assert!(!inject(&mut owned, INTENT_PARAM_DESCRIPTION));
        assert_eq!(owned, before);
        let mut not_object = obj(serde_json::json!({"type": "string"}));
        assert!(!inject(&mut not_object, INTENT_PARAM_DESCRIPTION));
        assert!(not_object.get("properties").is_none());
        let mut bare = obj(serde_json::json!({"type": "object"}));
        assert!(inject(&mut bare, INTENT_PARAM_DESCRIPTION));
        assert_eq!(bare["properties"][INTENT_PARAM_NAME]["type"], "string");
    }
}
