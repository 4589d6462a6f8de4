/// A plain `fn` cannot be interrupted.
#[mcpeye::tool(timeout_ms = 5000)]
fn sync_tool() {}

/// Zero would time out every call.
#[mcpeye::tool(timeout_ms = 0)]
async fn zero() {}

/// Over a day.
#[mcpeye::tool(timeout_ms = 86_400_001)]
async fn too_long() {}

/// Not a number of milliseconds.
#[mcpeye::tool(timeout_ms = "5s")]
async fn text() {}

fn main() {}
