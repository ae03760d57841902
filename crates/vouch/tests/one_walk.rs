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
//! every reply. The bindings' one walk (`build_as_sent`, the same checks
//! without serde's visitors) takes exactly what the serde walk takes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod common;
#[path = "common/generated.rs"]
mod generated;
#[path = "common/instances.rs"]
mod instances;

use common::Tree;
use instances::{instance, schema, Rng};

use proptest::prelude::*;
use serde_json::{json, Value};
use vouch::{Contract, Verdict};

/// The bindings' one walk (`build_as_sent`) takes what the serde walk takes,
/// as the same value with its keys in the same order, and nothing else.
fn same_walk(contract: &Contract, text: &str, walked: &Option<Value>) {
    let built = contract.build_as_sent(text, &mut Tree);
    assert_eq!(
        built.as_ref().map(|v| serde_json::to_string(v).unwrap()),
        walked.as_ref().map(|v| serde_json::to_string(v).unwrap()),
        "build_as_sent and the serde walk differ on {text}"
    );
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
            same_walk(&contract, &text, &walked);
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
        same_walk(contract, text, &walked);
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
        assert_eq!(contract.build_as_sent(&text, &mut Tree).as_ref(), Some(&walked));
        let deeper = "[".repeat(depth + 1) + &"]".repeat(depth + 1);
        assert!(contract.__check_as_in_one_walk::<Value>(&deeper).is_none());
        assert!(contract.build_as_sent(&deeper, &mut Tree).is_none());
        assert!(contract.check_as::<Value>(&deeper).is_err());
        // The values are dropped here, on the small stack too.
    };
    std::thread::Builder::new().stack_size(256 * 1024).spawn(run).unwrap().join().unwrap();
}
