//! The common input line, read without building a tree: a JSON string (the
//! raw reply), or an object of at most [`PLAIN_FIELDS`] distinct keys whose
//! values are strings, integers, booleans or nulls, the reply a string
//! among them.
//!
//! Most of `vouch batch`'s reading is this: a reply is a JSON document held
//! in a JSON string, so every quote and newline of it is an escape. This
//! reader walks the line once, each string read by the core's own string
//! reader ([`vouch::read_json_string`]: borrowed where it holds no escape,
//! else decoded in the same pass), and words no error: any line it does not
//! take (a repeated key, a fraction, a nested field, a bad escape, anything
//! that is not JSON) is left to the core's reader, so it only ever takes a
//! line the core's reader reads to the same fields (the tests
//! `plain_lines_read_as_the_core_reads_them` and
//! `escaped_replies_read_as_the_core_reads_them`).

use std::borrow::Cow;

/// Most fields a line read by [`plain_line`] may have.
const PLAIN_FIELDS: usize = 32;

/// Fields kept as read, in order.
pub(super) type PlainFieldList<'a> = Vec<(Cow<'a, str>, Plain<'a>)>;

/// A scalar field of an input line, as [`plain_line`] keeps it.
pub(super) enum Plain<'a> {
    Str(Cow<'a, str>),
    Unsigned(u64),
    Signed(i64),
    Bool(bool),
    Null,
}

/// The line's fields (but `field`) and the reply, borrowed where
/// unescaped; `None` for any line the core's reader must read.
pub(super) fn plain_line<'a>(text: &'a str, field: &str) -> Option<(PlainFieldList<'a>, Cow<'a, str>)> {
    let mut scan = Scan { text, at: 0 };
    scan.white();
    if scan.peek()? == b'"' {
        let reply = scan.string()?;
        scan.white();
        return scan.at_end().then_some((Vec::new(), reply));
    }
    scan.eat(b'{')?;
    let mut fields: PlainFieldList<'a> = Vec::new();
    let mut reply = None;
    scan.white();
    if scan.peek()? != b'}' {
        loop {
            scan.white();
            let key = scan.string()?;
            scan.white();
            scan.eat(b':')?;
            scan.white();
            let value = scan.scalar()?;
            // A repeated key is the core reader's to refuse.
            if fields.iter().any(|(k, _)| *k == key) || reply.is_some() && key == field {
                return None;
            }
            if key == field {
                let Plain::Str(s) = value else { return None };
                reply = Some(s);
            } else {
                if fields.len() == PLAIN_FIELDS {
                    return None;
                }
                fields.push((key, value));
            }
            scan.white();
            match scan.next()? {
                b',' => continue,
                b'}' => break,
                _ => return None,
            }
        }
    } else {
        scan.at += 1;
    }
    scan.white();
    if !scan.at_end() {
        return None;
    }
    Some((fields, reply?))
}

/// A position in a line.
struct Scan<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Scan<'a> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let b = self.peek()?;
        self.at += 1;
        Some(b)
    }

    fn eat(&mut self, want: u8) -> Option<()> {
        (self.next()? == want).then_some(())
    }

    fn at_end(&self) -> bool {
        self.at == self.text.len()
    }

    /// JSON's white space (what the core's reader skips between tokens).
    fn white(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    /// A string, an integer of u64 or i64, a boolean or null.
    fn scalar(&mut self) -> Option<Plain<'a>> {
        match self.peek()? {
            b'"' => self.string().map(Plain::Str),
            b't' => self.word("true").map(|()| Plain::Bool(true)),
            b'f' => self.word("false").map(|()| Plain::Bool(false)),
            b'n' => self.word("null").map(|()| Plain::Null),
            _ => self.integer(),
        }
    }

    fn word(&mut self, word: &str) -> Option<()> {
        let rest = self.text.get(self.at..)?;
        rest.starts_with(word).then(|| self.at += word.len())
    }

    /// An integer written as JSON writes it (no leading zero, no `-0`,
    /// no fraction or exponent), within u64 or i64: it is written back in
    /// the same digits. Anything else is the core reader's.
    fn integer(&mut self) -> Option<Plain<'a>> {
        let bytes = self.text.as_bytes().get(self.at..)?;
        let negative = bytes.first() == Some(&b'-');
        let digits = bytes.get(usize::from(negative)..)?;
        let n = digits.iter().take_while(|b| b.is_ascii_digit()).count();
        let first = *digits.first()?;
        if n == 0 || (first == b'0' && (n > 1 || negative)) {
            return None;
        }
        if matches!(digits.get(n), Some(b'.' | b'e' | b'E')) {
            return None;
        }
        let end = self.at + usize::from(negative) + n;
        let token = self.text.get(self.at..end)?;
        self.at = end;
        if negative {
            token.parse().ok().map(Plain::Signed)
        } else {
            token.parse().ok().map(Plain::Unsigned)
        }
    }

    /// A string at the cursor, read by the core's own string reader
    /// (borrowed when it holds no escape); `None` where that reader refuses it.
    fn string(&mut self) -> Option<Cow<'a, str>> {
        let text: &'a str = self.text;
        let (content, taken) = vouch::read_json_string(text.get(self.at..)?)?;
        self.at += taken;
        Some(content)
    }
}
