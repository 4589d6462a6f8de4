//! Helpers shared by mcpeye-cli's integration tests (`mod common;` in each that needs them).

use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Lines received until one contains `needle` (or 30 s pass).
pub fn until(lines: &mpsc::Receiver<String>, needle: &str) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut seen = Vec::new();
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        match lines.recv_timeout(left) {
            Ok(line) => {
                let done = line.contains(needle);
                seen.push(line);
                if done {
                    break;
                }
            }
            Err(_) => break,
        }
    }
    seen
}
