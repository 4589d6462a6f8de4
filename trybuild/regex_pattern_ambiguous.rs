/// Look a code up.
#[mcpeye::tool]
fn lookup(
    /// Two branches that match the same text, repeated.
    #[schemars(regex(pattern = "^(a|a)*$"))]
    a: String,
    /// Two unbounded repetitions of the same character, repeated.
    #[schemars(regex(pattern = "^(?:x+x+)+y$"))]
    b: String,
    /// Fine: the branches match different text.
    #[schemars(regex(pattern = "^(foo|bar)+$"))]
    c: String,
) -> String {
    format!("{a}{b}{c}")
}

fn main() {}
