//! `vouch batch`: order, carried fields, input errors, summary, exit codes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod common;

use common::{scratch, text, vouch};
use serde_json::{json, Value};

const PLATE: &str = "examples/contracts/plate.json";
const OK: &str = r#"{"productPresent":false,"productTextPresent":false,"garbledText":false}"#;

fn lines(out: &[u8]) -> Vec<Value> {
    text(out).lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[test]
fn one_verdict_per_line_in_input_order_with_fields_carried() {
    let mut input = String::new();
    for i in 0..5000 {
        let raw = if i % 3 == 0 { "{}".to_owned() } else { OK.to_owned() };
        input.push_str(&json!({"id": format!("r{i}"), "raw": raw}).to_string());
        input.push('\n');
    }
    let out = vouch(&["batch", "-c", PLATE, "-q", "--threads", "2"], Some(input.as_bytes()));
    assert_eq!(out.status.code(), Some(1), "some refused: {}", text(&out.stderr));
    let got = lines(&out.stdout);
    assert_eq!(got.len(), 5000);
    for (i, line) in got.iter().enumerate() {
        assert_eq!(line["line"], json!(i + 1));
        assert_eq!(line["id"], json!(format!("r{i}")));
        assert!(line.get("raw").is_none(), "the raw field is not repeated");
        let want = if i % 3 == 0 { "refused" } else { "accepted" };
        assert_eq!(line["verdict"]["outcome"], json!(want), "line {}", i + 1);
    }
    let summary = text(&out.stderr);
    assert!(
        summary.contains("5000 lines: 3333 accepted (0 repaired, 0 with findings), 1667 refused, 0 input errors"),
        "{summary}"
    );
    assert!(summary.contains("refused missing              1667"), "{summary}");
    assert!(summary.contains("lines/s"), "{summary}");
}

#[test]
fn strings_and_a_named_field() {
    let input = format!("{}\n{}\n", json!(OK), json!({"reply": OK, "n": 2}));
    let out = vouch(&["batch", "-c", PLATE, "--field", "reply", "-q"], Some(input.as_bytes()));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let got = lines(&out.stdout);
    assert_eq!(got[0]["verdict"]["pass"], json!(true));
    assert_eq!(got[1]["n"], json!(2));
}

#[test]
fn broken_lines_are_reported_and_processing_goes_on() {
    let input = format!("{}\nnot json\n{}\n[1]\n{}\n\u{0}\n", json!(OK), json!({"id": 1}), json!({"raw": 5}));
    let mut bytes = input.into_bytes();
    bytes.extend_from_slice(b"\xff\xfe\n");
    bytes.extend_from_slice(json!(OK).to_string().as_bytes());
    let out = vouch(&["batch", "-c", PLATE, "-q"], Some(&bytes));
    assert_eq!(out.status.code(), Some(4), "broken input lines exit 4");
    let got = lines(&out.stdout);
    assert_eq!(got.len(), 8, "every line, even the last without a newline");
    let errors: Vec<(u64, String)> =
        got.iter().filter_map(|l| Some((l["line"].as_u64()?, l.get("input_error")?.as_str()?.to_owned()))).collect();
    assert_eq!(errors.iter().map(|(n, _)| *n).collect::<Vec<_>>(), [2, 3, 4, 5, 6, 7]);
    assert!(errors[1].1.contains("no field \"raw\""), "{:?}", errors);
    assert!(errors[3].1.contains("\"raw\" is not a string"), "{:?}", errors);
    assert!(errors[5].1.contains("not UTF-8"), "{:?}", errors);
    assert_eq!(got[7]["verdict"]["pass"], json!(true));
    assert!(text(&out.stderr).contains("6 input errors"));
}

#[test]
fn summary_only_as_json() {
    let repaired = r#"{"verdict":"eligible","matchScore":"80","summary":"ok","criteria":[],"recommendations":[]}"#;
    let finding = r#"{"productPresent":true,"productTextPresent":false,"garbledText":false}"#;
    let input = format!("{}\n{}\n", json!(OK), json!(finding));
    let out = vouch(&["batch", "-c", PLATE, "--summary-only", "--json"], Some(input.as_bytes()));
    assert_eq!(out.status.code(), Some(3), "a finding but no refusal exits 3");
    let s: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((s["lines"].clone(), s["accepted"].clone(), s["with_findings"].clone()), (json!(2), json!(2), json!(1)));
    assert!(s["lines_per_second"].as_f64().unwrap() > 0.0);
    let out = vouch(
        &["batch", "-c", "examples/contracts/eligibility.json", "--summary-only", "--json"],
        Some(format!("{}\n", json!(repaired)).as_bytes()),
    );
    let s: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(s["repaired"], json!(1));
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn out_file_and_file_input() {
    let input = scratch("batch-in.jsonl", format!("{}\n{}\n", json!(OK), json!("{}")).as_bytes());
    let out_path = input.with_file_name("batch-out.jsonl");
    let out = vouch(&["batch", "-c", PLATE, input.to_str().unwrap(), "--out", out_path.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let got = lines(&std::fs::read(&out_path).unwrap());
    assert_eq!(got[1]["verdict"]["problems"][0]["code"], json!("missing"));
    let missing = vouch(&["batch", "-c", PLATE, "no/such/input.jsonl"], None);
    assert_eq!(missing.status.code(), Some(2));
}

#[test]
fn human_summary() {
    let input = format!("{}\n{}\n{}\nbroken\n", json!(OK), json!("{}"), json!("```json\n{}\n```"));
    let out = vouch(&["batch", "-c", PLATE, "--summary-only"], Some(input.as_bytes()));
    // The last line holds the timing, which varies.
    let summary: Vec<&str> = std::str::from_utf8(&out.stdout).unwrap().lines().collect();
    insta::assert_snapshot!("batch_summary", summary[..summary.len() - 1].join("\n"));
    assert!(summary.last().unwrap().contains("lines/s"));
}
