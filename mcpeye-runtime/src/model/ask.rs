//! Questions a handler asks the client in MCP 2026-07-28 (SEP-2322), where a server cannot send
//! requests to the client: the call answers `resultType: "input_required"` with the questions,
//! the client retries the same call with the answers, and the handler runs again from the start.
//!
//! One [`Asking`] per round. Each question has a key: the handler's own
//! ([`ElicitationRequest::key`](crate::ElicitationRequest::key)), else `elicit-N`, `sample-N` or
//! `roots-N` where `N` counts the questions of the run, so a handler that asks in the same order
//! on every run finds each answer under the key it asked with. A question the round has an
//! answer for is answered at once; one it has none for stays unanswered, and the serving layer
//! ends the round (drops the handler) as soon as the handler waits with one outstanding.
//!
//! What crosses rounds is [`Carried`], sealed into the `requestState` by the serving layer: the
//! call's first start, its round, the first round's intent and the answers used so far.

use crate::model::client::ElicitationAction;
use crate::model::meta::{now_epoch_ms, IntentSource};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::sync::Mutex;

/// `elicitation/create`.
pub(crate) const ELICIT: &str = "elicitation/create";
/// `sampling/createMessage`.
pub(crate) const SAMPLE: &str = "sampling/createMessage";
/// `roots/list`.
pub(crate) const ROOTS: &str = "roots/list";

/// What travels from one round to the next in the sealed `requestState`.
// Only rmcp serves rounds; without it the manifest never asks through them.
#[cfg_attr(not(feature = "rmcp"), allow(dead_code))]
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub(crate) struct Carried {
    /// Epoch milliseconds when the call's first round started.
    pub(crate) started_ms: u64,
    /// The round that produced this state (1 for the first).
    pub(crate) round: u32,
    /// The first round's intent and its source (`mcpeye` or `native`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) intent: Option<(String, String)>,
    /// Answers of earlier rounds the handler used, by key.
    #[serde(default)]
    pub(crate) answers: Map<String, Value>,
}

/// One round of a call that may ask: the answers it has and the questions left unanswered.
#[derive(Debug)]
pub(crate) struct Asking {
    /// Answers carried from earlier rounds, then this round's `inputResponses` over them.
    answers: Map<String, Value>,
    /// The keys of this round's `inputResponses` (their elicitation actions are counted once, here).
    fresh: Vec<String>,
    /// The client's declared capabilities (`_meta`), `Null` when it declared none.
    capabilities: Value,
    /// This round (1 for the first).
    pub(crate) round: u32,
    /// Epoch milliseconds when the call's first round started.
    pub(crate) started_ms: u64,
    /// The first round's intent, from a later round's state.
    pub(crate) intent: Option<(String, IntentSource)>,
    state: Mutex<RoundState>,
}

#[derive(Debug, Default)]
struct RoundState {
    /// Questions asked so far in this run (numbers the default keys).
    asked: usize,
    /// Questions without an answer, as `{method, params}`, by key.
    pending: Vec<(String, Value)>,
    /// Answers the handler used, by key (carried to the next round).
    used: Map<String, Value>,
    /// Elicitation actions of this round's fresh answers.
    actions: Vec<ElicitationAction>,
}

/// What a question got: its answer, or none in this round.
pub(crate) enum Lookup {
    Answered(Value),
    Unanswered,
}

// Only rmcp serves rounds; without it the manifest never asks through them.
#[cfg_attr(not(feature = "rmcp"), allow(dead_code))]
impl Asking {
    /// A round: the first when `carried` is `None`; `responses` are the retry's `inputResponses`.
    pub(crate) fn new(carried: Option<Carried>, responses: Map<String, Value>, capabilities: Value) -> Self {
        let first = carried.is_none();
        let carried = carried.unwrap_or_else(|| Carried { started_ms: now_epoch_ms(), ..Carried::default() });
        let mut answers = carried.answers;
        let fresh: Vec<String> = responses.keys().cloned().collect();
        answers.extend(responses);
        let intent = carried.intent.map(|(text, source)| {
            let source =
                if source == IntentSource::Native.as_str() { IntentSource::Native } else { IntentSource::Mcpeye };
            (text, source)
        });
        Asking {
            answers,
            fresh,
            capabilities,
            round: if first { 1 } else { carried.round.saturating_add(1) },
            started_ms: carried.started_ms,
            intent,
            state: Mutex::new(RoundState::default()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, RoundState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The client's declared capability `name` (`elicitation`, `sampling`, `roots`), if declared.
    pub(crate) fn capability(&self, name: &str) -> Option<&Value> {
        self.capabilities.get(name).filter(|v| !v.is_null())
    }

    /// Asks `method` with `params` under `key` (or the run's next default key): the answer when
    /// the round has one that `valid` accepts, else the question is left for the client.
    pub(crate) fn ask(
        &self,
        key: Option<&str>,
        method: &'static str,
        params: Value,
        valid: impl Fn(&Value) -> bool,
    ) -> (String, Lookup) {
        let mut state = self.lock();
        let n = state.asked;
        state.asked += 1;
        let key = match key {
            Some(k) => k.to_owned(),
            None => format!("{}-{n}", default_prefix(method)),
        };
        if let Some(answer) = self.answers.get(&key).filter(|a| valid(a)) {
            if method == ELICIT && self.fresh.contains(&key) && !state.used.contains_key(&key) {
                if let Some(action) = answer.get("action").and_then(Value::as_str).and_then(ElicitationAction::parse) {
                    state.actions.push(action);
                }
            }
            state.used.insert(key.clone(), answer.clone());
            return (key, Lookup::Answered(answer.clone()));
        }
        if !state.pending.iter().any(|(k, _)| *k == key) {
            let mut request = Map::new();
            request.insert("method".into(), Value::String(method.to_owned()));
            request.insert("params".into(), params);
            state.pending.push((key.clone(), Value::Object(request)));
        }
        (key, Lookup::Unanswered)
    }

    /// Whether a question of this run is still unanswered.
    pub(crate) fn has_pending(&self) -> bool {
        !self.lock().pending.is_empty()
    }

    /// The unanswered questions (`inputRequests`) and the state for the next round.
    pub(crate) fn next_round(&self, intent: Option<&(String, IntentSource)>) -> (Map<String, Value>, Carried) {
        let state = self.lock();
        let requests: Map<String, Value> = state.pending.iter().cloned().collect();
        let intent = self.intent.as_ref().or(intent).map(|(t, s)| (t.clone(), s.as_str().to_owned()));
        let carried = Carried { started_ms: self.started_ms, round: self.round, intent, answers: state.used.clone() };
        (requests, carried)
    }

    /// The elicitation actions of this round's answers.
    pub(crate) fn actions(&self) -> Vec<ElicitationAction> {
        self.lock().actions.clone()
    }
}

fn default_prefix(method: &str) -> &'static str {
    match method {
        ELICIT => "elicit",
        SAMPLE => "sample",
        _ => "roots",
    }
}

/// An event on the call's span (current while the handler is polled): a question asked or
/// answered, with its round and, for an answered elicitation, the user's action.
#[allow(unused_variables)]
pub(crate) fn span_event(name: &'static str, method: &str, key: &str, round: u32, action: Option<&str>) {
    #[cfg(feature = "tracing")]
    ::tracing::info!(
        mcpeye.input.key = key,
        mcp.method.name = method,
        mcpeye.round = round,
        mcpeye.elicitation.action = action,
        "{name}"
    );
    #[cfg(feature = "opentelemetry")]
    {
        use ::opentelemetry::trace::TraceContextExt;
        use ::opentelemetry::KeyValue;
        let cx = ::opentelemetry::Context::current();
        let span = cx.span();
        if span.is_recording() {
            let mut attributes = vec![
                KeyValue::new("mcpeye.input.key", key.to_owned()),
                KeyValue::new("mcp.method.name", method.to_owned()),
                KeyValue::new("mcpeye.round", i64::from(round)),
            ];
            if let Some(action) = action {
                attributes.push(KeyValue::new("mcpeye.elicitation.action", action.to_owned()));
            }
            span.add_event(name, attributes);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn default_keys_number_the_questions_and_answers_carry_over() {
        let first = Asking::new(None, Map::new(), json!({"elicitation": {}}));
        let (key, lookup) = first.ask(None, ELICIT, json!({"message": "name?"}), |_| true);
        assert_eq!(key, "elicit-0");
        assert!(matches!(lookup, Lookup::Unanswered));
        assert!(first.has_pending());
        let (requests, carried) = first.next_round(Some(&("book a room".into(), IntentSource::Mcpeye)));
        assert_eq!(requests["elicit-0"]["method"], ELICIT);
        assert_eq!(carried.round, 1);

        let answer = json!({"action": "accept", "content": {"name": "Ada"}});
        let second = Asking::new(Some(carried), obj(json!({"elicit-0": answer})), Value::Null);
        assert_eq!(second.round, 2);
        assert_eq!(second.intent.as_ref().map(|(t, _)| t.as_str()), Some("book a room"));
        let (_, lookup) = second.ask(None, ELICIT, json!({}), |_| true);
        assert!(matches!(lookup, Lookup::Answered(v) if v == answer));
        let (key, lookup) = second.ask(Some("color"), ELICIT, json!({}), |_| true);
        assert_eq!(key, "color");
        assert!(matches!(lookup, Lookup::Unanswered));
        assert_eq!(second.actions(), vec![ElicitationAction::Accept]);
        let (requests, carried) = second.next_round(None);
        assert_eq!(requests.keys().collect::<Vec<_>>(), ["color"]);
        assert_eq!(carried.answers["elicit-0"], answer);

        // The carried answer is not counted again in the third round.
        let third = Asking::new(Some(carried), obj(json!({"color": {"action": "decline"}})), Value::Null);
        third.ask(None, ELICIT, json!({}), |_| true);
        third.ask(Some("color"), ELICIT, json!({}), |_| true);
        assert_eq!(third.actions(), vec![ElicitationAction::Decline]);
        assert!(!third.has_pending());
    }

    #[test]
    fn an_invalid_answer_is_asked_again() {
        let round = Asking::new(None, obj(json!({"user_name": 12345})), Value::Null);
        let (_, lookup) = round.ask(Some("user_name"), ELICIT, json!({}), Value::is_object);
        assert!(matches!(lookup, Lookup::Unanswered));
        assert_eq!(round.next_round(None).0.len(), 1);
    }
}
