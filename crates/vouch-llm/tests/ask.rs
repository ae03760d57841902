//! `Asker` against a real HTTP fake upstream on 127.0.0.1, scripted per test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod fake_upstream;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fake_upstream::{plate_contract, raw_server, refused_url, usage, Fake, Raw, Step, CLEAN_PLATE, SAID_NO};
use serde_json::{json, Value};
use vouch_llm::{
    Answer, ApiKey, AskProblem, Asker, Backoff, Config, ImageUrl, Message, Mode, Outcome, Round, SetupError, Source,
    Timeouts, UpstreamCode, REPLY_ONLY,
};

fn config(base_url: &str) -> Config {
    let mut c = Config::new(base_url, "fake-model");
    c.timeouts = Timeouts {
        connect: Duration::from_millis(500),
        first_byte: Duration::from_secs(3),
        total: Duration::from_secs(4),
        idle: Duration::from_secs(4),
    };
    c.backoff = Backoff { base: Duration::from_millis(5), max_wait: Duration::from_secs(3) };
    c
}

fn asker(base_url: &str, tweak: impl FnOnce(&mut Config)) -> Asker {
    let mut c = config(base_url);
    tweak(&mut c);
    Asker::new(plate_contract(), c).unwrap()
}

fn ask_plate() -> Vec<Message> {
    vec![Message::user("Read back the plate in the photo.")]
}

fn codes(o: &Outcome) -> Vec<&str> {
    o.problems.iter().map(AskProblem::code).collect()
}

fn only_code(o: &Outcome) -> &str {
    assert_eq!(o.problems.len(), 1, "{:#?}", o.problems);
    o.problems[0].code()
}

fn clean_plate() -> Value {
    serde_json::from_str(CLEAN_PLATE).unwrap()
}

// ---------------------------------------------------------------- the happy path and the request

#[tokio::test]
async fn a_good_reply_is_accepted_in_one_round_and_the_request_is_what_openai_expects() {
    let fake = Fake::start(vec![Step::reply(CLEAN_PLATE)]);
    let a = asker(&fake.base_url, |c| {
        c.api_key = Some(ApiKey::new("sk-test-key"));
        c.temperature = Some(0.0);
        c.max_tokens = Some(64);
        c.schema_name = "plate".into();
    });
    let o = a.ask(ask_plate()).await;
    assert!(o.is_pass(), "{:#?}", o.problems);
    assert_eq!(o.source(), Source::Model);
    assert_eq!(o.value(), Some(&clean_plate()));
    assert_eq!(o.rounds.len(), 1);
    assert_eq!(o.rounds[0].http_status, Some(200));
    assert_eq!(o.rounds[0].finish_reason.as_deref(), Some("stop"));
    assert_eq!(o.total_tokens(), 120);

    let seen = fake.seen();
    assert_eq!(seen.len(), 1);
    let req = &seen[0];
    assert_eq!(req.path, "/v1/chat/completions");
    assert_eq!(req.headers["authorization"], "Bearer sk-test-key");
    assert_eq!(req.body["model"], "fake-model");
    assert_eq!(req.body["temperature"], 0.0);
    assert_eq!(req.body["max_tokens"], 64);
    let rf = &req.body["response_format"];
    assert_eq!(rf["type"], "json_schema");
    assert_eq!(rf["json_schema"]["name"], "plate");
    assert_eq!(rf["json_schema"]["strict"], true);
    assert_eq!(rf["json_schema"]["schema"]["required"], json!(["productPresent", "productTextPresent", "garbledText"]));
    let messages = req.messages();
    assert_eq!(messages.len(), 2);
    assert_eq!(messages[0]["role"], "system");
    assert_eq!(messages[0]["content"], plate_contract().prompt());
    assert_eq!(messages[1], json!({"role": "user", "content": "Read back the plate in the photo."}));
}

#[tokio::test]
async fn modes_send_the_right_response_format() {
    let fake = Fake::start(vec![Step::reply(CLEAN_PLATE), Step::reply(CLEAN_PLATE)]);
    assert!(asker(&fake.base_url, |c| c.mode = Mode::Json).ask(ask_plate()).await.is_pass());
    assert!(asker(&fake.base_url, |c| c.mode = Mode::Plain).ask(ask_plate()).await.is_pass());
    let seen = fake.seen();
    assert_eq!(seen[0].body["response_format"], json!({"type": "json_object"}));
    assert!(seen[1].body.get("response_format").is_none());
    // Every mode carries the contract's instructions.
    for s in &seen {
        assert!(s.messages()[0]["content"].as_str().unwrap().contains("Reply with the JSON object only."));
    }
}

#[test]
fn a_contract_openai_cannot_express_is_refused_in_schema_mode_only() {
    let contract = vouch::Contract::from_json_str(
        r#"{"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true}},
            "required": ["tags"], "additionalProperties": false}"#,
    )
    .unwrap();
    let err = Asker::new(contract.clone(), config("http://127.0.0.1:9/v1")).unwrap_err();
    assert!(matches!(err, SetupError::Export(_)), "{err}");
    assert!(err.to_string().contains("uniqueItems"), "{err}");
    let mut json_mode = config("http://127.0.0.1:9/v1");
    json_mode.mode = Mode::Json;
    assert!(Asker::new(contract, json_mode).is_ok());
}

#[test]
fn bad_setups_are_errors() {
    let bad_url = Asker::new(plate_contract(), config("ftp://example.invalid")).unwrap_err();
    assert!(matches!(bad_url, SetupError::BaseUrl(_)));
    let mut no_rounds = config("http://127.0.0.1:9/v1");
    no_rounds.rounds = 0;
    assert!(matches!(Asker::new(plate_contract(), no_rounds).unwrap_err(), SetupError::NoRounds));
    // A schema name OpenAI would answer with a 400, refused before any request.
    let mut bad_name = config("http://127.0.0.1:9/v1");
    bad_name.schema_name = "plate check".into();
    let err = Asker::new(plate_contract(), bad_name).unwrap_err();
    assert!(matches!(&err, SetupError::SchemaName(n) if n == "plate check"), "{err}");
    let mut json_mode = config("http://127.0.0.1:9/v1");
    json_mode.schema_name = "plate check".into();
    json_mode.mode = Mode::Json;
    assert!(Asker::new(plate_contract(), json_mode).is_ok(), "json mode sends no name");
    let mut header = config("http://127.0.0.1:9/v1");
    header.headers.0.push(("X-Secret".into(), "line\nbreak-secret".into()));
    let err = Asker::new(plate_contract(), header).unwrap_err();
    assert!(matches!(err, SetupError::Header(_)));
    assert!(!err.to_string().contains("break-secret"));
}

#[tokio::test]
async fn the_callers_system_message_is_kept_and_the_contract_follows_it() {
    let fake = Fake::start(vec![Step::reply(CLEAN_PLATE)]);
    let a = asker(&fake.base_url, |_| {});
    let o = a.ask(vec![Message::system("You inspect plates."), Message::user("Go.")]).await;
    assert!(o.is_pass());
    let messages = fake.seen()[0].messages();
    assert_eq!(messages.len(), 2);
    let system = messages[0]["content"].as_str().unwrap();
    assert!(system.starts_with("You inspect plates.\n\n"));
    assert!(system.ends_with(&plate_contract().prompt()));
}

#[tokio::test]
async fn images_go_as_image_url_parts_and_files_as_data_urls() {
    let dir = std::env::temp_dir().join(format!("vouch-llm-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let png = dir.join("plate.png");
    std::fs::write(&png, b"\x89PNG\r\n\x1a\nfake").unwrap();
    let fake = Fake::start(vec![Step::reply(CLEAN_PLATE)]);
    let images =
        vec![ImageUrl::from_file(&png).unwrap(), ImageUrl::from_file_or_url("https://example.invalid/p.jpg").unwrap()];
    let o = asker(&fake.base_url, |_| {}).ask(vec![Message::user_with_images("Read it back.", images)]).await;
    assert!(o.is_pass());
    let content = &fake.seen()[0].messages()[1]["content"];
    assert_eq!(content[0], json!({"type": "text", "text": "Read it back."}));
    assert_eq!(content[1]["type"], "image_url");
    assert_eq!(content[1]["image_url"]["url"], "data:image/png;base64,iVBORw0KGgpmYWtl");
    assert_eq!(content[2]["image_url"]["url"], "https://example.invalid/p.jpg");
    assert!(ImageUrl::from_file(&dir.join("notes.txt")).is_err());
    assert!(format!("{:?}", ImageUrl::from_file(&png).unwrap()).contains("bytes)"));
}

// ---------------------------------------------------------------- the founding gate's story

#[tokio::test]
async fn founding_story_two_rounds_refused_then_the_fallback_plate_marked_as_fallback() {
    let fake = Fake::start(vec![Step::reply("{}"), Step::reply(SAID_NO)]);
    let a = asker(&fake.base_url, |_| {});
    let last_good = clean_plate();
    let o = a.ask_with_fallback(ask_plate(), Some(&last_good)).await;

    assert_eq!(fake.count(), 2);
    assert_eq!(o.outcome(), "refused");
    assert!(!o.is_pass() && !o.is_accepted());
    assert!(o.is_fallback());
    assert_eq!(o.source(), Source::Fallback);
    assert_eq!(o.value(), Some(&last_good));
    // Both rounds' problems: three missing booleans, then "no" for a boolean.
    assert_eq!(codes(&o), ["missing", "missing", "missing", "wrong_type"]);
    let paths: Vec<&str> = o.problems.iter().map(AskProblem::path).collect();
    assert_eq!(paths, ["/productPresent", "/productTextPresent", "/garbledText", "/productPresent"]);
    assert_eq!(o.rounds.len(), 2);
    assert_eq!(o.rounds[0].problems().len(), 3);
    assert_eq!(o.rounds[1].problems()[0].message(), "/productPresent: expected boolean, got string \"no\"");

    let j = o.to_json();
    assert_eq!(j["outcome"], "refused");
    assert_eq!(j["pass"], false);
    assert_eq!(j["source"], "fallback");
    assert_eq!(j["value"], last_good);
    assert_eq!(j["rounds"].as_array().unwrap().len(), 2);
    assert_eq!(j["rounds"][1]["problems"][0]["code"], "wrong_type");
    assert_eq!(j["problems"][3]["got"], "\"no\"");
}

#[tokio::test]
async fn founding_story_passes_when_round_two_answers() {
    let fake = Fake::start(vec![Step::reply("{}"), Step::reply(CLEAN_PLATE)]);
    let last_good = json!({"productPresent": true, "productTextPresent": false, "garbledText": false});
    let o = asker(&fake.base_url, |_| {}).ask_with_fallback(ask_plate(), Some(&last_good)).await;
    assert!(o.is_pass(), "{:#?}", o.problems);
    assert_eq!(o.source(), Source::Model);
    assert_eq!(o.value(), Some(&clean_plate()));
    assert!(o.problems.is_empty(), "an accepted outcome has no problems; round 1's are in its round");
    assert_eq!(o.rounds[0].outcome(), "refused");
    assert_eq!(o.rounds[1].outcome(), "accepted");
    assert_eq!(o.to_json()["source"], "model");
}

#[tokio::test]
async fn a_true_answer_is_accepted_with_findings_not_passed() {
    let fake =
        Fake::start(vec![Step::reply(r#"{"productPresent":true,"productTextPresent":false,"garbledText":false}"#)]);
    let o = asker(&fake.base_url, |_| {}).ask(ask_plate()).await;
    assert!(o.is_accepted() && !o.is_pass());
    assert_eq!(o.findings()[0].message, "a product is still in frame");
}

#[tokio::test]
async fn the_reask_lists_every_problem_in_plain_words_in_the_same_conversation() {
    let fake = Fake::start(vec![Step::reply("{}"), Step::reply(SAID_NO), Step::reply(CLEAN_PLATE)]);
    let o = asker(&fake.base_url, |c| c.rounds = 3).ask(ask_plate()).await;
    assert!(o.is_pass());
    let seen = fake.seen();
    let second = seen[1].messages();
    assert_eq!(second.len(), 4, "{second:#?}");
    assert_eq!(second[0], seen[0].messages()[0], "the same system message");
    assert_eq!(second[1], seen[0].messages()[1], "the same question");
    assert_eq!(second[2], json!({"role": "assistant", "content": "{}"}));
    assert_eq!(second[3]["role"], "user");
    let reask = second[3]["content"].as_str().unwrap();
    for path in ["/productPresent", "/productTextPresent", "/garbledText"] {
        assert!(
            reask.contains(&format!("- {path}: expected a value, got nothing (the property is missing)")),
            "{reask}"
        );
    }
    assert!(reask.ends_with(REPLY_ONLY), "{reask}");
    // Round 3 carries the whole conversation, the second re-ask naming "no".
    let third = seen[2].messages();
    assert_eq!(third.len(), 6);
    assert_eq!(third[4], json!({"role": "assistant", "content": SAID_NO}));
    let reask = third[5]["content"].as_str().unwrap();
    assert!(reask.contains("- /productPresent: expected boolean, got \"no\""), "{reask}");
    assert!(reask.contains(REPLY_ONLY));
}

#[tokio::test]
async fn a_reply_refused_for_its_size_is_not_sent_back_in_the_next_round() {
    // The plate contract held to 256 bytes: a reply over it is refused as too_large, and
    // echoing it would cost the next round its whole length in input tokens.
    let mut doc = plate_contract().document().clone();
    doc["x-vouch"]["limits"] = json!({"max_bytes": 256});
    let contract = vouch::Contract::from_json_str(&doc.to_string()).unwrap();
    let big = format!(r#"{{"productPresent": true, "note": "{}"}}"#, "x".repeat(400));
    let fake = Fake::start(vec![Step::reply(&big), Step::reply("{}"), Step::reply(CLEAN_PLATE)]);
    let mut c = config(&fake.base_url);
    c.rounds = 3;
    let o = Asker::new(contract, c).unwrap().ask(ask_plate()).await;
    assert!(o.is_pass(), "{:#?}", o.problems);
    assert!(o.rounds[0].problems().iter().any(|p| p.code() == "too_large"), "{:#?}", o.rounds[0].problems());
    let seen = fake.seen();
    let second = seen[1].messages();
    assert_eq!(second.len(), 3, "the question, then the re-ask alone: {second:#?}");
    assert_eq!(second[1], seen[0].messages()[1], "the same question");
    assert_eq!(second[2]["role"], "user");
    let reask = second[2]["content"].as_str().unwrap();
    assert!(reask.contains("(root): expected at most 256 bytes"), "{reask}");
    assert!(!reask.contains(&"x".repeat(400)), "the reply is not quoted in the re-ask");
    // A refusal within the limit is sent back as ever.
    let third = seen[2].messages();
    assert_eq!(third.len(), 5, "{third:#?}");
    assert_eq!(third[3], json!({"role": "assistant", "content": "{}"}));
}

#[tokio::test]
async fn the_round_cap_holds() {
    let fake = Fake::start(vec![Step::reply("{}"); 5]);
    let o = asker(&fake.base_url, |c| c.rounds = 3).ask(ask_plate()).await;
    assert_eq!(fake.count(), 3);
    assert_eq!(o.rounds.len(), 3);
    assert_eq!(o.problems.len(), 9);
    assert!(matches!(o.answer, Answer::Refused));
    let one = Fake::start(vec![Step::reply("{}"); 2]);
    asker(&one.base_url, |c| c.rounds = 1).ask(ask_plate()).await;
    assert_eq!(one.count(), 1);
}

// ---------------------------------------------------------------- budget and deadline

#[tokio::test]
async fn the_token_budget_stops_before_a_round_that_would_overrun_it() {
    // Round 1 costs 600 (500 + 100); round 2's prompt alone is at least 600 more.
    let step = Step::completion(json!({"role": "assistant", "content": "{}"}), "stop", usage(500, 100));
    let fake = Fake::start(vec![step.clone(), step.clone(), step]);
    let o = asker(&fake.base_url, |c| {
        c.rounds = 3;
        c.max_total_tokens = Some(1000);
    })
    .ask(ask_plate())
    .await;
    assert_eq!(fake.count(), 1);
    assert_eq!(codes(&o), ["missing", "missing", "missing", "budget_spent"]);
    assert!(o.problems[3].message().contains("600 of 1000 tokens"), "{}", o.problems[3].message());
}

#[tokio::test]
async fn the_token_budget_once_spent_stops_the_ask() {
    let step = Step::completion(json!({"role": "assistant", "content": "{}"}), "stop", usage(100, 20));
    let fake = Fake::start(vec![step.clone(), step.clone(), step.clone(), step]);
    let o = asker(&fake.base_url, |c| {
        c.rounds = 4;
        c.max_total_tokens = Some(250);
    })
    .ask(ask_plate())
    .await;
    // 120 after round 1 (next prompt >= 120: 240, leaves 10), 240 after round 2,
    // and round 3's prompt alone would leave nothing.
    assert_eq!(fake.count(), 2);
    assert_eq!(o.problems.last().unwrap().code(), "budget_spent");
    assert_eq!(o.total_tokens(), 240);
}

#[tokio::test]
async fn each_round_s_completion_is_capped_at_what_the_budget_leaves() {
    // Round 1: 300 + 100 of 1000; round 2's prompt is at least 400, so its
    // completion may take 200; round 3's at least 400 + 150 = 550 more.
    let fake = Fake::start(vec![
        Step::completion(json!({"role": "assistant", "content": "{}"}), "stop", usage(300, 100)),
        Step::completion(json!({"role": "assistant", "content": "{}"}), "stop", usage(450, 150)),
        Step::reply(CLEAN_PLATE),
    ]);
    let o = asker(&fake.base_url, |c| {
        c.rounds = 3;
        c.max_total_tokens = Some(1000);
    })
    .ask(ask_plate())
    .await;
    let limits: Vec<(Value, Value)> =
        fake.seen().iter().map(|s| (s.body["max_completion_tokens"].clone(), s.body["max_tokens"].clone())).collect();
    // No limit configured: `max_completion_tokens` is sent, lowered round by round.
    assert_eq!(limits, [(json!(1000), Value::Null), (json!(200), Value::Null)]);
    assert_eq!(o.problems.last().map(|p| p.code()), Some("budget_spent"));

    // A configured `max_tokens` is the field capped (and kept where it is lower).
    let fake = Fake::start(vec![
        Step::completion(json!({"role": "assistant", "content": "{}"}), "stop", usage(300, 100)),
        Step::completion(json!({"role": "assistant", "content": "{}"}), "stop", usage(450, 150)),
    ]);
    asker(&fake.base_url, |c| {
        c.rounds = 2;
        c.max_tokens = Some(256);
        c.max_total_tokens = Some(1000);
    })
    .ask(ask_plate())
    .await;
    let limits: Vec<(Value, Value)> =
        fake.seen().iter().map(|s| (s.body["max_completion_tokens"].clone(), s.body["max_tokens"].clone())).collect();
    assert_eq!(limits, [(Value::Null, json!(256)), (Value::Null, json!(200))]);

    // Without a budget nothing is added.
    let fake = Fake::start(vec![Step::reply(CLEAN_PLATE)]);
    asker(&fake.base_url, |_| {}).ask(ask_plate()).await;
    let body = &fake.seen()[0].body;
    assert!(body.get("max_completion_tokens").is_none() && body.get("max_tokens").is_none(), "{body}");
}

#[tokio::test]
async fn a_round_whose_prompt_would_leave_no_token_of_the_budget_does_not_start() {
    // 300 + 200 of 1000; round 2's prompt is at least 500: nothing left for its completion.
    let fake = Fake::start(vec![
        Step::completion(json!({"role": "assistant", "content": "{}"}), "stop", usage(300, 200)),
        Step::reply(CLEAN_PLATE),
    ]);
    let o = asker(&fake.base_url, |c| {
        c.rounds = 2;
        c.max_total_tokens = Some(1000);
    })
    .ask(ask_plate())
    .await;
    assert_eq!(fake.count(), 1);
    assert_eq!(o.problems.last().map(|p| p.code()), Some("budget_spent"));
}

#[tokio::test]
async fn a_budget_cannot_be_kept_without_usage() {
    let step = Step::completion(json!({"role": "assistant", "content": "{}"}), "stop", Value::Null);
    let fake = Fake::start(vec![step.clone(), step]);
    let o = asker(&fake.base_url, |c| c.max_total_tokens = Some(10_000)).ask(ask_plate()).await;
    assert_eq!(fake.count(), 1);
    assert_eq!(o.problems.last().unwrap().code(), "budget_spent");
    assert!(o.problems.last().unwrap().message().contains("no token usage"));
}

#[tokio::test]
async fn the_deadline_cuts_a_hanging_request() {
    let fake = Fake::start(vec![Step::reply(CLEAN_PLATE).delay(Duration::from_secs(3))]);
    let start = Instant::now();
    let o = asker(&fake.base_url, |c| c.deadline = Some(Duration::from_millis(200))).ask(ask_plate()).await;
    let took = start.elapsed();
    assert_eq!(only_code(&o), "deadline");
    assert!(took >= Duration::from_millis(190) && took < Duration::from_millis(1500), "{took:?}");
    assert_eq!(o.rounds.len(), 1);
}

#[tokio::test]
async fn the_deadline_is_not_waited_past() {
    let fake = Fake::start(vec![Step::body(429, "{}").header("retry-after", "2"), Step::reply(CLEAN_PLATE)]);
    let start = Instant::now();
    let o = asker(&fake.base_url, |c| c.deadline = Some(Duration::from_millis(300))).ask(ask_plate()).await;
    assert!(start.elapsed() < Duration::from_millis(1000));
    assert_eq!(codes(&o), ["rate_limited", "deadline"]);
    assert!(o.problems[1].message().contains("would pass while waiting"), "{}", o.problems[1].message());
    assert_eq!(fake.count(), 1);
}

// ---------------------------------------------------------------- Retry-After and retries

#[tokio::test]
async fn retry_after_is_honoured() {
    let fake = Fake::start(vec![
        Step::body(429, r#"{"error": {"message": "slow down"}}"#).header("retry-after", "1"),
        Step::reply(CLEAN_PLATE),
    ]);
    let o = asker(&fake.base_url, |_| {}).ask(ask_plate()).await;
    assert!(o.is_pass(), "{:#?}", o.problems);
    let seen = fake.seen();
    let gap = seen[1].at - seen[0].at;
    assert!(gap >= Duration::from_millis(1000), "waited {gap:?}");
    assert!(gap < Duration::from_millis(1600), "waited {gap:?}: 1 s plus at most 10% jitter");
    assert_eq!(o.rounds[0].http_status, Some(429));
    assert_eq!(o.rounds[0].problems()[0].code(), "rate_limited");
    assert!(o.rounds[1].waited >= Duration::from_millis(1000));
}

#[tokio::test]
async fn retry_after_past_the_longest_wait_fails_fast() {
    let fake = Fake::start(vec![Step::body(429, "{}").header("retry-after", "3600"), Step::reply(CLEAN_PLATE)]);
    let started = std::time::Instant::now();
    let o = asker(&fake.base_url, |c| c.backoff.max_wait = Duration::from_millis(200)).ask(ask_plate()).await;
    assert!(!o.is_accepted());
    assert_eq!(o.problems[0].code(), "rate_limited");
    assert_eq!(fake.count(), 1, "not asked again: the upstream said to wait an hour");
    assert!(started.elapsed() < Duration::from_millis(190), "did not wait: {:?}", started.elapsed());
}

#[tokio::test]
async fn retry_after_within_the_longest_wait_is_kept() {
    let fake = Fake::start(vec![Step::body(429, "{}").header("retry-after", "1"), Step::reply(CLEAN_PLATE)]);
    let o = asker(&fake.base_url, |c| c.backoff.max_wait = Duration::from_millis(1500)).ask(ask_plate()).await;
    assert!(o.is_pass());
    let seen = fake.seen();
    let gap = seen[1].at - seen[0].at;
    assert!(gap >= Duration::from_millis(1000) && gap <= Duration::from_millis(1600), "waited {gap:?}");
}

#[tokio::test]
async fn retry_after_ms_and_server_errors_are_retried() {
    let fake = Fake::start(vec![
        Step::body(503, "overloaded").header("retry-after-ms", "150"),
        Step::body(502, "<html>bad gateway</html>"),
        Step::reply(CLEAN_PLATE),
    ]);
    let o = asker(&fake.base_url, |c| c.rounds = 3).ask(ask_plate()).await;
    assert!(o.is_pass(), "{:#?}", o.problems);
    let seen = fake.seen();
    assert!(seen[1].at - seen[0].at >= Duration::from_millis(150));
    let statuses: Vec<Option<u16>> = o.rounds.iter().map(|r| r.http_status).collect();
    assert_eq!(statuses, [Some(503), Some(502), Some(200)]);
    // A repeated request is the same conversation: nothing was added.
    assert_eq!(seen[0].body, seen[2].body);
}

#[tokio::test]
async fn server_errors_in_every_round_are_upstream_status() {
    let fake = Fake::start(vec![Step::body(500, r#"{"error": {"message": "boom"}}"#); 3]);
    let o = asker(&fake.base_url, |_| {}).ask(ask_plate()).await;
    assert_eq!(fake.count(), 2);
    assert_eq!(codes(&o), ["upstream_status", "upstream_status"]);
    assert_eq!(o.problems[0].got(), "HTTP 500: boom");
    assert!(o.problems[0].message().contains("HTTP 500 Internal Server Error"), "{}", o.problems[0].message());
    assert_eq!(o.class(), Some(vouch::ProblemClass::NoAnswer));
}

#[tokio::test]
async fn rate_limits_in_every_round_are_rate_limited() {
    let fake = Fake::start(vec![Step::body(429, "{}"); 3]);
    let o = asker(&fake.base_url, |_| {}).ask(ask_plate()).await;
    assert_eq!(codes(&o), ["rate_limited", "rate_limited"]);
}

#[tokio::test]
async fn client_errors_are_not_retried_and_their_body_is_scrubbed() {
    let body = r#"{"error": {"message": "Incorrect API key provided: sk-live-abc123XYZ. Header was Bearer sk-live-abc123XYZ"}}"#;
    let fake = Fake::start(vec![Step::body(401, body), Step::reply(CLEAN_PLATE)]);
    let o = asker(&fake.base_url, |c| {
        c.rounds = 3;
        c.api_key = Some(ApiKey::new("sk-live-abc123XYZ"));
    })
    .ask(ask_plate())
    .await;
    assert_eq!(fake.count(), 1, "a 4xx is not retried");
    assert_eq!(only_code(&o), "upstream_status");
    let shown = format!("{}", o.to_json());
    assert!(!shown.contains("abc123XYZ"), "{shown}");
    assert!(o.problems[0].message().contains("check the API key"));
    let fake = Fake::start(vec![Step::body(404, "model not found"), Step::reply(CLEAN_PLATE)]);
    let o = asker(&fake.base_url, |_| {}).ask(ask_plate()).await;
    assert_eq!(fake.count(), 1);
    assert_eq!(o.problems[0].got(), "HTTP 404: model not found");
}

#[tokio::test]
async fn redirects_are_not_followed() {
    let fake = Fake::start(vec![Step::body(307, "").header("location", "https://elsewhere.invalid/v1?key=secret")]);
    let o = asker(&fake.base_url, |_| {}).ask(ask_plate()).await;
    assert_eq!(only_code(&o), "upstream_status");
    let m = o.problems[0].message();
    assert!(m.contains("redirected to https://elsewhere.invalid/v1"), "{m}");
    assert!(!m.contains("secret"));
}

// ---------------------------------------------------------------- the connection

#[tokio::test]
async fn connection_refused_is_upstream_unreachable() {
    let url = refused_url();
    let o = asker(&url, |_| {}).ask(ask_plate()).await;
    assert_eq!(codes(&o), ["upstream_unreachable", "upstream_unreachable"], "retried within the rounds");
    assert!(
        o.problems[0].message().starts_with("(root): cannot connect to http://127.0.0.1:"),
        "{}",
        o.problems[0].message()
    );
    assert_eq!(o.rounds[0].http_status, None);
}

#[tokio::test]
async fn a_connection_closed_without_a_response_is_upstream_unreachable() {
    let url = raw_server(2, Raw::Close);
    let o = asker(&url, |_| {}).ask(ask_plate()).await;
    assert_eq!(codes(&o), ["upstream_unreachable", "upstream_unreachable"]);
}

#[tokio::test]
async fn a_slow_first_byte_is_upstream_timeout() {
    let fake = Fake::start(vec![Step::reply(CLEAN_PLATE).delay(Duration::from_secs(2)); 2]);
    let start = Instant::now();
    let o = asker(&fake.base_url, |c| {
        c.rounds = 1;
        c.timeouts.first_byte = Duration::from_millis(150);
    })
    .ask(ask_plate())
    .await;
    assert!(start.elapsed() < Duration::from_millis(1500));
    assert_eq!(only_code(&o), "upstream_timeout");
    assert!(o.problems[0].message().contains("no response within 150 ms"), "{}", o.problems[0].message());
}

#[tokio::test]
async fn a_body_that_never_ends_is_upstream_timeout() {
    let url = raw_server(1, Raw::SlowBody(Duration::from_secs(2)));
    let start = Instant::now();
    let o = asker(&url, |c| {
        c.rounds = 1;
        c.timeouts.total = Duration::from_millis(250);
    })
    .ask(ask_plate())
    .await;
    assert!(start.elapsed() < Duration::from_millis(1500));
    assert_eq!(only_code(&o), "upstream_timeout");
    assert_eq!(o.rounds[0].http_status, Some(200));
}

// ---------------------------------------------------------------- bodies that are no answer

#[tokio::test]
async fn a_2xx_body_that_is_not_a_completion_is_refused() {
    for body in [
        "<html>hello</html>",
        r#"{"error": {"message": "upstream provider failed"}}"#,
        r#"{"choices": []}"#,
        r#"{"choices": [{"message": {"role": "assistant", "content": 42}}]}"#,
        r#"[1, 2]"#,
    ] {
        let fake = Fake::start(vec![Step::body(200, body)]);
        let o = asker(&fake.base_url, |c| c.rounds = 1).ask(ask_plate()).await;
        assert_eq!(only_code(&o), "not_a_completion", "{body}");
        assert_eq!(o.problems[0].class(), vouch::ProblemClass::NoAnswer);
    }
}

#[tokio::test]
async fn content_given_as_text_parts_is_read() {
    let message = json!({"role": "assistant", "content": [{"type": "text", "text": CLEAN_PLATE}]});
    let fake = Fake::start(vec![Step::completion(message, "stop", usage(1, 1))]);
    assert!(asker(&fake.base_url, |_| {}).ask(ask_plate()).await.is_pass());
}

#[tokio::test]
async fn empty_or_null_content_is_empty_content() {
    for content in [Value::Null, json!(""), json!("  \n")] {
        let fake =
            Fake::start(vec![Step::completion(json!({"role": "assistant", "content": content}), "stop", usage(1, 1))]);
        let o = asker(&fake.base_url, |c| c.rounds = 1).ask(ask_plate()).await;
        assert_eq!(only_code(&o), "empty_content", "{content}");
    }
}

#[tokio::test]
async fn reasoning_without_content_is_reasoning_exhausted() {
    let with_text =
        json!({"role": "assistant", "content": null, "reasoning_content": "Let me look at the plate carefully..."});
    let tokens_only = Step::body(
        200,
        &json!({"choices": [{"message": {"role": "assistant", "content": ""}, "finish_reason": "length"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 64, "total_tokens": 74,
                          "completion_tokens_details": {"reasoning_tokens": 64}}})
        .to_string(),
    );
    let fake = Fake::start(vec![Step::completion(with_text, "length", usage(10, 64)), tokens_only]);
    let a = asker(&fake.base_url, |c| c.rounds = 1);
    let o = a.ask(ask_plate()).await;
    assert_eq!(only_code(&o), "reasoning_exhausted");
    assert!(o.problems[0].message().contains("spent its budget before answering"));
    assert!(o.problems[0].got().contains("Let me look"));
    let o = a.ask(ask_plate()).await;
    assert_eq!(only_code(&o), "reasoning_exhausted");
    assert_eq!(o.problems[0].got(), "no content; 64 reasoning tokens");
}

#[tokio::test]
async fn finish_reason_length_is_cut_off_even_when_the_reply_looks_complete() {
    let fake = Fake::start(vec![
        Step::completion(json!({"role": "assistant", "content": CLEAN_PLATE}), "length", usage(50, 16)),
        Step::reply(CLEAN_PLATE),
    ]);
    let o = asker(&fake.base_url, |c| c.rounds = 1).ask(ask_plate()).await;
    assert_eq!(only_code(&o), "cut_off");
    assert!(o.problems[0].message().contains("cut off at the token limit"));
    assert_eq!(o.rounds[0].finish_reason.as_deref(), Some("length"));
    // With a second round, the cut-off reply goes back with the problem.
    let fake = Fake::start(vec![
        Step::completion(json!({"role": "assistant", "content": "{\"productPresent\":fal"}), "length", usage(50, 16)),
        Step::reply(CLEAN_PLATE),
    ]);
    let o = asker(&fake.base_url, |_| {}).ask(ask_plate()).await;
    assert!(o.is_pass());
    let second = fake.seen()[1].messages();
    assert_eq!(second[2]["content"], "{\"productPresent\":fal");
    let reask = second[3]["content"].as_str().unwrap();
    assert!(reask.contains("cut off at the token limit"), "{reask}");
    assert!(reask.ends_with(REPLY_ONLY));
}

#[tokio::test]
async fn a_refusal_is_model_refused() {
    let message = json!({"role": "assistant", "content": null, "refusal": "I can't help with that."});
    let fake = Fake::start(vec![Step::completion(message, "stop", usage(1, 1))]);
    let o = asker(&fake.base_url, |c| c.rounds = 1).ask(ask_plate()).await;
    assert_eq!(only_code(&o), "model_refused");
    assert_eq!(o.problems[0].got(), "I can't help with that.");
}

#[tokio::test]
async fn a_content_filter_is_content_filtered() {
    let fake = Fake::start(vec![Step::completion(
        json!({"role": "assistant", "content": null}),
        "content_filter",
        usage(1, 0),
    )]);
    let o = asker(&fake.base_url, |c| c.rounds = 1).ask(ask_plate()).await;
    assert_eq!(only_code(&o), "content_filtered");
}

#[tokio::test]
async fn tool_calls_where_content_was_expected_are_refused() {
    let message = json!({"role": "assistant", "content": null, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "inspect_plate", "arguments": "{}"}}]});
    let fake = Fake::start(vec![Step::completion(message, "tool_calls", usage(1, 1))]);
    let o = asker(&fake.base_url, |c| c.rounds = 1).ask(ask_plate()).await;
    assert_eq!(only_code(&o), "tool_calls_instead");
    assert_eq!(o.problems[0].got(), "tool_calls: inspect_plate");
}

#[tokio::test]
async fn every_upstream_code_serializes_in_the_core_problem_shape() {
    let fake = Fake::start(vec![Step::body(500, "x")]);
    let o = asker(&fake.base_url, |c| c.rounds = 1).ask(ask_plate()).await;
    let p = serde_json::to_value(&o.problems[0]).unwrap();
    let keys: Vec<&str> = p.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["code", "class", "path", "expected", "got", "message"]);
    assert_eq!(p["class"], "no_answer");
    assert_eq!(p["path"], "");
    let core = serde_json::to_value(&plate_contract().check("{}").problems()[0]).unwrap();
    let core_keys: Vec<&str> = core.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, core_keys);
    for code in UpstreamCode::ALL {
        assert_eq!(serde_json::to_value(code).unwrap(), json!(code.as_str()));
        assert_eq!(code.class(), vouch::ProblemClass::NoAnswer);
    }
}

// ---------------------------------------------------------------- the fallback

#[tokio::test]
async fn a_fallback_that_fails_the_contract_is_not_returned_and_says_so() {
    let fake = Fake::start(vec![Step::reply("{}"), Step::reply("{}")]);
    let bad = json!({"productPresent": "no", "productTextPresent": false, "garbledText": false});
    let o = asker(&fake.base_url, |_| {}).ask_with_fallback(ask_plate(), Some(&bad)).await;
    assert!(matches!(o.answer, Answer::Refused));
    assert_eq!(o.value(), None);
    assert_eq!(o.source(), Source::Model);
    let last = o.problems.last().unwrap();
    assert_eq!(last.code(), "fallback_refused");
    assert!(last.message().contains("fails the contract too"), "{}", last.message());
    assert!(last.message().contains("/productPresent: expected boolean"), "{}", last.message());
    assert_eq!(o.fallback_problems.len(), 1);
    assert_eq!(o.to_json()["value"], Value::Null);
}

#[tokio::test]
async fn a_fallback_is_checked_and_repaired_like_a_reply() {
    let contract = vouch::Contract::from_json_str(
        r#"{"type": "object", "properties": {"score": {"type": "integer", "minimum": 0, "maximum": 100,
             "x-vouch": {"repair": ["clamp"]}}}, "required": ["score"], "additionalProperties": false}"#,
    )
    .unwrap();
    let fake = Fake::start(vec![Step::reply("nope")]);
    let mut c = config(&fake.base_url);
    c.rounds = 1;
    let a = Asker::new(contract, c).unwrap();
    let o = a.ask_with_fallback(ask_plate(), Some(&json!({"score": 140}))).await;
    assert!(o.is_fallback());
    assert_eq!(o.value(), Some(&json!({"score": 100})));
    assert_eq!(o.repairs()[0].rule, "clamp");
    assert_eq!(codes(&o), ["not_json"]);
}

// ---------------------------------------------------------------- concurrency, hooks, spans

#[test]
fn an_asker_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Asker>();
    assert_send_sync::<Outcome>();
    fn assert_send<T: Send>(_: &T) {}
    let a = asker("http://127.0.0.1:9/v1", |_| {});
    let fut = a.ask(ask_plate());
    assert_send(&fut);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_asker_serves_concurrent_asks() {
    let fake = Fake::start(vec![Step::reply(CLEAN_PLATE); 8]);
    let a = Arc::new(asker(&fake.base_url, |_| {}));
    let tasks: Vec<_> = (0..8)
        .map(|i| {
            let a = Arc::clone(&a);
            tokio::spawn(async move { a.ask(vec![Message::user(format!("plate {i}"))]).await })
        })
        .collect();
    for t in tasks {
        assert!(t.await.unwrap().is_pass());
    }
    assert_eq!(fake.count(), 8);
}

#[tokio::test]
async fn the_hook_sees_every_round() {
    let fake = Fake::start(vec![Step::reply("{}"), Step::reply(CLEAN_PLATE)]);
    let seen: Arc<Mutex<Vec<Round>>> = Arc::default();
    let sink = Arc::clone(&seen);
    let a = asker(&fake.base_url, |_| {}).with_hook(move |r| sink.lock().unwrap().push(r.clone()));
    let o = a.ask(ask_plate()).await;
    let rounds = seen.lock().unwrap().clone();
    assert_eq!(rounds, o.rounds);
    assert_eq!(rounds[0].usage.unwrap().total_tokens, Some(120));
    assert_eq!(rounds[1].finish_reason.as_deref(), Some("stop"));
    let j = rounds[0].to_json();
    assert_eq!(j["round"], 1);
    assert_eq!(j["prompt_tokens"], 100);
    assert_eq!(j["completion_tokens"], 20);
    assert_eq!(j["total_tokens"], 120);
    assert_eq!(j["outcome"], "refused");
    assert!(j["latency_ms"].is_u64());
}
