//! The tools the tasks extension's scenarios (`tasks-*`, `io.modelcontextprotocol/tasks`) call,
//! and whether each runs as a task. The server decides (the client only declares the
//! extension): [`task_support`] says how, and `mcpeye::rmcp::call_as_task` runs the call as a
//! task of rmcp's `TaskManager`, recorded once from its creation to its end.

use mcpeye::{Context, ElicitationRequest};
use serde_json::{json, Value};
use std::time::Duration;

/// How a tool is called by a client that declared the tasks extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskSupport {
    /// Never a task.
    Never,
    /// A task for a client that declared the extension, a plain call for any other.
    Optional,
    /// Only as a task: a client that did not declare the extension is refused (-32021).
    Required,
    /// Only as a task, once the client answered the tool's first question (MCP 2026-07-28's
    /// `input_required`), so the question is asked before the task exists.
    AfterInput,
}

/// How `tool` is called by a client that declared the tasks extension.
pub fn task_support(tool: &str) -> TaskSupport {
    match tool {
        // The tools that ask work without a task too: a handshake-era client is asked directly,
        // a 2026-07-28 one through `input_required`.
        "slow_compute" | "protocol_error_job" | "confirm_delete" | "multi_input" => TaskSupport::Optional,
        "failing_job" => TaskSupport::Required,
        "test_tool_with_task" => TaskSupport::AfterInput,
        _ => TaskSupport::Never,
    }
}

/// Greets someone (never a task).
#[mcpeye::tool(read_only)]
pub fn greet(
    /// Who to greet.
    name: String,
) -> String {
    format!("Hello, {name}!")
}

/// Works for `seconds` (default 1), then answers; a `tasks/cancel` stops it.
#[mcpeye::tool(read_only)]
pub async fn slow_compute(
    /// How long to work, in seconds.
    seconds: Option<f64>,
    /// A label repeated in the answer.
    label: Option<String>,
) -> String {
    let seconds = seconds.unwrap_or(1.0).clamp(0.0, 3600.0);
    tokio::time::sleep(Duration::from_secs_f64(seconds)).await;
    format!("slow_compute({}) done after {seconds}s", label.as_deref().unwrap_or("compute"))
}

/// Fails after a second, as a tool error (a task that completes with `isError`).
#[mcpeye::tool]
pub async fn failing_job() -> Result<String, String> {
    tokio::time::sleep(Duration::from_secs(1)).await;
    Err("failing_job: intentional tool execution error".to_owned())
}

/// Panics (a task that fails with a JSON-RPC error).
#[mcpeye::tool]
pub async fn protocol_error_job() -> String {
    tokio::time::sleep(Duration::from_millis(200)).await;
    panic!("protocol_error_job: intentional protocol-level failure")
}

/// Asks the user to confirm deleting a file.
#[mcpeye::tool(destructive)]
pub async fn confirm_delete(
    /// The file to delete.
    filename: Option<String>,
    ctx: Context,
) -> Result<String, String> {
    let filename = filename.unwrap_or_else(|| "file.txt".to_owned());
    let schema = json!({
        "type": "object",
        "properties": {"confirm": {"type": "boolean", "description": "Delete it?"}},
        "required": ["confirm"]
    });
    let answer =
        ctx.elicit(ElicitationRequest::form(format!("Delete {filename}?"), schema)).await.map_err(|e| e.to_string())?;
    let confirmed = answer.content.as_ref().and_then(|c| c.get("confirm")).and_then(Value::as_bool).unwrap_or(false);
    Ok(format!("confirm_delete({filename}): confirmed = {confirmed}"))
}

/// Asks the user for two values at once.
#[mcpeye::tool]
pub async fn multi_input(ctx: Context) -> Result<String, String> {
    let ask = |which: &str| {
        let schema = json!({"type": "object", "properties": {"value": {"type": "string"}}, "required": ["value"]});
        ctx.elicit(ElicitationRequest::form(format!("Provide value {which}"), schema))
    };
    let (a, b) = tokio::join!(ask("A"), ask("B"));
    let value = |answer: mcpeye::ElicitationResponse| {
        let content = answer.content.unwrap_or_default();
        content.get("value").and_then(Value::as_str).unwrap_or("(none)").to_owned()
    };
    Ok(format!(
        "multi_input: a = {}, b = {}",
        value(a.map_err(|e| e.to_string())?),
        value(b.map_err(|e| e.to_string())?)
    ))
}

/// Asks the user's name, then greets them from a task.
#[mcpeye::tool]
pub async fn test_tool_with_task(ctx: Context) -> Result<String, String> {
    let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]});
    let answer = ctx.elicit(ElicitationRequest::form("What is your name?", schema)).await.map_err(|e| e.to_string())?;
    let content = answer.content.unwrap_or_default();
    let name = content.get("name").and_then(Value::as_str).unwrap_or("friend").to_owned();
    tokio::time::sleep(Duration::from_millis(200)).await;
    Ok(format!("Hello, {name}! (async)"))
}
