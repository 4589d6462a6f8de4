//! [`call_as_task`]: one `tools/call` run as a task of rmcp's [`TaskManager`] (MCP's tasks
//! extension, `io.modelcontextprotocol/tasks`), recorded once, from its creation to its end.

use crate::dispatch::{panic_message, CatchUnwind};
use ::rmcp::handler::server::router::tool::ToolRouter;
use ::rmcp::handler::server::tool::ToolCallContext;
use ::rmcp::model::{CallToolRequestParams, CallToolResponse, CallToolResult, CreateTaskResult, InputRequest};
use ::rmcp::service::RequestContext;
use ::rmcp::task_manager::{TaskContext, TaskExit, TaskManager, TaskOptions};
use ::rmcp::{ErrorData, RoleServer};
use std::future::Future;
use std::pin::{pin, Pin};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Runs `request` through `router` as a task of `tasks` and answers with the task's handle
/// (`resultType: "task"`): the client polls `tasks/get` for its state and result, answers the
/// tool's questions with `tasks/update` and stops it with `tasks/cancel` (serve those three from
/// your `ServerHandler` with the same [`TaskManager`]).
///
/// The call is the router's: a route of [`tool_router`](super::tool_router) or an
/// [instrumented](super::instrument) route records it exactly once, when the task ends, with its
/// whole duration and its outcome: a tool error is a completed task whose result says
/// `isError`, a `tasks/cancel` cancels the call (recorded as cancelled, the task `cancelled`),
/// and a JSON-RPC error or a panic fails the task. A handler's
/// [`Context::elicit`](crate::Context::elicit) and
/// [`Context::create_message`](crate::Context::create_message) become the task's `inputRequests`,
/// answered through `tasks/update`. Only call it for a client that declared the tasks
/// extension (`context.client_capabilities()`…`supports_tasks()`): rmcp refuses a task handle
/// for any other. The task has rmcp's default options (a TTL of 5 minutes): a call still running
/// when rmcp expires its task, or when the server shuts down, is dropped without a record.
///
/// ```no_run
/// use rmcp::handler::server::router::tool::ToolRouter;
/// use rmcp::model::{CallToolRequestParams, CallToolResponse, ServerCapabilities, ServerConfig};
/// use rmcp::service::RequestContext;
/// use rmcp::task_manager::TaskManager;
/// use rmcp::{ErrorData, RoleServer, ServerHandler};
///
/// #[derive(Clone)]
/// struct Server {
///     tool_router: ToolRouter<Self>,
///     tasks: TaskManager,
/// }
///
/// impl ServerHandler for Server {
///     fn get_info(&self) -> ServerConfig {
///         ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_tasks().build())
///     }
///
///     async fn call_tool(
///         &self,
///         request: CallToolRequestParams,
///         context: RequestContext<RoleServer>,
///     ) -> Result<CallToolResponse, ErrorData> {
///         if context.client_capabilities().is_some_and(|c| c.supports_tasks()) {
///             return Ok(mcpeye::rmcp::call_as_task(&self.tasks, &self.tool_router, self.clone(), request, context));
///         }
///         let call = rmcp::handler::server::tool::ToolCallContext::new(self, request, context);
///         self.tool_router.call(call).await
///     }
///     // … and `get_task`, `update_task`, `cancel_task` answered by `self.tasks`.
/// }
/// ```
pub fn call_as_task<S: Clone + Send + Sync + 'static>(
    tasks: &TaskManager,
    router: &ToolRouter<S>,
    service: S,
    request: CallToolRequestParams,
    mut context: RequestContext<RoleServer>,
) -> CallToolResponse {
    let router = router.clone();
    // The task outlives its `tools/call`: its cancellation is `tasks/cancel`, not the request's.
    let stop = CancellationToken::new();
    context.ct = stop.clone();
    let task = tasks.spawn(TaskOptions::default(), move |task| {
        context.extensions.insert(TaskInput { task: task.clone(), keys: Arc::default() });
        Box::pin(async move {
            let call = router.call(ToolCallContext::new(&service, request, context));
            let ran = {
                let mut call = pin!(CatchUnwind(pin!(call)));
                tokio::select! {
                    ran = &mut call => ran,
                    () = task.cancelled() => {
                        // The call sees the cancellation, ends and is recorded as cancelled.
                        stop.cancel();
                        call.await
                    }
                }
            };
            match ran {
                // A call that failed once cancelled was stopped by it (a question to the client
                // ends with the cancellation, before the call sees it).
                Ok(Ok(CallToolResponse::Complete(result)))
                    if task.is_cancel_requested() && result.is_error == Some(true) =>
                {
                    drop(result);
                    Err(TaskExit::Cancelled)
                }
                Ok(Ok(CallToolResponse::Complete(result))) => Ok(result),
                Ok(Ok(_)) => Err(TaskExit::Error(ErrorData::internal_error(
                    "a task's tool answered with something other than a result",
                    None,
                ))),
                Ok(Err(e)) => Err(TaskExit::Error(e)),
                // The task fails instead of never ending.
                Err(payload) => Err(TaskExit::Error(ErrorData::internal_error(panic_message(&*payload), None))),
            }
        }) as Pin<Box<dyn Future<Output = Result<CallToolResult, TaskExit>> + Send>>
    });
    CallToolResponse::Task(CreateTaskResult::new(task))
}

/// What a call running as a task asks the client through: the task's `inputRequests`, each
/// under a key of its own (keys may not be reused within a task).
#[derive(Clone)]
pub(crate) struct TaskInput {
    task: TaskContext,
    keys: Arc<AtomicU64>,
}

impl TaskInput {
    /// The task's input request `request`, as the client's answer (its JSON) once `tasks/update`
    /// delivers it; `None` when the task was cancelled first.
    pub(crate) async fn ask(&self, kind: &str, request: InputRequest) -> Option<serde_json::Value> {
        let key = format!("{kind}-{}", self.keys.fetch_add(1, Ordering::Relaxed) + 1);
        self.task.request_input(key, request).await.ok()
    }
}
