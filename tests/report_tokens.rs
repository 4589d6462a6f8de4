//! The token report of a manifest (feature `tokens`): per-tool counts with a real BPE, the share
//! of `mcpeyeIntent`, the reserved tool, the budget assertion, and the two ways to cut the cost
//! (a shorter intent description, `intent = false`).

use mcpeye::contract::{INTENT_PARAM_DESCRIPTION, INTENT_PARAM_NAME, RESERVED_TOOL_NAME};
use mcpeye::report::count_tokens;
use mcpeye::testing::assert_token_budget;
use mcpeye::Manifest;

/// Search the product catalogue by free text; matches product names, case-insensitively.
#[mcpeye::tool(read_only)]
fn search_products(
    /// Words to look for in product names.
    query: String,
    /// At most this many results (default 10).
    limit: Option<u32>,
) -> String {
    format!("{query} {limit:?}")
}

/// Tell the shop's opening hours.
#[mcpeye::tool(read_only, intent = false)]
fn opening_hours() -> &'static str {
    "9 to 6"
}

fn builder() -> mcpeye::ManifestBuilder {
    Manifest::builder().tools(mcpeye::tool_defs![search_products, opening_hours])
}

#[test]
fn each_tool_is_counted_with_its_intent_share_and_the_reserved_tool() {
    let manifest = builder().build();
    let report = manifest.token_report();
    assert_eq!(report.encoding, "o200k_base");
    let names: Vec<&str> = report.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["opening_hours", "search_products"]);
    let search = report.tool("search_products").unwrap();
    let hours = report.tool("opening_hours").unwrap();
    assert_eq!(hours.intent, 0, "intent = false adds nothing");
    assert!(search.intent > count_tokens(INTENT_PARAM_DESCRIPTION), "{search:?}");
    assert!(search.input_schema > search.intent);
    assert_eq!(search.name_tokens, count_tokens("search_products"));
    assert_eq!(report.reserved.as_ref().unwrap().name, RESERVED_TOOL_NAME);
    // The total is the compact JSON of every descriptor of tools/list.
    let by_hand: usize = manifest.tools_list().as_array().unwrap().iter().map(|d| count_tokens(&d.to_string())).sum();
    assert_eq!(report.total(), by_hand);
    assert_eq!(report.to_json()["tools"][1]["intent"], search.intent);
}

#[test]
fn the_default_intent_text_is_the_contracts_and_a_shorter_one_costs_less() {
    let default = builder().build();
    let schema = &default.tools_list()[1]["inputSchema"]["properties"][INTENT_PARAM_NAME];
    assert_eq!(schema["description"], INTENT_PARAM_DESCRIPTION);
    let short = "Why the user needs this call; name any capability the tools lack.";
    let cheaper = builder().intent_description(short).build();
    assert_eq!(cheaper.tools_list()[1]["inputSchema"]["properties"][INTENT_PARAM_NAME]["description"], short);
    let (before, after) = (default.token_report(), cheaper.token_report());
    assert!(after.intent_total() < before.intent_total(), "{before}\n{after}");
    assert_eq!(before.total() - after.total(), before.intent_total() - after.intent_total());
}

#[test]
fn a_blank_intent_description_is_a_manifest_problem() {
    let err = builder().intent_description("  ").try_build().unwrap_err();
    assert_eq!(err.problems.len(), 1, "{err}");
    assert!(err.problems[0].message.contains("intent_description"), "{err}");
}

#[test]
fn the_budget_passes_under_and_fails_over_with_the_table() {
    let manifest = builder().build();
    let total = manifest.token_report().total();
    assert_token_budget(&manifest, total);
    let failure = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| assert_token_budget(&manifest, total - 1)))
        .unwrap_err();
    let message = failure.downcast_ref::<String>().unwrap();
    assert!(message.contains(&format!("over the budget of {}", total - 1)), "{message}");
    assert!(message.contains("search_products") && message.contains("(reserved)"), "{message}");
}
