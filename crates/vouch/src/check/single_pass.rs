//! Checking while reading: one pass over the bytes, directed by the contract.
//!
//! The contract is known before the reply arrives, so most replies can be
//! checked as they are read, the way serde's typed deserialization works: at
//! each object the key is looked up in the compiled node's property table
//! (borrowed from the text, not copied) and the member is checked in place.
//! No generic tree is built: an accepted reply *is* its output, the JSON
//! text vouch vouched for, and its `Value` is read from that text only when
//! someone asks for it ([`crate::Accepted::value`]). Scalars are typed where
//! they stand; a string is copied only where a keyword looks at it, and a
//! subtree only where an applicator (`anyOf`, `not`…) must see it whole.
//!
//! This pass only ever *accepts*, and makes only the changes the repair pass
//! would make where they stand alone: a missing property with a default is
//! written into the text as its object's last member, and a scalar its
//! node's own rules change is repaired in place when one more round changes
//! nothing — each logged exactly as the repair pass logs it. At the first
//! thing it is not certain of — a failed keyword, a repair it cannot make
//! here — it stops (noting, for a member of the root object, where: the
//! report takes the reading up from there, `streamed_report.rs`); so does
//! whatever it cannot read — not strict JSON, a repeated key, a depth limit,
//! text around the JSON — keeping the reader's error when it is exactly the
//! full path's. Either way the verdict is the full path's to the byte;
//! `tests/single_pass.rs` holds the two to that on every reply we have.

use std::borrow::Cow;
use std::collections::HashSet;

use serde_json::Value;

use super::{is_valid, is_valid_here, is_valid_string_here};
use crate::contract::node::PropertyIndex;
use crate::contract::node::{hazardous_key, Node, NodeId, Types};
use crate::pointer;
use crate::read::parser::{Integers, Parser, ReadError, Scalar as ParsedScalar, KEY};
use crate::repair::{default_of, leaves_valid_scalar_alone, leaves_valid_string_alone, Filling, Repairer};
use crate::verdict::{display_path, ProblemCode, Repair};

/// Why the single pass stopped: the full path reads the reply itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    /// Read so far, but not vouched for: a keyword failed or a repair would apply.
    Doubt,
    /// Not read: not strict JSON, a repeated key, too deep.
    Unread,
}

type Pass<T> = Result<T, Stop>;

/// How the single pass reads a value for one node, chosen once per contract.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    pub(super) read: Read,
    /// How a scalar is checked at this node.
    pub(super) scalar: Scalar,
}

#[derive(Debug, Clone, Copy)]
pub(super) enum Scalar {
    /// Nothing but an optional `type` (and no integer-only range check):
    /// the type decides.
    Typed(Option<Types>),
    /// No in-place applicator: the node's own keywords decide.
    Here,
    /// The evaluator, applicators and all.
    Evaluate,
}

#[derive(Debug, Clone)]
pub(super) enum Read {
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
pub(super) struct Fill {
    name: String,
    /// Where the property stands among the declared ones.
    position: usize,
    /// The member as it is written into the reply: `"name":default`, compact.
    member: String,
    /// How deep the default nests.
    depth: usize,
    /// Its log entry but for the path.
    filling: Filling,
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
    // `unevaluated*` needs what every keyword evaluated: read whole, checked by the evaluator.
    let simple = !n.never
        && n.enumeration.is_none()
        && n.constant.is_none()
        && n.in_place().next().is_none()
        && !n.unevaluated();
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
            let Some((position, _, required)) = n.property_index.position(name) else { return Read::Whole };
            let member =
                format!("{}:{}", crate::write::value(&Value::from(name.as_str())), crate::write::value(default));
            let depth = crate::contract::depth(default);
            let filling = Filling::of(default);
            fills.push(Fill { name: name.clone(), position, member, depth, filling, required });
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
pub(crate) enum Outcome<'c, 't> {
    /// Vouched for, exactly as the text stands but for the changes listed.
    Accepted(Vouched<'c>),
    /// Strict JSON as far as read, but a keyword failed or a repair would
    /// apply: the full path reads and judges it. With where a report may
    /// take the reading up, when the doubt arose in a member of the root.
    Doubted(Option<Resume<'t>>),
    /// Not read (not strict JSON, a repeated key, too deep, text around
    /// it): the full path reads the reply itself. With the error the full
    /// path's reader gives, where this pass found that very error.
    Unread(Option<ReadError>),
}

/// Check a whole reply in one pass.
pub(crate) fn run<'c, 't>(
    nodes: &'c [Node],
    plans: &'c [Plan],
    root: NodeId,
    text: &'t str,
    (max_depth, max_repairs, integers): (usize, usize, Integers),
) -> Outcome<'c, 't> {
    let mut pass = SinglePass {
        nodes,
        plans,
        p: Parser::at(text, 0, integers),
        max_depth,
        max_repairs,
        made: 0,
        changes: Vec::new(),
        error: None,
        verbatim: true,
        resume: None,
    };
    match pass.value(root, 0) {
        Ok(()) => {}
        Err(Stop::Doubt) => return Outcome::Doubted(pass.resume),
        Err(Stop::Unread) => return Outcome::Unread(pass.error),
    }
    pass.p.skip_ws();
    if pass.p.pos != text.len() {
        return Outcome::Unread(Some(pass.p.trailing()));
    }
    Outcome::Accepted(Vouched { changes: pass.changes, verbatim: pass.verbatim })
}

/// A reply the single pass vouched for.
pub(crate) struct Vouched<'c> {
    /// The changes made, in the order the repair pass logs them.
    pub changes: Vec<Change<'c>>,
    /// Every number in it is written so that any JSON reader, exact decimal
    /// readers included, reads what vouch read (at most 15 characters: a
    /// double keeps 15 significant digits, so readers cannot disagree on
    /// its order against a bound), and no part was read whole: its text may
    /// be handed on as it stands.
    pub verbatim: bool,
}

/// Longest number text handed on verbatim (see [`Vouched::verbatim`]).
const VERBATIM_NUMBER: usize = 15;

impl Fill {
    /// Where the property stands among the declared ones.
    pub(super) fn position(&self) -> usize {
        self.position
    }

    /// Whether the property is required.
    pub(super) fn required(&self) -> bool {
        self.required
    }
}

/// A change the pass made, as the repair pass would: a property filled with
/// its default, or a scalar repaired where it stands.
pub(crate) struct Change<'c> {
    /// The path of the object filled, or of the scalar repaired (relative to
    /// the container being read while reading; from the root once done).
    path: String,
    /// Where in the text: the span replaced (`at..end`); a fill is inserted
    /// before its object's closing brace (`at == end`).
    at: usize,
    end: usize,
    made: Made<'c>,
}

enum Made<'c> {
    /// `comma`: a member comes before it.
    Fill { fill: &'c Fill, comma: bool },
    /// The repaired scalar as JSON, how deep it nests, the repair pass's
    /// log for it (paths relative to the scalar), and how many repairs it
    /// counts against `max_repairs` (those taken back included).
    Repaired { json: String, depth: usize, log: Vec<Repair>, made: usize },
}

impl Change<'_> {
    /// The repairs this change counts against `max_repairs`, as the repair
    /// pass counts them.
    pub(super) fn made(&self) -> usize {
        match &self.made {
            Made::Fill { .. } => 1,
            Made::Repaired { made, .. } => *made,
        }
    }
}

/// A reply the single pass accepted with changes, as text — each default
/// written in as the last member of its object (where the repair pass puts
/// it), each repaired scalar in place of the one sent — the changes logged
/// as the repair pass logs them, and how much deeper the text may nest
/// than the reply did.
pub(crate) fn changed_text(text: &str, mut changes: Vec<Change<'_>>) -> (String, Vec<Repair>, usize) {
    let mut repairs = Vec::with_capacity(changes.len());
    let mut deeper = 0;
    let mut extra = 0;
    for c in &mut changes {
        match &mut c.made {
            Made::Fill { fill, .. } => {
                let mut path = c.path.clone();
                path.push('/');
                pointer::push_escaped(&mut path, &fill.name);
                repairs.push(fill.filling.at(path));
                deeper = deeper.max(fill.depth);
                extra += fill.member.len() + 1;
            }
            Made::Repaired { json, depth, log, .. } => {
                for mut r in log.drain(..) {
                    relocate(&mut r, &c.path);
                    repairs.push(r);
                }
                deeper = deeper.max(*depth);
                extra += json.len();
            }
        }
    }
    // In text order; an object's own fills keep their order.
    changes.sort_by_key(|c| c.at);
    let mut out = String::with_capacity(text.len() + extra);
    let mut from = 0;
    for c in &changes {
        out.push_str(text.get(from..c.at).unwrap_or_default());
        match &c.made {
            Made::Fill { fill, comma } => {
                if *comma {
                    out.push(',');
                }
                out.push_str(&fill.member);
            }
            Made::Repaired { json, .. } => out.push_str(json),
        }
        from = c.end;
    }
    out.push_str(text.get(from..).unwrap_or_default());
    (out, repairs, deeper)
}

/// Move a repair logged at a path relative to a scalar under the scalar's
/// own path (its message names the path first, as the repair pass writes it).
fn relocate(r: &mut Repair, under: &str) {
    if under.is_empty() {
        return;
    }
    let what = r.message.split_once(": ").map_or("", |(_, what)| what).to_owned();
    let mut path = under.to_owned();
    path.push_str(&r.path);
    r.message = format!("{}: {what}", display_path(&path));
    r.path = path;
}

struct SinglePass<'c, 't> {
    nodes: &'c [Node],
    plans: &'c [Plan],
    p: Parser<'t>,
    max_depth: usize,
    /// Most repairs the contract allows (`Limits::max_repairs`): past it
    /// the pass stands aside, so the full path refuses.
    max_repairs: usize,
    /// Repairs counted so far (see [`Change::made`]).
    made: usize,
    /// Changes made so far, in the order the repair pass logs them.
    changes: Vec<Change<'c>>,
    /// Why reading stopped, when it is exactly the full path reader's error.
    error: Option<ReadError>,
    /// See [`Vouched::verbatim`].
    verbatim: bool,
    /// Where a doubt in a member of the root object arose (see [`Resume`]).
    resume: Option<Resume<'t>>,
}

/// Where a report may take up the reading of a reply the single pass
/// doubted: the root object (node `node`) was read without a problem up to
/// the member at `at` (or, `closing`, up to its closing brace at `at`),
/// with these members met. Everything before is valid, so the report has
/// nothing to say about it but what the object's own keywords say at the
/// end (required properties), which the state carries.
pub(crate) struct Resume<'t> {
    pub(super) node: NodeId,
    pub(super) at: usize,
    pub(super) closing: bool,
    pub(super) seen: Seen,
    pub(super) others: Others<'t>,
    pub(super) members: u64,
    pub(super) required_seen: usize,
    pub(super) next: usize,
    /// The repairs the single pass counted before `at` (see [`Change::made`]).
    pub(super) made: usize,
}

/// An object member's key: the name declared next, met as raw bytes, or a
/// key as read (borrowed from the text unless it held an escape).
pub(super) enum Key<'c, 't> {
    Declared(&'c str),
    Read(Cow<'t, str>),
}

impl<'t> Key<'_, 't> {
    pub(super) fn as_str(&self) -> &str {
        match self {
            Self::Declared(name) => name,
            Self::Read(key) => key,
        }
    }

    /// The key, to keep (borrowed from the text where it can be).
    pub(super) fn to_cow(&self) -> Cow<'t, str> {
        match self {
            Self::Declared(name) => Cow::Owned((*name).to_owned()),
            Self::Read(key) => key.clone(),
        }
    }
}

/// A member's key, and where it stands among the declared properties, its
/// node, and whether it is required (none: undeclared).
pub(super) type Member<'c, 't> = (Key<'c, 't>, Option<(usize, NodeId, bool)>);

/// An object member's key and its colon (white space before the key
/// skipped), looked up: where it stands among the declared properties, its
/// node, and whether it is required. Replies mostly list members in the
/// contract's order, so the name declared at `next` is tried as raw bytes
/// before a key is read.
// Always inlined: a call per member, returning a key and a possible error, costs 2 % of a check.
#[inline(always)]
pub(super) fn member_key<'c, 't>(
    p: &mut Parser<'t>,
    index: &'c PropertyIndex,
    next: usize,
) -> Result<Member<'c, 't>, ReadError> {
    if p.peek() != Some(b'"') {
        return Err(p.expected(KEY));
    }
    let member = match index.plain_at(next).filter(|(name, _, _)| p.quoted(name)) {
        Some((name, id, required)) => (Key::Declared(name), Some((next, id, required))),
        None => {
            let key = p.string_cow()?;
            let found = index.position(&key);
            (Key::Read(key), found)
        }
    };
    p.colon()?;
    Ok(member)
}

/// Which declared properties an object has had (by position), to refuse a
/// repeat without building a map.
pub(super) enum Seen {
    Few(u64),
    Many(Vec<bool>),
}

impl Seen {
    pub(super) fn new(declared: usize) -> Self {
        if declared <= 64 {
            Self::Few(0)
        } else {
            Self::Many(vec![false; declared])
        }
    }

    /// Forget `i` (a member taken back).
    pub(super) fn remove(&mut self, i: usize) {
        match self {
            Self::Few(bits) => *bits &= !1u64.checked_shl(u32::try_from(i).unwrap_or(u32::MAX)).unwrap_or(0),
            Self::Many(seen) => {
                if let Some(s) = seen.get_mut(i) {
                    *s = false;
                }
            }
        }
    }

    /// Mark `i` seen; false when it already was.
    #[inline]
    pub(super) fn insert(&mut self, i: usize) -> bool {
        match self {
            Self::Few(bits) => {
                let bit = 1u64.checked_shl(u32::try_from(i).unwrap_or(u32::MAX)).unwrap_or(0);
                let fresh = *bits & bit == 0;
                *bits |= bit;
                fresh
            }
            Self::Many(seen) => seen.get_mut(i).is_some_and(|s| !std::mem::replace(s, true)),
        }
    }

    pub(super) fn contains(&self, i: usize) -> bool {
        match self {
            Self::Few(bits) => {
                1u64.checked_shl(u32::try_from(i).unwrap_or(u32::MAX)).is_some_and(|bit| bits & bit != 0)
            }
            Self::Many(seen) => seen.get(i).copied().unwrap_or(false),
        }
    }
}

/// The undeclared keys of an object, to refuse a repeat: a short list,
/// hashed once it grows (a free-form map can hold a million keys).
#[derive(Default)]
pub(super) struct Others<'t> {
    few: Vec<Cow<'t, str>>,
    many: HashSet<Cow<'t, str>>,
}

/// Above this many undeclared keys, look them up by hash.
const OTHERS_SCAN_LIMIT: usize = 16;

impl<'t> Others<'t> {
    /// Forget `key` (a member taken back).
    pub(super) fn remove(&mut self, key: &str) {
        self.few.retain(|k| k != key);
        self.many.remove(key);
    }

    /// Note `key`; false when it was already there.
    pub(super) fn insert(&mut self, key: Cow<'t, str>) -> bool {
        if self.many.is_empty() {
            if self.few.contains(&key) {
                return false;
            }
            if self.few.len() < OTHERS_SCAN_LIMIT {
                self.few.push(key);
                return true;
            }
            self.many.extend(self.few.drain(..));
        }
        self.many.insert(key)
    }
}

impl<'c, 't> SinglePass<'c, 't> {
    /// Check the value at the reader's position for node `id`, enclosed in
    /// `depth` containers.
    fn value(&mut self, mut id: NodeId, depth: usize) -> Pass<()> {
        let mut plan = self.plans.get(id).ok_or(Stop::Unread)?;
        if let Read::Alias(target) = plan.read {
            id = target;
            plan = self.plans.get(id).ok_or(Stop::Unread)?;
        }
        self.p.skip_ws();
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
            (_, Some(open @ (b'{' | b'['))) => {
                // A container where the node's type allows none is doubted
                // unread: the full path reads and reports it.
                let kind = if open == b'{' { Types::OBJECT } else { Types::ARRAY };
                if self.nodes.get(id).and_then(|n| n.types).is_some_and(|t| !t.contains(kind)) {
                    return Err(Stop::Doubt);
                }
                let v = self.free(depth)?;
                self.settle(id, &v, false)
            }
            _ => {
                let start = self.p.pos;
                let scalar = self.p.scalar_ref().map_err(|e| self.unread(e))?;
                if matches!(scalar, ParsedScalar::Number(_)) && self.p.pos - start > VERBATIM_NUMBER {
                    self.verbatim = false;
                }
                match plan.scalar {
                    Scalar::Typed(types) => {
                        if types.is_some_and(|t| !t.admits_scalar(&scalar)) {
                            return Err(Stop::Doubt);
                        }
                        Ok(())
                    }
                    Scalar::Here => {
                        let settled = match &scalar {
                            // A string is checked where it stands, not copied.
                            ParsedScalar::String(text) => self.settle_string(id, text),
                            _ => self.settle(id, &scalar.to_value(), true),
                        };
                        match settled {
                            Err(Stop::Doubt) if self.nodes.get(id).is_some_and(|n| n.policy.is_some()) => {
                                self.repair_scalar(id, scalar.into_value(), start)
                            }
                            other => other,
                        }
                    }
                    Scalar::Evaluate => self.settle(id, &scalar.into_value(), false),
                }
            }
        }
    }

    fn container(&mut self, id: NodeId, depth: usize) -> Pass<()> {
        // The same bound the reader enforces: a container opens only inside the limit.
        if depth >= self.max_depth {
            // Counted as the full path's reader counts: the error is its own.
            self.error = Some(self.p.too_deep(self.max_depth));
            return Err(Stop::Unread);
        }
        let (nodes, plans) = (self.nodes, self.plans);
        let n = nodes.get(id).ok_or(Stop::Unread)?;
        match plans.get(id).map(|p| &p.read) {
            Some(Read::Object { required, fills, strip }) => self.object(id, n, *required, fills, *strip, depth),
            Some(Read::Array) => self.array(n, depth),
            _ => Err(Stop::Unread),
        }
    }

    /// A value no keyword constrains, or one an applicator must see whole:
    /// read it (the reader refuses what the full path would).
    fn free(&mut self, depth: usize) -> Pass<Value> {
        // Its numbers were not seen as written: hand on vouch's own writing.
        self.verbatim = false;
        self.p.whole(self.max_depth.saturating_sub(depth)).map_err(|e| self.unread(e))
    }

    /// A value read whole: doubted unless valid for the node and no repair
    /// would touch it. `scalar_here`: a scalar at a node without in-place
    /// applicators.
    fn settle(&self, id: NodeId, v: &Value, scalar_here: bool) -> Pass<()> {
        let n = self.nodes.get(id).ok_or(Stop::Doubt)?;
        if n.policy_below {
            let untouched = if scalar_here {
                // Only the node's own rules can apply to a scalar.
                leaves_valid_scalar_alone(n, v)
            } else {
                // One repair is enough to doubt: the probe stops there, and
                // counts a repair taken back (the full path counts it).
                let mut probe = v.clone();
                let mut r = Repairer::with_budget(self.nodes, 1);
                r.repair(id, &mut probe);
                r.made() == 0 && r.over().is_none()
            };
            if !untouched {
                return Err(Stop::Doubt);
            }
        }
        let valid = if scalar_here { is_valid_here(self.nodes, id, v) } else { is_valid(self.nodes, id, v) };
        if valid {
            Ok(())
        } else {
            Err(Stop::Doubt)
        }
    }

    /// A scalar its node's own rules would change (the node has no in-place
    /// applicators, so nothing else repairs it): repaired here, as the repair
    /// pass would, when the repair settles at once and leaves it valid; the
    /// text from `start` to the reader's position is replaced by the result.
    /// Anything else is doubted (the full path repairs, or refuses).
    fn repair_scalar(&mut self, id: NodeId, sent: Value, start: usize) -> Pass<()> {
        let mut repaired = sent;
        // Past the contract's cap on repairs, the full path refuses.
        let mut r = Repairer::with_budget(self.nodes, self.max_repairs.saturating_sub(self.made));
        r.repair(id, &mut repaired);
        if r.log.is_empty() || r.over().is_some() {
            return Err(Stop::Doubt);
        }
        // The repair pass's next round must find nothing more to do.
        let mut again = repaired.clone();
        let mut next = Repairer::new(self.nodes);
        next.repair(id, &mut again);
        if !next.log.is_empty() || again != repaired || !is_valid_here(self.nodes, id, &repaired) {
            return Err(Stop::Doubt);
        }
        let json = crate::write::value(&repaired);
        let depth = crate::contract::depth(&repaired);
        let count = r.made();
        self.made += count;
        let made = Made::Repaired { json, depth, log: r.log, made: count };
        self.changes.push(Change { path: String::new(), at: start, end: self.p.pos, made });
        Ok(())
    }

    /// A string at a node without in-place applicators, as borrowed from
    /// the reply: [`Self::settle`] without building a value.
    fn settle_string(&self, id: NodeId, text: &str) -> Pass<()> {
        let n = self.nodes.get(id).ok_or(Stop::Doubt)?;
        if (n.policy_below && !leaves_valid_string_alone(n, text)) || !is_valid_string_here(self.nodes, id, text) {
            return Err(Stop::Doubt);
        }
        Ok(())
    }

    /// Stop reading, keeping the reader's error when it is exactly the one
    /// the full path's reader gives here: a syntax error (no path, offsets
    /// in the whole text). Depth, repeats and overflow say where from the
    /// root, which a reader of one value does not know.
    #[cold]
    fn unread(&mut self, e: ReadError) -> Stop {
        if matches!(e.code, ProblemCode::NotJson | ProblemCode::Truncated) {
            self.error = Some(e);
        }
        Stop::Unread
    }

    /// Complete the paths of the fills logged since `from` with the segment
    /// of the member or item they were found in.
    fn within(&mut self, from: usize, segment: &str) {
        for f in self.changes.iter_mut().skip(from) {
            let mut full = String::with_capacity(segment.len() + 1 + f.path.len());
            full.push('/');
            pointer::push_escaped(&mut full, segment);
            full.push_str(&f.path);
            f.path = full;
        }
    }

    /// After a member or item: whether another follows.
    #[inline]
    fn another(&mut self, close: u8) -> Pass<bool> {
        match self.p.another(close) {
            Some(more) => Ok(more),
            None => Err(self.unread(self.p.not_another(close))),
        }
    }

    /// A member or item for `child` (none: unconstrained), with the fills
    /// found inside it placed under `segment`.
    // Always inlined: a call of its own in the recursion costs a frame per item.
    #[inline(always)]
    fn item(&mut self, child: Option<NodeId>, depth: usize, segment: &dyn Fn() -> String) -> Pass<()> {
        let before = self.changes.len();
        match child {
            Some(id) => self.value(id, depth + 1)?,
            None => {
                self.p.skip_ws();
                self.free(depth + 1)?;
            }
        }
        if self.changes.len() > before {
            self.within(before, &segment());
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn object(
        &mut self,
        id: NodeId,
        n: &Node,
        required: usize,
        fills: &'c [Fill],
        strip: bool,
        depth: usize,
    ) -> Pass<()> {
        self.p.pos += 1; // '{'
                         // This object's own fills come before those found inside its members,
                         // as the repair pass logs them.
        let first_fill = self.changes.len();
        let mut seen = Seen::new(n.property_index.len());
        let mut others = Others::default();
        let mut members: u64 = 0;
        let mut required_seen = 0;
        // The position of the declared property expected next.
        let mut next = 0;
        let mut more = !self.p.closes_at_once(b'}');
        while more {
            self.p.skip_ws();
            let member_at = self.p.pos;
            let (next_before, required_before) = (next, required_seen);
            let (key, found) = member_key(&mut self.p, &n.property_index, next).map_err(|e| self.unread(e))?;
            // A repeated key (also one equal only after unescaping) is the
            // full path's to refuse.
            let (child, refused) = match found {
                Some((i, id, is_required)) => {
                    if !seen.insert(i) {
                        return Err(Stop::Unread);
                    }
                    required_seen += usize::from(is_required);
                    next = i + 1;
                    (Some(id), false)
                }
                None => {
                    // An undeclared key: stripped, refused, or read as consumers would not.
                    let refused = strip
                        || (n.plain_keys && hazardous_key(key.as_str()))
                        || n.additional_properties.is_some_and(|a| self.nodes.get(a).is_none_or(|a| a.never));
                    if !refused && !others.insert(key.to_cow()) {
                        return Err(Stop::Unread);
                    }
                    (n.additional_properties, refused)
                }
            };
            let read = if refused { Err(Stop::Doubt) } else { self.item(child, depth, &|| key.as_str().to_owned()) };
            match read {
                Ok(()) => {}
                Err(Stop::Doubt) if depth == 0 => {
                    // Take this member back: a report reads it again.
                    match found {
                        _ if refused => {}
                        Some((i, _, _)) => seen.remove(i),
                        None => others.remove(key.as_str()),
                    }
                    // The repairs made in the members before this one.
                    let made = self.changes.iter().filter(|c| c.at < member_at).map(Change::made).sum();
                    self.resume = Some(Resume {
                        node: id,
                        at: member_at,
                        closing: false,
                        seen,
                        others,
                        members,
                        required_seen: required_before,
                        next: next_before,
                        made,
                    });
                    return Err(Stop::Doubt);
                }
                Err(stop) => return Err(stop),
            }
            members += 1;
            more = self.another(b'}')?;
        }
        let close = self.p.pos.saturating_sub(1);
        let mut own = Vec::new();
        // The closing brace was just read: the fills go in before it.
        let at = self.p.pos.saturating_sub(1);
        for fill in fills {
            if !seen.contains(fill.position) {
                required_seen += usize::from(fill.required);
                own.push(Change { path: String::new(), at, end: at, made: Made::Fill { fill, comma: members > 0 } });
                members += 1;
            }
        }
        if required_seen != required
            || n.min_properties.is_some_and(|min| members < min)
            || n.max_properties.is_some_and(|max| members > max)
        {
            if depth == 0 && own.is_empty() {
                // Every member read without a problem: a report starts at the close.
                let made = self.made;
                let resume =
                    Resume { node: id, at: close, closing: true, seen, others, members, required_seen, next, made };
                self.resume = Some(resume);
            }
            return Err(Stop::Doubt);
        }
        if !own.is_empty() {
            // Each fill is a repair: past the cap, the full path refuses.
            self.made += own.len();
            if self.made > self.max_repairs {
                return Err(Stop::Doubt);
            }
            let at = first_fill.min(self.changes.len());
            self.changes.splice(at..at, own);
        }
        Ok(())
    }

    fn array(&mut self, n: &Node, depth: usize) -> Pass<()> {
        self.p.pos += 1; // '['
        let mut index = 0usize;
        let mut more = !self.p.closes_at_once(b']');
        while more {
            let child = n.prefix_items.get(index).copied().or(n.items);
            self.item(child, depth, &|| index.to_string())?;
            index += 1;
            more = self.another(b']')?;
        }
        let len = index as u64;
        if n.min_items.is_some_and(|min| len < min) || n.max_items.is_some_and(|max| len > max) {
            return Err(Stop::Doubt);
        }
        Ok(())
    }
}
