//! Compile errors: a contract author's mistake, pointing into the contract.

use serde::Serialize;

/// What kind of mistake a contract has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum CompileErrorKind {
    /// The contract document is not JSON.
    NotJson,
    /// A keyword vouch does not know (it would otherwise be silently ignored).
    UnknownKeyword,
    /// A JSON Schema keyword or form vouch does not enforce.
    Unsupported,
    /// A keyword's value has the wrong shape.
    InvalidValue,
    /// A `format` vouch cannot assert.
    UnknownFormat,
    /// A `$ref` outside this document.
    RemoteRef,
    /// A `$ref` to a location that does not exist.
    UnresolvedRef,
    /// `$ref`s (or combinators) that apply a schema to the same value in a loop.
    RefCycle,
    /// A `pattern` that does not compile to a linear-time regex.
    BadPattern,
    /// An `x-vouch` policy that is malformed or cannot apply where it stands.
    BadPolicy,
    /// The contract nests deeper than vouch compiles.
    TooDeep,
}

/// Why a contract did not compile. `location` is an RFC 6901 JSON Pointer
/// into the contract document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[error("{}: {}{message}{}", if location.is_empty() { "(root)" } else { location.as_str() }, if keyword.is_empty() { String::new() } else { format!("{keyword}: ") }, if also.is_empty() { String::new() } else { format!(" (and {} more: {})", also.len(), also.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")) })]
pub struct CompileError {
    /// The kind of mistake.
    pub kind: CompileErrorKind,
    /// The keyword at fault (e.g. `minimum`, `x-vouch`).
    pub keyword: String,
    /// JSON Pointer of the schema node holding the keyword.
    pub location: String,
    /// What is wrong, in words.
    pub message: String,
    /// The contract's other mistakes, found in the same compile (every one
    /// is reported at once; this error is the first).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub also: Vec<CompileError>,
}

impl CompileError {
    pub(crate) fn new(kind: CompileErrorKind, keyword: &str, location: &str, message: impl Into<String>) -> Self {
        Self {
            kind,
            keyword: keyword.to_owned(),
            location: location.to_owned(),
            message: message.into(),
            also: Vec::new(),
        }
    }

    /// The first of `errors`, carrying the rest in [`CompileError::also`].
    pub(crate) fn all(mut errors: Vec<CompileError>) -> Self {
        if errors.is_empty() {
            return Self::new(CompileErrorKind::InvalidValue, "", "", "the contract does not compile");
        }
        let mut first = errors.remove(0);
        first.also.extend(errors);
        first
    }

    /// This error alone, without the others it carries, in one line:
    /// `LOCATION: KEYWORD: WHAT` (`(root)` for the root; the text alone when
    /// the document is not JSON, its message then saying where).
    ///
    /// ```
    /// let e = vouch::Contract::from_json_str(r#"{"minimum": "x"}"#).unwrap_err();
    /// assert!(e.line().starts_with("(root): minimum: "), "{}", e.line());
    /// ```
    #[must_use]
    pub fn line(&self) -> String {
        if self.kind == CompileErrorKind::NotJson {
            return self.message.clone();
        }
        let at = if self.location.is_empty() { "(root)" } else { self.location.as_str() };
        if self.keyword.is_empty() {
            format!("{at}: {}", self.message)
        } else {
            format!("{at}: {}: {}", self.keyword, self.message)
        }
    }

    /// This error and every other one found with it, in order.
    pub fn every(&self) -> impl Iterator<Item = &CompileError> {
        std::iter::once(self).chain(self.also.iter())
    }
}
