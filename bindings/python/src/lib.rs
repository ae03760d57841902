//! `vouch._vouch`, the native half of the Python package: constructors for
//! Python objects and argument handling, over vouch-bind. Every decision
//! (what a reply is, what it means, what to ask again) is the core's.

use std::sync::Arc;

use pyo3::exceptions::{PyTypeError, PyUnicodeEncodeError, PyValueError};
use pyo3::prelude::*;
use pyo3::pybacked::{PyBackedBytes, PyBackedStr};
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyList, PyString, PyTuple};
use vouch_bind::Build;

mod text;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

pyo3::create_exception!(
    _vouch,
    ContractError,
    PyValueError,
    "The contract does not compile: `mistakes` lists every mistake (kind, keyword, location, message)."
);
pyo3::create_exception!(
    _vouch,
    ExportError,
    PyValueError,
    "The provider cannot express the contract without weakening it."
);

/// A reply as the caller gave it: text or bytes, borrowed from the Python
/// object (no copy), readable with the GIL released.
enum Raw {
    /// A `str`'s own UTF-8 (CPython 3.10 on).
    Utf8(text::Utf8),
    /// A `str`'s UTF-8 copied (CPython 3.9).
    Str(PyBackedStr),
    /// A `str` that is not all ASCII, as UTF-8 of vouch's making (see `text::transcoded`).
    Owned(String),
    Bytes(PyBackedBytes),
    /// A `str` holding a lone surrogate, which has no UTF-8: its bytes with
    /// each surrogate as UTF-8's pattern would write it, which the check
    /// refuses as `not_json` there (see `text::unpaired_utf8`).
    Unpaired(Vec<u8>),
    /// A `str` over the contract's `max_bytes`, of more code points than
    /// vouch encodes whole: the UTF-8 of its start and its whole UTF-8's
    /// length (see `text::Transcoded::Start`). Its only verdict is the whole
    /// one [`Raw::verdict`] gives (it is never read as text).
    Start {
        start: Vec<u8>,
        utf8_len: usize,
    },
}

impl Raw {
    /// The reply as text, when it was given as text.
    fn text(&self) -> Option<&str> {
        match self {
            Raw::Utf8(s) => Some(s.as_str()),
            Raw::Str(s) => Some(s),
            Raw::Owned(s) => Some(s),
            Raw::Bytes(_) | Raw::Unpaired(_) | Raw::Start { .. } => None,
        }
    }
}

impl AsRef<[u8]> for Raw {
    fn as_ref(&self) -> &[u8] {
        match self {
            Raw::Utf8(s) => s.as_str().as_bytes(),
            Raw::Str(s) => s.as_bytes(),
            Raw::Owned(s) => s.as_bytes(),
            Raw::Bytes(b) => b.as_ref(),
            Raw::Unpaired(b) => b,
            // The start: what the check reads (its length decides where it runs).
            Raw::Start { start, .. } => start,
        }
    }
}

impl Raw {
    /// The contract's whole verdict on this reply.
    fn verdict(&self, contract: &vouch::Contract) -> vouch::Verdict {
        if let Raw::Start { start, utf8_len } = self {
            // The start fed, the rest counted: check's verdict on the whole reply.
            return vouch_bind::check_past_limit(contract, start, *utf8_len);
        }
        // Python's str is UTF-8 here already: not validated twice.
        match self.text() {
            Some(text) => contract.check_str(text),
            None => contract.check(self.as_ref()),
        }
    }
}

/// `check_many` writes each whole verdict on the pool: its text, line and
/// report are then read without checking the reply again on the thread
/// that holds the GIL (`vouch.spark` reads every one).
impl vouch_bind::Reply for Raw {
    fn check_with(&self, contract: &vouch::Contract) -> vouch::Verdict {
        self.verdict(contract)
    }
}

/// Replies shorter than this are checked holding the GIL: letting it go and
/// taking it back costs about as much as checking them (CPython's hashlib
/// draws the same line, at 2,048 bytes). Longer ones are checked with the
/// GIL released, so other threads run meanwhile.
const DETACH_FROM_BYTES: usize = 2048;

/// The contract's verdict on `r`, the GIL released for a reply worth it.
fn checked(py: Python<'_>, r: &Raw, contract: &vouch::Contract) -> vouch::Verdict {
    if r.as_ref().len() < DETACH_FROM_BYTES {
        return r.verdict(contract);
    }
    py.detach(|| r.verdict(contract))
}

/// A reply, a piece or a contract as the bytes vouch reads. With the
/// contract's `max_bytes` (a whole reply), a `str` far over it is read only
/// as far as the check reads ([`Raw::Start`]).
fn raw(obj: &Bound<'_, PyAny>, what: &str, max_bytes: Option<usize>) -> PyResult<Raw> {
    if let Ok(s) = obj.cast::<PyString>() {
        match text::transcoded(s, max_bytes)? {
            text::Transcoded::Start { start, utf8_len } => return Ok(Raw::Start { start, utf8_len }),
            text::Transcoded::Text(owned) => return Ok(Raw::Owned(owned)),
            text::Transcoded::Unpaired(bytes) => return Ok(Raw::Unpaired(bytes)),
            text::Transcoded::Left => {}
        }
        // Left to CPython, whose UTF-8 of a lone surrogate is an error: then
        // the str's bytes as `text::unpaired_utf8` writes them, as above.
        let read = match text::Utf8::of(s) {
            Ok(Some(in_place)) => Ok(Raw::Utf8(in_place)),
            Ok(None) => s.extract::<PyBackedStr>().map(Raw::Str),
            Err(e) => Err(e),
        };
        return match read {
            Err(e) if e.is_instance_of::<PyUnicodeEncodeError>(obj.py()) => {
                let bytes = s.call_method1("encode", ("utf-8", "surrogatepass"))?;
                Ok(Raw::Bytes(bytes.extract::<PyBackedBytes>()?))
            }
            read => read,
        };
    }
    if let Ok(b) = obj.extract::<PyBackedBytes>() {
        return Ok(Raw::Bytes(b));
    }
    let type_name = obj.get_type().name().map_or_else(|_| "?".to_owned(), |n| n.to_string());
    Err(PyTypeError::new_err(format!("{what} must be str or bytes, not {type_name}")))
}

/// Python's constructors for a vouched value.
struct Objects<'py>(Python<'py>);

impl<'py> Build for Objects<'py> {
    type Value = Bound<'py, PyAny>;
    type List = Vec<Bound<'py, PyAny>>;
    type Map = Bound<'py, PyDict>;
    type Error = PyErr;

    fn null(&mut self) -> PyResult<Self::Value> {
        Ok(self.0.None().into_bound(self.0))
    }
    fn bool(&mut self, v: bool) -> PyResult<Self::Value> {
        Ok(PyBool::new(self.0, v).to_owned().into_any())
    }
    fn i64(&mut self, v: i64) -> PyResult<Self::Value> {
        Ok(v.into_pyobject(self.0)?.into_any())
    }
    fn u64(&mut self, v: u64) -> PyResult<Self::Value> {
        Ok(v.into_pyobject(self.0)?.into_any())
    }
    fn f64(&mut self, v: f64) -> PyResult<Self::Value> {
        Ok(PyFloat::new(self.0, v).into_any())
    }
    fn str(&mut self, v: &str) -> PyResult<Self::Value> {
        if v.len() > VALUE_CACHE_MAX_LEN {
            return Ok(PyString::new(self.0, v).into_any());
        }
        Ok(cached(&VALUES, self.0, v, PyString::new).into_any())
    }
    fn key(&mut self, k: &str) -> PyResult<Self::Value> {
        if k.len() > KEY_CACHE_MAX_LEN {
            return Ok(PyString::new(self.0, k).into_any());
        }
        Ok(cached(&KEYS, self.0, k, PyString::intern).into_any())
    }
    fn list(&mut self, len: Option<usize>) -> PyResult<Self::List> {
        Ok(Vec::with_capacity(len.unwrap_or(0).min(1024)))
    }
    fn push(&mut self, list: &mut Self::List, item: Self::Value) -> PyResult<()> {
        list.push(item);
        Ok(())
    }
    fn end_list(&mut self, list: Self::List) -> PyResult<Self::Value> {
        Ok(PyList::new(self.0, list)?.into_any())
    }
    fn map(&mut self, _: Option<usize>) -> PyResult<Self::Map> {
        Ok(PyDict::new(self.0))
    }
    fn insert(&mut self, map: &mut Self::Map, key: Self::Value, value: Self::Value) -> PyResult<()> {
        map.set_item(key, value)
    }
    fn end_map(&mut self, map: Self::Map) -> PyResult<Self::Value> {
        Ok(map.into_any())
    }
}

/// Slots in each thread's string caches (a power of two).
const CACHE_SLOTS: usize = 1024;
/// Longer keys are not cached (they rarely repeat, and hashing them costs).
const KEY_CACHE_MAX_LEN: usize = 64;
/// Longer string values are not cached: the short ones are the ones that
/// repeat (an enum's members, a status, a label).
const VALUE_CACHE_MAX_LEN: usize = 24;

/// A string's text and the string object made for it.
type CacheSlot = Option<(Box<str>, Py<PyString>)>;

/// One thread's cache of string objects by their text.
type StringCache = std::cell::RefCell<Vec<CacheSlot>>;

thread_local! {
    /// Object keys repeat across replies (they are the contract's property
    /// names): each thread keeps the last string object made for each slot,
    /// so a key already seen is one reference count, not a new string, a
    /// hash and an intern lookup.
    static KEYS: StringCache = std::cell::RefCell::new((0..CACHE_SLOTS).map(|_| None).collect());
    /// Short string values repeat too (enum members): the same, not interned.
    static VALUES: StringCache = std::cell::RefCell::new((0..CACHE_SLOTS).map(|_| None).collect());
}

/// The string object for `text` from `cache`, made with `make` when the
/// slot holds another. A `str` is immutable, so handing out one object for
/// equal texts changes nothing a caller can see but `is`.
fn cached<'py>(
    cache: &'static std::thread::LocalKey<StringCache>,
    py: Python<'py>,
    text: &str,
    make: fn(Python<'py>, &str) -> Bound<'py, PyString>,
) -> Bound<'py, PyString> {
    // FNV-1a: short texts, no need for DoS resistance (a collision only
    // replaces the slot's entry).
    let hash = text.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
    let slot = usize::try_from(hash).unwrap_or(0) & (CACHE_SLOTS - 1);
    cache.with_borrow_mut(|slots| {
        let Some(entry) = slots.get_mut(slot) else { return make(py, text) };
        if let Some((held, object)) = entry {
            if **held == *text {
                return object.bind(py).clone();
            }
        }
        let object = make(py, text);
        *entry = Some((text.into(), object.clone().unbind()));
        object
    })
}

fn json_to_py<'py>(py: Python<'py>, value: &serde_json::Value) -> PyResult<Bound<'py, PyAny>> {
    vouch_bind::build_value(value, &mut Objects(py)).map_err(PyValueError::new_err)
}

/// One reason a reply was refused.
#[pyclass(frozen, module = "vouch._vouch", name = "Problem")]
struct Problem {
    /// Stable code, e.g. `not_allowed`.
    #[pyo3(get)]
    code: &'static str,
    /// `no_answer` (the model did not answer) or `bad_answer`.
    #[pyo3(get, name = "class_")]
    class: &'static str,
    /// RFC 6901 JSON Pointer into the reply (`""`: the whole reply).
    #[pyo3(get)]
    path: String,
    /// What the contract expected, in words.
    #[pyo3(get)]
    expected: String,
    /// A short, bounded excerpt of what the reply had.
    #[pyo3(get)]
    got: String,
    /// A sentence a person can read, starting with the path.
    #[pyo3(get)]
    message: String,
    /// `(line, column, offset)` in the raw reply, for reading problems.
    #[pyo3(get)]
    position: Option<(usize, usize, usize)>,
}

#[pymethods]
impl Problem {
    /// The problem as `vouch check --json` writes it.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("code", self.code)?;
        d.set_item("class", self.class)?;
        d.set_item("path", &self.path)?;
        d.set_item("expected", &self.expected)?;
        d.set_item("got", &self.got)?;
        d.set_item("message", &self.message)?;
        if let Some((line, column, offset)) = self.position {
            let p = PyDict::new(py);
            p.set_item("line", line)?;
            p.set_item("column", column)?;
            p.set_item("offset", offset)?;
            d.set_item("position", p)?;
        }
        Ok(d)
    }

    fn __repr__(&self) -> String {
        format!("Problem(code={:?}, path={:?}, message={:?})", self.code, self.path, self.message)
    }
}

impl Problem {
    fn of(p: &vouch::Problem) -> Self {
        Self {
            code: p.code.as_str(),
            class: p.class.as_str(),
            path: p.path.clone(),
            expected: p.expected.clone(),
            got: p.got.clone(),
            message: p.message.clone(),
            position: p.position.map(|p| (p.line, p.column, p.offset)),
        }
    }
}

/// A change a declared repair rule made to the reply.
#[pyclass(frozen, module = "vouch._vouch", name = "Repair")]
struct Repair {
    /// JSON Pointer of the repaired value.
    #[pyo3(get)]
    path: String,
    /// The rule that made the change (`coerce`, `clamp`, `trim`, …).
    #[pyo3(get)]
    rule: String,
    /// The value before (a bounded excerpt for long values).
    #[pyo3(get)]
    before: Py<PyAny>,
    /// The value after.
    #[pyo3(get)]
    after: Py<PyAny>,
    /// A sentence, e.g. `/score: "80" coerced to 80`.
    #[pyo3(get)]
    message: String,
}

#[pymethods]
impl Repair {
    fn __repr__(&self) -> String {
        format!("Repair(path={:?}, rule={:?}, message={:?})", self.path, self.rule, self.message)
    }
}

/// A gate finding: the model answered, and its answer is a real problem.
#[pyclass(frozen, module = "vouch._vouch", name = "Finding")]
struct Finding {
    /// JSON Pointer of the value the finding is about.
    #[pyo3(get)]
    path: String,
    /// The contract's message.
    #[pyo3(get)]
    message: String,
}

#[pymethods]
impl Finding {
    fn __repr__(&self) -> String {
        format!("Finding(path={:?}, message={:?})", self.path, self.message)
    }
}

/// The contract's verdict on one reply.
#[pyclass(frozen, module = "vouch._vouch", name = "Verdict")]
struct Verdict {
    held: Held,
    /// The value, once built. A plain `OnceLock`, set under the GIL: pyo3's
    /// `PyOnceLock` lets the GIL go and takes it back to fill an empty cell
    /// (against a deadlock that a cell filled by moving a value cannot meet),
    /// and on a short reply that round trip cost a tenth of `check(raw).value`.
    value: std::sync::OnceLock<Py<PyAny>>,
}

/// How a verdict is held.
enum Held {
    /// The core's whole verdict.
    Checked(vouch::Verdict),
    /// Decided without the core's whole verdict: `accepted` exactly as
    /// sent, its value built in the check's own walk (`check(raw,
    /// value=True)`) or walked from the reply when first read (`check`),
    /// or refused by the single pass before the refusal's report was
    /// written (`check`). Anything else asked of it (its
    /// problems, its text, its JSON) comes from checking the reply again,
    /// once: the same verdict, as the core is deterministic.
    Decided { accepted: bool, contract: Arc<vouch::Contract>, raw: Raw, whole: std::sync::OnceLock<vouch::Verdict> },
}

impl Verdict {
    fn new(inner: vouch::Verdict) -> Self {
        Self { held: Held::Checked(inner), value: std::sync::OnceLock::new() }
    }

    fn as_sent(contract: Arc<vouch::Contract>, raw: Raw, value: Py<PyAny>) -> Self {
        let cell = std::sync::OnceLock::from(value);
        Self { held: Held::Decided { accepted: true, contract, raw, whole: std::sync::OnceLock::new() }, value: cell }
    }

    /// Passed as sent ([`vouch::Brief::PassedAsSent`]): the value is walked
    /// from the kept reply when first asked for.
    fn passed_as_sent(contract: Arc<vouch::Contract>, raw: Raw) -> Self {
        let held = Held::Decided { accepted: true, contract, raw, whole: std::sync::OnceLock::new() };
        Self { held, value: std::sync::OnceLock::new() }
    }

    fn refused_unreported(contract: Arc<vouch::Contract>, raw: Raw) -> Self {
        let held = Held::Decided { accepted: false, contract, raw, whole: std::sync::OnceLock::new() };
        Self { held, value: std::sync::OnceLock::new() }
    }

    /// The core's whole verdict (checked again, once, for a decided one).
    fn whole(&self) -> &vouch::Verdict {
        match &self.held {
            Held::Checked(v) => v,
            Held::Decided { contract, raw, whole, .. } => whole.get_or_init(|| raw.verdict(contract)),
        }
    }

    /// `Some(accepted)` for a verdict decided without the whole verdict.
    fn decided(&self) -> Option<bool> {
        match self.held {
            Held::Decided { accepted, .. } => Some(accepted),
            Held::Checked(_) => None,
        }
    }
}

#[pymethods]
impl Verdict {
    /// `"accepted"` or `"refused"`.
    #[getter]
    fn outcome(&self) -> &'static str {
        match self.decided() {
            Some(true) => "accepted",
            Some(false) => "refused",
            None => self.whole().outcome(),
        }
    }

    /// Accepted and no gate finding: the one to branch on.
    #[getter]
    fn passed(&self) -> bool {
        self.decided().unwrap_or_else(|| self.whole().is_pass())
    }

    /// Test hook, not API: decided and built in one walk (`check(raw, value=True)`).
    #[getter]
    fn _held_as_sent(&self) -> bool {
        self.decided() == Some(true)
    }

    /// Test hook, not API: refused by the single pass, the report not yet written.
    #[getter]
    fn _held_unreported(&self) -> bool {
        self.decided() == Some(false)
    }

    /// Test hook, not API: the value is built already (`check_many(raws, value=True)`).
    #[getter]
    fn _value_built(&self) -> bool {
        self.value.get().is_some()
    }

    /// The contract accepted the reply (it may still carry findings).
    #[getter]
    fn accepted(&self) -> bool {
        self.decided().unwrap_or_else(|| self.whole().is_accepted())
    }

    /// The vouched value as Python objects, built straight from the vouched
    /// text on first access (then the same object); `None` when refused.
    #[getter]
    fn value(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        if let Some(v) = self.value.get() {
            return Ok(v.clone_ref(py));
        }
        let built = match &self.held {
            Held::Decided { accepted: false, .. } => return Ok(py.None()),
            // Passed as sent: the reply's own text is the vouched text.
            Held::Decided { accepted: true, contract, raw, .. } => {
                let text = raw.text().or_else(|| std::str::from_utf8(raw.as_ref()).ok()).unwrap_or_default();
                contract.build_passed(text, &mut Objects(py))
            }
            Held::Checked(vouch::Verdict::Accepted(accepted)) => vouch_bind::build(accepted, &mut Objects(py)),
            Held::Checked(vouch::Verdict::Refused(_)) => return Ok(py.None()),
        };
        let built = built.map_err(|e| PyValueError::new_err(format!("{} (at {:?})", e.message(), e.path())))?.unbind();
        // Built holding the GIL; were another thread's value set first
        // meanwhile, that one is kept, so every read gives one object.
        Ok(self.value.get_or_init(|| built).clone_ref(py))
    }

    /// The accepted value as compact JSON text (repairs made); `None` when refused.
    #[getter]
    fn json(&self) -> Option<String> {
        match self.whole() {
            vouch::Verdict::Accepted(a) => Some(a.json().into_owned()),
            vouch::Verdict::Refused(_) => None,
        }
    }

    /// Why the reply was refused (empty when accepted).
    #[getter]
    fn problems(&self) -> Vec<Problem> {
        if self.decided() == Some(true) {
            return Vec::new();
        }
        self.whole().problems().iter().map(Problem::of).collect()
    }

    /// Every change the contract's declared repairs made.
    #[getter]
    fn repairs(&self, py: Python<'_>) -> PyResult<Vec<Repair>> {
        if self.decided().is_some() {
            return Ok(Vec::new());
        }
        self.whole()
            .repairs()
            .iter()
            .map(|r| {
                Ok(Repair {
                    path: r.path.clone(),
                    rule: r.rule.clone(),
                    before: json_to_py(py, &r.before)?.unbind(),
                    after: json_to_py(py, &r.after)?.unbind(),
                    message: r.message.clone(),
                })
            })
            .collect()
    }

    /// The gate's findings on an accepted reply.
    #[getter]
    fn findings(&self) -> Vec<Finding> {
        if self.decided().is_some() {
            return Vec::new();
        }
        self.whole().findings().iter().map(|f| Finding { path: f.path.clone(), message: f.message.clone() }).collect()
    }

    /// The user message vouch asks again with after this refusal (the
    /// core's words, as every surface sends them); `None` when accepted.
    fn reask(&self) -> Option<String> {
        if self.decided() == Some(true) {
            return None;
        }
        match self.whole() {
            vouch::Verdict::Refused(r) => Some(r.reask_text()),
            vouch::Verdict::Accepted(_) => None,
        }
    }

    /// The verdict as `vouch check --json` prints it, byte for byte
    /// (without the newline).
    fn to_json(&self) -> String {
        vouch_bind::verdict_json(self.whole())
    }

    /// Truthiness would be ambiguous (accepted? passed?), and guessing it
    /// is the bug vouch exists for: say which.
    fn __bool__(&self) -> PyResult<bool> {
        Err(PyTypeError::new_err(
            "a Verdict has no truth value: test verdict.passed (accepted, no finding) or verdict.accepted",
        ))
    }

    fn __repr__(&self) -> String {
        let whole = self.whole();
        let problems = whole.problems();
        match problems.first() {
            None => format!(
                "Verdict(outcome={:?}, passed={}, findings={}, repairs={})",
                whole.outcome(),
                if whole.is_pass() { "True" } else { "False" },
                whole.findings().len(),
                whole.repairs().len()
            ),
            Some(first) => format!(
                "Verdict(outcome={:?}, problems={}, first={:?})",
                whole.outcome(),
                problems.len(),
                first.message
            ),
        }
    }
}

/// `vouch.Refused(verdict)`: the exception is the Python package's own
/// class, so `except vouch.Refused` catches it wherever it is raised.
fn refused(py: Python<'_>, verdict: Verdict) -> PyErr {
    static REFUSED: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let class = REFUSED.get_or_try_init(py, || py.import("vouch")?.getattr("Refused").map(Bound::unbind));
    match class.and_then(|c| c.bind(py).call1((verdict,))) {
        Ok(exception) => PyErr::from_value(exception),
        Err(e) => e,
    }
}

/// A compiled contract: JSON Schema with `x-vouch`, one for the check, the
/// provider's schema and the prompt.
#[pyclass(subclass, frozen, module = "vouch._vouch", name = "Contract")]
struct Contract {
    inner: Arc<vouch::Contract>,
}

/// The first place in a contract given as a dict where `json.dumps` would
/// write something else than what is there, as a mistake naming it: a key
/// that is not a str (`True`, `None`, `1` and `1.5` would become the strings
/// `"true"`, `"null"`, `"1"`, `"1.5"`), a float that is not a JSON number
/// (NaN, ±inf), or a key or str holding a lone surrogate (no character).
/// Walked with an explicit stack (a deep document cannot overflow this
/// one), each dict or list once (a cycle ends; `json.dumps` reports it).
fn not_json_at(schema: &Bound<'_, PyAny>) -> PyResult<Option<vouch_bind::ContractMistake>> {
    let mistake = |location: String, what: String| {
        let at = if location.is_empty() { "(root)".to_owned() } else { location.clone() };
        vouch_bind::ContractMistake {
            kind: "not_json".to_owned(),
            keyword: String::new(),
            location,
            message: format!("the contract is not JSON: {at}: {what}"),
        }
    };
    let mut seen = std::collections::HashSet::new();
    let mut stack = vec![(schema.clone(), String::new())];
    while let Some((value, path)) = stack.pop() {
        if let Ok(f) = value.cast::<PyFloat>() {
            let f = f.value();
            if !f.is_finite() {
                return Ok(Some(mistake(path, format!("{f} is not a JSON number"))));
            }
        } else if let Ok(text) = value.cast::<PyString>() {
            // json.dumps would write it as a "\ud800" escape, which is not a character either.
            if text.to_cow().is_err() {
                return Ok(Some(mistake(path, "the str holds a lone surrogate, which is not a character".to_owned())));
            }
        } else if let Ok(dict) = value.cast::<PyDict>() {
            if !seen.insert(value.as_ptr() as usize) {
                continue;
            }
            for (key, item) in dict.iter() {
                let Ok(name) = key.cast::<PyString>() else {
                    let type_name = key.get_type().name().map_or_else(|_| "?".to_owned(), |n| n.to_string());
                    let shown = key.repr().map_or_else(|_| "?".to_owned(), |r| r.to_string());
                    return Ok(Some(mistake(
                        path,
                        format!("the key {shown} is not a str ({type_name}): json.dumps would make it a string"),
                    )));
                };
                let Ok(name) = name.to_cow() else {
                    let shown = key.repr().map_or_else(|_| "?".to_owned(), |r| r.to_string());
                    return Ok(Some(mistake(
                        path,
                        format!("the key {shown} holds a lone surrogate, which is not a character"),
                    )));
                };
                stack.push((item, format!("{path}/{}", name.replace('~', "~0").replace('/', "~1"))));
            }
        } else if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
            if !seen.insert(value.as_ptr() as usize) {
                continue;
            }
            for (i, item) in value.try_iter()?.enumerate() {
                stack.push((item?, format!("{path}/{i}")));
            }
        }
    }
    Ok(None)
}

fn contract_error(py: Python<'_>, mistakes: &[vouch_bind::ContractMistake]) -> PyErr {
    let message = mistakes.iter().map(|m| m.message.as_str()).collect::<Vec<_>>().join("\n");
    let err = ContractError::new_err(message);
    let list = mistakes
        .iter()
        .map(|m| {
            let d = PyDict::new(py);
            d.set_item("kind", &m.kind)?;
            d.set_item("keyword", &m.keyword)?;
            d.set_item("location", &m.location)?;
            d.set_item("message", &m.message)?;
            Ok(d)
        })
        .collect::<PyResult<Vec<_>>>();
    match list {
        Ok(list) => match err.value(py).setattr("mistakes", list) {
            Ok(()) => err,
            Err(e) => e,
        },
        Err(e) => e,
    }
}

impl Contract {
    /// `check`'s verdict. `value`: built in the check's own walk where the
    /// reply is accepted exactly as sent. `defer_report`: a reply the single
    /// pass is certain to refuse is held refused, its problems written when
    /// first read (a caller branching on `accepted` never pays for them).
    fn verdict(
        &self,
        py: Python<'_>,
        raw_reply: &Bound<'_, PyAny>,
        value: bool,
        defer_report: bool,
    ) -> PyResult<Verdict> {
        let r = raw(raw_reply, "a reply", Some(self.inner.limits().max_bytes))?;
        if matches!(r, Raw::Start { .. }) {
            // Refused by its size: its one verdict, whole, now.
            return Ok(Verdict::new(checked(py, &r, &self.inner)));
        }
        let text = r.text().or_else(|| std::str::from_utf8(r.as_ref()).ok());
        if let Some(built) =
            text.filter(|_| value).and_then(|t| vouch_bind::build_as_sent(&self.inner, t, &mut Objects(py)))
        {
            return Ok(Verdict::as_sent(Arc::clone(&self.inner), r, built.unbind()));
        }
        let contract = &self.inner;
        match text {
            Some(text) if defer_report => {
                let unreported = vouch::Refusals::Unreported;
                let brief = if text.len() < DETACH_FROM_BYTES {
                    contract.check_str_briefly(text, unreported)
                } else {
                    py.detach(|| contract.check_str_briefly(text, unreported))
                };
                Ok(match brief {
                    vouch::Brief::PassedAsSent => Verdict::passed_as_sent(Arc::clone(contract), r),
                    vouch::Brief::Refused => Verdict::refused_unreported(Arc::clone(contract), r),
                    vouch::Brief::Verdict(verdict) => Verdict::new(verdict),
                })
            }
            _ => Ok(Verdict::new(checked(py, &r, contract))),
        }
    }
}

#[pymethods]
impl Contract {
    /// Compile a contract from its document: a dict, or JSON text (str or bytes).
    #[new]
    fn new(py: Python<'_>, schema: &Bound<'_, PyAny>) -> PyResult<Self> {
        let compiled = if let Ok(b) = schema.cast::<PyBool>() {
            // A boolean schema (true accepts anything, false nothing) is JSON Schema too.
            vouch_bind::compile(if b.is_true() { b"true" } else { b"false" })
        } else if schema.is_instance_of::<PyDict>() {
            if let Some(mistake) = not_json_at(schema)? {
                return Err(contract_error(py, &[mistake]));
            }
            let dumped = py.import("json")?.call_method1("dumps", (schema,)).and_then(|s| s.extract::<String>());
            match dumped {
                Ok(text) => py.detach(|| vouch_bind::compile(text.as_bytes())),
                Err(e) => Err(vec![vouch_bind::ContractMistake {
                    kind: "not_json".to_owned(),
                    keyword: String::new(),
                    location: String::new(),
                    message: format!("the contract is not JSON: {e}"),
                }]),
            }
        } else if schema.is_instance_of::<PyString>() || schema.extract::<PyBackedBytes>().is_ok() {
            let text = raw(schema, "the contract", None)?;
            py.detach(|| vouch_bind::compile(text.as_ref()))
        } else {
            let type_name = schema.get_type().name().map_or_else(|_| "?".to_owned(), |n| n.to_string());
            return Err(PyTypeError::new_err(format!(
                "the contract must be a dict, a bool (a boolean schema) or JSON text (str or bytes), not {type_name}"
            )));
        };
        match compiled {
            Ok(c) => Ok(Self { inner: Arc::new(c) }),
            Err(mistakes) => Err(contract_error(py, &mistakes)),
        }
    }

    /// Check one reply (str or bytes, exactly as the model sent it). The GIL
    /// is released while a reply of 2,048 bytes or more is checked (a shorter
    /// one checks in about the time letting the GIL go and taking it back
    /// takes), and the value is built on first access. With `value=True` the
    /// value is built while checking, in the check's own walk where the
    /// contract accepts the reply exactly as sent (the GIL held for the check:
    /// for one thread that wants the value). A reply the check is certain to
    /// refuse is known refused at the cost of reading it; its problems are
    /// written when first read (`problems`, `to_json()`, `reask()`), so code
    /// that only branches on `accepted` never pays for them.
    #[pyo3(signature = (raw_reply, *, value = false))]
    fn check(&self, py: Python<'_>, raw_reply: &Bound<'_, PyAny>, value: bool) -> PyResult<Verdict> {
        self.verdict(py, raw_reply, value, true)
    }

    /// The vouched value of one reply (str or bytes), or `vouch.Refused`
    /// (carrying the verdict) when the contract refuses it; a gate finding
    /// does not raise (`check(raw).passed` is for a gate). Without `model`:
    /// the value as Python objects, built in the check's own walk where the
    /// contract accepts the reply exactly as sent (`check(raw, value=True)`).
    /// With `model` (a Pydantic model class): `model` built from the vouched
    /// JSON in Pydantic's strict mode (`model_validate_json(json, strict=True)`:
    /// enums, dates and UUIDs from their strings, nothing coerced).
    #[pyo3(signature = (raw_reply, model = None))]
    fn parse(
        &self,
        py: Python<'_>,
        raw_reply: &Bound<'_, PyAny>,
        model: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        // A refusal raises with every problem in its message: written now.
        let Some(model) = model else {
            let verdict = self.verdict(py, raw_reply, true, false)?;
            if verdict.accepted() {
                return verdict.value(py);
            }
            return Err(refused(py, verdict));
        };
        let verdict = self.verdict(py, raw_reply, false, false)?;
        let Some(text) = verdict.json() else { return Err(refused(py, verdict)) };
        let strict = PyDict::new(py);
        strict.set_item("strict", true)?;
        Ok(model.call_method("model_validate_json", (text,), Some(&strict))?.unbind())
    }

    /// Check many replies across all cores, in order. The replies are
    /// checked on the pool as they are read from `raws`, while this thread
    /// (holding the GIL) reads the next and wraps the verdicts already made;
    /// the GIL is let go every 256 replies (another thread's turn) and
    /// while the last ones are checked. With `value=True` each accepted
    /// verdict's value is built by this thread as soon as its chunk is
    /// back, while the pool checks the next ones, instead of by the caller
    /// after every check is done (when nothing else is left to run beside
    /// it): the same objects `verdict.value` would build on first access.
    #[pyo3(signature = (raws, *, value = false))]
    fn check_many<'py>(&self, py: Python<'py>, raws: &Bound<'py, PyAny>, value: bool) -> PyResult<Bound<'py, PyList>> {
        // One reply is iterable too: each of its characters (or bytes) would be checked as a reply.
        if raws.is_instance_of::<PyString>() || raws.extract::<PyBackedBytes>().is_ok() {
            return Err(PyTypeError::new_err("check_many takes an iterable of replies, not one reply"));
        }
        let max_bytes = self.inner.limits().max_bytes;
        let mut ahead = vouch_bind::CheckAhead::new(Arc::clone(&self.inner));
        let mut out: Vec<Bound<'py, Verdict>> = Vec::with_capacity(raws.len().unwrap_or(0));
        let take = |ahead: &mut vouch_bind::CheckAhead<Raw>, out: &mut Vec<Bound<'py, Verdict>>| -> PyResult<()> {
            while let Some(chunk) = ahead.ready() {
                let (_replies, verdicts) = chunk.map_err(pyo3::exceptions::PyRuntimeError::new_err)?;
                for v in verdicts {
                    let verdict = Verdict::new(v);
                    if value {
                        // Sets the verdict's cell; a refusal's is `None`, built on read.
                        verdict.value(py)?;
                    }
                    out.push(Bound::new(py, verdict)?);
                }
            }
            Ok(())
        };
        for (i, r) in raws.try_iter()?.enumerate() {
            ahead.push(raw(&r?, "each reply", Some(max_bytes))?);
            if i % 32 == 31 {
                take(&mut ahead, &mut out)?;
            }
            // The GIL is let go now and then, as the interpreter's own loop
            // does: another thread waiting for it gets its turn.
            if i % 256 == 255 {
                py.detach(|| ());
            }
        }
        ahead.finish();
        while ahead.pending() {
            py.detach(|| ahead.wait());
            take(&mut ahead, &mut out)?;
        }
        PyList::new(py, out)
    }

    /// A check of one reply fed piece by piece as it streams.
    fn stream(&self) -> StreamCheck {
        StreamCheck {
            inner: vouch_bind::Stream::new(Arc::clone(&self.inner)),
            max_bytes: self.inner.limits().max_bytes,
        }
    }

    /// Plain-language instructions for the model, from the same contract.
    fn prompt(&self) -> String {
        self.inner.prompt()
    }

    /// The schema to send the provider (`openai`, `anthropic`, `gemini`,
    /// `json-schema`); with `name`, wrapped as the request's `response_format`.
    #[pyo3(signature = (provider = "openai", name = None))]
    fn schema<'py>(&self, py: Python<'py>, provider: &str, name: Option<&str>) -> PyResult<Bound<'py, PyAny>> {
        let Some(p) = vouch::Provider::from_name(provider) else {
            return Err(PyValueError::new_err(format!(
                "unknown provider {provider:?}: one of openai, anthropic, gemini, json-schema"
            )));
        };
        let exported = match name {
            Some(name) => self.inner.provider_schema(p, name),
            None => self.inner.bare_provider_schema(p),
        };
        match exported {
            Ok(v) => json_to_py(py, &v),
            Err(e) => Err(ExportError::new_err(e.to_string())),
        }
    }

    /// The contract's document as compact JSON text (what compiles to this
    /// contract again: how it travels to a Spark executor).
    #[getter]
    fn document(&self) -> String {
        vouch::to_json_string(self.inner.document())
    }

    /// Keywords the contract holds that vouch does not know, as `(location, keyword)`.
    #[getter]
    fn unknown_keywords(&self) -> Vec<(String, String)> {
        self.inner.unknown_keywords().to_vec()
    }
}

/// A reply checked while it streams: `feed` each piece as it comes; stop the
/// model at the first `"refused"`; `finish()` is `check`'s verdict on all of it.
#[pyclass(module = "vouch._vouch", name = "StreamCheck")]
struct StreamCheck {
    inner: vouch_bind::Stream,
    /// The contract's `max_bytes`: a piece far over it is read only as far as the check reads.
    max_bytes: usize,
}

fn progress_name(p: vouch::Progress) -> &'static str {
    match p {
        vouch::Progress::Pending => "pending",
        vouch::Progress::Refused => "refused",
    }
}

#[pymethods]
impl StreamCheck {
    /// Feed the next piece (str or bytes, any size): `"pending"` while some
    /// completion could still be accepted, `"refused"` once none can.
    fn feed(&mut self, piece: &Bound<'_, PyAny>) -> PyResult<&'static str> {
        match raw(piece, "a piece", Some(self.max_bytes))? {
            // A piece alone over the limit: its start fed, the rest counted.
            Raw::Start { start, utf8_len } => match self.inner.feed_past_limit_start(&start, utf8_len) {
                Some(progress) => Ok(progress_name(progress)),
                // Not reached: the start alone is over the limit.
                None => Err(pyo3::exceptions::PyRuntimeError::new_err("vouch: internal error reading a piece")),
            },
            r => Ok(progress_name(self.inner.feed(r.as_ref()))),
        }
    }

    /// `"pending"` or `"refused"`.
    #[getter]
    fn progress(&self) -> &'static str {
        progress_name(self.inner.progress())
    }

    /// Why it is refused (empty while pending).
    #[getter]
    fn problems(&self) -> Vec<Problem> {
        self.inner.problems().iter().map(Problem::of).collect()
    }

    /// The bytes received when the refusal became certain (`None` while pending).
    #[getter]
    fn decided_at(&self) -> Option<usize> {
        self.inner.decided_at()
    }

    /// Bytes received so far.
    #[getter]
    fn received(&self) -> usize {
        self.inner.received()
    }

    /// The value so far, for a display while the rest streams; never a vouched value.
    #[getter]
    fn partial<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.inner.partial().map(|v| json_to_py(py, &v)).transpose()
    }

    /// The verdict `check` gives on everything fed, byte for byte; the check
    /// then starts again, empty.
    fn finish(&mut self, py: Python<'_>) -> Verdict {
        let inner = &mut self.inner;
        Verdict::new(py.detach(|| inner.finish()))
    }
}

/// One ask's rounds (the state machine; `vouch.rounds` drives it).
#[pyclass(module = "vouch._vouch", name = "Rounds")]
struct Rounds {
    inner: vouch_bind::Rounds,
}

fn verdict_of(v: Option<&vouch::Verdict>) -> Option<Verdict> {
    v.map(|v| Verdict::new(v.clone()))
}

#[pymethods]
impl Rounds {
    #[new]
    #[pyo3(signature = (contract, max_rounds, fallback = None))]
    fn new(contract: &Bound<'_, Contract>, max_rounds: usize, fallback: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let fallback = fallback.map(|f| raw(f, "the fallback's JSON", None)).transpose()?;
        let inner = vouch_bind::Rounds::new(
            Arc::clone(&contract.get().inner),
            max_rounds,
            fallback.as_ref().map(AsRef::as_ref),
        )
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(Self { inner })
    }

    /// The first round's system message: the contract's instructions after
    /// the caller's own system message, if any.
    #[pyo3(signature = (callers_own = None))]
    fn system_message(&self, callers_own: Option<&str>) -> String {
        vouch_bind::system_message(&self.inner.contract().prompt(), callers_own)
    }

    /// Check the reply; `None` when done, else `(assistant, user)`: the
    /// messages to add before calling again (`assistant` is `None` when the
    /// model sent nothing, or when the reply was refused for its size).
    fn reply(&mut self, py: Python<'_>, raw_reply: &Bound<'_, PyAny>) -> PyResult<Option<(Option<String>, String)>> {
        // A `str` far over the limit is read only as far as the check reads (it is never sent back).
        let r = raw(raw_reply, "the reply", Some(self.inner.contract().limits().max_bytes))?;
        let inner = &mut self.inner;
        let step = py.detach(|| match &r {
            Raw::Start { start, utf8_len } => inner.reply_past_limit(start, *utf8_len),
            r => inner.reply(r.as_ref()),
        });
        Ok(match step {
            vouch_bind::Step::Done => None,
            vouch_bind::Step::AskAgain { assistant, user } => Some((assistant, user)),
        })
    }

    #[getter]
    fn outcome(&self) -> &'static str {
        self.inner.outcome()
    }

    #[getter]
    fn source(&self) -> Option<&'static str> {
        self.inner.source()
    }

    #[getter]
    fn verdicts(&self) -> Vec<Verdict> {
        self.inner.verdicts().iter().map(|v| Verdict::new(v.clone())).collect()
    }

    #[getter]
    fn fallback(&self) -> Option<Verdict> {
        verdict_of(self.inner.fallback())
    }

    #[getter]
    fn answer(&self) -> Option<Verdict> {
        verdict_of(self.inner.answer())
    }
}

/// A column of texts in Arrow's layout (`large_string`): the texts one after
/// another, their 64-bit end offsets, and a validity bitmap when one is null;
/// handed to Python as `(validity or None, offsets, data, null_count)`, which
/// `pyarrow.Array.from_buffers` takes without an object per text.
struct TextColumn {
    valid: Vec<u8>,
    offsets: Vec<u8>,
    data: Vec<u8>,
    len: usize,
    nulls: usize,
}

impl Default for TextColumn {
    /// Empty: the one offset an empty column has.
    fn default() -> Self {
        Self { valid: Vec::new(), offsets: 0i64.to_le_bytes().to_vec(), data: Vec::new(), len: 0, nulls: 0 }
    }
}

impl TextColumn {
    fn push(&mut self, text: Option<&[u8]>) {
        if self.len.is_multiple_of(8) {
            self.valid.push(0);
        }
        match text {
            Some(t) => {
                self.data.extend_from_slice(t);
                if let Some(byte) = self.valid.last_mut() {
                    *byte |= 1 << (self.len % 8);
                }
            }
            None => self.nulls += 1,
        }
        self.offsets.extend_from_slice(&i64::try_from(self.data.len()).unwrap_or(i64::MAX).to_le_bytes());
        self.len += 1;
    }

    fn into_py<'py>(self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let valid = (self.nulls > 0).then(|| PyBytes::new(py, &self.valid));
        (valid, PyBytes::new(py, &self.offsets), PyBytes::new(py, &self.data), self.nulls).into_pyobject(py)
    }
}

/// Many verdicts' fields as columns, for `vouch.spark.verdict_array`: one
/// walk here rather than a getter call per field in Python, and each text
/// column built in Arrow's own layout (see [`TextColumn`]), not as a `str`
/// per value that Arrow would read back one by one. Returns `(outcome,
/// passed, value, json, problems, findings, repaired)`: text columns as
/// [`TextColumn`]s, `passed` a list of bools, `problems` `(ends, code, class,
/// path, expected, got, message)` with `ends[i + 1]` the end of verdict `i`'s
/// items, `findings` `(ends, path, message)` likewise, and `repaired` the
/// verdicts that carry repairs (their before and after are written in
/// Python, as `verdict_row` writes them).
#[pyfunction]
fn _verdict_columns<'py>(py: Python<'py>, verdicts: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyTuple>> {
    let (mut outcome, mut value, mut whole) = (TextColumn::default(), TextColumn::default(), TextColumn::default());
    let mut passed = Vec::new();
    let mut problem_ends = vec![0usize];
    let mut problems: [TextColumn; 6] = Default::default();
    let mut finding_ends = vec![0usize];
    let mut findings: [TextColumn; 2] = Default::default();
    let mut repaired = Vec::new();
    let mut line = Vec::new();
    for (i, item) in verdicts.try_iter()?.enumerate() {
        let item = item?;
        let verdict = item.cast::<Verdict>()?.get();
        let held = verdict.whole();
        outcome.push(Some(held.outcome().as_bytes()));
        passed.push(verdict.passed());
        match held {
            vouch::Verdict::Accepted(a) => value.push(Some(a.json().as_bytes())),
            vouch::Verdict::Refused(_) => value.push(None),
        }
        line.clear();
        held.write_json(&mut line);
        whole.push(Some(&line));
        for p in held.problems() {
            let fields = [p.code.as_str(), p.class.as_str(), &p.path, &p.expected, &p.got, &p.message];
            for (column, field) in problems.iter_mut().zip(fields) {
                column.push(Some(field.as_bytes()));
            }
        }
        problem_ends.push(problem_ends.last().copied().unwrap_or(0) + held.problems().len());
        for f in held.findings() {
            findings[0].push(Some(f.path.as_bytes()));
            findings[1].push(Some(f.message.as_bytes()));
        }
        finding_ends.push(finding_ends.last().copied().unwrap_or(0) + held.findings().len());
        if !held.repairs().is_empty() {
            repaired.push(i);
        }
    }
    let [code, class, path, expected, got, message] = problems.map(|c| c.into_py(py));
    let problems = (problem_ends, code?, class?, path?, expected?, got?, message?);
    let [finding_path, finding_message] = findings.map(|c| c.into_py(py));
    let findings = (finding_ends, finding_path?, finding_message?);
    (outcome.into_py(py)?, passed, value.into_py(py)?, whole.into_py(py)?, problems, findings, repaired)
        .into_pyobject(py)
}

#[pymodule]
fn _vouch(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Contract>()?;
    m.add_class::<Verdict>()?;
    m.add_class::<Problem>()?;
    m.add_class::<Repair>()?;
    m.add_class::<Finding>()?;
    m.add_class::<Rounds>()?;
    m.add_class::<StreamCheck>()?;
    m.add_function(wrap_pyfunction!(_verdict_columns, m)?)?;
    m.add("ContractError", m.py().get_type::<ContractError>())?;
    m.add("ExportError", m.py().get_type::<ExportError>())?;
    Ok(())
}
