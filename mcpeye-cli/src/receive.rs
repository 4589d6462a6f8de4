//! `mcpeye receive`: a local ingest over HTTP/1.1 (std only: one thread per connection, a
//! minimal parser of what SDKs send: a request line, headers, a `content-length` body).
//! Each accepted payload is appended to the output file as one line, and each of its calls is
//! printed as it arrives.

use serde_json::Value;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Longest request head, and body, accepted.
const MAX_HEAD: usize = 64 * 1024;
const MAX_BODY: usize = 32 * 1024 * 1024;
/// An idle keep-alive connection is closed after this long.
const IDLE: Duration = Duration::from_secs(60);

/// What `mcpeye receive` was asked for.
pub struct Options {
    pub bind: String,
    pub port: u16,
    pub out: PathBuf,
    pub secret: Option<String>,
}

struct Shared {
    out: Mutex<File>,
    secret: Option<String>,
}

/// Listens until the process is stopped.
pub fn run(options: Options) -> Result<(), String> {
    let listener = TcpListener::bind((options.bind.as_str(), options.port)).map_err(|e| {
        format!("cannot listen on {}:{}: {e} (is another ingest running? try --port)", options.bind, options.port)
    })?;
    let out = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&options.out)
        .map_err(|e| format!("cannot open {} for appending: {e} (choose another --out)", options.out.display()))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    say(&format!(
        "mcpeye receive: listening on http://{addr} (POST /ingest), appending payloads to {}{}",
        options.out.display(),
        if options.secret.is_some() { ", x-mcpeye-secret required" } else { "" }
    ));
    let shared = Arc::new(Shared { out: Mutex::new(out), secret: options.secret });
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        let shared = shared.clone();
        std::thread::spawn(move || serve(stream, &shared));
    }
    Ok(())
}

/// A parsed request.
struct Request {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Request {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// What went wrong reading a request: answered with this status and text, then closed.
struct Refusal(u16, &'static str);

fn serve(stream: TcpStream, shared: &Shared) {
    let _ = stream.set_read_timeout(Some(IDLE));
    let Ok(mut writer) = stream.try_clone() else { return };
    let mut reader = BufReader::new(stream);
    loop {
        let request = match read_request(&mut reader) {
            Ok(Some(r)) => r,
            Ok(None) => return,
            Err(Refusal(status, text)) => {
                let _ = answer(&mut writer, status, &format!("{{\"error\":\"{text}\"}}"), true);
                return;
            }
        };
        let close = request.header("connection").is_some_and(|v| v.eq_ignore_ascii_case("close"));
        let (status, body) = handle(&request, shared);
        if answer(&mut writer, status, &body, close).is_err() || close {
            return;
        }
    }
}

fn read_request(reader: &mut impl BufRead) -> Result<Option<Request>, Refusal> {
    let mut head = Vec::new();
    loop {
        let mut line = Vec::new();
        match reader.by_ref().take(MAX_HEAD as u64 + 1).read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return Ok(None),
            Ok(_) => {}
        }
        if head.len() + line.len() > MAX_HEAD {
            return Err(Refusal(431, "request head too large"));
        }
        let blank = line == b"\r\n" || line == b"\n";
        if blank && head.is_empty() {
            continue;
        }
        head.extend_from_slice(&line);
        if blank {
            break;
        }
    }
    let head = String::from_utf8_lossy(&head);
    let mut lines = head.lines();
    let mut first = lines.next().unwrap_or("").split_whitespace();
    let (method, path) = (first.next().unwrap_or("").to_owned(), first.next().unwrap_or("").to_owned());
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let mut request = Request { method, path, headers, body: Vec::new() };
    if request.header("transfer-encoding").is_some_and(|v| v.to_ascii_lowercase().contains("chunked")) {
        return Err(Refusal(411, "send the body with a content-length, not chunked"));
    }
    let length: usize = match request.header("content-length") {
        Some(v) => v.parse().map_err(|_| Refusal(400, "bad content-length"))?,
        None => 0,
    };
    if length > MAX_BODY {
        return Err(Refusal(413, "payload too large"));
    }
    request.body = vec![0; length];
    reader.read_exact(&mut request.body).map_err(|_| Refusal(400, "the body ended early"))?;
    Ok(Some(request))
}

fn handle(request: &Request, shared: &Shared) -> (u16, String) {
    let path = request.path.split('?').next().unwrap_or("");
    if request.method == "GET" && (path == "/" || path.is_empty()) {
        return (200, "{\"service\":\"mcpeye receive\",\"post\":\"/ingest\"}".into());
    }
    if !path.trim_end_matches('/').ends_with("/ingest") {
        return (404, "{\"error\":\"not found: POST payloads to /ingest\"}".into());
    }
    if request.method != "POST" {
        return (405, "{\"error\":\"use POST\"}".into());
    }
    if let Some(secret) = &shared.secret {
        if request.header("x-mcpeye-secret") != Some(secret.as_str()) {
            say("refused a payload: missing or wrong x-mcpeye-secret");
            return (401, "{\"error\":\"missing or wrong x-mcpeye-secret\"}".into());
        }
    }
    let payload: Value = match serde_json::from_slice(&request.body) {
        Ok(v) => v,
        Err(e) => return (400, serde_json::json!({"error": format!("the body is not JSON: {e}")}).to_string()),
    };
    let Some(events) = payload.get("events").and_then(Value::as_array) else {
        return (400, "{\"error\":\"a payload is {\\\"projectId\\\",\\\"identity\\\",\\\"events\\\":[...]}\"}".into());
    };
    // One payload per line, as `mcpeye report` reads it.
    let mut line = serde_json::to_vec(&payload).unwrap_or_default();
    line.push(b'\n');
    {
        let mut out = shared.out.lock().unwrap_or_else(|e| e.into_inner());
        if let Err(e) = out.write_all(&line) {
            eprintln!("mcpeye receive: cannot append to the output file: {e}");
            return (503, "{\"error\":\"the receiver cannot write its file\"}".into());
        }
    }
    let lines: Vec<String> = events.iter().map(call_line).collect();
    say(&lines.join("\n"));
    (200, serde_json::json!({"accepted": events.len()}).to_string())
}

/// Prints lines on stdout, at once; a closed stdout (`| head`) is not the receiver's concern.
fn say(lines: &str) {
    if lines.is_empty() {
        return;
    }
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{lines}").and_then(|()| out.flush());
}

/// One call as a line: time, tool, outcome, duration, and the intent or the error.
fn call_line(event: &Value) -> String {
    let tool = event["toolName"].as_str().unwrap_or("?");
    let ms = event["timestamp"].as_u64().unwrap_or(0);
    let secs = (ms / 1000) % 86_400;
    let time = format!("{:02}:{:02}:{:02}", secs / 3600, (secs / 60) % 60, secs % 60);
    let error = event["isError"].as_bool().unwrap_or(false);
    let duration = event["durationMs"].as_u64().unwrap_or(0);
    let detail = if error {
        event["errorMessage"].as_str().unwrap_or("")
    } else if let Some(c) = event["arguments"]["capability"].as_str() {
        c
    } else {
        event["intent"].as_str().unwrap_or("")
    };
    let detail: String = detail.split_whitespace().collect::<Vec<_>>().join(" ");
    let detail = match detail.char_indices().nth(100) {
        Some((cut, _)) => format!("{}…", &detail[..cut]),
        None => detail,
    };
    format!("{time} {tool} {} {duration} ms {detail}", if error { "ERROR" } else { "ok" }).trim_end().to_owned()
}

fn answer(stream: &mut TcpStream, status: u16, body: &str, close: bool) -> std::io::Result<()> {
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        405 => "Method Not Allowed",
        411 => "Length Required",
        413 => "Payload Too Large",
        431 => "Request Header Fields Too Large",
        _ => "Service Unavailable",
    };
    let response = format!(
        "HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: {}\r\n\r\n{body}",
        body.len(),
        if close { "close" } else { "keep-alive" }
    );
    stream.write_all(response.as_bytes())?;
    stream.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_parsed_and_calls_printed_in_a_line() {
        let raw = b"POST /ingest HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nX-Mcpeye-Secret: s\r\n\r\n{}GET / HTTP/1.1\r\n\r\n";
        let mut reader = BufReader::new(&raw[..]);
        let first = read_request(&mut reader).ok().flatten().unwrap();
        assert_eq!(
            (first.method.as_str(), first.path.as_str(), first.body.as_slice()),
            ("POST", "/ingest", &b"{}"[..])
        );
        assert_eq!(first.header("x-mcpeye-secret"), Some("s"));
        let second = read_request(&mut reader).ok().flatten().unwrap();
        assert_eq!((second.method.as_str(), second.path.as_str()), ("GET", "/"));
        assert!(read_request(&mut reader).ok().flatten().is_none());
        let chunked = b"POST /ingest HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";
        assert!(matches!(read_request(&mut BufReader::new(&chunked[..])), Err(Refusal(411, _))));
        let event = serde_json::json!({"toolName": "order", "isError": true, "timestamp": 3_723_000, "durationMs": 9,
                                       "errorMessage": "out\nof stock"});
        assert_eq!(call_line(&event), "01:02:03 order ERROR 9 ms out of stock");
    }
}
