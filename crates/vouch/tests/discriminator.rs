//! OpenAPI's `discriminator`, as Pydantic emits it for tagged unions: checked
//! for consistency with its union at compile time, and used to evaluate and
//! report a reply against the one branch its tag names.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use proptest::prelude::*;
use serde_json::{json, Value};
use vouch::{CompileErrorKind, Contract, ProblemCode};

/// What Pydantic 2.14 writes for `Annotated[Union[Cat, Dog], Field(discriminator="kind")]`.
fn pets(union: &str) -> Value {
    json!({
        "$defs": {
            "Cat": {"type": "object", "title": "Cat",
                    "properties": {"kind": {"const": "cat", "type": "string"}, "lives": {"type": "integer", "minimum": 0, "maximum": 9}},
                    "required": ["kind", "lives"]},
            "Dog": {"type": "object", "title": "Dog",
                    "properties": {"kind": {"const": "dog", "type": "string"}, "good": {"type": "boolean"}},
                    "required": ["kind", "good"]}
        },
        "type": "object",
        "properties": {"pet": {
            union: [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}],
            "discriminator": {"propertyName": "kind", "mapping": {"cat": "#/$defs/Cat", "dog": "#/$defs/Dog"}}
        }},
        "required": ["pet"]
    })
}

#[test]
fn pydantic_tagged_unions_compile_and_decide() {
    for union in ["oneOf", "anyOf"] {
        let c = Contract::from_value(pets(union)).unwrap();
        assert!(c.check(r#"{"pet": {"kind": "cat", "lives": 3}}"#).is_accepted());
        assert!(c.check(r#"{"pet": {"kind": "dog", "good": true}}"#).is_accepted());
        assert!(!c.check(r#"{"pet": {"kind": "dog", "lives": 3}}"#).is_accepted());
        assert!(!c.check(r#"{"pet": "cat"}"#).is_accepted());
    }
}

#[test]
fn a_refusal_is_reported_against_the_branch_the_tag_names() {
    let c = Contract::from_value(pets("oneOf")).unwrap();
    let v = c.check(r#"{"pet": {"kind": "cat", "lives": 12}}"#);
    let p = v.problems();
    assert_eq!(p.len(), 1, "{p:?}");
    assert_eq!(p[0].code, ProblemCode::OutOfRange);
    assert_eq!(p[0].path, "/pet/lives");

    let v = c.check(r#"{"pet": {"kind": "dog", "good": "yes"}}"#);
    assert_eq!(v.problems()[0].code, ProblemCode::WrongType);
    assert_eq!(v.problems()[0].path, "/pet/good");
}

#[test]
fn a_missing_or_unknown_tag_is_reported_at_the_tag() {
    let c = Contract::from_value(pets("oneOf")).unwrap();
    let v = c.check(r#"{"pet": {"lives": 3}}"#);
    assert_eq!(v.problems().len(), 1, "{:?}", v.problems());
    assert_eq!(v.problems()[0].code, ProblemCode::Missing);
    assert_eq!(v.problems()[0].path, "/pet/kind");

    let v = c.check(r#"{"pet": {"kind": "cow"}}"#);
    assert_eq!(v.problems()[0].code, ProblemCode::NotAllowed);
    assert_eq!(v.problems()[0].path, "/pet/kind");
    assert!(v.problems()[0].message.contains("cat, dog"), "{}", v.problems()[0].message);

    let v = c.check(r#"{"pet": {"kind": 7}}"#);
    assert_eq!(v.problems()[0].code, ProblemCode::WrongType);
    assert_eq!(v.problems()[0].path, "/pet/kind");
}

#[test]
fn inline_branches_bare_names_and_tags_through_all_of() {
    // Zod 4's discriminatedUnion writes inline branches; OpenAPI allows bare
    // schema names in the mapping; a tag may be fixed by a schema applied in place.
    let c = Contract::from_value(json!({
        "$defs": {"Base": {"properties": {"type": {"const": "b"}}, "required": ["type"]}},
        "oneOf": [
            {"type": "object", "properties": {"type": {"enum": ["a", "A"]}, "x": {"type": "integer"}}, "required": ["type", "x"]},
            {"allOf": [{"$ref": "#/$defs/Base"}], "properties": {"y": {"type": "string"}}, "required": ["y"]}
        ],
        "discriminator": {"propertyName": "type", "mapping": {"a": "#/oneOf/0"}}
    }))
    .unwrap();
    assert!(c.check(r#"{"type": "A", "x": 1}"#).is_accepted());
    assert!(c.check(r#"{"type": "b", "y": "s"}"#).is_accepted());
    let v = c.check(r#"{"type": "b", "y": 1}"#);
    assert_eq!(v.problems()[0].path, "/y");

    let bare = Contract::from_value(json!({
        "definitions": {"Cat": {"properties": {"kind": {"const": "cat"}}, "required": ["kind"]}},
        "oneOf": [{"$ref": "#/definitions/Cat"}],
        "discriminator": {"propertyName": "kind", "mapping": {"cat": "Cat"}}
    }));
    assert!(bare.is_ok(), "{bare:?}");
}

fn refusal(schema: Value) -> vouch::CompileError {
    match Contract::from_value(schema) {
        Ok(_) => panic!("an inconsistent discriminator compiled"),
        Err(e) => e,
    }
}

#[test]
fn a_discriminator_that_does_not_tell_the_truth_is_refused() {
    // A branch that does not require the tag.
    let mut s = pets("oneOf");
    s["$defs"]["Dog"]["required"] = json!(["good"]);
    let e = refusal(s);
    assert_eq!(e.kind, CompileErrorKind::InvalidValue);
    assert_eq!(e.keyword, "discriminator");
    assert_eq!(e.location, "/properties/pet");
    assert!(e.message.contains("oneOf/1"), "{e}");

    // Two branches admitting the same tag.
    let mut s = pets("oneOf");
    s["$defs"]["Dog"]["properties"]["kind"] = json!({"enum": ["dog", "cat"]});
    let e = refusal(s);
    assert!(e.message.contains("both admit"), "{e}");

    // A mapping naming a schema that is not a branch, and one naming the wrong branch.
    let mut s = pets("oneOf");
    s["$defs"]["Bird"] = json!({"type": "object"});
    s["properties"]["pet"]["discriminator"]["mapping"]["bird"] = json!("#/$defs/Bird");
    s["properties"]["pet"]["discriminator"]["mapping"]["cat"] = json!("#/$defs/Dog");
    let e = refusal(s);
    let all: Vec<String> = e.every().map(|e| e.message.clone()).collect();
    assert_eq!(all.len(), 2, "{all:?}");
    assert!(all.iter().any(|m| m.contains("\"bird\"") && m.contains("not one of")), "{all:?}");
    assert!(all.iter().any(|m| m.contains("\"cat\"") && m.contains("does not admit")), "{all:?}");

    // No union beside it; a malformed one; an unknown member.
    let e = refusal(json!({"discriminator": {"propertyName": "kind"}}));
    assert_eq!(e.keyword, "discriminator");
    let e = refusal(json!({"oneOf": [true], "discriminator": {"mapping": {}}}));
    assert_eq!(e.kind, CompileErrorKind::InvalidValue);
    let e = refusal(json!({"oneOf": [true], "discriminator": {"propertyName": "k", "propertName": "k"}}));
    assert_eq!(e.kind, CompileErrorKind::UnknownKeyword);
    // A mapping to a name that is nowhere.
    let e = refusal(json!({"oneOf": [true], "discriminator": {"propertyName": "k", "mapping": {"a": "Nowhere"}}}));
    assert_eq!(e.kind, CompileErrorKind::UnresolvedRef);
}

/// Replies of every shape around the pets union: objects with and without
/// tags, right and wrong members, and non-objects.
fn reply() -> impl Strategy<Value = Value> {
    let tag =
        prop_oneof![Just(json!("cat")), Just(json!("dog")), Just(json!("cow")), Just(json!(1)), Just(Value::Null)];
    let member = prop_oneof![(0i64..12).prop_map(Value::from), any::<bool>().prop_map(Value::from), Just(json!("x")),];
    let pet = (proptest::option::of(tag), proptest::option::of(member.clone()), proptest::option::of(member)).prop_map(
        |(kind, lives, good)| {
            let mut m = serde_json::Map::new();
            if let Some(k) = kind {
                m.insert("kind".into(), k);
            }
            if let Some(l) = lives {
                m.insert("lives".into(), l);
            }
            if let Some(g) = good {
                m.insert("good".into(), g);
            }
            Value::Object(m)
        },
    );
    prop_oneof![4 => pet, 1 => Just(json!("cat")), 1 => Just(json!([])), 1 => Just(Value::Null)]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// The discriminator changes which branch is evaluated, never the
    /// verdict: the same union without it (and the `jsonschema` crate on the
    /// document, where the discriminator is an unknown keyword it ignores)
    /// decides every reply the same way.
    #[test]
    fn the_tag_shortcut_never_changes_a_verdict(
        pet in reply(),
        union in prop_oneof![Just("oneOf"), Just("anyOf")],
        closed in any::<bool>(),
    ) {
        let mut with = pets(union);
        if closed {
            // What the tagged branch evaluated counts for `unevaluatedProperties`.
            with["properties"]["pet"]["unevaluatedProperties"] = json!(false);
        }
        let mut without = with.clone();
        without["properties"]["pet"].as_object_mut().unwrap().remove("discriminator");
        let a = Contract::from_value(with.clone()).unwrap();
        let b = Contract::from_value(without).unwrap();
        let oracle = jsonschema::validator_for(&with).unwrap();
        let raw = json!({"pet": pet}).to_string();
        let accepted = a.check(&raw).is_accepted();
        prop_assert_eq!(accepted, b.check(&raw).is_accepted(), "{}", raw);
        prop_assert_eq!(accepted, oracle.is_valid(&json!({"pet": pet})), "{}", raw);
    }
}
