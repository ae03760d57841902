//! The API key appears in no output, log line, error or `Debug`; and the
//! tracing spans report every round.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod fake_upstream;

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use fake_upstream::{plate_contract, refused_url, Fake, Step, CLEAN_PLATE};
use serde_json::json;
use vouch_llm::{ApiKey, Asker, Backoff, Config, Headers, Message, Timeouts};

const CANARY: &str = "canary-7f3a9c1e5b2d4068-DO-NOT-LEAK";

/// Everything a tracing subscriber writes, at every level, from every crate.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

fn config(base_url: &str) -> Config {
    let mut c = Config::new(base_url, "fake-model");
    c.api_key = Some(ApiKey::new(CANARY));
    c.headers = Headers(vec![("X-Gateway-Key".into(), format!("gw-{CANARY}"))]);
    c.timeouts = Timeouts {
        connect: Duration::from_millis(300),
        first_byte: Duration::from_millis(300),
        total: Duration::from_millis(600),
        idle: Duration::from_millis(600),
    };
    c.backoff = Backoff { base: Duration::from_millis(1), max_wait: Duration::from_millis(50) };
    c
}

#[test]
fn a_canary_key_appears_in_no_output_log_error_or_debug() {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();

    // Upstreams that echo the key back in every way they can.
    let echo = format!(
        r#"{{"error": {{"message": "Incorrect API key provided: {CANARY}. You sent Authorization: Bearer {CANARY}"}}}}"#
    );
    let fake = Fake::start(vec![
        Step::body(401, &echo),
        Step::body(200, &echo),
        Step::body(500, &format!("Bearer {CANARY}")),
        Step::body(429, &echo).header("retry-after", "0"),
        Step::completion(
            json!({"role": "assistant", "content": null, "refusal": format!("no, {CANARY}")}),
            "stop",
            json!(null),
        ),
        Step::completion(
            json!({"role": "assistant", "content": format!("{{\"k\": \"{CANARY}\"")}),
            "length",
            json!(null),
        ),
        Step::body(200, &format!("<html>{CANARY}</html>")),
        // The key in finish_reason (traced on the round span) and escaped inside the content.
        Step::completion(json!({"role": "assistant", "content": CLEAN_PLATE}), CANARY, json!(null)),
        Step::completion(
            json!({"role": "assistant", "content": format!("{{\"k\": \"{}\"}}", CANARY.replace('-', "\\u002d"))}),
            "stop",
            json!(null),
        ),
        Step::reply(CLEAN_PLATE).delay(Duration::from_secs(2)),
    ]);
    let mut outputs: Vec<String> = Vec::new();
    let asker = Asker::new(plate_contract(), {
        let mut c = config(&fake.base_url);
        c.rounds = 1;
        c
    })
    .unwrap();
    outputs.push(format!("{asker:?}"));
    outputs.push(format!("{:?}", asker.config()));
    outputs.push(format!("{:?}", asker.config().api_key));
    for _ in 0..10 {
        let o = rt.block_on(asker.ask(vec![Message::user("plate?")]));
        outputs.push(o.to_json().to_string());
        outputs.push(format!("{o:?}"));
        for p in &o.problems {
            outputs.push(p.to_string());
        }
    }
    // Every request carried the key.
    let seen = fake.seen();
    assert_eq!(seen.len(), 10);
    for s in &seen {
        assert_eq!(s.headers["authorization"], format!("Bearer {CANARY}"));
        assert_eq!(s.headers["x-gateway-key"], format!("gw-{CANARY}"));
    }
    // An unreachable upstream, and a bad setup.
    let unreachable = Asker::new(plate_contract(), config(&refused_url())).unwrap();
    let o = rt.block_on(unreachable.ask(vec![Message::user("plate?")]));
    outputs.push(o.to_json().to_string());
    let mut bad = config("http://127.0.0.1:9/v1");
    bad.api_key = Some(ApiKey::new(format!("{CANARY}\n")));
    bad.headers = Headers(vec![("X-Bad".into(), format!("{CANARY}\u{7f}"))]);
    outputs.push(Asker::new(plate_contract(), bad).unwrap_err().to_string());
    let mut bad = config("http://127.0.0.1:9/v1");
    bad.api_key = Some(ApiKey::new(format!("{CANARY}\u{1}x")));
    let err = Asker::new(plate_contract(), bad).unwrap_err();
    outputs.push(err.to_string());
    outputs.push(format!("{err:?}"));

    let logs = captured.text();
    assert!(logs.contains("round finished"), "tracing ran at all:\n{logs}");
    outputs.push(logs);
    for (i, out) in outputs.iter().enumerate() {
        assert!(!out.contains(CANARY), "output {i} leaks the key:\n{out}");
        assert!(!out.contains("7f3a9c1e5b2d4068"), "output {i} leaks part of the key:\n{out}");
    }
}

#[test]
fn the_spans_report_each_round() {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::INFO)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let fake = Fake::start(vec![Step::reply("{}"), Step::reply(CLEAN_PLATE)]);
    let mut c = config(&fake.base_url);
    c.api_key = None;
    c.headers = Headers::default();
    let o = rt.block_on(Asker::new(plate_contract(), c).unwrap().ask(vec![Message::user("plate?")]));
    assert!(o.is_pass());
    let logs = captured.text();
    let rounds: Vec<&str> = logs.lines().filter(|l| l.contains("round finished")).collect();
    assert_eq!(rounds.len(), 2, "{logs}");
    for (line, outcome) in rounds.iter().zip(["refused", "accepted"]) {
        assert!(line.contains("ask{model=fake-model mode=\"schema\" max_rounds=2}"), "{line}");
        assert!(line.contains("latency_ms="), "{line}");
        assert!(line.contains("total_tokens=120"), "{line}");
        assert!(line.contains("finish_reason=\"stop\""), "{line}");
        assert!(line.contains(&format!("outcome=\"{outcome}\"")), "{line}");
    }
    assert!(rounds[0].contains("problems=[\"missing\", \"missing\", \"missing\"]"), "{}", rounds[0]);
    assert!(logs.contains("ask finished"), "{logs}");
}
