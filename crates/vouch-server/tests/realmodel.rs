//! Opt-in, end to end: the founding plate gate through `vouch serve`, with
//! the official OpenAI Python SDK as the client and a real small model
//! behind the gateway (see ../shared/realmodel/README.md).
//!
//! ```sh
//! REALMODEL_DIR=$PWD/target/realmodel ../shared/realmodel/serve.sh 18080
//! VOUCH_REALMODEL_URL=http://127.0.0.1:18080/v1 cargo test -p vouch-server --test realmodel -- --nocapture
//! ```
//!
//! The SDK is the one `sources/generate` installs (`target/sources/venv`, or
//! `VOUCH_SOURCES_DIR`). Where llama-server crashes in its warm-up inside
//! `ggml_backend_amx_mul_mat` (a processor that lists AMX in its flags but
//! whose kernel or sandbox does not let a process use it), start it with
//! `LLAMA_ARG_REPACK=false` in the environment of `serve.sh`: no weights are
//! repacked for AMX.
//!
//! Each prompt goes whole and streamed, with the contract named in
//! `response_format` and by the `x-vouch-contract` header. A refusal whose
//! code is an upstream one (the model never reached) fails the test, and so
//! does a run in which no reply at all was accepted.
//!
//! Every answer the SDK hands over is one the plate contract accepts (checked
//! again here, by the contract itself); every other is a refusal the SDK
//! raised, with a vouch code. Without `VOUCH_REALMODEL_URL` it says it is
//! skipped and passes: CI does not build the model.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod common;

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

#[test]
fn the_plate_gate_through_the_gateway_with_the_python_sdk() {
    let Ok(url) = std::env::var("VOUCH_REALMODEL_URL") else {
        eprintln!("realmodel: VOUCH_REALMODEL_URL is not set: skipped (see ../shared/realmodel/README.md)");
        return;
    };
    let sources = std::env::var_os("VOUCH_SOURCES_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/sources"));
    let python = sources.join("venv/bin/python");
    assert!(python.exists(), "the OpenAI SDK is not installed: run sources/generate ({})", python.display());
    let mut c = common::config(&url);
    c.defaults.rounds = Some(3);
    c.timeouts.first_byte_ms = 120_000;
    c.timeouts.idle_ms = 60_000;
    c.timeouts.total_ms = 180_000;
    let r = common::start(c, vec![common::TOKEN.to_owned()]);
    let out = Command::new(python)
        .arg(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/sdk/realmodel_plate.py"))
        .env("VOUCH_BASE_URL", format!("{}/v1", r.url))
        .env("VOUCH_TOKEN", common::TOKEN)
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let plate = vouch::Contract::from_json_str(
        &std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/contracts/plate.json")).unwrap(),
    )
    .unwrap();
    println!("| mode | stream | outcome | rounds | content or code | prompt |\n|---|---|---|---:|---|---|");
    let (mut lines, mut accepted) = (0, 0);
    for line in stdout.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        lines += 1;
        let rounds = v["vouch"]["rounds"].as_array().map_or(0, Vec::len);
        if v["outcome"] == "accepted" {
            accepted += 1;
            let content = v["content"].as_str().unwrap();
            assert!(plate.check(content).is_accepted(), "handed over, yet not accepted by the contract: {content}");
            // Named in response_format or by header, the plate contract is the one enforced.
            assert_eq!(v["vouch"]["contract"], "plate", "{line}");
            let compact = serde_json::from_str::<Value>(content).map_or_else(|_| content.to_owned(), |c| c.to_string());
            println!("| {} | {} | accepted | {rounds} | `{compact}` | {} |", v["mode"], v["stream"], v["prompt"]);
        } else {
            let code = v["code"].as_str().unwrap_or("");
            assert!(!code.is_empty(), "a refusal names its code: {line}");
            // A contract refusal, not a request the gateway turned away (a 400).
            assert_eq!(v["status"], 422, "{line}");
            // A refusal is the model's doing, not a model that was never reached.
            assert!(!code.starts_with("upstream_"), "the model did not answer through the gateway: {line}");
            println!("| {} | {} | refused | | {code} {} | {} |", v["mode"], v["stream"], v["problems"], v["prompt"]);
        }
    }
    assert_eq!(lines, 12);
    assert!(accepted > 0, "not one reply of the real model was accepted");
}
