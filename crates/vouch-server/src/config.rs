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
}

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
            max_concurrency: 512,
            instructions: true,
            forward_headers: Vec::new(),
            timeouts: TimeoutsMs::default(),
            max_retry_wait_ms: 10_000,
            defaults: AskSettings::default(),
            contract: BTreeMap::new(),
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
        let all =
            std::iter::once(("defaults", &self.defaults)).chain(self.contract.iter().map(|(k, v)| (k.as_str(), v)));
        for (name, s) in all {
            if s.rounds == Some(0) {
                return Err(ConfigError(format!("{name}: rounds must be at least 1")));
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
