//! Provider schemas: OpenAI's documented strict-mode rules hold for the
//! example contracts; what a provider cannot express is refused with the
//! keyword and location; and soundness — a reply that satisfies the emitted
//! schema is accepted by the contract — as a property test with the
//! `jsonschema` crate judging the emitted schema.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod common;

use proptest::prelude::*;
use serde_json::{json, Value};
use vouch::{Contract, Provider};

fn example(name: &str) -> Contract {
    let path = common::project_root().join("examples/contracts").join(name);
    Contract::from_json_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

const OPENAI_KEYWORDS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "$defs",
    "$ref",
    "description",
    "title",
    "pattern",
    "format",
    "multipleOf",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minItems",
    "maxItems",
];
const OPENAI_FORMATS: &[&str] = &["date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"];

/// OpenAI's documented strict-mode rules, checked on an emitted schema.
fn assert_openai_strict(schema: &Value) {
    assert_eq!(schema["type"], json!("object"), "root must be an object");
    assert!(schema.get("anyOf").is_none(), "root must not be anyOf");
    let (mut properties, mut enum_values, mut max_depth) = (0usize, 0usize, 0usize);
    let mut stack: Vec<(&Value, usize)> = vec![(schema, 0)];
    while let Some((node, depth)) = stack.pop() {
        let m = node.as_object().unwrap_or_else(|| panic!("every schema is an object: {node}"));
        for k in m.keys() {
            assert!(OPENAI_KEYWORDS.contains(&k.as_str()), "keyword {k} is not accepted in strict mode");
        }
        if let Some(f) = m.get("format") {
            assert!(OPENAI_FORMATS.contains(&f.as_str().unwrap()), "format {f}");
        }
        let object = m.get("type") == Some(&json!("object")) || m.contains_key("properties");
        let mut depth = depth;
        if object {
            depth += 1;
            max_depth = max_depth.max(depth);
            assert_eq!(
                m.get("additionalProperties"),
                Some(&json!(false)),
                "every object has additionalProperties false: {node}"
            );
            let props = m["properties"].as_object().unwrap();
            let mut required: Vec<&str> =
                m["required"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
            let mut keys: Vec<&str> = props.keys().map(String::as_str).collect();
            required.sort_unstable();
            keys.sort_unstable();
            assert_eq!(required, keys, "every property is required: {node}");
            properties += props.len();
            stack.extend(props.values().map(|v| (v, depth)));
        }
        if let Some(e) = m.get("enum") {
            enum_values += e.as_array().unwrap().len();
        }
        for key in ["items"] {
            if let Some(v) = m.get(key) {
                stack.push((v, depth));
            }
        }
        for key in ["anyOf"] {
            for v in m.get(key).and_then(Value::as_array).into_iter().flatten() {
                stack.push((v, depth));
            }
        }
        if let Some(defs) = m.get("$defs").and_then(Value::as_object) {
            stack.extend(defs.values().map(|v| (v, depth)));
        }
    }
    assert!(properties <= 5000 && enum_values <= 1000 && max_depth <= 10, "{properties} {enum_values} {max_depth}");
}

#[test]
fn openai_schemas_of_the_examples_follow_strict_mode_rules() {
    for name in ["plate.json", "eligibility.json"] {
        let sent = example(name).provider_schema(Provider::OpenAi, "answer").unwrap();
        assert_eq!(sent["type"], json!("json_schema"));
        assert_eq!(sent["json_schema"]["strict"], json!(true));
        assert_eq!(sent["json_schema"]["name"], json!("answer"));
        assert_openai_strict(&sent["json_schema"]["schema"]);
        assert!(!sent.to_string().contains("x-vouch"), "{name}: policy leaked");
    }
}

#[test]
fn optional_properties_become_nullable_only_when_the_contract_takes_null() {
    let ok = Contract::from_value(json!({"type": "object", "properties": {
        "a": {"type": "string"},
        "b": {"type": "integer", "x-vouch": {"default": 0}},
        "c": {"type": ["string", "null"]},
        "d": {"enum": ["x", "y"], "x-vouch": {"default": "x"}}
    }, "required": ["a"]}))
    .unwrap();
    let s = ok.bare_provider_schema(Provider::OpenAi).unwrap();
    assert_openai_strict(&s);
    assert_eq!(s["properties"]["b"]["type"], json!(["integer", "null"]));
    assert_eq!(s["properties"]["c"]["type"], json!(["string", "null"]));
    assert_eq!(s["properties"]["d"]["anyOf"][1], json!({"type": "null"}));
    // null for b and d is repaired by the default; for c it is allowed.
    let v = ok.check(r#"{"a": "x", "b": null, "c": null, "d": null}"#);
    assert_eq!(v.value(), Some(&json!({"a": "x", "b": 0, "c": null, "d": "x"})));

    let no_default = Contract::from_value(json!({"type": "object", "properties": {"a": {"type": "string"}}})).unwrap();
    let e = no_default.bare_provider_schema(Provider::OpenAi).unwrap_err();
    assert_eq!((e.keyword.as_str(), e.location.as_str()), ("required", "/properties/a"));
}

#[test]
fn what_a_provider_cannot_express_is_refused_with_keyword_and_location() {
    let cases = [
        (
            Provider::OpenAi,
            json!({"type": "object", "properties": {"t": {"type": "array", "uniqueItems": true}}, "required": ["t"]}),
            "uniqueItems",
            "/properties/t",
        ),
        (
            Provider::OpenAi,
            json!({"type": "object", "properties": {"u": {"type": "string", "format": "uri"}}, "required": ["u"]}),
            "format",
            "/properties/u",
        ),
        (
            Provider::OpenAi,
            json!({"type": "object", "properties": {"p": {"type": "array", "prefixItems": [{"type": "string"}]}}, "required": ["p"]}),
            "prefixItems",
            "/properties/p",
        ),
        (
            Provider::OpenAi,
            json!({"type": "object", "properties": {"x": {"type": "string", "not": {"const": "a"}}}, "required": ["x"]}),
            "not",
            "/properties/x",
        ),
        (
            Provider::OpenAi,
            json!({"type": "object", "properties": {"x": {"oneOf": [{"type": "integer"}, {"minimum": 0}]}}, "required": ["x"]}),
            "oneOf",
            "/properties/x",
        ),
        (Provider::OpenAi, json!({"type": "array"}), "type", ""),
        (
            Provider::Anthropic,
            json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}}, "required": ["n"]}),
            "minimum",
            "/properties/n",
        ),
        (
            Provider::Anthropic,
            json!({"type": "object", "properties": {"s": {"type": "string", "minLength": 2, "maxLength": 5, "x-vouch": {"repair": ["trim"]}}}, "required": ["s"]}),
            "minLength",
            "/properties/s",
        ),
        (
            Provider::Gemini,
            json!({"type": "object", "properties": {"n": {"type": "number", "multipleOf": 2}}, "required": ["n"]}),
            "multipleOf",
            "/properties/n",
        ),
        (
            Provider::Gemini,
            json!({"$defs": {"t": {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/t"}}}}},
            "type": "object", "properties": {"root": {"$ref": "#/$defs/t"}}, "required": ["root"]}),
            "$ref",
            "/properties/root/properties/kids/items",
        ),
    ];
    for (provider, schema, keyword, location) in cases {
        let c = Contract::from_value(schema.clone()).unwrap();
        let e = c.bare_provider_schema(provider).unwrap_err();
        assert_eq!((e.keyword.as_str(), e.location.as_str()), (keyword, location), "{provider:?} {schema}: {e}");
    }
}

#[test]
fn repairs_make_dropping_sound() {
    // Anthropic has no numeric bounds; clamp makes any integer valid, so the bounds may go.
    let c = Contract::from_value(json!({"type": "object", "properties": {
        "n": {"type": "integer", "minimum": 0, "maximum": 10, "x-vouch": {"repair": ["clamp"]}}}, "required": ["n"]}))
    .unwrap();
    let s = c.bare_provider_schema(Provider::Anthropic).unwrap();
    assert_eq!(s["properties"]["n"], json!({"type": "integer"}));
    assert_eq!(c.check(r#"{"n": 99}"#).value(), Some(&json!({"n": 10})));
}

#[test]
fn schemars_enums_export_as_enums() {
    let c = Contract::from_value(json!({"type": "object", "properties": {"v": {"oneOf": [
        {"const": "a", "description": "A"}, {"const": "b", "description": "B"}]}}, "required": ["v"]}))
    .unwrap();
    assert_eq!(c.bare_provider_schema(Provider::OpenAi).unwrap()["properties"]["v"]["enum"], json!(["a", "b"]));
}

#[test]
fn the_prompt_comes_from_the_same_contract() {
    let p = example("eligibility.json").prompt();
    for needle in [
        "Reply with a single JSON object",
        "\"verdict\" (required): one of \"eligible\", \"maybe\", \"not_eligible\".",
        "an integer from 0 to 100",
        "\"summary\" (required): a non-empty string.",
        "exactly these properties, and no others",
        "If you cannot tell \"criteria[].status\", use \"unknown\" instead of guessing.",
        "Reply with the JSON object only.",
    ] {
        assert!(p.contains(needle), "missing {needle:?} in:\n{p}");
    }
    let plate = example("plate.json").prompt();
    assert!(plate.contains("\"productPresent\" (required): true or false. Is any product still in frame?"), "{plate}");
}

// ------------------------------------------------------------- soundness

struct Judge {
    contract: Contract,
    emitted: Vec<(Provider, jsonschema::Validator)>,
    base: Value,
}

fn judges() -> &'static [Judge] {
    static JUDGES: std::sync::OnceLock<Vec<Judge>> = std::sync::OnceLock::new();
    JUDGES.get_or_init(make_judges)
}

fn make_judges() -> Vec<Judge> {
    [
        ("plate.json", json!({"productPresent": false, "productTextPresent": true, "garbledText": false})),
        ("eligibility.json", json!({"verdict": "maybe", "matchScore": 55, "summary": "Close.",
            "criteria": [{"criterion": "residency", "status": "unknown", "reason": "No address."}], "recommendations": ["Send it."]})),
    ]
    .into_iter()
    .map(|(name, base)| {
        let contract = example(name);
        let emitted = [Provider::OpenAi, Provider::Anthropic, Provider::Gemini, Provider::JsonSchema]
            .into_iter()
            .map(|p| {
                let mut s = contract.bare_provider_schema(p).unwrap();
                if p == Provider::Gemini {
                    s = common::gemini_as_json_schema(&s);
                }
                (p, jsonschema::validator_for(&s).unwrap())
            })
            .collect();
        Judge { contract, emitted, base }
    })
    .collect()
}

fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-50i64..150).prop_map(Value::from),
        (-50.0f64..150.0).prop_map(|f| json!(f)),
        prop::sample::select(vec![
            "", " ", " x ", "\u{85}", "\u{a0}a", "eligible", "maybe", "pass", "unknown", "likely", "Close.", "80", "\t"
        ])
        .prop_map(|s| json!(s)),
    ];
    leaf.prop_recursive(2, 6, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::vec((prop::sample::select(vec!["criterion", "status", "reason", "x"]), inner), 0..4)
                .prop_map(|kv| Value::Object(kv.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())),
        ]
    })
}

/// How many generated replies satisfied an emitted schema (so the property
/// is not vacuous).
static SATISFIED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(2_000)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    /// Whatever satisfies the emitted provider schema, the contract accepts.
    /// (Run by the test below, which also checks the property is not vacuous.)
    fn emitted_schemas_are_sound(which in 0usize..2, edits in prop::collection::vec((0usize..16, value()), 0..3)) {
        let j = &judges()[which];
        let mut reply = j.base.clone();
        for (slot, v) in edits {
            // Replace one property, or one criterion's field, with the value.
            let keys: Vec<String> = reply.as_object().unwrap().keys().cloned().collect();
            let key = &keys[slot % keys.len()];
            if slot >= 8 {
                if let Some(Value::Object(c)) = reply.pointer_mut("/criteria/0") {
                    let ks: Vec<String> = c.keys().cloned().collect();
                    let k = ks.get(slot % ks.len().max(1)).cloned().unwrap_or_else(|| "reason".into());
                    c.insert(k, v);
                    continue;
                }
            }
            reply[key] = v;
        }
        for (provider, validator) in &j.emitted {
            if validator.is_valid(&reply) {
                SATISFIED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let verdict = j.contract.check(reply.to_string());
                prop_assert!(verdict.is_accepted(), "{provider:?} schema accepts {reply} but the contract refuses: {:?}", verdict.problems());
            }
        }
    }
}

#[test]
fn soundness_is_tested_on_replies_that_satisfy_the_schemas() {
    emitted_schemas_are_sound();
    let n = SATISFIED.load(std::sync::atomic::Ordering::Relaxed);
    common::figure(&format!(
        "export soundness: {n} (reply, provider) pairs satisfied an emitted schema, all accepted by the contract"
    ));
    assert!(n > 1000, "only {n} generated replies satisfied an emitted schema");
}

#[test]
fn a_name_openai_or_anthropic_would_refuse_is_refused_before_any_request() {
    let c =
        Contract::from_value(json!({"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}))
            .unwrap();
    let longest = "n".repeat(64);
    for provider in [Provider::OpenAi, Provider::Anthropic] {
        for bad in ["", "plate check", "plate.check", "plaque_é", "a/b", &"n".repeat(65)] {
            let e = c.provider_schema(provider, bad).unwrap_err();
            assert!(e.message.starts_with(&format!("the name {bad:?} is not one")), "{provider:?} {bad:?}: {e}");
            assert!(!vouch::is_schema_name(bad), "{bad:?}");
        }
        for good in ["a", "plate_check-v2", "ABC_123", longest.as_str()] {
            assert!(c.provider_schema(provider, good).is_ok(), "{provider:?} {good:?}");
            assert!(vouch::is_schema_name(good), "{good:?}");
        }
    }
    // Gemini's and plain JSON Schema's exports carry no name: any is taken.
    for provider in [Provider::Gemini, Provider::JsonSchema] {
        assert!(c.provider_schema(provider, "plate check").is_ok(), "{provider:?}");
    }
}
