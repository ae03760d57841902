//! Where references lead: RFC 3986 reference resolution, and the index of a
//! contract's schema resources (`$id`), anchors (`$anchor`, plain-name `$id`
//! fragments, `$dynamicAnchor`, `$recursiveAnchor`) and the base URI in force
//! at each schema, over the contract and the documents supplied beside it.
//! Pure: documents are only ever those the caller gave.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use super::keywords::Dialect;
use crate::pointer;

/// The base URI of a contract without `$id`: references relative to it stay
/// inside the contract, and one that leaves it names an unknown document.
pub(crate) const DEFAULT_BASE: &str = "vouch:contract";

/// The five parts of a URI reference (RFC 3986 §3), borrowed from it.
struct Parts<'a> {
    scheme: Option<&'a str>,
    authority: Option<&'a str>,
    path: &'a str,
    query: Option<&'a str>,
    fragment: Option<&'a str>,
}

/// Split a URI reference into its parts (RFC 3986 appendix B).
fn parts(s: &str) -> Parts<'_> {
    let (rest, fragment) = match s.split_once('#') {
        Some((r, f)) => (r, Some(f)),
        None => (s, None),
    };
    let (rest, query) = match rest.split_once('?') {
        Some((r, q)) => (r, Some(q)),
        None => (rest, None),
    };
    // A scheme is a letter then letters, digits, `+`, `-`, `.`, before the
    // first `:` and ahead of any `/`.
    let (scheme, rest) = match rest.split_once(':') {
        Some((sc, r))
            if sc.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
                && sc.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')) =>
        {
            (Some(sc), r)
        }
        _ => (None, rest),
    };
    let (authority, path) = match rest.strip_prefix("//") {
        Some(r) => match r.find('/') {
            Some(i) => (r.get(..i), r.get(i..).unwrap_or_default()),
            None => (Some(r), ""),
        },
        None => (None, rest),
    };
    Parts { scheme, authority, path, query, fragment }
}

/// RFC 3986 §5.2.4: remove `.` and `..` segments.
fn remove_dot_segments(path: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    let absolute = path.starts_with('/');
    let segments: Vec<&str> = path.split('/').collect();
    let last = segments.len().saturating_sub(1);
    for (i, seg) in segments.iter().enumerate() {
        if i == 0 && absolute {
            continue;
        }
        match *seg {
            "." => {
                if i == last {
                    out.push("");
                }
            }
            ".." => {
                out.pop();
                if i == last {
                    out.push("");
                }
            }
            s => out.push(s),
        }
    }
    let joined = out.join("/");
    if absolute {
        format!("/{joined}")
    } else {
        joined
    }
}

/// Resolve `reference` against the absolute URI `base` (RFC 3986 §5.2.2,
/// strict). The result keeps the reference's fragment, if any.
pub(crate) fn resolve(base: &str, reference: &str) -> String {
    let r = parts(reference);
    let b = parts(base);
    let (scheme, authority, path, query);
    if r.scheme.is_some() {
        scheme = r.scheme;
        authority = r.authority;
        path = remove_dot_segments(r.path);
        query = r.query;
    } else {
        scheme = b.scheme;
        if r.authority.is_some() {
            authority = r.authority;
            path = remove_dot_segments(r.path);
            query = r.query;
        } else {
            authority = b.authority;
            if r.path.is_empty() {
                path = b.path.to_owned();
                query = r.query.or(b.query);
            } else {
                path = if r.path.starts_with('/') {
                    remove_dot_segments(r.path)
                } else {
                    // §5.2.3: merge with the base path.
                    let merged = if b.authority.is_some() && b.path.is_empty() {
                        format!("/{}", r.path)
                    } else {
                        match b.path.rfind('/') {
                            Some(i) => format!("{}{}", b.path.get(..=i).unwrap_or_default(), r.path),
                            None => r.path.to_owned(),
                        }
                    };
                    remove_dot_segments(&merged)
                };
                query = r.query;
            }
        }
    }
    let mut out = String::with_capacity(base.len() + reference.len());
    if let Some(s) = scheme {
        out.push_str(&s.to_ascii_lowercase());
        out.push(':');
    }
    if let Some(a) = authority {
        out.push_str("//");
        // §6.2.2.1: the host is case-insensitive (user information is not).
        match a.rsplit_once('@') {
            Some((user, host)) => {
                out.push_str(user);
                out.push('@');
                out.push_str(&host.to_ascii_lowercase());
            }
            None => out.push_str(&a.to_ascii_lowercase()),
        }
    }
    out.push_str(&normalize_percent(&path));
    if let Some(q) = query {
        out.push('?');
        out.push_str(&normalize_percent(q));
    }
    if let Some(f) = r.fragment {
        out.push('#');
        out.push_str(f);
    }
    out
}

/// §6.2.2.2: percent-encoded unreserved characters decoded, other escapes
/// hex digits upper-cased, so `%7e`, `%7E` and `~` name the same resource.
fn normalize_percent(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        let escape = (b == b'%').then(|| s.get(i + 1..i + 3)).flatten();
        match escape.and_then(|h| u8::from_str_radix(h, 16).ok()) {
            Some(c) if c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'_' | b'~') => {
                out.push(char::from(c));
                i += 3;
            }
            Some(_) => {
                out.push('%');
                out.push_str(&escape.unwrap_or_default().to_ascii_uppercase());
                i += 3;
            }
            None => {
                // Not an escape: copy the whole character.
                let ch = s.get(i..).and_then(|r| r.chars().next()).unwrap_or('\u{fffd}');
                out.push(ch);
                i += ch.len_utf8().max(1);
            }
        }
    }
    out
}

/// Whether a URI reference is absolute (has a scheme).
pub(crate) fn is_absolute(uri: &str) -> bool {
    parts(uri).scheme.is_some()
}

/// A URI without its fragment, and the fragment (`None` when there is none).
pub(crate) fn split_fragment(uri: &str) -> (&str, Option<&str>) {
    match uri.split_once('#') {
        Some((u, f)) => (u, Some(f)),
        None => (uri, None),
    }
}

/// Whether `name` is a plain-name fragment (`$anchor`'s grammar: a letter or
/// `_`, then letters, digits, `-`, `_`, `.`).
pub(crate) fn is_anchor_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// The recursive anchor's slot in a dynamic context (a `$dynamicAnchor`
/// name is never empty).
pub(crate) const RECURSIVE: &str = "";

/// Everything the compiler needs to follow references: the documents, each
/// schema's base URI, and every resource and anchor by absolute URI.
/// Locations are strings: a JSON Pointer in the contract, or
/// `uri#pointer` in a supplied document.
#[derive(Default)]
pub(crate) struct Index<'a> {
    /// Schema resources (and supplied documents) by absolute URI without fragment.
    pub resources: HashMap<String, (String, &'a Value)>,
    /// Plain-name anchors: (resource URI, name) → location.
    pub anchors: HashMap<(String, String), (String, &'a Value)>,
    /// The `$dynamicAnchor`s, by (resource URI, name).
    pub dynamic: HashSet<(String, String)>,
    /// For each resource, its dynamic anchors whose names some `$dynamicRef`
    /// names (the only ones that can change where a reference leads), and
    /// for 2019-09 a [`RECURSIVE`] entry when its root has `$recursiveAnchor: true`.
    pub scope_anchors: HashMap<String, Vec<(String, String)>>,
    /// Resources whose root declares `$recursiveAnchor: true`.
    pub recursive: HashSet<String>,
    /// The base URI in force at each schema location, and the schema.
    pub base_at: HashMap<String, (String, &'a Value)>,
    /// Identifiers declared twice (keyword, location of the second, the
    /// URI): which one a reference means would be a guess.
    pub duplicates: Vec<(&'static str, String, String)>,
    /// How many dynamic anchor names can change where a reference leads.
    pub dynamic_names: usize,
}

impl<'a> Index<'a> {
    /// Index `documents` (the contract first, at location ""; each other at
    /// `uri#`), read in `dialect`.
    pub(crate) fn build(documents: &[(String, &'a Value)], dialect: Dialect) -> Self {
        let mut index = Index::default();
        let mut dynamic_names: HashSet<String> = HashSet::new();
        let mut any_recursive_ref = false;
        let mut dynamic_at: Vec<(String, String, String)> = Vec::new();
        for (i, (uri, doc)) in documents.iter().enumerate() {
            let root = if i == 0 { String::new() } else { format!("{uri}#") };
            index.resources.entry(uri.clone()).or_insert((root.clone(), doc));
            // Iterative: a contract's depth must not reach the call stack.
            let mut stack: Vec<(&'a Value, String, String)> = vec![(doc, root, uri.clone())];
            while let Some((value, location, base)) = stack.pop() {
                let Value::Object(map) = value else {
                    if value.is_boolean() {
                        index.base_at.insert(location, (base, value));
                    }
                    continue;
                };
                let base = index.enter(map, value, &location, base, dialect);
                if let Some(r) = map.get("$dynamicRef").and_then(Value::as_str) {
                    if let (_, Some(name)) = split_fragment(r) {
                        if is_anchor_name(name) {
                            dynamic_names.insert(name.to_owned());
                        }
                    }
                }
                any_recursive_ref |= map.contains_key("$recursiveRef");
                if let Some(name) = map.get("$dynamicAnchor").and_then(Value::as_str) {
                    if dialect == Dialect::Draft2020 && is_anchor_name(name) {
                        dynamic_at.push((base.clone(), name.to_owned(), location.clone()));
                    }
                }
                for (k, sub) in map {
                    let at = pointer::join(&location, k);
                    match (k.as_str(), sub) {
                        (
                            "additionalItems"
                            | "additionalProperties"
                            | "contains"
                            | "propertyNames"
                            | "not"
                            | "if"
                            | "then"
                            | "else"
                            | "unevaluatedItems"
                            | "unevaluatedProperties"
                            | "contentSchema"
                            | "items",
                            Value::Object(_) | Value::Bool(_),
                        ) => stack.push((sub, at, base.clone())),
                        ("items" | "prefixItems" | "allOf" | "anyOf" | "oneOf", Value::Array(list)) => {
                            for (j, s) in list.iter().enumerate() {
                                stack.push((s, pointer::join(&at, &j.to_string()), base.clone()));
                            }
                        }
                        (
                            "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas"
                            | "dependencies",
                            Value::Object(m),
                        ) => {
                            for (name, s) in m {
                                if s.is_object() || s.is_boolean() {
                                    stack.push((s, pointer::join(&at, name), base.clone()));
                                }
                            }
                        }
                        _ => {}
                    }
                }
                index.base_at.insert(location, (base, value));
            }
        }
        for (base, name, _) in &dynamic_at {
            index.dynamic.insert((base.clone(), name.clone()));
        }
        let mut used: HashSet<&str> = HashSet::new();
        for (base, name, location) in &dynamic_at {
            if dynamic_names.contains(name) {
                let declared = index.scope_anchors.entry(base.clone()).or_default();
                // Declared twice in one resource is refused (`duplicates`); keep one.
                if !declared.iter().any(|(n, _)| n == name) {
                    declared.push((name.clone(), location.clone()));
                }
                used.insert(name);
            }
        }
        index.dynamic_names = used.len();
        if any_recursive_ref {
            for uri in &index.recursive {
                if let Some((location, _)) = index.resources.get(uri) {
                    let entry = (RECURSIVE.to_owned(), location.clone());
                    index.scope_anchors.entry(uri.clone()).or_default().push(entry);
                }
            }
        }
        index
    }

    /// Record what the schema at `location` declares about itself; the base
    /// URI its keywords are read against.
    fn enter(
        &mut self,
        map: &'a Map<String, Value>,
        value: &'a Value,
        location: &str,
        base: String,
        dialect: Dialect,
    ) -> String {
        let id_keyword = if dialect == Dialect::Draft4 { "id" } else { "$id" };
        // Up to draft-07 `$ref` makes its siblings ignored, `$id` among them.
        let ignored = dialect.ref_overrides() && map.contains_key("$ref");
        let mut base = base;
        if let Some(id) = map.get(id_keyword).and_then(Value::as_str).filter(|_| !ignored) {
            let resolved = resolve(&base, id);
            let (uri, fragment) = split_fragment(&resolved);
            let (written, _) = split_fragment(id);
            if !written.is_empty() {
                base = uri.to_owned();
                self.declare_resource(id_keyword, &base, location, value);
            }
            // Up to draft-07 a plain-name fragment of `$id` is an anchor.
            if let Some(name) = fragment.filter(|f| !f.is_empty() && !dialect.anchor_keyword()) {
                if is_anchor_name(name) {
                    self.declare_anchor(id_keyword, uri, name, location, value);
                }
            }
        }
        if dialect.anchor_keyword() {
            for key in ["$anchor", "$dynamicAnchor"] {
                if key == "$dynamicAnchor" && dialect != Dialect::Draft2020 {
                    continue;
                }
                if let Some(name) = map.get(key).and_then(Value::as_str).filter(|n| is_anchor_name(n)) {
                    self.declare_anchor(key, &base.clone(), name, location, value);
                }
            }
        }
        if dialect == Dialect::Draft2019 && map.get("$recursiveAnchor") == Some(&Value::Bool(true)) {
            // It counts only at a resource's root.
            if self.resources.get(&base).is_some_and(|(l, _)| l == location) {
                self.recursive.insert(base.clone());
            }
        }
        base
    }

    fn declare_resource(&mut self, keyword: &'static str, uri: &str, location: &str, value: &'a Value) {
        match self.resources.get(uri) {
            Some((at, _)) if at != location => self.duplicates.push((keyword, location.to_owned(), uri.to_owned())),
            Some(_) => {}
            None => {
                self.resources.insert(uri.to_owned(), (location.to_owned(), value));
            }
        }
    }

    fn declare_anchor(&mut self, keyword: &'static str, uri: &str, name: &str, location: &str, value: &'a Value) {
        let key = (uri.to_owned(), name.to_owned());
        match self.anchors.get(&key) {
            Some((at, _)) if at != location => {
                self.duplicates.push((keyword, location.to_owned(), format!("{uri}#{name}")));
            }
            Some(_) => {}
            None => {
                self.anchors.insert(key, (location.to_owned(), value));
            }
        }
    }

    /// The base URI in force at `location` (a location the index did not
    /// reach as a schema takes its nearest indexed ancestor's).
    pub(crate) fn base_of(&self, location: &str) -> &str {
        let mut at = location;
        loop {
            if let Some((b, _)) = self.base_at.get(at) {
                return b;
            }
            match at.rfind('/') {
                Some(i) => at = at.get(..i).unwrap_or_default(),
                None => return DEFAULT_BASE,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3986_examples() {
        // RFC 3986 §5.4.1 and §5.4.2, against its base.
        let base = "http://a/b/c/d;p?q";
        for (r, want) in [
            ("g:h", "g:h"),
            ("g", "http://a/b/c/g"),
            ("./g", "http://a/b/c/g"),
            ("g/", "http://a/b/c/g/"),
            ("/g", "http://a/g"),
            ("//g", "http://g"),
            ("?y", "http://a/b/c/d;p?y"),
            ("g?y", "http://a/b/c/g?y"),
            ("#s", "http://a/b/c/d;p?q#s"),
            ("g#s", "http://a/b/c/g#s"),
            (";x", "http://a/b/c/;x"),
            ("", "http://a/b/c/d;p?q"),
            (".", "http://a/b/c/"),
            ("./", "http://a/b/c/"),
            ("..", "http://a/b/"),
            ("../", "http://a/b/"),
            ("../g", "http://a/b/g"),
            ("../..", "http://a/"),
            ("../../g", "http://a/g"),
            ("../../../g", "http://a/g"),
            ("/./g", "http://a/g"),
            ("/../g", "http://a/g"),
            ("g.", "http://a/b/c/g."),
            ("..g", "http://a/b/c/..g"),
            ("./../g", "http://a/b/g"),
            ("./g/.", "http://a/b/c/g/"),
            ("g/./h", "http://a/b/c/g/h"),
            ("g/../h", "http://a/b/c/h"),
            ("g;x=1/../y", "http://a/b/c/y"),
        ] {
            assert_eq!(resolve(base, r), want, "resolving {r:?}");
        }
    }

    #[test]
    fn equivalent_spellings_normalize_alike() {
        assert_eq!(resolve("HTTP://Example.COM/a/", "%7efoo/b%2fc.json"), "http://example.com/a/~foo/b%2Fc.json");
        assert_eq!(resolve("http://User@Example.com/", "x"), "http://User@example.com/x");
        // The fragment is left as written: it is decoded where it is read.
        assert_eq!(resolve("http://a/", "b#/%7e"), "http://a/b#/%7e");
        // Malformed escapes and non-ASCII text pass through whole.
        assert_eq!(resolve("http://a/", "%zz/é%4"), "http://a/%zz/é%4");
    }

    #[test]
    fn urns_and_fragments() {
        let urn = "urn:uuid:deadbeef-1234-ffff-ffff-4321feebdaed";
        assert_eq!(resolve(urn, "#/$defs/bar"), format!("{urn}#/$defs/bar"));
        assert_eq!(split_fragment("http://x/y#"), ("http://x/y", Some("")));
        assert_eq!(split_fragment("http://x/y"), ("http://x/y", None));
        assert_eq!(resolve(DEFAULT_BASE, "other.json"), "vouch:other.json");
        assert!(is_anchor_name("foo_bar-1.2"));
        assert!(!is_anchor_name("/defs"));
        assert!(!is_anchor_name("1a"));
    }
}
