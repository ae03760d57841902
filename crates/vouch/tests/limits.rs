//! Hostile replies: every one is refused (or accepted) with the exact code,
//! quickly, without unbounded recursion. The depth cases run on a thread with
//! a deliberately small stack, so a reader that recursed on input depth would
//! overflow it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod common;

use serde_json::json;
use vouch::{CompileErrorKind, Contract, Limits, Problem, Verdict};

const MIB: usize = 1024 * 1024;

/// Small enough that recursing once per level of a million-deep reply
/// (or even a few thousand levels) would overflow it.
const SMALL_STACK: usize = 256 * 1024;

fn contract(schema: &str) -> Contract {
    Contract::from_json_str(schema).unwrap()
}

fn with_limits(schema: &str, f: impl FnOnce(Limits) -> Limits) -> Contract {
    contract(schema).with_limits(f(Limits::default())).unwrap()
}

/// Run `f` on a thread with a small stack; a stack overflow aborts the
/// test binary, a panic fails the test.
fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new().name("small-stack".into()).stack_size(SMALL_STACK).spawn(f).unwrap().join().unwrap()
}

/// The verdict of a reply over `max_bytes`: `too_large` at the root, after
/// the problems (if any) the streaming check found certain within the
/// first `max_bytes` bytes — each also the refusal of that part alone.
#[track_caller]
fn assert_refused_too_large(c: &Contract, raw: &[u8]) {
    let verdict = c.check(raw);
    let problems = verdict.problems();
    let last = problems.last().expect("a problem");
    assert_eq!((last.code.as_str(), last.path.as_str()), ("too_large", ""), "{problems:?}");
    let mut stream = c.stream();
    stream.feed(raw);
    let certain = stream.problems();
    assert!(certain.len() <= problems.len());
    if certain.first().is_some_and(|p| p.code.as_str() != "too_large") {
        assert_eq!(&problems[..problems.len() - 1], certain, "the certain problems come first");
        assert!(stream.decided_at().unwrap() <= c.limits().max_bytes);
    } else {
        assert_eq!(problems.len(), 1, "{problems:?}");
    }
}

/// The verdict is a refusal with exactly one problem, of `code`, at `path`.
#[track_caller]
fn assert_refused_one(verdict: &Verdict, code: &str, path: &str) -> Problem {
    let problems = verdict.problems();
    assert!(!verdict.is_accepted(), "expected refusal {code} at {path:?}, got accepted");
    assert_eq!(
        problems.len(),
        1,
        "expected one problem {code}, got {:?}",
        problems.iter().map(ToString::to_string).collect::<Vec<_>>()
    );
    let p = &problems[0];
    assert_eq!(p.code.as_str(), code, "{p}");
    assert_eq!(p.path, path, "{p}");
    p.clone()
}

/// `[[[[…` `depth` times, then the closing brackets when `closed`.
fn nested_arrays(depth: usize, closed: bool) -> Vec<u8> {
    let mut raw = vec![b'['; depth];
    if closed {
        raw.resize(depth * 2, b']');
    }
    raw
}

/// `{"a":{"a":…` `depth` times, then `1` and the closing braces when `closed`.
fn nested_objects(depth: usize, closed: bool) -> Vec<u8> {
    let mut raw = b"{\"a\":".repeat(depth);
    if closed {
        raw.push(b'1');
        raw.extend(std::iter::repeat_n(b'}', depth));
    }
    raw
}

// ---------------------------------------------------------------- depth

#[test]
fn million_deep_arrays_are_too_deep() {
    on_small_stack(|| {
        let c = contract("{}");
        for closed in [false, true] {
            let p = assert_refused_one(&c.check(nested_arrays(1_000_000, closed)), "too_deep", "");
            // Refused at the first bracket past the limit.
            assert_eq!(p.position.unwrap().offset, 128);
        }
    });
}

#[test]
fn million_deep_objects_are_too_deep() {
    on_small_stack(|| {
        // 5 MB open, 6 MB closed: over the default size limit, which is
        // checked first, so raise it to let the reader meet the depth.
        let c = contract("{}");
        assert_refused_too_large(&c, &nested_objects(1_000_000, false));
        let c = with_limits("{}", |l| Limits { max_bytes: 16 * MIB, ..l });
        assert_eq!(c.limits().max_depth, 128);
        for closed in [false, true] {
            let p = assert_refused_one(&c.check(nested_objects(1_000_000, closed)), "too_deep", "");
            assert_eq!(p.position.unwrap().offset, 128 * 5);
        }
        // Within the size limit: 800,000 levels.
        let p = assert_refused_one(&contract("{}").check(nested_objects(800_000, false)), "too_deep", "");
        assert_eq!(p.position.unwrap().offset, 128 * 5);
    });
}

#[test]
fn million_deep_is_too_deep_at_the_depth_cap() {
    on_small_stack(|| {
        let c = with_limits("{}", |l| Limits { max_depth: Limits::MAX_DEPTH_CAP, max_bytes: 16 * MIB, ..l });
        assert_eq!(c.limits().max_depth, 512);
        assert_refused_one(&c.check(nested_arrays(1_000_000, true)), "too_deep", "");
        assert_refused_one(&c.check(nested_objects(1_000_000, true)), "too_deep", "");
        // One past the cap is refused.
        assert_refused_one(&c.check(nested_arrays(513, true)), "too_deep", "");
        assert_refused_one(&c.check(nested_objects(513, true)), "too_deep", "");
    });
}

/// Run `f` on a thread with the default stack of a spawned thread (2 MiB).
fn on_default_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new().name("default-stack".into()).stack_size(2 * MIB).spawn(f).unwrap().join().unwrap()
}

/// `[[[…1…]]]` `depth` deep with `leaf` at the bottom.
fn arrays_around(depth: usize, leaf: &[u8]) -> Vec<u8> {
    let mut raw = nested_arrays(depth, false);
    raw.extend_from_slice(leaf);
    raw.resize(raw.len() + depth, b']');
    raw
}

/// `{"a":{"a":…leaf…}}` `depth` deep.
fn objects_around(depth: usize, leaf: &[u8]) -> Vec<u8> {
    let mut raw = nested_objects(depth, false);
    raw.extend_from_slice(leaf);
    raw.extend(std::iter::repeat_n(b'}', depth));
    raw
}

/// At the cap itself the reply is accepted. Checking (unlike reading)
/// recurses once per level; the cap is what keeps that inside a 2 MiB stack,
/// the default for spawned threads, so this runs on exactly that.
#[test]
fn depth_cap_itself_is_accepted_on_a_default_stack() {
    on_default_stack(|| {
        for schema in ["{}", r##"{"items": {"$ref": "#"}}"##] {
            let c = with_limits(schema, |l| Limits { max_depth: Limits::MAX_DEPTH_CAP, ..l });
            for raw in [arrays_around(512, b"1"), objects_around(512, b"1")] {
                let v = c.check(&raw);
                assert!(v.is_accepted(), "{schema}: {:?}", v.problems());
            }
        }
        // A refusal at the bottom is found and reported with its full path.
        let c = with_limits(r##"{"items": {"$ref": "#"}, "type": "array"}"##, |l| Limits {
            max_depth: Limits::MAX_DEPTH_CAP,
            ..l
        });
        let v = c.check(arrays_around(511, b"1"));
        let p = assert_refused_one(&v, "wrong_type", &"/0".repeat(511));
        assert_eq!(p.got, "1");
    });
}

/// A recursive contract whose every level goes through a few applicators
/// (`allOf`, `anyOf`, `$ref`, `additionalProperties`): checking recurses
/// several frames per level of the reply, so the stack used per level
/// depends on the contract's shape, not only on the reply's depth.
fn layered_contract(all_of_layers: usize) -> String {
    let mut schema = r##"{"anyOf": [{"type": "integer"}, {"type": "array", "items": {"$ref": "#"}}, {"type": "object", "additionalProperties": {"$ref": "#"}}]}"##.to_owned();
    for _ in 0..all_of_layers {
        schema = format!(r#"{{"allOf": [{schema}]}}"#);
    }
    schema
}

/// `check` never fails: a reply within the limits gets a verdict on a
/// default 2 MiB thread stack, whatever the (compiled) contract.
///
/// The checker recurses per level of the reply and per applicator of the
/// contract; the recursion runs on a stack that grows on the heap when the
/// thread's runs low (`crate::deeper`), so a recursive contract at the depth
/// cap, or 32 nested `allOf` layers at the default depth, still gets a
/// verdict. (Found by this test: before the fix, a stack overflow aborted
/// the process.)
#[test]
fn check_never_overflows_the_default_stack() {
    on_default_stack(|| {
        let c = with_limits(&layered_contract(0), |l| Limits { max_depth: Limits::MAX_DEPTH_CAP, ..l });
        assert!(c.check(objects_around(512, b"1")).is_accepted());
        assert!(c.check(arrays_around(512, b"1")).is_accepted());
        assert!(!c.check(objects_around(512, b"true")).is_accepted());

        let c = contract(&layered_contract(32));
        assert_eq!(c.limits().max_depth, 128);
        assert!(c.check(objects_around(128, b"1")).is_accepted());
        assert!(!c.check(objects_around(128, b"true")).is_accepted());
    });
}

#[test]
fn depth_above_the_cap_is_rejected_by_with_limits() {
    let limits = Limits { max_depth: Limits::MAX_DEPTH_CAP + 1, ..Limits::default() };
    assert_eq!(limits.max_depth, 513);
    let err = contract("{}").with_limits(limits).unwrap_err();
    assert_eq!(err.kind, CompileErrorKind::BadPolicy, "{err}");
    for zero in [
        Limits { max_depth: 0, ..Limits::default() },
        Limits { max_bytes: 0, ..Limits::default() },
        Limits { max_problems: 0, ..Limits::default() },
    ] {
        assert!(contract("{}").with_limits(zero).is_err(), "{zero:?}");
    }
}

#[test]
fn four_mib_of_open_brackets_is_too_deep() {
    on_small_stack(|| {
        let raw = vec![b'['; 4 * MIB];
        assert_eq!(raw.len(), Limits::default().max_bytes, "exactly at the size limit");
        assert_refused_one(&contract("{}").check(&raw), "too_deep", "");
    });
}

// ---------------------------------------------------------------- size

#[test]
fn hundred_mb_reply_is_too_large() {
    // The size check comes before any reading, so this costs nothing but the
    // allocation: a reply that would otherwise be read in full.
    let mut raw = vec![b' '; 100_000_000];
    raw[0] = b'"';
    raw[99_999_999] = b'"';
    let p = assert_refused_one(&contract("{}").check(&raw), "too_large", "");
    assert_eq!(p.got, "100000000 bytes");
    assert_eq!(p.class.as_str(), "no_answer");
}

#[test]
fn one_byte_over_the_limit_is_too_large() {
    let c = contract("{}");
    let mut raw = vec![b' '; 4 * MIB];
    raw[0] = b'1';
    assert!(c.check(&raw).is_accepted(), "exactly at the limit");
    raw.push(b' ');
    assert_refused_one(&c.check(&raw), "too_large", "");
}

/// A reader that holds only a reply's start (and knows how long the rest
/// is) gets `check`'s verdict on the whole reply: the start fed, the rest
/// counted with `feed_past_limit` (and `check_start`, which does both),
/// wherever past the limit the start ends.
/// Problems certain within the limit, invalid UTF-8 before and after it, and
/// characters the limit or the cut falls inside all come out as `check`'s.
#[test]
fn the_rest_of_a_reply_past_the_limit_is_counted_not_read() {
    let c = contract(
        r#"{"type": "object", "properties": {"a": {"type": "boolean"}, "s": {"type": "string"}},
            "x-vouch": {"limits": {"max_bytes": 64}}}"#,
    );
    let long = |head: &[u8], fill: &[u8], tail: &[u8], len: usize| {
        let mut raw = head.to_vec();
        while raw.len() + tail.len() < len {
            raw.extend_from_slice(fill);
        }
        raw.extend_from_slice(tail);
        raw
    };
    let replies = [
        long(br#"{"s": ""#, b"x", br#""}"#, 200),
        long(br#"{"a": "no", "s": ""#, b"x", br#""}"#, 200),
        long(br#"{"s": ""#, "é≥𝄞".as_bytes(), br#""}"#, 300),
        long(br#"{"s": ""#, b"x", b"\xff\xfe\"}", 150),
        long(b"\xff{\"s\": \"", b"x", br#""}"#, 100),
        long(b"  [", b"1, ", b"1]", 120),
        long(b"", b" ", b"", 65),
    ];
    for raw in &replies {
        let whole = c.check(raw);
        assert!(whole.problems().iter().any(|p| p.code.as_str() == "too_large"), "{whole:?}");
        for k in 0..=raw.len() {
            let mut stream = c.stream();
            stream.feed(&raw[..k]);
            if k <= 64 {
                assert!(!stream.feed_past_limit(raw.len() - k), "within the limit at {k}");
                assert_eq!(c.check_start(&raw[..k], raw.len()), None, "within the limit at {k}");
                continue;
            }
            assert!(stream.feed_past_limit(raw.len() - k));
            assert_eq!(stream.finish(), whole, "fed {k} of {} bytes", raw.len());
            assert_eq!(c.check_start(&raw[..k], raw.len()).as_ref(), Some(&whole), "{k} of {}", raw.len());
        }
    }
}

#[test]
fn ten_mb_of_invalid_utf8() {
    let raw = vec![0xFF_u8; 10_000_000];
    assert_refused_too_large(&contract("{}"), &raw);

    let c = with_limits("{}", |l| Limits { max_bytes: 16 * MIB, ..l });
    let p = assert_refused_one(&c.check(&raw), "not_json", "");
    let pos = p.position.expect("a position");
    assert_eq!((pos.line, pos.column, pos.offset), (1, 1, 0));

    // The position points at the first bad byte, after valid text.
    let mut raw = b"{\"a\":\n \"".to_vec();
    raw.resize(10_000_000, 0xC3);
    let p = assert_refused_one(&c.check(&raw), "not_json", "");
    let pos = p.position.expect("a position");
    assert_eq!((pos.line, pos.column, pos.offset), (2, 3, 8));
}

// ---------------------------------------------------------------- breadth

/// `{"k0":0,"k1":1,…}` with `n` keys.
fn wide_object(n: usize) -> String {
    let mut out = String::with_capacity(n * 16);
    out.push('{');
    for i in 0..n {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&format!("\"k{i}\":{i}"));
    }
    out.push('}');
    out
}

#[test]
fn million_keys() {
    let raw = wide_object(1_000_000);
    let c = with_limits("{}", |l| Limits { max_bytes: raw.len().max(l.max_bytes), ..l });
    let v = c.check(&raw);
    assert!(v.is_accepted(), "{:?}", v.problems().first());
    let map = v.value().unwrap().as_object().unwrap();
    assert_eq!(map.len(), 1_000_000);
    assert_eq!(map.keys().next().map(String::as_str), Some("k0"));

    let closed = r#"{"type":"object","additionalProperties":false}"#;
    let c = with_limits(closed, |l| Limits { max_bytes: raw.len().max(l.max_bytes), ..l });
    assert_eq!(c.limits().max_problems, 100);
    let first = c.check(&raw);
    let problems = first.problems();
    assert_eq!(problems.len(), 100, "capped at max_problems");
    assert!(problems.iter().all(|p| p.code.as_str() == "unexpected_property"));
    // Deterministic: in reply order, starting with the first key.
    assert_eq!(problems[0].path, "/k0");
    assert_eq!(problems[99].path, "/k99");
    assert_eq!(c.check(&raw), first, "the same reply gives the same verdict");

    let c = with_limits(closed, |l| Limits { max_bytes: raw.len().max(l.max_bytes), max_problems: 3, ..l });
    let paths: Vec<_> = c.check(&raw).problems().iter().map(|p| p.path.clone()).collect();
    assert_eq!(paths, ["/k0", "/k1", "/k2"]);
}

#[test]
fn hundred_thousand_unique_objects() {
    let c = contract(r#"{"type":"array","uniqueItems":true}"#);
    let mut items: Vec<_> = (0..100_000).map(|i| json!({"id": i, "tag": "x"})).collect();
    let raw = serde_json::to_string(&items).unwrap();
    let v = c.check(&raw);
    assert!(v.is_accepted(), "{:?}", v.problems().first());

    // Equal by JSON Schema equality: other key order, 5.0 for 5.
    items.push(json!({"tag": "x", "id": 5.0}));
    let raw = serde_json::to_string(&items).unwrap();
    let p = assert_refused_one(&c.check(&raw), "not_unique", "");
    assert!(p.message.contains("items 5 and 100000"), "{p}");
}

// ---------------------------------------------------------------- numbers

#[test]
fn million_digit_number_overflows() {
    let c = contract(r#"{"type":"number"}"#);
    let mut digits = vec![b'0'; 1_000_000];
    digits[0] = b'1';
    assert_refused_one(&c.check(&digits), "number_overflow", "");
    let mut negative = b"-".to_vec();
    negative.extend_from_slice(&digits);
    assert_refused_one(&c.check(&negative), "number_overflow", "");
    // A million digits of fraction: no double holds it, so readers would
    // disagree on its value (docs/guarantees.md §4).
    let mut fraction = b"0.".to_vec();
    fraction.extend(std::iter::repeat_n(b'1', 1_000_000));
    assert_refused_one(&c.check(&fraction), "imprecise_number", "");
    // A million digits that are zeros after the first is exactly 0.1.
    let mut tenth = b"0.1".to_vec();
    tenth.extend(std::iter::repeat_n(b'0', 1_000_000));
    let v = c.check(&tenth);
    assert!(v.is_accepted(), "{:?}", v.problems());
}

#[test]
fn huge_exponents() {
    let c = contract(r#"{"type":"number"}"#);
    assert_refused_one(&c.check("1e999999999"), "number_overflow", "");
    assert_refused_one(&c.check("-1e999999999"), "number_overflow", "");
    assert_refused_one(&c.check("1e99999999999999999999999999999"), "number_overflow", "");

    let any = contract("{}");
    let p = assert_refused_one(&any.check("[1e400]"), "number_overflow", "/0");
    assert_eq!(p.class.as_str(), "no_answer");
    assert_refused_one(&any.check(r#"{"a":[0, {"b~/": 1e400}]}"#), "number_overflow", "/a/1/b~0~1");

    // Underflow: readers of doubles read 0, decimal readers the number itself.
    assert_refused_one(&c.check("123.456e-789"), "imprecise_number", "");
    assert_refused_one(&any.check(r#"{"a":[1e-999999999]}"#), "imprecise_number", "/a/0");
    // Zero written with any exponent is zero.
    let v = c.check("0e-999999999");
    assert_eq!(v.value(), Some(&json!(0.0)));
}

// ---------------------------------------------------------------- strings

#[test]
fn fifty_mb_string_is_too_long() {
    let mut raw = vec![b'a'; 50_000_000];
    raw[0] = b'"';
    raw.push(b'"');
    let schema = r#"{"type":"string","maxLength":10}"#;
    assert_refused_too_large(&contract(schema), &raw);

    let c = with_limits(schema, |l| Limits { max_bytes: 64 * MIB, ..l });
    let p = assert_refused_one(&c.check(&raw), "too_long", "");
    // The problem stays small however large the value.
    assert!(p.got.chars().count() <= 100, "{} chars", p.got.len());
    assert!(p.message.len() < 1_000, "{} bytes", p.message.len());
}

#[test]
fn unterminated_four_mib_string_is_truncated() {
    let mut raw = vec![b'a'; 4 * MIB];
    raw[0] = b'"';
    assert_eq!(raw.len(), Limits::default().max_bytes);
    let p = assert_refused_one(&contract("{}").check(&raw), "truncated", "");
    assert_eq!(p.class.as_str(), "no_answer");
}

#[test]
fn pathological_pattern_is_linear() {
    let c = contract(r#"{"type":"string","pattern":"^(a+)+$"}"#);
    let mut s = "a".repeat(100_000);
    assert!(c.check(format!("\"{s}\"")).is_accepted());
    s.push('b');
    assert_refused_one(&c.check(format!("\"{s}\"")), "pattern_mismatch", "");
}

/// A chain of `links` `anyOf`s, each of the same two `$ref`s to the next
/// link, ending in `leaf`, under `$defs`: checking one value that fails the
/// leaf asks for 2^links evaluations. `at` is what refers to its first link.
fn doubling_chain(
    links: usize,
    leaf: serde_json::Value,
    at: impl FnOnce(serde_json::Value) -> serde_json::Value,
) -> Contract {
    let mut defs = serde_json::Map::new();
    for i in 0..links {
        let next = if i + 1 < links { format!("#/$defs/d{}", i + 1) } else { "#/$defs/leaf".to_owned() };
        defs.insert(format!("d{i}"), json!({"anyOf": [{"$ref": next}, {"$ref": next}]}));
    }
    defs.insert("leaf".into(), leaf);
    let mut doc = at(json!({"$ref": "#/$defs/d0"}));
    doc.as_object_mut().unwrap().insert("$defs".into(), defs.into());
    Contract::from_value(doc).unwrap()
}

#[test]
fn combinators_that_multiply_are_bounded_and_refused_too_complex() {
    // 2^40 evaluations if nothing bounded them: the test would not end.
    let chain = doubling_chain(40, json!({"type": "integer"}), |first| first);
    assert_refused_first(&chain.check(br#""x""#), "too_complex", "");
    assert!(chain.check(b"5").is_accepted(), "the first branch holds at every link: linear");
    // Under `not` the bound still refuses: a stopped check never reads as a failure to invert.
    let negated = doubling_chain(40, json!({"type": "integer"}), |first| json!({"not": first}));
    assert_refused_first(&negated.check(br#""x""#), "too_complex", "");
    assert_refused_first(&negated.check(b"5"), "no_match", "");
    // Inside a value: the path is where the check stopped, whole or streamed.
    let within = doubling_chain(
        40,
        json!({"type": "integer"}),
        |first| json!({"type": "object", "required": ["a"], "properties": {"a": first}}),
    );
    let whole = within.check(br#"{"a": "x"}"#);
    assert_refused_first(&whole, "too_complex", "/a");
    let mut stream = within.stream();
    stream.feed(br#"{"a": "x"}"#);
    assert_eq!(stream.finish().problems(), whole.problems());
    assert!(within.check(br#"{"a": 5}"#).is_accepted());
}

#[test]
fn alternatives_nested_as_deep_as_the_reply_are_bounded() {
    // Each level of the reply doubles the work when the innermost value fails.
    let c = contract(
        r##"{"anyOf": [{"type": "array", "items": {"$ref": "#"}}, {"type": "array", "items": {"$ref": "#"}}]}"##,
    );
    let failing = arrays_around(100, br#""x""#);
    on_small_stack(move || assert_refused_first(&c.check(&failing), "too_complex", ""));
    let c = contract(
        r##"{"anyOf": [{"type": "array", "items": {"$ref": "#"}}, {"type": "array", "items": {"$ref": "#"}}]}"##,
    );
    assert!(c.check(arrays_around(100, b"")).is_accepted());
}

#[track_caller]
fn assert_refused_first(verdict: &Verdict, code: &str, path: &str) {
    let first = verdict.problems().first().unwrap_or_else(|| panic!("refused: {verdict:?}"));
    assert_eq!((first.code.as_str(), first.path.as_str()), (code, path), "{:?}", verdict.problems());
}

#[test]
fn the_patterns_of_one_contract_are_bounded_together() {
    // Ten bytes of pattern are about 5 MB of program; forty of them took a server 278 MB.
    let big = |n: usize| {
        let properties: serde_json::Map<String, serde_json::Value> = (0..n)
            .map(|i| (format!("p{i}"), json!({"type": "string", "pattern": format!("^\\w{{{}}}$", 40_000 + i)})))
            .collect();
        Contract::from_value(json!({"type": "object", "properties": properties}))
    };
    assert!(big(2).is_ok(), "a few large patterns compile");
    let refused = big(40).expect_err("forty do not");
    let first = refused.every().next().unwrap();
    assert_eq!(first.kind, CompileErrorKind::BadPattern, "{refused}");
    assert!(first.to_string().contains("MiB the contract's patterns may take together"), "{refused}");
    // Many small patterns are charged little each: a large contract of them compiles.
    let properties: serde_json::Map<String, serde_json::Value> = (0..500)
        .map(|i| (format!("p{i}"), json!({"type": "string", "pattern": format!("^[a-z]{{1,{}}}-[0-9]+$", i + 1)})))
        .collect();
    let many = Contract::from_value(json!({"type": "object", "properties": properties})).unwrap();
    assert!(many.check(br#"{"p3": "abc-12"}"#).is_accepted());
}

#[test]
fn repairs_under_combinators_that_multiply_are_bounded_too() {
    // allOf of the same two $refs, forty links deep, a trim at the end: the
    // repair walk (as the check) would visit the leaf 2^40 times.
    let mut defs = serde_json::Map::new();
    for i in 0..40 {
        let next = if i + 1 < 40 { format!("#/$defs/d{}", i + 1) } else { "#/$defs/leaf".to_owned() };
        defs.insert(format!("d{i}"), json!({"allOf": [{"$ref": next}, {"$ref": next}]}));
    }
    defs.insert("leaf".into(), json!({"type": "string", "x-vouch": {"repair": ["trim"]}}));
    let c = Contract::from_value(json!({"$defs": defs, "$ref": "#/$defs/d0"})).unwrap();
    for reply in [&br#""  x  ""#[..], br#""x""#, b"5"] {
        assert_refused_first(&c.check(reply), "too_complex", "");
    }
}
