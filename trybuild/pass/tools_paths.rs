mod billing {
    pub mod orders {
        /// Refund an order.
        #[mcpeye::tool]
        pub fn refund() {}
    }
}

mod shop {
    /// Refund a cart, under another name.
    #[mcpeye::tool(name = "refund_cart")]
    pub(crate) fn refund() {}

    /// No parameters at all, raw identifier.
    #[mcpeye::tool]
    pub fn r#match() {}
}

fn main() {
    let defs = mcpeye::tool_defs![billing::orders::refund, shop::refund, crate::shop::r#match];
    let names: Vec<&str> = defs.iter().map(|d| d.name).collect();
    assert_eq!(names, ["refund", "refund_cart", "match"]);
    // Built lazily: only checks that these forms compile.
    let _all = || mcpeye::tools!();
    let _some = || mcpeye::tools![billing::orders::refund, shop::refund];
    let _builder = || mcpeye::Manifest::builder().tools(mcpeye::tool_defs![shop::refund]).state(5u32).build();
}
