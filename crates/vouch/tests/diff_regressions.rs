//! `Contract::diff` never says compatible where a reply OLD accepts is
//! refused by NEW: one pair per class found by a hunt for such pairs
//! (2026-12-08), each with the reply that shows it, checked here by both
//! contracts, so the pair keeps meaning what it says.

// A test that cannot go on says why (input here is the test's own).
#![allow(clippy::panic, clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used)]

use std::sync::mpsc;
use std::time::Duration;

use serde_json::{json, Value};
use vouch::{ChangeKind, Contract};

fn contract(v: &Value) -> Contract {
    Contract::from_value(v.clone()).unwrap_or_else(|e| panic!("{v}: {e:?}"))
}

/// OLD accepts `reply`, NEW refuses it, and the diff is not compatible:
/// breaking (its witness checked) or undecided.
fn not_compatible(case: &str, old: &Value, new: &Value, reply: &str) {
    let (o, n) = (contract(old), contract(new));
    assert!(o.check(reply).is_accepted(), "{case}: OLD refuses {reply}");
    assert!(!n.check(reply).is_accepted(), "{case}: NEW accepts {reply}");
    let diff = o.diff(&n);
    assert!(!diff.is_compatible(), "{case}: called compatible: {:#?}", diff.changes);
    for c in &diff.changes {
        match (c.kind, &c.witness) {
            (ChangeKind::Breaking, Some(w)) => {
                assert!(o.check(w).is_accepted() && !n.check(w).is_accepted(), "{case}: {c:?}");
            }
            (ChangeKind::Loosening, Some(w)) => {
                assert!(n.check(w).is_accepted() && !o.check(w).is_accepted(), "{case}: {c:?}");
            }
            (ChangeKind::Undecided, None) => {}
            _ => panic!("{case}: {c:?}"),
        }
    }
}

/// As [`not_compatible`], and the change is shown breaking with a witness.
fn breaking(case: &str, old: &Value, new: &Value, reply: &str) {
    not_compatible(case, old, new, reply);
    let diff = contract(old).diff(&contract(new));
    assert!(diff.count(ChangeKind::Breaking) > 0, "{case}: no witness: {:#?}", diff.changes);
}

#[test]
fn content_encoding_is_enforced_not_an_annotation() {
    breaking("added", &json!({"type": "string"}), &json!({"type": "string", "contentEncoding": "base64"}), r#""!!""#);
    not_compatible(
        "base64 → base64url",
        &json!({"type": "string", "contentEncoding": "base64"}),
        &json!({"type": "string", "contentEncoding": "base64url"}),
        r#""a+/=""#,
    );
}

#[test]
fn a_reference_the_walk_does_not_follow_makes_any_change_undecided() {
    let cases = [
        (
            "into a nested $defs",
            json!({"properties": {"a": {"$defs": {"x": {"type": "integer"}}}, "b": {"$ref": "#/properties/a/$defs/x"}}}),
            json!({"properties": {"a": {"$defs": {"x": {"type": "integer", "maximum": 5}}}, "b": {"$ref": "#/properties/a/$defs/x"}}}),
            r#"{"b":7}"#,
        ),
        (
            "resolved against a nested $id",
            json!({"$defs": {"x": {"type": "integer"}}, "properties": {"p": {"$id": "https://e.com/p", "$defs": {"x": {"type": "integer"}}, "properties": {"q": {"$ref": "#/$defs/x"}}}}}),
            json!({"$defs": {"x": {"type": "integer"}}, "properties": {"p": {"$id": "https://e.com/p", "$defs": {"x": {"type": "integer", "maximum": 5}}, "properties": {"q": {"$ref": "#/$defs/x"}}}}}),
            r#"{"p":{"q":7}}"#,
        ),
        (
            "by an absolute $id",
            json!({"properties": {"p": {"$defs": {"x": {"$id": "https://e.com/x", "type": "integer"}}}, "q": {"$ref": "https://e.com/x"}}}),
            json!({"properties": {"p": {"$defs": {"x": {"$id": "https://e.com/x", "type": "integer", "maximum": 5}}}, "q": {"$ref": "https://e.com/x"}}}),
            r#"{"q":7}"#,
        ),
        (
            "into a keyword the walk skips",
            json!({"properties": {"s": {"type": "string", "properties": {"q": {"type": "integer"}}}, "o": {"$ref": "#/properties/s/properties/q"}}}),
            json!({"properties": {"s": {"type": "string", "properties": {"q": {"type": "integer", "maximum": 5}}}, "o": {"$ref": "#/properties/s/properties/q"}}}),
            r#"{"o":7}"#,
        ),
        (
            "widened where it stands, read under not",
            json!({"properties": {"x": {"type": "integer", "maximum": 5}, "y": {"not": {"$ref": "#/properties/x"}}}}),
            json!({"properties": {"x": {"type": "integer", "maximum": 10}, "y": {"not": {"$ref": "#/properties/x"}}}}),
            r#"{"y":7}"#,
        ),
        (
            "by an anchor, under not",
            json!({"properties": {"x": {"$anchor": "p", "type": "integer", "maximum": 5}, "y": {"not": {"$ref": "#p"}}}}),
            json!({"properties": {"x": {"$anchor": "p", "type": "integer", "maximum": 10}, "y": {"not": {"$ref": "#p"}}}}),
            r#"{"y":7}"#,
        ),
        (
            "widened where it stands, a oneOf branch",
            json!({"properties": {"x": {"type": "integer", "maximum": 5}, "y": {"oneOf": [{"$ref": "#/properties/x"}, {"type": "integer", "minimum": 6}]}}}),
            json!({"properties": {"x": {"type": "integer", "maximum": 10}, "y": {"oneOf": [{"$ref": "#/properties/x"}, {"type": "integer", "minimum": 6}]}}}),
            r#"{"y":7}"#,
        ),
        (
            "widened where it stands, read under a repair",
            json!({"type": "object", "properties": {"a": {"type": "integer", "maximum": 5}, "b": {"type": "array", "items": {"$ref": "#/properties/a"}, "maxItems": 1, "x-vouch": {"repair": ["drop_invalid_items"]}}}}),
            json!({"type": "object", "properties": {"a": {"type": "integer", "maximum": 10}, "b": {"type": "array", "items": {"$ref": "#/properties/a"}, "maxItems": 1, "x-vouch": {"repair": ["drop_invalid_items"]}}}}),
            r#"{"b":[7,1]}"#,
        ),
        (
            "$dynamicRef",
            json!({"$defs": {"n": {"$dynamicAnchor": "n", "type": "integer"}}, "properties": {"a": {"$dynamicRef": "#n"}}}),
            json!({"$defs": {"n": {"$dynamicAnchor": "n", "type": "integer", "maximum": 5}}, "properties": {"a": {"$dynamicRef": "#n"}}}),
            r#"{"a":7}"#,
        ),
    ];
    for (case, old, new, reply) in &cases {
        not_compatible(case, old, new, reply);
        let diff = contract(old).diff(&contract(new));
        assert!(
            diff.changes
                .iter()
                .any(|c| c.kind == ChangeKind::Undecided && c.path == "/" && c.message.contains("does not follow")),
            "{case}: {:#?}",
            diff.changes
        );
    }
    // The same documents unchanged: nothing to say.
    for (_, old, _, _) in &cases {
        assert!(contract(old).diff(&contract(old)).changes.is_empty());
    }
}

#[test]
fn a_definition_met_outside_a_repair_is_compared_again_under_one() {
    let doc = |max: u32| {
        json!({"type": "object", "$defs": {"n": {"type": "integer", "maximum": max}}, "properties": {
            "a": {"$ref": "#/$defs/n"},
            "b": {"type": "array", "items": {"$ref": "#/$defs/n"}, "maxItems": 1, "x-vouch": {"repair": ["drop_invalid_items"]}}
        }})
    };
    not_compatible("widened, then read under drop_invalid_items", &doc(5), &doc(10), r#"{"b":[7,1]}"#);
}

#[test]
fn dropping_what_evaluated_a_member_is_no_widening_under_unevaluated() {
    let cases = [
        (
            "properties",
            json!({"properties": {"a": {}}, "unevaluatedProperties": false}),
            json!({"unevaluatedProperties": false}),
            r#"{"a":1}"#,
        ),
        (
            "an anyOf branch's properties",
            json!({"anyOf": [{"properties": {"a": {}}}], "unevaluatedProperties": false}),
            json!({"anyOf": [{}], "unevaluatedProperties": false}),
            r#"{"a":1}"#,
        ),
        (
            "items",
            json!({"prefixItems": [{}], "items": {"type": "integer"}, "unevaluatedItems": false}),
            json!({"prefixItems": [{}], "unevaluatedItems": false}),
            "[1,2]",
        ),
        (
            "contains",
            json!({"contains": {"type": "integer"}, "unevaluatedItems": false}),
            json!({"unevaluatedItems": false}),
            "[1]",
        ),
        (
            "if",
            json!({"if": {"properties": {"a": {}}}, "unevaluatedProperties": false}),
            json!({"unevaluatedProperties": false}),
            r#"{"a":1}"#,
        ),
        (
            "additionalProperties",
            json!({"additionalProperties": {"type": "integer"}, "unevaluatedProperties": false}),
            json!({"unevaluatedProperties": false}),
            r#"{"a":1}"#,
        ),
        (
            "allOf",
            json!({"allOf": [{"properties": {"a": {}}}], "unevaluatedProperties": false}),
            json!({"unevaluatedProperties": false}),
            r#"{"a":1}"#,
        ),
    ];
    for (case, old, new, reply) in &cases {
        not_compatible(case, old, new, reply);
    }
}

#[test]
fn a_name_a_pattern_checks_is_compared_with_the_pattern_not_additional_properties() {
    for other in [json!(false), json!({"type": "string"})] {
        let old =
            json!({"type": "object", "patternProperties": {"^x": {"type": "integer"}}, "additionalProperties": other});
        let mut new = old.clone();
        new["properties"] = json!({"xa": {"type": "string"}});
        breaking("now named", &old, &new, r#"{"xa":1}"#);
    }
}

#[test]
fn format_on_numbers_is_compared() {
    not_compatible("int32", &json!({"type": "integer"}), &json!({"type": "integer", "format": "int32"}), "10000000000");
    not_compatible("float", &json!({"type": "number"}), &json!({"type": "number", "format": "float"}), "1e39");
}

#[test]
fn bounds_beyond_two_to_the_53_are_compared_exactly() {
    // (keyword, type, OLD's bound, NEW's, allowing big integers, a reply OLD accepts and NEW refuses)
    let (two53, two53_plus_1) = (9_007_199_254_740_992_u64, 9_007_199_254_740_993_u64);
    for (keyword, ty, old, new, big, reply) in [
        ("minimum", "number", two53, two53_plus_1, false, "9007199254740992"),
        ("maximum", "integer", two53_plus_1, two53, true, "9007199254740993"),
        ("maximum", "number", two53_plus_1, two53, true, "9007199254740993"),
        ("exclusiveMinimum", "integer", two53, two53_plus_1, true, "9007199254740993"),
    ] {
        let doc = |bound: u64| {
            let mut d = json!({"type": ty, keyword: bound});
            if big {
                d["x-vouch"] = json!({"allow": ["big_integers"]});
            }
            d
        };
        breaking(&format!("{keyword} on {ty}"), &doc(old), &doc(new), reply);
    }
}

#[test]
fn a_consumer_safety_refusal_made_possible_by_a_widening_is_seen() {
    // A hazardous key no longer declared is refused, whatever else allows it.
    breaking(
        "property removed",
        &json!({"type": "object", "properties": {"__proto__": {}}}),
        &json!({"type": "object"}),
        r#"{"__proto__":1}"#,
    );
    breaking(
        "required shrunk",
        &json!({"type": "object", "required": ["__proto__"]}),
        &json!({"type": "object"}),
        r#"{"__proto__":1}"#,
    );
    breaking(
        "an invisible-character key",
        &json!({"type": "object", "properties": {"a\u{200b}": {}}}),
        &json!({"type": "object"}),
        "{\"a\u{200b}\":1}",
    );
    // A new anyOf branch tried before the old ones meets the hazard of an
    // integer beyond 2^53 − 1; appended after them, it is never tried.
    not_compatible(
        "branch before",
        &json!({"anyOf": [{"type": "number"}]}),
        &json!({"anyOf": [{"type": "integer"}, {"type": "number"}]}),
        "9007199254740992",
    );
    let after = contract(&json!({"anyOf": [{"type": "number"}, {"type": "integer"}]}));
    assert!(after.check("9007199254740992").is_accepted());
    assert!(contract(&json!({"anyOf": [{"type": "number"}]})).diff(&after).is_compatible());
    // An earlier branch widened takes a reply the later branch passed
    // further, to an undeclared `__proto__`.
    let doc = |first: Value| json!({"properties": {"__proto__": {}}, "anyOf": [first, {"type": "object", "properties": {"__proto__": {}, "b": {}}}]});
    not_compatible(
        "earlier branch widened",
        &doc(json!({"type": "array"})),
        &doc(json!({"type": ["array", "object"]})),
        r#"{"b":1,"__proto__":1}"#,
    );
    // Where every later branch is null, boolean or a string (an Optional
    // field), a widened first branch is still a widening.
    let optional = |max: u32| json!({"anyOf": [{"type": "object", "properties": {"n": {"type": "integer", "maximum": max}}}, {"type": "null"}]});
    assert!(contract(&optional(5)).diff(&contract(&optional(10))).is_compatible());
}

/// `diff` ends on contracts that made it run without bound.
#[test]
fn the_comparison_is_bounded() {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        // A Pydantic-shaped tree: two required Optional children (sampled
        // as trees, the smallest reply doubled at each level).
        let node = |max: u32| {
            let child = json!({"anyOf": [{"$ref": "#/$defs/Node"}, {"type": "null"}]});
            json!({"$defs": {"Node": {"type": "object", "properties": {"left": child, "right": child, "v": {"type": "integer", "maximum": max}}, "required": ["left", "right"]}}, "$ref": "#/$defs/Node"})
        };
        breaking("a recursive tree", &node(5), &node(4), r#"{"left":null,"right":null,"v":5}"#);
        // Thousands of changes: one search and one compiled contract each.
        let many = |max: u32| {
            let props: serde_json::Map<String, Value> =
                (0..3000).map(|i| (format!("p{i}"), json!({"type": "integer", "maximum": max}))).collect();
            json!({"type": "object", "properties": props})
        };
        let diff = contract(&many(10)).diff(&contract(&many(9)));
        assert_eq!(diff.changes.len(), 3000);
        assert!(diff.changes.iter().all(|c| c.kind != ChangeKind::Loosening));
        // One definition shared by a thousand others (an OpenAPI `components`
        // shape), widened: which references reach a change is worked out once,
        // not at each place that refers (the time grew with the square).
        let shared = |max: u32| {
            let common: serde_json::Map<String, Value> = (0..1000)
                .map(|i| (format!("c{i}"), json!({"type": "string", "maxLength": if i == 999 { max } else { 100 }})))
                .collect();
            let mut defs = serde_json::Map::new();
            defs.insert("Common".to_owned(), json!({"type": "object", "properties": common}));
            let mut props = serde_json::Map::new();
            for i in 0..1000 {
                defs.insert(
                    format!("D{i}"),
                    json!({"type": "object", "properties": {"common": {"$ref": "#/$defs/Common"}}}),
                );
                props.insert(format!("p{i}"), json!({"$ref": format!("#/$defs/D{i}")}));
            }
            json!({"type": "object", "$defs": defs, "properties": props})
        };
        assert!(contract(&shared(100)).diff(&contract(&shared(200))).is_compatible());
        tx.send(()).unwrap();
    });
    // A watchdog, not a timing: each took over a minute before the bounds.
    match rx.recv_timeout(Duration::from_secs(240)) {
        Ok(()) => {}
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("vouch diff ran past four minutes"),
        Err(mpsc::RecvTimeoutError::Disconnected) => panic!("the comparison's thread failed (see above)"),
    }
}

/// The second hunt's classes (2026-12-08, after the first's were closed).
#[test]
fn references_are_followed_wherever_they_stand() {
    let root = |max: u32, b: Value| json!({"type": "object", "properties": {"a": {"type": "integer", "maximum": max}, "b": b}});
    // `#` is the root, changed whenever anything is: under not, oneOf, a repair.
    not_compatible(
        "# under not",
        &root(5, json!({"not": {"$ref": "#"}})),
        &root(10, json!({"not": {"$ref": "#"}})),
        r#"{"b":{"a":7}}"#,
    );
    let one = json!({"oneOf": [{"$ref": "#"}, {"type": "object"}]});
    not_compatible("# under oneOf", &root(5, one.clone()), &root(10, one), r#"{"b":{"a":7}}"#);
    let dropped =
        json!({"type": "array", "maxItems": 1, "items": {"$ref": "#"}, "x-vouch": {"repair": ["drop_invalid_items"]}});
    not_compatible("# under a repair", &root(5, dropped.clone()), &root(10, dropped), r#"{"b":[{"a":7},{}]}"#);
    let defs = |max: u32, body: Value| {
        let mut doc = body;
        doc["$defs"] = json!({"n": {"type": "integer", "maximum": max}});
        doc
    };
    let patterned = json!({"type": "object", "patternProperties": {"^x": {"$ref": "#/$defs/n"}}});
    not_compatible("in patternProperties", &defs(10, patterned.clone()), &defs(5, patterned), r#"{"xa":7}"#);
    not_compatible(
        "an anyOf's kept branch",
        &defs(10, json!({"anyOf": [{"$ref": "#/$defs/n"}]})),
        &defs(5, json!({"anyOf": [{"$ref": "#/$defs/n"}, {"type": "string"}]})),
        "7",
    );
    let listed = json!({"$schema": "https://json-schema.org/draft/2019-09/schema", "type": "array", "items": [{"$ref": "#/$defs/n"}]});
    not_compatible("in items as a list", &defs(10, listed.clone()), &defs(5, listed), "[7]");
    // A pointer's percent-escapes are decoded, as the check decodes them.
    let escaped = |max: u32| json!({"$defs": {"a b": {"type": "integer", "maximum": max}, "a%20b": {}}, "type": "object", "properties": {"p": {"$ref": "#/$defs/a%20b"}}});
    not_compatible("percent-encoded", &escaped(10), &escaped(5), r#"{"p":7}"#);
}

#[test]
fn a_dropped_subschema_with_a_repair_or_default_is_no_widening() {
    not_compatible(
        "trim in a dropped allOf",
        &json!({"type": "string", "maxLength": 3, "allOf": [{"type": "string", "x-vouch": {"repair": ["trim"]}}]}),
        &json!({"type": "string", "maxLength": 3}),
        r#"" ab ""#,
    );
    not_compatible(
        "a default in a dropped allOf",
        &json!({"type": "object", "required": ["a"], "allOf": [{"properties": {"a": {"type": "integer", "x-vouch": {"default": 1}}}}]}),
        &json!({"type": "object", "required": ["a"]}),
        "{}",
    );
}

#[test]
fn true_is_a_schema_the_check_evaluates_not_an_absent_one() {
    // `true` refuses an object with an undeclared prototype-named key; where
    // no schema stands, nothing is checked.
    let cases = [
        (
            json!({"type": "object", "properties": {"p": {"type": "object", "properties": {"__proto__": {}}}}}),
            json!({"type": "object", "properties": {"p": true}}),
            r#"{"p":{"__proto__":1}}"#,
        ),
        (
            json!({"type": "object", "additionalProperties": {"type": "object", "properties": {"__proto__": {}}}}),
            json!({"type": "object", "additionalProperties": true}),
            r#"{"x":{"__proto__":1}}"#,
        ),
        (
            json!({"type": "array", "items": {"type": "object", "properties": {"constructor": {}}}}),
            json!({"type": "array", "items": true}),
            r#"[{"constructor":1}]"#,
        ),
        (json!({"type": "object", "properties": {"__proto__": {}}}), json!(true), r#"{"__proto__":1}"#),
        (
            json!({"$defs": {"d": {"properties": {"__proto__": {}}}}, "properties": {"p": {"$ref": "#/$defs/d"}}}),
            json!({"$defs": {"d": true}, "properties": {"p": {"$ref": "#/$defs/d"}}}),
            r#"{"p":{"__proto__":1}}"#,
        ),
        (
            json!({"type": "object"}),
            json!({"type": "object", "additionalProperties": true}),
            r#"{"x":{"__proto__":1}}"#,
        ),
        (json!({"type": "array"}), json!({"type": "array", "items": true}), r#"[{"__proto__":1}]"#),
        (json!({"type": "object"}), json!({"type": "object", "properties": {"x": true}}), r#"{"x":{"__proto__":1}}"#),
    ];
    for (i, (old, new, reply)) in cases.iter().enumerate() {
        not_compatible(&format!("case {i}"), old, new, reply);
    }
    // Where no object was accepted, `true` is a widening still; and a
    // schema dropped to nothing is one.
    assert!(contract(&json!({"properties": {"n": {"type": "integer"}}}))
        .diff(&contract(&json!({"properties": {"n": true}})))
        .is_compatible());
    assert!(contract(&json!({"type": "object", "properties": {"n": {"type": "object"}}}))
        .diff(&contract(&json!({"type": "object"})))
        .is_compatible());
}

/// `{"anyOf": [first, then]}`, where `first` also goes down a chain of
/// definitions whose check doubles at each level: a reply taken into it runs
/// past the bound on a check's steps (`too_complex`, which no later branch
/// undoes).
fn past_the_step_bound(first: Value, then: Value) -> Value {
    let mut defs = serde_json::Map::new();
    for i in 0..30 {
        let next = json!({"$ref": format!("#/$defs/d{}", i + 1)});
        defs.insert(format!("d{i}"), json!({"anyOf": [next, next]}));
    }
    defs.insert("d30".to_owned(), json!({"type": "integer"}));
    let mut branch = first;
    branch["allOf"] = json!([{"$ref": "#/$defs/d0"}]);
    json!({"$defs": defs, "anyOf": [branch, then]})
}

#[test]
fn an_earlier_anyof_branch_widened_is_searched_unless_its_type_turns_later_replies_away() {
    let chain = |first: Value| past_the_step_bound(first, json!({"type": "string"}));
    not_compatible(
        "type widened",
        &chain(json!({"type": "integer"})),
        &chain(json!({"type": ["integer", "string"]})),
        r#""x""#,
    );
    not_compatible(
        "maxLength widened",
        &chain(json!({"type": "string", "maxLength": 0})),
        &chain(json!({"type": "string", "maxLength": 5})),
        r#""x""#,
    );
}

/// The third hunt's classes (a random differential fuzzer, 86,869 pairs).
#[test]
fn nullable_counts_among_the_types_an_earlier_branch_is_compared_by() {
    // OpenAPI's `nullable` lets `null` through a later branch too: an earlier
    // branch widened to take `null` sends it into a chain past the step bound.
    let doc = |first: Value| past_the_step_bound(first, json!({"type": "string", "nullable": true}));
    not_compatible("enum dropped", &doc(json!({"type": "null", "enum": [1]})), &doc(json!({"type": "null"})), "null");
}

#[test]
fn a_repair_or_default_anywhere_in_a_dropped_schema_is_seen() {
    let cases = [
        (
            "a property whose definition fills it",
            json!({"$defs": {"C": {"type": "integer", "x-vouch": {"default": 1}}}, "type": "object", "properties": {"c": {"$ref": "#/$defs/C"}}, "required": ["c"]}),
            json!({"$defs": {"C": {"type": "integer", "x-vouch": {"default": 1}}}, "type": "object", "required": ["c"]}),
            "{}",
        ),
        (
            "items whose definition trims, read by contains",
            json!({"$defs": {"S": {"type": "string", "x-vouch": {"repair": ["trim"]}}}, "type": "array", "items": {"$ref": "#/$defs/S"}, "contains": {"const": "a"}}),
            json!({"$defs": {"S": {"type": "string", "x-vouch": {"repair": ["trim"]}}}, "type": "array", "contains": {"const": "a"}}),
            r#"[" a "]"#,
        ),
        (
            "items trimming in an allOf, made true",
            json!({"type": "array", "items": {"type": "string", "allOf": [{"type": "string", "x-vouch": {"repair": ["trim"]}}]}, "contains": {"const": "a"}}),
            json!({"type": "array", "items": true, "contains": {"const": "a"}}),
            r#"[" a "]"#,
        ),
        (
            "a nested trim",
            json!({"type": "array", "items": {"type": "object", "properties": {"s": {"type": "string", "x-vouch": {"repair": ["trim"]}}}}, "contains": {"properties": {"s": {"const": "a"}}}}),
            json!({"type": "array", "contains": {"properties": {"s": {"const": "a"}}}}),
            r#"[{"s":" a "}]"#,
        ),
        (
            "a nested default, read by an enum",
            json!({"type": "object", "properties": {"c": {"type": "object", "properties": {"d": {"type": "integer", "x-vouch": {"default": 1}}}}}, "required": ["c"], "enum": [{"c": {"d": 1}}]}),
            json!({"type": "object", "required": ["c"], "enum": [{"c": {"d": 1}}]}),
            r#"{"c":{}}"#,
        ),
        (
            "an allOf referring to a trim",
            json!({"$defs": {"T": {"type": "string", "x-vouch": {"repair": ["trim"]}}}, "type": "string", "maxLength": 3, "allOf": [{"$ref": "#/$defs/T"}]}),
            json!({"$defs": {"T": {"type": "string", "x-vouch": {"repair": ["trim"]}}}, "type": "string", "maxLength": 3}),
            r#"" ab ""#,
        ),
    ];
    for (case, old, new, reply) in &cases {
        not_compatible(case, old, new, reply);
    }
}
