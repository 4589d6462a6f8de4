//! The requests other than `tools/call` that agents send (`resources/read`, `prompts/get`,
//! `completion/complete`, and the lists): [`Watch`] records one, for [`ManifestServer`] and
//! for [`Observed`], a user's own `ServerHandler` wrapped. Counts in [`Stats`](crate::Stats)
//! and a span; never an event for the ingest (docs/wire-format.md#capture).
//!
//! [`ManifestServer`]: super::ManifestServer

use super::client::Clients;
use crate::flush::event_log::Note;
use crate::model::record::ClientInfo;
use crate::model::stats::{Method, Target};
use crate::telemetry::MethodSpan;
use crate::tracker::{active_tracker, Tracker};
#[allow(deprecated)] // MCP logging and resource subscriptions: deprecated by rmcp, still in MCP
use ::rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, CancelledNotificationParam, CompleteRequestParams,
    CompleteResult, CustomNotification, CustomRequest, CustomResult, DiscoverResult, GetPromptRequestParams,
    GetPromptResponse, GetSkillRequestParams, GetSkillResult, GetTaskParams, GetTaskResult, InitializeRequestParams,
    InitializeResult, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListSkillsResult,
    ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ProtocolVersion,
    ReadResourceDirectoryRequestParams, ReadResourceDirectoryResult, ReadResourceRequestParams, ReadResourceResponse,
    Reference, ServerConfig, SetLevelRequestParams, SubscribeRequestParams, SubscriptionFilter, Tool,
    UnsubscribeRequestParams, UpdateTaskParams,
};
use ::rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use ::rmcp::{ErrorData, RoleServer, ServerHandler};
use std::borrow::{Borrow, Cow};
use std::fmt;
use std::future::Future;
use std::time::Instant;

/// One request of a method other than `tools/call`, being answered: counted as it arrives,
/// its span current while the handler answers, its error counted and its span ended with the
/// answer. `None` (from [`start`](Self::start)) when there is no tracker and no span to make:
/// the request is then not even looked at.
pub(crate) struct Watch {
    tracker: Option<Tracker>,
    method: Method,
    span: MethodSpan,
    started: Option<Instant>,
    /// For the event log (when the tracker writes one): the request, its error and duration
    /// filled in at its end.
    note: Option<Note>,
}

impl Watch {
    /// Starts watching a request of `method` about `target`, recorded into `own` (else the
    /// process-wide tracker), attributed through `clients`.
    pub(crate) fn start(
        own: Option<&Tracker>,
        clients: &Clients,
        context: &RequestContext<RoleServer>,
        method: Method,
        target: Target<'_>,
    ) -> Option<Watch> {
        let tracker = active_tracker(own).map(Cow::into_owned);
        let spans = MethodSpan::wanted();
        if tracker.is_none() && !spans {
            return None;
        }
        if let Some(t) = &tracker {
            t.count_method(method, target);
        }
        let span =
            if spans { MethodSpan::start(method, target, &clients.origin(context)) } else { MethodSpan::default() };
        let note = tracker.as_ref().filter(|t| t.logs()).map(|_| {
            let origin = clients.origin(context);
            let target = match target {
                Target::Resource(t) | Target::Prompt(t) => Some(t.to_owned()),
                Target::None => None,
            };
            let client = origin.client.as_deref().and_then(ClientInfo::label).map(str::to_owned);
            let (session, model) = (origin.session_id.clone(), origin.model.clone());
            Note::Method {
                method: method.as_str(),
                timestamp_ms: 0,
                target,
                is_error: false,
                duration_ms: None,
                session,
                model,
                client,
            }
        });
        let started = (span.is_observed() || note.is_some()).then(Instant::now);
        Some(Watch { tracker, method, span, started, note })
    }

    /// `answer`, unchanged, with the request's span current while it runs and its end
    /// recorded.
    pub(crate) async fn around<T, F>(watch: Option<Watch>, answer: F) -> Result<T, ErrorData>
    where
        F: Future<Output = Result<T, ErrorData>>,
    {
        let Some(watch) = watch else { return answer.await };
        let mut answer = std::pin::pin!(answer);
        let result = std::future::poll_fn(|cx| {
            let _entered = watch.span.enter();
            answer.as_mut().poll(cx)
        })
        .await;
        watch.end(result.as_ref().err());
        result
    }

    fn end(self, error: Option<&ErrorData>) {
        if let (Some(tracker), Some(_)) = (&self.tracker, error) {
            tracker.count_method_error(self.method);
        }
        let duration = self.started.map(|s| s.elapsed()).unwrap_or_default();
        if let (Some(tracker), Some(Note::Method { method, target, session, model, client, .. })) =
            (&self.tracker, self.note)
        {
            let (timestamp_ms, is_error) = (crate::model::meta::now_epoch_ms(), error.is_some());
            let duration_ms = Some(u64::try_from(duration.as_millis()).unwrap_or(u64::MAX));
            tracker.note(Note::Method { method, timestamp_ms, target, is_error, duration_ms, session, model, client });
        }
        self.span.end(error.map(|e| (i64::from(e.code.0), e.message.borrow())), duration);
    }
}

/// What a `completion/complete` is for: the prompt, or the resource template.
pub(crate) fn completion_target(request: &CompleteRequestParams) -> Target<'_> {
    match &request.r#ref {
        Reference::Prompt(p) => Target::Prompt(&p.name),
        Reference::Resource(r) => Target::Resource(&r.uri),
        _ => Target::None,
    }
}

/// A `ServerHandler` of your own, with the requests agents send besides `tools/call` recorded:
/// `resources/read` (with its URI), `prompts/get` (with the prompt's name),
/// `completion/complete`, and `tools/list`, `resources/list`, `resources/templates/list`,
/// `prompts/list` as counts. Each is counted in [`Stats`](crate::Stats) (`methods`,
/// `resources_read`, `prompts_got`) and gets a span per the MCP conventions (features
/// `opentelemetry`, `tracing`: `mcp.method.name`, `mcp.resource.uri`, `gen_ai.prompt.name`),
/// attributed to the request's client and session like a call's. None of them reaches the
/// ingest: its events are tool calls (docs/wire-format.md#capture).
///
/// Every `ServerHandler` method is forwarded to the handler, and every answer is returned as
/// the handler gave it; `tools/call` is forwarded untouched (its calls are recorded by an
/// [`instrument`](super::instrument)ed router or a [`tool_router`](super::tool_router)). A
/// test compares the methods forwarded with rmcp's trait, so an rmcp release that adds one
/// fails the build's tests rather than falling back to rmcp's default in silence.
/// [`ManifestServer`](super::ManifestServer) records these requests itself: serve it as it is,
/// not observed, or they would be counted twice.
///
/// Made by [`observe`]; serve it in place of the handler:
///
/// ```
/// use rmcp::handler::server::router::tool::ToolRouter;
/// use rmcp::model::{
///     ListResourcesResult, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse,
///     ReadResourceResult, Resource, ResourceContents, ServerCapabilities, ServerConfig,
/// };
/// use rmcp::service::RequestContext;
/// use rmcp::{tool, tool_handler, tool_router, ErrorData, RoleServer, ServerHandler};
///
/// #[derive(Clone)]
/// struct Docs {
///     tool_router: ToolRouter<Self>,
/// }
///
/// #[tool_router]
/// impl Docs {
///     #[tool(description = "Name the newest guide.")]
///     fn newest(&self) -> String {
///         "docs://guide".into()
///     }
/// }
///
/// #[tool_handler(router = self.tool_router)]
/// impl ServerHandler for Docs {
///     fn get_info(&self) -> ServerConfig {
///         ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_resources().build())
///     }
///
///     async fn list_resources(
///         &self,
///         _request: Option<PaginatedRequestParams>,
///         _context: RequestContext<RoleServer>,
///     ) -> Result<ListResourcesResult, ErrorData> {
///         Ok(ListResourcesResult::with_all_items(vec![Resource::new("docs://guide", "guide")]))
///     }
///
///     async fn read_resource(
///         &self,
///         request: ReadResourceRequestParams,
///         _context: RequestContext<RoleServer>,
///     ) -> Result<ReadResourceResponse, ErrorData> {
///         let text = ResourceContents::text("Read me first.", request.uri);
///         Ok(ReadResourceResponse::Complete(ReadResourceResult::new(vec![text])))
///     }
/// }
///
/// // The tools instrumented as usual, the handler observed: `observe(server).serve(transport)`.
/// let server = mcpeye::rmcp::observe(Docs {
///     tool_router: mcpeye::rmcp::instrument(Docs::tool_router()),
/// });
/// assert!(server.get_info().capabilities.resources.is_some());
/// assert!(server.inner().tool_router.has_route("mcpeye_request_capability"));
/// ```
#[derive(Clone)]
pub struct Observed<H> {
    inner: H,
    tracker: Option<Tracker>,
}

impl<H: fmt::Debug> fmt::Debug for Observed<H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Observed").field("inner", &self.inner).finish_non_exhaustive()
    }
}

/// `handler` with the requests agents send besides `tools/call` recorded into the
/// process-wide tracker ([`Observed`]; [`Observed::with_tracker`] for another one).
///
/// ```
/// use rmcp::model::{ServerCapabilities, ServerConfig};
/// use rmcp::ServerHandler;
///
/// struct Prompts;
///
/// impl ServerHandler for Prompts {
///     fn get_info(&self) -> ServerConfig {
///         ServerConfig::new(ServerCapabilities::builder().enable_prompts().build())
///     }
/// }
///
/// let observed = mcpeye::rmcp::observe(Prompts);
/// assert!(observed.get_info().capabilities.prompts.is_some());
/// ```
pub fn observe<H: ServerHandler>(handler: H) -> Observed<H> {
    Observed { inner: handler, tracker: None }
}

impl<H> Observed<H> {
    /// Records into `tracker` instead of the process-wide tracker.
    ///
    /// ```
    /// # struct Plain;
    /// # impl rmcp::ServerHandler for Plain {}
    /// let tracker = mcpeye::Tracker::from_fn(|_| {});
    /// let observed = mcpeye::rmcp::observe(Plain).with_tracker(tracker);
    /// # drop(observed);
    /// ```
    pub fn with_tracker(mut self, tracker: Tracker) -> Self {
        self.tracker = Some(tracker);
        self
    }

    /// The handler observed.
    ///
    /// ```
    /// # struct Plain(u8);
    /// # impl rmcp::ServerHandler for Plain {}
    /// assert_eq!(mcpeye::rmcp::observe(Plain(7)).inner().0, 7);
    /// ```
    pub fn inner(&self) -> &H {
        &self.inner
    }

    /// The handler back.
    ///
    /// ```
    /// # struct Plain(u8);
    /// # impl rmcp::ServerHandler for Plain {}
    /// assert_eq!(mcpeye::rmcp::observe(Plain(7)).into_inner().0, 7);
    /// ```
    pub fn into_inner(self) -> H {
        self.inner
    }

    fn watch(&self, context: &RequestContext<RoleServer>, method: Method, target: Target<'_>) -> Option<Watch> {
        Watch::start(self.tracker.as_ref(), Clients::shared(), context, method, target)
    }
}

// Every method of rmcp 3.11's `ServerHandler`, in its order: `every_method_of_rmcp_is_forwarded`
// compares this list with rmcp's source.
#[allow(deprecated)] // MCP logging and resource subscriptions: deprecated by rmcp, still in MCP
impl<H: ServerHandler> ServerHandler for Observed<H> {
    fn ping(&self, context: RequestContext<RoleServer>) -> impl Future<Output = Result<(), ErrorData>> + Send + '_ {
        self.inner.ping(context)
    }

    fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<InitializeResult, ErrorData>> + Send + '_ {
        self.inner.initialize(request, context)
    }

    fn negotiate_initialize(&self, request: &InitializeRequestParams) -> Result<InitializeResult, ErrorData> {
        self.inner.negotiate_initialize(request)
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        self.inner.supported_protocol_versions()
    }

    fn discover(
        &self,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<DiscoverResult, ErrorData>> + Send + '_ {
        self.inner.discover(context)
    }

    fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<CompleteResult, ErrorData>> + Send + '_ {
        let watch = self.watch(&context, Method::CompletionComplete, completion_target(&request));
        Watch::around(watch, self.inner.complete(request, context))
    }

    fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<(), ErrorData>> + Send + '_ {
        self.inner.set_level(request, context)
    }

    fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<GetPromptResponse, ErrorData>> + Send + '_ {
        let watch = self.watch(&context, Method::PromptsGet, Target::Prompt(&request.name));
        Watch::around(watch, self.inner.get_prompt(request, context))
    }

    fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ListPromptsResult, ErrorData>> + Send + '_ {
        let watch = self.watch(&context, Method::PromptsList, Target::None);
        Watch::around(watch, self.inner.list_prompts(request, context))
    }

    fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ListResourcesResult, ErrorData>> + Send + '_ {
        let watch = self.watch(&context, Method::ResourcesList, Target::None);
        Watch::around(watch, self.inner.list_resources(request, context))
    }

    fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ListResourceTemplatesResult, ErrorData>> + Send + '_ {
        let watch = self.watch(&context, Method::ResourceTemplatesList, Target::None);
        Watch::around(watch, self.inner.list_resource_templates(request, context))
    }

    fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ReadResourceResponse, ErrorData>> + Send + '_ {
        let watch = self.watch(&context, Method::ResourcesRead, Target::Resource(&request.uri));
        Watch::around(watch, self.inner.read_resource(request, context))
    }

    fn accepted_subscription_filter(&self, requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        self.inner.accepted_subscription_filter(requested)
    }

    fn listen(&self, context: SubscriptionContext) -> impl Future<Output = Result<(), ErrorData>> + Send + '_ {
        self.inner.listen(context)
    }

    fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<(), ErrorData>> + Send + '_ {
        self.inner.subscribe(request, context)
    }

    fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<(), ErrorData>> + Send + '_ {
        self.inner.unsubscribe(request, context)
    }

    fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<CallToolResponse, ErrorData>> + Send + '_ {
        // Forwarded as is: the future rmcp gets is the handler's own, nothing added to a call.
        self.inner.call_tool(request, context)
    }

    fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ListToolsResult, ErrorData>> + Send + '_ {
        let watch = self.watch(&context, Method::ToolsList, Target::None);
        Watch::around(watch, self.inner.list_tools(request, context))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.inner.get_tool(name)
    }

    fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<CustomResult, ErrorData>> + Send + '_ {
        self.inner.on_custom_request(request, context)
    }

    fn on_cancelled(
        &self,
        notification: CancelledNotificationParam,
        context: NotificationContext<RoleServer>,
    ) -> impl Future<Output = ()> + Send + '_ {
        self.inner.on_cancelled(notification, context)
    }

    fn on_progress(
        &self,
        notification: ProgressNotificationParam,
        context: NotificationContext<RoleServer>,
    ) -> impl Future<Output = ()> + Send + '_ {
        self.inner.on_progress(notification, context)
    }

    fn on_initialized(&self, context: NotificationContext<RoleServer>) -> impl Future<Output = ()> + Send + '_ {
        self.inner.on_initialized(context)
    }

    fn on_roots_list_changed(&self, context: NotificationContext<RoleServer>) -> impl Future<Output = ()> + Send + '_ {
        self.inner.on_roots_list_changed(context)
    }

    fn on_custom_notification(
        &self,
        notification: CustomNotification,
        context: NotificationContext<RoleServer>,
    ) -> impl Future<Output = ()> + Send + '_ {
        self.inner.on_custom_notification(notification, context)
    }

    fn get_info(&self) -> ServerConfig {
        self.inner.get_info()
    }

    fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<GetTaskResult, ErrorData>> + Send + '_ {
        self.inner.get_task(request, context)
    }

    fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<(), ErrorData>> + Send + '_ {
        self.inner.update_task(request, context)
    }

    fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<(), ErrorData>> + Send + '_ {
        self.inner.cancel_task(request, context)
    }

    fn list_skills(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ListSkillsResult, ErrorData>> + Send + '_ {
        self.inner.list_skills(request, context)
    }

    fn get_skill(
        &self,
        request: GetSkillRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<GetSkillResult, ErrorData>> + Send + '_ {
        self.inner.get_skill(request, context)
    }

    fn read_resource_directory(
        &self,
        request: ReadResourceDirectoryRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ReadResourceDirectoryResult, ErrorData>> + Send + '_ {
        self.inner.read_resource_directory(request, context)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::path::PathBuf;

    /// The `fn` names in `text`, between `start` and the first `end` after it.
    fn fns_between(text: &str, start: &str, end: &str) -> BTreeSet<String> {
        let from = text.find(start).unwrap_or_else(|| panic!("{start:?} not found"));
        let body = &text[from..];
        let body = &body[..body.find(end).unwrap_or(body.len())];
        body.split("fn ")
            .skip(1)
            .filter_map(|rest| {
                let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                (!name.is_empty() && rest[name.len()..].trim_start().starts_with('(')).then_some(name)
            })
            .collect()
    }

    /// rmcp's `handler/server.rs`, of the version in the workspace's lock file.
    fn rmcp_server_source() -> String {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
        let lock = std::fs::read_to_string(root.join("Cargo.lock")).expect("the workspace's Cargo.lock");
        let needle = "name = \"rmcp\"\nversion = \"";
        let at = lock.find(needle).expect("rmcp in Cargo.lock") + needle.len();
        let version = &lock[at..at + lock[at..].find('"').expect("a version")];
        let home = std::env::var_os("CARGO_HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cargo"));
        let registry = home.join("registry").join("src");
        for index in std::fs::read_dir(&registry).expect("cargo's registry sources").flatten() {
            let file = index.path().join(format!("rmcp-{version}")).join("src/handler/server.rs");
            if let Ok(text) = std::fs::read_to_string(&file) {
                return text;
            }
        }
        panic!("rmcp {version}'s source is not under {}", registry.display());
    }

    /// A method `Observed` does not forward would answer with rmcp's default (prompts,
    /// resources, tasks… gone without an error): every method of rmcp's trait must be here.
    #[test]
    fn every_method_of_rmcp_is_forwarded() {
        let rmcp = fns_between(&rmcp_server_source(), "macro_rules! server_handler_methods", "\n}\n");
        let ours = fns_between(include_str!("observe.rs"), "ServerHandler for Observed<H> {", "\n}\n");
        assert!(rmcp.len() >= 30, "rmcp's methods were not read: {rmcp:?}");
        assert_eq!(ours, rmcp, "Observed must forward exactly rmcp's ServerHandler methods");
    }
}
