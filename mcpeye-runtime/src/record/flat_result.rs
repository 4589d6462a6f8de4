//! A tool's result written into the flat form without building its JSON first: the record of
//! a result of text items (and structured content) is its JSON, and most results are text.

#[cfg(feature = "rmcp")]
use crate::json::flat::FALSE;
use crate::json::flat::{patch_size, put, put_header, put_str, put_tagged_str, ARRAY, OBJECT, TRUE};
use crate::model::result::{CallToolResult, Content};

/// Appends the node of [`CallToolResult::to_json`]`(r)` to `out`, without building that JSON,
/// for a result of text items only (its record is then its JSON). Returns false, with `out` as
/// it was, like [`flatten`](crate::json::flat::flatten), and for any other content.
pub(crate) fn flatten_result(r: &CallToolResult, out: &mut Vec<u8>, budget: usize) -> bool {
    let start = out.len();
    let fits = put_result(r, out, start.saturating_add(budget).min(u32::MAX as usize));
    if !fits {
        out.truncate(start);
    }
    fits
}

/// Appends the node of `{"content": [{"type": "text", "text": t}, …]}`, one item per text of
/// `texts`, followed by `"isError": e` when `is_error` is `Some(e)`: the record of a result of
/// plain text items only. Returns false, with `out` as it was, like [`flatten`](crate::json::flat::flatten).
#[cfg(feature = "rmcp")]
pub(crate) fn flatten_texts<'t>(
    texts: impl ExactSizeIterator<Item = &'t str>,
    is_error: Option<bool>,
    out: &mut Vec<u8>,
    budget: usize,
) -> bool {
    let start = out.len();
    let fits = put_texts(texts, is_error, out, start.saturating_add(budget).min(u32::MAX as usize));
    if !fits {
        out.truncate(start);
    }
    fits
}

#[cfg(feature = "rmcp")]
fn put_texts<'t>(
    texts: impl ExactSizeIterator<Item = &'t str>,
    is_error: Option<bool>,
    out: &mut Vec<u8>,
    limit: usize,
) -> bool {
    let size_at = put_header(out, OBJECT, 1 + usize::from(is_error.is_some()));
    if !put_str(out, "content", limit) {
        return false;
    }
    let items_at = put_header(out, ARRAY, texts.len());
    for t in texts {
        if !put_text_item(out, t, limit) {
            return false;
        }
    }
    patch_size(out, items_at);
    if let Some(e) = is_error {
        if !put_str(out, "isError", limit) {
            return false;
        }
        out.push(if e { TRUE } else { FALSE });
    }
    patch_size(out, size_at);
    out.len() <= limit
}

/// Appends the node of a text item, `{"type": "text", "text": t}`; false when it passes `limit`.
fn put_text_item(out: &mut Vec<u8>, t: &str, limit: usize) -> bool {
    let at = put_header(out, OBJECT, 2);
    let fits = put_str(out, "type", limit)
        && put_tagged_str(out, "text", limit)
        && put_str(out, "text", limit)
        && put_tagged_str(out, t, limit);
    patch_size(out, at);
    fits
}

fn put_result(r: &CallToolResult, out: &mut Vec<u8>, limit: usize) -> bool {
    let size_at = put_header(out, OBJECT, 1 + usize::from(r.structured_content.is_some()) + usize::from(r.is_error));
    if !put_str(out, "content", limit) {
        return false;
    }
    let items_at = put_header(out, ARRAY, r.content.len());
    for c in &r.content {
        let fits = match c {
            Content::Text(t) => put_text_item(out, t, limit),
            // Other items are recorded otherwise than sent (binary data replaced by markers): the
            // caller records those through `CallToolResult::into_record_json`.
            _ => false,
        };
        if !fits {
            return false;
        }
    }
    patch_size(out, items_at);
    if let Some(s) = &r.structured_content {
        if !put_str(out, "structuredContent", limit) {
            return false;
        }
        let at = put_header(out, OBJECT, s.len());
        for (k, item) in s {
            if !put_str(out, k, limit) || !put(item, out, 2, limit) {
                return false;
            }
        }
        patch_size(out, at);
    }
    if r.is_error {
        if !put_str(out, "isError", limit) {
            return false;
        }
        out.push(TRUE);
    }
    patch_size(out, size_at);
    out.len() <= limit
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::flat::flatten;
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
