//! Why an ask was refused when the upstream, not the contract, is the
//! reason: [`UpstreamProblem`], and [`AskProblem`] for either kind.

use std::fmt;

use serde::Serialize;
use vouch::{Problem, ProblemClass};

/// A stable code for a refusal that is not the contract's: the upstream
/// failed, or the model produced no reply the contract could judge. Every
/// one is class `no_answer`. Documented in docs/problems.md, "Upstream
/// problems (vouch ask)".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum UpstreamCode {
    /// The connection could not be opened, or was reset or closed early.
    UpstreamUnreachable,
    /// A connect, first-byte or total timeout passed.
    UpstreamTimeout,
    /// The upstream answered with an HTTP status other than 2xx and 429.
    UpstreamStatus,
    /// HTTP 429: too many requests.
    RateLimited,
    /// A 2xx body that is not a chat completion.
    NotACompletion,
    /// A streamed reply (`stream: true`) with a broken event: a line that is
    /// not a Server-Sent Events field, an event whose data is not UTF-8, not
    /// strict JSON (a repeated key included) or not a chat completion chunk,
    /// an event larger than the bound, or a stream larger than the bound.
    StreamMalformed,
    /// A streamed reply that ended (or broke off) with neither the `[DONE]`
    /// terminator nor a `finish_reason`: the reply may be missing its end.
    StreamIncomplete,
    /// A streamed reply that carried an error event (`{"error": …}` in a
    /// `data:` line, or an `event: error`).
    StreamError,
    /// The completion's content is null or empty.
    EmptyContent,
    /// No content, but reasoning: the model spent its budget before answering.
    ReasoningExhausted,
    /// `finish_reason: "length"`: the reply was cut off at the token limit,
    /// even when what came looks complete.
    CutOff,
    /// The model refused (`refusal` is set).
    ModelRefused,
    /// `finish_reason: "content_filter"`: the provider withheld the reply.
    ContentFiltered,
    /// `tool_calls` where content was expected.
    ToolCallsInstead,
    /// The reply holds the API key (anywhere in the completion, in any form
    /// the scrubber covers): it is refused and never shown.
    SecretInReply,
    /// The token budget is spent.
    BudgetSpent,
    /// The deadline passed.
    Deadline,
    /// The fallback (last known good value) fails the contract too, so it is
    /// not returned.
    FallbackRefused,
    /// The caller went away (a gateway's client disconnected) before the
    /// reply was judged; the upstream request was dropped.
    Cancelled,
}

impl UpstreamCode {
    /// Every code, in documentation order.
    pub const ALL: [UpstreamCode; 19] = [
        Self::UpstreamUnreachable,
        Self::UpstreamTimeout,
        Self::UpstreamStatus,
        Self::RateLimited,
        Self::NotACompletion,
        Self::StreamMalformed,
        Self::StreamIncomplete,
        Self::StreamError,
        Self::EmptyContent,
        Self::ReasoningExhausted,
        Self::CutOff,
        Self::ModelRefused,
        Self::ContentFiltered,
        Self::ToolCallsInstead,
        Self::SecretInReply,
        Self::BudgetSpent,
        Self::Deadline,
        Self::FallbackRefused,
        Self::Cancelled,
    ];

    /// The stable snake_case name.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::UpstreamUnreachable => "upstream_unreachable",
            Self::UpstreamTimeout => "upstream_timeout",
            Self::UpstreamStatus => "upstream_status",
            Self::RateLimited => "rate_limited",
            Self::NotACompletion => "not_a_completion",
            Self::StreamMalformed => "stream_malformed",
            Self::StreamIncomplete => "stream_incomplete",
            Self::StreamError => "stream_error",
            Self::EmptyContent => "empty_content",
            Self::ReasoningExhausted => "reasoning_exhausted",
            Self::CutOff => "cut_off",
            Self::ModelRefused => "model_refused",
            Self::ContentFiltered => "content_filtered",
            Self::ToolCallsInstead => "tool_calls_instead",
            Self::SecretInReply => "secret_in_reply",
            Self::BudgetSpent => "budget_spent",
            Self::Deadline => "deadline",
            Self::FallbackRefused => "fallback_refused",
            Self::Cancelled => "cancelled",
        }
    }

    /// Always [`ProblemClass::NoAnswer`]: there is no answer to use.
    #[must_use]
    pub fn class(self) -> ProblemClass {
        ProblemClass::NoAnswer
    }
}

impl fmt::Display for UpstreamCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A refusal that is not the contract's, in the same JSON shape as a
/// [`vouch::Problem`]: `{code, class, path, expected, got, message}`. The
/// path is `""` (the whole reply): there is no reply, or none to read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UpstreamProblem {
    /// Stable code.
    pub code: UpstreamCode,
    /// Always `no_answer`.
    pub class: ProblemClass,
    /// Always `""`.
    pub path: String,
    /// What was expected, in words.
    pub expected: String,
    /// A short, bounded excerpt of what came (scrubbed of keys).
    pub got: String,
    /// A sentence a person can read, starting with `(root)`.
    pub message: String,
}

impl UpstreamProblem {
    /// A problem with this code; `sentence` follows `(root): ` in the message.
    #[must_use]
    pub fn new(code: UpstreamCode, expected: impl Into<String>, got: impl Into<String>, sentence: &str) -> Self {
        Self {
            code,
            class: code.class(),
            path: String::new(),
            expected: expected.into(),
            got: got.into(),
            message: format!("(root): {sentence}"),
        }
    }
}

impl fmt::Display for UpstreamProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}] {}", self.code, self.message)
    }
}

/// One reason an ask (or one round of it) was refused: the contract's
/// [`vouch::Problem`] or an [`UpstreamProblem`]. Both serialize to the
/// same shape, so `--json` output has one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum AskProblem {
    /// The contract refused the model's reply.
    Contract(Problem),
    /// The upstream failed, or gave no reply the contract could judge.
    Upstream(UpstreamProblem),
}

impl AskProblem {
    /// The stable code, a [`vouch::ProblemCode`] or an [`UpstreamCode`] name.
    #[must_use]
    pub fn code(&self) -> &'static str {
        match self {
            Self::Contract(p) => p.code.as_str(),
            Self::Upstream(p) => p.code.as_str(),
        }
    }

    /// `no_answer` or `bad_answer`.
    #[must_use]
    pub fn class(&self) -> ProblemClass {
        match self {
            Self::Contract(p) => p.class,
            Self::Upstream(p) => p.class,
        }
    }

    /// JSON Pointer into the reply.
    #[must_use]
    pub fn path(&self) -> &str {
        match self {
            Self::Contract(p) => &p.path,
            Self::Upstream(p) => &p.path,
        }
    }

    /// What was expected, in words.
    #[must_use]
    pub fn expected(&self) -> &str {
        match self {
            Self::Contract(p) => &p.expected,
            Self::Upstream(p) => &p.expected,
        }
    }

    /// A bounded excerpt of what came.
    #[must_use]
    pub fn got(&self) -> &str {
        match self {
            Self::Contract(p) => &p.got,
            Self::Upstream(p) => &p.got,
        }
    }

    /// The sentence.
    #[must_use]
    pub fn message(&self) -> &str {
        match self {
            Self::Contract(p) => &p.message,
            Self::Upstream(p) => &p.message,
        }
    }

    /// The upstream code, when it is one.
    #[must_use]
    pub fn upstream_code(&self) -> Option<UpstreamCode> {
        match self {
            Self::Contract(_) => None,
            Self::Upstream(p) => Some(p.code),
        }
    }
}

impl fmt::Display for AskProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Contract(p) => p.fmt(f),
            Self::Upstream(p) => p.fmt(f),
        }
    }
}

impl From<Problem> for AskProblem {
    fn from(p: Problem) -> Self {
        Self::Contract(p)
    }
}

impl From<UpstreamProblem> for AskProblem {
    fn from(p: UpstreamProblem) -> Self {
        Self::Upstream(p)
    }
}

/// The class of a list of problems: `no_answer` if any is, else `bad_answer`.
#[must_use]
pub fn class_of(problems: &[AskProblem]) -> ProblemClass {
    if problems.iter().any(|p| p.class() == ProblemClass::NoAnswer) {
        ProblemClass::NoAnswer
    } else {
        ProblemClass::BadAnswer
    }
}
