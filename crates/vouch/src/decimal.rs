//! Numbers as the decimals they denote, compared and divided exactly.
//!
//! A JSON number is a decimal. Readers differ in what they hold it as:
//! JavaScript, Go and most others read the nearest double, Python reads
//! integers exactly, decimal readers the decimal itself. vouch reads only
//! numbers every such reader reads as the same decimal (see
//! [`faithful`]), so an accepted number has one value, whoever reads it.
//! A double stands for the decimal its shortest round-trip writing gives
//! (what every language's `toString`/`repr` prints); an integer held in 64
//! bits stands for itself. Every numeric keyword is decided on those
//! decimals, exactly: no keyword is ever decided on a rounding.

use std::cmp::Ordering;

use serde_json::Number;

/// The most significant digits a double's shortest writing has.
const DOUBLE_DIGITS: u32 = 17;

/// A finite decimal `±mantissa × 10^exponent`, normalized: the mantissa has
/// no trailing zero (and zero is `0 × 10^0`, never negative).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Decimal {
    negative: bool,
    mantissa: u64,
    exponent: i64,
}

impl Decimal {
    const ZERO: Decimal = Decimal { negative: false, mantissa: 0, exponent: 0 };

    fn new(negative: bool, mut mantissa: u64, mut exponent: i64) -> Self {
        if mantissa == 0 {
            return Self::ZERO;
        }
        while mantissa % 10 == 0 {
            mantissa /= 10;
            exponent = exponent.saturating_add(1);
        }
        Self { negative, mantissa, exponent }
    }

    /// The decimal a JSON number stands for (see the module doc).
    pub(crate) fn of(n: &Number) -> Self {
        if let Some(u) = n.as_u64() {
            return Self::new(false, u, 0);
        }
        if let Some(i) = n.as_i64() {
            return Self::new(i < 0, i.unsigned_abs(), 0);
        }
        match n.as_f64() {
            Some(f) if f.is_finite() => Self::of_double(f),
            _ => Self::ZERO,
        }
    }

    /// The decimal a double stands for: its shortest round-trip writing.
    pub(crate) fn of_double(f: f64) -> Self {
        let mut buffer = ryu::Buffer::new();
        let written = buffer.format_finite(f);
        // Ryu writes at most 17 significant digits: they fit a u64.
        Digits::scan(written).and_then(|d| d.decimal()).unwrap_or(Self::ZERO)
    }

    pub(crate) fn is_zero(self) -> bool {
        self.mantissa == 0
    }

    /// Digits of the mantissa.
    fn width(self) -> i64 {
        i64::from(self.mantissa.checked_ilog10().unwrap_or(0)) + 1
    }

    /// Order by magnitude.
    fn cmp_magnitude(self, other: Self) -> Ordering {
        match (self.is_zero(), other.is_zero()) {
            (true, true) => return Ordering::Equal,
            (true, false) => return Ordering::Less,
            (false, true) => return Ordering::Greater,
            _ => {}
        }
        // The power of ten of the leading digit decides, unless equal.
        let (lead_a, lead_b) =
            (self.exponent.saturating_add(self.width()), other.exponent.saturating_add(other.width()));
        if lead_a != lead_b {
            return lead_a.cmp(&lead_b);
        }
        // Same leading power: pad the shorter mantissa to the longer's width
        // (at most 20 digits each, so the padded values fit a u128).
        let (wa, wb) = (self.width(), other.width());
        let pad = |m: u64, by: i64| u128::from(m) * 10u128.pow(u32::try_from(by).unwrap_or(0));
        let a = pad(self.mantissa, (wb - wa).max(0));
        let b = pad(other.mantissa, (wa - wb).max(0));
        a.cmp(&b)
    }

    /// Whether `self` is a whole multiple of `divisor` (a positive decimal).
    pub(crate) fn is_multiple_of(self, divisor: Self) -> bool {
        if self.is_zero() {
            return true;
        }
        if divisor.is_zero() {
            return false;
        }
        let (a, b) = (u128::from(self.mantissa), u128::from(divisor.mantissa));
        let shift = self.exponent.saturating_sub(divisor.exponent);
        if shift >= 0 {
            // a·10^shift ≡ 0 (mod b); residues stay below 2^64, so their products fit a u128.
            let ten = pow_mod(10, shift, b);
            (a % b) * ten % b == 0
        } else {
            // a must be a multiple of b·10^-shift, which is larger than a once it overflows.
            let scale = u32::try_from(shift.unsigned_abs()).ok().and_then(|k| 10u128.checked_pow(k));
            match scale.and_then(|s| s.checked_mul(b)) {
                Some(m) => a % m == 0,
                None => false,
            }
        }
    }

    /// The decimal as a person writes it, for messages: plain digits where
    /// short (`0.1`, `9007199254740992`), else `1.5e-30`.
    pub(crate) fn shown(self) -> String {
        let sign = if self.negative { "-" } else { "" };
        let digits = self.mantissa.to_string();
        let width = i64::try_from(digits.len()).unwrap_or(i64::MAX);
        let lead = self.exponent.saturating_add(width); // digits before the point
        let zeros = |n: i64| "0".repeat(usize::try_from(n).unwrap_or(0));
        if (0..=21).contains(&self.exponent) {
            format!("{sign}{digits}{}", zeros(self.exponent))
        } else if self.exponent < 0 && lead > 0 {
            let (int, frac) = digits.split_at(usize::try_from(lead).unwrap_or(0).min(digits.len()));
            format!("{sign}{int}.{frac}")
        } else if self.exponent < 0 && lead > -6 {
            format!("{sign}0.{}{digits}", zeros(-lead))
        } else {
            let (first, rest) = digits.split_at(1.min(digits.len()));
            let point = if rest.is_empty() { "" } else { "." };
            format!("{sign}{first}{point}{rest}e{}", lead.saturating_sub(1))
        }
    }
}

impl PartialOrd for Decimal {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Decimal {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self.negative, other.negative) {
            (false, true) => Ordering::Greater,
            (true, false) => Ordering::Less,
            (false, false) => self.cmp_magnitude(*other),
            (true, true) => other.cmp_magnitude(*self),
        }
    }
}

/// `base^exp mod m` for `m` below 2^64 (every residue stays below 2^64).
fn pow_mod(base: u128, mut exp: i64, m: u128) -> u128 {
    if m == 1 {
        return 0;
    }
    let mut result = 1u128;
    let mut b = base % m;
    while exp > 0 {
        if exp & 1 == 1 {
            result = result * b % m;
        }
        b = b * b % m;
        exp >>= 1;
    }
    result
}

/// Compare two JSON numbers as the decimals they stand for.
pub(crate) fn cmp(a: &Number, b: &Number) -> Ordering {
    // The common cases without building decimals: two 64-bit integers, or
    // two doubles (the shortest writing orders exactly as the doubles do).
    if let (Some(x), Some(y)) = (a.as_i64(), b.as_i64()) {
        return x.cmp(&y);
    }
    // A double, or an integer within ±2^53 (which a double holds exactly and
    // whose shortest writing is itself): compared as doubles, exactly.
    if let (Some(x), Some(y)) = (as_exact_double(a), as_exact_double(b)) {
        if let Some(o) = x.partial_cmp(&y) {
            // -0.0 and 0.0 are equal here, as decimals.
            return o;
        }
    }
    Decimal::of(a).cmp(&Decimal::of(b))
}

/// The double a number is compared as, when that comparison is exact.
fn as_exact_double(n: &Number) -> Option<f64> {
    if n.is_f64() {
        return n.as_f64();
    }
    const EXACT: u64 = 1 << 53;
    match (n.as_i64(), n.as_u64()) {
        (Some(i), _) if i.unsigned_abs() <= EXACT => Some(i as f64),
        (_, Some(u)) if u <= EXACT => Some(u as f64),
        _ => None,
    }
}

/// The digits of a JSON number's text (or of a double's shortest writing).
struct Digits<'t> {
    negative: bool,
    /// Integer and fraction digits, in order, without the point.
    integer: &'t str,
    fraction: &'t str,
    exponent: i64,
}

impl<'t> Digits<'t> {
    fn scan(text: &'t str) -> Option<Self> {
        let (negative, body) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let (number, exponent) = match body.find(['e', 'E']) {
            Some(at) => (body.get(..at)?, parse_exponent(body.get(at + 1..)?)),
            None => (body, 0),
        };
        let (integer, fraction) = number.split_once('.').unwrap_or((number, ""));
        Some(Self { negative, integer, fraction, exponent })
    }

    /// The digits as a normalized decimal, when they are at most 17
    /// significant ones (`None`: more than any double's writing has).
    fn decimal(&self) -> Option<Decimal> {
        let all = self.integer.bytes().chain(self.fraction.bytes());
        let significant = all.clone().skip_while(|&b| b == b'0');
        let mut mantissa: u64 = 0;
        let mut count = 0u32;
        let mut zeros_pending = 0u32;
        for b in significant {
            if b == b'0' {
                zeros_pending += 1;
                continue;
            }
            // Zeros between significant digits are digits too.
            count = count.saturating_add(zeros_pending).saturating_add(1);
            if count > DOUBLE_DIGITS {
                return None;
            }
            mantissa = mantissa * 10u64.pow(zeros_pending + 1) + u64::from(b - b'0');
            zeros_pending = 0;
        }
        if mantissa == 0 {
            return Some(Decimal::ZERO);
        }
        // The trailing zeros were not multiplied in: they raise the exponent.
        let fraction = i64::try_from(self.fraction.len()).unwrap_or(i64::MAX);
        let exponent = self.exponent.saturating_sub(fraction).saturating_add(i64::from(zeros_pending));
        Some(Decimal::new(self.negative, mantissa, exponent))
    }
}

/// An exponent's digits, saturating (a number whose exponent does not fit
/// is far outside a double's range either way).
fn parse_exponent(text: &str) -> i64 {
    let (negative, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, text.get(1..).unwrap_or_default()),
        Some(b'+') => (false, text.get(1..).unwrap_or_default()),
        _ => (false, text),
    };
    let magnitude = digits.bytes().fold(0i64, |acc, b| acc.saturating_mul(10).saturating_add(i64::from(b - b'0')));
    if negative {
        -magnitude
    } else {
        magnitude
    }
}

/// The decimal a JSON number's text writes, when it has at most 17
/// significant digits (more than any double's shortest writing).
pub(crate) fn written(text: &str) -> Option<Decimal> {
    Digits::scan(text).and_then(|d| d.decimal())
}

/// Below this magnitude a double stands for its shortest writing; at and
/// above it every double is an integer, and readers that convert it to one
/// (JavaScript's `BigInt`, Python's `int`) get its exact binary value.
const EXACT_FROM: f64 = 9_007_199_254_740_992.0;

impl Decimal {
    /// Whether a double holds this integer exactly (its odd part times
    /// 5^exponent fits the 53-bit significand).
    fn is_exact_double(self) -> bool {
        if self.exponent < 0 {
            return false;
        }
        let odd = self.mantissa >> self.mantissa.trailing_zeros();
        let five = u32::try_from(self.exponent).ok().and_then(|e| 5u128.checked_pow(e));
        five.and_then(|f| f.checked_mul(u128::from(odd))).is_some_and(|m| m < 1u128 << 53)
    }
}

/// Whether a JSON number's text, read as the double `read`, is read as the
/// same decimal by every reader: the decimal written is the double's
/// shortest writing, which every reader of doubles prints it as. Numbers
/// of up to 15 significant digits in a double's normal range always are;
/// `0.30000000000000001` (a double holds 0.3), `1e-400` (0) and
/// `9007199254740993` (9007199254740992) are not.
pub(crate) fn faithful(text: &str, read: f64) -> bool {
    written(text) == Some(Decimal::of_double(read))
}

/// [`faithful`] for an integer written without fraction or exponent beyond
/// ±(2^53−1): also exactly the double's value, so readers that hold it as a
/// double hold that very integer (`9007199254740994`, `10^18`), not another
/// one that prints alike (`1152921504606847000` is held as 2^60).
pub(crate) fn faithful_integer(text: &str, read: f64) -> bool {
    written(text).is_some_and(|w| w == Decimal::of_double(read) && w.is_exact_double())
}

/// Whether a number is a double from 2^53 on that is not exactly the
/// decimal it stands for (`1e23`, `1.7014118346046923e38`): readers that
/// take it as an integer (JavaScript's `BigInt`, Python's `int`, `%`) hold
/// its binary value, another integer than the one written.
pub(crate) fn inexact_beyond_doubles(n: &Number) -> bool {
    n.is_f64() && n.as_f64().is_some_and(|f| f.abs() >= EXACT_FROM) && !Decimal::of(n).is_exact_double()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(text: &str) -> Decimal {
        Digits::scan(text).and_then(|d| d.decimal()).unwrap_or(Decimal { negative: true, mantissa: 1, exponent: 999 })
    }

    #[test]
    fn normalizes() {
        assert_eq!(d("1.50"), d("15e-1"));
        assert_eq!(d("100"), Decimal { negative: false, mantissa: 1, exponent: 2 });
        assert_eq!(d("-0.0"), Decimal::ZERO);
        assert_eq!(d("0.000"), d("0"));
        assert_eq!(d("1001"), Decimal { negative: false, mantissa: 1001, exponent: 0 });
        assert_eq!(Decimal::of_double(0.1), d("0.1"));
        assert_eq!(Decimal::of_double(1e20), d("100000000000000000000"));
        assert_eq!(Decimal::of_double(2f64.powi(60)), d("1152921504606847000"));
    }

    #[test]
    fn shows_as_written() {
        assert_eq!(d("0.1").shown(), "0.1");
        assert_eq!(d("1111111111111111e-16").shown(), "0.1111111111111111");
        assert_eq!(d("-12.5").shown(), "-12.5");
        assert_eq!(d("9007199254740992").shown(), "9007199254740992");
        assert_eq!(d("0.000015").shown(), "0.000015");
        assert_eq!(d("1.5e-30").shown(), "1.5e-30");
        assert_eq!(d("1e300").shown(), "1e300");
        assert_eq!(d("-2.5e40").shown(), "-2.5e40");
        assert_eq!(d("0").shown(), "0");
    }

    #[test]
    fn orders_exactly() {
        assert!(d("0.30000000000000001") > d("0.3"));
        assert!(d("-1") < d("-0.5"));
        assert!(d("1e-400") > Decimal::ZERO);
        assert!(d("99") < d("100"));
        assert!(d("1.152921504606846976e18") < Decimal::of_double(2f64.powi(60)));
        assert_eq!(cmp(&Number::from(1152921504606846976u64), &Number::from(1152921504606847000u64)), Ordering::Less);
        let f = |x: f64| Number::from_f64(x).unwrap_or(Number::from(0));
        assert_eq!(cmp(&f(19.99), &Number::from(0)), Ordering::Greater);
        assert_eq!(cmp(&f(-0.0), &Number::from(0)), Ordering::Equal);
        assert_eq!(cmp(&f(9007199254740992.0), &Number::from(9007199254740992u64)), Ordering::Equal);
        // Beyond 2^53 the integer is compared as a decimal: 2^60 is below the double's 1152921504606847000.
        assert_eq!(cmp(&Number::from(1u64 << 60), &f(2f64.powi(60))), Ordering::Less);
    }

    #[test]
    fn multiples_exactly() {
        let m = |a: &str, b: &str| d(a).is_multiple_of(d(b));
        assert!(m("0.0075", "0.0001"));
        assert!(!m("0.00751", "0.0001"));
        assert!(m("0.3", "0.1"));
        assert!(!m("1e308", "3"));
        // 2^127's shortest writing is 17014118346046923e22, whose digits sum to 60: as written, a
        // multiple of 3, though 2^127 is not (replies refuse that number: readers disagree on it).
        assert!(Decimal::of_double(2f64.powi(127)).is_multiple_of(d("3")));
        assert!(!Decimal::new(false, 1, 38).is_multiple_of(d("3")));
        assert!(m("12391239123", "1e-8"));
        assert!(!m("1e308", "0.123456789"));
        assert!(m("0", "7"));
        assert!(!m("1e-20", "2"));
        assert!(m("18446744073709551615", "5"));
        assert!(m("4.5", "1.5"));
        assert!(!m("4.5", "2"));
    }

    #[test]
    fn faithful_numbers() {
        let f = |t: &str| faithful(t, t.parse().unwrap_or(f64::NAN));
        assert!(f("0.1") && f("3.141592653589793") && f("1e20") && f("0.8333333333333334"));
        assert!(f("1.0") && f("-0") && f("0e999") && f("5e-324") && f("9007199254740994"));
        assert!(!f("0.30000000000000001") && !f("1e-400") && !f("9007199254740993"));
        assert!(!f("0.33333333333333333") && !f("1152921504606846976") && f("1152921504606847000"));
        let int = |t: &str| faithful_integer(t, t.parse().unwrap_or(f64::NAN));
        assert!(!int("1152921504606847000") && int("1000000000000000000") && int("9007199254740994"));
        assert!(f("100000000000000000000.000") && f("1e308") && f("1.7014118346046923e+38"));
        let n = |f: f64| Number::from_f64(f).unwrap_or(Number::from(0));
        assert!(inexact_beyond_doubles(&n(1e23)) && inexact_beyond_doubles(&n(2f64.powi(127) * 1.5)));
        assert!(!inexact_beyond_doubles(&n(3e22)) && !inexact_beyond_doubles(&n(1e15)));
    }
}
