//! Sending one payload, and what the answer means (docs/wire-format.md#transport and #delivery-and-retry).

use crate::config::Resolved;
use crate::contract::SECRET_HEADER;
use crate::flush::encode::Payload;
use std::time::Duration;
use ureq::unversioned::resolver::{DefaultResolver, ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::time::Duration as TimeoutAfter;
use ureq::unversioned::transport::{DefaultConnector, NextTimeout};

/// Longest `Retry-After` honoured; a larger value is treated as this.
pub(crate) const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

/// What became of one POST.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PostAnswer {
    /// 2xx.
    Sent,
    /// Network error, 408, 429 or 5xx: try again later (not before `after`, when given).
    Retry { status: Option<u16>, after: Option<Duration>, reason: String },
    /// 413: split the batch.
    TooLarge,
    /// Any other answer: drop the batch.
    Rejected { status: u16 },
    /// Not attempted: the batch before it in its chain was not accepted, or the tracker shut
    /// down meanwhile. It goes back to the buffer as it was.
    NotSent,
}

/// Most POSTs in flight at once: sender threads, started as batches of distinct identities wait.
/// Eight keep 200 identities against a 40 ms ingest within about a second; one identity never
/// uses more than one.
pub(crate) const SENDERS: usize = 8;

/// Where payloads go. The flusher's sender threads share it, several POSTs at once; each call
/// may block up to `timeout`.
pub(crate) trait IngestTransport: Send + Sync {
    fn send(&self, body: Payload<'_>, timeout: Duration) -> PostAnswer;
}

/// POSTs to the ingest with ureq.
pub(crate) struct HttpTransport {
    agent: ureq::Agent,
    endpoint: String,
    secret: Option<String>,
    /// The `host` header ureq derives from the endpoint; `None` when it would add more (credentials
    /// in the URL) or the URL does not parse: the payload is then joined and sent as a slice.
    host: Option<String>,
}

const USER_AGENT: &str = concat!("mcpeye-rs/", env!("CARGO_PKG_VERSION"));

impl HttpTransport {
    pub(crate) fn new(resolved: &Resolved, connect_timeout: Duration, request_timeout: Duration) -> Self {
        // ureq 3 sets no timeout by default; a blackholed ingest must never hang the flusher.
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .timeout_resolve(Some(connect_timeout))
            .timeout_connect(Some(connect_timeout))
            .timeout_global(Some(request_timeout))
            .user_agent(USER_AGENT)
            // One kept-alive connection per sender thread of the flusher (ureq keeps 3 by default).
            .max_idle_connections_per_host(SENDERS)
            .max_idle_connections(SENDERS.max(10))
            .build();
        let agent =
            ureq::Agent::with_parts(config, DefaultConnector::default(), AddressResolver::<DefaultResolver>::default());
        let host = host_header(&resolved.endpoint);
        HttpTransport { agent, endpoint: resolved.endpoint.clone(), secret: resolved.secret.clone(), host }
    }
}

/// ureq's resolver, except that an IP address is parsed without a thread and a host name's
/// addresses are kept for [`RESOLVED_FOR`]. ureq resolves the endpoint before every request, a
/// pooled connection or not, and with a timeout set it does so on a thread spawned for it: a
/// thread created and joined per POST. Parsing an address cannot block, so the timeout has
/// nothing to bound; a host name is looked up on that thread at most once per [`RESOLVED_FOR`].
#[derive(Debug, Default)]
struct AddressResolver<R = DefaultResolver> {
    inner: R,
    /// The last host name looked up (`scheme://authority`), when, and its addresses.
    cached: std::sync::Mutex<Option<(String, std::time::Instant, ResolvedSocketAddrs)>>,
}

/// How long a host name's addresses are reused: as the JVM's default positive DNS cache, short
/// enough that an ingest moved behind its name is followed within a batch interval or two.
const RESOLVED_FOR: Duration = Duration::from_secs(30);

impl<R: Resolver> Resolver for AddressResolver<R> {
    fn resolve(
        &self,
        uri: &ureq::http::Uri,
        config: &ureq::config::Config,
        timeout: NextTimeout,
    ) -> Result<ResolvedSocketAddrs, ureq::Error> {
        self.resolve_at(uri, config, timeout, std::time::Instant::now())
    }
}

impl<R: Resolver> AddressResolver<R> {
    fn resolve_at(
        &self,
        uri: &ureq::http::Uri,
        config: &ureq::config::Config,
        timeout: NextTimeout,
        now: std::time::Instant,
    ) -> Result<ResolvedSocketAddrs, ureq::Error> {
        let host = uri.host().unwrap_or_default();
        if host.trim_start_matches('[').trim_end_matches(']').parse::<std::net::IpAddr>().is_ok() {
            // Without a deadline, ureq's resolver parses on the calling thread.
            return self.inner.resolve(uri, config, NextTimeout { after: TimeoutAfter::NotHappening, ..timeout });
        }
        let key = (uri.scheme_str().unwrap_or_default(), uri.authority().map(|a| a.as_str()).unwrap_or_default());
        let mut cached = self.cached.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((k, at, addrs)) = &*cached {
            let same = k.len() == key.0.len() + 3 + key.1.len() && k.starts_with(key.0) && k.ends_with(key.1);
            if same && now.saturating_duration_since(*at) < RESOLVED_FOR {
                return Ok(addrs.clone());
            }
        }
        // A failure is not kept: the next POST looks up again.
        let addrs = self.inner.resolve(uri, config, timeout)?;
        *cached = Some((format!("{}://{}", key.0, key.1), now, addrs.clone()));
        Ok(addrs)
    }
}

/// The `host` header ureq (ureq-proto) sends for `endpoint`: its host, and its port unless the
/// scheme's default.
fn host_header(endpoint: &str) -> Option<String> {
    let uri: ureq::http::Uri = endpoint.parse().ok()?;
    let authority = uri.authority()?;
    if authority.as_str().contains('@') {
        return None;
    }
    let default = match uri.scheme_str() {
        Some("https") => Some(443),
        Some("http") => Some(80),
        _ => None,
    };
    Some(match (uri.port_u16(), default) {
        (Some(port), Some(default)) if port != default => format!("{}:{port}", authority.host()),
        _ => authority.host().to_string(),
    })
}

impl IngestTransport for HttpTransport {
    fn send(&self, mut body: Payload<'_>, timeout: Duration) -> PostAnswer {
        let request = self.agent.post(&self.endpoint).config().timeout_global(Some(timeout)).build();
        let sent = match &self.host {
            // Streamed from its parts: one copy of the payload (into ureq's send buffer) instead
            // of two and a payload-sized allocation. A reader's body is chunked unless its length
            // is given, and ureq writes the headers it adds before the request's own: all of them
            // are given here, in ureq's order, so that the request stays byte for byte what ureq
            // writes for the joined payload.
            Some(host) => {
                let mut request = request
                    .header("content-length", body.len())
                    .header("user-agent", USER_AGENT)
                    .header("accept", "*/*")
                    .header("host", host)
                    .header("content-type", "application/json");
                if let Some(secret) = &self.secret {
                    request = request.header(SECRET_HEADER, secret);
                }
                request.send(ureq::SendBody::from_reader(&mut body))
            }
            None => {
                let mut request = request.header("content-type", "application/json");
                if let Some(secret) = &self.secret {
                    request = request.header(SECRET_HEADER, secret);
                }
                request.send(&body.to_vec()[..])
            }
        };
        match sent {
            Ok(mut response) => {
                let status = response.status().as_u16();
                let retry_after =
                    response.headers().get("retry-after").and_then(|v| v.to_str().ok()).and_then(parse_retry_after);
                // Reading the (small) answer lets the connection be reused; its content is unused.
                let _ = response.body_mut().with_config().limit(64 * 1024).read_to_vec();
                classify(status, retry_after)
            }
            Err(e) => PostAnswer::Retry { status: None, after: None, reason: describe(&e) },
        }
    }
}

/// The meaning of an HTTP status for a batch (docs/wire-format.md#delivery-and-retry).
pub(crate) fn classify(status: u16, retry_after: Option<Duration>) -> PostAnswer {
    match status {
        200..=299 => PostAnswer::Sent,
        408 | 429 | 500..=599 => {
            PostAnswer::Retry { status: Some(status), after: retry_after, reason: format!("HTTP {status}") }
        }
        413 => PostAnswer::TooLarge,
        _ => PostAnswer::Rejected { status },
    }
}

/// `Retry-After` as seconds or as an HTTP date (IMF-fixdate), capped at [`MAX_RETRY_AFTER`].
pub(crate) fn parse_retry_after(v: &str) -> Option<Duration> {
    parse_retry_after_at(v, std::time::SystemTime::now())
}

fn parse_retry_after_at(v: &str, now: std::time::SystemTime) -> Option<Duration> {
    let v = v.trim();
    let delay = match v.parse::<u64>() {
        Ok(secs) => Duration::from_secs(secs),
        // A date already past means "now".
        Err(_) => http_date(v)?.duration_since(now).unwrap_or(Duration::ZERO),
    };
    Some(delay.min(MAX_RETRY_AFTER))
}

/// Parses an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the form RFC 9110 requires senders
/// to use; the obsolete forms fall back to the ordinary backoff.
fn http_date(v: &str) -> Option<std::time::SystemTime> {
    const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    let mut parts = v.split_ascii_whitespace();
    let (_weekday, day, month, year, time, zone) =
        (parts.next()?, parts.next()?, parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    if zone != "GMT" || parts.next().is_some() {
        return None;
    }
    let day: u64 = day.parse().ok().filter(|d| (1..=31).contains(d))?;
    let month = MONTHS.iter().position(|m| *m == month)? as u64 + 1;
    let year: u64 = year.parse().ok().filter(|y| *y >= 1970)?;
    let mut hms = time.split(':').map(|t| t.parse::<u64>().ok());
    let (h, m, sec) = (hms.next()??, hms.next()??, hms.next()??);
    if hms.next().is_some() || h > 23 || m > 59 || sec > 60 {
        return None;
    }
    // Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
    let (y, mp) = if month <= 2 { (year - 1, month + 9) } else { (year, month - 3) };
    let (era, yoe) = (y / 400, y % 400);
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = (era * 146_097 + doe).checked_sub(719_468)?;
    Some(std::time::UNIX_EPOCH + Duration::from_secs(days * 86_400 + h * 3600 + m * 60 + sec))
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

    /// Reads one HTTP/1.1 request (headers and a `content-length` body) off `stream` and answers 200.
    fn take_request(stream: &mut std::net::TcpStream) -> Vec<u8> {
        use std::io::{Read, Write};
        let mut request = Vec::new();
        let mut byte = [0u8; 1];
        while !request.ends_with(b"\r\n\r\n") {
            assert_eq!(stream.read(&mut byte).unwrap(), 1, "the request ended early");
            request.push(byte[0]);
        }
        let head = String::from_utf8(request.clone()).unwrap();
        let length: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length: "))
            .expect("a content-length header")
            .parse()
            .unwrap();
        let mut body = vec![0; length];
        stream.read_exact(&mut body).unwrap();
        request.extend_from_slice(&body);
        stream.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n").unwrap();
        request
    }

    #[test]
    fn a_streamed_payload_is_sent_as_ureq_sends_the_joined_one() {
        use crate::flush::encode::{payload_head, PAYLOAD_TAIL};
        let cases = [(Some("s3cret"), "127.0.0.1"), (None, "localhost")];
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let server = std::thread::spawn(move || {
            // Each sender makes its request on a connection of its own (one agent each).
            (0..2 * cases.len()).map(|_| take_request(&mut listener.accept().unwrap().0)).collect::<Vec<_>>()
        });
        let head = payload_head("proj", &crate::config::Identity::new(), None);
        // Larger than ureq's 128 KiB send buffer: the body goes out in several writes.
        let events: Vec<Vec<u8>> =
            (0..600).map(|i| format!("{{\"i\":{i},\"t\":\"{}\"}}", "x".repeat(i)).into_bytes()).collect();
        let mut joined = head.clone();
        joined.extend_from_slice(&events.join(&b","[..]));
        joined.extend_from_slice(PAYLOAD_TAIL);
        let timeout = Duration::from_secs(10);
        for (secret, host) in cases {
            let resolved = Resolved {
                project_id: "p".to_owned(),
                endpoint: format!("http://{host}:{}/ingest", addr.port()),
                secret: secret.map(String::from),
                url_defaulted: false,
                insecure: false,
            };
            // As the payload was sent before it was streamed: joined, then sent as a slice.
            let old = HttpTransport::new(&resolved, timeout, timeout);
            let mut request = old
                .agent
                .post(&old.endpoint)
                .config()
                .timeout_global(Some(timeout))
                .build()
                .header("content-type", "application/json");
            if let Some(secret) = secret {
                request = request.header(SECRET_HEADER, secret);
            }
            assert_eq!(request.send(&joined[..]).unwrap().status(), 200);
            let new = HttpTransport::new(&resolved, timeout, timeout);
            assert!(new.host.is_some());
            assert_eq!(new.send(Payload::new(&head, events.iter().map(Vec::as_slice)), timeout), PostAnswer::Sent);
        }
        let requests = server.join().unwrap();
        let split = |r: &[u8]| {
            let end = r.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
            (String::from_utf8(r[..end].to_vec()).unwrap(), r[end..].to_vec())
        };
        for pair in requests.chunks(2) {
            let ((old_head, old_body), (new_head, new_body)) = (split(&pair[0]), split(&pair[1]));
            assert!(old_body.ends_with(&joined));
            assert_eq!(new_head, old_head);
            assert!(new_body == old_body, "the bodies differ");
        }
    }

    /// A lookup's deadline as ureq passes it (set: its resolver would use a thread).
    fn resolve_timeout() -> NextTimeout {
        NextTimeout {
            after: TimeoutAfter::Exact(Duration::from_secs(5)),
            reason: ureq::Timeout::Resolve,
            per_read: None,
            per_write: None,
        }
    }

    #[test]
    fn addresses_resolve_as_ureq_resolves_them() {
        let config = ureq::config::Config::default();
        let timeout = resolve_timeout();
        for url in
            ["http://127.0.0.1:8787/ingest", "https://[::1]/ingest", "https://10.1.2.3:8443/", "http://localhost:9/"]
        {
            let uri = url.parse().unwrap();
            let ours = AddressResolver::<DefaultResolver>::default().resolve(&uri, &config, timeout).unwrap();
            let ureqs = DefaultResolver::default().resolve(&uri, &config, timeout).unwrap();
            assert_eq!(ours.iter().collect::<Vec<_>>(), ureqs.iter().collect::<Vec<_>>(), "{url}");
        }
        let bad = "http://no-such-host.invalid/".parse().unwrap();
        assert!(AddressResolver::<DefaultResolver>::default().resolve(&bad, &config, timeout).is_err());
    }

    /// Counts lookups, answering one address per host name, or failing for `fail.test`.
    #[derive(Debug, Default)]
    struct CountingResolver(std::sync::atomic::AtomicUsize);

    impl Resolver for CountingResolver {
        fn resolve(
            &self,
            uri: &ureq::http::Uri,
            _config: &ureq::config::Config,
            _timeout: NextTimeout,
        ) -> Result<ResolvedSocketAddrs, ureq::Error> {
            let n = self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            if uri.host() == Some("fail.test") {
                return Err(ureq::Error::HostNotFound);
            }
            let mut addrs = self.empty();
            addrs.push(std::net::SocketAddr::from(([10, 0, 0, n as u8], uri.port_u16().unwrap_or(80))));
            Ok(addrs)
        }
    }

    #[test]
    fn a_host_name_is_looked_up_once_per_period_and_a_failure_is_not_kept() {
        let config = ureq::config::Config::default();
        let timeout = resolve_timeout();
        let r = AddressResolver::<CountingResolver>::default();
        let lookups = || r.inner.0.load(std::sync::atomic::Ordering::SeqCst);
        let at = |url: &str, t: std::time::Instant| {
            r.resolve_at(&url.parse().unwrap(), &config, timeout, t).map(|a| a.iter().copied().collect::<Vec<_>>())
        };
        let t0 = std::time::Instant::now();
        let first = at("https://ingest.test/v1", t0).unwrap();
        assert_eq!(at("https://ingest.test/other", t0 + RESOLVED_FOR / 2).unwrap(), first);
        assert_eq!(lookups(), 1, "reused within the period, whatever the path");
        // Another port, scheme or host is another lookup.
        at("https://ingest.test:8443/v1", t0).unwrap();
        at("http://ingest.test:8443/v1", t0).unwrap();
        at("https://other.test/v1", t0).unwrap();
        assert_eq!(lookups(), 4);
        let again = at("https://other.test/v1", t0 + RESOLVED_FOR).unwrap();
        assert_eq!(lookups(), 5, "looked up again once the period is over");
        assert_ne!(again[0], first[0]);
        assert!(at("https://fail.test/", t0).is_err());
        assert!(at("https://fail.test/", t0).is_err());
        assert_eq!(lookups(), 7, "a failed lookup is tried again");
        // An address does not replace the kept host name.
        at("http://127.0.0.1:9/", t0).unwrap();
        assert_eq!(lookups(), 8);
        assert_eq!(at("https://other.test/v1", t0 + RESOLVED_FOR).unwrap(), again);
        assert_eq!(lookups(), 8);
    }

    #[test]
    fn the_host_header_is_the_one_ureq_derives() {
        assert_eq!(host_header("https://x.test/ingest").as_deref(), Some("x.test"));
        assert_eq!(host_header("https://x.test:443/ingest").as_deref(), Some("x.test"));
        assert_eq!(host_header("https://x.test:80/ingest").as_deref(), Some("x.test:80"));
        assert_eq!(host_header("http://x.test:80/ingest").as_deref(), Some("x.test"));
        assert_eq!(host_header("http://127.0.0.1:8787/ingest").as_deref(), Some("127.0.0.1:8787"));
        assert_eq!(host_header("http://[::1]:8787/ingest").as_deref(), Some("[::1]:8787"));
        // ureq would add an authorization header too: sent joined, as ureq frames it.
        assert_eq!(host_header("https://user:pass@x.test/ingest"), None);
    }

    #[test]
    fn statuses_are_classified_per_contract() {
        assert_eq!(classify(200, None), PostAnswer::Sent);
        assert_eq!(classify(204, None), PostAnswer::Sent);
        for s in [408, 429, 500, 503, 599] {
            assert!(matches!(classify(s, None), PostAnswer::Retry { status: Some(x), .. } if x == s));
        }
        assert_eq!(classify(413, None), PostAnswer::TooLarge);
        for s in [301, 400, 401, 403, 404, 422] {
            assert_eq!(classify(s, None), PostAnswer::Rejected { status: s });
        }
    }

    #[test]
    fn retry_after_seconds_are_capped() {
        assert_eq!(parse_retry_after(" 3 "), Some(Duration::from_secs(3)));
        assert_eq!(parse_retry_after("86400"), Some(MAX_RETRY_AFTER));
    }

    #[test]
    fn retry_after_http_dates() {
        let at = |secs: u64| std::time::UNIX_EPOCH + Duration::from_secs(secs);
        // 1445412480 is Wed, 21 Oct 2015 07:28:00 GMT.
        let date = "Wed, 21 Oct 2015 07:28:00 GMT";
        assert_eq!(http_date(date), Some(at(1_445_412_480)));
        assert_eq!(http_date("Sun, 06 Nov 1994 08:49:37 GMT"), Some(at(784_111_777)));
        assert_eq!(http_date("Thu, 29 Feb 2024 00:00:00 GMT"), Some(at(1_709_164_800)));
        assert_eq!(parse_retry_after_at(date, at(1_445_412_480 - 7)), Some(Duration::from_secs(7)));
        assert_eq!(parse_retry_after_at(date, at(1_445_412_480 + 5)), Some(Duration::ZERO), "a past date means now");
        assert_eq!(parse_retry_after_at(date, at(0)), Some(MAX_RETRY_AFTER), "capped");
        for bad in
            ["Wed, 21 Oct 2015 07:28:00 UTC", "Sunday, 06-Nov-94 08:49:37 GMT", "Wed, 32 Oct 2015 07:28:00 GMT", "soon"]
        {
            assert_eq!(parse_retry_after(bad), None, "{bad}");
        }
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
