//! The local event log (opt-in, [`Config::event_log`](crate::Config::event_log)): every event
//! as the wire has it, after the caps and redaction, with what the wire has no key for (the
//! session, conversation, turn, model, client, server version and the hash of the tool's
//! descriptor), the methods other than `tools/call`, and the tool list whenever it changes.
//! `mcpeye report` reads it. Only the flusher thread writes it.
//!
//! The format is JSON Lines, specified in `docs/event-log.md`: one object per line, each with
//! `"v"` (the format's version, [`FORMAT_VERSION`]) and a `"kind"`: [`KIND_LOG`] (the first
//! line of every file), [`KIND_TOOLS`], [`KIND_CALL`] or [`KIND_METHOD`].
//!
//! Files are `events-<ms>-<pid>-<n>.jsonl` in the directory (`<ms>` the epoch milliseconds the
//! file was opened, 13 digits, so names sort by age). A file is closed once it holds a quarter
//! of the bound and a new one begins with the header and the current tool list, so that any
//! file read alone knows its tools. After each rotation the oldest files of the directory are
//! removed until the rest, with room for a full current file, fits within the bound.
//!
//! Writing never panics and never blocks on anything but the disk: an I/O error drops the
//! lines of that commit, counted in [`EventLog::lost`] and [`EventLog::failures`], and the next
//! commit opens a new file.

use crate::json::{write_number, write_str};
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The format's version, the `"v"` of every line. A reader skips the lines of a version it
/// does not know.
pub const FORMAT_VERSION: u32 = 1;
/// `kind` of the first line of each file: who wrote it.
pub const KIND_LOG: &str = "log";
/// `kind` of a tool list.
pub const KIND_TOOLS: &str = "tools";
/// `kind` of a tool call.
pub const KIND_CALL: &str = "call";
/// `kind` of a request of another method (`resources/read`, `prompts/get`, `tools/list`, …).
pub const KIND_METHOD: &str = "method";
/// Name prefix and extension of the log's files.
const PREFIX: &str = "events-";
const EXTENSION: &str = ".jsonl";
/// Longest `target` of a method line, in characters (a client's URI or prompt name, like an
/// identity value).
const MAX_TARGET: usize = 256;
/// Lines gathered before a commit is forced, so that a long drain does not hold them all.
const COMMIT_AT: usize = 256 * 1024;
/// Hex digits of a descriptor hash (48 bits: a changed description among a server's few
/// hundred versions of a tool collides with odds far below one in a billion).
const HASH_HEX: usize = 12;

/// One tool call for the log: the encoded wire event and what the wire has no key for. Every
/// field but the call id, the tool and the timestamp is optional.
#[derive(Debug, Clone, Copy, Default)]
pub struct CallEntry<'a> {
    /// The event's `callId`.
    pub call_id: &'a str,
    /// The event's `toolName`.
    pub tool: &'a str,
    /// The event's `timestamp` (epoch milliseconds at the end of the call).
    pub timestamp_ms: u64,
    /// The event as encoded for the wire (compact JSON of one object, after the caps and
    /// redaction); `None` writes the record without it.
    pub event: Option<&'a [u8]>,
    /// The MCP session.
    pub session: Option<&'a str>,
    /// The conversation handle (`docs/attribution.md#conversation`).
    pub conversation: Option<&'a str>,
    /// The turn of the conversation, when the client names it.
    pub turn: Option<&'a str>,
    /// The model that made the call.
    pub model: Option<&'a str>,
    /// The client (`name/version`), the payload identity's `client`.
    pub client: Option<&'a str>,
    /// The server's version, the payload identity's `serverVersion`.
    pub server_version: Option<&'a str>,
    /// The tool's [`descriptor_hash`]; when `None`, the hash of the tool in the last tool list
    /// written, if it has one.
    pub tool_hash: Option<&'a str>,
    /// The client's `aiInvocation.invocationReason` when it is not the event's `intent`
    /// (already capped and redacted like the intent).
    pub invocation_reason: Option<&'a str>,
    /// The client's `aiInvocation.userIntent` when it is not the event's `intent` (already
    /// capped and redacted like the intent).
    pub user_intent: Option<&'a str>,
    /// `aiInvocation.userIntent.redacted`, when the client said.
    pub user_intent_redacted: Option<bool>,
    /// The intent [`Config::infer_intent`](crate::Config::infer_intent) gave a call without one
    /// (already capped and redacted like the intent).
    pub inferred_intent: Option<&'a str>,
}

/// One request of a method other than `tools/call`.
#[derive(Debug, Clone, Copy, Default)]
pub struct MethodEntry<'a> {
    /// The method, e.g. `resources/read`.
    pub method: &'a str,
    /// Epoch milliseconds when it was answered.
    pub timestamp_ms: u64,
    /// What it asked for: the resource's URI, the prompt's name.
    pub target: Option<&'a str>,
    /// Whether it was answered with a JSON-RPC error.
    pub is_error: bool,
    /// How long it took, when known.
    pub duration_ms: Option<u64>,
    /// As in [`CallEntry`].
    pub session: Option<&'a str>,
    /// As in [`CallEntry`].
    pub conversation: Option<&'a str>,
    /// As in [`CallEntry`].
    pub model: Option<&'a str>,
    /// As in [`CallEntry`].
    pub client: Option<&'a str>,
    /// As in [`CallEntry`].
    pub server_version: Option<&'a str>,
}

/// The tool list a server offers: its `tools/list` descriptors, the reserved tool's included.
#[derive(Debug, Clone, Copy)]
pub struct ToolsEntry<'a> {
    /// Epoch milliseconds.
    pub timestamp_ms: u64,
    /// The server's version.
    pub server_version: Option<&'a str>,
    /// The descriptors (objects with `name`, `description`, `inputSchema`, …), as listed.
    pub tools: &'a [Value],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Header<'a> {
    v: u32,
    kind: &'a str,
    ts: u64,
    writer: &'a str,
    pid: u32,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct MethodLine<'a> {
    v: u32,
    kind: &'a str,
    ts: u64,
    method: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    target: Option<&'a str>,
    is_error: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    duration_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    session: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    conversation: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    client: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    server_version: Option<&'a str>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ToolLine<'a> {
    name: &'a str,
    hash: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    title: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<&'a str>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ToolsLine<'a> {
    v: u32,
    kind: &'a str,
    ts: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    server_version: Option<&'a str>,
    tools: Vec<ToolLine<'a>>,
}

/// A short, stable hash of a tool's descriptor (`tools/list` entry): 12 hex digits of FNV-1a
/// (64-bit) over its JSON with the keys of every object sorted, so that a changed description,
/// title or schema is a new version of the tool and key order is not.
///
/// ```
/// use mcpeye::report::descriptor_hash;
/// let a = serde_json::json!({"name": "search", "description": "Search products."});
/// let b = serde_json::json!({"description": "Search products.", "name": "search"});
/// let c = serde_json::json!({"name": "search", "description": "Search the catalogue by text."});
/// assert_eq!(descriptor_hash(&a), descriptor_hash(&b));
/// assert_ne!(descriptor_hash(&a), descriptor_hash(&c));
/// assert_eq!(descriptor_hash(&a).len(), 12);
/// ```
pub fn descriptor_hash(descriptor: &Value) -> String {
    let mut hash = Fnv(0xcbf2_9ce4_8422_2325);
    canonical(descriptor, &mut hash);
    format!("{:016x}", hash.0)[..HASH_HEX].to_owned()
}

struct Fnv(u64);

impl Fnv {
    fn bytes(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

/// Feeds `value` as compact JSON with sorted keys.
fn canonical(value: &Value, out: &mut Fnv) {
    match value {
        Value::Object(map) => {
            let sorted: BTreeMap<&String, &Value> = map.iter().collect();
            out.bytes(b"{");
            for (i, (k, v)) in sorted.into_iter().enumerate() {
                if i > 0 {
                    out.bytes(b",");
                }
                out.bytes(Value::from(k.as_str()).to_string().as_bytes());
                out.bytes(b":");
                canonical(v, out);
            }
            out.bytes(b"}");
        }
        Value::Array(items) => {
            out.bytes(b"[");
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.bytes(b",");
                }
                canonical(v, out);
            }
            out.bytes(b"]");
        }
        other => out.bytes(other.to_string().as_bytes()),
    }
}

/// What the calling threads tell the flusher for the log besides the calls: the requests of
/// other methods and the tool list. Rare (a few per session), so they cross under a lock.
#[derive(Debug)]
pub(crate) enum Note {
    /// A request of another method, answered.
    #[cfg_attr(not(feature = "rmcp"), allow(dead_code))] // only rmcp's servers see other methods
    Method {
        method: &'static str,
        timestamp_ms: u64,
        target: Option<String>,
        is_error: bool,
        duration_ms: Option<u64>,
        session: Option<std::sync::Arc<str>>,
        model: Option<std::sync::Arc<str>>,
        client: Option<String>,
    },
    /// The tool list a manifest serves (its `tools/list` array).
    Tools { timestamp_ms: u64, tools: Value },
}

/// Most notes waiting for the flusher; beyond, a note is dropped and counted (the flusher takes
/// them every 100 ms: only a flusher held up, by a disk that does not answer, gets here).
const MAX_NOTES: usize = 10_000;

/// The notes waiting for the flusher, and the last tool list noted (by address, so that a call
/// notes its manifest's list only when it is another one).
#[derive(Debug, Default)]
pub(crate) struct Notes {
    /// An event log is written: without one nothing is noted.
    pub(crate) on: bool,
    pending: std::sync::Mutex<Vec<Note>>,
    tools_seen: std::sync::atomic::AtomicUsize,
    /// Notes dropped past [`MAX_NOTES`], counted as the log's lost records.
    dropped: std::sync::atomic::AtomicU64,
}

impl Notes {
    pub(crate) fn new(on: bool) -> Self {
        Notes { on, ..Notes::default() }
    }

    pub(crate) fn push(&self, note: Note) {
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        if pending.len() < MAX_NOTES {
            pending.push(note);
        } else {
            self.dropped.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// Notes `list` unless it is the list noted last.
    pub(crate) fn tools(&self, list: &Value) {
        use std::sync::atomic::Ordering::Relaxed;
        let at = list as *const Value as usize;
        // A plain load first: on every call, a swap would take the cache line for writing.
        if self.tools_seen.load(Relaxed) != at && self.tools_seen.swap(at, Relaxed) != at {
            self.push(Note::Tools { timestamp_ms: crate::model::meta::now_epoch_ms(), tools: list.clone() });
        }
    }

    /// The notes waiting, and how many were dropped since the last take.
    pub(crate) fn take(&self) -> (Vec<Note>, u64) {
        let notes = std::mem::take(&mut *self.pending.lock().unwrap_or_else(|e| e.into_inner()));
        (notes, self.dropped.swap(0, std::sync::atomic::Ordering::Relaxed))
    }
}

/// The writer of an event log directory. Lines are gathered by [`call`](Self::call),
/// [`method`](Self::method) and [`tools`](Self::tools) and written by
/// [`commit`](Self::commit) (once per drain of the flusher; also when a quarter megabyte is
/// waiting, and on drop).
#[derive(Debug)]
pub struct EventLog {
    dir: PathBuf,
    max_bytes: u64,
    /// A file is rotated once it holds this much.
    file_max: u64,
    /// The open file, its path and how many bytes it holds; `None` after an error.
    file: Option<(File, PathBuf, u64)>,
    /// Files opened by this writer, to make each name new.
    opened: u64,
    pending: Vec<u8>,
    /// The call line being written (kept: its capacity is reused).
    line: Vec<u8>,
    /// Records in `pending`.
    pending_records: u64,
    /// The last tool list added (its line).
    tools_line: Option<Vec<u8>>,
    /// The tool list in effect before the pending lines: what a file opened for them starts with.
    head_tools: Option<Vec<u8>>,
    /// Its tools' hashes by name.
    tool_hashes: BTreeMap<String, String>,
    written: u64,
    lost: u64,
    failures: u64,
}

impl EventLog {
    /// Opens an event log in `dir` (created if needed), keeping about `max_bytes` on disk; the
    /// first file is opened at the first commit. Fails if `dir` cannot be created.
    pub fn open(dir: &Path, max_bytes: u64) -> io::Result<EventLog> {
        fs::create_dir_all(dir)?;
        let max_bytes = max_bytes.max(1);
        Ok(EventLog {
            dir: dir.to_owned(),
            max_bytes,
            file_max: (max_bytes / 4).max(1),
            file: None,
            opened: 0,
            pending: Vec::new(),
            line: Vec::new(),
            pending_records: 0,
            tools_line: None,
            head_tools: None,
            tool_hashes: BTreeMap::new(),
            written: 0,
            lost: 0,
            failures: 0,
        })
    }

    /// Adds a tool call. Written by hand with the wire's JSON writers rather than through serde:
    /// a line per event, on the flusher.
    pub fn call(&mut self, entry: &CallEntry<'_>) {
        let tool_hash = entry.tool_hash.or_else(|| self.tool_hashes.get(entry.tool).map(String::as_str));
        let line = &mut self.line;
        line.clear();
        line.extend_from_slice(b"{\"v\":");
        write_number(line, u64::from(FORMAT_VERSION));
        line.extend_from_slice(b",\"kind\":\"call\",\"ts\":");
        write_number(line, entry.timestamp_ms);
        line.extend_from_slice(b",\"callId\":");
        write_str(line, entry.call_id);
        line.extend_from_slice(b",\"tool\":");
        write_str(line, entry.tool);
        let optional: [(&[u8], Option<&str>); 9] = [
            (b",\"toolHash\":", tool_hash),
            (b",\"session\":", entry.session),
            (b",\"conversation\":", entry.conversation),
            (b",\"turn\":", entry.turn),
            (b",\"model\":", entry.model),
            (b",\"client\":", entry.client),
            (b",\"serverVersion\":", entry.server_version),
            (b",\"invocationReason\":", entry.invocation_reason),
            (b",\"userIntent\":", entry.user_intent),
        ];
        for (key, value) in optional {
            if let Some(value) = value {
                line.extend_from_slice(key);
                write_str(line, value);
            }
        }
        if let Some(redacted) = entry.user_intent_redacted {
            line.extend_from_slice(if redacted {
                b",\"userIntentRedacted\":true"
            } else {
                b",\"userIntentRedacted\":false"
            });
        }
        if let Some(inferred) = entry.inferred_intent {
            line.extend_from_slice(b",\"inferredIntent\":");
            write_str(line, inferred);
        }
        // The encoded event is spliced in as it is: the log holds the bytes the wire got.
        if let Some(event) = entry.event.filter(|e| e.first() == Some(&b'{') && e.last() == Some(&b'}')) {
            line.extend_from_slice(b",\"event\":");
            line.extend_from_slice(event);
        }
        line.push(b'}');
        let line = std::mem::take(&mut self.line);
        self.push(&line);
        self.line = line;
    }

    /// Adds a request of another method.
    pub fn method(&mut self, entry: &MethodEntry<'_>) {
        let line = MethodLine {
            v: FORMAT_VERSION,
            kind: KIND_METHOD,
            ts: entry.timestamp_ms,
            method: entry.method,
            target: entry.target.map(|t| t.char_indices().nth(MAX_TARGET).map_or(t, |(end, _)| &t[..end])),
            is_error: entry.is_error,
            duration_ms: entry.duration_ms,
            session: entry.session,
            conversation: entry.conversation,
            model: entry.model,
            client: entry.client,
            server_version: entry.server_version,
        };
        match serde_json::to_vec(&line) {
            Ok(bytes) => self.push(&bytes),
            Err(_) => self.lost += 1,
        }
    }

    /// Adds the tool list if it differs from the last one added (by name and descriptor hash);
    /// returns whether it did. Later calls without a hash of their own take it from this list.
    pub fn tools(&mut self, entry: &ToolsEntry<'_>) -> bool {
        let tools: Vec<ToolLine<'_>> = entry
            .tools
            .iter()
            .filter_map(|t| {
                Some(ToolLine {
                    name: t.get("name")?.as_str()?,
                    hash: descriptor_hash(t),
                    title: t.get("title").and_then(Value::as_str),
                    description: t.get("description").and_then(Value::as_str),
                })
            })
            .collect();
        let hashes: BTreeMap<String, String> = tools.iter().map(|t| (t.name.to_owned(), t.hash.clone())).collect();
        if self.tools_line.is_some() && hashes == self.tool_hashes {
            return false;
        }
        let line = ToolsLine {
            v: FORMAT_VERSION,
            kind: KIND_TOOLS,
            ts: entry.timestamp_ms,
            server_version: entry.server_version,
            tools,
        };
        let Ok(mut bytes) = serde_json::to_vec(&line) else {
            self.lost += 1;
            return false;
        };
        self.push(&bytes);
        bytes.push(b'\n');
        self.tool_hashes = hashes;
        self.tools_line = Some(bytes);
        true
    }

    /// Adds `line` and its `\n` to the lines waiting for the next commit.
    fn push(&mut self, line: &[u8]) {
        let size = (self.pending.len() + line.len() + 1) as u64;
        let held = self.file.as_ref().map_or(0, |(_, _, len)| *len);
        // A file is rotated between two commits, so commit what would take it past its share.
        if !self.pending.is_empty() && held + size > self.file_max {
            self.commit();
            if self.file.as_ref().is_some_and(|(_, _, len)| *len + line.len() as u64 + 1 > self.file_max) {
                self.file = None;
            }
        }
        self.pending.extend_from_slice(line);
        self.pending.push(b'\n');
        self.pending_records += 1;
        if self.pending.len() >= COMMIT_AT {
            self.commit();
        }
    }

    /// Writes the lines added since the last commit, in one write; then, if the file holds its
    /// share of the bound, starts the next and removes the oldest files beyond the bound. On an
    /// error the lines are dropped (counted) and the next commit starts a new file.
    pub fn commit(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let records = std::mem::take(&mut self.pending_records);
        let mut lines = std::mem::take(&mut self.pending);
        if self.write(&lines).is_err() {
            self.failures += 1;
            self.lost += records;
            self.file = None;
        } else {
            self.written += records;
        }
        self.head_tools.clone_from(&self.tools_line);
        lines.clear();
        self.pending = lines;
    }

    fn write(&mut self, lines: &[u8]) -> io::Result<()> {
        let full = self.file.as_ref().is_some_and(|(_, _, len)| *len > 0 && *len + lines.len() as u64 > self.file_max);
        if full || self.file.is_none() {
            self.rotate()?;
        }
        let (file, _, len) = self.file.as_mut().ok_or_else(|| io::Error::other("no file"))?;
        file.write_all(lines)?;
        *len += lines.len() as u64;
        Ok(())
    }

    /// Opens a new file with the header and the current tool list, then removes the oldest.
    fn rotate(&mut self) -> io::Result<()> {
        self.file = None;
        let now =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
        let name = format!("{PREFIX}{now:013}-{}-{}{EXTENSION}", std::process::id(), self.opened);
        self.opened += 1;
        let path = self.dir.join(name);
        let mut file = OpenOptions::new().create_new(true).append(true).open(&path)?;
        let header = Header {
            v: FORMAT_VERSION,
            kind: KIND_LOG,
            ts: now,
            writer: concat!("mcpeye-rs/", env!("CARGO_PKG_VERSION")),
            pid: std::process::id(),
        };
        let mut head = serde_json::to_vec(&header).map_err(io::Error::other)?;
        head.push(b'\n');
        if let Some(tools) = &self.head_tools {
            head.extend_from_slice(tools);
        }
        file.write_all(&head)?;
        self.file = Some((file, path.clone(), head.len() as u64));
        self.prune(&path);
        Ok(())
    }

    /// Removes the oldest files of the directory (never `current`) until the others, with room
    /// for a full current file, fit in the bound. A file that cannot be removed counts a failure.
    fn prune(&mut self, current: &Path) {
        let Ok(entries) = fs::read_dir(&self.dir) else {
            self.failures += 1;
            return;
        };
        let mut files: Vec<(String, u64)> = entries
            .filter_map(Result::ok)
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                (name.starts_with(PREFIX) && name.ends_with(EXTENSION) && e.path() != current)
                    .then(|| Some((name, e.metadata().ok()?.len())))
                    .flatten()
            })
            .collect();
        files.sort();
        let mut total: u64 = files.iter().map(|(_, len)| len).sum();
        let room = self.max_bytes.saturating_sub(self.file_max);
        for (name, len) in files {
            if total <= room {
                break;
            }
            match fs::remove_file(self.dir.join(&name)) {
                Ok(()) => total -= len,
                Err(e) if e.kind() == io::ErrorKind::NotFound => total -= len,
                Err(_) => self.failures += 1,
            }
        }
    }

    /// Counts `n` records lost before they reached the log (notes dropped on the way).
    pub(crate) fn count_lost(&mut self, n: u64) {
        self.lost += n;
    }

    /// Records written to disk.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Records lost to an I/O error (or that could not be encoded).
    pub fn lost(&self) -> u64 {
        self.lost
    }

    /// I/O errors met (a write, a directory listing, a removal).
    pub fn failures(&self) -> u64 {
        self.failures
    }

    /// The directory written.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file being written, once one is open.
    #[cfg(test)]
    pub fn current_file(&self) -> Option<&Path> {
        self.file.as_ref().map(|(_, path, _)| path.as_path())
    }
}

impl Drop for EventLog {
    fn drop(&mut self) {
        self.commit();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("mcpeye-event-log-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        dir
    }

    fn lines_of(dir: &Path) -> Vec<(String, Vec<Value>)> {
        let mut files: Vec<PathBuf> = fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
        files.sort();
        files
            .into_iter()
            .map(|p| {
                let text = fs::read_to_string(&p).unwrap();
                let lines = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
                (p.file_name().unwrap().to_string_lossy().into_owned(), lines)
            })
            .collect()
    }

    fn tool(name: &str, description: &str) -> Value {
        json!({"name": name, "description": description, "inputSchema": {"type": "object"}})
    }

    #[test]
    fn records_are_lines_with_a_kind_and_the_wire_event_as_sent() {
        let dir = temp_dir("records");
        let mut log = EventLog::open(&dir, 1 << 20).unwrap();
        let tools = [tool("search", "Search products."), tool("order", "Order.")];
        assert!(log.tools(&ToolsEntry { timestamp_ms: 1, server_version: Some("1.0"), tools: &tools }));
        // The same list again is not written again.
        assert!(!log.tools(&ToolsEntry { timestamp_ms: 2, server_version: Some("1.0"), tools: &tools }));
        let event = br#"{"callId":"c1","toolName":"search","arguments":{"q":"[REDACTED_EMAIL]"},"isError":false}"#;
        log.call(&CallEntry {
            call_id: "c1",
            tool: "search",
            timestamp_ms: 3,
            event: Some(event),
            session: Some("s1"),
            model: Some("gpt-5"),
            server_version: Some("1.0"),
            ..CallEntry::default()
        });
        log.method(&MethodEntry {
            method: "resources/read",
            timestamp_ms: 4,
            target: Some("docs://guide"),
            is_error: true,
            ..MethodEntry::default()
        });
        log.commit();
        assert_eq!((log.written(), log.lost(), log.failures()), (3, 0, 0));
        let files = lines_of(&dir);
        assert_eq!(files.len(), 1);
        assert!(files[0].0.starts_with("events-") && files[0].0.ends_with(".jsonl"), "{}", files[0].0);
        let lines = &files[0].1;
        let kinds: Vec<&str> = lines.iter().map(|l| l["kind"].as_str().unwrap()).collect();
        assert_eq!(kinds, ["log", "tools", "call", "method"]);
        assert!(lines.iter().all(|l| l["v"] == FORMAT_VERSION));
        assert_eq!(lines[1]["tools"][0]["hash"], descriptor_hash(&tools[0]));
        assert_eq!(lines[1]["tools"][1]["description"], "Order.");
        let call = &lines[2];
        assert_eq!(call["event"]["arguments"]["q"], "[REDACTED_EMAIL]");
        // The call's hash comes from the tool list when the entry gives none.
        assert_eq!(call["toolHash"], descriptor_hash(&tools[0]));
        assert_eq!((call["session"].as_str(), call["model"].as_str()), (Some("s1"), Some("gpt-5")));
        assert!(call.get("turn").is_none(), "absent keys are left out: {call}");
        assert_eq!((lines[3]["target"].as_str(), lines[3]["isError"].as_bool()), (Some("docs://guide"), Some(true)));
        // A changed description is a new list, with a new hash.
        let changed = [tool("search", "Search the catalogue by free text."), tool("order", "Order.")];
        assert!(log.tools(&ToolsEntry { timestamp_ms: 5, server_version: Some("1.1"), tools: &changed }));
        drop(log);
        let lines = &lines_of(&dir)[0].1;
        assert_ne!(lines[4]["tools"][0]["hash"], lines[1]["tools"][0]["hash"]);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn files_rotate_within_the_bound_and_each_starts_with_the_tools() {
        let dir = temp_dir("rotate");
        let max = 8 * 1024;
        let mut log = EventLog::open(&dir, max).unwrap();
        let tools = [tool("search", "Search products.")];
        log.tools(&ToolsEntry { timestamp_ms: 1, server_version: None, tools: &tools });
        let event = format!(r#"{{"callId":"x","toolName":"search","arguments":{{"pad":"{}"}}}}"#, "p".repeat(200));
        for i in 0..400u64 {
            let id = format!("c{i}");
            log.call(&CallEntry {
                call_id: &id,
                tool: "search",
                timestamp_ms: i,
                event: Some(event.as_bytes()),
                ..Default::default()
            });
            if i % 7 == 0 {
                log.commit();
            }
        }
        log.commit();
        assert_eq!((log.written(), log.lost(), log.failures()), (401, 0, 0));
        let files = lines_of(&dir);
        assert!(files.len() > 1, "rotated");
        let total: u64 = fs::read_dir(&dir).unwrap().map(|e| e.unwrap().metadata().unwrap().len()).sum();
        assert!(total <= max, "{total} bytes kept, bound {max}");
        for (name, lines) in &files {
            assert_eq!(lines[0]["kind"], "log", "{name}");
            assert_eq!(lines[1]["kind"], "tools", "{name}");
        }
        // The newest calls are kept, the oldest removed.
        let last = &files.last().unwrap().1;
        assert_eq!(last.last().unwrap()["callId"], "c399");
        assert!(files.iter().all(|(_, l)| l.iter().all(|r| r["callId"] != "c0")));
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_unwritable_directory_counts_its_losses_and_never_panics() {
        let dir = temp_dir("gone");
        let mut log = EventLog::open(&dir, 1 << 20).unwrap();
        fs::remove_dir_all(&dir).unwrap();
        // A file where the directory was: nothing can be created in it.
        fs::write(&dir, b"not a directory").unwrap();
        log.call(&CallEntry { call_id: "a", tool: "t", timestamp_ms: 1, ..Default::default() });
        log.call(&CallEntry { call_id: "b", tool: "t", timestamp_ms: 2, ..Default::default() });
        log.commit();
        assert_eq!((log.written(), log.lost(), log.failures()), (0, 2, 1));
        // Once the directory is back, the next commit opens a new file there.
        fs::remove_file(&dir).unwrap();
        fs::create_dir_all(&dir).unwrap();
        log.call(&CallEntry { call_id: "c", tool: "t", timestamp_ms: 3, ..Default::default() });
        log.commit();
        assert_eq!(log.written(), 1);
        assert!(log.current_file().is_some_and(Path::exists));
        drop(log);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_call_line_is_json_with_its_texts_escaped_and_absent_keys_left_out() {
        let dir = temp_dir("escapes");
        let mut log = EventLog::open(&dir, 1 << 20).unwrap();
        log.call(&CallEntry {
            call_id: "c1",
            tool: "search",
            timestamp_ms: 7,
            model: Some("gpt \"5\"\n"),
            turn: Some("tour é"),
            user_intent: Some("a\tb\\c"),
            user_intent_redacted: Some(true),
            ..CallEntry::default()
        });
        log.call(&CallEntry { call_id: "c2", tool: "search", timestamp_ms: 8, ..CallEntry::default() });
        drop(log);
        let lines = &lines_of(&dir)[0].1;
        assert_eq!(
            lines[1],
            json!({"v": 1, "kind": "call", "ts": 7, "callId": "c1", "tool": "search", "turn": "tour é",
                   "model": "gpt \"5\"\n", "userIntent": "a\tb\\c", "userIntentRedacted": true})
        );
        assert_eq!(lines[2], json!({"v": 1, "kind": "call", "ts": 8, "callId": "c2", "tool": "search"}));
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn notes_past_their_bound_are_dropped_and_counted() {
        let notes = Notes::new(true);
        let note = || Note::Tools { timestamp_ms: 1, tools: json!([]) };
        for _ in 0..MAX_NOTES + 3 {
            notes.push(note());
        }
        let (taken, dropped) = notes.take();
        assert_eq!((taken.len(), dropped), (MAX_NOTES, 3));
        notes.push(note());
        assert_eq!((notes.take().0.len(), notes.take().1), (1, 0));
    }

    #[test]
    fn a_method_target_is_cut_like_an_identity_value() {
        let dir = temp_dir("target");
        let mut log = EventLog::open(&dir, 1 << 20).unwrap();
        let long = "é".repeat(300);
        log.method(&MethodEntry { method: "prompts/get", target: Some(&long), ..MethodEntry::default() });
        drop(log);
        let lines = &lines_of(&dir)[0].1;
        assert_eq!(lines[1]["target"].as_str().map(|t| t.chars().count()), Some(256));
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_event_that_is_not_an_object_is_left_out_not_spliced() {
        let dir = temp_dir("splice");
        let mut log = EventLog::open(&dir, 1 << 20).unwrap();
        log.call(&CallEntry { call_id: "a", tool: "t", timestamp_ms: 1, event: Some(b"[1]"), ..Default::default() });
        drop(log);
        let lines = &lines_of(&dir)[0].1;
        assert!(lines[1].get("event").is_none());
        fs::remove_dir_all(&dir).unwrap();
    }
}
