//! [`ManifestServer`]: a [`Manifest`] served as an rmcp `ServerHandler`.

use super::channel::{with_origin, with_origin_now};
use super::client::Clients;
use super::observe::{completion_target, Watch};
use super::rounds;
use super::session;
use crate::dispatch::{CallError, CatchUnwind, PANIC_ANSWER};
use crate::model::client::LogLevel;
use crate::model::result::CallToolResult as McpeyeResult;
use crate::model::stats::{Method, Target};
use crate::tool::manifest::Manifest;
use crate::tracker::Tracker;
use ::rmcp::handler::server::router::tool::{ToolRoute, ToolRouter};
use ::rmcp::handler::server::tool::ToolCallContext;
#[allow(deprecated)] // MCP logging: deprecated by rmcp ahead of SEP-2577, still in MCP 2025-11-25
use ::rmcp::model::{
    CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult, GetPromptRequestParams,
    GetPromptResponse, Implementation, InitializeRequestParams, InitializeResult, InputResponses, JsonObject,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, LoggingLevel,
    PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities,
    ServerConfig, SetLevelRequestParams, Tool,
};
use ::rmcp::service::RequestContext;
use ::rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::Value;
use std::borrow::Cow;
use std::fmt;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::{pin, Pin};
use std::sync::Arc;

/// An rmcp `ServerHandler` that lists and calls the tools of a [`Manifest`].
///
/// `tools/list` answers [`Manifest::tools_list`] (the `mcpeyeIntent` property and the reserved
/// tool included; without `outputSchema` for clients of a protocol before 2025-06-18), `tools/call` goes through [`Manifest::try_call_async`] (which records the
/// call) and an unknown tool is a JSON-RPC invalid-params error (`-32602`, as MCP specifies),
/// recorded once with its intent. Each call is recorded with the
/// client that made it (its `initialize` `clientInfo`, or the request's `_meta` in MCP
/// 2026-07-28), so sessions of different clients are never mixed up. Cheap to clone: clones
/// share the manifest.
///
/// Handlers taking a [`Context`](crate::Context) get the request's progress token, `_meta`,
/// session id and cancellation, and talk back to the client through rmcp: progress and log
/// notifications (sent on the request's own stream, before its answer), sampling and
/// elicitation. The `logging` capability is announced and `logging/setLevel` is honoured for the
/// session (MCP 2026-07-28: the request's `_meta` log level).
///
/// ```no_run
/// use rmcp::ServiceExt;
/// use std::sync::Arc;
///
/// # async fn run(manifest: mcpeye::Manifest) -> Result<(), Box<dyn std::error::Error>> {
/// let server = mcpeye::rmcp::ManifestServer::new(Arc::new(manifest))
///     .with_server_info(env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION"));
/// server.serve(rmcp::transport::stdio()).await?.waiting().await?;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct ManifestServer {
    manifest: Arc<Manifest>,
    tools: Arc<[Tool]>,
    /// The tools without `outputSchema`, for clients of a protocol that predates it.
    tools_without_output: Arc<[Tool]>,
    config: ServerConfig,
    clients: Arc<Clients>,
    /// The manifest has no async tool (see [`call_manifest`]).
    sync: bool,
    /// The server info's version, once set: the events' `serverVersion` unless configured.
    version: Option<Arc<str>>,
}

impl fmt::Debug for ManifestServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ManifestServer")
            .field("manifest", &self.manifest)
            .field("server_info", &self.config.server_info)
            .finish()
    }
}

impl ManifestServer {
    /// Serves `manifest`, announcing the tools capability and, until
    /// [`with_server_info`](Self::with_server_info), the server `mcpeye-server` `0.0.0`.
    ///
    /// ```
    /// use mcpeye::rmcp::ManifestServer;
    /// use rmcp::ServiceExt;
    /// use std::sync::Arc;
    ///
    /// async fn serve() -> Result<(), Box<dyn std::error::Error>> {
    ///     let server = ManifestServer::new(Arc::new(mcpeye::tools!()));
    ///     server.serve(rmcp::transport::stdio()).await?.waiting().await?;
    ///     Ok(())
    /// }
    /// ```
    pub fn new(manifest: Arc<Manifest>) -> Self {
        let tools = to_tools(&manifest.tools_list());
        let mut tools_without_output = tools.clone();
        for t in &mut tools_without_output {
            t.output_schema = None;
        }
        #[allow(deprecated)] // MCP's logging capability: deprecated by rmcp ahead of SEP-2577, still in MCP
        let capabilities = ServerCapabilities::builder().enable_logging().enable_tools().build();
        let config = ServerConfig::new(capabilities).with_server_info(Implementation::new("mcpeye-server", "0.0.0"));
        let sync = !manifest.has_async_tools();
        ManifestServer {
            manifest,
            tools: tools.into(),
            tools_without_output: tools_without_output.into(),
            config,
            clients: Arc::default(),
            sync,
            version: None,
        }
    }

    /// Sets the `serverInfo` name and version answered to `initialize`. The version is also the
    /// events' `serverVersion` when the tracker's [`Identity`](crate::Identity) sets none.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// let server = mcpeye::rmcp::ManifestServer::new(Arc::new(mcpeye::Manifest::builder().build()))
    ///     .with_server_info("my-server", "1.4.0");
    /// # drop(server);
    /// ```
    pub fn with_server_info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.config.server_info = Implementation::new(name, version);
        self.version = Some(self.config.server_info.version.as_str().into());
        self.announce_version();
        self
    }

    /// Hands the server's version to the tracker (the process-wide one may be installed after
    /// the server is built, so this runs again whenever a client asks for the server info).
    fn announce_version(&self) {
        if let (Some(version), Some(tracker)) = (&self.version, self.manifest.active_tracker()) {
            tracker.default_server_version(version);
        }
    }

    /// Sets the `instructions` answered to `initialize`.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// let server = mcpeye::rmcp::ManifestServer::new(Arc::new(mcpeye::Manifest::builder().build()))
    ///     .with_instructions("Search the catalogue before placing an order.");
    /// # drop(server);
    /// ```
    pub fn with_instructions(mut self, instructions: impl Into<String>) -> Self {
        self.config.instructions = Some(instructions.into());
        self
    }

    /// Replaces the whole `initialize` answer (capabilities, server info, instructions). Keep
    /// the tools capability enabled: clients only list tools of servers that announce it (and
    /// the logging capability, for clients to set the level of the tools' log messages).
    ///
    /// ```
    /// use rmcp::model::{Implementation, ServerCapabilities, ServerConfig};
    /// use std::sync::Arc;
    ///
    /// let capabilities = ServerCapabilities::builder().enable_tools().build();
    /// let info = ServerConfig::new(capabilities).with_server_info(Implementation::new("shop", "2.1.0"));
    /// let server = mcpeye::rmcp::ManifestServer::new(Arc::new(mcpeye::Manifest::builder().build())).with_config(info);
    /// # drop(server);
    /// ```
    pub fn with_config(mut self, config: ServerConfig) -> Self {
        self.config = config;
        self.version = Some(self.config.server_info.version.as_str().into());
        self.announce_version();
        self
    }

    /// The manifest served.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// let server = mcpeye::rmcp::ManifestServer::new(Arc::new(mcpeye::Manifest::builder().build()));
    /// assert!(server.manifest().has_tool("mcpeye_request_capability"));
    /// ```
    pub fn manifest(&self) -> &Arc<Manifest> {
        &self.manifest
    }
}

/// The manifest's descriptors as rmcp `Tool`s. They are built by mcpeye in MCP's shape, so a
/// descriptor rmcp cannot read is a bug; it is left out rather than failing the whole list.
fn to_tools(list: &Value) -> Vec<Tool> {
    let descriptors = list.as_array().map(Vec::as_slice).unwrap_or_default();
    descriptors.iter().filter_map(|d| serde_json::from_value(d.clone()).ok()).collect()
}

impl ServerHandler for ManifestServer {
    fn get_info(&self) -> ServerConfig {
        self.announce_version();
        self.config.clone()
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        // What rmcp's default `initialize` does (the session's client is read back from it).
        context.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let watch = self.watch(&context, Method::ToolsList, Target::None);
        let tools = if has_output_schema(&context) { &self.tools } else { &self.tools_without_output };
        Watch::around(watch, std::future::ready(Ok(ListToolsResult::with_all_items(tools.to_vec())))).await
    }

    // The methods a manifest does not serve answer as rmcp's defaults do (`Defaults`), and are
    // recorded: an agent asking this server for a resource or a prompt is worth knowing of.
    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let watch = self.watch(&context, Method::ResourcesList, Target::None);
        Watch::around(watch, Defaults(self.config.clone()).list_resources(request, context)).await
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let watch = self.watch(&context, Method::ResourceTemplatesList, Target::None);
        Watch::around(watch, Defaults(self.config.clone()).list_resource_templates(request, context)).await
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let watch = self.watch(&context, Method::ResourcesRead, Target::Resource(&request.uri));
        Watch::around(watch, Defaults(self.config.clone()).read_resource(request, context)).await
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let watch = self.watch(&context, Method::PromptsList, Target::None);
        Watch::around(watch, Defaults(self.config.clone()).list_prompts(request, context)).await
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let watch = self.watch(&context, Method::PromptsGet, Target::Prompt(&request.name));
        Watch::around(watch, Defaults(self.config.clone()).get_prompt(request, context)).await
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let watch = self.watch(&context, Method::CompletionComplete, completion_target(&request));
        Watch::around(watch, Defaults(self.config.clone()).complete(request, context)).await
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|t| t.name == name).cloned()
    }

    // Not `async`: the future rmcp gets is the answer alone, not the request and its context
    // beside it (rmcp copies a request's future several times into fresh memory as it spawns it).
    fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<CallToolResponse, ErrorData>> + Send + '_ {
        let CallToolRequestParams { name, arguments, input_responses, request_state, .. } = request;
        let rounds = RetryInput { input_responses, request_state };
        call_manifest(&self.manifest, self.sync, &self.clients, context, name, arguments, rounds)
    }

    #[allow(deprecated)] // `logging/setLevel`: deprecated by rmcp ahead of SEP-2577, still in MCP
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        set_log_level(&context, request.level.into());
        Ok(())
    }
}

impl ManifestServer {
    /// Starts recording a request of another method than `tools/call` (`rmcp::observe`).
    fn watch(&self, context: &RequestContext<RoleServer>, method: Method, target: Target<'_>) -> Option<Watch> {
        Watch::start(self.manifest.active_tracker().as_deref(), &self.clients, context, method, target)
    }
}

/// rmcp's default answers for a server announcing `0`'s capabilities: what [`ManifestServer`]
/// answers to the methods it does not serve, exactly as if it had not written them.
struct Defaults(ServerConfig);

impl ServerHandler for Defaults {
    fn get_info(&self) -> ServerConfig {
        self.0.clone()
    }
}

/// Whether the request's protocol (its `_meta`'s in MCP 2026-07-28, else the session's
/// handshake) has `outputSchema`: 2025-06-18 and later. A client of 2024-11-05 or 2025-03-26
/// does not know the field. A request naming no version is answered in full.
fn has_output_schema(context: &RequestContext<RoleServer>) -> bool {
    context.protocol_version().is_none_or(|v| v >= ProtocolVersion::V_2025_06_18)
}

/// Records the level a client set with `logging/setLevel` for its session, so that the
/// [`Context`](crate::Context) of the session's later calls sends only log messages at that
/// level or above. [`ManifestServer`] does it itself; a server of your own that mounts a
/// [`tool_router`] calls it from its `set_level`:
///
/// ```
/// use rmcp::model::{ServerCapabilities, ServerConfig, SetLevelRequestParams};
/// use rmcp::service::RequestContext;
/// use rmcp::{ErrorData, RoleServer, ServerHandler};
///
/// struct MyServer;
///
/// #[allow(deprecated)] // rmcp deprecates MCP logging ahead of SEP-2577
/// impl ServerHandler for MyServer {
///     fn get_info(&self) -> ServerConfig {
///         ServerConfig::new(ServerCapabilities::builder().enable_logging().enable_tools().build())
///     }
///
///     async fn set_level(&self, request: SetLevelRequestParams, context: RequestContext<RoleServer>) -> Result<(), ErrorData> {
///         mcpeye::rmcp::set_log_level(&context, request.level.into());
///         Ok(())
///     }
/// }
/// ```
///
/// Sessions are told apart by their handshake; without one (stateless serving, MCP 2026-07-28)
/// there is no session to remember a level for, and the request's `_meta` says it.
pub fn set_log_level(context: &RequestContext<RoleServer>, level: LogLevel) {
    session::set_log_level(context, level);
}

#[allow(deprecated)] // rmcp's `LoggingLevel`: deprecated by rmcp ahead of SEP-2577, still in MCP
impl From<LoggingLevel> for LogLevel {
    fn from(level: LoggingLevel) -> Self {
        match level {
            LoggingLevel::Debug => LogLevel::Debug,
            LoggingLevel::Info => LogLevel::Info,
            LoggingLevel::Notice => LogLevel::Notice,
            LoggingLevel::Warning => LogLevel::Warning,
            LoggingLevel::Error => LogLevel::Error,
            LoggingLevel::Critical => LogLevel::Critical,
            LoggingLevel::Alert => LogLevel::Alert,
            LoggingLevel::Emergency => LogLevel::Emergency,
        }
    }
}

/// One `tools/call` of a manifest served through rmcp, by [`ManifestServer`] or by a router of
/// [`tool_router`]: the call runs with the request's context (client, `_meta`, cancellation, the
/// channel back to the client), is recorded, and is answered as rmcp expects.
///
/// `sync`: the manifest has no async tool, so the call runs here, before the future exists, and
/// the future is its answer, ready (or, when the call queued notifications, the boxed sending of
/// those before it). Otherwise boxed: rmcp moves the request's future by value several times
/// while spawning its task, so a call's whole state machine inline would be copied each time.
/// The request's context and name are taken by value for the same reason: the future holds
/// neither once the answer is known.
fn call_manifest<'a>(
    manifest: &'a Manifest,
    sync: bool,
    clients: &'a Clients,
    mut context: RequestContext<RoleServer>,
    name: Cow<'static, str>,
    arguments: Option<JsonObject>,
    rounds: RetryInput,
) -> CallAnswer<'a> {
    // Only an async tool can wait for an answer, so a manifest without one never asks.
    // A call run as a task asks through the task's own input requests, not through rounds.
    let in_task = context.extensions.get::<super::task::TaskInput>().is_some();
    if !sync && rounds::is_stateless_era(&context) && !(in_task && rounds.input_responses.is_none()) {
        return CallAnswer::Later(Box::pin(call_round(manifest, clients, context, name, arguments, rounds)));
    }
    let arguments = arguments.map(Value::Object).unwrap_or(Value::Null);
    if sync {
        // Resolved once for the request: whether to keep it for `identify`, and where it goes.
        let tracker = manifest.active_tracker();
        let tracker = tracker.as_deref();
        let keep_request = tracker.is_some_and(Tracker::identifies);
        let (result, pump) = with_origin_now(clients, context, keep_request, |origin| {
            catch_unwind(AssertUnwindSafe(|| manifest.try_call_result(tracker, origin, &name, arguments)))
        });
        return match pump {
            None => CallAnswer::Now(std::future::ready(answer_of(result))),
            Some(pump) => CallAnswer::Later(Box::pin(async move {
                // Boxed with the call's answer: most calls send nothing.
                pump.send().await;
                answer_of(result)
            })),
        };
    }
    CallAnswer::Later(Box::pin(async move {
        let name = &name;
        let tracker = manifest.active_tracker();
        let tracker = tracker.as_deref();
        let keep_request = tracker.is_some_and(Tracker::identifies);
        let ran = with_origin(clients, &mut context, None, keep_request, move |origin| async move {
            CatchUnwind(pin!(manifest.try_call_async_result(tracker, &origin, name, arguments))).await
        })
        .await;
        // Without a round to end, the call always runs to its end.
        ran.map_or_else(|| Err(ErrorData::internal_error("the call stopped without a question", None)), answer_of)
    }))
}

/// What a retry of MCP 2026-07-28 brings: the answers and the state of the previous round.
#[derive(Default)]
pub(crate) struct RetryInput {
    input_responses: Option<InputResponses>,
    request_state: Option<String>,
}

/// One round of a `tools/call` of MCP 2026-07-28: the handler runs with the answers the client
/// gave (and those of earlier rounds, from the state); if it waits for one it has not got, the
/// call answers `input_required` with its questions and nothing is recorded yet (the round that
/// ends the call is recorded, timed from the first). A state that fails verification is an
/// invalid-params error.
async fn call_round(
    manifest: &Manifest,
    clients: &Clients,
    mut context: RequestContext<RoleServer>,
    name: Cow<'static, str>,
    arguments: Option<JsonObject>,
    rounds: RetryInput,
) -> Result<CallToolResponse, ErrorData> {
    let RetryInput { input_responses, request_state } = rounds;
    let (asking, bound) = rounds::open(&context, &name, arguments.as_ref(), input_responses, request_state.as_deref())?;
    let call_arguments = arguments.clone().map(Value::Object).unwrap_or(Value::Null);
    let tool = &name;
    let tracker = manifest.active_tracker();
    let tracker = tracker.as_deref();
    let keep_request = tracker.is_some_and(Tracker::identifies);
    let ran = with_origin(clients, &mut context, Some(asking.clone()), keep_request, move |origin| async move {
        CatchUnwind(pin!(manifest.try_call_async_result(tracker, &origin, tool, call_arguments))).await
    })
    .await;
    if let Some(tracker) = tracker {
        tracker.count_round(ran.is_none(), &asking.actions());
    }
    match ran {
        Some(result) => answer_of(result),
        None => rounds::input_required(&asking, &bound, arguments.as_ref()).map(CallToolResponse::InputRequired),
    }
}

/// The answer to one `tools/call` ([`call_manifest`]).
// Not boxed: boxing a ready answer would cost the allocation it saves.
#[allow(clippy::large_enum_variant)]
enum CallAnswer<'a> {
    /// Known already.
    Now(std::future::Ready<Result<CallToolResponse, ErrorData>>),
    /// Still to come.
    Later(Pin<Box<dyn Future<Output = Result<CallToolResponse, ErrorData>> + Send + 'a>>),
}

impl Future for CallAnswer<'_> {
    type Output = Result<CallToolResponse, ErrorData>;

    fn poll(self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<Self::Output> {
        match self.get_mut() {
            CallAnswer::Now(ready) => Pin::new(ready).poll(cx),
            CallAnswer::Later(later) => later.as_mut().poll(cx),
        }
    }
}

/// What the manifest did with a call (or the panic of its tool, which the manifest recorded).
type Called = Result<Result<McpeyeResult, CallError>, Box<dyn std::any::Any + Send>>;

/// The manifest's answer as rmcp's. A tool that panicked is an internal error (`-32603`): the
/// client is answered, where rmcp alone would leave it waiting, and a call run as a task ends
/// `failed`, as MCP says of protocol-level failures. The panic's message stays on the server: it
/// may hold argument values.
fn answer_of(called: Called) -> Result<CallToolResponse, ErrorData> {
    match called {
        Ok(Ok(result)) => super::complete_response(result),
        Ok(Err(e)) => Err(ErrorData::invalid_params(e.to_string(), None)),
        Err(_) => Err(ErrorData::internal_error(PANIC_ANSWER, None)),
    }
}

/// The tools of `manifest` (the reserved tool included) as an rmcp `ToolRouter`, to mount into
/// a server of your own that also serves resources, prompts or rmcp `#[tool]`s: `#[mcpeye::tool]`
/// never makes you give up the rest of MCP. Calls go through the manifest, which records them
/// with their client, exactly as under [`ManifestServer`].
///
/// ```
/// use rmcp::handler::server::router::tool::ToolRouter;
/// use rmcp::model::{ServerCapabilities, ServerConfig};
/// use rmcp::{tool_handler, ServerHandler};
/// use std::sync::Arc;
///
/// #[derive(Clone)]
/// struct MyServer {
///     tool_router: ToolRouter<Self>,
/// }
///
/// #[tool_handler(router = self.tool_router)]
/// impl ServerHandler for MyServer {
///     fn get_info(&self) -> ServerConfig {
///         // Resources, prompts… are this server's own; the tools come from the manifest.
///         ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_resources().build())
///     }
/// }
///
/// // With `#[mcpeye::tool]` functions: `Arc::new(mcpeye::tools![now, search])`.
/// let manifest = Arc::new(mcpeye::Manifest::builder().build());
/// let server = MyServer { tool_router: mcpeye::rmcp::tool_router(manifest) };
/// assert!(server.tool_router.has_route("mcpeye_request_capability"));
/// ```
///
/// A call of a tool the router does not have never reaches a route: rmcp's `#[tool_handler]`
/// answers it itself. Write `call_tool` with [`call_tool`](super::call_tool) (as its docs show) for
/// those calls to be recorded too.
///
/// Add it to a router of rmcp `#[tool]`s with `+` (`Self::tool_router() + mcpeye::rmcp::tool_router(m)`);
/// instrument that router first ([`instrument`](super::instrument)) if its tools should be
/// recorded too, not after, or the manifest's calls would be recorded twice.
pub fn tool_router<S: Send + Sync + 'static>(manifest: Arc<Manifest>) -> ToolRouter<S> {
    let clients = Clients::shared();
    let sync = !manifest.has_async_tools();
    let mut router = ToolRouter::new();
    for tool in to_tools(&manifest.tools_list()) {
        let manifest = manifest.clone();
        router.add_route(ToolRoute::new_dyn(tool, move |ctx: ToolCallContext<'_, S>| {
            let manifest = manifest.clone();
            Box::pin(async move {
                let rounds = RetryInput { input_responses: ctx.input_responses, request_state: ctx.request_state };
                call_manifest(&manifest, sync, clients, ctx.request_context, ctx.name, ctx.arguments, rounds).await
            })
        }));
    }
    router
}
