//! JSON equality as JSON Schema defines it (`1` equals `1.0`, key order does
//! not matter), number ordering, and a hash consistent with that equality so
//! `uniqueItems` stays linear on large arrays.

use std::cmp::Ordering;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use serde_json::{Number, Value};

use crate::decimal::{self, Decimal};

/// The exact integer a number holds, if it holds one that fits.
fn as_i128(n: &Number) -> Option<i128> {
    if let Some(i) = n.as_i64() {
        return Some(i128::from(i));
    }
    if let Some(u) = n.as_u64() {
        return Some(i128::from(u));
    }
    // A whole double within ±2^53 stands for exactly that integer.
    n.as_f64().filter(|f| f.fract() == 0.0 && f.abs() <= 9_007_199_254_740_992.0).map(|f| f as i128)
}

/// Whether a number is an integer every double-based reader reads exactly.
#[must_use]
pub(crate) fn is_safe_integer(n: &Number) -> bool {
    const MAX_SAFE: i128 = (1 << 53) - 1;
    match as_i128(n) {
        Some(i) => (-MAX_SAFE..=MAX_SAFE).contains(&i),
        // Whole beyond 2^53 is beyond; a fraction is not an integer at all.
        None => n.as_f64().is_some_and(|f| f.fract() != 0.0),
    }
}

/// Order two numbers as the decimals they stand for, exactly.
#[must_use]
pub(crate) fn cmp_numbers(a: &Number, b: &Number) -> Option<Ordering> {
    Some(decimal::cmp(a, b))
}

/// Whether `v` is a multiple of `m` (`m` > 0), exactly, on the decimals
/// they stand for (`0.0075` is a multiple of `0.0001`; `1e308` is not one
/// of 3), and every reader agrees (see below).
#[must_use]
pub(crate) fn is_multiple_of(v: &Number, m: &Number) -> bool {
    if let (Some(x), Some(y)) = (v.as_i64(), m.as_i64()) {
        return y != 0 && x % y == 0;
    }
    // A double from 2^53 on that is not exactly its decimal: readers taking
    // it as an integer hold another one (2^127 for `1.7014118346046923e38`,
    // a multiple of 3 as written, but 2^127 is not): no reader may hold a
    // value vouch did not check.
    if decimal::inexact_beyond_doubles(v) {
        return false;
    }
    Decimal::of(v).is_multiple_of(Decimal::of(m))
}

/// JSON Schema equality.
#[must_use]
pub(crate) fn json_equal(a: &Value, b: &Value) -> bool {
    crate::deeper(|| json_equal_here(a, b))
}

fn json_equal_here(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Number(x), Value::Number(y)) => cmp_numbers(x, y) == Some(Ordering::Equal),
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_equal(p, q)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, p)| y.get(k).is_some_and(|q| json_equal(p, q)))
        }
        _ => false,
    }
}

/// A hash such that `json_equal(a, b)` implies `hash(a) == hash(b)`.
#[must_use]
pub(crate) fn json_hash(v: &Value) -> u64 {
    let mut h = DefaultHasher::new();
    hash_into(v, &mut h);
    h.finish()
}

fn hash_into(v: &Value, h: &mut DefaultHasher) {
    crate::deeper(|| hash_here(v, h));
}

fn hash_here(v: &Value, h: &mut DefaultHasher) {
    match v {
        Value::Null => 0u8.hash(h),
        Value::Bool(b) => (1u8, b).hash(h),
        // The decimal it stands for: equal numbers (`1`, `1.0`, `1e0`) hash alike.
        Value::Number(n) => (2u8, Decimal::of(n)).hash(h),
        Value::String(s) => (4u8, s).hash(h),
        Value::Array(items) => {
            (5u8, items.len()).hash(h);
            for item in items {
                hash_into(item, h);
            }
        }
        Value::Object(map) => {
            // Order-independent: combine per-entry hashes commutatively.
            let mut sum = 0u64;
            for (k, item) in map {
                let mut eh = DefaultHasher::new();
                k.hash(&mut eh);
                hash_into(item, &mut eh);
                sum = sum.wrapping_add(eh.finish());
            }
            (6u8, map.len(), sum).hash(h);
        }
    }
}

/// The first pair of equal items, if any.
#[must_use]
pub(crate) fn first_duplicate(items: &[Value]) -> Option<(usize, usize)> {
    let mut seen: std::collections::HashMap<u64, Vec<usize>> = std::collections::HashMap::with_capacity(items.len());
    for (j, item) in items.iter().enumerate() {
        let bucket = seen.entry(json_hash(item)).or_default();
        if let Some(&i) = bucket.iter().find(|&&i| items.get(i).is_some_and(|other| json_equal(other, item))) {
            return Some((i, j));
        }
        bucket.push(j);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn equality_follows_json_schema() {
        assert!(json_equal(&json!(1), &json!(1.0)));
        assert!(json_equal(&json!({"a": 1, "b": [1.0]}), &json!({"b": [1], "a": 1.0})));
        assert!(!json_equal(&json!(false), &json!(0)));
        assert!(!json_equal(&json!([1]), &json!([1, 1])));
        assert_eq!(json_hash(&json!({"a": 1, "b": 2})), json_hash(&json!({"b": 2.0, "a": 1})));
    }

    #[test]
    fn duplicates_found_in_large_arrays() {
        let mut items: Vec<Value> = (0..100_000).map(|i| json!({"id": i})).collect();
        assert_eq!(first_duplicate(&items), None);
        items.push(json!({"id": 5.0}));
        assert_eq!(first_duplicate(&items), Some((5, 100_000)));
    }

    #[test]
    fn multiples() {
        assert!(is_multiple_of(
            &Number::from_f64(0.0075).unwrap_or(Number::from(0)),
            &Number::from_f64(0.0001).unwrap_or(Number::from(1))
        ));
        assert!(!is_multiple_of(
            &Number::from_f64(0.00751).unwrap_or(Number::from(0)),
            &Number::from_f64(0.0001).unwrap_or(Number::from(1))
        ));
        assert!(is_multiple_of(&Number::from(12), &Number::from(4)));
        let f = |x: f64| Number::from_f64(x).unwrap_or(Number::from(0));
        // Near zero: a quotient that rounds to 0 is no multiple; 0 is one.
        assert!(!is_multiple_of(&f(1e-20), &Number::from(2)));
        assert!(!is_multiple_of(&f(-5e-324), &f(0.5)));
        assert!(!is_multiple_of(&f(1e-7), &f(0.01)));
        assert!(is_multiple_of(&f(0.0), &f(0.01)));
        assert!(is_multiple_of(&f(-0.0), &Number::from(3)));
        assert!(is_multiple_of(&f(0.01), &f(0.01)));
        assert!(is_multiple_of(&f(0.3), &f(0.1)));
        assert!(!is_multiple_of(&f(0.3000001), &f(0.1)));
        assert!(!is_multiple_of(
            &Number::from_f64(1e308).unwrap_or(Number::from(0)),
            &Number::from_f64(0.123456789).unwrap_or(Number::from(1))
        ));
    }
}
