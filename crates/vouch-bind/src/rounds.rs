//! Rounds with the caller's own model client: each reply checked, a refused
//! one asked again in the core's words, then refuse and keep the last good
//! value, marked. The binding owns the calling (sync or async, any client);
//! this state machine owns every decision, so every surface decides alike.

use std::sync::Arc;

use vouch::{Contract, Verdict};

/// Why rounds could not start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RoundsError {
    /// `max_rounds` was 0: no reply could ever be accepted.
    #[error("max_rounds must be at least 1 (got 0)")]
    NoRounds,
    /// More rounds than any caller means (a loop that would not end).
    #[error("max_rounds must be at most {max} (got {got})")]
    TooManyRounds {
        /// The largest allowed.
        max: usize,
        /// What was asked.
        got: usize,
    },
}

/// What to do after a reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// The reply was refused and a round is left: add these messages to
    /// the conversation and call the model again.
    AskAgain {
        /// The model's refused reply, as the assistant's message (`None`
        /// when it sent nothing, or when it was refused for its size:
        /// [`vouch::echoes_refused_reply`]).
        assistant: Option<String>,
        /// The re-ask, as the user's message: [`vouch::Refused::reask_text`].
        user: String,
    },
    /// No more calls: the outcome is ready ([`Rounds::accepted`],
    /// [`Rounds::fallback`], [`Rounds::verdicts`]).
    Done,
}

/// The most rounds one ask may take.
pub const MAX_ROUNDS: usize = 100;

/// One ask's rounds.
///
/// ```
/// use std::sync::Arc;
/// use vouch_bind::{Rounds, Step};
/// let contract = Arc::new(vouch::Contract::from_json_str(
///     r#"{"type": "object", "required": ["ok"], "properties": {"ok": {"type": "boolean"}}}"#)?);
/// let mut rounds = Rounds::new(contract, 2, Some(br#"{"ok": false}"#))?;
/// let Step::AskAgain { user, .. } = rounds.reply(b"{}") else { unreachable!() };
/// assert!(user.starts_with("Your reply was refused. Problems:\n- /ok: "));
/// assert_eq!(rounds.reply(br#"{"ok": "yes"}"#), Step::Done);
/// assert!(rounds.accepted().is_none());
/// assert!(rounds.fallback().is_some_and(|f| f.is_accepted())); // the last good value, marked
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Rounds {
    contract: Arc<Contract>,
    max_rounds: usize,
    verdicts: Vec<Verdict>,
    fallback: Option<Verdict>,
}

impl Rounds {
    /// Rounds of `contract`, at most `max_rounds`, with `fallback` (the
    /// last known good value, as JSON text) returned in place of a refusal
    /// when it passes the contract itself.
    ///
    /// # Errors
    /// `max_rounds` of 0 or over [`MAX_ROUNDS`].
    pub fn new(contract: Arc<Contract>, max_rounds: usize, fallback: Option<&[u8]>) -> Result<Self, RoundsError> {
        if max_rounds == 0 {
            return Err(RoundsError::NoRounds);
        }
        if max_rounds > MAX_ROUNDS {
            return Err(RoundsError::TooManyRounds { max: MAX_ROUNDS, got: max_rounds });
        }
        // The fallback is vouched like any reply: a stale value that no
        // longer passes the contract is not handed over either.
        let fallback = fallback.map(|f| contract.check(f));
        Ok(Self { contract, max_rounds, verdicts: Vec::new(), fallback })
    }

    /// The contract.
    #[must_use]
    pub fn contract(&self) -> &Arc<Contract> {
        &self.contract
    }

    /// Check the model's reply to the latest call and say what comes next.
    /// After [`Step::Done`], a further reply is ignored (still `Done`).
    pub fn reply(&mut self, raw: &[u8]) -> Step {
        if self.is_done() {
            return Step::Done;
        }
        let verdict = self.contract.check(raw);
        self.step(verdict, raw)
    }

    /// [`reply`](Self::reply) for a reply over the contract's `max_bytes`
    /// of which only the `start` is held, `len` bytes long in all
    /// (`Contract::check_start`): a binding that never copies such a reply
    /// whole. Its verdict is `check`'s on the whole reply (`too_large` among
    /// its problems), so it is never sent back and the rest is never needed.
    pub fn reply_past_limit(&mut self, start: &[u8], len: usize) -> Step {
        if self.is_done() {
            return Step::Done;
        }
        let verdict = crate::check_past_limit(&self.contract, start, len);
        self.step(verdict, start)
    }

    /// What comes after `verdict` on the reply `raw`.
    fn step(&mut self, verdict: Verdict, raw: &[u8]) -> Step {
        let step = match &verdict {
            Verdict::Accepted(_) => Step::Done,
            Verdict::Refused(_) if self.verdicts.len() + 1 >= self.max_rounds => Step::Done,
            Verdict::Refused(refused) => {
                // Not sent back: nothing, or a reply refused for its size.
                let assistant = vouch::echoes_refused_reply(refused.problems.iter().map(|p| p.code))
                    .then(|| String::from_utf8_lossy(raw))
                    .filter(|text| !text.trim().is_empty())
                    .map(std::borrow::Cow::into_owned);
                Step::AskAgain { assistant, user: refused.reask_text() }
            }
        };
        self.verdicts.push(verdict);
        step
    }

    /// True once a reply was accepted or every round was spent.
    #[must_use]
    pub fn is_done(&self) -> bool {
        self.accepted().is_some() || self.verdicts.len() >= self.max_rounds
    }

    /// Every round's verdict, in order.
    #[must_use]
    pub fn verdicts(&self) -> &[Verdict] {
        &self.verdicts
    }

    /// The accepted round's verdict (always the last), if a reply was accepted.
    #[must_use]
    pub fn accepted(&self) -> Option<&Verdict> {
        self.verdicts.last().filter(|v| v.is_accepted())
    }

    /// The fallback's own verdict, when one was given (accepted: it is
    /// returned in place of a refusal; refused: its problems say why not).
    #[must_use]
    pub fn fallback(&self) -> Option<&Verdict> {
        self.fallback.as_ref()
    }

    /// `"accepted"` when a model reply was accepted, else `"refused"` (also
    /// when the fallback is returned: the model's answer was refused).
    #[must_use]
    pub fn outcome(&self) -> &'static str {
        if self.accepted().is_some() {
            "accepted"
        } else {
            "refused"
        }
    }

    /// Where the value comes from: `"model"`, `"fallback"`, or `None` when
    /// there is none (every round refused and no fallback that passes).
    #[must_use]
    pub fn source(&self) -> Option<&'static str> {
        if self.accepted().is_some() {
            Some("model")
        } else if self.is_done() && self.fallback.as_ref().is_some_and(Verdict::is_accepted) {
            Some("fallback")
        } else {
            None
        }
    }

    /// The verdict whose value the outcome carries: the accepted round's,
    /// else the accepted fallback's (see [`Rounds::source`]).
    #[must_use]
    pub fn answer(&self) -> Option<&Verdict> {
        match self.source() {
            Some("model") => self.accepted(),
            Some(_) => self.fallback.as_ref(),
            None => None,
        }
    }
}

#[cfg(test)]
mod tests {
    // A test that cannot go on says why (input here is the test's own).
    #![allow(clippy::panic, clippy::indexing_slicing)]
    use super::*;

    fn plate() -> Arc<Contract> {
        let Ok(c) = Contract::from_json_str(
            r#"{"type": "object", "required": ["productPresent"], "additionalProperties": false,
                "properties": {"productPresent": {"type": "boolean"}}}"#,
        ) else {
            panic!("no contract")
        };
        Arc::new(c)
    }

    #[test]
    fn an_accepted_first_reply_ends_the_rounds() {
        let Ok(mut r) = Rounds::new(plate(), 2, None) else { panic!("no rounds") };
        assert_eq!(r.reply(br#"{"productPresent": true}"#), Step::Done);
        assert_eq!((r.outcome(), r.source(), r.verdicts().len()), ("accepted", Some("model"), 1));
        assert!(r.answer().is_some_and(Verdict::is_accepted));
        assert_eq!(r.reply(b"{}"), Step::Done, "a reply after the end changes nothing");
        assert_eq!(r.verdicts().len(), 1);
    }

    #[test]
    fn a_refused_reply_is_asked_again_in_the_core_s_words_then_accepted() {
        let Ok(mut r) = Rounds::new(plate(), 3, None) else { panic!("no rounds") };
        let Step::AskAgain { assistant, user } = r.reply(br#"{"productPresent": "no"}"#) else { panic!("done") };
        assert_eq!(assistant.as_deref(), Some(r#"{"productPresent": "no"}"#));
        let Verdict::Refused(refused) = plate().check(br#"{"productPresent": "no"}"#) else { panic!("accepted") };
        assert_eq!(user, refused.reask_text());
        let Step::AskAgain { assistant, .. } = r.reply(b"  ") else { panic!("done") };
        assert_eq!(assistant, None, "nothing sent: no assistant message");
        assert_eq!(r.reply(br#"{"productPresent": false}"#), Step::Done);
        assert_eq!((r.outcome(), r.source(), r.verdicts().len()), ("accepted", Some("model"), 3));
    }

    #[test]
    fn a_reply_refused_for_its_size_is_not_sent_back() {
        let limited = crate::compile(br#"{"type":"object","x-vouch":{"limits":{"max_bytes":64}}}"#);
        let Ok(contract) = limited.map(Arc::new) else { panic!("no contract") };
        let Ok(mut r) = Rounds::new(Arc::clone(&contract), 3, None) else { panic!("no rounds") };
        let big = format!(r#"{{"s": "{}"}}"#, "x".repeat(100));
        let Step::AskAgain { assistant, user } = r.reply(big.as_bytes()) else { panic!("done") };
        assert_eq!(assistant, None, "a too_large reply is not echoed");
        let Verdict::Refused(refused) = contract.check(big.as_bytes()) else { panic!("accepted") };
        assert_eq!(user, refused.reask_text(), "the re-ask says how large it was");
        assert!(user.contains("at most 64 bytes"), "{user}");
        // Within the limit, a refused reply is sent back as ever.
        let Step::AskAgain { assistant, .. } = r.reply(b"[1]") else { panic!("done") };
        assert_eq!(assistant.as_deref(), Some("[1]"));
    }

    #[test]
    fn a_reply_past_the_limit_held_only_in_part_is_judged_as_if_whole() {
        let limited = crate::compile(br#"{"type":"object","x-vouch":{"limits":{"max_bytes":64}}}"#);
        let Ok(contract) = limited.map(Arc::new) else { panic!("no contract") };
        let big = format!(r#"{{"s": "{}"}}"#, "x".repeat(1000));
        let (Ok(mut whole), Ok(mut part)) =
            (Rounds::new(Arc::clone(&contract), 2, None), Rounds::new(Arc::clone(&contract), 2, None))
        else {
            panic!("no rounds")
        };
        let start = big.as_bytes().get(..65).unwrap_or_default();
        assert_eq!(part.reply_past_limit(start, big.len()), whole.reply(big.as_bytes()));
        assert!(matches!(part.reply_past_limit(start, big.len()), Step::Done));
        assert_eq!(part.verdicts().len(), 2);
        for (a, b) in part.verdicts().iter().zip(whole.verdicts()) {
            assert_eq!(crate::verdict_json(a), crate::verdict_json(b));
        }
    }

    #[test]
    fn every_round_refused_returns_the_fallback_marked_only_if_it_passes() {
        for (fallback, source) in
            [(Some(&br#"{"productPresent": false}"#[..]), Some("fallback")), (Some(&b"{}"[..]), None), (None, None)]
        {
            let Ok(mut r) = Rounds::new(plate(), 2, fallback) else { panic!("no rounds") };
            assert!(r.source().is_none(), "no source before the rounds are spent");
            assert!(matches!(r.reply(b"true"), Step::AskAgain { .. }));
            assert_eq!(r.reply(b"[]"), Step::Done);
            assert_eq!((r.outcome(), r.source()), ("refused", source));
            assert_eq!(r.verdicts().len(), 2);
            assert!(r.verdicts().iter().all(|v| !v.is_accepted()));
            assert_eq!(r.answer().is_some(), source.is_some());
            assert_eq!(r.fallback().map(Verdict::is_accepted), fallback.map(|_| source.is_some()));
        }
    }

    #[test]
    fn no_rounds_or_endless_rounds_are_refused_up_front() {
        assert_eq!(Rounds::new(plate(), 0, None).err(), Some(RoundsError::NoRounds));
        assert_eq!(Rounds::new(plate(), 101, None).err(), Some(RoundsError::TooManyRounds { max: 100, got: 101 }));
    }
}
