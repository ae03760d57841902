//! `check_as`'s one walk (the reply checked while it is deserialized) holds
//! to the check, its fail-closed oracle: over generated contracts without
//! repairs (objects with declared, required and closed properties and
//! member counts, arrays with items, prefix items and item counts, scalars
//! with types, bounds, lengths, patterns, formats, `multipleOf`, enums,
//! `anyOf`, `$ref`) and replies made from each contract (valid, and broken
//! in the ways a model breaks them: a member dropped, repeated or added, a
//! value of another type, a number past a bound, text cut off), the one
//! walk takes a reply only when `check` accepts it as sent, and then as the
//! very value `check` vouches for; `check_as` gives `check`'s verdict on
//! every reply.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod common;
#[path = "common/generated.rs"]
mod generated;

use proptest::prelude::*;
use serde_json::{json, Value};
use vouch::{Contract, Verdict};

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

fn schema() -> impl Strategy<Value = Value> {
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
                    let mut s = generated::declared_object(&["a", "bb", "a\u{e9}", "d\"q", "e"], props, &req);
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

/// A small deterministic generator (xorshift), so one proptest case makes many replies.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn chance(&mut self, in_: u64) -> bool {
        self.next() % in_ == 0
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[(self.next() % items.len() as u64) as usize]
    }
}

/// A value meant to satisfy `schema`, broken now and then.
fn instance(schema: &Value, defs: &Value, rng: &mut Rng, depth: usize) -> Value {
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

/// The text of a value, with white space, a repeated member or a cut now and then.
fn text_of(value: &Value, rng: &mut Rng) -> String {
    let mut text =
        if rng.chance(3) { serde_json::to_string_pretty(value) } else { serde_json::to_string(value) }.unwrap();
    if rng.chance(10) {
        // Repeat the first member of an object.
        if let Some(Value::Object(m)) = Some(value) {
            if let Some((k, v)) = m.iter().next() {
                text = format!("{{{}:{},{}", serde_json::to_string(k).unwrap(), v, &text[1..]);
            }
        }
    }
    if rng.chance(15) {
        let mut cut = (rng.next() as usize) % text.len().max(1);
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
    }
    if rng.chance(15) {
        text = format!("  \n{text}\t ");
    }
    text
}

#[test]
fn the_one_walk_takes_only_what_the_check_accepts_as_sent() {
    let counts = std::cell::Cell::new((0usize, 0usize, 0usize));
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: 600,
        failure_persistence: None,
        ..ProptestConfig::default()
    });
    let result = runner.run(&(schema(), any::<u64>()), |(body, seed)| {
        let defs = json!({"code": {"type": "string", "pattern": "^[A-Z]{2}$"}});
        let mut document = body.clone();
        if let Value::Object(m) = &mut document {
            m.insert("$defs".into(), defs.clone());
        } else {
            document = json!({"allOf": [body], "$defs": defs.clone()});
        }
        let Ok(contract) = Contract::from_value(document.clone()) else { return Ok(()) };
        let mut rng = Rng(seed | 1);
        for _ in 0..24 {
            let text = text_of(&instance(&body, &defs, &mut rng, 0), &mut rng);
            let walked = contract.__check_as_in_one_walk::<Value>(&text);
            let verdict = contract.check(&text);
            let (mut accepted, mut taken, mut replies) = counts.get();
            replies += 1;
            match (&verdict, &walked) {
                (Verdict::Accepted(a), Some(w)) => {
                    assert!(a.repairs.is_empty(), "taken, but the check repaired it: {text}");
                    assert_eq!(w, a.value(), "another value than the check's: {text}\n{document}");
                    accepted += 1;
                    taken += 1;
                }
                (Verdict::Accepted(_), None) => accepted += 1,
                (Verdict::Refused(r), Some(w)) => {
                    panic!("FAIL-OPEN: taken as {w}, the check refuses: {text}\n{document}\n{:?}", r.problems)
                }
                (Verdict::Refused(_), None) => {}
            }
            // And check_as as a whole gives the check's verdict.
            match (contract.check_as::<Value>(&text), &verdict) {
                (Ok(v), Verdict::Accepted(a)) => assert_eq!(&v.value, a.value()),
                (Err(r), Verdict::Refused(rr)) => assert_eq!(r.problems, rr.problems),
                (other, _) => panic!("check_as differs from check on {text}: {:?}", other.map(|v| v.value)),
            }
            counts.set((accepted, taken, replies));
        }
        Ok(())
    });
    result.unwrap();
    let (accepted, taken, replies) = counts.get();
    common::figure(&format!(
        "one walk, generated: {replies} replies, {accepted} accepted by check, {taken} of them taken in one walk, \
         none refused by check taken"
    ));
    assert!(taken * 2 > accepted && accepted > 1000, "too few to say anything: {taken} of {accepted}");
}

/// At the contract's depth limit and one past it, over and under its size
/// limit, with a repeated key spelled two ways, and with a key the contract
/// does not declare: the one walk takes only what `check` accepts.
#[test]
fn the_one_walk_keeps_to_the_limits() {
    let nested = Contract::from_json_str(r##"{"type": "array", "items": {"$ref": "#"}}"##).unwrap();
    let limits = vouch::Limits { max_depth: 5, max_bytes: 40, ..vouch::Limits::default() };
    let nested = nested.with_limits(limits).unwrap();
    let object = Contract::from_json_str(
        r#"{"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}, "required": ["a"]}"#,
    )
    .unwrap();
    let cases: Vec<(&Contract, String)> = vec![
        (&nested, "[".repeat(4) + &"]".repeat(4)),
        (&nested, "[".repeat(5) + &"]".repeat(5)),
        (&nested, "[".repeat(6) + &"]".repeat(6)),
        (&nested, format!("[{}]", "[],".repeat(12) + "[]")),
        (&nested, format!("[{}]", "[],".repeat(3) + "[]")),
        (&object, r#"{"a": 1, "\u0061": 2}"#.to_owned()),
        (&object, r#"{"a": 1, "b": "x", "c": 3}"#.to_owned()),
        (&object, r#"{"b": "x"}"#.to_owned()),
        (&object, r#"{"a": 1.0}"#.to_owned()),
        (&object, r#"{"a": 1}  x"#.to_owned()),
        (&object, "\u{feff}{\"a\": 1}".to_owned()),
        (&object, "```json\n{\"a\": 1}\n```".to_owned()),
    ];
    let mut taken = 0;
    for (contract, text) in &cases {
        let walked = contract.__check_as_in_one_walk::<Value>(text);
        match contract.check(text) {
            Verdict::Accepted(a) => {
                if let Some(w) = walked {
                    assert_eq!(&w, a.value(), "{text}");
                    taken += 1;
                }
            }
            Verdict::Refused(_) => assert!(walked.is_none(), "FAIL-OPEN on {text}"),
        }
    }
    // The ones within the limits, `{"a": 1.0}` (1.0 is an integer) among them.
    assert!(taken >= 4, "{taken}");
}

/// A reply nested to the deepest a contract may allow (512 levels), handed
/// over by every path on a thread with a small stack: the hand-over grows
/// its stack on the heap as it goes down, and none overflows.
#[test]
fn the_deepest_reply_is_handed_over_on_a_small_stack() {
    let run = || {
        let limits = vouch::Limits { max_depth: vouch::Limits::MAX_DEPTH_CAP, ..vouch::Limits::default() };
        let contract = Contract::from_json_str(r##"{"type": "array", "items": {"$ref": "#"}}"##)
            .unwrap()
            .with_limits(limits)
            .unwrap();
        let depth = vouch::Limits::MAX_DEPTH_CAP;
        let text = "[".repeat(depth) + &"]".repeat(depth);
        let walked = contract.__check_as_in_one_walk::<Value>(&text).expect("taken in one walk");
        let Verdict::Accepted(a) = contract.check(&text) else { panic!("refused") };
        assert_eq!(&walked, a.value());
        assert_eq!(&a.deserialize::<Value>().unwrap(), a.value());
        let deeper = "[".repeat(depth + 1) + &"]".repeat(depth + 1);
        assert!(contract.__check_as_in_one_walk::<Value>(&deeper).is_none());
        assert!(contract.check_as::<Value>(&deeper).is_err());
        // The values are dropped here, on the small stack too.
    };
    std::thread::Builder::new().stack_size(256 * 1024).spawn(run).unwrap().join().unwrap();
}
