//! Raw bytes as a reply to each example contract and to a few generated
//! contracts covering nested objects, arrays (items, prefixItems, uniqueItems,
//! contains), enums, ranges, patterns, formats, anyOf/oneOf, if/then/else,
//! `$ref` recursion and `x-vouch` repairs with fence and prose unwrapping.
//!
//! Properties: no panic; the verdict written by the serializer, by
//! `Verdict::write_json` and from its tree is the same bytes; the value
//! handed over (`deserialize`, `Accepted::build`) is `value()`; `check_as`'s
//! one walk takes only what the check accepts as sent; the single
//! pass gives the full path's verdict byte for byte; an accepted value
//! checked again (as compact JSON and as a value) is accepted unchanged
//! with no repairs.
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for contract in common::contracts() {
        common::check_and_recheck(contract, data);
    }
});
