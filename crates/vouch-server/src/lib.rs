//! # vouch-server
//!
//! `vouch serve`: an OpenAI-compatible gateway. Point any OpenAI SDK's
//! `base_url` at it: every `POST /v1/chat/completions` is forwarded to the
//! configured upstream with the contract's `response_format`, every reply
//! is checked against the contract (asked again within rounds, budget and
//! deadline, as `vouch ask` does), and the answer comes back as a chat
//! completion whose `message.content` is the vouched JSON, with a `vouch`
//! object beside it; or as HTTP 422 `{"error": {"type": "vouch_refused",
//! "code", "message", "problems"}}`, which the SDKs raise as their usual
//! error. Streams are checked chunk by chunk. See `docs/gateway.md`.
//!
//! The core crate stays pure; this crate holds the HTTP server, over the
//! public APIs of `vouch` and `vouch-llm`.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use vouch_server::{serve, Gateway, ServerConfig};
//!
//! let config = ServerConfig::from_toml_str(r#"
//!     listen = "127.0.0.1:8080"
//!     upstream = "http://127.0.0.1:11434/v1"
//!     contracts = "examples/contracts"
//! "#)?;
//! let (gateway, errors) = Gateway::new(config, None, Vec::new())?;
//! assert!(errors.is_empty());
//! let listener = tokio::net::TcpListener::bind(gateway.config().listen).await?;
//! serve(Arc::new(gateway), listener, std::future::pending()).await?;
//! # Ok(())
//! # }
//! ```

mod catalog;
mod chat;
mod check;
mod config;
pub mod jobs;
mod metrics;
mod pass;
mod reply;

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use serde_json::{json, Map, Value};
use tokio::sync::Semaphore;
use tracing::Instrument as _;
use vouch_llm::{ApiKey, ForwardedKey, Scrubber};

pub use jobs::{open_jobs, Jobs};

pub use catalog::{is_contract_name, Catalog, Entry, InlineCache, InlineContract, LoadError};
pub use chat::{CONTRACT_HEADER, DEADLINE_HEADER, ROUNDS_HEADER, TOKENS_HEADER};
pub use config::{
    AskSettings, ConfigError, JobStoreAt, JobsConfig, ServerConfig, TimeoutsMs, WithoutContract, CREDENTIAL_HEADERS,
    OWN_HEADERS,
};

use metrics::Metrics;

/// Bytes as lower-case hex.
pub(crate) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// The first 16 bytes of the SHA-256 of `bytes`, in hex: a contract's
/// version, a job request's digest, a client token's owner name.
pub(crate) fn digest16(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    hex(sha2::Sha256::digest(bytes).get(..16).unwrap_or_default())
}

/// The request id header, taken from the client when it is a plain token,
/// else made; echoed on every response.
pub const REQUEST_ID: &str = "x-request-id";

/// Where the gateway's own client token comes when `pass_client_key` is
/// on (`Authorization` then holds the client's upstream key). Never
/// forwarded.
pub const TOKEN_HEADER: &str = "x-vouch-token";

/// The longest upstream key a client may bring (`pass_client_key`).
const MAX_CLIENT_KEY: usize = 1024;

/// How many clients' keys are kept with their scrubbers built
/// (`pass_client_key`); past it the cache starts again.
const CLIENT_KEYS_KEPT: usize = 256;

/// The deepest nesting read in a request body.
const MAX_BODY_DEPTH: usize = 128;

/// Why the gateway cannot start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// The configuration cannot be used.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The contracts folder cannot be read.
    #[error("{0}")]
    Contracts(String),
    /// The job store cannot be opened.
    #[error("{0}")]
    Jobs(String),
}

/// The gateway: configuration, contracts, metrics. Build it with
/// [`Gateway::new`], serve it with [`serve`] (or mount [`Gateway::router`]).
pub struct Gateway {
    config: ServerConfig,
    catalog: RwLock<Arc<Catalog>>,
    inline: InlineCache,
    metrics: Metrics,
    slots: Arc<Semaphore>,
    /// Of the answers: the key and the tokens only. A vouched value is sent
    /// byte for byte, even when a string in it looks like someone's key
    /// (`sk-…`, `Bearer …`): the patterns would change what was vouched.
    scrub: Scrubber,
    /// Of the logs: the key, the tokens, and the patterns too.
    log_scrub: Scrubber,
    key: Option<ApiKey>,
    key_header: Option<HeaderValue>,
    pass_client: reqwest::Client,
    tokens: Vec<Vec<u8>>,
    /// The gateway's tokens as text, scrubbed with every client's key.
    token_texts: Vec<String>,
    /// Clients' upstream keys seen (`pass_client_key`), with their scrubbers.
    client_keys: Mutex<HashMap<String, Arc<ClientKey>>>,
    ready: AtomicBool,
    next_id: AtomicU64,
    id_prefix: u32,
    /// The job store, once opened ([`open_jobs`]).
    jobs: std::sync::OnceLock<Arc<Jobs>>,
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gateway")
            .field("listen", &self.config.listen)
            .field("tokens", &self.tokens.len())
            .finish_non_exhaustive()
    }
}

/// A client's own upstream key (`pass_client_key`): what the ask sends, and
/// the scrubber of the answers (that key and the gateway's tokens).
pub(crate) struct ClientKey {
    pub(crate) forwarded: ForwardedKey,
    pub(crate) answers: Scrubber,
}

/// Bearer tokens from the configured file and environment variable.
///
/// # Errors
/// The file cannot be read, or the variable is set but holds no token.
pub fn read_tokens(config: &ServerConfig) -> Result<Vec<String>, ConfigError> {
    let mut tokens = Vec::new();
    if let Some(path) = &config.tokens_file {
        let text = std::fs::read_to_string(path)
            .map_err(|e| ConfigError(format!("{}: cannot read the tokens file: {e}", path.display())))?;
        tokens.extend(text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).map(str::to_owned));
    }
    if let Some(name) = &config.tokens_env {
        let value = std::env::var(name).map_err(|_| ConfigError(format!("the tokens variable {name} is not set")))?;
        tokens.extend(value.split([',', '\n']).map(str::trim).filter(|t| !t.is_empty()).map(str::to_owned));
    }
    if (config.tokens_file.is_some() || config.tokens_env.is_some()) && tokens.is_empty() {
        return Err(ConfigError("the tokens file or variable holds no token".to_owned()));
    }
    Ok(tokens)
}

/// The token of an `Authorization: Bearer TOKEN` value.
fn bearer(value: &str) -> Option<&str> {
    value.strip_prefix("Bearer ").or_else(|| value.strip_prefix("bearer "))
}

/// Equal in time that does not depend on where two tokens differ.
fn same_token(a: &[u8], b: &[u8]) -> bool {
    let mut diff = u8::from(a.len() != b.len());
    for i in 0..a.len().max(b.len()) {
        diff |= a.get(i).copied().unwrap_or(0) ^ b.get(i).copied().unwrap_or(0);
    }
    diff == 0
}

impl Gateway {
    /// Build the gateway: load the contracts folder (a contract that does not
    /// compile is left out and returned among the errors), the upstream key
    /// (`api_key`; `None` for an upstream that needs none) and the client
    /// tokens (none: only on a loopback address, with
    /// `allow_unauthenticated` or no tokens configured at all).
    ///
    /// # Errors
    /// A configuration that cannot be used, or a folder that cannot be read.
    pub fn new(
        config: ServerConfig,
        api_key: Option<String>,
        tokens: Vec<String>,
    ) -> Result<(Self, Vec<LoadError>), ServeError> {
        config.validate()?;
        if config.pass_client_key && api_key.as_deref().is_some_and(|k| !k.trim().is_empty()) {
            return Err(ConfigError(
                "pass_client_key sends each client's own key upstream: the server's key cannot be given too".to_owned(),
            )
            .into());
        }
        if tokens.is_empty() && !config.listen.ip().is_loopback() && !config.allow_unauthenticated {
            return Err(ConfigError(format!(
                "refusing to listen on {} without client tokens: set tokens_file or tokens_env (or allow_unauthenticated)",
                config.listen
            ))
            .into());
        }
        let api_key = api_key.filter(|k| !k.trim().is_empty());
        let key = api_key.clone().map(ApiKey::new);
        let log_scrub = Scrubber::new(api_key.iter().cloned().chain(tokens.iter().cloned()));
        let scrub = log_scrub.clone().without_patterns();
        let key_header = match &api_key {
            Some(k) => Some(
                HeaderValue::from_str(&format!("Bearer {k}"))
                    .map(|mut v| {
                        v.set_sensitive(true);
                        v
                    })
                    .map_err(|_| ConfigError("the API key cannot be sent in an HTTP header".to_owned()))?,
            ),
            None => None,
        };
        let (catalog, errors) =
            Catalog::load(&config.contracts, &config, key.as_ref(), None).map_err(ServeError::Contracts)?;
        let pass_client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(std::time::Duration::from_millis(config.timeouts.connect_ms))
            .build()
            .map_err(|e| ConfigError(format!("cannot build the HTTP client: {e}")))?;
        let gateway = Self {
            // Compiled inline contracts kept: 256 MiB of them at most.
            inline: InlineCache::new(config.inline_cache, 256 * 1024 * 1024),
            slots: Arc::new(Semaphore::new(config.max_concurrency)),
            catalog: RwLock::new(Arc::new(catalog)),
            metrics: Metrics::default(),
            scrub,
            log_scrub,
            key,
            key_header,
            pass_client,
            tokens: tokens.iter().map(|t| t.as_bytes().to_vec()).collect(),
            token_texts: tokens,
            client_keys: Mutex::new(HashMap::new()),
            ready: AtomicBool::new(true),
            next_id: AtomicU64::new(0),
            id_prefix: fastrand::u32(..),
            jobs: std::sync::OnceLock::new(),
            config,
        };
        Ok((gateway, errors))
    }

    /// The configuration.
    #[must_use]
    pub fn config(&self) -> &ServerConfig {
        &self.config
    }

    /// The contracts now in force.
    #[must_use]
    pub fn catalog(&self) -> Arc<Catalog> {
        self.catalog.read().map_or_else(|p| Arc::clone(&p.into_inner()), |c| Arc::clone(&c))
    }

    /// Load the contracts folder again: requests in flight keep the
    /// contract they started with; a contract that no longer compiles keeps
    /// its old version and is among the errors returned.
    ///
    /// # Errors
    /// The folder cannot be read (every contract is kept).
    pub fn reload(&self) -> Result<Vec<LoadError>, String> {
        let old = self.catalog();
        let loaded = Catalog::load(&self.config.contracts, &self.config, self.key.as_ref(), Some(&old));
        let (catalog, errors) = match loaded {
            Ok(l) => l,
            Err(e) => {
                self.metrics.reload(false);
                return Err(e);
            }
        };
        if let Ok(mut c) = self.catalog.write() {
            *c = Arc::new(catalog);
        }
        self.metrics.reload(errors.is_empty());
        Ok(errors)
    }

    /// The scrubber of the logs: the upstream key, the client tokens and
    /// the `Bearer …` / `sk-…` patterns (the answers are scrubbed of the key
    /// and the tokens).
    #[must_use]
    pub fn scrubber(&self) -> &Scrubber {
        &self.log_scrub
    }

    /// Mark the gateway as draining: `/readyz` answers 503 from now on.
    pub fn set_draining(&self) {
        self.ready.store(false, Ordering::Relaxed);
    }

    fn request_id(&self, headers: &HeaderMap) -> String {
        let given = headers.get(REQUEST_ID).and_then(|v| v.to_str().ok()).filter(|v| {
            !v.is_empty() && v.len() <= 128 && v.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.:".contains(&b))
        });
        match given {
            Some(v) if !self.scrub.holds_secret(v.as_bytes()) => v.to_owned(),
            _ => format!("{:08x}{:08x}", self.id_prefix, self.next_id.fetch_add(1, Ordering::Relaxed)),
        }
    }

    /// The 413 for a body over `max_body_bytes` (declared so, or read so), counted.
    fn body_too_large(&self) -> Response {
        self.metrics.limit("body_size");
        let message = format!("the request body is larger than {} bytes", self.config.max_body_bytes);
        reply::error(StatusCode::PAYLOAD_TOO_LARGE, "invalid_request_error", "body_too_large", &message, &self.scrub)
    }

    /// A request body as a JSON object, read strictly (a repeated key is
    /// not JSON vouch reads), or the answer that refuses it: 413 over
    /// `max_body_bytes`, 400 for a body that cannot be read, is not UTF-8
    /// JSON, or is not an object.
    fn request_object(&self, body: Result<Bytes, BytesRejection>) -> Result<Map<String, Value>, Box<Response>> {
        let bad = |code: &str, message: &str| {
            Box::new(reply::error(StatusCode::BAD_REQUEST, "invalid_request_error", code, message, &self.scrub))
        };
        let body = match body {
            Ok(b) => b,
            Err(e) if e.status() == StatusCode::PAYLOAD_TOO_LARGE => return Err(Box::new(self.body_too_large())),
            Err(e) if too_slow(&e) => {
                self.metrics.limit("body_time");
                return Err(Box::new(reply::error(
                    StatusCode::REQUEST_TIMEOUT,
                    "invalid_request_error",
                    "body_timeout",
                    &format!("the request body did not arrive within {} ms", self.config.body_read_timeout_ms),
                    &self.scrub,
                )));
            }
            Err(e) => {
                return Err(bad("unreadable_body", &format!("the request body could not be read: {}", e.body_text())))
            }
        };
        match std::str::from_utf8(&body).ok().map(|t| vouch::read_json(t, MAX_BODY_DEPTH)) {
            Some(Ok(Value::Object(o))) => Ok(o),
            Some(Ok(_)) => Err(bad("invalid_body", "the request body must be a JSON object")),
            Some(Err(e)) => Err(bad("invalid_json", &format!("the request body is not JSON: {}", e.message))),
            None => Err(bad("invalid_json", "the request body is not UTF-8 text")),
        }
    }

    /// The header the gateway's own clients present their token in.
    fn token_header(&self) -> header::HeaderName {
        if self.config.pass_client_key {
            header::HeaderName::from_static(TOKEN_HEADER)
        } else {
            header::AUTHORIZATION
        }
    }

    fn authorized(&self, headers: &HeaderMap) -> bool {
        if self.tokens.is_empty() {
            return true;
        }
        let Some(value) = headers.get(self.token_header()).and_then(|v| v.to_str().ok()) else { return false };
        // In x-vouch-token the `Bearer ` is optional; in Authorization it is not.
        let Some(given) = bearer(value).or(self.config.pass_client_key.then_some(value)) else { return false };
        let given = given.trim().as_bytes();
        // Every token is compared, so the time says nothing of which matched.
        self.tokens.iter().fold(false, |ok, t| same_token(t, given) | ok)
    }

    /// Whose a job is: a digest of the client's token (empty when the
    /// gateway takes no tokens). Another client's job is not found.
    fn client_owner(&self, headers: &HeaderMap) -> String {
        if self.tokens.is_empty() {
            return String::new();
        }
        let given = headers.get(self.token_header()).and_then(|v| v.to_str().ok()).unwrap_or("");
        digest16(bearer(given).unwrap_or(given).trim().as_bytes())
    }

    /// The job store, when [`open_jobs`] opened one.
    #[must_use]
    pub fn jobs(&self) -> Option<&Arc<Jobs>> {
        self.jobs.get()
    }

    /// With `pass_client_key`, the client's upstream key (its
    /// `Authorization: Bearer …`), or the 401 that refuses a request
    /// without one; `Ok(None)` when keys are not passed through.
    fn client_key(&self, headers: &HeaderMap) -> Result<Option<Arc<ClientKey>>, Box<Response>> {
        if !self.config.pass_client_key {
            return Ok(None);
        }
        let given = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(bearer)
            .map(str::trim)
            .filter(|k| !k.is_empty());
        let refuse = || {
            let mut r = reply::error(
                StatusCode::UNAUTHORIZED,
                "invalid_request_error",
                "missing_api_key",
                "this gateway sends the client's own upstream key: give it as Authorization: Bearer …",
                &self.scrub,
            );
            r.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            Box::new(r)
        };
        let Some(given) = given else { return Err(refuse()) };
        // Providers' keys are at most a few hundred characters; the scrubber of
        // a key costs time and memory in its length (a 200 KB "key" took 19 s).
        if given.len() > MAX_CLIENT_KEY {
            let r = reply::error(
                StatusCode::UNAUTHORIZED,
                "invalid_request_error",
                "invalid_api_key",
                &format!("an upstream key is at most {MAX_CLIENT_KEY} bytes"),
                &self.scrub,
            );
            return Err(Box::new(r));
        }
        if let Some(k) = self.client_keys.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get(given) {
            return Ok(Some(Arc::clone(k)));
        }
        // Built without the lock: other clients' requests do not wait for it.
        let Some(forwarded) = ForwardedKey::new(&ApiKey::new(given), &self.token_texts) else { return Err(refuse()) };
        let answers = forwarded.scrubber().clone().without_patterns();
        let key = Arc::new(ClientKey { forwarded, answers });
        let mut kept = self.client_keys.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if kept.len() >= CLIENT_KEYS_KEPT {
            kept.clear();
        }
        kept.insert(given.to_owned(), Arc::clone(&key));
        Ok(Some(key))
    }

    /// The routes, with the request id, client authentication, metrics and
    /// the body limit around them.
    pub fn router(self: Arc<Self>) -> Router {
        let limit = self.config.max_body_bytes;
        Router::new()
            .route("/v1/chat/completions", post(chat_route))
            .route("/v1/check", post(check_route))
            .route("/v1/jobs", post(jobs_post_route))
            .route("/v1/jobs/{id}", get(jobs_get_route).delete(jobs_cancel_route))
            .route("/v1/jobs/{id}/result", get(jobs_result_route))
            .route("/v1/contracts", get(contracts_route))
            .route("/healthz", get(|| async { "ok" }))
            .route("/readyz", get(ready_route))
            .route("/metrics", get(metrics_route))
            .fallback(not_found)
            .method_not_allowed_fallback(method_not_allowed)
            .layer(DefaultBodyLimit::max(limit))
            .layer(middleware::from_fn_with_state(Arc::clone(&self), around))
            .with_state(self)
    }
}

/// Request id, authentication, tracing and metrics around every route.
async fn around(State(g): State<Arc<Gateway>>, request: Request, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    let limit = Duration::from_millis(g.config.body_read_timeout_ms);
    let deadline = Box::pin(tokio::time::sleep(limit));
    let mut request = Request::from_parts(parts, axum::body::Body::new(BodyDeadline { inner: body, deadline, limit }));
    let id = g.request_id(request.headers());
    let path = request.uri().path().to_owned();
    let route = match path.as_str() {
        "/v1/chat/completions" | "/v1/check" | "/v1/contracts" | "/v1/jobs" | "/healthz" | "/readyz" | "/metrics" => {
            path.clone()
        }
        p if p.starts_with("/v1/jobs/") => "/v1/jobs/{id}".to_owned(),
        _ => "other".to_owned(),
    };
    // The request's span exists only at debug and below (the ask's own spans
    // nest in it there); at info its fields go in the one line per request:
    // a span per request cost as much as the line itself at thousands a second.
    let method = request.method().clone();
    let span = tracing::debug_span!("request", id = %id, method = %method, route = %route);
    let started = Instant::now();
    let mut response = if path.starts_with("/v1/") && !g.authorized(request.headers()) {
        let mut r = reply::error(
            StatusCode::UNAUTHORIZED,
            "invalid_request_error",
            "invalid_api_key",
            if g.config.pass_client_key {
                "the gateway needs a valid token in x-vouch-token"
            } else {
                "the gateway needs a valid bearer token (Authorization: Bearer …)"
            },
            &g.scrub,
        );
        r.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        r
    } else if declared_over(request.headers(), g.config.max_body_bytes) {
        // Answered before the body is touched: a client that sent `Expect:
        // 100-continue` is told now, not sent `100 Continue` and then
        // refused after uploading it all.
        g.body_too_large()
    } else {
        request.extensions_mut().insert(RequestId(id.clone()));
        // The ask's own spans (`ask`, `round`) are children of the request's.
        next.run(request).instrument(span.clone()).await
    };
    if let Ok(v) = HeaderValue::from_str(&id) {
        response.headers_mut().insert(REQUEST_ID, v);
    }
    let status = response.status().as_u16();
    g.metrics.request(&route, status);
    let elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    if span.is_disabled() {
        tracing::info!(id = %id, method = %method, route = %route, status, elapsed_ms, "answered");
    } else {
        tracing::info!(parent: &span, status, elapsed_ms, "answered");
    }
    response
}

/// The request declares a body (`Content-Length`) longer than `max` bytes.
fn declared_over(headers: &HeaderMap, max: usize) -> bool {
    headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .is_some_and(|len| len > u64::try_from(max).unwrap_or(u64::MAX))
}

#[derive(Clone)]
struct RequestId(String);

async fn chat_route(
    State(g): State<Arc<Gateway>>,
    axum::Extension(RequestId(id)): axum::Extension<RequestId>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    // Counted down on drop: a client that hangs up drops this future mid-way.
    let _counted = InFlight::new(Arc::clone(&g));
    chat::chat(Arc::clone(&g), headers, body, id).await
}

/// One request counted in `vouch_in_flight` while this lives.
struct InFlight(Arc<Gateway>);

impl InFlight {
    fn new(g: Arc<Gateway>) -> Self {
        g.metrics.in_flight(1);
        Self(g)
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.metrics.in_flight(-1);
    }
}

async fn jobs_post_route(
    State(g): State<Arc<Gateway>>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    jobs::post(g, headers, body).await
}

async fn jobs_get_route(
    State(g): State<Arc<Gateway>>,
    headers: HeaderMap,
    axum::extract::Path(id): axum::extract::Path<String>,
) -> Response {
    jobs::get(g, headers, id).await
}

async fn jobs_result_route(
    State(g): State<Arc<Gateway>>,
    headers: HeaderMap,
    axum::extract::Path(id): axum::extract::Path<String>,
) -> Response {
    jobs::result(g, headers, id).await
}

async fn jobs_cancel_route(
    State(g): State<Arc<Gateway>>,
    headers: HeaderMap,
    axum::extract::Path(id): axum::extract::Path<String>,
) -> Response {
    jobs::cancel(g, headers, id).await
}

async fn check_route(State(g): State<Arc<Gateway>>, body: Result<Bytes, BytesRejection>) -> Response {
    check::check(&g, body)
}

async fn contracts_route(State(g): State<Arc<Gateway>>) -> Response {
    let catalog = g.catalog();
    let data: Vec<Value> = catalog
        .named
        .values()
        .map(|e| {
            json!({
                "id": e.name,
                "object": "contract",
                "mode": if e.json_mode_because.is_some() { "json" } else { "schema" },
                "json_mode_because": e.json_mode_because,
                "rounds": e.limits.rounds,
                "max_total_tokens": e.limits.max_total_tokens,
                "deadline_ms": e.limits.deadline.map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
                "response_format": e.asker.response_format(),
            })
        })
        .collect();
    reply::json_response(
        StatusCode::OK,
        &json!({"object": "list", "data": data, "inline_cached": g.inline.len()}),
        &g.scrub,
    )
}

async fn ready_route(State(g): State<Arc<Gateway>>) -> Response {
    if g.ready.load(Ordering::Relaxed) {
        (StatusCode::OK, "ready").into_response()
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "draining").into_response()
    }
}

async fn metrics_route(State(g): State<Arc<Gateway>>) -> Response {
    jobs::refresh_depth(&g).await;
    let text = g.scrub.scrub(&g.metrics.render());
    let mut r = (StatusCode::OK, text).into_response();
    r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; version=0.0.4"));
    r
}

async fn not_found(State(g): State<Arc<Gateway>>) -> Response {
    reply::error(StatusCode::NOT_FOUND, "invalid_request_error", "not_found", "no such route", &g.scrub)
}

/// A route asked with a method it does not take: an OpenAI-shaped error, as every other.
async fn method_not_allowed(State(g): State<Arc<Gateway>>) -> Response {
    let message = "this route does not take that method";
    reply::error(StatusCode::METHOD_NOT_ALLOWED, "invalid_request_error", "method_not_allowed", message, &g.scrub)
}

/// Serve until `shutdown` resolves, then stop taking connections and drain
/// the requests in flight (`/readyz` says draining meanwhile). With a
/// `drain_delay_ms`, connections are still taken that long after
/// `shutdown`, `/readyz` answering 503, so a load balancer sees the gateway
/// leave before its listener closes.
///
/// # Errors
/// The listener fails.
pub async fn serve(
    gateway: Arc<Gateway>,
    listener: tokio::net::TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    use hyper_util::rt::{TokioIo, TokioTimer};
    use hyper_util::server::graceful::GracefulShutdown;
    use hyper_util::service::TowerToHyperService;
    let app = Arc::clone(&gateway).router();
    let mut http = hyper::server::conn::http1::Builder::new();
    // A client has this long to send a request's head (and an idle
    // keep-alive connection this long to start its next): no timer, no limit.
    http.timer(TokioTimer::new()).header_read_timeout(Duration::from_millis(gateway.config.header_read_timeout_ms));
    let graceful = GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    let delay = Duration::from_millis(gateway.config.drain_delay_ms);
    // Unset until `shutdown`; then when the listener closes.
    let mut closing: Option<tokio::time::Instant> = None;
    loop {
        let until_close = async {
            match closing {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        let tcp = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((tcp, _)) => tcp,
                // Out of descriptors and the like: wait, as the OS may free some.
                Err(e) => {
                    tracing::debug!("accepting a connection failed: {e}");
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            },
            () = &mut shutdown, if closing.is_none() => {
                if delay.is_zero() {
                    break;
                }
                gateway.set_draining();
                tracing::info!(drain_delay_ms = gateway.config.drain_delay_ms, "shutting down: /readyz answers 503, still taking connections for the drain delay");
                closing = Some(tokio::time::Instant::now() + delay);
                continue;
            }
            () = until_close => break,
        };
        // A stream's events are small writes: Nagle's algorithm would hold one
        // back until the client acknowledged the one before.
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!("TCP_NODELAY not set on a connection: {e}");
        }
        let service = TowerToHyperService::new(app.clone());
        let connection = graceful.watch(http.serve_connection(TokioIo::new(tcp), service));
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!("a connection ended: {e}");
            }
        });
    }
    gateway.set_draining();
    tracing::info!("shutting down: draining the requests in flight");
    drop(listener);
    graceful.shutdown().await;
    Ok(())
}

/// The body stopped because its deadline passed (see [`BodyDeadline`]).
fn too_slow(rejection: &BytesRejection) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(rejection);
    while let Some(e) = source {
        if e.is::<BodyTooSlow>() {
            return true;
        }
        source = e.source();
    }
    false
}

/// A request body that fails once its deadline passes: a client sending a
/// byte every few seconds would otherwise hold its connection (and the
/// handler waiting for the body) for as long as it liked.
struct BodyDeadline {
    inner: axum::body::Body,
    deadline: std::pin::Pin<Box<tokio::time::Sleep>>,
    limit: Duration,
}

/// Why a body stopped: its deadline passed (answered 408, not 400).
#[derive(Debug, thiserror::Error)]
#[error("it did not arrive within {} ms", .0.as_millis())]
struct BodyTooSlow(Duration);

impl http_body::Body for BodyDeadline {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Bytes>, axum::Error>>> {
        if self.deadline.as_mut().poll(cx).is_ready() {
            return std::task::Poll::Ready(Some(Err(axum::Error::new(BodyTooSlow(self.limit)))));
        }
        std::pin::Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

/// Reload the contracts on every SIGHUP (Unix), logging what failed. The
/// handler is in place when this returns (call it, within the runtime,
/// before saying the gateway listens: a SIGHUP with no handler ends the
/// process).
///
/// # Errors
/// The signal handler cannot be installed.
pub fn reload_on_sighup(gateway: Arc<Gateway>) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let mut hup = signal(SignalKind::hangup())?;
        tokio::spawn(async move {
            while hup.recv().await.is_some() {
                match gateway.reload() {
                    Ok(errors) if errors.is_empty() => tracing::info!("contracts reloaded"),
                    Ok(errors) => {
                        let catalog = gateway.catalog();
                        for e in errors {
                            // A new file that failed has no old contract to keep.
                            if catalog.named.contains_key(&e.name) {
                                tracing::warn!(contract = %e.name, "kept the old contract: {}", e.message);
                            } else {
                                tracing::warn!(contract = %e.name, "not loaded: {}", e.message);
                            }
                        }
                    }
                    Err(e) => tracing::warn!("contracts not reloaded: {e}"),
                }
            }
        });
    }
    #[cfg(not(unix))]
    drop(gateway);
    Ok(())
}
