//! Declared unwraps: reading the JSON out of a Markdown code fence or out of
//! surrounding prose. Only a contract's root `x-vouch.unwrap` turns them on,
//! and they are tried only on a reply that is not JSON as a whole
//! (`not_json` or `trailing_text`).
//!
//! Fail-closed rules: one candidate or none; vouch never picks one of two
//! answers.
//!
//! **Fence** (`fence`): the whole reply, trimmed, is one fenced block: an
//! opening of exactly three backticks or three tildes, an info string that
//! (trimmed of spaces, tabs and a `\r`) is empty, `json` or `jsonc` in any
//! case, a line end (`\n` or `\r\n`), the body, and the same three
//! characters closing it (white space after them is trimmed). Another info
//! string (```` ```python ````), a second fence of the same kind inside, or
//! a four-backtick opening means the fence does not apply. When it applies,
//! the body must be one JSON value (`truncated` when cut off before the
//! closing fence, `trailing_text` for anything else inside), and its result
//! stands: prose is not tried.
//!
//! **Prose** (`prose`): every `{` and `[` outside `<think>…</think>` blocks
//! is a possible start (a `<think>` that never closes hides the rest of the
//! reply; draft JSON in reasoning is not an answer; a stray `</think>` is
//! text). Scanning left to right, at each start not inside a complete
//! candidate, vouch reads one strict JSON value:
//!
//! - it reads: a **complete candidate**; the brackets inside it (in its
//!   strings too) are part of it, and the scan goes on after it;
//! - it fails as not JSON: a **broken attempt**, and the scan goes on at the
//!   next bracket *inside* it, so a complete value the model wrote inside a
//!   broken one (`[{"verdict": "no"}, …]`) is a candidate. A broken `{`
//!   always looks like JSON. A broken `[` looks like JSON when the first
//!   character after it (and white space) can follow `[` in JSON or in
//!   escaped JSON: `{ [ " ] , - \` or a digit, or the whole word `true`,
//!   `false` or `null`; otherwise (`[text](url)`, `[^1]`, `[x]`, `[see 2]`)
//!   it is prose and counts for nothing (the candidates inside it still
//!   count). A complete `[1]`, `[2020]` or `[ ]` *is* JSON and a candidate;
//! - it fails otherwise (cut off at the end of the reply or of the text
//!   before a `<think>`, too deep, a repeated key, a number overflow): the
//!   reply is refused with that problem at once (truncation is never
//!   completed).
//!
//! Then: two or more complete candidates are `ambiguous_reply`; one complete
//! candidate beside a broken attempt that looks like JSON is
//! `ambiguous_reply`; one complete candidate and nothing else that looks
//! like JSON is the answer; no candidate is `not_json` (the first broken
//! attempt's syntax error, or `no JSON object or array in the reply`).
//! JSON in quotes or in a code span is found the same way (the quotes and
//! backticks are prose); escaped JSON (`"{\"a\":1}"`) is a broken attempt.
//! A fence inside prose is prose: its body's value is a candidate like any.
//!
//! **Linear time.** A broken attempt is read again from each bracket inside
//! it, which on `[[[[…x` is quadratic. The reading is therefore bounded: all
//! attempts together may read at most [`WORK_PER_BYTE`] times the reply's
//! length plus [`WORK_FLOOR`] bytes. A reply that needs more is refused as
//! `not_json` (`too much broken JSON to search`): only a mass of nested
//! broken brackets gets there, and refusing it is fail-closed (reading no
//! further can only miss candidates, never accept one). `not_json` rather
//! than `ambiguous_reply`: nothing complete may have been found, and what
//! was found is broken JSON.

use serde_json::Value;

use super::parser::{read_value, Integers, ReadError};
use crate::problem::{bounded, excerpt_text, ProblemCode, Repair};

/// Which unwraps a contract declares.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Unwrap {
    /// A reply that is one Markdown code block is read from inside it.
    pub fence: bool,
    /// The single JSON object or array in surrounding text is read out of it.
    pub prose: bool,
}

impl Unwrap {
    /// True when nothing is declared.
    #[must_use]
    pub fn is_none(self) -> bool {
        !self.fence && !self.prose
    }
}

/// The value unwrapped, the repair that logs it, and where its JSON stands in the reply.
type Found = Result<(Value, Option<Repair>, (usize, usize)), ReadError>;

/// Try the declared unwraps on a reply that is not JSON as a whole.
/// `None` means no unwrap applies, and the original reading problem stands.
pub(super) fn unwrap(text: &str, max_depth: usize, declared: Unwrap, integers: Integers) -> Option<Found> {
    if declared.fence {
        if let Some((start, end)) = fence_body(text) {
            let body = text.get(start..end).unwrap_or_default();
            // Parse only up to the closing fence, so a cut-off body reads as `truncated`.
            let upto = text.get(..end).unwrap_or_default();
            let read = read_value(upto, start, max_depth, false, integers).and_then(|(value, stop)| {
                if text.get(stop..end).is_some_and(|rest| rest.trim().is_empty()) {
                    Ok((value, stop))
                } else {
                    Err(ReadError {
                        code: ProblemCode::TrailingText,
                        offset: stop,
                        path: String::new(),
                        detail: "text after the JSON value inside the code fence".into(),
                    })
                }
            });
            if !body.trim().is_empty() {
                return Some(read.map(|(v, stop)| {
                    let r = log(text, &v, "read the JSON out of a Markdown code fence");
                    // The body may open with white space; the value starts after it.
                    let from = start + body.len() - body.trim_start().len();
                    (v, Some(r), (from, stop))
                }));
            }
        }
    }
    if declared.prose {
        return Some(prose(text, max_depth, integers));
    }
    None
}

fn log(text: &str, value: &Value, what: &str) -> Repair {
    Repair {
        path: String::new(),
        rule: "unwrap".into(),
        before: Value::String(excerpt_text(text)),
        after: bounded(value),
        message: format!("(root): {what}"),
    }
}

/// The byte range of the body of a reply that is exactly one fenced block
/// (see the module doc): ```` ```json ````, ```` ``` ```` or `~~~`, the
/// body, the same closing fence.
pub(super) fn fence_body(text: &str) -> Option<(usize, usize)> {
    let lead = text.len() - text.trim_start().len();
    let trimmed = text.trim();
    let marker = ["```", "~~~"].into_iter().find(|m| trimmed.starts_with(m))?;
    let after_open = trimmed.get(marker.len()..)?;
    let newline = after_open.find('\n')?;
    let info = after_open.get(..newline)?.trim();
    if !(info.is_empty() || info.eq_ignore_ascii_case("json") || info.eq_ignore_ascii_case("jsonc")) {
        return None;
    }
    let body_and_close = after_open.get(newline + 1..)?;
    let inner = body_and_close.strip_suffix(marker)?;
    // One block only: a second fence inside means several blocks.
    if inner.contains(marker) {
        return None;
    }
    let start = lead + marker.len() + newline + 1;
    Some((start, start + inner.len()))
}

/// Remove `<think>…</think>` blocks: reasoning is text, and draft JSON in it
/// is not the answer. Returns the byte ranges of `text` that remain.
fn outside_think(text: &str) -> Vec<(usize, usize)> {
    let mut ranges = Vec::new();
    let mut at = 0;
    while let Some(open) = text.get(at..).and_then(|s| s.find("<think>")) {
        ranges.push((at, at + open));
        let body = at + open + "<think>".len();
        match text.get(body..).and_then(|s| s.find("</think>")) {
            Some(close) => at = body + close + "</think>".len(),
            // Reasoning that never closed: nothing after it is an answer.
            None => return ranges,
        }
    }
    ranges.push((at, text.len()));
    ranges
}

/// How much reading all prose attempts together may do: this many bytes
/// per byte of the reply, plus [`WORK_FLOOR`].
pub const WORK_PER_BYTE: usize = 16;
/// The reading every reply may do whatever its length.
pub const WORK_FLOOR: usize = 1 << 16;

/// Whether a broken attempt at `open` looks like JSON (see the module doc).
fn looks_like_json(text: &str, open: usize) -> bool {
    let Some(rest) = text.get(open..) else { return false };
    let Some(after) = rest.strip_prefix('[') else { return true };
    let after = after.trim_start_matches([' ', '\t', '\r', '\n']);
    match after.bytes().next() {
        Some(b'{' | b'[' | b'"' | b']' | b',' | b'-' | b'\\' | b'0'..=b'9') => true,
        _ => ["true", "false", "null"].iter().any(|word| {
            after.strip_prefix(word).is_some_and(|tail| !tail.bytes().next().is_some_and(|b| b.is_ascii_alphanumeric()))
        }),
    }
}

fn ambiguous(offset: usize, detail: &str) -> ReadError {
    ReadError { code: ProblemCode::AmbiguousReply, offset, path: String::new(), detail: detail.into() }
}

fn prose(text: &str, max_depth: usize, integers: Integers) -> Found {
    // The first complete candidate, and whether there is a second.
    let mut found: Option<(Value, usize, usize)> = None;
    let mut second: Option<usize> = None;
    // The first broken attempt that looks like JSON.
    let mut broken: Option<ReadError> = None;
    let budget = text.len().saturating_mul(WORK_PER_BYTE).saturating_add(WORK_FLOOR);
    let mut work = 0usize;
    for (start, end) in outside_think(text) {
        // Parse only inside this range so a value cannot span a think block.
        let Some(part) = text.get(..end) else {
            continue;
        };
        let mut at = start;
        while let Some(rel) = part.get(at..).and_then(|s| s.find(['{', '['])) {
            let open = at + rel;
            let read = read_value(part, open, max_depth, false, integers);
            let reached = match &read {
                Ok((_, stop)) => *stop,
                Err(e) => e.offset,
            };
            work = work.saturating_add(reached.saturating_sub(open) + 1);
            if work > budget {
                return Err(ReadError {
                    code: ProblemCode::NotJson,
                    offset: open,
                    path: String::new(),
                    detail: "too much broken JSON to search for the answer".into(),
                });
            }
            match read {
                Ok((value, stop)) => {
                    if found.is_some() {
                        second.get_or_insert(open);
                    } else {
                        found = Some((value, open, stop));
                    }
                    // Its inner brackets are part of it.
                    at = stop;
                }
                // Anything but a syntax error ends the search: a cut-off,
                // over-deep or duplicate-keyed candidate is refused as such.
                Err(e) if e.code != ProblemCode::NotJson => return Err(e),
                Err(e) => {
                    if looks_like_json(part, open) {
                        broken.get_or_insert(e);
                    }
                    // A complete value inside a broken one is a candidate.
                    at = open + 1;
                }
            }
        }
    }
    match (found, second, broken) {
        (Some(_), Some(offset), _) => {
            Err(ambiguous(offset, "the reply holds more than one JSON value; vouch will not guess which is the answer"))
        }
        (Some(_), None, Some(e)) => Err(ambiguous(
            e.offset,
            "the reply holds broken JSON besides a valid value; vouch will not guess which is the answer",
        )),
        (Some((value, open, stop)), None, None) => {
            let r = log(text, &value, "read the JSON out of the surrounding text");
            Ok((value, Some(r), (open, stop)))
        }
        (None, _, Some(e)) => Err(e),
        (None, _, None) => Err(ReadError {
            code: ProblemCode::NotJson,
            offset: 0,
            path: String::new(),
            detail: "no JSON object or array in the reply".into(),
        }),
    }
}

impl Unwrap {
    /// Where the declared unwraps find the JSON in `text` (its byte span),
    /// or the code of the problem that refuses it; `None` when no unwrap
    /// applies. For tests and fuzzing (which re-read the span
    /// independently); not part of the API. Like a check, it is meant for
    /// a reply that is not JSON as a whole.
    #[doc(hidden)]
    #[must_use]
    pub fn find_span(self, text: &str, max_depth: usize) -> Option<Result<(usize, usize), ProblemCode>> {
        unwrap(text, max_depth, self, Integers::Document)
            .map(|found| found.map(|(_, _, span)| span).map_err(|e| e.code))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fence_body_finds_the_block() {
        let t = "```json\n{\"a\":1}\n```";
        let (s, e) = fence_body(t).unwrap_or_default();
        assert_eq!(t.get(s..e), Some("{\"a\":1}\n"));
        assert!(fence_body("```python\n{}\n```").is_none());
        assert!(fence_body("```json\n{}\n``` and ```json\n{}\n```").is_none());
        assert!(fence_body("{}").is_none());
    }

    #[test]
    fn a_cut_off_fence_body_is_truncated() {
        let found = unwrap("```json\n{\"a\": 1\n```", 128, Unwrap { fence: true, prose: false }, Integers::AsDoubles);
        assert_eq!(found.and_then(Result::err).map(|e| e.code), Some(ProblemCode::Truncated));
    }

    #[test]
    fn think_blocks_are_skipped() {
        let t = "<think>{\"draft\":1}</think>{\"a\":1}";
        let r = outside_think(t);
        assert_eq!(r, vec![(0, 0), (26, t.len())]);
    }
}
