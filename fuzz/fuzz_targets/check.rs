//! Raw bytes as a reply to each example contract and to a few generated
//! contracts covering nested objects, arrays (items, prefixItems, uniqueItems,
//! contains), enums, ranges, patterns, formats, anyOf/oneOf, if/then/else,
//! `$ref` recursion and `x-vouch` repairs with fence and prose unwrapping.
//!
//! Properties: no panic; the single pass gives the full path's verdict byte for
//! byte; an accepted value checked again (as compact JSON and
//! as a value) is accepted unchanged with no repairs.
#![no_main]

mod common;

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use vouch::Contract;

const PLATE: &str = include_str!("../../examples/contracts/plate.json");
const ELIGIBILITY: &str = include_str!("../../examples/contracts/eligibility.json");

/// Nested objects, ranges, patterns, formats, arrays of every kind, and a
/// repair rule on almost every node, behind fence and prose unwrapping.
const ORDER: &str = r#"{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "properties": {
    "id": {"type": "string", "pattern": "^[A-Z]{2}-[0-9]{3,6}$"},
    "status": {"type": "string", "enum": ["open", "closed", "on_hold"],
               "x-vouch": {"repair": ["trim", "enum_case"]}},
    "priority": {"type": "integer", "minimum": 1, "maximum": 5,
                 "x-vouch": {"repair": ["coerce", "round", "clamp"]}},
    "ratio": {"type": "number", "exclusiveMinimum": 0, "maximum": 1, "multipleOf": 0.25,
              "x-vouch": {"repair": ["coerce"]}},
    "title": {"type": "string", "minLength": 1, "maxLength": 12,
              "x-vouch": {"repair": ["trim", "truncate"]}},
    "tags": {"type": "array", "items": {"type": "string", "pattern": "^[a-z]+$"},
             "uniqueItems": true, "maxItems": 8,
             "x-vouch": {"repair": ["drop_invalid_items"]}},
    "point": {"type": "array", "prefixItems": [{"type": "number"}, {"type": "integer"}],
              "items": false, "minItems": 2},
    "lines": {"type": "array", "minItems": 1,
              "contains": {"type": "object", "required": ["sku"]},
              "minContains": 1, "maxContains": 3,
              "items": {"type": "object",
                        "properties": {"sku": {"type": "string", "pattern": "^[0-9]+$"},
                                       "qty": {"type": "integer", "minimum": 1, "maximum": 99,
                                               "x-vouch": {"repair": ["coerce", "clamp", "default_if_invalid"], "default": 1}}},
                        "additionalProperties": false,
                        "x-vouch": {"repair": ["strip_unknown"]}}},
    "flag": {"type": "boolean", "x-vouch": {"repair": ["coerce", "default_if_invalid"], "default": false}},
    "meta": {"type": "object",
             "properties": {"created": {"type": "string", "format": "date-time"},
                            "owner": {"type": ["string", "null"], "maxLength": 4}},
             "patternProperties": {"^x-": {"type": "string"}},
             "propertyNames": {"maxLength": 16},
             "minProperties": 1,
             "additionalProperties": false,
             "x-vouch": {"repair": ["strip_unknown", "default_if_invalid"], "default": {"owner": null}}}
  },
  "required": ["id", "status", "priority"],
  "dependentRequired": {"ratio": ["flag"]},
  "additionalProperties": false,
  "x-vouch": {"unwrap": ["fence", "prose"], "repair": ["strip_unknown"]}
}"#;

/// `$ref` recursion, oneOf/anyOf/not/if-then-else, const and dependentRequired.
const TREE: &str = r##"{
  "$defs": {
    "node": {
      "type": "object",
      "properties": {
        "name": {"type": "string", "minLength": 1},
        "kind": {"oneOf": [{"const": "leaf"}, {"const": "branch"}]},
        "value": {"anyOf": [{"type": "integer", "minimum": -1000, "maximum": 1000},
                            {"type": "string", "maxLength": 8},
                            {"type": "null"}]},
        "children": {"type": "array", "items": {"$ref": "#/$defs/node"}, "maxItems": 4}
      },
      "required": ["name"],
      "if": {"properties": {"kind": {"const": "leaf"}}, "required": ["kind"]},
      "then": {"not": {"required": ["children"]}},
      "else": {"properties": {"children": {"minItems": 1}}},
      "dependentRequired": {"value": ["kind"]},
      "additionalProperties": false
    }
  },
  "type": "object",
  "properties": {"root": {"$ref": "#/$defs/node"}, "version": {"const": 1}},
  "required": ["root"],
  "x-vouch": {"unwrap": ["fence"]}
}"##;

/// A root array of mixed items with repairs inside and around them, read
/// out of prose.
const MIXED: &str = r#"{
  "type": "array",
  "maxItems": 16,
  "items": {
    "type": ["number", "string", "object", "array", "null"],
    "minimum": 0, "maximum": 99.5,
    "maxLength": 10,
    "minProperties": 1, "maxProperties": 3,
    "additionalProperties": {"type": "boolean", "x-vouch": {"repair": ["coerce"]}},
    "uniqueItems": true,
    "items": {"enum": [1, "1", true, null, [1], {"a": 1}, 1.5]},
    "x-vouch": {"repair": ["trim", "truncate", "clamp"]}
  },
  "x-vouch": {"unwrap": ["prose"], "repair": ["drop_invalid_items", "default_if_invalid"], "default": []}
}"#;

/// Anything at all, behind both unwraps.
const ANY_UNWRAPPED: &str = r#"{"x-vouch": {"unwrap": ["fence", "prose"]}}"#;

fn contracts() -> &'static [Contract] {
    static C: OnceLock<Vec<Contract>> = OnceLock::new();
    C.get_or_init(|| {
        [PLATE, ELIGIBILITY, ORDER, TREE, MIXED, ANY_UNWRAPPED]
            .iter()
            .map(|text| {
                Contract::from_json_str(text).unwrap_or_else(|e| panic!("fuzz contract does not compile: {e}\n{text}"))
            })
            .collect()
    })
}

fuzz_target!(|data: &[u8]| {
    for contract in contracts() {
        common::check_and_recheck(contract, data);
    }
});
