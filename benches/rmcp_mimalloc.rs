//! `benches/rmcp.rs` with mimalloc as the global allocator: how much of what mcpeye adds to an
//! rmcp call is the allocator's (rmcp makes ~280 allocations per call; glibc's bins consolidate
//! differently as soon as anything else allocates).
//!
//! `cargo bench --bench rmcp_mimalloc [-- N WARM_UP ROUNDS]`

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

include!("rmcp.rs");
