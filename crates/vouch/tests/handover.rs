//! The hand-over (`Accepted::deserialize`, `Contract::check_as`): the value
//! walked from the vouched text is the value vouch checked.
//!
//! - Generated contracts and replies, the bundled examples and the benchmark
//!   corpus: for every accepted reply, `check_as::<Value>`, `value()` and
//!   `serde_json::from_str(json())` are equal, and `Accepted::build` (the
//!   bindings' walk) builds that value with its keys in order and each
//!   number of the same kind; for the example types,
//!   `check_as::<T>` equals `from_value::<T>(value())`.
//! - Numbers: every accepted number is handed over as the standard library's
//!   correctly rounded reading of its digits (the oracle), integers as
//!   integers.
//! - The verdict serialized (its value walked from the vouched text) and
//!   written by `Verdict::write_json` (copied from it) are byte for byte
//!   `to_json_string(&verdict.to_json())`, on these and on every reply of
//!   JSONTestSuite that JSON accepts.
//! - A type that disagrees with the contract is refused, `wrong_type`, at the
//!   path of the value that did not fit.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

#[path = "../../../bench/types/bench_types.rs"]
mod bench_types;
mod common;
#[path = "../examples/eligibility.rs"]
#[allow(dead_code)]
mod eligibility;
#[path = "common/generated.rs"]
mod generated;
#[path = "../examples/plate.rs"]
#[allow(dead_code)]
mod plate;

use std::collections::BTreeMap;

use proptest::prelude::*;
use serde::Deserialize;
use serde_json::Value;
use vouch::{Contract, Verdict};

thread_local! {
    /// Accepted replies the one-walk path of `check_as` took, on this thread.
    static ONE_WALK: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// The three readings of an accepted reply agree; the count of accepted ones.
fn three_readings_agree(c: &Contract, raw: &[u8]) -> usize {
    // The verdict written from the vouched text (before any tree is built)
    // is the verdict written from its tree, byte for byte.
    let verdict = c.check(raw);
    let written = vouch::to_json_string(&verdict);
    // And written straight from the text by `write_json`, before and after the tree is built.
    let mut fast = Vec::new();
    verdict.write_json(&mut fast);
    assert_eq!(String::from_utf8_lossy(&fast), written, "write_json: {:?}", String::from_utf8_lossy(raw));
    assert_eq!(written, vouch::to_json_string(&verdict.to_json()), "{:?}", String::from_utf8_lossy(raw));
    fast.clear();
    verdict.write_json(&mut fast);
    assert_eq!(String::from_utf8_lossy(&fast), written, "write_json with the tree: {:?}", String::from_utf8_lossy(raw));
    // And by a brief's `write_json`, from the reply itself where it passed as sent.
    if let Ok(text) = std::str::from_utf8(raw) {
        fast.clear();
        let brief = c.check_str_briefly(text, vouch::Refusals::Reported);
        assert!(brief.write_json(text, &mut fast), "a reported brief wrote nothing");
        assert_eq!(String::from_utf8_lossy(&fast), written, "Brief::write_json ({brief:?}): {text:?}");
    }
    // The one-walk path of `check_as` takes only what the check accepts as
    // sent, as the same value (the fail-closed oracle: `check`).
    let walked = c.__check_as_in_one_walk::<Value>(raw);
    let Verdict::Accepted(a) = c.check(raw) else {
        assert!(walked.is_none(), "the one walk took a reply the check refuses: {:?}", String::from_utf8_lossy(raw));
        let Err(refused) = c.check_as::<Value>(raw) else { panic!("check_as accepted what check refused") };
        assert_eq!(refused.problems, verdict.problems(), "check_as refuses otherwise");
        return 0;
    };
    if let Some(w) = &walked {
        assert!(a.repairs.is_empty() && a.findings.is_empty(), "the one walk took a repaired reply");
        assert_eq!(w, a.value(), "the one walk reads another value: {:?}", String::from_utf8_lossy(raw));
        ONE_WALK.with(|n| n.set(n.get() + 1));
    }
    let handed: Value = a.deserialize().unwrap_or_else(|e| panic!("{e}: {:?}", String::from_utf8_lossy(raw)));
    assert_eq!(&handed, a.value(), "deserialize vs value(): {:?}", String::from_utf8_lossy(raw));
    let reread: Value = serde_json::from_str(&a.json()).unwrap();
    assert_eq!(&reread, a.value(), "from_str(json()) vs value(): {}", a.json());
    let typed = c.check_as::<Value>(raw).unwrap();
    assert_eq!(&typed.value, a.value());
    assert_eq!(typed.repairs, a.repairs);
    // The bindings' walk builds the same value, in order, each number of the same kind.
    let built = a.build(&mut Spelled).unwrap_or_else(|e| panic!("{e}: {:?}", String::from_utf8_lossy(raw)));
    assert_eq!(built, spelled(a.value()), "build vs value(): {:?}", String::from_utf8_lossy(raw));
    1
}

/// A value spelled out with its keys in order and each number's kind
/// (`u`, `i`, `f` and the double's bits): what `Accepted::build` hands a
/// binding, compared exactly.
struct Spelled;

impl vouch::Build for Spelled {
    type Value = String;
    type List = Vec<String>;
    type Map = Vec<String>;
    type Error = String;
    fn null(&mut self) -> Result<String, String> {
        Ok("null".into())
    }
    fn bool(&mut self, v: bool) -> Result<String, String> {
        Ok(v.to_string())
    }
    fn i64(&mut self, v: i64) -> Result<String, String> {
        Ok(format!("i{v}"))
    }
    fn u64(&mut self, v: u64) -> Result<String, String> {
        Ok(format!("u{v}"))
    }
    fn f64(&mut self, v: f64) -> Result<String, String> {
        Ok(format!("f{:x}", v.to_bits()))
    }
    fn str(&mut self, v: &str) -> Result<String, String> {
        Ok(format!("{v:?}"))
    }
    fn key(&mut self, k: &str) -> Result<String, String> {
        Ok(format!("k{k:?}"))
    }
    fn list(&mut self, _: Option<usize>) -> Result<Vec<String>, String> {
        Ok(Vec::new())
    }
    fn push(&mut self, list: &mut Vec<String>, item: String) -> Result<(), String> {
        list.push(item);
        Ok(())
    }
    fn end_list(&mut self, list: Vec<String>) -> Result<String, String> {
        Ok(format!("[{}]", list.join(",")))
    }
    fn map(&mut self, _: Option<usize>) -> Result<Vec<String>, String> {
        Ok(Vec::new())
    }
    fn insert(&mut self, map: &mut Vec<String>, key: String, value: String) -> Result<(), String> {
        map.push(format!("{key}:{value}"));
        Ok(())
    }
    fn end_map(&mut self, map: Vec<String>) -> Result<String, String> {
        Ok(format!("{{{}}}", map.join(",")))
    }
}

/// `value` spelled as [`Spelled`] spells it (the oracle: serde_json's tree).
fn spelled(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
            (Some(u), _, _) => format!("u{u}"),
            (None, Some(i), _) => format!("i{i}"),
            (None, None, f) => format!("f{:x}", f.unwrap_or(f64::NAN).to_bits()),
        },
        Value::String(s) => format!("{s:?}"),
        Value::Array(items) => format!("[{}]", items.iter().map(spelled).collect::<Vec<_>>().join(",")),
        Value::Object(members) => {
            format!(
                "{{{}}}",
                members.iter().map(|(k, v)| format!("k{k:?}:{}", spelled(v))).collect::<Vec<_>>().join(",")
            )
        }
    }
}

#[test]
fn generated_contracts_hand_over_what_they_checked() {
    let accepted = std::cell::Cell::new(0usize);
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: 800,
        failure_persistence: None,
        ..ProptestConfig::default()
    });
    let result =
        runner.run(&(generated::schema(), proptest::collection::vec(generated::reply(), 12)), |(s, replies)| {
            let Ok(c) = Contract::from_value(s) else { return Ok(()) };
            for raw in &replies {
                accepted.set(accepted.get() + three_readings_agree(&c, raw));
            }
            Ok(())
        });
    result.unwrap();
    let accepted = accepted.get();
    let walked = ONE_WALK.with(std::cell::Cell::get);
    common::figure(&format!(
        "handover, generated: {accepted} accepted replies, three readings equal; {walked} taken by check_as in one walk"
    ));
    assert!(walked * 10 > accepted, "the one walk took too few to say anything: {walked} of {accepted}");
    assert!(accepted > 300, "too few accepted replies to say anything: {accepted}");
}

#[test]
fn example_replies_hand_over_as_their_types() {
    let root = common::project_root();
    let mut n = 0;
    for (contract, dir) in [("plate", "plate"), ("eligibility", "eligibility")] {
        let c = Contract::from_json_str(
            &std::fs::read_to_string(root.join(format!("examples/contracts/{contract}.json"))).unwrap(),
        )
        .unwrap();
        let mut files: Vec<_> = std::fs::read_dir(root.join("examples/replies").join(dir)).unwrap().flatten().collect();
        files.sort_by_key(std::fs::DirEntry::path);
        for f in files {
            let raw = std::fs::read(f.path()).unwrap();
            if three_readings_agree(&c, &raw) == 0 {
                continue;
            }
            n += 1;
            let value = c.check(&raw).value().cloned().unwrap();
            match contract {
                "plate" => assert_eq!(
                    c.check_as::<plate::PlateReadBack>(&raw).map(|v| v.value).ok(),
                    serde_json::from_value(value).ok()
                ),
                _ => assert_eq!(
                    c.check_as::<eligibility::EligibilityVerdict>(&raw).map(|v| v.value).ok(),
                    serde_json::from_value(value).ok()
                ),
            }
        }
    }
    common::figure(&format!("handover, examples: {n} accepted replies, typed as from_value"));
    assert!(n >= 4, "{n}");
}

/// `check_as::<T>` (by its one walk or the usual way) against the check
/// and `from_value::<T>(value())`: the same value, or both refusing; the
/// count of replies handed over as `T`.
fn typed_agree<T: serde::de::DeserializeOwned + PartialEq + std::fmt::Debug>(c: &Contract, raw: &[u8]) -> usize {
    let via = c.check_as::<T>(raw);
    match (c.check(raw), via) {
        (Verdict::Accepted(a), Ok(v)) => {
            let want: T = serde_json::from_value(a.value().clone()).unwrap();
            assert_eq!(v.value, want, "{:?}", String::from_utf8_lossy(raw));
            1
        }
        (Verdict::Accepted(a), Err(_)) => {
            assert!(serde_json::from_value::<T>(a.value().clone()).is_err(), "{:?}", String::from_utf8_lossy(raw));
            0
        }
        (Verdict::Refused(r), Err(e)) => {
            assert_eq!(r.problems, e.problems);
            0
        }
        (Verdict::Refused(_), Ok(_)) => {
            panic!("check_as took a reply the check refuses: {:?}", String::from_utf8_lossy(raw))
        }
    }
}

#[test]
fn corpus_replies_hand_over_as_the_bench_types() {
    let dir = std::env::temp_dir().join(format!("vouch-handover-types-{}", std::process::id()));
    let Some((bench, out)) = common::bench_corpus(&dir, 3000, 60) else { return };
    let contract = |name: &str| {
        Contract::from_json_str(&std::fs::read_to_string(bench.join(format!("contracts/{name}.schema.json"))).unwrap())
            .unwrap()
    };
    let (plate, eligibility, invoice) =
        (contract("plate_check"), contract("eligibility_verdict"), contract("invoice_extraction"));
    let (mut replies, mut typed) = (0, 0);
    for file in ["small.jsonl", "large.jsonl"] {
        for line in std::fs::read_to_string(out.join(file)).unwrap().lines() {
            let r: Value = serde_json::from_str(line).unwrap();
            let raw = r["raw"].as_str().unwrap().as_bytes();
            replies += 1;
            typed += match r["contract"].as_str().unwrap() {
                "plate_check" => typed_agree::<bench_types::Plate>(&plate, raw),
                "eligibility_verdict" => typed_agree::<bench_types::Eligibility>(&eligibility, raw),
                _ => typed_agree::<bench_types::Invoice>(&invoice, raw),
            };
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    common::figure(&format!(
        "handover, corpus as the bench types: {replies} replies, {typed} handed over as T, each as from_value gives it"
    ));
    assert!(typed * 2 > replies, "{typed} of {replies}");
}

#[test]
fn corpus_replies_hand_over_what_they_checked() {
    let dir = std::env::temp_dir().join(format!("vouch-handover-corpus-{}", std::process::id()));
    let Some((bench, out)) = common::bench_corpus(&dir, 3000, 0) else { return };
    let small = out.join("small.jsonl");
    let contracts: BTreeMap<String, Contract> = ["eligibility_verdict", "invoice_extraction", "plate_check"]
        .iter()
        .flat_map(|name| {
            ["schema", "lenient"].map(|kind| {
                let text = std::fs::read_to_string(bench.join(format!("contracts/{name}.{kind}.json"))).unwrap();
                (format!("{name}.{kind}"), Contract::from_json_str(&text).unwrap())
            })
        })
        .collect();
    let mut n = 0;
    for line in std::fs::read_to_string(&small).unwrap().lines() {
        let r: Value = serde_json::from_str(line).unwrap();
        let raw = r["raw"].as_str().unwrap().as_bytes();
        for kind in ["schema", "lenient"] {
            let c = &contracts[&format!("{}.{kind}", r["contract"].as_str().unwrap())];
            n += three_readings_agree(c, raw);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    let walked = ONE_WALK.with(std::cell::Cell::get);
    common::figure(&format!(
        "handover, corpus: {n} accepted (reply, contract) pairs, three readings equal; {walked} taken by check_as in one walk"
    ));
    // The strict contracts' valid replies (about half the pairs) go the one walk.
    assert!(walked * 3 > n, "the one walk took too few of the corpus: {walked} of {n}");
    assert!(n > 1000, "{n}");
}

#[test]
fn numbers_are_handed_over_as_vouch_read_them() {
    let c = Contract::from_json_str(r#"{"type": "array", "items": {"type": "number"}}"#).unwrap();
    let texts = [
        "0",
        "-0",
        "1",
        "-1",
        "9007199254740991",
        "-9007199254740991",
        "18446744073709551615",
        "1e2",
        "1.0",
        "0.1",
        "0.30000000000000004",
        "1.7976931348623157e308",
        "2.2250738585072014e-308",
        "4.9e-324",
        "123456.789e-3",
        "1e22",
        "1e23",
        "9007199254740993.0",
        "2.5e-5",
        "-1.5E+3",
    ];
    let mut accepted = 0;
    for t in texts {
        let raw = format!("[{t}]");
        let Verdict::Accepted(a) = c.check(&raw) else { continue };
        accepted += 1;
        let handed: Vec<Value> = a.deserialize().unwrap();
        assert_eq!(&Value::Array(handed.clone()), a.value(), "{t}");
        let is_integer = !t.contains(['.', 'e', 'E']);
        let as_integer = handed[0].as_i64().map(i128::from).or_else(|| handed[0].as_u64().map(i128::from));
        if is_integer && as_integer.is_some() {
            assert_eq!(as_integer, t.parse::<i128>().ok(), "{t}");
        } else {
            assert_eq!(handed[0].as_f64(), t.parse::<f64>().ok(), "{t}: not the correctly rounded double");
        }
        let floats: Vec<f64> = a.deserialize().unwrap();
        assert_eq!(Some(floats[0]), t.parse::<f64>().ok(), "{t} as f64");
    }
    assert!(accepted >= 15, "{accepted}");
}

#[derive(Debug, Deserialize, PartialEq)]
struct Score {
    score: u8,
    tags: Vec<String>,
}

#[test]
fn a_type_that_does_not_fit_is_refused_at_its_path() {
    let c = Contract::from_json_str(r#"{"type": "object"}"#).unwrap();
    let cases = [
        (r#"{"score": 300, "tags": []}"#, "/score"),
        (r#"{"score": 3, "tags": ["a", 1]}"#, "/tags/1"),
        (r#"{"score": "3", "tags": []}"#, "/score"),
        (r#"{"tags": []}"#, ""),
        (r#"[1]"#, ""),
    ];
    for (raw, path) in cases {
        let refused = c.check_as::<Score>(raw).unwrap_err();
        assert_eq!(refused.problems.len(), 1, "{raw}");
        assert_eq!(refused.problems[0].code.as_str(), "wrong_type", "{raw}");
        assert_eq!(refused.problems[0].path, path, "{raw}: {}", refused.problems[0].message);
    }
    assert_eq!(
        c.check_as::<Score>(r#"{"score": 3, "tags": ["a\n\u00e9"], "other": {"x": [1, {"y": null}]}}"#).unwrap().value,
        Score { score: 3, tags: vec!["a\né".into()] }
    );
}

#[test]
fn maps_enums_and_options_hand_over_like_serde_json() {
    #[derive(Debug, Deserialize, PartialEq)]
    enum Shape {
        Dot,
        Circle { r: f64 },
        Pair(i32, i32),
        Tag(String),
    }
    #[derive(Debug, Deserialize, PartialEq)]
    struct All {
        by_id: BTreeMap<u32, bool>,
        shapes: Vec<Shape>,
        maybe: Option<i64>,
        none: Option<String>,
        text: std::borrow::Cow<'static, str>,
    }
    let c = Contract::from_json_str("true").unwrap();
    let raw = r#"{"by_id": {"1": true, "20": false}, "shapes": ["Dot", {"Circle": {"r": 1.5}}, {"Pair": [1, -2]}, {"Tag": "x"}],
        "maybe": -7, "none": null, "text": "t"}"#;
    let ours = c.check_as::<All>(raw).unwrap().value;
    let theirs: All = serde_json::from_str(raw).unwrap();
    assert_eq!(ours, theirs);
}

mod vtyped {
    #[derive(Debug, serde::Deserialize)]
    pub struct S {
        #[allow(dead_code)]
        pub n: u8,
    }
}

/// The example docs/contract.md gives, word for word.
#[test]
fn the_documented_mismatch_reads_as_documented() {
    let c = Contract::from_json_str(r#"{"type": "object", "properties": {"n": {"type": "integer"}}}"#).unwrap();
    let refused = c.check_as::<vtyped::S>(r#"{"n": 1.0}"#).unwrap_err();
    let shown = refused.problems[0].to_string();
    let doc = std::fs::read_to_string(common::project_root().join("docs/contract.md")).unwrap();
    assert!(shown.ends_with("expected u8"), "{shown}");
    assert!(
        doc.contains(&format!("``{}``", shown.replace("handover::vtyped", "vtyped"))),
        "docs/contract.md does not show: {shown}"
    );
}

/// Every reply of JSONTestSuite's `test_parsing` (escapes, surrogate pairs,
/// exponents, `-0`, deep nesting, white space of every kind): accepted by a
/// contract that takes any JSON, its verdict is written by `write_json` as
/// by the serializer, and its three readings agree.
#[test]
fn json_test_suite_replies_are_written_as_the_serializer_writes_them() {
    let Some(dir) = common::shared_dir("suites/json-test-suite/test_parsing") else { return };
    let any = Contract::from_json_str("{}").unwrap();
    let (mut files, mut accepted) = (0, 0);
    let mut paths: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    paths.sort();
    for path in paths {
        let raw = std::fs::read(&path).unwrap();
        files += 1;
        accepted += three_readings_agree(&any, &raw);
    }
    common::figure(&format!("handover, JSONTestSuite: {files} files, {accepted} accepted, written two ways equal"));
    assert!(files > 300 && accepted > 90, "{files} files, {accepted} accepted");
}

#[test]
fn a_long_number_is_never_handed_on_as_written_wherever_it_stands() {
    // Declared, undeclared (read free), in an undeclared container, at the root.
    let contracts = [
        r#"{"type": "object"}"#,
        r#"{"type": "object", "properties": {"x": {}}}"#,
        r#"{"type": "object", "properties": {"x": {"type": "number"}}}"#,
        r#"{"type": "object", "properties": {"y": {"type": "string"}}}"#,
        r#"{}"#,
    ];
    let long = ["1.0000000000000000000001", "12345678901234567890", "-0.1234567890123456789", "1e-00000000000000001"];
    for doc in contracts {
        let c = Contract::from_json_str(doc).unwrap();
        for number in long {
            for raw in [format!(r#"{{"x": {number}, "y": "z"}}"#), format!(r#"{{"y": "z", "w": [{number}]}}"#)] {
                let Verdict::Accepted(a) = c.check(&raw) else { continue };
                assert!(!a.json().contains(number), "{doc}: {raw} handed on as written: {}", a.json());
                assert!(
                    c.check_str_briefly(&raw, vouch::Refusals::Unreported) != vouch::Brief::PassedAsSent,
                    "{doc}: {raw} told as passed as sent"
                );
            }
        }
        // Short numbers and strings, declared or not, stand as written where
        // the object is read member by member (one with no `properties` is
        // read whole, and written again).
        let raw = r#" {"x": 1.5, "y": "z", "w": -2} "#;
        if doc.contains("properties") {
            assert_eq!(
                c.check_str_briefly(raw, vouch::Refusals::Unreported),
                vouch::Brief::PassedAsSent,
                "{doc}: {raw} given a whole verdict"
            );
        }
    }
}
