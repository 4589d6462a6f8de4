struct Report {
    total: u32,
}

/// Raw pointer.
#[mcpeye::tool]
fn pointer() -> *const u8 {
    std::ptr::null()
}

/// Not Serialize.
#[mcpeye::tool]
fn report() -> Result<Report, String> {
    Ok(Report { total: 1 })
}

/// Error not Display.
#[mcpeye::tool]
fn failing() -> Result<u32, Report> {
    Err(Report { total: 2 })
}

/// Opaque.
#[mcpeye::tool]
fn opaque() -> impl std::fmt::Debug {
    5
}

fn main() {
    let _ = Report { total: 0 }.total;
}
