//! Opt-in, end to end against a real small model (see ../shared/realmodel/README.md):
//! `vouch ask` with and without `--stream`, the same prompts at temperature 0,
//! over the bundled example contracts and (when `../shared/bench/contracts`
//! is there) the benchmark contracts, in `json`, `plain` and, where the
//! contract can be exported, `schema` mode. It prints, as Markdown, the tokens
//! and seconds each took and the verdicts, and holds both to failing closed.
//!
//! ```sh
//! REALMODEL_DIR=… ../shared/realmodel/serve.sh 18080
//! VOUCH_REALMODEL_URL=http://127.0.0.1:18080/v1 cargo test -p vouch-cli --release --test realmodel_stream -- --nocapture
//! ```
//!
//! Every request goes through a small recording proxy on loopback (one
//! connection a request, `Connection: close`; when vouch closes its side the
//! proxy closes the upstream at once), so the test sees each round's request
//! body and the reply the model actually sent. A streamed round is compared
//! with the whole round that had the same request (the same body but for
//! `stream`/`stream_options`): at temperature 0 the model's output is then
//! expected to be the same, and where it is, the verdicts must be equal.
//!
//! Without `VOUCH_REALMODEL_URL` it says it is skipped and passes: CI does not
//! build the model.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod common;

use std::fmt::Write as _;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream, ToSocketAddrs};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use common::{root, text};
use serde_json::Value;

struct Case {
    contract: &'static str,
    prompt: &'static str,
    /// Whether `--mode schema` can send it (OpenAI strict export).
    schema: bool,
    /// Under ../shared/bench/contracts (skipped when that folder is absent).
    bench: bool,
}

const INVOICE: &str = "Extract this invoice as JSON.\n\nINVOICE INV-2024-0117   Issued 2024-03-05   Due 2024-04-04   Terms: NET30   Currency: EUR\nFrom: Nordlicht Bürobedarf GmbH, VAT DE811234567, Hafenstraße 12, 20457 Hamburg, DE\nBill to: Atelier Brun SARL, 8 rue des Lilas, 69003 Lyon, FR\n1. SKU PAP-A4-500  Copy paper A4, 500 sheets  10 box x 4.20  VAT 19%  = 42.00\n2. SKU TON-HP-26X  Toner cartridge 26X  2 ea x 89.90  VAT 19%  = 179.80\nSubtotal 221.80  VAT 42.14  Total 263.94";

const CASES: [Case; 8] = [
    Case {
        contract: "examples/contracts/plate.json",
        prompt: "A photo shows a clean white plate with nothing on it: no product, no text. Read it back.",
        schema: true,
        bench: false,
    },
    Case {
        contract: "examples/contracts/plate.json",
        prompt: "The photo shows a plate with a yoghurt pot still on it, label readable. Read it back.",
        schema: true,
        bench: false,
    },
    Case {
        contract: "examples/contracts/eligibility.json",
        prompt: "A student with a 3.1 GPA asks whether they are eligible for a scholarship requiring a 3.0 GPA and a recommendation letter they have not sent yet.",
        schema: true,
        bench: false,
    },
    Case {
        contract: "examples/contracts/eligibility.json",
        prompt: "Is a first-year student with no transcript eligible for the honours programme?",
        schema: true,
        bench: false,
    },
    Case {
        contract: "../shared/bench/contracts/plate_check.schema.json",
        prompt: "You check photos of returned canteen plates. This photo: a white plate with crumbs and a torn wrapper on it; the wrapper reads \"Choco\". Answer with productPresent, productTextPresent and garbledText, each true or false.",
        schema: true,
        bench: true,
    },
    Case {
        contract: "../shared/bench/contracts/eligibility_verdict.lenient.json",
        prompt: "Assess eligibility for the Graduate Research Grant. Criteria: enrolled full time (the applicant is), GPA of at least 3.5 (the applicant has 3.4), a supervisor's letter (not received). Give a verdict (eligible, maybe or not_eligible), a matchScore from 0 to 100, a summary, each criterion with its status (pass, partial, fail or unknown) and reason, and recommendations.",
        schema: true,
        bench: true,
    },
    Case { contract: "../shared/bench/contracts/invoice_extraction.schema.json", prompt: INVOICE, schema: false, bench: true },
    Case {
        contract: "../shared/bench/contracts/invoice_extraction.schema.json",
        prompt: "Extract the invoice as JSON: invoice number A-77, issued 2024-01-15, vendor Acme Tools Ltd, 1 Mill Lane, Leeds LS1 4AP, GB; bill to Bob's Garage, 22 Elm St, Springfield 62704, US; currency GBP; one line: SKU HAM-01, claw hammer, 3 ea at 12.50, tax rate 0.2, amount 37.50; subtotal 37.50, tax 7.50, total 45.00.",
        schema: false,
        bench: true,
    },
];

// ---------------------------------------------------------------------------
// The recording proxy.

struct Exchange {
    seq: u64,
    /// The request body (JSON).
    request: Value,
    /// The raw HTTP response as forwarded to vouch (head and body).
    response: Vec<u8>,
    /// True when vouch closed its side before the upstream's response ended.
    closed_early: bool,
}

#[derive(Clone)]
struct Proxy {
    url: String,
    log: Arc<Mutex<Vec<Exchange>>>,
}

impl Proxy {
    fn start(upstream_url: &str) -> Self {
        let rest = upstream_url.strip_prefix("http://").expect("an http:// URL");
        let (authority, path) = rest.split_once('/').map_or((rest, ""), |(a, p)| (a, p));
        let upstream = authority.to_socket_addrs().unwrap().next().unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/{path}", listener.local_addr().unwrap());
        let log = Arc::new(Mutex::new(Vec::new()));
        let seq = Arc::new(AtomicU64::new(0));
        let shared = Arc::clone(&log);
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { continue };
                let n = seq.fetch_add(1, Ordering::SeqCst);
                let log = Arc::clone(&shared);
                std::thread::spawn(move || {
                    if let Some(e) = relay(client, upstream, n) {
                        log.lock().unwrap().push(e);
                    }
                });
            }
        });
        Self { url, log }
    }

    fn take(&self) -> Vec<Exchange> {
        let mut v = std::mem::take(&mut *self.log.lock().unwrap());
        v.sort_by_key(|e| e.seq);
        v
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// One request: read it from vouch, send it upstream with `Connection: close`,
/// copy the response back, and close the upstream as soon as vouch goes away.
fn relay(mut client: TcpStream, upstream: std::net::SocketAddr, seq: u64) -> Option<Exchange> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 16384];
    let head_end = loop {
        if let Some(i) = find(&buf, b"\r\n\r\n") {
            break i + 4;
        }
        let n = client.read(&mut chunk).ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let length: usize = head
        .lines()
        .find_map(|l| l.split_once(':').filter(|(k, _)| k.trim().eq_ignore_ascii_case("content-length")))
        .map_or(0, |(_, v)| v.trim().parse().unwrap());
    while buf.len() < head_end + length {
        let n = client.read(&mut chunk).ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let body = buf[head_end..head_end + length].to_vec();
    // VOUCH_REALMODEL_NO_CACHE=1: ask llama-server not to reuse its prompt
    // cache (`cache_prompt: false`), in both modes alike, so that the same
    // request is evaluated the same way whatever came before it.
    let sent_body = match serde_json::from_slice::<Value>(&body) {
        Ok(Value::Object(mut o)) if std::env::var_os("VOUCH_REALMODEL_NO_CACHE").is_some() => {
            o.insert("cache_prompt".into(), Value::Bool(false));
            serde_json::to_vec(&o).unwrap()
        }
        _ => body.clone(),
    };
    let mut out = String::new();
    for line in head.trim_end().split("\r\n") {
        let lower = line.to_ascii_lowercase();
        if lower.starts_with("content-length:") {
            let _ = write!(out, "Content-Length: {}\r\n", sent_body.len());
        } else if !lower.starts_with("connection:") {
            out.push_str(line);
            out.push_str("\r\n");
        }
    }
    out.push_str("Connection: close\r\n\r\n");
    let mut up = TcpStream::connect(upstream).ok()?;
    up.write_all(out.as_bytes()).ok()?;
    up.write_all(&sent_body).ok()?;

    let finished = Arc::new(AtomicBool::new(false));
    let early = Arc::new(AtomicBool::new(false));
    let watcher = {
        let mut client = client.try_clone().unwrap();
        let up = up.try_clone().unwrap();
        let (finished, early) = (Arc::clone(&finished), Arc::clone(&early));
        std::thread::spawn(move || {
            let mut sink = [0u8; 1024];
            loop {
                match client.read(&mut sink) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
            }
            if !finished.load(Ordering::SeqCst) {
                early.store(true, Ordering::SeqCst);
                let _ = up.shutdown(Shutdown::Both);
            }
        })
    };
    let mut response = Vec::new();
    loop {
        let n = match up.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        response.extend_from_slice(&chunk[..n]);
        if client.write_all(&chunk[..n]).is_err() {
            early.store(true, Ordering::SeqCst);
            break;
        }
    }
    finished.store(true, Ordering::SeqCst);
    let _ = up.shutdown(Shutdown::Both);
    let _ = client.shutdown(Shutdown::Both);
    let _ = watcher.join();
    let request = serde_json::from_slice(&body).unwrap_or(Value::Null);
    // vouch may close its side as soon as it has the whole response, before
    // the upstream's close reaches the proxy: early only if the response was
    // not complete.
    let closed_early = early.load(Ordering::SeqCst) && !complete(&response);
    Some(Exchange { seq, request, response, closed_early })
}

/// Whether a raw HTTP response is whole: the last chunk of a chunked body,
/// or as many bytes as its Content-Length.
fn complete(response: &[u8]) -> bool {
    let Some(i) = find(response, b"\r\n\r\n") else { return false };
    let head = String::from_utf8_lossy(&response[..i]).to_ascii_lowercase();
    if head.contains("transfer-encoding: chunked") {
        // vouch stops reading a stream at `data: [DONE]`, and may close
        // before the last chunk arrives.
        return response.ends_with(b"0\r\n\r\n") || find(&dechunk(&response[i + 4..]), b"data: [DONE]").is_some();
    }
    head.lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse::<usize>().ok())
        .is_some_and(|n| response.len() - (i + 4) >= n)
}

/// What the model sent in one response: the content, the content deltas
/// (streamed), the completion tokens its usage reported.
#[derive(Default, Clone)]
struct Sent {
    content: String,
    deltas: u64,
    completion_tokens: Option<u64>,
}

fn dechunk(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut rest = body;
    while let Some(i) = find(rest, b"\r\n") {
        let size = std::str::from_utf8(&rest[..i])
            .ok()
            .and_then(|s| usize::from_str_radix(s.split(';').next().unwrap_or("").trim(), 16).ok());
        let Some(size) = size else { break };
        rest = &rest[i + 2..];
        if size == 0 {
            break;
        }
        let take = size.min(rest.len());
        out.extend_from_slice(&rest[..take]);
        rest = &rest[take..];
        if rest.len() >= 2 {
            rest = &rest[2..];
        } else {
            break;
        }
    }
    out
}

fn sent(response: &[u8]) -> Sent {
    let Some(i) = find(response, b"\r\n\r\n") else { return Sent::default() };
    let head = String::from_utf8_lossy(&response[..i]).to_ascii_lowercase();
    let raw = &response[i + 4..];
    let body = if head.contains("transfer-encoding: chunked") { dechunk(raw) } else { raw.to_vec() };
    let body = String::from_utf8_lossy(&body).into_owned();
    let mut s = Sent::default();
    if head.contains("text/event-stream") {
        for line in body.lines() {
            let Some(data) = line.strip_prefix("data:") else { continue };
            let Ok(event) = serde_json::from_str::<Value>(data.trim()) else { continue };
            if let Some(c) = event["choices"][0]["delta"]["content"].as_str() {
                if !c.is_empty() {
                    s.content.push_str(c);
                    s.deltas += 1;
                }
            }
            if let Some(n) = event["usage"]["completion_tokens"].as_u64() {
                s.completion_tokens = Some(n);
            }
        }
    } else if let Ok(v) = serde_json::from_str::<Value>(&body) {
        s.content = v["choices"][0]["message"]["content"].as_str().unwrap_or("").to_owned();
        s.completion_tokens = v["usage"]["completion_tokens"].as_u64();
    }
    s
}

/// The request as the model sees it: the body without `stream` and `stream_options`.
fn same_request(mut v: Value) -> Value {
    if let Some(o) = v.as_object_mut() {
        o.remove("stream");
        o.remove("stream_options");
    }
    v
}

// ---------------------------------------------------------------------------
// One ask.

struct RoundSeen {
    outcome: String,
    codes: Vec<String>,
    finish_reason: Option<String>,
    completion_tokens: Option<u64>,
    dropped: bool,
    decided_at_bytes: Option<u64>,
    decided_at_tokens: Option<u64>,
    tokens_received: Option<u64>,
    bytes_received: Option<u64>,
    request: Value,
    sent: Sent,
    closed_early: bool,
}

impl RoundSeen {
    /// Completion tokens this round cost: the usage's, or for a dropped round
    /// the tokens received when it was refused (content deltas: the usage
    /// event never comes).
    fn tokens(&self) -> u64 {
        if self.dropped {
            self.decided_at_tokens.or(self.tokens_received).unwrap_or(0)
        } else {
            self.completion_tokens.or(self.sent.completion_tokens).unwrap_or(0)
        }
    }
}

struct Run {
    seconds: f64,
    rounds: Vec<RoundSeen>,
    outcome: String,
    codes: Vec<String>,
}

impl Run {
    fn tokens(&self) -> u64 {
        self.rounds.iter().map(RoundSeen::tokens).sum()
    }
    fn dropped(&self) -> usize {
        self.rounds.iter().filter(|r| r.dropped).count()
    }
}

fn codes(v: &Value) -> Vec<String> {
    v.as_array().map_or_else(Vec::new, |a| a.iter().map(|p| p["code"].as_str().unwrap_or("").to_owned()).collect())
}

fn ask(proxy: &Proxy, model: &str, contract: &str, prompt: &str, mode: &str, stream: bool) -> Run {
    let mut args = vec!["ask", "--json", "--contract", contract, "--model", model, "--base-url", &proxy.url];
    args.extend_from_slice(&["--api-key-env", "VOUCH_REALMODEL_NO_KEY", "--mode", mode, "--prompt", prompt]);
    args.extend_from_slice(&["--rounds", "3", "--temperature", "0", "--max-tokens", "256", "--timeout", "120s"]);
    if stream {
        args.push("--stream");
    }
    drop(proxy.take());
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_vouch"))
        .args(&args)
        .current_dir(root())
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let seconds = started.elapsed().as_secs_f64();
    // The proxy's last relay thread may still be pushing its exchange.
    let mut exchanges = Vec::new();
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", text(&out.stdout), text(&out.stderr)));
    let rounds_json = v["rounds"].as_array().cloned().unwrap_or_default();
    for _ in 0..100 {
        exchanges.extend(proxy.take());
        if exchanges.len() >= rounds_json.len() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    exchanges.sort_by_key(|e| e.seq);
    assert_eq!(exchanges.len(), rounds_json.len(), "one request a round");
    let rounds = rounds_json
        .iter()
        .zip(exchanges)
        .map(|(r, e)| {
            let s = &r["stream"];
            RoundSeen {
                outcome: r["outcome"].as_str().unwrap_or("").to_owned(),
                codes: codes(&r["problems"]),
                finish_reason: r["finish_reason"].as_str().map(str::to_owned),
                completion_tokens: r["completion_tokens"].as_u64(),
                dropped: s["dropped"] == true,
                decided_at_bytes: s["decided_at_bytes"].as_u64(),
                decided_at_tokens: s["decided_at_tokens"].as_u64(),
                tokens_received: s["tokens_received"].as_u64(),
                bytes_received: s["bytes_received"].as_u64(),
                request: same_request(e.request),
                sent: sent(&e.response),
                closed_early: e.closed_early,
            }
        })
        .collect::<Vec<_>>();
    let run =
        Run { seconds, rounds, outcome: v["outcome"].as_str().unwrap_or("").to_owned(), codes: codes(&v["problems"]) };
    // Fail closed, whatever the model said: an accepted value passes the
    // contract, in the library and in `vouch check`.
    if let Some(value) = v["value"].as_object() {
        let path = root().join(contract);
        let c = vouch::Contract::from_json_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let value = Value::Object(value.clone());
        assert!(c.check_value(&value).is_accepted(), "an accepted value passes the contract: {value}");
        let checked = common::vouch(&["check", "--contract", contract], Some(value.to_string().as_bytes()));
        assert!(
            matches!(checked.status.code(), Some(0 | 3)),
            "`vouch check` accepts the value `vouch ask` accepted: {value}\n{}",
            text(&checked.stderr)
        );
        assert_eq!(run.outcome, "accepted");
    } else {
        assert_ne!(run.outcome, "accepted");
        assert!(!run.codes.is_empty(), "a refusal names its problems");
    }
    assert!(out.status.code().is_some());
    assert!(!run.codes.iter().any(|c| c == "upstream_unreachable"), "the server at {} answers", proxy.url);
    for r in &run.rounds {
        if stream {
            // A streamed round is dropped exactly when vouch closed the connection early.
            assert_eq!(r.dropped, r.closed_early, "dropped ⇔ the connection was closed early");
            if r.dropped {
                assert_eq!(r.outcome, "refused");
                let at = r.decided_at_bytes.expect("a dropped round says where it was decided");
                assert!(at <= r.bytes_received.unwrap());
                // What vouch read is a prefix of what the model sent.
                assert!(r.sent.content.len() as u64 >= r.bytes_received.unwrap());
            }
        } else {
            assert!(!r.dropped && !r.closed_early);
        }
    }
    run
}

// ---------------------------------------------------------------------------
// The comparison.

fn short(s: &str, n: usize) -> String {
    let one: String = s.chars().map(|c| if c == '\n' || c == '|' { ' ' } else { c }).collect();
    if one.chars().count() <= n {
        one
    } else {
        format!("{}…", one.chars().take(n).collect::<String>())
    }
}

fn pct(saved: f64, of: f64) -> f64 {
    if of == 0.0 {
        0.0
    } else {
        100.0 * saved / of
    }
}

#[derive(Default)]
struct Totals {
    asks: usize,
    whole_tokens: u64,
    stream_tokens: u64,
    stream_tokens_sent: u64,
    whole_s: f64,
    stream_s: f64,
    whole_rounds: usize,
    stream_rounds: usize,
    dropped: usize,
    dropped_at_sum: u64,
    dropped_received_sum: u64,
    /// Dropped rounds whose request had a whole twin with the same output.
    dropped_twinned: usize,
    dropped_twin_at_sum: u64,
    dropped_twin_len_sum: u64,
    dropped_twin_tokens_sum: u64,
    dropped_twin_whole_tokens_sum: u64,
    dropped_at_end: usize,
    /// Streamed rounds with a whole twin (same request).
    twins: usize,
    twins_same_output: usize,
    twins_same_verdict: usize,
    twins_same_codes: usize,
    first_same_output: usize,
    first_same_verdict: usize,
    same_final_outcome: usize,
    deltas_vs_usage: (u64, u64),
}

#[test]
fn streamed_and_whole_asks_of_a_real_model_compared() {
    let Ok(url) = std::env::var("VOUCH_REALMODEL_URL") else {
        eprintln!("realmodel_stream: skipped (set VOUCH_REALMODEL_URL=http://127.0.0.1:18080/v1 to run)");
        return;
    };
    let model = std::env::var("VOUCH_REALMODEL_MODEL").unwrap_or_else(|_| "smollm2-135m-instruct-q4_1".into());
    let proxy = Proxy::start(&url);
    let bench = root().join("../shared/bench/contracts").is_dir();
    if !bench {
        eprintln!("realmodel_stream: ../shared/bench/contracts is absent: only the example contracts");
    }
    let mut md = String::new();
    let mut t = Totals::default();
    let _ = writeln!(md, "| # | contract | prompt | mode | whole: rounds | tokens | s | outcome | stream: rounds | dropped | tokens | s | outcome | round 1 same output | round 1 same verdict |");
    let _ = writeln!(md, "|---|---|---|---|---:|---:|---:|---|---:|---:|---:|---:|---|---|---|");
    let mut detail = String::new();
    let _ = writeln!(detail, "| # | round | streamed request = whole round | decided at byte | bytes received | whole reply bytes | tokens at drop | whole round tokens | problem (stream) | prefix read |");
    let _ = writeln!(detail, "|---|---:|---|---:|---:|---:|---:|---:|---|---|");
    let mut n = 0;
    for mode in ["json", "plain", "schema"] {
        for case in CASES.iter().filter(|c| (bench || !c.bench) && (mode != "schema" || c.schema)) {
            n += 1;
            let whole = ask(&proxy, &model, case.contract, case.prompt, mode, false);
            let streamed = ask(&proxy, &model, case.contract, case.prompt, mode, true);
            let name = case.contract.rsplit('/').next().unwrap();
            t.asks += 1;
            t.whole_tokens += whole.tokens();
            t.stream_tokens += streamed.tokens();
            t.stream_tokens_sent +=
                streamed.rounds.iter().map(|r| if r.dropped { r.sent.deltas } else { r.tokens() }).sum::<u64>();
            t.whole_s += whole.seconds;
            t.stream_s += streamed.seconds;
            t.whole_rounds += whole.rounds.len();
            t.stream_rounds += streamed.rounds.len();
            if whole.outcome == streamed.outcome {
                t.same_final_outcome += 1;
            }

            // Round 1 has the same request in both; later rounds only when
            // the feedback was the same.
            let (w1, s1) = (&whole.rounds[0], &streamed.rounds[0]);
            assert_eq!(w1.request, s1.request, "round 1 sends the same request in both");
            let mut first = ("", "");
            for (k, s) in streamed.rounds.iter().enumerate() {
                if !s.dropped && s.finish_reason.is_some() {
                    t.deltas_vs_usage.0 += s.sent.deltas;
                    t.deltas_vs_usage.1 += s.completion_tokens.unwrap_or(0);
                }
                let twin = whole.rounds.iter().find(|w| w.request == s.request);
                if s.dropped {
                    t.dropped += 1;
                    t.dropped_at_sum += s.decided_at_bytes.unwrap();
                    t.dropped_received_sum += s.bytes_received.unwrap();
                }
                let Some(w) = twin else {
                    if s.dropped {
                        let _ = writeln!(
                            detail,
                            "| {n} | {} | no | {} | {} | – | {} | – | {} | `{}` |",
                            k + 1,
                            s.decided_at_bytes.unwrap(),
                            s.bytes_received.unwrap(),
                            s.tokens(),
                            s.codes.join(", "),
                            short(
                                &String::from_utf8_lossy(
                                    &s.sent.content.as_bytes()[..s.decided_at_bytes.unwrap() as usize]
                                ),
                                60
                            )
                        );
                    }
                    continue;
                };
                t.twins += 1;
                let whole_reply = &w.sent.content;
                // The same output: for a dropped round, what was read up to
                // the deciding byte is a prefix of the whole reply.
                let same = if s.dropped {
                    let at = s.decided_at_bytes.unwrap() as usize;
                    whole_reply.as_bytes().starts_with(&s.sent.content.as_bytes()[..at])
                } else {
                    *whole_reply == s.sent.content
                };
                let same_verdict = same && w.outcome == s.outcome;
                if same {
                    t.twins_same_output += 1;
                    // Where the model said the same, the verdicts are equal.
                    assert_eq!(
                        w.outcome,
                        s.outcome,
                        "case {n} round {}: the same output, the same verdict\n{whole_reply}",
                        k + 1
                    );
                    t.twins_same_verdict += 1;
                    let (mut wc, mut sc) = (w.codes.clone(), s.codes.clone());
                    wc.sort();
                    wc.dedup();
                    sc.sort();
                    sc.dedup();
                    if s.dropped {
                        // The stream names what decided it: problems the whole check names too.
                        if sc.iter().all(|c| wc.contains(c)) {
                            t.twins_same_codes += 1;
                        }
                    } else if sc == wc {
                        t.twins_same_codes += 1;
                    }
                    if s.dropped {
                        let at = s.decided_at_bytes.unwrap();
                        assert!(
                            at <= whole_reply.len() as u64,
                            "case {n} round {}: dropped at byte {at}, within the whole reply of {} bytes",
                            k + 1,
                            whole_reply.len()
                        );
                        t.dropped_twinned += 1;
                        t.dropped_twin_at_sum += at;
                        t.dropped_twin_len_sum += whole_reply.len() as u64;
                        t.dropped_twin_tokens_sum += s.tokens();
                        t.dropped_twin_whole_tokens_sum += w.tokens();
                        if at == whole_reply.len() as u64 {
                            t.dropped_at_end += 1;
                        }
                    }
                }
                if k == 0 {
                    first = (
                        if same { "yes" } else { "no" },
                        if same_verdict {
                            "yes"
                        } else if same {
                            "NO"
                        } else {
                            "–"
                        },
                    );
                    if same {
                        t.first_same_output += 1;
                    }
                    if same_verdict {
                        t.first_same_verdict += 1;
                    }
                }
                if s.dropped {
                    let _ = writeln!(
                        detail,
                        "| {n} | {} | yes{} | {} | {} | {} | {} | {} | {} | `{}` |",
                        k + 1,
                        if same { ", same output" } else { ", OUTPUT DIFFERS" },
                        s.decided_at_bytes.unwrap(),
                        s.bytes_received.unwrap(),
                        whole_reply.len(),
                        s.tokens(),
                        w.tokens(),
                        s.codes.join(", "),
                        short(
                            &String::from_utf8_lossy(
                                &s.sent.content.as_bytes()[..s.decided_at_bytes.unwrap() as usize]
                            ),
                            60
                        )
                    );
                }
            }
            let _ = writeln!(
                md,
                "| {n} | {name} | {} | {mode} | {} | {} | {:.2} | {} | {} | {} | {} | {:.2} | {} | {} | {} |",
                short(case.prompt, 40),
                whole.rounds.len(),
                whole.tokens(),
                whole.seconds,
                if whole.outcome == "accepted" {
                    "accepted".to_owned()
                } else {
                    format!("refused ({})", short(&dedup(&whole.codes), 60))
                },
                streamed.rounds.len(),
                streamed.dropped(),
                streamed.tokens(),
                streamed.seconds,
                if streamed.outcome == "accepted" {
                    "accepted".to_owned()
                } else {
                    format!("refused ({})", short(&dedup(&streamed.codes), 60))
                },
                first.0,
                first.1,
            );
            eprintln!(
                "realmodel_stream: {n} {name} {mode}: whole {} rounds {} tokens {:.2}s {} | stream {} rounds {} dropped {} tokens {:.2}s {} | first same output {}",
                whole.rounds.len(),
                whole.tokens(),
                whole.seconds,
                whole.outcome,
                streamed.rounds.len(),
                streamed.dropped(),
                streamed.tokens(),
                streamed.seconds,
                streamed.outcome,
                first.0,
            );
            for (label, run) in [("whole", &whole), ("stream", &streamed)] {
                for (k, r) in run.rounds.iter().enumerate() {
                    eprintln!(
                        "realmodel_stream:   {label} round {}: {} {:?} tokens {} finish {:?} dropped {} at {:?}/{:?} reply {:?}",
                        k + 1,
                        r.outcome,
                        r.codes,
                        r.tokens(),
                        r.finish_reason,
                        r.dropped,
                        r.decided_at_bytes,
                        r.bytes_received,
                        short(&r.sent.content, 160)
                    );
                }
            }
        }
    }
    let mut sum = String::new();
    let ts = t.whole_tokens.saturating_sub(t.stream_tokens);
    let ss = t.whole_s - t.stream_s;
    let _ =
        writeln!(sum, "- asks per mode: {} (rounds: whole {}, streamed {})", t.asks, t.whole_rounds, t.stream_rounds);
    let _ = writeln!(
        sum,
        "- completion tokens: whole {}, streamed {} (the server had sent {} by the time the connection closed); saved {} ({:.1}%)",
        t.whole_tokens,
        t.stream_tokens,
        t.stream_tokens_sent,
        ts,
        pct(ts as f64, t.whole_tokens as f64)
    );
    let _ = writeln!(
        sum,
        "- seconds: whole {:.2}, streamed {:.2}; saved {:.2} ({:.1}%)",
        t.whole_s,
        t.stream_s,
        ss,
        pct(ss, t.whole_s)
    );
    let _ = writeln!(
        sum,
        "- dropped rounds: {} of {} streamed; decided on average at byte {:.1} (received {:.1})",
        t.dropped,
        t.stream_rounds,
        t.dropped_at_sum as f64 / t.dropped.max(1) as f64,
        t.dropped_received_sum as f64 / t.dropped.max(1) as f64
    );
    let _ = writeln!(
        sum,
        "- dropped rounds with a whole twin (same request, same output): {}; decided on average at byte {:.1} of a {:.1}-byte whole reply ({:.1}%); {:.1} tokens at the drop vs {:.1} for the whole reply; {} decided only at the reply's last byte",
        t.dropped_twinned,
        t.dropped_twin_at_sum as f64 / t.dropped_twinned.max(1) as f64,
        t.dropped_twin_len_sum as f64 / t.dropped_twinned.max(1) as f64,
        pct(t.dropped_twin_at_sum as f64, t.dropped_twin_len_sum as f64),
        t.dropped_twin_tokens_sum as f64 / t.dropped_twinned.max(1) as f64,
        t.dropped_twin_whole_tokens_sum as f64 / t.dropped_twinned.max(1) as f64,
        t.dropped_at_end
    );
    let _ = writeln!(
        sum,
        "- streamed rounds whose request equals a whole round's: {}; same output {}; same verdict where the output was the same {} of {}; problem codes consistent (equal, or for a dropped round a subset of the whole check's) {} of {}",
        t.twins, t.twins_same_output, t.twins_same_verdict, t.twins_same_output, t.twins_same_codes, t.twins_same_output
    );
    let _ = writeln!(
        sum,
        "- round 1 (always the same request): same output in {} of {} asks, same verdict in {} of those; same final outcome in {} of {} asks",
        t.first_same_output, t.asks, t.first_same_verdict, t.same_final_outcome, t.asks
    );
    let _ = writeln!(
        sum,
        "- streamed rounds that ran to the end: {} content deltas for {} completion tokens in the usage",
        t.deltas_vs_usage.0, t.deltas_vs_usage.1
    );
    eprintln!("realmodel_stream: REPORT BEGIN\n{md}\n{detail}\n{sum}realmodel_stream: REPORT END");
    assert_eq!(t.first_same_verdict, t.first_same_output);
}

fn dedup(codes: &[String]) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for c in codes {
        if !seen.contains(&c.as_str()) {
            seen.push(c);
        }
    }
    seen.join(", ")
}
