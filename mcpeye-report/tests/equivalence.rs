//! The streaming report gives, on a generated input of several event logs and a payload file,
//! exactly the JSON the first implementation (every call kept in memory, then sorted) gave; the
//! expected file was written by that implementation (`UPDATE_EXPECTED=1` rewrites it).

mod common;

use mcpeye_report::ReportInput;

const EXPECTED: &str = "tests/fixtures/generated_report.json";

#[test]
fn a_generated_input_gives_the_report_of_the_first_implementation() {
    let (logs, payloads) = common::generate(6_000, 3, 44);
    let mut input = ReportInput::new();
    for log in &logs {
        input.read_str(log);
    }
    input.read_str(&payloads);
    let json = serde_json::to_string_pretty(&input.report()).unwrap() + "\n";
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(EXPECTED);
    if std::env::var_os("UPDATE_EXPECTED").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &json).unwrap();
    }
    let expected = std::fs::read_to_string(&path).unwrap();
    assert!(json == expected, "the report differs from {EXPECTED}:\n{json}");
}
