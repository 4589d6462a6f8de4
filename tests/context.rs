//! Tools that take a `mcpeye::Context`, called through the manifest with
//! `mcpeye::testing::RecordingClient` (as a user's own tests would), and what is recorded: progress
//! and logs (filtered by level), cancellation and timeouts (recorded once each), sampling and
//! elicitation, structured output, rich results, titles and icons.

mod common;

use common::rmcp::{recording_tracker, take};
use mcpeye::testing::{RecordingClient, Sent};
use mcpeye::{
    CallOutcome, CallToolResult, ClientError, Content, Context, ElicitationAction, ElicitationRequest, LogLevel,
    Manifest, Origin, SamplingRequest,
};
use serde_json::{json, Value};
use std::time::Duration;

/// Import rows, reporting progress and logging each skipped row.
#[mcpeye::tool]
fn import_rows(
    /// The rows to import.
    rows: Vec<String>,
    ctx: Context,
) -> String {
    let total = rows.len() as f64;
    for (i, row) in rows.iter().enumerate() {
        if row.is_empty() {
            ctx.log(LogLevel::Warning, format!("row {i} is empty: skipped"));
        }
        ctx.log(LogLevel::Debug, format!("row {i} read"));
        ctx.progress(i as f64 + 1.0, Some(total));
    }
    format!("{} rows from {}", rows.len(), ctx.client().map(|c| c.name()).unwrap_or("nobody"))
}

/// Wait until the call is cancelled or times out.
#[mcpeye::tool(timeout_ms = 100)]
async fn wait_forever(ctx: Context) -> String {
    let spawned = ctx.clone();
    // Work the handler hands off sees the call end too.
    std::thread::spawn(move || {
        while !spawned.is_cancelled() {
            std::thread::sleep(Duration::from_millis(5));
        }
    });
    std::future::pending::<()>().await;
    unreachable!()
}

/// Wait until the client cancels.
#[mcpeye::tool]
async fn wait_for_cancel(ctx: Context) -> &'static str {
    ctx.cancelled().await;
    "stopped"
}

/// Ask the client's model to summarise a text.
#[mcpeye::tool]
async fn summarise(
    /// The text.
    text: String,
    ctx: Context,
) -> Result<String, ClientError> {
    let answer = ctx.create_message(SamplingRequest::new(50).user(text).system_prompt("One line.")).await?;
    Ok(answer.text().unwrap_or_default())
}

#[derive(Debug, PartialEq, serde::Deserialize, schemars::JsonSchema)]
struct Contact {
    /// Where to write.
    email: String,
}

/// Ask the user where to send the receipt.
#[mcpeye::tool]
async fn ask_email(ctx: Context) -> Result<String, String> {
    let answer = ctx.elicit(ElicitationRequest::form_for::<Contact>("Where to?")).await.map_err(|e| e.to_string())?;
    match answer.parse::<Contact>().map_err(|e| e.to_string())? {
        Some(c) => Ok(c.email),
        None => Ok(format!("no answer ({})", answer.action.as_str())),
    }
}

/// A forecast.
#[derive(serde::Serialize, schemars::JsonSchema)]
struct Forecast {
    /// Degrees Celsius.
    celsius: f64,
    /// Sky.
    sky: String,
}

/// Forecast the weather.
#[mcpeye::tool(
    title = "Forecast",
    icon = "https://example.com/sun.svg",
    icon(src = "https://example.com/sun-dark.png", mime_type = "image/png", sizes = "48x48 96x96", theme = "dark")
)]
fn forecast(
    /// City.
    city: String,
) -> Result<Forecast, String> {
    if city.is_empty() {
        return Err("no city".into());
    }
    Ok(Forecast { celsius: 21.5, sky: "clear".into() })
}

/// Forecast the weather, without an output schema.
#[mcpeye::tool(output_schema = false)]
fn forecast_untyped() -> Forecast {
    Forecast { celsius: 3.0, sky: "snow".into() }
}

/// A chart.
#[mcpeye::tool]
fn chart() -> CallToolResult {
    CallToolResult::new(vec![Content::text("the chart:"), Content::image(vec![7u8; 300], "image/png")])
}

fn manifest() -> (Manifest, common::rmcp::Records) {
    let (tracker, records) = recording_tracker();
    let m = Manifest::builder()
        .tools(mcpeye::tool_defs![
            import_rows,
            wait_forever,
            wait_for_cancel,
            summarise,
            ask_email,
            forecast,
            forecast_untyped,
            chart
        ])
        .tracker(tracker)
        .build();
    (m, records)
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap()
}

#[test]
fn progress_and_logs_reach_the_client_filtered_by_level() {
    let (m, records) = manifest();
    let client = RecordingClient::new().with_session_log_level(LogLevel::Info);
    let out = m.call_from(&client.origin(), "import_rows", json!({"rows": ["a", "", "c"]}));
    assert_eq!(out["content"][0]["text"], "3 rows from mcpeye-testing");
    assert_eq!(client.progress(), [(1.0, Some(3.0)), (2.0, Some(3.0)), (3.0, Some(3.0))]);
    assert_eq!(
        client.logs(),
        [(LogLevel::Warning, json!("row 1 is empty: skipped"))],
        "debug is below the session's level"
    );

    // MCP 2026-07-28: the request's own level wins over the session's.
    let client = RecordingClient::new().with_session_log_level(LogLevel::Error);
    let origin = client.origin().with_log_level(LogLevel::Debug);
    m.call_from(&origin, "import_rows", json!({"rows": ["a"]}));
    assert_eq!(client.logs(), [(LogLevel::Debug, json!("row 0 read"))]);
    assert_eq!(take(&records).len(), 2);
}

#[test]
fn without_a_client_the_context_sends_nothing_and_the_call_works() {
    let (m, records) = manifest();
    let out = m.call("import_rows", json!({"rows": ["a"]}));
    assert_eq!(out["content"][0]["text"], "1 rows from nobody");
    // No progress token: nothing is sent even with a client.
    let client = RecordingClient::new();
    let origin = client.origin().with_progress_token(None);
    m.call_from(&origin, "import_rows", json!({"rows": ["a"]}));
    assert_eq!(client.progress(), []);
    let out = rt().block_on(m.call_async("summarise", json!({"text": "x"})));
    assert_eq!(out["content"][0]["text"], ClientError::NoClient.to_string());
    assert_eq!(take(&records).len(), 3);
    // A handler is still a plain function.
    assert_eq!(import_rows(vec![], Context::default()), "0 rows from nobody");
}

#[test]
fn a_timed_out_call_is_answered_with_an_error_and_recorded_once_as_a_timeout() {
    let (m, records) = manifest();
    let out = rt().block_on(m.call_async("wait_forever", json!({})));
    assert_eq!(out["isError"], true);
    assert_eq!(out["content"][0]["text"], "the call timed out after 100 ms and was cancelled");
    let recs = take(&records);
    assert_eq!(recs.len(), 1);
    assert!(matches!(recs[0].outcome, CallOutcome::TimedOut { after, .. } if after == Duration::from_millis(100)));
    assert!(recs[0].duration >= Duration::from_millis(100));
}

#[test]
fn a_cancelled_call_is_recorded_once_as_cancelled() {
    let (m, records) = manifest();
    let client = RecordingClient::new();
    let canceller = client.clone();
    let origin = client.origin();
    let out = rt().block_on(async {
        let call = m.call_async_from(&origin, "wait_for_cancel", json!({}));
        let cancel = async {
            tokio::time::sleep(Duration::from_millis(20)).await;
            canceller.cancel();
        };
        tokio::join!(call, cancel).0
    });
    assert_eq!(out["isError"], true);
    let recs = take(&records);
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0].error_message(), Some("the client cancelled the call: cancelled by the test"));
    assert!(matches!(recs[0].outcome, CallOutcome::Cancelled { .. }));

    // A sync call the client cancelled while it ran is recorded as cancelled too.
    let client = RecordingClient::new();
    client.cancel();
    m.call_from(&client.origin(), "import_rows", json!({"rows": []}));
    assert!(matches!(take(&records)[0].outcome, CallOutcome::Cancelled { .. }));
}

#[test]
fn sampling_and_elicitation_go_through_the_client() {
    let (m, _records) = manifest();
    let client = RecordingClient::new().with_sampling_text("a short summary").with_elicitation(|params| {
        assert_eq!(params["requestedSchema"]["properties"]["email"]["description"], "Where to write.");
        Ok(json!({"action": "accept", "content": {"email": "ana@example.com"}}))
    });
    let rt = rt();
    let out = rt.block_on(m.call_async_from(&client.origin(), "summarise", json!({"text": "long text"})));
    assert_eq!(out["content"][0]["text"], "a short summary");
    let out = rt.block_on(m.call_async_from(&client.origin(), "ask_email", json!({})));
    assert_eq!(out["content"][0]["text"], "ana@example.com");
    let sent = client.sent();
    let Sent::Sampling(params) = &sent[0] else { panic!("{sent:?}") };
    assert_eq!(params["messages"][0]["content"]["text"], "long text");
    assert_eq!(params["systemPrompt"], "One line.");
    assert!(matches!(sent[1], Sent::Elicitation(_)));

    let declined = RecordingClient::new().with_elicitation(|_| Ok(json!({"action": "decline"})));
    let out = rt.block_on(m.call_async_from(&declined.origin(), "ask_email", json!({})));
    assert_eq!(out["content"][0]["text"], format!("no answer ({})", ElicitationAction::Decline.as_str()));
    let unsupported = rt.block_on(m.call_async_from(&RecordingClient::new().origin(), "ask_email", json!({})));
    assert_eq!(unsupported["isError"], true);
}

#[test]
fn structured_output_titles_and_icons_are_listed() {
    let (m, _) = manifest();
    let list = m.tools_list();
    let tool = |name: &str| list.as_array().unwrap().iter().find(|t| t["name"] == name).unwrap().clone();
    let f = tool("forecast");
    assert_eq!(f["title"], "Forecast");
    assert_eq!(
        f["outputSchema"],
        json!({
            "type": "object",
            "properties": {
                "celsius": {"description": "Degrees Celsius.", "type": "number"},
                "sky": {"description": "Sky.", "type": "string"}
            },
            "required": ["celsius", "sky"]
        })
    );
    assert_eq!(
        f["icons"],
        json!([
            {"src": "https://example.com/sun.svg"},
            {"src": "https://example.com/sun-dark.png", "mimeType": "image/png", "sizes": ["48x48", "96x96"], "theme": "dark"}
        ])
    );
    assert!(tool("forecast_untyped").get("outputSchema").is_none());
    assert!(tool("import_rows").get("outputSchema").is_none(), "a String is not structured");
    let out = m.call("forecast", json!({"city": "Porto"}));
    assert_eq!(out["structuredContent"], json!({"celsius": 21.5, "sky": "clear"}));
    let out = m.call("forecast", json!({"city": ""}));
    assert!(out.get("structuredContent").is_none() && out["isError"] == true);
}

#[test]
fn binary_content_is_recorded_as_the_truncation_marker() {
    let (m, records) = manifest();
    let out = m.call("chart", json!({}));
    assert_eq!(out["content"][1]["data"].as_str().map(str::len), Some(400));
    let recorded = take(&records).remove(0);
    let result: &Value = recorded.result().unwrap();
    assert_eq!(result["content"][0], out["content"][0]);
    assert_eq!(result["content"][1]["data"], json!({"[truncated]": true, "bytes": 402}));
    assert_eq!(result["content"][1]["mimeType"], "image/png");
}

#[test]
fn origin_meta_gives_the_progress_token() {
    let origin = Origin::default().with_meta(json!({"progressToken": 7, "x": 1}).as_object().unwrap().clone());
    let ctx = Context::for_origin(&origin);
    assert_eq!(ctx.progress_token(), Some(&mcpeye::ProgressToken::Number(7)));
    assert_eq!(ctx.meta().unwrap()["x"], 1);
}
