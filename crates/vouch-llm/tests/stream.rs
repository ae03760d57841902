//! Streamed rounds (`Config::stream`) against a raw streaming fake upstream on
//! 127.0.0.1 (`fake_upstream::SseFake`): the request is dropped as soon as the
//! contract's streaming check refuses the reply, and the server sees it; every
//! way a stream can be malformed is a refusal with its own code; a streamed
//! ask never accepts what the whole-reply check would refuse.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod fake_upstream;

use std::time::{Duration, Instant};

use fake_upstream::{
    chunk, plate_contract, reply_events, sse_data, sse_delta, sse_usage, Fake, SseFake, SseStep, Step, CLEAN_PLATE,
    SAID_NO, SSE_DONE,
};
use serde_json::{json, Value};
use vouch_llm::{reask_text, ApiKey, AskProblem, Asker, Backoff, Config, Message, Outcome, Timeouts, UpstreamCode};

const KEY: &str = "sk-stream-test-0123456789abcdef";

fn config(base_url: &str) -> Config {
    let mut c = Config::new(base_url, "fake-model");
    c.stream = true;
    c.timeouts = Timeouts {
        connect: Duration::from_millis(500),
        first_byte: Duration::from_secs(3),
        total: Duration::from_secs(5),
        idle: Duration::from_secs(5),
    };
    c.backoff = Backoff { base: Duration::from_millis(5), max_wait: Duration::from_secs(1) };
    c
}

fn asker_for(contract: vouch::Contract, base_url: &str, tweak: impl FnOnce(&mut Config)) -> Asker {
    let mut c = config(base_url);
    tweak(&mut c);
    Asker::new(contract, c).unwrap()
}

fn asker(base_url: &str, tweak: impl FnOnce(&mut Config)) -> Asker {
    asker_for(plate_contract(), base_url, tweak)
}

fn one_round(base_url: &str) -> Asker {
    asker(base_url, |c| c.rounds = 1)
}

fn ask_plate() -> Vec<Message> {
    vec![Message::user("Read back the plate in the photo.")]
}

/// The plate contract, refusing replies longer than `max_bytes`: the streaming
/// check refuses as soon as more than that has come.
fn small_plate_contract(max_bytes: usize) -> vouch::Contract {
    let mut doc: Value = serde_json::to_value(plate_contract().document()).unwrap();
    doc["x-vouch"] = json!({"limits": {"max_bytes": max_bytes}});
    vouch::Contract::from_json_str(&doc.to_string()).unwrap()
}

/// The only problem of a refused one-round ask: its code, checked to be an
/// upstream refusal of class `no_answer`.
fn refused_with(o: &Outcome) -> UpstreamCode {
    assert_eq!(o.outcome(), "refused", "{:#?}", o.rounds);
    assert!(o.value().is_none());
    assert_eq!(o.class(), Some(vouch::ProblemClass::NoAnswer));
    assert_eq!(o.problems.len(), 1, "{:#?}", o.problems);
    let code = o.problems[0].upstream_code().unwrap_or_else(|| panic!("not an upstream problem: {:?}", o.problems));
    assert!(o.problems[0].message().starts_with("(root): "), "{}", o.problems[0].message());
    code
}

// ---------------------------------------------------------------- the request

#[tokio::test]
async fn a_streamed_ask_sends_stream_true_with_usage_and_accepts_a_good_stream() {
    let fake = SseFake::start(vec![SseStep::reply(CLEAN_PLATE, 7)]);
    let o = one_round(&fake.base_url).ask(ask_plate()).await;
    assert!(o.is_pass(), "{:#?}", o.problems);
    assert_eq!(o.value(), Some(&serde_json::from_str::<Value>(CLEAN_PLATE).unwrap()));
    let body = &fake.seen()[0].body;
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
    let r = &o.rounds[0];
    assert_eq!(r.finish_reason.as_deref(), Some("stop"));
    assert_eq!(r.usage.unwrap().total_tokens, Some(107));
    let s = r.stream.unwrap();
    assert_eq!(s.bytes, CLEAN_PLATE.len());
    assert_eq!(s.deltas, 7);
    assert_eq!((s.tokens, s.tokens_from_usage), (7, true), "the final usage event's completion_tokens");
    assert_eq!(s.reply_tokens, Some(7));
    assert_eq!((s.decided_at_bytes, s.decided_at_tokens, s.dropped), (None, None, false));
}

#[tokio::test]
async fn a_non_streamed_ask_sends_no_stream_fields() {
    let fake = Fake::start(vec![Step::reply(CLEAN_PLATE)]);
    let o = asker(&fake.base_url, |c| c.stream = false).ask(ask_plate()).await;
    assert!(o.is_pass());
    assert!(fake.seen()[0].body.get("stream").is_none());
    assert!(fake.seen()[0].body.get("stream_options").is_none());
    assert_eq!(o.rounds[0].stream, None);
    assert_eq!(o.rounds[0].to_json()["stream"], Value::Null);
}

#[tokio::test]
async fn a_server_that_ignores_stream_and_answers_one_completion_is_read_as_one() {
    let fake = Fake::start(vec![Step::reply(CLEAN_PLATE)]);
    let o = one_round(&fake.base_url).ask(ask_plate()).await;
    assert!(o.is_pass(), "{:#?}", o.problems);
    assert_eq!(fake.seen()[0].body["stream"], true);
    assert_eq!(o.rounds[0].stream, None, "nothing streamed");
    assert_eq!(o.total_tokens(), 120);
}

// ---------------------------------------------------------------- (a) the drop, seen by the server

#[tokio::test]
async fn a_refused_stream_is_dropped_the_server_sees_the_connection_close_and_round_two_asks_again_told_why() {
    // Round 1: the first content delta is already refused (longer than the
    // contract's max_bytes; with the streaming engine, a string for a boolean
    // refuses at once too), then the server keeps streaming, slowly: 40
    // more deltas, 50 ms apart (2 s).
    let first = format!("{{\"productPresent\":\"no\",{}", " ".repeat(100));
    let mut events = vec![sse_data(&chunk(json!({"role": "assistant", "content": ""}), None)), sse_delta(&first)];
    events.extend((0..40).map(|_| sse_delta(" ")));
    events.push(SSE_DONE.to_owned());
    let slow = SseStep::events(events).slow_after(2, Duration::from_millis(50));
    let fake = SseFake::start(vec![slow, SseStep::reply(CLEAN_PLATE, 5)]);
    let a = asker_for(small_plate_contract(80), &fake.base_url, |c| c.rounds = 2);

    let started = Instant::now();
    let o = a.ask(ask_plate()).await;
    let took = started.elapsed();
    assert!(o.is_pass(), "round 2 answers: {:#?}", o.problems);
    assert_eq!(o.rounds.len(), 2);
    assert!(took < Duration::from_millis(1500), "the ask did not wait for the 2 s stream: {took:?}");

    // The server saw the client close the connection, well before its script ended.
    let first_conn = fake.wait_done(0, Duration::from_secs(3));
    assert!(!first_conn.finished, "the server never got to the end of its script");
    let closed = first_conn.closed_by_client.expect("the server saw the connection closed");
    let after = closed - first_conn.started;
    assert!(after < Duration::from_millis(1000), "closed {after:?} after the head; the script takes 2 s");
    assert!(first_conn.writes < first_conn.scripted / 2, "{} of {} writes", first_conn.writes, first_conn.scripted);

    // Round 1 is refused by the contract, decided within the first delta, dropped.
    let r1 = &o.rounds[0];
    assert_eq!(r1.outcome(), "refused");
    assert!(!r1.problems().is_empty());
    assert!(r1.problems().iter().all(|p| matches!(p, AskProblem::Contract(_))), "{:?}", r1.problems());
    let s1 = r1.stream.unwrap();
    assert!(s1.dropped);
    assert_eq!(s1.deltas, 1, "nothing after the refusing delta was read");
    assert_eq!(s1.bytes, first.len());
    let at = s1.decided_at_bytes.unwrap();
    assert!(at > 0 && at <= 81, "decided within the first delta, by byte 81 at the latest: {at}");
    assert_eq!(s1.decided_at_tokens, Some(1));
    assert_eq!(s1.reply_tokens, None, "a dropped stream reports no whole-reply cost");
    assert_eq!(r1.finish_reason, None);
    let j = r1.to_json();
    assert_eq!(j["stream"]["dropped"], true);
    assert_eq!(j["stream"]["decided_at_bytes"], at);
    assert_eq!(j["stream"]["decided_at_tokens"], 1);
    assert_eq!(j["stream"]["tokens_from"], "deltas");

    // Round 2 is the same conversation: the partial reply, then every problem.
    let second = fake.seen()[1].messages();
    assert_eq!(second.len(), 4);
    assert_eq!(second[2], json!({"role": "assistant", "content": first}));
    assert_eq!(second[3]["content"], reask_text(r1.problems()));
    let s2 = o.rounds[1].stream.unwrap();
    assert!(!s2.dropped);
    assert_eq!(s2.reply_tokens, Some(5));
}

#[tokio::test]
async fn usage_sent_with_every_chunk_counts_the_tokens_at_the_decision() {
    // Servers with continuous usage report completion_tokens in every chunk.
    let mut events = vec![];
    for (i, piece) in ["{\"productPresent\":", "false,", &" ".repeat(90)].iter().enumerate() {
        let mut c = chunk(json!({"content": piece}), None);
        c["usage"] = fake_upstream::usage(100, 3 * (i as u64 + 1));
        events.push(sse_data(&c));
    }
    events.extend(reply_events("", 0, "stop", Some((100, 40))));
    let fake = SseFake::start(vec![SseStep::events(events)]);
    let o = asker_for(small_plate_contract(80), &fake.base_url, |c| c.rounds = 1).ask(ask_plate()).await;
    assert_eq!(o.outcome(), "refused");
    let s = o.rounds[0].stream.unwrap();
    assert!(s.dropped);
    assert_eq!(s.deltas, 3);
    assert_eq!((s.tokens, s.tokens_from_usage), (9, true));
    assert_eq!(s.decided_at_tokens, Some(9));
    assert!(s.decided_at_bytes.unwrap() <= 81);
    assert_eq!(o.rounds[0].usage.unwrap().completion_tokens, Some(9), "the last usage told is kept");
    assert_eq!(o.rounds[0].to_json()["stream"]["tokens_from"], "usage");
}

// ---------------------------------------------------------------- (c) never a value the whole check refuses

#[tokio::test]
async fn a_streamed_verdict_is_the_whole_reply_check_for_every_reply_cut_every_way() {
    let contract = plate_contract();
    let replies = [
        CLEAN_PLATE,
        SAID_NO,
        "{}",
        r#"{"productPresent":false,"productTextPresent":false}"#,
        r#"{"productPresent":true,"productTextPresent":false,"garbledText":false}"#,
        "```json\n{\"productPresent\":false,\"productTextPresent\":false,\"garbledText\":false}\n```",
        r#"{"productPresent":false,"productTextPresent":false,"garbledText":false} and more"#,
        r#"{"productPresent":false,"productTextPresent":false,"garbledText":false,"extra":1}"#,
        r#"{"productPresent":false,"productTextPresent":false,"garbledText":fal"#,
        "Sure! {\"productPresent\":false,\"productTextPresent\":false,\"garbledText\":false}",
        r#"{"productPresent":false,"productPresent":false,"productTextPresent":false,"garbledText":false}"#,
    ];
    let pieces = [1, 3, 1000];
    let script = replies.iter().flat_map(|r| pieces.iter().map(move |n| SseStep::reply(r, *n))).collect();
    let fake = SseFake::start(script);
    let a = one_round(&fake.base_url);
    for reply in replies {
        let whole = contract.check(reply);
        for n in pieces {
            let o = a.ask(ask_plate()).await;
            let what = format!("{reply:?} in {n} pieces");
            assert_eq!(o.is_accepted(), whole.is_accepted(), "{what}: {:#?}", o.problems);
            match &whole {
                vouch::Verdict::Accepted(w) => {
                    assert_eq!(o.value(), Some(w.value()), "{what}");
                    assert_eq!(o.findings(), &w.findings[..], "{what}");
                    assert_eq!(o.repairs(), &w.repairs[..], "{what}");
                }
                vouch::Verdict::Refused(_) => {
                    assert_eq!(o.value(), None, "{what}");
                    assert!(!o.is_pass());
                    assert_eq!(o.to_json()["value"], Value::Null);
                    // Each problem the stream reported is one the whole check reports.
                    for p in &o.problems {
                        let AskProblem::Contract(p) = p else { panic!("{what}: {p}") };
                        assert!(
                            whole.problems().iter().any(|w| w.code == p.code && w.path == p.path),
                            "{what}: {p} not among {:?}",
                            whole.problems()
                        );
                    }
                }
            }
        }
    }
}

#[tokio::test]
async fn a_reply_pending_until_its_last_byte_and_then_refused_is_refused_not_partially_accepted() {
    // Every prefix of this reply but the whole could still be accepted: its closing brace says no.
    let reply = r#"{"productPresent":false,"productTextPresent":false}"#;
    let fake = SseFake::start(vec![SseStep::reply(reply, 10)]);
    let o = one_round(&fake.base_url).ask(ask_plate()).await;
    assert_eq!(o.outcome(), "refused");
    assert_eq!(o.value(), None);
    let codes: Vec<&str> = o.problems.iter().map(AskProblem::code).collect();
    assert_eq!(codes, ["missing"]);
    assert_eq!(o.problems[0].path(), "/garbledText");
    let s = o.rounds[0].stream.unwrap();
    assert_eq!(s.decided_at_bytes, Some(reply.len()));
    assert_eq!(s.bytes, reply.len());
}

// ---------------------------------------------------------------- (b) malformed streams, each its own code

async fn ask_one(step: SseStep) -> (Outcome, SseFake) {
    let fake = SseFake::start(vec![step]);
    let o = one_round(&fake.base_url).ask(ask_plate()).await;
    (o, fake)
}

#[tokio::test]
async fn an_event_that_is_not_json_is_stream_malformed() {
    let (o, _f) = ask_one(SseStep::events(vec![sse_delta("{"), "data: {\"choices\": [\n\n".into()])).await;
    assert_eq!(refused_with(&o), UpstreamCode::StreamMalformed);
    assert!(o.problems[0].message().contains("an event's data is not JSON"), "{}", o.problems[0].message());
}

#[tokio::test]
async fn an_event_that_is_not_a_chunk_is_stream_malformed() {
    for bad in [r#"{"hello": 1}"#, "[1, 2]", r#"{"choices": {"0": {}}}"#, r#"{"choices": [{"delta": {"content": 7}}]}"#]
    {
        let (o, _f) = ask_one(SseStep::events(vec![format!("data: {bad}\n\n"), SSE_DONE.into()])).await;
        assert_eq!(refused_with(&o), UpstreamCode::StreamMalformed, "{bad}");
        assert!(o.problems[0].message().contains("chunk") || o.problems[0].message().contains("not text"), "{bad}");
    }
}

#[tokio::test]
async fn an_event_with_a_repeated_key_is_stream_malformed_naming_the_key() {
    let dup =
        r#"data: {"choices": [{"index": 0, "delta": {"content": "{}", "content": "{\"productPresent\":false}"}}]}"#;
    let (o, _f) = ask_one(SseStep::events(vec![format!("{dup}\n\n"), SSE_DONE.into()])).await;
    assert_eq!(refused_with(&o), UpstreamCode::StreamMalformed);
    let m = o.problems[0].message();
    assert!(m.contains("repeats the key \"content\" at /choices/0/delta/content"), "{m}");
}

#[tokio::test]
async fn a_line_that_is_not_an_sse_field_is_stream_malformed() {
    let (o, _f) =
        ask_one(SseStep::events(vec![format!("{}\n\n", chunk(json!({"content": "{}"}), Some("stop")))])).await;
    assert_eq!(refused_with(&o), UpstreamCode::StreamMalformed);
    assert!(o.problems[0].message().contains("not a Server-Sent Events field"), "{}", o.problems[0].message());
}

#[tokio::test]
async fn an_oversized_event_is_stream_malformed() {
    let huge = format!("data: {}", "x".repeat(1024 * 1024 + 10));
    let (o, _f) = ask_one(SseStep::events(vec![huge])).await;
    assert_eq!(refused_with(&o), UpstreamCode::StreamMalformed);
    assert!(o.problems[0].message().contains("an event is larger than 1048576 bytes"), "{}", o.problems[0].message());
}

#[tokio::test]
async fn a_stream_that_ends_without_done_or_finish_reason_is_stream_incomplete() {
    // A clean end of the body, and a cut connection, after a reply that
    // looks complete: without [DONE] or a finish_reason it may not be.
    for step in [
        SseStep::events(vec![sse_delta(CLEAN_PLATE)]),
        SseStep::events(vec![sse_delta(CLEAN_PLATE)]).cut(),
        SseStep::events(vec![sse_delta(CLEAN_PLATE), "data: [DO".into()]),
    ] {
        let (o, _f) = ask_one(step).await;
        assert_eq!(refused_with(&o), UpstreamCode::StreamIncomplete, "{:?}", o.problems);
        assert!(o.problems[0].message().contains("neither [DONE] nor a finish_reason"), "{}", o.problems[0].message());
    }
}

#[tokio::test]
async fn a_finish_reason_or_done_alone_ends_a_stream() {
    let no_done = reply_events(CLEAN_PLATE, 2, "stop", None);
    let no_done: Vec<String> = no_done.into_iter().filter(|e| e != SSE_DONE).collect();
    let (o, _f) = ask_one(SseStep::events(no_done)).await;
    assert!(o.is_pass(), "{:?}", o.problems);
    let (o, _f) = ask_one(SseStep::events(reply_events(CLEAN_PLATE, 2, "", None))).await;
    assert!(o.is_pass(), "{:?}", o.problems);
}

#[tokio::test]
async fn an_error_event_is_stream_error_scrubbed() {
    // Another key's `sk-…` token is scrubbed from what is shown (an event
    // holding the asker's own key is `secret_in_reply`, before anything else).
    let other = "sk-someone-elses-key-98765";
    let said = format!("upstream overloaded, key {other}");
    for events in [
        vec![sse_delta("{\"productPresent\":"), sse_data(&json!({"error": {"message": said, "type": "server_error"}}))],
        vec![sse_delta("{"), format!("event: error\ndata: {said}\n\n")],
    ] {
        let fake = SseFake::start(vec![SseStep::events(events)]);
        let o = asker(&fake.base_url, |c| {
            c.rounds = 1;
            c.api_key = Some(ApiKey::new(KEY));
        })
        .ask(ask_plate())
        .await;
        assert_eq!(refused_with(&o), UpstreamCode::StreamError);
        let shown = serde_json::to_string(&o.to_json()).unwrap();
        assert!(shown.contains("upstream overloaded"), "{shown}");
        assert!(!shown.contains(other) && shown.contains("[redacted]"), "{shown}");
    }
}

#[tokio::test]
async fn a_stream_failure_is_repeated_like_a_failed_request() {
    let fake = SseFake::start(vec![SseStep::events(vec!["data: nope\n\n".into()]), SseStep::reply(CLEAN_PLATE, 3)]);
    let o = asker(&fake.base_url, |c| c.rounds = 2).ask(ask_plate()).await;
    assert!(o.is_pass());
    assert_eq!(o.rounds[0].problems()[0].code(), "stream_malformed");
    // The same request again, not a re-ask: nothing was judged.
    assert_eq!(fake.seen()[0].body, fake.seen()[1].body);
}

#[tokio::test]
async fn finish_reasons_refusals_tool_calls_and_reasoning_are_judged_as_in_a_whole_completion() {
    let cases: Vec<(Vec<String>, UpstreamCode)> = vec![
        (reply_events(CLEAN_PLATE, 3, "length", Some((10, 3))), UpstreamCode::CutOff),
        (reply_events("", 0, "content_filter", None), UpstreamCode::ContentFiltered),
        (
            vec![
                sse_data(&chunk(json!({"role": "assistant", "refusal": "I can't "}), None)),
                sse_data(&chunk(json!({"refusal": "help with that."}), Some("stop"))),
                SSE_DONE.into(),
            ],
            UpstreamCode::ModelRefused,
        ),
        (
            vec![
                sse_data(&chunk(
                    json!({"tool_calls": [{"index": 0, "id": "c1", "type": "function", "function": {"name": "inspect_plate", "arguments": ""}}]}),
                    None,
                )),
                sse_data(&chunk(
                    json!({"tool_calls": [{"index": 0, "function": {"arguments": "{}"}}]}),
                    Some("tool_calls"),
                )),
                SSE_DONE.into(),
            ],
            UpstreamCode::ToolCallsInstead,
        ),
        (
            vec![
                sse_data(&chunk(json!({"reasoning_content": "Let me think"}), None)),
                sse_data(&chunk(json!({"reasoning_content": " about the plate"}), Some("length"))),
                SSE_DONE.into(),
            ],
            UpstreamCode::ReasoningExhausted,
        ),
        (reply_events("   ", 1, "stop", None), UpstreamCode::EmptyContent),
    ];
    for (events, code) in cases {
        let (o, _f) = ask_one(SseStep::events(events)).await;
        assert_eq!(refused_with(&o), code);
    }
    let refusal = vec![
        sse_data(&chunk(json!({"refusal": "I can't "}), None)),
        sse_data(&chunk(json!({"refusal": "help."}), Some("stop"))),
        SSE_DONE.into(),
    ];
    let (o, _f) = ask_one(SseStep::events(refusal)).await;
    assert_eq!(o.problems[0].got(), "I can't help.", "refusal deltas are joined");
    let tools = vec![
        sse_data(&chunk(
            json!({"tool_calls": [{"index": 0, "function": {"name": "inspect_plate"}}]}),
            Some("tool_calls"),
        )),
        SSE_DONE.into(),
    ];
    let (o, _f) = ask_one(SseStep::events(tools)).await;
    assert_eq!(o.problems[0].got(), "tool_calls: inspect_plate");
}

#[tokio::test]
async fn a_key_split_across_deltas_is_secret_in_reply_and_kept_nowhere() {
    let (head, tail) = KEY.split_at(10);
    // The key arrives whole (as an undeclared key, refused at its closing quote) before the stream is dropped.
    let events = vec![
        sse_delta("{\"productPresent\": false, \""),
        sse_delta(head),
        sse_delta(tail),
        sse_delta("\": true}"),
        sse_data(&chunk(json!({}), Some("stop"))),
        SSE_DONE.into(),
    ];
    let fake = SseFake::start(vec![SseStep::events(events), SseStep::reply(CLEAN_PLATE, 2)]);
    let o = asker(&fake.base_url, |c| {
        c.rounds = 2;
        c.api_key = Some(ApiKey::new(KEY));
    })
    .ask(ask_plate())
    .await;
    assert!(o.is_pass(), "{:?}", o.problems);
    assert_eq!(o.rounds[0].problems()[0].code(), "secret_in_reply");
    assert_eq!(o.rounds[0].reply, None);
    let second = serde_json::to_string(&fake.seen()[1].body).unwrap();
    assert!(!second.contains(head) && !second.contains(tail), "the reply is not sent back: {second}");
    assert!(!serde_json::to_string(&o.to_json()).unwrap().contains(head));
}

#[tokio::test]
async fn a_stream_that_stalls_past_the_timeout_is_upstream_timeout() {
    let step = SseStep::events(vec![sse_delta("{"), sse_delta("}")]).slow_after(1, Duration::from_secs(3));
    let fake = SseFake::start(vec![step]);
    let o = asker(&fake.base_url, |c| {
        c.rounds = 1;
        c.timeouts.total = Duration::from_millis(400);
    })
    .ask(ask_plate())
    .await;
    assert_eq!(refused_with(&o), UpstreamCode::UpstreamTimeout);
    assert!(o.rounds[0].latency < Duration::from_secs(2));
}

#[tokio::test]
async fn the_usage_event_alone_is_read_and_a_usage_null_is_not_usage() {
    let mut events = vec![];
    let mut c = chunk(json!({"content": CLEAN_PLATE}), None);
    c["usage"] = Value::Null;
    events.push(sse_data(&c));
    events.push(sse_data(&chunk(json!({}), Some("stop"))));
    events.push(sse_usage(50, 12));
    events.push(SSE_DONE.into());
    let (o, _f) = ask_one(SseStep::events(events)).await;
    assert!(o.is_pass());
    assert_eq!(o.rounds[0].usage.unwrap().spent(), Some(62));
    let s = o.rounds[0].stream.unwrap();
    assert_eq!((s.deltas, s.tokens, s.reply_tokens), (1, 12, Some(12)));
}
