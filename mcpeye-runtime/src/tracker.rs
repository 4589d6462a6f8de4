//! The tracker: configuration, `init`, the guard, and the hand-off of records to the flusher.
//!
//! (Interface stub: the full implementation lands with the runtime work.)

use crate::capture::CallRecord;
use std::sync::{Arc, RwLock};

/// A destination for call records. Cheap to clone; all clones feed the same flusher.
#[derive(Clone)]
pub struct Tracker {
    inner: Arc<dyn Fn(CallRecord) + Send + Sync>,
}

impl std::fmt::Debug for Tracker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Tracker")
    }
}

impl Tracker {
    /// A tracker that hands every record to `f` (tests).
    pub fn from_fn(f: impl Fn(CallRecord) + Send + Sync + 'static) -> Self {
        Tracker { inner: Arc::new(f) }
    }

    /// Whether manifests using this tracker list the reserved tool.
    pub fn capture_missing_capabilities(&self) -> bool {
        true
    }

    /// Sets the `client` of the identity sent with every later payload, from the MCP client's
    /// `initialize` `clientInfo` (`name/version`, or `name` alone when the version is empty).
    pub fn set_client(&self, name: &str, version: &str) {
        let _ = (name, version);
    }

    /// Records one call. Never blocks, never panics.
    pub fn record(&self, record: CallRecord) {
        (self.inner)(record)
    }
}

static GLOBAL: RwLock<Option<Tracker>> = RwLock::new(None);

/// The process-wide tracker installed by `init`, if any.
pub fn global() -> Option<Tracker> {
    GLOBAL.read().ok().and_then(|g| g.clone())
}

/// Installs (or with `None` removes) the process-wide tracker.
pub fn set_global(t: Option<Tracker>) {
    if let Ok(mut g) = GLOBAL.write() {
        *g = t;
    }
}
