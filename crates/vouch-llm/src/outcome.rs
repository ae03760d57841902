//! What an ask returns: an [`Outcome`], with every [`Round`].

use std::time::Duration;

use serde::ser::{Serialize, SerializeStruct, Serializer};
use serde_json::{json, Value};
use vouch::{Accepted, Finding, Problem, ProblemClass, Repair};

use crate::problem::{class_of, AskProblem};

/// Token counts a response reported (`usage`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    /// `usage.prompt_tokens`.
    pub prompt_tokens: Option<u64>,
    /// `usage.completion_tokens`.
    pub completion_tokens: Option<u64>,
    /// `usage.total_tokens`.
    pub total_tokens: Option<u64>,
    /// `usage.completion_tokens_details.reasoning_tokens`.
    pub reasoning_tokens: Option<u64>,
}

impl Usage {
    pub(crate) fn from_json(v: &Value) -> Self {
        let n = |v: Option<&Value>| v.and_then(Value::as_u64);
        Self {
            prompt_tokens: n(v.get("prompt_tokens")),
            completion_tokens: n(v.get("completion_tokens")),
            total_tokens: n(v.get("total_tokens")),
            reasoning_tokens: n(v.get("completion_tokens_details").and_then(|d| d.get("reasoning_tokens"))),
        }
    }

    /// The tokens the response cost: `total_tokens`, else prompt plus completion.
    #[must_use]
    pub fn spent(&self) -> Option<u64> {
        self.total_tokens.or_else(|| match (self.prompt_tokens, self.completion_tokens) {
            (None, None) => None,
            (p, c) => Some(p.unwrap_or(0).saturating_add(c.unwrap_or(0))),
        })
    }
}

/// How a streamed round went (`stream: true`): how much of the reply came,
/// and where the refusal became certain if the streaming check refused it
/// before it ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Streamed {
    /// Bytes of content received (every one fed to the contract's streaming check).
    pub bytes: usize,
    /// Content deltas received (most servers send one a token).
    pub deltas: u64,
    /// Completion tokens received: as the last usage event told, else the
    /// content deltas counted (see [`Streamed::tokens_from_usage`]).
    pub tokens: u64,
    /// Whether [`Streamed::tokens`] (and `decided_at_tokens`) come from a
    /// usage event rather than from counting content deltas.
    pub tokens_from_usage: bool,
    /// The content bytes received when the refusal became certain
    /// ([`vouch::StreamCheck::decided_at`]), when the streaming check
    /// refused the reply before the stream ended.
    pub decided_at_bytes: Option<usize>,
    /// The tokens received then, counted as [`Streamed::tokens`].
    pub decided_at_tokens: Option<u64>,
    /// True when vouch dropped the request before the stream ended, closing
    /// the connection: the upstream stops generating (and billing) there.
    pub dropped: bool,
    /// The completion tokens of the whole reply, as the final usage event
    /// told; `None` when the request was dropped or no usage came.
    pub reply_tokens: Option<u64>,
    /// Bytes of content sent on to the caller's relay
    /// ([`crate::Asker::ask_forwarded`]); 0 when nothing was relayed.
    pub relayed: usize,
}

impl Streamed {
    /// The JSON of [`Round::to_json`]'s `stream`: `bytes_received`,
    /// `deltas_received`, `tokens_received`, `tokens_from` (`"usage"` or
    /// `"deltas"`), `decided_at_bytes`, `decided_at_tokens`, `dropped`,
    /// `reply_tokens`, `relayed_bytes` (also its [`Serialize`] form).
    #[must_use]
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

impl Serialize for Streamed {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("Streamed", 9)?;
        s.serialize_field("bytes_received", &self.bytes)?;
        s.serialize_field("deltas_received", &self.deltas)?;
        s.serialize_field("tokens_received", &self.tokens)?;
        s.serialize_field("tokens_from", if self.tokens_from_usage { "usage" } else { "deltas" })?;
        s.serialize_field("decided_at_bytes", &self.decided_at_bytes)?;
        s.serialize_field("decided_at_tokens", &self.decided_at_tokens)?;
        s.serialize_field("dropped", &self.dropped)?;
        s.serialize_field("reply_tokens", &self.reply_tokens)?;
        s.serialize_field("relayed_bytes", &self.relayed)?;
        s.end()
    }
}

/// How a round ended.
#[derive(Debug, Clone, PartialEq)]
pub enum RoundVerdict {
    /// The contract accepted the reply (findings and repairs included).
    Accepted(Accepted),
    /// The reply was refused, or there was none: every problem.
    Refused(Vec<AskProblem>),
}

/// One request to the model and what came of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Round {
    /// 1-based.
    pub index: u32,
    /// How long vouch-llm waited before sending it (backoff, `Retry-After`).
    pub waited: Duration,
    /// From sending the request to having the whole response (or failing).
    pub latency: Duration,
    /// The HTTP status, when a response came.
    pub http_status: Option<u16>,
    /// The tokens the response reported.
    pub usage: Option<Usage>,
    /// `choices[0].finish_reason`.
    pub finish_reason: Option<String>,
    /// The model's reply (the message content, scrubbed of keys), when there was one.
    pub reply: Option<String>,
    /// The round's verdict.
    pub verdict: RoundVerdict,
    /// How the reply streamed, for a streamed round ([`crate::Config::stream`]);
    /// `None` for a round read whole.
    pub stream: Option<Streamed>,
}

impl Round {
    /// `"accepted"` or `"refused"`.
    #[must_use]
    pub fn outcome(&self) -> &'static str {
        match self.verdict {
            RoundVerdict::Accepted(_) => "accepted",
            RoundVerdict::Refused(_) => "refused",
        }
    }

    /// The round's problems (empty when accepted).
    #[must_use]
    pub fn problems(&self) -> &[AskProblem] {
        match &self.verdict {
            RoundVerdict::Accepted(_) => &[],
            RoundVerdict::Refused(p) => p,
        }
    }

    /// The round as JSON: `round`, `waited_ms`, `latency_ms`, `http_status`,
    /// `prompt_tokens`, `completion_tokens`, `total_tokens`, `finish_reason`,
    /// `outcome`, `pass`, `findings`, `problems`, and `stream` (`null`, or
    /// [`Streamed::to_json`] for a streamed round). Its [`Serialize`] form
    /// writes the same without building the tree.
    #[must_use]
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

impl Serialize for Round {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let usage = self.usage.unwrap_or_default();
        let (pass, findings): (bool, &[Finding]) = match &self.verdict {
            RoundVerdict::Accepted(a) => (a.findings.is_empty(), &a.findings),
            RoundVerdict::Refused(_) => (false, &[]),
        };
        let mut s = serializer.serialize_struct("Round", 13)?;
        s.serialize_field("round", &self.index)?;
        s.serialize_field("waited_ms", &millis(self.waited))?;
        s.serialize_field("latency_ms", &millis(self.latency))?;
        s.serialize_field("http_status", &self.http_status)?;
        s.serialize_field("prompt_tokens", &usage.prompt_tokens)?;
        s.serialize_field("completion_tokens", &usage.completion_tokens)?;
        s.serialize_field("total_tokens", &usage.spent())?;
        s.serialize_field("finish_reason", &self.finish_reason)?;
        s.serialize_field("outcome", self.outcome())?;
        s.serialize_field("pass", &pass)?;
        s.serialize_field("findings", findings)?;
        s.serialize_field("problems", self.problems())?;
        s.serialize_field("stream", &self.stream)?;
        s.end()
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// Where the value of an outcome comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// A model reply the contract accepted (or, when refused, no value at all).
    Model,
    /// The caller's last known good value: every round was refused.
    Fallback,
}

impl Source {
    /// `"model"` or `"fallback"`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Model => "model",
            Self::Fallback => "fallback",
        }
    }
}

/// The value an ask ends with, if any.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// The contract accepted a model reply (the last round's).
    Model(Accepted),
    /// Every round was refused; the fallback (last known good value) passed
    /// the contract and is returned in its place. It is not a fresh answer.
    Fallback(Accepted),
    /// Refused, and nothing to use.
    Refused,
}

/// The outcome of one ask.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The value it ends with, if any.
    pub answer: Answer,
    /// When refused: every round's problems, in order, then why it stopped
    /// (`budget_spent`, `deadline`) and `fallback_refused` if the fallback
    /// failed the contract. Empty when a model reply was accepted.
    pub problems: Vec<AskProblem>,
    /// Every round, in order.
    pub rounds: Vec<Round>,
    /// When a fallback was given and failed the contract: its problems.
    pub fallback_problems: Vec<Problem>,
}

impl Outcome {
    /// `"accepted"` when a model reply was accepted, else `"refused"`
    /// (also when the fallback is returned: the model's answer was refused).
    #[must_use]
    pub fn outcome(&self) -> &'static str {
        match self.answer {
            Answer::Model(_) => "accepted",
            Answer::Fallback(_) | Answer::Refused => "refused",
        }
    }

    /// True when a model reply was accepted.
    #[must_use]
    pub fn is_accepted(&self) -> bool {
        matches!(self.answer, Answer::Model(_))
    }

    /// True when a model reply was accepted and the gate has no findings.
    /// Never true for a fallback.
    #[must_use]
    pub fn is_pass(&self) -> bool {
        matches!(&self.answer, Answer::Model(a) if a.findings.is_empty())
    }

    /// True when the fallback is returned.
    #[must_use]
    pub fn is_fallback(&self) -> bool {
        matches!(self.answer, Answer::Fallback(_))
    }

    /// Where the value comes from.
    #[must_use]
    pub fn source(&self) -> Source {
        match self.answer {
            Answer::Fallback(_) => Source::Fallback,
            Answer::Model(_) | Answer::Refused => Source::Model,
        }
    }

    /// The accepted model value or the fallback (see [`Outcome::source`]).
    #[must_use]
    pub fn value(&self) -> Option<&Value> {
        self.accepted().map(|a| a.value())
    }

    fn accepted(&self) -> Option<&Accepted> {
        match &self.answer {
            Answer::Model(a) | Answer::Fallback(a) => Some(a),
            Answer::Refused => None,
        }
    }

    /// The repairs made to the value.
    #[must_use]
    pub fn repairs(&self) -> &[Repair] {
        self.accepted().map_or(&[], |a| &a.repairs)
    }

    /// The gate findings on the value.
    #[must_use]
    pub fn findings(&self) -> &[Finding] {
        self.accepted().map_or(&[], |a| &a.findings)
    }

    /// The class of the refusal (`None` when a model reply was accepted).
    #[must_use]
    pub fn class(&self) -> Option<ProblemClass> {
        (!self.is_accepted()).then(|| class_of(&self.problems))
    }

    /// The tokens spent, summed over the rounds that reported usage.
    #[must_use]
    pub fn total_tokens(&self) -> u64 {
        self.rounds.iter().filter_map(|r| r.usage.and_then(|u| u.spent())).sum()
    }

    /// The JSON shape of `vouch check --json` (`outcome`, `pass`, `value`,
    /// `repairs`, `findings`, `problems`) plus `source` (`"model"` or
    /// `"fallback"`) and `rounds` (see [`Round::to_json`]). With a fallback,
    /// `outcome` is `"refused"`, `pass` is false and `value` is the fallback.
    #[must_use]
    pub fn to_json(&self) -> Value {
        json!({
            "outcome": self.outcome(),
            "pass": self.is_pass(),
            "value": self.value().cloned().unwrap_or(Value::Null),
            "repairs": self.repairs(),
            "findings": self.findings(),
            "problems": self.problems,
            "source": self.source().as_str(),
            "rounds": self.rounds.iter().map(Round::to_json).collect::<Vec<_>>(),
        })
    }
}
