/// Send feedback.
#[mcpeye::tool]
fn mcpeye_send_feedback() {}

/// Send feedback, again.
#[mcpeye::tool(name = "mcpeye_send_feedback")]
fn feedback() {}

fn main() {}
