//! The words vouch asks again in: after a refused reply, the user message
//! that says every problem plainly (where, what was expected, what came),
//! the same from every surface (vouch-llm, the gateway, the bindings).

use std::fmt::Write as _;

use crate::problem::{Problem, ProblemCode};

/// The sentence every re-ask ends with.
pub const REPLY_ONLY: &str = "Reply with the JSON object only.";

/// One line of a re-ask: `PATH: expected EXPECTED, got GOT` (the path
/// `(root)` for the whole reply).
#[must_use]
pub fn reask_line(path: &str, expected: &str, got: &str) -> String {
    let path = if path.is_empty() { "(root)" } else { path };
    format!("{path}: expected {expected}, got {got}")
}

/// The re-ask line of a contract problem.
#[must_use]
pub fn problem_line(p: &Problem) -> String {
    let got = if p.code == ProblemCode::Missing {
        "nothing (the property is missing)"
    } else if p.got.is_empty() {
        "nothing"
    } else {
        p.got.as_str()
    };
    reask_line(&p.path, &p.expected, got)
}

/// The user message sent after a refused reply, from its lines (see
/// [`problem_line`]): the problems, then the ask to answer again, then
/// [`REPLY_ONLY`].
///
/// ```
/// let contract = vouch::Contract::from_json_str(r#"{"type": "object", "required": ["ok"]}"#)?;
/// let vouch::Verdict::Refused(refused) = contract.check("{}") else { unreachable!() };
/// assert_eq!(
///     refused.reask_text(),
///     "Your reply was refused. Problems:\n- /ok: expected a value, got nothing (the property is missing)\n\
///      Answer the same question again, fixing every problem. Reply with the JSON object only."
/// );
/// # Ok::<(), vouch::CompileError>(())
/// ```
#[must_use]
pub fn reask_text(lines: impl IntoIterator<Item = String>) -> String {
    let mut out = String::from("Your reply was refused. Problems:\n");
    for line in lines {
        let _ = writeln!(out, "- {line}");
    }
    out.push_str("Answer the same question again, fixing every problem. ");
    out.push_str(REPLY_ONLY);
    out
}

/// Whether a refused reply goes back to the model, as the assistant's
/// message before the re-ask, from its problems' codes: not when it was
/// refused for its size (`too_large`). Sent back, such a reply would cost
/// the next round as many input tokens again as the contract refused to
/// read (past a provider's context window, a round lost to an error),
/// where the re-ask alone says how large it was and how large it may be.
/// Every surface that asks again (vouch-llm, the gateway, the bindings'
/// rounds) asks this.
///
/// ```
/// use vouch::ProblemCode;
/// assert!(vouch::echoes_refused_reply([ProblemCode::Missing, ProblemCode::WrongType]));
/// assert!(!vouch::echoes_refused_reply([ProblemCode::WrongType, ProblemCode::TooLarge]));
/// ```
#[must_use]
pub fn echoes_refused_reply(codes: impl IntoIterator<Item = ProblemCode>) -> bool {
    codes.into_iter().all(|code| code != ProblemCode::TooLarge)
}
