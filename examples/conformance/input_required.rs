//! The tools and the prompt of the suite's `input-required-result-*` scenarios (MCP 2026-07-28,
//! SEP-2322). The tools are ordinary `#[mcpeye::tool]` handlers that ask through their
//! `Context`: the same code asks a handshake-era client directly and answers a 2026-07-28 one
//! with `input_required` rounds.

use mcpeye::{ClientError, Context, ElicitationRequest, SamplingRequest};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{GetPromptRequestParams, GetPromptResponse, GetPromptResult, InputRequiredResult};
use rmcp::ErrorData;
use serde_json::{json, Value};
use std::sync::Arc;

fn form(message: &str, field: &str, kind: &str) -> ElicitationRequest {
    let schema = json!({"type": "object", "properties": {field: {"type": kind}}, "required": [field]});
    ElicitationRequest::form(message, schema)
}

fn field(content: &Option<serde_json::Map<String, Value>>, name: &str) -> String {
    content
        .as_ref()
        .and_then(|c| c.get(name))
        .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
        .unwrap_or_default()
}

/// Asks the user's name (one elicitation, key `user_name`).
#[mcpeye::tool]
async fn test_input_required_result_elicitation(ctx: Context) -> Result<String, ClientError> {
    let answer = ctx.elicit(form("What is your name?", "name", "string").key("user_name")).await?;
    Ok(format!("Hello, {}!", field(&answer.content, "name")))
}

/// Asks the client's model a question (one sampling request).
#[mcpeye::tool]
async fn test_input_required_result_sampling(ctx: Context) -> Result<String, ClientError> {
    let question = SamplingRequest::new(100).user("What is the capital of France?").key("capital_question");
    let answer = ctx.create_message(question).await?;
    Ok(format!("The model said: {}", answer.text().unwrap_or_default()))
}

/// Asks the client for its roots.
#[mcpeye::tool]
async fn test_input_required_result_list_roots(ctx: Context) -> Result<String, ClientError> {
    let roots = ctx.list_roots().await?;
    Ok(format!("Roots: {}", roots.iter().map(|r| r.uri.as_str()).collect::<Vec<_>>().join(", ")))
}

/// Asks for a confirmation; the answer arrives with the verified state of the first round.
#[mcpeye::tool]
async fn test_input_required_result_request_state(ctx: Context) -> Result<String, ClientError> {
    confirm(&ctx).await
}

/// Like `test_input_required_result_request_state`: a tampered state is refused before it runs.
#[mcpeye::tool]
async fn test_input_required_result_tampered_state(ctx: Context) -> Result<String, ClientError> {
    confirm(&ctx).await
}

async fn confirm(ctx: &Context) -> Result<String, ClientError> {
    let answer = ctx.elicit(form("Please confirm", "ok", "boolean").key("confirm")).await?;
    let state = match ctx.round() {
        Some(round) if round > 1 => format!("state-ok (round {round})"),
        _ => "answered without a previous round".to_owned(),
    };
    Ok(format!("{state}: action={}, ok={}", answer.action.as_str(), field(&answer.content, "ok")))
}

/// Asks the user, the model and the client's roots at once (one round, three questions).
#[mcpeye::tool]
async fn test_input_required_result_multiple_inputs(ctx: Context) -> Result<String, ClientError> {
    let (name, greeting, roots) = tokio::join!(
        ctx.elicit(form("What is your name?", "name", "string").key("user_name")),
        ctx.create_message(SamplingRequest::new(50).user("Generate a greeting").key("greeting")),
        ctx.list_roots(),
    );
    let (name, greeting, roots) = (name?, greeting?, roots?);
    Ok(format!("{} {}; {} root(s)", greeting.text().unwrap_or_default(), field(&name.content, "name"), roots.len()))
}

/// Asks two questions, one after the other (two rounds of questions, then the answer).
#[mcpeye::tool]
async fn test_input_required_result_multi_round(ctx: Context) -> Result<String, ClientError> {
    let name = ctx.elicit(form("Step 1: What is your name?", "name", "string").key("step1")).await?;
    let color = ctx.elicit(form("Step 2: What is your favorite color?", "color", "string").key("step2")).await?;
    Ok(format!("{} likes {}", field(&name.content, "name"), field(&color.content, "color")))
}

/// Asks only what the client declared it can answer (here, the user and the model).
#[mcpeye::tool]
async fn test_input_required_result_capabilities(ctx: Context) -> Result<String, ClientError> {
    let (name, answer) = tokio::join!(
        ctx.elicit(form("What is your name?", "name", "string").key("user_name")),
        ctx.create_message(SamplingRequest::new(50).user("Say hello").key("hello")),
    );
    let asked = |r: Result<String, ClientError>| match r {
        Ok(text) => Ok(Some(text)),
        Err(ClientError::Unsupported(_)) => Ok(None),
        Err(e) => Err(e),
    };
    let name = asked(name.map(|n| field(&n.content, "name")))?;
    let answer = asked(answer.map(|a| a.text().unwrap_or_default()))?;
    Ok(format!("name: {name:?}, model: {answer:?}"))
}

/// The suite's input-required tools, as a router to add to the server's.
pub fn tool_router<S: Send + Sync + 'static>() -> ToolRouter<S> {
    mcpeye::rmcp::tool_router(Arc::new(mcpeye::tools![
        test_input_required_result_elicitation,
        test_input_required_result_sampling,
        test_input_required_result_list_roots,
        test_input_required_result_request_state,
        test_input_required_result_tampered_state,
        test_input_required_result_multiple_inputs,
        test_input_required_result_multi_round,
        test_input_required_result_capabilities,
    ]))
}

/// The prompt of `input-required-result-non-tool-request`.
pub const PROMPT: &str = "test_input_required_result_prompt";

/// The prompt's listing.
pub fn prompt() -> rmcp::model::Prompt {
    rmcp::model::Prompt::new(PROMPT, Some("A prompt that asks the user for its context first"), None)
}

/// `prompts/get` of [`PROMPT`]: asks the user for a context (`input_required`), then answers
/// with a prompt that uses it; `None` for other prompts.
pub fn get_prompt(request: &GetPromptRequestParams) -> Option<Result<GetPromptResponse, ErrorData>> {
    if request.name != PROMPT {
        return None;
    }
    let answer = request.input_responses.as_ref().and_then(|r| r.get("user_context"));
    let context = answer
        .filter(|a| a.get("action").and_then(Value::as_str) == Some("accept"))
        .and_then(|a| a.pointer("/content/context"))
        .and_then(Value::as_str);
    let response = match context {
        Some(context) => {
            let text = format!("Use this context: {context}");
            serde_json::from_value::<GetPromptResult>(json!({
                "resultType": "complete",
                "messages": [{"role": "user", "content": {"type": "text", "text": text}}]
            }))
            .map(GetPromptResponse::Complete)
        }
        None => serde_json::from_value(json!({
            "user_context": {"method": "elicitation/create", "params": {
                "message": "What context should the prompt use?",
                "requestedSchema": {"type": "object", "properties": {"context": {"type": "string"}}, "required": ["context"]}
            }}
        }))
        .map(|requests| GetPromptResponse::InputRequired(InputRequiredResult::from_input_requests(requests))),
    };
    Some(response.map_err(|e| ErrorData::internal_error(e.to_string(), None)))
}
