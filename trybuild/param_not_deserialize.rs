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

fn main() {}
