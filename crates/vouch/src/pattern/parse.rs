//! ECMA-262 pattern syntax (Unicode mode, the `u` flag) into a small AST.
//!
//! The grammar is ECMA-262's `Pattern[+UnicodeMode, +NamedCaptureGroups]`
//! (§22.2.1). Everything the grammar rejects is an error here; so is every
//! construct that has no exact linear-time translation (back-references,
//! look-around, modifiers), and every construct this parser is not sure of
//! (non-ASCII group names, property names outside [`super::props`]).
//!
//! The parser is a loop over the pattern's code points with an explicit stack
//! of open groups, so pattern depth never becomes Rust stack depth; the stack
//! is bounded by [`MAX_GROUP_DEPTH`] anyway, because the emitted regex must
//! stay within the regex crate's own nesting limit.

use super::props;

/// Deepest group nesting accepted. The regex crate refuses nesting beyond
/// 250 levels and a quantified ECMA group costs it two (the group and the
/// repetition), so 100 leaves room; deeper is refused, never truncated.
pub(crate) const MAX_GROUP_DEPTH: usize = 100;

/// One parsed pattern (or part of one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Node {
    /// Matches the empty string (an empty pattern or alternative).
    Empty,
    /// Matches nothing: a lone surrogate escape, which no valid string holds.
    Never,
    /// One code point.
    Char(char),
    /// A set of code points (`[...]`, `.`, `\d` and the other class escapes).
    Class(Class),
    /// A zero-width assertion.
    Assert(Assertion),
    /// A group, capturing or not (captures do not change whether a match exists).
    Group(Box<Node>),
    /// A sequence.
    Concat(Vec<Node>),
    /// Alternatives (at least two).
    Alt(Vec<Node>),
    /// A lookahead `(?=…)` (`positive`) or `(?!…)`, at character `at` of the
    /// source. Run only where its position is fixed (see `super::anchored`).
    Look {
        /// `(?=` rather than `(?!`.
        positive: bool,
        /// What it looks for.
        inner: Box<Node>,
        /// Where it stands in the source, for a refusal.
        at: usize,
    },
    /// A quantified atom; `max` `None` is unbounded. Laziness is dropped: it
    /// changes which match is found, never whether one exists.
    Repeat {
        /// The repeated atom.
        node: Box<Node>,
        /// Least count.
        min: u32,
        /// Greatest count, `None` for no bound.
        max: Option<u32>,
    },
}

/// The zero-width assertions ECMA-262 has that vouch translates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Assertion {
    /// `^` without the `m` flag: start of input.
    Start,
    /// `$` without the `m` flag: end of input.
    End,
    /// `\b`: ASCII word boundary.
    WordBoundary,
    /// `\B`: not an ASCII word boundary.
    NotWordBoundary,
}

/// A set of code points: members, possibly negated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Class {
    /// `[^...]`: the complement of the members.
    pub(crate) negated: bool,
    /// The members; empty means the empty set (`[]`).
    pub(crate) items: Vec<ClassItem>,
}

/// One member of a class.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ClassItem {
    /// Code points `from..=to` (surrogates included as written; the emitter
    /// drops them, since no valid string holds one).
    Range(u32, u32),
    /// A class escape, possibly negated (`\D`, `\P{..}`).
    Set {
        /// Which set.
        set: Set,
        /// Its complement instead.
        negated: bool,
    },
}

/// The named sets of ECMA-262.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Set {
    /// `\d`: `[0-9]`.
    Digit,
    /// `\w`: `[A-Za-z0-9_]` (Unicode mode without `i`).
    Word,
    /// `\s`: ECMA-262 WhiteSpace and LineTerminator.
    Space,
    /// `\p{..}`: a Unicode property, by its regex-crate name.
    Property(&'static str),
}

/// Why a pattern is refused: what, and at which character (code point
/// offset from 0).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ParseError {
    /// Character offset in the pattern.
    pub(crate) at: usize,
    /// What is wrong, in words (names the construct).
    pub(crate) what: String,
}

/// Parse `source` as an ECMA-262 pattern in Unicode mode.
pub(crate) fn parse(source: &str) -> Result<Node, ParseError> {
    Parser { chars: source.chars().collect(), pos: 0, names: Vec::new() }.pattern()
}

/// An open group while parsing: finished alternatives and the current one.
struct Frame {
    /// A lookahead's polarity, when the group is one.
    look: Option<bool>,
    /// Alternatives already closed by `|`.
    alternatives: Vec<Node>,
    /// The sequence being read.
    current: Vec<Node>,
    /// Where the group's `(` stands, for an unclosed group's error.
    open_at: usize,
}

impl Frame {
    fn new(open_at: usize) -> Self {
        Self { look: None, alternatives: Vec::new(), current: Vec::new(), open_at }
    }

    /// Close the current alternative.
    fn cut(&mut self) {
        let seq = std::mem::take(&mut self.current);
        self.alternatives.push(concat(seq));
    }

    /// The node the frame stands for.
    fn finish(mut self) -> Node {
        self.cut();
        if self.alternatives.len() == 1 {
            self.alternatives.pop().unwrap_or(Node::Empty)
        } else {
            Node::Alt(self.alternatives)
        }
    }
}

fn concat(mut seq: Vec<Node>) -> Node {
    match seq.len() {
        0 => Node::Empty,
        1 => seq.pop().unwrap_or(Node::Empty),
        _ => Node::Concat(seq),
    }
}

/// An atom inside a class: one code point or a named set.
enum ClassAtom {
    Char(u32),
    Set(ClassItem),
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
    /// Group names seen so far (duplicates are refused).
    names: Vec<String>,
}

fn err<T>(at: usize, what: impl Into<String>) -> Result<T, ParseError> {
    Err(ParseError { at, what: what.into() })
}

/// ECMA-262 SyntaxCharacter: the only characters an identity escape may
/// name in Unicode mode (with `/`).
fn is_syntax_char(c: char) -> bool {
    matches!(c, '^' | '$' | '\\' | '.' | '*' | '+' | '?' | '(' | ')' | '[' | ']' | '{' | '}' | '|')
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.pos + ahead).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += 1;
        Some(c)
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn pattern(mut self) -> Result<Node, ParseError> {
        let mut stack = vec![Frame::new(0)];
        while let Some(c) = self.peek() {
            let at = self.pos;
            match c {
                '|' => {
                    self.pos += 1;
                    if let Some(top) = stack.last_mut() {
                        top.cut();
                    }
                }
                '(' => {
                    let look = self.group_open()?;
                    if stack.len() > MAX_GROUP_DEPTH {
                        return err(at, format!("groups nested deeper than {MAX_GROUP_DEPTH}"));
                    }
                    let mut frame = Frame::new(at);
                    frame.look = look;
                    stack.push(frame);
                }
                ')' => {
                    self.pos += 1;
                    if stack.len() < 2 {
                        return err(at, "an unmatched )");
                    }
                    let Some(frame) = stack.pop() else { return err(at, "an unmatched )") };
                    let (look, open_at) = (frame.look, frame.open_at);
                    let inner = Box::new(frame.finish());
                    // A lookahead is no atom: Unicode mode cannot quantify it.
                    let node = match look {
                        Some(positive) => Node::Look { positive, inner, at: open_at },
                        None => Node::Group(inner),
                    };
                    if let Some(top) = stack.last_mut() {
                        top.current.push(node);
                    }
                }
                '*' | '+' | '?' | '{' => {
                    let (min, max) = self.quantifier()?;
                    let Some(top) = stack.last_mut() else { return err(at, "an internal error") };
                    let quantifiable = matches!(
                        top.current.last(),
                        Some(Node::Char(_) | Node::Class(_) | Node::Group(_) | Node::Never)
                    );
                    if !quantifiable {
                        return err(at, format!("a quantifier {c} with nothing to repeat"));
                    }
                    if let Some(atom) = top.current.pop() {
                        top.current.push(Node::Repeat { node: Box::new(atom), min, max });
                    }
                }
                _ => {
                    let node = self.atom()?;
                    if let Some(top) = stack.last_mut() {
                        top.current.push(node);
                    }
                }
            }
        }
        if stack.len() > 1 {
            let at = stack.last().map_or(0, |f| f.open_at);
            return err(at, "a group ( that is never closed");
        }
        Ok(stack.pop().map_or(Node::Empty, Frame::finish))
    }

    /// After `(`: which group it opens — `Some(positive)` for a lookahead.
    /// Only `(`, `(?:`, `(?<name>`, `(?=` and `(?!` are translated; the
    /// others are named in the refusal.
    fn group_open(&mut self) -> Result<Option<bool>, ParseError> {
        let at = self.pos;
        self.pos += 1;
        if !self.eat('?') {
            return Ok(None);
        }
        match self.bump() {
            Some(':') => Ok(None),
            Some('=') => Ok(Some(true)),
            Some('!') => Ok(Some(false)),
            Some('<') => match self.peek() {
                Some('=') => err(at, "a lookbehind (?<=...), which vouch cannot run in linear time"),
                Some('!') => err(at, "a negative lookbehind (?<!...), which vouch cannot run in linear time"),
                _ => self.group_name(at).map(|()| None),
            },
            Some(c) if c.is_ascii_alphabetic() || c == '-' => {
                err(at, "an inline modifier group (?flags:...), which vouch does not translate")
            }
            _ => err(at, "an invalid group (?"),
        }
    }

    /// `name>` of `(?<name>`. ECMA-262 allows any identifier (and escapes in
    /// it); vouch checks only ASCII identifiers exactly and refuses the rest.
    fn group_name(&mut self, at: usize) -> Result<(), ParseError> {
        let mut name = String::new();
        loop {
            match self.bump() {
                None => return err(at, "a group name that is never closed with >"),
                Some('>') => break,
                Some(c) => {
                    let ok = if name.is_empty() {
                        c.is_ascii_alphabetic() || c == '_' || c == '$'
                    } else {
                        c.is_ascii_alphanumeric() || c == '_' || c == '$'
                    };
                    if !ok {
                        return err(
                            at,
                            "a group name vouch does not accept (only ASCII letters, digits, _ and $, not starting with a digit)",
                        );
                    }
                    name.push(c);
                }
            }
        }
        if name.is_empty() {
            return err(at, "an empty group name");
        }
        if self.names.contains(&name) {
            return err(at, format!("a duplicate group name {name:?}"));
        }
        self.names.push(name);
        Ok(())
    }

    /// A quantifier at the cursor (`*`, `+`, `?`, `{n}`, `{n,}`, `{n,m}`, each
    /// maybe followed by the lazy `?`).
    fn quantifier(&mut self) -> Result<(u32, Option<u32>), ParseError> {
        let at = self.pos;
        let bounds = match self.bump() {
            Some('*') => (0, None),
            Some('+') => (1, None),
            Some('?') => (0, Some(1)),
            _ => {
                // In Unicode mode `{` is never a literal: not a quantifier is an error.
                let min = self.decimal(at)?;
                let max = if self.eat(',') {
                    if self.peek() == Some('}') {
                        None
                    } else {
                        Some(self.decimal(at)?)
                    }
                } else {
                    Some(min)
                };
                if !self.eat('}') {
                    return err(at, "a lone { (not a quantifier {n}, {n,} or {n,m})");
                }
                if max.is_some_and(|m| m < min) {
                    return err(at, "a quantifier {n,m} with n > m");
                }
                (min, max)
            }
        };
        self.eat('?');
        Ok(bounds)
    }

    /// Decimal digits of a `{n,m}` quantifier.
    fn decimal(&mut self, at: usize) -> Result<u32, ParseError> {
        let mut value: u32 = 0;
        let mut any = false;
        while let Some(d) = self.peek().and_then(|c| c.to_digit(10)) {
            self.pos += 1;
            any = true;
            value = match value.checked_mul(10).and_then(|v| v.checked_add(d)) {
                Some(v) => v,
                None => return err(at, "a quantifier count too large"),
            };
        }
        if !any {
            return err(at, "a lone { (not a quantifier {n}, {n,} or {n,m})");
        }
        Ok(value)
    }

    /// One atom or assertion outside a class (the cursor is on it; it is not
    /// `|`, `(`, `)` or a quantifier).
    fn atom(&mut self) -> Result<Node, ParseError> {
        let at = self.pos;
        let Some(c) = self.bump() else { return err(at, "an unexpected end") };
        match c {
            '^' => Ok(Node::Assert(Assertion::Start)),
            '$' => Ok(Node::Assert(Assertion::End)),
            // `.` without the `s` flag: every code point but the line terminators.
            '.' => Ok(Node::Class(Class {
                negated: true,
                items: vec![
                    ClassItem::Range(0x0A, 0x0A),
                    ClassItem::Range(0x0D, 0x0D),
                    ClassItem::Range(0x2028, 0x2029),
                ],
            })),
            '[' => self.class(at),
            '\\' => self.atom_escape(at),
            ']' => err(at, "a lone ]"),
            '}' => err(at, "a lone }"),
            c => Ok(Node::Char(c)),
        }
    }

    /// After `\` outside a class.
    fn atom_escape(&mut self, at: usize) -> Result<Node, ParseError> {
        let Some(c) = self.peek() else { return err(at, "a lone \\ at the end") };
        match c {
            'b' => {
                self.pos += 1;
                Ok(Node::Assert(Assertion::WordBoundary))
            }
            'B' => {
                self.pos += 1;
                Ok(Node::Assert(Assertion::NotWordBoundary))
            }
            '1'..='9' => err(at, "a backreference \\N, which vouch cannot run in linear time"),
            'k' => err(at, "a backreference \\k<name>, which vouch cannot run in linear time"),
            _ => match self.class_escape(at, false)? {
                ClassAtom::Set(item) => Ok(Node::Class(Class { negated: false, items: vec![item] })),
                ClassAtom::Char(cp) => Ok(char::from_u32(cp).map_or(Node::Never, Node::Char)),
            },
        }
    }

    /// After `\` (the cursor is on the escape's first character): a class
    /// escape or character escape. `in_class` allows `\b` (U+0008) and `\-`.
    fn class_escape(&mut self, at: usize, in_class: bool) -> Result<ClassAtom, ParseError> {
        let Some(c) = self.bump() else { return err(at, "a lone \\ at the end") };
        let set = |set, negated| Ok(ClassAtom::Set(ClassItem::Set { set, negated }));
        match c {
            'd' => set(Set::Digit, false),
            'D' => set(Set::Digit, true),
            'w' => set(Set::Word, false),
            'W' => set(Set::Word, true),
            's' => set(Set::Space, false),
            'S' => set(Set::Space, true),
            'p' | 'P' => {
                let name = self.property(at)?;
                set(Set::Property(name), c == 'P')
            }
            'b' if in_class => Ok(ClassAtom::Char(0x08)),
            '-' if in_class => Ok(ClassAtom::Char(u32::from('-'))),
            'f' => Ok(ClassAtom::Char(0x0C)),
            'n' => Ok(ClassAtom::Char(0x0A)),
            'r' => Ok(ClassAtom::Char(0x0D)),
            't' => Ok(ClassAtom::Char(0x09)),
            'v' => Ok(ClassAtom::Char(0x0B)),
            'c' => match self.peek() {
                Some(l) if l.is_ascii_alphabetic() => {
                    self.pos += 1;
                    Ok(ClassAtom::Char(u32::from(l) % 32))
                }
                _ => err(at, "a control escape \\c not followed by an ASCII letter"),
            },
            '0' => {
                if self.peek().is_some_and(|d| d.is_ascii_digit()) {
                    err(at, "an escape \\0 followed by a digit (octal escapes are not in Unicode mode)")
                } else {
                    Ok(ClassAtom::Char(0))
                }
            }
            '1'..='9' => err(at, "a decimal escape \\N in a class"),
            'x' => {
                let v = self
                    .hex_exact(2)
                    .ok_or_else(|| ParseError { at, what: "an escape \\x not followed by two hex digits".into() })?;
                Ok(ClassAtom::Char(v))
            }
            'u' => self.unicode_escape(at).map(ClassAtom::Char),
            c if is_syntax_char(c) || c == '/' => Ok(ClassAtom::Char(u32::from(c))),
            // An escaped ASCII punctuation character means itself in every
            // mode that allows the escape (Annex B's identity escape):
            // zod-to-json-schema writes `\_` and `\@`, people write `\,` and `\-`.
            c if c.is_ascii_punctuation() => Ok(ClassAtom::Char(u32::from(c))),
            c => err(
                at,
                format!(
                    "an escape \\{c}, which Unicode mode does not have (only syntax characters and / may be escaped)"
                ),
            ),
        }
    }

    /// Exactly `n` hex digits, or `None` (the cursor then stays).
    fn hex_exact(&mut self, n: usize) -> Option<u32> {
        let mut v = 0u32;
        for i in 0..n {
            v = v * 16 + self.peek_at(i)?.to_digit(16)?;
        }
        self.pos += n;
        Some(v)
    }

    /// After `\u`: `{H...}` or `HHHH`, a lead surrogate `HHHH` followed by
    /// `\uHHHH` of a trail surrogate being one code point.
    fn unicode_escape(&mut self, at: usize) -> Result<u32, ParseError> {
        if self.eat('{') {
            let mut v = 0u32;
            let mut any = false;
            while let Some(d) = self.peek().and_then(|c| c.to_digit(16)) {
                self.pos += 1;
                any = true;
                v = v * 16 + d;
                if v > 0x10FFFF {
                    return err(at, "an escape \\u{...} above 10FFFF");
                }
            }
            if !any || !self.eat('}') {
                return err(at, "an escape \\u{ not of the form \\u{hex digits}");
            }
            return Ok(v);
        }
        let Some(lead) = self.hex_exact(4) else {
            return err(at, "an escape \\u not followed by four hex digits or {hex digits}");
        };
        if (0xD800..=0xDBFF).contains(&lead) && self.peek() == Some('\\') && self.peek_at(1) == Some('u') {
            let back = self.pos;
            self.pos += 2;
            match self.hex_exact(4) {
                Some(trail) if (0xDC00..=0xDFFF).contains(&trail) => {
                    return Ok(0x10000 + ((lead - 0xD800) << 10) + (trail - 0xDC00));
                }
                _ => self.pos = back,
            }
        }
        Ok(lead)
    }

    /// After `\p` or `\P`: `{name}` or `{name=value}`, looked up strictly.
    fn property(&mut self, at: usize) -> Result<&'static str, ParseError> {
        if !self.eat('{') {
            return err(at, "a property escape \\p without {name}");
        }
        let mut text = String::new();
        loop {
            match self.bump() {
                None => return err(at, "a property escape \\p{ that is never closed"),
                Some('}') => break,
                Some(c) => text.push(c),
            }
        }
        props::lookup(&text).map_err(|why| ParseError {
            at,
            what: match why {
                props::Refusal::Unknown => {
                    format!("a property \\p{{{text}}} that ECMA-262 does not define or vouch cannot map exactly")
                }
                props::Refusal::VersionDependent => format!(
                    "a property \\p{{{text}}} whose set differs between Unicode 16.0 (vouch's tables) and newer versions"
                ),
            },
        })
    }

    /// After `[` (at `at`): a class up to its `]`.
    fn class(&mut self, at: usize) -> Result<Node, ParseError> {
        let negated = self.eat('^');
        let mut items = Vec::new();
        loop {
            let here = self.pos;
            match self.peek() {
                None => return err(at, "a class [ that is never closed"),
                Some(']') => {
                    self.pos += 1;
                    break;
                }
                Some(_) => {}
            }
            let first = self.class_atom(at)?;
            if self.peek() == Some('-') && self.peek_at(1).is_some_and(|c| c != ']') {
                self.pos += 1;
                let second = self.class_atom(at)?;
                match (first, second) {
                    (ClassAtom::Char(a), ClassAtom::Char(b)) => {
                        if a > b {
                            return err(here, "a class range out of order");
                        }
                        items.push(ClassItem::Range(a, b));
                    }
                    _ => return err(here, "a class range with a class escape as an end"),
                }
            } else {
                items.push(match first {
                    ClassAtom::Char(a) => ClassItem::Range(a, a),
                    ClassAtom::Set(item) => item,
                });
            }
        }
        Ok(Node::Class(Class { negated, items }))
    }

    /// One class atom (the cursor is on it and it is not the closing `]`).
    fn class_atom(&mut self, at: usize) -> Result<ClassAtom, ParseError> {
        match self.bump() {
            None => err(at, "a class [ that is never closed"),
            Some('\\') => {
                let escape_at = self.pos - 1;
                self.class_escape(escape_at, true)
            }
            Some(c) => Ok(ClassAtom::Char(u32::from(c))),
        }
    }
}
