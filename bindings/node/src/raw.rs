//! The two hot calls, `checkText` and `checkBytes`, written against
//! Node-API directly. napi-rs wraps each function it generates in a borrow
//! scope (an `Arc<Mutex<…>>` allocated, thread-local stacks pushed and
//! popped, a deferred guard, a barrier) and reads a string in two calls into
//! a `Vec` of its own: on the bench corpus that came to about a quarter of a
//! `checkText` call (1.85 → 1.43 µs a reply, measured side by side). Here a
//! string is read with one call into a buffer kept per thread (`append_utf16`), a Buffer in
//! place, and the answer is `check`'s: `0`, `1`, or the verdict's line.
//! `checkMany`'s copy of its replies (`copy_replies`) reads its strings the
//! same way, into one buffer for the batch.
//!
//! The two calls' TypeScript declarations are `ts/index.ts`'s `HotCalls` (napi-rs
//! declares only what it generates).
#![allow(unsafe_code)]

use std::cell::RefCell;
use std::ffi::{c_char, CStr};
use std::ptr;

use napi::sys;

use crate::{
    check_raw, check_utf16, check_utf16_start, read_bytes, registered, uncut, with_text, Answered, Copied, Owned,
    PASSED_AS_SENT, REFUSED_UNREPORTED,
};

thread_local! {
    /// A string's UTF-16 units as read out of V8 by `checkText`.
    static UNITS: RefCell<Vec<u16>> = const { RefCell::new(Vec::new()) };
}

/// Why a call failed: thrown as a `TypeError`.
type Failed = &'static CStr;

fn ok(status: sys::napi_status, failed: Failed) -> Result<(), Failed> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(failed)
    }
}

const NOT_A_REPLY: Failed = c"vouch: a reply is a string or a Buffer";
const NO_CONTRACT: Failed = c"vouch: no live contract with this id on this thread";

/// The call's arguments: the contract's id and the reply.
///
/// # Safety
/// `env` and `info` are the ones Node-API passed the callback.
unsafe fn arguments(env: sys::napi_env, info: sys::napi_callback_info) -> Result<(u32, sys::napi_value), Failed> {
    let mut argc = 2usize;
    let mut argv = [ptr::null_mut(); 2];
    // SAFETY: argv has room for argc values; the rest may be null.
    let status =
        unsafe { sys::napi_get_cb_info(env, info, &mut argc, argv.as_mut_ptr(), ptr::null_mut(), ptr::null_mut()) };
    ok(status, c"vouch: cannot read the arguments")?;
    let [contract, reply] = argv;
    let mut id = 0u32;
    // SAFETY: a value Node-API handed over (undefined where not passed).
    ok(unsafe { sys::napi_get_value_uint32(env, contract, &mut id) }, c"vouch: the contract id is not a number")?;
    Ok((id, reply))
}

/// `check`'s answer as a JavaScript value.
///
/// # Safety
/// `env` is the callback's.
unsafe fn answer(env: sys::napi_env, answered: Answered) -> Result<sys::napi_value, Failed> {
    let mut out = ptr::null_mut();
    let made = c"vouch: cannot make the answer";
    let status = match answered {
        // SAFETY (each): `out` is written by the call; a line is read for its length only.
        Answered::PassedAsSent => unsafe { sys::napi_create_uint32(env, PASSED_AS_SENT, &mut out) },
        Answered::RefusedUnreported => unsafe { sys::napi_create_uint32(env, REFUSED_UNREPORTED, &mut out) },
        Answered::Line(line) => {
            let len = isize::try_from(line.len()).map_err(|_| made)?;
            let text = line.as_ptr().cast::<c_char>();
            if line.is_ascii() {
                // ASCII (most lines): copied, not decoded.
                unsafe { sys::napi_create_string_latin1(env, text, len, &mut out) }
            } else {
                unsafe { sys::napi_create_string_utf8(env, text, len, &mut out) }
            }
        }
    };
    ok(status, made)?;
    Ok(out)
}

/// Room kept free at a buffer's end: a string that fits is read in one call.
const ROOM: usize = 16 * 1024;

/// What [`append_utf16`] read of a value.
pub(crate) enum Units {
    /// Not a string.
    NotText,
    /// The whole string's units, where they stand in the buffer.
    Whole(std::ops::Range<usize>),
    /// A string of more units than the contract's `max_bytes` (so more
    /// UTF-8 bytes too): only its first `max_bytes + 2` units, and the
    /// length of its whole UTF-8 (V8 counts it without a copy). The check
    /// reads no further than the limit, so that is all it needs
    /// (`check_utf16_start`); a reply of any length costs a copy of at most
    /// the limit.
    Start { units: std::ops::Range<usize>, utf8_len: usize },
}

/// Appends a string's UTF-16 units to `units`, in its spare capacity (one
/// call where `ROOM` units are free; a string that may not all have fit is
/// read again, whole, or only its start when it is over `max_bytes`), and
/// says where they stand.
///
/// # Safety
/// `env` is the calling callback's, `value` a value it was given.
unsafe fn append_utf16(
    env: sys::napi_env,
    value: sys::napi_value,
    units: &mut Vec<u16>,
    max_bytes: usize,
) -> Result<Units, Failed> {
    let start = units.len();
    units.reserve(ROOM);
    let mut copied = 0usize;
    let room = units.capacity() - start;
    // SAFETY: V8 writes at most `room` units (the last a NUL) into the
    // spare capacity, which is that long.
    let status =
        unsafe { sys::napi_get_value_string_utf16(env, value, units.as_mut_ptr().add(start), room, &mut copied) };
    if status == sys::Status::napi_string_expected {
        return Ok(Units::NotText);
    }
    ok(status, NOT_A_REPLY)?;
    let mut over = None;
    if copied + 1 >= room {
        let mut whole = 0usize;
        // SAFETY: a null buffer asks for the length alone.
        ok(unsafe { sys::napi_get_value_string_utf16(env, value, ptr::null_mut(), 0, &mut whole) }, NOT_A_REPLY)?;
        // Each unit is at least a byte of UTF-8: past `max_bytes + 1` units
        // (a pair cut at the end of the start still leaves more than the
        // limit before it), the reply is over the limit whatever it holds.
        let keep = if whole > max_bytes.saturating_add(1) {
            let mut utf8_len = 0usize;
            // SAFETY: a null buffer asks for the UTF-8 length alone.
            let status = unsafe { sys::napi_get_value_string_utf8(env, value, ptr::null_mut(), 0, &mut utf8_len) };
            ok(status, NOT_A_REPLY)?;
            over = Some(utf8_len);
            max_bytes.saturating_add(2)
        } else {
            whole
        };
        units.reserve(keep + 1);
        let room = (keep + 1).min(units.capacity() - start);
        // SAFETY: as above: `room` units fit in the spare capacity, the
        // last for the NUL; V8 copies the string's first `room - 1` units.
        let status =
            unsafe { sys::napi_get_value_string_utf16(env, value, units.as_mut_ptr().add(start), room, &mut copied) };
        ok(status, NOT_A_REPLY)?;
    }
    // SAFETY: V8 wrote `copied` units from `start`, within the capacity.
    unsafe { units.set_len(start + copied) };
    let read = start..start + copied;
    Ok(match over {
        Some(utf8_len) => Units::Start { units: read, utf8_len },
        None => Units::Whole(read),
    })
}

/// A Buffer's bytes, in place.
///
/// # Safety
/// `env` is the calling callback's, `value` a value it was given; the bytes
/// are read before any JavaScript runs again.
unsafe fn buffer_bytes<'a>(env: sys::napi_env, value: sys::napi_value) -> Result<&'a [u8], Failed> {
    let mut data = ptr::null_mut();
    let mut len = 0usize;
    // SAFETY: fails unless `value` is a Buffer; then `data` holds `len` bytes.
    ok(unsafe { sys::napi_get_buffer_info(env, value, &mut data, &mut len) }, NOT_A_REPLY)?;
    if len == 0 || data.is_null() {
        return Ok(&[]);
    }
    // SAFETY: the Buffer's own bytes, alive and unchanged until JavaScript runs.
    Ok(unsafe { std::slice::from_raw_parts(data.cast::<u8>(), len) })
}

/// `checkText(contract, text)`: check one reply given as a string.
///
/// # Safety
/// `env` and `info` are the ones Node-API passed the callback.
unsafe fn check_text(env: sys::napi_env, info: sys::napi_callback_info) -> Result<sys::napi_value, Failed> {
    // SAFETY: the callback's own.
    let (id, reply) = unsafe { arguments(env, info)? };
    // One look in the registry: the string is read and checked inside it
    // (reading it runs no JavaScript, so the registry is not entered again).
    let answered = registered(id, |c| {
        UNITS.with(|cell| -> Result<Answered, Failed> {
            // Only ever borrowed here, around a pure check: were it taken, a buffer of its own.
            let mut own = Vec::new();
            let mut kept = cell.try_borrow_mut();
            let units = match kept.as_deref_mut() {
                Ok(units) => units,
                Err(_) => &mut own,
            };
            units.clear();
            // SAFETY: the callback's env and its argument.
            let answered = match unsafe { append_utf16(env, reply, units, c.limits().max_bytes)? } {
                Units::NotText => return Err(NOT_A_REPLY),
                Units::Whole(read) => check_utf16(c, units.get(read).ok_or(NOT_A_REPLY)?, vouch::Refusals::Unreported),
                Units::Start { units: read, utf8_len } => {
                    check_utf16_start(c, units.get(read).ok_or(NOT_A_REPLY)?, utf8_len)
                }
            };
            // A long reply's room is not kept for the thread's life.
            units.shrink_to(2 * ROOM);
            Ok(answered)
        })
    })
    .map_err(|_| NO_CONTRACT)??;
    // SAFETY: the callback's env.
    unsafe { answer(env, answered) }
}

/// `checkBytes(contract, raw)`: check one reply given as a Buffer, read in place.
///
/// # Safety
/// `env` and `info` are the ones Node-API passed the callback.
unsafe fn check_bytes(env: sys::napi_env, info: sys::napi_callback_info) -> Result<sys::napi_value, Failed> {
    // SAFETY: the callback's own.
    let (id, reply) = unsafe { arguments(env, info)? };
    // SAFETY: the callback's env and its argument; no JavaScript runs during the check.
    let raw = unsafe { buffer_bytes(env, reply)? };
    let answered = registered(id, |c| check_raw(c, raw, vouch::Refusals::Unreported)).map_err(|_| NO_CONTRACT)?;
    // SAFETY: the callback's env.
    unsafe { answer(env, answered) }
}

/// A reply (or a piece of one) as the check reads it.
pub(crate) enum Held<'a> {
    /// All of it, as UTF-8 (a string's, made in a kept buffer) or as bytes
    /// (a Buffer's, in place).
    Whole(&'a [u8]),
    /// The UTF-8 of a string's first units, more than the contract's
    /// `max_bytes` worth, and the length of its whole UTF-8: the rest is
    /// never copied (`vouch_bind::check_past_limit`).
    Start(&'a [u8], usize),
}

/// `f` on one reply, a string or a Buffer, read as `checkText` and
/// `checkBytes` read it: a string over `max_bytes` only as far as the check
/// reads. For the calls that hold a reply past the hot path (a verdict's
/// re-ask, a stream's piece, a round's reply).
///
/// # Safety
/// `env` is the calling callback's, `value` a value it was given.
pub(crate) unsafe fn with_reply<R>(
    env: sys::napi_env,
    value: sys::napi_value,
    max_bytes: usize,
    mut f: impl FnMut(Held<'_>) -> R,
) -> Result<R, Failed> {
    let mut units = Vec::new();
    // SAFETY: the callback's env and its argument.
    Ok(match unsafe { append_utf16(env, value, &mut units, max_bytes)? } {
        Units::Whole(read) => with_text(units.get(read).ok_or(NOT_A_REPLY)?, |text| f(Held::Whole(read_bytes(text)))),
        Units::Start { units: read, utf8_len } => {
            with_text(uncut(units.get(read).ok_or(NOT_A_REPLY)?), |start| f(Held::Start(read_bytes(start), utf8_len)))
        }
        // SAFETY: as above; read before any JavaScript runs.
        Units::NotText => f(Held::Whole(unsafe { buffer_bytes(env, value)? })),
    })
}

/// `checkMany`'s replies copied off the JavaScript heap: each string's
/// UTF-16 units into one buffer for the batch (`append_utf16`: no
/// allocation per reply), each Buffer's bytes.
///
/// # Safety
/// `env` is the calling callback's, `array` an array value of `len` elements.
pub(crate) unsafe fn copy_replies(
    env: sys::napi_env,
    array: sys::napi_value,
    len: u32,
    max_bytes: usize,
) -> Result<Copied, Failed> {
    let mut units: Vec<u16> = Vec::new();
    // Room for a chunk's replies (`checkMany` sends 256 at a time); an array
    // claiming more (a sparse one's length is anything) grows only as it is read.
    let mut replies = Vec::with_capacity((len as usize).min(4096));
    for i in 0..len {
        let mut reply = ptr::null_mut();
        // SAFETY: an element of the array (undefined past its end).
        ok(unsafe { sys::napi_get_element(env, array, i, &mut reply) }, c"vouch: cannot read the replies")?;
        // SAFETY: the callback's env and a value it read.
        match unsafe { append_utf16(env, reply, &mut units, max_bytes)? } {
            Units::Whole(read) => replies.push(Owned::Text(read)),
            Units::Start { units: read, utf8_len } => replies.push(Owned::TextStart(read, utf8_len)),
            // Not a string: a Buffer's bytes, copied (the caller may reuse it).
            // SAFETY: as above; copied before any JavaScript runs.
            Units::NotText => replies.push(Owned::Bytes(unsafe { buffer_bytes(env, reply)? }.to_vec())),
        }
    }
    Ok(Copied { units, replies })
}

/// A callback's result, or its failure thrown (a panic included: none may
/// unwind into Node).
///
/// # Safety
/// `env` is the callback's.
unsafe fn settle(env: sys::napi_env, done: std::thread::Result<Result<sys::napi_value, Failed>>) -> sys::napi_value {
    let failed = match done {
        Ok(Ok(value)) => return value,
        Ok(Err(failed)) => failed,
        Err(_) => c"vouch: internal error",
    };
    // SAFETY: a NUL-terminated message; no code.
    unsafe { sys::napi_throw_type_error(env, ptr::null(), failed.as_ptr()) };
    ptr::null_mut()
}

unsafe extern "C" fn check_text_callback(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    // SAFETY: Node-API's own env and info.
    let done = std::panic::catch_unwind(|| unsafe { check_text(env, info) });
    unsafe { settle(env, done) }
}

unsafe extern "C" fn check_bytes_callback(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    // SAFETY: Node-API's own env and info.
    let done = std::panic::catch_unwind(|| unsafe { check_bytes(env, info) });
    unsafe { settle(env, done) }
}

/// Adds `checkText` and `checkBytes` to the module's exports.
///
/// # Safety
/// `env` and `exports` are the module initializer's.
pub(crate) unsafe fn export(env: sys::napi_env, exports: sys::napi_value) -> Result<(), Failed> {
    let calls: [(&CStr, sys::napi_callback); 2] =
        [(c"checkText", Some(check_text_callback)), (c"checkBytes", Some(check_bytes_callback))];
    for (name, callback) in calls {
        let mut function = ptr::null_mut();
        // SAFETY: a NUL-terminated name (length -1: up to the NUL), no data.
        let status =
            unsafe { sys::napi_create_function(env, name.as_ptr(), -1, callback, ptr::null_mut(), &mut function) };
        ok(status, c"vouch: cannot export the hot calls")?;
        // SAFETY: the exports object and a function just made.
        let status = unsafe { sys::napi_set_named_property(env, exports, name.as_ptr(), function) };
        ok(status, c"vouch: cannot export the hot calls")?;
    }
    Ok(())
}
