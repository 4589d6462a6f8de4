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
    let mut report = serde_json::to_value(input.report()).unwrap();
    // What was skipped and where is new with the streaming report (nothing is, here).
    let skipped = report.as_object_mut().unwrap().remove("input").unwrap();
    assert_eq!(skipped, serde_json::json!({"skipped": {}, "places": [], "unreadFiles": [], "outOfOrder": 0}));
    // The findings and the feedback are new with issue 45: the first implementation had neither.
    report.as_object_mut().unwrap().shift_remove("findings");
    report.as_object_mut().unwrap().shift_remove("feedback");
    let json = serde_json::to_string_pretty(&report).unwrap() + "\n";
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(EXPECTED);
    if std::env::var_os("UPDATE_EXPECTED").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &json).unwrap();
    }
    let expected = std::fs::read_to_string(&path).unwrap();
    let diff: Vec<(usize, &str, &str)> = json
        .lines()
        .zip(expected.lines())
        .enumerate()
        .filter(|(_, (a, b))| a != b)
        .map(|(i, (a, b))| (i + 1, a, b))
        .take(20)
        .collect();
    assert!(json == expected, "the report differs from {EXPECTED} (line, now, expected): {diff:#?}");
}

#[test]
fn every_number_of_threads_gives_the_same_report_from_files() {
    let (logs, payloads) = common::generate(20_000, 3, 7);
    let dir = std::env::temp_dir().join(format!("mcpeye-report-threads-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    // Payloads named first: the event logs are still read before them.
    std::fs::write(dir.join("a-payloads.jsonl"), &payloads).unwrap();
    for (i, log) in logs.iter().enumerate() {
        std::fs::write(dir.join(format!("events-{i}.jsonl")), log).unwrap();
    }
    let report = |threads: usize| {
        let mut input = ReportInput::new();
        input.read_path(&dir).threads(threads);
        serde_json::to_string(&input.report()).unwrap()
    };
    let one = report(1);
    for threads in [2, 3, 8] {
        assert!(report(threads) == one, "{threads} threads");
    }
    // The same as the texts read in the order logs, then payloads.
    let mut input = ReportInput::new();
    for log in &logs {
        input.read_str(log);
    }
    input.read_str(&payloads).threads(1);
    assert!(serde_json::to_string(&input.report()).unwrap().replace("\"text\"", "") == one.replace("\"text\"", ""));
    std::fs::remove_dir_all(&dir).unwrap();
}
