//! Shared helpers for the integration tests.
#![allow(dead_code)]

use std::path::PathBuf;

use serde_json::Value;

/// The shared folder (`VOUCH_SHARED`, default `../shared` from the project
/// root). When it is missing the test says so loudly; under `CI=true` it fails.
pub fn shared_dir(sub: &str) -> Option<PathBuf> {
    let root = std::env::var_os("VOUCH_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared"));
    let dir = root.join(sub);
    if dir.is_dir() {
        return Some(dir);
    }
    let msg = format!("SHARED DATA MISSING: {} not found (set VOUCH_SHARED to the shared folder)", dir.display());
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{msg}");
    }
    eprintln!("\n!!!!! {msg}: SKIPPING !!!!!\n");
    None
}

/// The project root (for examples/).
pub fn project_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The contract as an independent validator sees it: every `x-vouch` removed.
pub fn strip_policy(v: &mut Value) {
    match v {
        Value::Object(map) => {
            map.remove("x-vouch");
            map.values_mut().for_each(strip_policy);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_policy),
        _ => {}
    }
}

/// Report a test's figure line: on stderr, and in
/// `target/suite-figures/<name>.txt` so a plain `cargo test` (which shows
/// the output of failing tests only) still leaves it to read.
pub fn figure(name: &str, line: &str) {
    eprintln!("{line}");
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target"));
    let dir = target.join("suite-figures");
    if std::fs::create_dir_all(&dir).is_ok() {
        let _ = std::fs::write(dir.join(format!("{name}.txt")), format!("{line}\n"));
    }
}
