//! Tools: their definitions as `#[mcpeye::tool]` generates them ([`ToolDef`](def::ToolDef)), the
//! [`Context`](context::Context) a handler takes, and the [`Manifest`](manifest::Manifest) of a
//! server's tools with its `tools/list`.

pub(crate) mod context;
pub(crate) mod def;
pub(crate) mod manifest;
