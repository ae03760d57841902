//! A contract never silently drops a constraint: everything vouch would have
//! to ignore is a compile error naming the keyword and its location.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use serde_json::json;
use vouch::{CompileErrorKind as Kind, Contract};

fn error(schema: serde_json::Value) -> vouch::CompileError {
    match Contract::from_value(schema.clone()) {
        Ok(_) => panic!("compiled: {schema}"),
        Err(e) => e,
    }
}

fn assert_error(schema: serde_json::Value, kind: Kind, keyword: &str, location: &str) {
    let e = error(schema.clone());
    assert_eq!((e.kind, e.keyword.as_str(), e.location.as_str()), (kind, keyword, location), "{schema}: {e}");
}

#[test]
fn unknown_and_unsupported_keywords() {
    assert_error(json!({"type": "object", "propertees": {}}), Kind::UnknownKeyword, "propertees", "");
    assert_error(json!({"properties": {"a": {"maxLenght": 3}}}), Kind::UnknownKeyword, "maxLenght", "/properties/a");
    assert_error(json!({"contentEncoding": "base16"}), Kind::Unsupported, "contentEncoding", "");
    // `$anchor` is 2019-09's: in draft-07 it would be ignored.
    assert_error(
        json!({"$schema": "http://json-schema.org/draft-07/schema#", "items": {"$anchor": "x"}}),
        Kind::Unsupported,
        "$anchor",
        "/items",
    );
    assert_error(json!({"dependencies": {}}), Kind::Unsupported, "dependencies", "");
    assert_error(json!({"contentMediaType": "application/json"}), Kind::Unsupported, "contentMediaType", "");
    assert_error(json!({"properties": {"a": {"$id": "x#frag"}}}), Kind::InvalidValue, "$id", "/properties/a");
    assert_error(json!({"$schema": "http://example.com/custom"}), Kind::Unsupported, "$schema", "");
}

#[test]
fn formats_are_asserted_or_refused() {
    assert_error(json!({"format": "idn-hostname"}), Kind::UnknownFormat, "format", "");
    assert_error(
        json!({"properties": {"when": {"format": "datetime"}}}),
        Kind::UnknownFormat,
        "format",
        "/properties/when",
    );
    for f in ["date", "date-time", "time", "email", "uuid", "uri", "ipv4", "ipv6"] {
        assert!(Contract::from_value(json!({"format": f})).is_ok(), "{f}");
    }
}

#[test]
fn references() {
    assert_error(json!({"$ref": "https://example.com/schema.json"}), Kind::RemoteRef, "$ref", "");
    assert_error(json!({"$ref": "other.json#/a"}), Kind::RemoteRef, "$ref", "");
    assert_error(
        json!({"properties": {"a": {"$ref": "#/$defs/missing"}}}),
        Kind::UnresolvedRef,
        "$ref",
        "/properties/a",
    );
    assert_error(json!({"$ref": "#name"}), Kind::UnresolvedRef, "$ref", "");
    assert_error(json!({"$ref": "#"}), Kind::RefCycle, "$ref", "");
    assert_error(
        json!({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"allOf": [{"$ref": "#/$defs/a"}]}}, "$ref": "#/$defs/a"}),
        Kind::RefCycle,
        "$ref",
        "/$defs/b/allOf/0",
    );
    // A recursive schema that descends into the value is fine.
    let tree = Contract::from_value(json!({"$defs": {"node": {"type": "object", "properties": {
        "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}}, "additionalProperties": false}},
        "$ref": "#/$defs/node"}))
    .unwrap();
    assert!(tree.check(r#"{"children": [{"children": []}, {}]}"#).is_pass());
    assert_eq!(
        tree.check(r#"{"children": [{"children": [{"x": 1}]}]}"#).problems()[0].path,
        "/children/0/children/0/x"
    );
    // A root $id makes references through it local.
    let by_id = Contract::from_value(json!({"$id": "https://example.com/s", "$defs": {"n": {"type": "integer"}},
        "$ref": "https://example.com/s#/$defs/n"}))
    .unwrap();
    assert!(!by_id.check("\"x\"").is_accepted());
    let to_root = Contract::from_value(json!({"$id": "https://example.com/t", "type": "object",
        "properties": {"next": {"$ref": "https://example.com/t"}}, "additionalProperties": false}))
    .unwrap();
    assert_eq!(to_root.check(r#"{"next": {"x": 1}}"#).problems()[0].path, "/next/x");
}

#[test]
fn malformed_keyword_values() {
    for (schema, keyword, location) in [
        (json!({"type": "text"}), "type", ""),
        (json!({"type": ["string", "string"]}), "type", ""),
        (json!({"minimum": "0"}), "minimum", ""),
        (json!({"properties": {"a": {"maxLength": -1}}}), "maxLength", "/properties/a"),
        (json!({"minItems": 1.5}), "minItems", ""),
        (json!({"multipleOf": 0}), "multipleOf", ""),
        (json!({"required": "a"}), "required", ""),
        (json!({"required": ["a", "a"]}), "required", ""),
        (json!({"enum": "a"}), "enum", ""),
        (json!({"anyOf": []}), "anyOf", ""),
        (json!({"uniqueItems": "yes"}), "uniqueItems", ""),
        (json!({"properties": []}), "properties", ""),
    ] {
        assert_error(schema, Kind::InvalidValue, keyword, location);
    }
    assert_error(json!({"items": 3}), Kind::InvalidValue, "", "/items");
    assert_error(json!({"pattern": "(a)\\1"}), Kind::BadPattern, "pattern", "");
    assert_error(json!({"patternProperties": {"(?=x)": {}}}), Kind::BadPattern, "patternProperties", "");
}

#[test]
fn the_message_names_keyword_and_location() {
    let e = error(json!({"properties": {"score": {"type": "integer", "minimum": "zero"}}}));
    assert_eq!(e.to_string(), "/properties/score: minimum: must be a number");
    let e = Contract::from_json_str("{\"type\": \"object\",}").unwrap_err();
    assert_eq!(e.kind, Kind::NotJson);
    assert!(e.message.contains("line 1, column 19"), "{}", e.message);
    assert_eq!(e.to_string(), "(root): the contract is not JSON: expected a quoted key, found '}' (line 1, column 19)");
    // The reader's words are about the contract here, not a reply.
    let e = Contract::from_json_str("{\"type\": ").unwrap_err();
    assert!(e.message.contains("the contract ends in the middle of a value"), "{}", e.message);
    let e = Contract::from_json_str(&"[".repeat(600)).unwrap_err();
    assert!(e.message.contains("the contract nests deeper than"), "{}", e.message);
    // A repeated key in a contract is as ambiguous as in a reply.
    let e =
        Contract::from_json_str(r#"{"properties": {"a": {"type": "string"}, "a": {"type": "integer"}}}"#).unwrap_err();
    assert_eq!(e.kind, Kind::NotJson);
    assert!(e.message.contains("appears twice") && e.message.contains("/properties/a"), "{}", e.message);
    // Its key is quoted as it is, even one that reads like the reader's words.
    let e = Contract::from_json_str(r#"{"properties": {"the reply": {}, "the reply": {}}}"#).unwrap_err();
    assert!(e.message.contains(r#"the key "the reply" appears twice"#), "{}", e.message);
    // Deep contracts are read without recursion, and refused by the compiler's own limit.
    let deep = "{\"items\": ".repeat(300) + "{}" + &"}".repeat(300);
    assert_eq!(Contract::from_json_str(&deep).unwrap_err().kind, Kind::TooDeep);
}

#[test]
fn policy_errors() {
    let at = |schema: serde_json::Value, location: &str, needle: &str| {
        let e = error(schema);
        assert_eq!((e.kind, e.keyword.as_str(), e.location.as_str()), (Kind::BadPolicy, "x-vouch", location), "{e}");
        assert!(e.message.contains(needle), "{e}");
    };
    at(json!({"x-vouch": "repair"}), "", "must be an object");
    at(json!({"x-vouch": {"fix": []}}), "", "unknown x-vouch key");
    at(json!({"type": "integer", "x-vouch": {"repair": ["guess"]}}), "", "unknown repair rule");
    at(json!({"type": "string", "x-vouch": {"repair": ["clamp"]}}), "", "cannot apply");
    at(json!({"type": "integer", "x-vouch": {"repair": ["clamp"]}}), "", "no minimum or maximum");
    at(json!({"enum": [1, 2], "x-vouch": {"repair": ["coerce"]}}), "", "declare the node's `type`");
    at(json!({"type": "number", "exclusiveMaximum": 1, "x-vouch": {"repair": ["clamp"]}}), "", "exclusive");
    at(json!({"type": "number", "x-vouch": {"repair": ["round"]}}), "", "integer");
    at(json!({"type": ["string", "integer"], "x-vouch": {"repair": ["coerce"]}}), "", "admits strings");
    at(json!({"type": "string", "x-vouch": {"repair": ["enum_case"]}}), "", "enum");
    at(json!({"type": "string", "x-vouch": {"repair": ["truncate"]}}), "", "maxLength");
    at(json!({"type": "array", "x-vouch": {"repair": ["drop_invalid_items"]}}), "", "items");
    at(json!({"type": "object", "x-vouch": {"repair": ["strip_unknown"]}}), "", "additionalProperties: false");
    at(json!({"type": "integer", "x-vouch": {"repair": ["default_if_invalid"]}}), "", "needs a `default`");
    at(json!({"type": "integer", "x-vouch": {"repair": ["clamp", "clamp"], "default": 0}, "minimum": 0}), "", "twice");
    at(
        json!({"properties": {"s": {"type": "integer", "minimum": 0, "x-vouch": {"default": -1}}}}),
        "/properties/s",
        "does not satisfy",
    );
    at(
        json!({"properties": {"a": {"x-vouch": {"unwrap": ["fence"]}}}}),
        "/properties/a",
        "only allowed at the contract's root",
    );
    at(json!({"x-vouch": {"unwrap": ["markdown"]}}), "", "unknown unwrap");
    at(json!({"x-vouch": {"limits": {"max_depth": 0}}}), "", "positive integer");
    at(json!({"x-vouch": {"limits": {"max_depth": 100000}}}), "", "at most 512");
    at(json!({"x-vouch": {"findings": [{"when": {}}]}}), "", "message");
    at(
        json!({"anyOf": [{"type": "integer", "minimum": 0, "x-vouch": {"repair": ["clamp"]}}, {"type": "string"}]}),
        "/anyOf/0",
        "ambiguous",
    );
    at(
        json!({"$defs": {"s": {"type": "string", "x-vouch": {"repair": ["trim"]}}}, "oneOf": [{"$ref": "#/$defs/s"}]}),
        "/$defs/s",
        "ambiguous",
    );
    at(json!({"if": {"x-vouch": {"findings": [{"when": {}, "message": "m"}]}}}), "/if", "ambiguous");
}

#[test]
fn annotations_and_every_mistake_at_once() {
    // `x-` keys are annotations; others only when the root names them.
    let c =
        Contract::from_value(json!({"properties": {"a": {"type": "integer", "x-kubernetes-patch-merge-key": "a"}}}));
    assert!(c.is_ok_and(|c| c.check(r#"{"a": 1}"#).is_pass()));
    // An unknown keyword far from any vouch enforces is an annotation, as in
    // JSON Schema, and recorded; so is a name with a leading underscore.
    let c =
        Contract::from_value(json!({"propertyOrder": 1, "properties": {"a": {"widget": {"rows": 3}, "_format": "x"}}}))
            .unwrap();
    assert_eq!(
        c.unknown_keywords(),
        &[(String::new(), "propertyOrder".to_owned()), ("/properties/a".to_owned(), "widget".to_owned())]
    );
    // A near miss of an enforced keyword is a mistake that would drop a constraint,
    // unless the root names it an annotation of its own.
    assert_error(json!({"maxLen": 3}), Kind::UnknownKeyword, "maxLen", "");
    assert_error(json!({"additionalProperty": false}), Kind::UnknownKeyword, "additionalProperty", "");
    assert_error(json!({"Required": ["a"]}), Kind::UnknownKeyword, "Required", "");
    assert_error(json!({"min_items": 1}), Kind::UnknownKeyword, "min_items", "");
    let named = json!({"x-vouch": {"annotations": ["maxLen"]}, "properties": {"a": {"maxLen": 1}}});
    assert!(Contract::from_value(named).is_ok());
    // A schema written where a property was meant, and other vocabularies' constraints.
    assert_error(
        json!({"type": "object", "properties": {}, "name": {"type": "string"}}),
        Kind::UnknownKeyword,
        "name",
        "",
    );
    assert_error(json!({"type": "string", "nullable": "yes"}), Kind::InvalidValue, "nullable", "");
    assert_error(json!({"divisibleBy": 2}), Kind::Unsupported, "divisibleBy", "");
    assert_error(json!({"formatMaximum": "2020-01-01"}), Kind::Unsupported, "formatMaximum", "");
    // Tools' annotations that look like enforced keywords are still annotations.
    assert!(Contract::from_value(json!({"pattern": "^a", "patternErrorMessage": "starts with a"})).is_ok());
    // A keyword vouch enforces cannot be declared an annotation (it would be dropped).
    assert_error(json!({"x-vouch": {"annotations": ["maximum"]}, "maximum": 3}), Kind::BadPolicy, "x-vouch", "");
    // Every mistake, in document order, each with its hint.
    let e = error(
        json!({"propertees": {}, "properties": {"a": {"maxmimum": 3, "pettern": "x"}}, "additionalPropeties": false}),
    );
    let all: Vec<(&str, &str)> = e.every().map(|e| (e.keyword.as_str(), e.location.as_str())).collect();
    assert_eq!(
        all,
        [("propertees", ""), ("maxmimum", "/properties/a"), ("pettern", "/properties/a"), ("additionalPropeties", "")]
    );
    assert!(e.every().all(|e| e.message.contains("did you mean")), "{e}");
}

#[test]
fn each_draft_reads_its_own_keywords() {
    let draft4 = |s: serde_json::Value| {
        let mut s = s;
        s["$schema"] = json!("http://json-schema.org/draft-04/schema#");
        Contract::from_value(s).unwrap()
    };
    let c = draft4(json!({"minimum": 3, "exclusiveMinimum": true}));
    assert!(!c.check("3").is_accepted() && c.check("3.5").is_pass());
    let c = draft4(json!({"items": [{"type": "string"}], "additionalItems": false}));
    assert!(c.check(r#"["a"]"#).is_pass() && !c.check(r#"["a", 1]"#).is_accepted());
    let c = draft4(json!({"dependencies": {"a": ["b"], "c": {"required": ["d"]}}}));
    assert!(!c.check(r#"{"a": 1}"#).is_accepted() && !c.check(r#"{"c": 1}"#).is_accepted());
    assert!(c.check(r#"{"a": 1, "b": 2, "c": 3, "d": 4}"#).is_pass());
    // Draft-07 ignores keywords beside `$ref`: a constraint there is refused, not dropped.
    let e = error(
        json!({"$schema": "http://json-schema.org/draft-07/schema#", "definitions": {"a": {}}, "$ref": "#/definitions/a", "maxLength": 2}),
    );
    assert_eq!((e.kind, e.keyword.as_str()), (Kind::Unsupported, "maxLength"));
    // In 2020-12 the older forms are named as such.
    assert_error(json!({"items": [{}]}), Kind::InvalidValue, "items", "");
    assert_error(json!({"dependencies": {}}), Kind::Unsupported, "dependencies", "");
}

#[test]
fn openapi_nullable_adds_null_to_the_type() {
    // openai-node's zod-to-json-schema writes Zod 3's `.nullable()` so.
    let c = Contract::from_value(json!({"type": "string", "nullable": true})).unwrap();
    assert!(c.check("null").is_pass() && c.check(r#""a""#).is_pass() && !c.check("1").is_accepted());
    let c = Contract::from_value(json!({"type": "string", "nullable": false})).unwrap();
    assert!(!c.check("null").is_accepted());
    // An enum must list null itself (OpenAPI 3.0.3).
    let c = Contract::from_value(json!({"type": "string", "enum": ["a"], "nullable": true})).unwrap();
    assert!(!c.check("null").is_accepted());
}

#[test]
fn a_root_that_is_a_ref_hands_its_root_policy_to_its_target() {
    // zod-to-json-schema with a name: the model, and its `x-vouch`, live in `definitions`.
    let c = Contract::from_value(json!({
        "$ref": "#/definitions/Answer",
        "definitions": {"Answer": {"type": "object", "properties": {"a": {"type": "integer"}},
                                   "x-vouch": {"unwrap": ["fence"]}}},
        "$schema": "http://json-schema.org/draft-07/schema#"
    }))
    .unwrap();
    assert!(c.check("```json\n{\"a\": 1}\n```").is_accepted());
    // Elsewhere, root policy stays root-only.
    assert_error(
        json!({"properties": {"a": {"x-vouch": {"unwrap": ["fence"]}}}}),
        Kind::BadPolicy,
        "x-vouch",
        "/properties/a",
    );
}
