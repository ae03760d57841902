//! Every completion body is read strictly (a repeated key anywhere is
//! `not_a_completion`), and a reply that holds the API key is
//! `secret_in_reply`, never shown and never sent back.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod fake_upstream;

use std::time::Duration;

use fake_upstream::{plate_contract, Fake, Step, CLEAN_PLATE};
use vouch_llm::{ApiKey, AskProblem, Asker, Backoff, Config, Message, Outcome, Timeouts, UpstreamCode};

const KEY: &str = r#"canary/"key\5e1f0a9c7b3d"#;

fn asker(base_url: &str, rounds: u32) -> Asker {
    let mut c = Config::new(base_url, "fake-model");
    c.api_key = Some(ApiKey::new(KEY));
    c.rounds = rounds;
    c.timeouts = Timeouts {
        connect: Duration::from_millis(500),
        first_byte: Duration::from_secs(3),
        total: Duration::from_secs(4),
        idle: Duration::from_secs(4),
    };
    c.backoff = Backoff { base: Duration::from_millis(1), max_wait: Duration::from_millis(20) };
    Asker::new(plate_contract(), c).unwrap()
}

async fn ask(body: &str) -> Outcome {
    let fake = Fake::start(vec![Step::body(200, body)]);
    asker(&fake.base_url, 1).ask(vec![Message::user("plate?")]).await
}

fn completion(message: &str, tail: &str) -> String {
    format!(
        r#"{{"id": "x", "object": "chat.completion", "choices": [{{"index": 0, "message": {message}, "finish_reason": "stop"}}]{tail}}}"#
    )
}

/// The founding story's ambiguity: the first `content` says a product is present, the last says none is.
const FIRST_SAYS_PRESENT: &str = r#"{"role": "assistant", "content": "{\"productPresent\":true,\"productTextPresent\":false,\"garbledText\":false}", "content": "{\"productPresent\":false,\"productTextPresent\":false,\"garbledText\":false}"}"#;

#[tokio::test]
async fn a_repeated_key_anywhere_in_a_completion_is_not_a_completion() {
    let clean = r#"{"role": "assistant", "content": "{\"productPresent\":false,\"productTextPresent\":false,\"garbledText\":false}"}"#;
    let usage = r#"{"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3}"#;
    let cases = [
        ("two content keys", completion(FIRST_SAYS_PRESENT, ""), "/choices/0/message/content", "content"),
        (
            "two choices",
            format!(
                r#"{{"choices": [{{"message": {clean}, "finish_reason": "stop"}}], "choices": [{{"message": {clean}, "finish_reason": "stop"}}]}}"#
            ),
            "/choices",
            "choices",
        ),
        (
            "two message keys",
            format!(r#"{{"choices": [{{"message": {clean}, "message": {clean}, "finish_reason": "stop"}}]}}"#),
            "/choices/0/message",
            "message",
        ),
        (
            "deep in usage",
            completion(
                clean,
                r#", "usage": {"prompt_tokens": 1, "completion_tokens_details": {"reasoning_tokens": 0, "reasoning_tokens": 9}}"#,
            ),
            "/usage/completion_tokens_details/reasoning_tokens",
            "reasoning_tokens",
        ),
        (
            "in tool_calls",
            completion(
                r#"{"role": "assistant", "content": null, "tool_calls": [{"id": "a", "type": "function", "function": {"name": "f", "name": "g", "arguments": "{}"}}]}"#,
                &format!(r#", "usage": {usage}"#),
            ),
            "/choices/0/message/tool_calls/0/function/name",
            "name",
        ),
        (
            "finish_reason twice",
            format!(r#"{{"choices": [{{"message": {clean}, "finish_reason": "length", "finish_reason": "stop"}}]}}"#),
            "/choices/0/finish_reason",
            "finish_reason",
        ),
    ];
    for (what, body, path, name) in cases {
        // serde_json reads each of these, keeping the last key.
        assert!(serde_json::from_str::<serde_json::Value>(&body).is_ok(), "{what}");
        let o = ask(&body).await;
        assert!(o.value().is_none(), "{what}: {:#?}", o.value());
        assert_eq!(o.problems.len(), 1, "{what}: {:#?}", o.problems);
        let p = &o.problems[0];
        assert_eq!(p.code(), "not_a_completion", "{what}");
        assert!(p.message().contains(&format!("repeats the key {name:?} at {path}")), "{what}: {}", p.message());
    }
}

#[tokio::test]
async fn the_founding_duplicate_is_refused_not_read_as_its_last_content() {
    let o = ask(&completion(FIRST_SAYS_PRESENT, "")).await;
    assert!(!o.is_accepted(), "{o:#?}");
    assert_eq!(o.problems[0].upstream_code(), Some(UpstreamCode::NotACompletion));
}

#[tokio::test]
async fn bodies_that_are_not_strict_json_are_not_a_completion() {
    for body in [
        completion(r#"{"role": "assistant", "content": "{}"}"#, ", }"),
        "{\"choices\": [], /* comment */ \"x\": 1}".to_owned(),
        "{'choices': []}".to_owned(),
        "\u{feff}{}".to_owned(),
    ] {
        let o = ask(&body).await;
        assert_eq!(o.problems[0].code(), "not_a_completion", "{body}");
    }
}

fn assert_secret_refused(o: &Outcome, what: &str) {
    let all = format!("{o:?} {}", o.to_json());
    assert!(!all.contains("5e1f0a9c7b3d"), "{what}: the key is in the outcome:\n{all}");
    assert!(o.problems.iter().any(|p| p.code() == "secret_in_reply"), "{what}: {:#?}", o.problems);
    assert!(o.rounds.iter().all(|r| r.reply.is_none() || !r.reply.as_deref().unwrap().contains("5e1f")), "{what}");
}

#[tokio::test]
async fn a_reply_holding_the_key_is_refused_in_every_field_and_form() {
    let json_key = serde_json::to_string(KEY).unwrap(); // "canary/\"key\\5e1f0a9c7b3d"
    let escaped_slash = json_key.replace('/', "\\/");
    let unicode: String = KEY.chars().map(|c| format!("\\u{:04x}", u32::from(c))).collect();
    let in_content = |v: &str| serde_json::to_string(&format!("{{\"productPresent\": {v}}}")).unwrap();
    let message_with = |field: &str, v: &str| format!(r#"{{"role": "assistant", "content": null, "{field}": {v}}}"#);
    let bodies = vec![
        ("content value", completion(&format!(r#"{{"role": "assistant", "content": {}}}"#, in_content(&json_key)), "")),
        (
            "content value, escaped inside the content",
            completion(&format!(r#"{{"role": "assistant", "content": {}}}"#, in_content(&escaped_slash)), ""),
        ),
        (
            "content property name",
            completion(
                &format!(
                    r#"{{"role": "assistant", "content": {}}}"#,
                    serde_json::to_string(&format!("{{{json_key}: true}}")).unwrap()
                ),
                "",
            ),
        ),
        (
            "content, \\u-escaped in the body",
            completion(&format!(r#"{{"role": "assistant", "content": "{unicode}"}}"#), ""),
        ),
        ("refusal", completion(&message_with("refusal", &json_key), "")),
        ("reasoning", completion(&message_with("reasoning_content", &json_key), "")),
        (
            "tool call name",
            completion(
                &format!(
                    r#"{{"role": "assistant", "content": null, "tool_calls": [{{"type": "function", "function": {{"name": {json_key}, "arguments": "{{}}"}}}}]}}"#
                ),
                "",
            ),
        ),
        (
            "finish_reason",
            format!(
                r#"{{"choices": [{{"message": {{"role": "assistant", "content": "{{}}"}}, "finish_reason": {json_key}}}]}}"#
            ),
        ),
        (
            "a key of usage",
            completion(r#"{"role": "assistant", "content": "{}"}"#, &format!(r#", "usage": {{{json_key}: 1}}"#)),
        ),
        ("the id", completion(r#"{"role": "assistant", "content": "{}"}"#, &format!(r#", "id2": {json_key}"#))),
        ("a body that is not JSON", format!("<html>{KEY}</html>")),
        ("an error in a 2xx", format!(r#"{{"error": {{"message": {json_key}}}}}"#)),
    ];
    for (what, body) in bodies {
        let o = ask(&body).await;
        assert_secret_refused(&o, what);
        assert_eq!(o.problems[0].got(), "[redacted]", "{what}");
        assert!(o.rounds[0].finish_reason.is_none(), "{what}");
    }
}

#[tokio::test]
async fn a_reply_holding_the_key_is_not_sent_back_and_the_next_round_asks_afresh() {
    let body = completion(
        &format!(
            r#"{{"role": "assistant", "content": {}}}"#,
            serde_json::to_string(&format!("{{\"k\": {}}}", serde_json::to_string(KEY).unwrap())).unwrap()
        ),
        "",
    );
    let fake = Fake::start(vec![Step::body(200, &body), Step::reply(CLEAN_PLATE)]);
    let o = asker(&fake.base_url, 2).ask(vec![Message::user("plate?")]).await;
    assert!(o.is_pass(), "{:#?}", o.problems);
    assert_eq!(o.rounds[0].problems()[0].code(), "secret_in_reply");
    let second = fake.seen()[1].messages();
    let sent = serde_json::to_string(&second).unwrap();
    assert!(!sent.contains("5e1f0a9c7b3d"), "the reply holding the key went back upstream: {sent}");
    assert!(second.iter().all(|m| m["role"] != "assistant"), "{second:#?}");
    assert!(
        second.last().unwrap()["content"].as_str().unwrap().contains("secret_in_reply") || sent.contains("API key")
    );
    let codes: Vec<&str> = o.rounds[0].problems().iter().map(AskProblem::code).collect();
    assert_eq!(codes, ["secret_in_reply"]);
}
