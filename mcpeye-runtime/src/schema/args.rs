//! Explains why call arguments do not fit a normalised input schema, without their values.
//!
//! A small JSON Schema checker: `type`, `enum`, `const`, bounds, lengths, `required`,
//! `properties`, `additionalProperties`, `items`, `oneOf`/`anyOf`/`allOf`. It reports paths and
//! expectations taken from the schema, never a value of the arguments; a property name from
//! the arguments is shown only when it is a plain identifier (`[A-Za-z0-9_.-]{1,64}`).

use serde_json::{Map, Value};

use super::{is_valid_property_name, MAX_SCHEMA_DEPTH};
use crate::contract::INTENT_PARAM_NAME;

/// Lines reported at most; one more says that the list was cut.
const MAX_LINES: usize = 20;
/// Allowed values listed at most for an `enum` mismatch.
const MAX_LISTED: usize = 10;
/// The problem with `mcpeyeIntent` sent to a tool whose schema does not list it.
const INTENT_NOT_TAKEN: &str =
    "this tool does not take `mcpeyeIntent` (intent capture is off for it); call it without `mcpeyeIntent`";

/// Describes why `args` do not fit `schema` (a normalised input schema), one line per
/// problem, each naming a JSON path (`` `filter.tags[2]`: expected a string, got a number ``)
/// and never echoing a value of the arguments. Only called once deserialisation has failed.
///
/// ```
/// use serde_json::json;
/// let schema = json!({
///     "type": "object",
///     "properties": {"limit": {"type": "integer", "minimum": 0}},
///     "required": ["limit"]
/// });
/// let lines = mcpeye_runtime::__private::describe_argument_errors(&schema, &json!({"limit": "ten"}));
/// assert_eq!(lines, ["`limit`: expected an integer, got a string"]);
/// ```
pub fn describe_argument_errors(schema: &Value, args: &Value) -> Vec<String> {
    if !args.is_object() {
        return vec![format!("the arguments must be a JSON object, got {}", kind(args))];
    }
    let mut cx = Checker { lines: Vec::new(), cut: false, too_deep: false };
    let mut path = Vec::new();
    cx.check(schema, args, &mut path, 0, false);
    if cx.cut {
        cx.lines.push("(further problems not listed)".to_owned());
    }
    cx.lines
}

#[derive(Clone, Copy)]
enum Segment<'a> {
    Key(&'a str),
    Index(usize),
}

struct Checker {
    lines: Vec<String>,
    cut: bool,
    too_deep: bool,
}

fn render(path: &[Segment<'_>]) -> String {
    if path.is_empty() {
        return "arguments".to_owned();
    }
    let mut out = String::new();
    for segment in path {
        match segment {
            Segment::Key(k) if is_valid_property_name(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            Segment::Key(_) => out.push_str("[…]"),
            Segment::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

impl Checker {
    fn push(&mut self, path: &[Segment<'_>], what: impl std::fmt::Display) {
        if self.lines.len() >= MAX_LINES {
            self.cut = true;
            return;
        }
        self.lines.push(format!("`{}`: {what}", render(path)));
    }

    /// Like `push`, for the property `name` (taken from the schema, so always shown) of `path`.
    fn push_at(&mut self, path: &[Segment<'_>], name: &str, what: impl std::fmt::Display) {
        if self.lines.len() >= MAX_LINES {
            self.cut = true;
            return;
        }
        let at = if path.is_empty() { name.to_owned() } else { format!("{}.{name}", render(path)) };
        self.lines.push(format!("`{at}`: {what}"));
    }

    fn full(&self) -> bool {
        self.lines.len() >= MAX_LINES
    }

    /// `optional`: the value is a property that may be absent; serde takes `null` for an
    /// absent `Option`, and normalisation removed `null` from the schema.
    fn check<'a>(
        &mut self,
        schema: &Value,
        value: &'a Value,
        path: &mut Vec<Segment<'a>>,
        depth: usize,
        optional: bool,
    ) {
        if depth > MAX_SCHEMA_DEPTH {
            if !self.too_deep {
                self.too_deep = true;
                self.push(path, format!("nested more than {MAX_SCHEMA_DEPTH} levels deep; not checked further"));
            }
            return;
        }
        if self.full() {
            self.cut = true;
            return;
        }
        let Some(schema) = schema.as_object() else { return };
        if schema.contains_key("$ref") {
            return;
        }
        if value.is_null() && optional && schema.get("default").is_none_or(Value::is_null) {
            return;
        }
        if let Some(expected) = schema.get("type") {
            let types: Vec<&str> = match expected {
                Value::String(t) => vec![t.as_str()],
                Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
                _ => Vec::new(),
            };
            if !types.is_empty() && !types.iter().any(|t| has_type(t, value)) {
                let wanted: Vec<&str> = types.iter().map(|t| article(t)).collect();
                self.push(path, format!("expected {}, got {}", wanted.join(" or "), kind(value)));
                return;
            }
        }
        if let Some(Value::Array(allowed)) = schema.get("enum") {
            if !allowed.contains(value) {
                self.push(path, format!("must be one of {}", list(allowed.iter())));
                return;
            }
        }
        if let Some(expected) = schema.get("const") {
            if expected != value {
                self.push(path, format!("must be {}", shown(expected)));
                return;
            }
        }
        match value {
            Value::Number(n) => self.bounds(schema, n.as_f64().unwrap_or(0.0), path),
            Value::String(s) => {
                self.lengths(schema, ("character", "characters"), "minLength", "maxLength", || s.chars().count(), path)
            }
            Value::Array(items) => {
                self.lengths(schema, ("item", "items"), "minItems", "maxItems", || items.len(), path);
                if let Some(item_schema) = schema.get("items").filter(|s| s.is_object()) {
                    for (i, item) in items.iter().enumerate() {
                        path.push(Segment::Index(i));
                        self.check(item_schema, item, path, depth + 1, false);
                        path.pop();
                        if self.full() {
                            break;
                        }
                    }
                }
            }
            Value::Object(map) => self.object(schema, map, path, depth),
            _ => {}
        }
        if let Some(Value::Array(all)) = schema.get("allOf") {
            for sub in all {
                self.check(sub, value, path, depth + 1, false);
            }
        }
        for key in ["oneOf", "anyOf"] {
            if let Some(Value::Array(branches)) = schema.get(key) {
                self.branches(branches, value, path, depth + 1);
            }
        }
    }

    fn object<'a>(
        &mut self,
        schema: &Map<String, Value>,
        map: &'a Map<String, Value>,
        path: &mut Vec<Segment<'a>>,
        depth: usize,
    ) {
        let empty = Map::new();
        let properties = schema.get("properties").and_then(Value::as_object).unwrap_or(&empty);
        let required: Vec<&str> = match schema.get("required") {
            Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        for name in &required {
            if !map.contains_key(*name) && properties.contains_key(*name) {
                self.push_at(path, name, "missing required property");
            }
        }
        let additional = schema.get("additionalProperties");
        let open_patterns = schema.contains_key("patternProperties");
        for (key, value) in map {
            // The call takes `mcpeyeIntent` out before the arguments are read (a value that is not
            // a string is ignored), so it is never an argument problem, except where the tool
            // (with `intent = false`) lists none and the agent sent one anyway.
            if path.is_empty() && key == INTENT_PARAM_NAME {
                if !properties.contains_key(key) && matches!(additional, Some(Value::Bool(false))) && !open_patterns {
                    self.push_at(path, key, INTENT_NOT_TAKEN);
                }
                continue;
            }
            path.push(Segment::Key(key));
            if let Some(sub) = properties.get(key) {
                self.check(sub, value, path, depth + 1, !required.contains(&key.as_str()));
            } else {
                match additional {
                    Some(Value::Bool(false)) if !open_patterns => {
                        if is_valid_property_name(key) {
                            self.push(path, "unknown property (this tool does not take it)");
                        } else {
                            path.pop();
                            self.push(path, "has an unknown property (its name is not shown)");
                            path.push(Segment::Key(key));
                        }
                    }
                    Some(sub @ Value::Object(_)) => self.check(sub, value, path, depth + 1, false),
                    _ => {}
                }
            }
            path.pop();
            if self.full() {
                self.cut = true;
                break;
            }
        }
    }

    fn branches<'a>(&mut self, branches: &[Value], value: &'a Value, path: &mut Vec<Segment<'a>>, depth: usize) {
        let mut best: Option<((bool, usize), Vec<String>, bool)> = None;
        let mut tie = false;
        for branch in branches {
            let mut trial = Checker { lines: Vec::new(), cut: false, too_deep: self.too_deep };
            trial.check(branch, value, path, depth, false);
            if trial.lines.is_empty() {
                return;
            }
            // A branch whose tag does not match is farther than any branch whose tag does.
            let score = (tag_mismatch(branch, value), trial.lines.len() + usize::from(trial.cut));
            match &best {
                Some((s, ..)) if *s < score => {}
                Some((s, ..)) if *s == score => tie = true,
                _ => {
                    tie = false;
                    best = Some((score, trial.lines, trial.too_deep));
                }
            }
        }
        let consts: Vec<&Value> = branches.iter().filter_map(|b| b.get("const")).collect();
        let tags = common_tags(branches);
        if !consts.is_empty() && consts.len() == branches.len() {
            self.push(path, format!("must be one of {}", list(consts.into_iter())));
        } else if let (Some((key, tags)), Some(((true, _), ..))) = (tags, &best) {
            // No branch has the given tag: the tag is the problem, not the rest.
            self.push_at(path, key, format!("must be one of {}", list(tags.into_iter())));
        } else if let (Some((_, lines, too_deep)), false) = (best, tie) {
            self.too_deep |= too_deep;
            for line in lines {
                if self.full() {
                    self.cut = true;
                    break;
                }
                self.lines.push(line);
            }
        } else {
            self.push(path, "does not match any of the shapes this value can take");
        }
    }

    fn bounds(&mut self, schema: &Map<String, Value>, n: f64, path: &[Segment<'_>]) {
        let bound = |key: &str| schema.get(key).and_then(Value::as_f64).map(|b| (b, schema[key].to_string()));
        if let Some((_, shown)) = bound("minimum").filter(|(b, _)| n < *b) {
            self.push(path, format!("must be at least {shown}"));
        }
        if let Some((_, shown)) = bound("maximum").filter(|(b, _)| n > *b) {
            self.push(path, format!("must be at most {shown}"));
        }
        if let Some((_, shown)) = bound("exclusiveMinimum").filter(|(b, _)| n <= *b) {
            self.push(path, format!("must be greater than {shown}"));
        }
        if let Some((_, shown)) = bound("exclusiveMaximum").filter(|(b, _)| n >= *b) {
            self.push(path, format!("must be less than {shown}"));
        }
    }

    fn lengths(
        &mut self,
        schema: &Map<String, Value>,
        unit: (&str, &str),
        min_key: &str,
        max_key: &str,
        len: impl Fn() -> usize,
        path: &[Segment<'_>],
    ) {
        let min = schema.get(min_key).and_then(Value::as_u64);
        let max = schema.get(max_key).and_then(Value::as_u64);
        if min.is_none() && max.is_none() {
            return;
        }
        let len = len() as u64;
        let unit = |n: u64| if n == 1 { unit.0 } else { unit.1 };
        if let Some(min) = min.filter(|m| len < *m) {
            self.push(path, format!("must have at least {min} {}", unit(min)));
        }
        if let Some(max) = max.filter(|m| len > *m) {
            self.push(path, format!("must have at most {max} {}", unit(max)));
        }
    }
}

/// The tag property shared by all branches (internally tagged enum) and its values.
fn common_tags(branches: &[Value]) -> Option<(&str, Vec<&Value>)> {
    let first = branches.first()?;
    let props = first.get("properties")?.as_object()?;
    let (key, _) = props.iter().find(|(_, p)| p.get("const").is_some())?;
    let mut tags = Vec::new();
    for branch in branches {
        let tag = branch.get("properties")?.get(key)?.get("const")?;
        tags.push(tag);
    }
    Some((key.as_str(), tags))
}

/// Whether `value` gives a property of `branch` fixed by `const` (an enum tag) another value,
/// or lacks it.
fn tag_mismatch(branch: &Value, value: &Value) -> bool {
    let (Some(props), Some(map)) = (branch.get("properties").and_then(Value::as_object), value.as_object()) else {
        return false;
    };
    props.iter().filter_map(|(k, p)| Some((k, p.get("const")?))).any(|(k, tag)| map.get(k) != Some(tag))
}

fn has_type(t: &str, value: &Value) -> bool {
    match t {
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        "null" => value.is_null(),
        _ => true,
    }
}

fn article(t: &str) -> &str {
    match t {
        "integer" => "an integer",
        "number" => "a number",
        "string" => "a string",
        "boolean" => "a boolean",
        "array" => "an array",
        "object" => "an object",
        "null" => "null",
        other => other,
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_f64() => "a number with a fraction",
        Value::Number(_) => "an integer",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A value taken from the schema (never from the arguments), shortened.
fn shown(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(64) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

fn list<'v>(values: impl Iterator<Item = &'v Value>) -> String {
    let values: Vec<&Value> = values.collect();
    let mut out: Vec<String> = values.iter().take(MAX_LISTED).map(|v| shown(v)).collect();
    if values.len() > MAX_LISTED {
        out.push(format!("… ({} values in all)", values.len()));
    }
    out.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn counts_bounds_maps_and_untyped_shapes() {
        let schema = json!({
            "type": "object",
            "properties": {
                "ids": {"type": "array", "items": {"type": "integer"}, "minItems": 1, "maxItems": 2},
                "ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
                "scores": {"type": "object", "properties": {}, "additionalProperties": {"type": "number"}},
                "v": {"const": 3},
                "either": {"anyOf": [{"type": "string"}, {"type": "boolean"}]},
                "any": {}
            }
        });
        let lines = describe_argument_errors(
            &schema,
            &json!({"ids": [], "ratio": 1, "scores": {"alice": "x", "a b": true}, "v": 4, "either": 1, "any": [1]}),
        );
        assert_eq!(
            lines,
            [
                "`ids`: must have at least 1 item",
                "`ratio`: must be less than 1",
                "`scores.alice`: expected a number, got a string",
                "`scores[…]`: expected a number, got a boolean",
                "`v`: must be 3",
                "`either`: does not match any of the shapes this value can take",
            ]
        );
        assert_eq!(describe_argument_errors(&schema, &json!({"ids": [1, 2, 3]})), ["`ids`: must have at most 2 items"]);
    }

    #[test]
    fn long_enums_are_listed_in_part() {
        let values: Vec<Value> = (0..30).map(|i| json!(format!("v{i}"))).collect();
        let schema = json!({"type": "object", "properties": {"e": {"type": "string", "enum": values}}});
        let lines = describe_argument_errors(&schema, &json!({"e": "nope"}));
        assert_eq!(lines.len(), 1);
        assert!(lines[0].ends_with(r#""v9", … (30 values in all)"#), "{lines:?}");
    }

    #[test]
    fn an_intent_sent_to_a_tool_without_one_is_named() {
        let closed = json!({"type": "object", "properties": {"q": {"type": "string"}}, "additionalProperties": false});
        assert_eq!(
            describe_argument_errors(&closed, &json!({"q": "mugs", "mcpeyeIntent": "find a gift"})),
            [format!("`mcpeyeIntent`: {INTENT_NOT_TAKEN}")]
        );
        // A tool that lists it, or takes any property, has no problem with it.
        let listed = json!({"type": "object", "properties": {"mcpeyeIntent": {"type": "string"}}, "additionalProperties": false});
        assert!(describe_argument_errors(&listed, &json!({"mcpeyeIntent": "find a gift"})).is_empty());
        let open = json!({"type": "object", "properties": {}});
        assert!(describe_argument_errors(&open, &json!({"mcpeyeIntent": "find a gift"})).is_empty());
    }
}
