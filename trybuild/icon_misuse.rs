/// Plain HTTP.
#[mcpeye::tool(icon = "http://example.com/icon.png")]
fn insecure() {}

/// A theme MCP does not know, and a MIME type that is not an image.
#[mcpeye::tool(
    icon(src = "https://example.com/a.png", theme = "blue"),
    icon(src = "https://example.com/b.png", mime_type = "text/html")
)]
fn themed() {}

/// `icon(…)` without a source, with a key it does not know.
#[mcpeye::tool(icon(mime_type = "image/png", size = "48x48"))]
fn no_source() {}

fn main() {}
