//! A caller's own chat completion request, forwarded: the way in for a
//! gateway that speaks the Chat Completions API to its clients
//! ([`crate::Asker::ask_forwarded`]).

use std::fmt;

use reqwest::header::HeaderValue;
use serde_json::{Map, Value};

use crate::config::{ApiKey, Limits};
use crate::scrub::Scrubber;

/// A client's chat completion request, asked as the client wrote it: its
/// `messages`, `model` and every other field go upstream as sent, except
/// what the asker owns: `response_format` (the contract's, by the asker's
/// [`crate::Mode`]), `stream_options.include_usage` (on when streamed),
/// and, when `instructions` is set, the contract's instructions added to
/// the system message.
#[derive(Debug, Clone)]
pub struct Forwarded {
    /// The request body. `messages` should be an array (anything else is
    /// sent as no messages); `model`, when absent, is the configured one.
    pub body: Map<String, Value>,
    /// The rounds, tokens and time this ask may spend.
    pub limits: Limits,
    /// Add the contract's instructions to the system message (as
    /// [`crate::Asker::conversation`] does).
    pub instructions: bool,
    /// Headers sent with this ask's requests, beside the asker's own (a
    /// gateway's allow-listed client headers). One that is not valid HTTP
    /// is left out.
    pub headers: Vec<(String, String)>,
    /// The upstream key of this ask, in place of the asker's own (a
    /// gateway that passes its clients' keys through); `None`: the asker's.
    pub key: Option<ForwardedKey>,
}

impl Forwarded {
    /// Whether the client asked for a stream (`"stream": true`).
    #[must_use]
    pub fn streams(&self) -> bool {
        self.body.get("stream").and_then(Value::as_bool).unwrap_or(false)
    }
}

/// An upstream key that is not the asker's own (a client's, passed through
/// by a gateway), with the scrubber that keeps it out of everything the ask
/// shows, traces and relays. Built once per key and kept: building the
/// scrubber compiles every form of the key.
///
/// Its `Debug` never shows the key.
#[derive(Clone)]
pub struct ForwardedKey {
    header: HeaderValue,
    scrub: Scrubber,
}

impl ForwardedKey {
    /// The key, sent as `Authorization: Bearer KEY`, and a scrubber of it
    /// and of `also` (other secrets of the caller's, such as its own client
    /// tokens), with the `Bearer …` and `sk-…` patterns. `None` when the key
    /// cannot be sent in an HTTP header, or is blank.
    #[must_use]
    pub fn new<S: AsRef<str>>(key: &ApiKey, also: impl IntoIterator<Item = S>) -> Option<Self> {
        let key = key.expose().trim();
        if key.is_empty() {
            return None;
        }
        let mut header = HeaderValue::from_str(&format!("Bearer {key}")).ok()?;
        header.set_sensitive(true);
        let also: Vec<String> = also.into_iter().map(|s| s.as_ref().to_owned()).collect();
        let scrub = Scrubber::new(std::iter::once(key.to_owned()).chain(also));
        Some(Self { header, scrub })
    }

    /// The scrubber of the key (and of the other secrets it was given),
    /// with the patterns on.
    #[must_use]
    pub fn scrubber(&self) -> &Scrubber {
        &self.scrub
    }

    /// The `Authorization` value sent (`Bearer KEY`, marked sensitive).
    #[must_use]
    pub fn header(&self) -> &HeaderValue {
        &self.header
    }
}

impl fmt::Debug for ForwardedKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ForwardedKey").field("scrub", &self.scrub).finish_non_exhaustive()
    }
}

/// What a streamed forwarded ask hands on while the reply arrives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Relayed {
    /// A piece of the reply's content, sent on only once the contract's
    /// streaming check has taken it without refusing the reply: a piece
    /// that makes the reply impossible to accept is never sent on.
    Content(String),
}

/// Where a streamed forwarded ask sends its [`Relayed`] pieces. When the
/// receiver is gone (the client went away), the ask stops and its
/// upstream request is dropped.
pub type Relay = tokio::sync::mpsc::Sender<Relayed>;
