//! The compiled form of one schema node. Nodes live in an arena owned by the
//! contract and point at each other by index, so recursive schemas are plain
//! cycles of indices and nothing is reference-counted.

use std::collections::HashMap;

use crate::pattern::Matcher;
use serde_json::{Number, Value};

use crate::format::Format;
use crate::read::parser::Scalar;

/// Index of a node in the contract's arena.
pub(crate) type NodeId = usize;

/// Declared property name → node, tuned for the lookup done for every
/// member of every reply: a scan of a few names beats hashing each key.
#[derive(Debug, Clone, Default)]
pub(crate) struct PropertyIndex {
    /// Name, node, and whether the property is required.
    names: Vec<(Box<str>, NodeId, bool)>,
    /// Per name: whether it is written in JSON exactly as it reads (no
    /// quote, backslash or control character to escape).
    plain: Vec<bool>,
    /// Only for objects with many properties: name → position in `names`.
    hashed: Option<HashMap<Box<str>, usize, FnvBuild>>,
}

/// Above this many properties, look names up by hash.
const SCAN_LIMIT: usize = 12;

impl PropertyIndex {
    pub fn new(properties: &[(String, NodeId)], required: &[String]) -> Self {
        let names: Vec<(Box<str>, NodeId, bool)> =
            properties.iter().map(|(k, id)| (k.as_str().into(), *id, required.contains(k))).collect();
        let hashed =
            (names.len() > SCAN_LIMIT).then(|| names.iter().enumerate().map(|(i, (k, _, _))| (k.clone(), i)).collect());
        let plain = names.iter().map(|(k, _, _)| !k.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20)).collect();
        Self { names, plain, hashed }
    }

    /// The declared property at `position`, when its name is written in
    /// JSON as it reads: name, node, required.
    #[inline]
    pub fn plain_at(&self, position: usize) -> Option<(&str, NodeId, bool)> {
        if !self.plain.get(position).copied().unwrap_or(false) {
            return None;
        }
        self.names.get(position).map(|(k, id, required)| (&**k, *id, *required))
    }

    /// The node of a declared property, and whether it is required.
    #[inline]
    pub fn entry(&self, key: &str) -> Option<(NodeId, bool)> {
        self.position(key).map(|(_, id, required)| (id, required))
    }

    /// Where a declared property stands in declaration order, its node, and
    /// whether it is required.
    #[inline]
    pub fn position(&self, key: &str) -> Option<(usize, NodeId, bool)> {
        let i = match &self.hashed {
            Some(h) => h.get(key).copied(),
            None => self.names.iter().position(|(k, _, _)| k.len() == key.len() && **k == *key),
        }?;
        self.names.get(i).map(|(_, id, required)| (i, *id, *required))
    }

    /// The name of the declared property at `position`.
    pub fn name_at(&self, position: usize) -> Option<&str> {
        self.names.get(position).map(|(k, _, _)| &**k)
    }

    /// How many properties are declared.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// How many declared properties are required.
    pub fn required_count(&self) -> usize {
        self.names.iter().filter(|(_, _, required)| *required).count()
    }

    #[inline]
    pub fn get(&self, key: &str) -> Option<NodeId> {
        self.entry(key).map(|(id, _)| id)
    }

    #[inline]
    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }
}

/// FNV-1a: fast and good for short property names (no untrusted-key
/// flooding concern: only the contract's own names are ever stored).
#[derive(Clone, Copy, Default)]
pub(crate) struct FnvBuild;

pub(crate) struct Fnv(u64);

impl std::hash::BuildHasher for FnvBuild {
    type Hasher = Fnv;
    fn build_hasher(&self) -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl std::hash::Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
}

impl std::fmt::Debug for FnvBuild {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FnvBuild")
    }
}

/// The JSON types, as a bit set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Types(u8);

impl Types {
    pub const NULL: Types = Types(1);
    pub const BOOLEAN: Types = Types(2);
    pub const INTEGER: Types = Types(4);
    pub const NUMBER: Types = Types(8);
    pub const STRING: Types = Types(16);
    pub const ARRAY: Types = Types(32);
    pub const OBJECT: Types = Types(64);

    pub fn from_name(name: &str) -> Option<Types> {
        Some(match name {
            "null" => Self::NULL,
            "boolean" => Self::BOOLEAN,
            "integer" => Self::INTEGER,
            "number" => Self::NUMBER,
            "string" => Self::STRING,
            "array" => Self::ARRAY,
            "object" => Self::OBJECT,
            _ => return None,
        })
    }

    pub fn union(self, other: Types) -> Types {
        Types(self.0 | other.0)
    }

    pub fn contains(self, other: Types) -> bool {
        self.0 & other.0 == other.0
    }

    /// Whether a value of this JSON type is allowed. `number` admits
    /// integers; `integer` admits numbers with a zero fraction (`1.0`).
    pub fn admits(self, value: &Value) -> bool {
        match value {
            Value::Null => self.contains(Self::NULL),
            Value::Bool(_) => self.contains(Self::BOOLEAN),
            Value::Number(n) => self.contains(Self::NUMBER) || (self.contains(Self::INTEGER) && is_integer(n)),
            Value::String(_) => self.contains(Self::STRING),
            Value::Array(_) => self.contains(Self::ARRAY),
            Value::Object(_) => self.contains(Self::OBJECT),
        }
    }

    /// Whether a scalar as read is of a type in this set.
    pub fn admits_scalar(self, value: &Scalar<'_>) -> bool {
        match value {
            Scalar::Null => self.contains(Self::NULL),
            Scalar::Bool(_) => self.contains(Self::BOOLEAN),
            Scalar::Number(n) => self.contains(Self::NUMBER) || (self.contains(Self::INTEGER) && is_integer(n)),
            Scalar::String(_) => self.contains(Self::STRING),
        }
    }

    /// The names in this set joined with "or", for messages.
    pub fn describe(self) -> String {
        let mut out = String::new();
        for name in self.names() {
            if !out.is_empty() {
                out.push_str(" or ");
            }
            out.push_str(name);
        }
        out
    }

    /// The names in this set, in the spec's order, for messages.
    pub fn names(self) -> impl Iterator<Item = &'static str> {
        [
            (Self::NULL, "null"),
            (Self::BOOLEAN, "boolean"),
            (Self::INTEGER, "integer"),
            (Self::NUMBER, "number"),
            (Self::STRING, "string"),
            (Self::ARRAY, "array"),
            (Self::OBJECT, "object"),
        ]
        .into_iter()
        .filter(move |(t, _)| self.contains(*t))
        .map(|(_, n)| n)
    }

    /// The type of a value (integers as `integer`).
    pub fn of(value: &Value) -> Types {
        match value {
            Value::Null => Self::NULL,
            Value::Bool(_) => Self::BOOLEAN,
            Value::Number(n) if is_integer(n) => Self::INTEGER,
            Value::Number(_) => Self::NUMBER,
            Value::String(_) => Self::STRING,
            Value::Array(_) => Self::ARRAY,
            Value::Object(_) => Self::OBJECT,
        }
    }
}

/// A number with no fractional part (`1` and `1.0` both are).
pub(crate) fn is_integer(n: &Number) -> bool {
    n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.is_finite() && f.fract() == 0.0)
}

/// A compiled `pattern`: the regex and its source for messages.
#[derive(Debug, Clone)]
pub(crate) struct Pattern {
    pub source: String,
    pub regex: Matcher,
}

/// The repair rules a node declares, in the order they are applied.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Rules {
    pub coerce: bool,
    pub round: bool,
    pub clamp: bool,
    pub trim: bool,
    pub enum_case: bool,
    pub truncate: bool,
    pub drop_invalid_items: bool,
    pub strip_unknown: bool,
    pub default_if_invalid: bool,
}

impl Rules {
    pub fn any(self) -> bool {
        self != Rules::default()
    }
}

/// A gate finding declared on a node.
#[derive(Debug, Clone)]
pub(crate) struct FindingRule {
    pub when: NodeId,
    pub message: String,
}

/// `x-vouch` on one node.
#[derive(Debug, Clone, Default)]
pub(crate) struct Policy {
    pub default: Option<Value>,
    pub rules: Rules,
    pub findings: Vec<FindingRule>,
}

impl Policy {
    /// True when the node changes values (a default or any rule).
    pub fn repairs(&self) -> bool {
        self.default.is_some() || self.rules.any()
    }
}

/// One compiled schema node. Absent keywords are `None` or empty.
#[derive(Debug, Clone, Default)]
pub(crate) struct Node {
    /// JSON Pointer of this node in the contract, for messages.
    pub location: String,
    /// A boolean schema: `false` refuses everything.
    pub never: bool,
    pub types: Option<Types>,
    pub enumeration: Option<Vec<Value>>,
    pub constant: Option<Value>,

    pub minimum: Option<Number>,
    pub maximum: Option<Number>,
    pub exclusive_minimum: Option<Number>,
    pub exclusive_maximum: Option<Number>,
    pub multiple_of: Option<Number>,

    pub min_length: Option<u64>,
    pub max_length: Option<u64>,
    pub pattern: Option<Pattern>,
    pub format: Option<Format>,

    pub prefix_items: Vec<NodeId>,
    pub items: Option<NodeId>,
    pub min_items: Option<u64>,
    pub max_items: Option<u64>,
    pub unique_items: bool,
    pub contains: Option<NodeId>,
    pub min_contains: Option<u64>,
    pub max_contains: Option<u64>,
    /// The items `contains` matches count as evaluated for `unevaluatedItems`
    /// (2020-12; in 2019-09 `contains` evaluates nothing).
    pub contains_evaluates: bool,
    /// `unevaluatedItems`: the schema of the items no adjacent keyword (nor
    /// a passing in-place subschema) evaluated.
    pub unevaluated_items: Option<NodeId>,

    /// Declared properties in contract order, with an index for lookup.
    pub properties: Vec<(String, NodeId)>,
    pub property_index: PropertyIndex,
    /// This node or one the kept value reaches from it has an `x-vouch`
    /// policy: the repair and findings walks skip everything else.
    pub policy_below: bool,
    /// This node or one the kept value reaches from it declares a repair
    /// (a rule or a default; findings change nothing): without one, no
    /// repair changes the value here.
    pub repair_below: bool,
    /// Every `required` name is a declared property (then fast mode counts them).
    pub required_all_declared: bool,
    pub required: Vec<String>,
    pub pattern_properties: Vec<(Pattern, NodeId)>,
    pub additional_properties: Option<NodeId>,
    pub property_names: Option<NodeId>,
    pub min_properties: Option<u64>,
    pub max_properties: Option<u64>,
    pub dependent_required: Vec<(String, Vec<String>)>,
    pub dependent_schemas: Vec<(String, NodeId)>,
    /// `unevaluatedProperties`: the schema of the members no adjacent keyword
    /// (nor a passing in-place subschema) evaluated.
    pub unevaluated_properties: Option<NodeId>,

    pub all_of: Vec<NodeId>,
    pub any_of: Vec<NodeId>,
    pub one_of: Vec<NodeId>,
    pub not: Option<NodeId>,
    pub if_: Option<NodeId>,
    pub then_: Option<NodeId>,
    pub else_: Option<NodeId>,
    pub reference: Option<NodeId>,
    /// OpenAPI's `discriminator` beside `oneOf`/`anyOf`, checked at compile
    /// time to name each branch by a tag only it admits.
    pub discriminator: Option<Box<Discriminator>>,

    pub policy: Option<Box<Policy>>,

    /// Refuse integers beyond ±(2^53−1) on integer-only nodes (unless the
    /// root allows `big_integers`): JavaScript would read another number.
    pub exact_integers: bool,
    /// Refuse undeclared keys that consumers read differently (unless the
    /// root allows `hazardous_keys`): see [`hazardous_key`].
    pub plain_keys: bool,
}

/// A union whose branches each fix one property (the tag) to values no
/// other branch admits: a reply's tag names the only branch that can
/// accept it, so that branch alone is evaluated, and reported.
#[derive(Debug, Clone, Default)]
pub(crate) struct Discriminator {
    /// The tag's property name.
    pub property: String,
    /// The `mapping` as written: tag → the node it names (checked against
    /// the branches after compiling).
    pub mapping: Vec<(String, NodeId)>,
    /// Tag value → index of the branch (in `oneOf`, else `anyOf`) it names;
    /// filled by the compiler's consistency check.
    pub tags: Vec<(Value, usize)>,
}

impl Discriminator {
    /// The branch index a reply's tag names, if any.
    pub fn branch(&self, tag: &Value) -> Option<usize> {
        self.tags.iter().find(|(t, _)| crate::equal::json_equal(t, tag)).map(|(_, i)| *i)
    }
}

/// Keys a JavaScript, Python or Go consumer may read differently from the
/// JSON text: prototype names, and keys with NUL or invisible characters
/// that look like another key.
pub(crate) fn hazardous_key(key: &str) -> bool {
    matches!(key, "__proto__" | "constructor" | "prototype")
        || key.chars().any(|c| matches!(c, '\u{0}' | '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2064}' | '\u{feff}'))
}

impl Node {
    /// Nodes applied to the same value as this one (no descent into the
    /// value). A cycle among these would loop forever, so the compiler
    /// refuses it.
    pub fn in_place(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.all_of
            .iter()
            .chain(&self.any_of)
            .chain(&self.one_of)
            .chain(self.dependent_schemas.iter().map(|(_, id)| id))
            .chain(self.not.iter())
            .chain(self.if_.iter())
            .chain(self.then_.iter())
            .chain(self.else_.iter())
            .chain(self.reference.iter())
            .copied()
    }

    /// Subschemas where a repair would be ambiguous: the value they see is
    /// only tested, never the one kept.
    pub fn tested_only(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.any_of
            .iter()
            .chain(&self.one_of)
            .chain(self.dependent_schemas.iter().map(|(_, id)| id))
            .chain(self.not.iter())
            .chain(self.if_.iter())
            .chain(self.then_.iter())
            .chain(self.else_.iter())
            .chain(self.contains.iter())
            .chain(self.property_names.iter())
            // Which members or items these see depends on what the other
            // keywords evaluated, so a repair there could not be made exactly.
            .chain(self.unevaluated_properties.iter())
            .chain(self.unevaluated_items.iter())
            .chain(self.policy.iter().flat_map(|p| p.findings.iter().map(|f| &f.when)))
            .copied()
    }

    /// Where no in-place subschema can evaluate anything, `unevaluated*`
    /// means exactly what `additionalProperties` (or `items` after the
    /// prefix) means: written as that, the node keeps the single pass.
    /// Where that keyword is already there, it evaluates every member or
    /// item, so `unevaluated*` never applies. Run once the policies are
    /// checked (none may stand below `unevaluated*`).
    pub fn fold_unevaluated(&mut self) {
        if self.in_place().next().is_some() {
            return;
        }
        if let Some(rest) = self.unevaluated_properties.take() {
            self.additional_properties.get_or_insert(rest);
        }
        // 2020-12's `contains` evaluates items too: not the same as `items` then.
        if self.contains.is_some() && self.contains_evaluates {
            return;
        }
        if let Some(rest) = self.unevaluated_items.take() {
            self.items.get_or_insert(rest);
        }
    }

    /// Whether the node has `unevaluatedProperties` or `unevaluatedItems`:
    /// then checking it collects what its keywords evaluate.
    #[inline]
    pub fn unevaluated(&self) -> bool {
        self.unevaluated_properties.is_some() || self.unevaluated_items.is_some()
    }

    /// The values this node allows when it is nothing but a choice (`const`
    /// or `enum`, perhaps with a `type`), as schemars writes documented enums
    /// (`oneOf` of `const`s). Used to word a failed `anyOf`/`oneOf` as
    /// "not one of …".
    pub fn plain_choice(&self) -> Option<Vec<Value>> {
        let values = match (&self.constant, &self.enumeration) {
            (Some(c), None) => vec![c.clone()],
            (None, Some(e)) => e.clone(),
            _ => return None,
        };
        let bare = self.only_choice_keywords() && self.reference.is_none() && self.policy.is_none();
        // A `type` beside the choice only narrows it; keep the values it admits.
        bare.then(|| values.into_iter().filter(|v| self.types.is_none_or(|t| t.admits(v))).collect())
    }

    /// No keyword beyond `type`, `enum`, `const`, `$ref` and `x-vouch`.
    pub fn only_choice_keywords(&self) -> bool {
        !self.never
            && self.minimum.is_none()
            && self.maximum.is_none()
            && self.exclusive_minimum.is_none()
            && self.exclusive_maximum.is_none()
            && self.multiple_of.is_none()
            && self.min_length.is_none()
            && self.max_length.is_none()
            && self.pattern.is_none()
            && self.format.is_none()
            && self.prefix_items.is_empty()
            && self.items.is_none()
            && self.min_items.is_none()
            && self.max_items.is_none()
            && !self.unique_items
            && self.contains.is_none()
            && self.properties.is_empty()
            && self.required.is_empty()
            && self.pattern_properties.is_empty()
            && self.additional_properties.is_none()
            && self.property_names.is_none()
            && self.min_properties.is_none()
            && self.max_properties.is_none()
            && self.dependent_required.is_empty()
            && self.all_of.is_empty()
            && self.any_of.is_empty()
            && self.one_of.is_empty()
            && self.not.is_none()
            && self.if_.is_none()
            && self.then_.is_none()
            && self.else_.is_none()
            && self.dependent_schemas.is_empty()
            && !self.unevaluated()
    }

    /// The target of a node that is nothing but a `$ref`.
    pub fn only_reference(&self) -> Option<NodeId> {
        let bare = self.only_choice_keywords()
            && self.types.is_none()
            && self.enumeration.is_none()
            && self.constant.is_none()
            && self.policy.is_none();
        if bare {
            self.reference
        } else {
            None
        }
    }

    /// Subschemas applied to the value that is kept: the ones repairs and
    /// findings follow.
    pub fn kept(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.reference
            .iter()
            .chain(&self.all_of)
            .chain(self.properties.iter().map(|(_, id)| id))
            .chain(self.pattern_properties.iter().map(|(_, id)| id))
            .chain(self.additional_properties.iter())
            .chain(self.prefix_items.iter())
            .chain(self.items.iter())
            .copied()
    }

    /// Every subschema, whatever its role.
    pub fn children(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.in_place()
            .chain(self.prefix_items.iter().copied())
            .chain(self.items)
            .chain(self.contains)
            .chain(self.properties.iter().map(|(_, id)| *id))
            .chain(self.pattern_properties.iter().map(|(_, id)| *id))
            .chain(self.additional_properties)
            .chain(self.property_names)
            .chain(self.unevaluated_properties)
            .chain(self.unevaluated_items)
            .chain(self.policy.iter().flat_map(|p| p.findings.iter().map(|f| f.when)))
    }
}
