//! Values meant to satisfy a generated contract (broken now and then), from
//! a small deterministic generator: one proptest case makes many replies.
#![allow(dead_code, clippy::indexing_slicing, clippy::unwrap_used)]

use proptest::prelude::*;
use serde_json::{json, Value};

/// A small deterministic generator (xorshift), so one proptest case makes many replies.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn chance(&mut self, in_: u64) -> bool {
        self.next() % in_ == 0
    }
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[(self.next() % items.len() as u64) as usize]
    }
}

/// A value meant to satisfy `schema`, broken now and then.
pub fn instance(schema: &Value, defs: &Value, rng: &mut Rng, depth: usize) -> Value {
    if rng.chance(12) || depth > 6 {
        return rng.pick(&[json!(null), json!("x"), json!(7), json!(-1.5), json!(true), json!({}), json!([])]).clone();
    }
    if let Some(r) = schema.get("$ref") {
        let name = r.as_str().unwrap().rsplit('/').next().unwrap();
        return instance(&defs[name], defs, rng, depth + 1);
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        return rng.pick(values).clone();
    }
    if let Some(c) = schema.get("const") {
        return c.clone();
    }
    if let Some(branches) = schema.get("anyOf").and_then(Value::as_array) {
        return instance(rng.pick(branches), defs, rng, depth + 1);
    }
    let ty = match schema.get("type") {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(ts)) => ts[0].as_str().unwrap().to_owned(),
        _ => rng.pick(&["string", "integer", "object"]).to_string(),
    };
    match ty.as_str() {
        "boolean" => json!(rng.chance(2)),
        "integer" => {
            let lo = schema.get("minimum").and_then(Value::as_i64).unwrap_or(0);
            let hi = schema.get("maximum").and_then(Value::as_i64).unwrap_or(lo + 60);
            let v = lo + (rng.next() % (hi - lo + 3) as u64) as i64 - 1;
            if rng.chance(9) {
                json!(rng.pick(&[json!(9007199254740993u64), json!(-0.0), json!(3.0), json!(1e300), json!(-7)]))
            } else {
                json!(v)
            }
        }
        "number" => {
            if rng.chance(4) {
                rng.pick(&[json!(0), json!(-0.0), json!(2.5), json!(-3.25), json!(9007199254740993u64), json!(1e300)])
                    .clone()
            } else {
                json!(*rng.pick(&[0.5, -3.25, 0.999, 1.0, 2.5e-3, 0.1, 0.0, 2.5, 2.4999999999999996]))
            }
        }
        "string" => {
            let max = schema.get("maxLength").and_then(Value::as_u64).unwrap_or(8);
            let pool = [
                "",
                "a",
                "ab",
                "abc",
                "cab",
                "2026-12-02",
                "2026-02-30",
                "\u{e9}\u{e9}",
                "a\"b\\c\n",
                "\u{1f600}",
                "zzzzzzz",
            ];
            let s = rng.pick(&pool);
            if s.chars().count() as u64 > max && !rng.chance(4) {
                json!("a")
            } else {
                json!(s)
            }
        }
        "array" => {
            let mut items = Vec::new();
            if let Some(prefix) = schema.get("prefixItems").and_then(Value::as_array) {
                for p in prefix {
                    if !rng.chance(6) {
                        items.push(instance(p, defs, rng, depth + 1));
                    }
                }
                if rng.chance(5) {
                    items.push(json!(1));
                }
            } else {
                let n = rng.next() % 4;
                for _ in 0..n {
                    items.push(instance(&schema["items"], defs, rng, depth + 1));
                }
            }
            Value::Array(items)
        }
        "object" => {
            let mut out = serde_json::Map::new();
            if let Some(props) = schema.get("properties").and_then(Value::as_object) {
                for (k, p) in props {
                    if !rng.chance(5) {
                        out.insert(k.clone(), instance(p, defs, rng, depth + 1));
                    }
                }
            }
            if rng.chance(6) {
                out.insert("zz".into(), json!(1));
            }
            Value::Object(out)
        }
        _ => json!(null),
    }
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!({"type": "boolean"})),
        (0i64..50, 50i64..200).prop_map(|(lo, hi)| json!({"type": "integer", "minimum": lo, "maximum": hi})),
        (0i64..5).prop_map(|lo| json!({"type": "integer", "exclusiveMinimum": lo, "multipleOf": 3})),
        Just(json!({"type": "number", "exclusiveMaximum": 1})),
        Just(json!({"type": "number", "exclusiveMinimum": 0, "maximum": 2.5})),
        Just(json!({"type": "number", "minimum": -3.25, "exclusiveMaximum": 2.5})),
        Just(json!({"type": ["number", "null"], "minimum": 0.1, "maximum": 9007199254740993u64})),
        Just(json!({"type": "number"})),
        Just(json!({"type": "integer"})),
        (0u64..6).prop_map(|n| json!({"type": "string", "maxLength": n})),
        Just(json!({"type": "string", "minLength": 1})),
        Just(json!({"type": "string"})),
        Just(json!({"enum": ["yes", "no", "yesterday", 3, null]})),
        Just(json!({"const": "fixed"})),
        Just(json!({"type": "string", "pattern": "^[a-c]+$"})),
        Just(json!({"type": "string", "format": "date"})),
        Just(json!({"anyOf": [{"type": "integer"}, {"type": "string", "maxLength": 2}]})),
        Just(json!({"type": ["string", "null"]})),
        Just(json!({"$ref": "#/$defs/code"})),
        Just(json!(true)),
        Just(json!({})),
    ]
}

/// Contracts of the keywords the one walk decides itself (bounds, lengths,
/// formats, `$ref` to `#/$defs/code`, `prefixItems`, property counts).
pub fn schema() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            (
                proptest::collection::vec(inner.clone(), 1..5),
                proptest::collection::vec(any::<bool>(), 5),
                prop_oneof![Just(None), Just(Some(json!(false))), Just(Some(json!({"type": "integer"})))],
                prop_oneof![Just(None), (0u64..3).prop_map(Some)],
                prop_oneof![Just(None), (1u64..5).prop_map(Some)],
            )
                .prop_map(|(props, req, extra, min, max)| {
                    let mut s = super::generated::declared_object(&["a", "bb", "a\u{e9}", "d\"q", "e"], props, &req);
                    if let Some(extra) = extra {
                        s["additionalProperties"] = extra;
                    }
                    if let Some(min) = min {
                        s["minProperties"] = json!(min);
                    }
                    if let Some(max) = max {
                        s["maxProperties"] = json!(max);
                    }
                    s
                }),
            (inner.clone(), 0u64..4, 0u64..2).prop_map(|(items, max, min)| {
                json!({"type": "array", "items": items, "maxItems": max, "minItems": min})
            }),
            (inner.clone(), inner.clone(), any::<bool>()).prop_map(|(a, b, closed)| {
                let mut s = json!({"type": "array", "prefixItems": [a, b]});
                if closed {
                    s["items"] = json!(false);
                }
                s
            }),
        ]
    })
}
