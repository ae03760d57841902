//! Arbitrary text against contracts that declare `unwrap: ["fence", "prose"]`
//! (`{}` with that policy, and an object contract): the unwrap rules of
//! `crates/vouch/src/read/unwrap.rs`.
//!
//! Properties: no panic; the single pass gives the full path's verdict byte
//! for byte (and an accepted value checked again is unchanged); an accepted
//! reply that is not JSON as a whole was read from a span
//! (`Unwrap::find_span`, a hidden test hook) that serde_json reads as the
//! same value; and, for a short reply without think blocks, serde_json reads
//! no other complete value at any `{` or `[` outside that span (one
//! candidate or none, checked by a reader that is not vouch's).
#![no_main]

mod common;

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use vouch::{Contract, Unwrap};

const ANY: &str = r#"{"x-vouch": {"unwrap": ["fence", "prose"]}}"#;
const VERDICT: &str = r#"{
  "type": "object",
  "properties": {"verdict": {"enum": ["eligible", "not_eligible"]}, "score": {"type": "integer"}},
  "required": ["verdict"],
  "x-vouch": {"unwrap": ["fence", "prose"]}
}"#;

/// Replies up to this length also get the quadratic independent search.
const SEARCHED: usize = 4096;

fn contracts() -> &'static [Contract] {
    static C: OnceLock<Vec<Contract>> = OnceLock::new();
    C.get_or_init(|| {
        [ANY, VERDICT]
            .iter()
            .map(|text| Contract::from_json_str(text).unwrap_or_else(|e| panic!("fuzz contract does not compile: {e}")))
            .collect()
    })
}

/// Equal as JSON data; numbers by value, a few ulps apart allowed (serde_json
/// without `float_roundtrip` may round a long literal an ulp off).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            x == y
                || match (x.as_f64(), y.as_f64()) {
                    (Some(x), Some(y)) => {
                        x == y
                            || (x.is_finite()
                                && y.is_finite()
                                && (x < 0.0) == (y < 0.0)
                                && x.to_bits().abs_diff(y.to_bits()) <= 4)
                    }
                    _ => false,
                }
        }
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

/// Whether serde_json reads a complete value starting at byte `at`.
fn serde_reads_at(text: &str, at: usize) -> bool {
    text.get(at..)
        .is_some_and(|rest| matches!(serde_json::Deserializer::from_str(rest).into_iter::<Value>().next(), Some(Ok(_))))
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        for contract in contracts() {
            common::check_and_recheck(contract, data);
        }
        return;
    };
    for contract in contracts() {
        let verdict = common::check_and_recheck(contract, data);
        let Some(value) = verdict.value() else { continue };
        let max_depth = contract.limits().max_depth;
        if vouch::read_json(text, max_depth).is_ok() {
            // JSON as a whole: never unwrapped.
            assert!(verdict.repairs().iter().all(|r| r.rule != "unwrap"), "a whole JSON reply unwrapped: {text:?}");
            continue;
        }
        assert_eq!(
            verdict.repairs().first().map(|r| r.rule.as_str()),
            Some("unwrap"),
            "accepted without an unwrap: {text:?}"
        );
        let span = Unwrap { fence: true, prose: true }.find_span(text, max_depth);
        let Some(Ok((from, to))) = span else {
            panic!("accepted, but the unwrap finds {span:?} in {text:?}");
        };
        let json = text.get(from..to).unwrap_or_else(|| panic!("span {from}..{to} off the text {text:?}"));
        let read: Value = serde_json::from_str(json)
            .unwrap_or_else(|e| panic!("serde_json does not read the unwrapped span {json:?} ({e}) of {text:?}"));
        assert!(same(&read, value), "the span {json:?} reads as {read}, vouch accepted {value}\nreply {text:?}");
        if text.len() <= SEARCHED && !text.contains("<think>") {
            // One candidate or none: no other complete value anywhere outside the span.
            for (at, c) in text.char_indices() {
                if (c == '{' || c == '[') && !(from..to).contains(&at) && serde_reads_at(text, at) {
                    panic!("accepted {json:?}, but serde_json also reads a value at byte {at} of {text:?}");
                }
            }
        }
    }
});
