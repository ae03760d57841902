//! One HTTP request to the upstream, every failure named.

use std::time::{Duration, SystemTime};

use reqwest::header::HeaderMap;
use reqwest::{Client, StatusCode, Url};
use serde_json::Value;
use tokio::time::{timeout_at, Instant};

use crate::completion::EXCERPT;
use crate::config::Timeouts;
use crate::problem::{UpstreamCode, UpstreamProblem};
use crate::scrub::{excerpt, Scrubber};

/// The largest 2xx body read; a larger one is not a completion vouch-llm will read.
pub(crate) const MAX_BODY: usize = 32 * 1024 * 1024;
/// The most of an error body read, for its excerpt.
const MAX_ERROR_BODY: usize = 64 * 1024;

/// Whether a failed request may be repeated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Retry {
    /// No: asking again cannot help (a 4xx), or the deadline passed.
    No,
    /// Yes, after the upstream's `Retry-After` if it gave one, else a backoff.
    Yes(Option<Duration>),
}

/// A request that brought no completion.
#[derive(Debug)]
pub(crate) struct Failure {
    pub problem: UpstreamProblem,
    pub retry: Retry,
}

/// What one request brought: the status (if a response came) and the 2xx body.
pub(crate) struct Response {
    pub status: Option<u16>,
    pub body: Result<Vec<u8>, Failure>,
}

pub(crate) struct Request<'a> {
    pub client: &'a Client,
    pub url: &'a Url,
    pub shown_url: &'a str,
    /// The request body, JSON text.
    pub body: &'a [u8],
    /// This request's own headers, beside the client's defaults.
    pub headers: &'a HeaderMap,
    pub timeouts: Timeouts,
    pub deadline: Option<Instant>,
    pub scrub: &'a Scrubber,
}

fn deadline_problem() -> Failure {
    Failure {
        problem: UpstreamProblem::new(
            UpstreamCode::Deadline,
            "an answer before the deadline",
            "no answer yet",
            "the deadline passed while waiting for the upstream",
        ),
        retry: Retry::No,
    }
}

fn timeout_problem(what: &str, limit: Duration) -> Failure {
    Failure {
        problem: UpstreamProblem::new(
            UpstreamCode::UpstreamTimeout,
            format!("{what} within {}", show_duration(limit)),
            "no answer in time",
            &format!("the upstream timed out: no {what} within {}", show_duration(limit)),
        ),
        retry: Retry::Yes(None),
    }
}

/// A duration as people write it: `250 ms`, `1.5 s`.
pub(crate) fn show_duration(d: Duration) -> String {
    if d < Duration::from_secs(1) {
        format!("{} ms", d.as_millis())
    } else {
        format!("{} s", (d.as_secs_f64() * 10.0).round() / 10.0)
    }
}

/// A 2xx response whose body is still to be read, with the time it must be
/// read by.
pub(crate) struct Opened {
    pub status: u16,
    pub response: reqwest::Response,
    /// When the request's time is up: the total timeout or the deadline.
    pub end: Instant,
    /// Whether `end` is the deadline (then running out of time is `deadline`).
    pub by_deadline: bool,
}

impl Request<'_> {
    /// Send the request, and read the whole 2xx body (at most 32 MiB).
    pub(crate) async fn send(&self) -> Response {
        match self.open().await {
            Ok(opened) => self.read_whole(opened).await,
            Err(failed) => failed,
        }
    }

    /// Read the whole 2xx body of an opened response (at most 32 MiB).
    pub(crate) async fn read_whole(&self, opened: Opened) -> Response {
        let code = Some(opened.status);
        match read_body(opened.response, opened.end, self.timeouts.idle, MAX_BODY).await {
            Ok(body) => Response { status: code, body: Ok(body) },
            Err(e) => failed(code, self.read_failure(e, opened.by_deadline)),
        }
    }

    /// Send the request and wait for the response head (within the
    /// first-byte timeout). A 2xx response is returned unread; any other is
    /// read (a bounded excerpt of its body) and is the failure.
    pub(crate) async fn open(&self) -> Result<Opened, Response> {
        let start = Instant::now();
        let total_end = start + self.timeouts.total;
        let (end, by_deadline) = match self.deadline {
            Some(d) if d <= total_end => (d, true),
            _ => (total_end, false),
        };
        let first_byte_end = (start + self.timeouts.first_byte).min(end);
        let sent = self
            .client
            .post(self.url.clone())
            .headers(self.headers.clone())
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(self.body.to_vec())
            .send();
        let resp = match timeout_at(first_byte_end, sent).await {
            Err(_) if by_deadline && first_byte_end == end => return Err(failed(None, deadline_problem())),
            Err(_) if first_byte_end == end => {
                return Err(failed(None, timeout_problem("complete response", self.timeouts.total)));
            }
            Err(_) => return Err(failed(None, timeout_problem("response", self.timeouts.first_byte))),
            Ok(Err(e)) => return Err(failed(None, self.transport(&e))),
            Ok(Ok(r)) => r,
        };
        let status = resp.status();
        let code = Some(status.as_u16());
        if status.is_success() {
            return Ok(Opened { status: status.as_u16(), response: resp, end, by_deadline });
        }
        let headers = resp.headers().clone();
        let body = match read_body(resp, end, self.timeouts.idle, MAX_ERROR_BODY).await {
            Ok(b) => b,
            Err(ReadError::TooLarge) => Vec::new(),
            Err(e) => return Err(failed(code, self.read_failure(e, by_deadline))),
        };
        Err(failed(code, self.status_failure(status, &headers, &body)))
    }

    /// A 2xx body that could not be read: out of time, the connection broke,
    /// or larger than 32 MiB.
    pub(crate) fn read_failure(&self, e: ReadError, by_deadline: bool) -> Failure {
        match e {
            ReadError::Time if by_deadline => deadline_problem(),
            ReadError::Time => timeout_problem("complete response", self.timeouts.total),
            ReadError::Idle => timeout_problem("next piece of the body", self.timeouts.idle),
            ReadError::Transport(e) => self.transport(&e),
            ReadError::TooLarge => Failure {
                problem: UpstreamProblem::new(
                    UpstreamCode::NotACompletion,
                    "a chat completion (JSON with choices[0].message)",
                    format!("more than {MAX_BODY} bytes"),
                    &format!("not a chat completion: the body is larger than {MAX_BODY} bytes"),
                ),
                retry: Retry::No,
            },
        }
    }

    /// A failure of the connection itself.
    pub(crate) fn transport(&self, e: &reqwest::Error) -> Failure {
        let detail = excerpt(&self.scrub.scrub(&innermost(e)), EXCERPT);
        if e.is_timeout() {
            let what = if e.is_connect() { "connection" } else { "response" };
            let limit = if e.is_connect() { self.timeouts.connect } else { self.timeouts.total };
            return timeout_problem(what, limit);
        }
        let sentence = if e.is_connect() {
            format!("cannot connect to {}: {detail}", self.shown_url)
        } else {
            format!("the connection to {} failed: {detail}", self.shown_url)
        };
        Failure {
            problem: UpstreamProblem::new(UpstreamCode::UpstreamUnreachable, "a response", detail, &sentence),
            retry: Retry::Yes(None),
        }
    }

    fn status_failure(&self, status: StatusCode, headers: &HeaderMap, body: &[u8]) -> Failure {
        let said = excerpt(&self.scrub.scrub(&error_text(body)), EXCERPT);
        let got = if said.is_empty() {
            format!("HTTP {}", status.as_u16())
        } else {
            format!("HTTP {}: {said}", status.as_u16())
        };
        let reason = status.canonical_reason().map(|r| format!(" {r}")).unwrap_or_default();
        let said_part = if said.is_empty() { String::new() } else { format!(": {said}") };
        if status == StatusCode::TOO_MANY_REQUESTS {
            let after = retry_after(headers);
            let wait = after.map(|d| format!(" (Retry-After {})", show_duration(d))).unwrap_or_default();
            return Failure {
                problem: UpstreamProblem::new(
                    UpstreamCode::RateLimited,
                    "a 2xx response",
                    got,
                    &format!("the upstream is rate limiting (HTTP 429{reason}){wait}{said_part}"),
                ),
                retry: Retry::Yes(after),
            };
        }
        let (retry, hint) = if status.is_server_error() {
            (Retry::Yes(retry_after(headers)), String::new())
        } else if status.is_redirection() {
            let to = headers
                .get(reqwest::header::LOCATION)
                .and_then(|l| l.to_str().ok())
                // A target that holds the key is not shown at all: joining it to
                // the URL would re-encode the key (`\` becomes `/`) past the scrubber.
                .filter(|l| !self.scrub.holds_secret(l.as_bytes()))
                .and_then(|l| self.url.join(l).ok())
                .map(|u| format!(" to {}", crate::scrub::shown_url(&u)))
                .unwrap_or_default();
            (Retry::No, format!(" (redirected{to}; give the final URL as the base URL)"))
        } else if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
            (Retry::No, " (check the API key)".to_owned())
        } else {
            (Retry::No, String::new())
        };
        Failure {
            problem: UpstreamProblem::new(
                UpstreamCode::UpstreamStatus,
                "a 2xx response",
                got,
                &format!("the upstream answered HTTP {}{reason}{hint}{said_part}", status.as_u16()),
            ),
            retry,
        }
    }
}

pub(crate) fn failed(status: Option<u16>, failure: Failure) -> Response {
    Response { status, body: Err(failure) }
}

/// Why a body was not read.
pub(crate) enum ReadError {
    /// Out of time.
    Time,
    /// The body went silent for longer than the idle timeout.
    Idle,
    /// The connection broke.
    Transport(reqwest::Error),
    /// Larger than the limit.
    TooLarge,
}

async fn read_body(
    mut resp: reqwest::Response,
    end: Instant,
    idle: Duration,
    limit: usize,
) -> Result<Vec<u8>, ReadError> {
    let mut buf = Vec::new();
    loop {
        let (until, silent) = next_piece_by(end, idle);
        match timeout_at(until, resp.chunk()).await {
            Err(_) if silent => return Err(ReadError::Idle),
            Err(_) => return Err(ReadError::Time),
            Ok(Err(e)) => return Err(ReadError::Transport(e)),
            Ok(Ok(None)) => return Ok(buf),
            Ok(Ok(Some(bytes))) => {
                if buf.len().saturating_add(bytes.len()) > limit {
                    if limit == MAX_BODY {
                        return Err(ReadError::TooLarge);
                    }
                    let room = limit.saturating_sub(buf.len());
                    buf.extend(bytes.iter().take(room));
                    return Ok(buf);
                }
                buf.extend_from_slice(&bytes);
            }
        }
    }
}

/// When the next piece of a body must have come: the idle timeout from
/// now, or `end` if that is sooner (then `false`: running out is not
/// silence but the request's time).
pub(crate) fn next_piece_by(end: Instant, idle: Duration) -> (Instant, bool) {
    let silent = Instant::now() + idle;
    if silent < end {
        (silent, true)
    } else {
        (end, false)
    }
}

/// The innermost cause of a transport error (`Connection refused (os error
/// 111)`), never the URL.
pub(crate) fn innermost(e: &reqwest::Error) -> String {
    let mut cause: &dyn std::error::Error = e;
    while let Some(next) = cause.source() {
        cause = next;
    }
    let text = cause.to_string();
    if std::ptr::addr_eq(cause, e as &dyn std::error::Error) {
        // No cause below reqwest's own: its text names the URL, which may hold a secret.
        if e.is_connect() {
            return "connection failed".to_owned();
        }
        return "request failed".to_owned();
    }
    text
}

/// The readable part of an error body: `error.message` of a JSON error, else the text.
fn error_text(body: &[u8]) -> String {
    // Read strictly, as every JSON vouch reads: an error body with two
    // `message` keys is shown as its text, not as one of them.
    if let Some(v) = std::str::from_utf8(body).ok().and_then(|t| vouch::read_json(t, 64).ok()) {
        let msg = v
            .get("error")
            .and_then(|e| e.get("message").and_then(Value::as_str).or_else(|| e.as_str()))
            .or_else(|| v.get("message").and_then(Value::as_str))
            .or_else(|| v.get("detail").and_then(Value::as_str));
        if let Some(m) = msg {
            return m.to_owned();
        }
    }
    String::from_utf8_lossy(body).split_whitespace().collect::<Vec<_>>().join(" ")
}

/// How long the upstream asks to wait: `retry-after-ms` (OpenAI), else
/// `Retry-After` in seconds or as an HTTP date.
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let get = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim);
    if let Some(ms) = get("retry-after-ms").and_then(|v| v.parse::<f64>().ok()) {
        if ms.is_finite() && ms >= 0.0 {
            return Some(Duration::from_secs_f64((ms / 1000.0).min(86_400.0)));
        }
    }
    let value = get("retry-after")?;
    if let Ok(secs) = value.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs.min(86_400.0)));
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(when.duration_since(SystemTime::now()).unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    #[test]
    fn retry_after_reads_seconds_milliseconds_and_dates() {
        let mut h = HeaderMap::new();
        h.insert("retry-after", HeaderValue::from_static("2"));
        assert_eq!(retry_after(&h), Some(Duration::from_secs(2)));
        h.insert("retry-after-ms", HeaderValue::from_static("150"));
        assert_eq!(retry_after(&h), Some(Duration::from_millis(150)));
        let mut h = HeaderMap::new();
        h.insert("retry-after", HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"));
        assert_eq!(retry_after(&h), Some(Duration::ZERO));
        h.insert("retry-after", HeaderValue::from_static("soon"));
        assert_eq!(retry_after(&h), None);
    }

    #[test]
    fn error_text_prefers_the_message() {
        assert_eq!(error_text(br#"{"error": {"message": "bad model"}}"#), "bad model");
        assert_eq!(error_text(b"<html>\n  <b>502</b></html>"), "<html> <b>502</b></html>");
    }
}
