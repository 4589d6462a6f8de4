#[mcpeye::tool]
fn ping() -> String {
    "pong".into()
}

fn main() {}
