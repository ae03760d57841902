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

/// A compiled pattern. Its one question is [`Matcher::is_match`].
#[derive(Debug, Clone)]
pub(crate) struct Matcher(Regex);

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
        self.0.find(haystack).is_some()
    }

    /// The successive non-overlapping matches (for the tests' property sweep).
    pub(crate) fn spans(&self, haystack: &str) -> Vec<(usize, usize)> {
        self.0.find_iter(haystack).map(|m| (m.start(), m.end())).collect()
    }
}

/// Compile an ECMA-262 pattern, or say why it cannot be enforced (the
/// construct and its character offset).
pub(crate) fn compile_pattern(source: &str) -> Result<Matcher, String> {
    let ast = parse::parse(source)
        .map_err(|e| format!("the pattern {source:?} is refused at character {}: {}", e.at, e.what))?;
    let translated = emit::emit(&ast);
    regex::RegexBuilder::new(&translated)
        .size_limit(REGEX_SIZE_LIMIT)
        .build()
        .map(Matcher)
        .map_err(|e| format!("the pattern {source:?} is too large or too deep to run: {e}"))
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
        for p in [r"(a)\1", "a(?=b)", r"[\c]", "(?i)abc", "(?i:a)", r"\k<n>(?<n>a)"] {
            assert!(compile_pattern(p).is_err(), "{p}");
        }
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
