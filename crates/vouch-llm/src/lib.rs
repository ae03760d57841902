//! # vouch-llm
//!
//! The model client for [`vouch`]: ask any OpenAI-compatible Chat
//! Completions API (OpenAI, OpenRouter, Groq, Together, Ollama, vLLM,
//! llama.cpp's server) for JSON, check every reply against a
//! [`vouch::Contract`], ask again in the same conversation when a reply is
//! refused (telling the model every problem), within a round cap, a token
//! budget and a deadline; then refuse with every round's problems, or
//! return the caller's last known good value, marked as a fallback.
//!
//! Failures of the upstream are refusals too, class `no_answer`, each with
//! its own code ([`UpstreamCode`]): an unreachable or slow server, HTTP
//! errors and rate limits, a body that is not a completion, empty content,
//! a model that spent its budget reasoning, a reply cut off at the token
//! limit (even one that looks complete), a refusal, a content filter, a
//! tool call where content was expected, a reply that holds the API key.
//!
//! Streamed ([`Config::stream`]), each reply is checked while it arrives
//! ([`vouch::StreamCheck`]) and its request dropped as soon as no ending of
//! it can be accepted; a broken stream is refused with its own code
//! (`stream_malformed`, `stream_incomplete`, `stream_error`).
//!
//! No secret leaves it: every text built from an upstream answer is
//! scrubbed, and [`Scrubber`] / [`ScrubbingWriter`] scrub every byte a
//! program writes (the `vouch` command writes all its output through one).
//!
//! The core crate `vouch` stays pure; this crate holds the I/O. Start at
//! [`Asker`].

mod asker;
mod completion;
mod config;
mod forward;
mod http;
mod message;
mod outcome;
mod problem;
mod reask;
mod scrub;
mod sse;
mod streaming;

pub use asker::{Asker, RoundHook, SetupError};
pub use config::{ApiKey, Backoff, Config, Headers, Limits, Mode, Timeouts, OPENAI_BASE_URL};
pub use forward::{Forwarded, ForwardedKey, Relay, Relayed};
pub use message::{mime_type, Content, ImageError, ImageUrl, Message, Part, Role};
pub use outcome::{Answer, Outcome, Round, RoundVerdict, Source, Streamed, Usage};
pub use problem::{class_of, AskProblem, UpstreamCode, UpstreamProblem};
pub use reask::{reask_text, REPLY_ONLY};
pub use scrub::{Scrubber, ScrubbingWriter, REDACTED};
pub use sse::{read_sse_events, Event as SseEvent};
