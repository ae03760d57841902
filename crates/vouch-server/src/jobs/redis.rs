//! Jobs in Redis, shared by every replica pointed at the same server and
//! key prefix. Each change is one Lua script, so it is atomic on the
//! server: a job is taken off the queue and leased in one step, and a
//! result is recorded only while its worker still holds the lease. Leases
//! are timed by the server's clock (`TIME`), so replicas' clocks do not
//! matter. Keys (PREFIX is `jobs.key_prefix`):
//!
//! - `PREFIX:queue`: the ids waiting (a list; new ones pushed on the left);
//! - `PREFIX:leases`: the ids running, scored by when their lease ends;
//! - `PREFIX:job:ID`: one job (a hash), given a TTL when it finishes;
//! - `PREFIX:idem:OWNER:KEY`: the job an idempotency key made.

use redis::aio::ConnectionManager;
use redis::Script;

use super::store::{Cancel, Claimed, NewJob, Outcome, Record, Status, StoreError, Submitted};

/// Idempotency keys of jobs not yet finished are kept this long at most
/// (a finished job's key lives as long as the job).
const IDEM_TTL_S: u64 = 7 * 24 * 3600;

const SUBMIT: &str = r"
local prefix = ARGV[1]
local idem = ARGV[2]
if idem ~= '' then
  local seen = redis.call('GET', idem)
  if seen then
    local hash = redis.call('HGET', prefix .. ':job:' .. seen, 'request_hash')
    if hash == ARGV[5] or not hash then return {'existing', seen} end
    return {'reused', seen}
  end
end
if redis.call('LLEN', prefix .. ':queue') >= tonumber(ARGV[3]) then return {'full', ''} end
local id = ARGV[4]
redis.call('HSET', prefix .. ':job:' .. id, 'id', id, 'status', 'queued', 'request_hash', ARGV[5],
  'owner', ARGV[6], 'request', ARGV[7], 'contract', ARGV[8], 'version', ARGV[9], 'webhook', ARGV[10],
  'created_ms', ARGV[11], 'attempts', '0', 'idem', idem)
redis.call('LPUSH', prefix .. ':queue', id)
if idem ~= '' then redis.call('SET', idem, id, 'EX', tonumber(ARGV[12])) end
return {'new', id}
";

/// Pops up to ARGV[5] jobs: the oldest queued ids, else the oldest expired
/// leases. A popped id whose job is gone or finished (cancelled meanwhile)
/// is dropped. Answers the jobs' fields, 8 per job.
const CLAIM: &str = r"
local prefix = ARGV[1]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local until_ms = now + tonumber(ARGV[3])
local out = {}
local taken = 0
local tries = 0
while taken < tonumber(ARGV[5]) and tries < 4 * tonumber(ARGV[5]) + 16 do
  tries = tries + 1
  local id = redis.call('RPOP', prefix .. ':queue')
  if not id then
    local expired = redis.call('ZRANGEBYSCORE', prefix .. ':leases', '-inf', now, 'LIMIT', 0, 1)
    id = expired[1]
  end
  if not id then break end
  local key = prefix .. ':job:' .. id
  local status = redis.call('HGET', key, 'status')
  if status ~= 'queued' and status ~= 'running' then
    redis.call('ZREM', prefix .. ':leases', id)
  else
    redis.call('HSET', key, 'status', 'running', 'worker', ARGV[2], 'lease_until_ms', until_ms)
    if redis.call('HEXISTS', key, 'started_ms') == 0 then redis.call('HSET', key, 'started_ms', ARGV[4]) end
    local attempts = redis.call('HINCRBY', key, 'attempts', 1)
    redis.call('ZADD', prefix .. ':leases', until_ms, id)
    local f = redis.call('HMGET', key, 'request', 'contract', 'version', 'created_ms', 'started_ms', 'webhook')
    for _, v in ipairs({id, f[1] or '', f[2] or '', f[3] or '', tostring(attempts), f[4] or '0', f[5] or '0', f[6] or ''}) do
      table.insert(out, v)
    end
    taken = taken + 1
  end
end
return out
";

const RENEW: &str = r"
local prefix = ARGV[1]
local key = prefix .. ':job:' .. ARGV[2]
if redis.call('HGET', key, 'status') ~= 'running' or redis.call('HGET', key, 'worker') ~= ARGV[3] then return 0 end
local t = redis.call('TIME')
local until_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[4])
redis.call('HSET', key, 'lease_until_ms', until_ms)
redis.call('ZADD', prefix .. ':leases', until_ms, ARGV[2])
return 1
";

const COMPLETE: &str = r"
local prefix = ARGV[1]
local id = ARGV[2]
local key = prefix .. ':job:' .. id
if redis.call('HGET', key, 'status') ~= 'running' or redis.call('HGET', key, 'worker') ~= ARGV[3] then return 0 end
redis.call('HSET', key, 'status', 'done', 'result_status', ARGV[4], 'result_outcome', ARGV[5], 'result_body', ARGV[6],
  'finished_ms', ARGV[7])
redis.call('HDEL', key, 'worker', 'lease_until_ms')
redis.call('ZREM', prefix .. ':leases', id)
redis.call('EXPIRE', key, tonumber(ARGV[8]))
local idem = redis.call('HGET', key, 'idem')
if idem and idem ~= '' then redis.call('EXPIRE', idem, tonumber(ARGV[8])) end
return 1
";

const CANCEL: &str = r"
local prefix = ARGV[1]
local id = ARGV[2]
local key = prefix .. ':job:' .. id
local status = redis.call('HGET', key, 'status')
if not status then return 'unknown' end
if status ~= 'queued' and status ~= 'running' then return 'finished:' .. status end
if status == 'queued' then redis.call('LREM', prefix .. ':queue', 0, id) end
redis.call('HSET', key, 'status', 'cancelled', 'result_status', ARGV[3], 'result_outcome', ARGV[4], 'result_body', ARGV[5],
  'finished_ms', ARGV[6])
redis.call('HDEL', key, 'worker', 'lease_until_ms')
redis.call('ZREM', prefix .. ':leases', id)
redis.call('EXPIRE', key, tonumber(ARGV[7]))
local idem = redis.call('HGET', key, 'idem')
if idem and idem ~= '' then redis.call('EXPIRE', idem, tonumber(ARGV[7])) end
return status
";

/// The shared store.
pub struct RedisStore {
    conn: ConnectionManager,
    prefix: String,
    shown: String,
    submit: Script,
    claim: Script,
    renew: Script,
    complete: Script,
    cancel: Script,
}

fn err(e: impl std::fmt::Display) -> StoreError {
    StoreError(e.to_string())
}

fn secs(retention_ms: u64) -> u64 {
    retention_ms.div_ceil(1000).max(1)
}

impl RedisStore {
    /// Connect (reconnecting by itself later, when the server goes away).
    ///
    /// # Errors
    /// The URL cannot be used or the server does not answer.
    pub async fn open(url: &str, prefix: &str) -> Result<Self, StoreError> {
        let client = redis::Client::open(url).map_err(|e| StoreError(format!("{}: {e}", shown(url))))?;
        // Bounded: a Redis that is gone or hung is an error within seconds, never a request held forever.
        let settings = redis::aio::ConnectionManagerConfig::new()
            .set_connection_timeout(Some(std::time::Duration::from_secs(3)))
            .set_response_timeout(Some(std::time::Duration::from_secs(5)))
            .set_number_of_retries(3)
            .set_max_delay(std::time::Duration::from_secs(1));
        let mut conn = client
            .get_connection_manager_with_config(settings)
            .await
            .map_err(|e| StoreError(format!("{}: {e}", shown(url))))?;
        let _: String = redis::cmd("PING").query_async(&mut conn).await.map_err(err)?;
        Ok(Self {
            conn,
            prefix: prefix.to_owned(),
            shown: shown(url),
            submit: Script::new(SUBMIT),
            claim: Script::new(CLAIM),
            renew: Script::new(RENEW),
            complete: Script::new(COMPLETE),
            cancel: Script::new(CANCEL),
        })
    }

    /// The server, with any password taken out.
    #[must_use]
    pub fn describe(&self) -> String {
        format!("{} (keys {}:*)", self.shown, self.prefix)
    }

    fn conn(&self) -> ConnectionManager {
        self.conn.clone()
    }

    pub(super) async fn submit(&self, job: NewJob, max_queued: u64) -> Result<Submitted, StoreError> {
        let idem = job
            .idempotency_key
            .as_ref()
            .map_or_else(String::new, |k| format!("{}:idem:{}:{k}", self.prefix, job.owner));
        let mut inv = self.submit.prepare_invoke();
        inv.arg(&self.prefix)
            .arg(&idem)
            .arg(max_queued)
            .arg(&job.id)
            .arg(&job.request_hash)
            .arg(&job.owner)
            .arg(&job.request)
            .arg(&job.contract)
            .arg(&job.version)
            .arg(job.webhook.as_deref().unwrap_or(""))
            .arg(job.created_ms)
            .arg(IDEM_TTL_S);
        let answer: Vec<String> = inv.invoke_async(&mut self.conn()).await.map_err(err)?;
        Ok(match (answer.first().map(String::as_str), answer.get(1)) {
            (Some("new"), _) => Submitted::New,
            (Some("existing"), Some(id)) => Submitted::Existing(id.clone()),
            (Some("reused"), _) => Submitted::KeyReused,
            (Some("full"), _) => Submitted::Full,
            _ => return Err(StoreError(format!("unexpected answer to a submit: {answer:?}"))),
        })
    }

    pub(super) async fn get(&self, id: &str) -> Result<Option<Record>, StoreError> {
        let key = format!("{}:job:{id}", self.prefix);
        let fields: Vec<Option<String>> = redis::cmd("HMGET")
            .arg(&key)
            .arg(&[
                "id",
                "owner",
                "status",
                "contract",
                "version",
                "created_ms",
                "started_ms",
                "finished_ms",
                "attempts",
                "result_status",
                "result_outcome",
                "result_body",
                "webhook",
                "delivery",
            ])
            .query_async(&mut self.conn())
            .await
            .map_err(err)?;
        let f = |i: usize| fields.get(i).cloned().flatten();
        let num = |i: usize| f(i).and_then(|v| v.parse::<u64>().ok());
        let (Some(id), Some(status)) = (f(0), f(2)) else { return Ok(None) };
        let status =
            Status::parse(&status).ok_or_else(|| StoreError(format!("job {id}: unknown status {status:?}")))?;
        let result = match (num(9), f(10), f(11)) {
            (Some(code), Some(outcome), Some(body)) => {
                Some(Outcome { status_code: u16::try_from(code).unwrap_or(500), outcome, body })
            }
            _ => None,
        };
        Ok(Some(Record {
            id,
            owner: f(1).unwrap_or_default(),
            status,
            contract: f(3).unwrap_or_default(),
            version: f(4).unwrap_or_default(),
            created_ms: num(5).unwrap_or(0),
            started_ms: num(6),
            finished_ms: num(7),
            attempts: num(8).and_then(|a| u32::try_from(a).ok()).unwrap_or(0),
            result,
            webhook: f(12).filter(|w| !w.is_empty()),
            delivery: f(13),
        }))
    }

    pub(super) async fn claim(
        &self,
        worker: &str,
        now_ms: u64,
        lease_ms: u64,
        max: usize,
    ) -> Result<Vec<Claimed>, StoreError> {
        let mut inv = self.claim.prepare_invoke();
        inv.arg(&self.prefix).arg(worker).arg(lease_ms).arg(now_ms).arg(max.max(1));
        let a: Vec<String> = inv.invoke_async(&mut self.conn()).await.map_err(err)?;
        if a.len() % 8 != 0 {
            return Err(StoreError(format!("unexpected answer to a claim: {} fields", a.len())));
        }
        Ok(a.chunks_exact(8)
            .map(|f| {
                let s = |i: usize| f.get(i).cloned().unwrap_or_default();
                let n = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
                Claimed {
                    id: s(0),
                    request: s(1),
                    contract: s(2),
                    version: s(3),
                    attempts: u32::try_from(n(4)).unwrap_or(u32::MAX),
                    created_ms: n(5),
                    started_ms: n(6),
                    webhook: Some(s(7)).filter(|w| !w.is_empty()),
                }
            })
            .collect())
    }

    pub(super) async fn renew(&self, id: &str, worker: &str, lease_ms: u64) -> Result<bool, StoreError> {
        let mut inv = self.renew.prepare_invoke();
        inv.arg(&self.prefix).arg(id).arg(worker).arg(lease_ms);
        let held: i64 = inv.invoke_async(&mut self.conn()).await.map_err(err)?;
        Ok(held == 1)
    }

    pub(super) async fn complete(
        &self,
        id: &str,
        worker: &str,
        outcome: Outcome,
        now_ms: u64,
        retention_ms: u64,
    ) -> Result<bool, StoreError> {
        let mut inv = self.complete.prepare_invoke();
        inv.arg(&self.prefix)
            .arg(id)
            .arg(worker)
            .arg(outcome.status_code)
            .arg(&outcome.outcome)
            .arg(&outcome.body)
            .arg(now_ms)
            .arg(secs(retention_ms));
        let recorded: i64 = inv.invoke_async(&mut self.conn()).await.map_err(err)?;
        Ok(recorded == 1)
    }

    pub(super) async fn cancel(
        &self,
        id: &str,
        outcome: Outcome,
        now_ms: u64,
        retention_ms: u64,
    ) -> Result<Cancel, StoreError> {
        let mut inv = self.cancel.prepare_invoke();
        inv.arg(&self.prefix)
            .arg(id)
            .arg(outcome.status_code)
            .arg(&outcome.outcome)
            .arg(&outcome.body)
            .arg(now_ms)
            .arg(secs(retention_ms));
        let was: String = inv.invoke_async(&mut self.conn()).await.map_err(err)?;
        let status = |s: &str| Status::parse(s).ok_or_else(|| StoreError(format!("job {id}: unknown status {s:?}")));
        Ok(match was.strip_prefix("finished:") {
            _ if was == "unknown" => Cancel::Unknown,
            Some(s) => Cancel::Finished(status(s)?),
            None => Cancel::Cancelled(status(&was)?),
        })
    }

    pub(super) async fn record_delivery(&self, id: &str, delivery: String) -> Result<(), StoreError> {
        let key = format!("{}:job:{id}", self.prefix);
        // Only onto a job still kept (HSET would make a new one of a removed key).
        let script = Script::new(
            "if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('HSET', KEYS[1], 'delivery', ARGV[1]) end return 1",
        );
        let _: i64 = script.key(&key).arg(delivery).invoke_async(&mut self.conn()).await.map_err(err)?;
        Ok(())
    }

    pub(super) async fn depth(&self) -> Result<u64, StoreError> {
        redis::cmd("LLEN").arg(format!("{}:queue", self.prefix)).query_async(&mut self.conn()).await.map_err(err)
    }
}

/// A Redis URL without its password.
fn shown(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(s), Some(at)) if at > s => {
            format!("{}://…@{}", url.get(..s).unwrap_or(""), url.get(at + 1..).unwrap_or(""))
        }
        _ => url.to_owned(),
    }
}
