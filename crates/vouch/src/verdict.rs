//! What a check returns: a [`Verdict`] that either vouches for a value or
//! refuses it with every [`Problem`] found.
//!
//! The JSON shape (see [`Verdict::to_json`]) is the one the command line, the
//! model client and any server share:
//! `{"outcome", "pass", "value", "repairs", "findings", "problems"}`.

use std::borrow::Cow;
use std::sync::OnceLock;

use serde::Serialize;
use serde_json::{json, Value};

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

/// A reply vouch vouches for.
///
/// A reply accepted as it was sent is kept as its text (with any default
/// filled in written into it): checking it built no tree, and its [`Value`]
/// is read from that text the first time [`Accepted::value`] asks (once;
/// later calls borrow it). Callers that forward the JSON take
/// [`Accepted::json`] and never pay for a tree. A reply repaired otherwise
/// or unwrapped carries its built value.
///
/// ```
/// let contract = vouch::Contract::from_json_str(
///     r#"{"type": "object", "properties": {"score": {"type": "integer"}}, "required": ["score"]}"#,
/// )?;
/// let vouch::Verdict::Accepted(accepted) = contract.check(r#"{"score": 80}"#) else { panic!("refused") };
/// assert_eq!(accepted.json(), r#"{"score": 80}"#);
/// assert_eq!(accepted.value()["score"], 80);
/// # Ok::<(), vouch::CompileError>(())
/// ```
#[derive(Clone)]
pub struct Accepted {
    body: Body,
    /// Every change a declared repair made, in order.
    pub repairs: Vec<Repair>,
    /// Gate findings on the accepted value.
    pub findings: Vec<Finding>,
}

#[derive(Clone)]
enum Body {
    /// Accepted as sent: the reply's JSON, its value read on first ask, and
    /// whether the text may be handed on as it stands (see [`Accepted::json`]).
    // The value boxed: a verdict stays small (it is returned by value), and
    // the box is made only when asked for.
    Text { json: Box<str>, max_depth: usize, value: OnceLock<Box<Value>>, verbatim: bool },
    /// Built: repaired, unwrapped, filled, or checked as a value.
    Value(Value),
}

impl Accepted {
    /// A reply accepted exactly as sent (strict JSON, read within `max_depth`).
    pub(crate) fn as_sent(json: &str, max_depth: usize, verbatim: bool) -> Self {
        let json = json.trim_matches(is_json_ws).into();
        let body = Body::Text { json, max_depth, value: OnceLock::new(), verbatim };
        Self { body, repairs: Vec::new(), findings: Vec::new() }
    }

    /// A reply accepted as sent but for defaults written into its text
    /// (`max_depth`: how deep that text may nest, the defaults included).
    pub(crate) fn as_filled(json: String, max_depth: usize, repairs: Vec<Repair>, verbatim: bool) -> Self {
        let json = json.trim_matches(is_json_ws).into();
        let body = Body::Text { json, max_depth, value: OnceLock::new(), verbatim };
        Self { body, repairs, findings: Vec::new() }
    }

    /// A value accepted as built (by the repair pass or the caller).
    pub(crate) fn built(value: Value, repairs: Vec<Repair>) -> Self {
        Self { body: Body::Value(value), repairs, findings: Vec::new() }
    }

    /// The value, as vouch read (and, where declared, repaired) it.
    #[must_use]
    pub fn value(&self) -> &Value {
        match &self.body {
            Body::Text { json, max_depth, value, .. } => value.get_or_init(|| Box::new(read_as_sent(json, *max_depth))),
            Body::Value(v) => v,
        }
    }

    /// The value, owned.
    #[must_use]
    pub fn into_value(self) -> Value {
        match self.body {
            Body::Text { json, max_depth, value, .. } => {
                value.into_inner().map_or_else(|| read_as_sent(&json, max_depth), |v| *v)
            }
            Body::Value(v) => v,
        }
    }

    /// The accepted JSON as text: the reply itself (without surrounding
    /// white space) when vouch accepted it as sent — a missing property
    /// filled with its default written in as the last member of its object,
    /// a repaired scalar in place of the one sent, compact — and every
    /// number in it reads the same to any JSON reader (at most 15
    /// characters); else vouch's own writing of the value, compact, so no
    /// consumer reads a number other than the one vouch checked.
    #[must_use]
    pub fn json(&self) -> Cow<'_, str> {
        match &self.body {
            Body::Text { json, verbatim: true, .. } => Cow::Borrowed(json),
            Body::Text { .. } => Cow::Owned(crate::write::value(self.value())),
            Body::Value(v) => Cow::Owned(crate::write::value(v)),
        }
    }
}

fn is_json_ws(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

/// The value of a reply accepted as sent. The single pass accepted exactly
/// what this reader reads within the same depth (`tests/single_pass.rs`
/// holds the two to the same value on every reply), so the fallback is
/// never taken.
fn read_as_sent(json: &str, max_depth: usize) -> Value {
    crate::read::read_value(json, 0, max_depth, true, crate::read::parser::Integers::Document)
        .map(|(v, _)| v)
        .unwrap_or(Value::Null)
}

impl PartialEq for Accepted {
    fn eq(&self, other: &Self) -> bool {
        self.value() == other.value() && self.repairs == other.repairs && self.findings == other.findings
    }
}

impl std::fmt::Debug for Accepted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Accepted")
            .field("value", self.value())
            .field("repairs", &self.repairs)
            .field("findings", &self.findings)
            .finish()
    }
}

/// A reply vouch refuses.
#[derive(Debug, Clone, PartialEq)]
pub struct Refused {
    /// Every problem found (at most [`crate::Limits::max_problems`]), in a
    /// deterministic order.
    pub problems: Vec<Problem>,
}

impl Refused {
    /// `no_answer` when any problem means the model did not answer, else
    /// `bad_answer`.
    #[must_use]
    pub fn class(&self) -> ProblemClass {
        if self.problems.iter().any(|p| p.class == ProblemClass::NoAnswer) {
            ProblemClass::NoAnswer
        } else {
            ProblemClass::BadAnswer
        }
    }
}

/// The outcome of checking one reply against a contract.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// The reply meets the contract (perhaps after declared repairs).
    Accepted(Accepted),
    /// The reply does not meet the contract.
    Refused(Refused),
}

impl Verdict {
    pub(crate) fn refuse(problems: Vec<Problem>) -> Self {
        Self::Refused(Refused { problems })
    }

    /// True when the reply was accepted.
    #[must_use]
    pub fn is_accepted(&self) -> bool {
        matches!(self, Self::Accepted(_))
    }

    /// True when the reply was accepted and the gate has no findings.
    #[must_use]
    pub fn is_pass(&self) -> bool {
        matches!(self, Self::Accepted(a) if a.findings.is_empty())
    }

    /// The vouched-for value, if accepted.
    #[must_use]
    pub fn value(&self) -> Option<&Value> {
        match self {
            Self::Accepted(a) => Some(a.value()),
            Self::Refused(_) => None,
        }
    }

    /// The problems (empty when accepted).
    #[must_use]
    pub fn problems(&self) -> &[Problem] {
        match self {
            Self::Accepted(_) => &[],
            Self::Refused(r) => &r.problems,
        }
    }

    /// The repairs made (empty when refused).
    #[must_use]
    pub fn repairs(&self) -> &[Repair] {
        match self {
            Self::Accepted(a) => &a.repairs,
            Self::Refused(_) => &[],
        }
    }

    /// The gate findings (empty when refused).
    #[must_use]
    pub fn findings(&self) -> &[Finding] {
        match self {
            Self::Accepted(a) => &a.findings,
            Self::Refused(_) => &[],
        }
    }

    /// `"accepted"` or `"refused"`.
    #[must_use]
    pub fn outcome(&self) -> &'static str {
        match self {
            Self::Accepted(_) => "accepted",
            Self::Refused(_) => "refused",
        }
    }

    /// The one documented JSON shape:
    /// `{"outcome", "pass", "value", "repairs", "findings", "problems"}`.
    /// `value` is `null` when refused.
    #[must_use]
    pub fn to_json(&self) -> Value {
        json!({
            "outcome": self.outcome(),
            "pass": self.is_pass(),
            "value": self.value().cloned().unwrap_or(Value::Null),
            "repairs": self.repairs(),
            "findings": self.findings(),
            "problems": self.problems(),
        })
    }
}

impl Serialize for Verdict {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_json().serialize(serializer)
    }
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
    // Serialize into a bounded writer so a huge value costs no more than the excerpt.
    let mut w = BoundedWriter { buf: String::new(), chars: 0, full: false };
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
    let ex = excerpt(value);
    if ex.ends_with('…') {
        Value::String(ex)
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
