//! `benches/cpu.rs` with mimalloc as the global allocator: how much of the total CPU per call
//! is the allocator's (the calling thread allocates each record, the flusher frees it).
//!
//! `cargo bench --bench cpu_mimalloc [-- N_BACK_TO_BACK N_PACED RATE_PER_S ROUNDS]`

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

include!("cpu.rs");
