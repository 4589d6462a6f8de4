//! Field names whose whole value is replaced by `[REDACTED_FIELD]` (docs/wire-format.md#redaction).

use super::credentials::TextKeys;
use crate::contract::DEFAULT_DENYLIST_FIELDS;
use std::sync::{LazyLock, OnceLock};

/// A compiled denylist: the defaults plus extras, lowercased once.
///
/// Keys compare like the reference's `key.toLowerCase()`: ASCII keys by an allocation-free
/// ASCII case-insensitive compare, other keys through Unicode lowercasing (so `TO\u{212A}EN`,
/// with a Kelvin sign, is `token`, as in JavaScript and Python).
#[derive(Debug, Clone)]
pub(crate) struct Denylist {
    lowered: Vec<String>,
    /// Per ASCII first letter (folded, `& 31`), a bit per length (63: 63 or longer) of the ASCII
    /// entries: most keys are told apart from every entry by this one lookup.
    quick: [u64; 32],
    /// The same per last letter: `status` passes `quick` (as `secret` does) but not this.
    quick_last: [u64; 32],
    /// The ASCII entries by the same slot: a key that passes `quick` (`status` and `secret`) is
    /// compared with the few entries of its slot, not with the whole list.
    slots: [Box<[Box<str>]>; 32],
    /// The rules beyond the contract that run with this list (none by default).
    pub(crate) rules: super::Rules,
    /// The entries beyond the defaults, lowercased.
    extra: Vec<String>,
    /// The credential layer's text forms of the keys, with `extra`: compiled at first use.
    text_keys: OnceLock<TextKeys>,
}

/// The slot and bit of an ASCII key or entry in [`Denylist::quick`].
#[inline]
fn quick_slot(key: &[u8]) -> (usize, u64) {
    (fold(key.first()), 1 << key.len().min(63))
}

/// The slot of a byte (first or last): its ASCII letter case folded, `& 31`. Keys equal but for
/// ASCII case have their bytes in the same slots.
#[inline(always)]
fn fold(b: Option<&u8>) -> usize {
    b.map_or(0, |b| usize::from((b | 0x20) & 31))
}

static DEFAULT: LazyLock<Denylist> = LazyLock::new(|| Denylist::new(&[] as &[&str]));

impl Denylist {
    pub(crate) fn new<S: AsRef<str>>(extra: &[S]) -> Self {
        let mut lowered: Vec<String> = DEFAULT_DENYLIST_FIELDS
            .iter()
            .copied()
            .chain(extra.iter().map(AsRef::as_ref))
            .map(str::to_lowercase)
            .collect();
        lowered.sort();
        lowered.dedup();
        let (mut quick, mut quick_last) = ([0; 32], [0; 32]);
        let mut slots: [Vec<Box<str>>; 32] = Default::default();
        for e in lowered.iter().filter(|e| e.is_ascii()) {
            let (slot, bit) = quick_slot(e.as_bytes());
            quick[slot] |= bit;
            quick_last[fold(e.as_bytes().last())] |= bit;
            slots[slot].push(e.as_str().into());
        }
        let defaults: Vec<String> = DEFAULT_DENYLIST_FIELDS.iter().map(|d| d.to_lowercase()).collect();
        let extra: Vec<String> = lowered.iter().filter(|e| !defaults.contains(e)).cloned().collect();
        let rules = super::Rules::default();
        let slots = slots.map(Vec::into_boxed_slice);
        Denylist { lowered, quick, quick_last, slots, rules, extra, text_keys: OnceLock::new() }
    }

    /// The credential layer's text forms of this list's keys.
    pub(crate) fn text_keys(&self) -> &TextKeys {
        if self.extra.is_empty() {
            return TextKeys::default_keys();
        }
        self.text_keys.get_or_init(|| TextKeys::new(&self.extra.iter().map(String::as_str).collect::<Vec<_>>()))
    }

    /// The default list, compiled once per process.
    pub(crate) fn default_list() -> &'static Denylist {
        &DEFAULT
    }

    pub(crate) fn contains(&self, key: &str) -> bool {
        if key.is_ascii() {
            self.contains_ascii(key)
        } else {
            let key = key.to_lowercase();
            self.lowered.contains(&key)
        }
    }

    /// [`contains`](Self::contains) of a key known to be ASCII.
    // Called per key of every value: left to `#[inline]`, the compiler's choice flips with
    // unrelated changes elsewhere in the crate, and a call here is paid on every key.
    #[inline(always)]
    pub(crate) fn contains_ascii(&self, key: &str) -> bool {
        let (slot, bit) = quick_slot(key.as_bytes());
        // An ASCII key lowercases to ASCII, so a non-ASCII entry can never equal it.
        self.quick[slot] & bit != 0
            && self.quick_last[fold(key.as_bytes().last())] & bit != 0
            && self.slots[slot].iter().any(|e| e.len() == key.len() && e.eq_ignore_ascii_case(key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The slots hold the answer the whole list gives, for keys of every first letter and length
    /// near the entries'.
    #[test]
    fn slots_answer_as_the_whole_list() {
        let d = Denylist::new(&["SSN", "Clé", "x", "session_token", "S3cret"]);
        let whole = |k: &str| d.lowered.iter().any(|e| e.eq_ignore_ascii_case(k));
        let mut keys: Vec<String> = d.lowered.iter().flat_map(|e| [e.clone(), e.to_uppercase()]).collect();
        for first in (b'0'..=b'z').map(char::from) {
            for len in 0..16 {
                keys.push(std::iter::once(first).chain(std::iter::repeat_n('t', len)).collect());
            }
        }
        // Every entry with its last byte replaced (the second filter is by the last letter).
        for e in d.lowered.iter().filter(|e| e.is_ascii() && !e.is_empty()) {
            for last in (b' '..=b'~').map(char::from) {
                keys.push(format!("{}{last}", &e[..e.len() - 1]));
            }
        }
        keys.extend(
            ["status", "secreT", "secrets", "passwore", "apikey", "api_kez", "s", "", "\u{7f}"].map(String::from),
        );
        for k in keys.iter().filter(|k| k.is_ascii()) {
            assert_eq!(d.contains_ascii(k), whole(k), "{k:?}");
        }
    }

    #[test]
    fn defaults_and_extras_compare_case_insensitively() {
        let d = Denylist::new(&["SSN", "Clé"]);
        for k in ["password", "PassWD", "APIKEY", "api_key", "Authorization", "ssn", "CLÉ", "clé"] {
            assert!(d.contains(k), "{k}");
        }
        for k in ["password_hash", "api-key", "tokens", "", "cle", "passwore", "status", "t", "\u{1}"] {
            assert!(!d.contains(k), "{k}");
            assert!(!d.contains_ascii(k), "{k}");
        }
        for k in ["password", "PassWD", "APIKEY", "api_key", "Authorization", "ssn"] {
            assert!(d.contains_ascii(k), "{k}");
        }
        assert!(Denylist::default_list().contains("TO\u{212A}EN"));
        assert!(!Denylist::default_list().contains("ssn"));
    }
}
