//! What a JavaScript, Python or Go consumer would read differently from the
//! JSON text is refused, or (where the contract allows it) documented in
//! docs/guarantees.md. The accepted value is always vouch's own
//! re-serialization, never the model's bytes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use serde_json::json;
use vouch::Contract;

fn contract(schema: serde_json::Value) -> Contract {
    Contract::from_value(schema).unwrap()
}

fn code(c: &Contract, raw: &str) -> Option<(String, String)> {
    c.check(raw).problems().first().map(|p| (p.code.as_str().to_owned(), p.path.clone()))
}

fn refused(c: &Contract, raw: &str, want: &str, path: &str) {
    assert_eq!(code(c, raw), Some((want.to_owned(), path.to_owned())), "{raw}");
}

#[test]
fn duplicate_keys_even_when_equal_only_after_unescaping() {
    let open = contract(json!({"type": "object"}));
    refused(&open, r#"{"role":"user","role":"admin"}"#, "duplicate_key", "/role");
    refused(&open, r#"{"role":"user","r\u006fle":"admin"}"#, "duplicate_key", "/role");
    refused(&open, r#"{"a":{"b":1,"\u0062":2}}"#, "duplicate_key", "/a/b");
}

#[test]
fn integers_beyond_the_safe_range_in_integer_fields() {
    let c = contract(json!({"type": "object", "properties": {"id": {"type": "integer"}, "x": {"type": "number"}}}));
    assert!(c.check(r#"{"id": 9007199254740991}"#).is_pass());
    assert!(c.check(r#"{"id": -9007199254740991}"#).is_pass());
    // Integers a double holds to the digit, beyond ±(2^53−1): integer fields refuse them.
    for big in ["9007199254740992", "-9007199254740992", "1e20", "1e300"] {
        refused(&c, &format!(r#"{{"id": {big}}}"#), "out_of_range", "/id");
    }
    // Integers a double does not hold to the digit: every field refuses them,
    // since readers of doubles (JavaScript) would read another number.
    // (18446744073709552000 prints as the double 2^64 does, but is 2^64 + 384.)
    for big in [
        "9007199254740993",
        "123456789012345678901234567890",
        "18446744073709551615",
        "18446744073709551616",
        "18446744073709552000",
    ] {
        refused(&c, &format!(r#"{{"id": {big}}}"#), "imprecise_number", "/id");
        refused(&c, &format!(r#"{{"x": {big}}}"#), "imprecise_number", "/x");
    }
    // A number field takes a big integer a double holds exactly.
    assert!(c.check(r#"{"x": 9007199254740994}"#).is_pass());
    // A contract whose readers hold 64-bit integers takes all of them, read exactly.
    let opted = contract(json!({"type": "integer", "x-vouch": {"allow": ["big_integers"]}}));
    assert!(opted.check("18446744073709551615").is_pass());
    assert_eq!(opted.check("9007199254740993").value(), Some(&json!(9007199254740993u64)));
    // Beyond 64 bits, not even then.
    refused(&opted, "18446744073709551617", "imprecise_number", "");
}

#[test]
fn overflow_and_lone_surrogates() {
    let any = contract(json!({}));
    refused(&any, "[1e400]", "number_overflow", "/0");
    refused(&any, "-1e400", "number_overflow", "");
    refused(&any, r#""\ud800""#, "not_json", "");
    refused(&any, r#""\udc00x""#, "not_json", "");
    refused(&any, r#"{"\ud800": 1}"#, "not_json", "");
}

#[test]
fn prototype_and_invisible_keys_in_open_objects() {
    let open = contract(json!({"type": "object", "properties": {"name": {"type": "string"}}}));
    for key in ["__proto__", "constructor", "prototype", "na\u{0}me", "name\u{200b}", "\u{feff}name", "a\u{202e}b"] {
        let raw = json!({key: 1}).to_string();
        refused(&open, &raw, "unexpected_property", &format!("/{key}"));
    }
    // Declared, they are the contract's own words.
    let declared = contract(
        json!({"type": "object", "properties": {"constructor": {"type": "string"}}, "required": ["__proto__"]}),
    );
    assert!(declared.check(r#"{"constructor": "x", "__proto__": 1}"#).is_pass());
    let allowed = contract(json!({"type": "object", "x-vouch": {"allow": ["hazardous_keys"]}}));
    assert!(allowed.check(r#"{"__proto__": {"admin": true}}"#).is_pass());
}

#[test]
fn the_value_is_vouchs_own_serialization() {
    let any = contract(json!({}));
    let v = any.check(r#"  {"a" : "\u0041\n", "b":1E2 , "c": [ 1.0, -0 ] }  "#);
    let out = serde_json::to_string(v.value().unwrap()).unwrap();
    assert_eq!(out, r#"{"a":"A\n","b":100.0,"c":[1.0,0]}"#);
    // Re-reading it gives the same value: nothing depends on the model's bytes.
    assert_eq!(any.check(&out).value(), v.value());
}
