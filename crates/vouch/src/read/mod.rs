//! Reading a raw reply into a JSON value: strict RFC 8259, bounded in size
//! and depth, with the unwraps (fence, prose) a contract may declare.

pub(crate) mod parser;
mod unwrap;

use serde_json::Value;

use crate::problem::{excerpt_text, Position, Problem, ProblemCode, Repair};
pub(crate) use parser::{read_value, Integers};
pub use unwrap::Unwrap;

/// Bounds on what a reply may cost to read and report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest reply accepted, in bytes (default 4 MiB).
    pub max_bytes: usize,
    /// Deepest nesting of arrays and objects (default 128, at most
    /// [`Limits::MAX_DEPTH_CAP`]).
    pub max_depth: usize,
    /// Most problems listed in one refusal (default 100).
    pub max_problems: usize,
    /// Most repairs the declared rules may make to one reply (default
    /// 1000). A reply needing more is refused (`too_many_repairs`): the
    /// repairer stops at the cap, so its log never grows past it.
    pub max_repairs: usize,
}

impl Limits {
    /// The highest `max_depth` a contract may set: checking recurses once per
    /// level, and this keeps it far inside a 2 MiB thread stack.
    pub const MAX_DEPTH_CAP: usize = 512;
}

impl Default for Limits {
    fn default() -> Self {
        Self { max_bytes: 4 * 1024 * 1024, max_depth: 128, max_problems: 100, max_repairs: 1000 }
    }
}

/// The 1-based line and column of a byte offset.
pub(crate) fn position(text: &str, offset: usize) -> Position {
    let before = text.get(..offset).unwrap_or(text);
    let line = before.bytes().filter(|&b| b == b'\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before.get(line_start..).map_or(0, |s| s.chars().count()) + 1;
    Position { line, column, offset }
}

pub(crate) fn read_problem(text: &str, e: &parser::ReadError) -> Problem {
    read_problem_hinted(text, e, "")
}

/// [`read_problem`], with `hint` after a syntax error's position (the
/// room for it taken with the rest: no second allocation).
fn read_problem_hinted(text: &str, e: &parser::ReadError, hint: &str) -> Problem {
    let pos = position(text, e.offset);
    // Written piece by piece: a refusal's report is on the hot path of every refused reply.
    let at = |lead: &str| {
        let mut s = String::with_capacity(lead.len() + e.detail.len() + 32 + hint.len());
        s.push_str(lead);
        s.push_str(&e.detail);
        s.push_str(" at line ");
        push_number(&mut s, pos.line);
        s.push_str(", column ");
        push_number(&mut s, pos.column);
        s.push_str(hint);
        s
    };
    let (expected, sentence) = match e.code {
        ProblemCode::Truncated => ("a complete JSON value", format!("the reply was cut off ({})", e.detail)),
        ProblemCode::TrailingText => ("nothing after the JSON value", at("")),
        ProblemCode::DuplicateKey => ("each key once per object", e.detail.clone()),
        ProblemCode::TooDeep => ("shallower nesting", e.detail.clone()),
        ProblemCode::NumberOverflow => ("a number a double can hold", e.detail.clone()),
        ProblemCode::ImpreciseNumber => ("a number every JSON reader reads alike", e.detail.clone()),
        ProblemCode::AmbiguousReply => ("exactly one JSON value", e.detail.clone()),
        _ => ("strict JSON", at("not JSON: ")),
    };
    let rest = text.get(e.offset..).unwrap_or_default();
    let got = match e.code {
        // A number problem is about that number: show it, not the reply after it.
        ProblemCode::NumberOverflow | ProblemCode::ImpreciseNumber => {
            let end = rest.find(|c: char| !matches!(c, '0'..='9' | '-' | '+' | '.' | 'e' | 'E')).unwrap_or(rest.len());
            excerpt_text(rest.get(..end).unwrap_or(rest))
        }
        _ => excerpt_text(rest),
    };
    let mut p = Problem::new(e.code, &e.path, expected.to_owned(), got, &sentence);
    p.position = Some(pos);
    p
}

/// `n` in decimal digits, onto the end of `out`.
fn push_number(out: &mut String, n: usize) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut n = n;
    loop {
        at -= 1;
        if let Some(d) = digits.get_mut(at) {
            *d = b'0' + (n % 10) as u8;
        }
        n /= 10;
        if n == 0 || at == 0 {
            break;
        }
    }
    out.extend(digits.get(at..).unwrap_or_default().iter().map(|&d| char::from(d)));
}

/// Why [`read_json`] refused a text: the reading problem's code (one of the
/// reading codes: `empty_reply`, `not_json`, `truncated`, `trailing_text`,
/// `duplicate_key`, `too_deep`, `number_overflow`…), where, and a sentence.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct JsonError {
    /// The reading problem's stable code.
    pub code: ProblemCode,
    /// JSON Pointer of the offending member, where one is known.
    pub path: String,
    /// Where in the text (absent for an empty text).
    pub position: Option<Position>,
    /// A sentence: what is wrong, and where (line and column).
    pub message: String,
}

/// Read JSON text as strictly as vouch reads a reply: RFC 8259 only, no
/// repeated key (after unescaping), nesting at most `max_depth`, and numbers
/// held to the reply's number profile. For every JSON vouch reads besides
/// replies — contracts, completions, stream events, batch lines,
/// configuration — so no input is resolved in a way a reply would be refused
/// for (serde_json keeps the last of two equal keys).
///
/// ```
/// assert!(vouch::read_json(r#"{"content": "a"}"#, 64).is_ok());
/// let e = vouch::read_json(r#"{"content": "a", "content": "b"}"#, 64).unwrap_err();
/// assert_eq!(e.code.as_str(), "duplicate_key");
/// assert_eq!(e.path, "/content");
/// ```
///
/// # Errors
/// A [`JsonError`] for anything but exactly one strict JSON value.
pub fn read_json(text: &str, max_depth: usize) -> Result<Value, JsonError> {
    if text.trim().is_empty() {
        return Err(JsonError {
            code: ProblemCode::EmptyReply,
            path: String::new(),
            position: None,
            message: "the text is empty".into(),
        });
    }
    read_value(text, 0, max_depth, true, Integers::Document).map(|(v, _)| v).map_err(|e| {
        let p = read_problem(text, &e);
        // The reader words these two for replies; this text is whatever the
        // caller reads (a request body, a batch line, a completion): named as
        // text. (Their sentences quote nothing of the text, so nothing of it is changed.)
        let message = match p.code {
            ProblemCode::Truncated | ProblemCode::TooDeep => p.message.replace("the reply", "the text"),
            _ => p.message,
        };
        JsonError { code: p.code, path: p.path, position: p.position, message }
    })
}

/// The JSON string that `text` begins with (its opening quote first), read
/// as [`read_json`] reads a string: its content, borrowed where it holds no
/// escape, and the bytes it took, closing quote included. `None` where
/// `read_json` would refuse it (an unknown escape, a lone surrogate, a
/// control character, no closing quote); `read_json` words why. For readers
/// of vouch's own line formats that take the common line without a tree
/// (`vouch batch`): the content is the very string `read_json` gives.
///
/// ```
/// let (content, taken) = vouch::read_json_string(r#""{\"a\": 1}", "id": 7"#).unwrap();
/// assert_eq!((content.as_ref(), taken), (r#"{"a": 1}"#, 12));
/// assert!(vouch::read_json_string(r#""\ud800""#).is_none());
/// ```
#[must_use]
pub fn read_json_string(text: &str) -> Option<(std::borrow::Cow<'_, str>, usize)> {
    if !text.starts_with('"') {
        return None;
    }
    parser::read_string(text).ok()
}

/// Read a whole reply. On success, returns the value and, when an unwrap
/// was needed, the repair that records it.
pub(crate) fn read_reply(
    raw: &[u8],
    limits: &Limits,
    unwrap: Unwrap,
    integers: Integers,
) -> Result<(Value, Option<Repair>), Box<Problem>> {
    if raw.len() > limits.max_bytes {
        return Err(Box::new(too_large(raw.len(), false, limits.max_bytes)));
    }
    let text = match std::str::from_utf8(raw) {
        Ok(text) => text,
        Err(e) => {
            let valid = raw.get(..e.valid_up_to()).and_then(|b| std::str::from_utf8(b).ok()).unwrap_or("");
            let pos = position(valid, e.valid_up_to());
            let mut p = Problem::new(
                ProblemCode::NotJson,
                "",
                "UTF-8 text".to_owned(),
                format!("invalid byte at offset {}", e.valid_up_to()),
                &format!("not JSON: invalid UTF-8 at line {}, column {}", pos.line, pos.column),
            );
            p.position = Some(pos);
            return Err(Box::new(p));
        }
    };
    read_text(text, limits, unwrap, integers)
}

/// The refusal of a reply of `len` bytes (`at_least`: or more — a reader
/// that stopped at the limit) over the limit of `max_bytes`.
pub(crate) fn too_large(len: usize, at_least: bool, max_bytes: usize) -> Problem {
    let (got, size) = if at_least { ("at least ", "at least ") } else { ("", "") };
    Problem::new(
        ProblemCode::TooLarge,
        "",
        format!("at most {max_bytes} bytes"),
        format!("{got}{len} bytes"),
        &format!("the reply is {size}{len} bytes, over the limit of {max_bytes}"),
    )
}

/// Read a whole reply already known to be UTF-8 and within the size limit.
pub(crate) fn read_text(
    text: &str,
    limits: &Limits,
    unwrap: Unwrap,
    integers: Integers,
) -> Result<(Value, Option<Repair>), Box<Problem>> {
    if text.trim().is_empty() {
        return Err(Box::new(Problem::new(
            ProblemCode::EmptyReply,
            "",
            "a JSON value".to_owned(),
            excerpt_text(text),
            "the reply is empty",
        )));
    }
    match read_value(text, 0, limits.max_depth, true, integers) {
        Ok((value, _)) => Ok((value, None)),
        Err(e) => after_read_error(text, &e, limits, unwrap, integers).map(|(value, log, _)| (value, log)),
    }
}

/// A reply read: its value, the unwrap that found it (if one did), and
/// where its JSON stands in the reply.
pub(crate) type Read = (Value, Option<Repair>, (usize, usize));

/// What [`read_text`] makes of a reply that stopped reading with `e` (found
/// by it, or by the single pass, whose syntax errors are the same): the
/// declared unwraps (the value, its log, and where its JSON stands in the
/// reply), else the read refusal. `text` is not blank.
pub(crate) fn after_read_error(
    text: &str,
    e: &parser::ReadError,
    limits: &Limits,
    unwrap: Unwrap,
    integers: Integers,
) -> Result<Read, Box<Problem>> {
    if tries_unwrap(e, unwrap) {
        if let Some(found) = unwrap::unwrap(text, limits.max_depth, unwrap, integers) {
            return found.map_err(|e| Box::new(read_problem(text, &e)));
        }
    }
    Err(read_refusal(text, e, unwrap))
}

/// The refusal of a reply that does not read as JSON, once unwrapping (if
/// declared) found nothing: the read problem, with a hint for a code fence
/// the contract does not unwrap.
pub(crate) fn read_refusal(text: &str, e: &parser::ReadError, unwrap: Unwrap) -> Box<Problem> {
    let fenced = e.code == ProblemCode::NotJson && !unwrap.fence && unwrap::fence_body(text).is_some();
    Box::new(read_problem_hinted(text, e, if fenced { FENCE_HINT } else { "" }))
}

/// Said of a fenced reply the contract does not unwrap.
const FENCE_HINT: &str = " (the reply is a Markdown code fence, which this contract does not unwrap)";

/// Whether the full path, reading `text`, would refuse it with exactly the
/// read error `e` (found by another reader of the same grammar at the same
/// place): a reply that is not empty, where no unwrap is tried for `e`.
pub(crate) fn refused_as_read(text: &str, e: &parser::ReadError, unwrap: Unwrap) -> bool {
    !text.trim().is_empty() && !tries_unwrap(e, unwrap)
}

/// Whether a reply that stopped reading with `e` gets the declared unwraps:
/// only one that is not JSON as a whole; a cut-off or over-deep reply stays
/// refused whatever is declared.
fn tries_unwrap(e: &parser::ReadError, unwrap: Unwrap) -> bool {
    !unwrap.is_none() && matches!(e.code, ProblemCode::NotJson | ProblemCode::TrailingText)
}

/// Nesting depth of a value, without recursion.
pub(crate) fn depth(value: &Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(value, 0usize)];
    // Counted like the reader counts: each open array or object is a level.
    while let Some((v, d)) = stack.pop() {
        match v {
            Value::Array(items) => {
                deepest = deepest.max(d + 1);
                stack.extend(items.iter().map(|i| (i, d + 1)));
            }
            Value::Object(map) => {
                deepest = deepest.max(d + 1);
                stack.extend(map.values().map(|i| (i, d + 1)));
            }
            _ => {}
        }
    }
    deepest
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod number_tests {
    #[test]
    fn numbers_are_written_in_decimal() {
        for n in [0usize, 7, 10, 99, 100, 12_345, usize::MAX] {
            let mut s = String::from("x");
            super::push_number(&mut s, n);
            assert_eq!(s, format!("x{n}"));
        }
    }
}
