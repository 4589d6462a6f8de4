//! Every reason an MCP client could refuse a normalised input schema, with the fix.

use serde_json::{Map, Value};

use super::{pointer, SchemaProblem, MAX_DESCRIPTION_CHARS, MAX_SCHEMA_BYTES, MAX_SCHEMA_DEPTH, STANDARD_FORMATS};
use mcpeye_contract::{argument_name_problem, pattern_problem, property_name_problem};

/// Keys whose value is one subschema (a boolean `additionalProperties` is fine).
const SINGLE: &[&str] =
    &["not", "if", "then", "else", "contains", "propertyNames", "additionalItems", "additionalProperties"];
/// Keys whose value is a list of subschemas.
const LISTS: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems"];
/// Keys whose value maps names to subschemas.
const MAPS: &[&str] = &["properties", "patternProperties", "dependentSchemas"];

/// Lists every problem of a normalised input schema (not just the first), each with a JSON
/// pointer, a stable rule id and a message saying how to fix it in the Rust code.
///
/// Rules (ids): `root-not-object`, `missing-properties`, `root-combinator`, `reserved-property`,
/// `missing-description`, `property-name`, `no-ref`, `type-array`, `nullable`,
/// `non-standard-format`, `boolean-schema`, `tuple-items`, `array-without-items`,
/// `schema-too-large`, `description-too-long`, `invalid-pattern`, `backtracking-pattern`,
/// `too-deep`.
///
/// Descriptions: every property of every object needs one, at any depth — the properties of
/// a nested struct, of the structs in a `Vec`, and of the struct variants of an enum (an agent
/// must know what each field means). Array `items` and enum variants themselves need none: the
/// property holding them has the description. Nor does a property with a single possible value
/// (`const`): the tag of an internally tagged enum is explained by its variant, and neither
/// does the one property named after an externally tagged variant that has a doc comment.
///
/// Client quirks that only some clients mishandle (`additionalProperties`, `const`, `pattern`
/// alone) are not problems.
///
/// ```
/// let schema = serde_json::json!({
///     "type": "object",
///     "properties": {"when": {"type": ["string", "null"], "description": "A date."}}
/// });
/// let problems = mcpeye::schema::validate(&schema);
/// assert_eq!(problems[0].rule, "type-array");
/// eprintln!("{}", problems[0]); // the path, the rule and how to fix it
/// ```
pub fn validate(schema: &Value) -> Vec<SchemaProblem> {
    let mut out = Vec::new();
    let Some(root) = schema.as_object() else {
        out.push(problem(
            "",
            "root-not-object",
            "the input schema is not a JSON object schema; take a struct as arguments (named parameters, or `Args<T>` with a struct `T`)".to_owned(),
        ));
        return out;
    };
    check_root(root, &mut out);
    walk(schema, "", 0, false, &mut out);
    // Serialising is recursive: skip the size of a schema already refused as too deep.
    let deep = out.iter().any(|p| p.rule == "too-deep");
    let size = if deep { 0 } else { serde_json::to_vec(schema).map_or(0, |v| v.len()) };
    if size > MAX_SCHEMA_BYTES {
        out.push(problem(
            "",
            "schema-too-large",
            format!("the input schema is {size} bytes of compact JSON, over the {MAX_SCHEMA_BYTES}-byte limit; split the tool into smaller ones or shorten the doc comments"),
        ));
    }
    out
}

/// The checks of an input schema served as generated (`normalize_schema = false`): its root is
/// an object schema and it is at most [`MAX_SCHEMA_BYTES`]. Its shape (`$ref`, `$defs`,
/// `$schema`…) is the author's choice; the descriptions of the tool, the names and the patterns
/// of `#[mcpeye::tool]` parameters are still checked at compile time.
///
/// ```
/// let schema = serde_json::json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object"});
/// assert!(mcpeye::schema::validate_as_is(&schema).is_empty());
/// ```
pub fn validate_as_is(schema: &Value) -> Vec<SchemaProblem> {
    let mut out = Vec::new();
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        out.push(problem(
            "",
            "root-not-object",
            "the input schema's root must be `\"type\": \"object\"`; take a struct as arguments".to_owned(),
        ));
    }
    let size = serde_json::to_vec(schema).map_or(0, |v| v.len());
    if size > MAX_SCHEMA_BYTES {
        out.push(problem(
            "",
            "schema-too-large",
            format!("the input schema is {size} bytes of compact JSON, over the {MAX_SCHEMA_BYTES}-byte limit; split the tool into smaller ones"),
        ));
    }
    out
}

fn problem(path: &str, rule: &'static str, message: String) -> SchemaProblem {
    SchemaProblem { path: path.to_owned(), rule, message }
}

fn check_root(root: &Map<String, Value>, out: &mut Vec<SchemaProblem>) {
    if root.get("type").and_then(Value::as_str) != Some("object") {
        out.push(problem(
            "",
            "root-not-object",
            "the input schema's root must be `\"type\": \"object\"`; take a struct as arguments (named parameters, or `Args<T>` with a struct `T`), not a scalar, sequence or enum".to_owned(),
        ));
    }
    if !root.get("properties").is_some_and(Value::is_object) {
        out.push(problem(
            "",
            "missing-properties",
            "the input schema's root has no `properties` object, which several clients refuse; run the schema through `schema::normalize` or use a struct as arguments".to_owned(),
        ));
    }
    for key in ["oneOf", "anyOf", "allOf"] {
        if root.contains_key(key) {
            out.push(problem(
                &pointer("", key),
                "root-combinator",
                format!("`{key}` at the root of an input schema is refused by the Anthropic API and Claude Code; an enum (or `#[serde(flatten)]` of one) cannot be the whole arguments: put it in a documented field of a struct, e.g. `struct Args {{ /// What to do.\n action: Action }}`"),
            ));
        }
    }
}

/// `variant`: `value` is a branch of `oneOf`/`anyOf` (an enum variant).
fn walk(value: &Value, path: &str, depth: usize, variant: bool, out: &mut Vec<SchemaProblem>) {
    if depth > MAX_SCHEMA_DEPTH {
        out.push(problem(
            path,
            "too-deep",
            format!("the schema nests more than {MAX_SCHEMA_DEPTH} levels deep here; flatten the argument types"),
        ));
        return;
    }
    let obj = match value {
        Value::Object(obj) => obj,
        Value::Bool(_) => {
            out.push(problem(path, "boolean-schema", "a boolean schema (`true`/`false`) makes the TypeScript SDK reject the whole tool list; `schema::normalize` replaces them — if a manual `JsonSchema` impl returns one, return `json_schema!({})` instead".to_owned()));
            return;
        }
        _ => {
            out.push(problem(
                path,
                "boolean-schema",
                "this subschema is neither an object nor a boolean; fix the manual `JsonSchema` impl that produced it"
                    .to_owned(),
            ));
            return;
        }
    };
    check_keywords(obj, path, out);

    if let Some(Value::Object(props)) = obj.get("properties") {
        let wrapper = variant && is_variant_wrapper(obj, props);
        for (name, sub) in props {
            let sub_path = pointer(&pointer(path, "properties"), name);
            // The root's properties are the tool's arguments, where mcpeye reserves its own names.
            let name_problem = if depth == 0 { argument_name_problem(name) } else { property_name_problem(name) };
            if let Some(p) = name_problem {
                out.push(problem(&sub_path, p.rule().id(), p.to_string()));
            }
            let documented = sub.get("description").and_then(Value::as_str).is_some_and(|d| !d.trim().is_empty());
            if !documented && !is_tag(sub) && !wrapper {
                out.push(problem(&sub_path, "missing-description", format!("the property `{name}` has no description, so agents must guess what it means; add a `///` doc comment to the field `{name}` (or `#[schemars(description = \"…\")]`)")));
            }
        }
    }

    for key in SINGLE {
        match obj.get(*key) {
            Some(Value::Bool(_)) if *key == "additionalProperties" => {}
            Some(sub) => walk(sub, &pointer(path, key), depth + 1, false, out),
            None => {}
        }
    }
    match obj.get("items") {
        Some(Value::Array(subs)) => walk_list(subs, &pointer(path, "items"), depth, false, out),
        Some(sub) => walk(sub, &pointer(path, "items"), depth + 1, false, out),
        None => {}
    }
    for key in LISTS {
        if let Some(Value::Array(subs)) = obj.get(*key) {
            walk_list(subs, &pointer(path, key), depth, matches!(*key, "oneOf" | "anyOf"), out);
        }
    }
    for key in MAPS {
        if let Some(Value::Object(subs)) = obj.get(*key) {
            let base = pointer(path, key);
            for (name, sub) in subs {
                walk(sub, &pointer(&base, name), depth + 1, false, out);
            }
        }
    }
}

/// A property with one possible value: the tag of an internally tagged enum variant, whose
/// meaning is the variant's description.
fn is_tag(schema: &Value) -> bool {
    schema.get("const").is_some() || schema.get("enum").and_then(Value::as_array).is_some_and(|v| v.len() == 1)
}

/// The `{"Variant": …}` object of an externally tagged enum variant: its one property is the
/// variant's name, explained by the variant's own description.
fn is_variant_wrapper(obj: &Map<String, Value>, props: &Map<String, Value>) -> bool {
    let documented = obj.get("description").and_then(Value::as_str).is_some_and(|d| !d.trim().is_empty());
    let required = obj.get("required").and_then(Value::as_array);
    documented
        && props.len() == 1
        && required.is_some_and(|r| r.len() == 1 && props.contains_key(r[0].as_str().unwrap_or("")))
}

fn walk_list(subs: &[Value], base: &str, depth: usize, variants: bool, out: &mut Vec<SchemaProblem>) {
    for (i, sub) in subs.iter().enumerate() {
        walk(sub, &pointer(base, &i.to_string()), depth + 1, variants, out);
    }
}

/// Problems of one subschema's own keywords.
fn check_keywords(obj: &Map<String, Value>, path: &str, out: &mut Vec<SchemaProblem>) {
    const RECURSION_FIX: &str = "the type is recursive (or refers to a definition that could not be inlined), and clients such as the Anthropic API, Zed and Copilot CLI refuse `$ref`; break the recursion with a depth-limited representation: a fixed number of levels as separate structs, a flat `Vec` of nodes with parent ids, or a `serde_json::Value` field whose doc comment describes the shape";
    if let Some(reference) = obj.get("$ref") {
        let reference = reference.as_str().unwrap_or("?");
        out.push(problem(
            &pointer(path, "$ref"),
            "no-ref",
            format!("`$ref` to `{reference}` is left: {RECURSION_FIX}"),
        ));
    }
    for key in ["$defs", "definitions"] {
        if obj.contains_key(key) {
            out.push(problem(&pointer(path, key), "no-ref", format!("`{key}` is left: {RECURSION_FIX}")));
        }
    }
    if let Some(Value::Array(types)) = obj.get("type") {
        let listed: Vec<String> = types.iter().map(Value::to_string).collect();
        out.push(problem(&pointer(path, "type"), "type-array", format!("`type` is a list ([{}]), which Gemini and Cursor refuse; for an optional value use `Option<T>` (normalised into a property that is not required), for several shapes use an enum inside a field", listed.join(", "))));
    }
    if obj.contains_key("nullable") {
        out.push(problem(&pointer(path, "nullable"), "nullable", "`nullable` is not JSON Schema and several clients refuse it; use `Option<T>` so the property is simply not required, and remove `nullable` from the manual schema".to_owned()));
    }
    if let Some(format) = obj.get("format") {
        if !format.as_str().is_some_and(|f| STANDARD_FORMATS.contains(&f)) {
            out.push(problem(&pointer(path, "format"), "non-standard-format", format!("format {format} is not a JSON Schema format, and Ajv-based clients refuse unknown formats; remove it (`schema::normalize` removes the ones schemars emits) or use a standard one ({})", STANDARD_FORMATS.join(", "))));
        }
    }
    let tuple = obj.get("items").is_some_and(Value::is_array) || obj.contains_key("prefixItems");
    if tuple {
        let key = if obj.contains_key("prefixItems") { "prefixItems" } else { "items" };
        out.push(problem(&pointer(path, key), "tuple-items", "a tuple (`prefixItems` or a list of `items`) is refused by several clients; replace the tuple type `(A, B)` with a struct of documented fields, or with a `Vec<T>`".to_owned()));
    }
    let is_array = match obj.get("type") {
        Some(Value::String(t)) => t == "array",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "array"),
        _ => false,
    };
    if is_array && !obj.contains_key("items") && !tuple {
        out.push(problem(path, "array-without-items", "an array without `items` is refused by several clients; use `Vec<T>` with a concrete element type, or add `items` to the manual schema".to_owned()));
    }
    if let Some(Value::String(description)) = obj.get("description") {
        let chars = description.chars().count();
        if chars > MAX_DESCRIPTION_CHARS {
            out.push(problem(&pointer(path, "description"), "description-too-long", format!("this description is {chars} characters, over the {MAX_DESCRIPTION_CHARS}-character limit; shorten the doc comment")));
        }
    }
    if let Some(p) = obj.get("pattern").and_then(Value::as_str).and_then(pattern_problem) {
        out.push(problem(&pointer(path, "pattern"), p.rule().id(), p.to_string()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rules(schema: &Value) -> Vec<(String, &'static str)> {
        validate(schema).into_iter().map(|p| (p.path, p.rule)).collect()
    }

    fn only(schema: Value, path: &str, rule: &str, fix: &str) {
        let problems = validate(&schema);
        assert_eq!(problems.len(), 1, "{problems:#?}");
        assert_eq!((problems[0].path.as_str(), problems[0].rule), (path, rule));
        assert!(problems[0].message.contains(fix), "{:?} lacks {fix:?}", problems[0].message);
    }

    fn root(props: Value) -> Value {
        json!({"type": "object", "properties": props})
    }

    #[test]
    fn clean_schema_has_no_problem() {
        let schema = json!({
            "type": "object",
            "properties": {
                "q": {"type": "string", "description": "Query.", "pattern": "^[a-z]+$", "format": "email"},
                "tags": {"type": "array", "description": "Tags.", "items": {"type": "string"}},
                "mode": {"description": "Mode.", "oneOf": [{"const": "a"}, {"const": "b"}]},
                "extra": {"type": "object", "description": "Map.", "properties": {}, "additionalProperties": {"type": "integer"}}
            },
            "required": ["q"],
            "additionalProperties": false
        });
        assert_eq!(validate(&schema), vec![]);
    }

    #[test]
    fn missing_description_at_every_level() {
        let schema = root(json!({
            "filter": {"type": "object", "description": "F.", "properties": {
                "tags": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}}}
            }},
            "blank": {"type": "string", "description": "  "}
        }));
        assert_eq!(
            rules(&schema),
            vec![
                ("/properties/blank".to_owned(), "missing-description"),
                ("/properties/filter/properties/tags".to_owned(), "missing-description"),
                ("/properties/filter/properties/tags/items/properties/name".to_owned(), "missing-description"),
            ]
        );
        assert!(validate(&schema)[1].message.contains("add a `///` doc comment to the field `tags`"));
    }

    #[test]
    fn each_rule_names_a_fix() {
        only(json!({"type": "string", "properties": {}}), "", "root-not-object", "struct");
        only(json!({"type": "object"}), "", "missing-properties", "normalize");
        only(
            root(json!({"x": {"description": "X.", "$ref": "#/$defs/Node"}})),
            "/properties/x/$ref",
            "no-ref",
            "break the recursion",
        );
        only(json!({"type": "object", "properties": {}, "$defs": {}}), "/$defs", "no-ref", "depth-limited");
        only(
            root(json!({"x": {"description": "X.", "type": ["string", "null"]}})),
            "/properties/x/type",
            "type-array",
            "Option<T>",
        );
        only(
            root(json!({"x": {"description": "X.", "type": "string", "nullable": true}})),
            "/properties/x/nullable",
            "nullable",
            "Option<T>",
        );
        only(
            root(json!({"x": {"description": "X.", "type": "integer", "format": "uint32"}})),
            "/properties/x/format",
            "non-standard-format",
            "remove it",
        );
        only(
            root(json!({"x": {"description": "X.", "type": "array", "items": true}})),
            "/properties/x/items",
            "boolean-schema",
            "json_schema!({})",
        );
        only(
            root(json!({"x": {"description": "X.", "type": "array", "prefixItems": [{}], "items": {}}})),
            "/properties/x/prefixItems",
            "tuple-items",
            "struct",
        );
        only(
            root(json!({"x": {"description": "X.", "type": "array", "items": [{}, {}]}})),
            "/properties/x/items",
            "tuple-items",
            "struct",
        );
        only(
            root(json!({"x": {"description": "X.", "type": "array"}})),
            "/properties/x",
            "array-without-items",
            "Vec<T>",
        );
        only(root(json!({"a b": {"description": "X."}})), "/properties/a b", "property-name", "#[serde(rename");
        only(
            root(json!({"mcpeyeIntent": {"description": "X."}})),
            "/properties/mcpeyeIntent",
            "reserved-property",
            "#[serde(rename",
        );
        only(
            root(json!({"mcpeye_intent": {"description": "X."}})),
            "/properties/mcpeye_intent",
            "reserved-property",
            "#[serde(rename",
        );
        // Only the arguments themselves: a nested object may have a property of that name.
        assert_eq!(
            validate(&root(json!({"o": {"type": "object", "description": "O.", "properties": {
                "mcpeyeIntent": {"type": "string", "description": "Theirs."}
            }}}))),
            vec![]
        );
        only(
            root(json!({"x": {"description": "d".repeat(8193)}})),
            "/properties/x/description",
            "description-too-long",
            "shorten",
        );
        only(
            root(json!({"x": {"description": "X.", "pattern": "(a"}})),
            "/properties/x/pattern",
            "invalid-pattern",
            "ECMA-262",
        );
        only(
            root(json!({"x": {"description": "X.", "pattern": "^(a+)+$"}})),
            "/properties/x/pattern",
            "backtracking-pattern",
            "remove the inner or outer quantifier",
        );
        only(
            json!({"type": "object", "properties": {}, "oneOf": [{}]}),
            "/oneOf",
            "root-combinator",
            "field of a struct",
        );
        // Client quirks are not problems.
        let quirks = root(json!({"x": {"description": "X.", "const": "a", "pattern": "^a$"}}));
        assert_eq!(
            validate(&json!({"additionalProperties": false, "type": "object", "properties": quirks["properties"]})),
            vec![]
        );
    }

    #[test]
    fn enum_tags_need_no_description() {
        let wrapper = |doc: Option<&str>| {
            let mut variant =
                json!({"type": "object", "properties": {"Circle": {"type": "number"}}, "required": ["Circle"]});
            if let Some(doc) = doc {
                variant["description"] = json!(doc);
            }
            root(json!({"shape": {"description": "S.", "oneOf": [
                variant,
                {"type": "object", "properties": {"kind": {"const": "square"}, "side": {"type": "number"}}}
            ]}}))
        };
        assert_eq!(
            rules(&wrapper(Some("A circle."))),
            vec![("/properties/shape/oneOf/1/properties/side".to_owned(), "missing-description")]
        );
        assert_eq!(
            rules(&wrapper(None)),
            vec![
                ("/properties/shape/oneOf/0/properties/Circle".to_owned(), "missing-description"),
                ("/properties/shape/oneOf/1/properties/side".to_owned(), "missing-description"),
            ]
        );
    }

    #[test]
    fn description_limit_counts_characters() {
        assert!(validate(&root(json!({"x": {"description": "é".repeat(8192)}}))).is_empty());
    }

    #[test]
    fn oversized_schema() {
        let props: Map<String, Value> =
            (0..700).map(|i| (format!("p{i}"), json!({"type": "string", "description": "d".repeat(100)}))).collect();
        let problems = validate(&root(Value::Object(props)));
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].rule, "schema-too-large");
        assert!(problems[0].message.contains("split the tool"));
    }

    #[test]
    fn reports_every_problem_at_once() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "anyOf": [{"type": ["string", "null"]}],
            "properties": {
                "a": {"type": "integer", "format": "int64"},
                "b c": {"description": "B.", "$ref": "#"},
                "mcpeyeIntent": {"type": "string", "description": "mine"}
            }
        });
        let found = rules(&schema);
        for expected in [
            ("", "root-not-object"),
            ("/anyOf", "root-combinator"),
            ("/properties/mcpeyeIntent", "reserved-property"),
            ("/properties/a", "missing-description"),
            ("/properties/a/format", "non-standard-format"),
            ("/properties/b c", "property-name"),
            ("/properties/b c/$ref", "no-ref"),
            ("/anyOf/0/type", "type-array"),
        ] {
            assert!(found.contains(&(expected.0.to_owned(), expected.1)), "{expected:?} missing from {found:#?}");
        }
        assert_eq!(found.len(), 8, "{found:#?}");
    }

    #[test]
    fn deep_schema_is_bounded() {
        let mut schema = json!({"type": "string"});
        for _ in 0..10_000 {
            // Not `json!`: it would copy the inner value recursively.
            let mut outer = Map::new();
            outer.insert("type".to_owned(), Value::from("array"));
            outer.insert("items".to_owned(), schema);
            schema = Value::Object(outer);
        }
        let mut deep = json!({"description": "D.", "type": "array"});
        deep["items"] = schema;
        let mut schema = json!({"type": "object", "properties": {}});
        schema["properties"]["deep"] = deep;
        let problems = validate(&schema);
        assert_eq!(rules(&schema).iter().filter(|p| p.1 == "too-deep").count(), 1, "{problems:?}");
        crate::redact::drop_flat(schema);
    }
}
