//! The hand-over layer the language bindings build on.
//!
//! A binding (Python in `bindings/python`, Node in `bindings/node`) is a thin
//! skin over this crate: it turns its language's arguments into bytes, calls
//! these functions, and writes constructors for its own objects. What vouch
//! *means* — how a contract is read and its mistakes reported, the verdict's
//! one JSON shape, how a vouched value is walked, how rounds go and what
//! they ask again — lives here and in the core, once, so every surface
//! answers the same reply with the same bytes.
//!
//! - [`compile`]: a contract from its document's bytes, or every mistake as
//!   [`ContractMistake`]s (what `vouch check --json` prints for a contract
//!   that does not compile).
//! - [`verdict_json`]: the verdict as `vouch check --json` prints it.
//! - [`passed_as_sent`]: whether the caller's own reply text *is* the vouched
//!   text, so a binding can hand the value over from the text it already
//!   holds (no second string across the boundary).
//! - [`build`] with a [`Build`]: the vouched text walked once into the
//!   binding's own objects (no JSON round trip, no `serde_json::Value`).
//! - [`check_many`]: many replies across the cores; [`CheckAhead`]: the same,
//!   checked on the pool while the binding is still handing replies over.
//! - [`Stream`]: a reply checked while it streams, the contract owned.
//! - [`Rounds`]: ask, check, ask again in the core's words, then refuse and
//!   keep the last good value, marked — with the caller's own model client.
//! - [`unpaired_utf8`]: a host string holding a lone surrogate as the bytes
//!   the check refuses (`not_json` where it stands), in both bindings.
//!
//! ```
//! let contract = vouch_bind::compile(br#"{"type": "object", "required": ["ok"],
//!     "properties": {"ok": {"type": "boolean"}}}"#).map_err(|m| m[0].message.clone())?;
//! let verdict = contract.check(r#"{"ok": true}"#);
//! assert_eq!(vouch_bind::verdict_json(&verdict),
//!     r#"{"outcome":"accepted","pass":true,"value":{"ok":true},"repairs":[],"findings":[],"problems":[]}"#);
//! # Ok::<(), String>(())
//! ```

mod ahead;
mod build;
mod rounds;
mod stream;

pub use ahead::{CheckAhead, Chunk, Reply};
pub use build::{build, build_as_sent, build_value, Build};
pub use rounds::{Rounds, RoundsError, Step, MAX_ROUNDS};
pub use stream::Stream;

use rayon::prelude::*;
use vouch::{CompileError, CompileErrorKind, Contract, Verdict};

/// One mistake in a contract document, as `vouch check --json` reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContractMistake {
    /// The kind, in snake case (`not_json`, `unknown_keyword`, `bad_pattern`, …).
    pub kind: String,
    /// The keyword at fault (`""` when none, e.g. for `not_json`).
    pub keyword: String,
    /// JSON Pointer of the schema node holding it (`""`: the root).
    pub location: String,
    /// The whole line: `LOCATION: KEYWORD: WHAT` (the text alone for `not_json`).
    pub message: String,
}

/// The name of a compile error's kind, as the core serializes it
/// (`not_json`, `unknown_keyword`, …).
#[must_use]
pub fn kind_name(kind: CompileErrorKind) -> String {
    match serde_json::to_value(kind) {
        Ok(serde_json::Value::String(name)) => name,
        // A unit variant always serializes as its name; nothing else reaches here.
        _ => format!("{kind:?}"),
    }
}

/// Every mistake a compile error carries, in order.
#[must_use]
pub fn mistakes(e: &CompileError) -> Vec<ContractMistake> {
    e.every()
        .map(|m| ContractMistake {
            kind: kind_name(m.kind),
            keyword: m.keyword.clone(),
            location: m.location.clone(),
            message: m.line(),
        })
        .collect()
}

/// Compile a contract from its document's bytes (JSON Schema with `x-vouch`).
///
/// # Errors
/// Every mistake in the document; bytes that are not UTF-8 are one
/// `not_json` mistake.
pub fn compile(document: &[u8]) -> Result<Contract, Vec<ContractMistake>> {
    let text = std::str::from_utf8(document).map_err(|e| {
        vec![ContractMistake {
            kind: "not_json".to_owned(),
            keyword: String::new(),
            location: String::new(),
            message: format!("the contract is not UTF-8 text (invalid byte at offset {})", e.valid_up_to()),
        }]
    })?;
    Contract::from_json_str(text).map_err(|e| mistakes(&e))
}

/// The verdict as `vouch check --json` prints it (without the newline):
/// `{"outcome","pass","value","repairs","findings","problems"}`.
#[must_use]
pub fn verdict_json(verdict: &Verdict) -> String {
    let mut out = Vec::new();
    verdict.write_json(&mut out);
    // write_json writes JSON text, which is UTF-8; the lossy path is never taken.
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// True when `verdict` is a pass of `raw` exactly as sent: accepted, no
/// repair, no finding, and the vouched text ([`vouch::Accepted::json`]) is
/// `raw` itself without the JSON white space around it. Then any JSON
/// reader reads from `raw` the value vouch checked (the core's promise for
/// a text accepted as sent), and a binding need not carry the text back.
///
/// ```
/// let contract = vouch_bind::compile(br#"{"type": "object", "properties": {"n": {"type": "integer",
///     "x-vouch": {"repair": ["coerce"]}}}}"#).map_err(|m| m[0].message.clone())?;
/// let sent = " {\"n\": 1}\n";
/// assert!(vouch_bind::passed_as_sent(&contract.check(sent), sent.as_bytes()));
/// let coerced = r#"{"n": "1"}"#; // accepted, repaired: the text handed over is not the reply's
/// assert!(!vouch_bind::passed_as_sent(&contract.check(coerced), coerced.as_bytes()));
/// # Ok::<(), String>(())
/// ```
#[must_use]
pub fn passed_as_sent(verdict: &Verdict, raw: &[u8]) -> bool {
    let Verdict::Accepted(accepted) = verdict else { return false };
    if !accepted.repairs.is_empty() || !accepted.findings.is_empty() {
        return false;
    }
    // A text vouch wrote itself (Owned) is never the reply's: no copy is made to compare.
    match accepted.json() {
        std::borrow::Cow::Borrowed(json) => json.as_bytes() == trim_json_ws(raw),
        std::borrow::Cow::Owned(_) => false,
    }
}

/// `raw` without JSON's white space (space, tab, line feed, carriage
/// return) at either end.
fn trim_json_ws(raw: &[u8]) -> &[u8] {
    let ws = |b: &u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r');
    let start = raw.iter().position(|b| !ws(b)).unwrap_or(raw.len());
    let end = raw.iter().rposition(|b| !ws(b)).map_or(start, |i| i + 1);
    raw.get(start..end).unwrap_or_default()
}

/// Check every reply, across the cores (rayon's pool), in order.
#[must_use]
pub fn check_many<R: AsRef<[u8]> + Sync>(contract: &Contract, replies: &[R]) -> Vec<Verdict> {
    check_many_with(replies, |r| contract.check(r.as_ref()))
}

/// `check`'s verdict on a reply over the contract's `max_bytes` of which a
/// binding holds only the `start` (more than the limit's worth) and knows
/// the whole `len`: the start read, the rest counted
/// ([`Contract::check_start`]). A start within the limit (a binding's
/// bug: the rest would be read) still gets a refusal by size.
///
/// ```
/// let contract = vouch_bind::compile(br#"{"type": "object", "x-vouch": {"limits": {"max_bytes": 8}}}"#)
///     .map_err(|m| m[0].message.clone())?;
/// let reply = r#"{"a": 1, "b": 2}"#;
/// let verdict = vouch_bind::check_past_limit(&contract, &reply.as_bytes()[..9], reply.len());
/// assert_eq!(vouch_bind::verdict_json(&verdict), vouch_bind::verdict_json(&contract.check(reply)));
/// # Ok::<(), String>(())
/// ```
#[must_use]
pub fn check_past_limit(contract: &Contract, start: &[u8], len: usize) -> Verdict {
    contract
        .check_start(start, len)
        .unwrap_or_else(|| contract.refuse_too_large(contract.limits().max_bytes.saturating_add(1)))
}

/// `check` on every reply across the cores (rayon's pool), in order: for a
/// binding whose replies need reading first (a string held as UTF-16), and
/// whose answer is its own (what it hands back, written on the worker threads
/// too, so the writing is shared out with the checks).
#[must_use]
pub fn check_many_with<R, T, F>(replies: &[R], check: F) -> Vec<T>
where
    R: Sync,
    T: Send,
    F: Fn(&R) -> T + Sync,
{
    replies.par_iter().map(&check).collect()
}

/// A host string's text that holds a lone surrogate (a UTF-16 unit, or a
/// Python code point, from U+D800 to U+DFFF with no other half), as the
/// bytes the check reads: each character as its UTF-8, each lone surrogate
/// (`Err`) as the three bytes UTF-8's pattern would give it (what Python's
/// `str.encode("utf-8", "surrogatepass")` writes).
///
/// A surrogate is not a character and has no UTF-8, so no UTF-8 reader
/// accepts those bytes: the check refuses the reply as `not_json` where the
/// surrogate stands, as it refuses a `"\ud800"` escape in the text or the
/// same bytes given as bytes. Not U+FFFD in its place (what Node writes, and
/// Python's `"replace"`): that would be a repair no one declared or logged.
/// Such a string is the model's more often than the caller's: `JSON.parse`
/// and `json.loads`, so every SDK, decode a `"\ud800"` escape in a response
/// body into one.
///
/// ```
/// let units = [u16::from(b'"'), 0xD800, u16::from(b'"')];
/// let bytes = vouch_bind::unpaired_utf8(char::decode_utf16(units).map(|c| c.map_err(|e| e.unpaired_surrogate().into())));
/// assert_eq!(bytes, b"\"\xED\xA0\x80\"");
/// let contract = vouch_bind::compile(br#"{"type": "string"}"#).map_err(|m| m[0].message.clone())?;
/// let codes: Vec<&str> = contract.check(&bytes).problems().iter().map(|p| p.code.as_str()).collect();
/// assert_eq!(codes, ["not_json"]);
/// # Ok::<(), String>(())
/// ```
#[must_use]
pub fn unpaired_utf8(text: impl IntoIterator<Item = Result<char, u32>>) -> Vec<u8> {
    let text = text.into_iter();
    let mut out = Vec::with_capacity(text.size_hint().0.saturating_mul(3));
    let mut buf = [0u8; 4];
    for c in text {
        match c {
            Ok(c) => out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes()),
            // 1110xxxx 10xxxxxx 10xxxxxx, each part masked to its bits.
            Err(unit) => out.extend_from_slice(&[
                0xE0 | ((unit >> 12) & 0x0F) as u8,
                0x80 | ((unit >> 6) & 0x3F) as u8,
                0x80 | (unit & 0x3F) as u8,
            ]),
        }
    }
    out
}

/// The system message of the first round: the contract's instructions after
/// the caller's own system message (`"\n\n"` between them), or alone — as
/// vouch-llm's asker sends it.
#[must_use]
pub fn system_message(contract_prompt: &str, callers_own: Option<&str>) -> String {
    match callers_own {
        Some(own) => format!("{own}\n\n{contract_prompt}"),
        None => contract_prompt.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    // A test that cannot go on says why (input here is the test's own).
    #![allow(clippy::panic, clippy::indexing_slicing)]
    use super::*;

    #[test]
    fn a_contract_that_does_not_compile_reports_every_mistake_as_the_cli_does() {
        let Err(m) = compile(br#"{"type": "object", "properties": {"a": {"minimum": "x"}, "b": {"pattern": "("}}}"#)
        else {
            panic!("compiled")
        };
        assert!(m.len() >= 2, "{m:?}");
        assert_eq!(m[0].location, "/properties/a");
        assert_eq!(m[0].keyword, "minimum");
        assert_eq!(m[0].kind, "invalid_value");
        assert_eq!(kind_name(CompileErrorKind::BadPattern), "bad_pattern");
        assert!(m[0].message.starts_with("/properties/a: minimum: "), "{}", m[0].message);
        assert_eq!(
            (m[1].kind.as_str(), m[1].keyword.as_str(), m[1].location.as_str()),
            ("bad_pattern", "pattern", "/properties/b")
        );
        let Err(m) = compile(br#"{"type": "strin"}"#) else { panic!("compiled") };
        assert_eq!((m[0].kind.as_str(), m[0].keyword.as_str(), m[0].location.as_str()), ("invalid_value", "type", ""));
        assert!(m[0].message.starts_with("(root): type: "), "{}", m[0].message);
        let Err(m) = compile(b"{\"type\": ") else { panic!("compiled") };
        assert_eq!(m[0].kind, "not_json");
        let Err(m) = compile(b"\xff") else { panic!("compiled") };
        assert_eq!((m[0].kind.as_str(), m[0].message.contains("offset 0")), ("not_json", true));
    }

    #[test]
    fn check_many_keeps_the_order_and_the_verdicts_of_check() {
        let Ok(contract) = compile(br#"{"type": "integer", "maximum": 100}"#) else { panic!("no contract") };
        let replies: Vec<String> = (0..1000).map(|i| i.to_string()).collect();
        let verdicts = check_many(&contract, &replies);
        assert_eq!(verdicts.len(), 1000);
        for (i, (v, r)) in verdicts.iter().zip(&replies).enumerate() {
            assert_eq!(v.is_accepted(), i <= 100, "{r}");
            assert_eq!(verdict_json(v), verdict_json(&contract.check(r)));
        }
    }

    #[test]
    fn verdict_json_is_the_core_s_writing() {
        let Ok(contract) = compile(br#"{"type": "object", "required": ["a"]}"#) else { panic!("no contract") };
        for raw in ["{}", r#"{"a": [1, 2.50, "\u0041"]}"#, "```json\n{\"a\":1}\n```", "nope"] {
            let v = contract.check(raw);
            assert_eq!(verdict_json(&v), vouch::to_json_string(&v.to_json()), "{raw}");
        }
    }

    #[test]
    fn passed_as_sent_only_when_the_reply_s_own_text_is_the_vouched_text() {
        let Ok(contract) = compile(
            br#"{"type": "object", "properties": {"n": {"type": "integer", "x-vouch": {"repair": ["coerce"]}},
                "d": {"type": "string", "x-vouch": {"default": "x"}},
                "flag": {"type": "boolean", "x-vouch": {"findings": [{"when": {"const": true}, "message": "flagged"}]}}},
                "x-vouch": {"unwrap": ["fence"]}}"#,
        ) else {
            panic!("no contract")
        };
        let cases: [(&str, bool); 9] = [
            (r#"{"n": 1, "d": "y"}"#, true),
            ("\n\t {\"n\": 1, \"d\": \"y\"} \r\n", true),
            (r#"{"n": "1", "d": "y"}"#, false),                // coerced
            (r#"{"n": 1}"#, false),                            // default filled in
            ("```json\n{\"n\": 1, \"d\": \"y\"}\n```", false), // unwrapped
            (r#"{"n": 1, "d": "y", "flag": true}"#, false),    // a finding
            ("\u{feff}{\"n\": 1, \"d\": \"y\"}", false),       // a byte order mark is not JSON white space
            (r#"{"n": 1.5, "d": "y"}"#, false),                // refused
            ("", false),
        ];
        for (raw, want) in cases {
            let v = contract.check(raw);
            assert_eq!(passed_as_sent(&v, raw.as_bytes()), want, "{raw:?}: {}", verdict_json(&v));
            if want {
                let Verdict::Accepted(a) = &v else { panic!("refused") };
                assert_eq!(a.json(), raw.trim_matches(|c| matches!(c, ' ' | '\t' | '\n' | '\r')));
            }
        }
        let replies = cases.map(|(raw, _)| raw);
        let answers = check_many_with(&replies, |raw| passed_as_sent(&contract.check(raw), raw.as_bytes()));
        assert_eq!(answers, cases.map(|(_, want)| want));
    }

    #[test]
    fn the_system_message_follows_the_caller_s_own() {
        assert_eq!(system_message("Answer in JSON.", Some("You read plates.")), "You read plates.\n\nAnswer in JSON.");
        assert_eq!(system_message("Answer in JSON.", None), "Answer in JSON.");
    }
}
