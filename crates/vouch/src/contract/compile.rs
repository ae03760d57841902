//! Schema document → arena of compiled nodes.
//!
//! Every keyword is either enforced, a known annotation, or a compile error:
//! a contract never silently drops a constraint.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Number, Value};

use super::error::{CompileError, CompileErrorKind as Kind};
use super::keywords::*;
use super::policy::{self, RootPolicy};
use super::resolve::{self, Index, RECURSIVE};
use crate::format::Format;
use crate::node::{self, Node, NodeId, Pattern, Types};
use crate::pattern::{compile_pattern_within, CONTRACT_PATTERNS_LIMIT};
use crate::pointer;

/// Deepest schema nesting compiled (the compiler recurses per level).
const MAX_SCHEMA_DEPTH: usize = 256;

/// Most nodes compiled for dynamic contexts beyond the plain one: each
/// `$dynamicRef`/`$recursiveRef` whose target the dynamic scope can change
/// compiles its schemas once per scope that leads elsewhere, and a contract
/// whose scopes multiply past this is refused rather than grown without end.
const MAX_SPECIALIZED_NODES: usize = 4096;

/// Most dynamic anchor names `$dynamicRef`s may use: each is part of every
/// dynamic context, so their number bounds the work per compiled schema.
const MAX_DYNAMIC_NAMES: usize = 64;

/// How the refusal for [`MAX_SPECIALIZED_NODES`] begins.
const SPECIALIZED_TOO_MANY: &str = "the dynamic references need more than";

pub(crate) struct Compiled {
    pub nodes: Vec<Node>,
    pub root: NodeId,
    pub root_policy: RootPolicy,
    /// Unknown keywords read as annotations: (location, keyword).
    pub unknown: Vec<(String, String)>,
    /// What the compiled patterns are charged, in bytes.
    pub patterns_size: usize,
}

struct Compiler<'a> {
    /// Every resource, anchor and base URI of the contract and the
    /// documents supplied with it.
    index: Index<'a>,
    /// The dialect the root's `$schema` names (2020-12 when none).
    dialect: Dialect,
    /// Further annotation keywords the root's `x-vouch.annotations` names.
    annotations: Vec<String>,
    /// Every mistake found so far (all are reported at once).
    errors: Vec<CompileError>,
    /// Unknown keywords read as annotations: (location, keyword).
    unknown: Vec<(String, String)>,
    /// Where the root's `$ref` points, when the root is a local `$ref`.
    root_alias: Option<String>,
    /// The contract's own document.
    document: &'a Value,
    nodes: Vec<Node>,
    /// Compiled nodes by location and dynamic context.
    by_location: HashMap<(String, usize), NodeId>,
    depth: usize,
    root_policy: RootPolicy,
    /// The dynamic context of the schema being compiled: an index into
    /// `contexts`, 0 being the empty one.
    context: usize,
    /// Dynamic contexts, interned: for each dynamic anchor name some
    /// `$dynamicRef` uses, the outermost schema in scope declaring it (and,
    /// for 2019-09, under [`RECURSIVE`] the outermost resource root with
    /// `$recursiveAnchor: true`). Sorted by name.
    contexts: Vec<Vec<(String, String)>>,
    context_ids: HashMap<Vec<(String, String)>, usize>,
    /// Locations compiled at least once, and the nodes compiled again at one
    /// of them for another dynamic context.
    compiled_at: HashSet<String>,
    specialized: usize,
    /// What the patterns compiled so far are charged (see
    /// [`CONTRACT_PATTERNS_LIMIT`]).
    patterns_size: usize,
}

type Result<T> = std::result::Result<T, CompileError>;

/// Compile `document`, with `documents` (absolute URI, document) the ones
/// its references may lead to.
pub(crate) fn compile(document: &Value, documents: &[(String, Value)]) -> Result<Compiled> {
    let dialect = match document.get("$schema").and_then(Value::as_str) {
        Some(uri) => Dialect::from_uri(uri).unwrap_or(Dialect::Draft2020),
        None => Dialect::Draft2020,
    };
    let mut docs: Vec<(String, &Value)> = vec![(resolve::DEFAULT_BASE.to_owned(), document)];
    let mut errors = Vec::new();
    for (uri, doc) in documents {
        let (bare, fragment) = resolve::split_fragment(uri);
        if !resolve::is_absolute(uri) || fragment.is_some_and(|f| !f.is_empty()) {
            errors.push(CompileError::new(
                Kind::InvalidValue,
                "",
                uri,
                "a supplied document's URI must be absolute (a scheme, no fragment), like \"https://example.com/schemas/a.json\"",
            ));
            continue;
        }
        docs.push((resolve::resolve(bare, ""), doc));
    }
    if !errors.is_empty() {
        return Err(CompileError::all(errors));
    }
    let index = Index::build(&docs, dialect);
    for (keyword, location, uri) in &index.duplicates {
        errors.push(CompileError::new(
            Kind::InvalidValue,
            keyword,
            location,
            format!("{uri} is declared twice: a reference to it would be ambiguous"),
        ));
    }
    if index.dynamic_names > MAX_DYNAMIC_NAMES {
        errors.push(CompileError::new(
            Kind::Unsupported,
            "$dynamicAnchor",
            "",
            format!(
                "{} dynamic anchor names are used by `$dynamicRef`s; vouch compiles at most {MAX_DYNAMIC_NAMES}",
                index.dynamic_names
            ),
        ));
    }
    if !errors.is_empty() {
        return Err(CompileError::all(errors));
    }
    let annotations = policy::declared_annotations(document);
    let mut c = Compiler {
        index,
        dialect,
        annotations,
        errors: Vec::new(),
        unknown: Vec::new(),
        root_alias: root_alias(document),
        document,
        nodes: Vec::new(),
        by_location: HashMap::new(),
        depth: 0,
        root_policy: RootPolicy::default(),
        context: 0,
        contexts: vec![Vec::new()],
        context_ids: HashMap::from([(Vec::new(), 0)]),
        compiled_at: HashSet::new(),
        specialized: 0,
        patterns_size: 0,
    };
    let root = c.node(document, String::new());
    let mut errors = std::mem::take(&mut c.errors);
    // The bound on specialized nodes is said once, not by every schema past it.
    let mut bound_said = false;
    errors.retain(|e| {
        let bound = e.kind == Kind::Unsupported && e.message.starts_with(SPECIALIZED_TOO_MANY);
        let keep = !(bound && bound_said);
        bound_said |= bound;
        keep
    });
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
    let unknown = c.unknown;
    let patterns_size = c.patterns_size;
    let mut nodes = nodes;
    for n in &mut nodes {
        n.exact_integers = !root_policy.big_integers;
        n.plain_keys = !root_policy.hazardous_keys;
    }
    mark_policy_below(&mut nodes);
    refuse_in_place_cycles(&nodes)?;
    super::discriminator::resolve(&mut nodes)?;
    policy::refuse_tested_only_policies(&nodes)?;
    let integers =
        if root_policy.big_integers { crate::read::Integers::Wide } else { crate::read::Integers::AsDoubles };
    policy::check_defaults(&nodes, integers)?;
    nodes.iter_mut().for_each(Node::fold_unevaluated);
    Ok(Compiled { nodes, root, root_policy, unknown, patterns_size })
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
        let context = self.enter_context(&location);
        let key = (location, context);
        if let Some(&id) = self.by_location.get(&key) {
            return Ok(id);
        }
        let (location, _) = key;
        if self.depth >= MAX_SCHEMA_DEPTH {
            return Err(CompileError::new(
                Kind::TooDeep,
                "",
                &location,
                format!("the contract nests deeper than {MAX_SCHEMA_DEPTH} schemas"),
            ));
        }
        if !self.compiled_at.insert(location.clone()) {
            self.specialized += 1;
            if self.specialized > MAX_SPECIALIZED_NODES {
                let keyword = if self.dialect == Dialect::Draft2019 { "$recursiveRef" } else { "$dynamicRef" };
                return Err(CompileError::new(
                    Kind::Unsupported,
                    keyword,
                    &location,
                    format!(
                        "{SPECIALIZED_TOO_MANY} {MAX_SPECIALIZED_NODES} schemas compiled again for another dynamic \
                         scope: vouch does not compile contracts whose dynamic scopes multiply past that"
                    ),
                ));
            }
        }
        let id = self.nodes.len();
        self.nodes.push(Node { location: location.clone(), ..Node::default() });
        self.by_location.insert((location.clone(), context), id);
        let outer = std::mem::replace(&mut self.context, context);
        self.depth += 1;
        let compiled = match schema {
            Value::Bool(b) => Ok(Node { location: location.clone(), never: !b, ..Node::default() }),
            Value::Object(map) => self.keywords(map, &location),
            _ => Err(CompileError::new(Kind::InvalidValue, "", &location, "a schema must be an object or a boolean")),
        };
        self.depth -= 1;
        self.context = outer;
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

    fn pattern(&mut self, keyword: &str, location: &str, source: &str) -> Result<Pattern> {
        let room = CONTRACT_PATTERNS_LIMIT.saturating_sub(self.patterns_size);
        let (regex, charged) = compile_pattern_within(source, room)
            .map_err(|why| CompileError::new(Kind::BadPattern, keyword, location, why))?;
        self.patterns_size = self.patterns_size.saturating_add(charged);
        Ok(Pattern { source: source.to_owned(), regex })
    }

    fn keywords(&mut self, map: &'a Map<String, Value>, location: &str) -> Result<Node> {
        let mut n = Node { location: location.to_owned(), ..Node::default() };
        let at_root = location.is_empty();
        // Drafts up to 7 ignore every keyword beside `$ref`: a constraint there
        // would be dropped by the contract's own dialect, so it is refused.
        if self.dialect.ref_overrides() && map.contains_key("$ref") {
            for k in map.keys() {
                // Unknown keywords there are annotations (or near misses, refused below).
                if !REF_SIBLINGS_ALLOWED.contains(&k.as_str()) && !self.is_annotation(k) && is_keyword(k) {
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
        let dynamic = match self.dialect {
            Dialect::Draft2020 => map.get("$dynamicRef").map(|v| ("$dynamicRef", v)),
            Dialect::Draft2019 => map.get("$recursiveRef").map(|v| ("$recursiveRef", v)),
            _ => None,
        };
        if let Some((keyword, v)) = dynamic {
            match self.dynamic_reference(keyword, v, location) {
                // Beside a `$ref` it applies in place all the same.
                Ok(id) if n.reference.is_some() => n.all_of.push(id),
                Ok(id) => n.reference = Some(id),
                Err(e) => self.errors.push(e),
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
            // A leading underscore is the common way to switch a keyword off
            // (`_format`, `_uniqueItems`) or mark a key private (`__tags`).
            || k.starts_with('_')
            || self.annotations.iter().any(|a| a == k)
            || (k == "definitions" || k == "$defs")
    }

    /// A keyword vouch does not enforce. JSON Schema reads an unknown keyword
    /// as an annotation, and so does vouch — unless it could be a mistake that
    /// drops a constraint: a near miss of a keyword vouch enforces
    /// (`maxmimum`, `additionalPropeties`), a constraint of another vocabulary
    /// (`nullable`, draft-03's `divisibleBy`, ajv's `formatMaximum`), or a
    /// schema written where a property was meant (`{"type": "object",
    /// "name": {"type": "string"}}`). Those are compile errors; every other
    /// unknown keyword is recorded (see `Contract::unknown_keywords`).
    fn unknown_keyword(&mut self, k: &str, v: &Value, location: &str) -> Result<()> {
        if matches!(k, "dependencies" | "additionalItems") {
            let why = format!(
                "a keyword of earlier drafts, gone from {}: use {} or name the draft in `$schema`",
                self.dialect.name(),
                if k == "dependencies" { "dependentRequired / dependentSchemas" } else { "prefixItems with items" }
            );
            return Err(CompileError::new(Kind::Unsupported, k, location, why));
        }
        if UNSUPPORTED.contains(&k) {
            return Err(CompileError::new(
                Kind::Unsupported,
                k,
                location,
                "vouch does not enforce this keyword, and will not compile a contract that would silently ignore it",
            ));
        }
        if let Some((_, why)) = OTHER_VOCABULARIES.iter().find(|(name, _)| *name == k) {
            return Err(CompileError::new(Kind::Unsupported, k, location, *why));
        }
        if TOOL_ANNOTATIONS.contains(&k) {
            self.unknown.push((location.to_owned(), k.to_owned()));
            return Ok(());
        }
        let own = " (an annotation of your own that looks like one: list it in the root's `x-vouch.annotations`)";
        if let Some(m) = near_enforced(k) {
            return Err(CompileError::new(
                Kind::UnknownKeyword,
                k,
                location,
                format!(
                    "unknown keyword (did you mean `{m}`?): a misspelt keyword would silently drop its constraint{own}"
                ),
            ));
        }
        if looks_like_a_schema(v) {
            return Err(CompileError::new(
                Kind::UnknownKeyword,
                k,
                location,
                format!(
                    "unknown keyword whose value is a schema: did you mean a property {k:?} (under `properties`)?{own}"
                ),
            ));
        }
        self.unknown.push((location.to_owned(), k.to_owned()));
        Ok(())
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
                "id" if self.dialect == Dialect::Draft4 => {
                    // A base URI (or a plain-name anchor), read by the index.
                    if !v.is_string() {
                        return Err(invalid(k, location, "a URI string"));
                    }
                }
                "$anchor" | "$dynamicAnchor"
                    if self.dialect.anchor_keyword() && (k == "$anchor" || self.dialect == Dialect::Draft2020) =>
                {
                    if !v.as_str().is_some_and(resolve::is_anchor_name) {
                        return Err(invalid(
                            k,
                            location,
                            "a plain name (a letter or `_`, then letters, digits, `-`, `_`, `.`)",
                        ));
                    }
                }
                "$recursiveAnchor" if self.dialect == Dialect::Draft2019 => {
                    if !v.is_boolean() {
                        return Err(invalid(k, location, "a boolean"));
                    }
                }
                // Compiled with the node's other keywords, once they are.
                "$dynamicRef" if self.dialect == Dialect::Draft2020 => {}
                "$recursiveRef" if self.dialect == Dialect::Draft2019 => {}
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
                "$id" if at_root || self.dialect != Dialect::Draft4 => {
                    let id = v.as_str().ok_or_else(|| invalid(k, location, "a URI string"))?;
                    let fragment = resolve::split_fragment(id).1.unwrap_or_default();
                    if self.dialect.anchor_keyword() && !fragment.is_empty() {
                        return Err(invalid(k, location, "a URI without a fragment (name a location with `$anchor`)"));
                    }
                }
                "$schema" if !location.starts_with('/') && location.ends_with('#') => {
                    return Err(CompileError::new(
                        Kind::Unsupported,
                        k,
                        location,
                        format!(
                            "this supplied document names another dialect than the contract's ({}): vouch reads \
                             every document in the contract's own, and another would change what keywords mean",
                            self.dialect.name()
                        ),
                    ))
                }
                "$schema" => return Err(CompileError::new(
                    Kind::Unsupported,
                    k,
                    location,
                    "below the root, only the root's own dialect may be named: another would change what keywords mean",
                )),
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
                    n.format = self.format(n, map, name, location)?;
                }
                "contentEncoding" => {
                    let format = match v.as_str() {
                        Some("base64") => Format::Base64,
                        Some("base64url") => Format::Base64Url,
                        _ => {
                            return Err(CompileError::new(
                                Kind::Unsupported,
                                k,
                                location,
                                "vouch asserts the encodings `base64` and `base64url`, not this one",
                            ))
                        }
                    };
                    let id = self.synthetic(Node { format: Some(format), ..Node::default() }, location, k);
                    n.all_of.push(id);
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
                "allOf" => {
                    // Extended: `format` and `contentEncoding` may have added nodes here.
                    let list = self.sub_list(v, location, k)?;
                    n.all_of.extend(list);
                }
                "anyOf" => n.any_of = self.sub_list(v, location, k)?,
                "oneOf" => n.one_of = self.sub_list(v, location, k)?,
                "not" => n.not = Some(self.sub(v, location, k)?),
                "if" => n.if_ = Some(self.sub(v, location, k)?),
                "then" => n.then_ = Some(self.sub(v, location, k)?),
                "else" => n.else_ = Some(self.sub(v, location, k)?),
                "discriminator" => n.discriminator = Some(Box::new(self.discriminator(v, location)?)),
                "nullable" => {
                    // Applied once `type` is known, in `finish_node`.
                    v.as_bool().ok_or_else(|| invalid(k, location, "a boolean (OpenAPI 3.0)"))?;
                }
                "x-vouch" => {} // after the constraints, which it is checked against
                _ => return self.unknown_keyword(k, v, location),
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
        if map.get("nullable") == Some(&Value::Bool(true)) {
            // OpenAPI 3.0: `nullable` adds null to the types `type` allows
            // (without `type`, null is allowed already; an `enum` must list it).
            n.types = n.types.map(|t| t.union(Types::NULL));
        }
        if let Some(v) = map.get("x-vouch") {
            // A root that is only a `$ref` (zod-to-json-schema with a name)
            // hands its root policy to the schema it names.
            let at_root = location.is_empty()
                || (self.root_alias.as_deref() == Some(location) && self.document.get("x-vouch").is_none());
            let (node_policy, root) =
                policy::parse(v, map, &n, location, at_root, &mut |when: &'a Value, at: String| self.node(when, at))?;
            n.policy = node_policy.map(Box::new);
            if let Some(root) = root {
                self.root_policy = root;
            }
        }
        Ok(n)
    }

    /// A node the compiler adds for a keyword that constrains through
    /// others (`format: int32` is a range), applied beside its node in `allOf`.
    fn synthetic(&mut self, mut node: Node, location: &str, keyword: &str) -> NodeId {
        node.location = pointer::join(location, keyword);
        let id = self.nodes.len();
        self.nodes.push(node);
        id
    }

    /// `format`: the string format vouch asserts; the OpenAPI numeric
    /// formats as their ranges; Zod's `starts_with`/`ends_with`/`includes`
    /// through the `pattern` that carries their argument; or refused.
    fn format(
        &mut self,
        n: &mut Node,
        map: &'a Map<String, Value>,
        name: &str,
        location: &str,
    ) -> Result<Option<Format>> {
        let k = "format";
        let refuse = |why: &str| Err(CompileError::new(Kind::UnknownFormat, k, location, why.to_owned()));
        let range = |min: Number, max: Number, integer: bool| Node {
            minimum: Some(min),
            maximum: Some(max),
            multiple_of: integer.then(|| Number::from(1)),
            ..Node::default()
        };
        let numeric = match name {
            "int32" => Some(range(Number::from(i32::MIN), Number::from(i32::MAX), true)),
            "int64" => Some(range(Number::from(i64::MIN), Number::from(i64::MAX), true)),
            "float" => {
                let max = f64::from(f32::MAX);
                Number::from_f64(max).zip(Number::from_f64(-max)).map(|(max, min)| range(min, max, false))
            }
            "double" => Some(Node::default()), // every JSON number vouch reads is a finite double
            _ => None,
        };
        if let Some(node) = numeric {
            let on_strings = map.get("type").is_some_and(|t| match t {
                Value::String(s) => s == "string",
                Value::Array(a) => a.iter().any(|t| t == "string"),
                _ => false,
            });
            if on_strings {
                return refuse(&format!(
                    "{name:?} on a string (a number written as text) is not asserted by vouch; use a pattern, or make it a number"
                ));
            }
            let id = self.synthetic(node, location, k);
            n.all_of.push(id);
            return Ok(None);
        }
        if matches!(name, "starts_with" | "ends_with" | "includes") {
            // Zod 4 names the check and writes its argument as the pattern beside it,
            // or, with more than one such check, as patterns in the `allOf` beside it.
            let in_all_of = match map.get("allOf") {
                Some(Value::Array(parts)) => parts.iter().any(|p| p.get("pattern").is_some()),
                _ => false,
            };
            return if map.contains_key("pattern") || in_all_of {
                Ok(None)
            } else {
                refuse(&format!("Zod's {name:?} carries its argument in a `pattern` beside it, and there is none"))
            };
        }
        if let Some(f) = Format::from_name(name) {
            return Ok(Some(f));
        }
        let why = match name {
            "emoji" => "vouch does not assert \"emoji\" (Zod's definition rests on Unicode emoji properties of its engine's version)".to_owned(),
            "color" => "\"color\" means different things to different tools (a #rrggbb hex, CSS colour names, rgb()…): use a pattern".to_owned(),
            "name-email" => "Pydantic's \"name-email\" (`Name <address>`) is not asserted: use \"email\", or a pattern".to_owned(),
            "multi-host-uri" => "Pydantic's \"multi-host-uri\" (several hosts in one URL) is not asserted: use \"uri\" per host".to_owned(),
            "file-path" | "directory-path" | "new-path" | "socket-path" => {
                format!("{name:?} asks whether a path exists on some disk, which is no property of a reply: use \"path\"")
            }
            "json-string" => "\"json-string\" is not asserted: give the value as JSON, not as text".to_owned(),
            "regex" => "\"regex\" is not asserted: JSON Schema means an ECMA-262 pattern, Pydantic's `Pattern` Python's `re`, and the two dialects differ".to_owned(),
            "fraction" => "Pydantic's \"fraction\" is not asserted: write the number, or a pattern".to_owned(),
            "zoneinfo" => "\"zoneinfo\" (an IANA time zone name) is not asserted: the zone database changes; use an enum of the zones you accept".to_owned(),
            _ => format!("vouch cannot assert the format {name:?}; use pattern, or one of the formats in docs/contract.md"),
        };
        refuse(&why)
    }

    /// OpenAPI's `discriminator`: the tag's name, and the mapping's targets
    /// compiled (its consistency with the union is checked once every node
    /// is compiled, in [`super::discriminator::resolve`]).
    fn discriminator(&mut self, v: &'a Value, location: &str) -> Result<node::Discriminator> {
        let k = "discriminator";
        let shape = "an object with a string `propertyName` and an optional `mapping` of tag to schema reference";
        let map = v.as_object().ok_or_else(|| invalid(k, location, shape))?;
        let property = map.get("propertyName").and_then(Value::as_str).ok_or_else(|| invalid(k, location, shape))?;
        let mut mapping = Vec::new();
        for (key, _) in map {
            if !matches!(key.as_str(), "propertyName" | "mapping") && !key.starts_with("x-") {
                return Err(CompileError::new(
                    Kind::UnknownKeyword,
                    k,
                    location,
                    format!("unknown member {key:?} of the discriminator (it has `propertyName` and `mapping`)"),
                ));
            }
        }
        if let Some(m) = map.get("mapping") {
            let m = m.as_object().ok_or_else(|| invalid(k, location, shape))?;
            for (tag, target) in m {
                let name = target.as_str().ok_or_else(|| invalid(k, location, shape))?;
                // OpenAPI lets a mapping name a schema by its bare name.
                let id = if name.contains(['#', '/', ':']) {
                    self.reference(target, location)?
                } else {
                    let found = ["$defs", "definitions"]
                        .iter()
                        .find_map(|defs| self.document.get(defs).and_then(|d| d.get(name)).map(|s| (defs, s)));
                    let Some((defs, schema)) = found else {
                        return Err(CompileError::new(
                            Kind::UnresolvedRef,
                            k,
                            location,
                            format!(
                                "mapping {tag:?} names {name:?}, which is not in the root's `$defs` or `definitions`"
                            ),
                        ));
                    };
                    self.node(schema, pointer::join(&pointer::join("", defs), name))?
                };
                mapping.push((tag.clone(), id));
            }
        }
        Ok(node::Discriminator { property: property.to_owned(), mapping, tags: Vec::new() })
    }

    /// The dynamic context of a schema at `location` entered from the
    /// current one: its resource joins the dynamic scope, binding the
    /// dynamic anchors (for 2019-09, the recursive anchor) no outer
    /// resource bound.
    fn enter_context(&mut self, location: &str) -> usize {
        let base = self.index.base_of(location);
        let Some(declared) = self.index.scope_anchors.get(base) else {
            return self.context;
        };
        let mut context = self.contexts.get(self.context).cloned().unwrap_or_default();
        let before = context.len();
        for (name, at) in declared {
            if let Err(i) = context.binary_search_by(|(n, _)| n.as_str().cmp(name)) {
                context.insert(i, (name.clone(), at.clone()));
            }
        }
        if context.len() == before {
            return self.context;
        }
        if let Some(&id) = self.context_ids.get(&context) {
            return id;
        }
        let id = self.contexts.len();
        self.contexts.push(context.clone());
        self.context_ids.insert(context, id);
        id
    }

    /// Where a reference leads from the schema at `location`: the target's
    /// location and schema, with the absolute URI (without fragment) and
    /// the fragment it names.
    fn lookup(&self, r: &str, location: &str, keyword: &str) -> Result<(String, &'a Value, String, String)> {
        let resolved = resolve::resolve(self.index.base_of(location), r);
        let (uri, fragment) = resolve::split_fragment(&resolved);
        let Some((root, root_value)) = self.index.resources.get(uri) else {
            // The URI it resolved to, when that says more than the reference.
            let shown = if uri == r.split('#').next().unwrap_or_default()
                || uri.starts_with(resolve::DEFAULT_BASE.trim_end_matches("contract"))
            {
                format!("{r:?}")
            } else {
                format!("{r:?} (the document {uri})")
            };
            let metaschema = if Dialect::from_uri(uri).is_some() {
                " (vouch does not bundle the JSON Schema metaschemas: it checks a contract's keywords itself)"
            } else {
                ""
            };
            return Err(CompileError::new(
                Kind::RemoteRef,
                keyword,
                location,
                format!(
                    "{shown} is not among the contract's documents{metaschema}; vouch never fetches a document: \
                     supply it with Contract::with_documents"
                ),
            ));
        };
        let unresolved = |why: &str| CompileError::new(Kind::UnresolvedRef, keyword, location, format!("{r:?} {why}"));
        let decoded = pointer::percent_decode(fragment.unwrap_or_default())
            .ok_or_else(|| unresolved("has a malformed percent-encoding"))?;
        if !decoded.is_empty() && !decoded.starts_with('/') {
            let Some((at, value)) = self.index.anchors.get(&(uri.to_owned(), decoded.clone())) else {
                return Err(unresolved(&format!("names no anchor `{decoded}` in {uri}")));
            };
            return Ok((at.clone(), value, uri.to_owned(), decoded));
        }
        let tokens = pointer::tokens(&decoded).ok_or_else(|| unresolved("is not a JSON Pointer"))?;
        let mut target: &'a Value = root_value;
        let mut canonical = root.clone();
        for t in &tokens {
            target = match target {
                Value::Object(m) => m.get(t.as_str()),
                Value::Array(a) => t.parse::<usize>().ok().and_then(|i| a.get(i)),
                _ => None,
            }
            .ok_or_else(|| unresolved("points to nothing"))?;
            canonical.push('/');
            pointer::push_escaped(&mut canonical, t);
        }
        Ok((canonical, target, uri.to_owned(), decoded))
    }

    /// Resolve a `$ref` against the base URI in force and compile its target.
    fn reference(&mut self, v: &'a Value, location: &str) -> Result<NodeId> {
        let r = v.as_str().ok_or_else(|| invalid("$ref", location, "a string"))?;
        let (at, target, _, _) = self.lookup(r, location, "$ref")?;
        self.node(target, at)
    }

    /// Resolve a `$dynamicRef` (2020-12) or `$recursiveRef` (2019-09) in the
    /// current dynamic context, and compile its target there. When its
    /// static target is a dynamic anchor (a resource root with
    /// `$recursiveAnchor: true`), the outermost schema in the dynamic scope
    /// declaring the same is the target instead.
    fn dynamic_reference(&mut self, keyword: &str, v: &'a Value, location: &str) -> Result<NodeId> {
        let r = v.as_str().ok_or_else(|| invalid(keyword, location, "a string"))?;
        let (at, target, uri, fragment) = self.lookup(r, location, keyword)?;
        let slot = if keyword == "$dynamicRef" {
            self.index.dynamic.contains(&(uri.clone(), fragment.clone())).then_some(fragment)
        } else {
            let root = self.index.resources.get(&uri).is_some_and(|(l, _)| *l == at);
            (root && self.index.recursive.contains(&uri)).then(|| RECURSIVE.to_owned())
        };
        let context = self.contexts.get(self.context);
        let dynamic = slot.and_then(|name| context?.iter().find(|(n, _)| *n == name).map(|(_, l)| l.clone()));
        match dynamic.and_then(|l| self.index.base_at.get(&l).map(|(_, value)| (l, *value))) {
            Some((l, value)) => self.node(value, l),
            None => self.node(target, at),
        }
    }
}

/// The canonical location a root `{"$ref": "#/…"}` names, if it is one.
fn root_alias(document: &Value) -> Option<String> {
    let fragment = document.get("$ref")?.as_str()?.strip_prefix('#')?;
    let decoded = pointer::percent_decode(fragment)?;
    let tokens = pointer::tokens(&decoded)?;
    let mut canonical = String::new();
    for t in &tokens {
        canonical.push('/');
        pointer::push_escaped(&mut canonical, t);
    }
    Some(canonical)
}

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
        n.repair_below = n.policy.as_ref().is_some_and(|p| p.repairs());
    }
    loop {
        let below: Vec<(bool, bool)> = nodes.iter().map(|n| (n.policy_below, n.repair_below)).collect();
        let mut changed = false;
        for n in nodes.iter_mut() {
            if !n.policy_below && n.kept().any(|c| below.get(c).is_some_and(|b| b.0)) {
                n.policy_below = true;
                changed = true;
            }
            if !n.repair_below && n.kept().any(|c| below.get(c).is_some_and(|b| b.1)) {
                n.repair_below = true;
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
