/// Neither `Deserialize` nor `JsonSchema`.
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

/// A schema but no `Deserialize`, as a whole arguments object.
#[derive(schemars::JsonSchema)]
struct Query {
    /// Words.
    words: String,
}

/// Search again.
#[mcpeye::tool]
fn search_again(mcpeye::Args(q): mcpeye::Args<Query>) -> String {
    q.words
}

fn main() {}
