//! Rust port of `shared/peer-bench/corpus.py`: the deterministic corpus that the Python peer's
//! `bench_redact.py` redacts, so both SDKs are measured on the same bytes.
//!
//! PRNG = splitmix64 seeded with `0x6D63706579650001`; a token is a secret with probability
//! `secret_rate` (hit iff `next() >> 11 < trunc(p * 2^53)`); a text grows token by token until
//! it reaches `min_bytes`, every 12th token followed by `". "`; docs are added until the compact
//! JSON reaches `target_bytes`. The JSON length does not depend on key order, so the
//! `BTreeMap`-ordered `Value` serialises to as many bytes as the Python dict.
#![allow(dead_code)] // each includer uses a different part

use serde_json::{json, Value};

/// The corpus' default size in bytes of compact JSON.
pub const TARGET_BYTES: usize = 1_000_000;
/// The default seed.
pub const SEED: u64 = 0x6D63_7065_7965_0001;

const WORDS: &str = "the quick brown fox jumps over lazy dog user wants report export weather forecast \
order status shipping invoice customer account search results page filter region \
analytics dashboard session intent tool server agent request response error retry \
timeout cache database query index schema migration deploy release build test review \
comment ticket priority label milestone project team meeting calendar schedule summary";

const SECRETS: [&str; 9] = [
    "alice.smith@example.com",
    "sk-ant-api03-ABCDEFGHIJKLMNOPqrstuv",
    "sk-proj-ABCDEFGHIJKLMNOP1234",
    "ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123",
    "AKIAIOSFODNN7EXAMPLE",
    "Bearer abcdef1234567890XYZ",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
    "4111 1111 1111 1111",
    "+1 415-555-0123",
];

/// splitmix64, all arithmetic mod 2^64.
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn hit(&mut self, p: f64) -> bool {
        (self.next_u64() >> 11) < (p * (1u64 << 53) as f64) as u64
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[(self.next_u64() % items.len() as u64) as usize]
    }
}

fn words() -> Vec<&'static str> {
    WORDS.split(' ').collect()
}

fn token(rng: &mut SplitMix64, words: &[&'static str], secret_rate: f64) -> &'static str {
    if secret_rate > 0.0 && rng.hit(secret_rate) {
        return rng.pick(&SECRETS);
    }
    rng.pick(words)
}

fn text(rng: &mut SplitMix64, words: &[&'static str], min_bytes: usize, secret_rate: f64) -> String {
    let mut out = String::new();
    let mut i = 0;
    while out.len() < min_bytes {
        out.push_str(token(rng, words, secret_rate));
        i += 1;
        out.push_str(if i % 12 == 0 { ". " } else { " " });
    }
    // Python's str.rstrip(): the texts hold ASCII only, so ASCII whitespace is enough.
    out.truncate(out.trim_end_matches(|c: char| c.is_ascii_whitespace()).len());
    out
}

/// `build_corpus(target_bytes, secret_rate)` of corpus.py: `{"docs": [{id, title, body, tags}]}`.
pub fn build_corpus(target_bytes: usize, secret_rate: f64) -> Value {
    let words = words();
    let mut rng = SplitMix64::new(SEED);
    let mut docs = Vec::new();
    let mut size = br#"{"docs":[]}"#.len();
    let mut i = 0u64;
    while size < target_bytes {
        let title = text(&mut rng, &words, 40, secret_rate);
        let body = text(&mut rng, &words, 1000, secret_rate);
        let tags = [rng.pick(&words), rng.pick(&words)];
        let doc = json!({"id": i, "title": title, "body": body, "tags": tags});
        size += compact_len(&doc) + usize::from(i > 0);
        docs.push(doc);
        i += 1;
    }
    json!({ "docs": docs })
}

/// Compact JSON length, as Python's `len(dumps(value))`.
pub fn compact_len(value: &Value) -> usize {
    serde_json::to_vec(value).map(|v| v.len()).unwrap_or(0)
}

/// The text bench_redact.py feeds to `redact_string`: every doc's title and body, `\n`-joined.
pub fn corpus_text(corpus: &Value) -> String {
    let docs = corpus["docs"].as_array().map(Vec::as_slice).unwrap_or_default();
    let parts: Vec<String> = docs
        .iter()
        .map(|d| format!("{}\n{}", d["title"].as_str().unwrap_or(""), d["body"].as_str().unwrap_or("")))
        .collect();
    parts.join("\n")
}

/// bench_redact.py's per-field split: consecutive docs grouped into arrays of at most ~30 KB of
/// compact JSON (the real path of a tool call's arguments through cap + redaction).
pub fn corpus_fields(corpus: &Value) -> Vec<Value> {
    const LIMIT: usize = 30_000;
    let docs = corpus["docs"].as_array().map(Vec::as_slice).unwrap_or_default();
    let mut fields = Vec::new();
    let mut cur: Vec<Value> = Vec::new();
    let mut cur_len = 2; // "[]"
    for d in docs {
        let dl = compact_len(d);
        let with = cur_len + dl + usize::from(!cur.is_empty());
        if with > LIMIT {
            // as in Python, even an empty group would be pushed (no doc is anywhere near 30 KB)
            fields.push(Value::Array(std::mem::take(&mut cur)));
            cur_len = 2 + dl;
        } else {
            cur_len = with;
        }
        cur.push(d.clone());
    }
    if !cur.is_empty() {
        fields.push(Value::Array(cur));
    }
    fields
}

/// 64-bit FNV-1a, to compare the corpus with the one corpus.py builds.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}
