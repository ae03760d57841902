//! Parser conformance: JSONTestSuite (Nicolas Seriot), `test_parsing/` and
//! `test_transform/`, read as raw bytes and checked against the contract `{}`
//! (any JSON value).
//!
//! - every `y_` file is accepted, except the deliberate refusals in
//!   [`Y_REFUSED`];
//! - every `n_` file is refused (and nothing panics);
//! - every `i_` (implementation-defined) file has the outcome written in
//!   [`I_EXPECTED`]; the test prints them as a markdown table for
//!   docs/guarantees.md.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod common;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use vouch::{Contract, Verdict};

/// `y_` files vouch refuses on purpose, with the code it refuses them with.
const Y_REFUSED: &[(&str, &str)] = &[
    // RFC 8259 only says names "SHOULD be unique"; parsers disagree on which
    // value wins (serde_json keeps the last, others the first). A reply whose
    // meaning depends on the consumer's parser is not vouched for.
    ("y_object_duplicated_key.json", "duplicate_key"),
    // Same rule, even when both values are equal: the refusal does not depend
    // on the values, so it can never be argued either way.
    ("y_object_duplicated_key_and_value.json", "duplicate_key"),
    // A key with NUL in an open object: C-string consumers cut it at the NUL
    // and read another key ("foo"). Refused unless the contract declares the
    // key or allows hazardous keys (docs/guarantees.md).
    ("y_object_escaped_null_in_key.json", "unexpected_property"),
];

/// The expected outcome of every `i_` file: `None` = accepted, `Some(code)` =
/// refused with that code. Each is a fail-closed choice:
/// - a number that overflows a double to infinity is refused
///   (`number_overflow`): JSON cannot carry infinity, and consumers would read
///   it differently;
/// - a number that underflows is accepted as 0 (the correctly rounded double);
/// - an integer beyond 64 bits but within double range is accepted as the
///   nearest double (like `1.000000000000000005` is read as `1.0`);
/// - invalid UTF-8 (including UTF-16 and Latin-1 text, encoded surrogates and
///   overlong forms) and lone or mispaired `\u` surrogate escapes are refused
///   (`not_json`): they are not Unicode text;
/// - a byte order mark is refused (`not_json`): RFC 8259 forbids sending one;
/// - 500 nested arrays exceed the default depth limit of 128 (`too_deep`).
const I_EXPECTED: &[(&str, Option<&str>)] = &[
    ("i_number_double_huge_neg_exp.json", Some("imprecise_number")),
    ("i_number_huge_exp.json", Some("number_overflow")),
    ("i_number_neg_int_huge_exp.json", Some("number_overflow")),
    ("i_number_pos_double_huge_exp.json", Some("number_overflow")),
    ("i_number_real_neg_overflow.json", Some("number_overflow")),
    ("i_number_real_pos_overflow.json", Some("number_overflow")),
    ("i_number_real_underflow.json", Some("imprecise_number")),
    ("i_number_too_big_neg_int.json", Some("imprecise_number")),
    ("i_number_too_big_pos_int.json", None),
    ("i_number_very_big_negative_int.json", Some("imprecise_number")),
    ("i_object_key_lone_2nd_surrogate.json", Some("not_json")),
    ("i_string_1st_surrogate_but_2nd_missing.json", Some("not_json")),
    ("i_string_1st_valid_surrogate_2nd_invalid.json", Some("not_json")),
    ("i_string_UTF-16LE_with_BOM.json", Some("not_json")),
    ("i_string_UTF-8_invalid_sequence.json", Some("not_json")),
    ("i_string_UTF8_surrogate_U+D800.json", Some("not_json")),
    ("i_string_incomplete_surrogate_and_escape_valid.json", Some("not_json")),
    ("i_string_incomplete_surrogate_pair.json", Some("not_json")),
    ("i_string_incomplete_surrogates_escape_valid.json", Some("not_json")),
    ("i_string_invalid_lonely_surrogate.json", Some("not_json")),
    ("i_string_invalid_surrogate.json", Some("not_json")),
    ("i_string_invalid_utf-8.json", Some("not_json")),
    ("i_string_inverted_surrogates_U+1D11E.json", Some("not_json")),
    ("i_string_iso_latin_1.json", Some("not_json")),
    ("i_string_lone_second_surrogate.json", Some("not_json")),
    ("i_string_lone_utf8_continuation_byte.json", Some("not_json")),
    ("i_string_not_in_unicode_range.json", Some("not_json")),
    ("i_string_overlong_sequence_2_bytes.json", Some("not_json")),
    ("i_string_overlong_sequence_6_bytes.json", Some("not_json")),
    ("i_string_overlong_sequence_6_bytes_null.json", Some("not_json")),
    ("i_string_truncated-utf-8.json", Some("not_json")),
    ("i_string_utf16BE_no_BOM.json", Some("not_json")),
    ("i_string_utf16LE_no_BOM.json", Some("not_json")),
    ("i_structure_500_nested_arrays.json", Some("too_deep")),
    ("i_structure_UTF-8_BOM_empty_object.json", Some("not_json")),
];

fn any_value() -> Contract {
    Contract::from_json_str("{}").unwrap()
}

/// The files of a folder, sorted by name.
fn files(dir: &Path) -> Vec<(String, PathBuf)> {
    let mut files: Vec<(String, PathBuf)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let path = e.unwrap().path();
            (path.file_name().unwrap().to_string_lossy().into_owned(), path)
        })
        .filter(|(name, _)| name.ends_with(".json"))
        .collect();
    files.sort();
    files
}

/// Check one file's bytes; `Err` when vouch panicked.
fn check_file(contract: &Contract, path: &Path) -> Result<Verdict, String> {
    let raw = std::fs::read(path).unwrap();
    catch_unwind(AssertUnwindSafe(|| contract.check(&raw))).map_err(|e| {
        e.downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(|s| (*s).to_owned()))
            .unwrap_or_default()
    })
}

/// `None` when accepted, else the first problem's code.
fn refusal_code(verdict: &Verdict) -> Option<&'static str> {
    verdict.problems().first().map(|p| p.code.as_str())
}

#[test]
fn json_test_suite_parsing() {
    let Some(dir) = common::shared_dir("suites/json-test-suite/test_parsing") else {
        return;
    };
    let contract = any_value();
    let mut failures = Vec::new();
    let (mut y_accepted, mut y_total, mut n_refused, mut n_total) = (0usize, 0usize, 0, 0);
    let mut i_rows = Vec::new();
    let mut i_seen = Vec::new();

    for (name, path) in files(&dir) {
        let verdict = match check_file(&contract, &path) {
            Ok(v) => v,
            Err(msg) => {
                failures.push(format!("{name}: PANIC: {msg}"));
                continue;
            }
        };
        let code = refusal_code(&verdict);
        if verdict.is_accepted() != code.is_none() {
            failures.push(format!("{name}: refused without a problem"));
        }
        let first = verdict.problems().first().map(ToString::to_string).unwrap_or_default();
        match name.get(..2) {
            Some("y_") => {
                y_total += 1;
                if verdict.is_accepted() {
                    y_accepted += 1;
                }
                let allowed = Y_REFUSED.iter().find(|(f, _)| *f == name).map(|(_, c)| *c);
                match (code, allowed) {
                    (None, None) => {}
                    (Some(got), Some(want)) if got == want => {}
                    (None, Some(want)) => {
                        failures.push(format!("{name}: accepted, but the allow-list says refused with {want}"))
                    }
                    (Some(_), _) => failures.push(format!("{name}: must be accepted: {first}")),
                }
            }
            Some("n_") => {
                n_total += 1;
                if verdict.is_accepted() {
                    failures.push(format!(
                        "{name}: ACCEPTED, must be refused: {}",
                        verdict.value().map(ToString::to_string).unwrap_or_default()
                    ));
                } else {
                    n_refused += 1;
                }
            }
            Some("i_") => {
                i_seen.push(name.clone());
                i_rows.push(format!(
                    "| `{name}` | {} | {} |",
                    verdict.outcome(),
                    code.map(|c| format!("`{c}`")).unwrap_or_default()
                ));
                match I_EXPECTED.iter().find(|(f, _)| *f == name) {
                    None => failures.push(format!(
                        "{name}: no expected outcome in I_EXPECTED (got {} {code:?})",
                        verdict.outcome()
                    )),
                    Some((_, want)) if *want != code => {
                        failures.push(format!("{name}: expected {want:?}, got {} {code:?}: {first}", verdict.outcome()))
                    }
                    Some(_) => {}
                }
            }
            _ => failures.push(format!("{name}: not a y_, n_ or i_ file")),
        }
    }

    println!("\n| file | outcome | code |\n| --- | --- | --- |");
    for row in &i_rows {
        println!("{row}");
    }
    println!();
    common::figure(&format!("JSONTestSuite: y: {y_accepted}/{y_total}, n: {n_refused}/{n_total}"));
    for (name, _) in I_EXPECTED {
        if !i_seen.iter().any(|s| s == name) {
            failures.push(format!("{name}: listed in I_EXPECTED but not in the suite"));
        }
    }
    for f in &failures {
        println!("FAILURE: {f}");
    }
    assert!(failures.is_empty(), "{} failures (see above)", failures.len());
    assert!(y_total > 0 && n_total > 0 && !i_rows.is_empty(), "suite is empty");
    assert_eq!(n_refused, n_total, "every n_ file must be refused");
    assert_eq!(y_accepted + Y_REFUSED.len(), y_total, "every y_ file must be accepted but for the allow-list");
}

#[test]
fn json_test_suite_transform() {
    let Some(dir) = common::shared_dir("suites/json-test-suite/test_transform") else {
        return;
    };
    let contract = any_value();
    let mut failures = Vec::new();
    println!("\n| file | outcome | code | value |\n| --- | --- | --- | --- |");
    for (name, path) in files(&dir) {
        let verdict = match check_file(&contract, &path) {
            Ok(v) => v,
            Err(msg) => {
                failures.push(format!("{name}: PANIC: {msg}"));
                continue;
            }
        };
        let code = refusal_code(&verdict);
        println!(
            "| `{name}` | {} | {} | {} |",
            verdict.outcome(),
            code.map(|c| format!("`{c}`")).unwrap_or_default(),
            verdict.value().map(|v| format!("`{v}`")).unwrap_or_default()
        );
        if name.starts_with("object_same_key") && code != Some("duplicate_key") {
            failures.push(format!(
                "{name}: a repeated key must be refused with duplicate_key, got {} {code:?}",
                verdict.outcome()
            ));
        }
    }
    for f in &failures {
        println!("FAILURE: {f}");
    }
    assert!(failures.is_empty(), "{} failures (see above)", failures.len());
}
