/// Search.
#[mcpeye::tool(name = search, read_only = "yes", title, intent(false))]
fn search() {}

fn main() {}
