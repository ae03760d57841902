//! The single pass (checking while reading) against the full path (read,
//! repair, check, report): on every reply here, `Contract::check` gives
//! byte for byte the verdict the full path alone gives, and the single pass
//! really decides the replies it was built for (so a pass that stood aside
//! on everything would fail here, not just run slowly).
//!
//! Replies: the bundled examples, a generated slice of the benchmark corpus
//! (strict and lenient contracts), JSONTestSuite, every truncation and some
//! byte flips of valid replies, and contracts written to exercise each way
//! the pass reads (aliases, fills, strip, hazards, extra properties, tuples,
//! limits, recursion).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod common;

use std::path::Path;

use serde_json::{json, Value};
use vouch::Contract;

/// Holds the two paths to the same verdict; returns whether the single pass
/// decided the reply by itself.
fn same_verdict(contract: &Contract, raw: &[u8], what: &str) -> bool {
    let full = common::expected_verdict(contract, raw).to_json();
    let checked = contract.check(raw).to_json();
    assert_eq!(
        checked,
        full,
        "{what}: the single pass and the full path disagree on {:?}",
        String::from_utf8_lossy(&raw[..raw.len().min(300)])
    );
    // The refusal decided without its report: never for a reply the full
    // path accepts, and otherwise `check`'s very verdict.
    if let Ok(text) = std::str::from_utf8(raw) {
        match contract.check_str_unless_refused(text) {
            None => assert_eq!(full["outcome"], "refused", "{what}: refused unreported, but the full path accepts"),
            Some(v) => assert_eq!(v.to_json(), checked, "{what}: check_str_unless_refused gave another verdict"),
        }
        // The brief answer: a pass as sent exactly where the verdict is one,
        // a refusal only where it refuses, else the verdict itself.
        let verdict = contract.check_str(text);
        for refusals in [vouch::Refusals::Reported, vouch::Refusals::Unreported] {
            match contract.check_str_briefly(text, refusals) {
                vouch::Brief::PassedAsSent => {
                    assert!(common::passed_as_sent(&verdict, text), "{what}: a pass as sent that is not one");
                    // Its value, walked from the reply alone, is the verdict's, keys in order.
                    let passed = contract.build_passed(text, &mut common::Tree).map_err(|e| e.message().to_owned());
                    let vouched = verdict.value().map(|v| serde_json::to_string(v).unwrap_or_default());
                    assert_eq!(
                        passed.map(|v| serde_json::to_string(&v).unwrap_or_default()).ok(),
                        vouched,
                        "{what}: build_passed"
                    );
                }
                vouch::Brief::Refused => {
                    assert_eq!(refusals, vouch::Refusals::Unreported, "{what}: a refusal left unreported");
                    assert_eq!(full["outcome"], "refused", "{what}: refused briefly, but the full path accepts");
                }
                // (A pass as sent may come as its verdict: where the contract
                // has a gate, its findings are looked for on the value.)
                vouch::Brief::Verdict(v) => {
                    assert_eq!(v.to_json(), checked, "{what}: check_str_briefly gave another verdict")
                }
            }
        }
    }
    let alone = contract.accepts_in_one_pass(raw);
    if alone {
        assert_eq!(full["outcome"], "accepted", "{what}: the single pass accepted what the full path refuses");
    }
    if let vouch::Verdict::Accepted(a) = contract.check(raw) {
        // The text handed on reads, with vouch's own reader, as the value vouched for.
        let limits = vouch::Limits {
            max_bytes: usize::MAX,
            max_depth: vouch::Limits::MAX_DEPTH_CAP,
            max_problems: 1,
            max_repairs: 1,
        };
        let any = Contract::from_json_str("{}").unwrap().with_limits(limits).unwrap();
        if let Some(read) = any.check_str(&a.json()).value() {
            assert_eq!(read, a.value(), "{what}: json() reads as another value");
        }
    }
    alone
}

/// Every prefix and a few deterministic byte flips of a reply.
fn damaged(raw: &[u8]) -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = (0..raw.len()).map(|i| raw[..i].to_vec()).collect();
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64 ^ raw.len() as u64;
    for _ in 0..32 {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        if raw.is_empty() {
            break;
        }
        let at = (seed >> 33) as usize % raw.len();
        let mut flipped = raw.to_vec();
        flipped[at] = b"\"{}[],:0a \\-.e"[(seed >> 20) as usize % 14];
        out.push(flipped);
    }
    out
}

#[test]
fn examples_and_their_damage() {
    let root = common::project_root().join("examples");
    let mut decided = 0;
    let mut total = 0;
    for (name, dir) in [("plate", "plate"), ("eligibility", "eligibility")] {
        let text = std::fs::read_to_string(root.join(format!("contracts/{name}.json"))).unwrap();
        let contract = Contract::from_json_str(&text).unwrap();
        for entry in std::fs::read_dir(root.join("replies").join(dir)).unwrap() {
            let path = entry.unwrap().path();
            let raw = std::fs::read(&path).unwrap();
            total += 1;
            let alone = same_verdict(&contract, &raw, name);
            decided += usize::from(alone);
            // The example contracts are plain objects: the single pass decides exactly
            // the replies accepted with no repair but missing properties filled and
            // scalars repaired where they stand (no unwrap, nothing removed, no
            // container replaced).
            let full = contract.check_full_path(&raw);
            let local = full.repairs().iter().all(|r| {
                let container = r.before.is_array() || r.before.is_object();
                !(matches!(r.rule.as_str(), "unwrap" | "strip_unknown" | "drop_invalid_items") || container)
            });
            assert_eq!(alone, full.is_accepted() && local, "{}", path.display());
            for d in damaged(&raw) {
                same_verdict(&contract, &d, name);
            }
        }
    }
    println!("examples: {total} replies, {decided} decided by the single pass");
    assert!(decided >= 4, "the single pass decided only {decided} example replies");
}

#[test]
fn benchmark_corpus_slice() {
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("single-pass-corpus");
    let Some((bench, out)) = common::bench_corpus(&out, 4000, 60) else { return };
    let contract = |name: &str| {
        let text = std::fs::read_to_string(bench.join("contracts").join(name)).unwrap();
        Contract::from_json_str(&text).unwrap()
    };
    for file in ["small.jsonl", "large.jsonl"] {
        let text = std::fs::read_to_string(out.join(file)).unwrap();
        let (mut valid, mut strict_decided, mut lenient_decided, mut lines) = (0, 0, 0, 0);
        let (mut refused_alone, mut unreported, mut briefly_passed) = (0, 0, 0);
        let (mut lenient_refused, mut lenient_refused_alone) = (0, 0);
        let mut cache = std::collections::HashMap::new();
        for line in text.lines() {
            let reply: Value = serde_json::from_str(line).unwrap();
            let name = reply["contract"].as_str().unwrap().to_owned();
            let raw = reply["raw"].as_str().unwrap();
            let (strict, lenient) = cache.entry(name.clone()).or_insert_with(|| {
                (contract(&format!("{name}.schema.json")), contract(&format!("{name}.lenient.json")))
            });
            lines += 1;
            let is_valid = reply["fault"].is_null();
            valid += usize::from(is_valid);
            let s = same_verdict(strict, raw.as_bytes(), &name);
            let l = same_verdict(lenient, raw.as_bytes(), &name);
            if is_valid {
                strict_decided += usize::from(s);
                lenient_decided += usize::from(l);
                let brief = strict.check_str_briefly(raw, vouch::Refusals::Unreported);
                briefly_passed += usize::from(brief == vouch::Brief::PassedAsSent);
            } else {
                if !strict.check(raw).is_accepted() {
                    refused_alone += usize::from(strict.refuses_in_one_pass(raw));
                    unreported += usize::from(strict.check_str_unless_refused(raw).is_none());
                }
                if !lenient.check(raw).is_accepted() {
                    lenient_refused += 1;
                    lenient_refused_alone += usize::from(lenient.refuses_in_one_pass(raw));
                }
            }
        }
        println!(
            "{file}: {lines} replies, {valid} valid; single pass decided {strict_decided} strict, {lenient_decided} \
             lenient; {refused_alone} of {} faulty refused without the full path (strict), \
             {lenient_refused_alone} of {lenient_refused} (lenient)",
            lines - valid
        );
        // The corpus's faults (cut off, trailing commas, prose, wrong types,
        // missing or extra fields, bad enums and scores, non-objects) are all
        // refused by the single pass's read error or the streamed report.
        assert_eq!(refused_alone, lines - valid, "{file}: a faulty reply needed the full path");
        // And the pass alone, without the report, is certain of every one.
        println!("{file}: {unreported} of {} faulty refused before any report was written", lines - valid);
        assert_eq!(unreported, lines - valid, "{file}: a faulty reply was reported to be refused");
        // Lenient: what a repair may still change, and what an unwrap may
        // still find, is the full path's to report (the count is printed).
        assert!(lenient_refused_alone <= lenient_refused);
        // Every valid reply is strict JSON the strict contract allows: the
        // single pass must decide all of them, and every valid lenient one too.
        assert_eq!(strict_decided, valid, "{file}: the single pass stood aside on valid replies");
        assert_eq!(lenient_decided, valid, "{file}: the single pass stood aside on valid lenient replies");
        // The corpus's contracts declare no gate, and its valid replies need
        // no repair: each is told briefly, as passed as sent.
        println!("{file}: {briefly_passed} of {valid} valid told briefly as passed as sent");
        assert_eq!(briefly_passed, valid, "{file}: a valid reply was given a whole verdict");
    }
}

#[test]
fn json_test_suite_files() {
    let Some(dir) = common::shared_dir("suites/json-test-suite/test_parsing") else { return };
    let any = Contract::from_json_str("{}").unwrap();
    let objects = Contract::from_json_str(r#"{"type": "object", "properties": {"a": {"type": "array"}}}"#).unwrap();
    let arrays =
        Contract::from_json_str(r#"{"type": "array", "items": {"type": ["number", "string", "null"]}}"#).unwrap();
    let mut files = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let raw = std::fs::read(entry.unwrap().path()).unwrap();
        files += 1;
        for c in [&any, &objects, &arrays] {
            same_verdict(c, &raw, "json-test-suite");
        }
    }
    assert!(files > 300, "only {files} JSONTestSuite files");
}

/// Contracts written for the ways the single pass reads, each with replies
/// it decides and replies it must leave to the full path.
#[test]
fn each_way_of_reading() {
    // Each reply with whether the single pass decides it by itself.
    let cases: Vec<(Value, Vec<(&str, bool)>)> = vec![
        (
            // Aliases through `$ref`, recursion, closed objects.
            json!({
                "$defs": {"t": {"type": "object", "properties": {"v": {"type": "integer"},
                    "c": {"type": "array", "items": {"$ref": "#/$defs/t"}}}, "required": ["v"],
                    "additionalProperties": false}},
                "$ref": "#/$defs/t"
            }),
            vec![
                (r#"{"v": 1}"#, true),
                (r#"{"v": 1, "c": [{"v": 2, "c": []}, {"v": 3}]}"#, true),
                (r#"{"v": 1, "c": [{"v": 2, "c": [{"x": 1}]}]}"#, false),
                (r#"{"v": 1.5}"#, false),
                (r#"{"v": 9007199254740993}"#, false),
                (r#"{"v": 1, "v": 2}"#, false),
                (r#"{"v": 1, "\u0076": 2}"#, false),
                (r#"{"c": []}"#, false),
            ],
        ),
        (
            // Fills, nested and required, with repairs beside them.
            json!({
                "type": "object",
                "properties": {
                    "a": {"type": "string", "x-vouch": {"default": "none"}},
                    "n": {"type": "object", "properties": {
                        "b": {"type": "integer", "x-vouch": {"default": 0}},
                        "s": {"type": "string", "x-vouch": {"repair": ["trim"]}}}},
                    "list": {"type": "array", "items": {"type": "object", "properties": {
                        "r": {"type": "string", "x-vouch": {"default": ""}}}, "required": ["r"]}},
                    "score": {"type": "integer", "minimum": 0, "maximum": 10,
                        "x-vouch": {"repair": ["coerce", "round", "clamp"]}}
                },
                "required": ["a"],
                "maxProperties": 4
            }),
            vec![
                (r#"{}"#, true),
                (r#"{"a": "x"}"#, true),
                (r#"{"n": {}}"#, true),
                // Scalars repaired where they stand, logged as the repair pass logs them.
                (r#"{"n": {"s": " padded "}}"#, true),
                (r#"{"n": {"s": "tidy"}, "list": [{}, {"r": "y"}, {}]}"#, true),
                (r#"{"score": "7"}"#, true),
                (r#"{"list": [{}, {"r": "y"}, {}], "n": {"s": "tidy"}, "score": "7"}"#, true),
                (r#"{"list": [{}, {"r": 5}]}"#, false),
                (r#"{"score": 7.4}"#, true),
                (r#"{"score": 70}"#, true),
                (r#"{"score": "70.6"}"#, true),
                (r#"{"score": "x7"}"#, false),
                (r#"{"score": 7, "n": {}, "list": [], "extra": 1}"#, false),
                (r#"{"a": null}"#, true),
                (r#"{"a": null, "n": {"s": " x ", "b": null}, "score": "3"}"#, true),
            ],
        ),
        (
            // Open objects: hazards, stripping, an extra-property schema.
            json!({
                "type": "object",
                "properties": {
                    "open": {"type": "object", "properties": {"k": {"type": "string"}}},
                    "strip": {"type": "object", "properties": {"k": {"type": "string"}},
                        "additionalProperties": false, "x-vouch": {"repair": ["strip_unknown"]}},
                    "extra": {"type": "object", "additionalProperties": {"type": "integer"}}
                }
            }),
            vec![
                (r#"{"open": {"k": "v", "z": [1, {"y": null}]}}"#, true),
                (r#"{"open": {"__proto__": {"admin": true}}}"#, false),
                (r#"{"open": {"a\u200bb": 1}}"#, false),
                (r#"{"strip": {"k": "v"}}"#, true),
                (r#"{"strip": {"k": "v", "z": 1}}"#, false),
                (r#"{"extra": {"a": 1, "b": 2}}"#, true),
                (r#"{"extra": {"a": 1, "b": "2"}}"#, false),
            ],
        ),
        (
            // Tuples, bounds on items and properties, enums and combinators.
            json!({
                "type": "array",
                "prefixItems": [{"enum": ["a", "b"]}, {"type": "number", "multipleOf": 0.5}],
                "items": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                "minItems": 2,
                "maxItems": 4
            }),
            vec![
                (r#"["a", 1.5]"#, true),
                (r#"["a", 1.5, "x", null]"#, true),
                (r#"["a", 1.5, "x", null, "y"]"#, false),
                (r#"["c", 1.5]"#, false),
                (r#"["a", 1.25]"#, false),
                (r#"["a"]"#, false),
                (r#"["a", 1.5, 3]"#, false),
                ("  [\"b\" ,\n 2 ]  ", true),
                (r#"["b", 2] x"#, false),
            ],
        ),
        (
            // Keys: the name declared next is tried as raw bytes first; any
            // other key (escaped, out of order, undeclared, a name that needs
            // escaping) is read and looked up, and every repeat is the full
            // path's. Strings are checked where they stand.
            json!({
                "type": "object",
                "properties": {
                    "a": {"type": "string", "minLength": 2},
                    "b": {"enum": ["p", "q", 3]},
                    "c": {"type": "string", "pattern": "^[A-Z][0-9]$"},
                    "q\"uote": {"type": "string"}
                },
                "required": ["a", "b"],
                "additionalProperties": {"type": "integer"}
            }),
            vec![
                (r#"{"a": "xy", "b": "p"}"#, true),
                (r#"{"b": "q", "a": "xy"}"#, true),
                (r#"{"b": 3, "a": "xy"}"#, true),
                (r#"{"ab": 1, "a": "xy", "b": "p"}"#, true),
                (r#"{"\u0061": "xy", "b": "\u0070"}"#, true),
                (r#"{"a": "xy", "b": "p", "q\"uote": "s"}"#, true),
                (r#"{"a": "xy", "b": "p", "c": "A1"}"#, true),
                (r#"{"a": "xy", "b": "p", "a": "zz"}"#, false),
                (r#"{"a": "xy", "\u0061": "zz", "b": "p"}"#, false),
                (r#"{"a": "xy", "b": "p", "q\"uote": "s", "q\u0022uote": "t"}"#, false),
                (r#"{"a": "xy", "b": "p", "ab": 1, "ab": 2}"#, false),
                (r#"{"a": "x", "b": "p"}"#, false),
                (r#"{"a": "xy", "b": "r"}"#, false),
                (r#"{"a": "xy", "b": "3"}"#, false),
                (r#"{"a": "xy", "b": "p", "c": "a1"}"#, false),
                (r#"{"a": "xy", "b": "p", "z": "1"}"#, false),
                (r#"["a", "b"]"#, false),
                (r#""a""#, false),
            ],
        ),
        (
            // A fill whose name needs escaping and whose default nests past
            // the reply's depth limit: written into the text, read back whole.
            json!({
                "type": "object",
                "properties": {"o": {"type": "object", "properties": {
                    "q\"x/~": {"type": "object", "x-vouch": {"default": {"k": [1, {"z": null}]}}},
                    "n": {"type": "integer", "x-vouch": {"default": 3}}}}},
                "x-vouch": {"limits": {"max_depth": 2}}
            }),
            vec![
                (r#"{"o": {}}"#, true),
                (r#"{"o": {"n": 1}}"#, true),
                ("{\"o\": {\n}\n}", true),
                (r#"{"o": {"n": 1, "m": 2}}"#, true),
                (r#"{"o": {"n": [1]}}"#, false),
            ],
        ),
        (
            // Reports found while reading (no repairs declared): missing
            // properties before member problems, nested items, undeclared
            // members, a cap on problems, and what makes it stand aside.
            json!({
                "type": "object",
                "properties": {
                    "ok": {"type": "boolean"},
                    "score": {"type": "integer", "minimum": 0, "maximum": 100},
                    "tags": {"type": "array", "items": {"type": "object",
                        "properties": {"t": {"enum": ["x", "y"]}, "w": {"type": "number"}},
                        "required": ["t"], "additionalProperties": false}, "maxItems": 3},
                    "any": {"anyOf": [{"type": "string"}, {"type": "integer"}]}
                },
                "required": ["ok", "score"],
                "additionalProperties": false,
                "x-vouch": {"limits": {"max_problems": 3}}
            }),
            vec![
                (r#"{"ok": true, "score": 5, "tags": [{"t": "x"}, {"t": "y", "w": 1.5}], "any": 2}"#, true),
                (r#"{}"#, false),
                (r#"{"score": "5", "tags": [{"t": "z"}, {"w": "1"}, {"t": "x", "q": 1}]}"#, false),
                (r#"{"ok": 1, "score": 500, "extra": {"deep": [1, 2]}}"#, false),
                (r#"{"ok": true, "score": 5, "tags": [{"t": "x"}, {"t": "x"}, {"t": "x"}, {"t": "x"}]}"#, false),
                (r#"{"ok": true, "score": 5, "any": 1.5}"#, false),
                (r#"{"ok": true, "score": 5, "any": 9007199254740993}"#, false),
                (r#"{"ok": null, "score": 5, "score": 6}"#, false),
                (r#"{"ok": null, "score": 5,}"#, false),
                (r#"{"ok": null, "score": 1e999}"#, false),
                (r#"[{"ok": true, "score": 5}]"#, false),
                // Taken up where the single pass doubted: after an undeclared
                // key, at the close, and with a repeat after the doubt.
                (r#"{"ok": true, "extra": 1, "score": "x"}"#, false),
                (r#"{"extra": 1, "ok": true, "extra": 2}"#, false),
                (r#"{"ok": true, "tags": [{"t": "x"}]}"#, false),
                (r#"{"ok": true, "score": 5, "ok": false}"#, false),
                (r#"{"score": 5, "tags": [{"t": "q"}], "score": 5}"#, false),
            ],
        ),
    ];
    let mut mismatches = 0;
    for (schema, replies) in &cases {
        let contract = Contract::from_value(schema.clone()).unwrap();
        for (raw, decides) in replies {
            let alone = same_verdict(&contract, raw.as_bytes(), &schema.to_string());
            if alone != *decides {
                eprintln!("MISMATCH {raw}: decided {alone}");
            }
            mismatches += usize::from(alone != *decides);
            for d in damaged(raw.as_bytes()) {
                same_verdict(&contract, &d, &schema.to_string());
            }
        }
    }
    assert_eq!(mismatches, 0, "replies decided otherwise than expected (listed above)");
}

#[test]
fn limits_are_the_full_paths() {
    let contract = Contract::from_value(json!({
        "$defs": {"t": {"type": "array", "items": {"$ref": "#/$defs/t"}}},
        "$ref": "#/$defs/t",
        "x-vouch": {"limits": {"max_depth": 8, "max_bytes": 64}}
    }))
    .unwrap();
    for depth in 1..12 {
        let raw = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        let alone = same_verdict(&contract, raw.as_bytes(), "depth");
        assert_eq!(alone, depth <= 8, "depth {depth}");
    }
    let long = format!("[{}[]]", "[], ".repeat(20));
    assert!(!same_verdict(&contract, long.as_bytes(), "size"));
    assert_eq!(contract.check(&long).problems()[0].code.as_str(), "too_large");
}

#[test]
fn many_undeclared_keys_and_their_repeats() {
    // Past a few undeclared keys the pass looks repeats up by hash: the
    // verdict must not change where it switches.
    let contract =
        Contract::from_value(json!({"type": "object", "additionalProperties": {"type": "integer"}})).unwrap();
    for n in [15, 16, 17, 40] {
        let members: Vec<String> = (0..n).map(|i| format!("\"k{i}\": {i}")).collect();
        let distinct = format!("{{{}}}", members.join(", "));
        assert!(same_verdict(&contract, distinct.as_bytes(), "distinct keys"), "{n} distinct keys");
        for repeat in [0, n / 2, n - 1] {
            let twice = format!("{{{}, \"k{repeat}\": 0}}", members.join(", "));
            assert!(!same_verdict(&contract, twice.as_bytes(), "a repeat"), "{n} keys, k{repeat} twice");
            assert_eq!(contract.check(&twice).problems()[0].code.as_str(), "duplicate_key");
        }
    }
}

#[test]
fn accepted_as_sent_keeps_its_text() {
    let contract = Contract::from_value(json!({
        "type": "object",
        "properties": {"s": {"type": "string"}, "n": {"type": "integer", "x-vouch": {"default": 0}}}
    }))
    .unwrap();
    // Accepted as sent: the text is the output (white space around it
    // dropped), and the value read from it is the full path's.
    let raw = "\n  {\"s\": \"caf\\u00e9\",\n \"n\": 7}  \n";
    let vouch::Verdict::Accepted(a) = contract.check(raw) else { panic!("refused {raw:?}") };
    assert_eq!(a.json(), "{\"s\": \"caf\\u00e9\",\n \"n\": 7}");
    assert_eq!(a.value(), &json!({"s": "café", "n": 7}));
    assert_eq!(a.clone().into_value(), json!({"s": "café", "n": 7}));
    assert!(a.repairs.is_empty());
    // Filled: the default is written in as the object's last member.
    let vouch::Verdict::Accepted(a) = contract.check(" {\"s\": \"x\"}\n") else { panic!("refused") };
    assert_eq!(a.json(), r#"{"s": "x","n":0}"#);
    assert_eq!(a.value(), &json!({"s": "x", "n": 0}));
    assert_eq!(a.repairs.len(), 1);
    assert_eq!(a.repairs[0].path, "/n");
    let vouch::Verdict::Accepted(a) = contract.check("{ }") else { panic!("refused") };
    assert_eq!(a.json(), r#"{ "n":0}"#);
    // A number more precise than a double: readers would read different
    // values, so it is refused (docs/guarantees.md §4); one written with
    // more than 15 characters is handed on in vouch's own writing.
    let number = Contract::from_value(json!({"type": "object", "properties": {"x": {"type": "number"}}})).unwrap();
    assert_eq!(number.check(r#"{"x": 0.10000000000000000001}"#).problems()[0].code.as_str(), "imprecise_number");
    let vouch::Verdict::Accepted(a) = number.check(r#"{"x": 0.1000000000000000000}"#) else { panic!("refused") };
    assert_eq!(a.json(), r#"{"x":0.1}"#);
    let vouch::Verdict::Accepted(a) = number.check(r#"{"x": 12345678901234.5}"#) else { panic!("refused") };
    assert_eq!(a.json(), r#"{"x":12345678901234.5}"#);
    let vouch::Verdict::Accepted(a) = number.check(r#"{"x": 1.5e3, "y": [1, 2.0]}"#) else { panic!("refused") };
    assert_eq!(a.json(), r#"{"x":1500.0,"y":[1,2.0]}"#, "a part read whole is written by vouch");
    let vouch::Verdict::Accepted(a) = number.check(r#"{"x": 1.5e3}"#) else { panic!("refused") };
    assert_eq!(a.json(), r#"{"x": 1.5e3}"#);
    // Repaired otherwise: the built value, compact.
    let trimmed = Contract::from_value(json!({"type": "string", "x-vouch": {"repair": ["trim"]}})).unwrap();
    let vouch::Verdict::Accepted(a) = trimmed.check(r#"" x ""#) else { panic!("refused") };
    assert_eq!(a.json(), r#""x""#);
}

/// `max_repairs`: at every cap around the number of repairs a reply needs,
/// the single pass and the streamed report stand aside exactly where the
/// full path refuses (`too_many_repairs`), and agree with it elsewhere.
#[test]
fn repair_caps_are_the_full_paths() {
    let root = common::project_root().join("examples");
    let mut cases: Vec<(Contract, Vec<Vec<u8>>)> = Vec::new();
    for (name, dir) in [("plate", "plate"), ("eligibility", "eligibility")] {
        let text = std::fs::read_to_string(root.join(format!("contracts/{name}.json"))).unwrap();
        let contract = Contract::from_json_str(&text).unwrap();
        let replies = std::fs::read_dir(root.join("replies").join(dir))
            .unwrap()
            .map(|e| std::fs::read(e.unwrap().path()).unwrap())
            .collect();
        cases.push((contract, replies));
    }
    let clamp = json!({"type": "array", "items": {"type": "integer", "minimum": 1, "maximum": 9,
        "x-vouch": {"repair": ["clamp", "round", "coerce"]}}});
    let fills = json!({"type": "object", "properties": {
        "a": {"type": "integer", "minimum": 0, "x-vouch": {"repair": ["clamp"]}},
        "b": {"type": "string", "maxLength": 3, "x-vouch": {"repair": ["trim", "truncate"]}},
        "c": {"type": "object", "properties": {
            "d": {"type": "integer", "x-vouch": {"default": 1}},
            "e": {"type": "integer", "x-vouch": {"default": 2}}}},
        "f": {"type": "integer", "x-vouch": {"default": 3}},
        "g": {"type": "integer", "maximum": 5, "x-vouch": {"repair": ["clamp", "default_if_invalid"], "default": 0}}},
        "required": ["a", "c"]});
    // Objects missing a required property beside fills: reported at their
    // close only while the fills so far stay within the cap.
    let item = json!({"type": "object", "properties": {
        "x": {"type": "integer", "x-vouch": {"default": 0}},
        "y": {"type": "integer", "x-vouch": {"default": 0}},
        "r": {"type": "string"}}, "required": ["r"]});
    let missing = json!({"type": "object", "properties": {"p": item.clone(), "q": item}});
    let replies = |v: &[&str]| v.iter().map(|s| s.as_bytes().to_vec()).collect::<Vec<_>>();
    cases.push((
        Contract::from_value(missing).unwrap(),
        replies(&[r#"{"p": {}, "q": {}}"#, r#"{"p": {"r": "k"}, "q": {}}"#, r#"{"p": {}, "q": {"r": "k", "x": 1}}"#]),
    ));
    cases.push((
        Contract::from_value(clamp).unwrap(),
        replies(&["[]", "[0]", "[0,0]", "[0,5,0,\"3\",1.5]", "[0,0,0,0,0,\"x\"]", "[0,0,0,0,{}]", "[0,0,0,0,0"]),
    ));
    cases.push((
        Contract::from_value(fills).unwrap(),
        replies(&[
            "{}",
            r#"{"a": -1, "c": {}}"#,
            r#"{"a": -1, "b": " abcd ", "c": {}}"#,
            r#"{"a": -1, "b": " abcd ", "c": {"d": 0}, "g": 9}"#,
            r#"{"c": {}, "a": -1, "b": "x", "g": "no"}"#,
            r#"{"a": -1, "b": " ab ", "c": {"d": "x"}}"#,
            r#"{"a": -1, "b": " ab ", "c": {}, "z": 1}"#,
            r#"{"a": -1, "b": " ab ", "c": {}, "a": 2}"#,
            r#"{"a": -1, "b": " ab ", "c": {"e": 1}, "f": "no"}"#,
        ]),
    ));
    let mut capped = 0;
    for (contract, replies) in &cases {
        for raw in replies {
            for max in 1..=8 {
                let limits = vouch::Limits { max_repairs: max, ..contract.limits() };
                let c = contract.clone().with_limits(limits).unwrap();
                same_verdict(&c, raw, "max_repairs");
                let verdict = c.check(raw);
                assert!(verdict.repairs().iter().filter(|r| r.rule != "unwrap").count() <= max);
                if verdict.problems().iter().any(|p| p.code.as_str() == "too_many_repairs") {
                    capped += 1;
                    // Alone, but after the problems certain while reading (which the full path,
                    // stopping at the cap, does not list).
                    let mut stream = c.stream();
                    stream.feed(raw);
                    let before: Vec<_> =
                        verdict.problems().iter().filter(|p| p.code.as_str() != "too_many_repairs").collect();
                    assert_eq!(verdict.problems().len(), before.len() + 1);
                    assert!(before.iter().all(|p| stream.problems().contains(p)), "{before:?}");
                }
            }
        }
    }
    assert!(capped >= 20, "only {capped} replies hit the cap");
}

/// A node that is only a `$ref` is its target on every path: the full
/// path reports what the single pass reports (found by the compile fuzz
/// target, where an object reply with a hazardous key met a `$ref` root).
#[test]
fn a_bare_ref_is_its_target_on_every_path() {
    let c = vouch::Contract::from_value(serde_json::json!({"$defs": {"n": {"type": "number"}}, "$ref": "#/$defs/n"}))
        .unwrap();
    let v = c.check("{\"a\\u0000\": 1}");
    let codes: Vec<_> = v.problems().iter().map(|p| (p.code, p.path.clone())).collect();
    assert_eq!(codes, [(vouch::ProblemCode::WrongType, String::new())]);
    // Where the target takes objects, it reports the hazard itself.
    let c = vouch::Contract::from_value(serde_json::json!({"$defs": {"o": {"type": "object"}}, "$ref": "#/$defs/o"}))
        .unwrap();
    let v = c.check("{\"a\\u0000\": 1}");
    assert_eq!(v.problems().len(), 1, "{:?}", v.problems());
    assert_eq!(v.problems()[0].path, "/a\u{0}");
}

/// Numbers judged on their digits (a plain range) and by the evaluator give
/// the same verdicts: every bound kind, whole and fractional bounds, numbers
/// at and around each bound, written every way JSON allows.
#[test]
fn integer_ranges_judged_on_digits_are_the_evaluators() {
    let bounds = [
        json!({"minimum": 0, "maximum": 100}),
        json!({"exclusiveMinimum": 0, "exclusiveMaximum": 100}),
        json!({"minimum": -5}),
        json!({"maximum": -5}),
        json!({"minimum": 0.5, "maximum": 99.5}),
        json!({"exclusiveMinimum": -1.0, "maximum": 1e2}),
        json!({"minimum": 9007199254740991_i64}),
        json!({"maximum": -9007199254740993_i64}),
        json!({}),
        json!({"minimum": 0, "maximum": 100, "x-vouch": {"repair": ["coerce", "clamp", "default_if_invalid"], "default": 0}}),
        json!({"minimum": -3, "maximum": 10, "x-vouch": {"repair": ["clamp"]}}),
    ];
    let numbers = [
        "0",
        "-0",
        "1",
        "-1",
        "5",
        "-5",
        "-6",
        "-4",
        "99",
        "100",
        "101",
        "0.0",
        "100.0",
        "1e2",
        "1E2",
        "-1e0",
        "5.5",
        "007",
        "-",
        "1.",
        "123456789012345",
        "-12345678901234",
        "1234567890123456",
        "9007199254740993",
        "99 ",
    ];
    let mut decided = 0;
    for types in ["integer", "number"] {
        for bound in &bounds {
            let mut schema = json!({"type": "object", "properties": {"n": {"type": types}}, "required": ["n"]});
            for (k, v) in bound.as_object().unwrap() {
                schema["properties"]["n"][k] = v.clone();
            }
            let contract = Contract::from_json_str(&schema.to_string()).unwrap_or_else(|e| panic!("{schema}: {e}"));
            for n in numbers {
                for raw in [format!(r#"{{"n": {n}}}"#), format!(r#"{{"n":{n},"m":1}}"#), format!("[{n}]")] {
                    if same_verdict(&contract, raw.as_bytes(), &format!("{schema} on {raw}")) {
                        decided += 1;
                    }
                }
            }
        }
    }
    println!("integer ranges: {decided} replies decided by the single pass");
    assert!(decided > 100, "the single pass decided only {decided}");
}
