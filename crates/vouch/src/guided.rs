//! The guided hand-over: a reply checked and deserialized into the caller's
//! type in one walk ([`Contract::check_as`](crate::Contract::check_as)'s fast
//! path).
//!
//! The hand-over's deserializer reads the text while the compiled contract
//! guides it: at each value the node it stands for is known, and the value
//! is checked there by the same tests the single pass makes (a declared
//! member looked up and counted, a repeat refused, `required` counted when
//! the object closes, a scalar decided by its node's own keywords or by
//! the evaluator). It takes only what it can decide outright: any doubt —
//! a key the node does not declare, a container its node reads whole, a
//! failure, an integer that reads differently as a double, a type that
//! does not fit — is an error, and the caller checks the reply the usual
//! way (the single pass, then the hand-over), which gives the verdict. So
//! the guided walk can only ever give what the usual way gives: a reply it
//! takes is one the single pass accepts as sent, and its value is the one
//! the hand-over reads from it (`tests/one_walk.rs` and `tests/handover.rs`
//! hold the two to that, with `check` as the oracle).
//!
//! Contracts with repairs, findings or unwrapping are never guided (a
//! repair or a finding needs the whole verdict).

use std::borrow::Cow;

use serde::de::{self, DeserializeSeed, Visitor};

use crate::build::Build;
use crate::check::{is_valid, is_valid_here, is_valid_string_here};
use crate::handover::{visit_enum_str, visit_number, Deserializer, HandOverError};
use crate::node::{Node, NodeId};
use crate::read::parser::{self, Scalar as Parsed, SAFE_INTEGER};
use crate::single_pass::{exact_double, same_bytes, Plan, Read, Scalar};

/// What guides the walk: the contract's nodes and their single-pass plans.
#[derive(Clone, Copy)]
pub(crate) struct Guide<'c> {
    pub nodes: &'c [Node],
    pub plans: &'c [Plan],
    /// Integers beyond ±(2^53−1) are refused or not (the contract's reading):
    /// such an integer is left to the usual way.
    pub wide_integers: bool,
}

/// Why the guided walk gave up: never shown (the usual way decides).
#[cold]
fn doubt() -> HandOverError {
    <HandOverError as de::Error>::custom("left to the usual check")
}

impl<'c> Guide<'c> {
    /// `seed`'s value from the whole of `json` (white space around it
    /// allowed), nesting at most `max_depth` levels, guided from node `root`;
    /// `None` when the walk gave up anywhere.
    pub(crate) fn deserialize_seed<'de, S: DeserializeSeed<'de>>(
        self,
        json: &'de str,
        root: NodeId,
        max_depth: usize,
        seed: S,
    ) -> Option<S::Value> {
        let mut de = Deserializer::new(json, max_depth);
        let value = seed.deserialize(Guided { de: &mut de, guide: self, id: root }).ok()?;
        de.reader.skip_ws();
        de.reader.peek().is_none().then_some(value)
    }

    /// The node a value at `id` is checked by (a bare `$ref` followed), and its plan.
    fn resolve(self, mut id: NodeId) -> Result<(NodeId, &'c Node, &'c Plan), HandOverError> {
        for _ in 0..=self.nodes.len() {
            let (Some(node), Some(plan)) = (self.nodes.get(id), self.plans.get(id)) else { break };
            match plan.read {
                Read::Alias(target) => id = target,
                _ if node.policy.is_some() => break,
                _ => return Ok((id, node, plan)),
            }
        }
        Err(doubt())
    }

    /// Whether the scalar read at node `id` (plan `plan`) is valid there as
    /// the single pass decides it.
    fn holds(self, id: NodeId, plan: &Plan, scalar: &Parsed<'_>) -> bool {
        if let (false, Parsed::Number(n)) = (self.wide_integers, scalar) {
            // Read here as a document is read (exactly); a reply's reading may refuse it.
            let safe = |v: i64| (-SAFE_INTEGER..=SAFE_INTEGER).contains(&v);
            if n.as_i64().is_some_and(|v| !safe(v)) || (n.as_i64().is_none() && n.as_u64().is_some()) {
                return false;
            }
        }
        if let (Some(bounds), Parsed::Number(n)) = (plan.bounds, scalar) {
            // A type admitting every number, and bounds: compared as exact doubles.
            if let Some(v) = exact_double(n) {
                return bounds.hold(v);
            }
        }
        match (plan.scalar, scalar) {
            (Scalar::Typed(types), _) => types.is_none_or(|t| t.admits_scalar(scalar)),
            (Scalar::Here, Parsed::String(s)) => is_valid_string_here(self.nodes, id, s),
            (Scalar::Here, _) => is_valid_here(self.nodes, id, &scalar.to_value()),
            (Scalar::Evaluate, _) => is_valid(self.nodes, id, &scalar.to_value()),
        }
    }
}

/// An open container of the direct walk ([`Guide::build`]).
enum Open<'c, B: Build> {
    /// An object, what its members came to, and the key of the one being read.
    Map { map: B::Map, members: Members<'c>, key: Option<B::Value>, first: bool },
    /// An array, its node, and how many items were read.
    List { list: B::List, node: &'c Node, count: u64, first: bool },
}

impl<'c> Guide<'c> {
    /// The whole of `json` (white space around it allowed) walked into
    /// `b`'s objects from node `root`, checked at each value as
    /// [`Guide::deserialize_seed`] checks it, in the same steps (the
    /// scalar, member and count checks are the serde walk's own) without
    /// serde's visitors between: the bindings' one walk. Containers are kept
    /// on an explicit stack, at most `max_depth` deep. `None` where the walk
    /// gave up, or a constructor failed (the usual way then reports it).
    pub(crate) fn build<B: Build>(self, json: &str, root: NodeId, max_depth: usize, b: &mut B) -> Option<B::Value> {
        let mut de = Deserializer::new(json, max_depth);
        let mut stack: Vec<Open<'c, B>> = Vec::new();
        let mut id = root;
        'value: loop {
            let (at, node, plan) = self.resolve(id).ok()?;
            let mut value = match (de.peek(), &plan.read) {
                (Some(b'{'), Read::Object { required, fills, strip: false })
                    if fills.is_empty() && stack.len() < max_depth =>
                {
                    de.reader.pos += 1;
                    let members = Members {
                        guide: self,
                        node,
                        required: *required,
                        seen: 0,
                        required_seen: 0,
                        count: 0,
                        next: 0,
                    };
                    stack.push(Open::Map { map: b.map(None).ok()?, members, key: None, first: true });
                    None
                }
                (Some(b'['), Read::Array) if stack.len() < max_depth => {
                    de.reader.pos += 1;
                    stack.push(Open::List { list: b.list(None).ok()?, node, count: 0, first: true });
                    None
                }
                (Some(b'{' | b'['), _) | (None, _) => return None,
                _ => Some(scalar_into(Guided { de: &mut de, guide: self, id: at }.scalar().ok()?, b).ok()?),
            };
            // The value made goes into its container; then the container's
            // next entry is read, or it closes and goes into its own.
            loop {
                let Some(open) = stack.last_mut() else {
                    de.reader.skip_ws();
                    return if de.reader.peek().is_none() { value } else { None };
                };
                match open {
                    Open::Map { map, members, key, first } => {
                        match (value.take(), key.take()) {
                            (Some(v), Some(k)) => b.insert(map, k, v).ok()?,
                            (None, None) => {}
                            _ => return None,
                        }
                        if de.next_entry(first, b'}')? {
                            let (name, member) = members.member(&mut de).ok()?;
                            *key = Some(b.key(&name).ok()?);
                            id = member;
                            continue 'value;
                        }
                        if !members.complete() {
                            return None;
                        }
                    }
                    Open::List { list, node, count, first } => {
                        if let Some(v) = value.take() {
                            b.push(list, v).ok()?;
                        }
                        if de.next_entry(first, b']')? {
                            // An item past `prefixItems` without `items` is free: the usual way's.
                            let index = usize::try_from(*count).ok()?;
                            id = node.prefix_items.get(index).copied().or(node.items)?;
                            *count += 1;
                            continue 'value;
                        }
                        if !items_complete(node, *count) {
                            return None;
                        }
                    }
                }
                // Past the close `next_entry` stopped at.
                de.reader.pos += 1;
                value = Some(match stack.pop()? {
                    Open::Map { map, .. } => b.end_map(map).ok()?,
                    Open::List { list, .. } => b.end_list(list).ok()?,
                });
            }
        }
    }
}

/// A checked scalar made by `b`'s constructors (numbers as the hand-over gives them).
fn scalar_into<B: Build>(scalar: Parsed<'_>, b: &mut B) -> Result<B::Value, B::Error> {
    match scalar {
        Parsed::Null => b.null(),
        Parsed::Bool(v) => b.bool(v),
        Parsed::String(s) => b.str(&s),
        Parsed::Number(n) => crate::build::number(b, &n),
    }
}

/// The deserializer of one value at one node.
struct Guided<'a, 'de, 'c> {
    de: &'a mut Deserializer<'de>,
    guide: Guide<'c>,
    id: NodeId,
}

impl<'de> Guided<'_, 'de, '_> {
    /// The scalar here, read and checked at this value's node.
    fn scalar(&mut self) -> Result<Parsed<'de>, HandOverError> {
        let (id, _, plan) = self.guide.resolve(self.id)?;
        if !matches!(plan.read, Read::Whole) {
            return Err(doubt());
        }
        self.de.reader.skip_ws();
        // A small integer in a plain range: its digits decide, as in the single pass.
        let at = self.de.reader.pos;
        if let Some(end) = plan.range.and_then(|r| r.holds(self.de.text.as_bytes(), at)) {
            let n = self.de.text.get(at..end).and_then(parser::small_integer).ok_or_else(doubt)?;
            self.de.reader.pos = end;
            return Ok(Parsed::Number(n.into()));
        }
        // Most strings have no escape: borrowed as they stand.
        let plain = if self.de.reader.peek() == Some(b'"') { self.de.reader.plain_string() } else { None };
        let scalar = match plain {
            Some(s) => Parsed::String(Cow::Borrowed(s)),
            None => self.de.reader.scalar_ref().map_err(|_| doubt())?,
        };
        if self.guide.holds(id, plan, &scalar) {
            Ok(scalar)
        } else {
            Err(doubt())
        }
    }

    fn visit_scalar<V: Visitor<'de>>(mut self, visitor: V) -> Result<V::Value, HandOverError> {
        match self.scalar()? {
            Parsed::Null => visitor.visit_unit(),
            Parsed::Bool(b) => visitor.visit_bool(b),
            Parsed::String(Cow::Borrowed(s)) => visitor.visit_borrowed_str(s),
            Parsed::String(Cow::Owned(s)) => visitor.visit_string(s),
            // As the hand-over hands numbers over (integers as integers).
            Parsed::Number(n) => visit_number(visitor, &n),
        }
    }
}

impl<'de> de::Deserializer<'de> for Guided<'_, 'de, '_> {
    type Error = HandOverError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, HandOverError> {
        let (id, node, plan) = self.guide.resolve(self.id)?;
        let guide = self.guide;
        match (self.de.peek(), &plan.read) {
            (Some(b'{'), Read::Object { required, fills, strip: false }) if fills.is_empty() => {
                let entries =
                    Members { guide, node, required: *required, seen: 0, required_seen: 0, count: 0, next: 0 };
                container(self.de, b'}', |de| {
                    let mut members = Entries { de, first: true, close: b'}', at: entries, pending: None };
                    let value = visitor.visit_map(&mut members)?;
                    members.finish()?;
                    Ok(value)
                })
            }
            (Some(b'['), Read::Array) => {
                let items = Items { guide, node, count: 0 };
                container(self.de, b']', |de| {
                    let mut items = Entries { de, first: true, close: b']', at: items, pending: None };
                    let value = visitor.visit_seq(&mut items)?;
                    items.finish()?;
                    Ok(value)
                })
            }
            (Some(b'{' | b'['), _) | (None, _) => Err(doubt()),
            _ => Guided { de: self.de, guide, id }.visit_scalar(visitor),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(mut self, visitor: V) -> Result<V::Value, HandOverError> {
        if self.de.peek() == Some(b'n') {
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
        mut self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, HandOverError> {
        // A unit variant as a string; the tagged object form is the usual way's.
        if self.de.peek() != Some(b'"') {
            return Err(doubt());
        }
        match self.scalar()? {
            Parsed::String(s) => visit_enum_str(visitor, s),
            _ => Err(doubt()),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, HandOverError> {
        // Checked all the same: walked with nothing kept.
        self.deserialize_any(de::IgnoredAny)?;
        visitor.visit_unit()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple tuple_struct map struct identifier
    }
}

/// A container whose opening byte is next, read by `f` up to its close,
/// one level less (on a stack that cannot overflow).
fn container<'de, R>(
    de: &mut Deserializer<'de>,
    close: u8,
    f: impl FnOnce(&mut Deserializer<'de>) -> Result<R, HandOverError>,
) -> Result<R, HandOverError> {
    de.reader.pos += 1;
    de.nested(|de| {
        let value = f(de)?;
        de.eat(close, "").map_err(|_| doubt())?;
        Ok(value)
    })
}

/// The members or items of one container, after its opening byte; `at`
/// says what its node asks of them.
struct Entries<'a, 'de, A> {
    de: &'a mut Deserializer<'de>,
    first: bool,
    close: u8,
    at: A,
    /// The node of the member whose key was read last.
    pending: Option<NodeId>,
}

impl<A> Entries<'_, '_, A> {
    /// Past the `,` before the next entry (none before the first); false at the close.
    fn next(&mut self) -> Result<bool, HandOverError> {
        self.de.next_entry(&mut self.first, self.close).ok_or_else(doubt)
    }
}

/// An object's node, and what its members came to so far.
struct Members<'c> {
    guide: Guide<'c>,
    node: &'c Node,
    /// Declared properties that are required, and how many were met.
    required: usize,
    required_seen: usize,
    /// Declared properties met, by position (objects of at most 64).
    seen: u64,
    count: u64,
    /// The position of the property declared after the last one met.
    next: usize,
}

/// An array's node, and how many items were read.
struct Items<'c> {
    guide: Guide<'c>,
    node: &'c Node,
    count: u64,
}

impl Members<'_> {
    /// The member whose key is next (its opening quote), read up to and past
    /// its `:`, counted: its key and its node. A key the node does not
    /// declare, or one met before, is a doubt.
    fn member<'de>(&mut self, de: &mut Deserializer<'de>) -> Result<(Cow<'de, str>, NodeId), HandOverError> {
        if de.peek() != Some(b'"') {
            return Err(doubt());
        }
        // Replies mostly list members in the contract's order: the name
        // declared next is tried as raw bytes before the key is read and
        // looked up (as the single pass does).
        let start = de.reader.pos;
        let guessed = self.node.property_index.plain_at(self.next).and_then(|(name, id, required)| {
            let end = start + name.len() + 2;
            let text = de.text;
            (text.as_bytes().get(end - 1) == Some(&b'"')
                && text.as_bytes().get(start + 1..end - 1).is_some_and(|k| same_bytes(k, name.as_bytes())))
            .then(|| text.get(start + 1..end - 1).map(|key| (key, end, (self.next, id, required))))
            .flatten()
        });
        let (key, (position, id, required)) = match guessed {
            Some((key, end, found)) => {
                de.reader.pos = end;
                (Cow::Borrowed(key), found)
            }
            None => {
                let key = match de.reader.plain_string() {
                    Some(s) => Cow::Borrowed(s),
                    None => de.reader.string_cow().map_err(|_| doubt())?,
                };
                // Undeclared: `additionalProperties`, hazardous keys and repeats are the usual way's.
                let found = self.node.property_index.position(&key).ok_or_else(doubt)?;
                (key, found)
            }
        };
        self.next = position + 1;
        let bit = u32::try_from(position).ok().and_then(|p| 1u64.checked_shl(p)).ok_or_else(doubt)?;
        if self.seen & bit != 0 {
            return Err(doubt());
        }
        self.seen |= bit;
        self.required_seen += usize::from(required);
        self.count += 1;
        de.eat(b':', "").map_err(|_| doubt())?;
        Ok((key, id))
    }

    /// At the close: `required`, `minProperties` and `maxProperties` hold.
    fn complete(&self) -> bool {
        self.required_seen == self.required
            && self.node.min_properties.is_none_or(|min| self.count >= min)
            && self.node.max_properties.is_none_or(|max| self.count <= max)
    }
}

/// At an array's close: `minItems` and `maxItems` hold for `count` items.
fn items_complete(node: &Node, count: u64) -> bool {
    node.min_items.is_none_or(|min| count >= min) && node.max_items.is_none_or(|max| count <= max)
}

impl Entries<'_, '_, Members<'_>> {
    /// At the close: `required`, `minProperties` and `maxProperties` hold.
    fn finish(&mut self) -> Result<(), HandOverError> {
        if self.de.peek() == Some(b'}') && self.at.complete() {
            Ok(())
        } else {
            Err(doubt())
        }
    }
}

impl Entries<'_, '_, Items<'_>> {
    /// At the close: `minItems` and `maxItems` hold.
    fn finish(&mut self) -> Result<(), HandOverError> {
        if self.de.peek() == Some(b']') && items_complete(self.at.node, self.at.count) {
            Ok(())
        } else {
            Err(doubt())
        }
    }
}

impl<'de> de::MapAccess<'de> for Entries<'_, 'de, Members<'_>> {
    type Error = HandOverError;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, HandOverError> {
        if !self.next()? {
            return Ok(None);
        }
        // The key read once, looked up, and handed to the seed as a string
        // (a map keyed by numbers is the usual way's).
        let (key, id) = self.at.member(self.de)?;
        self.pending = Some(id);
        match key {
            Cow::Borrowed(k) => seed.deserialize(de::value::BorrowedStrDeserializer::new(k)),
            Cow::Owned(k) => seed.deserialize(de::IntoDeserializer::<HandOverError>::into_deserializer(k)),
        }
        .map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, HandOverError> {
        let id = self.pending.take().ok_or_else(doubt)?;
        seed.deserialize(Guided { de: &mut *self.de, guide: self.at.guide, id })
    }
}

impl<'de> de::SeqAccess<'de> for Entries<'_, 'de, Items<'_>> {
    type Error = HandOverError;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, HandOverError> {
        if !self.next()? {
            return Ok(None);
        }
        let n = self.at.node;
        let index = usize::try_from(self.at.count).map_err(|_| doubt())?;
        // An item past `prefixItems` without `items` is free: the usual way's.
        let id = n.prefix_items.get(index).copied().or(n.items).ok_or_else(doubt)?;
        self.at.count += 1;
        seed.deserialize(Guided { de: &mut *self.de, guide: self.at.guide, id }).map(Some)
    }
}
