/// Search.
#[mcpeye::tool(name = "search", read_only, name = "find", read_only = false)]
fn search() {}

fn main() {}
