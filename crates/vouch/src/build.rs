//! A vouched value walked once into a caller's own constructors ([`Build`]):
//! what the Python and Node bindings build their objects with.
//!
//! The walk reads the vouched text directly, with the reader that checked
//! it, and calls the constructors in order; containers are kept on an
//! explicit stack (no recursion), and every number is read as the check read
//! it. A serde visitor would do the same in more steps: each value a visitor
//! call, each member a `MapAccess` call, each level a closure, which cost a
//! short reply's walk about as much again as its constructors.

use std::fmt;

use serde_json::Value;

use crate::handover::{short_integer, HandOverError};
use crate::read::parser::{self, Parser, Scalar};

/// A caller's constructors for its language's values.
///
/// Numbers come as vouch read them when it checked them: an integer as
/// `i64`/`u64` where it fits, else as the double that holds it exactly; a
/// decimal as the correctly rounded double of its digits.
pub trait Build {
    /// One value of the caller's language.
    type Value;
    /// A list being filled.
    type List;
    /// A map (object) being filled.
    type Map;
    /// Why a constructor failed (the walk stops and reports it).
    type Error: fmt::Display;

    /// JSON `null`.
    ///
    /// # Errors
    /// The constructor's own.
    fn null(&mut self) -> Result<Self::Value, Self::Error>;
    /// `true` or `false`.
    ///
    /// # Errors
    /// The constructor's own.
    fn bool(&mut self, v: bool) -> Result<Self::Value, Self::Error>;
    /// A negative integer that fits `i64`.
    ///
    /// # Errors
    /// The constructor's own.
    fn i64(&mut self, v: i64) -> Result<Self::Value, Self::Error>;
    /// A non-negative integer that fits `u64`.
    ///
    /// # Errors
    /// The constructor's own.
    fn u64(&mut self, v: u64) -> Result<Self::Value, Self::Error>;
    /// Any other number.
    ///
    /// # Errors
    /// The constructor's own.
    fn f64(&mut self, v: f64) -> Result<Self::Value, Self::Error>;
    /// A string value.
    ///
    /// # Errors
    /// The constructor's own.
    fn str(&mut self, v: &str) -> Result<Self::Value, Self::Error>;
    /// An object's key (by default a string; a binding may intern it, keys repeat).
    ///
    /// # Errors
    /// The constructor's own.
    fn key(&mut self, k: &str) -> Result<Self::Value, Self::Error> {
        self.str(k)
    }
    /// A list begins (`len`: its length when known).
    ///
    /// # Errors
    /// The constructor's own.
    fn list(&mut self, len: Option<usize>) -> Result<Self::List, Self::Error>;
    /// The next item of `list`.
    ///
    /// # Errors
    /// The constructor's own.
    fn push(&mut self, list: &mut Self::List, item: Self::Value) -> Result<(), Self::Error>;
    /// `list` is complete.
    ///
    /// # Errors
    /// The constructor's own.
    fn end_list(&mut self, list: Self::List) -> Result<Self::Value, Self::Error>;
    /// An object begins.
    ///
    /// # Errors
    /// The constructor's own.
    fn map(&mut self, len: Option<usize>) -> Result<Self::Map, Self::Error>;
    /// The next member of `map`, in the reply's order (keys are unique: vouch
    /// refuses duplicate keys).
    ///
    /// # Errors
    /// The constructor's own.
    fn insert(&mut self, map: &mut Self::Map, key: Self::Value, value: Self::Value) -> Result<(), Self::Error>;
    /// `map` is complete.
    ///
    /// # Errors
    /// The constructor's own.
    fn end_map(&mut self, map: Self::Map) -> Result<Self::Value, Self::Error>;
}

/// An open container of the text walk, with where it starts (a
/// constructor's error about it is placed there).
enum Open<B: Build> {
    List {
        list: B::List,
        at: usize,
    },
    /// An object and the key of the member being read.
    Map {
        map: B::Map,
        key: Option<B::Value>,
        at: usize,
    },
}

/// Walk `json` (JSON vouch accepted, nesting at most `max_depth` levels)
/// into `b`'s objects. Anything that is not such JSON is an error, never a
/// panic; a constructor's error is placed at the value it was building.
pub(crate) fn text<B: Build>(json: &str, max_depth: usize, b: &mut B) -> Result<B::Value, HandOverError> {
    let mut r = Parser::at(json, 0, parser::Integers::Document);
    let fail = |what: &str, at: usize| HandOverError::at(what, json, at);
    let made = |e: B::Error, at: usize| HandOverError::at(&e.to_string(), json, at);
    let mut stack: Vec<Open<B>> = Vec::new();
    'value: loop {
        r.skip_ws();
        let at = r.pos;
        let mut value = match r.peek() {
            Some(open @ (b'{' | b'[')) => {
                if stack.len() >= max_depth {
                    return Err(fail("nested deeper than the contract's max_depth", at));
                }
                r.pos += 1;
                r.skip_ws();
                if open == b'[' {
                    let list = b.list(None).map_err(|e| made(e, at))?;
                    if r.peek() != Some(b']') {
                        stack.push(Open::List { list, at });
                        continue 'value;
                    }
                    r.pos += 1;
                    b.end_list(list).map_err(|e| made(e, at))?
                } else {
                    let map = b.map(None).map_err(|e| made(e, at))?;
                    if r.peek() != Some(b'}') {
                        let key = member_key(&mut r, b, json)?;
                        stack.push(Open::Map { map, key: Some(key), at });
                        continue 'value;
                    }
                    r.pos += 1;
                    b.end_map(map).map_err(|e| made(e, at))?
                }
            }
            _ => scalar(&mut r, b, json, false)?,
        };
        // The value is whole: it goes into its container, and each
        // container that closes after it into its own.
        loop {
            let Some(open) = stack.last_mut() else {
                r.skip_ws();
                if r.peek().is_some() {
                    return Err(fail("text after the value", r.pos));
                }
                return Ok(value);
            };
            r.skip_ws();
            let next = r.peek();
            match open {
                Open::List { list, at } => {
                    let at = *at;
                    b.push(list, value).map_err(|e| made(e, at))?;
                    match next {
                        Some(b',') => {
                            r.pos += 1;
                            continue 'value;
                        }
                        Some(b']') => r.pos += 1,
                        _ => return Err(fail(parser::IN_ARRAY, r.pos)),
                    }
                }
                Open::Map { map, key, at } => {
                    let at = *at;
                    let Some(k) = key.take() else { return Err(fail(parser::IN_OBJECT, r.pos)) };
                    b.insert(map, k, value).map_err(|e| made(e, at))?;
                    match next {
                        Some(b',') => {
                            r.pos += 1;
                            *key = Some(member_key(&mut r, b, json)?);
                            continue 'value;
                        }
                        Some(b'}') => r.pos += 1,
                        _ => return Err(fail(parser::IN_OBJECT, r.pos)),
                    }
                }
            }
            value = match stack.pop() {
                Some(Open::List { list, at }) => b.end_list(list).map_err(|e| made(e, at))?,
                Some(Open::Map { map, at, .. }) => b.end_map(map).map_err(|e| made(e, at))?,
                None => return Err(fail("a container closed twice", r.pos)),
            };
        }
    }
}

/// A member's key and the `:` after it (white space before either skipped).
fn member_key<B: Build>(r: &mut Parser<'_>, b: &mut B, json: &str) -> Result<B::Value, HandOverError> {
    r.skip_ws();
    if r.peek() != Some(b'"') {
        return Err(HandOverError::at(parser::IN_OBJECT, json, r.pos));
    }
    let key = scalar(r, b, json, true)?;
    r.skip_ws();
    if r.peek() != Some(b':') {
        return Err(HandOverError::at(parser::IN_OBJECT, json, r.pos));
    }
    r.pos += 1;
    Ok(key)
}

/// The scalar at the reader (a key with [`Build::key`]), read as the
/// hand-over's deserializer reads it: a string without escapes borrowed, a
/// short integer on its bytes, any other number as vouch's reader reads it.
fn scalar<B: Build>(r: &mut Parser<'_>, b: &mut B, json: &str, is_key: bool) -> Result<B::Value, HandOverError> {
    let at = r.pos;
    let made = |e: B::Error| HandOverError::at(&e.to_string(), json, at);
    let rest = json.as_bytes().get(at..).unwrap_or_default();
    let out = match rest.first() {
        Some(b'"') => {
            let owned;
            let s = match r.plain_string() {
                Some(s) => s,
                None => {
                    owned = r.string_cow().map_err(|e| HandOverError::at(&e.detail, json, at))?;
                    &*owned
                }
            };
            if is_key {
                b.key(s)
            } else {
                b.str(s)
            }
        }
        _ if is_key => return Err(HandOverError::at(parser::IN_OBJECT, json, at)),
        Some(b't') if rest.starts_with(b"true") => {
            r.pos += 4;
            b.bool(true)
        }
        Some(b'f') if rest.starts_with(b"false") => {
            r.pos += 5;
            b.bool(false)
        }
        Some(b'n') if rest.starts_with(b"null") => {
            r.pos += 4;
            b.null()
        }
        Some(b'-' | b'0'..=b'9') => match short_integer(json.get(at..).unwrap_or_default()) {
            Some((n, len)) => {
                r.pos += len;
                match u64::try_from(n) {
                    Ok(u) => b.u64(u),
                    Err(_) => b.i64(n),
                }
            }
            None => match r.scalar_ref().map_err(|e| HandOverError::at(&e.detail, json, at))? {
                Scalar::Number(n) => number(b, &n),
                _ => return Err(HandOverError::at("expected a number", json, at)),
            },
        },
        _ => return Err(HandOverError::at("expected a value", json, at)),
    };
    out.map_err(made)
}

/// A number as the hand-over gives it: `u64`, else `i64`, else the double.
pub(crate) fn number<B: Build>(b: &mut B, n: &serde_json::Number) -> Result<B::Value, B::Error> {
    if let Some(u) = n.as_u64() {
        b.u64(u)
    } else if let Some(i) = n.as_i64() {
        b.i64(i)
    } else {
        b.f64(n.as_f64().unwrap_or(f64::NAN))
    }
}

/// An open container of the tree walk.
enum OpenValue<'v, B: Build> {
    List(std::slice::Iter<'v, Value>, B::List),
    Map(serde_json::map::Iter<'v>, B::Map, Option<B::Value>),
}

/// Walk a value vouch built (repaired, unwrapped, filled) into `b`'s
/// objects, on an explicit stack.
pub(crate) fn tree<B: Build>(root: &Value, b: &mut B) -> Result<B::Value, HandOverError> {
    let made = |e: B::Error| <HandOverError as serde::de::Error>::custom(e);
    let mut stack: Vec<OpenValue<'_, B>> = Vec::new();
    let mut next = Some(root);
    loop {
        let mut value = match next.take() {
            Some(Value::Array(items)) => {
                stack.push(OpenValue::List(items.iter(), b.list(Some(items.len())).map_err(made)?));
                None
            }
            Some(Value::Object(members)) => {
                stack.push(OpenValue::Map(members.iter(), b.map(Some(members.len())).map_err(made)?, None));
                None
            }
            Some(Value::Null) => Some(b.null().map_err(made)?),
            Some(Value::Bool(v)) => Some(b.bool(*v).map_err(made)?),
            Some(Value::Number(n)) => Some(number(b, n).map_err(made)?),
            Some(Value::String(s)) => Some(b.str(s).map_err(made)?),
            None => None,
        };
        // Put the value made into its container, then find the next one to
        // make; a container with none left is made whole and put in turn.
        loop {
            match stack.last_mut() {
                None => return value.ok_or_else(made_empty),
                Some(OpenValue::List(items, list)) => {
                    if let Some(v) = value.take() {
                        b.push(list, v).map_err(made)?;
                    }
                    if let Some(item) = items.next() {
                        next = Some(item);
                        break;
                    }
                }
                Some(OpenValue::Map(members, map, key)) => {
                    if let (Some(k), Some(v)) = (key.take(), value.take()) {
                        b.insert(map, k, v).map_err(made)?;
                    }
                    if let Some((k, item)) = members.next() {
                        *key = Some(b.key(k).map_err(made)?);
                        next = Some(item);
                        break;
                    }
                }
            }
            value = Some(match stack.pop() {
                Some(OpenValue::List(_, list)) => b.end_list(list).map_err(made)?,
                Some(OpenValue::Map(_, map, _)) => b.end_map(map).map_err(made)?,
                None => return Err(made_empty()),
            });
        }
    }
}

#[cold]
fn made_empty() -> HandOverError {
    <HandOverError as serde::de::Error>::custom("no value was made")
}
