//! Checking while reading: one pass over the bytes, directed by the
//! contract, fed the reply as it comes.
//!
//! The contract is known before the reply arrives, so a reply can be
//! checked as it is read, the way serde's typed deserialization works: at
//! each object the key is looked up in the compiled node's property table
//! and the member is checked where it stands. No generic tree is built: an
//! accepted reply *is* its output, the JSON text vouch vouched for, and its
//! `Value` is read from that text only when someone asks for it
//! ([`crate::Accepted::value`]). A string is copied only where a keyword
//! looks at it, and a subtree only where an applicator (`anyOf`, `not`…)
//! must see it whole.
//!
//! The pass is a push reader: containers live on an explicit stack, and a
//! token cut off by the end of what has come (a string, a number, a
//! literal) is taken up where it stopped when more comes, so a reply fed
//! one byte at a time is read once, like one fed whole. Feeding the whole
//! reply at once is [`crate::Contract::check`]; [`crate::StreamCheck`]
//! feeds it piece by piece.
//!
//! The pass decides three things. It *accepts* only what it is sure of,
//! making only the changes the repair pass would make where they stand
//! alone: a missing property with a default is written into the text as its
//! object's last member, and a scalar its node's own rules change is
//! repaired in place when one more round changes nothing — each logged
//! exactly as the repair pass logs it. It *refuses* only what no completion
//! of the text can save (a failure at a node no repair above or below can
//! change, with no unwrap declared; a read error no unwrap is tried for):
//! that is what lets a stream stop early, and `tests/streaming.rs` holds it
//! to exactness with a search for an accepted completion. Everything else
//! it *doubts*: the full path reads and judges the reply.
//! `tests/single_pass.rs` holds the verdicts to the full path's byte for
//! byte on every reply we have.

use std::collections::HashSet;

use serde_json::Value;

use crate::check;
use crate::check::{is_valid, is_valid_here, is_valid_string_here};
use crate::node::{hazardous_key, Node, NodeId, Types};
use crate::pointer;
use crate::problem::{display_path, excerpt_text, Problem, ProblemCode, Repair};
use crate::read::parser::{
    is_ws, plain_run_end, read_value, skip_ws, Integers, Parser, ReadError, Scalar as ParsedScalar, COLON, KEY,
};
use crate::read::Unwrap;
use crate::repair::{
    default_of, leaves_every_valid_string_alone, leaves_valid_scalar_alone, leaves_valid_string_alone, Filling,
    Repairer,
};

/// How the single pass reads a value for one node, chosen once per contract.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    pub(super) read: Read,
    /// How a scalar is checked at this node.
    pub(super) scalar: Scalar,
    /// What a string's prefix can decide here (its node's own keywords).
    watch: Option<WatchPlan>,
    /// The whole numbers the node allows, where its keywords are nothing
    /// but a type and bounds: a small integer is judged on its digits.
    pub(super) range: Option<IntRange>,
    /// The bounds a node sets on numbers, where they and `type` are all it
    /// says (see [`NumberBounds`]); for the hand-over's one walk.
    pub(super) bounds: Option<NumberBounds>,
    /// Every string is valid here and left alone: only whether a string
    /// reads matters, not what it holds (its escapes need not be written out).
    any_string: bool,
}

/// Whether node `n`, checked as `scalar` says, takes every string as it
/// stands: its type admits strings, no keyword looks at their content, and
/// no repair of its policy touches a valid one.
fn takes_any_string(n: &Node, scalar: Scalar) -> bool {
    let admits = n.types.is_none_or(|t| t.contains(Types::STRING));
    match scalar {
        Scalar::Typed(_) => admits,
        Scalar::Here => check::valid_for_every_string_here(n) && leaves_every_valid_string_alone(n),
        Scalar::Evaluate => false,
    }
}

/// The integers from `min` to `max` (both allowed).
#[derive(Debug, Clone, Copy)]
pub(super) struct IntRange {
    min: i64,
    max: i64,
}

impl IntRange {
    /// The range of a node whose only keywords are a `type` admitting
    /// integers and bounds that are whole numbers (none: another keyword,
    /// or a bound with a fraction, which the evaluator decides). A policy
    /// may stand beside them: no repair touches an integer in range
    /// (see [`leaves_valid_scalar_alone`]).
    fn of(n: &Node, scalar: Scalar) -> Option<Self> {
        if !matches!(scalar, Scalar::Here) || n.enumeration.is_some() || n.constant.is_some() {
            return None;
        }
        let types = n.types?;
        if !types.contains(Types::INTEGER) && !types.contains(Types::NUMBER) {
            return None;
        }
        let mut rest = n.clone();
        (rest.minimum, rest.maximum, rest.exclusive_minimum, rest.exclusive_maximum) = (None, None, None, None);
        if !rest.only_choice_keywords() || rest.reference.is_some() {
            return None;
        }
        // A bound as a whole number within ±2^53 (where a double is exact), or give up.
        let whole = |b: &serde_json::Number| -> Option<i64> {
            const EXACT: i64 = 1 << 53;
            let v = match b.as_i64() {
                Some(v) => v,
                None => {
                    let f = b.as_f64()?;
                    if f.fract() != 0.0 || f.abs() > EXACT as f64 {
                        return None;
                    }
                    f as i64
                }
            };
            (v.abs() <= EXACT).then_some(v)
        };
        let mut range = Self { min: i64::MIN, max: i64::MAX };
        if let Some(b) = &n.minimum {
            range.min = range.min.max(whole(b)?);
        }
        if let Some(b) = &n.exclusive_minimum {
            range.min = range.min.max(whole(b)? + 1);
        }
        if let Some(b) = &n.maximum {
            range.max = range.max.min(whole(b)?);
        }
        if let Some(b) = &n.exclusive_maximum {
            range.max = range.max.min(whole(b)? - 1);
        }
        Some(range)
    }

    /// Whether the number at `bytes[start..]` is a plain integer of at most
    /// [`VERBATIM_NUMBER`] bytes, ended by a byte that cannot continue it,
    /// within the range: then its end (none: the reader and the evaluator decide).
    #[inline]
    pub(super) fn holds(self, bytes: &[u8], start: usize) -> Option<usize> {
        let rest = bytes.get(start..)?;
        let negative = rest.first() == Some(&b'-');
        let digits = rest.get(usize::from(negative)..)?;
        let len = digits.iter().take(VERBATIM_NUMBER + 1).take_while(|b| b.is_ascii_digit()).count();
        let end = usize::from(negative) + len;
        let first = *digits.first()?;
        if len == 0 || end > VERBATIM_NUMBER || (first == b'0' && len > 1) {
            return None;
        }
        if matches!(rest.get(end), None | Some(b'.' | b'e' | b'E')) {
            return None;
        }
        let magnitude = digits.get(..len)?.iter().fold(0i64, |v, d| v * 10 + i64::from(d - b'0'));
        let value = if negative { -magnitude } else { magnitude };
        (self.min <= value && value <= self.max).then_some(start + end)
    }
}

/// A node's bounds on numbers as doubles, where the node says nothing but
/// a `type` admitting every number and bounds, each a double or an integer
/// a double holds exactly: a number that is a double (or an integer it
/// holds exactly) is then compared with them as the evaluator compares the
/// two values, exactly.
#[derive(Debug, Clone, Copy)]
pub(super) struct NumberBounds {
    /// (bound, exclusive)
    min: [Option<(f64, bool)>; 2],
    max: [Option<(f64, bool)>; 2],
}

/// A number as a double that is exactly its value (none: an integer past ±2^53).
pub(super) fn exact_double(n: &serde_json::Number) -> Option<f64> {
    const EXACT: u64 = 1 << 53;
    if let Some(u) = n.as_u64() {
        return (u <= EXACT).then_some(u as f64);
    }
    if let Some(i) = n.as_i64() {
        return (i.unsigned_abs() <= EXACT).then_some(i as f64);
    }
    n.as_f64()
}

impl NumberBounds {
    fn of(n: &Node, scalar: Scalar) -> Option<Self> {
        if !matches!(scalar, Scalar::Here) || n.enumeration.is_some() || n.constant.is_some() {
            return None;
        }
        if !n.types?.contains(Types::NUMBER) {
            return None;
        }
        let mut rest = n.clone();
        (rest.minimum, rest.maximum, rest.exclusive_minimum, rest.exclusive_maximum) = (None, None, None, None);
        if !rest.only_choice_keywords() || rest.reference.is_some() {
            return None;
        }
        let bound = |b: &Option<serde_json::Number>, exclusive: bool| -> Option<Option<(f64, bool)>> {
            match b {
                None => Some(None),
                Some(b) => exact_double(b).map(|f| Some((f, exclusive))),
            }
        };
        Some(Self {
            min: [bound(&n.minimum, false)?, bound(&n.exclusive_minimum, true)?],
            max: [bound(&n.maximum, false)?, bound(&n.exclusive_maximum, true)?],
        })
    }

    /// Whether `v` (exactly a number's value) is within the bounds.
    pub(super) fn hold(self, v: f64) -> bool {
        self.min.iter().flatten().all(|&(b, exclusive)| if exclusive { v > b } else { v >= b })
            && self.max.iter().flatten().all(|&(b, exclusive)| if exclusive { v < b } else { v <= b })
    }
}

/// The prefix checks a string at a node gets, worked out once per contract
/// (see [`Watch`]).
#[derive(Debug, Clone, Copy)]
struct WatchPlan {
    max_chars: Option<u64>,
    /// The `enum`/`const` values that are strings, by position (at most 64).
    members: u64,
    choices: bool,
}

impl WatchPlan {
    fn of(n: &Node, scalar: Scalar) -> Option<Self> {
        // Only a node whose own keywords decide a string (no applicator beside).
        if !matches!(scalar, Scalar::Here | Scalar::Typed(_)) {
            return None;
        }
        // Past 64 values the prefix is not watched (the whole string decides).
        let choices = choices_of(n).filter(|c| c.len() <= 64);
        let members = choices
            .map_or(0, |c| c.iter().enumerate().filter(|(_, v)| v.is_string()).fold(0u64, |m, (i, _)| m | (1 << i)));
        // A node with enum or const reports only that failure: its length is not a problem of its own.
        let max_chars = if n.enumeration.is_some() || n.constant.is_some() { None } else { n.max_length };
        (choices.is_some() || max_chars.is_some()).then_some(Self { max_chars, members, choices: choices.is_some() })
    }
}

/// A node's `enum` values, or its `const` as one.
fn choices_of(n: &Node) -> Option<&[Value]> {
    n.enumeration.as_deref().or(n.constant.as_ref().map(std::slice::from_ref))
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
    nodes
        .iter()
        .map(|n| {
            let scalar = scalar_plan(n);
            Plan {
                read: plan(nodes, n),
                scalar,
                watch: WatchPlan::of(n, scalar),
                range: IntRange::of(n, scalar),
                bounds: NumberBounds::of(n, scalar),
                any_string: takes_any_string(n, scalar),
            }
        })
        .collect()
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
            let depth = crate::read::depth(default);
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
    /// The repaired scalar as JSON, how deep it nests, and the repair
    /// pass's log for it (paths relative to the scalar).
    Repaired { json: String, depth: usize, log: Vec<Repair> },
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

/// Which declared properties an object has had (by position), to refuse a
/// repeat without building a map.
enum Seen {
    Few(u64),
    Many(Vec<bool>),
}

impl Seen {
    fn new(declared: usize) -> Self {
        if declared <= 64 {
            Self::Few(0)
        } else {
            Self::Many(vec![false; declared])
        }
    }

    /// Mark `i` seen; false when it already was.
    #[inline]
    fn insert(&mut self, i: usize) -> bool {
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

    fn contains(&self, i: usize) -> bool {
        match self {
            Self::Few(bits) => {
                1u64.checked_shl(u32::try_from(i).unwrap_or(u32::MAX)).is_some_and(|bit| bits & bit != 0)
            }
            Self::Many(seen) => seen.get(i).copied().unwrap_or(false),
        }
    }
}

/// The undeclared keys of an object (or every key of one read free), to
/// refuse a repeat: a short list, hashed once it grows (a free-form map
/// can hold a million keys).
#[derive(Default)]
struct Keys {
    few: Vec<Box<str>>,
    many: HashSet<Box<str>>,
}

/// Above this many keys, look them up by hash.
const KEYS_SCAN_LIMIT: usize = 16;

impl Keys {
    /// Note `key`; false when it was already there.
    fn insert(&mut self, key: &str) -> bool {
        if self.many.is_empty() {
            if self.few.iter().any(|k| &**k == key) {
                return false;
            }
            if self.few.len() < KEYS_SCAN_LIMIT {
                self.few.push(key.into());
                return true;
            }
            self.many.extend(self.few.drain(..));
        }
        self.many.insert(key.into())
    }
}

/// Where a value is read: its node (none: no keyword constrains it), and
/// whether a failure of that node is certain to refuse the reply (no
/// unwrap declared, and nothing above can remove or replace the value).
///
/// Eight bytes, passed and stored whole: the pass writes one and reads it
/// back at once, and a wider one stalls that store's forwarding.
#[derive(Debug, Clone, Copy)]
struct Slot {
    /// The node's id, or [`NO_NODE`] (ids fit: the pass reads no arena this
    /// large, see [`SinglePass::new`]).
    node_ref: u32,
    certain: bool,
    /// No repair above can replace or drop the value: a partial may show it.
    stable: bool,
}

/// A slot no node constrains.
const NO_NODE: u32 = u32::MAX;

impl Slot {
    #[inline(always)]
    fn new(node: Option<NodeId>, certain: bool, stable: bool) -> Self {
        let node_ref = node.and_then(|id| u32::try_from(id).ok()).unwrap_or(NO_NODE);
        Self { node_ref, certain, stable }
    }

    #[inline(always)]
    fn node(self) -> Option<NodeId> {
        (self.node_ref != NO_NODE).then_some(self.node_ref as NodeId)
    }

    #[inline(always)]
    fn with_node(self, node: Option<NodeId>) -> Self {
        Self::new(node, self.certain, self.stable)
    }
}

/// What the pass expects next in the text.
#[derive(Debug, Clone, Copy)]
enum Expect {
    /// A value for this slot.
    Value(Slot),
    /// Just after `{`: a key or `}`.
    KeyOrClose,
    /// After `,` in an object: a key.
    Key,
    /// After a key: `:`.
    Colon,
    /// Just after `[`: an item or `]`.
    ItemOrClose,
    /// After a member or an item: `,` or the closing bracket.
    AfterMember,
    /// After the root value: only white space.
    End,
}

/// A token cut off by the end of what has come, taken up when more does.
enum Token<'c> {
    /// A string from `start` (its opening quote), scanned up to `scan.pos`.
    Str { start: usize, scan: StringScan<'c> },
    /// A number from `start`, scanned up to `scan.pos`.
    Number { start: usize, scan: NumberScan },
    /// `true`, `false` or `null` from `start` (its first letter `first`).
    Literal { start: usize, first: u8 },
}

/// Scanning a string for its closing quote across pieces: never reads a
/// byte twice.
struct StringScan<'c> {
    pos: usize,
    state: Escape,
    /// Prefix checks on the content (a certain slot only).
    watch: Option<Watch<'c>>,
    /// Content of a `\u` escape being read, for the watch.
    hex: u32,
    /// A high surrogate waiting for its low half.
    high: Option<u32>,
    /// A backslash was met: the content is not the text as it stands.
    escaped: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Escape {
    Plain,
    /// Just after a backslash.
    Backslash,
    /// Inside `\uXXXX`, this many hex digits to go.
    Hex(u8),
    /// After a high surrogate's escape: its low half's backslash, then its `u`.
    LowBackslash,
    LowU,
}

/// What a string's prefix already decides: a `maxLength` passed, or no
/// member of `enum`/`const` that starts with it.
struct Watch<'c> {
    max_chars: Option<u64>,
    chars: u64,
    /// The `enum` or `const` values, and which of them (by position; strings
    /// only, at most 64) the content so far is a prefix of.
    choices: Option<&'c [Value]>,
    members: u64,
    /// Bytes of content matched against them.
    matched: usize,
}

impl<'c> Watch<'c> {
    fn of(n: &'c Node, plan: WatchPlan) -> Self {
        let choices = if plan.choices { choices_of(n) } else { None };
        Self { max_chars: plan.max_chars, chars: 0, choices, members: plan.members, matched: 0 }
    }

    /// Keep the members whose next byte is `b`; false when none is.
    #[inline]
    fn push_byte(&mut self, b: u8) -> bool {
        let Some(choices) = self.choices else { return true };
        let at = self.matched;
        let mut keep = 0u64;
        let mut left = self.members;
        while left != 0 {
            let i = left.trailing_zeros() as usize;
            left &= left - 1;
            if choices.get(i).and_then(Value::as_str).is_some_and(|m| m.as_bytes().get(at) == Some(&b)) {
                keep |= 1 << i;
            }
        }
        self.members = keep;
        self.matched += 1;
        keep != 0
    }

    fn push_str(&mut self, s: &str) {
        if self.max_chars.is_some() {
            self.chars = self.chars.saturating_add(s.chars().count() as u64);
        }
        if self.choices.is_some() {
            for &b in s.as_bytes() {
                if !self.push_byte(b) {
                    return;
                }
            }
        }
    }

    fn push_char(&mut self, c: char) {
        let mut buf = [0u8; 4];
        self.push_str(c.encode_utf8(&mut buf));
    }

    /// Whether no completion of the content so far passes.
    fn refused(&self) -> bool {
        (self.choices.is_some() && self.members == 0) || self.max_chars.is_some_and(|max| self.chars > max)
    }
}

enum Scanned {
    /// The watch refused the content so far.
    Watched,
    /// The closing quote stands before `end`.
    Closed,
    /// A byte no string may hold (a control character, a bad escape): the reader says which.
    Bad,
    /// The text ended inside the string.
    Open,
}

impl<'c> StringScan<'c> {
    fn new(start: usize, watch: Option<Watch<'c>>) -> Self {
        Self { pos: start + 1, state: Escape::Plain, watch, hex: 0, high: None, escaped: false }
    }

    fn scan(&mut self, text: &str) -> Scanned {
        // A watch no content can satisfy (no member is a string) decides at the opening quote.
        if self.watch.as_ref().is_some_and(Watch::refused) {
            return Scanned::Watched;
        }
        let bytes = text.as_bytes();
        while let Some(&b) = bytes.get(self.pos) {
            match self.state {
                Escape::Plain => {
                    let run_start = self.pos;
                    let end = plain_run_end(bytes, self.pos);
                    self.pos = end;
                    if let Some(w) = &mut self.watch {
                        w.push_str(text.get(run_start..end).unwrap_or_default());
                        if w.refused() {
                            return Scanned::Watched;
                        }
                    }
                    match bytes.get(end) {
                        None => return Scanned::Open,
                        Some(b'"') => {
                            self.pos += 1;
                            return Scanned::Closed;
                        }
                        Some(b'\\') => {
                            self.pos += 1;
                            self.state = Escape::Backslash;
                            self.escaped = true;
                        }
                        Some(_) => return Scanned::Bad,
                    }
                }
                Escape::Backslash => {
                    let c = match b {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            self.pos += 1;
                            self.state = Escape::Hex(4);
                            self.hex = 0;
                            continue;
                        }
                        _ => return Scanned::Bad,
                    };
                    self.pos += 1;
                    self.state = Escape::Plain;
                    if let Some(w) = &mut self.watch {
                        w.push_char(c);
                        if w.refused() {
                            return Scanned::Watched;
                        }
                    }
                }
                Escape::LowBackslash | Escape::LowU => {
                    let expected = if self.state == Escape::LowBackslash { b'\\' } else { b'u' };
                    if b != expected {
                        return Scanned::Bad;
                    }
                    self.pos += 1;
                    self.state = if self.state == Escape::LowBackslash { Escape::LowU } else { Escape::Hex(4) };
                    self.hex = 0;
                }
                Escape::Hex(left) => {
                    let Some(d) = char::from(b).to_digit(16) else { return Scanned::Bad };
                    self.hex = self.hex * 16 + d;
                    self.pos += 1;
                    if left > 1 {
                        self.state = Escape::Hex(left - 1);
                        continue;
                    }
                    self.state = Escape::Plain;
                    let unit = self.hex;
                    let c = match self.high.take() {
                        Some(high) if (0xDC00..0xE000).contains(&unit) => {
                            char::from_u32(0x10000 + ((high - 0xD800) << 10) + (unit - 0xDC00))
                        }
                        Some(_) => return Scanned::Bad,
                        None if (0xD800..0xDC00).contains(&unit) => {
                            // The low half must follow at once.
                            self.high = Some(unit);
                            self.state = Escape::LowBackslash;
                            continue;
                        }
                        None => char::from_u32(unit),
                    };
                    match (c, &mut self.watch) {
                        (Some(c), Some(w)) => {
                            w.push_char(c);
                            if w.refused() {
                                return Scanned::Watched;
                            }
                        }
                        (Some(_), None) => {}
                        (None, _) => return Scanned::Bad,
                    }
                }
            }
        }
        Scanned::Open
    }
}

/// An open container.
enum Frame<'c> {
    Object(ObjectFrame<'c>),
    Array(ArrayFrame<'c>),
    /// A container read without its node's keywords (free, or one its node
    /// reads whole): only its grammar, keys and depth are checked while it
    /// streams; the outermost is read whole and settled when it closes.
    Free(FreeFrame),
}

struct ObjectFrame<'c> {
    id: NodeId,
    n: &'c Node,
    required: usize,
    fills: &'c [Fill],
    strip: bool,
    slot: Slot,
    start: usize,
    seen: Seen,
    /// Undeclared keys met (boxed: most objects have none, and frames move).
    others: Option<Box<Keys>>,
    members: u64,
    required_seen: usize,
    /// The position of the declared property expected next.
    next: usize,
    /// Changes before this object's own (its fills go in here, as the repair pass logs them).
    first_change: usize,
    /// The member being read.
    member: Member<'c>,
    /// The key of the member being read, when undeclared (as read).
    read_key: Option<Box<str>>,
    /// Where this object's problems start in the report.
    report_from: usize,
    /// Members read complete and valid, unchanged: (key, value start, value end), for partials.
    done: usize,
}

/// The member of an object being read.
#[derive(Default)]
struct Member<'c> {
    /// Its key when declared (the contract's own name; undeclared: the
    /// frame's `read_key`).
    declared: Option<&'c str>,
    /// Declared: its node ([`NO_NODE`] else).
    node_ref: u32,
    /// Refused outright (a closed object): reported once its value is read.
    refused: bool,
    /// Changes and doubts before it, to place its changes and tell whether it was vouched for.
    changes: usize,
    doubts: usize,
    value_start: usize,
}

impl<'c> ObjectFrame<'c> {
    /// The property declared next, when its name is plain (its content is
    /// its text): its name, position, node and whether it is required.
    /// Replies mostly list members in the contract's order, so a key is
    /// tried against it before it is looked up.
    fn next_declared(&self) -> Option<(&'c str, usize, NodeId, bool)> {
        let (name, id, required) = self.n.property_index.plain_at(self.next)?;
        Some((name, self.next, id, required))
    }

    /// The key of the member being read.
    fn key(&self) -> &str {
        match self.member.declared {
            Some(name) => name,
            None => self.read_key.as_deref().unwrap_or_default(),
        }
    }
}

struct ArrayFrame<'c> {
    n: &'c Node,
    slot: Slot,
    start: usize,
    /// Items complete so far.
    index: usize,
    changes: usize,
    doubts: usize,
    value_start: usize,
    /// Where its items read complete and valid, unchanged, from the first,
    /// start in the pass's list of them.
    done: usize,
    /// Every item so far is in `done`.
    clean: bool,
    /// Where this array's problems start in the report.
    report_from: usize,
}

struct FreeFrame {
    object: bool,
    keys: Keys,
    /// For the outermost: the slot it is read for, and where it starts.
    settle: Option<(Slot, usize)>,
    /// Items so far (an array).
    index: usize,
    /// The key whose value is being read (an object).
    key: String,
}

/// A directed container whose own keywords failed as it closed: what
/// judging it takes once its frame is gone.
#[derive(Clone, Copy)]
struct Failed {
    slot: Slot,
    id: Option<NodeId>,
    start: usize,
    /// Where its problems start in the report.
    report_from: usize,
}

/// What the node's own rules do to a scalar that fails it as sent.
enum Mend {
    /// Repaired in place, for good.
    Made,
    /// No rule touches it (and the repair budget was not what stopped them).
    Nothing,
    /// A repair would apply, but not here (past the budget, or it does not
    /// settle at once): the full path decides.
    Unsure,
}

/// Why the pass stopped reading.
#[derive(Debug, Clone)]
enum Halt {
    /// Not read (not strict JSON, a repeated key, too deep, text around
    /// it), with the error the full path's reader gives where this pass
    /// found exactly that error.
    // Boxed, as below: the pass stays small (it is built per reply), and a
    // halt is rare where speed counts.
    Unread(Option<Box<ReadError>>),
    /// No completion can be accepted: these problems (certain).
    Refused(Vec<Problem>),
    /// Not JSON the full path reads, whatever follows, and no unwrap is
    /// tried for it: the full path's read problem.
    ReadRefused(Box<Problem>),
    /// Refused by a prefix where only a reply read whole as JSON is judged
    /// as it stands: read again without that (see [`SinglePass::finish`]).
    ReadAgain,
    /// A doubt, where a doubt hands the reply to the full path whatever
    /// follows (see [`SinglePass::reporting`]): the rest is not read.
    Doubted,
}

/// What the single pass found, once the reply has ended.
pub(crate) enum Outcome<'c> {
    /// Vouched for, exactly as the text stands but for the changes listed.
    Accepted(Vouched<'c>),
    /// Strict JSON, but a keyword failed or a repair would apply: the full
    /// path reads and judges it.
    Doubted,
    /// A doubt stopped the reading (see [`Halt::Doubted`]): the full path's
    /// verdict where the reply reads as JSON as it stands, else the
    /// verdict of a reading to the end.
    DoubtedEarly,
    /// Not read (see [`Halt::Unread`]): the full path reads the reply itself.
    Unread(Option<ReadError>),
    /// Certain to be refused whatever the full path finds besides: these
    /// problems (as found where reading stopped).
    Refused(Vec<Problem>),
    /// Refused for what the reader found, as the full path refuses it.
    ReadRefused(Problem),
    /// Refused with every problem, as the full path lists them (reporting).
    Reported(Vec<Problem>),
}

/// The single pass: one reading of the reply, directed by the contract,
/// fed the text as it comes (see the module docs).
pub(crate) struct SinglePass<'c> {
    nodes: &'c [Node],
    plans: &'c [Plan],
    root: NodeId,
    max_depth: usize,
    max_problems: usize,
    /// Most repairs the contract allows (`Limits::max_repairs`): past it
    /// the pass stands aside, so the full path refuses.
    max_repairs: usize,
    integers: Integers,
    /// Read errors the full path tries unwraps for are not certain.
    unwrap: Unwrap,
    pos: usize,
    expect: Expect,
    token: Option<Token<'c>>,
    stack: Vec<Frame<'c>>,
    /// Repairs counted so far (fills, and in-place repairs with those taken back).
    made: usize,
    /// Changes made so far, in the order the repair pass logs them.
    changes: Vec<Change<'c>>,
    /// See [`Vouched::verbatim`].
    verbatim: bool,
    /// How many doubts arose (a keyword failed, or a repair would apply).
    doubts: usize,
    halt: Option<Halt>,
    /// The root value was read, complete and vouched for: (start, end).
    root_done: Option<(usize, usize)>,
    /// Members and items read complete and valid, unchanged, in the open
    /// containers (each frame's from its `done` on): (key, start, end), for
    /// partials. One list for the reply: no allocation per container.
    done: Vec<(&'c str, usize, usize)>,
    /// Keep what partial values need.
    partials: bool,
    /// The text up to here is white space (Unicode's): a reply of nothing else is empty.
    blank_to: usize,
    /// Stop at the first doubt (see [`Halt::Doubted`]).
    stop_at_doubt: bool,
    /// Reporting (a whole reply, not a stream): a certain failure is listed
    /// here, in the full path's order, and the reading goes on; none: a
    /// certain failure stops the reading.
    report: Option<Vec<Problem>>,
    /// A failure certain before its report can be written (a key a closed
    /// object refuses, reported with its value): what a stream would have
    /// refused with, should the reply stop reading first.
    deferred: Option<Box<Problem>>,
    /// The report holds only if the reply reads whole as JSON (see
    /// [`Self::reporting`]).
    report_if_json: bool,
}

/// Whether two byte strings are equal: a short one (most keys) compared in
/// registers, without the call to `memcmp` slice equality makes.
#[inline(always)]
pub(crate) fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    fn word(s: &[u8], at: usize) -> u64 {
        s.get(at..at + 8).and_then(|w| w.try_into().ok()).map_or(0, u64::from_le_bytes)
    }
    fn half(s: &[u8], at: usize) -> u32 {
        s.get(at..at + 4).and_then(|w| w.try_into().ok()).map_or(0, u32::from_le_bytes)
    }
    let len = a.len();
    if len != b.len() {
        return false;
    }
    match len {
        // Overlapping reads cover every byte.
        8..=16 => word(a, 0) == word(b, 0) && word(a, len - 8) == word(b, len - 8),
        4..=7 => half(a, 0) == half(b, 0) && half(a, len - 4) == half(b, len - 4),
        0..=3 => a.iter().zip(b).all(|(x, y)| x == y),
        _ => a == b,
    }
}

/// The error the reader gives where a value's text ends in the middle.
fn cut_off(text: &str) -> ReadError {
    Parser::at(text, text.len(), Integers::Document).expected("")
}

/// The kind of value a byte opens, as a type set.
fn kind_of(b: u8) -> Option<Types> {
    Some(match b {
        b'{' => Types::OBJECT,
        b'[' => Types::ARRAY,
        b'"' => Types::STRING,
        b't' | b'f' => Types::BOOLEAN,
        b'n' => Types::NULL,
        b'-' | b'0'..=b'9' => Types::NUMBER,
        _ => return None,
    })
}

/// Whether a node of these types can hold a value of `kind`.
fn admits_kind(types: Types, kind: Types) -> bool {
    types.contains(kind) || (kind == Types::NUMBER && types.contains(Types::INTEGER))
}

/// Scanning a number for its end across pieces, by the JSON grammar: the
/// first byte that cannot continue it ends it (the reader then says whether
/// what came is a number).
#[derive(Debug, Clone, Copy)]
struct NumberScan {
    pos: usize,
    state: NumberState,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NumberState {
    Start,
    Minus,
    Zero,
    Int,
    Dot,
    Fraction,
    E,
    ExponentSign,
    Exponent,
}

impl NumberScan {
    fn new(start: usize) -> Self {
        Self { pos: start, state: NumberState::Start }
    }

    /// Scan on; true when a byte that cannot continue the number stands at `pos`.
    fn scan(&mut self, bytes: &[u8]) -> bool {
        while let Some(&b) = bytes.get(self.pos) {
            let Some(next) = self.state.then(b) else { return true };
            self.state = next;
            self.pos += 1;
        }
        false
    }
}

impl NumberState {
    /// The state after byte `b`, if it continues the number.
    #[inline]
    fn then(self, b: u8) -> Option<Self> {
        use NumberState::*;
        Some(match (self, b) {
            (Start, b'-') => Minus,
            (Start | Minus, b'0') => Zero,
            (Start | Minus, b'1'..=b'9') => Int,
            (Int, b'0'..=b'9') => Int,
            (Zero | Int, b'.') => Dot,
            (Dot | Fraction, b'0'..=b'9') => Fraction,
            (Zero | Int | Fraction, b'e' | b'E') => E,
            (E, b'+' | b'-') => ExponentSign,
            (E | ExponentSign | Exponent, b'0'..=b'9') => Exponent,
            _ => return None,
        })
    }
}

impl<'c> SinglePass<'c> {
    /// A pass for a reply to the contract with these parts.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(crate) fn new(
        nodes: &'c [Node],
        plans: &'c [Plan],
        root: NodeId,
        (max_depth, max_problems, max_repairs): (usize, usize, usize),
        integers: Integers,
        unwrap: Unwrap,
        partials: bool,
    ) -> Self {
        let certain = unwrap.is_none();
        let root_policy = nodes.get(root).and_then(|n| n.policy.as_ref()).map(|p| p.rules).unwrap_or_default();
        let slot = Slot::new(Some(root), certain, !root_policy.default_if_invalid);
        Self {
            nodes,
            plans,
            root,
            max_depth,
            max_problems,
            max_repairs,
            integers,
            unwrap,
            pos: 0,
            expect: Expect::Value(slot),
            token: None,
            // Room for most replies' nesting at once (one allocation, no growth).
            stack: Vec::with_capacity(4),
            made: 0,
            changes: Vec::new(),
            verbatim: true,
            doubts: 0,
            // A slot names its node in 32 bits: an arena past that (never
            // compiled: contracts are bounded far below) is the full path's.
            halt: (nodes.len() >= NO_NODE as usize).then_some(Halt::Unread(None)),
            root_done: None,
            // Kept for partials only (a stream): room for a reply's members at once, not four growths.
            done: if partials { Vec::with_capacity(32) } else { Vec::new() },
            partials,
            blank_to: 0,
            stop_at_doubt: false,
            report: None,
            deferred: None,
            report_if_json: false,
        }
    }

    /// Report every certain failure of a whole reply, in the full path's
    /// words and order, instead of stopping at the first.
    #[inline(always)]
    pub(crate) fn reporting(&mut self) {
        self.report = Some(Vec::new());
        // A contract with an unwrap tries it only on a reply that does not
        // read as JSON: one that reads whole is judged as it stands, so its
        // failures are certain after all, once the reading reaches the end
        // (any stop before drops them: the full path decides).
        if let Expect::Value(slot) = &mut self.expect {
            if !slot.certain && !self.unwrap.is_none() {
                slot.certain = true;
                self.report_if_json = true;
                // Then a doubt hands the reply to the full path (what was
                // reported is dropped: see `finish`), or the reply does not
                // read as JSON: the rest of the reading only says which.
                self.stop_at_doubt = true;
            }
        }
    }

    /// Where the reply is not read to the end after a doubt (see
    /// [`Halt::Doubted`]), read it all: for a reply the reader does not take
    /// as JSON as it stands, how the reading ends decides the verdict.
    pub(crate) fn keep_reading_after_doubts(&mut self) {
        self.stop_at_doubt = false;
    }

    /// Something the full path decides arose: a keyword failed where it is
    /// not certain, or a repair would apply.
    fn doubt(&mut self) {
        self.doubts += 1;
        if self.stop_at_doubt && self.halt.is_none() {
            self.halt = Some(Halt::Doubted);
        }
    }

    /// The problems that make the reply certain to be refused, once they are.
    pub(crate) fn refusal(&self) -> Option<&[Problem]> {
        match &self.halt {
            Some(Halt::Refused(problems)) => Some(problems),
            Some(Halt::ReadRefused(problem)) => Some(std::slice::from_ref(&**problem)),
            _ => None,
        }
    }

    /// Read on through `text`, the reply as far as it has come (it only
    /// ever grows: each call takes up where the last stopped).
    pub(crate) fn feed(&mut self, text: &str) {
        while self.halt.is_none() {
            if !self.step(text) {
                return;
            }
        }
    }

    /// The reply has ended: `text` is all of it.
    // By reference: the pass is not moved (a copy of it per reply).
    pub(crate) fn finish(&mut self, text: &str) -> Outcome<'c> {
        self.feed(text);
        if matches!(self.halt, Some(Halt::ReadAgain)) {
            // A failure a prefix decided, where a reply is judged as it stands
            // only once it reads as JSON (see [`Self::reporting`]): read again
            // with no keyword's failure certain, as a stream judges it, so a
            // refusal the reading comes to later (a repeated key) is found.
            let limits = (self.max_depth, self.max_problems, self.max_repairs);
            let mut again =
                SinglePass::new(self.nodes, self.plans, self.root, limits, self.integers, self.unwrap, false);
            again.report = Some(Vec::new());
            return again.finish(text);
        }
        // What the end decides is not certain of a prefix: the full path's verdict stands.
        let before_end =
            self.halt.is_some() || self.deferred.is_some() || self.report.as_ref().is_some_and(|r| !r.is_empty());
        if self.halt.is_none() {
            // What a piece's end left waiting: a number ends with the text; anything else was cut off.
            match self.token.take() {
                Some(Token::Number { start, .. }) => {
                    let slot = match self.expect {
                        Expect::Value(slot) => slot,
                        _ => FREE,
                    };
                    self.number(text, slot, start, true);
                    // What follows the number (all there is) is read as before.
                    self.feed(text);
                }
                Some(_) => self.read_error(text, cut_off(text)),
                None => {}
            }
        }
        if self.halt.is_none() && !matches!(self.expect, Expect::End) {
            self.read_error(text, cut_off(text));
        }
        match self.halt.take() {
            Some(Halt::Refused(_)) if !before_end => Outcome::Doubted,
            Some(Halt::Refused(problems)) => Outcome::Refused(problems),
            Some(Halt::ReadRefused(problem)) => Outcome::ReadRefused(*problem),
            Some(Halt::Unread(e)) => Outcome::Unread(e.map(|e| *e)),
            // Read again above.
            Some(Halt::ReadAgain) => Outcome::Doubted,
            Some(Halt::Doubted) => Outcome::DoubtedEarly,
            None if self.report_if_json && self.doubts > 0 => Outcome::Doubted,
            None if self.report.as_ref().is_some_and(|r| !r.is_empty()) => {
                let mut problems = self.report.take().unwrap_or_default();
                if self.doubts > 0 {
                    // Something the full path decides stands among them: it lists them all.
                    return Outcome::Refused(problems);
                }
                problems.truncate(self.max_problems);
                Outcome::Reported(problems)
            }
            None if self.doubts > 0 => Outcome::Doubted,
            None => Outcome::Accepted(Vouched { changes: std::mem::take(&mut self.changes), verbatim: self.verbatim }),
        }
    }

    /// One step at `pos`; false when the text ran out before it could be taken.
    fn step(&mut self, text: &str) -> bool {
        let bytes = text.as_bytes();
        if self.token.is_some() {
            return self.resume_token(text);
        }
        self.pos = skip_ws(bytes, self.pos);
        let Some(&b) = bytes.get(self.pos) else { return false };
        match self.expect {
            Expect::Value(slot) => {
                if self.stack.is_empty() && !is_ws(b) {
                    // A reply that is only white space so far, Unicode's included, may
                    // yet be an empty reply (its own refusal) or JSON: pending.
                    let from = self.blank_to.max(self.pos);
                    if text.get(from..).is_some_and(|rest| rest.chars().all(char::is_whitespace)) {
                        self.blank_to = text.len();
                        return false;
                    }
                }
                self.value(text, slot, b)
            }
            Expect::KeyOrClose | Expect::Key => {
                if matches!(self.expect, Expect::KeyOrClose) && b == b'}' {
                    self.pos += 1;
                    self.close(text);
                    return true;
                }
                if b != b'"' {
                    let e = Parser::at(text, self.pos, self.integers).expected(KEY);
                    self.read_error(text, e);
                    return true;
                }
                self.key(text)
            }
            Expect::Colon => {
                if b == b':' {
                    self.past_colon(self.pos + 1);
                } else {
                    let e = Parser::at(text, self.pos, self.integers).expected(COLON);
                    self.read_error(text, e);
                }
                true
            }
            Expect::ItemOrClose => {
                if b == b']' {
                    self.pos += 1;
                    self.close(text);
                } else {
                    self.begin_item();
                }
                true
            }
            Expect::AfterMember => {
                let close = match self.stack.last() {
                    Some(Frame::Object(_)) => b'}',
                    Some(Frame::Free(f)) if f.object => b'}',
                    _ => b']',
                };
                if b == b',' {
                    self.pos += 1;
                    self.another();
                } else if b == close {
                    self.pos += 1;
                    self.close(text);
                } else {
                    let e = Parser::at(text, self.pos, self.integers).not_another(close);
                    self.read_error(text, e);
                }
                true
            }
            Expect::End => {
                let e = Parser::at(text, self.pos, self.integers).trailing();
                self.read_error(text, e);
                true
            }
        }
    }

    fn node(&self, id: NodeId) -> Option<&'c Node> {
        self.nodes.get(id)
    }

    /// The node a slot reads as (a node that is only a `$ref` is its target).
    fn resolve(&self, id: NodeId) -> NodeId {
        match self.plans.get(id).map(|p| &p.read) {
            Some(Read::Alias(target)) => *target,
            _ => id,
        }
    }

    /// Whether a failure of node `id` in `slot` refuses the reply whatever follows.
    fn certain(&self, slot: Slot, id: NodeId) -> bool {
        slot.certain && self.node(id).is_some_and(|n| !n.repair_below)
    }

    /// A value starting at `pos` with byte `b`.
    fn value(&mut self, text: &str, slot: Slot, b: u8) -> bool {
        let id = slot.node().map(|id| self.resolve(id));
        let slot = slot.with_node(id);
        if let (Some(id), Some(kind)) = (id, kind_of(b)) {
            if let Some(types) = self.node(id).and_then(|n| n.types) {
                if !admits_kind(types, kind) {
                    if self.certain(slot, id) && self.report.is_some() {
                        // Reporting: read it whole, for the full path's words (when it
                        // reads: else the prefix decided, as a stream's would).
                        let mut p = Parser::at(text, self.pos, self.integers);
                        let room = self.max_depth.saturating_sub(self.stack.len());
                        if b == b'{' || b == b'[' {
                            // Read once: settled here as `free_value` would
                            // settle it (the same reading, done already).
                            let nested = matches!(self.stack.last(), Some(Frame::Free(_)));
                            let near_end = text.len() - self.pos <= 64;
                            if let Ok(v) = p.whole(room) {
                                if nested || near_end {
                                    return self.free_value(text, slot, b);
                                }
                                self.verbatim = false;
                                self.pos = p.pos;
                                self.settle(text, slot, &v);
                                return true;
                            }
                        } else if p.scalar_ref().is_ok() && p.pos < text.len() {
                            return self.free_value(text, slot, b);
                        }
                    }
                    if self.certain(slot, id) {
                        let problem = self.early_wrong_type(text, types, kind);
                        self.refuse(vec![problem]);
                        return true;
                    }
                    // A container where the node's type allows none is the full
                    // path's to read and report; a scalar may still be repaired.
                    if b == b'{' || b == b'[' {
                        self.doubt();
                        if self.halt.is_some() {
                            // Stopped at the doubt: not read for nothing.
                            return true;
                        }
                        return self.free_value(text, slot.with_node(None), b);
                    }
                }
            }
        }
        match id {
            None => self.free_value(text, slot, b),
            Some(id) => match (self.plans.get(id).map(|p| &p.read), b) {
                (Some(Read::Object { required, fills, strip }), b'{') => {
                    self.open_object(text, id, slot, (*required, fills, *strip))
                }
                (Some(Read::Array), b'[') => self.open_array(text, id, slot),
                (_, b'{' | b'[') => self.free_value(text, slot, b),
                _ => self.scalar(text, slot, b),
            },
        }
    }

    /// A directed object opening at `pos`.
    // Kept out of `value`, so that a scalar's step does not pay for the
    // registers a frame's building takes.
    #[inline(never)]
    fn open_object(
        &mut self,
        text: &str,
        id: NodeId,
        slot: Slot,
        (required, fills, strip): (usize, &'c [Fill], bool),
    ) -> bool {
        if !self.open(text) {
            return true;
        }
        let Some(n) = self.node(id) else { return self.unread_here() };
        let (first_change, done_from) = (self.changes.len(), self.done.len());
        self.stack.push(Frame::Object(ObjectFrame {
            id,
            n,
            required,
            fills,
            strip,
            slot,
            start: self.pos,
            seen: Seen::new(n.property_index.len()),
            others: None,
            members: 0,
            required_seen: 0,
            next: 0,
            first_change,
            member: Member::default(),
            read_key: None,
            done: done_from,
            report_from: self.report.as_ref().map_or(0, Vec::len),
        }));
        self.pos += 1;
        self.expect = Expect::KeyOrClose;
        true
    }

    /// A directed array opening at `pos`.
    #[inline(never)]
    fn open_array(&mut self, text: &str, id: NodeId, slot: Slot) -> bool {
        if !self.open(text) {
            return true;
        }
        let Some(n) = self.node(id) else { return self.unread_here() };
        let done_from = self.done.len();
        self.stack.push(Frame::Array(ArrayFrame {
            n,
            slot,
            start: self.pos,
            index: 0,
            changes: 0,
            doubts: 0,
            value_start: 0,
            done: done_from,
            clean: true,
            report_from: self.report.as_ref().map_or(0, Vec::len),
        }));
        self.pos += 1;
        self.expect = Expect::ItemOrClose;
        true
    }

    /// [`Self::unread_here`] where nothing is returned.
    fn unread_here_void(&mut self) {
        self.report = None;
        self.halt = Some(Halt::Unread(None));
    }

    /// A stop: nothing in the arena where a node should be (never happens; fail closed).
    fn unread_here(&mut self) -> bool {
        self.unread_here_void();
        true
    }

    /// Account for one more open container at `pos`: false (and stopped) past the depth limit.
    fn open(&mut self, text: &str) -> bool {
        if self.stack.len() >= self.max_depth {
            let e = Parser::at(text, self.pos, self.integers).too_deep(self.max_depth);
            self.read_error(text, e);
            return false;
        }
        true
    }

    /// A value read whole (no keyword reads it member by member, or none
    /// constrains it). A container is read at once when it is all there;
    /// else it streams through free frames and is read when it closes.
    fn free_value(&mut self, text: &str, slot: Slot, b: u8) -> bool {
        if b != b'{' && b != b'[' {
            // A scalar is read as any is: a number longer than a reader
            // agrees on is not handed on verbatim (`scalar` sees to it).
            return self.scalar(text, slot, b);
        }
        // A container's numbers are not seen as written: hand on vouch's own writing.
        self.verbatim = false;
        let start = self.pos;
        let room = self.max_depth.saturating_sub(self.stack.len());
        // Inside a container already read free, its own close settles it all.
        // (And a container opening near the text's end is not all there:
        // it streams through free frames without a reading that must fail.)
        let nested = matches!(self.stack.last(), Some(Frame::Free(_)));
        let near_end = text.len() - start <= 64;
        let mut p = Parser::at(text, start, self.integers);
        match (!nested && !near_end).then(|| p.whole(room)) {
            Some(Ok(v)) => {
                self.pos = p.pos;
                self.settle(text, slot, &v);
                true
            }
            // Cut off, or not strict JSON: read on as it would stream (which
            // stops where the first thing wrong is, a repeated key included).
            _ => {
                if !self.open(text) {
                    return true;
                }
                self.stack.push(Frame::Free(FreeFrame {
                    object: b == b'{',
                    keys: Keys::default(),
                    settle: (!nested).then_some((slot, start)),
                    index: 0,
                    key: String::new(),
                }));
                self.pos += 1;
                self.expect = if b == b'{' { Expect::KeyOrClose } else { Expect::ItemOrClose };
                true
            }
        }
    }

    /// A scalar at `pos` (first byte `b`).
    fn scalar(&mut self, text: &str, slot: Slot, b: u8) -> bool {
        let start = self.pos;
        match b {
            b'"' => {
                // Where every string stands, its content is not needed: only
                // whether it reads (its escapes are not written out).
                let any = match slot.node() {
                    Some(id) => self.plans.get(id).is_some_and(|p| p.any_string),
                    None => true,
                };
                // Most strings: no escape, and closed (whatever follows, they stand as read).
                let mut p = Parser::at(text, start, self.integers);
                if let Some(s) = p.plain_string() {
                    self.pos = p.pos;
                    if any {
                        self.after_value(text);
                    } else {
                        self.string_done(text, slot, s, start);
                    }
                    return true;
                }
                // Where the text ends before any quote, the string is cut off: no reader needed.
                // (Looked for only near the text's end: a whole reply pays nothing.)
                let rest = text.as_bytes().get(start + 1..).unwrap_or_default();
                let cut = rest.len() <= 64 && !rest.contains(&b'"');
                if any && !cut {
                    let mut p = Parser::at(text, start, self.integers);
                    if p.skip_string().is_ok() {
                        self.pos = p.pos;
                        self.after_value(text);
                        return true;
                    }
                }
                let mut p = Parser::at(text, start, self.integers);
                match (!cut).then(|| p.string_cow()) {
                    // Whole and strict: its node decides (a prefix could only have decided the same).
                    Some(Ok(s)) => {
                        self.pos = p.pos;
                        self.string_done(text, slot, &s, start);
                        true
                    }
                    Some(Err(e)) if e.code != ProblemCode::Truncated && self.watch_of(slot).is_none() => {
                        self.read_error(text, e);
                        true
                    }
                    // Cut off, or not strict JSON further on: scanned as it would stream, so
                    // the byte that decides it (a prefix no member starts, a `maxLength` passed,
                    // the byte no string may hold) is the same however the reply came.
                    _ => {
                        let watch = self.watch_of(slot);
                        self.token = Some(Token::Str { start, scan: StringScan::new(start, watch) });
                        self.resume_token(text)
                    }
                }
            }
            b'-' | b'0'..=b'9' => {
                // A small integer in a plain range: its digits decide (no reader, no value).
                let range = slot.node().and_then(|id| self.plans.get(id)).and_then(|p| p.range);
                if let Some(end) = range.and_then(|r| r.holds(text.as_bytes(), start)) {
                    self.pos = end;
                    self.after_value(text);
                    return true;
                }
                // Read at once when a byte stands after it (the reader ends a number where
                // the grammar does); else scanned, to be taken up when more comes.
                let mut p = Parser::at(text, start, self.integers);
                match p.scalar_ref() {
                    Ok(scalar) if p.pos < text.len() => {
                        self.pos = p.pos;
                        if self.pos - start > VERBATIM_NUMBER {
                            self.verbatim = false;
                        }
                        self.scalar_done(text, slot, scalar, start);
                        return true;
                    }
                    // A syntax error inside it stands whatever follows (a number too
                    // precise or too large is known only once it ends).
                    Err(e) if e.code == ProblemCode::NotJson && e.offset < text.len() => {
                        self.read_error(text, e);
                        return true;
                    }
                    _ => {}
                }
                let mut scan = NumberScan::new(start);
                if !scan.scan(text.as_bytes()) {
                    self.pos = scan.pos;
                    self.token = Some(Token::Number { start, scan });
                    return false;
                }
                self.number(text, slot, start, false);
                true
            }
            _ => self.literal(text, slot, start),
        }
    }

    /// The prefix checks for a string in `slot`, where a failure is certain.
    fn watch_of(&self, slot: Slot) -> Option<Watch<'c>> {
        slot.node().filter(|&id| self.certain(slot, id)).and_then(|id| self.watch(id))
    }

    /// The prefix checks for a string at node `id`, if any could decide.
    fn watch(&self, id: NodeId) -> Option<Watch<'c>> {
        let plan = self.plans.get(id)?.watch?;
        Some(Watch::of(self.node(id)?, plan))
    }

    fn literal(&mut self, text: &str, slot: Slot, start: usize) -> bool {
        let rest = text.as_bytes().get(start..).unwrap_or_default();
        // Most literals stand whole: taken as bytes, without the reader (which
        // reads exactly these bytes, and what follows is the next step's).
        let whole = match rest.first() {
            Some(b't') if rest.starts_with(b"true") => Some((4, ParsedScalar::Bool(true))),
            Some(b'f') if rest.starts_with(b"false") => Some((5, ParsedScalar::Bool(false))),
            Some(b'n') if rest.starts_with(b"null") => Some((4, ParsedScalar::Null)),
            _ => None,
        };
        if let Some((len, scalar)) = whole {
            self.pos = start + len;
            // Where the node's type alone decides and admits it, that is all.
            let typed = slot.node().and_then(|id| self.plans.get(id)).map(|p| p.scalar);
            if let Some(Scalar::Typed(types)) = typed {
                if types.is_none_or(|t| t.admits_scalar(&scalar)) {
                    self.after_value(text);
                    return true;
                }
            }
            self.scalar_done(text, slot, scalar, start);
            return true;
        }
        // A literal's first letters and the text's end: wait for the rest.
        if rest.len() < 5
            && [&b"true"[..], b"false", b"null"].iter().any(|w| w.len() > rest.len() && w.starts_with(rest))
        {
            self.token = Some(Token::Literal { start, first: text.as_bytes().get(start).copied().unwrap_or(b'n') });
            self.pos = text.len();
            return false;
        }
        let mut p = Parser::at(text, start, self.integers);
        match p.scalar_ref() {
            Ok(scalar) => {
                self.pos = p.pos;
                self.scalar_done(text, slot, scalar, start);
                true
            }
            Err(e) if e.code == ProblemCode::Truncated => {
                self.token = Some(Token::Literal { start, first: text.as_bytes().get(start).copied().unwrap_or(b'n') });
                self.pos = text.len();
                false
            }
            Err(e) => {
                self.read_error(text, e);
                true
            }
        }
    }

    /// A number from `start` whose end is known (a byte after it, or the text's end at `finish`).
    fn number(&mut self, text: &str, slot: Slot, start: usize, at_end: bool) {
        let mut p = Parser::at(text, start, self.integers);
        match p.scalar_ref() {
            Ok(scalar) => {
                self.pos = p.pos;
                if self.pos - start > VERBATIM_NUMBER {
                    self.verbatim = false;
                }
                self.scalar_done(text, slot, scalar, start);
            }
            Err(e) => {
                let e = if at_end || e.code != ProblemCode::Truncated { e } else { cut_off(text) };
                self.read_error(text, e);
            }
        }
    }

    /// Whether one more byte `b`, making the text `len` bytes long, only
    /// extends the open string (plain ASCII, not a quote, backslash or
    /// control character, within a `maxLength` being watched) or number (a
    /// digit where digits go on), or is white space where the pass waits:
    /// then it is taken here, as reading it would, and true.
    #[inline(always)]
    pub(crate) fn extends(&mut self, text: &str, b: u8) -> bool {
        let len = text.len();
        if self.halt.is_some() {
            return false;
        }
        if self.pos + 1 != len && !self.catch_up(text.get(..len - 1).unwrap_or_default()) {
            return false;
        }
        match &mut self.token {
            // The closing quote of a string with no escape (a watch on it has not refused):
            // its content is the text between the quotes.
            Some(Token::Str { start, scan })
                if b == b'"' && scan.state == Escape::Plain && !scan.escaped && scan.pos + 1 == len =>
            {
                let start = *start;
                self.token = None;
                self.pos = len;
                let content = text.get(start + 1..len - 1).unwrap_or_default();
                match self.expect {
                    Expect::Value(slot) => self.string_done(text, slot, content, start),
                    _ => self.key_done(text, content, start),
                }
                // What it decided (a refusal included) is the reading's own.
                return true;
            }
            Some(Token::Str { scan, .. }) => {
                let plain = (0x20..0x80).contains(&b) && b != b'"' && b != b'\\';
                if !plain || scan.state != Escape::Plain || scan.pos + 1 != len {
                    return false;
                }
                match &mut scan.watch {
                    None => {}
                    Some(w) if w.choices.is_none() && w.max_chars.is_some_and(|max| w.chars < max) => w.chars += 1,
                    // An enum value some member goes on with: keep those members
                    // (none: the reading refuses it, with its problem).
                    Some(w) if w.max_chars.is_none() => {
                        let before = (w.members, w.matched);
                        if !w.push_byte(b) {
                            (w.members, w.matched) = before;
                            return false;
                        }
                    }
                    Some(_) => return false,
                }
                scan.pos = len;
            }
            Some(Token::Number { start, scan }) => {
                if scan.pos + 1 != len {
                    return false;
                }
                let Some(next) = scan.state.then(b) else {
                    // The byte ends the number: the number is read, then the byte
                    // as the steps take it (as taking up the token would).
                    let start = *start;
                    let slot = match self.expect {
                        Expect::Value(slot) => slot,
                        _ => FREE,
                    };
                    self.token = None;
                    self.pos = len - 1;
                    self.number(text, slot, start, false);
                    self.feed(text);
                    return true;
                };
                scan.state = next;
                scan.pos = len;
            }
            Some(Token::Literal { start, first }) => {
                // A letter that goes on with the word; its last makes the value.
                let at = len - 1 - *start;
                let word: &[u8] = match first {
                    b't' => b"true",
                    b'f' => b"false",
                    _ => b"null",
                };
                if word.get(at) != Some(&b) {
                    return false;
                }
                if at + 1 >= word.len() {
                    let start = *start;
                    let slot = match self.expect {
                        Expect::Value(slot) => slot,
                        _ => FREE,
                    };
                    self.token = None;
                    self.literal(text, slot, start);
                    return true;
                }
            }
            None if matches!(b, b' ' | b'\t' | b'\n' | b'\r') => {}
            None if b == b'"' && matches!(self.expect, Expect::Key | Expect::KeyOrClose) => {
                let start = len - 1;
                self.token = Some(Token::Str { start, scan: StringScan::new(start, None) });
            }
            None if b == b'"' => {
                let Expect::Value(slot) = self.expect else { return false };
                let id = slot.node().map(|id| self.resolve(id));
                if id.and_then(|id| self.node(id)).and_then(|n| n.types).is_some_and(|t| !t.contains(Types::STRING)) {
                    return false;
                }
                // As `scalar` opens it: watched where its prefix can decide (a watch
                // that refuses at once is the reading's to report).
                let watch = id.filter(|&id| self.certain(slot.with_node(Some(id)), id)).and_then(|id| self.watch(id));
                if watch.as_ref().is_some_and(Watch::refused) {
                    return false;
                }
                let start = len - 1;
                self.token = Some(Token::Str { start, scan: StringScan::new(start, watch) });
            }
            None if b == b',' && matches!(self.expect, Expect::AfterMember) => match self.stack.last_mut() {
                Some(Frame::Object(_)) => self.expect = Expect::Key,
                Some(Frame::Free(f)) if f.object => {
                    f.index += 1;
                    self.expect = Expect::Key;
                }
                Some(Frame::Free(f)) => {
                    f.index += 1;
                    self.expect = Expect::Value(FREE);
                }
                // An item more within `maxItems` (past it, the reading decides).
                Some(Frame::Array(a)) if a.n.max_items.is_none_or(|max| (a.index as u64) < max) => {
                    self.pos = len;
                    self.begin_item();
                }
                _ => return false,
            },
            None if b == b'-' || b.is_ascii_digit() => {
                let Expect::Value(slot) = self.expect else { return false };
                let id = slot.node().map(|id| self.resolve(id));
                let number = |t: Types| admits_kind(t, Types::NUMBER);
                if id.and_then(|id| self.node(id)).and_then(|n| n.types).is_some_and(|t| !number(t)) {
                    return false;
                }
                let start = len - 1;
                let Some(state) = NumberState::Start.then(b) else { return false };
                self.token = Some(Token::Number { start, scan: NumberScan { pos: len, state } });
            }
            None if b == b':' && matches!(self.expect, Expect::Colon) => self.past_colon(len),
            // A literal's first letter, where its node may hold one (else the reading decides).
            None if matches!(b, b't' | b'f' | b'n') => {
                let Expect::Value(slot) = self.expect else { return false };
                let Some(id) = slot.node().map(|id| self.resolve(id)) else { return false };
                let kind = if b == b'n' { Types::NULL } else { Types::BOOLEAN };
                if self.node(id).and_then(|n| n.types).is_some_and(|t| !admits_kind(t, kind)) {
                    return false;
                }
                self.token = Some(Token::Literal { start: len - 1, first: b });
            }
            // A container opening or closing: the step it is, taken here (what
            // it decides, a refusal included, is the reading's own).
            None if b == b'{' || b == b'[' => {
                let Expect::Value(slot) = self.expect else { return false };
                self.pos = len - 1;
                self.value(text, slot, b);
                return true;
            }
            None if b == b'}' || b == b']' => {
                let closes = match (self.expect, self.stack.last()) {
                    (Expect::KeyOrClose, _) => b == b'}',
                    (Expect::ItemOrClose, _) => b == b']',
                    (Expect::AfterMember, Some(Frame::Object(_))) => b == b'}',
                    (Expect::AfterMember, Some(Frame::Free(f))) => b == if f.object { b'}' } else { b']' },
                    (Expect::AfterMember, Some(Frame::Array(_))) => b == b']',
                    _ => false,
                };
                if !closes {
                    return false;
                }
                self.pos = len;
                self.close(text);
                return true;
            }
            None => return false,
        }
        self.pos = len;
        true
    }

    /// How many more plain bytes (ASCII, not a quote, backslash or control
    /// character) the string open at the end of `text` (`len` bytes, all
    /// read) takes with the reading still pending whatever they are: the
    /// stream takes that many without a step of the pass, which scans them
    /// when the next other byte comes (once: the scan resumes where it
    /// stopped). Unlimited without a watch, what is left under a
    /// `maxLength`, none for an `enum` (each byte may decide) or no string.
    /// The plain lane took the bytes from `pos` to `to`, each one plain
    /// ASCII and within [`Self::plain_room`] of the open string: step past
    /// them as scanning them would (a watch's count of characters included),
    /// without scanning them again.
    pub(crate) fn took_plain(&mut self, to: usize) {
        if self.halt.is_some() {
            return;
        }
        if let Some(Token::Str { scan, .. }) = &mut self.token {
            if scan.state != Escape::Plain || scan.pos != self.pos || to < scan.pos {
                return;
            }
            match &mut scan.watch {
                None => {}
                Some(w) if w.choices.is_none() => w.chars = w.chars.saturating_add((to - scan.pos) as u64),
                Some(_) => return,
            }
            scan.pos = to;
            self.pos = to;
        }
    }

    pub(crate) fn plain_room(&self, len: usize) -> u64 {
        if self.halt.is_some() || self.pos != len {
            return 0;
        }
        match &self.token {
            Some(Token::Str { scan, .. }) if scan.state == Escape::Plain && scan.pos == len => match &scan.watch {
                None => u64::MAX,
                Some(w) if w.choices.is_none() => w.max_chars.map_or(u64::MAX, |max| max.saturating_sub(w.chars)),
                Some(_) => 0,
            },
            _ => 0,
        }
    }

    /// Read up to the end of `text` the bytes the stream took without a
    /// step (white space between tokens, plain content of the open
    /// string: see [`Self::plain_room`]); true when all of it was.
    #[inline(never)]
    fn catch_up(&mut self, text: &str) -> bool {
        match &mut self.token {
            None => self.pos = skip_ws(text.as_bytes(), self.pos),
            Some(Token::Str { scan, .. }) if scan.state == Escape::Plain => {
                if !matches!(scan.scan(text), Scanned::Open) {
                    return false;
                }
                self.pos = scan.pos;
            }
            _ => {}
        }
        self.pos == text.len()
    }

    /// Whether the reading waits between tokens (white space there only
    /// ever leaves it pending: the stream takes ASCII white space without
    /// a step of the pass, which skips it with the next other byte).
    pub(crate) fn between_tokens(&self) -> bool {
        self.halt.is_none() && self.token.is_none()
    }

    /// Take up a token the last piece cut off; false when the text runs out again.
    fn resume_token(&mut self, text: &str) -> bool {
        // A token still open after this piece is scanned in place: moving it out and back costs more than the scan.
        let mut scanned = None;
        match &mut self.token {
            Some(Token::Str { scan, .. }) => {
                let s = scan.scan(text);
                if matches!(s, Scanned::Open) {
                    self.pos = scan.pos;
                    return false;
                }
                scanned = Some(s);
            }
            Some(Token::Number { scan, .. }) => {
                let ended = scan.scan(text.as_bytes());
                self.pos = scan.pos;
                if !ended {
                    return false;
                }
            }
            _ => {}
        }
        let slot = match self.expect {
            Expect::Value(slot) => Some(slot),
            _ => None,
        };
        match self.token.take() {
            None => true,
            Some(Token::Number { start, mut scan }) => {
                if !scan.scan(text.as_bytes()) {
                    self.pos = scan.pos;
                    self.token = Some(Token::Number { start, scan });
                    return false;
                }
                self.number(text, slot.unwrap_or(FREE), start, false);
                true
            }
            Some(Token::Literal { start, .. }) => self.literal(text, slot.unwrap_or(FREE), start),
            Some(Token::Str { start, mut scan }) => match scanned.unwrap_or_else(|| scan.scan(text)) {
                Scanned::Watched => {
                    let problem = self.early_string(text, &scan, start);
                    self.refuse(vec![problem]);
                    true
                }
                Scanned::Open => {
                    self.pos = scan.pos;
                    self.token = Some(Token::Str { start, scan });
                    false
                }
                Scanned::Closed if !scan.escaped => {
                    // No escape: the content is the text between the quotes (no second reading).
                    self.pos = scan.pos;
                    let content = text.get(start + 1..scan.pos - 1).unwrap_or_default();
                    match slot {
                        Some(slot) => self.string_done(text, slot, content, start),
                        None => self.key_done(text, content, start),
                    }
                    true
                }
                Scanned::Closed | Scanned::Bad => {
                    let mut p = Parser::at(text, start, self.integers);
                    match p.string_cow() {
                        Ok(s) => {
                            self.pos = p.pos;
                            match slot {
                                Some(slot) => self.string_done(text, slot, &s, start),
                                None => self.key_done(text, &s, start),
                            }
                        }
                        Err(e) => self.read_error(text, e),
                    }
                    true
                }
            },
        }
    }

    /// A string value read whole.
    fn string_done(&mut self, text: &str, slot: Slot, s: &str, start: usize) {
        let Some(id) = slot.node() else {
            return self.after_value(text);
        };
        match self.plans.get(id).map(|p| p.scalar) {
            Some(Scalar::Typed(types)) => {
                if types.is_some_and(|t| !t.contains(Types::STRING)) {
                    self.fail(slot, id, &Value::String(s.to_owned()));
                }
                self.after_value(text)
            }
            Some(Scalar::Here) => {
                let n = self.node(id);
                let untouched = n.is_some_and(|n| !n.policy_below || leaves_valid_string_alone(n, s));
                if untouched && is_valid_string_here(self.nodes, id, s) {
                    return self.after_value(text);
                }
                self.scalar_failed(slot, id, Value::String(s.to_owned()), start);
                self.after_value(text)
            }
            _ => {
                self.settle(text, slot, &Value::String(s.to_owned()));
            }
        }
    }

    /// A scalar other than a string (or a string for a node read whole).
    fn scalar_done(&mut self, text: &str, slot: Slot, scalar: ParsedScalar<'_>, start: usize) {
        if let ParsedScalar::String(s) = &scalar {
            let s = s.clone();
            return self.string_done(text, slot, &s, start);
        }
        let Some(id) = slot.node() else {
            return self.after_value(text);
        };
        match self.plans.get(id).map(|p| p.scalar) {
            Some(Scalar::Typed(types)) => {
                if types.is_some_and(|t| !t.admits_scalar(&scalar)) {
                    self.fail(slot, id, &scalar.to_value());
                }
                self.after_value(text)
            }
            Some(Scalar::Here) => {
                let v = scalar.into_value();
                let n = self.node(id);
                let untouched = n.is_some_and(|n| !n.policy_below || leaves_valid_scalar_alone(n, &v));
                if untouched && is_valid_here(self.nodes, id, &v) {
                    return self.after_value(text);
                }
                self.scalar_failed(slot, id, v, start);
                self.after_value(text)
            }
            _ => self.settle(text, slot, &scalar.into_value()),
        }
    }

    /// A scalar its node's own rules do not leave alone, or that fails them:
    /// repaired here when the repair settles at once and leaves it valid
    /// (the text from `start` to `pos` replaced by the result), else doubted
    /// or refused.
    fn scalar_failed(&mut self, slot: Slot, id: NodeId, sent: Value, start: usize) {
        if self.node(id).is_some_and(|n| n.policy.is_some()) {
            match self.repair_scalar(id, sent.clone(), start) {
                Mend::Made => return,
                // No rule of the node touches it, and a scalar has nothing
                // below: it fails as it stands, certain where the slot is.
                Mend::Nothing if slot.certain && !is_valid(self.nodes, id, &sent) => {
                    let path = self.path();
                    let problems = check::problems(self.nodes, id, &sent, &path, self.max_problems);
                    if !problems.is_empty() {
                        self.certain_failure(problems);
                        return;
                    }
                }
                Mend::Nothing | Mend::Unsure => {}
            }
        }
        self.fail(slot, id, &sent);
    }

    /// Whether the scalar from `start` was repaired in place (see [`Self::scalar_failed`]).
    fn repair_scalar(&mut self, id: NodeId, sent: Value, start: usize) -> Mend {
        let mut repaired = sent;
        // Past the contract's cap on repairs, the full path refuses.
        let mut r = Repairer::with_budget(self.nodes, self.max_repairs.saturating_sub(self.made));
        r.repair(id, &mut repaired);
        if r.over().is_some() {
            return Mend::Unsure;
        }
        if r.log.is_empty() {
            return Mend::Nothing;
        }
        // The repair pass's next round must find nothing more to do.
        let mut again = repaired.clone();
        let mut next = Repairer::new(self.nodes);
        next.repair(id, &mut again);
        if !next.log.is_empty() || again != repaired || !is_valid_here(self.nodes, id, &repaired) {
            return Mend::Unsure;
        }
        let json = crate::write::value(&repaired);
        let depth = crate::read::depth(&repaired);
        let count = r.made();
        self.made += count;
        let made = Made::Repaired { json, depth, log: r.log };
        self.changes.push(Change { path: String::new(), at: start, end: self.pos, made });
        Mend::Made
    }

    /// A value read whole: vouched for when valid for the node and no
    /// repair would touch it; else doubted, or refused when certain.
    fn settle(&mut self, text: &str, slot: Slot, v: &Value) {
        if let Some(id) = slot.node() {
            let ok = self.node(id).is_some_and(|n| {
                // One repair is enough to doubt: the probe stops there.
                let untouched = !n.policy_below || {
                    let mut probe = v.clone();
                    let mut r = Repairer::with_budget(self.nodes, 1);
                    r.repair(id, &mut probe);
                    r.made() == 0 && r.over().is_none()
                };
                untouched && is_valid(self.nodes, id, v)
            });
            if !ok {
                self.fail(slot, id, v);
            }
        }
        if self.halt.is_none() {
            self.after_value(text);
        }
    }

    /// Node `id` does not vouch for `v` as it stands: refused when certain, else doubted.
    fn fail(&mut self, slot: Slot, id: NodeId, v: &Value) {
        if self.certain(slot, id) && !is_valid(self.nodes, id, v) {
            let path = self.path();
            let problems = check::problems(self.nodes, id, v, &path, self.max_problems);
            if !problems.is_empty() {
                self.certain_failure(problems);
                return;
            }
        }
        self.doubt();
    }

    fn refuse(&mut self, problems: Vec<Problem>) {
        // Reporting stops too: the full path lists what a prefix decided (merged).
        self.report = None;
        if self.report_if_json {
            // Decided by a prefix, so not known to be JSON: the full path's
            // (a doubt, where the reading stops at one: a reply that reads
            // as JSON is the full path's to judge, and one that does not is
            // read to the end, to come back here).
            self.deferred = None;
            self.halt = Some(if self.stop_at_doubt { Halt::Doubted } else { Halt::ReadAgain });
            return;
        }
        self.halt = Some(Halt::Refused(problems));
    }

    /// A failure certain where its report must wait (for the value, or the
    /// container's close): kept, the first only, for a reply that stops
    /// reading before the report is written.
    fn defer(&mut self, problem: Problem) {
        if self.deferred.is_none() {
            self.deferred = Some(Box::new(problem));
        }
    }

    /// A certain failure: reported (and the reading goes on, true), or the
    /// reading stops with it (false).
    fn certain_failure(&mut self, problems: Vec<Problem>) -> bool {
        match &mut self.report {
            Some(report) => {
                report.extend(problems);
                true
            }
            None => {
                self.refuse(problems);
                false
            }
        }
    }

    /// Stop reading at a read error: a refusal when no unwrap is tried for it.
    fn read_error(&mut self, text: &str, e: ReadError) {
        if self.report_if_json {
            // Not JSON as it stands: what was reported is the unwrap's to decide.
            self.report = None;
            self.deferred = None;
        }
        let mut report = self.report.take().unwrap_or_default();
        report.extend(self.deferred.take().map(|p| *p));
        if !report.is_empty() {
            // Failures before it are certain: listed with the full path's reading problem.
            self.halt = Some(Halt::Refused(report));
            return;
        }
        if !crate::read::refused_as_read(text, &e, self.unwrap) {
            let keep = matches!(e.code, ProblemCode::NotJson | ProblemCode::Truncated);
            self.halt = Some(Halt::Unread(keep.then(|| Box::new(e))));
            return;
        }
        // A syntax error is the reader's own to the byte; the rest (a
        // repeat, depth, a number) carry paths the reader words itself: ask it.
        if matches!(e.code, ProblemCode::NotJson | ProblemCode::Truncated | ProblemCode::TrailingText) {
            self.halt = Some(Halt::ReadRefused(crate::read::read_refusal(text, &e, self.unwrap)));
            return;
        }
        match read_value(text, 0, self.max_depth, true, self.integers) {
            // The reader's very error (a repeated key deeper in this key's
            // value comes first to a reader that checks a key once its value
            // is read: another error, left to the full path below).
            Err(full) if full.code == e.code && (e.code != ProblemCode::DuplicateKey || full.path == e.path) => {
                self.halt = Some(Halt::ReadRefused(crate::read::read_refusal(text, &full, self.unwrap)));
            }
            // What has come does not show the reader's error yet (a
            // repeated key whose value has not come whole): certain all
            // the same, and listed with whatever the full path finds.
            _ => self.halt = Some(Halt::Refused(vec![crate::read::read_problem(text, &e)])),
        }
    }

    /// The JSON Pointer of the value being read, from the open containers.
    fn path(&self) -> String {
        // Room for the usual key at each level, taken at once, rather than
        // reallocated as the path grows segment by segment.
        let mut out = String::with_capacity(self.stack.len() * 24);
        for frame in &self.stack {
            match frame {
                Frame::Object(o) => {
                    out.push('/');
                    pointer::push_escaped(&mut out, o.key());
                }
                Frame::Array(a) => {
                    out.push('/');
                    out.push_str(&a.index.to_string());
                }
                Frame::Free(f) => {
                    out.push('/');
                    if f.object {
                        pointer::push_escaped(&mut out, &f.key);
                    } else {
                        out.push_str(&f.index.to_string());
                    }
                }
            }
        }
        out
    }

    fn early_wrong_type(&self, text: &str, types: Types, kind: Types) -> Problem {
        let path = self.path();
        let names = types.describe();
        let kind_name = kind.names().next().unwrap_or("value");
        let got = text.get(self.pos..).map(excerpt_text).unwrap_or_default();
        Problem::new(ProblemCode::WrongType, &path, names.clone(), got, &format!("expected {names}, got {}", kind_name))
    }

    fn early_string(&self, text: &str, scan: &StringScan<'c>, start: usize) -> Problem {
        let path = self.path();
        let got = text.get(start..scan.pos).map(excerpt_text).unwrap_or_default();
        match &scan.watch {
            Some(Watch { choices: Some(choices), .. }) => {
                let listed = crate::check::list(choices);
                // As the evaluator words it: no member of the value's type is no answer.
                let same_type = choices.iter().any(Value::is_string);
                let code = if same_type { ProblemCode::NotAllowed } else { ProblemCode::WrongType };
                Problem::new(
                    code,
                    &path,
                    format!("one of {listed}"),
                    got.clone(),
                    &format!("{got}… starts no member of {listed}"),
                )
            }
            Some(w) => {
                let max = w.max_chars.unwrap_or(0);
                Problem::new(
                    ProblemCode::TooLong,
                    &path,
                    format!("at most {}", crate::check::plural(max, "character", "characters")),
                    got.clone(),
                    &format!("{got}… is longer than {}", crate::check::plural(max, "character", "characters")),
                )
            }
            None => Problem::new(ProblemCode::NotAllowed, &path, String::new(), got, "not allowed"),
        }
    }

    /// The slot of the member or item whose value comes next.
    // Always inlined: returned through memory, the slot costs a store-forward stall per member.
    #[inline(always)]
    fn child_slot(&self) -> Slot {
        match self.stack.last() {
            Some(Frame::Object(o)) => {
                let rules = o.n.policy.as_ref().map(|p| p.rules).unwrap_or_default();
                let declared = o.member.declared.is_some();
                let node = if declared { Some(o.member.node_ref as NodeId) } else { o.n.additional_properties };
                // An undeclared member the object strips or refuses is read free.
                let removed = !declared && self.member_refused(o);
                let certain = o.slot.certain && !rules.default_if_invalid;
                let stable = o.slot.stable && !rules.default_if_invalid && !removed;
                if removed {
                    FREE
                } else {
                    Slot::new(node, certain, stable)
                }
            }
            Some(Frame::Array(a)) => {
                let rules = a.n.policy.as_ref().map(|p| p.rules).unwrap_or_default();
                let node = a.n.prefix_items.get(a.index).copied().or(a.n.items);
                let certain = a.slot.certain && !rules.default_if_invalid && !rules.drop_invalid_items;
                let stable = a.slot.stable && !rules.default_if_invalid;
                Slot::new(node, certain, stable)
            }
            _ => FREE,
        }
    }

    /// Whether the object strips or refuses its undeclared member being read.
    fn member_refused(&self, o: &ObjectFrame<'c>) -> bool {
        o.strip
            || (o.n.plain_keys && hazardous_key(o.key()))
            || o.n.additional_properties.is_some_and(|a| self.node(a).is_none_or(|a| a.never))
    }

    fn begin_item(&mut self) {
        let (changes, doubts, pos) = (self.changes.len(), self.doubts, self.pos);
        if let Some(Frame::Array(a)) = self.stack.last_mut() {
            a.changes = changes;
            a.doubts = doubts;
            a.value_start = pos;
        }
        self.expect = Expect::Value(self.child_slot());
    }

    /// After `,`: the next member or item.
    fn another(&mut self) {
        match self.stack.last_mut() {
            Some(Frame::Object(_)) => self.expect = Expect::Key,
            Some(Frame::Free(f)) => {
                f.index += 1;
                self.expect = if f.object { Expect::Key } else { Expect::Value(FREE) };
            }
            Some(Frame::Array(a)) => {
                // Another item must follow a comma: past `maxItems` now (reporting:
                // reported at the close, with the items' problems).
                if let Some(max) = a.n.max_items {
                    if a.index as u64 + 1 > max && a.slot.certain && !a.n.repair_below {
                        let count = a.index + 1;
                        let problem = self.early_too_many_items(count, max);
                        if self.report.is_none() {
                            self.refuse(vec![problem]);
                            return;
                        }
                        self.defer(problem);
                    }
                }
                self.begin_item();
            }
            None => self.expect = Expect::End,
        }
    }

    fn early_too_many_items(&self, count: usize, max: u64) -> Problem {
        let mut path = self.path();
        // The path names the array, not the item about to come.
        if let Some(cut) = path.rfind('/') {
            path.truncate(cut);
        }
        Problem::new(
            ProblemCode::TooLong,
            &path,
            format!("at most {}", crate::check::plural(max, "item", "items")),
            format!("more than {count} items"),
            &format!("has more than {}, more than {max}", crate::check::plural(count as u64, "item", "items")),
        )
    }

    /// A key at `pos` (its opening quote).
    fn key(&mut self, text: &str) -> bool {
        let start = self.pos;
        // The name declared next is tried as raw bytes, before the key is read.
        if let Some(Frame::Object(o)) = self.stack.last() {
            if let Some((name, next, id, required)) = o.next_declared() {
                let end = start + name.len() + 2;
                let bytes = text.as_bytes();
                if bytes.get(end.saturating_sub(1)) == Some(&b'"')
                    && bytes.get(start + 1..end - 1).is_some_and(|k| same_bytes(k, name.as_bytes()))
                {
                    self.pos = end;
                    self.member_key(text, Some(name), "", Some((next, id, required)));
                    return true;
                }
            }
        }
        let mut p = Parser::at(text, start, self.integers);
        if let Some(key) = p.plain_string() {
            self.pos = p.pos;
            self.key_done(text, key, start);
            return true;
        }
        let rest = text.as_bytes().get(start + 1..).unwrap_or_default();
        if rest.len() <= 64 && !rest.contains(&b'"') {
            self.token = Some(Token::Str { start, scan: StringScan::new(start, None) });
            return self.resume_token(text);
        }
        match p.string_cow() {
            Ok(key) => {
                self.pos = p.pos;
                self.key_done(text, &key, start);
                true
            }
            Err(e) if e.code == ProblemCode::Truncated => {
                self.token = Some(Token::Str { start, scan: StringScan::new(start, None) });
                self.resume_token(text)
            }
            Err(e) => {
                self.read_error(text, e);
                true
            }
        }
    }

    /// A key read whole.
    fn key_done(&mut self, text: &str, key: &str, start: usize) {
        if let Some(Frame::Free(f)) = self.stack.last_mut() {
            let fresh = f.keys.insert(key);
            key.clone_into(&mut f.key);
            if !fresh {
                let e = ReadError {
                    code: ProblemCode::DuplicateKey,
                    offset: self.pos,
                    path: self.path(),
                    detail: format!("the key {key:?} appears twice in one object"),
                };
                // Certain whatever the value: a repeated key is refused by every reader of the reply.
                self.read_error(text, e);
                return;
            }
            self.expect = Expect::Colon;
            self.colon_at_once(text);
            return;
        }
        // A declared name is kept as the contract's own (no copy).
        let (declared, found) = match self.stack.last() {
            Some(Frame::Object(o)) => match o.next_declared() {
                Some((name, next, id, required)) if same_bytes(name.as_bytes(), key.as_bytes()) => {
                    (Some(name), Some((next, id, required)))
                }
                _ => {
                    let index = &o.n.property_index;
                    let found = index.position(key);
                    (found.and_then(|(i, _, _)| index.name_at(i)), found)
                }
            },
            _ => (None, None),
        };
        let _ = start;
        self.member_key(text, declared, key, found);
    }

    /// An object member's key, looked up.
    /// `found`: where it stands among the declared properties, its node, and
    /// whether it is required (none: undeclared).
    /// `declared`: its name, the contract's own (else `read`, as read).
    fn member_key(&mut self, text: &str, declared: Option<&'c str>, read: &str, found: Option<(usize, NodeId, bool)>) {
        let (changes, doubts) = (self.changes.len(), self.doubts);
        let Some(Frame::Object(o)) = self.stack.last_mut() else { return };
        let repeated = match found {
            Some((i, _, is_required)) => {
                if o.seen.insert(i) {
                    o.required_seen += usize::from(is_required);
                    o.next = i + 1;
                    false
                } else {
                    true
                }
            }
            None => !o.others.get_or_insert_with(Box::default).insert(read),
        };
        // Field by field: the member is rewritten in place, never moved.
        let m = &mut o.member;
        m.declared = declared;
        m.node_ref = found.and_then(|(_, id, _)| u32::try_from(id).ok()).unwrap_or(NO_NODE);
        m.refused = false;
        m.changes = changes;
        m.doubts = doubts;
        m.value_start = 0;
        if declared.is_none() {
            o.read_key = Some(read.into());
        }
        if repeated {
            let name = o.key().to_owned();
            let path = self.path();
            let e = ReadError {
                code: ProblemCode::DuplicateKey,
                offset: self.pos,
                path,
                detail: format!("the key {name:?} appears twice in one object"),
            };
            // Certain whatever the value: a repeated key is refused by every reader of the reply.
            self.read_error(text, e);
            return;
        }
        // Undeclared: stripped or refused, perhaps.
        let Some(Frame::Object(o)) = self.stack.last().filter(|_| found.is_none()) else {
            self.expect = Expect::Colon;
            return self.colon_at_once(text);
        };
        if self.member_refused(o) {
            let refused_outright = !o.strip && o.slot.certain && !o.n.repair_below;
            if refused_outright && self.report.is_some() {
                // Reported once its value is read (the full path quotes it).
                let path = self.path();
                self.defer(Problem::new(
                    ProblemCode::UnexpectedProperty,
                    &path,
                    "no other properties".into(),
                    String::new(),
                    "property not allowed by the contract",
                ));
                if let Some(Frame::Object(o)) = self.stack.last_mut() {
                    o.member.refused = true;
                }
                self.expect = Expect::Colon;
                self.colon_at_once(text);
                return;
            }
            if refused_outright {
                let path = self.path();
                let hazard = o.n.plain_keys && hazardous_key(o.key());
                let problem = if hazard {
                    Problem::new(
                        ProblemCode::UnexpectedProperty,
                        &path,
                        "no prototype-named or invisible-character keys".into(),
                        String::new(),
                        &format!(
                            "the key {:?} is read differently by JavaScript and other consumers; declare it to allow it",
                            o.key()
                        ),
                    )
                } else {
                    Problem::new(
                        ProblemCode::UnexpectedProperty,
                        &path,
                        "no other properties".into(),
                        String::new(),
                        "property not allowed by the contract",
                    )
                };
                self.refuse(vec![problem]);
                return;
            }
            // Stripped, or refused where a repair above may yet change that: the full path decides.
            self.doubt();
        }
        self.expect = Expect::Colon;
        self.colon_at_once(text);
    }

    /// After a key: when its colon has come, step past it at once (as the
    /// `Colon` step would), to the value.
    #[inline]
    fn colon_at_once(&mut self, text: &str) {
        let at = skip_ws(text.as_bytes(), self.pos);
        if text.as_bytes().get(at) == Some(&b':') {
            self.past_colon(at + 1);
        }
    }

    /// Past a key's colon (the value may start at `pos`): expect the value.
    #[inline]
    fn past_colon(&mut self, pos: usize) {
        self.pos = pos;
        if let Some(Frame::Object(o)) = self.stack.last_mut() {
            o.member.value_start = pos;
        }
        self.expect = Expect::Value(self.child_slot());
    }

    /// A value complete: book it in its container, and move on.
    fn after_value(&mut self, text: &str) {
        if self.halt.is_some() {
            return;
        }
        let (changes_now, doubts_now, pos) = (self.changes.len(), self.doubts, self.pos);
        let partials = self.partials;
        match self.stack.last_mut() {
            None => {
                if doubts_now == 0 {
                    self.root_done = Some((0, pos));
                }
                self.expect = Expect::End;
                return;
            }
            Some(Frame::Object(o)) if o.member.refused => {
                o.members += 1;
                let (object, start) = (o.id, o.member.value_start);
                let key = o.key().to_owned();
                let room = self.max_depth.saturating_sub(self.stack.len());
                let path = self.path();
                let item = Parser::at(text, start, self.integers).whole(room);
                let Ok(item) = item else { return self.unread_here_void() };
                let problems = check::member_problems(self.nodes, object, &key, &item, &path, self.max_problems);
                self.certain_failure(problems);
            }
            Some(Frame::Object(o)) => {
                o.members += 1;
                let before = o.member.changes;
                if changes_now > before {
                    let segment = o.key().to_owned();
                    within(&mut self.changes, before, &segment);
                } else if partials && doubts_now == o.member.doubts {
                    if let Some(name) = o.member.declared {
                        self.done.push((name, o.member.value_start, pos));
                    }
                }
            }
            Some(Frame::Array(a)) => {
                let before = a.changes;
                let clean = changes_now == before && doubts_now == a.doubts;
                if changes_now > before {
                    let segment = a.index.to_string();
                    within(&mut self.changes, before, &segment);
                }
                if partials && a.clean && clean {
                    self.done.push(("", a.value_start, pos));
                } else {
                    a.clean = false;
                }
                a.index += 1;
            }
            Some(Frame::Free(_)) => {}
        }
        self.expect = Expect::AfterMember;
        // A comma that has come is taken at once (as the `AfterMember` step would).
        let at = skip_ws(text.as_bytes(), self.pos);
        if text.as_bytes().get(at) == Some(&b',') {
            self.pos = at + 1;
            self.another();
        }
    }

    /// The container on top closed (its closing bracket just read).
    // Judged where it stands on the stack, then dropped there: moved out, a
    // frame's copy stalls the loads that read it back.
    fn close(&mut self, text: &str) {
        let from = match self.stack.last() {
            Some(Frame::Object(o)) => o.done,
            Some(Frame::Array(a)) => a.done,
            Some(Frame::Free(_)) => self.done.len(),
            None => return,
        };
        self.done.truncate(from);
        match self.stack.last() {
            Some(Frame::Free(f)) => {
                let settle = f.settle;
                self.drop_top();
                if let Some((slot, start)) = settle {
                    let room = self.max_depth.saturating_sub(self.stack.len());
                    match Parser::at(text, start, self.integers).whole(room) {
                        Ok(v) => self.settle(text, slot, &v),
                        Err(e) => self.read_error(text, e),
                    }
                } else {
                    self.after_value(text);
                }
            }
            Some(Frame::Array(a)) => {
                let len = a.index as u64;
                let short = a.n.min_items.is_some_and(|min| len < min);
                let long = a.n.max_items.is_some_and(|max| len > max);
                let failed = Failed { slot: a.slot, id: a.slot.node(), start: a.start, report_from: a.report_from };
                self.drop_top();
                if short || long {
                    self.container_failed(text, failed);
                    return;
                }
                self.after_value(text);
            }
            Some(Frame::Object(_)) => self.close_object(text),
            None => {}
        }
    }

    /// The `missing` problems of the required `names` (in that order) an
    /// object at node `n` closed without, none seen or filled, at most
    /// `max_problems`.
    fn missing<'n>(&self, n: &Node, names: impl Iterator<Item = &'n str>, seen: &Seen, fills: &[Fill]) -> Vec<Problem> {
        let base = self.path();
        let absent = |name: &&str| {
            n.property_index
                .position(name)
                .is_some_and(|(i, _, _)| !seen.contains(i) && !fills.iter().any(|f| f.position() == i))
        };
        names
            .filter(absent)
            .take(self.max_problems.max(1))
            .map(|name| {
                let mut path = base.clone();
                path.push('/');
                pointer::push_escaped(&mut path, name);
                check::missing(&path)
            })
            .collect()
    }

    /// Drop the frame on top, in place.
    fn drop_top(&mut self) {
        let len = self.stack.len().saturating_sub(1);
        self.stack.truncate(len);
    }

    /// A directed container whose own keywords fail as it closes (its
    /// frame already dropped): refused when certain (read whole to report
    /// it), else doubted.
    fn container_failed(&mut self, text: &str, failed: Failed) {
        let Failed { slot, id, start, report_from } = failed;
        if let Some(id) = id.filter(|&id| self.certain(slot, id)) {
            let room = self.max_depth.saturating_sub(self.stack.len());
            if let Ok(v) = Parser::at(text, start, self.integers).whole(room) {
                if !is_valid(self.nodes, id, &v) {
                    let path = self.path();
                    let problems = check::problems(self.nodes, id, &v, &path, self.max_problems);
                    if !problems.is_empty() {
                        // Reporting: the container's own problems come before its
                        // members', as the full path lists them: list it anew.
                        if let Some(report) = &mut self.report {
                            report.truncate(report_from);
                        }
                        if self.certain_failure(problems) {
                            self.after_value(text);
                        }
                        return;
                    }
                }
            }
        }
        self.doubt();
        self.after_value(text);
    }

    /// The object on top closed.
    fn close_object(&mut self, text: &str) {
        let Some(Frame::Object(o)) = self.stack.last_mut() else { return };
        let seen = std::mem::replace(&mut o.seen, Seen::Few(0));
        let (n, required, fills, first_change) = (o.n, o.required, o.fills, o.first_change);
        let failed = Failed { slot: o.slot, id: Some(o.id), start: o.start, report_from: o.report_from };
        let (mut required_seen, mut members) = (o.required_seen, o.members);
        self.drop_top();
        // The closing brace was just read: the fills go in before it.
        let at = self.pos.saturating_sub(1);
        let mut own = Vec::new();
        for fill in fills {
            if !seen.contains(fill.position()) {
                required_seen += usize::from(fill.required());
                own.push(Change { path: String::new(), at, end: at, made: Made::Fill { fill, comma: members > 0 } });
                members += 1;
            }
        }
        if required_seen != required
            || n.min_properties.is_some_and(|min| members < min)
            || n.max_properties.is_some_and(|max| members > max)
        {
            // A required property no default fills is missing whatever repairs do elsewhere.
            let rules = n.policy.as_ref().map(|p| p.rules).unwrap_or_default();
            let slot = failed.slot;
            // (Reporting: where the close can be reported in the full path's words, it is, below.)
            let reported_below = failed.id.is_some_and(|id| self.report.is_some() && self.certain(slot, id));
            // Reporting an object whose only failure is required properties
            // missing, none of its members reported: the full path lists
            // just those, in `required`'s order (no need to read it again).
            let within =
                n.min_properties.is_none_or(|min| members >= min) && n.max_properties.is_none_or(|max| members <= max);
            let none_below =
                self.deferred.is_none() && self.report.as_ref().is_some_and(|r| r.len() == failed.report_from);
            // So too where repairs below could apply but none had to (no
            // doubt so far: its members stand as read or repaired in place,
            // and its fills, within the cap, are valid by the plan).
            let settled = self.report.is_some()
                && slot.certain
                && !rules.default_if_invalid
                && self.doubts == 0
                && self.made + own.len() <= self.max_repairs;
            if (reported_below || settled) && within && none_below {
                let problems = self.missing(n, n.required.iter().map(String::as_str), &seen, fills);
                if !problems.is_empty() {
                    // Its fills are repairs the full path makes too: counted against the cap.
                    self.made += own.len();
                    if self.certain_failure(problems) {
                        self.after_value(text);
                    }
                    return;
                }
            }
            if required_seen != required && slot.certain && !rules.default_if_invalid && !reported_below {
                let required = n
                    .properties
                    .iter()
                    .map(|(name, _)| name.as_str())
                    .filter(|name| n.property_index.position(name).is_some_and(|(_, _, required)| required));
                let problems = self.missing(n, required, &seen, fills);
                if !problems.is_empty() {
                    self.refuse(problems);
                    return;
                }
            }
            self.container_failed(text, failed);
            return;
        }
        if !own.is_empty() {
            // Each fill is a repair: past the cap, the full path refuses.
            self.made += own.len();
            if self.made > self.max_repairs {
                self.doubt();
            } else {
                let at = first_change.min(self.changes.len());
                self.changes.splice(at..at, own);
            }
        }
        self.after_value(text);
    }

    /// The part of the reply read complete and vouched for so far, as a
    /// value: members (and items, from the first) whose values came whole
    /// and valid, unchanged, and of the container being read, its own part.
    pub(crate) fn partial(&self, text: &str) -> Option<Value> {
        if let Some((start, end)) = self.root_done {
            return read_value(text.get(..end)?, start, self.max_depth, false, Integers::Document).ok().map(|(v, _)| v);
        }
        let mut built: Option<Value> = None;
        let read = |start: usize, end: usize| {
            read_value(text.get(..end)?, start, self.max_depth, false, Integers::Document).ok().map(|(v, _)| v)
        };
        // Innermost first: each frame's part, with the one inside it under the member being read.
        let mut upto = self.done.len();
        for frame in self.stack.iter().rev() {
            let inner = built.take();
            let from = match frame {
                Frame::Object(o) => o.done,
                Frame::Array(a) => a.done,
                Frame::Free(_) => upto,
            };
            let done = self.done.get(from..upto).unwrap_or_default();
            upto = from;
            built = match frame {
                Frame::Object(o) if o.slot.stable => {
                    let mut map = serde_json::Map::new();
                    for (key, start, end) in done {
                        map.insert((*key).to_owned(), read(*start, *end)?);
                    }
                    if let Some(inner) = inner {
                        if let Some(name) = o.member.declared {
                            map.insert(name.to_owned(), inner);
                        }
                    }
                    Some(Value::Object(map))
                }
                Frame::Array(a) if a.slot.stable => {
                    let mut items = Vec::with_capacity(done.len() + 1);
                    for (_, start, end) in done {
                        items.push(read(*start, *end)?);
                    }
                    if let Some(inner) = inner {
                        if a.clean && done.len() == a.index {
                            items.push(inner);
                        }
                    }
                    Some(Value::Array(items))
                }
                _ => None,
            };
        }
        built
    }
}

/// The slot of a value no keyword constrains.
const FREE: Slot = Slot { node_ref: NO_NODE, certain: false, stable: false };

/// Complete the paths of the changes logged since `from` with the segment
/// of the member or item they were found in.
fn within(changes: &mut [Change<'_>], from: usize, segment: &str) {
    for f in changes.iter_mut().skip(from) {
        let mut full = String::with_capacity(segment.len() + 1 + f.path.len());
        full.push('/');
        pointer::push_escaped(&mut full, segment);
        full.push_str(&f.path);
        f.path = full;
    }
}
