//! Checking while reading: one pass over the bytes, directed by the contract.
//!
//! The contract is known before the reply arrives, so most replies can be
//! checked as they are read, the way serde's typed deserialization works: at
//! each object the key is looked up in the compiled node's property table,
//! the member is checked in place, and only the output value is built. No
//! generic tree is walked a second time and no path is built.
//!
//! This pass only ever *accepts*. Anything it is not certain of — a failed
//! keyword, a repair that would apply — it reads on past and hands the value
//! it read to the full path (repair, check, report), so a refused reply is
//! still read once. What it cannot read — not strict JSON, a duplicate key,
//! a depth limit, text around the JSON — the full path reads itself, with
//! its own messages and unwraps. The one repair this pass makes is the
//! commonest: a missing optional property filled with its declared default,
//! logged exactly as the repair pass logs it. Either way the verdict is the
//! full path's to the byte; `tests/single_pass.rs` holds the two to that on
//! every reply we have.

use serde_json::{Map, Value};

use super::{is_valid, is_valid_here};
use crate::contract::node::{hazardous_key, Node, NodeId, Types};
use crate::pointer;
use crate::read::parser::Parser;
use crate::read::read_value;
use crate::repair::{default_of, filled, leaves_valid_scalar_alone, Repairer};
use crate::verdict::Repair;

/// The single pass cannot read on: the full path reads the reply itself.
pub(crate) struct Undecided;

type Pass<T> = Result<T, Undecided>;

/// How the single pass reads a value for one node, chosen once per contract.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    read: Read,
    /// How a scalar is checked at this node.
    scalar: Scalar,
}

#[derive(Debug, Clone, Copy)]
enum Scalar {
    /// Nothing but an optional `type` (and no integer-only range check):
    /// the type decides.
    Typed(Option<Types>),
    /// No in-place applicator: the node's own keywords decide.
    Here,
    /// The evaluator, applicators and all.
    Evaluate,
}

#[derive(Debug, Clone)]
enum Read {
    /// Read the value whole, then check it with the evaluator (and, when a
    /// repair below could apply, make sure none does).
    Whole,
    /// An object whose keywords are all checked member by member as it is read.
    Object {
        /// How many declared properties are required.
        required: usize,
        /// Declared properties that a default fills when missing.
        fills: Vec<Fill>,
        /// `strip_unknown` is declared: any undeclared key would be repaired.
        strip: bool,
    },
    /// An array whose keywords are all checked item by item as it is read.
    Array,
    /// A node that is nothing but a `$ref`: read as its target.
    Alias(NodeId),
}

/// A declared property with a default, filled when the reply leaves it out.
#[derive(Debug, Clone)]
struct Fill {
    name: String,
    default: Value,
    required: bool,
}

/// One plan per node of the arena.
pub(crate) fn plans(nodes: &[Node]) -> Vec<Plan> {
    nodes.iter().map(|n| Plan { read: plan(nodes, n), scalar: scalar_plan(n) }).collect()
}

fn scalar_plan(n: &Node) -> Scalar {
    let integer_only = n.types.is_some_and(|t| t.contains(Types::INTEGER) && !t.contains(Types::NUMBER));
    if n.only_choice_keywords()
        && n.enumeration.is_none()
        && n.constant.is_none()
        && n.reference.is_none()
        && n.policy.is_none()
        && !(integer_only && n.exact_integers)
    {
        Scalar::Typed(n.types)
    } else if n.in_place().next().is_none() {
        Scalar::Here
    } else {
        Scalar::Evaluate
    }
}

fn plan(nodes: &[Node], n: &Node) -> Read {
    if let Some(target) = n.only_reference() {
        // `$ref` chains without a cycle through in-place keywords are
        // guaranteed by the compiler; the bound is a belt.
        let mut target = target;
        for _ in 0..nodes.len() {
            match nodes.get(target).and_then(Node::only_reference) {
                Some(next) => target = next,
                None => return Read::Alias(target),
            }
        }
        return Read::Whole;
    }
    let simple = !n.never && n.enumeration.is_none() && n.constant.is_none() && n.in_place().next().is_none();
    if !simple {
        return Read::Whole;
    }
    let rules = n.policy.as_ref().map(|p| p.rules).unwrap_or_default();
    if n.types.is_none_or(|t| t.contains(Types::OBJECT))
        && n.pattern_properties.is_empty()
        && n.property_names.is_none()
        && n.dependent_required.is_empty()
        && n.required_all_declared
        && (!n.properties.is_empty() || n.additional_properties.is_some() || !n.required.is_empty())
    {
        let mut fills = Vec::new();
        for (name, id) in &n.properties {
            let Some(default) = default_of(nodes, *id) else { continue };
            // A fill the repair pass would go on to change, or that the
            // property refuses, is the full path's to handle.
            let mut settled = default.clone();
            let mut r = Repairer::new(nodes);
            r.repair(*id, &mut settled);
            if !r.log.is_empty() || !is_valid(nodes, *id, default) {
                return Read::Whole;
            }
            let required = n.property_index.entry(name).is_some_and(|(_, required)| required);
            fills.push(Fill { name: name.clone(), default: default.clone(), required });
        }
        return Read::Object { required: n.property_index.required_count(), fills, strip: rules.strip_unknown };
    }
    if n.types.is_some_and(|t| t.contains(Types::ARRAY))
        && n.contains.is_none()
        && !n.unique_items
        && (n.items.is_some() || !n.prefix_items.is_empty())
    {
        return Read::Array;
    }
    Read::Whole
}

/// What the single pass found.
pub(crate) enum Outcome {
    /// Vouched for: the value and the fills made (already logged as repairs).
    Accepted(Value, Vec<Repair>),
    /// Strict JSON, read exactly as the full path's reader reads it, but not
    /// vouched for here (a keyword failed, or a repair would apply): the
    /// full path judges this value without reading the reply again.
    Read(Value),
    /// Not read (not strict JSON, a repeated key, too deep, text around
    /// it): the full path reads the reply itself.
    Unread,
}

/// Check a whole reply in one pass.
pub(crate) fn run(nodes: &[Node], plans: &[Plan], root: NodeId, text: &str, max_depth: usize) -> Outcome {
    let mut pass =
        SinglePass { nodes, plans, text, p: Parser::at(text, 0), max_depth, fills: Vec::new(), doubt: false };
    let Ok(mut value) = pass.value(root, 0) else { return Outcome::Unread };
    pass.p.skip_ws();
    if pass.p.pos != text.len() {
        return Outcome::Unread;
    }
    if pass.doubt {
        // Hand over the reply as read: take the fills out again (each was
        // appended to its object, so removing it restores the order read).
        for (parent, name, _) in pass.fills.iter().rev() {
            match value.pointer_mut(parent).and_then(Value::as_object_mut) {
                Some(map) => {
                    map.shift_remove(*name);
                }
                None => return Outcome::Unread,
            }
        }
        return Outcome::Read(value);
    }
    let repairs = pass
        .fills
        .into_iter()
        .map(|(mut path, name, d)| {
            path.push('/');
            pointer::push_escaped(&mut path, name);
            filled(path, d)
        })
        .collect();
    Outcome::Accepted(value, repairs)
}

struct SinglePass<'c, 't> {
    nodes: &'c [Node],
    plans: &'c [Plan],
    text: &'t str,
    p: Parser<'t>,
    max_depth: usize,
    /// Properties filled so far: the path of the object (relative to the
    /// container being read, completed on the way out), the name and the
    /// default.
    fills: Vec<(String, &'c str, &'c Value)>,
    /// Something was not vouched for: read on, and let the full path judge.
    doubt: bool,
}

impl<'c> SinglePass<'c, '_> {
    /// The value at the reader's position, for node `id`, enclosed in
    /// `depth` containers.
    fn value(&mut self, id: NodeId, depth: usize) -> Pass<Value> {
        let id = match self.plans.get(id).map(|p| &p.read) {
            Some(Read::Alias(target)) => *target,
            _ => id,
        };
        self.p.skip_ws();
        let plan = self.plans.get(id).ok_or(Undecided)?;
        match (&plan.read, self.p.peek()) {
            (Read::Object { .. }, Some(b'{')) | (Read::Array, Some(b'[')) => {
                // Recursion follows the reply's nesting (bounded by `max_depth`):
                // make sure of the stack every few levels.
                if depth % 8 == 7 {
                    crate::deeper(|| self.container(id, depth))
                } else {
                    self.container(id, depth)
                }
            }
            (_, Some(b'{' | b'[')) => {
                let v = self.free(depth)?;
                Ok(self.settle(id, v, false))
            }
            _ => {
                let v = self.p.scalar().map_err(|_| Undecided)?;
                match plan.scalar {
                    Scalar::Typed(types) => self.doubt |= types.is_some_and(|t| !t.admits(&v)),
                    Scalar::Here => return Ok(self.settle(id, v, true)),
                    Scalar::Evaluate => return Ok(self.settle(id, v, false)),
                }
                Ok(v)
            }
        }
    }

    fn container(&mut self, id: NodeId, depth: usize) -> Pass<Value> {
        // The same bound the reader enforces: a container opens only inside the limit.
        if depth >= self.max_depth {
            return Err(Undecided);
        }
        let (nodes, plans) = (self.nodes, self.plans);
        let n = nodes.get(id).ok_or(Undecided)?;
        match plans.get(id).map(|p| &p.read) {
            Some(Read::Object { required, fills, strip }) => self.object(n, *required, fills, *strip, depth),
            Some(Read::Array) => self.array(n, depth),
            _ => Err(Undecided),
        }
    }

    /// A value no keyword constrains: read it whole.
    fn free(&mut self, depth: usize) -> Pass<Value> {
        let (v, end) =
            read_value(self.text, self.p.pos, self.max_depth.saturating_sub(depth), false).map_err(|_| Undecided)?;
        self.p.pos = end;
        Ok(v)
    }

    /// A value read whole: doubted unless valid for the node and no repair
    /// would touch it. `scalar_here`: a scalar at a node without in-place
    /// applicators. The value is returned as read either way.
    fn settle(&mut self, id: NodeId, v: Value, scalar_here: bool) -> Value {
        let Some(n) = self.nodes.get(id) else {
            self.doubt = true;
            return v;
        };
        if n.policy_below {
            let untouched = if scalar_here {
                // Only the node's own rules can apply to a scalar.
                leaves_valid_scalar_alone(n, &v)
            } else {
                let mut probe = v.clone();
                let mut r = Repairer::new(self.nodes);
                r.repair(id, &mut probe);
                r.log.is_empty()
            };
            if !untouched {
                self.doubt = true;
                return v;
            }
        }
        let valid = if scalar_here { is_valid_here(self.nodes, id, &v) } else { is_valid(self.nodes, id, &v) };
        self.doubt |= !valid;
        v
    }

    /// Skip white space and one expected byte.
    #[inline]
    fn consume(&mut self, byte: u8) -> Pass<()> {
        self.p.skip_ws();
        if self.p.peek() == Some(byte) {
            self.p.pos += 1;
            Ok(())
        } else {
            Err(Undecided)
        }
    }

    /// Complete the paths of the fills logged since `from` with the segment
    /// of the member or item they were found in.
    fn within(&mut self, from: usize, segment: &str) {
        for (path, _, _) in self.fills.iter_mut().skip(from) {
            let mut full = String::with_capacity(segment.len() + 1 + path.len());
            full.push('/');
            pointer::push_escaped(&mut full, segment);
            full.push_str(path);
            *path = full;
        }
    }

    /// After an opening bracket: whether the container closes at once.
    #[inline]
    fn closes_at_once(&mut self, close: u8) -> bool {
        self.p.skip_ws();
        let empty = self.p.peek() == Some(close);
        self.p.pos += usize::from(empty);
        empty
    }

    /// After a member or item: whether another follows (`,`) or the
    /// container closes.
    #[inline]
    fn another(&mut self, close: u8) -> Pass<bool> {
        self.p.skip_ws();
        match self.p.peek() {
            Some(b',') => {
                self.p.pos += 1;
                Ok(true)
            }
            Some(b) if b == close => {
                self.p.pos += 1;
                Ok(false)
            }
            _ => Err(Undecided),
        }
    }

    /// A member or item for `child` (none: unconstrained), with the fills
    /// found inside it placed under `segment`.
    // Always inlined: a call of its own in the recursion costs a frame and a move per item.
    #[inline(always)]
    fn item(&mut self, child: Option<NodeId>, depth: usize, segment: &dyn Fn() -> String) -> Pass<Value> {
        let before = self.fills.len();
        let v = match child {
            Some(id) => self.value(id, depth + 1)?,
            None => {
                self.p.skip_ws();
                self.free(depth + 1)?
            }
        };
        if self.fills.len() > before {
            self.within(before, &segment());
        }
        Ok(v)
    }

    fn object(&mut self, n: &Node, required: usize, fills: &'c [Fill], strip: bool, depth: usize) -> Pass<Value> {
        self.p.pos += 1; // '{'
                         // This object's own fills come before those found inside its members,
                         // as the repair pass logs them.
        let first_fill = self.fills.len();
        let mut map = Map::with_capacity(n.properties.len());
        let mut required_seen = 0;
        let mut more = !self.closes_at_once(b'}');
        while more {
            self.p.skip_ws();
            if self.p.peek() != Some(b'"') {
                return Err(Undecided);
            }
            let key = self.p.string().map_err(|_| Undecided)?;
            self.consume(b':')?;
            let child = match n.property_index.entry(&key) {
                Some((id, is_required)) => {
                    required_seen += usize::from(is_required);
                    Some(id)
                }
                None => {
                    // An undeclared key: stripped, refused, or read as consumers would not.
                    self.doubt |= strip || (n.plain_keys && hazardous_key(&key));
                    match n.additional_properties {
                        Some(a) if self.nodes.get(a).is_none_or(|a| a.never) => {
                            self.doubt = true;
                            None
                        }
                        other => other,
                    }
                }
            };
            let v = self.item(child, depth, &|| key.clone())?;
            // A repeated key (also one equal only after unescaping) is the full path's to refuse.
            if map.insert(key, v).is_some() {
                return Err(Undecided);
            }
            more = self.another(b'}')?;
        }
        let mut own = Vec::new();
        for fill in fills {
            if !map.contains_key(&fill.name) {
                required_seen += usize::from(fill.required);
                map.insert(fill.name.clone(), fill.default.clone());
                own.push((String::new(), fill.name.as_str(), &fill.default));
            }
        }
        let len = map.len() as u64;
        self.doubt |= required_seen != required
            || n.min_properties.is_some_and(|min| len < min)
            || n.max_properties.is_some_and(|max| len > max);
        if !own.is_empty() {
            let at = first_fill.min(self.fills.len());
            self.fills.splice(at..at, own);
        }
        Ok(Value::Object(map))
    }

    fn array(&mut self, n: &Node, depth: usize) -> Pass<Value> {
        self.p.pos += 1; // '['
        let mut items = Vec::new();
        let mut more = !self.closes_at_once(b']');
        while more {
            let index = items.len();
            let child = n.prefix_items.get(index).copied().or(n.items);
            items.push(self.item(child, depth, &|| index.to_string())?);
            more = self.another(b']')?;
        }
        let len = items.len() as u64;
        self.doubt |= n.min_items.is_some_and(|min| len < min) || n.max_items.is_some_and(|max| len > max);
        Ok(Value::Array(items))
    }
}
