use mcpeye::Context;

/// Import rows: a second `Context` is refused, and so is a borrowed one.
#[mcpeye::tool]
async fn import(
    /// The rows.
    rows: Vec<String>,
    ctx: Context,
    again: Context,
) -> usize {
    let _ = (ctx, again);
    rows.len()
}

/// Export rows.
#[mcpeye::tool]
fn export(ctx: &Context) {
    let _ = ctx;
}

fn main() {}
