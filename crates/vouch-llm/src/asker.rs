//! The loop: ask, check, ask again told why, within a budget; then refuse,
//! and keep the last good value.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue, AUTHORIZATION};
use reqwest::{Client, Url};
use serde_json::{json, Map, Value};
use tokio::time::Instant;
use tracing::{field, Instrument as _};
use vouch::{Contract, Provider, Verdict};

use crate::completion::{self, Judged};
use crate::config::{Config, Limits, Mode};
use crate::forward::{Forwarded, Relay};
use crate::http::{show_duration, Failure, Request, Retry};
use crate::message::{Content, Message, Role};
use crate::outcome::{Answer, Outcome, Round, RoundVerdict, Usage};
use crate::problem::{AskProblem, UpstreamCode, UpstreamProblem};
use crate::reask::reask_text;
use crate::scrub::{excerpt, shown_url, Scrubber};
use crate::streaming::{self, End};

/// Why an [`Asker`] could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SetupError {
    /// [`Mode::Schema`], and OpenAI strict structured outputs cannot express
    /// the contract without weakening it.
    #[error("the contract cannot be sent to OpenAI strict structured outputs without weakening it: {0}")]
    Export(#[from] vouch::ExportError),
    /// [`Mode::Schema`], and the schema name is not one OpenAI takes (see
    /// [`vouch::is_schema_name`]).
    #[error("the schema name {0:?} is not one OpenAI takes (1 to 64 ASCII letters, digits, `_` or `-`)")]
    SchemaName(String),
    /// The base URL does not parse, or is not http(s).
    #[error("the base URL is not an http(s) URL: {0}")]
    BaseUrl(String),
    /// An extra header's name or value is not valid in HTTP (the value is not shown).
    #[error("the header {0:?} is not a valid HTTP header (its value is not shown)")]
    Header(String),
    /// The API key holds characters an HTTP header cannot carry (it is not shown).
    #[error("the API key cannot be sent in an HTTP header (it holds a character a header cannot carry)")]
    Key,
    /// `rounds` is 0.
    #[error("rounds must be at least 1")]
    NoRounds,
    /// The HTTP client could not be built.
    #[error("cannot build the HTTP client: {0}")]
    Client(String),
}

/// A per-round hook: called with every round as it ends.
pub type RoundHook = Arc<dyn Fn(&Round) + Send + Sync>;

/// Asks an OpenAI-compatible model for JSON and vouches for the answer:
/// built once from a [`Contract`] and a [`Config`], then [`Asker::ask`]ed
/// as often as needed, from as many tasks as needed (`Send + Sync`; share
/// it in an `Arc`).
///
/// Each ask runs up to `rounds` requests. The system prompt carries the
/// contract's instructions; every reply is checked by the contract. After a
/// refused reply the model is asked again in the same conversation, told
/// every problem; a request the upstream failed (5xx, 429, a broken
/// connection, a timeout) is repeated after `Retry-After` or a backoff.
/// The first accepted reply ends the ask. A token budget and a deadline
/// cap the whole exchange. If every round is refused the outcome is
/// refused with every round's problems, or carries the caller's fallback
/// (last known good value), checked by the contract and marked as such.
///
/// Tracing: a span `ask` per ask and a span `round` per round, with the
/// round's `latency_ms`, tokens, `http_status`, `finish_reason` and
/// `outcome` recorded on it and on a `round finished` event. The API key is
/// never logged, shown or returned.
///
/// ```no_run
/// use vouch::Contract;
/// use vouch_llm::{ApiKey, Asker, Config, ImageUrl, Message};
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let contract = Contract::from_json_str(&std::fs::read_to_string("examples/contracts/plate.json")?)?;
/// let mut config = Config::new("https://api.openai.com/v1", "gpt-4o-mini");
/// config.api_key = ApiKey::from_env("OPENAI_API_KEY");
/// let asker = Asker::new(contract, config)?.with_hook(|round| {
///     eprintln!("round {}: {} in {:?}", round.index, round.outcome(), round.latency);
/// });
///
/// let photo = ImageUrl::from_file(std::path::Path::new("plate.jpg"))?;
/// let last_good = serde_json::json!({"productPresent": false, "productTextPresent": false, "garbledText": false});
/// let outcome = asker
///     .ask_with_fallback(vec![Message::user_with_images("Read back this plate.", vec![photo])], Some(&last_good))
///     .await;
/// match outcome.value() {
///     Some(plate) if outcome.is_pass() => println!("fresh: {plate}"),
///     Some(plate) if outcome.is_fallback() => println!("kept the last good plate: {plate}"),
///     Some(plate) => println!("the model answered, and the gate fails: {plate}"),
///     None => println!("refused: {:?}", outcome.problems),
/// }
/// # Ok(())
/// # }
/// ```
pub struct Asker {
    contract: Contract,
    config: Config,
    client: Client,
    url: Url,
    shown_url: String,
    system_prompt: String,
    response_format: Option<Value>,
    scrub: Scrubber,
    hook: Option<RoundHook>,
}

impl fmt::Debug for Asker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Asker")
            .field("url", &self.shown_url)
            .field("config", &self.config)
            .field("hook", &self.hook.as_ref().map(|_| "Fn(&Round)"))
            .finish_non_exhaustive()
    }
}

/// One ask's requests: what every round sends, and what it may spend.
struct Exchange<'a> {
    /// The request body but `messages` and `response_format`.
    base: Map<String, Value>,
    /// The asker's `response_format` (borrowed: not copied per request).
    response_format: Option<&'a Value>,
    /// The messages so far (re-asks add to them).
    conversation: Vec<Value>,
    limits: Limits,
    stream: bool,
    relay: Option<Relay>,
    /// Headers of this ask's own.
    headers: HeaderMap,
    /// The scrubber of this ask's key: the asker's own, or a forwarded key's.
    scrub: &'a Scrubber,
    /// The most tokens the next round's completion may take: what the token
    /// budget leaves (`None`: no budget). See [`Exchange::serialize`].
    completion_cap: Option<u64>,
}

/// The request fields that limit a completion's tokens: OpenAI's current
/// name (the only one its reasoning models take) and the older one.
const COMPLETION_LIMITS: [&str; 2] = ["max_completion_tokens", "max_tokens"];

impl Exchange<'_> {
    /// The next round's request body, as JSON text (written from its parts,
    /// nothing copied).
    fn body(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_default()
    }
}

impl serde::Serialize for Exchange<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap as _;
        let mut map = serializer.serialize_map(None)?;
        // Under a token budget, a round's completion is capped at what the
        // budget leaves: the limit the request names, lowered to it, or
        // `max_completion_tokens` when it names none.
        let mut capped = false;
        for (k, v) in &self.base {
            match self.completion_cap {
                Some(cap) if COMPLETION_LIMITS.contains(&k.as_str()) => {
                    capped = true;
                    let limit = v.as_u64().map_or(cap, |asked| asked.min(cap));
                    map.serialize_entry(k, &limit)?;
                }
                _ => map.serialize_entry(k, v)?,
            }
        }
        if let (Some(cap), false) = (self.completion_cap, capped) {
            map.serialize_entry(COMPLETION_LIMITS[0], &cap)?;
        }
        if let Some(rf) = self.response_format {
            map.serialize_entry("response_format", rf)?;
        }
        map.serialize_entry("messages", &self.conversation)?;
        map.end()
    }
}

/// A message as the API reads it.
fn message_json(message: &Message) -> Value {
    serde_json::to_value(message).unwrap_or(Value::Null)
}

/// What to do after a round.
enum Next {
    /// Accepted: done.
    Done(vouch::Accepted),
    /// Ask again in the same conversation: add the reply (if any) and the problems.
    Reask(Option<String>),
    /// Send the same request again, after this wait (or a backoff).
    Repeat(Option<Duration>),
    /// Asking again cannot help.
    Stop,
}

fn is_loopback(url: &Url) -> bool {
    let Some(host) = url.host_str() else { return false };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost") || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

impl Asker {
    /// Build an asker: the HTTP client, the system prompt and (in
    /// [`Mode::Schema`]) the `response_format`, once.
    ///
    /// # Errors
    /// A [`SetupError`]: the contract cannot be exported to OpenAI (in
    /// [`Mode::Schema`]; use [`Mode::Json`]), a bad base URL or header, or
    /// `rounds` of 0.
    pub fn new(contract: Contract, config: Config) -> Result<Self, SetupError> {
        if config.rounds == 0 {
            return Err(SetupError::NoRounds);
        }
        let base = config.base_url.trim_end_matches('/');
        let url = Url::parse(&format!("{base}/chat/completions"))
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some())
            .ok_or_else(|| SetupError::BaseUrl(base.to_owned()))?;
        let response_format = match config.mode {
            Mode::Schema if !vouch::is_schema_name(&config.schema_name) => {
                return Err(SetupError::SchemaName(config.schema_name.clone()))
            }
            Mode::Schema => Some(contract.provider_schema(Provider::OpenAi, &config.schema_name)?),
            Mode::Json => Some(json!({"type": "json_object"})),
            Mode::Plain => None,
        };
        let mut headers = HeaderMap::new();
        for (name, value) in &config.headers.0 {
            let n = HeaderName::from_bytes(name.trim().as_bytes()).map_err(|_| SetupError::Header(name.clone()))?;
            let mut v = HeaderValue::from_str(value.trim()).map_err(|_| SetupError::Header(name.clone()))?;
            v.set_sensitive(true);
            headers.insert(n, v);
        }
        if let Some(key) = &config.api_key {
            let mut v = HeaderValue::from_str(&format!("Bearer {}", key.expose())).map_err(|_| SetupError::Key)?;
            v.set_sensitive(true);
            headers.insert(AUTHORIZATION, v);
        }
        let mut builder = Client::builder()
            .default_headers(headers)
            .user_agent(concat!("vouch-llm/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(config.timeouts.connect)
            .redirect(reqwest::redirect::Policy::none());
        if is_loopback(&url) {
            // A server on this machine is never reached through a proxy.
            builder = builder.no_proxy();
        }
        let client = builder.build().map_err(|e| SetupError::Client(e.without_url().to_string()))?;
        let scrub = Scrubber::for_key(config.api_key.as_ref());
        Ok(Self {
            shown_url: shown_url(&url),
            system_prompt: contract.prompt(),
            contract,
            config,
            client,
            url,
            response_format,
            scrub,
            hook: None,
        })
    }

    /// Call `hook` with every round as it ends (latency, tokens, finish
    /// reason, verdict).
    #[must_use]
    pub fn with_hook(mut self, hook: impl Fn(&Round) + Send + Sync + 'static) -> Self {
        self.hook = Some(Arc::new(hook));
        self
    }

    /// The contract.
    #[must_use]
    pub fn contract(&self) -> &Contract {
        &self.contract
    }

    /// The scrubber of its API key (and `Bearer …`, `sk-…` tokens): wrap
    /// every output in a [`crate::ScrubbingWriter`] with it.
    #[must_use]
    pub fn scrubber(&self) -> &Scrubber {
        &self.scrub
    }

    /// The configuration.
    #[must_use]
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The contract's instructions, sent in the system message.
    #[must_use]
    pub fn system_prompt(&self) -> &str {
        &self.system_prompt
    }

    /// The `response_format` sent (none in [`Mode::Plain`]).
    #[must_use]
    pub fn response_format(&self) -> Option<&Value> {
        self.response_format.as_ref()
    }

    /// The conversation as sent in the first round: the contract's
    /// instructions as the system message (appended to the caller's own
    /// system message if the conversation starts with one), then `messages`.
    #[must_use]
    pub fn conversation(&self, messages: Vec<Message>) -> Vec<Message> {
        let mut out = Vec::with_capacity(messages.len() + 1);
        let mut rest = messages.into_iter().peekable();
        let own = match rest.peek() {
            Some(Message { role: Role::System, content: Content::Text(text) }) => {
                let merged = format!("{text}\n\n{}", self.system_prompt);
                rest.next();
                merged
            }
            _ => self.system_prompt.clone(),
        };
        out.push(Message::system(own));
        out.extend(rest);
        out
    }

    /// Ask: see [`Asker`]. Never fails: every outcome is an [`Outcome`].
    pub async fn ask(&self, messages: Vec<Message>) -> Outcome {
        self.ask_with_fallback(messages, None).await
    }

    /// Ask, and if every round is refused, return `fallback` (the last known
    /// good value) instead, marked [`crate::Source::Fallback`], provided the
    /// contract accepts it too; if it does not, the outcome is refused with a
    /// `fallback_refused` problem and no value.
    pub async fn ask_with_fallback(&self, messages: Vec<Message>, fallback: Option<&Value>) -> Outcome {
        let span = tracing::info_span!(
            "ask",
            model = %self.config.model,
            mode = self.config.mode.as_str(),
            max_rounds = self.config.rounds,
            rounds = field::Empty,
            outcome = field::Empty,
            total_tokens = field::Empty,
        );
        let conversation = self.conversation(messages).iter().map(message_json).collect();
        let exchange = Exchange {
            base: self.base_body(),
            response_format: self.response_format.as_ref(),
            conversation,
            limits: self.config.limits(),
            stream: self.config.stream,
            relay: None,
            headers: HeaderMap::new(),
            scrub: &self.scrub,
            completion_cap: None,
        };
        self.traced(span, exchange, fallback).await
    }

    /// Ask with a client's own request ([`Forwarded`]): its messages and
    /// parameters go upstream as the client wrote them, with the contract's
    /// `response_format` (and, if asked, instructions); every reply is
    /// checked and refused replies are asked again, as in
    /// [`Asker::ask_with_fallback`], within `forwarded.limits`.
    ///
    /// Streamed (`"stream": true` in the body), every content piece the
    /// streaming check takes is sent to `relay` as it arrives. Once a piece
    /// has been relayed, a refusal ends the ask (the client already holds
    /// part of that reply, so no other reply can follow it); a round refused
    /// or failed before anything was relayed is asked again like any other.
    /// When the relay's receiver is gone, the ask stops at once
    /// (`cancelled`) and the upstream request is dropped.
    pub async fn ask_forwarded(&self, forwarded: Forwarded, fallback: Option<&Value>, relay: Option<Relay>) -> Outcome {
        let span = tracing::info_span!(
            "ask",
            model = field::Empty,
            mode = self.config.mode.as_str(),
            max_rounds = forwarded.limits.rounds,
            rounds = field::Empty,
            outcome = field::Empty,
            total_tokens = field::Empty,
        );
        let stream = forwarded.streams();
        let Forwarded { body, limits, instructions, headers, key } = forwarded;
        let mut extra = HeaderMap::new();
        for (name, value) in headers {
            if let (Ok(n), Ok(mut v)) =
                (HeaderName::from_bytes(name.trim().as_bytes()), HeaderValue::from_str(value.trim()))
            {
                v.set_sensitive(true);
                extra.append(n, v);
            }
        }
        let scrub = match &key {
            Some(k) => {
                // A request header wins over the client's default one.
                extra.insert(AUTHORIZATION, k.header().clone());
                k.scrubber()
            }
            None => &self.scrub,
        };
        let (base, conversation) = self.forwarded_body(body, instructions, stream);
        if let Some(model) = base.get("model").and_then(Value::as_str) {
            span.record("model", excerpt(&scrub.scrub(model), 80));
        }
        let limits = Limits { rounds: limits.rounds.max(1), ..limits };
        let exchange = Exchange {
            base,
            response_format: self.response_format.as_ref(),
            conversation,
            limits,
            stream,
            relay,
            headers: extra,
            scrub,
            completion_cap: None,
        };
        self.traced(span, exchange, fallback).await
    }

    async fn traced(&self, span: tracing::Span, exchange: Exchange<'_>, fallback: Option<&Value>) -> Outcome {
        let outcome = self.run(exchange, fallback).instrument(span.clone()).await;
        span.record("rounds", outcome.rounds.len());
        span.record("outcome", outcome.outcome());
        span.record("total_tokens", outcome.total_tokens());
        let codes: Vec<&str> = outcome.problems.iter().map(AskProblem::code).collect();
        tracing::info!(
            parent: &span,
            outcome = outcome.outcome(),
            source = outcome.source().as_str(),
            rounds = outcome.rounds.len(),
            problems = ?codes,
            "ask finished"
        );
        outcome
    }

    async fn run(&self, mut exchange: Exchange<'_>, fallback: Option<&Value>) -> Outcome {
        let start = Instant::now();
        let limits = exchange.limits;
        let deadline = limits.deadline.map(|d| start + d);
        let mut rounds: Vec<Round> = Vec::new();
        let mut problems: Vec<AskProblem> = Vec::new();
        let mut spent: u64 = 0;
        let mut usage_missing = false;
        // A lower bound of the next round's prompt, in tokens.
        let mut next_prompt_floor: u64 = 0;
        let mut wait = Duration::ZERO;
        let mut failures_in_a_row: u32 = 0;

        for index in 1..=limits.rounds {
            if index > 1 {
                if let Some(p) = budget_check(limits, spent, next_prompt_floor, usage_missing) {
                    problems.push(p.into());
                    break;
                }
            }
            exchange.completion_cap =
                limits.max_total_tokens.map(|max| max.saturating_sub(spent).saturating_sub(next_prompt_floor).max(1));
            if let Some(d) = deadline {
                if Instant::now() + wait >= d {
                    let sentence = if wait.is_zero() {
                        format!("the deadline ({}) passed", show_duration(limits.deadline.unwrap_or_default()))
                    } else {
                        format!(
                            "the deadline ({}) would pass while waiting {} to ask again",
                            show_duration(limits.deadline.unwrap_or_default()),
                            show_duration(wait)
                        )
                    };
                    problems.push(
                        UpstreamProblem::new(
                            UpstreamCode::Deadline,
                            "an answer before the deadline",
                            "no answer yet",
                            &sentence,
                        )
                        .into(),
                    );
                    break;
                }
            }
            if !wait.is_zero() {
                tracing::debug!(
                    round = index,
                    wait_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
                    "waiting before the round"
                );
                tokio::time::sleep(wait).await;
            }
            let span = tracing::info_span!(
                "round",
                round = index,
                latency_ms = field::Empty,
                http_status = field::Empty,
                prompt_tokens = field::Empty,
                completion_tokens = field::Empty,
                total_tokens = field::Empty,
                finish_reason = field::Empty,
                outcome = field::Empty,
            );
            let (round, mut next) = self.round(index, wait, &exchange, deadline).instrument(span.clone()).await;
            if round.stream.is_some_and(|s| s.relayed > 0) && !matches!(next, Next::Done(_)) {
                // The client holds part of this reply: no other may follow it.
                next = Next::Stop;
            }
            record(&span, &round);
            if let Some(hook) = &self.hook {
                hook(&round);
            }
            if let Some(usage) = round.usage {
                match usage.spent() {
                    Some(n) => spent = spent.saturating_add(n),
                    None => usage_missing = true,
                }
            } else if round.http_status.is_some_and(|s| (200..300).contains(&s)) {
                usage_missing = true;
            }
            problems.extend(round.problems().iter().cloned());
            let usage = round.usage.unwrap_or_default();
            let round_problems = round.problems().to_vec();
            rounds.push(round);
            wait = Duration::ZERO;
            match next {
                Next::Done(accepted) => {
                    return Outcome {
                        answer: Answer::Model(accepted),
                        problems: Vec::new(),
                        rounds,
                        fallback_problems: Vec::new(),
                    };
                }
                Next::Reask(reply) => {
                    failures_in_a_row = 0;
                    next_prompt_floor = usage
                        .prompt_tokens
                        .unwrap_or(next_prompt_floor)
                        .saturating_add(usage.completion_tokens.unwrap_or(0));
                    // A reply refused for its size is not sent back (the core's rule).
                    let contract_codes = round_problems.iter().filter_map(|p| match p {
                        AskProblem::Contract(p) => Some(p.code),
                        AskProblem::Upstream(_) => None,
                    });
                    if let Some(reply) = reply.filter(|_| vouch::echoes_refused_reply(contract_codes)) {
                        exchange.conversation.push(message_json(&Message::assistant(reply)));
                    }
                    exchange.conversation.push(message_json(&Message::user(reask_text(&round_problems))));
                }
                Next::Repeat(Some(after)) if after > self.config.backoff.max_wait => {
                    // The upstream asks for a longer wait than vouch may take:
                    // refuse now rather than wait and be refused again.
                    tracing::debug!(
                        retry_after_ms = u64::try_from(after.as_millis()).unwrap_or(u64::MAX),
                        "the upstream's Retry-After is past the longest wait: not repeating"
                    );
                    break;
                }
                Next::Repeat(after) => {
                    failures_in_a_row = failures_in_a_row.saturating_add(1);
                    wait = self.backoff(after, failures_in_a_row);
                }
                Next::Stop => break,
            }
        }
        self.refused(problems, rounds, fallback)
    }

    /// The body of the asker's own requests, but `messages`.
    fn base_body(&self) -> Map<String, Value> {
        let mut body = Map::new();
        body.insert("model".into(), Value::String(self.config.model.clone()));
        if let Some(t) = self.config.temperature.and_then(serde_json::Number::from_f64) {
            body.insert("temperature".into(), Value::Number(t));
        }
        if let Some(m) = self.config.max_tokens {
            body.insert("max_tokens".into(), Value::from(m));
        }
        if self.config.stream {
            body.insert("stream".into(), Value::Bool(true));
            body.insert("stream_options".into(), json!({"include_usage": true}));
        }
        body
    }

    /// A forwarded body, split into its `messages` and the rest, with what
    /// the asker owns put in.
    fn forwarded_body(
        &self,
        mut body: Map<String, Value>,
        instructions: bool,
        stream: bool,
    ) -> (Map<String, Value>, Vec<Value>) {
        let mut conversation = match body.remove("messages") {
            Some(Value::Array(messages)) => messages,
            _ => Vec::new(),
        };
        if instructions {
            let merged = match conversation.first_mut() {
                Some(Value::Object(first)) if first.get("role").and_then(Value::as_str) == Some("system") => {
                    match first.get_mut("content") {
                        Some(Value::String(text)) => {
                            text.push_str("\n\n");
                            text.push_str(&self.system_prompt);
                            true
                        }
                        _ => false,
                    }
                }
                _ => false,
            };
            if !merged {
                conversation.insert(0, message_json(&Message::system(self.system_prompt.clone())));
            }
        }
        // The asker's own goes in its place (see `Exchange`).
        body.remove("response_format");
        if !body.get("model").is_some_and(Value::is_string) {
            body.insert("model".into(), Value::String(self.config.model.clone()));
        }
        if let Some(t) = self.config.temperature.and_then(serde_json::Number::from_f64) {
            body.entry("temperature").or_insert(Value::Number(t));
        }
        if let Some(m) = self.config.max_tokens {
            if !body.contains_key("max_completion_tokens") {
                body.entry("max_tokens").or_insert_with(|| Value::from(m));
            }
        }
        if stream {
            let options = body.entry("stream_options").or_insert_with(|| Value::Object(Map::new()));
            if !options.is_object() {
                *options = Value::Object(Map::new());
            }
            if let Value::Object(o) = options {
                o.insert("include_usage".into(), Value::Bool(true));
            }
        }
        (body, conversation)
    }

    /// The wait before repeating a failed request: the upstream's
    /// `Retry-After` (plus up to 10% jitter), else an exponential backoff
    /// with jitter; never more than `backoff.max_wait`.
    fn backoff(&self, after: Option<Duration>, failures: u32) -> Duration {
        let max = self.config.backoff.max_wait;
        let wait = match after {
            Some(a) => a.saturating_add(jitter(a / 10)),
            None => {
                let exp = 2u32.saturating_pow(failures.saturating_sub(1).min(16));
                let base = self.config.backoff.base.saturating_mul(exp);
                let half = base / 2;
                half.saturating_add(jitter(half))
            }
        };
        wait.min(max)
    }

    /// One round: one request, and what it comes to.
    async fn round(
        &self,
        index: u32,
        waited: Duration,
        exchange: &Exchange<'_>,
        deadline: Option<Instant>,
    ) -> (Round, Next) {
        let body = exchange.body();
        let request = Request {
            client: &self.client,
            url: &self.url,
            shown_url: &self.shown_url,
            body: &body,
            headers: &exchange.headers,
            timeouts: self.config.timeouts,
            deadline,
            scrub: exchange.scrub,
        };
        let sent = Instant::now();
        let mut round = Round {
            index,
            waited,
            latency: Duration::ZERO,
            http_status: None,
            usage: None,
            finish_reason: None,
            reply: None,
            verdict: RoundVerdict::Refused(Vec::new()),
            stream: None,
        };
        let response = if exchange.stream {
            match request.open().await {
                Ok(opened) if !is_json(&opened.response) => {
                    round.http_status = Some(opened.status);
                    let end =
                        streaming::read(&request, opened, &self.contract, exchange.scrub, exchange.relay.as_ref())
                            .await;
                    round.latency = sent.elapsed();
                    round.stream = Some(end.stats);
                    round.usage = end.usage;
                    round.finish_reason = end.finish_reason.as_deref().map(|f| excerpt(&exchange.scrub.scrub(f), 40));
                    round.reply = end.content.as_deref().map(|c| exchange.scrub.scrub(c));
                    return match end.end {
                        End::Judged(j) => judged(round, j),
                        End::Failed(failure) => failed(round, failure),
                    };
                }
                // A server that answers `stream: true` with a whole completion
                // (application/json) is read as one.
                Ok(opened) => request.read_whole(opened).await,
                Err(response) => response,
            }
        } else {
            request.send().await
        };
        round.latency = sent.elapsed();
        round.http_status = response.status;
        let body = match response.body {
            Ok(b) => b,
            Err(failure) => return failed(round, failure),
        };
        let completion = match completion::parse(&body, exchange.scrub) {
            Ok(c) => c,
            Err(problem) => {
                round.verdict = RoundVerdict::Refused(vec![problem.into()]);
                return (round, Next::Repeat(None));
            }
        };
        round.usage = completion.usage;
        // Upstream text, shown and traced: scrubbed and bounded like every other
        // (empty when the body holds the key: then nothing of it is kept).
        round.finish_reason = completion.finish_reason.as_deref().map(|f| excerpt(&exchange.scrub.scrub(f), 40));
        // Kept for diagnostics, scrubbed like everything else taken from the upstream.
        round.reply = completion.content.as_deref().map(|c| exchange.scrub.scrub(c));
        judged(round, completion::judge(completion, &self.contract, exchange.scrub))
    }

    /// Every round refused: the fallback, if the contract accepts it.
    fn refused(&self, mut problems: Vec<AskProblem>, rounds: Vec<Round>, fallback: Option<&Value>) -> Outcome {
        let Some(value) = fallback else {
            return Outcome { answer: Answer::Refused, problems, rounds, fallback_problems: Vec::new() };
        };
        match self.contract.check_value(value) {
            Verdict::Accepted(a) => {
                tracing::info!("every round refused: returning the fallback (last known good value)");
                Outcome { answer: Answer::Fallback(a), problems, rounds, fallback_problems: Vec::new() }
            }
            Verdict::Refused(r) => {
                let listed: Vec<String> = r.problems.iter().take(3).map(ToString::to_string).collect();
                let more = r.problems.len().saturating_sub(3);
                let more = if more > 0 { format!("; and {more} more") } else { String::new() };
                let sentence = format!(
                    "the fallback (last known good value) fails the contract too, so it is not returned: {}{more}",
                    listed.join("; ")
                );
                let got = excerpt(&value.to_string(), 80);
                problems.push(
                    UpstreamProblem::new(
                        UpstreamCode::FallbackRefused,
                        "a fallback the contract accepts",
                        got,
                        &sentence,
                    )
                    .into(),
                );
                tracing::warn!("every round refused, and the fallback fails the contract too");
                Outcome { answer: Answer::Refused, problems, rounds, fallback_problems: r.problems }
            }
        }
    }
}

/// `Some(problem)` when the token budget does not allow another round.
fn budget_check(limits: Limits, spent: u64, next_prompt_floor: u64, usage_missing: bool) -> Option<UpstreamProblem> {
    let max = limits.max_total_tokens?;
    let sentence = if usage_missing {
        format!("the upstream reported no token usage, so the budget of {max} tokens cannot be kept")
    } else if spent >= max {
        format!("the token budget is spent: {spent} of {max} tokens used")
    } else if spent.saturating_add(next_prompt_floor) >= max {
        // (Equal: no token would be left for the round's completion.)
        format!(
            "the token budget would be overrun: {spent} of {max} tokens used, and the next round's prompt alone is at least {next_prompt_floor}"
        )
    } else {
        return None;
    };
    Some(UpstreamProblem::new(
        UpstreamCode::BudgetSpent,
        format!("at most {max} tokens"),
        format!("{spent} tokens"),
        &sentence,
    ))
}

/// A round's judgement, and what to do next.
fn judged(mut round: Round, judged: Judged) -> (Round, Next) {
    match judged {
        Judged::Accepted(a) => {
            round.verdict = RoundVerdict::Accepted(a.clone());
            (round, Next::Done(a))
        }
        Judged::Refused { problems, reply } => {
            round.verdict = RoundVerdict::Refused(problems);
            (round, Next::Reask(reply))
        }
    }
}

/// A request that brought no reply, and what to do next.
fn failed(mut round: Round, failure: Failure) -> (Round, Next) {
    round.verdict = RoundVerdict::Refused(vec![failure.problem.into()]);
    let next = match failure.retry {
        Retry::No => Next::Stop,
        Retry::Yes(after) => Next::Repeat(after),
    };
    (round, next)
}

/// A response that says it is one JSON document (not `text/event-stream`).
fn is_json(response: &reqwest::Response) -> bool {
    response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.trim().to_ascii_lowercase().starts_with("application/json"))
}

/// A random duration in `[0, max]`.
fn jitter(max: Duration) -> Duration {
    let nanos = u64::try_from(max.as_nanos()).unwrap_or(u64::MAX);
    if nanos == 0 {
        return Duration::ZERO;
    }
    Duration::from_nanos(fastrand::u64(0..=nanos))
}

fn record(span: &tracing::Span, round: &Round) {
    let usage: Usage = round.usage.unwrap_or_default();
    let latency_ms = u64::try_from(round.latency.as_millis()).unwrap_or(u64::MAX);
    span.record("latency_ms", latency_ms);
    if let Some(s) = round.http_status {
        span.record("http_status", s);
    }
    if let Some(n) = usage.prompt_tokens {
        span.record("prompt_tokens", n);
    }
    if let Some(n) = usage.completion_tokens {
        span.record("completion_tokens", n);
    }
    if let Some(n) = usage.spent() {
        span.record("total_tokens", n);
    }
    if let Some(f) = &round.finish_reason {
        span.record("finish_reason", f.as_str());
    }
    span.record("outcome", round.outcome());
    let codes: Vec<&str> = round.problems().iter().map(AskProblem::code).collect();
    tracing::info!(
        parent: span,
        round = round.index,
        latency_ms,
        http_status = round.http_status,
        prompt_tokens = usage.prompt_tokens,
        completion_tokens = usage.completion_tokens,
        total_tokens = usage.spent(),
        finish_reason = round.finish_reason.as_deref(),
        stream_bytes = round.stream.map(|s| s.bytes),
        decided_at_bytes = round.stream.and_then(|s| s.decided_at_bytes),
        dropped = round.stream.map(|s| s.dropped),
        outcome = round.outcome(),
        problems = ?codes,
        "round finished"
    );
}
