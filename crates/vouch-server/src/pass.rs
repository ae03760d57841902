//! `without_contract = "pass"`: a request that names no contract is sent
//! upstream as it is and its answer returned unchecked, marked
//! `x-vouch-checked: false`, scrubbed of the key like every other byte. A
//! streamed answer is read whole first (bounded), so that no key split
//! across two events can get through.

use std::time::Duration;

use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use std::collections::BTreeMap;

use serde_json::{Map, Value};
use tokio::sync::OwnedSemaphorePermit;
use tokio::time::timeout;

use vouch_llm::Scrubber;

use crate::reply::error;
use crate::{ClientKey, Gateway};

/// The largest unchecked answer passed through.
const MAX_PASSED: usize = 32 * 1024 * 1024;

/// Forward `body` unchecked.
pub async fn forward(
    g: &Gateway,
    key: Option<&ClientKey>,
    headers: &HeaderMap,
    body: Map<String, Value>,
    permit: OwnedSemaphorePermit,
) -> Response {
    let url = format!("{}/chat/completions", g.config.upstream.trim_end_matches('/'));
    let mut req = g.pass_client.post(url).json(&Value::Object(body));
    if let Some(k) = key {
        req = req.header(header::AUTHORIZATION, k.forwarded.header().clone());
    } else if let Some(k) = &g.key_header {
        req = req.header(header::AUTHORIZATION, k.clone());
    }
    let scrub = key.map_or(&g.scrub, |k| &k.answers);
    for (n, v) in headers.iter().filter(|(n, _)| g.config.forwards(n.as_str())) {
        req = req.header(n, v);
    }
    let total = Duration::from_millis(g.config.timeouts.total_ms);
    let answer = timeout(total, async {
        let resp = req.send().await?;
        let status = resp.status().as_u16();
        let kind = resp.headers().get(header::CONTENT_TYPE).cloned();
        let mut resp = resp;
        let mut buf = Vec::new();
        while let Some(piece) = resp.chunk().await? {
            if buf.len().saturating_add(piece.len()) > MAX_PASSED {
                return Ok::<_, reqwest::Error>(None);
            }
            buf.extend_from_slice(&piece);
        }
        Ok(Some((status, kind, buf)))
    })
    .await;
    drop(permit);
    let (status, kind, buf) = match answer {
        Ok(Ok(Some(a))) => a,
        Ok(Ok(None)) => {
            return error(
                StatusCode::BAD_GATEWAY,
                "upstream_error",
                "upstream_too_large",
                "the upstream's answer is too large",
                scrub,
            )
        }
        Ok(Err(_)) => {
            return error(
                StatusCode::BAD_GATEWAY,
                "upstream_error",
                "upstream_unreachable",
                "the upstream could not be reached",
                scrub,
            )
        }
        Err(_) => {
            return error(
                StatusCode::GATEWAY_TIMEOUT,
                "upstream_error",
                "upstream_timeout",
                "the upstream did not answer in time",
                scrub,
            )
        }
    };
    let streamed = kind.as_ref().and_then(|k| k.to_str().ok()).is_some_and(|k| k.contains("event-stream"));
    if streamed && secret_across_events(scrub, &buf) {
        return error(
            StatusCode::BAD_GATEWAY,
            "upstream_error",
            "secret_in_answer",
            "the upstream's streamed answer held the key across its events; it was not relayed",
            scrub,
        );
    }
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_GATEWAY);
    let body = scrub.scrub_bytes(&buf).into_owned();
    let mut r = (status, body).into_response();
    if let Some(k) = kind {
        r.headers_mut().insert(header::CONTENT_TYPE, k);
    }
    r.headers_mut().insert("x-vouch-checked", HeaderValue::from_static("false"));
    r
}

/// Whether a streamed answer holds a secret once each string of its events
/// is joined with the same string of the others (by its place in the
/// event: `choices/0/delta/content`…). A scrub of the bytes sees a key sent
/// a character an event only as many pieces, each wrapped in JSON.
fn secret_across_events(scrub: &Scrubber, body: &[u8]) -> bool {
    if !scrub.has_secrets() {
        return false;
    }
    let mut joined: BTreeMap<String, String> = BTreeMap::new();
    for line in body.split(|&b| b == b'\n') {
        let Some(data) = line.strip_prefix(b"data:") else { continue };
        let Ok(event) = serde_json::from_slice::<Value>(data.trim_ascii()) else { continue };
        // An explicit stack: an event's depth is serde_json's to bound (128).
        let mut stack = vec![(String::new(), &event)];
        while let Some((path, v)) = stack.pop() {
            match v {
                Value::String(s) => joined.entry(path).or_default().push_str(s),
                Value::Array(items) => stack.extend(items.iter().enumerate().map(|(i, x)| (format!("{path}/{i}"), x))),
                Value::Object(map) => stack.extend(map.iter().map(|(k, x)| (format!("{path}/{k}"), x))),
                _ => {}
            }
        }
    }
    joined.values().any(|text| scrub.holds_secret(text.as_bytes()))
}
