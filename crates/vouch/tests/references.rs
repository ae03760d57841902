//! References across schema resources: RFC 3986 base URIs set by `$id`,
//! anchors, documents supplied by URI, and dynamic references, each case
//! checked by what it accepts and refuses (or the error it names).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use serde_json::{json, Value};
use vouch::{CompileErrorKind as Kind, Contract};

fn accepts(c: &Contract, reply: &str) -> bool {
    c.check(reply).is_accepted()
}

fn refusal(schema: Value, documents: Vec<(&str, Value)>) -> vouch::CompileError {
    match Contract::with_documents(schema.clone(), documents) {
        Ok(_) => panic!("compiled: {schema}"),
        Err(e) => e,
    }
}

#[test]
fn relative_id_chains_resolve_against_the_enclosing_base() {
    // folder/ against root.json, then b.json against folder/: folder/b.json.
    let c = Contract::from_value(json!({
        "$id": "http://example.com/root.json",
        "$defs": {"a": {"$id": "folder/", "$defs": {"b": {"$id": "b.json", "type": "integer"}}}},
        "properties": {"x": {"$ref": "folder/b.json"}, "y": {"$ref": "http://example.com/folder/b.json"}}
    }))
    .unwrap();
    assert!(accepts(&c, r#"{"x": 1, "y": 2}"#));
    assert_eq!(c.check(r#"{"x": "1"}"#).problems()[0].path, "/x");
    assert_eq!(c.check(r#"{"y": "2"}"#).problems()[0].path, "/y");
    // A relative reference inside a resource reads against that resource.
    let c = Contract::from_value(json!({
        "$id": "http://example.com/a/root.json",
        "$defs": {
            "inner": {"$id": "../b/inner.json", "$ref": "sibling.json"},
            "sibling": {"$id": "http://example.com/b/sibling.json", "type": "string"}
        },
        "$ref": "http://example.com/b/inner.json"
    }))
    .unwrap();
    assert!(accepts(&c, r#""s""#));
    assert!(!accepts(&c, "1"));
}

#[test]
fn a_reference_with_both_base_and_fragment_is_relative_to_its_resource() {
    // The pointer is read inside other.json, not the contract.
    let c = Contract::with_documents(
        json!({"$id": "http://example.com/main.json", "$ref": "other.json#/$defs/n",
               "$defs": {"n": {"type": "string"}}}),
        [("http://example.com/other.json", json!({"$defs": {"n": {"type": "integer"}}}))],
    )
    .unwrap();
    assert!(accepts(&c, "3"));
    assert!(!accepts(&c, r#""3""#));
    // An embedded resource of a supplied document resolves too, with its own
    // base for the references inside it.
    let c = Contract::with_documents(
        json!({"$ref": "http://example.com/lib.json#/$defs/pair"}),
        [(
            "http://example.com/lib.json",
            json!({"$defs": {
                "pair": {"type": "array", "items": {"$ref": "nested/item.json"}},
                "item": {"$id": "nested/item.json", "$ref": "#/$defs/x", "$defs": {"x": {"type": "boolean"}}}
            }}),
        )],
    )
    .unwrap();
    assert!(accepts(&c, "[true, false]"));
    assert_eq!(c.check("[true, 1]").problems()[0].path, "/1");
}

#[test]
fn urn_ids_and_anchors() {
    let c = Contract::from_value(json!({
        "$id": "urn:uuid:deadbeef-1234-ffff-ffff-4321feebdaed",
        "properties": {
            "a": {"$ref": "urn:uuid:deadbeef-1234-ffff-ffff-4321feebdaed#/$defs/bar"},
            "b": {"$ref": "#name"},
            "c": {"$ref": "urn:uuid:deadbeef-1234-ffff-ffff-4321feebdaed#name"}
        },
        "$defs": {"bar": {"type": "string"}, "named": {"$anchor": "name", "type": "integer"}}
    }))
    .unwrap();
    assert!(accepts(&c, r#"{"a": "x", "b": 1, "c": 2}"#));
    assert_eq!(c.check(r#"{"a": 1}"#).problems()[0].path, "/a");
    assert_eq!(c.check(r#"{"b": "1"}"#).problems()[0].path, "/b");
    assert_eq!(c.check(r#"{"c": "2"}"#).problems()[0].path, "/c");
}

#[test]
fn percent_encoded_pointers_and_escapes() {
    let c = Contract::from_value(json!({
        "$defs": {"a%b": {"type": "integer"}, "with space": {"type": "string"}, "t/s": {"type": "boolean"}},
        "properties": {
            "p": {"$ref": "#/$defs/a%25b"},
            "q": {"$ref": "#/$defs/with%20space"},
            "r": {"$ref": "#/$defs/t~1s"}
        }
    }))
    .unwrap();
    assert!(accepts(&c, r#"{"p": 1, "q": "x", "r": true}"#));
    assert!(!accepts(&c, r#"{"p": "1"}"#));
    assert!(!accepts(&c, r#"{"q": 1}"#));
    assert!(!accepts(&c, r#"{"r": 1}"#));
    let e = refusal(json!({"properties": {"p": {"$ref": "#/$defs/%zz"}}, "$defs": {}}), vec![]);
    assert_eq!((e.kind, e.keyword.as_str(), e.location.as_str()), (Kind::UnresolvedRef, "$ref", "/properties/p"));
}

#[test]
fn an_id_with_an_empty_fragment_names_its_resource() {
    let c = Contract::from_value(json!({
        "$defs": {"x": {"$id": "http://example.com/x.json#", "type": "null"}},
        "$ref": "http://example.com/x.json"
    }))
    .unwrap();
    assert!(accepts(&c, "null"));
    assert!(!accepts(&c, "0"));
    // From 2019-09 a fragment beyond the empty one is no `$id`.
    let e = refusal(json!({"$defs": {"x": {"$id": "http://example.com/x.json#frag"}}}), vec![]);
    assert_eq!((e.kind, e.keyword.as_str(), e.location.as_str()), (Kind::InvalidValue, "$id", "/$defs/x"));
}

#[test]
fn unknown_anchors_and_documents_are_named_where_they_are_used() {
    let e = refusal(json!({"properties": {"a": {"$ref": "#nowhere"}}, "$defs": {"b": {"$anchor": "there"}}}), vec![]);
    assert_eq!((e.kind, e.keyword.as_str(), e.location.as_str()), (Kind::UnresolvedRef, "$ref", "/properties/a"));
    assert!(e.message.contains("nowhere"), "{e}");
    let e = refusal(
        json!({"$id": "http://example.com/s.json", "items": {"$ref": "missing.json#/a"}}),
        vec![("http://example.com/other.json", json!({}))],
    );
    assert_eq!((e.kind, e.keyword.as_str(), e.location.as_str()), (Kind::RemoteRef, "$ref", "/items"));
    assert!(e.message.contains("http://example.com/missing.json"), "{e}");
    // The metaschemas are not bundled: a reference to one is refused.
    let e = refusal(json!({"$ref": "https://json-schema.org/draft/2020-12/schema"}), vec![]);
    assert_eq!(e.kind, Kind::RemoteRef);
    assert!(e.message.contains("metaschema"), "{e}");
    // A supplied document needs an absolute URI.
    let e = refusal(json!({}), vec![("lib.json", json!({}))]);
    assert_eq!((e.kind, e.location.as_str()), (Kind::InvalidValue, "lib.json"));
    // An error inside a supplied document is located there.
    let e = refusal(
        json!({"$ref": "http://example.com/lib.json"}),
        vec![("http://example.com/lib.json", json!({"minimum": "0"}))],
    );
    assert_eq!(
        (e.kind, e.keyword.as_str(), e.location.as_str()),
        (Kind::InvalidValue, "minimum", "http://example.com/lib.json#")
    );
}

#[test]
fn ids_in_non_schemas_are_not_identifiers() {
    // The `$id` inside `const` names nothing, so the reference misses.
    let e =
        refusal(json!({"const": {"$id": "http://example.com/c.json"}, "$ref": "http://example.com/c.json"}), vec![]);
    assert_eq!(e.kind, Kind::RemoteRef);
}

#[test]
fn earlier_drafts_ids() {
    // Draft-07: a plain-name `$id` fragment is an anchor.
    let c = Contract::from_value(json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "definitions": {"a": {"$id": "#foo", "type": "integer"}},
        "properties": {"x": {"$ref": "#foo"}}
    }))
    .unwrap();
    assert!(accepts(&c, r#"{"x": 1}"#));
    assert!(!accepts(&c, r#"{"x": "1"}"#));
    // Draft-07: an `$id` beside `$ref` is ignored, so "b.json" reads against the root.
    let c = Contract::from_value(json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "$id": "http://example.com/root/",
        "definitions": {
            "root_b": {"$id": "b.json", "type": "string"},
            "other_b": {"$id": "http://example.com/elsewhere/b.json", "type": "integer"}
        },
        "items": {"$id": "http://example.com/elsewhere/", "$ref": "b.json"}
    }))
    .unwrap();
    assert!(accepts(&c, r#"["s"]"#));
    assert!(!accepts(&c, "[1]"));
    // Draft-04: `id` anywhere, and its plain-name fragments.
    let c = Contract::from_value(json!({
        "$schema": "http://json-schema.org/draft-04/schema#",
        "id": "http://example.com/root.json",
        "definitions": {"a": {"id": "#bar", "type": "boolean"}, "b": {"id": "sub/b.json", "type": "null"}},
        "properties": {"x": {"$ref": "#bar"}, "y": {"$ref": "sub/b.json"}}
    }))
    .unwrap();
    assert!(accepts(&c, r#"{"x": true, "y": null}"#));
    assert!(!accepts(&c, r#"{"x": 1}"#));
    assert!(!accepts(&c, r#"{"y": 1}"#));
}

/// A list of `T` where `T` is set by the schema that extends it.
fn generic_list() -> Value {
    json!({
        "$id": "http://example.com/list.json",
        "type": "array",
        "items": {"$dynamicRef": "#item"},
        "$defs": {"item": {"$dynamicAnchor": "item"}}
    })
}

#[test]
fn dynamic_references_take_the_outermost_anchor_in_scope() {
    let documents = [("http://example.com/list.json", generic_list())];
    let strings = Contract::with_documents(
        json!({"$id": "http://example.com/strings.json", "$ref": "list.json",
               "$defs": {"item": {"$dynamicAnchor": "item", "type": "string"}}}),
        documents.clone(),
    )
    .unwrap();
    assert!(accepts(&strings, r#"["a", "b"]"#));
    assert_eq!(strings.check(r#"["a", 1]"#).problems()[0].path, "/1");
    // The same list, reached from another resource, holds other items; and
    // alone it holds anything.
    let numbers = Contract::with_documents(
        json!({"$id": "http://example.com/numbers.json", "$ref": "list.json",
               "$defs": {"item": {"$dynamicAnchor": "item", "type": "number"}}}),
        documents.clone(),
    )
    .unwrap();
    assert!(accepts(&numbers, "[1, 2]"));
    assert!(!accepts(&numbers, r#"["a"]"#));
    let any = Contract::with_documents(json!({"$ref": "http://example.com/list.json"}), documents).unwrap();
    assert!(accepts(&any, r#"["a", 1, null]"#));
    // Every checking path agrees (they all walk the same compiled nodes).
    for reply in [r#"["a", 1]"#, r#"["a"]"#] {
        assert_eq!(strings.check(reply).is_accepted(), strings.check_full_path(reply).is_accepted());
    }
}

#[test]
fn recursive_references_2019_09() {
    let tree = json!({
        "$schema": "https://json-schema.org/draft/2019-09/schema",
        "$id": "http://example.com/tree.json",
        "$recursiveAnchor": true,
        "type": "object",
        "properties": {"children": {"type": "array", "items": {"$recursiveRef": "#"}}}
    });
    let strict = Contract::with_documents(
        json!({
            "$schema": "https://json-schema.org/draft/2019-09/schema",
            "$id": "http://example.com/strict.json",
            "$recursiveAnchor": true,
            "$ref": "tree.json",
            "properties": {"name": {"type": "string"}}
        }),
        [("http://example.com/tree.json", tree.clone())],
    )
    .unwrap();
    // The nested children are held to the extension (name a string) too.
    assert!(accepts(&strict, r#"{"name": "a", "children": [{"name": "b", "children": []}]}"#));
    assert_eq!(strict.check(r#"{"children": [{"name": 1}]}"#).problems()[0].path, "/children/0/name");
    let plain = Contract::with_documents(
        json!({"$schema": "https://json-schema.org/draft/2019-09/schema", "$ref": "http://example.com/tree.json"}),
        [("http://example.com/tree.json", tree)],
    )
    .unwrap();
    assert!(accepts(&plain, r#"{"children": [{"name": 1}]}"#));
}

#[test]
fn dynamic_scopes_that_multiply_are_refused() {
    // Each level has two resources binding its own dynamic anchor, and both
    // lead to the next: after k levels 2^k scopes reach the end.
    const LEVELS: usize = 14;
    let mut defs = serde_json::Map::new();
    for i in 0..LEVELS {
        for x in ["a", "b"] {
            let next = if i + 1 == LEVELS {
                json!({"a": {"$ref": "end.json"}, "b": {"$ref": "end.json"}})
            } else {
                json!({"a": {"$ref": format!("l{}a.json", i + 1)}, "b": {"$ref": format!("l{}b.json", i + 1)}})
            };
            defs.insert(
                format!("l{i}{x}"),
                json!({"$id": format!("l{i}{x}.json"), "$dynamicAnchor": format!("n{i}"), "properties": next}),
            );
        }
    }
    let uses: serde_json::Map<String, Value> =
        (0..LEVELS).map(|i| (format!("k{i}"), json!({"$dynamicRef": format!("l{i}a.json#n{i}")}))).collect();
    defs.insert("end".into(), json!({"$id": "end.json", "properties": uses}));
    let e = refusal(json!({"$id": "http://example.com/root.json", "$defs": defs, "$ref": "l0a.json"}), vec![]);
    assert_eq!((e.kind, e.keyword.as_str()), (Kind::Unsupported, "$dynamicRef"), "{e}");
    assert!(e.message.contains("4096"), "{e}");
    // Said once, not by every schema past the bound.
    assert!(e.every().filter(|x| x.message == e.message).count() <= 1, "{e}");
}

#[test]
fn exports_refuse_what_a_provider_would_resolve_differently() {
    // Without its `$id` the inner "#/$defs/n" would read against the root.
    let c = Contract::from_value(json!({
        "$defs": {"n": {"type": "string"}, "inner": {"$id": "http://example.com/inner.json",
            "$defs": {"n": {"type": "integer"}}, "$ref": "#/$defs/n"}},
        "type": "object",
        "properties": {"a": {"$ref": "http://example.com/inner.json"}},
        "required": ["a"],
        "additionalProperties": false
    }))
    .unwrap();
    assert!(accepts(&c, r#"{"a": 1}"#));
    for provider in ["openai", "anthropic", "gemini"] {
        let p = vouch::Provider::from_name(provider).unwrap();
        let e = c.provider_schema(p, "x").unwrap_err();
        assert_eq!(e.keyword, "$ref", "{provider}: {e:?}");
        assert_eq!(e.location, "/properties/a", "{provider}: {e:?}");
    }
    let c = Contract::from_value(json!({"$defs": {"t": {"$anchor": "t", "type": "string"}},
        "type": "object", "properties": {"a": {"$ref": "#t"}}, "required": ["a"], "additionalProperties": false}))
    .unwrap();
    let e = c.provider_schema(vouch::Provider::from_name("openai").unwrap(), "x").unwrap_err();
    assert_eq!((e.keyword.as_str(), e.location.as_str()), ("$ref", "/properties/a"));
}

#[test]
fn supplied_documents_are_found_by_equivalent_uris_and_read_in_the_contracts_draft() {
    // Scheme and host case, and an escaped unreserved character, name the same document.
    let c = Contract::with_documents(
        json!({"$ref": "HTTP://Example.com/%7Eme/a.json#/$defs/x"}),
        [("http://example.com/~me/a.json", json!({"$defs": {"x": {"type": "integer"}}}))],
    )
    .unwrap();
    assert!(accepts(&c, "1"));
    assert!(!accepts(&c, "1.5"));
    // A document in another draft would read its keywords otherwise.
    let e = refusal(
        json!({"$ref": "http://example.com/old.json"}),
        vec![("http://example.com/old.json", json!({"$schema": "http://json-schema.org/draft-04/schema#"}))],
    );
    assert_eq!(
        (e.kind, e.keyword.as_str(), e.location.as_str()),
        (Kind::Unsupported, "$schema", "http://example.com/old.json#")
    );
    // Documents nothing references are not compiled, mistakes and all.
    let c =
        Contract::with_documents(json!({"type": "null"}), [("http://example.com/bad.json", json!({"minimum": "x"}))]);
    assert!(c.is_ok());
}

#[test]
fn a_resource_entered_below_its_root_joins_the_dynamic_scope() {
    // root → a#/$defs/go → b#/$defs/go → c#/$defs/go, which names "#cap":
    // `a` declares no such anchor, `b` does (outermost), `c` too.
    let c = Contract::from_value(json!({
        "$id": "http://example.com/root",
        "$ref": "a#/$defs/go",
        "$defs": {
            "a": {"$id": "a", "$defs": {"go": {"$ref": "b#/$defs/go"}, "cap": {"maxLength": 1}}},
            "b": {"$id": "b", "$defs": {"go": {"$ref": "c#/$defs/go"}, "cap": {"$dynamicAnchor": "cap", "maxLength": 2}}},
            "c": {"$id": "c", "$defs": {"go": {"$dynamicRef": "#cap"}, "cap": {"$dynamicAnchor": "cap", "maxLength": 3}}}
        }
    }))
    .unwrap();
    assert!(accepts(&c, r#""ab""#));
    assert!(!accepts(&c, r#""abc""#));
}

#[test]
fn a_dynamic_scope_left_behind_does_not_count() {
    // The `if` enters `first` and leaves it; the `then` reaches `target`
    // through `second` only, so `second`'s anchor is the outermost.
    let c = Contract::from_value(json!({
        "$id": "http://example.com/main",
        "if": {"$id": "first", "$defs": {"t": {"$dynamicAnchor": "t", "type": "number"}}},
        "then": {"$id": "second", "$ref": "target", "$defs": {"t": {"$dynamicAnchor": "t", "type": "null"}}},
        "$defs": {"target": {"$id": "target", "$dynamicRef": "#t", "$defs": {"t": {"$dynamicAnchor": "t"}}}}
    }))
    .unwrap();
    assert!(accepts(&c, "null"));
    assert!(!accepts(&c, "1"));
}

#[test]
fn a_recursive_reference_leads_to_the_outermost_recursive_anchor() {
    // outer (anchored) → middle (not) → tree (anchored): the outermost
    // resource with `$recursiveAnchor: true` in scope is `outer`.
    let c = Contract::from_value(json!({
        "$schema": "https://json-schema.org/draft/2019-09/schema",
        "$id": "http://example.com/outer",
        "$recursiveAnchor": true,
        "$ref": "middle",
        "properties": {"tag": {"type": "string"}},
        "$defs": {
            "middle": {"$id": "middle", "$ref": "tree"},
            "tree": {"$id": "tree", "$recursiveAnchor": true,
                     "properties": {"kids": {"items": {"$recursiveRef": "#"}}}}
        }
    }))
    .unwrap();
    assert!(accepts(&c, r#"{"tag": "a", "kids": [{"tag": "b"}]}"#));
    assert_eq!(c.check(r#"{"kids": [{"tag": 1}]}"#).problems()[0].path, "/kids/0/tag");
}

#[test]
fn identifiers_declared_twice_are_refused() {
    let e = refusal(
        json!({"$defs": {"a": {"$id": "http://example.com/x.json"}, "b": {"$id": "http://example.com/x.json"}}}),
        vec![],
    );
    assert_eq!((e.kind, e.keyword.as_str()), (Kind::InvalidValue, "$id"), "{e}");
    assert!(e.location == "/$defs/a" || e.location == "/$defs/b", "{e}");
    let e = refusal(json!({"$defs": {"a": {"$anchor": "n"}, "b": {"$anchor": "n"}}}), vec![]);
    assert_eq!((e.kind, e.keyword.as_str()), (Kind::InvalidValue, "$anchor"), "{e}");
    // The same name in two resources is two anchors.
    assert!(Contract::from_value(
        json!({"$defs": {"a": {"$anchor": "n"}, "b": {"$id": "http://example.com/b", "$anchor": "n"}}})
    )
    .is_ok());
}

#[test]
fn too_many_dynamic_anchor_names_are_refused() {
    let defs: serde_json::Map<String, Value> = (0..65)
        .map(|i| {
            (format!("d{i}"), json!({"$dynamicAnchor": format!("n{i}"), "items": {"$dynamicRef": format!("#n{i}")}}))
        })
        .collect();
    let e = refusal(json!({"$defs": defs}), vec![]);
    assert_eq!((e.kind, e.keyword.as_str(), e.location.as_str()), (Kind::Unsupported, "$dynamicAnchor", ""), "{e}");
    assert!(e.message.contains("65"), "{e}");
}
