//! Oracle property tests: vouch judged against an independent implementation
//! of JSON Schema, the `jsonschema` crate, on generated contracts and replies.
//!
//! Contracts are generated from the supported keyword subset: nested objects
//! (`properties`, `required`, `additionalProperties` false/schema/absent,
//! `patternProperties`, `propertyNames`, `min`/`maxProperties`,
//! `dependentRequired`), arrays (`items`, `prefixItems`, `min`/`maxItems`,
//! `uniqueItems`, `contains`, `min`/`maxContains`), `enum`, `const`, numeric
//! ranges (inclusive and exclusive bounds, `multipleOf` with integers and
//! simple decimals), strings (`minLength`/`maxLength`, simple patterns whose
//! ECMA-262 and Rust meanings agree), `anyOf`/`oneOf`/`allOf`/`not`,
//! `if`/`then`/`else`, `$ref` into `$defs` (a recursive tree among them) and
//! boolean schemas. Some get `x-vouch` repairs, defaults and unwraps, placed
//! only where vouch allows them (never where a value is only tested).
//! `format` is never generated: the oracle treats it as an annotation.
//!
//! Replies for each contract: instances valid for the oracle (generated from
//! the schema, the oracle picking among candidates), mutated instances (field
//! dropped, type swapped, value pushed out of range, extra property, numbers
//! as strings, padding, nulls, big integers…), duplicate keys (raw text,
//! also equal only after unescaping), truncations, fences and prose around
//! the JSON, random JSON and near-JSON garbage.
//!
//! The oracle is `jsonschema::validator_for` on the contract with every
//! `x-vouch` removed, over the reply as `serde_json` parses it. Properties:
//!
//! - (a) a reply vouch accepts with no repairs is JSON that `serde_json`
//!   reads as the same value, and the oracle validates it;
//! - (b) a reply vouch accepts with repairs yields a value the oracle
//!   validates, and re-checking that value gives it back with no repairs;
//! - (c) a reply the oracle rejects (or that is not JSON) is refused by a
//!   contract that declares no `x-vouch` at all;
//! - (d) a strict, duplicate-free JSON reply (one the `{}` contract accepts)
//!   that the oracle validates is accepted.
//!
//! Every disagreement fails the test (proptest shrinks it and prints the
//! contract, the reply, vouch's verdict and the oracle's), except these
//! deliberate differences, each confirmed narrowly where it happens and
//! counted in the figures line:
//!
//! - duplicate keys: `serde_json` keeps the last value, vouch refuses the
//!   reply (`duplicate_key`); such replies are not strict JSON for (d);
//! - consumer safety: vouch refuses integers beyond ±(2^53−1) on integer-only
//!   nodes and prototype-named or invisible-character keys in open objects,
//!   which JavaScript and other consumers read differently; excused only when
//!   the same contract with `x-vouch.allow: ["big_integers",
//!   "hazardous_keys"]` accepts the reply;
//! - repairs that change a valid value: `trim` and `default` (which replaces a
//!   `null` the schema allows when the node's `type` does not list `null`, and
//!   fills missing optional properties) run before the check and can turn a
//!   valid reply into a refused one (a blank string under `minLength`, a
//!   filled property under `maxProperties`, a default another node's
//!   `strip_unknown` removes, refused as `repairs_unsettled`…); excused only
//!   when the same contract without `trim` and `default` accepts the reply;
//! - `multipleOf` tolerance: with a non-integer divisor vouch allows a few
//!   ulps of the quotient (docs/contract.md: `0.0075` is a multiple of
//!   `0.0001`), the oracle divides the decimals exactly; excused only when
//!   the reply holds a number on which `{"multipleOf": m}` alone, judged by
//!   vouch and by the oracle, disagrees for one of the contract's divisors
//!   `m`, with a quotient that does not round to 0 (vouch never accepts
//!   those).
//!
//! A case that runs for more than two minutes (a hang) ends the test binary
//! with the contract and the reply.
//!
//! Bugs these tests found in vouch, all fixed, each with a focused test in
//! tests/oracle_regressions.rs: no-op repairs logged and repairs that did not
//! settle (now: no-op repairs are not logged, repair passes run until one
//! changes nothing, else `repairs_unsettled`); a default the contract's own
//! defaults fill again growing forever (now a compile error: a default must be
//! final); consumer-safety refusals inverted by `not`/`oneOf`/`anyOf` (now
//! sticky); `multipleOf` accepting `1e-20` for 2 (now a relative tolerance,
//! and a quotient that rounds to 0 is no multiple). A generated default that
//! is not final is dropped from the contract, like one that is invalid.
//!
//! Cases per property: `PROPTEST_CASES` (default 2,000), each a contract with
//! one to four replies, judged by the contract and by the same contract
//! without `x-vouch`. Quick mode runs in `cargo test` (about 15 s for the
//! four properties in a debug build on 2 cores); long mode (about half an
//! hour on 2 cores):
//! `PROPTEST_CASES=1000000 cargo test --release -p vouch --test oracle -- --nocapture --test-threads 2`.
//! Each property prints a figures line: contracts, verdicts, accepted and
//! refused, how often its premise held, and each deliberate difference.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRunner};
use serde_json::{json, Map, Value};
use vouch::{CompileErrorKind, Contract, ProblemCode, Verdict};

// ---------------------------------------------------------------------------
// A small deterministic generator for the parts drawn from a seed (instances,
// mutations, policies): proptest shrinks the contract's structure and the
// reply kinds; the seed picks the details.

#[derive(Clone)]
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        if hi <= lo {
            lo
        } else {
            lo + (self.next() % (hi - lo + 1) as u64) as i64
        }
    }
}

// ---------------------------------------------------------------------------
// Contracts.

const KEYS: &[&str] = &["a", "b", "id", "name", "score", "tags", "kind", "x_1"];

/// Patterns whose ECMA-262 and Rust `regex` meanings agree on every string
/// generated here, each with a way to write a matching string.
const PATTERNS: &[&str] = &[
    "^[a-z]+$",
    "[0-9]",
    "^[a-c]*$",
    "^a",
    "z$",
    "^[A-Z][a-z]*$",
    "ab|cd",
    "^(ab)+$",
    "^\\d{2,4}$",
    "^\\w+$",
    "\\s",
    "^[^ ]*$",
    "^x?y{1,3}$",
    "colou?r",
];

/// Shared definitions every contract carries; `g` is generated per contract.
fn fixed_defs() -> Map<String, Value> {
    let defs = json!({
        "pos": {"type": "integer", "minimum": 1, "maximum": 1000},
        "word": {"type": "string", "minLength": 1, "maxLength": 8, "pattern": "^[a-z]+$"},
        "color": {"enum": ["red", "green", "Blue"]},
        "tree": {
            "type": "object",
            "properties": {
                "value": {"type": "integer", "minimum": 0, "maximum": 99},
                "children": {"type": "array", "items": {"$ref": "#/$defs/tree"}, "maxItems": 3}
            },
            "required": ["value"],
            "additionalProperties": false
        }
    });
    match defs {
        Value::Object(m) => m,
        _ => unreachable!(),
    }
}

fn num(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or(Value::Null)
}

fn select_num(texts: &'static [&'static str]) -> impl Strategy<Value = Value> {
    prop::sample::select(texts).prop_map(num)
}

fn integer_schema() -> impl Strategy<Value = Value> {
    (
        prop::option::weighted(0.6, -20i64..20),
        prop::option::weighted(0.6, -2i64..40),
        prop::option::weighted(0.15, -20i64..20),
        prop::option::weighted(0.15, -2i64..40),
        prop::option::weighted(0.3, select_num(&["2", "3", "5", "10", "0.5", "2.5"])),
        any::<bool>(),
    )
        .prop_map(|(min, width, xmin, xwidth, mult, float_bounds)| {
            let mut m = Map::new();
            m.insert("type".into(), json!("integer"));
            // Bounds sometimes written as whole floats (`3.0`).
            let bound = |x: i64| if float_bounds { num(&format!("{x}.0")) } else { json!(x) };
            if let Some(min) = min {
                m.insert("minimum".into(), bound(min));
            }
            if let Some(w) = width {
                m.insert("maximum".into(), bound(min.unwrap_or(0) + w));
            }
            if let Some(x) = xmin {
                m.insert("exclusiveMinimum".into(), json!(x));
            }
            if let Some(w) = xwidth {
                m.insert("exclusiveMaximum".into(), json!(xmin.unwrap_or(0) + w));
            }
            if let Some(mult) = mult {
                m.insert("multipleOf".into(), mult);
            }
            Value::Object(m)
        })
}

fn number_schema() -> impl Strategy<Value = Value> {
    const BOUNDS: &[&str] = &["-10", "-2.5", "0", "0.5", "1", "3.25", "10", "99.9", "100"];
    (
        prop::option::weighted(0.5, select_num(BOUNDS)),
        prop::option::weighted(0.5, select_num(BOUNDS)),
        prop::option::weighted(0.15, select_num(BOUNDS)),
        prop::option::weighted(0.15, select_num(BOUNDS)),
        prop::option::weighted(0.3, select_num(&["0.5", "0.25", "0.1", "0.01", "2", "3", "1.5"])),
    )
        .prop_map(|(min, max, xmin, xmax, mult)| {
            let mut m = Map::new();
            m.insert("type".into(), json!("number"));
            for (k, v) in [("minimum", min), ("maximum", max), ("exclusiveMinimum", xmin), ("exclusiveMaximum", xmax)] {
                if let Some(v) = v {
                    m.insert(k.into(), v);
                }
            }
            if let Some(mult) = mult {
                m.insert("multipleOf".into(), mult);
            }
            Value::Object(m)
        })
}

fn string_schema() -> impl Strategy<Value = Value> {
    (
        prop::option::weighted(0.4, 0u64..4),
        prop::option::weighted(0.4, 0u64..8),
        prop::option::weighted(0.45, prop::sample::select(PATTERNS)),
    )
        .prop_map(|(min, width, pattern)| {
            let mut m = Map::new();
            m.insert("type".into(), json!("string"));
            if let Some(min) = min {
                m.insert("minLength".into(), json!(min));
            }
            if let Some(w) = width {
                m.insert("maxLength".into(), json!(min.unwrap_or(0) + w));
            }
            if let Some(p) = pattern {
                m.insert("pattern".into(), json!(p));
            }
            Value::Object(m)
        })
}

fn enum_values() -> impl Strategy<Value = Vec<Value>> {
    let member = prop::sample::select(vec![
        json!("a"),
        json!("b"),
        json!("A"),
        json!("yes"),
        json!("Yes"),
        json!("red"),
        json!(1),
        json!(2.5),
        json!(0),
        json!(true),
        json!(false),
        Value::Null,
        json!([1, "a"]),
        json!({"k": 1}),
        json!(""),
    ]);
    prop::collection::vec(member, 1..5).prop_map(|mut v| {
        // `enum` members may repeat in JSON Schema, but keep them tidy.
        let mut seen: Vec<Value> = Vec::new();
        v.retain(|x| {
            let fresh = !seen.contains(x);
            seen.push(x.clone());
            fresh
        });
        v
    })
}

fn leaf(with_g: bool) -> BoxedStrategy<Value> {
    let mut refs = vec!["#/$defs/pos", "#/$defs/word", "#/$defs/color", "#/$defs/tree"];
    if with_g {
        refs.push("#/$defs/g");
    }
    prop_oneof![
        4 => integer_schema(),
        3 => number_schema(),
        5 => string_schema(),
        2 => Just(json!({"type": "boolean"})),
        1 => Just(json!({"type": "null"})),
        2 => enum_values().prop_map(|e| json!({"enum": e})),
        1 => enum_values().prop_map(|e| json!({"const": e[0]})),
        1 => prop::sample::select(vec![
            json!({"type": ["integer", "null"]}),
            json!({"type": ["string", "null"], "maxLength": 4}),
            json!({"type": ["number", "boolean"]}),
            json!({"type": ["integer", "string"]}),
            json!({"type": "string", "enum": ["Yes", "No", "maybe"]}),
        ]),
        1 => prop::sample::select(vec![json!(true), json!(false), json!({})]),
        3 => prop::sample::select(refs).prop_map(|r| json!({"$ref": r})),
    ]
    .boxed()
}

fn object_schema(inner: BoxedStrategy<Value>) -> impl Strategy<Value = Value> {
    let additional = prop_oneof![3 => Just(None), 4 => Just(Some(json!(false))), 2 => inner.clone().prop_map(Some)];
    (
        prop::collection::vec((prop::sample::select(KEYS), inner.clone()), 1..5),
        any::<u8>(),
        additional,
        prop::option::weighted(0.1, (0u64..3, 1u64..4)),
        prop::option::weighted(0.12, inner),
        prop::option::weighted(0.08, one_of_texts(PROPERTY_NAMES)),
        prop::option::weighted(0.1, (0usize..8, 0usize..8)),
        prop::bool::weighted(0.9),
    )
        .prop_map(|(props, mask, additional, counts, pattern_props, names, dependent, typed)| {
            let mut m = Map::new();
            if typed {
                m.insert("type".into(), json!("object"));
            }
            let mut properties = Map::new();
            for (k, s) in props {
                properties.insert(k.to_owned(), s);
            }
            let required: Vec<Value> = properties
                .keys()
                .enumerate()
                .filter(|(i, _)| mask & (1 << (i % 8)) != 0)
                .map(|(_, k)| json!(k))
                .collect();
            let keys: Vec<String> = properties.keys().cloned().collect();
            m.insert("properties".into(), Value::Object(properties));
            if !required.is_empty() {
                m.insert("required".into(), Value::Array(required));
            }
            if let Some(a) = additional {
                m.insert("additionalProperties".into(), a);
            }
            if let Some((min, w)) = counts {
                m.insert("minProperties".into(), json!(min));
                m.insert("maxProperties".into(), json!(min + w));
            }
            if let Some(p) = pattern_props {
                m.insert("patternProperties".into(), json!({"^x_": p}));
            }
            if let Some(n) = names {
                m.insert("propertyNames".into(), n);
            }
            if let Some((i, j)) = dependent {
                let (a, b) = (&keys[i % keys.len()], &keys[j % keys.len()]);
                if a != b {
                    m.insert("dependentRequired".into(), json!({a.clone(): [b.clone()]}));
                }
            }
            Value::Object(m)
        })
}

fn array_schema(inner: BoxedStrategy<Value>) -> impl Strategy<Value = Value> {
    (
        prop::option::weighted(0.85, inner.clone()),
        prop::option::weighted(0.2, prop::collection::vec(inner.clone(), 1..3)),
        prop::option::weighted(0.35, 0u64..3),
        prop::option::weighted(0.35, 0u64..5),
        prop::bool::weighted(0.25),
        prop::option::weighted(0.12, inner),
        prop::option::weighted(0.3, (0u64..2, prop::option::of(1u64..3))),
        prop::bool::weighted(0.9),
    )
        .prop_map(|(items, prefix, min, width, unique, contains, contains_counts, typed)| {
            let mut m = Map::new();
            if typed {
                m.insert("type".into(), json!("array"));
            }
            if let Some(p) = prefix {
                m.insert("prefixItems".into(), Value::Array(p));
            }
            if let Some(i) = items {
                m.insert("items".into(), i);
            }
            if let Some(min) = min {
                m.insert("minItems".into(), json!(min));
            }
            if let Some(w) = width {
                m.insert("maxItems".into(), json!(min.unwrap_or(0) + w));
            }
            if unique {
                m.insert("uniqueItems".into(), json!(true));
            }
            if let Some(c) = contains {
                m.insert("contains".into(), c);
                if let Some((min, max)) = contains_counts {
                    m.insert("minContains".into(), json!(min));
                    if let Some(max) = max {
                        m.insert("maxContains".into(), json!(min + max));
                    }
                }
            }
            Value::Object(m)
        })
}

/// A loose constraint for `allOf` next to a schema: mostly satisfied by the
/// other branch's instances, sometimes not.
/// Loose constraints for `allOf` next to a schema: mostly satisfied by the
/// other branch's instances, sometimes not.
const REFINEMENTS: &[&str] = &[
    r#"{"required": ["a"]}"#,
    r#"{"minimum": 0}"#,
    r#"{"maximum": 50}"#,
    r#"{"maxLength": 5}"#,
    r#"{"minLength": 1}"#,
    r#"{"not": {"const": 0}}"#,
    r#"{"not": {"type": "null"}}"#,
    r#"{"type": ["object", "array", "string", "number", "boolean"]}"#,
    r#"{"maxItems": 2}"#,
    r#"{"properties": {"a": {"type": "integer"}}}"#,
    r#"{"multipleOf": 2}"#,
    r##"{"$ref": "#/$defs/pos"}"##,
];

const PROPERTY_NAMES: &[&str] =
    &[r#"{"maxLength": 4}"#, r#"{"pattern": "^[a-z_0-9]+$"}"#, r#"{"not": {"const": "b"}}"#];

/// One of `texts`, parsed. (The recursive strategies are rebuilt for every
/// case, so their constant parts are kept as text.)
fn one_of_texts(texts: &'static [&'static str]) -> impl Strategy<Value = Value> {
    (0..texts.len()).prop_map(move |i| num(texts[i]))
}

fn combination(inner: BoxedStrategy<Value>) -> impl Strategy<Value = Value> {
    prop_oneof![
        3 => prop::collection::vec(inner.clone(), 2..4).prop_map(|v| json!({"anyOf": v})),
        3 => prop::collection::vec(inner.clone(), 2..4).prop_map(|v| json!({"oneOf": v})),
        3 => (inner.clone(), one_of_texts(REFINEMENTS)).prop_map(|(a, r)| json!({"allOf": [a, r]})),
        1 => prop::collection::vec(inner.clone(), 2..3).prop_map(|v| json!({"allOf": v})),
        2 => inner.clone().prop_map(|s| json!({"not": s})),
        1 => (inner.clone(), inner.clone(), inner.clone()).prop_map(|(i, t, e)| json!({"if": i, "then": t, "else": e})),
        2 => inner.prop_map(|s| json!({"anyOf": [s, {"type": "null"}]})),
    ]
}

fn schema(with_g: bool) -> BoxedStrategy<Value> {
    leaf(with_g)
        .prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                4 => object_schema(inner.clone()),
                2 => array_schema(inner.clone()),
                2 => combination(inner),
            ]
        })
        .boxed()
}

/// A whole contract document: the generated root, `$defs` (with a generated
/// `g`), sometimes `$schema`.
fn document() -> impl Strategy<Value = Value> {
    (schema(true), schema(false), prop::bool::weighted(0.3)).prop_map(|(root, g, dialect)| {
        let mut m = match root {
            Value::Object(m) if !m.contains_key("$ref") => m,
            other => {
                let mut m = Map::new();
                m.insert("allOf".into(), json!([other]));
                m
            }
        };
        let mut defs = fixed_defs();
        defs.insert("g".into(), g);
        // Only the definitions reached from the root: less to compile.
        let mut reached = BTreeSet::new();
        let mut todo = Vec::new();
        refs_in(&Value::Object(m.clone()), &mut todo);
        while let Some(name) = todo.pop() {
            if let (Some(def), true) = (defs.get(&name), !reached.contains(&name)) {
                refs_in(def, &mut todo);
                reached.insert(name);
            }
        }
        defs.retain(|k, _| reached.contains(k));
        if !defs.is_empty() {
            m.insert("$defs".into(), Value::Object(defs));
        }
        if dialect {
            m.insert("$schema".into(), json!("https://json-schema.org/draft/2020-12/schema"));
        }
        Value::Object(m)
    })
}

/// The names of the `$defs` a schema refers to.
fn refs_in(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            if let Some(r) = m.get("$ref").and_then(Value::as_str) {
                out.push(r.trim_start_matches("#/$defs/").to_owned());
            }
            m.values().for_each(|x| refs_in(x, out));
        }
        Value::Array(a) => a.iter().for_each(|x| refs_in(x, out)),
        _ => {}
    }
}

// ---------------------------------------------------------------------------
// Walking schemas: which subschemas only test the value (no `x-vouch` there).

const TESTED_ONLY: &[&str] =
    &["anyOf", "oneOf", "not", "if", "then", "else", "contains", "propertyNames", "dependentSchemas"];

fn visit(s: &Value, tested: bool, f: &mut dyn FnMut(&Value, bool)) {
    f(s, tested);
    let Value::Object(m) = s else { return };
    for (k, v) in m {
        let t = tested || TESTED_ONLY.contains(&k.as_str());
        match k.as_str() {
            "additionalProperties" | "items" | "contains" | "propertyNames" | "not" | "if" | "then" | "else" => {
                visit(v, t, f);
            }
            "prefixItems" | "allOf" | "anyOf" | "oneOf" => {
                v.as_array().into_iter().flatten().for_each(|x| visit(x, t, f))
            }
            "properties" | "patternProperties" | "dependentSchemas" => {
                v.as_object().into_iter().flat_map(|o| o.values()).for_each(|x| visit(x, t, f));
            }
            _ => {}
        }
    }
}

fn visit_mut(s: &mut Value, tested: bool, f: &mut dyn FnMut(&mut Value, bool)) {
    f(s, tested);
    let Value::Object(m) = s else { return };
    for (k, v) in m.iter_mut() {
        let t = tested || TESTED_ONLY.contains(&k.as_str());
        match k.as_str() {
            "additionalProperties" | "items" | "contains" | "propertyNames" | "not" | "if" | "then" | "else" => {
                visit_mut(v, t, f);
            }
            "prefixItems" | "allOf" | "anyOf" | "oneOf" => {
                v.as_array_mut().into_iter().flatten().for_each(|x| visit_mut(x, t, f));
            }
            "properties" | "patternProperties" | "dependentSchemas" => {
                v.as_object_mut().into_iter().flat_map(|o| o.values_mut()).for_each(|x| visit_mut(x, t, f));
            }
            _ => {}
        }
    }
}

/// The `$defs` reached (through `$ref`, transitively) from a tested-only place.
fn tested_defs(doc: &Value) -> BTreeSet<String> {
    let empty = Map::new();
    let defs = doc.get("$defs").and_then(Value::as_object).unwrap_or(&empty);
    let mut tested = BTreeSet::new();
    loop {
        let before = tested.len();
        let mut mark = |s: &Value, t: bool| {
            if let (true, Some(r)) = (t, s.get("$ref").and_then(Value::as_str)) {
                tested.insert(r.trim_start_matches("#/$defs/").to_owned());
            }
        };
        visit(doc, false, &mut mark);
        let names: Vec<(String, bool)> = defs.keys().map(|k| (k.clone(), tested.contains(k))).collect();
        for (name, t) in names {
            let mut mark = |s: &Value, t: bool| {
                if let (true, Some(r)) = (t, s.get("$ref").and_then(Value::as_str)) {
                    tested.insert(r.trim_start_matches("#/$defs/").to_owned());
                }
            };
            visit(&defs[&name], t, &mut mark);
        }
        if tested.len() == before {
            return tested;
        }
    }
}

/// The same document without `trim`, `default` and `default_if_invalid`.
fn without_trim_and_default(v: &mut Value) {
    match v {
        Value::Object(map) => {
            if let Some(Value::Object(p)) = map.get_mut("x-vouch") {
                p.remove("default");
                if let Some(Value::Array(rules)) = p.get_mut("repair") {
                    rules.retain(|r| r != "trim" && r != "default_if_invalid");
                }
            }
            map.values_mut().for_each(without_trim_and_default);
        }
        Value::Array(items) => items.iter_mut().for_each(without_trim_and_default),
        _ => {}
    }
}

/// The same document with the consumer-safety allowances at the root.
fn with_allowances(doc: &Value) -> Value {
    let mut d = doc.clone();
    let root = d.as_object_mut().unwrap();
    let policy = root.entry("x-vouch").or_insert_with(|| json!({}));
    policy["allow"] = json!(["big_integers", "hazardous_keys"]);
    d
}

// ---------------------------------------------------------------------------
// Policies.

fn types_of(m: &Map<String, Value>) -> Vec<String> {
    match m.get("type") {
        Some(Value::String(t)) => vec![t.clone()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
        _ => Vec::new(),
    }
}

/// A policy vouch allows on this node, or none.
fn policy_for(node: &Value, snapshot: &Value, rng: &mut Rng) -> Option<Value> {
    let m = node.as_object()?;
    let types = types_of(m);
    let has = |t: &str| types.iter().any(|x| x == t);
    let mut rules: Vec<&str> = Vec::new();
    let numeric = has("number") || has("integer");
    if (numeric || has("boolean")) && !has("string") && rng.chance(50) {
        rules.push("coerce");
    }
    if has("integer") && !has("number") && rng.chance(50) {
        rules.push("round");
    }
    let bounded = ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"].iter().any(|k| m.contains_key(*k));
    let exclusive = m.contains_key("exclusiveMinimum") || m.contains_key("exclusiveMaximum");
    if numeric && bounded && !(exclusive && has("number")) && rng.chance(60) {
        rules.push("clamp");
    }
    if has("string") && rng.chance(50) {
        rules.push("trim");
    }
    if m.get("enum").and_then(Value::as_array).is_some_and(|e| e.iter().any(Value::is_string)) && rng.chance(50) {
        rules.push("enum_case");
    }
    if m.contains_key("maxLength") && rng.chance(40) {
        rules.push("truncate");
    }
    if m.contains_key("items") && rng.chance(50) {
        rules.push("drop_invalid_items");
    }
    if m.get("additionalProperties") == Some(&Value::Bool(false)) && rng.chance(60) {
        rules.push("strip_unknown");
    }
    let mut policy = Map::new();
    if rng.chance(35) {
        // Best effort: a default that does not satisfy the node is dropped at compile time.
        let mut g = Gen { root: snapshot, rng: Rng(rng.next()) };
        let d = g.instance(node, 0);
        policy.insert("default".into(), d);
        if rng.chance(50) {
            rules.push("default_if_invalid");
        }
    }
    if !rules.is_empty() {
        policy.insert("repair".into(), json!(rules));
    }
    (!policy.is_empty()).then_some(Value::Object(policy))
}

/// Put policies on about `percent`% of the nodes where they are allowed,
/// and sometimes unwraps at the root.
fn add_policies(doc: &mut Value, percent: usize, seed: u64) {
    let mut rng = Rng(seed);
    let snapshot = doc.clone();
    let tested = tested_defs(doc);
    let mut place = |s: &mut Value, t: bool| {
        if !t && s.is_object() && rng.chance(percent) {
            if let Some(p) = policy_for(s, &snapshot, &mut rng) {
                s.as_object_mut().unwrap().insert("x-vouch".into(), p);
            }
        }
    };
    if let Some(Value::Object(defs)) = doc.get_mut("$defs") {
        for (name, def) in defs.iter_mut() {
            visit_mut(def, tested.contains(name), &mut place);
        }
    }
    // The root last, without its `$defs` (visit_mut does not enter them).
    visit_mut(doc, false, &mut place);
    let unwrap = match rng.below(6) {
        0 => Some(json!(["fence"])),
        1 => Some(json!(["prose"])),
        2 => Some(json!(["fence", "prose"])),
        _ => None,
    };
    if let Some(u) = unwrap {
        let root = doc.as_object_mut().unwrap();
        let policy = root.entry("x-vouch").or_insert_with(|| json!({}));
        policy["unwrap"] = u;
    }
}

/// Compile the document; a generated default that does not satisfy its own
/// node, that the contract's repairs would change, or that holds a number a
/// reply may not hold (vouch refuses all three), is removed. Any other compile error is a bug in this generator or in vouch.
fn compile(doc: &mut Value) -> Result<Contract, String> {
    for _ in 0..64 {
        match Contract::from_value(doc.clone()) {
            Ok(c) => return Ok(c),
            Err(e)
                if e.kind == CompileErrorKind::BadPolicy
                    && (e.message.contains("does not satisfy")
                        || e.message.contains("is not final")
                        || e.message.contains("cannot stand in a reply")) =>
            {
                let node = doc.pointer_mut(&e.location).ok_or_else(|| format!("no node at {}", e.location))?;
                let policy = node.get_mut("x-vouch").and_then(Value::as_object_mut).unwrap();
                policy.remove("default");
                if let Some(Value::Array(rules)) = policy.get_mut("repair") {
                    rules.retain(|r| r != "default_if_invalid");
                    if rules.is_empty() {
                        policy.remove("repair");
                    }
                }
                if policy.is_empty() {
                    node.as_object_mut().unwrap().remove("x-vouch");
                }
            }
            Err(e) => return Err(format!("a generated contract does not compile: {e}\n{doc}")),
        }
    }
    Err(format!("could not compile {doc}"))
}

// ---------------------------------------------------------------------------
// Instances.

const CHARS: &[char] = &[
    'a', 'b', 'c', 'x', 'y', 'z', 'e', 'r', 'A', 'B', 'Z', '0', '1', '7', '9', ' ', '_', '-', 'é', '😀', '١', '\t',
    '\n', '\u{2028}',
];
const WORDS: &[&str] = &[
    "",
    " ",
    "a",
    "abc",
    "red",
    "RED",
    "Blue",
    "blue",
    "80",
    " 87.6 ",
    "true",
    "false",
    "null",
    "x_1",
    "colour",
    "ab",
    "cd",
    "é",
    "😀",
    "١٢",
    " z",
    "\t",
    "Yes",
    "YES",
    "maybe",
    "  padded  ",
];
/// Numbers models send besides small ones: the edges of the safe-integer
/// range and of `u64`, big and tiny magnitudes, `-0`, whole floats.
const NUMBERS: &[&str] = &[
    "-0",
    "0.0",
    "2.0",
    "1.5e2",
    "-12.75",
    "1e-7",
    "0.30000000000000004",
    "4.000000000000001",
    "1000000000000001",
    "9007199254740991",
    "9007199254740993",
    "-9007199254740993",
    "18446744073709551615",
    "18446744073709551616",
    "1e20",
    "100000000000000000000000000",
    "1e-20",
    "-5e-324",
];
/// Keys models add: the last three are read differently by other consumers.
const ODD_KEYS: &[&str] = &["extra", "a", "zz", "x_2", "", "Name", "__proto__", "constructor", "b\u{200b}"];

struct Gen<'a> {
    root: &'a Value,
    rng: Rng,
}

/// The decimal digits of a simple decimal: `2.5` is (25, 1).
fn decimal_parts(v: &Value) -> Option<(i64, u32)> {
    let text = v.to_string();
    if text.contains(['e', 'E']) {
        return None;
    }
    let (int, frac) = text.split_once('.').unwrap_or((&text, ""));
    let scale = u32::try_from(frac.len()).ok()?;
    Some((format!("{int}{frac}").parse().ok()?, scale))
}

/// `units / 10^scale` as decimal text.
fn decimal(units: i64, scale: u32) -> String {
    let digits = units.unsigned_abs().to_string();
    let sign = if units < 0 { "-" } else { "" };
    let scale = scale as usize;
    if scale == 0 {
        return format!("{sign}{digits}");
    }
    let padded = format!("{digits:0>width$}", width = scale + 1);
    let (int, frac) = padded.split_at(padded.len() - scale);
    format!("{sign}{int}.{frac}")
}

impl Gen<'_> {
    fn odd_key(&mut self) -> &'static str {
        let key: &&'static str = self.rng.pick(ODD_KEYS);
        key
    }

    fn string_of(&mut self, pool: &[char], len: usize) -> String {
        (0..len).map(|_| *self.rng.pick(pool)).collect()
    }

    fn random_string(&mut self) -> String {
        if self.rng.chance(40) {
            (*self.rng.pick(WORDS)).to_owned()
        } else {
            let len = self.rng.below(7);
            self.string_of(CHARS, len)
        }
    }

    fn random_leaf(&mut self) -> Value {
        match self.rng.below(12) {
            0 => Value::Null,
            1 => json!(self.rng.chance(50)),
            2..=4 => json!(self.rng.range(-20, 100)),
            5 => num(&decimal(self.rng.range(-999, 999), 2)),
            6 => {
                let text: &&str = self.rng.pick(NUMBERS);
                num(text)
            }
            _ => Value::String(self.random_string()),
        }
    }

    fn random_json(&mut self, depth: u32) -> Value {
        if depth == 0 || self.rng.chance(55) {
            return self.random_leaf();
        }
        if self.rng.chance(50) {
            let n = self.rng.below(4);
            Value::Array((0..n).map(|_| self.random_json(depth - 1)).collect())
        } else {
            let n = self.rng.below(4);
            let mut m = Map::new();
            for _ in 0..n {
                let k = if self.rng.chance(70) { *self.rng.pick(KEYS) } else { self.odd_key() };
                m.insert(k.to_owned(), self.random_json(depth - 1));
            }
            Value::Object(m)
        }
    }

    fn resolve(&self, r: &str) -> Option<&Value> {
        self.root.pointer(r.strip_prefix('#')?)
    }

    /// A candidate instance of `s` (best effort: the oracle picks among candidates).
    fn instance(&mut self, s: &Value, depth: u32) -> Value {
        match s {
            Value::Bool(true) => self.random_json(1),
            Value::Object(m) if depth < 14 => self.object_instance(m, depth),
            _ => Value::Null,
        }
    }

    fn object_instance(&mut self, m: &Map<String, Value>, depth: u32) -> Value {
        if let Some(r) = m.get("$ref").and_then(Value::as_str) {
            let target = self.resolve(r).cloned().unwrap_or(Value::Bool(true));
            return self.instance(&target, depth + 1);
        }
        if let Some(c) = m.get("const") {
            return c.clone();
        }
        if let Some(Value::Array(e)) = m.get("enum") {
            if !e.is_empty() {
                return self.rng.pick(e).clone();
            }
        }
        if let Some(Value::Array(all)) = m.get("allOf") {
            let parts: Vec<Value> = all.iter().map(|s| self.instance(s, depth + 1)).collect();
            if parts.iter().all(Value::is_object) && parts.len() > 1 {
                let mut merged = Map::new();
                for p in parts {
                    if let Value::Object(o) = p {
                        merged.extend(o);
                    }
                }
                return Value::Object(merged);
            }
            // Prefer a branch that says something about the value.
            let first = parts.into_iter().find(|p| !p.is_null());
            return first.unwrap_or(Value::Null);
        }
        for k in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = m.get(k) {
                if !branches.is_empty() {
                    let b = self.rng.pick(branches).clone();
                    return self.instance(&b, depth + 1);
                }
            }
        }
        if m.contains_key("not") {
            return self.random_json(2);
        }
        if m.contains_key("if") {
            let branch = if self.rng.chance(50) { m.get("then") } else { m.get("else") };
            let b = branch.cloned().unwrap_or(Value::Bool(true));
            return self.instance(&b, depth + 1);
        }
        let mut types = types_of(m);
        if types.is_empty() {
            let has_any = |ks: &[&str]| ks.iter().any(|k| m.contains_key(*k));
            if has_any(&["properties", "required", "additionalProperties", "patternProperties", "minProperties"]) {
                types.push("object".into());
            } else if has_any(&["items", "prefixItems", "contains", "minItems", "maxItems", "uniqueItems"]) {
                types.push("array".into());
            } else if has_any(&["minLength", "maxLength", "pattern"]) {
                types.push("string".into());
            } else if has_any(&["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"]) {
                types.push("number".into());
            } else {
                return self.random_json(2);
            }
        }
        let t = self.rng.pick(&types).clone();
        match t.as_str() {
            "null" => Value::Null,
            "boolean" => json!(self.rng.chance(50)),
            "integer" => self.number(m, true),
            "number" => self.number(m, false),
            "string" => Value::String(self.string(m)),
            "array" => self.array(m, depth),
            "object" => self.object(m, depth),
            _ => Value::Null,
        }
    }

    fn number(&mut self, m: &Map<String, Value>, integer: bool) -> Value {
        let get = |k: &str| m.get(k).and_then(Value::as_f64);
        let lo = [get("minimum"), get("exclusiveMinimum")].into_iter().flatten().reduce(f64::max);
        let hi = [get("maximum"), get("exclusiveMaximum")].into_iter().flatten().reduce(f64::min);
        let (lo, hi) = match (lo, hi) {
            (Some(l), Some(h)) => (l, h),
            (Some(l), None) => (l, l + 40.0),
            (None, Some(h)) => (h - 40.0, h),
            (None, None) => (-40.0, 40.0),
        };
        if let Some((mant, scale)) = m.get("multipleOf").and_then(decimal_parts) {
            let step = mant as f64 / 10f64.powi(scale as i32);
            let kmin = (lo / step).ceil() as i64;
            let kmax = (hi / step).floor() as i64;
            let k = self.rng.range(kmin, kmax.min(kmin + 60));
            return num(&decimal(k * mant, scale));
        }
        if integer || self.rng.chance(50) {
            let x = self.rng.range(lo.ceil() as i64, hi.floor() as i64);
            if integer && self.rng.chance(10) {
                return num(&format!("{x}.0"));
            }
            return json!(x);
        }
        let x = self.rng.range((lo * 100.0).ceil() as i64, (hi * 100.0).floor() as i64);
        num(&decimal(x, 2))
    }

    fn string(&mut self, m: &Map<String, Value>) -> String {
        let min = m.get("minLength").and_then(Value::as_u64).unwrap_or(0) as usize;
        let max = m.get("maxLength").and_then(Value::as_u64).map_or(min + 6, |x| x as usize);
        let len = self.rng.range(min as i64, max as i64) as usize;
        let lower: Vec<char> = ('a'..='z').collect();
        let digits: Vec<char> = ('0'..='9').collect();
        let word: Vec<char> = ('a'..='z').chain('A'..='Z').chain('0'..='9').chain(['_']).collect();
        let Some(p) = m.get("pattern").and_then(Value::as_str) else {
            return if self.rng.chance(25) { self.random_string() } else { self.string_of(CHARS, len) };
        };
        let rest = len.saturating_sub(1);
        match p {
            "^[a-z]+$" => self.string_of(&lower, len.max(1)),
            "[0-9]" => format!("{}{}", self.string_of(CHARS, rest), self.rng.pick(&digits)),
            "^[a-c]*$" => self.string_of(&['a', 'b', 'c'], len),
            "^a" => format!("a{}", self.string_of(CHARS, rest)),
            "z$" => format!("{}z", self.string_of(CHARS, rest)),
            "^[A-Z][a-z]*$" => format!("{}{}", self.rng.pick(&['A', 'Q', 'Z']), self.string_of(&lower, rest)),
            "ab|cd" => format!("{}{}", self.string_of(CHARS, len.saturating_sub(2)), self.rng.pick(&["ab", "cd"])),
            "^(ab)+$" => "ab".repeat((len / 2).max(1)),
            "^\\d{2,4}$" => self.string_of(&digits, len.clamp(2, 4)),
            "^\\w+$" => self.string_of(&word, len.max(1)),
            "\\s" => format!("{}{}", self.string_of(CHARS, rest), self.rng.pick(&[' ', '\t', '\n'])),
            "^[^ ]*$" => self.string_of(&['a', 'é', '😀', '_', '1'], len),
            "^x?y{1,3}$" => self.rng.pick(&["y", "xy", "yy", "xyyy"]).to_string(),
            "colou?r" => {
                format!("{}{}", self.string_of(CHARS, len.saturating_sub(5)), self.rng.pick(&["color", "colour"]))
            }
            _ => self.string_of(CHARS, len),
        }
    }

    fn array(&mut self, m: &Map<String, Value>, depth: u32) -> Value {
        let prefix: Vec<Value> = m.get("prefixItems").and_then(Value::as_array).cloned().unwrap_or_default();
        let items = m.get("items").cloned();
        let min = m.get("minItems").and_then(Value::as_u64).unwrap_or(0) as usize;
        let max = m.get("maxItems").and_then(Value::as_u64).map_or(min + 3, |x| x as usize).min(min + 3);
        let deep = depth > 6;
        let n = if deep { min } else { self.rng.range(min as i64, max as i64) as usize };
        let unique = m.get("uniqueItems") == Some(&Value::Bool(true));
        let mut out: Vec<Value> = Vec::with_capacity(n);
        for i in 0..n {
            let s = match (prefix.get(i), &items) {
                (Some(p), _) => p.clone(),
                (None, Some(Value::Bool(false))) => break,
                (None, Some(s)) => s.clone(),
                (None, None) => Value::Bool(true),
            };
            let mut v = self.instance(&s, depth + 1);
            for _ in 0..3 {
                if !unique || !out.contains(&v) {
                    break;
                }
                v = self.instance(&s, depth + 1);
            }
            out.push(v);
        }
        if let Some(c) = m.get("contains") {
            let want = m.get("minContains").and_then(Value::as_u64).unwrap_or(1) as usize;
            for _ in 0..want.max(1) {
                let v = self.instance(c, depth + 1);
                if out.is_empty() || self.rng.chance(50) {
                    out.push(v);
                } else {
                    let i = self.rng.below(out.len());
                    out[i] = v;
                }
            }
        }
        Value::Array(out)
    }

    fn object(&mut self, m: &Map<String, Value>, depth: u32) -> Value {
        let empty = Map::new();
        let props = m.get("properties").and_then(Value::as_object).unwrap_or(&empty);
        let required: Vec<&str> =
            m.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
        let mut out = Map::new();
        for (k, s) in props {
            if required.contains(&k.as_str()) || self.rng.chance(60) {
                let v = self.instance(s, depth + 1);
                out.insert(k.clone(), v);
            }
        }
        for k in &required {
            if !out.contains_key(*k) {
                let v = self.random_leaf();
                out.insert((*k).to_owned(), v);
            }
        }
        if let Some(Value::Object(pp)) = m.get("patternProperties") {
            for s in pp.values() {
                if self.rng.chance(50) {
                    let v = self.instance(s, depth + 1);
                    out.insert("x_9".into(), v);
                }
            }
        }
        if let Some(ap) = m.get("additionalProperties") {
            if ap != &Value::Bool(false) && self.rng.chance(30) {
                let v = self.instance(ap, depth + 1);
                out.insert("extra".into(), v);
            }
        }
        if let Some(Value::Object(dr)) = m.get("dependentRequired") {
            for (k, deps) in dr {
                if out.contains_key(k) {
                    for d in deps.as_array().into_iter().flatten().filter_map(Value::as_str) {
                        if !out.contains_key(d) {
                            let s = props.get(d).cloned().unwrap_or(Value::Bool(true));
                            let v = self.instance(&s, depth + 1);
                            out.insert(d.to_owned(), v);
                        }
                    }
                }
            }
        }
        Value::Object(out)
    }
}

// ---------------------------------------------------------------------------
// Replies.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Valid,
    Mutated,
    Duplicate,
    Truncated,
    Wrapped,
    Random,
    Garbage,
}

/// Every JSON Pointer in `v`, the root included.
fn pointers(v: &Value, at: &str, out: &mut Vec<String>) {
    out.push(at.to_owned());
    match v {
        Value::Object(map) => {
            for (k, item) in map {
                pointers(item, &format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")), out);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                pointers(item, &format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

fn mutate(v: &mut Value, g: &mut Gen<'_>) {
    let mut ps = Vec::new();
    pointers(v, "", &mut ps);
    let p = g.rng.pick(&ps).clone();
    let op = g.rng.below(13);
    if op == 0 {
        // Drop a field or an item.
        if let Some((parent, last)) = p.rsplit_once('/') {
            let key = last.replace("~1", "/").replace("~0", "~");
            match v.pointer_mut(parent) {
                Some(Value::Object(m)) => {
                    m.shift_remove(&key);
                }
                Some(Value::Array(a)) => {
                    if let Ok(i) = key.parse::<usize>() {
                        a.remove(i);
                    }
                }
                _ => {}
            }
        }
        return;
    }
    if op == 1 {
        // An extra property on some object.
        let objects: Vec<String> = ps.iter().filter(|p| v.pointer(p).is_some_and(Value::is_object)).cloned().collect();
        if objects.is_empty() {
            return;
        }
        let at = g.rng.pick(&objects).clone();
        let key = g.odd_key().to_owned();
        let value = g.random_json(1);
        if let Some(Value::Object(m)) = v.pointer_mut(&at) {
            m.insert(key, value);
        }
        return;
    }
    let Some(slot) = v.pointer_mut(&p) else { return };
    let new = match (op, &*slot) {
        (2, _) => Value::Null,
        // The type swapped.
        (3, _) => match slot {
            Value::String(_) => json!(g.rng.range(-5, 50)),
            Value::Number(_) => json!(slot.to_string()),
            Value::Bool(b) => json!(if *b { "true" } else { "no" }),
            Value::Null => json!(false),
            Value::Array(a) => a.first().cloned().unwrap_or(json!({})),
            Value::Object(_) => json!([slot.clone()]),
        },
        // Pushed out of range.
        (4, Value::Number(n)) => {
            // Shifted in decimal, so the result is the decimal it prints as.
            let (units, scale) = decimal_parts(&Value::Number(n.clone())).unwrap_or((0, 0));
            let (d, d_scale) = *g.rng.pick(&[(1, 0), (-1, 0), (1000, 0), (-1000, 0), (5, 1), (1, 3), (-1, 2)]);
            let scale_to = scale.max(d_scale);
            let widen = |u: i64, from: u32| 10i64.checked_pow(scale_to - from).and_then(|p| u.checked_mul(p));
            match (widen(units, scale), widen(d, d_scale)) {
                (Some(a), Some(b)) => num(&decimal(a.saturating_add(b), scale_to)),
                _ => Value::Number(n.clone()),
            }
        }
        (4, Value::String(s)) => json!(if g.rng.chance(50) { String::new() } else { s.repeat(3) + "abcdefgh" }),
        (4, Value::Array(a)) => {
            let mut a = a.clone();
            if g.rng.chance(50) {
                a.clear();
            } else {
                a.extend(a.clone());
                a.push(g.random_leaf());
            }
            Value::Array(a)
        }
        // A number as a string, as models write them.
        (5, Value::Number(n)) => json!(if g.rng.chance(50) { n.to_string() } else { format!(" {n} ") }),
        (5, Value::Bool(b)) => json!(b.to_string()),
        // Padding and case.
        (6, Value::String(s)) => {
            json!(format!("{}{s}{}", g.rng.pick(&[" ", "\n", "\t", ""]), g.rng.pick(&[" ", "  ", ""])))
        }
        (7, Value::String(s)) => json!(if g.rng.chance(50) { s.to_uppercase() } else { s.to_lowercase() }),
        // A fraction where an integer was.
        (8, Value::Number(n)) => num(&format!("{}.5", n.as_i64().unwrap_or(3))),
        // Integers beyond the safe range.
        (9, _) => {
            let text: &&str = g.rng.pick(&["9007199254740993", "-9007199254740992", "1e20", "18446744073709551616"]);
            num(text)
        }
        // Unicode in strings.
        (10, Value::String(s)) => json!(format!("{s}{}", g.rng.pick(&["é", "😀", "\u{2028}", "١"]))),
        // A duplicated item (uniqueItems).
        (11, Value::Array(a)) if !a.is_empty() => {
            let mut a = a.clone();
            a.push(a[0].clone());
            Value::Array(a)
        }
        _ => g.random_json(1),
    };
    *slot = new;
}

fn escape_key(key: &str, unicode: bool) -> String {
    let mut chars = key.chars();
    match (unicode, chars.next()) {
        (true, Some(c)) if (c as u32) < 0x10000 => {
            let mut out = format!("\"\\u{:04x}", c as u32);
            let rest = serde_json::to_string(chars.as_str()).unwrap();
            out.push_str(&rest[1..]);
            out
        }
        _ => serde_json::to_string(key).unwrap(),
    }
}

/// Serialize `v` with one object given a duplicate key.
fn write_dup(v: &Value, target: usize, seen: &mut usize, out: &mut String, g: &mut Gen<'_>) {
    match v {
        Value::Object(m) => {
            let me = *seen;
            *seen += 1;
            out.push('{');
            let mut first = true;
            for (k, item) in m {
                if !first {
                    out.push(',');
                }
                first = false;
                out.push_str(&escape_key(k, false));
                out.push(':');
                write_dup(item, target, seen, out, g);
            }
            if me == target {
                if let Some((k, item)) = m.iter().next() {
                    let value = if g.rng.chance(50) { item.clone() } else { g.random_leaf() };
                    let _ = write!(out, ",{}:{}", escape_key(k, g.rng.chance(30)), value);
                }
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_dup(item, target, seen, out, g);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

fn objects_with_keys(v: &Value) -> usize {
    match v {
        Value::Object(m) => usize::from(!m.is_empty()) + m.values().map(objects_with_keys).sum::<usize>(),
        Value::Array(a) => a.iter().map(objects_with_keys).sum(),
        _ => 0,
    }
}

fn objects_in_order(v: &Value, out: &mut Vec<bool>) {
    match v {
        Value::Object(m) => {
            out.push(!m.is_empty());
            m.values().for_each(|x| objects_in_order(x, out));
        }
        Value::Array(a) => a.iter().for_each(|x| objects_in_order(x, out)),
        _ => {}
    }
}

fn duplicate_text(v: &Value, g: &mut Gen<'_>) -> String {
    if objects_with_keys(v) == 0 {
        let t = v.to_string();
        return format!("{{\"k\":{t},{}:{t}}}", escape_key("k", g.rng.chance(30)));
    }
    let mut flags = Vec::new();
    objects_in_order(v, &mut flags);
    let candidates: Vec<usize> = flags.iter().enumerate().filter(|(_, f)| **f).map(|(i, _)| i).collect();
    let target = *g.rng.pick(&candidates);
    let mut out = String::new();
    write_dup(v, target, &mut 0, &mut out, g);
    out
}

fn serialize(v: &Value, g: &mut Gen<'_>) -> String {
    if g.rng.chance(30) {
        serde_json::to_string_pretty(v).unwrap()
    } else {
        v.to_string()
    }
}

fn wrap(text: &str, g: &mut Gen<'_>) -> String {
    match g.rng.below(7) {
        0 => format!("```json\n{text}\n```"),
        1 => format!("```\n{text}\n```\n"),
        2 => format!("Here is the answer:\n{text}\nHope it helps."),
        3 => format!("<think>maybe {{\"a\": 1}}?</think>\n{text}"),
        4 => format!("Sure. {text} And again: {text}"),
        5 => format!("```python\n{text}\n```"),
        _ => format!("  {text}  \n"),
    }
}

const GARBAGE: &[&str] = &[
    "{'a': 1}",
    "[1, 2,]",
    "NaN",
    "{\"a\": 1} trailing",
    "tru",
    "\"\\ud800\"",
    "01",
    "1e400",
    "-",
    "{\"a\" 1}",
    "",
    "   ",
    "[1] [2]",
    "{\"a\":1,}",
    "\"\u{1}\"",
    "[\"a\\x\"]",
    "Infinity",
    "{\"a\":\"\\uD83D\"}",
];

impl Subject {
    /// A candidate valid for the oracle when one is found in a few tries.
    fn valid_instance(&self, g: &mut Gen<'_>) -> Value {
        let mut last = Value::Null;
        for _ in 0..8 {
            let v = g.instance(&self.stripped, 0);
            if self.oracle.is_valid(&v) {
                return v;
            }
            last = v;
        }
        last
    }

    fn reply(&self, kind: Kind, seed: u64) -> String {
        let mut g = Gen { root: &self.stripped, rng: Rng(seed) };
        match kind {
            Kind::Valid => {
                let v = self.valid_instance(&mut g);
                serialize(&v, &mut g)
            }
            Kind::Mutated => {
                let mut v = self.valid_instance(&mut g);
                for _ in 0..=g.rng.below(3) {
                    mutate(&mut v, &mut g);
                }
                serialize(&v, &mut g)
            }
            Kind::Duplicate => {
                let v = self.valid_instance(&mut g);
                duplicate_text(&v, &mut g)
            }
            Kind::Truncated => {
                let v = self.valid_instance(&mut g);
                let text = serialize(&v, &mut g);
                let cuts: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
                let cut = *g.rng.pick(&cuts);
                text[..cut].to_owned()
            }
            Kind::Wrapped => {
                let mut v = self.valid_instance(&mut g);
                if g.rng.chance(40) {
                    mutate(&mut v, &mut g);
                }
                let text = serialize(&v, &mut g);
                wrap(&text, &mut g)
            }
            Kind::Random => {
                let v = g.random_json(3);
                serialize(&v, &mut g)
            }
            Kind::Garbage => {
                if g.rng.chance(50) {
                    (*g.rng.pick(GARBAGE)).to_owned()
                } else {
                    // A valid reply with one character replaced.
                    let v = self.valid_instance(&mut g);
                    let text = v.to_string();
                    let cuts: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
                    let at = *g.rng.pick(&cuts);
                    let c = text[at..].chars().next().map_or(1, char::len_utf8);
                    format!(
                        "{}{}{}",
                        &text[..at],
                        g.rng.pick(&["'", ",", "}", "]", "\"", ":", " ", "x"]),
                        &text[at + c..]
                    )
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------
// The subject: one generated contract, compiled by vouch and by the oracle.

struct Subject {
    doc: Value,
    stripped: Value,
    contract: Contract,
    bare: Contract,
    oracle: jsonschema::Validator,
    has_policy: bool,
    trims_or_defaults: bool,
    /// Every `multipleOf` in the contract.
    multiples: Vec<Value>,
}

#[derive(Clone)]
struct Case {
    schema: Value,
    policy_percent: usize,
    policy_seed: u64,
    replies: Vec<(Kind, u64)>,
}

impl std::fmt::Debug for Case {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Case {{ schema: {}, policy_percent: {}, policy_seed: {}, replies: {:?} }}",
            self.schema, self.policy_percent, self.policy_seed, self.replies
        )
    }
}

impl Subject {
    fn new(case: &Case) -> Result<Self, String> {
        let mut doc = case.schema.clone();
        if case.policy_percent > 0 {
            add_policies(&mut doc, case.policy_percent, case.policy_seed);
        }
        let contract = compile(&mut doc)?;
        let mut stripped = doc.clone();
        common::strip_policy(&mut stripped);
        let bare = if stripped == doc {
            contract.clone()
        } else {
            Contract::from_value(stripped.clone())
                .map_err(|e| format!("the contract without x-vouch does not compile: {e}\n{stripped}"))?
        };
        let oracle = jsonschema::validator_for(&stripped)
            .map_err(|e| format!("the oracle does not compile the contract: {e}\n{stripped}"))?;
        let has_policy = stripped != doc;
        let text = if has_policy { doc.to_string() } else { String::new() };
        let trims_or_defaults = text.contains("\"trim\"") || text.contains("\"default\"");
        let mut multiples = Vec::new();
        collect_key(&stripped, "multipleOf", &mut multiples);
        Ok(Self { doc, stripped, contract, bare, oracle, has_policy, trims_or_defaults, multiples })
    }

    /// The contracts to judge: the one with its policy (when it has one) and
    /// the same without any `x-vouch`.
    fn contracts(&self) -> Vec<(&'static str, &Contract)> {
        if self.has_policy {
            vec![("contract", &self.contract), ("contract without x-vouch", &self.bare)]
        } else {
            vec![("contract", &self.bare)]
        }
    }

    fn report(&self, raw: &str, label: &str, verdict: &Verdict, what: &str) -> String {
        let parsed = serde_json::from_str::<Value>(raw);
        let oracle = match &parsed {
            Ok(v) => format!("serde_json reads {v}; the oracle says valid = {}", self.oracle.is_valid(v)),
            Err(e) => format!("serde_json cannot parse it: {e}"),
        };
        format!(
            "DISAGREEMENT: {what}\n  {label}: {}\n  oracle schema: {}\n  reply: {raw:?}\n  vouch: {}\n  oracle: {oracle}",
            if label == "contract" { self.doc.to_string() } else { self.stripped.to_string() },
            self.stripped,
            serde_json::to_string(&verdict.to_json()).unwrap()
        )
    }
}

/// The values of every `key` in a document.
fn collect_key(v: &Value, key: &str, out: &mut Vec<Value>) {
    match v {
        Value::Object(m) => {
            if let Some(x) = m.get(key) {
                out.push(x.clone());
            }
            m.values().for_each(|x| collect_key(x, key, out));
        }
        Value::Array(a) => a.iter().for_each(|x| collect_key(x, key, out)),
        _ => {}
    }
}

fn numbers(v: &Value, out: &mut Vec<Value>) {
    match v {
        Value::Number(_) => out.push(v.clone()),
        Value::Object(m) => m.values().for_each(|x| numbers(x, out)),
        Value::Array(a) => a.iter().for_each(|x| numbers(x, out)),
        _ => {}
    }
}

impl Subject {
    /// Whether `v` holds a number on which vouch's documented `multipleOf`
    /// tolerance (a few ulps of the quotient, docs/contract.md) and the
    /// oracle's exact decimal division disagree, for one of the contract's
    /// divisors. A quotient that rounds to 0 is never excused: there the
    /// tolerance is absolute, and `1e-20` passing `multipleOf: 2` is a bug.
    fn in_tolerance_zone(&self, v: &Value) -> bool {
        if self.multiples.is_empty() {
            return false;
        }
        let mut xs = Vec::new();
        numbers(v, &mut xs);
        xs.iter().any(|x| {
            self.multiples.iter().any(|m| {
                let (Some(xf), Some(mf)) = (x.as_f64(), m.as_f64()) else { return false };
                if (xf / mf).round() == 0.0 {
                    return false;
                }
                let schema = json!({"multipleOf": m});
                // vouch's exact division, with the number profile's big integers allowed
                // (the oracle holds 64-bit integers exactly too, but divides them as doubles).
                let allowed = json!({"multipleOf": m, "x-vouch": {"allow": ["big_integers"]}});
                let by_vouch = Contract::from_value(allowed).is_ok_and(|c| c.check_value(x).is_accepted());
                by_vouch != jsonschema::is_valid(&schema, x)
            })
        })
    }
}

// ---------------------------------------------------------------------------
// Figures.

struct Tally {
    cases: AtomicU64,
    verdicts: AtomicU64,
    accepted: AtomicU64,
    refused: AtomicU64,
    premise: AtomicU64,
    duplicate_keys: AtomicU64,
    consumer_safety: AtomicU64,
    repair_changed_valid: AtomicU64,
    multiple_of_tolerance: AtomicU64,
}

impl Tally {
    const fn new() -> Self {
        Self {
            cases: AtomicU64::new(0),
            verdicts: AtomicU64::new(0),
            accepted: AtomicU64::new(0),
            refused: AtomicU64::new(0),
            premise: AtomicU64::new(0),
            duplicate_keys: AtomicU64::new(0),
            consumer_safety: AtomicU64::new(0),
            repair_changed_valid: AtomicU64::new(0),
            multiple_of_tolerance: AtomicU64::new(0),
        }
    }

    fn verdict(&self, v: &Verdict) {
        self.verdicts.fetch_add(1, Relaxed);
        if v.is_accepted() {
            self.accepted.fetch_add(1, Relaxed);
        } else {
            self.refused.fetch_add(1, Relaxed);
        }
    }
}

fn bump(a: &AtomicU64) {
    a.fetch_add(1, Relaxed);
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(2_000)
}

/// JSON equality as JSON Schema reads it (numbers by value).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64(), x.as_u64(), y.as_u64()) {
            (Some(p), Some(q), _, _) => p == q,
            (_, _, Some(p), Some(q)) => p == q,
            _ => x.as_f64() == y.as_f64(),
        },
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, p)| y.get(k).is_some_and(|q| same(p, q)))
        }
        _ => a == b,
    }
}

/// The contract that accepts any strict, duplicate-free JSON value.
fn strict_json() -> &'static Contract {
    static STRICT: OnceLock<Contract> = OnceLock::new();
    STRICT.get_or_init(|| {
        Contract::from_value(json!({"x-vouch": {"allow": ["big_integers", "hazardous_keys"]}})).unwrap()
    })
}

#[derive(Clone, Copy)]
struct Mix {
    /// Weights of Valid, Mutated, Duplicate, Truncated, Wrapped, Random, Garbage.
    kinds: [u32; 7],
    /// Percent of contracts that get policies, and of nodes in them.
    contracts_with_policy: u32,
    nodes_with_policy: usize,
}

fn case_strategy(mix: Mix) -> impl Strategy<Value = Case> {
    let all =
        [Kind::Valid, Kind::Mutated, Kind::Duplicate, Kind::Truncated, Kind::Wrapped, Kind::Random, Kind::Garbage];
    let weighted: Vec<Kind> =
        all.iter().zip(mix.kinds).flat_map(|(k, w)| std::iter::repeat_n(*k, w as usize)).collect();
    let kind = prop::sample::select(weighted);
    let policy = prop::bool::weighted(f64::from(mix.contracts_with_policy) / 100.0);
    (document(), policy, any::<u64>(), prop::collection::vec((kind, any::<u64>()), 1..=4)).prop_map(
        move |(schema, policy, policy_seed, replies)| Case {
            schema,
            policy_percent: if policy { mix.nodes_with_policy } else { 0 },
            policy_seed,
            replies,
        },
    )
}

type Property = fn(&Subject, &str, &Tally) -> Result<(), String>;

/// A case running longer than this is a hang: the test binary fails, naming it.
const HANG_SECONDS: u64 = 120;

/// Per test: since when, the case, the contract as compiled, the reply.
type Watched = Mutex<BTreeMap<&'static str, (Instant, [String; 3])>>;

fn watched() -> &'static Watched {
    static WATCHED: OnceLock<Watched> = OnceLock::new();
    WATCHED.get_or_init(|| {
        std::thread::spawn(|| loop {
            std::thread::sleep(Duration::from_secs(1));
            let w = watched().lock().unwrap_or_else(PoisonError::into_inner);
            for (test, (since, [case, contract, reply])) in w.iter() {
                if since.elapsed() > Duration::from_secs(HANG_SECONDS) {
                    eprintln!(
                        "oracle {test}: HANG: one case has run for over {HANG_SECONDS} s\n  contract: {contract}\n  \
                         reply: {reply:?}\n  {case}"
                    );
                    std::process::exit(101);
                }
            }
        });
        Mutex::new(BTreeMap::new())
    })
}

/// Record what a test is working on: a watchdog thread ends the process
/// if one case never finishes, so a hang in vouch or the oracle fails the
/// test with its reproducer. `Some(case)` starts a case, `None` ends it.
fn watch_case(test: &'static str, case: Option<String>) {
    let mut w = watched().lock().unwrap_or_else(PoisonError::into_inner);
    match case {
        Some(case) => w.insert(test, (Instant::now(), [case, String::new(), String::new()])),
        None => w.remove(test),
    };
}

/// The contract (1) or the reply (2) of the case a test is working on.
fn watch_detail(test: &'static str, which: usize, text: String) {
    let mut w = watched().lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((_, details)) = w.get_mut(test) {
        details[which] = text;
    }
}

fn run(name: &'static str, tally: &'static Tally, mix: Mix, property: Property) {
    let cases = cases();
    let config =
        Config { cases, failure_persistence: None, rng_algorithm: RngAlgorithm::XorShift, ..Config::default() };
    let mut runner = TestRunner::new(config);
    let started = Instant::now();
    let result = runner.run(&case_strategy(mix), |case| {
        watch_case(name, Some(format!("{case:?}")));
        let subject = Subject::new(&case).map_err(TestCaseError::fail)?;
        watch_detail(name, 1, subject.doc.to_string());
        bump(&tally.cases);
        for &(kind, seed) in &case.replies {
            let raw = subject.reply(kind, seed);
            watch_detail(name, 2, raw.clone());
            property(&subject, &raw, tally).map_err(TestCaseError::fail)?;
        }
        watch_case(name, None);
        Ok(())
    });
    watch_case(name, None);
    if let Err(e) = result {
        panic!("oracle {name}: {e}");
    }
    let get = |a: &AtomicU64| a.load(Relaxed);
    let (verdicts, accepted, refused, premise) =
        (get(&tally.verdicts), get(&tally.accepted), get(&tally.refused), get(&tally.premise));
    common::figure(&format!(
        "oracle {name}: {} contracts x replies ({verdicts} verdicts, {:.1} s): accepted {accepted}, refused {refused}, \
         premise held {premise}, disagreements 0, deliberate differences: duplicate keys {}, consumer safety {}, \
         repairs that change a valid value {}, multipleOf tolerance {}",
        get(&tally.cases),
        started.elapsed().as_secs_f64(),
        get(&tally.duplicate_keys),
        get(&tally.consumer_safety),
        get(&tally.repair_changed_valid),
        get(&tally.multiple_of_tolerance),
    ));
    // Not vacuous: both outcomes, and the property's premise, occur often.
    let floor = u64::from(cases) / 10;
    assert!(accepted >= floor, "only {accepted} accepted");
    assert!(refused >= floor, "only {refused} refused");
    assert!(premise >= floor, "the premise held only {premise} times");
}

// ---------------------------------------------------------------------------
// The properties.

/// (a) Accepted with no repairs ⇒ the reply is JSON serde_json reads as the
/// same value, and the oracle validates it.
fn accepted_without_repairs(s: &Subject, raw: &str, t: &Tally) -> Result<(), String> {
    for (label, c) in s.contracts() {
        let v = c.check(raw);
        t.verdict(&v);
        let Verdict::Accepted(a) = &v else { continue };
        if !a.repairs.is_empty() {
            continue;
        }
        bump(&t.premise);
        let parsed = serde_json::from_str::<Value>(raw).map_err(|_| {
            s.report(raw, label, &v, "vouch accepted, with no repairs, a reply serde_json cannot parse")
        })?;
        if !same(a.value(), &parsed) {
            return Err(s.report(raw, label, &v, "vouch's value differs from serde_json's"));
        }
        if !s.oracle.is_valid(&parsed) {
            if s.in_tolerance_zone(&parsed) {
                bump(&t.multiple_of_tolerance);
                continue;
            }
            return Err(s.report(raw, label, &v, "vouch accepted with no repairs, the oracle rejects"));
        }
    }
    Ok(())
}

/// (b) Accepted with repairs ⇒ the oracle validates the output, and the
/// output re-checked is accepted unchanged with no repairs.
fn repairs_are_valid_and_final(s: &Subject, raw: &str, t: &Tally) -> Result<(), String> {
    let v = s.contract.check(raw);
    t.verdict(&v);
    let Verdict::Accepted(a) = &v else { return Ok(()) };
    if a.repairs.is_empty() {
        return Ok(());
    }
    bump(&t.premise);
    if !s.oracle.is_valid(a.value()) {
        if !s.in_tolerance_zone(a.value()) {
            return Err(s.report(raw, "contract", &v, "the oracle rejects the repaired value"));
        }
        bump(&t.multiple_of_tolerance);
    }
    let again = s.contract.check(a.value().to_string());
    match &again {
        Verdict::Accepted(b) if b.repairs.is_empty() && same(b.value(), a.value()) => Ok(()),
        _ => Err(s.report(
            raw,
            "contract",
            &v,
            &format!(
                "re-checking the repaired value does not give it back with no repairs: {}",
                serde_json::to_string(&again.to_json()).unwrap()
            ),
        )),
    }
}

/// (c) The oracle rejects (or the reply is not JSON) and the contract has no
/// `x-vouch` ⇒ vouch refuses.
fn oracle_rejects_vouch_refuses(s: &Subject, raw: &str, t: &Tally) -> Result<(), String> {
    let v = s.bare.check(raw);
    t.verdict(&v);
    let parsed = serde_json::from_str::<Value>(raw).ok();
    if parsed.as_ref().is_some_and(|p| s.oracle.is_valid(p)) {
        return Ok(());
    }
    bump(&t.premise);
    if v.is_accepted() {
        if parsed.as_ref().is_some_and(|p| s.in_tolerance_zone(p)) {
            bump(&t.multiple_of_tolerance);
            return Ok(());
        }
        return Err(s.report(raw, "contract without x-vouch", &v, "the oracle rejects, vouch accepted"));
    }
    Ok(())
}

/// (d) A strict, duplicate-free JSON reply the oracle validates ⇒ accepted.
fn oracle_valid_vouch_accepts(s: &Subject, raw: &str, t: &Tally) -> Result<(), String> {
    let strict = strict_json().check(raw);
    let parsed = serde_json::from_str::<Value>(raw);
    let Verdict::Accepted(read) = &strict else {
        if strict.problems().iter().any(|p| p.code == ProblemCode::DuplicateKey)
            && parsed.as_ref().is_ok_and(|p| s.oracle.is_valid(p))
        {
            // serde_json keeps the last of the repeated keys; vouch refuses the reply.
            bump(&t.duplicate_keys);
        }
        for (_, c) in s.contracts() {
            let v = c.check(raw);
            t.verdict(&v);
            if v.is_accepted() && !v.repairs().iter().any(|r| r.rule == "unwrap") {
                return Err(s.report(raw, "contract", &v, "the {} contract refuses, this contract accepted"));
            }
        }
        return Ok(());
    };
    let parsed = parsed.map_err(|e| {
        s.report(raw, "contract", &strict, &format!("vouch reads strict JSON that serde_json cannot parse: {e}"))
    })?;
    if !same(read.value(), &parsed) {
        return Err(s.report(raw, "contract", &strict, "vouch and serde_json read different values"));
    }
    let valid = s.oracle.is_valid(&parsed);
    if valid {
        bump(&t.premise);
    }
    for (label, c) in s.contracts() {
        let v = c.check(raw);
        t.verdict(&v);
        if !valid || v.is_accepted() {
            continue;
        }
        if s.in_tolerance_zone(&parsed) {
            bump(&t.multiple_of_tolerance);
            continue;
        }
        let doc = if label == "contract" { &s.doc } else { &s.stripped };
        if Contract::from_value(with_allowances(doc)).unwrap().check(raw).is_accepted() {
            // Big integers on integer nodes, or prototype-named / invisible keys.
            bump(&t.consumer_safety);
            continue;
        }
        if label == "contract" && s.trims_or_defaults {
            let mut plain = with_allowances(doc);
            without_trim_and_default(&mut plain);
            if Contract::from_value(plain).unwrap().check(raw).is_accepted() {
                // `trim` or `default` changed a valid value into a refused one.
                bump(&t.repair_changed_valid);
                continue;
            }
        }
        return Err(s.report(raw, label, &v, "the oracle validates a strict JSON reply, vouch refused"));
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// The tests.

static TALLY_A: Tally = Tally::new();
static TALLY_B: Tally = Tally::new();
static TALLY_C: Tally = Tally::new();
static TALLY_D: Tally = Tally::new();

#[test]
fn a_accepted_without_repairs_is_valid_for_the_oracle() {
    let mix = Mix { kinds: [3, 4, 1, 1, 1, 2, 1], contracts_with_policy: 50, nodes_with_policy: 35 };
    run("(a) accepted with no repairs => oracle-valid", &TALLY_A, mix, accepted_without_repairs);
}

#[test]
fn b_repaired_values_are_valid_and_final() {
    let mix = Mix { kinds: [1, 6, 0, 0, 2, 1, 0], contracts_with_policy: 100, nodes_with_policy: 60 };
    run(
        "(b) accepted with repairs => oracle-valid output, re-check has no repairs",
        &TALLY_B,
        mix,
        repairs_are_valid_and_final,
    );
}

#[test]
fn c_oracle_rejections_are_refused_without_policy() {
    let mix = Mix { kinds: [2, 4, 1, 1, 1, 2, 1], contracts_with_policy: 0, nodes_with_policy: 0 };
    run("(c) oracle rejects, no x-vouch => refused", &TALLY_C, mix, oracle_rejects_vouch_refuses);
}

#[test]
fn d_oracle_valid_strict_json_is_accepted() {
    let mix = Mix { kinds: [6, 2, 1, 0, 0, 1, 0], contracts_with_policy: 50, nodes_with_policy: 35 };
    run("(d) oracle-valid strict JSON => accepted", &TALLY_D, mix, oracle_valid_vouch_accepts);
}
