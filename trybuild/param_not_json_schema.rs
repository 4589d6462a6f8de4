/// `Deserialize` but no schema.
#[derive(serde::Deserialize)]
struct Filter {
    word: String,
}

/// Search the catalogue.
#[mcpeye::tool]
fn search(
    /// The filter.
    filter: Filter,
) -> String {
    filter.word
}

/// Search again.
#[mcpeye::tool]
fn search_again(mcpeye::Args(f): mcpeye::Args<Filter>) -> String {
    f.word
}

fn main() {}
