/// Look a user up.
#[mcpeye::tool]
fn lookup(
    /// The user's id.
    id: String,
    /// The account's id.
    #[serde(rename = "id")]
    account_id: String,
) -> String {
    format!("{id}{account_id}")
}

fn main() {}
