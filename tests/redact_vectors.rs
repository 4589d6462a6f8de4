//! Redaction and caps against the shared vectors (docs/wire-format.md#caps, #redaction), plus the properties the
//! vectors do not pin down: idempotence, borrowing, JavaScript whitespace and word boundaries,
//! depth, denylist extras, exact cap boundaries, and the prefilter never changing an output.

use mcpeye::contract::{markers, MAX_TEXT_BYTES, MAX_TEXT_PRE_REDACT_BYTES, MAX_VALUE_BYTES, TRUNCATED_SUFFIX};
use mcpeye::redact::{redact_string, redact_value, Redactor};
use mcpeye::testing::redact::{cap_value, compact_json_len, redact_string_unfiltered, truncated_marker};
use serde_json::{json, Value};
use std::borrow::Cow;

#[path = "../benches/common/corpus.rs"]
mod corpus;

const VECTORS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/vectors/");

fn load(name: &str) -> Vec<Value> {
    let path = format!("{VECTORS}{name}");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!("cannot read the test vector {path}: {e}; see tests/vectors/README.md for where it comes from")
    });
    match serde_json::from_str(&text) {
        Ok(Value::Array(cases)) => cases,
        other => panic!("{path}: expected a JSON array, got {other:?}"),
    }
}

fn string_cases() -> Vec<(String, String, String)> {
    load("redact_string.json")
        .into_iter()
        .map(|c| {
            let field = |k: &str| c[k].as_str().unwrap_or_else(|| panic!("{k} in {c}")).to_owned();
            (field("case"), field("input"), field("expected"))
        })
        .collect()
}

/// Shortens long values in failure reports.
fn short(v: &impl std::fmt::Display) -> String {
    let s = v.to_string();
    if s.len() <= 300 {
        s
    } else {
        let head = mcpeye::testing::redact::cut_at_char_boundary(&s, 200);
        format!("{head}… ({} bytes)", s.len())
    }
}

#[test]
fn redact_string_vectors() {
    let cases = string_cases();
    assert_eq!(cases.len(), 82, "vector file changed");
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|(name, input, expected)| {
            let got = redact_string(input);
            (got != expected.as_str())
                .then(|| format!("{name}: input {input:?}\n  expected {expected:?}\n  got      {got:?}"))
        })
        .collect();
    assert!(failures.is_empty(), "{} of {} cases fail:\n{}", failures.len(), cases.len(), failures.join("\n"));
}

#[test]
fn redact_value_vectors() {
    let cases = load("redact_value.json");
    assert_eq!(cases.len(), 37, "vector file changed");
    let mut failures = Vec::new();
    for c in &cases {
        let name = c["case"].as_str().unwrap_or("?");
        let extras: Vec<String> = c
            .get("denylist_fields")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).map(str::to_owned).collect())
            .unwrap_or_default();
        let input = c["input"].clone();
        let got = match c["fn"].as_str() {
            Some("redact_value") => {
                let refs: Vec<&str> = extras.iter().map(String::as_str).collect();
                redact_value(&input, &refs)
            }
            Some("guard_and_redact") => Redactor::new(true, &extras).value(input),
            Some("guard_error_message") => match input {
                Value::String(s) => Value::String(Redactor::new(true, &extras).text(s)),
                other => panic!("{name}: text input expected, got {other}"),
            },
            other => panic!("{name}: unknown fn {other:?}"),
        };
        if got != c["expected"] {
            failures.push(format!("{name}: expected {}\n  got {}", short(&c["expected"]), short(&got)));
        }
    }
    assert!(failures.is_empty(), "{} of {} cases fail:\n{}", failures.len(), cases.len(), failures.join("\n"));
}

#[test]
fn redaction_is_idempotent_on_vector_inputs() {
    for (name, input, _) in string_cases() {
        let once = redact_string(&input).into_owned();
        assert_eq!(redact_string(&once), once.as_str(), "{name}");
    }
    for c in load("redact_value.json").iter().filter(|c| c["fn"] == "redact_value") {
        let once = redact_value(&c["input"], &[]);
        assert_eq!(redact_value(&once, &[]), once, "{}", c["case"]);
    }
}

#[test]
fn clean_input_is_borrowed() {
    let mut clean = 0;
    for (name, input, expected) in string_cases() {
        if input == expected {
            clean += 1;
            assert!(matches!(redact_string(&input), Cow::Borrowed(_)), "{name}");
        } else {
            assert!(matches!(redact_string(&input), Cow::Owned(_)), "{name}");
        }
    }
    assert!(clean > 20);
    // Triggers that do not complete a match still borrow.
    for s in ["sk-short", "a@b", "12345 67890 12", "Bearer short", "eyJ.x.y", "AKIA", "ghp_x"] {
        assert!(matches!(redact_string(s), Cow::Borrowed(_)), "{s}");
    }
}

/// ECMA-262 WhiteSpace and LineTerminator: what `\s` matches in the reference.
const JS_WHITESPACE: &[char] = &[
    '\t', '\n', '\u{B}', '\u{C}', '\r', ' ', '\u{A0}', '\u{1680}', '\u{2000}', '\u{2001}', '\u{2002}', '\u{2003}',
    '\u{2004}', '\u{2005}', '\u{2006}', '\u{2007}', '\u{2008}', '\u{2009}', '\u{200A}', '\u{2028}', '\u{2029}',
    '\u{202F}', '\u{205F}', '\u{3000}', '\u{FEFF}',
];

#[test]
fn bearer_and_phone_use_javascript_whitespace() {
    for &ws in JS_WHITESPACE {
        let s = format!("Bearer{ws}abcdefghijklmnop");
        assert_eq!(redact_string(&s), markers::BEARER, "U+{:04X}", ws as u32);
        let s = format!("BEARER{ws}{ws}abcdefghijklmnop!");
        assert_eq!(redact_string(&s), format!("{}!", markers::BEARER), "U+{:04X}", ws as u32);
        let phone = format!("415{ws}555{ws}0123");
        assert_eq!(redact_string(&phone), markers::PHONE, "U+{:04X}", ws as u32);
    }
    // Python's \s has these, JavaScript's does not; U+180E and U+200B are not spaces since Unicode 6.3.
    for ws in ['\u{85}', '\u{1C}', '\u{1D}', '\u{1E}', '\u{1F}', '\u{180E}', '\u{200B}'] {
        let s = format!("Bearer{ws}abcdefghijklmnop");
        assert_eq!(redact_string(&s), s.as_str(), "U+{:04X}", ws as u32);
    }
}

#[test]
fn case_insensitivity_is_ascii_only() {
    assert_eq!(redact_string("bEaReR abcdefghijklmnop"), markers::BEARER);
    // ſ (U+017F, long s) and U+212A (Kelvin sign) fold to ASCII letters only under Unicode case folding.
    for s in ["Bearer ſſſſſſſſſſſſ", "Bearer abc\u{212A}defghijklm", "ſk-ABCDEFGHIJKLMNOP1234", "Bearer abcdefghijkſ"]
    {
        assert_eq!(redact_string(s), s, "{s}");
    }
}

#[test]
fn word_boundaries_and_digits_are_ascii() {
    // A non-ASCII character is a non-word character on either side of a secret.
    for (input, expected) in [
        ("é sk-ABCDEFGHIJKLMNOP1234", "é [REDACTED_KEY]"),
        ("éghp_ABCDEFGHIJKLMNOPQRST", "é[REDACTED_KEY]"),
        ("ΩAKIAABCDEFGHIJKLMNOPΩ", "Ω[REDACTED_KEY]Ω"),
        ("Ωbearer abcdefghijklmnopΩ", "ΩBearer [REDACTED_KEY]Ω"),
        ("日eyJhbGciOiJI.eyJzdWIiOiAx.SflKxwRJSMabc日", "日[REDACTED_JWT]日"),
        ("№4111111111111111№", "№[REDACTED_CARD]№"),
        ("тел4155550123тел", "тел[REDACTED_PHONE]тел"),
        // ... but an ASCII letter, digit or underscore is a word character.
        ("xsk-ABCDEFGHIJKLMNOP1234", "xsk-ABCDEFGHIJKLMNOP1234"),
        ("_AKIAABCDEFGHIJKLMNOP", "_AKIAABCDEFGHIJKLMNOP"),
        ("4111111111111111_", "4111111111111111_"),
    ] {
        assert_eq!(redact_string(input), expected, "{input}");
    }
    // Non-ASCII digits are not \d.
    for s in ["٤١١١١١١١١١١١١١١١", "४१५५५५०१२३४", "４１５５５５０１２３"]
    {
        assert_eq!(redact_string(s), s, "{s}");
    }
}

fn nested_arrays(depth: usize, leaf: Value) -> Value {
    (0..depth).fold(leaf, |v, _| Value::Array(vec![v]))
}

#[test]
fn depth_marker_and_very_deep_input() {
    // depth 63 passes, 64 is replaced, for objects as for arrays
    let obj = |depth: usize| (0..depth).fold(json!({}), |v, _| json!({ "n": v }));
    assert_eq!(redact_value(&obj(63), &[]), obj(63));
    let mut expected = json!(markers::TOO_DEEP);
    for _ in 0..64 {
        expected = json!({ "n": expected });
    }
    assert_eq!(redact_value(&obj(64), &[]), expected);

    // Far deeper than any stack allows for naive recursion: bounded work, no overflow.
    let deep = nested_arrays(300_000, json!("a@b.com"));
    let out = redact_value(&deep, &[]);
    assert_eq!(out, nested_arrays(64, json!(markers::TOO_DEEP)));
    assert_eq!(Redactor::default().value(deep), truncated_marker(600_009));
    let shallow_but_deep = nested_arrays(10_000, json!(1)); // 20 001 bytes: under the cap
    let out = Redactor::default().value(shallow_but_deep);
    assert_eq!(out, nested_arrays(64, json!(markers::TOO_DEEP)));
    mcpeye::testing::drop_deep(out);
}

#[test]
fn denylist_extras_add_to_defaults() {
    let r = Redactor::new(true, &["SSN".to_owned(), "Clé".to_owned()]);
    let v = json!({
        "ssn": 123, "CLÉ": {"x": 1}, "password": "p", "ssn_hash": "h",
        "nested": [{"Ssn": [1, 2]}, {"TO\u{212A}EN": "kelvin sign lowercases to k"}]
    });
    let expected = json!({
        "ssn": markers::FIELD, "CLÉ": markers::FIELD, "password": markers::FIELD, "ssn_hash": "h",
        "nested": [{"Ssn": markers::FIELD}, {"TO\u{212A}EN": markers::FIELD}]
    });
    assert_eq!(r.value(v.clone()), expected);
    assert_eq!(redact_value(&v, &["ssn", "clé"]), expected);
    // Without the extras only the defaults apply.
    assert_eq!(redact_value(&v, &[])["ssn"], json!(123));
    assert_eq!(Redactor::default().value(v)["CLÉ"], json!({"x": 1}));
}

#[test]
fn value_cap_boundary() {
    // {"b":"…"} is 8 bytes around the string
    let at = json!({ "b": "y".repeat(MAX_VALUE_BYTES - 8) });
    assert_eq!(compact_json_len(&at), MAX_VALUE_BYTES);
    assert_eq!(cap_value(at.clone()), at);
    let over = json!({ "b": "y".repeat(MAX_VALUE_BYTES - 7) });
    assert_eq!(cap_value(over), truncated_marker(MAX_VALUE_BYTES + 1));
    // bytes, not chars; escapes count
    let cjk = json!("界".repeat(MAX_VALUE_BYTES / 3 + 1)); // 32769 bytes of UTF-8, 10923 chars
    assert_eq!(Redactor::default().value(cjk), truncated_marker(MAX_VALUE_BYTES + 3));
    let escaped = json!("\n".repeat(MAX_VALUE_BYTES / 2));
    assert_eq!(Redactor::default().value(escaped), truncated_marker(MAX_VALUE_BYTES + 2));
    // markers are not redacted, even by a denylist that names their keys
    let r = Redactor::new(true, &["bytes".to_owned(), "[truncated]".to_owned()]);
    assert_eq!(r.value(json!("y".repeat(MAX_VALUE_BYTES))), truncated_marker(MAX_VALUE_BYTES + 2));
}

#[test]
fn text_cap_boundaries() {
    let r = Redactor::default();
    let at = "e".repeat(MAX_TEXT_BYTES);
    assert_eq!(r.text(at.clone()), at);
    let over = r.text("e".repeat(MAX_TEXT_BYTES + 1));
    assert_eq!(over.len(), MAX_TEXT_BYTES);
    assert!(over.ends_with(TRUNCATED_SUFFIX));
    assert_eq!(&over[..MAX_TEXT_BYTES - TRUNCATED_SUFFIX.len()], &at[..MAX_TEXT_BYTES - TRUNCATED_SUFFIX.len()]);

    // A 3-byte char across the cut at 32754 bytes is dropped whole.
    let keep = MAX_TEXT_BYTES - TRUNCATED_SUFFIX.len();
    let s = format!("{}界{}", "a".repeat(keep - 1), "b".repeat(100));
    let out = r.text(s);
    assert_eq!(out, format!("{}{TRUNCATED_SUFFIX}", "a".repeat(keep - 1)));
    assert_eq!(out.len(), MAX_TEXT_BYTES - 1);

    // The first cut (before redaction) also respects char boundaries: 36864 falls inside 🔑.
    let s = format!("{}🔑{}", "a".repeat(MAX_TEXT_PRE_REDACT_BYTES - 2), "c".repeat(10));
    let r_off = Redactor::new(false, &[]);
    assert!(r_off.text(s).ends_with(TRUNCATED_SUFFIX));

    // Redaction shrinking the text below the cap leaves it uncut.
    let s = format!("{} {}", "x".repeat(MAX_TEXT_BYTES - 40), "alice.smith@example.com".repeat(3));
    assert!(s.len() > MAX_TEXT_BYTES - 1);
    let out = r.text(s);
    assert!(out.len() <= MAX_TEXT_BYTES && out.ends_with(markers::EMAIL), "{}", &out[out.len() - 40..]);

    // Redaction happens before the final cut: a secret straddling 32754 is never half-shown.
    let s = format!("{} sk-ABCDEFGHIJKLMNOP1234 {}", "x".repeat(keep - 10), "y".repeat(5000));
    let out = r.text(s);
    assert!(!out.contains("sk-"), "{}", &out[out.len() - 40..]);
}

/// The prefilter only skips work: on any input the output equals running all nine patterns.
#[test]
fn prefilter_never_changes_the_output() {
    let pieces = [
        "a@b.com",
        "x.y+z@mail.co.uk",
        "@",
        "@@",
        "a@",
        "@b.cc",
        "sk-",
        "sk-ant-",
        "ABCDEFGHIJKLMNOP",
        "1234",
        "ghp_",
        "gho_",
        "ghx_",
        "ABCDEFGHIJKLMNOPQRSTU",
        "AKIA",
        "ABCDEFGHIJKLMNOP",
        "Bearer",
        "bearer",
        "BEARER",
        "eyJ",
        "abcdefgh.",
        "abcdefghij",
        "4111",
        "1",
        "12",
        "555",
        "0123",
        "+1",
        "(415)",
        "-",
        "_",
        ".",
        " ",
        "  ",
        "\u{A0}",
        "\u{3000}",
        "\u{85}",
        "é",
        "界",
        "🔑",
        "\n",
        "]",
        "[REDACTED_KEY]",
        "x",
        "task",
        "ſ",
        "\u{212A}",
        "٤",
        "4111 ",
        "4111-",
        "0",
        "98765",
        "+44",
        "(",
        ")",
        ".",
        "\u{2009}",
        "1234567890",
        "  -",
    ];
    let mut rng = corpus::SplitMix64::new(0x5EED);
    let mut checked = 0;
    for case in 0..60_000 {
        let n = 1 + (rng.next_u64() % 14) as usize;
        let s: String = (0..n).map(|_| pieces[(rng.next_u64() % pieces.len() as u64) as usize]).collect();
        let fast = redact_string(&s);
        let all = redact_string_unfiltered(&s);
        assert_eq!(fast, all, "case {case}: {s:?}");
        checked += usize::from(all != s.as_str());
    }
    // The generator does produce secrets, so both paths are exercised.
    assert!(checked > 1_000, "only {checked} inputs held a secret");
    for (name, input, _) in string_cases() {
        assert_eq!(redact_string(&input), redact_string_unfiltered(&input), "{name}");
    }
}

/// The Rust port of shared/peer-bench/corpus.py builds the same bytes as the Python original.
/// Reference figures from `python3` on corpus.py: JSON size (order-independent), doc count,
/// and FNV-1a 64 of the compact JSON, keys in insertion order as Python's `dumps` writes them, and
/// of bench_redact.py's joined text.
#[test]
fn corpus_port_matches_python() {
    for (rate, json_bytes, docs, json_fnv, text_len, text_fnv, markers) in [
        (0.01, 1_000_973, 906, 0x6a28_4aff_dba3_c3a7u64, 949_352, 0x8745_04eb_af95_de68u64, 1299),
        (0.0, 1_000_982, 907, 0x8d5b_7c21_1ffa_cd85, 949_229, 0xb73a_2143_9f2b_d468, 0),
    ] {
        let c = corpus::build_corpus(corpus::TARGET_BYTES, rate);
        let raw = serde_json::to_vec(&c).unwrap();
        assert_eq!(raw.len(), json_bytes, "rate {rate}");
        assert_eq!(c["docs"].as_array().map(Vec::len), Some(docs), "rate {rate}");
        assert_eq!(corpus::fnv1a64(&raw), json_fnv, "rate {rate}");
        let text = corpus::corpus_text(&c);
        assert_eq!((text.len(), corpus::fnv1a64(text.as_bytes())), (text_len, text_fnv), "rate {rate}");
        let fields = corpus::corpus_fields(&c);
        assert_eq!(fields.len(), 34, "rate {rate}");
        // The Python SDK (which agrees with the reference on ASCII) puts 1299 markers in the
        // mixed corpus (bench_redact.py's "redaction_markers_in_output").
        let redacted = serde_json::to_string(&redact_value(&c, &[])).unwrap();
        assert_eq!(redacted.matches("[REDACTED_").count(), markers, "rate {rate}");
    }
}
