//! One streamed round: read the Server-Sent Events of a chat completion
//! (`stream: true`) as they arrive, feed every content delta to the
//! contract's [`vouch::StreamCheck`], and drop the request at the first
//! [`vouch::Progress::Refused`]. A stream read to its end is judged as a
//! whole completion is ([`completion::screen`], then the check's verdict,
//! which is [`vouch::Contract::check`]'s).

use serde_json::Value;
use tokio::time::timeout_at;
use vouch::{Contract, Progress};

use crate::completion::{self, Completion, Judged, EXCERPT};
use crate::forward::{Relay, Relayed};
use crate::http::{next_piece_by, Failure, Opened, ReadError, Request, Retry, MAX_BODY};
use crate::outcome::{Streamed, Usage};
use crate::problem::{AskProblem, UpstreamCode, UpstreamProblem};
use crate::scrub::{excerpt, PrefixSearch, Scrubber};
use crate::sse::{Decoder, Event, SseError};

/// The largest event (or line) read: a chunk is a few hundred bytes.
pub(crate) const MAX_EVENT: usize = 1024 * 1024;
/// The deepest nesting read in a chunk.
const MAX_DEPTH: usize = 64;

/// What a streamed round came to.
pub(crate) struct StreamEnd {
    pub usage: Option<Usage>,
    pub finish_reason: Option<String>,
    /// The content received (not yet scrubbed), when any came.
    pub content: Option<String>,
    pub stats: Streamed,
    pub end: End,
}

/// A judgement of the reply, or a failure of the stream.
pub(crate) enum End {
    Judged(Judged),
    Failed(Failure),
}

/// Everything the deltas said so far.
#[derive(Default)]
struct Said {
    content: Option<String>,
    refusal: String,
    reasoning: String,
    tools: Option<Vec<String>>,
    finish_reason: Option<String>,
    usage: Option<Usage>,
}

impl Said {
    /// Where the API key is in what was said, if it is (split across deltas included).
    fn secret(&self, scrub: &Scrubber) -> Option<String> {
        let tools = self.tools.as_ref().map(|t| t.join("\n")).unwrap_or_default();
        let places = [
            (self.content.as_deref().unwrap_or(""), "the streamed content"),
            (&self.refusal, "the streamed refusal"),
            (&self.reasoning, "the streamed reasoning"),
            (&tools, "the streamed tool calls"),
            (self.finish_reason.as_deref().unwrap_or(""), "the finish_reason"),
        ];
        places.iter().find(|(text, _)| scrub.holds_secret(text.as_bytes())).map(|(_, place)| (*place).to_owned())
    }

    fn completion(&self, scrub: &Scrubber) -> Completion {
        let secret = self.secret(scrub);
        let tool_calls = self
            .tools
            .clone()
            .or_else(|| matches!(self.finish_reason.as_deref(), Some("tool_calls" | "function_call")).then(Vec::new));
        let text = |t: &str| (!t.trim().is_empty()).then(|| t.to_owned());
        Completion {
            content: self.content.clone(),
            refusal: text(&self.refusal),
            tool_calls,
            reasoning: text(&self.reasoning),
            finish_reason: self.finish_reason.clone(),
            usage: self.usage,
            secret,
        }
    }
}

/// One chunk's delta.
#[derive(Default)]
struct Delta {
    content: Option<String>,
    refusal: Option<String>,
    reasoning: Option<String>,
    /// Tool calls in this delta (names, empty for nameless), if any.
    tools: Option<Vec<String>>,
    finish_reason: Option<String>,
    usage: Option<Usage>,
}

/// What one event is.
enum Item {
    Done,
    Chunk(Delta),
}

/// Why an event ends the stream.
enum Bad {
    /// A broken event, or an error event.
    Upstream(UpstreamProblem),
    /// The event holds the API key (where).
    Secret(String),
}

/// The caller went away while the reply streamed.
fn cancelled() -> Failure {
    Failure {
        problem: UpstreamProblem::new(
            UpstreamCode::Cancelled,
            "a caller to hand the reply to",
            "the caller went away",
            "the caller went away while the reply streamed: the upstream request was dropped",
        ),
        retry: Retry::No,
    }
}

fn malformed(sentence: &str, got: String) -> Bad {
    Bad::Upstream(malformed_problem(sentence, got))
}

fn malformed_problem(sentence: &str, got: String) -> UpstreamProblem {
    UpstreamProblem::new(
        UpstreamCode::StreamMalformed,
        "Server-Sent Events of chat completion chunks",
        got,
        &format!("the stream is malformed: {sentence}"),
    )
}

fn stream_error(said: &str, scrub: &Scrubber) -> Bad {
    let said = excerpt(&scrub.scrub(said), EXCERPT);
    Bad::Upstream(UpstreamProblem::new(
        UpstreamCode::StreamError,
        "a streamed reply",
        said.clone(),
        &format!("the upstream sent an error in the stream: {said}"),
    ))
}

/// Read one event, strictly (`vouch::read_json`: a repeated key anywhere is
/// a broken event, as in a whole completion).
fn interpret(event: &Event, scrub: &Scrubber) -> Result<Item, Bad> {
    let shown = || excerpt(&scrub.scrub(&String::from_utf8_lossy(&event.data)), EXCERPT);
    if scrub.holds_secret(&event.data) {
        return Err(Bad::Secret("an event of the stream".to_owned()));
    }
    let Ok(text) = std::str::from_utf8(&event.data) else {
        return Err(malformed("an event's data is not UTF-8 text", shown()));
    };
    if event.name.as_deref() == Some("error") {
        return Err(stream_error(text, scrub));
    }
    if text.trim() == "[DONE]" {
        return Ok(Item::Done);
    }
    let doc = match vouch::read_json(text, MAX_DEPTH) {
        Ok(doc) => doc,
        Err(e) if e.code == vouch::ProblemCode::DuplicateKey => {
            let name = e.path.rsplit('/').next().unwrap_or_default().replace("~1", "/").replace("~0", "~");
            let at = if e.path.is_empty() { "(root)".to_owned() } else { e.path.clone() };
            let sentence = format!(
                "an event repeats the key {:?} at {} (a reader keeps the first or the last: the chunk is ambiguous)",
                excerpt(&scrub.scrub(&name), 60),
                excerpt(&scrub.scrub(&at), 120),
            );
            return Err(malformed(&sentence, shown()));
        }
        Err(e) => {
            let sentence = format!("an event's data is not JSON: {}", excerpt(&scrub.scrub(&e.message), EXCERPT));
            return Err(malformed(&sentence, shown()));
        }
    };
    if let Some(place) = completion::secret_place(&doc, scrub) {
        return Err(Bad::Secret(format!("an event of the stream, at {place}")));
    }
    let Some(obj) = doc.as_object() else {
        return Err(malformed("an event's data is not a chat completion chunk (not an object)", shown()));
    };
    if let Some(err) = obj.get("error").filter(|e| !e.is_null()) {
        let said = err
            .get("message")
            .and_then(Value::as_str)
            .or_else(|| err.as_str())
            .map_or_else(|| err.to_string(), str::to_owned);
        return Err(stream_error(&said, scrub));
    }
    let usage = obj.get("usage").filter(|u| u.is_object()).map(Usage::from_json);
    let choice = match obj.get("choices") {
        Some(Value::Array(choices)) => match completion::the_choice(choices) {
            Ok(choice) => choice,
            Err(why) => return Err(malformed(&format!("an event {why}"), shown())),
        },
        None if usage.is_some() => None,
        _ => return Err(malformed("an event is not a chat completion chunk (no choices)", shown())),
    };
    let mut delta = Delta { usage, ..Delta::default() };
    let Some(choice) = choice else { return Ok(Item::Chunk(delta)) };
    let Some(choice) = choice.as_object() else {
        return Err(malformed("an event's choices[0] is not an object", shown()));
    };
    delta.finish_reason = match choice.get("finish_reason") {
        None | Some(Value::Null) => None,
        Some(Value::String(f)) => Some(f.clone()),
        Some(_) => return Err(malformed("an event's finish_reason is not text", shown())),
    };
    let d = match choice.get("delta") {
        None | Some(Value::Null) => return Ok(Item::Chunk(delta)),
        Some(Value::Object(d)) => d,
        Some(_) => return Err(malformed("an event's choices[0].delta is not an object", shown())),
    };
    delta.content = match d.get("content") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Array(parts)) => {
            let mut text = String::new();
            for part in parts {
                let Some(t) = part.get("text").and_then(Value::as_str) else {
                    return Err(malformed("an event's delta.content has a part that is not text", shown()));
                };
                text.push_str(t);
            }
            Some(text)
        }
        Some(_) => return Err(malformed("an event's delta.content is not text", shown())),
    };
    delta.refusal = d.get("refusal").and_then(Value::as_str).map(str::to_owned);
    delta.reasoning =
        ["reasoning_content", "reasoning"].iter().find_map(|k| d.get(*k).and_then(Value::as_str)).map(str::to_owned);
    if let Some(Value::Array(calls)) = d.get("tool_calls") {
        if !calls.is_empty() {
            let names = calls
                .iter()
                .map(|c| c.get("function").and_then(|f| f.get("name")).and_then(Value::as_str).unwrap_or(""))
                .map(str::to_owned)
                .collect();
            delta.tools = Some(names);
        }
    }
    if let Some(call) = d.get("function_call").filter(|c| c.is_object()) {
        let name = call.get("name").and_then(Value::as_str).unwrap_or("").to_owned();
        delta.tools.get_or_insert_with(Vec::new).push(name);
    }
    Ok(Item::Chunk(delta))
}

/// Read a 2xx stream to its end, or until the check refuses it; the
/// response (and with it the connection) is dropped when this returns.
///
/// With a `relay`, every content piece the check takes is sent on to it
/// before the next is read; when its receiver is gone the stream is dropped
/// (`cancelled`).
pub(crate) async fn read(
    request: &Request<'_>,
    opened: Opened,
    contract: &Contract,
    scrub: &Scrubber,
    relay: Option<&Relay>,
) -> StreamEnd {
    let Opened { mut response, end, by_deadline, .. } = opened;
    let mut decoder = Decoder::new(MAX_EVENT);
    let mut check = contract.stream();
    let mut prefix = scrub.prefix_search();
    let mut said = Said::default();
    let mut stats = Streamed::default();
    let mut events = Vec::new();
    let mut total: usize = 0;
    let mut done = false;
    let mut broke: Option<reqwest::Error> = None;

    // `finish` builds the round's end from what was said, the stats and an End.
    let finish = |said: Said, stats: Streamed, end: End| StreamEnd {
        usage: said.usage,
        finish_reason: said.finish_reason,
        content: said.content,
        stats,
        end,
    };
    let fail = |problem: UpstreamProblem| End::Failed(Failure { problem, retry: Retry::Yes(None) });

    'read: loop {
        let (until, silent) = next_piece_by(end, request.timeouts.idle);
        let piece = match timeout_at(until, response.chunk()).await {
            Err(_) => {
                let e = if silent { ReadError::Idle } else { ReadError::Time };
                let failure = request.read_failure(e, by_deadline);
                return finish(said, stats, End::Failed(failure));
            }
            Ok(Err(e)) => {
                broke = Some(e);
                break;
            }
            Ok(Ok(None)) => break,
            Ok(Ok(Some(piece))) => piece,
        };
        total = total.saturating_add(piece.len());
        if total > MAX_BODY {
            let p = malformed_problem(
                &format!("the stream is larger than {MAX_BODY} bytes"),
                format!("more than {MAX_BODY} bytes"),
            );
            return finish(said, stats, fail(p));
        }
        if let Err(e) = decoder.push(&piece, &mut events) {
            let p = match e {
                SseError::TooLarge(n) => {
                    malformed_problem(&format!("an event is larger than {n} bytes"), format!("more than {n} bytes"))
                }
                SseError::UnknownField(f) => {
                    let f = excerpt(&scrub.scrub(&f), 60);
                    malformed_problem(&format!("a line is not a Server-Sent Events field: {f:?}"), f)
                }
            };
            return finish(said, stats, fail(p));
        }
        for event in events.drain(..) {
            let delta = match interpret(&event, scrub) {
                Ok(Item::Done) => {
                    done = true;
                    break 'read;
                }
                Ok(Item::Chunk(delta)) => delta,
                Err(Bad::Upstream(p)) => return finish(said, stats, fail(p)),
                Err(Bad::Secret(place)) => {
                    said.content = None;
                    return finish(said, stats, End::Judged(completion::secret_refused(&place)));
                }
            };
            if let Some(u) = delta.usage {
                said.usage = Some(u);
                if let Some(n) = u.completion_tokens {
                    stats.tokens = n;
                    stats.tokens_from_usage = true;
                }
            }
            if let Some(f) = delta.finish_reason {
                said.finish_reason = Some(f);
            }
            if let Some(r) = delta.refusal {
                said.refusal.push_str(&r);
            }
            if let Some(r) = delta.reasoning {
                said.reasoning.push_str(&r);
            }
            if let Some(t) = delta.tools {
                said.tools.get_or_insert_with(Vec::new).extend(t);
            }
            let Some(piece) = delta.content else { continue };
            said.content.get_or_insert_with(String::new).push_str(&piece);

            if piece.is_empty() {
                continue;
            }
            stats.bytes = stats.bytes.saturating_add(piece.len());
            stats.deltas = stats.deltas.saturating_add(1);
            if !stats.tokens_from_usage {
                stats.tokens = stats.deltas;
            }
            if check.feed(piece.as_bytes()) == Progress::Refused {
                stats.decided_at_bytes = check.decided_at();
                stats.decided_at_tokens = Some(stats.tokens);
                stats.dropped = true;
                let problems: Vec<AskProblem> = check.problems().iter().cloned().map(AskProblem::Contract).collect();
                // Every way of not answering comes first, as for a whole
                // completion (a refusal, a tool call, the key in the reply).
                let mut c = said.completion(scrub);
                c.finish_reason = None;
                let judged = match completion::screen(c, scrub) {
                    Err(judged) => judged,
                    Ok(content) => Judged::Refused { problems, reply: Some(content) },
                };
                if said.secret(scrub).is_some() {
                    said.content = None;
                }
                return finish(said, stats, End::Judged(judged));
            }
            if let Some(relay) = relay {
                let content = said.content.as_deref().unwrap_or("");
                match relay_ready(content, stats.relayed, scrub, &mut prefix) {
                    Ready::Secret => {
                        said.content = None;
                        stats.dropped = true;
                        let judged = completion::secret_refused("the streamed content");
                        return finish(said, stats, End::Judged(judged));
                    }
                    Ready::Upto(upto) => {
                        if !send(relay, content, &mut stats, upto).await {
                            return finish(said, stats, End::Failed(cancelled()));
                        }
                    }
                }
            }
        }
    }
    drop(response);
    if !done && said.finish_reason.is_none() {
        let sentence = match (&broke, decoder.pending()) {
            (Some(e), _) => format!(
                "the connection broke after {total} bytes, with neither [DONE] nor a finish_reason: {}",
                excerpt(&scrub.scrub(&crate::http::innermost(e)), EXCERPT)
            ),
            (None, true) => {
                format!("the stream ended inside an event after {total} bytes, with neither [DONE] nor a finish_reason")
            }
            (None, false) => format!("the stream ended after {total} bytes with neither [DONE] nor a finish_reason"),
        };
        let got = said.content.as_deref().map_or_else(|| "no end".to_owned(), |c| excerpt(&scrub.scrub(c), 80));
        let p = UpstreamProblem::new(
            UpstreamCode::StreamIncomplete,
            "a stream ending with [DONE] or a finish_reason",
            got,
            &format!("the stream is incomplete: {sentence}"),
        );
        return finish(said, stats, fail(p));
    }
    if !stats.dropped {
        stats.reply_tokens = said.usage.and_then(|u| u.completion_tokens);
    }
    let c = said.completion(scrub);
    let judged = match completion::screen(c, scrub) {
        Err(judged) => judged,
        Ok(content) => completion::by_contract(check.finish(), content),
    };
    if said.secret(scrub).is_some() {
        said.content = None;
    }
    if let (Some(relay), Judged::Accepted(_), Some(content)) = (relay, &judged, said.content.as_deref()) {
        // Accepted: what was held back goes on too.
        if !send(relay, content, &mut stats, content.len()).await {
            return finish(said, stats, End::Failed(cancelled()));
        }
    }
    finish(said, stats, End::Judged(judged))
}

/// How much of the content may be relayed now.
enum Ready {
    /// Up to this byte.
    Upto(usize),
    /// The content holds the key: nothing more goes on.
    Secret,
}

/// With a key to keep, the new part of the content (and the scrubber's
/// longest form before it) is looked at for the key in every form the
/// scrubber covers, and an end that could still grow into the key is held
/// back (a key split across pieces is never half sent).
fn relay_ready(content: &str, relayed: usize, scrub: &Scrubber, prefix: &mut PrefixSearch<'_>) -> Ready {
    let window = scrub.window();
    if window == 0 {
        return Ready::Upto(content.len());
    }
    let from = floor_char(content, relayed.saturating_sub(window));
    if scrub.holds_secret(content.get(from..).unwrap_or(content).as_bytes()) {
        return Ready::Secret;
    }
    let start = relayed.max(content.len().saturating_sub(window));
    let upto = prefix.open_prefix(content.as_bytes(), start).unwrap_or(content.len());
    Ready::Upto(floor_char(content, upto))
}

/// The largest char boundary at or before `at`.
fn floor_char(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// Relay `content[relayed..upto]`; false when the receiver is gone.
async fn send(relay: &Relay, content: &str, stats: &mut Streamed, upto: usize) -> bool {
    let Some(piece) = content.get(stats.relayed..upto).filter(|p| !p.is_empty()) else { return true };
    if relay.send(Relayed::Content(piece.to_owned())).await.is_err() {
        stats.dropped = true;
        return false;
    }
    stats.relayed = upto;
    true
}
