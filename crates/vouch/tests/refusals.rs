//! Every refusal kind: its code, its class and its path, and the sentence a
//! person reads.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use serde_json::json;
use vouch::{Contract, ProblemClass, Verdict};

fn contract(schema: serde_json::Value) -> Contract {
    Contract::from_value(schema).unwrap()
}

/// The first problem's (code, class, path), asserting the reply was refused.
fn first(c: &Contract, raw: &str) -> (String, &'static str, String) {
    match c.check(raw) {
        Verdict::Refused(r) => {
            let p = &r.problems[0];
            (p.code.as_str().to_owned(), p.class.as_str(), p.path.clone())
        }
        Verdict::Accepted(a) => panic!("{raw:?} was accepted as {}", a.value()),
    }
}

fn assert_refused(c: &Contract, raw: &str, code: &str, class: &str, path: &str) {
    let (got_code, got_class, got_path) = first(c, raw);
    assert_eq!((got_code.as_str(), got_class, got_path.as_str()), (code, class, path), "reply {raw:?}");
}

#[test]
fn reading_refusals() {
    let any = contract(json!({}));
    for (raw, code) in [
        ("", "empty_reply"),
        (" \n\t\r ", "empty_reply"),
        ("Sure! Here it is: {\"a\": 1}", "not_json"),
        ("```json\n{\"a\": 1}\n```", "not_json"),
        ("{\"a\": 1 /* comment */}", "not_json"),
        ("// note\n{}", "not_json"),
        ("{'a': 1}", "not_json"),
        ("{\"a\": 1,}", "not_json"),
        ("[1, 2,]", "not_json"),
        ("NaN", "not_json"),
        ("{\"a\": NaN}", "not_json"),
        ("True", "not_json"),
        ("{\"a\": True}", "not_json"),
        ("{a: 1}", "not_json"),
        ("01", "not_json"),
        ("\"\\x41\"", "not_json"),
        ("\"tab\there\"", "not_json"),
        ("\"\\ud800\"", "not_json"),
        ("\"\\udc00\\ud800\"", "not_json"),
        ("{\"a\": 1", "truncated"),
        ("{\"a\": ", "truncated"),
        ("{\"a\"", "truncated"),
        ("[1, 2", "truncated"),
        ("\"unterminated", "truncated"),
        ("tru", "truncated"),
        ("-", "truncated"),
        ("1.", "truncated"),
        ("1e", "truncated"),
        ("\"\\u12", "truncated"),
        ("\"\\ud800", "truncated"),
        ("{\"a\": 1} trailing", "trailing_text"),
        ("{} {}", "trailing_text"),
        ("1e400", "number_overflow"),
        ("-1e400", "number_overflow"),
    ] {
        assert_refused(&any, raw, code, "no_answer", "");
    }
}

#[test]
fn not_json_has_line_and_column() {
    let any = contract(json!({}));
    let v = any.check("{\n  \"a\": 1,\n  'b': 2\n}");
    let p = &v.problems()[0];
    assert_eq!(p.code.as_str(), "not_json");
    let pos = p.position.unwrap();
    assert_eq!((pos.line, pos.column), (3, 3));
    assert!(p.message.contains("line 3, column 3"), "{}", p.message);
}

#[test]
fn invalid_utf8_is_not_json() {
    let any = contract(json!({}));
    let v = any.check(b"{\"a\": \"\xff\"}");
    assert_eq!(v.problems()[0].code.as_str(), "not_json");
    assert_eq!(v.problems()[0].position.unwrap().offset, 7);
}

#[test]
fn duplicate_keys_point_at_the_member() {
    let any = contract(json!({}));
    assert_refused(&any, r#"{"a": {"b": 1, "b": 2}}"#, "duplicate_key", "no_answer", "/a/b");
    // Equal only after unescaping: a consumer would read one key.
    assert_refused(&any, r#"{"role": "user", "r\u006fle": "admin"}"#, "duplicate_key", "no_answer", "/role");
    assert_refused(&any, r#"[{"x": 1}, {"x": 1, "x": 1}]"#, "duplicate_key", "no_answer", "/1/x");
}

#[test]
fn depth_and_size_limits() {
    let any = contract(json!({}));
    let deep = "[".repeat(129) + &"]".repeat(129);
    assert_refused(&any, &deep, "too_deep", "no_answer", "");
    let ok = "[".repeat(128) + &"]".repeat(128);
    assert!(any.check(&ok).is_accepted());
    let small = any.clone().with_limits(vouch::Limits { max_bytes: 10, ..vouch::Limits::default() }).unwrap();
    assert_refused(&small, "[1,2,3,4,5,6]", "too_large", "no_answer", "");
    let shallow = contract(json!({"x-vouch": {"limits": {"max_depth": 2}}}));
    assert_refused(&shallow, "[[[]]]", "too_deep", "no_answer", "");
    assert!(shallow.check("[[]]").is_accepted());
}

#[test]
fn number_overflow_inside_a_value_has_its_path() {
    let any = contract(json!({}));
    assert_refused(&any, r#"{"a": [1, 1e400]}"#, "number_overflow", "no_answer", "/a/1");
}

#[test]
fn a_number_problem_shows_the_number_not_the_reply_after_it() {
    let any = contract(json!({}));
    for (raw, code, got) in [
        (r#"{"a": [1, 1e400, null, false], "b": 2}"#, "number_overflow", "1e400"),
        (r#"[18446744073709551615, "x"]"#, "imprecise_number", "18446744073709551615"),
        (r#"{"a": -0.1000000000000000000000000001}"#, "imprecise_number", "-0.1000000000000000000000000001"),
    ] {
        let problems = any.check(raw).problems().to_vec();
        let first = problems.first().unwrap();
        assert_eq!((first.code.as_str(), first.got.as_str()), (code, got), "{raw}");
        // The same while streaming.
        let mut stream = any.stream();
        stream.feed(raw);
        assert_eq!(stream.finish().problems(), &problems[..], "{raw}");
    }
}

#[test]
fn contract_refusals() {
    let c = contract(json!({
        "type": "object",
        "properties": {
            "flag": {"type": "boolean"},
            "verdict": {"enum": ["eligible", "maybe", "not_eligible"]},
            "kind": {"const": "plate"},
            "score": {"type": "integer", "minimum": 0, "maximum": 100},
            "ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1, "multipleOf": 0.25},
            "name": {"type": "string", "minLength": 2, "maxLength": 5, "pattern": "^[a-z]+$"},
            "day": {"type": "string", "format": "date"},
            "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 2, "uniqueItems": true},
            "meta": {"type": "object", "minProperties": 1, "maxProperties": 1},
            "either": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
            "one": {"oneOf": [{"type": "integer"}, {"minimum": 0}]},
            "never": {"not": {"type": "string"}},
            "cond": {"if": {"minimum": 10}, "then": {"multipleOf": 10}, "else": {"maximum": 5}},
            "has": {"type": "array", "contains": {"const": 1}}
        },
        "required": ["flag"],
        "additionalProperties": false
    }));
    let cases: &[(&str, &str, &str, &str)] = &[
        (r#"{}"#, "missing", "no_answer", "/flag"),
        (r#"{"flag": null}"#, "wrong_type", "no_answer", "/flag"),
        (r#"{"flag": "false"}"#, "wrong_type", "no_answer", "/flag"),
        (r#"{"flag": 0}"#, "wrong_type", "no_answer", "/flag"),
        (r#"{"flag": true, "verdict": "likely"}"#, "not_allowed", "bad_answer", "/verdict"),
        (r#"{"flag": true, "verdict": 3}"#, "wrong_type", "no_answer", "/verdict"),
        (r#"{"flag": true, "kind": "cup"}"#, "not_allowed", "bad_answer", "/kind"),
        (r#"{"flag": true, "score": 142}"#, "out_of_range", "bad_answer", "/score"),
        (r#"{"flag": true, "score": -1}"#, "out_of_range", "bad_answer", "/score"),
        (r#"{"flag": true, "score": "80"}"#, "wrong_type", "no_answer", "/score"),
        (r#"{"flag": true, "score": 87.5}"#, "wrong_type", "no_answer", "/score"),
        (r#"{"flag": true, "ratio": 0}"#, "out_of_range", "bad_answer", "/ratio"),
        (r#"{"flag": true, "ratio": 1}"#, "out_of_range", "bad_answer", "/ratio"),
        (r#"{"flag": true, "ratio": 0.3}"#, "out_of_range", "bad_answer", "/ratio"),
        (r#"{"flag": true, "name": "a"}"#, "too_short", "bad_answer", "/name"),
        (r#"{"flag": true, "name": "abcdef"}"#, "too_long", "bad_answer", "/name"),
        (r#"{"flag": true, "name": "ab1"}"#, "pattern_mismatch", "bad_answer", "/name"),
        (r#"{"flag": true, "day": "2024-02-30"}"#, "format_mismatch", "bad_answer", "/day"),
        (r#"{"flag": true, "tags": []}"#, "too_short", "bad_answer", "/tags"),
        (r#"{"flag": true, "tags": ["a", "b", "c"]}"#, "too_long", "bad_answer", "/tags"),
        (r#"{"flag": true, "tags": ["a", "a"]}"#, "not_unique", "bad_answer", "/tags"),
        (r#"{"flag": true, "tags": ["a", 1]}"#, "wrong_type", "no_answer", "/tags/1"),
        (r#"{"flag": true, "meta": {}}"#, "too_short", "bad_answer", "/meta"),
        (r#"{"flag": true, "meta": {"a": 1, "b": 2}}"#, "too_long", "bad_answer", "/meta"),
        (r#"{"flag": true, "extra": 1}"#, "unexpected_property", "bad_answer", "/extra"),
        (r#"{"flag": true, "either": 1.5}"#, "no_match", "bad_answer", "/either"),
        (r#"{"flag": true, "one": 5}"#, "no_match", "bad_answer", "/one"),
        (r#"{"flag": true, "never": "s"}"#, "no_match", "bad_answer", "/never"),
        (r#"{"flag": true, "cond": 15}"#, "no_match", "bad_answer", "/cond"),
        (r#"{"flag": true, "cond": 7}"#, "no_match", "bad_answer", "/cond"),
        (r#"{"flag": true, "has": [2, 3]}"#, "no_match", "bad_answer", "/has"),
    ];
    for (raw, code, class, path) in cases {
        assert_refused(&c, raw, code, class, path);
    }
    // Every one of those, fixed, is accepted.
    let good = r#"{"flag": true, "verdict": "maybe", "kind": "plate", "score": 100, "ratio": 0.5, "name": "abc",
        "day": "2024-02-29", "tags": ["a"], "meta": {"k": 1}, "either": 2, "one": -1, "never": 3, "cond": 20, "has": [1]}"#;
    assert!(c.check(good).is_pass(), "{:?}", c.check(good).problems());

    // Repairs on two nodes that undo each other never settle.
    let c = contract(json!({"properties": {"o": {"allOf": [
        {"properties": {"b": {"x-vouch": {"default": "x"}}}},
        {"additionalProperties": false, "x-vouch": {"repair": ["strip_unknown"]}}
    ]}}}));
    assert_refused(&c, r#"{"o": {}}"#, "repairs_unsettled", "bad_answer", "/o/b");
}

#[test]
fn the_founding_sentence() {
    let c = contract(json!({"type": "object", "properties": {"criteria": {"type": "array", "items": {
        "type": "object", "properties": {"status": {"enum": ["pass", "partial", "fail", "unknown"]}}}}}}));
    let v = c.check(r#"{"criteria": [{"status": "pass"}, {"status": "likely"}]}"#);
    assert_eq!(v.problems()[0].message, r#"/criteria/1/status: "likely" is not one of pass, partial, fail, unknown"#);
    assert_eq!(v.problems()[0].expected, "one of pass, partial, fail, unknown");
    assert_eq!(v.problems()[0].got, r#""likely""#);
}

#[test]
fn every_problem_is_listed_in_a_stable_order() {
    let c = contract(json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
        "required": ["a", "b", "c"], "additionalProperties": false}));
    let raw = r#"{"b": "x", "a": 1, "z": 0}"#;
    let v = c.check(raw);
    let seen: Vec<(&str, &str)> = v.problems().iter().map(|p| (p.code.as_str(), p.path.as_str())).collect();
    assert_eq!(seen, [("missing", "/c"), ("wrong_type", "/b"), ("wrong_type", "/a"), ("unexpected_property", "/z")]);
    // Same contract, same reply: the same verdict, byte for byte.
    assert_eq!(c.check(raw).to_json().to_string(), v.to_json().to_string());
}

#[test]
fn problems_are_capped() {
    let c = contract(json!({"type": "array", "items": {"type": "string"}}))
        .with_limits(vouch::Limits { max_problems: 5, ..vouch::Limits::default() })
        .unwrap();
    let v = c.check(format!("[{}]", vec!["1"; 1000].join(",")));
    assert_eq!(v.problems().len(), 5);
    assert_eq!(v.problems()[4].path, "/4");
}

#[test]
fn excerpts_are_bounded() {
    let c = contract(json!({"type": "object", "properties": {"s": {"type": "string", "maxLength": 3}}}));
    let long = "x".repeat(100_000);
    let v = c.check(format!(r#"{{"s": "{long}"}}"#));
    let p = &v.problems()[0];
    assert!(p.got.chars().count() <= 81, "{}", p.got.len());
    assert!(p.message.len() < 400);
}

#[test]
fn seed_replies_are_refused_as_no_answer_by_the_plate_contract() {
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/contracts/plate.json")).unwrap();
    let plate = Contract::from_json_str(&text).unwrap();
    for raw in [
        "{}",
        "true",
        "[]",
        "null",
        "\"\"",
        r#"{"productPresent":"no","productTextPresent":false,"garbledText":false}"#,
        r#"Sure! {"productPresent":false,"productTextPresent":false,"garbledText":false}"#,
        "```json\n{\"productPresent\":false,\"productTextPresent\":false,\"garbledText\":false}\n```",
        r#"{"productPresent":false,"productTextPresent":fa"#,
    ] {
        match plate.check(raw) {
            Verdict::Refused(r) => assert_eq!(r.class(), ProblemClass::NoAnswer, "{raw}"),
            Verdict::Accepted(_) => panic!("accepted {raw}"),
        }
    }
    assert!(plate.check(r#"{"productPresent":false,"productTextPresent":false,"garbledText":false}"#).is_pass());
}
