//! The runtime half of the shared contract: the table of cases in `mcpeye_contract::cases`
//! goes through `Manifest::builder().try_build()` with hand-written `ToolDef`s, and each verdict
//! (and message) must be the one `#[mcpeye::tool]` gives at compile time (the macro half is
//! `check::contract_cases` in `mcpeye-macros`).

use mcpeye::{Manifest, ManifestError};
use mcpeye_contract::cases::{
    Verdict, ARGUMENT_NAME_CASES, DESCRIPTION_CASES, ICON_CASES, PATTERN_CASES, TIMEOUT_CASES, TITLE_CASES,
    TOOL_NAME_CASES,
};
use mcpeye_contract::{
    argument_name_problem, icon_problem, pattern_problem, timeout_problem, tool_description_problem, tool_name_problem,
    tool_title_problem, Rule,
};
use mcpeye_runtime::__private::{ArgsError, BoxFuture, CallToolResult, Handler, Icon, Invocation, ToolDef};
use serde_json::{json, Value};
use std::cell::RefCell;
use std::time::Duration;

thread_local! {
    /// The input schema of the tool being built (`ToolDef::input_schema` is a plain `fn`).
    static SCHEMA: RefCell<Value> = const { RefCell::new(Value::Null) };
}

fn input_schema() -> schemars::Schema {
    SCHEMA.with(|s| schemars::Schema::try_from(s.borrow().clone()).expect("an object schema"))
}

fn handler(_: &Invocation<'_>, _: &mut Value) -> Result<CallToolResult, ArgsError> {
    Ok(CallToolResult::text("done"))
}

fn async_handler(_: &Invocation<'_>, _: &mut Value) -> Result<BoxFuture, ArgsError> {
    Ok(Box::pin(async { CallToolResult::text("done") }))
}

/// Builds a manifest of one tool, as `#[mcpeye::tool]` would define it.
fn build(name: &'static str, description: &'static str, properties: Value) -> Result<Manifest, ManifestError> {
    build_def(ToolDef::new(name, description, input_schema, Handler::Sync(handler)), properties)
}

fn build_def(def: ToolDef, properties: Value) -> Result<Manifest, ManifestError> {
    SCHEMA.with(|s| *s.borrow_mut() = json!({"type": "object", "properties": properties}));
    let def: &'static ToolDef =
        Box::leak(Box::new(ToolDef { rust_path: "contract_rules::tool", file: file!(), line: line!(), ..def }));
    Manifest::builder().tools([def]).capture_missing_capabilities(false).try_build()
}

fn tool() -> ToolDef {
    ToolDef::new("tool", "Does things.", input_schema, Handler::Sync(handler))
}

/// `Ok`: the manifest builds. `Refused(rule)`: exactly one problem, with that rule and the
/// contract's message (the words of the compile error).
fn assert_verdict(
    input: &str,
    expected: Verdict,
    built: Result<Manifest, ManifestError>,
    contract: Option<(Rule, String)>,
) {
    let shown: String = input.chars().take(40).collect();
    match (expected, built) {
        (Verdict::Ok, Ok(_)) => {}
        (Verdict::Ok, Err(e)) => panic!("{shown:?} should build: {e}"),
        (Verdict::Refused(rule), Ok(_)) => panic!("{shown:?} should be refused for {rule}"),
        (Verdict::Refused(rule), Err(e)) => {
            let (contract_rule, message) = contract.unwrap_or_else(|| panic!("the contract accepts {shown:?}"));
            assert_eq!(contract_rule, rule, "{shown:?}");
            let problems: Vec<(&str, &str)> = e.problems.iter().map(|p| (p.rule, p.message.as_str())).collect();
            assert_eq!(problems, [(rule.id(), message.as_str())], "{shown:?}");
        }
    }
}

fn text_property(description: &str) -> Value {
    json!({"type": "string", "description": description})
}

#[test]
fn tool_names() {
    for (name, verdict) in TOOL_NAME_CASES {
        let built = build(name, "Does things.", json!({}));
        assert_verdict(name, *verdict, built, tool_name_problem(name).map(|p| (p.rule(), p.to_string())));
    }
}

#[test]
fn argument_names() {
    for (name, verdict) in ARGUMENT_NAME_CASES {
        let built = build("tool", "Does things.", json!({ *name: text_property("A parameter.") }));
        let problem = argument_name_problem(name).map(|p| (p.rule(), p.to_string()));
        assert_verdict(name, *verdict, built, problem);
    }
}

#[test]
fn descriptions() {
    for (text, verdict) in DESCRIPTION_CASES {
        let built = build("tool", text, json!({}));
        assert_verdict(text, *verdict, built, tool_description_problem(text).map(|p| (p.rule(), p.to_string())));
    }
}

#[test]
fn patterns() {
    for (pattern, verdict) in PATTERN_CASES {
        let mut code = text_property("A code.");
        code["pattern"] = json!(pattern);
        let built = build("tool", "Does things.", json!({ "code": code }));
        assert_verdict(pattern, *verdict, built, pattern_problem(pattern).map(|p| (p.rule(), p.to_string())));
    }
}

#[test]
fn timeouts() {
    for ((ms, is_async), verdict) in TIMEOUT_CASES {
        let handler = if *is_async { Handler::Async(async_handler) } else { Handler::Sync(handler) };
        let def = ToolDef { timeout: Some(Duration::from_millis(*ms)), handler, ..tool() };
        let problem = timeout_problem(*ms, *is_async).map(|p| (p.rule(), p.to_string()));
        assert_verdict(&format!("{ms} ms"), *verdict, build_def(def, json!({})), problem);
    }
}

#[test]
fn icons() {
    for ((src, mime_type, theme), verdict) in ICON_CASES {
        let icon = Icon { src, mime_type: *mime_type, sizes: &[], theme: *theme };
        let def = ToolDef { icons: Box::leak(Box::new([icon])), ..tool() };
        let problem = icon_problem(src, *mime_type, *theme).map(|p| (p.rule(), p.to_string()));
        assert_verdict(src, *verdict, build_def(def, json!({})), problem);
    }
}

#[test]
fn titles() {
    for (title, verdict) in TITLE_CASES {
        let def = ToolDef { title: Some(title), ..tool() };
        let problem = tool_title_problem(title).map(|p| (p.rule(), p.to_string()));
        assert_verdict(title, *verdict, build_def(def, json!({})), problem);
    }
}
