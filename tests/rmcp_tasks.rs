//! A `tools/call` run as a task of rmcp's `TaskManager` (`mcpeye::rmcp::call_as_task`, MCP's
//! tasks extension) through rmcp's own client: the client polls `tasks/get`, answers the tool's
//! question with `tasks/update` or stops it with `tasks/cancel`, and the call is recorded once,
//! when the task ends, with its outcome.

mod common;

use common::rmcp::*;
use mcpeye::{CallOutcome, Context, ElicitationRequest};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, ClientCapabilities, ClientConfig, GetTaskParams,
    GetTaskResult, Implementation, ServerCapabilities, ServerConfig, TaskPayload, TaskStatus, UpdateTaskParams,
};
use rmcp::service::{RequestContext, RoleClient, RunningService};
use rmcp::task_manager::TaskManager;
use rmcp::{tool_handler, ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;

/// Waits until the task is cancelled.
#[mcpeye::tool]
async fn forever() -> &'static str {
    std::future::pending::<()>().await;
    "never"
}

/// Asks the user for a colour.
#[mcpeye::tool]
async fn favourite_colour(ctx: Context) -> Result<String, String> {
    let schema = json!({"type": "object", "properties": {"colour": {"type": "string"}}, "required": ["colour"]});
    let answer =
        ctx.elicit(ElicitationRequest::form("Your favourite colour?", schema)).await.map_err(|e| e.to_string())?;
    let colour =
        answer.content.unwrap_or_default().get("colour").and_then(Value::as_str).unwrap_or_default().to_owned();
    Ok(format!("you like {colour}"))
}

/// Fails as a tool error.
#[mcpeye::tool]
async fn refuse() -> Result<String, String> {
    Err("no".to_owned())
}

#[derive(Clone)]
struct Tasks {
    tool_router: ToolRouter<Self>,
    tasks: TaskManager,
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Tasks {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_tasks().build())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if context.client_capabilities().is_some_and(|c| c.supports_tasks()) {
            return Ok(mcpeye::rmcp::call_as_task(&self.tasks, &self.tool_router, self.clone(), request, context));
        }
        self.tool_router.call(ToolCallContext::new(self, request, context)).await
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        Ok(GetTaskResult::new(self.tasks.get_task(&request.task_id)?))
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.tasks.update_task(&request.task_id, request.input_responses)
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.tasks.cancel_task(&request.task_id)
    }
}

/// The server, and rmcp's client declaring the tasks extension and elicitation.
async fn connect() -> (RunningService<RoleClient, ClientConfig>, Records) {
    let (tracker, records) = recording_tracker();
    let manifest = mcpeye::Manifest::builder()
        .tools(mcpeye::tool_defs![forever, favourite_colour, refuse])
        .tracker(tracker)
        .build();
    let server = Tasks { tool_router: mcpeye::rmcp::tool_router(Arc::new(manifest)), tasks: TaskManager::new() };
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let capabilities = ClientCapabilities::builder().enable_elicitation().enable_tasks().build();
    let client = ClientConfig::new(capabilities, Implementation::new("poller", "2.0")).serve(client_io).await;
    (client.expect("the client connects"), records)
}

/// Calls `tool` and returns the id of the task it made.
async fn start(client: &RunningService<RoleClient, ClientConfig>, tool: &'static str) -> String {
    match client.call_tool_once(call(tool, json!({}))).await.expect("tools/call") {
        CallToolResponse::Task(created) => created.task.task_id,
        other => panic!("{tool} did not make a task: {other:?}"),
    }
}

/// Polls `tasks/get` until the task's status is `until` or terminal.
async fn poll(client: &RunningService<RoleClient, ClientConfig>, id: &str, until: TaskStatus) -> GetTaskResult {
    for _ in 0..500 {
        let got = client.get_task(GetTaskParams::new(id)).await.expect("tasks/get");
        let status = got.task.task.status;
        if status == until || matches!(status, TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled) {
            return got;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("task {id} never reached {until:?}");
}

#[tokio::test]
async fn a_cancelled_task_is_one_call_recorded_as_cancelled() {
    let (client, records) = connect().await;
    let id = start(&client, "forever").await;
    assert_eq!(poll(&client, &id, TaskStatus::Working).await.task.task.status, TaskStatus::Working);
    assert!(take(&records).is_empty(), "nothing is recorded while the task runs");
    client.cancel_task(CancelTaskParams::new(&id)).await.expect("tasks/cancel");
    assert_eq!(poll(&client, &id, TaskStatus::Cancelled).await.task.task.status, TaskStatus::Cancelled);
    let recs = take(&records);
    assert_eq!(recs.len(), 1, "one record for the whole task");
    assert!(matches!(recs[0].outcome, CallOutcome::Cancelled { .. }), "{:?}", recs[0].outcome);
    assert_eq!(recs[0].client.as_deref().and_then(|c| c.label()), Some("poller/2.0"));
}

#[tokio::test]
async fn a_tools_question_is_the_tasks_input_request_and_its_answer_resumes_it() {
    let (client, records) = connect().await;
    let id = start(&client, "favourite_colour").await;
    let asking = poll(&client, &id, TaskStatus::InputRequired).await;
    let TaskPayload::InputRequired { input_requests } = &asking.task.payload else {
        panic!("{:?}", asking.task.payload)
    };
    let (key, request) = input_requests.iter().next().expect("one input request");
    assert_eq!(serde_json::to_value(request).unwrap()["params"]["message"], "Your favourite colour?");
    let responses = serde_json::from_value(json!({key: {"action": "accept", "content": {"colour": "teal"}}})).unwrap();
    client.update_task(UpdateTaskParams::new(&id, responses)).await.expect("tasks/update");
    let done = poll(&client, &id, TaskStatus::Completed).await;
    let TaskPayload::Completed { result } = &done.task.payload else { panic!("{:?}", done.task.payload) };
    assert_eq!(result["content"][0]["text"], "you like teal");
    let recs = take(&records);
    assert_eq!(recs.len(), 1, "the question and its answer are one call");
    assert_eq!(recs[0].tool_name, "favourite_colour");
    assert!(matches!(recs[0].outcome, CallOutcome::Success { .. }), "{:?}", recs[0].outcome);
}

#[tokio::test]
async fn a_tool_error_completes_the_task_with_is_error_and_is_recorded_as_an_error() {
    let (client, records) = connect().await;
    let id = start(&client, "refuse").await;
    let done = poll(&client, &id, TaskStatus::Completed).await;
    let TaskPayload::Completed { result } = &done.task.payload else { panic!("{:?}", done.task.payload) };
    assert_eq!(result["isError"], true);
    let recs = take(&records);
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0].error_message(), Some("no"));
}
