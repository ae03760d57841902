//! One contract, used three ways: the validator, the schema sent to the
//! provider, and the prompt text. This module makes the provider schemas.
//!
//! Soundness rule: a reply that satisfies the emitted schema must be accepted
//! by the contract (repairs allowed). So every keyword of the contract is
//! emitted as is, translated exactly, made stricter, or dropped only where
//! the contract's own repairs absorb any failure of it (`clamp` absorbs the
//! bounds, `truncate` absorbs `maxLength`, `default_if_invalid` absorbs
//! everything at its node). Anything else the provider cannot express is an
//! [`ExportError`] naming the keyword and its location: vouch never emits a
//! schema the provider would silently weaken.

mod prompt;

use serde_json::{json, Map, Value};

use crate::pointer;
use crate::Contract;

/// Where a schema is going.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Provider {
    /// OpenAI structured outputs (`response_format` with `strict: true`).
    OpenAi,
    /// Anthropic strict tool use (`input_schema` of a tool with `strict: true`).
    Anthropic,
    /// Gemini `responseSchema` (its OpenAPI 3.0 subset).
    Gemini,
    /// Plain JSON Schema 2020-12 with the `x-vouch` policy removed.
    JsonSchema,
}

impl Provider {
    /// The provider for a command-line name (`openai`, `anthropic`, `gemini`, `json-schema`).
    #[must_use]
    pub fn from_name(name: &str) -> Option<Provider> {
        Some(match name {
            "openai" => Self::OpenAi,
            "anthropic" => Self::Anthropic,
            "gemini" => Self::Gemini,
            "json-schema" => Self::JsonSchema,
            _ => return None,
        })
    }

    fn label(self) -> &'static str {
        match self {
            Self::OpenAi => "OpenAI strict structured outputs",
            Self::Anthropic => "Anthropic strict tool use",
            Self::Gemini => "Gemini responseSchema",
            Self::JsonSchema => "JSON Schema",
        }
    }
}

/// Why a contract cannot be sent to a provider without weakening it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {}{message}", if location.is_empty() { "(root)" } else { location.as_str() }, if keyword.is_empty() { String::new() } else { format!("{keyword}: ") })]
pub struct ExportError {
    /// The keyword the provider cannot express.
    pub keyword: String,
    /// JSON Pointer of the schema node in the contract.
    pub location: String,
    /// Why, and what to do.
    pub message: String,
}

/// OpenAI's documented limits for strict schemas.
const OPENAI_MAX_PROPERTIES: usize = 5000;
const OPENAI_MAX_OBJECT_DEPTH: usize = 10;
const OPENAI_MAX_ENUM_VALUES: usize = 1000;
const OPENAI_MAX_STRING_TOTAL: usize = 120_000;
const OPENAI_LARGE_ENUM: usize = 250;
const OPENAI_LARGE_ENUM_CHARS: usize = 15_000;

/// Formats each provider documents as supported.
const OPENAI_FORMATS: &[&str] = &["date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"];
const ANTHROPIC_FORMATS: &[&str] =
    &["date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"];
const GEMINI_FORMATS: &[&str] = &["date-time"];

/// Annotations passed on (they guide the model); other annotations are dropped.
const KEPT_ANNOTATIONS: &[&str] = &["title", "description"];

/// What the contract's repairs at one node make harmless to drop.
#[derive(Debug, Clone, Copy, Default)]
struct Absorbs {
    /// `default_if_invalid`: any failure at this node becomes the default.
    all: bool,
    /// `clamp`: values out of bounds become the bound.
    bounds: bool,
    /// `truncate`: strings over `maxLength` are cut.
    max_length: bool,
    /// `trim`: lengths and patterns are checked after trimming.
    trim: bool,
}

impl Absorbs {
    fn of(schema: &Map<String, Value>) -> Absorbs {
        let rules: Vec<&str> = schema
            .get("x-vouch")
            .and_then(|p| p.get("repair"))
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let has = |r: &str| rules.contains(&r);
        Absorbs { all: has("default_if_invalid"), bounds: has("clamp"), max_length: has("truncate"), trim: has("trim") }
    }
}

struct Exporter<'a> {
    provider: Provider,
    document: &'a Value,
    /// `$ref` targets being inlined (Gemini), to refuse recursion.
    inlining: Vec<String>,
    /// Object nesting, for OpenAI's limit.
    object_depth: usize,
    max_object_depth: usize,
    properties: usize,
    enum_values: usize,
    string_total: usize,
    large_enum_too_long: bool,
}

type Result<T> = std::result::Result<T, ExportError>;

impl Contract {
    /// The schema to send to `provider`, wrapped as that provider expects:
    /// OpenAI `response_format`, an Anthropic tool, Gemini `generationConfig`
    /// fields, or the plain schema for [`Provider::JsonSchema`].
    ///
    /// ```
    /// let contract = vouch::Contract::from_json_str(r#"{"type": "object",
    ///     "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}"#)?;
    /// let sent = contract.provider_schema(vouch::Provider::OpenAi, "verdict").unwrap();
    /// assert_eq!(sent["json_schema"]["schema"]["additionalProperties"], false);
    /// # Ok::<(), vouch::CompileError>(())
    /// ```
    ///
    /// # Errors
    /// An [`ExportError`] when the provider cannot express the contract
    /// without weakening it.
    pub fn provider_schema(&self, provider: Provider, name: &str) -> std::result::Result<Value, ExportError> {
        let schema = self.bare_provider_schema(provider)?;
        let description = self.document().get("description").and_then(Value::as_str).unwrap_or_default();
        Ok(match provider {
            Provider::OpenAi => json!({
                "type": "json_schema",
                "json_schema": {"name": name, "strict": true, "schema": schema},
            }),
            Provider::Anthropic => json!({
                "name": name,
                "description": if description.is_empty() { "Record the answer." } else { description },
                "strict": true,
                "input_schema": schema,
            }),
            Provider::Gemini => json!({"responseMimeType": "application/json", "responseSchema": schema}),
            Provider::JsonSchema => schema,
        })
    }

    /// The provider's schema alone, without the request wrapper.
    ///
    /// # Errors
    /// As [`Contract::provider_schema`].
    pub fn bare_provider_schema(&self, provider: Provider) -> std::result::Result<Value, ExportError> {
        let mut e = Exporter {
            provider,
            document: self.document(),
            inlining: Vec::new(),
            object_depth: 0,
            max_object_depth: 0,
            properties: 0,
            enum_values: 0,
            string_total: 0,
            large_enum_too_long: false,
        };
        let out = e.root()?;
        e.check_limits()?;
        Ok(out)
    }

    /// Plain-language instructions for the model, generated from the same
    /// contract: the exact shape, allowed values and ranges, and "reply with
    /// the JSON object only".
    #[must_use]
    pub fn prompt(&self) -> String {
        prompt::render(self.document())
    }
}

fn error(keyword: &str, location: &str, message: impl Into<String>) -> ExportError {
    ExportError { keyword: keyword.to_owned(), location: location.to_owned(), message: message.into() }
}

/// A regex, in the subset every provider runs, for a length range in
/// characters; `None` when it cannot be said exactly. With `trim` the
/// contract measures the trimmed string: an untrimmed length ≤ m implies a
/// trimmed one ≤ m, and of a minimum only "not blank" (1) can be said. The
/// blank set is ECMA-262 `\s` plus U+0085, which covers every character
/// Rust's `trim` removes.
fn length_pattern(min: u64, max: Option<u64>, trim: bool) -> Option<String> {
    match (trim, min, max) {
        (false, _, Some(m)) => Some(format!("^[\\s\\S]{{{min},{m}}}$")),
        (false, _, None) => Some(format!("^[\\s\\S]{{{min},}}$")),
        (true, 0, Some(m)) => Some(format!("^[\\s\\S]{{0,{m}}}$")),
        (true, 1, None) => Some("[^\\s\\u0085]".to_owned()),
        // First and last non-blank characters, at least `min` apart.
        (true, _, None) => {
            Some(format!("^[\\s\\u0085]*[^\\s\\u0085][\\s\\S]{{{},}}[^\\s\\u0085][\\s\\u0085]*$", min - 2))
        }
        _ => None,
    }
}

impl Exporter<'_> {
    fn root(&mut self) -> Result<Value> {
        let doc = self.document;
        if self.provider == Provider::JsonSchema {
            let mut out = doc.clone();
            trimmed_lengths(&mut out)?;
            strip_policy(&mut out);
            return Ok(out);
        }
        let is_object = doc.get("type").and_then(Value::as_str) == Some("object");
        if !is_object {
            return Err(error(
                "type",
                "",
                format!("{} needs the root to be {{\"type\": \"object\"}}", self.provider.label()),
            ));
        }
        let mut out = self.node(doc, "")?;
        // Definitions travel with the schema where references are kept.
        if matches!(self.provider, Provider::OpenAi | Provider::Anthropic) {
            for key in ["$defs", "definitions"] {
                if let Some(defs) = doc.get(key).and_then(Value::as_object) {
                    let mut emitted = Map::new();
                    for (name, def) in defs {
                        emitted.insert(name.clone(), self.node(def, &pointer::join(&pointer::join("", key), name))?);
                    }
                    if let Value::Object(o) = &mut out {
                        o.insert(key.to_owned(), Value::Object(emitted));
                    }
                }
            }
            if self.provider == Provider::Anthropic {
                self.refuse_recursion()?;
            }
        }
        Ok(out)
    }

    /// One schema node.
    fn node(&mut self, schema: &Value, location: &str) -> Result<Value> {
        crate::deeper(|| self.node_here(schema, location))
    }

    fn node_here(&mut self, schema: &Value, location: &str) -> Result<Value> {
        let map = match schema {
            Value::Object(m) => m,
            Value::Bool(true) => {
                return Err(error(
                    "",
                    location,
                    format!("{} needs a type here; `true` allows anything", self.provider.label()),
                ))
            }
            Value::Bool(false) => {
                return Err(error("", location, "`false` allows nothing; no provider can express it"))
            }
            _ => return Err(error("", location, "not a schema")),
        };
        let absorbs = Absorbs::of(map);
        let mut out = Map::new();
        let is_object = map.get("type").and_then(Value::as_str) == Some("object") || map.contains_key("properties");
        if is_object {
            self.object_depth += 1;
            self.max_object_depth = self.max_object_depth.max(self.object_depth);
        }
        let result = self.keywords(map, location, absorbs, &mut out);
        if is_object {
            self.object_depth -= 1;
        }
        result?;
        if self.provider == Provider::Gemini && out.contains_key("enum") {
            out.entry("type").or_insert_with(|| json!("STRING"));
            out.entry("format").or_insert_with(|| json!("enum"));
        }
        if is_object && matches!(self.provider, Provider::OpenAi | Provider::Anthropic) {
            // Closed objects: stricter than an open contract, so always sound.
            out.insert("additionalProperties".into(), Value::Bool(false));
            if !out.contains_key("properties") {
                out.insert("properties".into(), json!({}));
            }
            if self.provider == Provider::OpenAi {
                let all: Vec<Value> = out
                    .get("properties")
                    .and_then(Value::as_object)
                    .map(|p| p.keys().cloned().map(Value::String).collect())
                    .unwrap_or_default();
                out.insert("required".into(), Value::Array(all));
            }
        }
        Ok(Value::Object(out))
    }

    fn keywords(
        &mut self,
        map: &Map<String, Value>,
        location: &str,
        absorbs: Absorbs,
        out: &mut Map<String, Value>,
    ) -> Result<()> {
        let p = self.provider;
        let required: Vec<&str> = map
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        for (keyword, v) in map {
            let k = keyword.as_str();
            // Drop a keyword only when this node's repairs absorb its failures.
            let cannot = |why: &str| -> Result<()> {
                if absorbs.all {
                    Ok(())
                } else {
                    Err(error(k, location, format!("{} {why}", p.label())))
                }
            };
            match k {
                // Below the root an `$id` moves the base its references read
                // against, which the exported schema (without it) would not.
                "$id" if !location.is_empty() => {
                    return Err(error(k, location, "an exported schema cannot carry a base URI below its root"));
                }
                "x-vouch" | "$schema" | "$id" | "$comment" | "default" | "examples" | "readOnly" | "writeOnly"
                | "deprecated" | "$defs" | "definitions" => {}
                _ if KEPT_ANNOTATIONS.contains(&k) => {
                    if let Value::String(s) = v {
                        out.insert(k.to_owned(), Value::String(s.clone()));
                    }
                }
                "type" => self.emit_type(v, location, out)?,
                "enum" => {
                    let values = v.as_array().cloned().unwrap_or_default();
                    self.count_enum(&values);
                    if p == Provider::Gemini && !values.iter().all(Value::is_string) {
                        cannot("accepts only string enums")?;
                        continue;
                    }
                    out.insert("enum".into(), Value::Array(values));
                }
                "const" => {
                    self.count_enum(std::slice::from_ref(v));
                    if p == Provider::Gemini {
                        if v.is_string() {
                            out.insert("enum".into(), json!([v]));
                        } else {
                            cannot("has no `const`, and only string enums")?;
                        }
                    } else {
                        out.insert("const".into(), v.clone());
                    }
                }
                "properties" => {
                    let mut props = Map::new();
                    for (name, sub) in v.as_object().into_iter().flatten() {
                        self.properties += 1;
                        self.string_total += name.chars().count();
                        let at = pointer::join(&pointer::join(location, "properties"), name);
                        let mut emitted = self.node(sub, &at)?;
                        if p == Provider::OpenAi && !required.contains(&name.as_str()) {
                            emitted = self.nullable_optional(sub, emitted, &at)?;
                        }
                        props.insert(name.clone(), emitted);
                    }
                    out.insert("properties".into(), Value::Object(props));
                    if p == Provider::Gemini {
                        let order: Vec<Value> = v.as_object().into_iter().flatten().map(|(n, _)| json!(n)).collect();
                        out.insert("propertyOrdering".into(), Value::Array(order));
                    }
                }
                "required" => {
                    if p != Provider::OpenAi {
                        out.insert("required".into(), v.clone());
                    }
                }
                "additionalProperties" | "patternProperties" => {
                    // Closed objects (OpenAI, Anthropic) or declared-only generation
                    // (Gemini) are stricter than both: sound to drop.
                }
                "items" => {
                    let at = pointer::join(location, "items");
                    out.insert("items".into(), self.node(v, &at)?);
                }
                "minItems" | "maxItems" => {
                    let n = v.as_u64().unwrap_or(0);
                    if p == Provider::Anthropic && (k == "maxItems" || n > 1) {
                        cannot("supports only minItems 0 or 1")?;
                    } else {
                        out.insert(k.to_owned(), v.clone());
                    }
                }
                "minimum" | "maximum" => {
                    if p == Provider::Anthropic {
                        if !absorbs.bounds {
                            cannot("has no numeric bounds")?;
                        }
                    } else {
                        out.insert(k.to_owned(), v.clone());
                    }
                }
                "exclusiveMinimum" | "exclusiveMaximum" => match p {
                    Provider::OpenAi => {
                        out.insert(k.to_owned(), v.clone());
                    }
                    _ if absorbs.bounds => {}
                    Provider::Gemini if is_integer_node(map) => {
                        // For integers, > n is ≥ floor(n)+1: exact.
                        let f = v.as_f64().unwrap_or(0.0);
                        let (key, bound) = if k == "exclusiveMinimum" {
                            ("minimum", f.floor() + 1.0)
                        } else {
                            ("maximum", f.ceil() - 1.0)
                        };
                        out.insert(key.into(), json!(bound as i64));
                    }
                    _ => cannot("has no exclusive bounds here")?,
                },
                "multipleOf" => {
                    if p == Provider::OpenAi {
                        out.insert(k.to_owned(), v.clone());
                    } else {
                        cannot("has no multipleOf")?;
                    }
                }
                "minLength" | "maxLength" => self.lengths(map, k, location, absorbs, out)?,
                "pattern" => {
                    if absorbs.trim {
                        cannot("cannot say a pattern holds after trimming")?;
                    } else {
                        out.insert("pattern".into(), v.clone());
                    }
                }
                "format" => {
                    let f = v.as_str().unwrap_or_default();
                    let supported = match p {
                        Provider::OpenAi => OPENAI_FORMATS,
                        Provider::Anthropic => ANTHROPIC_FORMATS,
                        _ => GEMINI_FORMATS,
                    };
                    if supported.contains(&f) {
                        out.insert("format".into(), v.clone());
                    } else {
                        cannot(&format!("does not support the format {f:?}"))?;
                    }
                }
                "anyOf" => {
                    if location.is_empty() && p == Provider::OpenAi {
                        return Err(error(k, location, "OpenAI does not allow anyOf at the root"));
                    }
                    out.insert("anyOf".into(), self.branches(v, location, k)?);
                }
                "oneOf" => {
                    // Exact as an enum when every branch is a constant, as schemars writes enums.
                    if let Some(values) = constants(v) {
                        self.count_enum(&values);
                        out.insert("enum".into(), Value::Array(values));
                    } else if disjoint_types(v) {
                        out.insert("anyOf".into(), self.branches(v, location, k)?);
                    } else {
                        cannot("has no oneOf, and these alternatives may overlap (anyOf would accept more)")?;
                    }
                }
                "$ref" => self.reference(v, location, out)?,
                "minProperties" | "maxProperties" if p == Provider::Gemini => {
                    out.insert(k.to_owned(), v.clone());
                }
                _ => cannot("cannot express this keyword")?,
            }
        }
        Ok(())
    }

    fn branches(&mut self, v: &Value, location: &str, keyword: &str) -> Result<Value> {
        let base = pointer::join(location, keyword);
        let mut out = Vec::new();
        for (i, b) in v.as_array().into_iter().flatten().enumerate() {
            out.push(self.node(b, &pointer::join(&base, &i.to_string()))?);
        }
        Ok(Value::Array(out))
    }

    fn emit_type(&mut self, v: &Value, location: &str, out: &mut Map<String, Value>) -> Result<()> {
        if self.provider != Provider::Gemini {
            out.insert("type".into(), v.clone());
            return Ok(());
        }
        // Gemini: one upper-case type, null as `nullable`.
        let names: Vec<&str> = match v {
            Value::String(s) => vec![s.as_str()],
            Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        let nullable = names.contains(&"null");
        let rest: Vec<&str> = names.into_iter().filter(|n| *n != "null").collect();
        match rest.as_slice() {
            [one] => {
                out.insert("type".into(), json!(one.to_uppercase()));
            }
            [] => return Err(error("type", location, "Gemini cannot express a value that is always null")),
            _ => {
                let any: Vec<Value> = rest.iter().map(|t| json!({"type": t.to_uppercase()})).collect();
                out.insert("anyOf".into(), Value::Array(any));
            }
        }
        if nullable {
            out.insert("nullable".into(), Value::Bool(true));
        }
        Ok(())
    }

    fn lengths(
        &mut self,
        map: &Map<String, Value>,
        k: &str,
        location: &str,
        absorbs: Absorbs,
        out: &mut Map<String, Value>,
    ) -> Result<()> {
        let min = map.get("minLength").and_then(Value::as_u64);
        let max = map.get("maxLength").and_then(Value::as_u64);
        let p = self.provider;
        let cannot = |why: &str| -> Result<()> {
            if absorbs.all {
                Ok(())
            } else {
                Err(error(k, location, format!("{} {why}", p.label())))
            }
        };
        if p == Provider::Gemini && !absorbs.trim {
            // Gemini counts lengths natively.
            out.insert(k.to_owned(), map.get(k).cloned().unwrap_or(Value::Null));
            return Ok(());
        }
        let max_kept = if absorbs.max_length { None } else { max };
        if min.unwrap_or(0) == 0 && max_kept.is_none() {
            return Ok(());
        }
        if map.contains_key("pattern") {
            return cannot("cannot hold a length and a pattern in one regex");
        }
        // Both lengths become one pattern, emitted once.
        if out.contains_key("pattern") {
            return Ok(());
        }
        match length_pattern(min.unwrap_or(0), max_kept, absorbs.trim) {
            Some(pattern) => {
                out.insert("pattern".into(), Value::String(pattern));
                Ok(())
            }
            None => cannot("cannot express this length exactly after trimming"),
        }
    }

    /// OpenAI requires every property; an optional one becomes nullable, which
    /// is sound only if the contract accepts null there.
    fn nullable_optional(&mut self, contract_node: &Value, emitted: Value, at: &str) -> Result<Value> {
        let node = contract_node.as_object();
        let admits_null = node.and_then(|m| m.get("type")).is_some_and(|t| match t {
            Value::String(s) => s == "null",
            Value::Array(a) => a.iter().any(|x| x == "null"),
            _ => false,
        });
        let policy = node.and_then(|m| m.get("x-vouch"));
        let defaulted = policy.is_some_and(|p| p.get("default").is_some());
        if admits_null {
            return Ok(emitted);
        }
        if !defaulted {
            return Err(error(
                "required",
                at,
                "OpenAI strict requires every property, so an optional one must accept null; \
                 make it required, allow null, or declare an x-vouch default",
            ));
        }
        Ok(match emitted {
            Value::Object(mut m)
                if m.get("type").is_some_and(Value::is_string)
                    && !m.contains_key("enum")
                    && !m.contains_key("const") =>
            {
                let t = m.remove("type").unwrap_or(Value::Null);
                m.insert("type".into(), json!([t, "null"]));
                Value::Object(m)
            }
            other => json!({"anyOf": [other, {"type": "null"}]}),
        })
    }

    fn reference(&mut self, v: &Value, location: &str, out: &mut Map<String, Value>) -> Result<()> {
        let r = v.as_str().unwrap_or_default();
        // Only a JSON Pointer into this document means the same to the
        // provider: anchors, `$id` bases and supplied documents do not travel.
        if !(r == "#" || r.starts_with("#/")) {
            return Err(error(
                "$ref",
                location,
                "an exported schema can only reference its own document by JSON Pointer",
            ));
        }
        if self.provider != Provider::Gemini {
            out.insert("$ref".into(), v.clone());
            return Ok(());
        }
        // Gemini has no references: inline the target, refusing recursion.
        if self.inlining.iter().any(|x| x == r) {
            return Err(error("$ref", location, "Gemini has no references, and this one is recursive"));
        }
        let target = r
            .strip_prefix('#')
            .and_then(crate::pointer::percent_decode)
            .and_then(|p| self.document.pointer(&p).cloned())
            .ok_or_else(|| error("$ref", location, "cannot resolve the reference"))?;
        self.inlining.push(r.to_owned());
        let inlined = self.node(&target, location);
        self.inlining.pop();
        if let Value::Object(m) = inlined? {
            for (k, v) in m {
                out.entry(k).or_insert(v);
            }
        }
        Ok(())
    }

    fn count_enum(&mut self, values: &[Value]) {
        self.enum_values += values.len();
        let chars: usize = values.iter().filter_map(Value::as_str).map(|s| s.chars().count()).sum();
        self.string_total += chars;
        if values.len() > OPENAI_LARGE_ENUM && chars > OPENAI_LARGE_ENUM_CHARS {
            self.large_enum_too_long = true;
        }
    }

    fn check_limits(&self) -> Result<()> {
        if self.provider != Provider::OpenAi {
            return Ok(());
        }
        let over = |what: String| Err(error("", "", format!("OpenAI strict allows {what}")));
        if self.properties > OPENAI_MAX_PROPERTIES {
            return over(format!(
                "at most {OPENAI_MAX_PROPERTIES} object properties; this contract has {}",
                self.properties
            ));
        }
        if self.max_object_depth > OPENAI_MAX_OBJECT_DEPTH {
            return over(format!(
                "at most {OPENAI_MAX_OBJECT_DEPTH} levels of objects; this contract has {}",
                self.max_object_depth
            ));
        }
        if self.enum_values > OPENAI_MAX_ENUM_VALUES {
            return over(format!(
                "at most {OPENAI_MAX_ENUM_VALUES} enum values; this contract has {}",
                self.enum_values
            ));
        }
        if self.string_total > OPENAI_MAX_STRING_TOTAL || self.large_enum_too_long {
            return over(format!(
                "at most {OPENAI_MAX_STRING_TOTAL} characters of names and enum values, and {OPENAI_LARGE_ENUM_CHARS} for an enum over {OPENAI_LARGE_ENUM} values"
            ));
        }
        Ok(())
    }

    /// Anthropic strict mode does not take recursive schemas.
    fn refuse_recursion(&self) -> Result<()> {
        let defs = ["$defs", "definitions"];
        for key in defs {
            for (name, def) in self.document.get(key).and_then(Value::as_object).into_iter().flatten() {
                let me = format!("#/{key}/{name}");
                let mut stack = vec![def];
                let mut seen = std::collections::HashSet::new();
                while let Some(v) = stack.pop() {
                    match v {
                        Value::Object(m) => {
                            if let Some(r) = m.get("$ref").and_then(Value::as_str) {
                                if r == me || r == "#" {
                                    return Err(error(
                                        "$ref",
                                        &format!("/{key}/{name}"),
                                        "Anthropic strict mode does not support recursive schemas",
                                    ));
                                }
                                if seen.insert(r.to_owned()) {
                                    if let Some(t) = r.strip_prefix('#').and_then(|p| self.document.pointer(p)) {
                                        stack.push(t);
                                    }
                                }
                            }
                            stack.extend(m.values());
                        }
                        Value::Array(a) => stack.extend(a),
                        _ => {}
                    }
                }
            }
        }
        Ok(())
    }
}

fn is_integer_node(map: &Map<String, Value>) -> bool {
    map.get("type").and_then(Value::as_str) == Some("integer")
}

/// The values of a `oneOf` whose branches are all `{"const": x}` (with only
/// annotations beside).
fn constants(v: &Value) -> Option<Vec<Value>> {
    v.as_array()?
        .iter()
        .map(|b| {
            let m = b.as_object()?;
            let only_annotations =
                m.keys().all(|k| k == "const" || k == "type" || KEPT_ANNOTATIONS.contains(&k.as_str()));
            if only_annotations {
                m.get("const").cloned()
            } else {
                None
            }
        })
        .collect()
}

/// Branches with one distinct `type` each can match at most one at a time,
/// so `anyOf` is exact for `oneOf`.
fn disjoint_types(v: &Value) -> bool {
    let Some(branches) = v.as_array() else { return false };
    let mut seen: Vec<&str> = Vec::new();
    for b in branches {
        // An integer is a number too: both count as one family.
        let family = match b.get("type").and_then(Value::as_str) {
            Some("integer") => "number",
            Some(t) => t,
            None => return false,
        };
        if seen.contains(&family) {
            return false;
        }
        seen.push(family);
    }
    true
}

/// `trim` is the one repair that can turn a valid value invalid (`"  "`
/// passes `minLength: 1`, then trims to `""`). Without the policy, say what
/// the contract checks: the trimmed length, as a pattern.
fn trimmed_lengths(doc: &mut Value) -> Result<()> {
    let mut stack = vec![(doc, String::new())];
    while let Some((v, at)) = stack.pop() {
        match v {
            Value::Object(m) => {
                if Absorbs::of(m).trim {
                    let min = m.get("minLength").and_then(Value::as_u64).unwrap_or(0);
                    if m.contains_key("pattern") {
                        return Err(error(
                            "pattern",
                            &at,
                            "JSON Schema cannot say that a pattern holds after trimming",
                        ));
                    }
                    if let Some(p) = length_pattern(min, None, true) {
                        m.insert("pattern".into(), Value::String(p));
                    }
                }
                for (k, child) in m.iter_mut() {
                    let here = pointer::join(&at, k);
                    stack.push((child, here));
                }
            }
            Value::Array(a) => {
                for (i, child) in a.iter_mut().enumerate() {
                    let here = pointer::join(&at, &i.to_string());
                    stack.push((child, here));
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// The contract without its `x-vouch` policy.
pub(crate) fn strip_policy(v: &mut Value) {
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(m) => {
                m.shift_remove("x-vouch");
                stack.extend(m.values_mut());
            }
            Value::Array(a) => stack.extend(a.iter_mut()),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::length_pattern;
    use crate::check::pattern::compile_pattern;

    fn matches(min: u64, max: Option<u64>, trim: bool, s: &str) -> bool {
        let p = length_pattern(min, max, trim).unwrap_or_default();
        compile_pattern(&p).is_ok_and(|re| re.is_match(s))
    }

    #[test]
    fn length_patterns_say_what_the_contract_checks() {
        assert!(
            matches(2, Some(3), false, "héé")
                && !matches(2, Some(3), false, "h")
                && !matches(2, Some(3), false, "abcd")
        );
        // With trim, lengths are of the trimmed string.
        assert!(matches(1, None, true, "  a ") && !matches(1, None, true, " \t\u{85}\u{a0} "));
        assert!(matches(2, None, true, " ab ") && !matches(2, None, true, "  a  "));
        assert!(matches(3, None, true, "a b") && !matches(3, None, true, " ab "));
        assert!(matches(0, Some(3), true, "abc") && !matches(0, Some(3), true, "abcd"));
        assert_eq!(length_pattern(2, Some(5), true), None);
    }
}
