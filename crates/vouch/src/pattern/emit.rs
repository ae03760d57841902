//! The parsed pattern as regex-crate syntax of exactly the same meaning.
//!
//! Nothing is copied from the source: every code point is written as
//! `\x{HEX}`, every class member explicitly, every ECMA-262 class escape as
//! the set ECMA-262 defines, so no regex-crate reading of a character
//! (`&&`, `--`, `~~` in classes, Unicode `\s`, `\d`, `\w`, `\b`, loose
//! property names) can leak in.

use std::fmt::Write;

use super::parse::{Assertion, Class, ClassItem, Node, Set};

/// The empty set, as a class the regex crate compiles (it never matches).
const NEVER: &str = r"[^\x{0}-\x{10FFFF}]";
/// Every code point.
pub(super) const ANY: &str = r"[\x{0}-\x{10FFFF}]";

/// ECMA-262 `\s`: WhiteSpace (TAB, VT, FF, ZWNBSP, USP = Zs) and
/// LineTerminator (LF, CR, LS, PS). Not U+0085 (Unicode White_Space but not
/// Zs) nor U+180E (Cf since Unicode 6.3): the regex crate's `\s` has U+0085.
const SPACE: &[(u32, u32)] = &[
    (0x09, 0x0D),
    (0x20, 0x20),
    (0xA0, 0xA0),
    (0x1680, 0x1680),
    (0x2000, 0x200A),
    (0x2028, 0x2029),
    (0x202F, 0x202F),
    (0x205F, 0x205F),
    (0x3000, 0x3000),
    (0xFEFF, 0xFEFF),
];
/// ECMA-262 `\d`.
const DIGIT: &[(u32, u32)] = &[(0x30, 0x39)];
/// ECMA-262 `\w` (Unicode mode, no `i` flag).
const WORD: &[(u32, u32)] = &[(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)];

/// The regex-crate source for `node`.
pub(crate) fn emit(node: &Node) -> String {
    let mut out = String::new();
    node_to(node, &mut out);
    out
}

fn node_to(node: &Node, out: &mut String) {
    match node {
        Node::Empty => {}
        // Lookaheads are taken out before emission (`super::anchored`); one
        // left here would match nothing, which only ever refuses more.
        Node::Never | Node::Look { .. } => out.push_str(NEVER),
        Node::Char(c) => code_point(u32::from(*c), out),
        Node::Class(class) => class_to(class, out),
        // No `m` flag: `^` and `$` are the ends of the input only.
        Node::Assert(Assertion::Start) => out.push_str(r"\A"),
        Node::Assert(Assertion::End) => out.push_str(r"\z"),
        // ECMA-262 word characters are ASCII (no `i` flag), so are its boundaries.
        Node::Assert(Assertion::WordBoundary) => out.push_str(r"(?-u:\b)"),
        Node::Assert(Assertion::NotWordBoundary) => out.push_str(r"(?-u:\B)"),
        Node::Group(inner) => {
            out.push_str("(?:");
            // Group depth is bounded by the parser; `deeper` keeps even a
            // debug build's frames off the end of a small thread stack.
            crate::deeper(|| node_to(inner, out));
            out.push(')');
        }
        Node::Concat(seq) => seq.iter().for_each(|n| node_to(n, out)),
        Node::Alt(alternatives) => {
            for (i, n) in alternatives.iter().enumerate() {
                if i > 0 {
                    out.push('|');
                }
                node_to(n, out);
            }
        }
        Node::Repeat { node, min, max } => {
            // The parser repeats only atoms (a code point, a class, a
            // group, the empty set), each of which emits as one regex atom.
            node_to(node, out);
            let _ = match max {
                Some(max) => write!(out, "{{{min},{max}}}"),
                None => write!(out, "{{{min},}}"),
            };
        }
    }
}

fn code_point(cp: u32, out: &mut String) {
    let _ = write!(out, "\\x{{{cp:X}}}");
}

fn ranges_to(ranges: &[(u32, u32)], out: &mut String) {
    for &(a, b) in ranges {
        range_to(a, b, out);
    }
}

/// `a-b` as class members, less the surrogates (no valid string holds one,
/// and the regex crate refuses them as class ends).
fn range_to(a: u32, b: u32, out: &mut String) {
    let mut write_range = |a: u32, b: u32| {
        code_point(a, out);
        if b > a {
            out.push('-');
            code_point(b, out);
        }
    };
    if a <= 0xD7FF {
        write_range(a, b.min(0xD7FF));
    }
    if b >= 0xE000 {
        write_range(a.max(0xE000), b);
    }
}

fn set_to(set: Set, negated: bool, out: &mut String) {
    let ranges = match set {
        Set::Digit => DIGIT,
        Set::Word => WORD,
        Set::Space => SPACE,
        Set::Property(name) => {
            out.push_str(if negated { r"\P{" } else { r"\p{" });
            out.push_str(name);
            out.push('}');
            return;
        }
    };
    if negated {
        // A nested class: the regex crate reads `[a[^0-9]]` as a union.
        out.push_str("[^");
        ranges_to(ranges, out);
        out.push(']');
    } else {
        ranges_to(ranges, out);
    }
}

fn class_to(class: &Class, out: &mut String) {
    let mut members = String::new();
    for item in &class.items {
        match item {
            ClassItem::Range(a, b) => range_to(*a, *b, &mut members),
            ClassItem::Set { set, negated } => set_to(*set, *negated, &mut members),
        }
    }
    // The regex crate has no empty class syntax: `[]` is the empty set and
    // `[^]` every code point in ECMA-262.
    if members.is_empty() {
        out.push_str(if class.negated { ANY } else { NEVER });
        return;
    }
    out.push('[');
    if class.negated {
        out.push('^');
    }
    out.push_str(&members);
    out.push(']');
}
