//! The dialects a contract may be written in, and the keywords vouch
//! knows: enforced, refused, or read as annotations (with the near misses
//! and other vocabularies that are errors rather than annotations).

use serde_json::Value;

/// Keywords that carry no constraint and are ignored everywhere.
pub(super) const ANNOTATIONS: &[&str] =
    &["title", "description", "examples", "default", "$comment", "readOnly", "writeOnly", "deprecated"];

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
    pub(crate) fn from_uri(uri: &str) -> Option<Self> {
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

    pub(super) fn name(self) -> &'static str {
        match self {
            Self::Draft4 => "draft-04",
            Self::Draft6 => "draft-06",
            Self::Draft7 => "draft-07",
            Self::Draft2019 => "draft 2019-09",
            Self::Draft2020 => "draft 2020-12",
        }
    }

    /// `items` may be an array (tuple validation), with `additionalItems`.
    pub(super) fn items_array(self) -> bool {
        self != Self::Draft2020
    }

    /// `dependencies` (split into `dependentRequired`/`dependentSchemas` in 2019-09).
    pub(super) fn dependencies(self) -> bool {
        matches!(self, Self::Draft4 | Self::Draft6 | Self::Draft7)
    }

    /// `$anchor` names locations, and `$id` has no fragment (2019-09 on).
    pub(crate) fn anchor_keyword(self) -> bool {
        matches!(self, Self::Draft2019 | Self::Draft2020)
    }

    /// Every keyword beside `$ref` is ignored.
    pub(crate) fn ref_overrides(self) -> bool {
        matches!(self, Self::Draft4 | Self::Draft6 | Self::Draft7)
    }
}

/// What may stand beside `$ref` up to draft-07: keywords that constrain nothing.
pub(super) const REF_SIBLINGS_ALLOWED: &[&str] =
    &["$ref", "$schema", "$id", "id", "definitions", "$defs", "x-vouch", "$comment"];

/// Every keyword vouch knows, for "did you mean" hints.
pub(super) const KNOWN_KEYWORDS: &[&str] = &[
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
    "discriminator",
    "contentEncoding",
    "nullable",
    "unevaluatedProperties",
    "unevaluatedItems",
];

/// Whether a name is a keyword vouch enforces (or refuses), never an annotation.
pub(crate) fn is_keyword(name: &str) -> bool {
    (KNOWN_KEYWORDS.contains(&name) && !ANNOTATIONS.contains(&name)) || UNSUPPORTED.contains(&name)
}

/// The keyword vouch enforces (or refuses) that an unknown name is a near
/// miss of: the same letters but for case, `-` and `_`; within a few edits
/// (one per five letters, at least one); or one a prefix of the other when
/// the shorter has five letters or more (`maxLen`, `requiredFields`).
pub(super) fn near_enforced(unknown: &str) -> Option<&'static str> {
    let norm =
        |s: &str| s.chars().filter(|c| !matches!(c, '-' | '_' | '$')).flat_map(char::to_lowercase).collect::<String>();
    let u = norm(unknown);
    let mut best: Option<(usize, &'static str)> = None;
    for k in KNOWN_KEYWORDS.iter().copied().filter(|k| is_keyword(k) && !matches!(*k, "$id" | "$schema")) {
        let kn = norm(k);
        // Two-letter names (`id`, `if`) are too close to everything for an edit.
        let longer = kn.len().max(u.len());
        let limit = if longer <= 3 { 0 } else { (longer / 5).max(1) };
        let shorter = kn.len().min(u.len());
        let d = if kn == u {
            0
        } else if shorter >= 5 && (kn.starts_with(&u) || u.starts_with(&kn)) {
            1
        } else {
            edit_distance(&u, &kn)
        };
        if d <= limit && best.is_none_or(|(b, _)| d < b) {
            best = Some((d, k));
        }
    }
    best.map(|(_, k)| k)
}

/// Whether an unknown keyword's value is a schema with a constraint of its
/// own (`{"type": "string"}`): most likely a property written outside
/// `properties`.
pub(super) fn looks_like_a_schema(v: &Value) -> bool {
    v.as_object().is_some_and(|m| {
        m.keys().any(|k| {
            matches!(
                k.as_str(),
                "type" | "properties" | "items" | "$ref" | "enum" | "const" | "anyOf" | "oneOf" | "allOf" | "pattern"
            )
        })
    })
}

/// Annotation keywords of widely used tools, read as annotations even where
/// they look like a keyword vouch enforces (`patternErrorMessage`).
pub(super) const TOOL_ANNOTATIONS: &[&str] = &[
    // VS Code and SchemaStore
    "markdownDescription",
    "markdownEnumDescriptions",
    "enumDescriptions",
    "deprecationMessage",
    "defaultSnippets",
    "doNotSuggest",
    "suggestSortText",
    "patternErrorMessage",
    "errorMessage",
    "allowComments",
    "allowTrailingCommas",
    // OpenAPI
    "example",
    "externalDocs",
    "xml",
    // json-editor
    "propertyOrder",
    "options",
    "headerTemplate",
    // JSON Hyper-Schema
    "links",
    "readonly",
    // Snowplow's self-describing schemas
    "self",
    // code generators (jsonschema2pojo, json-schema-to-typescript)
    "javaType",
    "javaName",
    "javaInterfaces",
    "javaEnumNames",
    "extendsJavaClass",
    "existingJavaType",
    "tsType",
    "tsEnumNames",
];

/// Constraint keywords of other vocabularies: validators that know them
/// enforce them, so reading them as annotations would drop a constraint.
pub(super) const OTHER_VOCABULARIES: &[(&str, &str)] = &[
    ("divisibleBy", "draft-03's `divisibleBy` is `multipleOf` since draft-04"),
    ("disallow", "draft-03's `disallow` is not enforced; write `not` with a `type`"),
    ("extends", "draft-03's `extends` is not enforced; write `allOf`"),
    ("requires", "draft-03's `requires` is not enforced; write `dependentRequired`"),
    ("formatMinimum", "ajv's `formatMinimum` is not enforced"),
    ("formatMaximum", "ajv's `formatMaximum` is not enforced"),
    ("formatExclusiveMinimum", "ajv's `formatExclusiveMinimum` is not enforced"),
    ("formatExclusiveMaximum", "ajv's `formatExclusiveMaximum` is not enforced"),
    ("uniqueItemProperties", "ajv's `uniqueItemProperties` is not enforced"),
    ("patternRequired", "ajv's `patternRequired` is not enforced"),
    ("prohibited", "ajv's `prohibited` is not enforced; write `not` with `required`"),
    ("deepProperties", "ajv's `deepProperties` is not enforced"),
    ("deepRequired", "ajv's `deepRequired` is not enforced"),
    ("allRequired", "ajv's `allRequired` is not enforced; list the names in `required`"),
    ("anyRequired", "ajv's `anyRequired` is not enforced; write `anyOf` of `required`"),
    ("oneRequired", "ajv's `oneRequired` is not enforced; write `oneOf` of `required`"),
    ("instanceof", "ajv's `instanceof` is not enforced"),
    ("typeof", "ajv's `typeof` is not enforced"),
    ("range", "ajv's `range` is not enforced; write `minimum` and `maximum`"),
    ("exclusiveRange", "ajv's `exclusiveRange` is not enforced"),
    ("regexp", "ajv's `regexp` is not enforced; write `pattern`"),
    ("transform", "ajv's `transform` is not enforced; declare a repair in `x-vouch`"),
    ("select", "ajv's `select` is not enforced; write `if`/`then`"),
    ("dynamicDefaults", "ajv's `dynamicDefaults` is not enforced"),
];

/// Levenshtein distance with adjacent transpositions counting one, on short keyword names.
pub(super) fn edit_distance(a: &str, b: &str) -> usize {
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
pub(super) const UNSUPPORTED: &[&str] = &[
    "$anchor",
    "$dynamicRef",
    "$dynamicAnchor",
    "$recursiveRef",
    "$recursiveAnchor",
    "$vocabulary",
    "contentMediaType",
    "contentSchema",
    "dependencies",
    "additionalItems",
];
