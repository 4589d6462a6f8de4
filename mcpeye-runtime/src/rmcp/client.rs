//! The [`Origin`] of each request: the client that made it (for attribution: every call is
//! recorded with its own client, whatever the protocol era and however many sessions share the
//! server), its session, id, transport and trace context.

use crate::model::record::{ClientInfo, Origin, RequestId, TraceContext, Transport, SCANNED_META_KEYS};
use ::rmcp::model::{ClientCapabilities, Implementation, InitializeRequestParams, NumberOrString};
use ::rmcp::service::RequestContext;
use ::rmcp::RoleServer;
use serde_json::{Map, Value};
use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, Weak};

/// Distinct clients kept before the cache starts over (a bound, not a working-set size).
const MAX_CLIENTS: usize = 1024;

/// Live stdio sessions kept before the cache drops the ended ones (a bound, not a working-set size).
const MAX_SESSIONS: usize = 64;

/// Resolves each request's client, sharing one [`ClientInfo`] per distinct client so that a call
/// only looks it up (no allocation once a client has been seen), and gives each handshake
/// session without a transport session id (stdio) an id of its own.
#[derive(Debug, Default)]
pub(crate) struct Clients {
    seen: Mutex<Seen>,
    /// Each `initialize` (told apart by rmcp's allocation of it, kept alive by the `Weak`) and
    /// the session id mcpeye gave it.
    sessions: Mutex<Vec<(Weak<InitializeRequestParams>, Arc<str>)>>,
}

#[derive(Debug, Default)]
struct Seen {
    by_hash: HashMap<u64, Vec<Arc<ClientInfo>>>,
    /// The `_meta` client-info and protocol-version values of the last request that named its
    /// client there, and that client: the next request of the same client is answered by
    /// comparing the raw values (decoding them allocates, hashing them costs as much).
    last_meta: Option<(Value, Option<Value>, Arc<ClientInfo>)>,
    /// The session info of the last request that carried no `_meta`, and its client: requests of
    /// one session share the same `Arc`, so the next one is answered by a pointer compare.
    last_session: Option<(Arc<InitializeRequestParams>, Option<Arc<ClientInfo>>)>,
}

/// The `_meta` keys of MCP 2026-07-28 that name a request's client and protocol version.
const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key of the per-request log level (MCP 2026-07-28, SEP-2575).
pub(crate) const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// `_meta` key of the client's capabilities (MCP 2026-07-28).
pub(crate) const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";

/// The `_meta` keys mcpeye reads that a request's `_meta` has, found in one pass over its keys:
/// most requests carry none of them (rmcp's client sends only `progressToken`), and each
/// lookup hashes its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct MetaKeys {
    /// `traceparent`, `tracestate` or `baggage`.
    pub(crate) trace: bool,
    pub(crate) client_info: bool,
    pub(crate) protocol_version: bool,
    pub(crate) log_level: bool,
    pub(crate) client_capabilities: bool,
    /// `io.modelcontextprotocol/aiInvocation`, which may carry the call's intent and model.
    pub(crate) ai_invocation: bool,
    /// `x-codex-turn-metadata`, which may carry the call's model.
    pub(crate) codex_turn: bool,
}

impl MetaKeys {
    const NONE: MetaKeys = MetaKeys {
        trace: false,
        client_info: false,
        protocol_version: false,
        log_level: false,
        client_capabilities: false,
        ai_invocation: false,
        codex_turn: false,
    };
    const ALL: MetaKeys = MetaKeys {
        trace: true,
        client_info: true,
        protocol_version: true,
        log_level: true,
        client_capabilities: true,
        ai_invocation: true,
        codex_turn: true,
    };

    pub(crate) fn of(meta: &Map<String, Value>) -> MetaKeys {
        // Past this, not scanned: every key counts as present (looked up).
        if meta.len() > SCANNED_META_KEYS {
            return MetaKeys::ALL;
        }
        let mut keys = MetaKeys::NONE;
        for key in meta.keys() {
            match key.as_str() {
                "traceparent" | "tracestate" | "baggage" => keys.trace = true,
                META_CLIENT_INFO => keys.client_info = true,
                META_PROTOCOL_VERSION => keys.protocol_version = true,
                META_LOG_LEVEL => keys.log_level = true,
                META_CLIENT_CAPABILITIES => keys.client_capabilities = true,
                crate::model::meta::META_AI_INVOCATION => keys.ai_invocation = true,
                crate::model::meta::META_CODEX_TURN => keys.codex_turn = true,
                _ => {}
            }
        }
        keys
    }
}

impl Clients {
    /// The resolver shared by the routers mcpeye makes ([`tool_router`](super::tool_router),
    /// [`instrument`](super::instrument)) and [`call_tool`](super::call_tool): a call of an
    /// unknown tool, answered outside any route, gets the same session id as its session's other
    /// calls. Sessions are told apart by their own handshake, so servers can share it.
    pub(crate) fn shared() -> &'static Clients {
        static SHARED: std::sync::OnceLock<Clients> = std::sync::OnceLock::new();
        SHARED.get_or_init(Clients::default)
    }

    /// What the serving layer knows of this request.
    pub(crate) fn origin(&self, context: &RequestContext<RoleServer>) -> Origin {
        self.origin_with(context, context.peer.peer_info(), MetaKeys::of(&context.meta))
    }

    /// Like [`origin`](Self::origin), with the session's `initialize` already read
    /// (`Peer::peer_info`: a lock and a reference count, read once per request) and the
    /// request's `_meta` keys scanned.
    pub(crate) fn origin_with(
        &self,
        context: &RequestContext<RoleServer>,
        info: Option<Arc<InitializeRequestParams>>,
        keys: MetaKeys,
    ) -> Origin {
        let parts = context.extensions.get::<http::request::Parts>();
        let transport = match parts {
            Some(p) => Transport::Http { version: http_version(p.version) },
            // rmcp tells a handler nothing of other transports; stdio is the one MCP names.
            None => Transport::Stdio,
        };
        // Kept as sent: spans write it out, only when there is one.
        let request_id = match &context.id {
            NumberOrString::Number(n) => RequestId::Number(*n),
            NumberOrString::String(s) => RequestId::String(s.clone()),
        };
        Origin {
            client: self.of(context, info.as_ref(), keys),
            session_id: self.session(context, parts, info, keys),
            request_id: Some(request_id),
            transport: Some(transport),
            // Most requests carry no trace context: its three lookups skipped then.
            trace_context: if keys.trace { TraceContext::from_meta(&context.meta) } else { None },
            native_intent: if keys.ai_invocation { crate::model::meta::native_intent(&context.meta) } else { None },
            invocation: if keys.ai_invocation { crate::model::meta::invocation(&context.meta) } else { None },
            // Read with the intent, from the same scan of `_meta`'s keys.
            model: if keys.ai_invocation || keys.codex_turn {
                crate::model::meta::meta_model(&context.meta)
            } else {
                None
            },
            ..Origin::NONE
        }
    }

    /// The session of this request: Streamable HTTP's `Mcp-Session-Id`, else one id per
    /// `initialize` handshake (a stdio connection); none in MCP 2026-07-28, which has no sessions.
    fn session(
        &self,
        context: &RequestContext<RoleServer>,
        parts: Option<&http::request::Parts>,
        info: Option<Arc<InitializeRequestParams>>,
        keys: MetaKeys,
    ) -> Option<Arc<str>> {
        if let Some(parts) = parts {
            return parts.headers.get("mcp-session-id").and_then(|v| v.to_str().ok()).map(Arc::from);
        }
        if keys.protocol_version && context.meta.protocol_version().is_some_and(|v| !v.has_initialize()) {
            return None;
        }
        let info = info?;
        let mut sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, id)) = sessions.iter().find(|(w, _)| std::ptr::eq(w.as_ptr(), Arc::as_ptr(&info))) {
            return Some(id.clone());
        }
        if sessions.len() >= MAX_SESSIONS {
            sessions.retain(|(w, _)| w.strong_count() > 0);
        }
        let id: Arc<str> = Arc::from(uuid::Uuid::new_v4().simple().to_string());
        sessions.push((Arc::downgrade(&info), id.clone()));
        Some(id)
    }

    /// The client of this request: from its `_meta` (MCP 2026-07-28: every request introduces
    /// its client), else from the session's `initialize`. `_meta` comes first because on rmcp's
    /// stateless path `peer_info()` is a placeholder naming rmcp itself; for the same reason a
    /// 2026-07-28 request that does not name its client has none, and neither has a request whose
    /// session info is that placeholder (a handshake-era client of a stateless server: its
    /// `initialize` went to a handler that no longer exists). No client is better than a wrong one.
    /// `info` is the session's `initialize` (`Peer::peer_info`).
    fn of(
        &self,
        context: &RequestContext<RoleServer>,
        info: Option<&Arc<InitializeRequestParams>>,
        keys: MetaKeys,
    ) -> Option<Arc<ClientInfo>> {
        if !keys.client_info && !keys.protocol_version {
            // A handshake-era request: its session's client.
            return self.of_session(info);
        }
        let raw_info = context.meta.get(META_CLIENT_INFO);
        let raw_version = context.meta.get(META_PROTOCOL_VERSION);
        if let Some(raw) = raw_info {
            let seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
            if let Some((info, version, client)) = &seen.last_meta {
                if info == raw && version.as_ref() == raw_version {
                    return Some(client.clone());
                }
            }
        }
        let meta_version = context.meta.protocol_version();
        if let Some(info) = context.meta.client_info() {
            let client = self.intern(&info.name, &info.version, meta_version.as_ref().map(|v| v.as_str()));
            if let Some(raw) = raw_info {
                let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
                seen.last_meta = Some((raw.clone(), raw_version.cloned(), client.clone()));
            }
            return Some(client);
        }
        if meta_version.is_some_and(|v| !v.has_initialize()) {
            return None;
        }
        self.of_session(info)
    }

    /// The client of the request's session, from its `initialize`.
    fn of_session(&self, info: Option<&Arc<InitializeRequestParams>>) -> Option<Arc<ClientInfo>> {
        let params = info?;
        if let Some((last, client)) = &self.seen.lock().unwrap_or_else(|e| e.into_inner()).last_session {
            if Arc::ptr_eq(last, params) {
                return client.clone();
            }
        }
        let client = if is_stateless_placeholder(params) {
            None
        } else {
            let info = &params.client_info;
            Some(self.intern(&info.name, &info.version, Some(params.protocol_version.as_str())))
        };
        self.seen.lock().unwrap_or_else(|e| e.into_inner()).last_session = Some((params.clone(), client.clone()));
        client
    }

    fn intern(&self, name: &str, version: &str, protocol: Option<&str>) -> Arc<ClientInfo> {
        let mut hasher = DefaultHasher::new();
        (name, version, protocol).hash(&mut hasher);
        let key = hasher.finish();
        let mut guard = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        let seen = &mut guard.by_hash;
        let same =
            |c: &&Arc<ClientInfo>| c.name() == name && c.version() == version && c.protocol_version() == protocol;
        if let Some(found) = seen.get(&key).and_then(|v| v.iter().find(same)) {
            return found.clone();
        }
        if seen.len() >= MAX_CLIENTS {
            seen.clear();
        }
        let mut info = ClientInfo::new(name, version);
        if let Some(p) = protocol {
            info = info.with_protocol_version(p);
        }
        let info = Arc::new(info);
        seen.entry(key).or_default().push(info.clone());
        info
    }
}

/// `network.protocol.version` of an HTTP version.
fn http_version(version: http::Version) -> Option<&'static str> {
    Some(match version {
        http::Version::HTTP_09 => "0.9",
        http::Version::HTTP_10 => "1.0",
        http::Version::HTTP_11 => "1.1",
        http::Version::HTTP_2 => "2",
        http::Version::HTTP_3 => "3",
        _ => return None,
    })
}

/// The session info rmcp's stateless Streamable HTTP server makes up for each request: rmcp's own
/// name and version, default capabilities, no `_meta` (rmcp 3.11,
/// `peer_info_for_stateless_request`). A real client introducing itself exactly so in a stateful
/// session (rmcp's own client with its defaults) is not told apart, and is recorded without a client.
fn is_stateless_placeholder(params: &InitializeRequestParams) -> bool {
    params.meta.is_none()
        && params.client_info == Implementation::default()
        && params.capabilities == ClientCapabilities::default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(meta: Value) -> MetaKeys {
        MetaKeys::of(meta.as_object().unwrap())
    }

    #[test]
    fn meta_keys_name_what_a_meta_has() {
        assert_eq!(keys(serde_json::json!({})), MetaKeys::NONE);
        assert_eq!(keys(serde_json::json!({"progressToken": 1, "other": 2})), MetaKeys::NONE);
        let all = serde_json::json!({
            "tracestate": "x",
            META_CLIENT_INFO: {},
            META_PROTOCOL_VERSION: "2026-07-28",
            META_LOG_LEVEL: "info",
            META_CLIENT_CAPABILITIES: {},
            crate::model::meta::META_AI_INVOCATION: {"userIntent": "x"},
            crate::model::meta::META_CODEX_TURN: {"model": "m"},
        });
        assert_eq!(keys(all), MetaKeys::ALL);
        assert!(keys(serde_json::json!({"baggage": "b"})).trace);
        assert_eq!(keys(serde_json::json!({META_PROTOCOL_VERSION: "v"})), {
            MetaKeys { protocol_version: true, ..MetaKeys::NONE }
        });
        // A large `_meta` is not scanned: everything is looked up.
        let many: Map<String, Value> = (0..=SCANNED_META_KEYS).map(|i| (format!("k{i}"), Value::Null)).collect();
        assert_eq!(MetaKeys::of(&many), MetaKeys::ALL);
    }
}
