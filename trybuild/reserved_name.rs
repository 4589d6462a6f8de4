/// Ask for a capability.
#[mcpeye::tool]
fn mcpeye_request_capability() {}

/// Ask for a capability, again.
#[mcpeye::tool(name = "mcpeye_request_capability")]
fn ask() {}

fn main() {}
