//! The request context served by `ManifestServer`, end to end with rmcp's own client: progress
//! and log notifications arrive (before the answer), `logging/setLevel` is honoured, sampling is
//! answered by the client, and a call the client abandons is recorded once as cancelled.
#![allow(deprecated)] // rmcp deprecates MCP logging and sampling ahead of SEP-2577

mod common;

use common::rmcp::*;
use mcpeye::rmcp::ManifestServer;
use mcpeye::{CallOutcome, Context, LogLevel, Manifest, SamplingRequest};
use rmcp::model::{
    ClientCapabilities, ClientConfig, CreateMessageRequestParams, CreateMessageResult, Implementation, LoggingLevel,
    LoggingMessageNotificationParam, ProgressNotificationParam, SetLevelRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient};
use rmcp::{ClientHandler, ErrorData};
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Count to three, reporting progress and logging at two levels.
#[mcpeye::tool]
async fn count(ctx: Context) -> String {
    for i in 1..=3 {
        ctx.progress(f64::from(i), Some(3.0));
        ctx.log(LogLevel::Info, format!("counted {i}"));
        tokio::task::yield_now().await;
    }
    ctx.log(LogLevel::Warning, "done counting");
    format!("session {:?}, protocol {:?}", ctx.session_id(), ctx.protocol_version())
}

/// Report progress once and log at two levels, without awaiting (served by a manifest of sync
/// tools, whose handler runs at once and whose notifications are sent after it).
#[mcpeye::tool]
fn tick(ctx: Context) -> String {
    ctx.progress(1.0, Some(1.0));
    ctx.log(LogLevel::Info, "ticked");
    ctx.log(LogLevel::Warning, "ticked loudly");
    format!("token {:?}", ctx.progress_token().is_some())
}

/// Ask the client's model.
#[mcpeye::tool]
async fn ask(
    /// The question.
    question: String,
    ctx: Context,
) -> Result<String, String> {
    ctx.log(LogLevel::Warning, "asking");
    let answer = ctx.create_message(SamplingRequest::new(20).user(question)).await.map_err(|e| e.to_string())?;
    Ok(answer.text().unwrap_or_default())
}

/// Woken by the client once it has seen the progress that another thread sent meanwhile.
static RELAYED: tokio::sync::Notify = tokio::sync::Notify::const_new();

/// Report progress from another thread while waiting for the client to see it: the request's
/// task is woken by that first message, or the tool would wait forever.
#[mcpeye::tool]
async fn relay(ctx: Context) -> String {
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(20));
        ctx.progress_with_message(1.0, None, "from a thread");
    });
    RELAYED.notified().await;
    "relayed".to_owned()
}

/// Never answer on its own.
#[mcpeye::tool]
async fn hang() -> String {
    std::future::pending::<()>().await;
    unreachable!()
}

#[derive(Default, Clone)]
struct Client {
    seen: Arc<Mutex<Vec<String>>>,
}

impl ClientHandler for Client {
    fn get_info(&self) -> ClientConfig {
        let capabilities = ClientCapabilities::builder().enable_sampling().build();
        ClientConfig::new(capabilities, Implementation::new("context-client", "1.0"))
    }

    async fn on_progress(&self, params: ProgressNotificationParam, _: NotificationContext<RoleClient>) {
        if params.message.as_deref() == Some("from a thread") {
            RELAYED.notify_one();
            return;
        }
        self.seen.lock().unwrap().push(format!("progress {}/{}", params.progress, params.total.unwrap_or_default()));
    }

    async fn on_logging_message(&self, params: LoggingMessageNotificationParam, _: NotificationContext<RoleClient>) {
        self.seen.lock().unwrap().push(format!("log {:?} {}", params.level, params.data));
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        self.seen.lock().unwrap().push("sampling".to_owned());
        assert_eq!(params.max_tokens, 20);
        let result = json!({"role": "assistant", "content": {"type": "text", "text": "forty-two"}, "model": "m"});
        Ok(serde_json::from_value(result).unwrap())
    }
}

/// A manifest of sync tools defers the request's parts a handler may ask for (the channel, the
/// `_meta` and its progress token, the session and its `logging/setLevel`): asked for, they are
/// the request's.
#[tokio::test]
async fn a_sync_tool_reports_progress_through_rmcp() {
    let manifest = Manifest::builder().tools(mcpeye::tool_defs![tick]).build();
    let handler = Client::default();
    let client = serve_and_connect_with(ManifestServer::new(Arc::new(manifest)), handler.clone()).await;
    let out = client.call_tool(call("tick", json!({}))).await.unwrap();
    assert_eq!(out.content[0].as_text().unwrap().text, "token true");
    let seen = std::mem::take(&mut *handler.seen.lock().unwrap());
    assert_eq!(
        seen,
        ["progress 1/1", "log Info \"ticked\"", "log Warning \"ticked loudly\""],
        "the notifications arrive before the answer"
    );
    client.peer().set_level(SetLevelRequestParams::new(LoggingLevel::Warning)).await.unwrap();
    client.call_tool(call("tick", json!({}))).await.unwrap();
    assert_eq!(*handler.seen.lock().unwrap(), ["progress 1/1", "log Warning \"ticked loudly\""], "the session's level");
    let _ = client.cancel().await;
}

#[tokio::test]
async fn the_context_talks_back_through_rmcp() {
    let (tracker, records) = recording_tracker();
    let manifest = Manifest::builder().tools(mcpeye::tool_defs![count, ask, relay, hang]).tracker(tracker).build();
    let handler = Client::default();
    let client = serve_and_connect_with(ManifestServer::new(Arc::new(manifest)), handler.clone()).await;
    assert!(client.peer_info().unwrap().capabilities.logging.is_some(), "the logging capability is announced");

    let out = client.call_tool(call("count", json!({}))).await.unwrap();
    // A connection without HTTP has no `Mcp-Session-Id`: mcpeye gives its handshake one id of its own.
    let text = &out.content[0].as_text().unwrap().text;
    let session = text.strip_prefix("session Some(\"").and_then(|t| t.split_once('"')).map(|(id, _)| id);
    assert!(session.is_some_and(|id| id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit())), "{text}");
    assert!(text.ends_with(", protocol Some(\"2025-11-25\")"), "{text}");
    let seen = std::mem::take(&mut *handler.seen.lock().unwrap());
    assert_eq!(
        seen,
        [
            "progress 1/3",
            "log Info \"counted 1\"",
            "progress 2/3",
            "log Info \"counted 2\"",
            "progress 3/3",
            "log Info \"counted 3\"",
            "log Warning \"done counting\""
        ],
        "every notification, in order, before the answer"
    );

    client.peer().set_level(SetLevelRequestParams::new(LoggingLevel::Warning)).await.unwrap();
    client.call_tool(call("count", json!({}))).await.unwrap();
    let seen = std::mem::take(&mut *handler.seen.lock().unwrap());
    assert_eq!(seen.iter().filter(|s| s.starts_with("log")).collect::<Vec<_>>(), ["log Warning \"done counting\""]);

    let out = client.call_tool(call("ask", json!({"question": "the answer?"}))).await.unwrap();
    assert_eq!(out.content[0].as_text().unwrap().text, "forty-two");
    assert_eq!(
        *handler.seen.lock().unwrap(),
        ["log Warning \"asking\"", "sampling"],
        "logs are flushed before a request"
    );

    let relayed = tokio::time::timeout(Duration::from_secs(10), client.call_tool(call("relay", json!({})))).await;
    assert_eq!(
        relayed.expect("progress from another thread is sent while the call runs").unwrap().content[0]
            .as_text()
            .unwrap()
            .text,
        "relayed"
    );

    // Abandoning the call sends `notifications/cancelled`: the tool is dropped, the call recorded once.
    let abandoned = tokio::time::timeout(Duration::from_millis(50), client.call_tool(call("hang", json!({})))).await;
    assert!(abandoned.is_err());
    let mut recs = Vec::new();
    for _ in 0..200 {
        recs.extend(take(&records));
        if recs.iter().any(|r| r.tool_name == "hang") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let names: Vec<&str> = recs.iter().map(|r| r.tool_name.as_ref()).collect();
    assert_eq!(names, ["count", "count", "ask", "relay", "hang"]);
    assert!(matches!(recs[4].outcome, CallOutcome::Cancelled { .. }), "{:?}", recs[4].outcome);
    assert_eq!(recs[4].client.as_deref().and_then(|c| c.label()), Some("context-client/1.0"));
}
