//! The demo tools served by `stdio_server` and `http_server` (each includes this file with
//! `#[path]`), and the analytics set-up both share.

use mcpeye::{Config, Guard, Manifest};

/// Look up the weather forecast of a city (demo data).
#[mcpeye::tool(read_only)]
pub fn get_forecast(
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
pub async fn convert_temperature(
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

/// The next version of the server (`MCPEYE_DEMO_VERSION=2`): the forecast tool, described anew.
mod v2 {
    /// Look up the weather forecast of a city, day by day: temperature and sky (demo data).
    #[mcpeye::tool(read_only)]
    pub fn get_forecast(
        /// City name, e.g. "Lisbon".
        city: String,
        /// Number of days to forecast, 1 to 7 (default 3).
        days: Option<u8>,
    ) -> Result<String, String> {
        super::get_forecast(city, days)
    }

    /// List the weather alerts in force for a city (demo data: there are none).
    #[mcpeye::tool(read_only)]
    pub fn get_alerts(
        /// City name, e.g. "Lisbon".
        city: String,
    ) -> String {
        format!("No alerts for {}.", city.trim())
    }
}

/// Whether `MCPEYE_DEMO_VERSION=2` asks for the next version of the server: one description
/// changed, one tool added (what the report's versions and never-called sections show).
fn next_version() -> bool {
    std::env::var_os("MCPEYE_DEMO_VERSION").is_some_and(|v| v == "2")
}

/// The server's version for its `serverInfo`: `2.0.0` under `MCPEYE_DEMO_VERSION=2`.
#[allow(dead_code)] // only stdio_server follows MCPEYE_DEMO_VERSION
pub fn server_version() -> &'static str {
    if next_version() {
        "2.0.0"
    } else {
        env!("CARGO_PKG_VERSION")
    }
}

/// The two tools, with `mcpeyeIntent` and the reserved `mcpeye_request_capability`.
///
/// With `MCPEYE_DEMO_ATTRIBUTION=1`, the opt-in attribution arguments too
/// (`ManifestBuilder::conversations`, `ModelArgument::ReservedTool`: docs/attribution.md).
/// With `MCPEYE_DEMO_VERSION=2`, the next version: `get_forecast` described anew, and
/// `get_alerts`. With `MCPEYE_DEMO_FEEDBACK=1` (version 1), the opt-in feedback tool
/// `mcpeye_send_feedback` too (`ManifestBuilder::feedback`).
pub fn manifest() -> Manifest {
    if next_version() {
        return Manifest::builder()
            .tools(mcpeye::tool_defs![v2::get_forecast, convert_temperature, v2::get_alerts])
            .build();
    }
    if std::env::var_os("MCPEYE_DEMO_ATTRIBUTION").is_some_and(|v| v == "1") {
        return Manifest::builder()
            .tools(mcpeye::tool_defs![get_forecast, convert_temperature])
            .conversations(true)
            .model_argument(mcpeye::ModelArgument::ReservedTool)
            .build();
    }
    if std::env::var_os("MCPEYE_DEMO_FEEDBACK").is_some_and(|v| v == "1") {
        return Manifest::builder().tools(mcpeye::tool_defs![get_forecast, convert_temperature]).feedback(true).build();
    }
    mcpeye::tools![get_forecast, convert_temperature]
}

/// With `MCPEYE_DEMO_ATTRIBUTION_LOG=PATH`, a `before_send` that appends each event's tool,
/// model and session to PATH as JSON Lines and sends the event unchanged: what the wire does
/// not carry, for the interop tests to read (a stand-in for a real analytics hook).
fn attribution_log(config: Config) -> Config {
    use std::io::Write;
    let Some(path) = std::env::var_os("MCPEYE_DEMO_ATTRIBUTION_LOG").filter(|p| !p.is_empty()) else { return config };
    let file = std::sync::Mutex::new(std::fs::OpenOptions::new().create(true).append(true).open(path));
    config.before_send(move |event| {
        let line =
            serde_json::json!({"tool": &*event.tool_name, "model": event.model(), "session": event.session_id()});
        if let Ok(f) = &mut *file.lock().unwrap_or_else(|e| e.into_inner()) {
            let _ = writeln!(f, "{line}");
        }
        Some(event)
    })
}

/// Starts the pipeline from `MCPEYE_PROJECT_ID` (default `default_project`), `MCPEYE_INGEST_URL`,
/// `MCPEYE_INGEST_SECRET` and `MCPEYE_OUTBOX_DIR` (`Config::outbox_dir`, when set). A bad
/// configuration must not take the server down: it runs untracked and says why on stderr. Dropping the guard delivers what was captured, within
/// `Config::shutdown_timeout` (2 s by default).
#[allow(dead_code)] // http_server and axum_server configure their own (init_analytics_with)
pub fn init_analytics(example: &str, default_project: &str) -> Option<Guard> {
    init_analytics_with(example, default_project, |config| config)
}

/// Delivers what was captured (within 2 s, `Config::shutdown_timeout`'s default) and says on
/// stderr what became of every event: sent, dropped by reason, pending, kept on disk. Stderr
/// only: stdout is a stdio server's protocol channel.
#[allow(dead_code)] // axum_server lets its guard go when axum stops
pub fn shut_down(example: &str, guard: Option<Guard>) {
    if let Some(guard) = guard {
        let report = guard.shutdown(std::time::Duration::from_secs(2));
        eprintln!("[{example}] analytics at exit: {report}");
    }
}

/// Like [`init_analytics`], with `configure` applied to the configuration first.
#[allow(dead_code)] // only http_server and axum_server add to the configuration
pub fn init_analytics_with(
    example: &str,
    default_project: &str,
    configure: impl FnOnce(Config) -> Config,
) -> Option<Guard> {
    // `from_env` reads MCPEYE_PROJECT_ID (and the URL and secret) itself.
    let mut config = configure(Config::from_env(default_project));
    // Undelivered events survive a kill there, and are sent at the next start.
    if let Some(dir) = std::env::var_os("MCPEYE_OUTBOX_DIR").filter(|d| !d.is_empty()) {
        config = config.outbox_dir(dir);
    }
    let config = attribution_log(config);
    match mcpeye::init(config) {
        Ok(guard) => Some(guard),
        Err(e) => {
            eprintln!("[{example}] analytics disabled: {e}");
            None
        }
    }
}
