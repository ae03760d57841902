//! Fuzzing regressions (see fuzz/README.md).
//!
//! The committed fuzz seed corpus for the `check` target (fuzz/seeds/check:
//! JSONTestSuite files, the bundled example replies and hand-made replies)
//! and for `repair_roundtrip` is replayed through the example contracts with
//! the fuzz targets' properties: no panic, and a value once accepted is a
//! fixed point, accepted again unchanged with no repairs, both as compact
//! JSON text and as a value.
//!
//! Inputs the fuzzers found to break a property are kept, minimized, under
//! tests/fuzz_cases/ and replayed by the tests at the end of this file.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use std::path::PathBuf;

mod common;

use vouch::Contract;

const PLATE: &str = include_str!("../../../examples/contracts/plate.json");
const ELIGIBILITY: &str = include_str!("../../../examples/contracts/eligibility.json");

fn seeds(target: &str) -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds").join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

/// The fuzz targets' property for one reply; returns whether it was accepted.
fn check_and_recheck(name: &str, contract: &Contract, raw: &[u8], what: &str) -> bool {
    let verdict = contract.check(raw);
    let full = common::expected_verdict(contract, raw);
    assert_eq!(verdict.to_json(), full.to_json(), "{what} {name}: the single pass and the full path disagree");
    // Rendering builds excerpts and positions from the reply: it must not panic either.
    let _ = serde_json::to_string(&verdict.to_json()).unwrap();
    for p in verdict.problems() {
        let _ = p.to_string();
    }
    let Some(value) = verdict.value() else {
        assert!(!verdict.problems().is_empty(), "{what} {name}: refused with no problem");
        return false;
    };
    let text = serde_json::to_string(value).unwrap();
    let again = contract.check(text.as_bytes());
    assert!(again.is_accepted(), "{what} {name}: {text} refused on re-check: {:?}", again.problems());
    assert!(again.repairs().is_empty(), "{what} {name}: {text} repaired on re-check: {:?}", again.repairs());
    assert_eq!(again.value(), Some(value), "{what} {name}: re-check changed the value");
    let again = contract.check_value(value);
    assert!(again.is_accepted(), "{what} {name}: {text} refused by check_value: {:?}", again.problems());
    assert!(again.repairs().is_empty(), "{what} {name}: {text} repaired by check_value: {:?}", again.repairs());
    assert_eq!(again.value(), Some(value), "{what} {name}: check_value changed the value");
    true
}

#[test]
fn fuzz_seed_corpus_replays_through_the_example_contracts() {
    let contracts = [
        ("plate", Contract::from_json_str(PLATE).unwrap()),
        ("eligibility", Contract::from_json_str(ELIGIBILITY).unwrap()),
    ];
    let mut files = seeds("check");
    files.extend(seeds("repair_roundtrip"));
    assert!(files.len() > 100, "fuzz/seeds looks empty: run fuzz/seed.sh");
    let mut accepted = 0;
    for file in &files {
        let raw = std::fs::read(file).unwrap();
        let name = file.display().to_string();
        for (what, contract) in &contracts {
            if check_and_recheck(&name, contract, &raw, what) {
                accepted += 1;
            }
        }
    }
    // The example replies include accepted ones for both contracts.
    assert!(accepted >= 4, "only {accepted} seeds accepted");
}

#[test]
fn any_json_value_is_a_fixed_point_of_the_empty_contract() {
    // (Which JSONTestSuite files are read and which refused is json_test_suite.rs's job.)
    let any = Contract::from_json_str("{}").unwrap();
    let mut accepted = 0;
    for file in seeds("parse") {
        let raw = std::fs::read(&file).unwrap();
        if check_and_recheck(&file.display().to_string(), &any, &raw, "{}") {
            accepted += 1;
        }
    }
    assert!(accepted >= 50, "only {accepted} parse seeds accepted");
}

/// The property itself, for the found cases: accepted, and the value a fixed point.
fn assert_fixed_point(contract: &Contract, raw: &[u8]) -> serde_json::Value {
    let verdict = contract.check(raw);
    let value = verdict.value().unwrap_or_else(|| panic!("refused: {:?}", verdict.problems())).clone();
    let text = serde_json::to_string(&value).unwrap();
    let again = contract.check(text.as_bytes());
    assert!(again.is_accepted(), "{text} refused on re-check: {:?}", again.problems());
    assert!(again.repairs().is_empty(), "{text} repaired on re-check: {:?}", again.repairs());
    assert_eq!(again.value(), Some(&value));
    let again = contract.check_value(&value);
    assert!(again.repairs().is_empty(), "{text} repaired by check_value: {:?}", again.repairs());
    value
}

/// Found by the `check` fuzz target (generated contract `MIXED`, here
/// fuzz_cases/mixed.contract.json) within seconds: `truncate` cuts
/// `"nS'e!ewur i"` to 10 characters, `"nS'e!ewur "`, ending in a space;
/// `trim` runs before `truncate`, so the accepted value keeps it, and checking
/// that value again trims it: a repaired value that is not a fixed point.
#[test]
fn truncate_then_trim_is_a_fixed_point() {
    let contract = Contract::from_json_str(include_str!("fuzz_cases/mixed.contract.json")).unwrap();
    let value = assert_fixed_point(&contract, include_bytes!("fuzz_cases/truncate_then_trim.reply"));
    let s = value[0].as_str().unwrap();
    assert!(s.chars().count() <= 10 && s.trim() == s, "{s:?}");

    // The smallest form: one string node with both rules.
    let contract =
        Contract::from_json_str(r#"{"type":"string","maxLength":3,"x-vouch":{"repair":["trim","truncate"]}}"#).unwrap();
    let value = assert_fixed_point(&contract, br#""ab cd""#);
    assert_eq!(value.as_str().map(|s| s.trim() == s), Some(true), "{value}");

    // Found again by `check` in prose, inside an array that drop_invalid_items
    // then shortened (the truncate repair's path, /6, is into the reply as
    // received; the string ends up at /4 in the value).
    let contract = Contract::from_json_str(include_str!("fuzz_cases/mixed.contract.json")).unwrap();
    let value = assert_fixed_point(&contract, include_bytes!("fuzz_cases/truncate_then_trim_after_drop.reply"));
    let s = value[4].as_str().unwrap();
    assert!(s.chars().count() <= 10 && s.trim() == s, "{s:?}");
}

/// Found by the `parse` target (fuzz_cases/repeat_inside_repeat.reply): a
/// key repeated in an object, whose value holds a repeated key of its own.
/// A reader that checks a key once its value is read meets the inner repeat
/// first; the whole check took that for the outer one's error and lost the
/// outer repeat, which the stream (deciding at the outer key) lists. Every
/// reading now lists both, outer first, as the full path gives them.
#[test]
fn a_repeat_inside_a_repeated_keys_value_keeps_both() {
    let c = Contract::from_json_str("{}").unwrap();
    let raws: [&[u8]; 5] = [
        br#"{"b": 1, "b": {"c": 1, "c": 2}}"#,
        br#"{"a": {"b": 1, "b": {"c": 1, "c": 2}}}"#,
        br#"{"b": 1, "b": {"c": 1, "c": 0e+2I"#,
        br#"{"b": 1, "b": [{"c": 1, "c": 2}]}"#,
        include_bytes!("fuzz_cases/repeat_inside_repeat.reply"),
    ];
    for raw in raws {
        let whole = c.check(raw);
        let mut stream = c.stream();
        for b in raw {
            stream.feed([*b]);
        }
        assert_eq!(whole, stream.finish(), "{}", String::from_utf8_lossy(raw));
        assert_eq!(whole, common::expected_verdict(&c, raw), "{}", String::from_utf8_lossy(raw));
        let codes: Vec<&str> = whole.problems().iter().map(|p| p.code.as_str()).collect();
        assert!(codes.len() >= 2 && codes.iter().take(2).all(|c| *c == "duplicate_key"), "{codes:?}");
        assert!(whole.problems()[0].path.len() < whole.problems()[1].path.len(), "outer first");
    }
}
