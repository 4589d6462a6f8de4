//! The flusher thread of a tracker: takes records off the hand-off channel, caps, redacts and
//! serialises them, and hands bounded batches to a few sender threads that POST them with the
//! retry policy of docs/wire-format.md#delivery-and-retry.
//!
//! It wakes on a short tick and drains the channel with `try_recv`, rather than blocking on
//! `recv`: a blocked receiver makes every sender after an idle gap pay a thread wake-up. The
//! calling threads only nudge it (once per drain) when the channel fills up (a quarter of it, at
//! most 2 000 records, or the flush threshold if larger); the tick applies the threshold. Flush and shutdown arrive on
//! the same small control channel (the OpenTelemetry batch-processor shape).
//!
//! The flusher never waits on the network itself: POSTs run on up to [`SENDERS`] sender threads
//! it starts as they are needed, one batch in flight per identity (so that each client's events
//! arrive in order) and several identities at once. Its own loop stays free to hear a shutdown,
//! and to drain the channel to the outbox on every tick however slow the ingest is.
//!
//! After the first batch of a round, a completed POST is followed by another only when a full
//! batch is buffered or the events were already due at the round: the rest waits for the next
//! round, so that a POST's fixed cost is shared by a full batch when calls keep coming.
//!
//! A drain takes only what the channel held when it started, at most two batches before the
//! first dispatch (unless an outbox needs every event written at once): callers faster than the
//! delivery must not keep the flusher encoding events only to drop them as the oldest.
//!
//! With an outbox, memory holds the oldest `max_buffer` events and the rest live on disk only
//! (read back as memory frees): what an outage can hold is bounded by `outbox_max_bytes`.

use crate::config::{Config, Identity};
use crate::flush::call_id::CallIds;
use crate::flush::encode::{encode, encode_edited, payload_head, Invalid, Payload, PAYLOAD_TAIL};
use crate::flush::event_log::{CallEntry, EventLog, MethodEntry, Note, Notes, ToolsEntry};
use crate::flush::infer::IntentInference;
use crate::flush::outbox::Outbox;
use crate::flush::queues::EventQueues;
use crate::flush::screen::Screen;
use crate::flush::transport::{backoff, IngestTransport, PostAnswer};
use crate::model::diagnostics::{DiagnosticKind, Diagnostics};
use crate::model::record::{ClientInfo, IntentSource};
use crate::model::stats::Counters;
use crate::record::{BufferPool, InvocationRef, Queued};
use crate::redact::Redactor;
use crossbeam_channel::{Receiver, Sender};
use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicIsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often the flusher looks at the channel when nothing wakes it.
pub(crate) const TICK: Duration = Duration::from_millis(100);

pub(crate) use crate::flush::transport::SENDERS;

/// How long past a request's own timeout the flusher waits, after a shutdown, for its answer.
const ANSWER_GRACE: Duration = Duration::from_secs(1);

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
    /// What the calling threads note for the event log besides the calls (methods, tool lists).
    pub notes: Notes,
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

/// A batch handed to a sender thread: the events' bytes travel with it and come back with its
/// answer (to the buffer when it is to be retried, to the spare buffers once it is settled).
struct Job {
    /// The events' sequence numbers, ascending.
    seqs: Vec<u64>,
    /// The payload's identity, which has no other batch in flight meanwhile.
    label: Option<String>,
    head: Vec<u8>,
    events: Vec<Vec<u8>>,
    timeout: Duration,
    /// The next full batch of the same identity, sent by the same thread once this one is
    /// accepted: under a steady flow, one hand-off between threads per chain rather than per POST.
    next: Option<Box<Job>>,
    /// The last batch of its chain: its answer frees the chain's sender thread.
    last: bool,
}

/// A sender thread's answer to a [`Job`].
struct JobDone {
    job: Job,
    answer: PostAnswer,
}

/// Runs on each sender thread: POSTs the jobs it is given until the flusher is gone. A chained
/// batch goes only after its predecessor was accepted and while the tracker is not shut down;
/// otherwise it is handed back unsent.
fn send_jobs(transport: Arc<dyn IngestTransport>, jobs: Receiver<Job>, done: Sender<JobDone>, shared: Arc<Handoff>) {
    while let Ok(first) = jobs.recv() {
        let mut job = Some(first);
        let mut go = true;
        while let Some(mut this) = job {
            job = this.next.take().map(|j| *j);
            let answer = if go {
                let body = Payload::new(&this.head, this.events.iter().map(Vec::as_slice));
                // A transport that panics loses nothing: its batch is retried.
                catch_unwind(AssertUnwindSafe(|| transport.send(body, this.timeout))).unwrap_or_else(|_| {
                    PostAnswer::Retry { status: None, after: None, reason: "the transport panicked".to_string() }
                })
            } else {
                PostAnswer::NotSent
            };
            go = answer == PostAnswer::Sent && !shared.closed.load(Ordering::SeqCst);
            if done.send(JobDone { job: this, answer }).is_err() {
                return;
            }
        }
    }
}

/// Which batches a dispatch may start.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Due {
    /// A tick or a nudge: when the threshold is reached or the oldest event waited long enough,
    /// every buffered event (as senders free up), later ones only in full batches.
    Round,
    /// A POST ended: full batches, and the events already due at the last round.
    Completion,
    /// A flush or shutdown: everything, now.
    All,
}

pub(crate) struct Flusher {
    data: Receiver<Queued>,
    control: Receiver<Control>,
    shared: Arc<Handoff>,
    transport: Arc<dyn IngestTransport>,
    redactor: Redactor,
    /// Sampling, error-reason counts and `before_send`.
    screen: Screen,
    settings: Settings,
    /// Encoded events waiting to be sent or in flight, per identity.
    queues: EventQueues,
    /// Chains of batches in flight (see [`Job::next`]), one per sender thread at most.
    chains: usize,
    /// Jobs for the sender threads, and their answers.
    jobs: Sender<Job>,
    jobs_rx: Receiver<Job>,
    done: Sender<JobDone>,
    done_rx: Receiver<JobDone>,
    /// Sender threads started.
    senders: usize,
    /// The highest sequence number buffered when a round last found a batch due: completions
    /// go on sending these without waiting for a full batch.
    due_through: Option<u64>,
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
    /// The on-disk log of the undelivered events (`Config::outbox_dir`): appended as events are
    /// encoded, settled as they are delivered or dropped.
    outbox: Option<Outbox>,
    /// With an outbox, the oldest event kept on disk only: it and every live event after it wait
    /// there until memory has room (see [`refill`](Self::refill)).
    disk_next: Option<u64>,
    /// Events appended to the outbox since its last commit that are on disk only.
    disk_unwritten: usize,
    /// An outbox was configured (it is closed at shutdown, before the batches in flight end).
    with_outbox: bool,
    /// Commands that arrived while a flush was delivering, handled after it.
    deferred: VecDeque<Control>,
    /// Where the records' buffers go back once encoded.
    pool: BufferPool,
    /// The local event log (`Config::event_log`), written from the encoded events.
    event_log: Option<EventLog>,
    /// `Config::infer_intent`, when set and there is an event log to take its answers.
    inference: Option<IntentInference>,
}

impl Flusher {
    // Each is a part the tracker made (the outbox and the event log fail `init` when unopenable).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        config: &Config,
        data: Receiver<Queued>,
        control: Receiver<Control>,
        shared: Arc<Handoff>,
        transport: Box<dyn IngestTransport>,
        outbox: Option<Outbox>,
        pool: BufferPool,
        event_log: Option<EventLog>,
    ) -> Self {
        let (jobs, jobs_rx) = crossbeam_channel::unbounded();
        let (done, done_rx) = crossbeam_channel::unbounded();
        let mut flusher = Flusher {
            data,
            control,
            shared,
            transport: Arc::from(transport),
            redactor: config.redactor(),
            screen: Screen::new(config),
            inference: IntentInference::new(config, event_log.is_some()),
            settings: Settings {
                project_id: config.project_id.clone(),
                identity: config.identity.clone(),
                flush_interval: config.flush_interval,
                flush_threshold: config.flush_threshold,
                max_buffer: config.max_buffer.max(1),
                max_batch_events: config.max_batch_events,
                max_batch_bytes: config.max_batch_bytes,
                request_timeout: config.request_timeout,
                shutdown_timeout: config.shutdown_timeout,
                retry_initial_backoff: config.retry_initial_backoff,
                retry_max_backoff: config.retry_max_backoff,
            },
            queues: EventQueues::default(),
            chains: 0,
            jobs,
            jobs_rx,
            done,
            done_rx,
            senders: 0,
            due_through: None,
            next_seq: 0,
            oldest_at: None,
            failures: 0,
            next_attempt: None,
            split_limit: None,
            channel_full_seen: 0,
            scratch: Vec::with_capacity(4096),
            call_ids: CallIds::new(),
            spare: Vec::new(),
            disk_next: None,
            disk_unwritten: 0,
            with_outbox: outbox.is_some(),
            outbox,
            deferred: VecDeque::new(),
            pool,
            event_log,
        };
        flusher.recover();
        flusher
    }

    /// Buffers the events a previous process left in the outbox (the oldest `max_buffer`; the
    /// rest wait on disk); they count as captured.
    fn recover(&mut self) {
        let Some(outbox) = &mut self.outbox else { return };
        let recovered = outbox.take_recovered();
        let n = recovered.len();
        for r in recovered {
            self.next_seq = r.seq + 1;
            if self.queues.len() >= self.settings.max_buffer {
                self.disk_next.get_or_insert(r.seq);
                continue;
            }
            self.queues.push_labelled(r.client.as_deref(), r.seq, r.bytes);
        }
        if n > 0 {
            // They waited already: due at the first round.
            self.oldest_at = Instant::now().checked_sub(self.settings.flush_interval).or(Some(Instant::now()));
            Counters::add(&self.shared.counters.recovered, n);
            Counters::add(&self.shared.counters.captured, n);
        }
        self.commit_outbox();
    }

    /// Events in memory and not in flight.
    fn ready(&self) -> usize {
        self.queues.ready()
    }

    /// Drops the oldest event not in flight (`max_buffer`), in the outbox too.
    fn drop_oldest(&mut self) {
        if let Some(w) = self.queues.drop_oldest() {
            if let Some(outbox) = &mut self.outbox {
                outbox.settle(w.seq);
            }
            recycle(&mut self.spare, w.bytes);
        }
    }

    /// Writes what the outbox was given since the last commit, and drops the events its byte
    /// bound evicts (counted as `outbox_overflow`). False when the write failed.
    fn commit_outbox(&mut self) -> bool {
        let Some(outbox) = &mut self.outbox else { return true };
        let diagnostics = &self.shared.diagnostics;
        let disk_only = std::mem::take(&mut self.disk_unwritten);
        let ok = match outbox.commit() {
            Ok(evicted) if evicted.is_empty() => true,
            Ok(evicted) => {
                let left = self.queues.evict(&evicted);
                if self.queues.is_empty() {
                    self.oldest_at = None;
                }
                let n = evicted.len();
                Counters::add(&self.shared.counters.outbox_overflow, n);
                let max = outbox.max_bytes();
                diagnostics.report(DiagnosticKind::OutboxOverflow, || {
                    format!(
                        "the undelivered events outgrew the outbox ({max} bytes); dropped the {n} oldest \
                         ({left} of them from memory) and will drop more while it stays full (see Config::outbox_max_bytes)"
                    )
                });
                true
            }
            Err(e) => {
                // The events that were to live on disk only are in neither place: counted.
                if disk_only > 0 {
                    Counters::add(&self.shared.counters.buffer_overflow, disk_only);
                }
                diagnostics.report(DiagnosticKind::Outbox, || {
                    format!(
                        "could not write to the outbox ({e}); {disk_only} event(s) that did not fit in memory were \
                         dropped, the rest are kept in memory only (within Config::max_buffer) until it works again"
                    )
                });
                false
            }
        };
        self.disk_next = self.disk_next.and_then(|d| outbox.first_live_from(d));
        Counters::set(&self.shared.counters.on_disk, outbox.live_len());
        ok
    }

    /// Moves the newest events beyond `max_buffer` out of memory: the outbox has them.
    fn spill(&mut self) {
        if self.outbox.is_none() {
            return;
        }
        while self.ready() > self.settings.max_buffer {
            let Some(w) = self.queues.pop_newest() else { break };
            self.disk_next = Some(w.seq);
            recycle(&mut self.spare, w.bytes);
        }
    }

    /// Reads events kept on disk only back into memory, oldest first, as far as `max_buffer`
    /// allows.
    fn refill(&mut self) {
        let room = self.settings.max_buffer.saturating_sub(self.ready());
        let (Some(from), Some(outbox)) = (self.disk_next, &mut self.outbox) else { return };
        if room == 0 {
            return;
        }
        match outbox.read_from(from, room) {
            Ok(events) => {
                if self.queues.is_empty() && !events.is_empty() {
                    self.oldest_at = Instant::now().checked_sub(self.settings.flush_interval).or(Some(Instant::now()));
                }
                let last = events.last().map(|r| r.seq);
                for r in events {
                    self.queues.push_labelled(r.client.as_deref(), r.seq, r.bytes);
                }
                self.disk_next = last.and_then(|l| outbox.first_live_from(l + 1));
            }
            Err(e) => {
                // Unreadable: settled and counted, rather than retried for ever.
                let lost = outbox.settle_from(from);
                self.disk_next = None;
                Counters::add(&self.shared.counters.outbox_overflow, lost);
                self.shared.diagnostics.report(DiagnosticKind::Outbox, || {
                    format!("could not read the outbox back ({e}); {lost} event(s) kept there were dropped")
                });
                self.commit_outbox();
            }
        }
    }

    pub(crate) fn run(mut self) {
        let (control, done) = (self.control.clone(), self.done_rx.clone());
        let mut next_wake = Instant::now() + TICK;
        loop {
            let command = match self.deferred.pop_front() {
                Some(c) => Some(c),
                None => {
                    let timeout = next_wake.saturating_duration_since(Instant::now());
                    crossbeam_channel::select! {
                        recv(control) -> msg => match msg {
                            Ok(c) => Some(c),
                            // Every tracker handle is gone without a shutdown: a last bounded flush.
                            Err(_) => {
                                self.shared.closed.store(true, Ordering::SeqCst);
                                self.finish(Instant::now() + self.settings.shutdown_timeout);
                                self.settle_in_flight();
                                return;
                            }
                        },
                        recv(done) -> d => {
                            if let Ok(d) = d {
                                let left = self.complete(d);
                                self.dispatch(Due::Completion, None);
                                self.drain_up_to(left);
                            }
                            None
                        },
                        default(timeout) => None,
                    }
                }
            };
            match command {
                Some(Control::Nudge) => {
                    self.wake();
                    next_wake = Instant::now() + TICK;
                }
                Some(Control::Flush { deadline, reply }) => {
                    let done = self.flush_until(deadline);
                    let _ = reply.send(done);
                }
                Some(Control::Shutdown { deadline, reply }) => {
                    let done = self.finish(deadline);
                    let _ = reply.send(done);
                    self.settle_in_flight();
                    return;
                }
                None => {
                    if Instant::now() >= next_wake {
                        self.wake();
                        next_wake = Instant::now() + TICK;
                    }
                }
            }
        }
    }

    /// One round on a tick or a nudge: encode a few batches, start what is due, and buffer the
    /// rest unless a batch is in flight: then its answer starts the next batch and encodes about
    /// as many events as it took, so that encoding overlaps the POST instead of delaying it.
    fn wake(&mut self) {
        // While batches are in flight, encode only up to a few batches ahead of them: callers
        // outpacing delivery wait in the channel (and are dropped there, cheaply, when it is
        // full) rather than being encoded to be dropped as the oldest. The nudge stays set until
        // a completion drains, so that a full channel does not nudge on every call.
        let ahead = match self.queues.jobs_out() == 0 {
            true => self.ahead(),
            false => self.ahead().saturating_sub(self.ready()),
        };
        if ahead > 0 {
            self.drain_up_to(ahead);
        }
        self.dispatch(Due::Round, None);
        if self.queues.jobs_out() == 0 {
            // Nothing started (a backoff, or less than a batch due): buffered.
            self.drain();
        }
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
    /// all of them were delivered or dropped before `deadline`.
    fn flush_until(&mut self, deadline: Instant) -> bool {
        let mut left = self.data.len();
        loop {
            let take = left.min(self.ahead());
            self.drain_up_to(take);
            left -= take;
            let target = self.next_seq.checked_sub(1);
            if !self.deliver_until(deadline, target) {
                return false;
            }
            if left == 0 {
                return true;
            }
        }
    }

    /// Whether every event up to `target` has left (delivered or dropped).
    fn delivered_through(&self, target: Option<u64>) -> bool {
        let Some(target) = target else { return true };
        self.queues.oldest().is_none_or(|seq| seq > target) && self.disk_next.is_none_or(|d| d > target)
    }

    /// Starts batches and handles their answers until every event up to `target` has left or
    /// `deadline` passes, waiting out backoffs that end before it; with an outbox, the channel is
    /// still drained on every tick. A shutdown arriving meanwhile ends a flush (false).
    fn deliver_until(&mut self, deadline: Instant, target: Option<u64>) -> bool {
        let (control, done, never) = (self.control.clone(), self.done_rx.clone(), crossbeam_channel::never());
        let mut control_open = true;
        let mut next_drain = Instant::now() + TICK;
        loop {
            if self.delivered_through(target) {
                return true;
            }
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            if self.queues.jobs_out() == 0 && self.next_attempt.is_some_and(|t| t >= deadline) {
                return false;
            }
            self.dispatch(Due::All, Some(deadline));
            // Only an outbox is drained while delivering: without one, waking for a drain would
            // spin once the first tick has passed.
            let mut wait_until = if self.outbox.is_some() { deadline.min(next_drain) } else { deadline };
            if let Some(t) = self.next_attempt {
                wait_until = wait_until.min(t.max(now));
            }
            let commands = if control_open { &control } else { &never };
            crossbeam_channel::select! {
                recv(done) -> d => if let Ok(d) = d {
                    self.complete(d);
                },
                recv(commands) -> msg => match msg {
                    Ok(Control::Nudge) => {}
                    Ok(c) => {
                        let stop = matches!(c, Control::Shutdown { .. });
                        self.deferred.push_back(c);
                        if stop {
                            return false;
                        }
                    }
                    Err(_) => control_open = false,
                },
                default(wait_until.saturating_duration_since(now)) => {},
            }
            if self.outbox.is_some() && Instant::now() >= next_drain {
                self.drain();
                next_drain = Instant::now() + TICK;
            }
        }
    }

    /// Moves what the channel holds now into the buffer, encoding each event.
    fn drain(&mut self) {
        self.drain_up_to(usize::MAX);
    }

    /// Like [`drain`](Self::drain), taking at most `limit` events.
    fn drain_up_to(&mut self, limit: usize) {
        // The tool list noted before these calls gives them their descriptor hash.
        self.log_notes();
        let mut invalid = 0;
        let mut overflow = 0;
        let present = self.data.len().min(limit);
        // One slot, reused: a record is encoded where it was received, not moved (it is large).
        let mut current: Option<Queued> = None;
        let mut received = 0;
        let edits = self.screen.edits();
        for _ in 0..present {
            let slot = &mut current;
            *slot = self.data.try_recv().ok();
            let Some(queued) = slot.as_mut() else { break };
            received += 1;
            self.scratch.clear();
            if !self.screen.passes(queued, &self.shared.counters) {
                *slot = None;
                continue;
            }
            // Encoded straight into a sent event's buffer when there is one, else into `scratch`
            // and copied out at its exact size.
            let mut spare = self.spare.pop();
            let out = spare.as_mut().unwrap_or(&mut self.scratch);
            let (client, encoded) = if edits {
                // The record leaves its slot (`queued` was the slot's). Its turn is read first: the
                // event `before_send` sees has no place for it.
                let mut turn = None;
                let Some(mut e) = slot.take().and_then(|q| {
                    if self.event_log.is_some() {
                        turn = q.invocation().and_then(|i| i.turn.map(str::to_owned));
                    }
                    self.screen.edit(q, &self.redactor, &self.shared.counters, &self.shared.diagnostics)
                }) else {
                    self.spare.extend(spare);
                    continue;
                };
                let call_id = self.call_ids.next_id();
                let client = e.client.take();
                let logged = self.event_log.as_ref().map(|_| {
                    (e.tool_name.clone(), e.session_id.clone(), e.model.clone(), e.timestamp_ms, e.intent.is_none())
                });
                let encoded = encode_edited(e, call_id, out);
                if let (Some(log), Some((tool, session, model, ts, no_intent)), Ok(())) =
                    (&mut self.event_log, logged, &encoded)
                {
                    let shared = &self.shared;
                    let inferred = match (&self.inference, no_intent) {
                        (Some(i), true) => i.infer(out, &self.redactor, &shared.counters, &shared.diagnostics),
                        _ => None,
                    };
                    // The client's texts stay out: `before_send` could not see them to vet them.
                    let entry = LogCall {
                        call_id,
                        tool: &tool,
                        session: session.as_deref(),
                        model: model.as_deref(),
                        timestamp_ms: ts,
                        turn: turn.as_deref(),
                        texts: LogTexts::default(),
                        inferred: inferred.as_deref(),
                    };
                    entry.write(log, out, client.as_deref(), &self.settings.identity, &self.shared);
                }
                (client, encoded)
            } else {
                // Encoded where it lies: a record is large to move.
                let client = queued.client.take();
                let call_id = self.call_ids.next_id();
                let encoded = encode(queued.parts(), call_id, &self.redactor, out);
                if let (Some(log), Ok(())) = (&mut self.event_log, &encoded) {
                    let source = queued.intent_source();
                    let native = source == Some(IntentSource::Native);
                    let shared = &self.shared;
                    let inferred = match (&self.inference, source) {
                        (Some(i), None) => i.infer(out, &self.redactor, &shared.counters, &shared.diagnostics),
                        _ => None,
                    };
                    let invocation = queued.invocation();
                    let entry = LogCall {
                        call_id,
                        tool: &queued.tool_name,
                        session: queued.session_id.as_deref(),
                        model: queued.model(),
                        timestamp_ms: queued.timestamp_ms,
                        turn: invocation.and_then(|i| i.turn),
                        texts: invocation.map(|i| LogTexts::of(i, native, &self.redactor)).unwrap_or_default(),
                        inferred: inferred.as_deref(),
                    };
                    entry.write(log, out, client.as_deref(), &self.settings.identity, &self.shared);
                }
                self.pool.give(queued.take_buffer());
                *slot = None;
                (client, encoded)
            };
            match encoded {
                Ok(()) => {
                    let seq = self.next_seq;
                    self.next_seq += 1;
                    if let Some(outbox) = &mut self.outbox {
                        outbox.append(
                            seq,
                            client.as_deref().and_then(ClientInfo::label),
                            spare.as_ref().unwrap_or(&self.scratch),
                        );
                        if self.disk_next.is_some() {
                            // Newer than what waits on disk: it waits there too, in order.
                            self.disk_unwritten += 1;
                            if let Some(bytes) = spare {
                                recycle(&mut self.spare, bytes);
                            }
                            continue;
                        }
                    }
                    let bytes = spare.unwrap_or_else(|| self.scratch.as_slice().to_vec());
                    if self.queues.is_empty() {
                        self.oldest_at = Some(Instant::now());
                    }
                    self.queues.push(client.as_ref(), seq, bytes);
                }
                Err(Invalid::EmptyToolName) => {
                    invalid += 1;
                    // An invalid event writes nothing: the buffer is still empty.
                    self.spare.extend(spare);
                }
            }
            if self.outbox.is_none() && self.ready() > self.settings.max_buffer {
                self.drop_oldest();
                overflow += 1;
            }
        }
        self.shared.backlog.take_off(received);
        // Cleared once the backlog is taken off: cleared before, calls during the drain saw the
        // records being drained still counted and nudged again for them.
        self.shared.nudged.store(false, Ordering::SeqCst);
        if self.commit_outbox() {
            self.spill();
        } else {
            // The outbox failed: memory is the bound again.
            while self.ready() > self.settings.max_buffer {
                self.drop_oldest();
                overflow += 1;
            }
        }
        if invalid > 0 {
            Counters::add(&self.shared.counters.invalid, invalid);
            self.shared.diagnostics.report(DiagnosticKind::Invalid, || {
                format!("dropped {invalid} event(s) with an empty tool name (the ingest requires one)")
            });
        }
        self.count_overflow(overflow);
        self.report_calling_thread_problems();
        self.commit_log();
    }

    /// Adds the notes of the calling threads (tool lists, other methods) to the event log.
    fn log_notes(&mut self) {
        let Some(log) = &mut self.event_log else { return };
        let server_version = server_version(&self.settings.identity, &self.shared);
        let (notes, dropped) = self.shared.notes.take();
        log.count_lost(dropped);
        for note in notes {
            match note {
                Note::Tools { timestamp_ms, tools } => {
                    let tools = tools.as_array().map(Vec::as_slice).unwrap_or_default();
                    log.tools(&ToolsEntry { timestamp_ms, server_version, tools });
                }
                Note::Method { method, timestamp_ms, target, is_error, duration_ms, session, model, client } => {
                    log.method(&MethodEntry {
                        method,
                        timestamp_ms,
                        target: target.as_deref(),
                        is_error,
                        duration_ms,
                        session: session.as_deref(),
                        conversation: None,
                        model: model.as_deref(),
                        client: client.as_deref().or(self.settings.identity.client.as_deref()),
                        server_version,
                    });
                }
            }
        }
    }

    /// Writes what the event log was given in this drain, and publishes its counts.
    fn commit_log(&mut self) {
        self.log_notes();
        let Some(log) = &mut self.event_log else { return };
        let lost_before = log.lost();
        log.commit();
        let counters = &self.shared.counters;
        Counters::set(&counters.log_written, log.written() as usize);
        Counters::set(&counters.log_lost, log.lost() as usize);
        Counters::set(&counters.log_failures, log.failures() as usize);
        if log.lost() > lost_before {
            let (lost, dir) = (log.lost(), log.dir().display().to_string());
            self.shared.diagnostics.report(DiagnosticKind::EventLog, || {
                format!(
                    "could not write the event log in {dir}; {lost} record(s) are missing from it (the ingest still \
                     gets the events): check the directory's permissions and free space"
                )
            });
        }
    }

    fn count_overflow(&self, overflow: usize) {
        if overflow > 0 {
            Counters::add(&self.shared.counters.buffer_overflow, overflow);
            let max = self.settings.max_buffer;
            self.shared.diagnostics.report(DiagnosticKind::BufferOverflow, || {
                format!(
                    "more than {max} events waited for the ingest; dropped the {overflow} oldest, and will drop more \
                     while it lags (raise Config::max_buffer, or set Config::outbox_dir to keep them on disk)"
                )
            });
        }
    }

    /// Problems noticed on calling threads are reported here, to keep their I/O off those threads.
    fn report_calling_thread_problems(&mut self) {
        let full = self.shared.counters.channel_full.load(Ordering::SeqCst);
        if full > self.channel_full_seen {
            self.channel_full_seen = full;
            self.shared.diagnostics.report(DiagnosticKind::ChannelFull, || {
                format!(
                    "calls came faster than events could be queued; {full} were dropped so far (see Config::max_buffer)"
                )
            });
        }
        if self.shared.identify_panicked.load(Ordering::SeqCst) {
            self.shared.diagnostics.report(DiagnosticKind::IdentifyPanicked, || {
                "the identify callback panicked; those calls were recorded without a user".to_string()
            });
        }
    }

    /// Starts the batches `due` allows on free senders, unless a backoff runs. A batch takes the
    /// oldest event whose identity has no batch in flight, and the next ones of that identity.
    fn dispatch(&mut self, due: Due, deadline: Option<Instant>) {
        let mut due = due;
        if due == Due::Round {
            let now = Instant::now();
            let waited = self.oldest_at.is_some_and(|t| now.duration_since(t) >= self.settings.flush_interval);
            if self.ready() >= self.settings.flush_threshold.max(1) || waited || self.disk_next.is_some() {
                self.due_through = self.queues.newest().max(self.due_through);
            }
            due = Due::Completion;
        }
        // A full batch, or as full as the buffer can hold when `max_buffer` is smaller.
        let full = self.settings.flush_threshold.max(self.settings.max_batch_events.min(self.settings.max_buffer));
        while self.chains < SENDERS {
            let now = Instant::now();
            if self.next_attempt.is_some_and(|t| now < t) {
                return;
            }
            self.refill();
            let Some((first, seq)) = self.queues.oldest_idle() else { return };
            let go = match due {
                Due::All => true,
                _ => self.ready() >= full || self.due_through.is_some_and(|d| seq <= d) || self.disk_next.is_some(),
            };
            if !go {
                return;
            }
            let timeout = match deadline {
                Some(d) => self.settings.request_timeout.min(d.saturating_duration_since(now)),
                None => self.settings.request_timeout,
            };
            // A chain waits on its first batch's answer: not when a deadline bounds the wait.
            let chain = if deadline.is_none() { MAX_CHAIN } else { 1 };
            self.start(first, timeout, chain);
        }
    }

    /// Starts a batch of queue `q`'s oldest events on a sender thread, followed by up to
    /// `chain - 1` more full batches of the same identity.
    fn start(&mut self, q: usize, timeout: Duration, chain: usize) {
        let client = self.queues.client(q).cloned();
        let head = match (&self.settings.identity.server_version, self.shared.server_version.get()) {
            (None, Some(version)) => {
                let identity = Identity { server_version: Some(version.clone()), ..self.settings.identity.clone() };
                payload_head(&self.settings.project_id, &identity, client.as_deref())
            }
            _ => payload_head(&self.settings.project_id, &self.settings.identity, client.as_deref()),
        };
        let label = client.as_deref().and_then(ClientInfo::label).map(str::to_owned);
        let limit = self.split_limit.unwrap_or(self.settings.max_batch_events).min(self.settings.max_batch_events);
        let frame = head.len() + PAYLOAD_TAIL.len();
        let mut parts = Vec::new();
        while parts.len() < chain.max(1) {
            // After the first, only full batches: the rest waits for the next round.
            let only_full = !parts.is_empty();
            let Some(taken) = self.queues.take(q, limit, frame, self.settings.max_batch_bytes, only_full) else {
                break;
            };
            parts.push(Job {
                seqs: taken.seqs,
                label: label.clone(),
                head: head.clone(),
                events: taken.events,
                timeout,
                next: None,
                last: false,
            });
        }
        let Some(mut job) = parts.pop() else { return };
        job.last = true;
        while let Some(mut before) = parts.pop() {
            before.next = Some(Box::new(job));
            job = before;
        }
        self.chains += 1;
        if self.senders < self.chains {
            self.spawn_sender();
        }
        if let Err(e) = self.jobs.send(job) {
            // Cannot happen while the flusher holds a receiver; answered as a failed attempt.
            let mut job = Some(e.into_inner());
            let mut answer = PostAnswer::Retry { status: None, after: None, reason: "no sender thread".to_string() };
            while let Some(mut this) = job {
                job = this.next.take().map(|j| *j);
                self.complete(JobDone { job: this, answer });
                answer = PostAnswer::NotSent;
            }
        }
    }

    /// Starts one more sender thread; without it, the jobs queue for the ones there are.
    fn spawn_sender(&mut self) {
        let (transport, jobs, done) = (self.transport.clone(), self.jobs_rx.clone(), self.done.clone());
        let shared = self.shared.clone();
        let started = std::thread::Builder::new()
            .name("mcpeye-sender".into())
            .spawn(move || send_jobs(transport, jobs, done, shared))
            .is_ok();
        if started {
            self.senders += 1;
        } else if self.senders == 0 {
            self.shared.diagnostics.report(DiagnosticKind::Network, || {
                "could not start a thread to send events; they wait in memory (or the outbox) until one starts"
                    .to_string()
            });
        }
    }

    /// Takes a batch's answer: settles its events or puts them back for a retry. Returns how
    /// many left the buffer.
    fn complete(&mut self, done: JobDone) -> usize {
        let JobDone { job, answer } = done;
        if job.last {
            self.chains -= 1;
        }
        let n = job.seqs.len();
        let shared = self.shared.clone();
        let diagnostics = &shared.diagnostics;
        let counters = &shared.counters;
        let left = match answer {
            PostAnswer::Sent => {
                let found = self.settle_job(job, false);
                Counters::add(&counters.sent, found);
                self.failures = 0;
                self.next_attempt = None;
                self.split_limit = self.split_limit.map(|l| l * 2).filter(|l| *l < self.settings.max_batch_events);
                found
            }
            PostAnswer::Retry { status, after, reason } => {
                self.settle_job(job, true);
                self.failures = self.failures.saturating_add(1);
                let delay = after.unwrap_or_else(|| {
                    backoff(self.failures, self.settings.retry_initial_backoff, self.settings.retry_max_backoff)
                });
                self.next_attempt = Some(Instant::now() + delay);
                let waiting = counters.snapshot().pending;
                match status {
                    None => diagnostics.report(DiagnosticKind::Network, || {
                        format!("could not reach the ingest ({reason}); {waiting} event(s) wait, retried with backoff")
                    }),
                    Some(_) => diagnostics.report(DiagnosticKind::Retrying, || {
                        format!("the ingest answered {reason}; {waiting} event(s) wait, retried with backoff")
                    }),
                }
                0
            }
            PostAnswer::NotSent => {
                self.settle_job(job, true);
                0
            }
            PostAnswer::TooLarge if n == 1 => {
                let found = self.settle_job(job, false);
                Counters::add(&counters.too_large, found);
                diagnostics.report(DiagnosticKind::TooLarge, || {
                    "the ingest refused a single event as too large (413); 1 event was dropped".to_string()
                });
                found
            }
            PostAnswer::TooLarge => {
                self.settle_job(job, true);
                self.split_limit = Some(n.div_ceil(2));
                0
            }
            PostAnswer::Rejected { status } => {
                let found = self.settle_job(job, false);
                Counters::add(&counters.rejected, found);
                if status == 401 || status == 403 {
                    diagnostics.report(DiagnosticKind::Unauthorized, || {
                        format!(
                            "the ingest refused {found} event(s) with HTTP {status}: the ingest secret is likely wrong \
                             or missing (Config::ingest_secret or MCPEYE_INGEST_SECRET); they were dropped"
                        )
                    });
                } else {
                    diagnostics.report(DiagnosticKind::Rejected, || {
                        format!("the ingest refused {found} event(s) with HTTP {status}; they were dropped")
                    });
                }
                found
            }
        };
        if left > 0 {
            self.commit_outbox();
        } else {
            // Events back from a failed batch count against the bound again.
            self.enforce_bound();
        }
        left
    }

    /// Keeps the ready events within `max_buffer`: beyond it, the newest wait on disk with an
    /// outbox, or the oldest are dropped without one.
    fn enforce_bound(&mut self) {
        if self.outbox.is_some() {
            self.spill();
            return;
        }
        let mut overflow = 0;
        while self.ready() > self.settings.max_buffer {
            self.drop_oldest();
            overflow += 1;
        }
        self.count_overflow(overflow);
    }

    /// Gives a batch's events back to their queue (`retry`), or lets them go, settled in the
    /// outbox. Returns how many of them were still held (the others were dropped meanwhile, and
    /// counted then).
    fn settle_job(&mut self, job: Job, retry: bool) -> usize {
        let (spare, outbox) = (&mut self.spare, &mut self.outbox);
        let found = self.queues.answer(job.label.as_deref(), job.seqs, job.events, retry, |left, bytes| {
            if let (Some(seq), Some(outbox)) = (left, outbox.as_mut()) {
                outbox.settle(seq);
            }
            recycle(spare, bytes);
        });
        // What remains is at least as old as what left, so `oldest_at` stays unless empty.
        if self.queues.is_empty() {
            self.oldest_at = None;
        }
        found
    }

    /// Final delivery before exit, within `deadline`. Then, with an outbox, every event not
    /// delivered (the channel's included) is on disk for the next start; without one, every
    /// event neither delivered nor in flight is counted `unsent`, and one diagnostic says how
    /// many. True when everything was delivered.
    fn finish(&mut self, deadline: Instant) -> bool {
        let done = match self.outbox {
            Some(_) => {
                self.drain();
                self.deliver_until(deadline, Some(u64::MAX))
            }
            // A few batches at a time, as a flush does: a large backlog encoded at once would put
            // each event in a fresh buffer, where sent events' buffers are reused while cached.
            None => self.flush_until(deadline) && self.deliver_until(deadline, Some(u64::MAX)),
        };
        // Records that slipped in while closing.
        self.drain();
        let in_flight = self.queues.in_flight();
        if let Some(outbox) = &mut self.outbox {
            let _ = outbox.commit();
            Counters::set(&self.shared.counters.on_disk, outbox.live_len());
            // Closed before the shutdown is answered, freeing its slot for a tracker started next;
            // a batch still in flight is on disk too, and may be delivered twice.
            self.outbox = None;
            let kept = self.shared.counters.snapshot().pending;
            if kept > 0 {
                self.shared.diagnostics.report(DiagnosticKind::ShutdownTimeout, || {
                    format!(
                        "{kept} event(s) could not be sent before the shutdown timeout; the outbox keeps them on disk \
                         for the next start ({in_flight} of them in a request still in flight)"
                    )
                });
            }
            return done && kept == 0;
        }
        let unsent = self.drop_unsent();
        if unsent > 0 || in_flight > 0 {
            self.shared.diagnostics.report(DiagnosticKind::ShutdownTimeout, || {
                format!(
                    "{unsent} event(s) could not be sent before the shutdown timeout and were dropped (Stats::dropped.unsent); \
                     {in_flight} more are in a request still in flight, counted sent or unsent when it ends \
                     (raise Config::shutdown_timeout, or set Config::outbox_dir to keep them for the next start)"
                )
            });
        }
        done && unsent == 0 && in_flight == 0
    }

    /// Counts `unsent` and drops every buffered event not in flight; returns how many.
    fn drop_unsent(&mut self) -> usize {
        let unsent = self.queues.drop_ready();
        if unsent > 0 {
            Counters::add(&self.shared.counters.unsent, unsent);
        }
        unsent
    }

    /// After the shutdown was answered: waits for the batches still in flight (each within its
    /// request's timeout) and settles them, so that the counters end true. Without an outbox,
    /// what they did not deliver is counted `unsent`; with one, it is on disk already.
    fn settle_in_flight(&mut self) {
        while self.queues.jobs_out() > 0 {
            match self.done_rx.recv_timeout(self.settings.request_timeout + ANSWER_GRACE) {
                Ok(d) => {
                    self.complete(d);
                }
                Err(_) => break,
            }
        }
        if !self.with_outbox {
            self.drop_unsent();
        }
    }
}

/// Batches encoded ahead of sending when the channel holds more (see `Flusher::ahead`): as many
/// as a chain takes.
const AHEAD_BATCHES: usize = MAX_CHAIN;

/// Most batches of one identity handed to a sender thread at once (see [`Job::next`]).
const MAX_CHAIN: usize = 4;

/// Most buffers of sent events kept for reuse: as many as a burst buffers (`drain` takes the
/// whole channel), else those beyond a batch were freed at the burst's end. At most 2 MiB.
const SPARE_BUFFERS: usize = 2048;
/// A larger buffer of a sent event is freed rather than kept (most events are smaller).
const SPARE_CAPACITY: usize = 1024;

/// Keeps a sent event's buffer in `spare` for the next events.
fn recycle(spare: &mut Vec<Vec<u8>>, mut bytes: Vec<u8>) {
    if spare.len() < SPARE_BUFFERS && bytes.capacity() > 0 && bytes.capacity() <= SPARE_CAPACITY {
        bytes.clear();
        spare.push(bytes);
    }
}

/// The server's version for the event log: the configured identity's, else the server info's.
fn server_version<'a>(identity: &'a Identity, shared: &'a Handoff) -> Option<&'a str> {
    identity.server_version.as_deref().or_else(|| shared.server_version.get().map(String::as_str))
}

/// What the event log keeps of a call beside its encoded event.
struct LogCall<'a> {
    call_id: uuid::Uuid,
    tool: &'a str,
    session: Option<&'a str>,
    model: Option<&'a str>,
    timestamp_ms: u64,
    turn: Option<&'a str>,
    texts: LogTexts,
    /// What `Config::infer_intent` gave a call without an intent, capped and redacted.
    inferred: Option<&'a str>,
}

/// The texts of a call's `aiInvocation` that the event's `intent` does not hold, capped and
/// redacted as the intent is, and `userIntent.redacted`.
#[derive(Default)]
struct LogTexts {
    reason: Option<String>,
    user_intent: Option<String>,
    user_intent_redacted: Option<bool>,
}

impl LogTexts {
    /// `native`: the event's intent came from `aiInvocation` (its `invocationReason`, else its
    /// `userIntent`), so that text is not repeated.
    fn of(invocation: InvocationRef<'_>, native: bool, redactor: &Redactor) -> Self {
        let keep =
            |text: Option<&str>, is_intent: bool| text.filter(|_| !is_intent).map(|t| redactor.text(t.to_owned()));
        LogTexts {
            reason: keep(invocation.reason, native),
            user_intent: keep(invocation.user_intent, native && invocation.reason.is_none()),
            user_intent_redacted: invocation.user_intent_redacted,
        }
    }
}

impl LogCall<'_> {
    fn write(
        &self,
        log: &mut EventLog,
        event: &[u8],
        client: Option<&ClientInfo>,
        identity: &Identity,
        shared: &Handoff,
    ) {
        let mut id = [0u8; uuid::fmt::Hyphenated::LENGTH];
        let call_id = self.call_id.hyphenated().encode_lower(&mut id);
        log.call(&CallEntry {
            call_id,
            tool: self.tool,
            timestamp_ms: self.timestamp_ms,
            event: Some(event),
            session: self.session,
            conversation: None,
            turn: self.turn,
            model: self.model,
            client: client.and_then(ClientInfo::label).or(identity.client.as_deref()),
            server_version: server_version(identity, shared),
            tool_hash: None,
            invocation_reason: self.texts.reason.as_deref(),
            user_intent: self.texts.user_intent.as_deref(),
            user_intent_redacted: self.texts.user_intent_redacted,
            inferred_intent: self.inferred,
        });
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

    impl IngestTransport for Batches {
        fn send(&self, body: Payload<'_>, _timeout: Duration) -> PostAnswer {
            let payload: serde_json::Value = serde_json::from_slice(&body.to_vec()).unwrap();
            self.0.lock().unwrap().push(payload["events"].as_array().unwrap().len());
            PostAnswer::Sent
        }
    }

    fn flusher(config: &Config) -> (Flusher, crossbeam_channel::Sender<Queued>, BufferPool, Arc<Mutex<Vec<usize>>>) {
        let (data_tx, data_rx) = crossbeam_channel::bounded(1024);
        let (_control_tx, control_rx) = crossbeam_channel::bounded(1);
        let sent = Arc::new(Mutex::new(Vec::new()));
        let pool = BufferPool::new();
        let transport = Box::new(Batches(sent.clone()));
        let shared = handoff();
        (Flusher::new(config, data_rx, control_rx, shared, transport, None, pool.clone(), None), data_tx, pool, sent)
    }

    fn handoff() -> Arc<Handoff> {
        Arc::new(Handoff {
            counters: Counters::default(),
            diagnostics: Diagnostics::new(None),
            nudged: AtomicBool::new(false),
            closed: AtomicBool::new(false),
            identify_panicked: AtomicBool::new(false),
            server_version: Default::default(),
            backlog: Backlog::default(),
            notes: Notes::default(),
        })
    }

    fn queue(data: &crossbeam_channel::Sender<Queued>, pool: &BufferPool, n: usize) {
        for i in 0..n {
            let record = CallRecord::new("search", json!({ "i": i }), CallOutcome::Success { result: json!({}) });
            data.send(Queued::new(record, None, None, pool.take())).unwrap();
        }
    }

    /// Takes the answers of the batches in flight as the flusher's loop does, until none is.
    fn answer_all(f: &mut Flusher) {
        while f.queues.jobs_out() > 0 {
            let done = f.done_rx.recv_timeout(Duration::from_secs(30)).expect("a sender answers");
            let left = f.complete(done);
            f.dispatch(Due::Completion, None);
            f.drain_up_to(left);
        }
    }

    /// A round sends the first batch once the threshold is reached, then only full batches:
    /// calls that keep coming are not sent a few at a time, one POST each. The rest goes on the
    /// next round, which applies the threshold again.
    #[test]
    fn a_round_sends_a_due_batch_then_only_full_ones() {
        let (mut f, data, pool, sent) = flusher(&Config::new("p").flush_threshold(5).max_batch_events(10));
        queue(&data, &pool, 20);
        f.wake();
        // Arrived after the round found its batch due.
        queue(&data, &pool, 5);
        answer_all(&mut f);
        assert_eq!(*sent.lock().unwrap(), [10, 10]);
        assert_eq!(f.queues.len(), 5);
        f.wake();
        answer_all(&mut f);
        assert_eq!(*sent.lock().unwrap(), [10, 10, 5]);
        assert!(f.queues.is_empty());
        // Below the threshold nothing is due.
        queue(&data, &pool, 4);
        f.wake();
        answer_all(&mut f);
        assert_eq!(sent.lock().unwrap().len(), 3);
        assert_eq!(f.queues.len(), 4);
    }

    /// With a buffer smaller than a batch, a batch as full as the buffer can hold goes on after
    /// each answer: waiting for a batch it cannot hold would leave the rest until the next tick.
    #[test]
    fn a_buffer_smaller_than_a_batch_sends_full_buffers() {
        let config = Config::new("p").flush_threshold(2).max_batch_events(10).max_buffer(6);
        let (mut f, data, pool, sent) = flusher(&config);
        queue(&data, &pool, 8);
        f.wake();
        queue(&data, &pool, 6);
        f.drain();
        answer_all(&mut f);
        assert_eq!(*sent.lock().unwrap(), [6, 6]);
        assert_eq!(f.shared.counters.buffer_overflow.load(Ordering::SeqCst), 2);
    }

    /// Events of distinct identities go out in batches of their own, several at once, each
    /// identity's in order and one batch at a time.
    #[test]
    fn identities_are_sent_in_batches_of_their_own() {
        let (mut f, data, pool, sent) = flusher(&Config::new("p").flush_threshold(1).max_batch_events(10));
        for i in 0..30 {
            let mut record = CallRecord::new("search", json!({ "i": i }), CallOutcome::Success { result: json!({}) });
            record.client = Some(Arc::new(ClientInfo::new(format!("client-{}", i % 3), "1.0")));
            data.send(Queued::new(record, None, None, pool.take())).unwrap();
        }
        f.drain();
        f.dispatch(Due::Round, None);
        assert_eq!(f.queues.jobs_out(), 3, "one batch in flight per identity, all three at once");
        answer_all(&mut f);
        let mut sizes = sent.lock().unwrap().clone();
        sizes.sort_unstable();
        assert_eq!(sizes, [10, 10, 10]);
        assert!(f.queues.is_empty());
        assert_eq!(f.queues.in_flight(), 0);
    }

    /// What the flusher does per event does not grow with the events waiting: delivering a
    /// backlog of 100 000 visits as many queue entries per event as a backlog of 1 000 (it once
    /// walked the whole buffer before each batch, some 200 entries per event here).
    #[test]
    fn the_work_per_event_is_bounded_whatever_the_backlog() {
        let per_event = |backlog: usize| {
            let config = Config::new("p").max_buffer(backlog + 10);
            let (mut f, data, pool, sent) = flusher(&config);
            while f.queues.len() < backlog {
                queue(&data, &pool, (backlog - f.queues.len()).min(1000));
                f.drain();
            }
            f.queues.steps.set(0);
            // As a shutdown delivers what waits.
            assert!(f.deliver_until(Instant::now() + Duration::from_secs(60), Some(u64::MAX)));
            assert_eq!(sent.lock().unwrap().iter().sum::<usize>(), backlog);
            f.queues.steps.get() as f64 / backlog as f64
        };
        let (small, large) = (per_event(1_000), per_event(100_000));
        assert!(small <= 4.0 && large <= 4.0, "entries visited per event: {small} at 1 000, {large} at 100 000");
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
        assert_eq!(f.queues.len(), 7);
    }

    /// Accepts every payload and keeps its bytes.
    struct Bodies(Arc<Mutex<Vec<Vec<u8>>>>);

    impl IngestTransport for Bodies {
        fn send(&self, body: Payload<'_>, _timeout: Duration) -> PostAnswer {
            self.0.lock().unwrap().push(body.to_vec());
            PostAnswer::Sent
        }
    }

    /// The payloads a flusher with an event log in `dir` sends for two calls, one with an intent
    /// and one without, its call ids drawn from a fixed seed; and the log's call lines.
    fn sent_and_logged(config: Config, dir: &std::path::Path) -> (Vec<Vec<u8>>, Vec<serde_json::Value>) {
        let _ = std::fs::remove_dir_all(dir);
        let (data, data_rx) = crossbeam_channel::bounded(16);
        let (_control, control_rx) = crossbeam_channel::bounded(1);
        let bodies = Arc::new(Mutex::new(Vec::new()));
        let pool = BufferPool::new();
        let log = EventLog::open(dir, 1 << 20).unwrap();
        let transport = Box::new(Bodies(bodies.clone()));
        let mut f = Flusher::new(&config, data_rx, control_rx, handoff(), transport, None, pool.clone(), Some(log));
        f.call_ids = CallIds::seeded(7, 11);
        let mut with_intent =
            CallRecord::new("search", json!({"q": "mugs"}), CallOutcome::Success { result: json!({"n": 3}) });
        with_intent.intent = Some(("Find mugs for the shop.".into(), IntentSource::Mcpeye));
        let without = CallRecord::new("export", json!({"to": "ada@example.com"}), CallOutcome::error("no disk"));
        for mut record in [with_intent, without] {
            (record.timestamp_ms, record.duration) = (1_764_770_000_000, Duration::from_millis(12));
            data.send(Queued::new(record, None, None, pool.take())).unwrap();
        }
        assert!(f.flush_until(Instant::now() + Duration::from_secs(30)));
        let lines = std::fs::read_dir(dir)
            .unwrap()
            .flat_map(|e| {
                std::fs::read_to_string(e.unwrap().path()).unwrap().lines().map(str::to_owned).collect::<Vec<_>>()
            })
            .map(|l| serde_json::from_str::<serde_json::Value>(&l).unwrap())
            .filter(|l| l["kind"] == "call")
            .collect();
        let _ = std::fs::remove_dir_all(dir);
        let bodies = bodies.lock().unwrap().clone();
        (bodies, lines)
    }

    /// `infer_intent` writes to the event log only: the payloads are the bytes a flusher without
    /// it sends, with or without `before_send`, and the callback is asked about the call without
    /// an intent only.
    #[test]
    fn an_inferred_intent_leaves_the_payload_bytes_as_they_were() {
        let dir = std::env::temp_dir().join(format!("mcpeye-unit-infer-{}", std::process::id()));
        let asked = Arc::new(Mutex::new(Vec::new()));
        for edits in [false, true] {
            let base = match edits {
                true => Config::new("p").before_send(Some),
                false => Config::new("p"),
            };
            let a = asked.clone();
            let hooked = base.clone().infer_intent(move |call| {
                a.lock().unwrap().push(call.tool().to_owned());
                Some(format!("wanted {} sent to {}", call.tool(), call.arguments()["to"]))
            });
            let (plain, plain_log) = sent_and_logged(base, &dir);
            let (inferred, inferred_log) = sent_and_logged(hooked, &dir);
            assert_eq!(plain.len(), 1);
            assert_eq!(String::from_utf8_lossy(&plain[0]), String::from_utf8_lossy(&inferred[0]), "edits={edits}");
            assert!(!String::from_utf8_lossy(&inferred[0]).contains("wanted"));
            assert!(plain_log.iter().all(|l| l.get("inferredIntent").is_none()));
            assert_eq!(inferred_log[0]["event"]["intent"], "Find mugs for the shop.");
            assert!(inferred_log[0].get("inferredIntent").is_none(), "{:?}", inferred_log[0]);
            assert_eq!(inferred_log[1]["inferredIntent"], "wanted export sent to \"[REDACTED_EMAIL]\"");
            assert_eq!(inferred_log[1]["event"], plain_log[1]["event"]);
        }
        assert_eq!(*asked.lock().unwrap(), ["export", "export"]);
    }
}
