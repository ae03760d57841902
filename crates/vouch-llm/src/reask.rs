//! The message that asks again: every problem in plain words.

use std::fmt::Write as _;

use vouch::ProblemCode;

use crate::problem::{AskProblem, UpstreamCode};

/// The sentence every re-ask ends with.
pub const REPLY_ONLY: &str = "Reply with the JSON object only.";

/// The user message sent after a refused round: what was wrong, where, what
/// was expected and what came, then [`REPLY_ONLY`].
#[must_use]
pub fn reask_text(problems: &[AskProblem]) -> String {
    let mut out = String::from("Your reply was refused. Problems:\n");
    for p in problems {
        let _ = writeln!(out, "- {}", line(p));
    }
    out.push_str("Answer the same question again, fixing every problem. ");
    out.push_str(REPLY_ONLY);
    out
}

fn line(p: &AskProblem) -> String {
    let path = if p.path().is_empty() { "(root)" } else { p.path() };
    match p {
        AskProblem::Contract(c) => {
            let got = if c.code == ProblemCode::Missing {
                "nothing (the property is missing)".to_owned()
            } else if c.got.is_empty() {
                "nothing".to_owned()
            } else {
                c.got.clone()
            };
            format!("{path}: expected {}, got {got}", c.expected)
        }
        AskProblem::Upstream(u) => {
            let got = match u.code {
                UpstreamCode::CutOff => "a reply cut off at the token limit; keep it shorter".to_owned(),
                UpstreamCode::EmptyContent => "an empty reply".to_owned(),
                UpstreamCode::ReasoningExhausted => "reasoning only, no reply; think less and answer".to_owned(),
                UpstreamCode::ModelRefused => format!("a refusal ({})", u.got),
                UpstreamCode::ToolCallsInstead => "a tool call; do not call tools".to_owned(),
                UpstreamCode::ContentFiltered => "a reply withheld by the content filter".to_owned(),
                _ => u.got.clone(),
            };
            format!("{path}: expected {}, got {got}", u.expected)
        }
    }
}
