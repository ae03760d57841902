//! `without_contract = "pass"`: a request that names no contract is sent
//! upstream as it is and its answer returned unchecked, marked
//! `x-vouch-checked: false`, scrubbed of the key like every other byte. A
//! streamed answer is read whole first (bounded), so that no key split
//! across two events can get through. A `vouch` member the upstream put in
//! its answer (or in an event of it) is taken out: that object is the
//! gateway's verdict, and an unchecked answer carries none.

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
    let scrubbed = scrub.scrub_bytes(&buf);
    let body = match without_vouch(&scrubbed, streamed) {
        Ok(Some(rewritten)) => rewritten,
        Ok(None) => scrubbed.into_owned(),
        Err(()) => {
            return error(
                StatusCode::BAD_GATEWAY,
                "upstream_error",
                "vouch_in_answer",
                "the upstream's unchecked answer is not strict JSON and may hold a vouch member, the gateway's own; it was not relayed",
                scrub,
            )
        }
    };
    let mut r = (status, body).into_response();
    if let Some(k) = kind {
        r.headers_mut().insert(header::CONTENT_TYPE, k);
    }
    r.headers_mut().insert("x-vouch-checked", HeaderValue::from_static("false"));
    r
}

/// The answer with no `vouch` member at the top of its JSON (the whole body,
/// or each event's data): `Ok(None)` when it had none, `Err(())` when a
/// part vouch cannot read could still spell one. The name is the gateway's
/// own: clients read `vouch.outcome` for its verdict, so an upstream that
/// wrote `"vouch": {"outcome": "accepted"}` would otherwise pass an
/// unchecked answer off as vouched. A stream is read by vouch-llm's reader
/// of Server-Sent Events, the one its checked streams go through, and
/// written again (each event's name and data; ids, retries and comments
/// dropped) only when an event had the member.
fn without_vouch(body: &[u8], streamed: bool) -> Result<Option<Vec<u8>>, ()> {
    if !streamed {
        return stripped(body);
    }
    let Some(events) = vouch_llm::read_sse_events(body, MAX_PASSED) else {
        return if could_name_vouch(body) { Err(()) } else { Ok(None) };
    };
    let mut changed = false;
    let mut out = Vec::with_capacity(body.len());
    for event in &events {
        let rewritten = stripped(&event.data)?;
        changed |= rewritten.is_some();
        if let Some(name) = &event.name {
            out.extend_from_slice(b"event: ");
            out.extend_from_slice(name.as_bytes());
            out.push(b'\n');
        }
        for line in rewritten.as_deref().unwrap_or(&event.data).split(|b| *b == b'\n') {
            out.extend_from_slice(b"data: ");
            out.extend_from_slice(line);
            out.push(b'\n');
        }
        out.push(b'\n');
    }
    Ok(changed.then_some(out))
}

/// One JSON document without a `vouch` member at its top, read as the SDKs
/// read it (a byte order mark skipped, the last of repeated keys): `Ok(None)`
/// when it has none. A document serde_json does not read may still be read
/// by a looser reader (Python's `json` takes `NaN`, `1e400`): `Err(())` when
/// it [could name](could_name_vouch) the member.
fn stripped(data: &[u8]) -> Result<Option<Vec<u8>>, ()> {
    let data = data.strip_prefix("\u{feff}".as_bytes()).unwrap_or(data);
    let Ok(mut doc) = serde_json::from_slice::<Value>(data) else {
        return if could_name_vouch(data) { Err(()) } else { Ok(None) };
    };
    if doc.as_object_mut().and_then(|o| o.remove("vouch")).is_none() {
        return Ok(None);
    }
    serde_json::to_vec(&doc).map(Some).map_err(|_| ())
}

/// Whether text vouch could not read may hold the key `vouch`: the word, or
/// a `\u` escape that could spell it.
fn could_name_vouch(text: &[u8]) -> bool {
    let holds = |needle: &[u8]| text.windows(needle.len()).any(|w| w == needle);
    holds(b"vouch") || holds(b"\\u")
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
    // Each event's data as vouch-llm's reader joins it; a body it cannot read, line by line.
    let datas: Vec<Vec<u8>> = match vouch_llm::read_sse_events(body, MAX_PASSED) {
        Some(events) => events.into_iter().map(|e| e.data).collect(),
        None => body.split(|&b| b == b'\n').filter_map(|l| l.strip_prefix(b"data:")).map(<[u8]>::to_vec).collect(),
    };
    for data in &datas {
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
