//! How to reach the model, and how hard to try: [`Config`].

use std::fmt;
use std::time::Duration;

/// OpenAI's API, the base URL used when none is given (and `OPENAI_BASE_URL` is unset).
pub const OPENAI_BASE_URL: &str = "https://api.openai.com/v1";

/// An API key. It is sent as `Authorization: Bearer …` (marked sensitive)
/// and nowhere else: its `Debug` prints `[redacted]`, it has no `Display`,
/// and every text vouch-llm builds from an upstream answer is scrubbed of it.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// A key from its text. Surrounding white space is dropped.
    #[must_use]
    pub fn new(key: impl Into<String>) -> Self {
        Self(key.into().trim().to_owned())
    }

    /// The key in the environment variable `name`, if it is set and not empty.
    ///
    /// Keys come from the environment, not from command-line flags, which
    /// land in shell history and process lists.
    #[must_use]
    pub fn from_env(name: &str) -> Option<Self> {
        let key = std::env::var(name).ok()?;
        let key = key.trim();
        (!key.is_empty()).then(|| Self(key.to_owned()))
    }

    /// The secret itself, for the `Authorization` header. Never log it.
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

/// How the contract is put to the model. In every mode the system prompt
/// carries the contract's plain-language instructions ([`vouch::Contract::prompt`]),
/// and every reply is checked by the contract: what a provider promises
/// lowers the odds of a bad reply, it does not replace the check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// OpenAI structured outputs: `response_format: {"type": "json_schema",
    /// "json_schema": {"name", "strict": true, "schema"}}`, exported from the
    /// contract by [`vouch::Contract::provider_schema`]. A contract OpenAI
    /// cannot express without weakening is refused when the [`crate::Asker`]
    /// is built.
    #[default]
    Schema,
    /// JSON mode: `response_format: {"type": "json_object"}`.
    Json,
    /// No `response_format` at all (servers that support neither).
    Plain,
}

impl Mode {
    /// The mode for a command-line name: `schema`, `json` or `plain`.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "schema" => Self::Schema,
            "json" => Self::Json,
            "plain" => Self::Plain,
            _ => return None,
        })
    }

    /// The stable name.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Schema => "schema",
            Self::Json => "json",
            Self::Plain => "plain",
        }
    }
}

/// Timeouts of one HTTP request (one round).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// To open the connection (TCP and TLS).
    pub connect: Duration,
    /// From sending the request to the response's status line and headers.
    pub first_byte: Duration,
    /// The whole request, body included.
    pub total: Duration,
    /// The longest silence between two pieces of a body once it has
    /// begun (a stream that stalls, a body that drips and then stops).
    pub idle: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self {
            connect: Duration::from_secs(10),
            first_byte: Duration::from_secs(120),
            total: Duration::from_secs(180),
            idle: Duration::from_secs(60),
        }
    }
}

/// What one ask may spend: rounds, tokens and time. [`Config::limits`]
/// gives the configured ones; a caller may pass tighter ones per ask
/// ([`crate::Forwarded`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The most requests, at least 1 (see [`Config::rounds`]).
    pub rounds: u32,
    /// The token budget (see [`Config::max_total_tokens`]).
    pub max_total_tokens: Option<u64>,
    /// The deadline (see [`Config::deadline`]).
    pub deadline: Option<Duration>,
}

impl Limits {
    /// Each limit the tighter of `self`'s and `cap`'s (a limit that is
    /// unset on one side is the other's).
    #[must_use]
    pub fn capped_by(self, cap: Limits) -> Limits {
        let min = |a: Option<u64>, b: Option<u64>| match (a, b) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        Limits {
            rounds: self.rounds.min(cap.rounds).max(1),
            max_total_tokens: min(self.max_total_tokens, cap.max_total_tokens),
            deadline: match (self.deadline, cap.deadline) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            },
        }
    }
}

/// Waiting before a round that repeats a request the upstream failed
/// (HTTP 5xx, 429, a connection that failed or timed out).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    /// The first wait when the upstream gives no `Retry-After`; it doubles
    /// for each further failed round, with jitter (half of it random).
    pub base: Duration,
    /// The longest wait: a longer `Retry-After` (or `retry-after-ms`) is cut
    /// to this.
    pub max_wait: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Self { base: Duration::from_millis(500), max_wait: Duration::from_secs(30) }
    }
}

/// Extra request headers (`OpenAI-Organization`, `HTTP-Referer` for
/// OpenRouter, a gateway's own key…). Their values are treated as secrets:
/// `Debug` shows the names only.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Headers(pub Vec<(String, String)>);

impl fmt::Debug for Headers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.0.iter().map(|(name, _)| (name, "[redacted]"))).finish()
    }
}

/// Everything an [`crate::Asker`] needs besides the contract.
///
/// ```
/// use std::time::Duration;
/// use vouch_llm::{ApiKey, Config, Mode};
///
/// let mut config = Config::new("http://127.0.0.1:11434/v1", "llama3.2");
/// config.api_key = ApiKey::from_env("OPENAI_API_KEY");
/// config.mode = Mode::Json;
/// config.rounds = 3;
/// config.max_total_tokens = Some(20_000);
/// config.deadline = Some(Duration::from_secs(60));
/// assert!(!format!("{config:?}").contains("sk-"));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// The API's base URL; requests go to `{base_url}/chat/completions`.
    pub base_url: String,
    /// The model name sent as `model`.
    pub model: String,
    /// The API key, if the server needs one.
    pub api_key: Option<ApiKey>,
    /// Extra request headers.
    pub headers: Headers,
    /// `temperature`, if set.
    pub temperature: Option<f64>,
    /// `max_tokens` (the reply's token limit), if set.
    pub max_tokens: Option<u32>,
    /// How the contract is put to the model.
    pub mode: Mode,
    /// The schema name sent in [`Mode::Schema`].
    pub schema_name: String,
    /// The most requests one ask makes, at least 1. Every request is a round:
    /// one refused by the contract (then the model is asked again, told
    /// why) and one the upstream failed (then it is repeated) alike.
    pub rounds: u32,
    /// The most tokens (the responses' `usage.total_tokens`, summed) one
    /// ask may spend; no further round starts once it is spent or the next
    /// round's prompt alone would leave nothing of it. Each round's
    /// completion is capped at what it leaves (the tokens spent and the
    /// least the round's prompt takes, the previous round's, subtracted):
    /// the request's `max_completion_tokens` or `max_tokens` is lowered to
    /// that, or `max_completion_tokens` is sent when it names neither (an
    /// upstream that refuses that field takes a `max_tokens` set, which is
    /// then the one capped). A prompt longer than its least can still take
    /// the ask past the budget, by that much.
    pub max_total_tokens: Option<u64>,
    /// The longest one ask may take, waits included.
    pub deadline: Option<Duration>,
    /// Per-request timeouts.
    pub timeouts: Timeouts,
    /// Waits before repeating a failed request.
    pub backoff: Backoff,
    /// Stream each reply (`stream: true`, with `stream_options:
    /// {"include_usage": true}`): the reply is checked as it arrives
    /// ([`vouch::StreamCheck`]), and the request is dropped, closing the
    /// connection, as soon as no ending of it can be accepted; the next
    /// round asks again, told why. The verdict on a reply read to its end
    /// is [`vouch::Contract::check`]'s, byte for byte.
    pub stream: bool,
}

impl Config {
    /// The configured rounds, token budget and deadline.
    #[must_use]
    pub fn limits(&self) -> Limits {
        Limits { rounds: self.rounds, max_total_tokens: self.max_total_tokens, deadline: self.deadline }
    }

    /// A configuration with the defaults: [`Mode::Schema`], 2 rounds, no
    /// budget, no deadline, no key, not streamed.
    #[must_use]
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            base_url: base_url.into(),
            model: model.into(),
            api_key: None,
            headers: Headers::default(),
            temperature: None,
            max_tokens: None,
            mode: Mode::Schema,
            schema_name: "answer".to_owned(),
            rounds: 2,
            max_total_tokens: None,
            deadline: None,
            timeouts: Timeouts::default(),
            backoff: Backoff::default(),
            stream: false,
        }
    }
}
