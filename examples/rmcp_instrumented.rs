//! An ordinary rmcp server (rmcp's own `#[tool_router]`/`#[tool]` macros) instrumented by
//! mcpeye with one call, served over stdio.
//!
//! ```text
//! MCPEYE_PROJECT_ID=demo MCPEYE_INGEST_URL=http://127.0.0.1:3001 \
//!     cargo run -p mcpeye-servers --example rmcp_instrumented
//! ```
//!
//! Stdout carries nothing but MCP messages; mcpeye's diagnostics go to stderr.

use rmcp::handler::server::{router::tool::ToolRouter, wrapper::Parameters};
use rmcp::model::{CallToolRequestParams, CallToolResponse};
use rmcp::service::RequestContext;
use rmcp::{schemars, tool, tool_handler, tool_router, ErrorData, RoleServer, ServerHandler, ServiceExt};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct AddItem {
    /// Name of the item, e.g. "milk".
    item: String,
    /// How many to add (default 1).
    quantity: Option<u32>,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct RemoveItem {
    /// Name of the item to remove.
    item: String,
}

#[derive(Clone)]
struct ShoppingList {
    items: Arc<Mutex<BTreeMap<String, u32>>>,
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl ShoppingList {
    fn new() -> Self {
        Self {
            items: Arc::default(),
            // The one mcpeye line: intent capture, the reserved tool, one event per call.
            tool_router: mcpeye::rmcp::instrument(Self::tool_router()),
        }
    }

    #[tool(description = "Add an item to the shopping list.")]
    fn add_item(&self, Parameters(AddItem { item, quantity }): Parameters<AddItem>) -> String {
        let mut items = self.items.lock().unwrap_or_else(|e| e.into_inner());
        let n = items.entry(item.clone()).or_default();
        *n += quantity.unwrap_or(1);
        format!("{item}: {n}")
    }

    #[tool(description = "Remove an item from the shopping list.")]
    fn remove_item(&self, Parameters(RemoveItem { item }): Parameters<RemoveItem>) -> Result<String, ErrorData> {
        match self.items.lock().unwrap_or_else(|e| e.into_inner()).remove(&item) {
            Some(_) => Ok(format!("removed {item}")),
            None => Err(ErrorData::invalid_params(format!("{item} is not on the list"), None)),
        }
    }

    #[tool(description = "Show the shopping list.")]
    fn show_list(&self) -> String {
        let items = self.items.lock().unwrap_or_else(|e| e.into_inner());
        if items.is_empty() {
            return "the list is empty".to_owned();
        }
        items.iter().map(|(item, n)| format!("{n} × {item}")).collect::<Vec<_>>().join("\n")
    }
}

#[tool_handler(router = self.tool_router, name = "shopping-list", version = "0.1.0")]
impl ServerHandler for ShoppingList {
    // Written out so that a call of a tool the list does not have is recorded too (rmcp answers
    // it with invalid params before any route runs).
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        mcpeye::rmcp::call_tool(&self.tool_router, self, request, context).await
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // A bad configuration must not take the server down: it runs untracked and says why on stderr.
    // `from_env` reads MCPEYE_PROJECT_ID, MCPEYE_INGEST_URL and MCPEYE_INGEST_SECRET.
    let guard = match mcpeye::init(mcpeye::Config::from_env("rmcp-demo")) {
        Ok(guard) => Some(guard),
        Err(e) => {
            eprintln!("[rmcp_instrumented] analytics disabled: {e}");
            None
        }
    };
    // Instrument after `init`: the reserved tool follows the tracker's settings. Observed, the
    // server's `tools/list` (and any resource or prompt it served) is counted and spanned too.
    let server = mcpeye::rmcp::observe(ShoppingList::new());
    server.serve(rmcp::transport::stdio()).await?.waiting().await?;
    if let Some(guard) = guard {
        // What became of the events, on stderr (stdout is the protocol's).
        let report = guard.shutdown(std::time::Duration::from_secs(2));
        eprintln!("[rmcp_instrumented] analytics at exit: {report}");
    }
    Ok(())
}
