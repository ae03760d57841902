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

use crate::contract::Contract;
use crate::verdict::{Problem, Verdict};

/// What a [`StreamCheck`] knows after a piece of the reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// Some completion of what came could still be accepted.
    Pending,
    /// No completion can be: the reply is refused whatever follows
    /// ([`StreamCheck::problems`] says why).
    Refused,
}

/// A check of one reply fed piece by piece (see the [module](self) docs).
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
#[derive(Debug)]
pub struct StreamCheck<'c> {
    contract: &'c Contract,
    bytes: Vec<u8>,
    received: usize,
    problems: Vec<Problem>,
    decided_at: Option<usize>,
}

impl<'c> StreamCheck<'c> {
    pub(crate) fn new(contract: &'c Contract) -> Self {
        Self { contract, bytes: Vec::new(), received: 0, problems: Vec::new(), decided_at: None }
    }

    /// Feed the next piece of the reply; what is known after it.
    pub fn feed(&mut self, piece: impl AsRef<[u8]>) -> Progress {
        let piece = piece.as_ref();
        self.received = self.received.saturating_add(piece.len());
        let max = self.contract.limits().max_bytes;
        if self.bytes.len() <= max {
            let room = (max + 1).saturating_sub(self.bytes.len());
            self.bytes.extend_from_slice(piece.get(..room.min(piece.len())).unwrap_or(piece));
        }
        if self.decided_at.is_none() && self.received > max {
            self.problems = self.contract.refuse_too_large(max + 1).problems().to_vec();
            self.decided_at = Some(max + 1);
        }
        self.progress()
    }

    /// What is known so far.
    #[must_use]
    pub fn progress(&self) -> Progress {
        if self.decided_at.is_some() {
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
        &self.problems
    }

    /// How many bytes had been fed when the refusal became certain.
    #[must_use]
    pub fn decided_at(&self) -> Option<usize> {
        self.decided_at
    }

    /// How many bytes have been fed.
    #[must_use]
    pub fn received(&self) -> usize {
        self.received
    }

    /// The part of the value that has arrived complete and is valid by its
    /// own contract, for a display while the rest arrives; `None` before
    /// any. Partial, never accepted: the reply as a whole may still be
    /// refused.
    #[must_use]
    pub fn partial(&self) -> Option<Value> {
        None
    }

    /// The reply has ended: the verdict [`Contract::check`] gives on all of
    /// it.
    #[must_use]
    pub fn finish(self) -> Verdict {
        if self.received > self.contract.limits().max_bytes {
            return self.contract.refuse_too_large(self.received);
        }
        self.contract.check(&self.bytes)
    }
}
