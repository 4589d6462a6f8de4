//! Helpers shared by integration tests (`mod common;` in each test crate that needs them).

pub mod interop;
pub mod rmcp;
