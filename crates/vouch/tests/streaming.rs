//! The streaming check (`Contract::stream`): exact, early, and at the end
//! the verdict `check` gives, byte for byte.
//!
//! - **Earliness**, a table: per kind of certain refusal, the exact number
//!   of bytes after which the stream refuses (one byte fewer is pending).
//! - **Exactness**, over the bundled examples, the benchmark corpus,
//!   JSONTestSuite and generated contracts and replies: at the byte where
//!   the stream refuses, a bounded search for an accepted completion finds
//!   none (the search's power is shown on prefixes that are pending: it
//!   finds completions there), the full path (read, repair, check, without
//!   the single pass) refuses the whole reply, and `check` lists every
//!   problem the stream gave.
//! - **Chunking**: fed one byte at a time, whole, and in random pieces
//!   (splitting UTF-8 characters and escapes), the stream refuses at the
//!   same byte with the same problems, and `finish` is `check`'s verdict.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod common;
#[path = "common/generated.rs"]
mod generated;

use std::cell::RefCell;
use std::path::Path;

use proptest::prelude::*;
use serde_json::{json, Value};
use vouch::{Contract, Problem, Progress};

const PLATE: &str = include_str!("../../../examples/contracts/plate.json");
const ELIGIBILITY: &str = include_str!("../../../examples/contracts/eligibility.json");

/// Debug builds (the plain `cargo test`) search less; release searches more.
const SCALE: usize = if cfg!(debug_assertions) { 1 } else { 4 };

fn c_plate() -> Contract {
    Contract::from_json_str(PLATE).unwrap()
}

fn contract(schema: &Value) -> Contract {
    Contract::from_value(schema.clone()).unwrap_or_else(|e| panic!("{schema}: {e}"))
}

/// Fed one byte at a time, stopping at the refusal: (decided at, problems).
fn bytewise(c: &Contract, raw: &[u8]) -> (Option<usize>, Vec<Problem>) {
    let mut s = c.stream();
    for (i, b) in raw.iter().enumerate() {
        if s.feed([*b]) == Progress::Refused {
            assert_eq!(s.decided_at(), Some(i + 1), "a byte-at-a-time stream refuses at the byte it was fed");
            return (s.decided_at(), s.problems().to_vec());
        }
        assert!(s.problems().is_empty());
    }
    (None, Vec::new())
}

fn codes(problems: &[Problem]) -> Vec<(String, String)> {
    problems.iter().map(|p| (p.code.as_str().to_owned(), p.path.clone())).collect()
}

// ---------------------------------------------------------------- earliness

#[test]
fn each_certain_refusal_is_decided_at_its_byte() {
    let closed = json!({
        "type": "object",
        "properties": {
            "verdict": {"enum": ["eligible", "ineligible", "needs_review"]},
            "score": {"type": "integer", "minimum": 0, "maximum": 100},
            "summary": {"type": "string", "maxLength": 5},
            "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
            "ok": {"type": "boolean"}
        },
        "required": ["verdict"],
        "additionalProperties": false
    });
    let deep = json!({"x-vouch": {"limits": {"max_depth": 3}}});
    let small = json!({"type": "string", "x-vouch": {"limits": {"max_bytes": 10}}});
    let anything = json!({});
    let branches = json!({"properties": {"x": {"anyOf": [{"type": "object"}, {"type": "null"}]}}});
    let trimmed = json!({"properties": {"s": {"type": "string", "x-vouch": {"repair": ["trim"]}}}});
    // (contract, reply, bytes after which it is refused, code, path)
    let cases: Vec<(&Value, &str, usize, &str, &str)> = vec![
        // A wrong type: at the byte that opens the value.
        (&closed, r#"{"ok":"no"}"#, 7, "wrong_type", "/ok"),
        (&closed, r#"{"ok":0}"#, 7, "wrong_type", "/ok"),
        // ... where the node declares repairs, but none touches this value: once it is whole.
        (&trimmed, r#"{"s": null, "t": 1}"#, 10, "wrong_type", "/s"),
        (&closed, r#"{"verdict":"eligible","tags":{"a":1}}"#, 30, "wrong_type", "/tags"),
        // A key the closed object does not allow: at its closing quote (its path is known there).
        (&closed, r#"{"review": {"verdict": "eligible"}}"#, 9, "unexpected_property", "/review"),
        // An enum value no member starts with: at the first character none has.
        (&closed, r#"{"verdict":"likely"}"#, 13, "not_allowed", "/verdict"),
        (&closed, r#"{"verdict":"eligibles"}"#, 21, "not_allowed", "/verdict"),
        (&closed, r#"{"verdict":"needs review"}"#, 18, "not_allowed", "/verdict"),
        // A string past maxLength: at its sixth character (é is two bytes, \u00e9 six).
        (&closed, r#"{"verdict":"eligible","summary":"abcdefgh"}"#, 39, "too_long", "/summary"),
        (&closed, r#"{"verdict":"eligible","summary":"ééééééé"}"#, 45, "too_long", "/summary"),
        (&closed, r#"{"verdict":"eligible","summary":"a\u00e9cdef"}"#, 44, "too_long", "/summary"),
        // An array past maxItems: at the comma that promises a third item.
        (&closed, r#"{"verdict":"eligible","tags":["a","b","c"]}"#, 38, "too_long", "/tags"),
        // A number out of range: at the byte that ends it (an exponent could still bring 142 to 1.42).
        (&closed, r#"{"verdict":"eligible","score":142}"#, 34, "out_of_range", "/score"),
        (&closed, r#"{"verdict":"eligible","score":-1,"ok":true}"#, 33, "out_of_range", "/score"),
        // A required property missing: at the closing brace.
        (&closed, r#"{"ok":true}"#, 11, "missing", "/verdict"),
        // A repeated key: at the repeat's closing quote, directed or read free.
        (&closed, r#"{"verdict":"eligible","verdict":"eligible"}"#, 31, "duplicate_key", "/verdict"),
        (&branches, r#"{"x":{"k":1,"k":2}}"#, 15, "duplicate_key", "/x/k"),
        // Too deep: at the bracket past the limit.
        (&deep, "[[[[1]]]]", 4, "too_deep", ""),
        // Too large: at the byte past max_bytes.
        (&small, r#""aaaaaaaaaaaaaa""#, 11, "too_large", ""),
        // Text before the JSON no unwrap allows, and after it.
        (&anything, r#"Here it is: {"a": 1}"#, 1, "not_json", ""),
        (&anything, r#"{"a": 1} thanks"#, 10, "trailing_text", ""),
        // Not JSON inside: a control character, a bad escape, a number's second point.
        (&anything, "{\"a\": \"x\ny\"}", 9, "not_json", ""),
        (&anything, r#"{"a": "\x"}"#, 9, "not_json", ""),
        (&anything, r#"{"a": 1.2.3}"#, 10, "not_json", ""),
    ];
    let mut shown = 0;
    for (schema, reply, at, code, path) in &cases {
        let c = contract(schema);
        let (decided, problems) = bytewise(&c, reply.as_bytes());
        assert_eq!(decided, Some(*at), "{reply}: {problems:?}");
        assert_eq!(codes(&problems)[0], ((*code).to_owned(), (*path).to_owned()), "{reply}");
        // One byte fewer is still pending.
        let mut s = c.stream();
        assert_eq!(s.feed(&reply.as_bytes()[..at - 1]), Progress::Pending, "{reply}");
        // Fed whole, the same byte and problems.
        let mut s = c.stream();
        s.feed(reply);
        assert_eq!((s.decided_at(), s.problems().to_vec()), (decided, problems.clone()), "{reply}");
        // And the whole reply's verdict lists them.
        let verdict = c.check(reply);
        for p in &problems {
            assert!(verdict.problems().iter().any(|v| v.code == p.code && v.path == p.path), "{reply}: {p}");
        }
        shown += 1;
    }
    // Only white space so far (Unicode's too: a reply of nothing else is empty, its own
    // refusal): pending; the first other byte decides (the stream fuzz target found a
    // byte-at-a-time stream that stopped at a form feed and never refused).
    let (decided, problems) = bytewise(&c_plate(), b"\x0c]");
    assert_eq!((decided, problems[0].code.as_str()), (Some(2), "not_json"));
    assert_eq!(bytewise(&c_plate(), "\u{a0} \u{2003}".as_bytes()).0, None);
    assert_eq!(c_plate().check("\u{a0} ").problems()[0].code.as_str(), "empty_reply");
    // Invalid UTF-8: at the byte no character starts with.
    let c = contract(&anything);
    let (decided, problems) = bytewise(&c, b"{\"a\": \"\xff\"}");
    assert_eq!((decided, problems[0].code.as_str()), (Some(8), "not_json"));
    let (decided, _) = bytewise(&c, b"{\"a\": \"\xe2\x28\"}");
    assert_eq!(decided, Some(9), "a lead byte is pending until the byte that cannot follow it");
    common::figure(&format!("streaming earliness: {} cases, each refused at its byte", shown + 2));
}

#[test]
fn what_may_still_be_saved_stays_pending() {
    let pending = |schema: Value, reply: &str| {
        let c = contract(&schema);
        assert_eq!(bytewise(&c, reply.as_bytes()).0, None, "{schema} {reply}");
        c.check(reply)
    };
    // An unwrap is declared: the JSON may be elsewhere in the reply.
    let fenced = pending(
        json!({"properties": {"ok": {"type": "boolean"}}, "x-vouch": {"unwrap": ["fence", "prose"]}}),
        r#"{"ok": "no"}"#,
    );
    assert!(!fenced.is_accepted());
    // A repair may mend it: coerce the string, trim, clamp, a default for the missing property.
    let coerced = pending(
        json!({"properties": {"score": {"type": "integer", "maximum": 100, "x-vouch": {"repair": ["coerce", "clamp"]}}}}),
        r#"{"score": "142"}"#,
    );
    assert!(coerced.is_accepted());
    let filled = pending(
        json!({"properties": {"a": {"type": "integer", "x-vouch": {"default": 1}}}, "required": ["a"]}),
        r#"{}"#,
    );
    assert!(filled.is_accepted());
    // Under a repair that drops or replaces the container, a failure below is not certain.
    let dropped = pending(
        json!({"type": "array", "items": {"type": "integer"}, "x-vouch": {"repair": ["drop_invalid_items"]}}),
        r#"[1, "x", 2]"#,
    );
    assert!(dropped.is_accepted());
    // A pattern on a prefix, branches and uniqueness are decided when the value is whole.
    let c = contract(&json!({"properties": {"s": {"type": "string", "pattern": "^a+$"}}}));
    assert_eq!(bytewise(&c, br#"{"s": "ab"#).0, None);
    assert_eq!(bytewise(&c, br#"{"s": "ab"}"#).0, Some(10), "at the closing quote: the string is whole");
    let c = contract(&json!({"type": "array", "uniqueItems": true}));
    assert_eq!(bytewise(&c, b"[1, 1").0, None);
    assert_eq!(bytewise(&c, b"[1, 1]").0, Some(6));
}

// ---------------------------------------------------------------- the search

/// What is open at the end of a prefix, read leniently (the prefix is
/// strict JSON as far as it goes, or the stream would have refused it).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Open {
    Object,
    Array,
}

/// A rough read of a prefix: the open containers, and whether it ends in
/// a string (and whether that string is a key).
fn shape(prefix: &[u8]) -> (Vec<Open>, Option<bool>, bool) {
    let (mut stack, mut in_string, mut escaped) = (Vec::new(), false, false);
    let mut key = false;
    let mut expect_key = false;
    for &b in prefix {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => {
                in_string = true;
                key = expect_key;
                expect_key = false;
            }
            b'{' => {
                stack.push(Open::Object);
                expect_key = true;
            }
            b'[' => stack.push(Open::Array),
            b'}' | b']' => {
                stack.pop();
            }
            b',' => expect_key = stack.last() == Some(&Open::Object),
            b':' => expect_key = false,
            _ => {}
        }
    }
    let ends_in_string = in_string.then_some(key);
    (stack, ends_in_string, escaped)
}

/// Suffixes that may complete `prefix` into an accepted reply: the rest of
/// each accepted reply from every byte on, and closers built on the
/// prefix's open containers with a few values where a value is due.
fn completions(prefix: &[u8], accepted: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = Vec::new();
    for a in accepted {
        for k in 0..=a.len() {
            out.push(a[k..].to_vec());
        }
    }
    let (stack, in_string, escaped) = shape(prefix);
    let close: String = stack.iter().rev().map(|o| if *o == Open::Object { '}' } else { ']' }).collect();
    let values = ["", "0", "1", "true", "false", "null", "\"\"", "\"a\"", "{}", "[]", "0}", "1]"];
    let mut heads: Vec<String> = vec![String::new()];
    if escaped {
        heads = vec!["n\"".into(), "\"\"".into()];
    } else if let Some(is_key) = in_string {
        heads = vec!["\"".into(), "a\"".into(), "0\"".into()];
        if is_key {
            heads = heads.into_iter().flat_map(|h| values.iter().map(move |v| format!("{h}:{v}"))).collect();
        }
    }
    for h in &heads {
        for v in values {
            for sep in ["", ",", ":"] {
                out.push(format!("{h}{sep}{v}{close}").into_bytes());
                out.push(format!("{h}{v}{close}").into_bytes());
            }
        }
        out.push(format!("{h}{close}").into_bytes());
    }
    // Digits and exponents for a number left open.
    for tail in ["0", "1", "e-1", "e-2", "e0", ".5", "e1", "5"] {
        out.push(format!("{tail}{close}").into_bytes());
    }
    out.sort();
    out.dedup();
    out
}

/// A completion of `prefix` the contract accepts, among those tried.
fn accepted_completion(c: &Contract, prefix: &[u8], accepted: &[Vec<u8>]) -> Option<Vec<u8>> {
    completions(prefix, accepted)
        .into_iter()
        .map(|s| [prefix, &s[..]].concat())
        .find(|whole| c.check(whole).is_accepted())
}

#[derive(Default, Debug)]
struct Tally {
    replies: usize,
    refused_early: usize,
    /// Refused at a byte before the reply's end.
    saved_bytes: usize,
    total_bytes: usize,
    /// Pending prefixes searched, and how many the search completed.
    controls: usize,
    controls_found: usize,
}

/// The streaming properties on one reply; `accepted`: accepted replies to
/// the same contract, for the search.
fn holds(c: &Contract, raw: &[u8], accepted: &[Vec<u8>], search: bool, tally: &mut Tally, seed: u64) {
    tally.replies += 1;
    tally.total_bytes += raw.len();
    let (decided, problems) = bytewise(c, raw);
    let verdict = c.check(raw);
    // Fed whole, and in random pieces: the same refusal, and check's verdict at the end.
    let mut whole = c.stream();
    whole.feed(raw);
    assert_eq!((whole.decided_at(), whole.problems().to_vec()), (decided, problems.clone()), "whole: {raw:?}");
    assert_eq!(whole.finish().to_json(), verdict.to_json(), "finish vs check on {:?}", String::from_utf8_lossy(raw));
    let mut rng = seed | 1;
    for _ in 0..2 {
        let mut s = c.stream();
        let mut at = 0;
        while at < raw.len() {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            let len = 1 + (rng % 9) as usize;
            let end = (at + len).min(raw.len());
            s.feed(&raw[at..end]);
            at = end;
        }
        assert_eq!((s.decided_at(), s.problems().to_vec()), (decided, problems.clone()), "pieces: {raw:?}");
        assert_eq!(s.finish().to_json(), verdict.to_json(), "pieces: finish vs check");
    }
    let Some(n) = decided else {
        if search && verdict.is_accepted() {
            // Control: a prefix of an accepted reply is pending, and the search completes it.
            let cut = raw.len() / 2;
            tally.controls += 1;
            tally.controls_found += usize::from(accepted_completion(c, &raw[..cut], accepted).is_some());
        }
        return;
    };
    tally.refused_early += 1;
    tally.saved_bytes += raw.len() - n;
    // The full path (no single pass) refuses the whole reply, and check lists the stream's problems.
    assert!(!c.check_full_path(raw).is_accepted(), "the full path accepts what the stream refused: {raw:?}");
    assert!(!verdict.is_accepted());
    for p in &problems {
        assert!(
            verdict.problems().iter().any(|v| v.code == p.code && v.path == p.path),
            "{p} not among check's {:?} on {:?}",
            verdict.problems(),
            String::from_utf8_lossy(raw)
        );
    }
    if search {
        let prefix = &raw[..n];
        if let Some(found) = accepted_completion(c, prefix, accepted) {
            panic!(
                "refused after {n} bytes, but {:?} completes {:?} into an accepted reply",
                String::from_utf8_lossy(&found[n..]),
                String::from_utf8_lossy(prefix)
            );
        }
        // Control: one byte fewer is pending; count how often the search completes it.
        tally.controls += 1;
        tally.controls_found += usize::from(accepted_completion(c, &raw[..n - 1], accepted).is_some());
    }
}

fn report(what: &str, t: &Tally) {
    common::figure(&format!(
        "streaming, {what}: {} replies, {} refused before their end ({} of {} bytes after the deciding byte); the \
         search completed {} of {} pending prefixes and none of the refused ones",
        t.replies, t.refused_early, t.saved_bytes, t.total_bytes, t.controls_found, t.controls
    ));
}

#[test]
fn examples_hold() {
    let root = common::project_root().join("examples");
    let mut tally = Tally::default();
    for (name, schema) in [("plate", PLATE), ("eligibility", ELIGIBILITY)] {
        let c = Contract::from_json_str(schema).unwrap();
        let mut replies: Vec<Vec<u8>> = std::fs::read_dir(root.join("replies").join(name))
            .unwrap()
            .map(|e| std::fs::read(e.unwrap().path()).unwrap())
            .collect();
        replies.sort();
        let accepted: Vec<Vec<u8>> = replies.iter().filter(|r| c.check(r).is_accepted()).cloned().collect();
        for (i, raw) in replies.iter().enumerate() {
            holds(&c, raw, &accepted, true, &mut tally, i as u64);
            // Every prefix too: a reply cut off anywhere.
            for cut in (1..raw.len()).step_by(3) {
                holds(&c, &raw[..cut], &accepted, false, &mut tally, cut as u64);
            }
        }
    }
    report("examples", &tally);
    assert!(tally.refused_early > 10);
}

#[test]
fn json_test_suite_holds() {
    let Some(dir) = common::shared_dir("suites/json-test-suite/test_parsing") else { return };
    let mut files: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let contracts = [Contract::from_json_str("{}").unwrap(), Contract::from_json_str(PLATE).unwrap()];
    let mut tally = Tally::default();
    for path in &files {
        let raw = std::fs::read(path).unwrap();
        if raw.len() > 100_000 {
            continue;
        }
        for c in &contracts {
            holds(c, &raw, &[], true, &mut tally, raw.len() as u64);
        }
    }
    report("JSONTestSuite", &tally);
    assert!(tally.replies >= 2 * 300);
}

#[test]
fn benchmark_corpus_holds() {
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("streaming-corpus");
    let Some((bench, out)) = common::bench_corpus(&out, 400 * SCALE, 8) else { return };
    let load = |name: &str| {
        let text = std::fs::read_to_string(bench.join("contracts").join(name)).unwrap();
        Contract::from_json_str(&text).unwrap()
    };
    let mut contracts = std::collections::HashMap::new();
    let mut replies: Vec<(String, Vec<u8>)> = Vec::new();
    for file in ["small.jsonl", "large.jsonl"] {
        for line in std::fs::read_to_string(out.join(file)).unwrap().lines() {
            let reply: Value = serde_json::from_str(line).unwrap();
            let name = reply["contract"].as_str().unwrap().to_owned();
            replies.push((name, reply["raw"].as_str().unwrap().as_bytes().to_vec()));
        }
    }
    for (strictness, suffix) in [("strict", "schema"), ("lenient", "lenient")] {
        let mut tally = Tally::default();
        for (name, _) in &replies {
            contracts.entry((name.clone(), suffix)).or_insert_with(|| load(&format!("{name}.{suffix}.json")));
        }
        let mut accepted: std::collections::HashMap<&str, Vec<Vec<u8>>> = std::collections::HashMap::new();
        for (name, raw) in &replies {
            let c = &contracts[&(name.clone(), suffix)];
            let list = accepted.entry(name.as_str()).or_default();
            if list.len() < 3 && raw.len() < 2000 && c.check(raw).is_accepted() {
                list.push(raw.clone());
            }
        }
        for (i, (name, raw)) in replies.iter().enumerate() {
            let c = &contracts[&(name.clone(), suffix)];
            let search = i % (4 / SCALE.min(4)).max(1) == 0 && raw.len() < 4000;
            holds(c, raw, &accepted[name.as_str()], search, &mut tally, i as u64);
        }
        report(&format!("benchmark corpus, {strictness}"), &tally);
        if strictness == "strict" {
            assert!(tally.refused_early * 10 >= tally.replies, "few faulty replies refused early: {tally:?}");
        }
    }
}

// ---------------------------------------------------------------- generated

#[test]
fn generated_contracts_and_replies_hold() {
    let tally = RefCell::new(Tally::default());
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: 120 * SCALE as u32,
        failure_persistence: None,
        ..ProptestConfig::default()
    });
    let result =
        runner.run(&(generated::schema(), proptest::collection::vec(generated::reply(), 12)), |(schema, replies)| {
            let Ok(c) = Contract::from_value(schema.clone()) else { return Ok(()) };
            let accepted: Vec<Vec<u8>> = replies.iter().filter(|r| c.check(r).is_accepted()).cloned().collect();
            for (i, raw) in replies.iter().enumerate() {
                let mut t = tally.borrow_mut();
                let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    holds(&c, raw, &accepted, true, &mut t, i as u64);
                }));
                if outcome.is_err() {
                    return Err(TestCaseError::fail(format!(
                        "contract {schema}\nreply {:?}",
                        String::from_utf8_lossy(raw)
                    )));
                }
            }
            Ok(())
        });
    let t = tally.into_inner();
    report("generated", &t);
    result.unwrap();
    assert!(t.refused_early > 50, "{t:?}");
}

/// Validated partials: only members that came whole and valid, never one
/// that might still change, and never once refused.
#[test]
fn partials_show_what_came_whole_and_valid() {
    let c = Contract::from_json_str(ELIGIBILITY).unwrap();
    let reply = std::fs::read(common::project_root().join("examples/replies/eligibility/valid.json")).unwrap();
    let whole: Value = serde_json::from_slice(&reply).unwrap();
    let mut s = c.stream();
    let mut seen = 0;
    for b in &reply {
        s.feed([*b]);
        if let Some(Value::Object(partial)) = s.partial() {
            // Every member shown is the whole reply's own, as it will be accepted.
            for (k, v) in &partial {
                let final_value = &whole[k];
                if v.is_object() || v.is_array() {
                    // A container being read: its own part, each member as it will be.
                    if let (Value::Object(p), Value::Object(f)) = (v, final_value) {
                        assert!(p.iter().all(|(k, v)| &f[k] == v), "{k}");
                    }
                } else {
                    assert_eq!(v, final_value, "{k}");
                }
            }
            seen = seen.max(partial.len());
        }
    }
    assert!(seen >= 3, "the partial grew to {seen} members");
    assert!(s.finish().is_accepted());
    // A member is shown once its value closed: a string only after its closing quote.
    let plate = Contract::from_json_str(PLATE).unwrap();
    let mut s = plate.stream();
    s.feed(r#"{"productPresent": false, "productTextPresent": tr"#);
    assert_eq!(s.partial(), Some(json!({"productPresent": false})));
    s.feed("ue");
    assert_eq!(s.partial(), Some(json!({"productPresent": false, "productTextPresent": true})));
    // A number is whole only at the byte after it.
    let c = contract(&json!({"properties": {"n": {"type": "integer"}, "m": {"type": "integer"}}}));
    let mut n = c.stream();
    n.feed(r#"{"n": 12"#);
    assert_eq!(n.partial(), Some(json!({})));
    n.feed("3,");
    assert_eq!(n.partial(), Some(json!({"n": 123})));
    // Refused: nothing is shown.
    s.feed(r#""garbledText": "no""#);
    assert_eq!(s.progress(), Progress::Refused);
    assert_eq!(s.partial(), None);
    // A value a repair will change is not shown as it came.
    let trim = contract(
        &json!({"properties": {"s": {"type": "string", "x-vouch": {"repair": ["trim"]}}, "n": {"type": "integer"}}}),
    );
    let mut s = trim.stream();
    s.feed(r#"{"s": " padded ", "n": 1,"#);
    assert_eq!(s.partial(), Some(json!({"n": 1})));
}
