//! A caller's own chat completion request, forwarded: the way in for a
//! gateway that speaks the Chat Completions API to its clients
//! ([`crate::Asker::ask_forwarded`]).

use serde_json::{Map, Value};

use crate::config::Limits;

/// A client's chat completion request, asked as the client wrote it: its
/// `messages`, `model` and every other field go upstream as sent, except
/// what the asker owns: `response_format` (the contract's, by the asker's
/// [`crate::Mode`]), `stream_options.include_usage` (on when streamed),
/// and, when `instructions` is set, the contract's instructions added to
/// the system message.
#[derive(Debug, Clone, PartialEq)]
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
}

impl Forwarded {
    /// Whether the client asked for a stream (`"stream": true`).
    #[must_use]
    pub fn streams(&self) -> bool {
        self.body.get("stream").and_then(Value::as_bool).unwrap_or(false)
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
