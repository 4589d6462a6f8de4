//! The MCP client's identity (`clientInfo`), handed to the tracker once per session.

use crate::delivery::tracker::Tracker;
use ::rmcp::model::InitializeRequestParams;
use ::rmcp::service::RequestContext;
use ::rmcp::RoleServer;
use std::sync::{Arc, Mutex};

/// The last client identity given to the tracker, so that each call only compares.
#[derive(Debug, Default)]
pub(crate) struct ClientSeen(Mutex<Seen>);

#[derive(Debug, Default)]
enum Seen {
    #[default]
    Nothing,
    /// The `initialize` parameters of a session: compared by pointer, they are one `Arc` per
    /// session in rmcp.
    Handshake(Arc<InitializeRequestParams>),
    /// `name`, `version` from a request's `_meta` (sessions without `initialize`).
    Meta(String, String),
}

impl ClientSeen {
    /// Calls `tracker.set_client` when this request's client differs from the last one seen.
    /// Costs a pointer comparison once the session's identity has been handed over.
    pub(crate) fn observe(&self, context: &RequestContext<RoleServer>, tracker: &Tracker) {
        let mut seen = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(params) = context.peer.peer_info() {
            if matches!(&*seen, Seen::Handshake(last) if Arc::ptr_eq(last, &params)) {
                return;
            }
            let client = &params.client_info;
            tracker.set_client(&client.name, &client.version);
            *seen = Seen::Handshake(params);
        } else if let Some(client) = context.meta.client_info() {
            if matches!(&*seen, Seen::Meta(n, v) if *n == client.name && *v == client.version) {
                return;
            }
            tracker.set_client(&client.name, &client.version);
            *seen = Seen::Meta(client.name, client.version);
        }
    }
}
