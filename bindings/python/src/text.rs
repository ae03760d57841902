//! A Python `str`'s UTF-8, read in place.
//!
//! The wheel is abi3 for CPython 3.9 on, and 3.9's limited API has no way
//! to read a `str`'s UTF-8 without copying it into a new `bytes` object
//! (what `PyBackedStr` does there): one allocation and one copy per reply,
//! made while holding the GIL, which `check_many`'s other threads wait for.
//! `PyUnicode_AsUTF8AndSize` (stable ABI since 3.10) hands back the UTF-8
//! the `str` keeps itself: an ASCII `str` *is* its UTF-8, and any other is
//! encoded once and cached in the object. This is the module's one use of
//! `unsafe`, kept to the call and to reading the buffer it returns.
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
