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
    let mut chars = source.chars();
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
                    ('D' | 'W', true) => {
                        return Err(format!("the pattern {source:?} uses \\{e} inside a character class, which vouch cannot translate exactly"));
                    }
                    ('c', _) => {
                        return Err(format!(
                            "the pattern {source:?} uses a \\c control escape, which vouch does not support"
                        ))
                    }
                    _ => {
                        out.push('\\');
                        out.push(e);
                    }
                }
            }
            '[' if !in_class => {
                in_class = true;
                out.push('[');
                // A leading `]` or `^]` is literal in ECMA-262 only as `[]`/`[^]`, which
                // match nothing/anything; the regex crate reads them differently.
                let rest = chars.as_str();
                if rest.starts_with(']') || rest.starts_with("^]") {
                    return Err(format!(
                        "the pattern {source:?} uses an empty class [] or [^], which vouch does not support"
                    ));
                }
            }
            ']' if in_class => {
                in_class = false;
                out.push(']');
            }
            '[' if in_class => out.push_str("\\["),
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
        assert!(compile_pattern(r"[\D]").is_err());
    }

    #[test]
    fn search_is_unanchored() {
        let re = compile_pattern("a+").unwrap_or_else(|e| unreachable!("{e}"));
        assert!(re.is_match("xxaxx"));
    }
}
