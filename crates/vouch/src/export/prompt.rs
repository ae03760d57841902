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
    // zod-to-json-schema names the root: `{"$ref": "#/definitions/Name"}`.
    let root = w.through_refs(document).clone();
    let what = match root.get("type").and_then(Value::as_str) {
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
                return self.union(key, branches, at, depth);
            }
        }
        // Pydantic writes a described reference as a one-branch allOf.
        if let Some([only]) = map.get("allOf").and_then(Value::as_array).map(Vec::as_slice) {
            return self.phrase(only, at, depth);
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

    /// A definition is named where the text first describes it, so that a
    /// recursive use can say "a Node" and be understood.
    fn reference(&mut self, r: &str, at: &str, depth: usize) -> String {
        let name = definition_name(r);
        if self.refs.iter().any(|x| x == r) {
            return match &name {
                Some(n) => format!("{} {n} (as described above).", article(n)),
                None => "a value of the same shape as the whole reply (as described above).".to_owned(),
            };
        }
        let Some(target) = self.target(r).cloned() else { return "a value (see the schema).".to_owned() };
        self.refs.push(r.to_owned());
        let p = self.phrase(&target, at, depth);
        self.refs.pop();
        match name {
            Some(n) => format!("{} {n}: {p}", article(&n)),
            None => p,
        }
    }

    fn target(&self, r: &str) -> Option<&Value> {
        let id = self.document.get("$id").and_then(Value::as_str).unwrap_or("#");
        let fragment = r.strip_prefix('#').or_else(|| r.strip_prefix(id).and_then(|f| f.strip_prefix('#')))?;
        self.document.pointer(&crate::pointer::percent_decode(fragment)?)
    }

    /// A schema through a chain of pure references (for looking, not saying).
    fn through_refs<'v>(&'v self, mut v: &'v Value) -> &'v Value {
        for _ in 0..64 {
            match v.get("$ref").and_then(Value::as_str).and_then(|r| self.target(r)) {
                Some(t) => v = t,
                None => break,
            }
        }
        v
    }

    /// `anyOf`/`oneOf`: values in one line; shapes (objects) branch by
    /// branch, each with its own properties, and by its tag where the
    /// branches have one.
    fn union(&mut self, key: &str, branches: &[Value], at: &str, depth: usize) -> String {
        if let Some(values) = constants(branches) {
            self.note_unsure(&values, at);
            let list: Vec<String> = values.iter().map(json).collect();
            return format!("one of {}.", list.join(", "));
        }
        // Optional[X]: X, or null.
        let not_null: Vec<&Value> = branches.iter().filter(|b| !is_null_only(b)).collect();
        if let ([one], true) = (not_null.as_slice(), not_null.len() < branches.len()) {
            let p = self.phrase(one, at, depth);
            return format!("{} Or null.", p.trim_end_matches(':').trim_end());
        }
        let resolved: Vec<Value> = branches.iter().map(|b| self.through_refs(b).clone()).collect();
        if !resolved.iter().any(is_objectish) {
            let parts: Vec<String> = branches
                .iter()
                .enumerate()
                .map(|(i, b)| format!("({}) {}", i + 1, self.phrase(b, at, depth).trim_end_matches('.')))
                .collect();
            return format!("{} of: {}.", if key == "oneOf" { "exactly one" } else { "any" }, parts.join("; "));
        }
        let tag = tag_property(&resolved.iter().collect::<Vec<_>>());
        let mut lines = String::new();
        for (i, (b, r)) in branches.iter().zip(&resolved).enumerate() {
            let label = match &tag {
                Some(t) => {
                    let v = r.get("properties").and_then(|p| p.get(t)).and_then(single_value).unwrap_or(&Value::Null);
                    format!("when {} is {}", json(&Value::String(t.clone())), json(v))
                }
                None => format!("shape {}", i + 1),
            };
            let before = std::mem::take(&mut self.out);
            let p = self.phrase(b, at, depth + 1);
            let nested = std::mem::replace(&mut self.out, before);
            let _ = writeln!(lines, "{}- {label}: {p}", indent(depth + 1));
            lines.push_str(&nested);
        }
        self.out.push_str(&lines);
        let n = branches.len();
        match tag {
            Some(t) => format!("one of these {n} shapes, told apart by {}:", json(&Value::String(t))),
            None if key == "oneOf" => format!("exactly one of these {n} shapes:"),
            None => format!("one of these {n} shapes:"),
        }
    }

    fn object(&mut self, map: &Map<String, Value>, at: &str, depth: usize) -> String {
        let required: Vec<&str> = map
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let closed = map.get("additionalProperties") == Some(&Value::Bool(false));
        let extra = map.get("additionalProperties").filter(|a| a.is_object() && !is_any(a));
        let patterns: Vec<(&String, &Value)> =
            map.get("patternProperties").and_then(Value::as_object).into_iter().flatten().collect();
        let Some(props) = map.get("properties").and_then(Value::as_object).filter(|p| !p.is_empty()) else {
            return self.map_phrase(map, extra, &patterns, closed, at, depth);
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
        // Other members a map-like object takes, after the declared ones.
        for (pattern, sub) in &patterns {
            let label = format!("any key matching the regular expression {pattern}");
            self.extra_line(&mut lines, &label, sub, &format!("{at}.*"), depth);
        }
        if let Some(sub) = extra {
            self.extra_line(&mut lines, "any other key", sub, &format!("{at}.*"), depth);
        }
        let _ = write!(self.out, "{lines}");
        if closed && !patterns.is_empty() {
            "an object with only the properties listed here:".into()
        } else if closed {
            "an object with exactly these properties, and no others:".into()
        } else {
            "an object with these properties:".into()
        }
    }

    /// An object without declared properties: a map, by its keys and values.
    fn map_phrase(
        &mut self,
        map: &Map<String, Value>,
        extra: Option<&Value>,
        patterns: &[(&String, &Value)],
        closed: bool,
        at: &str,
        depth: usize,
    ) -> String {
        let keys = match map.get("propertyNames") {
            Some(names) if names.get("pattern").is_some() => format!(
                "strings matching the regular expression {}",
                names.get("pattern").and_then(Value::as_str).unwrap_or_default()
            ),
            Some(names) if names.get("enum").is_some() => {
                let list: Vec<String> =
                    names.get("enum").and_then(Value::as_array).into_iter().flatten().map(json).collect();
                format!("among {}", list.join(", "))
            }
            _ => "any strings".to_owned(),
        };
        let here = format!("{at}.*");
        match (extra, patterns) {
            (None, []) if closed => "an empty object {}.".into(),
            (None, []) => "a JSON object.".into(),
            (Some(sub), []) => {
                let before = std::mem::take(&mut self.out);
                let p = self.phrase(sub, &here, depth);
                let nested = std::mem::replace(&mut self.out, before);
                self.out.push_str(&nested);
                format!("an object whose keys are {keys}, and whose values are each {p}")
            }
            (None, [(pattern, sub)]) if closed => {
                let before = std::mem::take(&mut self.out);
                let p = self.phrase(sub, &here, depth);
                let nested = std::mem::replace(&mut self.out, before);
                self.out.push_str(&nested);
                format!("an object whose keys match the regular expression {pattern}, and whose values are each {p}")
            }
            _ => {
                let mut lines = String::new();
                for (pattern, sub) in patterns {
                    let label = format!("any key matching the regular expression {pattern}");
                    self.extra_line(&mut lines, &label, sub, &here, depth);
                }
                if let Some(sub) = extra {
                    self.extra_line(&mut lines, "any other key", sub, &here, depth);
                }
                self.out.push_str(&lines);
                if closed {
                    format!("an object whose keys are {keys}, each with a value as follows, and no others:")
                } else {
                    format!("an object whose keys are {keys}, with values as follows:")
                }
            }
        }
    }

    /// One line for the members a pattern or `additionalProperties` covers.
    fn extra_line(&mut self, lines: &mut String, label: &str, sub: &Value, at: &str, depth: usize) {
        let before = std::mem::take(&mut self.out);
        let p = self.phrase(sub, at, depth + 1);
        let nested = std::mem::replace(&mut self.out, before);
        let _ = writeln!(lines, "{}- {label}: {p}", indent(depth + 1));
        lines.push_str(&nested);
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
        // A tuple: `prefixItems`, or `items` as an array before 2020-12.
        let tuple = map.get("prefixItems").or_else(|| map.get("items").filter(|i| i.is_array()));
        if let Some(Value::Array(first)) = tuple {
            let here = format!("{at}[]");
            let parts: Vec<String> = first
                .iter()
                .enumerate()
                .map(|(i, s)| format!("({}) {}", i + 1, self.phrase(s, &here, depth).trim_end_matches('.')))
                .collect();
            return format!("an array{count}{unique} whose first items are, in order: {}.", parts.join("; "));
        }
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
    // Draft-04: a `true` exclusiveMinimum makes `minimum` exclusive.
    let exclusive = |k: &str| map.get(k) == Some(&Value::Bool(true));
    let bound = |k: &str| match map.get(k) {
        Some(Value::Bool(_)) | None => None,
        Some(_)
            if (k == "minimum" && exclusive("exclusiveMinimum"))
                || (k == "maximum" && exclusive("exclusiveMaximum")) =>
        {
            None
        }
        Some(v) => Some(v.to_string()),
    };
    let bound_or_draft4 = |k: &str, inclusive: &str| {
        bound(k).or_else(|| exclusive(k).then(|| map.get(inclusive).map(ToString::to_string)).flatten())
    };
    let mut out = what.to_owned();
    match (bound("minimum"), bound("maximum")) {
        (Some(a), Some(b)) => out.push_str(&format!(" from {a} to {b}")),
        (Some(a), None) => out.push_str(&format!(" of at least {a}")),
        (None, Some(b)) => out.push_str(&format!(" of at most {b}")),
        (None, None) => {}
    }
    if let Some(a) = bound_or_draft4("exclusiveMinimum", "minimum") {
        out.push_str(&format!(", greater than {a}"));
    }
    if let Some(b) = bound_or_draft4("exclusiveMaximum", "maximum") {
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

/// The name a reference to a definition gives its shape (`Node` for
/// `#/$defs/Node`); none for other pointers.
fn definition_name(r: &str) -> Option<String> {
    let (_, fragment) = r.split_once('#')?;
    let segments: Vec<&str> = fragment.split('/').collect();
    match segments.as_slice() {
        ["", "$defs" | "definitions", name] if !name.is_empty() => {
            crate::pointer::percent_decode(name).map(|n| n.replace("~1", "/").replace("~0", "~"))
        }
        _ => None,
    }
}

fn article(name: &str) -> &'static str {
    if name.chars().next().is_some_and(|c| "AEIOUaeiou".contains(c)) {
        "an"
    } else {
        "a"
    }
}

fn is_null_only(v: &Value) -> bool {
    v.get("type") == Some(&Value::String("null".into()))
}

fn is_any(v: &Value) -> bool {
    v == &Value::Bool(true) || v.as_object().is_some_and(Map::is_empty)
}

fn is_objectish(v: &Value) -> bool {
    v.get("type") == Some(&Value::String("object".into())) || v.get("properties").is_some()
}

/// The one value a property schema allows (`const`, or a one-value `enum`).
fn single_value(v: &Value) -> Option<&Value> {
    v.get("const").or_else(|| match v.get("enum")?.as_array()?.as_slice() {
        [one] => Some(one),
        _ => None,
    })
}

/// A property every branch requires, with its own single value in each.
fn tag_property(branches: &[&Value]) -> Option<String> {
    let first = branches.first()?;
    let required = first.get("required")?.as_array()?;
    required.iter().filter_map(Value::as_str).find_map(|t| {
        let values: Option<Vec<&Value>> = branches
            .iter()
            .map(|b| {
                let listed = b.get("required")?.as_array()?.iter().any(|r| r == t);
                listed.then(|| b.get("properties")?.get(t).and_then(single_value)).flatten()
            })
            .collect();
        let values = values?;
        let distinct = values.iter().enumerate().all(|(i, a)| values.iter().skip(i + 1).all(|b| a != b));
        distinct.then(|| t.to_owned())
    })
}
