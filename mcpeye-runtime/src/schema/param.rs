//! The two requirements of a tool parameter's type, one trait each, so that `#[mcpeye::tool]`'s
//! compile error says which derive is missing instead of listing every type that has it.

/// A tool parameter's type deserialises from the call's JSON arguments: implemented for every
/// `serde::de::DeserializeOwned` type. `#[mcpeye::tool]` checks it on each parameter's type,
/// so a type without `#[derive(serde::Deserialize)]` is an error on that type saying so.
///
/// ```
/// fn is_param<T: mcpeye::schema::ParamDeserialize>() {}
/// is_param::<Vec<String>>();
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool parameter: it does not implement `serde::Deserialize`",
    label = "not `Deserialize`",
    note = "add `#[derive(serde::Deserialize)]` to the type (a parameter also needs `schemars::JsonSchema`)"
)]
pub trait ParamDeserialize {
    /// What the check of `#[mcpeye::tool]` names: the check is that the impl exists.
    const OK: bool = true;
}

// Not recommended: rustc reports `ParamDeserialize`'s message, not serde's list of implementors.
#[diagnostic::do_not_recommend]
impl<T: serde::de::DeserializeOwned> ParamDeserialize for T {}

/// A tool parameter's type describes itself in the tool's input schema: implemented for every
/// `schemars::JsonSchema` type. `#[mcpeye::tool]` checks it on each parameter's type, so a
/// type without `#[derive(schemars::JsonSchema)]` is an error on that type saying so.
///
/// ```
/// fn is_param<T: mcpeye::schema::ParamSchema>() {}
/// is_param::<Vec<String>>();
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool parameter: it does not implement `schemars::JsonSchema`",
    label = "not `JsonSchema`",
    note = "add `#[derive(schemars::JsonSchema)]` to the type; its `///` docs become the schema's descriptions"
)]
pub trait ParamSchema {
    /// What the check of `#[mcpeye::tool]` names: the check is that the impl exists.
    const OK: bool = true;
}

// Not recommended: rustc reports `ParamSchema`'s message, not schemars's list of implementors.
#[diagnostic::do_not_recommend]
impl<T: schemars::JsonSchema> ParamSchema for T {}
