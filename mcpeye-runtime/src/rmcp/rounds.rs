//! `input_required` rounds of a `tools/call` (MCP 2026-07-28, SEP-2322) for the manifest's
//! tools: the round's [`Asking`] opened from the retry's `inputResponses` and sealed
//! `requestState`, and the `InputRequiredResult` of a round that ends with questions.
//!
//! The state is sealed with rmcp's HMAC-SHA256 [`RequestStateCodec`], bound to the call (its
//! tool, arguments and client) and valid for [`STATE_TTL`]: a state from another server, another
//! call or an older hour is refused. The key is [`set_request_state_key`]'s, else the
//! `MCPEYE_REQUEST_STATE_KEY` environment variable's, else random per process (a retry must
//! then reach the same process: give every replica the same key).

use super::client::META_CLIENT_CAPABILITIES;
use crate::dispatch::take_intent;
use crate::model::ask::{Asking, Carried};
use crate::model::record::IntentSource;
use ::rmcp::model::{InputRequests, InputRequiredResult, InputResponses, JsonObject, RequestStateCodec, SealOptions};
use ::rmcp::service::RequestContext;
use ::rmcp::{ErrorData, RoleServer};
use serde_json::{Map, Value};
use std::fmt;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// How long a `requestState` stays valid: a question may wait for a person.
///
/// ```
/// assert_eq!(mcpeye::rmcp::STATE_TTL.as_secs(), 3600);
/// ```
pub const STATE_TTL: Duration = Duration::from_secs(3600);

/// The environment variable read for the key when [`set_request_state_key`] was not called
/// (its UTF-8 bytes, at least 32; a shorter value is ignored and the key is random).
///
/// ```
/// assert_eq!(mcpeye::rmcp::REQUEST_STATE_KEY_ENV, "MCPEYE_REQUEST_STATE_KEY");
/// ```
pub const REQUEST_STATE_KEY_ENV: &str = "MCPEYE_REQUEST_STATE_KEY";

static CODEC: OnceLock<RequestStateCodec> = OnceLock::new();

/// Why [`set_request_state_key`] refused a key.
///
/// ```
/// use mcpeye::rmcp::{set_request_state_key, RequestStateKeyError};
/// let refused = set_request_state_key(vec![7; 8]).unwrap_err();
/// assert_eq!(refused, RequestStateKeyError::TooShort);
/// assert_eq!(refused.to_string(), "the requestState key must be at least 32 bytes");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RequestStateKeyError {
    /// The key is shorter than 32 bytes.
    TooShort,
    /// A key is already in use (set before, or read at the first round).
    AlreadySet,
}

impl fmt::Display for RequestStateKeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestStateKeyError::TooShort => f.write_str("the requestState key must be at least 32 bytes"),
            RequestStateKeyError::AlreadySet => f.write_str("a requestState key is already in use"),
        }
    }
}

impl std::error::Error for RequestStateKeyError {}

/// Sets the key that seals the `requestState` of `input_required` results (at least 32 bytes
/// of secret, high-entropy material). Call it once, before serving, with the same key on every
/// replica, so that any replica can answer a retry. Without it the key is
/// `MCPEYE_REQUEST_STATE_KEY`'s (its UTF-8 bytes), else random per process.
///
/// ```
/// use mcpeye::rmcp::{set_request_state_key, RequestStateKeyError};
/// assert_eq!(set_request_state_key(b"short".to_vec()), Err(RequestStateKeyError::TooShort));
/// set_request_state_key(b"0123456789abcdef0123456789abcdef".to_vec()).unwrap();
/// assert_eq!(set_request_state_key(b"another key, 32 bytes or longer!!".to_vec()), Err(RequestStateKeyError::AlreadySet));
/// ```
pub fn set_request_state_key(key: Vec<u8>) -> Result<(), RequestStateKeyError> {
    let codec = RequestStateCodec::try_new(key).map_err(|_| RequestStateKeyError::TooShort)?;
    CODEC.set(codec).map_err(|_| RequestStateKeyError::AlreadySet)
}

fn codec() -> &'static RequestStateCodec {
    CODEC.get_or_init(|| {
        let configured = std::env::var(REQUEST_STATE_KEY_ENV).ok().and_then(|k| RequestStateCodec::try_new(k).ok());
        configured.unwrap_or_else(|| {
            // 244 bits from the thread's CSPRNG.
            let mut key = uuid::Uuid::new_v4().as_bytes().to_vec();
            key.extend_from_slice(uuid::Uuid::new_v4().as_bytes());
            RequestStateCodec::new_unchecked(key)
        })
    })
}

/// Whether the request is of MCP 2026-07-28 or later (no handshake: questions go through
/// `input_required` results).
pub(crate) fn is_stateless_era(context: &RequestContext<RoleServer>) -> bool {
    context.meta.protocol_version().is_some_and(|v| !v.has_initialize())
}

/// What the state is bound to: this call of `tool` with these arguments, from this client.
fn binding(context: &RequestContext<RoleServer>, tool: &str, arguments: Option<&JsonObject>) -> Vec<u8> {
    let mut bound = b"mcpeye/tools/call\n".to_vec();
    bound.extend_from_slice(tool.as_bytes());
    bound.push(b'\n');
    if let Some(info) = context.meta.client_info() {
        bound.extend_from_slice(info.name.as_bytes());
    }
    bound.push(b'\n');
    let canonical = arguments.map(|a| canonical(&Value::Object(a.clone()))).unwrap_or(Value::Null);
    bound.extend_from_slice(canonical.to_string().as_bytes());
    bound
}

/// `value` with every object's keys sorted: a client may resend the arguments in another order.
fn canonical(value: &Value) -> Value {
    match value {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            Value::Object(keys.into_iter().map(|k| (k.clone(), canonical(&m[k]))).collect())
        }
        Value::Array(items) => Value::Array(items.iter().map(canonical).collect()),
        other => other.clone(),
    }
}

/// One round of a call: the state it continues (refused when it fails verification) and the
/// answers it brings, with what its state is bound to (for [`input_required`]). The context's
/// `_meta` must still be there (read before it is taken).
pub(crate) fn open(
    context: &RequestContext<RoleServer>,
    tool: &str,
    arguments: Option<&JsonObject>,
    responses: Option<InputResponses>,
    state: Option<&str>,
) -> Result<(Arc<Asking>, Vec<u8>), ErrorData> {
    let bound = binding(context, tool, arguments);
    let carried = match state {
        None => None,
        Some(sealed) => {
            let opened = codec().open_json_with::<Carried>(sealed, &bound);
            Some(opened.map_err(|e| ErrorData::invalid_params(format!("invalid requestState: {e}"), None))?)
        }
    };
    let responses: Map<String, Value> = responses.unwrap_or_default().into_iter().collect();
    let capabilities = context.meta.get(META_CLIENT_CAPABILITIES).cloned().unwrap_or(Value::Null);
    Ok((Arc::new(Asking::new(carried, responses, capabilities)), bound))
}

/// The answer of a round that ended with questions: them, and the sealed state of the next round.
pub(crate) fn input_required(
    asking: &Asking,
    bound: &[u8],
    arguments: Option<&JsonObject>,
) -> Result<InputRequiredResult, ErrorData> {
    let intent = arguments.and_then(|a| take_intent(&mut a.clone())).map(|(t, _)| (t, IntentSource::Mcpeye));
    let (requests, carried) = asking.next_round(intent.as_ref());
    let requests: InputRequests = serde_json::from_value(Value::Object(requests))
        .map_err(|e| ErrorData::internal_error(format!("mcpeye built an invalid input request: {e}"), None))?;
    let sealed = codec()
        .seal_json_with(&carried, &SealOptions::new().associated_data(bound).ttl(STATE_TTL))
        .map_err(|e| ErrorData::internal_error(format!("could not seal the requestState: {e}"), None))?;
    Ok(InputRequiredResult::new(Some(requests), Some(sealed)))
}

/// The `requestState` of an instrumented rmcp tool's `input_required` round: the tool's own
/// state, wrapped with what mcpeye carries across rounds, and sealed.
#[derive(serde::Serialize, serde::Deserialize)]
struct Envelope {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    inner: Option<String>,
    carried: Carried,
}

/// A round of an instrumented tool's call of MCP 2026-07-28: what it is bound to and what
/// earlier rounds left (`None` for the first round).
pub(crate) struct InstrumentedRound {
    bound: Vec<u8>,
    pub(crate) carried: Option<Carried>,
    /// The intent of the call's first round (set once the round's intent is known).
    pub(crate) intent: Option<(String, IntentSource)>,
}

impl InstrumentedRound {
    /// The round of this call, the tool's own state taken out of mcpeye's envelope (an error for
    /// a state that fails verification). `arguments` are those the tool sees, `intent` the one
    /// taken out of them.
    pub(crate) fn open(
        context: &RequestContext<RoleServer>,
        tool: &str,
        arguments: Option<&JsonObject>,
        intent: Option<&str>,
        state: &mut Option<String>,
    ) -> Result<InstrumentedRound, ErrorData> {
        let mut bound = binding(context, tool, arguments);
        bound.extend_from_slice(intent.unwrap_or_default().as_bytes());
        let carried = match state.take() {
            None => None,
            Some(sealed) => {
                let envelope = codec()
                    .open_json_with::<Envelope>(&sealed, &bound)
                    .map_err(|e| ErrorData::invalid_params(format!("invalid requestState: {e}"), None))?;
                *state = envelope.inner;
                Some(envelope.carried)
            }
        };
        Ok(InstrumentedRound { bound, carried, intent: None })
    }

    /// Wraps the tool's state of a round that asks: its first start, this round and the first
    /// round's intent travel with it.
    pub(crate) fn seal(&self, result: &mut InputRequiredResult) {
        let intent = self.intent.as_ref();
        let carried = match &self.carried {
            Some(c) => Carried { round: c.round.saturating_add(1), answers: Map::new(), ..c.clone() },
            None => Carried {
                started_ms: crate::model::record::now_epoch_ms(),
                round: 1,
                intent: intent.map(|(t, s)| (t.clone(), s.as_str().to_owned())),
                answers: Map::new(),
            },
        };
        let envelope = Envelope { inner: result.request_state.take(), carried };
        let options = SealOptions::new().associated_data(&self.bound).ttl(STATE_TTL);
        // Sealing JSON built here cannot fail; were it to, the round keeps the tool's own state.
        match codec().seal_json_with(&envelope, &options) {
            Ok(sealed) => result.request_state = Some(sealed),
            Err(_) => result.request_state = envelope.inner,
        }
    }

    /// How long ago the call's first round started, and its intent, for a later round.
    pub(crate) fn earlier(&self) -> Option<(Duration, Option<(String, IntentSource)>)> {
        let carried = self.carried.as_ref()?;
        let ago = Duration::from_millis(crate::model::record::now_epoch_ms().saturating_sub(carried.started_ms));
        let intent = carried.intent.clone().map(|(t, s)| {
            (t, if s == IntentSource::Native.as_str() { IntentSource::Native } else { IntentSource::Mcpeye })
        });
        Some((ago, intent))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_sorts_nested_keys() {
        let a = serde_json::json!({"b": 1, "a": {"y": [{"d": 1, "c": 2}], "x": 0}});
        assert_eq!(canonical(&a).to_string(), r#"{"a":{"x":0,"y":[{"c":2,"d":1}]},"b":1}"#);
    }
}
