//! `pattern` and `patternProperties`: ECMA-262 patterns run exactly, on the
//! linear-time `regex` crate.
//!
//! The dialect is ECMA-262 with the `u` flag (Unicode mode, as most JSON
//! Schema validators use) and no other flag, searched unanchored. vouch
//! parses the source itself ([`parse`]) and writes regex-crate syntax of
//! the same meaning ([`emit`]): nothing is handed over as written, because
//! the two dialects read many of the same characters differently (`&&` in
//! a class, `\s`, `\pL`, `\A`, `a++`), and a pattern that matched more than
//! its author wrote would silently weaken the contract. What has no exact
//! linear-time translation (back-references, look-around, modifiers) or is
//! in doubt is refused, and so is the contract.

mod emit;
mod parse;
mod props;

use regex::Regex;

/// Size limit for one compiled pattern, so a contract cannot make vouch
/// allocate without bound.
const REGEX_SIZE_LIMIT: usize = 1 << 22;

/// Size limit for all the compiled patterns of one contract together (see
/// [`compile_pattern_within`]): one pattern can take 4 MiB (`\w{40000}` is
/// 5 MB of program from ten bytes), and a contract of forty of them took a
/// server 278 MB.
pub(crate) const CONTRACT_PATTERNS_LIMIT: usize = 1 << 25;

/// The sizes a pattern is tried at, smallest first: it is charged the
/// first that holds it (the regex crate tells whether a program fits, not
/// its size), each four times the last: the charge is at most four times
/// the program.
const PATTERN_TIERS: [usize; 6] = [1 << 12, 1 << 14, 1 << 16, 1 << 18, 1 << 20, REGEX_SIZE_LIMIT];

/// The lazy DFA's cache of one compiled pattern, per thread that matches
/// (the regex crate's default is 2 MiB): a hostile reply cannot grow it
/// past this, and a pattern that needs more falls back to a slower engine,
/// still linear.
const DFA_CACHE_LIMIT: usize = 1 << 18;

/// A compiled pattern. Its one question is [`Matcher::is_match`].
#[derive(Debug, Clone)]
pub(crate) struct Matcher {
    /// The pattern without its lookaheads.
    main: Regex,
    /// Each lookahead at its fixed offset, anchored at the start, and
    /// whether it must match (`(?=`) or must not (`(?!`).
    conditions: Vec<(bool, Regex)>,
}

impl Matcher {
    /// Whether the pattern matches somewhere in `haystack`.
    ///
    /// This asks `find`, not the regex crate's `is_match`: in regex 1.13.2
    /// `is_match` answers false for `(?-u:\B)|\x{A0}` on `"a\u{a0}a"`,
    /// where `find` finds the `\u{a0}` (the ASCII `\B` also holds inside
    /// the two-byte character; that empty match is rightly not reported, but
    /// the earliest-match search then gives up). Found by the proof against
    /// regress (`\B|\p{White_Space}`, tests/patterns.rs).
    pub(crate) fn is_match(&self, haystack: &str) -> bool {
        self.holds(haystack) && self.main.find(haystack).is_some()
    }

    /// Whether every lookahead says yes.
    fn holds(&self, haystack: &str) -> bool {
        self.conditions.iter().all(|(positive, re)| re.find(haystack).is_some() == *positive)
    }

    /// The successive non-overlapping matches (for the tests' property sweep).
    pub(crate) fn spans(&self, haystack: &str) -> Vec<(usize, usize)> {
        if !self.holds(haystack) {
            return Vec::new();
        }
        self.main.find_iter(haystack).map(|m| (m.start(), m.end())).collect()
    }
}

/// Compile an ECMA-262 pattern, or say why it cannot be enforced (the
/// construct and its character offset).
pub(crate) fn compile_pattern(source: &str) -> Result<Matcher, String> {
    compile_pattern_within(source, usize::MAX).map(|(matcher, _)| matcher)
}

/// [`compile_pattern`] within `room` bytes of compiled program (what is left
/// of a contract's [`CONTRACT_PATTERNS_LIMIT`]): the matcher, and the bytes
/// it is charged (for each regex, the first of [`PATTERN_TIERS`] it fits).
pub(crate) fn compile_pattern_within(source: &str, room: usize) -> Result<(Matcher, usize), String> {
    let ast = parse::parse(source)
        .map_err(|e| format!("the pattern {source:?} is refused at character {}: {}", e.at, e.what))?;
    let (main, looks) = anchored(ast).map_err(|(at, positive)| {
        let what = if positive { "a lookahead (?=...)" } else { "a negative lookahead (?!...)" };
        format!(
            "the pattern {source:?} is refused at character {at}: {what} away from a fixed offset after a leading \
             ^, which vouch cannot run in linear time"
        )
    })?;
    let mut charged = 0usize;
    let mut build = |translated: &str| {
        let left = room.saturating_sub(charged);
        let mut last = None;
        for tier in PATTERN_TIERS {
            let limit = tier.min(left);
            let built = regex::RegexBuilder::new(translated).size_limit(limit).dfa_size_limit(DFA_CACHE_LIMIT).build();
            match built {
                Ok(re) => {
                    charged = charged.saturating_add(limit);
                    return Ok(re);
                }
                Err(e) => last = Some(e),
            }
            if limit < tier {
                return Err(format!(
                    "the pattern {source:?} does not fit in what is left of the {} MiB the contract's patterns \
                     may take together",
                    CONTRACT_PATTERNS_LIMIT >> 20
                ));
            }
        }
        let why = last.map_or_else(String::new, |e| e.to_string());
        Err(format!("the pattern {source:?} is too large or too deep to run: {why}"))
    };
    let main = build(&emit::emit(&main))?;
    let conditions = looks
        .iter()
        .map(|(positive, offset, inner)| {
            let ahead = format!(r"\A{}{{{offset}}}(?:{})", emit::ANY, emit::emit(inner));
            build(&ahead).map(|re| (*positive, re))
        })
        .collect::<Result<_, _>>()?;
    Ok((Matcher { main, conditions }, charged))
}

/// A lookahead taken out of a pattern: must it match (`(?=`), the offset in
/// code points it is tested at, and its own pattern.
type Lookahead = (bool, u32, parse::Node);

/// Lookaheads a linear-time engine can run exactly: in a pattern that is a
/// sequence starting with `^`, a lookahead after a prefix that always spans
/// the same number of code points is a test at that fixed offset from the
/// start, independent of the rest (ECMA-262 lookaheads are atomic, and the
/// back-references that could read their captures are refused). So the
/// pattern matches exactly when the rest matches and each lookahead's own
/// pattern, anchored at its offset, matches (`(?=`) or does not (`(?!`).
/// Zod's `hostname` and Pydantic-era `^(?!…)` guards are of this kind.
/// Returns the pattern without its lookaheads and each one's polarity,
/// offset and pattern; or, for any other lookahead, its source offset and polarity.
fn anchored(ast: parse::Node) -> Result<(parse::Node, Vec<Lookahead>), (usize, bool)> {
    use parse::{Assertion, Node};
    if let Some(at) = first_look(&ast) {
        let Node::Concat(items) = ast else { return Err(at) };
        if items.first() != Some(&Node::Assert(Assertion::Start)) {
            return Err(at);
        }
        let mut rest = Vec::with_capacity(items.len());
        let mut looks = Vec::new();
        let mut offset = Some(0u32);
        for item in items {
            match item {
                Node::Look { positive, inner, at } => {
                    let Some(o) = offset else { return Err((at, positive)) };
                    if let Some(nested) = first_look(&inner) {
                        return Err(nested);
                    }
                    looks.push((positive, o, *inner));
                }
                other => {
                    if let Some(at) = first_look(&other) {
                        return Err(at);
                    }
                    offset = offset.zip(width(&other)).and_then(|(a, b)| a.checked_add(b));
                    rest.push(other);
                }
            }
        }
        return Ok((Node::Concat(rest), looks));
    }
    Ok((ast, Vec::new()))
}

/// Where the first lookahead stands, and its polarity, if any (an explicit
/// stack: no recursion).
fn first_look(node: &parse::Node) -> Option<(usize, bool)> {
    use parse::Node;
    let mut stack = vec![node];
    let mut first: Option<(usize, bool)> = None;
    while let Some(n) = stack.pop() {
        match n {
            Node::Look { at, inner, positive } => {
                if first.is_none_or(|(f, _)| *at < f) {
                    first = Some((*at, *positive));
                }
                stack.push(inner);
            }
            Node::Group(inner) | Node::Repeat { node: inner, .. } => stack.push(inner),
            Node::Concat(items) | Node::Alt(items) => stack.extend(items.iter()),
            _ => {}
        }
    }
    first
}

/// How many code points every match of `node` spans, when that is fixed.
fn width(node: &parse::Node) -> Option<u32> {
    use parse::Node;
    // (node, multiplier) pairs, summed: an explicit stack, no recursion.
    let mut total = 0u32;
    let mut stack = vec![(node, 1u32)];
    while let Some((n, times)) = stack.pop() {
        match n {
            Node::Empty | Node::Assert(_) => {}
            Node::Char(_) | Node::Class(_) => total = total.checked_add(times)?,
            Node::Group(inner) => stack.push((inner, times)),
            Node::Concat(items) => stack.extend(items.iter().map(|i| (i, times))),
            Node::Repeat { node, min, max: Some(max) } if min == max => stack.push((node, times.checked_mul(*min)?)),
            Node::Alt(items) => {
                let mut widths = items.iter().map(width);
                let first = widths.next()??;
                if !widths.all(|w| w == Some(first)) {
                    return None;
                }
                total = total.checked_add(first.checked_mul(times)?)?;
            }
            Node::Never | Node::Look { .. } | Node::Repeat { .. } => return None,
        }
    }
    Some(total)
}

/// Every `\p{..}` spelling vouch accepts (test hook for the property sweep).
pub(crate) fn property_names() -> Vec<String> {
    props::all_names().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn re(p: &str) -> Matcher {
        compile_pattern(p).unwrap_or_else(|e| unreachable!("{e}"))
    }

    #[test]
    fn ascii_digit_classes() {
        assert!(re(r"^\d+$").is_match("123"));
        assert!(!re(r"^\d+$").is_match("١٢٣"));
        assert!(re(r"^[\w-]+$").is_match("a_b-9"));
        assert!(!re(r"^[\w-]+$").is_match("é"));
    }

    #[test]
    fn non_linear_features_are_refused() {
        for p in [
            r"(a)\1",
            "a(?=b)",
            r"^a+(?=b)",
            r"^(a|(?=b))",
            "^(?=(?=a))",
            "(?<=a)",
            r"[\c]",
            "(?i)abc",
            "(?i:a)",
            r"\k<n>(?<n>a)",
        ] {
            assert!(compile_pattern(p).is_err(), "{p}");
        }
    }

    #[test]
    fn lookaheads_at_a_fixed_offset_from_the_start() {
        // Zod's hostname guard, a negative guard, and one after a fixed prefix (Zod's iban).
        let host = re(r"^(?=.{1,8}$)[a-z]+(?:\.[a-z]+)*$");
        assert!(host.is_match("ab.cd") && !host.is_match("abcdefghi"));
        let guard = re(r"^(?!\s+$).+");
        assert!(guard.is_match(" a") && !guard.is_match("   "));
        let iban = re(r"^[A-Z]{2}(?!00|99)\d{2}$");
        assert!(iban.is_match("GB82") && !iban.is_match("GB00") && !iban.is_match("GB99"));
        assert_eq!(iban.spans("GB82"), vec![(0, 4)]);
        assert!(iban.spans("GB00").is_empty());
    }

    #[test]
    fn ascii_non_boundary_inside_a_wide_character() {
        // regex 1.13.2's is_match says no here; Matcher asks find.
        assert!(re(r"\B|\u00a0").is_match("a\u{a0}a"));
        assert!(re(r"\B|\p{White_Space}").is_match("a\u{a0}a"));
        assert!(!re(r"\B").is_match("a\u{e9}b"));
    }

    #[test]
    fn emitted_source_has_no_literal() {
        let out = emit::emit(&parse::parse("a&&b").unwrap_or_else(|e| unreachable!("{e:?}")));
        assert_eq!(out, r"\x{61}\x{26}\x{26}\x{62}");
    }
}
