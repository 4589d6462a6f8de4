//! Sending one payload, and what the answer means (CONTRACT.md §1.2–1.4).

use crate::config::Resolved;
use crate::contract::SECRET_HEADER;
use std::time::Duration;

/// Longest `Retry-After` honoured; a larger value is treated as this.
pub(crate) const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

/// What became of one POST.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// 2xx.
    Sent,
    /// Network error, 408, 429 or 5xx: try again later (not before `after`, when given).
    Retry { status: Option<u16>, after: Option<Duration>, reason: String },
    /// 413: split the batch.
    TooLarge,
    /// Any other answer: drop the batch.
    Rejected { status: u16 },
}

/// Where payloads go. The flusher owns it; it may block up to `timeout`.
pub(crate) trait Transport: Send {
    fn send(&mut self, body: Vec<u8>, timeout: Duration) -> Outcome;
}

/// POSTs to the ingest with ureq.
pub(crate) struct HttpTransport {
    agent: ureq::Agent,
    endpoint: String,
    secret: Option<String>,
}

impl HttpTransport {
    pub(crate) fn new(resolved: &Resolved, connect_timeout: Duration, request_timeout: Duration) -> Self {
        // ureq 3 sets no timeout by default; a blackholed ingest must never hang the flusher.
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .timeout_resolve(Some(connect_timeout))
            .timeout_connect(Some(connect_timeout))
            .timeout_global(Some(request_timeout))
            .user_agent(concat!("mcpeye-rs/", env!("CARGO_PKG_VERSION")))
            .build()
            .new_agent();
        HttpTransport { agent, endpoint: resolved.endpoint.clone(), secret: resolved.secret.clone() }
    }
}

impl Transport for HttpTransport {
    fn send(&mut self, body: Vec<u8>, timeout: Duration) -> Outcome {
        let mut request = self
            .agent
            .post(&self.endpoint)
            .config()
            .timeout_global(Some(timeout))
            .build()
            .header("content-type", "application/json");
        if let Some(secret) = &self.secret {
            request = request.header(SECRET_HEADER, secret);
        }
        match request.send(&body[..]) {
            Ok(mut response) => {
                let status = response.status().as_u16();
                let retry_after =
                    response.headers().get("retry-after").and_then(|v| v.to_str().ok()).and_then(parse_retry_after);
                // Reading the (small) answer lets the connection be reused; its content is unused.
                let _ = response.body_mut().with_config().limit(64 * 1024).read_to_vec();
                classify(status, retry_after)
            }
            Err(e) => Outcome::Retry { status: None, after: None, reason: describe(&e) },
        }
    }
}

/// The meaning of an HTTP status for a batch (CONTRACT.md §1.4).
pub(crate) fn classify(status: u16, retry_after: Option<Duration>) -> Outcome {
    match status {
        200..=299 => Outcome::Sent,
        408 | 429 | 500..=599 => {
            Outcome::Retry { status: Some(status), after: retry_after, reason: format!("HTTP {status}") }
        }
        413 => Outcome::TooLarge,
        _ => Outcome::Rejected { status },
    }
}

/// `Retry-After` in its seconds form, capped at [`MAX_RETRY_AFTER`].
pub(crate) fn parse_retry_after(v: &str) -> Option<Duration> {
    let secs: u64 = v.trim().parse().ok()?;
    Some(Duration::from_secs(secs).min(MAX_RETRY_AFTER))
}

/// The delay before retry number `attempt` (1-based): `initial` doubled each time up to `max`,
/// then jittered to between half and all of it so that many servers do not retry in step.
pub(crate) fn backoff(attempt: u32, initial: Duration, max: Duration) -> Duration {
    let full = initial.saturating_mul(1u32 << attempt.saturating_sub(1).min(20)).min(max);
    // uuid's fast RNG is already a dependency; a jitter needs nothing stronger.
    let r = (uuid::Uuid::new_v4().as_u128() & 0xFFFF) as u32;
    full / 2 + (full / 2).mul_f64(f64::from(r) / 65_535.0)
}

/// A short description of a network error that names no secret.
fn describe(e: &ureq::Error) -> String {
    match e {
        ureq::Error::Timeout(t) => format!("timed out ({t})"),
        ureq::Error::Io(io) => format!("{}", io.kind()),
        ureq::Error::HostNotFound => "host not found".to_string(),
        ureq::Error::ConnectionFailed => "connection failed".to_string(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_are_classified_per_contract() {
        assert_eq!(classify(200, None), Outcome::Sent);
        assert_eq!(classify(204, None), Outcome::Sent);
        for s in [408, 429, 500, 503, 599] {
            assert!(matches!(classify(s, None), Outcome::Retry { status: Some(x), .. } if x == s));
        }
        assert_eq!(classify(413, None), Outcome::TooLarge);
        for s in [301, 400, 401, 403, 404, 422] {
            assert_eq!(classify(s, None), Outcome::Rejected { status: s });
        }
    }

    #[test]
    fn retry_after_seconds_are_capped() {
        assert_eq!(parse_retry_after(" 3 "), Some(Duration::from_secs(3)));
        assert_eq!(parse_retry_after("86400"), Some(MAX_RETRY_AFTER));
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), None);
    }

    #[test]
    fn backoff_doubles_within_jitter_and_cap() {
        let (i, m) = (Duration::from_millis(100), Duration::from_secs(1));
        for attempt in 1..10 {
            let full = (i * (1 << (attempt - 1))).min(m);
            let d = backoff(attempt, i, m);
            assert!(d >= full / 2 && d <= full, "attempt {attempt}: {d:?}");
        }
    }
}
