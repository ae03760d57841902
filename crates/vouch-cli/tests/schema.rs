//! `vouch schema`: provider schemas and the prompt, as the command prints them.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod common;

use common::{scratch, text, vouch};
use serde_json::{json, Value};

#[test]
fn openai_response_format_for_the_plate() {
    let out = vouch(&["schema", "-c", "examples/contracts/plate.json", "--for", "openai", "--name", "plate"], None);
    assert_eq!(out.status.code(), Some(0));
    insta::assert_snapshot!("openai_plate", text(&out.stdout));
}

#[test]
fn every_provider_for_the_eligibility_contract() {
    for p in ["openai", "anthropic", "gemini", "json-schema"] {
        let out = vouch(&["schema", "-c", "examples/contracts/eligibility.json", "--for", p, "--bare"], None);
        assert_eq!(out.status.code(), Some(0), "{p}: {}", text(&out.stderr));
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(!v.to_string().contains("x-vouch"), "{p}");
    }
}

#[test]
fn the_prompt() {
    let out = vouch(&["schema", "-c", "examples/contracts/eligibility.json", "--prompt"], None);
    assert_eq!(out.status.code(), Some(0));
    insta::assert_snapshot!("prompt_eligibility", text(&out.stdout));
}

#[test]
fn what_cannot_be_sent_exits_2_with_keyword_and_location() {
    let c = scratch(
        "unique.json",
        json!({"type": "object", "properties": {"tags": {"type": "array", "uniqueItems": true}}, "required": ["tags"]})
            .to_string()
            .as_bytes(),
    );
    let out = vouch(&["schema", "-c", c.to_str().unwrap(), "--for", "openai"], None);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("/properties/tags: uniqueItems: OpenAI strict structured outputs cannot express this keyword"),
        "{err}"
    );
}

#[test]
fn a_name_the_provider_would_refuse_exits_2_before_anything_is_printed() {
    for provider in ["openai", "anthropic"] {
        let out =
            vouch(&["schema", "-c", "examples/contracts/plate.json", "--for", provider, "--name", "plate check"], None);
        assert_eq!(out.status.code(), Some(2), "{provider}");
        assert!(out.stdout.is_empty(), "{provider}");
        let err = text(&out.stderr);
        assert!(err.contains(r#"--name "plate check""#) && err.contains("1 to 64 ASCII letters"), "{provider}: {err}");
    }
    // Gemini's export carries no name.
    let out =
        vouch(&["schema", "-c", "examples/contracts/plate.json", "--for", "gemini", "--name", "plate check"], None);
    assert_eq!(out.status.code(), Some(0));
}
