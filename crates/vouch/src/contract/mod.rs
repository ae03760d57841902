//! Contracts: a JSON Schema (draft 2020-12) document, compiled once and
//! reused for every reply.

mod compile;
pub(crate) use keywords::is_keyword;
pub(crate) use policy::declared_annotations;
mod discriminator;
mod error;
mod keywords;
mod policy;
mod resolve;
mod stream;
mod typed;

use serde_json::Value;

use crate::check;
use crate::handover::HandOverError;
use crate::node::{Node, NodeId};
use crate::problem::{Problem, ProblemCode, Repair};
use crate::read::{self, Integers, Limits, Unwrap};
use crate::single_pass::{self, Outcome, Plan, SinglePass};
use crate::verdict::{Accepted, Brief, Refusals, Verdict};
pub use error::{CompileError, CompileErrorKind};
pub use stream::{Progress, StreamCheck};
pub use typed::Vouched;

/// Deepest JSON nesting read in a contract document (a schema level is
/// about two JSON levels: `properties`, then the name).
const MAX_CONTRACT_JSON_DEPTH: usize = 512;

/// A compiled contract. Cheap to share (`Sync`), never mutated by checks.
///
/// ```
/// use vouch::Contract;
///
/// let contract = Contract::from_json_str(r#"{
///     "type": "object",
///     "properties": {"productPresent": {"type": "boolean"}},
///     "required": ["productPresent"],
///     "additionalProperties": false
/// }"#)?;
///
/// assert!(contract.check(r#"{"productPresent": false}"#).is_pass());
///
/// // `{}` is valid JSON, but the model did not answer.
/// let verdict = contract.check("{}");
/// let problem = &verdict.problems()[0];
/// assert_eq!(problem.code.as_str(), "missing");
/// assert_eq!(problem.path, "/productPresent");
/// # Ok::<(), vouch::CompileError>(())
/// ```
#[derive(Debug, Clone)]
pub struct Contract {
    document: Value,
    nodes: Vec<Node>,
    /// How the single pass reads each node (parallel to `nodes`).
    plans: Vec<Plan>,
    root: NodeId,
    limits: Limits,
    unwrap: Unwrap,
    /// Which integers beyond ±(2^53−1) replies may hold (`allow: big_integers`).
    integers: Integers,
    repairs: bool,
    findings: bool,
    /// Unknown keywords read as annotations: (location, keyword).
    unknown_keywords: Vec<(String, String)>,
    /// See [`Contract::size_estimate`].
    patterns_size: usize,
}

impl Contract {
    /// Compile a contract from JSON text.
    ///
    /// # Errors
    /// A [`CompileError`] when the text is not JSON (kind `not_json`, with
    /// line and column) or the schema does not compile.
    pub fn from_json_str(text: &str) -> Result<Self, CompileError> {
        // Our own strict reader: a repeated key in a contract is as ambiguous as
        // in a reply, and deep contracts get the same bounded, non-recursive read.
        let document = read::read_value(text, 0, MAX_CONTRACT_JSON_DEPTH, true, Integers::Document)
            .map(|(v, _)| v)
            .map_err(|e| {
                let pos = read::position(text, e.offset);
                let at = if e.path.is_empty() { String::new() } else { format!(" at {}", e.path) };
                // The reader words two of its errors for replies; this text is the
                // contract. (Only those two: a repeated key is quoted as it is.)
                let detail = match e.code {
                    crate::ProblemCode::Truncated | crate::ProblemCode::TooDeep => {
                        e.detail.replace("the reply", "the contract")
                    }
                    _ => e.detail,
                };
                CompileError::new(
                    CompileErrorKind::NotJson,
                    "",
                    "",
                    format!("the contract is not JSON: {detail}{at} (line {}, column {})", pos.line, pos.column),
                )
            })?;
        Self::from_value(document)
    }

    /// Compile a contract from a JSON value.
    ///
    /// # Errors
    /// A [`CompileError`] naming the keyword and its JSON Pointer location
    /// for every keyword vouch would otherwise have to ignore, every
    /// malformed keyword value, unknown `format`, remote or dangling `$ref`,
    /// and every `x-vouch` policy that cannot apply where it stands.
    pub fn from_value(document: Value) -> Result<Self, CompileError> {
        let compiled = compile::compile(&document, &[])?;
        Self::compiled(document, compiled)
    }

    /// Compile a contract whose `$ref`s may lead into other documents,
    /// supplied here by absolute URI: vouch never fetches anything. A
    /// reference resolves against the base URI in force (`$id`), to a
    /// supplied document, or to a resource (`$id`) or anchor within the
    /// contract or any supplied document; a reference to any other document
    /// is a compile error (`remote_ref`) naming it. The supplied documents
    /// are read in the contract's draft, and only what the contract reaches
    /// is compiled.
    ///
    /// ```
    /// use serde_json::json;
    /// use vouch::Contract;
    ///
    /// let contract = Contract::with_documents(
    ///     json!({
    ///         "$id": "https://example.com/schemas/order.json",
    ///         "type": "object",
    ///         "properties": {"price": {"$ref": "money.json#/$defs/amount"}},
    ///         "required": ["price"]
    ///     }),
    ///     [(
    ///         "https://example.com/schemas/money.json",
    ///         json!({"$defs": {"amount": {"type": "number", "minimum": 0}}}),
    ///     )],
    /// )?;
    /// assert!(contract.check(r#"{"price": 12.5}"#).is_pass());
    /// assert_eq!(contract.check(r#"{"price": -1}"#).problems()[0].path, "/price");
    /// # Ok::<(), vouch::CompileError>(())
    /// ```
    ///
    /// # Errors
    /// As [`Contract::from_value`], and when a supplied URI is not absolute
    /// (`invalid_value`, located at the URI).
    pub fn with_documents<U: Into<String>>(
        document: Value,
        documents: impl IntoIterator<Item = (U, Value)>,
    ) -> Result<Self, CompileError> {
        let documents: Vec<(String, Value)> = documents.into_iter().map(|(u, d)| (u.into(), d)).collect();
        let compiled = compile::compile(&document, &documents)?;
        Self::compiled(document, compiled)
    }

    fn compiled(document: Value, compiled: compile::Compiled) -> Result<Self, CompileError> {
        let rp = compiled.root_policy;
        let defaults = Limits::default();
        let limits = Limits {
            max_bytes: rp.max_bytes.unwrap_or(defaults.max_bytes),
            max_depth: rp.max_depth.unwrap_or(defaults.max_depth),
            max_problems: rp.max_problems.unwrap_or(defaults.max_problems),
            max_repairs: rp.max_repairs.unwrap_or(defaults.max_repairs),
        };
        let repairs = compiled.nodes.iter().any(|n| n.policy.as_ref().is_some_and(|p| p.repairs()));
        let findings = compiled.nodes.iter().any(|n| n.policy.as_ref().is_some_and(|p| !p.findings.is_empty()));
        let contract = Self {
            document,
            plans: single_pass::plans(&compiled.nodes),
            nodes: compiled.nodes,
            root: compiled.root,
            limits: Limits::default(),
            unwrap: rp.unwrap,
            integers: if rp.big_integers { Integers::Wide } else { Integers::AsDoubles },
            repairs,
            findings,
            unknown_keywords: compiled.unknown,
            patterns_size: compiled.patterns_size,
        };
        contract.with_limits(limits)
    }

    /// The keywords this contract's compiler did not know and read as
    /// annotations, as JSON Schema does: `(location, keyword)`, in document
    /// order. A near miss of a keyword vouch enforces is never among them —
    /// that is a compile error — so these are names like `propertyOrder` or
    /// `markdownDescription` that constrain nothing. Shown by `vouch schema
    /// --explain`-style tooling so an author can check none was meant as a
    /// constraint.
    ///
    /// ```
    /// let c = vouch::Contract::from_json_str(r#"{"type": "string", "widget": "textarea"}"#).unwrap();
    /// assert_eq!(c.unknown_keywords(), &[(String::new(), "widget".to_owned())]);
    /// ```
    #[must_use]
    pub fn unknown_keywords(&self) -> &[(String, String)] {
        &self.unknown_keywords
    }

    /// The same contract with other limits.
    ///
    /// # Errors
    /// When `max_depth` is above [`Limits::MAX_DEPTH_CAP`] or a limit is 0.
    pub fn with_limits(mut self, limits: Limits) -> Result<Self, CompileError> {
        if limits.max_depth == 0
            || limits.max_depth > Limits::MAX_DEPTH_CAP
            || limits.max_bytes == 0
            || limits.max_problems == 0
            || limits.max_repairs == 0
        {
            return Err(CompileError::new(
                CompileErrorKind::BadPolicy,
                "x-vouch",
                "",
                format!("limits must be positive, and max_depth at most {}", Limits::MAX_DEPTH_CAP),
            ));
        }
        self.limits = limits;
        Ok(self)
    }

    /// The limits in force.
    #[must_use]
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// About how many bytes of memory this compiled contract holds (its
    /// document, its compiled nodes and its patterns' programs, as charged
    /// against the bound on a contract's patterns), for a caller that keeps
    /// many contracts (a cache of schemas sent by clients) and bounds them by
    /// memory, not by count: ten bytes of pattern can compile to megabytes.
    ///
    /// ```
    /// let small = vouch::Contract::from_json_str(r#"{"type": "string", "pattern": "^a$"}"#)?;
    /// let large = vouch::Contract::from_json_str(r#"{"type": "string", "pattern": "^\\w{4000}$"}"#)?;
    /// assert!(large.size_estimate() > 100 * small.size_estimate());
    /// # Ok::<(), vouch::CompileError>(())
    /// ```
    #[must_use]
    pub fn size_estimate(&self) -> usize {
        let nodes = self.nodes.len().saturating_mul(std::mem::size_of::<Node>() + std::mem::size_of::<Plan>());
        let document = crate::to_json_string(&self.document).len().saturating_mul(4);
        nodes.saturating_add(document).saturating_add(self.patterns_size)
    }

    /// The contract document as written (with its `x-vouch` policy).
    #[must_use]
    pub fn document(&self) -> &Value {
        &self.document
    }

    /// Check a raw reply (text or bytes, exactly as the model sent it).
    /// Never panics and never fails: every outcome is a [`Verdict`].
    #[must_use]
    pub fn check(&self, raw: impl AsRef<[u8]>) -> Verdict {
        let raw = raw.as_ref();
        match (raw.len() <= self.limits.max_bytes).then(|| std::str::from_utf8(raw)) {
            Some(Ok(text)) => self.check_str(text),
            // Too large, or not UTF-8: read as a stream reads it, up to where it stops.
            _ => {
                let mut stream = self.stream();
                stream.feed(raw);
                stream.finish()
            }
        }
    }

    /// [`Contract::check`] for a reply already held as text (no UTF-8
    /// validation needed): the same verdict.
    #[must_use]
    pub fn check_str(&self, text: &str) -> Verdict {
        if text.len() > self.limits.max_bytes {
            return self.check(text.as_bytes());
        }
        let outcome = self.whole_pass().finish(text);
        self.verdict_of(text, outcome, None)
    }

    /// [`Contract::check_str`]'s verdict, or `None` where the single pass is
    /// certain the reply is refused. That certainty costs the pass alone,
    /// which stops at the first certain failure; the refusal's problems
    /// (their paths, words and excerpts, and every other problem) are left
    /// unwritten, and [`Contract::check_str`] writes them when they are
    /// wanted. For callers that branch on the outcome first and read a
    /// refusal's report only sometimes, as the Python binding's `check` does.
    ///
    /// ```
    /// let contract = vouch::Contract::from_json_str(r#"{"type": "object", "required": ["ok"]}"#)?;
    /// assert!(contract.check_str_unless_refused("{}").is_none());
    /// assert_eq!(contract.check_str("{}").problems()[0].code.as_str(), "missing");
    /// assert!(contract.check_str_unless_refused(r#"{"ok": 1}"#).is_some_and(|v| v.is_accepted()));
    /// # Ok::<(), vouch::CompileError>(())
    /// ```
    #[must_use]
    pub fn check_str_unless_refused(&self, text: &str) -> Option<Verdict> {
        if text.len() > self.limits.max_bytes {
            return Some(self.check(text.as_bytes()));
        }
        let outcome = self.single_pass(false).finish(text);
        if self.certainly_refused(text, &outcome) {
            return None;
        }
        // What the pass leaves to the full path is decided there, as
        // `check_str` decides it (the report does not change what the pass
        // accepts or doubts).
        Some(self.verdict_of(text, outcome, None))
    }

    /// What the single pass alone can say of a reply held as text, without
    /// writing a verdict where the caller needs none: [`Brief::PassedAsSent`]
    /// where [`Contract::check_str`] accepts it with no repair and no finding
    /// and its vouched text ([`Accepted::json`](crate::Accepted::json)) is
    /// the reply's own without JSON's white space around it, so the caller
    /// holds the vouched text already. With [`Refusals::Unreported`], a
    /// refusal the pass is certain of is [`Brief::Refused`], its problems
    /// unwritten (as [`Contract::check_str_unless_refused`] leaves them).
    /// Anything else is [`Contract::check_str`]'s verdict. For the bindings'
    /// hot calls, where most replies pass as sent and building a verdict
    /// (a copy of the text, then dropping it) costs a small reply about a
    /// fifth of its check.
    ///
    /// ```
    /// use vouch::{Brief, Refusals};
    /// let contract = vouch::Contract::from_json_str(
    ///     r#"{"type": "object", "required": ["ok"], "properties": {"ok": {"type": "integer"}}}"#,
    /// )?;
    /// assert!(matches!(contract.check_str_briefly(" {\"ok\": 1}\n", Refusals::Unreported), Brief::PassedAsSent));
    /// assert!(matches!(contract.check_str_briefly("{}", Refusals::Unreported), Brief::Refused));
    /// let Brief::Verdict(refused) = contract.check_str_briefly("{}", Refusals::Reported) else { unreachable!() };
    /// assert_eq!(refused.problems()[0].code.as_str(), "missing");
    /// # Ok::<(), vouch::CompileError>(())
    /// ```
    #[must_use]
    pub fn check_str_briefly(&self, text: &str, refusals: Refusals) -> Brief {
        if text.len() > self.limits.max_bytes {
            return Brief::Verdict(self.check(text.as_bytes()));
        }
        let outcome = match refusals {
            Refusals::Reported => self.whole_pass().finish(text),
            Refusals::Unreported => self.single_pass(false).finish(text),
        };
        match outcome {
            // `verdict_of` would accept it as sent (`Accepted::as_sent`):
            // the text trimmed, handed on as it stands where `verbatim`,
            // and no finding where the contract declares none.
            Outcome::Accepted(v) if v.changes.is_empty() && v.verbatim && !self.findings => Brief::PassedAsSent,
            outcome if matches!(refusals, Refusals::Unreported) && self.certainly_refused(text, &outcome) => {
                Brief::Refused
            }
            outcome => Brief::Verdict(self.verdict_of(text, outcome, None)),
        }
    }

    /// The value of a reply [`Contract::check_str_briefly`] told
    /// [`Brief::PassedAsSent`], walked from that reply's own text into
    /// `builder`'s objects: what [`Accepted::build`] gives on
    /// [`Contract::check_str`]'s verdict, without that verdict (a binding
    /// holding the reply builds its value when it is first asked for).
    ///
    /// It checks nothing: give it the text that was told `PassedAsSent`.
    /// Any other text is walked as JSON or refused with an error, never
    /// vouched for.
    ///
    /// ```
    /// # struct Count;
    /// # impl vouch::Build for Count {
    /// #     type Value = usize; type List = usize; type Map = usize; type Error = String;
    /// #     fn null(&mut self) -> Result<usize, String> { Ok(1) }
    /// #     fn bool(&mut self, _: bool) -> Result<usize, String> { Ok(1) }
    /// #     fn i64(&mut self, _: i64) -> Result<usize, String> { Ok(1) }
    /// #     fn u64(&mut self, _: u64) -> Result<usize, String> { Ok(1) }
    /// #     fn f64(&mut self, _: f64) -> Result<usize, String> { Ok(1) }
    /// #     fn str(&mut self, _: &str) -> Result<usize, String> { Ok(1) }
    /// #     fn list(&mut self, _: Option<usize>) -> Result<usize, String> { Ok(1) }
    /// #     fn push(&mut self, l: &mut usize, v: usize) -> Result<(), String> { *l += v; Ok(()) }
    /// #     fn end_list(&mut self, l: usize) -> Result<usize, String> { Ok(l) }
    /// #     fn map(&mut self, _: Option<usize>) -> Result<usize, String> { Ok(1) }
    /// #     fn insert(&mut self, m: &mut usize, _: usize, v: usize) -> Result<(), String> { *m += v; Ok(()) }
    /// #     fn end_map(&mut self, m: usize) -> Result<usize, String> { Ok(m) }
    /// # }
    /// use vouch::{Brief, Refusals};
    /// // `Count` builds each value as the number of values in it.
    /// let contract = vouch::Contract::from_json_str(r#"{"type": "array", "items": {"type": "integer"}}"#)?;
    /// let reply = " [1, 2, 3]\n";
    /// assert!(matches!(contract.check_str_briefly(reply, Refusals::Unreported), Brief::PassedAsSent));
    /// assert_eq!(contract.build_passed(reply, &mut Count).ok(), Some(4));
    /// # Ok::<(), vouch::CompileError>(())
    /// ```
    ///
    /// # Errors
    /// A constructor's error, placed at the value it was building; text
    /// that is not JSON within the contract's depth limit.
    pub fn build_passed<B: crate::Build>(&self, text: &str, builder: &mut B) -> Result<B::Value, HandOverError> {
        crate::build::text(text.trim_matches(crate::verdict::is_json_ws), self.limits.max_depth, builder)
    }

    /// Whether `verdict_of` refuses this outcome of a non-reporting pass
    /// whatever the full path finds besides.
    fn certainly_refused(&self, text: &str, outcome: &Outcome<'_>) -> bool {
        match outcome {
            Outcome::Refused(_) | Outcome::ReadRefused(_) | Outcome::Reported(_) => true,
            // Not JSON where no unwrap is tried: refused as the reader stopped.
            Outcome::Unread(Some(e)) => read::refused_as_read(text, e, self.unwrap),
            _ => false,
        }
    }

    /// A single pass over a whole reply, reporting every certain failure
    /// (see [`SinglePass::reporting`]).
    // Inlined, with `single_pass`, `SinglePass::new` and `reporting`, so the
    // pass (352 bytes) is built where the check uses it instead of built and
    // then copied: the copy was 4-9 % of an accepted plate reply's time.
    #[inline(always)]
    pub(crate) fn whole_pass(&self) -> SinglePass<'_> {
        let mut pass = self.single_pass(false);
        pass.reporting();
        pass
    }

    /// A single pass over a reply to this contract (`partials`: keeping
    /// what [`SinglePass::partial`] needs).
    #[inline(always)]
    pub(crate) fn single_pass(&self, partials: bool) -> SinglePass<'_> {
        let limits = (self.limits.max_depth, self.limits.max_problems, self.limits.max_repairs);
        SinglePass::new(&self.nodes, &self.plans, self.root, limits, self.integers, self.unwrap, partials)
    }

    /// The verdict on a whole reply, from what the single pass found on it.
    /// `decided`: the problems a stream was refused with, if it was (as
    /// of the byte that decided it).
    pub(crate) fn verdict_of(&self, text: &str, outcome: Outcome<'_>, decided: Option<&[Problem]>) -> Verdict {
        match outcome {
            Outcome::Accepted(v) if v.changes.is_empty() => {
                self.vouch(Accepted::as_sent(text, self.limits.max_depth, v.verbatim))
            }
            Outcome::Accepted(v) => self.vouch(self.changed(text, v, Vec::new())),
            Outcome::ReadRefused(problem) => Verdict::refuse(vec![problem]),
            Outcome::Reported(problems) => Verdict::refuse(problems),
            Outcome::Unread(Some(e)) if !text.trim().is_empty() => {
                // The very error the full path's reader would stop at:
                // refused as such, or unwrapped, without reading again.
                match read::after_read_error(text, &e, &self.limits, self.unwrap, self.integers) {
                    Ok((value, unwrapped, (from, to))) => {
                        let unwrapped: Vec<Repair> = unwrapped.into_iter().collect();
                        let json = text.get(from..to).unwrap_or_default();
                        // The unwrapped JSON, checked in one pass too.
                        match self.single_pass(false).finish(json) {
                            Outcome::Accepted(v) if v.changes.is_empty() => {
                                self.vouch(Accepted::built(value, unwrapped))
                            }
                            Outcome::Accepted(v) => self.vouch(self.changed(json, v, unwrapped)),
                            _ => self.judge(value, unwrapped),
                        }
                    }
                    Err(problem) => Verdict::refuse(vec![*problem]),
                }
            }
            Outcome::Unread(_) => self.full_path_text(text, false),
            Outcome::Doubted => self.full_path_text(text, true),
            Outcome::DoubtedEarly => match read::read_text(text, &self.limits, self.unwrap, self.integers) {
                // Whole JSON as it stands: what reading on would have come to (the full path's).
                Ok((value, None)) => self.judge(value, Vec::new()),
                _ => {
                    let mut pass = self.whole_pass();
                    pass.keep_reading_after_doubts();
                    self.verdict_of(text, pass.finish(text), decided)
                }
            },
            Outcome::Refused(found) => {
                let base = self.full_path_text(text, true);
                self.merged(text, &found, decided, base)
            }
        }
    }

    /// The full path's verdict on a reply held as text (`doubted`: the
    /// single pass read it all as strict JSON).
    fn full_path_text(&self, text: &str, doubted: bool) -> Verdict {
        if doubted && !self.repairs {
            // Without repairs, report it straight away (a fast check
            // would only say so again).
            if let Ok((value, None)) = read::read_text(text, &self.limits, self.unwrap, self.integers) {
                let problems = check::problems(&self.nodes, self.root, &value, "", self.limits.max_problems);
                if !problems.is_empty() {
                    return Verdict::refuse(problems);
                }
                return self.judge(value, Vec::new());
            }
        }
        match read::read_text(text, &self.limits, self.unwrap, self.integers) {
            Ok((value, unwrapped)) => self.judge(value, unwrapped.into_iter().collect()),
            Err(problem) => Verdict::refuse(vec![*problem]),
        }
    }

    /// A reply the single pass found certain to be refused: the full
    /// path's refusal, listing first every problem that made it certain
    /// which the full path does not list itself (by code and path: a
    /// reply cut off, or one needing too many repairs, after them) — as of
    /// the byte that decided them, so a stream and a whole check agree.
    pub(crate) fn merged(&self, text: &str, found: &[Problem], decided: Option<&[Problem]>, base: Verdict) -> Verdict {
        let listed = |p: &Problem| base.problems().iter().any(|b| b.code == p.code && b.path == p.path);
        if !base.is_accepted() && found.iter().all(listed) && decided.is_none_or(|d| d.iter().all(listed)) {
            return base;
        }
        let early = match decided {
            Some(d) => d.to_vec(),
            None => self.decided(text, 0).map_or_else(|| found.to_vec(), |(_, problems)| problems),
        };
        let mut problems: Vec<Problem> = early.into_iter().filter(|p| !listed(p)).collect();
        let room = self.limits.max_problems.max(problems.len());
        // Never accepted: a certain refusal stands whatever the full path says (it would be a bug).
        problems.extend(base.problems().iter().cloned());
        problems.truncate(room);
        Verdict::refuse(problems)
    }

    /// The first prefix of `text` longer than `after` bytes after which no
    /// completion can be accepted, and the problems the single pass gives
    /// there (`None` when only the end decides).
    pub(crate) fn decided(&self, text: &str, after: usize) -> Option<(usize, Vec<Problem>)> {
        // One pass: fed the part known to be pending at once, then a
        // character at a time (a stream of single characters refuses at the
        // very character that decides).
        let mut pass = self.single_pass(false);
        let mut cut = after.min(text.len());
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        pass.feed(text.get(..cut).unwrap_or_default());
        if let Some(problems) = pass.refusal() {
            return Some((cut, problems.to_vec()));
        }
        for (i, c) in text.get(cut..).unwrap_or_default().char_indices() {
            let end = cut + i + c.len_utf8();
            pass.feed(text.get(..end).unwrap_or_default());
            if let Some(problems) = pass.refusal() {
                return Some((end, problems.to_vec()));
            }
        }
        None
    }

    /// The verdict of the full path alone (read, repair, check, report),
    /// without the single pass. For tests that hold the two to the same
    /// verdicts; not part of the API.
    #[doc(hidden)]
    #[must_use]
    pub fn check_full_path(&self, raw: impl AsRef<[u8]>) -> Verdict {
        match read::read_reply(raw.as_ref(), &self.limits, self.unwrap, self.integers) {
            Ok((value, unwrapped)) => self.judge(value, unwrapped.into_iter().collect()),
            Err(problem) => Verdict::refuse(vec![*problem]),
        }
    }

    /// Whether the single pass alone accepts this reply (for tests and
    /// benchmarks; not part of the API).
    #[doc(hidden)]
    #[must_use]
    pub fn accepts_in_one_pass(&self, raw: impl AsRef<[u8]>) -> bool {
        let raw = raw.as_ref();
        raw.len() <= self.limits.max_bytes
            && std::str::from_utf8(raw)
                .is_ok_and(|text| matches!(self.single_pass(false).finish(text), Outcome::Accepted(..)))
    }

    /// Whether the single pass alone is certain this reply is refused (for
    /// tests and benchmarks; not part of the API).
    #[doc(hidden)]
    #[must_use]
    pub fn refuses_in_one_pass(&self, raw: impl AsRef<[u8]>) -> bool {
        let raw = raw.as_ref();
        raw.len() <= self.limits.max_bytes
            && std::str::from_utf8(raw).is_ok_and(|text| {
                let mut pass = self.whole_pass();
                pass.keep_reading_after_doubts();
                matches!(pass.finish(text), Outcome::Refused(..) | Outcome::ReadRefused(..) | Outcome::Reported(..))
            })
    }

    /// A reply accepted by the single pass with changes: the text with them
    /// made, logged after `before` (an unwrap).
    fn changed(&self, text: &str, vouched: single_pass::Vouched<'_>, mut before: Vec<Repair>) -> Accepted {
        let (json, repairs, deeper) = single_pass::changed_text(text, vouched.changes);
        before.extend(repairs);
        Accepted::as_filled(json, self.limits.max_depth.saturating_add(deeper), before, vouched.verbatim)
    }

    /// Check a value that was already parsed (for example a stored last good
    /// value). Limits on depth and the number profile of replies still apply.
    #[must_use]
    pub fn check_value(&self, value: &Value) -> Verdict {
        if read::depth(value) > self.limits.max_depth {
            return Verdict::refuse(vec![Problem::new(
                ProblemCode::TooDeep,
                "",
                "shallower nesting".into(),
                String::new(),
                &format!("the value nests deeper than {} levels", self.limits.max_depth),
            )]);
        }
        // The number profile of replies holds for values given whole too: an
        // integer a double does not hold is refused as in a reply.
        let written = value.to_string();
        if let Err(e) = read::read_value(&written, 0, self.limits.max_depth, true, self.integers) {
            let mut p = read::read_problem(&written, &e);
            p.position = None;
            return Verdict::refuse(vec![p]);
        }
        self.judge(value.clone(), Vec::new())
    }

    fn judge(&self, mut value: Value, mut repairs: Vec<Repair>) -> Verdict {
        if self.repairs {
            if let Err(problem) = self.repair_until_settled(&mut value, &mut repairs) {
                return Verdict::refuse(vec![*problem]);
            }
        }
        if !check::is_valid(&self.nodes, self.root, &value) {
            let problems = check::problems(&self.nodes, self.root, &value, "", self.limits.max_problems);
            return Verdict::refuse(problems);
        }
        self.vouch(Accepted::built(value, repairs))
    }

    /// Accept a valid value, with the gate findings on it.
    fn vouch(&self, mut accepted: Accepted) -> Verdict {
        if self.findings {
            let mut findings = Vec::new();
            crate::findings::collect(&self.nodes, self.root, accepted.value(), &mut String::new(), &mut findings);
            accepted.findings = findings;
        }
        Verdict::Accepted(accepted)
    }
}

/// Repair passes run on one reply before its repairs must have settled: the
/// last pass must change nothing, so a value accepted with repairs, checked
/// again, needs none.
const MAX_REPAIR_PASSES: usize = 4;

impl Contract {
    /// Run the declared repairs until a pass changes nothing, appending each
    /// pass's log. Repairs on two nodes can undo each other (one `allOf`
    /// branch fills a default the other strips) or feed each other (one trims
    /// what the other truncated): after [`MAX_REPAIR_PASSES`] passes that
    /// still change the value, the reply is refused (`repairs_unsettled`).
    ///
    /// At most `max_repairs` repairs are made over all passes (those a later
    /// step took back included): the repairer stops at the cap, and a reply
    /// needing more is refused (`too_many_repairs`), so the log never grows
    /// past the cap however many values a reply holds.
    fn repair_until_settled(&self, value: &mut Value, repairs: &mut Vec<Repair>) -> Result<(), Box<Problem>> {
        let mut budget = self.limits.max_repairs;
        for pass in 0..=MAX_REPAIR_PASSES {
            let mut r = crate::repair::Repairer::with_budget(&self.nodes, budget);
            r.repair(self.root, value);
            if let Some(path) = r.over() {
                if let Some(bound) = r.tangled() {
                    return Err(Box::new(crate::check::too_complex(path, value, bound)));
                }
                return Err(Box::new(self.too_many_repairs(path)));
            }
            budget -= r.made().min(budget);
            let Some(first) = r.log.first() else {
                return Ok(());
            };
            if pass == MAX_REPAIR_PASSES {
                let (path, rule) = (first.path.clone(), first.rule.clone());
                return Err(Box::new(Problem::new(
                    ProblemCode::RepairsUnsettled,
                    &path,
                    "a value the contract's repairs leave as it is".into(),
                    crate::problem::excerpt(value),
                    &format!(
                        "the contract's repairs do not settle: after {MAX_REPAIR_PASSES} passes `{rule}` still changes \
                         the value (repairs on two nodes undo each other)"
                    ),
                )));
            }
            repairs.extend(r.log);
        }
        Ok(())
    }
}

impl Contract {
    /// The refusal of a reply whose repairs would pass `max_repairs`, at the
    /// path of the first repair past the cap.
    fn too_many_repairs(&self, path: &str) -> Problem {
        let max = self.limits.max_repairs;
        Problem::new(
            ProblemCode::TooManyRepairs,
            path,
            format!("at most {max} repairs"),
            format!("more than {max} repairs"),
            &format!(
                "the reply needs more than {max} repairs, the contract's max_repairs: more mending than \
                 cosmetic repairs are for"
            ),
        )
    }

    /// [`Contract::check`]'s verdict on a reply of `len` bytes of which only
    /// `start` is held, where `start` alone decides it: the whole reply
    /// (`len` is `start`'s length), or a start over `max_bytes` (past the
    /// limit nothing is read: the problems certain within it, then
    /// `too_large` with `len`). For a reader that knows a reply's size
    /// without holding it all: a file's length, a string's length in a
    /// binding. `None` where the bytes not held would be read.
    ///
    /// ```
    /// let contract =
    ///     vouch::Contract::from_json_str(r#"{"type": "object", "x-vouch": {"limits": {"max_bytes": 8}}}"#)?;
    /// let reply = r#"{"a": 1, "b": 2}"#;
    /// assert_eq!(contract.check_start(&reply.as_bytes()[..9], reply.len()), Some(contract.check(reply)));
    /// assert_eq!(contract.check_start(&reply.as_bytes()[..5], reply.len()), None);
    /// # Ok::<(), vouch::CompileError>(())
    /// ```
    #[must_use]
    pub fn check_start(&self, start: &[u8], len: usize) -> Option<Verdict> {
        if len == start.len() {
            return Some(self.check(start));
        }
        let mut stream = self.stream();
        stream.feed(start);
        stream.feed_past_limit(len.saturating_sub(start.len())).then(|| stream.finish())
    }

    /// The refusal [`Contract::check`] gives a reply of `len` bytes or more
    /// over `max_bytes`, for a reader that stops at the limit (it read
    /// `len` = `max_bytes + 1` bytes and left the rest unread): `too_large`,
    /// worded "at least `len` bytes".
    #[must_use]
    pub fn refuse_too_large(&self, len_at_least: usize) -> Verdict {
        Verdict::refuse(vec![read::too_large(len_at_least, true, self.limits.max_bytes)])
    }
}
