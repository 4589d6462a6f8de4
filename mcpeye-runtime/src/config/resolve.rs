//! What `init` checks in a [`Config`], and the URL, secret and defaults it works out of it.

use super::{Config, ConfigError};
use crate::contract::{DEFAULT_INGEST_URL, ENV_INGEST_SECRET, ENV_INGEST_URL, ENV_PROJECT_ID};
use crate::model::meta::{HandleKey, CONVERSATION_KEY_ENV, MIN_CONVERSATION_KEY_BYTES};
use std::fmt;
use std::path::PathBuf;

/// The event log's directory under [`Config::from_env`] (a Rust-only setting: not in the contract).
pub(crate) const ENV_EVENT_LOG_DIR: &str = "MCPEYE_EVENT_LOG_DIR";

impl Config {
    /// Checks the configuration and resolves the URL, secret and defaults.
    pub(crate) fn resolve(&self) -> Result<Resolved, ConfigError> {
        self.resolve_with(|name| std::env::var(name).ok())
    }

    /// The event log's directory: the configured one, else `MCPEYE_EVENT_LOG_DIR` under
    /// `from_env` (a blank variable counts as unset). `resolve` has checked its byte bound.
    pub(crate) fn resolved_event_log_dir(&self) -> Option<PathBuf> {
        self.event_log_dir_with(|name| std::env::var(name).ok())
    }

    pub(crate) fn event_log_dir_with(&self, env: impl Fn(&str) -> Option<String>) -> Option<PathBuf> {
        let from_env = || if self.use_env { env(ENV_EVENT_LOG_DIR).filter(|v| !v.trim().is_empty()) } else { None };
        self.event_log_dir.clone().or_else(|| from_env().map(PathBuf::from))
    }

    pub(crate) fn resolve_with(&self, env: impl Fn(&str) -> Option<String>) -> Result<Resolved, ConfigError> {
        let env = |name: &str| if self.use_env { env(name).filter(|v| !v.trim().is_empty()) } else { None };
        // The environment's project wins over the one in code: `from_env`'s id is the default of
        // a binary that each deployment configures by its environment.
        let project_id = env(ENV_PROJECT_ID).unwrap_or_else(|| self.project_id.clone());
        if project_id.trim().is_empty() {
            return Err(ConfigError::EmptyProjectId);
        }
        let (url, url_defaulted) = match self.ingest_url.clone().or_else(|| env(ENV_INGEST_URL)) {
            Some(url) => (url, false),
            None => (DEFAULT_INGEST_URL.to_string(), true),
        };
        let (endpoint, insecure) = resolve_endpoint(&url)?;
        let secret = self.ingest_secret.clone().or_else(|| env(ENV_INGEST_SECRET)).filter(|s| !s.is_empty());
        if let Some(s) = &secret {
            if s.bytes().any(|b| b < 0x20 || b == 0x7f) {
                return Err(ConfigError::InvalidSecret);
            }
        }
        let positive = [
            ("flush_threshold", self.flush_threshold),
            ("max_buffer", self.max_buffer),
            ("max_batch_events", self.max_batch_events),
            ("max_batch_bytes", self.max_batch_bytes),
        ];
        for (name, v) in positive {
            if v == 0 {
                return Err(ConfigError::InvalidOption { option: name, reason: "must be at least 1" });
            }
        }
        if self.outbox_max_bytes == 0 {
            return Err(ConfigError::InvalidOption { option: "outbox_max_bytes", reason: "must be at least 1" });
        }
        if self.event_log_max_bytes == 0 {
            return Err(ConfigError::InvalidOption { option: "event_log_max_bytes", reason: "must be at least 1" });
        }

        let durations = [
            ("flush_interval", self.flush_interval),
            ("connect_timeout", self.connect_timeout),
            ("request_timeout", self.request_timeout),
        ];
        for (name, d) in durations {
            if d.is_zero() {
                return Err(ConfigError::InvalidOption { option: name, reason: "must be longer than zero" });
            }
        }
        if !(0.0..=1.0).contains(&self.sample_rate) {
            return Err(ConfigError::InvalidOption { option: "sample_rate", reason: "must be between 0.0 and 1.0" });
        }
        self.handle_key_with(env)?;
        Ok(Resolved { project_id, endpoint, secret, url_defaulted, insecure })
    }

    /// The key of conversation handles: the configured one, else the environment's (under
    /// `from_env`); `None` leaves the process's.
    pub(crate) fn handle_key(&self) -> Result<Option<HandleKey>, ConfigError> {
        self.handle_key_with(|name| std::env::var(name).ok())
    }

    fn handle_key_with(&self, env: impl Fn(&str) -> Option<String>) -> Result<Option<HandleKey>, ConfigError> {
        if let Some(key) = self.conversation_key.as_deref() {
            return conversation_key(key, "conversation_key").map(Some);
        }
        match env(CONVERSATION_KEY_ENV).filter(|v| self.use_env && !v.trim().is_empty()) {
            Some(key) => conversation_key(key.as_bytes(), CONVERSATION_KEY_ENV).map(Some),
            None => Ok(None),
        }
    }
}

/// What `resolve` worked out of a [`Config`].
#[derive(Clone)]
pub(crate) struct Resolved {
    /// The project: `MCPEYE_PROJECT_ID` under `from_env`, else the configured one.
    pub project_id: String,
    /// The full `…/ingest` URL.
    pub endpoint: String,
    /// A non-empty secret.
    pub secret: Option<String>,
    /// No URL was configured: the default is used.
    pub url_defaulted: bool,
    /// Plain `http://` to a host that is not loopback.
    pub insecure: bool,
}

/// The handle key of a configured secret, refused when shorter than
/// [`MIN_CONVERSATION_KEY_BYTES`] (`from`: where it was configured).
fn conversation_key(secret: &[u8], from: &'static str) -> Result<HandleKey, ConfigError> {
    match secret.len() >= MIN_CONVERSATION_KEY_BYTES {
        true => Ok(HandleKey::from_secret(secret)),
        false => Err(ConfigError::ConversationKeyTooShort { from }),
    }
}

impl fmt::Debug for Resolved {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Resolved")
            .field("project_id", &self.project_id)
            .field("endpoint", &self.endpoint)
            .field("secret", &self.secret.as_ref().map(|_| "***"))
            .field("url_defaulted", &self.url_defaulted)
            .field("insecure", &self.insecure)
            .finish()
    }
}

/// `{url}/ingest`, with trailing slashes trimmed and `/ingest` not doubled; and whether the URL
/// sends in clear text off this machine.
pub(super) fn resolve_endpoint(url: &str) -> Result<(String, bool), ConfigError> {
    let trimmed = url.trim().trim_end_matches('/');
    let invalid = |reason: &'static str| ConfigError::InvalidIngestUrl { reason };
    let uri: ureq::http::Uri = trimmed.parse().map_err(|_| invalid("it is not a valid URL"))?;
    let scheme = uri.scheme_str().ok_or_else(|| invalid("it has no scheme (write http:// or https://)"))?;
    if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
        return Err(invalid("its scheme is neither http nor https"));
    }
    let host = uri.host().filter(|h| !h.is_empty()).ok_or_else(|| invalid("it names no host"))?;
    if uri.query().is_some() {
        return Err(invalid("it has a query string (give the base URL of the ingest API)"));
    }
    // Credentials in the URL would travel into error texts and `Debug`; the secret has its own header.
    if uri.authority().is_some_and(|a| a.as_str().contains('@')) {
        return Err(invalid("it carries credentials (user:password@); put the secret in Config::ingest_secret"));
    }
    let endpoint = if trimmed.ends_with("/ingest") { trimmed.to_string() } else { format!("{trimmed}/ingest") };
    let insecure = scheme.eq_ignore_ascii_case("http") && !is_loopback(host);
    Ok((endpoint, insecure))
}

/// The URL with any `user:password@` replaced, for display (such URLs are refused by `init`).
pub(super) fn without_userinfo(url: &str) -> String {
    let start = url.find("://").map_or(0, |i| i + 3);
    let authority_end = url[start..].find(['/', '?', '#']).map_or(url.len(), |i| start + i);
    match url[start..authority_end].rfind('@') {
        Some(at) => format!("{}***@{}", &url[..start], &url[start + at + 1..]),
        None => url.to_owned(),
    }
}

fn is_loopback(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host.to_ascii_lowercase().ends_with(".localhost")
        || host.parse::<std::net::IpAddr>().map(|ip| ip.is_loopback()).unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The key is the one set in code, else the environment's under `from_env` only; a short
    /// one is refused with where it came from.
    #[test]
    fn the_conversation_key_comes_from_code_or_from_the_environment() {
        let long = "k".repeat(MIN_CONVERSATION_KEY_BYTES);
        let env = |value: &str| {
            let value = value.to_owned();
            move |name: &str| (name == CONVERSATION_KEY_ENV).then(|| value.clone())
        };
        let from_env = Config::from_env("p");
        assert_eq!(from_env.handle_key_with(env(&long)), Ok(Some(HandleKey::from_secret(long.as_bytes()))));
        assert_eq!(from_env.handle_key_with(env(" ")), Ok(None), "blank is unset");
        assert_eq!(Config::new("p").handle_key_with(env(&long)), Ok(None), "`Config::new` reads no environment");
        let in_code = Config::from_env("p").conversation_key("c".repeat(40));
        assert_eq!(in_code.handle_key_with(env(&long)), Ok(Some(HandleKey::from_secret("c".repeat(40).as_bytes()))));
        let short = from_env.handle_key_with(env("short")).unwrap_err();
        assert_eq!(short, ConfigError::ConversationKeyTooShort { from: CONVERSATION_KEY_ENV });
        assert!(short.to_string().contains("MCPEYE_CONVERSATION_KEY"), "{short}");
        assert!(Config::new("p").conversation_key([1u8; 31]).resolve().is_err());
    }
}
