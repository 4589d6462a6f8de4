//! schemars settings that produce input schemas close to what MCP clients accept.

use schemars::generate::SchemaSettings;
use schemars::transform::{ReplaceBoolSchemas, RestrictFormats};
use schemars::Schema;

/// Generates the schema of `T` with the settings MCP clients need: JSON Schema 2020-12,
/// subschemas inlined (only recursive types keep a `$ref`), non-standard formats (`uint32`,
/// `double`, …) removed, boolean subschemas replaced by objects, and no root `$schema` or
/// `title`. Pass the result to [`super::normalize`] for the remaining fixes.
///
/// ```
/// #[derive(schemars::JsonSchema)]
/// struct Page {
///     /// Zero-based page number.
///     page: u32,
/// }
/// let schema = mcpeye::schema::generate::<Page>();
/// assert_eq!(schema.get("$schema"), None);
/// assert_eq!(schema.get("title"), None);
/// assert_eq!(schema.get("properties").unwrap()["page"].get("format"), None);
/// ```
pub fn generate<T: schemars::JsonSchema>() -> Schema {
    let settings = SchemaSettings::draft2020_12().with(|s| {
        s.inline_subschemas = true;
        // `RestrictFormats` reads the root `$schema` to know the standard formats, so the
        // meta-schema is kept during generation and removed by the last transform.
        s.transforms.push(Box::new(RestrictFormats::default()));
        let mut bools = ReplaceBoolSchemas::default();
        // `additionalProperties: false` (`deny_unknown_fields`) is understood everywhere; its
        // object form `{"not": {}}` is not.
        bools.skip_additional_properties = true;
        s.transforms.push(Box::new(bools));
        s.transforms.push(Box::new(strip_root_metadata as fn(&mut Schema)));
    });
    settings.into_generator().into_root_schema_for::<T>()
}

/// Generates the schema of `T` as JSON Schema 2020-12 as is: `$schema` kept, shared types in
/// `$defs` and referenced with `$ref`, only the root `title` removed. It is what
/// `#[mcpeye::tool(normalize_schema = false)]` serves: exact for clients that implement JSON
/// Schema 2020-12, but `$ref`/`$defs` are refused or misread by several clients (see the
/// README's "Schemas").
///
/// ```
/// #[derive(schemars::JsonSchema)]
/// struct Address {
///     /// Street and number.
///     street: String,
/// }
/// #[derive(schemars::JsonSchema)]
/// struct Order {
///     /// Where to deliver.
///     ship_to: Address,
/// }
/// let schema = mcpeye::schema::generate_as_is::<Order>().to_value();
/// assert_eq!(schema["$schema"], "https://json-schema.org/draft/2020-12/schema");
/// assert_eq!(schema["properties"]["ship_to"]["$ref"], "#/$defs/Address");
/// ```
pub fn generate_as_is<T: schemars::JsonSchema>() -> Schema {
    let settings = SchemaSettings::draft2020_12().with(|s| {
        s.transforms.push(Box::new(strip_root_title as fn(&mut Schema)));
    });
    settings.into_generator().into_root_schema_for::<T>()
}

/// [`generate`] for the struct of an `Args<T>` parameter, closed with `additionalProperties:
/// false` as the struct `#[mcpeye::tool]` makes of separate parameters is (`deny_unknown_fields`),
/// unless `T`'s schema sets `additionalProperties` itself (a flattened map, say). Deserialising
/// `T` still follows `T`'s own serde attributes.
///
/// ```
/// #[derive(schemars::JsonSchema)]
/// struct Query {
///     /// Words to look for.
///     words: String,
/// }
/// let schema = mcpeye::schema::generate_args::<Query>();
/// assert_eq!(schema.get("additionalProperties"), Some(&serde_json::json!(false)));
/// ```
pub fn generate_args<T: schemars::JsonSchema>() -> Schema {
    closed(generate::<T>())
}

/// [`generate_as_is`], closed as [`generate_args`] closes it.
///
/// ```
/// #[derive(schemars::JsonSchema)]
/// struct Query {
///     /// Words to look for.
///     words: String,
/// }
///
/// let schema = mcpeye::schema::generate_args_as_is::<Query>().to_value();
/// assert_eq!(schema["additionalProperties"], false);
/// assert!(schema.get("$schema").is_some());
/// ```
pub fn generate_args_as_is<T: schemars::JsonSchema>() -> Schema {
    closed(generate_as_is::<T>())
}

fn closed(mut schema: Schema) -> Schema {
    if let Some(root) = schema.as_object_mut() {
        let is_object = root.get("type").and_then(|t| t.as_str()) == Some("object");
        if is_object && !root.contains_key("additionalProperties") {
            root.insert("additionalProperties".to_owned(), false.into());
        }
    }
    schema
}

fn strip_root_title(schema: &mut Schema) {
    if let Some(root) = schema.as_object_mut() {
        root.shift_remove("title");
    }
}

fn strip_root_metadata(schema: &mut Schema) {
    if let Some(root) = schema.as_object_mut() {
        root.shift_remove("$schema");
        root.shift_remove("title");
    }
}
