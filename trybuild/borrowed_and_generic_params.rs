/// Generic.
#[mcpeye::tool]
fn generic<T: ToString>(
    /// A value.
    value: u32,
) -> u32 {
    value
}

/// Borrowed.
#[mcpeye::tool]
fn borrowed(
    /// A name.
    name: &str,
    /// Some ids.
    ids: &[u64],
    /// Options.
    opts: Option<&'static String>,
    /// Anything.
    anything: impl Into<String>,
) -> String {
    format!("{name}{ids:?}{opts:?}{}", anything.into())
}

fn main() {}
