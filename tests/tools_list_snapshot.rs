//! `tools_list()` of representative `#[mcpeye::tool]`s, compared byte for byte with the
//! reviewed snapshot `tests/snapshots/tools_list.json` (`UPDATE_SNAPSHOTS=1 cargo test --test
//! tools_list_snapshot` rewrites it; review the diff before committing).

use mcpeye::{Args, CallToolResult, State};
use serde::{Deserialize, Serialize};
use std::path::Path;

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Sort {
    /// Most recent first.
    Newest,
    /// Cheapest first.
    Cheapest,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct PriceRange {
    /// Lowest price, in cents.
    min_cents: Option<u32>,
    /// Highest price, in cents.
    max_cents: Option<u32>,
}

/// Search the catalogue.
///
/// Returns at most `limit` products.
#[mcpeye::tool(read_only, title = "Product search")]
fn search(
    /// Words to look for.
    query: String,
    /// At most this many results (default 10).
    #[schemars(range(min = 1, max = 50))]
    limit: Option<u8>,
    /// Sort order.
    sort: Option<Sort>,
    /// Only products in this price range.
    price: Option<PriceRange>,
    /// Only products with all of these tags.
    tags: Vec<String>,
) -> Vec<String> {
    let mut hits = vec![query];
    hits.extend(tags);
    if let Some(p) = price {
        hits.push(format!("{:?}-{:?}", p.min_cents, p.max_cents));
    }
    hits.push(format!("{limit:?} {sort:?}"));
    hits
}

/// A refund request.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct RefundRequest {
    /// The order to refund.
    order_id: String,
    /// Why the customer wants a refund.
    reason: String,
    /// Amount in cents; the whole order when absent.
    amount_cents: Option<u64>,
}

#[derive(Serialize)]
struct Refund {
    refund_id: String,
}

/// Refund an order, fully or in part.
#[mcpeye::tool(name = "refund_order", destructive, idempotent)]
async fn refund(Args(req): Args<RefundRequest>) -> Result<Refund, String> {
    if req.reason.is_empty() {
        return Err("say why".to_owned());
    }
    Ok(Refund { refund_id: format!("rf-{}-{}", req.order_id, req.amount_cents.unwrap_or(0)) })
}

/// Tell the shop's opening hours.
#[mcpeye::tool(read_only, open_world = false)]
fn opening_hours() -> &'static str {
    "9 to 5"
}

struct Clock;

/// The server's current time, as an RFC 3339 string.
#[mcpeye::tool(intent = false)]
fn now(clock: State<Clock>) -> CallToolResult {
    let _ = clock;
    CallToolResult::text("2026-11-30T10:00:00Z")
}

#[test]
fn tools_list_matches_the_reviewed_snapshot() {
    let manifest =
        mcpeye::Manifest::builder().tools(mcpeye::tool_defs![search, refund, opening_hours, now]).state(Clock).build();
    let list = manifest.tools_list();
    let actual = serde_json::to_string_pretty(&list).unwrap() + "\n";
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots/tools_list.json");
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(&path, &actual).unwrap();
    }
    let expected = std::fs::read_to_string(&path).expect("the snapshot exists (UPDATE_SNAPSHOTS=1 writes it)");
    assert_eq!(actual, expected, "tools_list() changed; review with UPDATE_SNAPSHOTS=1 and git diff");
    // Deterministic: a second manifest gives the same bytes.
    let again = mcpeye::Manifest::builder()
        .tools(mcpeye::tool_defs![now, opening_hours, refund, search])
        .state(Clock)
        .build()
        .tools_list();
    assert_eq!(serde_json::to_string(&again).unwrap(), serde_json::to_string(&list).unwrap());
}

#[test]
fn assert_manifest_valid_lists_every_problem() {
    // `now` needs `State<Clock>`: without it the helper fails the test, naming the fix.
    let caught = std::panic::catch_unwind(|| {
        mcpeye::testing::assert_manifest_valid(mcpeye::Manifest::builder().tools(mcpeye::tool_defs![now, search]))
    });
    let message = *caught.expect_err("a missing state fails").downcast::<String>().unwrap();
    assert!(message.contains("missing-state") && message.contains(".state(value)"), "{message}");
    mcpeye::testing::assert_manifest_valid(mcpeye::Manifest::builder().tools(mcpeye::tool_defs![search]));
}
