//! Declared repairs: small, predictable changes a contract allows on
//! cosmetic fields, each logged with path, rule, before and after.
//!
//! The pass runs before the check, over the value being kept. At each node
//! the order is: `default` (for null), `coerce`, `round`, `clamp`, `trim`,
//! `enum_case`, `truncate`, `strip_unknown`, then the node's `$ref`/`allOf`
//! targets and its children (filling missing properties that declare a
//! default), then `drop_invalid_items`, then `default_if_invalid`. Nothing is
//! repaired unless the contract declares it; a node without policy is only
//! walked through. Truncated or unreadable replies never get here.

use serde_json::{Number, Value};

use crate::check::is_valid;
use crate::node::{is_integer, Node, NodeId, Rules, Types};
use crate::pointer;
use crate::problem::{bounded, bounded_as, bounded_items, display_path, excerpt, Repair};

pub(crate) struct Repairer<'c> {
    nodes: &'c [Node],
    pub log: Vec<Repair>,
    path: String,
    /// Repairs made so far, those later taken back included (a value
    /// replaced whole, an item dropped): what the cap counts.
    made: usize,
    /// Most repairs this repairer may make.
    budget: usize,
    /// Where the repair past the budget was wanted: the repairer stopped
    /// there, repairing and logging nothing more (the value is half
    /// repaired and must not be used).
    over: Option<String>,
    /// Nodes walked, and the bound on them (set on the first walk, by the
    /// value's size, as the checker's: `$ref`s and `allOf`s of the same
    /// schema would otherwise double the walk at each link).
    steps: u64,
    most_steps: Option<u64>,
    /// The walk passed its bound (`over` holds where): the reply is refused
    /// `too_complex`, not `too_many_repairs`.
    tangled: bool,
}

impl<'c> Repairer<'c> {
    /// A repairer without a cap (for values the contract itself holds:
    /// defaults, fills).
    pub fn new(nodes: &'c [Node]) -> Self {
        Self::with_budget(nodes, usize::MAX)
    }

    /// A repairer that makes at most `budget` repairs, then stops.
    pub fn with_budget(nodes: &'c [Node], budget: usize) -> Self {
        Self {
            nodes,
            log: Vec::new(),
            path: String::new(),
            made: 0,
            budget,
            over: None,
            steps: 0,
            most_steps: None,
            tangled: false,
        }
    }

    /// Repairs made, those taken back included (see [`Self::made`]).
    pub fn made(&self) -> usize {
        self.made
    }

    /// Where the repairer stopped at its budget, if it did.
    pub fn over(&self) -> Option<&str> {
        self.over.as_deref()
    }

    /// The bound on steps the walk stopped at, if it did (see [`Self::over`]).
    pub fn tangled(&self) -> Option<u64> {
        self.most_steps.filter(|_| self.tangled)
    }

    /// Count one repair against the budget: false (and stopped) past it.
    fn spend(&mut self) -> bool {
        if self.over.is_some() {
            return false;
        }
        if self.made >= self.budget {
            self.over = Some(self.path.clone());
            return false;
        }
        self.made += 1;
        true
    }

    fn record(&mut self, rule: &str, before: &Value, after: &Value, what: String) {
        self.record_bounded(rule, bounded(before), bounded(after), what);
    }

    /// [`Self::record`] of a scalar changed into another, said as
    /// "BEFORE `verb` AFTER" (each excerpt written once, for the message
    /// and the bounded copies both).
    fn record_changed(&mut self, rule: &str, before: &Value, after: &Value, verb: &str) {
        let (was, now) = (excerpt(before), excerpt(after));
        let what = format!("{was} {verb} {now}");
        self.record_bounded(rule, bounded_as(before, &was), bounded_as(after, &now), what);
    }

    /// [`Self::record`] with `before` and `after` already [`bounded`].
    fn record_bounded(&mut self, rule: &str, before: Value, after: Value, what: String) {
        self.log.push(Repair {
            path: self.path.clone(),
            rule: rule.to_owned(),
            before,
            after,
            message: format!("{}: {what}", display_path(&self.path)),
        });
    }

    /// The default declared on `id`, following `$ref`s.
    fn default_of(&self, id: NodeId) -> Option<&'c Value> {
        default_of(self.nodes, id)
    }

    /// The first repair the contract's repairs make to `value` at node `id`
    /// (its message), or `None` when the value is final. One bounded pass:
    /// nothing inserted from a default is repaired again.
    pub fn first_repair(nodes: &[Node], id: NodeId, value: &Value) -> Option<String> {
        let mut r = Repairer::new(nodes);
        let mut v = value.clone();
        r.repair(id, &mut v);
        match r.log.into_iter().next() {
            Some(first) => Some(first.message),
            None => (v != *value).then(|| "it changes".to_owned()),
        }
    }

    pub fn repair(&mut self, id: NodeId, v: &mut Value) {
        crate::deeper(|| self.repair_here(id, v));
    }

    fn repair_here(&mut self, id: NodeId, v: &mut Value) {
        let Some(n) = self.nodes.get(id) else { return };
        // Nothing below declares a repair: nothing to walk. Past the
        // budget, nothing more is repaired.
        if !n.policy_below || self.over.is_some() {
            return;
        }
        let most = *self.most_steps.get_or_insert_with(|| crate::check::step_bound(v));
        self.steps = self.steps.saturating_add(1);
        if self.steps > most {
            self.over = Some(self.path.clone());
            self.tangled = true;
            return;
        }
        let rules = n.policy.as_ref().map(|p| p.rules).unwrap_or_default();
        let default = n.policy.as_ref().and_then(|p| p.default.as_ref());
        let start = self.log.len();
        // What the value was, as the log shows it (bounded: a value replaced
        // whole is not copied whole, at every level of a deep reply).
        // A scalar is kept as it is (cheap), its excerpt written only if needed.
        let original = rules.default_if_invalid.then(|| {
            if v.is_array() || v.is_object() {
                let shown = excerpt(v);
                (bounded_as(v, &shown), Some(shown))
            } else {
                (v.clone(), None)
            }
        });

        if let Some(d) = default {
            if v.is_null() && !n.types.is_some_and(|t| t.contains(Types::NULL)) {
                if d.is_null() {
                    // `null` replaced by the default `null` is no repair.
                    return;
                }
                if !self.spend() {
                    return;
                }
                self.record("default", v, d, format!("null replaced by the default {}", excerpt(d)));
                *v = d.clone();
                // A default is final (checked at compile time): never repair
                // inside a value just inserted, so no default can fill itself.
                return;
            }
        }
        self.scalar_rules(n, rules, v);
        for target in n.reference.iter().chain(&n.all_of) {
            self.repair(*target, v);
        }
        self.children(n, rules, v);
        if self.over.is_some() {
            return;
        }
        if rules.default_if_invalid && !is_valid(self.nodes, id, v) {
            if let (Some(d), Some((before, shown))) = (default, original) {
                let shown = shown.unwrap_or_else(|| excerpt(&before));
                let before = bounded_as(&before, &shown);
                // The value is replaced whole; the repairs inside it no longer describe it.
                self.log.truncate(start);
                if !shown.ends_with('…') && before == *d {
                    // Replaced by what it was: no repair, nothing to log.
                    // (Only a value short enough to be its own bounded copy.)
                    *v = before;
                    return;
                }
                if !self.spend() {
                    return;
                }
                let what = format!("{shown} is invalid, replaced by the default {}", excerpt(d));
                self.record_bounded("default_if_invalid", before, bounded(d), what);
                *v = d.clone();
            }
        }
    }

    fn scalar_rules(&mut self, n: &Node, rules: Rules, v: &mut Value) {
        let types = n.types.unwrap_or_default();
        if rules.coerce {
            if let Value::String(s) = &*v {
                let coerced = if types.contains(Types::NUMBER) || types.contains(Types::INTEGER) {
                    let integers =
                        if n.exact_integers { crate::read::Integers::AsDoubles } else { crate::read::Integers::Wide };
                    parse_number(s.trim(), integers).map(Value::Number)
                } else {
                    match s.as_str() {
                        "true" => Some(Value::Bool(true)),
                        "false" => Some(Value::Bool(false)),
                        _ => None,
                    }
                };
                if let Some(c) = coerced.filter(|_| self.spend()) {
                    self.record_changed("coerce", v, &c, "coerced to");
                    *v = c;
                }
            }
        }
        if rules.round {
            if let Value::Number(x) = &*v {
                if !is_integer(x) {
                    if let Some(r) = x.as_f64().map(f64::round).and_then(float_to_number).filter(|_| self.spend()) {
                        let after = Value::Number(r);
                        self.record_changed("round", v, &after, "rounded to");
                        *v = after;
                    }
                }
            }
        }
        if rules.clamp {
            if let Value::Number(x) = &*v {
                if let Some(c) = clamp(n, x).filter(|_| self.spend()) {
                    let after = Value::Number(c);
                    self.record_changed("clamp", v, &after, "clamped to");
                    *v = after;
                }
            }
        }
        if let Value::String(s) = v {
            if rules.trim {
                let t = s.trim();
                if t.len() != s.len() && self.spend() {
                    let before = Value::String(s.clone());
                    *s = t.to_owned();
                    let after = Value::String(s.clone());
                    self.record("trim", &before, &after, "leading and trailing white space trimmed".into());
                }
            }
        }
        if rules.enum_case {
            if let (Value::String(s), Some(members)) = (&*v, &n.enumeration) {
                if !members.iter().any(|m| m.as_str() == Some(s)) {
                    let lower = s.to_lowercase();
                    let mut hits = members.iter().filter(|m| m.as_str().is_some_and(|m| m.to_lowercase() == lower));
                    if let (Some(hit), None, true) = (hits.next(), hits.next(), self.spend()) {
                        let after = hit.clone();
                        self.record_changed("enum_case", v, &after, "matched to");
                        *v = after;
                    }
                }
            }
        }
        if let (true, Some(max), Value::String(s)) = (rules.truncate, n.max_length, &mut *v) {
            let max = usize::try_from(max).unwrap_or(usize::MAX);
            if let Some((cut, _)) = s.char_indices().nth(max).filter(|_| self.spend()) {
                let before = Value::String(s.clone());
                s.truncate(cut);
                if rules.trim {
                    // The cut can expose white space that trim would remove on a
                    // second check: trim again so a repaired value is a fixed point.
                    let kept = s.trim_end().len();
                    s.truncate(kept);
                }
                let after = Value::String(s.clone());
                self.record("truncate", &before, &after, format!("cut to {max} characters"));
            }
        }
        if let (true, Value::Object(map)) = (rules.strip_unknown, &mut *v) {
            let unknown: Vec<String> = map
                .keys()
                .filter(|k| {
                    !n.property_index.contains_key(k.as_str())
                        && !n.pattern_properties.iter().any(|(p, _)| p.regex.is_match(k))
                })
                .cloned()
                .collect();
            for key in unknown {
                let mark = self.path.len();
                self.path.push('/');
                pointer::push_escaped(&mut self.path, &key);
                if !self.spend() {
                    self.path.truncate(mark);
                    return;
                }
                if let Some(before) = map.shift_remove(&key) {
                    self.record("strip_unknown", &before, &Value::Null, "undeclared property removed".into());
                }
                self.path.truncate(mark);
            }
        }
    }

    fn children(&mut self, n: &Node, rules: Rules, v: &mut Value) {
        match v {
            Value::Object(map) => {
                // Properties just filled with their default: final, never repaired again.
                let mut fresh: Vec<&str> = Vec::new();
                for (name, id) in &n.properties {
                    if !map.contains_key(name) {
                        if let Some(d) = self.default_of(*id) {
                            let mark = self.enter(name);
                            if !self.spend() {
                                self.path.truncate(mark);
                                return;
                            }
                            fresh.push(name);
                            self.log.push(filled(self.path.clone(), d));
                            self.path.truncate(mark);
                            map.insert(name.clone(), d.clone());
                        }
                    }
                }
                for (key, item) in map.iter_mut() {
                    if self.over.is_some() {
                        return;
                    }
                    if fresh.contains(&key.as_str()) {
                        continue;
                    }
                    let mark = self.enter(key);
                    let mut declared = false;
                    if let Some(id) = n.property_index.get(key.as_str()) {
                        declared = true;
                        self.repair(id, item);
                    }
                    for (p, id) in &n.pattern_properties {
                        if p.regex.is_match(key) {
                            declared = true;
                            self.repair(*id, item);
                        }
                    }
                    if let (false, Some(id)) = (declared, n.additional_properties) {
                        self.repair(id, item);
                    }
                    self.path.truncate(mark);
                }
            }
            Value::Array(items) => {
                let first = self.log.len();
                // Each item's log entries, kept only where items may be dropped.
                let drops = rules.drop_invalid_items && n.items.is_some();
                let mut spans = Vec::with_capacity(if drops { items.len() } else { 0 });
                for (i, item) in items.iter_mut().enumerate() {
                    if self.over.is_some() {
                        return;
                    }
                    let Some(id) = n.prefix_items.get(i).copied().or(n.items) else {
                        break;
                    };
                    let mark = self.path.len();
                    self.path.push('/');
                    self.path.push_str(&i.to_string());
                    let start = self.log.len();
                    self.repair(id, item);
                    if drops {
                        spans.push((start, self.log.len()));
                    }
                    self.path.truncate(mark);
                }
                if let (true, Some(item_node)) = (rules.drop_invalid_items, n.items) {
                    let skip = n.prefix_items.len();
                    let keep: Vec<bool> = items
                        .iter()
                        .enumerate()
                        .map(|(i, item)| i < skip || is_valid(self.nodes, item_node, item))
                        .collect();
                    if keep.contains(&false) && self.spend() {
                        // Drop the log entries of the items removed.
                        let logs: Vec<Repair> = self.log.drain(first..).collect();
                        let mut kept_logs = Vec::new();
                        for (i, (s, e)) in spans.iter().enumerate() {
                            if keep.get(i).copied().unwrap_or(true) {
                                kept_logs.extend(logs.get(s - first..e - first).unwrap_or_default().iter().cloned());
                            }
                        }
                        self.log.extend(kept_logs);
                        let before = bounded_items(items);
                        let dropped: Vec<String> =
                            keep.iter().enumerate().filter(|(_, k)| !**k).map(|(i, _)| i.to_string()).collect();
                        let mut flags = keep.iter();
                        items.retain(|_| flags.next().copied().unwrap_or(true));
                        let after = bounded_items(items);
                        let what = format!(
                            "dropped {} invalid item{} ({})",
                            dropped.len(),
                            if dropped.len() == 1 { "" } else { "s" },
                            dropped.join(", ")
                        );
                        self.record_bounded("drop_invalid_items", before, after, what);
                    }
                }
            }
            _ => {}
        }
    }

    fn enter(&mut self, segment: &str) -> usize {
        let mark = self.path.len();
        self.path.push('/');
        pointer::push_escaped(&mut self.path, segment);
        mark
    }
}

/// The default a missing property is filled with: the one declared on `id`,
/// following `$ref`s (the single pass fills the same ones).
pub(crate) fn default_of(nodes: &[Node], mut id: NodeId) -> Option<&Value> {
    // `$ref` chains are acyclic (checked at compile time); the bound is a belt.
    for _ in 0..=nodes.len() {
        let node = nodes.get(id)?;
        if let Some(d) = node.policy.as_ref().and_then(|p| p.default.as_ref()) {
            return Some(d);
        }
        id = node.reference?;
    }
    None
}

/// Whether no rule of the node's own policy would change this scalar, given
/// that it is valid: the rules that only apply to invalid values (`clamp`,
/// `enum_case`, `truncate`, `default_if_invalid`) cannot fire then. Kept
/// beside [`Repairer::scalar_rules`], whose triggers it mirrors.
#[inline]
pub(crate) fn leaves_valid_scalar_alone(n: &Node, v: &Value) -> bool {
    if let Value::String(s) = v {
        return leaves_valid_string_alone(n, s);
    }
    let Some(policy) = &n.policy else { return true };
    let rules = policy.rules;
    let null_default = policy.default.is_some() && v.is_null() && !n.types.is_some_and(|t| t.contains(Types::NULL));
    let coerced = rules.coerce && v.is_string();
    let rounded = rules.round && v.as_number().is_some_and(|x| !is_integer(x));
    let trimmed = rules.trim && v.as_str().is_some_and(|s| s.trim().len() != s.len());
    !(null_default || coerced || rounded || trimmed)
}

/// [`leaves_valid_scalar_alone`] for a string: neither `coerce` (a string
/// where the rule may want a number) nor `trim` would touch it.
pub(crate) fn leaves_valid_string_alone(n: &Node, s: &str) -> bool {
    let Some(policy) = &n.policy else { return true };
    !(policy.rules.coerce || (policy.rules.trim && s.trim().len() != s.len()))
}

/// [`leaves_valid_string_alone`] for every string: no rule of the policy
/// looks at a valid one.
pub(crate) fn leaves_every_valid_string_alone(n: &Node) -> bool {
    n.policy.as_ref().is_none_or(|p| !p.rules.coerce && !p.rules.trim)
}

/// The log entry for a missing property filled with its default (also
/// written by the single pass, which fills the same properties).
pub(crate) fn filled(path: String, default: &Value) -> Repair {
    Filling::of(default).at(path)
}

/// The parts of a fill's log entry that do not depend on where it is made,
/// worked out once (the single pass keeps one per declared default).
#[derive(Debug, Clone)]
pub(crate) struct Filling {
    /// `: missing, filled with the default …`, after the path.
    said: String,
    after: Value,
}

impl Filling {
    pub(crate) fn of(default: &Value) -> Self {
        Self { said: format!(": missing, filled with the default {}", excerpt(default)), after: bounded(default) }
    }

    /// The log entry of this fill at `path`.
    pub(crate) fn at(&self, path: String) -> Repair {
        let shown = display_path(&path);
        let mut message = String::with_capacity(shown.len() + self.said.len());
        message.push_str(shown);
        message.push_str(&self.said);
        Repair { path, rule: "default".to_owned(), before: Value::Null, after: self.after.clone(), message }
    }
}

/// A string that holds exactly one JSON number, as that number.
/// A number in a string, read as a reply's number would be (a number
/// readers would read differently is not coerced: the string stays, refused).
fn parse_number(s: &str, integers: crate::read::Integers) -> Option<Number> {
    match crate::read::read_value(s, 0, 1, true, integers) {
        Ok((Value::Number(n), _)) => Some(n),
        _ => None,
    }
}

fn float_to_number(f: f64) -> Option<Number> {
    // Whole floats within i64 become integers, so the output reads `88`, not `88.0`.
    if f.fract() == 0.0 && f.abs() < 9.0e15 {
        Some(Number::from(f as i64))
    } else {
        Number::from_f64(f)
    }
}

/// The nearest allowed bound when `x` is outside the node's range.
fn clamp(n: &Node, x: &Number) -> Option<Number> {
    use crate::check::cmp_numbers;
    use std::cmp::Ordering::{Greater, Less};
    let integer = n.types.is_some_and(|t| t.contains(Types::INTEGER) && !t.contains(Types::NUMBER));
    // For integers an exclusive bound's nearest allowed value is the next integer inside it.
    let lower = n.minimum.clone().into_iter().chain(
        n.exclusive_minimum
            .as_ref()
            .filter(|_| integer)
            .and_then(|b| b.as_f64().and_then(|f| float_to_number(f.floor() + 1.0))),
    );
    let upper = n.maximum.clone().into_iter().chain(
        n.exclusive_maximum
            .as_ref()
            .filter(|_| integer)
            .and_then(|b| b.as_f64().and_then(|f| float_to_number(f.ceil() - 1.0))),
    );
    let lower = lower.reduce(|a, b| if cmp_numbers(&a, &b) == Some(Less) { b } else { a });
    let upper = upper.reduce(|a, b| if cmp_numbers(&a, &b) == Some(Greater) { b } else { a });
    let mut out = None;
    if let Some(lo) = lower {
        if cmp_numbers(x, &lo) == Some(Less) {
            out = Some(lo);
        }
    }
    if let Some(hi) = upper {
        if cmp_numbers(x, &hi) == Some(Greater) {
            out = Some(hi);
        }
    }
    // Bounds written as 100.0 on an integer node clamp to the integer 100.
    out.map(|b| if integer { b.as_f64().and_then(float_to_number).unwrap_or(b) } else { b })
}
