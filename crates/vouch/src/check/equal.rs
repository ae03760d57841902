//! JSON equality as JSON Schema defines it (`1` equals `1.0`, key order does
//! not matter), number ordering, and a hash consistent with that equality so
//! `uniqueItems` stays linear on large arrays.

use std::cmp::Ordering;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use serde_json::{Number, Value};

/// The exact integer a number holds, if it holds one that fits.
fn as_i128(n: &Number) -> Option<i128> {
    if let Some(i) = n.as_i64() {
        return Some(i128::from(i));
    }
    if let Some(u) = n.as_u64() {
        return Some(i128::from(u));
    }
    // Floats with no fraction compare exactly as integers (2^100 fits i128).
    n.as_f64().filter(|f| f.fract() == 0.0 && f.abs() < 1.0e38).map(|f| f as i128)
}

/// Whether a number is an integer every double-based reader reads exactly.
#[must_use]
pub(crate) fn is_safe_integer(n: &Number) -> bool {
    const MAX_SAFE: i128 = (1 << 53) - 1;
    match as_i128(n) {
        Some(i) => (-MAX_SAFE..=MAX_SAFE).contains(&i),
        // Beyond i128 but whole (1e300) is far beyond; a fraction is not an integer at all.
        None => n.as_f64().is_some_and(|f| f.fract() != 0.0),
    }
}

/// Order two numbers: exactly when both are integers, else as doubles.
#[must_use]
pub(crate) fn cmp_numbers(a: &Number, b: &Number) -> Option<Ordering> {
    // The common case, both plain integers, without widening.
    if let (Some(x), Some(y)) = (a.as_i64(), b.as_i64()) {
        return Some(x.cmp(&y));
    }
    if let (Some(x), Some(y)) = (as_i128(a), as_i128(b)) {
        return Some(x.cmp(&y));
    }
    a.as_f64()?.partial_cmp(&b.as_f64()?)
}

/// Whether `v` is a multiple of `m` (`m` > 0).
#[must_use]
pub(crate) fn is_multiple_of(v: &Number, m: &Number) -> bool {
    if let (Some(x), Some(y)) = (as_i128(v), as_i128(m)) {
        return y != 0 && x % y == 0;
    }
    let (Some(x), Some(y)) = (v.as_f64(), m.as_f64()) else {
        return false;
    };
    if x == 0.0 {
        return true;
    }
    let q = x / y;
    if !q.is_finite() {
        return false;
    }
    let whole = q.round();
    // A non-zero value is never a multiple through a quotient that rounds to
    // 0 (`1e-20` is no multiple of 2). Decimal multiples like 0.0075 / 0.0001
    // land a few ulps off an integer: the tolerance is relative to the quotient.
    whole != 0.0 && (q - whole).abs() <= q.abs() * 4.0 * f64::EPSILON
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
        Value::Number(n) => match as_i128(n) {
            Some(i) => (2u8, i).hash(h),
            None => (3u8, n.as_f64().unwrap_or(0.0).to_bits()).hash(h),
        },
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
