//! Gate findings: after a reply is accepted, each `x-vouch.findings` rule
//! whose `when` schema matches its node's value is reported. A finding means
//! the model answered and the answer is a real problem ("a product is still
//! in frame"); it is never confused with a refusal.

use serde_json::Value;

use crate::check::is_valid;
use crate::node::{Node, NodeId};
use crate::pointer;
use crate::problem::Finding;

/// Walk the accepted value the way the contract applies to it (through
/// `$ref`, `allOf`, properties and items) and collect findings in order.
pub(crate) fn collect(nodes: &[Node], id: NodeId, v: &Value, path: &mut String, out: &mut Vec<Finding>) {
    crate::deeper(|| collect_here(nodes, id, v, path, out));
}

fn collect_here(nodes: &[Node], id: NodeId, v: &Value, path: &mut String, out: &mut Vec<Finding>) {
    let Some(n) = nodes.get(id) else { return };
    if !n.policy_below {
        return;
    }
    if let Some(policy) = &n.policy {
        for rule in &policy.findings {
            if is_valid(nodes, rule.when, v) {
                out.push(Finding { path: path.clone(), message: rule.message.clone() });
            }
        }
    }
    for target in n.reference.iter().chain(&n.all_of) {
        collect(nodes, *target, v, path, out);
    }
    match v {
        Value::Object(map) => {
            for (key, item) in map {
                let mark = path.len();
                path.push('/');
                pointer::push_escaped(path, key);
                let mut declared = false;
                if let Some(child) = n.property_index.get(key.as_str()) {
                    declared = true;
                    collect(nodes, child, item, path, out);
                }
                for (p, child) in &n.pattern_properties {
                    if p.regex.is_match(key) {
                        declared = true;
                        collect(nodes, *child, item, path, out);
                    }
                }
                if let (false, Some(child)) = (declared, n.additional_properties) {
                    collect(nodes, child, item, path, out);
                }
                path.truncate(mark);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let Some(child) = n.prefix_items.get(i).copied().or(n.items) else {
                    break;
                };
                let mark = path.len();
                path.push('/');
                path.push_str(&i.to_string());
                collect(nodes, child, item, path, out);
                path.truncate(mark);
            }
        }
        _ => {}
    }
}
