use mcpeye::rmcp::ManifestServer;
use rmcp::ServiceExt;
use std::sync::Arc;

/// Say hello to someone.
#[mcpeye::tool(read_only)]
fn greet(
    /// Who to greet.
    name: String,
) -> String {
    format!("Hello, {name}!")
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Events go to MCPEYE_INGEST_URL (default http://localhost:3001); diagnostics to stderr.
    let guard = mcpeye::init(mcpeye::Config::from_env("my-project-id"))?;
    let manifest = Arc::new(mcpeye::tools!());
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        let server = ManifestServer::new(manifest).with_server_info("my-server", "1.0.0");
        let running = server.serve(rmcp::transport::stdio()).await?;
        // SIGTERM/SIGINT end the service as a closed stdin does (calls in flight still answer).
        let stop = running.cancellation_token();
        tokio::spawn(async move {
            terminated().await;
            stop.cancel();
        });
        running.waiting().await?;
        Ok::<_, Box<dyn std::error::Error>>(())
    })?;
    // tokio's stdin reader may be blocked in read(2): don't wait for it.
    runtime.shutdown_background();
    // Delivers what was captured, within Config::shutdown_timeout (2 s by default).
    drop(guard);
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
