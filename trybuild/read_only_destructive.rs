/// Delete everything, but read-only.
#[mcpeye::tool(read_only, destructive)]
fn wipe() {}

/// Fine: destructive stated false.
#[mcpeye::tool(read_only, destructive = false)]
fn look() {}

fn main() {}
