/// Empty.
#[mcpeye::tool(name = "")]
fn a() {}

/// Too long.
#[mcpeye::tool(name = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")]
fn b() {}

/// A space.
#[mcpeye::tool(name = "get user")]
fn c() {}

/// Several bad characters, each named once.
#[mcpeye::tool(name = "get user/by id")]
fn d() {}

/// Unicode from the function name.
#[mcpeye::tool]
fn café() {}

fn main() {}
