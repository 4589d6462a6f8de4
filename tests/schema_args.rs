//! `describe_argument_errors`: one line per problem, by JSON path, never echoing a value.

use mcpeye::schema;
use mcpeye_runtime::__private::describe_argument_errors;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Map, Value};

const SECRET: &str = "hunter2-sk-live-0123456789abcdef";

/// Arguments of a search tool.
#[allow(dead_code)]
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Search {
    /// Words to look for.
    query: String,
    /// Maximum number of hits.
    limit: Option<u8>,
    /// Sort order.
    order: Option<Order>,
    /// Restrict the search.
    filter: Option<Filter>,
    /// What to do with the hits.
    action: Option<Action>,
}

#[allow(dead_code)]
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Order {
    Newest,
    Oldest,
}

#[allow(dead_code)]
#[derive(Deserialize, JsonSchema)]
struct Filter {
    /// Tags that must all be present.
    tags: Vec<String>,
    /// Whether archived items count.
    archived: bool,
    /// Lowest score, a fraction.
    min_score: Option<f64>,
}

#[allow(dead_code)]
#[derive(Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Action {
    /// Label the hits.
    Label {
        /// The label.
        name: String,
    },
    /// Delete the hits.
    Delete,
}

fn search_schema() -> Value {
    let mut schema = schema::normalize(schema::generate::<Search>());
    assert!(schema::validate(&schema).is_empty());
    schema::inject_intent(&mut schema);
    schema
}

/// Deserialisation must fail for the case to be meaningful, and the lines must not leak.
fn describe(args: Value) -> Vec<String> {
    assert!(serde_json::from_value::<Search>(args.clone()).is_err(), "{args} is valid");
    let lines = describe_argument_errors(&search_schema(), &args);
    for line in &lines {
        assert!(!line.contains(SECRET) && !line.contains("hunter2"), "value echoed: {line}");
    }
    lines
}

#[test]
fn non_object_arguments() {
    assert_eq!(describe(json!([SECRET])), ["the arguments must be a JSON object, got an array"]);
    assert_eq!(describe(json!(SECRET)), ["the arguments must be a JSON object, got a string"]);
}

#[test]
fn missing_required() {
    assert_eq!(describe(json!({})), ["`query`: missing required property"]);
    assert_eq!(
        describe(json!({"query": SECRET, "filter": {}})),
        ["`filter.tags`: missing required property", "`filter.archived`: missing required property"]
    );
}

#[test]
fn unknown_property_with_deny_unknown_fields() {
    assert_eq!(
        describe(json!({"query": "q", "qurey": SECRET})),
        ["`qurey`: unknown property (this tool does not take it)"]
    );
    // A key that is not a plain identifier is not shown: it could be user data.
    assert_eq!(
        describe(json!({"query": "q", SECRET.replace('-', " "): 1})),
        ["`arguments`: has an unknown property (its name is not shown)"]
    );
}

#[test]
fn wrong_types() {
    assert_eq!(describe(json!({"query": 5})), ["`query`: expected a string, got an integer"]);
    assert_eq!(
        describe(json!({"query": "q", "limit": 2.5})),
        ["`limit`: expected an integer, got a number with a fraction"]
    );
    assert_eq!(describe(json!({"query": "q", "limit": SECRET})), ["`limit`: expected an integer, got a string"]);
    assert_eq!(
        describe(json!({"query": "q", "filter": {"tags": ["a", "b", 3], "archived": SECRET}})),
        ["`filter.tags[2]`: expected a string, got an integer", "`filter.archived`: expected a boolean, got a string"]
    );
    assert_eq!(describe(json!({"query": "q", "filter": [SECRET]})), ["`filter`: expected an object, got an array"]);
    assert_eq!(describe(json!({"query": null})), ["`query`: expected a string, got null"]);
    assert_eq!(
        describe(json!({"query": "q", "filter": {"tags": SECRET, "archived": true}})),
        ["`filter.tags`: expected an array, got a string"]
    );
}

#[test]
fn null_is_fine_for_optional_properties() {
    // `limit: null` deserialises (to `None`); only the real problem is reported.
    assert_eq!(describe(json!({"query": 1, "limit": null})), ["`query`: expected a string, got an integer"]);
}

#[test]
fn enum_mismatch_lists_the_allowed_values_not_the_given_one() {
    assert_eq!(describe(json!({"query": "q", "order": SECRET})), [r#"`order`: must be one of "newest", "oldest""#]);
}

#[test]
fn bounds() {
    assert_eq!(describe(json!({"query": "q", "limit": 300})), ["`limit`: must be at most 255"]);
    assert_eq!(describe(json!({"query": "q", "limit": -1})), ["`limit`: must be at least 0"]);
}

#[test]
fn tagged_enum_variants() {
    assert_eq!(
        describe(json!({"query": "q", "action": {"kind": "label"}})),
        ["`action.name`: missing required property"]
    );
    assert_eq!(
        describe(json!({"query": "q", "action": {"kind": SECRET}})),
        [r#"`action.kind`: must be one of "label", "delete""#]
    );
}

#[test]
fn intent_property_is_ignored() {
    let schema = search_schema();
    let lines = describe_argument_errors(&schema, &json!({"query": 1, "mcpeyeIntent": 7}));
    assert_eq!(lines, ["`query`: expected a string, got an integer"]);
}

#[test]
fn long_lists_are_cut() {
    let tags: Vec<Value> = (0..1000).map(Value::from).collect();
    let lines = describe(json!({"query": "q", "filter": {"tags": tags, "archived": true}}));
    assert_eq!(lines.len(), 21);
    assert_eq!(lines[0], "`filter.tags[0]`: expected a string, got an integer");
    assert_eq!(lines[20], "(further problems not listed)");
}

#[test]
fn ten_megabyte_string_is_not_copied_into_the_output() {
    let big = SECRET.repeat(10 * 1024 * 1024 / SECRET.len());
    let schema = json!({
        "type": "object",
        "properties": {"text": {"type": "string", "maxLength": 100}, "n": {"type": "integer"}},
        "required": ["n"]
    });
    let lines = describe_argument_errors(&schema, &json!({"text": big, "n": big}));
    assert_eq!(lines, ["`text`: must have at most 100 characters", "`n`: expected an integer, got a string"]);
}

/// Builds `depth` levels of `wrap(inner)` without `json!` (which copies recursively).
fn nest(depth: usize, leaf: Value, wrap: impl Fn(Value) -> Value) -> Value {
    (0..depth).fold(leaf, |inner, _| wrap(inner))
}

fn object_of(key: &str, value: Value) -> Value {
    let mut map = Map::new();
    map.insert(key.to_owned(), value);
    Value::Object(map)
}

#[test]
fn ten_thousand_deep_nesting_is_bounded() {
    let args = object_of("a", nest(10_000, Value::from(SECRET), |v| Value::Array(vec![v])));
    let array_schema = nest(10_000, json!({"type": "integer"}), |v| {
        let mut s = object_of("items", v);
        s["type"] = json!("array");
        s
    });
    let mut schema = json!({"type": "object", "properties": {}});
    schema["properties"]["a"] = array_schema;

    let lines = describe_argument_errors(&schema, &args);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].contains("nested more than 128 levels deep"), "{lines:?}");
    assert!(!lines[0].contains(SECRET));

    // A shallow schema over deep arguments: only the described levels are visited.
    let shallow = json!({"type": "object", "properties": {"a": {"type": "object"}}});
    assert_eq!(describe_argument_errors(&shallow, &args), ["`a`: expected an object, got an array"]);

    // Deep `allOf` chains are bounded too.
    let all_of = nest(10_000, json!({"type": "string"}), |v| object_of("allOf", Value::Array(vec![v])));
    let lines = describe_argument_errors(&all_of, &json!({}));
    assert_eq!(lines.len(), 1, "{lines:?}");

    mcpeye::testing::drop_deep(args);
    mcpeye::testing::drop_deep(schema);
    mcpeye::testing::drop_deep(all_of);
}
