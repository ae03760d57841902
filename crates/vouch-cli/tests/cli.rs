//! The `vouch` command, run as a user runs it: exit codes, JSON output, the
//! human output (snapshots), and errors that name the file and location.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod common;

use common::{root, scratch, text, vouch};
use serde_json::{json, Value};

#[test]
fn every_bundled_reply_gets_the_same_verdict_from_the_command() {
    let expect: Value =
        serde_json::from_str(&std::fs::read_to_string(root().join("examples/replies/expect.json")).unwrap()).unwrap();
    for (file, want) in expect.as_object().unwrap() {
        let reply = format!("examples/replies/{file}");
        let out = vouch(
            &["check", "--contract", &format!("examples/{}", want["contract"].as_str().unwrap()), &reply, "--json"],
            None,
        );
        assert_eq!(out.status.code(), Some(want["exit"].as_i64().unwrap() as i32), "{file}: {}", text(&out.stderr));
        let stdout = text(&out.stdout);
        assert_eq!(stdout.lines().count(), 1, "exactly one JSON object: {stdout}");
        let got: Value = serde_json::from_str(&stdout).unwrap();
        for key in ["outcome", "pass", "value", "repairs", "findings", "problems"] {
            assert!(got.get(key).is_some(), "{file}: missing key {key}");
        }
        assert_eq!(got["outcome"], want["outcome"], "{file}");
        if let Some(problems) = want.get("problems") {
            let codes: Vec<Value> = got["problems"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| json!({"code": p["code"], "class": p["class"], "path": p["path"]}))
                .collect();
            assert_eq!(&Value::Array(codes), problems, "{file}");
            for p in got["problems"].as_array().unwrap() {
                assert!(p["message"].as_str().is_some_and(|m| !m.is_empty()));
            }
        }
    }
}

#[test]
fn reads_the_reply_from_stdin() {
    let contract = "examples/contracts/plate.json";
    let ok = br#"{"productPresent":false,"productTextPresent":false,"garbledText":false}"#;
    assert_eq!(vouch(&["check", "-c", contract], Some(ok)).status.code(), Some(0));
    assert_eq!(vouch(&["check", "-c", contract, "-"], Some(ok)).status.code(), Some(0));
    let out = vouch(&["check", "-c", contract, "--json"], Some(b"{}"));
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["value"], Value::Null);
    assert_eq!(v["pass"], json!(false));
    assert_eq!(v["problems"][0]["code"], json!("missing"));
    assert_eq!(v["problems"][0]["class"], json!("no_answer"));
}

#[test]
fn human_output() {
    let check = |contract: &str, reply: &str| {
        let out = vouch(
            &["check", "-c", &format!("examples/contracts/{contract}"), &format!("examples/replies/{reply}")],
            None,
        );
        format!("exit {}\n{}", out.status.code().unwrap(), text(&out.stdout))
    };
    insta::assert_snapshot!("pass", check("plate.json", "plate/all_false.json"));
    insta::assert_snapshot!("finding", check("plate.json", "plate/product_in_frame.json"));
    insta::assert_snapshot!("refused_missing", check("plate.json", "plate/empty_object.json"));
    insta::assert_snapshot!("refused_fence", check("plate.json", "plate/fenced.md"));
    insta::assert_snapshot!("refused_bad_answer", check("eligibility.json", "eligibility/status_likely.json"));
    insta::assert_snapshot!("repaired", check("eligibility.json", "eligibility/repaired.json"));
}

#[test]
fn contract_errors_exit_2_naming_file_and_location() {
    let bad_json = scratch("bad.json", b"{\n  \"type\": \"object\",\n}\n");
    let out = vouch(&["check", "-c", bad_json.to_str().unwrap()], Some(b"{}"));
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("bad.json") && err.contains("line 3, column 1"), "{err}");

    let bad_schema = scratch("bad_schema.json", br#"{"properties": {"score": {"type": "integer", "maximun": 100}}}"#);
    let out = vouch(&["check", "-c", bad_schema.to_str().unwrap()], Some(b"{}"));
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("bad_schema.json: /properties/score: maximun: unknown keyword"), "{err}");

    let out = vouch(&["check", "-c", "no/such/contract.json"], Some(b"{}"));
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("no/such/contract.json"));

    let out = vouch(&["check", "-c", "examples/contracts/plate.json", "no/such/reply.json"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("no/such/reply.json"));
}

#[test]
fn bad_invocation_exits_2_and_help_has_an_example() {
    assert_eq!(vouch(&["check"], None).status.code(), Some(2));
    assert_eq!(vouch(&["frobnicate"], None).status.code(), Some(2));
    let help = vouch(&["check", "--help"], None);
    assert_eq!(help.status.code(), Some(0));
    assert!(text(&help.stdout).contains("Example: vouch check"));
}

#[test]
fn invalid_utf8_reply_is_refused_not_an_error() {
    let out = vouch(&["check", "-c", "examples/contracts/plate.json", "--json"], Some(b"{\"\xff\": 1}"));
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["problems"][0]["code"], json!("not_json"));
}

#[test]
fn every_subcommand_has_help_with_an_example() {
    for sub in ["check", "batch", "schema", "audit", "ask", "diff", "serve", "completions"] {
        let help = vouch(&[sub, "--help"], None);
        assert_eq!(help.status.code(), Some(0), "{sub}");
        assert!(text(&help.stdout).contains(&format!("Example: vouch {sub}")), "{sub}: {}", text(&help.stdout));
    }
    let bash = vouch(&["completions", "bash"], None);
    assert!(text(&bash.stdout).contains("_vouch()"), "a bash completion function");
}

#[test]
fn a_contract_that_does_not_compile_lists_every_mistake_and_still_prints_one_json_object() {
    let bad = scratch(
        "three_typos.json",
        br#"{"type":"object","propertees":{},"additionalPropeties":false,"properties":{"a":{"maxmimum":3}}}"#,
    );
    let bad = bad.to_str().unwrap();
    let out = vouch(&["check", "--json", "--contract", bad, "-"], Some(b"{}"));
    assert_eq!(out.status.code(), Some(2));
    let got: Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
    assert_eq!(got["outcome"], "contract_error");
    let errors = got["errors"].as_array().unwrap();
    let named: Vec<(&str, &str)> =
        errors.iter().map(|e| (e["keyword"].as_str().unwrap(), e["location"].as_str().unwrap())).collect();
    assert_eq!(named, [("propertees", ""), ("additionalPropeties", ""), ("maxmimum", "/properties/a")]);
    assert!(errors[0]["message"].as_str().unwrap().contains("did you mean `properties`?"));
    assert!(errors[2]["message"].as_str().unwrap().contains("did you mean `maximum`?"));
    // Human: one line per mistake on standard error, each naming the file.
    let out = vouch(&["check", "--contract", bad, "-"], Some(b"{}"));
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(text(&out.stderr).lines().filter(|l| l.contains("three_typos.json")).count(), 3);
    assert!(out.stdout.is_empty());
}
