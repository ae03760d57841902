//! `unevaluatedProperties` and `unevaluatedItems` (2019-09, 2020-12).
//!
//! - refusals: the code and path of each problem, the same problem as
//!   `additionalProperties: false` (or `items: false`) gives, every unevaluated
//!   member listed, and the single pass holding the full path's verdict;
//! - what counts as evaluated: passing in-place subschemas only (a failing
//!   `anyOf` branch, `not`, a failed `if` add nothing), `contains` in 2020-12
//!   but not in 2019-09, adjacent keywords only;
//! - repairs: none inside an `unevaluated*` subschema (a compile error), and
//!   a declared repair elsewhere never lets an unevaluated member through;
//! - depth: a 10,000-deep `allOf` chain is refused at compile time, a
//!   10,000-deep reply as too deep, and a recursive contract at the depth
//!   cap gets its verdict on a small stack;
//! - an oracle: generated contracts built around `unevaluated*` and the
//!   in-place applicators, and generated instances, judged by vouch and by
//!   the `jsonschema` crate (`PROPTEST_CASES`, default 2,000 contracts).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod common;

use std::cell::Cell;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde_json::{json, Map, Value};
use vouch::{CompileErrorKind, Contract, Limits, Problem, ProblemClass, ProblemCode, Provider, Verdict};

fn contract(schema: &Value) -> Contract {
    Contract::from_value(schema.clone()).unwrap_or_else(|e| panic!("{schema}: {e}"))
}

fn check(c: &Contract, reply: &Value) -> Verdict {
    let raw = reply.to_string();
    let verdict = c.check(&raw);
    // The single pass (and its streamed report) and the full path agree to the byte.
    assert_eq!(verdict, common::expected_verdict(c, raw.as_bytes()), "single pass and full path differ on {raw}");
    verdict
}

/// The problems of a refused reply as (code, path).
#[track_caller]
fn refused(c: &Contract, reply: &Value) -> Vec<(ProblemCode, String)> {
    let v = check(c, reply);
    assert!(!v.is_accepted(), "{reply} was accepted");
    v.problems().iter().map(|p| (p.code, p.path.clone())).collect()
}

#[track_caller]
fn accepted(c: &Contract, reply: &Value) {
    let v = check(c, reply);
    assert!(
        v.is_accepted(),
        "{reply} was refused: {:?}",
        v.problems().iter().map(ToString::to_string).collect::<Vec<_>>()
    );
}

const DRAFT2019: &str = "https://json-schema.org/draft/2019-09/schema";

// ------------------------------------------------------------ refusals

#[test]
fn an_unevaluated_property_is_refused_as_additional_properties_false_refuses_it() {
    let props = json!({"a": {"type": "integer"}});
    let uneval = contract(&json!({"type": "object", "properties": props, "unevaluatedProperties": false}));
    let additional = contract(&json!({"type": "object", "properties": props, "additionalProperties": false}));
    let reply = json!({"a": 1, "b": 2, "c~/": 3});
    let a = check(&uneval, &reply);
    let b = check(&additional, &reply);
    // Same codes, paths, words: a caller cannot tell which keyword closed the object.
    assert_eq!(a.problems(), b.problems());
    let p: &Problem = &a.problems()[0];
    assert_eq!((p.code, p.path.as_str()), (ProblemCode::UnexpectedProperty, "/b"));
    assert_eq!(a.problems()[1].path, "/c~0~1");
    assert_eq!(p.code.class(), ProblemClass::BadAnswer);
    accepted(&uneval, &json!({"a": 1}));
}

#[test]
fn an_unevaluated_item_is_refused_as_items_false_refuses_it() {
    let uneval = contract(&json!({"prefixItems": [{"type": "integer"}], "unevaluatedItems": false}));
    let items = contract(&json!({"prefixItems": [{"type": "integer"}], "items": false}));
    let reply = json!([1, "x", null]);
    let a = check(&uneval, &reply);
    assert_eq!(a.problems(), check(&items, &reply).problems());
    let got: Vec<_> = a.problems().iter().map(|p| (p.code, p.path.as_str())).collect();
    assert_eq!(got, [(ProblemCode::NotAllowed, "/1"), (ProblemCode::NotAllowed, "/2")]);
    accepted(&uneval, &json!([1]));
}

#[test]
fn an_unevaluated_schema_is_checked_at_each_member_and_item() {
    let c = contract(&json!({"unevaluatedProperties": {"type": "integer"}, "unevaluatedItems": {"maxLength": 2}}));
    assert_eq!(refused(&c, &json!({"a": 1, "b": "x"})), [(ProblemCode::WrongType, "/b".to_owned())]);
    assert_eq!(refused(&c, &json!(["ab", "abc"])), [(ProblemCode::TooLong, "/1".to_owned())]);
    accepted(&c, &json!({"a": 1}));
    accepted(&c, &json!(["ab", 7]));
    // Neither applies to other types.
    accepted(&c, &json!("anything"));
}

#[test]
fn nested_refusals_carry_the_full_path() {
    let c = contract(&json!({
        "type": "object",
        "properties": {
            "order": {
                "allOf": [{"properties": {"id": {"type": "integer"}}}],
                "properties": {"lines": {"type": "array", "prefixItems": [true], "unevaluatedItems": false}},
                "unevaluatedProperties": false
            }
        },
        "required": ["order"]
    }));
    accepted(&c, &json!({"order": {"id": 1, "lines": [1]}}));
    assert_eq!(
        refused(&c, &json!({"order": {"id": 1, "lines": [1, 2], "note": "x"}})),
        [
            (ProblemCode::NotAllowed, "/order/lines/1".to_owned()),
            (ProblemCode::UnexpectedProperty, "/order/note".to_owned())
        ]
    );
    // A member of the root before the doubt, one after: the report lists both in order.
    let c = contract(&json!({
        "type": "object",
        "properties": {"x": {"type": "integer"}, "o": {"unevaluatedProperties": false}},
    }));
    assert_eq!(
        refused(&c, &json!({"x": "no", "o": {"k": 1}})),
        [(ProblemCode::WrongType, "/x".to_owned()), (ProblemCode::UnexpectedProperty, "/o/k".to_owned())]
    );
}

#[test]
fn every_unevaluated_member_is_listed_up_to_max_problems() {
    let c = contract(&json!({"unevaluatedProperties": false, "x-vouch": {"limits": {"max_problems": 3}}}));
    let reply: Map<String, Value> = (0..10).map(|i| (format!("k{i}"), json!(i))).collect();
    let paths: Vec<String> = refused(&c, &Value::Object(reply)).into_iter().map(|(_, p)| p).collect();
    assert_eq!(paths, ["/k0", "/k1", "/k2"]);
}

// ------------------------------------------------------------ what is evaluated

#[test]
fn only_passing_in_place_subschemas_evaluate() {
    let c = contract(&json!({
        "anyOf": [
            {"properties": {"a": {"const": 1}}, "required": ["a"]},
            {"properties": {"b": {"const": 2}}, "required": ["b"]}
        ],
        "unevaluatedProperties": false
    }));
    accepted(&c, &json!({"a": 1, "b": 2})); // both branches pass: both evaluate
    accepted(&c, &json!({"a": 1}));
    // The second branch fails, so `b` was not evaluated (a failing branch adds nothing).
    assert_eq!(refused(&c, &json!({"a": 1, "b": 3})), [(ProblemCode::UnexpectedProperty, "/b".to_owned())]);

    let one_of = contract(&json!({
        "oneOf": [{"properties": {"a": true}, "required": ["a"]}, {"properties": {"b": true}, "required": ["b"]}],
        "unevaluatedProperties": false
    }));
    accepted(&one_of, &json!({"a": 1}));
    assert!(!check(&one_of, &json!({"a": 1, "b": 1})).is_accepted()); // two branches: oneOf fails

    let not = contract(&json!({"not": {"not": {"properties": {"a": true}}}, "unevaluatedProperties": false}));
    assert_eq!(refused(&not, &json!({"a": 1})), [(ProblemCode::UnexpectedProperty, "/a".to_owned())]);

    // `if` evaluates when it passes; when it fails, `else` does.
    let cond = contract(&json!({
        "if": {"properties": {"kind": {"const": "x"}}, "required": ["kind"]},
        "then": {"properties": {"x": true}},
        "else": {"properties": {"y": true}},
        "unevaluatedProperties": false
    }));
    accepted(&cond, &json!({"kind": "x", "x": 1}));
    accepted(&cond, &json!({"y": 1}));
    assert_eq!(refused(&cond, &json!({"kind": "x", "y": 1})), [(ProblemCode::UnexpectedProperty, "/y".to_owned())]);
    assert_eq!(refused(&cond, &json!({"kind": "z", "y": 1})), [(ProblemCode::UnexpectedProperty, "/kind".to_owned())]);

    let deps = contract(&json!({
        "properties": {"card": true},
        "dependentSchemas": {"card": {"properties": {"cvv": true}}},
        "unevaluatedProperties": false
    }));
    accepted(&deps, &json!({"card": 1, "cvv": 2}));
    assert_eq!(refused(&deps, &json!({"cvv": 2})), [(ProblemCode::UnexpectedProperty, "/cvv".to_owned())]);
}

#[test]
fn references_and_nested_unevaluated_evaluate_adjacent_keywords_only() {
    let c = contract(&json!({
        "$defs": {"base": {"properties": {"id": {"type": "integer"}}}},
        "$ref": "#/$defs/base",
        "properties": {"name": true},
        "unevaluatedProperties": false
    }));
    accepted(&c, &json!({"id": 1, "name": "n"}));
    assert_eq!(refused(&c, &json!({"id": 1, "other": 0})), [(ProblemCode::UnexpectedProperty, "/other".to_owned())]);
    // An inner unevaluatedProperties sees only its own subschema's keywords, not its parent's.
    let inner = contract(&json!({"properties": {"a": true}, "allOf": [{"unevaluatedProperties": false}]}));
    assert_eq!(refused(&inner, &json!({"a": 1})), [(ProblemCode::UnexpectedProperty, "/a".to_owned())]);
    // … and once it passes, it has evaluated everything for the outer one.
    let outer = contract(&json!({"allOf": [{"unevaluatedProperties": true}], "unevaluatedProperties": false}));
    accepted(&outer, &json!({"a": 1, "b": 2}));
    // Members of a child object are evaluated there, not in the parent.
    let child = contract(&json!({
        "properties": {"o": {"properties": {"a": true}}},
        "allOf": [{"properties": {"o": {"unevaluatedProperties": false}}}]
    }));
    assert_eq!(refused(&child, &json!({"o": {"a": 1}})), [(ProblemCode::UnexpectedProperty, "/o/a".to_owned())]);
}

#[test]
fn contains_evaluates_in_2020_12_but_not_in_2019_09() {
    let schema = json!({"contains": {"type": "string"}, "unevaluatedItems": false});
    let c2020 = contract(&schema);
    accepted(&c2020, &json!(["a", "b"]));
    assert_eq!(refused(&c2020, &json!(["a", 1])), [(ProblemCode::NotAllowed, "/1".to_owned())]);
    let mut s2019 = schema.clone();
    s2019["$schema"] = json!(DRAFT2019);
    let c2019 = contract(&s2019);
    assert_eq!(refused(&c2019, &json!(["a"])), [(ProblemCode::NotAllowed, "/0".to_owned())]);
    // 2019-09: the array form of items, and additionalItems, evaluate.
    let tuple = contract(&json!({"$schema": DRAFT2019, "items": [true], "unevaluatedItems": false}));
    accepted(&tuple, &json!([1]));
    assert_eq!(refused(&tuple, &json!([1, 2])), [(ProblemCode::NotAllowed, "/1".to_owned())]);
    let rest =
        contract(&json!({"$schema": DRAFT2019, "items": [true], "additionalItems": true, "unevaluatedItems": false}));
    accepted(&rest, &json!([1, 2, 3]));
}

// ------------------------------------------------------------ repairs

#[test]
fn no_policy_inside_an_unevaluated_subschema() {
    for (schema, location) in [
        (
            json!({"unevaluatedProperties": {"type": "integer", "x-vouch": {"repair": ["coerce"]}}}),
            "/unevaluatedProperties",
        ),
        (json!({"unevaluatedItems": {"type": "string", "x-vouch": {"repair": ["trim"]}}}), "/unevaluatedItems"),
        (
            json!({"unevaluatedProperties": {"properties": {"a": {"x-vouch": {"default": 1}}}}}),
            "/unevaluatedProperties/properties/a",
        ),
        (json!({"unevaluatedItems": {"x-vouch": {"findings": [{"when": true, "message": "m"}]}}}), "/unevaluatedItems"),
    ] {
        let e = Contract::from_value(schema.clone()).unwrap_err();
        let first = e.every().next().unwrap();
        assert_eq!((first.kind, first.location.as_str()), (CompileErrorKind::BadPolicy, location), "{schema}: {e}");
        assert!(first.message.contains("unevaluatedProperties"), "{e}");
    }
}

#[test]
fn strip_unknown_needs_additional_properties_false_not_unevaluated() {
    let e = Contract::from_value(json!({
        "type": "object", "properties": {"a": true}, "unevaluatedProperties": false,
        "x-vouch": {"repair": ["strip_unknown"]}
    }))
    .unwrap_err();
    let first = e.every().next().unwrap();
    assert_eq!((first.kind, first.location.as_str()), (CompileErrorKind::BadPolicy, ""), "{e}");
}

#[test]
fn a_repair_never_lets_an_unevaluated_member_through() {
    let c = contract(&json!({
        "type": "object",
        "properties": {"n": {"type": "integer", "x-vouch": {"repair": ["coerce"]}}},
        "allOf": [{"properties": {"d": {"type": "integer", "x-vouch": {"default": 0}}}}],
        "unevaluatedProperties": false
    }));
    // The repairs run (a coercion, a default filled in by the allOf branch), the check still closes the object.
    let v = check(&c, &json!({"n": "3"}));
    assert!(v.is_accepted(), "{:?}", v.problems());
    assert_eq!(v.value(), Some(&json!({"n": 3, "d": 0})));
    let rules: Vec<&str> = v.repairs().iter().map(|r| r.rule.as_str()).collect();
    // The allOf branch is repaired before the members, as the repair pass orders it.
    assert_eq!(rules, ["default", "coerce"]);
    assert_eq!(refused(&c, &json!({"n": "3", "z": 1})), [(ProblemCode::UnexpectedProperty, "/z".to_owned())]);
    assert_eq!(refused(&c, &json!({"n": "x"})), [(ProblemCode::WrongType, "/n".to_owned())]);

    // A declared strip_unknown in an allOf branch removes what its own
    // additionalProperties refuses; what is left is still checked by the outer keyword.
    let strip = contract(&json!({
        "allOf": [{
            "type": "object", "properties": {"a": true}, "additionalProperties": false,
            "x-vouch": {"repair": ["strip_unknown"]}
        }],
        "unevaluatedProperties": false
    }));
    let v = check(&strip, &json!({"a": 1, "b": 2}));
    assert_eq!(v.value(), Some(&json!({"a": 1})));

    // default_if_invalid on a closed object: the default replaces it, and is itself checked at compile time.
    let closed = contract(&json!({
        "properties": {"o": {
            "type": "object", "properties": {"a": true}, "unevaluatedProperties": false,
            "x-vouch": {"default": {}, "repair": ["default_if_invalid"]}
        }}
    }));
    let v = check(&closed, &json!({"o": {"a": 1, "b": 2}}));
    assert_eq!(v.value(), Some(&json!({"o": {}})));
    let bad_default = Contract::from_value(json!({
        "properties": {"a": true}, "unevaluatedProperties": false, "x-vouch": {"default": {"z": 1}}
    }));
    assert_eq!(bad_default.unwrap_err().kind, CompileErrorKind::BadPolicy);
}

// ------------------------------------------------------------ depth

const SMALL_STACK: usize = 256 * 1024;

fn on_stack<T: Send + 'static>(size: usize, f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new().stack_size(size).spawn(f).unwrap().join().unwrap()
}

#[test]
fn a_ten_thousand_deep_all_of_chain_is_refused_at_compile_time() {
    let chain = |depth: usize| {
        let mut text = r#"{"allOf": ["#.repeat(depth);
        text.push_str(r#"{"properties": {"b": true}, "unevaluatedProperties": false}"#);
        text.push_str(&"]}".repeat(depth));
        text
    };
    on_stack(SMALL_STACK, move || {
        // Too deep to read as a contract at all.
        let Err(e) = Contract::from_json_str(&chain(10_000)) else { panic!("a 10,000-deep contract compiled") };
        assert_eq!((e.kind, e.location.as_str()), (CompileErrorKind::NotJson, ""), "{e}");
        assert!(e.message.contains("deeper than 512"), "{e}");
        // The deepest chain the reader takes compiles, and checks on a small stack.
        let c = Contract::from_json_str(&chain(250)).unwrap_or_else(|e| panic!("{e}"));
        assert!(c.check(r#"{"b": 1}"#).is_accepted());
        let v = c.check(r#"{"b": 1, "a": 2}"#);
        let got: Vec<_> = v.problems().iter().map(|p| (p.code, p.path.as_str())).collect();
        assert_eq!(got, [(ProblemCode::UnexpectedProperty, "/a")]);
    });
}

#[test]
fn a_ten_thousand_deep_reply_is_too_deep() {
    on_stack(SMALL_STACK, || {
        let c = Contract::from_json_str(
            r##"{"$defs": {"t": {"type": "array", "prefixItems": [{"$ref": "#/$defs/t"}], "unevaluatedItems": false,
                 "unevaluatedProperties": false}}, "$ref": "#/$defs/t"}"##,
        )
        .unwrap();
        let raw = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        let v = c.check(&raw);
        assert_eq!(v.problems().iter().map(|p| p.code).collect::<Vec<_>>(), [ProblemCode::TooDeep]);
    });
}

#[test]
fn a_recursive_contract_at_the_depth_cap_gets_its_verdict_on_a_small_stack() {
    on_stack(SMALL_STACK, || {
        let schema = r##"{"anyOf": [
            {"type": "integer"},
            {"type": "array", "prefixItems": [{"$ref": "#"}], "unevaluatedItems": false},
            {"type": "object", "allOf": [{"properties": {"a": {"$ref": "#"}}}], "unevaluatedProperties": false}
        ]}"##;
        let c = Contract::from_json_str(schema)
            .unwrap()
            .with_limits(Limits { max_depth: Limits::MAX_DEPTH_CAP, ..Limits::default() })
            .unwrap();
        let depth = Limits::MAX_DEPTH_CAP;
        let arrays = format!("{}1{}", "[".repeat(depth), "]".repeat(depth));
        assert!(c.check(&arrays).is_accepted());
        let objects = format!("{}1{}", r#"{"a":"#.repeat(depth), "}".repeat(depth));
        assert!(c.check(&objects).is_accepted());
        // One more item at the bottom: unevaluated there, refused.
        let bottom = format!("{}1,2{}", "[".repeat(depth), "]".repeat(depth));
        assert!(!c.check(&bottom).is_accepted());
        let bottom = format!("{}{{\"b\":1}}{}", r#"{"a":"#.repeat(depth - 1), "}".repeat(depth - 1));
        assert!(!c.check(&bottom).is_accepted());
    });
}

// ------------------------------------------------------------ the suites' figures

/// How many groups of the suite's unevaluated* files compile (every other
/// is refused, each for a `$dynamicRef`/`$recursiveRef` of its own).
#[test]
fn suite_groups_supported() {
    for (dir, uri) in [
        ("suites/json-schema-test-suite/tests", None),
        ("suites/json-schema-test-suite/drafts/draft2019-09", Some(DRAFT2019)),
    ] {
        let Some(dir) = common::shared_dir(dir) else { return };
        for file in ["unevaluatedProperties", "unevaluatedItems"] {
            let text = std::fs::read_to_string(dir.join(format!("{file}.json"))).unwrap();
            let groups: Vec<Value> = serde_json::from_str(&text).unwrap();
            let (mut supported, mut refused) = (0, Vec::new());
            for group in &groups {
                let mut schema = group["schema"].clone();
                if let (Some(uri), Value::Object(m)) = (uri, &mut schema) {
                    m.entry("$schema").or_insert_with(|| json!(uri));
                }
                match Contract::from_value(schema) {
                    Ok(_) => supported += 1,
                    Err(e) => {
                        let why = e.to_string();
                        // Refused only for a dynamic reference the compiler does not resolve.
                        assert!(
                            why.contains("$dynamicRef")
                                || why.contains("$recursiveRef")
                                || why.contains("$dynamicAnchor")
                                || why.contains("$recursiveAnchor"),
                            "{file}: {}: {why}",
                            group["description"]
                        );
                        refused.push(group["description"].as_str().unwrap_or_default().to_owned());
                    }
                }
            }
            let draft = uri.map_or("2020-12", |_| "2019-09");
            common::figure(&format!(
                "{draft} {file}: supported {supported}/{} groups (refused: {refused:?})",
                groups.len()
            ));
        }
    }
}

// ------------------------------------------------------------ the oracle

/// A deterministic generator driven by a proptest seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
    fn pick(&mut self, items: &[Value]) -> Value {
        items[self.below(items.len())].clone()
    }
}

const KEYS: &[&str] = &["a", "b", "c", "d"];

fn leaf(r: &mut Rng) -> Value {
    r.pick(&[
        json!(true),
        json!(false),
        json!({}),
        json!({"type": "integer"}),
        json!({"type": "string"}),
        json!({"const": 1}),
        json!({"minimum": 1}),
        json!({"type": ["integer", "null"], "maximum": 1}),
    ])
}

fn keys(r: &mut Rng) -> Vec<&'static str> {
    KEYS.iter().copied().filter(|_| r.chance(40)).collect()
}

fn list(r: &mut Rng, most: usize, f: &mut dyn FnMut(&mut Rng) -> Value) -> Value {
    let n = 1 + r.below(most);
    Value::Array((0..n).map(|_| f(r)).collect())
}

/// The in-place applicators, around schemas of the same flavour.
fn applicators(r: &mut Rng, m: &mut Map<String, Value>, depth: usize, sub: &mut dyn FnMut(&mut Rng, usize) -> Value) {
    if depth == 0 {
        return;
    }
    for k in ["allOf", "anyOf", "oneOf"] {
        if r.chance(25) {
            m.insert(k.into(), list(r, 3, &mut |r| sub(r, depth - 1)));
        }
    }
    if r.chance(10) {
        m.insert("not".into(), sub(r, depth - 1));
    }
    if r.chance(20) {
        m.insert("if".into(), sub(r, depth - 1));
        if r.chance(70) {
            m.insert("then".into(), sub(r, depth - 1));
        }
        if r.chance(50) {
            m.insert("else".into(), sub(r, depth - 1));
        }
    }
}

fn unevaluated(r: &mut Rng, m: &mut Map<String, Value>, keyword: &str) {
    if r.chance(50) {
        let v = match r.below(4) {
            0 | 1 => json!(false),
            2 => json!(true),
            _ => leaf(r),
        };
        m.insert(keyword.into(), v);
    }
}

fn object_schema(r: &mut Rng, depth: usize) -> Value {
    let mut m = Map::new();
    if r.chance(50) {
        let props: Map<String, Value> = keys(r)
            .into_iter()
            .map(|k| (k.to_owned(), if depth > 0 && r.chance(15) { object_schema(r, depth - 1) } else { leaf(r) }))
            .collect();
        m.insert("properties".into(), Value::Object(props));
    }
    if r.chance(15) {
        let pattern = if r.chance(50) { "^c" } else { "d$" };
        m.insert("patternProperties".into(), json!({pattern: leaf(r)}));
    }
    if r.chance(8) {
        m.insert("additionalProperties".into(), leaf(r));
    }
    if r.chance(20) {
        m.insert("required".into(), json!(keys(r)));
    }
    if depth > 0 && r.chance(12) {
        let key = KEYS[r.below(KEYS.len())];
        m.insert("dependentSchemas".into(), json!({key: object_schema(r, depth - 1)}));
    }
    if r.chance(12) {
        let target = if r.chance(50) { "#/$defs/p" } else { "#/$defs/q" };
        m.insert("$ref".into(), json!(target));
    }
    applicators(r, &mut m, depth, &mut object_schema);
    unevaluated(r, &mut m, "unevaluatedProperties");
    Value::Object(m)
}

fn array_schema(r: &mut Rng, depth: usize, draft2019: bool) -> Value {
    let mut m = Map::new();
    let prefix = r.chance(40).then(|| list(r, 3, &mut leaf));
    let rest = r.chance(25).then(|| leaf(r));
    match (draft2019, prefix, rest) {
        (false, prefix, rest) => {
            if let Some(p) = prefix {
                m.insert("prefixItems".into(), p);
            }
            if let Some(i) = rest {
                m.insert("items".into(), i);
            }
        }
        // 2019-09: a list in `items`, the rest in `additionalItems` (which alone means nothing).
        (true, Some(p), rest) => {
            m.insert("items".into(), p);
            if let Some(i) = rest {
                m.insert("additionalItems".into(), i);
            }
        }
        (true, None, rest) => {
            if let Some(i) = rest {
                m.insert(if r.chance(70) { "items" } else { "additionalItems" }.into(), i);
            }
        }
    }
    // Not in 2019-09: there `contains` evaluates no item (only 2020-12 added
    // that), which the oracle does not follow (it reads 2019-09 as 2020-12).
    if !draft2019 && r.chance(30) {
        m.insert("contains".into(), leaf(r));
        if r.chance(30) {
            m.insert("minContains".into(), json!(r.below(3)));
        }
        if r.chance(15) {
            m.insert("maxContains".into(), json!(1 + r.below(2)));
        }
    }
    if r.chance(12) {
        let target = if draft2019 || r.chance(50) { "#/$defs/r" } else { "#/$defs/s" };
        m.insert("$ref".into(), json!(target));
    }
    applicators(r, &mut m, depth, &mut |r, d| array_schema(r, d, draft2019));
    unevaluated(r, &mut m, "unevaluatedItems");
    Value::Object(m)
}

fn schema(r: &mut Rng) -> (Value, bool) {
    let draft2019 = r.chance(25);
    let depth = 1 + r.below(3);
    let mut root = if r.chance(50) { object_schema(r, depth) } else { array_schema(r, depth, draft2019) };
    let m = root.as_object_mut().unwrap();
    let tuple = if draft2019 { json!({"items": [true]}) } else { json!({"prefixItems": [true]}) };
    m.insert(
        "$defs".into(),
        json!({
            "p": {"properties": {"b": {"type": "integer"}}},
            "q": {"properties": {"a": true}, "unevaluatedProperties": false},
            "r": tuple,
            "s": {"contains": {"type": "string"}}
        }),
    );
    if draft2019 {
        m.insert("$schema".into(), json!(DRAFT2019));
    }
    (root, draft2019)
}

fn scalar(r: &mut Rng) -> Value {
    r.pick(&[json!(0), json!(1), json!(2), json!(-1), json!("x"), json!(""), json!(null), json!(true)])
}

fn instance(r: &mut Rng, depth: usize) -> Value {
    let nested = |r: &mut Rng| if depth > 0 && r.chance(15) { instance(r, depth - 1) } else { scalar(r) };
    if r.chance(50) {
        let mut m = Map::new();
        for k in KEYS.iter().chain(&["e"]) {
            if r.chance(40) {
                let v = nested(r);
                m.insert((*k).to_owned(), v);
            }
        }
        Value::Object(m)
    } else {
        let n = r.below(5);
        let mut items = Vec::with_capacity(n);
        for _ in 0..n {
            items.push(nested(r));
        }
        Value::Array(items)
    }
}

#[test]
fn oracle_agrees_on_generated_contracts_and_instances() {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(2_000);
    let mut runner = TestRunner::new(Config { cases, failure_persistence: None, ..Config::default() });
    let (verdicts, accepted_n) = (Cell::new(0u64), Cell::new(0u64));
    let tally = |accepted: bool| {
        verdicts.set(verdicts.get() + 1);
        accepted_n.set(accepted_n.get() + u64::from(accepted));
    };
    let result = runner.run(&any::<u64>(), |seed| {
        let mut r = Rng(seed);
        let (schema, _) = schema(&mut r);
        let c = Contract::from_value(schema.clone()).map_err(|e| TestCaseError::fail(format!("{schema}: {e}")))?;
        let oracle = jsonschema::validator_for(&schema).map_err(|e| TestCaseError::fail(format!("{schema}: {e}")))?;
        for _ in 0..8 {
            let inst = instance(&mut r, 2);
            let raw = inst.to_string();
            let verdict = c.check(&raw);
            let expected = oracle.is_valid(&inst);
            if verdict.is_accepted() != expected {
                return Err(TestCaseError::fail(format!(
                    "contract {schema}\nreply {raw}\noracle valid={expected}, vouch {:?}",
                    verdict.problems().iter().map(ToString::to_string).collect::<Vec<_>>()
                )));
            }
            if verdict != common::expected_verdict(&c, raw.as_bytes()) {
                return Err(TestCaseError::fail(format!(
                    "contract {schema}\nreply {raw}\nsingle pass and full path differ"
                )));
            }
            if !expected && verdict.problems().is_empty() {
                return Err(TestCaseError::fail(format!("contract {schema}\nreply {raw}\nrefused without a problem")));
            }
            tally(expected);
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    let (verdicts, accepted_n) = (verdicts.get(), accepted_n.get());
    common::figure(&format!(
        "unevaluated oracle: {cases} contracts, {verdicts} verdicts, {accepted_n} accepted, {} refused, disagreements 0",
        verdicts - accepted_n
    ));
}

// ------------------------------------------------------------ provider schemas

/// A provider's closed objects are not the same as `unevaluatedProperties`
/// (an `anyOf` branch that fails evaluates nothing), so no export drops it.
#[test]
fn provider_schemas_refuse_unevaluated_keywords() {
    let c = contract(&json!({
        "type": "object",
        "properties": {"a": {"type": "string"}, "l": {"type": "array", "items": {"type": "integer"}, "unevaluatedItems": false}},
        "required": ["a", "l"],
        "unevaluatedProperties": false
    }));
    for provider in [Provider::OpenAi, Provider::Anthropic, Provider::Gemini] {
        let e = c.bare_provider_schema(provider).unwrap_err();
        assert!(e.keyword.starts_with("unevaluated"), "{provider:?}: {e:?}");
    }
}

// ------------------------------------------------------------ the single pass

/// Without in-place subschemas `unevaluated*` is `additionalProperties` (or
/// `items` after the prefix) and is read member by member; with them the
/// node is read whole and settled by the evaluator. Either way the verdict is
/// the full path's (`check` above holds every reply to it).
#[test]
fn plain_nodes_keep_the_single_pass() {
    let plain = contract(&json!({
        "type": "object",
        "properties": {"a": {"type": "integer"}, "l": {"type": "array", "prefixItems": [true], "unevaluatedItems": false}},
        "unevaluatedProperties": false
    }));
    assert!(plain.accepts_in_one_pass(r#"{"a": 1, "l": [0]}"#));
    assert!(plain.refuses_in_one_pass(r#"{"a": 1, "l": [0], "z": 2}"#));
    let composed = contract(&json!({"allOf": [{"properties": {"a": true}}], "unevaluatedProperties": false}));
    // Read whole, then settled by the evaluator: still accepted without the full path.
    assert!(composed.accepts_in_one_pass(r#"{"a": 1}"#));
    assert_eq!(refused(&composed, &json!({"a": 1, "b": 2})), [(ProblemCode::UnexpectedProperty, "/b".to_owned())]);
    // 2020-12's contains evaluates items: that node is read whole too, and still exact.
    let contains =
        contract(&json!({"type": "array", "contains": {"const": 1}, "unevaluatedItems": {"type": "string"}}));
    accepted(&contains, &json!([1, "x", 1]));
    assert_eq!(refused(&contains, &json!([1, 2])), [(ProblemCode::WrongType, "/1".to_owned())]);
}
