//! [`call_tool`]: rmcp's `tools/call` through a `ToolRouter`, with the calls of tools the router
//! does not have recorded (they never reach a route, so [`instrument`](super::instrument) and
//! [`tool_router`](super::tool_router) cannot see them).

use super::client::Clients;
use crate::dispatch::{self, CallError};
use crate::tracker::{active_tracker, Tracker};
use ::rmcp::handler::server::router::tool::ToolRouter;
use ::rmcp::handler::server::tool::ToolCallContext;
use ::rmcp::model::{CallToolRequestParams, CallToolResponse};
use ::rmcp::service::RequestContext;
use ::rmcp::{ErrorData, RoleServer};

/// Answers a `tools/call` through `router`, exactly as rmcp's `#[tool_handler]` does, and
/// records a call of a tool the router does not have (or has disabled) into the process-wide
/// tracker: once, with its client and intent, as a failure of reason `unknown_tool`. rmcp
/// answers it with JSON-RPC invalid params (`-32602`), as MCP specifies.
///
/// The calls of the router's own tools are recorded by its routes ([`instrument`](super::instrument),
/// [`tool_router`](super::tool_router)), not here. Write it as the server's `call_tool`, which
/// `#[tool_handler]` then leaves alone:
///
/// ```
/// use rmcp::handler::server::router::tool::ToolRouter;
/// use rmcp::model::{CallToolRequestParams, CallToolResponse};
/// use rmcp::service::RequestContext;
/// use rmcp::{tool, tool_handler, tool_router, ErrorData, RoleServer, ServerHandler};
///
/// #[derive(Clone)]
/// struct Clock {
///     tool_router: ToolRouter<Self>,
/// }
///
/// #[tool_router]
/// impl Clock {
///     #[tool(description = "Tell the time.")]
///     fn now(&self) -> String {
///         "noon".to_owned()
///     }
/// }
///
/// #[tool_handler(router = self.tool_router)]
/// impl ServerHandler for Clock {
///     async fn call_tool(
///         &self,
///         request: CallToolRequestParams,
///         context: RequestContext<RoleServer>,
///     ) -> Result<CallToolResponse, ErrorData> {
///         mcpeye::rmcp::call_tool(&self.tool_router, self, request, context).await
///     }
/// }
///
/// let server = Clock { tool_router: mcpeye::rmcp::instrument(Clock::tool_router()) };
/// assert!(server.tool_router.has_route("now"));
/// ```
pub async fn call_tool<S: Send + Sync + 'static>(
    router: &ToolRouter<S>,
    service: &S,
    request: CallToolRequestParams,
    context: RequestContext<RoleServer>,
) -> Result<CallToolResponse, ErrorData> {
    answer(router, None, ToolCallContext::new(service, request, context)).await
}

/// Like [`call_tool`], recording into `tracker` (the one given to
/// [`Instrument::tracker`](super::Instrument::tracker), or to the manifest of
/// [`tool_router`](super::tool_router)) instead of the process-wide tracker.
///
/// ```
/// use mcpeye::Tracker;
/// use rmcp::handler::server::router::tool::ToolRouter;
/// use rmcp::model::{CallToolRequestParams, CallToolResponse};
/// use rmcp::service::RequestContext;
/// use rmcp::{tool, tool_handler, tool_router, ErrorData, RoleServer, ServerHandler};
///
/// #[derive(Clone)]
/// struct Clock {
///     tool_router: ToolRouter<Self>,
///     tracker: Tracker,
/// }
///
/// #[tool_router]
/// impl Clock {
///     fn new(tracker: Tracker) -> Self {
///         let tool_router = mcpeye::rmcp::Instrument::new().tracker(tracker.clone()).apply(Self::tool_router());
///         Self { tool_router, tracker }
///     }
///
///     #[tool(description = "Tell the time.")]
///     fn now(&self) -> String {
///         "noon".to_owned()
///     }
/// }
///
/// #[tool_handler(router = self.tool_router)]
/// impl ServerHandler for Clock {
///     async fn call_tool(
///         &self,
///         request: CallToolRequestParams,
///         context: RequestContext<RoleServer>,
///     ) -> Result<CallToolResponse, ErrorData> {
///         mcpeye::rmcp::call_tool_with(&self.tool_router, &self.tracker, self, request, context).await
///     }
/// }
///
/// let server = Clock::new(Tracker::from_fn(|record| eprintln!("{}", record.tool_name)));
/// assert!(server.tool_router.has_route("now"));
/// ```
pub async fn call_tool_with<S: Send + Sync + 'static>(
    router: &ToolRouter<S>,
    tracker: &Tracker,
    service: &S,
    request: CallToolRequestParams,
    context: RequestContext<RoleServer>,
) -> Result<CallToolResponse, ErrorData> {
    answer(router, Some(tracker), ToolCallContext::new(service, request, context)).await
}

async fn answer<S: Send + Sync + 'static>(
    router: &ToolRouter<S>,
    tracker: Option<&Tracker>,
    mut context: ToolCallContext<'_, S>,
) -> Result<CallToolResponse, ErrorData> {
    if !router.has_route(&context.name) {
        record_unknown(tracker, &mut context);
    }
    router.call(context).await
}

/// Records the call of a tool `router` cannot answer; rmcp answers it next, with invalid params.
#[cold]
#[inline(never)]
fn record_unknown<S>(own: Option<&Tracker>, context: &mut ToolCallContext<'_, S>) {
    let Some(tracker) = active_tracker(own) else { return };
    let mut origin = Clients::shared().origin(&context.request_context);
    if tracker.identifies() {
        origin.request = Some(std::sync::Arc::new(crate::model::record::RequestExtra::of(&context.request_context)));
    }
    let message = CallError::UnknownTool(context.name.to_string()).to_string();
    let code = Some(-32602);
    dispatch::record_unknown(Some(&tracker), &origin, &context.name, context.arguments.as_mut(), message, code);
}
