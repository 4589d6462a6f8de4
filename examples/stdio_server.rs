//! A real MCP server over stdio, built on a `mcpeye::Manifest`.
//!
//! ```text
//! MCPEYE_PROJECT_ID=demo MCPEYE_INGEST_URL=http://127.0.0.1:3001 cargo run --example stdio_server
//! ```
//!
//! With `MCPEYE_OUTBOX_DIR=/some/dir`, events not yet delivered are kept on disk there and sent
//! at the next start, also after the process was killed (`Config::outbox_dir`).
//!
//! One JSON-RPC 2.0 message per line on stdin and stdout. Stdout carries nothing but JSON-RPC
//! messages, also when the ingest is down or misconfigured: mcpeye's diagnostics go to stderr.

use mcpeye::server::{block_on, McpSession, ServerInfo};
use std::io::{BufRead, Write};
use std::sync::Arc;

/// Look up the weather forecast of a city (demo data).
#[mcpeye::tool(read_only)]
fn get_forecast(
    /// City name, e.g. "Lisbon".
    city: String,
    /// Number of days to forecast, 1 to 7 (default 3).
    days: Option<u8>,
) -> Result<String, String> {
    let days = days.unwrap_or(3);
    if !(1..=7).contains(&days) {
        return Err(format!("days must be between 1 and 7, got {days}"));
    }
    let city = city.trim();
    if city.is_empty() {
        return Err("city must not be empty".to_owned());
    }
    let mut out = format!("Forecast for {city}:");
    for d in 1..=days {
        out.push_str(&format!(
            "\n  day {d}: {}°C, {}",
            14 + (d * 3 + city.len() as u8) % 12,
            ["sunny", "cloudy", "rain"][(d as usize + city.len()) % 3]
        ));
    }
    Ok(out)
}

/// Convert a temperature between Celsius and Fahrenheit.
#[mcpeye::tool(read_only, idempotent)]
async fn convert_temperature(
    /// The temperature to convert.
    value: f64,
    /// The unit of `value`: "C" or "F".
    unit: String,
) -> Result<String, String> {
    match unit.as_str() {
        "C" | "c" => Ok(format!("{:.1}°F", value * 9.0 / 5.0 + 32.0)),
        "F" | "f" => Ok(format!("{:.1}°C", (value - 32.0) * 5.0 / 9.0)),
        _ => Err("unit must be \"C\" or \"F\"".to_owned()),
    }
}

fn main() {
    let project_id = std::env::var("MCPEYE_PROJECT_ID").unwrap_or_else(|_| "stdio-demo".to_owned());
    let mut config = mcpeye::Config::from_env(project_id);
    // Events not yet delivered survive a kill there, and are sent at the next start.
    if let Some(dir) = std::env::var_os("MCPEYE_OUTBOX_DIR").filter(|d| !d.is_empty()) {
        config = config.outbox_dir(dir);
    }
    // A bad configuration must not take the server down: it runs untracked and says why on stderr.
    let _guard = match mcpeye::init(config) {
        Ok(guard) => Some(guard),
        Err(e) => {
            eprintln!("[stdio_server] analytics disabled: {e}");
            None
        }
    };
    let manifest = Arc::new(mcpeye::tools![get_forecast, convert_temperature]);
    let info = ServerInfo {
        name: "mcpeye-stdio-demo".to_owned(),
        version: env!("CARGO_PKG_VERSION").to_owned(),
        instructions: None,
    };
    let session = McpSession::new(manifest, info);
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        if line.trim().is_empty() {
            continue;
        }
        if let Some(reply) = block_on(session.handle_line_async(&line)) {
            if writeln!(stdout, "{reply}").and_then(|_| stdout.flush()).is_err() {
                break;
            }
        }
    }
}
