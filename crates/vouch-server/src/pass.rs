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
/// part that is not strict JSON could still spell one. The name is the
/// gateway's own: clients read `vouch.outcome` for its verdict, so an
/// upstream that wrote `"vouch": {"outcome": "accepted"}` would otherwise
/// pass an unchecked answer off as vouched. Read as the SDKs read it (a
/// byte order mark skipped, the last of repeated keys, an event's `data`
/// lines joined with `\n`). A part serde_json does not read may still be
/// read by a looser reader (Python's `json` takes `NaN`, `1e400`): unless
/// it holds neither `vouch` nor a `\u` escape that could spell it, the
/// answer is not relayed.
fn without_vouch(body: &[u8], streamed: bool) -> Result<Option<Vec<u8>>, ()> {
    fn stripped(data: &[u8]) -> Result<Option<Vec<u8>>, ()> {
        let data = data.strip_prefix("\u{feff}".as_bytes()).unwrap_or(data);
        let Ok(mut doc) = serde_json::from_slice::<Value>(data) else {
            let spells = |needle: &[u8]| data.windows(needle.len()).any(|w| w == needle);
            return if spells(b"vouch") || spells(b"\\u") { Err(()) } else { Ok(None) };
        };
        if doc.as_object_mut().and_then(|o| o.remove("vouch")).is_none() {
            return Ok(None);
        }
        serde_json::to_vec(&doc).map(Some).map_err(|_| ())
    }
    if !streamed {
        return stripped(body);
    }
    // Server-Sent Events: lines end with \n, \r\n or \r; a blank line ends an event.
    let text = String::from_utf8_lossy(body);
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let mut lines: Vec<&str> = text.split('\n').flat_map(|l| l.strip_suffix('\r').unwrap_or(l).split('\r')).collect();
    // What follows the last line end is no line.
    if lines.last() == Some(&"") {
        lines.pop();
    }
    let mut out = Vec::with_capacity(body.len());
    let mut changed = false;
    let mut event: Vec<&str> = Vec::new();
    let mut flush = |event: &mut Vec<&str>, out: &mut Vec<u8>| -> Result<(), ()> {
        let data: Vec<&str> = event.iter().filter_map(|l| data_of(l)).collect();
        let rewritten = if data.is_empty() { None } else { stripped(data.join("\n").as_bytes())? };
        let kept: Vec<&str> = match &rewritten {
            Some(_) => event.iter().copied().filter(|l| data_of(l).is_none()).collect(),
            None => event.clone(),
        };
        for line in kept {
            out.extend_from_slice(line.as_bytes());
            out.push(b'\n');
        }
        if let Some(json) = rewritten {
            changed = true;
            out.extend_from_slice(b"data: ");
            out.extend_from_slice(&json);
            out.push(b'\n');
        }
        event.clear();
        Ok(())
    };
    for line in lines {
        if line.is_empty() {
            flush(&mut event, &mut out)?;
            out.push(b'\n');
        } else {
            event.push(line);
        }
    }
    if !event.is_empty() {
        flush(&mut event, &mut out)?;
    }
    Ok(changed.then_some(out))
}

/// A Server-Sent Events line's `data` value: after the first colon, less one
/// space (a bare `data` is an empty one); `None` for another field.
fn data_of(line: &str) -> Option<&str> {
    match line.split_once(':') {
        Some(("data", value)) => Some(value.strip_prefix(' ').unwrap_or(value)),
        None if line == "data" => Some(""),
        _ => None,
    }
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
