//! Input schemas: generation settings, normalisation into the shape every MCP client accepts,
//! intent injection, and the validation done when a manifest is built.
//!
//! (Interface stub: the full implementation lands with the schema work.)

use serde_json::Value;

/// One problem found in a tool's input schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaProblem {
    /// JSON path inside the input schema (`/properties/limit`), `""` for the root.
    pub path: String,
    /// Short rule name (`no-ref`, `missing-description`, …).
    pub rule: &'static str,
    /// What is wrong and how to fix it.
    pub message: String,
}

/// Generates the schema of `T` with the settings MCP clients need.
pub fn generate<T: schemars::JsonSchema>() -> schemars::Schema {
    schemars::SchemaGenerator::default().into_root_schema_for::<T>()
}

/// Normalises a generated schema (inline, no `$schema`/`title`, no `["T","null"]`…).
pub fn normalize(schema: schemars::Schema) -> Value {
    schema.to_value()
}

/// Every problem of a normalised input schema.
pub fn validate(_schema: &Value) -> Vec<SchemaProblem> {
    Vec::new()
}

/// Describes why `args` do not fit `schema`, one line per problem naming a JSON path and never
/// the value. Only called once deserialisation has failed.
pub fn describe_argument_errors(_schema: &Value, _args: &Value) -> Vec<String> {
    Vec::new()
}

/// Adds the optional `mcpeyeIntent` property to an object schema.
pub fn inject_intent(schema: &mut Value) {
    if let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut) {
        props.insert(
            crate::contract::INTENT_PARAM_NAME.to_owned(),
            serde_json::json!({"type": "string", "description": crate::contract::INTENT_PARAM_DESCRIPTION}),
        );
    }
}
