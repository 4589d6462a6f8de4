//! The manifest: the tools of a server, their `tools/list` descriptors, and the dispatcher.
//!
//! (Interface stub: filled in by the foundation work.)

use crate::tool::{StateMap, ToolDef};
use crate::tracker::Tracker;
use serde_json::Value;
use std::any::Any;
use std::sync::Arc;

/// Everything wrong with a set of tools, found when a manifest is built.
#[derive(Debug, Clone)]
pub struct ManifestError {
    /// One line per problem.
    pub problems: Vec<String>,
}

impl std::fmt::Display for ManifestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "mcpeye: the tool manifest has {} problem(s):", self.problems.len())?;
        for p in &self.problems {
            writeln!(f, "  - {p}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ManifestError {}

/// Builds a [`Manifest`].
#[derive(Default)]
pub struct ManifestBuilder {
    defs: Vec<&'static ToolDef>,
    states: StateMap,
    capture_missing_capabilities: Option<bool>,
    tracker: Option<Tracker>,
}

impl ManifestBuilder {
    /// Adds every tool registered with `#[mcpeye::tool]` in the linked crates.
    pub fn registered(mut self) -> Self {
        self.defs.extend(crate::tool::registered());
        self
    }
    /// Adds these tools.
    pub fn tools(mut self, defs: impl IntoIterator<Item = &'static ToolDef>) -> Self {
        self.defs.extend(defs);
        self
    }
    /// Registers a state value for `State<T>` parameters.
    pub fn state<T: Any + Send + Sync>(mut self, value: T) -> Self {
        self.states.0.insert(std::any::TypeId::of::<T>(), Arc::new(value));
        self
    }
    /// Lists and answers the reserved tool (default true).
    pub fn capture_missing_capabilities(mut self, on: bool) -> Self {
        self.capture_missing_capabilities = Some(on);
        self
    }
    /// Records into this tracker instead of the process-wide one.
    pub fn tracker(mut self, tracker: Tracker) -> Self {
        self.tracker = Some(tracker);
        self
    }
    /// Builds, or lists every problem.
    pub fn try_build(self) -> Result<Manifest, ManifestError> {
        todo!()
    }
    /// Builds; panics with every problem listed.
    pub fn build(self) -> Manifest {
        match self.try_build() {
            Ok(m) => m,
            Err(e) => panic!("{e}"),
        }
    }
}

/// The tools of a server.
pub struct Manifest {}

impl Manifest {
    /// A builder.
    pub fn builder() -> ManifestBuilder {
        ManifestBuilder::default()
    }
    /// The `tools` array of a `tools/list` result.
    pub fn tools_list(&self) -> Value {
        todo!()
    }
    /// Calls a sync tool.
    pub fn call(&self, _name: &str, _arguments: Value) -> Value {
        todo!()
    }
}
