//! Numbers are decided exactly, on the decimal as written (docs/guarantees.md §4).
//!
//! The oracle is exact rational arithmetic (`num-rational` over big
//! integers), independent of vouch's own decimals: each generated number's
//! text is read as a fraction; every numeric keyword is decided on it; the
//! number profile (which numbers every reader reads alike) is decided from
//! the standard library's correctly rounded parse and the double's shortest
//! writing, compared as fractions. For each accepted reply, `json()` and
//! `value()` must read back as the very fraction checked, for an exact
//! reader and for a reader of doubles.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod common;

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Signed, Zero};
use proptest::prelude::*;
use serde_json::{json, Value};
use vouch::{Contract, Verdict};

/// The exact fraction a JSON number's text writes.
fn rational(text: &str) -> BigRational {
    let (negative, body) = text.strip_prefix('-').map_or((false, text), |r| (true, r));
    let (number, exp) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], body[i + 1..].parse::<i64>().unwrap()),
        None => (body, 0),
    };
    let (int, frac) = number.split_once('.').unwrap_or((number, ""));
    let digits: BigInt = format!("{int}{frac}").parse().unwrap();
    let scale = exp - frac.len() as i64;
    let ten = BigInt::from(10);
    let mut r = BigRational::from_integer(digits);
    if scale >= 0 {
        r *= BigRational::from_integer(num_traits::pow(ten, scale as usize));
    } else {
        r /= BigRational::from_integer(num_traits::pow(ten, (-scale) as usize));
    }
    if negative {
        -r
    } else {
        r
    }
}

/// The exact value of a double.
fn of_double(f: f64) -> BigRational {
    BigRational::from_float(f).unwrap()
}

/// The decimal every reader of doubles writes `f` as (ECMA-262's
/// Number::toString, Python's `repr`): the fewest significant digits that
/// read back as `f`, the nearest such to `f`'s exact value, ties to even.
/// Found by exact arithmetic, independently of vouch's writer (`ryu`).
fn shortest(f: f64) -> BigRational {
    if f == 0.0 {
        return BigRational::zero();
    }
    let m = of_double(f);
    let ten = BigRational::from_integer(BigInt::from(10));
    // The power of ten of the leading digit.
    let mut lead: i64 = f.abs().log10().floor() as i64;
    let pow = |e: i64| -> BigRational {
        if e >= 0 {
            num_traits::pow(ten.clone(), e as usize)
        } else {
            BigRational::one() / num_traits::pow(ten.clone(), (-e) as usize)
        }
    };
    if m.abs() >= pow(lead + 1) {
        lead += 1;
    } else if m.abs() < pow(lead) {
        lead -= 1;
    }
    for k in 1..=17i64 {
        let unit = pow(lead - k + 1);
        let q = &m / &unit;
        let floor = q.floor();
        let frac = &q - &floor;
        let half = BigRational::new(BigInt::from(1), BigInt::from(2));
        let s = if frac > half || (frac == half && !(floor.to_integer() % BigInt::from(2)).is_zero()) {
            floor + BigRational::one()
        } else {
            floor
        };
        let candidate = s * &unit;
        let text = format!("{}e{}", candidate.clone() / &unit, lead - k + 1);
        if text.parse::<f64>().ok() == Some(f) {
            return candidate;
        }
    }
    m
}

/// How the profile takes a number (decided without vouch).
#[derive(Debug, PartialEq)]
enum Profile {
    Readable,
    Overflow,
    Imprecise,
}

fn profile(text: &str, big_integers: bool) -> Profile {
    let f: f64 = text.parse().unwrap();
    if f.is_infinite() {
        return Profile::Overflow;
    }
    let exact = rational(text);
    let integer_literal = !text.contains(['.', 'e', 'E']);
    if integer_literal {
        let safe = BigInt::from((1i64 << 53) - 1);
        let n = exact.to_integer();
        if n.abs() <= safe {
            return Profile::Readable;
        }
        let fits = n >= BigInt::from(i64::MIN) && n <= BigInt::from(u64::MAX);
        if big_integers && fits {
            return Profile::Readable;
        }
        // Beyond ±(2^53−1) (and not taken as a 64-bit integer), it must also be
        // exactly its double: readers of doubles then hold that very integer, as
        // Python's `int` and `BigInt` do. Beyond 64 bits too: printing alike is
        // not enough (18446744073709552000 is held by a double as 2^64).
        return if shortest(f) == exact && of_double(f) == exact { Profile::Readable } else { Profile::Imprecise };
    }
    if shortest(f) == exact {
        Profile::Readable
    } else {
        Profile::Imprecise
    }
}

/// A generated number's text.
fn number_text() -> impl Strategy<Value = String> {
    let small_int = (-1000i64..1000).prop_map(|i| i.to_string());
    let edge_int = prop::sample::select(vec![
        "9007199254740991",
        "9007199254740992",
        "9007199254740993",
        "9007199254740994",
        "-9007199254740993",
        "18446744073709551615",
        "18446744073709551616",
        "18446744073709552000",
        "-18446744073709552000",
        "36893488147419103232",
        "9223372036854775807",
        "-9223372036854775808",
        "-9223372036854775809",
        "1152921504606846976",
        "1152921504606847000",
        "100000000000000000000",
        "123456789012345678901234567890",
        "-0",
        "0",
    ])
    .prop_map(str::to_owned);
    let digits = "[1-9][0-9]{0,24}";
    let decimal = (digits, 0usize..26, prop::bool::ANY, prop::option::of(-400i64..400)).prop_map(
        |(d, point, negative, exp): (String, usize, bool, Option<i64>)| {
            let point = point.min(d.len());
            let (int, frac) = d.split_at(d.len() - point);
            let int = if int.is_empty() { "0" } else { int };
            let mut t = if frac.is_empty() { int.to_owned() } else { format!("{int}.{frac}") };
            if let Some(e) = exp {
                t = format!("{t}e{e}");
            }
            if negative {
                t = format!("-{t}");
            }
            t
        },
    );
    // Numbers near a double: its shortest writing, and one digit more.
    let near = (any::<u64>(), -30i32..30, 0u8..3).prop_map(|(bits, scale, how)| {
        let f = (bits >> 11) as f64 * 10f64.powi(scale) / 1e15;
        match how {
            0 => format!("{f:e}"),
            1 => format!("{f:e}").replacen('e', "1e", 1).replacen("1e", if f.fract() == 0.0 { ".1e" } else { "1e" }, 1),
            _ => format!("{:.20e}", f),
        }
    });
    prop_oneof![3 => small_int, 3 => edge_int, 6 => decimal, 3 => near]
        .prop_filter("a JSON number", |t| serde_json::from_str::<Value>(t).is_ok() || t.len() > 300)
}

/// A keyword with its operand (a number as the contract's author writes it).
fn keyword() -> impl Strategy<Value = (&'static str, String)> {
    let kw = prop::sample::select(vec![
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "const",
        "enum",
        "type_integer",
        "unique",
    ]);
    (kw, number_text())
}

fn decide(kw: &str, operand: &BigRational, x: &BigRational, y: &BigRational) -> bool {
    match kw {
        "minimum" => x >= operand,
        "maximum" => x <= operand,
        "exclusiveMinimum" => x > operand,
        "exclusiveMaximum" => x < operand,
        "multipleOf" => (x / operand).is_integer(),
        "const" | "enum" => x == operand,
        "type_integer" => x.is_integer(),
        "unique" => x != y,
        _ => unreachable!(),
    }
}

static CASES: AtomicU64 = AtomicU64::new(0);
static ACCEPTED: AtomicU64 = AtomicU64::new(0);
static REFUSED: AtomicU64 = AtomicU64::new(0);
static IMPRECISE: AtomicU64 = AtomicU64::new(0);
static UNCOMPILED: AtomicU64 = AtomicU64::new(0);

fn check_one(kw: &str, operand_text: &str, text: &str, other: &str, big: bool) -> Result<(), TestCaseError> {
    let operand_value: Value = match serde_json::from_str(operand_text) {
        Ok(v) => v,
        Err(_) => return Ok(()),
    };
    let allow = if big { json!({"allow": ["big_integers"]}) } else { json!({}) };
    let schema = match kw {
        "type_integer" => json!({"type": "integer", "x-vouch": allow}),
        "unique" => json!({"type": "array", "uniqueItems": true, "x-vouch": allow}),
        "enum" => json!({"enum": ["x", operand_value], "x-vouch": allow}),
        k => {
            let mut m = serde_json::Map::new();
            m.insert(k.to_owned(), operand_value);
            m.insert("x-vouch".into(), allow);
            Value::Object(m)
        }
    };
    // The contract's own text, read by vouch's reader (its numbers as written).
    let source = schema.to_string().replace(&serde_json::to_string(&schema[kw]).unwrap_or_default(), operand_text);
    let contract = match Contract::from_json_str(&source) {
        Ok(c) => c,
        Err(_) => {
            UNCOMPILED.fetch_add(1, Relaxed);
            return Ok(());
        }
    };
    let operand = rational(operand_text);
    if kw == "multipleOf" && !operand.is_positive() {
        return Ok(());
    }
    let reply = if kw == "unique" { format!("[{text}, {other}]") } else { text.to_owned() };
    let verdict = contract.check(&reply);
    CASES.fetch_add(1, Relaxed);
    let x = rational(text);
    let y = rational(other);
    // What the profile says, for every number in the reply.
    let profiles: Vec<Profile> =
        if kw == "unique" { vec![profile(text, big), profile(other, big)] } else { vec![profile(text, big)] };
    if let Some(p) = profiles.iter().find(|p| **p != Profile::Readable) {
        let want = if *p == Profile::Overflow { "number_overflow" } else { "imprecise_number" };
        IMPRECISE.fetch_add(1, Relaxed);
        prop_assert_eq!(verdict.problems().first().map(|p| p.code.as_str()), Some(want), "{} {}", source, reply);
        return Ok(());
    }
    let f: f64 = text.parse().unwrap();
    let mut expected = decide(kw, &operand, &x, &y);
    // Integer fields refuse integers beyond ±(2^53−1) unless big integers are allowed.
    if kw == "type_integer" && !big && x.abs() > BigRational::from_integer(BigInt::from((1i64 << 53) - 1)) {
        expected = false;
    }
    // From 2^53 on a double that is not exactly the decimal is no multiple: readers
    // taking it as an integer hold its binary value.
    let from_double = !text.contains(['.', 'e', 'E'])
        && (x.abs() <= BigRational::from_integer(BigInt::from((1i64 << 53) - 1)) || big)
        && x.to_integer().bits() <= 64;
    if kw == "multipleOf" && f.abs() >= 9_007_199_254_740_992.0 && !from_double && of_double(f) != x {
        expected = false;
    }
    prop_assert_eq!(verdict.is_accepted(), expected, "{} {} {:?}", source, reply, verdict.problems());
    if let Verdict::Accepted(a) = &verdict {
        ACCEPTED.fetch_add(1, Relaxed);
        // json(): an exact reader reads the fraction checked; a reader of doubles the same double.
        let json = a.json();
        let first = if kw == "unique" {
            json.trim_start_matches('[').split(',').next().unwrap().to_owned()
        } else {
            json.to_string()
        };
        prop_assert_eq!(rational(&first), x.clone(), "json() {} for {}", json, text);
        // (-0 and 0 are one value, as JSON Schema and JavaScript's `===` read them.)
        prop_assert!(first.parse::<f64>().unwrap() == f, "json() {} for {}", json, text);
        // value(): the serde_json number stands for the same fraction (a double for
        // the decimal every reader of doubles writes it as; Rust's own `{:e}` breaks
        // ties the other way, so the oracle's `shortest` decides).
        let v = if kw == "unique" { a.value()[0].clone() } else { a.value().clone() };
        let held = match v.as_number() {
            Some(n) if n.is_f64() => shortest(n.as_f64().unwrap()),
            Some(n) => rational(&n.to_string()),
            None => panic!("not a number"),
        };
        prop_assert_eq!(held, x);
    } else {
        REFUSED.fetch_add(1, Relaxed);
    }
    Ok(())
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(2_000)
}

#[test]
fn every_numeric_keyword_is_decided_exactly() {
    let started = std::time::Instant::now();
    let config = ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() };
    proptest!(config, |((kw, operand) in keyword(), text in number_text(), other in number_text(), big in prop::bool::weighted(0.3))| {
        check_one(kw, &operand, &text, &other, big)?;
    });
    common::figure(&format!(
        "numbers: {} cases ({} contracts with an imprecise operand refused at compile time), accepted {}, refused by a keyword {}, by the number profile {}, disagreements 0, {:.1} s",
        CASES.load(Relaxed),
        UNCOMPILED.load(Relaxed),
        ACCEPTED.load(Relaxed),
        REFUSED.load(Relaxed),
        IMPRECISE.load(Relaxed),
        started.elapsed().as_secs_f64()
    ));
}

/// The review's examples, each with its code and path.
#[test]
fn the_reviews_examples() {
    let c = |s: &str| Contract::from_json_str(s).unwrap();
    let code =
        |c: &Contract, r: &str| c.check(r).problems().first().map(|p| (p.code.as_str().to_owned(), p.path.clone()));
    let three = c(r#"{"multipleOf": 3}"#);
    assert_eq!(code(&three, "1.7014118346046923e+38"), Some(("out_of_range".into(), String::new())));
    assert_eq!(code(&three, "1e308"), Some(("out_of_range".into(), String::new())));
    assert!(!three.check("3e300").is_accepted(), "3e300 is beyond doubles' exact range");
    assert!(!three.check("9007199254740991").is_accepted());
    assert!(three.check("9007199254740990").is_pass());
    let int = c(r#"{"type": "integer", "maximum": 0}"#);
    assert_eq!(code(&int, "1e-400"), Some(("imprecise_number".into(), String::new())));
    assert_eq!(code(&int, r#"[1]"#), Some(("wrong_type".into(), String::new())));
    let obj = c(r#"{"properties": {"a": {"maximum": 0.3}}}"#);
    assert_eq!(code(&obj, r#"{"a": 0.30000000000000001}"#), Some(("imprecise_number".into(), "/a".into())));
    assert!(obj.check(r#"{"a": 0.3}"#).is_pass());
    // A contract's own numbers are kept as written, or refused when a double cannot hold them.
    assert!(Contract::from_json_str(r#"{"maximum": 0.30000000000000001}"#).is_err());
    let exact = c(r#"{"exclusiveMaximum": 0.1}"#);
    assert!(exact.check("0.1").problems()[0].code.as_str() == "out_of_range");
    assert!(exact.check("0.09999999999999999").is_pass());
    // A double halfway between two 16-digit decimals is written, as JavaScript and Python
    // write it, with the even one: the decimal checked (serde_json's writer picks the other).
    let any = c("{}");
    let vouch::Verdict::Accepted(a) = any.check("[710000000000001.20, 2050329228644159.2]") else { panic!("refused") };
    assert_eq!(a.json(), "[710000000000001.2,2050329228644159.2]");
    assert!(!BigRational::one().is_zero());
}
