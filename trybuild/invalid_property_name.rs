/// Look a user up.
#[mcpeye::tool]
fn lookup(
    /// The user's id.
    #[serde(rename = "user id")]
    user_id: String,
    /// A very long name.
    #[serde(rename = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")]
    other: u32,
) -> String {
    format!("{user_id}{other}")
}

fn main() {}
