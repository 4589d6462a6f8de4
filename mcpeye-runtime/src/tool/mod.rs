//! Tools: their definitions as `#[mcpeye::tool]` generates them ([`ToolDef`](def::ToolDef)), the
//! [`Context`](context::Context) a handler takes, and the [`Manifest`](manifest::Manifest) of a
//! server's tools with its `tools/list`.

// Only the rmcp integration answers `input_required`; without it no round is ever opened.
#[cfg_attr(not(feature = "rmcp"), allow(dead_code))]
pub(crate) mod context;
pub(crate) mod def;
pub(crate) mod manifest;
