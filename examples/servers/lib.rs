//! Nothing: this package holds the serving examples with the dependencies a server adds (see
//! `Cargo.toml`). Run them with `cargo run -p mcpeye-servers --example NAME`.
