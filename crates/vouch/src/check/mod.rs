//! Checking a value against the compiled nodes.
//!
//! One evaluator serves two modes. The fast mode stops at the first failure,
//! builds no path and allocates nothing; it decides acceptance. The reporting
//! mode runs only when the fast mode refuses, and lists every problem with its
//! path (up to the contract's cap). Both walk the same code, so they can never
//! disagree on validity.

use std::cell::Cell;
use std::cmp::Ordering;

use serde_json::{Map, Number, Value};

pub(crate) use crate::equal::{cmp_numbers, json_equal};
use crate::node::{hazardous_key, Node, NodeId, Types};
use crate::pointer;
use crate::problem::{display_path, excerpt, Problem, ProblemCode};

/// The evaluation state: the mode, and in reporting mode the path and problems.
pub(crate) struct Ctx {
    report: bool,
    /// Whether `path` is kept: when reporting, and in the fast contexts a
    /// reporting one opens for branches (so a hazard met there has a path).
    paths: bool,
    path: String,
    pub problems: Vec<Problem>,
    max: usize,
    /// Nested evaluations, to check the stack only every few levels.
    depth: u32,
}

impl Ctx {
    pub fn fast() -> Self {
        Self { report: false, paths: false, path: String::new(), problems: Vec::new(), max: 0, depth: 0 }
    }

    /// A fast context for testing a branch, at the same recursion depth
    /// (keeping the path when this one does).
    fn branch(&self) -> Self {
        let path = if self.paths { self.path.clone() } else { String::new() };
        Self { depth: self.depth, paths: self.paths, path, ..Self::fast() }
    }

    pub fn reporting(path: &str, max: usize) -> Self {
        // Room for a few levels of path up front: the walk grows it member by member.
        let mut owned = String::with_capacity(path.len() + 64);
        owned.push_str(path);
        Self::reporting_into(owned, max, Vec::with_capacity(4))
    }

    /// A reporting context on a path and a list the caller lends it.
    fn reporting_into(path: String, max: usize, problems: Vec<Problem>) -> Self {
        Self { report: true, paths: true, path, problems, max: max.max(1), depth: 0 }
    }

    /// Record a problem (built lazily, only when reporting). Returns whether
    /// evaluation should go on looking for more.
    fn fail(
        &mut self,
        code: ProblemCode,
        expected: impl FnOnce() -> String,
        got: &Value,
        sentence: impl FnOnce() -> String,
    ) -> bool {
        if !self.report {
            return false;
        }
        if self.problems.len() < self.max {
            // A missing value has nothing to show.
            let got = if code == ProblemCode::Missing { String::new() } else { excerpt(got) };
            self.problems.push(Problem::new(code, &self.path, expected(), got, &sentence()));
        }
        self.problems.len() < self.max
    }

    /// [`Self::fail`] with a problem built whole, from the path.
    fn fail_with(&mut self, problem: impl FnOnce(&str) -> Problem) -> bool {
        if !self.report {
            return false;
        }
        if self.problems.len() < self.max {
            self.problems.push(problem(&self.path));
        }
        self.problems.len() < self.max
    }

    fn enter(&mut self, segment: &str) -> usize {
        let len = self.path.len();
        if self.paths {
            self.path.push('/');
            pointer::push_escaped(&mut self.path, segment);
        }
        len
    }

    fn enter_index(&mut self, index: usize) -> usize {
        let len = self.path.len();
        if self.paths {
            self.path.push('/');
            self.path.push_str(&index.to_string());
        }
        len
    }

    fn leave(&mut self, len: usize) {
        self.path.truncate(len);
    }
}

/// Whether `value` satisfies node `id`, and met no consumer-safety hazard
/// anywhere on the way (not even inside `not`, `anyOf`, `oneOf`, `if`…).
pub(crate) fn is_valid(nodes: &[Node], id: NodeId, value: &Value) -> bool {
    let eval = Eval::new(nodes, value);
    eval.node(id, value, &mut Ctx::fast()) && !eval.hazard.get() && !eval.spent()
}

/// Whether `value` satisfies node `id`, without the stack check: only for
/// nodes without in-place applicators given a scalar, where nothing recurses.
pub(crate) fn is_valid_here(nodes: &[Node], id: NodeId, value: &Value) -> bool {
    let eval = Eval::new(nodes, value);
    eval.node_here(id, value, &mut Ctx::fast()) && !eval.hazard.get() && !eval.spent()
}

/// [`is_valid_here`] for a string still borrowed from the reply, at a node
/// without in-place applicators (the caller's to make sure of: the single
/// pass's `Scalar::Here` plan): no `Value` built. The same keywords as
/// `node_here` checks on a string, in the same way.
pub(crate) fn is_valid_string_here(nodes: &[Node], id: NodeId, s: &str) -> bool {
    let Some(n) = nodes.get(id) else {
        return false;
    };
    // The value is only ever shown in a report, and this is the fast mode
    // (a static: nothing to build or drop per string).
    static UNSEEN: Value = Value::Null;
    let is = |m: &Value| m.as_str().is_some_and(|m| m.len() == s.len() && m == s);
    !n.never
        && n.types.is_none_or(|t| t.contains(Types::STRING))
        && n.enumeration.as_ref().is_none_or(|members| members.iter().any(is))
        && n.constant.as_ref().is_none_or(is)
        && ((n.min_length.is_none() && n.max_length.is_none() && n.pattern.is_none() && n.format.is_none())
            || Eval::new(nodes, &UNSEEN).string(n, s, &UNSEEN, &mut Ctx::fast()))
}

/// Whether [`is_valid_string_here`] holds for every string at `n`: its
/// type admits strings and none of the keywords it checks is there (kept
/// beside it, so the two list the same keywords).
pub(crate) fn valid_for_every_string_here(n: &Node) -> bool {
    !n.never
        && n.types.is_none_or(|t| t.contains(Types::STRING))
        && n.enumeration.is_none()
        && n.constant.is_none()
        && n.min_length.is_none()
        && n.max_length.is_none()
        && n.pattern.is_none()
        && n.format.is_none()
}

/// The problems of one undeclared member of an object at node `object`
/// (`additionalProperties`, a hazardous key), with `path` the member's own,
/// as the whole walk lists them there.
pub(crate) fn member_problems(
    nodes: &[Node],
    object: NodeId,
    key: &str,
    item: &Value,
    path: &str,
    max: usize,
) -> Vec<Problem> {
    let Some(n) = nodes.get(object) else { return Vec::new() };
    let mut ctx = Ctx::reporting(path, max);
    let eval = Eval::new(nodes, item);
    eval.member(n, key, item, &mut ctx, &mut 0);
    eval.with_spent(ctx.problems, path)
}

/// The problem of a value whose type the node does not allow, at `path`.
pub(crate) fn wrong_type(types: Types, v: &Value, path: String) -> Problem {
    let names = types.describe();
    let got = excerpt(v);
    // The message written whole, without a sentence in between: refusals are a hot path too.
    let shown = display_path(&path);
    let mut message = String::with_capacity(shown.len() + names.len() + got.len() + 32);
    message.push_str(shown);
    message.push_str(": expected ");
    message.push_str(&names);
    message.push_str(", got ");
    if !v.is_null() {
        message.push_str(type_name(v));
        message.push(' ');
    }
    message.push_str(&got);
    Problem {
        code: ProblemCode::WrongType,
        class: ProblemCode::WrongType.class(),
        message,
        path,
        expected: names,
        got,
        position: None,
    }
}

/// A required property the reply left out, at `path` (the property's own).
pub(crate) fn missing(path: &str) -> Problem {
    Problem::new(ProblemCode::Missing, path, "a value".into(), String::new(), "required property is missing")
}

/// Every problem of `value` against node `id`, with paths under `path`:
/// those of the value's schema, then the hazards met inside branches.
pub(crate) fn problems(nodes: &[Node], id: NodeId, value: &Value, path: &str, max: usize) -> Vec<Problem> {
    let mut ctx = Ctx::reporting(path, max);
    let eval = Eval::new(nodes, value);
    eval.node(id, value, &mut ctx);
    let mut problems = eval.with_spent(ctx.problems, path);
    for h in eval.hazards.take() {
        if problems.len() >= ctx.max {
            break;
        }
        if !problems.iter().any(|p| p.code == h.code && p.path == h.path) {
            problems.push(h);
        }
    }
    problems
}

/// Hazards kept for the report, at most (each is also a refusal on its own).
const MAX_HAZARDS: usize = 64;

/// A discriminator's tags, for messages.
fn tags(d: &crate::node::Discriminator) -> String {
    let values: Vec<Value> = d.tags.iter().map(|(t, _)| t.clone()).collect();
    list(&values)
}

pub(crate) fn list(values: &[Value]) -> String {
    let mut out = String::new();
    push_list(&mut out, values);
    out
}

/// [`list`], onto the end of `out`.
fn push_list(out: &mut String, values: &[Value]) {
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        match v {
            Value::String(s) => out.push_str(s),
            other => out.push_str(&excerpt(other)),
        }
    }
}

/// The problem of a value that is none of `members` (an `enum`, or a
/// choice of `const`s), at `path`: `expected` is `one of …`, the message
/// `<path>: <got> is not one of …`. Written whole, the list and the excerpt
/// made once each: a bad enum member is among the commonest refusals.
fn not_one_of(code: ProblemCode, members: &[Value], v: &Value, path: &str) -> Problem {
    let got = excerpt(v);
    let mut expected = String::from("one of ");
    push_list(&mut expected, members);
    let listed = expected.get("one of ".len()..).unwrap_or_default();
    let shown = display_path(path);
    let mut message = String::with_capacity(shown.len() + got.len() + listed.len() + 20);
    message.push_str(shown);
    message.push_str(": ");
    message.push_str(&got);
    message.push_str(" is not one of ");
    message.push_str(listed);
    Problem::with_message(code, path, expected, got, message)
}

/// A problem's sentence without its leading path (for nesting in another).
fn without_path(message: &str) -> &str {
    message.split_once(": ").map_or(message, |(_, m)| m)
}

/// The JSON type of a value, by its JSON Schema name.
pub(crate) fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

pub(crate) fn plural(n: u64, one: &str, many: &str) -> String {
    if n == 1 {
        format!("{n} {one}")
    } else {
        format!("{n} {many}")
    }
}

/// The members (by position in the object) or items of one value that the
/// keywords checked so far evaluated: JSON Schema's annotations, as
/// `unevaluatedProperties`/`unevaluatedItems` read them. Only built where a
/// node with one of those asks; nothing is allocated until a mark is made.
#[derive(Debug, Default)]
pub(crate) struct Evaluated {
    /// Every member or item is evaluated (`additionalProperties`, `items`, `unevaluated*`).
    all: bool,
    marks: Vec<bool>,
}

impl Evaluated {
    fn all(&mut self) {
        self.all = true;
        self.marks = Vec::new();
    }

    /// Mark the member or item at `i` of a value with `len` of them.
    fn mark(&mut self, i: usize, len: usize) {
        if self.all {
            return;
        }
        if self.marks.len() < len {
            self.marks.resize(len, false);
        }
        if let Some(m) = self.marks.get_mut(i) {
            *m = true;
        }
    }

    fn merge(&mut self, other: Evaluated) {
        if self.all {
            return;
        }
        if other.all {
            self.all();
            return;
        }
        if self.marks.len() < other.marks.len() {
            self.marks.resize(other.marks.len(), false);
        }
        for (mine, theirs) in self.marks.iter_mut().zip(other.marks) {
            *mine |= theirs;
        }
    }

    fn has(&self, i: usize) -> bool {
        self.all || self.marks.get(i).copied().unwrap_or(false)
    }
}

/// Node evaluations one check of a value may make whatever its size, and
/// more for each value in it ([`Eval::step`]): far above what any contract
/// takes on a reply (a value is met by the few nodes that apply to it), far
/// below a contract whose combinators multiply (a chain of twenty `anyOf`s
/// of the same two `$ref`s asks for a million evaluations of one string).
const BASE_STEPS: u64 = 20_000;
const STEPS_PER_VALUE: u64 = 256;

/// The bound on the steps of a walk over `v`: [`BASE_STEPS`] and
/// [`STEPS_PER_VALUE`] for each value in it (the check's, and the repair
/// walk's).
pub(crate) fn step_bound(v: &Value) -> u64 {
    let values = count_values(v, u64::MAX / STEPS_PER_VALUE);
    BASE_STEPS.saturating_add(STEPS_PER_VALUE.saturating_mul(values))
}

/// The refusal of a value whose check (or repair walk) passed its bound on
/// steps, `budget`, at `path`.
pub(crate) fn too_complex(path: &str, v: &Value, budget: u64) -> Problem {
    Problem::new(
        ProblemCode::TooComplex,
        path,
        format!("a value the contract checks within {budget} steps"),
        excerpt(v),
        &format!(
            "checking this value took more than {budget} steps and stopped: the contract's combinators \
             (anyOf, allOf, oneOf, not, if, $ref) branch over and over on it"
        ),
    )
}

/// How many values `v` holds (itself included), counted up to `cap`.
fn count_values(v: &Value, cap: u64) -> u64 {
    let mut count = 0u64;
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        count += 1;
        if count >= cap {
            break;
        }
        match v {
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.values()),
            _ => {}
        }
    }
    count
}

struct Eval<'c> {
    nodes: &'c [Node],
    /// The value the check began at (its size sets the bound on steps).
    root: &'c Value,
    /// Node evaluations so far, and the bound: past it every evaluation
    /// fails, and the check is refused (`too_complex`) whatever combinator
    /// the failure was met under, as a hazard is.
    steps: Cell<u64>,
    budget: Cell<u64>,
    /// The bound was raised by the root's size (done once, when first reached).
    sized: Cell<bool>,
    /// A consumer-safety hazard was met (an integer beyond ±(2^53−1) on an
    /// integer-only node, a prototype-named or invisible-character key in an
    /// open object). Sticky: it refuses the reply whatever combinator it was
    /// met under, so `not` or `oneOf` can never turn it into an acceptance.
    hazard: Cell<bool>,
    /// The hazards met in branches of a reporting evaluation, with paths.
    hazards: Cell<Vec<Problem>>,
}

impl<'c> Eval<'c> {
    fn new(nodes: &'c [Node], root: &'c Value) -> Self {
        Self {
            nodes,
            root,
            steps: Cell::new(0),
            budget: Cell::new(BASE_STEPS),
            sized: Cell::new(false),
            hazard: Cell::new(false),
            hazards: Cell::new(Vec::new()),
        }
    }

    /// One more node evaluation: false once past the bound.
    #[inline]
    fn step(&self) -> bool {
        let steps = self.steps.get().saturating_add(1);
        self.steps.set(steps);
        steps <= self.budget.get() || self.step_past_base()
    }

    /// The base bound reached: raised once by the root's size (counted now,
    /// not on every check), then held.
    #[cold]
    fn step_past_base(&self) -> bool {
        if !self.sized.replace(true) {
            self.budget.set(step_bound(self.root));
        }
        self.steps.get() <= self.budget.get()
    }

    /// The first problem of `v` at node `id` (its path under `path`), for a
    /// message: evaluated by this walk, within its bound on steps (a fresh
    /// one per message would let a chain of combinators multiply again).
    fn first_problem(&self, id: NodeId, v: &Value, path: &str) -> Option<Problem> {
        let mut ctx = Ctx::reporting(path, 1);
        self.node(id, v, &mut ctx);
        ctx.problems.into_iter().next()
    }

    /// Whether the bound on steps was passed.
    fn spent(&self) -> bool {
        self.steps.get() > self.budget.get()
    }

    /// `problems`, led by the refusal for the bound when it was passed (the
    /// others found before it stand; what it cut short is not listed).
    fn with_spent(&self, mut problems: Vec<Problem>, path: &str) -> Vec<Problem> {
        if self.spent() {
            problems.insert(0, too_complex(path, self.root, self.budget.get()));
        }
        problems
    }

    /// Record a consumer-safety hazard: sticky in every mode, reported with
    /// its path when met in a branch of a reporting evaluation, and a failure
    /// of this node like any other. Returns whether to go on.
    fn hazard(
        &self,
        ctx: &mut Ctx,
        code: ProblemCode,
        expected: impl Fn() -> String,
        got: &Value,
        sentence: impl Fn() -> String,
    ) -> bool {
        self.hazard.set(true);
        if ctx.paths && !ctx.report {
            let mut hazards = self.hazards.take();
            if hazards.len() < MAX_HAZARDS && !hazards.iter().any(|h| h.code == code && h.path == ctx.path) {
                hazards.push(Problem::new(code, &ctx.path, expected(), excerpt(got), &sentence()));
            }
            self.hazards.set(hazards);
        }
        ctx.fail(code, expected, got, sentence)
    }
}

/// Evaluate a check; on failure record it and stop unless reporting goes on.
macro_rules! check {
    ($ok:ident, $ctx:ident, $cond:expr, $code:expr, $expected:expr, $got:expr, $sentence:expr) => {
        if !$cond {
            $ok = false;
            if !$ctx.fail($code, || $expected, $got, || $sentence) {
                return false;
            }
        }
    };
}

impl Eval<'_> {
    fn node(&self, id: NodeId, v: &Value, ctx: &mut Ctx) -> bool {
        self.node_into(id, v, ctx, None)
    }

    /// [`Self::node`], adding what the node evaluated of `v` to `into` when given.
    fn node_into(&self, id: NodeId, v: &Value, ctx: &mut Ctx, into: Option<&mut Evaluated>) -> bool {
        if !self.step() {
            return false;
        }
        // Checking the stack costs a thread-local read: do it every few levels,
        // well inside the red zone `deeper` keeps free.
        ctx.depth += 1;
        // A fresh context checks at once (depth 1), then every fourth level.
        let valid = if ctx.depth % 4 == 1 {
            crate::deeper(|| self.node_in(id, v, ctx, into))
        } else {
            self.node_in(id, v, ctx, into)
        };
        ctx.depth -= 1;
        valid
    }

    /// A subschema applied in place: checked, and when `into` is given, what
    /// it evaluated added to it — only if it passes, unless `failing_too`
    /// (for applicators whose failure fails the node anyway: then adding it
    /// changes no verdict and spares the report a second problem).
    fn applied(&self, id: NodeId, v: &Value, ctx: &mut Ctx, into: Option<&mut Evaluated>, failing_too: bool) -> bool {
        let Some(into) = into else {
            return self.node(id, v, ctx);
        };
        let mut seen = Evaluated::default();
        let ok = self.node_into(id, v, ctx, Some(&mut seen));
        if ok || failing_too {
            into.merge(seen);
        }
        ok
    }

    fn node_here(&self, id: NodeId, v: &Value, ctx: &mut Ctx) -> bool {
        self.node_in(id, v, ctx, None)
    }

    fn node_in(&self, id: NodeId, v: &Value, ctx: &mut Ctx, into: Option<&mut Evaluated>) -> bool {
        // An id is always in the arena; failing closed costs nothing if not.
        let Some(n) = self.nodes.get(id) else {
            return false;
        };
        // A node that is only a `$ref` is its target, as the single pass
        // reads it (`Read::Alias`): its own walk of an object would only
        // report the target's key hazards before the target does (found by
        // the compile fuzz target: `{"$ref": "#/$defs/n"}` on `{"a\u0000": 1}`).
        if let Some(target) = n.only_reference() {
            return self.node_into(target, v, ctx, into);
        }
        if n.never {
            ctx.fail(
                ProblemCode::NotAllowed,
                || "nothing (the contract allows no value here)".into(),
                v,
                || "no value is allowed here".into(),
            );
            return false;
        }
        if let Some(types) = n.types {
            if !types.admits(v) {
                // Words only when reporting: the fast mode just answers no.
                if ctx.report {
                    // One excerpt for both the sentence and `got`: refusals are a hot path too.
                    ctx.fail_with(|path| wrong_type(types, v, path.to_owned()));
                }
                return false;
            }
        }
        if let Some(members) = &n.enumeration {
            if !members.iter().any(|m| json_equal(m, v)) {
                // A value of a type no member has is no answer, not a wrong one.
                let same_type =
                    members.iter().any(|m| Types::of(m) == Types::of(v) || (m.is_number() && v.is_number()));
                let code = if same_type { ProblemCode::NotAllowed } else { ProblemCode::WrongType };
                ctx.fail_with(|path| not_one_of(code, members, v, path));
                return false;
            }
        }
        if let Some(c) = &n.constant {
            if !json_equal(c, v) {
                let same_type = Types::of(c) == Types::of(v) || (c.is_number() && v.is_number());
                let code = if same_type { ProblemCode::NotAllowed } else { ProblemCode::WrongType };
                ctx.fail(
                    code,
                    || format!("exactly {}", excerpt(c)),
                    v,
                    || format!("{} is not {}", excerpt(v), excerpt(c)),
                );
                return false;
            }
        }
        // What a node evaluates is collected only when its caller asks, or
        // for its own `unevaluated*`: every other node takes the plain path,
        // compiled without any of it.
        if into.is_none() && !n.unevaluated() {
            return self.keywords::<false>(n, v, ctx, None);
        }
        let mut seen = Evaluated::default();
        let mut ok = self.keywords::<true>(n, v, ctx, Some(&mut seen));
        if n.unevaluated() && (ok || ctx.report) {
            ok &= self.unevaluated(n, v, &mut seen, ctx);
        }
        if let Some(into) = into {
            into.merge(seen);
        }
        ok
    }

    /// The node's keywords past `type`, `enum` and `const`; with `COLLECT`,
    /// what they evaluate is added to `into`.
    #[inline(always)]
    fn keywords<const COLLECT: bool>(
        &self,
        n: &Node,
        v: &Value,
        ctx: &mut Ctx,
        mut into: Option<&mut Evaluated>,
    ) -> bool {
        let mut ok = match v {
            Value::Number(x) => self.number(n, x, v, ctx),
            Value::String(s) => self.string(n, s, v, ctx),
            Value::Array(items) => self.array::<COLLECT>(n, items, v, ctx, into.as_deref_mut()),
            Value::Object(map) => self.object::<COLLECT>(n, map, v, ctx, into.as_deref_mut()),
            Value::Null | Value::Bool(_) => true,
        };
        if !ok && !ctx.report {
            return false;
        }
        ok &= self.in_place::<COLLECT>(n, v, ctx, into);
        ok
    }

    /// `unevaluatedProperties` and `unevaluatedItems`: each member or item
    /// the node's other keywords did not evaluate (`seen`) against their
    /// schema, which then has evaluated all of them.
    fn unevaluated(&self, n: &Node, v: &Value, seen: &mut Evaluated, ctx: &mut Ctx) -> bool {
        let mut ok = true;
        match v {
            Value::Object(map) => {
                let Some(rest) = n.unevaluated_properties else { return true };
                // Refused as `additionalProperties: false` refuses: the same problem.
                let closed = self.nodes.get(rest).is_some_and(|r| r.never);
                for (i, (key, item)) in map.iter().enumerate() {
                    if seen.has(i) {
                        continue;
                    }
                    let mark = ctx.enter(key);
                    let good = if closed {
                        ctx.fail(
                            ProblemCode::UnexpectedProperty,
                            || "no other properties".into(),
                            item,
                            || "property not allowed by the contract".into(),
                        );
                        false
                    } else {
                        self.node(rest, item, ctx)
                    };
                    ctx.leave(mark);
                    if !good {
                        ok = false;
                        if !ctx.report || ctx.problems.len() >= ctx.max {
                            return false;
                        }
                    }
                }
            }
            Value::Array(items) => {
                let Some(rest) = n.unevaluated_items else { return true };
                for (i, item) in items.iter().enumerate() {
                    if seen.has(i) {
                        continue;
                    }
                    // `unevaluatedItems: false` is refused as `items: false` is.
                    let mark = ctx.enter_index(i);
                    let good = self.node(rest, item, ctx);
                    ctx.leave(mark);
                    if !good {
                        ok = false;
                        if !ctx.report || ctx.problems.len() >= ctx.max {
                            return false;
                        }
                    }
                }
            }
            _ => return true,
        }
        seen.all();
        ok
    }

    fn number(&self, n: &Node, x: &Number, v: &Value, ctx: &mut Ctx) -> bool {
        let mut ok = true;
        let cmp = |b: &Number| cmp_numbers(x, b);
        let integer_only = n.types.is_some_and(|t| t.contains(Types::INTEGER) && !t.contains(Types::NUMBER));
        if n.exact_integers && integer_only && !crate::equal::is_safe_integer(x) {
            ok = false;
            if !self.hazard(
                ctx,
                ProblemCode::OutOfRange,
                || "an integer within ±9007199254740991".into(),
                v,
                || {
                    format!(
                        "{x} is beyond ±(2^53−1): JavaScript and other double-based readers would read another number"
                    )
                },
            ) {
                return false;
            }
        }
        if let Some(min) = &n.minimum {
            check!(
                ok,
                ctx,
                matches!(cmp(min), Some(Ordering::Greater | Ordering::Equal)),
                ProblemCode::OutOfRange,
                format!("at least {min}"),
                v,
                format!("{x} is below the minimum {min}")
            );
        }
        if let Some(min) = &n.exclusive_minimum {
            check!(
                ok,
                ctx,
                cmp(min) == Some(Ordering::Greater),
                ProblemCode::OutOfRange,
                format!("greater than {min}"),
                v,
                format!("{x} is not greater than {min}")
            );
        }
        if let Some(max) = &n.maximum {
            check!(
                ok,
                ctx,
                matches!(cmp(max), Some(Ordering::Less | Ordering::Equal)),
                ProblemCode::OutOfRange,
                format!("at most {max}"),
                v,
                format!("{x} is above the maximum {max}")
            );
        }
        if let Some(max) = &n.exclusive_maximum {
            check!(
                ok,
                ctx,
                cmp(max) == Some(Ordering::Less),
                ProblemCode::OutOfRange,
                format!("less than {max}"),
                v,
                format!("{x} is not less than {max}")
            );
        }
        if let Some(m) = &n.multiple_of {
            check!(
                ok,
                ctx,
                crate::equal::is_multiple_of(x, m),
                ProblemCode::OutOfRange,
                format!("a multiple of {m}"),
                v,
                format!("{x} is not a multiple of {m}")
            );
        }
        ok
    }

    fn string(&self, n: &Node, s: &str, v: &Value, ctx: &mut Ctx) -> bool {
        let mut ok = true;
        // Lengths are in code points, as JSON Schema defines them; a string of
        // b bytes holds b/4 to b of them, which mostly decides without counting.
        let bytes = s.len() as u64;
        let surely =
            n.min_length.is_none_or(|min| min <= bytes.div_ceil(4)) && n.max_length.is_none_or(|max| bytes <= max);
        if !surely {
            let len = s.chars().count() as u64;
            if let Some(min) = n.min_length {
                check!(
                    ok,
                    ctx,
                    len >= min,
                    ProblemCode::TooShort,
                    format!("at least {}", plural(min, "character", "characters")),
                    v,
                    format!("{} is shorter than {}", excerpt(v), plural(min, "character", "characters"))
                );
            }
            if let Some(max) = n.max_length {
                check!(
                    ok,
                    ctx,
                    len <= max,
                    ProblemCode::TooLong,
                    format!("at most {}", plural(max, "character", "characters")),
                    v,
                    format!("{} is longer than {} ({len})", excerpt(v), plural(max, "character", "characters"))
                );
            }
        }
        if let Some(p) = &n.pattern {
            check!(
                ok,
                ctx,
                p.regex.is_match(s),
                ProblemCode::PatternMismatch,
                format!("a string matching {}", p.source),
                v,
                format!("{} does not match the pattern {}", excerpt(v), p.source)
            );
        }
        if let Some(f) = n.format {
            check!(
                ok,
                ctx,
                f.is_valid(s),
                ProblemCode::FormatMismatch,
                f.describe().to_owned(),
                v,
                format!("{} is not {}", excerpt(v), f.describe())
            );
        }
        ok
    }

    fn array<const COLLECT: bool>(
        &self,
        n: &Node,
        items: &[Value],
        v: &Value,
        ctx: &mut Ctx,
        mut into: Option<&mut Evaluated>,
    ) -> bool {
        let mut ok = true;
        let len = items.len() as u64;
        if let Some(min) = n.min_items {
            check!(
                ok,
                ctx,
                len >= min,
                ProblemCode::TooShort,
                format!("at least {}", plural(min, "item", "items")),
                v,
                format!("has {}, fewer than {min}", plural(len, "item", "items"))
            );
        }
        if let Some(max) = n.max_items {
            check!(
                ok,
                ctx,
                len <= max,
                ProblemCode::TooLong,
                format!("at most {}", plural(max, "item", "items")),
                v,
                format!("has {}, more than {max}", plural(len, "item", "items"))
            );
        }
        for (i, item) in items.iter().enumerate() {
            let Some(child) = n.prefix_items.get(i).copied().or(n.items) else {
                break;
            };
            let mark = ctx.enter_index(i);
            let good = self.node(child, item, ctx);
            ctx.leave(mark);
            if !good {
                ok = false;
                if !ctx.report || ctx.problems.len() >= ctx.max {
                    return false;
                }
            }
        }
        if let (true, Some(seen)) = (COLLECT, into.as_deref_mut()) {
            // `items` evaluates every item past the prefix, `prefixItems` its own.
            if n.items.is_some() {
                seen.all();
            } else {
                for i in 0..n.prefix_items.len().min(items.len()) {
                    seen.mark(i, items.len());
                }
            }
        }
        if let Some(c) = n.contains {
            let matching = if COLLECT {
                let mut matching = 0u64;
                for (i, item) in items.iter().enumerate() {
                    if self.node(c, item, &mut ctx.branch()) {
                        matching += 1;
                        if let (Some(seen), true) = (into.as_deref_mut(), n.contains_evaluates) {
                            seen.mark(i, items.len());
                        }
                    }
                }
                matching
            } else {
                items.iter().filter(|item| self.node(c, item, &mut ctx.branch())).count() as u64
            };
            let min = n.min_contains.unwrap_or(1);
            check!(
                ok,
                ctx,
                matching >= min,
                ProblemCode::NoMatch,
                format!("at least {} matching `contains`", plural(min, "item", "items")),
                v,
                format!("has {} matching the `contains` schema, fewer than {min}", plural(matching, "item", "items"))
            );
            if let Some(max) = n.max_contains {
                check!(
                    ok,
                    ctx,
                    matching <= max,
                    ProblemCode::NoMatch,
                    format!("at most {} matching `contains`", plural(max, "item", "items")),
                    v,
                    format!(
                        "has {} matching the `contains` schema, more than {max}",
                        plural(matching, "item", "items")
                    )
                );
            }
        }
        if n.unique_items {
            let dup = crate::equal::first_duplicate(items);
            check!(
                ok,
                ctx,
                dup.is_none(),
                ProblemCode::NotUnique,
                "unique items".into(),
                v,
                match dup {
                    Some((i, j)) => format!("items {i} and {j} are equal"),
                    None => String::new(),
                }
            );
        }
        ok
    }

    fn object<const COLLECT: bool>(
        &self,
        n: &Node,
        map: &Map<String, Value>,
        v: &Value,
        ctx: &mut Ctx,
        mut into: Option<&mut Evaluated>,
    ) -> bool {
        let mut ok = true;
        // Fast mode counts the required properties met while visiting members,
        // instead of looking each one up (a hash per name) in the map.
        let count_required = !ctx.report && n.required_all_declared;
        // Reporting a small object: which required names are present, by comparing
        // names (a hash per name costs more than a few comparisons).
        let small = n.required.len() <= 64 && map.len().saturating_mul(n.required.len()) <= 256;
        let mut present: u64 = 0;
        if !count_required && small {
            for key in map.keys() {
                for (i, r) in n.required.iter().enumerate() {
                    if r == key {
                        present |= 1 << i;
                    }
                }
            }
        }
        for (i, name) in n.required.iter().enumerate().filter(|_| !count_required) {
            let here = if small { present & (1 << i) != 0 } else { map.contains_key(name) };
            if !here {
                ok = false;
                let mark = ctx.enter(name);
                let go_on = ctx.fail_with(missing);
                ctx.leave(mark);
                if !go_on {
                    return false;
                }
            }
        }
        for (name, deps) in &n.dependent_required {
            if !map.contains_key(name) {
                continue;
            }
            for dep in deps {
                if !map.contains_key(dep) {
                    ok = false;
                    let mark = ctx.enter(dep);
                    let go_on = ctx.fail(
                        ProblemCode::Missing,
                        || "a value".into(),
                        &Value::Null,
                        || format!("required when {name:?} is present, but missing"),
                    );
                    ctx.leave(mark);
                    if !go_on {
                        return false;
                    }
                }
            }
        }
        let len = map.len() as u64;
        if let Some(min) = n.min_properties {
            check!(
                ok,
                ctx,
                len >= min,
                ProblemCode::TooShort,
                format!("at least {}", plural(min, "property", "properties")),
                v,
                format!("has {}, fewer than {min}", plural(len, "property", "properties"))
            );
        }
        if let Some(max) = n.max_properties {
            check!(
                ok,
                ctx,
                len <= max,
                ProblemCode::TooLong,
                format!("at most {}", plural(max, "property", "properties")),
                v,
                format!("has {}, more than {max}", plural(len, "property", "properties"))
            );
        }
        let mut required_seen = 0;
        for (key, item) in map {
            let mark = ctx.enter(key);
            let good = self.member(n, key, item, ctx, &mut required_seen);
            ctx.leave(mark);
            if !good {
                ok = false;
                if !ctx.report || ctx.problems.len() >= ctx.max {
                    return false;
                }
            }
        }
        if count_required && required_seen != n.required.len() {
            return false;
        }
        if let (true, Some(seen)) = (COLLECT, into.as_deref_mut()) {
            // The members `properties`, `patternProperties` and `additionalProperties` evaluate.
            if n.additional_properties.is_some() {
                seen.all();
            } else if !n.properties.is_empty() || !n.pattern_properties.is_empty() {
                for (i, key) in map.keys().enumerate() {
                    if n.property_index.contains_key(key)
                        || n.pattern_properties.iter().any(|(p, _)| p.regex.is_match(key))
                    {
                        seen.mark(i, map.len());
                    }
                }
            }
        }
        for (name, id) in &n.dependent_schemas {
            if !map.contains_key(name) {
                continue;
            }
            let good =
                if COLLECT { self.applied(*id, v, ctx, into.as_deref_mut(), true) } else { self.node(*id, v, ctx) };
            if !good {
                ok = false;
                if !ctx.report {
                    return false;
                }
            }
        }
        ok
    }

    /// One object member against `properties`, `patternProperties`,
    /// `additionalProperties` and `propertyNames`.
    fn member(&self, n: &Node, key: &str, item: &Value, ctx: &mut Ctx, required_seen: &mut usize) -> bool {
        let entry = n.property_index.entry(key);
        if entry.is_some_and(|(_, required)| required) {
            *required_seen += 1;
        }
        let declared_here = entry.map(|(id, _)| id);
        if declared_here.is_none() && n.plain_keys && hazardous_key(key) && !n.required.iter().any(|r| r == key) {
            // Refused before any schema could allow it: consumers read these keys differently.
            self.hazard(
                ctx,
                ProblemCode::UnexpectedProperty,
                || "no prototype-named or invisible-character keys".into(),
                item,
                || {
                    format!(
                        "the key {key:?} is read differently by JavaScript and other consumers; declare it to allow it"
                    )
                },
            );
            return false;
        }
        let mut ok = true;
        let mut declared = false;
        if let Some(id) = declared_here {
            declared = true;
            ok &= self.node(id, item, ctx);
        }
        for (p, id) in &n.pattern_properties {
            if (ok || ctx.report) && p.regex.is_match(key) {
                declared = true;
                ok &= self.node(*id, item, ctx);
            }
        }
        if !declared && (ok || ctx.report) {
            if let Some(id) = n.additional_properties {
                if self.nodes.get(id).is_some_and(|a| a.never) {
                    ok = false;
                    ctx.fail(
                        ProblemCode::UnexpectedProperty,
                        || "no other properties".into(),
                        item,
                        || "property not allowed by the contract".into(),
                    );
                } else {
                    ok &= self.node(id, item, ctx);
                }
            }
        }
        if let Some(id) = n.property_names {
            if ok || ctx.report {
                let name = Value::String(key.to_owned());
                if !self.node(id, &name, &mut ctx.branch()) {
                    ok = false;
                    let why = if ctx.report {
                        let first = self.first_problem(id, &name, "");
                        first.map(|p| p.message.trim_start_matches("(root): ").to_owned()).unwrap_or_default()
                    } else {
                        String::new()
                    };
                    ctx.fail(
                        ProblemCode::UnexpectedProperty,
                        || "a property name allowed by propertyNames".into(),
                        &name,
                        || format!("the property name is not allowed: {why}"),
                    );
                }
            }
        }
        ok
    }

    /// Applicators on the same value: `$ref`, `allOf`, `anyOf`, `oneOf`,
    /// `not`, `if`/`then`/`else`.
    ///
    /// With `into`, what the passing ones evaluated is added to it: every
    /// passing `anyOf` branch (all are tried), the one passing `oneOf`
    /// branch, `if` when it passes, `then`/`else`; `not` adds nothing.
    fn in_place<const COLLECT: bool>(
        &self,
        n: &Node,
        v: &Value,
        ctx: &mut Ctx,
        mut into: Option<&mut Evaluated>,
    ) -> bool {
        let mut ok = true;
        for id in n.reference.iter().chain(&n.all_of) {
            let good =
                if COLLECT { self.applied(*id, v, ctx, into.as_deref_mut(), true) } else { self.node(*id, v, ctx) };
            if !good {
                ok = false;
                if !ctx.report {
                    return false;
                }
            }
        }
        // A consistent discriminator names the only branch an object can
        // match (checked at compile time): evaluate, and report, that one.
        let tagged = match (n.discriminator.as_deref(), v) {
            (Some(d), Value::Object(map)) => Some((d, map.get(&d.property))),
            _ => None,
        };
        if let Some((d, tag)) = tagged {
            let union = if n.one_of.is_empty() { &n.any_of } else { &n.one_of };
            let branch = tag.and_then(|t| d.branch(t)).and_then(|i| union.get(i));
            let go_on = match (branch, tag) {
                (Some(id), _) => {
                    // Its failure fails the union: what it evaluated may count either way.
                    let good = if COLLECT {
                        self.applied(*id, v, ctx, into.as_deref_mut(), true)
                    } else {
                        self.node(*id, v, ctx)
                    };
                    if good {
                        true
                    } else {
                        ok = false;
                        ctx.report
                    }
                }
                (None, None) => {
                    ok = false;
                    let len = ctx.enter(&d.property);
                    let go_on = ctx.fail(
                        ProblemCode::Missing,
                        || format!("the tag `{}`, one of {}", d.property, tags(d)),
                        v,
                        || format!("the tag `{}` is missing: it names which alternative this is", d.property),
                    );
                    ctx.leave(len);
                    go_on
                }
                (None, Some(t)) => {
                    ok = false;
                    let len = ctx.enter(&d.property);
                    let same_type = d.tags.iter().any(|(m, _)| Types::of(m) == Types::of(t));
                    let code = if same_type { ProblemCode::NotAllowed } else { ProblemCode::WrongType };
                    let go_on = ctx.fail(
                        code,
                        || format!("one of {}", tags(d)),
                        t,
                        || format!("{} names no alternative: the tag is one of {}", excerpt(t), tags(d)),
                    );
                    ctx.leave(len);
                    go_on
                }
            };
            if !go_on {
                return false;
            }
        }
        let tagged_any = tagged.is_some() && n.one_of.is_empty();
        let tagged_one = tagged.is_some() && !n.one_of.is_empty();
        let any = tagged_any
            || n.any_of.is_empty()
            || match into.as_deref_mut().filter(|_| COLLECT) {
                None => n.any_of.iter().any(|id| self.node(*id, v, &mut ctx.branch())),
                Some(seen) => {
                    // Every branch is tried: each passing one evaluates members or items.
                    let mut any = false;
                    for id in &n.any_of {
                        any |= self.applied(*id, v, &mut ctx.branch(), Some(&mut *seen), false);
                    }
                    any
                }
            };
        if !any {
            ok = false;
            let go_on = match self.fail_choice(&n.any_of, v, ctx) {
                Some(go_on) => go_on,
                None => {
                    let why = self.why_not(&n.any_of, v, ctx);
                    let count = n.any_of.len();
                    ctx.fail(
                        ProblemCode::NoMatch,
                        || "a value matching one of the alternatives (anyOf)".into(),
                        v,
                        || format!("matches none of the {count} alternatives (anyOf){why}"),
                    )
                }
            };
            if !go_on {
                return false;
            }
        }
        if !tagged_one && !n.one_of.is_empty() {
            let collecting = COLLECT && into.is_some();
            // What the first passing branch evaluated: kept when it is the only one.
            let mut first: Option<Evaluated> = None;
            let matching: Vec<usize> = n
                .one_of
                .iter()
                .enumerate()
                .filter(|(_, id)| {
                    if !collecting {
                        return self.node(**id, v, &mut ctx.branch());
                    }
                    let mut seen = Evaluated::default();
                    let good = self.node_into(**id, v, &mut ctx.branch(), Some(&mut seen));
                    if good && first.is_none() {
                        first = Some(seen);
                    }
                    good
                })
                .map(|(i, _)| i)
                .take(2)
                .collect();
            if let (Some(seen), Some(first), [_]) = (into.as_deref_mut(), first, matching.as_slice()) {
                seen.merge(first);
            }
            if matching.len() != 1 {
                ok = false;
                let count = n.one_of.len();
                let go_on = match (matching.as_slice(), self.fail_choice(&n.one_of, v, ctx)) {
                    ([], Some(go_on)) => go_on,
                    ([], None) => {
                        let why = self.why_not(&n.one_of, v, ctx);
                        ctx.fail(
                            ProblemCode::NoMatch,
                            || "a value matching exactly one alternative (oneOf)".into(),
                            v,
                            || format!("matches none of the {count} alternatives (oneOf){why}"),
                        )
                    }
                    (_, _) => ctx.fail(
                        ProblemCode::NoMatch,
                        || "a value matching exactly one alternative (oneOf)".into(),
                        v,
                        || {
                            // Numbered from 1, as in the messages of anyOf.
                            let (a, b) = (matching.first().map_or(0, |i| i + 1), matching.get(1).map_or(0, |i| i + 1));
                            format!("matches alternatives {a} and {b}, but exactly one is allowed (oneOf)")
                        },
                    ),
                };
                if !go_on {
                    return false;
                }
            }
        }
        if let Some(id) = n.not {
            if self.node(id, v, &mut ctx.branch()) {
                ok = false;
                if !ctx.fail(
                    ProblemCode::NoMatch,
                    || "a value not matching the `not` schema".into(),
                    v,
                    || format!("{} matches a schema it must not match (not)", excerpt(v)),
                ) {
                    return false;
                }
            }
        }
        if let Some(cond) = n.if_ {
            let passed = if COLLECT {
                self.applied(cond, v, &mut ctx.branch(), into.as_deref_mut(), false)
            } else {
                self.node(cond, v, &mut ctx.branch())
            };
            let (branch, name) = if passed { (n.then_, "then") } else { (n.else_, "else") };
            if let Some(id) = branch {
                let good = if COLLECT {
                    self.applied(id, v, &mut ctx.branch(), into, true)
                } else {
                    self.node(id, v, &mut ctx.branch())
                };
                if !good {
                    ok = false;
                    let why = if ctx.report {
                        let first = self.first_problem(id, v, &ctx.path);
                        first.map(|p| format!(": {}", without_path(&p.message))).unwrap_or_default()
                    } else {
                        String::new()
                    };
                    if !ctx.fail(
                        ProblemCode::NoMatch,
                        || format!("a value matching `{name}`"),
                        v,
                        || format!("does not satisfy `{name}` of an if/then/else{why}"),
                    ) {
                        return false;
                    }
                }
            }
        }
        ok
    }

    /// When every alternative is a plain `const`/`enum` (as schemars writes
    /// documented Rust enums), report the failure as an enum would be:
    /// `not_allowed`, or `wrong_type` when no value has the reply's type.
    /// `None` when not reporting or not a plain choice; else whether to go on.
    fn fail_choice(&self, alternatives: &[NodeId], v: &Value, ctx: &mut Ctx) -> Option<bool> {
        if !ctx.report {
            return None;
        }
        let mut values = Vec::new();
        for id in alternatives {
            values.extend(self.nodes.get(*id).and_then(Node::plain_choice)?);
        }
        let same_type = values.iter().any(|m| Types::of(m) == Types::of(v) || (m.is_number() && v.is_number()));
        let code = if same_type { ProblemCode::NotAllowed } else { ProblemCode::WrongType };
        Some(ctx.fail_with(|path| not_one_of(code, &values, v, path)))
    }

    /// For a message: the first problem of each of the first few
    /// alternatives (only when reporting; the fast mode builds no text).
    fn why_not(&self, alternatives: &[NodeId], v: &Value, ctx: &Ctx) -> String {
        let mut out = String::new();
        if !ctx.report {
            return out;
        }
        for (i, id) in alternatives.iter().enumerate().take(3) {
            if let Some(p) = self.first_problem(*id, v, &ctx.path) {
                out.push_str(&format!("; option {}: {}", i + 1, without_path(&p.message)));
            }
        }
        out
    }
}
