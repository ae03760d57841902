//! Keeping secrets out of every byte vouch writes: [`Scrubber`] for a text,
//! [`ScrubbingWriter`] for an output stream.

use std::borrow::Cow;
use std::fmt;
use std::io::{self, Write};
use std::sync::LazyLock;

use base64::Engine as _;
use regex::bytes::{Regex, RegexBuilder};
use regex_automata::hybrid::dfa::DFA;
use regex_automata::{nfa::thompson, util::syntax, Anchored, Input};

use crate::config::ApiKey;

/// `Bearer <token>` in any case.
static BEARER: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r#"(?i)\bbearer[ \t]+[^\s"',;}\]\\]+"#).ok());
/// OpenAI-style secret keys, whole or masked (`sk-abc***xyz`).
static SK: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"\bsk-[A-Za-z0-9_*.\-]{4,}").ok());

/// What a `Bearer …` match becomes: `Bearer [redacted]`, but for one that
/// already is that (its token stops before the `]`), kept as it is, so a
/// text scrubbed twice reads as it did after once (a `--json` report of a
/// scrubbed error, say), not `Bearer [redacted]]`.
fn bearer_replacement(caps: &regex::bytes::Captures<'_>) -> Vec<u8> {
    let whole = caps.get(0).map_or(&b""[..], |m| m.as_bytes());
    let token = whole.get(6..).unwrap_or_default().trim_ascii_start();
    if token == b"[redacted" {
        whole.to_vec()
    } else {
        b"Bearer [redacted]".to_vec()
    }
}

/// What a secret is replaced with.
pub const REDACTED: &str = "[redacted]";

/// A secret this long (in characters) or longer, up to [`PIECES_UP_TO`], is
/// scrubbed in pieces too: any run of [`PIECE`] or more characters that
/// begins or ends it.
const PIECES_FROM: usize = 16;
/// The longest secret scrubbed in pieces: each character past the
/// [`PIECE`] nests a group in the regex, and its compiler recurses per
/// level (an API key is at most a few hundred characters; a longer secret is
/// scrubbed whole).
const PIECES_UP_TO: usize = 256;
/// The shortest piece of a secret scrubbed (see [`PIECES_FROM`]).
const PIECE: usize = 12;

/// A text the scrubber's regex finds, each character in the forms
/// [`char_forms`] gives.
enum Form {
    /// A secret, whole.
    Whole(String),
    /// A secret's first [`PIECE`] characters or more (the longest run there is).
    Head(String),
    /// A secret's last [`PIECE`] characters or more (the longest run there is).
    Tail(String),
    /// A text made from a secret (base64, hex): its letters and digits stand as
    /// they are, nothing escapes those.
    Derived(String),
}

impl Form {
    fn text(&self) -> &str {
        match self {
            Self::Whole(t) | Self::Head(t) | Self::Tail(t) | Self::Derived(t) => t,
        }
    }

    /// The regex of this form.
    fn pattern(&self) -> String {
        match self {
            Self::Whole(t) => t.chars().map(char_forms).collect(),
            Self::Derived(t) => {
                t.chars().map(|c| if c.is_ascii_alphanumeric() { ci(c) } else { char_forms(c) }).collect()
            }
            // `c1…c12(?:c13(?:c14…)?)?`: greedy, so the longest head present is taken.
            Self::Head(t) => {
                let chars: Vec<char> = t.chars().collect();
                let (must, may) = chars.split_at(PIECE.min(chars.len()));
                let mut p: String = must.iter().copied().map(char_forms).collect();
                for &c in may {
                    p.push_str("(?:");
                    p.push_str(&char_forms(c));
                }
                p.push_str(&")?".repeat(may.len()));
                p
            }
            // `(?:(?:c1)?c2…)?c(n-11)…cn`: a match starts where the tail does,
            // and the leftmost start is the longest tail present.
            Self::Tail(t) => {
                let chars: Vec<char> = t.chars().collect();
                let (may, must) = chars.split_at(chars.len().saturating_sub(PIECE));
                let mut p = "(?:".repeat(may.len());
                for &c in may {
                    p.push_str(&char_forms(c));
                    p.push_str(")?");
                }
                p.extend(must.iter().copied().map(char_forms));
                p
            }
        }
    }
}

/// Removes secrets (the API key) from a text, in every form an echoing
/// upstream or a JSON printer can give them, and `Bearer …` tokens and
/// `sk-…` keys.
///
/// A secret is found, and replaced by `[redacted]`:
/// - as it is;
/// - JSON-escaped, each character in any of its forms: `\"`, `\\`, `\/`,
///   the short escapes of control characters, `\uXXXX` with hex digits in
///   either case (surrogate pairs for characters beyond the BMP), and
///   escaped again any number of times (`\\\"`, `\\u0041`: a JSON text
///   inside a JSON string, as a `--json` report of a raw reply has it);
/// - percent-encoded (`%2F` or `%2f`, `+` for a space), as a URL or a form
///   echo has it, and with HTML numeric character references (`&#47;`,
///   `&#x2F;`); any mix of these forms, character by character;
/// - base64 (standard and URL-safe alphabets, padded or not) at any
///   alignment: so inside the base64 of `Bearer KEY`, of `user:KEY` (HTTP
///   Basic) or of any text that holds the key, and again in any of the
///   forms above;
/// - in hexadecimal, either case.
///
/// A piece of a secret of 16 to 256 characters that begins or ends it, 12
/// characters long or more (a truncated echo, a log that shows all but the
/// last few characters), is scrubbed too, in the forms above but base64 and
/// hex.
///
/// Not covered: any other transformation (a changed case, a reversed key,
/// a piece from its middle, the key split by white space, a hash, a
/// compression). A
/// secret is matched within one line: it is split at line breaks, and each
/// line of it is a secret (an HTTP header, so an API key, holds none).
///
/// `Bearer <token>` (a space or tab between) and `sk-…` keys are replaced
/// whatever the token, when the scrubber has patterns on
/// ([`Scrubber::new`], [`Scrubber::for_key`]).
///
/// Its `Debug` shows how many secrets it has, never them.
#[derive(Clone, Default)]
pub struct Scrubber {
    /// Every form of every secret, in one regex; `None` for no secret.
    secrets: Option<Regex>,
    /// The same forms as a lazy DFA, to tell whether a text's end could
    /// still grow into one ([`Scrubber::open_prefix`]).
    prefix: Option<std::sync::Arc<DFA>>,
    /// The number of secrets.
    count: usize,
    /// The longest form a secret can take here, in bytes (a bound for writers).
    window: usize,
    /// Replace `Bearer …` and `sk-…` too.
    patterns: bool,
}

impl fmt::Debug for Scrubber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scrubber").field("secrets", &self.count).field("patterns", &self.patterns).finish()
    }
}

impl Scrubber {
    /// A scrubber that changes nothing: no secret, no pattern.
    #[must_use]
    pub fn none() -> Self {
        Self::default()
    }

    /// A scrubber of the key (if any), `Bearer …` tokens and `sk-…` keys.
    #[must_use]
    pub fn for_key(key: Option<&ApiKey>) -> Self {
        Self::new(key.map(ApiKey::expose))
    }

    /// A scrubber of these secrets (empty ones and lines shorter than 4
    /// bytes are skipped: they would redact ordinary text), `Bearer …` tokens
    /// and `sk-…` keys.
    #[must_use]
    pub fn new<S: AsRef<str>>(secrets: impl IntoIterator<Item = S>) -> Self {
        let mut lines: Vec<String> = Vec::new();
        for s in secrets {
            for line in s.as_ref().split(['\n', '\r']) {
                let line = line.trim();
                if line.len() >= 4 && !lines.iter().any(|l| l == line) {
                    lines.push(line.to_owned());
                }
            }
        }
        let count = lines.len();
        let mut forms: Vec<Form> = Vec::new();
        for line in &lines {
            forms.push(Form::Whole(line.clone()));
            // A piece of a long secret cut at either end (a truncated echo, a
            // log that shows all but a few characters) is scrubbed too.
            if (PIECES_FROM..=PIECES_UP_TO).contains(&line.chars().count()) {
                forms.push(Form::Head(line.clone()));
                forms.push(Form::Tail(line.clone()));
            }
            forms.extend(base64_cores(line.as_bytes()).into_iter().map(Form::Derived));
            forms.push(Form::Derived(hex_lower(line.as_bytes())));
        }
        let longest = forms.iter().map(|f| f.text().len()).max().unwrap_or(0);
        // `\uD83D\uDE00` is the longest form of one character: 12 bytes, plus escapes of the backslash.
        let window = longest.saturating_mul(16).saturating_add(64);
        let (secrets, prefix) = if forms.is_empty() { (None, None) } else { build(&forms) };
        Self { secrets, prefix: prefix.map(std::sync::Arc::new), count, window, patterns: true }
    }

    /// This scrubber without the `Bearer …` and `sk-…` patterns: only its
    /// own secrets are replaced.
    #[must_use]
    pub fn without_patterns(mut self) -> Self {
        self.patterns = false;
        self
    }

    /// The longest form one of its secrets can take, in bytes (with slack);
    /// 0 with no secret.
    pub(crate) fn window(&self) -> usize {
        if self.secrets.is_none() {
            0
        } else {
            self.window
        }
    }

    /// The first position at or after `from` where the rest of `text`
    /// could be the start of one of its secrets, in any form it covers (a
    /// text that could still grow into one): what a relay must hold back.
    /// `None` when no secret can begin there (or there is no secret). For
    /// many texts in a row, [`Scrubber::prefix_search`] keeps its DFA states.
    #[cfg(test)]
    pub(crate) fn open_prefix(&self, text: &[u8], from: usize) -> Option<usize> {
        self.prefix_search().open_prefix(text, from)
    }

    /// A search for [`PrefixSearch::open_prefix`] that keeps the lazy DFA's
    /// states from one text to the next (a stream asks after every piece).
    pub(crate) fn prefix_search(&self) -> PrefixSearch<'_> {
        let dfa = self.prefix.as_deref();
        PrefixSearch { secrets: self.secrets.is_some(), cache: dfa.map(DFA::create_cache), dfa }
    }

    /// True when it changes nothing (no secret, no pattern).
    #[must_use]
    pub fn is_none(&self) -> bool {
        self.secrets.is_none() && !self.patterns
    }

    /// True when it has secrets of its own (not only the patterns): else
    /// [`Scrubber::holds_secret`] is false for every text.
    #[must_use]
    pub fn has_secrets(&self) -> bool {
        self.secrets.is_some()
    }

    /// True when the bytes hold one of its secrets, in any form it covers
    /// (not the patterns: a `Bearer` token of someone else is no secret of
    /// ours).
    #[must_use]
    pub fn holds_secret(&self, bytes: &[u8]) -> bool {
        self.secrets.as_ref().is_some_and(|re| re.is_match(bytes))
    }

    /// The text with every secret, `Bearer …` token and `sk-…` key replaced.
    #[must_use]
    pub fn scrub(&self, text: &str) -> String {
        match self.scrub_bytes(text.as_bytes()) {
            Cow::Borrowed(_) => text.to_owned(),
            Cow::Owned(b) => {
                String::from_utf8(b).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
            }
        }
    }

    /// [`Scrubber::scrub`] of bytes.
    #[must_use]
    pub fn scrub_bytes<'a>(&self, bytes: &'a [u8]) -> Cow<'a, [u8]> {
        let mut out: Cow<'a, [u8]> = Cow::Borrowed(bytes);
        if let Some(re) = &self.secrets {
            if let Cow::Owned(o) = re.replace_all(&out, REDACTED.as_bytes()) {
                out = Cow::Owned(o);
            }
        }
        if self.patterns {
            if let Some(re) = BEARER.as_ref() {
                if let Cow::Owned(o) = re.replace_all(&out, bearer_replacement) {
                    out = Cow::Owned(o);
                }
            }
            if let Some(re) = SK.as_ref() {
                if let Cow::Owned(o) = re.replace_all(&out, &b"sk-[redacted]"[..]) {
                    out = Cow::Owned(o);
                }
            }
        }
        out
    }

    /// Where the text may be cut without cutting a match: the end of the
    /// last line break not inside a match, or (for a long text without
    /// one) a point at least [`Scrubber::window`] bytes before the end and
    /// outside every match.
    fn safe_cut(&self, bytes: &[u8], force: bool) -> usize {
        let spans = self.spans(bytes);
        let inside = |at: usize| spans.iter().find(|(s, e)| *s < at && at < *e).map(|(s, _)| *s);
        let mut at = bytes.len();
        while let Some(nl) = bytes.get(..at).and_then(|b| b.iter().rposition(|&c| c == b'\n')) {
            let cut = nl + 1;
            match inside(cut) {
                None => return cut,
                Some(start) => at = start,
            }
        }
        if !force {
            return 0;
        }
        let mut cut = bytes.len().saturating_sub(self.window.max(1024));
        while let Some(start) = inside(cut) {
            cut = start;
        }
        cut
    }

    fn spans(&self, bytes: &[u8]) -> Vec<(usize, usize)> {
        let mut spans = Vec::new();
        let mut add = |re: &Regex| spans.extend(re.find_iter(bytes).map(|m| (m.start(), m.end())));
        if let Some(re) = &self.secrets {
            add(re);
        }
        if self.patterns {
            for re in [BEARER.as_ref(), SK.as_ref()].into_iter().flatten() {
                add(re);
            }
        }
        spans
    }
}

/// See [`Scrubber::prefix_search`].
pub(crate) struct PrefixSearch<'a> {
    secrets: bool,
    dfa: Option<&'a DFA>,
    cache: Option<regex_automata::hybrid::dfa::Cache>,
}

impl PrefixSearch<'_> {
    /// The first position at or after `from` where the rest of `text` could
    /// still grow into one of the scrubber's secrets; `None` when none can
    /// begin there (or there is no secret).
    pub(crate) fn open_prefix(&mut self, text: &[u8], from: usize) -> Option<usize> {
        if !self.secrets {
            return None;
        }
        let (Some(dfa), Some(cache)) = (self.dfa, self.cache.as_mut()) else { return Some(from.min(text.len())) };
        (from..text.len()).find(|&p| {
            let Some(tail) = text.get(p..) else { return false };
            let input = Input::new(tail).anchored(Anchored::Yes);
            let Ok(mut state) = dfa.start_state_forward(cache, &input) else { return true };
            for &b in tail {
                match dfa.next_state(cache, state, b) {
                    Ok(next) if next.is_dead() => return false,
                    Ok(next) => state = next,
                    // The cache gave up: hold back, to be safe.
                    Err(_) => return true,
                }
            }
            true
        })
    }
}

/// The regex of every form of these texts (see [`Scrubber`]); if it is too
/// large to build, the texts as they are and JSON-escaped; if even that
/// fails (it cannot, for escaped literals), a regex of everything: redact
/// all rather than nothing.
///
/// Each form is `(text, whole)`: the secret itself has every form of each
/// character; a derived form (base64, hex) has every form of each character
/// but its letters and digits, which stand as they are (hex letters in
/// either case): nothing escapes those.
///
/// With it, the same pattern as a lazy DFA for [`Scrubber::open_prefix`]
/// (`None` if it cannot be built: then every text's end is held back).
fn build(forms: &[Form]) -> (Option<Regex>, Option<DFA>) {
    let alternatives: Vec<String> = forms.iter().map(Form::pattern).collect();
    let pattern = alternatives.join("|");
    let full =
        RegexBuilder::new(&pattern).size_limit(256 << 20).dfa_size_limit(64 << 20).nest_limit(NEST_LIMIT).build();
    let prefix = full.is_ok().then(|| prefix_dfa(&pattern)).flatten();
    let regex = full
        .or_else(|_| {
            let plain: Vec<String> = forms
                .iter()
                .filter(|f| !matches!(f, Form::Head(_) | Form::Tail(_)))
                .map(Form::text)
                .flat_map(|f| {
                    let json = serde_json::to_string(f).unwrap_or_default();
                    let json = json.trim_matches('"').to_owned();
                    [regex::escape(f), regex::escape(&json), regex::escape(&json.replace('/', "\\/"))]
                })
                .collect();
            Regex::new(&plain.join("|"))
        })
        .or_else(|_| Regex::new(r"(?s).+"))
        .ok();
    (regex, prefix)
}

/// How deep the regex parser lets groups nest: a [`Form::Head`] or
/// [`Form::Tail`] nests two levels (a group, its `?`) a character past the
/// [`PIECE`], so [`PIECES_UP_TO`] takes about 500.
const NEST_LIMIT: u32 = 1024;

/// The lazy DFA of `pattern`, over bytes (as `regex::bytes` reads it).
fn prefix_dfa(pattern: &str) -> Option<DFA> {
    DFA::builder()
        .syntax(syntax::Config::new().utf8(false).nest_limit(NEST_LIMIT))
        .thompson(thompson::Config::new().utf8(false))
        .configure(DFA::config().cache_capacity(8 << 20))
        .build(pattern)
        .ok()
}

/// Every form of one character: as it is, JSON-escaped (again any number
/// of times), `\uXXXX`, percent-encoded, an HTML character reference.
fn char_forms(c: char) -> String {
    let mut alts: Vec<String> = Vec::new();
    let mut raw = [0u8; 4];
    let raw = c.encode_utf8(&mut raw);
    // Raw, or after any number of escaping backslashes (`\/`, `\"`, `\\`, `\\\"`).
    alts.push(format!(r"\\*{}", regex::escape(raw)));
    let short = match c {
        '\u{8}' => Some('b'),
        '\u{c}' => Some('f'),
        '\n' => Some('n'),
        '\r' => Some('r'),
        '\t' => Some('t'),
        _ => None,
    };
    if let Some(s) = short {
        alts.push(format!(r"\\+{s}"));
    }
    let mut units = [0u16; 2];
    let units: String =
        c.encode_utf16(&mut units).iter().map(|u| format!(r"\\+u{}", hex_ci(u32::from(*u), 4))).collect();
    alts.push(units);
    let pct: String = raw.bytes().map(|b| format!("%{}", hex_ci(u32::from(b), 2))).collect();
    alts.push(pct);
    if c == ' ' {
        alts.push(r"\+".to_owned());
    }
    let n = u32::from(c);
    alts.push(format!("&#(?:0*{n}|[xX]0*{});", hex_ci_trim(n)));
    format!("(?:{})", alts.join("|"))
}

/// `n` in `width` hex digits, each letter in either case: `002[fF]`.
fn hex_ci(n: u32, width: usize) -> String {
    format!("{n:0width$x}").chars().map(ci).collect()
}

/// `n` in hex without leading zeros, letters in either case.
fn hex_ci_trim(n: u32) -> String {
    format!("{n:x}").chars().map(ci).collect()
}

fn ci(d: char) -> String {
    if d.is_ascii_alphabetic() {
        format!("[{}{}]", d.to_ascii_lowercase(), d.to_ascii_uppercase())
    } else {
        d.to_string()
    }
}

/// The hex of the bytes (matched in either case).
fn hex_lower(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The part of the base64 of `prefix + secret + suffix` that depends only on
/// the secret, for each of the three alignments, in the standard and the
/// URL-safe alphabets: any base64 text that encodes the secret holds one.
fn base64_cores(secret: &[u8]) -> Vec<String> {
    let mut cores = Vec::new();
    for shift in 0..3usize {
        let mut padded = vec![0u8; shift];
        padded.extend_from_slice(secret);
        let encoded = base64::engine::general_purpose::STANDARD_NO_PAD.encode(&padded);
        // Skip the characters that hold bits of the bytes before the secret
        // (a shift of 1 or 2 bytes spoils the first 2 or 3 characters).
        let skip = match shift {
            0 => 0,
            1 => 2,
            _ => 3,
        };
        // A character is wholly the secret's if its 6 bits end by the secret's last bit.
        let end = (padded.len() * 8 / 6).max(skip);
        if let Some(core) = encoded.get(skip..end) {
            if core.len() >= 8 {
                cores.push(core.to_owned());
                let url = core.replace('+', "-").replace('/', "_");
                if url != core {
                    cores.push(url);
                }
            }
        }
    }
    cores
}

/// A writer that scrubs every byte written through it with a [`Scrubber`]
/// before it reaches the inner writer, also a secret split across two
/// writes: it writes whole lines (a secret holds no line break), and keeps
/// the unfinished last line until a line break, [`ScrubbingWriter::finish`]
/// or drop. A line longer than a secret can be is written in parts, cut
/// outside every match.
///
/// [`Write::flush`] writes the whole lines and flushes the inner writer; it
/// keeps the unfinished line (writing it could cut a secret in two).
pub struct ScrubbingWriter<W: Write> {
    inner: W,
    scrubber: Scrubber,
    pending: Vec<u8>,
}

/// The longest unfinished line kept before a part of it is written.
const MAX_PENDING: usize = 64 * 1024;

impl<W: Write> ScrubbingWriter<W> {
    /// Scrub what is written to `inner` with `scrubber`.
    pub fn new(inner: W, scrubber: Scrubber) -> Self {
        Self { inner, scrubber, pending: Vec::new() }
    }

    /// Scrub with this scrubber from now on (the unfinished line too).
    pub fn set_scrubber(&mut self, scrubber: Scrubber) {
        self.scrubber = scrubber;
    }

    /// The scrubber.
    pub fn scrubber(&self) -> &Scrubber {
        &self.scrubber
    }

    /// The inner writer.
    pub fn get_ref(&self) -> &W {
        &self.inner
    }

    /// Write the unfinished line too, scrubbed, and flush.
    ///
    /// # Errors
    /// The inner writer's.
    pub fn finish(&mut self) -> io::Result<()> {
        let rest = std::mem::take(&mut self.pending);
        if !rest.is_empty() {
            self.inner.write_all(&self.scrubber.scrub_bytes(&rest))?;
        }
        self.inner.flush()
    }

    /// Write what can be written now without cutting a secret.
    fn drain(&mut self) -> io::Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        if self.scrubber.is_none() {
            let all = std::mem::take(&mut self.pending);
            return self.inner.write_all(&all);
        }
        let cut = self.scrubber.safe_cut(&self.pending, self.pending.len() > MAX_PENDING);
        if cut == 0 {
            return Ok(());
        }
        let rest = self.pending.split_off(cut);
        let ready = std::mem::replace(&mut self.pending, rest);
        self.inner.write_all(&self.scrubber.scrub_bytes(&ready))
    }
}

impl<W: Write> Write for ScrubbingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.pending.extend_from_slice(buf);
        self.drain()?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.drain()?;
        self.inner.flush()
    }
}

impl<W: Write> Drop for ScrubbingWriter<W> {
    fn drop(&mut self) {
        let _ = self.finish();
    }
}

impl<W: Write> fmt::Debug for ScrubbingWriter<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScrubbingWriter")
            .field("scrubber", &self.scrubber)
            .field("pending", &self.pending.len())
            .finish_non_exhaustive()
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

    const KEY: &str = r#"canary/"key\91d2e7c4"#;

    fn s() -> Scrubber {
        Scrubber::new([KEY])
    }

    #[test]
    fn an_end_that_could_grow_into_the_key_is_held_back_and_no_other() {
        let s = Scrubber::new(["sk-upstream-canary-5c1f"]);
        let text = br#"{"productPresent":false,"note":"sk-upstr"#;
        let first_s = text.windows(3).position(|w| w == b"sk-");
        assert!(first_s.is_some());
        assert_eq!(s.open_prefix(text, 0), first_s, "the key's start is held back");
        // Its JSON-escaped and percent-encoded forms too.
        let escaped = br#"{"note":"\u0073\u006b-ups"#;
        assert_eq!(s.open_prefix(escaped, 0), escaped.iter().position(|&b| b == b'\\'));
        let pct = b"{\"note\":\"%73%6B-up";
        assert_eq!(s.open_prefix(pct, 0), pct.iter().position(|&b| b == b'%'));
        // Text that cannot begin the key goes on whole.
        assert_eq!(s.open_prefix(br#"{"productPresent":false}"#, 0), None);
        assert_eq!(Scrubber::none().open_prefix(b"sk-upstr", 0), None);
    }

    #[test]
    fn scrubs_the_key_bearer_tokens_and_sk_keys() {
        let s = Scrubber::new(["canary-XYZ-123"]);
        let out = s.scrub(r#"{"error": "bad key canary-XYZ-123 in header Authorization: Bearer abc.def, or sk-proj-abcd1234 or sk-ab***yz"}"#);
        assert!(!out.contains("canary-XYZ-123"));
        assert!(!out.contains("abc.def"));
        assert!(!out.contains("abcd1234"));
        assert!(!out.contains("ab***yz"));
        assert!(out.contains("Bearer [redacted]"));
        // Scrubbing is idempotent: a scrubbed text scrubbed again is unchanged.
        assert_eq!(s.scrub(&out), out);
        assert!(!out.contains("[redacted]]"), "{out}");
        // A token that only looks scrubbed is not kept.
        let near = s.scrub("Authorization: bearer  [redactedX] and Bearer x[redacted]");
        assert_eq!(near, "Authorization: Bearer [redacted]] and Bearer [redacted]]", "{near}");
    }

    #[test]
    fn every_encoding_of_the_key_is_scrubbed() {
        let s = s();
        let json = serde_json::to_string(KEY).unwrap_or_default();
        let twice = serde_json::to_string(&json).unwrap_or_default();
        let unicode: String = KEY.chars().map(|c| format!("\\u{:04X}", u32::from(c))).collect();
        let mixed = r#"can\u0061ry\/\"key\\91d2e7c4"#;
        let pct: String = KEY.bytes().map(|b| format!("%{b:02x}")).collect();
        let html: String = KEY.chars().map(|c| format!("&#{};", u32::from(c))).collect();
        let hex: String = KEY.bytes().map(|b| format!("{b:02X}")).collect::<String>().to_ascii_lowercase();
        let mut texts = vec![KEY.to_owned(), json, twice, unicode, mixed.to_owned(), pct, html, hex];
        for prefix in ["Bearer ", "user:", "x", ""] {
            for engine in [base64::engine::general_purpose::STANDARD, base64::engine::general_purpose::URL_SAFE] {
                texts.push(engine.encode(format!("{prefix}{KEY}!")));
                texts.push(engine.encode(format!("{prefix}{KEY}")));
            }
        }
        for t in texts {
            let text = format!("before {t} after");
            assert!(s.holds_secret(text.as_bytes()), "{text}");
            let out = s.scrub(&text);
            assert!(out.starts_with("before ") && out.ends_with(" after"), "{out}");
            assert!(!out.contains("91d2e7c4") && !out.contains("canary"), "{t} -> {out}");
        }
        assert!(!s.holds_secret(b"canary/key 91d2e7c4"));
        assert_eq!(s.scrub("nothing here"), "nothing here");
    }

    #[test]
    fn a_piece_of_a_long_key_cut_at_either_end_is_scrubbed_whole() {
        let key = "gw-7Qx2Lm9Rc4Vb8Nt1Kp6Zs3Wd5Yh0Jf"; // 33 characters
        let s = Scrubber::new([key]).without_patterns();
        let chars: Vec<char> = key.chars().collect();
        for n in PIECE..=chars.len() {
            let head: String = chars.iter().take(n).collect();
            let tail: String = chars.iter().skip(chars.len() - n).collect();
            for piece in [&head, &tail] {
                // As it is, JSON-escaped, percent-encoded: each piece in full.
                let escaped: String = piece.chars().map(|c| format!("\\u{:04x}", u32::from(c))).collect();
                let pct: String = piece.bytes().map(|b| format!("%{b:02X}")).collect();
                for form in [piece.clone(), escaped, pct] {
                    let out = s.scrub(&format!("key {form}… was refused"));
                    assert_eq!(out, "key [redacted]… was refused", "{n} characters: {form}");
                }
            }
        }
        // A piece shorter than PIECE, or from the middle, is ordinary text.
        let short: String = chars.iter().take(PIECE - 1).collect();
        let middle: String = chars.iter().skip(4).take(chars.len() - 8).collect();
        for text in [short, middle] {
            assert_eq!(s.scrub(&text), text);
            assert!(!s.holds_secret(text.as_bytes()));
        }
        // A secret under PIECES_FROM characters is scrubbed whole only.
        let short_key = Scrubber::new(["q7Zr2Lm9Xc4Vb8N"]).without_patterns();
        assert_eq!(short_key.scrub("q7Zr2Lm9Xc4Vb8"), "q7Zr2Lm9Xc4Vb8");
        assert_eq!(short_key.scrub("q7Zr2Lm9Xc4Vb8N"), REDACTED);
        // A secret too long to scrub in pieces is still scrubbed whole.
        let long: String =
            (0..PIECES_UP_TO + 1).map(|i| char::from(b'a' + u8::try_from(i % 26).unwrap_or(0))).collect();
        let long_key = Scrubber::new([long.as_str()]).without_patterns();
        assert_eq!(long_key.scrub(&format!("<{long}>")), "<[redacted]>");
    }

    #[test]
    fn a_key_as_long_as_pieces_go_builds_in_the_regex_compilers_reach() {
        // Every character of this key has many forms (a quote, a backslash,
        // non-ASCII): the deepest nesting the pieces make.
        let key: String = "\"\\é€😀".chars().cycle().take(PIECES_UP_TO).collect();
        let s = Scrubber::new([key.as_str()]).without_patterns();
        let head: String = key.chars().take(200).collect();
        let tail: String = key.chars().skip(56).collect();
        assert_eq!(s.scrub(&format!("[{head}]")), "[[redacted]]");
        assert_eq!(s.scrub(&format!("[{tail}]")), "[[redacted]]");
        assert_eq!(s.scrub(&format!("[{key}]")), "[[redacted]]");
        // (Cut before a backslash: a closing quote could be the key's next character.)
        let json = serde_json::to_string(&key.chars().take(201).collect::<String>()).unwrap_or_default();
        assert_eq!(s.scrub(&json), "\"[redacted]\"");
    }

    #[test]
    fn the_writer_scrubs_a_key_split_across_writes() {
        let key = "q7Zr2Lm9Xc4Vb8Nt1Kp6";
        let text = format!("line one {key}\nsecond {key} and \"{}\" end", key.replace('Z', "\\u005a"));
        for step in [1, 2, 3, 7, 64] {
            let mut w = ScrubbingWriter::new(Vec::new(), Scrubber::new([key]));
            for chunk in text.as_bytes().chunks(step) {
                w.write_all(chunk).unwrap_or_default();
                w.flush().unwrap_or_default();
            }
            w.finish().unwrap_or_default();
            let out = String::from_utf8_lossy(w.get_ref()).into_owned();
            assert_eq!(out, "line one [redacted]\nsecond [redacted] and \"[redacted]\" end", "{step}");
        }
        // A long line without a break is written in parts, never cutting the key.
        let long = format!("{}{key}{}", "x".repeat(MAX_PENDING), "y".repeat(MAX_PENDING));
        let mut w = ScrubbingWriter::new(Vec::new(), Scrubber::new([key]));
        for chunk in long.as_bytes().chunks(1000) {
            w.write_all(chunk).unwrap_or_default();
        }
        assert!(!w.get_ref().is_empty());
        w.finish().unwrap_or_default();
        let out = String::from_utf8_lossy(w.get_ref()).into_owned();
        assert!(!out.contains(key) && out.contains(REDACTED));
        assert_eq!(out.len(), long.len() - key.len() + REDACTED.len());
    }

    #[test]
    fn a_scrubber_of_nothing_changes_nothing() {
        let mut w = ScrubbingWriter::new(Vec::new(), Scrubber::none());
        w.write_all(b"Bearer abc sk-abcdefgh partial").unwrap_or_default();
        assert_eq!(w.get_ref().as_slice(), b"Bearer abc sk-abcdefgh partial");
        assert!(format!("{:?}", Scrubber::new([KEY])).contains("secrets: 1"));
        assert!(!format!("{:?}", Scrubber::new([KEY])).contains("canary"));
    }

    #[test]
    fn excerpts_are_bounded() {
        assert_eq!(excerpt("abcdef", 3), "abc…");
        assert_eq!(excerpt("abc", 3), "abc");
    }
}
