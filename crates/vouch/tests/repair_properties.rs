//! Properties of declared repairs on the example contracts, with the
//! independent `jsonschema` crate as oracle:
//! - repairs are idempotent: an accepted value re-checked is accepted with no
//!   repairs and unchanged;
//! - every accepted value is valid for the schema with `x-vouch` removed;
//! - a reply accepted with no repairs was itself valid for the oracle.
//!
//! Cases per property: `PROPTEST_CASES` (default 2,000).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod common;

use proptest::prelude::*;
use serde_json::{json, Value};
use vouch::Contract;

struct Subject {
    contract: Contract,
    oracle: jsonschema::Validator,
    base: Value,
}

fn subject(name: &str, base: Value) -> Subject {
    let path = common::project_root().join("examples/contracts").join(name);
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut stripped = schema.clone();
    common::strip_policy(&mut stripped);
    Subject {
        contract: Contract::from_value(schema).unwrap(),
        oracle: jsonschema::validator_for(&stripped).unwrap(),
        base,
    }
}

fn subjects() -> &'static [Subject] {
    static SUBJECTS: std::sync::OnceLock<Vec<Subject>> = std::sync::OnceLock::new();
    SUBJECTS.get_or_init(make_subjects)
}

fn make_subjects() -> Vec<Subject> {
    vec![
        subject("plate.json", json!({"productPresent": false, "productTextPresent": true, "garbledText": false})),
        subject(
            "eligibility.json",
            json!({"verdict": "maybe", "matchScore": 55, "summary": "Close.",
                "criteria": [{"criterion": "residency", "status": "unknown", "reason": "No address."},
                             {"criterion": "grades", "status": "pass", "reason": ""}],
                "recommendations": ["Send the transcript."]}),
        ),
    ]
}

/// Values models really send where another was expected.
fn wild() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-200i64..300).prop_map(Value::from),
        (-200.0f64..300.0).prop_map(|f| json!(f)),
        prop::sample::select(vec![
            "80",
            " 87.6 ",
            "abc",
            "",
            "   ",
            "true",
            "false",
            "yes",
            "no",
            "Eligible",
            "eligible",
            "maybe",
            "pass",
            "PASS",
            "likely",
            "1e3",
            "-0",
            "null",
            "0x10",
            " summary ",
        ])
        .prop_map(|s| Value::String(s.to_owned())),
    ];
    leaf.prop_recursive(2, 8, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((prop::sample::select(vec!["reason", "status", "criterion", "x"]), inner), 0..3)
                .prop_map(|kv| Value::Object(kv.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())),
        ]
    })
}

#[derive(Debug, Clone)]
enum Mutation {
    Replace(usize, Value),
    Remove(usize),
    Add(String, Value),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), wild()).prop_map(|(i, v)| Mutation::Replace(i, v)),
        any::<usize>().prop_map(Mutation::Remove),
        (prop::sample::select(vec!["extra", "__proto__", "reason"]), wild())
            .prop_map(|(k, v)| Mutation::Add(k.to_owned(), v)),
    ]
}

/// Every JSON Pointer inside `v` (not the root).
fn pointers(v: &Value, at: &str, out: &mut Vec<String>) {
    match v {
        Value::Object(map) => {
            for (k, item) in map {
                let p = format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
                out.push(p.clone());
                pointers(item, &p, out);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let p = format!("{at}/{i}");
                out.push(p.clone());
                pointers(item, &p, out);
            }
        }
        _ => {}
    }
}

fn apply(base: &Value, mutations: &[Mutation]) -> Value {
    let mut v = base.clone();
    for m in mutations {
        let mut ps = Vec::new();
        pointers(&v, "", &mut ps);
        match m {
            Mutation::Replace(i, new) if !ps.is_empty() => {
                if let Some(slot) = v.pointer_mut(&ps[i % ps.len()]) {
                    *slot = new.clone();
                }
            }
            Mutation::Remove(i) if !ps.is_empty() => {
                let p = &ps[i % ps.len()];
                let (parent, last) = p.rsplit_once('/').unwrap();
                match v.pointer_mut(parent) {
                    Some(Value::Object(map)) => {
                        map.shift_remove(&last.replace("~1", "/").replace("~0", "~"));
                    }
                    Some(Value::Array(items)) => {
                        let i: usize = last.parse().unwrap();
                        items.remove(i);
                    }
                    _ => {}
                }
            }
            Mutation::Add(k, new) => {
                if let Value::Object(map) = &mut v {
                    map.insert(k.clone(), new.clone());
                }
            }
            _ => {}
        }
    }
    v
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(2_000)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn accepted_values_are_valid_and_repairs_idempotent(
        which in 0usize..2,
        mutations in prop::collection::vec(mutation(), 0..4),
        wrap in 0u8..4,
    ) {
        let s = &subjects()[which];
        let reply = apply(&s.base, &mutations);
        let text = reply.to_string();
        let raw = match wrap {
            1 => format!("```json\n{text}\n```"),
            2 => format!("Here you go:\n{text}\nDone."),
            _ => text.clone(),
        };
        let verdict = s.contract.check(&raw);
        if let Some(value) = verdict.value() {
            prop_assert!(s.oracle.is_valid(value), "oracle rejects accepted value {value} from {raw}");
            if verdict.repairs().is_empty() {
                prop_assert!(s.oracle.is_valid(&reply), "accepted with no repairs but the oracle rejects {reply}");
            }
            let again = s.contract.check(value.to_string());
            prop_assert!(again.is_accepted(), "re-check of {value} refused: {:?}", again.problems());
            prop_assert!(again.repairs().is_empty(), "repairs not idempotent on {value}: {:?}", again.repairs());
            prop_assert_eq!(again.value(), Some(value));
        }
        let bare = wrap == 0 || wrap == 3;
        if bare && s.oracle.is_valid(&reply) {
            prop_assert!(verdict.is_accepted(), "the oracle accepts {reply}, vouch refused: {:?}", verdict.problems());
        }
        if bare && which == 0 {
            // The plate contract declares no repair: vouch and the oracle agree exactly.
            prop_assert_eq!(verdict.is_accepted(), s.oracle.is_valid(&reply), "{}", reply);
        }
    }
}
