//! `Limits::max_repairs`: a reply that needs more repairs than the contract
//! allows is refused (`too_many_repairs`, `bad_answer`), and the repairer
//! stops at the cap instead of logging a repair per value.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use serde_json::json;
use vouch::{Contract, Limits};

fn clamped(max_repairs: Option<u64>) -> Contract {
    let mut schema =
        json!({"type": "array", "items": {"type": "integer", "minimum": 1, "x-vouch": {"repair": ["clamp"]}}});
    if let Some(n) = max_repairs {
        schema["x-vouch"] = json!({"limits": {"max_repairs": n}});
    }
    Contract::from_value(schema).unwrap()
}

fn zeros(n: usize) -> String {
    format!("[{}]", vec!["0"; n].join(","))
}

#[test]
fn the_default_cap_is_a_thousand() {
    assert_eq!(Limits::default().max_repairs, 1000);
    let c = clamped(None);
    let ok = c.check(zeros(1000));
    assert!(ok.is_accepted());
    assert_eq!(ok.repairs().len(), 1000);
    let refused = c.check(zeros(1001));
    let p = &refused.problems()[0];
    assert_eq!(refused.problems().len(), 1);
    assert_eq!(p.code.as_str(), "too_many_repairs");
    assert_eq!(p.class.as_str(), "bad_answer");
    assert_eq!(p.path, "/1000");
    assert_eq!(p.expected, "at most 1000 repairs");
    assert!(p.message.starts_with("/1000: the reply needs more than 1000 repairs"), "{}", p.message);
}

#[test]
fn the_cap_is_set_at_the_root() {
    let c = clamped(Some(3));
    assert_eq!(c.limits().max_repairs, 3);
    assert!(c.check("[0,0,0]").is_accepted());
    assert_eq!(c.check("[0,0,0,0]").problems()[0].code.as_str(), "too_many_repairs");
    // Unrepaired values do not count.
    assert!(c.check("[0,5,0,7,0]").is_accepted());
    for bad in [json!(0), json!(-1), json!("3"), json!(1.5)] {
        let e = Contract::from_value(json!({"x-vouch": {"limits": {"max_repairs": bad}}})).unwrap_err();
        assert!(e.message.contains("max_repairs must be a positive integer"), "{}", e.message);
    }
    let e = Contract::from_value(json!({"x-vouch": {"limits": {"max_repair": 3}}})).unwrap_err();
    assert!(e.message.contains("max_repairs"), "{}", e.message);
    let zero = Limits { max_repairs: 0, ..Limits::default() };
    assert!(clamped(None).with_limits(zero).is_err());
    let e =
        Contract::from_value(json!({"properties": {"a": {"x-vouch": {"limits": {"max_repairs": 3}}}}})).unwrap_err();
    assert!(e.message.contains("only allowed at the contract's root"), "{}", e.message);
}

#[test]
fn every_kind_of_repair_counts() {
    let c = Contract::from_value(json!({
        "type": "object",
        "properties": {
            "n": {"type": "integer", "minimum": 0, "x-vouch": {"repair": ["coerce", "round", "clamp"]}},
            "s": {"type": "string", "maxLength": 2, "x-vouch": {"repair": ["trim", "truncate"]}},
            "d": {"type": "integer", "x-vouch": {"default": 4}},
            "l": {"type": "array", "items": {"type": "integer"}, "x-vouch": {"repair": ["drop_invalid_items"]}}
        },
        "additionalProperties": false,
        "x-vouch": {"repair": ["strip_unknown"], "limits": {"max_repairs": 4}}
    }))
    .unwrap();
    // coerce, round, clamp on "n" (3), the fill of "d" (4).
    let four = c.check(r#"{"n": "-1.5", "l": []}"#);
    assert_eq!(four.repairs().len(), 4, "{:?}", four.repairs());
    // One more: trim, a dropped item, a property stripped.
    for more in [r#""s": " a ""#, r#""l": [1, "x"]"#, r#""z": 1"#] {
        let raw = format!(r#"{{"n": "-1.5", {more}}}"#);
        let v = c.check(&raw);
        assert_eq!(v.problems().first().map(|p| p.code.as_str()), Some("too_many_repairs"), "{raw}: {v:?}");
    }
}

#[test]
fn a_million_repairs_are_not_made() {
    // 2 MB of `0,`: the review's reply, at half the default size limit.
    let raw = zeros(1_000_000);
    let verdict = clamped(None).check(&raw);
    assert_eq!(verdict.problems()[0].code.as_str(), "too_many_repairs");
    let json = verdict.to_json().to_string();
    assert!(json.len() < 1000, "{} bytes of verdict", json.len());
}
