//! The credential layer beyond the siblings' nine patterns (docs/wire-format.md#credentials): URL
//! userinfo and credential-named parameters, secret keys written as text, vendor token formats,
//! PEM private keys, long and line-wrapped base64, and high-entropy values under key-like names.
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

/// A credential-named `name=value` in a query, a fragment, a connection string, a command line
/// (`--password=x`) or after a quote or bracket (`"password=x`, `(password=x`): the name is
/// one of the words below, alone or as the last word of a `_`/`-`/`.`-joined name
/// (`access_token`, `x-amz-signature`, `AccountKey`…), compared case-insensitively.
static PARAM: LazyLock<Regex> = LazyLock::new(|| {
    compile(
        r"(^|[?&#;,\s\x22'`(\[{<\-]|&amp;)((?i-u:(?:[a-z0-9]+[_.\-]?)*?(?:token|secret|password|passwd|pwd|passphrase|apikey|api_key|api-key|key|sig|signature|credential|credentials|auth|jwt|sessionid|session_id|sid|code_verifier|client_assertion)))=([^&#;,\s\x22'`<>\[\](){}]+)",
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

/// Fewest bytes of a vendor rule's match, but for [`VENDOR_ANYWHERE`]'s rules: `xox?-` and 10.
const VENDOR_MIN_RUN: usize = 15;

/// The vendor rules whose match may hold a byte that is not a token byte (`$`, `~`, a space),
/// by one of their prefixes: their prefix is searched in the whole string.
const VENDOR_ANYWHERE: [&str; 3] = ["access_token$production$", "Q~", "Basic"];

/// One search for [`VENDOR_ANYWHERE`] (its prefilter looks for their rare bytes), with the rule
/// of each.
static ANYWHERE: LazyLock<(AhoCorasick, Vec<usize>)> = LazyLock::new(|| {
    let rules = VENDOR_ANYWHERE.map(|lit| VENDOR_RULES.iter().position(|(prefixes, _)| prefixes.contains(&lit)));
    // The literals are constants among the rules' prefixes: failing here is a build defect.
    let ac = AhoCorasick::new(VENDOR_ANYWHERE).expect("three literals build a searcher");
    (ac, rules.map(|r| r.expect("a vendor prefix")).to_vec())
});

/// The vendor rules that may match in `s`, a bit each: those whose prefix occurs in it. Every
/// other rule's match is at least [`VENDOR_MIN_RUN`] token bytes, so its prefix lies in a run of
/// them that long: only those runs are searched (in prose, a few bytes of each hundred), each
/// for every prefix in it, overlapping ones too.
fn vendor_rules_present(s: &str) -> u64 {
    let (ac, rule_of, _) = &*VENDOR;
    let mut present = 0u64;
    let (anywhere, anywhere_rule) = &*ANYWHERE;
    for m in anywhere.find_overlapping_iter(s) {
        present |= 1 << anywhere_rule[m.pattern().as_usize()];
    }
    runs(s.as_bytes(), VENDOR_MIN_RUN, is_token_byte, |start, end| {
        // Runs are ASCII, so their ends are char boundaries.
        for m in ac.find_overlapping_iter(&s[start..end]) {
            present |= 1 << rule_of[m.pattern().as_usize()];
        }
        true
    });
    present
}

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

/// Applies the credential layer to `s`, with `keys` the secret keys' text forms
/// ([`TextKeys`]): `Cow::Borrowed` when nothing matched.
pub(crate) fn apply<'s>(s: &'s str, keys: &TextKeys) -> Cow<'s, str> {
    let mut out = Cow::Borrowed(s);
    if s.contains("-----BEGIN") {
        replace(&mut out, &PEM, markers::PRIVATE_KEY);
    }
    // Before the token rules, which could take a piece of a line for a token and leave the rest.
    if out.len() >= 2 * WRAPPED_MIN_LINE && NEWLINE.is_match(out.as_ref()) {
        if let Some(new) = replace_wrapped_base64(&out) {
            out = Cow::Owned(new);
        }
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
    let mut present = vendor_rules_present(&out);
    let (_, _, regexes) = &*VENDOR;
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
    // Last: a header's value that an earlier rule replaced (`Authorization: Basic [REDACTED_KEY]`)
    // is left as it is.
    if keys.may_occur_in(&out) {
        if let Some(new) = keys.replace(&out) {
            out = Cow::Owned(new);
        }
        if let Some(new) = replace_key_like_values(&out) {
            out = Cow::Owned(new);
        }
    }
    out
}

/// Calls `found` with the byte span of each JSON string value, in JSON written as text
/// (`{"client_secret": "…"}`, `"githubToken": "…"`, or escaped, `{\"db_password\": \"…\"}`), that
/// the rule of a JSON value's key takes: a key-like name ([`is_key_like`]) and a high-entropy
/// value ([`is_high_entropy`]). Stops when `found` returns false.
fn key_like_values(s: &str, mut found: impl FnMut(usize, usize) -> bool) {
    let b = s.as_bytes();
    for (colon, _) in s.match_indices(':') {
        let mut close = colon;
        while close > 0 && matches!(b[close - 1], b' ' | b'\t') {
            close -= 1;
        }
        if close == 0 || b[close - 1] != b'"' {
            continue;
        }
        let escaped = close >= 2 && b[close - 2] == b'\\';
        let key_end = close - 1 - usize::from(escaped);
        let mut start = key_end;
        while start > 0
            && key_end - start <= KEY_MAX
            && (b[start - 1].is_ascii_alphanumeric() || matches!(b[start - 1], b'_' | b'-' | b'.' | b' '))
        {
            start -= 1;
        }
        let opened = match escaped {
            false => start >= 1 && b[start - 1] == b'"',
            true => start >= 2 && b[start - 1] == b'"' && b[start - 2] == b'\\',
        };
        if !opened || !is_key_like(&s[start..key_end]) {
            continue;
        }
        let mut v = colon + 1;
        while v < b.len() && b[v].is_ascii_whitespace() {
            v += 1;
        }
        let quote = if escaped { "\\\"" } else { "\"" };
        let Some(body) = s[v..].strip_prefix(quote) else { continue };
        let len = if escaped { body.find(quote) } else { closing_quote(body) };
        let Some(len) = len else { continue };
        let from = v + quote.len();
        if is_high_entropy(&s[from..from + len]) && !found(from, from + len) {
            return;
        }
    }
}

/// Longest key [`key_like_values`] reads back over ([`is_key_like`] takes none longer).
const KEY_MAX: usize = 64;

/// Whether `s` has a value [`key_like_values`] takes.
fn has_key_like_value(s: &str) -> bool {
    let mut any = false;
    key_like_values(s, |_, _| {
        any = true;
        false
    });
    any
}

/// `s` with each value [`key_like_values`] takes replaced by [`markers::TOKEN`], as the same
/// value of a JSON object is; `None` when there is none.
fn replace_key_like_values(s: &str) -> Option<String> {
    let mut out: Option<String> = None;
    let mut copied = 0;
    key_like_values(s, |from, to| {
        let o = out.get_or_insert_with(|| String::with_capacity(s.len()));
        o.push_str(&s[copied..from]);
        o.push_str(markers::TOKEN);
        copied = to;
        true
    });
    let mut o = out?;
    o.push_str(&s[copied..]);
    Some(o)
}

/// The keys whose values [`TextKeys`] replaces in text: the default denylist, header names
/// that carry credentials, and AWS's secret key. Their prescan hints are in `prescan::CREDS`.
const TEXT_KEYS: [&str; 13] = [
    "password",
    "passwd",
    "secret",
    "token",
    "apikey",
    "api_key",
    "api-key",
    "x-api-key",
    "authorization",
    "proxy-authorization",
    "cookie",
    "set-cookie",
    "aws_secret_access_key",
];

/// Keys whose value is a whole header line (`Cookie: a=1; b=2`, `Authorization: Digest …`).
const HEADER_KEYS: [&str; 4] = ["authorization", "proxy-authorization", "cookie", "set-cookie"];

/// The text forms of secret keys (docs/wire-format.md#credentials): `key: value`,
/// `key = value`, the key or value quoted (`"password": "x"`, a JSON text inside a string),
/// after any non-word byte (`(password: x`, `` `token: x ``). The value is replaced by
/// [`markers::FIELD`], as the denylist replaces a field's; a JSON value under a quoted key
/// (`{"token": {"a": 1}}`) is replaced whole by the marker as a JSON string.
#[derive(Debug, Clone)]
pub(crate) struct TextKeys {
    regex: Regex,
    /// Extra denylist entries are among the keys: [`has_key_form`] does not know them.
    extra: bool,
}

/// The separators of a key form, found by `memchr2` (the searcher's prefilter for two bytes).
static SEPARATORS: LazyLock<AhoCorasick> = LazyLock::new(|| {
    // The patterns are constants: failing here is a build defect.
    AhoCorasick::new([":", "="]).expect("two separators build a searcher")
});

/// Whether `s` holds a key form of [`TEXT_KEYS`]: exactly when [`TextKeys`]' regex of the
/// default keys matches. Each `:` or `=` is looked at: back over spaces, tabs and a quote, does
/// a key end there, not preceded by a letter, digit, `_` or `-`? One pass over the separators,
/// where a regex of the keys (ASCII case folded) had no literal prefilter and scanned every byte.
fn has_key_form(s: &str) -> bool {
    let b = s.as_bytes();
    SEPARATORS.find_iter(s).any(|m| {
        let mut end = m.start();
        while end > 0 && matches!(b[end - 1], b' ' | b'\t') {
            end -= 1;
        }
        if end > 0 && matches!(b[end - 1], b'"' | b'\'' | b'`') {
            end -= 1;
            if end > 0 && b[end - 1] == b'\\' {
                end -= 1;
            }
        }
        // Every key ends in one of these letters: most separators are settled here.
        if end == 0 || !matches!(b[end - 1] | 0x20, b'd' | b't' | b'n' | b'y' | b'e') {
            return false;
        }
        TEXT_KEYS.iter().any(|k| {
            end >= k.len()
                && b[end - k.len()..end].eq_ignore_ascii_case(k.as_bytes())
                && (end == k.len()
                    || !matches!(b[end - k.len() - 1], b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'_' | b'-'))
        })
    })
}

static DEFAULT_TEXT_KEYS: LazyLock<TextKeys> = LazyLock::new(|| TextKeys::new(&[]));

impl TextKeys {
    /// [`TEXT_KEYS`] and the denylist's `extra` entries (compared case-insensitively, Unicode
    /// case for them as the denylist does; ASCII case for the defaults, as the prescan's hints).
    pub(crate) fn new(extra: &[&str]) -> Self {
        let defaults = TEXT_KEYS.join("|");
        let extra: Vec<String> = extra
            .iter()
            .filter(|e| !e.is_empty() && !TEXT_KEYS.iter().any(|k| k.eq_ignore_ascii_case(e)))
            .map(|e| regex::escape(e))
            .collect();
        let keys = if extra.is_empty() {
            format!("(?i-u:{defaults})")
        } else {
            format!("(?i-u:{defaults})|(?i:{})", extra.join("|"))
        };
        let pattern = format!(r#"(?:^|[^A-Za-z0-9_\-])((?:\\?["'`])?)({keys})((?:\\?["'`])?)[ \t]*([:=])[ \t]*"#);
        TextKeys { regex: compile(&pattern), extra: !extra.is_empty() }
    }

    /// Whether a key form may occur in `s` (false: none does).
    pub(crate) fn may_occur_in(&self, s: &str) -> bool {
        self.extra || has_key_form(s) || has_key_like_value(s)
    }

    /// The default list's, compiled once per process.
    pub(crate) fn default_keys() -> &'static TextKeys {
        &DEFAULT_TEXT_KEYS
    }

    /// `s` with the values of its key forms replaced, or `None` when there are none.
    fn replace(&self, s: &str) -> Option<String> {
        let mut out: Option<String> = None;
        let (mut copied, mut at) = (0, 0);
        while let Some(c) = self.regex.captures_at(s, at) {
            let (Some(whole), Some(key)) = (c.get(0), c.get(2)) else { break };
            let (open, close) = (c.get(1).map_or("", |m| m.as_str()), c.get(3).map_or("", |m| m.as_str()));
            let colon = &c[4] == ":";
            let json = open == "\"" && close == "\"" && colon;
            let header = HEADER_KEYS.iter().any(|h| h.eq_ignore_ascii_case(key.as_str()));
            // Code, not a key form: a path (`token::Paren`), a comparison or match arm
            // (`token == x`, `token => x`), a header name with `=` (`cookie = "0.18"`, a crate).
            let next = s.as_bytes().get(whole.end()).copied();
            let code = match (colon, next) {
                (true, Some(b':')) | (false, Some(b'=' | b'>')) => true,
                (false, _) => header,
                _ => false,
            };
            let span = if code { None } else { value_span(s, whole.end(), json, header.then_some(open), colon) };
            match span {
                Some((start, end, as_json)) => {
                    let o = out.get_or_insert_with(|| String::with_capacity(s.len()));
                    o.push_str(&s[copied..start]);
                    if as_json {
                        o.push('"');
                        o.push_str(markers::FIELD);
                        o.push('"');
                    } else {
                        o.push_str(markers::FIELD);
                    }
                    copied = end;
                    at = end;
                }
                None => at = whole.end(),
            }
            if at >= s.len() {
                break;
            }
        }
        let mut o = out?;
        o.push_str(&s[copied..]);
        Some(o)
    }
}

/// The value after a key form at `from`: its byte span and whether it is a JSON value to be
/// replaced by a JSON string. `None` when it is empty or already a marker. `header`, for a header
/// key, holds the quote before it, if any: the value ends there or at the end of the line.
fn value_span(s: &str, from: usize, json: bool, header: Option<&str>, colon: bool) -> Option<(usize, usize, bool)> {
    let bytes = s.as_bytes();
    let mut start = from;
    while start < bytes.len()
        && (bytes[start] == b' ' || bytes[start] == b'\t' || (json && bytes[start].is_ascii_whitespace()))
    {
        start += 1;
    }
    let rest = &s[start..];
    if rest.is_empty() || rest.starts_with("[REDACTED_") || rest.starts_with("\"[REDACTED_") {
        return None;
    }
    if json {
        let mut values = serde_json::Deserializer::from_str(rest).into_iter::<serde::de::IgnoredAny>();
        if let Some(Ok(_)) = values.next() {
            let end = start + values.byte_offset();
            // An empty value says nothing (`"password": ""`, `"token": null`).
            return (!matches!(&s[start..end], "\"\"" | "null")).then_some((start, end, true));
        }
    }
    let line_end = rest.find(['\n', '\r']).unwrap_or(rest.len());
    // A quoted value: its text, to the closing quote on the same line (or the line's end).
    for quote in ["\\\"", "\\'", "\"", "'", "`"] {
        let Some(body) = rest[..line_end].strip_prefix(quote) else { continue };
        let len = match quote {
            "\"" => closing_quote(body),
            _ => body.find(quote),
        }
        .unwrap_or(body.len());
        let inner = start + quote.len();
        if len == 0 || body.starts_with("[REDACTED_") || is_placeholder(&body[..len]) {
            return None;
        }
        return Some((inner, inner + len, false));
    }
    let line = &rest[..line_end];
    let len = if let Some(open) = header {
        // A header's value is the rest of its line (or of its quoted text), but for the scheme of
        // a replaced credential.
        if line.split_once(' ').is_some_and(|(_, v)| v.starts_with("[REDACTED_")) {
            return None;
        }
        match open {
            "" => line.len(),
            quote => line.find(quote).unwrap_or(line.len()),
        }
    } else {
        line.find(|c: char| {
            c.is_whitespace() || matches!(c, ',' | ';' | '&' | '"' | '\'' | '`' | ')' | ']' | '}' | '<' | '>' | '\\')
        })
        .unwrap_or(line.len())
    };
    let value = line[..len].trim_end();
    // After `:`, a bare word of letters is prose or a type (`token: three parts`, `token: Token`).
    let word = colon && header.is_none() && value.bytes().all(|b| b.is_ascii_alphabetic());
    let kept = value.is_empty() || word || is_placeholder(value) || is_code(value);
    (!kept).then_some((start, start + value.len(), false))
}

/// Whether a bare value is code rather than a secret: a call, a path, a closure, a negation, or
/// a type or keyword as its first word (`token: usize`, `secret: impl Into<String>`,
/// `token = self.next()`); tool results hold much code.
fn is_code(value: &str) -> bool {
    const WORDS: [&str; 40] = [
        "impl", "dyn", "mut", "Option", "Vec", "Box", "Result", "Arc", "Rc", "Self", "self", "usize", "isize", "u8",
        "u16", "u32", "u64", "u128", "i8", "i16", "i32", "i64", "i128", "f32", "f64", "char", "await", "new", "this",
        "Some", "Ok", "Err", "true", "false", "nil", "function", "lambda", "const", "let", "typeof",
    ];
    let first = value.split(|c: char| !c.is_ascii_alphanumeric() && c != '_').next().unwrap_or("");
    value.contains(['(', '|'])
        || value.contains("::")
        || value.contains("![")
        || value.starts_with(['!', '.'])
        || WORDS.contains(&first)
}

/// Whether a key's value is a placeholder or a type rather than a secret: a template
/// (`${PASSWORD}`, `{{ token }}`, `{}`, `<password>`, `%s`), a reference (`&str`, `$TOKEN`), a mask
/// (`****`), or a type name as in `password: string` (code is a common tool result).
fn is_placeholder(value: &str) -> bool {
    const TYPES: [&str; 14] = [
        "string",
        "str",
        "String",
        "number",
        "int",
        "integer",
        "bool",
        "boolean",
        "null",
        "None",
        "undefined",
        "object",
        "any",
        "bytes",
    ];
    value.starts_with(['$', '<', '{', '%', '*', '&'])
        || value.contains("${")
        || value.contains("{{")
        || value.contains("{}")
        || TYPES.contains(&value)
}

/// The length of a `"`-quoted text's body up to its closing quote (`\"` escapes one).
fn closing_quote(body: &str) -> Option<usize> {
    let bytes = body.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return Some(i),
            _ => i += 1,
        }
    }
    None
}

/// `\n`, found by the SIMD `memchr` of the searcher's prefilter (`str::find` reads a word at a
/// time).
static NEWLINE: LazyLock<AhoCorasick> = LazyLock::new(|| {
    // The pattern is a constant: failing here is a build defect.
    AhoCorasick::new(["\n"]).expect("a newline builds a searcher")
});

/// Fewest characters of a full line of a line-wrapped base64 blob (PEM has 64, MIME 76).
pub(crate) const WRAPPED_MIN_LINE: usize = 40;
/// Most characters of such a line.
const WRAPPED_MAX_LINE: usize = 128;

/// Replaces every line-wrapped base64 blob by [`markers::BINARY`]: two or more lines of the same
/// length (40 to 128 characters of `[A-Za-z0-9+/=_-]`, indentation and `\r` aside), with an
/// optional shorter last line that ends in `=` or mixes character classes, the whole mixing upper
/// case, lower case and digits. Ordinary text has no run of equal-length lines without a space
/// or punctuation; hex dumps and hashes lack upper or lower case.
fn replace_wrapped_base64(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut replace = |first: usize, until: usize, out: &mut Option<String>| {
        let o = out.get_or_insert_with(|| String::with_capacity(s.len()));
        // Bodies are ASCII, so their ends are char boundaries.
        o.push_str(&s[copied..first]);
        o.push_str(markers::BINARY);
        copied = until;
    };
    // The open group: its first body's start, its width, its lines, the end of its last body.
    let mut group: Option<(usize, usize, usize, usize)> = None;
    let mut at = 0;
    loop {
        // The next line's body: indentation and `\r` aside; whether it is all base64.
        let line_end = NEWLINE.find(&s[at..]).map_or(s.len(), |m| at + m.start());
        let line = &s[at..line_end];
        let start = at + (line.len() - line.trim_start_matches([' ', '\t']).len());
        let end = (at + line.trim_end_matches('\r').len()).max(start);
        let b64 = end > start && bytes[start..end].iter().all(|&b| is_base64_byte(b));
        let width = end - start;
        let mut tail_taken = false;
        if let Some((first, w, n, last)) = group {
            if b64 && width == w {
                group = Some((first, w, n + 1, end));
            } else {
                let mut until = last;
                if n >= 2 && b64 && width < w && (bytes[end - 1] == b'=' || looks_like_base64(&bytes[start..end])) {
                    until = end;
                    tail_taken = true;
                }
                if n >= 2 && looks_like_base64(&bytes[first..until]) {
                    replace(first, until, &mut out);
                }
                group = None;
            }
        }
        if group.is_none() && !tail_taken && b64 && (WRAPPED_MIN_LINE..=WRAPPED_MAX_LINE).contains(&width) {
            group = Some((start, width, 1, end));
        }
        if line_end >= s.len() {
            break;
        }
        at = line_end + 1;
    }
    if let Some((first, _, n, last)) = group {
        if n >= 2 && looks_like_base64(&bytes[first..last]) {
            replace(first, last, &mut out);
        }
    }
    let mut o = out?;
    o.push_str(&s[copied..]);
    Some(o)
}

fn replace(out: &mut Cow<'_, str>, regex: &Regex, marker: &str) {
    if let Cow::Owned(new) = regex.replace_all(out, regex::NoExpand(marker)) {
        *out = Cow::Owned(new);
    }
}

/// A table of the bytes that [`is_base64_byte`] (and, with `dot`, [`is_token_byte`]) takes:
/// one load per byte where the runs are scanned.
const fn byte_class(dot: bool) -> [bool; 256] {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'=' | b'_' | b'-') || (dot && c == b'.');
        b += 1;
    }
    t
}

static BASE64_BYTES: [bool; 256] = byte_class(false);
static TOKEN_BYTES: [bool; 256] = byte_class(true);

/// `[A-Za-z0-9+/=_-]`: standard and URL-safe base64 with padding.
#[inline]
fn is_base64_byte(b: u8) -> bool {
    BASE64_BYTES[usize::from(b)]
}

/// Base64 and `.`: the bytes of a Discord token (and of the prescan's long-run hint).
#[inline]
fn is_token_byte(b: u8) -> bool {
    TOKEN_BYTES[usize::from(b)]
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
        // `first..=probe` are class bytes: a non-class one after the probe, before `first + min`,
        // means no run of `min` starts at or before it.
        if let Some(gap) = (probe + 1..first + min).find(|&i| !class(bytes[i])) {
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

    /// Every rule whose regex matches in a text is among [`vendor_rules_present`]'s.
    #[test]
    fn vendor_rules_present_covers_every_match() {
        let tokens = [
            "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
            "xoxb-1234567890-abcdefghij",
            "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
            "ASIA1234567890ABCDEF",
            "SK0123456789abcdef0123456789abcdef",
            "key-0123456789abcdef0123456789abcdef",
            "hf_abcdefghijklmnopqrstuvwxyz0123",
            "access_token$production$0123456789abcdef$0123456789abcdef0123456789abcdef",
            "abc1Q~abcdefghijklmnopqrstuvwxyz01234",
            "Basic dXNlcjpwYXNzd29yZA==",
            "glpat-abcdefghijklmnopqrst",
            "ntn_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGH",
        ];
        let fillers = ["", " ", "x", "=", ".", "(", "the quick brown fox ", "user_id=", "SKx ", "Q~ "];
        let (ac, rule_of, regexes) = &*VENDOR;
        for t in tokens {
            for before in fillers {
                for after in fillers {
                    let s = format!("{before}{t}{after} and {t}");
                    let present = vendor_rules_present(&s);
                    for (i, r) in regexes.iter().enumerate() {
                        assert!(!r.is_match(&s) || present & (1 << i) != 0, "rule {i} in {s:?}");
                    }
                    // A prefix found by a search of the whole text (as the layer did) whose rule
                    // is left out has no match: leaving it out changes nothing.
                    for m in ac.find_iter(&s) {
                        let i = rule_of[m.pattern().as_usize()];
                        assert!(present & (1 << i) != 0 || !regexes[i].is_match(&s), "{s:?}");
                    }
                }
            }
        }
    }

    /// [`vendor_rules_present`] relies on these: the rules outside [`VENDOR_ANYWHERE`] have
    /// prefixes of token bytes only.
    #[test]
    fn vendor_prefixes_are_token_bytes_but_the_anywhere_ones() {
        for (prefixes, _) in VENDOR_RULES {
            for p in prefixes {
                assert!(VENDOR_ANYWHERE.contains(p) || p.bytes().all(is_token_byte), "{p}");
            }
        }
    }

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

    fn layer(s: &str) -> String {
        apply(s, TextKeys::default_keys()).into_owned()
    }

    #[test]
    fn text_forms_of_secret_keys() {
        let cases = [
            ("password: hunter2", "password: [REDACTED_FIELD]"),
            ("Password:hunter2 and more", "Password:[REDACTED_FIELD] and more"),
            ("password = x", "password = [REDACTED_FIELD]"),
            ("user=bob, passwd: 'p w'", "user=bob, passwd: '[REDACTED_FIELD]'"),
            ("\"password=x\"", "\"password=[REDACTED_URL_CREDENTIAL]\""),
            ("(password=x)", "(password=[REDACTED_URL_CREDENTIAL])"),
            ("`password=x`", "`password=[REDACTED_URL_CREDENTIAL]`"),
            ("cmd --password=x -v", "cmd --password=[REDACTED_URL_CREDENTIAL] -v"),
            ("X-API-Key: abc123", "X-API-Key: [REDACTED_FIELD]"),
            ("Cookie: a=1; b=2\nHost: h", "Cookie: [REDACTED_FIELD]\nHost: h"),
            ("h = \"Set-Cookie: sid=1; Path=/\", n", "h = \"Set-Cookie: [REDACTED_FIELD]\", n"),
            ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "Authorization: Basic [REDACTED_KEY]"),
            ("Authorization: Negotiate abc def", "Authorization: [REDACTED_FIELD]"),
            ("aws_secret_access_key = wJalr/XUtn", "aws_secret_access_key = [REDACTED_FIELD]"),
            (r#"{"password": "a \" b", "u": 1}"#, r#"{"password": "[REDACTED_FIELD]", "u": 1}"#),
            (r#"{"token":{"a":[1,{"b":2}]},"n":null}"#, r#"{"token":"[REDACTED_FIELD]","n":null}"#),
            (r#"[{"apiKey" : 12.5}]"#, r#"[{"apiKey" : "[REDACTED_FIELD]"}]"#),
            (r#"{"secret": "#, r#"{"secret": "#),
            (r#"{"secret": "cut"#, r#"{"secret": "[REDACTED_FIELD]"#),
            (r#"{\"secret\": \"v\"}"#, r#"{\"secret\": \"[REDACTED_FIELD]\"}"#),
            ("token: [REDACTED_FIELD]", "token: [REDACTED_FIELD]"),
        ];
        for (input, expected) in cases {
            assert_eq!(layer(input), expected, "{input:?}");
            assert_eq!(layer(expected), expected, "idempotent on {expected:?}");
        }
        for kept in [
            "max_tokens: 1024",
            "tokens: 3",
            "secretary: Ann",
            "the password is long",
            "apikeys: none",
            r#"{"password_hint": "x", "token_type": "bearer"}"#,
            "my_password: x",
            "if token == x { token => y }",
            "use syn::token::Paren; let token: usize = 1;",
            "fn f(secret: impl Into<String>, token: mio::Token) { let secret = self.secret.clone(); }",
            "secret = !denied",
            "cookie = \"0.18\"",
            "the bot token: three parts",
            "fn f(token: Token, cookie: Cookie<'static>) -> Token![_]",
            r#"{"password": "", "token": null}"#,
            "write!(f, \"Proxy-Authorization: Basic {}\\r\\n\", creds)",
        ] {
            assert_eq!(layer(kept), kept);
        }
    }

    /// [`has_key_form`] answers as the default keys' regex does.
    #[test]
    fn key_forms_are_found_as_the_regex_finds_them() {
        let keys = TextKeys::default_keys();
        let pieces = [
            "password",
            "PassWD",
            "x-api-key",
            "api-key",
            "token",
            "set-cookie",
            "aws_secret_access_key",
            "secret",
            "my_token",
            "tokens",
            "-secret",
            "\\\"",
            "\"",
            "'",
            "`",
            " ",
            "\t",
            ":",
            "=",
            "x",
            "_",
            "é",
            "\n",
        ];
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        for _ in 0..20_000 {
            let mut s = String::new();
            for _ in 0..1 + state % 6 {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                s.push_str(pieces[(state % pieces.len() as u64) as usize]);
            }
            assert_eq!(has_key_form(&s), keys.regex.is_match(&s), "{s:?}");
        }
    }

    /// JSON written as text gets the rule of a JSON value's key: a compound key-like name with a
    /// high-entropy string value (issue 46: a proxied server's JSON inside a text result).
    #[test]
    fn key_like_names_in_json_text() {
        let cases = [
            (
                r#"{"client_secret": "Zx8Qp2Lm9Rt4Vw7Yb1Nc", "n": 1}"#,
                r#"{"client_secret": "[REDACTED_TOKEN]", "n": 1}"#,
            ),
            (r#"{"db_password":"Xk29fLq8Zp0Rw7Vt3"}"#, r#"{"db_password":"[REDACTED_TOKEN]"}"#),
            (r#"[{"githubToken" : "q8Zr2Kx9Lp4Wm7Vn3Bt6"}]"#, r#"[{"githubToken" : "[REDACTED_TOKEN]"}]"#),
            (r#"{\"client_secret\": \"Zx8Qp2Lm9Rt4Vw7Yb1Nc\"}"#, r#"{\"client_secret\": \"[REDACTED_TOKEN]\"}"#),
            (
                "result: {\"privateKeyId\":\n \"a81bc4e2f9d34c7aa1b2\"}",
                "result: {\"privateKeyId\":\n \"[REDACTED_TOKEN]\"}",
            ),
        ];
        for (input, expected) in cases {
            assert_eq!(layer(input), expected, "{input:?}");
            assert_eq!(layer(expected), expected, "idempotent on {expected:?}");
        }
        for kept in [
            // As a JSON value: not a key-like name, or not a random value.
            r#"{"keyword": "Zx8Qp2Lm9Rt4Vw7Yb1Nc"}"#,
            r#"{"max_tokens": "Zx8Qp2Lm9Rt4Vw7Yb1Nc"}"#,
            r#"{"db_password": "hunter2"}"#,
            r#"{"client_secret": "a value with spaces in it"}"#,
            r#"{"client_secret": 12345678901234567890}"#,
            r#"{"client_secret": "Zx8Qp2Lm9Rt4"#,
            r#"the "client_secret": field"#,
        ] {
            assert_eq!(layer(kept), kept);
        }
    }

    #[test]
    fn extra_keys_have_text_forms() {
        let keys = TextKeys::new(&["ssn", "Clé"]);
        assert_eq!(apply("ssn: 123-45-6789, CLÉ = x", &keys), "ssn: [REDACTED_FIELD], CLÉ = [REDACTED_FIELD]");
        assert_eq!(apply("ssn: 1", TextKeys::default_keys()), "ssn: 1");
    }

    /// `lines` lines of `width` characters of a fixed pseudo-random base64 sequence.
    fn blob(lines: usize, width: usize) -> Vec<String> {
        const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut x = 88172645463325252u64;
        (0..lines)
            .map(|_| {
                (0..width)
                    .map(|_| {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        char::from(ALPHABET[(x % 64) as usize])
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn wrapped_base64_blobs() {
        let b = blob(4, 76);
        let mime = format!("part:\r\n{}\r\nAb9=\r\n--end", b.join("\r\n"));
        assert_eq!(layer(&mime), "part:\r\n[REDACTED_BINARY]\r\n--end");
        let pem = format!("-----BEGIN CERTIFICATE-----\n{}\n-----END CERTIFICATE-----", blob(3, 64).join("\n"));
        assert_eq!(layer(&pem), "-----BEGIN CERTIFICATE-----\n[REDACTED_BINARY]\n-----END CERTIFICATE-----");
        let indented = format!("key: |\n  {}\n  {}\nnext: 1", b[0], b[1]);
        assert_eq!(layer(&indented), "key: |\n  [REDACTED_BINARY]\nnext: 1");
        // A short last line that is a word stays.
        assert_eq!(layer(&format!("{}\n{}\nhello", b[0], b[1])), "[REDACTED_BINARY]\nhello");
        for kept in [
            // one line alone, lines of different widths, hex, a separator line, prose
            b[0].clone(),
            format!("{}\n{}", b[0], &b[1][..70]),
            "0123456789abcdef0123456789abcdef0123456789abcdef\nfedcba9876543210fedcba9876543210fedcba9876543210".into(),
            "========================================\n========================================".into(),
            "The quick brown fox jumps over the lazy dog again\nThe quick brown fox jumps over the lazy cat again"
                .into(),
        ] {
            assert_eq!(layer(&kept), kept);
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
