/// Search the catalogue.
#[mcpeye::tool(readonly, destrutive, colour = "red")]
fn search() {}

fn main() {}
