//! Rewrites a generated schema into the shape every major MCP client accepts.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use super::{MAX_SCHEMA_DEPTH, STANDARD_FORMATS};

/// Keys whose value is one subschema.
const SINGLE: &[&str] = &["not", "if", "then", "else", "contains", "propertyNames", "additionalItems", "items"];
/// Keys whose value is an array of subschemas.
const LISTS: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems", "items"];
/// Keys whose value maps names to subschemas.
const MAPS: &[&str] = &["properties", "patternProperties", "dependentSchemas"];

/// Normalises a generated schema into the shape every major MCP client accepts:
///
/// - no `$schema`, no root `title` or `description` (the tool has its own description);
/// - the root is `{"type": "object", "properties": {…}}` (`properties` is added when absent,
///   also for a struct without fields), and so is every object schema;
/// - `Option<T>` is plain `T`: no `["T", "null"]` type array, no `anyOf: [T, {"type": "null"}]`,
///   no `nullable`, no `null` in `enum`, no `default: null`; the property is simply not required;
/// - only the standard JSON Schema formats are kept (`date-time`, `email`, `uri`, `uuid`,
///   `ipv4`, …), never `uint32`, `int64`, `double`…; `minimum: 0` of unsigned integers stays;
/// - boolean subschemas become objects (`true` → `{}`, `false` → `{"not": {}}`), except a
///   boolean `additionalProperties`;
/// - `$ref`s into `$defs` are inlined. A recursive type keeps its `$ref` (and the `$defs` it
///   needs), which [`super::validate`] then refuses.
///
/// The output depends only on the input (object keys are sorted).
///
/// ```
/// #[derive(schemars::JsonSchema)]
/// struct Page {
///     /// Zero-based page number.
///     page: Option<u32>,
/// }
///
/// let schema = mcpeye::schema::normalize(mcpeye::schema::generate::<Page>());
/// assert_eq!(schema, serde_json::json!({
///     "type": "object",
///     "properties": {"page": {"description": "Zero-based page number.", "type": "integer", "minimum": 0}}
/// }));
/// ```
pub fn normalize(schema: schemars::Schema) -> Value {
    let mut root = schema.to_value();
    if let Value::Bool(b) = root {
        root = bool_schema(b);
    }
    let mut defs = BTreeMap::new();
    if let Some(obj) = root.as_object_mut() {
        for key in ["$defs", "definitions"] {
            if let Some(Value::Object(map)) = obj.shift_remove(key) {
                for (name, def) in map {
                    defs.insert(format!("#/{key}/{}", encode(&name)), def);
                }
            }
        }
    }
    let mut cx = Cx { defs: &defs, stack: Vec::new(), kept: BTreeSet::new() };
    visit(&mut root, &mut cx, 0);

    // Recursive types keep their `$ref`; keep the definitions those refs point to.
    let mut kept_defs: BTreeMap<String, Value> = BTreeMap::new();
    while let Some(reference) = cx.kept.iter().find(|r| !kept_defs.contains_key(*r)).cloned() {
        let mut def = defs.get(&reference).cloned().unwrap_or_else(|| Value::Object(Map::new()));
        cx.stack.push(reference.clone());
        visit(&mut def, &mut cx, 1);
        cx.stack.pop();
        kept_defs.insert(reference, def);
    }

    fix_root(&mut root);
    if let Some(obj) = root.as_object_mut() {
        for (reference, def) in kept_defs {
            if let Some((key, name)) = reference.strip_prefix("#/").and_then(|r| r.split_once('/')) {
                let defs = obj.entry(key).or_insert_with(|| Value::Object(Map::new()));
                if let Some(defs) = defs.as_object_mut() {
                    defs.insert(decode(name), def);
                }
            }
        }
    }
    root
}

struct Cx<'a> {
    defs: &'a BTreeMap<String, Value>,
    /// References being inlined, outermost first: meeting one again means recursion.
    stack: Vec<String>,
    /// References left in place because they are recursive.
    kept: BTreeSet<String>,
}

fn fix_root(root: &mut Value) {
    let Some(obj) = root.as_object_mut() else { return };
    for key in ["$schema", "$id", "title", "description"] {
        obj.shift_remove(key);
    }
    // A unit struct (`struct NoArgs;`) is `{"type": "null"}`: a tool without arguments.
    if obj.get("type").and_then(Value::as_str) == Some("null") && !obj.contains_key("properties") {
        obj.clear();
    }
    let combinator = ["oneOf", "anyOf", "allOf", "$ref"].iter().any(|k| obj.contains_key(*k));
    if !obj.contains_key("type") && !combinator {
        obj.insert("type".to_owned(), Value::from("object"));
    }
    if obj.get("type").and_then(Value::as_str) == Some("object") && !obj.contains_key("properties") {
        obj.insert("properties".to_owned(), Value::Object(Map::new()));
    }
}

fn bool_schema(b: bool) -> Value {
    let mut obj = Map::new();
    if !b {
        obj.insert("not".to_owned(), Value::Object(Map::new()));
    }
    Value::Object(obj)
}

/// Normalises one subschema and everything below it. Returns whether it admitted `null`
/// before normalisation (its property then must not be required).
fn visit(value: &mut Value, cx: &mut Cx<'_>, depth: usize) -> bool {
    if depth > MAX_SCHEMA_DEPTH {
        return false;
    }
    if let Value::Bool(b) = *value {
        *value = bool_schema(b);
    }
    let Value::Object(obj) = value else { return false };

    for key in SINGLE {
        if let Some(sub) = obj.get_mut(*key) {
            if !sub.is_array() {
                visit(sub, cx, depth + 1);
            }
        }
    }
    if let Some(sub) = obj.get_mut("additionalProperties") {
        if !sub.is_boolean() {
            visit(sub, cx, depth + 1);
        }
    }
    for key in LISTS {
        if let Some(Value::Array(subs)) = obj.get_mut(*key) {
            for sub in subs {
                visit(sub, cx, depth + 1);
            }
        }
    }
    let mut optional = Vec::new();
    for key in MAPS {
        if let Some(Value::Object(subs)) = obj.get_mut(*key) {
            for (name, sub) in subs.iter_mut() {
                if visit(sub, cx, depth + 1) && *key == "properties" {
                    optional.push(name.clone());
                }
            }
        }
    }
    if !optional.is_empty() {
        if let Some(Value::Array(required)) = obj.get_mut("required") {
            required.retain(|name| !name.as_str().is_some_and(|n| optional.iter().any(|o| o == n)));
        }
    }

    inline_ref(obj, cx, depth);
    let nullable = strip_null(obj);
    if let Some(format) = obj.get("format") {
        if !format.as_str().is_some_and(|f| STANDARD_FORMATS.contains(&f)) {
            obj.shift_remove("format");
        }
    }
    if obj.get("type").and_then(Value::as_str) == Some("object") && !obj.contains_key("properties") {
        obj.insert("properties".to_owned(), Value::Object(Map::new()));
    }
    nullable
}

/// Replaces a `$ref` into the definitions by the (normalised) definition; sibling keywords win
/// over the definition's (a field's doc comment over its type's).
fn inline_ref(obj: &mut Map<String, Value>, cx: &mut Cx<'_>, depth: usize) {
    let Some(Value::String(reference)) = obj.get("$ref") else { return };
    let Some(def) = cx.defs.get(reference) else { return };
    if cx.stack.contains(reference) {
        cx.kept.insert(reference.clone());
        return;
    }
    let reference = reference.clone();
    let mut def = def.clone();
    cx.stack.push(reference);
    visit(&mut def, cx, depth + 1);
    cx.stack.pop();
    obj.shift_remove("$ref");
    if let Value::Object(def) = def {
        for (key, value) in def {
            obj.entry(key).or_insert(value);
        }
    }
}

/// Removes every way `null` is admitted; returns whether there was one.
fn strip_null(obj: &mut Map<String, Value>) -> bool {
    let mut nullable = false;
    if let Some(Value::Array(types)) = obj.get_mut("type") {
        let before = types.len();
        types.retain(|t| t != "null");
        nullable |= types.len() != before;
        if types.len() == 1 {
            let single = types.pop().unwrap_or(Value::Null);
            obj.insert("type".to_owned(), single);
        }
    }
    if let Some(Value::Array(values)) = obj.get_mut("enum") {
        let before = values.len();
        values.retain(|v| !v.is_null());
        nullable |= values.len() != before;
    }
    if let Some(flag) = obj.shift_remove("nullable") {
        nullable |= flag == Value::Bool(true);
    }
    if obj.get("default").is_some_and(Value::is_null) {
        obj.shift_remove("default");
    }
    for key in ["anyOf", "oneOf"] {
        let Some(Value::Array(branches)) = obj.get_mut(key) else { continue };
        let before = branches.len();
        branches.retain(|b| !is_null_schema(b));
        if branches.len() == before || branches.is_empty() {
            continue;
        }
        nullable = true;
        if branches.len() == 1 {
            let Some(Value::Object(single)) = branches.pop() else { continue };
            obj.shift_remove(key);
            for (k, v) in single {
                obj.entry(k).or_insert(v);
            }
        }
    }
    nullable
}

fn is_null_schema(schema: &Value) -> bool {
    let Some(obj) = schema.as_object() else { return false };
    let only_null = obj.get("type").is_some_and(|t| t == "null") || obj.get("const").is_some_and(Value::is_null);
    // A documented `None`-like variant still only admits null.
    only_null && obj.keys().all(|k| matches!(k.as_str(), "type" | "const" | "description" | "title"))
}

/// RFC 6901 + percent-encoding as schemars writes definition names into `$ref`s.
fn encode(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for b in name.bytes() {
        match b {
            b'~' => out.push_str("~0"),
            b'/' => out.push_str("~1"),
            b'!' | b'$' | b'&'..=b';' | b'=' | b'?'..=b'Z' | b'_' | b'a'..=b'z' => out.push(b as char),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

fn decode(segment: &str) -> String {
    let mut bytes = Vec::with_capacity(segment.len());
    let raw = segment.as_bytes();
    let mut i = 0;
    while i < raw.len() {
        let hex = raw.get(i + 1..i + 3).and_then(|h| std::str::from_utf8(h).ok());
        match (raw[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(byte)) => {
                bytes.push(byte);
                i += 3;
            }
            (b, _) => {
                bytes.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&bytes).replace("~1", "/").replace("~0", "~")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn norm(value: Value) -> Value {
        normalize(schemars::Schema::try_from(value).unwrap())
    }

    #[test]
    fn nullable_shapes_collapse_and_leave_required() {
        let out = norm(json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "Args",
            "description": "struct docs",
            "type": "object",
            "properties": {
                "a": {"type": ["string", "null"], "format": "uint32", "default": null},
                "b": {"anyOf": [{"type": "integer", "format": "int64"}, {"type": "null"}], "description": "b"},
                "c": {"type": "number", "nullable": true, "format": "double"},
                "d": {"type": ["string", "null"], "enum": ["x", "y", null]},
                "e": {"type": "string", "format": "date-time"}
            },
            "required": ["a", "b", "c", "e"]
        }));
        assert_eq!(
            out,
            json!({
                "type": "object",
                "properties": {
                    "a": {"type": "string"},
                    "b": {"type": "integer", "description": "b"},
                    "c": {"type": "number"},
                    "d": {"type": "string", "enum": ["x", "y"]},
                    "e": {"type": "string", "format": "date-time"}
                },
                "required": ["e"]
            })
        );
    }

    #[test]
    fn refs_are_inlined_and_recursion_is_kept() {
        let out = norm(json!({
            "type": "object",
            "properties": {
                "x": {"$ref": "#/$defs/Inner", "description": "field doc"},
                "n": {"$ref": "#/$defs/Node"}
            },
            "$defs": {
                "Inner": {"type": "object", "description": "type doc", "properties": {"v": {"type": "boolean"}}},
                "Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}
            }
        }));
        assert_eq!(
            out["properties"]["x"],
            json!({"type": "object", "description": "field doc", "properties": {"v": {"type": "boolean"}}})
        );
        assert_eq!(out["properties"]["n"]["properties"]["next"], json!({"$ref": "#/$defs/Node"}));
        assert_eq!(out["$defs"]["Node"]["properties"]["next"], json!({"$ref": "#/$defs/Node"}));
        assert!(out["$defs"].get("Inner").is_none());
    }

    #[test]
    fn bool_schemas_and_bare_roots() {
        assert_eq!(norm(json!(true)), json!({"type": "object", "properties": {}}));
        assert_eq!(norm(json!({"type": "null"})), json!({"type": "object", "properties": {}}));
        let out = norm(
            json!({"type": "object", "properties": {"v": true, "m": {"type": "object", "additionalProperties": false}}}),
        );
        assert_eq!(out["properties"]["v"], json!({}));
        assert_eq!(out["properties"]["m"], json!({"type": "object", "properties": {}, "additionalProperties": false}));
    }

    #[test]
    fn ref_names_round_trip() {
        for name in ["Plain", "Generic<T>", "a/b~c", "Ünï"] {
            assert_eq!(decode(&encode(name)), name);
        }
    }
}
