//! Counters of a tracker: every captured event ends up sent, dropped (for one reason) or is
//! still pending, so `captured == sent + dropped.total() + pending` at all times.

use std::sync::atomic::{AtomicU64, Ordering::SeqCst};

/// Why events were dropped, by reason.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Dropped {
    /// The hand-off channel was full (calls came faster than the flusher took them).
    pub channel_full: u64,
    /// More than `max_buffer` events waited; the oldest were dropped.
    pub buffer_overflow: u64,
    /// The ingest refused the batch with a 4xx other than 408, 413 and 429.
    pub rejected: u64,
    /// A single event was still too large for the ingest (413).
    pub too_large: u64,
    /// The event broke the payload rules (docs/wire-format.md#payload) and was never sent.
    pub invalid: u64,
    /// Recorded after the tracker shut down.
    pub after_shutdown: u64,
    /// Still unsent when a shutdown's timeout ran out (without an outbox; with one they stay
    /// pending, kept on disk for the next start).
    pub unsent: u64,
    /// The undelivered events outgrew `Config::outbox_max_bytes`; the oldest were dropped.
    pub outbox_overflow: u64,
}

impl Dropped {
    /// All dropped events.
    pub fn total(&self) -> u64 {
        self.channel_full
            + self.buffer_overflow
            + self.rejected
            + self.too_large
            + self.invalid
            + self.after_shutdown
            + self.unsent
            + self.outbox_overflow
    }
}

/// A snapshot of a tracker's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// Calls handed to the tracker, plus the events a previous process left in the outbox
    /// (`recovered`).
    pub captured: u64,
    /// Of `captured`, the events read back from the outbox at start, to be sent again.
    pub recovered: u64,
    /// Events the ingest accepted (2xx).
    pub sent: u64,
    /// Events given up, by reason.
    pub dropped: Dropped,
    /// Events neither sent nor dropped yet (queued, buffered, or in a request in flight).
    pub pending: u64,
}

/// What a flush or a shutdown achieved.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct FlushReport {
    /// Every event recorded before the call was sent or dropped within the timeout.
    pub completed: bool,
    /// The tracker's counters when the call returned.
    pub stats: Stats,
}

impl FlushReport {
    /// Events sent so far.
    pub fn sent(&self) -> u64 {
        self.stats.sent
    }
    /// Events dropped so far, by reason.
    pub fn dropped(&self) -> Dropped {
        self.stats.dropped
    }
    /// Events still pending (e.g. in a request abandoned at shutdown).
    pub fn pending(&self) -> u64 {
        self.stats.pending
    }
}

/// The live counters, shared by the calling threads and the flusher.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub captured: AtomicU64,
    pub sent: AtomicU64,
    pub channel_full: AtomicU64,
    pub buffer_overflow: AtomicU64,
    pub rejected: AtomicU64,
    pub too_large: AtomicU64,
    pub invalid: AtomicU64,
    pub after_shutdown: AtomicU64,
    pub unsent: AtomicU64,
    pub outbox_overflow: AtomicU64,
    pub recovered: AtomicU64,
}

impl Counters {
    pub(crate) fn add(counter: &AtomicU64, n: usize) {
        counter.fetch_add(n as u64, SeqCst);
    }

    pub(crate) fn snapshot(&self) -> Stats {
        // Outcomes are read before `captured`: an event is counted captured before it can be
        // sent or dropped, so this order never yields a negative pending.
        let sent = self.sent.load(SeqCst);
        let dropped = Dropped {
            channel_full: self.channel_full.load(SeqCst),
            buffer_overflow: self.buffer_overflow.load(SeqCst),
            rejected: self.rejected.load(SeqCst),
            too_large: self.too_large.load(SeqCst),
            invalid: self.invalid.load(SeqCst),
            after_shutdown: self.after_shutdown.load(SeqCst),
            unsent: self.unsent.load(SeqCst),
            outbox_overflow: self.outbox_overflow.load(SeqCst),
        };
        let captured = self.captured.load(SeqCst);
        let recovered = self.recovered.load(SeqCst);
        let pending = captured.saturating_sub(sent + dropped.total());
        Stats { captured, recovered, sent, dropped, pending }
    }
}
