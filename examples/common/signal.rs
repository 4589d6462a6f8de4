//! The signals that end a server politely: SIGTERM (what process managers, `docker stop` and
//! `kill` send) and SIGINT (Ctrl-C). Without a handler, either kills the process on the spot and
//! whatever was captured but not yet sent is lost.

use std::future::Future;

/// Resolves when SIGTERM or SIGINT arrives (Ctrl-C elsewhere than Unix). The handlers are
/// installed when this is called, so a signal that arrives before the future is awaited is not
/// missed.
pub fn termination() -> impl Future<Output = ()> + Send + 'static {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let mut term = signal(SignalKind::terminate()).expect("a SIGTERM handler");
        let mut int = signal(SignalKind::interrupt()).expect("a SIGINT handler");
        async move {
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
            }
        }
    }
    #[cfg(not(unix))]
    async {
        let _ = tokio::signal::ctrl_c().await;
    }
}
