//! [`ConfigError`]: why a [`Config`](super::Config) was refused, with the fix.

use crate::contract::{ENV_INGEST_SECRET, ENV_INGEST_URL};
use std::fmt;

/// Why `init` (or [`Tracker::new`](crate::Tracker::new)) refused a [`Config`](crate::Config).
///
/// `Debug` prints the same text as `Display`, so that a `main` returning this error with `?`
/// shows the fix rather than the variant's fields:
///
/// ```
/// use mcpeye::{Config, Tracker};
/// let Err(err) = Tracker::new(Config::new("my-project").ingest_url("ftp://x.example")) else { panic!() };
/// assert_eq!(format!("{err:?}"), err.to_string());
/// ```
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigError {
    /// The project id is empty or blank.
    EmptyProjectId,
    /// The ingest URL cannot be used.
    InvalidIngestUrl {
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The secret contains control characters and cannot be sent in a header.
    InvalidSecret,
    /// A numeric or duration option is out of range.
    InvalidOption {
        /// The option's name (its `Config` method).
        option: &'static str,
        /// What it must be.
        reason: &'static str,
    },
    /// The flusher thread could not be started.
    FlusherThread(String),
    /// The outbox directory could not be opened.
    Outbox(String),
    /// The event log's directory could not be opened.
    EventLog(String),
    /// The ingest URL is `https://` and mcpeye was built without its `tls` feature.
    TlsNotBuilt,
    /// The conversation key is shorter than 32 bytes.
    ConversationKeyTooShort {
        /// Where it was set: `conversation_key` (the `Config` method) or the environment
        /// variable's name.
        from: &'static str,
    },
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::EmptyProjectId => f.write_str(
                "mcpeye: the project id is empty; pass your project's id to Config::new(\"…\") \
                     (or set MCPEYE_PROJECT_ID with Config::from_env)",
            ),
            ConfigError::InvalidIngestUrl { reason } => write!(
                f,
                "mcpeye: the ingest URL cannot be used: {reason}; set Config::ingest_url (or {ENV_INGEST_URL}) \
                 to the base URL of your ingest API, e.g. https://mcpeye.example.com"
            ),
            ConfigError::InvalidSecret => write!(
                f,
                "mcpeye: the ingest secret contains control characters; check Config::ingest_secret \
                 (or {ENV_INGEST_SECRET}) for a stray newline"
            ),
            ConfigError::InvalidOption { option, reason } => {
                write!(f, "mcpeye: Config::{option} {reason}")
            }
            ConfigError::FlusherThread(e) => write!(f, "mcpeye: could not start the flusher thread: {e}"),
            ConfigError::Outbox(e) => write!(
                f,
                "mcpeye: the outbox cannot be opened ({e}); give Config::outbox_dir a directory this process can write"
            ),
            ConfigError::EventLog(e) => write!(
                f,
                "mcpeye: the event log cannot be opened ({e}); give Config::event_log (or MCPEYE_EVENT_LOG_DIR) \
                 a directory this process can write"
            ),
            ConfigError::ConversationKeyTooShort { from } => write!(
                f,
                "mcpeye: the conversation key ({from}) is shorter than 32 bytes; give it at least 32 bytes of \
                 random secret (e.g. `openssl rand -hex 32`), the same on every replica"
            ),
            ConfigError::TlsNotBuilt => f.write_str(
                "mcpeye: the ingest URL is https:// but mcpeye was built without TLS; enable its `tls` feature \
                 (on by default: `default-features = false` turns it off) or use a plain http:// ingest on this host",
            ),
        }
    }
}

impl fmt::Debug for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for ConfigError {}

#[cfg(test)]
mod tests {
    use super::ConfigError;

    #[test]
    fn debug_is_the_message_with_its_fix() {
        let err = ConfigError::InvalidIngestUrl { reason: "it has no scheme" };
        let debug = format!("{err:?}");
        assert_eq!(debug, err.to_string());
        assert!(debug.contains("set Config::ingest_url"), "{debug}");
        // What `fn main() -> Result<(), Box<dyn Error>>` prints after `Error: `.
        let boxed: Box<dyn std::error::Error> = Box::new(ConfigError::TlsNotBuilt);
        assert!(format!("{boxed:?}").contains("enable its `tls` feature"), "{boxed:?}");
    }
}
