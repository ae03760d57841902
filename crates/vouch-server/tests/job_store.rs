//! The job stores' promises, the same for the embedded SQLite file and for
//! Redis: oldest first, one holder at a time, a lease that runs out lets
//! another take the job, a result recorded only by its holder and only
//! once, cancels, idempotency keys per client, the queue cap, expiry.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use vouch_server::jobs::now_ms;
use vouch_server::jobs::store::{Cancel, NewJob, Outcome, Status, Store, Submitted};
use vouch_server::JobStoreAt;

fn job(id: &str, owner: &str, key: Option<&str>, hash: &str) -> NewJob {
    NewJob {
        id: id.to_owned(),
        owner: owner.to_owned(),
        idempotency_key: key.map(str::to_owned),
        request_hash: hash.to_owned(),
        request: format!("{{\"for\":\"{id}\"}}"),
        contract: "plate".to_owned(),
        version: "v1".to_owned(),
        webhook: None,
        created_ms: now_ms(),
    }
}

fn outcome(body: &str) -> Outcome {
    Outcome { status_code: 200, outcome: "accepted".to_owned(), body: body.to_owned() }
}

const DAY_MS: u64 = 24 * 3600 * 1000;

async fn promises(store: &Store) {
    // Oldest first, as many as asked, then nothing.
    for id in ["job_a", "job_b", "job_c"] {
        assert_eq!(store.submit(job(id, "", None, id), 100).await.unwrap(), Submitted::New);
    }
    assert_eq!(store.depth().await.unwrap(), 3);
    let two = store.claim("w1", now_ms(), 60_000, 2).await.unwrap();
    assert_eq!(two.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(), ["job_a", "job_b"]);
    assert_eq!(two[0].attempts, 1);
    assert_eq!(two[0].request, "{\"for\":\"job_a\"}");
    assert_eq!((two[0].contract.as_str(), two[0].version.as_str()), ("plate", "v1"));
    let three = store.claim("w2", now_ms(), 60_000, 5).await.unwrap();
    assert_eq!(three.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(), ["job_c"]);
    assert!(store.claim("w2", now_ms(), 60_000, 5).await.unwrap().is_empty(), "held jobs are not taken again");
    assert_eq!(store.depth().await.unwrap(), 0);
    assert_eq!(store.get("job_a").await.unwrap().unwrap().status, Status::Running);

    // Only the holder renews or records, and only once.
    assert!(!store.renew("job_a", "w2", now_ms(), 60_000).await.unwrap());
    assert!(store.renew("job_a", "w1", now_ms(), 60_000).await.unwrap());
    assert!(!store.complete("job_a", "w2", outcome("not-w2"), now_ms(), DAY_MS).await.unwrap());
    assert!(store.complete("job_a", "w1", outcome("{\"by\":\"w1\"}"), now_ms(), DAY_MS).await.unwrap());
    assert!(!store.complete("job_a", "w1", outcome("again"), now_ms(), DAY_MS).await.unwrap());
    let a = store.get("job_a").await.unwrap().unwrap();
    assert_eq!(a.status, Status::Done);
    let result = a.result.unwrap();
    assert_eq!((result.status_code, result.body.as_str()), (200, "{\"by\":\"w1\"}"));
    assert!(a.finished_ms.is_some() && a.started_ms.is_some());

    // A lease that runs out lets another worker take the job; the first records nothing.
    assert_eq!(store.submit(job("job_d", "", None, "d"), 100).await.unwrap(), Submitted::New);
    let d = store.claim("w1", now_ms(), 150, 1).await.unwrap();
    assert_eq!(d[0].id, "job_d");
    assert!(store.claim("w2", now_ms(), 150, 1).await.unwrap().is_empty(), "the lease holds");
    tokio::time::sleep(Duration::from_millis(400)).await;
    let taken = store.claim("w2", now_ms(), 60_000, 1).await.unwrap();
    assert_eq!(taken.len(), 1, "taken over after the lease");
    assert_eq!((taken[0].id.as_str(), taken[0].attempts), ("job_d", 2));
    assert_eq!(taken[0].started_ms, d[0].started_ms, "the first start is kept");
    assert!(!store.renew("job_d", "w1", now_ms(), 60_000).await.unwrap());
    assert!(!store.complete("job_d", "w1", outcome("stale"), now_ms(), DAY_MS).await.unwrap());
    assert!(store.complete("job_d", "w2", outcome("{\"by\":\"w2\"}"), now_ms(), DAY_MS).await.unwrap());
    assert_eq!(store.get("job_d").await.unwrap().unwrap().result.unwrap().body, "{\"by\":\"w2\"}");

    // Cancels: a queued job is never handed out; a running one's holder loses it.
    assert_eq!(store.submit(job("job_e", "", None, "e"), 100).await.unwrap(), Submitted::New);
    let refusal = Outcome { status_code: 422, outcome: "refused".to_owned(), body: "{\"cancelled\":1}".to_owned() };
    assert_eq!(
        store.cancel("job_e", refusal.clone(), now_ms(), DAY_MS).await.unwrap(),
        Cancel::Cancelled(Status::Queued)
    );
    assert!(store.claim("w1", now_ms(), 60_000, 5).await.unwrap().is_empty());
    assert_eq!(
        store.cancel("job_c", refusal.clone(), now_ms(), DAY_MS).await.unwrap(),
        Cancel::Cancelled(Status::Running)
    );
    assert!(!store.renew("job_c", "w2", now_ms(), 60_000).await.unwrap());
    assert!(!store.complete("job_c", "w2", outcome("late"), now_ms(), DAY_MS).await.unwrap());
    let c = store.get("job_c").await.unwrap().unwrap();
    assert_eq!((c.status, c.result.unwrap().status_code), (Status::Cancelled, 422));
    assert_eq!(store.cancel("job_a", refusal.clone(), now_ms(), DAY_MS).await.unwrap(), Cancel::Finished(Status::Done));
    assert_eq!(store.cancel("job_zz", refusal, now_ms(), DAY_MS).await.unwrap(), Cancel::Unknown);

    // Idempotency keys are per client and per request.
    assert_eq!(store.submit(job("job_f", "alice", Some("k1"), "h1"), 100).await.unwrap(), Submitted::New);
    assert_eq!(
        store.submit(job("job_g", "alice", Some("k1"), "h1"), 100).await.unwrap(),
        Submitted::Existing("job_f".to_owned())
    );
    assert_eq!(store.submit(job("job_h", "alice", Some("k1"), "h2"), 100).await.unwrap(), Submitted::KeyReused);
    assert_eq!(store.submit(job("job_i", "bob", Some("k1"), "h1"), 100).await.unwrap(), Submitted::New);
    assert!(store.get("job_g").await.unwrap().is_none(), "a replay keeps no second job");

    // The cap counts the jobs waiting.
    assert_eq!(store.depth().await.unwrap(), 2);
    assert_eq!(store.submit(job("job_j", "", None, "j"), 2).await.unwrap(), Submitted::Full);
    assert!(store.get("job_j").await.unwrap().is_none());

    // Deliveries are recorded on the job.
    store.record_delivery("job_a", "{\"attempts\":1}".to_owned()).await.unwrap();
    assert_eq!(store.get("job_a").await.unwrap().unwrap().delivery.as_deref(), Some("{\"attempts\":1}"));
}

/// A finished job is removed past its retention.
async fn expiry(store: &Store) {
    assert_eq!(store.submit(job("job_x", "", None, "x"), 100).await.unwrap(), Submitted::New);
    // The jobs still queued from before come first.
    let taken = store.claim("w", now_ms(), 60_000, 10).await.unwrap();
    assert_eq!(taken.last().map(|c| c.id.as_str()), Some("job_x"));
    assert!(store.complete("job_x", "w", outcome("{}"), now_ms(), 1_000).await.unwrap());
    assert!(store.get("job_x").await.unwrap().is_some());
    let start = Instant::now();
    loop {
        store.sweep(now_ms()).await.unwrap();
        if store.get("job_x").await.unwrap().is_none() {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(5), "not removed");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_embedded_store_keeps_every_promise_and_survives_a_reopen() {
    let dir = std::env::temp_dir().join(format!("vouch-job-store-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let path = dir.join("nested/jobs.sqlite3");
    let store = Store::open(&JobStoreAt::File(path.clone()), "").await.unwrap().unwrap();
    promises(&store).await;
    expiry(&store).await;
    drop(store);
    // Reopened, everything is where it was.
    let store = Store::open(&JobStoreAt::File(path.clone()), "").await.unwrap().unwrap();
    assert_eq!(store.get("job_d").await.unwrap().unwrap().result.unwrap().body, "{\"by\":\"w2\"}");
    assert_eq!(store.depth().await.unwrap(), 0);
    // A file that is not a database is refused with its path.
    std::fs::write(dir.join("not-a-db"), "hello, this is not SQLite at all, not even close").unwrap();
    let e = Store::open(&JobStoreAt::File(dir.join("not-a-db")), "").await.err().unwrap();
    assert!(e.to_string().contains("not-a-db") || e.to_string().contains("not a database"), "{e}");
}

struct RedisServer(Option<Child>, String);

impl Drop for RedisServer {
    fn drop(&mut self) {
        if let Some(c) = &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn redis_server() -> Option<RedisServer> {
    // Set and empty counts as unset (`VOUCH_TEST_REDIS= cargo test`).
    if let Some(url) = std::env::var("VOUCH_TEST_REDIS").ok().filter(|u| !u.is_empty()) {
        return Some(RedisServer(None, url));
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let Ok(child) = Command::new("redis-server")
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
    else {
        let why = "no Redis: set VOUCH_TEST_REDIS or put redis-server on the PATH (.ci/run installs it)";
        assert!(std::env::var("CI").is_err(), "{why}");
        eprintln!("SKIPPED, {why}");
        return None;
    };
    let start = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(start.elapsed() < Duration::from_secs(10), "redis-server did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    Some(RedisServer(Some(child), format!("redis://127.0.0.1:{port}")))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_redis_store_keeps_every_promise() {
    let Some(server) = redis_server() else { return };
    let prefix = format!("vouch-store-test-{}-{}", std::process::id(), now_ms());
    let store = Store::open(&JobStoreAt::Redis(server.1.clone()), &prefix).await.unwrap().unwrap();
    promises(&store).await;
    expiry(&store).await;
    // A server that is not there is an error, not a hang or a panic.
    let e = Store::open(&JobStoreAt::Redis("redis://127.0.0.1:1".to_owned()), "p").await.err().unwrap();
    assert!(e.to_string().contains("127.0.0.1:1"), "{e}");
}
