//! `vouch serve` as an operator runs it: a process with a TOML
//! configuration, the key in its environment, SIGHUP to reload the
//! contracts and SIGTERM to drain and stop.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod common;
#[path = "../../vouch-llm/tests/fake_upstream/mod.rs"]
mod fake_upstream;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::{Duration, Instant};

use common::{root, serve_config, Served};
use fake_upstream::{Fake, Step, CLEAN_PLATE};
use serde_json::{json, Value};

const KEY: &str = "sk-serve-canary-0d4e19a7b3";

/// Start `vouch serve --config FILE` with the upstream key in its environment.
fn serve(config: &str, dir: &std::path::Path) -> Served {
    serve_config(dir, "vouch", config, &[("VOUCH_TEST_SERVE_KEY", KEY)])
}

/// One HTTP/1.1 request; the status and the body.
fn http(addr: &str, method: &str, path: &str, body: Option<&Value>) -> (u16, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let body = body.map(Value::to_string).unwrap_or_default();
    write!(s, "{method} {path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}", body.len()).unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let status = out.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    let body = out.split_once("\r\n\r\n").map(|(_, b)| b.to_owned()).unwrap_or_default();
    (status, body)
}

/// A scratch folder unique to this test process.
fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("vouch-cli-test-{}", std::process::id())).join(name);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn plate_request() -> Value {
    json!({"model": "m", "messages": [{"role": "user", "content": "Read back the plate."}],
           "response_format": {"type": "json_schema", "json_schema": {"name": "plate", "schema": {}}}})
}

#[test]
fn sigterm_drains_the_requests_in_flight_and_sighup_reloads_the_contracts() {
    let fake = Fake::start(vec![Step::reply(CLEAN_PLATE).delay(Duration::from_millis(800))]);
    let dir = scratch("serve-drain");
    let contracts = dir.join("contracts");
    std::fs::create_dir_all(&contracts).unwrap();
    std::fs::copy(root().join("examples/contracts/plate.json"), contracts.join("plate.json")).unwrap();
    let config = format!(
        "listen = \"127.0.0.1:0\"\nupstream = \"{}\"\ncontracts = \"{}\"\napi_key_env = \"VOUCH_TEST_SERVE_KEY\"\n\n[defaults]\nrounds = 1\n",
        fake.base_url,
        contracts.display()
    );
    let mut served = serve(&config, &dir);

    // SIGHUP: a new contract is served without a restart.
    std::fs::write(contracts.join("tiny.json"), r#"{"type": "integer"}"#).unwrap();
    served.signal("-HUP");
    let start = Instant::now();
    loop {
        let (_, body) = http(&served.addr, "GET", "/v1/contracts", None);
        if body.contains("\"tiny\"") {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(5), "not reloaded: {body}");
        std::thread::sleep(Duration::from_millis(50));
    }

    // A slow request in flight when SIGTERM comes still gets its answer.
    let addr = served.addr.clone();
    let in_flight = std::thread::spawn(move || http(&addr, "POST", "/v1/chat/completions", Some(&plate_request())));
    std::thread::sleep(Duration::from_millis(300));
    served.signal("-TERM");
    let (status, body) = in_flight.join().unwrap();
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("\"outcome\":\"accepted\""), "{body}");
    let exit = served.child.wait().unwrap();
    assert!(exit.success(), "{exit:?}");
    assert!(TcpStream::connect(&served.addr).is_err(), "no longer listening");
    let log = served.lines().join("\n");
    assert!(log.contains("draining"), "{log}");
    // The log writer's thread wrote every request's line before the process ended.
    let answered = log.lines().filter(|l| l.contains("answered") && l.contains("route=/v1/chat/completions")).count();
    assert_eq!(answered, 1, "{log}");
    assert!(!log.contains(KEY), "the key is in no log line");
    assert_eq!(fake.seen()[0].headers["authorization"], format!("Bearer {KEY}"));
}

#[test]
fn with_a_drain_delay_sigterm_first_says_not_ready_while_still_serving() {
    let dir = scratch("serve-drain-delay");
    let config = "listen = \"127.0.0.1:0\"\ncontracts = \"examples/contracts\"\n";
    let mut served = serve_config(&dir, "vouch", config, &[("VOUCH_DRAIN_DELAY_MS", "1500")]);
    assert_eq!(http(&served.addr, "GET", "/readyz", None).0, 200);
    let stopped = Instant::now();
    served.signal("-TERM");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(http(&served.addr, "GET", "/readyz", None).0, 503);
    let (status, body) = http(&served.addr, "POST", "/v1/check", Some(&json!({"contract": "plate", "reply": "{}"})));
    assert_eq!(status, 200, "{body}");
    let exit = served.child.wait().unwrap();
    assert!(exit.success(), "{exit:?}");
    assert!(stopped.elapsed() >= Duration::from_millis(1400), "exited after {:?}", stopped.elapsed());
    assert!(TcpStream::connect(&served.addr).is_err());
}

#[test]
fn a_configuration_that_cannot_be_used_is_refused_at_start() {
    let dir = scratch("serve-bad-config");
    for (config, says) in [
        ("listen = \"0.0.0.0:0\"\ncontracts = \"examples/contracts\"\n", "without client tokens"),
        ("contracts = \"examples/contracts\"\nmax_concurency = 3\n", "max_concurency"),
        ("contracts = \"examples/contracts\"\n[defaults]\nrounds = 0\n", "rounds must be at least 1"),
        (
            "contracts = \"examples/contracts\"\n[contract.plate_check]\nmax_total_tokens = 0\n",
            "plate_check: max_total_tokens must be at least 1",
        ),
        (
            "contracts = \"examples/contracts\"\napi_key_env = \"VOUCH_TEST_UNSET_VAR\"\n",
            "VOUCH_TEST_UNSET_VAR is not set",
        ),
    ] {
        let path = dir.join("bad.toml");
        std::fs::write(&path, config).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_vouch"))
            .args(["serve", "--config", path.to_str().unwrap()])
            .current_dir(root())
            .env_remove("VOUCH_TEST_UNSET_VAR")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{config}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{config}: {err}");
    }
    // The environment overrides the file; a flag overrides the environment.
    let path = dir.join("ok.toml");
    std::fs::write(&path, "contracts = \"examples/contracts\"\nmax_concurrency = 5\n").unwrap();
    let run = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_vouch"))
            .args(["serve", "--config", path.to_str().unwrap()])
            .args(extra)
            .current_dir(root())
            .env("VOUCH_MAX_CONCURRENCY", "0")
            .output()
            .unwrap()
    };
    let out = run(&[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("max_concurrency must be at least 1"));
    let out = run(&["--max-concurrency", "3", "--listen", "0.0.0.0:0"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("without client tokens"), "the flag's 3 was taken");
}
