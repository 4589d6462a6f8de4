mod billing {
    /// Refund an order.
    #[mcpeye::tool]
    pub fn refund() {}
}

mod shop {
    /// Refund a cart.
    #[mcpeye::tool]
    pub fn refund() {}
}

fn main() {
    let _ = mcpeye::tool_defs![billing::refund, shop::refund];
}
