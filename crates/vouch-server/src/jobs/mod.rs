//! Jobs: `POST /v1/jobs` takes a chat completion request and answers 202
//! at once; a worker runs it as `/v1/chat/completions` would (the same
//! contract choice, rounds, budget, deadline, fallback) and records exactly
//! the body that endpoint would have answered; `GET /v1/jobs/{id}` shows
//! it; `DELETE` cancels it, the upstream call in flight included.
//!
//! A job is kept before its 202 is sent (an embedded SQLite file, or Redis
//! shared by replicas), held by one worker at a time under a lease, and
//! taken over when its worker dies: it runs at least once, and its result
//! is recorded once. It never passes by default: a job whose contract is
//! gone or changed since it was posted, that ran too many times, that
//! cannot be read, or whose run failed in a way not foreseen, ends as a
//! refusal that says why. See `docs/jobs.md`.

mod redis;
mod sqlite;
pub mod store;
pub mod webhook;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::http::{header, HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::response::Response;
use serde_json::{json, Value};
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};
use tokio::task::AbortHandle;

use crate::chat::{self, Prepared};
use crate::config::{JobStoreAt, JobsConfig};
use crate::reply::error;
use crate::{Gateway, ServeError};
use store::{Cancel, Claimed, NewJob, Outcome, Record, Status, Store, Submitted};

/// The header that makes a retried `POST /v1/jobs` return the same job.
pub const IDEMPOTENCY_HEADER: &str = "idempotency-key";

/// The most jobs one replica takes in one step of the store.
const CLAIM_BATCH: usize = 32;

/// The largest response body a job records.
const MAX_RESULT_BYTES: usize = 64 * 1024 * 1024;

/// Milliseconds since the epoch.
#[must_use]
pub fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The jobs of one replica: its store, its workers, the jobs it runs now.
pub struct Jobs {
    store: Store,
    config: JobsConfig,
    /// This replica's name in leases.
    worker: String,
    running: Mutex<HashMap<String, AbortHandle>>,
    wake: Notify,
    stopping: AtomicBool,
    webhook_secret: Option<Vec<u8>>,
    webhooks: reqwest::Client,
}

impl std::fmt::Debug for Jobs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Jobs").field("worker", &self.worker).finish_non_exhaustive()
    }
}

impl Jobs {
    /// What the store is, for the logs.
    #[must_use]
    pub fn describe(&self) -> String {
        self.store.describe()
    }

    /// Jobs this replica runs now.
    #[must_use]
    pub fn running(&self) -> usize {
        self.running.lock().map_or(0, |r| r.len())
    }

    /// Stop taking jobs, and wait up to `deadline` for the ones running to
    /// finish. Those still running then are left to their lease: another
    /// replica, or this one started again, takes them over.
    pub async fn drain(&self, deadline: Duration) {
        self.stopping.store(true, Ordering::Relaxed);
        self.wake.notify_waiters();
        let until = tokio::time::Instant::now() + deadline;
        while self.running() > 0 && tokio::time::Instant::now() < until {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    fn retention_ms(&self) -> u64 {
        self.config.retention_s.saturating_mul(1000)
    }
}

/// Open the configured job store, attach it to the gateway and start its
/// workers and sweeper. `Ok(None)`: jobs are off (`store = "off"`, or the
/// default store, not configured by name, cannot be opened: logged).
///
/// # Errors
/// A store configured by name cannot be opened, or the webhook secret's
/// variable is not set.
pub async fn open_jobs(g: &Arc<Gateway>) -> Result<Option<Arc<Jobs>>, ServeError> {
    let config = g.config.jobs.clone();
    let at = config.store_at(g.config.listen);
    let webhook_secret = match &config.webhook_secret_env {
        Some(name) => match std::env::var(name) {
            Ok(s) if !s.trim().is_empty() => Some(s.trim().as_bytes().to_vec()),
            _ => return Err(crate::ConfigError(format!("the webhook secret variable {name} is not set")).into()),
        },
        None => None,
    };
    if matches!(at, JobStoreAt::Redis(_)) && config.key_prefix.is_empty() {
        return Err(crate::ConfigError("jobs.key_prefix cannot be empty".to_owned()).into());
    }
    let store = match Store::open(&at, &config.key_prefix).await {
        Ok(Some(s)) => s,
        Ok(None) => return Ok(None),
        // Not asked for by name: the gateway serves, without jobs, and says so.
        Err(e) if config.store.is_none() => {
            tracing::warn!("jobs are off: the default job store cannot be opened ({e}); set jobs.store or --jobs");
            return Ok(None);
        }
        Err(e) => return Err(ServeError::Jobs(e.to_string())),
    };
    let webhooks = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(Duration::from_secs(5))
        .timeout(Duration::from_secs(15))
        .build()
        .map_err(|e| crate::ConfigError(format!("cannot build the webhook client: {e}")))?;
    let jobs = Arc::new(Jobs {
        store,
        worker: format!("{}-{:016x}", std::process::id(), fastrand::u64(..)),
        running: Mutex::new(HashMap::new()),
        wake: Notify::new(),
        stopping: AtomicBool::new(false),
        webhook_secret,
        webhooks,
        config,
    });
    if g.jobs.set(Arc::clone(&jobs)).is_err() {
        return Err(crate::ConfigError("the job store is open already".to_owned()).into());
    }
    tokio::spawn(dispatch(Arc::clone(g), Arc::clone(&jobs)));
    tokio::spawn(sweep(Arc::clone(&jobs)));
    Ok(Some(jobs))
}

/// Take jobs as workers free up (as many at once as are free, up to
/// [`CLAIM_BATCH`], in one step of the store); when none waits, sleep until
/// one is posted here or `poll_ms` pass (for jobs posted to other replicas,
/// and leases that ran out).
async fn dispatch(g: Arc<Gateway>, jobs: Arc<Jobs>) {
    let slots = Arc::new(Semaphore::new(jobs.config.workers));
    let poll = Duration::from_millis(jobs.config.poll_ms.max(1));
    let mut failing = Duration::ZERO;
    while !jobs.stopping.load(Ordering::Relaxed) {
        let Ok(first) = Arc::clone(&slots).acquire_owned().await else { return };
        let mut permits = vec![first];
        while permits.len() < CLAIM_BATCH {
            match Arc::clone(&slots).try_acquire_owned() {
                Ok(p) => permits.push(p),
                Err(_) => break,
            }
        }
        if jobs.stopping.load(Ordering::Relaxed) {
            return;
        }
        // Registered before the claim: a job posted while the claim runs wakes it.
        let woken = jobs.wake.notified();
        match jobs.store.claim(&jobs.worker, now_ms(), jobs.config.lease_ms, permits.len()).await {
            Ok(claimed) if !claimed.is_empty() => {
                failing = Duration::ZERO;
                for (job, permit) in claimed.into_iter().zip(permits) {
                    tokio::spawn(run(Arc::clone(&g), Arc::clone(&jobs), job, permit));
                }
            }
            Ok(_) => {
                drop(permits);
                let _ = tokio::time::timeout(poll, woken).await;
            }
            Err(e) => {
                drop(permits);
                failing = (failing * 2).clamp(poll, poll * 50);
                tracing::warn!("jobs: cannot take a job: {e}");
                tokio::time::sleep(failing).await;
            }
        }
    }
}

/// Remove finished jobs past their retention, now and then.
async fn sweep(jobs: Arc<Jobs>) {
    let every = Duration::from_secs((jobs.config.retention_s / 10).clamp(1, 60));
    loop {
        tokio::time::sleep(every).await;
        match jobs.store.sweep(now_ms()).await {
            Ok(0) => {}
            Ok(n) => tracing::debug!(removed = n, "jobs: expired results removed"),
            Err(e) => tracing::warn!("jobs: cannot remove expired results: {e}"),
        }
    }
}

/// Why a job was refused without an answer of the upstream's.
fn refusal(g: &Gateway, code: &str, message: &str) -> Outcome {
    let body = json!({"error": {
        "message": message, "type": "vouch_refused", "param": null, "code": code, "problems": [],
    }});
    Outcome { status_code: 422, outcome: "refused".to_owned(), body: g.scrub.scrub(&body.to_string()) }
}

/// Run one claimed job, renewing its lease meanwhile, and record its result.
async fn run(g: Arc<Gateway>, jobs: Arc<Jobs>, claimed: Claimed, _permit: OwnedSemaphorePermit) {
    let id = claimed.id.clone();
    let run_started = now_ms();
    if claimed.attempts == 1 {
        g.metrics.job_started(claimed.started_ms.saturating_sub(claimed.created_ms));
    }
    let outcome = if claimed.attempts > jobs.config.max_attempts {
        refusal(
            &g,
            "job_attempts_exhausted",
            &format!(
                "the job was started {} times without finishing (a replica running it stopped each time); it is not run again",
                claimed.attempts.saturating_sub(1)
            ),
        )
    } else {
        // The ask's own spans (`ask`, `round`) nest in the job's, as in a request's.
        let span = tracing::debug_span!("job", id = %id, attempt = claimed.attempts);
        let task = tokio::spawn(tracing::Instrument::instrument(execute(Arc::clone(&g), claimed.clone()), span));
        if let Ok(mut r) = jobs.running.lock() {
            r.insert(id.clone(), task.abort_handle());
        }
        let joined = hold(&jobs, &id, task).await;
        if let Ok(mut r) = jobs.running.lock() {
            r.remove(&id);
        }
        match joined {
            Held::Finished(o) => o,
            // Cancelled, or the lease was lost: whoever holds the job now records it.
            Held::Lost => {
                g.metrics.job_discarded();
                return;
            }
            Held::Failed(why) => {
                tracing::error!(job = %id, "the job's run failed: {why}");
                refusal(
                    &g,
                    "job_failed",
                    "the job's run failed in a way the gateway did not foresee; it was not answered",
                )
            }
        }
    };
    let kind = outcome.outcome.clone();
    // A store that fails for a moment is tried again; past that the lease
    // runs out and the job runs again (at least once, recorded once).
    let mut wait = Duration::from_millis(100);
    for _ in 0..5 {
        match jobs.store.complete(&id, &jobs.worker, outcome.clone(), now_ms(), jobs.retention_ms()).await {
            Ok(true) => {
                let now = now_ms();
                g.metrics.job_finished(&kind, now.saturating_sub(run_started), now.saturating_sub(claimed.created_ms));
                tracing::info!(
                    job = %id,
                    contract = %claimed.contract,
                    outcome = %kind,
                    attempts = claimed.attempts,
                    run_ms = now.saturating_sub(run_started),
                    total_ms = now.saturating_sub(claimed.created_ms),
                    "job finished"
                );
                if let Some(url) = claimed.webhook {
                    tokio::spawn(webhook::deliver(Arc::clone(&g), Arc::clone(&jobs), id, url));
                }
                return;
            }
            Ok(false) => {
                g.metrics.job_discarded();
                tracing::info!(job = %id, "the job's result was not recorded: it was cancelled or taken over");
                return;
            }
            Err(e) => {
                tracing::warn!(job = %id, "cannot record the job's result: {e}");
                tokio::time::sleep(wait).await;
                wait *= 2;
            }
        }
    }
}

enum Held {
    Finished(Outcome),
    Lost,
    Failed(String),
}

/// The longest time between two renewals of a lease: a job cancelled
/// through another replica stops within it.
const MAX_RENEW_EVERY: Duration = Duration::from_secs(2);

/// Wait for the run, renewing the lease every third of it (at least every
/// [`MAX_RENEW_EVERY`]); a renewal refused (the job was cancelled, or
/// another replica took it over) aborts the run, and with it the upstream
/// call.
async fn hold(jobs: &Jobs, id: &str, mut task: tokio::task::JoinHandle<Outcome>) -> Held {
    let every = Duration::from_millis((jobs.config.lease_ms / 3).max(30)).min(MAX_RENEW_EVERY);
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    loop {
        tokio::select! {
            joined = &mut task => {
                return match joined {
                    Ok(o) => Held::Finished(o),
                    Err(e) if e.is_cancelled() => Held::Lost,
                    Err(e) => Held::Failed(e.to_string()),
                };
            }
            _ = tick.tick() => {
                match jobs.store.renew(id, &jobs.worker, now_ms(), jobs.config.lease_ms).await {
                    Ok(true) => {}
                    Ok(false) => {
                        task.abort();
                        return Held::Lost;
                    }
                    Err(e) => tracing::warn!(job = %id, "cannot renew the job's lease: {e}"),
                }
            }
        }
    }
}

/// What a job's request is kept as: the body as sent, and the headers
/// that shape its answer (contract, limits, forwarded ones).
#[derive(serde::Serialize, serde::Deserialize)]
struct Kept {
    body: String,
    headers: Vec<(String, String)>,
}

/// The headers a job keeps.
fn kept_headers(g: &Gateway, headers: &HeaderMap) -> Vec<(String, String)> {
    let own = [chat::CONTRACT_HEADER, chat::ROUNDS_HEADER, chat::TOKENS_HEADER, chat::DEADLINE_HEADER];
    headers
        .iter()
        .filter(|(n, _)| own.contains(&n.as_str()) || g.config.forwards(n.as_str()))
        .filter_map(|(n, v)| v.to_str().ok().map(|v| (n.as_str().to_owned(), v.to_owned())))
        .collect()
}

/// Run the job's request as `/v1/chat/completions` would, under the
/// contract it was posted against.
async fn execute(g: Arc<Gateway>, claimed: Claimed) -> Outcome {
    let Ok(kept) = serde_json::from_str::<Kept>(&claimed.request) else {
        return refusal(&g, "job_unreadable", "the job's stored request cannot be read; it was not run");
    };
    let mut headers = HeaderMap::new();
    for (n, v) in &kept.headers {
        if let (Ok(n), Ok(v)) = (HeaderName::from_bytes(n.as_bytes()), HeaderValue::from_str(v)) {
            headers.append(n, v);
        }
    }
    let gone = || {
        refusal(
            &g,
            "contract_gone",
            &format!(
                "the contract {:?} this job was posted against is no longer served; it was not run",
                claimed.contract
            ),
        )
    };
    let ask = match chat::prepare(&g, &headers, Ok(Bytes::from(kept.body))) {
        Ok(Prepared::Ask(a)) => a,
        Ok(Prepared::Pass { .. }) => return gone(),
        Err(r) if r.status() == StatusCode::NOT_FOUND => return gone(),
        Err(r) => {
            let message = error_message(*r).await;
            return refusal(&g, "job_invalid", &format!("the job's request is refused now: {message}"));
        }
    };
    if ask.entry.name != claimed.contract || ask.entry.version != claimed.version {
        return refusal(
            &g,
            "contract_changed",
            &format!(
                "the job was posted against {:?} version {}; the gateway now serves {:?} version {}; it was not run",
                claimed.contract, claimed.version, ask.entry.name, ask.entry.version
            ),
        );
    }
    if ask.forwarded.streams() {
        return refusal(&g, "job_invalid", "a job answers once: stream must be false");
    }
    let response = chat::answer(Arc::clone(&g), *ask, &claimed.id, None).await;
    let status_code = response.status().as_u16();
    let outcome =
        response.headers().get("x-vouch-outcome").and_then(|v| v.to_str().ok()).unwrap_or("refused").to_owned();
    match axum::body::to_bytes(response.into_body(), MAX_RESULT_BYTES).await.map(|b| String::from_utf8(b.to_vec())) {
        Ok(Ok(body)) => Outcome { status_code, outcome, body },
        _ => refusal(&g, "job_failed", "the job's answer could not be read; it was not recorded"),
    }
}

/// The `message` of an error response the gateway wrote.
async fn error_message(r: Response) -> String {
    let bytes = axum::body::to_bytes(r.into_body(), 1024 * 1024).await.unwrap_or_default();
    serde_json::from_slice::<Value>(&bytes)
        .ok()
        .and_then(|v| v.pointer("/error/message").and_then(Value::as_str).map(str::to_owned))
        .unwrap_or_else(|| "the request cannot be answered".to_owned())
}

/// The job as `GET /v1/jobs/{id}` shows it: its state, and once finished
/// `response`: the status code, outcome and exactly the body
/// `/v1/chat/completions` would have answered.
#[must_use]
pub fn record_json(r: &Record) -> String {
    let head = json!({
        "id": r.id,
        "object": "vouch.job",
        "status": r.status.as_str(),
        "contract": {"name": r.contract, "version": r.version},
        "created_ms": r.created_ms,
        "started_ms": r.started_ms,
        "finished_ms": r.finished_ms,
        "attempts": r.attempts,
        "webhook": r.webhook.as_ref().map(|url| json!({
            "url": url,
            "delivery": r.delivery.as_deref().and_then(|d| serde_json::from_str::<Value>(d).ok()),
        })),
    });
    let mut text = head.to_string();
    if let Some(o) = &r.result {
        // The body is spliced in as it was written, byte for byte (it is JSON
        // the gateway wrote; a record that holds anything else is shown as a string).
        let body = if serde_json::from_str::<serde::de::IgnoredAny>(&o.body).is_ok() {
            o.body.clone()
        } else {
            Value::String(o.body.clone()).to_string()
        };
        text.pop();
        text.push_str(&format!(
            ",\"response\":{{\"status_code\":{},\"outcome\":{},\"body\":{body}}}}}",
            o.status_code,
            Value::String(o.outcome.clone())
        ));
    }
    text
}

fn json_text(status: StatusCode, text: String) -> Response {
    let mut r = Response::new(axum::body::Body::from(text));
    *r.status_mut() = status;
    r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r
}

fn attached(g: &Gateway) -> Result<Arc<Jobs>, Box<Response>> {
    g.jobs.get().cloned().ok_or_else(|| {
        Box::new(error(
            StatusCode::NOT_FOUND,
            "invalid_request_error",
            "jobs_off",
            "this gateway runs no jobs (jobs.store is off)",
            &g.scrub,
        ))
    })
}

fn store_failed(g: &Gateway, e: &store::StoreError) -> Response {
    tracing::warn!("jobs: {e}");
    let mut r = error(
        StatusCode::SERVICE_UNAVAILABLE,
        "server_error",
        "job_store_unavailable",
        "the job store cannot be reached; retry shortly",
        &g.scrub,
    );
    r.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    r
}

fn valid_id(id: &str) -> bool {
    id.strip_prefix("job_").is_some_and(|h| h.len() == 32 && h.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// `POST /v1/jobs`.
pub(crate) async fn post(g: Arc<Gateway>, headers: HeaderMap, body: Result<Bytes, BytesRejection>) -> Response {
    let jobs = match attached(&g) {
        Ok(j) => j,
        Err(r) => return *r,
    };
    let bad =
        |code: &str, message: &str| error(StatusCode::BAD_REQUEST, "invalid_request_error", code, message, &g.scrub);
    if g.config.pass_client_key {
        return bad(
            "jobs_need_gateway_key",
            "with pass_client_key a job would have to keep the client's own upstream key; this gateway takes no jobs",
        );
    }
    let body = match body {
        Ok(b) => b,
        Err(e) => return *g.request_object(Err(e)).err().unwrap_or_else(|| Box::new(bad("unreadable_body", ""))),
    };
    // The job's own options: `vouch.webhook`.
    let webhook = match g.request_object(Ok(body.clone())) {
        Ok(o) => o.get("vouch").and_then(|v| v.get("webhook")).cloned(),
        Err(r) => return *r,
    };
    let webhook = match webhook {
        None | Some(Value::Null) => None,
        Some(Value::String(url)) => {
            if jobs.webhook_secret.is_none() {
                return bad("webhooks_off", "this gateway sends no webhooks (jobs.webhook_secret_env is not set)");
            }
            if !webhook::allowed(&url, &jobs.config.webhook_allow) {
                return bad(
                    "webhook_not_allowed",
                    "vouch.webhook is not under one of the gateway's jobs.webhook_allow prefixes",
                );
            }
            Some(url)
        }
        Some(_) => return bad("invalid_body", "vouch.webhook must be a URL string"),
    };
    let entry = match chat::prepare(&g, &headers, Ok(body.clone())) {
        Ok(Prepared::Ask(a)) if a.forwarded.streams() => {
            return bad(
                "stream_unsupported",
                "a job answers once: stream must be false (GET /v1/jobs/{id} gives the result)",
            )
        }
        Ok(Prepared::Ask(a)) => Arc::clone(&a.entry),
        Ok(Prepared::Pass { .. }) => {
            return bad(
                "contract_required",
                "a job is always checked against a contract: name one in response_format.json_schema.name or the \
                 x-vouch-contract header, or send its JSON Schema",
            )
        }
        Err(r) => return *r,
    };
    let idempotency_key = match headers.get(IDEMPOTENCY_HEADER).map(|v| v.to_str()) {
        None => None,
        Some(Ok(k)) if !k.is_empty() && k.len() <= 255 && k.bytes().all(|b| b.is_ascii_graphic()) => Some(k.to_owned()),
        Some(_) => return bad("invalid_idempotency_key", "Idempotency-Key must be 1 to 255 visible ASCII characters"),
    };
    let Ok(body_text) = String::from_utf8(body.to_vec()) else {
        return bad("invalid_json", "the request body is not UTF-8 text");
    };
    let kept = Kept { body: body_text, headers: kept_headers(&g, &headers) };
    let request = serde_json::to_string(&kept).unwrap_or_default();
    let job = NewJob {
        id: format!("job_{:032x}", fastrand::u128(..)),
        owner: g.client_owner(&headers),
        idempotency_key,
        request_hash: crate::digest16(request.as_bytes()),
        request,
        contract: entry.name.clone(),
        version: entry.version.clone(),
        webhook,
        created_ms: now_ms(),
    };
    let id = job.id.clone();
    // The new job as the 202 shows it: queued (a worker may hold it already by the time it is read back).
    let as_posted = Record {
        id: job.id.clone(),
        owner: job.owner.clone(),
        status: Status::Queued,
        contract: job.contract.clone(),
        version: job.version.clone(),
        created_ms: job.created_ms,
        started_ms: None,
        finished_ms: None,
        attempts: 0,
        result: None,
        webhook: job.webhook.clone(),
        delivery: None,
    };
    let replayed = match jobs.store.submit(job, jobs.config.max_queued).await {
        Ok(Submitted::New) => {
            g.metrics.job_submitted();
            jobs.wake.notify_one();
            None
        }
        Ok(Submitted::Existing(id)) => Some(id),
        Ok(Submitted::KeyReused) => {
            return error(
                StatusCode::UNPROCESSABLE_ENTITY,
                "invalid_request_error",
                "idempotency_key_reused",
                "this Idempotency-Key was used for another request",
                &g.scrub,
            )
        }
        Ok(Submitted::Full) => {
            g.metrics.job_rejected("queue_full");
            let mut r = error(
                StatusCode::TOO_MANY_REQUESTS,
                "rate_limit_error",
                "job_queue_full",
                &format!("{} jobs are waiting already; retry later", jobs.config.max_queued),
                &g.scrub,
            );
            r.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
            return r;
        }
        Err(e) => return store_failed(&g, &e),
    };
    let shown = replayed.as_deref().unwrap_or(&id);
    let record = match &replayed {
        None => record_json(&as_posted),
        // A replay shows the job as it is now.
        Some(existing) => match jobs.store.get(existing).await {
            Ok(Some(r)) => record_json(&r),
            Ok(None) => {
                return error(
                    StatusCode::CONFLICT,
                    "invalid_request_error",
                    "idempotency_key_expired",
                    "the job this Idempotency-Key made has been removed (past its retention); use a new key",
                    &g.scrub,
                )
            }
            Err(e) => return store_failed(&g, &e),
        },
    };
    let mut r = json_text(StatusCode::ACCEPTED, g.scrub.scrub(&record));
    if let Ok(v) = HeaderValue::from_str(&format!("/v1/jobs/{shown}")) {
        r.headers_mut().insert(header::LOCATION, v);
    }
    if replayed.is_some() {
        r.headers_mut().insert("idempotent-replayed", HeaderValue::from_static("true"));
    }
    r
}

/// The job, if it is there and the client's.
async fn owned(g: &Gateway, jobs: &Jobs, headers: &HeaderMap, id: &str) -> Result<Record, Box<Response>> {
    let unknown =
        || Box::new(error(StatusCode::NOT_FOUND, "invalid_request_error", "unknown_job", "no such job", &g.scrub));
    if !valid_id(id) {
        return Err(unknown());
    }
    match jobs.store.get(id).await {
        Ok(Some(r)) if r.owner == g.client_owner(headers) => Ok(r),
        Ok(_) => Err(unknown()),
        Err(e) => Err(Box::new(store_failed(g, &e))),
    }
}

/// `GET /v1/jobs/{id}`.
pub(crate) async fn get(g: Arc<Gateway>, headers: HeaderMap, id: String) -> Response {
    let jobs = match attached(&g) {
        Ok(j) => j,
        Err(r) => return *r,
    };
    match owned(&g, &jobs, &headers, &id).await {
        Ok(r) => {
            let mut resp = json_text(StatusCode::OK, g.scrub.scrub(&record_json(&r)));
            if let Ok(v) = HeaderValue::from_str(r.status.as_str()) {
                resp.headers_mut().insert("x-vouch-job-status", v);
            }
            resp
        }
        Err(r) => *r,
    }
}

/// `GET /v1/jobs/{id}/result`: the recorded answer itself, with its status
/// code, as `/v1/chat/completions` would have sent it (409 until finished).
pub(crate) async fn result(g: Arc<Gateway>, headers: HeaderMap, id: String) -> Response {
    let jobs = match attached(&g) {
        Ok(j) => j,
        Err(r) => return *r,
    };
    let r = match owned(&g, &jobs, &headers, &id).await {
        Ok(r) => r,
        Err(r) => return *r,
    };
    let Some(o) = r.result else {
        let mut resp = error(
            StatusCode::CONFLICT,
            "invalid_request_error",
            "job_not_finished",
            &format!("the job is {}; its result is not there yet", r.status.as_str()),
            &g.scrub,
        );
        resp.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        return resp;
    };
    let status = StatusCode::from_u16(o.status_code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut resp = json_text(status, g.scrub.scrub(&o.body));
    if let Ok(v) = HeaderValue::from_str(&o.outcome) {
        resp.headers_mut().insert("x-vouch-outcome", v);
    }
    if let Ok(v) = HeaderValue::from_str(r.status.as_str()) {
        resp.headers_mut().insert("x-vouch-job-status", v);
    }
    if let Ok(v) = HeaderValue::from_str(&r.contract) {
        resp.headers_mut().insert("x-vouch-contract", v);
    }
    resp
}

/// `DELETE /v1/jobs/{id}`: cancel it (a running one's upstream call is
/// aborted, here at once, on another replica at its next lease renewal).
pub(crate) async fn cancel(g: Arc<Gateway>, headers: HeaderMap, id: String) -> Response {
    let jobs = match attached(&g) {
        Ok(j) => j,
        Err(r) => return *r,
    };
    if let Err(r) = owned(&g, &jobs, &headers, &id).await {
        return *r;
    }
    let body = refusal(&g, "job_cancelled", "the job was cancelled before it finished");
    match jobs.store.cancel(&id, body, now_ms(), jobs.retention_ms()).await {
        Ok(Cancel::Cancelled(_)) => {
            if let Some(task) = jobs.running.lock().ok().and_then(|mut r| r.remove(&id)) {
                task.abort();
            }
            g.metrics.job_finished("cancelled", 0, 0);
        }
        Ok(Cancel::Finished(status)) => {
            return error(
                StatusCode::CONFLICT,
                "invalid_request_error",
                "job_finished",
                &format!("the job is {} already; nothing was cancelled", status.as_str()),
                &g.scrub,
            )
        }
        Ok(Cancel::Unknown) => {
            return error(StatusCode::NOT_FOUND, "invalid_request_error", "unknown_job", "no such job", &g.scrub)
        }
        Err(e) => return store_failed(&g, &e),
    }
    match jobs.store.get(&id).await {
        Ok(Some(r)) => json_text(StatusCode::OK, g.scrub.scrub(&record_json(&r))),
        Ok(None) => json_text(StatusCode::OK, json!({"id": id, "status": Status::Cancelled.as_str()}).to_string()),
        Err(e) => store_failed(&g, &e),
    }
}

/// The queue's depth for `/metrics` (a store that does not answer in time
/// leaves the last figure).
pub(crate) async fn refresh_depth(g: &Gateway) {
    if let Some(jobs) = g.jobs.get() {
        if let Ok(Ok(n)) = tokio::time::timeout(Duration::from_millis(250), jobs.store.depth()).await {
            g.metrics.jobs_gauges(n, jobs.running());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::webhook::{allowed, sign};

    #[test]
    fn signatures_are_hmac_sha256_of_timestamp_dot_body() {
        // Checked against an independent computation
        // (python3 -c "import hmac,hashlib;print(hmac.new(b'Jefe',b'1.body',hashlib.sha256).hexdigest())").
        assert_eq!(
            sign(b"Jefe", 1, b"body"),
            "sha256=25d254c27761adb1423727084ca395476858b2401387226230b6358cf07fad8b"
        );
    }

    #[test]
    fn webhooks_go_only_under_an_allowed_prefix() {
        let allow = vec!["https://hooks.example.com/".to_owned()];
        assert!(allowed("https://hooks.example.com/vouch", &allow));
        assert!(!allowed("https://hooks.example.com.evil.test/", &allow));
        assert!(!allowed("http://169.254.169.254/latest", &allow));
        assert!(!allowed("https://hooks.example.com/a b", &allow));
        assert!(!allowed("https://hooks.example.com/", &[]));
        // A prefix written without its last slash still names one host.
        let bare = vec!["https://hooks.example.com".to_owned()];
        assert!(allowed("https://hooks.example.com/vouch", &bare));
        assert!(allowed("https://hooks.example.com", &bare));
        for elsewhere in [
            "https://hooks.example.com.evil.test/",
            "https://hooks.example.com@evil.test/",
            "https://hooks.example.com:8443/",
            "https://hooks.example.com:@evil.test/",
        ] {
            assert!(!allowed(elsewhere, &bare), "{elsewhere}");
        }
        // Under a path, and on another port.
        let path = vec!["http://127.0.0.1:9000/hooks/".to_owned()];
        assert!(allowed("http://127.0.0.1:9000/hooks/a?x=1", &path));
        assert!(!allowed("http://127.0.0.1:9000/other", &path));
        assert!(!allowed("http://127.0.0.1:9000@10.0.0.1/hooks/", &path));
        assert!(!allowed("http://user:pw@127.0.0.1:9000/hooks/", &["http://".to_owned()]));
    }

    #[test]
    fn a_webhook_prefix_without_a_host_does_not_start() {
        let config = |allow: &str| {
            crate::ServerConfig::from_toml_str(&format!(
                "upstream = \"http://127.0.0.1:9/v1\"\ncontracts = \".\"\n[jobs]\nwebhook_allow = [{allow:?}]"
            ))
            .and_then(|c| c.validate())
        };
        assert!(config("https://hooks.example.com").is_ok());
        for bad in ["https://", "http://", "https://user@hooks.example.com/", "hooks.example.com/"] {
            let refused = config(bad);
            assert!(matches!(&refused, Err(e) if e.to_string().contains("jobs.webhook_allow")), "{bad}: {refused:?}");
        }
    }
}
