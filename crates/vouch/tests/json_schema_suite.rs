//! The JSON-Schema-Test-Suite (draft 2020-12), run in full.
//!
//! For each group either the schema compiles and every case's verdict equals
//! its `valid` flag, or compilation is refused. The one allowed difference:
//! vouch asserts `format`, where 2020-12 makes it an annotation, so cases of
//! format.json described as "only an annotation by default" are counted as
//! deliberate (see docs/guarantees.md).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod common;

use serde_json::Value;
use vouch::Contract;

#[test]
fn json_schema_test_suite() {
    let Some(dir) = common::shared_dir("suites/json-schema-test-suite/tests") else {
        return;
    };
    let remotes = common::remotes(&dir.join("../remotes"));
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let (mut total, mut supported, mut deliberate) = (0usize, 0usize, 0usize);
    let mut mismatches = Vec::new();
    let mut unsupported = Vec::new();
    for file in &files {
        let name = file.file_stem().unwrap().to_string_lossy().to_string();
        let groups: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
        for group in &groups {
            total += 1;
            let description = group["description"].as_str().unwrap_or_default();
            let contract = match Contract::with_documents(group["schema"].clone(), remotes.clone()) {
                Ok(c) => c,
                Err(e) => {
                    unsupported.push(format!("{name}: {description}: {e}"));
                    continue;
                }
            };
            supported += 1;
            for case in group["tests"].as_array().unwrap() {
                let expected = case["valid"].as_bool().unwrap();
                let raw = serde_json::to_string(&case["data"]).unwrap();
                let verdict = contract.check(&raw);
                let accepted = verdict.is_accepted();
                if accepted == expected {
                    continue;
                }
                let case_description = case["description"].as_str().unwrap_or_default();
                let asserted_annotation = (name == "format"
                    && case_description.contains("only an annotation by default"))
                    || name == "content";
                if expected && !accepted && asserted_annotation {
                    deliberate += 1;
                    continue;
                }
                mismatches.push(format!(
                    "{name}: {description} / {case_description}: expected valid={expected}, vouch {} ({:?})",
                    verdict.outcome(),
                    verdict.problems().first().map(|p| p.message.clone())
                ));
            }
        }
    }
    for u in &unsupported {
        println!("unsupported: {u}");
    }
    for m in &mismatches {
        println!("MISMATCH: {m}");
    }
    common::figure(&format!(
        "2020-12: supported {supported}/{total} groups, mismatches {}, deliberate {deliberate}",
        mismatches.len()
    ));
    assert!(mismatches.is_empty(), "{} mismatches with the suite", mismatches.len());
    assert_eq!(total, 383, "the suite should have 383 groups");
    assert!(supported >= 370, "only {supported} groups supported, the floor is 370");
}

/// The suite's optional regex files, every group and case: ECMA-262 regex
/// semantics (`\d` ASCII, `\w` ASCII, ECMA `\s`, `^`/`$` without multiline,
/// `\p{..}`, `\cX`) and astral characters as one code point.
#[test]
fn json_schema_test_suite_regex() {
    let Some(dir) = common::shared_dir("suites/json-schema-test-suite/optional") else {
        return;
    };
    for (file, figure) in [("ecmascript-regex.json", "ecmascript-regex"), ("non-bmp-regex.json", "non-bmp-regex")] {
        let groups: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(dir.join(file)).unwrap()).unwrap();
        let (mut cases, mut mismatches) = (0usize, Vec::new());
        for group in &groups {
            let description = group["description"].as_str().unwrap_or_default();
            let contract = match Contract::from_value(group["schema"].clone()) {
                Ok(c) => c,
                Err(e) => {
                    mismatches.push(format!("{description}: does not compile: {e}"));
                    continue;
                }
            };
            for case in group["tests"].as_array().unwrap() {
                cases += 1;
                let expected = case["valid"].as_bool().unwrap();
                let verdict = contract.check(serde_json::to_string(&case["data"]).unwrap());
                if verdict.is_accepted() != expected {
                    mismatches.push(format!(
                        "{description} / {}: expected valid={expected}",
                        case["description"].as_str().unwrap_or_default()
                    ));
                }
            }
        }
        for m in &mismatches {
            println!("MISMATCH: {m}");
        }
        common::figure(&format!("{figure}: {} groups, {cases} cases, mismatches {}", groups.len(), mismatches.len()));
        assert!(mismatches.is_empty(), "{file}: {mismatches:#?}");
    }
}
