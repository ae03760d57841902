//! Arbitrary bytes as a contract document. When it compiles, a few fixed
//! replies (and the bytes themselves) are checked against it.
//!
//! Properties: no panic, no hang; an accepted value checked again is accepted
//! unchanged with no repairs.
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;
use vouch::Contract;

const REPLIES: &[&str] = &["{}", "[]", "\"x\"", "1", "null", r#"{"a":[1,{"b":null}]}"#];

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(contract) = Contract::from_json_str(text) else {
        return;
    };
    let _ = contract.document();
    for reply in REPLIES {
        common::check_and_recheck(&contract, reply.as_bytes());
    }
    common::check_and_recheck(&contract, data);
});
