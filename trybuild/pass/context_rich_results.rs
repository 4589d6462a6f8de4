//! A sync and an async tool taking `Context`, rich results and structured output compile and run.

use mcpeye::{CallToolResult, Content, Context, LogLevel};

/// Count, reporting progress.
#[mcpeye::tool]
fn count(
    /// Up to.
    to: u32,
    ctx: Context,
) -> u32 {
    for i in 0..to {
        ctx.progress(f64::from(i), Some(f64::from(to)));
    }
    to
}

/// A picture and a link.
#[mcpeye::tool(timeout_ms = 1000, title = "Picture", icon = "https://example.com/p.svg")]
async fn picture(ctx: Context) -> CallToolResult {
    ctx.log(LogLevel::Info, "drawing");
    CallToolResult::new(vec![Content::image([1u8, 2, 3], "image/png"), Content::text("a picture")])
}

/// A total.
#[derive(serde::Serialize, schemars::JsonSchema)]
struct Total {
    /// The sum.
    sum: u64,
}

/// Sum numbers.
#[mcpeye::tool]
fn sum(
    /// The numbers.
    numbers: Vec<u64>,
) -> Result<Total, String> {
    Ok(Total { sum: numbers.iter().sum() })
}

fn main() {
    let manifest = mcpeye::tools![count, picture, sum];
    let list = manifest.tools_list();
    assert!(list[2]["outputSchema"].is_object());
    assert_eq!(manifest.call("sum", serde_json::json!({"numbers": [1, 2]}))["structuredContent"]["sum"], 3);
}
