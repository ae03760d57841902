//! A fake OpenAI-compatible upstream for the gateway overhead benchmark.
//!
//! `fake-upstream PORT [THREADS]` listens on 127.0.0.1:PORT and answers every
//! `POST /v1/chat/completions` at once with the same chat completion, whose
//! message content is a reply that passes `examples/contracts/plate.json`.
//! Anything else gets a 404 with an OpenAI-style error body. The request body
//! is read to its end (so keep-alive connections stay usable) and ignored.
//! THREADS (default 1) is the number of tokio worker threads; 1 uses a
//! current-thread runtime, which is plenty on loopback and leaves the other
//! core to the load generator and the gateway.
//!
//! With `FAKE_UPSTREAM_COUNT=1` (bench/jobs), each request body is searched
//! for a tag `bench-job-N` and calls are counted per tag; `GET /counts`
//! answers `{"calls", "distinct", "repeated"}` (repeated: tags called more
//! than once), so a benchmark can tell a job run twice.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{HeaderValue, CONTENT_TYPE};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

/// The reply the fake model gives: every answer a real boolean, nothing extra.
const CONTENT: &str = r#"{"productPresent":false,"productTextPresent":false,"garbledText":false}"#;

fn completion_body() -> Bytes {
    let created = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    // The content is a JSON string inside the JSON document: escape its quotes.
    let content = CONTENT.replace('\\', "\\\\").replace('"', "\\\"");
    let body = format!(
        concat!(
            r#"{{"id":"chatcmpl-fake-0001","object":"chat.completion","created":{created},"#,
            r#""model":"fake","system_fingerprint":"fp_fake","#,
            r#""choices":[{{"index":0,"message":{{"role":"assistant","content":"{content}","refusal":null}},"#,
            r#""logprobs":null,"finish_reason":"stop"}}],"#,
            r#""usage":{{"prompt_tokens":42,"completion_tokens":24,"total_tokens":66}}}}"#
        ),
        created = created,
        content = content
    );
    Bytes::from(body)
}

const NOT_FOUND: &str = r#"{"error":{"message":"fake-upstream answers only POST /v1/chat/completions","type":"invalid_request_error","param":null,"code":"not_found"}}"#;

/// Calls per `bench-job-N` tag, when counting.
type Counts = Option<Arc<Mutex<HashMap<u64, u32>>>>;

/// The number after the first `bench-job-` in the body.
fn tag_of(body: &[u8]) -> Option<u64> {
    let marker = b"bench-job-";
    let at = body.windows(marker.len()).position(|w| w == marker)? + marker.len();
    let digits: Vec<u8> = body.get(at..)?.iter().copied().take_while(u8::is_ascii_digit).collect();
    std::str::from_utf8(&digits).ok()?.parse().ok()
}

fn counts_body(counts: &Counts) -> Bytes {
    let Some(c) = counts else { return Bytes::from_static(b"{\"counting\":false}") };
    let c = c.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let calls: u64 = c.values().map(|n| u64::from(*n)).sum();
    let repeated = c.values().filter(|n| **n > 1).count();
    Bytes::from(format!("{{\"calls\":{calls},\"distinct\":{},\"repeated\":{repeated}}}", c.len()))
}

async fn handle(
    req: Request<Incoming>,
    completion: Bytes,
    counts: Counts,
) -> Result<Response<Full<Bytes>>, Infallible> {
    if req.method() == Method::GET && req.uri().path() == "/counts" {
        let mut resp = Response::new(Full::new(counts_body(&counts)));
        resp.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        return Ok(resp);
    }
    let ok = req.method() == Method::POST && matches!(req.uri().path(), "/v1/chat/completions" | "/chat/completions");
    // Drain the request body so the connection can carry the next request.
    let body = req.into_body().collect().await.map(|b| b.to_bytes()).unwrap_or_default();
    if let (true, Some(c)) = (ok, &counts) {
        if let Some(tag) = tag_of(&body) {
            let mut c = c.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            *c.entry(tag).or_insert(0) += 1;
        }
    }
    let (status, body) = if ok {
        (StatusCode::OK, completion)
    } else {
        (StatusCode::NOT_FOUND, Bytes::from_static(NOT_FOUND.as_bytes()))
    };
    let mut resp = Response::new(Full::new(body));
    *resp.status_mut() = status;
    resp.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    Ok(resp)
}

async fn serve(addr: SocketAddr) -> std::io::Result<()> {
    let listener = TcpListener::bind(addr).await?;
    let completion = completion_body();
    let counts: Counts =
        (std::env::var("FAKE_UPSTREAM_COUNT").as_deref() == Ok("1")).then(|| Arc::new(Mutex::new(HashMap::new())));
    eprintln!("fake-upstream: listening on http://{addr}/v1");
    loop {
        let (stream, _) = match listener.accept().await {
            Ok(s) => s,
            Err(e) => {
                // Out of file descriptors and the like: say so, keep serving.
                eprintln!("fake-upstream: accept: {e}");
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let completion = completion.clone();
        let counts = counts.clone();
        tokio::spawn(async move {
            let svc = service_fn(move |req| handle(req, completion.clone(), counts.clone()));
            let _ = http1::Builder::new().keep_alive(true).serve_connection(TokioIo::new(stream), svc).await;
        });
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let usage = "usage: fake-upstream PORT [THREADS]";
    let port: u16 = match args.next().map(|a| a.parse()) {
        Some(Ok(p)) => p,
        _ => {
            eprintln!("{usage}");
            std::process::exit(2);
        }
    };
    let threads: usize = match args.next().map(|a| a.parse()) {
        None => 1,
        Some(Ok(n)) if n >= 1 => n,
        _ => {
            eprintln!("{usage}");
            std::process::exit(2);
        }
    };
    let rt = if threads == 1 {
        tokio::runtime::Builder::new_current_thread()
    } else {
        let mut b = tokio::runtime::Builder::new_multi_thread();
        b.worker_threads(threads);
        b
    }
    .enable_all()
    .build()
    .expect("tokio runtime");
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    if let Err(e) = rt.block_on(serve(addr)) {
        eprintln!("fake-upstream: {addr}: {e}");
        std::process::exit(1);
    }
}
