//! Checking a reply while it streams: [`StreamCheck`].
//!
//! A model's reply arrives in pieces. Fed each piece as it comes (any size,
//! a UTF-8 character or an escape split across two pieces included), a
//! [`StreamCheck`] says after each one whether some completion of what came
//! could still be accepted ([`Progress::Pending`]) or none can
//! ([`Progress::Refused`], with the problems): the caller can stop the model
//! there. [`StreamCheck::finish`] gives the verdict [`Contract::check`] gives
//! on the whole reply, byte for byte; feeding the whole reply at once *is*
//! `check`.

use serde_json::Value;

use super::Contract;
use crate::problem::Problem;
use crate::single_pass::{Outcome, SinglePass};
use crate::verdict::{Accepted, Verdict};

impl Contract {
    /// Check a reply while it streams: feed it piece by piece to the
    /// [`StreamCheck`] this returns, which says after each piece whether
    /// the reply can still be accepted (see [`StreamCheck`]).
    #[must_use]
    pub fn stream(&self) -> StreamCheck<'_> {
        StreamCheck::new(self)
    }
}

/// What a [`StreamCheck`] knows after a piece of the reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// Some completion of what came could still be accepted.
    Pending,
    /// No completion can be: the reply is refused whatever follows
    /// ([`StreamCheck::problems`] says why).
    Refused,
}

/// A check of one reply fed piece by piece (see [`Contract::stream`](crate::Contract::stream)).
///
/// ```
/// use vouch::{Contract, Progress};
///
/// let contract = Contract::from_json_str(r#"{
///     "type": "object",
///     "properties": {"productPresent": {"type": "boolean"}},
///     "required": ["productPresent"],
///     "additionalProperties": false
/// }"#)?;
///
/// let mut stream = contract.stream();
/// assert_eq!(stream.feed(r#"{"productPres"#), Progress::Pending);
/// assert_eq!(stream.feed(r#"ent": tr"#), Progress::Pending);
/// assert_eq!(stream.feed("ue}"), Progress::Pending);
/// assert!(stream.finish().is_pass());
/// # Ok::<(), vouch::CompileError>(())
/// ```
pub struct StreamCheck<'c> {
    contract: &'c Contract,
    pass: SinglePass<'c>,
    /// The reply so far, up to its last whole character.
    text: String,
    /// The bytes of a character a piece cut in two.
    tail: Vec<u8>,
    /// Bytes received but not in `text` (the tail, and what came past
    /// `max_bytes` or invalid UTF-8): received is `text.len()` plus these.
    unkept: usize,
    /// `text` as long as it was when the stream was last pending (while
    /// not refused, the stream is pending at `text`'s end: the one-byte
    /// lane does not write it).
    pending_at: usize,
    /// A byte may take the one-byte lane: nothing held back, not refused,
    /// nothing past the limit or not UTF-8.
    lane: bool,
    /// Plain bytes the open string takes without the pass (see
    /// [`SinglePass::plain_room`]); zero when none.
    plain: u64,
    /// `plain` was opened where the pass last stood: every byte since is
    /// one the plain lane took (any other goes to the pass, which resets it).
    plain_open: bool,
    /// ASCII white space is taken without the pass (see
    /// [`SinglePass::between_tokens`]).
    blank: bool,
    /// Refused, and nothing held back, past the limit or not UTF-8: an
    /// ASCII byte is only kept, for the verdict at the end.
    kept_only: bool,
    /// The reply is over `max_bytes`: nothing more is kept.
    too_large: bool,
    /// The reply is not UTF-8: the refusal, the byte count that decided
    /// it, and nothing more is kept.
    not_utf8: Option<(Problem, usize)>,
    /// Refused: the byte count that decided it, and why.
    refusal: Option<(usize, Vec<Problem>)>,
    /// The contract's `max_bytes`.
    max_bytes: usize,
}

impl std::fmt::Debug for StreamCheck<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamCheck")
            .field("received", &self.received())
            .field("progress", &self.progress())
            .field("decided_at", &self.decided_at())
            .finish_non_exhaustive()
    }
}

impl<'c> StreamCheck<'c> {
    pub(crate) fn new(contract: &'c Contract) -> Self {
        Self {
            contract,
            pass: contract.single_pass(true),
            // Most replies are under a kilobyte: grown once at most, not eight times.
            text: String::with_capacity(1024),
            tail: Vec::new(),
            unkept: 0,
            pending_at: 0,
            lane: true,
            plain: 0,
            plain_open: false,
            blank: true,
            kept_only: false,
            too_large: false,
            not_utf8: None,
            refusal: None,
            max_bytes: contract.limits().max_bytes,
        }
    }

    /// Feed the next piece of the reply; what is known after it.
    // Inlined into the caller's loop: a stream fed a byte at a time pays a
    // call per byte otherwise.
    #[inline]
    pub fn feed(&mut self, piece: impl AsRef<[u8]>) -> Progress {
        let piece = piece.as_ref();
        // One ASCII byte that only extends an open string or number, or is
        // white space where the pass waits, is taken on the spot (a model
        // streams a token or a byte at a time: this is the common case).
        if let [b] = piece {
            // Inside a string, most bytes: kept, for the pass to step past
            // with the next other byte (`plain` is only set in the lane, and
            // within the limit on bytes).
            if self.plain > 0 && (0x20..0x80).contains(b) && *b != b'"' && *b != b'\\' {
                self.plain -= 1;
                self.text.push(char::from(*b));
                return Progress::Pending;
            }
            if *b < 0x80 && self.text.len() < self.max_bytes {
                // Between tokens, white space (indentation, mostly): the same.
                if self.blank && matches!(b, b' ' | b'\n' | b'\t' | b'\r') {
                    self.text.push(char::from(*b));
                    return Progress::Pending;
                }
                if self.lane {
                    return self.feed_byte(*b);
                }
                if self.kept_only {
                    self.text.push(char::from(*b));
                    return Progress::Refused;
                }
            }
        }
        self.feed_piece(piece)
    }

    /// `len` more bytes of a reply already over the contract's `max_bytes`,
    /// counted without being given: what [`Self::feed`] does with bytes past
    /// the limit (nothing past it is read or kept), for a reader that knows
    /// how long the rest of a reply is without holding it (a binding reads a
    /// string's length, not its characters, and copies only the start).
    /// `false`, and nothing counted, while what was fed is within the limit:
    /// those bytes must be fed, for they are read.
    ///
    /// ```
    /// let contract =
    ///     vouch::Contract::from_json_str(r#"{"type": "object", "x-vouch": {"limits": {"max_bytes": 8}}}"#)?;
    /// let reply = r#"{"a": 1, "b": 2}"#;
    /// let mut stream = contract.stream();
    /// assert!(!stream.feed_past_limit(7));
    /// stream.feed(&reply[..9]);
    /// assert!(stream.feed_past_limit(reply.len() - 9));
    /// assert_eq!(stream.finish(), contract.check(reply));
    /// # Ok::<(), vouch::CompileError>(())
    /// ```
    pub fn feed_past_limit(&mut self, len: usize) -> bool {
        if !self.too_large {
            return false;
        }
        // As `feed_piece` counts a piece that comes past the limit.
        self.unkept = self.unkept.saturating_add(len);
        true
    }

    /// [`Self::feed`] of one ASCII byte, with nothing held back.
    // As few stores as it can: each is loaded back by the next byte's.
    fn feed_byte(&mut self, b: u8) -> Progress {
        let before = self.text.len();
        if self.plain_open {
            // What the lane took is plain by its checks: not scanned again.
            self.pass.took_plain(before);
        }
        self.text.push(char::from(b));
        if self.pass.extends(&self.text, b) && self.pass.refusal().is_none() {
            // Still in the lane: the part of `refresh_lanes` that can have changed.
            self.plain = self.plain_room();
            self.plain_open = self.plain > 0;
            self.blank = self.pass.between_tokens();
            return Progress::Pending;
        }
        self.pending_at = before;
        self.judge()
    }

    /// [`Self::feed`] of any other piece.
    fn feed_piece(&mut self, piece: &[u8]) -> Progress {
        // The pass scans what the lane took itself, with the piece.
        self.plain_open = false;
        let before = self.received();
        let after = before.saturating_add(piece.len());
        if self.refusal.is_none() {
            self.pending_at = self.text.len();
        }
        if self.too_large || self.not_utf8.is_some() {
            self.unkept = after.saturating_sub(self.text.len());
            return self.progress();
        }
        let max = self.contract.limits().max_bytes;
        // Past the limit nothing more is kept: memory stays bounded by it.
        let room = max.saturating_sub(before);
        let kept = piece.get(..room.min(piece.len())).unwrap_or_default();
        self.take(kept);
        self.unkept = after.saturating_sub(self.text.len());
        self.judge()
    }

    /// Read on through what has come, and say what is known.
    fn judge(&mut self) -> Progress {
        let max = self.contract.limits().max_bytes;
        if self.refusal.is_none() {
            self.pass.feed(&self.text);
            if self.pass.refusal().is_some() {
                // The byte that decided it, and its problems as of that byte:
                // the same however the reply was cut into pieces. When one
                // character came since the stream was last pending, it decided
                // it, with the pass's problems (what the search below would
                // find, after two more passes over the reply).
                let one_char = self.text.get(self.pending_at..).is_some_and(|s| s.chars().nth(1).is_none());
                if !one_char {
                    self.refusal = self.contract.decided(&self.text, self.pending_at);
                }
                if self.refusal.is_none() {
                    let problems = self.pass.refusal().map(<[Problem]>::to_vec).unwrap_or_default();
                    self.refusal = Some((self.text.len(), problems));
                }
            } else {
                self.pending_at = self.text.len();
            }
        }
        if self.refusal.is_none() {
            if let Some((problem, at)) = &self.not_utf8 {
                self.refusal = Some((*at, vec![problem.clone()]));
            } else if self.received() > max {
                self.too_large = true;
                self.refusal = Some((max + 1, self.contract.refuse_too_large(max + 1).problems().to_vec()));
            }
        }
        if self.received() > max {
            self.too_large = true;
        }
        self.refresh_lanes();
        self.progress()
    }

    /// The plain bytes the open string may take on the spot: within its
    /// room, and within the limit on bytes.
    fn plain_room(&self) -> u64 {
        let len = self.text.len();
        let within = u64::try_from(self.max_bytes.saturating_sub(len)).unwrap_or(u64::MAX);
        self.pass.plain_room(len).min(within)
    }

    /// Which bytes the next feeds may take on the spot (see the fields).
    fn refresh_lanes(&mut self) {
        let nothing_held = self.tail.is_empty() && self.not_utf8.is_none() && !self.too_large;
        self.lane = nothing_held && self.refusal.is_none();
        self.kept_only = nothing_held && self.refusal.is_some();
        self.plain = if self.lane { self.plain_room() } else { 0 };
        self.plain_open = self.plain > 0;
        self.blank = self.lane && self.pass.between_tokens();
    }

    /// Append bytes to the text, keeping a character cut in two for later.
    fn take(&mut self, bytes: &[u8]) {
        if let ([b], true) = (bytes, self.tail.is_empty()) {
            if b.is_ascii() {
                self.text.push(char::from(*b));
                return;
            }
        }
        let mut joined;
        let bytes = if self.tail.is_empty() {
            bytes
        } else {
            joined = std::mem::take(&mut self.tail);
            joined.extend_from_slice(bytes);
            &joined[..]
        };
        match std::str::from_utf8(bytes) {
            Ok(s) => self.text.push_str(s),
            Err(e) => {
                let (valid, rest) = bytes.split_at(e.valid_up_to());
                self.text.push_str(std::str::from_utf8(valid).unwrap_or_default());
                if e.error_len().is_some() {
                    // The shortest run of these bytes that no more bytes can make a character.
                    let k = (1..=rest.len())
                        .find(|&k| {
                            rest.get(..k)
                                .is_some_and(|r| std::str::from_utf8(r).is_err_and(|e| e.error_len().is_some()))
                        })
                        .unwrap_or(1);
                    self.not_utf8 = Some((self.utf8_problem(rest), self.text.len() + k));
                } else {
                    self.tail = rest.to_vec();
                }
            }
        }
    }

    /// The refusal of a reply whose bytes from `text`'s end on are not UTF-8.
    fn utf8_problem(&self, rest: &[u8]) -> Problem {
        let mut raw = self.text.as_bytes().to_vec();
        raw.extend_from_slice(rest.get(..4).unwrap_or(rest));
        self.contract.check_full_path(&raw).problems().first().cloned().unwrap_or_else(|| {
            Problem::new(crate::ProblemCode::NotJson, "", "UTF-8 text".into(), String::new(), "not JSON: invalid UTF-8")
        })
    }

    /// What is known so far.
    #[must_use]
    pub fn progress(&self) -> Progress {
        if self.refusal.is_some() {
            Progress::Refused
        } else {
            Progress::Pending
        }
    }

    /// Why the reply is refused, once it is ([`Progress::Refused`]); empty
    /// while pending. [`StreamCheck::finish`] lists each of these (by code
    /// and path) among its own.
    #[must_use]
    pub fn problems(&self) -> &[Problem] {
        self.refusal.as_ref().map_or(&[], |(_, problems)| problems)
    }

    /// How many bytes had come when the refusal became certain: the length
    /// of the shortest prefix no completion of which can be accepted.
    #[must_use]
    pub fn decided_at(&self) -> Option<usize> {
        self.refusal.as_ref().map(|(at, _)| *at)
    }

    /// How many bytes have been fed.
    #[must_use]
    pub fn received(&self) -> usize {
        self.text.len().saturating_add(self.unkept)
    }

    /// The part of the value that has arrived complete and is valid by its
    /// own contract, unchanged by any repair, for a display while the rest
    /// arrives: the members (and, from the first, the items) whose values
    /// came whole and valid, with the same of the container being read.
    /// `None` before any, and once refused. Partial, never accepted: the
    /// reply as a whole may still be refused (a member still missing, a
    /// key repeated later, text after it).
    #[must_use]
    pub fn partial(&self) -> Option<Value> {
        if self.refusal.is_some() {
            return None;
        }
        self.pass.partial(&self.text)
    }

    /// [`StreamCheck::finish`] for a check held in place (a binding's object
    /// holds it, and cannot give it away): the verdict on everything fed,
    /// and the check starts again, empty, for the next reply.
    ///
    /// ```
    /// let contract = vouch::Contract::from_json_str(r#"{"type": "boolean"}"#)?;
    /// let mut stream = contract.stream();
    /// stream.feed("tr");
    /// stream.feed("ue");
    /// assert!(stream.finish_and_restart().is_pass());
    /// assert_eq!(stream.received(), 0);
    /// stream.feed("1");
    /// assert!(!stream.finish_and_restart().is_accepted());
    /// # Ok::<(), vouch::CompileError>(())
    /// ```
    #[must_use]
    pub fn finish_and_restart(&mut self) -> Verdict {
        std::mem::replace(self, StreamCheck::new(self.contract)).finish()
    }

    /// The reply has ended: the verdict [`Contract::check`] gives on all of
    /// it, byte for byte.
    #[must_use]
    pub fn finish(mut self) -> Verdict {
        let decided = self.refusal.as_ref().map(|(_, problems)| problems.as_slice());
        let base = if self.too_large {
            Verdict::refuse(vec![crate::read::too_large(self.received(), false, self.contract.limits().max_bytes)])
        } else if let Some((problem, _)) = &self.not_utf8 {
            Verdict::refuse(vec![problem.clone()])
        } else if !self.tail.is_empty() {
            // The reply ends inside a character.
            let mut raw = self.text.as_bytes().to_vec();
            raw.extend_from_slice(&self.tail);
            self.contract.check_full_path(&raw)
        } else {
            // A pass that stopped early worded its problem on the text it had:
            // the whole reply is read once more for the verdict check gives.
            // So is one the stream's own pass did not accept: what check
            // reports while reading, the stream's verdict reports too.
            let outcome = match decided {
                Some(_) => self.contract.whole_pass().finish(&self.text),
                None => match self.pass.finish(&self.text) {
                    // Accepted as it came: the verdict keeps the stream's own text (no copy).
                    Outcome::Accepted(v) if v.changes.is_empty() => {
                        let max_depth = self.contract.limits().max_depth;
                        return self.contract.vouch(Accepted::as_sent_owned(self.text, max_depth, v.verbatim));
                    }
                    accepted @ Outcome::Accepted(_) => accepted,
                    _ => self.contract.whole_pass().finish(&self.text),
                },
            };
            return self.contract.verdict_of(&self.text, outcome, decided);
        };
        match decided {
            Some(found) => self.contract.merged(&self.text, found, Some(found), base),
            None => base,
        }
    }
}
