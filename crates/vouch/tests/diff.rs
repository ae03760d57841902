//! `Contract::diff`: each kind of change, with its words and its witness
//! (checked here again by both contracts), both ways.

// A test that cannot go on says why (input here is the test's own).
#![allow(clippy::panic, clippy::indexing_slicing, clippy::unwrap_used)]

use serde_json::{json, Value};
use vouch::{ChangeKind, Contract};

fn contract(v: &Value) -> Contract {
    Contract::from_value(v.clone()).unwrap_or_else(|e| panic!("{v}: {e:?}"))
}

/// `(kind, path, message fragment)` expected first among the changes of that kind.
fn expect(old: &Value, new: &Value, kind: ChangeKind, path: &str, words: &str) {
    let (o, n) = (contract(old), contract(new));
    let diff = o.diff(&n);
    let Some(c) = diff.changes.iter().find(|c| c.kind == kind) else {
        panic!("no {kind:?} change in {:#?}\nold {old}\nnew {new}", diff.changes)
    };
    assert_eq!(c.path, path, "{c:#?}");
    assert!(c.message.contains(words), "{:?} does not say {words:?}", c.message);
    // Every witness shown is what it says it is.
    for c in &diff.changes {
        match (c.kind, &c.witness) {
            (ChangeKind::Breaking, Some(w)) => assert!(o.check(w).is_accepted() && !n.check(w).is_accepted(), "{c:?}"),
            (ChangeKind::Loosening, Some(w)) => assert!(n.check(w).is_accepted() && !o.check(w).is_accepted(), "{c:?}"),
            (ChangeKind::Undecided, None) => {}
            _ => panic!("{c:?}"),
        }
    }
    assert!(!(kind != ChangeKind::Loosening && diff.is_compatible()));
}

fn object(props: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": props, "required": required, "additionalProperties": false})
}

#[test]
fn each_kind_of_change_is_told_with_its_witness() {
    use ChangeKind::{Breaking, Loosening};
    let plate = |members: Value| object(json!({"plateSource": {"enum": members}}), &["plateSource"]);
    let four = plate(json!(["user", "generated", "legacy_upload", "legacy_import"]));
    let two = plate(json!(["user", "generated"]));
    expect(
        &four,
        &two,
        Breaking,
        "/plateSource",
        "\"legacy_upload\", \"legacy_import\" removed from the enum at /plateSource",
    );
    expect(&two, &four, Loosening, "/plateSource", "\"legacy_upload\", \"legacy_import\" added to the enum");

    let score = |s: Value| object(json!({"matchScore": s}), &["matchScore"]);
    expect(
        &score(json!({"type": "integer", "maximum": 100})),
        &score(json!({"type": "integer", "maximum": 50})),
        Breaking,
        "/matchScore",
        "maximum 100 → 50 at /matchScore",
    );
    expect(
        &score(json!({"type": "integer", "maximum": 50})),
        &score(json!({"type": "integer", "maximum": 100})),
        Loosening,
        "/matchScore",
        "maximum 50 → 100",
    );
    expect(
        &score(json!({"type": "integer", "minimum": 0})),
        &score(json!({"type": "integer", "exclusiveMinimum": 0})),
        Breaking,
        "/matchScore",
        "exclusiveMinimum (none) → 0",
    );
    expect(
        &score(json!({"type": "number", "exclusiveMaximum": 10})),
        &score(json!({"type": "number", "exclusiveMaximum": 5})),
        Breaking,
        "/matchScore",
        "exclusiveMaximum 10 → 5",
    );
    expect(
        &score(json!({"type": ["integer", "null"]})),
        &score(json!({"type": "integer"})),
        Breaking,
        "/matchScore",
        "type [\"integer\",\"null\"] → \"integer\"",
    );
    expect(
        &score(json!({"type": "integer"})),
        &score(json!({"type": "number"})),
        Loosening,
        "/matchScore",
        "type \"integer\" → \"number\"",
    );
    expect(&score(json!({"const": 1})), &score(json!({"const": 2})), Breaking, "/matchScore", "const 1 → 2");
    expect(
        &score(json!({"type": "integer", "multipleOf": 2})),
        &score(json!({"type": "integer", "multipleOf": 4})),
        Breaking,
        "/matchScore",
        "multipleOf 2 → 4",
    );

    let text = |s: Value| object(json!({"summary": s}), &["summary"]);
    expect(
        &text(json!({"type": "string"})),
        &text(json!({"type": "string", "minLength": 3})),
        Breaking,
        "/summary",
        "minLength (none) → 3",
    );
    expect(
        &text(json!({"type": "string", "maxLength": 10})),
        &text(json!({"type": "string", "maxLength": 2})),
        Breaking,
        "/summary",
        "maxLength 10 → 2",
    );
    expect(
        &text(json!({"type": "string"})),
        &text(json!({"type": "string", "pattern": "^[0-9]+$"})),
        Breaking,
        "/summary",
        "pattern (none) → \"^[0-9]+$\"",
    );
    expect(
        &text(json!({"type": "string"})),
        &text(json!({"type": "string", "format": "date"})),
        Breaking,
        "/summary",
        "format (none) → \"date\"",
    );
    expect(
        &text(json!({"type": "string", "pattern": "^a"})),
        &text(json!({"type": "string", "pattern": "^b"})),
        Breaking,
        "/summary",
        "pattern \"^a\" → \"^b\"",
    );

    let list = |s: Value| object(json!({"tags": s}), &["tags"]);
    expect(
        &list(json!({"type": "array", "items": {"type": "string"}})),
        &list(json!({"type": "array", "items": {"type": "string"}, "minItems": 1})),
        Breaking,
        "/tags",
        "minItems (none) → 1",
    );
    expect(
        &list(json!({"type": "array", "maxItems": 5})),
        &list(json!({"type": "array", "maxItems": 2})),
        Breaking,
        "/tags",
        "maxItems 5 → 2",
    );
    expect(
        &list(json!({"type": "array", "items": {"type": "string"}})),
        &list(json!({"type": "array", "items": {"type": "string", "enum": ["a"]}})),
        Breaking,
        "/tags/*",
        "an enum (\"a\") now restricts /tags/*",
    );
    expect(
        &list(json!({"type": "array", "items": {"type": "integer"}})),
        &list(json!({"type": "array", "items": {"type": "integer"}, "uniqueItems": true})),
        Breaking,
        "/tags",
        "uniqueItems (none) → true",
    );

    let two_props = json!({"verdict": {"type": "string"}, "reason": {"type": "string"}});
    expect(
        &object(two_props.clone(), &["verdict"]),
        &object(two_props.clone(), &["verdict", "reason"]),
        Breaking,
        "/",
        "/reason became required",
    );
    expect(
        &object(two_props.clone(), &["verdict", "reason"]),
        &object(two_props.clone(), &["verdict"]),
        Loosening,
        "/",
        "/reason is no longer required",
    );
    expect(
        &object(two_props.clone(), &["verdict"]),
        &object(json!({"verdict": {"type": "string"}}), &["verdict"]),
        Breaking,
        "/reason",
        "/reason removed from a closed object",
    );
    let open = json!({"type": "object", "properties": {"verdict": {"type": "string"}}, "required": ["verdict"]});
    let closed = object(json!({"verdict": {"type": "string"}}), &["verdict"]);
    expect(&open, &closed, Breaking, "/", "additional properties closed at /");
    expect(&closed, &open, Loosening, "/", "additional properties opened at /");
    // A property the old object did not name but let through, now typed.
    let typed = json!({"type": "object", "properties": {"verdict": {"type": "string"}, "score": {"type": "integer"}}, "required": ["verdict"]});
    expect(&open, &typed, Breaking, "/score", "changed from (none) to");

    let any = |branches: Value| object(json!({"v": {"anyOf": branches}}), &["v"]);
    expect(
        &any(json!([{"type": "string"}, {"type": "integer"}])),
        &any(json!([{"type": "string"}])),
        Breaking,
        "/v",
        "anyOf",
    );
    let one = |branches: Value| object(json!({"v": {"oneOf": branches}}), &["v"]);
    expect(
        &one(json!([{"type": "string"}, {"type": "boolean"}])),
        &one(json!([{"type": "string"}])),
        Breaking,
        "/v",
        "oneOf",
    );

    let refd = |max: u64| json!({"type": "object", "properties": {"s": {"$ref": "#/$defs/Score"}}, "required": ["s"], "$defs": {"Score": {"type": "integer", "maximum": max}}});
    expect(&refd(100), &refd(50), Breaking, "/s", "maximum 100 → 50 at /s");
    expect(&refd(50), &refd(100), Loosening, "/s", "maximum 50 → 100 at /s");
    let retargeted = json!({"type": "object", "properties": {"s": {"$ref": "#/$defs/Other"}}, "required": ["s"], "$defs": {"Score": {"type": "integer"}, "Other": {"type": "string"}}});
    let first = json!({"type": "object", "properties": {"s": {"$ref": "#/$defs/Score"}}, "required": ["s"], "$defs": {"Score": {"type": "integer"}, "Other": {"type": "string"}}});
    expect(&first, &retargeted, Breaking, "/s", "type \"integer\" → \"string\"");
}

#[test]
fn policy_changes_are_told_with_a_reply_that_needed_the_policy() {
    use ChangeKind::{Breaking, Loosening};
    let score = |policy: Value| {
        object(
            json!({"matchScore": {"type": "integer", "minimum": 0, "maximum": 100, "x-vouch": policy}}),
            &["matchScore"],
        )
    };
    let coerce = score(json!({"repair": ["coerce"]}));
    let none = object(json!({"matchScore": {"type": "integer", "minimum": 0, "maximum": 100}}), &["matchScore"]);
    expect(&coerce, &none, Breaking, "/matchScore", "`coerce` no longer declared at /matchScore");
    expect(&none, &coerce, Loosening, "/matchScore", "`coerce` newly declared at /matchScore");
    let clamp = score(json!({"repair": ["clamp"]}));
    expect(&clamp, &none, Breaking, "/matchScore", "`clamp` no longer declared");
    let defaulted = object(json!({"reason": {"type": "string", "x-vouch": {"default": ""}}}), &["reason"]);
    let bare = object(json!({"reason": {"type": "string"}}), &["reason"]);
    expect(&defaulted, &bare, Breaking, "/reason", "`default` no longer declared");
    expect(&bare, &defaulted, Loosening, "/reason", "`default` newly declared");
    let mut fenced = bare.clone();
    fenced["x-vouch"] = json!({"unwrap": ["fence"]});
    expect(&fenced, &bare, Breaking, "/", "`unwrap` no longer declared at /");
    expect(&bare, &fenced, Loosening, "/", "`unwrap` newly declared at /");
}

#[test]
fn equal_contracts_and_annotations_are_compatible_and_unknown_moves_undecided() {
    let a =
        json!({"type": "object", "title": "A", "properties": {"x": {"type": "string", "description": "old words"}}});
    let b = json!({"type": "object", "title": "B", "properties": {"x": {"type": "string", "description": "new words", "examples": ["e"]}}});
    let diff = contract(&a).diff(&contract(&b));
    assert!(diff.is_compatible() && diff.changes.is_empty(), "{diff:#?}");
    assert!(contract(&a).diff(&contract(&a)).changes.is_empty());
    // Another draft: the same keywords may mean other things, so nothing is proof.
    let mut draft7 = a.clone();
    draft7["$schema"] = json!("http://json-schema.org/draft-07/schema#");
    let diff = contract(&a).diff(&contract(&draft7));
    assert_eq!(diff.count(ChangeKind::Undecided), 1, "{diff:#?}");
    assert!(diff.changes[0].message.contains("the draft changed"), "{diff:#?}");
    let mut same = a.clone();
    same["$schema"] = json!("https://json-schema.org/draft/2020-12/schema");
    let mut same_again = a.clone();
    same_again["$schema"] = json!("http://json-schema.org/draft/2020-12/schema#");
    assert!(contract(&same).diff(&contract(&same_again)).changes.is_empty());
    assert!(contract(&a).diff(&contract(&same)).changes.is_empty(), "no $schema is 2020-12");
    // A pattern that only widens: no witness of a refusal exists, so it is undecided, never compatible.
    let narrow = json!({"type": "string", "pattern": "^[a-z]+$"});
    let wide = json!({"type": "string", "pattern": "^[a-z]*$"});
    let diff = contract(&narrow).diff(&contract(&wide));
    assert!(!diff.is_compatible(), "{diff:#?}");
    assert_eq!(diff.count(ChangeKind::Undecided), 1, "{diff:#?}");
    assert_eq!(diff.count(ChangeKind::Breaking), 0, "{diff:#?}");
}

#[test]
fn a_contract_that_would_make_a_huge_witness_is_compared_within_bounds() {
    // Nested minItems multiply: 100^6 items if built whole.
    let mut deep = json!({"type": "integer"});
    for _ in 0..6 {
        deep = json!({"type": "array", "minItems": 100, "items": deep});
    }
    let mut tighter = deep.clone();
    tighter["maxItems"] = json!(150);
    let start = std::time::Instant::now();
    let diff = contract(&deep).diff(&contract(&tighter));
    assert!(!diff.is_compatible(), "{diff:?}");
    assert!(start.elapsed() < std::time::Duration::from_secs(30));
    // A contract nested deeper than the comparison follows: undecided there, never compatible.
    let mut nested = json!({"type": "integer", "maximum": 5});
    let mut looser = json!({"type": "integer", "maximum": 4});
    for _ in 0..80 {
        nested = json!({"type": "object", "properties": {"a": nested}, "required": ["a"]});
        looser = json!({"type": "object", "properties": {"a": looser}, "required": ["a"]});
    }
    let diff = contract(&nested).diff(&contract(&looser));
    assert!(!diff.is_compatible(), "{diff:?}");
}
