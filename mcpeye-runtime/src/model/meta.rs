//! Readers of what a request says about its model and its conversation: the request's `_meta`
//! (the intent and the model a client states), and the two opt-in arguments mcpeye may advertise
//! for them (`llm_model`, `mcpeyeConversation`), with the conversation handles mcpeye mints.
//!
//! The `_meta` keys read for the model, as real clients send them:
//! - `io.modelcontextprotocol/aiInvocation` `.model`: the key of the MCP proposal for AI
//!   invocation metadata (`{name}` there, a plain string from some clients), whose
//!   `.invocationReason` (else `.userIntent`) is read as the call's native intent;
//! - `x-codex-turn-metadata` `.model`: OpenAI Codex sends its turn's metadata under this key (an
//!   object, or that object as a JSON string, as it is in its HTTP header of the same name);
//!   posthog-rs 0.30 (`mcp` feature) reads the model from it after `aiInvocation`.
//!
//! Both are read in that order; a blank or non-string model is none.

use crate::redact::cut_at_char_boundary;
use serde_json::{Map, Value};
use std::hash::Hasher;
use std::sync::Arc;

/// `_meta` key under which MCP clients describe the model's invocation; its `invocationReason`
/// (else `userIntent`) is the intent the client states for the call, its `model` the model
/// that made it.
pub(crate) const META_AI_INVOCATION: &str = "io.modelcontextprotocol/aiInvocation";

/// `_meta` key under which OpenAI Codex sends its turn's metadata (with the turn's `model`).
pub(crate) const META_CODEX_TURN: &str = "x-codex-turn-metadata";

/// The argument mcpeye advertises for the model when asked to ([`ModelArgument`]).
pub const MODEL_PARAM_NAME: &str = "llm_model";

/// How the `llm_model` argument is described to the agent.
pub const MODEL_PARAM_DESCRIPTION: &str =
    "Optional. The name of the language model making this call (for example 'claude-sonnet-4'); used only for product analytics.";

/// The argument that carries a conversation handle back ([`ManifestBuilder::conversations`](crate::ManifestBuilder::conversations)).
pub const CONVERSATION_PARAM_NAME: &str = "mcpeyeConversation";

/// How the conversation argument is described to the agent: what it is, where its value comes
/// from, and that leaving it out is fine. Worded as a plain field description, with no
/// instruction about the rest of the conversation (see docs/attribution.md#conversation).
pub const CONVERSATION_PARAM_DESCRIPTION: &str =
    "Optional analytics field. If an earlier result from this server ended with 'conversation: cv_…', copy that value here; otherwise leave it out.";

/// Where mcpeye advertises the `llm_model` argument, for clients that do not state their model
/// in `_meta`. Off by default: `_meta` costs the agent nothing, the argument costs tokens in
/// every `tools/list` (the token report counts them).
///
/// ```
/// use mcpeye::{Manifest, ModelArgument};
/// let manifest = Manifest::builder().model_argument(ModelArgument::ReservedTool).build();
/// let reserved = &manifest.tools_list()[0];
/// assert!(reserved["inputSchema"]["properties"]["llm_model"].is_object());
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ModelArgument {
    /// Not advertised (the default): the model comes from `_meta` only.
    #[default]
    Off,
    /// On the reserved tool `mcpeye_request_capability` only (and on the opt-in feedback tool
    /// `mcpeye_send_feedback`, when it is on): a capability request says which model asked for
    /// it, and no other tool's schema grows.
    ReservedTool,
    /// On every tool that gets `mcpeyeIntent`, and on mcpeye's own tools.
    EveryTool,
}

impl ModelArgument {
    /// Whether a tool's schema gets the argument (`reserved`: the reserved tool).
    pub(crate) fn on(self, reserved: bool) -> bool {
        match self {
            ModelArgument::Off => false,
            ModelArgument::ReservedTool => reserved,
            ModelArgument::EveryTool => true,
        }
    }
}

/// The model a request's `_meta` states (see the module docs for the keys).
pub(crate) fn meta_model(meta: &Map<String, Value>) -> Option<Arc<str>> {
    // The proposal's `{name}`, or the plain string some clients send.
    let invocation_model = meta.get(META_AI_INVOCATION).and_then(|v| v.get("model"));
    if let Some(m) = invocation_model.and_then(|m| m.get("name").or(Some(m))).and_then(model_text) {
        return Some(m);
    }
    match meta.get(META_CODEX_TURN)? {
        Value::Object(o) => o.get("model").and_then(model_text),
        // Codex's header form: the object as a JSON string.
        Value::String(s) if s.len() <= MAX_CODEX_TURN_BYTES => {
            serde_json::from_str::<Map<String, Value>>(s).ok()?.get("model").and_then(model_text)
        }
        _ => None,
    }
}

/// Longest `x-codex-turn-metadata` string parsed for its model (a turn's metadata is a few
/// hundred bytes; a longer one is not parsed on the calling thread).
const MAX_CODEX_TURN_BYTES: usize = 4096;

/// Longest model name kept, in bytes (longer ones are cut at a character boundary): a model
/// name is short, and it is a grouping key of `Stats` and the Intent Gap.
const MAX_MODEL_BYTES: usize = 128;

/// A model name as recorded: a string that is not blank, trimmed and cut to [`MAX_MODEL_BYTES`].
fn model_text(v: &Value) -> Option<Arc<str>> {
    let s = v.as_str().filter(|s| !is_blank(s))?.trim();
    Some(Arc::from(cut_at_char_boundary(s, MAX_MODEL_BYTES)))
}

/// Removes `llm_model` from a call's arguments and returns the model it names, if any.
pub(crate) fn take_model(arguments: &mut Map<String, Value>) -> Option<Arc<str>> {
    arguments.shift_remove(MODEL_PARAM_NAME).as_ref().and_then(model_text)
}

/// The intent a client sent in the request's `_meta` (`io.modelcontextprotocol/aiInvocation`),
/// recorded untrimmed, as `mcpeyeIntent` is: its `invocationReason` (why the model calls the
/// tool: the question `mcpeyeIntent` asks), else its `userIntent` (the user's request), each as
/// the proposal's `{text}` object or a plain string; a blank text, or a `userIntent` marked
/// `redacted` without a text, is none.
pub(crate) fn native_intent(meta: &Map<String, Value>) -> Option<String> {
    let invocation = meta.get(META_AI_INVOCATION)?;
    invocation_text(invocation, "invocationReason")
        .or_else(|| invocation_text(invocation, "userIntent"))
        .map(str::to_owned)
}

/// What the request's `aiInvocation` says beyond the wire's intent and the model: the turn, both
/// texts and `userIntent.redacted`. The wire has no key for them: they go to spans and the
/// event log only (`docs/event-log.md`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct AiInvocation {
    /// `turnId`: groups the requests of one user turn. A string (a number is written out),
    /// trimmed, cut to [`MAX_TURN_BYTES`].
    pub turn: Option<Arc<str>>,
    /// `invocationReason` (`{text}` or a string), not blank, cut to [`MAX_INVOCATION_TEXT_BYTES`].
    pub reason: Option<String>,
    /// `userIntent` (`{text}` or a string), as `reason`.
    pub user_intent: Option<String>,
    /// `userIntent.redacted`, when the client says: the client removed or masked the user's words.
    pub user_intent_redacted: Option<bool>,
}

/// Longest `turnId` kept, in bytes: an id, and a grouping key of the report.
pub(crate) const MAX_TURN_BYTES: usize = 128;

/// Longest `invocationReason` or `userIntent` text carried to the flusher for the event log, in
/// bytes: the record holds both in one 64 KiB region (the wire's intent has its own cap).
pub(crate) const MAX_INVOCATION_TEXT_BYTES: usize = 16 * 1024;

/// The `aiInvocation` text under `key`: the proposal's `{text}` object or a plain string, when
/// not blank.
fn invocation_text<'a>(invocation: &'a Value, key: &str) -> Option<&'a str> {
    match invocation.get(key)? {
        Value::String(s) => Some(s.as_str()),
        Value::Object(o) => o.get("text").and_then(Value::as_str),
        _ => None,
    }
    .filter(|s| !is_blank(s))
}

/// What the request's `_meta` `aiInvocation` says beyond the intent and the model ([`AiInvocation`]);
/// `None` when it says none of it.
pub(crate) fn invocation(meta: &Map<String, Value>) -> Option<Arc<AiInvocation>> {
    let invocation = meta.get(META_AI_INVOCATION)?;
    let cut = |s: &str, max: usize| cut_at_char_boundary(s, max).to_owned();
    let turn = match invocation.get("turnId") {
        Some(Value::String(s)) if !is_blank(s) => Some(Arc::from(cut(s.trim(), MAX_TURN_BYTES))),
        Some(Value::Number(n)) => Some(Arc::from(n.to_string())),
        _ => None,
    };
    let text = |key| invocation_text(invocation, key).map(|s| cut(s, MAX_INVOCATION_TEXT_BYTES));
    let user_intent_redacted = invocation.get("userIntent").and_then(|u| u.get("redacted")).and_then(Value::as_bool);
    let found =
        AiInvocation { turn, reason: text("invocationReason"), user_intent: text("userIntent"), user_intent_redacted };
    (found != AiInvocation::default()).then(|| Arc::new(found))
}

/// What the conversation argument of a call said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Handle {
    /// None given (or `null`, or blank): the call starts a conversation.
    Absent,
    /// A handle minted under this key for this user, checked.
    Valid(Arc<str>),
    /// Something else: ignored (and counted), the call starts a conversation.
    Invalid,
}

/// The handle prefix; a handle is `cv_` + 16 hex digits of id + 8 hex digits of tag.
const HANDLE_PREFIX: &str = "cv_";
const HANDLE_LEN: usize = HANDLE_PREFIX.len() + 16 + 8;

/// The environment variable [`Config::from_env`](crate::Config::from_env) reads the conversation
/// key from when [`Config::conversation_key`](crate::Config::conversation_key) is not set.
///
/// ```
/// assert_eq!(mcpeye::CONVERSATION_KEY_ENV, "MCPEYE_CONVERSATION_KEY");
/// ```
pub const CONVERSATION_KEY_ENV: &str = "MCPEYE_CONVERSATION_KEY";

/// Fewest bytes of a configured conversation key: 256 bits of secret, as the `requestState`
/// key asks.
pub(crate) const MIN_CONVERSATION_KEY_BYTES: usize = 32;

/// The key conversation handles are tagged under: a configured secret's (the same on every
/// replica and across restarts), else one drawn per process.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct HandleKey {
    k0: u64,
    k1: u64,
}

impl std::fmt::Debug for HandleKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HandleKey(…)")
    }
}

impl HandleKey {
    /// The key of a configured secret (at least [`MIN_CONVERSATION_KEY_BYTES`]): its 128 bits are
    /// two SipHash digests of the secret under fixed keys, so that only the secret's holders
    /// know them.
    pub(crate) fn from_secret(secret: &[u8]) -> HandleKey {
        let digest = |domain: u64| {
            let mut h = siphasher(domain, !domain);
            h.write(secret);
            h.finish()
        };
        HandleKey { k0: digest(0x6d63_7065_7965_2f63), k1: digest(0x6f6e_7665_7273_6174) }
    }

    /// This process's key, drawn at its first use from the OS's randomness: a handle minted
    /// under it is valid in this process only.
    pub(crate) fn process() -> HandleKey {
        static KEY: std::sync::OnceLock<HandleKey> = std::sync::OnceLock::new();
        *KEY.get_or_init(|| {
            let (k0, k1) = uuid::Uuid::new_v4().as_u64_pair();
            HandleKey { k0, k1 }
        })
    }

    /// The tag of a handle's id for `user` (the caller's identity, when `identify` names one):
    /// keyed SipHash-2-4 of both, cut to 32 bits.
    fn tag(&self, id: u64, user: Option<&str>) -> u32 {
        let mut h = siphasher(self.k0, self.k1);
        h.write_u64(id);
        if let Some(user) = user {
            // Length first: no two (id, user) pairs hash the same bytes.
            h.write_u64(user.len() as u64);
            h.write(user.as_bytes());
        }
        h.finish() as u32
    }

    /// A new conversation handle for `user`.
    pub(crate) fn mint(&self, user: Option<&str>) -> Arc<str> {
        let id = uuid::Uuid::new_v4().as_u64_pair().0;
        Arc::from(format!("{HANDLE_PREFIX}{id:016x}{:08x}", self.tag(id, user)))
    }

    /// What a conversation argument (taken out with [`take_conversation`]) says, checked under
    /// this key for `user`.
    pub(crate) fn read(&self, argument: Option<Value>, user: Option<&str>) -> Handle {
        match argument {
            None | Some(Value::Null) => Handle::Absent,
            Some(Value::String(s)) if is_blank(&s) => Handle::Absent,
            Some(Value::String(s)) => match self.check(s.trim(), user) {
                true => Handle::Valid(Arc::from(s.trim())),
                false => Handle::Invalid,
            },
            Some(_) => Handle::Invalid,
        }
    }

    /// Whether `s` is a handle minted under this key for `user`: the format first (cheap, and
    /// nothing of an arbitrary string is parsed), then the tag.
    fn check(&self, s: &str, user: Option<&str>) -> bool {
        let Some(hex) = s.strip_prefix(HANDLE_PREFIX).filter(|_| s.len() == HANDLE_LEN) else { return false };
        if !hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
            return false;
        }
        let (id, t) = hex.split_at(16);
        match (u64::from_str_radix(id, 16), u32::from_str_radix(t, 16)) {
            (Ok(id), Ok(t)) => self.tag(id, user) == t,
            _ => false,
        }
    }
}

/// SipHash-2-4 under an explicit key: std's, the one keyed hash std has. Deprecated only in
/// favour of `DefaultHasher`, whose key cannot be chosen.
#[allow(deprecated)]
fn siphasher(k0: u64, k1: u64) -> std::hash::SipHasher {
    std::hash::SipHasher::new_with_keys(k0, k1)
}

/// Removes the conversation argument from a call's arguments, unread.
pub(crate) fn take_conversation(arguments: &mut Map<String, Value>) -> Option<Value> {
    arguments.shift_remove(CONVERSATION_PARAM_NAME)
}

/// The text item a result gets on the call that minted its conversation's handle.
pub(crate) fn handle_text(handle: &str) -> String {
    format!("conversation: {handle}")
}

/// Whether `s` is empty or only whitespace (`str::trim`'s). An intent or a tool name almost
/// always starts with a printable ASCII character, which settles it without `trim`'s Unicode
/// tables: their code, on every call (and every event the flusher encodes), is what it would cost.
pub(crate) fn is_blank(s: &str) -> bool {
    match s.as_bytes().first() {
        // ASCII and not one of `char::is_whitespace`'s ASCII characters (vertical tab included).
        Some(&b) if b.is_ascii() && !matches!(b, b'\t' | b'\n' | 0x0B | 0x0C | b'\r' | b' ') => false,
        _ => is_blank_slow(s),
    }
}

#[inline(never)]
fn is_blank_slow(s: &str) -> bool {
    s.trim().is_empty()
}

/// Where a call's intent came from (`intentSource` on the wire).
///
/// ```
/// use mcpeye::{CallOutcome, CallRecord, IntentSource};
///
/// let mut record = CallRecord::new("search", serde_json::json!({}), CallOutcome::error("no index"));
/// record.intent = Some(("Find last year's invoices.".into(), IntentSource::Mcpeye));
/// assert_eq!(IntentSource::Native.as_str(), "native");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntentSource {
    /// From the `mcpeyeIntent` argument injected by mcpeye.
    Mcpeye,
    /// Harvested from a host-specific field.
    Native,
}

impl IntentSource {
    /// The wire spelling: `"mcpeye"` or `"native"`.
    ///
    /// ```
    /// assert_eq!(mcpeye::IntentSource::Mcpeye.as_str(), "mcpeye");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            IntentSource::Mcpeye => "mcpeye",
            IntentSource::Native => "native",
        }
    }
}

/// Milliseconds since the Unix epoch now (0 if the clock is before 1970).
pub(crate) fn now_epoch_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn the_model_is_read_from_each_meta_key() {
        let ai = obj(json!({META_AI_INVOCATION: {"model": " claude-opus-4 ", "userIntent": "x"}}));
        assert_eq!(meta_model(&ai).as_deref(), Some("claude-opus-4"));
        let codex = obj(json!({META_CODEX_TURN: {"model": "gpt-5-codex", "turn_id": "t"}}));
        assert_eq!(meta_model(&codex).as_deref(), Some("gpt-5-codex"));
        let codex_text = obj(json!({META_CODEX_TURN: "{\"model\":\"gpt-5\",\"turn_id\":\"t\"}"}));
        assert_eq!(meta_model(&codex_text).as_deref(), Some("gpt-5"));
        // aiInvocation first; blanks and non-strings are no model.
        let both = obj(json!({META_CODEX_TURN: {"model": "b"}, META_AI_INVOCATION: {"model": "a"}}));
        assert_eq!(meta_model(&both).as_deref(), Some("a"));
        for none in [json!({META_AI_INVOCATION: {"model": "  "}}), json!({META_AI_INVOCATION: {"model": 3}}), json!({})]
        {
            assert_eq!(meta_model(&obj(none.clone())), None, "{none}");
        }
        let long = obj(json!({META_AI_INVOCATION: {"model": "é".repeat(100)}}));
        assert!(meta_model(&long).unwrap().len() <= MAX_MODEL_BYTES);
    }

    #[test]
    fn ai_invocation_is_read_in_the_proposals_objects_and_as_strings() {
        let proposal = obj(json!({META_AI_INVOCATION: {
            "model": {"name": "claude-sonnet-4"},
            "invocationReason": {"text": "Find red mugs to compare."},
            "userIntent": {"text": "I want a gift mug", "redacted": false},
            "turnId": "turn-1"
        }}));
        assert_eq!(meta_model(&proposal).as_deref(), Some("claude-sonnet-4"));
        // The model's reason for this call is the intent; the user's request is the fallback.
        assert_eq!(native_intent(&proposal).as_deref(), Some("Find red mugs to compare."));
        let user_only = obj(json!({META_AI_INVOCATION: {"userIntent": {"text": "a gift mug"}}}));
        assert_eq!(native_intent(&user_only).as_deref(), Some("a gift mug"));
        let strings = obj(json!({META_AI_INVOCATION: {"model": "gpt-5", "userIntent": "a gift mug"}}));
        assert_eq!(
            (meta_model(&strings).as_deref(), native_intent(&strings).as_deref()),
            (Some("gpt-5"), Some("a gift mug"))
        );
        for none in [
            json!({META_AI_INVOCATION: {"userIntent": {"redacted": true}}}),
            json!({META_AI_INVOCATION: {"invocationReason": {"text": " "}, "model": {"name": ""}}}),
        ] {
            let meta = obj(none.clone());
            assert_eq!((native_intent(&meta), meta_model(&meta)), (None, None), "{none}");
        }
    }

    #[test]
    fn ai_invocation_keeps_the_turn_both_texts_and_the_redacted_flag() {
        let proposal = obj(json!({META_AI_INVOCATION: {
            "invocationReason": {"text": "Find red mugs to compare."},
            "userIntent": {"text": "I want a gift mug", "redacted": true},
            "turnId": " turn-1 "
        }}));
        let found = invocation(&proposal).unwrap();
        assert_eq!(
            *found,
            AiInvocation {
                turn: Some(Arc::from("turn-1")),
                reason: Some("Find red mugs to compare.".into()),
                user_intent: Some("I want a gift mug".into()),
                user_intent_redacted: Some(true),
            }
        );
        // A userIntent the client redacted away entirely still says so.
        let redacted = obj(json!({META_AI_INVOCATION: {"userIntent": {"redacted": true}, "turnId": 7}}));
        let found = invocation(&redacted).unwrap();
        assert_eq!(
            (found.turn.as_deref(), found.user_intent_redacted, found.user_intent.as_deref()),
            (Some("7"), Some(true), None)
        );
        let strings = obj(json!({META_AI_INVOCATION: {"userIntent": "a gift mug", "invocationReason": "compare"}}));
        let found = invocation(&strings).unwrap();
        assert_eq!((found.reason.as_deref(), found.user_intent.as_deref()), (Some("compare"), Some("a gift mug")));
        // Only a model (or nothing) beyond the intent: nothing to keep.
        for none in [
            json!({META_AI_INVOCATION: {"model": {"name": "m"}}}),
            json!({META_AI_INVOCATION: {"turnId": " "}}),
            json!({}),
        ] {
            assert_eq!(invocation(&obj(none.clone())), None, "{none}");
        }
        let long = obj(
            json!({META_AI_INVOCATION: {"turnId": "é".repeat(200), "userIntent": "x".repeat(MAX_INVOCATION_TEXT_BYTES + 5)}}),
        );
        let found = invocation(&long).unwrap();
        assert!(found.turn.as_deref().unwrap().len() <= MAX_TURN_BYTES);
        assert_eq!(found.user_intent.as_deref().map(str::len), Some(MAX_INVOCATION_TEXT_BYTES));
    }

    #[test]
    fn the_model_argument_is_taken_out() {
        let mut args = obj(json!({"q": 1, "llm_model": "gpt-4o"}));
        assert_eq!(take_model(&mut args).as_deref(), Some("gpt-4o"));
        assert_eq!(Value::Object(args), json!({"q": 1}));
        let mut blank = obj(json!({"llm_model": ""}));
        assert_eq!(take_model(&mut blank), None);
        assert!(blank.is_empty());
    }

    #[test]
    fn handles_are_checked() {
        let key = HandleKey::process();
        let read = |v: Value| key.read(take_conversation(&mut obj(v)), None);
        let h = key.mint(None);
        assert_eq!(h.len(), HANDLE_LEN);
        let mut args = obj(json!({CONVERSATION_PARAM_NAME: &*h, "a": 1}));
        assert_eq!(key.read(take_conversation(&mut args), None), Handle::Valid(h.clone()));
        assert_eq!(Value::Object(args), json!({"a": 1}));
        // A made-up handle of the right shape, another shape, another type: invalid.
        let forged = format!("{}{}", &h[..h.len() - 1], if h.ends_with('0') { '1' } else { '0' });
        for bad in [json!(forged), json!("cv_123"), json!("hello"), json!(7), json!({"x": 1})] {
            assert_eq!(read(json!({CONVERSATION_PARAM_NAME: bad.clone()})), Handle::Invalid, "{bad}");
        }
        for absent in [json!({}), json!({CONVERSATION_PARAM_NAME: null}), json!({CONVERSATION_PARAM_NAME: " "})] {
            assert_eq!(read(absent), Handle::Absent);
        }
    }

    /// A handle names the user it was minted for, and a configured secret makes the same key in
    /// every process that has it (another replica, or this one after a restart).
    #[test]
    fn handles_are_bound_to_their_user_and_to_their_key() {
        let secret = b"0123456789abcdef0123456789abcdef";
        let (replica_a, replica_b) = (HandleKey::from_secret(secret), HandleKey::from_secret(secret));
        let alice = replica_a.mint(Some("alice"));
        let valid = |key: &HandleKey, h: &str, user| key.read(Some(json!(h)), user) == Handle::Valid(Arc::from(h));
        assert!(valid(&replica_b, &alice, Some("alice")), "another process with the same secret");
        assert!(!valid(&replica_b, &alice, Some("bob")), "another user");
        assert!(!valid(&replica_b, &alice, None), "no user");
        assert!(!valid(&HandleKey::process(), &alice, Some("alice")), "another key");
        let other = HandleKey::from_secret(b"0123456789abcdef0123456789abcdeF");
        assert!(!valid(&other, &alice, Some("alice")), "a secret one byte apart");
        // No user and an empty user are told apart.
        let anon = replica_a.mint(None);
        assert!(valid(&replica_a, &anon, None) && !valid(&replica_a, &anon, Some("")));
        assert!(!format!("{replica_a:?}").contains(&replica_a.k0.to_string()));
    }
}
