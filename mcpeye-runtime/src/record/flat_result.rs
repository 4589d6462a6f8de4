//! A tool's result written into the flat form without building its JSON first: the record of
//! a result of text items (and structured content) is its JSON, and most results are text.

use crate::json::flat::{
    patch_counted, put_header_open, put_map, put_str, put_tagged_str, within, ARRAY, FALSE, OBJECT, TRUE,
};
use crate::model::result::{CallToolResult, Content};
use serde_json::{Map, Value};

/// Appends the node of [`CallToolResult::to_json`]`(r)` to `out`, without building that JSON,
/// for a result of text items only (its record is then its JSON). Returns false, with `out` as
/// it was, like [`flatten`](crate::json::flat::flatten), and for any other content.
pub(crate) fn flatten_result(r: &CallToolResult, out: &mut Vec<u8>, budget: usize) -> bool {
    // Other items are recorded otherwise than sent (binary data replaced by markers): the caller
    // records them through `CallToolResult::into_record_json`.
    if !r.content.iter().all(|c| matches!(c, Content::Text(_))) {
        return false;
    }
    let texts = r.content.iter().map(|c| match c {
        Content::Text(t) => t.as_str(),
        _ => "",
    });
    flatten_texts(texts, r.structured_content.as_ref(), r.is_error.then_some(true), out, budget)
}

/// Appends the node of `{"content": [{"type": "text", "text": t}, …]}`, one item per text of
/// `texts`, followed by `"structuredContent": structured` and `"isError": e` when given: the
/// record of a result of text items only. Returns false, with `out` as it was, like
/// [`flatten`](crate::json::flat::flatten).
pub(crate) fn flatten_texts<'t>(
    texts: impl ExactSizeIterator<Item = &'t str>,
    structured: Option<&Map<String, Value>>,
    is_error: Option<bool>,
    out: &mut Vec<u8>,
    budget: usize,
) -> bool {
    within(out, budget, |out, limit| {
        let at = put_header_open(out, OBJECT);
        if !put_str(out, "content", limit) {
            return false;
        }
        let count = texts.len();
        let items = put_header_open(out, ARRAY);
        for t in texts {
            let item = put_header_open(out, OBJECT);
            let written = put_str(out, "type", limit)
                && put_tagged_str(out, "text", limit)
                && put_str(out, "text", limit)
                && put_tagged_str(out, t, limit);
            if !written {
                return false;
            }
            patch_counted(out, item, 2);
        }
        patch_counted(out, items, count);
        if let Some(structured) = structured {
            if !put_str(out, "structuredContent", limit) || !put_map(structured, out, 1, limit) {
                return false;
            }
        }
        if let Some(e) = is_error {
            if !put_str(out, "isError", limit) {
                return false;
            }
            out.push(if e { TRUE } else { FALSE });
        }
        patch_counted(out, at, 1 + usize::from(structured.is_some()) + usize::from(is_error.is_some()));
        out.len() <= limit
    })
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
