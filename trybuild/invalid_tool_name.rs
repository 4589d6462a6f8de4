/// Empty.
#[mcpeye::tool(name = "")]
fn a() {}

/// Too long.
#[mcpeye::tool(name = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")]
fn b() {}

/// A space.
#[mcpeye::tool(name = "get user")]
fn c() {}

/// Unicode from the function name.
#[mcpeye::tool]
fn café() {}

fn main() {}
