//! The message that asks again: every problem in plain words, in the
//! core's own words ([`vouch::reask_text`]) with lines of its own for what
//! the upstream did.

use vouch::{problem_line, reask_line};

use crate::problem::{AskProblem, UpstreamCode};

pub use vouch::REPLY_ONLY;

/// The user message sent after a refused round: what was wrong, where, what
/// was expected and what came, then [`REPLY_ONLY`].
#[must_use]
pub fn reask_text(problems: &[AskProblem]) -> String {
    vouch::reask_text(problems.iter().map(line))
}

fn line(p: &AskProblem) -> String {
    match p {
        AskProblem::Contract(c) => problem_line(c),
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
            reask_line(&u.path, &u.expected, &got)
        }
    }
}
