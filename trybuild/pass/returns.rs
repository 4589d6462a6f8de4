use mcpeye::CallToolResult;

#[derive(serde::Serialize)]
struct Report {
    total: u32,
}

/// Returns nothing.
#[mcpeye::tool]
fn unit() {}

/// Returns text.
#[mcpeye::tool]
fn text() -> String {
    String::new()
}

/// Returns a full result.
#[mcpeye::tool]
fn full() -> CallToolResult {
    CallToolResult::text("ok")
}

/// Returns a serialisable struct, or a boxed error.
#[mcpeye::tool]
fn report() -> Result<Report, Box<dyn std::error::Error + Send + Sync>> {
    Ok(Report { total: 3 })
}

/// Returns an io result through its alias.
#[mcpeye::tool]
async fn io() -> std::io::Result<u64> {
    Ok(1)
}

/// Returns an opaque serialisable value.
#[mcpeye::tool]
fn opaque() -> impl serde::Serialize {
    vec![1, 2]
}

fn main() {
    unit();
    let _ = (text(), full(), report(), io(), opaque());
}
