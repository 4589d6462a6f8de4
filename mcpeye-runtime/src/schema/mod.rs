//! Input schemas: generation settings, normalisation into the shape every MCP client accepts,
//! intent injection, the validation done when a manifest is built, and the description of
//! arguments that do not fit a schema.
//!
//! The manifest runs, for each tool: [`generate`] → [`normalize`] → [`validate`] (every
//! problem is listed at start-up) → [`inject_intent`]. At call time, only when serde could not
//! deserialise the arguments, the description of argument errors explains why.
//!
//! ```
//! use mcpeye::schema;
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Search {
//!     /// Words to look for.
//!     query: String,
//!     /// Maximum number of hits.
//!     limit: Option<u32>,
//! }
//!
//! let mut input = schema::normalize(schema::generate::<Search>());
//! assert!(schema::validate(&input).is_empty());
//! schema::inject_intent(&mut input);
//! assert_eq!(input["required"], serde_json::json!(["query"]));
//! assert_eq!(input["properties"]["limit"], serde_json::json!({
//!     "description": "Maximum number of hits.", "type": "integer", "minimum": 0
//! }));
//! ```

pub(crate) mod args;
mod generate;
mod normalize;
mod param;
mod validate;

use serde_json::{Map, Value};

use crate::contract::{INTENT_PARAM_DESCRIPTION, INTENT_PARAM_NAME};

pub use generate::{generate, generate_args, generate_args_as_is, generate_as_is};
pub use normalize::normalize;
pub use param::{ParamDeserialize, ParamSchema};
pub use validate::{validate, validate_as_is};

/// A tool's `outputSchema` from the schema of its return type: normalised like an input schema
/// when the type is an object (a struct, a map), `None` otherwise (MCP requires an object
/// `outputSchema`, and only objects become `structuredContent`).
pub(crate) fn output_schema(schema: Option<schemars::Schema>) -> Option<Value> {
    let schema = schema?;
    let is_object = schema.as_object().and_then(|o| o.get("type")).and_then(Value::as_str) == Some("object");
    is_object.then(|| normalize(schema))
}

#[doc(inline)]
pub use mcpeye_contract::{MAX_DESCRIPTION_CHARS, MAX_SCHEMA_BYTES};
/// Deepest subschema nesting that the walkers of this module descend into.
pub(crate) const MAX_SCHEMA_DEPTH: usize = 128;

/// Formats defined by JSON Schema 2020-12; every other `format` is refused by some client.
pub(crate) const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// One problem found in a tool's input schema.
///
/// ```
/// #[derive(schemars::JsonSchema)]
/// struct Filter {
///     /// Words to look for.
///     words: String,
///     limit: u32, // no doc comment: agents would not know what it means
/// }
///
/// let problems = mcpeye::schema::validate(&mcpeye::schema::normalize(mcpeye::schema::generate::<Filter>()));
/// assert_eq!(problems.len(), 1);
/// assert_eq!((problems[0].path.as_str(), problems[0].rule), ("/properties/limit", "missing-description"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaProblem {
    /// JSON pointer inside the input schema (`/properties/limit`), `""` for the root.
    pub path: String,
    /// Short stable rule id (`no-ref`, `missing-description`, …).
    pub rule: &'static str,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl std::fmt::Display for SchemaProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let path = if self.path.is_empty() { "(root)" } else { &self.path };
        write!(f, "{path} [{}]: {}", self.rule, self.message)
    }
}

/// Adds the optional `mcpeyeIntent` string property to a normalised input schema (never to
/// `required`). A schema whose root is not an object is turned into one first.
///
/// ```
/// let mut schema = serde_json::json!({"type": "object", "properties": {}});
/// mcpeye::schema::inject_intent(&mut schema);
/// assert_eq!(schema["properties"]["mcpeyeIntent"]["type"], "string");
/// assert_eq!(schema.get("required"), None);
/// ```
pub fn inject_intent(schema: &mut Value) {
    inject_intent_described(schema, INTENT_PARAM_DESCRIPTION);
}

/// [`inject_intent`] with another description of the property (`ManifestBuilder::intent_description`).
pub(crate) fn inject_intent_described(schema: &mut Value, description: &str) {
    if !schema.is_object() {
        *schema = Value::Object(Map::new());
    }
    let Some(root) = schema.as_object_mut() else { return };
    root.entry("type").or_insert_with(|| Value::from("object"));
    let properties = root.entry("properties").or_insert_with(|| Value::Object(Map::new()));
    if !properties.is_object() {
        *properties = Value::Object(Map::new());
    }
    if let Some(properties) = properties.as_object_mut() {
        let mut intent = Map::new();
        intent.insert("type".to_owned(), Value::from("string"));
        intent.insert("description".to_owned(), Value::from(description));
        properties.insert(INTENT_PARAM_NAME.to_owned(), Value::Object(intent));
    }
    if let Some(Value::Array(required)) = root.get_mut("required") {
        required.retain(|name| name != INTENT_PARAM_NAME);
    }
}

/// Adds the optional string property `name`, described by `description`, to an object schema
/// (the opt-in attribution arguments, `docs/attribution.md`), as `mcpeyeIntent` is added.
pub(crate) fn inject_property(schema: &mut Value, name: &str, description: &str) {
    let Some(root) = schema.as_object_mut() else { return };
    let properties = root.entry("properties").or_insert_with(|| Value::Object(Map::new()));
    if let Some(properties) = properties.as_object_mut() {
        let mut p = Map::new();
        p.insert("type".to_owned(), Value::from("string"));
        p.insert("description".to_owned(), Value::from(description));
        properties.insert(name.to_owned(), Value::Object(p));
    }
}

/// Whether `name` is an acceptable MCP tool name: 1 to 128 characters of `[A-Za-z0-9_.-]`.
/// (A manifest also refuses the reserved `mcpeye_request_capability` and `mcpeye_send_feedback`,
/// valid names.)
///
/// ```
/// assert!(mcpeye::schema::is_valid_tool_name("search-issues_v2.1"));
/// assert!(!mcpeye::schema::is_valid_tool_name("search issues"));
/// ```
pub fn is_valid_tool_name(name: &str) -> bool {
    mcpeye_contract::tool_name_problem(name)
        .is_none_or(|p| matches!(p, mcpeye_contract::ToolNameProblem::Reserved { .. }))
}

/// Whether `name` is an acceptable property name: 1 to 64 characters of `[A-Za-z0-9_.-]`.
/// (A tool's own arguments may not use `mcpeyeIntent` or `mcpeye_intent`, valid names.)
///
/// ```
/// assert!(mcpeye::schema::is_valid_property_name("max_results"));
/// assert!(!mcpeye::schema::is_valid_property_name("max results"));
/// ```
pub fn is_valid_property_name(name: &str) -> bool {
    mcpeye_contract::property_name_problem(name).is_none()
}

/// Appends one escaped segment to a JSON pointer (RFC 6901).
pub(crate) fn pointer(base: &str, segment: &str) -> String {
    let mut out = String::with_capacity(base.len() + segment.len() + 1);
    out.push_str(base);
    out.push('/');
    for c in segment.chars() {
        match c {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names() {
        assert!(is_valid_tool_name("a"));
        assert!(is_valid_tool_name(&"a".repeat(128)));
        assert!(!is_valid_tool_name(&"a".repeat(129)));
        assert!(!is_valid_tool_name(""));
        assert!(!is_valid_tool_name("café"));
        assert!(!is_valid_tool_name("a/b"));
        assert!(is_valid_property_name("a.b-c_D9"));
        assert!(is_valid_property_name(&"p".repeat(64)));
        assert!(!is_valid_property_name(&"p".repeat(65)));
        assert!(!is_valid_property_name("$ref"));
        // The reserved names are valid names: the manifest refuses them, as its own rule.
        assert!(is_valid_tool_name("mcpeye_request_capability"));
        assert!(is_valid_tool_name("mcpeye_send_feedback"));
        assert!(is_valid_property_name("mcpeyeIntent"));
    }

    #[test]
    fn intent_is_added_and_never_required() {
        let mut schema = json!({"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]});
        inject_intent(&mut schema);
        assert_eq!(
            schema["properties"][INTENT_PARAM_NAME],
            json!({"type": "string", "description": INTENT_PARAM_DESCRIPTION})
        );
        assert_eq!(schema["required"], json!(["q"]));

        let mut bare = json!({"type": "object", "required": ["mcpeyeIntent"]});
        inject_intent(&mut bare);
        assert_eq!(bare["properties"][INTENT_PARAM_NAME]["type"], "string");
        assert_eq!(bare["required"], json!([]));
    }

    #[test]
    fn pointer_escapes() {
        assert_eq!(pointer("", "a/b~c"), "/a~1b~0c");
        assert_eq!(pointer("/properties", "x"), "/properties/x");
    }
}
