use mcpeye::State;

struct Catalog {
    names: Vec<String>,
}

#[derive(Debug)]
struct CatalogError;

impl std::fmt::Display for CatalogError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("catalog unavailable")
    }
}

/// Search the catalogue.
#[mcpeye::tool(read_only, open_world = false)]
fn search(
    /// Words to look for.
    #[schemars(length(min = 1))]
    query: String,
    /// At most this many results.
    #[schemars(range(min = 1, max = 100))]
    limit: Option<u32>,
    /// Documented state is allowed: the doc is for readers of the code.
    db: State<Catalog>,
    cache: mcpeye::State<u64>,
) -> Result<Vec<String>, CatalogError> {
    let _ = *cache;
    Ok(db.names.iter().filter(|n| n.contains(&query)).take(limit.unwrap_or(10) as usize).cloned().collect())
}

fn main() {
    let db = State(std::sync::Arc::new(Catalog { names: vec!["mug".into()] }));
    let r = search("mug".into(), None, db, State(std::sync::Arc::new(1)));
    assert_eq!(r.unwrap(), vec!["mug".to_owned()]);
    let _ = <search as mcpeye::handwritten::Tool>::DEF;
}
