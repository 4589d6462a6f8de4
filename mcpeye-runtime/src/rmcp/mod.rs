//! mcpeye for [rmcp](https://docs.rs/rmcp), the official Rust MCP SDK (feature `rmcp`, rmcp 3.x).
//!
//! Two ways in:
//!
//! 1. **Serve a [`Manifest`](crate::Manifest)** (tools written with `#[mcpeye::tool]`) through
//!    rmcp: [`ManifestServer`] is an rmcp `ServerHandler`, so
//!    `ManifestServer::new(manifest).serve(transport)` works with every rmcp transport. The
//!    manifest records the calls itself. To serve resources, prompts or completion as well,
//!    mount the manifest's tools into a server of your own with [`tool_router`].
//! 2. **Instrument an existing rmcp server** written with rmcp's own `#[tool_router]` /
//!    `#[tool]` macros, without touching its tools: hand its `ToolRouter` to [`instrument`] (or
//!    [`Instrument`] for an explicit tracker or other options, or [`instrumented`] for servers that rebuild
//!    the router on every request). Every object input schema gains the optional
//!    `mcpeyeIntent` property, the reserved tool `mcpeye_request_capability` is added and
//!    answered locally, and every call is timed and recorded once, with the intent stripped
//!    before the tool runs.
//!
//! What agents read as well (`resources/read`, `prompts/get`, `completion/complete`, the lists):
//! [`ManifestServer`] records it itself; a handler of your own is served as
//! [`observe`]`(handler)` ([`Observed`]). Counts and spans only, never an event for the ingest.
//!
//! In both, every call is recorded with the client that made it: its session's `initialize`
//! `clientInfo`, or in MCP 2026-07-28 (no handshake) the `clientInfo` in the request's `_meta`.
//! Events go to the ingest under their own client's identity, one payload per client, so many
//! concurrent sessions over Streamable HTTP are never mixed up.
//!
//! # Applying path 2
//!
//! rmcp's `#[tool_handler]` reads the router through an expression, by default
//! `Self::tool_router()` (the router is rebuilt on every request). Point it at an instrumented
//! router instead, in one of two ways.
//!
//! Keep the router in a field (rmcp's documented `router = self.tool_router` style):
//!
//! ```
//! use rmcp::handler::server::{router::tool::ToolRouter, wrapper::Parameters};
//! use rmcp::{schemars, tool, tool_handler, tool_router, ServerHandler};
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct SumArgs {
//!     a: i64,
//!     b: i64,
//! }
//!
//! #[derive(Clone)]
//! struct Calculator {
//!     tool_router: ToolRouter<Self>,
//! }
//!
//! #[tool_router]
//! impl Calculator {
//!     fn new() -> Self {
//!         // The one call: the tools themselves are untouched.
//!         Self { tool_router: mcpeye::rmcp::instrument(Self::tool_router()) }
//!     }
//!
//!     #[tool(description = "Add two integers.")]
//!     fn sum(&self, Parameters(SumArgs { a, b }): Parameters<SumArgs>) -> String {
//!         (a + b).to_string()
//!     }
//! }
//!
//! #[tool_handler(router = self.tool_router)]
//! impl ServerHandler for Calculator {}
//!
//! let server = Calculator::new();
//! assert!(server.tool_router.has_route("mcpeye_request_capability"));
//! ```
//!
//! Or, without a field, cache the instrumented router once per server type:
//! `#[tool_handler(router = mcpeye::rmcp::instrumented(Self::tool_router))]`. A server
//! declared with `#[tool_router(server_handler)]` first splits that into `#[tool_router]` plus
//! an explicit `#[tool_handler(router = …)] impl ServerHandler for … {}`.
//!
//! Instrument after `mcpeye::init` (the reserved tool follows the installed tracker's
//! `capture_missing_capabilities`), or pass the tracker with [`Instrument::tracker`].
//!
//! # Why the `ToolRouter`, and how robust it is
//!
//! rmcp offers three places to stand between the client and the tools:
//!
//! - **A `ServerHandler` newtype** around the user's handler: the trait has about 32 methods
//!   with default bodies. A wrapper must forward every one of them; any it misses silently
//!   falls back to rmcp's default (prompts, resources, completion, tasks… vanish without an
//!   error), and every rmcp release that adds a method reopens the hole. Rejected for the tools;
//!   [`Observed`] is such a newtype for the other methods only (opt-in, `tools/call` forwarded
//!   untouched), with a test comparing its methods to rmcp's trait to close that hole.
//! - **A `Service<RoleServer>` wrapper** over raw requests: rmcp's streamable HTTP server needs
//!   a `ServerHandler`-backed service factory, so it does not work there. Rejected.
//! - **The `ToolRouter<S>`** (chosen): its `map` of `ToolRoute`s is public, each route's
//!   `attr` is the `Tool` (schema included) and its `call` the handler, and rmcp's generated
//!   `list_tools`, `call_tool` and `get_tool` all go through the router. Editing a schema,
//!   adding a route and replacing `call` with a timed, intent-stripping wrapper use only
//!   public API, leave the user's `ServerHandler` (prompts, resources, `get_info`…) exactly as
//!   written, and work over every transport. `get_tool`, which the streamable HTTP server
//!   uses to validate `Mcp-Param-*` headers against the schema, sees the injected property.
//!
//! What it relies on (rmcp 3.11, checked in rmcp's source): `ToolRouter::map`,
//! `ToolRoute::{attr, call}` and `ToolRoute::new_dyn` are public; `ToolRouter::call` looks the
//! route up in `map` and awaits `(route.call)(context)`. What it cannot see: a call of a tool the
//! router does not have (rmcp answers it without a route; [`call_tool`], used as the server's
//! `call_tool`, records it), a `call_tool` written by hand that bypasses the router, and a
//! router rebuilt on each request without [`instrument`]/[`instrumented`]. rmcp's `local`
//! feature (non-`Send` handlers) is not supported.
//!
//! # What is recorded (docs/wire-format.md#capture)
//!
//! One record per `tools/call`: a result is recorded as sent (without rmcp's `resultType`
//! discriminator); `is_error: Some(true)` is an error whose message is its text items joined
//! with `"\n"`; an `Err(ErrorData)` (rmcp's argument-deserialisation errors included) is an
//! error whose message is the `ErrorData`'s message; a panic is recorded with its message, and
//! the client is answered with a tool error that does not repeat it (rmcp alone would leave the
//! request unanswered). A call answered with a task (`CreateTaskResult`) is recorded as
//! successful, with the task handle as its result; a call run as a task by [`call_as_task`] is
//! recorded once, when the task ends, with the tool's own outcome.
//!
//! An `input_required` round (MCP 2026-07-28, SEP-2322) is not recorded: the round that
//! completes the call is, once, timed from the first round and with the first round's intent.
//! What crosses rounds travels in the `requestState`, sealed (see [`set_request_state_key`]): for
//! a manifest's tools, mcpeye's own state (the answers included); for an instrumented rmcp tool,
//! the tool's own state wrapped in mcpeye's, handed back to the tool as it sent it. A round that
//! answers `input_required` ends its span and counts in [`Stats::input_required`](crate::Stats);
//! a call the client never retries leaves exactly that (nothing reaches the ingest).

mod call;
mod channel;
mod client;
mod instrument;
mod observe;
mod rounds;
mod serve;
mod session;
mod task;

pub use call::{call_tool, call_tool_with};
pub use instrument::{instrument, instrumented, Instrument};
pub use observe::{observe, Observed};
pub use rounds::{set_request_state_key, RequestStateKeyError, REQUEST_STATE_KEY_ENV, STATE_TTL};
pub use serve::{set_log_level, tool_router, ManifestServer};
pub use task::call_as_task;

use crate::model::result::{CallToolResult as McpeyeResult, Content};
use ::rmcp::model::{CallToolResponse, CallToolResult, ContentBlock, ResultType};
use ::rmcp::ErrorData;

/// mcpeye's content as rmcp's blocks, at its exact size: collecting through `Result` would
/// start at four blocks (over 1 KiB).
fn content_blocks(content: Vec<Content>) -> Result<Vec<ContentBlock>, serde_json::Error> {
    let mut blocks = Vec::with_capacity(content.len());
    for c in content {
        blocks.push(match c {
            Content::Text(t) => ContentBlock::text(t),
            other => content_block(other)?,
        });
    }
    Ok(blocks)
}

/// An item other than text, through its JSON. Out of line: text is the common case, and this
/// is most of the conversion's code.
#[cold]
#[inline(never)]
fn content_block(content: Content) -> Result<ContentBlock, serde_json::Error> {
    serde_json::from_value(content.into_json())
}

/// A manifest's answer as rmcp's response: what reading its JSON (`into_json`) back as rmcp's
/// `CallToolResult` gives, built without that JSON (text items, the common case, are moved
/// across; other items go through their JSON). It carries `resultType: "complete"`, which MCP
/// 2026-07-28 clients require; rmcp removes it for peers that negotiated an older version.
fn complete_response(result: McpeyeResult) -> Result<CallToolResponse, ErrorData> {
    let McpeyeResult { content, structured_content, is_error, .. } = result;
    match content_blocks(content) {
        Ok(content) => {
            let mut r = CallToolResult::default();
            r.result_type = Some(ResultType::COMPLETE);
            r.content = content;
            r.structured_content = structured_content.map(serde_json::Value::Object);
            // `isError` is in the JSON only when true.
            r.is_error = is_error.then_some(true);
            Ok(CallToolResponse::Complete(r))
        }
        Err(e) => Err(invalid_result(e)),
    }
}

/// mcpeye builds its items in MCP's shape: failing to read one back is a bug.
#[cold]
#[inline(never)]
fn invalid_result(e: serde_json::Error) -> ErrorData {
    ErrorData::internal_error(format!("mcpeye produced an invalid tool result: {e}"), None)
}
