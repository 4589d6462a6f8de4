//! The demo tools of `http_server`, mounted at `/mcp` in an axum app behind the app's own
//! bearer-token middleware, as most Streamable HTTP servers are: the middleware puts the
//! authenticated user into the request's extensions, and mcpeye's `identify` reads it there, so
//! each call's `userId` is the user of its own HTTP request.
//!
//! ```text
//! MCPEYE_PROJECT_ID=demo MCPEYE_INGEST_URL=http://127.0.0.1:3001 cargo run -p mcpeye-servers --example axum_server -- --port 8080
//! ```
//!
//! - `--port N`: the port to listen on, 8080 by default; `--port 0` picks a free one. The address
//!   is printed on stderr as `listening on http://127.0.0.1:PORT/mcp`.
//! - Every request needs `Authorization: Bearer TOKEN` with a token of [`DEMO_TOKENS`] (a
//!   stand-in for the app's real verification: a session store, a JWT check…); any other request
//!   is answered 401 and never reaches rmcp.
//! - Stateful sessions for handshake-era clients, stateless MCP 2026-07-28, as `http_server`.
//!
//! Same environment as `http_server` (`MCPEYE_PROJECT_ID`, `MCPEYE_INGEST_URL`,
//! `MCPEYE_INGEST_SECRET`, `MCPEYE_OUTBOX_DIR`). On SIGTERM or SIGINT the server stops, and the
//! `mcpeye::Guard` delivers what was captured, within 2 s, and says on stderr what became of every
//! event.

#[path = "common/demo_tools.rs"]
mod demo_tools;
#[path = "common/signal.rs"]
mod signal;

use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::Router;
use mcpeye::rmcp::ManifestServer;
use mcpeye::CallIdentity;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use std::collections::HashMap;
use std::sync::Arc;

/// The demo's tokens and the user each one authenticates.
pub const DEMO_TOKENS: [(&str, &str); 2] = [("demo-token-ada", "ada"), ("demo-token-grace", "grace")];

/// Who the middleware authenticated: what it inserts into the request's extensions.
#[derive(Clone)]
struct AuthenticatedUser(String);

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let port = parse_port()?;
    // Each call's user is the one the middleware put into its own request's extensions.
    let guard = demo_tools::init_analytics_with("axum_server", "axum-demo", |config| {
        config.identify(|request| {
            let user = request.http()?.extensions.get::<AuthenticatedUser>()?;
            Some(CallIdentity::new().user_id(user.0.as_str()))
        })
    });

    let server = ManifestServer::new(Arc::new(demo_tools::manifest()))
        .with_server_info("mcpeye-axum-demo", env!("CARGO_PKG_VERSION"));
    let config = StreamableHttpServerConfig::default();
    let sessions_end = config.cancellation_token.clone();
    let mcp = StreamableHttpService::new(move || Ok(server.clone()), Arc::new(LocalSessionManager::default()), config);
    let tokens: Arc<HashMap<String, String>> =
        Arc::new(DEMO_TOKENS.iter().map(|(token, user)| (token.to_string(), user.to_string())).collect());
    let app = Router::new().route_service("/mcp", mcp).layer(middleware::from_fn_with_state(tokens, authenticate));

    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    eprintln!("[axum_server] bearer tokens required, Ctrl-C or SIGTERM to stop");
    eprintln!("listening on http://{}/mcp", listener.local_addr()?);
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            signal::termination().await;
            // End the sessions, whose open streams would otherwise hold the shutdown.
            sessions_end.cancel();
        })
        .await?;
    demo_tools::shut_down("axum_server", guard);
    Ok(())
}

/// The app's auth layer: a known bearer token lets the request through, with its user in the
/// extensions; anything else is 401.
async fn authenticate(
    State(tokens): State<Arc<HashMap<String, String>>>,
    mut request: Request,
    next: Next,
) -> Response {
    let bearer = request.headers().get(header::AUTHORIZATION).and_then(|v| v.to_str().ok());
    let user = bearer.and_then(|v| v.strip_prefix("Bearer ")).and_then(|token| tokens.get(token));
    match user {
        Some(user) => {
            request.extensions_mut().insert(AuthenticatedUser(user.clone()));
            next.run(request).await
        }
        None => {
            (StatusCode::UNAUTHORIZED, [(header::WWW_AUTHENTICATE, "Bearer")], "a valid bearer token is required\n")
                .into_response()
        }
    }
}

/// `--port N` (default 8080, 0 for any free port).
fn parse_port() -> Result<u16, String> {
    const USAGE: &str = "usage: axum_server [--port N]";
    let mut port = 8080;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--port" => {
                let v = args.next().ok_or(USAGE)?;
                port = v.parse().map_err(|_| format!("--port: not a port number: {v:?}\n{USAGE}"))?;
            }
            "-h" | "--help" => {
                eprintln!("{USAGE}");
                std::process::exit(0);
            }
            _ => return Err(format!("unknown argument {arg:?}\n{USAGE}")),
        }
    }
    Ok(port)
}
