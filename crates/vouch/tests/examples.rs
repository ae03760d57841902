//! The bundled examples (examples/replies/expect.json): every reply gets
//! exactly the verdict written down for it: outcome, problems (code, class,
//! path, in order), repairs (path, rule) and findings.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod common;

use serde_json::{json, Value};
use vouch::Contract;

#[test]
fn every_bundled_reply_gets_its_written_verdict() {
    let root = common::project_root().join("examples");
    let expect: Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("replies/expect.json")).unwrap()).unwrap();
    let mut checked = 0;
    for (file, want) in expect.as_object().unwrap() {
        let contract_text = std::fs::read_to_string(root.join(want["contract"].as_str().unwrap())).unwrap();
        let contract = Contract::from_json_str(&contract_text).unwrap();
        let raw = std::fs::read(root.join("replies").join(file)).unwrap();
        let got = contract.check(&raw).to_json();
        assert_eq!(got["outcome"], want["outcome"], "{file}: {got:#}");
        assert_eq!(got["pass"], want["pass"], "{file}: {got:#}");
        if let Some(problems) = want.get("problems") {
            let seen: Vec<Value> = got["problems"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| json!({"code": p["code"], "class": p["class"], "path": p["path"]}))
                .collect();
            assert_eq!(&Value::Array(seen), problems, "{file}: {got:#}");
        }
        if let Some(repairs) = want.get("repairs") {
            let seen: Vec<Value> = got["repairs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| json!({"path": r["path"], "rule": r["rule"]}))
                .collect();
            assert_eq!(&Value::Array(seen), repairs, "{file}: {got:#}");
        }
        let findings = want.get("findings").cloned().unwrap_or(json!([]));
        assert_eq!(got["findings"], findings, "{file}: {got:#}");
        checked += 1;
    }
    common::figure(&format!("bundled examples: {checked} replies checked"));
    assert!(checked >= 30);
}
