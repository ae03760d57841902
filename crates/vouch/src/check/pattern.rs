//! `pattern` and `patternProperties`: ECMA-262 source run on the linear-time
//! `regex` crate.
//!
//! ECMA-262 `\d` and `\w` are ASCII-only while the regex crate's are Unicode,
//! so they are rewritten to explicit ASCII classes; a pattern that would
//! match more than its author wrote would silently weaken the contract.
//! Features without a linear-time algorithm (look-around, back-references)
//! fail to compile, and the contract is refused.

use regex::Regex;

/// Size limit for one compiled pattern, so a contract cannot make vouch
/// allocate without bound.
const REGEX_SIZE_LIMIT: usize = 1 << 22;

/// Compile an ECMA-262 pattern, or say why it cannot be enforced.
pub(crate) fn compile_pattern(source: &str) -> Result<Regex, String> {
    let translated = translate(source)?;
    regex::RegexBuilder::new(&translated)
        .size_limit(REGEX_SIZE_LIMIT)
        .build()
        .map_err(|e| format!("the pattern {source:?} cannot be run in linear time or is invalid: {e}"))
}

fn translate(source: &str) -> Result<String, String> {
    let mut out = String::with_capacity(source.len() + 16);
    let mut in_class = false;
    let mut chars = source.chars().peekable();
    let unsupported = |what: &str| {
        Err(format!("the pattern {source:?} uses {what}, which vouch cannot run exactly as ECMA-262 does"))
    };
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let Some(e) = chars.next() else {
                    return Err(format!("the pattern {source:?} ends with a lone backslash"));
                };
                match (e, in_class) {
                    ('d', false) => out.push_str("[0-9]"),
                    ('d', true) => out.push_str("0-9"),
                    ('D', false) => out.push_str("[^0-9]"),
                    ('w', false) => out.push_str("[0-9A-Za-z_]"),
                    ('w', true) => out.push_str("0-9A-Za-z_"),
                    ('W', false) => out.push_str("[^0-9A-Za-z_]"),
                    // ECMA-262 white space also has U+FEFF.
                    ('s', false) => out.push_str("[\\s\\x{FEFF}]"),
                    ('s', true) => out.push_str("\\s\\x{FEFF}"),
                    ('S', false) => out.push_str("[^\\s\\x{FEFF}]"),
                    // ECMA-262 word boundaries are ASCII.
                    ('b', false) => out.push_str("(?-u:\\b)"),
                    ('B', false) => out.push_str("(?-u:\\B)"),
                    // Inside a class, negated classes nest (the regex crate allows it).
                    ('D', true) => out.push_str("[^0-9]"),
                    ('W', true) => out.push_str("[^0-9A-Za-z_]"),
                    ('S', true) => out.push_str("[\\S&&[^\\x{FEFF}]]"),
                    ('c', _) => return unsupported("a \\c control escape"),
                    _ => {
                        out.push('\\');
                        out.push(e);
                    }
                }
            }
            '[' if !in_class => {
                // `[]` and `[^]` match nothing/anything in ECMA-262; the regex crate reads them otherwise.
                let mut ahead = chars.clone();
                let first = ahead.next();
                if first == Some(']') || (first == Some('^') && ahead.next() == Some(']')) {
                    return unsupported("an empty class [] or [^]");
                }
                in_class = true;
                out.push('[');
            }
            ']' if in_class => {
                in_class = false;
                out.push(']');
            }
            '[' if in_class => out.push_str("\\["),
            // ECMA-262 `.` stops at every line terminator, not only `\n`.
            '.' if !in_class => out.push_str("[^\\n\\r\\x{2028}\\x{2029}]"),
            '(' if !in_class && chars.peek() == Some(&'?') => {
                let mut ahead = chars.clone();
                ahead.next();
                match ahead.next() {
                    Some(':') | Some('<') => out.push('('),
                    _ => return unsupported("an inline flag or look-ahead group"),
                }
            }
            _ => out.push(c),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_digit_classes() {
        let re = compile_pattern(r"^\d+$").unwrap_or_else(|e| unreachable!("{e}"));
        assert!(re.is_match("123"));
        assert!(!re.is_match("١٢٣"));
        let re = compile_pattern(r"^[\w-]+$").unwrap_or_else(|e| unreachable!("{e}"));
        assert!(re.is_match("a_b-9"));
        assert!(!re.is_match("é"));
    }

    #[test]
    fn non_linear_features_are_refused() {
        assert!(compile_pattern(r"(a)\1").is_err());
        assert!(compile_pattern(r"a(?=b)").is_err());
        assert!(compile_pattern(r"[\c]").is_err());
        assert!(compile_pattern(r"(?i)abc").is_err());
        assert!(compile_pattern(r"[]").is_err());
    }

    #[test]
    fn ecma_dot_space_and_boundaries() {
        let dot = compile_pattern("^a.b$").unwrap_or_else(|e| unreachable!("{e}"));
        assert!(dot.is_match("a-b") && !dot.is_match("a\rb") && !dot.is_match("a\u{2028}b"));
        let space = compile_pattern(r"^\s$").unwrap_or_else(|e| unreachable!("{e}"));
        assert!(space.is_match("\u{feff}") && space.is_match(" "));
        let word = compile_pattern(r"\bé").unwrap_or_else(|e| unreachable!("{e}"));
        assert!(word.is_match("xé") && !word.is_match("x1"), "ASCII boundaries");
        assert!(compile_pattern("(?:a)(?<n>b)").is_ok());
        let any = compile_pattern(r"^[\s\S]{2}$").unwrap_or_else(|e| unreachable!("{e}"));
        assert!(any.is_match("\n\u{feff}") && any.is_match("ab") && !any.is_match("a"));
        let not_digit = compile_pattern(r"^[\Da]+$").unwrap_or_else(|e| unreachable!("{e}"));
        assert!(not_digit.is_match("xa") && !not_digit.is_match("1"));
    }

    #[test]
    fn search_is_unanchored() {
        let re = compile_pattern("a+").unwrap_or_else(|e| unreachable!("{e}"));
        assert!(re.is_match("xxaxx"));
    }
}
