//! `vouch check --stream`: standard input read as it arrives, an exit as
//! soon as the refusal is certain (the writer still holding the pipe open),
//! and at the end of input `vouch check`'s verdict, byte for byte.
//!
//! Written to stay right whatever the core's stream engine decides early:
//! where a test needs an early refusal it uses one only size can make (a
//! string with no cap), and where it needs the end to decide it uses replies
//! an exact engine cannot refuse before their end (accepted ones, and every
//! prefix of one).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod common;

use std::io::Write;
use std::process::{Child, ChildStdin, Output};
use std::time::{Duration, Instant};

use common::{root, scratch, text, vouch};
use serde_json::{json, Value};

const PLATE: &str = "examples/contracts/plate.json";

/// How long a refused stream may take to exit while its writer waits.
const PROMPTLY: Duration = Duration::from_secs(3);

/// A string with no cap, in replies of at most 10 bytes: nothing but the
/// size can refuse a prefix of `"aaaa…`, so it is refused at byte 11 exactly.
fn ten_bytes() -> String {
    scratch("ten_bytes.json", br#"{"type": "string", "x-vouch": {"limits": {"max_bytes": 10}}}"#)
        .to_str()
        .unwrap()
        .to_owned()
}

fn spawn(args: &[&str]) -> (Child, ChildStdin) {
    let mut child = common::spawn(args);
    let stdin = child.stdin.take().unwrap();
    (child, stdin)
}

/// Wait up to `limit` for the child to exit on its own; `None` if it did
/// not (it is then killed, so a failing test does not hang).
fn exited_within(mut child: Child, limit: Duration) -> Option<Output> {
    let started = Instant::now();
    while started.elapsed() < limit {
        if child.try_wait().unwrap().is_some() {
            return Some(child.wait_with_output().unwrap());
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

fn json_of(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out.stdout)))
}

#[test]
fn a_refused_prefix_exits_while_the_writer_keeps_the_pipe_open() {
    let contract = ten_bytes();
    let (child, mut stdin) = spawn(&["check", "--stream", "--json", "-c", &contract]);
    stdin.write_all(br#""aaaaaaaaaaaaaaaaaaaa"#).unwrap();
    stdin.flush().unwrap();
    // `stdin` stays open (the writer has more to say) until the end of the test.
    let out = exited_within(child, PROMPTLY).expect("vouch waited for the writer to close the pipe");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let v = json_of(&out);
    assert_eq!(v["decided_at"], json!(11), "{v}");
    assert_eq!(v["outcome"], "refused");
    assert_eq!(v["problems"][0]["code"], "too_large");
    assert_eq!(text(&out.stdout).lines().count(), 1, "exactly one JSON object");
    drop(stdin);
}

#[test]
fn a_pending_prefix_waits_and_the_byte_that_decides_ends_it() {
    let contract = ten_bytes();
    let (mut child, mut stdin) = spawn(&["check", "--stream", "-c", &contract]);
    // Ten bytes of an open string: some completion (a closing quote) is accepted.
    stdin.write_all(br#""aaaaaaaaa"#).unwrap();
    stdin.flush().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    assert!(child.try_wait().unwrap().is_none(), "a prefix some completion accepts must not be refused");
    // The eleventh byte, in a piece of its own, decides.
    stdin.write_all(b"a").unwrap();
    stdin.flush().unwrap();
    let out = exited_within(child, PROMPTLY).expect("vouch did not exit at the byte that decided");
    assert_eq!(out.status.code(), Some(1));
    let human = text(&out.stdout);
    assert!(human.starts_with("refused (no_answer): the model did not answer\n  too_large"), "{human}");
    assert!(text(&out.stderr).contains("refused after 11 bytes; the rest of the reply was not read"));
    drop(stdin);
}

#[test]
fn an_early_refusal_by_size_is_the_refusal_check_gives() {
    let contract = ten_bytes();
    let reply = br#""aaaaaaaaaaaaaaaaaaaa""#;
    let checked = vouch(&["check", "--json", "-c", &contract], Some(reply));
    let streamed = vouch(&["check", "--stream", "--json", "-c", &contract], Some(reply));
    assert_eq!(streamed.status.code(), checked.status.code());
    let mut v = json_of(&streamed);
    assert_eq!(v.as_object_mut().unwrap().shift_remove("decided_at"), Some(json!(11)));
    assert_eq!(v, json_of(&checked));
}

#[test]
fn a_wrong_type_prefix_is_refused_at_the_quote_that_makes_it_a_string() {
    let (child, mut stdin) = spawn(&["check", "--stream", "--json", "-c", PLATE]);
    stdin.write_all(br#"{"productPresent":"no""#).unwrap();
    stdin.flush().unwrap();
    let out = exited_within(child, PROMPTLY).expect("vouch waited for the writer to close the pipe");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let v = json_of(&out);
    // `{"productPresent":"` is 19 bytes: after its quote no completion is a boolean.
    assert_eq!(v["decided_at"], json!(19), "{v}");
    assert_eq!(v["problems"][0]["code"], "wrong_type");
    assert_eq!(v["problems"][0]["path"], "/productPresent");
    assert_eq!(v["problems"][0]["class"], "no_answer");
    drop(stdin);
}

/// `vouch check` and `vouch check --stream` on the same reply, JSON and
/// human: (check's JSON line, the stream's JSON line, check's human
/// output, the stream's human output).
fn both(contract: &str, reply: &[u8]) -> (Output, Output, Output, Output) {
    (
        vouch(&["check", "--json", "-c", contract], Some(reply)),
        vouch(&["check", "--stream", "--json", "-c", contract], Some(reply)),
        vouch(&["check", "-c", contract], Some(reply)),
        vouch(&["check", "--stream", "-c", contract], Some(reply)),
    )
}

/// Where only the end decides: the stream's output is check's byte for
/// byte, with `"decided_at"`: the reply's length as the JSON object's last
/// member.
fn same_at_the_end(what: &str, contract: &str, reply: &[u8]) {
    let (checked, streamed, checked_human, streamed_human) = both(contract, reply);
    assert_eq!(streamed.status.code(), checked.status.code(), "{what}");
    let check_line = text(&checked.stdout);
    let want = format!("{},\"decided_at\":{}}}\n", check_line.trim_end().strip_suffix('}').unwrap(), reply.len());
    assert_eq!(text(&streamed.stdout), want, "{what}");
    assert_eq!(streamed_human.status.code(), checked_human.status.code(), "{what}");
    assert_eq!(text(&streamed_human.stdout), text(&checked_human.stdout), "{what}");
}

fn bundled() -> Vec<(String, String, Vec<u8>)> {
    let expect: Value =
        serde_json::from_str(&std::fs::read_to_string(root().join("examples/replies/expect.json")).unwrap()).unwrap();
    expect
        .as_object()
        .unwrap()
        .iter()
        .map(|(file, want)| {
            let contract = format!("examples/{}", want["contract"].as_str().unwrap());
            let reply = std::fs::read(root().join("examples/replies").join(file)).unwrap();
            (file.clone(), contract, reply)
        })
        .collect()
}

#[test]
fn every_bundled_reply_gets_check_s_verdict() {
    for (file, contract, reply) in bundled() {
        let (checked, streamed, _, _) = both(&contract, &reply);
        let want = json_of(&checked);
        if want["outcome"] == "accepted" {
            // No prefix of an accepted reply is refused: the end decides.
            same_at_the_end(&file, &contract, &reply);
            continue;
        }
        // Refused, perhaps before the end: then with problems of the stream's
        // own, each of which check lists too (by code and path).
        assert_eq!(streamed.status.code(), Some(1), "{file}");
        let got = json_of(&streamed);
        assert_eq!((&got["outcome"], &got["pass"], &got["value"]), (&want["outcome"], &want["pass"], &want["value"]));
        let decided_at = got["decided_at"].as_u64().unwrap();
        assert!(decided_at <= reply.len() as u64, "{file}: decided at {decided_at} of {}", reply.len());
        let key = |p: &Value| (p["code"].clone(), p["path"].clone());
        let listed: Vec<_> = want["problems"].as_array().unwrap().iter().map(key).collect();
        let problems = got["problems"].as_array().unwrap();
        assert!(!problems.is_empty(), "{file}");
        for p in problems {
            assert!(listed.contains(&key(p)), "{file}: {p} is not among check's {listed:?}");
        }
    }
}

#[test]
fn every_prefix_of_an_accepted_reply_is_decided_at_its_end_as_check_decides_it() {
    for (file, contract) in [
        ("plate/all_false.json", PLATE),
        ("plate/product_in_frame.json", PLATE),
        ("eligibility/valid.json", "examples/contracts/eligibility.json"),
    ] {
        let reply = std::fs::read(root().join("examples/replies").join(file)).unwrap();
        // Every prefix for the short replies; every 7th byte for the long one.
        let step = if reply.len() > 120 { 7 } else { 1 };
        for cut in (0..reply.len()).step_by(step) {
            same_at_the_end(&format!("{file} cut at {cut}"), contract, &reply[..cut]);
        }
    }
}

#[test]
fn stream_reads_standard_input_only() {
    let out = vouch(&["check", "--stream", "-c", PLATE, "examples/replies/plate/all_false.json"], None);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("--stream reads the reply from standard input") && err.contains("all_false.json"), "{err}");
    assert!(out.stdout.is_empty());
    let ok = br#"{"productPresent":false,"productTextPresent":false,"garbledText":false}"#;
    assert_eq!(vouch(&["check", "--stream", "-c", PLATE, "-"], Some(ok)).status.code(), Some(0));
}

#[test]
fn a_contract_that_does_not_compile_is_one_json_object_with_stream_too() {
    let bad = scratch("stream_typo.json", br#"{"type":"object","propertees":{}}"#);
    let out = vouch(&["check", "--stream", "--json", "-c", bad.to_str().unwrap()], Some(b"{}"));
    assert_eq!(out.status.code(), Some(2));
    let v = json_of(&out);
    assert_eq!(v["outcome"], "contract_error");
    assert_eq!(v["errors"][0]["keyword"], "propertees");
}
