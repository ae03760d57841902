//! The problem report of a reply the single pass doubted, found by reading
//! the reply once more with the contract's plans — without building its tree.
//!
//! A refusal must list every problem, in the order the full path's walk
//! finds them. Everything the single pass reads member by member is
//! reported here member by member: a required property left out (in the
//! order `required` lists them, before the members' own problems, as the
//! walk reports them), a scalar that fails its node (that scalar, and only
//! it, becomes a `Value` and goes through the walk's own reporting), an
//! undeclared member (read whole, reported by the walk's member check).
//! Whatever this cannot report in the walk's very order — a value that is
//! not strict JSON further on, a bound on the number of members or items,
//! a consumer-safety hazard, a branch of `anyOf`/`oneOf`/`not` — makes it
//! stand aside (`None`), and the full path reads and reports the reply.
//! With repairs declared, the report is of the repaired reply, as the full
//! path's is: a scalar whose own rules change it is repaired first (when one
//! round settles it) and reported as repaired, a missing property with a
//! default is filled, not missing; a repair that acts on a container
//! (`strip_unknown`, `drop_invalid_items`, `default_if_invalid` on an object
//! or array holding a problem) or inside an applicator makes it stand aside.
//! `tests/single_pass.rs` holds the two reports equal byte for byte.

use serde_json::Value;

use super::single_pass::{member_key, Fill, Key, Others, Plan, Read, Resume, Scalar, Seen};
use super::{is_valid_here, is_valid_string_here, member_problems, missing, problems_in_order, wrong_type};
use crate::contract::node::{hazardous_key, Node, NodeId};
use crate::pointer;
use crate::read::parser::{Integers, Parser, Scalar as ParsedScalar};
use crate::repair::{leaves_valid_scalar_alone, Repairer};
use crate::verdict::Problem;

/// Every problem of `text` against the contract, or `None` to leave the
/// report to the full path.
///
/// `resume`: the single pass read the root object without a problem up to
/// there, so the report takes the reading up from it.
pub(crate) fn report<'t>(
    nodes: &[Node],
    plans: &[Plan],
    root: NodeId,
    text: &'t str,
    (max_depth, max_problems, max_repairs, integers): (usize, usize, usize, Integers),
    repairs: bool,
    resume: Option<Resume<'t>>,
) -> Option<Vec<Problem>> {
    let made = resume.as_ref().map_or(0, |r| r.made);
    let p = Parser::at(text, 0, integers);
    let mut r = Reporter { nodes, plans, p, max_depth, path: Vec::new(), repairs, max_repairs, made };
    let mut problems = Vec::new();
    match resume {
        Some(resume) => {
            let id = resume.node;
            let n = nodes.get(id)?;
            let Some(Read::Object { required, fills, strip }) = plans.get(id).map(|p| &p.read) else {
                return None;
            };
            r.object(id, n, *required, fills, *strip, 0, &mut problems, Some(resume))?;
            r.unrepaired(n, 0, &problems)?;
        }
        None => r.value(root, 0, &mut problems)?,
    }
    r.p.skip_ws();
    if r.p.pos != text.len() || problems.is_empty() {
        return None;
    }
    problems.truncate(max_problems.max(1));
    Some(problems)
}

struct Reporter<'c, 't> {
    nodes: &'c [Node],
    plans: &'c [Plan],
    p: Parser<'t>,
    max_depth: usize,
    /// Where the value being read is, written out only for a problem.
    path: Vec<Segment<'c, 't>>,
    /// The contract declares repairs: report the reply as repaired.
    repairs: bool,
    /// Most repairs the contract allows: past it the full path refuses
    /// (`too_many_repairs`), so the report stands aside.
    max_repairs: usize,
    /// Repairs counted so far, as the repair pass counts them.
    made: usize,
}

/// One step of a path: a member's key, an index.
enum Segment<'c, 't> {
    Key(Key<'c, 't>),
    Index(usize),
}

impl<'c, 't> Reporter<'c, 't> {
    /// The JSON Pointer of the value being read.
    fn pointer(&self) -> String {
        let mut out = String::new();
        for segment in &self.path {
            out.push('/');
            match segment {
                Segment::Key(key) => pointer::push_escaped(&mut out, key.as_str()),
                Segment::Index(i) => push_index(&mut out, *i),
            }
        }
        out
    }

    /// Read the value at the reader's position for node `id`, adding its problems to `out`.
    fn value(&mut self, id: NodeId, depth: usize, out: &mut Vec<Problem>) -> Option<()> {
        let id = match self.plans.get(id).map(|p| &p.read) {
            Some(Read::Alias(target)) => *target,
            _ => id,
        };
        self.p.skip_ws();
        let plan = self.plans.get(id)?;
        let n = self.nodes.get(id)?;
        match (&plan.read, self.p.peek()) {
            (Read::Object { .. }, Some(b'{')) | (Read::Array, Some(b'[')) => {
                if depth >= self.max_depth {
                    return None;
                }
                if depth % 8 == 7 {
                    crate::deeper(|| self.container(id, n, depth, out))
                } else {
                    self.container(id, n, depth, out)
                }
            }
            (_, Some(b'{' | b'[')) => {
                if self.repairs && n.policy_below {
                    return None;
                }
                let v = self.whole(depth)?;
                if !super::is_valid(self.nodes, id, &v) {
                    problems_in_order(self.nodes, id, &v, &mut self.pointer(), out)?;
                }
                Some(())
            }
            _ => {
                let scalar = self.p.scalar_ref().ok()?;
                if self.repairs && n.policy_below {
                    return self.repaired_scalar_problems(id, n, plan.scalar, scalar.into_value(), out);
                }
                let valid = match (plan.scalar, &scalar) {
                    // A type the node does not allow: its one problem (the walk's own words).
                    (Scalar::Typed(Some(types)), s) if !types.admits_scalar(s) && !n.never => {
                        out.push(wrong_type(types, &scalar.into_value(), self.pointer()));
                        return Some(());
                    }
                    (Scalar::Typed(types), s) => types.is_none_or(|t| t.admits_scalar(s)),
                    (Scalar::Here, ParsedScalar::String(s)) => is_valid_string_here(self.nodes, id, s),
                    // Numbers, booleans, null: no allocation to build them.
                    (Scalar::Here, _) => return self.scalar_problems(id, scalar.into_value(), true, out),
                    (Scalar::Evaluate, _) => return self.scalar_problems(id, scalar.into_value(), false, out),
                };
                if valid {
                    return Some(());
                }
                problems_in_order(self.nodes, id, &scalar.into_value(), &mut self.pointer(), out)?;
                Some(())
            }
        }
    }

    /// A scalar its node's own rules may change: repaired as the repair pass
    /// would, when one round settles it, then reported as repaired.
    fn repaired_scalar_problems(
        &mut self,
        id: NodeId,
        n: &Node,
        plan: Scalar,
        mut v: Value,
        out: &mut Vec<Problem>,
    ) -> Option<()> {
        // Only a node's own rules, at a node without applicators, are this simple.
        if !matches!(plan, Scalar::Here) || n.policy.is_none() {
            return None;
        }
        // Valid, and no rule fires on a valid value: nothing to repair or report.
        if leaves_valid_scalar_alone(n, &v) && is_valid_here(self.nodes, id, &v) {
            return Some(());
        }
        let mut r = Repairer::with_budget(self.nodes, self.max_repairs.saturating_sub(self.made));
        r.repair(id, &mut v);
        if r.over().is_some() {
            return None;
        }
        self.made += r.made();
        if !r.log.is_empty() {
            let mut again = v.clone();
            let mut next = Repairer::new(self.nodes);
            next.repair(id, &mut again);
            if !next.log.is_empty() || again != v {
                return None;
            }
        }
        self.scalar_problems(id, v, true, out)
    }

    fn scalar_problems(&mut self, id: NodeId, v: Value, here: bool, out: &mut Vec<Problem>) -> Option<()> {
        let valid = if here { is_valid_here(self.nodes, id, &v) } else { super::is_valid(self.nodes, id, &v) };
        if !valid {
            problems_in_order(self.nodes, id, &v, &mut self.pointer(), out)?;
        }
        Some(())
    }

    fn container(&mut self, id: NodeId, n: &'c Node, depth: usize, out: &mut Vec<Problem>) -> Option<()> {
        match self.plans.get(id).map(|p| &p.read) {
            Some(Read::Object { required, fills, strip }) => {
                let before = out.len();
                self.object(id, n, *required, fills, *strip, depth, out, None)?;
                self.unrepaired(n, before, out)
            }
            Some(Read::Array) => {
                let before = out.len();
                self.array(n, depth, out)?;
                self.unrepaired(n, before, out)
            }
            _ => None,
        }
    }

    /// With repairs declared, a container holding a problem may itself be
    /// repaired (its invalid items dropped, or replaced by its default):
    /// the full path's to report.
    fn unrepaired(&self, n: &Node, before: usize, out: &[Problem]) -> Option<()> {
        let acts = n.policy.as_ref().is_some_and(|p| p.rules.drop_invalid_items || p.rules.default_if_invalid);
        if self.repairs && acts && out.len() > before {
            return None;
        }
        Some(())
    }

    /// A value read whole (the reader refuses what the full path would).
    fn whole(&mut self, depth: usize) -> Option<Value> {
        self.p.whole(self.max_depth.saturating_sub(depth)).ok()
    }

    #[allow(clippy::too_many_arguments)]
    fn object(
        &mut self,
        id: NodeId,
        n: &'c Node,
        required: usize,
        fills: &[Fill],
        strip: bool,
        depth: usize,
        out: &mut Vec<Problem>,
        resume: Option<Resume<'t>>,
    ) -> Option<()> {
        let (mut seen, mut others, mut members, mut required_seen, mut next, mut more) = match resume {
            // Taken up where the single pass doubted: at a member, or at the close.
            Some(r) => {
                self.p.pos = r.at;
                let more = !r.closing || !self.p.closes_at_once(b'}');
                (r.seen, r.others, r.members, r.required_seen, r.next, more)
            }
            None => {
                self.p.pos += 1; // '{'
                let more = !self.p.closes_at_once(b'}');
                (Seen::new(n.property_index.len()), Others::default(), 0, 0, 0, more)
            }
        };
        // The members' problems go after the object's own (missing
        // properties), which are only known at the end: they are put in
        // front of the members' then.
        let first = out.len();
        while more {
            self.p.skip_ws();
            let (key, found) = member_key(&mut self.p, &n.property_index, next).ok()?;
            self.path.push(Segment::Key(key));
            match found {
                Some((i, child, is_required)) => {
                    if !seen.insert(i) {
                        return None;
                    }
                    required_seen += usize::from(is_required);
                    next = i + 1;
                    self.value(child, depth + 1, out)?;
                }
                None => {
                    let key = match self.path.last() {
                        Some(Segment::Key(key)) => key.to_cow(),
                        _ => return None, // unreachable: the key was just pushed
                    };
                    // Stripped by a repair, or read as consumers would not: the full path's.
                    if strip || (n.plain_keys && hazardous_key(&key)) {
                        return None;
                    }
                    if self.repairs
                        && n.additional_properties.and_then(|a| self.nodes.get(a)).is_some_and(|a| a.policy_below)
                    {
                        return None;
                    }
                    self.p.skip_ws();
                    let item = self.whole(depth + 1)?;
                    if !others.insert(key.clone()) {
                        return None;
                    }
                    member_problems(self.nodes, id, &key, &item, &mut self.pointer(), out)?;
                }
            }
            self.path.pop();
            members += 1;
            more = self.p.another(b'}')?;
        }
        // Missing properties with a default are filled, as the repair pass fills them.
        for fill in fills {
            if !seen.contains(fill.position()) {
                // A fill is a repair: past the cap, the full path refuses.
                self.made += 1;
                if self.made > self.max_repairs {
                    return None;
                }
                seen.insert(fill.position());
                required_seen += usize::from(fill.required());
                members += 1;
            }
        }
        if n.min_properties.is_some_and(|min| members < min) || n.max_properties.is_some_and(|max| members > max) {
            return None;
        }
        if required_seen != required {
            let mut missed = Vec::new();
            for name in &n.required {
                let (i, _, _) = n.property_index.position(name)?;
                if !seen.contains(i) {
                    let mut at = self.pointer();
                    at.push('/');
                    pointer::push_escaped(&mut at, name);
                    missed.push(missing(&at));
                }
            }
            let at = first.min(out.len());
            out.splice(at..at, missed);
        }
        Some(())
    }

    fn array(&mut self, n: &Node, depth: usize, out: &mut Vec<Problem>) -> Option<()> {
        self.p.pos += 1; // '['
        let mut index = 0usize;
        let mut more = !self.p.closes_at_once(b']');
        while more {
            self.path.push(Segment::Index(index));
            match n.prefix_items.get(index).copied().or(n.items) {
                Some(child) => self.value(child, depth + 1, out)?,
                None => {
                    self.p.skip_ws();
                    self.whole(depth + 1)?;
                }
            }
            self.path.pop();
            index += 1;
            more = self.p.another(b']')?;
        }
        let len = index as u64;
        if n.min_items.is_some_and(|min| len < min) || n.max_items.is_some_and(|max| len > max) {
            return None;
        }
        Some(())
    }
}

/// Append the decimal digits of `index` (no allocation, unlike `to_string`).
fn push_index(path: &mut String, index: usize) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut rest = index;
    loop {
        at -= 1;
        if let Some(d) = digits.get_mut(at) {
            *d = b'0' + (rest % 10) as u8;
        }
        rest /= 10;
        if rest == 0 || at == 0 {
            break;
        }
    }
    for &d in digits.get(at..).unwrap_or_default() {
        path.push(char::from(d));
    }
}

#[cfg(test)]
mod tests {
    use super::push_index;

    #[test]
    fn indexes_are_written_as_decimals() {
        for i in [0, 7, 10, 99, 12_345, usize::MAX] {
            let mut path = String::from("/a/");
            push_index(&mut path, i);
            assert_eq!(path, format!("/a/{i}"));
        }
    }
}
