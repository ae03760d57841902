//! RFC 6901 JSON Pointers: the paths in problems, repairs and compile errors.

/// Append `segment` to a pointer as one `/`-separated, escaped token.
pub(crate) fn push_escaped(out: &mut String, segment: &str) {
    if !segment.contains(['~', '/']) {
        out.push_str(segment);
        return;
    }
    for c in segment.chars() {
        match c {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            c => out.push(c),
        }
    }
}

/// `base` extended by one token.
#[must_use]
pub(crate) fn join(base: &str, segment: &str) -> String {
    let mut out = String::with_capacity(base.len() + segment.len() + 1);
    out.push_str(base);
    out.push('/');
    push_escaped(&mut out, segment);
    out
}

/// The tokens of a pointer, unescaped; `None` when it is malformed.
pub(crate) fn tokens(pointer: &str) -> Option<Vec<String>> {
    if pointer.is_empty() {
        return Some(Vec::new());
    }
    let rest = pointer.strip_prefix('/')?;
    rest.split('/')
        .map(|t| {
            let mut out = String::with_capacity(t.len());
            let mut chars = t.chars();
            while let Some(c) = chars.next() {
                if c == '~' {
                    match chars.next() {
                        Some('0') => out.push('~'),
                        Some('1') => out.push('/'),
                        _ => return None,
                    }
                } else {
                    out.push(c);
                }
            }
            Some(out)
        })
        .collect()
}

/// Decode `%HH` escapes of a URI fragment; `None` when malformed.
pub(crate) fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_round_trip() {
        let p = join("/a", "b/c~d");
        assert_eq!(p, "/a/b~1c~0d");
        assert_eq!(tokens(&p), Some(vec!["a".to_owned(), "b/c~d".to_owned()]));
        assert_eq!(tokens("a"), None);
        assert_eq!(tokens("/~2"), None);
        assert_eq!(percent_decode("a%25b%22"), Some("a%b\"".to_owned()));
        assert_eq!(percent_decode("%2"), None);
    }
}
