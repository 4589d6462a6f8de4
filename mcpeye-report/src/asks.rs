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
//!
//! Wordings are taken most frequent first; each joins the first group whose first wording is
//! similar to it, so that groups do not chain through a vague wording.

use std::collections::BTreeSet;

/// Shared stems over all stems (numerator, denominator): at least 3/5 is the same ask.
pub const THRESHOLD: (usize, usize) = (3, 5);

/// Words that carry no ask.
pub const STOP_WORDS: &[&str] = &[
    "a", "able", "about", "all", "also", "an", "and", "any", "are", "as", "at", "be", "been", "but", "by", "can",
    "could", "did", "do", "does", "for", "from", "get", "had", "has", "have", "he", "her", "his", "how", "i", "if",
    "in", "into", "is", "it", "its", "just", "let", "like", "me", "my", "need", "needed", "needs", "of", "on", "or",
    "our", "please", "she", "should", "so", "some", "that", "the", "their", "them", "then", "there", "these", "they",
    "this", "those", "to", "us", "user", "via", "want", "wanted", "wants", "was", "we", "were", "what", "which", "who",
    "will", "with", "would", "you", "your",
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

/// The stems of a text's words, stop words left out.
pub fn stems(text: &str) -> BTreeSet<String> {
    text.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty() && !STOP_WORDS.contains(w))
        .map(stem)
        .collect()
}

/// Whether two stem sets are the same ask (see the module's doc).
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

/// Texts that differ only in case, spacing or final punctuation are the same wording.
pub fn wording_key(text: &str) -> String {
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
    pub fn count(&self) -> usize {
        self.members.len()
    }
}

/// Groups `texts` (see the module's doc); groups most numerous first, ties in order of arrival.
pub fn group<'a>(texts: impl IntoIterator<Item = &'a str>) -> Vec<Group> {
    // Exact wordings first: (key, first text, indices).
    let mut wordings: Vec<(String, String, Vec<usize>)> = Vec::new();
    for (i, text) in texts.into_iter().enumerate() {
        let key = wording_key(text);
        match wordings.iter_mut().find(|w| w.0 == key) {
            Some(w) => w.2.push(i),
            None => wordings.push((key, text.trim().to_owned(), vec![i])),
        }
    }
    // Stable: equal counts stay in order of arrival.
    wordings.sort_by_key(|w| std::cmp::Reverse(w.2.len()));
    let mut groups: Vec<(BTreeSet<String>, Group)> = Vec::new();
    for (_, text, members) in wordings {
        let set = stems(&text);
        let count = members.len();
        match groups.iter_mut().find(|(seed, _)| similar(seed, &set)) {
            Some((_, g)) => {
                g.wordings.push((text, count));
                g.members.extend(members);
            }
            None => groups.push((set, Group { wordings: vec![(text, count)], members })),
        }
    }
    let mut groups: Vec<Group> = groups.into_iter().map(|(_, g)| g).collect();
    for g in &mut groups {
        g.members.sort_unstable();
    }
    groups.sort_by(|a, b| b.count().cmp(&a.count()).then_with(|| a.members[0].cmp(&b.members[0])));
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

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
