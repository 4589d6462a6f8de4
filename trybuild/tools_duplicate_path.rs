/// Ping.
#[mcpeye::tool]
fn ping() {}

fn main() {
    let _ = mcpeye::tool_defs![ping, ping];
}
