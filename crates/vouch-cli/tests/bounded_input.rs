//! `vouch check` reads at most the contract's `max_bytes` + 1 bytes of a
//! reply, so memory stays ~`max_bytes` whatever the input's size. A larger
//! file (its size known) gets the verdict the core gives its bytes: the
//! problems certain within the limit, then `too_large` with its size. A
//! larger standard input is refused as `too_large` ("at least N bytes")
//! without reading the rest.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod common;

use std::time::{Duration, Instant};

use common::{scratch, text, vouch};
use serde_json::Value;

const LIMIT: usize = 4 * 1024 * 1024;

fn problem(out: &std::process::Output) -> Value {
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["problems"][0].clone()
}

#[test]
fn sixty_four_megabytes_on_stdin_are_refused_unread() {
    let contract = scratch("any.json", b"{}");
    let big = vec![0u8; 64 << 20];
    let started = Instant::now();
    let out = vouch(&["check", "-c", contract.to_str().unwrap(), "--json", "-"], Some(&big));
    assert!(started.elapsed() < Duration::from_secs(60));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let p = problem(&out);
    assert_eq!(p["code"], "too_large");
    assert_eq!(p["got"], format!("at least {} bytes", LIMIT + 1));
    assert_eq!(p["message"], format!("(root): the reply is at least {} bytes, over the limit of {LIMIT}", LIMIT + 1));
}

#[test]
fn a_file_over_the_limit_is_refused_and_one_at_it_is_read() {
    let contract = scratch("small.json", br#"{"x-vouch": {"limits": {"max_bytes": 10}}}"#);
    let contract = contract.to_str().unwrap();
    let over = scratch("over.json", b"[1,2,3,4,5,6]");
    let out = vouch(&["check", "-c", contract, "--json", over.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(problem(&out)["message"], "(root): the reply is 13 bytes, over the limit of 10");
    // What the core gives the same bytes (and so the bindings), a problem
    // found within the limit first.
    let c = vouch::Contract::from_json_str(
        r#"{"properties": {"a": {"type": "boolean"}}, "x-vouch": {"limits": {"max_bytes": 10}}}"#,
    )
    .unwrap();
    let typed = scratch(
        "typed.json",
        br#"{"properties": {"a": {"type": "boolean"}}, "x-vouch": {"limits": {"max_bytes": 10}}}"#,
    );
    let replies: [&[u8]; 4] = [
        b"[1,2,3,4,5,6]",
        br#"{"a": "no", "b": 1}"#,
        b"\xff\xfe{\"a\": 1}   ",
        "{\"a\": \"\u{e9}\u{e9}\u{e9}\u{e9}\"}".as_bytes(),
    ];
    for reply in replies {
        let file = scratch("reply.json", reply);
        let out = vouch(&["check", "-c", typed.to_str().unwrap(), "--json", file.to_str().unwrap()], None);
        assert_eq!(out.status.code(), Some(1));
        let want = vouch::to_json_string(&c.check(reply).to_json());
        assert_eq!(text(&out.stdout).trim_end(), want, "{}", String::from_utf8_lossy(reply));
    }
    let out = vouch(
        &["check", "-c", typed.to_str().unwrap(), "--json", scratch("no.json", replies[1]).to_str().unwrap()],
        None,
    );
    assert_eq!(problem(&out)["code"], "wrong_type");
    let at = scratch("at.json", b"[1,2,3,45]");
    let out = vouch(&["check", "-c", contract, "--json", at.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
}
