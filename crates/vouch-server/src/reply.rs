//! What the gateway answers, in the shapes the OpenAI SDKs read: a chat
//! completion, a chunk of a stream, and an error object (`{"error": …}`)
//! that the SDKs raise as their usual errors. Written straight from the
//! outcome (serde structs that borrow it), with no JSON tree in between.

use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::Value;
use vouch::{Finding, Repair};
use vouch_llm::{AskProblem, Outcome, Round, Scrubber};

/// A JSON response, scrubbed of every secret the gateway keeps.
pub fn json_response(status: StatusCode, body: &impl Serialize, scrub: &Scrubber) -> Response {
    let bytes = serde_json::to_vec(body).unwrap_or_default();
    let bytes = match scrub.scrub_bytes(&bytes) {
        std::borrow::Cow::Borrowed(_) => bytes,
        std::borrow::Cow::Owned(scrubbed) => scrubbed,
    };
    let mut r = (status, bytes).into_response();
    r.headers_mut().insert(axum::http::header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    message: &'a str,
    #[serde(rename = "type")]
    kind: &'a str,
    param: Option<()>,
    code: &'a str,
}

/// `{"error": …}`.
#[derive(Serialize)]
pub struct Error<T> {
    error: T,
}

/// The outcome as the header `x-vouch-outcome` and the metrics name it:
/// `accepted`, `fallback` (every round refused, the fallback returned) or
/// `refused`.
pub fn outcome_kind(outcome: &Outcome) -> &'static str {
    if outcome.is_accepted() {
        "accepted"
    } else if outcome.is_fallback() {
        "fallback"
    } else {
        "refused"
    }
}

/// An error in OpenAI's shape: `{"error": {"message", "type", "param", "code"}}`.
pub fn error(status: StatusCode, kind: &str, code: &str, message: &str, scrub: &Scrubber) -> Response {
    json_response(status, &Error { error: ErrorBody { message, kind, param: None, code } }, scrub)
}

/// Token counts summed over every round.
#[derive(Serialize, Clone, Copy)]
pub struct Usage {
    prompt_tokens: u64,
    completion_tokens: u64,
    total_tokens: u64,
}

/// The usage summed over every round.
pub fn usage(outcome: &Outcome) -> Usage {
    let (mut p, mut c) = (0u64, 0u64);
    for u in outcome.rounds.iter().filter_map(|r| r.usage) {
        p = p.saturating_add(u.prompt_tokens.unwrap_or(0));
        c = c.saturating_add(u.completion_tokens.unwrap_or(0));
    }
    Usage { prompt_tokens: p, completion_tokens: c, total_tokens: p.saturating_add(c) }
}

/// The `vouch` object set beside a completion: the contract, outcome,
/// source, pass, repairs, findings, problems (for a fallback: why the
/// model's answers were refused), and every round (latency, tokens, verdict).
#[derive(Serialize)]
pub struct VouchObject<'a> {
    contract: &'a str,
    outcome: &'static str,
    source: &'static str,
    pass: bool,
    repairs: &'a [Repair],
    findings: &'a [Finding],
    problems: &'a [AskProblem],
    rounds: &'a [Round],
}

/// See [`VouchObject`].
pub fn vouch_object<'a>(outcome: &'a Outcome, contract: &'a str) -> VouchObject<'a> {
    VouchObject {
        contract,
        outcome: outcome.outcome(),
        source: outcome.source().as_str(),
        pass: outcome.is_pass(),
        repairs: outcome.repairs(),
        findings: outcome.findings(),
        problems: &outcome.problems,
        rounds: &outcome.rounds,
    }
}

/// A refusal's error object.
#[derive(Serialize)]
pub struct Refusal<'a> {
    message: String,
    #[serde(rename = "type")]
    kind: &'static str,
    param: Option<()>,
    code: &'a str,
    class: Option<&'static str>,
    contract: &'a str,
    problems: &'a [AskProblem],
    rounds: &'a [Round],
    /// A fallback that could not follow a part of a model reply already streamed.
    #[serde(skip_serializing_if = "Option::is_none")]
    fallback: Option<&'a Value>,
}

/// The refusal as the error object of a 422 (or of a stream's last event):
/// `type` `vouch_refused`, `code` the first problem's, `message` naming
/// every problem, `problems` and `rounds` in full.
pub fn refusal<'a>(outcome: &'a Outcome, contract: &'a str) -> Error<Refusal<'a>> {
    let code = outcome.problems.first().map_or("refused", AskProblem::code);
    let shown: Vec<String> =
        outcome.problems.iter().take(5).map(|p| format!("{}: {}", p.code(), p.message())).collect();
    let more = outcome.problems.len().saturating_sub(5);
    let more = if more > 0 { format!("; and {more} more") } else { String::new() };
    let rounds = outcome.rounds.len();
    let message = format!(
        "vouch refused the model's answer after {rounds} round{} (contract {contract}): {}{more}",
        if rounds == 1 { "" } else { "s" },
        shown.join("; ")
    );
    Error {
        error: Refusal {
            message,
            kind: "vouch_refused",
            param: None,
            code,
            class: outcome.class().map(vouch::ProblemClass::as_str),
            contract,
            problems: &outcome.problems,
            rounds: &outcome.rounds,
            fallback: None,
        },
    }
}

impl<'a> Error<Refusal<'a>> {
    /// The same refusal, carrying the fallback the stream could not end with.
    #[must_use]
    pub fn with_fallback(mut self, fallback: Option<&'a Value>) -> Self {
        self.error.fallback = fallback;
        self
    }
}

#[derive(Serialize)]
struct Message<'a> {
    role: &'static str,
    content: &'a str,
    refusal: Option<()>,
}

#[derive(Serialize)]
struct Choice<'a> {
    index: u32,
    message: Message<'a>,
    logprobs: Option<()>,
    finish_reason: &'static str,
}

/// A whole chat completion.
#[derive(Serialize)]
pub struct Completion<'a> {
    id: &'a str,
    object: &'static str,
    created: u64,
    model: &'a str,
    choices: [Choice<'a>; 1],
    usage: Usage,
    vouch: VouchObject<'a>,
}

/// A whole chat completion carrying `content` (the vouched JSON).
pub fn completion<'a>(
    id: &'a str,
    created: u64,
    model: &'a str,
    content: &'a str,
    outcome: &'a Outcome,
    contract: &'a str,
) -> Completion<'a> {
    Completion {
        id,
        object: "chat.completion",
        created,
        model,
        choices: [Choice {
            index: 0,
            message: Message { role: "assistant", content, refusal: None },
            logprobs: None,
            finish_reason: "stop",
        }],
        usage: usage(outcome),
        vouch: vouch_object(outcome, contract),
    }
}

/// A chunk's delta.
#[derive(Serialize, Default)]
pub struct Delta<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    role: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    content: Option<&'a str>,
}

impl<'a> Delta<'a> {
    /// A content piece, with the role on the first.
    pub fn content(content: &'a str, first: bool) -> Self {
        Self { role: first.then_some("assistant"), content: Some(content) }
    }
}

#[derive(Serialize)]
struct ChunkChoice<'a> {
    index: u32,
    delta: Delta<'a>,
    logprobs: Option<()>,
    finish_reason: Option<&'static str>,
}

/// One chunk of a streamed completion.
#[derive(Serialize)]
pub struct Chunk<'a> {
    id: &'a str,
    object: &'static str,
    created: u64,
    model: &'a str,
    choices: Vec<ChunkChoice<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    usage: Option<Usage>,
    #[serde(skip_serializing_if = "Option::is_none")]
    vouch: Option<VouchObject<'a>>,
}

/// One chunk of a streamed completion with this delta.
pub fn chunk<'a>(
    id: &'a str,
    created: u64,
    model: &'a str,
    delta: Delta<'a>,
    finish: Option<&'static str>,
) -> Chunk<'a> {
    Chunk {
        id,
        object: "chat.completion.chunk",
        created,
        model,
        choices: vec![ChunkChoice { index: 0, delta, logprobs: None, finish_reason: finish }],
        usage: None,
        vouch: None,
    }
}

/// The last chunk: no choices, the usage and the `vouch` object.
pub fn last_chunk<'a>(id: &'a str, created: u64, model: &'a str, outcome: &'a Outcome, contract: &'a str) -> Chunk<'a> {
    Chunk {
        id,
        object: "chat.completion.chunk",
        created,
        model,
        choices: Vec::new(),
        usage: Some(usage(outcome)),
        vouch: Some(vouch_object(outcome, contract)),
    }
}

/// A Server-Sent Event with this JSON as data, scrubbed, appended to `out`.
pub fn sse(out: &mut String, data: &impl Serialize, scrub: &Scrubber) {
    let text = serde_json::to_string(data).unwrap_or_default();
    out.push_str("data: ");
    match scrub.scrub_bytes(text.as_bytes()) {
        std::borrow::Cow::Borrowed(_) => out.push_str(&text),
        std::borrow::Cow::Owned(b) => out.push_str(&String::from_utf8_lossy(&b)),
    }
    out.push_str("\n\n");
}
