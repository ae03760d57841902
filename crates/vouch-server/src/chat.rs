//! `POST /v1/chat/completions`: choose the contract, ask the upstream
//! through vouch-llm (rounds, budget, deadline, fallback), and answer with
//! the vouched completion, a stream of checked chunks, or a 422 refusal.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::body::{Body, Bytes};
use axum::extract::rejection::BytesRejection;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::Response;
use futures_util::stream;
use serde_json::{json, Map, Value};
use tokio::sync::{mpsc, OwnedSemaphorePermit};
use tokio::task::JoinHandle;
use tracing::Instrument as _;
use vouch_llm::{Answer, Forwarded, Limits, Outcome, Relayed, Scrubber};

use crate::catalog::{Entry, InlineContract};
use crate::config::WithoutContract;
use crate::reply::{self, error};
use crate::{ClientKey, Gateway};

/// Headers a request may tighten its ask's limits with.
pub const ROUNDS_HEADER: &str = "x-vouch-rounds";
/// See [`ROUNDS_HEADER`].
pub const TOKENS_HEADER: &str = "x-vouch-max-total-tokens";
/// See [`ROUNDS_HEADER`].
pub const DEADLINE_HEADER: &str = "x-vouch-deadline-ms";
/// Names the contract, over `response_format`.
pub const CONTRACT_HEADER: &str = "x-vouch-contract";

fn now_secs() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

fn bad_request(scrub: &Scrubber, code: &str, message: &str) -> Response {
    error(StatusCode::BAD_REQUEST, "invalid_request_error", code, message, scrub)
}

/// The contract: the header's, else `response_format.json_schema.name` if
/// it names one of the folder's, else the request's own schema (if inline
/// contracts are on), else none.
fn choose(
    g: &Gateway,
    scrub: &Scrubber,
    headers: &HeaderMap,
    body: &Map<String, Value>,
) -> Result<Option<Arc<Entry>>, Box<Response>> {
    let catalog = g.catalog();
    let mut named = headers.get_all(CONTRACT_HEADER).iter();
    if let Some(name) = named.next() {
        if named.next().is_some() {
            // Which one a proxy on the way would keep is not ours to guess (as for a limit).
            return Err(Box::new(bad_request(
                scrub,
                "invalid_contract_header",
                &format!("{CONTRACT_HEADER} is given more than once: name one contract"),
            )));
        }
        let name = name.to_str().unwrap_or("");
        return match catalog.named.get(name) {
            Some(e) => Ok(Some(Arc::clone(e))),
            None => Err(Box::new(error(
                StatusCode::NOT_FOUND,
                "invalid_request_error",
                "unknown_contract",
                &format!("no contract named {:?} (GET /v1/contracts lists them)", excerpt(name)),
                scrub,
            ))),
        };
    }
    let rf = body.get("response_format");
    let js = rf.and_then(|r| r.get("json_schema"));
    let name = js.and_then(|j| j.get("name")).and_then(Value::as_str);
    let schema = js.and_then(|j| j.get("schema"));
    if let Some(e) = name.and_then(|n| catalog.named.get(n)) {
        return Ok(Some(Arc::clone(e)));
    }
    let inline = schema.filter(|s| s.as_object().is_some_and(|o| !o.is_empty()) || s.is_boolean());
    match (inline, name) {
        (Some(schema), _) if g.config.inline_contracts => {
            match g.inline.get_or_compile(schema, &g.config, g.key.as_ref()) {
                InlineContract::Ready(e) => Ok(Some(e)),
                InlineContract::Invalid(errors) => Err(Box::new(bad_request(
                    scrub,
                    "contract_invalid",
                    &format!(
                        "response_format.json_schema.schema is not a contract vouch can enforce: {}",
                        errors.join("; ")
                    ),
                ))),
            }
        }
        (Some(_), _) => Err(Box::new(bad_request(
            scrub,
            "inline_contracts_off",
            "this gateway takes no inline schema: name one of its contracts (GET /v1/contracts)",
        ))),
        (None, Some(n)) => Err(Box::new(error(
            StatusCode::NOT_FOUND,
            "invalid_request_error",
            "unknown_contract",
            &format!("no contract named {:?} and no schema given (GET /v1/contracts lists them)", excerpt(n)),
            scrub,
        ))),
        (None, None) => Ok(None),
    }
}

fn excerpt(s: &str) -> String {
    s.chars().take(64).collect()
}

/// The keys of a request's `vouch` object (`webhook` is a job's: see `jobs`).
const VOUCH_OPTIONS: [&str; 2] = ["fallback", "webhook"];

/// A limit header: a positive integer, or a 400.
fn header_number(scrub: &Scrubber, headers: &HeaderMap, name: &str) -> Result<Option<u64>, Box<Response>> {
    let mut given = headers.get_all(name).iter();
    let Some(v) = given.next() else { return Ok(None) };
    if given.next().is_some() {
        // Which one a proxy on the way would keep is not ours to guess.
        return Err(Box::new(bad_request(scrub, "invalid_limit", &format!("{name} is given more than once"))));
    }
    match v.to_str().ok().and_then(|t| t.trim().parse::<u64>().ok()).filter(|n| *n > 0) {
        Some(n) => Ok(Some(n)),
        None => Err(Box::new(bad_request(scrub, "invalid_limit", &format!("{name} must be a positive integer")))),
    }
}

/// The entry's limits, tightened by the request's headers.
fn limits(scrub: &Scrubber, headers: &HeaderMap, entry: &Entry) -> Result<Limits, Box<Response>> {
    let rounds = header_number(scrub, headers, ROUNDS_HEADER)?;
    let tokens = header_number(scrub, headers, TOKENS_HEADER)?;
    let deadline = header_number(scrub, headers, DEADLINE_HEADER)?;
    let asked = Limits {
        rounds: rounds.map_or(u32::MAX, |r| u32::try_from(r).unwrap_or(u32::MAX)),
        max_total_tokens: tokens,
        deadline: deadline.map(Duration::from_millis),
    };
    Ok(asked.capped_by(entry.limits))
}

/// Aborts the ask's task when the response (and with it the client) is gone.
struct AbortOnDrop(JoinHandle<Outcome>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A chat request read, its contract chosen and its limits set.
pub(crate) struct Ask {
    pub(crate) entry: Arc<Entry>,
    pub(crate) forwarded: Forwarded,
    pub(crate) fallback: Option<Value>,
    key: Option<Arc<ClientKey>>,
    model: String,
    max_tokens: Option<u64>,
}

/// What a chat request comes to before anything is sent upstream.
pub(crate) enum Prepared {
    /// Asked under a contract.
    Ask(Box<Ask>),
    /// No contract, and `without_contract = "pass"`: forwarded unchecked.
    Pass { key: Option<Arc<ClientKey>>, body: Map<String, Value> },
}

/// Read a chat request and choose its contract: every refusal that needs
/// no upstream (a body that is not a chat request, an unknown contract, a
/// bad limit header) is decided here, the same for `/v1/chat/completions`
/// and for a job, when it is posted and again when it runs.
pub(crate) fn prepare(
    g: &Gateway,
    headers: &HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Prepared, Box<Response>> {
    let key = g.client_key(headers)?;
    // Every answer to this request is scrubbed of the client's key too.
    let scrub = key.as_ref().map_or(&g.scrub, |k| &k.answers);
    let mut body = g.request_object(body)?;
    if !body.get("messages").is_some_and(Value::is_array) {
        return Err(Box::new(bad_request(scrub, "invalid_body", "messages must be an array")));
    }
    // `n` absent, null or the integer 1: anything else (2, 2.0, "2", true) is
    // refused, not forwarded for a lenient upstream to read as 2.
    if body.get("n").is_some_and(|n| !n.is_null() && n.as_u64() != Some(1)) {
        return Err(Box::new(bad_request(scrub, "unsupported_n", "vouch answers one choice per request: n must be 1")));
    }
    if body.get("stream").is_some_and(|s| !s.is_boolean() && !s.is_null()) {
        return Err(Box::new(bad_request(scrub, "invalid_body", "stream must be true or false")));
    }
    let fallback = match body.remove("vouch") {
        None => None,
        Some(Value::Object(v)) if v.keys().any(|k| !VOUCH_OPTIONS.contains(&k.as_str())) => {
            // A misspelt key (`fallbak`) would otherwise drop the fallback silently.
            let unknown = v.keys().find(|k| !VOUCH_OPTIONS.contains(&k.as_str())).map(|k| excerpt(k));
            return Err(Box::new(bad_request(
                scrub,
                "invalid_body",
                &format!("vouch holds fallback (and, for a job, webhook), not {:?}", unknown.unwrap_or_default()),
            )));
        }
        Some(Value::Object(mut v)) => v.remove("fallback").filter(|f| !f.is_null()),
        Some(_) => {
            return Err(Box::new(bad_request(scrub, "invalid_body", "vouch must be an object ({\"fallback\": …})")))
        }
    };
    let entry = match choose(g, scrub, headers, &body)? {
        Some(e) => e,
        None => {
            return match g.config.without_contract {
                WithoutContract::Refuse => Err(Box::new(bad_request(
                    scrub,
                    "contract_required",
                    "this gateway checks every reply against a contract: name one in response_format.json_schema.name \
                     or the x-vouch-contract header, or send its JSON Schema (GET /v1/contracts lists them)",
                ))),
                WithoutContract::Pass => Ok(Prepared::Pass { key, body }),
            };
        }
    };
    let limits = limits(scrub, headers, &entry)?;
    let forwarded_headers: Vec<(String, String)> = headers
        .iter()
        .filter(|(n, _)| g.config.forwards(n.as_str()))
        .filter_map(|(n, v)| v.to_str().ok().map(|v| (n.as_str().to_owned(), v.to_owned())))
        .collect();
    let model = body.get("model").and_then(Value::as_str).map_or_else(|| g.config.default_model.clone(), str::to_owned);
    let max_tokens = ["max_completion_tokens", "max_tokens"].iter().find_map(|k| body.get(*k).and_then(Value::as_u64));
    let forwarded = Forwarded {
        body,
        limits,
        instructions: g.config.instructions,
        headers: forwarded_headers,
        key: key.as_ref().map(|k| k.forwarded.clone()),
    };
    Ok(Prepared::Ask(Box::new(Ask { entry, forwarded, fallback, key, model, max_tokens })))
}

/// The chat completions route.
pub async fn chat(g: Arc<Gateway>, headers: HeaderMap, body: Result<Bytes, BytesRejection>, id: String) -> Response {
    let Ok(permit) = Arc::clone(&g.slots).try_acquire_owned() else {
        g.metrics.limit("concurrency");
        let mut r = error(
            StatusCode::SERVICE_UNAVAILABLE,
            "server_error",
            "overloaded",
            "the gateway is at its concurrency limit; retry shortly",
            &g.scrub,
        );
        r.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        return r;
    };
    match prepare(&g, &headers, body) {
        Err(r) => *r,
        Ok(Prepared::Pass { key, body }) => crate::pass::forward(&g, key.as_deref(), &headers, body, permit).await,
        Ok(Prepared::Ask(ask)) => answer(g, *ask, &id, Some(permit)).await,
    }
}

/// Ask upstream and answer: the vouched completion, a stream, or a 422.
/// `permit` is the request's concurrency slot (a job runs on a worker's).
pub(crate) async fn answer(g: Arc<Gateway>, ask: Ask, id: &str, permit: Option<OwnedSemaphorePermit>) -> Response {
    let Ask { entry, forwarded, fallback, key, model, max_tokens } = ask;
    let call = Call { g, entry, key, id: format!("chatcmpl-vouch-{id}"), model, created: now_secs(), max_tokens };
    if forwarded.streams() {
        call.stream(forwarded, fallback, permit).await
    } else {
        let outcome = call.entry.asker.ask_forwarded(forwarded, fallback.as_ref(), None).await;
        drop(permit);
        call.whole(&outcome)
    }
}

/// One request being answered.
struct Call {
    g: Arc<Gateway>,
    entry: Arc<Entry>,
    /// The client's own upstream key (`pass_client_key`).
    key: Option<Arc<ClientKey>>,
    id: String,
    model: String,
    created: u64,
    max_tokens: Option<u64>,
}

fn accepted_json(outcome: &Outcome) -> Option<std::borrow::Cow<'_, str>> {
    match &outcome.answer {
        Answer::Model(a) | Answer::Fallback(a) => Some(a.json()),
        Answer::Refused => None,
    }
}

impl Call {
    /// The scrubber of this call's answers: the gateway's, or with the
    /// client's own key.
    fn scrub(&self) -> &Scrubber {
        self.key.as_ref().map_or(&self.g.scrub, |k| &k.answers)
    }

    fn marked(&self, mut r: Response, outcome: &Outcome) -> Response {
        r.headers_mut().insert("x-vouch-outcome", HeaderValue::from_static(reply::outcome_kind(outcome)));
        if let Ok(v) = HeaderValue::from_str(&self.entry.name) {
            r.headers_mut().insert("x-vouch-contract", v);
        }
        r
    }

    /// A whole (not streamed) answer.
    fn whole(&self, outcome: &Outcome) -> Response {
        self.g.metrics.ask(&self.entry.name, outcome, self.max_tokens);
        let r = match accepted_json(outcome) {
            Some(content) => {
                let body = reply::completion(&self.id, self.created, &self.model, &content, outcome, &self.entry.name);
                reply::json_response(StatusCode::OK, &body, self.scrub())
            }
            None => reply::json_response(
                StatusCode::UNPROCESSABLE_ENTITY,
                &reply::refusal(outcome, &self.entry.name),
                self.scrub(),
            ),
        };
        self.marked(r, outcome)
    }

    /// A streamed answer: nothing is sent until the first piece the
    /// streaming check took (so a reply refused at once, or an upstream
    /// that fails, is a plain 422); then each piece as a chunk, and at the
    /// end either the vouch object and `[DONE]`, or an error event.
    async fn stream(
        self,
        forwarded: Forwarded,
        fallback: Option<Value>,
        permit: Option<OwnedSemaphorePermit>,
    ) -> Response {
        let (tx, mut rx) = mpsc::channel::<Relayed>(64);
        let entry = Arc::clone(&self.entry);
        let ask = async move { entry.asker.ask_forwarded(forwarded, fallback.as_ref(), Some(tx)).await };
        // The ask outlives this handler (it feeds the stream): it keeps the request's span.
        let task = AbortOnDrop(tokio::spawn(ask.instrument(tracing::Span::current())));
        let first = rx.recv().await;
        let Some(Relayed::Content(first)) = first else {
            // The ask ended with nothing relayed.
            let outcome = match finish(task).await {
                Some(o) => o,
                None => {
                    return error(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        "server_error",
                        "internal",
                        "the ask failed",
                        self.scrub(),
                    )
                }
            };
            // Accepted with nothing relayed (the fallback, or an upstream that
            // answered one JSON document, not a stream): still a stream, as
            // asked: an SDK iterating it would otherwise see no chunk and no error.
            if accepted_json(&outcome).is_some() {
                return self.one_chunk_stream(&outcome, permit);
            }
            return self.whole(&outcome);
        };
        let state = Streaming {
            call: self,
            rx,
            task: Some(task),
            pending: vec![first],
            role_sent: false,
            done: false,
            _permit: permit,
        };
        let events = stream::unfold(state, |mut s| async move {
            let text = s.next_events().await?;
            Some((Ok::<_, std::convert::Infallible>(Bytes::from(text)), s))
        });
        let mut r = Response::new(Body::from_stream(events));
        let h = r.headers_mut();
        h.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        h.insert("x-accel-buffering", HeaderValue::from_static("no"));
        r
    }

    /// An answer accepted before anything was relayed (every round refused
    /// and the fallback taken, marked `source: fallback`; or an upstream that
    /// answered a stream with one JSON document): sent as one chunk.
    fn one_chunk_stream(&self, outcome: &Outcome, permit: Option<OwnedSemaphorePermit>) -> Response {
        self.g.metrics.ask(&self.entry.name, outcome, self.max_tokens);
        let content = accepted_json(outcome).unwrap_or_default();
        let mut text = String::new();
        let first = reply::chunk(&self.id, self.created, &self.model, reply::Delta::content(&content, true), None);
        reply::sse(&mut text, &first, self.scrub());
        self.last_events(&mut text, outcome);
        drop(permit);
        let mut r = Response::new(Body::from(text));
        r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
        self.marked(r, outcome)
    }

    /// The end of an accepted stream: the finish chunk, the usage and vouch
    /// object, `[DONE]`.
    fn last_events(&self, text: &mut String, outcome: &Outcome) {
        let stop = reply::chunk(&self.id, self.created, &self.model, reply::Delta::default(), Some("stop"));
        reply::sse(text, &stop, self.scrub());
        let tail = reply::last_chunk(&self.id, self.created, &self.model, outcome, &self.entry.name);
        reply::sse(text, &tail, self.scrub());
        text.push_str("data: [DONE]\n\n");
    }
}

async fn finish(mut task: AbortOnDrop) -> Option<Outcome> {
    (&mut task.0).await.ok()
}

/// A stream being relayed.
struct Streaming {
    call: Call,
    rx: mpsc::Receiver<Relayed>,
    task: Option<AbortOnDrop>,
    pending: Vec<String>,
    role_sent: bool,
    done: bool,
    _permit: Option<OwnedSemaphorePermit>,
}

impl Streaming {
    /// The next events to send, or `None` at the end.
    async fn next_events(&mut self) -> Option<String> {
        if self.done {
            return None;
        }
        if self.pending.is_empty() {
            match self.rx.recv().await {
                Some(Relayed::Content(piece)) => self.pending.push(piece),
                None => return Some(self.end().await),
            }
        }
        // Whatever else has come meanwhile goes in the same write.
        while let Ok(Relayed::Content(piece)) = self.rx.try_recv() {
            self.pending.push(piece);
        }
        let c = &self.call;
        let mut text = String::new();
        for piece in self.pending.drain(..) {
            let chunk = reply::chunk(&c.id, c.created, &c.model, reply::Delta::content(&piece, !self.role_sent), None);
            self.role_sent = true;
            reply::sse(&mut text, &chunk, c.scrub());
        }
        Some(text)
    }

    async fn end(&mut self) -> String {
        self.done = true;
        let c = &self.call;
        let Some(outcome) = (match self.task.take() {
            Some(t) => finish(t).await,
            None => None,
        }) else {
            let e = json!({"error": {"message": "the ask failed", "type": "server_error", "param": null, "code": "internal"}});
            let mut text = String::new();
            reply::sse(&mut text, &e, c.scrub());
            return text;
        };
        c.g.metrics.ask(&c.entry.name, &outcome, c.max_tokens);
        let mut text = String::new();
        if outcome.is_accepted() {
            c.last_events(&mut text, &outcome);
            return text;
        }
        // Refused (a fallback cannot follow a part of a model reply: it is
        // named in the error for the client that wants it).
        let fallback = if outcome.is_fallback() { outcome.value() } else { None };
        let e = reply::refusal(&outcome, &c.entry.name).with_fallback(fallback);
        reply::sse(&mut text, &e, c.scrub());
        text
    }
}
