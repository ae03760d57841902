//! A strict RFC 8259 reader that never recurses.
//!
//! Why our own and not `serde_json::from_slice`: we must tell a cut-off reply
//! (`truncated`) from a malformed one (`not_json`), refuse repeated keys
//! (serde_json keeps the last), enforce a per-contract depth limit, and never
//! recurse on input depth. Containers live on an explicit stack, so a
//! million-deep reply costs one small allocation per open level and is
//! refused at the limit.

use std::borrow::Cow;

use serde_json::{Map, Number, Value};

use crate::decimal::{faithful, faithful_integer};
use crate::problem::ProblemCode;

/// Why reading failed, and where (byte offset into the text read).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ReadError {
    pub code: ProblemCode,
    pub offset: usize,
    /// JSON Pointer of the offending member, where one is known.
    pub path: String,
    pub detail: String,
}

/// What was expected where reading stopped, as the errors say it (shared
/// with the schema-directed pass, whose errors must be these to the byte).
pub(crate) const KEY: &str = "expected a quoted key";
pub(crate) const COLON: &str = "expected ':' after a key";
pub(crate) const IN_ARRAY: &str = "expected ',' or ']' in an array";
pub(crate) const IN_OBJECT: &str = "expected ',' or '}' in an object";

/// A scalar as read, before it becomes a [`Value`] (a string without
/// escapes still borrowed from the text).
#[derive(Debug)]
pub(crate) enum Scalar<'a> {
    Null,
    Bool(bool),
    Number(Number),
    String(Cow<'a, str>),
}

impl Scalar<'_> {
    /// The value of a scalar that is not a string (a string is copied).
    pub(crate) fn to_value(&self) -> Value {
        match self {
            Self::Null => Value::Null,
            Self::Bool(b) => Value::Bool(*b),
            Self::Number(n) => Value::Number(n.clone()),
            Self::String(s) => Value::String(s.to_string()),
        }
    }

    pub(crate) fn into_value(self) -> Value {
        match self {
            Self::Null => Value::Null,
            Self::Bool(b) => Value::Bool(b),
            Self::Number(n) => Value::Number(n),
            Self::String(s) => Value::String(s.into_owned()),
        }
    }
}

/// An open container on the explicit stack.
enum Frame {
    Array(Vec<Value>),
    /// The object so far, and the key whose value is being read.
    Object(Map<String, Value>, String),
}

pub(crate) struct Parser<'a> {
    bytes: &'a [u8],
    text: &'a str,
    pub pos: usize,
    max_depth: usize,
    stack: Vec<Frame>,
    integers: Integers,
}

/// Which numbers a reader takes (see [`crate::decimal`]). A reply's number
/// must be one every JSON reader reads as the same decimal: too many digits
/// for a double (`0.30000000000000001`), too small for one (`1e-400`), too
/// large (`1e400`) is refused, so no reader ever gets a value vouch did not check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Integers {
    /// Integers beyond ±(2^53−1) only where a double holds them to the
    /// digit, as every reader then reads them alike. Replies, by default.
    AsDoubles,
    /// Also every integer that fits 64 bits, held exactly: replies to a
    /// contract that allows `big_integers` (its readers hold integers exactly).
    Wide,
    /// A document of vouch's own (a contract, a completion, a batch line),
    /// read as `Wide`: the value kept stands for exactly what was written.
    Document,
}

/// Read exactly one JSON value from `text[start..]`, allowing only white
/// space after it when `whole` is true. Returns the value and the offset just
/// past it.
pub(crate) fn read_value(
    text: &str,
    start: usize,
    max_depth: usize,
    whole: bool,
    integers: Integers,
) -> Result<(Value, usize), ReadError> {
    let mut p = Parser { bytes: text.as_bytes(), text, pos: start, max_depth, stack: Vec::new(), integers };
    let value = p.value()?;
    let end = p.pos;
    if whole {
        p.skip_ws();
        if p.pos < p.bytes.len() {
            return Err(p.trailing());
        }
    }
    Ok((value, end))
}

/// The string at the start of `text` (its opening quote at 0): its content
/// and the offset just past its closing quote.
pub(crate) fn read_string(text: &str) -> Result<(Cow<'_, str>, usize), ReadError> {
    let mut p =
        Parser { bytes: text.as_bytes(), text, pos: 0, max_depth: 0, stack: Vec::new(), integers: Integers::Document };
    // A string read on its own is mostly a whole document quoted (a batch
    // line's reply): room for the rest of the text, never grown.
    let content = p.string_cow_sized(|_| text.len())?;
    Ok((content, p.pos))
}

/// An integer of up to 18 digits, summed directly (no overflow possible).
#[inline]
pub(crate) fn small_integer(text: &str) -> Option<i64> {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, text),
    };
    if digits.len() > 18 {
        return None;
    }
    let magnitude = digits.bytes().fold(0i64, |acc, b| acc * 10 + i64::from(b - b'0'));
    Some(if negative { -magnitude } else { magnitude })
}

/// Exact powers of ten as doubles.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20,
    1e21, 1e22,
];

/// A decimal with at most 15 significant digits and a small exponent (most
/// numbers models write: `19.99`, `0.25`, `1.5e3`): the digits and the
/// power of ten are both exact doubles, so one multiplication or division
/// rounds correctly (Clinger's fast path). Anything else goes to the
/// standard library's parser. `text` is already known to be a JSON number.
#[inline]
fn short_decimal(text: &str) -> Option<Number> {
    let (negative, body) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (digits_part, exponent) = match body.find(['e', 'E']) {
        Some(at) => (body.get(..at)?, body.get(at + 1..)?.parse::<i32>().ok()?),
        None => (body, 0),
    };
    let mut mantissa: u64 = 0;
    let mut significant = 0;
    let mut scale: i32 = 0;
    let mut after_point = false;
    for b in digits_part.bytes() {
        if b == b'.' {
            after_point = true;
            continue;
        }
        if mantissa != 0 || b != b'0' {
            significant += 1;
        }
        if significant > 15 {
            return None;
        }
        mantissa = mantissa * 10 + u64::from(b - b'0');
        scale -= i32::from(after_point);
    }
    let power = exponent.checked_add(scale)?;
    let magnitude = mantissa as f64;
    let value = if power >= 0 {
        magnitude * POW10.get(usize::try_from(power).ok()?)?
    } else {
        magnitude / POW10.get(usize::try_from(-power).ok()?)?
    };
    Number::from_f64(if negative { -value } else { value })
}

/// An integer that fits 64 bits, and its nearest double.
fn big_integer(text: &str) -> Option<(Number, f64)> {
    text.parse::<i64>()
        .map(|i| (Number::from(i), i as f64))
        .or_else(|_| text.parse::<u64>().map(|u| (Number::from(u), u as f64)))
        .ok()
}

/// Integers every double holds exactly.
pub(crate) const SAFE_INTEGER: i64 = (1 << 53) - 1;

/// The end of the run of string bytes that need no attention (no quote,
/// backslash or control character) starting at `pos`. Eight bytes at a time
/// (SWAR): most strings in replies are plain text.
#[inline]
pub(crate) fn plain_run_end(bytes: &[u8], pos: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let rest = bytes.get(pos..).unwrap_or_default();
    let mut chunks = rest.chunks_exact(8);
    let mut offset = pos;
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let w = u64::from_le_bytes(word);
        let quote = w ^ (ONES * u64::from(b'"'));
        let backslash = w ^ (ONES * u64::from(b'\\'));
        // A byte is zero (a match) or below 0x20 (a control character). A
        // borrow can only mark bytes above a real hit, so the lowest mark is exact.
        let hit = ((quote.wrapping_sub(ONES) & !quote)
            | (backslash.wrapping_sub(ONES) & !backslash)
            | (w.wrapping_sub(ONES * 0x20) & !w))
            & HIGHS;
        if hit != 0 {
            return offset + (hit.trailing_zeros() / 8) as usize;
        }
        offset += 8;
    }
    offset
        + chunks
            .remainder()
            .iter()
            .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
            .unwrap_or(chunks.remainder().len())
}

/// Past the white space from `pos`.
#[inline]
pub(crate) fn skip_ws(bytes: &[u8], mut pos: usize) -> usize {
    // Most runs are one space, or a line break and an indentation: the
    // spaces after a space or a line break are counted eight at a time.
    loop {
        match bytes.get(pos) {
            Some(&b) if is_ws(b) => pos += 1,
            _ => return pos,
        }
        while let Some(word) = bytes.get(pos..pos + 8).and_then(|w| <[u8; 8]>::try_from(w).ok()) {
            // A zero byte for each space: the first other byte ends the run.
            let others = u64::from_le_bytes(word) ^ u64::from_le_bytes([b' '; 8]);
            if others != 0 {
                pos += (others.trailing_zeros() / 8) as usize;
                break;
            }
            pos += 8;
        }
    }
}

pub(crate) fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

impl<'a> Parser<'a> {
    /// A reader of single scalars and strings from `text[pos..]`, for the
    /// schema-directed pass (which keeps its own containers).
    pub(crate) fn at(text: &'a str, pos: usize, integers: Integers) -> Self {
        Parser { bytes: text.as_bytes(), text, pos, max_depth: 0, stack: Vec::new(), integers }
    }

    pub(crate) fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    #[inline]
    pub(crate) fn skip_ws(&mut self) {
        self.pos = skip_ws(self.bytes, self.pos);
    }

    /// The error the whole-value reader gives where `what` was expected
    /// (for the schema-directed pass, which reads the same grammar).
    pub(crate) fn expected(&self, what: &str) -> ReadError {
        self.eof_or(what)
    }

    /// The error the whole-value reader gives for a container opening past `max_depth`.
    pub(crate) fn too_deep(&self, max_depth: usize) -> ReadError {
        self.err(ProblemCode::TooDeep, format!("the reply nests deeper than {max_depth} levels"))
    }

    /// The error the whole-value reader gives for text after the value.
    pub(crate) fn trailing(&self) -> ReadError {
        self.err(ProblemCode::TrailingText, "text after the JSON value")
    }

    fn err(&self, code: ProblemCode, detail: impl Into<String>) -> ReadError {
        ReadError { code, offset: self.pos, path: String::new(), detail: detail.into() }
    }

    /// End of input where more was required: the reply was cut off.
    fn eof_or(&self, detail: &str) -> ReadError {
        if self.pos >= self.bytes.len() {
            self.err(ProblemCode::Truncated, "the reply ends in the middle of a value")
        } else {
            let found = self.text.get(self.pos..).and_then(|s| s.chars().next()).unwrap_or('?');
            self.err(ProblemCode::NotJson, format!("{detail}, found {found:?}"))
        }
    }

    /// JSON Pointer of the value being read, from the open containers.
    fn path(&self) -> String {
        let mut out = String::new();
        for frame in &self.stack {
            out.push('/');
            match frame {
                Frame::Array(items) => out.push_str(&items.len().to_string()),
                Frame::Object(_, key) => crate::pointer::push_escaped(&mut out, key),
            }
        }
        out
    }

    fn value(&mut self) -> Result<Value, ReadError> {
        loop {
            // Read one scalar or open a container.
            self.skip_ws();
            let mut current = match self.peek() {
                None => return Err(self.eof_or("expected a value")),
                Some(b'[') => {
                    self.open()?;
                    self.pos += 1;
                    self.skip_ws();
                    if self.peek() == Some(b']') {
                        self.pos += 1;
                        Value::Array(Vec::new())
                    } else {
                        self.stack.push(Frame::Array(Vec::new()));
                        continue;
                    }
                }
                Some(b'{') => {
                    self.open()?;
                    self.pos += 1;
                    self.skip_ws();
                    match self.peek() {
                        Some(b'}') => {
                            self.pos += 1;
                            Value::Object(Map::new())
                        }
                        _ => {
                            let key = self.key()?;
                            self.stack.push(Frame::Object(Map::new(), key));
                            continue;
                        }
                    }
                }
                Some(_) => self.scalar()?,
            };
            // Close every container the value completes.
            loop {
                self.skip_ws();
                let next = self.peek();
                match self.stack.last_mut() {
                    None => return Ok(current),
                    Some(Frame::Array(items)) => {
                        items.push(current);
                        match next {
                            Some(b',') => {
                                self.pos += 1;
                                break;
                            }
                            Some(b']') => {
                                self.pos += 1;
                                current = match self.stack.pop() {
                                    Some(Frame::Array(items)) => Value::Array(items),
                                    _ => Value::Null, // unreachable: the top frame is this array
                                };
                            }
                            _ => return Err(self.eof_or(IN_ARRAY)),
                        }
                    }
                    Some(Frame::Object(map, key)) => {
                        // One hash per member: the entry both detects a repeat and inserts.
                        match map.entry(std::mem::take(key)) {
                            serde_json::map::Entry::Vacant(slot) => {
                                slot.insert(current);
                            }
                            serde_json::map::Entry::Occupied(seen) => {
                                let key = seen.key().clone();
                                if let Some(Frame::Object(_, k)) = self.stack.last_mut() {
                                    *k = key;
                                }
                                return Err(self.duplicate());
                            }
                        }
                        match next {
                            Some(b',') => {
                                self.pos += 1;
                                self.skip_ws();
                                let key = self.key()?;
                                if let Some(Frame::Object(_, k)) = self.stack.last_mut() {
                                    *k = key;
                                }
                                break;
                            }
                            Some(b'}') => {
                                self.pos += 1;
                                current = match self.stack.pop() {
                                    Some(Frame::Object(map, _)) => Value::Object(map),
                                    _ => Value::Null, // unreachable: the top frame is this object
                                };
                            }
                            _ => return Err(self.eof_or(IN_OBJECT)),
                        }
                    }
                }
            }
        }
    }

    fn duplicate(&self) -> ReadError {
        let key = match self.stack.last() {
            Some(Frame::Object(_, key)) => key.as_str(),
            _ => "",
        };
        ReadError {
            code: ProblemCode::DuplicateKey,
            offset: self.pos,
            path: self.path(),
            detail: format!("the key {key:?} appears twice in one object"),
        }
    }

    /// Account for one more open container.
    fn open(&self) -> Result<(), ReadError> {
        if self.stack.len() >= self.max_depth {
            return Err(self.too_deep(self.max_depth));
        }
        Ok(())
    }

    /// An object key and its colon; white space before the key already skipped.
    fn key(&mut self) -> Result<String, ReadError> {
        if self.peek() != Some(b'"') {
            return Err(self.eof_or(KEY));
        }
        let key = self.string()?;
        self.skip_ws();
        if self.peek() != Some(b':') {
            return Err(self.eof_or(COLON));
        }
        self.pos += 1;
        Ok(key)
    }

    pub(crate) fn scalar(&mut self) -> Result<Value, ReadError> {
        self.scalar_ref().map(Scalar::into_value)
    }

    /// A scalar, its string (if any) borrowed from the text where it can be.
    pub(crate) fn scalar_ref(&mut self) -> Result<Scalar<'a>, ReadError> {
        match self.peek() {
            Some(b'"') => Ok(Scalar::String(self.string_cow()?)),
            Some(b't') => self.literal("true", Scalar::Bool(true)),
            Some(b'f') => self.literal("false", Scalar::Bool(false)),
            Some(b'n') => self.literal("null", Scalar::Null),
            Some(b'-' | b'0'..=b'9') => self.number().map(Scalar::Number),
            _ => Err(self.eof_or("expected a value")),
        }
    }

    fn literal<T>(&mut self, word: &str, value: T) -> Result<T, ReadError> {
        for &expected in word.as_bytes() {
            match self.peek() {
                Some(b) if b == expected => self.pos += 1,
                _ => return Err(self.eof_or(&format!("expected `{word}`"))),
            }
        }
        Ok(value)
    }

    fn digits(&mut self) -> usize {
        let start = self.pos;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.pos += 1;
        }
        self.pos - start
    }

    fn number(&mut self) -> Result<Number, ReadError> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => {
                self.pos += 1;
                if self.peek().is_some_and(|b| b.is_ascii_digit()) {
                    return Err(self.err(ProblemCode::NotJson, "a number may not have a leading zero"));
                }
            }
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(self.eof_or("expected a digit")),
        }
        let mut integer = true;
        if self.peek() == Some(b'.') {
            integer = false;
            self.pos += 1;
            if self.digits() == 0 {
                return Err(self.eof_or("expected a digit after '.'"));
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            integer = false;
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if self.digits() == 0 {
                return Err(self.eof_or("expected a digit in the exponent"));
            }
        }
        let text = self.text.get(start..self.pos).unwrap_or_default();
        let wide = self.integers != Integers::AsDoubles;
        if integer {
            if let Some(i) = small_integer(text) {
                // Within ±(2^53−1) every reader holds it exactly.
                if (-SAFE_INTEGER..=SAFE_INTEGER).contains(&i) || wide || faithful_integer(text, i as f64) {
                    return Ok(Number::from(i));
                }
                return Err(self.imprecise(start, text, i as f64));
            }
            if let Some((n, f)) = big_integer(text) {
                if wide || faithful_integer(text, f) {
                    return Ok(n);
                }
                return Err(self.imprecise(start, text, f));
            }
        } else if let Some(n) = short_decimal(text) {
            // At most 15 significant digits, in a double's normal range: every reader reads it alike.
            return Ok(n);
        }
        // Rust's float parser is correctly rounded; it yields infinity on
        // overflow, which JSON cannot carry and a consumer would read differently.
        let read = text.parse::<f64>().ok().filter(|f| f.is_finite());
        // An integer beyond 64 bits is read as a double only where the double
        // is that very integer (Python and BigInt readers hold the digits):
        // printing alike is not enough (`18446744073709552000` is 2^64 + 384,
        // held by a double as 2^64).
        let holds = |f: f64| if integer { faithful_integer(text, f) } else { faithful(text, f) };
        match read.and_then(|f| Number::from_f64(f).map(|n| (n, f))) {
            Some((n, f)) if holds(f) => Ok(n),
            Some((_, f)) => Err(self.imprecise(start, text, f)),
            None => Err(ReadError {
                code: ProblemCode::NumberOverflow,
                offset: start,
                path: self.path(),
                detail: format!("the number {} is too large to represent", crate::problem::excerpt_text(text)),
            }),
        }
    }

    /// A number readers would read as different values: refused.
    #[cold]
    fn imprecise(&self, start: usize, text: &str, read: f64) -> ReadError {
        let shown = crate::problem::excerpt_text(text);
        let as_double = crate::decimal::Decimal::of_double(read).shown();
        let detail = if read == 0.0 {
            format!("the number {shown} is too small for a double: JavaScript and most other readers read 0")
        } else if !text.contains(['.', 'e', 'E']) {
            format!(
                "the integer {shown} is beyond what a double holds exactly: JavaScript and most other readers read \
                 {as_double} (a contract whose readers hold 64-bit integers allows them with \"allow\": [\"big_integers\"])"
            )
        } else {
            format!(
                "the number {shown} has more digits than a double holds: JavaScript and most other readers read {as_double}"
            )
        };
        ReadError { code: ProblemCode::ImpreciseNumber, offset: start, path: self.path(), detail }
    }

    /// The error the whole-value reader gives where neither `,` nor `close` stands.
    #[cold]
    pub(crate) fn not_another(&self, close: u8) -> ReadError {
        self.eof_or(if close == b'}' { IN_OBJECT } else { IN_ARRAY })
    }

    /// One whole value from `pos`, within `max_depth` more levels, read as
    /// [`read_value`] reads it; the reader is left just past it.
    pub(crate) fn whole(&mut self, max_depth: usize) -> Result<Value, ReadError> {
        let (v, end) = read_value(self.text, self.pos, max_depth, false, self.integers)?;
        self.pos = end;
        Ok(v)
    }

    /// A string, the opening quote at `pos`.
    pub(crate) fn string(&mut self) -> Result<String, ReadError> {
        self.string_cow().map(Cow::into_owned)
    }

    /// A string, the opening quote at `pos`: borrowed from the text when it
    /// holds no escape (the common case: no allocation at all).
    /// The string at `pos` (its opening quote) when it holds no escape and
    /// closes: its content, borrowed, and the reader past it. Else `None`,
    /// the reader where it was ([`Self::string_cow`] reads it, or says why
    /// not). Returned in two registers: the hot path of a reply's strings.
    #[inline]
    pub(crate) fn plain_string(&mut self) -> Option<&'a str> {
        let from = self.pos + 1;
        let end = plain_run_end(self.bytes, from);
        if self.bytes.get(end) != Some(&b'"') {
            return None;
        }
        let text: &'a str = self.text;
        let run = text.get(from..end)?;
        self.pos = end + 1;
        Some(run)
    }

    /// The string at `pos` (its opening quote) read as [`Self::string_cow`]
    /// reads it, to the same errors, where only whether it reads matters:
    /// its escapes are checked, not written out.
    pub(crate) fn skip_string(&mut self) -> Result<(), ReadError> {
        self.pos += 1;
        loop {
            self.pos = plain_run_end(self.bytes, self.pos);
            match self.peek() {
                None => return Err(self.eof_or("unterminated string")),
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(());
                }
                Some(b'\\') => {
                    self.pos += 1;
                    self.escape(None)?;
                }
                Some(_) => {
                    return Err(self.err(ProblemCode::NotJson, "a control character must be escaped in a string"));
                }
            }
        }
    }

    pub(crate) fn string_cow(&mut self) -> Result<Cow<'a, str>, ReadError> {
        self.string_cow_sized(|first_run| 2 * first_run + 16)
    }

    /// [`Self::string_cow`], the content of a string with an escape first
    /// given the room `capacity` says for the length of its first run.
    #[inline]
    fn string_cow_sized(&mut self, capacity: impl Fn(usize) -> usize) -> Result<Cow<'a, str>, ReadError> {
        self.pos += 1;
        let run_start = self.pos;
        self.pos = plain_run_end(self.bytes, self.pos);
        if self.peek() == Some(b'"') {
            let run = self.run(run_start)?;
            self.pos += 1;
            return Ok(Cow::Borrowed(run));
        }
        // An escape (or the end): the content written out. A string with one
        // escape mostly has many (JSON inside a string escapes every quote),
        // so the one-letter escapes are taken on the spot. The runs between
        // escapes end at an ASCII byte, so each is a `&str` of the text as it
        // stands: the content is built as UTF-8 without checking it again.
        let mut out = String::with_capacity(capacity(self.pos - run_start));
        out.push_str(self.run(run_start)?);
        loop {
            match self.peek() {
                None => return Err(self.eof_or("unterminated string")),
                Some(b'"') => {
                    self.pos += 1;
                    break;
                }
                Some(b'\\') => {
                    let simple = match self.bytes.get(self.pos + 1) {
                        Some(b'"') => Some('"'),
                        Some(b'\\') => Some('\\'),
                        Some(b'/') => Some('/'),
                        Some(b'b') => Some('\u{8}'),
                        Some(b'f') => Some('\u{c}'),
                        Some(b'n') => Some('\n'),
                        Some(b'r') => Some('\r'),
                        Some(b't') => Some('\t'),
                        _ => None,
                    };
                    if let Some(c) = simple {
                        out.push(c);
                        self.pos += 2;
                    } else {
                        // `\u` (or a bad escape): read as ever, to its very errors.
                        self.pos += 1;
                        self.escape(Some(&mut out))?;
                    }
                }
                Some(b) if b < 0x20 => {
                    return Err(self.err(ProblemCode::NotJson, "a control character must be escaped in a string"));
                }
                Some(_) => {
                    let from = self.pos;
                    self.pos = plain_run_end(self.bytes, from);
                    out.push_str(self.run(from)?);
                }
            }
        }
        Ok(Cow::Owned(out))
    }

    /// The text from `from` to the position: a run of a string's content.
    /// Both ends are at a character's boundary (the start of the content or
    /// an ASCII byte): a slice that were not would be refused, never dropped.
    fn run(&self, from: usize) -> Result<&'a str, ReadError> {
        let text: &'a str = self.text;
        text.get(from..self.pos).ok_or_else(|| self.err(ProblemCode::NotJson, "not JSON: invalid UTF-8 in a string"))
    }

    /// The escape after a backslash, written to `out` (none: only checked).
    fn escape(&mut self, out: Option<&mut String>) -> Result<(), ReadError> {
        let c = match self.peek() {
            None => return Err(self.eof_or("unterminated escape")),
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'u') => {
                self.pos += 1;
                let first = self.hex4()?;
                let c = if (0xD800..0xDC00).contains(&first) {
                    // A high surrogate must be followed by an escaped low one.
                    let rest = self.bytes.get(self.pos..).unwrap_or_default();
                    if !rest.starts_with(b"\\u") {
                        if b"\\u".starts_with(rest) {
                            self.pos = self.bytes.len();
                            return Err(self.eof_or(""));
                        }
                        return Err(self.err(ProblemCode::NotJson, "a lone surrogate escape is not a character"));
                    }
                    self.pos += 2;
                    let second = self.hex4()?;
                    if !(0xDC00..0xE000).contains(&second) {
                        return Err(self.err(ProblemCode::NotJson, "a lone surrogate escape is not a character"));
                    }
                    char::from_u32(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00))
                } else {
                    char::from_u32(first)
                };
                match c {
                    Some(c) => {
                        if let Some(out) = out {
                            out.push(c);
                        }
                        return Ok(());
                    }
                    None => return Err(self.err(ProblemCode::NotJson, "a lone surrogate escape is not a character")),
                }
            }
            Some(_) => return Err(self.err(ProblemCode::NotJson, "invalid escape in a string")),
        };
        self.pos += 1;
        if let Some(out) = out {
            out.push(c);
        }
        Ok(())
    }

    fn hex4(&mut self) -> Result<u32, ReadError> {
        let mut v = 0u32;
        for _ in 0..4 {
            let d = match self.peek() {
                Some(b) => char::from(b).to_digit(16),
                None => return Err(self.eof_or("")),
            };
            match d {
                Some(d) => v = v * 16 + d,
                None => return Err(self.err(ProblemCode::NotJson, "expected four hex digits after \\u")),
            }
            self.pos += 1;
        }
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::short_decimal;

    /// The fast path gives the very double the standard library's correctly
    /// rounded parser gives, or stands aside.
    #[test]
    fn short_decimals_round_like_the_standard_parser() {
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut taken = 0;
        for _ in 0..200_000 {
            let r = next();
            let int = r % 10u64.pow((r >> 60) as u32 % 10);
            let frac_len = (r >> 40) as usize % 12;
            let frac: String = (0..frac_len).map(|i| char::from(b'0' + ((r >> (i * 3)) % 10) as u8)).collect();
            let mut text = if r & 1 == 1 { format!("-{int}") } else { int.to_string() };
            if !frac.is_empty() {
                text = format!("{text}.{frac}");
            }
            if r & 2 == 2 {
                text = format!("{text}e{}", ((r >> 20) % 60) as i64 - 30);
            }
            let expected: f64 = text.parse().unwrap_or(f64::NAN);
            if let Some(n) = short_decimal(&text) {
                taken += 1;
                assert_eq!(n.as_f64().map(f64::to_bits), Some(expected.to_bits()), "{text}");
            }
        }
        assert!(taken > 100_000, "the fast path took only {taken}");
        for (text, bits) in [("-0.0", (-0.0f64).to_bits()), ("0.1", 0.1f64.to_bits()), ("1e22", 1e22f64.to_bits())] {
            assert_eq!(short_decimal(text).and_then(|n| n.as_f64()).map(f64::to_bits), Some(bits), "{text}");
        }
        assert!(short_decimal("1e23").is_none());
        assert!(short_decimal("1.2345678901234567").is_none());
    }

    proptest::proptest! {
        /// A string's content, however it is escaped (as written, every
        /// character as `\u` escapes, or a mix with runs of any script
        /// between escapes), is read back as the very characters, as
        /// serde_json reads it.
        #[test]
        fn strings_read_back_as_written_however_escaped(s in "\\PC{0,40}|[\\x00-\\x7f\u{e9}\u{4e2d}\u{1f600}\"\\\\]{0,40}", every in 0usize..4) {
            let plain = serde_json::to_string(&s).unwrap_or_default();
            let mut escaped = String::from("\"");
            for (i, c) in s.chars().enumerate() {
                if every > 0 && i % every == 0 {
                    let mut units = [0u16; 2];
                    for u in c.encode_utf16(&mut units) {
                        escaped.push_str(&format!("\\u{u:04x}"));
                    }
                } else {
                    let one = serde_json::to_string(&c.to_string()).unwrap_or_default();
                    escaped.push_str(one.get(1..one.len() - 1).unwrap_or_default());
                }
            }
            escaped.push('"');
            for text in [plain, escaped] {
                let ours = crate::read_json(&text, 8).map_err(|e| e.message);
                let theirs: Result<serde_json::Value, _> = serde_json::from_str(&text);
                proptest::prop_assert_eq!(ours, theirs.map_err(|e| e.to_string()), "{}", text);
            }
        }
    }
}
