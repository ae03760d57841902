//! Plain-language instructions for the model, generated from the contract,
//! so the prompt and the validator can never drift apart.

use std::fmt::Write;

use serde_json::{Map, Value};

/// Enum members that mean "I cannot tell": the model should pick them rather
/// than guess.
const UNSURE: &[&str] = &["unknown", "unsure", "not_sure", "undetermined", "cannot_tell", "unclear", "n/a"];

struct Writer<'a> {
    document: &'a Value,
    out: String,
    /// `$ref`s being described, to stop on recursion.
    refs: Vec<String>,
    /// (where, member) for each "unknown"-like enum member.
    unsure: Vec<(String, String)>,
}

pub(super) fn render(document: &Value) -> String {
    let mut w = Writer { document, out: String::new(), refs: Vec::new(), unsure: Vec::new() };
    let what = match document.get("type").and_then(Value::as_str) {
        Some("object") => "a single JSON object",
        Some("array") => "a single JSON array",
        _ => "a single JSON value",
    };
    let _ = writeln!(w.out, "Reply with {what} and nothing else: no explanation, no Markdown code fence.");
    // The contract's own description is for its authors; property
    // descriptions (the questions) do go to the model.
    let before = std::mem::take(&mut w.out);
    let shape = w.phrase(document, "", 0);
    let nested = std::mem::replace(&mut w.out, before);
    let _ = writeln!(w.out, "The reply is {shape}");
    w.out.push_str(&nested);
    for (at, member) in std::mem::take(&mut w.unsure) {
        let _ = writeln!(w.out, "If you cannot tell {at}, use {} instead of guessing.", json(&Value::String(member)));
    }
    let _ = writeln!(w.out, "Reply with the JSON {} only.", if what.contains("object") { "object" } else { "value" });
    w.out
}

fn json(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

fn indent(depth: usize) -> String {
    "  ".repeat(depth)
}

impl Writer<'_> {
    /// A phrase for the value of `schema`, ending in a full stop or a list;
    /// nested lists are written to `out` after the phrase's line.
    fn phrase(&mut self, schema: &Value, at: &str, depth: usize) -> String {
        crate::deeper(|| self.phrase_here(schema, at, depth))
    }

    fn phrase_here(&mut self, schema: &Value, at: &str, depth: usize) -> String {
        let map = match schema {
            Value::Object(m) => m,
            Value::Bool(true) => return "any JSON value.".into(),
            _ => return "nothing (no value is allowed).".into(),
        };
        if let Some(r) = map.get("$ref").and_then(Value::as_str) {
            return self.reference(r, at, depth);
        }
        if let Some(c) = map.get("const") {
            return format!("exactly {}.", json(c));
        }
        if let Some(values) = map.get("enum").and_then(Value::as_array) {
            self.note_unsure(values, at);
            let list: Vec<String> = values.iter().map(json).collect();
            return format!("one of {}.", list.join(", "));
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(branches) = map.get(key).and_then(Value::as_array) {
                if let Some(values) = constants(branches) {
                    self.note_unsure(&values, at);
                    let list: Vec<String> = values.iter().map(json).collect();
                    return format!("one of {}.", list.join(", "));
                }
                let parts: Vec<String> = branches
                    .iter()
                    .enumerate()
                    .map(|(i, b)| format!("({}) {}", i + 1, self.phrase(b, at, depth).trim_end_matches('.')))
                    .collect();
                return format!("{} of: {}.", if key == "oneOf" { "exactly one" } else { "any" }, parts.join("; "));
            }
        }
        let types: Vec<&str> = match map.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        let nullable = types.contains(&"null");
        let main: Vec<&str> = types.iter().copied().filter(|t| *t != "null").collect();
        let mut phrase = match main.as_slice() {
            ["object"] => self.object(map, at, depth),
            ["array"] => self.array(map, at, depth),
            ["string"] => string(map),
            ["integer"] => number(map, "an integer"),
            ["number"] => number(map, "a number"),
            ["boolean"] => "true or false.".to_owned(),
            [] if nullable => "null.".to_owned(),
            [] => "any JSON value.".to_owned(),
            several => format!("a value of type {}.", several.join(" or ")),
        };
        if nullable && !main.is_empty() {
            phrase = format!("{} Or null.", phrase);
        }
        phrase
    }

    fn reference(&mut self, r: &str, at: &str, depth: usize) -> String {
        let name = r.rsplit('/').next().unwrap_or(r).to_owned();
        if self.refs.iter().any(|x| x == r) {
            return format!("an object of the same shape as {name} (described above).");
        }
        let target = r
            .strip_prefix('#')
            .and_then(crate::pointer::percent_decode)
            .and_then(|p| self.document.pointer(&p).cloned());
        match target {
            Some(t) => {
                self.refs.push(r.to_owned());
                let p = self.phrase(&t, at, depth);
                self.refs.pop();
                p
            }
            None => "a value (see the schema).".to_owned(),
        }
    }

    fn object(&mut self, map: &Map<String, Value>, at: &str, depth: usize) -> String {
        let required: Vec<&str> = map
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let closed = map.get("additionalProperties") == Some(&Value::Bool(false));
        let Some(props) = map.get("properties").and_then(Value::as_object).filter(|p| !p.is_empty()) else {
            return if closed { "an empty object {}.".into() } else { "a JSON object.".into() };
        };
        let mut lines = String::new();
        for (name, sub) in props {
            let here = if at.is_empty() { name.clone() } else { format!("{at}.{name}") };
            let status = if required.contains(&name.as_str()) { "required" } else { "optional" };
            let before = std::mem::take(&mut self.out);
            let p = self.phrase(sub, &here, depth + 1);
            let nested = std::mem::replace(&mut self.out, before);
            let description =
                sub.get("description").and_then(Value::as_str).map(|d| format!(" {d}")).unwrap_or_default();
            let _ = writeln!(
                lines,
                "{}- {} ({status}): {p}{description}",
                indent(depth + 1),
                json(&Value::String(name.clone()))
            );
            lines.push_str(&nested);
        }
        let _ = write!(self.out, "{lines}");
        if closed {
            "an object with exactly these properties, and no others:".into()
        } else {
            "an object with these properties:".into()
        }
    }

    fn array(&mut self, map: &Map<String, Value>, at: &str, depth: usize) -> String {
        let min = map.get("minItems").and_then(Value::as_u64);
        let max = map.get("maxItems").and_then(Value::as_u64);
        let count = match (min, max) {
            (Some(a), Some(b)) if a == b => format!(" of exactly {a} items"),
            (Some(a), Some(b)) => format!(" of {a} to {b} items"),
            (Some(a), None) if a > 0 => format!(" of at least {a} item{}", if a == 1 { "" } else { "s" }),
            (_, Some(b)) => format!(" of at most {b} items"),
            _ => String::new(),
        };
        let unique = if map.get("uniqueItems") == Some(&Value::Bool(true)) { ", all different" } else { "" };
        let Some(items) = map.get("items") else {
            return format!("an array{count}{unique}.");
        };
        let here = format!("{at}[]");
        let before = std::mem::take(&mut self.out);
        let p = self.phrase(items, &here, depth);
        let nested = std::mem::replace(&mut self.out, before);
        self.out.push_str(&nested);
        format!("an array{count}{unique}; each item is {p}")
    }

    fn note_unsure(&mut self, values: &[Value], at: &str) {
        for v in values {
            if let Some(s) = v.as_str() {
                if UNSURE.contains(&s.to_lowercase().as_str()) {
                    let place = if at.is_empty() { "the answer".to_owned() } else { format!("\"{at}\"") };
                    self.unsure.push((place, s.to_owned()));
                }
            }
        }
    }
}

fn string(map: &Map<String, Value>) -> String {
    let mut parts = Vec::new();
    match (map.get("minLength").and_then(Value::as_u64), map.get("maxLength").and_then(Value::as_u64)) {
        (Some(1), None) => parts.push("a non-empty string".to_owned()),
        (Some(a), Some(b)) => parts.push(format!("a string of {a} to {b} characters")),
        (Some(a), None) => parts.push(format!("a string of at least {a} characters")),
        (None, Some(b)) => parts.push(format!("a string of at most {b} characters")),
        (None, None) => parts.push("a string".to_owned()),
    }
    if let Some(f) = map.get("format").and_then(Value::as_str) {
        let name = crate::Format::from_name(f).map_or_else(|| f.to_owned(), |f| f.describe().to_owned());
        parts.push(format!("that is {name}"));
    }
    if let Some(p) = map.get("pattern").and_then(Value::as_str) {
        parts.push(format!("matching the regular expression {p}"));
    }
    format!("{}.", parts.join(" "))
}

fn number(map: &Map<String, Value>, what: &str) -> String {
    let bound = |k: &str| map.get(k).map(|v| v.to_string());
    let mut out = what.to_owned();
    match (bound("minimum"), bound("maximum")) {
        (Some(a), Some(b)) => out.push_str(&format!(" from {a} to {b}")),
        (Some(a), None) => out.push_str(&format!(" of at least {a}")),
        (None, Some(b)) => out.push_str(&format!(" of at most {b}")),
        (None, None) => {}
    }
    if let Some(a) = bound("exclusiveMinimum") {
        out.push_str(&format!(", greater than {a}"));
    }
    if let Some(b) = bound("exclusiveMaximum") {
        out.push_str(&format!(", less than {b}"));
    }
    if let Some(m) = bound("multipleOf") {
        out.push_str(&format!(", a multiple of {m}"));
    }
    out.push_str(" (a JSON number, not a string).");
    out
}

/// The values of branches that are all `{"const": x}`.
fn constants(branches: &[Value]) -> Option<Vec<Value>> {
    branches.iter().map(|b| b.get("const").cloned()).collect()
}
