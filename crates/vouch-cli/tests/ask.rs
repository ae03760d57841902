//! `vouch ask` as a user runs it, against a real HTTP fake upstream on 127.0.0.1.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod common;
#[path = "../../vouch-llm/tests/fake_upstream/mod.rs"]
mod fake_upstream;

use std::process::{Command, Output, Stdio};

use common::{root, scratch, text};
use std::time::Duration;

use fake_upstream::{refused_url, sse_data, sse_delta, Fake, SseFake, SseStep, Step, CLEAN_PLATE, SAID_NO, SSE_DONE};
use serde_json::{json, Value};

const PLATE: &str = "examples/contracts/plate.json";
const KEY_VAR: &str = "VOUCH_TEST_ASK_KEY";

/// Run `vouch ask --contract plate.json --model m --base-url URL <extra>` with
/// `key` (if any) in [`KEY_VAR`], and no OpenAI variables from the caller.
fn ask(base_url: &str, key: Option<&str>, extra: &[&str]) -> Output {
    let mut args = vec!["ask", "--contract", PLATE, "--model", "fake-model", "--base-url", base_url];
    args.extend_from_slice(&["--api-key-env", KEY_VAR, "--connect-timeout", "500ms", "--timeout", "3s"]);
    args.extend_from_slice(&["--max-retry-wait", "300ms"]);
    args.extend_from_slice(extra);
    if !extra.contains(&"--prompt") && !extra.contains(&"--prompt-file") {
        args.extend_from_slice(&["--prompt", "Read back the plate in the photo."]);
    }
    run(&args, key)
}

fn run(args: &[&str], key: Option<&str>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_vouch"));
    cmd.args(args)
        .current_dir(root())
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove(KEY_VAR)
        .stdin(Stdio::null());
    if let Some(k) = key {
        cmd.env(KEY_VAR, k);
    }
    cmd.output().unwrap()
}

fn json_out(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}\n{}", text(&out.stdout), text(&out.stderr)))
}

fn fallback_file() -> String {
    scratch("last_plate.json", CLEAN_PLATE.as_bytes()).display().to_string()
}

#[test]
fn ask_has_help_with_an_example() {
    let help = run(&["ask", "--help"], None);
    assert_eq!(help.status.code(), Some(0));
    let h = text(&help.stdout);
    assert!(h.contains("Example: vouch ask"), "{h}");
    for flag in
        ["--api-key-env", "--rounds", "--max-total-tokens", "--deadline", "--fallback", "--image", "--mode", "--stream"]
    {
        assert!(h.contains(flag), "{flag}: {h}");
    }
    assert!(h.contains("5 refused and the fallback returned"), "{h}");
}

#[test]
fn an_accepted_reply_is_printed_and_exits_0() {
    let fake = Fake::start(vec![Step::reply(CLEAN_PLATE)]);
    let out = ask(&fake.base_url, None, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let value: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(value, serde_json::from_str::<Value>(CLEAN_PLATE).unwrap());
    assert_eq!(text(&out.stderr), "", "a clean first-round pass says nothing on standard error");
    let req = &fake.seen()[0];
    assert!(!req.headers.contains_key("authorization"), "no key, no header");
    assert_eq!(req.body["response_format"]["type"], "json_schema");
    assert_eq!(req.body["response_format"]["json_schema"]["strict"], true);
}

#[test]
fn founding_story_refused_twice_returns_the_fallback_marked_and_exits_5() {
    let fallback = fallback_file();
    let fake = Fake::start(vec![Step::reply("{}"), Step::reply(SAID_NO)]);
    let out = ask(&fake.base_url, None, &["--fallback", &fallback, "--json"]);
    assert_eq!(out.status.code(), Some(5), "{}", text(&out.stderr));
    let v = json_out(&out);
    assert_eq!(v["outcome"], "refused");
    assert_eq!(v["pass"], false);
    assert_eq!(v["source"], "fallback");
    assert_eq!(v["value"], serde_json::from_str::<Value>(CLEAN_PLATE).unwrap());
    let codes: Vec<&str> = v["problems"].as_array().unwrap().iter().map(|p| p["code"].as_str().unwrap()).collect();
    assert_eq!(codes, ["missing", "missing", "missing", "wrong_type"]);
    assert_eq!(v["problems"][3]["message"], "/productPresent: expected boolean, got string \"no\"");
    let rounds = v["rounds"].as_array().unwrap();
    assert_eq!(rounds.len(), 2);
    assert_eq!(rounds[0]["problems"].as_array().unwrap().len(), 3);
    assert_eq!(rounds[1]["problems"][0]["code"], "wrong_type");
    for r in rounds {
        assert_eq!(r["outcome"], "refused");
        assert_eq!(r["finish_reason"], "stop");
        assert_eq!(r["total_tokens"], 120);
        assert!(r["latency_ms"].is_u64());
    }
    // The second request is the same conversation, told every problem.
    let second = fake.seen()[1].messages();
    assert_eq!(second[2], json!({"role": "assistant", "content": "{}"}));
    let reask = second[3]["content"].as_str().unwrap();
    assert!(reask.contains("/productPresent: expected a value, got nothing"), "{reask}");
    assert!(reask.contains("Reply with the JSON object only."), "{reask}");

    // The same story for a person: the plate on stdout, why on stderr.
    let fake = Fake::start(vec![Step::reply("{}"), Step::reply(SAID_NO)]);
    let out = ask(&fake.base_url, None, &["--fallback", &fallback]);
    assert_eq!(out.status.code(), Some(5));
    let value: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(value, serde_json::from_str::<Value>(CLEAN_PLATE).unwrap());
    let err = text(&out.stderr);
    assert!(err.contains("round 1: refused"), "{err}");
    assert!(err.contains("missing              /productPresent: required property is missing"), "{err}");
    assert!(err.contains("round 2: refused"), "{err}");
    assert!(err.contains("wrong_type           /productPresent: expected boolean, got string \"no\""), "{err}");
    assert!(err.contains("refused (no_answer) after 2 rounds"), "{err}");
    assert!(err.contains("returning the fallback from"), "{err}");
    assert!(err.contains("not a fresh answer"), "{err}");
}

#[test]
fn founding_story_passes_when_round_two_answers() {
    let fallback = fallback_file();
    let fake = Fake::start(vec![Step::reply("{}"), Step::reply(CLEAN_PLATE)]);
    let out = ask(&fake.base_url, None, &["--fallback", &fallback, "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v = json_out(&out);
    assert_eq!(v["outcome"], "accepted");
    assert_eq!(v["pass"], true);
    assert_eq!(v["source"], "model");
    assert_eq!(v["problems"], json!([]));
    assert_eq!(v["rounds"][0]["outcome"], "refused");
    assert_eq!(v["rounds"][1]["outcome"], "accepted");
}

#[test]
fn json_output_has_the_check_fields_plus_source_and_rounds() {
    let fake = Fake::start(vec![Step::reply(CLEAN_PLATE)]);
    let out = ask(&fake.base_url, None, &["--json"]);
    let v = json_out(&out);
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["outcome", "pass", "value", "repairs", "findings", "problems", "source", "rounds"]);
    let check = run(&["check", "--contract", PLATE, "--json", "examples/replies/plate/all_false.json"], None);
    let c: Value = serde_json::from_slice(&check.stdout).unwrap();
    for k in c.as_object().unwrap().keys() {
        assert_eq!(v[k], c[k], "{k}");
    }
    assert_eq!(text(&out.stdout).lines().count(), 1, "exactly one JSON object on one line");
}

#[test]
fn findings_exit_3_and_refusals_exit_1() {
    let fake =
        Fake::start(vec![Step::reply(r#"{"productPresent":true,"productTextPresent":false,"garbledText":false}"#)]);
    let out = ask(&fake.base_url, None, &[]);
    assert_eq!(out.status.code(), Some(3));
    assert!(
        text(&out.stderr).contains("finding  /productPresent: a product is still in frame"),
        "{}",
        text(&out.stderr)
    );

    let fake = Fake::start(vec![Step::reply("true"), Step::reply("[]")]);
    let out = ask(&fake.base_url, None, &["--json"]);
    assert_eq!(out.status.code(), Some(1));
    let v = json_out(&out);
    assert_eq!(v["value"], Value::Null);
    assert_eq!(v["source"], "model");
    let out = ask(&Fake::start(vec![Step::reply("{}"); 2]).base_url, None, &[]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(text(&out.stdout), "", "nothing to use, nothing printed");
}

#[test]
fn a_fallback_that_fails_the_contract_is_not_returned_and_exits_1() {
    let bad = scratch("bad_plate.json", SAID_NO.as_bytes()).display().to_string();
    let fake = Fake::start(vec![Step::reply("{}"), Step::reply("{}")]);
    let out = ask(&fake.base_url, None, &["--fallback", &bad]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(text(&out.stdout), "");
    let err = text(&out.stderr);
    assert!(err.contains("fallback_refused"), "{err}");
    assert!(err.contains("fails the contract too"), "{err}");
    let fake = Fake::start(vec![Step::reply("{}"), Step::reply("{}")]);
    let v = json_out(&ask(&fake.base_url, None, &["--fallback", &bad, "--json"]));
    assert_eq!(v["problems"].as_array().unwrap().last().unwrap()["code"], "fallback_refused");
    assert_eq!(v["value"], Value::Null);
}

#[test]
fn upstream_failures_are_refusals_with_their_own_codes() {
    let out = ask(&refused_url(), None, &["--json", "--rounds", "1"]);
    assert_eq!(out.status.code(), Some(1));
    let v = json_out(&out);
    assert_eq!(v["problems"][0]["code"], "upstream_unreachable");
    assert_eq!(v["problems"][0]["class"], "no_answer");

    let fake = Fake::start(vec![Step::completion(
        json!({"role": "assistant", "content": CLEAN_PLATE}),
        "length",
        fake_upstream::usage(10, 16),
    )]);
    let v = json_out(&ask(&fake.base_url, None, &["--json", "--rounds", "1"]));
    assert_eq!(v["problems"][0]["code"], "cut_off");
    assert_eq!(v["rounds"][0]["finish_reason"], "length");

    let fake = Fake::start(vec![Step::reply(CLEAN_PLATE).delay(std::time::Duration::from_secs(3))]);
    let start = std::time::Instant::now();
    let v = json_out(&ask(&fake.base_url, None, &["--json", "--deadline", "200ms"]));
    assert!(start.elapsed() < std::time::Duration::from_secs(2));
    assert_eq!(v["problems"][0]["code"], "deadline");

    let fake = Fake::start(vec![Step::body(429, "{}").header("retry-after", "0"), Step::reply(CLEAN_PLATE)]);
    let v = json_out(&ask(&fake.base_url, None, &["--json"]));
    assert_eq!(v["pass"], true);
    assert_eq!(v["rounds"][0]["http_status"], 429);
    assert_eq!(v["rounds"][0]["problems"][0]["code"], "rate_limited");

    let step = Step::completion(json!({"role": "assistant", "content": "{}"}), "stop", fake_upstream::usage(500, 100));
    let fake = Fake::start(vec![step.clone(), step]);
    let v = json_out(&ask(&fake.base_url, None, &["--json", "--max-total-tokens", "1000"]));
    assert_eq!(v["problems"].as_array().unwrap().last().unwrap()["code"], "budget_spent");
    assert_eq!(fake.count(), 1);
}

#[test]
fn modes_images_and_prompt_files_reach_the_request() {
    let png = scratch("plate.png", b"\x89PNG\r\n\x1a\nfake").display().to_string();
    let prompt = scratch("prompt.txt", b"Is the plate clean?").display().to_string();
    let fake = Fake::start(vec![Step::reply(CLEAN_PLATE)]);
    let out = ask(
        &fake.base_url,
        None,
        &["--mode", "json", "--prompt-file", &prompt, "--image", &png, "--image", "https://example.invalid/p.webp"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let req = &fake.seen()[0];
    assert_eq!(req.body["response_format"], json!({"type": "json_object"}));
    let content = &req.messages()[1]["content"];
    assert_eq!(content[0], json!({"type": "text", "text": "Is the plate clean?"}));
    assert_eq!(content[1]["image_url"]["url"], "data:image/png;base64,iVBORw0KGgpmYWtl");
    assert_eq!(content[2]["image_url"]["url"], "https://example.invalid/p.webp");
    assert!(req.messages()[0]["content"].as_str().unwrap().contains("\"productPresent\" (required): true or false"));

    let fake = Fake::start(vec![Step::reply(CLEAN_PLATE)]);
    let out = ask(
        &fake.base_url,
        None,
        &["--mode", "plain", "--header", "HTTP-Referer: https://example.invalid", "--temperature", "0"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let req = &fake.seen()[0];
    assert!(req.body.get("response_format").is_none());
    assert_eq!(req.headers["http-referer"], "https://example.invalid");
    assert_eq!(req.body["temperature"], 0.0);
}

#[test]
fn a_contract_openai_cannot_express_exits_2_in_schema_mode_and_suggests_json_mode() {
    let contract = scratch(
        "tags.json",
        br#"{"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true}},
             "required": ["tags"], "additionalProperties": false}"#,
    )
    .display()
    .to_string();
    let fake = Fake::start(vec![Step::reply(r#"{"tags": ["a"]}"#)]);
    let args = ["ask", "--contract", &contract, "--model", "m", "--base-url", &fake.base_url, "--prompt", "tags?"];
    let out = run(&args, None);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("uniqueItems"), "{err}");
    assert!(err.contains("--mode json"), "{err}");
    assert_eq!(fake.count(), 0, "nothing is sent");
    let mut json_mode = args.to_vec();
    json_mode.extend_from_slice(&["--mode", "json"]);
    assert_eq!(run(&json_mode, None).status.code(), Some(0));
}

#[test]
fn bad_invocations_exit_2_before_anything_is_sent() {
    let fake = Fake::start(vec![]);
    let url = fake.base_url.clone();
    let not_json = scratch("not_json.json", b"{'productPresent': false}").display().to_string();
    let dup = scratch("dup.json", br#"{"productPresent": false, "productPresent": true}"#).display().to_string();
    let cases: Vec<Vec<&str>> = vec![
        vec!["--prompt", "a", "--prompt-file", "b"],
        vec!["--prompt-file", "/nonexistent/prompt.txt"],
        vec!["--image", "notes.txt"],
        vec!["--image", "/nonexistent/plate.png"],
        vec!["--fallback", "/nonexistent/last.json"],
        vec!["--fallback", &not_json],
        vec!["--fallback", &dup],
        vec!["--rounds", "0"],
        vec!["--max-total-tokens", "0"],
        vec!["--deadline", "soon"],
        vec!["--header", "no-colon-here"],
        vec!["--mode", "xml"],
    ];
    for extra in cases {
        let out = ask(&url, None, &extra);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {}", text(&out.stderr));
    }
    assert_eq!(run(&["ask", "--contract", PLATE, "--model", "m"], None).status.code(), Some(2), "no prompt");
    // OpenAI's own URL without a key: say which variable, send nothing.
    let out = run(&["ask", "--contract", PLATE, "--model", "m", "--prompt", "p", "--api-key-env", KEY_VAR], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains(&format!("{KEY_VAR} is not set")), "{}", text(&out.stderr));
    assert_eq!(fake.count(), 0);
}

#[test]
fn a_canary_key_is_sent_and_never_printed() {
    const CANARY: &str = "sk-canary-91d2e7c4b8a3f605-NEVER-PRINT";
    let echo = format!(
        r#"{{"error": {{"message": "Incorrect API key provided: {CANARY} (Authorization: Bearer {CANARY})"}}}}"#
    );
    let steps = || {
        vec![
            Step::body(401, &echo),
            Step::body(200, &echo),
            Step::body(500, &echo),
            Step::completion(json!({"role": "assistant", "content": null, "refusal": CANARY}), "stop", Value::Null),
        ]
    };
    for json_flag in [true, false] {
        let fake = Fake::start(steps());
        for _ in 0..4 {
            let mut extra = vec!["--rounds", "1"];
            if json_flag {
                extra.push("--json");
            }
            let out = ask(&fake.base_url, Some(CANARY), &extra);
            assert_eq!(out.status.code(), Some(1));
            for (name, stream) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
                let s = text(stream);
                assert!(!s.contains(CANARY) && !s.contains("91d2e7c4b8a3f605"), "{name} leaks the key:\n{s}");
            }
        }
        for s in fake.seen() {
            assert_eq!(s.headers["authorization"], format!("Bearer {CANARY}"));
        }
    }
    // A key that cannot be sent is an error that does not show it.
    let out = ask("http://127.0.0.1:9/v1", Some("sk-canary-91d2e7c4b8a3f605\u{1}"), &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(!text(&out.stderr).contains("91d2e7c4b8a3f605"), "{}", text(&out.stderr));
}

// ---------------------------------------------------------------- --stream

/// The plate contract refusing replies over `max_bytes` (the streaming check
/// refuses as soon as more than that has come), in a scratch file.
fn small_plate_file(max_bytes: usize) -> String {
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(root().join(PLATE)).unwrap()).unwrap();
    doc["x-vouch"] = json!({"limits": {"max_bytes": max_bytes}});
    scratch(&format!("small_plate_{max_bytes}.json"), doc.to_string().as_bytes()).display().to_string()
}

fn ask_stream(contract: &str, base_url: &str, extra: &[&str]) -> Output {
    let mut args = vec!["ask", "--stream", "--contract", contract, "--model", "fake-model", "--base-url", base_url];
    args.extend_from_slice(&["--api-key-env", KEY_VAR, "--connect-timeout", "500ms", "--timeout", "3s"]);
    args.extend_from_slice(&["--max-retry-wait", "300ms", "--prompt", "Read back the plate in the photo."]);
    args.extend_from_slice(extra);
    run(&args, None)
}

fn slow_refused_stream() -> (SseStep, String) {
    let first = format!("{{\"productPresent\":\"no\",{}", " ".repeat(100));
    let mut events = vec![sse_delta(&first)];
    events.extend((0..40).map(|_| sse_delta(" ")));
    events.push(SSE_DONE.to_owned());
    (SseStep::events(events).slow_after(1, Duration::from_millis(50)), first)
}

#[test]
fn ask_stream_drops_a_refused_stream_and_json_rounds_say_where_it_was_decided() {
    let (slow, first) = slow_refused_stream();
    let fake = SseFake::start(vec![slow, SseStep::reply(CLEAN_PLATE, 4)]);
    let started = std::time::Instant::now();
    let out = ask_stream(&small_plate_file(80), &fake.base_url, &["--json"]);
    assert!(started.elapsed() < Duration::from_millis(1800), "{:?}", started.elapsed());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v = json_out(&out);
    assert_eq!(v["outcome"], "accepted");
    assert_eq!(v["value"], serde_json::from_str::<Value>(CLEAN_PLATE).unwrap());
    let r1 = &v["rounds"][0];
    assert_eq!(r1["outcome"], "refused");
    assert_eq!(r1["stream"]["dropped"], true);
    assert_eq!(r1["stream"]["bytes_received"], first.len());
    assert_eq!(r1["stream"]["deltas_received"], 1);
    assert!(r1["stream"]["decided_at_bytes"].as_u64().unwrap() <= 81);
    assert_eq!(r1["stream"]["decided_at_tokens"], 1);
    assert_eq!(r1["stream"]["reply_tokens"], Value::Null);
    let r2 = &v["rounds"][1];
    assert_eq!(r2["stream"]["dropped"], false);
    assert_eq!(r2["stream"]["reply_tokens"], 4);
    assert_eq!(r2["total_tokens"], 104);
    let conn = fake.wait_done(0, Duration::from_secs(3));
    assert!(!conn.finished && conn.closed_by_client.is_some(), "the server saw the drop: {conn:?}");
    assert_eq!(fake.seen()[1].body["stream"], true);
    assert_eq!(fake.seen()[1].messages()[2], json!({"role": "assistant", "content": first}));
}

#[test]
fn ask_stream_says_on_stderr_where_a_round_was_dropped() {
    let (slow, _) = slow_refused_stream();
    let fake = SseFake::start(vec![slow, SseStep::reply(CLEAN_PLATE, 2)]);
    let out = ask_stream(&small_plate_file(80), &fake.base_url, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(err.contains("round 1: refused"), "{err}");
    assert!(err.contains("(1 deltas), request dropped"), "{err}");
    assert!(err.contains("round 2: accepted"), "{err}");
    assert!(err.contains("streamed 71 bytes (2 tokens)"), "{err}");
}

#[test]
fn ask_stream_a_malformed_stream_is_refused_with_its_code_and_exit_1() {
    for (events, code) in [
        (vec![sse_delta(CLEAN_PLATE)], "stream_incomplete"),
        (vec!["data: {not json}\n\n".to_owned()], "stream_malformed"),
        (vec![sse_data(&json!({"error": {"message": "boom"}}))], "stream_error"),
    ] {
        let fake = SseFake::start(vec![SseStep::events(events)]);
        let out = ask_stream(PLATE, &fake.base_url, &["--json", "--rounds", "1"]);
        assert_eq!(out.status.code(), Some(1), "{code}: {}", text(&out.stderr));
        let v = json_out(&out);
        assert_eq!(v["outcome"], "refused");
        assert_eq!(v["value"], Value::Null);
        assert_eq!(v["problems"][0]["code"], code);
        assert_eq!(v["problems"][0]["class"], "no_answer");
    }
}
