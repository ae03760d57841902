//! OpenAPI's `discriminator` (Pydantic's tagged unions, the agent and
//! tool-call pattern): `{"propertyName": "kind", "mapping": {"cat": "#/$defs/Cat"}}`
//! beside a `oneOf` or `anyOf`.
//!
//! In JSON Schema it is an annotation: the union decides. vouch checks at
//! compile time that it tells the truth — every branch requires the tag and
//! fixes it (`const` or `enum`) to values no other branch admits, and every
//! mapping entry names the branch whose tag it is. Then the tag of an object
//! reply names the only branch that can accept it: that branch alone is
//! evaluated, and a refusal is reported against it, not against all of them.

use serde_json::Value;

use super::error::{CompileError, CompileErrorKind as Kind};
use crate::check::json_equal;
use crate::node::{Node, NodeId};

/// How many `$ref`/`allOf` steps are followed to find a branch's tag.
const MAX_STEPS: usize = 64;

/// Check every node's discriminator against its union and record which tag
/// names which branch. Every inconsistency is reported.
pub(crate) fn resolve(nodes: &mut [Node]) -> Result<(), CompileError> {
    let mut errors = Vec::new();
    for id in 0..nodes.len() {
        let Some(node) = nodes.get(id) else { continue };
        let Some(d) = node.discriminator.as_deref() else { continue };
        let (branches, union) = if node.one_of.is_empty() { (&node.any_of, "anyOf") } else { (&node.one_of, "oneOf") };
        if branches.is_empty() {
            errors.push(error(&node.location, "stands without a `oneOf` or `anyOf` whose branches it names"));
            continue;
        }
        let mut tags: Vec<(Value, usize)> = Vec::new();
        for (i, branch) in branches.iter().enumerate() {
            let Some(values) = fixed_tag(nodes, *branch, &d.property) else {
                errors.push(error(
                    &node.location,
                    &format!(
                        "branch {union}/{i} does not fix the tag `{}`: each branch must require it and give it a \
                         `const` (or an `enum`) of its own",
                        d.property
                    ),
                ));
                continue;
            };
            for value in values {
                if let Some((_, j)) = tags.iter().find(|(t, _)| json_equal(t, &value)) {
                    errors.push(error(
                        &node.location,
                        &format!(
                            "branches {union}/{j} and {union}/{i} both admit `{}` = {}: a tag must name one branch",
                            d.property,
                            crate::to_json_string(&value)
                        ),
                    ));
                } else {
                    tags.push((value, i));
                }
            }
        }
        for (tag, target) in &d.mapping {
            let named = branches.iter().position(|b| reaches(nodes, *b, *target));
            let Some(i) = named else {
                errors.push(error(
                    &node.location,
                    &format!("mapping {tag:?} names a schema that is not one of the {union} branches"),
                ));
                continue;
            };
            let tag_value = Value::String(tag.clone());
            match tags.iter().find(|(t, _)| json_equal(t, &tag_value)) {
                Some((_, j)) if *j == i => {}
                _ => errors.push(error(
                    &node.location,
                    &format!("mapping {tag:?} names branch {union}/{i}, whose `{}` does not admit {tag:?}", d.property),
                )),
            }
        }
        if let Some(d) = nodes.get_mut(id).and_then(|n| n.discriminator.as_deref_mut()) {
            d.tags = tags;
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(CompileError::all(errors))
    }
}

fn error(location: &str, message: &str) -> CompileError {
    CompileError::new(Kind::InvalidValue, "discriminator", location, message)
}

/// The values a branch allows its tag: found on the branch or on a schema
/// it applies in place (`$ref`, `allOf`), where the tag is required and its
/// schema is a `const` or `enum`. Each such place is a necessary condition,
/// so the first found is enough.
fn fixed_tag(nodes: &[Node], branch: NodeId, property: &str) -> Option<Vec<Value>> {
    let mut queue = vec![branch];
    let mut seen = Vec::new();
    while let Some(id) = queue.pop() {
        if seen.contains(&id) || seen.len() >= MAX_STEPS {
            continue;
        }
        seen.push(id);
        let n = nodes.get(id)?;
        if let Some((tag_node, true)) = n.property_index.entry(property) {
            if let Some(values) = choice(nodes, tag_node) {
                return Some(values);
            }
        }
        queue.extend(n.reference.iter().chain(&n.all_of));
    }
    None
}

/// A tag schema's values: its `const` or `enum` (through `$ref`s).
fn choice(nodes: &[Node], mut id: NodeId) -> Option<Vec<Value>> {
    for _ in 0..MAX_STEPS {
        let n = nodes.get(id)?;
        if let Some(c) = &n.constant {
            return Some(vec![c.clone()]);
        }
        if let Some(e) = &n.enumeration {
            return Some(e.clone());
        }
        id = n.reference?;
    }
    None
}

/// Whether `branch` is `target` or applies it in place through `$ref`s.
fn reaches(nodes: &[Node], mut branch: NodeId, target: NodeId) -> bool {
    for _ in 0..MAX_STEPS {
        if branch == target {
            return true;
        }
        match nodes.get(branch).and_then(|n| n.reference) {
            Some(next) => branch = next,
            None => return false,
        }
    }
    false
}
