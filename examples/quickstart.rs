//! mcpeye in five minutes: tools, the manifest and what it costs a model in tokens, a scripted
//! session, the events that reach the ingest API, and their Intent Gap.
//!
//! ```text
//! cargo run --example quickstart
//! ```
//!
//! Nothing needs to be installed: the example starts a local ingest receiver
//! (`mcpeye::testing::IngestReceiver`) and prints what arrived there. It also writes the local
//! event log, and ends by printing the `mcpeye report` command that reads it.

use mcpeye::testing::{block_on, IngestReceiver, RecordingClient};
use mcpeye::{Args, CallToolResult, Config, Context, Identity, Origin, ProgressToken, State};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

// ---------------------------------------------------------------------------------------------
// The application: a small shop, with its state shared through `State<T>` (no globals).

#[derive(Debug, Clone, Serialize)]
struct Product {
    sku: &'static str,
    name: &'static str,
    price_cents: u32,
}

struct Shop {
    products: Vec<Product>,
    stock: Mutex<Vec<(&'static str, u32)>>,
}

impl Shop {
    fn demo() -> Self {
        let products = vec![
            Product { sku: "MUG-RED", name: "Red ceramic mug", price_cents: 1200 },
            Product { sku: "MUG-BLU", name: "Blue ceramic mug", price_cents: 1200 },
            Product { sku: "TEA-POT", name: "Cast-iron teapot", price_cents: 4900 },
        ];
        Shop { products, stock: Mutex::new(vec![("MUG-RED", 3), ("MUG-BLU", 0), ("TEA-POT", 1)]) }
    }
}

// ---------------------------------------------------------------------------------------------
// The tools. Each doc comment becomes the tool's (or the property's) description.

/// Search the product catalogue by free text.
///
/// Matches product names, case-insensitively.
#[mcpeye::tool(read_only)]
fn search_products(
    /// Words to look for in product names.
    query: String,
    /// At most this many results (default 10).
    limit: Option<u32>,
    shop: State<Shop>,
) -> Vec<Product> {
    let q = query.to_lowercase();
    shop.products
        .iter()
        .filter(|p| p.name.to_lowercase().contains(&q))
        .take(limit.unwrap_or(10) as usize)
        .cloned()
        .collect()
}

/// An order, given as one struct: its field docs become the property descriptions.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct OrderRequest {
    /// The product's SKU, from `search_products`.
    sku: String,
    /// How many to order (at least 1).
    #[schemars(range(min = 1))]
    quantity: u32,
    /// E-mail address for the confirmation.
    email: String,
}

#[derive(Debug, Serialize)]
struct Confirmation {
    order_id: String,
    sku: String,
    quantity: u32,
    total_cents: u32,
    confirmation_sent_to: String,
}

#[derive(Debug)]
enum OrderError {
    UnknownSku(String),
    OutOfStock { sku: String, available: u32 },
}

impl fmt::Display for OrderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OrderError::UnknownSku(sku) => write!(f, "no product has SKU {sku}"),
            OrderError::OutOfStock { sku, available } => write!(f, "{sku} is out of stock ({available} left)"),
        }
    }
}

/// Place an order for a product; a confirmation is e-mailed to the customer.
#[mcpeye::tool(destructive)]
fn place_order(Args(order): Args<OrderRequest>, shop: State<Shop>) -> Result<Confirmation, OrderError> {
    let product =
        shop.products.iter().find(|p| p.sku == order.sku).ok_or_else(|| OrderError::UnknownSku(order.sku.clone()))?;
    let mut stock = shop.stock.lock().unwrap_or_else(|e| e.into_inner());
    let entry = stock.iter_mut().find(|(sku, _)| *sku == product.sku).expect("every product has a stock entry");
    if entry.1 < order.quantity {
        return Err(OrderError::OutOfStock { sku: order.sku, available: entry.1 });
    }
    entry.1 -= order.quantity;
    Ok(Confirmation {
        order_id: format!("ord-{}-{}", product.sku.to_lowercase(), entry.1),
        sku: order.sku,
        quantity: order.quantity,
        total_cents: product.price_cents * order.quantity,
        confirmation_sent_to: order.email,
    })
}

/// Tell the shop's opening hours.
#[mcpeye::tool(read_only, idempotent)]
fn opening_hours() -> &'static str {
    "Monday to Saturday, 9:00 to 18:00"
}

// `ctx` is the request context (not part of the input schema): the tool reports its progress to
// the client, and gives up after 10 s (`timeout_ms`), answering and recording a timeout.
/// Estimate the delivery time to a postcode, asking each carrier in turn.
#[mcpeye::tool(read_only, open_world, timeout_ms = 10_000)]
async fn estimate_delivery(
    /// Destination postcode.
    postcode: String,
    ctx: Context,
) -> CallToolResult {
    if postcode.trim().is_empty() {
        return CallToolResult::error_text("the postcode is empty");
    }
    let carriers = ["CTT", "DHL", "UPS"];
    for (i, carrier) in carriers.iter().enumerate() {
        // A real server would await each carrier's API here.
        ctx.progress_with_message((i + 1) as f64, Some(carriers.len() as f64), format!("asked {carrier}"));
    }
    CallToolResult::text(format!("Delivery to {postcode} takes 2 to 3 working days."))
}

// ---------------------------------------------------------------------------------------------

fn show_call(manifest: &mcpeye::Manifest, name: &str, arguments: Value) {
    show_call_from(manifest, &agent(), name, arguments);
}

/// The agent's requests: one session, and the `_meta` a client following the MCP proposal for
/// AI invocation metadata sends (its model and turn go to the event log, never to the ingest).
fn agent() -> Origin {
    let meta =
        json!({"io.modelcontextprotocol/aiInvocation": {"model": {"name": "claude-sonnet-4.5"}, "turnId": "turn-1"}});
    Origin::default().with_session_id("demo-session").with_meta(meta.as_object().cloned().unwrap_or_default())
}

fn show_call_from(manifest: &mcpeye::Manifest, origin: &Origin, name: &str, arguments: Value) {
    println!("\n→ tools/call {name} {arguments}");
    let result = block_on(manifest.call_async_from(origin, name, arguments));
    println!("← {result}");
}

fn main() {
    // 1. An ingest to send to. In production this is your self-hosted mcpeye API.
    let ingest = IngestReceiver::start();

    // 2. Start tracking. The guard flushes what is left when it is dropped. The local event log
    // (opt-in) keeps a copy of what the ingest gets, for `mcpeye report`.
    let event_log = std::env::temp_dir().join("mcpeye-quickstart-events");
    let _ = std::fs::remove_dir_all(&event_log); // this run's log only
    let guard = mcpeye::init(
        Config::new("quickstart-demo")
            .event_log(&event_log)
            .ingest_url(ingest.url())
            .ingest_secret("demo-ingest-secret")
            .identity(Identity::new().server_version(env!("CARGO_PKG_VERSION")).client("quickstart/1.0")),
    )
    .expect("a valid configuration");

    // 3. The manifest: every #[mcpeye::tool] in the program, its state, and the reserved tool.
    let manifest = mcpeye::Manifest::builder().registered().state(Shop::demo()).build();

    println!("=== tools/list ({} tools) ===", manifest.tools_list().as_array().map_or(0, Vec::len));
    println!("{}", serde_json::to_string_pretty(&manifest.tools_list()).expect("JSON"));

    // What this tool list costs the model on every turn (feature `tokens`).
    println!("\n=== token cost ===");
    print!("{}", manifest.token_report());

    // 4. A scripted session, as an agent would drive it.
    println!("\n=== a session ===");
    let why = "The user is shopping for a gift mug and wants to compare colours before buying one.";
    show_call(&manifest, "search_products", json!({"query": "mug", "mcpeyeIntent": why}));
    show_call(
        &manifest,
        "place_order",
        json!({"sku": "MUG-RED", "quantity": 1, "email": "carol@example.com",
               "mcpeyeIntent": "The user chose the red mug and asked to order one, confirmation to their e-mail."}),
    );
    show_call(
        &manifest,
        "place_order",
        json!({"sku": "MUG-BLU", "quantity": 2, "email": "carol@example.com",
               "mcpeyeIntent": "The user also wants two blue mugs for their parents; they asked to be told when it is back in stock."}),
    );
    show_call(&manifest, "place_order", json!({"sku": "TEA-POT", "quantity": "two", "email": "carol@example.com"}));
    show_call(&manifest, "opening_hours", json!({}));
    // A client that asked for progress (`_meta.progressToken`); served by rmcp, the notifications
    // would go over the wire. Here a recording client stands in for it.
    let client = RecordingClient::new();
    let origin =
        agent().with_progress_token(ProgressToken::String("delivery-1".into())).with_channel(Arc::new(client.clone()));
    show_call_from(&manifest, &origin, "estimate_delivery", json!({"postcode": "1000-001"}));
    for sent in client.sent() {
        println!("  ↳ notifications/progress {sent:?}");
    }
    show_call(
        &manifest,
        "mcpeye_request_capability",
        json!({"capability": "export my order history as a CSV file", "context": "doing their yearly accounts"}),
    );

    // 5. Ship the events and show what the ingest received.
    let report = guard.shutdown(Duration::from_secs(5));
    println!("\n=== delivery ===");
    println!("{}", report.stats);
    // A server says it on stderr as it exits: stdout may be its protocol channel.
    eprintln!("[quickstart] analytics at exit: {report}");
    for request in ingest.requests() {
        println!(
            "\nPOST {} (x-mcpeye-secret: {})",
            request.path,
            if request.header("x-mcpeye-secret").is_some() { "set" } else { "absent" }
        );
        let body = request.json().unwrap_or(Value::Null);
        println!("{}", serde_json::to_string_pretty(&body).expect("JSON"));
    }

    // 6. The Intent Gap of this session: what the user wanted and could not get.
    let saved = save_payloads(&ingest);
    println!("\n=== the Intent Gap ===");
    print!("{}", mcpeye::report::IntentGap::from_events(&ingest.events()));
    if let Some(path) = saved {
        println!("\nThe payloads are saved in {}; see them again with", path.display());
        println!("  cargo run --example intent_gap -- {}", path.display());
    }
    // 7. The maintainer's report of the event log: tools, paths, versions, models.
    let dir = event_log.display();
    println!("\nThe event log is in {dir}; its report (add --html report.html for a page):");
    println!("  mcpeye report {dir}");
    println!("  (from this repository: cargo run -p mcpeye-cli -- report {dir})");
}

/// Saves the accepted payloads as JSON Lines, the input of `examples/intent_gap.rs`.
fn save_payloads(ingest: &IngestReceiver) -> Option<std::path::PathBuf> {
    let path = std::env::temp_dir().join("mcpeye-quickstart.jsonl");
    let lines: String = ingest
        .requests()
        .iter()
        .filter(|r| r.accepted())
        .map(|r| format!("{}\n", String::from_utf8_lossy(&r.body)))
        .collect();
    std::fs::write(&path, lines).ok().map(|()| path)
}
