//! What `#[mcpeye::tool]` generates, observed at runtime.

use mcpeye::{handwritten::Tool, State};
use mcpeye_runtime::__private::Handler;

#[derive(Debug, Clone, serde::Serialize)]
struct Product {
    name: String,
}

struct Catalog {
    products: Vec<Product>,
}

/// Search the product catalogue by free text.
///
/// Second paragraph kept,
/// over two lines.
#[mcpeye::tool(read_only)]
fn search_products(
    /// Words to look for in product names and descriptions.
    query: String,
    /// At most this many results (default 10).
    limit: Option<u32>,
    db: State<Catalog>,
) -> Result<Vec<Product>, String> {
    let hits: Vec<Product> = db.products.iter().filter(|p| p.name.contains(&query)).cloned().collect();
    if hits.is_empty() {
        return Err(format!("nothing matches {query}"));
    }
    Ok(hits.into_iter().take(limit.unwrap_or(10) as usize).collect())
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct RefundRequest {
    /// The order to refund.
    order_id: String,
}

#[mcpeye::tool(name = "refund", title = "Refund an order", destructive, idempotent, open_world = false, intent = false)]
/// Refund an order in full.
async fn refund_order(mcpeye::Args(req): mcpeye::Args<RefundRequest>) -> String {
    format!("refunded {}", req.order_id)
}

#[test]
fn def_fields() {
    let def = <search_products as Tool>::DEF;
    assert_eq!(def.name, "search_products");
    assert_eq!(<search_products as Tool>::NAME, "search_products");
    assert_eq!(
        def.description,
        "Search the product catalogue by free text.\n\nSecond paragraph kept,\nover two lines."
    );
    assert_eq!(def.title, None);
    assert_eq!(def.annotations.read_only, Some(true));
    assert_eq!(def.annotations.destructive, None);
    assert!(def.intent);
    assert_eq!(def.states.len(), 1);
    assert_eq!((def.states[0].type_id)(), std::any::TypeId::of::<Catalog>());
    assert!((def.states[0].type_name)().ends_with("Catalog"));
    assert!(matches!(def.handler, Handler::Sync(_)));
    assert!(def.rust_path.ends_with("macro_expand::search_products"), "{}", def.rust_path);
    assert!(def.file.ends_with("macro_expand.rs"));
    assert_eq!(def.line, 20);

    let def = <refund_order as Tool>::DEF;
    assert_eq!(def.name, "refund");
    assert_eq!(def.title, Some("Refund an order"));
    assert_eq!(def.description, "Refund an order in full.");
    assert_eq!(def.annotations.destructive, Some(true));
    assert_eq!(def.annotations.idempotent, Some(true));
    assert_eq!(def.annotations.open_world, Some(false));
    assert_eq!(def.annotations.read_only, None);
    assert!(!def.intent);
    assert!(def.states.is_empty());
    assert!(matches!(def.handler, Handler::Async(_)));
}

#[test]
fn function_is_callable_directly() {
    let db = State(std::sync::Arc::new(Catalog { products: vec![Product { name: "red mug".into() }] }));
    let hits = search_products("mug".into(), None, db.clone()).unwrap();
    assert_eq!(hits.len(), 1);
    assert!(search_products("tea".into(), Some(1), db).is_err());
}

#[test]
fn schema_has_documented_properties() {
    let schema = (<search_products as Tool>::DEF.input_schema)().to_value();
    let props = &schema["properties"];
    assert_eq!(props["query"]["description"], "Words to look for in product names and descriptions.");
    assert_eq!(props["limit"]["description"], "At most this many results (default 10).");
    assert!(props.get("db").is_none(), "state is not in the schema: {schema}");
    assert_eq!(schema["required"], serde_json::json!(["query"]));

    let schema = (<refund_order as Tool>::DEF.input_schema)().to_value();
    assert_eq!(schema["properties"]["order_id"]["description"], "The order to refund.");
}

#[test]
fn registered_in_inventory() {
    let names: Vec<&str> = mcpeye_runtime::__private::inventory::iter::<&'static mcpeye::handwritten::ToolDef>
        .into_iter()
        .map(|d| d.name)
        .collect();
    assert!(names.contains(&"search_products") && names.contains(&"refund"), "{names:?}");
}
