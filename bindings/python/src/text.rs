//! A Python `str`'s UTF-8: read in place where it is ASCII, made by vouch
//! where it is not.
//!
//! The wheel is abi3 for CPython 3.9 on, and 3.9's limited API has no way
//! to read a `str`'s UTF-8 without copying it into a new `bytes` object
//! (what `PyBackedStr` does there): one allocation and one copy per reply,
//! made while holding the GIL, which `check_many`'s other threads wait for.
//! `PyUnicode_AsUTF8AndSize` (stable ABI since 3.10) hands back the UTF-8
//! the `str` keeps itself: an ASCII `str` *is* its UTF-8. Any other `str`
//! CPython would encode one character at a time (and cache): [`transcoded`]
//! copies its code points out and encodes them here instead.
//!
//! The module's `unsafe` is kept to the C API calls (each with the GIL held
//! and a live `str`), to reading the buffer `PyUnicode_AsUTF8AndSize`
//! returns, and to the SSE2 loads and stores of sixteen code points; each
//! block says why it holds.
#![allow(unsafe_code)]

use std::ptr::NonNull;
use std::sync::OnceLock;

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyString;

extern "C" {
    // Declared here because pyo3-ffi declares it only for a 3.10 ABI.
    fn PyUnicode_AsUTF8AndSize(unicode: *mut ffi::PyObject, size: *mut ffi::Py_ssize_t) -> *const std::ffi::c_char;
}

/// A `str`'s own UTF-8, with the reference that keeps it alive.
pub struct Utf8 {
    _owner: Py<PyString>,
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: the buffer belongs to the `str` object `_owner` keeps alive; a
// `str` is immutable and CPython frees its UTF-8 only with the object, so
// the bytes neither change nor move while this exists, and reading them
// needs no GIL (no Python state is touched). `Py<PyString>` is itself Send
// and Sync.
unsafe impl Send for Utf8 {}
// SAFETY: as for Send: shared reads of immutable bytes.
unsafe impl Sync for Utf8 {}

impl Utf8 {
    /// The UTF-8 of `s` in place, or `None` on a CPython before 3.10 (where
    /// the call is not in the stable ABI: the caller copies instead). A
    /// `str` that is not valid Unicode (a lone surrogate) raises
    /// `UnicodeEncodeError`, as encoding it would.
    pub fn of(s: &Bound<'_, PyString>) -> PyResult<Option<Self>> {
        static IN_PLACE: OnceLock<bool> = OnceLock::new();
        if !*IN_PLACE.get_or_init(|| s.py().version_info() >= (3, 10)) {
            return Ok(None);
        }
        let mut size: ffi::Py_ssize_t = 0;
        // SAFETY: `s` is a live `str` (or subclass) and the GIL is held (the
        // `Bound`); `size` is a valid place to write the length.
        let data = unsafe { PyUnicode_AsUTF8AndSize(s.as_ptr(), &mut size) };
        let (Some(ptr), Ok(len)) = (NonNull::new(data.cast_mut().cast::<u8>()), usize::try_from(size)) else {
            return Err(PyErr::fetch(s.py()));
        };
        Ok(Some(Self { _owner: s.clone().unbind(), ptr, len }))
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        // SAFETY: `ptr` and `len` are the buffer CPython returned for the
        // live object (see the Send impl), `len` bytes long; CPython encodes
        // it with the strict handler, so it is valid UTF-8.
        unsafe { std::str::from_utf8_unchecked(std::slice::from_raw_parts(self.ptr.as_ptr(), self.len)) }
    }
}

/// How a `str` is read: see [`transcoded`].
pub enum Transcoded {
    /// Left to CPython's UTF-8: an ASCII `str` (its own UTF-8, read in
    /// place by [`Utf8::of`]) or one longer than [`MAX_TRANSCODED`].
    Left,
    /// Not all ASCII: its UTF-8, of vouch's making.
    Text(String),
    /// It holds a lone surrogate, which has no UTF-8: its bytes as
    /// [`unpaired_utf8`] writes them, which the check refuses (`not_json`
    /// at the surrogate's first byte).
    Unpaired(Vec<u8>),
    /// Longer than [`MAX_TRANSCODED`] and than the contract's `max_bytes`
    /// (in code points, so in bytes too): the UTF-8 of its first
    /// `max_bytes + 1` code points, as far as the check reads, and the
    /// length of its whole UTF-8, counted a piece at a time. No copy of the
    /// whole is made, by vouch or by CPython. A lone surrogate is written
    /// and counted as [`unpaired_utf8`] does.
    Start { start: Vec<u8>, utf8_len: usize },
}

/// Whether `s` is all ASCII (`str.isascii`, a flag CPython keeps, read in O(1)).
fn is_ascii(s: &Bound<'_, PyString>) -> PyResult<bool> {
    // The unbound method, called with the str: no bound method made a call,
    // and a subclass's own `isascii` cannot steer the reading.
    static IS_ASCII: pyo3::sync::PyOnceLock<Py<PyAny>> = pyo3::sync::PyOnceLock::new();
    let py = s.py();
    let method = IS_ASCII.get_or_try_init(py, || py.get_type::<PyString>().getattr("isascii").map(Bound::unbind))?;
    let end = std::ptr::null_mut::<ffi::PyObject>();
    // SAFETY: a callable and a live `str`, the GIL held (the `Bound`); the
    // argument list ends with NULL.
    let answer = unsafe { ffi::PyObject_CallFunctionObjArgs(method.as_ptr(), s.as_ptr(), end) };
    // SAFETY: a new reference or NULL (an exception set), owned from here.
    let answer = unsafe { Bound::from_owned_ptr_or_err(py, answer) }?;
    Ok(answer.is(&*pyo3::types::PyBool::new(py, true)))
}

/// The most code points vouch encodes itself (4 MB of them copied out).
const MAX_TRANSCODED: usize = 1 << 20;

/// `s`'s length in code points.
fn code_point_count(s: &Bound<'_, PyString>) -> PyResult<usize> {
    // SAFETY: a live `str` and the GIL held (the `Bound`).
    let len = unsafe { ffi::PyUnicode_GetLength(s.as_ptr()) };
    usize::try_from(len).map_err(|_| PyErr::fetch(s.py()))
}

/// A `str`'s code points, copied out by `PyUnicode_AsUCS4` (a widening
/// copy, in the stable ABI since 3.3).
///
/// Why not CPython's UTF-8: CPython makes a non-ASCII `str`'s UTF-8 on first
/// request one character at a time into a scratch buffer, then copies it
/// into an allocation it keeps with the object. On the bench corpus, where a
/// third of the replies hold a `≥` or an `é`, that was a quarter of
/// `check_many`'s time on the thread holding the GIL (the same strings
/// checked again, their UTF-8 then cached: 632 k → 858 k replies/s on one
/// core). Copied out, the code points are encoded by [`utf8_of`], sixteen at
/// a time where they are ASCII: `check_many` 605 k → 735 k replies/s on one
/// core, `check(raw).value` 351 k → 387 k (2026-12-07, one process, the two
/// taking turns). `chars` is `s`'s length ([`code_point_count`]).
fn read_code_points(s: &Bound<'_, PyString>, chars: usize, points: &mut Vec<u32>) -> PyResult<()> {
    let len = ffi::Py_ssize_t::try_from(chars).map_err(|_| PyErr::fetch(s.py()))?;
    points.clear();
    points.reserve(chars);
    // SAFETY: `points` has room for `len` code points, the string's length
    // (the caller's count; a `str` does not change), and no terminating NUL
    // is asked for (0).
    let copied = unsafe { ffi::PyUnicode_AsUCS4(s.as_ptr(), points.as_mut_ptr(), len, 0) };
    if copied.is_null() {
        return Err(PyErr::fetch(s.py()));
    }
    // SAFETY: the call wrote all `chars` of them.
    unsafe { points.set_len(chars) };
    Ok(())
}

/// How `s` is read. A `str` that is not all ASCII, of at most
/// [`MAX_TRANSCODED`] code points, is made UTF-8 by vouch from its code
/// points ([`read_code_points`]), so vouch never copies out more than 4 MB
/// of code points at once. A longer one is read a piece at a time as far
/// as the check reads ([`Transcoded::Start`]) when `max_bytes` is given and
/// it is over it, else left to CPython's UTF-8 (then it is within the
/// contract's limit, or not a whole reply).
pub fn transcoded(s: &Bound<'_, PyString>, max_bytes: Option<usize>) -> PyResult<Transcoded> {
    if is_ascii(s)? {
        return Ok(Transcoded::Left);
    }
    let chars = code_point_count(s)?;
    if chars > MAX_TRANSCODED {
        return Ok(match max_bytes.filter(|&max| chars > max.saturating_add(1)) {
            Some(max) => over_the_limit(s, chars, max)?,
            None => Transcoded::Left,
        });
    }
    CODE_POINTS.with_borrow_mut(|points| {
        read_code_points(s, chars, points)?;
        let mut text = String::with_capacity(points.len() + points.len() / 4 + 8);
        Ok(if utf8_of(points, &mut text) {
            Transcoded::Text(text)
        } else {
            Transcoded::Unpaired(unpaired_utf8(points))
        })
    })
}

/// Code points read at a time from a `str` over the limit.
const PIECE: usize = 1 << 16;

/// [`Transcoded::Start`] of `s`, `chars` code points long, over `max_bytes`
/// (`chars > max_bytes + 1`): read a piece at a time (`PyUnicode_AsUCS4`
/// takes a whole `str`, so each piece is a substring of at most [`PIECE`]),
/// the first `max_bytes + 1` code points made UTF-8 (each is at least a
/// byte: past the limit; a lone surrogate as [`unpaired_utf8`] writes it),
/// the rest only counted.
fn over_the_limit(s: &Bound<'_, PyString>, chars: usize, max_bytes: usize) -> PyResult<Transcoded> {
    let keep = max_bytes.saturating_add(1);
    let mut start = Vec::new();
    let mut rest_len = 0usize;
    let mut at = 0usize;
    CODE_POINTS.with_borrow_mut(|points| {
        let mut piece_text = String::new();
        while at < chars {
            let end = at.saturating_add(PIECE).min(chars);
            let (from, to) = (ffi::Py_ssize_t::try_from(at), ffi::Py_ssize_t::try_from(end));
            let (Ok(from), Ok(to)) = (from, to) else { return Err(PyErr::fetch(s.py())) };
            // SAFETY: a live `str`, the GIL held (the `Bound`), `from..to` within it.
            let piece = unsafe { ffi::PyUnicode_Substring(s.as_ptr(), from, to) };
            // SAFETY: a new reference or NULL (an exception set), owned from here.
            let piece = unsafe { Bound::from_owned_ptr_or_err(s.py(), piece) }?;
            let piece = piece.cast_into::<PyString>().map_err(PyErr::from)?;
            read_code_points(&piece, end - at, points)?;
            let taken = keep.saturating_sub(at).min(points.len());
            let (head, tail) = points.split_at(taken);
            if !head.is_empty() {
                if utf8_of(head, &mut piece_text) {
                    start.extend_from_slice(piece_text.as_bytes());
                } else {
                    start.extend_from_slice(&unpaired_utf8(head));
                }
            }
            for &c in tail {
                // A lone surrogate: the three bytes `unpaired_utf8` writes.
                rest_len = rest_len.saturating_add(char::from_u32(c).map_or(3, char::len_utf8));
            }
            at = end;
        }
        let utf8_len = start.len().saturating_add(rest_len);
        Ok(Transcoded::Start { start, utf8_len })
    })
}

thread_local! {
    /// The code points of the `str` being transcoded (kept: no allocation a
    /// reply; at most [`MAX_TRANSCODED`]).
    static CODE_POINTS: std::cell::RefCell<Vec<u32>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// `points` as UTF-8 in `out` (cleared first); `false` when one is not a
/// scalar value (a lone surrogate, written as U+FFFD).
fn utf8_of(points: &[u32], out: &mut String) -> bool {
    out.clear();
    let mut whole = true;
    let mut chunks = points.chunks_exact(16);
    for chunk in chunks.by_ref() {
        match ascii(chunk) {
            Some(bytes) => out.push_str(ascii_str(&bytes)),
            None => whole &= push_each(chunk, out),
        }
    }
    whole & push_each(chunks.remainder(), out)
}

/// Bytes known to be ASCII as a `str`.
fn ascii_str(bytes: &[u8; 16]) -> &str {
    debug_assert!(bytes.is_ascii());
    // SAFETY: `ascii` returns only bytes below 0x80, each a whole UTF-8 character.
    unsafe { std::str::from_utf8_unchecked(bytes) }
}

/// Sixteen code points as their bytes when all are ASCII. SSE2 (every
/// x86-64 has it): the compiler did not pack the plain loop, which then cost
/// more than CPython's own encoder.
#[cfg(target_arch = "x86_64")]
fn ascii(chunk: &[u32]) -> Option<[u8; 16]> {
    use std::arch::x86_64::{
        __m128i, _mm_and_si128, _mm_cmpeq_epi32, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_packs_epi32,
        _mm_packus_epi16, _mm_set1_epi32, _mm_setzero_si128, _mm_storeu_si128,
    };
    if chunk.len() != 16 {
        return None;
    }
    let at = chunk.as_ptr().cast::<__m128i>();
    // SAFETY: `chunk` is 16 u32s (checked above): four unaligned 16-byte
    // loads within it; SSE2 is part of x86-64, so the intrinsics exist.
    unsafe {
        let (a, b) = (_mm_loadu_si128(at), _mm_loadu_si128(at.add(1)));
        let (c, d) = (_mm_loadu_si128(at.add(2)), _mm_loadu_si128(at.add(3)));
        let high = _mm_and_si128(_mm_or_si128(_mm_or_si128(a, b), _mm_or_si128(c, d)), _mm_set1_epi32(!0x7f));
        if _mm_movemask_epi8(_mm_cmpeq_epi32(high, _mm_setzero_si128())) != 0xffff {
            return None;
        }
        // Each below 0x80: the saturating packs keep them as they are.
        let bytes = _mm_packus_epi16(_mm_packs_epi32(a, b), _mm_packs_epi32(c, d));
        let mut out = [0u8; 16];
        _mm_storeu_si128(out.as_mut_ptr().cast::<__m128i>(), bytes);
        Some(out)
    }
}

/// Sixteen code points as their bytes when all are ASCII.
#[cfg(not(target_arch = "x86_64"))]
fn ascii(chunk: &[u32]) -> Option<[u8; 16]> {
    let mut out = [0u8; 16];
    if chunk.len() != 16 {
        return None;
    }
    for (byte, &c) in out.iter_mut().zip(chunk) {
        *byte = u8::try_from(c).ok().filter(u8::is_ascii)?;
    }
    Some(out)
}

/// `points`' UTF-8 pushed to `out`, one code point at a time; `false` when
/// one is not a scalar value (written as U+FFFD).
fn push_each(points: &[u32], out: &mut String) -> bool {
    let mut whole = true;
    for &c in points {
        let c = char::from_u32(c).unwrap_or_else(|| {
            whole = false;
            char::REPLACEMENT_CHARACTER
        });
        out.push(c);
    }
    whole
}

/// Code points holding a lone surrogate as the bytes the check refuses
/// (`not_json` where the surrogate stands): [`vouch_bind::unpaired_utf8`],
/// what `str.encode("utf-8", "surrogatepass")` writes.
pub fn unpaired_utf8(points: &[u32]) -> Vec<u8> {
    vouch_bind::unpaired_utf8(points.iter().map(|&c| char::from_u32(c).ok_or(c)))
}
