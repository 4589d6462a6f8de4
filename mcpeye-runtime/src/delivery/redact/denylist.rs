//! Field names whose whole value is replaced by `[REDACTED_FIELD]` (docs/wire-format.md#redaction).

use crate::contract::DEFAULT_DENYLIST_FIELDS;
use std::sync::LazyLock;

/// A compiled denylist: the defaults plus extras, lowercased once.
///
/// Keys compare like the reference's `key.toLowerCase()`: ASCII keys by an allocation-free
/// ASCII case-insensitive compare, other keys through Unicode lowercasing (so `TO\u{212A}EN`,
/// with a Kelvin sign, is `token`, as in JavaScript and Python).
#[derive(Debug, Clone)]
pub(crate) struct Denylist {
    lowered: Vec<String>,
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
        Denylist { lowered }
    }

    /// The default list, compiled once per process.
    pub(crate) fn default_list() -> &'static Denylist {
        &DEFAULT
    }

    pub(crate) fn contains(&self, key: &str) -> bool {
        if key.is_ascii() {
            // An ASCII key lowercases to ASCII, so a non-ASCII entry can never equal it.
            self.lowered.iter().any(|e| e.len() == key.len() && e.eq_ignore_ascii_case(key))
        } else {
            let key = key.to_lowercase();
            self.lowered.contains(&key)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_extras_compare_case_insensitively() {
        let d = Denylist::new(&["SSN", "Clé"]);
        for k in ["password", "PassWD", "APIKEY", "api_key", "Authorization", "ssn", "CLÉ", "clé"] {
            assert!(d.contains(k), "{k}");
        }
        for k in ["password_hash", "api-key", "tokens", "", "cle"] {
            assert!(!d.contains(k), "{k}");
        }
        assert!(Denylist::default_list().contains("TO\u{212A}EN"));
        assert!(!Denylist::default_list().contains("ssn"));
    }
}
