/// A struct.
#[mcpeye::tool]
struct Search {
    query: String,
}

fn main() {
    let _ = Search { query: String::new() }.query;
}
