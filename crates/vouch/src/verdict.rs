//! What a check returns: a [`Verdict`] that either vouches for a value or
//! refuses it with every [`Problem`] found.
//!
//! The JSON shape (see [`Verdict::to_json`]) is the one the command line, the
//! model client and any server share:
//! `{"outcome", "pass", "value", "repairs", "findings", "problems"}`.

use std::borrow::Cow;
use std::sync::OnceLock;

use serde::Serialize;
use serde_json::{json, Value};

use crate::handover::{Deserializer, HandOverError};
use crate::problem::{Finding, Problem, ProblemClass, Repair};

/// A reply vouch vouches for.
///
/// A reply accepted as it was sent is kept as its text (with any default
/// filled in written into it): checking it built no tree, and its [`Value`]
/// is read from that text the first time [`Accepted::value`] asks (once;
/// later calls borrow it). Callers that forward the JSON take
/// [`Accepted::json`] and never pay for a tree. A reply repaired otherwise
/// or unwrapped carries its built value.
///
/// ```
/// let contract = vouch::Contract::from_json_str(
///     r#"{"type": "object", "properties": {"score": {"type": "integer"}}, "required": ["score"]}"#,
/// )?;
/// let vouch::Verdict::Accepted(accepted) = contract.check(r#"{"score": 80}"#) else { panic!("refused") };
/// assert_eq!(accepted.json(), r#"{"score": 80}"#);
/// assert_eq!(accepted.value()["score"], 80);
/// # Ok::<(), vouch::CompileError>(())
/// ```
#[derive(Clone)]
pub struct Accepted {
    body: Body,
    /// Every change a declared repair made, in order.
    pub repairs: Vec<Repair>,
    /// Gate findings on the accepted value.
    pub findings: Vec<Finding>,
}

#[derive(Clone)]
enum Body {
    /// Accepted as sent: the reply's JSON, its value read on first ask, and
    /// whether the text may be handed on as it stands (see [`Accepted::json`]).
    // The value boxed: a verdict stays small (it is returned by value), and
    // the box is made only when asked for.
    Text { json: Box<str>, max_depth: usize, value: OnceLock<Box<Value>>, verbatim: bool },
    /// Built: repaired, unwrapped, filled, or checked as a value.
    Value(Value),
}

impl Accepted {
    /// A reply accepted exactly as sent (strict JSON, read within `max_depth`).
    pub(crate) fn as_sent(json: &str, max_depth: usize, verbatim: bool) -> Self {
        Self::of_text(json.trim_matches(is_json_ws).into(), max_depth, Vec::new(), verbatim)
    }

    /// [`Self::as_sent`], keeping `json` itself where no white space
    /// surrounds it (a stream's text, moved in whole).
    pub(crate) fn as_sent_owned(json: String, max_depth: usize, verbatim: bool) -> Self {
        let trimmed = json.trim_matches(is_json_ws);
        if trimmed.len() != json.len() {
            return Self::as_sent(trimmed, max_depth, verbatim);
        }
        Self::of_text(json.into_boxed_str(), max_depth, Vec::new(), verbatim)
    }

    /// A reply accepted as sent but for defaults written into its text
    /// (`max_depth`: how deep that text may nest, the defaults included).
    pub(crate) fn as_filled(json: String, max_depth: usize, repairs: Vec<Repair>, verbatim: bool) -> Self {
        Self::of_text(json.trim_matches(is_json_ws).into(), max_depth, repairs, verbatim)
    }

    /// A reply accepted as this JSON text (already trimmed).
    fn of_text(json: Box<str>, max_depth: usize, repairs: Vec<Repair>, verbatim: bool) -> Self {
        let body = Body::Text { json, max_depth, value: OnceLock::new(), verbatim };
        Self { body, repairs, findings: Vec::new() }
    }

    /// A value accepted as built (by the repair pass or the caller).
    pub(crate) fn built(value: Value, repairs: Vec<Repair>) -> Self {
        Self { body: Body::Value(value), repairs, findings: Vec::new() }
    }

    /// The value, as vouch read (and, where declared, repaired) it.
    #[must_use]
    pub fn value(&self) -> &Value {
        match &self.body {
            Body::Text { json, max_depth, value, .. } => value.get_or_init(|| Box::new(read_as_sent(json, *max_depth))),
            Body::Value(v) => v,
        }
    }

    /// The value, owned.
    #[must_use]
    pub fn into_value(self) -> Value {
        match self.body {
            Body::Text { json, max_depth, value, .. } => {
                value.into_inner().map_or_else(|| read_as_sent(&json, max_depth), |v| *v)
            }
            Body::Value(v) => v,
        }
    }

    /// The value, deserialized into `T` straight from the vouched text (no
    /// [`Value`] in between; numbers as vouch read them, see
    /// [`Contract::check_as`](crate::Contract::check_as)).
    ///
    /// ```
    /// #[derive(serde::Deserialize)]
    /// struct Score { score: u8 }
    ///
    /// let contract = vouch::Contract::from_json_str(
    ///     r#"{"type": "object", "properties": {"score": {"type": "integer", "maximum": 100}}, "required": ["score"]}"#,
    /// )?;
    /// let vouch::Verdict::Accepted(accepted) = contract.check(r#"{"score": 80}"#) else { panic!("refused") };
    /// assert_eq!(accepted.deserialize::<Score>().map(|s| s.score), Ok(80));
    /// # Ok::<(), vouch::CompileError>(())
    /// ```
    ///
    /// # Errors
    /// When the value does not fit `T` (the contract lets through what the
    /// type cannot hold): what did not fit, and where.
    pub fn deserialize<T: serde::de::DeserializeOwned>(&self) -> Result<T, HandOverError> {
        match &self.body {
            Body::Text { json, max_depth, .. } => Deserializer::new(json, *max_depth).whole(),
            // Built (repaired, unwrapped): handed over from its writing, by the same reader.
            Body::Value(v) => Deserializer::new(&crate::write::value(v), crate::Limits::MAX_DEPTH_CAP).whole(),
        }
    }

    /// The value handed over to `seed`, which builds the caller's own
    /// representation (a binding's objects) from serde's visitor calls.
    ///
    /// # Errors
    /// What `seed` refuses.
    pub fn deserialize_seed<'a, S: serde::de::DeserializeSeed<'a>>(
        &'a self,
        seed: S,
    ) -> Result<S::Value, HandOverError> {
        match &self.body {
            Body::Text { json, max_depth, .. } => Deserializer::new(json, *max_depth).whole_seed(seed),
            Body::Value(v) => seed.deserialize(v).map_err(<HandOverError as serde::de::Error>::custom),
        }
    }

    /// The value walked once into `builder`'s objects: a binding's own
    /// language's values. Read from the vouched text itself (no [`Value`] in
    /// between, no serde visitor), numbers as vouch read them.
    ///
    /// ```
    /// /// Counts the values (a binding builds its objects instead).
    /// struct Count(usize);
    /// impl vouch::Build for Count {
    ///     type Value = (); type List = (); type Map = (); type Error = String;
    ///     fn null(&mut self) -> Result<(), String> { self.0 += 1; Ok(()) }
    ///     fn bool(&mut self, _: bool) -> Result<(), String> { self.0 += 1; Ok(()) }
    ///     fn i64(&mut self, _: i64) -> Result<(), String> { self.0 += 1; Ok(()) }
    ///     fn u64(&mut self, _: u64) -> Result<(), String> { self.0 += 1; Ok(()) }
    ///     fn f64(&mut self, _: f64) -> Result<(), String> { self.0 += 1; Ok(()) }
    ///     fn str(&mut self, _: &str) -> Result<(), String> { self.0 += 1; Ok(()) }
    ///     fn key(&mut self, _: &str) -> Result<(), String> { Ok(()) }
    ///     fn list(&mut self, _: Option<usize>) -> Result<(), String> { Ok(()) }
    ///     fn push(&mut self, _: &mut (), _: ()) -> Result<(), String> { Ok(()) }
    ///     fn end_list(&mut self, _: ()) -> Result<(), String> { self.0 += 1; Ok(()) }
    ///     fn map(&mut self, _: Option<usize>) -> Result<(), String> { Ok(()) }
    ///     fn insert(&mut self, _: &mut (), _: (), _: ()) -> Result<(), String> { Ok(()) }
    ///     fn end_map(&mut self, _: ()) -> Result<(), String> { self.0 += 1; Ok(()) }
    /// }
    /// let contract = vouch::Contract::from_json_str(r#"{"type": "object"}"#)?;
    /// let vouch::Verdict::Accepted(accepted) = contract.check(r#"{"a": [1, null, "x"], "b": true}"#) else { panic!("refused") };
    /// let mut count = Count(0);
    /// accepted.build(&mut count).map_err(|e| e.message().to_owned())?;
    /// assert_eq!(count.0, 6); // the object, the list, 1, null, "x", true
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// A constructor's error, placed at the value it was building.
    pub fn build<B: crate::Build>(&self, builder: &mut B) -> Result<B::Value, HandOverError> {
        match &self.body {
            Body::Text { json, max_depth, .. } => crate::build::text(json, *max_depth, builder),
            Body::Value(v) => crate::build::tree(v, builder),
        }
    }

    /// The accepted JSON as text: the reply itself (without surrounding
    /// white space) when vouch accepted it as sent — a missing property
    /// filled with its default written in as the last member of its object,
    /// a repaired scalar in place of the one sent, compact — and every
    /// number in it reads the same to any JSON reader (at most 15
    /// characters); else vouch's own writing of the value, compact, so no
    /// consumer reads a number other than the one vouch checked.
    #[must_use]
    pub fn json(&self) -> Cow<'_, str> {
        match &self.body {
            Body::Text { json, verbatim: true, .. } => Cow::Borrowed(json),
            Body::Text { .. } => Cow::Owned(crate::write::value(self.value())),
            Body::Value(v) => Cow::Owned(crate::write::value(v)),
        }
    }
}

pub(crate) fn is_json_ws(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

/// The value of a reply accepted as sent. The single pass accepted exactly
/// what this reader reads within the same depth (`tests/single_pass.rs`
/// holds the two to the same value on every reply), so the fallback is
/// never taken.
fn read_as_sent(json: &str, max_depth: usize) -> Value {
    crate::read::read_value(json, 0, max_depth, true, crate::read::parser::Integers::Document)
        .map(|(v, _)| v)
        .unwrap_or(Value::Null)
}

impl PartialEq for Accepted {
    fn eq(&self, other: &Self) -> bool {
        self.value() == other.value() && self.repairs == other.repairs && self.findings == other.findings
    }
}

impl std::fmt::Debug for Accepted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Accepted")
            .field("value", self.value())
            .field("repairs", &self.repairs)
            .field("findings", &self.findings)
            .finish()
    }
}

/// A reply vouch refuses.
#[derive(Debug, Clone, PartialEq)]
pub struct Refused {
    /// Every problem found (at most [`crate::Limits::max_problems`]), in a
    /// deterministic order.
    pub problems: Vec<Problem>,
}

impl Refused {
    /// The message that asks again after this refusal, in vouch's words
    /// ([`crate::reask_text`]): every problem, where, expected and got.
    #[must_use]
    pub fn reask_text(&self) -> String {
        crate::reask::reask_text(self.problems.iter().map(crate::reask::problem_line))
    }

    /// `no_answer` when any problem means the model did not answer, else
    /// `bad_answer`.
    #[must_use]
    pub fn class(&self) -> ProblemClass {
        if self.problems.iter().any(|p| p.class == ProblemClass::NoAnswer) {
            ProblemClass::NoAnswer
        } else {
            ProblemClass::BadAnswer
        }
    }
}

/// What [`Contract::check_str_briefly`](crate::Contract::check_str_briefly)
/// says of a reply: as little as the caller needs to be told.
#[derive(Debug, Clone, PartialEq)]
pub enum Brief {
    /// Accepted with no repair and no finding, and the vouched text is the
    /// reply's own without JSON's white space around it: the caller holds
    /// the vouched text already.
    PassedAsSent,
    /// Refused for certain; the problems are not written
    /// ([`Contract::check_str`](crate::Contract::check_str) writes them).
    /// Only with [`Refusals::Unreported`].
    Refused,
    /// Any other verdict, as [`Contract::check_str`](crate::Contract::check_str) gives it.
    Verdict(Verdict),
}

impl Brief {
    /// Append the verdict this says of `reply` (the text it was said of) as
    /// `vouch check --json`'s object, byte for byte as
    /// [`Verdict::write_json`] writes [`Contract::check_str`](crate::Contract::check_str)'s
    /// verdict: for [`Brief::PassedAsSent`] straight from `reply`, with no
    /// verdict built. `false`, and nothing written, for [`Brief::Refused`]
    /// (its problems were never written).
    ///
    /// ```
    /// use vouch::Refusals;
    /// let contract = vouch::Contract::from_json_str(r#"{"type": "object"}"#)?;
    /// let reply = "{\"a\": [1, 2]}\n";
    /// let mut out = Vec::new();
    /// assert!(contract.check_str_briefly(reply, Refusals::Reported).write_json(reply, &mut out));
    /// let mut full = Vec::new();
    /// contract.check_str(reply).write_json(&mut full);
    /// assert_eq!(out, full);
    /// # Ok::<(), vouch::CompileError>(())
    /// ```
    pub fn write_json(&self, reply: &str, out: &mut Vec<u8>) -> bool {
        match self {
            Self::PassedAsSent => {
                let start = out.len();
                if write_accepted(reply.trim_matches(is_json_ws), &[], &[], out).is_err() {
                    // As `Verdict::write_json`: nothing rather than a part (a vouched text always writes).
                    out.truncate(start);
                }
                true
            }
            Self::Refused => false,
            Self::Verdict(v) => {
                v.write_json(out);
                true
            }
        }
    }
}

/// Whether [`Contract::check_str_briefly`](crate::Contract::check_str_briefly)
/// writes a refusal's problems.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusals {
    /// Every refusal comes with its problems ([`Brief::Verdict`]).
    Reported,
    /// A refusal the single pass is certain of is [`Brief::Refused`],
    /// decided at the first certain failure, its problems unwritten.
    Unreported,
}

/// The outcome of checking one reply against a contract.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// The reply meets the contract (perhaps after declared repairs).
    Accepted(Accepted),
    /// The reply does not meet the contract.
    Refused(Refused),
}

impl Verdict {
    pub(crate) fn refuse(problems: Vec<Problem>) -> Self {
        Self::Refused(Refused { problems })
    }

    /// True when the reply was accepted.
    #[must_use]
    pub fn is_accepted(&self) -> bool {
        matches!(self, Self::Accepted(_))
    }

    /// True when the reply was accepted and the gate has no findings.
    #[must_use]
    pub fn is_pass(&self) -> bool {
        matches!(self, Self::Accepted(a) if a.findings.is_empty())
    }

    /// The vouched-for value, if accepted.
    #[must_use]
    pub fn value(&self) -> Option<&Value> {
        match self {
            Self::Accepted(a) => Some(a.value()),
            Self::Refused(_) => None,
        }
    }

    /// The problems (empty when accepted).
    #[must_use]
    pub fn problems(&self) -> &[Problem] {
        match self {
            Self::Accepted(_) => &[],
            Self::Refused(r) => &r.problems,
        }
    }

    /// The repairs made (empty when refused).
    #[must_use]
    pub fn repairs(&self) -> &[Repair] {
        match self {
            Self::Accepted(a) => &a.repairs,
            Self::Refused(_) => &[],
        }
    }

    /// The gate findings (empty when refused).
    #[must_use]
    pub fn findings(&self) -> &[Finding] {
        match self {
            Self::Accepted(a) => &a.findings,
            Self::Refused(_) => &[],
        }
    }

    /// `"accepted"` or `"refused"`.
    #[must_use]
    pub fn outcome(&self) -> &'static str {
        match self {
            Self::Accepted(_) => "accepted",
            Self::Refused(_) => "refused",
        }
    }

    /// The one documented JSON shape:
    /// `{"outcome", "pass", "value", "repairs", "findings", "problems"}`.
    /// `value` is `null` when refused.
    #[must_use]
    pub fn to_json(&self) -> Value {
        json!({
            "outcome": self.outcome(),
            "pass": self.is_pass(),
            "value": self.value().cloned().unwrap_or(Value::Null),
            "repairs": self.repairs(),
            "findings": self.findings(),
            "problems": self.problems(),
        })
    }
}

impl Verdict {
    /// Append the verdict's JSON to `out`: the bytes
    /// [`to_json_string`](crate::to_json_string)`(&verdict)` writes, with the
    /// accepted value copied from the vouched text where it can be (white
    /// space dropped; a string without escapes and a short integer as they
    /// stand; any other scalar read and written as the serializer would).
    /// What a writer of many verdicts (`vouch batch`, a gateway) calls.
    ///
    /// ```
    /// let contract = vouch::Contract::from_json_str(r#"{"type": "object"}"#)?;
    /// let verdict = contract.check("{ \"a\": [1, 2.50, \"\\u0041\"] }");
    /// let mut out = Vec::new();
    /// verdict.write_json(&mut out);
    /// assert_eq!(out, vouch::to_json_string(&verdict).into_bytes());
    /// assert!(out.starts_with(br#"{"outcome":"accepted","pass":true,"value":{"a":[1,2.5,"A"]}"#));
    /// # Ok::<(), vouch::CompileError>(())
    /// ```
    pub fn write_json(&self, out: &mut Vec<u8>) {
        let start = out.len();
        let written = match self {
            Self::Accepted(a @ Accepted { body: Body::Text { json, value, .. }, .. }) if value.get().is_none() => {
                write_accepted(json, &a.repairs, &a.findings, out)
            }
            _ => crate::write::write_into(&mut *out, self),
        };
        if written.is_err() {
            // As `to_json_string`: nothing rather than a part (a vouched text always writes).
            out.truncate(start);
        }
    }
}

/// An accepted verdict held as text (its repairs and findings), written by
/// [`Verdict::write_json`] and [`Brief::write_json`].
fn write_accepted(json: &str, repairs: &[Repair], findings: &[Finding], out: &mut Vec<u8>) -> std::io::Result<()> {
    out.extend_from_slice(br#"{"outcome":"accepted","pass":"#);
    out.extend_from_slice(if findings.is_empty() { b"true" } else { b"false" });
    out.extend_from_slice(br#","value":"#);
    write_compact(json, out)?;
    out.extend_from_slice(br#","repairs":"#);
    crate::write::write_into(&mut *out, repairs)?;
    out.extend_from_slice(br#","findings":"#);
    crate::write::write_into(&mut *out, findings)?;
    out.extend_from_slice(br#","problems":[]}"#);
    Ok(())
}

/// Vouched JSON text written compact, byte for byte as its transcoding
/// through the hand-over writes it, without the walk: no recursion, one
/// look at each byte outside the scalars that must be read.
fn write_compact(json: &str, out: &mut Vec<u8>) -> std::io::Result<()> {
    use crate::read::parser::plain_run_end;
    let bytes = json.as_bytes();
    let mut at = 0;
    while let Some(&b) = bytes.get(at) {
        match b {
            // An indentation is counted eight spaces at a time.
            b' ' | b'\t' | b'\n' | b'\r' => at = crate::read::parser::skip_ws(bytes, at),
            b'"' => {
                let run = plain_run_end(bytes, at + 1);
                if bytes.get(run) == Some(&b'"') {
                    // No escape in it: the writer would write it as it stands.
                    out.extend_from_slice(bytes.get(at..=run).unwrap_or_default());
                    at = run + 1;
                } else {
                    let end = string_end(bytes, run);
                    transcode_scalar(json.get(at..end).unwrap_or_default(), out)?;
                    at = end;
                }
            }
            b'-' | b'0'..=b'9' => {
                let end = at + bytes.get(at..).unwrap_or_default().iter().take_while(|c| is_number_byte(**c)).count();
                let token = json.get(at..end).unwrap_or_default();
                let digits = token.strip_prefix('-').unwrap_or(token);
                if digits.len() <= 18 && digits.bytes().all(|c| c.is_ascii_digit()) && token != "-0" {
                    // A short integer: read as this very integer and written in these digits.
                    out.extend_from_slice(token.as_bytes());
                } else {
                    transcode_scalar(token, out)?;
                }
                at = end;
            }
            // Brackets, braces, commas, colons, and the letters of true, false and null.
            _ => {
                out.push(b);
                at += 1;
            }
        }
    }
    Ok(())
}

fn is_number_byte(b: u8) -> bool {
    matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
}

/// Just past the closing quote of the string whose escape or end is at `from`.
fn string_end(bytes: &[u8], mut from: usize) -> usize {
    while let Some(&b) = bytes.get(from) {
        match b {
            b'\\' => from += 2,
            b'"' => return from + 1,
            _ => from += 1,
        }
    }
    from
}

/// One scalar of vouched text, read by the hand-over and written by vouch's writer.
fn transcode_scalar(token: &str, out: &mut Vec<u8>) -> std::io::Result<()> {
    struct Transcoded<'a>(&'a str);
    impl Serialize for Transcoded<'_> {
        fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            serde_transcode::transcode(&mut Deserializer::new(self.0, 1), serializer)
        }
    }
    crate::write::write_into(out, &Transcoded(token))
}

/// [`Verdict::to_json`]'s shape, serialized without building it: the value
/// straight from the vouched text when the verdict holds one.
impl Serialize for Verdict {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Shape<'a> {
            outcome: &'static str,
            pass: bool,
            value: Option<ValueOut<'a>>,
            repairs: &'a [Repair],
            findings: &'a [Finding],
            problems: &'a [Problem],
        }
        let value = match self {
            Self::Accepted(a) => Some(ValueOut(a)),
            Self::Refused(_) => None,
        };
        Shape {
            outcome: self.outcome(),
            pass: self.is_pass(),
            value,
            repairs: self.repairs(),
            findings: self.findings(),
            problems: self.problems(),
        }
        .serialize(serializer)
    }
}

/// An accepted value, serialized as its [`Value`] would be (the same bytes
/// from any serializer), but walked from the vouched text when no tree was
/// built: a writer of verdicts (`vouch batch`, a gateway) builds none.
struct ValueOut<'a>(&'a Accepted);

impl Serialize for ValueOut<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.0.body {
            Body::Text { value, .. } if value.get().is_some() => self.0.value().serialize(serializer),
            Body::Text { json, max_depth, .. } => {
                serde_transcode::transcode(&mut Deserializer::new(json, *max_depth), serializer)
            }
            Body::Value(v) => v.serialize(serializer),
        }
    }
}
