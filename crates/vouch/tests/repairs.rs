//! Declared repairs and gate findings on the example contracts: the table of
//! the founding story, each row checking the value and the logged rule.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod common;

use serde_json::{json, Value};
use vouch::{Contract, ProblemClass, Verdict};

fn example(name: &str) -> Value {
    let path = common::project_root().join("examples/contracts").join(name);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn eligibility() -> Contract {
    Contract::from_value(example("eligibility.json")).unwrap()
}

fn base() -> Value {
    json!({
        "verdict": "eligible",
        "matchScore": 87,
        "summary": "Meets the requirements.",
        "criteria": [{"criterion": "residency", "status": "pass", "reason": "In the district."}],
        "recommendations": ["Ask for the transcript."]
    })
}

/// Check `reply`; it must be accepted with exactly one repair of `rule` at
/// `path`, and the value at `path` must be `after`.
fn repaired(c: &Contract, reply: &Value, path: &str, rule: &str, after: Value) {
    match c.check(reply.to_string()) {
        Verdict::Accepted(a) => {
            let rules: Vec<(&str, &str)> = a.repairs.iter().map(|r| (r.path.as_str(), r.rule.as_str())).collect();
            assert_eq!(rules, [(path, rule)], "{reply}");
            assert_eq!(a.value().pointer(path), Some(&after), "{reply}");
        }
        Verdict::Refused(r) => panic!("{reply} refused: {:?}", r.problems),
    }
}

fn with(path: &str, value: Value) -> Value {
    let mut v = base();
    *v.pointer_mut(path).unwrap() = value;
    v
}

fn without(key: &str) -> Value {
    let mut v = base();
    v.as_object_mut().unwrap().remove(key);
    v
}

#[test]
fn the_eligibility_table() {
    let c = eligibility();
    repaired(&c, &with("/matchScore", json!("80")), "/matchScore", "coerce", json!(80));
    repaired(&c, &with("/matchScore", json!(105)), "/matchScore", "clamp", json!(100));
    repaired(&c, &with("/matchScore", json!(87.6)), "/matchScore", "round", json!(88));
    repaired(&c, &with("/matchScore", json!(-3)), "/matchScore", "clamp", json!(0));
    repaired(&c, &with("/matchScore", json!(null)), "/matchScore", "default", json!(0));
    repaired(&c, &without("matchScore"), "/matchScore", "default", json!(0));
    repaired(&c, &with("/matchScore", json!("abc")), "/matchScore", "default_if_invalid", json!(0));
    let mut no_reason = base();
    no_reason["criteria"][0].as_object_mut().unwrap().remove("reason");
    repaired(&c, &no_reason, "/criteria/0/reason", "default", json!(""));
    repaired(
        &c,
        &with("/recommendations", json!([1, "a", null, "b"])),
        "/recommendations",
        "drop_invalid_items",
        json!(["a", "b"]),
    );
    repaired(&c, &with("/recommendations", json!("call us")), "/recommendations", "default_if_invalid", json!([]));
}

#[test]
fn decision_fields_are_refused_not_repaired() {
    let c = eligibility();
    let refused = |reply: Value, code: &str, path: &str| {
        let v = c.check(reply.to_string());
        let p = v.problems().first().unwrap_or_else(|| panic!("{reply} accepted"));
        assert_eq!((p.code.as_str(), p.path.as_str()), (code, path), "{reply}");
    };
    refused(with("/verdict", json!("likely")), "not_allowed", "/verdict");
    refused(with("/verdict", json!("Eligible")), "not_allowed", "/verdict");
    refused(with("/summary", json!("")), "too_short", "/summary");
    refused(with("/summary", json!("   ")), "too_short", "/summary");
    refused(with("/criteria/0/status", json!("likely")), "not_allowed", "/criteria/0/status");
    refused(without("verdict"), "missing", "/verdict");
}

#[test]
fn enum_case_only_where_declared() {
    let mut schema = example("eligibility.json");
    schema["properties"]["verdict"]["x-vouch"] = json!({"repair": ["enum_case"]});
    let c = Contract::from_value(schema).unwrap();
    repaired(&c, &with("/verdict", json!("Eligible")), "/verdict", "enum_case", json!("eligible"));
    assert!(!c.check(with("/verdict", json!("likely")).to_string()).is_accepted());
}

#[test]
fn repairs_are_logged_with_before_after_and_a_sentence() {
    let c = eligibility();
    let v = c.check(with("/matchScore", json!("80")).to_string());
    let r = &v.repairs()[0];
    assert_eq!((r.before.clone(), r.after.clone()), (json!("80"), json!(80)));
    assert_eq!(r.message, r#"/matchScore: "80" coerced to 80"#);
    let v = c.check(with("/matchScore", json!("abc")).to_string());
    assert_eq!(v.repairs()[0].message, r#"/matchScore: "abc" is invalid, replaced by the default 0"#);
}

fn rule_contract(node: Value) -> Contract {
    Contract::from_value(json!({"type": "object", "properties": {"x": node}})).unwrap()
}

fn x_after(c: &Contract, x: &str) -> Option<Value> {
    c.check(format!(r#"{{"x": {x}}}"#)).value().map(|v| v["x"].clone())
}

#[test]
fn each_rule_on_its_own() {
    let coerce_num = rule_contract(json!({"type": "number", "x-vouch": {"repair": ["coerce"]}}));
    assert_eq!(x_after(&coerce_num, r#"" 87.6 ""#), Some(json!(87.6)));
    assert_eq!(x_after(&coerce_num, r#""80""#), Some(json!(80)));
    assert_eq!(x_after(&coerce_num, r#""80 points""#), None);
    assert_eq!(x_after(&coerce_num, r#""0x10""#), None);
    assert_eq!(x_after(&coerce_num, r#""NaN""#), None);
    assert_eq!(x_after(&coerce_num, "true"), None);
    let coerce_bool = rule_contract(json!({"type": "boolean", "x-vouch": {"repair": ["coerce"]}}));
    assert_eq!(x_after(&coerce_bool, r#""true""#), Some(json!(true)));
    assert_eq!(x_after(&coerce_bool, r#""false""#), Some(json!(false)));
    for never in [r#""yes""#, r#""no""#, "0", "1", r#""True""#, r#""1""#] {
        assert_eq!(x_after(&coerce_bool, never), None, "{never}");
    }
    let round = rule_contract(json!({"type": "integer", "x-vouch": {"repair": ["round"]}}));
    assert_eq!(x_after(&round, "87.5"), Some(json!(88)));
    assert_eq!(x_after(&round, "-0.5"), Some(json!(-1)));
    assert_eq!(x_after(&round, "2.4"), Some(json!(2)));
    let clamp_excl = rule_contract(
        json!({"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 10, "x-vouch": {"repair": ["clamp"]}}),
    );
    assert_eq!(x_after(&clamp_excl, "0"), Some(json!(1)));
    assert_eq!(x_after(&clamp_excl, "99"), Some(json!(9)));
    let trim = rule_contract(
        json!({"type": "string", "minLength": 1, "pattern": "^[a-z]+$", "x-vouch": {"repair": ["trim"]}}),
    );
    assert_eq!(x_after(&trim, r#"" abc\n""#), Some(json!("abc")));
    assert_eq!(x_after(&trim, r#""   ""#), None);
    let enum_case = rule_contract(json!({"enum": ["Yes", "yes", "No"], "x-vouch": {"repair": ["enum_case"]}}));
    assert_eq!(x_after(&enum_case, r#""NO""#), Some(json!("No")));
    assert_eq!(x_after(&enum_case, r#""YES""#), None, "two case-insensitive matches: no repair");
    let truncate = rule_contract(json!({"type": "string", "maxLength": 3, "x-vouch": {"repair": ["truncate"]}}));
    assert_eq!(x_after(&truncate, r#""héllo""#), Some(json!("hél")));
    let strip = rule_contract(
        json!({"type": "object", "properties": {"a": {}}, "additionalProperties": false, "x-vouch": {"repair": ["strip_unknown"]}}),
    );
    assert_eq!(x_after(&strip, r#"{"a": 1, "b": 2, "__proto__": 3}"#), Some(json!({"a": 1})));
    let v = strip.check(r#"{"x": {"a": 1, "b": 2}}"#);
    assert_eq!((v.repairs()[0].path.as_str(), v.repairs()[0].rule.as_str()), ("/x/b", "strip_unknown"));
    // No policy, no repair: the default is reject.
    let strict = rule_contract(json!({"type": "integer", "minimum": 0, "maximum": 100}));
    for bad in [r#""80""#, "105", "87.6", "null"] {
        assert_eq!(x_after(&strict, bad), None, "{bad}");
    }
}

#[test]
fn truncation_is_never_repaired() {
    let c = eligibility();
    let full = base().to_string();
    for cut in [10, full.len() / 2, full.len() - 1] {
        let v = c.check(&full[..cut]);
        assert_eq!(v.problems()[0].code.as_str(), "truncated", "cut at {cut}");
        let fenced = format!("```json\n{}", &full[..cut]);
        assert!(!c.check(&fenced).is_accepted(), "fenced cut at {cut}");
        let prose = format!("Here: {}", &full[..cut]);
        assert_eq!(c.check(&prose).problems()[0].code.as_str(), "truncated", "prose cut at {cut}");
    }
}

#[test]
fn unwraps_only_where_declared() {
    let c = eligibility();
    let raw = base().to_string();
    for wrapped in [
        format!("```json\n{raw}\n```"),
        format!("```\n{raw}\n```"),
        format!("Here is the verdict:\n{raw}\nThanks."),
        format!("<think>The user wants {{\"verdict\": \"maybe\"}}... let me think.</think>\n{raw}"),
    ] {
        let v = c.check(&wrapped);
        assert!(v.is_pass(), "{wrapped}: {:?}", v.problems());
        assert_eq!((v.repairs()[0].path.as_str(), v.repairs()[0].rule.as_str()), ("", "unwrap"));
    }
    let two = format!("{raw}\n{raw}");
    assert_eq!(c.check(&two).problems()[0].code.as_str(), "ambiguous_reply");
    // A broken attempt at the answer beside a valid one is no clearer.
    let broken = format!("First try: {{verdict: maybe}}\nSecond: {raw}");
    assert_eq!(c.check(&broken).problems()[0].code.as_str(), "ambiguous_reply");
    // A Markdown link in prose is not an attempt; a citation like [1] is a JSON value, so two values.
    let linked = format!("See [the rules](https://example.com).\n{raw}");
    assert!(c.check(&linked).is_pass(), "{:?}", c.check(&linked).problems());
    let cited = format!("As required [1]:\n{raw}");
    assert_eq!(c.check(&cited).problems()[0].code.as_str(), "ambiguous_reply");
    let strict = Contract::from_value(example("plate.json")).unwrap();
    let plate = r#"{"productPresent":false,"productTextPresent":false,"garbledText":false}"#;
    assert_eq!(strict.check(format!("```json\n{plate}\n```")).problems()[0].code.as_str(), "not_json");
}

#[test]
fn the_plate_gate() {
    let c = Contract::from_value(example("plate.json")).unwrap();
    let all_false = r#"{"productPresent":false,"productTextPresent":false,"garbledText":false}"#;
    let v = c.check(all_false);
    assert!(v.is_pass());
    let v = c.check(r#"{"productPresent":true,"productTextPresent":false,"garbledText":false}"#);
    assert!(v.is_accepted() && !v.is_pass());
    assert_eq!(v.findings().len(), 1);
    assert_eq!(
        (v.findings()[0].path.as_str(), v.findings()[0].message.as_str()),
        ("/productPresent", "a product is still in frame")
    );
    assert_eq!(v.to_json()["pass"], json!(false));
    let v = c.check(r#"{"productPresent":true,"productTextPresent":true,"garbledText":true}"#);
    assert_eq!(v.findings().len(), 3);
    for raw in [
        "{}",
        "true",
        "[]",
        r#"{"productPresent":"no","productTextPresent":false,"garbledText":false}"#,
        r#"{"productPresent":null,"productTextPresent":false,"garbledText":false}"#,
        r#"{"productPresent":true,"productTextPresent":null,"garbledText":false}"#,
    ] {
        match c.check(raw) {
            Verdict::Refused(r) => assert_eq!(r.class(), ProblemClass::NoAnswer, "{raw}"),
            Verdict::Accepted(a) => panic!("{raw} accepted with findings {:?}", a.findings),
        }
    }
}
