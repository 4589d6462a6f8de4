#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

pub use mcpeye_macros::{tool, tool_defs, tools};
pub use mcpeye_runtime::*;

#[doc(hidden)]
pub use mcpeye_runtime::__private;
