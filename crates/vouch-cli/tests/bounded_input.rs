//! `vouch check` reads at most the contract's `max_bytes` + 1 bytes of a
//! reply: a larger one is refused as `too_large` ("at least N bytes")
//! without reading the rest, so memory stays ~`max_bytes` whatever the
//! input's size.
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
    assert_eq!(problem(&out)["message"], "(root): the reply is at least 11 bytes, over the limit of 10");
    let at = scratch("at.json", b"[1,2,3,45]");
    let out = vouch(&["check", "-c", contract, "--json", at.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
}
