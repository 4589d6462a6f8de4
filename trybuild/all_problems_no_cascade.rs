#[mcpeye::tool(read_only, destructive, nmae = "x")]
fn search(
    query: String,
) -> String {
    query
}

fn main() {
    // The function and its marker still exist: no further errors here.
    let _ = search("mug".to_owned());
    let _ = mcpeye::tool_defs![search];
}
