//! Attribute values of a tool beyond its name and description: the title, the per-call timeout
//! and the icons (MCP 2025-11-25).

use crate::{Rule, MAX_TIMEOUT_MS};
use std::fmt;

/// Why a tool title is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TitleProblem {
    /// The title is empty or only whitespace.
    Empty,
}

impl TitleProblem {
    /// The rule broken: [`Rule::EmptyTitle`].
    pub fn rule(&self) -> Rule {
        Rule::EmptyTitle
    }
}

impl fmt::Display for TitleProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the title is empty: give a short human-readable title or remove `title`")
    }
}

impl std::error::Error for TitleProblem {}

/// Checks a tool title (`title = "…"`): not blank.
///
/// ```
/// use mcpeye_contract::tool_title_problem;
///
/// assert_eq!(tool_title_problem("Search products"), None);
/// assert!(tool_title_problem(" ").is_some());
/// ```
pub fn tool_title_problem(title: &str) -> Option<TitleProblem> {
    title.trim().is_empty().then_some(TitleProblem::Empty)
}

/// Why a per-call timeout (`timeout_ms = …`) is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TimeoutProblem {
    /// `timeout_ms = 0`: every call would time out.
    Zero,
    /// Over [`MAX_TIMEOUT_MS`].
    TooLong {
        /// The timeout given, in milliseconds.
        ms: u64,
    },
    /// The tool is a plain `fn`: a running synchronous call cannot be interrupted.
    SyncTool,
}

impl TimeoutProblem {
    /// The rule broken: [`Rule::InvalidTimeout`].
    pub fn rule(&self) -> Rule {
        Rule::InvalidTimeout
    }
}

impl fmt::Display for TimeoutProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TimeoutProblem::Zero => f.write_str(
                "`timeout_ms = 0` would time out every call: give the longest a call may take, in milliseconds",
            ),
            TimeoutProblem::TooLong { ms } => write!(
                f,
                "`timeout_ms = {ms}` is over the {MAX_TIMEOUT_MS} ms (24 h) limit: give a shorter timeout or remove it"
            ),
            TimeoutProblem::SyncTool => f.write_str(
                "`timeout_ms` needs an `async fn`: a plain `fn` cannot be interrupted once it runs; make the tool \
                 async, or check `Context::is_cancelled` in the loop and remove `timeout_ms`",
            ),
        }
    }
}

impl std::error::Error for TimeoutProblem {}

/// Checks a per-call timeout: 1 to [`MAX_TIMEOUT_MS`] milliseconds, on an async tool (an async
/// call is cancelled when it runs out of time; a synchronous one cannot be).
///
/// ```
/// use mcpeye_contract::{timeout_problem, TimeoutProblem};
///
/// assert_eq!(timeout_problem(5_000, true), None);
/// assert_eq!(timeout_problem(0, true), Some(TimeoutProblem::Zero));
/// assert_eq!(timeout_problem(5_000, false), Some(TimeoutProblem::SyncTool));
/// ```
pub fn timeout_problem(ms: u64, is_async: bool) -> Option<TimeoutProblem> {
    if ms == 0 {
        Some(TimeoutProblem::Zero)
    } else if ms > MAX_TIMEOUT_MS {
        Some(TimeoutProblem::TooLong { ms })
    } else if !is_async {
        Some(TimeoutProblem::SyncTool)
    } else {
        None
    }
}

/// Why a tool icon is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IconProblem {
    /// `src` is neither an `https://` URL nor a `data:image/…` URI.
    Source {
        /// The source given (cut to 64 characters).
        src: String,
    },
    /// `mime_type` is not an `image/…` type.
    MimeType {
        /// The MIME type given.
        mime_type: String,
    },
    /// `theme` is neither `light` nor `dark`.
    Theme {
        /// The theme given.
        theme: String,
    },
}

impl IconProblem {
    /// The rule broken: [`Rule::InvalidIcon`].
    pub fn rule(&self) -> Rule {
        Rule::InvalidIcon
    }
}

impl fmt::Display for IconProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IconProblem::Source { src } => write!(
                f,
                "the icon source `{src}` is neither an `https://` URL nor a `data:image/…` URI: clients fetch icons \
                 only from those (MCP 2025-11-25)"
            ),
            IconProblem::MimeType { mime_type } => {
                write!(f, "the icon MIME type `{mime_type}` is not an image type: use `image/png`, `image/svg+xml`, …")
            }
            IconProblem::Theme { theme } => {
                write!(f, "the icon theme `{theme}` is unknown: MCP knows `light` and `dark`; remove it for both")
            }
        }
    }
}

impl std::error::Error for IconProblem {}

/// Checks an icon of a tool (`icon = "…"` or `icon(src = "…", mime_type = "…", theme = "…")`):
/// its source is an `https://` URL or a `data:image/…` URI, its MIME type (when given) an
/// `image/…` type, its theme (when given) `light` or `dark`.
///
/// ```
/// use mcpeye_contract::icon_problem;
///
/// assert_eq!(icon_problem("https://example.com/search.svg", Some("image/svg+xml"), Some("dark")), None);
/// assert!(icon_problem("http://example.com/a.png", None, None).is_some());
/// assert!(icon_problem("https://example.com/a.png", None, Some("blue")).is_some());
/// ```
pub fn icon_problem(src: &str, mime_type: Option<&str>, theme: Option<&str>) -> Option<IconProblem> {
    let https =
        src.strip_prefix("https://").is_some_and(|rest| !rest.is_empty() && !rest.contains(char::is_whitespace));
    if !https && !src.starts_with("data:image/") {
        return Some(IconProblem::Source { src: src.chars().take(64).collect() });
    }
    if let Some(m) = mime_type {
        if m.strip_prefix("image/").is_none_or(str::is_empty) {
            return Some(IconProblem::MimeType { mime_type: m.to_owned() });
        }
    }
    match theme {
        None | Some("light" | "dark") => None,
        Some(t) => Some(IconProblem::Theme { theme: t.to_owned() }),
    }
}
