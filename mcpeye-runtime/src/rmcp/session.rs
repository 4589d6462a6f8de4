//! The logging level each session asked for with `logging/setLevel`, for the handlers of its
//! later requests (MCP 2025-11-25 and before; MCP 2026-07-28 states it in each request's `_meta`).
//!
//! rmcp keeps no per-session storage of ours, so a session is known by its handshake: the
//! `Arc` of the `initialize` parameters that rmcp keeps for it (`Peer::peer_info`). Entries hold
//! it weakly and go when the session does.

use crate::model::client::LogLevel;
use ::rmcp::model::InitializeRequestParams;
use ::rmcp::service::RequestContext;
use ::rmcp::RoleServer;
use std::sync::{Arc, Mutex, Weak};

/// A session, by its handshake.
#[derive(Clone)]
pub(crate) struct Key(Weak<InitializeRequestParams>);

static LEVELS: Mutex<Vec<(Weak<InitializeRequestParams>, LogLevel)>> = Mutex::new(Vec::new());

/// The session of this request; `None` without a handshake (stateless, MCP 2026-07-28).
pub(crate) fn key(context: &RequestContext<RoleServer>) -> Option<Key> {
    key_with(context, context.peer.peer_info().as_ref(), true)
}

/// Like [`key`], with the session's `initialize` already read (`Peer::peer_info`);
/// `meta_client_info`: whether the request's `_meta` may name its client (false skips the
/// lookup).
pub(crate) fn key_with(
    context: &RequestContext<RoleServer>,
    info: Option<&Arc<InitializeRequestParams>>,
    meta_client_info: bool,
) -> Option<Key> {
    // rmcp's stateless path hands every request a placeholder naming rmcp itself, not a session.
    let info = info?;
    (!meta_client_info || context.meta.client_info().is_none()).then(|| Key(Arc::downgrade(info)))
}

/// Sets the level of the session of `context`.
pub(crate) fn set_log_level(context: &RequestContext<RoleServer>, level: LogLevel) {
    let Some(Key(session)) = key(context) else { return };
    let mut levels = LEVELS.lock().unwrap_or_else(|e| e.into_inner());
    levels.retain(|(s, _)| s.strong_count() > 0 && !s.ptr_eq(&session));
    levels.push((session, level));
}

/// The level the session asked for, if it did.
pub(crate) fn log_level(key: &Key) -> Option<LogLevel> {
    let levels = LEVELS.lock().unwrap_or_else(|e| e.into_inner());
    levels.iter().find(|(s, _)| s.ptr_eq(&key.0) && s.strong_count() > 0).map(|(_, l)| *l)
}
