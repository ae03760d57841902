//! A stream check that owns its contract, for a binding's object to hold
//! (a Python or JavaScript object cannot hold a borrow).

use std::sync::Arc;

use vouch::{Contract, Problem, Progress, StreamCheck, Verdict};

self_cell::self_cell!(
    struct Cell {
        owner: Arc<Contract>,
        #[covariant]
        dependent: StreamCheck,
    }
);

/// [`vouch::StreamCheck`] over an `Arc<Contract>`: feed the reply piece by
/// piece, stop the model as soon as it is certainly refused, then take the
/// verdict `check` gives on the whole reply.
///
/// ```
/// use std::sync::Arc;
/// let contract = Arc::new(vouch::Contract::from_json_str(
///     r#"{"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}"#)?);
/// let mut stream = vouch_bind::Stream::new(contract);
/// assert_eq!(stream.feed(br#"{"ok": "#), vouch::Progress::Pending);
/// assert_eq!(stream.feed(b"nu"), vouch::Progress::Refused); // no completion of `nu…` is a boolean
/// assert_eq!(stream.decided_at(), Some(8));
/// assert!(!stream.finish().is_accepted());
/// # Ok::<(), vouch::CompileError>(())
/// ```
pub struct Stream(Cell);

impl std::fmt::Debug for Stream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.borrow_dependent().fmt(f)
    }
}

impl Stream {
    /// A new stream check of `contract`.
    #[must_use]
    pub fn new(contract: Arc<Contract>) -> Self {
        Self(Cell::new(contract, |c| c.stream()))
    }

    /// Feed the next piece (any size; a character split across pieces is fine).
    pub fn feed(&mut self, piece: &[u8]) -> Progress {
        self.0.with_dependent_mut(|_, s| s.feed(piece))
    }

    /// `len` more bytes of a reply already over the contract's `max_bytes`,
    /// counted without being given ([`StreamCheck::feed_past_limit`]):
    /// `false`, and nothing counted, while what was fed is within the limit.
    pub fn feed_past_limit(&mut self, len: usize) -> bool {
        self.0.with_dependent_mut(|_, s| s.feed_past_limit(len))
    }

    /// Feed a piece over the contract's `max_bytes` of which only the
    /// `start` is held (more than the limit's worth), `len` bytes long in
    /// all: the start fed, the rest counted. `None`, and the rest not
    /// counted, if what was fed is still within the limit (the caller held
    /// too little: a bug, not the reply's doing).
    pub fn feed_past_limit_start(&mut self, start: &[u8], len: usize) -> Option<Progress> {
        self.feed(start);
        self.feed_past_limit(len.saturating_sub(start.len())).then(|| self.progress())
    }

    /// What is known so far.
    #[must_use]
    pub fn progress(&self) -> Progress {
        self.0.borrow_dependent().progress()
    }

    /// Why it is refused (empty while pending).
    #[must_use]
    pub fn problems(&self) -> &[Problem] {
        self.0.borrow_dependent().problems()
    }

    /// The bytes received when the refusal became certain.
    #[must_use]
    pub fn decided_at(&self) -> Option<usize> {
        self.0.borrow_dependent().decided_at()
    }

    /// Bytes received so far.
    #[must_use]
    pub fn received(&self) -> usize {
        self.0.borrow_dependent().received()
    }

    /// The value so far, for a display while the rest streams (see
    /// [`StreamCheck::partial`]); never a vouched value.
    #[must_use]
    pub fn partial(&self) -> Option<serde_json::Value> {
        self.0.borrow_dependent().partial()
    }

    /// The verdict `check` gives on everything fed; the check then starts
    /// again, empty, for the next reply.
    #[must_use]
    pub fn finish(&mut self) -> Verdict {
        self.0.with_dependent_mut(|_, s| s.finish_and_restart())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::panic)]
    use super::*;

    #[test]
    fn fed_a_byte_at_a_time_the_verdict_is_check_s() {
        let Ok(c) = Contract::from_json_str(
            r#"{"type": "object", "properties": {"s": {"type": "string", "maxLength": 3}}, "required": ["s"]}"#,
        ) else {
            panic!("no contract")
        };
        let c = Arc::new(c);
        for raw in [r#"{"s": "é€"}"#, r#"{"s": "abcd"}"#, "{", "", r#"{"s": "ab"} x"#] {
            let mut s = Stream::new(Arc::clone(&c));
            for b in raw.as_bytes() {
                s.feed(std::slice::from_ref(b));
            }
            assert_eq!(s.received(), raw.len());
            let v = s.finish();
            assert_eq!(crate::verdict_json(&v), crate::verdict_json(&c.check(raw)), "{raw}");
            assert_eq!(s.received(), 0, "started again");
        }
    }
}
