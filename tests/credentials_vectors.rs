//! The credential layer beyond the contract (docs/wire-format.md#credentials) and the opt-in Luhn
//! check, against this SDK's own vectors (`tests/vectors/credentials_*.json`; the shared files
//! are not touched): each rule with positive and negative cases, through [`Redactor::text`] and
//! [`Redactor::value`], and the switch that turns the layer off for the siblings' bytes.

use mcpeye::redact::{redact_string, redact_value, Redactor};
use serde_json::{json, Value};

const VECTORS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/vectors/");

fn load(name: &str) -> Vec<Value> {
    let path = format!("{VECTORS}{name}");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"));
    match serde_json::from_str(&text) {
        Ok(Value::Array(cases)) => cases,
        other => panic!("{path}: expected a JSON array, got {other:?}"),
    }
}

fn layered() -> Redactor {
    Redactor::new(true, &[]).credentials(true)
}

fn field<'a>(c: &'a Value, k: &str) -> &'a str {
    c[k].as_str().unwrap_or_else(|| panic!("{k} in {c}"))
}

#[test]
fn string_vectors() {
    let cases = load("credentials_strings.json");
    assert_eq!(cases.len(), 99, "vector file changed");
    let r = layered();
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|c| {
            let (name, input, expected) = (field(c, "case"), field(c, "input"), field(c, "expected"));
            let text = r.text(input.to_owned());
            let value = r.value(json!({ "q": input }));
            (text != expected || value != json!({ "q": expected })).then(|| {
                format!("{name}: input {input:?}\n  expected {expected:?}\n  text     {text:?}\n  value    {value}")
            })
        })
        .collect();
    assert!(failures.is_empty(), "{} of {} failed:\n{}", failures.len(), cases.len(), failures.join("\n"));
}

/// A clean corpus of tool arguments and results (prose, code, URLs, JSON, logs, tables; this
/// SDK's own, `credentials_clean.json`): the layer replaces nothing the siblings' rules leave.
#[test]
fn the_clean_corpus_is_left_alone() {
    let docs = load("credentials_clean.json");
    assert_eq!(docs.len(), 50, "corpus file changed");
    let r = layered();
    let changed: Vec<String> = docs
        .iter()
        .filter_map(|d| {
            let text = field(d, "text");
            let (layered, siblings) = (r.text(text.to_owned()), redact_string(text));
            (layered != siblings).then(|| format!("{}: {text:?}\n  -> {layered:?}", field(d, "kind")))
        })
        .collect();
    assert!(
        changed.is_empty(),
        "the layer replaced text in {} of {} clean documents:\n{}",
        changed.len(),
        docs.len(),
        changed.join("\n")
    );
}

/// Every vendor group the layer names has vectors.
#[test]
fn every_vendor_group_is_covered() {
    let cases = load("credentials_strings.json");
    let mut groups: Vec<&str> = cases.iter().filter_map(|c| c["vendor"].as_str()).collect();
    groups.sort_unstable();
    groups.dedup();
    assert_eq!(groups, ["chat", "ci", "cloud", "llm", "messaging", "others", "packages", "payment", "vcs"]);
}

#[test]
fn value_vectors() {
    let cases = load("credentials_values.json");
    assert_eq!(cases.len(), 12, "vector file changed");
    let r = layered();
    for c in &cases {
        assert_eq!(r.value(c["input"].clone()), c["expected"], "{}", c["case"]);
    }
}

/// With the layer off, a redactor gives exactly the siblings' redaction (what `redact_string` and
/// `redact_value` give) on every credential vector.
#[test]
fn switched_off_the_layer_is_the_siblings_redaction() {
    let off = Redactor::new(true, &[]);
    for c in load("credentials_strings.json") {
        let input = field(&c, "input");
        assert_eq!(off.text(input.to_owned()), redact_string(input), "{}", c["case"]);
    }
    for c in load("credentials_values.json") {
        assert_eq!(off.value(c["input"].clone()), redact_value(&c["input"], &[]), "{}", c["case"]);
    }
    // The URL: the sibling e-mail pattern eats the password and host, the token stays.
    let url = "https://admin:PASSWORD@db.internal/x?token=VALUE";
    assert_eq!(off.text(url.to_owned()), "https://admin:[REDACTED_EMAIL]/x?token=VALUE");
}

#[test]
fn luhn_vectors() {
    let cases = load("credentials_luhn.json");
    assert_eq!(cases.len(), 6, "vector file changed");
    let luhn = Redactor::new(true, &[]).luhn_cards(true);
    let both = layered().luhn_cards(true);
    for c in &cases {
        let (input, expected) = (field(c, "input"), field(c, "expected"));
        assert_eq!(luhn.text(input.to_owned()), expected, "{}", c["case"]);
        assert_eq!(both.value(json!([input])), json!([expected]), "{}", c["case"]);
    }
    // The default keeps the siblings' pattern: any 13 to 16 digits.
    assert_eq!(Redactor::new(true, &[]).text("order 1234567890123456".to_owned()), "order [REDACTED_CARD]");
}

/// The layer is idempotent and never touches what it made: redacting twice changes nothing.
#[test]
fn layered_output_is_a_fixed_point() {
    let r = layered();
    for c in load("credentials_strings.json") {
        let once = r.text(field(&c, "input").to_owned());
        assert_eq!(r.text(once.clone()), once, "{}", c["case"]);
    }
}

/// The prescan never changes an output: on thousands of strings made of the vectors' pieces (cut
/// anywhere, joined by separators), the redactor gives what the layer and all nine patterns give
/// without any prefilter.
#[test]
fn the_prefilter_never_changes_an_output() {
    use mcpeye::testing::redact::redact_string_layered_unfiltered;
    let pieces: Vec<String> = load("credentials_strings.json").iter().map(|c| field(c, "input").to_owned()).collect();
    let seps = [" ", "", "=", "_", "\n", "é", "://", "&", "-", "."];
    let r = layered();
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    for _ in 0..4000 {
        let mut s = String::new();
        for _ in 0..1 + next(3) {
            let p = &pieces[next(pieces.len())];
            let (a, b) = (next(p.len() + 1), next(p.len() + 1));
            let (a, b) = (a.min(b), a.max(b));
            if let Some(part) = p.get(a..b) {
                s.push_str(part);
            }
            s.push_str(seps[next(seps.len())]);
        }
        if s.len() >= 6 {
            assert_eq!(r.text(s.clone()), redact_string_layered_unfiltered(&s), "{s:?}");
        }
    }
}
