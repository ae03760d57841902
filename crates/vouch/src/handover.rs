//! Handing a vouched value over: the JSON text vouch accepted, walked once
//! into the caller's own representation.
//!
//! Its deserializer is a serde deserializer over that text. A Rust type
//! deriving `Deserialize` is built straight from it (no [`Value`] in
//! between: [`Accepted::deserialize`], [`Contract::check_as`]); a binding
//! builds its own language's objects with a `DeserializeSeed` of its own,
//! so each binding writes constructors, not another reader (or gives its
//! constructors to [`Accepted::build`], a walk without serde's steps).
//!
//! Numbers are handed over as vouch read them when it checked them: an
//! integer as `u64`/`i64` where it fits, else as the double it is exactly
//! (vouch accepted no number a double does not hold faithfully); a decimal as
//! the correctly rounded double of its digits. Strings without escapes are
//! borrowed from the text.
//!
//! [`Value`]: serde_json::Value
//! [`Accepted::deserialize`]: crate::Accepted::deserialize
//! [`Accepted::build`]: crate::Accepted::build
//! [`Contract::check_as`]: crate::Contract::check_as

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeSeed, IntoDeserializer, Visitor};

use crate::read::parser::{self, Parser, Scalar};

/// Why a vouched value did not deserialize into the caller's type: the
/// type and the contract disagree (a contract that lets through what the
/// type cannot hold). Says where, as a JSON Pointer into the value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandOverError(Box<Placed>);

/// A hand-over error's content, boxed: every visitor call returns a
/// `Result` of it, and a pointer (not 64 bytes) is what each one moves.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Placed {
    message: String,
    /// Byte offset in the vouched text where the value that did not fit
    /// starts (`None` until the deserializer places it).
    offset: Option<usize>,
    /// JSON Pointer of that value, once placed.
    path: String,
}

impl HandOverError {
    /// What the type expected and what it found.
    #[must_use]
    pub fn message(&self) -> &str {
        &self.0.message
    }

    /// JSON Pointer of the value that did not fit (`""`: the root).
    #[must_use]
    pub fn path(&self) -> &str {
        &self.0.path
    }

    /// `what`, placed at `offset` in `text`.
    #[cold]
    pub(crate) fn at(what: &str, text: &str, offset: usize) -> Self {
        <Self as de::Error>::custom(what).placed(text, offset)
    }

    /// Place the error at `offset` of `text` (the innermost place wins).
    fn placed(mut self, text: &str, offset: usize) -> Self {
        if self.0.offset.is_none() {
            self.0.offset = Some(offset);
            self.0.path = pointer_at(text, offset);
        }
        self
    }
}

impl fmt::Display for HandOverError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.path.is_empty() {
            write!(f, "{}", self.0.message)
        } else {
            write!(f, "{} at {}", self.0.message, self.0.path)
        }
    }
}

impl std::error::Error for HandOverError {}

impl de::Error for HandOverError {
    #[cold]
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Self(Box::new(Placed { message: msg.to_string(), offset: None, path: String::new() }))
    }
}

/// A serde deserializer over JSON text vouch accepted (see the [module](self) docs).
///
/// The text is JSON vouch read and accepted; anything else (which no
/// accepted value gives) is an error, never a panic, and nesting past
/// `max_depth` is refused rather than recursed into.
pub(crate) struct Deserializer<'de> {
    pub(crate) text: &'de str,
    pub(crate) reader: Parser<'de>,
    /// Levels of nesting still allowed.
    depth_left: usize,
}

impl<'de> Deserializer<'de> {
    /// A deserializer over `json`, nesting at most `max_depth` levels.
    pub(crate) fn new(json: &'de str, max_depth: usize) -> Self {
        Self { text: json, reader: Parser::at(json, 0, parser::Integers::Document), depth_left: max_depth }
    }

    /// Deserialize one `T` from the whole text.
    pub(crate) fn whole<T: de::Deserialize<'de>>(self) -> Result<T, HandOverError> {
        self.whole_seed(std::marker::PhantomData)
    }

    /// Deserialize the whole text with `seed`.
    pub(crate) fn whole_seed<S: DeserializeSeed<'de>>(mut self, seed: S) -> Result<S::Value, HandOverError> {
        let value = seed.deserialize(&mut self)?;
        self.reader.skip_ws();
        if self.reader.peek().is_some() {
            return Err(self.fail("text after the value"));
        }
        Ok(value)
    }

    #[cold]
    fn fail(&self, what: &str) -> HandOverError {
        <HandOverError as de::Error>::custom(what).placed(self.text, self.reader.pos)
    }

    pub(crate) fn peek(&mut self) -> Option<u8> {
        self.reader.skip_ws();
        self.reader.peek()
    }

    /// Past `b` (white space before it skipped), or an error.
    pub(crate) fn eat(&mut self, b: u8, what: &str) -> Result<(), HandOverError> {
        if self.peek() == Some(b) {
            self.reader.pos += 1;
            Ok(())
        } else {
            Err(self.fail(what))
        }
    }

    fn scalar(&mut self) -> Result<Scalar<'de>, HandOverError> {
        self.reader.skip_ws();
        self.reader.scalar_ref().map_err(|e| self.fail(&e.detail))
    }

    /// A container whose opening byte is next: `f` reads its content, then
    /// `close` ends it; one level less, run on a stack that cannot overflow.
    /// An error inside is placed at the container when nothing nearer placed it.
    fn container<R>(
        &mut self,
        close: u8,
        f: impl FnOnce(&mut Self) -> Result<R, HandOverError>,
    ) -> Result<R, HandOverError> {
        let at = self.reader.pos;
        self.reader.pos += 1;
        let what = if close == b'}' { parser::IN_OBJECT } else { parser::IN_ARRAY };
        let out = self.nested(|d| {
            let value = f(d)?;
            d.eat(close, what)?;
            Ok(value)
        });
        out.map_err(|e| e.placed(self.text, at))
    }

    /// One level less, run on a stack that cannot overflow.
    pub(crate) fn nested<R>(
        &mut self,
        f: impl FnOnce(&mut Self) -> Result<R, HandOverError>,
    ) -> Result<R, HandOverError> {
        let Some(left) = self.depth_left.checked_sub(1) else {
            return Err(self.fail("nested deeper than the contract's max_depth"));
        };
        self.depth_left = left;
        // The stack is looked at every few levels: a look costs more than a
        // level, and the red zone `deeper` keeps holds many levels' frames.
        let out = if left % 8 == 0 { crate::deeper(|| f(self)) } else { f(self) };
        self.depth_left = left + 1;
        out
    }

    /// In a container, past the `,` before the next entry (none before the
    /// `first`, which it clears): whether there is one (false at `close`),
    /// or `None` where the grammar has neither.
    pub(crate) fn next_entry(&mut self, first: &mut bool, close: u8) -> Option<bool> {
        match self.peek() {
            Some(b) if b == close => return Some(false),
            Some(b',') if !*first => self.reader.pos += 1,
            _ if *first => {}
            _ => return None,
        }
        *first = false;
        Some(true)
    }

    fn visit_scalar<V: Visitor<'de>>(&mut self, visitor: V) -> Result<V::Value, HandOverError> {
        self.reader.skip_ws();
        let at = self.reader.pos;
        let rest = self.text.as_bytes().get(at..).unwrap_or_default();
        // The common scalars on their bytes (the text is JSON vouch read):
        // a string without escapes borrowed, a literal, a short integer.
        let out = match rest.first() {
            Some(b'"') => match self.reader.plain_string() {
                Some(s) => visitor.visit_borrowed_str(s),
                None => match self.reader.string_cow().map_err(|e| self.fail(&e.detail))? {
                    Cow::Borrowed(s) => visitor.visit_borrowed_str(s),
                    Cow::Owned(s) => visitor.visit_string(s),
                },
            },
            Some(b't') if rest.starts_with(b"true") => {
                self.reader.pos += 4;
                visitor.visit_bool(true)
            }
            Some(b'f') if rest.starts_with(b"false") => {
                self.reader.pos += 5;
                visitor.visit_bool(false)
            }
            Some(b'n') if rest.starts_with(b"null") => {
                self.reader.pos += 4;
                visitor.visit_unit()
            }
            Some(b'-' | b'0'..=b'9') => match short_integer(self.text.get(at..).unwrap_or_default()) {
                Some((n, len)) => {
                    self.reader.pos += len;
                    match u64::try_from(n) {
                        Ok(u) => visitor.visit_u64(u),
                        Err(_) => visitor.visit_i64(n),
                    }
                }
                None => match self.scalar()? {
                    Scalar::Number(n) => visit_number(visitor, &n),
                    _ => return Err(self.fail("expected a number")),
                },
            },
            _ => return Err(self.fail("expected a value")),
        };
        out.map_err(|e: HandOverError| e.placed(self.text, at))
    }
}

/// A number handed over as vouch read it: an integer as `u64` or `i64`, else
/// the double.
pub(crate) fn visit_number<'de, V: Visitor<'de>>(
    visitor: V,
    n: &serde_json::Number,
) -> Result<V::Value, HandOverError> {
    if let Some(u) = n.as_u64() {
        visitor.visit_u64(u)
    } else if let Some(i) = n.as_i64() {
        visitor.visit_i64(i)
    } else {
        visitor.visit_f64(n.as_f64().unwrap_or(f64::NAN))
    }
}

/// A unit variant named by a string, handed over (borrowed where it can be).
pub(crate) fn visit_enum_str<'de, V: Visitor<'de>>(visitor: V, s: Cow<'de, str>) -> Result<V::Value, HandOverError> {
    match s {
        Cow::Borrowed(s) => visitor.visit_enum(de::value::BorrowedStrDeserializer::new(s)),
        Cow::Owned(s) => visitor.visit_enum(s.into_deserializer()),
    }
}

/// An integer of at most 18 digits at the start of `text` (no fraction or
/// exponent after it), and its length: every reader holds it exactly, as
/// vouch read it (summed by the reader's own [`parser::small_integer`]).
/// Anything else is `None`, for the full number reader.
#[inline]
pub(crate) fn short_integer(text: &str) -> Option<(i64, usize)> {
    let bytes = text.as_bytes();
    let sign = usize::from(bytes.first() == Some(&b'-'));
    let digits = bytes.get(sign..)?.iter().take(19).take_while(|b| b.is_ascii_digit()).count();
    let len = sign + digits;
    if digits == 0 || digits > 18 || matches!(bytes.get(len), Some(b'.' | b'e' | b'E' | b'0'..=b'9')) {
        return None;
    }
    parser::small_integer(text.get(..len)?).map(|n| (n, len))
}

impl<'de> de::Deserializer<'de> for &mut Deserializer<'de> {
    type Error = HandOverError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, HandOverError> {
        match self.peek() {
            Some(b'{') => self.container(b'}', |d| visitor.visit_map(Entries { de: d, first: true, close: b'}' })),
            Some(b'[') => self.container(b']', |d| visitor.visit_seq(Entries { de: d, first: true, close: b']' })),
            _ => self.visit_scalar(visitor),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, HandOverError> {
        if self.peek() == Some(b'n') {
            self.scalar()?;
            visitor.visit_none()
        } else {
            visitor.visit_some(self)
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, HandOverError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, HandOverError> {
        let at = self.reader.pos;
        match self.peek() {
            // `{"Variant": content}`: the externally tagged form.
            Some(b'{') => self.container(b'}', |d| visitor.visit_enum(Variant { de: d })),
            Some(b'"') => {
                let s = match self.reader.plain_string() {
                    Some(s) => Cow::Borrowed(s),
                    None => self.reader.string_cow().map_err(|e| self.fail(&e.detail))?,
                };
                visit_enum_str(visitor, s).map_err(|e| e.placed(self.text, at))
            }
            _ => Err(self.fail("expected an enum: a string or an object of one member")),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, HandOverError> {
        self.skip()?;
        visitor.visit_unit()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple tuple_struct map struct identifier
    }
}

impl Deserializer<'_> {
    /// Step past one value without handing it over (members a type ignores).
    fn skip(&mut self) -> Result<(), HandOverError> {
        // Containers counted, not recursed into: a skipped value of any depth
        // costs no stack (its depth was bounded when vouch accepted it).
        let mut open = 0usize;
        loop {
            match self.peek() {
                Some(b'{' | b'[') => {
                    open += 1;
                    self.reader.pos += 1;
                    continue;
                }
                Some(b'}' | b']') if open > 0 => {
                    open -= 1;
                    self.reader.pos += 1;
                }
                Some(b',' | b':') if open > 0 => {
                    self.reader.pos += 1;
                    continue;
                }
                Some(b'"') => self.reader.skip_string().map_err(|e| self.fail(&e.detail))?,
                Some(_) => {
                    self.scalar()?;
                }
                None => return Err(self.fail("expected a value")),
            }
            if open == 0 {
                return Ok(());
            }
        }
    }
}

/// The members of an object or the items of an array, after the opening
/// byte, up to `close`.
struct Entries<'a, 'de> {
    de: &'a mut Deserializer<'de>,
    first: bool,
    close: u8,
}

impl Entries<'_, '_> {
    /// Past the `,` before the next entry (none before the first); false at `close`.
    fn next(&mut self) -> Result<bool, HandOverError> {
        self.de
            .next_entry(&mut self.first, self.close)
            .ok_or_else(|| self.de.fail(if self.close == b'}' { parser::IN_OBJECT } else { parser::IN_ARRAY }))
    }
}

impl<'de> de::MapAccess<'de> for Entries<'_, 'de> {
    type Error = HandOverError;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, HandOverError> {
        if !self.next()? {
            return Ok(None);
        }
        key_seed(self.de, seed).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, HandOverError> {
        seed.deserialize(&mut *self.de)
    }
}

impl<'de> de::SeqAccess<'de> for Entries<'_, 'de> {
    type Error = HandOverError;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, HandOverError> {
        if !self.next()? {
            return Ok(None);
        }
        seed.deserialize(&mut *self.de).map(Some)
    }
}

/// A member's key and the `:` after it.
fn key_seed<'de, K: DeserializeSeed<'de>>(de: &mut Deserializer<'de>, seed: K) -> Result<K::Value, HandOverError> {
    if de.peek() != Some(b'"') {
        return Err(de.fail(parser::KEY));
    }
    let key = seed.deserialize(Key { de: &mut *de })?;
    de.eat(b':', parser::COLON)?;
    Ok(key)
}

macro_rules! key_from_string {
    ($($method:ident => $visit:ident),* $(,)?) => {
        $(fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, HandOverError> {
            visitor.$visit(self.parsed()?)
        })*
    };
}

/// An object key: a string, handed over as a string whatever the seed asks
/// (a map keyed by numbers reads `"1"` as its key type does).
struct Key<'a, 'de> {
    de: &'a mut Deserializer<'de>,
}

impl<'de> de::Deserializer<'de> for Key<'_, 'de> {
    type Error = HandOverError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, HandOverError> {
        self.de.visit_scalar(visitor)
    }

    // A map keyed by numbers or booleans reads its key from the string (as
    // serde_json does): `{"1": …}` into a `BTreeMap<u32, _>`.
    key_from_string! {
        deserialize_i8 => visit_i8, deserialize_i16 => visit_i16, deserialize_i32 => visit_i32,
        deserialize_i64 => visit_i64, deserialize_i128 => visit_i128, deserialize_u8 => visit_u8,
        deserialize_u16 => visit_u16, deserialize_u32 => visit_u32, deserialize_u64 => visit_u64,
        deserialize_u128 => visit_u128, deserialize_bool => visit_bool
    }

    serde::forward_to_deserialize_any! {
        f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

impl Key<'_, '_> {
    /// The key's string, parsed as `T` (a key that does not parse: an error).
    fn parsed<T: std::str::FromStr>(self) -> Result<T, HandOverError> {
        let at = self.de.reader.pos;
        match self.de.scalar()? {
            Scalar::String(s) => s.parse().map_err(|_| {
                de::Error::custom(format!(
                    "the key {} is not a {}",
                    crate::problem::excerpt_text(&s),
                    std::any::type_name::<T>()
                ))
            }),
            _ => Err(de::Error::custom("expected a quoted key")),
        }
        .map_err(|e: HandOverError| e.placed(self.de.text, at))
    }
}

/// An externally tagged enum's `{"Variant": content}`, after its `{`.
struct Variant<'a, 'de> {
    de: &'a mut Deserializer<'de>,
}

impl<'de> de::EnumAccess<'de> for Variant<'_, 'de> {
    type Error = HandOverError;
    type Variant = Self;

    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, Self), HandOverError> {
        let variant = key_seed(self.de, seed)?;
        Ok((variant, self))
    }
}

impl<'de> de::VariantAccess<'de> for Variant<'_, 'de> {
    type Error = HandOverError;

    fn unit_variant(self) -> Result<(), HandOverError> {
        de::Deserialize::deserialize(&mut *self.de)
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, HandOverError> {
        seed.deserialize(&mut *self.de)
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value, HandOverError> {
        de::Deserializer::deserialize_any(&mut *self.de, visitor)
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, HandOverError> {
        de::Deserializer::deserialize_any(&mut *self.de, visitor)
    }
}

/// The JSON Pointer of the value that starts at `offset` in `text` (JSON
/// vouch accepted), found by walking the text up to it with an explicit
/// stack. Only ever run for an error.
#[cold]
fn pointer_at(text: &str, offset: usize) -> String {
    enum Open {
        Object(Option<String>),
        Array(usize),
    }
    let mut stack: Vec<Open> = Vec::new();
    let mut reader = Parser::at(text, 0, parser::Integers::Document);
    loop {
        reader.skip_ws();
        if reader.pos >= offset {
            break;
        }
        match reader.peek() {
            Some(b'{') => {
                stack.push(Open::Object(None));
                reader.pos += 1;
            }
            Some(b'[') => {
                stack.push(Open::Array(0));
                reader.pos += 1;
            }
            Some(b'}' | b']') => {
                stack.pop();
                reader.pos += 1;
            }
            Some(b',') => {
                if let Some(Open::Array(i)) = stack.last_mut() {
                    *i += 1;
                }
                reader.pos += 1;
            }
            Some(b':') => reader.pos += 1,
            Some(b'"') => {
                let Ok(s) = reader.string_cow() else { break };
                // A key: the string an object waits for before its ':'.
                reader.skip_ws();
                if reader.peek() == Some(b':') {
                    if let Some(Open::Object(key)) = stack.last_mut() {
                        *key = Some(s.into_owned());
                    }
                }
            }
            Some(_) => {
                if reader.scalar_ref().is_err() {
                    break;
                }
            }
            None => break,
        }
    }
    let mut path = String::new();
    for open in &stack {
        match open {
            Open::Object(Some(key)) => path = crate::pointer::join(&path, key),
            Open::Object(None) => {}
            Open::Array(i) => path = crate::pointer::join(&path, &i.to_string()),
        }
    }
    path
}
