//! The native half of vouch for Node: argument handling and JavaScript
//! objects over vouch-bind. Every decision (what a reply is, what it means,
//! what to ask again) is the core's; the TypeScript in `ts/` gives it its
//! typed face (`Contract<T>`, `Verdict<T>`, `rounds`, Zod).
//!
//! The JavaScript side only ever sees what this file returns; its
//! declarations (`native.d.ts`) are written by napi-rs from these items.

use std::sync::Arc;

use std::cell::RefCell;

use napi::bindgen_prelude::{
    Array, AsyncTask, BufferSlice, Either, Env, Latin1String, Result, Task, Uint8Array, Unknown,
};
use napi_derive::napi;

mod raw;

/// A reply as the caller gave it, a string or a Buffer (read in place), is
/// an `Either<String, BufferSlice>`, spelled out in each signature so napi-rs
/// writes its declaration.
fn bytes<'a>(raw: &'a Either<String, BufferSlice<'_>>) -> &'a [u8] {
    match raw {
        Either::A(text) => text.as_bytes(),
        Either::B(buffer) => buffer,
    }
}

/// A reply copied off the JavaScript heap, to be checked on another thread.
pub(crate) enum Owned {
    /// A string, as JavaScript holds it: its UTF-16 units in the batch's
    /// one buffer (`Copied::units`), made UTF-8 on the worker.
    Text(std::ops::Range<usize>),
    /// A string over the contract's `max_bytes`: the start of its units
    /// (see `raw::Units::Start`) and its whole UTF-8 length.
    TextStart(std::ops::Range<usize>, usize),
    Bytes(Vec<u8>),
}

/// A batch of replies copied off the JavaScript heap (see `raw::copy_replies`).
pub(crate) struct Copied {
    /// Every string's UTF-16 units, one after the other.
    pub(crate) units: Vec<u16>,
    pub(crate) replies: Vec<Owned>,
}

/// Replies up to this many UTF-16 units are made UTF-8 in a buffer kept per
/// thread (at most three bytes a unit: 192 KiB); a longer one gets its own.
const SCRATCH_UNITS: usize = 64 * 1024;

thread_local! {
    static SCRATCH: RefCell<String> = const { RefCell::new(String::new()) };
}

/// `text` as the check reads it, handed to `f`: its UTF-8 (`Ok`), or, when
/// it holds an unpaired surrogate (no UTF-8 at all), its bytes with each
/// such surrogate as [`vouch_bind::unpaired_utf8`] writes it (`Err`), which
/// the check refuses as `not_json` where it stands, as it refuses a
/// `"\ud800"` escape. Not U+FFFD in its place, as Node's own UTF-8 writing
/// (and `Buffer.from(text)`) makes it: a repair no one declared or logged,
/// and `JSON.parse` (so the OpenAI SDK) makes such a string of a `"\ud800"`
/// escape in a response body. Reading a string as UTF-16 is a copy;
/// encoding_rs then writes UTF-8 with SIMD where the text is ASCII: together
/// about a third faster than asking V8 for UTF-8, and the result is `str`
/// already (no second validation).
pub(crate) fn with_text<R>(text: &[u16], mut f: impl FnMut(std::result::Result<&str, &[u8]>) -> R) -> R {
    if text.len() <= SCRATCH_UNITS {
        let need = text.len() * 3;
        // The buffer is only ever borrowed here, around a pure check, so the
        // borrow always succeeds; were it taken, the reply gets its own.
        let done = SCRATCH.with(|cell| {
            let mut buf = cell.try_borrow_mut().ok()?;
            if buf.len() < need {
                let more = need - buf.len();
                buf.extend(std::iter::repeat_n('\0', more));
            }
            // encoding_rs keeps the whole buffer valid UTF-8 past what it writes.
            let written = encoding_rs::mem::convert_utf16_to_str(text, buf.as_mut_str());
            let utf8 = buf.get(..written)?;
            // One byte a unit: all ASCII, so no surrogate at all; and without a
            // U+FFFD in the UTF-8 none was replaced.
            let well_formed = utf8.len() == text.len()
                || !utf8.contains('\u{FFFD}')
                || encoding_rs::mem::utf16_valid_up_to(text) == text.len();
            Some(if well_formed { f(Ok(utf8)) } else { f(Err(&unpaired_utf8(text))) })
        });
        if let Some(r) = done {
            return r;
        }
    }
    match String::from_utf16(text) {
        Ok(utf8) => f(Ok(&utf8)),
        Err(_) => f(Err(&unpaired_utf8(text))),
    }
}

/// UTF-16 holding an unpaired surrogate as the bytes the check refuses.
fn unpaired_utf8(text: &[u16]) -> Vec<u8> {
    vouch_bind::unpaired_utf8(
        char::decode_utf16(text.iter().copied()).map(|c| c.map_err(|e| e.unpaired_surrogate().into())),
    )
}

/// What [`with_text`] handed over, as bytes.
pub(crate) fn read_bytes<'a>(read: std::result::Result<&'a str, &'a [u8]>) -> &'a [u8] {
    match read {
        Ok(text) => text.as_bytes(),
        Err(bytes) => bytes,
    }
}

/// The contracts compiled on this JavaScript thread, by the id their
/// `Contract` holds: the hot calls find theirs by index, where reading a
/// class instance or an external back costs a lock and a lookup per call.
/// A `NativeContract` lives in exactly one slot from its compiling to its
/// finalizing, both on the thread that owns it.
struct Registry {
    slots: Vec<Option<Arc<vouch::Contract>>>,
    free: Vec<u32>,
}

thread_local! {
    static CONTRACTS: RefCell<Registry> = const { RefCell::new(Registry { slots: Vec::new(), free: Vec::new() }) };
}

fn register(contract: &Arc<vouch::Contract>) -> Result<u32> {
    CONTRACTS.with(|cell| {
        let mut r =
            cell.try_borrow_mut().map_err(|_| napi::Error::from_reason("vouch: the contract registry is busy"))?;
        if let Some(id) = r.free.pop() {
            if let Some(slot) = r.slots.get_mut(id as usize) {
                *slot = Some(Arc::clone(contract));
                return Ok(id);
            }
        }
        let id =
            u32::try_from(r.slots.len()).map_err(|_| napi::Error::from_reason("vouch: too many live contracts"))?;
        r.slots.push(Some(Arc::clone(contract)));
        Ok(id)
    })
}

/// The contract registered as `id` on this thread, handed to `f` (a pure
/// check: nothing in it can reach the registry again while it is borrowed).
pub(crate) fn registered<R>(id: u32, f: impl FnOnce(&vouch::Contract) -> R) -> Result<R> {
    CONTRACTS.with(|cell| {
        let r = cell.try_borrow().map_err(|_| napi::Error::from_reason("vouch: the contract registry is busy"))?;
        match r.slots.get(id as usize).and_then(Option::as_ref) {
            Some(contract) => Ok(f(contract)),
            None => Err(napi::Error::from_reason(format!("vouch: no live contract {id} on this thread"))),
        }
    })
}

impl Drop for NativeContract {
    fn drop(&mut self) {
        // Only this contract's own slot is freed (a drop on another thread finds none).
        let _ = CONTRACTS.try_with(|cell| {
            if let Ok(mut r) = cell.try_borrow_mut() {
                let mine = r
                    .slots
                    .get(self.id as usize)
                    .is_some_and(|s| s.as_ref().is_some_and(|c| Arc::ptr_eq(c, &self.inner)));
                if mine {
                    if let Some(slot) = r.slots.get_mut(self.id as usize) {
                        *slot = None;
                    }
                    r.free.push(self.id);
                }
            }
        });
    }
}

/// Where a reading problem is in the raw reply.
#[napi(object)]
pub struct Position {
    /// 1-based line.
    pub line: i64,
    /// 1-based column, in characters.
    pub column: i64,
    /// Byte offset.
    pub offset: i64,
}

/// One reason a reply was refused.
#[napi(object)]
pub struct Problem {
    /// Stable code, e.g. `not_allowed` (docs/problems.md).
    pub code: String,
    /// `no_answer` (the model did not answer) or `bad_answer`.
    pub class: String,
    /// RFC 6901 JSON Pointer into the reply (`""`: the whole reply).
    pub path: String,
    /// What the contract expected, in words.
    pub expected: String,
    /// A short, bounded excerpt of what the reply had.
    pub got: String,
    /// A sentence a person can read, starting with the path.
    pub message: String,
    /// Where in the raw reply, for reading problems.
    pub position: Option<Position>,
}

fn to_i64(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

impl Problem {
    fn of(p: &vouch::Problem) -> Self {
        Self {
            code: p.code.as_str().to_owned(),
            class: p.class.as_str().to_owned(),
            path: p.path.clone(),
            expected: p.expected.clone(),
            got: p.got.clone(),
            message: p.message.clone(),
            position: p.position.map(|p| Position {
                line: to_i64(p.line),
                column: to_i64(p.column),
                offset: to_i64(p.offset),
            }),
        }
    }
}

fn problems_of(list: &[vouch::Problem]) -> Vec<Problem> {
    list.iter().map(Problem::of).collect()
}

/// A change a declared repair rule made to the reply. Declared here for its
/// type only: a verdict's repairs cross as its line (`text`), read by
/// `JSON.parse`, so a `"__proto__"` key in `before` or `after` stays an own
/// property (an object built here would have its prototype set by it).
#[napi(object)]
pub struct Repair {
    /// JSON Pointer of the repaired value.
    pub path: String,
    /// The rule that made the change (`coerce`, `clamp`, `trim`, …).
    pub rule: String,
    /// The value before (a bounded excerpt for long values).
    pub before: serde_json::Value,
    /// The value after.
    pub after: serde_json::Value,
    /// A sentence, e.g. `/score: "80" coerced to 80`.
    pub message: String,
}

/// A gate finding: the model answered, and its answer is a real problem.
#[napi(object)]
pub struct Finding {
    /// JSON Pointer of the value the finding is about.
    pub path: String,
    /// The contract's message.
    pub message: String,
}

/// One mistake in a contract document.
#[napi(object)]
pub struct ContractMistake {
    /// The kind, in snake case (`not_json`, `unknown_keyword`, `bad_pattern`, …).
    pub kind: String,
    /// The keyword at fault (`""` when none).
    pub keyword: String,
    /// JSON Pointer of the schema node holding it (`""`: the root).
    pub location: String,
    /// The whole line: `LOCATION: KEYWORD: WHAT`.
    pub message: String,
}

/// A keyword the contract holds that vouch does not know.
#[napi(object)]
pub struct UnknownKeyword {
    /// JSON Pointer of the schema node.
    pub location: String,
    /// The keyword.
    pub keyword: String,
}

/// The contract's verdict on one reply (the TypeScript `Verdict` wraps it).
#[napi]
pub struct NativeVerdict {
    inner: vouch::Verdict,
}

#[napi]
impl NativeVerdict {
    /// `"accepted"` or `"refused"`.
    #[napi(getter, ts_return_type = "'accepted' | 'refused'")]
    pub fn outcome(&self) -> &'static str {
        self.inner.outcome()
    }

    /// Accepted and no gate finding.
    #[napi(getter)]
    pub fn passed(&self) -> bool {
        self.inner.is_pass()
    }

    /// The contract accepted the reply (it may still carry findings).
    #[napi(getter)]
    pub fn accepted(&self) -> bool {
        self.inner.is_accepted()
    }

    /// The accepted value as compact JSON text (repairs made; keys unique).
    #[napi(getter)]
    pub fn json(&self) -> Option<String> {
        match &self.inner {
            vouch::Verdict::Accepted(a) => Some(a.json().into_owned()),
            vouch::Verdict::Refused(_) => None,
        }
    }

    /// Why the reply was refused (empty when accepted).
    #[napi(getter)]
    pub fn problems(&self) -> Vec<Problem> {
        problems_of(self.inner.problems())
    }

    /// The gate's findings on an accepted reply.
    #[napi(getter)]
    pub fn findings(&self) -> Vec<Finding> {
        self.inner.findings().iter().map(|f| Finding { path: f.path.clone(), message: f.message.clone() }).collect()
    }

    /// The user message vouch asks again with after this refusal.
    #[napi]
    pub fn reask(&self) -> Option<String> {
        match &self.inner {
            vouch::Verdict::Refused(r) => Some(r.reask_text()),
            vouch::Verdict::Accepted(_) => None,
        }
    }

    /// The verdict as `vouch check --json` prints it, byte for byte (no newline).
    #[napi]
    pub fn text(&self) -> String {
        vouch_bind::verdict_json(&self.inner)
    }
}

/// A failure of `raw.rs`'s reading, as the error thrown (a `TypeError`'s words).
fn thrown(failed: &std::ffi::CStr) -> napi::Error {
    napi::Error::new(napi::Status::InvalidArg, failed.to_string_lossy())
}

fn verdict(inner: vouch::Verdict) -> NativeVerdict {
    NativeVerdict { inner }
}

/// The provider's schema, or why it cannot be written.
#[napi(object)]
pub struct Exported {
    /// The schema as JSON text, when it could be written without weakening
    /// the contract: read by `JSON.parse`, which keeps a `"__proto__"` key an
    /// own property (an object built here would have its prototype set by it).
    pub schema: Option<String>,
    /// `unknown_provider` or `cannot_export`, when it could not.
    pub error: Option<String>,
    /// The reason, in words.
    pub message: Option<String>,
}

/// A compiled contract (the TypeScript `Contract` wraps it).
#[napi]
pub struct NativeContract {
    inner: Arc<vouch::Contract>,
    /// Its slot in this thread's registry.
    id: u32,
}

/// One reply's answer, before it crosses back.
pub enum Answered {
    /// Accepted exactly as sent: the caller's own text is the vouched text.
    PassedAsSent,
    /// Certainly refused; the problems are written when read.
    RefusedUnreported,
    /// Any other verdict, as `vouch check --json` prints it.
    Line(String),
}

/// A string's answer (one holding an unpaired surrogate refused, as
/// [`with_text`] reads it). `refusals`: `Unreported` for `check` (a caller
/// that branches on the outcome pays for no report it does not read),
/// `Reported` for `checkMany` (written on the worker threads, in parallel).
pub(crate) fn check_utf16(contract: &vouch::Contract, text: &[u16], refusals: vouch::Refusals) -> Answered {
    with_text(text, |read| match read {
        Ok(raw) => match contract.check_str_briefly(raw, refusals) {
            vouch::Brief::PassedAsSent => Answered::PassedAsSent,
            vouch::Brief::Refused => Answered::RefusedUnreported,
            vouch::Brief::Verdict(verdict) => answer_line(raw.as_bytes(), verdict),
        },
        Err(bytes) => check_raw(contract, bytes, refusals),
    })
}

/// The answer for a string over the contract's `max_bytes` from its first
/// units (more than the limit's worth) and the length of its whole UTF-8:
/// the start fed to a stream, the rest counted, not copied
/// (`Contract::check_start`): `check`'s verdict on the whole reply,
/// the problems found within the limit and `too_large` with its exact size.
pub(crate) fn check_utf16_start(contract: &vouch::Contract, start: &[u16], utf8_len: usize) -> Answered {
    // V8 counts an unpaired surrogate as three bytes (U+FFFD's), as `with_text` writes it.
    let verdict = with_text(uncut(start), |read| vouch_bind::check_past_limit(contract, read_bytes(read), utf8_len));
    Answered::Line(vouch_bind::verdict_json(&verdict))
}

/// The first units of a string over the limit, without a high surrogate
/// last: it may be half of a pair the copy cut. The units before it are
/// more than the limit's worth, so the reply is past the limit either way,
/// and the dropped unit is counted with the rest (in the whole's length).
pub(crate) fn uncut(start: &[u16]) -> &[u16] {
    match start.split_last() {
        Some((unit, rest)) if (0xD800..0xDC00).contains(unit) => rest,
        _ => start,
    }
}

/// A reply's answer from its bytes (read in place). Bytes that are not UTF-8
/// are read as `check` reads them, reported at once (they are rare, and their
/// reading is the stream's).
pub(crate) fn check_raw(contract: &vouch::Contract, raw: &[u8], refusals: vouch::Refusals) -> Answered {
    let Ok(text) = std::str::from_utf8(raw) else { return answer_line(raw, contract.check(raw)) };
    match contract.check_str_briefly(text, refusals) {
        vouch::Brief::PassedAsSent => Answered::PassedAsSent,
        vouch::Brief::Refused => Answered::RefusedUnreported,
        vouch::Brief::Verdict(verdict) => answer_line(raw, verdict),
    }
}

/// Compile a contract from its document's JSON text: the contract, or every
/// mistake in the document.
#[napi]
pub fn compile(document: Either<String, BufferSlice<'_>>) -> Result<Either<NativeContract, Vec<ContractMistake>>> {
    Ok(match vouch_bind::compile(bytes(&document)) {
        Ok(c) => {
            let inner = Arc::new(c);
            Either::A(NativeContract { id: register(&inner)?, inner })
        }
        Err(mistakes) => Either::B(
            mistakes
                .into_iter()
                .map(|m| ContractMistake { kind: m.kind, keyword: m.keyword, location: m.location, message: m.message })
                .collect(),
        ),
    })
}

/// Many replies checked off the event loop, across the cores.
pub struct CheckMany {
    contract: Arc<vouch::Contract>,
    copied: Copied,
}

/// `checkMany`'s answers for a chunk: a number a reply in one typed array
/// (one JavaScript value for the chunk, where a value a reply cost the event
/// loop a call each) and the lines of the replies that have one, in order.
#[napi(object)]
pub struct ManyAnswers {
    /// Per reply: `0` passed as sent, `1` refused and not yet reported,
    /// `2` its verdict's line is the next of `lines`.
    pub kinds: Uint8Array,
    /// The lines of the replies of kind `2`, in order.
    #[napi(ts_type = "string[]")]
    pub lines: Vec<Either<Latin1String, String>>,
}

/// A reply's kind in [`ManyAnswers::kinds`] whose line is in `lines`.
const LINE: u8 = 2;

impl Task for CheckMany {
    type Output = Vec<Answered>;
    type JsValue = ManyAnswers;

    fn compute(&mut self) -> Result<Self::Output> {
        let contract = &*self.contract;
        let units = &self.copied.units;
        Ok(vouch_bind::check_many_with(&self.copied.replies, |reply| match reply {
            Owned::Text(range) => {
                check_utf16(contract, units.get(range.clone()).unwrap_or_default(), vouch::Refusals::Reported)
            }
            Owned::TextStart(range, utf8_len) => {
                check_utf16_start(contract, units.get(range.clone()).unwrap_or_default(), *utf8_len)
            }
            Owned::Bytes(raw) => check_raw(contract, raw, vouch::Refusals::Reported),
        }))
    }

    fn resolve(&mut self, _: Env, output: Self::Output) -> Result<Self::JsValue> {
        let mut kinds = Vec::with_capacity(output.len());
        let mut lines = Vec::new();
        for answered in output {
            kinds.push(match answered {
                Answered::PassedAsSent => PASSED_AS_SENT_KIND,
                Answered::RefusedUnreported => REFUSED_UNREPORTED_KIND,
                Answered::Line(line) => {
                    lines.push(js_line(line));
                    LINE
                }
            });
        }
        Ok(ManyAnswers { kinds: Uint8Array::new(kinds), lines })
    }
}

/// A line made a string as cheaply as its characters allow: an ASCII one
/// (most are) by a copy, not decoded.
fn js_line(line: String) -> Either<Latin1String, String> {
    if line.is_ascii() {
        Either::A(Latin1String::from(line))
    } else {
        Either::B(line)
    }
}

/// The verdict's line, unless the reply passed exactly as sent (then the
/// caller's own text is the vouched text, and nothing need cross back).
fn answer_line(raw: &[u8], verdict: vouch::Verdict) -> Answered {
    if vouch_bind::passed_as_sent(&verdict, raw) {
        Answered::PassedAsSent
    } else {
        Answered::Line(vouch_bind::verdict_json(&verdict))
    }
}

/// What `check` answers for a reply that passed exactly as sent.
pub(crate) const PASSED_AS_SENT: u32 = 0;
/// What `check` answers for a reply certain to be refused, its problems unwritten.
pub(crate) const REFUSED_UNREPORTED: u32 = 1;
/// The same two as `checkMany`'s kinds.
const PASSED_AS_SENT_KIND: u8 = 0;
const REFUSED_UNREPORTED_KIND: u8 = 1;

#[napi]
impl NativeContract {
    /// The contract as `checkText` and `checkBytes` take it: its slot on
    /// this thread.
    #[napi(getter)]
    pub fn id(&self) -> u32 {
        self.id
    }

    /// Check one reply and keep the whole verdict (its re-ask message, its
    /// vouched text): what `check`'s answer leaves to be asked for.
    /// A string is read as `checkText` reads it, so both give one verdict,
    /// and one over the contract's `max_bytes` is copied only as far as the
    /// check reads.
    #[napi(ts_args_type = "raw: string | Buffer")]
    pub fn verdict(&self, env: Env, raw: Unknown<'_>) -> Result<NativeVerdict> {
        use napi::JsValue;
        #[allow(unsafe_code)]
        // SAFETY: this call's env and its argument.
        let whole = unsafe {
            raw::with_reply(env.raw(), raw.raw(), self.inner.limits().max_bytes, |held| match held {
                raw::Held::Whole(bytes) => self.inner.check(bytes),
                raw::Held::Start(start, len) => vouch_bind::check_past_limit(&self.inner, start, len),
            })
        };
        whole.map(verdict).map_err(thrown)
    }

    /// Check many replies on a worker thread (all cores), in order; the
    /// replies are copied first, so the caller may reuse its buffers.
    /// Each answer is `check`'s.
    #[napi(ts_args_type = "raws: Array<string | Buffer>", ts_return_type = "Promise<ManyAnswers>")]
    pub fn check_many(&self, env: Env, raws: Array<'_>) -> Result<AsyncTask<CheckMany>> {
        use napi::JsValue;
        #[allow(unsafe_code)]
        // SAFETY: this call's env and the array it was given.
        let copied = unsafe { raw::copy_replies(env.raw(), raws.raw(), raws.len(), self.inner.limits().max_bytes) };
        let copied = copied.map_err(thrown)?;
        Ok(AsyncTask::new(CheckMany { contract: Arc::clone(&self.inner), copied }))
    }

    /// A check of one reply fed piece by piece as it streams.
    #[napi]
    pub fn stream(&self) -> NativeStream {
        NativeStream {
            inner: vouch_bind::Stream::new(Arc::clone(&self.inner)),
            max_bytes: self.inner.limits().max_bytes,
        }
    }

    /// Plain-language instructions for the model, from the same contract.
    #[napi]
    pub fn prompt(&self) -> String {
        self.inner.prompt()
    }

    /// The schema to send the provider (`openai`, `anthropic`, `gemini`,
    /// `json-schema`); with `name`, wrapped as the request's `response_format`.
    #[napi]
    pub fn schema(&self, provider: String, name: Option<String>) -> Exported {
        let Some(p) = vouch::Provider::from_name(&provider) else {
            return Exported {
                schema: None,
                error: Some("unknown_provider".to_owned()),
                message: Some(format!("unknown provider {provider:?}: one of openai, anthropic, gemini, json-schema")),
            };
        };
        let exported = match name {
            Some(name) => self.inner.provider_schema(p, &name),
            None => self.inner.bare_provider_schema(p),
        };
        match exported {
            Ok(schema) => Exported { schema: Some(vouch::to_json_string(&schema)), error: None, message: None },
            Err(e) => Exported { schema: None, error: Some("cannot_export".to_owned()), message: Some(e.to_string()) },
        }
    }

    /// The contract's document as compact JSON text.
    #[napi(getter)]
    pub fn document(&self) -> String {
        vouch::to_json_string(self.inner.document())
    }

    /// Keywords the contract holds that vouch does not know.
    #[napi(getter)]
    pub fn unknown_keywords(&self) -> Vec<UnknownKeyword> {
        self.inner
            .unknown_keywords()
            .iter()
            .map(|(location, keyword)| UnknownKeyword { location: location.clone(), keyword: keyword.clone() })
            .collect()
    }
}

fn progress_name(p: vouch::Progress) -> &'static str {
    match p {
        vouch::Progress::Pending => "pending",
        vouch::Progress::Refused => "refused",
    }
}

/// A reply checked while it streams.
#[napi]
pub struct NativeStream {
    inner: vouch_bind::Stream,
    /// The contract's `max_bytes`: a string piece over it is copied only as far as the check reads.
    max_bytes: usize,
}

#[napi]
impl NativeStream {
    /// Feed the next piece (any size; a character split across pieces is
    /// fine): `"pending"` while some completion could still be accepted,
    /// `"refused"` once none can.
    #[napi(ts_args_type = "piece: string | Buffer", ts_return_type = "'pending' | 'refused'")]
    pub fn feed(&mut self, env: Env, piece: Unknown<'_>) -> Result<&'static str> {
        use napi::JsValue;
        let inner = &mut self.inner;
        #[allow(unsafe_code)]
        // SAFETY: this call's env and its argument.
        let fed = unsafe {
            raw::with_reply(env.raw(), piece.raw(), self.max_bytes, |held| match held {
                raw::Held::Whole(bytes) => Some(inner.feed(bytes)),
                // The start alone is past the limit (more than `max_bytes` units, each a byte at least).
                raw::Held::Start(start, len) => inner.feed_past_limit_start(start, len),
            })
        };
        fed.map_err(thrown)?
            .map(progress_name)
            .ok_or_else(|| napi::Error::from_reason("vouch: internal error reading a piece"))
    }

    /// `"pending"` or `"refused"`.
    #[napi(getter, ts_return_type = "'pending' | 'refused'")]
    pub fn progress(&self) -> &'static str {
        progress_name(self.inner.progress())
    }

    /// Why it is refused (empty while pending).
    #[napi(getter)]
    pub fn problems(&self) -> Vec<Problem> {
        problems_of(self.inner.problems())
    }

    /// The bytes received when the refusal became certain.
    #[napi(getter)]
    pub fn decided_at(&self) -> Option<i64> {
        self.inner.decided_at().map(to_i64)
    }

    /// Bytes received so far.
    #[napi(getter)]
    pub fn received(&self) -> i64 {
        to_i64(self.inner.received())
    }

    /// The value so far as JSON text, for a display while the rest streams;
    /// never vouched. Text, read by `JSON.parse`: a `"__proto__"` member stays
    /// an own property (an object built here would have its prototype set by it).
    #[napi(getter)]
    pub fn partial_json(&self) -> Option<String> {
        self.inner.partial().map(|v| vouch::to_json_string(&v))
    }

    /// The verdict `check` gives on everything fed; the check then starts
    /// again, empty.
    #[napi]
    pub fn finish(&mut self) -> NativeVerdict {
        verdict(self.inner.finish())
    }
}

/// The messages to add before calling the model again.
#[napi(object)]
pub struct AskAgain {
    /// The refused reply, as the assistant's message (absent when it was empty).
    pub assistant: Option<String>,
    /// The core's words asking again.
    pub user: String,
}

/// One ask's rounds: the state machine `rounds()` drives.
#[napi]
pub struct NativeRounds {
    inner: vouch_bind::Rounds,
}

#[napi]
impl NativeRounds {
    /// Rounds of `contract`, at most `max_rounds` (1 to 100), with an
    /// optional fallback (JSON text) kept if it passes the contract.
    #[napi(constructor)]
    pub fn new(contract: &NativeContract, max_rounds: u32, fallback: Option<String>) -> Result<Self> {
        let max = usize::try_from(max_rounds).unwrap_or(usize::MAX);
        vouch_bind::Rounds::new(Arc::clone(&contract.inner), max, fallback.as_deref().map(str::as_bytes))
            .map(|inner| Self { inner })
            .map_err(|e| napi::Error::from_reason(e.to_string()))
    }

    /// The first round's system message: the contract's instructions after
    /// the caller's own system message, if any.
    #[napi]
    pub fn system_message(&self, callers_own: Option<String>) -> String {
        vouch_bind::system_message(&self.inner.contract().prompt(), callers_own.as_deref())
    }

    /// Check the reply: `null` when done, else the messages to add. A
    /// string over the contract's `max_bytes` is copied only as far as the
    /// check reads (it is never sent back).
    #[napi(ts_args_type = "raw: string | Buffer")]
    pub fn reply(&mut self, env: Env, raw: Unknown<'_>) -> Result<Option<AskAgain>> {
        use napi::JsValue;
        let max_bytes = self.inner.contract().limits().max_bytes;
        let inner = &mut self.inner;
        #[allow(unsafe_code)]
        // SAFETY: this call's env and its argument.
        let step = unsafe {
            raw::with_reply(env.raw(), raw.raw(), max_bytes, |held| match held {
                raw::Held::Whole(bytes) => inner.reply(bytes),
                raw::Held::Start(start, len) => inner.reply_past_limit(start, len),
            })
        };
        match step.map_err(thrown)? {
            vouch_bind::Step::Done => Ok(None),
            vouch_bind::Step::AskAgain { assistant, user } => Ok(Some(AskAgain { assistant, user })),
        }
    }

    /// `"accepted"` or `"refused"` (also when the fallback is returned).
    #[napi(getter, ts_return_type = "'accepted' | 'refused'")]
    pub fn outcome(&self) -> &'static str {
        self.inner.outcome()
    }

    /// `"model"`, `"fallback"`, or null when there is no value.
    #[napi(getter, ts_return_type = "'model' | 'fallback' | null")]
    pub fn source(&self) -> Option<&'static str> {
        self.inner.source()
    }

    /// Every round's verdict, in order.
    #[napi(getter)]
    pub fn verdicts(&self) -> Vec<NativeVerdict> {
        self.inner.verdicts().iter().map(|v| verdict(v.clone())).collect()
    }

    /// The fallback's own verdict, when one was given.
    #[napi(getter)]
    pub fn fallback(&self) -> Option<NativeVerdict> {
        self.inner.fallback().map(|v| verdict(v.clone()))
    }

    /// The verdict whose value is handed over (the accepted reply's, or the fallback's).
    #[napi(getter)]
    pub fn answer(&self) -> Option<NativeVerdict> {
        self.inner.answer().map(|v| verdict(v.clone()))
    }
}

/// The module's exports beside those napi-rs generates: `checkText` and
/// `checkBytes`, the hot calls, written against Node-API (see `raw`).
#[napi(module_exports)]
pub fn hot_calls(exports: napi::bindgen_prelude::Object<'_>, env: Env) -> Result<()> {
    use napi::JsValue;
    #[allow(unsafe_code)]
    // SAFETY: the module initializer's env and exports.
    let done = unsafe { raw::export(env.raw(), exports.raw()) };
    done.map_err(|failed| napi::Error::from_reason(failed.to_string_lossy()))
}
