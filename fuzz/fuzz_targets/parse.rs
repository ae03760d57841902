//! Raw bytes against the contract `{}` (any JSON value): exercises the strict
//! reader (RFC 8259, limits, positions and excerpts in its problems).
#![no_main]

mod common;

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use vouch::Contract;

fn any() -> &'static Contract {
    static C: OnceLock<Contract> = OnceLock::new();
    C.get_or_init(|| Contract::from_json_str("{}").expect("{} compiles"))
}

/// Two floats equal, or a few ulps apart: serde_json (without its
/// `float_roundtrip` feature) may round a long or subnormal literal an ulp
/// off, where vouch rounds it correctly (`[-237462374673276894279832749832423479823246327846]`,
/// `2.12e-309`). -0.0 and 0.0 are equal.
fn near(x: Option<f64>, y: Option<f64>) -> bool {
    match (x, y) {
        (Some(x), Some(y)) if x == y => true,
        (Some(x), Some(y)) if x.is_finite() && y.is_finite() && (x < 0.0) == (y < 0.0) => {
            x.to_bits().abs_diff(y.to_bits()) <= 4
        }
        _ => false,
    }
}

/// Equal as JSON data. Numbers compare by value, since vouch keeps `-0` as
/// -0.0 where serde_json reads the integer 0 (see also [`near`]).
fn same(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    use serde_json::Value as V;
    match (a, b) {
        (V::Number(x), V::Number(y)) => x == y || near(x.as_f64(), y.as_f64()),
        (V::Array(x), V::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b)),
        (V::Object(x), V::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

fuzz_target!(|data: &[u8]| {
    let verdict = common::check_and_recheck(any(), data);
    // The strict reader accepts only what RFC 8259 accepts: what it takes,
    // serde_json (itself strict, bar duplicate keys which vouch refuses)
    // reads as the same data -- except numbers beyond f64, which serde_json
    // refuses and vouch may read, and nesting past serde_json's 128 levels.
    if let Some(value) = verdict.value() {
        match serde_json::from_slice::<serde_json::Value>(data) {
            Ok(parsed) => assert!(
                same(&parsed, value),
                "vouch and serde_json read different values\nvouch: {value}\nserde_json: {parsed}"
            ),
            Err(e) => {
                let why = e.to_string();
                assert!(
                    why.contains("out of range") || why.contains("recursion limit"),
                    "vouch accepted what serde_json refuses: {why}"
                );
            }
        }
    }
});
