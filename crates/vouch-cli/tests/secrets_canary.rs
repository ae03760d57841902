//! The canary: a fake upstream on 127.0.0.1 throws the API key back in
//! every field of a completion, of an error and of the headers, and `vouch
//! ask` runs against it in every mode (`--mode schema|json|plain`, human
//! and `--json`, with and without `--fallback`, one round refused and the
//! next accepted, or every round refused). The key's bytes appear 0 times
//! in everything vouch writes (stdout and stderr), in any JSON-escaped
//! form either.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod common;
#[path = "../../vouch-llm/tests/fake_upstream/mod.rs"]
mod fake_upstream;

use std::process::{Command, Output, Stdio};

use base64::Engine as _;
use common::{root, scratch, text};
use fake_upstream::{usage, Fake, Step, CLEAN_PLATE};
use serde_json::{json, Value};

const PLATE: &str = "examples/contracts/plate.json";
const KEY_VAR: &str = "VOUCH_TEST_CANARY_KEY";

/// The keys: one with characters JSON escapes (`/`, `"`, `\`), one plain
/// random key with no `sk-` and nothing a pattern would catch. Each has a
/// part (the second element) that must appear nowhere either.
const KEYS: [(&str, &str); 2] =
    [(r#"canary/"key\0b7e5d9f2a4c61"#, "0b7e5d9f2a4c61"), ("Xq7Zr2Lm9Wc4Vb8Nt1Kp6Hs3Jd5Fg0Ty", "Lm9Wc4Vb8Nt1Kp")];

/// One way of throwing the key back.
struct Echo {
    what: &'static str,
    step: Step,
    /// A completion (or a 2xx body) holding the key: refused `secret_in_reply`.
    secret_in_reply: bool,
    /// Repeatable, so a second round can come.
    second_round: bool,
}

fn echoes(key: &str) -> Vec<Echo> {
    let j = serde_json::to_string(key).unwrap(); // the key as a JSON string, quotes included
    let j_slash = j.replace('/', "\\/");
    let unicode: String = key.chars().map(|c| format!("\\u{:04x}", u32::from(c))).collect();
    let plate_with =
        |extra: &str| format!(r#"{{"productPresent":false,"productTextPresent":false,"garbledText":false{extra}}}"#);
    let message = |m: Value, finish: &str| Step::completion(m, finish, usage(100, 20));
    let content = |c: &str| message(json!({"role": "assistant", "content": c}), "stop");
    let error = format!(
        r#"{{"error": {{"message": "Incorrect API key provided: {}. You sent Authorization: Bearer {}", "key": {j}}}}}"#,
        &j[1..j.len() - 1],
        &j[1..j.len() - 1]
    );
    let b64 = base64::engine::general_purpose::STANDARD.encode(format!("Bearer {key}"));
    let basic = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("user:{key}"));
    let pct: String = key.bytes().map(|b| format!("%{b:02X}")).collect();
    let e = |what, step, secret_in_reply, second_round| Echo { what, step, secret_in_reply, second_round };
    vec![
        e("content: a value", content(&plate_with(&format!(r#","note":{j}"#))), true, true),
        e("content: a value that fails the contract (got, message)", content(&format!(r#"{{"productPresent":{j}}}"#)), true, true),
        e("content: a property name (a path)", content(&plate_with(&format!(",{j}:true"))), true, true),
        e("content: inside a string that makes it not_json", content(&format!(r#"{{"productPresent": {j}, oops"#)), true, true),
        e("content: JSON-escaped inside the content (\\/)", content(&format!(r#"{{"productPresent":{j_slash}}}"#)), true, true),
        e("content: \\u-escaped inside the content", content(&format!(r#"{{"productPresent":"{unicode}"}}"#)), true, true),
        e("content: as the whole reply", content(key), true, true),
        e("content: cut off", message(json!({"role": "assistant", "content": plate_with(&format!(r#","k":{j}"#))}), "length"), true, true),
        e("content: base64 of Bearer KEY", content(&plate_with(&format!(r#","auth":"{b64}""#))), true, true),
        e("finish_reason", message(json!({"role": "assistant", "content": CLEAN_PLATE}), key), true, true),
        e("refusal", message(json!({"role": "assistant", "content": null, "refusal": key}), "stop"), true, true),
        e("reasoning", message(json!({"role": "assistant", "content": null, "reasoning_content": key}), "length"), true, true),
        e(
            "tool call name",
            message(
                json!({"role": "assistant", "content": null, "tool_calls": [{"id": "c", "type": "function", "function": {"name": key, "arguments": "{}"}}]}),
                "tool_calls",
            ),
            true,
            true,
        ),
        e(
            "a completion's id, model and usage key",
            Step::body(
                200,
                &json!({"id": key, "model": key, "choices": [{"index": 0, "message": {"role": "assistant", "content": CLEAN_PLATE}, "finish_reason": "stop"}], "usage": {key: 1, "total_tokens": 5}}).to_string(),
            ),
            true,
            true,
        ),
        e("a 2xx body that is not JSON", Step::body(200, &format!("<html>Bearer {key} {key}</html>")), true, true),
        e("a 2xx error body", Step::body(200, &error), true, true),
        e("a 2xx body, the key \\u-escaped", Step::body(200, &format!(r#"{{"detail": "{unicode}"}}"#)), true, true),
        e("HTTP 401 error body", Step::body(401, &error), false, false),
        e("HTTP 400, base64 and percent-encoded", Step::body(400, &format!(r#"{{"error": {{"message": "Basic {basic} / {pct} / {b64}"}}}}"#)), false, false),
        e("HTTP 500 error body", Step::body(500, &error), false, true),
        e("HTTP 503 text body", Step::body(503, &format!("upstream said: Authorization: Bearer {key}\n{key}")), false, true),
        e("HTTP 429 error body and headers", Step::body(429, &error).header("retry-after", "0").header("x-echo", key), false, true),
        e("response headers of an accepted reply", content(CLEAN_PLATE).header("x-echo-authorization", &format!("Bearer {key}")).header("x-key", key), false, true),
        e("a redirect to a URL holding the key", Step::body(302, "").header("location", &format!("/v1/{key}/chat/completions")), false, false),
        e("a redirect to a URL holding the key, percent-encoded", Step::body(307, "").header("location", &format!("/v1/{pct}")), false, false),
    ]
}

fn run(args: &[&str], key: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_vouch"))
        .args(args)
        .current_dir(root())
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env(KEY_VAR, key)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// Every string (and property name) in a JSON value.
fn strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        Value::Object(o) => o.iter().for_each(|(k, x)| {
            out.push(k.clone());
            strings(x, out);
        }),
        _ => {}
    }
}

/// The key, and every JSON-escaped spelling of it, appear 0 times.
fn assert_no_key(written: &[u8], key: &str, part: &str, context: &str) {
    let s = text(written);
    let json = serde_json::to_string(key).unwrap();
    let json = &json[1..json.len() - 1];
    let unicode: String = key.chars().map(|c| format!("\\u{:04x}", u32::from(c))).collect();
    for form in [key, json, &json.replace('/', "\\/"), &unicode, &unicode.to_uppercase().replace("\\U", "\\u"), part] {
        assert!(!s.contains(form), "{context}: the key ({form}) is in what vouch wrote:\n{s}");
    }
    let scrubber = vouch_llm::Scrubber::new([key]);
    assert!(!scrubber.holds_secret(written), "{context}: an encoded form of the key is in what vouch wrote:\n{s}");
}

/// `(mode, --json, --fallback)`: every combination.
fn modes() -> Vec<(&'static str, bool, bool)> {
    let mut m = Vec::new();
    for mode in ["schema", "json", "plain"] {
        for json_out in [false, true] {
            for fallback in [false, true] {
                m.push((mode, json_out, fallback));
            }
        }
    }
    m
}

/// Run every echo in every mode with this key: returns the number of runs.
fn canary(key: &str, part: &str, mode: &str) -> usize {
    let fallback = scratch(&format!("canary_last_plate_{mode}.json"), CLEAN_PLATE.as_bytes()).display().to_string();
    let mut runs = 0;
    for (_, json_out, with_fallback) in modes().into_iter().filter(|m| m.0 == mode) {
        for echo in echoes(key) {
            // Round 1 echoes; round 2 echoes again (every round refused), or answers cleanly.
            let mut scripts = vec![vec![echo.step.clone(), echo.step.clone()]];
            // (With --fallback, a clean second round is the same run as without: the fallback is unused.)
            if echo.second_round && !with_fallback {
                scripts.push(vec![echo.step.clone(), Step::reply(CLEAN_PLATE)]);
            }
            for script in scripts {
                let fake = Fake::start(script);
                let mut args = vec!["ask", "--contract", PLATE, "--model", "m", "--base-url", &fake.base_url];
                args.extend_from_slice(&["--api-key-env", KEY_VAR, "--mode", mode, "--prompt", "plate?"]);
                args.extend_from_slice(&["--max-retry-wait", "10ms", "--timeout", "3s", "--rounds", "2"]);
                if json_out {
                    args.push("--json");
                }
                if with_fallback {
                    args.extend_from_slice(&["--fallback", &fallback]);
                }
                let context = format!("{} (--mode {mode}, json {json_out}, fallback {with_fallback})", echo.what);
                let out = run(&args, key);
                runs += 1;
                assert!(matches!(out.status.code(), Some(0 | 1 | 3 | 5)), "{context}: {out:?}");
                assert_no_key(&out.stdout, key, part, &format!("{context}, stdout"));
                assert_no_key(&out.stderr, key, part, &format!("{context}, stderr"));
                // The key did reach the upstream, as the Authorization header only.
                let seen = fake.seen();
                assert!(!seen.is_empty(), "{context}");
                for s in &seen {
                    assert_eq!(s.headers["authorization"], format!("Bearer {key}"), "{context}");
                }
                // A reply holding the key is never sent back upstream.
                if let Some(second) = seen.get(1) {
                    let sent = serde_json::to_string(&second.messages()).unwrap();
                    assert!(!sent.contains(part), "{context}: the echo went back upstream: {sent}");
                }
                if json_out {
                    let v: Value = serde_json::from_slice(&out.stdout)
                        .unwrap_or_else(|e| panic!("{context}: --json is still JSON: {e}\n{}", text(&out.stdout)));
                    let mut all = Vec::new();
                    strings(&v, &mut all);
                    for s in &all {
                        assert!(
                            !s.contains(key) && !s.contains(part),
                            "{context}: a decoded string holds the key: {s}"
                        );
                    }
                    if echo.secret_in_reply {
                        let first = &v["rounds"][0]["problems"][0];
                        assert_eq!(first["code"], "secret_in_reply", "{context}: {v}");
                        assert_eq!(first["class"], "no_answer", "{context}");
                    }
                } else if echo.secret_in_reply {
                    assert!(text(&out.stderr).contains("secret_in_reply"), "{context}: {}", text(&out.stderr));
                }
            }
        }
    }
    runs
}

fn every_key(mode: &str) {
    let mut runs = 0;
    for (key, part) in KEYS {
        runs += canary(key, part, mode);
    }
    let fields = echoes(KEYS[0].0).len();
    assert!(fields >= 25 && runs >= fields * 4 * 2, "{runs} runs of {fields} echoes");
    eprintln!("--mode {mode}: {fields} echoes, {runs} runs of vouch ask");
}

#[test]
fn the_key_is_never_written_in_schema_mode() {
    every_key("schema");
}

#[test]
fn the_key_is_never_written_in_json_mode() {
    every_key("json");
}

#[test]
fn the_key_is_never_written_in_plain_mode() {
    every_key("plain");
}

#[test]
fn an_accepted_round_after_an_echo_prints_the_clean_value() {
    let (key, _) = KEYS[0];
    let fake = Fake::start(vec![
        Step::reply(&format!(r#"{{"productPresent":{}}}"#, serde_json::to_string(key).unwrap())),
        Step::reply(CLEAN_PLATE),
    ]);
    let args = [
        "ask",
        "--contract",
        PLATE,
        "--model",
        "m",
        "--base-url",
        &fake.base_url,
        "--api-key-env",
        KEY_VAR,
        "--prompt",
        "p",
    ];
    let out = run(&args, key);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v, serde_json::from_str::<Value>(CLEAN_PLATE).unwrap());
    let err = text(&out.stderr);
    assert!(err.contains("round 1: refused"), "{err}");
    assert!(
        err.contains("secret_in_reply      (root): the reply holds the API key (in /choices/0/message/content)"),
        "{err}"
    );
}
