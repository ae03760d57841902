//! # vouch
//!
//! A fail-closed trust layer for the JSON that language models return:
//! nothing a model says reaches application code unless vouch vouches for it.
//!
//! A [`Contract`] is a JSON Schema (draft 2020-12) document, optionally with
//! an `x-vouch` policy declaring repairs and gate findings. It is compiled
//! once; [`Contract::check`] reads a raw reply and returns a [`Verdict`]:
//! accepted (with any declared repairs and findings) or refused with every
//! [`Problem`], each with a stable code, a class (`no_answer` when the model
//! did not answer, `bad_answer` when it answered outside the contract), a
//! JSON Pointer path and a sentence.
//!
//! The core is pure: no I/O, no async, no global state.
//!
//! ```
//! use vouch::{Contract, ProblemClass, Verdict};
//!
//! let plate = Contract::from_json_str(r#"{
//!   "type": "object",
//!   "properties": {
//!     "productPresent": {"type": "boolean"},
//!     "productTextPresent": {"type": "boolean"},
//!     "garbledText": {"type": "boolean"}
//!   },
//!   "required": ["productPresent", "productTextPresent", "garbledText"],
//!   "additionalProperties": false
//! }"#)?;
//!
//! // A real answer passes.
//! let ok = plate.check(r#"{"productPresent":false,"productTextPresent":false,"garbledText":false}"#);
//! assert!(ok.is_pass());
//!
//! // "no" is not an answer to a yes/no question: refused, never read as false.
//! match plate.check(r#"{"productPresent":"no","productTextPresent":false,"garbledText":false}"#) {
//!     Verdict::Refused(refused) => {
//!         assert_eq!(refused.class(), ProblemClass::NoAnswer);
//!         assert_eq!(refused.problems[0].path, "/productPresent");
//!         assert_eq!(refused.problems[0].code.as_str(), "wrong_type");
//!     }
//!     Verdict::Accepted(_) => unreachable!("a string is not a boolean"),
//! }
//! # Ok::<(), vouch::CompileError>(())
//! ```

// The layers, lowest first (each uses only those before it; `.ci/layers` checks it):
// problems and the reply's words; reading; the hand-over of vouched text
// (into serde's visitors); the string keywords' machinery;
// the compiled schema; the evaluator, the repairs and the gate findings;
// the single pass; the contract's public face (with streaming); export on it.
mod build;
mod check;
mod contract;
mod decimal;
mod diff;
mod equal;
mod export;
mod findings;
mod format;
mod guided;
mod handover;
mod node;
mod pattern;
mod pointer;
mod problem;
mod read;
mod reask;
mod repair;
mod single_pass;
mod verdict;
mod write;

pub use build::Build;
pub use contract::{CompileError, CompileErrorKind, Contract, Progress, StreamCheck, Vouched};
pub use diff::{Change, ChangeKind, ContractDiff};
pub use export::{is_schema_name, ExportError, Provider};
pub use format::Format;
pub use handover::HandOverError;
pub use problem::{Finding, Position, Problem, ProblemClass, ProblemCode, Repair};
pub use read::{read_json, read_json_string, JsonError, Limits, Unwrap};
pub use reask::{echoes_refused_reply, problem_line, reask_line, reask_text, REPLY_ONLY};
pub use verdict::{Accepted, Brief, Refusals, Refused, Verdict};
pub use write::{to_json_pretty, to_json_string};

/// docs/sources.md, so its Rust snippet runs as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/sources.md")]
pub struct SourcesDoc;

/// Test hook, not API: compile `pattern` as a contract's `pattern` keyword
/// would and say whether it matches somewhere in `haystack` (`Err` with the
/// refusal when it does not compile). For the tests and the fuzz target that
/// compare vouch with an independent ECMA-262 engine; it may change or go
/// away in any release.
#[doc(hidden)]
pub fn __pattern_is_match(pattern: &str, haystack: &str) -> Result<bool, String> {
    pattern::compile_pattern(pattern).map(|re| re.is_match(haystack))
}

/// Test hook, not API: [`__pattern_is_match`] for several haystacks, the
/// pattern compiled once.
#[doc(hidden)]
pub fn __pattern_matches(pattern: &str, haystacks: &[&str]) -> Result<Vec<bool>, String> {
    pattern::compile_pattern(pattern).map(|re| haystacks.iter().map(|h| re.is_match(h)).collect())
}

/// Test hook, not API: the spans of the successive non-overlapping matches
/// of `pattern` in `haystack`, as the regex crate finds them.
#[doc(hidden)]
pub fn __pattern_find_iter(pattern: &str, haystack: &str) -> Result<Vec<(usize, usize)>, String> {
    pattern::compile_pattern(pattern).map(|re| re.spans(haystack))
}

/// Test hook, not API: every `\p{..}` spelling vouch accepts, for the test
/// that checks each one over every code point against an ECMA-262 engine.
#[doc(hidden)]
pub fn __pattern_property_names() -> Vec<String> {
    pattern::property_names()
}

/// Run one level of a recursion that a reply or a contract can make deep
/// (a recursive schema times nested applicators times reply depth), on a
/// stack that grows on the heap when the thread's own runs low: depth is
/// bounded by the limits, and no input can overflow the stack.
pub(crate) fn deeper<R>(f: impl FnOnce() -> R) -> R {
    // The red zone covers the few levels the checker runs between two checks,
    // even with a debug build's large frames.
    stacker::maybe_grow(256 * 1024, 2 * 1024 * 1024, f)
}
