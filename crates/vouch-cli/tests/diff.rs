//! `vouch diff`: the founding story's enum change, stored values, the JSON
//! object and every exit code.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod common;

use common::{scratch, text, vouch};
use serde_json::{json, Value};

const V1: &str = "examples/diff/plate.v1.json";
const V2: &str = "examples/diff/plate.v2.json";
const STORED: &str = "examples/diff/stored.jsonl";

#[test]
fn the_founding_story_names_the_documents_the_list_route_would_refuse() {
    let out = vouch(&["diff", V1, V2, "--values", STORED], None);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let shown = text(&out.stdout);
    assert!(shown.contains("\"legacy_upload\", \"legacy_generated\" removed from the enum at /plateSource"), "{shown}");
    assert!(shown.contains("12 lines, 12 accepted by OLD, 5 of them refused by NEW"), "{shown}");
    assert!(shown.contains("not_allowed at /plateSource  (lines 2, 3, 7, 10, 11)"), "{shown}");
    // The lines named are exactly the stored documents with a legacy member.
    let stored = std::fs::read_to_string(common::root().join(STORED)).unwrap();
    let legacy: Vec<usize> = stored
        .lines()
        .enumerate()
        .filter(|(_, l)| {
            serde_json::from_str::<Value>(l).unwrap()["plateSource"].as_str().unwrap().starts_with("legacy")
        })
        .map(|(i, _)| i + 1)
        .collect();
    assert_eq!(legacy, [2, 3, 7, 10, 11]);
}

#[test]
fn the_json_object_carries_each_change_its_witness_and_the_stored_counts() {
    let out = vouch(&["diff", V1, V2, "--values", STORED, "--json"], None);
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["outcome"], "breaking");
    assert_eq!(v["changes"][0]["kind"], "breaking");
    assert_eq!(v["changes"][0]["path"], "/plateSource");
    let witness = v["changes"][0]["witness"].as_str().unwrap();
    // The witness is what it claims: v1 accepts it, v2 refuses it.
    let w = scratch("witness.json", witness.as_bytes());
    assert_eq!(vouch(&["check", "-c", V1, w.to_str().unwrap()], None).status.code(), Some(0));
    assert_eq!(vouch(&["check", "-c", V2, w.to_str().unwrap()], None).status.code(), Some(1));
    assert_eq!(v["values"]["refused_by_new"], 5);
    assert_eq!(
        v["values"]["problems"][0],
        json!({"code": "not_allowed", "path": "/plateSource", "count": 5, "first_lines": [2, 3, 7, 10, 11]})
    );
}

#[test]
fn exit_codes_say_compatible_loosening_undecided_and_error() {
    // The other way round it only loosens: compatible, unless loosening must fail.
    let out = vouch(&["diff", V2, V1], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    assert!(text(&out.stdout).contains("loosening"));
    assert_eq!(vouch(&["diff", V2, V1, "--allow-loosening"], None).status.code(), Some(0));
    assert_eq!(vouch(&["diff", V2, V1, "--fail-on-loosening"], None).status.code(), Some(1));
    assert_eq!(vouch(&["diff", V1, V1], None).status.code(), Some(0));
    // A pattern that only widens cannot be shown to refuse anything, nor proved not to: 4.
    let narrow = scratch("narrow.json", br#"{"type": "string", "pattern": "^[a-z]+$"}"#);
    let wide = scratch("wide.json", br#"{"type": "string", "pattern": "^[a-z]*$"}"#);
    let out = vouch(&["diff", narrow.to_str().unwrap(), wide.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stdout));
    assert!(text(&out.stdout).contains("undecided"));
    // A contract that does not compile, or a values file that is not there: 2, naming it.
    let broken = scratch("broken.json", br#"{"type": "nope"}"#);
    let out = vouch(&["diff", V1, broken.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("broken.json"));
    let out = vouch(&["diff", V1, V2, "--values", "no/such/file.jsonl"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("no/such/file.jsonl"));
}

#[test]
fn stored_values_are_read_in_chunks_on_every_core() {
    // More lines than one chunk, and lines OLD refuses too (left out of the count).
    let mut lines = String::new();
    for i in 0..20_000 {
        let source = ["upload", "generated", "legacy_upload", "nonsense"][i % 4];
        lines.push_str(&format!(
            "{{\"templateId\": \"t{i}\", \"plateSource\": \"{source}\", \"productPresent\": false}}\n"
        ));
    }
    // A line that is not UTF-8, and one far past the contracts' byte limit: OLD refuses both.
    let mut bytes = lines.into_bytes();
    bytes.extend_from_slice(b"{\"templateId\": \"\xff\"}\n");
    bytes.extend_from_slice(format!("\"{}\"\n", "x".repeat(40 << 20)).as_bytes());
    let file = scratch("many.jsonl", &bytes);
    let out = vouch(&["diff", V1, V2, "--values", file.to_str().unwrap(), "--json"], None);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["values"]["lines"], 20_002);
    assert_eq!(v["values"]["refused_by_old"], 5_002);
    assert_eq!(v["values"]["refused_by_new"], 5_000);
    assert_eq!(v["values"]["problems"][0]["first_lines"], json!([3, 7, 11, 15, 19]));
}
