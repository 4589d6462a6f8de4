/// Ping.
#[mcpeye::tool]
fn ping() {}

fn pong() {}

fn main() {
    let _ = mcpeye::tool_defs![ping, pong];
}
