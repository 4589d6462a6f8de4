//! Normalised input schemas of representative argument types, compared with committed
//! snapshots (`tests/snapshots/schema/NAME.json`; regenerate with `UPDATE_SNAPSHOTS=1`).

use std::collections::HashMap;
use std::path::PathBuf;

use mcpeye::schema::{self, SchemaProblem};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

/// Search arguments.
#[allow(dead_code)]
#[derive(Deserialize, JsonSchema)]
struct WithOption {
    /// Words to look for.
    query: String,
    /// Maximum number of hits.
    limit: Option<u32>,
    /// Only hits after this ISO 8601 date.
    #[schemars(extend("format" = "date-time"))]
    since: Option<String>,
    /// Sort order.
    order: Option<Order>,
    /// Restrict the search.
    filter: Option<Filter>,
}

/// Sort order.
#[allow(dead_code)]
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Order {
    Newest,
    Oldest,
}

/// A documented-variant enum.
#[allow(dead_code)]
#[derive(Deserialize, JsonSchema)]
enum Level {
    /// Only errors.
    Error,
    /// Everything.
    Debug,
}

/// A filter.
#[allow(dead_code)]
#[derive(Deserialize, JsonSchema)]
struct Filter {
    /// Tags that must all be present.
    tags: Vec<String>,
    /// Lowest priority.
    min_priority: Option<i32>,
}

#[allow(dead_code)]
#[derive(Deserialize, JsonSchema)]
struct Collections {
    /// Labels.
    labels: Vec<String>,
    /// Score per user.
    scores: HashMap<String, f64>,
    /// Items to create.
    items: Vec<Item>,
    /// Free-form metadata.
    meta: Option<serde_json::Value>,
}

#[allow(dead_code)]
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Item {
    /// Item name.
    name: String,
    /// How many.
    #[serde(default)]
    count: u16,
}

#[allow(dead_code)]
#[derive(Deserialize, JsonSchema)]
struct Enums {
    /// Sort order.
    order: Order,
    /// Log level.
    level: Option<Level>,
    /// What to do.
    action: Action,
}

/// An action.
#[allow(dead_code)]
#[derive(Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Action {
    /// Create an issue.
    Create {
        /// Issue title.
        title: String,
    },
    /// Close an issue.
    Close {
        /// Issue number.
        number: u64,
    },
}

/// An externally tagged enum with data.
#[allow(dead_code)]
#[derive(Deserialize, JsonSchema)]
enum Shape {
    /// A circle.
    Circle {
        /// Radius in metres.
        radius: f64,
    },
    /// A square of this side.
    Square(f64),
    /// Nothing.
    Empty,
}

#[allow(dead_code)]
#[derive(Deserialize, JsonSchema)]
struct WithShape {
    /// The shape to draw.
    shape: Shape,
}

#[allow(dead_code)]
#[derive(Deserialize, JsonSchema)]
struct Numbers {
    /// A u64.
    a: u64,
    /// A u8.
    b: u8,
    /// An i32.
    c: i32,
    /// An f64.
    d: f64,
    /// An f32.
    e: f32,
    /// A usize.
    f: usize,
    /// An i64.
    g: i64,
}

#[allow(dead_code)]
#[derive(Deserialize, JsonSchema)]
struct Strings {
    /// Lower-case slug.
    #[schemars(regex(pattern = r"^[a-z0-9-]+$"), length(min = 1, max = 64))]
    slug: String,
    /// Contact address.
    #[schemars(email)]
    email: String,
    /// Home page.
    #[schemars(url)]
    homepage: Option<String>,
}

/// A tree node.
#[allow(dead_code)]
#[derive(Deserialize, JsonSchema)]
struct Node {
    /// Node label.
    label: String,
    /// Child nodes.
    children: Vec<Node>,
}

#[allow(dead_code)]
#[derive(Deserialize, JsonSchema)]
struct Tree {
    /// Root of the tree.
    root: Node,
}

/// No arguments.
#[derive(Deserialize, JsonSchema)]
struct UnitArgs;

#[derive(Deserialize, JsonSchema)]
struct EmptyArgs {}

fn snapshot(name: &str, actual: &Value) {
    let path: PathBuf =
        [env!("CARGO_MANIFEST_DIR"), "tests", "snapshots", "schema", &format!("{name}.json")].iter().collect();
    let pretty = serde_json::to_string_pretty(actual).unwrap() + "\n";
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some_and(|v| v == "1") {
        std::fs::write(&path, pretty).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (run with UPDATE_SNAPSHOTS=1 to create it)", path.display()));
    assert_eq!(pretty, expected, "{name}: normalised schema differs from {}", path.display());
}

fn normalized<T: JsonSchema>() -> Value {
    let first = schema::normalize(schema::generate::<T>());
    assert_eq!(first, schema::normalize(schema::generate::<T>()), "normalize must be deterministic");
    first
}

/// The root of an accepted schema holds only what the MCP spec's `inputSchema` shows.
fn assert_mcp_root(schema: &Value) {
    let root = schema.as_object().unwrap();
    assert_eq!(root["type"], "object");
    assert!(root["properties"].is_object());
    for key in root.keys() {
        assert!(
            ["type", "properties", "required", "additionalProperties"].contains(&key.as_str()),
            "unexpected root key {key}"
        );
    }
}

/// Walks every subschema and asserts none of the shapes normalisation must remove is left.
fn assert_clean(value: &Value) {
    match value {
        Value::Object(obj) => {
            assert!(!obj.contains_key("$schema") && !obj.contains_key("nullable"), "{obj:?}");
            assert!(!obj.get("type").is_some_and(Value::is_array), "type array in {obj:?}");
            if let Some(format) = obj.get("format") {
                assert!(["date-time", "email", "uri", "uuid", "ipv4"].contains(&format.as_str().unwrap()), "{format}");
            }
            for (key, sub) in obj {
                if key == "properties" {
                    for prop in sub.as_object().unwrap().values() {
                        assert!(prop.is_object(), "boolean property schema");
                        assert_clean(prop);
                    }
                } else if key != "enum" && key != "const" && key != "default" {
                    assert_clean(sub);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(assert_clean),
        Value::Null => panic!("null left in a schema"),
        _ => {}
    }
}

fn accepted(name: &str, schema: Value) -> Value {
    snapshot(name, &schema);
    assert_eq!(schema::validate(&schema), Vec::<SchemaProblem>::new(), "{name}");
    assert_mcp_root(&schema);
    assert_clean(&schema);
    schema
}

#[test]
fn struct_with_options() {
    let schema = accepted("with_option", normalized::<WithOption>());
    assert_eq!(schema["required"], serde_json::json!(["query"]));
    assert_eq!(
        schema["properties"]["limit"],
        serde_json::json!({"type": "integer", "minimum": 0, "description": "Maximum number of hits."})
    );
    assert_eq!(schema["properties"]["since"]["format"], "date-time");
    assert_eq!(schema["properties"]["filter"]["properties"]["tags"]["items"], serde_json::json!({"type": "string"}));
    assert!(schema.get("description").is_none() && schema.get("title").is_none());
}

#[test]
fn collections_and_maps() {
    let schema = accepted("collections", normalized::<Collections>());
    let scores = &schema["properties"]["scores"];
    assert_eq!(scores["type"], "object");
    assert_eq!(scores["additionalProperties"]["type"], "number");
    assert_eq!(schema["properties"]["meta"]["description"], "Free-form metadata.");
    assert_eq!(schema["properties"]["items"]["items"]["additionalProperties"], false);
}

#[test]
fn enums_inside_properties() {
    let schema = accepted("enums", normalized::<Enums>());
    assert_eq!(schema["properties"]["order"]["enum"], serde_json::json!(["newest", "oldest"]));
    assert!(schema["properties"]["action"]["oneOf"].is_array());
    accepted("externally_tagged", normalized::<WithShape>());
}

#[test]
fn numbers_lose_non_standard_formats() {
    let schema = accepted("numbers", normalized::<Numbers>());
    assert_eq!(schema["properties"]["b"]["maximum"], 255);
    assert_eq!(schema["properties"]["a"]["minimum"], 0);
    assert_eq!(schema["properties"]["d"], serde_json::json!({"type": "number", "description": "An f64."}));
}

#[test]
fn strings_keep_standard_formats_and_patterns() {
    let schema = accepted("strings", normalized::<Strings>());
    assert_eq!(schema["properties"]["slug"]["pattern"], "^[a-z0-9-]+$");
    assert_eq!(schema["properties"]["email"]["format"], "email");
    assert_eq!(schema["properties"]["homepage"]["format"], "uri");
}

#[test]
fn unit_and_empty_structs_are_empty_objects() {
    accepted("unit_struct", normalized::<UnitArgs>());
    accepted("empty_struct", normalized::<EmptyArgs>());
    assert_eq!(normalized::<UnitArgs>(), serde_json::json!({"type": "object", "properties": {}}));
}

#[test]
fn recursive_type_keeps_ref_and_is_refused() {
    let schema = normalized::<Tree>();
    snapshot("recursive", &schema);
    let problems = schema::validate(&schema);
    assert!(problems.iter().any(|p| p.rule == "no-ref" && p.message.contains("break the recursion")), "{problems:#?}");
    assert!(problems.iter().all(|p| p.rule == "no-ref"), "{problems:#?}");
}

#[test]
fn enum_at_root_is_refused() {
    let schema = normalized::<Shape>();
    snapshot("root_enum", &schema);
    let problems = schema::validate(&schema);
    let rules: Vec<&str> = problems.iter().map(|p| p.rule).collect();
    assert!(rules.contains(&"root-combinator") && rules.contains(&"root-not-object"), "{problems:#?}");
}

#[test]
fn undocumented_fields_are_listed_with_the_fix() {
    #[allow(dead_code)]
    #[derive(Deserialize, JsonSchema)]
    struct Undocumented {
        query: String,
        /// Documented.
        filter: Filter2,
    }
    #[allow(dead_code)]
    #[derive(Deserialize, JsonSchema)]
    struct Filter2 {
        tags: Vec<String>,
    }
    let problems = schema::validate(&normalized::<Undocumented>());
    let found: Vec<(&str, &str)> = problems.iter().map(|p| (p.path.as_str(), p.rule)).collect();
    assert_eq!(
        found,
        [("/properties/query", "missing-description"), ("/properties/filter/properties/tags", "missing-description")]
    );
    assert!(problems[1].message.contains("add a `///` doc comment to the field `tags`"));
}

#[test]
fn intent_is_injected_after_validation() {
    let mut schema = normalized::<WithOption>();
    schema::inject_intent(&mut schema);
    assert_mcp_root(&schema);
    assert_eq!(schema["properties"]["mcpeyeIntent"]["type"], "string");
    assert_eq!(schema["required"], serde_json::json!(["query"]));
}
