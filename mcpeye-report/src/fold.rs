//! The one pass: each call is folded into counters, histograms and the last steps of its
//! conversation as it is read, and dropped (the model is DataFusion's `Accumulator`: state that
//! grows with what is distinct, never with rows). [`Fold::finish`] makes the [`Report`].
//!
//! What stays in memory: per tool its counts and two histograms (duration in whole
//! milliseconds, result size in bytes: one entry per distinct value); per tool version its
//! counts; per model its counts and tools; each distinct wording with its count and contexts
//! ([`Wordings`]: one buffer per tool); per conversation a constant-size state (its last steps,
//! at most [`REORDER`] calls waiting to be put in time order); per turn 8 bytes under its
//! fingerprint; the distinct users, clients, models and server versions; the findings' state
//! (`findings.rs`: per tool, parameter, unknown name and wording); and a 64-bit fingerprint per
//! distinct `callId` ([`Fingerprints`]: 10 to 15 bytes a call), to count a call seen twice once.

use crate::asks;
use crate::findings::{self, Facts, Findings, ToolFacts, VersionFacts};
use crate::input::{CallView, ListedTool, Reason};
use crate::summary::{
    Ask, Ending, FailedAsk, GapSection, InputSection, Loop, ModelRow, ModelsSection, Overview, PathsSection, Place,
    Recovery, Report, Sequence, ToolIntents, ToolRow, ToolsSection, Turns, Unknown, VersionRow, VersionsSection,
};
use crate::summary::{FeedbackSection, Finding};
use mcpeye_runtime::contract::RESERVED_TOOL_NAME;
use rayon::prelude::*;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::collections::{BTreeMap, BTreeSet};
use std::hash::{BuildHasher, Hash, Hasher};

/// Rows kept per list in a section (the most significant first).
pub(crate) const KEEP: usize = 50;
/// Places of skipped lines named in the report (the counts by reason cover them all).
pub(crate) const PLACES: usize = 10;
/// Calls of one conversation held back to be put in time order (stable, by `ts`): a call
/// logged up to this many places after a later-started one of the same conversation (parallel
/// tool calls finish out of order) is still taken in time order.
pub(crate) const REORDER: usize = 8;

const NEEDS_LOG: &str = "the event log (Config::event_log): ingest payloads have no key for it";

/// A tool, a thread or a version row, by number.
type Id = u32;
const NO_ROW: Id = Id::MAX;

/// Strings given a number in order of first sight, so that per-call state holds numbers.
#[derive(Default)]
struct Names {
    names: Vec<Box<str>>,
    ids: HashMap<Box<str>, Id>,
}

impl Names {
    fn id(&mut self, name: &str) -> Id {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        let id = self.names.len() as Id;
        self.names.push(name.into());
        self.ids.insert(name.into(), id);
        id
    }

    fn name(&self, id: Id) -> &str {
        &self.names[id as usize]
    }
}

/// A `callId`'s (or a turn's) fingerprint, computed where the line is parsed: 64 bits of
/// SipHash-1-3, whose output is well mixed whatever the ids look like. `DefaultHasher::new()`
/// has fixed keys: the same id gives the same fingerprint. Two distinct ids share one with a
/// probability of about n²/2⁶⁵ (3·10⁻⁶ for 10 M calls, 0.03 for a billion), which would count
/// one call as re-sent (or two turns as one).
pub(crate) fn fingerprint(id: &str) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    id.hash(&mut h);
    h.finish()
}

/// Shards of a [`Fingerprints`] table (a power of two). Each grows on its own, so that growing
/// holds one shard's old and new slots at once (a sixteenth of the table, not all of it twice);
/// and few enough that a large table's shards are large allocations, which the allocator maps
/// and gives back whole when a shard grows (with 256 shards of half a megabyte each, glibc left
/// the old ones as holes in its heap: 553 MiB peak at 10 M calls instead of 390).
const SHARDS: usize = 16;

/// 64-bit keys, each with a small value: open addressing with linear probing, split into
/// [`SHARDS`] tables kept 53 to 80 % full (a shard grows by half when it passes 80 %). A key
/// costs its 8 bytes and its value's over the load: 10 to 15 bytes for a set of fingerprints,
/// where a `HashSet<u64>` costs 9 bytes a bucket at 44 to 87 % and, while it doubles, holds both
/// tables (216 MiB at 10 M calls, against 150 here at most).
pub(crate) struct Fingerprints<V> {
    shards: Vec<Shard<V>>,
    len: usize,
}

struct Shard<V> {
    /// Each key beside its value (one cache line to fetch, not two); 0 marks an empty slot (a
    /// key 0 is kept as 1).
    slots: Vec<(u64, V)>,
    len: usize,
}

impl<V: Copy + Default> Default for Fingerprints<V> {
    fn default() -> Self {
        let shard = || Shard { slots: Vec::new(), len: 0 };
        Fingerprints { shards: (0..SHARDS).map(|_| shard()).collect(), len: 0 }
    }
}

/// A well-mixed 64-bit hash of a key (SplitMix64's finalizer): the keys need not be mixed
/// already, and the shard and the slot come from different bits.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl<V: Copy + Default> Shard<V> {
    /// The first slot to probe for a mixed hash, in `0..cap` (the high bits scaled: no
    /// division).
    fn home(mixed: u64, cap: usize) -> usize {
        ((u128::from(mixed) * cap as u128) >> 64) as usize
    }

    /// The slot of `key`, or the empty one where it goes.
    fn find(&self, key: u64, mixed: u64) -> usize {
        let cap = self.slots.len();
        let mut i = Self::home(mixed, cap);
        loop {
            let k = self.slots[i].0;
            if k == key || k == 0 {
                return i;
            }
            i += 1;
            if i == cap {
                i = 0;
            }
        }
    }

    fn grow(&mut self) {
        let cap = (self.slots.len() * 3 / 2).max(64);
        let slots = std::mem::replace(&mut self.slots, vec![(0, V::default()); cap]);
        for (k, v) in slots.into_iter().filter(|(k, _)| *k != 0) {
            let i = self.find(k, mix(k));
            self.slots[i] = (k, v);
        }
    }
}

impl<V: Copy + Default> Fingerprints<V> {
    /// The value of `key` (a default one put in when it was not there), and whether it was.
    pub(crate) fn entry(&mut self, key: u64) -> (&mut V, bool) {
        let key = key.max(1);
        let mixed = mix(key);
        let shard = &mut self.shards[mixed as usize & (SHARDS - 1)];
        if (shard.len + 1) * 5 > shard.slots.len() * 4 {
            shard.grow();
        }
        let i = shard.find(key, mixed);
        let was = shard.slots[i].0 != 0;
        if !was {
            shard.slots[i].0 = key;
            shard.len += 1;
            self.len += 1;
        }
        (&mut shard.slots[i].1, was)
    }

    /// Reads the slot where `key` would be first looked for, so that it is in the cache when
    /// [`entry`](Self::entry) comes (what it read, for the caller to keep the read from being
    /// left out).
    pub(crate) fn touch(&self, key: u64) -> u64 {
        let mixed = mix(key.max(1));
        let shard = &self.shards[mixed as usize & (SHARDS - 1)];
        shard.slots.get(Shard::<V>::home(mixed, shard.slots.len())).map_or(0, |s| s.0)
    }

    /// Puts `key` in; whether it was not there.
    pub(crate) fn insert(&mut self, key: u64) -> bool {
        !self.entry(key).1
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Every key (0 as 1) with its value.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (u64, V)> + '_ {
        self.shards.iter().flat_map(|s| s.slots.iter().filter(|(k, _)| *k != 0).copied())
    }
}

/// The `callId`s seen, as fingerprints ([`fingerprint`]): 8 bytes a call instead of the id's
/// text.
type SeenIds = Fingerprints<()>;

/// Whether `name` is one of mcpeye's own tools (the capability and the feedback tool), which
/// are not the server's.
fn own_tool(name: &str) -> bool {
    name == RESERVED_TOOL_NAME || name == findings::FEEDBACK_TOOL
}

#[cfg(test)]
mod fingerprints_tests {
    use super::*;

    #[test]
    fn the_table_holds_what_a_hash_map_holds_through_its_growth() {
        let mut table: Fingerprints<u32> = Fingerprints::default();
        let mut reference: std::collections::HashMap<u64, u32> = std::collections::HashMap::new();
        // Mixed and unmixed keys, repeats, and neighbours that probe into each other.
        let keys = (0..50_000u64).map(|i| if i % 3 == 0 { fingerprint(&i.to_string()) } else { i % 20_000 * 7 + 2 });
        for k in keys {
            let (v, was) = table.entry(k);
            *v += 1;
            let r = reference.entry(k).or_default();
            assert_eq!(was, *r > 0, "{k}");
            *r += 1;
        }
        assert_eq!(table.len(), reference.len());
        let mut all: Vec<(u64, u32)> = table.iter().collect();
        all.sort_unstable();
        let mut expected: Vec<(u64, u32)> = reference.into_iter().collect();
        expected.sort_unstable();
        assert_eq!(all, expected);
        // 0 marks an empty slot: the key 0 is kept as 1.
        let mut set = SeenIds::default();
        assert!(set.insert(0) && !set.insert(1) && set.insert(2));
    }

    #[test]
    fn a_turn_keeps_its_last_call_and_its_count_in_one_word() {
        let mut t = Turn::default();
        t.0 += 3;
        t.set_last(4_102_444_799_999, true);
        assert_eq!((t.calls(), t.last_ts(), t.last_error()), (3, 4_102_444_799_999, true));
        t.set_last(5, false);
        assert_eq!((t.calls(), t.last_ts(), t.last_error()), (3, 5, false));
    }

    #[test]
    fn a_turn_past_its_packed_count_goes_on_counting() {
        let mut fold = Fold::default();
        let key = fingerprint("t1");
        fold.turns.entry(key).0 .0 = Turn::CALLS - 1;
        let call = crate::input::Call { turn_id: Some(key), ts: 5, ..Default::default() };
        for _ in 0..3 {
            fold.call(call.view(""));
        }
        let t = fold.sum_turns();
        let calls = Turn::CALLS as usize + 2;
        assert_eq!((t.turns, t.calls, t.most_calls, t.with_several_calls), (1, calls, calls, 1));
    }

    #[test]
    fn texts_are_counted_by_their_text() {
        let mut w = Wordings::default();
        for (text, context) in [("a", None), ("b", Some("x")), ("a", Some("y")), ("", None), ("b", Some("x"))] {
            w.add(text, context, 0);
        }
        let texts: Vec<(&str, usize)> = (0..w.len()).map(|i| (w.text(i), w.counts[i])).collect();
        assert_eq!(texts, [("a", 2), ("b", 2), ("", 1)]);
        assert_eq!(w.contexts[&1].len(), 1);
    }
}

/// A set's strings in order.
fn sorted(set: HashSet<Box<str>>) -> Vec<String> {
    let mut v: Vec<String> = set.into_iter().map(String::from).collect();
    v.sort_unstable();
    v
}

/// Distinct texts with how often each came and the distinct contexts given with them, held
/// compactly: free-text intents are nearly all distinct, so this is most of what a report of
/// them keeps. Each text is in one buffer (no allocation a text), found again by a hash of it
/// (checked against the buffer, so that two texts sharing a hash stay two): about 30 bytes a
/// text besides its own.
#[derive(Default)]
struct Wordings {
    /// The texts one after the other, in order of first arrival, and where each ends.
    buffer: String,
    ends: Vec<usize>,
    counts: Vec<usize>,
    /// Each text's number, by its hash.
    index: Fingerprints<u32>,
    /// A text whose hash an earlier one has, by its text.
    clashes: HashMap<Box<str>, u32>,
    /// Per text that had any, its contexts with the arrival number of their first call.
    contexts: HashMap<u32, Vec<(u64, Box<str>)>>,
}

impl Wordings {
    fn text(&self, i: usize) -> &str {
        &self.buffer[if i == 0 { 0 } else { self.ends[i - 1] }..self.ends[i]]
    }

    fn len(&self) -> usize {
        self.ends.len()
    }

    fn add(&mut self, text: &str, context: Option<&str>, arrival: u64) {
        let hash = rustc_hash::FxBuildHasher.hash_one(text);
        let next = self.ends.len() as u32;
        let (slot, was) = self.index.entry(hash);
        let i = if !was {
            *slot = next;
            next
        } else {
            let at = *slot as usize;
            let start = if at == 0 { 0 } else { self.ends[at - 1] };
            if &self.buffer[start..self.ends[at]] == text {
                *slot
            } else {
                *self.clashes.entry(text.into()).or_insert(next)
            }
        };
        if i == next {
            self.buffer.push_str(text);
            self.ends.push(self.buffer.len());
            self.counts.push(0);
        }
        self.counts[i as usize] += 1;
        if let Some(c) = context {
            let seen = self.contexts.entry(i).or_default();
            if !seen.iter().any(|(_, k)| &**k == c) {
                seen.push((arrival, c.into()));
            }
        }
    }

    fn calls(&self) -> usize {
        self.counts.iter().sum()
    }

    /// Grouped into asks (as `asks::group` groups every call's text, in order of first arrival
    /// of each text: each distinct text given once with its count), with the contexts of each
    /// group in order of arrival.
    fn asks(&self) -> Vec<Ask> {
        asks::group_counted((0..self.len()).map(|i| (self.text(i), self.counts[i])), true, KEEP)
            .into_iter()
            .map(|(g, count)| {
                let texts = &g.members;
                let mut contexts: Vec<(u64, &str)> = Vec::new();
                for &t in texts {
                    for (arrival, c) in self.contexts.get(&(t as u32)).into_iter().flatten() {
                        match contexts.iter_mut().find(|(_, k)| k == &&**c) {
                            Some(seen) => seen.0 = seen.0.min(*arrival),
                            None => contexts.push((*arrival, c)),
                        }
                    }
                }
                contexts.sort_by_key(|(a, _)| *a);
                Ask {
                    ask: g.wordings[0].0.clone(),
                    count,
                    wordings: g.wordings,
                    contexts: contexts.into_iter().map(|(_, c)| c.to_owned()).collect(),
                }
            })
            .collect()
    }
}

/// Each set's asks, in order: on the pool's threads when on one, each thread taking the largest
/// set left (so that the largest does not start last while the other threads idle).
fn group_all(sets: &[&Wordings]) -> Vec<Vec<Ask>> {
    if rayon::current_thread_index().is_none() || sets.len() < 2 {
        return sets.iter().map(|w| w.asks()).collect();
    }
    let mut order: Vec<usize> = (0..sets.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(sets[i].len()));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let workers = rayon::current_num_threads().min(sets.len());
    let mut done: Vec<(usize, Vec<Ask>)> = (0..workers)
        .into_par_iter()
        .flat_map_iter(|_| {
            let mut out = Vec::new();
            while let Some(&i) = order.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed)) {
                out.push((i, sets[i].asks()));
            }
            out
        })
        .collect();
    done.sort_unstable_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, asks)| asks).collect()
}

/// A histogram of whole numbers: exact nearest-rank percentiles in memory that grows with the
/// distinct values, not with the calls. A hash map, sorted only when a percentile is asked:
/// a call adds to two of them (its duration and its result's size), where a `BTreeMap` of a
/// few thousand values walked three or four nodes each time.
#[derive(Default)]
struct Histogram {
    counts: HashMap<u64, u64>,
    n: u64,
}

impl Histogram {
    fn add(&mut self, v: u64) {
        *self.counts.entry(v).or_default() += 1;
        self.n += 1;
    }

    /// Nearest-rank percentile (0 when empty).
    fn percentile(&self, p: u64) -> u64 {
        let rank = (p * self.n).div_ceil(100).max(1);
        let mut sorted: Vec<(u64, u64)> = self.counts.iter().map(|(&v, &c)| (v, c)).collect();
        sorted.sort_unstable();
        let mut seen = 0;
        for (v, c) in sorted {
            seen += c;
            if seen >= rank {
                return v;
            }
        }
        0
    }

    fn max(&self) -> Option<u64> {
        self.counts.keys().max().copied()
    }
}

#[derive(Default)]
struct ToolStats {
    calls: usize,
    errors: usize,
    durations: Histogram,
    sizes: Histogram,
    last_error: Option<String>,
    intents: Wordings,
    /// Intents the user's hook inferred for calls without one (kept apart, shown as inferred).
    inferred: Wordings,
}

/// A call waiting in its conversation to be taken in time order.
struct Step {
    ts: u64,
    tool: Id,
    is_error: bool,
    /// The version row it counts in, for retries.
    row: Id,
    error: Option<Box<str>>,
}

/// A conversation: its last steps, and the calls held back for time order.
struct Thread {
    calls: usize,
    /// Calls taken (in time order) so far, and the last two tools.
    taken: usize,
    last: Option<Step>,
    before_last: Id,
    /// The length of the run of `last`'s tool.
    run: usize,
    pending: Vec<Step>,
    /// The tool last counted as looping in it (`Findings::looped`), [`NO_ROW`] before any: 4
    /// bytes in the padding after `before_last`, where a list of every looping tool would cost
    /// 24 bytes a conversation.
    looped: Id,
}

impl Default for Thread {
    fn default() -> Self {
        Thread { calls: 0, taken: 0, last: None, before_last: 0, run: 0, pending: Vec::new(), looped: NO_ROW }
    }
}

/// A turn in 8 bytes: the time of its latest call (42 bits: epoch milliseconds up to 2109, past
/// the timestamps read), whether that call failed, and its number of calls (21 bits; past
/// that, `Fold::turn_calls` counts the rest).
#[derive(Clone, Copy, Default)]
struct Turn(u64);

impl Turn {
    const CALLS: u64 = (1 << 21) - 1;

    fn calls(self) -> u64 {
        self.0 & Self::CALLS
    }

    fn last_error(self) -> bool {
        (self.0 >> 21) & 1 == 1
    }

    fn last_ts(self) -> u64 {
        self.0 >> 22
    }

    fn set_last(&mut self, ts: u64, error: bool) {
        self.0 = (ts.min((1 << 42) - 1) << 22) | (u64::from(error) << 21) | self.calls();
    }
}

#[derive(Default)]
struct ModelStats {
    calls: usize,
    errors: usize,
    tools: BTreeSet<Id>,
    asks: usize,
}

struct VersionStats {
    tool: Id,
    server_version: Option<String>,
    hash: Option<String>,
    first_ms: u64,
    calls: usize,
    errors: usize,
    retries: usize,
}

/// The state of the pass.
#[derive(Default)]
pub(crate) struct Fold {
    seen: SeenIds,
    arrivals: u64,
    calls: usize,
    errors: usize,
    users: HashSet<Box<str>>,
    clients: HashSet<Box<str>>,
    models_seen: HashSet<Box<str>>,
    server_versions: HashSet<Box<str>>,
    first_ms: Option<u64>,
    last_ms: Option<u64>,
    any_version: bool,
    method_requests: usize,
    pub(crate) payload_events: usize,
    pub(crate) log_lines: usize,
    duplicates: usize,
    skipped: BTreeMap<Reason, usize>,
    places: Vec<Place>,
    unread: Vec<String>,
    out_of_order: usize,
    tool_lists: usize,
    listed: BTreeSet<String>,
    descriptions: BTreeMap<(String, String), String>,
    names: Names,
    requests: Wordings,
    tools: BTreeMap<Id, ToolStats>,
    failed: Vec<FailedAsk>,
    unknown: BTreeMap<Id, usize>,
    threads: HashMap<Box<str>, Thread>,
    /// By the turn's fingerprint: turns are only counted, never named.
    turns: Fingerprints<Turn>,
    /// The calls of a turn past `Turn::CALLS`.
    turn_calls: HashMap<u64, usize>,
    /// The turns, summed before the wordings are grouped (then `turns` is let go).
    turn_totals: Turns,
    sequences: HashMap<(Id, Id, Id), usize>,
    loops: BTreeMap<Id, (usize, usize)>,
    recoveries: BTreeMap<Id, (usize, usize, usize)>,
    rows: Vec<VersionStats>,
    /// By tool, server version and tool hash (numbered in `labels`, [`NO_ROW`] for none).
    row_ids: HashMap<(Id, Id, Id), Id>,
    labels: Names,
    models: HashMap<Box<str>, ModelStats>,
    unknown_model_calls: usize,
    findings: Findings,
}

impl Fold {
    /// Reads where the calls' `callId`s and turns will be looked for, all at once: the cache
    /// misses of independent reads overlap, where folding one call after the other waits for
    /// each in turn (the two tables are most of the fold's time at 10 M calls otherwise).
    pub(crate) fn warm(&self, keys: impl Iterator<Item = (Option<u64>, Option<u64>)>) {
        let mut read = 0;
        for (id, turn) in keys {
            read ^= id.map_or(0, |id| self.seen.touch(id)) ^ turn.map_or(0, |t| self.turns.touch(t));
        }
        std::hint::black_box(read);
    }

    /// A line or value skipped, and where.
    pub(crate) fn skip(&mut self, reason: Reason, source: &str, line: u64) {
        *self.skipped.entry(reason).or_default() += 1;
        if self.places.len() < PLACES {
            self.places.push(Place { file: source.to_owned(), line, reason: reason.as_str().to_owned() });
        }
    }

    /// A file that could not be read (or not to the end), and why.
    pub(crate) fn unread(&mut self, what: String) {
        self.unread.push(what);
    }

    pub(crate) fn method(&mut self) {
        self.method_requests += 1;
    }

    pub(crate) fn tools(&mut self, tools: Vec<ListedTool>) {
        self.tool_lists += 1;
        for t in tools {
            if !own_tool(&t.name) {
                self.listed.insert(t.name.clone());
            }
            if let Some(d) = t.description {
                self.descriptions.insert((t.name, t.hash), d);
            }
        }
    }

    /// A call, unless its `callId` was seen before.
    pub(crate) fn call(&mut self, c: CallView<'_>) {
        if let Some(id) = c.call_id {
            if !self.seen.insert(id) {
                self.duplicates += 1;
                return;
            }
        }
        let arrival = self.arrivals;
        self.arrivals += 1;
        self.calls += 1;
        self.errors += usize::from(c.is_error);
        if let Some(u) = c.user {
            if !self.users.contains(u) {
                self.users.insert(u.into());
            }
        }
        for (set, v) in [
            (&mut self.clients, c.client),
            (&mut self.models_seen, c.model),
            (&mut self.server_versions, c.server_version),
        ] {
            if let Some(v) = v {
                if !set.contains(v) {
                    set.insert(v.into());
                }
            }
        }
        if c.ts > 0 {
            self.first_ms = Some(self.first_ms.map_or(c.ts, |f| f.min(c.ts)));
            self.last_ms = Some(self.last_ms.map_or(c.ts, |l| l.max(c.ts)));
        }
        self.any_version |= c.server_version.is_some() || c.tool_hash.is_some();
        let tool = self.names.id(c.tool);
        let reserved = own_tool(c.tool);
        let unknown = c.is_unknown_tool();
        self.findings.update(&c, tool, unknown, reserved);
        // The Intent Gap and the tools.
        if let Some(capability) = c.capability {
            self.requests.add(capability, c.context, arrival);
        }
        let mut row = NO_ROW;
        if !reserved {
            if unknown {
                *self.unknown.entry(tool).or_default() += 1;
            } else {
                let t = self.tools.entry(tool).or_default();
                t.calls += 1;
                t.errors += usize::from(c.is_error);
                t.durations.add(c.duration_ms);
                if let Some(size) = c.result_bytes {
                    t.sizes.add(size);
                }
                if let Some(e) = c.error {
                    t.last_error = Some(e.to_owned());
                }
                // The call's own intent, else the one the user's hook inferred, kept apart.
                let intent = c.intent.map(|i| (i, false)).or(c.inferred_intent.map(|i| (i, true)));
                if let Some((intent, inferred)) = intent {
                    let wordings = if inferred { &mut t.inferred } else { &mut t.intents };
                    wordings.add(intent, None, arrival);
                    if c.is_error && self.failed.len() < KEEP {
                        self.failed.push(FailedAsk {
                            tool: c.tool.to_owned(),
                            intent: intent.to_owned(),
                            error: c.error.map(str::to_owned),
                            inferred,
                        });
                    }
                }
                if c.server_version.is_some() || c.tool_hash.is_some() {
                    let mut label = |v: Option<&str>| v.map_or(NO_ROW, |v| self.labels.id(v));
                    let key = (tool, label(c.server_version), label(c.tool_hash));
                    let next = self.rows.len() as Id;
                    row = *self.row_ids.entry(key).or_insert(next);
                    if row == next {
                        self.rows.push(VersionStats {
                            tool,
                            server_version: c.server_version.map(str::to_owned),
                            hash: c.tool_hash.map(str::to_owned),
                            first_ms: c.ts,
                            calls: 0,
                            errors: 0,
                            retries: 0,
                        });
                    }
                    let r = &mut self.rows[row as usize];
                    r.first_ms = r.first_ms.min(c.ts);
                    r.calls += 1;
                    r.errors += usize::from(c.is_error);
                }
            }
        }
        // The models.
        match c.model {
            Some(model) => {
                if !self.models.contains_key(model) {
                    self.models.insert(model.into(), ModelStats::default());
                }
                let m = self.models.get_mut(model).expect("inserted above");
                m.calls += 1;
                m.errors += usize::from(c.is_error);
                if !reserved {
                    m.tools.insert(tool);
                }
                m.asks += usize::from(c.capability.is_some());
            }
            None => self.unknown_model_calls += 1,
        }
        // The turns: their last call is the latest in time, the later read on a tie.
        if let Some(key) = c.turn_id {
            let (t, _) = self.turns.entry(key);
            let calls = t.calls();
            if calls == 0 || c.ts >= t.last_ts() {
                t.set_last(c.ts, c.is_error);
            }
            if calls < Turn::CALLS {
                t.0 += 1;
            } else {
                *self.turn_calls.entry(key.max(1)).or_default() += 1;
            }
        }
        // The paths: the conversation's calls in time order, through a small reorder window.
        if let Some(thread) = c.thread() {
            if !self.threads.contains_key(thread) {
                self.threads.insert(thread.into(), Thread::default());
            }
            let th = self.threads.get_mut(thread).expect("inserted above");
            th.calls += 1;
            let step = Step { ts: c.ts, tool, is_error: c.is_error, row, error: c.error.map(Into::into) };
            if th.last.as_ref().is_some_and(|l| step.ts < l.ts) {
                self.out_of_order += 1;
            }
            let at = th.pending.partition_point(|p| p.ts <= step.ts);
            th.pending.insert(at, step);
            if th.pending.len() > REORDER {
                let next = th.pending.remove(0);
                let mut paths = Paths {
                    sequences: &mut self.sequences,
                    loops: &mut self.loops,
                    recoveries: &mut self.recoveries,
                    rows: &mut self.rows,
                    findings: &mut self.findings,
                };
                take(th, next, &mut paths);
            }
        }
    }

    /// The report: the held-back calls taken, every section sorted.
    pub(crate) fn finish(mut self) -> Report {
        // What only the pass needs goes before the grouping, which needs memory of its own.
        self.seen = SeenIds::default();
        self.turn_totals = self.sum_turns();
        self.turns = Fingerprints::default();
        // Every conversation's held-back calls, in time order.
        let mut paths = Paths {
            sequences: &mut self.sequences,
            loops: &mut self.loops,
            recoveries: &mut self.recoveries,
            rows: &mut self.rows,
            findings: &mut self.findings,
        };
        for th in self.threads.values_mut() {
            for step in std::mem::take(&mut th.pending) {
                take(th, step, &mut paths);
            }
            if let Some(last) = &th.last {
                paths.findings.ended(last.tool, last.is_error, last.error.as_deref(), th.calls);
            }
            if th.run >= 3 {
                let tool = th.last.as_ref().map_or(0, |l| l.tool);
                let l = paths.loops.entry(tool).or_default();
                l.0 += 1;
                l.1 = l.1.max(th.run);
            }
        }
        let overview = Overview {
            calls: self.calls,
            errors: self.errors,
            error_rate: rate(self.errors, self.calls),
            users: self.users.len(),
            clients: sorted(std::mem::take(&mut self.clients)),
            models: sorted(std::mem::take(&mut self.models_seen)),
            server_versions: sorted(std::mem::take(&mut self.server_versions)),
            conversations: self.threads.len(),
            method_requests: self.method_requests,
            first_ms: self.first_ms,
            last_ms: self.last_ms,
            payload_events: self.payload_events,
            log_lines: self.log_lines,
            duplicates: self.duplicates,
            skipped: self.skipped.values().sum(),
        };
        let input = InputSection {
            skipped: self.skipped.iter().map(|(r, n)| (r.as_str().to_owned(), *n)).collect(),
            places: std::mem::take(&mut self.places),
            unread_files: std::mem::take(&mut self.unread),
            out_of_order: self.out_of_order,
        };
        let intent_gap = self.gap();
        let (findings, feedback) = self.findings(&intent_gap);
        Report {
            findings,
            overview,
            intent_gap,
            tools: self.tool_rows(),
            paths: self.paths(),
            versions: self.versions(),
            models: self.model_rows(),
            feedback,
            input,
        }
    }

    /// The findings, from what the pass counted (before the sections take it).
    fn findings(&mut self, gap: &GapSection) -> (Vec<Finding>, FeedbackSection) {
        let called: BTreeSet<&str> = self.tools.keys().map(|&t| self.names.name(t)).collect();
        // A listed tool's description (of its last hash in hash order, when it had several).
        let description = |name: &str| {
            self.descriptions
                .range((name.to_owned(), String::new())..)
                .take_while(|((n, _), _)| n == name)
                .last()
                .map(|(_, d)| d.as_str())
        };
        let with_threads = !self.threads.is_empty();
        // Each tool's versions in order of first call, as the Versions section shows them.
        let mut rows: Vec<&VersionStats> = self.rows.iter().collect();
        rows.sort_by_key(|r| (r.tool, r.first_ms));
        let versions: Vec<VersionFacts<'_>> = rows
            .into_iter()
            .map(|r| {
                let tool = self.names.name(r.tool);
                VersionFacts {
                    tool: r.tool,
                    label: match (&r.server_version, &r.hash) {
                        (Some(v), Some(h)) => format!("{v} · {h}"),
                        (Some(v), None) => v.clone(),
                        (None, Some(h)) => h.clone(),
                        (None, None) => "?".into(),
                    },
                    calls: r.calls,
                    errors: r.errors,
                    retries: with_threads.then_some(r.retries),
                    description: r
                        .hash
                        .as_ref()
                        .and_then(|h| self.descriptions.get(&(tool.to_owned(), h.clone())))
                        .map(String::as_str),
                }
            })
            .collect();
        let facts = Facts {
            names: &self.names.names,
            tools: self
                .tools
                .iter()
                .map(|(&id, t)| ToolFacts {
                    id,
                    calls: t.calls,
                    p95_ms: t.durations.percentile(95),
                    durations: &t.durations.counts,
                })
                .collect(),
            versions,
            asks: &gap.asks,
            tool_list: self.tool_lists > 0,
            never_called: self
                .listed
                .iter()
                .filter(|n| !called.contains(n.as_str()))
                .map(|n| (n.as_str(), description(n)))
                .collect(),
        };
        std::mem::take(&mut self.findings).evaluate(&facts)
    }

    fn gap(&mut self) -> GapSection {
        // Each tool's intents (its own, and apart those inferred) and the capability requests
        // are grouped apart: on the pool's threads when the report runs on one, the largest
        // first (`group_all`).
        let with_intents: Vec<(Id, &ToolStats)> = self
            .tools
            .iter()
            .filter(|(_, t)| t.intents.len() > 0 || t.inferred.len() > 0)
            .map(|(&tool, t)| (tool, t))
            .collect();
        let mut sets: Vec<&Wordings> = vec![&self.requests];
        for (_, t) in &with_intents {
            sets.push(&t.intents);
            sets.push(&t.inferred);
        }
        let mut grouped = group_all(&sets).into_iter();
        let asks = grouped.next().unwrap_or_default();
        let mut intents: Vec<ToolIntents> = with_intents
            .iter()
            .map(|&(tool, t)| ToolIntents {
                tool: self.names.name(tool).to_owned(),
                calls: t.calls,
                with_intent: t.intents.calls(),
                intents: grouped.next().unwrap_or_default(),
                with_inferred: t.inferred.calls(),
                inferred: grouped.next().unwrap_or_default(),
            })
            .collect();
        intents.sort_by(|a, b| b.with_intent.cmp(&a.with_intent).then_with(|| a.tool.cmp(&b.tool)));
        let mut unknown_tools: Vec<Unknown> =
            self.unknown.iter().map(|(&t, &calls)| Unknown { name: self.names.name(t).to_owned(), calls }).collect();
        unknown_tools.sort_by(|a, b| b.calls.cmp(&a.calls).then_with(|| a.name.cmp(&b.name)));
        let mut needs = Vec::new();
        if self.requests.len() == 0 {
            needs.push(format!(
                "capability requests: calls of {RESERVED_TOOL_NAME} (listed unless Config::capture_missing_capabilities(false)); none in the input"
            ));
        }
        if intents.is_empty() {
            needs.push(
                "intents: the mcpeyeIntent argument agents fill (or the client's _meta aiInvocation); no call carried one"
                    .into(),
            );
        }
        GapSection { asks, intents, failed: std::mem::take(&mut self.failed), unknown_tools, needs }
    }

    fn tool_rows(&mut self) -> ToolsSection {
        let mut rows: Vec<ToolRow> = self
            .tools
            .iter_mut()
            .map(|(&tool, t)| ToolRow {
                tool: self.names.name(tool).to_owned(),
                calls: t.calls,
                errors: t.errors,
                error_rate: rate(t.errors, t.calls),
                p50_ms: t.durations.percentile(50),
                p95_ms: t.durations.percentile(95),
                p99_ms: t.durations.percentile(99),
                result_p50_bytes: (t.sizes.n > 0).then(|| t.sizes.percentile(50)),
                result_max_bytes: t.sizes.max(),
                last_error: t.last_error.take(),
            })
            .collect();
        rows.sort_by(|a, b| b.calls.cmp(&a.calls).then_with(|| a.tool.cmp(&b.tool)));
        let called: BTreeSet<&str> = self.tools.keys().map(|&t| self.names.name(t)).collect();
        let never_called = self.listed.iter().filter(|n| !called.contains(n.as_str())).cloned().collect();
        let mut needs = Vec::new();
        if self.tool_lists == 0 {
            needs.push(format!("tools never called: the tool list, from {NEEDS_LOG}"));
        }
        ToolsSection { tools: rows, never_called, needs }
    }

    /// The turns' figures.
    fn sum_turns(&self) -> Turns {
        let mut turns = Turns { turns: self.turns.len(), ..Turns::default() };
        for (key, t) in self.turns.iter() {
            let calls = t.calls() as usize + self.turn_calls.get(&key).copied().unwrap_or(0);
            turns.calls += calls;
            turns.most_calls = turns.most_calls.max(calls);
            turns.with_several_calls += usize::from(calls > 1);
            turns.ended_on_error += usize::from(t.last_error());
        }
        turns
    }

    fn paths(&mut self) -> PathsSection {
        let turns = std::mem::take(&mut self.turn_totals);
        let turns_need = (turns.turns == 0).then(|| {
            format!("turns: the client's _meta aiInvocation.turnId (the MCP proposal for AI invocation metadata), from {NEEDS_LOG}")
        });
        if self.threads.is_empty() {
            let mut needs = vec![format!("conversations: a session, conversation or turn per call, from {NEEDS_LOG}")];
            needs.extend(turns_need);
            return PathsSection { needs, ..PathsSection::default() };
        }
        let name = |t: Id| self.names.name(t).to_owned();
        // The conversations that ended on an error: the first 50 by name, then most calls first.
        let mut ended_all: Vec<(&str, &Thread)> = self
            .threads
            .iter()
            .filter(|(_, th)| th.last.as_ref().is_some_and(|l| l.is_error))
            .map(|(id, th)| (&**id, th))
            .collect();
        ended_all.sort_by(|a, b| a.0.cmp(b.0));
        let mut ended: Vec<Ending> = ended_all
            .iter()
            .take(KEEP)
            .map(|(id, th)| {
                let last = th.last.as_ref().expect("filtered above");
                Ending {
                    conversation: (*id).to_owned(),
                    calls: th.calls,
                    tool: name(last.tool),
                    error: last.error.as_deref().map(str::to_owned),
                }
            })
            .collect();
        ended.sort_by(|a, b| b.calls.cmp(&a.calls).then_with(|| a.conversation.cmp(&b.conversation)));
        let mut sequences: Vec<Sequence> = self
            .sequences
            .iter()
            .filter(|(_, n)| **n >= 2)
            .map(|(&(a, b, c), &count)| {
                let mut tools = vec![name(a), name(b)];
                if c != NO_ROW {
                    tools.push(name(c));
                }
                Sequence { tools, count }
            })
            .collect();
        sequences.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.tools.cmp(&b.tools)));
        sequences.truncate(KEEP);
        let mut loops: Vec<Loop> =
            self.loops.iter().map(|(&t, &(runs, longest))| Loop { tool: name(t), runs, longest }).collect();
        loops.sort_by(|a, b| b.runs.cmp(&a.runs).then_with(|| a.tool.cmp(&b.tool)));
        let mut recoveries: Vec<Recovery> = self
            .recoveries
            .iter()
            .map(|(&t, &(errors, retried, recovered))| Recovery { tool: name(t), errors, retried, recovered })
            .collect();
        recoveries.sort_by(|a, b| b.errors.cmp(&a.errors).then_with(|| a.tool.cmp(&b.tool)));
        PathsSection {
            conversations: self.threads.len(),
            calls: self.threads.values().map(|t| t.calls).sum(),
            sequences,
            loops,
            recoveries,
            ended_on_error: ended,
            ended_on_error_count: ended_all.len(),
            turns,
            needs: turns_need.into_iter().collect(),
        }
    }

    fn versions(&mut self) -> VersionsSection {
        let with_threads = !self.threads.is_empty();
        let mut per_tool: BTreeMap<&str, Vec<VersionRow>> = BTreeMap::new();
        for r in &self.rows {
            let tool = self.names.name(r.tool);
            per_tool.entry(tool).or_default().push(VersionRow {
                tool: tool.to_owned(),
                server_version: r.server_version.clone(),
                hash: r.hash.clone(),
                description: r
                    .hash
                    .as_ref()
                    .and_then(|h| self.descriptions.get(&(tool.to_owned(), h.clone())))
                    .cloned(),
                first_ms: r.first_ms,
                calls: r.calls,
                errors: r.errors,
                error_rate: rate(r.errors, r.calls),
                retries: with_threads.then_some(r.retries),
            });
        }
        let mut tools = Vec::new();
        for (_, mut versions) in per_tool.into_iter().filter(|(_, v)| v.len() > 1) {
            versions.sort_by(|a, b| {
                a.first_ms
                    .cmp(&b.first_ms)
                    .then_with(|| (&a.server_version, &a.hash).cmp(&(&b.server_version, &b.hash)))
            });
            tools.extend(versions);
        }
        let mut needs = Vec::new();
        if !self.any_version {
            needs.push(format!(
                "versions: the identity's serverVersion (Identity::server_version) or the descriptor hashes of {NEEDS_LOG}"
            ));
        } else if tools.is_empty() {
            needs.push("a second version: every tool was called under one server version and one description".into());
        }
        if !with_threads {
            needs.push(format!("retries: conversations, from {NEEDS_LOG}"));
        }
        VersionsSection { tools, needs }
    }

    fn model_rows(&mut self) -> ModelsSection {
        let mut models: Vec<ModelRow> = std::mem::take(&mut self.models)
            .into_iter()
            .map(|(model, m)| ModelRow {
                model: model.into_string(),
                calls: m.calls,
                errors: m.errors,
                error_rate: rate(m.errors, m.calls),
                tools: m.tools.len(),
                asks: m.asks,
            })
            .collect();
        models.sort_by(|a, b| b.calls.cmp(&a.calls).then_with(|| a.model.cmp(&b.model)));
        let needs = if models.is_empty() {
            vec![format!(
                "the model of each call (the client's _meta, or ManifestBuilder::model_argument), from {NEEDS_LOG}"
            )]
        } else {
            Vec::new()
        };
        ModelsSection { models, unknown_model_calls: self.unknown_model_calls, needs }
    }
}

/// What the paths count, apart from the conversations (so that a conversation can be borrowed
/// alongside).
struct Paths<'a> {
    sequences: &'a mut HashMap<(Id, Id, Id), usize>,
    loops: &'a mut BTreeMap<Id, (usize, usize)>,
    recoveries: &'a mut BTreeMap<Id, (usize, usize, usize)>,
    rows: &'a mut Vec<VersionStats>,
    findings: &'a mut Findings,
}

/// The next call of a conversation in time order: its sequences, runs, and what it followed.
fn take(th: &mut Thread, step: Step, p: &mut Paths<'_>) {
    if let Some(last) = &th.last {
        *p.sequences.entry((last.tool, step.tool, NO_ROW)).or_default() += 1;
        if th.taken >= 2 {
            *p.sequences.entry((th.before_last, last.tool, step.tool)).or_default() += 1;
        }
        if step.tool == last.tool {
            th.run += 1;
            if th.run >= findings::LOOP_RUN {
                p.findings.looped(&mut th.looped, step.tool, th.run, step.error.as_deref());
            }
        } else {
            if th.run >= 3 {
                let l = p.loops.entry(last.tool).or_default();
                l.0 += 1;
                l.1 = l.1.max(th.run);
            }
            th.run = 1;
        }
        if last.is_error {
            let r = p.recoveries.entry(last.tool).or_default();
            r.0 += 1;
            if step.tool == last.tool {
                r.1 += 1;
                r.2 += usize::from(!step.is_error);
                if step.row != NO_ROW {
                    p.rows[step.row as usize].retries += 1;
                }
            }
        }
        th.before_last = last.tool;
    } else {
        th.run = 1;
    }
    th.taken += 1;
    th.last = Some(step);
}

fn rate(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}
