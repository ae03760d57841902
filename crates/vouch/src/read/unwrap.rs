//! Declared unwraps: reading the JSON out of a Markdown code fence or out of
//! surrounding prose. Only a contract's root `x-vouch.unwrap` turns them on.
//!
//! Fail-closed rules: one candidate or none. Two complete values are
//! `ambiguous_reply` (we never guess which one the model meant); a candidate
//! cut off at the end of the reply is `truncated` (never completed).

use serde_json::Value;

use super::parser::{read_value, Integers, ReadError};
use crate::verdict::{bounded, excerpt_text, ProblemCode, Repair};

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

/// The byte range of the body of a reply that is exactly one fenced block:
/// ```` ```json ```` or ```` ``` ````, the body, ```` ``` ````.
pub(super) fn fence_body(text: &str) -> Option<(usize, usize)> {
    let lead = text.len() - text.trim_start().len();
    let trimmed = text.trim();
    let after_open = trimmed.strip_prefix("```")?;
    let (info, _) = after_open.split_once('\n')?;
    let info = info.trim();
    if !(info.is_empty() || info.eq_ignore_ascii_case("json")) {
        return None;
    }
    let body_and_close = after_open.get(info.len()..)?;
    let inner = body_and_close.strip_suffix("```")?;
    // One block only: a second fence inside means several blocks.
    if inner.contains("```") {
        return None;
    }
    let start = lead + 3 + (after_open.len() - body_and_close.len());
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

fn prose(text: &str, max_depth: usize, integers: Integers) -> Found {
    let mut found: Option<(Value, usize, usize)> = None;
    let mut first_error: Option<ReadError> = None;
    let mut broken_object: Option<usize> = None;
    for (start, end) in outside_think(text) {
        // Parse only inside this range so a value cannot span a think block.
        let Some(part) = text.get(..end) else {
            continue;
        };
        let mut at = start;
        while let Some(rel) = part.get(at..).and_then(|s| s.find(['{', '['])) {
            let open = at + rel;
            match read_value(part, open, max_depth, false, integers) {
                Ok((value, stop)) => {
                    if found.is_some() {
                        return Err(ReadError {
                            code: ProblemCode::AmbiguousReply,
                            offset: open,
                            path: String::new(),
                            detail:
                                "the reply holds more than one JSON value; vouch will not guess which is the answer"
                                    .into(),
                        });
                    }
                    found = Some((value, open, stop));
                    at = stop;
                }
                // Anything but a syntax error ends the search: a cut-off,
                // over-deep or duplicate-keyed candidate is refused as such.
                Err(e) if e.code != ProblemCode::NotJson => return Err(e),
                Err(e) => {
                    // Skip what the failed attempt read, so inner fragments of
                    // broken JSON never become candidates (and the scan stays linear).
                    at = e.offset.max(open + 1);
                    // `[` opens Markdown links and citations in prose; a broken `{`
                    // is a failed attempt at the answer.
                    if text.as_bytes().get(open) == Some(&b'{') {
                        broken_object.get_or_insert(open);
                    }
                    first_error.get_or_insert(e);
                }
            }
        }
    }
    if let (Some(_), Some(offset)) = (&found, broken_object) {
        return Err(ReadError {
            code: ProblemCode::AmbiguousReply,
            offset,
            path: String::new(),
            detail:
                "the reply holds a broken JSON object besides a valid one; vouch will not guess which is the answer"
                    .into(),
        });
    }
    match found {
        Some((value, open, stop)) => {
            let r = log(text, &value, "read the JSON out of the surrounding text");
            Ok((value, Some(r), (open, stop)))
        }
        None => Err(first_error.unwrap_or(ReadError {
            code: ProblemCode::NotJson,
            offset: 0,
            path: String::new(),
            detail: "no JSON object or array in the reply".into(),
        })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fence_body_finds_the_block() {
        let t = "```json\n{\"a\":1}\n```";
        let (s, e) = fence_body(t).unwrap_or_default();
        assert_eq!(t.get(s..e), Some("\n{\"a\":1}\n"));
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
