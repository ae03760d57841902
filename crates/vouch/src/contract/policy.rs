//! The `x-vouch` policy keyword: declared repairs, defaults, gate findings,
//! and at the root the unwraps and limits.
//!
//! Everything here is checked at compile time: an unknown sub-key or rule, a
//! rule that cannot apply where it stands, or a default that breaks its own
//! schema is a compile error, never a policy silently ignored.

use serde_json::{Map, Value};

use super::error::{CompileError, CompileErrorKind as Kind};
use crate::node::{FindingRule, Node, NodeId, Policy, Rules, Types};
use crate::pointer;
use crate::read::Unwrap;

/// Policy that only the root may declare.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct RootPolicy {
    pub unwrap: Unwrap,
    pub max_bytes: Option<usize>,
    pub max_depth: Option<usize>,
    pub max_problems: Option<usize>,
    pub max_repairs: Option<usize>,
    /// Integers beyond ±(2^53−1) allowed on integer nodes.
    pub big_integers: bool,
    /// Undeclared prototype-named or invisible-character keys allowed.
    pub hazardous_keys: bool,
}

/// The rule names, in the order they are applied (see `repair.rs`).
pub(crate) const RULES: &[&str] = &[
    "coerce",
    "round",
    "clamp",
    "trim",
    "enum_case",
    "truncate",
    "strip_unknown",
    "drop_invalid_items",
    "default_if_invalid",
];

type Result<T> = std::result::Result<T, CompileError>;

fn bad(location: &str, message: impl Into<String>) -> CompileError {
    CompileError::new(Kind::BadPolicy, "x-vouch", location, message)
}

/// The JSON types a node can hold, from `type` or else from its `enum`/`const`.
fn declared_types(node: &Node) -> Option<Types> {
    if let Some(t) = node.types {
        return Some(t);
    }
    let values = node.enumeration.as_deref().or(node.constant.as_ref().map(std::slice::from_ref))?;
    values.iter().map(Types::of).reduce(Types::union)
}

/// The annotation keywords a contract's root names in `x-vouch.annotations`
/// (read by the compiler and by the provider export alike).
pub(crate) fn declared_annotations(document: &Value) -> Vec<String> {
    document
        .get("x-vouch")
        .and_then(|p| p.get("annotations"))
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default()
}

/// Parse `x-vouch` on the node at `location` (`at_root`: the contract's
/// root, or the schema a root that is only a `$ref` names). `compile` compiles a finding's
/// `when` schema.
pub(crate) fn parse<'a>(
    v: &'a Value,
    schema: &Map<String, Value>,
    node: &Node,
    location: &str,
    at_root: bool,
    compile: &mut dyn FnMut(&'a Value, String) -> Result<NodeId>,
) -> Result<(Option<Policy>, Option<RootPolicy>)> {
    let map = v.as_object().ok_or_else(|| bad(location, "x-vouch must be an object"))?;
    let mut policy = Policy::default();
    let mut root = RootPolicy::default();
    let mut has_root = false;
    let base = pointer::join(location, "x-vouch");
    for (key, value) in map {
        match key.as_str() {
            "default" => policy.default = Some(value.clone()),
            "repair" => policy.rules = rules(value, schema, node, location)?,
            "findings" => {
                let list = value.as_array().ok_or_else(|| bad(location, "x-vouch.findings must be an array"))?;
                for (i, f) in list.iter().enumerate() {
                    let f =
                        f.as_object().filter(|o| o.keys().all(|k| k == "when" || k == "message")).ok_or_else(|| {
                            bad(location, "each finding must be an object with `when` and `message` only")
                        })?;
                    let message = f
                        .get("message")
                        .and_then(Value::as_str)
                        .filter(|m| !m.trim().is_empty())
                        .ok_or_else(|| bad(location, "a finding needs a non-empty `message`"))?;
                    let when = f.get("when").ok_or_else(|| bad(location, "a finding needs a `when` schema"))?;
                    let at = pointer::join(&pointer::join(&pointer::join(&base, "findings"), &i.to_string()), "when");
                    let when = compile(when, at)?;
                    policy.findings.push(FindingRule { when, message: message.to_owned() });
                }
            }
            "unwrap" if at_root => {
                has_root = true;
                let names = value.as_array().ok_or_else(|| bad(location, "x-vouch.unwrap must be an array"))?;
                for name in names {
                    match name.as_str() {
                        Some("fence") => root.unwrap.fence = true,
                        Some("prose") => root.unwrap.prose = true,
                        _ => return Err(bad(location, format!("unknown unwrap {name}; use \"fence\" or \"prose\""))),
                    }
                }
            }
            "allow" if at_root => {
                has_root = true;
                let names = value.as_array().ok_or_else(|| bad(location, "x-vouch.allow must be an array"))?;
                for name in names {
                    match name.as_str() {
                        Some("big_integers") => root.big_integers = true,
                        Some("hazardous_keys") => root.hazardous_keys = true,
                        _ => {
                            return Err(bad(
                                location,
                                format!("unknown allowance {name}; use \"big_integers\" or \"hazardous_keys\""),
                            ))
                        }
                    }
                }
            }
            "limits" if at_root => {
                has_root = true;
                let limits = value.as_object().ok_or_else(|| bad(location, "x-vouch.limits must be an object"))?;
                for (name, n) in limits {
                    let n = n
                        .as_u64()
                        .filter(|n| *n > 0)
                        .and_then(|n| usize::try_from(n).ok())
                        .ok_or_else(|| bad(location, format!("limits.{name} must be a positive integer")))?;
                    match name.as_str() {
                        "max_bytes" => root.max_bytes = Some(n),
                        "max_depth" => root.max_depth = Some(n),
                        "max_problems" => root.max_problems = Some(n),
                        "max_repairs" => root.max_repairs = Some(n),
                        _ => {
                            return Err(bad(
                                location,
                                format!(
                                    "unknown limit {name:?}; use max_bytes, max_depth, max_problems or max_repairs"
                                ),
                            ))
                        }
                    }
                }
            }
            "annotations" if at_root => {
                // Read by the compiler before the schema (the names it ignores); checked here.
                let names = value.as_array().filter(|a| a.iter().all(Value::is_string));
                let names = names.ok_or_else(|| bad(location, "x-vouch.annotations must be an array of keyword names"))?;
                for name in names.iter().filter_map(Value::as_str) {
                    if super::keywords::is_keyword(name) {
                        return Err(bad(
                            location,
                            format!("{name:?} is a JSON Schema keyword: vouch enforces it, it cannot be an annotation"),
                        ));
                    }
                }
            }
            "unwrap" | "limits" | "allow" | "annotations" => {
                return Err(bad(location, format!("x-vouch.{key} is only allowed at the contract's root")));
            }
            other => {
                return Err(bad(
                    location,
                    format!(
                        "unknown x-vouch key {other:?}; use repair, default, findings (and at the root unwrap, limits, allow, annotations)"
                    ),
                ))
            }
        }
    }
    if policy.rules.default_if_invalid && policy.default.is_none() {
        return Err(bad(location, "default_if_invalid needs a `default` value"));
    }
    let node_policy = (policy.repairs() || !policy.findings.is_empty()).then_some(policy);
    Ok((node_policy, has_root.then_some(root)))
}

fn rules(value: &Value, schema: &Map<String, Value>, node: &Node, location: &str) -> Result<Rules> {
    let names = value.as_array().ok_or_else(|| bad(location, "x-vouch.repair must be an array of rule names"))?;
    let types = declared_types(node);
    let has = |t: Types| types.is_some_and(|set| set.contains(t));
    let mut r = Rules::default();
    for name in names {
        let name = name.as_str().ok_or_else(|| bad(location, "x-vouch.repair must be an array of rule names"))?;
        let cannot = |why: &str| bad(location, format!("repair rule {name:?} cannot apply here: {why}"));
        // Number and boolean repairs act on the declared `type`, so it must be written.
        if matches!(name, "coerce" | "round" | "clamp") && node.types.is_none() {
            return Err(cannot("declare the node's `type` (number, integer or boolean)"));
        }
        let slot = match name {
            "coerce" => {
                if !(has(Types::NUMBER) || has(Types::INTEGER) || has(Types::BOOLEAN)) {
                    return Err(cannot("the node's type must be number, integer or boolean"));
                }
                if has(Types::STRING) {
                    return Err(cannot("the node also admits strings, so a string needs no coercion"));
                }
                &mut r.coerce
            }
            "round" => {
                if !has(Types::INTEGER) || has(Types::NUMBER) {
                    return Err(cannot("the node's type must be integer"));
                }
                &mut r.round
            }
            "clamp" => {
                if !(has(Types::NUMBER) || has(Types::INTEGER)) {
                    return Err(cannot("the node's type must be number or integer"));
                }
                let exclusive = node.exclusive_minimum.is_some() || node.exclusive_maximum.is_some();
                if exclusive && has(Types::NUMBER) {
                    return Err(cannot("an exclusive bound on a non-integer has no nearest allowed value"));
                }
                if node.minimum.is_none() && node.maximum.is_none() && !exclusive {
                    return Err(cannot("the node declares no minimum or maximum to clamp to"));
                }
                &mut r.clamp
            }
            "trim" => {
                if !has(Types::STRING) {
                    return Err(cannot("the node's type must be string"));
                }
                &mut r.trim
            }
            "enum_case" => {
                if !node.enumeration.as_ref().is_some_and(|e| e.iter().any(Value::is_string)) {
                    return Err(cannot("the node declares no enum of strings"));
                }
                &mut r.enum_case
            }
            "truncate" => {
                if node.max_length.is_none() {
                    return Err(cannot("the node declares no maxLength"));
                }
                &mut r.truncate
            }
            "drop_invalid_items" => {
                if node.items.is_none() {
                    return Err(cannot("the node declares no `items` schema"));
                }
                &mut r.drop_invalid_items
            }
            "strip_unknown" => {
                if schema.get("additionalProperties") != Some(&Value::Bool(false)) {
                    return Err(cannot("only objects with additionalProperties: false refuse unknown properties"));
                }
                &mut r.strip_unknown
            }
            "default_if_invalid" => &mut r.default_if_invalid,
            other => {
                return Err(bad(
                    location,
                    format!("unknown repair rule {other:?}; the rules are {}", RULES.join(", ")),
                ));
            }
        };
        if *slot {
            return Err(bad(location, format!("repair rule {name:?} is listed twice")));
        }
        *slot = true;
    }
    Ok(r)
}

/// Policies are not allowed where the value is only tested (inside `anyOf`,
/// `oneOf`, `not`, `if`/`then`/`else`, `contains`, `propertyNames`,
/// `dependentSchemas`, `unevaluated*`, a finding's `when`): which value to
/// keep, or whether a finding fires, would be ambiguous.
pub(crate) fn refuse_tested_only_policies(nodes: &[Node]) -> Result<()> {
    if !nodes.iter().any(|n| n.policy.is_some()) {
        return Ok(());
    }
    let mut seen = vec![false; nodes.len()];
    let mut stack: Vec<NodeId> = nodes.iter().flat_map(Node::tested_only).collect();
    while let Some(id) = stack.pop() {
        let Some(node) = nodes.get(id) else { continue };
        if seen.get(id).copied().unwrap_or(true) {
            continue;
        }
        if let Some(s) = seen.get_mut(id) {
            *s = true;
        }
        if node.policy.is_some() {
            return Err(bad(
                &node.location,
                "x-vouch is not allowed inside anyOf, oneOf, not, if/then/else, contains, propertyNames, \
                 dependentSchemas, unevaluatedProperties, unevaluatedItems or a finding's `when`: the value there is \
                 only tested, or which values it sees depends on the other keywords, so a repair or finding would be \
                 ambiguous",
            ));
        }
        stack.extend(node.children());
    }
    Ok(())
}

/// A declared default must itself satisfy the node's schema.
pub(crate) fn check_defaults(nodes: &[Node], integers: crate::read::Integers) -> Result<()> {
    for (id, node) in nodes.iter().enumerate() {
        let Some(default) = node.policy.as_ref().and_then(|p| p.default.as_ref()) else {
            continue;
        };
        // A default is written into replies: it holds only numbers a reply may hold.
        let written = default.to_string();
        if let Err(e) = crate::read::read_value(&written, 0, usize::MAX, true, integers) {
            return Err(bad(&node.location, format!("the default cannot stand in a reply: {}", e.detail)));
        }
        if !crate::check::is_valid(nodes, id, default) {
            return Err(bad(
                &node.location,
                format!("the default {} does not satisfy this node's own schema", crate::problem::excerpt(default)),
            ));
        }
        // Inserted, a default is never repaired again: it must need no repair,
        // or a default holding values the contract's defaults fill would grow forever.
        if let Some(first) = crate::repair::Repairer::first_repair(nodes, id, default) {
            return Err(bad(
                &node.location,
                format!(
                    "the default {} is not final: the contract's repairs would change it ({})",
                    crate::problem::excerpt(default),
                    first
                ),
            ));
        }
    }
    Ok(())
}
