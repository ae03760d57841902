//! Keeping secrets out of every text built from what an upstream sent.

use std::sync::LazyLock;

use regex::Regex;

/// `Bearer <token>` in any case.
static BEARER: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r#"(?i)\bbearer\s+[^\s"',;}\]]+"#).ok());
/// OpenAI-style secret keys, whole or masked (`sk-abc***xyz`).
static SK: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"\bsk-[A-Za-z0-9_*.\-]{4,}").ok());

/// Removes the API key, `Bearer …` tokens and `sk-…` keys from a text.
#[derive(Clone, Default)]
pub(crate) struct Scrubber {
    key: Option<String>,
}

impl Scrubber {
    pub(crate) fn new(key: Option<&str>) -> Self {
        Self { key: key.filter(|k| !k.is_empty()).map(str::to_owned) }
    }

    pub(crate) fn scrub(&self, text: &str) -> String {
        let mut out = match &self.key {
            Some(key) => text.replace(key.as_str(), "[redacted]"),
            None => text.to_owned(),
        };
        if let Some(re) = BEARER.as_ref() {
            out = re.replace_all(&out, "Bearer [redacted]").into_owned();
        }
        if let Some(re) = SK.as_ref() {
            out = re.replace_all(&out, "sk-[redacted]").into_owned();
        }
        out
    }
}

/// A bounded excerpt: at most `max` characters, then `…`.
pub(crate) fn excerpt(text: &str, max: usize) -> String {
    let mut out: String = text.chars().take(max).collect();
    if text.chars().nth(max).is_some() {
        out.push('…');
    }
    out
}

/// A URL as it may be shown: no user info, no query (either can hold a key).
pub(crate) fn shown_url(url: &reqwest::Url) -> String {
    let mut u = url.clone();
    let _ = u.set_username("");
    let _ = u.set_password(None);
    u.set_query(None);
    u.set_fragment(None);
    u.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scrubs_the_key_bearer_tokens_and_sk_keys() {
        let s = Scrubber::new(Some("canary-XYZ-123"));
        let out = s.scrub(r#"{"error": "bad key canary-XYZ-123 in header Authorization: Bearer abc.def, or sk-proj-abcd1234 or sk-ab***yz"}"#);
        assert!(!out.contains("canary-XYZ-123"));
        assert!(!out.contains("abc.def"));
        assert!(!out.contains("abcd1234"));
        assert!(!out.contains("ab***yz"));
        assert!(out.contains("Bearer [redacted]"));
    }

    #[test]
    fn excerpts_are_bounded() {
        assert_eq!(excerpt("abcdef", 3), "abc…");
        assert_eq!(excerpt("abc", 3), "abc");
    }
}
