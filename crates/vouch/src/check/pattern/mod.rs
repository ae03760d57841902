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

/// Compile an ECMA-262 pattern, or say why it cannot be enforced (the
/// construct and its character offset).
pub(crate) fn compile_pattern(source: &str) -> Result<Regex, String> {
    let ast = parse::parse(source)
        .map_err(|e| format!("the pattern {source:?} is refused at character {}: {}", e.at, e.what))?;
    let translated = emit::emit(&ast);
    regex::RegexBuilder::new(&translated)
        .size_limit(REGEX_SIZE_LIMIT)
        .build()
        .map_err(|e| format!("the pattern {source:?} is too large or too deep to run: {e}"))
}

/// Every `\p{..}` spelling vouch accepts (test hook for the property sweep).
pub(crate) fn property_names() -> Vec<String> {
    props::all_names().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn re(p: &str) -> Regex {
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
    fn emitted_source_has_no_literal() {
        let out = emit::emit(&parse::parse("a&&b").unwrap_or_else(|e| unreachable!("{e:?}")));
        assert_eq!(out, r"\x{61}\x{26}\x{26}\x{62}");
    }
}
