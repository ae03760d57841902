//! Server-Sent Events, read incrementally and strictly: lines end with LF,
//! CRLF or CR (split across pieces included); a blank line ends an event;
//! `data:` lines join with `\n`; `event:` names it; `id:`, `retry:` and
//! comments (`:` first) are ignored. Any other line is an error, not
//! ignored as the HTML standard's reader would: a stream vouch cannot read
//! field by field is not one it reads at all. Every line and event is
//! bounded.

/// One event: its name (`event:`) and its data (the `data:` lines, joined).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// The `event:` field, if any.
    pub name: Option<String>,
    /// The `data:` lines, joined with `\n`.
    pub data: Vec<u8>,
}

/// A whole Server-Sent Events body read as events by the reader vouch's own
/// streams go through (a last event without its blank line ended too), or
/// `None` when it cannot be read so: a line that is not a known field, or a
/// line or event over `max_event` bytes.
///
/// ```
/// let events = vouch_llm::read_sse_events(b"event: x\ndata: a\ndata: b\n\ndata: [DONE]", 1024).unwrap_or_default();
/// assert_eq!(events.len(), 2);
/// assert_eq!((events[0].name.as_deref(), &events[0].data[..]), (Some("x"), &b"a\nb"[..]));
/// assert!(vouch_llm::read_sse_events(b"{\"choices\": []}\n\n", 1024).is_none());
/// ```
#[must_use]
pub fn read_sse_events(body: &[u8], max_event: usize) -> Option<Vec<Event>> {
    let mut decoder = Decoder::new(max_event);
    let mut events = Vec::new();
    decoder.push(body, &mut events).ok()?;
    decoder.push(b"\n\n", &mut events).ok()?;
    Some(events)
}

/// Why a stream cannot be read as events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SseError {
    /// A line or an event is larger than the bound.
    TooLarge(usize),
    /// A line that is not a field this reader knows (its field name, lossy).
    UnknownField(String),
}

/// The decoder's state between pieces.
#[derive(Debug)]
pub(crate) struct Decoder {
    max_event: usize,
    line: Vec<u8>,
    data: Vec<u8>,
    has_data: bool,
    name: Option<String>,
    /// The last piece ended with CR: a LF first in the next one ends nothing.
    after_cr: bool,
}

impl Decoder {
    /// A decoder refusing lines and events larger than `max_event` bytes.
    pub(crate) fn new(max_event: usize) -> Self {
        Self { max_event, line: Vec::new(), data: Vec::new(), has_data: false, name: None, after_cr: false }
    }

    /// Read a piece; every event it completes is pushed to `out`, in order.
    pub(crate) fn push(&mut self, piece: &[u8], out: &mut Vec<Event>) -> Result<(), SseError> {
        let mut rest = piece;
        if self.after_cr {
            self.after_cr = false;
            if let Some(tail) = rest.strip_prefix(b"\n") {
                rest = tail;
            }
        }
        while let Some(end) = rest.iter().position(|b| *b == b'\n' || *b == b'\r') {
            let (head, tail) = rest.split_at(end);
            self.extend_line(head)?;
            let cr = tail.first() == Some(&b'\r');
            rest = tail.get(1..).unwrap_or_default();
            if cr {
                match rest.first() {
                    Some(b'\n') => rest = rest.get(1..).unwrap_or_default(),
                    None => self.after_cr = true,
                    Some(_) => {}
                }
            }
            let line = std::mem::take(&mut self.line);
            if let Some(event) = self.line_ended(&line)? {
                out.push(event);
            }
        }
        self.extend_line(rest)
    }

    /// Bytes of an event or line not yet ended (at the end of the stream: a
    /// truncated event).
    pub(crate) fn pending(&self) -> bool {
        !self.line.is_empty() || self.has_data
    }

    fn extend_line(&mut self, bytes: &[u8]) -> Result<(), SseError> {
        if self.line.len().saturating_add(bytes.len()) > self.max_event {
            return Err(SseError::TooLarge(self.max_event));
        }
        self.line.extend_from_slice(bytes);
        Ok(())
    }

    fn line_ended(&mut self, line: &[u8]) -> Result<Option<Event>, SseError> {
        if line.is_empty() {
            let name = self.name.take();
            if !self.has_data {
                return Ok(None);
            }
            self.has_data = false;
            let mut data = std::mem::take(&mut self.data);
            if data.last() == Some(&b'\n') {
                data.pop();
            }
            return Ok(Some(Event { name, data }));
        }
        if line.first() == Some(&b':') {
            return Ok(None);
        }
        let (field, value) = match line.iter().position(|b| *b == b':') {
            Some(i) => {
                let (f, v) = line.split_at(i);
                let v = v.get(1..).unwrap_or_default();
                (f, v.strip_prefix(b" ").unwrap_or(v))
            }
            None => (line, &b""[..]),
        };
        match field {
            b"data" => {
                if self.data.len().saturating_add(value.len()).saturating_add(1) > self.max_event {
                    return Err(SseError::TooLarge(self.max_event));
                }
                self.data.extend_from_slice(value);
                self.data.push(b'\n');
                self.has_data = true;
            }
            b"event" => self.name = Some(String::from_utf8_lossy(value).into_owned()),
            b"id" | b"retry" => {}
            other => return Err(SseError::UnknownField(String::from_utf8_lossy(other).into_owned())),
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn events(pieces: &[&[u8]]) -> Result<Vec<Event>, SseError> {
        let mut d = Decoder::new(64);
        let mut out = Vec::new();
        for p in pieces {
            d.push(p, &mut out)?;
        }
        Ok(out)
    }

    fn data(e: &[Event]) -> Vec<&[u8]> {
        e.iter().map(|e| e.data.as_slice()).collect()
    }

    #[test]
    fn events_end_at_blank_lines_in_every_line_ending_and_split_anywhere() {
        let whole: &[u8] = b"data: {\"a\":1}\n\ndata: two\r\n\r\n: comment\rdata:three\r\rdata: [DONE]\n\n";
        let expected: Vec<&[u8]> = vec![b"{\"a\":1}", b"two", b"three", b"[DONE]"];
        assert_eq!(data(&events(&[whole]).unwrap()), expected);
        for cut in 0..whole.len() {
            let (a, b) = whole.split_at(cut);
            assert_eq!(data(&events(&[a, b]).unwrap()), expected, "cut at {cut}");
        }
        let bytes: Vec<&[u8]> = whole.chunks(1).collect();
        assert_eq!(data(&events(&bytes).unwrap()), expected);
    }

    #[test]
    fn data_lines_join_and_names_ids_and_retries_are_read() {
        let e = events(&[b"event: error\nid: 7\nretry: 10\ndata: a\ndata:b\n\n"]).unwrap();
        assert_eq!(e, vec![Event { name: Some("error".into()), data: b"a\nb".to_vec() }]);
    }

    #[test]
    fn an_unknown_field_and_an_oversized_line_are_errors() {
        assert_eq!(events(&[b"{\"choices\": []}\n\n"]), Err(SseError::UnknownField("{\"choices\"".into())));
        assert_eq!(events(&[&[b'x'; 65]]), Err(SseError::TooLarge(64)));
        assert_eq!(
            events(&[b"data: 0123456789012345678901234567890123456789\n", b"data: 012345678901234567890123456789\n"]),
            Err(SseError::TooLarge(64))
        );
    }

    #[test]
    fn an_unfinished_event_is_pending() {
        let mut d = Decoder::new(64);
        let mut out = Vec::new();
        d.push(b"data: [DONE]\n", &mut out).unwrap();
        assert!(out.is_empty() && d.pending());
        d.push(b"\n", &mut out).unwrap();
        assert_eq!(out.len(), 1);
        assert!(!d.pending());
    }
}
