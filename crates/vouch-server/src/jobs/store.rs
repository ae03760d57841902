//! Where jobs are kept: one embedded SQLite file, or a Redis server shared
//! by replicas. Both keep the same record and make the same promises:
//!
//! - a job answered with 202 is written before the 202 is sent;
//! - a job is held by one worker at a time, under a lease it renews; a
//!   lease that runs out (the worker was killed) lets another take it;
//! - a result is recorded only by the worker holding the job, once: a
//!   worker that lost its lease, or whose job was cancelled, records nothing.

use crate::config::JobStoreAt;

/// A job's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Waiting for a worker.
    Queued,
    /// Held by a worker.
    Running,
    /// Finished: its response is recorded.
    Done,
    /// Cancelled before it finished: its response is the refusal that says so.
    Cancelled,
}

impl Status {
    /// The name in the API and in the store.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Queued => "queued",
            Self::Running => "running",
            Self::Done => "done",
            Self::Cancelled => "cancelled",
        }
    }

    /// A status read back from the store (`None`: not one vouch writes).
    #[must_use]
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "queued" => Some(Self::Queued),
            "running" => Some(Self::Running),
            "done" => Some(Self::Done),
            "cancelled" => Some(Self::Cancelled),
            _ => None,
        }
    }
}

/// A job to keep.
#[derive(Debug, Clone)]
pub struct NewJob {
    /// `job_` and 32 hex digits.
    pub id: String,
    /// Whose it is (a digest of the client's token; empty without tokens).
    pub owner: String,
    /// The client's `Idempotency-Key`, if any.
    pub idempotency_key: Option<String>,
    /// A digest of the request, to tell a retry from another request under the same key.
    pub request_hash: String,
    /// The request as stored (JSON: body and the headers that shape it).
    pub request: String,
    /// The contract's name when posted.
    pub contract: String,
    /// The contract's version when posted.
    pub version: String,
    /// Where to deliver the result.
    pub webhook: Option<String>,
    /// When it was posted (ms since the epoch).
    pub created_ms: u64,
}

/// What a submission came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Submitted {
    /// Kept, with this id.
    New,
    /// The idempotency key was seen: this job, for the same request.
    Existing(String),
    /// The idempotency key was seen for another request.
    KeyReused,
    /// Too many jobs wait.
    Full,
}

/// A job a worker now holds.
#[derive(Debug, Clone)]
pub struct Claimed {
    /// Its id.
    pub id: String,
    /// The request as stored.
    pub request: String,
    /// The contract's name and version when posted.
    pub contract: String,
    /// See [`Claimed::contract`].
    pub version: String,
    /// Runs so far, this one included.
    pub attempts: u32,
    /// When it was posted.
    pub created_ms: u64,
    /// When it first started.
    pub started_ms: u64,
    /// Where to deliver the result.
    pub webhook: Option<String>,
}

/// A result to record.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The HTTP status the synchronous endpoint would have answered.
    pub status_code: u16,
    /// `accepted`, `fallback`, `refused` (as `x-vouch-outcome`).
    pub outcome: String,
    /// The body it would have answered, byte for byte.
    pub body: String,
}

/// A job as kept.
#[derive(Debug, Clone)]
pub struct Record {
    /// Its id.
    pub id: String,
    /// Whose.
    pub owner: String,
    /// Its state.
    pub status: Status,
    /// The contract's name and version when posted.
    pub contract: String,
    /// See [`Record::contract`].
    pub version: String,
    /// When posted, first started, finished (ms since the epoch).
    pub created_ms: u64,
    /// See [`Record::created_ms`].
    pub started_ms: Option<u64>,
    /// See [`Record::created_ms`].
    pub finished_ms: Option<u64>,
    /// Runs so far.
    pub attempts: u32,
    /// Set once finished.
    pub result: Option<Outcome>,
    /// Where the result is delivered.
    pub webhook: Option<String>,
    /// How the delivery went (a JSON object), once tried.
    pub delivery: Option<String>,
}

/// What a cancel found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cancel {
    /// It was queued or running: now cancelled.
    Cancelled(Status),
    /// It had finished already: left as it was.
    Finished(Status),
    /// No such job.
    Unknown,
}

/// A store that failed (a file or server that cannot be reached, a record
/// that cannot be read).
#[derive(Debug, thiserror::Error)]
#[error("the job store: {0}")]
pub struct StoreError(pub String);

/// The configured store.
pub enum Store {
    /// An embedded SQLite file.
    Sqlite(super::sqlite::SqliteStore),
    /// A Redis server.
    Redis(Box<super::redis::RedisStore>),
}

impl Store {
    /// Open the store (creating the file and its folder if need be).
    ///
    /// # Errors
    /// The file cannot be opened or the server cannot be reached.
    pub async fn open(at: &JobStoreAt, prefix: &str) -> Result<Option<Self>, StoreError> {
        Ok(match at {
            JobStoreAt::Off => None,
            JobStoreAt::File(path) => Some(Self::Sqlite(super::sqlite::SqliteStore::open(path.clone()).await?)),
            JobStoreAt::Redis(url) => Some(Self::Redis(Box::new(super::redis::RedisStore::open(url, prefix).await?))),
        })
    }

    /// What the store is, for the logs.
    #[must_use]
    pub fn describe(&self) -> String {
        match self {
            Self::Sqlite(s) => format!("sqlite {}", s.path().display()),
            Self::Redis(r) => format!("redis {}", r.describe()),
        }
    }

    /// Keep a job, unless its idempotency key was seen or `max_queued` wait.
    ///
    /// # Errors
    /// The store failed.
    pub async fn submit(&self, job: NewJob, max_queued: u64) -> Result<Submitted, StoreError> {
        match self {
            Self::Sqlite(s) => s.submit(job, max_queued).await,
            Self::Redis(r) => r.submit(job, max_queued).await,
        }
    }

    /// A job by id.
    ///
    /// # Errors
    /// The store failed.
    pub async fn get(&self, id: &str) -> Result<Option<Record>, StoreError> {
        match self {
            Self::Sqlite(s) => s.get(id).await,
            Self::Redis(r) => r.get(id).await,
        }
    }

    /// Take up to `max` jobs for `worker`, in one step: the oldest queued,
    /// then those whose lease ran out.
    ///
    /// # Errors
    /// The store failed.
    pub async fn claim(
        &self,
        worker: &str,
        now_ms: u64,
        lease_ms: u64,
        max: usize,
    ) -> Result<Vec<Claimed>, StoreError> {
        match self {
            Self::Sqlite(s) => s.claim(worker, now_ms, lease_ms, max).await,
            Self::Redis(r) => r.claim(worker, now_ms, lease_ms, max).await,
        }
    }

    /// Extend `worker`'s lease; `false` when it holds the job no more
    /// (cancelled, or taken over).
    ///
    /// # Errors
    /// The store failed.
    pub async fn renew(&self, id: &str, worker: &str, now_ms: u64, lease_ms: u64) -> Result<bool, StoreError> {
        match self {
            Self::Sqlite(s) => s.renew(id, worker, now_ms.saturating_add(lease_ms)).await,
            Self::Redis(r) => r.renew(id, worker, lease_ms).await,
        }
    }

    /// Record the result, if `worker` still holds the job; `false` (nothing
    /// recorded) otherwise.
    ///
    /// # Errors
    /// The store failed.
    pub async fn complete(
        &self,
        id: &str,
        worker: &str,
        outcome: Outcome,
        now_ms: u64,
        retention_ms: u64,
    ) -> Result<bool, StoreError> {
        match self {
            Self::Sqlite(s) => s.complete(id, worker, outcome, now_ms, retention_ms).await,
            Self::Redis(r) => r.complete(id, worker, outcome, now_ms, retention_ms).await,
        }
    }

    /// Cancel a queued or running job, recording `outcome` as its response.
    ///
    /// # Errors
    /// The store failed.
    pub async fn cancel(
        &self,
        id: &str,
        outcome: Outcome,
        now_ms: u64,
        retention_ms: u64,
    ) -> Result<Cancel, StoreError> {
        match self {
            Self::Sqlite(s) => s.cancel(id, outcome, now_ms, retention_ms).await,
            Self::Redis(r) => r.cancel(id, outcome, now_ms, retention_ms).await,
        }
    }

    /// Record how a webhook delivery went (a JSON object).
    ///
    /// # Errors
    /// The store failed.
    pub async fn record_delivery(&self, id: &str, delivery: String) -> Result<(), StoreError> {
        match self {
            Self::Sqlite(s) => s.record_delivery(id, delivery).await,
            Self::Redis(r) => r.record_delivery(id, delivery).await,
        }
    }

    /// Remove finished jobs kept past their time; how many.
    ///
    /// # Errors
    /// The store failed.
    pub async fn sweep(&self, now_ms: u64) -> Result<u64, StoreError> {
        match self {
            Self::Sqlite(s) => s.sweep(now_ms).await,
            // Redis removes them itself (each finished job has a TTL).
            Self::Redis(_) => Ok(0),
        }
    }

    /// Jobs waiting.
    ///
    /// # Errors
    /// The store failed.
    pub async fn depth(&self) -> Result<u64, StoreError> {
        match self {
            Self::Sqlite(s) => s.depth().await,
            Self::Redis(r) => r.depth().await,
        }
    }
}
