//! Contract evolution: what a new contract refuses that an old one accepted
//! (*breaking*), what it accepts that the old one refused (*loosening*), and
//! where that cannot be decided (*undecided*), each with its place, the
//! change in words and, for a breaking or loosening change, a **witness**: a
//! reply one contract accepts and the other refuses, checked by both
//! compiled contracts before it is shown.
//!
//! The two documents are walked side by side. Where they are equal nothing
//! changed; where a keyword the comparison knows moved one way only (an enum
//! grew, a bound widened, `required` shrank), nothing that was accepted is
//! refused there; every other difference is a *possible* breaking change,
//! and it is reported as breaking only with a witness found and checked,
//! else as undecided. So a report with no breaking and no undecided change
//! is a proof that, keyword by keyword, nothing accepted before is refused
//! now; it never says *compatible* by not looking.

use std::cell::Cell;
use std::collections::BTreeSet;

use serde_json::{json, Map, Value};

use crate::equal::json_equal;
use crate::Contract;

/// What a change does to the replies the old contract accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    /// The new contract refuses a reply the old one accepted (a witness shows one).
    Breaking,
    /// The new contract accepts a reply the old one refused (a witness shows one).
    Loosening,
    /// It may refuse what the old contract accepted; the comparison cannot tell.
    Undecided,
}

/// One difference between two contracts.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Change {
    /// Breaking, loosening or undecided.
    pub kind: ChangeKind,
    /// Where in a reply (a JSON Pointer; `*` for every item of an array, or
    /// every property a contract does not name).
    pub path: String,
    /// The change in words.
    pub message: String,
    /// A reply (JSON text) the old contract accepts and the new one refuses
    /// (breaking), or the other way round (loosening); checked by both.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub witness: Option<String>,
}

/// Every difference found between an old and a new contract.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct ContractDiff {
    /// Breaking changes first, then undecided, then loosening; each in the
    /// order the documents were walked.
    pub changes: Vec<Change>,
}

impl ContractDiff {
    /// No breaking and no undecided change: every reply the old contract
    /// accepted, the new one accepts.
    #[must_use]
    pub fn is_compatible(&self) -> bool {
        self.changes.iter().all(|c| c.kind == ChangeKind::Loosening)
    }

    /// How many changes of this kind.
    #[must_use]
    pub fn count(&self, kind: ChangeKind) -> usize {
        self.changes.iter().filter(|c| c.kind == kind).count()
    }
}

/// Keywords that say nothing about what is accepted.
const ANNOTATIONS: &[&str] = &[
    "title",
    "description",
    "examples",
    "$comment",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$schema",
    "$defs",
    "definitions",
];

/// Where a keyword that holds a schema (`additionalProperties`, `items`) is
/// absent: no schema checks the value there at all. Not `true`: a `true`
/// schema is a node the check evaluates, which refuses an object holding an
/// undeclared prototype-named key. Widening to it refuses nothing; coming
/// from it, anything may.
static ABSENT: Value = Value::Null;

/// Deepest schema nesting the comparison follows (a contract nests far less).
const MAX_DEPTH: usize = 64;

impl Contract {
    /// How `new` differs from this contract (the old one): see
    /// [`ContractDiff`].
    ///
    /// ```
    /// let old = vouch::Contract::from_json_str(r#"{"enum": ["user", "legacy_upload"]}"#)?;
    /// let new = vouch::Contract::from_json_str(r#"{"enum": ["user"]}"#)?;
    /// let diff = old.diff(&new);
    /// assert!(!diff.is_compatible());
    /// assert_eq!(diff.changes[0].witness.as_deref(), Some(r#""legacy_upload""#));
    /// # Ok::<(), vouch::CompileError>(())
    /// ```
    #[must_use]
    pub fn diff(&self, new: &Contract) -> ContractDiff {
        let mut changes = Vec::new();
        // The same keywords mean other things in other drafts (`items` as a
        // list, `$ref` beside other keywords, boolean exclusive bounds):
        // across drafts, nothing compared keyword by keyword is proof.
        // (A contract without `$schema` is read as 2020-12.)
        let draft = |c: &Contract| {
            keyword(c.document(), "$schema")
                .and_then(Value::as_str)
                .unwrap_or("http://json-schema.org/draft/2020-12/schema")
                .trim_end_matches('#')
                .replacen("https://", "http://", 1)
        };
        if draft(self) != draft(new) {
            let shown = |c: &Contract| keyword(c.document(), "$schema").map_or_else(|| "(none)".to_owned(), shown);
            changes.push(Change {
                kind: ChangeKind::Undecided,
                path: "/".to_owned(),
                message: format!(
                    "the draft changed ($schema {} → {}): keywords may mean other things in it",
                    shown(self),
                    shown(new)
                ),
                witness: None,
            });
        }
        // The walk follows `#`, `#/$defs/…` and `#/definitions/…` into both
        // documents, at the place that refers (so under its `not`, its
        // repair). A reference resolved any other way (a `$dynamicRef`, an
        // anchor, a pointer into `properties`, a base set by a nested `$id`)
        // reaches a schema the walk may compare elsewhere or not at all.
        let unfollowed = [self, new].into_iter().find_map(|c| unfollowed_reference(c.document()));
        if let Some(what) = unfollowed.filter(|_| !json_equal(self.document(), new.document())) {
            changes.push(Change {
                kind: ChangeKind::Undecided,
                path: "/".to_owned(),
                message: format!(
                    "the contract refers by {what}, which vouch diff does not follow: a change may be read through it"
                ),
                witness: None,
            });
        }
        let differing = differing_references(self.document(), new.document());
        for (kind, from, to) in [(ChangeKind::Breaking, self, new), (ChangeKind::Loosening, new, self)] {
            let mut walk = Walk {
                from,
                to,
                swapped: kind == ChangeKind::Loosening,
                found: Vec::new(),
                seen: BTreeSet::new(),
                differing: &differing,
                guarded: false,
                search: Cell::new(MAX_SEARCH_BYTES),
                edits: Cell::new(MAX_EDIT_BYTES / from.document().to_string().len().max(1)),
            };
            walk.compare(from.document(), to.document(), &mut Vec::new(), 0);
            for c in walk.found {
                match c {
                    Found::Witnessed { path, message, witness } => {
                        changes.push(Change { kind, path, message, witness: Some(witness) });
                    }
                    // An unknown loosening is no risk to what was accepted: not reported.
                    Found::Unwitnessed { path, message } if kind == ChangeKind::Breaking => {
                        changes.push(Change { kind: ChangeKind::Undecided, path, message, witness: None });
                    }
                    Found::Unwitnessed { .. } => {}
                }
            }
        }
        changes.sort_by_key(|c| match c.kind {
            ChangeKind::Breaking => 0,
            ChangeKind::Undecided => 1,
            ChangeKind::Loosening => 2,
        });
        ContractDiff { changes }
    }
}

enum Found {
    Witnessed { path: String, message: String, witness: String },
    Unwitnessed { path: String, message: String },
}

/// One step from a value to a value inside it, with the schema (of the
/// contract walked *from*) that the inner value is checked by.
#[derive(Clone)]
enum Step<'a> {
    Key(String, &'a Value),
    Item(&'a Value),
}

fn pointer(steps: &[Step<'_>]) -> String {
    let mut p = String::new();
    for s in steps {
        p.push('/');
        match s {
            Step::Key(k, _) => p.push_str(&k.replace('~', "~0").replace('/', "~1")),
            Step::Item(_) => p.push('*'),
        }
    }
    if p.is_empty() {
        "/".to_owned()
    } else {
        p
    }
}

struct Walk<'c> {
    from: &'c Contract,
    to: &'c Contract,
    /// Walking new → old (looking for loosening): words still say old → new.
    swapped: bool,
    found: Vec<Found>,
    /// `$ref` pairs already followed, and whether under a guard (a
    /// recursive contract ends there).
    seen: BTreeSet<(String, String, bool)>,
    /// Below (or at) a node that declares a repair or a default.
    guarded: bool,
    /// The references that reach schemas differing between the documents
    /// (see [`differing_references`]).
    differing: &'c BTreeSet<String>,
    /// Bytes of candidate replies still to be checked (see [`MAX_SEARCH_BYTES`]).
    search: Cell<usize>,
    /// One-change contracts still to be compiled (see [`MAX_EDIT_BYTES`]).
    edits: Cell<usize>,
}

/// Bytes of candidate replies one walk checks at most. Each possible
/// change's search builds replies as large as the smallest reply the
/// contract accepts, so a contract with thousands of changed properties
/// would take time in their product; past this, a change is searched no
/// more and is reported undecided (as it is when no witness is found).
const MAX_SEARCH_BYTES: usize = 256 * 1024 * 1024;

/// Bytes of contract documents one walk compiles at most for the
/// one-change contracts a breaking witness is also checked against. Past
/// it, a witness is checked by both contracts only.
const MAX_EDIT_BYTES: usize = 16 * 1024 * 1024;

fn keyword<'v>(schema: &'v Value, k: &str) -> Option<&'v Value> {
    schema.as_object().and_then(|o| o.get(k))
}

fn shown(v: &Value) -> String {
    if std::ptr::eq(v, &ABSENT) {
        return "(none)".to_owned();
    }
    let s = v.to_string();
    if s.chars().count() > 60 {
        format!("{}…", s.chars().take(60).collect::<String>())
    } else {
        s
    }
}

impl<'c> Walk<'c> {
    /// Old and new said the way the user reads them.
    fn ordered<'v>(&self, a: &'v Value, b: &'v Value) -> (&'v Value, &'v Value) {
        if self.swapped {
            (b, a)
        } else {
            (a, b)
        }
    }

    /// A reply with `value` at `steps` (the rest as small as `from` allows),
    /// accepted by `from` and refused by `to` (and by `only`, when given:
    /// `from` with this one change made, so the witness shows this change,
    /// not another one at the same place), if one of the values is.
    fn witness(
        &self,
        only: Option<&Contract>,
        steps: &[Step<'_>],
        values: impl IntoIterator<Item = Value>,
    ) -> Option<String> {
        let root = self.from.document();
        let texts = values.into_iter().filter_map(|v| place(root, steps, v)).map(|r| r.to_string());
        self.text_witness(only, texts)
    }

    /// The first of these reply texts (values, or not: a string where a
    /// number goes, a fence) `from` accepts and `to` (and `only`) refuse.
    fn text_witness(&self, only: Option<&Contract>, texts: impl IntoIterator<Item = String>) -> Option<String> {
        texts.into_iter().find(|text| {
            let Some(left) = self.search.get().checked_sub(text.len()) else {
                self.search.set(0);
                return false;
            };
            self.search.set(left);
            self.from.check(text).is_accepted()
                && !self.to.check(text).is_accepted()
                && only.is_none_or(|c| !c.check(text).is_accepted())
        })
    }

    /// `from` with one change made at `node` (a node of its document): the
    /// contract a witness of that change alone must also refuse. `None`
    /// when the node is not found or that document does not compile.
    fn only(&self, node: &Value, edit: impl FnOnce(&mut Map<String, Value>)) -> Option<Contract> {
        self.edits.set(self.edits.get().checked_sub(1)?);
        let at = pointer_of(self.from.document(), node)?;
        let mut doc = self.from.document().clone();
        edit(doc.pointer_mut(&at)?.as_object_mut()?);
        Contract::from_value(doc).ok()?.with_limits(self.from.limits()).ok()
    }

    fn report(&mut self, steps: &[Step<'_>], mut message: String, witness: Option<String>) {
        let path = pointer(steps);
        if witness.is_none() && self.search.get() == 0 {
            message.push_str(" (not searched for a witness: the comparison's bound on replies tried was reached)");
        }
        self.found.push(match witness {
            Some(witness) => Found::Witnessed { path, message, witness },
            None => Found::Unwitnessed { path, message },
        });
    }

    /// Candidates at `steps` for a node whose keywords changed: values of
    /// every kind, shaped by the old node, near its bounds.
    fn candidates(&self, from_node: &Value, to_node: &Value) -> Vec<Value> {
        let mut out = Vec::new();
        if let Some(v) = sample(self.from.document(), from_node, 0) {
            out.push(v);
        }
        for node in [from_node, to_node] {
            for k in ["enum", "examples"] {
                if let Some(Value::Array(items)) = keyword(node, k) {
                    out.extend(items.iter().cloned());
                }
            }
            if let Some(c) = keyword(node, "const") {
                out.push(c.clone());
            }
            for k in ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"] {
                // An integer bound and its neighbours exactly (beyond 2^53 a
                // double has no neighbours).
                let exact =
                    keyword(node, k).and_then(|v| v.as_i64().map(i128::from).or_else(|| v.as_u64().map(i128::from)));
                if let Some(i) = exact {
                    out.extend(
                        [i - 1, i, i + 1].into_iter().filter_map(serde_json::Number::from_i128).map(Value::Number),
                    );
                }
                if let Some(n) = keyword(node, k).and_then(Value::as_f64) {
                    for d in [0.0, -1.0, 1.0, -0.5, 0.5, -1000.0, 1000.0] {
                        out.push(number(n + d));
                    }
                    out.push(number(n * 3.0));
                }
            }
            for k in ["minLength", "maxLength"] {
                if let Some(n) = keyword(node, k).and_then(Value::as_u64).filter(|n| *n < 10_000) {
                    for len in [n.saturating_sub(1), n, n + 1] {
                        out.push(Value::String("a".repeat(usize::try_from(len).unwrap_or(0))));
                    }
                }
            }
            for k in ["minItems", "maxItems"] {
                if let Some(n) = keyword(node, k).and_then(Value::as_u64).filter(|n| *n < 1_000) {
                    let item = keyword(from_node, "items").and_then(|i| sample(self.from.document(), i, 0));
                    let item = item.unwrap_or(Value::Null);
                    for len in [n.saturating_sub(1), n, n + 1] {
                        out.extend(repeated(item.clone(), usize::try_from(len).unwrap_or(0)));
                    }
                }
            }
        }
        let item = keyword(from_node, "items").and_then(|i| sample(self.from.document(), i, 0));
        if let Some(item) = item {
            out.push(Value::Array(vec![item.clone(), item]));
        }
        out.extend([
            json!(null),
            json!(true),
            json!(false),
            json!(0),
            json!(1),
            json!(-1),
            json!(0.5),
            // Past the number formats' ranges (`int32`, `uint32`, `float`)
            // and doubles' exact integers.
            json!(2_147_483_648_i64),
            json!(4_294_967_296_i64),
            json!(9_007_199_254_740_992_i64),
            json!(1e39),
            json!(""),
            json!("a"),
            json!("A"),
            json!("0"),
            json!("x y"),
            json!("2026-12-03"),
            json!("2026-12-03T10:00:00Z"),
            json!("user@example.com"),
            json!("https://example.com/"),
            json!("00000000-0000-0000-0000-000000000000"),
            json!("192.0.2.1"),
            json!([]),
            json!({}),
        ]);
        out
    }

    /// Compare a node of `from` with the node of `to` checking the same
    /// values; `steps` is how a reply reaches them.
    fn compare<'v>(&mut self, a: &'v Value, b: &'v Value, steps: &mut Vec<Step<'v>>, depth: usize)
    where
        'c: 'v,
    {
        if json_equal(a, b) && !self.refs_differ(a) {
            return;
        }
        if depth >= MAX_DEPTH {
            let w = self.witness(None, steps, self.candidates(a, b));
            self.report(steps, "the contract nests deeper than vouch diff compares".to_owned(), w);
            return;
        }
        // Under a repair or a default (here or above), a keyword can matter
        // in more ways than its own (an item that no longer fails is no
        // longer dropped, and then too many are kept): no shortcut there.
        // Nor under `unevaluatedProperties`/`unevaluatedItems`: dropping a
        // keyword that evaluated a member leaves it to them.
        let outer = self.guarded;
        self.guarded = outer || repairs(a) || repairs(b) || unevaluated(a) || unevaluated(b);
        crate::deeper(|| self.compare_here(a, b, steps, depth));
        self.guarded = outer;
    }

    /// Whether `schema` (equal in both documents) may still check
    /// differently: a `$ref` in it, followed on through the schemas it
    /// reaches, resolves to schemas that differ between the documents (a
    /// changed definition; `#`, the root, whenever anything changed).
    fn refs_differ(&self, schema: &Value) -> bool {
        if self.differing.is_empty() {
            return false;
        }
        let mut stack = vec![schema];
        while let Some(v) = stack.pop() {
            match v {
                Value::Object(o) => {
                    if let Some(Value::String(r)) = o.get("$ref") {
                        if self.differing.contains(r) {
                            return true;
                        }
                    }
                    stack.extend(o.values());
                }
                Value::Array(items) => stack.extend(items),
                _ => {}
            }
        }
        false
    }

    fn compare_here<'v>(&mut self, a: &'v Value, b: &'v Value, steps: &mut Vec<Step<'v>>, depth: usize)
    where
        'c: 'v,
    {
        let (oa, ob) = (as_object(a), as_object(b));
        let (Some(oa), Some(ob)) = (oa, ob) else {
            // true / false schemas.
            match (a, b) {
                // Nothing was accepted here.
                (Value::Bool(false), _) if !self.guarded => {}
                // Nothing is checked here now, unless the schema dropped
                // repaired or filled what an enclosing keyword then reads
                // (`contains`, `required`, an `enum` of whole objects).
                (_, Value::Null) if !self.guarded && !self.policy_within(a) => {}
                // Everything is accepted now: `true` still refuses an object
                // with an undeclared prototype-named key, so only where no
                // object was accepted before (and nothing was repaired).
                (_, Value::Bool(true)) if !self.guarded && !admits_objects(a) && !self.policy_within(a) => {}
                _ => {
                    let w = self.witness(None, steps, self.candidates(a, b));
                    let (o, n) = self.ordered(a, b);
                    self.report(
                        steps,
                        format!("the schema at {} changed from {} to {}", pointer(steps), shown(o), shown(n)),
                        w,
                    );
                }
            }
            return;
        };
        let at = pointer(steps);
        // $ref: followed into both documents when both refer.
        if oa.contains_key("$ref") || ob.contains_key("$ref") {
            match (ref_target(self.from.document(), a), ref_target(self.to.document(), b)) {
                (Some(ta), Some(tb)) if bare_ref(oa) && bare_ref(ob) => {
                    // Compared once in each setting: a pair met first outside
                    // a repair is compared again under one.
                    let key = (ref_of(a), ref_of(b), self.guarded);
                    if self.seen.insert(key) {
                        self.compare(ta, tb, steps, depth + 1);
                    }
                }
                _ => {
                    let w = self.witness(None, steps, self.candidates(a, b));
                    self.report(
                        steps,
                        format!("a `$ref` changed at {at} (compared only when each side is a bare `$ref`)"),
                        w,
                    );
                }
            }
            return;
        }
        let keys: BTreeSet<&str> = oa.keys().chain(ob.keys()).map(String::as_str).collect();
        // What the node walked from accepts at all: a keyword of another
        // type (an object keyword on an integer) refuses nothing it accepted.
        let types = declared_types(a);
        let applies = |k: &str| match (keyword_type(k), &types) {
            (Some(t), Some(ts)) => ts.iter().any(|d| d == t || (t == "number" && d == "integer")),
            _ => true,
        };
        let mut object_done = false;
        for k in keys {
            let (va, vb) = (oa.get(k), ob.get(k));
            if ANNOTATIONS.contains(&k) || (!applies(k) && !self.guarded) {
                continue;
            }
            // anyOf with as many branches: branch by branch (what matched a
            // branch matches it still where the branch refuses nothing more).
            if k == "anyOf" {
                if let (Some(Value::Array(x)), Some(Value::Array(y))) = (va, vb) {
                    if x.len() == y.len() {
                        for (i, (p, q)) in x.iter().zip(y).enumerate() {
                            // A reply passing a later branch went through this
                            // one first: see `passed_by_type`.
                            let exposed = !self.passed_by_type(i, x, y);
                            let outer = self.guarded;
                            self.guarded = outer || exposed;
                            self.compare(p, q, steps, depth + 1);
                            self.guarded = outer;
                        }
                        continue;
                    }
                }
            }
            if va.is_some_and(|x| vb.is_some_and(|y| json_equal(x, y)))
                && !matches!(k, "properties" | "additionalProperties" | "items" | "patternProperties")
            {
                if self.refs_differ(va.unwrap_or(&Value::Null)) {
                    let w = self.witness(None, steps, self.candidates(a, b));
                    self.report(steps, format!("`{k}` at {at} refers to definitions that changed"), w);
                }
                continue;
            }
            match k {
                "properties" | "additionalProperties" | "patternProperties" | "required" => {
                    if !object_done {
                        object_done = true;
                        self.compare_object(a, b, steps, depth);
                    }
                }
                "items" => {
                    let ia = va.unwrap_or(&ABSENT);
                    let ib = vb.unwrap_or(&ABSENT);
                    if ia.is_array() || ib.is_array() {
                        if !va.is_some_and(|x| vb.is_some_and(|y| json_equal(x, y))) || self.refs_differ(ia) {
                            let w = self.witness(None, steps, self.candidates(a, b));
                            self.report(steps, format!("`items` as a list changed at {at}"), w);
                        }
                    } else if !json_equal(ia, ib) || self.refs_differ(ia) {
                        steps.push(Step::Item(ia));
                        self.compare(ia, ib, steps, depth + 1);
                        steps.pop();
                    }
                }
                _ => self.keyword_changed(k, va, vb, a, b, steps),
            }
        }
    }

    /// `properties`, `patternProperties`, `additionalProperties` and
    /// `required` of one object node, key by key.
    fn compare_object<'v>(&mut self, a: &'v Value, b: &'v Value, steps: &mut Vec<Step<'v>>, depth: usize)
    where
        'c: 'v,
    {
        let at = pointer(steps);
        static EMPTY: std::sync::LazyLock<Map<String, Value>> = std::sync::LazyLock::new(Map::new);
        let props = |s: &'v Value| keyword(s, "properties").and_then(Value::as_object).unwrap_or(&EMPTY);
        let (pa, pb) = (props(a), props(b));
        let pattern_schemas = (keyword(a, "patternProperties"), keyword(b, "patternProperties"));
        let patterns_differ = match pattern_schemas {
            (Some(x), Some(y)) => !json_equal(x, y) || self.refs_differ(x),
            (None, None) => false,
            _ => true,
        };
        if patterns_differ {
            let w = self.witness(None, steps, self.candidates(a, b));
            self.report(steps, format!("`patternProperties` changed at {at}"), w);
            return;
        }
        static TRUE: Value = Value::Bool(true);
        // A key no schema names is refused by `additionalProperties: false`,
        // unless `strip_unknown` drops it (the reply accepted without it).
        // Absent, no schema checks it at all (see [`ABSENT`]).
        let other = |s: &'v Value| {
            if declares(s, "strip_unknown") {
                &TRUE
            } else {
                keyword(s, "additionalProperties").unwrap_or(&ABSENT)
            }
        };
        let (other_a, other_b) = (other(a), other(b));
        // required
        let req = |s: &Value| -> BTreeSet<String> {
            keyword(s, "required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).map(str::to_owned).collect())
                .unwrap_or_default()
        };
        let (ra, rb) = (req(a), req(b));
        for k in rb.difference(&ra) {
            // A reply without `k`: the smallest the old node accepts lacks it (it is not required there).
            let grown = keyword(b, "required").cloned();
            let only = self.only(a, |node| {
                node.insert("required".to_owned(), grown.unwrap_or_else(|| json!([])));
            });
            let w = self.witness(only.as_ref(), steps, sample(self.from.document(), a, 0));
            let words = if self.swapped {
                format!("{at}{}{} is no longer required", if at == "/" { "" } else { "/" }, k)
            } else {
                format!("{at}{}{} became required", if at == "/" { "" } else { "/" }, k)
            };
            self.report(steps, words, w);
        }
        // A prototype-named or invisible-character key is refused wherever
        // the object does not declare it (in `properties` or `required`),
        // whatever `additionalProperties` says: no longer declaring one
        // refuses what was accepted, though it reads as a widening.
        let hazardous: BTreeSet<&String> = pa.keys().chain(&ra).filter(|k| crate::node::hazardous_key(k)).collect();
        for name in hazardous {
            if pb.contains_key(name) || rb.contains(name) {
                continue;
            }
            let mut values = Vec::new();
            if let Some(Value::Object(base)) = sample(self.from.document(), a, 0) {
                let inner = pa.get(name).and_then(|s| sample(self.from.document(), s, 0));
                for v in inner.into_iter().chain([json!(1), json!(null), json!({})]) {
                    let mut one = base.clone();
                    one.insert(name.clone(), v);
                    values.push(Value::Object(one));
                }
            }
            let w = self.witness(None, steps, values);
            let words = if self.swapped {
                format!("the key {name:?} is declared at {at} (it was refused undeclared)")
            } else {
                format!("the key {name:?} is no longer declared at {at}: undeclared, it is refused")
            };
            self.report(steps, words, w);
        }
        // Under a repair (`strip_unknown` drops a key the new contract stops
        // naming, and then `required` misses it), a change of the names is
        // judged on whole objects too.
        let same_names = pa.len() == pb.len() && pa.keys().all(|k| pb.contains_key(k));
        if self.guarded && (!same_names || !json_equal(other_a, other_b) || (ra != rb && rb.is_subset(&ra))) {
            let mut values = Vec::new();
            if let Some(Value::Object(base)) = sample(self.from.document(), a, 0) {
                let mut all = base.clone();
                for (name, schema) in pa {
                    if let Some(v) = sample(self.from.document(), schema, 0) {
                        let mut one = base.clone();
                        one.insert(name.clone(), v.clone());
                        values.push(Value::Object(one));
                        all.insert(name.clone(), v);
                    }
                }
                values.push(Value::Object(all));
            }
            let w = self.witness(None, steps, values);
            let (o, n) = self.ordered(a, b);
            let names = |s: &Value| {
                keyword(s, "properties")
                    .and_then(Value::as_object)
                    .map(|p| p.keys().cloned().collect::<Vec<_>>().join(", "))
                    .unwrap_or_default()
            };
            let (ro, rn) = if self.swapped { (&rb, &ra) } else { (&ra, &rb) };
            let listed = |r: &BTreeSet<String>| r.iter().cloned().collect::<Vec<_>>().join(", ");
            self.report(
                steps,
                format!(
                    "the properties at {at} changed under a repair: named {} → {}, required {} → {}",
                    names(o),
                    names(n),
                    listed(ro),
                    listed(rn)
                ),
                w,
            );
        }
        // Every property either side names, then every other key.
        let names: BTreeSet<&String> = pa.keys().chain(pb.keys()).collect();
        let patterned = keyword(a, "patternProperties").and_then(Value::as_object).is_some_and(|p| !p.is_empty());
        for name in names {
            let sa = pa.get(name).unwrap_or(other_a);
            let sb = pb.get(name).unwrap_or(other_b);
            if patterned && (!pa.contains_key(name) || !pb.contains_key(name)) {
                // Where one side does not name it, a pattern may check it
                // there, not `additionalProperties`: no shortcut.
                steps.push(Step::Key(name.clone(), sa));
                let w = self.witness(None, steps, self.candidates(sa, sb));
                let here = pointer(steps);
                let words = if pa.contains_key(name) != self.swapped {
                    format!("{here} is no longer named (`patternProperties` may check it)")
                } else {
                    format!("{here} is now named (it was checked by `patternProperties` or `additionalProperties`)")
                };
                self.report(steps, words, w);
                steps.pop();
                continue;
            }
            if json_equal(sa, sb) && !self.refs_differ(sa) {
                continue;
            }
            steps.push(Step::Key(name.clone(), sa));
            if matches!(sb, Value::Bool(false)) && !matches!(sa, Value::Bool(false)) {
                let here = pointer(steps);
                let closed = keyword(b, "additionalProperties").cloned();
                let only = self.only(a, |node| {
                    if let Some(Value::Object(p)) = node.get_mut("properties") {
                        p.remove(name.as_str());
                    }
                    if let Some(c) = closed {
                        node.insert("additionalProperties".to_owned(), c);
                    }
                });
                let w = self.witness(only.as_ref(), steps, self.candidates(sa, sb));
                let words = if self.swapped {
                    format!("{here} is allowed again (it was refused)")
                } else if pa.contains_key(name) {
                    format!("{here} removed from a closed object")
                } else {
                    format!("{here} is refused (additional properties closed)")
                };
                self.report(steps, words, w);
            } else {
                self.compare(sa, sb, steps, depth + 1);
            }
            steps.pop();
        }
        if !json_equal(other_a, other_b) || self.refs_differ(other_a) {
            // A key neither side names: the first free one.
            let mut key = "extra".to_owned();
            let mut i = 0;
            while pa.contains_key(&key) || pb.contains_key(&key) {
                i += 1;
                key = format!("extra{i}");
            }
            if matches!(other_b, Value::Bool(false)) && !matches!(other_a, Value::Bool(false)) {
                steps.push(Step::Key(key, other_a));
                let only = self.only(a, |node| {
                    node.insert("additionalProperties".to_owned(), Value::Bool(false));
                });
                let w = self.witness(only.as_ref(), steps, self.candidates(other_a, other_b));
                steps.pop();
                let words = if self.swapped {
                    format!("additional properties opened at {at}")
                } else {
                    format!("additional properties closed at {at}")
                };
                self.report(steps, words, w);
            } else {
                steps.push(Step::Key(key, other_a));
                self.compare(other_a, other_b, steps, depth + 1);
                steps.pop();
            }
        }
    }

    /// One keyword that differs between two nodes (`None`: absent).
    fn keyword_changed(
        &mut self,
        k: &str,
        va: Option<&Value>,
        vb: Option<&Value>,
        a: &Value,
        b: &Value,
        steps: &[Step<'_>],
    ) {
        let at = pointer(steps);
        let (o, n) = self.ordered_opt(va, vb);
        let words = match k {
            "enum" => enum_words(o, n, &at),
            "x-vouch" => policy_words(policy_of(o), policy_of(n), &at),
            _ => format!("{k} {} → {} at {at}", opt(o), opt(n)),
        };
        // Moves that only widen what is accepted here refuse nothing that was
        // accepted; unless a repair or default is declared here, which reads
        // the node's keywords (a bound to clamp to, a type to coerce to):
        // then only a search for a witness tells.
        // A subschema dropped with a repair or a default in it no longer
        // repairs or fills; an `anyOf` branch kept may refer to a changed
        // definition.
        let carries_policy = va.is_some_and(|v| self.policy_within(v));
        if widens(k, va, vb) && !self.guarded && !carries_policy && !va.is_some_and(|v| self.refs_differ(v)) {
            return;
        }
        let only = self.only(a, |node| match vb {
            Some(v) => {
                node.insert(k.to_owned(), v.clone());
            }
            None => {
                node.remove(k);
            }
        });
        let mut w = self.witness(only.as_ref(), steps, self.candidates(a, b));
        if w.is_none() && k == "x-vouch" {
            w = self.text_witness(only.as_ref(), policy_texts(self.from.document(), steps, a));
        }
        self.report(steps, words, w);
    }

    /// Whether `schema` (of the document walked from), or a schema it
    /// reaches through `$ref`s, declares a repair or a default: dropped, it
    /// no longer repairs or fills what enclosing keywords read.
    fn policy_within(&self, schema: &Value) -> bool {
        let root = self.from.document();
        let mut followed = BTreeSet::new();
        let mut stack = vec![schema];
        while let Some(v) = stack.pop() {
            match v {
                Value::Object(o) => {
                    if repairs(v) {
                        return true;
                    }
                    if let Some(Value::String(r)) = o.get("$ref") {
                        if followed.insert(r.as_str()) {
                            stack.extend(resolve(root, r));
                        }
                    }
                    stack.extend(o.values());
                }
                Value::Array(items) => stack.extend(items),
                _ => {}
            }
        }
        false
    }

    /// Whether branch `i` of an `anyOf` (`x` walked from, `y` to) is passed
    /// over at its `type` by every reply a later branch passes, in both
    /// contracts: its types the same on both sides, and no later branch's
    /// shared with them. The check tests `type` before anything else, so
    /// such a reply meets nothing in branch `i`, however it widened. (Else a
    /// widened branch `i` may take it further than it went, to a refusal no
    /// later branch undoes: a consumer-safety hazard, or the bound on a
    /// check's steps.)
    fn passed_by_type(&self, i: usize, x: &[Value], y: &[Value]) -> bool {
        let (from, to) = (self.from.document(), self.to.document());
        let (Some(p), Some(q)) = (x.get(i), y.get(i)) else { return false };
        let (Some(mine), Some(theirs)) = (types_through_refs(from, p), types_through_refs(to, q)) else {
            return false;
        };
        let set = |ts: &[String]| ts.iter().cloned().collect::<BTreeSet<String>>();
        if set(&mine) != set(&theirs) {
            return false;
        }
        let overlaps = |t: &String, u: &String| {
            t == u || matches!((t.as_str(), u.as_str()), ("integer", "number") | ("number", "integer"))
        };
        let mut later = x
            .iter()
            .skip(i + 1)
            .map(|s| types_through_refs(from, s))
            .chain(y.iter().skip(i + 1).map(|s| types_through_refs(to, s)));
        later.all(|ts| ts.is_some_and(|ts| !ts.iter().any(|t| mine.iter().any(|m| overlaps(t, m)))))
    }

    fn ordered_opt<'v>(&self, a: Option<&'v Value>, b: Option<&'v Value>) -> (Option<&'v Value>, Option<&'v Value>) {
        if self.swapped {
            (b, a)
        } else {
            (a, b)
        }
    }
}

fn opt(v: Option<&Value>) -> String {
    v.map_or_else(|| "(none)".to_owned(), shown)
}

fn policy_of(v: Option<&Value>) -> &Value {
    v.unwrap_or(&Value::Null)
}

fn enum_words(o: Option<&Value>, n: Option<&Value>, at: &str) -> String {
    let members = |v: Option<&Value>| v.and_then(Value::as_array).cloned().unwrap_or_default();
    let (mo, mn) = (members(o), members(n));
    let removed: Vec<String> = mo.iter().filter(|m| !mn.iter().any(|x| json_equal(m, x))).map(shown).collect();
    let added: Vec<String> = mn.iter().filter(|m| !mo.iter().any(|x| json_equal(m, x))).map(shown).collect();
    match (o.is_some(), n.is_some()) {
        (false, true) => format!("an enum ({}) now restricts {at}", added.join(", ")),
        (true, false) => format!("the enum at {at} was dropped"),
        _ => {
            let mut parts = Vec::new();
            if !removed.is_empty() {
                parts.push(format!("{} removed from the enum at {at}", removed.join(", ")));
            }
            if !added.is_empty() {
                parts.push(format!("{} added to the enum at {at}", added.join(", ")));
            }
            parts.join("; ")
        }
    }
}

/// The policy's declared repairs (the `repair` list and the other keys).
fn policy_words(o: &Value, n: &Value, at: &str) -> String {
    let names = |p: &Value| -> BTreeSet<String> {
        let mut s = BTreeSet::new();
        if let Some(obj) = p.as_object() {
            for (k, v) in obj {
                match v {
                    Value::Array(items) if k == "repair" => {
                        s.extend(items.iter().map(|i| i.as_str().map_or_else(|| i.to_string(), str::to_owned)));
                    }
                    _ => {
                        s.insert(k.clone());
                    }
                }
            }
        }
        s
    };
    let (no, nn) = (names(o), names(n));
    let gone: Vec<String> = no.difference(&nn).map(|x| format!("`{x}`")).collect();
    let new: Vec<String> = nn.difference(&no).map(|x| format!("`{x}`")).collect();
    let mut parts = Vec::new();
    if !gone.is_empty() {
        parts.push(format!("{} no longer declared at {at}", gone.join(", ")));
    }
    if !new.is_empty() {
        parts.push(format!("{} newly declared at {at}", new.join(", ")));
    }
    if parts.is_empty() {
        parts.push(format!("the x-vouch policy at {at} changed: {} → {}", shown(o), shown(n)));
    }
    parts.join("; ")
}

/// Replies as models write them when a policy would have repaired them:
/// the smallest accepted reply with the node's value as a string, rounded,
/// out of range, missing; the whole in a fence, after prose.
fn policy_texts(root: &Value, steps: &[Step<'_>], node: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let Some(base) = sample(root, root, 0) else { return out };
    if let Some(v) = sample(root, node, 0) {
        let mut values =
            vec![Value::String(v.to_string()), Value::String(format!(" {} ", v.as_str().unwrap_or_default()))];
        if let Some(n) = v.as_f64() {
            values.extend([number(n + 0.4), number(n + 1e6), number(n - 1e6)]);
        }
        for value in values {
            if let Some(r) = place(root, steps, value) {
                out.push(r.to_string());
            }
        }
    }
    // The node's property missing (a default would have filled it).
    if let Some((Step::Key(k, _), rest)) = steps.split_last() {
        if let Some(Value::Object(mut o)) = place_parent(root, rest) {
            o.remove(k);
            if let Some(r) = place(root, rest, Value::Object(o)) {
                out.push(r.to_string());
            }
        }
    }
    let text = base.to_string();
    out.push(format!("```json\n{text}\n```"));
    out.push(format!("Here is the answer: {text}"));
    out
}

/// Whether a keyword's move from `a` (walked from) to `b` only widens what
/// a node accepts.
fn widens(k: &str, a: Option<&Value>, b: Option<&Value>) -> bool {
    // Bounds compared exactly, as the check compares them: as doubles,
    // 2^53 and 2^53 + 1 would be one bound.
    fn num(v: Option<&Value>) -> Option<&serde_json::Number> {
        match v {
            Some(Value::Number(n)) => Some(n),
            _ => None,
        }
    }
    let at_most =
        |x: &serde_json::Number, y: &serde_json::Number| crate::decimal::cmp(x, y) != std::cmp::Ordering::Greater;
    match k {
        "enum" => match (a.and_then(Value::as_array), b.and_then(Value::as_array)) {
            (_, None) => b.is_none(),
            (Some(x), Some(y)) => x.iter().all(|m| y.iter().any(|n| json_equal(m, n))),
            (None, Some(_)) => false,
        },
        "const" => b.is_none(),
        "type" => {
            let set = |v: Option<&Value>| -> Option<BTreeSet<String>> {
                match v? {
                    Value::String(s) => Some([s.clone()].into()),
                    Value::Array(items) => Some(items.iter().filter_map(Value::as_str).map(str::to_owned).collect()),
                    _ => None,
                }
            };
            match (set(a), set(b)) {
                (_, None) => b.is_none(),
                (None, Some(_)) => false,
                (Some(x), Some(y)) => x.iter().all(|t| y.contains(t) || (t == "integer" && y.contains("number"))),
            }
        }
        "minimum" | "exclusiveMinimum" | "minLength" | "minItems" | "minProperties" => match (num(a), num(b)) {
            (_, None) => b.is_none(),
            (Some(x), Some(y)) => at_most(y, x),
            (None, Some(_)) => false,
        },
        "maximum" | "exclusiveMaximum" | "maxLength" | "maxItems" | "maxProperties" => match (num(a), num(b)) {
            (_, None) => b.is_none(),
            (Some(x), Some(y)) => at_most(x, y),
            (None, Some(_)) => false,
        },
        "uniqueItems" => b.and_then(Value::as_bool) != Some(true),
        "pattern" | "format" | "contentEncoding" | "multipleOf" | "not" | "allOf" | "if" | "contains"
        | "propertyNames" => b.is_none(),
        "anyOf" => match (a.and_then(Value::as_array), b.and_then(Value::as_array)) {
            // The old branches first, in their order, the new ones after:
            // `anyOf` stops at the first branch that passes, so what an old
            // branch passed never reaches a new one. (A new branch tried
            // first could meet a consumer-safety hazard, which refuses the
            // reply whatever a later branch says.)
            (Some(x), Some(y)) => x.len() <= y.len() && x.iter().zip(y).all(|(m, n)| json_equal(m, n)),
            (_, None) => b.is_none(),
            (None, Some(_)) => false,
        },
        _ => false,
    }
}

/// Whether a node's policy declares a repair or a default.
fn repairs(schema: &Value) -> bool {
    keyword(schema, "x-vouch").and_then(Value::as_object).is_some_and(|p| {
        p.contains_key("default") || p.get("repair").and_then(Value::as_array).is_some_and(|r| !r.is_empty())
    })
}

/// The first reference in `root` that the walk does not follow (see
/// [`ref_target`]), named for the report: a `$ref` other than `#`,
/// `#/$defs/…` or `#/definitions/…`; any `$dynamicRef` or `$recursiveRef`;
/// an anchor; an `$id` below the root (it changes what `#/$defs/…` means
/// beneath it; `id` in draft 4). Read over the whole document, data
/// included (`enum`, `const`): a false alarm there costs a decision, never
/// a wrong one.
fn unfollowed_reference(root: &Value) -> Option<String> {
    let draft4 = keyword(root, "$schema").and_then(Value::as_str).is_some_and(|s| s.contains("draft-04"));
    let mut stack = vec![(root, true)];
    while let Some((v, at_root)) = stack.pop() {
        match v {
            Value::Object(o) => {
                for (k, x) in o {
                    let found = match (k.as_str(), x) {
                        ("$ref", Value::String(r)) => {
                            let followed = r == "#" || r.starts_with("#/$defs/") || r.starts_with("#/definitions/");
                            (!followed).then(|| format!("`$ref` {}", shown(x)))
                        }
                        ("$dynamicRef" | "$recursiveRef" | "$anchor" | "$dynamicAnchor", Value::String(_))
                        | ("$recursiveAnchor", Value::Bool(true)) => Some(format!("`{k}`")),
                        ("$id", Value::String(_)) if !at_root => Some("an `$id` below the root".to_owned()),
                        ("id", Value::String(_)) if draft4 && !at_root => Some("an `id` below the root".to_owned()),
                        _ => None,
                    };
                    if found.is_some() {
                        return found;
                    }
                    stack.push((x, false));
                }
            }
            Value::Array(items) => stack.extend(items.iter().map(|x| (x, false))),
            _ => {}
        }
    }
    None
}

/// Whether a node declares `unevaluatedProperties` or `unevaluatedItems`.
fn unevaluated(schema: &Value) -> bool {
    keyword(schema, "unevaluatedProperties").is_some() || keyword(schema, "unevaluatedItems").is_some()
}

/// Whether `schema` may accept an object (`false`, or a `type` without
/// `object`, may not).
fn admits_objects(schema: &Value) -> bool {
    match schema {
        Value::Bool(false) => false,
        Value::Object(_) => declared_types(schema).is_none_or(|ts| ts.iter().any(|t| t == "object")),
        _ => true,
    }
}

/// The types a node admits by its `type` (and OpenAPI's `nullable`),
/// through a chain of bare `$ref`s (`None`: any, or not known).
fn types_through_refs(root: &Value, schema: &Value) -> Option<Vec<String>> {
    let mut node = schema;
    for _ in 0..16 {
        match node.as_object() {
            Some(o) if bare_ref(o) => node = ref_target(root, node)?,
            _ => {
                let mut types = declared_types(node)?;
                if keyword(node, "nullable") == Some(&Value::Bool(true)) {
                    types.push("null".to_owned());
                }
                return Some(types);
            }
        }
    }
    None
}

/// Whether a node's policy declares this repair rule.
fn declares(schema: &Value, rule: &str) -> bool {
    keyword(schema, "x-vouch")
        .and_then(|p| p.get("repair"))
        .and_then(Value::as_array)
        .is_some_and(|r| r.iter().any(|x| x.as_str() == Some(rule)))
}

/// The types a node declares (`None`: any).
fn declared_types(schema: &Value) -> Option<Vec<String>> {
    match keyword(schema, "type")? {
        Value::String(t) => Some(vec![t.clone()]),
        Value::Array(ts) => Some(ts.iter().filter_map(Value::as_str).map(str::to_owned).collect()),
        _ => None,
    }
}

/// The one type of value a keyword tests (`None`: it tests every value).
fn keyword_type(k: &str) -> Option<&'static str> {
    Some(match k {
        "properties"
        | "additionalProperties"
        | "patternProperties"
        | "required"
        | "minProperties"
        | "maxProperties"
        | "propertyNames"
        | "dependentRequired"
        | "dependentSchemas"
        | "unevaluatedProperties" => "object",
        "items" | "prefixItems" | "minItems" | "maxItems" | "uniqueItems" | "contains" | "minContains"
        | "maxContains" | "unevaluatedItems" => "array",
        // Not `format`: vouch asserts `int32`, `float`… on numbers too.
        "minLength" | "maxLength" | "pattern" => "string",
        "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" | "multipleOf" => "number",
        _ => return None,
    })
}

/// The JSON Pointer of `target` (a node of `root`, found by address).
fn pointer_of(root: &Value, target: &Value) -> Option<String> {
    let mut stack = vec![(root, String::new())];
    while let Some((v, at)) = stack.pop() {
        if std::ptr::eq(v, target) {
            return Some(at);
        }
        match v {
            Value::Object(o) => {
                stack.extend(o.iter().map(|(k, c)| (c, format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")))));
            }
            Value::Array(items) => stack.extend(items.iter().enumerate().map(|(i, c)| (c, format!("{at}/{i}")))),
            _ => {}
        }
    }
    None
}

fn as_object(v: &Value) -> Option<&Map<String, Value>> {
    match v {
        Value::Object(o) => Some(o),
        _ => None,
    }
}

fn number(n: f64) -> Value {
    if n.fract() == 0.0 && n.abs() < 9.0e15 {
        #[allow(clippy::cast_possible_truncation)]
        return json!(n as i64);
    }
    serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number)
}

/// A `$ref` with nothing beside it but annotations (`$defs`, `title`…).
fn bare_ref(o: &Map<String, Value>) -> bool {
    o.keys().all(|k| k == "$ref" || ANNOTATIONS.contains(&k.as_str()))
}

fn ref_of(s: &Value) -> String {
    keyword(s, "$ref").and_then(Value::as_str).unwrap_or_default().to_owned()
}

/// Every `$ref` of either document that resolves to schemas that differ
/// between them, directly (the two targets differ, or one does not
/// resolve) or through the references inside its target, followed to a
/// fixpoint. Worked out once for a comparison: asked per node, it would
/// compare a shared definition again at every place that refers to it
/// (4,000 definitions sharing one of 4,000 properties took 14 s).
fn differing_references(old: &Value, new: &Value) -> BTreeSet<String> {
    fn refs_in<'v>(root: &'v Value, into: &mut BTreeSet<&'v str>) {
        let mut stack = vec![root];
        while let Some(v) = stack.pop() {
            match v {
                Value::Object(o) => {
                    if let Some(Value::String(r)) = o.get("$ref") {
                        into.insert(r.as_str());
                    }
                    stack.extend(o.values());
                }
                Value::Array(items) => stack.extend(items),
                _ => {}
            }
        }
    }
    if json_equal(old, new) {
        return BTreeSet::new();
    }
    let mut all = BTreeSet::new();
    refs_in(old, &mut all);
    refs_in(new, &mut all);
    let mut differing: BTreeSet<&str> = BTreeSet::new();
    // For each reference whose targets are equal: the references inside them.
    let mut inner: Vec<(&str, BTreeSet<&str>)> = Vec::new();
    for r in &all {
        match (resolve(old, r), resolve(new, r)) {
            (Some(x), Some(y)) if json_equal(x, y) => {
                let mut within = BTreeSet::new();
                refs_in(x, &mut within);
                inner.push((r, within));
            }
            // Not a pointer into either document: see `unfollowed_reference`.
            (None, None) => {}
            _ => {
                differing.insert(r);
            }
        }
    }
    loop {
        let before = differing.len();
        for (r, within) in &inner {
            if !differing.contains(r) && within.iter().any(|w| differing.contains(w)) {
                differing.insert(r);
            }
        }
        if differing.len() == before {
            break;
        }
    }
    differing.into_iter().map(str::to_owned).collect()
}

/// A local `$ref` (`#/$defs/…`, `#/definitions/…`, `#`) resolved in `root`.
fn ref_target<'v>(root: &'v Value, s: &Value) -> Option<&'v Value> {
    resolve(root, keyword(s, "$ref")?.as_str()?)
}

/// A local reference `#…` resolved in `root`: its fragment percent-decoded
/// (`#/$defs/a%20b` is the definition `a b`, as the check reads it), then
/// read as a JSON Pointer.
fn resolve<'v>(root: &'v Value, r: &str) -> Option<&'v Value> {
    let p = r.strip_prefix('#')?;
    if p.is_empty() {
        return Some(root);
    }
    let mut bytes = Vec::with_capacity(p.len());
    let mut rest = p.as_bytes();
    while let Some((&b, tail)) = rest.split_first() {
        if b == b'%' {
            let hex = std::str::from_utf8(tail.get(..2)?).ok()?;
            bytes.push(u8::from_str_radix(hex, 16).ok()?);
            rest = tail.get(2..)?;
        } else {
            bytes.push(b);
            rest = tail;
        }
    }
    root.pointer(&String::from_utf8(bytes).ok()?)
}

/// Values a sample may hold in all: nested `minItems` multiply, and a
/// contract must not make the comparison build a tree too big to hold.
const MAX_SAMPLE_VALUES: usize = 100_000;

/// `n` copies of `item` in an array, if that stays within [`MAX_SAMPLE_VALUES`].
fn repeated(item: Value, n: usize) -> Option<Value> {
    let mut count = 0usize;
    let mut stack = vec![&item];
    while let Some(v) = stack.pop() {
        count += 1;
        if count > MAX_SAMPLE_VALUES {
            return None;
        }
        match v {
            Value::Array(items) => stack.extend(items),
            Value::Object(o) => stack.extend(o.values()),
            _ => {}
        }
    }
    (count.saturating_mul(n) <= MAX_SAMPLE_VALUES).then(|| Value::Array(vec![item; n]))
}

/// The smallest value `schema` accepts, as far as its keywords tell
/// (checked by the caller: a wrong guess only means no witness).
fn sample(root: &Value, schema: &Value, depth: usize) -> Option<Value> {
    let mut sampling = Sampling { following: Vec::new(), made: 0 };
    sampling.sample(root, schema, depth)
}

/// One [`sample`] being made.
struct Sampling<'v> {
    /// The `$ref` targets being sampled, outermost first: a reference back
    /// into one of them is a way the sample does not take (an optional
    /// child of a tree is sampled as its other branch, `null`, not as
    /// another tree, which would double at each level).
    following: Vec<&'v Value>,
    /// Values made so far, bounded by [`MAX_SAMPLE_VALUES`].
    made: usize,
}

impl<'v> Sampling<'v> {
    fn sample(&mut self, root: &'v Value, schema: &'v Value, depth: usize) -> Option<Value> {
        self.made += 1;
        if depth > MAX_DEPTH || self.made > MAX_SAMPLE_VALUES {
            return None;
        }
        crate::deeper(|| self.sample_here(root, schema, depth))
    }

    fn sample_here(&mut self, root: &'v Value, schema: &'v Value, depth: usize) -> Option<Value> {
        static ANY: Value = Value::Bool(true);
        let o = match schema {
            Value::Bool(true) => return Some(Value::Null),
            Value::Object(o) => o,
            _ => return None,
        };
        if let Some(c) = o.get("const") {
            return Some(c.clone());
        }
        if let Some(Value::Array(e)) = o.get("enum") {
            return e.first().cloned();
        }
        if o.contains_key("$ref") {
            let target = ref_target(root, schema)?;
            if self.following.iter().any(|t| std::ptr::eq(*t, target)) {
                return None;
            }
            self.following.push(target);
            let v = self.sample(root, target, depth + 1);
            self.following.pop();
            return v;
        }
        for k in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = o.get(k) {
                return branches.iter().find_map(|b| self.sample(root, b, depth + 1));
            }
        }
        let ty = match o.get("type") {
            Some(Value::String(t)) => t.clone(),
            Some(Value::Array(ts)) => ts.first().and_then(Value::as_str).unwrap_or("null").to_owned(),
            _ if o.contains_key("properties") || o.contains_key("required") => "object".to_owned(),
            _ if o.contains_key("items") => "array".to_owned(),
            _ => "null".to_owned(),
        };
        let num = |k: &str| o.get(k).and_then(Value::as_f64);
        Some(match ty.as_str() {
            "object" => {
                let mut out = Map::new();
                let props = o.get("properties").and_then(Value::as_object);
                for r in o.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str) {
                    let s = props.and_then(|p| p.get(r)).unwrap_or(&ANY);
                    out.insert(r.to_owned(), self.sample(root, s, depth + 1)?);
                }
                Value::Object(out)
            }
            "array" => {
                let n = usize::try_from(o.get("minItems").and_then(Value::as_u64).unwrap_or(0).min(100)).unwrap_or(0);
                let item = match o.get("items") {
                    Some(i) => self.sample(root, i, depth + 1)?,
                    None => Value::Null,
                };
                repeated(item, n)?
            }
            "string" => Value::String("a".repeat(
                usize::try_from(o.get("minLength").and_then(Value::as_u64).unwrap_or(0).min(10_000)).unwrap_or(0),
            )),
            "integer" | "number" => {
                let lo = num("minimum").or_else(|| num("exclusiveMinimum").map(|m| m.floor() + 1.0));
                let hi = num("maximum").or_else(|| num("exclusiveMaximum").map(|m| m.ceil() - 1.0));
                number(match (lo, hi) {
                    (Some(l), _) => l.ceil(),
                    (None, Some(h)) => h.floor().min(0.0),
                    _ => 0.0,
                })
            }
            "boolean" => Value::Bool(false),
            _ => Value::Null,
        })
    }
}

/// The smallest reply `root` accepts with `value` at `steps` (each step's
/// container built from its schema where the smallest one lacks it).
fn place(root: &Value, steps: &[Step<'_>], value: Value) -> Option<Value> {
    let mut whole = sample(root, root, 0)?;
    let mut here = &mut whole;
    let mut parent_schema = root;
    for step in steps {
        match step {
            Step::Key(k, schema) => {
                if !here.is_object() {
                    *here = sample(root, parent_schema, 0).filter(Value::is_object).unwrap_or_else(|| json!({}));
                }
                let map = here.as_object_mut()?;
                if !map.contains_key(k) {
                    map.insert(k.clone(), sample(root, schema, 0).unwrap_or(Value::Null));
                }
                here = map.get_mut(k)?;
                parent_schema = schema;
            }
            Step::Item(schema) => {
                if !here.is_array() {
                    *here = json!([]);
                }
                let items = here.as_array_mut()?;
                if items.is_empty() {
                    items.push(sample(root, schema, 0).unwrap_or(Value::Null));
                }
                here = items.first_mut()?;
                parent_schema = schema;
            }
        }
    }
    *here = value;
    Some(whole)
}

/// The value at the end of `steps` in the smallest reply (see [`place`]).
fn place_parent(root: &Value, steps: &[Step<'_>]) -> Option<Value> {
    let schema = match steps.last() {
        Some(Step::Key(_, s) | Step::Item(s)) => *s,
        None => root,
    };
    sample(root, schema, 0)
}
