//! The credential layer and the binary rule end to end, with default settings: an rmcp server
//! instrumented with `mcpeye::rmcp::Instrument` and a tracker, driven by rmcp's client, delivering to a
//! loopback ingest. A URL with a password and a token, every vendor format of the vectors, a PEM
//! block and a base64 image reach the ingest redacted, in arguments, results, errors and intents;
//! with `redact_credentials(false)` the same call arrives as the sibling SDKs would send it.

mod common;

use common::rmcp::{call, serve_and_connect};
use mcpeye::testing::IngestReceiver;
use mcpeye::{Config, Tracker};
use rmcp::handler::server::{router::tool::ToolRouter, wrapper::Parameters};
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::{schemars, tool, tool_handler, tool_router, ErrorData, ServerHandler};
use serde_json::{json, Value};
use std::time::Duration;

const PATIENCE: Duration = Duration::from_secs(30);

/// A PNG's base64, long enough (over 512 characters) to be an image rather than an id.
fn png() -> String {
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==".repeat(8)
}

const URL: &str = "https://admin:PASSWORD@db.internal/x?token=VALUE";
const PEM: &str = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----";

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    /// Text the tool echoes back.
    text: String,
}

#[derive(Clone)]
struct Leaky {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Leaky {
    fn new(tracker: Tracker) -> Self {
        Self { tool_router: mcpeye::rmcp::Instrument::new().tracker(tracker).apply(Self::tool_router()) }
    }

    #[tool(description = "Echo the text, with a chart.")]
    fn echo(&self, Parameters(args): Parameters<EchoArgs>) -> CallToolResult {
        CallToolResult::success(vec![
            ContentBlock::text(format!("echo: {}", args.text)),
            ContentBlock::image(png(), "image/png"),
            ContentBlock::text(format!("inline data:image/png;base64,{}", png())),
        ])
    }

    #[tool(description = "Fail with the text.")]
    fn fail(&self, Parameters(args): Parameters<EchoArgs>) -> Result<CallToolResult, ErrorData> {
        Err(ErrorData::internal_error(format!("could not reach {}", args.text), None))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Leaky {}

/// The vendor tokens of the credential vectors, by case name.
fn vendor_tokens() -> Vec<(String, String)> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/vectors/credentials_strings.json");
    let cases: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(path).expect("vectors")).expect("JSON");
    let tokens: Vec<(String, String)> = cases
        .iter()
        .filter(|c| c.get("vendor").is_some())
        .map(|c| {
            let input = c["input"].as_str().expect("input");
            let token = input.strip_prefix("key is ").and_then(|t| t.strip_suffix(" here")).expect("`key is … here`");
            (c["case"].as_str().expect("case").to_owned(), token.to_owned())
        })
        .collect();
    assert!(tokens.len() >= 40, "{}", tokens.len());
    tokens
}

/// Runs the calls against a tracker made of `config`, and returns every event the ingest got,
/// with the raw bodies.
async fn run(config: impl FnOnce(Config) -> Config, texts: &[String]) -> (Vec<Value>, String) {
    let ingest = IngestReceiver::start();
    let tracker = Tracker::new(config(
        Config::new("proj_creds")
            .ingest_url(ingest.url())
            .retry_backoff(Duration::from_millis(20), Duration::from_millis(200)),
    ))
    .expect("valid config");
    let client = serve_and_connect(Leaky::new(tracker.clone()), "cred-client", "1.0.0").await;
    for text in texts {
        let out = client
            .call_tool(call("echo", json!({"text": text, "mcpeyeIntent": format!("The user pasted {text}")})))
            .await
            .expect("echo answers");
        // What the client gets is never redacted.
        assert_eq!(out.content[0].as_text().expect("text").text, format!("echo: {text}"));
        let failed = client.call_tool(call("fail", json!({"text": text}))).await;
        assert!(failed.is_err(), "the tool's error reaches the client");
    }
    client.cancel().await.expect("the client closes");
    assert!(tracker.flush(PATIENCE).completed);
    let requests = ingest.requests();
    let events = requests.iter().flat_map(|r| r.events()).collect();
    let bodies = requests.iter().map(|r| String::from_utf8_lossy(&r.body).into_owned()).collect::<Vec<_>>().join("\n");
    (events, bodies)
}

fn texts() -> Vec<String> {
    let mut texts = vec![URL.to_owned(), PEM.to_owned()];
    texts.extend(vendor_tokens().into_iter().map(|(_, token)| format!("key {token} end")));
    texts
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn defaults_redact_every_credential_and_binary_at_the_ingest() {
    let texts = texts();
    let (events, bodies) = run(|c| c, &texts).await;
    assert_eq!(events.len(), 2 * texts.len(), "{events:#?}");

    // No secret of any call reaches the wire: not the URL's password or token, no vendor token,
    // no key material, no base64 of the image.
    for secret in ["PASSWORD", "token=VALUE", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC", "iVBORw0KGgo"] {
        assert!(!bodies.contains(secret), "{secret} reached the ingest");
    }
    for (case, token) in vendor_tokens() {
        assert!(!bodies.contains(&token), "{case}: {token} reached the ingest");
    }

    let echo: Vec<&Value> = events.iter().filter(|e| e["toolName"] == "echo").collect();
    let fail: Vec<&Value> = events.iter().filter(|e| e["toolName"] == "fail").collect();
    let url = "https://admin:[REDACTED_URL_CREDENTIAL]@db.internal/x?token=[REDACTED_URL_CREDENTIAL]";
    // Arguments, result, intent and error of the URL call: the password and token go, the host stays.
    assert_eq!(echo[0]["arguments"], json!({"text": url}), "{:#}", echo[0]);
    assert_eq!(echo[0]["result"]["content"][0]["text"], format!("echo: {url}"), "{:#}", echo[0]);
    assert_eq!(echo[0]["intent"], format!("The user pasted {url}"), "{:#}", echo[0]);
    assert_eq!(fail[0]["errorMessage"], format!("could not reach {url}"), "{:#}", fail[0]);
    // The PEM block.
    assert_eq!(echo[1]["arguments"]["text"], "[REDACTED_PRIVATE_KEY]", "{:#}", echo[1]);
    assert_eq!(fail[1]["errorMessage"], "could not reach [REDACTED_PRIVATE_KEY]", "{:#}", fail[1]);
    // Every vendor token, in each of the four fields.
    for (i, (case, _)) in vendor_tokens().iter().enumerate() {
        let (e, f) = (echo[i + 2], fail[i + 2]);
        assert_eq!(e["arguments"]["text"], "key [REDACTED_KEY] end", "{case}: {e:#}");
        assert_eq!(e["result"]["content"][0]["text"], "echo: key [REDACTED_KEY] end", "{case}: {e:#}");
        assert_eq!(e["intent"], "The user pasted key [REDACTED_KEY] end", "{case}: {e:#}");
        assert_eq!(f["errorMessage"], "could not reach key [REDACTED_KEY] end", "{case}: {f:#}");
    }
    // The image item: its base64 as the truncation marker of its size; inline base64 as a marker.
    for e in &echo {
        let content = &e["result"]["content"];
        assert_eq!(content[1]["data"], json!({"[truncated]": true, "bytes": png().len() + 2}), "{e:#}");
        assert_eq!(content[1]["mimeType"], "image/png");
        assert_eq!(content[2]["text"], "inline data:image/png;base64,[REDACTED_BINARY]", "{e:#}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn switched_off_the_layer_sends_what_the_siblings_send() {
    let stripe = vendor_tokens().into_iter().find(|(case, _)| case == "stripe_secret_key").expect("a Stripe vector").1;
    let texts = vec![URL.to_owned(), format!("key {stripe} end")];
    let (events, bodies) = run(|c| c.redact_credentials(false), &texts).await;
    assert_eq!(events.len(), 4, "{events:#?}");
    // The sibling e-mail pattern takes the password and host; the token and the Stripe key stay.
    assert_eq!(events[0]["arguments"]["text"], "https://admin:[REDACTED_EMAIL]/x?token=VALUE", "{:#}", events[0]);
    assert!(bodies.contains(&stripe));
    // Binary items stay markers either way (a cap of this SDK, not redaction); inline base64 stays.
    assert_eq!(events[0]["result"]["content"][1]["data"]["[truncated]"], true, "{:#}", events[0]);
    assert!(events[0]["result"]["content"][2]["text"].as_str().is_some_and(|t| t.contains("iVBORw0KGgo")));
}

/// An instrumented rmcp server records the intent of `_meta` `io.modelcontextprotocol/aiInvocation`
/// `.userIntent` as `native` when the call has no `mcpeyeIntent`, and `mcpeyeIntent` when it has
/// both; the native intent is redacted like any other.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn instrumented_calls_record_the_native_intent() {
    use rmcp::model::{MetaObject, RequestMetaObject};
    let ingest = IngestReceiver::start();
    let tracker = Tracker::new(Config::new("proj_native").ingest_url(ingest.url())).expect("valid config");
    let client = serve_and_connect(Leaky::new(tracker.clone()), "native-client", "1.0.0").await;
    let meta = |intent: &str| {
        let m = json!({"io.modelcontextprotocol/aiInvocation": {"userIntent": intent}});
        RequestMetaObject(MetaObject(m.as_object().cloned().expect("an object")))
    };
    let with_meta = |name, args, intent: &str| {
        let mut params = call(name, args);
        params.meta = Some(meta(intent));
        params
    };
    let native = "The user checks a deploy URL https://ci:hunter2@ci.example/run";
    client.call_tool(with_meta("echo", json!({"text": "one"}), native)).await.expect("answers");
    let both = json!({"text": "two", "mcpeyeIntent": "Written for this server."});
    client.call_tool(with_meta("echo", both, "the client's summary")).await.expect("answers");
    client.call_tool(with_meta("echo", json!({"text": "three"}), " \n")).await.expect("answers");
    client.cancel().await.expect("the client closes");
    assert!(tracker.flush(PATIENCE).completed);
    let events: Vec<Value> = ingest.requests().iter().flat_map(|r| r.events()).collect();
    let of =
        |text: &str| events.iter().find(|e| e["arguments"]["text"] == text).unwrap_or_else(|| panic!("{events:#?}"));
    assert_eq!(of("one")["intent"], "The user checks a deploy URL https://ci:[REDACTED_URL_CREDENTIAL]@ci.example/run");
    assert_eq!(of("one")["intentSource"], "native");
    assert_eq!(
        (&of("two")["intent"], &of("two")["intentSource"]),
        (&json!("Written for this server."), &json!("mcpeye"))
    );
    assert!(of("three").get("intent").is_none() && of("three").get("intentSource").is_none(), "{:#}", of("three"));
}
