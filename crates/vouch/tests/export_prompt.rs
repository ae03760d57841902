//! The prompt text for unions, maps, recursive types and older drafts: the
//! whole text for representative contracts, so any change shows.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use serde_json::{json, Value};
use vouch::Contract;

fn prompt(v: Value) -> String {
    Contract::from_value(v.clone()).unwrap_or_else(|e| panic!("{v}: {e}")).prompt()
}

#[test]
fn a_tagged_union_is_described_branch_by_branch_with_its_tag() {
    let text = prompt(json!({"type": "object", "properties": {"shape": {"oneOf": [
            {"type": "object", "properties": {"kind": {"type": "string", "const": "circle"}, "r": {"type": "number"}},
                "required": ["kind", "r"], "additionalProperties": false},
            {"type": "object", "properties": {"kind": {"type": "string", "const": "square"}, "side": {"type": "number"}},
                "required": ["kind", "side"], "additionalProperties": false}]}}, "required": ["shape"], "additionalProperties": false}));
    assert_eq!(text, "Reply with a single JSON object and nothing else: no explanation, no Markdown code fence.\nThe reply is an object with exactly these properties, and no others:\n  - \"shape\" (required): one of these 2 shapes, told apart by \"kind\":\n    - when \"kind\" is \"circle\": an object with exactly these properties, and no others:\n      - \"kind\" (required): exactly \"circle\".\n      - \"r\" (required): a number (a JSON number, not a string).\n    - when \"kind\" is \"square\": an object with exactly these properties, and no others:\n      - \"kind\" (required): exactly \"square\".\n      - \"side\" (required): a number (a JSON number, not a string).\nReply with the JSON object only.\n", "{text}");
}

#[test]
fn a_map_is_described_by_its_keys_and_values() {
    let text = prompt(
        json!({"type": "object", "properties": {"scores": {"type": "object", "additionalProperties": {"type": "integer"}}}, "required": ["scores"]}),
    );
    assert_eq!(text, "Reply with a single JSON object and nothing else: no explanation, no Markdown code fence.\nThe reply is an object with these properties:\n  - \"scores\" (required): an object whose keys are any strings, and whose values are each an integer (a JSON number, not a string).\nReply with the JSON object only.\n", "{text}");
}

#[test]
fn a_recursive_type_is_named_before_it_is_used() {
    let text = prompt(
        json!({"$ref": "#/definitions/Node", "$schema": "http://json-schema.org/draft-07/schema#", "definitions": {"Node": {"type": "object",
            "properties": {"name": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#/definitions/Node"}}},
            "required": ["name", "children"], "additionalProperties": false}}}),
    );
    assert_eq!(text, "Reply with a single JSON object and nothing else: no explanation, no Markdown code fence.\nThe reply is a Node: an object with exactly these properties, and no others:\n  - \"name\" (required): a string.\n  - \"children\" (required): an array; each item is a Node (as described above).\nReply with the JSON object only.\n", "{text}");
}

#[test]
fn an_untagged_union_lists_each_shape_and_optional_says_or_null() {
    let text = prompt(
        json!({"type": "object", "properties": {"a": {"anyOf": [{"type": "object", "properties": {"x": {"type": "string"}}}, {"type": "array", "items": {"type": "string"}}]},
            "age": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": null}}}),
    );
    assert_eq!(text, "Reply with a single JSON object and nothing else: no explanation, no Markdown code fence.\nThe reply is an object with these properties:\n  - \"a\" (optional): one of these 2 shapes:\n    - shape 1: an object with these properties:\n      - \"x\" (optional): a string.\n    - shape 2: an array; each item is a string.\n  - \"age\" (optional): an integer (a JSON number, not a string). Or null.\nReply with the JSON object only.\n", "{text}");
}

#[test]
fn draft_04_bounds_and_draft_07_tuples_read_as_their_drafts_mean() {
    let text = prompt(
        json!({"$schema": "http://json-schema.org/draft-04/schema#", "type": "object", "properties": {"n": {"type": "number", "minimum": 0, "exclusiveMinimum": true, "maximum": 1},
            "pair": {"type": "array", "items": [{"type": "string"}, {"type": "integer"}]}}, "required": ["n", "pair"]}),
    );
    assert_eq!(text, "Reply with a single JSON object and nothing else: no explanation, no Markdown code fence.\nThe reply is an object with these properties:\n  - \"n\" (required): a number of at most 1, greater than 0 (a JSON number, not a string).\n  - \"pair\" (required): an array whose first items are, in order: (1) a string; (2) an integer (a JSON number, not a string).\nReply with the JSON object only.\n", "{text}");
}

#[test]
fn pattern_members_beside_declared_properties() {
    let text = prompt(
        json!({"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"], "patternProperties": {"^x-": {"type": "string"}}, "additionalProperties": false}),
    );
    assert_eq!(text, "Reply with a single JSON object and nothing else: no explanation, no Markdown code fence.\nThe reply is an object with only the properties listed here:\n  - \"id\" (required): a string.\n  - any key matching the regular expression ^x-: a string.\nReply with the JSON object only.\n", "{text}");
}

#[test]
fn map_keys_by_property_names() {
    let text = prompt(
        json!({"type": "object", "properties": {"labels": {"type": "object", "propertyNames": {"pattern": "^[a-z]+$"}, "additionalProperties": {"type": "string", "maxLength": 10}}}}),
    );
    assert_eq!(text, "Reply with a single JSON object and nothing else: no explanation, no Markdown code fence.\nThe reply is an object with these properties:\n  - \"labels\" (optional): an object whose keys are strings matching the regular expression ^[a-z]+$, and whose values are each a string of at most 10 characters.\nReply with the JSON object only.\n", "{text}");
}

#[test]
fn a_pydantic_tagged_union_names_each_definition() {
    let text = prompt(
        json!({"$defs": {"Cat": {"type": "object", "properties": {"pet_type": {"const": "cat"}, "lives": {"type": "integer"}}, "required": ["pet_type", "lives"]},
            "Dog": {"type": "object", "properties": {"pet_type": {"const": "dog"}}, "required": ["pet_type"]}},
            "type": "object", "properties": {"pets": {"type": "array", "items": {"oneOf": [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}]}}}, "required": ["pets"]}),
    );
    assert_eq!(text, "Reply with a single JSON object and nothing else: no explanation, no Markdown code fence.\nThe reply is an object with these properties:\n  - \"pets\" (required): an array; each item is one of these 2 shapes, told apart by \"pet_type\":\n    - when \"pet_type\" is \"cat\": a Cat: an object with these properties:\n      - \"pet_type\" (required): exactly \"cat\".\n      - \"lives\" (required): an integer (a JSON number, not a string).\n    - when \"pet_type\" is \"dog\": a Dog: an object with these properties:\n      - \"pet_type\" (required): exactly \"dog\".\nReply with the JSON object only.\n", "{text}");
}
