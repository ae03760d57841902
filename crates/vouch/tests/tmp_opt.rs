#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]
mod common;
use serde_json::Value;
use vouch::Contract;
#[test]
fn tmp() {
    let base = common::shared_dir("suites/json-schema-test-suite").unwrap();
    for (dir, remotes, uri) in [
        ("optional", "remotes", None),
        ("drafts/draft4/optional", "drafts/remotes", Some("http://json-schema.org/draft-04/schema#")),
        ("drafts/draft6/optional", "drafts/remotes", Some("http://json-schema.org/draft-06/schema#")),
        ("drafts/draft7/optional", "drafts/remotes", Some("http://json-schema.org/draft-07/schema#")),
        ("drafts/draft2019-09/optional", "drafts/remotes", Some("https://json-schema.org/draft/2019-09/schema")),
    ] {
        let remotes = common::remotes(&base.join(remotes));
        for file in [
            "anchor.json",
            "dynamicRef.json",
            "id.json",
            "refOfUnknownKeyword.json",
            "cross-draft.json",
            "unknownKeyword.json",
            "no-schema.json",
        ] {
            let Ok(text) = std::fs::read_to_string(base.join(dir).join(file)) else { continue };
            let groups: Vec<Value> = serde_json::from_str(&text).unwrap();
            for g in &groups {
                let mut schema = g["schema"].clone();
                if let (Some(uri), Value::Object(m)) = (uri, &mut schema) {
                    m.entry("$schema").or_insert_with(|| Value::String(uri.to_owned()));
                }
                match Contract::with_documents(schema, remotes.clone()) {
                    Err(e) => println!(
                        "REFUSED {dir}/{file}: {}: {}",
                        g["description"],
                        e.to_string().chars().take(200).collect::<String>()
                    ),
                    Ok(c) => {
                        for t in g["tests"].as_array().unwrap() {
                            let ok = c.check(serde_json::to_string(&t["data"]).unwrap()).is_accepted();
                            if ok != t["valid"].as_bool().unwrap() {
                                println!("MISMATCH {dir}/{file}: {} / {}", g["description"], t["description"]);
                            } else {
                                println!("ok {dir}/{file}: {}", g["description"]);
                            }
                        }
                    }
                }
            }
        }
    }
}
