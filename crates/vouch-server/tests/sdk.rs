//! The gateway driven by the real, official OpenAI SDKs as its clients: the
//! Python `openai` package and openai-node, the pinned versions that
//! `sources/generate` installs under `target/sources/` (or
//! `$VOUCH_SOURCES_DIR`). Each scenario starts a scripted fake upstream and
//! a gateway with a client token; one test per SDK runs all its scenarios in
//! one process of a script in `tests/sdk/` (the SDK's `api_key` is the
//! token; starting the SDK is most of the time), and asserts on the JSON
//! line the script prints for each (what the SDK handed its caller) and on
//! what its upstream saw (the server's key, never the client's token).
//!
//! Without the SDKs (or without `node`) a test says so loudly and skips;
//! under `CI=true` it fails. The scripts set `max_retries` to 0: the SDKs
//! retry 408/409/429/5xx by default, and the upstream's request count must
//! be the gateway's own rounds.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod common;
#[path = "../../vouch-llm/tests/fake_upstream/mod.rs"]
mod fake_upstream;

use std::io::{Read, Write as _};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{config, start, Running, KEY, TOKEN};
use fake_upstream::{Fake, SseFake, SseStep, Step, CLEAN_PLATE};
use serde_json::Value;

/// A plate that goes wrong late: `"no"` is not a boolean, after a good start.
const LATE_WRONG: &str = r#"{"productPresent":false,"productTextPresent":"no","garbledText":false}"#;

/// How long a script may take before it is killed (a hung stream).
const SCRIPT_LIMIT: Duration = Duration::from_secs(60);

/// Which SDK runs a scenario.
#[derive(Clone, Copy, Debug)]
enum Sdk {
    Python,
    /// openai-node from this npm prefix under the sources folder.
    Node(&'static str),
}

impl Sdk {
    fn name(self) -> String {
        match self {
            Self::Python => "openai-python".to_owned(),
            Self::Node(prefix) => format!("openai-node ({prefix})"),
        }
    }

    fn is_python(self) -> bool {
        matches!(self, Self::Python)
    }
}

fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

fn sources_dir() -> PathBuf {
    std::env::var_os("VOUCH_SOURCES_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/sources"))
}

fn script(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/sdk").join(name)
}

/// Say that an SDK is missing: fail under CI, else skip loudly (written
/// past the harness's capture, so a plain `cargo test` shows it).
fn missing(sdk: Sdk, why: &str) {
    let msg = format!(
        "SDK MISSING: {} {why} (sources/generate installs the pinned SDKs under {}; it needs python3 with \
         venv, node and npm, and the registries)",
        sdk.name(),
        sources_dir().display()
    );
    assert!(!in_ci(), "{msg}");
    let _ = writeln!(std::io::stderr(), "\n!!!!! {msg}: SKIPPING this test !!!!!\n");
}

/// The command that runs `sdk`'s script (the scenario still to be added),
/// or `None` after [`missing`].
fn command(sdk: Sdk) -> Option<Command> {
    let dir = sources_dir();
    match sdk {
        Sdk::Python => {
            let python = dir.join("venv/bin/python");
            if !python.is_file() || !dir.join("venv/.stamp").is_file() {
                missing(sdk, &format!("is not installed: no {} (or its install stamp)", python.display()));
                return None;
            }
            let mut c = Command::new(python);
            c.arg(script("openai_python.py"));
            Some(c)
        }
        Sdk::Node(prefix) => {
            let prefix = dir.join(prefix);
            let package = prefix.join("node_modules/openai/package.json");
            if !package.is_file() || !prefix.join(".stamp").is_file() {
                missing(sdk, &format!("is not installed: no {} (or its install stamp)", package.display()));
                return None;
            }
            if !Command::new("node").arg("--version").output().is_ok_and(|o| o.status.success()) {
                missing(sdk, "cannot run: no `node` on the PATH");
                return None;
            }
            let mut c = Command::new("node");
            c.arg(script("openai_node.mjs")).arg(prefix);
            Some(c)
        }
    }
}

/// One scenario: its gateway (before an upstream scripted for it), and the
/// check of what the script printed for it (and of what the upstream saw).
struct Scenario {
    name: &'static str,
    gateway: Running,
    check: Box<dyn FnOnce(&Value)>,
}

impl Scenario {
    fn new(name: &'static str, gateway: Running, check: impl FnOnce(&Value) + 'static) -> Self {
        Self { name, gateway, check: Box::new(check) }
    }
}

/// Run every scenario in one process of `sdk`'s script (starting the SDK
/// is most of its time), each against its own gateway, then check each;
/// every failing scenario is named at the end (its panic is printed above).
fn drive(sdk: Sdk, scenarios: Vec<Scenario>) {
    let Some(mut command) = command(sdk) else { return };
    for s in &scenarios {
        command.arg(format!("{}={}/v1", s.name, s.gateway.url));
    }
    let seen = run(sdk, command);
    let mut failed = Vec::new();
    for s in scenarios {
        let Some(v) = seen.iter().find(|v| v["scenario"] == s.name) else {
            eprintln!("{} {}: the script printed nothing for it", sdk.name(), s.name);
            failed.push(s.name);
            continue;
        };
        if let Some(trace) = v["unexpected"].as_str() {
            eprintln!("{} {}: the SDK call went an unexpected way:\n{trace}", sdk.name(), s.name);
            failed.push(s.name);
            continue;
        }
        let check = s.check;
        if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(v))).is_err() {
            failed.push(s.name);
        }
        drop(s.gateway);
    }
    assert!(failed.is_empty(), "{}: these scenarios failed (each one's message is above): {failed:?}", sdk.name());
}

/// Run `command` (its scenarios given) and return the JSON lines it
/// printed. Panics when it prints something else, or runs too long.
fn run(sdk: Sdk, mut command: Command) -> Vec<Value> {
    command.env("VOUCH_TOKEN", TOKEN).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    // Nothing from the environment may steer the SDK elsewhere, or add a
    // credential the test does not know of.
    for var in [
        "VOUCH_BASE_URL",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "OPENAI_ORG_ID",
        "OPENAI_PROJECT_ID",
        "OPENAI_WEBHOOK_SECRET",
        "OPENAI_LOG",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
    ] {
        command.env_remove(var);
    }
    command.env("NO_PROXY", "127.0.0.1,localhost");
    let mut child = command.spawn().unwrap_or_else(|e| panic!("{}: cannot start its script: {e}", sdk.name()));
    let read = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = r.read_to_string(&mut s);
            s
        })
    };
    let out = read(Box::new(child.stdout.take().unwrap()));
    let err = read(Box::new(child.stderr.take().unwrap()));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > SCRIPT_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "{}: the script ran past {SCRIPT_LIMIT:?}:\n{}\n{}",
                sdk.name(),
                out.join().unwrap(),
                err.join().unwrap()
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let (stdout, stderr) = (out.join().unwrap(), err.join().unwrap());
    eprintln!("{}: {status} in {:?}", sdk.name(), started.elapsed());
    let lines: Vec<Value> = stdout
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            eprintln!("  {l}");
            serde_json::from_str(l)
                .unwrap_or_else(|e| panic!("{}: not a JSON line ({e}):\n{stdout}\n{stderr}", sdk.name()))
        })
        .collect();
    if !stderr.trim().is_empty() {
        eprintln!("{} (its stderr):\n{stderr}", sdk.name());
    }
    // A failed scenario says why in its line; any other failure is here.
    assert!(
        status.success() || lines.iter().any(|v| !v["unexpected"].is_null()),
        "{}: the script failed ({status}):\n{stdout}\n{stderr}",
        sdk.name()
    );
    lines
}

fn json_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

fn codes(v: &Value) -> Vec<String> {
    v.as_array().unwrap().iter().map(|c| c.as_str().unwrap().to_owned()).collect()
}

/// The whole-reply upstream saw `requests` requests, each with the server's
/// key, none with the client's token or the SDK's own headers.
fn upstream_saw_the_key_only(fake: &Fake, requests: usize) {
    let seen = fake.seen();
    assert_eq!(seen.len(), requests, "the upstream's requests (the SDK must not have retried)");
    for s in &seen {
        assert_eq!(s.path, "/v1/chat/completions");
        assert_eq!(s.headers["authorization"], format!("Bearer {KEY}"), "the server's key, not the client's token");
        for (name, value) in &s.headers {
            assert!(!value.contains(TOKEN), "the client's token reached the upstream in {name}");
            assert!(!name.starts_with("x-stainless"), "the SDK's header {name} was forwarded");
        }
        assert!(!s.body.to_string().contains(TOKEN));
        assert_eq!(s.body["model"], "fake-model");
    }
}

/// The streaming upstream saw `requests` streamed requests, none carrying
/// the client's token in its body.
fn stream_upstream_saw(fake: &SseFake, requests: usize) {
    let seen = fake.seen();
    assert_eq!(seen.len(), requests, "the upstream's streamed requests");
    for s in &seen {
        assert_eq!(s.body["stream"], true);
        assert_eq!(s.body["model"], "fake-model");
        assert!(!s.body.to_string().contains(TOKEN));
    }
}

// ---------------------------------------------------------------- scenarios, for each SDK

/// `create(response_format=…)` answered with a good plate: the content is
/// the vouched JSON, the `vouch` object is readable beside it.
fn accepted(sdk: Sdk) -> Scenario {
    let fake = Fake::start(vec![Step::reply(CLEAN_PLATE)]);
    let gateway = start(config(&fake.base_url), vec![TOKEN.to_owned()]);
    Scenario::new("accepted", gateway, move |v: &Value| {
        assert_eq!(v["content"], json_of(CLEAN_PLATE), "{v}");
        assert_eq!(v["finish_reason"], "stop", "{v}");
        assert_eq!(v["usage_total"], 120, "{v}");
        assert_eq!(v["vouch"]["outcome"], "accepted", "{v}");
        assert_eq!(v["vouch"]["source"], "model", "{v}");
        assert_eq!(v["vouch"]["contract"], "plate", "{v}");
        assert_eq!(v["vouch"]["rounds"].as_array().unwrap().len(), 1, "{v}");
        if sdk.is_python() {
            assert_eq!(v["vouch_in_to_dict"], v["vouch"], "to_dict() keeps the extra field too: {v}");
        }
        upstream_saw_the_key_only(&fake, 1);
    })
}

/// Every round refused: the SDK raises its 422 error, with the vouch code,
/// type and problems readable, and does not retry it.
fn refused() -> Scenario {
    let fake = Fake::start(vec![Step::reply("{}"), Step::reply("{}")]);
    let gateway = start(config(&fake.base_url), vec![TOKEN.to_owned()]);
    Scenario::new("refused", gateway, move |v: &Value| {
        assert_eq!(v["raised"], true, "{v}");
        assert_eq!(v["is_unprocessable"], true, "{v}");
        assert_eq!(v["class"], "UnprocessableEntityError", "{v}");
        assert_eq!(v["status"], 422, "{v}");
        assert_eq!(v["code"], "missing", "{v}");
        assert_eq!(v["type"], "vouch_refused", "{v}");
        assert!(codes(&v["problems"]).contains(&"missing".to_owned()), "{v}");
        assert_eq!(v["error_class"], "no_answer", "{v}");
        assert_eq!(v["contract"], "plate", "{v}");
        assert_eq!(v["outcome_header"], "refused", "{v}");
        assert!(v["message"].as_str().unwrap().contains("vouch refused"), "{v}");
        // Exactly the gateway's own two rounds: the SDK did not retry the 422.
        upstream_saw_the_key_only(&fake, 2);
    })
}

/// A good streamed plate, read through the SDK's stream helper and through
/// `create(stream=True)`: the deltas concatenate to the plate, the vouch
/// object comes in the last chunk.
fn stream_accepted(sdk: Sdk) -> Scenario {
    let fake = SseFake::start(vec![SseStep::reply(CLEAN_PLATE, 5), SseStep::reply(CLEAN_PLATE, 5)]);
    let gateway = start(config(&fake.base_url), vec![TOKEN.to_owned()]);
    Scenario::new("stream_accepted", gateway, move |v: &Value| {
        for way in ["helper", "create"] {
            let w = &v[way];
            assert_eq!(w["raised"], false, "{way}: {v}");
            assert_eq!(w["content"], CLEAN_PLATE, "{way}: {v}");
            assert_eq!(w["finish_reason"], "stop", "{way}: {v}");
            assert_eq!(w["vouch"]["outcome"], "accepted", "{way}: {v}");
            assert_eq!(w["vouch"]["contract"], "plate", "{way}: {v}");
        }
        assert_eq!(v["helper"]["final_content"], CLEAN_PLATE, "{v}");
        assert_eq!(v["helper"]["content_done"], CLEAN_PLATE, "the helper's content.done event: {v}");
        if sdk.is_python() {
            // openai-python's helper builds its final completion from the first
            // chunk and copies only `usage` and `system_fingerprint` from later
            // ones (lib/streaming/chat/_completions.py, `_accumulate_chunk`), so
            // the `vouch` object of the last chunk is read from its `chunk` event.
            assert_eq!(v["helper"]["final_vouch"], Value::Null, "{v}");
        } else {
            // openai-node's merges every chunk's top-level fields into it.
            assert_eq!(v["helper"]["final_vouch"]["outcome"], "accepted", "{v}");
        }
        stream_upstream_saw(&fake, 2);
    })
}

/// A stream that goes wrong half way: the good part arrives as deltas,
/// then the error event, which the SDK raises while iterating, with the
/// vouch code and problems readable; never the refused piece.
fn stream_refused_late() -> Scenario {
    let fake = SseFake::start(vec![SseStep::reply(LATE_WRONG, 8), SseStep::reply(LATE_WRONG, 8)]);
    let gateway = start(config(&fake.base_url), vec![TOKEN.to_owned()]);
    Scenario::new("stream_refused", gateway, move |v: &Value| {
        for way in ["helper", "create"] {
            let w = &v[way];
            assert_eq!(w["raised"], true, "{way}: {v}");
            let content = w["content"].as_str().unwrap();
            assert!(!content.is_empty() && LATE_WRONG.starts_with(content), "{way}: the good part came first: {v}");
            assert!(!content.contains("\"no\""), "{way}: the refused piece is never relayed: {v}");
            let e = &w["error"];
            assert_eq!(e["is_api_error"], true, "{way}: {v}");
            assert_eq!(e["class"], "APIError", "{way}: {v}");
            assert_eq!(e["status"], Value::Null, "{way}: an error event has no status of its own: {v}");
            assert_eq!(e["code"], "wrong_type", "{way}: {v}");
            assert_eq!(e["type"], "vouch_refused", "{way}: {v}");
            assert!(codes(&e["problems"]).contains(&"wrong_type".to_owned()), "{way}: {v}");
            assert_eq!(e["contract"], "plate", "{way}: {v}");
            assert!(e["message"].as_str().unwrap().contains("wrong_type"), "{way}: {v}");
        }
        // One upstream request per SDK call: not asked again once content was relayed.
        stream_upstream_saw(&fake, 2);
    })
}

/// The SDK's structured outputs: it sends its own JSON Schema (Pydantic's,
/// or Zod's through `zodResponseFormat`), named after the model; the
/// gateway compiles it as an inline contract, and the SDK parses the reply
/// into its model.
fn parse(sdk: Sdk) -> Scenario {
    let fake = Fake::start(vec![Step::reply(CLEAN_PLATE)]);
    let gateway = start(config(&fake.base_url), vec![TOKEN.to_owned()]);
    Scenario::new("parse", gateway, move |v: &Value| {
        assert_eq!(v["parsed"], json_of(CLEAN_PLATE), "{v}");
        if sdk.is_python() {
            assert_eq!(v["is_model"], true, "{v}");
            assert_eq!(v["parsed_class"], "PlateModel", "{v}");
        } else {
            assert_eq!(v["zod_accepts"], true, "{v}");
        }
        assert_eq!(v["vouch"]["outcome"], "accepted", "{v}");
        upstream_saw_the_key_only(&fake, 1);
        // What went upstream is the gateway's strict export of the SDK's schema.
        let rf = &fake.seen()[0].body["response_format"];
        assert_eq!(rf["type"], "json_schema", "{rf}");
        assert_eq!(rf["json_schema"]["strict"], true, "{rf}");
        for field in ["productPresent", "productTextPresent", "garbledText"] {
            assert_eq!(rf["json_schema"]["schema"]["properties"][field]["type"], "boolean", "{rf}");
        }
    })
}

/// The same through the stream helper: the SDK parses the streamed plate
/// on `content.done` and into the final completion.
fn parse_stream(sdk: Sdk) -> Scenario {
    let fake = SseFake::start(vec![SseStep::reply(CLEAN_PLATE, 5)]);
    let gateway = start(config(&fake.base_url), vec![TOKEN.to_owned()]);
    Scenario::new("parse_stream", gateway, move |v: &Value| {
        assert_eq!(v["content"], CLEAN_PLATE, "{v}");
        assert_eq!(v["parsed"], json_of(CLEAN_PLATE), "{v}");
        if sdk.is_python() {
            assert_eq!(v["done_is_model"], true, "{v}");
            assert_eq!(v["is_model"], true, "{v}");
            assert_eq!(v["parsed_class"], "PlateModel", "{v}");
        } else {
            assert_eq!(v["done_parsed"], json_of(CLEAN_PLATE), "{v}");
            assert_eq!(v["zod_accepts"], true, "{v}");
        }
        stream_upstream_saw(&fake, 1);
        let rf = &fake.seen()[0].body["response_format"];
        assert_eq!(rf["json_schema"]["schema"]["properties"]["garbledText"]["type"], "boolean", "{rf}");
    })
}

#[test]
fn openai_python() {
    let sdk = Sdk::Python;
    drive(
        sdk,
        vec![accepted(sdk), refused(), stream_accepted(sdk), stream_refused_late(), parse(sdk), parse_stream(sdk)],
    );
}

#[test]
fn openai_node_zod4() {
    let sdk = Sdk::Node("zod4");
    drive(
        sdk,
        vec![accepted(sdk), refused(), stream_accepted(sdk), stream_refused_late(), parse(sdk), parse_stream(sdk)],
    );
}

/// The same openai-node with Zod 3: only what depends on Zod.
#[test]
fn openai_node_zod3() {
    let sdk = Sdk::Node("zod3");
    drive(sdk, vec![parse(sdk), parse_stream(sdk)]);
}
