//! A scripted fake of an OpenAI-compatible upstream: a real HTTP server
//! (axum) on 127.0.0.1 with a random port, answering each request with the
//! next step of its script and recording every request. It runs on its own
//! thread and runtime, so synchronous tests (the CLI's) can use it too.
//!
//! Shared with the CLI tests (`crates/vouch-cli/tests/ask.rs` includes this
//! file by path). Nothing here contacts anything but 127.0.0.1.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use std::collections::{BTreeMap, VecDeque};
use std::io::{Read, Write};
use std::net::TcpListener as StdListener;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Router;
use serde_json::{json, Value};

/// One scripted answer.
#[derive(Clone, Debug)]
pub struct Step {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
    pub delay: Duration,
}

impl Step {
    /// A 200 chat completion with this content and `finish_reason: "stop"`.
    pub fn reply(content: &str) -> Self {
        Self::completion(json!({"role": "assistant", "content": content}), "stop", usage(100, 20))
    }

    /// A 200 chat completion with this message, finish reason and usage.
    pub fn completion(message: Value, finish_reason: &str, usage: Value) -> Self {
        let finish = if finish_reason.is_empty() { Value::Null } else { json!(finish_reason) };
        let mut body = json!({
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": 0,
            "model": "fake",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        });
        if !usage.is_null() {
            body["usage"] = usage;
        }
        Self::body(200, &body.to_string())
    }

    /// Any status and body.
    pub fn body(status: u16, body: &str) -> Self {
        Self {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            body: body.into(),
            delay: Duration::ZERO,
        }
    }

    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Wait this long before answering (before the status line).
    pub fn delay(mut self, d: Duration) -> Self {
        self.delay = d;
        self
    }
}

/// `usage` with these counts.
pub fn usage(prompt: u64, completion: u64) -> Value {
    json!({"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion})
}

/// A request the fake received.
#[derive(Clone, Debug)]
pub struct Seen {
    pub at: Instant,
    pub path: String,
    pub headers: BTreeMap<String, String>,
    pub body: Value,
}

impl Seen {
    /// The `messages` of the request.
    pub fn messages(&self) -> Vec<Value> {
        self.body["messages"].as_array().cloned().unwrap_or_default()
    }
}

#[derive(Default)]
struct Shared {
    script: Mutex<VecDeque<Step>>,
    seen: Mutex<Vec<Seen>>,
}

/// The running fake. Dropping it stops the server.
pub struct Fake {
    pub base_url: String,
    shared: Arc<Shared>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Fake {
    /// Start a fake answering with `script`, in order; once the script is
    /// spent it answers HTTP 599 "script exhausted".
    pub fn start(script: Vec<Step>) -> Self {
        let shared = Arc::new(Shared { script: Mutex::new(script.into()), seen: Mutex::default() });
        let listener = StdListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let base_url = format!("http://{}/v1", listener.local_addr().unwrap());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let state = Arc::clone(&shared);
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                let app = Router::new().fallback(answer).with_state(state);
                let _ = axum::serve(listener, app)
                    .with_graceful_shutdown(async move {
                        let _ = stopped.await;
                    })
                    .await;
            });
            // Connections still hanging (a scripted delay) die with the runtime.
            rt.shutdown_timeout(Duration::from_millis(10));
        });
        Self { base_url, shared, stop: Some(stop) }
    }

    /// Every request so far, in order.
    pub fn seen(&self) -> Vec<Seen> {
        self.shared.seen.lock().unwrap().clone()
    }

    /// How many requests came.
    pub fn count(&self) -> usize {
        self.shared.seen.lock().unwrap().len()
    }
}

impl Drop for Fake {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

async fn answer(State(shared): State<Arc<Shared>>, uri: axum::http::Uri, headers: HeaderMap, body: Bytes) -> Response {
    let seen = Seen {
        at: Instant::now(),
        path: uri.path().to_owned(),
        headers: headers
            .iter()
            .map(|(k, v)| (k.as_str().to_owned(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
            .collect(),
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    };
    shared.seen.lock().unwrap().push(seen);
    let step = shared.script.lock().unwrap().pop_front();
    let Some(step) = step else {
        return (StatusCode::from_u16(599).unwrap(), "script exhausted").into_response();
    };
    if !step.delay.is_zero() {
        tokio::time::sleep(step.delay).await;
    }
    let mut response = (StatusCode::from_u16(step.status).unwrap(), step.body).into_response();
    for (name, value) in step.headers {
        response
            .headers_mut()
            .insert(HeaderName::from_bytes(name.as_bytes()).unwrap(), HeaderValue::from_str(&value).unwrap());
    }
    response
}

/// A base URL where nothing listens (connection refused).
pub fn refused_url() -> String {
    let listener = StdListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    format!("http://{addr}/v1")
}

/// A raw server on 127.0.0.1 that, for each of `connections` connections,
/// reads the request head and then does `what`. Returns the base URL.
pub fn raw_server(connections: usize, what: Raw) -> String {
    let listener = StdListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for _ in 0..connections {
            let Ok((mut stream, _)) = listener.accept() else { return };
            stream.set_read_timeout(Some(Duration::from_millis(500))).ok();
            let mut buf = [0u8; 65536];
            let _ = stream.read(&mut buf);
            match what {
                Raw::Close => drop(stream),
                Raw::SlowBody(hang) => {
                    let _ = stream.write_all(
                        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{\"choices\": [",
                    );
                    let _ = stream.flush();
                    std::thread::sleep(hang);
                    drop(stream);
                }
            }
        }
    });
    format!("http://{addr}/v1")
}

/// What [`raw_server`] does after reading a request.
#[derive(Clone, Copy, Debug)]
pub enum Raw {
    /// Close the connection without a response.
    Close,
    /// Send the status line, headers and part of the body, then hang this long.
    SlowBody(Duration),
}

/// The founding gate's contract.
pub fn plate_contract() -> vouch::Contract {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/contracts/plate.json");
    vouch::Contract::from_json_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A good plate: nothing in frame.
pub const CLEAN_PLATE: &str = r#"{"productPresent":false,"productTextPresent":false,"garbledText":false}"#;
/// The founding gate's second round: "no" is not a boolean.
pub const SAID_NO: &str = r#"{"productPresent":"no","productTextPresent":false,"garbledText":false}"#;

// ---------------------------------------------------------------- a streaming upstream (Server-Sent Events)

/// One scripted streamed answer: a 200 `text/event-stream` response sent in
/// HTTP chunks, each after its delay; then the terminating chunk, or not.
#[derive(Clone, Debug)]
pub struct SseStep {
    /// `content-type` of the response.
    pub content_type: String,
    /// Each write of the body, after its delay.
    pub writes: Vec<(Duration, Vec<u8>)>,
    /// Send the terminating chunk (a clean end); else the connection is cut.
    pub clean_end: bool,
}

impl SseStep {
    /// A stream of these events (each a whole `data: …\n\n` text or any
    /// bytes), written one by one without delay.
    pub fn events(events: Vec<String>) -> Self {
        Self {
            content_type: "text/event-stream".into(),
            writes: events.into_iter().map(|e| (Duration::ZERO, e.into_bytes())).collect(),
            clean_end: true,
        }
    }

    /// A good stream of `content`, cut into `pieces` deltas (by characters),
    /// then `finish_reason: "stop"`, usage and `[DONE]`.
    pub fn reply(content: &str, pieces: usize) -> Self {
        Self::events(reply_events(content, pieces, "stop", Some((100, pieces as u64))))
    }

    /// Wait `every` before each write after the first `after` ones.
    pub fn slow_after(mut self, after: usize, every: Duration) -> Self {
        for (i, w) in self.writes.iter_mut().enumerate() {
            if i >= after {
                w.0 = every;
            }
        }
        self
    }

    /// Cut the connection at the end instead of ending the body cleanly.
    pub fn cut(mut self) -> Self {
        self.clean_end = false;
        self
    }
}

/// The events of a stream: a role chunk, the content in `pieces` deltas, a
/// finish chunk (unless `finish` is empty), a usage chunk (if any), `[DONE]`.
pub fn reply_events(content: &str, pieces: usize, finish: &str, usage: Option<(u64, u64)>) -> Vec<String> {
    let mut out = vec![sse_data(&chunk(json!({"role": "assistant", "content": ""}), None))];
    for piece in split(content, pieces) {
        out.push(sse_delta(&piece));
    }
    if !finish.is_empty() {
        out.push(sse_data(&chunk(json!({}), Some(finish))));
    }
    if let Some((p, c)) = usage {
        out.push(sse_usage(p, c));
    }
    out.push(SSE_DONE.to_owned());
    out
}

/// `content` cut into `n` pieces of about equal length (by characters).
pub fn split(content: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = content.chars().collect();
    let n = n.max(1);
    let size = chars.len().div_ceil(n).max(1);
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}

/// A chat completion chunk with this delta and finish reason.
pub fn chunk(delta: Value, finish: Option<&str>) -> Value {
    json!({"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0, "model": "fake",
           "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
}

/// `data: <json>\n\n`.
pub fn sse_data(v: &Value) -> String {
    format!("data: {v}\n\n")
}

/// A content delta event.
pub fn sse_delta(content: &str) -> String {
    sse_data(&chunk(json!({"content": content}), None))
}

/// The final usage event (`choices: []`), as `include_usage` sends it.
pub fn sse_usage(prompt: u64, completion: u64) -> String {
    let mut c = chunk(json!({}), None);
    c["choices"] = json!([]);
    c["usage"] = usage(prompt, completion);
    sse_data(&c)
}

/// The terminator.
pub const SSE_DONE: &str = "data: [DONE]\n\n";

/// What the streaming fake saw of one connection.
#[derive(Clone, Debug)]
pub struct SseSeen {
    /// The request body.
    pub body: Value,
    /// When the response head was written.
    pub started: Instant,
    /// How many body writes went through.
    pub writes: usize,
    /// How many were scripted.
    pub scripted: usize,
    /// When the server saw the client close the connection (a read of 0
    /// bytes, or a failed write), if it did before the script ended.
    pub closed_by_client: Option<Instant>,
    /// Whether the whole script was written.
    pub finished: bool,
}

impl SseSeen {
    /// The `messages` of the request.
    pub fn messages(&self) -> Vec<Value> {
        self.body["messages"].as_array().cloned().unwrap_or_default()
    }
}

/// A streaming fake upstream: a raw HTTP/1.1 server on 127.0.0.1 answering
/// each connection with the next [`SseStep`] (HTTP 599 once they are
/// spent), every connection on its own thread, and recording what it saw.
pub struct SseFake {
    pub base_url: String,
    seen: Arc<Mutex<Vec<Arc<Mutex<SseSeen>>>>>,
}

impl SseFake {
    pub fn start(script: Vec<SseStep>) -> Self {
        let listener = StdListener::bind("127.0.0.1:0").unwrap();
        let base_url = format!("http://{}/v1", listener.local_addr().unwrap());
        let seen: Arc<Mutex<Vec<Arc<Mutex<SseSeen>>>>> = Arc::default();
        let log = Arc::clone(&seen);
        let script = Arc::new(Mutex::new(VecDeque::from(script)));
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                let log = Arc::clone(&log);
                let script = Arc::clone(&script);
                std::thread::spawn(move || serve_sse(stream, &script, &log));
            }
        });
        Self { base_url, seen }
    }

    /// Every connection so far, in order.
    pub fn seen(&self) -> Vec<SseSeen> {
        self.seen.lock().unwrap().iter().map(|s| s.lock().unwrap().clone()).collect()
    }

    /// Wait (at most `limit`) until connection `i` is done: finished, or
    /// closed by the client.
    pub fn wait_done(&self, i: usize, limit: Duration) -> SseSeen {
        let start = Instant::now();
        loop {
            if let Some(s) = self.seen().get(i) {
                if s.finished || s.closed_by_client.is_some() || start.elapsed() > limit {
                    return s.clone();
                }
            } else if start.elapsed() > limit {
                panic!("no connection {i}");
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

fn read_request(stream: &mut std::net::TcpStream) -> Option<Value> {
    let mut buf = Vec::new();
    let mut byte = [0u8; 4096];
    let head_end = loop {
        let n = stream.read(&mut byte).ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&byte[..n]);
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
    let length: usize =
        head.lines().find_map(|l| l.strip_prefix("content-length:")).and_then(|v| v.trim().parse().ok()).unwrap_or(0);
    while buf.len() < head_end + length {
        let n = stream.read(&mut byte).ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&byte[..n]);
    }
    Some(serde_json::from_slice(&buf[head_end..head_end + length]).unwrap_or(Value::Null))
}

/// Whether the client has closed its side (a non-blocking read sees the end).
fn client_closed(stream: &std::net::TcpStream) -> bool {
    let mut probe = [0u8; 1];
    stream.set_nonblocking(true).ok();
    let closed = match (&*stream).read(&mut probe) {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) => e.kind() != std::io::ErrorKind::WouldBlock,
    };
    stream.set_nonblocking(false).ok();
    closed
}

fn serve_sse(
    mut stream: std::net::TcpStream,
    script: &Mutex<VecDeque<SseStep>>,
    log: &Mutex<Vec<Arc<Mutex<SseSeen>>>>,
) {
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok();
    let Some(body) = read_request(&mut stream) else { return };
    let step = script.lock().unwrap().pop_front();
    let Some(step) = step else {
        let _ = stream.write_all(
            b"HTTP/1.1 599 Script Exhausted\r\ncontent-length: 16\r\nconnection: close\r\n\r\nscript exhausted",
        );
        return;
    };
    let seen = Arc::new(Mutex::new(SseSeen {
        body,
        started: Instant::now(),
        writes: 0,
        scripted: step.writes.len(),
        closed_by_client: None,
        finished: false,
    }));
    log.lock().unwrap().push(Arc::clone(&seen));
    let head = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: {}\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n",
        step.content_type
    );
    if stream.write_all(head.as_bytes()).is_err() {
        return;
    }
    for (delay, bytes) in &step.writes {
        if !delay.is_zero() {
            std::thread::sleep(*delay);
        }
        let mut framed = format!("{:x}\r\n", bytes.len()).into_bytes();
        framed.extend_from_slice(bytes);
        framed.extend_from_slice(b"\r\n");
        if client_closed(&stream) || stream.write_all(&framed).and_then(|()| stream.flush()).is_err() {
            seen.lock().unwrap().closed_by_client = Some(Instant::now());
            return;
        }
        seen.lock().unwrap().writes += 1;
    }
    if step.clean_end {
        let _ = stream.write_all(b"0\r\n\r\n");
    }
    let _ = stream.flush();
    seen.lock().unwrap().finished = true;
}
