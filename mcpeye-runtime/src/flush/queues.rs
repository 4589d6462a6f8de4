//! The encoded events a flusher holds, in one queue per identity (the client a payload names),
//! each oldest first: a batch is cut from the front of its identity's queue, an answer settles
//! its events or gives them back in front, and the memory bound drops the oldest or, with an
//! outbox, moves the newest to disk. Every step visits the events it moves and the identities,
//! never the other events waiting, so that what an event costs does not grow with the backlog.
//!
//! An identity has at most one chain of batches out (docs/architecture.md): its events in
//! flight left its queue with their batch, and those a failed batch gives back wait until the
//! chain's last answer, then go back in front together, in order.

use crate::model::record::ClientInfo;
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;

/// Counts entries or events visited, in test builds (`EventQueues::steps`).
macro_rules! visit {
    ($queues:ident, $n:expr) => {
        #[cfg(test)]
        $queues.steps.set($queues.steps.get() + ($n) as u64);
    };
}

/// An encoded event in a queue.
pub(crate) struct Waiting {
    /// Order of arrival, across identities.
    pub seq: u64,
    pub bytes: Vec<u8>,
}

/// The events of one batch, taken off the front of a queue.
pub(crate) struct Taken {
    /// Ascending.
    pub seqs: Vec<u64>,
    pub events: Vec<Vec<u8>>,
}

/// One identity's events.
struct IdentityQueue {
    /// The client its payloads name (`None`: the configured identity's).
    client: Option<Arc<ClientInfo>>,
    /// Ready to send, oldest first.
    ready: VecDeque<Waiting>,
    /// Batches of its chain not answered yet; while any is, no other batch of it starts.
    out: usize,
    /// The first and last sequence numbers its chain took, while it is out.
    chain: Option<(u64, u64)>,
    /// Events the chain's failed batches gave back, oldest first.
    returned: Vec<Waiting>,
}

impl IdentityQueue {
    fn label(&self) -> Option<&str> {
        self.client.as_deref().and_then(ClientInfo::label)
    }

    fn is_idle_and_empty(&self) -> bool {
        self.out == 0 && self.ready.is_empty() && self.returned.is_empty()
    }
}

/// The flusher's events, per identity. See the module's documentation.
#[derive(Default)]
pub(crate) struct EventQueues {
    queues: Vec<IdentityQueue>,
    /// A labelled identity's queue, by label.
    by_label: HashMap<String, usize>,
    /// The queue of the events without a client label.
    unlabelled: Option<usize>,
    /// The queue pushed to last: calls come in runs of one client.
    last: usize,
    /// Events in the `ready` queues.
    ready: usize,
    /// Events in a batch out, or given back while their chain is out.
    in_flight: usize,
    /// Batches out.
    jobs_out: usize,
    /// Events dropped while in a batch in flight (the outbox's bound): when the batch is
    /// answered they are neither counted nor given back.
    evicted: HashSet<u64>,
    /// Queue entries and events visited, for the test that bounds the work per event.
    #[cfg(test)]
    pub steps: std::cell::Cell<u64>,
}

impl EventQueues {
    /// Events ready to send.
    pub(crate) fn ready(&self) -> usize {
        self.ready
    }

    /// Events in a batch out (or given back while their chain is out).
    pub(crate) fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// Every event held, ready or in flight.
    pub(crate) fn len(&self) -> usize {
        self.ready + self.in_flight
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Batches sent and not answered yet.
    pub(crate) fn jobs_out(&self) -> usize {
        self.jobs_out
    }

    /// Appends the newest event, of `client`'s identity.
    pub(crate) fn push(&mut self, client: Option<&Arc<ClientInfo>>, seq: u64, bytes: Vec<u8>) {
        let q = self.queue_of(client.and_then(|c| c.label()), || client.cloned());
        self.queues[q].ready.push_back(Waiting { seq, bytes });
        self.ready += 1;
    }

    /// Appends the newest event, read back from the outbox with its client's label.
    pub(crate) fn push_labelled(&mut self, label: Option<&str>, seq: u64, bytes: Vec<u8>) {
        let q = self.queue_of(label, || label.map(|l| Arc::new(ClientInfo::new(l, ""))));
        self.queues[q].ready.push_back(Waiting { seq, bytes });
        self.ready += 1;
    }

    /// The queue of `label`, made with `client` if there is none.
    fn queue_of(&mut self, label: Option<&str>, client: impl FnOnce() -> Option<Arc<ClientInfo>>) -> usize {
        if self.queues.get(self.last).is_some_and(|q| q.label() == label) {
            return self.last;
        }
        let found = match label {
            Some(l) => self.by_label.get(l).copied(),
            None => self.unlabelled,
        };
        let q = found.unwrap_or_else(|| {
            let q = self.queues.len();
            self.queues.push(IdentityQueue {
                client: client(),
                ready: VecDeque::new(),
                out: 0,
                chain: None,
                returned: Vec::new(),
            });
            match label {
                Some(l) => {
                    self.by_label.insert(l.to_owned(), q);
                }
                None => self.unlabelled = Some(q),
            }
            q
        });
        self.last = q;
        q
    }

    /// Forgets queue `q` if it holds nothing and has nothing out.
    fn tidy(&mut self, q: usize) {
        if !self.queues[q].is_idle_and_empty() {
            return;
        }
        let gone = self.queues.swap_remove(q);
        self.forget(gone.label());
        if q < self.queues.len() {
            // The last queue took its place.
            let moved = self.queues[q].label().map(str::to_owned);
            match moved {
                Some(l) => {
                    self.by_label.insert(l, q);
                }
                None => self.unlabelled = Some(q),
            }
        }
        self.last = usize::MAX;
    }

    fn forget(&mut self, label: Option<&str>) {
        match label {
            Some(l) => {
                self.by_label.remove(l);
            }
            None => self.unlabelled = None,
        }
    }

    /// The queue whose oldest ready event is the oldest of those with no batch out, and that
    /// event's sequence number.
    pub(crate) fn oldest_idle(&self) -> Option<(usize, u64)> {
        visit!(self, self.queues.len());
        self.queues
            .iter()
            .enumerate()
            .filter(|(_, q)| q.out == 0)
            .filter_map(|(i, q)| q.ready.front().map(|w| (i, w.seq)))
            .min_by_key(|&(_, seq)| seq)
    }

    /// The client queue `q`'s payloads name.
    pub(crate) fn client(&self, q: usize) -> Option<&Arc<ClientInfo>> {
        self.queues[q].client.as_ref()
    }

    /// Takes a batch off the front of queue `q`: up to `limit` events (at least one) whose
    /// payload, with `frame` bytes around them, stays within `max_bytes`; with `only_full`,
    /// nothing unless it takes `limit`. The batch is out until [`answer`](Self::answer)ed.
    pub(crate) fn take(
        &mut self,
        q: usize,
        limit: usize,
        frame: usize,
        max_bytes: usize,
        only_full: bool,
    ) -> Option<Taken> {
        let limit = limit.max(1);
        let queue = &mut self.queues[q];
        let (mut size, mut n) = (frame, 0);
        for w in queue.ready.iter().take(limit) {
            let add = w.bytes.len() + usize::from(n > 0);
            if n > 0 && size + add > max_bytes {
                break;
            }
            size += add;
            n += 1;
        }
        visit!(self, n);
        if n == 0 || (only_full && n < limit) {
            return None;
        }
        let mut taken = Taken { seqs: Vec::with_capacity(n), events: Vec::with_capacity(n) };
        for w in queue.ready.drain(..n) {
            taken.seqs.push(w.seq);
            taken.events.push(w.bytes);
        }
        let (first, last) = (taken.seqs[0], taken.seqs[n - 1]);
        queue.chain = Some((queue.chain.map_or(first, |(from, _)| from), last));
        queue.out += 1;
        self.jobs_out += 1;
        self.ready -= n;
        self.in_flight += n;
        Some(taken)
    }

    /// Takes the answer to a batch of `label`'s identity: with `retry` its events are given back
    /// (in front of the queue once its chain's last batch is answered), else they leave and
    /// `leave` gets each one's sequence number and bytes. An event dropped while in flight goes
    /// to `leave` without its number. Returns how many of the batch's events were still held.
    pub(crate) fn answer(
        &mut self,
        label: Option<&str>,
        seqs: Vec<u64>,
        events: Vec<Vec<u8>>,
        retry: bool,
        mut leave: impl FnMut(Option<u64>, Vec<u8>),
    ) -> usize {
        visit!(self, seqs.len());
        let found_queue = match label {
            Some(l) => self.by_label.get(l).copied(),
            None => self.unlabelled,
        };
        let Some(q) = found_queue.filter(|&q| self.queues[q].out > 0) else {
            // Not a batch of a queue with one out: cannot happen; its events are let go.
            events.into_iter().for_each(|bytes| leave(None, bytes));
            return 0;
        };
        let mut found = 0;
        let queue = &mut self.queues[q];
        for (seq, bytes) in seqs.into_iter().zip(events) {
            if !self.evicted.is_empty() && self.evicted.remove(&seq) {
                leave(None, bytes);
                continue;
            }
            found += 1;
            if retry {
                queue.returned.push(Waiting { seq, bytes });
            } else {
                self.in_flight -= 1;
                leave(Some(seq), bytes);
            }
        }
        queue.out -= 1;
        self.jobs_out -= 1;
        if queue.out == 0 {
            // The chain is over: what it gave back goes first again, in order.
            let returned = std::mem::take(&mut queue.returned);
            visit!(self, returned.len());
            self.in_flight -= returned.len();
            self.ready += returned.len();
            for w in returned.into_iter().rev() {
                queue.ready.push_front(w);
            }
            queue.chain = None;
            self.tidy(q);
        }
        if self.jobs_out == 0 {
            self.evicted.clear();
        }
        found
    }

    /// Drops the oldest ready event, of any identity.
    pub(crate) fn drop_oldest(&mut self) -> Option<Waiting> {
        visit!(self, self.queues.len());
        let (q, _) = self
            .queues
            .iter()
            .enumerate()
            .filter_map(|(i, q)| q.ready.front().map(|w| (i, w.seq)))
            .min_by_key(|&(_, seq)| seq)?;
        let w = self.queues[q].ready.pop_front();
        self.ready -= 1;
        self.tidy(q);
        w
    }

    /// Takes off the newest event held, if it is ready (no event in flight is newer): with an
    /// outbox, it then waits on disk with every event after it.
    pub(crate) fn pop_newest(&mut self) -> Option<Waiting> {
        visit!(self, self.queues.len());
        let (q, seq) = self
            .queues
            .iter()
            .enumerate()
            .filter_map(|(i, q)| q.ready.back().map(|w| (i, w.seq)))
            .max_by_key(|&(_, seq)| seq)?;
        if self.queues.iter().any(|q| q.chain.is_some_and(|(_, last)| last > seq)) {
            return None;
        }
        let w = self.queues[q].ready.pop_back();
        self.ready -= 1;
        self.tidy(q);
        w
    }

    /// The sequence number of the oldest event held, ready or in flight.
    pub(crate) fn oldest(&self) -> Option<u64> {
        visit!(self, self.queues.len());
        self.queues
            .iter()
            .flat_map(|q| [q.ready.front().map(|w| w.seq), q.chain.map(|(first, _)| first)])
            .flatten()
            .min()
    }

    /// The sequence number of the newest event held, ready or in flight.
    pub(crate) fn newest(&self) -> Option<u64> {
        visit!(self, self.queues.len());
        self.queues.iter().flat_map(|q| [q.ready.back().map(|w| w.seq), q.chain.map(|(_, last)| last)]).flatten().max()
    }

    /// Drops the events whose sequence numbers are in `evicted` (ascending: the outbox's
    /// oldest), ready or in flight. Returns how many were held.
    pub(crate) fn evict(&mut self, evicted: &[u64]) -> usize {
        let Some(&newest) = evicted.last() else { return 0 };
        let is_evicted = |seq: u64| evicted.binary_search(&seq).is_ok();
        visit!(self, evicted.len() + self.queues.len());
        let mut dropped = 0;
        let mut unseen: HashSet<u64> = evicted.iter().copied().collect();
        for q in (0..self.queues.len()).rev() {
            let queue = &mut self.queues[q];
            // The oldest go: usually the front of each queue.
            while let Some(seq) = queue.ready.front().map(|w| w.seq).filter(|&seq| is_evicted(seq)) {
                unseen.remove(&seq);
                queue.ready.pop_front();
                self.ready -= 1;
                dropped += 1;
            }
            if queue.ready.front().is_some_and(|w| w.seq < newest) {
                // One the outbox did not hold (its write failed) is older: looked for one by one.
                visit!(self, queue.ready.len());
                let before = queue.ready.len();
                queue.ready.retain(|w| !(is_evicted(w.seq) && unseen.remove(&w.seq)));
                self.ready -= before - queue.ready.len();
                dropped += before - queue.ready.len();
            }
            let before = queue.returned.len();
            queue.returned.retain(|w| !(is_evicted(w.seq) && unseen.remove(&w.seq)));
            self.in_flight -= before - queue.returned.len();
            dropped += before - queue.returned.len();
            self.tidy(q);
        }
        // What is left of them is in a batch in flight, or was on disk only.
        for seq in unseen {
            if self.queues.iter().any(|q| q.chain.is_some_and(|(first, last)| (first..=last).contains(&seq))) {
                self.evicted.insert(seq);
                self.in_flight -= 1;
                dropped += 1;
            }
        }
        dropped
    }

    /// Drops every ready event; returns how many.
    pub(crate) fn drop_ready(&mut self) -> usize {
        let n = self.ready;
        for q in (0..self.queues.len()).rev() {
            self.queues[q].ready.clear();
            self.tidy(q);
        }
        self.ready = 0;
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client(label: &str) -> Arc<ClientInfo> {
        Arc::new(ClientInfo::new(label, ""))
    }

    fn queues_of(labels: &[&str]) -> EventQueues {
        let mut queues = EventQueues::default();
        let clients: Vec<_> = labels.iter().map(|l| client(l)).collect();
        for (seq, c) in clients.iter().enumerate() {
            queues.push(Some(c), seq as u64, vec![b'x'; 10]);
        }
        queues
    }

    /// The queue whose oldest ready event is `seq`.
    fn front_at(q: &EventQueues, seq: u64) -> usize {
        q.queues.iter().position(|i| i.ready.front().is_some_and(|w| w.seq == seq)).unwrap()
    }

    #[test]
    fn a_batch_takes_its_identitys_oldest_events_and_an_answer_settles_them() {
        let mut q = queues_of(&["a", "b", "a", "a", "b"]);
        let (first, seq) = q.oldest_idle().unwrap();
        assert_eq!(seq, 0);
        let taken = q.take(first, 10, 0, usize::MAX, false).unwrap();
        assert_eq!(taken.seqs, [0, 2, 3]);
        assert_eq!((q.ready(), q.in_flight(), q.jobs_out()), (2, 3, 1));
        // `a` is out: `b` is the oldest idle identity.
        assert_eq!(q.oldest_idle().map(|(_, s)| s), Some(1));
        assert_eq!(q.oldest(), Some(0));
        let mut left = vec![];
        assert_eq!(q.answer(Some("a"), taken.seqs, taken.events, false, |s, _| left.push(s)), 3);
        assert_eq!(left, [Some(0), Some(2), Some(3)]);
        assert_eq!((q.ready(), q.in_flight(), q.jobs_out(), q.oldest()), (2, 0, 0, Some(1)));
    }

    #[test]
    fn a_failed_chain_gives_its_events_back_in_front_in_order() {
        let mut q = queues_of(&["a"; 7]);
        let one = q.take(0, 3, 0, usize::MAX, false).unwrap();
        let two = q.take(0, 3, 0, usize::MAX, true).unwrap();
        assert!(q.take(0, 3, 0, usize::MAX, true).is_none(), "one event left: not a full batch");
        q.push(Some(&client("a")), 7, vec![]);
        assert_eq!(q.answer(Some("a"), one.seqs, one.events, true, |_, _| panic!("none leaves")), 3);
        // Given back only when the chain's last batch is answered.
        assert_eq!((q.ready(), q.in_flight()), (2, 6));
        assert_eq!(q.answer(Some("a"), two.seqs, two.events, true, |_, _| panic!("none leaves")), 3);
        assert_eq!((q.ready(), q.in_flight(), q.jobs_out()), (8, 0, 0));
        let again = q.take(0, 10, 0, usize::MAX, false).unwrap();
        assert_eq!(again.seqs, [0, 1, 2, 3, 4, 5, 6, 7]);
    }

    #[test]
    fn the_byte_bound_cuts_a_batch_but_takes_one_event_at_least() {
        let mut q = EventQueues::default();
        for seq in 0..3 {
            q.push(None, seq, vec![b'x'; 100]);
        }
        // A frame of 10 bytes, two events and a comma: 211 bytes.
        assert_eq!(q.take(0, 10, 10, 211, false).unwrap().seqs, [0, 1]);
        let mut lone = EventQueues::default();
        lone.push(None, 0, vec![b'x'; 1000]);
        assert_eq!(lone.take(0, 10, 10, 50, false).unwrap().seqs, [0]);
    }

    #[test]
    fn the_bound_drops_the_oldest_and_spills_the_newest_unless_one_in_flight_is_newer() {
        let mut q = queues_of(&["a", "b", "a", "b"]);
        assert_eq!(q.drop_oldest().map(|w| w.seq), Some(0));
        assert_eq!(q.pop_newest().map(|w| w.seq), Some(3));
        let b = front_at(&q, 1);
        let _out = q.take(b, 10, 0, usize::MAX, false).unwrap();
        // `a`'s event 2 is ready, `b`'s 1 in flight is older: 2 may go to disk.
        assert_eq!(q.pop_newest().map(|w| w.seq), Some(2));
        let mut newer = queues_of(&["a", "b"]);
        let b = front_at(&newer, 1);
        let _out = newer.take(b, 10, 0, usize::MAX, false).unwrap();
        assert!(newer.pop_newest().is_none(), "event 1 in flight is newer than the ready 0");
    }

    #[test]
    fn evicted_events_leave_memory_and_are_not_counted_when_their_batch_is_answered() {
        let mut q = queues_of(&["a", "a", "b", "a"]);
        let a = q.oldest_idle().unwrap().0;
        let out = q.take(a, 2, 0, usize::MAX, false).unwrap();
        assert_eq!(out.seqs, [0, 1]);
        assert_eq!(q.evict(&[0, 2]), 2);
        assert_eq!((q.ready(), q.in_flight()), (1, 1));
        let mut left = vec![];
        assert_eq!(q.answer(Some("a"), out.seqs, out.events, false, |s, _| left.push(s)), 1);
        assert_eq!(left, [None, Some(1)]);
        assert_eq!((q.ready(), q.in_flight(), q.oldest()), (1, 0, Some(3)));
    }

    #[test]
    fn empty_identities_are_forgotten_and_come_back() {
        let mut q = queues_of(&["a", "b", "c"]);
        assert_eq!(q.drop_ready(), 3);
        assert!(q.queues.is_empty() && q.by_label.is_empty());
        q.push(Some(&client("b")), 3, vec![]);
        q.push(None, 4, vec![]);
        assert_eq!(q.queues.len(), 2);
        assert_eq!(q.drop_oldest().map(|w| w.seq), Some(3));
        assert_eq!(q.unlabelled, Some(0), "the unlabelled queue moved into the freed place");
        assert_eq!(q.drop_oldest().map(|w| w.seq), Some(4));
        assert!(q.is_empty());
    }
}
