//! The server as a child process: started with piped stdin and stdout and the proxy's stderr,
//! in a process group of its own (so that `npx` and the server it starts are stopped together),
//! and stopped the way MCP's stdio transport says: stdin closed, then SIGTERM, then SIGKILL.

use std::ffi::OsString;
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitCode, ExitStatus, Stdio};
use std::time::{Duration, Instant};

pub struct Server {
    child: Child,
}

impl Server {
    pub fn spawn(program: &OsString, args: &[OsString]) -> std::io::Result<Server> {
        let mut command = Command::new(program);
        command.args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::inherit());
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        Ok(Server { child: command.spawn()? })
    }

    /// The server's stdin and stdout, taken once.
    pub fn pipes(&mut self) -> (ChildStdin, ChildStdout) {
        let stdin = self.child.stdin.take().expect("stdin is piped and taken once");
        let stdout = self.child.stdout.take().expect("stdout is piped and taken once");
        (stdin, stdout)
    }

    /// Waits for a server that closed its stdout to exit; one that does not within `grace` is
    /// stopped.
    pub fn wait_or_stop(&mut self, grace: Duration) -> Option<ExitStatus> {
        match self.wait_for(grace) {
            Some(status) => Some(status),
            None => self.stop(Duration::ZERO),
        }
    }

    /// Stops the server whose client left (its stdin is closed already): `grace` to exit, then
    /// SIGTERM and `grace` again, then SIGKILL.
    pub fn stop(&mut self, grace: Duration) -> Option<ExitStatus> {
        if let Some(status) = self.wait_for(grace) {
            return Some(status);
        }
        self.signal("TERM");
        if let Some(status) = self.wait_for(grace) {
            return Some(status);
        }
        self.signal("KILL");
        let _ = self.child.kill();
        self.child.wait().ok()
    }

    /// The exit status, if the server exits within `limit`.
    fn wait_for(&mut self, limit: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + limit;
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => return Some(status),
                Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
                _ => return None,
            }
        }
    }

    /// Sends `signal` to the server's process group, through the `kill` utility: this crate
    /// forbids unsafe code, and `libc::kill` is unsafe to call.
    fn signal(&self, signal: &str) {
        #[cfg(unix)]
        {
            let group = format!("-{}", self.child.id());
            let sent = Command::new("kill")
                .args(["-s", signal, "--", &group])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
            if !sent.is_ok_and(|s| s.success()) {
                eprintln!("mcpeye proxy: could not send SIG{signal} to the server (process group {group})");
            }
        }
        #[cfg(not(unix))]
        let _ = signal;
    }
}

/// The proxy's exit code for the server's status: its code, 128 + N when signal N ended it,
/// 1 when it could not be waited for.
pub fn exit_code(status: Option<ExitStatus>) -> ExitCode {
    let Some(status) = status else { return ExitCode::FAILURE };
    if let Some(code) = status.code() {
        return ExitCode::from(u8::try_from(code & 0xff).unwrap_or(1));
    }
    #[cfg(unix)]
    if let Some(signal) = std::os::unix::process::ExitStatusExt::signal(&status) {
        return ExitCode::from(u8::try_from(128 + signal).unwrap_or(1));
    }
    ExitCode::FAILURE
}
