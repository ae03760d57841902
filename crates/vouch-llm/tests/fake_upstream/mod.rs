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
