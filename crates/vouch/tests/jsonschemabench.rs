//! Real-world schemas (JSONSchemaBench's sample in `../shared/suites/jsonschemabench/`):
//! how many compile, and that every refusal names its keyword and location.
//! Never a crash, never a schema compiled with a keyword ignored (the
//! compiler refuses what it does not enforce: `tests/compile_errors.rs`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod common;

use std::collections::BTreeMap;

use vouch::{CompileErrorKind, Contract};

#[test]
fn real_world_schemas_compile_or_name_their_keyword() {
    let Some(dir) = common::shared_dir("suites/jsonschemabench") else { return };
    let mut files = Vec::new();
    for subset in std::fs::read_dir(&dir).unwrap() {
        let subset = subset.unwrap().path();
        if subset.is_dir() {
            for f in std::fs::read_dir(&subset).unwrap() {
                files.push(f.unwrap().path());
            }
        }
    }
    files.sort();
    let (mut compiled, mut refused) = (0, 0);
    let mut by_keyword: BTreeMap<String, usize> = BTreeMap::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        match Contract::from_json_str(&text) {
            Ok(_) => compiled += 1,
            Err(e) => {
                refused += 1;
                for err in e.every() {
                    assert!(
                        !err.keyword.is_empty() || err.kind == CompileErrorKind::NotJson,
                        "{}: a refusal that names no keyword: {err}",
                        f.display()
                    );
                    *by_keyword.entry(format!("{:?} {}", err.kind, err.keyword)).or_default() += 1;
                }
            }
        }
    }
    let mut top: Vec<_> = by_keyword.into_iter().collect();
    top.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
    let top: Vec<String> = top.iter().take(12).map(|(k, n)| format!("{k} {n}")).collect();
    common::figure(&format!(
        "jsonschemabench: compiled {compiled}/{} ({:.0}%), refused {refused}; errors by keyword: {}",
        files.len(),
        100.0 * compiled as f64 / files.len().max(1) as f64,
        top.join(", ")
    ));
    assert_eq!(compiled + refused, files.len());
    assert!(files.len() >= 300, "the sample has {} schemas", files.len());
    assert!(compiled * 10 >= files.len() * 9, "only {compiled} of {} compile; the floor is 90 %", files.len());
}
