//! One contract, used three ways: the validator, the schema sent to the
//! provider, and the prompt text. This module makes the provider schemas.
//!
//! Soundness rule: a reply that satisfies the emitted schema must be accepted
//! by the contract (repairs allowed). So every keyword of the contract is
//! emitted as is, translated exactly, made stricter, or dropped only where it
//! always holds or the contract's own repairs absorb any failure of it
//! (`clamp` absorbs the bounds, `truncate` absorbs `maxLength`,
//! `default_if_invalid` absorbs everything at its node). Stricter must not
//! mean nearly nothing: closing an object that declares no properties but
//! takes members (a map) would leave only `{}`, so it is refused. Anything
//! else the provider cannot express is an [`ExportError`] naming the keyword
//! (as the contract writes it), its location and what to do: vouch never
//! emits a schema the provider would silently weaken.
//!
//! Each node is first read in 2020-12 terms whatever its draft (`normalize`),
//! then its `$ref` target and `allOf` branches are merged in where that is
//! exact (`flatten`), then it is emitted in the provider's dialect (`emit`).

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

/// True when `name` is a name OpenAI (`response_format.json_schema.name`) and
/// Anthropic (a tool's `name`) take: 1 to 64 ASCII letters, digits, `_` or
/// `-`. [`Contract::provider_schema`] refuses any other for those two.
///
/// ```
/// assert!(vouch::is_schema_name("plate_check-v2"));
/// assert!(!vouch::is_schema_name("plate check"));
/// assert!(!vouch::is_schema_name(""));
/// ```
#[must_use]
pub fn is_schema_name(name: &str) -> bool {
    (1..=64).contains(&name.len()) && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
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

/// Annotations passed on (they guide the model).
const KEPT_ANNOTATIONS: &[&str] = &["title", "description"];

/// Keywords that constrain nothing and are never sent. `discriminator` is
/// OpenAPI's annotation for a tagged union: the `const` tags say it exactly.
const DROPPED_ANNOTATIONS: &[&str] = &[
    "$schema",
    "$id",
    "$comment",
    "default",
    "examples",
    "readOnly",
    "writeOnly",
    "deprecated",
    "discriminator",
    "$defs",
    "definitions",
];

/// Most schema nodes one export may emit: inlining references can multiply
/// a small contract (a chain of definitions each used twice doubles per step).
const MAX_EMITTED_NODES: usize = 100_000;

/// Longest chain of `$ref` and `allOf` merged into one node.
const MAX_MERGES: usize = 1000;

/// The draft a contract is written in (its root `$schema`; 2020-12 when none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Draft {
    Draft4,
    /// Drafts 6 and 7: `dependencies`, array `items`, no boolean exclusives.
    Draft7,
    Draft2019,
    Draft2020,
}

impl Draft {
    fn of(document: &Value) -> Draft {
        let uri = document.get("$schema").and_then(Value::as_str).unwrap_or_default().trim_end_matches('#');
        let rest = uri.strip_prefix("https://").or_else(|| uri.strip_prefix("http://")).unwrap_or_default();
        match rest {
            "json-schema.org/draft-04/schema" => Draft::Draft4,
            "json-schema.org/draft-06/schema" | "json-schema.org/draft-07/schema" => Draft::Draft7,
            "json-schema.org/draft/2019-09/schema" => Draft::Draft2019,
            _ => Draft::Draft2020,
        }
    }
}

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
        let rules = repair_rules(schema);
        let has = |r: &str| rules.contains(&r);
        Absorbs { all: has("default_if_invalid"), bounds: has("clamp"), max_length: has("truncate"), trim: has("trim") }
    }
}

fn repair_rules(schema: &Map<String, Value>) -> Vec<&str> {
    schema
        .get("x-vouch")
        .and_then(|p| p.get("repair"))
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// One schema node read in 2020-12 terms: annotations gone, draft keywords
/// renamed, vacuous keywords dropped, `$ref` and `allOf` not yet merged.
struct Normalized {
    map: Map<String, Value>,
    /// (2020-12 name, name in the contract) for keywords a draft spells otherwise.
    renamed: Vec<(&'static str, &'static str)>,
}

impl Normalized {
    /// The keyword as the contract writes it, for messages.
    fn written(&self, k: &str) -> String {
        self.renamed.iter().find(|(new, _)| *new == k).map_or(k, |(_, old)| old).to_owned()
    }
}

struct Exporter<'a> {
    provider: Provider,
    document: &'a Value,
    draft: Draft,
    /// Annotation keywords the root's `x-vouch.annotations` declares.
    annotations: Vec<String>,
    root_id: Option<&'a str>,
    /// References being inlined (document pointers), to find recursion.
    inlining: Vec<String>,
    /// Definitions a kept recursive `$ref` points to (OpenAI): (pointer, name).
    wanted: Vec<(String, String)>,
    emitted_nodes: usize,
    /// The keywords of the node being emitted.
    node_keys: Vec<String>,
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
    /// without weakening it, or (OpenAI, Anthropic) would refuse `name`
    /// (see [`is_schema_name`]).
    pub fn provider_schema(&self, provider: Provider, name: &str) -> std::result::Result<Value, ExportError> {
        let schema = self.bare_provider_schema(provider)?;
        // The provider would answer the request with a 400: said here, before any round is spent.
        if matches!(provider, Provider::OpenAi | Provider::Anthropic) && !is_schema_name(name) {
            return Err(ExportError {
                keyword: String::new(),
                location: String::new(),
                message: format!(
                    "the name {name:?} is not one {} takes (1 to 64 ASCII letters, digits, `_` or `-`)",
                    if provider == Provider::OpenAi { "OpenAI" } else { "Anthropic" }
                ),
            });
        }
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
        let document = self.document();
        let draft = Draft::of(document);
        let root_id = document
            .get("$id")
            .or_else(|| document.get("id").filter(|_| draft == Draft::Draft4))
            .and_then(Value::as_str);
        let annotations = crate::contract::declared_annotations(document);
        let mut e = Exporter {
            provider,
            document,
            draft,
            annotations,
            root_id,
            inlining: Vec::new(),
            wanted: Vec::new(),
            emitted_nodes: 0,
            node_keys: Vec::new(),
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

/// The type names a node's `type` lists (none when it has no `type`).
fn type_names(map: &Map<String, Value>) -> Option<Vec<&str>> {
    match map.get("type")? {
        Value::String(s) => Some(vec![s.as_str()]),
        Value::Array(a) => Some(a.iter().filter_map(Value::as_str).collect()),
        _ => None,
    }
}

/// Keywords that make a node speak about objects.
const OBJECT_KEYWORDS: &[&str] = &[
    "properties",
    "required",
    "additionalProperties",
    "patternProperties",
    "propertyNames",
    "minProperties",
    "maxProperties",
    "dependentRequired",
    "dependentSchemas",
];

impl<'a> Exporter<'a> {
    fn root(&mut self) -> Result<Value> {
        let doc = self.document;
        if self.provider == Provider::JsonSchema {
            let mut out = doc.clone();
            trimmed_lengths(&mut out)?;
            encodings_as_patterns(&mut out);
            strip_policy(&mut out);
            return Ok(out);
        }
        self.inlining.push(String::new());
        let out = self.node(doc, "")?;
        let root_type = out.get("type").and_then(Value::as_str).map(str::to_lowercase);
        if root_type.as_deref() != Some("object") {
            return Err(error(
                "type",
                "",
                format!("{} needs the root to be {{\"type\": \"object\"}}", self.provider.label()),
            ));
        }
        if self.provider == Provider::OpenAi && out.get("anyOf").is_some() {
            return Err(error("anyOf", "", "OpenAI does not allow anyOf at the root"));
        }
        let Value::Object(mut out) = out else { return Err(error("", "", "not a schema")) };
        // Definitions a recursive `$ref` kept (OpenAI); each may want more.
        let mut defs = Map::new();
        let mut done = 0;
        while let Some((at, name)) = self.wanted.get(done).cloned() {
            done += 1;
            let target = self.document.pointer(&at).ok_or_else(|| error("$ref", &at, "points to nothing"))?;
            self.inlining = vec![at.clone()];
            let emitted = self.node(target, &at)?;
            defs.insert(name, emitted);
        }
        if !defs.is_empty() {
            out.insert("$defs".into(), Value::Object(defs));
        }
        Ok(Value::Object(out))
    }

    /// One schema node.
    fn node(&mut self, schema: &Value, location: &str) -> Result<Value> {
        crate::deeper(|| self.node_here(schema, location))
    }

    fn node_here(&mut self, schema: &Value, location: &str) -> Result<Value> {
        self.emitted_nodes += 1;
        if self.emitted_nodes > MAX_EMITTED_NODES {
            return Err(error(
                "$ref",
                location,
                format!("inlining this contract's references would emit over {MAX_EMITTED_NODES} schemas"),
            ));
        }
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
        let mut node = self.normalize(map, location)?;
        let depth = self.inlining.len();
        let result = match self.flatten(&mut node, location) {
            Ok(Some(recursive)) => self.recursive_ref(&node, &recursive, location),
            Ok(None) => self.emit(&node, location),
            Err(e) => Err(e),
        };
        self.inlining.truncate(depth);
        result
    }

    /// Whether a schema constrains nothing (it may still carry annotations).
    fn is_vacuous(&self, v: &Value) -> bool {
        match v {
            Value::Bool(b) => *b,
            Value::Object(m) => m.keys().all(|k| self.is_annotation(k)),
            _ => false,
        }
    }

    fn is_annotation(&self, k: &str) -> bool {
        KEPT_ANNOTATIONS.contains(&k)
            || DROPPED_ANNOTATIONS.contains(&k)
            || (k.starts_with("x-") && k != "x-vouch")
            || self.annotations.iter().any(|a| a == k)
            || (k == "id" && self.draft == Draft::Draft4)
            // The compiler read it as an annotation: a `_` key, or a keyword
            // it does not know that could drop no constraint.
            || k.starts_with('_')
            || !(crate::contract::is_keyword(k) || k == "nullable" || k == "id")
    }

    /// The node in 2020-12 terms, without what constrains nothing.
    fn normalize(&self, map: &Map<String, Value>, location: &str) -> Result<Normalized> {
        let mut out = Map::new();
        let mut renamed = Vec::new();
        let old_items = self.draft != Draft::Draft2020;
        for (k, v) in map {
            let k = k.as_str();
            match k {
                // Below the root an identifier moves the base its references
                // read against, which the exported schema (without it) would not.
                "$id" | "id" if !location.is_empty() && (k == "$id" || self.draft == Draft::Draft4) => {
                    return Err(error(k, location, "an exported schema cannot carry a base URI below its root"));
                }
                // OpenAPI 3.0's `nullable` adds null to `type` (applied below).
                "nullable" => {}
                _ if KEPT_ANNOTATIONS.contains(&k) => {
                    if v.is_string() {
                        out.insert(k.to_owned(), v.clone());
                    }
                }
                _ if self.is_annotation(k) => {}
                // Draft-04: a boolean that makes `minimum`/`maximum` exclusive.
                "exclusiveMinimum" | "exclusiveMaximum" if v.is_boolean() => {
                    let bound = if k == "exclusiveMinimum" { "minimum" } else { "maximum" };
                    if let (Some(true), Some(b)) = (v.as_bool(), map.get(bound)) {
                        out.insert(k.to_owned(), b.clone());
                    }
                }
                "minimum" | "maximum"
                    if map.get(if k == "minimum" { "exclusiveMinimum" } else { "exclusiveMaximum" })
                        == Some(&Value::Bool(true)) => {}
                // Up to 2019-09, an array `items` is a tuple: `prefixItems`, and
                // `additionalItems` is then the 2020-12 `items`.
                "items" if v.is_array() && old_items => {
                    out.insert("prefixItems".into(), v.clone());
                    renamed.push(("prefixItems", "items"));
                    if let Some(rest) = map.get("additionalItems") {
                        out.insert("items".into(), rest.clone());
                        renamed.push(("items", "additionalItems"));
                    }
                }
                "additionalItems" if old_items => {}
                "dependencies" => {
                    for (name, dep) in v.as_object().into_iter().flatten() {
                        let key = if dep.is_array() { "dependentRequired" } else { "dependentSchemas" };
                        renamed.push((key, "dependencies"));
                        let entry = out.entry(key).or_insert_with(|| Value::Object(Map::new()));
                        if let Value::Object(m) = entry {
                            if m.insert(name.clone(), dep.clone()).is_some() {
                                return Err(error(k, location, format!("{name:?} is named twice")));
                            }
                        }
                    }
                }
                _ => {
                    if out.contains_key(k) {
                        return Err(error(k, location, "written both in its draft's form and as 2020-12's"));
                    }
                    out.insert(k.to_owned(), v.clone());
                }
            }
        }
        if map.get("nullable") == Some(&Value::Bool(true)) {
            if let Some(t) = out.get_mut("type") {
                let mut names: Vec<Value> = match &*t {
                    Value::Array(a) => a.clone(),
                    other => vec![other.clone()],
                };
                if !names.iter().any(|n| n == "null") {
                    names.push(Value::from("null"));
                }
                *t = Value::Array(names);
            }
        }
        // What is always true goes.
        let vacuous = |k: &str, out: &Map<String, Value>| -> bool {
            let Some(v) = out.get(k) else { return false };
            match k {
                // Member names are always strings.
                "propertyNames" => {
                    self.is_vacuous(v)
                        || v.as_object().is_some_and(|m| {
                            m.iter().all(|(k, t)| self.is_annotation(k) || (k == "type" && string_type(t)))
                        })
                }
                "additionalProperties" | "items" => self.is_vacuous(v),
                "minItems" | "minLength" | "minProperties" => v.as_f64() == Some(0.0),
                "uniqueItems" => v == &Value::Bool(false),
                "required" | "allOf" => v.as_array().is_some_and(Vec::is_empty),
                "dependentRequired" | "dependentSchemas" | "patternProperties" => {
                    v.as_object().is_some_and(Map::is_empty)
                }
                _ => false,
            }
        };
        for k in [
            "propertyNames",
            "additionalProperties",
            "items",
            "minItems",
            "minLength",
            "minProperties",
            "uniqueItems",
            "required",
            "allOf",
            "dependentRequired",
            "dependentSchemas",
            "patternProperties",
        ] {
            if vacuous(k, &out) {
                out.shift_remove(k);
            }
        }
        for key in ["dependentRequired", "dependentSchemas"] {
            if let Some(Value::Object(m)) = out.get_mut(key) {
                m.retain(|_, d| {
                    !(d.as_array().is_some_and(Vec::is_empty) || d == &Value::Bool(true) || d == &json!({}))
                });
                if m.is_empty() {
                    out.shift_remove(key);
                }
            }
        }
        // Without their keyword, these have no effect (as in the spec).
        if !out.contains_key("contains") {
            out.shift_remove("minContains");
            out.shift_remove("maxContains");
        }
        if !out.contains_key("if") || (!out.contains_key("then") && !out.contains_key("else")) {
            for k in ["if", "then", "else"] {
                out.shift_remove(k);
            }
        }
        Ok(Normalized { map: out, renamed })
    }

    /// Merges the node's `$ref` target and `allOf` branches into it, where
    /// that is exact. `Some(pointer)` when the `$ref` is recursive.
    fn flatten(&mut self, node: &mut Normalized, location: &str) -> Result<Option<String>> {
        for _ in 0..MAX_MERGES {
            if let Some(r) = node.map.get("$ref") {
                let r = r.as_str().unwrap_or_default().to_owned();
                let (at, target) =
                    self.resolve(&r).ok_or_else(|| error("$ref", location, "cannot resolve the reference"))?;
                if self.inlining.contains(&at) {
                    return Ok(Some(at));
                }
                node.map.shift_remove("$ref");
                self.inlining.push(at);
                let target = match target {
                    Value::Object(m) => self.normalize(m, location)?,
                    t if self.is_vacuous(t) => continue,
                    _ => return Err(error("$ref", location, "the reference points to `false`, which allows nothing")),
                };
                self.merge(node, target, "$ref", location)?;
                continue;
            }
            if let Some(branches) = node.map.shift_remove("allOf") {
                for (i, b) in branches.as_array().into_iter().flatten().enumerate() {
                    let at = pointer::join(&pointer::join(location, "allOf"), &i.to_string());
                    let mut branch = match b {
                        Value::Object(m) => self.normalize(m, &at)?,
                        b if self.is_vacuous(b) => continue,
                        _ => return Err(error("allOf", &at, "this branch is `false`, which allows nothing")),
                    };
                    if crate::deeper(|| self.flatten(&mut branch, &at))?.is_some() {
                        return Err(error(
                            "$ref",
                            &at,
                            format!("{} cannot merge a recursive reference into its allOf", self.provider.label()),
                        ));
                    }
                    self.merge(node, branch, "allOf", location)?;
                }
                continue;
            }
            return Ok(None);
        }
        Err(error("$ref", location, format!("more than {MAX_MERGES} references and allOf in a chain")))
    }

    /// `dst` and `src` both hold: one node with both sets of keywords is the
    /// same constraint when no keyword is written on both sides (or the same),
    /// and no keyword's meaning depends on a sibling on the other side.
    fn merge(&self, dst: &mut Normalized, mut src: Normalized, keyword: &str, location: &str) -> Result<()> {
        let label = self.provider.label();
        let refuse = |why: String| -> Result<()> {
            Err(error(keyword, location, format!("{label} has no {keyword} here: {why}")))
        };
        let constrains = |m: &Map<String, Value>| m.keys().any(|k| !self.is_annotation(k) && k != "x-vouch");
        // A repair applies to its own node's keywords only; a policy without
        // repairs (a default) absorbs nothing here and may go.
        let repairs = |m: &Map<String, Value>| !repair_rules(m).is_empty();
        let (rd, rs) = (repairs(&dst.map), repairs(&src.map));
        if (rd && constrains(&src.map)) || (rs && constrains(&dst.map)) || (rd && rs) {
            return refuse("the repairs declared on one side would apply to the other's keywords once merged".into());
        }
        if rd || !rs {
            src.map.shift_remove("x-vouch");
        } else {
            dst.map.shift_remove("x-vouch");
        }
        // Keywords whose meaning depends on a sibling.
        let families: [&[&str]; 4] = [
            &["properties", "patternProperties", "additionalProperties"],
            &["prefixItems", "items"],
            &["contains", "minContains", "maxContains"],
            &["if", "then", "else"],
        ];
        for family in families {
            let d = family.iter().any(|k| dst.map.contains_key(*k));
            let s = family.iter().any(|k| src.map.contains_key(*k));
            let dependent = family.iter().skip(1).any(|k| dst.map.contains_key(*k) || src.map.contains_key(*k));
            let same = family.iter().all(|k| dst.map.get(*k) == src.map.get(*k));
            if d && s && dependent && !same {
                return refuse(format!("{} on both sides mean something else together", family.join("/")));
            }
        }
        for (k, v) in src.map {
            if let Some((new, old)) = src.renamed.iter().find(|(new, _)| *new == k) {
                dst.renamed.push((new, old));
            }
            let Some(d) = dst.map.get_mut(&k) else {
                dst.map.insert(k, v);
                continue;
            };
            if *d == v || KEPT_ANNOTATIONS.contains(&k.as_str()) {
                continue;
            }
            match k.as_str() {
                "required" => {
                    let mut all: Vec<Value> = d.as_array().cloned().unwrap_or_default();
                    for r in v.as_array().into_iter().flatten() {
                        if !all.contains(r) {
                            all.push(r.clone());
                        }
                    }
                    *d = Value::Array(all);
                }
                "properties" => {
                    let (Some(dm), Some(sm)) = (d.as_object_mut(), v.as_object()) else { continue };
                    for (name, s) in sm {
                        match dm.get(name) {
                            Some(x) if x != s => {
                                return refuse(format!("the property {name:?} has a schema on both sides"))
                            }
                            _ => {
                                dm.insert(name.clone(), s.clone());
                            }
                        }
                    }
                }
                "type" => {
                    let names = |t: &Value| -> Vec<String> {
                        match t {
                            Value::String(s) => vec![s.clone()],
                            Value::Array(a) => a.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
                            _ => Vec::new(),
                        }
                    };
                    let (a, b) = (names(d), names(&v));
                    // `integer` is a `number` too.
                    let has = |set: &[String], t: &str| set.iter().any(|x| x == t || (t == "integer" && x == "number"));
                    let both: Vec<Value> = a
                        .iter()
                        .filter(|t| has(&b, t))
                        .chain(b.iter().filter(|t| t.as_str() == "integer" && a.iter().any(|x| x == "number")))
                        .map(|t| Value::String(t.clone()))
                        .collect();
                    let mut unique: Vec<Value> = Vec::new();
                    for t in both {
                        if !unique.contains(&t) {
                            unique.push(t);
                        }
                    }
                    match unique.len() {
                        0 => return refuse("the two sides allow no type in common".into()),
                        1 => *d = unique.swap_remove(0),
                        _ => *d = Value::Array(unique),
                    }
                }
                _ => return refuse(format!("`{k}` is written on both sides, and one schema holds one")),
            }
        }
        Ok(())
    }

    /// The document pointer a reference names, and what is there.
    fn resolve(&self, r: &str) -> Option<(String, &'a Value)> {
        let fragment = match r.strip_prefix('#') {
            Some(f) => f,
            None => r.strip_prefix(self.root_id?)?.strip_prefix('#')?,
        };
        let at = pointer::percent_decode(fragment)?;
        let target = self.document.pointer(&at)?;
        Some((at, target))
    }

    /// A `$ref` back to a schema being emitted: OpenAI keeps it (as `#` or a
    /// definition), which no other provider takes.
    fn recursive_ref(&mut self, node: &Normalized, at: &str, location: &str) -> Result<Value> {
        if self.provider != Provider::OpenAi {
            let why = match self.provider {
                Provider::Gemini => "Gemini has no references, and this one is recursive".to_owned(),
                _ => format!("{} does not support recursive schemas", self.provider.label()),
            };
            return Err(error("$ref", location, why));
        }
        // The annotations and policy beside it may go (what the target accepts,
        // the contract accepts); a constraint cannot.
        if let Some(k) = node
            .map
            .keys()
            .find(|k| !matches!(k.as_str(), "$ref" | "x-vouch") && !KEPT_ANNOTATIONS.contains(&k.as_str()))
        {
            return Err(error(
                k,
                location,
                "OpenAI strict takes a recursive $ref alone; move this keyword into the referenced schema",
            ));
        }
        if at.is_empty() {
            return Ok(json!({"$ref": "#"}));
        }
        let segments: Vec<&str> = at.split('/').collect();
        let name = match segments.as_slice() {
            ["", "$defs" | "definitions", name] => name.replace("~1", "/").replace("~0", "~"),
            _ => {
                return Err(error(
                    "$ref",
                    location,
                    "OpenAI strict takes recursion only through `#` or a definition ($defs/NAME); point the $ref at a definition",
                ))
            }
        };
        match self.wanted.iter().find(|(_, n)| *n == name) {
            Some((p, _)) if p != at => {
                return Err(error(
                    "$ref",
                    location,
                    format!("two definitions are named {name:?} ($defs and definitions); rename one"),
                ))
            }
            Some(_) => {}
            None => self.wanted.push((at.to_owned(), name.clone())),
        }
        Ok(json!({"$ref": format!("#/$defs/{}", pointer_escape(&name))}))
    }

    /// A merged node, emitted in the provider's dialect.
    fn emit(&mut self, node: &Normalized, location: &str) -> Result<Value> {
        let map = &node.map;
        let absorbs = Absorbs::of(map);
        let mut out = Map::new();
        let types = type_names(map);
        let is_object = types
            .as_ref()
            .map_or_else(|| OBJECT_KEYWORDS.iter().any(|k| map.contains_key(*k)), |t| t.contains(&"object"));
        if is_object {
            self.object_depth += 1;
            self.max_object_depth = self.max_object_depth.max(self.object_depth);
        }
        let result = self
            .object_rules(node, location, absorbs, is_object, &mut out)
            .and_then(|()| self.keywords(node, location, absorbs, &mut out));
        if is_object {
            self.object_depth -= 1;
        }
        result?;
        // Gemini's `nullable` beside an enum admits null: only where the contract's values do.
        let values_lack_null = map.get("enum").and_then(Value::as_array).is_some_and(|e| !e.contains(&Value::Null))
            || map.get("const").is_some_and(|c| !c.is_null());
        if self.provider == Provider::Gemini && values_lack_null {
            out.shift_remove("nullable");
        }
        if self.provider == Provider::Gemini && out.contains_key("enum") {
            out.entry("type").or_insert_with(|| json!("STRING"));
            out.entry("format").or_insert_with(|| json!("enum"));
        }
        if is_object {
            // Object keywords say nothing about other types; the provider's
            // schema does, so a node without `type` becomes an object (stricter).
            if !out.contains_key("type") && !out.contains_key("anyOf") {
                let t = if self.provider == Provider::Gemini { "OBJECT" } else { "object" };
                out.insert("type".into(), json!(t));
            }
            if matches!(self.provider, Provider::OpenAi | Provider::Anthropic) {
                // Closed objects: stricter than an open contract (object_rules
                // refused where closing would leave nearly nothing).
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
        }
        Ok(Value::Object(out))
    }

    /// What the provider's closed objects (OpenAI, Anthropic) or declared-only
    /// generation (Gemini) make of the object keywords: each is implied, made
    /// stricter, or refused. Closing never leaves an object that could only
    /// be `{}` where the contract takes members.
    fn object_rules(
        &mut self,
        node: &Normalized,
        location: &str,
        absorbs: Absorbs,
        is_object: bool,
        out: &mut Map<String, Value>,
    ) -> Result<()> {
        if !is_object {
            return Ok(());
        }
        let map = &node.map;
        let p = self.provider;
        let label = p.label();
        let cannot = |k: &str, why: String| -> Result<()> {
            if absorbs.all {
                Ok(())
            } else {
                Err(error(&node.written(k), location, format!("{label} {why}")))
            }
        };
        // Declared members that may be sent (`false` ones may not).
        let declared: Vec<&str> = map
            .get("properties")
            .and_then(Value::as_object)
            .map(|m| m.iter().filter(|(_, s)| **s != Value::Bool(false)).map(|(k, _)| k.as_str()).collect())
            .unwrap_or_default();
        let required: Vec<&str> = map
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        for r in &required {
            if !declared.contains(r) {
                cannot(
                    "required",
                    format!(
                        "sends only declared properties, and {r:?} is required but not in properties: declare it in properties"
                    ),
                )?;
            }
        }
        let free_keyword = match (map.get("additionalProperties"), map.get("patternProperties")) {
            (Some(Value::Bool(false)), None) => None,
            (Some(Value::Bool(false)) | None, Some(_)) => Some("patternProperties"),
            (Some(_), _) => Some("additionalProperties"),
            (None, None) => Some("type"),
        };
        let only_empty = map.get("maxProperties").and_then(Value::as_f64) == Some(0.0);
        if let (Some(k), true, false) = (free_keyword, declared.is_empty(), only_empty) {
            let what = if k == "type" {
                "an object that declares no properties (any keys)".to_owned()
            } else {
                format!("a map ({k} with a schema: keys not declared in properties)")
            };
            cannot(
                k,
                format!(
                    "cannot express {what}; sent as a closed object it could only be {{}}: declare the keys as properties, or use an array of {{\"key\", \"value\"}} objects"
                ),
            )?;
        }
        for (pattern, schema) in map.get("patternProperties").and_then(Value::as_object).into_iter().flatten() {
            if self.is_vacuous(schema) {
                continue;
            }
            let matcher = crate::pattern::compile_pattern(pattern).ok();
            for name in &declared {
                if matcher.as_ref().is_none_or(|m| m.is_match(name)) {
                    cannot(
                        "patternProperties",
                        format!(
                            "cannot apply the schema of the pattern {pattern:?} to the property {name:?} as well as its own: give {name:?} one schema"
                        ),
                    )?;
                }
            }
        }
        if let Some(names) = map.get("propertyNames") {
            // Closed, the object's keys are the declared names: if each passes,
            // the keyword always holds.
            let standalone = Contract::from_value(names.clone()).ok();
            for name in &declared {
                let passes = standalone.as_ref().is_some_and(|c| c.check_value(&json!(name)).is_pass());
                if !passes {
                    cannot("propertyNames", format!("cannot express propertyNames, and the property {name:?} may not satisfy it: remove the property or the keyword"))?;
                }
            }
        }
        // How many members a reply may hold: OpenAI sends every declared
        // property; the others from the required ones to all declared.
        let fewest = if p == Provider::OpenAi { declared.len() } else { required.len() };
        let most = declared.len();
        if p != Provider::Gemini {
            if let Some(min) = map.get("minProperties").and_then(Value::as_f64) {
                if min > fewest as f64 {
                    cannot(
                        "minProperties",
                        format!("cannot express minProperties {min}: make at least that many properties required"),
                    )?;
                }
            }
            if let Some(max) = map.get("maxProperties").and_then(Value::as_f64) {
                if max < most as f64 {
                    cannot(
                        "maxProperties",
                        format!("cannot express maxProperties {max} for {most} declared properties"),
                    )?;
                }
            }
        }
        // A dependency on a property that is never sent always holds; one whose
        // dependents are always sent holds too; else they are made required
        // (stricter) where the provider has optional properties.
        let mut also_required: Vec<&str> = Vec::new();
        for (trigger, deps) in map.get("dependentRequired").and_then(Value::as_object).into_iter().flatten() {
            if !declared.contains(&trigger.as_str()) {
                continue;
            }
            for d in deps.as_array().into_iter().flatten().filter_map(Value::as_str) {
                if !declared.contains(&d) {
                    cannot("dependentRequired", format!("sends only declared properties, and {d:?} (needed with {trigger:?}) is not in properties: declare it"))?;
                } else if !required.contains(&d) && !also_required.contains(&d) {
                    also_required.push(d);
                }
            }
        }
        if p != Provider::OpenAi && !also_required.is_empty() {
            let mut all: Vec<Value> = required.iter().map(|r| json!(r)).collect();
            all.extend(also_required.iter().map(|r| json!(r)));
            out.insert("required".into(), Value::Array(all));
        }
        for (trigger, schema) in map.get("dependentSchemas").and_then(Value::as_object).into_iter().flatten() {
            if declared.contains(&trigger.as_str()) && !self.is_vacuous(schema) {
                cannot(
                    "dependentSchemas",
                    format!("cannot express a schema that applies only when {trigger:?} is present"),
                )?;
            }
        }
        Ok(())
    }

    #[allow(clippy::too_many_lines)]
    fn keywords(
        &mut self,
        node: &Normalized,
        location: &str,
        absorbs: Absorbs,
        out: &mut Map<String, Value>,
    ) -> Result<()> {
        let map = &node.map;
        let p = self.provider;
        let required: Vec<&str> = map
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        for (keyword, v) in map {
            let k = keyword.as_str();
            let written = node.written(k);
            self.node_keys = map.keys().cloned().collect();
            // Drop a keyword only when this node's repairs absorb its failures.
            let cannot = |why: &str| -> Result<()> {
                if absorbs.all {
                    Ok(())
                } else {
                    Err(error(&written, location, format!("{} {why}", p.label())))
                }
            };
            match k {
                "x-vouch" => {}
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
                        // Strings and null: exactly a nullable string enum.
                        let (nulls, strings): (Vec<Value>, Vec<Value>) = values.into_iter().partition(Value::is_null);
                        if nulls.is_empty() || !strings.iter().all(Value::is_string) || strings.is_empty() {
                            cannot("accepts only string enums")?;
                            continue;
                        }
                        out.insert("nullable".into(), Value::Bool(true));
                        out.insert("enum".into(), Value::Array(strings));
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
                        // `false`: the member must be absent, as a closed object
                        // without it says (a required one is refused by the checker anyway).
                        if sub == &Value::Bool(false) && !required.contains(&name.as_str()) {
                            continue;
                        }
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
                        out.entry("required").or_insert_with(|| v.clone());
                    }
                }
                // Judged by object_rules: implied by the closed object, or refused there.
                "additionalProperties" | "patternProperties" | "propertyNames" | "dependentRequired"
                | "dependentSchemas" => {}
                "minProperties" | "maxProperties" => {
                    if p == Provider::Gemini {
                        out.insert(k.to_owned(), v.clone());
                    }
                }
                "items" => {
                    let at = pointer::join(location, &written);
                    out.insert("items".into(), self.node(v, &at)?);
                }
                "prefixItems" => cannot(
                    "cannot express a tuple (prefixItems, or items as an array before 2020-12): use an object with named properties",
                )?,
                "minItems" | "maxItems" => {
                    let n = whole(v).unwrap_or(u64::MAX);
                    if p == Provider::Anthropic && (k == "maxItems" || n > 1) {
                        cannot("supports only minItems 0 or 1")?;
                    } else {
                        out.insert(k.to_owned(), json!(n));
                    }
                }
                "uniqueItems" => {
                    // Arrays of at most one item are always unique.
                    if map.get("maxItems").and_then(Value::as_f64).is_none_or(|m| m > 1.0) {
                        cannot("cannot express this keyword (an array of at most one item, maxItems 1, is always unique)")?;
                    }
                }
                "minimum" | "maximum" => {
                    if p == Provider::Anthropic {
                        if !absorbs.bounds {
                            cannot("has no numeric bounds")?;
                        }
                    } else {
                        tighter_bound(out, k, v.as_f64().unwrap_or(0.0), v.clone());
                    }
                }
                "exclusiveMinimum" | "exclusiveMaximum" => match p {
                    Provider::OpenAi => {
                        out.insert(k.to_owned(), v.clone());
                    }
                    _ if absorbs.bounds => {}
                    Provider::Gemini if map.get("type").and_then(Value::as_str) == Some("integer") => {
                        // For integers, > n is ≥ floor(n)+1: exact.
                        let f = v.as_f64().unwrap_or(0.0);
                        let (key, bound) = if k == "exclusiveMinimum" {
                            ("minimum", f.floor() + 1.0)
                        } else {
                            ("maximum", f.ceil() - 1.0)
                        };
                        tighter_bound(out, key, bound, json!(bound as i64));
                    }
                    _ => cannot("has no exclusive bounds here")?,
                },
                "multipleOf" => {
                    if p == Provider::OpenAi {
                        out.insert(k.to_owned(), v.clone());
                    } else if !(v.as_f64() == Some(1.0) && map.get("type").and_then(Value::as_str) == Some("integer")) {
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
                    } else if matches!(f, "binary" | "password" | "path")
                        || (matches!(f, "starts_with" | "ends_with" | "includes") && map.contains_key("pattern"))
                    {
                        // Asserts nothing (an OpenAPI hint), or Zod's name for the pattern beside it.
                    } else {
                        cannot(&format!("does not support the format {f:?}"))?;
                    }
                }
                "anyOf" => self.alternatives(v, location, k, out)?,
                "oneOf" => {
                    // Exact as an enum when every branch is a constant, as schemars writes enums.
                    if let Some(values) = constants(v) {
                        self.count_enum(&values);
                        out.insert("enum".into(), Value::Array(values));
                    } else if self.disjoint_branches(v, type_names(map).as_deref()) {
                        // At most one branch can match, so any of them is exactly one.
                        self.alternatives(v, location, k, out)?;
                    } else {
                        cannot(
                            "has no oneOf, and these alternatives may overlap (anyOf would accept more): give each \
                             object branch a required tag property with its own const, or give each branch its own type",
                        )?;
                    }
                }
                "contains" | "minContains" | "maxContains" | "not" | "if" | "then" | "else" => {
                    cannot("cannot express this keyword")?;
                }
                _ => cannot("cannot express this keyword")?,
            }
        }
        Ok(())
    }

    /// `anyOf` (or a `oneOf` shown disjoint): the branches, with a `null`
    /// branch as Gemini's `nullable`.
    fn alternatives(&mut self, v: &Value, location: &str, keyword: &str, out: &mut Map<String, Value>) -> Result<()> {
        if location.is_empty() && self.provider == Provider::OpenAi {
            let what = if keyword == "oneOf" { "anyOf (which this oneOf would be sent as)" } else { "anyOf" };
            return Err(error(
                keyword,
                location,
                format!(
                    "OpenAI does not allow {what} at the root: make the root an object with the union as one property"
                ),
            ));
        }
        // Read before the branches are emitted (they set `node_keys` for themselves).
        let alone = self.node_keys.iter().all(|k| k == keyword || self.is_annotation(k));
        let base = pointer::join(location, keyword);
        let mut emitted = Vec::new();
        let mut nullable = false;
        for (i, b) in v.as_array().into_iter().flatten().enumerate() {
            let only_null = b.as_object().is_some_and(|m| {
                m.get("type") == Some(&json!("null")) && m.keys().all(|k| k == "type" || self.is_annotation(k))
            });
            if self.provider == Provider::Gemini && only_null {
                nullable = true;
                continue;
            }
            emitted.push(self.node(b, &pointer::join(&base, &i.to_string()))?);
        }
        if nullable {
            out.insert("nullable".into(), Value::Bool(true));
            // The one other branch becomes the node itself where nothing else
            // of the node's could write the same keys.
            if let [Value::Object(one)] = emitted.as_slice() {
                if alone && one.keys().all(|k| !out.contains_key(k)) {
                    for (k, x) in one {
                        out.insert(k.clone(), x.clone());
                    }
                    return Ok(());
                }
            }
        }
        if out.contains_key("anyOf") {
            return Err(error(keyword, location, "an anyOf and a oneOf on one node: put one inside the other"));
        }
        out.insert("anyOf".into(), Value::Array(emitted));
        Ok(())
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
            _ if out.contains_key("anyOf") => {
                return Err(error("type", location, "Gemini takes several types as an anyOf, and this node has one"))
            }
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
        let min = map.get("minLength").and_then(whole);
        let max = map.get("maxLength").and_then(whole);
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
            out.insert(k.to_owned(), map.get(k).and_then(whole).map_or(Value::Null, |n| json!(n)));
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

    /// OpenAI requires every property; an optional one is sent nullable (as
    /// the OpenAI SDK does), which is sound only where the contract accepts
    /// `null`: its schema allows it, or an `x-vouch` default replaces it.
    fn nullable_optional(&mut self, contract_node: &Value, emitted: Value, at: &str) -> Result<Value> {
        if !self.accepts_null(contract_node, 0) {
            return Err(error(
                "required",
                at,
                "OpenAI strict requires every property, so an optional one is sent as nullable, and the contract \
                 does not accept null here: make it required, allow null (\"type\": [..., \"null\"], or anyOf with \
                 {\"type\": \"null\"}), or declare an x-vouch default",
            ));
        }
        if admits_null(&emitted) {
            return Ok(emitted);
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

    /// Whether the contract surely accepts `null` at this schema (repairs
    /// allowed). `false` when it cannot tell.
    fn accepts_null(&self, schema: &Value, depth: usize) -> bool {
        let Value::Object(m) = schema else { return schema == &Value::Bool(true) };
        if depth > 64 {
            return false;
        }
        let lists_null = type_names(m).is_some_and(|t| t.contains(&"null"));
        let has_default = m.get("x-vouch").is_some_and(|p| p.get("default").is_some());
        // A default replaces a null the type does not list, and satisfies the node.
        if has_default && (!lists_null || repair_rules(m).contains(&"default_if_invalid")) {
            return true;
        }
        if m.contains_key("x-vouch") && depth > 0 {
            return false;
        }
        self.null_verdict(m, depth) == Some(true)
    }

    /// Whether null satisfies this schema: `Some(true)`, `Some(false)`, or
    /// `None` when it cannot tell (repairs, conditionals).
    fn null_verdict(&self, m: &Map<String, Value>, depth: usize) -> Option<bool> {
        if depth > 64 || (depth > 0 && m.contains_key("x-vouch")) || m.contains_key("if") {
            return None;
        }
        let sub = |v: &Value| -> Option<bool> {
            match v {
                Value::Bool(b) => Some(*b),
                Value::Object(s) => self.null_verdict(s, depth + 1),
                _ => None,
            }
        };
        let mut unknown = false;
        let mut all = |x: Option<bool>| -> bool {
            match x {
                Some(false) => false,
                Some(true) => true,
                None => {
                    unknown = true;
                    true
                }
            }
        };
        let ok = type_names(m).is_none_or(|t| t.contains(&"null"))
            && m.get("enum").and_then(Value::as_array).is_none_or(|e| e.contains(&Value::Null))
            && m.get("const").is_none_or(Value::is_null)
            && all(m
                .get("allOf")
                .and_then(Value::as_array)
                .map_or(Some(true), |b| b.iter().map(sub).try_fold(true, |acc, x| x.map(|x| acc && x))))
            && all(m.get("anyOf").and_then(Value::as_array).map_or(Some(true), |b| {
                let v: Vec<Option<bool>> = b.iter().map(sub).collect();
                if v.contains(&Some(true)) {
                    Some(true)
                } else if v.iter().all(|x| *x == Some(false)) {
                    Some(false)
                } else {
                    None
                }
            }))
            && all(m.get("oneOf").and_then(Value::as_array).map_or(Some(true), |b| {
                let v: Vec<Option<bool>> = b.iter().map(sub).collect();
                if v.contains(&None) {
                    None
                } else {
                    Some(v.iter().filter(|x| **x == Some(true)).count() == 1)
                }
            }))
            && all(m.get("not").map_or(Some(true), |n| sub(n).map(|x| !x)))
            && all(m
                .get("$ref")
                .and_then(Value::as_str)
                .map_or(Some(true), |r| self.resolve(r).and_then(|(_, t)| sub(t))));
        match (ok, unknown) {
            (false, _) => Some(false),
            (true, false) => Some(true),
            (true, true) => None,
        }
    }

    /// Whether at most one branch can match any value: each pair differs in
    /// type, or both are objects with a required tag property whose `const`
    /// (or one-value `enum`) differs.
    fn disjoint_branches(&self, v: &Value, parent_types: Option<&[&str]>) -> bool {
        let Some(branches) = v.as_array() else { return false };
        let resolved: Vec<Option<&Map<String, Value>>> = branches.iter().map(|b| self.resolve_chain(b)).collect();
        let parent_objects = parent_types.is_some_and(|t| t == ["object"]);
        for (i, a) in resolved.iter().enumerate() {
            for b in resolved.iter().skip(i + 1) {
                let (Some(a), Some(b)) = (a, b) else { return false };
                if !disjoint(a, b, parent_objects) {
                    return false;
                }
            }
        }
        true
    }

    /// A branch's own map, through a chain of pure `$ref`s.
    fn resolve_chain(&self, mut v: &'a Value) -> Option<&'a Map<String, Value>> {
        for _ in 0..64 {
            let m = v.as_object()?;
            match m.get("$ref").and_then(Value::as_str) {
                Some(r) => v = self.resolve(r)?.1,
                None => return Some(m),
            }
        }
        None
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
}

/// A count as the contract may write it: `2` or `2.0`.
fn whole(v: &Value) -> Option<u64> {
    v.as_u64().or_else(|| v.as_f64().filter(|f| *f >= 0.0 && f.fract() == 0.0 && *f < 1.8e19).map(|f| f as u64))
}

/// Keeps the stricter of two inclusive bounds written to one key.
fn tighter_bound(out: &mut Map<String, Value>, key: &str, bound: f64, value: Value) {
    let current = out.get(key).and_then(Value::as_f64);
    let tighter = match current {
        None => true,
        Some(c) if key == "minimum" || key == "exclusiveMinimum" => bound > c,
        Some(c) => bound < c,
    };
    if tighter {
        out.insert(key.to_owned(), value);
    }
}

fn string_type(t: &Value) -> bool {
    match t {
        Value::String(s) => s == "string",
        Value::Array(a) => a.iter().any(|x| x == "string"),
        _ => false,
    }
}

fn pointer_escape(s: &str) -> String {
    let mut out = String::new();
    pointer::push_escaped(&mut out, s);
    out
}

/// Whether an emitted schema surely takes `null`.
fn admits_null(v: &Value) -> bool {
    let Some(m) = v.as_object() else { return false };
    let typed_null = type_names(m).is_some_and(|t| t.contains(&"null"))
        && m.keys().all(|k| {
            k == "type"
                || KEPT_ANNOTATIONS.contains(&k.as_str())
                || k == "format"
                || k == "pattern"
                || k.starts_with("min")
                || k.starts_with("max")
                || k == "items"
                || k == "properties"
                || k == "required"
                || k == "additionalProperties"
                || k == "multipleOf"
                || k.starts_with("exclusive")
        });
    let null_branch =
        m.get("anyOf").and_then(Value::as_array).is_some_and(|b| b.iter().any(|x| x == &json!({"type": "null"})));
    typed_null || null_branch
}

/// The JSON types a branch may take (`integer` counted as `number`); `None`
/// when it does not say.
fn family_of(t: &str) -> &'static str {
    match t {
        "integer" | "number" => "number",
        "string" => "string",
        "boolean" => "boolean",
        "null" => "null",
        "array" => "array",
        _ => "object",
    }
}

fn families(m: &Map<String, Value>) -> Option<Vec<&'static str>> {
    let family = family_of;
    let of_value = crate::check::type_name;
    if let Some(t) = type_names(m) {
        return Some(t.into_iter().map(family).collect());
    }
    if let Some(c) = m.get("const") {
        return Some(vec![of_value(c)]);
    }
    m.get("enum").and_then(Value::as_array).map(|e| e.iter().map(of_value).collect())
}

/// The single value a property schema allows, if it says so plainly.
fn tag_value(v: &Value) -> Option<&Value> {
    let m = v.as_object()?;
    if let Some(c) = m.get("const") {
        return Some(c);
    }
    match m.get("enum")?.as_array()?.as_slice() {
        [one] => Some(one),
        _ => None,
    }
}

/// Two values that are surely different under JSON equality (`1` equals `1.0`).
fn surely_different(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::String(x), Value::String(y)) => x != y,
        (Value::Bool(x), Value::Bool(y)) => x != y,
        (Value::Number(x), Value::Number(y)) => match (x.as_f64(), y.as_f64()) {
            (Some(x), Some(y)) => x != y,
            _ => false,
        },
        (Value::Null, Value::Null) | (Value::Array(_), Value::Array(_)) | (Value::Object(_), Value::Object(_)) => false,
        // Different JSON types are never equal.
        _ => true,
    }
}

fn disjoint(a: &Map<String, Value>, b: &Map<String, Value>, parent_objects: bool) -> bool {
    let (fa, fb) = (families(a), families(b));
    if let (Some(x), Some(y)) = (&fa, &fb) {
        if x.iter().all(|t| !y.contains(t)) {
            return true;
        }
    }
    let objects_only = |f: &Option<Vec<&str>>| parent_objects || f.as_deref() == Some(&["object"]);
    if !(objects_only(&fa) && objects_only(&fb)) {
        return false;
    }
    let required = |m: &Map<String, Value>| -> Vec<String> {
        m.get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).map(str::to_owned).collect())
            .unwrap_or_default()
    };
    let (ra, rb) = (required(a), required(b));
    ra.iter().filter(|t| rb.contains(t)).any(|tag| {
        let ta = a.get("properties").and_then(|p| p.get(tag)).and_then(tag_value);
        let tb = b.get("properties").and_then(|p| p.get(tag)).and_then(tag_value);
        matches!((ta, tb), (Some(x), Some(y)) if surely_different(x, y))
    })
}

/// The values of a `oneOf` whose branches are all `{"const": x}` (with only
/// annotations, and a `type` the value has, beside), when they surely
/// differ: then exactly one branch matches each value, as in an enum.
fn constants(v: &Value) -> Option<Vec<Value>> {
    let values: Vec<Value> = v
        .as_array()?
        .iter()
        .map(|b| {
            let m = b.as_object()?;
            let only_annotations =
                m.keys().all(|k| k == "const" || k == "type" || KEPT_ANNOTATIONS.contains(&k.as_str()));
            let c = m.get("const")?;
            let typed = match type_names(m) {
                None => true,
                Some(t) => families(&Map::from_iter([("const".to_owned(), c.clone())]))
                    .is_some_and(|f| f.iter().all(|x| t.iter().any(|n| family_of(n) == *x))),
            };
            (only_annotations
                && typed
                && !(c.as_f64().is_some_and(|f| f.fract() != 0.0) && type_names(m).is_some_and(|t| t == ["integer"])))
            .then(|| c.clone())
        })
        .collect::<Option<_>>()?;
    let distinct = values.iter().enumerate().all(|(i, a)| values.iter().skip(i + 1).all(|b| surely_different(a, b)));
    distinct.then_some(values)
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
                    let min = m.get("minLength").and_then(whole).unwrap_or(0);
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

/// The pattern of each encoding vouch asserts with `contentEncoding`, exact:
/// base64 padded; base64url with its padding optional.
fn encoding_pattern(encoding: &str) -> Option<&'static str> {
    match encoding {
        "base64" => Some("^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$"),
        "base64url" => Some("^(?:[A-Za-z0-9_-]{4})*(?:[A-Za-z0-9_-]{2}(?:==)?|[A-Za-z0-9_-]{3}=?)?$"),
        _ => None,
    }
}

/// JSON Schema makes `contentEncoding` an annotation; vouch asserts it. So
/// the plain export says it again as a pattern (in an `allOf`, beside any
/// pattern already there), and a validator that ignores the annotation
/// still refuses what the contract refuses. Values (`const`, `enum`…) are
/// not schemas and are left alone.
fn encodings_as_patterns(doc: &mut Value) {
    let mut stack = vec![doc];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(m) => {
                let pattern = m.get("contentEncoding").and_then(Value::as_str).and_then(encoding_pattern);
                if let Some(p) = pattern {
                    let extra = json!({"pattern": p});
                    match m.get_mut("allOf") {
                        Some(Value::Array(all)) => all.push(extra),
                        _ => {
                            m.insert("allOf".into(), json!([extra]));
                        }
                    }
                }
                for (k, child) in m.iter_mut() {
                    if !matches!(k.as_str(), "const" | "enum" | "default" | "examples" | "x-vouch") {
                        stack.push(child);
                    }
                }
            }
            Value::Array(a) => stack.extend(a.iter_mut()),
            _ => {}
        }
    }
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
    use crate::pattern::compile_pattern;

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
