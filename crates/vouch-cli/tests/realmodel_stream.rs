//! Opt-in, end to end against a real small model (see ../shared/realmodel/README.md):
//! `vouch ask` with and without `--stream`, the same prompts at temperature 0,
//! over the bundled example contracts; prints the tokens and seconds each took
//! and the verdicts, and holds both to failing closed.
//!
//! ```sh
//! REALMODEL_DIR=… ../shared/realmodel/serve.sh 18080
//! VOUCH_REALMODEL_URL=http://127.0.0.1:18080/v1 cargo test -p vouch-cli --test realmodel_stream -- --nocapture
//! ```
//!
//! Without `VOUCH_REALMODEL_URL` it says it is skipped and passes: CI does not
//! build the model.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod common;

use std::process::{Command, Stdio};
use std::time::Instant;

use common::{root, text};
use serde_json::Value;

const CASES: [(&str, &str); 4] = [
    ("examples/contracts/plate.json", "A photo shows a clean white plate with nothing on it: no product, no text. Read it back."),
    ("examples/contracts/plate.json", "The photo shows a plate with a yoghurt pot still on it, label readable. Read it back."),
    (
        "examples/contracts/eligibility.json",
        "A student with a 3.1 GPA asks whether they are eligible for a scholarship requiring a 3.0 GPA and a recommendation letter they have not sent yet.",
    ),
    ("examples/contracts/eligibility.json", "Is a first-year student with no transcript eligible for the honours programme?"),
];

struct Run {
    seconds: f64,
    /// Tokens the upstream reported (`total_tokens` of rounds that reported usage).
    reported: u64,
    /// Completion tokens received in rounds that were dropped (no usage came for them).
    dropped_completion: u64,
    dropped_rounds: usize,
    rounds: usize,
    outcome: String,
    codes: Vec<String>,
    exit: Option<i32>,
}

fn ask(url: &str, model: &str, contract: &str, prompt: &str, mode: &str, stream: bool) -> Run {
    let mut args = vec!["ask", "--json", "--contract", contract, "--model", model, "--base-url", url];
    args.extend_from_slice(&["--api-key-env", "VOUCH_REALMODEL_NO_KEY", "--mode", mode, "--prompt", prompt]);
    args.extend_from_slice(&["--rounds", "3", "--temperature", "0", "--max-tokens", "256", "--timeout", "120s"]);
    if stream {
        args.push("--stream");
    }
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_vouch"))
        .args(&args)
        .current_dir(root())
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let seconds = started.elapsed().as_secs_f64();
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", text(&out.stdout), text(&out.stderr)));
    let rounds = v["rounds"].as_array().cloned().unwrap_or_default();
    let mut run = Run {
        seconds,
        reported: 0,
        dropped_completion: 0,
        dropped_rounds: 0,
        rounds: rounds.len(),
        outcome: v["outcome"].as_str().unwrap_or("").to_owned(),
        codes: v["problems"].as_array().unwrap().iter().map(|p| p["code"].as_str().unwrap().to_owned()).collect(),
        exit: out.status.code(),
    };
    for r in &rounds {
        run.reported += r["total_tokens"].as_u64().unwrap_or(0);
        if r["stream"]["dropped"] == true {
            run.dropped_rounds += 1;
            if r["total_tokens"].is_null() {
                run.dropped_completion += r["stream"]["tokens_received"].as_u64().unwrap_or(0);
            }
        }
    }
    // Fail closed, whatever the model said.
    if let Some(value) = v["value"].as_object() {
        let contract =
            vouch::Contract::from_json_str(&std::fs::read_to_string(root().join(contract)).unwrap()).unwrap();
        let value = Value::Object(value.clone());
        assert!(contract.check_value(&value).is_accepted(), "an accepted value passes the contract: {value}");
    } else {
        assert!(!run.codes.is_empty(), "a refusal names its problems");
    }
    assert!(!run.codes.iter().any(|c| c == "upstream_unreachable"), "the server at {url} answers");
    run
}

#[test]
fn streamed_and_whole_asks_of_a_real_model_compared() {
    let Ok(url) = std::env::var("VOUCH_REALMODEL_URL") else {
        eprintln!("realmodel_stream: skipped (set VOUCH_REALMODEL_URL=http://127.0.0.1:18080/v1 to run)");
        return;
    };
    let model = std::env::var("VOUCH_REALMODEL_MODEL").unwrap_or_else(|_| "smollm2-135m-instruct-q4_1".into());
    let (mut whole_s, mut stream_s, mut whole_t, mut stream_t) = (0.0, 0.0, 0, 0);
    eprintln!("realmodel_stream: contract | mode | prompt | whole: outcome rounds tokens s | stream: outcome rounds dropped tokens(+received in dropped) s");
    for mode in ["json", "plain"] {
        for (contract, prompt) in CASES {
            let whole = ask(&url, &model, contract, prompt, mode, false);
            let streamed = ask(&url, &model, contract, prompt, mode, true);
            eprintln!(
                "realmodel_stream: {contract} | {mode} | {}… | {} {} {} {:.1}s {:?} | {} {} {} {}(+{}) {:.1}s {:?}",
                &prompt[..24],
                whole.outcome,
                whole.rounds,
                whole.reported,
                whole.seconds,
                whole.codes,
                streamed.outcome,
                streamed.rounds,
                streamed.dropped_rounds,
                streamed.reported,
                streamed.dropped_completion,
                streamed.seconds,
                streamed.codes,
            );
            assert!(whole.exit.is_some() && streamed.exit.is_some());
            whole_s += whole.seconds;
            stream_s += streamed.seconds;
            whole_t += whole.reported;
            stream_t += streamed.reported + streamed.dropped_completion;
        }
    }
    eprintln!(
        "realmodel_stream: total whole {whole_t} tokens {whole_s:.1} s; streamed {stream_t} tokens (prompt tokens of dropped rounds not counted) {stream_s:.1} s"
    );
}
