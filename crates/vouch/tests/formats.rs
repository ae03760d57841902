//! The formats of the tools users hold their contracts in (Pydantic, Zod 4,
//! OpenAPI), each asserted by its definition, or refused at compile time
//! with the reason.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use serde_json::{json, Value};
use vouch::{CompileErrorKind, Contract, ProblemCode};

fn contract(schema: Value) -> Contract {
    Contract::from_value(schema).unwrap()
}

fn accepts(c: &Contract, reply: &Value) -> bool {
    c.check(reply.to_string()).is_accepted()
}

#[test]
fn openapi_numeric_formats_are_their_ranges() {
    let i32c = contract(json!({"type": "integer", "format": "int32"}));
    assert!(accepts(&i32c, &json!(2_147_483_647)) && accepts(&i32c, &json!(-2_147_483_648)));
    assert!(!accepts(&i32c, &json!(2_147_483_648_i64)) && !accepts(&i32c, &json!(-2_147_483_649_i64)));
    let v = i32c.check("2147483648");
    assert_eq!(v.problems()[0].code, ProblemCode::OutOfRange);

    // Without `type`, the format still makes the number an integer in range.
    let untyped = contract(json!({"format": "int32"}));
    assert!(!accepts(&untyped, &json!(1.5)) && accepts(&untyped, &json!(7)) && accepts(&untyped, &json!("x")));

    let i64c = contract(json!({"type": "integer", "format": "int64", "x-vouch": {"allow": ["big_integers"]}}));
    assert!(accepts(&i64c, &json!(9_223_372_036_854_775_807_i64)));
    assert!(!i64c.check("9223372036854775808").is_accepted());

    let float = contract(json!({"type": "number", "format": "float"}));
    assert!(accepts(&float, &json!(3.4e38)) && !accepts(&float, &json!(3.5e38)) && !accepts(&float, &json!(-1e39)));
    let double = contract(json!({"type": "number", "format": "double"}));
    assert!(accepts(&double, &json!(1.7e308)));

    // A numeric format on text is not guessed at.
    let e = Contract::from_value(json!({"type": "string", "format": "int64"})).unwrap_err();
    assert_eq!((e.kind, e.keyword.as_str(), e.location.as_str()), (CompileErrorKind::UnknownFormat, "format", ""));
}

/// Each format: a value it admits and one it does not.
const CASES: &[(&str, &str, &str)] = &[
    ("byte", "aGVsbG8=", "aGVsbG8"),
    ("base64", "YWJj", "YW=j"),
    ("base64url", "aGVsbG8", "a+b/"),
    ("uuid4", "9b2e4d3a-1c2b-4d5e-8f60-718293a4b5c6", "9b2e4d3a-1c2b-1d5e-8f60-718293a4b5c6"),
    ("uuid1", "c232ab00-9414-11ec-b3c8-9f6bdeced846", "9b2e4d3a-1c2b-4d5e-8f60-718293a4b5c6"),
    ("ipvanyaddress", "2001:db8::1", "2001:db8::1/64"),
    ("ipvanyinterface", "192.0.2.1/24", "192.0.2.1/33"),
    ("ipvanynetwork", "192.0.2.0/24", "192.0.2.1/24"),
    ("ipv4network", "10.0.0.0/8", "2001:db8::/32"),
    ("ipv6interface", "2001:db8::1/64", "10.0.0.1/8"),
    ("cidrv4", "10.0.0.0/8", "10.0.0.0"),
    ("cidrv6", "2001:db8::/32", "2001:db8::/129"),
    ("cuid", "cjld2cjxh0000qzrmn831i7rn", "xjld2cjxh0000qzrmn831i7rn"),
    ("cuid2", "tz4a98xxat96iws9zmbrgj3a", "TZ4A"),
    ("ulid", "01ARZ3NDEKTSV4RRFFQ69G5FAV", "01ARZ3NDEKTSV4RRFFQ69G5FAU"),
    ("nanoid", "V1StGXR8_Z5jdHi6B-myT", "V1StGXR8_Z5jdHi6B-my!"),
    ("xid", "9m4e2mr0ui3e8a215n4g", "9m4e2mr0ui3e8a215n4z"),
    ("ksuid", "0ujtsYcgvSTl8PAuAdqWYSMnLOv", "0ujtsYcgvSTl8PAuAdqWYSMnLO_"),
    ("e164", "+14155552671", "004155552671"),
    ("hex", "deadBEEF", "0xdead"),
    ("lowercase", "abc 1", "aBc"),
    ("uppercase", "ABC 1", "AbC"),
    ("jwt", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxIn0.sig", "eyJ0eXAiOiJKV1QifQ.e30.x"),
    ("sha256_hex", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "e3b0c442"),
    ("md5_base64", "1B2M2Y8AsgTpgAmY7PhCfg==", "1B2M2Y8AsgTpgAmY7PhCfg"),
    ("mac", "00:1A:2B:3C:4D:5E", "00:1a:2B:3C:4D:5E"),
    ("credit_card", "4111 1111 1111 1111", "4111 1111 1111 1112"),
    ("iban", "GB82WEST12345698765432", "GB82WEST12345698765433"),
    ("sha1_base64url", "2jmj7l5rSw0yVb_vlWAYkK_YBwk", "2jmj7l5rSw0yVb/vlWAYkK/YBwk"),
];

#[test]
fn string_formats_of_pydantic_zod_and_openapi_are_asserted() {
    for (name, good, bad) in CASES {
        let c = contract(json!({"type": "string", "format": name}));
        assert!(accepts(&c, &json!(good)), "{name}: {good} refused");
        let v = c.check(json!(bad).to_string());
        assert!(!v.is_accepted(), "{name}: {bad} accepted");
        assert_eq!(v.problems()[0].code, ProblemCode::FormatMismatch, "{name}");
    }
    for name in ["binary", "password", "path"] {
        assert!(accepts(&contract(json!({"type": "string", "format": name})), &json!("any text at all")));
    }
}

/// A base64 digest's padding is its byte count's: `==` after MD5's 16
/// bytes, `=` after SHA-1's 20 and SHA-256's 32, none after SHA-384's 48,
/// `==` after SHA-512's 64. Checked against the decoded length, written out
/// here, of every padding the right length could carry (found by a sweep
/// against Zod's `z.hash(…, {enc: "base64"})`: `"A"×23 + "="` decodes to 17
/// bytes, not MD5's 16).
#[test]
fn a_base64_digest_has_its_byte_count() {
    for (name, bytes) in [("md5", 16), ("sha1", 20), ("sha256", 32), ("sha384", 48), ("sha512", 64_usize)] {
        let c = contract(json!({"type": "string", "format": format!("{name}_base64")}));
        let len = bytes.div_ceil(3) * 4;
        for pad in 0..=2 {
            let text = format!("{}{}", "A".repeat(len - pad), "=".repeat(pad));
            // Base64 of `len` characters ending in `pad` `=` holds len / 4 * 3 - pad bytes.
            let decoded = len / 4 * 3 - pad;
            assert_eq!(accepts(&c, &json!(text)), decoded == bytes, "{name}: {text} ({decoded} bytes)");
        }
    }
}

#[test]
fn zod_checks_named_as_formats_are_carried_by_their_pattern() {
    // What Zod 4 writes for z.string().startsWith("ab"), .endsWith("z"), .includes("x").
    let c = contract(json!({"type": "string", "format": "starts_with", "pattern": "^ab.*"}));
    assert!(accepts(&c, &json!("abc")) && !accepts(&c, &json!("cab")));
    let c = contract(json!({"type": "string", "format": "includes", "pattern": "x"}));
    assert!(accepts(&c, &json!("axb")) && !accepts(&c, &json!("ab")));
    // Two such checks: Zod 4 names the last and writes each argument in `allOf`
    // (z.string().startsWith("x").endsWith("y")).
    let c =
        contract(json!({"type": "string", "format": "ends_with", "allOf": [{"pattern": "^x.*"}, {"pattern": ".*y$"}]}));
    assert!(accepts(&c, &json!("xaby")) && !accepts(&c, &json!("xab")) && !accepts(&c, &json!("aby")));
    let e = Contract::from_value(json!({"type": "string", "format": "ends_with"})).unwrap_err();
    assert_eq!(e.kind, CompileErrorKind::UnknownFormat);
    assert!(e.message.contains("pattern"), "{e}");
}

#[test]
fn formats_that_cannot_be_asserted_are_refused_with_the_reason() {
    for (name, reason) in [
        ("emoji", "Unicode"),
        ("color", "pattern"),
        ("name-email", "email"),
        ("multi-host-uri", "uri"),
        ("file-path", "disk"),
        ("json-string", "JSON"),
        ("regex", "dialects"),
        ("fraction", "pattern"),
        ("zoneinfo", "enum"),
        ("uuid9", "cannot assert"),
        ("sha3_hex", "cannot assert"),
    ] {
        let e = Contract::from_value(json!({"properties": {"a": {"type": "string", "format": name}}})).unwrap_err();
        assert_eq!(e.kind, CompileErrorKind::UnknownFormat, "{name}");
        assert_eq!((e.keyword.as_str(), e.location.as_str()), ("format", "/properties/a"), "{name}");
        assert!(e.message.contains(reason), "{name}: {e}");
    }
}

#[test]
fn content_encoding_is_asserted() {
    // Zod 4's z.base64() writes both.
    let c = contract(json!({"type": "string", "format": "base64", "contentEncoding": "base64"}));
    assert!(accepts(&c, &json!("YWJj")) && !accepts(&c, &json!("YWJ")));
    let c = contract(json!({"type": "string", "contentEncoding": "base64url"}));
    assert!(accepts(&c, &json!("-_8")) && !accepts(&c, &json!("+/8=")));
    let e = Contract::from_value(json!({"contentEncoding": "quoted-printable"})).unwrap_err();
    assert_eq!((e.kind, e.keyword.as_str()), (CompileErrorKind::Unsupported, "contentEncoding"));
}

/// Every format name vouch knows, on arbitrary text and on text shaped like
/// each format: a verdict, never a panic (the shifts and sums in the
/// checksums included), in debug builds where overflow is checked.
#[test]
fn every_format_decides_any_text() {
    use proptest::prelude::*;
    let names: Vec<&str> = CASES
        .iter()
        .map(|(n, _, _)| *n)
        .chain(["date", "date-time", "time", "duration", "email", "hostname", "ipv4", "ipv6", "uri"])
        .chain(["uri-reference", "uuid", "json-pointer", "relative-json-pointer", "binary", "ipv6network"])
        .chain(["ipv4interface", "uuid8", "sha512_hex", "sha384_base64", "md5_base64url"])
        .collect();
    let contracts: Vec<Contract> = names.iter().map(|n| contract(json!({"type": "string", "format": n}))).collect();
    let mut runner = proptest::test_runner::TestRunner::new(proptest::test_runner::Config {
        cases: 3000,
        failure_persistence: None,
        ..Default::default()
    });
    let text = prop_oneof![
        any::<String>(),
        "[0-9a-fA-F:./ +=_-]{0,60}",
        "(::|[0-9a-f]{1,4}:){1,8}(/[0-9]{1,3})?",
        "([0-9]{1,3}\\.){3}[0-9]{1,3}(/[0-9]{1,3})?",
        "[A-Za-z0-9+/=_-]{0,40}\\.[A-Za-z0-9_-]{0,10}\\.[a-z]{0,4}",
        "[A-Z]{2}[0-9]{2}[A-Z0-9]{8,32}",
        "[0-9 -]{10,25}",
    ];
    runner
        .run(&text, |s| {
            for c in &contracts {
                let _ = c.check(serde_json::to_string(&s).unwrap()).is_accepted();
            }
            Ok(())
        })
        .unwrap();
}
