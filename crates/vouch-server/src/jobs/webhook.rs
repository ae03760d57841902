//! A job's webhook: the job, as `GET /v1/jobs/{id}` shows it, POSTed once
//! it finished, signed, retried with backoff, and each try recorded on the
//! job.
//!
//! The signature is `x-vouch-signature: sha256=HEX`, HEX the HMAC-SHA256,
//! under the configured secret, of `TIMESTAMP.BODY` (TIMESTAMP is the
//! `x-vouch-timestamp` header, seconds since the epoch): a receiver
//! recomputes it over the raw body and refuses an old timestamp.

use std::sync::Arc;
use std::time::Duration;

use hmac::{KeyInit as _, Mac as _};
use serde_json::json;

use super::{now_ms, Jobs};

/// The signature header.
pub const SIGNATURE_HEADER: &str = "x-vouch-signature";
/// The timestamp header the signature covers.
pub const TIMESTAMP_HEADER: &str = "x-vouch-timestamp";

/// The longest wait between two tries.
const MAX_BACKOFF: Duration = Duration::from_secs(300);

/// `sha256=HEX` of `timestamp.body` under `secret`.
#[must_use]
pub fn sign(secret: &[u8], timestamp: u64, body: &[u8]) -> String {
    let Ok(mut mac) = hmac::Hmac::<sha2::Sha256>::new_from_slice(secret) else {
        // HMAC takes a key of any length; this cannot happen.
        return String::new();
    };
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    format!("sha256={}", crate::hex(&mac.finalize().into_bytes()))
}

/// Whether `url` may be called: it starts with one of the allowed prefixes,
/// and, read as the client that calls it reads it, goes to that prefix's
/// own scheme, host and port, under its path, with no user name or
/// password. A text prefix alone would take `https://hooks.example.com.evil.test/`
/// or `https://hooks.example.com@evil.test/` under `https://hooks.example.com`.
#[must_use]
pub fn allowed(url: &str, allow: &[String]) -> bool {
    if url.len() > 2048 || url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return false;
    }
    let Ok(to) = reqwest::Url::parse(url) else { return false };
    if !matches!(to.scheme(), "https" | "http") || !to.username().is_empty() || to.password().is_some() {
        return false;
    }
    allow.iter().any(|prefix| {
        url.starts_with(prefix.as_str())
            && reqwest::Url::parse(prefix).is_ok_and(|p| {
                p.scheme() == to.scheme()
                    && p.host_str().is_some()
                    && p.host_str() == to.host_str()
                    && p.port_or_known_default() == to.port_or_known_default()
                    && to.path().starts_with(p.path())
            })
    })
}

/// Deliver the job's webhook, retrying until it is taken (a 2xx) or every
/// try is spent; each try is recorded on the job.
pub(super) async fn deliver(g: Arc<crate::Gateway>, jobs: Arc<Jobs>, id: String, url: String) {
    let Some(secret) = jobs.webhook_secret.clone() else { return };
    let config = &jobs.config;
    let mut wait = Duration::from_millis(config.webhook_backoff_ms);
    for attempt in 1..=config.webhook_attempts {
        // The body is read again each time: the delivery record it holds moves on.
        let body = match jobs.store.get(&id).await {
            Ok(Some(r)) => super::record_json(&r),
            Ok(None) => return,
            Err(e) => {
                tracing::warn!(job = %id, "webhook: {e}");
                tokio::time::sleep(wait).await;
                wait = (wait * 2).min(MAX_BACKOFF);
                continue;
            }
        };
        let timestamp = now_ms() / 1000;
        let signature = sign(&secret, timestamp, body.as_bytes());
        let sent = jobs
            .webhooks
            .post(&url)
            .header("content-type", "application/json")
            .header(SIGNATURE_HEADER, signature)
            .header(TIMESTAMP_HEADER, timestamp.to_string())
            .header("x-vouch-job-id", &id)
            .header("x-vouch-delivery-attempt", attempt.to_string())
            .body(body)
            .send()
            .await;
        let (status, error) = match sent {
            Ok(r) => (Some(r.status().as_u16()), None),
            Err(e) => (
                None,
                Some(if e.is_timeout() { "timed out".to_owned() } else { "could not connect or send".to_owned() }),
            ),
        };
        let delivered = status.is_some_and(|s| (200..300).contains(&s));
        let done = delivered || attempt == config.webhook_attempts;
        let record = json!({
            "url": url,
            "attempts": attempt,
            "delivered": delivered,
            "last_status": status,
            "last_error": error,
            "last_attempt_ms": now_ms(),
            "final": done,
        });
        if let Err(e) = jobs.store.record_delivery(&id, record.to_string()).await {
            tracing::warn!(job = %id, "webhook: cannot record the delivery: {e}");
        }
        if done {
            g.metrics.webhook(if delivered { "delivered" } else { "failed" });
            if !delivered {
                tracing::warn!(job = %id, attempts = attempt, "webhook not delivered");
            }
            return;
        }
        g.metrics.webhook("retried");
        tokio::time::sleep(wait).await;
        wait = (wait * 2).min(MAX_BACKOFF);
    }
}
