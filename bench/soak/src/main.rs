//! `soak`: run `vouch serve` against a fake upstream that misbehaves in
//! every way the gateway's fault matrix names (bad replies, 5xx, 429, stalls,
//! resets, broken and endless streams), drive it with a steady mix of
//! whole and streamed requests (some clients hanging up early), and sample
//! the gateway's resident memory and open file descriptors. After the
//! warm-up, both must stay within ±5 % of their mean.
//!
//!     soak --vouch target/release/vouch [--minutes 10] [--rate 150] [--warmup 60]

use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Router;
use serde_json::{json, Value};

const CLEAN: &str = r#"{"productPresent":false,"productTextPresent":false,"garbledText":false}"#;

fn completion(content: &str, finish: &str) -> String {
    json!({"id": "x", "object": "chat.completion", "created": 0, "model": "fake",
           "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish}],
           "usage": {"prompt_tokens": 50, "completion_tokens": 20, "total_tokens": 70}})
    .to_string()
}

fn chunk(content: &str) -> String {
    format!(
        "data: {}\n\n",
        json!({"id": "x", "object": "chat.completion.chunk", "created": 0, "model": "fake",
               "choices": [{"index": 0, "delta": {"content": content}, "finish_reason": null}]})
    )
}

fn sse(pieces: Vec<String>, every: Duration, end: bool) -> Response {
    let stream = futures_util::stream::unfold((pieces.into_iter(), end), move |(mut it, end)| async move {
        match it.next() {
            Some(p) => {
                tokio::time::sleep(every).await;
                Some((Ok::<_, std::io::Error>(Bytes::from(p)), (it, end)))
            }
            None if end => None,
            // Reset: an error mid-body aborts the connection.
            None => Some((Err(std::io::Error::other("reset")), (Vec::new().into_iter(), true))),
        }
    });
    let mut r = Response::new(Body::from_stream(stream));
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        "text/event-stream".parse().unwrap_or(header::HeaderValue::from_static("text/event-stream")),
    );
    r
}

/// The mix is dealt, not drawn: each run of 100 draws from one `Deck` holds
/// every outcome exactly as often as its share says, in a shuffled order.
/// Drawn at random, the number of (say) endless streams a minute varies by
/// about ±5 % on its own (Poisson), and so does the memory they hold: noise in
/// the load, not in the gateway, of the size the check is for.
struct Deck {
    order: Vec<u32>,
    next: AtomicU64,
}

impl Deck {
    fn new(seed: u64) -> Self {
        let mut order: Vec<u32> = (0..100).collect();
        fastrand::Rng::with_seed(seed).shuffle(&mut order);
        Self { order, next: AtomicU64::new(0) }
    }

    /// The next card, in 0..100.
    fn draw(&self) -> u32 {
        let i = self.next.fetch_add(1, Ordering::Relaxed);
        self.order.get((i % 100) as usize).copied().unwrap_or(0)
    }
}

// One deck for the upstream's whole replies, one for its streams, and one
// each for the clients' choices (streamed or not; hanging up or not).
static WHOLE: LazyLock<Deck> = LazyLock::new(|| Deck::new(1));
static STREAMS: LazyLock<Deck> = LazyLock::new(|| Deck::new(2));
static STREAMED: LazyLock<Deck> = LazyLock::new(|| Deck::new(3));
static GIVES_UP: LazyLock<Deck> = LazyLock::new(|| Deck::new(4));

fn split(s: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = s.chars().collect();
    chars.chunks(chars.len().div_ceil(n).max(1)).map(|c| c.iter().collect()).collect()
}

async fn upstream(body: Bytes) -> Response {
    let streamed = serde_json::from_slice::<Value>(&body).ok().and_then(|v| v["stream"].as_bool()).unwrap_or(false);
    let roll = if streamed { STREAMS.draw() } else { WHOLE.draw() };
    let json_ok = |text: String| ([(header::CONTENT_TYPE, "application/json")], text).into_response();
    if streamed {
        let mut good: Vec<String> = split(CLEAN, 6).iter().map(|p| chunk(p)).collect();
        return match roll {
            0..=44 => {
                good.push("data: [DONE]\n\n".into());
                sse(good, Duration::from_millis(2), true)
            }
            45..=59 => sse(
                split(r#"{"productPresent":"no","productTextPresent":false}"#, 6).iter().map(|p| chunk(p)).collect(),
                Duration::from_millis(2),
                true,
            ),
            60..=69 => sse(good, Duration::from_millis(2), false),
            70..=79 => sse(
                vec![chunk("{\"productPresent\":false"), "data: {\"error\": {\"message\": \"overloaded\"}}\n\n".into()],
                Duration::from_millis(2),
                true,
            ),
            // Endless: white space until the gateway cuts it (idle or total timeout, or the cap).
            80..=89 => sse(
                std::iter::once(chunk("{")).chain(std::iter::repeat_n(chunk(&" ".repeat(512)), 2_000)).collect(),
                Duration::from_millis(1),
                true,
            ),
            _ => (StatusCode::SERVICE_UNAVAILABLE, "busy").into_response(),
        };
    }
    match roll {
        0..=39 => json_ok(completion(CLEAN, "stop")),
        40..=49 => json_ok(completion("{}", "stop")),
        50..=54 => json_ok(completion("Sure! ```json\n{}\n```", "stop")),
        55..=59 => json_ok(completion(CLEAN, "length")),
        60..=67 => (StatusCode::INTERNAL_SERVER_ERROR, "{\"error\":{\"message\":\"boom\"}}").into_response(),
        68..=72 => (StatusCode::TOO_MANY_REQUESTS, [(header::RETRY_AFTER, "0")], "{}").into_response(),
        73..=77 => ([(header::CONTENT_TYPE, "text/html")], "<html>gateway error</html>").into_response(),
        78..=87 => {
            tokio::time::sleep(Duration::from_millis(150)).await;
            json_ok(completion(CLEAN, "stop"))
        }
        88..=93 => {
            // A stall past the gateway's first-byte timeout.
            tokio::time::sleep(Duration::from_secs(3)).await;
            json_ok(completion(CLEAN, "stop"))
        }
        _ => sse(vec!["{\"choices\": [".into()], Duration::from_millis(5), false),
    }
}

fn sample(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let rss = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0);
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count() as u64);
    (rss, fds)
}

struct Killed(Child);
impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn arg(args: &[String], name: &str, default: &str) -> String {
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned().unwrap_or_else(|| default.to_owned())
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let vouch = arg(&args, "--vouch", "target/release/vouch");
    let minutes: f64 = arg(&args, "--minutes", "10").parse().unwrap_or(10.0);
    let rate: u64 = arg(&args, "--rate", "150").parse().unwrap_or(150);
    let warmup: u64 = arg(&args, "--warmup", "60").parse().unwrap_or(60);

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let up = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        let app = Router::new().fallback(axum::routing::post(upstream));
        let _ = axum::serve(listener, app).await;
    });

    let port = std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).expect("port");
    let dir = std::env::temp_dir().join(format!("vouch-soak-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let config = format!(
        "listen = \"127.0.0.1:{port}\"\nupstream = \"http://{up}/v1\"\ncontracts = \"examples/contracts\"\nmax_concurrency = 256\nmax_retry_wait_ms = 200\n\n[timeouts]\nconnect_ms = 500\nfirst_byte_ms = 1000\nidle_ms = 500\ntotal_ms = 2000\n\n[defaults]\nrounds = 2\n"
    );
    std::fs::write(dir.join("soak.toml"), config).expect("config");
    let child = Command::new(&vouch)
        .args(["serve", "--config", dir.join("soak.toml").to_str().unwrap_or(""), "--log", "warn"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("vouch serve");
    let pid = child.id();
    let gateway = Killed(child);
    let url = format!("http://127.0.0.1:{port}/v1/chat/completions");
    let client = reqwest::Client::builder().no_proxy().build().expect("client");
    for _ in 0..100 {
        if client.get(format!("http://127.0.0.1:{port}/healthz")).send().await.is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    let counts: Arc<[AtomicU64; 6]> = Arc::new(Default::default()); // 200, 422, 503, other, client gave up, error
    let total = Duration::from_secs_f64(minutes * 60.0);
    let start = Instant::now();
    let mut samples: Vec<(u64, u64, u64)> = Vec::new();
    let mut next_sample = Instant::now();
    let mut tick = tokio::time::interval(Duration::from_micros(1_000_000 / rate.max(1)));
    println!(
        "soak: vouch serve (pid {pid}) on 127.0.0.1:{port}, {rate} requests/s for {minutes} min, warm-up {warmup} s"
    );
    println!(
        "{:>6} {:>10} {:>6} {:>8} {:>8} {:>8} {:>8} {:>8}",
        "t/s", "rss KiB", "fds", "200", "422", "503", "gave up", "other"
    );
    while start.elapsed() < total {
        tick.tick().await;
        let (client, url, tally) = (client.clone(), url.clone(), Arc::clone(&counts));
        tokio::spawn(async move {
            let stream = STREAMED.draw() < 40;
            let gives_up = GIVES_UP.draw() < 5;
            let body = json!({"model": "m", "stream": stream, "messages": [{"role": "user", "content": "Read back the plate."}],
                              "response_format": {"type": "json_schema", "json_schema": {"name": "plate", "schema": {}}}});
            let mut req = client.post(&url).json(&body);
            if gives_up {
                req = req.timeout(Duration::from_millis(fastrand::u64(5..300)));
            }
            let slot = match req.send().await {
                Ok(r) => {
                    let s = r.status().as_u16();
                    match r.bytes().await {
                        Ok(_) => match s {
                            200 => 0,
                            422 => 1,
                            503 => 2,
                            _ => 3,
                        },
                        Err(_) if gives_up => 4,
                        Err(_) => 5,
                    }
                }
                Err(_) if gives_up => 4,
                Err(_) => 5,
            };
            if let Some(c) = tally.get(slot) {
                c.fetch_add(1, Ordering::Relaxed);
            }
        });
        if Instant::now() >= next_sample {
            next_sample += Duration::from_secs(2);
            let quiet = !samples.len().is_multiple_of(5);
            let (rss, fds) = sample(pid);
            let t = start.elapsed().as_secs();
            samples.push((t, rss, fds));
            let c: Vec<u64> = counts.iter().map(|c| c.load(Ordering::Relaxed)).collect();
            if quiet {
                continue;
            }
            println!("{t:>6} {rss:>10} {fds:>6} {:>8} {:>8} {:>8} {:>8} {:>8}", c[0], c[1], c[2], c[4], c[3] + c[5]);
        }
    }
    // Drained: every client has had its answer (the longest takes the 2 s
    // backstop), and the load's own keep-alive connections are closed.
    drop(client);
    tokio::time::sleep(Duration::from_secs(4)).await;
    let (rss_end, fds_end) = sample(pid);
    let after: Vec<&(u64, u64, u64)> = samples.iter().filter(|s| s.0 >= warmup).collect();
    // The load is a steady mix, but how many requests are in flight at one
    // instant is not: each sample is one instant. So the test is on minutes:
    // each minute's mean within ±5 % of the mean after warm-up (a leak grows
    // minute after minute), and, drained, back to the descriptors of before.
    let minute_means = |f: &dyn Fn(&(u64, u64, u64)) -> u64| -> Vec<f64> {
        let mut out = Vec::new();
        // 30 samples a minute; a last, partial minute is left out.
        for chunk in after.chunks(30).filter(|c| c.len() == 30) {
            out.push(chunk.iter().map(|s| f(s) as f64).sum::<f64>() / chunk.len().max(1) as f64);
        }
        out
    };
    let judge = |name: &str, f: &dyn Fn(&(u64, u64, u64)) -> u64| -> bool {
        let means = minute_means(f);
        let all = after.iter().map(|s| f(s) as f64).sum::<f64>() / after.len().max(1) as f64;
        let lo = means.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = means.iter().copied().fold(0.0, f64::max);
        let ok = all > 0.0 && lo >= all * 0.95 && hi <= all * 1.05;
        let shown: Vec<String> = means.iter().map(|m| format!("{m:.0}")).collect();
        println!(
            "{name}: per-minute means after warm-up [{}], mean {all:.1}, {:+.1} % .. {:+.1} %: {}",
            shown.join(", "),
            (lo / all - 1.0) * 100.0,
            (hi / all - 1.0) * 100.0,
            if ok { "within ±5 %" } else { "NOT within ±5 %" }
        );
        ok
    };
    let rss_ok = judge("RSS KiB", &|s| s.1);
    let fds_ok = judge("open fds", &|s| s.2);
    let (_, _, fds_start) = samples.first().copied().unwrap_or((0, 0, 0));
    // For information: the gateway's idle connections to the upstream stay
    // pooled for a while (reqwest keeps them up to 90 s), so this is not 0.
    println!("drained: {fds_end} fds (before the load: {fds_start}, the rest pooled upstream connections); RSS {rss_end} KiB");
    let c: Vec<u64> = counts.iter().map(|c| c.load(Ordering::Relaxed)).collect();
    println!(
        "answers: {} accepted (200), {} refused (422), {} busy (503), {} clients gave up, {} other/errors",
        c[0],
        c[1],
        c[2],
        c[4],
        c[3] + c[5]
    );
    let rss = (0, 0, 0.0, rss_ok);
    let fds = (0, 0, 0.0, fds_ok);
    let _ = std::fs::remove_dir_all(&dir);
    // `exit` runs no destructor: the gateway is stopped first, pass or fail.
    drop(gateway);
    if !(rss.3 && fds.3) {
        std::process::exit(1);
    }
}
