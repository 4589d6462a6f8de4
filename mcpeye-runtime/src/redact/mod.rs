//! Redaction of secrets and personal data, and the size caps around it (docs/wire-format.md#caps, #redaction).
//!
//! [`redact_string`] runs the contract's nine patterns (e-mail, API keys, GitHub and AWS keys,
//! bearer credentials, JWTs, card and phone numbers) with the JavaScript regex semantics of the
//! TypeScript reference. A byte-scan prefilter runs first, so a string that holds no trigger
//! (`@`, a cluster of 9+ digits, a word starting `sk-`, `gh?_`, `AKIA`, `bearer` or `eyJ`)
//! costs one pass over its bytes and is returned borrowed; otherwise only the patterns that can
//! match run.
//!
//! [`redact_value`] applies it to every string of a JSON value and replaces denylisted fields
//! and over-deep containers; [`Redactor`] is the flusher's per-tracker step with the caps (docs/wire-format.md#caps).
//! The pipeline's redactor also runs the credential layer (`credentials.rs`,
//! docs/wire-format.md#credentials) before the nine patterns; the same prescan flags its
//! literals, so a clean string still costs one look.
//!
//! ```
//! use mcpeye::redact::{redact_string, redact_value};
//! use serde_json::json;
//!
//! assert_eq!(redact_string("mail a@b.com, Bearer abcdef1234567890"), "mail [REDACTED_EMAIL], Bearer [REDACTED_KEY]");
//! let v = json!({"password": "hunter2", "note": "call 415-555-0123", "n": 4111111111111111u64});
//! assert_eq!(
//!     redact_value(&v, &[]),
//!     json!({"password": "[REDACTED_FIELD]", "note": "call [REDACTED_PHONE]", "n": 4111111111111111u64})
//! );
//! ```

mod caps;
mod credentials;
mod denylist;
mod digit_spans;
mod patterns;
#[allow(unsafe_code)] // SIMD loads; see the `SAFETY:` comments in it
mod prescan;
mod write;

#[cfg(feature = "testing")]
pub(crate) use caps::cap_value;
pub(crate) use caps::{compact_json_len, cut_at_char_boundary, truncated_marker};

use crate::contract::{markers, MAX_TEXT_BYTES, MAX_TEXT_PRE_REDACT_BYTES, MAX_VALUE_BYTES, MAX_VALUE_DEPTH};
use crate::json::flat::Flat;
use crate::json::node::Str;
use crate::json::{needs_escape, write_str, write_str_with};
pub(crate) use caps::drop_flat;
#[cfg(test)]
pub(crate) use caps::is_cap_marker;
use caps::{cap_text_after, truncate_at_char_boundary};
use denylist::Denylist;
use serde_json::Value;
use std::borrow::Cow;
use std::sync::{Arc, LazyLock};

/// Replaces secrets and PII in `s` with the contract's markers.
///
/// These are the sibling SDKs' semantics exactly (the contract's nine patterns, tested against
/// the shared vectors): the pipeline's credential layer (URL credentials, vendor tokens, PEM
/// keys, docs/wire-format.md#credentials) is not part of it; a [`Redactor`] with
/// [`credentials`](Redactor::credentials) adds it.
///
/// Returns [`Cow::Borrowed`] when nothing matched (the common case, without allocation).
///
/// ```
/// use mcpeye::redact::redact_string;
/// use std::borrow::Cow;
///
/// assert_eq!(redact_string("key sk-ant-api03-ABCDEFGHIJKLMNOP_qrs"), "key [REDACTED_KEY]");
/// assert!(matches!(redact_string("weather in Paris"), Cow::Borrowed(_)));
/// ```
pub fn redact_string(s: &str) -> Cow<'_, str> {
    let look = prescan::look(s.as_bytes());
    if look & prescan::TRIGGERS == 0 {
        return Cow::Borrowed(s);
    }
    redact_flagged(s, Denylist::default_list(), look)
}

/// The rules beyond the contract's nine patterns that a [`Redactor`] runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Rules {
    /// The credential layer (docs/wire-format.md#credentials).
    pub(crate) credentials: bool,
    /// Card-like digits replaced only when they pass the Luhn check.
    pub(crate) luhn: bool,
}

impl Rules {
    /// The prescan bits that send a string to [`redact_flagged`] under these rules.
    #[inline(always)]
    pub(crate) fn triggers(self) -> u8 {
        prescan::TRIGGERS | (u8::from(self.credentials) * (prescan::CREDS | prescan::COLON))
    }
}

/// [`redact_string`] of a string whose [`prescan::look`], `look`, flagged one of the denylist's
/// `rules.triggers()`: the credential layer first when on, then the nine patterns on its output.
fn redact_flagged<'s>(s: &'s str, denylist: &Denylist, look: u8) -> Cow<'s, str> {
    let rules = denylist.rules;
    if !rules.credentials {
        return nine_patterns(s, rules.luhn);
    }
    let keys = denylist.text_keys();
    // A `:` alone is common (times, prose, code): one search for the keys settles most of them.
    if look & (prescan::TRIGGERS | prescan::CREDS) == 0 && !keys.may_occur_in(s) {
        return Cow::Borrowed(s);
    }
    match credentials::apply(s, keys) {
        Cow::Borrowed(_) => nine_patterns(s, rules.luhn),
        Cow::Owned(layered) => match nine_patterns(&layered, rules.luhn) {
            Cow::Owned(new) => Cow::Owned(new),
            Cow::Borrowed(_) => Cow::Owned(layered),
        },
    }
}

/// The nine patterns, those the exact scan finds possible only.
fn nine_patterns(s: &str, luhn: bool) -> Cow<'_, str> {
    let mask = patterns::scan(s);
    if mask == 0 {
        return Cow::Borrowed(s);
    }
    patterns::apply_with(s, mask, true, luhn)
}

/// A string under the denylist's rules, with the prescan first.
fn redact_with<'s>(s: &'s str, denylist: &Denylist) -> Cow<'s, str> {
    let look = prescan::look(s.as_bytes());
    if look & denylist.rules.triggers() == 0 {
        return Cow::Borrowed(s);
    }
    redact_flagged(s, denylist, look)
}

/// The credential layer's value rule: `value` under `key` is a high-entropy string under a
/// key-like name (docs/wire-format.md#credentials).
#[inline(never)]
pub(crate) fn is_entropy_secret(key: &str, value: &str) -> bool {
    value.len() >= credentials::ENTROPY_MIN_LEN && credentials::is_key_like(key) && credentials::is_high_entropy(value)
}

/// [`redact_string`] without the prefilter: all nine patterns always run. Same output, slower;
/// a baseline for benchmarks and differential tests (`mcpeye::testing::redact`).
#[cfg_attr(not(feature = "testing"), allow(dead_code))]
pub(crate) fn redact_string_unfiltered(s: &str) -> Cow<'_, str> {
    patterns::apply(s, patterns::ALL, false)
}

/// [`redact_string`] with the credential layer of [`Redactor::credentials`], on a string of any
/// length (a redactor's `text` cuts at 36 KiB): for benchmarks. Not part of the stable API.
#[cfg_attr(not(feature = "testing"), allow(dead_code))]
pub(crate) fn redact_string_with_credentials(s: &str) -> Cow<'_, str> {
    static LAYERED: LazyLock<Denylist> = LazyLock::new(|| {
        let mut d = Denylist::new(&[] as &[&str]);
        d.rules.credentials = true;
        d
    });
    redact_with(s, &LAYERED)
}

/// The credential layer and then all nine patterns, without any prefilter: what a redactor with
/// [`Redactor::credentials`] gives a string of 6 bytes or more (shorter ones are never looked at).
/// A baseline for differential tests and fuzzing. Not part of the stable API.
#[cfg_attr(not(feature = "testing"), allow(dead_code))]
pub(crate) fn redact_string_layered_unfiltered(s: &str) -> Cow<'_, str> {
    match credentials::apply(s, credentials::TextKeys::default_keys()) {
        Cow::Borrowed(_) => patterns::apply(s, patterns::ALL, false),
        Cow::Owned(layered) => Cow::Owned(patterns::apply(&layered, patterns::ALL, false).into_owned()),
    }
}

/// Redacts every string of `value` (numbers, booleans and null never); keys in the default
/// denylist or `extra_denylist` (compared case-insensitively, exact key) have their whole value
/// replaced by `[REDACTED_FIELD]`; containers at depth [`MAX_VALUE_DEPTH`] or deeper become
/// `[REDACTED_TOO_DEEP]`. Object keys are kept as they are.
///
/// Like [`redact_string`], the sibling SDKs' semantics exactly, without the pipeline's
/// credential layer (see [`Redactor::credentials`]).
///
/// ```
/// use mcpeye::redact::redact_value;
/// use serde_json::json;
///
/// let v = json!({"ssn": "123-45-6789", "Token": [1, 2], "keep": "ok"});
/// assert_eq!(
///     redact_value(&v, &["SSN"]),
///     json!({"ssn": "[REDACTED_FIELD]", "Token": "[REDACTED_FIELD]", "keep": "ok"})
/// );
/// ```
pub fn redact_value(value: &Value, extra_denylist: &[&str]) -> Value {
    if extra_denylist.is_empty() {
        redacted_copy(value, 0, Denylist::default_list())
    } else {
        redacted_copy(value, 0, &Denylist::new(extra_denylist))
    }
}

/// A redacted copy of `value` under the denylist and its rules.
fn redacted_copy(value: &Value, depth: usize, denylist: &Denylist) -> Value {
    match value {
        Value::String(s) => Value::String(redact_with(s, denylist).into_owned()),
        Value::Array(_) | Value::Object(_) if depth >= MAX_VALUE_DEPTH => Value::String(markers::TOO_DEEP.to_owned()),
        Value::Array(a) => Value::Array(a.iter().map(|v| redacted_copy(v, depth + 1, denylist)).collect()),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| {
                    let v = if denylist.contains(k) {
                        Value::String(markers::FIELD.to_owned())
                    } else if denylist.rules.credentials
                        && v.as_str()
                            .is_some_and(|s| s.len() >= credentials::ENTROPY_MIN_LEN && is_entropy_secret(k, s))
                    {
                        Value::String(markers::TOKEN.to_owned())
                    } else {
                        redacted_copy(v, depth + 1, denylist)
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Null | Value::Bool(_) | Value::Number(_) => value.clone(),
    }
}

/// [`redacted_copy`] of `value` written over it: the same result, without copying what stays.
fn redact_in_place(value: &mut Value, depth: usize, denylist: &Denylist) {
    /// `v` replaced by the string `marker`, what it held dropped without recursion.
    fn put(v: &mut Value, marker: &str) {
        drop_flat(std::mem::replace(v, Value::String(marker.to_owned())));
    }
    match value {
        Value::String(s) => {
            if let Cow::Owned(new) = redact_with(s, denylist) {
                *s = new;
            }
        }
        Value::Array(_) | Value::Object(_) if depth >= MAX_VALUE_DEPTH => put(value, markers::TOO_DEEP),
        Value::Array(a) => a.iter_mut().for_each(|v| redact_in_place(v, depth + 1, denylist)),
        Value::Object(m) => {
            for (k, v) in m.iter_mut() {
                if denylist.contains(k) {
                    put(v, markers::FIELD);
                } else if denylist.rules.credentials
                    && v.as_str().is_some_and(|s| s.len() >= credentials::ENTROPY_MIN_LEN && is_entropy_secret(k, s))
                {
                    put(v, markers::TOKEN);
                } else {
                    redact_in_place(v, depth + 1, denylist);
                }
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// The flusher's redaction step for one tracker: value caps and text caps of docs/wire-format.md#caps
/// around the redaction (docs/wire-format.md#redaction), with the configured extra denylist compiled once.
///
/// Cloning is cheap (the denylist is shared).
///
/// ```
/// use mcpeye::redact::Redactor;
/// use serde_json::json;
///
/// let r = Redactor::new(true, &["ssn".to_owned()]);
/// assert_eq!(r.value(json!({"SSN": "x", "q": "a@b.com"})), json!({"SSN": "[REDACTED_FIELD]", "q": "[REDACTED_EMAIL]"}));
/// assert_eq!(r.value(json!("y".repeat(40_000))), json!({"[truncated]": true, "bytes": 40_002}));
/// assert_eq!(r.text("failed for a@b.com".to_owned()), "failed for [REDACTED_EMAIL]");
/// ```
#[derive(Debug, Clone)]
pub struct Redactor {
    enabled: bool,
    denylist: Arc<Denylist>,
}

impl Redactor {
    /// `enabled = false` keeps the caps but turns redaction off. `extra_denylist` adds to the
    /// default field names; it is lowercased here, once. The redaction is the siblings' (the
    /// contract's nine patterns and denylist): the pipeline adds
    /// [`credentials`](Self::credentials), as [`Config::redact_credentials`](crate::Config::redact_credentials) says.
    ///
    /// ```
    /// use mcpeye::redact::Redactor;
    ///
    /// let r = Redactor::new(true, &["account_number".to_owned()]);
    /// assert_eq!(r.value(serde_json::json!({"Account_Number": "123"})), serde_json::json!({"Account_Number": "[REDACTED_FIELD]"}));
    /// ```
    pub fn new(enabled: bool, extra_denylist: &[String]) -> Self {
        Redactor { enabled, denylist: Arc::new(Denylist::new(extra_denylist)) }
    }

    /// With the credential layer beyond the contract (docs/wire-format.md#credentials): URL
    /// userinfo and credential-named parameters, secret keys written as text (`password: x`,
    /// headers, a JSON text inside a string; the extra denylist's keys too), vendor token
    /// formats, PEM private keys, base64 runs of 512 characters or more and line-wrapped base64,
    /// and high-entropy values under key-like names.
    ///
    /// ```
    /// use mcpeye::redact::Redactor;
    /// use serde_json::json;
    ///
    /// let r = Redactor::new(true, &[]).credentials(true);
    /// assert_eq!(
    ///     r.text("GET https://admin:hunter2@db.internal/x?token=abc123".to_owned()),
    ///     "GET https://admin:[REDACTED_URL_CREDENTIAL]@db.internal/x?token=[REDACTED_URL_CREDENTIAL]"
    /// );
    /// assert_eq!(r.value(json!({"client_secret": "Zx8Qp2Lm9Rt4Vw7Yb1Nc"})), json!({"client_secret": "[REDACTED_TOKEN]"}));
    /// assert_eq!(r.text(r#"password: hunter2, {"token": "t0k"}"#.to_owned()), r#"password: [REDACTED_FIELD], {"token": "[REDACTED_FIELD]"}"#);
    /// ```
    pub fn credentials(self, on: bool) -> Self {
        self.with_rules(|r| r.credentials = on)
    }

    /// With card-like digits replaced only when they pass the Luhn check (off by default: the
    /// contract's pattern takes any 13 to 16 digits).
    ///
    /// ```
    /// use mcpeye::redact::Redactor;
    ///
    /// let r = Redactor::new(true, &[]).luhn_cards(true);
    /// assert_eq!(r.text("card 4111 1111 1111 1111, order 1234567890123456".to_owned()), "card [REDACTED_CARD], order 1234567890123456");
    /// ```
    pub fn luhn_cards(self, on: bool) -> Self {
        self.with_rules(|r| r.luhn = on)
    }

    fn with_rules(mut self, edit: impl FnOnce(&mut Rules)) -> Self {
        edit(&mut Arc::make_mut(&mut self.denylist).rules);
        self
    }

    /// Whether redaction is on (the caps always apply).
    ///
    /// ```
    /// use mcpeye::redact::Redactor;
    ///
    /// assert!(!Redactor::new(false, &[]).enabled());
    /// assert_eq!(Redactor::new(false, &[]).text("a@b.com".to_owned()), "a@b.com"); // caps only
    /// ```
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// `arguments` / `result`: a value whose compact JSON exceeds
    /// [`MAX_VALUE_BYTES`] becomes
    /// `{"[truncated]":true,"bytes":N}` (never redacted); any other value is redacted when
    /// redaction is on.
    ///
    /// ```
    /// let r = mcpeye::redact::Redactor::new(true, &[]);
    /// assert_eq!(r.value(serde_json::json!({"password": "hunter2"})), serde_json::json!({"password": "[REDACTED_FIELD]"}));
    /// ```
    pub fn value(&self, mut value: Value) -> Value {
        let n = compact_json_len(&value);
        if n > MAX_VALUE_BYTES {
            drop_flat(value);
            return truncated_marker(n);
        }
        if !self.enabled {
            return value;
        }
        // The value is ours: its strings are replaced where they change, with no copy of the rest
        // (a copy's allocations and the original's drop cost more than the redaction).
        redact_in_place(&mut value, 0, &self.denylist);
        value
    }

    /// Writes the compact JSON of [`value`](Self::value)`(value)` to `out`, in one walk
    /// that neither modifies nor copies `value` (the flusher's path). Containers at
    /// [`MAX_VALUE_DEPTH`] or deeper are replaced even when redaction is off: the JSON stays shallow
    /// enough for any reader.
    pub(crate) fn write_value(&self, value: Value, out: &mut Vec<u8>) {
        if write::write_value(&value, self.enabled.then_some(&*self.denylist), out) {
            drop_flat(value);
        }
    }

    /// [`write_value`](Self::write_value) of a value the calling thread flattened.
    pub(crate) fn write_flat(&self, value: Flat<'_>, out: &mut Vec<u8>) {
        write::write_flat(value, self.enabled.then_some(&*self.denylist), out);
    }

    /// `errorMessage` / `intent`: cut to
    /// [`MAX_TEXT_PRE_REDACT_BYTES`] on a char
    /// boundary, redacted when redaction is on, then, if still over
    /// [`MAX_TEXT_BYTES`], cut to 32754 bytes with
    /// `…[truncated]` appended.
    ///
    /// ```
    /// let r = mcpeye::redact::Redactor::new(true, &[]);
    /// assert_eq!(r.text("failed for ada@example.com".to_owned()), "failed for [REDACTED_EMAIL]");
    /// ```
    pub fn text(&self, mut text: String) -> String {
        truncate_at_char_boundary(&mut text, MAX_TEXT_PRE_REDACT_BYTES);
        if self.enabled {
            let redacted = match redact_with(&text, &self.denylist) {
                Cow::Owned(new) => Some(new),
                Cow::Borrowed(_) => None,
            };
            if let Some(new) = redacted {
                text = new;
            }
        }
        cap_text_after(text, MAX_TEXT_BYTES)
    }

    /// Writes [`text_ref`](Self::text_ref)`(text)` as a JSON string: with one look at the text
    /// when it holds no trigger (the common case).
    /// The bytes readable after the text are read on by the look rather than copied.
    pub(crate) fn write_text(&self, Str { text, readable }: Str<'_>, out: &mut Vec<u8>) {
        let cut = cut_at_char_boundary(text, MAX_TEXT_PRE_REDACT_BYTES);
        let look = if self.enabled {
            prescan::look_in(readable, cut.len())
        } else {
            u8::from(needs_escape(cut.as_bytes())) * prescan::ESCAPES
        };
        if look & self.denylist.rules.triggers() == 0 && cut.len() <= MAX_TEXT_BYTES {
            write_str_with(out, cut, look & prescan::ESCAPES != 0);
        } else {
            write_str(out, &self.text_ref(text));
        }
    }

    /// [`text`](Self::text) of a borrowed text: borrowed back when nothing changes.
    pub(crate) fn text_ref<'t>(&self, text: &'t str) -> Cow<'t, str> {
        let cut = cut_at_char_boundary(text, MAX_TEXT_PRE_REDACT_BYTES);
        let redacted = if self.enabled { redact_with(cut, &self.denylist) } else { Cow::Borrowed(cut) };
        if redacted.len() > MAX_TEXT_BYTES {
            Cow::Owned(cap_text_after(redacted.into_owned(), MAX_TEXT_BYTES))
        } else {
            redacted
        }
    }
}

/// Whether `c` is removed from an unknown tool's name: a control character (C0, DEL, C1) or a
/// bidirectional formatting character, which could rewrite how the name reads where it is shown.
fn is_hidden_control(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

impl Redactor {
    /// `toolName` of a call to a tool the server does not have (the agent's text, not a
    /// validated name): control and bidirectional formatting characters removed, then redacted
    /// as [`text`](Self::text) is when redaction is on.
    pub(crate) fn unknown_tool_name<'t>(&self, name: &'t str) -> Cow<'t, str> {
        let name: Cow<'t, str> = if name.chars().any(is_hidden_control) {
            Cow::Owned(name.chars().filter(|&c| !is_hidden_control(c)).collect())
        } else {
            Cow::Borrowed(name)
        };
        match name {
            Cow::Borrowed(n) => self.text_ref(n),
            Cow::Owned(n) => Cow::Owned(self.text_ref(&n).into_owned()),
        }
    }
}

impl Default for Redactor {
    /// Redaction on, default denylist only, the siblings' rules (no credential layer).
    fn default() -> Self {
        Redactor::new(true, &[])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn nested(depth: usize, leaf: Value) -> Value {
        (0..depth).fold(leaf, |v, _| Value::Array(vec![v]))
    }

    #[test]
    fn redactor_is_send_sync_and_cheap_to_clone() {
        fn assert_send_sync<T: Send + Sync + Clone>() {}
        assert_send_sync::<Redactor>();
        let r = Redactor::new(true, &["a".to_owned()]);
        let c = r.clone();
        assert!(Arc::ptr_eq(&r.denylist, &c.denylist));
    }

    #[test]
    fn in_place_and_copy_agree() {
        let v = json!({
            "a": ["x a@b.com", 1, null, {"token": {"deep": 1}}],
            "Secret": "s",
            "deep": nested(70, json!("4111 1111 1111 1111")),
            // under the root key: the innermost array sits at depth 63, resp. 64
            "ok": nested(62, json!([])),
            "edge": nested(63, json!([]))
        });
        let copy = redact_value(&v, &[]);
        let in_place = Redactor::default().value(v.clone());
        assert_eq!(copy, in_place);
        assert_eq!(copy["Secret"], json!(markers::FIELD));
        assert_eq!(copy["a"][3]["token"], json!(markers::FIELD));
        assert_eq!(copy["ok"], nested(62, json!([])));
        assert_eq!(copy["edge"], nested(62, json!([markers::TOO_DEEP])));
    }

    #[test]
    fn disabled_redactor_still_caps() {
        let r = Redactor::new(false, &[]);
        assert_eq!(r.value(json!({"password": "p"})), json!({"password": "p"}));
        assert_eq!(r.text("a@b.com".to_owned()), "a@b.com");
        let long = "e".repeat(MAX_TEXT_BYTES + 1);
        assert_eq!(r.text(long).len(), MAX_TEXT_BYTES);
    }
}
