//! The flusher thread of a tracker: takes records off the hand-off channel, caps, redacts and
//! serialises them, and POSTs them in bounded batches with the retry policy of docs/wire-format.md#delivery-and-retry.
//!
//! It wakes on a short tick and drains the channel with `try_recv`, rather than blocking on
//! `recv`: a blocked receiver makes every sender after an idle gap pay a thread wake-up. The
//! calling threads only nudge it (once per drain) when the channel fills up (a quarter of it, at
//! most 2 000 records, or the flush threshold if larger); the tick applies the threshold. Flush and shutdown arrive on
//! the same small control channel (the OpenTelemetry batch-processor shape). After the first
//! POST of a round, only full batches go: the rest waits for the next round, so that a POST's
//! fixed cost is shared by a full batch when calls keep coming.
//!
//! A drain takes only what the channel held when it started, at most two batches before the
//! first POST (unless an outbox needs every event written at once), and between two POSTs about
//! one batch: callers faster than the delivery must not keep the flusher encoding events only to
//! drop them as the oldest, or draining without ever sending.

use crate::config::{Config, Identity};
use crate::flush::call_id::CallIds;
use crate::flush::encode::{encode_edited, encode_event, payload_head, Invalid, Payload, PAYLOAD_TAIL};
use crate::flush::outbox::Outbox;
use crate::flush::screen::Screen;
use crate::flush::transport::{backoff, Answer, Transport};
use crate::model::diagnostics::{DiagnosticKind, Diagnostics};
use crate::model::record::ClientInfo;
use crate::model::stats::Counters;
use crate::record::{BufferPool, Queued};
use crate::redact::Redactor;
use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicIsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often the flusher looks at the channel when nothing wakes it.
pub(crate) const TICK: Duration = Duration::from_millis(100);

/// Messages from the tracker to its flusher.
pub(crate) enum Control {
    /// The channel reached the flush threshold.
    Nudge,
    /// Send everything buffered now; answer whether it all went before `deadline`.
    Flush { deadline: Instant, reply: Sender<bool> },
    /// Like `Flush`, then give up what is left and exit.
    Shutdown { deadline: Instant, reply: Sender<bool> },
}

/// State shared by the calling threads, the tracker handle and the flusher.
pub(crate) struct Handoff {
    pub counters: Counters,
    pub diagnostics: Diagnostics,
    /// A nudge is on its way; cleared by each drain once it has taken its records off the backlog.
    pub nudged: AtomicBool,
    /// Shut down: new records are dropped.
    pub closed: AtomicBool,
    /// The identify callback panicked (reported by the flusher, off the calling thread).
    pub identify_panicked: AtomicBool,
    /// About how many records the data channel holds: what calling threads see of its length.
    pub backlog: Backlog,
    /// The server's version as its MCP server info gives it, sent as `serverVersion` when the
    /// configured identity has none.
    pub server_version: std::sync::OnceLock<String>,
}

/// The data channel's length as the calling threads see it, on a cache line of its own.
///
/// The channel's own length reads its head, which the flusher writes on every receive: asking
/// it on every call moves that line between the cores twice per event. This count is written
/// by the calling threads on every call and by the flusher once per drain. It runs ahead of the
/// channel by the records received and not yet taken off, and may dip below zero for a moment
/// (a record taken off before its sender added it).
#[derive(Debug, Default)]
#[repr(align(128))]
pub(crate) struct Backlog(AtomicIsize);

impl Backlog {
    /// Counts one record sent; the count after it.
    pub(crate) fn add_one(&self) -> isize {
        self.0.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Counts `n` records received.
    pub(crate) fn take_off(&self, n: usize) {
        if n > 0 {
            self.0.fetch_sub(n as isize, Ordering::Relaxed);
        }
    }

    /// The count now.
    pub(crate) fn get(&self) -> isize {
        self.0.load(Ordering::Relaxed)
    }
}

/// The flusher's settings, copied out of the [`Config`].
struct Settings {
    project_id: String,
    /// The configured identity; each event's own client replaces its `client`.
    identity: Identity,
    flush_interval: Duration,
    flush_threshold: usize,
    max_buffer: usize,
    max_batch_events: usize,
    max_batch_bytes: usize,
    request_timeout: Duration,
    shutdown_timeout: Duration,
    retry_initial_backoff: Duration,
    retry_max_backoff: Duration,
}

pub(crate) struct Flusher {
    data: Receiver<Queued>,
    control: Receiver<Control>,
    shared: Arc<Handoff>,
    transport: Box<dyn Transport>,
    redactor: Redactor,
    /// Sampling, error-reason counts and `before_send`.
    screen: Screen,
    settings: Settings,
    /// Encoded events waiting to be sent, oldest first.
    buffer: VecDeque<Buffered>,
    next_seq: u64,
    /// When the oldest buffered event arrived.
    oldest_at: Option<Instant>,
    /// Consecutive failed attempts, for the backoff.
    failures: u32,
    /// No POST before this instant (backoff or `Retry-After`).
    next_attempt: Option<Instant>,
    /// Batch size after a 413, doubled back after each success.
    split_limit: Option<usize>,
    /// `channel_full` count already reported.
    channel_full_seen: u64,
    /// Where an event is encoded, when no spare buffer is at hand, before it is copied out at its
    /// exact size.
    scratch: Vec<u8>,
    /// The events' `callId`s.
    call_ids: CallIds,
    /// Buffers of sent events, emptied, for the next events: reused rather than allocated and
    /// freed for every event.
    spare: Vec<Vec<u8>>,
    /// The on-disk copy of the buffer (`Config::outbox_dir`): appended as events are encoded,
    /// settled as they leave the buffer.
    outbox: Option<Outbox>,
    /// Where the records' buffers go back once encoded.
    pool: BufferPool,
}

/// What a delivery round ended with.
enum Round {
    /// Some events left the buffer (sent or dropped).
    Progress,
    /// The ingest asked to wait; `next_attempt` is set.
    Wait,
}

impl Flusher {
    pub(crate) fn new(
        config: &Config,
        data: Receiver<Queued>,
        control: Receiver<Control>,
        shared: Arc<Handoff>,
        transport: Box<dyn Transport>,
        outbox: Option<Outbox>,
        pool: BufferPool,
    ) -> Self {
        let mut flusher = Flusher {
            data,
            control,
            shared,
            transport,
            redactor: config.redactor(),
            screen: Screen::new(config),
            settings: Settings {
                project_id: config.project_id.clone(),
                identity: config.identity.clone(),
                flush_interval: config.flush_interval,
                flush_threshold: config.flush_threshold,
                max_buffer: config.max_buffer,
                max_batch_events: config.max_batch_events,
                max_batch_bytes: config.max_batch_bytes,
                request_timeout: config.request_timeout,
                shutdown_timeout: config.shutdown_timeout,
                retry_initial_backoff: config.retry_initial_backoff,
                retry_max_backoff: config.retry_max_backoff,
            },
            buffer: VecDeque::new(),
            next_seq: 0,
            oldest_at: None,
            failures: 0,
            next_attempt: None,
            split_limit: None,
            channel_full_seen: 0,
            scratch: Vec::with_capacity(4096),
            call_ids: CallIds::new(),
            spare: Vec::new(),
            outbox,
            pool,
        };
        flusher.recover();
        flusher
    }

    /// Buffers the events a previous process left in the outbox; they count as captured.
    fn recover(&mut self) {
        let Some(outbox) = &mut self.outbox else { return };
        let recovered = outbox.take_recovered();
        let n = recovered.len();
        for r in recovered {
            let client = r.client.map(|label| Arc::new(ClientInfo::new(label, "")));
            self.buffer.push_back(Buffered { seq: r.seq, client, bytes: r.bytes });
            self.next_seq = r.seq + 1;
        }
        if n > 0 {
            self.oldest_at = Some(Instant::now());
            Counters::add(&self.shared.counters.recovered, n);
            Counters::add(&self.shared.counters.captured, n);
            let mut overflow = 0;
            while self.buffer.len() > self.settings.max_buffer {
                self.drop_oldest();
                overflow += 1;
            }
            self.count_overflow(overflow);
            self.commit_outbox();
        }
    }

    /// Drops the oldest buffered event (`max_buffer`), in the outbox too.
    fn drop_oldest(&mut self) {
        if let (Some(b), Some(outbox)) = (self.buffer.pop_front(), &mut self.outbox) {
            outbox.settle(b.seq);
        }
    }

    /// Writes what the outbox was given since the last commit, and drops the events its byte
    /// bound evicts (counted as `outbox_overflow`).
    fn commit_outbox(&mut self) {
        let Some(outbox) = &mut self.outbox else { return };
        let diagnostics = &self.shared.diagnostics;
        match outbox.commit() {
            Ok(evicted) if evicted.is_empty() => {}
            Ok(evicted) => {
                self.buffer.retain(|b| evicted.binary_search(&b.seq).is_err());
                if self.buffer.is_empty() {
                    self.oldest_at = None;
                }
                Counters::add(&self.shared.counters.outbox_overflow, evicted.len());
                diagnostics.report(DiagnosticKind::OutboxOverflow, || {
                    "the undelivered events outgrew the outbox; dropping the oldest (see Config::outbox_max_bytes)"
                        .to_string()
                });
            }
            Err(e) => diagnostics.report(DiagnosticKind::Outbox, || {
                format!("could not write to the outbox ({e}); events are kept in memory only until it works again")
            }),
        }
    }

    pub(crate) fn run(mut self) {
        loop {
            match self.control.recv_timeout(TICK) {
                Ok(Control::Nudge) | Err(RecvTimeoutError::Timeout) => self.wake(),
                Ok(Control::Flush { deadline, reply }) => {
                    let done = self.flush_until(deadline);
                    let _ = reply.send(done);
                }
                Ok(Control::Shutdown { deadline, reply }) => {
                    let done = self.finish(deadline);
                    let _ = reply.send(done);
                    return;
                }
                // Every tracker handle is gone without a shutdown: a last bounded flush.
                Err(RecvTimeoutError::Disconnected) => {
                    self.shared.closed.store(true, Ordering::SeqCst);
                    self.finish(Instant::now() + self.settings.shutdown_timeout);
                    return;
                }
            }
        }
    }

    /// One round on a tick or a nudge: encode a few batches, send what is due, buffer the rest.
    fn wake(&mut self) {
        self.drain_up_to(self.ahead());
        self.send_due();
        // What the sends left queued (a backoff, or less than a batch) is buffered.
        self.drain();
    }

    /// How many events to encode before sending. Encoding a whole burst first (hundreds of
    /// thousands of records when callers outpace delivery) put every event in a fresh buffer of
    /// fresh pages, out of cache by the time it was sent; a few batches ahead, sent events'
    /// buffers are reused while they are still cached. With an outbox everything is encoded at
    /// once: an event is on disk only once encoded.
    fn ahead(&self) -> usize {
        match self.outbox {
            Some(_) => usize::MAX,
            None => AHEAD_BATCHES * self.settings.max_batch_events.max(1),
        }
    }

    /// Sends every event queued when the flush was asked, a few batches at a time; true when
    /// all of them left the buffer before `deadline`.
    fn flush_until(&mut self, deadline: Instant) -> bool {
        let mut left = self.data.len();
        loop {
            let take = left.min(self.ahead());
            self.drain_up_to(take);
            left -= take;
            if !self.send_until(deadline) {
                return false;
            }
            if left == 0 {
                return true;
            }
        }
    }

    /// Moves what the channel holds now into the buffer, encoding each event.
    fn drain(&mut self) {
        self.drain_up_to(usize::MAX);
    }

    /// Like [`drain`](Self::drain), taking at most `limit` events.
    fn drain_up_to(&mut self, limit: usize) {
        let mut invalid = 0;
        let mut overflow = 0;
        let present = self.data.len().min(limit);
        // One record taken ahead, its buffer prefetched while the one before it is encoded: on a
        // tick, the records were written on another core long ago and are out of this one's
        // caches. Two slots, used in turn: a record is encoded where it was received, not moved.
        let mut ahead: [Option<Queued>; 2] = [None, None];
        let mut received = 0;
        if present > 0 {
            ahead[0] = self.data.try_recv().ok();
            received += usize::from(ahead[0].is_some());
        }
        for i in 0..present {
            if i + 1 < present {
                let next = &mut ahead[(i + 1) % 2];
                match self.data.try_recv() {
                    Ok(q) => {
                        received += 1;
                        next.insert(q).prefetch();
                    }
                    Err(_) => *next = None,
                }
            }
            let slot = &mut ahead[i % 2];
            let Some(queued) = slot.as_mut() else { break };
            self.scratch.clear();
            if !self.screen.passes(queued, &self.shared.counters) {
                *slot = None;
                continue;
            }
            // Encoded straight into a sent event's buffer when there is one, else into `scratch`
            // and copied out at its exact size.
            let mut spare = self.spare.pop();
            let out = spare.as_mut().unwrap_or(&mut self.scratch);
            let (client, encoded) = if self.screen.edits() {
                // The record leaves its slot (`queued` was the slot's).
                let Some(mut e) = slot
                    .take()
                    .and_then(|q| self.screen.edit(q, &self.redactor, &self.shared.counters, &self.shared.diagnostics))
                else {
                    self.spare.extend(spare);
                    continue;
                };
                (e.client.take(), encode_edited(e, self.call_ids.next_id(), out))
            } else {
                // Encoded where it lies: a record is large to move.
                let client = queued.client.take();
                let encoded = encode_event(queued, self.call_ids.next_id(), &self.redactor, out);
                self.pool.give(queued.take_buffer());
                *slot = None;
                (client, encoded)
            };
            match encoded {
                Ok(()) => {
                    let bytes = spare.unwrap_or_else(|| self.scratch.as_slice().to_vec());
                    if let Some(outbox) = &mut self.outbox {
                        outbox.append(self.next_seq, client.as_deref().and_then(ClientInfo::label), &bytes);
                    }
                    if self.buffer.is_empty() {
                        self.oldest_at = Some(Instant::now());
                    }
                    self.buffer.push_back(Buffered { seq: self.next_seq, client, bytes });
                    self.next_seq += 1;
                }
                Err(Invalid::EmptyToolName) => {
                    invalid += 1;
                    // An invalid event writes nothing: the buffer is still empty.
                    self.spare.extend(spare);
                }
            }
            if self.buffer.len() > self.settings.max_buffer {
                if let (Some(b), Some(outbox)) = (self.buffer.pop_front(), &mut self.outbox) {
                    outbox.settle(b.seq);
                }
                overflow += 1;
            }
        }
        self.shared.backlog.take_off(received);
        // Cleared once the backlog is taken off: cleared before, calls during the drain saw the
        // records being drained still counted and nudged again for them.
        self.shared.nudged.store(false, Ordering::SeqCst);
        self.commit_outbox();
        if invalid > 0 {
            Counters::add(&self.shared.counters.invalid, invalid);
            self.shared.diagnostics.report(DiagnosticKind::Invalid, || {
                "dropped an event with an empty tool name (the ingest requires one)".to_string()
            });
        }
        self.count_overflow(overflow);
        self.report_calling_thread_problems();
    }

    fn count_overflow(&self, overflow: usize) {
        if overflow > 0 {
            Counters::add(&self.shared.counters.buffer_overflow, overflow);
            let max = self.settings.max_buffer;
            self.shared.diagnostics.report(DiagnosticKind::BufferOverflow, || {
                format!("more than {max} events waited for the ingest; dropping the oldest (see Config::max_buffer)")
            });
        }
    }

    /// Problems noticed on calling threads are reported here, to keep their I/O off those threads.
    fn report_calling_thread_problems(&mut self) {
        let full = self.shared.counters.channel_full.load(Ordering::SeqCst);
        if full > self.channel_full_seen {
            self.channel_full_seen = full;
            self.shared.diagnostics.report(DiagnosticKind::ChannelFull, || {
                "calls came faster than events could be queued; some were dropped (see Config::max_buffer)".to_string()
            });
        }
        if self.shared.identify_panicked.load(Ordering::SeqCst) {
            self.shared.diagnostics.report(DiagnosticKind::IdentifyPanicked, || {
                "the identify callback panicked; those calls were recorded without a user".to_string()
            });
        }
    }

    /// Sends while a batch is due: on waking, the threshold is reached or the oldest event waited
    /// long enough; after a send in the same round, only while a full batch is buffered.
    ///
    /// Without the second rule, when calls come without pause the flusher sent whatever had
    /// arrived during its last POST (about 55 events) and each POST's fixed cost (a request, a
    /// response, the thread blocking on it) was spread over so few events that it made about 40 %
    /// of the flusher's CPU per event. What is left waits for the next wake-up: the tick, or a
    /// nudge when the channel fills.
    fn send_due(&mut self) {
        let mut due = self.settings.flush_threshold;
        loop {
            let now = Instant::now();
            if self.buffer.is_empty() || self.next_attempt.is_some_and(|t| now < t) {
                return;
            }
            let waited = self.oldest_at.is_some_and(|t| now.duration_since(t) >= self.settings.flush_interval);
            if self.buffer.len() < due && !waited {
                return;
            }
            // A full batch, or as full as the buffer can hold when `max_buffer` is smaller.
            due = self.settings.flush_threshold.max(self.settings.max_batch_events.min(self.settings.max_buffer));
            if let Round::Wait = self.send_batch(self.settings.request_timeout) {
                return;
            }
            // Encode about as many as were sent: when callers outpace delivery, the surplus is
            // dropped cheaply at the channel instead of encoded and then dropped as the oldest.
            self.drain_up_to(self.settings.max_batch_events);
        }
    }

    /// Sends what is buffered now, waiting out backoffs that end before `deadline`. True when
    /// every event buffered at the start left the buffer in time.
    fn send_until(&mut self, deadline: Instant) -> bool {
        let Some(last) = self.buffer.back().map(|b| b.seq) else { return true };
        loop {
            // Batches go out per identity, but always including the oldest event: everything up
            // to `last` has left once the front is past it.
            if self.buffer.front().is_none_or(|b| b.seq > last) {
                return true;
            }
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            if let Some(t) = self.next_attempt.filter(|t| *t > now) {
                if t >= deadline {
                    return false;
                }
                std::thread::sleep(t - now);
                continue;
            }
            self.send_batch(self.settings.request_timeout.min(deadline - now));
        }
    }

    /// Final delivery before exit; what cannot go before `deadline` is counted unsent.
    fn finish(&mut self, deadline: Instant) -> bool {
        let mut done = true;
        loop {
            self.drain();
            if self.buffer.is_empty() || !done {
                break;
            }
            done = self.send_until(deadline);
        }
        if self.outbox.is_some() {
            // What is left, and what slipped in while closing, stays in the outbox for the next
            // start (still pending). Closing it before the shutdown is answered frees its slot.
            self.drain();
            self.outbox = None;
            let kept = self.buffer.len();
            if kept > 0 {
                self.shared.diagnostics.report(DiagnosticKind::ShutdownTimeout, || {
                    format!("{kept} event(s) could not be sent before the shutdown timeout; the outbox keeps them for the next start")
                });
            }
            return kept == 0;
        }
        // Records that slipped in while closing are unsent too: nothing will read them later.
        let mut unsent = self.buffer.len();
        self.buffer.clear();
        let mut received = 0;
        while self.data.try_recv().is_ok() {
            received += 1;
        }
        self.shared.backlog.take_off(received);
        unsent += received;
        if unsent > 0 {
            Counters::add(&self.shared.counters.unsent, unsent);
            self.shared.diagnostics.report(DiagnosticKind::ShutdownTimeout, || {
                format!("{unsent} event(s) could not be sent before the shutdown timeout and were dropped")
            });
        }
        unsent == 0
    }

    /// The buffered events the next POST takes, by position: the oldest event and the next ones
    /// sent under the same identity, at most the batch limit and byte bound, and at least one.
    fn pick(&self, head_len: usize, label: Option<&str>) -> Vec<usize> {
        let limit = self.split_limit.unwrap_or(self.settings.max_batch_events).min(self.settings.max_batch_events);
        let mut size = head_len + PAYLOAD_TAIL.len();
        let mut picked = Vec::new();
        for (i, b) in self.buffer.iter().enumerate() {
            if picked.len() == limit {
                break;
            }
            if b.label() != label {
                continue;
            }
            let add = b.bytes.len() + usize::from(!picked.is_empty());
            if !picked.is_empty() && size + add > self.settings.max_batch_bytes {
                break;
            }
            size += add;
            picked.push(i);
        }
        picked
    }

    /// One POST: the oldest event and others of the same identity (one identity per payload,
    /// so that no event is sent under another client's name).
    fn send_batch(&mut self, timeout: Duration) -> Round {
        let Some(front) = self.buffer.front() else { return Round::Progress };
        let client = front.client.clone();
        let head = match (&self.settings.identity.server_version, self.shared.server_version.get()) {
            (None, Some(version)) => {
                let identity = Identity { server_version: Some(version.clone()), ..self.settings.identity.clone() };
                payload_head(&self.settings.project_id, &identity, client.as_deref())
            }
            _ => payload_head(&self.settings.project_id, &self.settings.identity, client.as_deref()),
        };
        let picked = self.pick(head.len(), client.as_deref().and_then(ClientInfo::label));
        let n = picked.len();
        let body = Payload::new(&head, picked.iter().map(|&i| self.buffer[i].bytes.as_slice()));
        let outcome = self.transport.send(body, timeout);
        let shared = self.shared.clone();
        let diagnostics = &shared.diagnostics;
        match outcome {
            Answer::Sent => {
                self.take(&picked);
                Counters::add(&self.shared.counters.sent, n);
                self.failures = 0;
                self.next_attempt = None;
                self.split_limit = self.split_limit.map(|l| l * 2).filter(|l| *l < self.settings.max_batch_events);
                Round::Progress
            }
            Answer::Retry { status, after, reason } => {
                self.failures = self.failures.saturating_add(1);
                let delay = after.unwrap_or_else(|| {
                    backoff(self.failures, self.settings.retry_initial_backoff, self.settings.retry_max_backoff)
                });
                self.next_attempt = Some(Instant::now() + delay);
                match status {
                    None => diagnostics.report(DiagnosticKind::Network, || {
                        format!("could not reach the ingest ({reason}); retrying with backoff")
                    }),
                    Some(_) => diagnostics.report(DiagnosticKind::Retrying, || {
                        format!("the ingest answered {reason}; retrying with backoff")
                    }),
                }
                Round::Wait
            }
            Answer::TooLarge if n == 1 => {
                self.take(&picked);
                Counters::add(&self.shared.counters.too_large, 1);
                diagnostics.report(DiagnosticKind::TooLarge, || {
                    "the ingest refused a single event as too large (413); it was dropped".to_string()
                });
                Round::Progress
            }
            Answer::TooLarge => {
                self.split_limit = Some(n.div_ceil(2));
                Round::Progress
            }
            Answer::Rejected { status } => {
                self.take(&picked);
                Counters::add(&self.shared.counters.rejected, n);
                if status == 401 || status == 403 {
                    diagnostics.report(DiagnosticKind::Unauthorized, || {
                        format!(
                            "the ingest refused the events with HTTP {status}: the ingest secret is likely wrong \
                             or missing (Config::ingest_secret or MCPEYE_INGEST_SECRET); they were dropped"
                        )
                    });
                } else {
                    diagnostics.report(DiagnosticKind::Rejected, || {
                        format!("the ingest refused the events with HTTP {status}; they were dropped")
                    });
                }
                Round::Progress
            }
        }
    }

    /// Removes the events at `picked` (ascending positions) from the buffer.
    fn take(&mut self, picked: &[usize]) {
        if let Some(outbox) = &mut self.outbox {
            for &i in picked {
                outbox.settle(self.buffer[i].seq);
            }
        }
        if picked.last().is_some_and(|&last| last + 1 == picked.len()) {
            // One identity in the buffer's front: the usual case.
            for b in self.buffer.drain(..picked.len()) {
                if self.spare.len() < SPARE_BUFFERS && b.bytes.capacity() <= SPARE_CAPACITY {
                    let mut bytes = b.bytes;
                    bytes.clear();
                    self.spare.push(bytes);
                }
            }
        } else {
            let mut next = picked.iter().peekable();
            let mut position = 0;
            self.buffer.retain(|_| {
                let keep = next.next_if_eq(&&position).is_none();
                position += 1;
                keep
            });
        }
        // What remains is at least as old as what left, so `oldest_at` stays unless empty.
        if self.buffer.is_empty() {
            self.oldest_at = None;
        }
        self.commit_outbox();
    }
}

/// Batches encoded ahead of sending when the channel holds more (see `Flusher::ahead`).
const AHEAD_BATCHES: usize = 2;

/// Most buffers of sent events kept for reuse: as many as a burst buffers (`drain` takes the
/// whole channel), else those beyond a batch were freed at the burst's end. At most 2 MiB.
const SPARE_BUFFERS: usize = 2048;
/// A larger buffer of a sent event is freed rather than kept (most events are smaller).
const SPARE_CAPACITY: usize = 1024;

/// An encoded event waiting in the flusher's buffer.
struct Buffered {
    /// Order of arrival.
    seq: u64,
    /// The client that made the call: the payload's identity names it.
    client: Option<Arc<ClientInfo>>,
    bytes: Vec<u8>,
}

impl Buffered {
    fn label(&self) -> Option<&str> {
        self.client.as_deref().and_then(ClientInfo::label)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::record::{CallOutcome, CallRecord};
    use serde_json::json;
    use std::sync::Mutex;

    /// Accepts every payload and keeps how many events each one carried.
    struct Batches(Arc<Mutex<Vec<usize>>>);

    impl Transport for Batches {
        fn send(&mut self, body: Payload<'_>, _timeout: Duration) -> Answer {
            let payload: serde_json::Value = serde_json::from_slice(&body.to_vec()).unwrap();
            self.0.lock().unwrap().push(payload["events"].as_array().unwrap().len());
            Answer::Sent
        }
    }

    fn flusher(config: &Config) -> (Flusher, crossbeam_channel::Sender<Queued>, BufferPool, Arc<Mutex<Vec<usize>>>) {
        let (data_tx, data_rx) = crossbeam_channel::bounded(1024);
        let (_control_tx, control_rx) = crossbeam_channel::bounded(1);
        let shared = Arc::new(Handoff {
            counters: Counters::default(),
            diagnostics: Diagnostics::new(None),
            nudged: AtomicBool::new(false),
            closed: AtomicBool::new(false),
            identify_panicked: AtomicBool::new(false),
            server_version: Default::default(),
            backlog: Backlog::default(),
        });
        let sent = Arc::new(Mutex::new(Vec::new()));
        let pool = BufferPool::new();
        let transport = Box::new(Batches(sent.clone()));
        (Flusher::new(config, data_rx, control_rx, shared, transport, None, pool.clone()), data_tx, pool, sent)
    }

    fn queue(data: &crossbeam_channel::Sender<Queued>, pool: &BufferPool, n: usize) {
        for i in 0..n {
            let record = CallRecord::new("search", json!({ "i": i }), CallOutcome::Success { result: json!({}) });
            data.send(Queued::new(record, None, None, pool.take())).unwrap();
        }
    }

    /// A round sends the first batch once the threshold is reached, then only full batches:
    /// calls that keep coming are not sent a few at a time, one POST each. The rest goes on the
    /// next round, which applies the threshold again.
    #[test]
    fn a_round_sends_a_due_batch_then_only_full_ones() {
        let (mut f, data, pool, sent) = flusher(&Config::new("p").flush_threshold(5).max_batch_events(10));
        queue(&data, &pool, 25);
        f.wake();
        assert_eq!(*sent.lock().unwrap(), [10, 10]);
        assert_eq!(f.buffer.len(), 5);
        f.wake();
        assert_eq!(*sent.lock().unwrap(), [10, 10, 5]);
        assert!(f.buffer.is_empty());
        // Below the threshold nothing is due.
        queue(&data, &pool, 4);
        f.wake();
        assert_eq!(sent.lock().unwrap().len(), 3);
        assert_eq!(f.buffer.len(), 4);
    }

    /// With a buffer smaller than a batch, a round goes on while the buffer is full: waiting for
    /// a batch it cannot hold would leave the rest to the channel until the next tick.
    #[test]
    fn a_round_goes_on_while_a_buffer_smaller_than_a_batch_is_full() {
        let config = Config::new("p").flush_threshold(2).max_batch_events(10).max_buffer(6);
        let (mut f, data, pool, sent) = flusher(&config);
        queue(&data, &pool, 40);
        f.wake();
        assert_eq!(*sent.lock().unwrap(), [6, 6, 6]);
    }

    /// The calling threads' count of the channel follows what the flusher takes off.
    #[test]
    fn the_backlog_is_taken_off_as_records_are_received() {
        let (mut f, data, pool, _sent) = flusher(&Config::new("p").flush_threshold(1000));
        queue(&data, &pool, 7);
        for _ in 0..7 {
            f.shared.backlog.add_one();
        }
        f.wake();
        assert_eq!(f.shared.backlog.get(), 0);
        assert_eq!(f.buffer.len(), 7);
    }
}
