//! [`ReportInput`]: event logs (`docs/event-log.md`) and ingest payload files, read as streams
//! in one pass. Lines are parsed on every core (chunks of lines go to a rayon pool, the way
//! ripgrep's searcher hands out buffers) and folded in the order they were read, so the report
//! is the same whatever the number of threads.

use crate::fold::{fingerprint, Fold};
use crate::summary::Report;
use crate::wire::{Elem, Field, Obj, Str};
use mcpeye_runtime::contract::RESERVED_TOOL_NAME;
use mcpeye_runtime::report::{FORMAT_VERSION, KIND_CALL, KIND_LOG, KIND_METHOD, KIND_TOOLS};
use serde::de::{self, Deserialize, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use std::borrow::Cow;
use std::cell::Cell;
use std::collections::BTreeMap;
use std::fmt;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::{mpsc, Arc};

/// The longest line read by default (64 MiB); a longer one is skipped and counted, so that a
/// file without line breaks cannot grow memory without bound
/// ([`ReportInput::max_line_bytes`] changes it).
///
/// ```
/// assert_eq!(mcpeye_report::MAX_LINE_BYTES, 64 * 1024 * 1024);
/// ```
pub const MAX_LINE_BYTES: usize = 64 << 20;
/// Lines handed to a parsing thread at a time, in bytes.
const CHUNK_BYTES: usize = 1 << 20;
/// Calls whose table slots are read ahead at a time (`Fold::warm`): enough for their cache
/// misses to overlap, few enough for the lines read to stay in the cache until folded.
const WARM: usize = 64;
/// Items of a value-mode source folded at a time.
const CHUNK_ITEMS: usize = 4096;
/// The first and last instants a timestamp may name: 2000-01-01 and 2100-01-01 (epoch ms).
const TS_RANGE: std::ops::Range<u64> = 946_684_800_000..4_102_444_800_000;

/// Why a line (or a value in an array) was skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Reason {
    NotUtf8,
    NotJson,
    TooLong,
    NotAnEvent,
    EmptyTool,
    BadDuration,
    BadIsError,
    BadTimestamp,
    BadInferredIntent,
}

impl Reason {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Reason::NotUtf8 => "not UTF-8",
            Reason::NotJson => "not JSON",
            Reason::TooLong => "line too long",
            Reason::NotAnEvent => "not a payload, an event or a known event log line",
            Reason::EmptyTool => "empty tool name",
            Reason::BadDuration => "durationMs not a non-negative integer",
            Reason::BadIsError => "isError not a boolean",
            Reason::BadTimestamp => "timestamp not an integer within 2000-2100",
            Reason::BadInferredIntent => "inferredIntent not a string",
        }
    }
}

/// Where a string of a call is in its chunk's `text` (bytes from, length).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Span(usize, usize);

/// One tool call, from a log's `call` line or a payload's event. Its strings are in the text of
/// the chunk it was parsed in (one buffer a chunk, not an allocation a string): [`Call::view`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Call {
    /// The `callId`'s fingerprint (`fold::fingerprint`), for counting a call seen twice once.
    pub call_id: Option<u64>,
    pub tool: Span,
    pub ts: u64,
    pub duration_ms: u64,
    pub is_error: bool,
    pub error: Option<Span>,
    pub intent: Option<Span>,
    /// Bytes of the `result`'s compact JSON, when it has one.
    pub result_bytes: Option<u64>,
    /// A capability request's `capability` and `context`.
    pub capability: Option<Span>,
    pub context: Option<Span>,
    /// The feedback tool's `category`, `text` and `task_completed` (`findings::FEEDBACK_TOOL`).
    pub feedback: Option<Span>,
    pub feedback_text: Option<Span>,
    pub task_completed: Option<bool>,
    /// The log line's `inferredIntent`, when the call has no intent of its own.
    pub inferred_intent: Option<Span>,
    pub session: Option<Span>,
    pub conversation: Option<Span>,
    pub turn: Option<Span>,
    /// The turn's fingerprint, for counting turns by 8 bytes each.
    pub turn_id: Option<u64>,
    pub model: Option<Span>,
    pub client: Option<Span>,
    pub user: Option<Span>,
    pub server_version: Option<Span>,
    pub tool_hash: Option<Span>,
}

impl Call {
    /// The call with its strings, out of its chunk's `text`.
    pub fn view<'a>(&self, text: &'a str) -> CallView<'a> {
        let s = |span: Span| &text[span.0..span.0 + span.1];
        let o = |span: Option<Span>| span.map(s);
        CallView {
            call_id: self.call_id,
            tool: s(self.tool),
            ts: self.ts,
            duration_ms: self.duration_ms,
            is_error: self.is_error,
            error: o(self.error),
            intent: o(self.intent),
            result_bytes: self.result_bytes,
            capability: o(self.capability),
            context: o(self.context),
            feedback: o(self.feedback),
            feedback_text: o(self.feedback_text),
            task_completed: self.task_completed,
            inferred_intent: o(self.inferred_intent),
            session: o(self.session),
            conversation: o(self.conversation),
            turn: o(self.turn),
            turn_id: self.turn_id,
            model: o(self.model),
            client: o(self.client),
            user: o(self.user),
            server_version: o(self.server_version),
            tool_hash: o(self.tool_hash),
        }
    }
}

/// A [`Call`] with its strings.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CallView<'a> {
    pub call_id: Option<u64>,
    pub tool: &'a str,
    pub ts: u64,
    pub duration_ms: u64,
    pub is_error: bool,
    pub error: Option<&'a str>,
    pub intent: Option<&'a str>,
    pub result_bytes: Option<u64>,
    pub capability: Option<&'a str>,
    pub context: Option<&'a str>,
    pub feedback: Option<&'a str>,
    pub feedback_text: Option<&'a str>,
    pub task_completed: Option<bool>,
    pub inferred_intent: Option<&'a str>,
    pub session: Option<&'a str>,
    pub conversation: Option<&'a str>,
    pub turn: Option<&'a str>,
    pub turn_id: Option<u64>,
    pub model: Option<&'a str>,
    pub client: Option<&'a str>,
    pub user: Option<&'a str>,
    pub server_version: Option<&'a str>,
    pub tool_hash: Option<&'a str>,
}

impl CallView<'_> {
    /// The conversation the call belongs to, for paths: the conversation handle, else the
    /// session, else the turn.
    pub fn thread(&self) -> Option<&str> {
        self.conversation.or(self.session).or(self.turn)
    }

    /// A call of a tool the server does not have (docs/wire-format.md#errors).
    pub fn is_unknown_tool(&self) -> bool {
        self.is_error && self.error.is_some_and(|e| e.starts_with("unknown tool `"))
    }
}

/// One tool in a tool list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ListedTool {
    pub name: String,
    pub hash: String,
    pub description: Option<String>,
}

/// What a line or value is, once parsed.
// Nearly every item is a call: boxed, it would be an allocation a call.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Item {
    Call(Call),
    Method,
    Tools(Vec<ListedTool>),
    Skip(Reason, u64),
}

/// The items of consecutive lines of one source, in order.
#[derive(Default)]
struct Chunk {
    source: Arc<str>,
    items: Vec<Item>,
    /// The strings of the calls in `items`.
    text: String,
    log_lines: usize,
    payload_events: usize,
    /// A file that could not be read to its end, after these items.
    unread: Option<String>,
}

impl Chunk {
    fn new(source: &Arc<str>) -> Self {
        Chunk { source: source.clone(), ..Chunk::default() }
    }
}

/// Where the calls come from.
#[derive(Debug, Clone)]
enum Source {
    /// A file, or a directory standing for its `*.jsonl` files.
    Path(PathBuf),
    Text(String),
    Values(Vec<Value>),
}

/// What a report is made of: event logs and ingest payload files, named with
/// [`read_path`](Self::read_path) (or given as text with [`read_str`](Self::read_str), as values
/// with [`add_value`](Self::add_value)). Nothing is read until [`report`](Self::report), which
/// reads every source once, as a stream: memory grows with what is distinct in the input
/// (tools, versions, conversations, wordings), not with its calls.
///
/// Event logs are read before the other sources, so that a call found both in a log and in a
/// payload file is taken from the log, which knows its session and model.
///
/// ```
/// use mcpeye_report::ReportInput;
/// let mut input = ReportInput::new();
/// // A payload as any mcpeye SDK POSTs it…
/// input.read_str(r#"{"projectId":"p","identity":{"serverVersion":"1.0"},"events":[
///     {"callId":"a","toolName":"search","arguments":{},"isError":false,"timestamp":1764576000001,"durationMs":5}]}"#);
/// // …and event log lines, which know the session and the model.
/// input.read_str(r#"{"v":1,"kind":"call","ts":1764576000002,"callId":"b","tool":"order","session":"s1","model":"gpt-5",
///     "event":{"callId":"b","toolName":"order","arguments":{},"isError":true,"errorMessage":"out of stock","timestamp":1764576000002,"durationMs":9}}"#);
/// let report = input.report();
/// assert_eq!((report.overview.calls, report.overview.errors), (2, 1));
/// ```
#[derive(Debug, Clone, Default)]
pub struct ReportInput {
    sources: Vec<Source>,
    threads: Option<usize>,
    max_line: Option<usize>,
}

impl ReportInput {
    /// An empty input.
    ///
    /// ```
    /// let input = mcpeye_report::ReportInput::new();
    /// assert_eq!(input.calls(), 0);
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a file (an event log or a payload file) or a directory, which stands for its
    /// `*.jsonl` files in name order. It is read by [`report`](Self::report); a file that cannot
    /// be read then (missing, a directory named `*.jsonl`, a FIFO or a device) is skipped and
    /// named in the report's [`input`](crate::Report::input) section.
    ///
    /// ```
    /// let dir = std::env::temp_dir().join(format!("mcpeye-read-path-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir).unwrap();
    /// std::fs::write(dir.join("a.jsonl"), r#"{"callId":"a","toolName":"search","isError":false}"#).unwrap();
    /// let mut input = mcpeye_report::ReportInput::new();
    /// input.read_path(&dir).read_path(dir.join("missing.jsonl"));
    /// let report = input.report();
    /// assert_eq!(report.overview.calls, 1);
    /// assert!(report.input.unread_files[0].contains("missing.jsonl"));
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// ```
    pub fn read_path(&mut self, path: impl AsRef<Path>) -> &mut Self {
        self.sources.push(Source::Path(path.as_ref().to_owned()));
        self
    }

    /// Adds a file's text: JSON Lines (event log lines, payloads, bare events), or JSON values
    /// one after the other (a JSON array of payloads, pretty-printed or not). Lines that are
    /// none of these are counted as skipped, by reason.
    ///
    /// ```
    /// let mut input = mcpeye_report::ReportInput::new();
    /// input.read_str(r#"[{"projectId":"p","identity":{},"events":[{"callId":"a","toolName":"search","isError":false}]}]"#);
    /// input.read_str("{\"callId\":\"b\",\"toolName\":\"order\",\"isError\":false}\nnot json");
    /// assert_eq!(input.calls(), 2);
    /// ```
    pub fn read_str(&mut self, text: &str) -> &mut Self {
        self.sources.push(Source::Text(text.to_owned()));
        self
    }

    /// Adds one value: a payload, an array of payloads or events, an event log line, or a
    /// bare event. Anything else is counted as skipped.
    ///
    /// ```
    /// let mut input = mcpeye_report::ReportInput::new();
    /// input.add_value(&serde_json::json!({"callId": "a", "toolName": "search", "isError": false}));
    /// assert_eq!(input.calls(), 1);
    /// ```
    pub fn add_value(&mut self, value: &Value) -> &mut Self {
        match self.sources.last_mut() {
            Some(Source::Values(values)) => values.push(value.clone()),
            _ => self.sources.push(Source::Values(vec![value.clone()])),
        }
        self
    }

    /// The threads that parse (by default, one per core); with 1, everything runs on the
    /// calling thread. The report is the same whatever the number.
    ///
    /// ```
    /// let mut input = mcpeye_report::ReportInput::new();
    /// input.read_str(r#"{"callId":"a","toolName":"search","isError":false}"#);
    /// assert_eq!(input.threads(1).report(), input.threads(4).report());
    /// ```
    pub fn threads(&mut self, threads: usize) -> &mut Self {
        self.threads = Some(threads.max(1));
        self
    }

    /// The longest line read, in bytes ([`MAX_LINE_BYTES`] by default); a longer line is
    /// skipped and counted, without being held.
    ///
    /// ```
    /// let mut input = mcpeye_report::ReportInput::new();
    /// input.read_str(&format!("{{\"toolName\":\"{}\"}}\n", "x".repeat(100))).max_line_bytes(64);
    /// assert_eq!(input.report().input.skipped["line too long"], 1);
    /// ```
    pub fn max_line_bytes(&mut self, bytes: usize) -> &mut Self {
        self.max_line = Some(bytes.max(1));
        self
    }

    /// How many distinct calls the sources hold (reads them all, like [`report`](Self::report)).
    ///
    /// ```
    /// // A payload sent twice (delivery is at least once) counts its call once.
    /// let payload = r#"{"projectId":"p","identity":{},"events":[{"callId":"a","toolName":"search","isError":false}]}"#;
    /// let mut input = mcpeye_report::ReportInput::new();
    /// input.read_str(payload).read_str(payload);
    /// assert_eq!(input.calls(), 1);
    /// ```
    pub fn calls(&self) -> usize {
        self.report().overview.calls
    }

    /// The report of the sources, read in one pass.
    ///
    /// ```
    /// let mut input = mcpeye_report::ReportInput::new();
    /// input.read_str(r#"{"callId":"a","toolName":"search","isError":true,"errorMessage":"timeout"}"#);
    /// let report = input.report();
    /// assert_eq!((report.overview.calls, report.overview.errors), (1, 1));
    /// ```
    pub fn report(&self) -> Report {
        self.report_with_progress(|_| {})
    }

    /// [`report`](Self::report), calling `progress` with the bytes of files read so far as it
    /// reads them (for a progress bar; [`total_bytes`](Self::total_bytes) is the end).
    ///
    /// ```
    /// let mut input = mcpeye_report::ReportInput::new();
    /// input.read_str(r#"{"callId":"a","toolName":"search","isError":false}"#);
    /// let mut read = 0;
    /// input.report_with_progress(|bytes| read = bytes);
    /// assert_eq!(read, input.total_bytes());
    /// ```
    pub fn report_with_progress(&self, mut progress: impl FnMut(u64)) -> Report {
        let threads = self.threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
        let pool = (threads > 1).then(|| rayon::ThreadPoolBuilder::new().num_threads(threads).build().ok()).flatten();
        let mut pass = Pass::new(pool.as_ref(), threads, &mut progress);
        pass.max_line = self.max_line.unwrap_or(MAX_LINE_BYTES);
        let (sources, unread) = self.expand();
        for what in unread {
            pass.fold.unread(what);
        }
        for source in &sources {
            pass.read(source);
        }
        let fold = pass.finish();
        // The grouping after the pass runs on the pool too.
        match &pool {
            Some(pool) => pool.install(|| fold.finish()),
            None => fold.finish(),
        }
    }

    /// The bytes of the files and texts to read, for a progress bar.
    ///
    /// ```
    /// let mut input = mcpeye_report::ReportInput::new();
    /// input.read_str("{}\n");
    /// assert_eq!(input.total_bytes(), 3);
    /// ```
    pub fn total_bytes(&self) -> u64 {
        self.expand()
            .0
            .iter()
            .map(|s| match s {
                Source::Path(p) => std::fs::metadata(p).map_or(0, |m| if m.is_file() { m.len() } else { 0 }),
                Source::Text(t) => t.len() as u64,
                Source::Values(_) => 0,
            })
            .sum()
    }

    /// The sources with directories expanded, event logs first; and the directories that could
    /// not be listed.
    fn expand(&self) -> (Vec<Source>, Vec<String>) {
        let mut sources = Vec::new();
        let mut unread = Vec::new();
        for s in &self.sources {
            match s {
                Source::Path(p) if p.is_dir() => match std::fs::read_dir(p) {
                    Ok(entries) => {
                        let mut inside: Vec<PathBuf> = entries
                            .filter_map(Result::ok)
                            .map(|e| e.path())
                            .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
                            .collect();
                        inside.sort();
                        sources.extend(inside.into_iter().map(Source::Path));
                    }
                    Err(e) => unread.push(format!("{}: cannot list the directory: {e}", p.display())),
                },
                other => sources.push(other.clone()),
            }
        }
        // Stable: within each kind, the order given; each file is opened once to tell its kind.
        sources.sort_by_cached_key(|s| !is_event_log(s));
        (sources, unread)
    }
}

/// Whether a source starts like an event log (its first line is the `log` line).
fn is_event_log(source: &Source) -> bool {
    let head = |bytes: &[u8]| {
        let text = String::from_utf8_lossy(&bytes[..bytes.len().min(256)]).into_owned();
        let first = text.trim_start_matches('\u{feff}').trim_start();
        first.starts_with('{') && first.lines().next().is_some_and(|l| l.contains("\"kind\""))
    };
    match source {
        Source::Path(p) => {
            // Only regular files are opened: a FIFO would block, a device never end.
            if !std::fs::metadata(p).is_ok_and(|m| m.is_file()) {
                return false;
            }
            let mut buf = [0u8; 256];
            std::fs::File::open(p).and_then(|mut f| f.read(&mut buf)).is_ok_and(|n| head(&buf[..n]))
        }
        Source::Text(t) => head(t.as_bytes()),
        Source::Values(v) => v.first().is_some_and(|v| v.get("kind").is_some()),
    }
}

/// The pass: chunks of lines parsed on the pool, folded in the order they were read.
struct Pass<'a> {
    pool: Option<&'a rayon::ThreadPool>,
    in_flight: usize,
    tx: mpsc::Sender<(u64, Chunk)>,
    rx: mpsc::Receiver<(u64, Chunk)>,
    sent: u64,
    folded: u64,
    done: BTreeMap<u64, Chunk>,
    fold: Fold,
    bytes: u64,
    progress: &'a mut dyn FnMut(u64),
    max_line: usize,
}

impl<'a> Pass<'a> {
    fn new(pool: Option<&'a rayon::ThreadPool>, threads: usize, progress: &'a mut dyn FnMut(u64)) -> Self {
        let (tx, rx) = mpsc::channel();
        Pass {
            pool,
            // Enough to keep every thread busy while the calling thread reads and folds.
            in_flight: 2 * threads,
            tx,
            rx,
            sent: 0,
            folded: 0,
            done: BTreeMap::new(),
            fold: Fold::default(),
            bytes: 0,
            progress,
            max_line: MAX_LINE_BYTES,
        }
    }

    fn read(&mut self, source: &Source) {
        match source {
            Source::Path(path) => {
                let name: Arc<str> = path.display().to_string().into();
                match std::fs::metadata(path) {
                    Err(e) => return self.fold.unread(format!("{name}: cannot read: {e}")),
                    Ok(m) if m.is_dir() => return self.fold.unread(format!("{name}: a directory, not a file")),
                    Ok(m) if !m.is_file() => {
                        return self.fold.unread(format!("{name}: not a regular file (a FIFO, socket or device)"))
                    }
                    Ok(_) => {}
                }
                let open = || std::fs::File::open(path).map(|f| BufReader::with_capacity(256 << 10, f));
                match open() {
                    Ok(reader) => self.read_stream(&name, reader, || open().map(|r| Box::new(r) as Box<dyn BufRead>)),
                    Err(e) => self.fold.unread(format!("{name}: cannot read: {e}")),
                }
            }
            Source::Text(text) => {
                let name: Arc<str> = "text".into();
                self.read_stream(&name, text.as_bytes(), || Ok(Box::new(text.as_bytes()) as Box<dyn BufRead>));
            }
            Source::Values(values) => {
                let name: Arc<str> = "value".into();
                let mut chunk = Chunk::new(&name);
                for (i, v) in values.iter().enumerate() {
                    parse_value(v, i as u64 + 1, &mut chunk);
                }
                self.ready(chunk);
            }
        }
    }

    /// A source's bytes: JSON Lines, or JSON values one after the other (an array read element
    /// by element). `reopen` reads it again from the start, to go on line by line after a
    /// value that is not JSON.
    fn read_stream<'s>(
        &mut self,
        name: &Arc<str>,
        mut reader: impl BufRead + 's,
        reopen: impl Fn() -> io::Result<Box<dyn BufRead + 's>>,
    ) {
        if let Err(e) = skip_bom(&mut reader) {
            return self.fold.unread(format!("{name}: cannot read: {e}"));
        }
        // The first line tells JSON Lines from values spread over lines.
        let mut first = Vec::new();
        let mode = match peek_first_line(&mut reader, &mut first, self.max_line) {
            Ok(mode) => mode,
            Err(e) => return self.fold.unread(format!("{name}: cannot read: {e}")),
        };
        if let First::TooLong(line) = mode {
            let mut chunk = Chunk::new(name);
            chunk.items.push(Item::Skip(Reason::TooLong, line));
            self.ready(chunk);
            if let Ok(n) = reader.skip_until(b'\n') {
                self.advance((self.max_line + n) as u64);
            }
            return self.read_lines(name, reader, line, Vec::new(), false);
        }
        if mode == First::Values {
            let resume = self.read_values(name, first.as_slice().chain(reader));
            if let Some(after) = resume {
                match reopen() {
                    Ok(mut again) => {
                        let _ = skip_bom(&mut again);
                        self.read_lines(name, again, after, Vec::new(), true);
                    }
                    Err(e) => self.fold.unread(format!("{name}: cannot read again: {e}")),
                }
            }
        } else {
            self.read_lines(name, reader, 0, first, false);
        }
    }

    /// Lines from `reader`, the first `skip` left out when `skip_them` (else already passed);
    /// `pending` is whole lines already read.
    fn read_lines(&mut self, name: &Arc<str>, mut reader: impl BufRead, skip: u64, pending: Vec<u8>, skip_them: bool) {
        let mut buf = pending;
        let mut line = 1 + skip;
        let mut first_line = line;
        self.advance(buf.len() as u64);
        line += buf.iter().filter(|&&b| b == b'\n').count() as u64;
        let mut skipped = if skip_them { 0 } else { skip };
        while skipped < skip {
            match reader.skip_until(b'\n') {
                Ok(0) => break,
                Ok(n) => {
                    self.advance(n as u64);
                    skipped += 1
                }
                Err(e) => return self.fold.unread(format!("{name}: cannot read after line {skipped}: {e}")),
            }
        }
        loop {
            let start = buf.len();
            let read = (&mut reader).take(self.max_line as u64 + 1).read_until(b'\n', &mut buf);
            match read {
                Ok(0) => break,
                Ok(n) => {
                    self.advance(n as u64);
                    let ended = buf.last() == Some(&b'\n');
                    if !ended && buf.len() - start > self.max_line {
                        // Too long: what was read goes, the rest of the line is passed over.
                        buf.truncate(start);
                        let lines = std::mem::take(&mut buf);
                        self.submit(name, first_line, lines);
                        let mut chunk = Chunk::new(name);
                        chunk.items.push(Item::Skip(Reason::TooLong, line));
                        self.ready(chunk);
                        if let Ok(n) = reader.skip_until(b'\n') {
                            self.advance(n as u64);
                        }
                        line += 1;
                        first_line = line;
                        continue;
                    }
                    line += 1;
                    if buf.len() >= CHUNK_BYTES {
                        // The next chunk's buffer at its size at once, not grown line by line.
                        let lines = std::mem::replace(&mut buf, Vec::with_capacity(CHUNK_BYTES + (16 << 10)));
                        self.submit(name, first_line, lines);
                        first_line = line;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    let lines = std::mem::take(&mut buf);
                    self.submit(name, first_line, lines);
                    let mut chunk = Chunk::new(name);
                    chunk.unread = Some(format!("{name}: cannot read after line {}: {e}", line - 1));
                    self.ready(chunk);
                    return;
                }
            }
        }
        self.submit(name, first_line, buf);
    }

    /// JSON values one after the other, arrays element by element. On text that is not JSON,
    /// the line to go on from, line by line: the one after the last whole value, so that the
    /// torn value's lines are counted and the values after it read.
    fn read_values(&mut self, name: &Arc<str>, reader: impl Read) -> Option<u64> {
        let read = Rc::new(Cell::new((0, 0)));
        let ended = Cell::new(None);
        let counted = Counted { inner: reader, read: read.clone() };
        let mut de = serde_json::Deserializer::from_reader(counted);
        let mut chunk = Chunk::new(name);
        let mut resume = None;
        let start = self.bytes;
        loop {
            if de.end().is_ok() {
                break;
            }
            let mut sink = ValueSink { chunk: &mut chunk, pass: self, name, read: &read, start, ended: &ended };
            if let Err(e) = de::Deserializer::deserialize_any(&mut de, &mut sink) {
                if e.is_io() {
                    chunk.unread = Some(format!("{name}: cannot read: {e}"));
                    break;
                }
                let error_line = e.line() as u64;
                // The line after the one the last whole value ended on (the first line if none).
                let next = ended.get().map_or(1, |newlines: u64| newlines + 2);
                if next <= error_line {
                    resume = Some(next - 1);
                } else {
                    chunk.items.push(Item::Skip(Reason::NotJson, error_line));
                    resume = Some(error_line);
                }
                break;
            }
        }
        self.ready(chunk);
        self.bytes = start;
        self.advance(read.get().1);
        resume
    }

    fn advance(&mut self, n: u64) {
        self.bytes += n;
        (self.progress)(self.bytes);
    }

    /// Lines to parse, on the pool when there is one.
    fn submit(&mut self, name: &Arc<str>, first_line: u64, lines: Vec<u8>) {
        if lines.is_empty() {
            return;
        }
        let seq = self.sent;
        self.sent += 1;
        let name = name.clone();
        match self.pool {
            Some(pool) => {
                while self.sent - self.folded > self.in_flight as u64 {
                    self.wait();
                }
                let tx = self.tx.clone();
                pool.spawn(move || {
                    let _ = tx.send((seq, parse_lines(&name, first_line, &lines)));
                });
            }
            None => {
                let chunk = parse_lines(&name, first_line, &lines);
                self.done.insert(seq, chunk);
                self.drain();
            }
        }
    }

    /// Items already parsed (skips, value-mode items), in their place in the order.
    fn ready(&mut self, chunk: Chunk) {
        let seq = self.sent;
        self.sent += 1;
        self.done.insert(seq, chunk);
        self.drain();
    }

    fn wait(&mut self) {
        if let Ok((seq, chunk)) = self.rx.recv() {
            self.done.insert(seq, chunk);
        }
        self.drain();
    }

    /// Folds the chunks that are next in order.
    fn drain(&mut self) {
        while let Some(chunk) = self.done.remove(&self.folded) {
            self.folded += 1;
            let fold = &mut self.fold;
            fold.log_lines += chunk.log_lines;
            fold.payload_events += chunk.payload_events;
            // A batch of calls' table slots read ahead of folding them (`Fold::warm`).
            let mut chunk = chunk;
            for batch in chunk.items.chunks_mut(WARM) {
                fold.warm(batch.iter().filter_map(|i| match i {
                    Item::Call(c) => Some((c.call_id, c.turn_id)),
                    _ => None,
                }));
                for item in batch {
                    match item {
                        Item::Call(c) => fold.call(c.view(&chunk.text)),
                        Item::Method => fold.method(),
                        Item::Tools(t) => fold.tools(std::mem::take(t)),
                        Item::Skip(reason, line) => fold.skip(*reason, &chunk.source, *line),
                    }
                }
            }
            if let Some(what) = chunk.unread {
                fold.unread(what);
            }
        }
    }

    fn finish(mut self) -> Fold {
        while self.folded < self.sent {
            self.wait();
        }
        self.fold
    }
}

/// Counts the lines and bytes the JSON reader has gone through, for the places of skipped
/// values and the progress.
struct Counted<R> {
    inner: R,
    read: Rc<Cell<(u64, u64)>>,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        let (lines, bytes) = self.read.get();
        let newlines = buf[..n].iter().filter(|&&b| b == b'\n').count() as u64;
        self.read.set((lines + newlines, bytes + n as u64));
        Ok(n)
    }
}

/// Receives the values of a value-mode source: a top-level array element by element, so that
/// an array of a million payloads is never held whole.
struct ValueSink<'c, 'p, 'a> {
    chunk: &'c mut Chunk,
    pass: &'p mut Pass<'a>,
    name: &'c Arc<str>,
    /// Lines and bytes read so far, and the bytes read before this source.
    read: &'c Rc<Cell<(u64, u64)>>,
    start: u64,
    /// The newlines read when the last whole value ended.
    ended: &'c Cell<Option<u64>>,
}

impl ValueSink<'_, '_, '_> {
    fn value(&mut self, v: &Value) {
        // The line the value ends on.
        let newlines = self.read.get().0;
        self.ended.set(Some(newlines));
        parse_value(v, newlines + 1, self.chunk);
        if self.chunk.items.len() >= CHUNK_ITEMS {
            let full = std::mem::replace(self.chunk, Chunk::new(self.name));
            self.pass.ready(full);
            self.pass.bytes = self.start;
            self.pass.advance(self.read.get().1);
        }
    }
}

/// A scalar where a payload, an event or a line was expected: handed on as null, which the
/// parser skips and counts.
macro_rules! not_an_object {
    ($($visit:ident: $t:ty),*) => {
        $(fn $visit<E: de::Error>(self, _: $t) -> Result<(), E> {
            self.value(&Value::Null);
            Ok(())
        })*
    };
}

impl<'de> Visitor<'de> for &mut ValueSink<'_, '_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a payload, an event, an event log line or an array of them")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(v) = seq.next_element_seed(ValueSeed)? {
            self.value(&v);
        }
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<(), A::Error> {
        let v = Value::deserialize(de::value::MapAccessDeserializer::new(map))?;
        self.value(&v);
        Ok(())
    }

    not_an_object!(visit_bool: bool, visit_i64: i64, visit_u64: u64, visit_f64: f64, visit_str: &str);

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.value(&Value::Null);
        Ok(())
    }
}

/// One element of an array, as a value.
struct ValueSeed;

impl<'de> DeserializeSeed<'de> for ValueSeed {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        Value::deserialize(d)
    }
}

/// Passes a UTF-8 byte order mark.
fn skip_bom(reader: &mut impl BufRead) -> io::Result<()> {
    let head = reader.fill_buf()?;
    if head.starts_with(b"\xEF\xBB\xBF") {
        reader.consume(3);
    }
    Ok(())
}

/// Reads the first non-blank line into `first` (blank lines before it too, to keep the line
/// numbers); whether the source is JSON values spread over lines (an array, or a first line
/// that is not JSON by itself but opens an object).
fn peek_first_line(reader: &mut impl BufRead, first: &mut Vec<u8>, max_line: usize) -> io::Result<First> {
    let mut number = 0;
    loop {
        let start = first.len();
        let n = reader.by_ref().take(max_line as u64 + 1).read_until(b'\n', first)?;
        number += 1;
        if n == 0 {
            return Ok(First::Lines);
        }
        if !first.ends_with(b"\n") && first.len() - start > max_line {
            first.clear();
            return Ok(First::TooLong(number));
        }
        let line = first[start..].trim_ascii();
        if line.is_empty() {
            continue;
        }
        let values = line.starts_with(b"[")
            || (line.starts_with(b"{") && serde_json::from_slice::<de::IgnoredAny>(line).is_err());
        return Ok(if values { First::Values } else { First::Lines });
    }
}

/// How a source is read, from its first line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum First {
    /// JSON Lines.
    Lines,
    /// JSON values spread over lines: an array, or pretty-printed objects.
    Values,
    /// The first line is too long (its number); the rest is read as JSON Lines.
    TooLong(u64),
}

/// Parses whole lines (`first_line` is the number of the first).
fn parse_lines(name: &Arc<str>, first_line: u64, lines: &[u8]) -> Chunk {
    let mut chunk = Chunk::new(name);
    let mut rest = lines;
    for line in first_line.. {
        // `skip_until` finds the line's end with the standard library's word-at-a-time
        // memchr, where `split_inclusive` compared byte by byte (8 % of a report's time).
        let at = rest;
        let Ok(n @ 1..) = rest.skip_until(b'\n') else { break };
        let bytes = at[..n].trim_ascii();
        // Blank, or what is left of an array's brackets between its elements.
        if bytes.iter().all(|b| b.is_ascii_whitespace() || b"[],".contains(b)) {
            continue;
        }
        let Ok(text) = std::str::from_utf8(bytes) else {
            chunk.items.push(Item::Skip(Reason::NotUtf8, line));
            continue;
        };
        let elem = serde_json::from_str::<Elem<'_>>(text).or_else(|e| {
            // An element of an array written one per line: `[{…},`, `{…},`, `{…}]`.
            let inner = text.strip_prefix('[').unwrap_or(text).trim_end_matches([',', ']', ' ']);
            if inner.len() < text.len() {
                serde_json::from_str::<Elem<'_>>(inner)
            } else {
                Err(e)
            }
        });
        match elem {
            Ok(e) => parse_elem(&e, line, &mut chunk),
            Err(_) => chunk.items.push(Item::Skip(Reason::NotJson, line)),
        }
    }
    chunk
}

/// One value given as such (`add_value`, or read from an array).
fn parse_value(value: &Value, line: u64, out: &mut Chunk) {
    match Elem::deserialize(value) {
        Ok(e) => parse_elem(&e, line, out),
        Err(_) => out.items.push(Item::Skip(Reason::NotAnEvent, line)),
    }
}

/// One value: a payload, an array of payloads or events, an event log line, or a bare event.
fn parse_elem(elem: &Elem<'_>, line: u64, out: &mut Chunk) {
    match elem {
        Elem::Arr(items) => items.iter().for_each(|e| parse_elem(e, line, out)),
        Elem::Obj(o) => {
            if let Field::Is(events) = &o.events {
                let identity = o.identity.get().map(|i| &**i);
                for event in events {
                    out.payload_events += 1;
                    out.items.push(match event {
                        Elem::Obj(e) => parse_event(e, identity, None, line, &mut out.text),
                        _ => Item::Skip(Reason::NotAnEvent, line),
                    });
                }
            } else if o.kind.present() {
                parse_log_line(o, line, out);
            } else if o.tool_name.present() {
                out.items.push(parse_event(o, None, None, line, &mut out.text));
            } else {
                out.items.push(Item::Skip(Reason::NotAnEvent, line));
            }
        }
        Elem::Null | Elem::Other => out.items.push(Item::Skip(Reason::NotAnEvent, line)),
    }
}

fn parse_log_line(o: &Obj<'_>, line: u64, out: &mut Chunk) {
    if o.v.get() != Some(&u64::from(FORMAT_VERSION)) {
        return out.items.push(Item::Skip(Reason::NotAnEvent, line));
    }
    match o.kind.get().map(|k| &**k) {
        Some(KIND_CALL) => {
            out.log_lines += 1;
            let empty = Obj::default();
            // Without an event (or with one that is not an object), the line's own keys.
            let event = o.event.get().map_or(&empty, |e| &**e);
            out.items.push(parse_event(event, None, Some(o), line, &mut out.text));
        }
        Some(KIND_METHOD) => {
            out.log_lines += 1;
            out.items.push(match o.is_error.checked() {
                Ok(_) => Item::Method,
                Err(()) => Item::Skip(Reason::BadIsError, line),
            });
        }
        Some(KIND_TOOLS) => {
            out.log_lines += 1;
            let tools = o
                .tools
                .get()
                .into_iter()
                .flatten()
                .filter_map(|t| match t {
                    Elem::Obj(t) => Some(ListedTool {
                        name: t.name.text()?,
                        hash: t.hash.text()?,
                        description: t.description.text(),
                    }),
                    _ => None,
                })
                .collect();
            out.items.push(Item::Tools(tools));
        }
        Some(KIND_LOG) => out.log_lines += 1,
        _ => out.items.push(Item::Skip(Reason::NotAnEvent, line)),
    }
}

/// A wire event, with the payload's identity or the log line it came in; its strings go to
/// `text`.
fn parse_event(
    event: &Obj<'_>,
    identity: Option<&Obj<'_>>,
    log: Option<&Obj<'_>>,
    line: u64,
    text: &mut String,
) -> Item {
    let start = text.len();
    match call(event, identity, log, text) {
        Ok(c) => Item::Call(c),
        Err(reason) => {
            text.truncate(start);
            Item::Skip(reason, line)
        }
    }
}

/// `s` put at the end of `text`.
fn put(text: &mut String, s: &str) -> Span {
    let at = text.len();
    text.push_str(s);
    Span(at, s.len())
}

fn call(event: &Obj<'_>, identity: Option<&Obj<'_>>, log: Option<&Obj<'_>>, text: &mut String) -> Result<Call, Reason> {
    let tool = event.tool_name.get().or_else(|| log.and_then(|l| l.tool.get())).ok_or(Reason::NotAnEvent)?;
    if tool.is_empty() {
        return Err(Reason::EmptyTool);
    }
    // A key of the wrong type is a broken line, not a default: `"durationMs": "12"` is not 0 ms.
    let duration_ms = *event.duration_ms.checked().map_err(|()| Reason::BadDuration)?.unwrap_or(&0);
    let is_error = *event.is_error.checked().map_err(|()| Reason::BadIsError)?.unwrap_or(&false);
    let stamp = |f: &Field<u64>| -> Result<Option<u64>, Reason> {
        match f.checked() {
            Ok(None) => Ok(None),
            Ok(Some(t)) if TS_RANGE.contains(t) => Ok(Some(*t)),
            _ => Err(Reason::BadTimestamp),
        }
    };
    let event_ts = stamp(&event.timestamp)?;
    let line_ts = match log {
        Some(l) => stamp(&l.ts)?,
        None => None,
    };
    let call_id = event.call_id.get().or_else(|| log.and_then(|l| l.call_id.get())).map(|id| fingerprint(id));
    let reserved = &**tool == RESERVED_TOOL_NAME && !is_error;
    let feedback = &**tool == crate::findings::FEEDBACK_TOOL && !is_error;
    let arguments = event.arguments.get().filter(|_| reserved || feedback);
    let feedback_args = arguments.filter(|_| feedback);
    // Only a log line carries it, and only for a call without an intent of its own.
    let inferred = match log {
        Some(l) => l.inferred_intent.checked().map_err(|()| Reason::BadInferredIntent)?,
        None => None,
    };
    let own_intent = event.intent.get().filter(|i| !i.trim().is_empty());
    let filled = |c: &&Cow<'_, str>| !c.trim().is_empty();
    let user =
        event.user_id.get().or_else(|| event.user_email.get()).or_else(|| identity.and_then(|i| i.user_id.get()));
    let mut put_some = |v: Option<&Cow<'_, str>>| v.map(|v| put(text, v));
    let mut call = Call {
        call_id,
        ts: event_ts.or(line_ts).unwrap_or(0),
        duration_ms,
        is_error,
        error: put_some(event.error_message.get()),
        intent: put_some(own_intent),
        inferred_intent: put_some(inferred.filter(|i| own_intent.is_none() && filled(i))),
        result_bytes: event.result,
        capability: put_some(arguments.filter(|_| reserved).and_then(|a| a.capability.get()).filter(filled)),
        context: put_some(arguments.filter(|_| reserved).and_then(|a| a.context.get()).filter(filled)),
        feedback: put_some(feedback_args.and_then(|a| a.category.get())),
        feedback_text: put_some(feedback_args.and_then(|a| a.text.get()).filter(filled)),
        task_completed: feedback_args.and_then(|a| a.task_completed.get().copied()),
        user: put_some(user),
        client: put_some(identity.and_then(|i| i.client.get())),
        server_version: put_some(identity.and_then(|i| i.server_version.get())),
        tool: put(text, tool),
        ..Call::default()
    };
    if let Some(log) = log {
        fill_from_line(&mut call, log, text);
    }
    Ok(call)
}

/// What only a log line knows.
fn fill_from_line(call: &mut Call, line: &Obj<'_>, text: &mut String) {
    let fields: [(&Str<'_>, &mut Option<Span>); 7] = [
        (&line.session, &mut call.session),
        (&line.conversation, &mut call.conversation),
        (&line.turn, &mut call.turn),
        (&line.model, &mut call.model),
        (&line.client, &mut call.client),
        (&line.server_version, &mut call.server_version),
        (&line.tool_hash, &mut call.tool_hash),
    ];
    for (field, slot) in fields {
        if let Some(v) = field.get() {
            *slot = Some(put(text, v));
        }
    }
    call.turn_id = line.turn.get().map(|t| fingerprint(t));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::summary::InputSection;

    const GOOD: &str =
        r#"{"callId":"ok","toolName":"search","isError":false,"timestamp":1764576000000,"durationMs":5}"#;

    fn input_of(text: &str) -> (usize, InputSection) {
        let mut input = ReportInput::new();
        input.read_str(text);
        let r = input.report();
        (r.overview.calls, r.input)
    }

    fn skipped(input: &InputSection) -> Vec<(&str, usize)> {
        input.skipped.iter().map(|(r, n)| (r.as_str(), *n)).collect()
    }

    #[test]
    fn each_bad_line_is_skipped_counted_by_reason_and_placed() {
        let cases: [(&str, &[u8]); 9] = [
            ("not UTF-8", b"{\"callId\":\"a\",\"toolName\":\"caf\xC3\"}"),
            ("not JSON", b"{\"v\":1,\"kind\":\"call\",\"ts\":17645"),
            ("not a payload, an event or a known event log line", b"{\"hello\":1}"),
            ("empty tool name", b"{\"callId\":\"a\",\"toolName\":\"\"}"),
            ("durationMs not a non-negative integer", b"{\"toolName\":\"a\",\"durationMs\":\"12\"}"),
            ("durationMs not a non-negative integer", b"{\"toolName\":\"a\",\"durationMs\":-1}"),
            ("durationMs not a non-negative integer", b"{\"toolName\":\"a\",\"durationMs\":1.5}"),
            ("isError not a boolean", b"{\"toolName\":\"a\",\"isError\":\"true\"}"),
            ("timestamp not an integer within 2000-2100", b"{\"toolName\":\"a\",\"timestamp\":18446744073709551615}"),
        ];
        for (reason, line) in cases {
            let mut text = format!("{GOOD}\n").into_bytes();
            text.extend_from_slice(line);
            text.extend_from_slice(format!("\n{}\n", GOOD.replace("\"ok\"", "\"ok2\"")).as_bytes());
            let mut input = ReportInput::new();
            // Through a file, where invalid UTF-8 can be.
            let path =
                std::env::temp_dir().join(format!("mcpeye-reason-{}-{}.jsonl", std::process::id(), reason.len()));
            std::fs::write(&path, &text).unwrap();
            let r = input.read_path(&path).report();
            std::fs::remove_file(&path).unwrap();
            assert_eq!(r.overview.calls, 2, "{reason}: the lines around it are read");
            assert_eq!(skipped(&r.input), [(reason, 1)], "{reason}");
            assert_eq!(r.input.places[0].line, 2, "{reason}");
            assert_eq!(r.input.places[0].file, path.display().to_string());
        }
        // A timestamp before 2000 and a method line with a bad isError.
        let (_, i) = input_of(r#"{"toolName":"a","timestamp":5}"#);
        assert_eq!(skipped(&i), [("timestamp not an integer within 2000-2100", 1)]);
        let (_, i) = input_of(r#"{"v":1,"kind":"method","ts":1764576000000,"method":"x","isError":1}"#);
        assert_eq!(skipped(&i), [("isError not a boolean", 1)]);
    }

    #[test]
    fn a_line_over_the_cap_is_skipped_without_being_held() {
        let long = format!("{{\"toolName\":\"{}\"}}", "x".repeat(5000));
        for text in [format!("{GOOD}\n{long}\n{GOOD}\n"), format!("{long}\n{GOOD}\n"), format!("{GOOD}\n{long}")] {
            let mut input = ReportInput::new();
            let r = input.read_str(&text).max_line_bytes(1000).report();
            assert_eq!(skipped(&r.input), [("line too long", 1)], "{}", &text[..20]);
            assert_eq!(r.overview.calls, 1);
            assert_eq!(r.overview.duplicates, usize::from(text.matches(GOOD).count() == 2));
        }
    }

    #[test]
    fn a_byte_order_mark_is_ignored() {
        let (calls, i) = input_of(&format!("\u{feff}{GOOD}\n"));
        assert_eq!((calls, i.skipped.len()), (1, 0));
        let (calls, i) = input_of(&format!("\u{feff}[{GOOD}]"));
        assert_eq!((calls, i.skipped.len()), (1, 0));
    }

    #[test]
    fn an_array_is_read_element_by_element() {
        let events: Vec<String> = (0..5).map(|i| GOOD.replace("\"ok\"", &format!("\"e{i}\""))).collect();
        // A bad element (of the wrong type) costs only itself.
        let bad = r#"{"toolName":"a","isError":"no"}"#;
        let (calls, i) = input_of(&format!("[{},{bad},{}]", events[0], events[1]));
        assert_eq!((calls, skipped(&i)), (2, vec![("isError not a boolean", 1)]));
        // Pretty-printed, one element per line, with a torn element: the rest is read on.
        let text = format!(
            "[\n  {},\n  {},\n  {{\"callId\": \"torn\",\n  {},\n  {}\n]\n",
            events[0], events[1], events[2], events[3]
        );
        let (calls, i) = input_of(&text);
        assert_eq!(calls, 4, "{i:?}");
        assert_eq!(i.skipped["not JSON"], 1, "{i:?}");
        // Pretty-printed payloads one after the other.
        let payload = serde_json::json!({"projectId": "p", "identity": {}, "events": [serde_json::from_str::<Value>(GOOD).unwrap()]});
        let (calls, i) = input_of(&format!("{payload:#}\n{payload:#}\n"));
        assert_eq!((calls, i.skipped.len()), (1, 0));
    }

    #[test]
    fn a_call_in_a_log_and_a_payload_file_is_taken_from_the_log_whatever_the_order() {
        let payload = r#"{"projectId":"p","identity":{"client":"cli/1","serverVersion":"2.0","userId":"u1"},"events":[{"callId":"a","toolName":"search","arguments":{},"isError":false,"timestamp":1764576000005,"durationMs":3,"result":{"n":1}}]}"#;
        let log = r#"{"v":1,"kind":"call","ts":1764576000005,"callId":"a","tool":"search","session":"s","model":"m","client":"cli/1","event":{"callId":"a","toolName":"search","isError":false,"userId":"u1"}}"#;
        let mut input = ReportInput::new();
        input.read_str(&format!("{payload}\n{payload}\nnot json\n")).read_str(log);
        let r = input.report();
        assert_eq!((r.overview.calls, r.overview.duplicates, r.overview.skipped), (1, 2, 1));
        assert_eq!((r.overview.conversations, r.models.models[0].model.as_str()), (1, "m"));
        assert_eq!((r.overview.users, r.overview.clients.as_slice()), (1, ["cli/1".to_owned()].as_slice()));
    }

    #[test]
    fn calls_of_a_conversation_are_taken_in_time_order_within_a_window() {
        let line = |id: usize, ts: u64, tool: &str, error: bool| {
            format!(
                r#"{{"v":1,"kind":"call","ts":{ts},"callId":"c{id}","tool":"{tool}","session":"s","event":{{"toolName":"{tool}","isError":{error}}}}}"#
            )
        };
        let t0 = 1_764_576_000_000;
        // order failed, then was retried: logged in the other order (it finished later).
        let text = [line(1, t0 + 2, "order", false), line(2, t0 + 1, "order", true)].join("\n");
        let (_, i) = input_of(&text);
        assert_eq!(i.out_of_order, 0);
        let mut input = ReportInput::new();
        let r = input.read_str(&text).report();
        assert_eq!((r.paths.recoveries[0].retried, r.paths.recoveries[0].recovered), (1, 1));
        // Logged more than the window after: counted, and taken as read.
        let mut lines = vec![line(0, t0 + 1, "order", true)];
        lines.extend((1..=REORDER_TEST).map(|i| line(i, t0 + 10 + i as u64, "search", false)));
        lines.push(line(99, t0, "search", false));
        let (_, i) = input_of(&lines.join("\n"));
        assert_eq!(i.out_of_order, 1);
    }

    const REORDER_TEST: usize = crate::fold::REORDER + 1;
}
