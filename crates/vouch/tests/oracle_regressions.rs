//! Regressions for the bugs the oracle property tests (tests/oracle.rs)
//! found in vouch, each reduced to its smallest contract and reply.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use vouch::{CompileErrorKind, Contract, ProblemClass, Verdict};

fn contract(schema: Value) -> Contract {
    Contract::from_value(schema.clone()).unwrap_or_else(|e| panic!("{schema} does not compile: {e}"))
}

/// The accepted value and the rules of its repairs (`rule path`).
fn accepted(c: &Contract, raw: &str) -> (Value, Vec<String>) {
    match c.check(raw) {
        Verdict::Accepted(a) => {
            (a.value().clone(), a.repairs.iter().map(|r| format!("{} {}", r.rule, r.path)).collect())
        }
        Verdict::Refused(r) => panic!("{raw} refused: {:?}", r.problems),
    }
}

/// The refusal's problems as `code path`.
fn refused(c: &Contract, raw: &str) -> Vec<String> {
    match c.check(raw) {
        Verdict::Accepted(a) => panic!("{raw} accepted as {} with {:?}", a.value(), a.repairs),
        Verdict::Refused(r) => r.problems.iter().map(|p| format!("{} {}", p.code, p.path)).collect(),
    }
}

/// Accepted with repairs, the value checked again is accepted as it is.
fn settled(c: &Contract, value: &Value) {
    let (again, repairs) = accepted(c, &value.to_string());
    assert_eq!((&again, repairs), (value, Vec::<String>::new()), "{value} is not final");
}

// Bug 1: repairs whose net effect is nothing were logged, so a re-check
// repaired again.

#[test]
fn null_replaced_by_a_null_default_is_no_repair() {
    let c = contract(json!({"x-vouch": {"default": null}}));
    assert_eq!(accepted(&c, "null"), (Value::Null, vec![]));
    let c = contract(json!({"properties": {"a": {"x-vouch": {"default": null}}}}));
    assert_eq!(accepted(&c, r#"{"a": null}"#), (json!({"a": null}), vec![]));
    // A missing property is still filled, and logged: that is a change.
    assert_eq!(accepted(&c, "{}"), (json!({"a": null}), vec!["default /a".to_owned()]));
}

#[test]
fn default_if_invalid_back_to_the_same_value_is_no_repair() {
    let c = contract(json!({
        "type": "string", "pattern": "\\s",
        "x-vouch": {"repair": ["trim", "default_if_invalid"], "default": "a "}
    }));
    assert_eq!(accepted(&c, r#""a ""#), (json!("a "), vec![]));
    // Another invalid value is still replaced, and logged once.
    let (v, repairs) = accepted(&c, r#""b ""#);
    assert_eq!((v, repairs), (json!("a "), vec!["default_if_invalid ".to_owned()]));
}

#[test]
fn repairs_that_undo_each_other_are_refused_as_unsettled() {
    // One allOf branch fills /b, the other strips it: no repaired value is final.
    let c = contract(json!({"allOf": [
        {"properties": {"b": {"x-vouch": {"default": "x"}}}},
        {"additionalProperties": false, "x-vouch": {"repair": ["strip_unknown"]}}
    ]}));
    assert_eq!(refused(&c, "{}"), vec!["repairs_unsettled /b"]);
    match c.check("{}") {
        Verdict::Refused(r) => {
            assert_eq!(r.class(), ProblemClass::BadAnswer);
            assert_eq!(
                r.problems[0].message,
                "/b: the contract's repairs do not settle: after 4 passes `default` still changes the value \
                 (repairs on two nodes undo each other)"
            );
        }
        Verdict::Accepted(_) => unreachable!(),
    }
}

// Bug 4: trim and truncate on two nodes repairing one value.

#[test]
fn trim_and_truncate_on_two_nodes_settle() {
    let c = contract(json!({"allOf": [
        {"type": "string", "x-vouch": {"repair": ["trim"]}},
        {"maxLength": 2, "x-vouch": {"repair": ["truncate"]}}
    ]}));
    let (v, repairs) = accepted(&c, r#""a bc""#);
    assert_eq!(v, json!("a"));
    assert_eq!(repairs, vec!["truncate ", "trim "]);
    settled(&c, &v);

    let c = contract(json!({
        "type": "object",
        "properties": {"name": {"type": "string", "x-vouch": {"repair": ["trim"]}}},
        "patternProperties": {"^n": {"type": "string", "maxLength": 3, "x-vouch": {"repair": ["truncate"]}}}
    }));
    let (v, _) = accepted(&c, r#"{"name": "ab cd"}"#);
    assert_eq!(v, json!({"name": "ab"}));
    settled(&c, &v);
}

// Bug 2: a default holding values the contract's defaults fill again grew
// forever.

#[test]
fn a_default_the_contract_would_repair_is_a_compile_error() {
    let tree = json!({
        "$defs": {"t": {
            "type": "object",
            "properties": {
                "v": {"type": "integer"},
                "c": {"type": "array", "items": {"$ref": "#/$defs/t"}, "x-vouch": {"default": [{"v": 1}]}}
            },
            "required": ["v"]
        }},
        "$ref": "#/$defs/t"
    });
    let started = Instant::now();
    let e = Contract::from_value(tree).unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(
        (e.kind, e.keyword.as_str(), e.location.as_str()),
        (CompileErrorKind::BadPolicy, "x-vouch", "/$defs/t/properties/c")
    );
    assert_eq!(
        e.to_string(),
        "/$defs/t/properties/c: x-vouch: the default [{\"v\":1}] is not final: the contract's repairs would change \
         it (/0/c: missing, filled with the default [{\"v\":1}])"
    );

    // A default that a trim on its own node would change.
    let e =
        Contract::from_value(json!({"type": "string", "x-vouch": {"repair": ["trim"], "default": " a"}})).unwrap_err();
    assert_eq!((e.kind, e.location.as_str()), (CompileErrorKind::BadPolicy, ""));

    // A final default holding the property's own default compiles, and fills.
    let c = contract(json!({
        "$defs": {"t": {
            "type": "object",
            "properties": {
                "v": {"type": "integer"},
                "c": {"type": "array", "items": {"$ref": "#/$defs/t"}, "x-vouch": {"default": [{"v": 1, "c": []}]}}
            },
            "required": ["v"]
        }},
        "$ref": "#/$defs/t"
    }));
    let (v, repairs) = accepted(&c, r#"{"v": 0}"#);
    assert_eq!((v.clone(), repairs), (json!({"v": 0, "c": [{"v": 1, "c": []}]}), vec!["default /c".to_owned()]));
    settled(&c, &v);
}

// Bug 3: consumer-safety refusals were failed subschemas, which `not`,
// `oneOf` and `anyOf` turned into acceptances.

#[test]
fn consumer_safety_hazards_are_sticky_under_combinators() {
    // 2^53 + 2: a double holds it to the digit, so only integer nodes refuse it
    // (2^53 + 1 is refused by the reader, whatever the schema: `imprecise_number`).
    let big = "9007199254740994";
    assert_eq!(refused(&contract(json!({"not": {"type": "integer"}})), "9007199254740993"), vec!["imprecise_number "]);
    // Each with whether it accepts the integer once the hazard is allowed.
    for (schema, allowed_accepts) in [
        (json!({"not": {"type": "integer"}}), false),
        (json!({"oneOf": [{"type": "integer"}, true]}), false),
        (json!({"oneOf": [{"type": "integer"}, {"type": "string"}]}), true),
        (json!({"anyOf": [{"type": "integer"}, true]}), true),
        (json!({"if": {"type": "integer"}, "then": true, "else": true}), true),
    ] {
        // The hazard is reported at its path, whatever else the combinator says.
        let problems = refused(&contract(schema.clone()), big);
        assert!(problems.contains(&"out_of_range ".to_owned()), "{schema}: {problems:?}");
        let mut allowed = schema.clone();
        allowed["x-vouch"] = json!({"allow": ["big_integers"]});
        assert_eq!(contract(allowed).check(big).is_accepted(), allowed_accepts, "{schema}");
    }
    let c = contract(json!({"not": {"items": true}}));
    assert_eq!(refused(&c, r#"[{"__proto__": 1}]"#), vec!["unexpected_property /0/__proto__"]);
    let c = contract(json!({"type": "array", "items": {"anyOf": [{"type": "string"}, {"not": {"maxProperties": 0}}]}}));
    assert_eq!(refused(&c, r#"["a", {"constructor": 1}]"#), vec!["unexpected_property /1/constructor", "no_match /1"]);
    // The same checks, run on a parsed value, agree.
    assert!(!c.check_value(&json!(["a", {"constructor": 1}])).is_accepted());
    let c = contract(json!({"not": {"items": true}, "x-vouch": {"allow": ["hazardous_keys"]}}));
    assert!(!c.check(r#"[{"__proto__": 1}]"#).is_accepted(), "not items:true allows no array");
    let c = contract(json!({"not": {"type": "string"}, "x-vouch": {"allow": ["hazardous_keys"]}}));
    assert!(c.check(r#"[{"__proto__": 1}]"#).is_accepted());
}

// Bug 5: multipleOf near zero.

#[test]
fn multiple_of_near_zero() {
    let c = contract(json!({"multipleOf": 2}));
    assert_eq!(refused(&c, "1e-20"), vec!["out_of_range "]);
    assert_eq!(refused(&c, "-5e-324"), vec!["out_of_range "]);
    for ok in ["0", "-0", "0.0", "4", "1e20"] {
        assert!(c.check(ok).is_accepted(), "{ok}");
    }
    let c = contract(json!({"multipleOf": 0.01}));
    assert_eq!(refused(&c, "1e-7"), vec!["out_of_range "]);
    assert!(c.check("0.07").is_accepted());
    let c = contract(json!({"multipleOf": 0.0001}));
    assert!(c.check("0.0075").is_accepted());
}
