//! The gateway's configuration: a TOML file, then flags (see
//! `docs/gateway.md`). Every key has a default that is safe.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;

/// What a request that names no contract gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum WithoutContract {
    /// HTTP 400 `contract_required`: nothing unchecked goes through (the default).
    #[default]
    Refuse,
    /// Forwarded to the upstream and its answer returned unchecked (scrubbed
    /// of the key), marked with the header `x-vouch-checked: false`.
    Pass,
}

/// Timeouts of each upstream request, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TimeoutsMs {
    /// To open the connection.
    pub connect_ms: u64,
    /// From sending to the response head.
    pub first_byte_ms: u64,
    /// The longest silence inside a body or stream.
    pub idle_ms: u64,
    /// The whole request, body included.
    pub total_ms: u64,
}

impl Default for TimeoutsMs {
    fn default() -> Self {
        Self { connect_ms: 10_000, first_byte_ms: 120_000, idle_ms: 60_000, total_ms: 180_000 }
    }
}

impl TimeoutsMs {
    /// As vouch-llm's timeouts.
    #[must_use]
    pub fn timeouts(&self) -> vouch_llm::Timeouts {
        vouch_llm::Timeouts {
            connect: Duration::from_millis(self.connect_ms),
            first_byte: Duration::from_millis(self.first_byte_ms),
            total: Duration::from_millis(self.total_ms),
            idle: Duration::from_millis(self.idle_ms),
        }
    }
}

/// What one ask may spend, for every contract or one (`[contract.NAME]`).
/// A request's `x-vouch-*` headers may only tighten these.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct AskSettings {
    /// Requests per ask (a refused reply is asked again, told why).
    pub rounds: Option<u32>,
    /// Tokens per ask, summed over rounds.
    pub max_total_tokens: Option<u64>,
    /// Time per ask, waits included.
    pub deadline_ms: Option<u64>,
    /// `schema` (the contract's OpenAI strict export as `response_format`,
    /// falling back to `json` for a contract strict mode cannot express) or
    /// `json` (`{"type": "json_object"}`).
    pub mode: Option<String>,
}

/// The jobs API (`POST /v1/jobs`): where jobs are kept and how they run.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct JobsConfig {
    /// Where jobs live: a file path (an embedded SQLite database in WAL
    /// mode), `redis://HOST:PORT[/DB]` (shared by every replica pointed at
    /// it), or `off`. Not set: `vouch serve` keeps them in
    /// `$XDG_STATE_HOME/vouch/jobs-PORT.sqlite3` (else
    /// `~/.local/state/vouch/…`), PORT the one it listens on.
    pub store: Option<String>,
    /// Jobs run at once on this replica.
    pub workers: usize,
    /// Jobs waiting, across replicas, past which `POST /v1/jobs` answers 429.
    pub max_queued: u64,
    /// How long a replica holds a running job without renewing it; a job
    /// whose holder is gone (killed, cut off) is taken over after it.
    pub lease_ms: u64,
    /// How long a finished job (and its idempotency key) is kept.
    pub retention_s: u64,
    /// Runs of one job before it is refused as `job_attempts_exhausted` (a
    /// job that kills every replica it lands on stops there).
    pub max_attempts: u32,
    /// How often an idle replica looks for jobs posted elsewhere.
    pub poll_ms: u64,
    /// Redis keys start with this (several gateways can share one server).
    pub key_prefix: String,
    /// The environment variable holding the secret webhooks are signed
    /// with (HMAC-SHA256). Not set: a job asking for a webhook is refused.
    pub webhook_secret_env: Option<String>,
    /// URL prefixes a webhook may be sent to (none: no webhook is allowed).
    pub webhook_allow: Vec<String>,
    /// Deliveries tried per webhook before it is recorded as failed.
    pub webhook_attempts: u32,
    /// The wait before the second delivery; doubled each time after.
    pub webhook_backoff_ms: u64,
}

impl Default for JobsConfig {
    fn default() -> Self {
        Self {
            store: None,
            workers: 64,
            max_queued: 100_000,
            lease_ms: 10_000,
            retention_s: 24 * 3600,
            max_attempts: 5,
            poll_ms: 200,
            key_prefix: "vouch:jobs".to_owned(),
            webhook_secret_env: None,
            webhook_allow: Vec::new(),
            webhook_attempts: 6,
            webhook_backoff_ms: 1_000,
        }
    }
}

/// Where jobs are kept, as [`JobsConfig::store`] names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobStoreAt {
    /// No jobs API (`/v1/jobs` answers 404 `jobs_off`).
    Off,
    /// An embedded SQLite file.
    File(PathBuf),
    /// A Redis server's URL.
    Redis(String),
}

impl JobsConfig {
    /// Where jobs are kept, for a gateway listening on `listen`.
    #[must_use]
    pub fn store_at(&self, listen: SocketAddr) -> JobStoreAt {
        match self.store.as_deref().map(str::trim) {
            Some("off" | "") => JobStoreAt::Off,
            Some(s) if s.starts_with("redis://") || s.starts_with("rediss://") => JobStoreAt::Redis(s.to_owned()),
            Some(s) => JobStoreAt::File(PathBuf::from(s)),
            None => {
                let state = std::env::var_os("XDG_STATE_HOME")
                    .filter(|v| !v.is_empty())
                    .map(PathBuf::from)
                    .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/state")))
                    .unwrap_or_else(|| PathBuf::from("."));
                JobStoreAt::File(state.join("vouch").join(format!("jobs-{}.sqlite3", listen.port())))
            }
        }
    }
}

/// The whole configuration.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ServerConfig {
    /// Where to listen.
    pub listen: SocketAddr,
    /// The upstream's base URL (requests go to `{upstream}/chat/completions`).
    pub upstream: String,
    /// The folder of contracts: `NAME.json` is the contract `NAME`.
    pub contracts: PathBuf,
    /// The environment variable holding the upstream's API key.
    pub api_key_env: Option<String>,
    /// Send each client's own upstream key (its `Authorization: Bearer …`)
    /// to the upstream instead of a key of the server's: then no
    /// `api_key_env` may be set, a chat request without a key is refused
    /// (401), and the gateway's own tokens come in `x-vouch-token`.
    pub pass_client_key: bool,
    /// The model sent when a request names none.
    pub default_model: String,
    /// Bearer tokens the gateway's own clients must present, from this file
    /// (one per line; blank lines and `#` comments skipped).
    pub tokens_file: Option<PathBuf>,
    /// … or from this environment variable (comma or newline separated).
    pub tokens_env: Option<String>,
    /// Serve without client tokens (only allowed on a loopback address).
    pub allow_unauthenticated: bool,
    /// What a request without a contract gets.
    pub without_contract: WithoutContract,
    /// Whether a request may carry its own JSON Schema in `response_format`
    /// (compiled and cached by content).
    pub inline_contracts: bool,
    /// How many inline contracts are kept compiled.
    pub inline_cache: usize,
    /// The largest request body, in bytes (413 beyond, before any upstream call).
    pub max_body_bytes: usize,
    /// How long a client has to send a request's head, in ms (and a
    /// kept-alive connection to start its next request): the connection is
    /// closed past it.
    pub header_read_timeout_ms: u64,
    /// How long a client has to send a request's body, from its head on, in
    /// ms: 408 `body_timeout` past it, before any upstream call.
    pub body_read_timeout_ms: u64,
    /// After SIGTERM, how long to keep taking connections, `/readyz`
    /// answering 503, before the listener closes and the requests in flight
    /// drain, in ms: the time a load balancer needs to see the 503 and stop
    /// sending (a Kubernetes readiness probe's period times its failure
    /// threshold). 0, the default, closes the listener at once.
    pub drain_delay_ms: u64,
    /// The most requests in flight (503 with `Retry-After` beyond).
    pub max_concurrency: usize,
    /// Add the contract's instructions to the system message.
    pub instructions: bool,
    /// Client headers sent on to the upstream (case-insensitive names).
    /// `authorization`, `x-api-key` and `x-goog-api-key` never are.
    pub forward_headers: Vec<String>,
    /// Upstream timeouts.
    pub timeouts: TimeoutsMs,
    /// The longest wait before repeating a failed request, in ms; a
    /// `Retry-After` longer than this refuses at once.
    pub max_retry_wait_ms: u64,
    /// Limits for every contract.
    pub defaults: AskSettings,
    /// Limits per contract, by name.
    pub contract: BTreeMap<String, AskSettings>,
    /// The jobs API.
    pub jobs: JobsConfig,
}

/// The longest `drain_delay_ms` taken: a shutdown that waits longer is a mistake.
const MAX_DRAIN_DELAY_MS: u64 = 3_600_000;

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            upstream: vouch_llm::OPENAI_BASE_URL.to_owned(),
            contracts: PathBuf::from("contracts"),
            api_key_env: None,
            pass_client_key: false,
            default_model: "gpt-4o-mini".to_owned(),
            tokens_file: None,
            tokens_env: None,
            allow_unauthenticated: false,
            without_contract: WithoutContract::Refuse,
            inline_contracts: true,
            inline_cache: 256,
            max_body_bytes: 1024 * 1024,
            header_read_timeout_ms: 30_000,
            body_read_timeout_ms: 60_000,
            drain_delay_ms: 0,
            max_concurrency: 512,
            instructions: true,
            forward_headers: Vec::new(),
            timeouts: TimeoutsMs::default(),
            max_retry_wait_ms: 10_000,
            defaults: AskSettings::default(),
            contract: BTreeMap::new(),
            jobs: JobsConfig::default(),
        }
    }
}

/// A configuration that cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub String);

/// Headers that carry credentials: never forwarded, whatever the allow-list says.
pub const CREDENTIAL_HEADERS: [&str; 6] =
    ["authorization", "x-api-key", "x-goog-api-key", "api-key", "cookie", crate::TOKEN_HEADER];

/// Headers of the connection or the body, which the gateway's own request
/// to the upstream sets: never forwarded either.
pub const OWN_HEADERS: [&str; 9] = [
    "host",
    "content-length",
    "content-type",
    "transfer-encoding",
    "connection",
    "keep-alive",
    "upgrade",
    "te",
    "accept-encoding",
];

impl ServerConfig {
    /// Read a TOML configuration (unknown keys are refused, with their name).
    ///
    /// # Errors
    /// The TOML is malformed or holds a key or value that is not known.
    pub fn from_toml_str(text: &str) -> Result<Self, ConfigError> {
        toml::from_str(text).map_err(|e| ConfigError(format!("the configuration: {}", e.message())))
    }

    /// The settings one contract runs with: its own over the defaults.
    #[must_use]
    pub fn settings_for(&self, name: &str) -> AskSettings {
        let own = self.contract.get(name).cloned().unwrap_or_default();
        AskSettings {
            rounds: own.rounds.or(self.defaults.rounds),
            max_total_tokens: own.max_total_tokens.or(self.defaults.max_total_tokens),
            deadline_ms: own.deadline_ms.or(self.defaults.deadline_ms),
            mode: own.mode.or_else(|| self.defaults.mode.clone()),
        }
    }

    /// Whether a client header may go upstream.
    #[must_use]
    pub fn forwards(&self, name: &str) -> bool {
        let name = name.to_ascii_lowercase();
        !CREDENTIAL_HEADERS.contains(&name.as_str())
            && self.forward_headers.iter().any(|h| h.eq_ignore_ascii_case(&name))
    }

    /// Check what no request can fix: sizes of 0, a mode that is not known,
    /// rounds of 0.
    ///
    /// # Errors
    /// The first such setting.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.pass_client_key && self.api_key_env.is_some() {
            return Err(ConfigError(
                "pass_client_key sends each client's own key upstream: api_key_env cannot be set too".to_owned(),
            ));
        }
        if self.max_body_bytes == 0 || self.max_concurrency == 0 {
            return Err(ConfigError("max_body_bytes and max_concurrency must be at least 1".to_owned()));
        }
        if self.drain_delay_ms > MAX_DRAIN_DELAY_MS {
            return Err(ConfigError(format!("drain_delay_ms must be at most {MAX_DRAIN_DELAY_MS} (an hour)")));
        }
        if self.header_read_timeout_ms == 0 || self.body_read_timeout_ms == 0 {
            return Err(ConfigError("header_read_timeout_ms and body_read_timeout_ms must be at least 1".to_owned()));
        }
        let j = &self.jobs;
        if j.workers == 0 || j.max_queued == 0 || j.lease_ms < 100 || j.max_attempts == 0 || j.webhook_attempts == 0 {
            return Err(ConfigError(
                "jobs: workers, max_queued, max_attempts and webhook_attempts must be at least 1, lease_ms at least 100"
                    .to_owned(),
            ));
        }
        let prefix_url = |p: &str| {
            (p.starts_with("https://") || p.starts_with("http://"))
                && reqwest::Url::parse(p)
                    .is_ok_and(|u| u.host_str().is_some() && u.username().is_empty() && u.password().is_none())
        };
        if let Some(bad) = j.webhook_allow.iter().find(|p| !prefix_url(p)) {
            return Err(ConfigError(format!(
                "jobs.webhook_allow: {bad:?} is not an http(s) URL prefix with a host (and no user name or password)"
            )));
        }
        let all =
            std::iter::once(("defaults", &self.defaults)).chain(self.contract.iter().map(|(k, v)| (k.as_str(), v)));
        for (name, s) in all {
            if s.rounds == Some(0) {
                return Err(ConfigError(format!("{name}: rounds must be at least 1")));
            }
            // A budget of 0 leaves no token for even the first completion.
            if s.max_total_tokens == Some(0) {
                return Err(ConfigError(format!("{name}: max_total_tokens must be at least 1")));
            }
            if let Some(m) = &s.mode {
                if m != "schema" && m != "json" {
                    return Err(ConfigError(format!("{name}: mode must be \"schema\" or \"json\", not {m:?}")));
                }
            }
        }
        Ok(())
    }
}
