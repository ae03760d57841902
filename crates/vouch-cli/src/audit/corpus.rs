//! The hostile corpus: the replies models really send when they misbehave,
//! generated for one contract from its schema and a valid reply.

use serde_json::{json, Map, Value};
use vouch::Contract;

/// One generated reply.
#[derive(Debug, Clone)]
pub struct Hostile {
    /// The family (`missing`, `wrong_type`, `truncated`, …).
    pub class: &'static str,
    /// What exactly was done (`/productPresent = "no"`).
    pub name: String,
    /// The bytes, as a model would send them.
    pub raw: Vec<u8>,
    /// Whether a sound contract must refuse it (false only for controls).
    pub hostile: bool,
}

fn push(out: &mut Vec<Hostile>, class: &'static str, name: impl Into<String>, raw: impl Into<Vec<u8>>) {
    out.push(Hostile { class, name: name.into(), raw: raw.into(), hostile: true });
}

/// A value satisfying `schema`, built from its keywords; the caller checks it.
pub fn synthesize(document: &Value) -> Option<Value> {
    Synth { document, refs: 0 }.value(document)
}

struct Synth<'a> {
    document: &'a Value,
    refs: usize,
}

impl Synth<'_> {
    fn value(&mut self, schema: &Value) -> Option<Value> {
        let m = match schema {
            Value::Bool(true) => return Some(json!({})),
            Value::Object(m) => m,
            _ => return None,
        };
        if let Some(r) = m.get("$ref").and_then(Value::as_str) {
            self.refs += 1;
            if self.refs > 32 {
                return None;
            }
            let target = r.strip_prefix('#').and_then(|p| self.document.pointer(p)).cloned()?;
            return self.value(&target);
        }
        if let Some(c) = m.get("const") {
            return Some(c.clone());
        }
        if let Some(e) = m.get("enum").and_then(Value::as_array) {
            return e.iter().find(|v| !v.is_null()).or(e.first()).cloned();
        }
        for key in ["anyOf", "oneOf", "allOf"] {
            if let Some(first) = m.get(key).and_then(Value::as_array).and_then(|a| a.first()) {
                return self.value(first);
            }
        }
        let t = match m.get("type") {
            Some(Value::String(t)) => t.as_str(),
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).find(|t| *t != "null").unwrap_or("null"),
            _ => "object",
        };
        Some(match t {
            "null" => Value::Null,
            "boolean" => Value::Bool(false),
            "integer" | "number" => {
                let lo = m
                    .get("minimum")
                    .and_then(Value::as_f64)
                    .or(m.get("exclusiveMinimum").and_then(Value::as_f64).map(|x| x + 1.0));
                let hi = m.get("maximum").and_then(Value::as_f64);
                let x = match (lo, hi) {
                    (Some(a), Some(b)) => ((a + b) / 2.0).floor(),
                    (Some(a), None) => a.ceil(),
                    (None, Some(b)) => b.floor().min(0.0),
                    (None, None) => 1.0,
                };
                json!(x as i64)
            }
            "string" => Value::String(sample_string(m)),
            "array" => {
                let n = m.get("minItems").and_then(Value::as_u64).unwrap_or(1).max(1);
                let item = m.get("items").cloned().unwrap_or(json!({"type": "string"}));
                let one = self.value(&item)?;
                Value::Array((0..n).map(|_| one.clone()).collect())
            }
            _ => {
                let mut out = Map::new();
                for (k, s) in m.get("properties").and_then(Value::as_object).into_iter().flatten() {
                    out.insert(k.clone(), self.value(s)?);
                }
                Value::Object(out)
            }
        })
    }
}

fn sample_string(m: &Map<String, Value>) -> String {
    let s = match m.get("format").and_then(Value::as_str) {
        Some("date") => "2024-05-01",
        Some("date-time") => "2024-05-01T12:00:00Z",
        Some("time") => "12:00:00Z",
        Some("email") => "someone@example.com",
        Some("uuid") => "123e4567-e89b-12d3-a456-426614174000",
        Some("uri") => "https://example.com/",
        Some("ipv4") => "192.0.2.1",
        Some("ipv6") => "2001:db8::1",
        Some("hostname") => "example.com",
        Some("duration") => "P1D",
        _ => "sample answer",
    };
    let min = m.get("minLength").and_then(Value::as_u64).unwrap_or(0) as usize;
    let max = m.get("maxLength").and_then(Value::as_u64).map_or(usize::MAX, |x| x as usize);
    let mut out = s.to_owned();
    while out.chars().count() < min {
        out.push('x');
    }
    out.chars().take(max).collect()
}

/// A field of the valid reply: where it is, and the schema that governs it.
struct Field {
    pointer: String,
    schema: Value,
    required: bool,
}

/// Top-level and nested-object fields reachable through `properties`.
fn fields(document: &Value, schema: &Value, at: &str, depth: usize, out: &mut Vec<Field>) {
    let schema = resolve(document, schema);
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    for (name, sub) in schema.get("properties").and_then(Value::as_object).into_iter().flatten() {
        let pointer = format!("{at}/{}", name.replace('~', "~0").replace('/', "~1"));
        let sub = resolve(document, sub);
        out.push(Field { pointer: pointer.clone(), schema: sub.clone(), required: required.contains(&name.as_str()) });
        if depth < 2 {
            fields(document, &sub, &pointer, depth + 1, out);
            if let Some(items) = sub.get("items") {
                fields(document, items, &format!("{pointer}/0"), depth + 1, out);
            }
        }
    }
}

fn resolve(document: &Value, schema: &Value) -> Value {
    let mut s = schema.clone();
    for _ in 0..16 {
        match s.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix('#')).and_then(|p| document.pointer(p))
        {
            Some(t) => s = t.clone(),
            None => break,
        }
    }
    s
}

fn with(base: &Value, pointer: &str, value: Value) -> Option<Value> {
    let mut v = base.clone();
    *v.pointer_mut(pointer)? = value;
    Some(v)
}

fn without(base: &Value, pointer: &str) -> Option<Value> {
    let (parent, last) = pointer.rsplit_once('/')?;
    let mut v = base.clone();
    let key = last.replace("~1", "/").replace("~0", "~");
    v.pointer_mut(parent)?.as_object_mut()?.shift_remove(&key)?;
    Some(v)
}

fn types_of(schema: &Value) -> Vec<String> {
    match schema.get("type") {
        Some(Value::String(t)) => vec![t.clone()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
        _ => Vec::new(),
    }
}

/// The hostile corpus for `contract`, built around `base` (a reply it accepts).
pub fn generate(contract: &Contract, base: Option<&Value>) -> Vec<Hostile> {
    let mut out = Vec::new();
    for (name, raw) in [("empty", ""), ("spaces", "   "), ("newlines", "\n\t\r\n")] {
        push(&mut out, "empty", name, raw);
    }
    for raw in ["null", "true", "false", "0", "1", "-1", "\"\"", "\"yes\"", "\"no\"", "[]", "[{}]", "{}"] {
        push(&mut out, if raw == "{}" { "empty_object" } else { "root_type" }, raw, raw);
    }
    for raw in ["NaN", "True", "None", "undefined", "{'a': 1}", "{a: 1}", "// comment\n{}"] {
        push(&mut out, "not_json", raw, raw);
    }
    push(&mut out, "deep_nesting", "10,000 nested arrays", "[".repeat(10_000) + &"]".repeat(10_000));
    push(&mut out, "deep_nesting", "10,000 nested objects", "{\"a\":".repeat(10_000) + "1" + &"}".repeat(10_000));
    push(&mut out, "large", "a 5 MB string", format!("\"{}\"", "a".repeat(5 << 20)));
    let Some(base) = base else { return out };
    let text = base.to_string();
    out.push(Hostile { class: "control", name: "the valid reply".into(), raw: text.clone().into(), hostile: false });

    let mut all = Vec::new();
    fields(contract.document(), contract.document(), "", 0, &mut all);
    for f in &all {
        let Some(current) = base.pointer(&f.pointer) else { continue };
        let p = &f.pointer;
        if let Some(v) = without(base, p) {
            push(
                &mut out,
                "missing",
                format!("{p} left out{}", if f.required { "" } else { " (optional)" }),
                v.to_string(),
            );
        }
        if let Some(v) = with(base, p, Value::Null) {
            push(&mut out, "null", format!("{p} = null"), v.to_string());
        }
        let wrong = [
            json!("no"),
            json!("false"),
            json!("true"),
            json!(""),
            json!(0),
            json!(1),
            json!([]),
            json!({}),
            json!(false),
            json!(true),
        ];
        for w in wrong {
            if std::mem::discriminant(&w) == std::mem::discriminant(current) && w != json!("") && w != json!([]) {
                continue;
            }
            if w == *current {
                continue;
            }
            if let Some(v) = with(base, p, w.clone()) {
                let class = match (&w, current) {
                    (Value::String(s), Value::String(_)) if s.is_empty() => "empty_string",
                    (Value::Array(a), Value::Array(_)) if a.is_empty() => "empty_list",
                    _ => "wrong_type",
                };
                push(&mut out, class, format!("{p} = {w}"), v.to_string());
            }
        }
        for member in f.schema.get("enum").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str) {
            let mut variants = vec![
                capitalize(member),
                member.to_uppercase(),
                format!(" {member} "),
                format!("{member}s"),
                member.replace('_', " "),
                member.replace('_', "-"),
            ];
            variants.retain(|v| v != member);
            variants.dedup();
            for near in variants {
                if let Some(v) = with(base, p, json!(near)) {
                    push(&mut out, "enum_near_miss", format!("{p} = {near:?}"), v.to_string());
                }
            }
        }
        let members: Vec<&str> =
            f.schema.get("enum").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
        if !members.is_empty() {
            // Words models reach for instead of the allowed values; free text may say anything.
            for synonym in ["likely", "unknown", "n/a", "yes", "maybe", "TBD", "none", "other"]
                .into_iter()
                .filter(|s| !members.contains(s))
            {
                if let Some(v) = with(base, p, json!(synonym)) {
                    push(&mut out, "enum_near_miss", format!("{p} = {synonym:?}"), v.to_string());
                }
            }
        }
        let types = types_of(&f.schema);
        if types.iter().any(|t| t == "integer" || t == "number") {
            let min = f.schema.get("minimum").and_then(Value::as_f64);
            let max = f.schema.get("maximum").and_then(Value::as_f64);
            let mut numbers: Vec<(String, String)> = vec![
                ("1e308".into(), "1e308".into()),
                ("-1e308".into(), "-1e308".into()),
                ("1e400 (overflows)".into(), "1e400".into()),
                ("-0".into(), "-0".into()),
                ("0.5".into(), "0.5".into()),
                ("9007199254740993".into(), "9007199254740993".into()),
                ("the number as a string".into(), format!("\"{current}\"")),
            ];
            if let Some(m) = min {
                numbers.push((format!("below the minimum ({})", m - 1.0), json!(m - 1.0).to_string()));
            }
            if let Some(m) = max {
                numbers.push((format!("above the maximum ({})", m + 1.0), json!(m + 1.0).to_string()));
                numbers.push(("a percentage scale mistake".into(), json!(m * 100.0 + 42.0).to_string()));
            }
            for (what, literal) in numbers {
                // Splice the literal into the text: 1e400 has no Value form.
                let marker = "\u{1}VOUCH\u{1}";
                if let Some(v) = with(base, p, json!(marker)) {
                    let raw = v.to_string().replace(&json!(marker).to_string(), &literal);
                    // -0 is 0 to every reader: generated, but not an attack.
                    out.push(Hostile {
                        class: "number",
                        name: format!("{p} = {what}"),
                        raw: raw.into(),
                        hostile: literal != "-0",
                    });
                }
            }
        }
        if types.iter().any(|t| t == "string") {
            push_opt(
                &mut out,
                "blank_string",
                format!("{p} = \"   \""),
                with(base, p, json!("   ")).map(|v| v.to_string()),
            );
            if let Some(max) = f.schema.get("maxLength").and_then(Value::as_u64) {
                let long = "x".repeat(max as usize + 1);
                push_opt(
                    &mut out,
                    "long_string",
                    format!("{p} over maxLength"),
                    with(base, p, json!(long)).map(|v| v.to_string()),
                );
            }
        }
        if let Value::Bool(b) = current {
            // A repeated key with the other answer: parsers disagree on which wins.
            let key = p.rsplit('/').next().unwrap_or_default();
            if let Some(raw) = add_member(&text, p, &format!("{}:{}", json!(key), !b)) {
                push(&mut out, "duplicate_key", format!("{p}: {b}, then {}", !b), raw);
            }
            // The other order too: which one a parser keeps decides the answer.
            let flipped = with(base, p, json!(!b)).map(|v| v.to_string());
            if let Some(raw) = flipped.and_then(|t| add_member(&t, p, &format!("{}:{b}", json!(key)))) {
                push(&mut out, "duplicate_key", format!("{p}: {}, then {b}", !b), raw);
            }
        }
        if p.matches('/').count() == 1 {
            let key = &p[1..];
            if let Some(first) = key.chars().next() {
                let escaped = format!("\\u{:04x}{}", first as u32, &key[first.len_utf8()..]);
                if let Some(v) = without(base, p) {
                    // The same key to every JSON parser: a control, not an attack.
                    if let Some(raw) = add_member(&v.to_string(), "", &format!("\"{escaped}\":{current}")) {
                        out.push(Hostile {
                            class: "escaped_key",
                            name: format!("{p} spelled with an escape"),
                            raw: raw.into(),
                            hostile: false,
                        });
                    }
                    let spaced = add_member(&v.to_string(), "", &format!("{}:{current}", json!(format!("{key} "))));
                    push_opt(&mut out, "spaced_key", format!("{p} with a trailing space in the key"), spaced);
                }
                let dup_escaped = add_member(&text, "", &format!("\"{escaped}\":{current}"));
                push_opt(&mut out, "duplicate_key", format!("{p} repeated, spelled with an escape"), dup_escaped);
            }
        }
    }
    if base.is_object() {
        for key in ["extra", "__proto__", "constructor", "prototype", "confidence"] {
            let raw = add_member(
                &text,
                "",
                &format!("{}:{}", json!(key), if key == "__proto__" { "{\"admin\":true}" } else { "1" }),
            );
            push_opt(&mut out, "extra_property", format!("extra property {key:?}"), raw);
        }
    }
    let pretty = serde_json::to_string_pretty(base).unwrap_or_default();
    push(&mut out, "trailing_text", "text after the reply", format!("{text} I hope this helps!"));
    push(&mut out, "trailing_text", "a second object", format!("{text}\n{text}"));
    push(&mut out, "wrapped", "a ```json code fence", format!("```json\n{pretty}\n```"));
    push(&mut out, "wrapped", "a bare ``` code fence", format!("```\n{pretty}\n```"));
    push(
        &mut out,
        "wrapped",
        "prose around it",
        format!("Sure! Here is the result:\n{text}\nLet me know if you need anything else."),
    );
    push(
        &mut out,
        "wrapped",
        "a <think> block first",
        format!("<think>Let me look at the image carefully.</think>\n{text}"),
    );
    push(&mut out, "wrapped", "two candidates in prose", format!("Draft: {text}\nFinal: {text}"));
    // Truncation at every structural position of the valid reply.
    for (i, c) in pretty.char_indices() {
        if matches!(c, '{' | '[' | ',' | ':' | '"' | '}' | ']') && i + c.len_utf8() < pretty.len() {
            let cut = &pretty[..i + c.len_utf8()];
            push(&mut out, "truncated", format!("cut after byte {}", i + c.len_utf8()), cut);
        }
    }
    out
}

fn push_opt(out: &mut Vec<Hostile>, class: &'static str, name: String, raw: Option<impl Into<Vec<u8>>>) {
    if let Some(raw) = raw {
        push(out, class, name, raw);
    }
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    c.next().map(|f| f.to_uppercase().collect::<String>() + c.as_str()).unwrap_or_default()
}

/// `text` with `member` (`"key":value`) added at the end of the object at
/// the parent of `pointer` (or the root object for `""`). Works on the text
/// so a repeated key survives.
fn add_member(text: &str, pointer: &str, member: &str) -> Option<String> {
    if pointer.matches('/').count() > 1 {
        return None;
    }
    let end = text.rfind('}')?;
    let body = text[..end].trim_end();
    let sep = if body.ends_with('{') { "" } else { "," };
    Some(format!("{body}{sep}{member}}}"))
}
