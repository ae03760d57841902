//! What the gateway answers, in the shapes the OpenAI SDKs read: a chat
//! completion, a chunk of a stream, and an error object (`{"error": …}`)
//! that the SDKs raise as their usual errors.

use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};
use vouch_llm::{Outcome, Round, Scrubber};

/// A JSON response, scrubbed of every secret the gateway keeps.
pub fn json_response(status: StatusCode, body: &Value, scrub: &Scrubber) -> Response {
    let text = scrub.scrub(&vouch::to_json_string(body));
    let mut r = (status, text).into_response();
    r.headers_mut().insert(axum::http::header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r
}

/// An error in OpenAI's shape: `{"error": {"message", "type", "param", "code"}}`.
pub fn error(status: StatusCode, kind: &str, code: &str, message: &str, scrub: &Scrubber) -> Response {
    json_response(status, &json!({"error": {"message": message, "type": kind, "param": null, "code": code}}), scrub)
}

/// The usage summed over every round.
pub fn usage(outcome: &Outcome) -> Value {
    let (mut p, mut c) = (0u64, 0u64);
    for u in outcome.rounds.iter().filter_map(|r| r.usage) {
        p = p.saturating_add(u.prompt_tokens.unwrap_or(0));
        c = c.saturating_add(u.completion_tokens.unwrap_or(0));
    }
    json!({"prompt_tokens": p, "completion_tokens": c, "total_tokens": p.saturating_add(c)})
}

/// The `vouch` object set beside a completion: outcome, source, pass,
/// repairs, findings, problems (for a fallback: why the model's answers were
/// refused), the contract, and every round (latency, tokens, verdict).
pub fn vouch_object(outcome: &Outcome, contract: &str) -> Value {
    json!({
        "contract": contract,
        "outcome": outcome.outcome(),
        "source": outcome.source().as_str(),
        "pass": outcome.is_pass(),
        "repairs": outcome.repairs(),
        "findings": outcome.findings(),
        "problems": outcome.problems,
        "rounds": outcome.rounds.iter().map(Round::to_json).collect::<Vec<_>>(),
    })
}

/// The refusal as the error object of a 422 (or of a stream's last event):
/// `type` `vouch_refused`, `code` the first problem's, `message` naming
/// every problem, `problems` and `rounds` in full.
pub fn refusal(outcome: &Outcome, contract: &str) -> Value {
    let code = outcome.problems.first().map_or("refused", vouch_llm::AskProblem::code);
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
    json!({"error": {
        "message": message,
        "type": "vouch_refused",
        "param": null,
        "code": code,
        "class": outcome.class().map(|c| c.as_str()),
        "contract": contract,
        "problems": outcome.problems,
        "rounds": outcome.rounds.iter().map(Round::to_json).collect::<Vec<_>>(),
    }})
}

/// A whole chat completion carrying `content` (the vouched JSON).
pub fn completion(id: &str, created: u64, model: &str, content: &str, outcome: &Outcome, contract: &str) -> Value {
    json!({
        "id": id,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": content, "refusal": null},
            "logprobs": null,
            "finish_reason": "stop",
        }],
        "usage": usage(outcome),
        "vouch": vouch_object(outcome, contract),
    })
}

/// One chunk of a streamed completion.
pub fn chunk(id: &str, created: u64, model: &str, delta: Value, finish: Option<&str>) -> Value {
    json!({
        "id": id,
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}],
    })
}

/// A Server-Sent Event with this JSON as data, scrubbed.
pub fn sse(data: &Value, scrub: &Scrubber) -> String {
    format!("data: {}\n\n", scrub.scrub(&vouch::to_json_string(data)))
}
