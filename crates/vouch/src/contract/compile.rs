//! Schema document → arena of compiled nodes.
//!
//! Every keyword is either enforced, a known annotation, or a compile error:
//! a contract never silently drops a constraint.

use std::collections::HashMap;

use serde_json::{Map, Number, Value};

use super::error::{CompileError, CompileErrorKind as Kind};
use super::node::{self, Node, NodeId, Pattern, Types};
use super::policy::{self, RootPolicy};
use crate::check::format::Format;
use crate::check::pattern::compile_pattern;
use crate::pointer;

/// Deepest schema nesting compiled (the compiler recurses per level).
const MAX_SCHEMA_DEPTH: usize = 256;

/// Keywords that carry no constraint and are ignored everywhere.
const ANNOTATIONS: &[&str] =
    &["title", "description", "examples", "default", "$comment", "readOnly", "writeOnly", "deprecated"];

pub(crate) struct Compiled {
    pub nodes: Vec<Node>,
    pub root: NodeId,
    pub root_policy: RootPolicy,
}

struct Compiler<'a> {
    document: &'a Value,
    /// The dialect the root's `$schema` names (2020-12 when none).
    dialect: Dialect,
    /// Further annotation keywords the root's `x-vouch.annotations` names.
    annotations: Vec<String>,
    /// Every mistake found so far (all are reported at once).
    errors: Vec<CompileError>,
    root_id: Option<&'a str>,
    nodes: Vec<Node>,
    by_location: HashMap<String, NodeId>,
    depth: usize,
    root_policy: RootPolicy,
}

type Result<T> = std::result::Result<T, CompileError>;

pub(crate) fn compile(document: &Value) -> Result<Compiled> {
    let dialect = match document.get("$schema").and_then(Value::as_str) {
        Some(uri) => Dialect::from_uri(uri).unwrap_or(Dialect::Draft2020),
        None => Dialect::Draft2020,
    };
    let root_id = document.get("$id").or_else(|| document.get("id").filter(|_| dialect == Dialect::Draft4));
    let root_id = root_id.and_then(Value::as_str);
    let annotations = document
        .get("x-vouch")
        .and_then(|p| p.get("annotations"))
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default();
    let mut c = Compiler {
        document,
        dialect,
        annotations,
        errors: Vec::new(),
        root_id,
        nodes: Vec::new(),
        by_location: HashMap::new(),
        depth: 0,
        root_policy: RootPolicy::default(),
    };
    let root = c.node(document, String::new());
    let mut errors = std::mem::take(&mut c.errors);
    let root = match root {
        Ok(root) if errors.is_empty() => root,
        Ok(_) => return Err(CompileError::all(errors)),
        Err(e) => {
            errors.push(e);
            return Err(CompileError::all(errors));
        }
    };
    let nodes = c.nodes;
    let root_policy = c.root_policy;
    let mut nodes = nodes;
    for n in &mut nodes {
        n.exact_integers = !root_policy.big_integers;
        n.plain_keys = !root_policy.hazardous_keys;
    }
    mark_policy_below(&mut nodes);
    refuse_in_place_cycles(&nodes)?;
    policy::refuse_tested_only_policies(&nodes)?;
    let integers =
        if root_policy.big_integers { crate::read::Integers::Wide } else { crate::read::Integers::AsDoubles };
    policy::check_defaults(&nodes, integers)?;
    nodes.iter_mut().for_each(Node::fold_unevaluated);
    Ok(Compiled { nodes, root, root_policy })
}

fn invalid(keyword: &str, location: &str, what: &str) -> CompileError {
    CompileError::new(Kind::InvalidValue, keyword, location, format!("must be {what}"))
}

fn non_negative(keyword: &str, location: &str, v: &Value) -> Result<u64> {
    match v {
        Value::Number(n) => n
            .as_u64()
            .or_else(|| n.as_f64().filter(|f| *f >= 0.0 && f.fract() == 0.0 && *f < 1.8e19).map(|f| f as u64))
            .ok_or_else(|| invalid(keyword, location, "a non-negative integer")),
        _ => Err(invalid(keyword, location, "a non-negative integer")),
    }
}

fn number(keyword: &str, location: &str, v: &Value) -> Result<Number> {
    match v {
        Value::Number(n) => Ok(n.clone()),
        _ => Err(invalid(keyword, location, "a number")),
    }
}

fn string_list(keyword: &str, location: &str, v: &Value) -> Result<Vec<String>> {
    let items = v.as_array().ok_or_else(|| invalid(keyword, location, "an array of unique strings"))?;
    let mut out: Vec<String> = Vec::with_capacity(items.len());
    for item in items {
        let s = item.as_str().ok_or_else(|| invalid(keyword, location, "an array of unique strings"))?;
        if out.iter().any(|o| o == s) {
            return Err(invalid(keyword, location, "an array of unique strings"));
        }
        out.push(s.to_owned());
    }
    Ok(out)
}

impl<'a> Compiler<'a> {
    /// Compile the schema at `location` (a canonical JSON Pointer), or return
    /// the node already compiled there.
    fn node(&mut self, schema: &'a Value, location: String) -> Result<NodeId> {
        crate::deeper(|| self.node_here(schema, location))
    }

    fn node_here(&mut self, schema: &'a Value, location: String) -> Result<NodeId> {
        if let Some(&id) = self.by_location.get(&location) {
            return Ok(id);
        }
        if self.depth >= MAX_SCHEMA_DEPTH {
            return Err(CompileError::new(
                Kind::TooDeep,
                "",
                &location,
                format!("the contract nests deeper than {MAX_SCHEMA_DEPTH} schemas"),
            ));
        }
        let id = self.nodes.len();
        self.nodes.push(Node { location: location.clone(), ..Node::default() });
        self.by_location.insert(location.clone(), id);
        self.depth += 1;
        let compiled = match schema {
            Value::Bool(b) => Ok(Node { location: location.clone(), never: !b, ..Node::default() }),
            Value::Object(map) => self.keywords(map, &location),
            _ => Err(CompileError::new(Kind::InvalidValue, "", &location, "a schema must be an object or a boolean")),
        };
        self.depth -= 1;
        let node = compiled?;
        if let Some(slot) = self.nodes.get_mut(id) {
            *slot = node;
        }
        Ok(id)
    }

    fn sub(&mut self, schema: &'a Value, location: &str, keyword: &str) -> Result<NodeId> {
        self.node(schema, pointer::join(location, keyword))
    }

    fn sub_list(&mut self, v: &'a Value, location: &str, keyword: &str) -> Result<Vec<NodeId>> {
        let items = v
            .as_array()
            .filter(|a| !a.is_empty())
            .ok_or_else(|| invalid(keyword, location, "a non-empty array of schemas"))?;
        let base = pointer::join(location, keyword);
        items.iter().enumerate().map(|(i, s)| self.node(s, pointer::join(&base, &i.to_string()))).collect()
    }

    fn sub_map(&mut self, v: &'a Value, location: &str, keyword: &str) -> Result<Vec<(String, NodeId)>> {
        let map = v.as_object().ok_or_else(|| invalid(keyword, location, "an object of schemas"))?;
        let base = pointer::join(location, keyword);
        map.iter().map(|(k, s)| Ok((k.clone(), self.node(s, pointer::join(&base, k))?))).collect()
    }

    fn pattern(&self, keyword: &str, location: &str, source: &str) -> Result<Pattern> {
        compile_pattern(source)
            .map(|regex| Pattern { source: source.to_owned(), regex })
            .map_err(|why| CompileError::new(Kind::BadPattern, keyword, location, why))
    }

    fn keywords(&mut self, map: &'a Map<String, Value>, location: &str) -> Result<Node> {
        let mut n = Node { location: location.to_owned(), ..Node::default() };
        let at_root = location.is_empty();
        // Drafts up to 7 ignore every keyword beside `$ref`: a constraint there
        // would be dropped by the contract's own dialect, so it is refused.
        if self.dialect.ref_overrides() && map.contains_key("$ref") {
            for k in map.keys() {
                if !REF_SIBLINGS_ALLOWED.contains(&k.as_str()) && !self.is_annotation(k) {
                    self.errors.push(CompileError::new(
                        Kind::Unsupported,
                        k,
                        location,
                        format!(
                            "{} ignores every keyword beside `$ref`; to keep this one, write the `$ref` and it \
                             side by side in an `allOf`",
                            self.dialect.name()
                        ),
                    ));
                }
            }
        }
        for (keyword, v) in map {
            // Every keyword's error is kept, and the others still compiled:
            // a contract's author sees all its mistakes at once.
            if let Err(e) = self.keyword(&mut n, map, keyword, v, location, at_root) {
                self.errors.push(e);
            }
        }
        self.finish_node(n, map, location)
    }

    /// An annotation: a keyword that carries no constraint (`title`, any
    /// `x-` key but `x-vouch`, or one the contract names in
    /// `x-vouch.annotations`).
    fn is_annotation(&self, k: &str) -> bool {
        ANNOTATIONS.contains(&k)
            || (k.starts_with("x-") && k != "x-vouch")
            || self.annotations.iter().any(|a| a == k)
            || (k == "definitions" || k == "$defs")
    }

    #[allow(clippy::too_many_lines)]
    fn keyword(
        &mut self,
        n: &mut Node,
        map: &'a Map<String, Value>,
        keyword: &str,
        v: &'a Value,
        location: &str,
        at_root: bool,
    ) -> Result<()> {
        let k = keyword;
        {
            match k {
                "definitions" | "$defs" => {
                    // Compiled for their errors and so `$ref`s find them.
                    self.sub_map(v, location, k)?;
                }
                _ if self.is_annotation(k) => {}
                "id" if self.dialect == Dialect::Draft4 && at_root => {
                    if !v.is_string() {
                        return Err(invalid(k, location, "a URI string"));
                    }
                }
                "exclusiveMinimum" | "exclusiveMaximum" if v.is_boolean() && self.dialect == Dialect::Draft4 => {
                    // Draft-04: a boolean that makes `minimum`/`maximum` exclusive.
                    let bound = if k == "exclusiveMinimum" { "minimum" } else { "maximum" };
                    if v.as_bool() == Some(true) {
                        let Some(limit) = map.get(bound) else {
                            return Err(invalid(k, location, &format!("beside `{bound}` (draft-04)")));
                        };
                        let limit = number(bound, location, limit)?;
                        if k == "exclusiveMinimum" {
                            n.exclusive_minimum = Some(limit);
                        } else {
                            n.exclusive_maximum = Some(limit);
                        }
                    }
                }
                "minimum" | "maximum"
                    if self.dialect == Dialect::Draft4
                        && map
                            .get(if k == "minimum" { "exclusiveMinimum" } else { "exclusiveMaximum" })
                            .and_then(Value::as_bool)
                            == Some(true) =>
                {
                    // Made exclusive by its draft-04 boolean, compiled there.
                    number(k, location, v)?;
                }
                "items" if v.is_array() && !self.dialect.items_array() => {
                    return Err(invalid(
                        k,
                        location,
                        "a schema (in 2020-12 a list of item schemas is `prefixItems`; the array form is 2019-09 and earlier: name that draft in `$schema`)",
                    ));
                }
                "items" if v.is_array() && self.dialect.items_array() => {
                    n.prefix_items = self.sub_list(v, location, k)?;
                    if let Some(rest) = map.get("additionalItems") {
                        n.items = Some(self.sub(rest, location, "additionalItems")?);
                    }
                }
                "additionalItems" if self.dialect.items_array() => {
                    // With `items` an array it is the schema of the rest (compiled
                    // there); otherwise it has no effect in its draft.
                    if !map.get("items").is_some_and(Value::is_array) {
                        self.sub(v, location, k)?;
                    }
                }
                "dependencies" if self.dialect.dependencies() => {
                    let deps = v.as_object().ok_or_else(|| invalid(k, location, "an object"))?;
                    let base = pointer::join(location, k);
                    for (name, dep) in deps {
                        if dep.is_array() {
                            n.dependent_required.push((name.clone(), string_list(k, location, dep)?));
                        } else {
                            let id = self.node(dep, pointer::join(&base, name))?;
                            n.dependent_schemas.push((name.clone(), id));
                        }
                    }
                }
                "$schema" if at_root || v.as_str().and_then(Dialect::from_uri) == Some(self.dialect) => {
                    // At the root it names the dialect; below, only the same one may stand.
                    let known = v.as_str().is_some_and(|uri| Dialect::from_uri(uri).is_some());
                    if !known {
                        return Err(CompileError::new(
                            Kind::Unsupported,
                            k,
                            location,
                            "vouch reads JSON Schema 2020-12 (or the earlier official drafts); a custom metaschema could change what keywords mean",
                        ));
                    }
                }
                "$id" if at_root => {
                    if !v.is_string() {
                        return Err(invalid(k, location, "a URI string"));
                    }
                }
                "$schema" => return Err(CompileError::new(
                    Kind::Unsupported,
                    k,
                    location,
                    "below the root, only the root's own dialect may be named: another would change what keywords mean",
                )),
                "$id" => {
                    return Err(CompileError::new(
                        Kind::Unsupported,
                        k,
                        location,
                        "only allowed at the contract's root: vouch resolves references within one document",
                    ))
                }
                "$ref" => n.reference = Some(self.reference(v, location)?),
                "type" => n.types = Some(types(v, location)?),
                "enum" => {
                    let values = v.as_array().ok_or_else(|| invalid(k, location, "an array"))?;
                    n.enumeration = Some(values.clone());
                }
                "const" => n.constant = Some(v.clone()),
                "minimum" => n.minimum = Some(number(k, location, v)?),
                "maximum" => n.maximum = Some(number(k, location, v)?),
                "exclusiveMinimum" => n.exclusive_minimum = Some(number(k, location, v)?),
                "exclusiveMaximum" => n.exclusive_maximum = Some(number(k, location, v)?),
                "multipleOf" => {
                    let m = number(k, location, v)?;
                    if !m.as_f64().is_some_and(|f| f > 0.0) {
                        return Err(invalid(k, location, "a number greater than 0"));
                    }
                    n.multiple_of = Some(m);
                }
                "minLength" => n.min_length = Some(non_negative(k, location, v)?),
                "maxLength" => n.max_length = Some(non_negative(k, location, v)?),
                "pattern" => {
                    let source = v.as_str().ok_or_else(|| invalid(k, location, "a string"))?;
                    n.pattern = Some(self.pattern(k, location, source)?);
                }
                "format" => {
                    let name = v.as_str().ok_or_else(|| invalid(k, location, "a string"))?;
                    n.format = Some(Format::from_name(name).ok_or_else(|| {
                        CompileError::new(
                            Kind::UnknownFormat,
                            k,
                            location,
                            format!("vouch cannot assert the format {name:?}; use pattern, or one of the formats in docs/contract.md"),
                        )
                    })?);
                }
                "items" => n.items = Some(self.sub(v, location, k)?),
                "prefixItems" => n.prefix_items = self.sub_list(v, location, k)?,
                "minItems" => n.min_items = Some(non_negative(k, location, v)?),
                "maxItems" => n.max_items = Some(non_negative(k, location, v)?),
                "uniqueItems" => n.unique_items = v.as_bool().ok_or_else(|| invalid(k, location, "a boolean"))?,
                "contains" => {
                    n.contains = Some(self.sub(v, location, k)?);
                    n.contains_evaluates = self.dialect == Dialect::Draft2020;
                }
                "minContains" => n.min_contains = Some(non_negative(k, location, v)?),
                "maxContains" => n.max_contains = Some(non_negative(k, location, v)?),
                "properties" => {
                    n.properties = self.sub_map(v, location, k)?;
                }
                "required" => n.required = string_list(k, location, v)?,
                "patternProperties" => {
                    let map = v.as_object().ok_or_else(|| invalid(k, location, "an object of schemas"))?;
                    let base = pointer::join(location, k);
                    for (source, s) in map {
                        let p = self.pattern(k, location, source)?;
                        let id = self.node(s, pointer::join(&base, source))?;
                        n.pattern_properties.push((p, id));
                    }
                }
                "additionalProperties" => n.additional_properties = Some(self.sub(v, location, k)?),
                "propertyNames" => n.property_names = Some(self.sub(v, location, k)?),
                "unevaluatedProperties" => n.unevaluated_properties = Some(self.sub(v, location, k)?),
                "unevaluatedItems" => n.unevaluated_items = Some(self.sub(v, location, k)?),
                "minProperties" => n.min_properties = Some(non_negative(k, location, v)?),
                "maxProperties" => n.max_properties = Some(non_negative(k, location, v)?),
                "dependentRequired" => {
                    let map = v.as_object().ok_or_else(|| invalid(k, location, "an object of string arrays"))?;
                    for (name, list) in map {
                        n.dependent_required.push((name.clone(), string_list(k, location, list)?));
                    }
                }
                "dependentSchemas" => n.dependent_schemas = self.sub_map(v, location, k)?,
                "allOf" => n.all_of = self.sub_list(v, location, k)?,
                "anyOf" => n.any_of = self.sub_list(v, location, k)?,
                "oneOf" => n.one_of = self.sub_list(v, location, k)?,
                "not" => n.not = Some(self.sub(v, location, k)?),
                "if" => n.if_ = Some(self.sub(v, location, k)?),
                "then" => n.then_ = Some(self.sub(v, location, k)?),
                "else" => n.else_ = Some(self.sub(v, location, k)?),
                "x-vouch" => {} // after the constraints, which it is checked against
                _ => {
                    let kind = if UNSUPPORTED.contains(&k) { Kind::Unsupported } else { Kind::UnknownKeyword };
                    let why = if matches!(k, "dependencies" | "additionalItems") {
                        format!(
                            "a keyword of earlier drafts, gone from {}: use {} or name the draft in `$schema`",
                            self.dialect.name(),
                            if k == "dependencies" {
                                "dependentRequired / dependentSchemas"
                            } else {
                                "prefixItems with items"
                            }
                        )
                    } else if kind == Kind::Unsupported {
                        "vouch does not enforce this keyword, and will not compile a contract that would silently ignore it"
                            .to_owned()
                    } else {
                        let hint = did_you_mean(k).map(|m| format!(" (did you mean `{m}`?)")).unwrap_or_default();
                        format!(
                            "unknown keyword{hint}: vouch will not compile a contract with a keyword it would silently \
                             ignore (an annotation of your own: an `x-` name, or list it in the root's \
                             `x-vouch.annotations`)"
                        )
                    };
                    return Err(CompileError::new(kind, k, location, why));
                }
            }
        }
        Ok(())
    }

    fn finish_node(&mut self, mut n: Node, map: &'a Map<String, Value>, location: &str) -> Result<Node> {
        n.property_index = node::PropertyIndex::new(&n.properties, &n.required);
        n.required_all_declared = n.required.iter().all(|r| n.property_index.contains_key(r));
        // `then`/`else` without `if`, and min/maxContains without `contains`,
        // have no effect in JSON Schema; keep that meaning.
        if n.if_.is_none() {
            n.then_ = None;
            n.else_ = None;
        }
        if n.contains.is_none() {
            n.min_contains = None;
            n.max_contains = None;
        }
        if let Some(v) = map.get("x-vouch") {
            let (node_policy, root) =
                policy::parse(v, map, &n, location, &mut |when: &'a Value, at: String| self.node(when, at))?;
            n.policy = node_policy.map(Box::new);
            if let Some(root) = root {
                self.root_policy = root;
            }
        }
        Ok(n)
    }

    /// Resolve a `$ref` within this document and compile its target.
    fn reference(&mut self, v: &'a Value, location: &str) -> Result<NodeId> {
        let r = v.as_str().ok_or_else(|| invalid("$ref", location, "a string"))?;
        // A reference through the root's own `$id` is still local.
        let local = match (r.split_once('#'), self.root_id) {
            (Some(("", fragment)), _) => Some(fragment),
            (Some((base, fragment)), Some(id)) if base == id.trim_end_matches('#') => Some(fragment),
            (None, Some(id)) if r == id.trim_end_matches('#') => Some(""),
            _ => None,
        };
        let Some(fragment) = local else {
            return Err(CompileError::new(
                Kind::RemoteRef,
                "$ref",
                location,
                format!("{r:?} is not in this document; vouch resolves only local references like \"#/$defs/name\""),
            ));
        };
        let unresolved =
            || CompileError::new(Kind::UnresolvedRef, "$ref", location, format!("{r:?} points to nothing"));
        let decoded = pointer::percent_decode(fragment).ok_or_else(unresolved)?;
        if !decoded.is_empty() && !decoded.starts_with('/') {
            return Err(CompileError::new(
                Kind::Unsupported,
                "$ref",
                location,
                "anchor references (#name) are not supported; use a JSON Pointer",
            ));
        }
        let tokens = pointer::tokens(&decoded).ok_or_else(unresolved)?;
        let mut target = self.document;
        let mut canonical = String::new();
        for t in &tokens {
            target = match target {
                Value::Object(m) => m.get(t.as_str()),
                Value::Array(a) => t.parse::<usize>().ok().and_then(|i| a.get(i)),
                _ => None,
            }
            .ok_or_else(unresolved)?;
            canonical.push('/');
            pointer::push_escaped(&mut canonical, t);
        }
        self.node(target, canonical)
    }
}

/// The dialect a contract is read in, named by its root's `$schema`
/// (2020-12 when none). Each keyword has its own draft's meaning, compiled
/// to the same nodes: draft-04's boolean `exclusiveMinimum`, the array form
/// of `items` with `additionalItems` (up to 2019-09), `dependencies` (up to
/// draft-07), draft-04's `id`. Keywords a later draft added keep their
/// meaning in an earlier one (an author who writes `const` means it), so
/// nothing is dropped; where the draft itself drops a keyword (everything
/// beside `$ref` up to draft-07), the contract does not compile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    Draft4,
    Draft6,
    Draft7,
    Draft2019,
    Draft2020,
}

impl Dialect {
    fn from_uri(uri: &str) -> Option<Self> {
        let uri = uri.trim_end_matches('#');
        let rest = uri.strip_prefix("https://").or_else(|| uri.strip_prefix("http://"))?;
        Some(match rest {
            "json-schema.org/draft/2020-12/schema" => Self::Draft2020,
            "json-schema.org/draft/2019-09/schema" => Self::Draft2019,
            "json-schema.org/draft-07/schema" => Self::Draft7,
            "json-schema.org/draft-06/schema" => Self::Draft6,
            "json-schema.org/draft-04/schema" => Self::Draft4,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            Self::Draft4 => "draft-04",
            Self::Draft6 => "draft-06",
            Self::Draft7 => "draft-07",
            Self::Draft2019 => "draft 2019-09",
            Self::Draft2020 => "draft 2020-12",
        }
    }

    /// `items` may be an array (tuple validation), with `additionalItems`.
    fn items_array(self) -> bool {
        self != Self::Draft2020
    }

    /// `dependencies` (split into `dependentRequired`/`dependentSchemas` in 2019-09).
    fn dependencies(self) -> bool {
        matches!(self, Self::Draft4 | Self::Draft6 | Self::Draft7)
    }

    /// Every keyword beside `$ref` is ignored.
    fn ref_overrides(self) -> bool {
        matches!(self, Self::Draft4 | Self::Draft6 | Self::Draft7)
    }
}

/// What may stand beside `$ref` up to draft-07: keywords that constrain nothing.
const REF_SIBLINGS_ALLOWED: &[&str] = &["$ref", "$schema", "$id", "id", "definitions", "$defs", "x-vouch", "$comment"];

/// Every keyword vouch knows, for "did you mean" hints.
const KNOWN_KEYWORDS: &[&str] = &[
    "type",
    "enum",
    "const",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "items",
    "prefixItems",
    "minItems",
    "maxItems",
    "uniqueItems",
    "contains",
    "minContains",
    "maxContains",
    "properties",
    "required",
    "patternProperties",
    "additionalProperties",
    "propertyNames",
    "minProperties",
    "maxProperties",
    "dependentRequired",
    "dependentSchemas",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "$ref",
    "$defs",
    "definitions",
    "$schema",
    "$id",
    "title",
    "description",
    "examples",
    "default",
    "$comment",
    "readOnly",
    "writeOnly",
    "deprecated",
    "x-vouch",
    "additionalItems",
    "dependencies",
    "unevaluatedProperties",
    "unevaluatedItems",
];

/// Whether a name is a keyword vouch enforces (or refuses), never an annotation.
pub(crate) fn is_keyword(name: &str) -> bool {
    (KNOWN_KEYWORDS.contains(&name) && !ANNOTATIONS.contains(&name)) || UNSUPPORTED.contains(&name)
}

/// The known keyword nearest a misspelt one (at most two edits, or a
/// difference of case), for a hint.
fn did_you_mean(unknown: &str) -> Option<&'static str> {
    let lower = unknown.to_lowercase();
    let mut best: Option<(usize, &'static str)> = None;
    for k in KNOWN_KEYWORDS {
        if *k == unknown {
            return None;
        }
        let d = if k.to_lowercase() == lower { 0 } else { edit_distance(&lower, &k.to_lowercase()) };
        let limit = if k.len() > 6 { 2 } else { 1 };
        if d <= limit && best.is_none_or(|(b, _)| d < b) {
            best = Some((d, k));
        }
    }
    best.map(|(_, k)| k)
}

/// Levenshtein distance with adjacent transpositions counting one, on short keyword names.
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    if a.len().abs_diff(b.len()) > 2 || a.len() > 64 || b.len() > 64 {
        return usize::MAX;
    }
    let width = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * width];
    let at = |i: usize, j: usize| i * width + j;
    for i in 0..=a.len() {
        if let Some(c) = d.get_mut(at(i, 0)) {
            *c = i;
        }
    }
    for j in 0..=b.len() {
        if let Some(c) = d.get_mut(at(0, j)) {
            *c = j;
        }
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a.get(i - 1) != b.get(j - 1));
            let get = |i: usize, j: usize| d.get(at(i, j)).copied().unwrap_or(usize::MAX - 2);
            let mut v = (get(i - 1, j) + 1).min(get(i, j - 1) + 1).min(get(i - 1, j - 1) + cost);
            if i > 1 && j > 1 && a.get(i - 1) == b.get(j - 2) && a.get(i - 2) == b.get(j - 1) {
                v = v.min(get(i - 2, j - 2) + 1);
            }
            if let Some(c) = d.get_mut(at(i, j)) {
                *c = v;
            }
        }
    }
    d.get(at(a.len(), b.len())).copied().unwrap_or(usize::MAX)
}

/// Keywords of JSON Schema that vouch knows but does not enforce.
const UNSUPPORTED: &[&str] = &[
    "$anchor",
    "$dynamicRef",
    "$dynamicAnchor",
    "$recursiveRef",
    "$recursiveAnchor",
    "$vocabulary",
    "contentEncoding",
    "contentMediaType",
    "contentSchema",
    "dependencies",
    "additionalItems",
];

fn types(v: &Value, location: &str) -> Result<Types> {
    let one = |name: &Value| -> Result<Types> {
        name.as_str()
            .and_then(Types::from_name)
            .ok_or_else(|| invalid("type", location, "a JSON type name or an array of them"))
    };
    match v {
        Value::String(_) => one(v),
        Value::Array(names) if !names.is_empty() => {
            let mut set = Types::default();
            for name in names {
                let t = one(name)?;
                if set.contains(t) {
                    return Err(invalid("type", location, "an array of unique JSON type names"));
                }
                set = set.union(t);
            }
            Ok(set)
        }
        _ => Err(invalid("type", location, "a JSON type name or a non-empty array of them")),
    }
}

/// Set `policy_below` on every node from which the kept value reaches a
/// policy. A fixpoint, because recursive schemas make the graph cyclic.
fn mark_policy_below(nodes: &mut [Node]) {
    for n in nodes.iter_mut() {
        n.policy_below = n.policy.is_some();
    }
    loop {
        let below: Vec<bool> = nodes.iter().map(|n| n.policy_below).collect();
        let mut changed = false;
        for n in nodes.iter_mut() {
            if !n.policy_below && n.kept().any(|c| below.get(c).copied().unwrap_or(false)) {
                n.policy_below = true;
                changed = true;
            }
        }
        if !changed {
            return;
        }
    }
}

/// Refuse schemas that apply to the same value in a loop (`{"$ref": "#"}`),
/// which would never terminate. Iterative three-colour depth-first search.
fn refuse_in_place_cycles(nodes: &[Node]) -> Result<()> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Open,
        Done,
    }
    let mut mark = vec![Mark::New; nodes.len()];
    for start in 0..nodes.len() {
        if mark.get(start) != Some(&Mark::New) {
            continue;
        }
        let mut stack: Vec<(NodeId, Vec<NodeId>)> = Vec::new();
        let next_of = |id: NodeId| nodes.get(id).map(|n| n.in_place().collect::<Vec<_>>()).unwrap_or_default();
        stack.push((start, next_of(start)));
        if let Some(m) = mark.get_mut(start) {
            *m = Mark::Open;
        }
        while let Some((id, pending)) = stack.last_mut() {
            let id = *id;
            match pending.pop() {
                Some(next) => match mark.get(next).copied() {
                    Some(Mark::New) => {
                        if let Some(m) = mark.get_mut(next) {
                            *m = Mark::Open;
                        }
                        stack.push((next, next_of(next)));
                    }
                    Some(Mark::Open) => {
                        let at = nodes.get(id).map(|n| n.location.as_str()).unwrap_or_default();
                        return Err(CompileError::new(
                            Kind::RefCycle,
                            "$ref",
                            at,
                            "this schema applies itself to the same value in a loop, which can never be decided",
                        ));
                    }
                    _ => {}
                },
                None => {
                    if let Some(m) = mark.get_mut(id) {
                        *m = Mark::Done;
                    }
                    stack.pop();
                }
            }
        }
    }
    Ok(())
}
