//! Provider schemas for real-world contracts (JSONSchemaBench's sample in
//! `../shared/suites/jsonschemabench/`): how many export for each provider,
//! why the others do not, and that an export never empties an object the
//! contract leaves open (the class of issue #13's `dict[str, int]`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod common;

use std::collections::BTreeMap;

use serde_json::Value;
use vouch::{Contract, Provider};

/// Objects in an emitted schema that can only be `{}`.
fn empty_objects(v: &Value) -> usize {
    let mut n = 0;
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(m) => {
                if m.get("properties").and_then(Value::as_object).is_some_and(serde_json::Map::is_empty) {
                    n += 1;
                }
                stack.extend(m.values());
            }
            Value::Array(a) => stack.extend(a),
            _ => {}
        }
    }
    n
}

/// Objects in a contract that can only be `{}` there too.
fn closed_empty_objects(v: &Value) -> usize {
    let mut n = 0;
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(m) => {
                let no_props = m.get("properties").and_then(Value::as_object).is_none_or(serde_json::Map::is_empty);
                if no_props
                    && m.get("additionalProperties") == Some(&Value::Bool(false))
                    && !m.contains_key("patternProperties")
                {
                    n += 1;
                }
                stack.extend(m.values());
            }
            Value::Array(a) => stack.extend(a),
            _ => {}
        }
    }
    n
}

#[test]
fn real_world_contracts_export_or_name_their_keyword() {
    let Some(dir) = common::shared_dir("suites/jsonschemabench") else { return };
    let mut files = Vec::new();
    for subset in std::fs::read_dir(&dir).unwrap() {
        let subset = subset.unwrap().path();
        if subset.is_dir() {
            for f in std::fs::read_dir(&subset).unwrap() {
                files.push(f.unwrap().path());
            }
        }
    }
    files.sort();
    let providers = [Provider::OpenAi, Provider::Anthropic, Provider::Gemini, Provider::JsonSchema];
    let mut compiled = 0;
    let mut exported = [0usize; 4];
    let mut why: [BTreeMap<String, usize>; 4] = Default::default();
    for f in &files {
        let Ok(c) = Contract::from_json_str(&std::fs::read_to_string(f).unwrap()) else { continue };
        compiled += 1;
        for (i, p) in providers.iter().enumerate() {
            match c.bare_provider_schema(*p) {
                Ok(s) => {
                    exported[i] += 1;
                    if matches!(p, Provider::OpenAi | Provider::Anthropic) {
                        assert!(
                            empty_objects(&s) <= closed_empty_objects(c.document()),
                            "{p:?} {}: an object the contract leaves open was sent as {{}}: {s}",
                            f.display()
                        );
                    }
                }
                Err(e) => {
                    assert!(!e.message.is_empty(), "{p:?} {}: a refusal that says nothing", f.display());
                    let key = if e.keyword.is_empty() { "(limit)".to_owned() } else { e.keyword.clone() };
                    *why[i].entry(key).or_default() += 1;
                }
            }
        }
    }
    let mut lines = Vec::new();
    for (i, p) in providers.iter().enumerate() {
        let mut top: Vec<_> = why[i].iter().collect();
        top.sort_by_key(|(_, n)| std::cmp::Reverse(**n));
        let top: Vec<String> = top.iter().take(6).map(|(k, n)| format!("{k} {n}")).collect();
        lines.push(format!("{p:?} {}/{compiled} (refused by: {})", exported[i], top.join(", ")));
    }
    common::figure(&format!("jsonschemabench export: {}", lines.join("; ")));
    assert_eq!(exported[3], compiled, "the JSON Schema export takes every contract");
    assert!(compiled >= 100);
}
