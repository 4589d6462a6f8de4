//! A call between its start and its outcome ([`InFlight`]): what the dispatcher, the reserved
//! tool, unknown tools and the rmcp routes hold while a call runs, and what becomes its one
//! [`CallRecord`].

use crate::model::record::{now_epoch_ms, CallOutcome, CallRecord, ClientInfo, IntentSource, Origin};
use crate::telemetry::CallSpan;
use serde_json::Value;
use std::borrow::Cow;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One call between its start and its outcome: everything its record needs but the outcome.
/// Every [`CallRecord`] is built by [`InFlight::into_record`].
pub(crate) struct InFlight {
    pub(crate) tool_name: Cow<'static, str>,
    /// The arguments as the handler sees them (the intent already taken out).
    pub(crate) arguments: Value,
    pub(crate) intent: Option<(String, IntentSource)>,
    pub(crate) client: Option<Arc<ClientInfo>>,
    pub(crate) session_id: Option<Arc<str>>,
    /// The model that made the call ([`Origin::model`]).
    pub(crate) model: Option<Arc<str>>,
    /// What the request's `aiInvocation` said beyond the intent ([`Origin::invocation`]).
    pub(crate) invocation: Option<Arc<crate::model::meta::AiInvocation>>,
    pub(crate) started: Instant,
    /// The call's span(s), with the `opentelemetry` or `tracing` feature.
    pub(crate) span: CallSpan,
    /// The origin's request for `identify` (`None` unless it is configured).
    pub(crate) request: Option<Arc<crate::model::record::RequestExtra>>,
    /// The origin's `_meta`, when it was made before the call (`Manifest::call_from`), for
    /// `identify`: shared, not copied.
    pub(crate) meta: Option<Arc<serde_json::Map<String, Value>>>,
    /// The user `identify` named as the call began ([`Origin::identified`]).
    pub(crate) identified: Option<Arc<crate::model::identity::CallIdentity>>,
}

impl InFlight {
    /// A call of a known tool from `origin`, its span started.
    pub(crate) fn start(
        tool_name: Cow<'static, str>,
        arguments: Value,
        intent: Option<(String, IntentSource)>,
        origin: &Origin,
    ) -> Self {
        let span = CallSpan::start(&tool_name, true, origin);
        InFlight::with_span(tool_name, arguments, intent, origin, span)
    }

    /// A call of a tool the server does not have: its span names no tool (the name is the
    /// agent's, unbounded in cardinality).
    pub(crate) fn start_unknown(
        tool_name: Cow<'static, str>,
        intent: Option<(String, IntentSource)>,
        origin: &Origin,
    ) -> Self {
        let span = CallSpan::start(&tool_name, false, origin);
        InFlight::with_span(tool_name, Value::Object(serde_json::Map::new()), intent, origin, span)
    }

    pub(crate) fn with_span(
        tool_name: Cow<'static, str>,
        arguments: Value,
        intent: Option<(String, IntentSource)>,
        origin: &Origin,
        span: CallSpan,
    ) -> Self {
        let (client, session_id, model) = (origin.client.clone(), origin.session_id.clone(), origin.model.clone());
        let (request, meta) = (origin.request.clone(), origin.meta.clone());
        let mut call = InFlight {
            tool_name,
            arguments,
            intent,
            client,
            session_id,
            model,
            invocation: origin.invocation.clone(),
            started: Instant::now(),
            span,
            request,
            meta,
            identified: origin.identified.clone(),
        };
        if let Some(asking) = &origin.asking {
            call.continue_from(asking);
        }
        call
    }

    /// A later round of a call that asked the client: timed from the first round's start (as this
    /// machine's clock places it), with the first round's intent.
    #[cold]
    fn continue_from(&mut self, asking: &crate::model::ask::Asking) {
        if asking.round > 1 {
            let earlier = Duration::from_millis(now_epoch_ms().saturating_sub(asking.started_ms));
            self.started = self.started.checked_sub(earlier).unwrap_or(self.started);
            if asking.intent.is_some() {
                self.intent = asking.intent.clone();
            }
        }
    }

    /// The record of this call, ended now after `duration`.
    pub(crate) fn into_record(self, outcome: CallOutcome, duration: Duration) -> CallRecord {
        CallRecord {
            tool_name: self.tool_name,
            arguments: self.arguments,
            outcome,
            intent: self.intent,
            client: self.client,
            session_id: self.session_id,
            model: self.model,
            timestamp_ms: now_epoch_ms(),
            duration,
            invocation: self.invocation,
        }
    }
}
