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
fn a_null_reply_is_the_model_not_answering_refused_with_its_id() {
    // As a null reply is in the Spark and Dask verdict columns: refused, not a broken line.
    let input = format!("{}\n{}\n", json!({"id": "a", "raw": null}), json!({"id": "b", "raw": OK}));
    let out = vouch(&["batch", "-c", PLATE, "-q"], Some(input.as_bytes()));
    assert_eq!(out.status.code(), Some(1), "refused, not broken: {}", text(&out.stderr));
    let got = lines(&out.stdout);
    assert_eq!(got[0]["id"], json!("a"));
    assert_eq!(got[0]["verdict"]["outcome"], json!("refused"));
    assert_eq!(got[0]["verdict"]["problems"][0]["code"], json!("empty_reply"));
    assert_eq!(got[0]["verdict"]["problems"][0]["class"], json!("no_answer"));
    assert_eq!(got[1]["verdict"]["pass"], json!(true));
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
    // Worded as `vouch check` words a reply that is not UTF-8.
    assert_eq!(errors[5].1, "line 7: (root): not JSON: invalid UTF-8 at line 1, column 1", "{:?}", errors);
    assert!(errors[0].1.starts_with("line 2: (root): not JSON: "), "{:?}", errors);
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

/// Each line is read as strictly as a reply: a repeated key is an input
/// error with the line number and the key's path, never resolved to the
/// last one.
#[test]
fn repeated_keys_in_a_line_are_input_errors() {
    let two_raws = format!(r#"{{"raw": {}, "raw": "{{}}"}}"#, json!(OK));
    let two_ids = format!(r#"{{"id": 1, "raw": {}, "id": 2}}"#, json!(OK));
    let nested = format!(r#"{{"meta": {{"a": 1, "\u0061": 2}}, "raw": {}}}"#, json!(OK));
    let input = format!("{}\n{two_raws}\n{two_ids}\n{nested}\n{}\n", json!(OK), json!({"raw": OK, "id": 3}));
    let out = vouch(&["batch", "-c", PLATE, "-q"], Some(input.as_bytes()));
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));
    let got = lines(&out.stdout);
    assert_eq!(got.len(), 5);
    assert_eq!(got[0]["verdict"]["pass"], json!(true));
    let error = |i: usize| got[i]["input_error"].as_str().unwrap_or_default().to_owned();
    assert!(error(1).starts_with("line 2: /raw: "), "{}", error(1));
    assert!(
        error(1).contains("duplicate") || error(1).contains("twice") || error(1).contains("repeat"),
        "{}",
        error(1)
    );
    assert!(error(2).starts_with("line 3: /id: "), "{}", error(2));
    assert!(error(3).starts_with("line 4: /meta/a: "), "{}", error(3));
    assert!(got[1].get("verdict").is_none());
    assert_eq!(got[4]["id"], json!(3));
    assert_eq!(got[4]["verdict"]["pass"], json!(true));
}

/// A line longer than twice the contract's `max_bytes` plus 1 KiB is an
/// input error with its number, skipped without being kept; the lines
/// around it get their verdicts, in order.
#[test]
fn an_over_long_line_is_skipped_and_the_run_goes_on() {
    let contract = scratch(
        "small-limit.json",
        br#"{"type": "object", "required": ["a"], "x-vouch": {"limits": {"max_bytes": 100}}}"#,
    );
    let contract = contract.to_str().unwrap();
    // The limit is 2 * 100 + 1024 = 1224 bytes.
    let good = json!({"raw": r#"{"a": 1}"#}).to_string();
    let at_limit = json!({"raw": "x".repeat(1224 - 10)}).to_string();
    assert_eq!(at_limit.len(), 1224);
    let long = json!({"raw": "x".repeat(5_000_000)}).to_string();
    let input = format!("{good}\n{long}\n{good}\n{at_limit}\n{long}\r\n{good}\n{long}");
    let out = vouch(&["batch", "-c", contract, "-q"], Some(input.as_bytes()));
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));
    let got = lines(&out.stdout);
    assert_eq!(got.len(), 7);
    for (i, line) in got.iter().enumerate() {
        assert_eq!(line["line"], json!(i + 1));
    }
    for i in [0, 2, 5] {
        assert_eq!(got[i]["verdict"]["outcome"], json!("accepted"), "line {}", i + 1);
    }
    // A line within the limit holding a reply over `max_bytes`: the core's refusal, after
    // what was certain within the limit (`x` is no JSON).
    assert_eq!(got[3]["verdict"]["problems"][0]["code"], json!("not_json"));
    assert_eq!(got[3]["verdict"]["problems"][1]["code"], json!("too_large"));
    for i in [1, 4, 6] {
        let e = got[i]["input_error"].as_str().unwrap();
        let want = format!(
            "line {}: (root): the line is {} bytes, over the limit of 1224 (twice the contract's max_bytes, plus 1024)",
            i + 1,
            long.len() + usize::from(i == 4)
        );
        assert_eq!(e, want);
    }
    assert!(text(&out.stderr).contains("7 lines: 3 accepted (0 repaired, 0 with findings), 1 refused, 3 input errors"));
}

/// The output line is written straight from the verdict (no tree): carried
/// fields in their order, a carried `line` or `verdict` replaced in its
/// place, the value exactly as `vouch check --json` gives it.
#[test]
fn output_lines_are_written_from_the_vouched_text_in_order() {
    let raw = "{\n  \"productPresent\": false, \"productTextPresent\": false,\n  \"garbledText\": false}";
    let input = format!("{}\n", json!({"verdict": "old", "id": "a\u{e9}", "raw": raw, "line": "x", "n": 1.50}));
    let out = vouch(&["batch", "-c", PLATE, "-q"], Some(input.as_bytes()));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let check = vouch(&["check", "-c", PLATE, "--json"], Some(raw.as_bytes()));
    let verdict: Value = serde_json::from_str(&text(&check.stdout)).unwrap();
    let want = format!("{{\"verdict\":{},\"id\":\"a\u{e9}\",\"line\":1,\"n\":1.5}}\n", vouch::to_json_string(&verdict));
    assert_eq!(text(&out.stdout), want);
}
