//! Nothing: this package holds the first examples (`quickstart`, `intent_gap`) with their own,
//! small set of dependencies. Run them from the repository root with
//! `cargo run --example quickstart`.
