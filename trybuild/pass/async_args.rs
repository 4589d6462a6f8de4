#[derive(serde::Deserialize, schemars::JsonSchema)]
struct RefundRequest {
    /// The order to refund.
    order_id: String,
    /// Why.
    #[serde(rename = "refundReason")]
    reason: Option<String>,
}

/// Refund an order.
#[mcpeye::tool(name = "refund", title = "Refund an order", destructive, idempotent)]
async fn refund_order(mcpeye::Args(req): mcpeye::Args<RefundRequest>, count: mcpeye::State<u32>) -> String {
    format!("{} {:?} {}", req.order_id, req.reason, *count)
}

fn main() {
    assert_eq!(<refund_order as mcpeye::handwritten::Tool>::NAME, "refund");
}
