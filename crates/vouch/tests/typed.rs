//! Typed contracts: the example types compile into contracts that behave
//! like the JSON example contracts (the examples assert their own outcomes).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

#[path = "../examples/eligibility.rs"]
mod eligibility;
#[path = "../examples/plate.rs"]
mod plate;

use vouch::Contract;

#[test]
fn plate_example_runs() {
    plate::main().unwrap();
}

#[test]
fn eligibility_example_runs() {
    eligibility::main().unwrap();
}

#[test]
fn rust_integer_types_become_bounds() {
    let c = Contract::of::<eligibility::EligibilityVerdict>().unwrap();
    let doc = c.document().to_string();
    assert!(!doc.contains("uint8"), "{doc}");
    let v = c.check(
        r#"{"verdict": "maybe", "matchScore": 80, "summary": "s", "criteria": [], "recommendations": [], "x": 1}"#,
    );
    assert_eq!(v.problems()[0].code.as_str(), "unexpected_property");
}

#[test]
fn a_type_that_disagrees_with_the_contract_fails_closed() {
    let c = Contract::from_json_str(r#"{"type": "object"}"#).unwrap();
    let refused = c.check_as::<plate::PlateReadBack>("{}").unwrap_err();
    assert_eq!(refused.problems[0].code.as_str(), "wrong_type");
}
