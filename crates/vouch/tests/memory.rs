//! Peak heap of a check against the reply's size: every reply within the
//! limits costs at most [`BOUND`] times its size, plus the contract (the
//! bound documented in docs/guarantees.md §3).
//!
//! Measured with a counting global allocator (this test binary only):
//! current and peak bytes allocated, the peak reset before each check; a
//! `realloc` counts as the allocator's default one does, old and new block
//! both held while copying (an over-count: the system allocator often
//! grows in place). One test, so no other test allocates meanwhile.
//!
//! Each container shape (arrays of small items, an object of many keys,
//! nesting at the depth limit, strings with escapes) and each repair rule,
//! with every value repaired (the cap is hit: refused) and with a few
//! repaired (accepted), at just under a 256 KiB `max_bytes` (the multiple
//! does not depend on the size; 4 MiB is slow in a debug build). Time is
//! not asserted here: `benches/linearity.rs` measures it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use peak_alloc::PeakAlloc;
use serde_json::{json, Value};
use vouch::Contract;

#[global_allocator]
static HEAP: PeakAlloc = PeakAlloc;

/// The documented bound: peak heap during a check (and reading the
/// accepted value) at most this many times the reply's size. The worst
/// shape is one-item arrays nested to the depth limit (`[[[…[0]…]]]`, 144×):
/// each `[`…`]` pair, two bytes, is a vector of capacity 4 of 72-byte
/// values. Flat arrays of small items cost 55×: 72 bytes per item of 2,
/// times 1.5 while the vector grows (old and new block held).
const BOUND: f64 = 150.0;

const MAX_BYTES: usize = 256 << 10;

/// A reply just under `MAX_BYTES`: `open`, then items (`special` for the
/// first `repaired`, `item` after), separated by commas, then `close`.
fn items(open: &str, special: &str, item: &str, repaired: usize, close: &str) -> String {
    let mut out = String::with_capacity(MAX_BYTES);
    out.push_str(open);
    let mut i = 0;
    loop {
        let next = if i < repaired { special } else { item };
        let next = next.replace("{i}", &i.to_string());
        if out.len() + next.len() + 1 + close.len() > MAX_BYTES {
            break;
        }
        if i > 0 {
            out.push(',');
        }
        out.push_str(&next);
        i += 1;
    }
    out.push_str(close);
    out
}

/// The peak heap of checking `raw` (and reading the value of what is
/// accepted) over the reply's size, and the verdict's outcome and first code.
fn peak(contract: &Contract, raw: &str) -> (f64, String) {
    let base = HEAP.current_usage();
    HEAP.reset_peak_usage();
    let verdict = contract.check(raw);
    if let Some(v) = verdict.value() {
        std::hint::black_box(v);
    }
    let summary = match verdict.problems().first() {
        Some(p) => format!("refused {}", p.code),
        None => format!("accepted, {} repairs", verdict.repairs().len()),
    };
    drop(verdict);
    let used = HEAP.peak_usage().saturating_sub(base);
    (used as f64 / raw.len() as f64, summary)
}

fn contract(mut schema: Value) -> Contract {
    schema["x-vouch"]["limits"]["max_bytes"] = json!(MAX_BYTES);
    Contract::from_value(schema).unwrap()
}

fn array_of(items: Value) -> Value {
    json!({"type": "array", "items": items})
}

struct Case {
    name: &'static str,
    schema: Value,
    raw: String,
    /// The verdict's summary starts so (the case tests what it means to).
    expect: &'static str,
}

fn case(name: &'static str, schema: Value, raw: String, expect: &'static str) -> Case {
    Case { name, schema, raw, expect }
}

fn shapes() -> Vec<Case> {
    let any = json!({});
    let arr = |item: Value| array_of(item);
    let deep = |d: usize| format!("{}0{}", "[".repeat(d), "]".repeat(d));
    let deep_obj = |d: usize| format!("{}0{}", r#"{"a":"#.repeat(d), "}".repeat(d));
    vec![
        case("[0,0,…] {}", any.clone(), items("[", "0", "0", 0, "]"), "accepted"),
        case("[0,0,…] integers", arr(json!({"type": "integer"})), items("[", "0", "0", 0, "]"), "accepted"),
        case("[0,0,…] last refused", arr(json!({"type": "integer"})), items("[", "0", "0", 0, ",\"x\"]"), "refused"),
        case("[{},{},…]", any.clone(), items("[", "{}", "{}", 0, "]"), "accepted"),
        case("[[],[],…]", any.clone(), items("[", "[]", "[]", 0, "]"), "accepted"),
        case("[\"\",…]", arr(json!({"type": "string"})), items("[", "\"\"", "\"\"", 0, "]"), "accepted"),
        case("[\"\",…] last refused", arr(json!({"type": "string"})), items("[", "\"\"", "\"\"", 0, ",0]"), "refused"),
        case(
            "[\"\\n\",…] escapes",
            arr(json!({"type": "string"})),
            items("[", r#""\n""#, r#""\n""#, 0, "]"),
            "accepted",
        ),
        case(
            "one string of escapes",
            json!({"type": "string"}),
            format!("\"{}\"", r"\u00e9".repeat((MAX_BYTES - 2) / 6)),
            "accepted",
        ),
        case("{\"k0\":0,…} many keys", any.clone(), items("{", "", r#""{i}":0"#, 0, "}"), "accepted"),
        case(
            "{\"k0\":0,…} strip refused",
            json!({"type": "object", "additionalProperties": false}),
            items("{", "", r#""{i}":0"#, 0, "}"),
            "refused",
        ),
        case("nesting at the depth limit", any.clone(), items("[", &deep(127), &deep(127), 0, "]"), "accepted"),
        case("objects nested at the limit", any, items("[", &deep_obj(127), &deep_obj(127), 0, "]"), "accepted"),
    ]
}

/// Each rule: the item schema, an item it repairs, a valid item.
fn rules() -> Vec<(&'static str, Value, &'static str, &'static str)> {
    let rule = |r: &str| json!({"repair": [r]});
    vec![
        ("coerce", json!({"type": "integer", "x-vouch": rule("coerce")}), r#""1""#, "1"),
        ("round", json!({"type": "integer", "x-vouch": rule("round")}), "1.5", "1"),
        ("clamp", json!({"type": "integer", "minimum": 1, "x-vouch": rule("clamp")}), "0", "1"),
        ("trim", json!({"type": "string", "x-vouch": rule("trim")}), r#"" a ""#, r#""a""#),
        ("enum_case", json!({"type": "string", "enum": ["a"], "x-vouch": rule("enum_case")}), r#""A""#, r#""a""#),
        ("truncate", json!({"type": "string", "maxLength": 1, "x-vouch": rule("truncate")}), r#""ab""#, r#""a""#),
        (
            "strip_unknown",
            json!({"type": "object", "additionalProperties": false, "x-vouch": rule("strip_unknown")}),
            r#"{"x":0}"#,
            "{}",
        ),
        ("default", json!({"type": "integer", "x-vouch": {"default": 0}}), "null", "0"),
        (
            "default (fill)",
            json!({"type": "object", "properties": {"a": {"type": "integer", "x-vouch": {"default": 0}}}}),
            "{}",
            r#"{"a":0}"#,
        ),
        (
            "default_if_invalid",
            json!({"type": "integer", "x-vouch": {"repair": ["default_if_invalid"], "default": 0}}),
            r#""x""#,
            "0",
        ),
    ]
}

#[test]
fn peak_heap_is_a_small_multiple_of_the_reply() {
    let mut cases = shapes();
    for (name, item, repaired, valid) in rules() {
        let schema = array_of(item);
        cases.push(case(
            name,
            schema.clone(),
            items("[", repaired, valid, usize::MAX, "]"),
            "refused too_many_repairs",
        ));
        cases.push(case(name, schema, items("[", repaired, valid, 500, "]"), "accepted, 500 repairs"));
    }
    // The rules on containers: one repair for the whole array or reply.
    let drop = json!({"type": "array", "items": {"type": "integer"}, "x-vouch": {"repair": ["drop_invalid_items"]}});
    cases.push(case(
        "drop_invalid_items",
        drop.clone(),
        items("[", r#""x""#, "0", usize::MAX, "]"),
        "accepted, 1 repairs",
    ));
    cases.push(case("drop_invalid_items", drop, items("[", r#""x""#, "0", 500, "]"), "accepted, 1 repairs"));
    let strip = json!({"type": "object", "additionalProperties": false, "x-vouch": {"repair": ["strip_unknown"]}});
    cases.push(case("strip_unknown keys", strip, items("{", "", r#""{i}":0"#, 0, "}"), "refused too_many_repairs"));
    // A recursive contract replacing every level of a reply nested to the depth limit.
    let nested = json!({"$defs": {"t": {"type": "array", "items": {"$ref": "#/$defs/t"},
        "x-vouch": {"repair": ["default_if_invalid"], "default": []}}}, "$ref": "#/$defs/t"});
    let deep_bad = format!("{}\"x\"{}", "[".repeat(127), "]".repeat(127));
    let deep_good = format!("{}{}", "[".repeat(127), "]".repeat(127));
    let many = items("[", &deep_bad, &deep_bad, 0, "]");
    cases.push(case("default_if_invalid nested", nested.clone(), many, "refused too_many_repairs"));
    let few = items("[", &deep_bad, &deep_good, 3, "]");
    cases.push(case("default_if_invalid nested", nested, few, "accepted, 3 repairs"));

    let mut worst = (0.0, "");
    let mut over = Vec::new();
    for c in &cases {
        let contract = contract(c.schema.clone());
        assert!(c.raw.len() > MAX_BYTES - 1024 && c.raw.len() <= MAX_BYTES, "{}: {} bytes", c.name, c.raw.len());
        let (multiple, summary) = peak(&contract, &c.raw);
        println!("{:<40} {:>8} bytes  peak {multiple:>5.1}×  {summary}", c.name, c.raw.len());
        assert!(summary.starts_with(c.expect), "{}: {summary}, expected {}", c.name, c.expect);
        if multiple > BOUND {
            over.push(format!("{}: peak heap {multiple:.1}× the reply, over {BOUND}×", c.name));
        }
        if multiple > worst.0 {
            worst = (multiple, c.name);
        }
    }
    println!("worst: {:.1}× ({})", worst.0, worst.1);
    assert!(over.is_empty(), "{over:#?}");
}
