//! Provider schemas for the shapes real generators write (Pydantic, Zod,
//! zod-to-json-schema, older drafts): each keyword is translated exactly,
//! made stricter without leaving nearly nothing, or refused naming the
//! keyword, its location and what to do.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod common;

use serde_json::{json, Value};
use vouch::{Contract, Provider};

const PROVIDERS: [Provider; 3] = [Provider::OpenAi, Provider::Anthropic, Provider::Gemini];

fn contract(v: Value) -> Contract {
    Contract::from_value(v.clone()).unwrap_or_else(|e| panic!("{v}: {e}"))
}

fn refused(c: &Contract, p: Provider) -> vouch::ExportError {
    c.bare_provider_schema(p).expect_err(&format!("{p:?} should refuse"))
}

fn exported(c: &Contract, p: Provider) -> Value {
    c.bare_provider_schema(p).unwrap_or_else(|e| panic!("{p:?}: {e}"))
}

/// Every key of every object in a schema, to say a keyword never travels.
fn keys(v: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(m) => {
                out.extend(m.keys().cloned());
                stack.extend(m.values());
            }
            Value::Array(a) => stack.extend(a),
            _ => {}
        }
    }
    out
}

// ------------------------------------------------------------ 1. never emptied

#[test]
fn a_map_is_refused_not_sent_as_an_empty_object() {
    // dict[str, int]
    let c = contract(json!({"type": "object", "properties": {
        "scores": {"type": "object", "additionalProperties": {"type": "integer"}}}, "required": ["scores"]}));
    for p in PROVIDERS {
        let e = refused(&c, p);
        assert_eq!((e.keyword.as_str(), e.location.as_str()), ("additionalProperties", "/properties/scores"), "{p:?}");
        assert!(e.message.contains("map") && e.message.contains("declare the keys as properties"), "{e}");
    }
    // The plain JSON Schema carries it as written.
    assert_eq!(
        exported(&c, Provider::JsonSchema)["properties"]["scores"]["additionalProperties"],
        json!({"type": "integer"})
    );
}

#[test]
fn free_form_objects_and_pattern_maps_are_refused() {
    let cases = [
        (json!({"type": "object"}), "type"),
        (json!({"type": "object", "additionalProperties": true}), "type"),
        (json!({"type": "object", "patternProperties": {"^x-": {"type": "string"}}}), "patternProperties"),
        (json!({"type": "object", "additionalProperties": {}}), "type"),
    ];
    for (meta, keyword) in cases {
        let c = contract(json!({"type": "object", "properties": {"meta": meta}, "required": ["meta"]}));
        for p in PROVIDERS {
            let e = refused(&c, p);
            assert_eq!((e.keyword.as_str(), e.location.as_str()), (keyword, "/properties/meta"), "{p:?} {meta}: {e}");
        }
    }
    // Only {} is possible in the contract too: exact, so it exports.
    let empty = contract(
        json!({"type": "object", "properties": {"e": {"type": "object", "additionalProperties": false}}, "required": ["e"]}),
    );
    assert_eq!(exported(&empty, Provider::OpenAi)["properties"]["e"]["properties"], json!({}));
}

#[test]
fn closing_an_object_with_declared_properties_keeps_them() {
    let c = contract(json!({"type": "object", "properties": {"a": {"type": "string"}},
        "required": ["a"], "additionalProperties": {"type": "integer"}}));
    for p in [Provider::OpenAi, Provider::Anthropic] {
        let s = exported(&c, p);
        assert_eq!(s["additionalProperties"], json!(false), "{p:?}");
        assert_eq!(s["properties"]["a"], json!({"type": "string"}), "{p:?}");
    }
}

#[test]
fn a_declared_property_a_pattern_also_constrains_is_refused() {
    // The pattern's maxLength applies to "a_x" too; one schema cannot hold both.
    let c = contract(json!({"type": "object", "properties": {"a_x": {"type": "string"}}, "required": ["a_x"],
        "patternProperties": {"^a_": {"maxLength": 3}}}));
    for p in PROVIDERS {
        let e = refused(&c, p);
        assert_eq!((e.keyword.as_str(), e.location.as_str()), ("patternProperties", ""), "{p:?}");
        assert!(e.message.contains("\"a_x\""), "{e}");
    }
    // A pattern no declared name matches is implied by the closed object.
    let ok = contract(json!({"type": "object", "properties": {"b": {"type": "string"}}, "required": ["b"],
        "patternProperties": {"^a_": {"maxLength": 3}}}));
    assert!(!keys(&exported(&ok, Provider::OpenAi)).contains(&"patternProperties".to_owned()));
}

#[test]
fn a_required_property_that_is_not_declared_is_refused() {
    // Closed, the object could never hold "b": every reply would be refused.
    let c = contract(json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a", "b"]}));
    for p in PROVIDERS {
        let e = refused(&c, p);
        assert_eq!((e.keyword.as_str(), e.location.as_str()), ("required", ""), "{p:?}");
        assert!(e.message.contains("\"b\""), "{e}");
    }
}

#[test]
fn object_counts_and_dependencies_are_implied_or_refused() {
    let base = json!({"a": {"type": "string"}, "b": {"type": "string"}});
    // OpenAI always sends both: min 2 holds; Anthropic may send only "a".
    let c =
        contract(json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": ["string", "null"]}},
        "required": ["a"], "minProperties": 2}));
    let s = exported(&c, Provider::OpenAi);
    assert!(s.get("minProperties").is_none());
    let e = refused(&c, Provider::Anthropic);
    assert_eq!((e.keyword.as_str(), e.location.as_str()), ("minProperties", ""));
    assert_eq!(exported(&c, Provider::Gemini)["minProperties"], json!(2));
    let most = contract(json!({"type": "object", "properties": base, "required": ["a"], "maxProperties": 1}));
    for p in [Provider::OpenAi, Provider::Anthropic] {
        assert_eq!(refused(&most, p).keyword, "maxProperties", "{p:?}");
    }
    // dependentRequired: the dependents become required where properties are optional.
    let dep = contract(json!({"type": "object", "properties": base, "dependentRequired": {"a": ["b"]}}));
    for p in [Provider::Anthropic, Provider::Gemini] {
        assert_eq!(exported(&dep, p)["required"], json!(["b"]), "{p:?}");
    }
    // A dependency on a property that can never be sent always holds.
    let never = contract(json!({"type": "object", "properties": base, "required": ["a", "b"],
        "dependentSchemas": {"z": {"required": ["q"]}}}));
    for p in PROVIDERS {
        assert!(!keys(&exported(&never, p)).iter().any(|k| k.starts_with("dependent")), "{p:?}");
    }
    let applies = contract(json!({"type": "object", "properties": base, "required": ["a", "b"],
        "dependentSchemas": {"a": {"properties": {"b": {"maxLength": 1}}}}}));
    for p in PROVIDERS {
        let e = refused(&applies, p);
        assert_eq!((e.keyword.as_str(), e.location.as_str()), ("dependentSchemas", ""), "{p:?}");
    }
}

#[test]
fn array_keywords_without_an_exact_translation_are_refused() {
    let cases = [
        (json!({"type": "array", "items": {"type": "string"}, "uniqueItems": true}), "uniqueItems"),
        (json!({"type": "array", "prefixItems": [{"type": "string"}]}), "prefixItems"),
        (json!({"type": "array", "items": {"type": "integer"}, "contains": {"const": 1}}), "contains"),
    ];
    for (arr, keyword) in cases {
        let c = contract(json!({"type": "object", "properties": {"t": arr}, "required": ["t"]}));
        for p in PROVIDERS {
            let e = refused(&c, p);
            assert_eq!((e.keyword.as_str(), e.location.as_str()), (keyword, "/properties/t"), "{p:?} {arr}");
        }
    }
    // At most one item is always unique: exact to drop.
    let one = contract(json!({"type": "object", "properties": {"t": {"type": "array", "items": {"type": "string"},
        "uniqueItems": true, "maxItems": 1}}, "required": ["t"]}));
    assert!(exported(&one, Provider::OpenAi)["properties"]["t"].get("uniqueItems").is_none());
}

#[test]
fn combinators_without_an_exact_translation_are_refused() {
    let cases = [
        (json!({"type": "string", "not": {"const": "x"}}), "not"),
        (json!({"type": "integer", "if": {"minimum": 5}, "then": {"multipleOf": 5}}), "if"),
    ];
    for (sub, keyword) in cases {
        let c = contract(json!({"type": "object", "properties": {"x": sub}, "required": ["x"]}));
        for p in PROVIDERS {
            let e = refused(&c, p);
            assert_eq!((e.keyword.as_str(), e.location.as_str()), (keyword, "/properties/x"), "{p:?} {sub}");
        }
    }
}

#[test]
fn all_of_is_merged_where_nothing_collides_and_refused_where_it_would_mean_more() {
    let c = contract(
        json!({"type": "object", "properties": {"n": {"allOf": [{"type": "integer"}, {"minimum": 1}], "description": "How many."}},
        "required": ["n"]}),
    );
    let s = exported(&c, Provider::OpenAi);
    assert_eq!(s["properties"]["n"], json!({"type": "integer", "minimum": 1, "description": "How many."}));
    // Closed on one side, the other's property is not allowed: merging would accept it.
    let c = contract(json!({"type": "object", "allOf": [
        {"properties": {"a": {"type": "string"}}, "additionalProperties": false},
        {"properties": {"b": {"type": "string"}}}]}));
    let e = refused(&c, Provider::OpenAi);
    assert_eq!((e.keyword.as_str(), e.location.as_str()), ("allOf", ""));
    // Two bounds on one keyword.
    let c = contract(
        json!({"type": "object", "properties": {"n": {"allOf": [{"maximum": 3}, {"maximum": 5}]}}, "required": ["n"]}),
    );
    assert_eq!(refused(&c, Provider::OpenAi).keyword, "allOf");
}

// ------------------------------------------------------------ 2. root $ref

#[test]
fn a_root_ref_exports_its_target() {
    // zod-to-json-schema with a name.
    let c = contract(json!({"$ref": "#/definitions/Answer", "definitions": {"Answer": {"type": "object",
        "properties": {"ok": {"type": "boolean"}, "why": {"type": "string", "description": "Because."}},
        "required": ["ok", "why"], "additionalProperties": false}},
        "$schema": "http://json-schema.org/draft-07/schema#"}));
    for p in PROVIDERS {
        let s = exported(&c, p);
        let ty = s["type"].as_str().unwrap().to_lowercase();
        assert_eq!(ty, "object", "{p:?}");
        assert_eq!(s["properties"]["why"]["description"], json!("Because."), "{p:?}");
        let k = keys(&s);
        for gone in ["$ref", "definitions", "$schema"] {
            assert!(!k.contains(&gone.to_owned()), "{p:?}: {gone} in {s}");
        }
    }
    assert_eq!(exported(&c, Provider::OpenAi)["required"], json!(["ok", "why"]));
}

#[test]
fn references_are_inlined_and_recursion_goes_to_defs_for_openai_only() {
    let c = contract(json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
        "definitions": {"Node": {"type": "object", "properties": {"name": {"type": "string"},
            "children": {"type": "array", "items": {"$ref": "#/definitions/Node"}}}, "required": ["name", "children"]}},
        "properties": {"tree": {"$ref": "#/definitions/Node"}}, "required": ["tree"]}));
    let s = exported(&c, Provider::OpenAi);
    assert_eq!(s["properties"]["tree"]["properties"]["children"]["items"], json!({"$ref": "#/$defs/Node"}));
    assert_eq!(s["$defs"]["Node"]["properties"]["children"]["items"], json!({"$ref": "#/$defs/Node"}));
    let v = jsonschema::validator_for(&s).unwrap();
    assert!(v.is_valid(&json!({"tree": {"name": "a", "children": [{"name": "b", "children": []}]}})));
    assert!(!v.is_valid(&json!({"tree": {"name": "a", "children": [{"name": 1, "children": []}]}})));
    for p in [Provider::Anthropic, Provider::Gemini] {
        let e = refused(&c, p);
        assert_eq!(e.keyword, "$ref", "{p:?}");
        assert!(e.message.contains("recursive"), "{e}");
    }
    // Root recursion through "#".
    let root = contract(json!({"type": "object", "properties": {"next": {"anyOf": [{"$ref": "#"}, {"type": "null"}]}},
        "required": ["next"]}));
    assert_eq!(exported(&root, Provider::OpenAi)["properties"]["next"]["anyOf"][0], json!({"$ref": "#"}));
}

// ------------------------------------------------------------ 3. vacuous keywords

#[test]
fn vacuous_keywords_and_annotations_are_dropped_descriptions_kept() {
    // Zod 4 writes propertyNames {type: string}; Pydantic, titles and defaults.
    let c = contract(json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "https://example.com/a",
        "x-vouch": {"annotations": ["propertyOrder"]}, "propertyOrder": 1,
        "type": "object", "title": "A", "description": "An answer.", "x-generator": "zod",
        "propertyNames": {"type": "string"}, "additionalProperties": true,
        "properties": {
            "tags": {"type": "array", "items": {"type": "string", "x-ui": "chips"}, "minItems": 0, "uniqueItems": false,
                "examples": [["a"]], "$comment": "no"},
            "n": {"type": "integer", "default": 3, "description": "Count.", "deprecated": false}
        },
        "required": ["tags", "n"]}));
    for p in PROVIDERS {
        let s = exported(&c, p);
        let k = keys(&s);
        for gone in [
            "propertyNames",
            "$schema",
            "$id",
            "x-generator",
            "x-ui",
            "propertyOrder",
            "examples",
            "$comment",
            "default",
            "deprecated",
            "uniqueItems",
            "minItems",
            "x-vouch",
        ] {
            assert!(!k.contains(&gone.to_owned()), "{p:?}: {gone} in {s}");
        }
        assert_eq!(s["description"], json!("An answer."), "{p:?}");
        assert_eq!(s["properties"]["n"]["description"], json!("Count."), "{p:?}");
    }
}

#[test]
fn property_names_that_every_declared_name_passes_are_implied() {
    let c = contract(json!({"type": "object", "properties": {"ab": {"type": "string"}}, "required": ["ab"],
        "propertyNames": {"maxLength": 2}}));
    assert!(exported(&c, Provider::OpenAi).get("propertyNames").is_none());
    let c = contract(json!({"type": "object", "properties": {"abc": {"type": "string"}}, "required": ["abc"],
        "propertyNames": {"maxLength": 2}}));
    let e = refused(&c, Provider::OpenAi);
    assert_eq!((e.keyword.as_str(), e.location.as_str()), ("propertyNames", ""));
}

// ------------------------------------------------------------ 4. tagged unions

fn zod_union() -> Value {
    // Zod 4: z.discriminatedUnion("kind", [...]) writes oneOf with const tags.
    json!({"type": "object", "properties": {"shape": {"oneOf": [
        {"type": "object", "properties": {"kind": {"type": "string", "const": "circle"}, "r": {"type": "number"}},
            "required": ["kind", "r"], "additionalProperties": false},
        {"type": "object", "properties": {"kind": {"type": "string", "const": "square"}, "side": {"type": "number"}},
            "required": ["kind", "side"], "additionalProperties": false}
    ]}}, "required": ["shape"]})
}

#[test]
fn disjoint_tagged_unions_export_as_any_of() {
    let c = contract(zod_union());
    for p in PROVIDERS {
        let s = exported(&c, p);
        let branches = s["properties"]["shape"]["anyOf"].as_array().unwrap_or_else(|| panic!("{p:?}: {s}"));
        assert_eq!(branches.len(), 2, "{p:?}");
    }
    // Pydantic: branches are $refs to definitions, tag by a one-value enum.
    let pyd = contract(json!({"$defs": {
        "Cat": {"type": "object", "properties": {"pet_type": {"enum": ["cat"], "type": "string"}, "meows": {"type": "integer"}}, "required": ["pet_type", "meows"]},
        "Dog": {"type": "object", "properties": {"pet_type": {"const": "dog", "type": "string"}, "barks": {"type": "number"}}, "required": ["pet_type", "barks"]}},
        "type": "object", "properties": {"pet": {"oneOf": [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}]}}, "required": ["pet"]}));
    for p in PROVIDERS {
        let s = exported(&pyd, p);
        assert_eq!(s["properties"]["pet"]["anyOf"].as_array().map(Vec::len), Some(2), "{p:?}: {s}");
    }
}

#[test]
fn unions_that_may_overlap_stay_refused() {
    let cases = [
        // The same tag value twice.
        json!({"oneOf": [
            {"type": "object", "properties": {"k": {"const": "a"}}, "required": ["k"]},
            {"type": "object", "properties": {"k": {"const": "a"}, "x": {"type": "string"}}, "required": ["k"]}]}),
        // The tag is optional in one branch: an object without it may match both.
        json!({"oneOf": [
            {"type": "object", "properties": {"k": {"const": "a"}}, "required": ["k"]},
            {"type": "object", "properties": {"k": {"const": "b"}}}]}),
        // Not restricted to objects: a string matches both.
        json!({"oneOf": [
            {"properties": {"k": {"const": "a"}}, "required": ["k"]},
            {"properties": {"k": {"const": "b"}}, "required": ["k"]}]}),
    ];
    for u in cases {
        let c = contract(json!({"type": "object", "properties": {"u": u}, "required": ["u"]}));
        let e = refused(&c, Provider::OpenAi);
        assert_eq!((e.keyword.as_str(), e.location.as_str()), ("oneOf", "/properties/u"), "{u}");
    }
}

#[test]
fn an_openapi_discriminator_is_dropped_once_the_compiler_takes_it() {
    let mut doc = zod_union();
    doc["properties"]["shape"]["discriminator"] = json!({"propertyName": "kind"});
    // The compiler may not know `discriminator` yet; the export test runs once it does.
    let Ok(c) = Contract::from_value(doc) else { return };
    for p in PROVIDERS {
        let s = exported(&c, p);
        assert!(!keys(&s).contains(&"discriminator".to_owned()), "{p:?}");
        assert!(s["properties"]["shape"]["anyOf"].is_array(), "{p:?}");
    }
}

// ------------------------------------------------------------ 5. optional properties

#[test]
fn pydantic_optional_fields_export_for_openai() {
    // class A(BaseModel): name: str; age: Optional[int] = None
    let c = contract(json!({"title": "A", "type": "object", "properties": {
        "name": {"title": "Name", "type": "string"},
        "age": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": null, "title": "Age"}},
        "required": ["name"]}));
    let s = exported(&c, Provider::OpenAi);
    assert_eq!(s["required"], json!(["name", "age"]));
    assert_eq!(s["properties"]["age"]["anyOf"], json!([{"type": "integer"}, {"type": "null"}]));
    assert!(c.check(r#"{"name": "x", "age": null}"#).is_pass());
    // Gemini: nullable, optional.
    let g = exported(&c, Provider::Gemini);
    assert_eq!(g["properties"]["age"], json!({"type": "INTEGER", "nullable": true, "title": "Age"}));
    assert_eq!(g["required"], json!(["name"]));
    // Anthropic: optional as written.
    assert_eq!(exported(&c, Provider::Anthropic)["required"], json!(["name"]));
}

#[test]
fn an_optional_property_the_contract_refuses_null_for_is_refused_for_openai() {
    let cases = [
        json!({"type": "integer"}),
        json!({"anyOf": [{"type": "integer"}, {"type": "string"}]}),
        json!({"type": ["string", "null"], "enum": ["a"]}),
        json!({"allOf": [{"type": ["integer", "null"]}, {"type": "integer"}]}),
    ];
    for sub in cases {
        let c = contract(json!({"type": "object", "properties": {"x": sub}}));
        let e = refused(&c, Provider::OpenAi);
        assert_eq!((e.keyword.as_str(), e.location.as_str()), ("required", "/properties/x"), "{sub}");
        assert!(!c.check(r#"{"x": null}"#).is_accepted(), "{sub}");
        for p in [Provider::Anthropic, Provider::Gemini] {
            let _ = c.bare_provider_schema(p);
        }
    }
    // Through a $ref to a nullable definition: sound, so it exports.
    let c = contract(
        json!({"$defs": {"N": {"type": ["integer", "null"]}}, "type": "object", "properties": {"x": {"$ref": "#/$defs/N"}}}),
    );
    assert_eq!(exported(&c, Provider::OpenAi)["properties"]["x"]["type"], json!(["integer", "null"]));
}

// ------------------------------------------------------------ 6. drafts

#[test]
fn draft_04_exclusive_bounds_are_translated() {
    let c = contract(json!({"$schema": "http://json-schema.org/draft-04/schema#", "type": "object",
        "properties": {"n": {"type": "integer", "minimum": 0, "exclusiveMinimum": true, "maximum": 10, "exclusiveMaximum": false}},
        "required": ["n"]}));
    assert_eq!(
        exported(&c, Provider::OpenAi)["properties"]["n"],
        json!({"type": "integer", "exclusiveMinimum": 0, "maximum": 10})
    );
    assert_eq!(
        exported(&c, Provider::Gemini)["properties"]["n"],
        json!({"type": "INTEGER", "minimum": 1, "maximum": 10})
    );
    assert!(!c.check(r#"{"n": 0}"#).is_accepted() && c.check(r#"{"n": 1}"#).is_pass());
}

#[test]
fn draft_07_tuples_are_refused_by_their_written_name() {
    let c = contract(json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
        "properties": {"pair": {"type": "array", "items": [{"type": "string"}, {"type": "integer"}], "additionalItems": false}},
        "required": ["pair"]}));
    for p in PROVIDERS {
        let e = refused(&c, p);
        assert_eq!((e.keyword.as_str(), e.location.as_str()), ("items", "/properties/pair"), "{p:?}");
        assert!(e.message.contains("tuple"), "{e}");
    }
    // A single-schema items means the same in every draft.
    let c = contract(json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
        "properties": {"l": {"type": "array", "items": {"type": "string"}, "additionalItems": false}}, "required": ["l"]}));
    assert_eq!(
        exported(&c, Provider::OpenAi)["properties"]["l"],
        json!({"type": "array", "items": {"type": "string"}})
    );
}

#[test]
fn draft_07_dependencies_are_read_as_their_2020_12_keywords() {
    let c = contract(json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
        "properties": {"card": {"type": "string"}, "address": {"type": "string"}},
        "dependencies": {"card": ["address"]}}));
    assert_eq!(exported(&c, Provider::Anthropic)["required"], json!(["address"]));
    let c = contract(json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
        "properties": {"card": {"type": "string"}, "address": {"type": "string"}}, "required": ["card", "address"],
        "dependencies": {"card": {"properties": {"address": {"minLength": 5}}}}}));
    let e = refused(&c, Provider::Anthropic);
    assert_eq!((e.keyword.as_str(), e.location.as_str()), ("dependencies", ""));
}

// ------------------------------------------------------------ enums

#[test]
fn a_one_of_of_constants_is_an_enum_only_when_the_constants_differ() {
    let c = contract(
        json!({"type": "object", "properties": {"v": {"oneOf": [{"const": "a"}, {"const": "b", "title": "B"}]}}, "required": ["v"]}),
    );
    assert_eq!(exported(&c, Provider::OpenAi)["properties"]["v"]["enum"], json!(["a", "b"]));
    // "a" matches both branches, so the contract refuses it: no enum may list it.
    let twice = contract(
        json!({"type": "object", "properties": {"v": {"oneOf": [{"const": "a"}, {"const": "a"}, {"const": "b"}]}}, "required": ["v"]}),
    );
    assert!(!twice.check(r#"{"v": "a"}"#).is_accepted());
    assert_eq!(refused(&twice, Provider::OpenAi).keyword, "oneOf");
    // A branch whose type its constant does not have matches nothing.
    let typed = contract(
        json!({"type": "object", "properties": {"v": {"oneOf": [{"const": "a", "type": "integer"}, {"const": "b"}]}}, "required": ["v"]}),
    );
    assert!(exported(&typed, Provider::OpenAi)["properties"]["v"].get("enum").is_none());
}

#[test]
fn gemini_nullable_enums_admit_null_only_where_the_contract_does() {
    let c = contract(json!({"type": "object", "properties": {
        "a": {"type": ["string", "null"], "enum": ["x", "y"]},
        "b": {"enum": ["x", null]}}, "required": ["a", "b"]}));
    let s = exported(&c, Provider::Gemini);
    assert_eq!(s["properties"]["a"], json!({"type": "STRING", "enum": ["x", "y"], "format": "enum"}));
    assert_eq!(s["properties"]["b"], json!({"nullable": true, "enum": ["x"], "type": "STRING", "format": "enum"}));
    assert!(!c.check(r#"{"a": null, "b": null}"#).is_accepted() && c.check(r#"{"a": "x", "b": null}"#).is_pass());
}

#[test]
fn a_policy_beside_a_reference_merges_when_it_repairs_nothing() {
    // A default beside a $ref fills a missing member; it absorbs no keyword.
    let c = contract(json!({"$defs": {"N": {"type": "integer", "minimum": 0}}, "type": "object",
        "properties": {"n": {"$ref": "#/$defs/N", "x-vouch": {"default": 0}}}}));
    let s = exported(&c, Provider::OpenAi);
    assert_eq!(s["properties"]["n"], json!({"type": ["integer", "null"], "minimum": 0}));
    assert_eq!(c.check(r#"{"n": null}"#).value(), Some(&json!({"n": 0})));
    // A repair beside a reference would apply to the target's keywords once merged.
    let c = contract(json!({"$defs": {"N": {"type": "integer", "minimum": 0, "maximum": 5}}, "type": "object",
        "properties": {"n": {"$ref": "#/$defs/N", "type": "integer", "maximum": 3, "x-vouch": {"repair": ["clamp"]}}}, "required": ["n"]}));
    let e = refused(&c, Provider::Anthropic);
    assert_eq!((e.keyword.as_str(), e.location.as_str()), ("$ref", "/properties/n"));
}

#[test]
fn a_member_the_contract_forbids_is_left_out_of_the_closed_object() {
    let c = contract(
        json!({"type": "object", "properties": {"a": {"type": "string"}, "legacy": false}, "required": ["a"]}),
    );
    for p in PROVIDERS {
        let s = exported(&c, p);
        assert!(s["properties"].get("legacy").is_none(), "{p:?}: {s}");
    }
    // Only a forbidden member declared: closed, the object could only be {}, and the contract takes others.
    let c = contract(
        json!({"type": "object", "properties": {"m": {"type": "object", "properties": {"x": false}}}, "required": ["m"]}),
    );
    assert_eq!(refused(&c, Provider::OpenAi).location, "/properties/m");
}

#[test]
fn counts_written_as_decimals_are_translated_like_integers() {
    // `maxLength: 2.0` is 2 (the compiler reads it so); once it was dropped.
    let c =
        contract(json!({"type": "object", "properties": {"s": {"type": "string", "minLength": 1.0, "maxLength": 2.0},
        "l": {"type": "array", "items": {"type": "string"}, "maxItems": 3.0}}, "required": ["s", "l"]}));
    let s = exported(&c, Provider::OpenAi);
    assert_eq!(s["properties"]["s"]["pattern"], json!("^[\\s\\S]{1,2}$"));
    assert_eq!(s["properties"]["l"]["maxItems"], json!(3));
    assert_eq!(exported(&c, Provider::Gemini)["properties"]["s"]["maxLength"], json!(2));
    assert!(!c.check(r#"{"s": "abc", "l": []}"#).is_accepted());
}
