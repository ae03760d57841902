//! Why a reply is refused, and what was done to it: a [`Problem`] (with
//! its stable [`ProblemCode`] and [`ProblemClass`], and where in the text a
//! reading problem stands, [`Position`]), a [`Repair`], a gate [`Finding`];
//! and the bounded excerpts every one of them quotes the reply with.
//!
//! The lowest layer: the reader, the checker and the verdict all speak it.

use serde::Serialize;
use serde_json::Value;

/// Who is at fault when a reply is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ProblemClass {
    /// The model did not answer: the reply was unreadable, or a field was
    /// missing, null where not allowed, or of the wrong JSON type.
    NoAnswer,
    /// The model answered in the right type, but outside the declared domain
    /// (a value not in the enum, a number out of range, a string too long…).
    BadAnswer,
}

impl ProblemClass {
    /// The stable snake_case name.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::NoAnswer => "no_answer",
            Self::BadAnswer => "bad_answer",
        }
    }
}

/// A stable, documented reason for refusing a reply (see docs/problems.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ProblemCode {
    /// The reply was empty or only white space.
    EmptyReply,
    /// The reply is not strict JSON (RFC 8259), or not UTF-8.
    NotJson,
    /// The reply ends in the middle of a value: it was cut off.
    Truncated,
    /// Something other than white space follows the JSON value.
    TrailingText,
    /// An object repeats a key (after unescaping).
    DuplicateKey,
    /// The reply nests deeper than the contract's limit.
    TooDeep,
    /// The reply is larger than the contract's limit.
    TooLarge,
    /// A number is too large for a double (`1e400`).
    NumberOverflow,
    /// A number readers would read as different values: more digits than a
    /// double holds (`0.30000000000000001`), too small for one (`1e-400`),
    /// an integer beyond ±(2^53−1) that a double does not hold exactly
    /// (unless the contract allows `big_integers`).
    ImpreciseNumber,
    /// More than one JSON value was found in the surrounding text.
    AmbiguousReply,
    /// A required property is absent.
    Missing,
    /// The value has the wrong JSON type (including `null`).
    WrongType,
    /// The value is not one the contract allows (`enum`, `const`).
    NotAllowed,
    /// A number is outside `minimum`/`maximum` or not a `multipleOf`.
    OutOfRange,
    /// A string, array or object is shorter than its minimum.
    TooShort,
    /// A string, array or object is longer than its maximum.
    TooLong,
    /// A string does not match `pattern`.
    PatternMismatch,
    /// A string does not match its `format`.
    FormatMismatch,
    /// A property the contract does not allow.
    UnexpectedProperty,
    /// Array items that must be unique are not.
    NotUnique,
    /// A combination (`anyOf`, `oneOf`, `not`, `if`/`then`/`else`,
    /// `contains`/`minContains`/`maxContains`) does not hold.
    NoMatch,
    /// The contract's repairs do not settle on this reply: repairing the
    /// repaired value changes it again (repairs on two nodes that undo each
    /// other). A contract mistake this reply exposed; the value is not used.
    RepairsUnsettled,
    /// The reply needs more repairs than the contract's `max_repairs`
    /// limit allows: the model answered, but the answer needs more mending
    /// than cosmetic repairs are for. The repairer stops at the cap.
    TooManyRepairs,
    /// Checking the value took more steps than the bound on a check: the
    /// contract's combinators (`anyOf`, `allOf`, `oneOf`, `not`, `if`,
    /// `$ref`) branch over and over on it (a chain of `anyOf`s of the same
    /// `$ref`s doubles the work at each link). The check stops there and
    /// the value is not vouched for.
    TooComplex,
}

impl ProblemCode {
    /// The stable snake_case name.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::EmptyReply => "empty_reply",
            Self::NotJson => "not_json",
            Self::Truncated => "truncated",
            Self::TrailingText => "trailing_text",
            Self::DuplicateKey => "duplicate_key",
            Self::TooDeep => "too_deep",
            Self::TooLarge => "too_large",
            Self::NumberOverflow => "number_overflow",
            Self::ImpreciseNumber => "imprecise_number",
            Self::AmbiguousReply => "ambiguous_reply",
            Self::Missing => "missing",
            Self::WrongType => "wrong_type",
            Self::NotAllowed => "not_allowed",
            Self::OutOfRange => "out_of_range",
            Self::TooShort => "too_short",
            Self::TooLong => "too_long",
            Self::PatternMismatch => "pattern_mismatch",
            Self::FormatMismatch => "format_mismatch",
            Self::UnexpectedProperty => "unexpected_property",
            Self::NotUnique => "not_unique",
            Self::NoMatch => "no_match",
            Self::RepairsUnsettled => "repairs_unsettled",
            Self::TooManyRepairs => "too_many_repairs",
            Self::TooComplex => "too_complex",
        }
    }

    /// The class a problem with this code belongs to.
    #[must_use]
    pub fn class(self) -> ProblemClass {
        match self {
            Self::EmptyReply
            | Self::NotJson
            | Self::Truncated
            | Self::TrailingText
            | Self::DuplicateKey
            | Self::TooDeep
            | Self::TooLarge
            | Self::NumberOverflow
            | Self::ImpreciseNumber
            | Self::AmbiguousReply
            | Self::TooComplex
            | Self::Missing
            | Self::WrongType => ProblemClass::NoAnswer,
            Self::NotAllowed
            | Self::OutOfRange
            | Self::TooShort
            | Self::TooLong
            | Self::PatternMismatch
            | Self::FormatMismatch
            | Self::UnexpectedProperty
            | Self::NotUnique
            | Self::NoMatch
            | Self::RepairsUnsettled
            | Self::TooManyRepairs => ProblemClass::BadAnswer,
        }
    }
}

impl std::fmt::Display for ProblemCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where in the raw reply text a reading problem was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Position {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    /// 0-based byte offset.
    pub offset: usize,
}

/// One reason a reply was refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// Stable code, e.g. `not_allowed`.
    pub code: ProblemCode,
    /// `no_answer` or `bad_answer`.
    pub class: ProblemClass,
    /// RFC 6901 JSON Pointer into the reply (`""` is the whole reply).
    pub path: String,
    /// What the contract expected, in words.
    pub expected: String,
    /// A short, bounded excerpt of what the reply had.
    pub got: String,
    /// A sentence a person can read, starting with the path.
    pub message: String,
    /// Where in the raw text, for problems found while reading it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub position: Option<Position>,
}

impl Problem {
    /// A problem at `path` with its message written whole (it starts with
    /// the path as shown: `(root)` or the pointer, then `: `).
    pub(crate) fn with_message(code: ProblemCode, path: &str, expected: String, got: String, message: String) -> Self {
        Self { code, class: code.class(), message, path: path.to_owned(), expected, got, position: None }
    }

    /// A problem at `path`; the message is built from the parts.
    #[must_use]
    pub fn new(code: ProblemCode, path: &str, expected: String, got: String, sentence: &str) -> Self {
        let shown = display_path(path);
        let mut message = String::with_capacity(shown.len() + 2 + sentence.len());
        message.push_str(shown);
        message.push_str(": ");
        message.push_str(sentence);
        Self::with_message(code, path, expected, got, message)
    }
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "[{}] {}", self.code, self.message)
    }
}

/// A change a declared repair rule made to the reply.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Repair {
    /// JSON Pointer of the repaired value.
    pub path: String,
    /// The rule that made the change (`coerce`, `clamp`, `default`, …).
    pub rule: String,
    /// The value before (bounded excerpt for long values).
    pub before: Value,
    /// The value after (bounded excerpt for long values).
    pub after: Value,
    /// A sentence, e.g. `/matchScore: "80" coerced to 80`.
    pub message: String,
}

/// A gate finding: the model answered, and its answer is a real problem.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// JSON Pointer of the value the finding is about.
    pub path: String,
    /// The contract's message, e.g. "a product is still in frame".
    pub message: String,
}

/// The path as shown in messages: `(root)` for the whole reply.
#[must_use]
pub(crate) fn display_path(path: &str) -> &str {
    if path.is_empty() {
        "(root)"
    } else {
        path
    }
}

/// Longest excerpt of a reply value kept in a problem or repair, in characters.
pub(crate) const EXCERPT_CHARS: usize = 80;

/// A short excerpt of a value, compact JSON, at most [`EXCERPT_CHARS`] characters.
#[must_use]
pub(crate) fn excerpt(value: &Value) -> String {
    match value {
        // Scalars are short: no writer needed (the refusal path builds several).
        Value::Null => return "null".to_owned(),
        Value::Bool(b) => return b.to_string(),
        Value::Number(n) => return crate::write::number(n),
        // A short string that needs no escape is itself between quotes.
        Value::String(s) if s.len() + 2 <= EXCERPT_CHARS && s.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') => {
            let mut out = String::with_capacity(s.len() + 2);
            out.push('"');
            out.push_str(s);
            out.push('"');
            return out;
        }
        _ => {}
    }
    // Serialize into a bounded writer so a huge value costs no more than the
    // excerpt; its room taken at once (the writer is fed in small pieces, and
    // growing the string as they came was about a third of an excerpt's cost).
    let mut w = BoundedWriter { buf: String::with_capacity(EXCERPT_CHARS + '…'.len_utf8()), chars: 0, full: false };
    let _ = crate::write::write_into(&mut w, value);
    if w.full {
        w.buf.push('…');
    }
    w.buf
}

/// A bounded excerpt of raw text.
#[must_use]
pub(crate) fn excerpt_text(text: &str) -> String {
    // Bytes bound characters: a short text is its own excerpt.
    if text.len() <= EXCERPT_CHARS {
        return text.to_owned();
    }
    match text.char_indices().nth(EXCERPT_CHARS) {
        Some((cut, _)) => {
            let mut out = String::with_capacity(cut + '…'.len_utf8());
            out.push_str(text.get(..cut).unwrap_or_default());
            out.push('…');
            out
        }
        None => text.to_owned(),
    }
}

struct BoundedWriter {
    buf: String,
    chars: usize,
    full: bool,
}

impl std::io::Write for BoundedWriter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        if self.full {
            return Err(std::io::Error::other("excerpt full"));
        }
        let text = String::from_utf8_lossy(bytes);
        // The common case, a piece that fits whole (its bytes bound its
        // characters): one copy, characters counted only once it may not fit.
        if text.len() + self.buf.len() <= EXCERPT_CHARS {
            self.buf.push_str(&text);
            return Ok(bytes.len());
        }
        if self.chars < self.buf.len() {
            self.chars = self.buf.chars().count();
        }
        for ch in text.chars() {
            if self.chars >= EXCERPT_CHARS {
                self.full = true;
                return Err(std::io::Error::other("excerpt full"));
            }
            self.buf.push(ch);
            self.chars += 1;
        }
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A bounded copy of a value for the repair log: the value itself when its
/// excerpt is short, else the excerpt as a string.
#[must_use]
pub(crate) fn bounded(value: &Value) -> Value {
    bounded_as(value, &excerpt(value))
}

/// [`bounded`], given the value's excerpt (`shown`).
#[must_use]
pub(crate) fn bounded_as(value: &Value, shown: &str) -> Value {
    if shown.ends_with('…') {
        Value::String(shown.to_owned())
    } else {
        value.clone()
    }
}

/// [`bounded`] of an array of these items, without building the array:
/// the log of a repair that changed a long array costs its excerpt only.
#[must_use]
pub(crate) fn bounded_items(items: &[Value]) -> Value {
    let mut w = BoundedWriter { buf: String::new(), chars: 0, full: false };
    let _ = crate::write::write_into(&mut w, items);
    if w.full {
        w.buf.push('…');
        Value::String(w.buf)
    } else {
        Value::Array(items.to_vec())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_excerpts_cut_at_a_character() {
        assert_eq!(excerpt_text("short"), "short");
        let exact = "é".repeat(EXCERPT_CHARS);
        assert_eq!(excerpt_text(&exact), exact);
        let long = format!("{exact}x");
        assert_eq!(excerpt_text(&long), format!("{exact}…"));
        assert_eq!(excerpt_text(&"a".repeat(81)), format!("{}…", "a".repeat(80)));
    }

    #[test]
    fn excerpt_is_bounded() {
        let long = Value::String("x".repeat(10_000));
        let ex = excerpt(&long);
        assert_eq!(ex.chars().count(), EXCERPT_CHARS + 1);
        assert!(ex.ends_with('…'));
        assert_eq!(excerpt(&json!({"a": 1})), r#"{"a":1}"#);
    }

    #[test]
    fn codes_have_their_documented_class() {
        assert_eq!(ProblemCode::Missing.class(), ProblemClass::NoAnswer);
        assert_eq!(ProblemCode::WrongType.class(), ProblemClass::NoAnswer);
        assert_eq!(ProblemCode::NotAllowed.class(), ProblemClass::BadAnswer);
        assert_eq!(serde_json::to_value(ProblemCode::NotJson).ok(), Some(json!("not_json")));
    }
}
