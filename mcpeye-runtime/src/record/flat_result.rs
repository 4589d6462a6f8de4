//! A tool's result written into the flat form without building its JSON first: the record of
//! a result of text items (and structured content) is its JSON, and most results are text.
//! The result is shown to the one flat writer, the serializer of [`flat_ser`], as the JSON
//! [`CallToolResult::to_json`] would build.

use crate::json::flat_ser::{self, flatten_serialize};
use crate::model::result::{CallToolResult, Content};
use serde::ser::{Error as _, SerializeMap, SerializeSeq, Serializer};
use serde::Serialize;
#[cfg(feature = "rmcp")]
use std::cell::Cell;

/// Appends the node of [`CallToolResult::to_json`]`(r)` to `out`, without building that JSON,
/// for a result of text items only (its record is then its JSON). Returns false, with `out` as
/// it was, like [`flatten`](crate::json::flat_ser::flatten), and for any other content.
pub(crate) fn flatten_result(r: &CallToolResult, out: &mut Vec<u8>, budget: usize) -> bool {
    flatten_serialize(&TextResult(r), out, budget, None)
}

/// Appends the node of `{"content": [{"type": "text", "text": t}, …]}`, one item per text of
/// `texts`, followed by `"isError": e` when `is_error` is `Some(e)`: the record of a result of
/// plain text items only. Returns false, with `out` as it was, like [`flatten`](crate::json::flat_ser::flatten).
#[cfg(feature = "rmcp")]
pub(crate) fn flatten_texts<'t>(
    texts: impl ExactSizeIterator<Item = &'t str>,
    is_error: Option<bool>,
    out: &mut Vec<u8>,
    budget: usize,
) -> bool {
    flatten_serialize(&TextsOnce { texts: Cell::new(Some(texts)), is_error }, out, budget, None)
}

/// A result of text items as its JSON: `content`, then `structuredContent` and `isError: true`
/// when it has them. Other items are recorded otherwise than sent (binary data replaced by
/// markers): the serializer gives up on them, and the caller records them through
/// `CallToolResult::into_record_json`.
struct TextResult<'r>(&'r CallToolResult);

impl Serialize for TextResult<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let r = self.0;
        let entries = 1 + usize::from(r.structured_content.is_some()) + usize::from(r.is_error);
        let mut m = s.serialize_map(Some(entries))?;
        m.serialize_entry("content", &TextItems(&r.content))?;
        if let Some(structured) = &r.structured_content {
            m.serialize_entry("structuredContent", structured)?;
        }
        if r.is_error {
            m.serialize_entry("isError", &true)?;
        }
        m.end()
    }
}

struct TextItems<'c>(&'c [Content]);

impl Serialize for TextItems<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.0.len()))?;
        for c in self.0 {
            match c {
                Content::Text(t) => seq.serialize_element(&TextItem(t))?,
                _ => return Err(S::Error::custom(flat_ser::GiveUp)),
            }
        }
        seq.end()
    }
}

/// `{"type": "text", "text": t}`.
struct TextItem<'t>(&'t str);

impl Serialize for TextItem<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(2))?;
        m.serialize_entry("type", "text")?;
        m.serialize_entry("text", self.0)?;
        m.end()
    }
}

/// rmcp's result of text items, read once from its iterator.
#[cfg(feature = "rmcp")]
struct TextsOnce<I> {
    texts: Cell<Option<I>>,
    is_error: Option<bool>,
}

#[cfg(feature = "rmcp")]
impl<'t, I: ExactSizeIterator<Item = &'t str>> Serialize for TextsOnce<I> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let Some(texts) = self.texts.take() else { return Err(S::Error::custom(flat_ser::GiveUp)) };
        let mut m = s.serialize_map(Some(1 + usize::from(self.is_error.is_some())))?;
        m.serialize_entry("content", &TextIter(Cell::new(Some(texts))))?;
        if let Some(e) = self.is_error {
            m.serialize_entry("isError", &e)?;
        }
        m.end()
    }
}

#[cfg(feature = "rmcp")]
struct TextIter<I>(Cell<Option<I>>);

#[cfg(feature = "rmcp")]
impl<'t, I: ExactSizeIterator<Item = &'t str>> Serialize for TextIter<I> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let Some(texts) = self.0.take() else { return Err(S::Error::custom(flat_ser::GiveUp)) };
        let mut seq = s.serialize_seq(Some(texts.len()))?;
        for t in texts {
            seq.serialize_element(&TextItem(t))?;
        }
        seq.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::flat_ser::flatten;
    use serde_json::{json, Value};

    fn nested(depth: usize, leaf: Value) -> Value {
        (0..depth).fold(leaf, |v, _| Value::Array(vec![v]))
    }

    /// A tool result flattened directly is the node of its JSON.
    #[test]
    fn tool_results_flatten_as_their_json() {
        let mut structured = serde_json::Map::new();
        structured.insert("n".into(), json!([1, {"deep": [[]]}]));
        let results = [
            CallToolResult::text("3 invoices found"),
            CallToolResult::error_text("boom \"quoted\""),
            CallToolResult::default(),
            CallToolResult { structured_content: Some(structured), ..CallToolResult::text("a") },
            CallToolResult::json(json!({"deep": nested(70, json!(1))})),
        ];
        for r in results {
            let (mut direct, mut via_json) = (Vec::new(), Vec::new());
            let fits = flatten(&r.to_json(), &mut via_json, usize::MAX);
            assert_eq!(flatten_result(&r, &mut direct, usize::MAX), fits, "{r:?}");
            assert_eq!(direct, via_json, "{r:?}");
        }
        let mut out = Vec::new();
        assert!(!flatten_result(&CallToolResult::text("y".repeat(100)), &mut out, 64));
        assert!(out.is_empty());
    }
}
