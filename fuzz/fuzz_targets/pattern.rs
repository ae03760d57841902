//! Arbitrary bytes as an ECMA-262 pattern and a haystack, split at the first
//! 0xFF byte (never part of UTF-8, so neither side loses a character).
//!
//! Properties: no panic, no hang; when vouch compiles the pattern, regress
//! (an independent ECMA-262 engine, flag `u`) compiles it too and both say
//! the same about whether it matches somewhere in the haystack. Two regress
//! 0.12 bugs are skipped exactly as in crates/vouch/tests/patterns.rs (see
//! the comments there): lone surrogate atoms, and a lead surrogate escape
//! before another `\u` escape.
#![no_main]

use libfuzzer_sys::fuzz_target;

/// Lengths that keep regress, a backtracking engine, quick on nested
/// quantifiers (vouch itself is linear in both).
const MAX_PATTERN: usize = 64;
const MAX_HAYSTACK: usize = 16;

fn hex4(chars: &[char], i: usize) -> Option<u32> {
    let digits: String = chars.get(i..i + 4)?.iter().collect();
    u32::from_str_radix(&digits, 16).ok()
}

/// A `\uD800`-`\uDFFF` escape not part of a `\uLEAD\uTRAIL` pair, or a
/// `\u{..}` escape that might be one.
fn has_lone_surrogate_escape(chars: &[char]) -> bool {
    let mut i = 0;
    while i < chars.len() {
        if chars[i..].starts_with(&['\\', 'u']) {
            if chars.get(i + 2) == Some(&'{') {
                return true;
            }
            if let Some(v) = hex4(chars, i + 2) {
                let paired = (0xD800..=0xDBFF).contains(&v)
                    && chars.get(i + 6..).is_some_and(|r| r.starts_with(&['\\', 'u']))
                    && hex4(chars, i + 8).is_some_and(|t| (0xDC00..=0xDFFF).contains(&t));
                if paired {
                    i += 12;
                    continue;
                }
                if (0xD800..=0xDFFF).contains(&v) {
                    return true;
                }
            }
        }
        i += 1;
    }
    false
}

/// A lead surrogate escape right before a `\u` escape that is not a trail.
fn has_lead_before_other_escape(chars: &[char]) -> bool {
    (0..chars.len()).any(|i| {
        chars[i..].starts_with(&['\\', 'u'])
            && hex4(chars, i + 2).is_some_and(|v| (0xD800..=0xDBFF).contains(&v))
            && chars.get(i + 6..).is_some_and(|r| r.starts_with(&['\\', 'u']))
            && !hex4(chars, i + 8).is_some_and(|t| (0xDC00..=0xDFFF).contains(&t))
    })
}

/// Each escaped ASCII punctuation character that Unicode mode does not allow
/// (`\_`, `\:`, `\-` outside a class) written as the `\xHH` of the character
/// itself — the meaning vouch gives it (Annex B's identity escape) — so that
/// regress, in Unicode mode, judges the rest (as in crates/vouch/tests/patterns.rs).
fn annex_b_literals(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len());
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some(e) if e.is_ascii_punctuation() && !"^$\\.*+?()[]{}|/".contains(e) => {
                out.push_str(&format!("\\x{:02X}", u32::from(e)));
            }
            Some(e) => {
                out.push('\\');
                out.push(e);
            }
            None => out.push('\\'),
        }
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let (pattern, haystack) = match data.iter().position(|&b| b == 0xFF) {
        Some(at) => (&data[..at], &data[at + 1..]),
        None => (data, &[][..]),
    };
    let (Ok(pattern), Ok(haystack)) = (std::str::from_utf8(pattern), std::str::from_utf8(haystack)) else {
        return;
    };
    if pattern.chars().count() > MAX_PATTERN || haystack.chars().count() > MAX_HAYSTACK {
        return;
    }
    let ours = vouch::__pattern_is_match(pattern, haystack);
    let Ok(ours) = ours else {
        // Refusing is always allowed: vouch refuses what it cannot run exactly.
        return;
    };
    let chars: Vec<char> = pattern.chars().collect();
    let theirs = match regress::Regex::with_flags(&annex_b_literals(pattern), "u") {
        Ok(re) => re.find(haystack).is_some(),
        Err(_) if has_lead_before_other_escape(&chars) => return,
        Err(e) => panic!("vouch compiles {pattern:?}, regress refuses it: {e}"),
    };
    if ours == theirs {
        return;
    }
    if (ours && !theirs && has_lone_surrogate_escape(&chars)) || has_lead_before_other_escape(&chars) {
        return;
    }
    panic!("{pattern:?} on {haystack:?}: vouch {ours}, regress {theirs}");
});
