//! `Contract::diff` is sound, property-tested: over generated contracts and
//! a mutation of each (one keyword of one node moved, added or dropped, or
//! nothing that checks anything), every witness shown is accepted by the one
//! contract and refused by the other, and when the diff reports no breaking
//! and no undecided change, no generated reply the old contract accepts is
//! refused by the new one.

// A test that cannot go on says why (input here is the test's own).
#![allow(clippy::panic, clippy::indexing_slicing, clippy::unwrap_used)]

mod common;
#[path = "common/generated.rs"]
mod generated;
#[path = "common/instances.rs"]
mod instances;

use instances::{instance, Rng};
use proptest::prelude::*;
use serde_json::{json, Value};
use vouch::{ChangeKind, Contract};

/// The JSON Pointers of every object node of a schema document.
fn nodes(doc: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![(doc, String::new())];
    while let Some((v, at)) = stack.pop() {
        match v {
            Value::Object(o) => {
                out.push(at.clone());
                for (k, c) in o {
                    if k != "enum" && k != "const" && k != "x-vouch" {
                        stack.push((c, format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"))));
                    }
                }
            }
            Value::Array(items) => {
                for (i, c) in items.iter().enumerate() {
                    stack.push((c, format!("{at}/{i}")));
                }
            }
            _ => {}
        }
    }
    out
}

/// One mutation of one node (`kind` picks which; some leave the contract
/// checking the same: a description, nothing at all).
fn mutate(node: &mut serde_json::Map<String, Value>, kind: u8, rng: &mut Rng) {
    let bump = |v: Option<&Value>, by: f64| json!(v.and_then(Value::as_f64).unwrap_or(0.0) + by);
    match kind % 16 {
        0 => {
            if let Some(Value::Array(e)) = node.get_mut("enum") {
                e.pop();
            } else {
                node.insert("enum".into(), json!(["yes", 3, null]));
            }
        }
        1 => {
            if let Some(Value::Array(e)) = node.get_mut("enum") {
                e.push(json!("added"));
            } else {
                node.insert("description".into(), json!("words only"));
            }
        }
        2 => {
            let by = *rng.pick(&[-10.0, -1.0, 1.0, 10.0]);
            let v = bump(node.get("maximum"), by);
            node.insert("maximum".into(), v);
        }
        3 => {
            let by = *rng.pick(&[-10.0, -1.0, 1.0, 10.0]);
            let v = bump(node.get("minimum"), by);
            node.insert("minimum".into(), v);
        }
        4 => {
            let v = node.get("maxLength").and_then(Value::as_u64).unwrap_or(3);
            node.insert("maxLength".into(), json!(if rng.chance(2) { v + 1 } else { v.saturating_sub(1) }));
        }
        5 => {
            let names = ["a", "bb", "a\u{e9}", "d", "zz"];
            let r = node.entry("required").or_insert_with(|| json!([]));
            if let Value::Array(r) = r {
                if rng.chance(2) && !r.is_empty() {
                    r.pop();
                } else {
                    r.push(json!(rng.pick(&names)));
                }
            }
        }
        6 => {
            if node.contains_key("additionalProperties") {
                node.remove("additionalProperties");
            } else {
                node.insert("additionalProperties".into(), json!(false));
            }
        }
        7 => {
            let types =
                [json!("string"), json!("integer"), json!("number"), json!(["string", "null"]), json!("object")];
            node.insert("type".into(), rng.pick(&types).clone());
        }
        8 => {
            node.insert("pattern".into(), json!(rng.pick(&["^a", "^[a-c]*$", "b"])));
        }
        9 if node.remove("x-vouch").is_none() => {
            node.insert("x-vouch".into(), json!({"repair": ["trim"]}));
        }
        10 => {
            if let Some(Value::Object(p)) = node.get_mut("properties") {
                let first = p.keys().next().cloned();
                if let Some(k) = first {
                    p.remove(&k);
                }
            }
        }
        11 => {
            if let Some(Value::Object(p)) = node.get_mut("properties") {
                p.insert("zz".into(), json!({"type": "integer"}));
            }
        }
        12 => {
            for k in ["anyOf", "oneOf"] {
                if let Some(Value::Array(b)) = node.get_mut(k) {
                    b.pop();
                }
            }
        }
        13 => {
            node.insert("description".into(), json!("only words changed"));
        }
        14 => {
            let v = node.get("maxItems").and_then(Value::as_u64).unwrap_or(2);
            node.insert("maxItems".into(), json!(if rng.chance(2) { v + 1 } else { v.saturating_sub(1) }));
        }
        _ => {}
    }
}

/// `[pairs, breaking, loosening, undecided, compatible]`.
type Tally = std::cell::Cell<[usize; 5]>;

/// One generated contract, one mutation of it, and the diff held to both.
fn hold(old_doc: &Value, defs: &Value, seed: u64, kind: u8, tally: &Tally) -> Result<(), TestCaseError> {
    let Ok(old) = Contract::from_value(old_doc.clone()) else { return Ok(()) };
    let mut rng = Rng(seed | 1);
    let places = nodes(old_doc);
    if places.is_empty() {
        return Ok(());
    }
    let mut new_doc = old_doc.clone();
    let at = rng.pick(&places).clone();
    if let Some(Value::Object(node)) = new_doc.pointer_mut(&at) {
        mutate(node, kind, &mut rng);
    }
    let Ok(new) = Contract::from_value(new_doc.clone()) else { return Ok(()) };
    let diff = old.diff(&new);
    let mut t = tally.get();
    t[0] += 1;
    for c in &diff.changes {
        match (c.kind, &c.witness) {
            (ChangeKind::Breaking, Some(w)) => {
                t[1] += 1;
                prop_assert!(old.check(w).is_accepted() && !new.check(w).is_accepted(), "{c:?}\n{old_doc}\n{new_doc}");
            }
            (ChangeKind::Loosening, Some(w)) => {
                t[2] += 1;
                prop_assert!(new.check(w).is_accepted() && !old.check(w).is_accepted(), "{c:?}\n{old_doc}\n{new_doc}");
            }
            (ChangeKind::Undecided, None) => t[3] += 1,
            _ => prop_assert!(false, "{c:?}"),
        }
    }
    if diff.is_compatible() {
        t[4] += 1;
        let defs_of = |d: &Value| d.get("$defs").cloned().unwrap_or_else(|| defs.clone());
        let (od, nd) = (defs_of(old_doc), defs_of(&new_doc));
        let mut replies: Vec<String> = (0..40).map(|_| instance(old_doc, &od, &mut rng, 0).to_string()).collect();
        replies.extend((0..10).map(|_| instance(&new_doc, &nd, &mut rng, 0).to_string()));
        for raw in &replies {
            prop_assert!(
                !old.check(raw).is_accepted() || new.check(raw).is_accepted(),
                "called compatible, yet {raw} is accepted by the old contract and refused by the new\n{old_doc}\n{new_doc}\n{diff:#?}"
            );
        }
    }
    tally.set(t);
    Ok(())
}

fn runner() -> proptest::test_runner::TestRunner {
    proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(1500),
        failure_persistence: None,
        ..ProptestConfig::default()
    })
}

fn print(what: &str, tally: &Tally) {
    let [pairs, breaking, loosening, undecided, compatible] = tally.get();
    common::figure(&format!(
        "  diff soundness, {what}: {pairs} contract pairs; witnessed {breaking} breaking and {loosening} loosening changes, {undecided} undecided; {compatible} pairs called compatible, 50 replies each held to it"
    ));
}

#[test]
fn a_diff_without_breaking_or_undecided_changes_refuses_nothing_the_old_contract_accepted() {
    let tally = Tally::default();
    let result = runner().run(&(generated::schema(), any::<u64>(), any::<u8>()), |(old_doc, seed, kind)| {
        hold(&old_doc, &json!({}), seed, kind, &tally)
    });
    print("contracts with repairs", &tally);
    if let Err(e) = result {
        panic!("{e}");
    }
}

#[test]
fn the_same_holds_for_bounds_formats_and_references() {
    let tally = Tally::default();
    let defs = json!({"code": {"type": "string", "pattern": "^[A-Z]{2}$"}});
    let result = runner().run(&(instances::schema(), any::<u64>(), any::<u8>()), |(body, seed, kind)| {
        let document = match body {
            Value::Object(mut m) => {
                m.insert("$defs".into(), defs.clone());
                Value::Object(m)
            }
            other => json!({"allOf": [other], "$defs": defs.clone()}),
        };
        hold(&document, &defs, seed, kind, &tally)
    });
    print("bounds, formats, $ref", &tally);
    if let Err(e) = result {
        panic!("{e}");
    }
}
