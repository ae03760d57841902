//! Generated contracts and replies, shared by the property tests that hold
//! the streaming check and the hand-over to other paths.
#![allow(dead_code)]

use proptest::prelude::*;
use serde_json::{json, Value};

pub fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!({"type": "boolean"})),
        (0i64..50, 50i64..200).prop_map(|(lo, hi)| json!({"type": "integer", "minimum": lo, "maximum": hi})),
        Just(json!({"type": "number", "exclusiveMaximum": 1})),
        (0u64..6).prop_map(|n| json!({"type": "string", "maxLength": n})),
        Just(json!({"type": "string", "minLength": 2})),
        Just(json!({"enum": ["yes", "no", "yesterday", 3, null]})),
        Just(json!({"const": "fixed"})),
        Just(json!({"const": 1})),
        Just(json!({"enum": [1, null]})),
        Just(json!({"type": "string", "pattern": "^[a-c]+$"})),
        Just(json!({"anyOf": [{"type": "integer"}, {"type": "string", "maxLength": 2}]})),
        Just(json!({"type": "string", "x-vouch": {"repair": ["trim"]}})),
        Just(json!({"type": "integer", "maximum": 9, "x-vouch": {"repair": ["coerce", "clamp"]}})),
        Just(json!({"type": ["string", "null"]})),
        Just(json!(true)),
    ]
}

/// `{"type": "object"}` declaring `props` under `names` (in order), each
/// required where `required` says so.
pub fn declared_object(names: &[&str], props: Vec<Value>, required: &[bool]) -> Value {
    let mut properties = serde_json::Map::new();
    let mut listed = Vec::new();
    for ((name, p), req) in names.iter().zip(props).zip(required) {
        properties.insert((*name).to_owned(), p);
        if *req {
            listed.push(json!(name));
        }
    }
    json!({"type": "object", "properties": properties, "required": listed})
}

pub fn schema() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            (
                proptest::collection::vec(inner.clone(), 1..4),
                proptest::collection::vec(any::<bool>(), 4),
                prop_oneof![Just(json!(false)), Just(json!(true)), Just(json!({"type": "integer"}))],
                any::<bool>()
            )
                .prop_map(|(props, req, extra, strip)| {
                    let mut s = declared_object(&["a", "bb", "a\u{e9}", "d"], props, &req);
                    s["additionalProperties"] = extra;
                    if strip {
                        s["x-vouch"] = json!({"repair": ["strip_unknown"]});
                    }
                    s
                }),
            (inner.clone(), 0u64..4, any::<bool>()).prop_map(|(items, max, drop)| {
                let mut s = json!({"type": "array", "items": items, "maxItems": max});
                if drop {
                    s["x-vouch"] = json!({"repair": ["drop_invalid_items"]});
                }
                s
            }),
            (inner.clone(), inner).prop_map(|(a, b)| json!({"oneOf": [a, b]})),
        ]
    })
}

pub fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(json!(null)),
        any::<bool>().prop_map(Value::from),
        (-5i64..300).prop_map(Value::from),
        Just(json!(0.5)),
        Just(json!(1e2)),
        prop_oneof![Just("yes"), Just("no"), Just("yest"), Just("fixed"), Just(" ab "), Just("abc"), Just("é\"\\\n")]
            .prop_map(Value::from),
        "[a-d]{0,7}".prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            proptest::collection::vec(
                (prop_oneof![Just("a"), Just("bb"), Just("a\u{e9}"), Just("d"), Just("z")], inner),
                0..5
            )
            .prop_map(|m| Value::Object(m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())),
        ]
    })
}

/// A reply from a value: written compact or spaced, then perhaps damaged
/// (cut off, a repeated key, a character dropped, text around it).
pub fn reply() -> impl Strategy<Value = Vec<u8>> {
    (value(), any::<bool>(), 0usize..8, any::<prop::sample::Index>()).prop_map(|(v, pretty, damage, at)| {
        let text = if pretty { serde_json::to_string_pretty(&v).unwrap() } else { v.to_string() };
        let mut raw = text.into_bytes();
        let i = at.index(raw.len().max(1));
        match damage {
            0 => raw.truncate(i),
            1 if raw.first() == Some(&b'{') && raw.len() > 2 => {
                let dup = b"\"a\":1,\"a\":2,";
                raw.splice(1..1, dup.iter().copied());
            }
            2 if i < raw.len() => {
                raw.remove(i);
            }
            3 => raw.extend_from_slice(b" ok"),
            _ => {}
        }
        raw
    })
}
