use hyper_util::rt::TokioIo;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use mcpeye::rmcp::ManifestServer;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use std::sync::Arc;
use std::time::Duration;

/// Say hello to someone.
#[mcpeye::tool(read_only)]
fn greet(
    /// Who to greet.
    name: String,
) -> String {
    format!("Hello, {name}!")
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Dropped when main returns: delivers what was captured, within Config::shutdown_timeout.
    let _guard = mcpeye::init(mcpeye::Config::from_env("my-project-id"))?;
    let server = ManifestServer::new(Arc::new(mcpeye::tools!())).with_server_info("my-server", "1.0.0");
    let config = StreamableHttpServerConfig::default(); // stateful sessions for handshake-era clients
    let sessions_end = config.cancellation_token.clone();
    let mcp = TowerToHyperService::new(StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    ));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
    eprintln!("listening on http://127.0.0.1:8080/mcp");
    let connections = GracefulShutdown::new();
    let mut stop = std::pin::pin!(terminated());
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(_) => continue,
            },
            () = &mut stop => break,
        };
        let connection = hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), mcp.clone());
        tokio::spawn(connections.watch(connection));
    }
    // SIGTERM/SIGINT: end the sessions and their streams, let requests in flight answer.
    sessions_end.cancel();
    let _ = tokio::time::timeout(Duration::from_secs(2), connections.shutdown()).await;
    Ok(())
}

async fn terminated() {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate()).expect("a SIGTERM handler");
    let mut int = signal(SignalKind::interrupt()).expect("a SIGINT handler");
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
    }
}
