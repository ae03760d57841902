//! `vouch serve`'s jobs as an operator runs them: processes killed with
//! SIGKILL and started again, replicas sharing a Redis server, a fake
//! upstream that sees every call and every abort, and a webhook receiver
//! that checks the signature with Python's own HMAC.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod common;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{root, serve_config, Served};
use serde_json::{json, Value};

const CLEAN_PLATE: &str = r#"{"productPresent":false,"productTextPresent":false,"garbledText":false}"#;
const GARBLED_PLATE: &str = r#"{"productPresent":true,"productTextPresent":true,"garbledText":true}"#;

// ---------------------------------------------------------------- the upstream

/// One upstream call the fake saw.
#[derive(Debug, Clone)]
struct Call {
    /// The first user message's content: the test's tag for the job.
    tag: String,
    /// The client closed the connection before the answer was sent.
    aborted: bool,
}

/// What the fake answers a call: after this long, this content.
type Script = dyn Fn(&str, usize) -> (Duration, String) + Send + Sync;

/// A chat completions upstream on loopback: each call's answer (delay and
/// content) chosen by the test from its tag and how many calls that tag
/// had; an abort (the client gone while the answer waits) recorded.
struct Upstream {
    base_url: String,
    calls: Arc<Mutex<Vec<Call>>>,
}

impl Upstream {
    fn start(script: Arc<Script>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base_url = format!("http://{}/v1", listener.local_addr().unwrap());
        let calls = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&calls);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let (script, seen) = (Arc::clone(&script), Arc::clone(&seen));
                std::thread::spawn(move || serve_upstream(stream, &*script, &seen));
            }
        });
        Self { base_url, calls }
    }

    fn calls(&self) -> Vec<Call> {
        self.calls.lock().unwrap().clone()
    }

    fn calls_for(&self, tag: &str) -> Vec<Call> {
        self.calls().into_iter().filter(|c| c.tag == tag).collect()
    }

    /// Wait until `tag` had `n` calls.
    fn wait_calls(&self, tag: &str, n: usize, within: Duration) {
        let start = Instant::now();
        while self.calls_for(tag).len() < n {
            assert!(start.elapsed() < within, "upstream calls for {tag}: {:?}", self.calls_for(tag));
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// Read one HTTP/1.1 request: its headers (lower-case) and body.
fn read_request(reader: &mut BufReader<TcpStream>) -> Option<(BTreeMap<String, String>, Vec<u8>)> {
    let mut line = String::new();
    if reader.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let mut headers = BTreeMap::new();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).ok()? == 0 {
            return None;
        }
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((n, v)) = h.split_once(':') {
            headers.insert(n.trim().to_ascii_lowercase(), v.trim().to_owned());
        }
    }
    let len: usize = headers.get("content-length").and_then(|l| l.parse().ok()).unwrap_or(0);
    let mut body = vec![0; len];
    reader.read_exact(&mut body).ok()?;
    Some((headers, body))
}

fn serve_upstream(stream: TcpStream, script: &Script, seen: &Mutex<Vec<Call>>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut out = stream;
    while let Some((_, body)) = read_request(&mut reader) {
        let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let tag = body["messages"]
            .as_array()
            .and_then(|m| m.iter().find(|m| m["role"] == "user"))
            .and_then(|m| m["content"].as_str())
            .unwrap_or("")
            .to_owned();
        let index = {
            let mut calls = seen.lock().unwrap();
            let nth = calls.iter().filter(|c| c.tag == tag).count();
            calls.push(Call { tag: tag.clone(), aborted: false });
            (calls.len() - 1, nth)
        };
        let (delay, content) = script(&tag, index.1);
        // Wait, watching for the client to go away.
        out.set_nonblocking(true).unwrap();
        let until = Instant::now() + delay;
        let mut gone = false;
        while Instant::now() < until {
            let mut b = [0u8; 1];
            match out.peek(&mut b) {
                Ok(0) => {
                    gone = true;
                    break;
                }
                Err(e) if e.kind() != std::io::ErrorKind::WouldBlock => {
                    gone = true;
                    break;
                }
                _ => std::thread::sleep(Duration::from_millis(5)),
            }
        }
        out.set_nonblocking(false).unwrap();
        if gone {
            seen.lock().unwrap()[index.0].aborted = true;
            return;
        }
        let answer = json!({
            "id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        })
        .to_string();
        let head =
            format!("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n", answer.len());
        if out.write_all(head.as_bytes()).and_then(|()| out.write_all(answer.as_bytes())).is_err() {
            return;
        }
    }
}

// ---------------------------------------------------------------- the gateway

/// One HTTP/1.1 request: status, headers (lower-case), body.
fn http(
    addr: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&Value>,
) -> (u16, BTreeMap<String, String>, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let body = body.map(Value::to_string).unwrap_or_default();
    let mut head =
        format!("{method} {path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\ncontent-length: {}\r\n", body.len());
    if !body.is_empty() {
        head.push_str("content-type: application/json\r\n");
    }
    for (n, v) in headers {
        head.push_str(&format!("{n}: {v}\r\n"));
    }
    write!(s, "{head}\r\n{body}").unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let (head, body) = out.split_once("\r\n\r\n").unwrap_or((&out, ""));
    let status = head.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    let headers = head
        .lines()
        .skip(1)
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    (status, headers, body.to_owned())
}

fn json_of(body: &str) -> Value {
    serde_json::from_str(body).unwrap_or_else(|e| panic!("not JSON ({e}): {body}"))
}

/// A scratch folder unique to this test.
fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("vouch-jobs-test-{}", std::process::id())).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("contracts")).unwrap();
    std::fs::copy(root().join("examples/contracts/plate.json"), dir.join("contracts/plate.json")).unwrap();
    dir
}

fn config(upstream: &Upstream, dir: &std::path::Path, store: &str, jobs: &str) -> String {
    format!(
        "listen = \"127.0.0.1:0\"\nupstream = \"{}\"\ncontracts = \"{}\"\n\n[defaults]\nrounds = 2\n\n[jobs]\nstore = \"{store}\"\npoll_ms = 50\n{jobs}\n",
        upstream.base_url,
        dir.join("contracts").display()
    )
}

/// A chat completion request for the plate contract, tagged.
fn plate_job(tag: &str) -> Value {
    json!({"model": "m", "messages": [{"role": "user", "content": tag}],
           "response_format": {"type": "json_schema", "json_schema": {"name": "plate", "schema": {}}}})
}

/// Post a job: its id.
fn post_job(addr: &str, body: &Value, headers: &[(&str, &str)]) -> String {
    let (status, h, text) = http(addr, "POST", "/v1/jobs", headers, Some(body));
    assert_eq!(status, 202, "{text}");
    let v = json_of(&text);
    let id = v["id"].as_str().unwrap().to_owned();
    assert_eq!(h["location"], format!("/v1/jobs/{id}"));
    assert_eq!(v["status"], "queued", "{text}");
    id
}

/// Poll until the job is finished: its record.
fn wait_finished(addr: &str, id: &str, within: Duration) -> Value {
    wait_finished_as(addr, id, &[], within)
}

/// [`wait_finished`] with these headers (a client's token).
fn wait_finished_as(addr: &str, id: &str, headers: &[(&str, &str)], within: Duration) -> Value {
    let start = Instant::now();
    loop {
        let (status, _, text) = http(addr, "GET", &format!("/v1/jobs/{id}"), headers, None);
        assert_eq!(status, 200, "{text}");
        let v = json_of(&text);
        if v["status"] == "done" || v["status"] == "cancelled" {
            return v;
        }
        assert!(start.elapsed() < within, "job {id} not finished: {text}");
        std::thread::sleep(Duration::from_millis(25));
    }
}

fn metric(addr: &str, series: &str) -> f64 {
    let (_, _, text) = http(addr, "GET", "/metrics", &[], None);
    text.lines()
        .find_map(|l| l.strip_prefix(series).and_then(|rest| rest.strip_prefix(' ')).map(|v| v.parse().unwrap()))
        .unwrap_or(0.0)
}

fn content_of(record: &Value) -> String {
    record["response"]["body"]["choices"][0]["message"]["content"].as_str().unwrap_or("").to_owned()
}

// ---------------------------------------------------------------- embedded

#[test]
fn a_job_killed_mid_run_is_run_again_after_a_restart_and_recorded_once() {
    // The first call takes 5 s (the process is killed meanwhile); the second answers at once.
    let upstream = Upstream::start(Arc::new(|_tag, nth| {
        (if nth == 0 { Duration::from_secs(5) } else { Duration::ZERO }, CLEAN_PLATE.to_owned())
    }));
    let dir = scratch("sigkill");
    let store = dir.join("jobs.sqlite3");
    let cfg = config(&upstream, &dir, store.to_str().unwrap(), "lease_ms = 700");
    let mut first = serve_config(&dir, "a", &cfg, &[]);
    let id = post_job(&first.addr, &plate_job("killed"), &[]);
    upstream.wait_calls("killed", 1, Duration::from_secs(10));
    let (_, _, running) = http(&first.addr, "GET", &format!("/v1/jobs/{id}"), &[], None);
    assert_eq!(json_of(&running)["status"], "running", "{running}");
    first.sigkill();

    let second = serve_config(&dir, "a", &cfg, &[]);
    let record = wait_finished(&second.addr, &id, Duration::from_secs(15));
    assert_eq!(record["status"], "done", "{record}");
    assert_eq!(record["attempts"], 2, "{record}");
    assert_eq!(record["response"]["status_code"], 200, "{record}");
    assert_eq!(record["response"]["outcome"], "accepted", "{record}");
    assert_eq!(content_of(&record), CLEAN_PLATE);
    assert_eq!(record["response"]["body"]["vouch"]["outcome"], "accepted", "{record}");
    assert_eq!(record["contract"]["name"], "plate");
    // The first run was cut off by the kill, the second answered: two calls, one recorded result.
    let calls = upstream.calls_for("killed");
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert!(calls[0].aborted, "the killed process's call was cut off: {calls:?}");
    assert_eq!(metric(&second.addr, "vouch_jobs_finished_total{outcome=\"accepted\"}"), 1.0);
    assert_eq!(metric(&second.addr, "vouch_job_seconds_count"), 1.0);
    assert_eq!(metric(&second.addr, "vouch_job_run_seconds_count"), 1.0);
    assert_eq!(metric(&second.addr, "vouch_job_wait_seconds_count"), 0.0, "its first start was the killed process's");
    // The result endpoint gives exactly the synchronous endpoint's answer.
    let (status, headers, body) = http(&second.addr, "GET", &format!("/v1/jobs/{id}/result"), &[], None);
    assert_eq!(status, 200);
    assert_eq!(headers["x-vouch-outcome"], "accepted");
    assert_eq!(json_of(&body), record["response"]["body"]);
    // Recorded once: it stays as it is.
    std::thread::sleep(Duration::from_millis(900));
    let (_, _, again) = http(&second.addr, "GET", &format!("/v1/jobs/{id}"), &[], None);
    assert_eq!(json_of(&again)["finished_ms"], record["finished_ms"]);
    assert_eq!(upstream.calls_for("killed").len(), 2);
    // One line says how it went (written by now: 900 ms after the result was recorded).
    let log = second.lines().join("\n");
    assert!(log.contains("job finished") && log.contains(&id) && log.contains("attempts=2"), "{log}");
}

#[test]
fn a_job_that_kills_every_run_stops_as_a_refusal_not_a_pass() {
    let upstream = Upstream::start(Arc::new(|_tag, _| (Duration::from_secs(30), CLEAN_PLATE.to_owned())));
    let dir = scratch("attempts");
    let store = dir.join("jobs.sqlite3");
    let cfg = config(&upstream, &dir, store.to_str().unwrap(), "lease_ms = 400\nmax_attempts = 1");
    let mut first = serve_config(&dir, "a", &cfg, &[]);
    let id = post_job(&first.addr, &plate_job("poison"), &[]);
    upstream.wait_calls("poison", 1, Duration::from_secs(10));
    first.sigkill();
    let second = serve_config(&dir, "a", &cfg, &[]);
    let record = wait_finished(&second.addr, &id, Duration::from_secs(10));
    assert_eq!(record["status"], "done");
    assert_eq!(record["response"]["status_code"], 422, "{record}");
    assert_eq!(record["response"]["outcome"], "refused");
    assert_eq!(record["response"]["body"]["error"]["type"], "vouch_refused");
    assert_eq!(record["response"]["body"]["error"]["code"], "job_attempts_exhausted", "{record}");
    assert_eq!(upstream.calls_for("poison").len(), 1, "not run again");
}

#[test]
fn idempotent_retries_return_the_same_job_and_another_client_cannot_see_it() {
    let upstream = Upstream::start(Arc::new(|_tag, _| (Duration::from_millis(50), CLEAN_PLATE.to_owned())));
    let dir = scratch("idempotent");
    let store = dir.join("jobs.sqlite3");
    std::fs::write(dir.join("tokens"), "token-one\ntoken-two\n").unwrap();
    let cfg = format!(
        "tokens_file = \"{}\"\n{}",
        dir.join("tokens").display(),
        config(&upstream, &dir, store.to_str().unwrap(), "")
    );
    let served = serve_config(&dir, "a", &cfg, &[]);
    let one = [("authorization", "Bearer token-one"), ("idempotency-key", "plate-7")];
    let id = post_job(&served.addr, &plate_job("idem"), &one);
    let (status, h, text) = http(&served.addr, "POST", "/v1/jobs", &one, Some(&plate_job("idem")));
    assert_eq!(status, 202, "{text}");
    assert_eq!(json_of(&text)["id"], id.as_str());
    assert_eq!(h["idempotent-replayed"], "true");
    // The same key for another request is refused, not mixed up.
    let (status, _, text) = http(&served.addr, "POST", "/v1/jobs", &one, Some(&plate_job("other")));
    assert_eq!(status, 422, "{text}");
    assert_eq!(json_of(&text)["error"]["code"], "idempotency_key_reused");
    // Another client's same key is its own job; it does not see the first one.
    let two = [("authorization", "Bearer token-two"), ("idempotency-key", "plate-7")];
    let other = post_job(&served.addr, &plate_job("idem"), &two);
    assert_ne!(other, id);
    let (status, _, text) = http(&served.addr, "GET", &format!("/v1/jobs/{id}"), &two[..1], None);
    assert_eq!(status, 404, "{text}");
    assert_eq!(json_of(&text)["error"]["code"], "unknown_job");
    let (status, _, _) = http(&served.addr, "GET", &format!("/v1/jobs/{id}"), &[], None);
    assert_eq!(status, 401);
    // Both run, once each.
    let record = wait_finished_as(&served.addr, &id, &one[..1], Duration::from_secs(10));
    assert_eq!(record["response"]["outcome"], "accepted", "{record}");
    let record = wait_finished_as(&served.addr, &other, &two[..1], Duration::from_secs(10));
    assert_eq!(record["response"]["outcome"], "accepted", "{record}");
    let start = Instant::now();
    while upstream.calls_for("idem").len() < 2 {
        assert!(start.elapsed() < Duration::from_secs(10));
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(upstream.calls_for("idem").len(), 2, "one call per job, none for the replay");
}

#[test]
fn cancel_aborts_the_upstream_call_and_records_a_refusal() {
    let upstream = Upstream::start(Arc::new(|_tag, _| (Duration::from_secs(20), CLEAN_PLATE.to_owned())));
    let dir = scratch("cancel");
    let store = dir.join("jobs.sqlite3");
    let served = serve_config(&dir, "a", &config(&upstream, &dir, store.to_str().unwrap(), ""), &[]);
    let id = post_job(&served.addr, &plate_job("cancel-me"), &[]);
    upstream.wait_calls("cancel-me", 1, Duration::from_secs(10));
    let cancelled_at = Instant::now();
    let (status, _, text) = http(&served.addr, "DELETE", &format!("/v1/jobs/{id}"), &[], None);
    assert_eq!(status, 200, "{text}");
    let record = json_of(&text);
    assert_eq!(record["status"], "cancelled");
    assert_eq!(record["response"]["status_code"], 422);
    assert_eq!(record["response"]["body"]["error"]["code"], "job_cancelled");
    // The upstream sees the connection closed at once.
    loop {
        if upstream.calls_for("cancel-me")[0].aborted {
            break;
        }
        assert!(cancelled_at.elapsed() < Duration::from_secs(2), "the upstream call was not aborted");
        std::thread::sleep(Duration::from_millis(10));
    }
    // A second cancel finds it finished.
    let (status, _, text) = http(&served.addr, "DELETE", &format!("/v1/jobs/{id}"), &[], None);
    assert_eq!(status, 409, "{text}");
    assert_eq!(json_of(&text)["error"]["code"], "job_finished");
    // A queued job cancelled never reaches the upstream.
    let (status, _, _) = http(&served.addr, "DELETE", "/v1/jobs/job_0123456789abcdef0123456789abcdef", &[], None);
    assert_eq!(status, 404);
    assert_eq!(upstream.calls_for("cancel-me").len(), 1);
}

#[test]
fn results_expire_after_their_retention() {
    let upstream = Upstream::start(Arc::new(|_tag, _| (Duration::ZERO, CLEAN_PLATE.to_owned())));
    let dir = scratch("expire");
    let store = dir.join("jobs.sqlite3");
    let served = serve_config(&dir, "a", &config(&upstream, &dir, store.to_str().unwrap(), "retention_s = 1"), &[]);
    let id = post_job(&served.addr, &plate_job("expire"), &[]);
    let record = wait_finished(&served.addr, &id, Duration::from_secs(10));
    assert_eq!(record["status"], "done");
    let start = Instant::now();
    loop {
        let (status, _, text) = http(&served.addr, "GET", &format!("/v1/jobs/{id}"), &[], None);
        if status == 404 {
            assert_eq!(json_of(&text)["error"]["code"], "unknown_job");
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(6), "still kept: {text}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_job_whose_contract_changed_or_went_is_refused_and_never_run() {
    // One worker, held by a slow first job while the contracts change under the queued ones.
    let upstream = Upstream::start(Arc::new(|tag, _| {
        (if tag == "slow" { Duration::from_millis(1500) } else { Duration::ZERO }, CLEAN_PLATE.to_owned())
    }));
    let dir = scratch("contract-changed");
    std::fs::copy(dir.join("contracts/plate.json"), dir.join("contracts/plate2.json")).unwrap();
    let store = dir.join("jobs.sqlite3");
    let served = serve_config(&dir, "a", &config(&upstream, &dir, store.to_str().unwrap(), "workers = 1"), &[]);
    let slow = post_job(&served.addr, &plate_job("slow"), &[]);
    upstream.wait_calls("slow", 1, Duration::from_secs(10));
    let changed = post_job(&served.addr, &plate_job("changed"), &[]);
    let mut gone_body = plate_job("gone");
    gone_body["response_format"]["json_schema"]["name"] = json!("plate2");
    let gone = post_job(&served.addr, &gone_body, &[]);
    // The contract is edited (a property made optional) and the other removed; SIGHUP reloads.
    let mut plate: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("contracts/plate.json")).unwrap()).unwrap();
    plate["required"] = json!(["productPresent"]);
    std::fs::write(dir.join("contracts/plate.json"), plate.to_string()).unwrap();
    std::fs::remove_file(dir.join("contracts/plate2.json")).unwrap();
    served.signal("-HUP");
    let start = Instant::now();
    while http(&served.addr, "GET", "/v1/contracts", &[], None).2.contains("\"plate2\"") {
        assert!(start.elapsed() < Duration::from_secs(5), "not reloaded");
        std::thread::sleep(Duration::from_millis(20));
    }
    let first = wait_finished(&served.addr, &slow, Duration::from_secs(10));
    assert_eq!(first["response"]["outcome"], "accepted", "{first}");
    let changed = wait_finished(&served.addr, &changed, Duration::from_secs(10));
    assert_eq!(changed["status"], "done");
    assert_eq!(changed["response"]["status_code"], 422, "{changed}");
    assert_eq!(changed["response"]["body"]["error"]["code"], "contract_changed", "{changed}");
    let gone = wait_finished(&served.addr, &gone, Duration::from_secs(10));
    assert_eq!(gone["response"]["body"]["error"]["code"], "contract_gone", "{gone}");
    assert!(upstream.calls_for("changed").is_empty() && upstream.calls_for("gone").is_empty(), "neither ran");
    assert_eq!(metric(&served.addr, "vouch_jobs_finished_total{outcome=\"refused\"}"), 2.0);
}

#[test]
fn past_the_queue_cap_posts_get_429_with_retry_after_and_bad_posts_are_refused_at_once() {
    let upstream = Upstream::start(Arc::new(|_tag, _| (Duration::from_secs(3), CLEAN_PLATE.to_owned())));
    let dir = scratch("full");
    let store = dir.join("jobs.sqlite3");
    let served =
        serve_config(&dir, "a", &config(&upstream, &dir, store.to_str().unwrap(), "workers = 1\nmax_queued = 1"), &[]);
    post_job(&served.addr, &plate_job("held"), &[]);
    upstream.wait_calls("held", 1, Duration::from_secs(10));
    post_job(&served.addr, &plate_job("waiting"), &[]);
    let (status, headers, text) = http(&served.addr, "POST", "/v1/jobs", &[], Some(&plate_job("refused")));
    assert_eq!(status, 429, "{text}");
    assert_eq!(headers["retry-after"], "5");
    assert_eq!(json_of(&text)["error"]["code"], "job_queue_full");
    assert_eq!(metric(&served.addr, "vouch_jobs_queued"), 1.0);
    assert_eq!(metric(&served.addr, "vouch_jobs_running"), 1.0);
    assert_eq!(metric(&served.addr, "vouch_jobs_rejected_total{reason=\"queue_full\"}"), 1.0);
    // What a synchronous request would be refused for is refused at POST, not queued.
    let mut streamed = plate_job("s");
    streamed["stream"] = json!(true);
    let unknown = json!({"model": "m", "messages": [], "response_format": {"type": "json_schema", "json_schema": {"name": "nope"}}});
    let bare = json!({"model": "m", "messages": []});
    let hooked = {
        let mut b = plate_job("h");
        b["vouch"] = json!({"webhook": "https://example.com/hook"});
        b
    };
    for (body, status, code) in [
        (streamed, 400, "stream_unsupported"),
        (unknown, 404, "unknown_contract"),
        (bare, 400, "contract_required"),
        (hooked, 400, "webhooks_off"),
        (json!({"messages": "no"}), 400, "invalid_body"),
    ] {
        let (got, _, text) = http(&served.addr, "POST", "/v1/jobs", &[], Some(&body));
        assert_eq!(got, status, "{text}");
        assert_eq!(json_of(&text)["error"]["code"], code, "{text}");
    }
    let (status, _, text) = http(&served.addr, "GET", "/v1/jobs/../etc/passwd", &[], None);
    assert_eq!(status, 404, "{text}");
    let (status, _, text) = http(&served.addr, "GET", "/v1/jobs/job_zz", &[], None);
    assert_eq!(status, 404, "{text}");
}

// ---------------------------------------------------------------- webhooks

/// Every delivery a receiver took: headers and body.
type Deliveries = Arc<Mutex<Vec<(BTreeMap<String, String>, Vec<u8>)>>>;

/// A webhook receiver: 500 to the first delivery when `fail_first`, 200 to
/// every other.
fn receiver(fail_first: bool) -> (String, Deliveries) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let got = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&got);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let seen = Arc::clone(&seen);
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut out = stream;
                while let Some((headers, body)) = read_request(&mut reader) {
                    let n = {
                        let mut g = seen.lock().unwrap();
                        g.push((headers, body));
                        g.len()
                    };
                    let status = if n == 1 && fail_first { "500 Internal Server Error" } else { "200 OK" };
                    let _ = out.write_all(format!("HTTP/1.1 {status}\r\ncontent-length: 0\r\n\r\n").as_bytes());
                }
            });
        }
    });
    (url, got)
}

#[test]
fn a_webhook_is_signed_retried_once_refused_and_its_delivery_recorded() {
    let upstream = Upstream::start(Arc::new(|_tag, _| (Duration::ZERO, CLEAN_PLATE.to_owned())));
    let (url, got) = receiver(true);
    let dir = scratch("webhook");
    let store = dir.join("jobs.sqlite3");
    let prefix = url.trim_end_matches("hook");
    let jobs = format!(
        "webhook_secret_env = \"VOUCH_TEST_WEBHOOK_SECRET\"\nwebhook_allow = [\"{prefix}\"]\nwebhook_backoff_ms = 100"
    );
    let secret = "whsec-test-5e2a";
    let served = serve_config(
        &dir,
        "a",
        &config(&upstream, &dir, store.to_str().unwrap(), &jobs),
        &[("VOUCH_TEST_WEBHOOK_SECRET", secret)],
    );
    let mut body = plate_job("hooked");
    body["vouch"] = json!({"webhook": url});
    let id = post_job(&served.addr, &body, &[]);
    let mut other = plate_job("hooked");
    other["vouch"] = json!({"webhook": "http://169.254.169.254/latest/meta-data"});
    let (status, _, text) = http(&served.addr, "POST", "/v1/jobs", &[], Some(&other));
    assert_eq!(status, 400, "{text}");
    assert_eq!(json_of(&text)["error"]["code"], "webhook_not_allowed");

    let start = Instant::now();
    loop {
        let (_, _, text) = http(&served.addr, "GET", &format!("/v1/jobs/{id}"), &[], None);
        let v = json_of(&text);
        if v["webhook"]["delivery"]["delivered"] == true {
            assert_eq!(v["webhook"]["delivery"]["attempts"], 2, "{v}");
            assert_eq!(v["webhook"]["delivery"]["last_status"], 200, "{v}");
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(10), "not delivered: {v}");
        std::thread::sleep(Duration::from_millis(25));
    }
    std::thread::sleep(Duration::from_millis(400));
    let got = got.lock().unwrap().clone();
    assert_eq!(got.len(), 2, "one refused delivery, one taken, no more");
    for (i, (headers, body)) in got.iter().enumerate() {
        let record: Value = serde_json::from_slice(body).unwrap();
        assert_eq!(record["id"], id.as_str());
        assert_eq!(record["status"], "done");
        assert_eq!(content_of(&record), CLEAN_PLATE);
        assert_eq!(headers["x-vouch-job-id"], id);
        assert_eq!(headers["x-vouch-delivery-attempt"], (i + 1).to_string());
        // The signature, checked by Python's own hmac module.
        let signed = [headers["x-vouch-timestamp"].as_bytes(), b".", body].concat();
        let mut py = Command::new("python3")
            .args(["-c", "import hmac,hashlib,sys;print('sha256='+hmac.new(sys.argv[1].encode(),sys.stdin.buffer.read(),hashlib.sha256).hexdigest())", secret])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        py.stdin.take().unwrap().write_all(&signed).unwrap();
        let out = py.wait_with_output().unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), headers["x-vouch-signature"]);
    }
    assert!(!served.lines().join("\n").contains(secret), "the secret is in no log line");
}

// ---------------------------------------------------------------- Redis

/// A Redis server for the test: `VOUCH_TEST_REDIS` if set (`.ci/run` starts
/// one), else one started here from `redis-server` on the PATH; `None`
/// (said loudly, and a failure under `CI=true`) when there is neither.
struct Redis {
    url: String,
    child: Option<Child>,
}

impl Drop for Redis {
    fn drop(&mut self) {
        if let Some(c) = &mut self.child {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn redis() -> Option<Redis> {
    // Set and empty counts as unset (`VOUCH_TEST_REDIS= cargo test`).
    if let Some(url) = std::env::var("VOUCH_TEST_REDIS").ok().filter(|u| !u.is_empty()) {
        return Some(Redis { url, child: None });
    }
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let child = Command::new("redis-server")
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    let Ok(child) = child else {
        let why = "no Redis: set VOUCH_TEST_REDIS or put redis-server on the PATH (.ci/run installs it)";
        assert!(std::env::var("CI").is_err(), "{why}");
        eprintln!("SKIPPED, {why}");
        return None;
    };
    let start = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(start.elapsed() < Duration::from_secs(10), "redis-server did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    Some(Redis { url: format!("redis://127.0.0.1:{port}"), child: Some(child) })
}

fn redis_config(upstream: &Upstream, dir: &std::path::Path, redis: &Redis, prefix: &str, jobs: &str) -> String {
    config(upstream, dir, &redis.url, &format!("key_prefix = \"{prefix}\"\n{jobs}"))
}

#[test]
fn three_replicas_share_redis_and_a_killed_one_s_jobs_finish_elsewhere() {
    let Some(redis) = redis() else { return };
    let upstream = Upstream::start(Arc::new(|_tag, _| (Duration::from_millis(600), CLEAN_PLATE.to_owned())));
    let dir = scratch("redis-replicas");
    let prefix = format!("vouch-test-{}-replicas", std::process::id());
    // Each recorded result is delivered to the webhook by the replica that recorded it.
    let (url, delivered) = receiver(false);
    let hooks = format!(
        "lease_ms = 800\nworkers = 3\nwebhook_secret_env = \"VOUCH_TEST_WEBHOOK_SECRET\"\nwebhook_allow = [\"{url}\"]"
    );
    let cfg = redis_config(&upstream, &dir, &redis, &prefix, &hooks);
    let env = [("VOUCH_TEST_WEBHOOK_SECRET", "whsec-replicas")];
    let mut replicas: Vec<Served> = (0..3).map(|i| serve_config(&dir, &format!("r{i}"), &cfg, &env)).collect();
    let addrs: Vec<String> = replicas.iter().map(|r| r.addr.clone()).collect();
    let jobs: Vec<(String, String)> = (0..30)
        .map(|i| {
            let tag = format!("job-{i}");
            let mut body = plate_job(&tag);
            body["vouch"] = json!({"webhook": url});
            (post_job(&addrs[i % 3], &body, &[]), tag)
        })
        .collect();
    // Polled from another replica than the one posted to.
    let (status, _, text) = http(&addrs[1], "GET", &format!("/v1/jobs/{}", jobs[0].0), &[], None);
    assert_eq!(status, 200, "{text}");
    // Replica 0 is killed with its jobs in flight.
    std::thread::sleep(Duration::from_millis(250));
    replicas[0].sigkill();
    let mut taken_over = 0;
    for (i, (id, tag)) in jobs.iter().enumerate() {
        // From a survivor that is not the replica it was posted to.
        let poll = if i % 3 == 1 { 2 } else { 1 };
        let record = wait_finished(&addrs[poll], id, Duration::from_secs(30));
        assert_eq!(record["status"], "done", "{record}");
        assert_eq!(record["response"]["outcome"], "accepted", "{record}");
        assert_eq!(content_of(&record), CLEAN_PLATE);
        let calls = upstream.calls_for(tag);
        let attempts = record["attempts"].as_u64().unwrap();
        assert_eq!(calls.len() as u64, attempts, "{tag}: {calls:?} vs {record}");
        if attempts > 1 {
            taken_over += 1;
            assert!(calls[..calls.len() - 1].iter().all(|c| c.aborted), "{tag}: {calls:?}");
        }
    }
    assert!(taken_over >= 1, "the killed replica held none of the jobs");
    let finished: f64 = addrs[1..].iter().map(|a| metric(a, "vouch_jobs_finished_total{outcome=\"accepted\"}")).sum();
    // The killed replica recorded the rest before it died.
    assert!(finished <= 30.0, "{finished}");
    // No job recorded twice: at most one delivery each (a replica killed
    // between recording and delivering leaves none), and every job taken
    // over was delivered by its survivor.
    std::thread::sleep(Duration::from_millis(500));
    let mut per_job: BTreeMap<String, usize> = BTreeMap::new();
    for (headers, _) in delivered.lock().unwrap().iter() {
        *per_job.entry(headers["x-vouch-job-id"].clone()).or_default() += 1;
    }
    assert!(per_job.values().all(|n| *n == 1), "{per_job:?}");
    assert!(per_job.len() >= finished as usize, "{} deliveries, {finished} recorded by the survivors", per_job.len());
    eprintln!(
        "redis replicas: 30 jobs, 0 lost, {taken_over} taken over after the kill, {finished} recorded by the survivors, \
         {} webhooks, none twice",
        per_job.len()
    );
}

#[test]
fn a_replica_paused_past_its_lease_records_nothing_when_it_wakes() {
    let Some(redis) = redis() else { return };
    // The first call answers GARBLED after 1 s (the replica is paused meanwhile), the second CLEAN.
    let upstream = Upstream::start(Arc::new(|_tag, nth| {
        if nth == 0 {
            (Duration::from_millis(1000), GARBLED_PLATE.to_owned())
        } else {
            (Duration::ZERO, CLEAN_PLATE.to_owned())
        }
    }));
    let dir = scratch("redis-paused");
    let prefix = format!("vouch-test-{}-paused", std::process::id());
    let a = serve_config(&dir, "a", &redis_config(&upstream, &dir, &redis, &prefix, "lease_ms = 500"), &[]);
    let id = post_job(&a.addr, &plate_job("paused"), &[]);
    upstream.wait_calls("paused", 1, Duration::from_secs(10));
    a.signal("-STOP");
    let b = serve_config(&dir, "b", &redis_config(&upstream, &dir, &redis, &prefix, "lease_ms = 500"), &[]);
    let record = wait_finished(&b.addr, &id, Duration::from_secs(15));
    assert_eq!(content_of(&record), CLEAN_PLATE, "{record}");
    a.signal("-CONT");
    // The paused replica's run ends (its answer came) and is not recorded.
    let start = Instant::now();
    while metric(&a.addr, "vouch_jobs_results_discarded_total") < 1.0 {
        assert!(start.elapsed() < Duration::from_secs(10), "the paused replica's run did not end");
        std::thread::sleep(Duration::from_millis(50));
    }
    let (_, _, text) = http(&a.addr, "GET", &format!("/v1/jobs/{id}"), &[], None);
    let after = json_of(&text);
    assert_eq!(content_of(&after), CLEAN_PLATE, "the result recorded first stays: {after}");
    assert_eq!(after["finished_ms"], record["finished_ms"]);
    assert_eq!(metric(&a.addr, "vouch_jobs_finished_total{outcome=\"accepted\"}"), 0.0);
}

// ---------------------------------------------------------------- a JSONL file through jobs

#[test]
fn examples_jobs_push_writes_results_in_input_order_and_a_rerun_posts_nothing_twice() {
    let upstream = Upstream::start(Arc::new(|tag, _| {
        let said_no = r#"{"productPresent":"no","productTextPresent":false,"garbledText":false}"#;
        // Later lines answer sooner: the order of the output is the input's, not the finish's.
        let delay = Duration::from_millis(if tag == "first" { 400 } else { 0 });
        (delay, if tag == "says no" { said_no.to_owned() } else { CLEAN_PLATE.to_owned() })
    }));
    let dir = scratch("push");
    let store = dir.join("jobs.sqlite3");
    let served = serve_config(&dir, "a", &config(&upstream, &dir, store.to_str().unwrap(), ""), &[]);
    let mut unknown = plate_job("unknown");
    unknown["response_format"]["json_schema"]["name"] = json!("nope");
    let lines = [
        plate_job("first").to_string(),
        plate_job("says no").to_string(),
        "not json".to_owned(),
        unknown.to_string(),
        plate_job("last").to_string(),
    ];
    let input = dir.join("requests.jsonl");
    std::fs::write(&input, lines.join("\n") + "\n").unwrap();
    let push = || {
        let out = Command::new("python3")
            .arg(root().join("examples/jobs/push.py"))
            .arg(&input)
            .args(["--url", &format!("http://{}", served.addr), "--poll", "0.05"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap().lines().map(json_of).collect::<Vec<_>>()
    };
    let results = push();
    assert_eq!(results.iter().map(|r| r["line"].as_u64().unwrap()).collect::<Vec<_>>(), [1, 2, 3, 4, 5]);
    assert_eq!(results[0]["outcome"], "accepted");
    assert_eq!(results[0]["body"]["choices"][0]["message"]["content"], CLEAN_PLATE);
    assert_eq!(results[1]["status_code"], 422);
    assert_eq!(results[1]["body"]["error"]["type"], "vouch_refused");
    assert!(results[2]["error"].as_str().unwrap().starts_with("not JSON"), "{}", results[2]);
    assert!(results[3]["error"].as_str().unwrap().contains("no contract named"), "{}", results[3]);
    assert_eq!(results[4]["outcome"], "accepted");
    let calls = upstream.calls().len();
    assert_eq!(calls, 4, "first and last once, says-no twice (two rounds)");
    // Run again: the same jobs are found by their idempotency keys; nothing is asked again.
    let again = push();
    assert_eq!(again, results);
    assert_eq!(upstream.calls().len(), calls);
}

#[test]
fn a_job_cancelled_through_another_replica_stops_its_upstream_call() {
    let Some(redis) = redis() else { return };
    let upstream = Upstream::start(Arc::new(|_tag, _| (Duration::from_secs(30), CLEAN_PLATE.to_owned())));
    let dir = scratch("redis-cancel");
    let prefix = format!("vouch-test-{}-cancel", std::process::id());
    // Leases of 30 s: the cancel is seen at the next renewal (at most 2 s), not at the lease's end.
    let cfg = redis_config(&upstream, &dir, &redis, &prefix, "lease_ms = 30000");
    let a = serve_config(&dir, "a", &cfg, &[]);
    let id = post_job(&a.addr, &plate_job("far"), &[]);
    upstream.wait_calls("far", 1, Duration::from_secs(10));
    let b = serve_config(&dir, "b", &cfg, &[]);
    let (status, _, text) = http(&b.addr, "DELETE", &format!("/v1/jobs/{id}"), &[], None);
    assert_eq!(status, 200, "{text}");
    assert_eq!(json_of(&text)["status"], "cancelled");
    let start = Instant::now();
    while !upstream.calls_for("far")[0].aborted {
        assert!(start.elapsed() < Duration::from_secs(4), "the upstream call on the other replica goes on");
        std::thread::sleep(Duration::from_millis(20));
    }
    let (_, _, text) = http(&a.addr, "GET", &format!("/v1/jobs/{id}"), &[], None);
    assert_eq!(json_of(&text)["response"]["body"]["error"]["code"], "job_cancelled");
    assert_eq!(metric(&a.addr, "vouch_jobs_results_discarded_total"), 1.0);
}

#[test]
fn jobs_off_answer_404_and_a_store_that_cannot_be_opened_is_refused_at_start() {
    let upstream = Upstream::start(Arc::new(|_tag, _| (Duration::ZERO, CLEAN_PLATE.to_owned())));
    let dir = scratch("off");
    let served = serve_config(&dir, "a", &config(&upstream, &dir, "off", ""), &[]);
    let (status, _, text) = http(&served.addr, "POST", "/v1/jobs", &[], Some(&plate_job("off")));
    assert_eq!(status, 404, "{text}");
    assert_eq!(json_of(&text)["error"]["code"], "jobs_off");
    // A store named but unusable: the gateway does not start without it.
    std::fs::write(dir.join("a-file"), "").unwrap();
    let bad = dir.join("a-file/jobs.sqlite3");
    let path = dir.join("bad.toml");
    std::fs::write(&path, config(&upstream, &dir, bad.to_str().unwrap(), "")).unwrap();
    let out =
        Command::new(env!("CARGO_BIN_EXE_vouch")).args(["serve", "--config", path.to_str().unwrap()]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("a-file"), "{}", String::from_utf8_lossy(&out.stderr));
    // So is a Redis that is not there.
    std::fs::write(&path, config(&upstream, &dir, "redis://127.0.0.1:1", "")).unwrap();
    let out =
        Command::new(env!("CARGO_BIN_EXE_vouch")).args(["serve", "--config", path.to_str().unwrap()]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("redis://127.0.0.1:1"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_redis_that_goes_away_is_a_503_with_retry_after_and_jobs_go_on_when_it_is_back() {
    if Command::new("redis-server").arg("--version").output().is_err() {
        let why = "no redis-server on the PATH (.ci/run installs it)";
        assert!(std::env::var("CI").is_err(), "{why}");
        eprintln!("SKIPPED, {why}");
        return;
    }
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let start_redis = || {
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let start = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(start.elapsed() < Duration::from_secs(10), "redis-server did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        Redis { url: format!("redis://127.0.0.1:{port}"), child: Some(child) }
    };
    let upstream = Upstream::start(Arc::new(|_tag, _| (Duration::ZERO, CLEAN_PLATE.to_owned())));
    let dir = scratch("redis-away");
    let redis = start_redis();
    let served = serve_config(&dir, "a", &redis_config(&upstream, &dir, &redis, "away", ""), &[]);
    let id = post_job(&served.addr, &plate_job("before"), &[]);
    assert_eq!(wait_finished(&served.addr, &id, Duration::from_secs(10))["response"]["outcome"], "accepted");
    drop(redis);
    let (status, headers, text) = http(&served.addr, "POST", "/v1/jobs", &[], Some(&plate_job("while away")));
    assert_eq!(status, 503, "{text}");
    assert_eq!(json_of(&text)["error"]["code"], "job_store_unavailable");
    assert_eq!(headers["retry-after"], "1");
    let (status, _, _) = http(&served.addr, "GET", &format!("/v1/jobs/{id}"), &[], None);
    assert_eq!(status, 503);
    // Back (empty: it kept nothing), and the gateway reconnects by itself.
    let _redis = start_redis();
    let start = Instant::now();
    let id = loop {
        let (status, _, text) = http(&served.addr, "POST", "/v1/jobs", &[], Some(&plate_job("after")));
        if status == 202 {
            break json_of(&text)["id"].as_str().unwrap().to_owned();
        }
        assert!(start.elapsed() < Duration::from_secs(15), "not reconnected: {status} {text}");
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(wait_finished(&served.addr, &id, Duration::from_secs(10))["response"]["outcome"], "accepted");
    assert!(upstream.calls_for("while away").is_empty());
}
