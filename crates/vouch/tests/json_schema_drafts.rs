//! The JSON-Schema-Test-Suite of the earlier drafts (draft-04, -06, -07,
//! 2019-09), run in full: each group's schema is read in its draft (its
//! `$schema` named at the root, as the suite's runner would), and either
//! compiles and agrees with every case, or is refused at compile time.
//! Deliberate: vouch asserts `format` (docs/guarantees.md §7).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod common;

use serde_json::Value;
use vouch::Contract;

fn run(draft: &str, uri: &str) -> (usize, usize, usize, Vec<String>) {
    let Some(dir) = common::shared_dir(&format!("suites/json-schema-test-suite/drafts/{draft}")) else {
        return (0, 0, 0, Vec::new());
    };
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    let remotes = common::remotes(&dir.join("../remotes"));
    let (mut total, mut supported, mut deliberate) = (0, 0, 0);
    let mut mismatches = Vec::new();
    for file in &files {
        let name = file.file_stem().unwrap().to_string_lossy().to_string();
        let groups: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
        for group in &groups {
            total += 1;
            let mut schema = group["schema"].clone();
            if let Value::Object(m) = &mut schema {
                m.entry("$schema").or_insert_with(|| Value::String(uri.to_owned()));
            }
            let contract = match Contract::with_documents(schema, remotes.clone()) {
                Ok(c) => c,
                Err(e) => {
                    if std::env::var_os("VOUCH_SHOW_REFUSED").is_some() {
                        println!(
                            "unsupported: {draft} {name}: {}: {e}",
                            group["description"].as_str().unwrap_or_default()
                        );
                    }
                    continue;
                }
            };
            supported += 1;
            for case in group["tests"].as_array().unwrap() {
                let expected = case["valid"].as_bool().unwrap();
                let verdict = contract.check(serde_json::to_string(&case["data"]).unwrap());
                if verdict.is_accepted() == expected {
                    continue;
                }
                // vouch asserts `format` and `contentEncoding`, which the drafts make annotations.
                if (name == "format" || name == "content") && expected {
                    deliberate += 1;
                    continue;
                }
                mismatches.push(format!(
                    "{draft} {name}: {} / {}: expected valid={expected}, vouch {} ({:?})",
                    group["description"].as_str().unwrap_or_default(),
                    case["description"].as_str().unwrap_or_default(),
                    verdict.outcome(),
                    verdict.problems().first().map(|p| p.message.clone())
                ));
            }
        }
    }
    (total, supported, deliberate, mismatches)
}

#[test]
fn earlier_drafts() {
    let mut all = Vec::new();
    for (draft, uri, floor) in [
        ("draft4", "http://json-schema.org/draft-04/schema#", 157),
        ("draft6", "http://json-schema.org/draft-06/schema#", 228),
        ("draft7", "http://json-schema.org/draft-07/schema#", 248),
        ("draft2019-09", "https://json-schema.org/draft/2019-09/schema", 359),
    ] {
        let (total, supported, deliberate, mismatches) = run(draft, uri);
        assert!(total == 0 || supported >= floor, "{draft}: only {supported} groups supported, the floor is {floor}");
        common::figure(&format!(
            "{draft}: supported {supported}/{total} groups, mismatches {}, deliberate {deliberate}",
            mismatches.len()
        ));
        all.extend(mismatches);
    }
    for m in &all {
        common::figure(&format!("MISMATCH: {m}"));
    }
    assert!(all.is_empty(), "{} mismatches with the earlier drafts' suites", all.len());
}

/// The optional files about identifiers and references, in every draft that
/// has them: `$id`/`$anchor` inside `enum` or a non-schema are no
/// identifiers, `$dynamicRef` across resources, refs to unknown keywords,
/// cross-draft refs. Each group agrees with every case or is refused.
#[test]
fn optional_reference_files() {
    let Some(base) = common::shared_dir("suites/json-schema-test-suite") else { return };
    let (mut groups_seen, mut supported, mut mismatches) = (0, 0, Vec::new());
    for (dir, remotes, uri) in [
        ("optional", "remotes", None),
        ("drafts/draft4/optional", "drafts/remotes", Some("http://json-schema.org/draft-04/schema#")),
        ("drafts/draft6/optional", "drafts/remotes", Some("http://json-schema.org/draft-06/schema#")),
        ("drafts/draft7/optional", "drafts/remotes", Some("http://json-schema.org/draft-07/schema#")),
        ("drafts/draft2019-09/optional", "drafts/remotes", Some("https://json-schema.org/draft/2019-09/schema")),
    ] {
        let remotes = common::remotes(&base.join(remotes));
        for file in [
            "anchor.json",
            "dynamicRef.json",
            "id.json",
            "refOfUnknownKeyword.json",
            "cross-draft.json",
            "unknownKeyword.json",
        ] {
            let Ok(text) = std::fs::read_to_string(base.join(dir).join(file)) else { continue };
            let groups: Vec<Value> = serde_json::from_str(&text).unwrap();
            for group in &groups {
                groups_seen += 1;
                let mut schema = group["schema"].clone();
                if let (Some(uri), Value::Object(m)) = (uri, &mut schema) {
                    m.entry("$schema").or_insert_with(|| Value::String(uri.to_owned()));
                }
                let Ok(contract) = Contract::with_documents(schema, remotes.clone()) else { continue };
                supported += 1;
                for case in group["tests"].as_array().unwrap() {
                    let expected = case["valid"].as_bool().unwrap();
                    if contract.check(serde_json::to_string(&case["data"]).unwrap()).is_accepted() != expected {
                        mismatches.push(format!(
                            "{dir}/{file}: {} / {}",
                            group["description"].as_str().unwrap_or_default(),
                            case["description"].as_str().unwrap_or_default()
                        ));
                    }
                }
            }
        }
    }
    common::figure(&format!(
        "optional reference files: supported {supported}/{groups_seen} groups, mismatches {}",
        mismatches.len()
    ));
    assert!(mismatches.is_empty(), "{mismatches:#?}");
    assert!(groups_seen == 0 || supported >= 18, "only {supported} optional reference groups supported");
}
