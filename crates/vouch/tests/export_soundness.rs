//! Soundness of every provider schema on contracts shaped like the ones
//! Pydantic, Zod and older drafts write: generated replies that the emitted
//! schema accepts (judged by the `jsonschema` crate, an independent
//! validator) must all be accepted by the contract.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};

use proptest::prelude::*;
use serde_json::{json, Map, Value};
use vouch::{Contract, Provider};

const PROVIDERS: [Provider; 4] = [Provider::OpenAi, Provider::Anthropic, Provider::Gemini, Provider::JsonSchema];

/// (contract, a reply it accepts) pairs; each exports for at least one provider.
fn corpus() -> Vec<(Value, Value)> {
    vec![
        // Pydantic: Optional[int] = None, list[str], a nested model by $ref.
        (
            json!({"$defs": {"Addr": {"title": "Addr", "type": "object", "properties": {
                    "city": {"type": "string", "minLength": 1}, "zip": {"anyOf": [{"type": "string", "pattern": "^[0-9]{5}$"}, {"type": "null"}], "default": null}},
                    "required": ["city"]}},
                "title": "Person", "type": "object", "properties": {
                    "name": {"type": "string", "maxLength": 5},
                    "age": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": null},
                    "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
                    "addr": {"$ref": "#/$defs/Addr"}},
                "required": ["name", "tags", "addr"]}),
            json!({"name": "ab", "age": 3, "tags": ["a"], "addr": {"city": "x", "zip": "12345"}}),
        ),
        // Zod 4 discriminated union.
        (
            json!({"type": "object", "properties": {"shape": {"oneOf": [
                {"type": "object", "properties": {"kind": {"type": "string", "const": "circle"}, "r": {"type": "number"}},
                    "required": ["kind", "r"], "additionalProperties": false},
                {"type": "object", "properties": {"kind": {"type": "string", "const": "square"}, "side": {"type": "integer"}},
                    "required": ["kind", "side"], "additionalProperties": false}]}},
                "required": ["shape"], "additionalProperties": false, "propertyNames": {"type": "string"}}),
            json!({"shape": {"kind": "circle", "r": 1.5}}),
        ),
        // Pydantic tagged union through $defs, tags as one-value enums.
        (
            json!({"$defs": {
                "Cat": {"type": "object", "properties": {"pet": {"enum": ["cat"], "type": "string"}, "lives": {"type": "integer"}}, "required": ["pet", "lives"]},
                "Dog": {"type": "object", "properties": {"pet": {"const": "dog", "type": "string"}, "good": {"type": "boolean"}}, "required": ["pet", "good"]}},
                "type": "object", "properties": {"animal": {"oneOf": [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}]}}, "required": ["animal"]}),
            json!({"animal": {"pet": "dog", "good": true}}),
        ),
        // zod-to-json-schema with a name: root $ref, draft-07.
        (
            json!({"$ref": "#/definitions/Verdict", "$schema": "http://json-schema.org/draft-07/schema#", "definitions": {"Verdict": {
                "type": "object", "properties": {"verdict": {"type": "string", "enum": ["yes", "no", "unknown"]},
                    "score": {"type": "number", "exclusiveMinimum": 0, "maximum": 10}},
                "required": ["verdict", "score"], "additionalProperties": false}}}),
            json!({"verdict": "yes", "score": 5}),
        ),
        // Draft-04: boolean exclusive bounds, dependencies.
        (
            json!({"$schema": "http://json-schema.org/draft-04/schema#", "type": "object", "properties": {
                    "n": {"type": "integer", "minimum": 0, "exclusiveMinimum": true, "maximum": 10, "exclusiveMaximum": true},
                    "card": {"type": "string"}, "cvv": {"type": "string"}},
                "required": ["n"], "dependencies": {"card": ["cvv"]}}),
            json!({"n": 5, "card": "a", "cvv": "b"}),
        ),
        // A recursive tree (OpenAI only).
        (
            json!({"type": "object", "$defs": {"Node": {"type": "object", "properties": {"v": {"type": "integer"},
                    "kids": {"type": "array", "items": {"$ref": "#/$defs/Node"}, "maxItems": 2}}, "required": ["v", "kids"]}},
                "properties": {"root": {"$ref": "#/$defs/Node"}}, "required": ["root"]}),
            json!({"root": {"v": 1, "kids": [{"v": 2, "kids": []}]}}),
        ),
        // Declared properties beside a map of extras; allOf; x-vouch defaults.
        (
            json!({"type": "object", "properties": {
                    "a": {"allOf": [{"type": "string"}, {"maxLength": 3}]},
                    "b": {"type": "integer", "x-vouch": {"default": 0}},
                    "c": {"enum": ["x", "y", null]},
                    "s": {"type": "string", "minLength": 1, "x-vouch": {"repair": ["trim"]}}},
                "required": ["a", "s"], "additionalProperties": {"type": "integer"}, "minProperties": 2}),
            json!({"a": "ab", "b": 1, "c": "x", "s": "ok"}),
        ),
        // Gemini-friendly counts, lengths, nullable types.
        (
            json!({"type": "object", "properties": {"t": {"type": ["string", "null"], "minLength": 2, "maxLength": 4},
                    "k": {"type": "integer", "exclusiveMaximum": 3}, "l": {"type": "array", "items": {"type": "boolean"}, "minItems": 1}},
                "required": ["t", "k", "l"], "maxProperties": 3}),
            json!({"t": "abc", "k": 2, "l": [true]}),
        ),
        // Strings, enums, formats and optional members: every provider's ground.
        (
            json!({"type": "object", "properties": {
                    "when": {"type": "string", "format": "date"},
                    "mood": {"type": "string", "enum": ["good", "bad", "unknown"]},
                    "note": {"type": ["string", "null"], "pattern": "^[a-z]*$"},
                    "level": {"type": ["string", "null"], "enum": ["low", "high"]},
                    "pick": {"oneOf": [{"const": "low"}, {"const": "high"}]},
                    "items": {"type": "array", "items": {"type": "object", "properties": {"id": {"type": "string"}, "ok": {"type": "boolean"}},
                        "required": ["id", "ok"]}, "minItems": 1}},
                "required": ["when", "mood", "items", "level", "pick"]}),
            json!({"when": "2024-05-01", "mood": "good", "note": null, "level": "low", "pick": "high", "items": [{"id": "a", "ok": true}]}),
        ),
    ]
}

struct Judge {
    contract: Contract,
    base: Value,
    emitted: Vec<(Provider, jsonschema::Validator)>,
    /// Object keys and strings from the contract, for the generator.
    words: Vec<String>,
}

fn words(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                out.push(k.clone());
                words(x, out);
            }
        }
        Value::Array(a) => a.iter().for_each(|x| words(x, out)),
        Value::String(s) => out.push(s.clone()),
        _ => {}
    }
}

fn judges() -> &'static [Judge] {
    static JUDGES: std::sync::OnceLock<Vec<Judge>> = std::sync::OnceLock::new();
    JUDGES.get_or_init(|| {
        corpus()
            .into_iter()
            .map(|(doc, base)| {
                let contract = Contract::from_value(doc.clone()).unwrap_or_else(|e| panic!("{doc}: {e}"));
                assert!(contract.check(base.to_string()).is_pass(), "base reply of {doc}");
                let emitted: Vec<(Provider, jsonschema::Validator)> = PROVIDERS
                    .into_iter()
                    .filter_map(|p| {
                        let mut s = contract.bare_provider_schema(p).ok()?;
                        if p == Provider::Gemini {
                            s = common::gemini_as_json_schema(&s);
                        }
                        let v = jsonschema::options()
                            .should_validate_formats(true)
                            .build(&s)
                            .unwrap_or_else(|e| panic!("{p:?} {s}: {e}"));
                        assert!(v.is_valid(&base), "{p:?} refuses the base reply of {doc}: {s}");
                        Some((p, v))
                    })
                    .collect();
                assert!(emitted.len() > 1, "{doc} exports for no provider");
                let mut w = Vec::new();
                words(&doc, &mut w);
                w.sort();
                w.dedup();
                Judge { contract, base, emitted, words: w }
            })
            .collect()
    })
}

/// Every location in a reply, as a list of steps.
fn paths(v: &Value) -> Vec<Vec<Value>> {
    let mut out = vec![Vec::new()];
    let mut stack = vec![(v, Vec::new())];
    while let Some((v, at)) = stack.pop() {
        let children: Vec<(Value, &Value)> = match v {
            Value::Object(m) => m.iter().map(|(k, x)| (json!(k), x)).collect(),
            Value::Array(a) => a.iter().enumerate().map(|(i, x)| (json!(i), x)).collect(),
            _ => Vec::new(),
        };
        for (step, child) in children {
            let mut here = at.clone();
            here.push(step);
            out.push(here.clone());
            stack.push((child, here));
        }
    }
    out
}

fn at_mut<'v>(v: &'v mut Value, path: &[Value]) -> Option<&'v mut Value> {
    let mut v = v;
    for step in path {
        v = match step {
            Value::String(k) => v.get_mut(k.as_str())?,
            Value::Number(i) => v.get_mut(usize::try_from(i.as_u64()?).ok()?)?,
            _ => return None,
        };
    }
    Some(v)
}

/// A value built from small numbers, the contract's own words, and shapes.
fn value(words: &[String], pick: &[usize]) -> Value {
    let mut it = pick.iter().copied();
    let mut next = move || it.next().unwrap_or(0);
    let leaf = |n: usize, w: usize| -> Value {
        match n % 12 {
            0 => Value::Null,
            1 => json!(n % 2 == 0),
            2 => json!((n % 23) as i64 - 4),
            3 => json!(((n % 40) as f64) / 4.0 - 1.0),
            4 => json!(""),
            5 => json!("  "),
            6 => json!("abcdef"),
            7 => json!("12345"),
            _ => json!(words[w % words.len()]),
        }
    };
    match next() % 5 {
        0 => {
            let n = next() % 3;
            Value::Array((0..n).map(|_| leaf(next(), next())).collect())
        }
        1 => {
            let n = next() % 4;
            let mut m = Map::new();
            for _ in 0..n {
                m.insert(words[next() % words.len()].clone(), leaf(next(), next()));
            }
            Value::Object(m)
        }
        _ => leaf(next(), next()),
    }
}

static SATISFIED: [AtomicUsize; 4] =
    [AtomicUsize::new(0), AtomicUsize::new(0), AtomicUsize::new(0), AtomicUsize::new(0)];

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(20_000)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    /// Run by the test below, which also checks the property is not vacuous.
    fn replies_an_emitted_schema_accepts_are_accepted(
        which in 0usize..64,
        edits in prop::collection::vec((0usize..1000, 0usize..4, prop::collection::vec(0usize..1000, 12)), 1..3),
    ) {
        let judges = judges();
        let j = &judges[which % judges.len()];
        let mut reply = j.base.clone();
        for (slot, op, pick) in edits {
            let all = paths(&reply);
            let path = &all[slot % all.len()];
            let fresh = value(&j.words, &pick);
            match (op, at_mut(&mut reply, path)) {
                // Remove a member, or add one.
                (0, Some(Value::Object(m))) if !m.is_empty() => {
                    let k = m.keys().nth(pick[0] % m.len()).cloned().unwrap();
                    m.shift_remove(&k);
                }
                (1, Some(Value::Object(m))) => {
                    m.insert(j.words[pick[0] % j.words.len()].clone(), fresh);
                }
                (_, Some(v)) => *v = fresh,
                (_, None) => {}
            }
        }
        for (provider, validator) in &j.emitted {
            if validator.is_valid(&reply) {
                let i = PROVIDERS.iter().position(|p| p == provider).unwrap();
                SATISFIED[i].fetch_add(1, Ordering::Relaxed);
                let verdict = j.contract.check(reply.to_string());
                prop_assert!(verdict.is_accepted(), "{provider:?} schema accepts {reply} but the contract refuses: {:?}", verdict.problems());
            }
        }
    }
}

#[test]
fn every_provider_schema_is_sound_on_generated_replies() {
    replies_an_emitted_schema_accepts_are_accepted();
    let counts: Vec<usize> = SATISFIED.iter().map(|c| c.load(Ordering::Relaxed)).collect();
    let exports: Vec<usize> =
        PROVIDERS.iter().map(|p| judges().iter().filter(|j| j.emitted.iter().any(|(q, _)| q == p)).count()).collect();
    common::figure(&format!(
        "export soundness ({} contracts; exports per provider OpenAI/Anthropic/Gemini/JSON Schema {:?}): replies an emitted schema accepted {:?}, all accepted by the contract",
        judges().len(),
        exports,
        counts
    ));
    for (p, n) in PROVIDERS.iter().zip(&counts) {
        assert!(*n > 200, "{p:?}: only {n} generated replies satisfied an emitted schema");
    }
}
