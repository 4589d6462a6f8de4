/// Search the catalogue.
#[mcpeye::tool]
fn search(
    /// Words to look for.
    query: String,
    limit: Option<u32>,
) -> String {
    format!("{query} {limit:?}")
}

fn main() {}
