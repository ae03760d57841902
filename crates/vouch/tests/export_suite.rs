//! Soundness of every provider schema on the JSON-Schema-Test-Suite: each
//! group's schema (2020-12, and the earlier drafts read in their own
//! dialect) is wrapped as the one property of an object contract; where a
//! provider's export succeeds, every case the emitted schema accepts (judged
//! by the `jsonschema` crate, formats asserted) must be accepted by the
//! contract. The suite's cases sit at the edges of each keyword, which is
//! where a translation would be wrong.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod common;

use serde_json::{json, Map, Value};
use vouch::{Contract, Provider};

const PROVIDERS: [Provider; 4] = [Provider::OpenAi, Provider::Anthropic, Provider::Gemini, Provider::JsonSchema];

/// The schema as the one property `v` of an object contract, its definitions
/// moved to the root; `None` when its references would change meaning there.
fn wrap(schema: &Value, uri: Option<&str>) -> Option<Value> {
    let text = schema.to_string();
    let refs_ok = !text.contains("\"$id\"")
        && !text.contains("\"id\"")
        && !text.contains("\"$anchor\"")
        && !text.contains("\"$ref\":\"#\"")
        && text.match_indices("\"$ref\":\"").all(|(i, m)| {
            let rest = &text[i + m.len()..];
            rest.starts_with("#/$defs/") || rest.starts_with("#/definitions/")
        });
    if !refs_ok {
        return None;
    }
    let mut inner = schema.clone();
    let mut root = Map::new();
    if let Value::Object(m) = &mut inner {
        for key in ["$defs", "definitions"] {
            if let Some(d) = m.shift_remove(key) {
                root.insert(key.to_owned(), d);
            }
        }
        m.shift_remove("$schema");
    }
    if let Some(uri) = uri {
        root.insert("$schema".into(), json!(uri));
    }
    root.insert("type".into(), json!("object"));
    root.insert("properties".into(), json!({"v": inner}));
    root.insert("required".into(), json!(["v"]));
    Some(Value::Object(root))
}

fn run(
    sub: &str,
    uri: Option<&str>,
    counts: &mut [usize; 4],
    checked: &mut [usize; 4],
    unsound: &mut Vec<String>,
) -> usize {
    let Some(dir) = common::shared_dir(&format!("suites/json-schema-test-suite/{sub}")) else { return 0 };
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    let mut groups_seen = 0;
    for file in &files {
        let name = file.file_stem().unwrap().to_string_lossy().to_string();
        let groups: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
        for group in &groups {
            let Some(doc) = wrap(&group["schema"], uri) else { continue };
            let Ok(contract) = Contract::from_value(doc) else { continue };
            groups_seen += 1;
            for (i, p) in PROVIDERS.iter().enumerate() {
                let Ok(mut s) = contract.bare_provider_schema(*p) else { continue };
                counts[i] += 1;
                if *p == Provider::Gemini {
                    s = common::gemini_as_json_schema(&s);
                }
                let Ok(validator) = jsonschema::options().should_validate_formats(true).build(&s) else { continue };
                for case in group["tests"].as_array().unwrap() {
                    let reply = json!({"v": case["data"]});
                    if validator.is_valid(&reply) {
                        checked[i] += 1;
                        if !contract.check(reply.to_string()).is_accepted() {
                            unsound.push(format!(
                                "{sub} {name}: {p:?} accepts {reply} ({}), the contract refuses; sent {s}",
                                case["description"].as_str().unwrap_or_default()
                            ));
                        }
                    }
                }
            }
        }
    }
    groups_seen
}

#[test]
fn provider_schemas_are_sound_on_the_test_suite() {
    let (mut counts, mut checked, mut unsound) = ([0usize; 4], [0usize; 4], Vec::new());
    let mut groups = 0;
    for (sub, uri) in [
        ("tests", None),
        ("drafts/draft2019-09", Some("https://json-schema.org/draft/2019-09/schema")),
        ("drafts/draft7", Some("http://json-schema.org/draft-07/schema#")),
        ("drafts/draft6", Some("http://json-schema.org/draft-06/schema#")),
        ("drafts/draft4", Some("http://json-schema.org/draft-04/schema#")),
    ] {
        groups += run(sub, uri, &mut counts, &mut checked, &mut unsound);
    }
    if groups == 0 {
        return;
    }
    common::figure(&format!(
        "export on JSON-Schema-Test-Suite ({groups} groups compiled, wrapped in an object): exports OpenAI/Anthropic/Gemini/JSON Schema {counts:?}; cases an emitted schema accepted {checked:?}; the contract refused {} of them",
        unsound.len()
    ));
    assert!(unsound.is_empty(), "{} unsound:\n{}", unsound.len(), unsound.join("\n"));
}
