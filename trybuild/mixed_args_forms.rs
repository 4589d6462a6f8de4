#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Refund {
    /// The order.
    order_id: String,
}

/// Refund an order.
#[mcpeye::tool]
fn refund(
    mcpeye::Args(req): mcpeye::Args<Refund>,
    /// The reason.
    reason: String,
) -> String {
    format!("{}{reason}", req.order_id)
}

fn main() {}
