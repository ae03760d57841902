//! Opt-in, end to end against a real small model on loopback (SmolLM2-135M
//! served by llama.cpp's server; see ../shared/realmodel/README.md):
//!
//! ```sh
//! ../shared/realmodel/setup.sh && ../shared/realmodel/serve.sh 18080
//! VOUCH_REALMODEL_URL=http://127.0.0.1:18080/v1 cargo test -p vouch-llm --test realmodel -- --nocapture
//! ```
//!
//! Without `VOUCH_REALMODEL_URL` the test says it is skipped and passes: CI
//! does not build the model. A model this small answers badly in every way a
//! trust layer must handle; the test holds vouch to failing closed: whatever
//! the model says, an accepted value passes the contract, and a refusal
//! names its problems with documented codes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod fake_upstream;

use std::time::Duration;

use fake_upstream::plate_contract;
use vouch_llm::{Asker, Config, Message, Mode, Timeouts, UpstreamCode};

#[tokio::test]
async fn a_real_small_model_is_vouched_for_or_refused_never_passed_unchecked() {
    let Ok(url) = std::env::var("VOUCH_REALMODEL_URL") else {
        eprintln!("realmodel: skipped (set VOUCH_REALMODEL_URL=http://127.0.0.1:18080/v1 to run against a real model)");
        return;
    };
    let model = std::env::var("VOUCH_REALMODEL_MODEL").unwrap_or_else(|_| "smollm2-135m-instruct-q4_1".into());
    let contract = plate_contract();
    let core_codes = [
        "empty_reply",
        "not_json",
        "truncated",
        "trailing_text",
        "duplicate_key",
        "too_deep",
        "too_large",
        "number_overflow",
        "ambiguous_reply",
        "missing",
        "wrong_type",
        "not_allowed",
        "out_of_range",
        "too_short",
        "too_long",
        "pattern_mismatch",
        "format_mismatch",
        "unexpected_property",
        "not_unique",
        "no_match",
    ];
    for mode in [Mode::Schema, Mode::Json, Mode::Plain] {
        let mut config = Config::new(url.clone(), model.clone());
        config.mode = mode;
        config.rounds = 3;
        config.temperature = Some(0.0);
        config.max_tokens = Some(96);
        config.max_total_tokens = Some(20_000);
        config.deadline = Some(Duration::from_secs(120));
        config.timeouts = Timeouts {
            connect: Duration::from_secs(2),
            first_byte: Duration::from_secs(60),
            total: Duration::from_secs(90),
            idle: Duration::from_secs(90),
        };
        let asker = Asker::new(contract.clone(), config).unwrap();
        let outcome = asker
            .ask(vec![Message::user(
                "A photo shows a clean white plate with nothing on it: no product, no text. Read it back.",
            )])
            .await;
        eprintln!("realmodel: mode {}: {}", mode.as_str(), outcome.to_json());
        assert!(!outcome.rounds.is_empty() && outcome.rounds.len() <= 3);
        if let Some(value) = outcome.value() {
            assert!(contract.check_value(value).is_accepted(), "an accepted value passes the contract: {value}");
        } else {
            assert!(!outcome.problems.is_empty(), "a refusal names its problems");
        }
        for p in &outcome.problems {
            let known = core_codes.contains(&p.code()) || UpstreamCode::ALL.iter().any(|c| c.as_str() == p.code());
            assert!(known, "undocumented code {}", p.code());
            assert!(!p.message().is_empty());
        }
        assert!(
            !outcome.problems.iter().any(|p| p.code() == "upstream_unreachable"),
            "the server at {url} answers (start it with ../shared/realmodel/serve.sh)"
        );
    }
}
