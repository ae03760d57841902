//! Checking while reading: one pass over the bytes, directed by the contract.
//!
//! The contract is known before the reply arrives, so most replies can be
//! checked as they are read, the way serde's typed deserialization works: at
//! each object the key is looked up in the compiled node's property table,
//! the member is checked in place, and only the output value is built. No
//! generic tree is walked a second time and no path is built.
//!
//! This pass only ever *accepts*. Anything it is not certain of — a failed
//! keyword, a repair that would apply, an unwrap, a duplicate key, a depth
//! limit, a keyword it does not check in place — makes it stand aside
//! ([`Undecided`]), and the full path (read, repair, check, report) decides
//! as if this pass did not exist. The one repair it makes itself is the
//! commonest: a missing optional property filled with its declared default,
//! logged exactly as the repair pass logs it. What it accepts, the full path
//! accepts with the same value and the same repairs; `tests/single_pass.rs`
//! holds the two to that on every reply we have.

use serde_json::{Map, Value};

use super::{is_valid, is_valid_here};
use crate::contract::node::{hazardous_key, is_integer, Node, NodeId, Types};
use crate::pointer;
use crate::read::parser::Parser;
use crate::read::read_value;
use crate::repair::{filled, Repairer};
use crate::verdict::Repair;

/// The single pass stands aside: the full path decides.
pub(crate) struct Undecided;

type Pass<T> = Result<T, Undecided>;

/// How the single pass reads a value for one node, chosen once per contract.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    read: Read,
    /// No in-place applicator: a scalar is checked by this node alone.
    direct: bool,
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
    nodes.iter().map(|n| Plan { read: plan(nodes, n), direct: n.in_place().next().is_none() }).collect()
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

/// The default a missing property is filled with, following `$ref`s (as
/// the repair pass finds it).
fn default_of(nodes: &[Node], mut id: NodeId) -> Option<&Value> {
    for _ in 0..=nodes.len() {
        let node = nodes.get(id)?;
        if let Some(d) = node.policy.as_ref().and_then(|p| p.default.as_ref()) {
            return Some(d);
        }
        id = node.reference?;
    }
    None
}

/// The value of a whole reply and its repairs, if this pass can vouch for
/// it: strict JSON, nothing after it but white space, valid, and no declared
/// repair would change it but missing properties filled with their
/// defaults. `None` means the full path must decide.
pub(crate) fn accept(
    nodes: &[Node],
    plans: &[Plan],
    root: NodeId,
    text: &str,
    max_depth: usize,
) -> Option<(Value, Vec<Repair>)> {
    let mut pass = SinglePass { nodes, plans, text, p: Parser::at(text, 0), max_depth, fills: Vec::new() };
    let value = pass.value(root, 0).ok()?;
    pass.p.skip_ws();
    if pass.p.pos != text.len() {
        return None;
    }
    Some((value, pass.fills.into_iter().map(|(path, d)| filled(path, d)).collect()))
}

struct SinglePass<'c, 't> {
    nodes: &'c [Node],
    plans: &'c [Plan],
    text: &'t str,
    p: Parser<'t>,
    max_depth: usize,
    /// Properties filled so far: the path (relative to the container being
    /// read, completed on the way out) and the default.
    fills: Vec<(String, &'c Value)>,
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
                self.settle(id, v, false)
            }
            _ => {
                let v = self.p.scalar().map_err(|_| Undecided)?;
                self.settle(id, v, plan.direct)
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

    /// A value read whole: valid for the node, and no repair would touch it.
    /// `scalar_here`: a scalar at a node without in-place applicators.
    fn settle(&self, id: NodeId, mut v: Value, scalar_here: bool) -> Pass<Value> {
        let n = self.nodes.get(id).ok_or(Undecided)?;
        if n.policy_below {
            if scalar_here {
                // Only the node's own rules can apply to a scalar.
                if !scalar_untouched(n, &v) {
                    return Err(Undecided);
                }
            } else {
                let mut r = Repairer::new(self.nodes);
                r.repair(id, &mut v);
                if !r.log.is_empty() {
                    return Err(Undecided);
                }
            }
        }
        let valid = if scalar_here { is_valid_here(self.nodes, id, &v) } else { is_valid(self.nodes, id, &v) };
        if valid {
            Ok(v)
        } else {
            Err(Undecided)
        }
    }

    fn expect(&mut self, byte: u8) -> Pass<()> {
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
        for (path, _) in self.fills.iter_mut().skip(from) {
            let mut full = String::with_capacity(segment.len() + 1 + path.len());
            full.push('/');
            pointer::push_escaped(&mut full, segment);
            full.push_str(path);
            *path = full;
        }
    }

    fn object(&mut self, n: &Node, required: usize, fills: &'c [Fill], strip: bool, depth: usize) -> Pass<Value> {
        self.p.pos += 1; // '{'
                         // This object's own fills come before those found inside its members,
                         // as the repair pass logs them.
        let first_fill = self.fills.len();
        let mut map = Map::with_capacity(n.properties.len());
        let mut required_seen = 0;
        self.p.skip_ws();
        if self.p.peek() == Some(b'}') {
            self.p.pos += 1;
        } else {
            loop {
                self.p.skip_ws();
                if self.p.peek() != Some(b'"') {
                    return Err(Undecided);
                }
                let key = self.p.string().map_err(|_| Undecided)?;
                self.expect(b':')?;
                let child = match n.property_index.entry(&key) {
                    Some((id, is_required)) => {
                        required_seen += usize::from(is_required);
                        Some(id)
                    }
                    None => {
                        // An undeclared key: stripped, refused, or read as consumers would not.
                        if strip || (n.plain_keys && hazardous_key(&key)) {
                            return Err(Undecided);
                        }
                        match n.additional_properties {
                            Some(a) if self.nodes.get(a).is_none_or(|a| a.never) => return Err(Undecided),
                            other => other,
                        }
                    }
                };
                let before = self.fills.len();
                let v = match child {
                    Some(id) => self.value(id, depth + 1)?,
                    None => {
                        self.p.skip_ws();
                        self.free(depth + 1)?
                    }
                };
                if self.fills.len() > before {
                    self.within(before, &key);
                }
                // A repeated key (also one equal only after unescaping) is the full path's to refuse.
                if map.insert(key, v).is_some() {
                    return Err(Undecided);
                }
                self.p.skip_ws();
                match self.p.peek() {
                    Some(b',') => self.p.pos += 1,
                    Some(b'}') => {
                        self.p.pos += 1;
                        break;
                    }
                    _ => return Err(Undecided),
                }
            }
        }
        let mut own = Vec::new();
        for fill in fills {
            if !map.contains_key(&fill.name) {
                required_seen += usize::from(fill.required);
                map.insert(fill.name.clone(), fill.default.clone());
                let mut path = String::with_capacity(fill.name.len() + 1);
                path.push('/');
                pointer::push_escaped(&mut path, &fill.name);
                own.push((path, &fill.default));
            }
        }
        let len = map.len() as u64;
        if required_seen != required
            || n.min_properties.is_some_and(|min| len < min)
            || n.max_properties.is_some_and(|max| len > max)
        {
            return Err(Undecided);
        }
        if !own.is_empty() {
            let at = first_fill.min(self.fills.len());
            self.fills.splice(at..at, own);
        }
        Ok(Value::Object(map))
    }

    fn array(&mut self, n: &Node, depth: usize) -> Pass<Value> {
        self.p.pos += 1; // '['
        let mut items = Vec::new();
        self.p.skip_ws();
        if self.p.peek() == Some(b']') {
            self.p.pos += 1;
        } else {
            loop {
                let before = self.fills.len();
                let v = match n.prefix_items.get(items.len()).copied().or(n.items) {
                    Some(id) => self.value(id, depth + 1)?,
                    None => {
                        self.p.skip_ws();
                        self.free(depth + 1)?
                    }
                };
                if self.fills.len() > before {
                    self.within(before, &items.len().to_string());
                }
                items.push(v);
                self.p.skip_ws();
                match self.p.peek() {
                    Some(b',') => self.p.pos += 1,
                    Some(b']') => {
                        self.p.pos += 1;
                        break;
                    }
                    _ => return Err(Undecided),
                }
            }
        }
        let len = items.len() as u64;
        if n.min_items.is_some_and(|min| len < min) || n.max_items.is_some_and(|max| len > max) {
            return Err(Undecided);
        }
        Ok(Value::Array(items))
    }
}

/// Whether no rule of the node's own policy would change this scalar, given
/// that it is valid (rules that only apply to invalid values — `clamp`,
/// `enum_case`, `truncate`, `default_if_invalid` — cannot fire then).
fn scalar_untouched(n: &Node, v: &Value) -> bool {
    let Some(policy) = &n.policy else { return true };
    let rules = policy.rules;
    let null_default = policy.default.is_some() && v.is_null() && !n.types.is_some_and(|t| t.contains(Types::NULL));
    let coerced = rules.coerce && v.is_string();
    let rounded = rules.round && v.as_number().is_some_and(|x| !is_integer(x));
    let trimmed = rules.trim && v.as_str().is_some_and(|s| s.trim().len() != s.len());
    !(null_default || coerced || rounded || trimmed)
}
