//! The server the official MCP conformance suite (`@modelcontextprotocol/conformance`) tests:
//! every tool its server scenarios ask for, in MCP 2025-11-25 and 2026-07-28, written with
//! `#[mcpeye::tool]` (rich results, the request context for logs, progress, sampling and
//! elicitation), mounted with `mcpeye::rmcp::tool_router` into an rmcp server that serves the
//! resources, prompts, completion, logging level, `subscriptions/listen` and tasks (the
//! `io.modelcontextprotocol/tasks` extension, through rmcp's `TaskManager`) the other scenarios
//! ask for, over rmcp's Streamable HTTP at `http://127.0.0.1:PORT/mcp`. The server is served
//! as `mcpeye::rmcp::observe(…)`, so its resources, prompts and completions are counted (printed
//! on stderr at exit) and spanned, never sent to the ingest.
//!
//! ```text
//! cargo run -p mcpeye-servers --example conformance_server -- --port 3000
//! scripts/conformance.sh                      # builds this, installs the suite, runs both revisions and tasks
//! ```
//!
//! `--port N` (default 3000; `--port 0` picks a free one): the address is printed on stderr as
//! `listening on http://127.0.0.1:PORT/mcp`. Events go to `MCPEYE_INGEST_URL` as project
//! `MCPEYE_PROJECT_ID` (default `conformance`); SIGTERM or SIGINT delivers them and exits.

#[path = "common/demo_tools.rs"]
#[allow(dead_code)] // only its analytics set-up is used here
mod demo_tools;
#[path = "conformance/input_required.rs"]
mod input_required;
#[path = "common/signal.rs"]
mod signal;
#[path = "conformance/tasks.rs"]
mod tasks;

use mcpeye::rmcp::{call_as_task, tool_router};
use mcpeye::{Args, CallToolResult, Content, Context, ElicitationRequest, LogLevel, ResourceLink, SamplingRequest};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
#[allow(deprecated)] // `SetLevelRequestParams`: MCP logging, deprecated by rmcp ahead of SEP-2577
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, ClientCapabilities, CompleteRequestParams,
    CompleteResult, CompletionInfo, GetPromptRequestParams, GetPromptResponse, GetPromptResult, GetTaskParams,
    GetTaskResult, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, PaginatedRequestParams, Prompt,
    PromptArgument, PromptMessage, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, ResourceTemplate, ServerCapabilities, ServerConfig, SetLevelRequestParams,
    SubscribeRequestParams, SubscriptionFilter, UnsubscribeRequestParams, UpdateTaskParams,
};
use rmcp::service::{RequestContext, SubscriptionContext};
use rmcp::task_manager::TaskManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{tool_handler, ErrorData, RoleServer, ServerHandler};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// A 1×1 red PNG.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
/// An empty 8 kHz mono WAV.
const WAV: &str = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA=";

// ---------------------------------------------------------------------------------------------
// Tools (scenarios `tools-*`, `json-schema-2020-12`, `elicitation-*`, `server-sse-polling`).

/// Returns a simple text response.
#[mcpeye::tool(read_only)]
fn test_simple_text() -> &'static str {
    "This is a simple text response for testing."
}

/// Returns an image (a 1×1 red PNG).
#[mcpeye::tool(read_only)]
fn test_image_content() -> CallToolResult {
    CallToolResult::new(vec![Content::image_base64(PNG, "image/png")])
}

/// Returns a short audio clip (WAV).
#[mcpeye::tool(read_only)]
fn test_audio_content() -> CallToolResult {
    CallToolResult::new(vec![Content::audio_base64(WAV, "audio/wav")])
}

/// Returns an embedded text resource.
#[mcpeye::tool(read_only)]
fn test_embedded_resource() -> CallToolResult {
    CallToolResult::new(vec![Content::resource_text(
        "test://embedded-resource",
        "text/plain",
        "This is an embedded resource content.",
    )])
}

/// Returns text, an image, an embedded resource and a resource link in one result.
#[mcpeye::tool(read_only)]
fn test_multiple_content_types() -> CallToolResult {
    CallToolResult::new(vec![
        Content::text("Multiple content types test:"),
        Content::image_base64(PNG, "image/png"),
        Content::resource_text("test://mixed-content-resource", "application/json", r#"{"test":"data","value":123}"#),
        Content::resource_link(ResourceLink::new("test://static-text", "static-text").mime_type("text/plain")),
    ])
}

/// Sends three log messages while it runs.
#[mcpeye::tool]
async fn test_tool_with_logging(ctx: Context) -> &'static str {
    ctx.log(LogLevel::Info, "Tool execution started");
    tokio::time::sleep(Duration::from_millis(50)).await;
    ctx.log(LogLevel::Info, "Tool processing data");
    tokio::time::sleep(Duration::from_millis(50)).await;
    ctx.log(LogLevel::Info, "Tool execution completed");
    "Tool with logging executed successfully"
}

/// Always fails.
#[mcpeye::tool]
fn test_error_handling() -> Result<String, String> {
    Err("This tool intentionally returns an error for testing".to_owned())
}

/// Reports progress 0, 50 and 100 of 100 while it runs.
#[mcpeye::tool]
async fn test_tool_with_progress(ctx: Context) -> &'static str {
    for step in [0.0, 50.0, 100.0] {
        ctx.progress(step, Some(100.0));
        if step < 100.0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    "Tool with progress executed successfully"
}

/// Asks the client's model to answer a prompt (sampling).
#[mcpeye::tool]
async fn test_sampling(
    /// The prompt to send to the model.
    prompt: String,
    ctx: Context,
) -> Result<String, String> {
    let answer = ctx.create_message(SamplingRequest::new(100).user(prompt)).await.map_err(|e| e.to_string())?;
    Ok(format!("LLM response: {}", answer.text().unwrap_or_default()))
}

/// Asks the user for a username and an e-mail address (elicitation).
#[mcpeye::tool]
async fn test_elicitation(
    /// The message to show the user.
    message: String,
    ctx: Context,
) -> Result<String, String> {
    let schema = json!({
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"}
        },
        "required": ["username", "email"]
    });
    let answer = ctx.elicit(ElicitationRequest::form(message, schema)).await.map_err(|e| e.to_string())?;
    Ok(format!("User response: action={}, content={}", answer.action.as_str(), json!(answer.content)))
}

/// Asks for input with a default value for every primitive type (SEP-1034).
#[mcpeye::tool]
async fn test_elicitation_sep1034_defaults(ctx: Context) -> Result<String, String> {
    let schema = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "description": "User age", "default": 30},
            "score": {"type": "number", "description": "User score", "default": 95.5},
            "status": {
                "type": "string", "description": "User status",
                "enum": ["active", "inactive", "pending"], "default": "active"
            },
            "verified": {"type": "boolean", "description": "Verification status", "default": true}
        }
    });
    elicit_and_report(&ctx, "Please review the defaults", schema).await
}

/// Asks for input with the five kinds of enum (SEP-1330).
#[mcpeye::tool]
async fn test_elicitation_sep1330_enums(ctx: Context) -> Result<String, String> {
    let titled = |values: &[(&str, &str)]| -> Vec<Value> {
        values.iter().map(|(v, t)| json!({"const": v, "title": t})).collect()
    };
    let schema = json!({
        "type": "object",
        "properties": {
            "untitledSingle": {"type": "string", "description": "Pick one", "enum": ["option1", "option2", "option3"]},
            "titledSingle": {
                "type": "string", "description": "Pick one",
                "oneOf": titled(&[("value1", "First Option"), ("value2", "Second Option"), ("value3", "Third Option")])
            },
            "legacyEnum": {
                "type": "string", "description": "Pick one",
                "enum": ["opt1", "opt2", "opt3"], "enumNames": ["Option One", "Option Two", "Option Three"]
            },
            "untitledMulti": {
                "type": "array", "description": "Pick some",
                "items": {"type": "string", "enum": ["option1", "option2", "option3"]}
            },
            "titledMulti": {
                "type": "array", "description": "Pick some",
                "items": {"anyOf": titled(&[("value1", "First Choice"), ("value2", "Second Choice"), ("value3", "Third Choice")])}
            }
        }
    });
    elicit_and_report(&ctx, "Please pick some options", schema).await
}

async fn elicit_and_report(ctx: &Context, message: &str, schema: Value) -> Result<String, String> {
    let answer = ctx.elicit(ElicitationRequest::form(message, schema)).await.map_err(|e| e.to_string())?;
    Ok(format!("Elicitation completed: action={}, content={}", answer.action.as_str(), json!(answer.content)))
}

/// A street address.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[schemars(rename = "address", extend("$anchor" = "address"))]
#[allow(dead_code)] // read by the schema only
struct Address {
    /// Street and number.
    street: String,
    /// City.
    city: String,
}

/// The arguments of `json_schema_2020_12_tool`.
///
/// Its schema also has the composition and conditional keywords of JSON Schema 2020-12
/// (`allOf` with a nested `anyOf`, `if`/`then`/`else`), which MCP 2026-07-28 servers must keep.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend(
    "allOf" = [{"anyOf": [{"required": ["name"]}, {"required": ["address"]}]}],
    "if" = {"properties": {"name": {"const": "admin"}}, "required": ["name"]},
    "then" = {"required": ["address"]},
    "else" = {}
))]
#[allow(dead_code)] // read by the schema only
struct SchemaArgs {
    /// A name.
    name: Option<String>,
    /// An address.
    address: Option<Address>,
}

/// Tool with JSON Schema 2020-12 features.
///
/// `normalize_schema = false` serves the schema as generated, `$schema` and `$defs` kept: exact
/// JSON Schema 2020-12, at the price of clients that refuse `$ref` (see the README).
#[mcpeye::tool(normalize_schema = false, description = "Tool with JSON Schema 2020-12 features")]
fn json_schema_2020_12_tool(Args(args): Args<SchemaArgs>) -> String {
    format!("name: {}", args.name.unwrap_or_default())
}

/// The arguments of `test_custom_header`.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[allow(dead_code)] // read by the schema only
struct HeaderArgs {
    /// A value the client also sends as the `Mcp-Param-Value` header (SEP-2243).
    #[schemars(extend("x-mcp-header" = "Value"))]
    value: String,
}

/// Echoes a value that also travels in a header; rmcp's Streamable HTTP server refuses a call
/// whose header is missing or does not match the body.
#[mcpeye::tool(normalize_schema = false)]
fn test_custom_header(Args(args): Args<HeaderArgs>) -> String {
    format!("value: {}", args.value)
}

/// Answers after a short while (the suite closes its SSE stream mid-call).
#[mcpeye::tool]
async fn test_reconnection() -> &'static str {
    tokio::time::sleep(Duration::from_millis(100)).await;
    "Reconnection test completed"
}

// ---------------------------------------------------------------------------------------------
// Tools of MCP 2026-07-28's `server-stateless` scenario.

/// Asks the client's model for a word; needs the client's `sampling` capability, so a client
/// that did not declare it is refused before the tool runs (-32021, see `required_capability`).
#[mcpeye::tool]
async fn test_missing_capability(ctx: Context) -> Result<String, String> {
    let answer = ctx.create_message(SamplingRequest::new(10).user("Say a word.")).await.map_err(|e| e.to_string())?;
    Ok(format!("LLM response: {}", answer.text().unwrap_or_default()))
}

/// Asks the user for a value while the request's stream is open (in MCP 2026-07-28 a question
/// never travels as a request of its own on that stream).
#[mcpeye::tool]
async fn test_streaming_elicitation(ctx: Context) -> Result<String, String> {
    let schema = json!({"type": "object", "properties": {"value": {"type": "string"}}, "required": ["value"]});
    let answer = ctx.elicit(ElicitationRequest::form("Provide a value", schema)).await.map_err(|e| e.to_string())?;
    Ok(format!("Elicitation completed: action={}", answer.action.as_str()))
}

/// Logs at info; in MCP 2026-07-28 the message is sent only when the request names a level.
#[mcpeye::tool]
fn test_logging_tool(ctx: Context) -> &'static str {
    ctx.log(LogLevel::Info, "logLevel was requested");
    "Logging tool completed"
}

// ---------------------------------------------------------------------------------------------
// The rmcp server: the manifest's tools plus resources, prompts, completion, logging, subscriptions and tasks.

#[derive(Clone)]
struct Conformance {
    tool_router: ToolRouter<Self>,
    /// The tasks of every request (clones share them).
    tasks: TaskManager,
}

/// What `tool` cannot run without: a client capability that, undeclared, makes the call a
/// `MissingRequiredClientCapability` error (-32021), as MCP 2026-07-28 says.
#[allow(deprecated)] // sampling: deprecated by rmcp ahead of SEP-2577, still in MCP 2026-07-28
fn required_capability(tool: &str) -> Option<ClientCapabilities> {
    use tasks::TaskSupport::{AfterInput, Required};
    match tool {
        "test_missing_capability" => Some(ClientCapabilities::builder().enable_sampling().build()),
        _ if matches!(tasks::task_support(tool), Required | AfterInput) => {
            Some(ClientCapabilities::builder().enable_tasks().build())
        }
        _ => None,
    }
}

fn resource(uri: &str, name: &str, description: &str, mime: &str) -> Resource {
    Resource::new(uri, name).with_description(description).with_mime_type(mime)
}

/// A value of an rmcp model type, from its MCP JSON (results themselves are made with rmcp's
/// constructors, which give them `resultType: "complete"`).
fn from_json<T: serde::de::DeserializeOwned>(value: Value) -> Result<T, ErrorData> {
    serde_json::from_value(value).map_err(|e| ErrorData::internal_error(e.to_string(), None))
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Conformance {
    fn get_info(&self) -> ServerConfig {
        #[allow(deprecated)] // MCP logging: deprecated by rmcp ahead of SEP-2577
        let capabilities = ServerCapabilities::builder()
            .enable_logging()
            .enable_completions()
            .enable_prompts()
            .enable_resources()
            .enable_resources_subscribe()
            .enable_tools()
            .enable_tasks()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(rmcp::model::Implementation::new("mcpeye-conformance-server", env!("CARGO_PKG_VERSION")))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let declared = context.client_capabilities().unwrap_or_default();
        if let Some(required) = required_capability(&request.name) {
            let missing = (required.sampling.is_some() && declared.sampling.is_none())
                || (required.supports_tasks() && !declared.supports_tasks());
            if missing {
                return Err(ErrorData::missing_required_client_capability(required));
            }
        }
        let as_task = declared.supports_tasks()
            && match tasks::task_support(&request.name) {
                tasks::TaskSupport::Never => false,
                tasks::TaskSupport::Optional | tasks::TaskSupport::Required => true,
                tasks::TaskSupport::AfterInput => request.input_responses.is_some(),
            };
        if as_task {
            return Ok(call_as_task(&self.tasks, &self.tool_router, self.clone(), request, context));
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

    /// MCP 2026-07-28's `subscriptions/listen`: what was asked and is advertised (resource
    /// updates) is acknowledged, and the stream stays open until the client closes it. Nothing
    /// here changes, so nothing more is sent.
    fn accepted_subscription_filter(&self, requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        Some(requested.supported_by(&self.get_info().capabilities))
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        context.cancelled().await;
        Ok(())
    }

    #[allow(deprecated)] // MCP logging: deprecated by rmcp ahead of SEP-2577
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        mcpeye::rmcp::set_log_level(&context, request.level.into());
        Ok(())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(vec![
            resource("test://static-text", "static-text", "A static text resource", "text/plain"),
            resource("test://static-binary", "static-binary", "A static binary resource (a PNG)", "image/png"),
            resource("test://watched-resource", "watched-resource", "A resource to subscribe to", "text/plain"),
        ]))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let template = ResourceTemplate::new("test://template/{id}/data", "template-data")
            .with_description("Data for an id")
            .with_mime_type("application/json");
        Ok(ListResourceTemplatesResult::with_all_items(vec![template]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri.as_str();
        let contents = match uri {
            "test://static-text" | "test://watched-resource" => {
                ResourceContents::text("This is the content of the static text resource.", uri)
                    .with_mime_type("text/plain")
            }
            "test://static-binary" => ResourceContents::blob(PNG, uri).with_mime_type("image/png"),
            _ => match uri.strip_prefix("test://template/").and_then(|rest| rest.strip_suffix("/data")) {
                Some(id) => {
                    let data = json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")});
                    ResourceContents::text(data.to_string(), uri).with_mime_type("application/json")
                }
                None => {
                    let data = json!({"uri": uri});
                    return Err(ErrorData::resource_not_found(format!("no resource {uri}"), Some(data)));
                }
            },
        };
        Ok(ReadResourceResult::new(vec![contents]).into())
    }

    async fn subscribe(
        &self,
        _request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Ok(())
    }

    async fn unsubscribe(
        &self,
        _request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Ok(())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let arg =
            |name: &str, description: &str| PromptArgument::new(name).with_description(description).with_required(true);
        Ok(ListPromptsResult::with_all_items(vec![
            Prompt::new("test_simple_prompt", Some("A simple prompt without arguments"), None),
            Prompt::new(
                "test_prompt_with_arguments",
                Some("A prompt with two arguments"),
                Some(vec![arg("arg1", "First test argument"), arg("arg2", "Second test argument")]),
            ),
            Prompt::new(
                "test_prompt_with_embedded_resource",
                Some("A prompt that embeds a resource"),
                Some(vec![arg("resourceUri", "URI of the resource to embed")]),
            ),
            Prompt::new("test_prompt_with_image", Some("A prompt with an image"), None),
            input_required::prompt(),
        ]))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        if let Some(answer) = input_required::get_prompt(&request) {
            return answer;
        }
        let args = request.arguments.unwrap_or_default();
        let arg = |name: &str| args.get(name).and_then(Value::as_str).unwrap_or_default().to_owned();
        let text = |t: &str| json!({"role": "user", "content": {"type": "text", "text": t}});
        let messages = match request.name.as_str() {
            "test_simple_prompt" => vec![text("This is a simple prompt for testing.")],
            "test_prompt_with_arguments" => {
                vec![text(&format!("Prompt with arguments: arg1='{}', arg2='{}'", arg("arg1"), arg("arg2")))]
            }
            "test_prompt_with_embedded_resource" => vec![
                json!({"role": "user", "content": {"type": "resource", "resource": {
                    "uri": arg("resourceUri"), "mimeType": "text/plain", "text": "Embedded resource content for testing."
                }}}),
                text("Please process the embedded resource above."),
            ],
            "test_prompt_with_image" => vec![
                json!({"role": "user", "content": {"type": "image", "data": PNG, "mimeType": "image/png"}}),
                text("Please analyze the image above."),
            ],
            other => return Err(ErrorData::invalid_params(format!("no prompt {other}"), None)),
        };
        let messages: Vec<PromptMessage> = from_json(Value::Array(messages))?;
        Ok(GetPromptResult::new(messages).into())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let prefix = request.argument.value.to_lowercase();
        let values: Vec<&str> =
            ["paris", "park", "party", "test", "testing"].into_iter().filter(|v| v.starts_with(&prefix)).collect();
        let values = values.into_iter().map(str::to_owned).collect();
        Ok(CompleteResult::new(
            CompletionInfo::with_all_values(values).map_err(|e| ErrorData::internal_error(e, None))?,
        ))
    }
}

// ---------------------------------------------------------------------------------------------
// Serving: rmcp's Streamable HTTP, one path, stateful sessions.

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let port = parse_port()?;
    // Shut down as `main` ends: delivers what was captured, within `Config::shutdown_timeout`.
    let guard = demo_tools::init_analytics("conformance_server", "conformance");
    let manifest = Arc::new(mcpeye::tools![
        test_simple_text,
        test_image_content,
        test_audio_content,
        test_embedded_resource,
        test_multiple_content_types,
        test_tool_with_logging,
        test_error_handling,
        test_tool_with_progress,
        test_sampling,
        test_elicitation,
        test_elicitation_sep1034_defaults,
        test_elicitation_sep1330_enums,
        json_schema_2020_12_tool,
        test_custom_header,
        test_reconnection,
        test_missing_capability,
        test_streaming_elicitation,
        test_logging_tool,
        tasks::greet,
        tasks::slow_compute,
        tasks::failing_job,
        tasks::protocol_error_job,
        tasks::confirm_delete,
        tasks::multi_input,
        tasks::test_tool_with_task,
    ]);
    // Observed: its resources, prompts and completions are counted and spanned (never sent).
    let server = mcpeye::rmcp::observe(Conformance {
        tool_router: tool_router(manifest) + input_required::tool_router(),
        tasks: TaskManager::new(),
    });
    let config = StreamableHttpServerConfig::default().with_sse_keep_alive(None);
    let sessions_end = config.cancellation_token.clone();
    let service =
        StreamableHttpService::new(move || Ok(server.clone()), Arc::new(LocalSessionManager::default()), config);
    let mcp = hyper_util::service::TowerToHyperService::new(service);

    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    eprintln!("listening on http://{}/mcp", listener.local_addr()?);
    let mut stop = Box::pin(signal::termination());
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    eprintln!("[conformance_server] accept failed: {e}");
                    continue;
                }
            },
            () = &mut stop => break,
        };
        let mcp = mcp.clone();
        tokio::spawn(async move {
            let io = hyper_util::rt::TokioIo::new(stream);
            let _ = hyper::server::conn::http1::Builder::new().serve_connection(io, mcp).await;
        });
    }
    sessions_end.cancel();
    if let Some(guard) = &guard {
        // What only this process knows: the ingest receives tool calls alone.
        let stats = guard.stats();
        let methods: BTreeMap<&str, u64> = stats.methods.iter().map(|(m, c)| (m.as_str(), c.requests)).collect();
        let line = serde_json::json!({"methods": methods, "resourcesRead": stats.resources_read, "promptsGot": stats.prompts_got});
        eprintln!("[conformance_server] not sent to the ingest: {line}");
    }
    demo_tools::shut_down("conformance_server", guard);
    Ok(())
}

/// `--port N` (default 3000, 0 for any free port).
fn parse_port() -> Result<u16, String> {
    const USAGE: &str = "usage: conformance_server [--port N]";
    let mut args = std::env::args().skip(1);
    let mut port = 3000;
    while let Some(arg) = args.next() {
        let value = match arg.split_once('=') {
            Some(("--port", v)) => v.to_owned(),
            _ if arg == "--port" => args.next().ok_or(USAGE)?,
            _ => return Err(format!("unknown argument {arg:?}\n{USAGE}")),
        };
        port = value.parse().map_err(|_| format!("--port: not a port number: {value:?}\n{USAGE}"))?;
    }
    Ok(port)
}
