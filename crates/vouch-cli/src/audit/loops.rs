//! Loop risk: the strings and arrays a contract leaves without a cap.
//!
//! A model that starts repeating itself inside a string or an array keeps
//! going until `max_tokens`, and every token costs. A field is bounded by
//! its own cap (`maxLength`, `maxItems`), or by what it may be (`enum`,
//! `const`, a `format` of bounded length, a closed tuple); the whole reply
//! is bounded by `x-vouch.limits.max_bytes`, which a streamed check
//! (`vouch check --stream`) stops at. Each uncapped one is a note with a
//! stable code and the contract location to fix.

use serde_json::{Map, Value};
use vouch::{Contract, Format, Limits};

/// One contract-level note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    /// `uncapped_string`, `uncapped_array` or `uncapped_reply`.
    pub code: &'static str,
    /// Where in the contract (a JSON Pointer into the document; `""` for the root).
    pub location: String,
    /// What is uncapped, naming what to add (the subject of [`Note::message`]).
    pub what: String,
}

impl Note {
    /// The whole sentence: `LOCATION: WHAT may loop until max_tokens`.
    pub fn message(&self) -> String {
        format!("{}: {} may loop until max_tokens", self.at(), self.what)
    }

    /// The location, `(root)` for the root.
    pub fn at(&self) -> &str {
        if self.location.is_empty() {
            "(root)"
        } else {
            &self.location
        }
    }
}

/// Walking stops this deep in the document, and after this many schemas:
/// a contract is the author's, but no document makes the audit hang.
const MAX_DEPTH: usize = 64;
const MAX_SCHEMAS: usize = 100_000;

/// Every uncapped string and array in `contract`, in document order, then
/// the whole reply when no `max_bytes` is declared.
pub fn notes(contract: &Contract) -> Vec<Note> {
    let document = contract.document();
    let mut walk = Walk { document, notes: Vec::new(), seen: 0 };
    walk.schema(document, "", Caps::NONE, 0);
    let mut notes = walk.notes;
    let declared = document.get("x-vouch").and_then(|x| x.get("limits")).and_then(|l| l.get("max_bytes")).is_some();
    if !declared {
        notes.push(Note {
            code: "uncapped_reply",
            location: String::new(),
            what: format!(
                "the whole reply, with no x-vouch.limits.max_bytes (only the default {} bytes; whitespace and digits \
                 loop too),",
                Limits::default().max_bytes
            ),
        });
    }
    notes
}

/// Which kinds of value a schema bounds in length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Caps {
    string: bool,
    array: bool,
}

impl Caps {
    const NONE: Caps = Caps { string: false, array: false };
    const BOTH: Caps = Caps { string: true, array: true };

    fn or(self, other: Caps) -> Caps {
        Caps { string: self.string || other.string, array: self.array || other.array }
    }

    fn and(self, other: Caps) -> Caps {
        Caps { string: self.string && other.string, array: self.array && other.array }
    }
}

/// Keywords that constrain nothing: a schema of only these admits any value.
fn annotation(key: &str) -> bool {
    key.starts_with("x-")
        || matches!(
            key,
            "title"
                | "description"
                | "default"
                | "examples"
                | "$comment"
                | "deprecated"
                | "readOnly"
                | "writeOnly"
                | "$id"
                | "$anchor"
                | "$schema"
                | "$vocabulary"
                | "$dynamicAnchor"
        )
}

/// Formats whose every match is of bounded length.
fn bounded_format(name: &str) -> bool {
    matches!(
        Format::from_name(name),
        Some(
            Format::Date
                | Format::Hostname
                | Format::Ipv4
                | Format::Ipv6
                | Format::Uuid
                | Format::UuidVersion(_)
                | Format::Ulid
                | Format::Xid
                | Format::Ksuid
                | Format::Nanoid
                | Format::Mac
                | Format::E164
                | Format::Cidr(_)
                | Format::Ip(..)
                | Format::Digest(..)
        )
    )
}

/// The JSON types a schema's `type` names (`None`: no `type`, any).
fn types(m: &Map<String, Value>) -> Option<Vec<&str>> {
    match m.get("type")? {
        Value::String(t) => Some(vec![t.as_str()]),
        Value::Array(ts) => Some(ts.iter().filter_map(Value::as_str).collect()),
        _ => None,
    }
}

struct Walk<'a> {
    document: &'a Value,
    notes: Vec<Note>,
    seen: usize,
}

impl<'a> Walk<'a> {
    /// The target of a local `$ref`, if it resolves.
    fn target(&self, m: &Map<String, Value>) -> Option<&'a Value> {
        let pointer = m.get("$ref")?.as_str()?.strip_prefix('#')?;
        self.document.pointer(pointer)
    }

    /// What `schema` caps by itself and through what applies in place
    /// (`$ref`, `allOf`; `anyOf`/`oneOf` when every branch caps).
    fn caps(&self, schema: &Value, depth: usize) -> Caps {
        let m = match schema {
            Value::Bool(false) => return Caps::BOTH,
            Value::Object(m) if depth < 8 => m,
            _ => return Caps::NONE,
        };
        if m.contains_key("const") || m.contains_key("enum") {
            return Caps::BOTH;
        }
        let closed_tuple = m.get("items") == Some(&Value::Bool(false));
        let mut caps = Caps {
            string: m.contains_key("maxLength") || m.get("format").and_then(Value::as_str).is_some_and(bounded_format),
            array: m.contains_key("maxItems") || closed_tuple,
        };
        // A type that excludes strings (arrays) bounds them: there are none.
        if let Some(ts) = types(m) {
            caps = caps.or(Caps { string: !ts.contains(&"string"), array: !ts.contains(&"array") });
        }
        if let Some(target) = self.target(m) {
            caps = caps.or(self.caps(target, depth + 1));
        }
        for member in m.get("allOf").and_then(Value::as_array).into_iter().flatten() {
            caps = caps.or(self.caps(member, depth + 1));
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(branches) = m.get(key).and_then(Value::as_array).filter(|b| !b.is_empty()) {
                caps = caps.or(branches.iter().fold(Caps::BOTH, |all, b| all.and(self.caps(b, depth + 1))));
            }
        }
        caps
    }

    fn note(&mut self, code: &'static str, location: &str, what: &str) {
        self.notes.push(Note { code, location: location.to_owned(), what: what.to_owned() });
    }

    /// Note `schema` at `location` if it admits an uncapped string or array
    /// (`inherited`: what the schemas it applies in place of already cap),
    /// then walk every schema below it.
    fn schema(&mut self, schema: &'a Value, location: &str, inherited: Caps, depth: usize) {
        self.seen += 1;
        if depth > MAX_DEPTH || self.seen > MAX_SCHEMAS {
            return;
        }
        let m = match schema {
            Value::Object(m) => m,
            Value::Bool(true) => {
                // `true` admits any value.
                if !inherited.string {
                    self.note("uncapped_string", location, "any value, so a string with no maxLength,");
                }
                if !inherited.array {
                    self.note("uncapped_array", location, "any value, so an array with no maxItems,");
                }
                return;
            }
            _ => return,
        };
        let caps = self.caps(schema, 0).or(inherited);
        let any_value = m.keys().all(|k| annotation(k));
        let (string, array) = match types(m) {
            Some(ts) => (ts.contains(&"string"), ts.contains(&"array")),
            // No `type`: noted only when nothing at all constrains it.
            None => (any_value, any_value),
        };
        if string && !caps.string {
            let what = if any_value {
                "any value, so a string with no maxLength,"
            } else {
                "a string with no maxLength (nor enum, const or a bounded format)"
            };
            self.note("uncapped_string", location, what);
        }
        if array && !caps.array {
            let what = if any_value {
                "any value, so an array with no maxItems,"
            } else {
                "an array with no maxItems (nor enum or const)"
            };
            self.note("uncapped_array", location, what);
        }
        let here = |key: &str| format!("{location}/{}", key.replace('~', "~0").replace('/', "~1"));
        for (key, value) in m {
            match key.as_str() {
                // A new value each: nothing above caps it.
                "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas" => {
                    for (name, sub) in value.as_object().into_iter().flatten() {
                        let at = format!("{}/{}", here(key), name.replace('~', "~0").replace('/', "~1"));
                        self.schema(sub, &at, Caps::NONE, depth + 1);
                    }
                }
                "additionalProperties"
                | "unevaluatedProperties"
                | "items"
                | "unevaluatedItems"
                | "contains"
                | "propertyNames" => self.schema(value, &here(key), Caps::NONE, depth + 1),
                "prefixItems" => {
                    for (i, sub) in value.as_array().into_iter().flatten().enumerate() {
                        self.schema(sub, &format!("{}/{i}", here(key)), Caps::NONE, depth + 1);
                    }
                }
                // The same value: what this schema caps stays capped.
                "allOf" | "anyOf" | "oneOf" => {
                    for (i, sub) in value.as_array().into_iter().flatten().enumerate() {
                        self.schema(sub, &format!("{}/{i}", here(key)), caps, depth + 1);
                    }
                }
                "then" | "else" => self.schema(value, &here(key), caps, depth + 1),
                // `not` and `if` only test; a `$ref`'s target is noted where it stands.
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]

    use super::*;

    fn codes(schema: &str) -> Vec<(String, &'static str)> {
        let contract = Contract::from_json_str(schema).unwrap();
        notes(&contract).into_iter().map(|n| (n.location, n.code)).collect()
    }

    fn capped(schema: &str) -> Vec<(String, &'static str)> {
        let mut v = codes(schema);
        v.retain(|(_, c)| *c != "uncapped_reply");
        v
    }

    #[test]
    fn uncapped_strings_and_arrays_are_noted_where_they_stand() {
        let got = capped(
            r#"{"type": "object", "properties": {
                "summary": {"type": "string"},
                "tags": {"type": "array", "items": {"type": "string", "maxLength": 20}},
                "name": {"type": ["string", "null"], "maxLength": 80},
                "rows": {"type": "array", "maxItems": 5, "items": {"type": "string"}}
            }}"#,
        );
        assert_eq!(
            got,
            [
                ("/properties/summary".to_owned(), "uncapped_string"),
                ("/properties/tags".to_owned(), "uncapped_array"),
                ("/properties/rows/items".to_owned(), "uncapped_string"),
            ]
        );
    }

    #[test]
    fn enum_const_bounded_formats_and_closed_tuples_cap() {
        let got = capped(
            r#"{"type": "object", "properties": {
                "verdict": {"type": "string", "enum": ["yes", "no"]},
                "kind": {"const": "plate"},
                "day": {"type": "string", "format": "date"},
                "id": {"type": "string", "format": "uuid"},
                "pair": {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "integer"}], "items": false},
                "when": {"type": "string", "format": "date-time"},
                "count": {"type": "integer"},
                "flag": {"type": "boolean"}
            }}"#,
        );
        // date-time's fraction of a second has no bound.
        assert_eq!(got, [("/properties/when".to_owned(), "uncapped_string")]);
    }

    #[test]
    fn caps_reach_through_ref_all_of_and_every_branch() {
        let got = capped(
            r##"{"type": "object", "properties": {
                "a": {"$ref": "#/$defs/short"},
                "b": {"type": "string", "allOf": [{"maxLength": 3}]},
                "c": {"anyOf": [{"type": "string", "maxLength": 3}, {"type": "null"}]},
                "d": {"maxLength": 9, "anyOf": [{"type": "string"}, {"type": "null"}]},
                "e": {"anyOf": [{"type": "string"}, {"type": "null"}]}
            }, "$defs": {"short": {"type": "string", "maxLength": 10}}}"##,
        );
        assert_eq!(got, [("/properties/e/anyOf/0".to_owned(), "uncapped_string")]);
    }

    #[test]
    fn any_value_is_both_and_a_typed_object_neither() {
        let got = capped(
            r#"{"type": "object", "properties": {"extra": {"description": "anything"}}, "additionalProperties": false}"#,
        );
        assert_eq!(
            got,
            [("/properties/extra".to_owned(), "uncapped_string"), ("/properties/extra".to_owned(), "uncapped_array")]
        );
        assert_eq!(capped(r#"{"type": "object", "properties": {"n": {"type": "number"}}}"#), []);
    }

    #[test]
    fn the_reply_is_noted_unless_max_bytes_is_declared() {
        assert_eq!(codes(r#"{"type": "boolean"}"#), [(String::new(), "uncapped_reply")]);
        assert_eq!(codes(r#"{"type": "boolean", "x-vouch": {"limits": {"max_bytes": 4096}}}"#), []);
        let n = notes(&Contract::from_json_str(r#"{"type": "string"}"#).unwrap());
        assert_eq!(
            n[0].message(),
            "(root): a string with no maxLength (nor enum, const or a bounded format) may loop until max_tokens"
        );
        assert_eq!(
            n[1].message(),
            "(root): the whole reply, with no x-vouch.limits.max_bytes (only the default 4194304 bytes; whitespace \
             and digits loop too), may loop until max_tokens"
        );
    }
}
