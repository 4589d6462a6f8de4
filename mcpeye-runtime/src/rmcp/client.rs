//! The client of each request, for attribution: every call is recorded with the client that made
//! it, whatever the protocol era and however many sessions share the server.

use crate::capture::record::ClientInfo;
use ::rmcp::model::{ClientCapabilities, Implementation, InitializeRequestParams};
use ::rmcp::service::RequestContext;
use ::rmcp::RoleServer;
use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};

/// Distinct clients kept before the cache starts over (a bound, not a working-set size).
const MAX_CLIENTS: usize = 1024;

/// Resolves each request's client, sharing one [`ClientInfo`] per distinct client so that a call
/// only looks it up (no allocation once a client has been seen).
#[derive(Debug, Default)]
pub(crate) struct Clients(Mutex<HashMap<u64, Vec<Arc<ClientInfo>>>>);

impl Clients {
    /// The client of this request: from its `_meta` (MCP 2026-07-28: every request introduces
    /// its client), else from the session's `initialize`. `_meta` comes first because on rmcp's
    /// stateless path `peer_info()` is a placeholder naming rmcp itself; for the same reason a
    /// 2026-07-28 request that does not name its client has none, and neither has a request whose
    /// session info is that placeholder (a handshake-era client of a stateless server: its
    /// `initialize` went to a handler that no longer exists). No client is better than a wrong one.
    pub(crate) fn of(&self, context: &RequestContext<RoleServer>) -> Option<Arc<ClientInfo>> {
        let meta_version = context.meta.protocol_version();
        if let Some(info) = context.meta.client_info() {
            return Some(self.intern(&info.name, &info.version, meta_version.as_ref().map(|v| v.as_str())));
        }
        if meta_version.is_some_and(|v| !v.has_initialize()) {
            return None;
        }
        let params = context.peer.peer_info()?;
        if is_stateless_placeholder(&params) {
            return None;
        }
        let client = &params.client_info;
        Some(self.intern(&client.name, &client.version, Some(params.protocol_version.as_str())))
    }

    fn intern(&self, name: &str, version: &str, protocol: Option<&str>) -> Arc<ClientInfo> {
        let mut hasher = DefaultHasher::new();
        (name, version, protocol).hash(&mut hasher);
        let key = hasher.finish();
        let mut seen = self.0.lock().unwrap_or_else(|e| e.into_inner());
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

/// The session info rmcp's stateless Streamable HTTP server makes up for each request: rmcp's own
/// name and version, default capabilities, no `_meta` (rmcp 3.11,
/// `peer_info_for_stateless_request`). A real client introducing itself exactly so in a stateful
/// session (rmcp's own client with its defaults) is not told apart, and is recorded without a client.
fn is_stateless_placeholder(params: &InitializeRequestParams) -> bool {
    params.meta.is_none()
        && params.client_info == Implementation::default()
        && params.capabilities == ClientCapabilities::default()
}
