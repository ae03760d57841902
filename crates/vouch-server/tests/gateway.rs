//! The gateway against a scripted fake upstream on loopback: each scenario
//! asserts the status, the body's code and what the upstream saw. Never a
//! 200 carrying content the contract did not accept.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod common;
#[path = "../../vouch-llm/tests/fake_upstream/mod.rs"]
mod fake_upstream;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{config, start, start_keyed, Running, KEY, TOKEN};
use fake_upstream::{refused_url, reply_events, sse_data, Fake, SseFake, SseStep, Step, CLEAN_PLATE, SAID_NO};
use serde_json::{json, Value};

fn plate_request() -> Value {
    json!({
        "model": "fake-model",
        "messages": [{"role": "user", "content": "Read back the plate."}],
        "response_format": {"type": "json_schema", "json_schema": {"name": "plate", "schema": {}}},
    })
}

fn client() -> reqwest::Client {
    reqwest::Client::builder().no_proxy().build().unwrap()
}

async fn post(r: &Running, body: &Value) -> (u16, reqwest::header::HeaderMap, String) {
    post_with(r, body, &[]).await
}

async fn post_with(r: &Running, body: &Value, headers: &[(&str, &str)]) -> (u16, reqwest::header::HeaderMap, String) {
    let mut req = client().post(format!("{}/v1/chat/completions", r.url)).json(body);
    for (n, v) in headers {
        req = req.header(*n, *v);
    }
    let resp = req.send().await.unwrap();
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    (status, headers, resp.text().await.unwrap())
}

fn json_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

/// The error object of a refusal: its code, and the codes of its problems.
fn refused_codes(status: u16, text: &str) -> (String, Vec<String>) {
    assert_eq!(status, 422, "{text}");
    let v = json_of(text);
    assert_eq!(v["error"]["type"], "vouch_refused", "{text}");
    let problems =
        v["error"]["problems"].as_array().unwrap().iter().map(|p| p["code"].as_str().unwrap().to_owned()).collect();
    (v["error"]["code"].as_str().unwrap().to_owned(), problems)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_accepted_reply_comes_back_as_a_completion_with_the_vouched_json_and_a_vouch_object() {
    let fake = Fake::start(vec![Step::reply(CLEAN_PLATE)]);
    let r = start(config(&fake.base_url), vec![]);
    let (status, headers, text) = post(&r, &plate_request()).await;
    assert_eq!(status, 200, "{text}");
    let v = json_of(&text);
    assert_eq!(v["object"], "chat.completion");
    assert_eq!(json_of(v["choices"][0]["message"]["content"].as_str().unwrap()), json_of(CLEAN_PLATE));
    assert_eq!(v["choices"][0]["finish_reason"], "stop");
    assert_eq!(v["vouch"]["outcome"], "accepted");
    assert_eq!(v["vouch"]["source"], "model");
    assert_eq!(v["vouch"]["contract"], "plate");
    assert_eq!(v["vouch"]["rounds"].as_array().unwrap().len(), 1);
    assert_eq!(v["usage"]["total_tokens"], 120);
    assert_eq!(headers["x-vouch-outcome"], "accepted");
    assert!(headers.contains_key("x-request-id"));
    // What the upstream saw: the contract's own strict export, its
    // instructions, the server's key, the client's model and messages.
    let seen = &fake.seen()[0];
    assert_eq!(seen.body["response_format"]["type"], "json_schema");
    assert_eq!(seen.body["response_format"]["json_schema"]["name"], "plate");
    assert_eq!(seen.body["response_format"]["json_schema"]["strict"], true);
    assert!(seen.body["response_format"]["json_schema"]["schema"]["properties"]["productPresent"].is_object());
    assert_eq!(seen.body["model"], "fake-model");
    assert_eq!(seen.messages()[0]["role"], "system");
    assert_eq!(seen.messages()[1]["content"], "Read back the plate.");
    assert_eq!(seen.headers["authorization"], format!("Bearer {KEY}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_replies_across_rounds_end_in_a_422_that_lists_each_round() {
    let fake =
        Fake::start(vec![Step::reply("{}"), Step::reply(SAID_NO), Step::reply("Sure! {\"productPresent\": true}")]);
    let mut c = config(&fake.base_url);
    c.defaults.rounds = Some(3);
    let r = start(c, vec![]);
    let (status, headers, text) = post(&r, &plate_request()).await;
    let (code, problems) = refused_codes(status, &text);
    assert_eq!(code, "missing");
    assert!(problems.contains(&"wrong_type".to_owned()), "{problems:?}");
    assert!(problems.contains(&"not_json".to_owned()), "{problems:?}");
    let v = json_of(&text);
    let rounds = v["error"]["rounds"].as_array().unwrap();
    assert_eq!(rounds.len(), 3);
    assert!(rounds.iter().all(|r| r["outcome"] == "refused"));
    assert_eq!(v["error"]["class"], "no_answer");
    assert_eq!(headers["x-vouch-outcome"], "refused");
    assert_eq!(fake.count(), 3);
    // Each re-ask told the model why.
    let second = fake.seen()[1].messages();
    assert!(second.last().unwrap()["content"].as_str().unwrap().contains("productPresent"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn alternating_replies_return_only_the_validated_one() {
    let fake = Fake::start(vec![Step::reply(SAID_NO), Step::reply(CLEAN_PLATE), Step::reply(SAID_NO)]);
    let r = start(config(&fake.base_url), vec![]);
    let (status, _, text) = post(&r, &plate_request()).await;
    assert_eq!(status, 200, "{text}");
    let v = json_of(&text);
    assert_eq!(json_of(v["choices"][0]["message"]["content"].as_str().unwrap()), json_of(CLEAN_PLATE));
    assert_eq!(v["vouch"]["rounds"].as_array().unwrap().len(), 2);
    assert_eq!(fake.count(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fallback_is_returned_marked_when_every_round_is_refused() {
    let fake = Fake::start(vec![Step::reply("{}"), Step::reply("{}")]);
    let r = start(config(&fake.base_url), vec![]);
    let mut body = plate_request();
    body["vouch"] = json!({"fallback": {"productPresent": true, "productTextPresent": false, "garbledText": false}});
    let (status, headers, text) = post(&r, &body).await;
    assert_eq!(status, 200, "{text}");
    let v = json_of(&text);
    assert_eq!(v["vouch"]["source"], "fallback");
    assert_eq!(v["vouch"]["outcome"], "refused");
    assert_eq!(headers["x-vouch-outcome"], "fallback");
    assert!(!fake.seen()[0].body.as_object().unwrap().contains_key("vouch"), "the vouch field is not sent upstream");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upstream_failures_are_422s_with_their_codes_and_retried_only_when_they_can_pass() {
    // Connection refused.
    let r = start(config(&refused_url()), vec![]);
    let (status, _, text) = post(&r, &plate_request()).await;
    assert_eq!(refused_codes(status, &text).0, "upstream_unreachable");

    // 500/502/503/529 are retried within the rounds; 400/401/422 never.
    for s in [500u16, 502, 503, 529] {
        let fake = Fake::start(vec![Step::body(s, "{\"error\":{\"message\":\"busy\"}}"), Step::reply(CLEAN_PLATE)]);
        let r = start(config(&fake.base_url), vec![]);
        let (status, _, text) = post(&r, &plate_request()).await;
        assert_eq!(status, 200, "HTTP {s} is retried: {text}");
        assert_eq!(fake.count(), 2);
    }
    for s in [400u16, 401, 422] {
        let fake = Fake::start(vec![Step::body(s, "{\"error\":{\"message\":\"no\"}}"), Step::reply(CLEAN_PLATE)]);
        let r = start(config(&fake.base_url), vec![]);
        let (status, _, text) = post(&r, &plate_request()).await;
        assert_eq!(refused_codes(status, &text).0, "upstream_status", "HTTP {s}");
        assert_eq!(fake.count(), 1, "HTTP {s} is never retried");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rate_limits_wait_as_told_within_the_cap_and_fail_fast_past_it() {
    for (retry_after, asked) in [(Some("0"), 2usize), (None, 2), (Some("3600"), 1)] {
        let mut step = Step::body(429, "{}");
        if let Some(a) = retry_after {
            step = step.header("retry-after", a);
        }
        let fake = Fake::start(vec![step, Step::reply(CLEAN_PLATE)]);
        let r = start(config(&fake.base_url), vec![]);
        let started = Instant::now();
        let (status, _, text) = post(&r, &plate_request()).await;
        assert_eq!(fake.count(), asked, "Retry-After {retry_after:?}");
        if asked == 1 {
            assert_eq!(refused_codes(status, &text).0, "rate_limited");
            assert!(started.elapsed() < Duration::from_millis(300), "failed fast: {:?}", started.elapsed());
        } else {
            assert_eq!(status, 200, "{text}");
        }
    }
    // An HTTP date in the past: asked again at once.
    let fake = Fake::start(vec![
        Step::body(429, "{}").header("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT"),
        Step::reply(CLEAN_PLATE),
    ]);
    let r = start(config(&fake.base_url), vec![]);
    let (status, _, text) = post(&r, &plate_request()).await;
    assert_eq!(status, 200, "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bodies_that_are_not_an_answer_are_refused_never_passed() {
    let cases: Vec<(Step, &str)> = vec![
        (Step::body(200, "<html>hello</html>").header("content-type", "text/html"), "not_a_completion"),
        (Step::body(200, "{\"error\": {\"message\": \"overloaded\"}}"), "not_a_completion"),
        (
            Step::body(
                200,
                r#"{"choices":[{"index":0,"message":{"role":"assistant","content":"{}","content":"{\"productPresent\":false,\"productTextPresent\":false,\"garbledText\":false}"},"finish_reason":"stop"}]}"#,
            ),
            "not_a_completion",
        ),
        // A second choice (n = 1 was asked): which one is the reply? Read two ways, so neither.
        (
            Step::body(
                200,
                &json!({"choices": [
                    {"index": 0, "message": {"role": "assistant", "content": CLEAN_PLATE}, "finish_reason": "stop"},
                    {"index": 1, "message": {"role": "assistant", "content": "{\"productPresent\": \"no\"}"}, "finish_reason": "stop"},
                ]})
                .to_string(),
            ),
            "not_a_completion",
        ),
        (
            Step::body(
                200,
                &json!({"choices": [{"index": 1, "message": {"role": "assistant", "content": CLEAN_PLATE}, "finish_reason": "stop"}]})
                    .to_string(),
            ),
            "not_a_completion",
        ),
        (Step::completion(json!({"role": "assistant", "content": CLEAN_PLATE}), "length", Value::Null), "cut_off"),
        (Step::completion(json!({"role": "assistant", "content": ""}), "stop", Value::Null), "empty_content"),
        (
            Step::completion(
                json!({"role": "assistant", "content": null, "reasoning_content": "thinking…"}),
                "length",
                Value::Null,
            ),
            "reasoning_exhausted",
        ),
        (
            Step::completion(json!({"role": "assistant", "content": null, "refusal": "I can't."}), "stop", Value::Null),
            "model_refused",
        ),
        (
            Step::completion(json!({"role": "assistant", "content": null}), "content_filter", Value::Null),
            "content_filtered",
        ),
        (
            Step::completion(
                json!({"role": "assistant", "content": null, "tool_calls": [{"id": "1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}),
                "tool_calls",
                Value::Null,
            ),
            "tool_calls_instead",
        ),
    ];
    for (step, code) in cases {
        let fake = Fake::start(vec![step.clone(), step]);
        let mut c = config(&fake.base_url);
        c.defaults.rounds = Some(1);
        let r = start(c, vec![]);
        let (status, _, text) = post(&r, &plate_request()).await;
        let (got, problems) = refused_codes(status, &text);
        assert!(got == code || problems.contains(&code.to_owned()), "{code}: {text}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_error_body_echoing_the_key_is_scrubbed() {
    let echo = format!("{{\"error\": {{\"message\": \"bad key {KEY}\"}}}}");
    let fake = Fake::start(vec![
        Step::body(401, &echo),
        Step::completion(json!({"role": "assistant", "content": format!("{{\"k\": \"{KEY}\"}}")}), "stop", Value::Null),
    ]);
    let mut c = config(&fake.base_url);
    c.defaults.rounds = Some(2);
    let r = start(c, vec![]);
    let (status, headers, text) = post(&r, &plate_request()).await;
    assert_eq!(refused_codes(status, &text).0, "upstream_status");
    assert!(!text.contains(KEY) && !text.contains("5c1f0a9e77d24b31"), "{text}");
    assert!(!format!("{headers:?}").contains(KEY));
    // A reply holding the key is refused, and never shown.
    let fake = Fake::start(vec![Step::reply(&format!("{{\"productPresent\": \"{KEY}\"}}"))]);
    let mut c = config(&fake.base_url);
    c.defaults.rounds = Some(1);
    let r = start(c, vec![]);
    let (status, _, text) = post(&r, &plate_request()).await;
    assert_eq!(refused_codes(status, &text).0, "secret_in_reply");
    assert!(!text.contains(KEY), "{text}");
    let metrics = client().get(format!("{}/metrics", r.url)).send().await.unwrap().text().await.unwrap();
    assert!(!metrics.contains(KEY));
    assert!(
        metrics.contains("vouch_verdicts_total{contract=\"plate\",outcome=\"refused\",code=\"secret_in_reply\"} 1"),
        "{metrics}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timeouts_end_in_upstream_timeout() {
    // Accepted but never answers (past the first-byte timeout).
    let fake = Fake::start(vec![Step::reply(CLEAN_PLATE).delay(Duration::from_secs(3))]);
    let mut c = config(&fake.base_url);
    c.defaults.rounds = Some(1);
    let r = start(c, vec![]);
    let started = Instant::now();
    let (status, _, text) = post(&r, &plate_request()).await;
    assert_eq!(refused_codes(status, &text).0, "upstream_timeout");
    assert!(started.elapsed() < Duration::from_millis(2_000), "{:?}", started.elapsed());
    // Headers, then a stall past the idle timeout.
    let url = fake_upstream::raw_server(1, fake_upstream::Raw::SlowBody(Duration::from_secs(3)));
    let mut c = config(&url);
    c.defaults.rounds = Some(1);
    let r = start(c, vec![]);
    let started = Instant::now();
    let (status, _, text) = post(&r, &plate_request()).await;
    assert_eq!(refused_codes(status, &text).0, "upstream_timeout");
    let v = json_of(&text);
    assert!(v["error"]["message"].as_str().unwrap().contains("next piece"), "the idle timeout: {text}");
    assert!(started.elapsed() < Duration::from_millis(1_200), "{:?}", started.elapsed());
    // A reset mid-body.
    let url = fake_upstream::raw_server(1, fake_upstream::Raw::SlowBody(Duration::from_millis(50)));
    let mut c = config(&url);
    c.defaults.rounds = Some(1);
    let r = start(c, vec![]);
    let (status, _, text) = post(&r, &plate_request()).await;
    assert_eq!(refused_codes(status, &text).0, "upstream_unreachable", "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_relays_checked_chunks_then_the_vouch_object_and_done() {
    let fake = SseFake::start(vec![SseStep::reply(CLEAN_PLATE, 6)]);
    let r = start(config(&fake.base_url), vec![]);
    let mut body = plate_request();
    body["stream"] = json!(true);
    let (status, headers, text) = post(&r, &body).await;
    assert_eq!(status, 200, "{text}");
    assert_eq!(headers["content-type"], "text/event-stream");
    let events: Vec<&str> = text.split("\n\n").filter(|e| !e.is_empty()).collect();
    assert_eq!(*events.last().unwrap(), "data: [DONE]");
    let mut content = String::new();
    let mut vouch = Value::Null;
    for e in &events[..events.len() - 1] {
        let v = json_of(e.strip_prefix("data: ").unwrap());
        assert_eq!(v["object"], "chat.completion.chunk");
        if let Some(piece) = v["choices"][0]["delta"]["content"].as_str() {
            content.push_str(piece);
        }
        if !v["vouch"].is_null() {
            vouch = v["vouch"].clone();
        }
    }
    assert_eq!(content, CLEAN_PLATE);
    assert_eq!(vouch["outcome"], "accepted");
    let seen = fake.seen();
    assert_eq!(seen[0].body["stream"], true);
    assert_eq!(seen[0].body["stream_options"]["include_usage"], true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_refused_before_anything_was_relayed_is_asked_again_and_a_late_refusal_ends_in_an_error_event() {
    // Round 1 opens with prose: refused at its first byte, nothing relayed,
    // so round 2 is asked, and its good reply streams.
    let fake = SseFake::start(vec![SseStep::reply("Sure! Here it is", 3), SseStep::reply(CLEAN_PLATE, 4)]);
    let r = start(config(&fake.base_url), vec![]);
    let mut body = plate_request();
    body["stream"] = json!(true);
    let (status, _, text) = post(&r, &body).await;
    assert_eq!(status, 200, "{text}");
    assert!(text.ends_with("data: [DONE]\n\n"), "{text}");
    assert!(!text.contains("Sure"), "{text}");
    // A reply that goes wrong half way: the good part was relayed, then an
    // error event the SDKs raise; no second round after relayed content.
    let bad = r#"{"productPresent":false,"productTextPresent":"no","garbledText":false}"#;
    let fake = SseFake::start(vec![SseStep::reply(bad, 8), SseStep::reply(CLEAN_PLATE, 2)]);
    let r = start(config(&fake.base_url), vec![]);
    let (status, _, text) = post(&r, &body).await;
    assert_eq!(status, 200);
    assert!(!text.contains("[DONE]"), "{text}");
    let last = text.split("\n\n").filter(|e| !e.is_empty()).last().unwrap();
    let v = json_of(last.strip_prefix("data: ").unwrap());
    assert_eq!(v["error"]["type"], "vouch_refused", "{last}");
    assert_eq!(v["error"]["code"], "wrong_type");
    assert!(!text.contains("\"no\""), "the refused piece is never relayed: {text}");
    assert_eq!(fake.seen().len(), 1, "not asked again once content was relayed");
    // Refused before anything relayed in every round: a plain 422.
    let fake = SseFake::start(vec![SseStep::reply("nope", 1), SseStep::reply("still no", 1)]);
    let r = start(config(&fake.base_url), vec![]);
    let (status, _, text) = post(&r, &body).await;
    let (code, problems) = refused_codes(status, &text);
    assert_eq!(code, "wrong_type", "\"n\" can only begin null: {text}");
    assert!(problems.contains(&"not_json".to_owned()), "{problems:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn broken_streams_are_refused() {
    let mut body = plate_request();
    body["stream"] = json!(true);
    // Split mid-event and mid-character: still read right.
    let events = reply_events(
        r#"{"productPresent":false,"productTextPresent":false,"garbledText":false,"x":"é"}"#,
        3,
        "stop",
        None,
    );
    let joined: Vec<u8> = events.concat().into_bytes();
    let cut = joined.iter().position(|&b| b == 0xC3).unwrap() + 1;
    let step = SseStep {
        content_type: "text/event-stream".into(),
        writes: vec![(Duration::ZERO, joined[..cut].to_vec()), (Duration::from_millis(20), joined[cut..].to_vec())],
        clean_end: true,
    };
    let fake = SseFake::start(vec![step]);
    let mut c = config(&fake.base_url);
    c.defaults.rounds = Some(1);
    let r = start(c, vec![]);
    let (status, _, text) = post(&r, &body).await;
    // The reply has an extra field: refused, and the piece with it never relayed.
    assert_eq!(status, 200, "{text}");
    assert!(!text.contains("[DONE]"), "{text}");
    assert!(text.contains("unexpected_property"), "{text}");
    assert!(!text.contains("\"x\""), "{text}");

    // No [DONE] and no finish_reason: incomplete.
    let mut events = reply_events(CLEAN_PLATE, 2, "", None);
    events.pop();
    let fake = SseFake::start(vec![SseStep::events(events)]);
    let mut c = config(&fake.base_url);
    c.defaults.rounds = Some(1);
    let r = start(c, vec![]);
    let (_, _, text) = post(&r, &body).await;
    assert!(text.contains("stream_incomplete"), "{text}");
    assert!(!text.contains("data: [DONE]"));

    // A reply spread over two choices (n = 1 was asked): each half alone is no answer, and
    // joined they would be an answer no choice gave. Refused, and the second never relayed.
    let (head, tail) = CLEAN_PLATE.split_at(CLEAN_PLATE.find(",\"productText").unwrap() + 1);
    let numbered = |index: u64, delta: Value, finish: Option<&str>| {
        sse_data(&json!({"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "fake",
                         "choices": [{"index": index, "delta": delta, "finish_reason": finish}]}))
    };
    for second in [
        vec![numbered(1, json!({"content": tail}), None)],
        vec![sse_data(&json!({"choices": [
            {"index": 0, "delta": {"content": ""}, "finish_reason": null},
            {"index": 1, "delta": {"content": tail}, "finish_reason": null},
        ]}))],
    ] {
        let mut events = vec![numbered(0, json!({"role": "assistant", "content": head}), None)];
        events.extend(second);
        events.push(numbered(0, json!({}), Some("stop")));
        events.push("data: [DONE]\n\n".to_owned());
        let fake = SseFake::start(vec![SseStep::events(events)]);
        let mut c = config(&fake.base_url);
        c.defaults.rounds = Some(1);
        let r = start(c, vec![]);
        let (status, _, text) = post(&r, &body).await;
        assert_eq!(status, 200, "{text}");
        assert!(text.contains("stream_malformed") && text.contains("choice"), "{text}");
        assert!(!text.contains("data: [DONE]"), "{text}");
        // Only the error event quotes the bad event (as `got`); no relayed chunk holds its text.
        let relayed: Vec<Value> = text
            .split("\n\n")
            .filter_map(|e| serde_json::from_str::<Value>(e.strip_prefix("data: ")?).ok())
            .filter(|e| e.get("choices").is_some())
            .collect();
        assert!(!relayed.is_empty() && relayed.iter().all(|e| !e.to_string().contains("productText")), "{text}");
    }

    // An in-band error event.
    let fake = SseFake::start(vec![SseStep::events(vec![sse_data(&json!({"error": {"message": "overloaded"}}))])]);
    let mut c = config(&fake.base_url);
    c.defaults.rounds = Some(1);
    let r = start(c, vec![]);
    let (status, _, text) = post(&r, &body).await;
    assert_eq!(refused_codes(status, &text).0, "stream_error");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_disconnects_aborts_the_upstream_stream() {
    let fake = SseFake::start(vec![SseStep::reply(CLEAN_PLATE, 40).slow_after(3, Duration::from_millis(100))]);
    let r = start(config(&fake.base_url), vec![]);
    let mut body = plate_request();
    body["stream"] = json!(true);
    let resp = client().post(format!("{}/v1/chat/completions", r.url)).json(&body).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    drop(resp);
    let seen = fake.wait_done(0, Duration::from_secs(3));
    assert!(seen.closed_by_client.is_some(), "the upstream saw the abort: {seen:?}");
    assert!(!seen.finished);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_bodies_are_refused_before_any_upstream_call() {
    let fake = Fake::start(vec![Step::reply(CLEAN_PLATE)]);
    let mut c = config(&fake.base_url);
    c.max_body_bytes = 1_000;
    let r = start(c, vec![]);
    let mut body = plate_request();
    body["messages"][0]["content"] = json!("x".repeat(2_000));
    let (status, _, text) = post(&r, &body).await;
    assert_eq!(status, 413, "{text}");
    assert_eq!(json_of(&text)["error"]["code"], "body_too_large");
    assert_eq!(fake.count(), 0);
}

/// An HTTP answer read off a raw connection, after what `got` already holds:
/// to the end of its JSON body, or of the connection (5 s at most a read).
fn rest_of_answer(tcp: &mut std::net::TcpStream, mut got: Vec<u8>) -> String {
    use std::io::Read;
    tcp.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut buf = [0u8; 4096];
    while !(got.windows(4).any(|w| w == b"\r\n\r\n") && got.ends_with(b"}")) {
        match tcp.read(&mut buf) {
            Ok(n) if n > 0 => got.extend_from_slice(&buf[..n]),
            _ => break,
        }
    }
    String::from_utf8_lossy(&got).into_owned()
}

#[test]
fn a_body_declared_too_large_is_refused_before_the_client_sends_it() {
    use std::io::Write;
    let fake = Fake::start(vec![Step::reply(CLEAN_PLATE)]);
    let mut c = config(&fake.base_url);
    c.max_body_bytes = 1_000;
    let r = start(c, vec![]);
    let addr = r.url.trim_start_matches("http://").to_owned();
    let mut tcp = std::net::TcpStream::connect(&addr).unwrap();
    // A client that asks before uploading (curl does for large bodies): the answer is the
    // 413 itself, never `100 Continue` (which would have it send all 10 MB to be refused).
    tcp.write_all(
        b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n\
          content-length: 10000000\r\nexpect: 100-continue\r\n\r\n",
    )
    .unwrap();
    let text = rest_of_answer(&mut tcp, Vec::new());
    assert!(text.starts_with("HTTP/1.1 413"), "{text:?}");
    let json = &text[text.find("\r\n\r\n").unwrap() + 4..];
    assert_eq!(json_of(json)["error"]["code"], "body_too_large", "{json}");
    assert_eq!(fake.count(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_authenticate_and_their_credentials_never_reach_the_upstream() {
    let fake = Fake::start(vec![Step::reply(CLEAN_PLATE)]);
    let mut c = config(&fake.base_url);
    c.forward_headers = vec![
        "x-api-key".into(),
        "openai-organization".into(),
        "authorization".into(),
        "content-length".into(),
        "host".into(),
    ];
    let r = start(c, vec![TOKEN.to_owned()]);
    let (status, headers, text) = post(&r, &plate_request()).await;
    assert_eq!(status, 401, "{text}");
    assert_eq!(json_of(&text)["error"]["code"], "invalid_api_key");
    assert_eq!(headers["www-authenticate"], "Bearer");
    let (status, _, _) = post_with(&r, &plate_request(), &[("authorization", "Bearer wrong")]).await;
    assert_eq!(status, 401);
    assert_eq!(fake.count(), 0);
    let bearer = format!("Bearer {TOKEN}");
    let (status, _, text) = post_with(
        &r,
        &plate_request(),
        &[
            ("authorization", &bearer),
            ("x-api-key", "client-key-1"),
            ("x-goog-api-key", "client-key-2"),
            ("openai-organization", "org-1"),
        ],
    )
    .await;
    assert_eq!(status, 200, "{text}");
    let seen = &fake.seen()[0];
    assert_eq!(seen.headers["authorization"], format!("Bearer {KEY}"), "the server's key, not the client's token");
    assert!(!seen.headers.contains_key("x-api-key"));
    assert!(!seen.headers.contains_key("x-goog-api-key"));
    assert_eq!(seen.headers["openai-organization"], "org-1", "an allow-listed header goes through");
    assert!(!text.contains(TOKEN));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_pass_client_key_each_client_s_own_key_goes_upstream_and_is_scrubbed() {
    // Not `sk-…`: the pattern would hide them anyway; only their own scrubber can.
    const ALICE: &str = "alice-key-0b7d51c2e9aa";
    const BOB: &str = "bob-key-71e0c4d9f3b6";
    // Both a server key and client keys: refused at start, one source only.
    let mut c = config("http://127.0.0.1:9/v1");
    c.pass_client_key = true;
    let both = vouch_server::Gateway::new(c.clone(), Some(KEY.to_owned()), vec![]);
    assert!(both.is_err_and(|e| e.to_string().contains("pass_client_key")));
    c.api_key_env = Some("SOME_KEY".into());
    assert!(vouch_server::Gateway::new(c, None, vec![]).is_err());

    let echo = format!("{{\"error\": {{\"message\": \"bad key {BOB}\"}}}}");
    let fake = Fake::start(vec![
        Step::reply(CLEAN_PLATE),
        Step::body(401, &echo),
        Step::reply(&format!("{{\"productPresent\": \"{ALICE}\"}}")),
    ]);
    let mut c = config(&fake.base_url);
    c.pass_client_key = true;
    c.defaults.rounds = Some(1);
    // Even allow-listed, the gateway's own token header never goes upstream.
    c.forward_headers = vec!["x-vouch-token".into()];
    let r = start_keyed(c, None, vec![TOKEN.to_owned()]);
    let alice = format!("Bearer {ALICE}");
    let bob = format!("Bearer {BOB}");
    // The gateway's token is in x-vouch-token now, not in Authorization.
    let (status, _, text) = post_with(&r, &plate_request(), &[("authorization", &format!("Bearer {TOKEN}"))]).await;
    assert_eq!(status, 401, "{text}");
    assert_eq!(json_of(&text)["error"]["code"], "invalid_api_key");
    // A client that brings no key of its own is refused before any upstream call.
    let (status, headers, text) = post_with(&r, &plate_request(), &[("x-vouch-token", TOKEN)]).await;
    assert_eq!(status, 401, "{text}");
    assert_eq!(json_of(&text)["error"]["code"], "missing_api_key");
    assert_eq!(headers["www-authenticate"], "Bearer");
    // A "key" far longer than any provider's is refused before its scrubber is built.
    let long = format!("Bearer {}", "k".repeat(200_000));
    let started = Instant::now();
    let (status, _, text) =
        post_with(&r, &plate_request(), &[("x-vouch-token", TOKEN), ("authorization", &long)]).await;
    assert_eq!((status, json_of(&text)["error"]["code"].as_str()), (401, Some("invalid_api_key")), "{text}");
    assert!(started.elapsed() < Duration::from_secs(5), "refused at once");
    assert_eq!(fake.count(), 0);

    let (status, _, text) =
        post_with(&r, &plate_request(), &[("x-vouch-token", TOKEN), ("authorization", &alice)]).await;
    assert_eq!(status, 200, "{text}");
    let (status, _, text) =
        post_with(&r, &plate_request(), &[("x-vouch-token", &format!("Bearer {TOKEN}")), ("authorization", &bob)])
            .await;
    assert_eq!(refused_codes(status, &text).0, "upstream_status");
    assert!(!text.contains(BOB) && !text.contains("71e0c4d9f3b6"), "Bob's key is scrubbed from his answer: {text}");
    let (status, _, text) =
        post_with(&r, &plate_request(), &[("x-vouch-token", TOKEN), ("authorization", &alice)]).await;
    assert_eq!(refused_codes(status, &text).0, "secret_in_reply", "{text}");
    assert!(!text.contains(ALICE), "{text}");
    // What the gateway itself echoes of a request is scrubbed of that client's key too.
    let (status, _, text) = post_with(
        &r,
        &plate_request(),
        &[("x-vouch-token", TOKEN), ("authorization", &alice), ("x-vouch-contract", ALICE)],
    )
    .await;
    assert_eq!(status, 404, "{text}");
    assert!(!text.contains(ALICE) && text.contains(vouch_llm::REDACTED), "{text}");

    let seen = fake.seen();
    let keys: Vec<&str> = seen.iter().map(|s| s.headers["authorization"].as_str()).collect();
    assert_eq!(keys, [alice.as_str(), bob.as_str(), alice.as_str()], "each request carries its own client's key");
    assert!(seen.iter().all(|s| !s.headers.contains_key("x-vouch-token")));
    let metrics = client().get(format!("{}/metrics", r.url)).header("x-vouch-token", TOKEN).send().await.unwrap();
    let metrics = metrics.text().await.unwrap();
    assert!(!metrics.contains(ALICE) && !metrics.contains(BOB));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_the_concurrency_limit_requests_get_503_with_retry_after() {
    let steps: Vec<Step> = (0..8).map(|_| Step::reply(CLEAN_PLATE).delay(Duration::from_millis(600))).collect();
    let fake = Fake::start(steps);
    let mut c = config(&fake.base_url);
    c.max_concurrency = 3;
    let r = Arc::new(start(c, vec![]));
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let r = Arc::clone(&r);
        tasks.push(tokio::spawn(async move { post(&r, &plate_request()).await }));
    }
    let mut ok = 0;
    let mut busy = 0;
    for t in tasks {
        let (status, headers, _) = t.await.unwrap();
        match status {
            200 => ok += 1,
            503 => {
                assert_eq!(headers["retry-after"], "1");
                busy += 1;
            }
            s => panic!("status {s}"),
        }
    }
    assert_eq!(ok, 3);
    assert_eq!(busy, 5);
    assert_eq!(fake.count(), 3, "a 503 makes no upstream call");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn contracts_are_chosen_by_name_header_or_inline_schema_and_refused_without_one() {
    let fake = Fake::start(vec![Step::reply(CLEAN_PLATE), Step::reply("{\"a\": 5}"), Step::reply("{\"a\": 50}")]);
    let r = start(config(&fake.base_url), vec![]);
    // By header.
    let mut body = plate_request();
    body.as_object_mut().unwrap().remove("response_format");
    let (status, _, text) = post_with(&r, &body, &[("x-vouch-contract", "plate")]).await;
    assert_eq!(status, 200, "{text}");
    // Inline.
    let mut inline = plate_request();
    inline["response_format"]["json_schema"] = json!({"name": "mine", "schema": {"type": "object", "properties": {"a": {"type": "integer", "maximum": 10}}, "required": ["a"], "additionalProperties": false}});
    let (status, _, text) = post(&r, &inline).await;
    assert_eq!(status, 200, "{text}");
    let (status, _, text) = post(&r, &inline).await;
    assert_eq!(refused_codes(status, &text).0, "out_of_range");
    // None: refused by default, with no upstream call.
    let before = fake.count();
    let (status, _, text) = post(&r, &body).await;
    assert_eq!(status, 400);
    assert_eq!(json_of(&text)["error"]["code"], "contract_required");
    // An unknown name.
    let (status, _, text) = post_with(&r, &body, &[("x-vouch-contract", "nope")]).await;
    assert_eq!(status, 404, "{text}");
    // A schema that is no contract.
    let mut broken = plate_request();
    broken["response_format"]["json_schema"] = json!({"name": "x", "schema": {"type": "object", "maximun": 3}});
    let (status, _, text) = post(&r, &broken).await;
    assert_eq!(status, 400);
    assert_eq!(json_of(&text)["error"]["code"], "contract_invalid");
    assert_eq!(fake.count(), before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn per_request_headers_only_tighten_the_limits() {
    let fake = Fake::start(vec![Step::reply("{}"), Step::reply("{}"), Step::reply("{}")]);
    let mut c = config(&fake.base_url);
    c.defaults.rounds = Some(2);
    let r = start(c, vec![]);
    let (status, _, text) = post_with(&r, &plate_request(), &[("x-vouch-rounds", "5")]).await;
    assert_eq!(status, 422, "{text}");
    assert_eq!(fake.count(), 2, "5 asked, capped at the configured 2");
    let (status, _, _) = post_with(&r, &plate_request(), &[("x-vouch-rounds", "1")]).await;
    assert_eq!(status, 422);
    assert_eq!(fake.count(), 3, "1 asked: one round");
    let (status, _, text) = post_with(&r, &plate_request(), &[("x-vouch-rounds", "zero")]).await;
    assert_eq!(status, 400, "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_drain_delay_keeps_taking_connections_with_readyz_503_then_closes() {
    let mut c = config(&refused_url());
    c.drain_delay_ms = 1500;
    let r = start(c, vec![]);
    let url = r.url.clone();
    let addr = url.trim_start_matches("http://").to_owned();
    // A new connection for every request, as a load balancer's probe makes.
    let fresh = || reqwest::Client::builder().no_proxy().pool_max_idle_per_host(0).build().unwrap();
    assert_eq!(fresh().get(format!("{url}/readyz")).send().await.unwrap().status(), 200);
    let stopped = Instant::now();
    r.shut_down();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let ready = fresh().get(format!("{url}/readyz")).send().await.unwrap();
    assert_eq!(ready.status(), 503, "draining, still answering");
    let check = fresh().post(format!("{url}/v1/check")).json(&json!({"contract": "plate", "reply": "{}"})).send().await;
    assert_eq!(check.unwrap().status(), 200, "a request on a new connection is still served");
    // Then the listener closes.
    let closed = loop {
        if tokio::net::TcpStream::connect(&addr).await.is_err() {
            break stopped.elapsed();
        }
        assert!(stopped.elapsed() < Duration::from_secs(10), "still listening");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(closed >= Duration::from_millis(1400), "closed after {closed:?}, before the delay");

    let mut c = config(&refused_url());
    c.drain_delay_ms = 3_600_001;
    assert!(vouch_server::Gateway::new(c, None, vec![])
        .is_err_and(|e| e.to_string().contains("drain_delay_ms must be at most")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_budget_caps_the_completion_the_client_asked_for() {
    let fake = Fake::start(vec![Step::reply("{}"), Step::reply("{}")]);
    let r = start(config(&fake.base_url), vec![]);
    let mut body = plate_request();
    body["max_completion_tokens"] = json!(5000);
    let (status, _, text) = post_with(&r, &body, &[("x-vouch-max-total-tokens", "900"), ("x-vouch-rounds", "1")]).await;
    assert_eq!(status, 422, "{text}");
    body["max_completion_tokens"] = json!(64);
    post_with(&r, &body, &[("x-vouch-max-total-tokens", "900"), ("x-vouch-rounds", "1")]).await;
    let seen = fake.seen();
    // Lowered to the budget; a lower one kept; no second limit added.
    assert_eq!(seen[0].body["max_completion_tokens"], 900);
    assert_eq!(seen[1].body["max_completion_tokens"], 64);
    assert!(seen.iter().all(|s| s.body.get("max_tokens").is_none()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_contracts_health_and_metrics_answer() {
    let r = start(config(&refused_url()), vec![]);
    let c = client();
    let v: Value = c
        .post(format!("{}/v1/check", r.url))
        .json(&json!({"contract": "plate", "reply": "{}"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let plate = vouch::Contract::from_json_str(
        &std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/contracts/plate.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(v, plate.check("{}").to_json(), "exactly vouch check --json's object");
    for (body, code) in
        [("{\"contract\": 1,", "invalid_json"), ("[1]", "invalid_body"), ("{\"reply\": 5}", "invalid_body")]
    {
        let resp = c.post(format!("{}/v1/check", r.url)).body(body).send().await.unwrap();
        assert_eq!(resp.status(), 400, "{body}");
        let v: Value = resp.json().await.unwrap();
        assert_eq!(v["error"]["code"], code, "{body}");
    }
    let list: Value = c.get(format!("{}/v1/contracts", r.url)).send().await.unwrap().json().await.unwrap();
    let names: Vec<&str> = list["data"].as_array().unwrap().iter().map(|e| e["id"].as_str().unwrap()).collect();
    assert_eq!(names, ["eligibility", "plate"]);
    assert_eq!(c.get(format!("{}/healthz", r.url)).send().await.unwrap().status(), 200);
    assert_eq!(c.get(format!("{}/readyz", r.url)).send().await.unwrap().status(), 200);
    let m = c.get(format!("{}/metrics", r.url)).send().await.unwrap().text().await.unwrap();
    assert!(m.contains("vouch_http_requests_total{route=\"/v1/check\",status=\"200\"} 1"), "{m}");
    r.gateway.set_draining();
    assert_eq!(c.get(format!("{}/readyz", r.url)).send().await.unwrap().status(), 503);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_keeps_the_old_contract_when_the_new_one_does_not_compile() {
    let dir = std::env::temp_dir().join(format!("vouch-reload-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let plate =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/contracts/plate.json")).unwrap();
    std::fs::write(dir.join("plate.json"), &plate).unwrap();
    let mut c = config(&refused_url());
    c.contracts = dir.clone();
    let r = start(c, vec![]);
    std::fs::write(dir.join("plate.json"), "{\"type\": \"object\", \"maximun\": 1}").unwrap();
    std::fs::write(dir.join("extra.json"), "{\"type\": \"integer\"}").unwrap();
    let errors = r.gateway.reload().unwrap();
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].name, "plate");
    let names: Vec<String> = r.gateway.catalog().named.keys().cloned().collect();
    assert_eq!(names, ["extra", "plate"]);
    assert!(r.gateway.catalog().named["plate"].asker.contract().check(CLEAN_PLATE).is_accepted(), "the old plate");
    // Files that are not contracts are refused without blocking the reload
    // on them (a FIFO) or reading them whole (a link to /dev/zero).
    let fifo = std::process::Command::new("mkfifo").arg(dir.join("fifo.json")).status();
    assert!(fifo.is_ok_and(|s| s.success()), "mkfifo");
    std::os::unix::fs::symlink("/dev/zero", dir.join("zero.json")).unwrap();
    std::fs::write(dir.join("huge.json"), vec![b' '; 4 * 1024 * 1024 + 1]).unwrap();
    let (done, waited) = std::sync::mpsc::channel();
    let gateway = std::sync::Arc::clone(&r.gateway);
    std::thread::spawn(move || done.send(gateway.reload()).ok());
    let errors = waited.recv_timeout(Duration::from_secs(10)).expect("the reload ends").unwrap();
    let mut named: Vec<(&str, &str)> = errors
        .iter()
        .map(|e| {
            (
                e.name.as_str(),
                if e.message.contains("not a regular file") {
                    "not a file"
                } else if e.message.contains("larger than") {
                    "too large"
                } else {
                    "other"
                },
            )
        })
        .filter(|(n, _)| *n != "plate")
        .collect();
    named.sort_unstable();
    assert_eq!(named, [("fifo", "not a file"), ("huge", "too large"), ("zero", "not a file")], "{errors:?}");
    std::fs::remove_dir_all(&dir).ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn n_other_than_the_integer_one_is_refused_before_any_upstream_call() {
    // No upstream listens: a request that got past the check would answer 5xx.
    let r = start(config(&refused_url()), vec![]);
    for n in [json!(2), json!(0), json!(2.0), json!(1.5), json!("2"), json!(-1), json!(true), json!([1])] {
        let mut body = plate_request();
        body["n"] = n.clone();
        let (status, _, text) = post(&r, &body).await;
        assert_eq!(status, 400, "n = {n}: {text}");
        assert!(text.contains("unsupported_n"), "n = {n}: {text}");
    }
    for n in [json!(1), json!(null)] {
        let mut body = plate_request();
        body["n"] = n.clone();
        let (status, _, _) = post(&r, &body).await;
        assert_ne!(status, 400, "n = {n} is one choice");
    }
}

/// A whole completion of the clean plate (not a stream), written `bytes` at
/// a time, each piece after `every`.
fn dripping_plate(bytes: usize, every: Duration) -> SseStep {
    let body = json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": CLEAN_PLATE}, "finish_reason": "stop"}]}).to_string();
    let writes = body.as_bytes().chunks(bytes).map(|c| (every, c.to_vec())).collect();
    SseStep { content_type: "application/json".into(), writes, clean_end: true }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_disconnects_aborts_the_upstream_request_when_not_streaming() {
    // The upstream drips a whole completion; the client gives up first.
    let fake = SseFake::start(vec![dripping_plate(4, Duration::from_millis(60))]);
    let mut c = config(&fake.base_url);
    c.timeouts.idle_ms = 1_000;
    c.timeouts.total_ms = 20_000;
    let r = start(c, vec![]);
    let quick = reqwest::Client::builder().no_proxy().timeout(Duration::from_millis(300)).build().unwrap();
    let sent = quick.post(format!("{}/v1/chat/completions", r.url)).json(&plate_request()).send().await;
    assert!(sent.is_err(), "the client gave up");
    let seen = fake.wait_done(0, Duration::from_secs(5));
    assert!(seen.closed_by_client.is_some(), "the upstream saw the abort: {seen:?}");
    assert!(!seen.finished);
    // The request that was dropped is no longer counted in flight.
    let metrics = client().get(format!("{}/metrics", r.url)).send().await.unwrap().text().await.unwrap();
    assert!(metrics.contains("\nvouch_in_flight 0\n"), "{metrics}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_split_across_stream_pieces_is_never_half_relayed() {
    let content = format!(r#"{{"productPresent":false,"productTextPresent":false,"garbledText":false,"k":"{KEY}"}}"#);
    let fake = SseFake::start(vec![SseStep::reply(&content, 9)]);
    let mut c = config(&fake.base_url);
    c.defaults.rounds = Some(1);
    let r = start(c, vec![]);
    let mut body = plate_request();
    body["stream"] = json!(true);
    let (_, _, text) = post(&r, &body).await;
    assert!(!text.contains("sk-up"), "no part of the key: {text}");
    assert!(text.contains("secret_in_reply") || text.contains("unexpected_property"), "{text}");
    // A key alone in a reply the contract would take is refused as the key.
    let contract = json!({"type": "object", "properties": {"note": {"type": "string"}}, "required": ["note"], "additionalProperties": false});
    let content = format!(r#"{{"note":"here it is: {KEY}"}}"#);
    let fake = SseFake::start(vec![SseStep::reply(&content, 7)]);
    let mut c = config(&fake.base_url);
    c.defaults.rounds = Some(1);
    let r = start(c, vec![]);
    let mut body = plate_request();
    body["stream"] = json!(true);
    body["response_format"]["json_schema"] = json!({"name": "note", "schema": contract});
    let (_, _, text) = post(&r, &body).await;
    assert!(!text.contains("sk-up"), "{text}");
    assert!(text.contains("secret_in_reply"), "{text}");
    assert!(text.contains("here it i"), "what came before the key was relayed: {text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rate_limit_until_a_date_waits_until_then() {
    let soon = httpdate(std::time::SystemTime::now() + Duration::from_secs(1));
    let fake = Fake::start(vec![Step::body(429, "{}").header("retry-after", &soon), Step::reply(CLEAN_PLATE)]);
    let mut c = config(&fake.base_url);
    c.max_retry_wait_ms = 3_000;
    c.timeouts.total_ms = 5_000;
    let r = start(c, vec![]);
    let (status, _, text) = post(&r, &plate_request()).await;
    assert_eq!(status, 200, "{text}");
    let seen = fake.seen();
    assert!(seen[1].at - seen[0].at >= Duration::from_millis(100), "waited for the date");
}

fn httpdate(t: std::time::SystemTime) -> String {
    // RFC 7231 IMF-fixdate, by hand (the tests have no date crate).
    let secs = t.duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() + 1;
    let days = secs / 86_400;
    let (h, m, s) = ((secs % 86_400) / 3600, (secs % 3600) / 60, secs % 60);
    let weekday = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][(days % 7) as usize];
    // Civil from days (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let mon =
        ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"][(month - 1) as usize];
    format!("{weekday}, {d:02} {mon} {year} {h:02}:{m:02}:{s:02} GMT")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gzipped_stream_is_read_as_it_comes() {
    use std::io::Write as _;
    let events = reply_events(CLEAN_PLATE, 4, "stop", Some((10, 4)));
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(events.concat().as_bytes()).unwrap();
    let zipped = gz.finish().unwrap();
    let half = zipped.len() / 2;
    let step = SseStep {
        content_type: "text/event-stream\r\ncontent-encoding: gzip".into(),
        writes: vec![(Duration::ZERO, zipped[..half].to_vec()), (Duration::from_millis(20), zipped[half..].to_vec())],
        clean_end: true,
    };
    let fake = SseFake::start(vec![step]);
    let r = start(config(&fake.base_url), vec![]);
    let mut body = plate_request();
    body["stream"] = json!(true);
    let (status, _, text) = post(&r, &body).await;
    assert_eq!(status, 200, "{text}");
    assert!(text.ends_with("data: [DONE]\n\n"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endless_stream_is_cut_at_the_cap() {
    // White space inside the object, forever: every byte keeps the reply
    // possible, so only a bound can end it.
    let mut events = vec![fake_upstream::sse_delta("{\"productPresent\":false")];
    let blank = fake_upstream::sse_delta(&" ".repeat(64 * 1024));
    events.extend(std::iter::repeat_n(blank, 1_200));
    let fake = SseFake::start(vec![SseStep::events(events)]);
    let mut c = config(&fake.base_url);
    c.defaults.rounds = Some(1);
    c.timeouts.total_ms = 30_000;
    let r = start(c, vec![]);
    let mut body = plate_request();
    body["stream"] = json!(true);
    let started = Instant::now();
    let (status, _, text) = post(&r, &body).await;
    assert!(status == 200 || status == 422, "{status}");
    let last = text.split("\n\n").filter(|e| !e.is_empty()).last().unwrap();
    let v = json_of(last.strip_prefix("data: ").unwrap_or(last));
    assert_eq!(v["error"]["type"], "vouch_refused", "{}", &last[..last.len().min(400)]);
    assert!(!text.contains("data: [DONE]"));
    let seen = fake.wait_done(0, Duration::from_secs(10));
    assert!(!seen.finished, "cut before the upstream ended: {} of {} writes", seen.writes, seen.scripted);
    assert!(started.elapsed() < Duration::from_secs(20));
}

/// The resident memory of this process, in KiB.
fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_concurrent_slow_requests_are_held_in_bounded_memory_with_503s_past_the_limit() {
    // Each upstream answer waits long enough that no slot frees before all
    // 1,000 requests are in, even on a loaded 2-core machine (at 1.5 s, a
    // busy CI run let a 201st request through to an upstream with no step
    // left for it).
    let steps: Vec<Step> = (0..200).map(|_| Step::reply(CLEAN_PLATE).delay(Duration::from_millis(4_000))).collect();
    let fake = Fake::start(steps);
    let mut c = config(&fake.base_url);
    c.max_concurrency = 200;
    c.timeouts.first_byte_ms = 8_000;
    c.timeouts.total_ms = 15_000;
    let r = Arc::new(start(c, vec![]));
    let before = rss_kib();
    let client = reqwest::Client::builder().no_proxy().pool_max_idle_per_host(0).build().unwrap();
    let mut tasks = Vec::new();
    for _ in 0..1_000 {
        let (client, url) = (client.clone(), format!("{}/v1/chat/completions", r.url));
        tasks.push(tokio::spawn(async move {
            let resp = client.post(url).json(&plate_request()).send().await.unwrap();
            let retry = resp.headers().get("retry-after").is_some();
            (resp.status().as_u16(), retry)
        }));
    }
    let (mut ok, mut busy) = (0, 0);
    let mut peak = 0;
    for t in tasks {
        let (status, retry) = t.await.unwrap();
        peak = peak.max(rss_kib());
        match status {
            200 => ok += 1,
            503 => {
                assert!(retry, "a 503 says when to retry");
                busy += 1;
            }
            s => panic!("status {s}"),
        }
    }
    eprintln!("1,000 concurrent: {ok} answered, {busy} refused 503; RSS {before} KiB before, {peak} KiB at peak");
    assert_eq!(ok + busy, 1_000);
    assert!((150..=200).contains(&ok), "{ok} answered: at most the limit in flight");
    assert!(busy >= 800);
    assert!(fake.count() <= 200, "no upstream call for a 503");
    assert!(peak.saturating_sub(before) < 200 * 1024, "memory stays bounded: {before} → {peak} KiB");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_vouched_value_is_sent_byte_for_byte_even_when_it_looks_like_a_key() {
    let reply = r#"{"note":"sk-looks-like-a-key-0123456789 and Bearer abc.def"}"#;
    let fake = Fake::start(vec![Step::reply(reply)]);
    let r = start(config(&fake.base_url), vec![]);
    let mut body = plate_request();
    body["response_format"]["json_schema"] = json!({"name": "note", "schema": {"type": "object", "properties": {"note": {"type": "string"}}, "required": ["note"], "additionalProperties": false}});
    let (status, _, text) = post(&r, &body).await;
    assert_eq!(status, 200, "{text}");
    assert_eq!(json_of(&text)["choices"][0]["message"]["content"], reply, "what was vouched, unchanged");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_drip_is_cut_at_the_total_backstop() {
    // Every piece comes within the idle timeout; the whole never comes in time.
    let fake = SseFake::start(vec![dripping_plate(2, Duration::from_millis(100))]);
    let mut c = config(&fake.base_url);
    c.defaults.rounds = Some(1);
    let r = start(c, vec![]);
    let started = Instant::now();
    let (status, _, text) = post(&r, &plate_request()).await;
    assert_eq!(refused_codes(status, &text).0, "upstream_timeout");
    assert!(json_of(&text)["error"]["message"].as_str().unwrap().contains("complete response"), "{text}");
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(1_400) && took < Duration::from_millis(2_500),
        "the 1.5 s backstop: {took:?}"
    );
    let seen = fake.wait_done(0, Duration::from_secs(5));
    assert!(!seen.finished && seen.closed_by_client.is_some(), "the upstream saw the request dropped: {seen:?}");
}

/// A gateway with `without_contract = "pass"` before the upstream at `base_url`.
fn passing(base_url: &str) -> Running {
    let mut c = config(base_url);
    c.without_contract = vouch_server::WithoutContract::Pass;
    start(c, vec![])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn passed_through_a_key_sent_a_character_an_event_is_never_relayed() {
    // `without_contract = "pass"`: the answer is read whole, and its events'
    // strings joined, before anything goes to the client.
    let content = format!(r#"{{"s": "pre{KEY}post"}}"#);
    let fake = SseFake::start(vec![SseStep::reply(&content, content.len())]);
    let r = passing(&fake.base_url);
    let body = json!({"model": "m", "stream": true, "messages": [{"role": "user", "content": "hi"}]});
    let (status, _, text) = post(&r, &body).await;
    assert_eq!(status, 502, "{text}");
    assert_eq!(json_of(&text)["error"]["code"], "secret_in_answer");
    // One character an event, nothing of the key is in the answer's text.
    assert!(!text.contains(&KEY[..4]), "{text}");
    // Without the key, the same stream is relayed as it came.
    let content = r#"{"s": "nothing to hide"}"#;
    let fake = SseFake::start(vec![SseStep::reply(content, content.len())]);
    let r = passing(&fake.base_url);
    let (status, headers, text) = post(&r, &body).await;
    assert_eq!(status, 200, "{text}");
    assert_eq!(headers["x-vouch-checked"], "false");
    assert!(text.contains("data:"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn passed_through_an_upstream_s_own_vouch_object_is_taken_out() {
    // `vouch` is the gateway's verdict: an unchecked answer must not carry one the
    // upstream wrote, whole or in any event (a key spelt with an escape, data over lines).
    let spoof = json!({"contract": "plate", "outcome": "accepted", "pass": true});
    let answer = json!({"id": "c", "object": "chat.completion", "vouch": spoof, "choices": [
        {"index": 0, "message": {"role": "assistant", "content": "{\"productPresent\": \"no\"}"}, "finish_reason": "stop"}]});
    let fake = Fake::start(vec![Step::body(200, &answer.to_string())]);
    let r = passing(&fake.base_url);
    let body = json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]});
    let (status, headers, text) = post(&r, &body).await;
    assert_eq!((status, &headers["x-vouch-checked"]), (200, &"false".parse().unwrap()), "{text}");
    let got = json_of(&text);
    assert!(got.get("vouch").is_none(), "{text}");
    assert_eq!(got["choices"], answer["choices"]);
    // Read as the SDKs read it: past a byte order mark; and a body serde_json does not read
    // but Python's json does (NaN) is not relayed if it could name vouch; other text is.
    let spoofs = [
        (format!("\u{feff}{answer}"), 200),
        (answer.to_string().replacen("\"id\"", "\"x\": NaN, \"id\"", 1), 502),
        (
            answer.to_string().replacen("\"vouch\"", "\"\\u0076ouch\"", 1).replacen(
                "\"id\"",
                "\"x\": 1e400, \"id\"",
                1,
            ),
            502,
        ),
        ("<html>overloaded</html>".to_owned(), 200),
    ];
    for (spoof, want) in spoofs {
        let fake = Fake::start(vec![Step::body(200, &spoof)]);
        let r = passing(&fake.base_url);
        let (status, _, text) = post(&r, &body).await;
        assert_eq!(status, want, "{spoof}: {text}");
        assert!(!text.contains("accepted"), "{spoof}: {text}");
        if want == 502 {
            assert_eq!(json_of(&text)["error"]["code"], "vouch_in_answer");
        } else if spoof.starts_with('<') {
            assert_eq!(text, spoof);
        }
    }

    let chunk = |extra: &str| {
        format!(
            r#"{{"id": "c", "object": "chat.completion.chunk", {extra} "choices": [{{"index": 0, "delta": {{"content": "{{}}"}}, "finish_reason": null}}]}}"#
        )
    };
    let events = vec![
        format!("data: {}\n\n", chunk(r#""vouch": {"outcome": "accepted"},"#)),
        format!("event: message\r\ndata: {}\r\n\r\n", chunk(r#""\u0076ouch": {"outcome": "accepted"},"#)),
        // One event's data over two lines (joined with a line feed, as SSE reads it), and a bare
        // `data` line (an empty one) between them.
        "data: {\"vouch\": {\"outcome\": \"accepted\"},\ndata\ndata: \"choices\": []}\n\n".to_owned(),
        format!("data: {}\n\n", chunk("")),
        "data: [DONE]\n\n".to_owned(),
    ];
    let fake = SseFake::start(vec![SseStep::events(events)]);
    let r = passing(&fake.base_url);
    let body = json!({"model": "m", "stream": true, "messages": [{"role": "user", "content": "hi"}]});
    let (status, _, text) = post(&r, &body).await;
    assert_eq!(status, 200, "{text}");
    assert!(!text.contains("accepted") && !text.contains("ouch"), "{text}");
    let data: Vec<&str> = text.lines().filter_map(|l| l.strip_prefix("data: ")).collect();
    assert_eq!(data.len(), 5, "{text}");
    assert!(
        data[..4].iter().all(|d| serde_json::from_str::<Value>(d).is_ok_and(|v| v.get("choices").is_some())),
        "{text}"
    );
    assert!(text.contains("event: message\n") && text.ends_with("data: [DONE]\n\n"), "{text}");
    // A stream vouch's reader cannot read (a field it does not know, a byte order mark)
    // that could still name the member is not relayed; one that could not, is.
    for (events, want) in [
        (vec![format!("x-note: 1\ndata: {}\n\n", chunk(r#""vouch": {},"#))], 502),
        (vec![format!("\u{feff}data: {}\n\n", chunk(r#""vouch": {},"#))], 502),
        (vec![format!("x-note: 1\ndata: {}\n\n", chunk(""))], 200),
    ] {
        let fake = SseFake::start(vec![SseStep::events(events)]);
        let r = passing(&fake.base_url);
        let (status, _, text) = post(&r, &body).await;
        assert_eq!(status, want, "{text}");
        if want == 502 {
            assert_eq!(json_of(&text)["error"]["code"], "vouch_in_answer", "{text}");
        }
    }
}

#[test]
fn inline_contracts_are_kept_by_their_compiled_size_not_their_count() {
    // Ten characters of pattern are about 5 MB of program: 64 MiB holds few of them.
    let cache = vouch_server::InlineCache::new(256, 64 * 1024 * 1024);
    let c = config(&refused_url());
    for i in 0..40 {
        let schema = json!({"type": "string", "pattern": format!("^\\w{{{}}}$", 40_000 + i)});
        assert!(matches!(cache.get_or_compile(&schema, &c, None), vouch_server::InlineContract::Ready(_)));
    }
    assert!(cache.len() <= 16, "{} kept", cache.len());
    let small = vouch_server::InlineCache::new(256, 64 * 1024 * 1024);
    for i in 0..40 {
        let schema = json!({"type": "string", "maxLength": i});
        assert!(matches!(small.get_or_compile(&schema, &c, None), vouch_server::InlineContract::Ready(_)));
    }
    assert_eq!(small.len(), 40);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_asked_for_is_a_stream_even_when_the_upstream_answers_one_document() {
    // The client asked for a stream; the upstream sent one JSON completion.
    let fake = SseFake::start(vec![dripping_plate(64, Duration::ZERO)]);
    let r = start(config(&fake.base_url), vec![]);
    let mut body = plate_request();
    body["stream"] = json!(true);
    let (status, headers, text) = post(&r, &body).await;
    assert_eq!(status, 200, "{text}");
    assert_eq!(headers["content-type"], "text/event-stream", "{text}");
    assert!(text.trim_end().ends_with("data: [DONE]"), "{text}");
    let first: Value = serde_json::from_str(text.lines().next().unwrap().trim_start_matches("data: ")).unwrap();
    assert_eq!(first["object"], "chat.completion.chunk", "{text}");
    let content = first["choices"][0]["delta"]["content"].as_str().unwrap();
    assert_eq!(serde_json::from_str::<Value>(content).unwrap(), serde_json::from_str::<Value>(CLEAN_PLATE).unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_that_say_something_unclear_are_400s_not_guesses() {
    // No upstream listens: a request that got past the checks would answer 5xx.
    let r = start(config(&refused_url()), vec![]);
    let mut stream_yes = plate_request();
    stream_yes["stream"] = json!("yes");
    let mut misspelt = plate_request();
    misspelt["vouch"] = json!({"fallbak": {"productPresent": false}});
    for (body, what) in [(stream_yes, "stream must be true or false"), (misspelt, "fallbak")] {
        let (status, _, text) = post(&r, &body).await;
        assert_eq!(status, 400, "{text}");
        assert_eq!(json_of(&text)["error"]["code"], "invalid_body", "{text}");
        assert!(text.contains(what), "{text}");
    }
    // A limit header given twice: which one a proxy keeps is not guessed.
    let (status, _, text) =
        post_with(&r, &plate_request(), &[("x-vouch-rounds", "1"), ("x-vouch-rounds", "abc")]).await;
    assert_eq!((status, json_of(&text)["error"]["code"].as_str()), (400, Some("invalid_limit")), "{text}");
    // Two contracts named: the same rule (the first was taken before).
    for second in ["plate", "eligibility"] {
        let (status, _, text) =
            post_with(&r, &plate_request(), &[("x-vouch-contract", "plate"), ("x-vouch-contract", second)]).await;
        assert_eq!(
            (status, json_of(&text)["error"]["code"].as_str()),
            (400, Some("invalid_contract_header")),
            "{text}"
        );
    }
    // A method a route does not take: an OpenAI-shaped error, not an empty body.
    let got = client().get(format!("{}/v1/chat/completions", r.url)).send().await.unwrap();
    assert_eq!(got.status(), 405);
    let text = got.text().await.unwrap();
    assert_eq!(json_of(&text)["error"]["code"], "method_not_allowed", "{text}");
}

#[test]
fn a_client_that_never_finishes_its_request_head_is_disconnected() {
    use std::io::{Read, Write};
    let mut c = config(&refused_url());
    c.header_read_timeout_ms = 300;
    let r = start(c, vec![]);
    let addr = r.url.trim_start_matches("http://").to_owned();
    let mut tcp = std::net::TcpStream::connect(&addr).unwrap();
    // Half a request head, then nothing (a slow-headers attack holds the connection so).
    tcp.write_all(b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\n").unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let started = Instant::now();
    let mut buf = [0u8; 512];
    let closed = match tcp.read(&mut buf) {
        Ok(_) => true,
        Err(e) => e.kind() != std::io::ErrorKind::WouldBlock && e.kind() != std::io::ErrorKind::TimedOut,
    };
    assert!(closed, "the gateway still held the connection after {:?}", started.elapsed());
    assert!(started.elapsed() < Duration::from_secs(10), "closed after {:?}", started.elapsed());
}

#[test]
fn a_client_that_drips_its_body_gets_a_408_and_no_upstream_call() {
    use std::io::{Read, Write};
    let fake = Fake::start(vec![Step::reply(CLEAN_PLATE)]);
    let mut c = config(&fake.base_url);
    c.body_read_timeout_ms = 400;
    let r = start(c, vec![]);
    let addr = r.url.trim_start_matches("http://").to_owned();
    let body = plate_request().to_string();
    let mut tcp = std::net::TcpStream::connect(&addr).unwrap();
    let head = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
        body.len()
    );
    tcp.write_all(head.as_bytes()).unwrap();
    tcp.set_read_timeout(Some(Duration::from_millis(100))).unwrap();
    // A byte every 100 ms: each arrives in time, the whole body never does.
    let started = Instant::now();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    for byte in body.as_bytes().iter().take(100) {
        if tcp.write_all(&[*byte]).is_err() {
            break;
        }
        match tcp.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                got.extend_from_slice(&buf[..n]);
                break;
            }
            Err(_) => {}
        }
    }
    // The answer has begun: the rest of it.
    let text = rest_of_answer(&mut tcp, got);
    assert!(text.starts_with("HTTP/1.1 408"), "after {:?}: {text:?}", started.elapsed());
    let json = &text[text.find("\r\n\r\n").unwrap() + 4..];
    assert_eq!(json_of(json)["error"]["code"], "body_timeout", "{json}");
    assert!(json_of(json)["error"]["message"].as_str().unwrap().contains("400 ms"), "{json}");
    assert!(started.elapsed() < Duration::from_secs(8), "answered after {:?}", started.elapsed());
    assert_eq!(fake.count(), 0, "the upstream was asked");
}

#[test]
fn client_timeouts_of_zero_are_refused_at_start() {
    for (head, body) in [(0, 60_000), (30_000, 0)] {
        let mut c = config(&refused_url());
        c.header_read_timeout_ms = head;
        c.body_read_timeout_ms = body;
        let e = c.validate().unwrap_err();
        assert!(e.to_string().contains("header_read_timeout_ms and body_read_timeout_ms"), "{e}");
    }
}
