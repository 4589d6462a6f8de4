/// Look a code up.
#[mcpeye::tool]
fn lookup(
    /// Does not parse.
    #[schemars(regex(pattern = "[a-z"))]
    a: String,
    /// Nested plus.
    #[schemars(regex(pattern = "^(a+)+$"))]
    b: String,
    /// Nested star, other syntax.
    #[schemars(pattern(r"^(\w*)*$"))]
    c: String,
    /// Fine: the inner repetition is delimited.
    #[schemars(regex(pattern = "^([a-z]+-)*[a-z]+$"))]
    d: String,
) -> String {
    format!("{a}{b}{c}{d}")
}

fn main() {}
