//! The credential layer beyond the siblings' nine patterns (docs/wire-format.md#credentials): URL
//! userinfo and credential-named parameters, vendor token formats, PEM private keys, long base64
//! runs, and high-entropy values under key-like names.
//!
//! It runs before the nine patterns (the e-mail pattern would otherwise take a URL's password
//! and host for an address) and only on strings the prescan flagged; each rule is further
//! gated by a literal it needs, so a flagged string without, say, `://` never meets the URL regex.

use crate::contract::markers;
use aho_corasick::AhoCorasick;
use regex::{Captures, Regex};
use std::borrow::Cow;
use std::sync::LazyLock;

/// Fewest characters of a base64 run replaced by [`markers::BINARY`] (about 384 bytes of
/// binary): shorter runs are ids, hashes and keys, which the other rules judge.
pub(crate) const BASE64_MIN_RUN: usize = 512;

/// Fewest characters of a value under a key-like name that the entropy rule looks at.
pub(crate) const ENTROPY_MIN_LEN: usize = 16;
/// Longest such value looked at: longer ones are text or data, not a credential.
pub(crate) const ENTROPY_MAX_LEN: usize = 512;
/// Shannon entropy, in bits per character, from which such a value counts as random.
pub(crate) const ENTROPY_MIN_BITS: f64 = 3.0;

fn compile(pattern: &str) -> Regex {
    // The patterns are constants covered by the vector tests; failing here is a build defect.
    Regex::new(pattern).expect("credential pattern compiles")
}

/// A PEM private-key block, or its head and body when the text was cut before its end line.
static PEM: LazyLock<Regex> = LazyLock::new(|| {
    compile(
        r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY[A-Z ]{0,10}-----(?s:.*?)-----END[A-Z0-9 ]{0,40}PRIVATE KEY[A-Z ]{0,10}-----|-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY[A-Z ]{0,10}-----[A-Za-z0-9+/=\s\\:,\-]*",
    )
});

/// `scheme://user:password@` (the password taken) or `scheme://user@` (the user taken: it is
/// often a token, as in `https://TOKEN@github.com`).
static USERINFO: LazyLock<Regex> =
    LazyLock::new(|| compile(r"(?-u:\b)([A-Za-z][A-Za-z0-9+.\-]{0,30}://)(?:([^\s/?#@:\[\]]*):)?([^\s/?#@\[\]]+)@"));

/// A credential-named `name=value` in a query, a fragment or a connection string: the name is
/// one of the words below, alone or as the last word of a `_`/`-`/`.`-joined name
/// (`access_token`, `x-amz-signature`, `AccountKey`…), compared case-insensitively.
static PARAM: LazyLock<Regex> = LazyLock::new(|| {
    compile(
        r"(^|[?&#;,\s]|&amp;)((?i-u:(?:[a-z0-9]+[_.\-]?)*?(?:token|secret|password|passwd|pwd|passphrase|apikey|api_key|api-key|key|sig|signature|credential|credentials|auth|jwt|sessionid|session_id|sid|code_verifier|client_assertion)))=([^&#;,\s\x22'<>\[]+)",
    )
});

/// Vendor token formats, each led by a literal prefix (gitleaks-style rules; docs/wire-format.md
/// lists them by vendor): the prefixes, then the rule. The contract's own `sk-`, `gh?_`, `AKIA`,
/// `Bearer` and JWT patterns are not repeated here.
const VENDOR_RULES: [(&[&str], &str); 42] = [
    // payment: Stripe secret, restricted and webhook keys; Square; Braintree
    (&["k_live_", "k_test_"], r"(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{20,}"),
    (&["whsec_"], r"whsec_[0-9A-Za-z]{24,}"),
    (&["sq0"], r"sq0(?:atp|csp)-[0-9A-Za-z_\-]{22,}"),
    (&["access_token$production$"], r"access_token\$production\$[0-9a-z]{16}\$[0-9a-f]{32}"),
    // chat: Slack bot, user, app and config tokens
    (&["xox"], r"xox[abposre]-[0-9A-Za-z\-]{10,}"),
    (&["xapp-"], r"xapp-[0-9]-[0-9A-Za-z\-]{10,}"),
    // cloud: Google API key and OAuth client secret, AWS temporary key id, DigitalOcean, Vault,
    // Doppler, Heroku, Supabase, Age
    (&["AIza"], r"AIza[0-9A-Za-z_\-]{35}"),
    (&["GOCSPX-"], r"GOCSPX-[0-9A-Za-z_\-]{28}"),
    (&["ASIA"], r"ASIA[0-9A-Z]{16}"),
    (&["_v1_"], r"do[opr]_v1_[0-9a-f]{64}"),
    (&["hvs.", "hvb."], r"hv[sb]\.[0-9A-Za-z_\-]{24,}"),
    (&["dp."], r"dp\.(?:pt|st|sa|ct|scim|audit)\.[0-9A-Za-z]{40,}"),
    (&["HRKU-"], r"HRKU-[0-9A-Za-z_\-]{40,}"),
    (&["sbp_"], r"sbp_[0-9a-f]{40}"),
    (&["AGE-SECRET-KEY-1"], r"AGE-SECRET-KEY-1[0-9A-Z]{58}"),
    // VCS: GitHub fine-grained tokens, GitLab tokens, Atlassian
    (&["github_pat_"], r"github_pat_[0-9A-Za-z_]{22,}"),
    (
        &[
            "glpat-", "glptt-", "gldt-", "glrt-", "glrtr-", "glcbt-", "glsoat-", "glft-", "glimt-", "gloas-",
            "glagent-", "glwt-",
        ],
        r"gl(?:pat|ptt|dt|rt|rtr|cbt|soat|ft|imt|oas|agent|wt)-[0-9A-Za-z_\-]{20,}",
    ),
    (&["ATATT3"], r"ATATT3[0-9A-Za-z_=\-]{50,}"),
    // CI: CircleCI, Buildkite
    (&["CCIP"], r"CCIP(?:AT|RJ)_[0-9A-Za-z_]{20,}"),
    (&["bkua_"], r"bkua_[0-9a-f]{40}"),
    // LLM providers: Hugging Face, Groq, Replicate, xAI, Perplexity
    (&["hf_"], r"hf_[0-9A-Za-z]{30,}"),
    (&["gsk_"], r"gsk_[0-9A-Za-z]{40,}"),
    (&["r8_"], r"r8_[0-9A-Za-z]{30,}"),
    (&["xai-"], r"xai-[0-9A-Za-z]{40,}"),
    (&["pplx-"], r"pplx-[0-9A-Za-z]{32,}"),
    // packages: npm, PyPI, RubyGems, Docker Hub
    (&["npm_"], r"npm_[0-9A-Za-z]{36}"),
    (&["pypi-AgEIcHlwaS5vcmc"], r"pypi-AgEIcHlwaS5vcmc[0-9A-Za-z_\-]{50,}"),
    (&["rubygems_"], r"rubygems_[0-9a-f]{48}"),
    (&["dckr_pat_"], r"dckr_pat_[0-9A-Za-z_\-]{20,}"),
    // messaging and others: Twilio, SendGrid, Mailgun, Shopify, Postman, New Relic, Sentry,
    // Grafana, Linear, Notion
    (&["SK"], r"SK[0-9a-fA-F]{32}"),
    (&["SG."], r"SG\.[0-9A-Za-z_\-]{22}\.[0-9A-Za-z_\-]{43}"),
    (&["key-"], r"key-[0-9a-f]{32}"),
    (&["shp"], r"shp(?:at|ss|ca|pa)_[0-9a-fA-F]{32}"),
    (&["PMAK-"], r"PMAK-[0-9a-f]{24}-[0-9a-f]{34}"),
    (&["NRAK-"], r"NRAK-[0-9A-Z]{27}"),
    (&["sntry"], r"sntr(?:ys|yu)_[0-9A-Za-z_=+/]{30,}"),
    (&["glc_"], r"glc_[0-9A-Za-z+/]{32,}={0,2}"),
    (&["glsa_"], r"glsa_[0-9A-Za-z]{32}_[0-9a-f]{8}"),
    (&["lin_api_"], r"lin_api_[0-9A-Za-z]{40}"),
    (&["secret_", "ntn_"], r"(?:secret|ntn)_[0-9A-Za-z]{43,}"),
    // Azure AD client secrets (`…8Q~…`) and HTTP `Basic` credentials (the scheme kept).
    (&["Q~"], r"[0-9A-Za-z_~.\-]{3}[0-9]Q~[0-9A-Za-z_~.\-]{31,34}"),
    (&["Basic"], r"Basic[ \t]+[A-Za-z0-9+/]{12,}={0,2}"),
];

// The rules present in a string are a `u64` of bits.
const _: () = assert!(VENDOR_RULES.len() <= 64);

/// One search for every vendor prefix at once (SIMD for up to 64 short literals), so that only
/// the rules whose prefix occurs run their regex: one regex of all the rules had no usable
/// literal prefilter and scanned a flagged string at a few hundred MB/s.
static VENDOR: LazyLock<(AhoCorasick, Vec<usize>, Vec<Regex>)> = LazyLock::new(|| {
    let mut literals = Vec::new();
    let mut rule_of = Vec::new();
    let mut regexes = Vec::new();
    for (i, (prefixes, rule)) in VENDOR_RULES.iter().enumerate() {
        for p in prefixes.iter() {
            literals.push(*p);
            rule_of.push(i);
        }
        // A rule ending in base64 padding ends where the padding does, without a boundary.
        let end = if rule.ends_with("={0,2}") { "" } else { r"(?-u:\b)" };
        regexes.push(compile(&format!(r"(?-u:\b){rule}{end}")));
    }
    // The literals are constants: failing here is a build defect.
    let ac = AhoCorasick::new(&literals).expect("vendor prefixes build a searcher");
    (ac, rule_of, regexes)
});

/// The marker of vendor rule `i`.
fn vendor_marker(i: usize) -> &'static str {
    if VENDOR_RULES[i].1.starts_with("Basic") {
        markers::BASIC
    } else {
        markers::KEY
    }
}

/// A Discord bot token: three base64url parts with the lengths of its id, time and HMAC.
static DISCORD: LazyLock<Regex> =
    LazyLock::new(|| compile(r"(?-u:\b)[MNO][0-9A-Za-z_\-]{23,25}\.[0-9A-Za-z_\-]{6}\.[0-9A-Za-z_\-]{27,38}(?-u:\b)"));

/// Fewest characters of a Discord token.
const DISCORD_MIN: usize = 59;

/// Applies the credential layer to `s`: `Cow::Borrowed` when nothing matched.
pub(crate) fn apply(s: &str) -> Cow<'_, str> {
    let mut out = Cow::Borrowed(s);
    if s.contains("-----BEGIN") {
        replace(&mut out, &PEM, markers::PRIVATE_KEY);
    }
    if out.contains("://") {
        if let Cow::Owned(new) = USERINFO.replace_all(&out, |c: &Captures<'_>| {
            let scheme = &c[1];
            match c.get(2) {
                Some(user) => format!("{scheme}{}:{}@", user.as_str(), markers::URL_CREDENTIAL),
                None => format!("{scheme}{}@", markers::URL_CREDENTIAL),
            }
        }) {
            out = Cow::Owned(new);
        }
    }
    if out.contains('=') {
        if let Cow::Owned(new) =
            PARAM.replace_all(&out, |c: &Captures<'_>| format!("{}{}={}", &c[1], &c[2], markers::URL_CREDENTIAL))
        {
            out = Cow::Owned(new);
        }
    }
    let (ac, rule_of, regexes) = &*VENDOR;
    // The rules whose prefix occurs, a bit each, found in one pass.
    let mut present = 0u64;
    // Non-overlapping: in a real token no prefix ends inside another one's start.
    for m in ac.find_iter(out.as_ref()) {
        present |= 1 << rule_of[m.pattern().as_usize()];
    }
    while present != 0 {
        let i = present.trailing_zeros() as usize;
        present &= present - 1;
        replace(&mut out, &regexes[i], vendor_marker(i));
    }
    if out.len() >= DISCORD_MIN && out.contains('.') && has_run(out.as_bytes(), DISCORD_MIN, is_token_byte) {
        replace(&mut out, &DISCORD, markers::KEY);
    }
    if out.len() >= BASE64_MIN_RUN {
        if let Some(new) = replace_base64_runs(&out) {
            out = Cow::Owned(new);
        }
    }
    out
}

fn replace(out: &mut Cow<'_, str>, regex: &Regex, marker: &str) {
    if let Cow::Owned(new) = regex.replace_all(out, regex::NoExpand(marker)) {
        *out = Cow::Owned(new);
    }
}

/// `[A-Za-z0-9+/=_-]`: standard and URL-safe base64 with padding.
#[inline]
fn is_base64_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=' | b'_' | b'-')
}

/// Base64 and `.`: the bytes of a Discord token (and of the prescan's long-run hint).
#[inline]
fn is_token_byte(b: u8) -> bool {
    is_base64_byte(b) || b == b'.'
}

/// Calls `found(start, end)` for every maximal run of `class` bytes at least `min` long, in
/// order. Looks at about one byte in `min` where runs are short (prose): a run that long must
/// cover the byte `min - 1` after the last non-class byte seen.
fn runs(bytes: &[u8], min: usize, class: impl Fn(u8) -> bool, mut found: impl FnMut(usize, usize) -> bool) {
    let mut start = 0; // no run of `min` starts before it
    while start + min <= bytes.len() {
        let probe = start + min - 1;
        if !class(bytes[probe]) {
            start = probe + 1;
            continue;
        }
        // The run around the probe: back to its start (not before `start`), then forward.
        let mut first = probe;
        while first > start && class(bytes[first - 1]) {
            first -= 1;
        }
        if first + min > bytes.len() {
            return;
        }
        if probe - first + 1 < min && !class_through(bytes, first, min, &class) {
            // A non-class byte before `first + min`: no run of `min` starts at or before it.
            let gap = (first..first + min).find(|&i| !class(bytes[i])).unwrap_or(first + min);
            start = gap + 1;
            continue;
        }
        let mut end = first + min;
        while end < bytes.len() && class(bytes[end]) {
            end += 1;
        }
        if !found(first, end) {
            return;
        }
        start = end + 1;
    }
}

fn class_through(bytes: &[u8], first: usize, min: usize, class: &impl Fn(u8) -> bool) -> bool {
    bytes[first..first + min].iter().all(|&b| class(b))
}

fn has_run(bytes: &[u8], min: usize, class: impl Fn(u8) -> bool) -> bool {
    let mut any = false;
    runs(bytes, min, class, |_, _| {
        any = true;
        false
    });
    any
}

/// Whether a run looks like encoded binary rather than a repeated letter or a long word: it
/// mixes upper case, lower case and digits.
fn looks_like_base64(run: &[u8]) -> bool {
    let (mut upper, mut lower, mut digit) = (false, false, false);
    for &b in run {
        upper |= b.is_ascii_uppercase();
        lower |= b.is_ascii_lowercase();
        digit |= b.is_ascii_digit();
        if upper && lower && digit {
            return true;
        }
    }
    false
}

/// Replaces every base64 run of [`BASE64_MIN_RUN`] characters or more by [`markers::BINARY`].
fn replace_base64_runs(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out: Option<String> = None;
    let mut copied = 0;
    runs(bytes, BASE64_MIN_RUN, is_base64_byte, |first, end| {
        if looks_like_base64(&bytes[first..end]) {
            let o = out.get_or_insert_with(|| String::with_capacity(s.len()));
            // Runs are ASCII, so their ends are char boundaries.
            o.push_str(&s[copied..first]);
            o.push_str(markers::BINARY);
            copied = end;
        }
        true
    });
    let mut o = out?;
    o.push_str(&s[copied..]);
    Some(o)
}

/// Words of a key that make its value a credential: the key is split at `_`, `-`, `.`, spaces
/// and lower-to-upper case changes (`clientSecret`, `X-Api-Key`, `aws.secret_access_key`).
const KEY_WORDS: [&str; 13] = [
    "key",
    "apikey",
    "secret",
    "token",
    "password",
    "passwd",
    "pwd",
    "passphrase",
    "credential",
    "credentials",
    "signature",
    "auth",
    "private",
];

/// Whether `key` names a credential (see [`KEY_WORDS`]). `keyword`, `monkey` and `max_tokens`
/// do not: a word must be one of the list exactly.
pub(crate) fn is_key_like(key: &str) -> bool {
    let bytes = key.as_bytes();
    if bytes.len() < 3 || bytes.len() > 64 {
        return false;
    }
    let mut start = 0;
    for i in 0..=bytes.len() {
        let boundary = i == bytes.len()
            || matches!(bytes[i], b'_' | b'-' | b'.' | b' ')
            || (i > 0 && bytes[i].is_ascii_uppercase() && bytes[i - 1].is_ascii_lowercase());
        if !boundary {
            continue;
        }
        let word = &key[start..i];
        if KEY_WORDS.iter().any(|w| w.eq_ignore_ascii_case(word)) {
            return true;
        }
        start = if i < bytes.len() && matches!(bytes[i], b'_' | b'-' | b'.' | b' ') { i + 1 } else { i };
    }
    false
}

/// Whether `value`, under a key-like name, looks like a random credential: 16 to 512 characters,
/// no whitespace, not already a marker, and at least [`ENTROPY_MIN_BITS`] bits of Shannon
/// entropy per character (`hunter2hunter2hunter2` has 2.2; a 20-character random key about 4).
pub(crate) fn is_high_entropy(value: &str) -> bool {
    let bytes = value.as_bytes();
    if bytes.len() < ENTROPY_MIN_LEN || bytes.len() > ENTROPY_MAX_LEN || value.starts_with("[REDACTED_") {
        return false;
    }
    let mut counts = [0u16; 256];
    for &b in bytes {
        if b.is_ascii_whitespace() {
            return false;
        }
        counts[usize::from(b)] += 1;
    }
    let n = bytes.len() as f64;
    let bits: f64 = counts.iter().filter(|&&c| c > 0).map(|&c| f64::from(c) / n).map(|p| -p * p.log2()).sum();
    bits >= ENTROPY_MIN_BITS
}

/// Luhn's checksum of the digits of a card-like match (separators skipped).
pub(crate) fn luhn_valid(candidate: &str) -> bool {
    let mut sum = 0;
    let mut double = false;
    let mut digits = 0;
    for b in candidate.bytes().rev().filter(u8::is_ascii_digit) {
        let mut d = u32::from(b - b'0');
        if double {
            d *= 2;
            if d > 9 {
                d -= 9;
            }
        }
        sum += d;
        double = !double;
        digits += 1;
    }
    digits >= 12 && sum % 10 == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_compile() {
        for r in [&*PEM, &*USERINFO, &*PARAM, &*DISCORD].into_iter().chain(VENDOR.2.iter()) {
            assert!(!r.as_str().is_empty());
        }
    }

    #[test]
    fn runs_are_found_as_a_full_scan_finds_them() {
        let cases = ["", "ab", "aaaa bbbbbb c", "xxxxx", " xxxxx ", "xx xxxxxxxxx x xxxxx", "xxxx xxxx"];
        for s in cases {
            for min in 1..7 {
                let mut fast = Vec::new();
                runs(
                    s.as_bytes(),
                    min,
                    |b| b == b'x' || b == b'a' || b == b'b',
                    |a, b| {
                        fast.push((a, b));
                        true
                    },
                );
                let mut slow = Vec::new();
                let mut i = 0;
                let bytes = s.as_bytes();
                while i < bytes.len() {
                    if matches!(bytes[i], b'x' | b'a' | b'b') {
                        let j =
                            (i..bytes.len()).find(|&j| !matches!(bytes[j], b'x' | b'a' | b'b')).unwrap_or(bytes.len());
                        if j - i >= min {
                            slow.push((i, j));
                        }
                        i = j;
                    } else {
                        i += 1;
                    }
                }
                assert_eq!(fast, slow, "{s:?} {min}");
            }
        }
    }

    #[test]
    fn key_like_names() {
        for k in
            ["api_key", "clientSecret", "X-Api-Key", "aws.secret_access_key", "privateKey", "authToken", "PASSWORD"]
        {
            assert!(is_key_like(k), "{k}");
        }
        for k in ["keyword", "monkey", "max_tokens", "status", "id", "author", "secretary", "k"] {
            assert!(!is_key_like(k), "{k}");
        }
    }

    #[test]
    fn entropy() {
        assert!(is_high_entropy("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"));
        assert!(!is_high_entropy("hunter2hunter2hunter2"));
        assert!(!is_high_entropy("a value with spaces in it"));
        assert!(!is_high_entropy("short"));
    }

    #[test]
    fn luhn() {
        assert!(luhn_valid("4111 1111 1111 1111"));
        assert!(luhn_valid("5500-0000-0000-0004"));
        assert!(!luhn_valid("4111 1111 1111 1112"));
        assert!(!luhn_valid("1234567890123456"));
    }
}
