//! Grouping texts that say the same thing in other words (capability requests, intents),
//! without calling any model: each text becomes a set of word stems, and two texts are one ask
//! when their sets are similar enough.
//!
//! 1. Lower case; every run of characters that are not letters or digits splits words.
//! 2. Stop words are dropped ([`STOP_WORDS`]: articles, pronouns, auxiliaries, prepositions,
//!    and the filler of requests such as "please", "want", "able").
//! 3. Each word is stemmed lightly ([`stem`]): plural `-s`/`-es`/`-ies`, `-ing`, `-ed`.
//! 4. Two sets are the same ask when their Jaccard similarity (shared stems over all stems) is
//!    at least [`THRESHOLD`] (3/5), or when the smaller has at least three stems, all in the
//!    larger. "export my orders as CSV", "Export orders to CSV." and "export my order history
//!    as a CSV file" are one ask; "export orders as PDF" is another (2 of 4 shared).
//! 5. Two texts whose action words differ are not the same ask, however many other stems they
//!    share: the action word of a text is its first word that is a form of one of
//!    [`ACTION_VERBS`] ("email me my order history as Excel" is `email`, "export my order history
//!    to Excel" is `export`: two asks). A text without one is judged by its stems alone.
//!
//! Wordings are taken most frequent first; each joins the first group whose first wording is
//! similar to it, so that groups do not chain through a vague wording.
//!
//! Finding that group does not compare a wording with every group (a set-similarity join):
//! the stems are numbered in one global order (rarest first), and a group's first wording is
//! indexed by the first stems of its set (prefix filtering: two sets with a Jaccard similarity
//! of at least 3/5 that share `l` stems or more share `l` of the first `n - ceil(3n/5) + l` of
//! each). Sets of 4 to 20 stems are indexed by the triples of those first stems; smaller and
//! larger ones by the single stems. The containment rule has two indexes of its own: every stem
//! of the larger set, the rarest stem of the smaller. Only the groups found under a new
//! wording's stems are checked, in order of creation, with the rule above: the groups are
//! those of comparing with every group, in a time that grows with the wordings and their
//! similar pairs rather than with the wordings times the groups.

use crate::fold::Fingerprints;
use rustc_hash::FxHashMap;
use std::cmp::Reverse;
use std::collections::hash_map::Entry;
use std::collections::{BTreeSet, HashMap};
use std::hash::BuildHasher;

/// Shared stems over all stems (numerator, denominator): at least 3/5 is the same ask.
pub const THRESHOLD: (usize, usize) = (3, 5);

/// Words that carry no ask (sorted).
pub const STOP_WORDS: &[&str] = &[
    "a", "able", "about", "all", "also", "an", "and", "any", "are", "as", "at", "be", "been", "but", "by", "can",
    "could", "did", "do", "does", "for", "from", "get", "had", "has", "have", "he", "her", "his", "how", "i", "if",
    "in", "into", "is", "it", "its", "just", "let", "like", "me", "my", "need", "needed", "needs", "of", "on", "or",
    "our", "please", "she", "should", "so", "some", "that", "the", "their", "them", "then", "there", "these", "they",
    "this", "those", "to", "us", "user", "via", "want", "wanted", "wants", "was", "we", "were", "what", "which", "who",
    "will", "with", "would", "you", "your",
];

/// The action words (sorted): a text's first word that is one of these, in any regular form
/// ("emails", "emailed", "emailing"; "created", "copies", "cancelled"), is its action word.
pub const ACTION_VERBS: &[&str] = &[
    "add",
    "archive",
    "book",
    "cancel",
    "change",
    "compare",
    "convert",
    "copy",
    "create",
    "delete",
    "download",
    "edit",
    "email",
    "export",
    "filter",
    "find",
    "import",
    "invite",
    "list",
    "merge",
    "move",
    "notify",
    "pay",
    "print",
    "refund",
    "remind",
    "remove",
    "rename",
    "reschedule",
    "restore",
    "schedule",
    "search",
    "send",
    "share",
    "ship",
    "show",
    "sort",
    "split",
    "subscribe",
    "summarize",
    "sync",
    "track",
    "transfer",
    "translate",
    "unsubscribe",
    "update",
    "upload",
];

/// A light stem: plural and verb endings off, so that "orders", "ordering" and "ordered" are
/// "order", and "histories" is "history". Short words are left as they are.
pub fn stem(word: &str) -> String {
    let n = word.chars().count();
    let cut = |suffix: &str, keep: usize| -> Option<String> {
        (word.ends_with(suffix) && n >= suffix.len() + keep).then(|| word[..word.len() - suffix.len()].to_owned())
    };
    if let Some(base) = cut("ies", 3) {
        return base + "y";
    }
    if word.ends_with("sses") || word.ends_with("xes") || word.ends_with("ches") || word.ends_with("shes") {
        return word[..word.len() - 2].to_owned();
    }
    if let Some(base) = cut("ing", 3).or_else(|| cut("ed", 3)) {
        return base;
    }
    if !word.ends_with("ss") && !word.ends_with("us") && !word.ends_with("is") {
        if let Some(base) = cut("s", 3) {
            return base;
        }
    }
    word.to_owned()
}

/// The stems of a text's words in the text's order, stop words left out (repeats kept).
fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty() && STOP_WORDS.binary_search(w).is_err())
        .map(stem)
        .collect::<Vec<_>>()
        .into_iter()
}

/// The stems of a text's words, stop words left out.
#[cfg_attr(not(test), allow(dead_code))] // the rule on texts: the join's reference
pub fn stems(text: &str) -> BTreeSet<String> {
    words(text).collect()
}

/// Which of [`ACTION_VERBS`] a stem is a form of: the stem itself, or with the `e`, the `y`
/// or the single final consonant that [`stem`] took off ("creat", "copi", "cancell").
fn action_of(stem: &str) -> Option<usize> {
    let find = |w: &str| ACTION_VERBS.binary_search(&w).ok();
    find(stem)
        .or_else(|| find(&format!("{stem}e")))
        .or_else(|| stem.strip_suffix('i').and_then(|base| find(&format!("{base}y"))))
        .or_else(|| {
            let b = stem.as_bytes();
            (b.len() >= 2 && b[b.len() - 1] == b[b.len() - 2] && b[b.len() - 1].is_ascii_alphabetic())
                .then(|| find(&stem[..stem.len() - 1]))
                .flatten()
        })
}

/// A text's action word: its first word that is a form of one of [`ACTION_VERBS`].
#[cfg_attr(not(test), allow(dead_code))] // the rule on texts: the join's reference
pub fn action_word(text: &str) -> Option<&'static str> {
    words(text).find_map(|w| action_of(&w)).map(|i| ACTION_VERBS[i])
}

/// Whether two stem sets are the same ask by their stems (rule 4 of the module's doc).
#[cfg_attr(not(test), allow(dead_code))] // the rule on texts: the join's reference
pub fn similar(a: &BTreeSet<String>, b: &BTreeSet<String>) -> bool {
    if a.is_empty() || b.is_empty() {
        return a == b;
    }
    let shared = a.intersection(b).count();
    let all = a.len() + b.len() - shared;
    let (num, den) = THRESHOLD;
    let (small, large) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    shared * den >= all * num || (small.len() >= 3 && small.is_subset(large))
}

/// Whether two texts are the same ask (see the module's doc): similar stems, and no two
/// different action words.
#[cfg_attr(not(test), allow(dead_code))] // the rule on texts: the join's reference
pub fn same_ask(a: &str, b: &str) -> bool {
    !verbs_differ(action_word(a), action_word(b)) && similar(&stems(a), &stems(b))
}

#[cfg_attr(not(test), allow(dead_code))]
fn verbs_differ<T: PartialEq>(a: Option<T>, b: Option<T>) -> bool {
    matches!((a, b), (Some(a), Some(b)) if a != b)
}

/// Texts that differ only in case, spacing or final punctuation are the same wording.
pub fn wording_key(text: &str) -> String {
    if text.is_ascii() {
        // The same, in one buffer.
        let mut key = String::with_capacity(text.len());
        for w in text.split_whitespace() {
            if !key.is_empty() {
                key.push(' ');
            }
            key.push_str(w);
        }
        key.make_ascii_lowercase();
        let end = key.trim_end_matches(['.', '!', '?', ';', ',']).trim_end().len();
        key.truncate(end);
        return key;
    }
    any_wording_key(text)
}

/// [`wording_key`] of any text.
fn any_wording_key(text: &str) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase();
    flat.trim_end_matches(['.', '!', '?', ';', ',']).trim_end().to_owned()
}

/// A group of texts: its wordings, most frequent first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    /// (wording as first written, how often), most frequent first, then in order of arrival.
    pub wordings: Vec<(String, usize)>,
    /// The indices (into the input) of the texts in the group, in input order.
    pub members: Vec<usize>,
}

impl Group {
    /// How many texts the group holds.
    #[cfg_attr(not(test), allow(dead_code))] // the fold groups counted texts (`group_counted`)
    pub fn count(&self) -> usize {
        self.members.len()
    }
}

/// Groups `texts` (see the module's doc); groups most numerous first, ties in order of arrival.
#[cfg_attr(not(test), allow(dead_code))] // the fold groups counted texts (`group_counted`)
pub fn group<'a>(texts: impl IntoIterator<Item = &'a str>) -> Vec<Group> {
    group_by(texts, true)
}

/// The stems two sets with a Jaccard similarity of at least [`THRESHOLD`] share at least, when
/// one of them has `n`: `ceil(num * n / den)`.
fn least_shared(n: usize) -> usize {
    let (num, den) = THRESHOLD;
    (num * n).div_ceil(den)
}

/// A set's first stems (in the global order) among which two similar sets share `l` at least:
/// `n - least_shared(n) + l` (the `l`-prefix lemma, when they share `l` stems or more).
fn prefix(n: usize, l: usize) -> usize {
    (n + l - least_shared(n)).min(n)
}

/// Sets of these sizes are indexed by their prefix's single stems ([`SMALL`]: the sets a set
/// of three stems or fewer can be similar to), by the triples of their 3-prefix ([`TRIPLES`]:
/// two such sets share three stems at least) or by their prefix's single stems again
/// ([`LARGE`]: the sets a set larger than `TRIPLES.1` can be similar to). Any two similar sets
/// are both in one of the three.
const SMALL: usize = 5;
const TRIPLES: (usize, usize) = (4, 20);
const LARGE: usize = 13;

/// Groups under hashed keys, in order of creation.
#[derive(Default)]
struct Chains {
    lists: HashMap<u64, Vec<u32>, std::hash::BuildHasherDefault<Premixed>>,
}

impl Chains {
    fn add(&mut self, key: u64, group: u32) {
        self.lists.entry(key).or_default().push(group);
    }

    /// The groups under `key`, in order of creation.
    fn list(&self, key: u64) -> &[u32] {
        self.lists.get(&key).map_or(&[], |l| l)
    }
}

/// A triple of stems as a key (a collision only adds a candidate, which is then checked).
fn triple_key(a: u32, b: u32, c: u32) -> u64 {
    let mix = |mut z: u64| {
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    mix(mix((u64::from(a) << 32) | u64::from(b)) ^ u64::from(c))
}

/// The keys are mixed already.
#[derive(Default)]
struct Premixed(u64);

impl std::hash::Hasher for Premixed {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// Calls `each` with every triple of `stems`, in order.
fn triples(stems: &[u32], mut each: impl FnMut(u64)) {
    for (i, &a) in stems.iter().enumerate() {
        for (j, &b) in stems.iter().enumerate().skip(i + 1) {
            for &c in &stems[j + 1..] {
                each(triple_key(a, b, c));
            }
        }
    }
}

/// The stems two non-empty sets of these sizes must share to be the same ask, if they can:
/// `shared * den >= (|a| + |b| - shared) * num` is `shared >= (|a| + |b|) * num / (num + den)`;
/// a set of three or more within the other shares all its own.
fn must_share(a: usize, b: usize) -> Option<usize> {
    let (num, den) = THRESHOLD;
    let small = a.min(b);
    let by_jaccard = ((a + b) * num).div_ceil(num + den);
    let need = if small >= 3 { by_jaccard.min(small) } else { by_jaccard };
    (need <= small).then_some(need)
}

/// A group's first wording as a candidate's check reads it first, 16 bytes side by side: its
/// number of stems, its action word, and a signature of its stems (bit `stem % 64` of each).
/// A stem of the new wording whose bit is not in the signature is not shared, so most
/// candidates are told apart without reading their stems (a cache miss each, when a million
/// wordings make tens of thousands of groups).
#[derive(Clone, Copy)]
struct Seed {
    signature: u64,
    len: u32,
    verb: u8,
}

impl Seed {
    fn of(stems: &[u32], verb: u8) -> Self {
        Seed { signature: stems.iter().fold(0, |sig, s| sig | 1 << (s % 64)), len: stems.len() as u32, verb }
    }

    /// Whether the seed cannot be the same ask as a non-empty `x` with action word `verb`:
    /// differing action words, or fewer stems that may be shared than they must share.
    fn rules_out(&self, x: &[u32], verb: u8) -> bool {
        if self.verb != 0 && verb != 0 && self.verb != verb {
            return true;
        }
        match must_share(self.len as usize, x.len()) {
            None => true,
            Some(need) => x.iter().filter(|&&s| self.signature >> (s % 64) & 1 == 1).count() < need,
        }
    }
}

/// [`same_ask`] on sorted stem numbers and action words (0: none).
fn same_sets(a: &[u32], a_verb: u8, b: &[u32], b_verb: u8) -> bool {
    if a_verb != 0 && b_verb != 0 && a_verb != b_verb {
        return false;
    }
    if a.is_empty() || b.is_empty() {
        return a.is_empty() && b.is_empty();
    }
    // The merge stops once what is left cannot reach the stems they must share.
    let Some(need) = must_share(a.len(), b.len()) else { return false };
    let (mut i, mut j, mut shared) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        if shared + (a.len() - i).min(b.len() - j) < need {
            return false;
        }
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                shared += 1;
                i += 1;
                j += 1;
            }
        }
    }
    shared >= need
}

/// [`group`], with the action word's rule or without it.
#[cfg_attr(not(test), allow(dead_code))] // the fold groups counted texts (`group_counted`)
fn group_by<'a>(texts: impl IntoIterator<Item = &'a str>, verbs: bool) -> Vec<Group> {
    group_counted(texts.into_iter().map(|t| (t, 1)), verbs, usize::MAX).into_iter().map(|(g, _)| g).collect()
}

/// [`group`] of texts each given with how often it came (`(text, n)` stands for `n` texts
/// `text` in a row): the groups of the texts repeated, but with the members the indices of the
/// given texts, and with each group how many texts it holds. The grouping of distinct texts
/// with their counts (the fold's) is the grouping of every text, each wording prepared once.
pub(crate) fn group_counted<'a>(
    texts: impl IntoIterator<Item = (&'a str, usize)>,
    verbs: bool,
    keep: usize,
) -> Vec<(Group, usize)> {
    // Exact wordings first: (first text, its first index, texts), and the other indices of
    // each. A wording is found by its key's hash (checked against the key of its first text:
    // a hash two keys share sends the later to `clashes`), so that the keys of a million
    // distinct texts are not held.
    let mut at: Fingerprints<u32> = Fingerprints::default();
    let mut clashes: FxHashMap<String, u32> = FxHashMap::default();
    let mut wordings: Vec<(&'a str, usize, usize)> = Vec::new();
    let mut more: Vec<(u32, usize)> = Vec::new();
    for (i, (text, n)) in texts.into_iter().enumerate() {
        let key = wording_key(text);
        let next = wordings.len() as u32;
        let (slot, was) = at.entry(rustc_hash::FxBuildHasher.hash_one(&key));
        let w = if !was {
            *slot = next;
            next
        } else if wording_key(wordings[*slot as usize].0) == key {
            *slot
        } else {
            *clashes.entry(key).or_insert(next)
        };
        if w == next {
            wordings.push((text.trim(), i, n));
        } else {
            wordings[w as usize].2 += n;
            more.push((w, i));
        }
    }
    drop((at, clashes));
    // Stable: equal counts stay in order of arrival.
    let mut sorted: Vec<u32> = (0..wordings.len() as u32).collect();
    sorted.sort_by_key(|&w| Reverse(wordings[w as usize].2));
    let wordings: Vec<(&'a str, usize, usize)> = sorted.iter().map(|&w| wordings[w as usize]).collect();
    let mut place = vec![0u32; wordings.len()];
    for (k, &w) in sorted.iter().enumerate() {
        place[w as usize] = k as u32;
    }
    drop(sorted);
    for m in &mut more {
        m.0 = place[m.0 as usize];
    }
    drop(place);

    // Each wording's stems as numbers, and its action word (index + 1, 0 for none).
    // Each word is looked up once in the stop words, stemmed once and its stem's action word
    // found once: `words` holds what a (lowercase) word is, a stem's number or STOP.
    const STOP: u32 = u32::MAX;
    let mut words: FxHashMap<Box<str>, u32> = FxHashMap::default();
    let mut ids: FxHashMap<String, u32> = FxHashMap::default();
    let mut actions: Vec<u8> = Vec::new();
    let mut df: Vec<u32> = Vec::new();
    // Each wording's stems, one after the other (`bounds[w]..bounds[w + 1]`).
    let mut sets: Vec<u32> = Vec::new();
    let mut bounds: Vec<u32> = Vec::with_capacity(wordings.len() + 1);
    bounds.push(0);
    let mut set: Vec<u32> = Vec::new();
    let mut verb: Vec<u8> = Vec::with_capacity(wordings.len());
    let mut lower = String::new();
    for &(text, ..) in &wordings {
        set.clear();
        let mut action = 0u8;
        // As `words` does it: the text lowercased, split at what is not alphanumeric.
        lower.clear();
        if text.is_ascii() {
            lower.push_str(text);
            lower.make_ascii_lowercase();
        } else {
            lower.push_str(&text.to_lowercase());
        }
        for w in lower.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
            let id = match words.get(w) {
                Some(&id) => id,
                None => {
                    let id = if STOP_WORDS.binary_search(&w).is_ok() {
                        STOP
                    } else {
                        match ids.entry(stem(w)) {
                            Entry::Occupied(e) => *e.get(),
                            Entry::Vacant(e) => {
                                df.push(0);
                                actions.push(action_of(e.key()).map_or(0, |i| i as u8 + 1));
                                *e.insert(df.len() as u32 - 1)
                            }
                        }
                    };
                    words.insert(w.into(), id);
                    id
                }
            };
            if id == STOP {
                continue;
            }
            if verbs && action == 0 {
                action = actions[id as usize];
            }
            set.push(id);
        }
        set.sort_unstable();
        set.dedup();
        for &id in &set {
            df[id as usize] += 1;
        }
        sets.extend(&set);
        bounds.push(sets.len() as u32);
        verb.push(action);
    }
    drop((ids, words));
    // The global order: rarest stem first.
    let mut order: Vec<u32> = (0..df.len() as u32).collect();
    order.sort_unstable_by_key(|&id| (df[id as usize], id));
    let mut rank = vec![0u32; df.len()];
    for (r, &id) in order.iter().enumerate() {
        rank[id as usize] = r as u32;
    }
    for w in 0..wordings.len() {
        let set = &mut sets[bounds[w] as usize..bounds[w + 1] as usize];
        for s in set.iter_mut() {
            *s = rank[*s as usize];
        }
        set.sort_unstable();
    }

    // The groups, by their first wording's stems: for the Jaccard similarity, under the
    // prefix's stems or triples (see SMALL); for the containment beyond it (a set of three
    // stems or more within a set more than 5/3 its size), under every stem of sets of six
    // stems or more, and under the rarest stem of sets of three or more.
    let (num, den) = THRESHOLD;
    let mut small: Vec<Vec<u32>> = vec![Vec::new(); df.len()];
    let mut large: Vec<Vec<u32>> = vec![Vec::new(); df.len()];
    let mut by_triple = Chains::default();
    let mut by_stem: Vec<Vec<(u32, u32)>> = vec![Vec::new(); df.len()];
    let mut by_rarest: Vec<Vec<(u32, u32)>> = vec![Vec::new(); df.len()];
    let mut empty: Option<usize> = None;
    // Each group's first wording: its stems (side by side, for the checks' sake) and action word.
    let (mut seed_stems, mut seed_at, mut seeds): (Vec<u32>, Vec<usize>, Vec<Seed>) = (Vec::new(), vec![0], Vec::new());
    // Each group's texts and first index; each wording's group. Only the groups kept are built.
    let mut groups: Vec<(usize, usize)> = Vec::new();
    let mut group_of: Vec<u32> = Vec::with_capacity(wordings.len());
    let mut seen: Vec<u32> = vec![0; wordings.len()];
    for (w, &(_, first, count)) in wordings.iter().enumerate() {
        let x = &sets[bounds[w] as usize..bounds[w + 1] as usize];
        let n = x.len();
        let found = if x.is_empty() {
            empty
        } else {
            // The first group (in order of creation) that takes the wording, over every list
            // of candidates. Each list is in order of creation (a group is added when made), so
            // a list is read only up to the best found so far, and nothing is gathered or
            // sorted (which was most of the grouping with 2 M free-text intents). A candidate
            // is checked once (marked with this wording), its dense seed first.
            let mark = w as u32 + 1;
            let mut best = u32::MAX;
            let mut stop_at = |g: u32| -> bool {
                if g >= best {
                    return true;
                }
                if std::mem::replace(&mut seen[g as usize], mark) != mark {
                    let (seed, at) = (&seeds[g as usize], g as usize);
                    if !seed.rules_out(x, verb[w])
                        && same_sets(&seed_stems[seed_at[at]..seed_at[at + 1]], seed.verb, x, verb[w])
                    {
                        best = g;
                        return true;
                    }
                }
                false
            };
            let mut read = |list: &[u32]| {
                for &g in list {
                    if stop_at(g) {
                        break;
                    }
                }
            };
            if n <= SMALL {
                for &s in &x[..prefix(n, 1)] {
                    read(&small[s as usize]);
                }
            }
            if (TRIPLES.0..=TRIPLES.1).contains(&n) {
                triples(&x[..prefix(n, 3)], |key| read(by_triple.list(key)));
            }
            if n >= LARGE {
                for &s in &x[..prefix(n, 1)] {
                    read(&large[s as usize]);
                }
            }
            let mut read_within = |list: &[(u32, u32)], within: &dyn Fn(usize) -> bool| {
                for &(size, g) in list {
                    if within(size as usize) && stop_at(g) {
                        break;
                    }
                }
            };
            if n >= 3 {
                read_within(&by_stem[x[0] as usize], &|size| size * num > n * den);
            }
            if n * num > 3 * den {
                for &s in x {
                    read_within(&by_rarest[s as usize], &|size| size * den < n * num);
                }
            }
            (best != u32::MAX).then_some(best as usize)
        };
        match found {
            Some(g) => {
                groups[g].0 += count;
                groups[g].1 = groups[g].1.min(first);
                group_of.push(g as u32);
            }
            None => {
                let g = groups.len() as u32;
                if x.is_empty() {
                    empty = Some(groups.len());
                }
                if (1..=SMALL).contains(&n) {
                    for &s in &x[..prefix(n, 1)] {
                        small[s as usize].push(g);
                    }
                }
                if (TRIPLES.0..=TRIPLES.1).contains(&n) {
                    triples(&x[..prefix(n, 3)], |key| by_triple.add(key, g));
                }
                if n >= LARGE {
                    for &s in &x[..prefix(n, 1)] {
                        large[s as usize].push(g);
                    }
                }
                if n * num > 3 * den {
                    for &s in x {
                        by_stem[s as usize].push((n as u32, g));
                    }
                }
                if n >= 3 {
                    by_rarest[x[0] as usize].push((n as u32, g));
                }
                seed_stems.extend(x);
                seed_at.push(seed_stems.len());
                seeds.push(Seed::of(x, verb[w]));
                group_of.push(g);
                groups.push((count, first));
            }
        }
    }
    // Most texts first, then by first index (each group's own); the first `keep` built.
    let mut order: Vec<u32> = (0..groups.len() as u32).collect();
    order.sort_unstable_by_key(|&g| (Reverse(groups[g as usize].0), groups[g as usize].1));
    order.truncate(keep);
    let mut slot: Vec<u32> = vec![u32::MAX; groups.len()];
    for (k, &g) in order.iter().enumerate() {
        slot[g as usize] = k as u32;
    }
    let mut kept: Vec<(Group, usize)> =
        order.iter().map(|&g| (Group { wordings: Vec::new(), members: Vec::new() }, groups[g as usize].0)).collect();
    for (w, (text, first, count)) in wordings.into_iter().enumerate() {
        let k = slot[group_of[w] as usize];
        if k != u32::MAX {
            let g = &mut kept[k as usize].0;
            g.wordings.push((text.to_owned(), count));
            g.members.push(first);
        }
    }
    for (w, i) in more {
        let k = slot[group_of[w as usize] as usize];
        if k != u32::MAX {
            kept[k as usize].0.members.push(i);
        }
    }
    for (g, _) in &mut kept {
        g.members.sort_unstable();
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The grouping as it was: each wording compared with every group's first wording.
    fn reference<'a>(texts: impl IntoIterator<Item = &'a str>, verbs: bool) -> Vec<Group> {
        let mut wordings: Vec<(String, String, Vec<usize>)> = Vec::new();
        for (i, text) in texts.into_iter().enumerate() {
            let key = wording_key(text);
            match wordings.iter_mut().find(|w| w.0 == key) {
                Some(w) => w.2.push(i),
                None => wordings.push((key, text.trim().to_owned(), vec![i])),
            }
        }
        wordings.sort_by_key(|w| Reverse(w.2.len()));
        let mut groups: Vec<(BTreeSet<String>, Option<&str>, Group)> = Vec::new();
        for (_, text, members) in wordings {
            let set = stems(&text);
            let action = if verbs { action_word(&text) } else { None };
            let count = members.len();
            match groups.iter_mut().find(|(seed, a, _)| !verbs_differ(*a, action) && similar(seed, &set)) {
                Some((_, _, g)) => {
                    g.wordings.push((text, count));
                    g.members.extend(members);
                }
                None => groups.push((set, action, Group { wordings: vec![(text, count)], members })),
            }
        }
        let mut groups: Vec<Group> = groups.into_iter().map(|(_, _, g)| g).collect();
        for g in &mut groups {
            g.members.sort_unstable();
        }
        groups.sort_by(|a, b| b.count().cmp(&a.count()).then_with(|| a.members[0].cmp(&b.members[0])));
        groups
    }

    /// Random texts over a small vocabulary, so that many are similar, some contained in
    /// others, some repeated in other case or punctuation, some of stop words only.
    fn random_texts(seed: u64, n: usize, vocabulary: &[&str]) -> Vec<String> {
        let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut next = move |below: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % below as u64) as usize
        };
        let mut texts: Vec<String> = Vec::new();
        for _ in 0..n {
            if !texts.is_empty() && next(4) == 0 {
                let again = texts[next(texts.len())].to_uppercase();
                texts.push(if next(2) == 0 { again + "." } else { again });
                continue;
            }
            let len = next(9);
            let words: Vec<&str> = (0..len).map(|_| vocabulary[next(vocabulary.len())]).collect();
            texts.push(words.join(if next(3) == 0 { ", " } else { " " }));
        }
        texts
    }

    const VOCABULARY: &[&str] = &[
        "export", "exported", "email", "emails", "send", "orders", "order", "history", "csv", "excel", "pdf", "file",
        "my", "the", "to", "as", "please", "track", "parcel", "parcels", "refund", "invoice", "invoices", "monthly",
        "report", "create", "created", "copy", "copies", "label", "shipping", "customer", "account", "address",
        "status", "list",
    ];

    #[test]
    fn the_wording_key_of_ascii_is_the_general_one() {
        let mut texts = random_texts(7, 500, VOCABULARY);
        texts.extend(["  Export\tmy ORDERS\x0b as csv. ?! ", "", " . ", "a,", "x\r\n y;", "??"].map(String::from));
        for t in &texts {
            assert_eq!(wording_key(t), any_wording_key(t), "{t:?}");
        }
    }

    #[test]
    fn counted_texts_group_as_the_texts_repeated() {
        for seed in 0..20 {
            let vocabulary = &VOCABULARY[..12 + (seed as usize % 25)];
            let texts = random_texts(seed, 200 + 20 * seed as usize, vocabulary);
            // Each distinct text once with its count, in order of first arrival (as the fold has them).
            let mut counted: Vec<(&str, usize)> = Vec::new();
            for t in &texts {
                match counted.iter_mut().find(|(c, _)| c == t) {
                    Some(c) => c.1 += 1,
                    None => counted.push((t, 1)),
                }
            }
            let repeated: Vec<&str> = counted.iter().flat_map(|&(t, n)| std::iter::repeat_n(t, n)).collect();
            let ends: Vec<usize> = counted
                .iter()
                .scan(0, |end, &(_, n)| {
                    *end += n;
                    Some(*end)
                })
                .collect();
            let whole = group_by(repeated.iter().copied(), true);
            let by_count = group_counted(counted.iter().copied(), true, usize::MAX);
            assert_eq!(whole.len(), by_count.len(), "seed {seed}");
            let first = group_counted(counted.iter().copied(), true, 3);
            assert_eq!(first, by_count[..3.min(by_count.len())], "seed {seed}");
            for (g, (c, count)) in whole.iter().zip(&by_count) {
                assert_eq!((&g.wordings, g.count()), (&c.wordings, *count), "seed {seed}");
                let mut texts: Vec<usize> = g.members.iter().map(|&m| ends.partition_point(|&e| e <= m)).collect();
                texts.dedup();
                assert_eq!(texts, c.members, "seed {seed}");
            }
        }
    }

    #[test]
    fn the_join_gives_the_groups_of_comparing_with_every_group() {
        for seed in 0..40 {
            // Small vocabularies make big groups and many candidates; larger ones, many groups.
            let vocabulary = &VOCABULARY[..12 + (seed as usize % 25)];
            let texts = random_texts(seed, 300 + 40 * seed as usize, vocabulary);
            for verbs in [false, true] {
                assert_eq!(
                    group_by(texts.iter().map(String::as_str), verbs),
                    reference(texts.iter().map(String::as_str), verbs),
                    "seed {seed}, verbs {verbs}"
                );
            }
        }
    }

    /// Variants of random texts of 1 to 32 words: some words dropped, replaced or added, so
    /// that many pairs are near the threshold, at every size.
    fn variants(seed: u64, bases: usize) -> Vec<String> {
        let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut next = move |below: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % below as u64) as usize
        };
        let word = |i: usize| {
            if i < 6 {
                ["export", "email", "send", "track", "print", "delete"][i].to_owned()
            } else {
                format!("w{i}")
            }
        };
        let mut texts = Vec::new();
        for _ in 0..bases {
            let len = 1 + next(32);
            let vocabulary = 8 + next(120);
            let base: Vec<usize> = (0..len).map(|_| next(vocabulary)).collect();
            for _ in 0..1 + next(6) {
                let mut words = base.clone();
                for _ in 0..next(1 + len / 2) {
                    match next(3) {
                        0 if words.len() > 1 => {
                            words.remove(next(words.len()));
                        }
                        1 => {
                            let at = next(words.len());
                            words[at] = next(vocabulary);
                        }
                        _ => words.push(next(vocabulary)),
                    }
                }
                texts.push(words.into_iter().map(word).collect::<Vec<_>>().join(" "));
            }
        }
        texts
    }

    #[test]
    fn texts_of_every_size_near_the_threshold_take_the_same_groups() {
        for seed in 0..30 {
            let texts = variants(seed, 150);
            for verbs in [false, true] {
                assert_eq!(
                    group_by(texts.iter().map(String::as_str), verbs),
                    reference(texts.iter().map(String::as_str), verbs),
                    "seed {seed}, verbs {verbs}"
                );
            }
        }
    }

    #[test]
    fn the_indexes_cover_every_similar_pair_of_sizes() {
        let (num, den) = THRESHOLD;
        // Two sets similar by Jaccard have sizes within den/num of each other; they are both
        // small, both within TRIPLES (then they share three stems at least), or both large.
        for a in 1..200usize {
            for b in a..200usize {
                if b * num > a * den {
                    continue;
                }
                let both = |lo: usize, hi: usize| (lo..=hi).contains(&a) && (lo..=hi).contains(&b);
                assert!(both(1, SMALL) || both(TRIPLES.0, TRIPLES.1) || both(LARGE, usize::MAX), "{a} {b}");
                if both(TRIPLES.0, TRIPLES.1) {
                    assert!(least_shared(a).max(least_shared(b)) >= 3, "{a} {b}");
                }
            }
        }
    }

    #[test]
    fn differing_action_words_do_not_merge() {
        let email = "email me my order history as Excel";
        let export = "export my order history to Excel";
        // By their stems alone they would (3 of 5 shared).
        assert!(similar(&stems(email), &stems(export)));
        assert_eq!((action_word(email), action_word(export)), (Some("email"), Some("export")));
        assert_eq!(action_word("send me an export of my orders"), Some("send"));
        assert!(!same_ask(email, export));
        assert_eq!(group([email, export]).len(), 2);
        // Containment does not override it either.
        assert!(!same_ask("print invoice label", "email invoice label"));
        assert_eq!(group(["print the monthly invoice label", "emailed monthly invoice label"]).len(), 2);
    }

    #[test]
    fn the_same_action_word_in_other_forms_merges_by_the_threshold() {
        // Same verb, other words: 3 of 5 stems shared, one ask.
        assert!(same_ask("export my order history to Excel", "exporting order history as an Excel sheet"));
        assert!(same_ask("Created a shipping label", "creating shipping labels"));
        assert!(same_ask("copying all invoices to Drive", "copy the invoices into drive"));
        // Same verb, too little else in common: still two asks.
        assert!(!same_ask("export my orders as CSV", "export orders as PDF"));
        let groups =
            group(["export my order history to Excel", "exports of order history in excel", "export orders as PDF"]);
        assert_eq!(groups.len(), 2);
        assert_eq!(groups[0].members, [0, 1]);
    }

    #[test]
    fn a_text_without_an_action_word_is_judged_by_its_stems() {
        assert_eq!(action_word("order history as Excel"), None);
        assert!(same_ask("order history as Excel", "email me my order history as Excel"));
        assert!(same_ask("order history as Excel", "export my order history to Excel"));
        assert!(!same_ask("order history", "export orders as PDF"));
        // The first wording decides: without an action word it takes both.
        let groups = group([
            "order history in Excel",
            "order history in Excel",
            "email order history Excel",
            "export order history Excel",
        ]);
        assert_eq!(groups.len(), 1);
        assert_eq!(groups[0].count(), 4);
    }

    #[test]
    fn the_word_lists_are_sorted() {
        assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
        assert!(ACTION_VERBS.windows(2).all(|w| w[0] < w[1]));
        assert!(ACTION_VERBS.iter().all(|v| STOP_WORDS.binary_search(v).is_err()));
        for verb in ACTION_VERBS {
            for form in [verb.to_string(), format!("{verb}s"), format!("{verb}ed"), format!("{verb}ing")] {
                assert_eq!(action_of(&stem(&form)).map(|i| ACTION_VERBS[i]), Some(*verb), "{form}");
            }
        }
    }

    /// `MCPEYE_ASKS_FILE=intents.txt cargo test --release -p mcpeye-report --lib
    /// asks::tests::grouping_time -- --ignored --nocapture`: the time to group the
    /// file's lines (the first `MCPEYE_ASKS_N`), and with `MCPEYE_ASKS_REFERENCE=1` the time of
    /// comparing with every group, and that both give the same groups.
    #[test]
    #[ignore]
    fn grouping_time() {
        let Ok(path) = std::env::var("MCPEYE_ASKS_FILE") else { return };
        let text = std::fs::read_to_string(path).unwrap();
        let n = std::env::var("MCPEYE_ASKS_N").ok().and_then(|n| n.parse().ok()).unwrap_or(usize::MAX);
        let lines: Vec<&str> = text.lines().take(n).collect();
        let distinct = lines.iter().map(|l| wording_key(l)).collect::<std::collections::HashSet<_>>().len();
        let start = std::time::Instant::now();
        let groups = group(lines.iter().copied());
        println!("{} texts, {distinct} distinct: {} groups in {:.2?}", lines.len(), groups.len(), start.elapsed());
        if std::env::var_os("MCPEYE_ASKS_REFERENCE").is_some() {
            let start = std::time::Instant::now();
            let old = reference(lines.iter().copied(), true);
            println!("compared with every group: {} groups in {:.2?}", old.len(), start.elapsed());
            assert_eq!(groups, old);
        }
    }

    #[test]
    fn word_forms_stop_words_and_order_do_not_split_an_ask() {
        let texts = [
            "export my orders as CSV",
            "Export orders to CSV.",
            "export my order history as a CSV file",
            "export orders as PDF",
            "CSV export of the orders, please",
            "Track a parcel",
            "track parcels",
        ];
        let groups = group(texts);
        let shown: Vec<Vec<&str>> =
            groups.iter().map(|g| g.wordings.iter().map(|(w, _)| w.as_str()).collect()).collect();
        assert_eq!(
            shown,
            [
                vec![
                    "export my orders as CSV",
                    "Export orders to CSV.",
                    "export my order history as a CSV file",
                    "CSV export of the orders, please"
                ],
                vec!["Track a parcel", "track parcels"],
                vec!["export orders as PDF"],
            ]
        );
        assert_eq!(groups[0].members, [0, 1, 2, 4]);
    }

    #[test]
    fn the_most_frequent_wording_leads_its_group() {
        let groups = group(["Export orders to CSV", "export my orders as csv", "EXPORT MY ORDERS AS CSV."]);
        assert_eq!(groups.len(), 1);
        assert_eq!(
            groups[0].wordings,
            [("export my orders as csv".to_owned(), 2), ("Export orders to CSV".to_owned(), 1)]
        );
    }

    #[test]
    fn stems_are_light() {
        for (word, stemmed) in [
            ("orders", "order"),
            ("histories", "history"),
            ("exporting", "export"),
            ("exported", "export"),
            ("boxes", "box"),
            ("address", "address"),
            ("status", "status"),
            ("csv", "csv"),
            ("is", "is"),
        ] {
            assert_eq!(stem(word), stemmed, "{word}");
        }
        assert!(stems("The user wanted to export it").iter().eq(["export"].iter()));
        // A text of stop words only is its own ask, equal only to another such text.
        assert!(similar(&stems("please"), &stems("it")));
        assert!(!similar(&stems("please"), &stems("export")));
    }
}
