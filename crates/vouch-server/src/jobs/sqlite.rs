//! Jobs in one SQLite file (WAL mode, `synchronous = FULL`: a job answered
//! with 202 is on disk, and survives the process being killed or the
//! machine losing power). Every statement runs on tokio's blocking pool,
//! one at a time over one connection; each change is one transaction.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rusqlite::{params, Connection, OptionalExtension as _};

use super::store::{Cancel, Claimed, NewJob, Outcome, Record, Status, StoreError, Submitted};

/// The schema's version, kept in `PRAGMA user_version`.
const SCHEMA_VERSION: i64 = 1;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS jobs (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    idem TEXT,
    request_hash TEXT NOT NULL,
    request TEXT NOT NULL,
    contract TEXT NOT NULL,
    version TEXT NOT NULL,
    webhook TEXT,
    status TEXT NOT NULL,
    created_ms INTEGER NOT NULL,
    started_ms INTEGER,
    finished_ms INTEGER,
    attempts INTEGER NOT NULL DEFAULT 0,
    worker TEXT,
    lease_until_ms INTEGER,
    result_status INTEGER,
    result_outcome TEXT,
    result_body TEXT,
    delivery TEXT,
    expires_ms INTEGER
);
CREATE UNIQUE INDEX IF NOT EXISTS jobs_idem ON jobs(owner, idem) WHERE idem IS NOT NULL;
CREATE INDEX IF NOT EXISTS jobs_status ON jobs(status);
CREATE INDEX IF NOT EXISTS jobs_expires ON jobs(expires_ms) WHERE expires_ms IS NOT NULL;
CREATE TABLE IF NOT EXISTS counts (name TEXT PRIMARY KEY, n INTEGER NOT NULL);
CREATE TRIGGER IF NOT EXISTS jobs_queued_insert AFTER INSERT ON jobs WHEN NEW.status = 'queued'
  BEGIN UPDATE counts SET n = n + 1 WHERE name = 'queued'; END;
CREATE TRIGGER IF NOT EXISTS jobs_queued_update AFTER UPDATE OF status ON jobs
  WHEN (OLD.status = 'queued') <> (NEW.status = 'queued')
  BEGIN UPDATE counts SET n = n + (CASE WHEN NEW.status = 'queued' THEN 1 ELSE -1 END) WHERE name = 'queued'; END;
CREATE TRIGGER IF NOT EXISTS jobs_queued_delete AFTER DELETE ON jobs WHEN OLD.status = 'queued'
  BEGIN UPDATE counts SET n = n - 1 WHERE name = 'queued'; END;
";

/// The jobs waiting, kept by the triggers above (a count of the table would
/// cost a scan per POST at a deep queue); counted afresh at each open.
const RECOUNT: &str = "
BEGIN IMMEDIATE;
INSERT OR REPLACE INTO counts (name, n) VALUES ('queued', (SELECT COUNT(*) FROM jobs WHERE status = 'queued'));
COMMIT;
";

const QUEUED: &str = "SELECT n FROM counts WHERE name = 'queued'";

fn err(e: impl std::fmt::Display) -> StoreError {
    StoreError(e.to_string())
}

fn ms(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn unms(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

/// A change for the writer thread: it runs inside the writer's transaction
/// and says whether it held, with what to answer once the transaction
/// committed (or failed).
type Write = Box<dyn FnOnce(&Connection) -> (bool, Box<dyn FnOnce(Result<(), String>) + Send>) + Send>;

/// The most changes one transaction (one sync to disk) takes.
const GROUP_COMMIT: usize = 256;

/// The writer thread: every change waiting goes in one transaction (each in
/// its own savepoint, so one that fails leaves the others), one sync to disk
/// for all, then each is answered. Ends when the store is dropped.
fn writer(conn: &Connection, queue: &std::sync::mpsc::Receiver<Write>) {
    while let Ok(first) = queue.recv() {
        let mut batch = vec![first];
        while batch.len() < GROUP_COMMIT {
            match queue.try_recv() {
                Ok(w) => batch.push(w),
                Err(_) => break,
            }
        }
        let begun = conn.execute_batch("BEGIN IMMEDIATE");
        let mut answers = Vec::with_capacity(batch.len());
        for write in batch {
            if begun.is_err() {
                // No transaction: nothing runs; each waiting caller gets an error.
                drop(write);
                continue;
            }
            let _ = conn.execute_batch("SAVEPOINT change");
            let (ok, answer) = write(conn);
            let undo = if ok { "RELEASE change" } else { "ROLLBACK TO change; RELEASE change" };
            let _ = conn.execute_batch(undo);
            answers.push(answer);
        }
        let committed = match begun {
            Ok(()) => conn.execute_batch("COMMIT").map_err(|e| {
                let _ = conn.execute_batch("ROLLBACK");
                e.to_string()
            }),
            Err(e) => Err(e.to_string()),
        };
        for answer in answers {
            answer(committed.clone());
        }
    }
}

/// The embedded store.
pub struct SqliteStore {
    path: PathBuf,
    /// Every change goes to the writer thread, which owns the one writing
    /// connection.
    writes: std::sync::mpsc::Sender<Write>,
    /// Reads (`GET`, the queue's depth) go through this one: in WAL mode they
    /// do not wait for a change being synced to disk.
    reader: Arc<Mutex<Connection>>,
}

impl SqliteStore {
    /// Open (or create) the file, its folder, and the schema.
    ///
    /// # Errors
    /// The file cannot be opened, or holds another schema.
    pub async fn open(path: PathBuf) -> Result<Self, StoreError> {
        let p = path.clone();
        let conn = tokio::task::spawn_blocking(move || -> Result<Connection, StoreError> {
            if let Some(dir) = p.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir).map_err(|e| StoreError(format!("{}: {e}", dir.display())))?;
            }
            let conn = Connection::open(&p).map_err(|e| StoreError(format!("{}: {e}", p.display())))?;
            conn.busy_timeout(std::time::Duration::from_secs(10)).map_err(err)?;
            let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0)).map_err(err)?;
            if !mode.eq_ignore_ascii_case("wal") {
                return Err(StoreError(format!("{}: cannot use write-ahead logging ({mode})", p.display())));
            }
            conn.execute_batch("PRAGMA synchronous = FULL;").map_err(err)?;
            let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).map_err(err)?;
            if version > SCHEMA_VERSION {
                return Err(StoreError(format!(
                    "{}: written by a newer vouch (schema {version}; this one reads {SCHEMA_VERSION})",
                    p.display()
                )));
            }
            conn.execute_batch(SCHEMA).map_err(err)?;
            conn.execute_batch(RECOUNT).map_err(err)?;
            conn.execute_batch(&format!("PRAGMA user_version = {SCHEMA_VERSION};")).map_err(err)?;
            Ok(conn)
        })
        .await
        .map_err(err)??;
        let p = path.clone();
        let reader = tokio::task::spawn_blocking(move || -> Result<Connection, StoreError> {
            let c = Connection::open_with_flags(&p, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
                .map_err(|e| StoreError(format!("{}: {e}", p.display())))?;
            c.busy_timeout(std::time::Duration::from_secs(10)).map_err(err)?;
            Ok(c)
        })
        .await
        .map_err(err)??;
        let (writes, queue) = std::sync::mpsc::channel::<Write>();
        std::thread::Builder::new()
            .name("vouch-jobs-sqlite".to_owned())
            .spawn(move || writer(&conn, &queue))
            .map_err(|e| StoreError(format!("cannot start the store's writer: {e}")))?;
        Ok(Self { path, writes, reader: Arc::new(Mutex::new(reader)) })
    }

    /// The file.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Run a change on the writer thread; answered once its transaction
    /// is on disk.
    async fn with<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T, rusqlite::Error> + Send + 'static,
    ) -> Result<T, StoreError> {
        let (tx, rx) = tokio::sync::oneshot::channel::<Result<T, StoreError>>();
        let write: Write = Box::new(move |c: &Connection| {
            let result = f(c);
            let ok = result.is_ok();
            let answer: Box<dyn FnOnce(Result<(), String>) + Send> = Box::new(move |committed| {
                let _ = tx.send(match (result, committed) {
                    (Ok(v), Ok(())) => Ok(v),
                    (Err(e), _) => Err(err(e)),
                    (Ok(_), Err(e)) => Err(StoreError(e)),
                });
            });
            (ok, answer)
        });
        self.writes.send(write).map_err(|_| StoreError("the store's writer has stopped".to_owned()))?;
        rx.await.map_err(|_| StoreError("the store could not begin a transaction, or its writer stopped".to_owned()))?
    }

    async fn read<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Connection) -> Result<T, rusqlite::Error> + Send + 'static,
    ) -> Result<T, StoreError> {
        let conn = Arc::clone(&self.reader);
        tokio::task::spawn_blocking(move || {
            let mut c = conn.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            f(&mut c).map_err(err)
        })
        .await
        .map_err(err)?
    }

    pub(super) async fn submit(&self, job: NewJob, max_queued: u64) -> Result<Submitted, StoreError> {
        self.with(move |c| {
            if let Some(key) = &job.idempotency_key {
                let seen: Option<(String, String)> = c
                    .query_row(
                        "SELECT id, request_hash FROM jobs WHERE owner = ?1 AND idem = ?2",
                        params![job.owner, key],
                        |r| Ok((r.get(0)?, r.get(1)?)),
                    )
                    .optional()?;
                if let Some((id, hash)) = seen {
                    return Ok(if hash == job.request_hash { Submitted::Existing(id) } else { Submitted::KeyReused });
                }
            }
            let waiting: i64 = c.query_row(QUEUED, [], |r| r.get(0))?;
            if unms(waiting) >= max_queued {
                return Ok(Submitted::Full);
            }
            c.execute(
                "INSERT INTO jobs (id, owner, idem, request_hash, request, contract, version, webhook, status, created_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 'queued', ?9)",
                params![
                    job.id,
                    job.owner,
                    job.idempotency_key,
                    job.request_hash,
                    job.request,
                    job.contract,
                    job.version,
                    job.webhook,
                    ms(job.created_ms)
                ],
            )?;
            Ok(Submitted::New)
        })
        .await
    }

    pub(super) async fn get(&self, id: &str) -> Result<Option<Record>, StoreError> {
        let id = id.to_owned();
        let row = self
            .read(move |c| {
                c.query_row(
                    "SELECT id, owner, status, contract, version, created_ms, started_ms, finished_ms, attempts,
                            result_status, result_outcome, result_body, webhook, delivery
                     FROM jobs WHERE id = ?1",
                    params![id],
                    |r| {
                        Ok((
                            (r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?),
                            (r.get::<_, String>(3)?, r.get::<_, String>(4)?),
                            (r.get::<_, i64>(5)?, r.get::<_, Option<i64>>(6)?, r.get::<_, Option<i64>>(7)?),
                            r.get::<_, i64>(8)?,
                            (
                                r.get::<_, Option<i64>>(9)?,
                                r.get::<_, Option<String>>(10)?,
                                r.get::<_, Option<String>>(11)?,
                            ),
                            (r.get::<_, Option<String>>(12)?, r.get::<_, Option<String>>(13)?),
                        ))
                    },
                )
                .optional()
            })
            .await?;
        let Some(((id, owner, status), (contract, version), (created, started, finished), attempts, result, hook)) =
            row
        else {
            return Ok(None);
        };
        let status =
            Status::parse(&status).ok_or_else(|| StoreError(format!("job {id}: unknown status {status:?}")))?;
        let result = match result {
            (Some(code), Some(outcome), Some(body)) => {
                Some(Outcome { status_code: u16::try_from(code).unwrap_or(500), outcome, body })
            }
            _ => None,
        };
        Ok(Some(Record {
            id,
            owner,
            status,
            contract,
            version,
            created_ms: unms(created),
            started_ms: started.map(unms),
            finished_ms: finished.map(unms),
            attempts: u32::try_from(attempts).unwrap_or(u32::MAX),
            result,
            webhook: hook.0,
            delivery: hook.1,
        }))
    }

    pub(super) async fn claim(
        &self,
        worker: &str,
        now_ms: u64,
        lease_ms: u64,
        max: usize,
    ) -> Result<Vec<Claimed>, StoreError> {
        let worker = worker.to_owned();
        let max = i64::try_from(max.max(1)).unwrap_or(1);
        self.with(move |c| {
            // One transaction (one sync to disk) for every job taken at once.
            let now = ms(now_ms);
            // The oldest queued jobs, then the oldest whose holder's lease ran out.
            let mut ids: Vec<String> = {
                let mut q = c.prepare_cached("SELECT id FROM jobs WHERE status = 'queued' ORDER BY rowid LIMIT ?1")?;
                let rows = q.query_map(params![max], |r| r.get(0))?;
                rows.collect::<Result<_, _>>()?
            };
            let room = max - i64::try_from(ids.len()).unwrap_or(max);
            if room > 0 {
                let mut q = c.prepare_cached(
                    "SELECT id FROM jobs WHERE status = 'running' AND lease_until_ms < ?1 ORDER BY rowid LIMIT ?2",
                )?;
                let rows = q.query_map(params![now, room], |r| r.get::<_, String>(0))?;
                for id in rows {
                    ids.push(id?);
                }
            }
            let mut claimed = Vec::with_capacity(ids.len());
            {
                let mut update = c.prepare_cached(
                    "UPDATE jobs SET status = 'running', worker = ?2, lease_until_ms = ?3, attempts = attempts + 1,
                            started_ms = COALESCE(started_ms, ?4)
                     WHERE id = ?1
                     RETURNING id, request, contract, version, attempts, created_ms, started_ms, webhook",
                )?;
                for id in ids {
                    claimed.push(update.query_row(
                        params![id, worker, ms(now_ms.saturating_add(lease_ms)), now],
                        |r| {
                            Ok(Claimed {
                                id: r.get(0)?,
                                request: r.get(1)?,
                                contract: r.get(2)?,
                                version: r.get(3)?,
                                attempts: u32::try_from(r.get::<_, i64>(4)?).unwrap_or(u32::MAX),
                                created_ms: unms(r.get(5)?),
                                started_ms: unms(r.get(6)?),
                                webhook: r.get(7)?,
                            })
                        },
                    )?);
                }
            }
            Ok(claimed)
        })
        .await
    }

    pub(super) async fn renew(&self, id: &str, worker: &str, until_ms: u64) -> Result<bool, StoreError> {
        let (id, worker) = (id.to_owned(), worker.to_owned());
        self.with(move |c| {
            let n = c.execute(
                "UPDATE jobs SET lease_until_ms = ?3 WHERE id = ?1 AND status = 'running' AND worker = ?2",
                params![id, worker, ms(until_ms)],
            )?;
            Ok(n == 1)
        })
        .await
    }

    pub(super) async fn complete(
        &self,
        id: &str,
        worker: &str,
        outcome: Outcome,
        now_ms: u64,
        retention_ms: u64,
    ) -> Result<bool, StoreError> {
        let (id, worker) = (id.to_owned(), worker.to_owned());
        self.with(move |c| {
            let n = c.execute(
                "UPDATE jobs SET status = 'done', result_status = ?3, result_outcome = ?4, result_body = ?5,
                        finished_ms = ?6, expires_ms = ?7, worker = NULL, lease_until_ms = NULL
                 WHERE id = ?1 AND status = 'running' AND worker = ?2",
                params![
                    id,
                    worker,
                    i64::from(outcome.status_code),
                    outcome.outcome,
                    outcome.body,
                    ms(now_ms),
                    ms(now_ms.saturating_add(retention_ms))
                ],
            )?;
            Ok(n == 1)
        })
        .await
    }

    pub(super) async fn cancel(
        &self,
        id: &str,
        outcome: Outcome,
        now_ms: u64,
        retention_ms: u64,
    ) -> Result<Cancel, StoreError> {
        let id = id.to_owned();
        self.with(move |c| {
            let status: Option<String> =
                c.query_row("SELECT status FROM jobs WHERE id = ?1", params![id], |r| r.get(0)).optional()?;
            let Some(status) = status.as_deref().and_then(Status::parse) else { return Ok(Cancel::Unknown) };
            if matches!(status, Status::Done | Status::Cancelled) {
                return Ok(Cancel::Finished(status));
            }
            c.execute(
                "UPDATE jobs SET status = 'cancelled', result_status = ?2, result_outcome = ?3, result_body = ?4,
                        finished_ms = ?5, expires_ms = ?6, worker = NULL, lease_until_ms = NULL
                 WHERE id = ?1",
                params![
                    id,
                    i64::from(outcome.status_code),
                    outcome.outcome,
                    outcome.body,
                    ms(now_ms),
                    ms(now_ms.saturating_add(retention_ms))
                ],
            )?;
            Ok(Cancel::Cancelled(status))
        })
        .await
    }

    pub(super) async fn record_delivery(&self, id: &str, delivery: String) -> Result<(), StoreError> {
        let id = id.to_owned();
        self.with(move |c| {
            c.execute("UPDATE jobs SET delivery = ?2 WHERE id = ?1", params![id, delivery])?;
            Ok(())
        })
        .await
    }

    pub(super) async fn sweep(&self, now_ms: u64) -> Result<u64, StoreError> {
        self.with(move |c| {
            let n =
                c.execute("DELETE FROM jobs WHERE expires_ms IS NOT NULL AND expires_ms < ?1", params![ms(now_ms)])?;
            Ok(u64::try_from(n).unwrap_or(0))
        })
        .await
    }

    pub(super) async fn depth(&self) -> Result<u64, StoreError> {
        self.read(|c| {
            let n: i64 = c.query_row(QUEUED, [], |r| r.get(0))?;
            Ok(unms(n))
        })
        .await
    }
}
