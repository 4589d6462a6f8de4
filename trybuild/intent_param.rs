/// Search the catalogue.
#[mcpeye::tool]
fn search(
    /// Why the agent calls this.
    mcpeye_intent: String,
    /// Also why.
    #[serde(rename = "mcpeyeIntent")]
    why: String,
) -> String {
    format!("{mcpeye_intent} {why}")
}

fn main() {}
