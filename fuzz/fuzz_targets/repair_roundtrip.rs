//! The eligibility example contract (coerce, round, clamp, trim,
//! drop_invalid_items and default_if_invalid repairs, fence and prose
//! unwrapping) on bytes read as a reply.
//!
//! Property: once repaired and accepted, the value is a fixed point: checked
//! again it is accepted unchanged with no repairs.
#![no_main]

mod common;

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use vouch::Contract;

const ELIGIBILITY: &str = include_str!("../../examples/contracts/eligibility.json");

fn eligibility() -> &'static Contract {
    static C: OnceLock<Contract> = OnceLock::new();
    C.get_or_init(|| Contract::from_json_str(ELIGIBILITY).expect("eligibility compiles"))
}

fuzz_target!(|data: &[u8]| {
    let contract = eligibility();
    let verdict = contract.check(data);
    common::render(&verdict);
    if let Some(value) = verdict.value() {
        // Checked unconditionally: an accepted value with no repairs must be
        // a fixed point too, and the repaired case is the one this target is for.
        common::recheck(contract, &verdict, value, data);
    }
});
