//! `vouch batch`: a whole file of replies, one verdict per line, in order,
//! on every core, in constant memory.
//!
//! The input is cut into chunks bounded in lines and bytes. Reading the
//! next chunk, checking this one (in groups of lines, on every worker;
//! rayon keeps the order) and writing the last one's output are tasks of
//! one pool, so `--threads N` is N threads doing all the work, and at most
//! two chunks (and their output) are alive at once, whatever the file's
//! size.
//!
//! A line is bounded before it is parsed: one longer than
//! [`line_limit`] (twice the contract's `max_bytes`, plus 1 KiB: room for
//! the JSON-string quoting of a reply at the limit and the fields beside
//! it) is an input error with its line number, read to its newline and
//! discarded without being kept, and the run goes on. Each line is read
//! with the core's strict reader (`vouch::read_json`), as a reply is: a
//! repeated key anywhere in a line is an input error, never resolved. The
//! common line (the reply, and scalar fields beside it) is read without a
//! tree first, and taken only where that reading gives the same output
//! (see [`plain_line`]).
//!
//! The workers write each output line straight from the vouched text
//! ([`vouch::Verdict::write_json`]), a group of lines into one buffer; the
//! buffers of input chunks and of output groups are handed back and used
//! again, so a run of any length touches the same few megabytes.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, IsTerminal, Read, Write};
use std::path::PathBuf;
use std::time::Instant;

use rayon::prelude::*;
use serde_json::{json, Map, Value};
use vouch::{Brief, Contract, Refusals, Verdict};

use crate::load::{self, EXIT_USAGE};
use line::{plain_line, Plain, PlainFieldList};

mod line;

/// Lines per chunk, and bytes per chunk: whichever comes first.
const CHUNK_LINES: usize = 16384;
const CHUNK_BYTES: usize = 4 << 20;
/// A group of lines a worker checks and writes into one buffer: this many
/// bytes of input, or this many lines, whichever comes first (small enough
/// that a chunk of long lines still makes groups for every worker).
const GROUP_BYTES: usize = 48 << 10;
const GROUP_LINES: usize = 128;

/// Exit code when some input lines were not valid JSON Lines input.
const EXIT_BROKEN: u8 = 4;

#[derive(clap::Args)]
pub struct Args {
    /// The contract file.
    #[arg(long, short = 'c', value_name = "FILE")]
    contract: PathBuf,
    /// JSON Lines input: each line a JSON string (the raw reply) or an object whose
    /// --field holds it; `-` or nothing reads standard input.
    #[arg(value_name = "FILE")]
    input: Option<PathBuf>,
    /// The field of an input object that holds the raw reply; the other fields are
    /// carried into the output.
    #[arg(long, default_value = "raw")]
    field: String,
    /// Write the verdicts here instead of standard output.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Print only the summary, on standard output.
    #[arg(long)]
    summary_only: bool,
    /// The summary as JSON.
    #[arg(long)]
    json: bool,
    /// No progress bar.
    #[arg(long, short = 'q')]
    quiet: bool,
    /// Worker threads (default: all cores).
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
}

/// A chunk of input lines, their bytes in one buffer.
struct Chunk {
    data: Vec<u8>,
    lines: Vec<Line>,
}

/// One input line: its number and where its bytes are in the chunk.
struct Line {
    number: usize,
    /// The line as read, in [`Chunk::data`] (UTF-8 is checked on the
    /// workers, not the reader); empty for a line over the limit.
    raw: std::ops::Range<usize>,
    bytes: usize,
    /// The line was longer than the limit (this many bytes, without its
    /// newline): discarded unread.
    over: Option<usize>,
}

/// Longest input line read, without its newline: `2 × max_bytes + 1024`.
/// A reply of `max_bytes` quoted as a JSON string takes up to twice its
/// size where it holds quotes, backslashes or newlines (more only for
/// `\u` escapes of control characters), and the other fields of the line
/// get 1 KiB. The raw reply inside is held to `max_bytes` by the check.
fn line_limit(max_bytes: usize) -> usize {
    max_bytes.saturating_mul(2).saturating_add(1024)
}

/// Read one line onto the end of `buf` (its newline and a `\r` before it
/// dropped), keeping at most `limit` bytes of it: `None` at the end of the
/// input, else the bytes read (newline included) and, for a line over the
/// limit, its length without the newline — then nothing of it is kept in
/// `buf`, and the rest of the line was read and discarded a buffer at a
/// time.
fn read_line(reader: &mut impl BufRead, buf: &mut Vec<u8>, limit: usize) -> io::Result<Option<(usize, Option<usize>)>> {
    let (mut read, mut over, mut ended) = (0usize, false, false);
    let start = buf.len();
    loop {
        let available = match reader.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            break;
        }
        let (used, done) = match memchr::memchr(b'\n', available) {
            Some(i) => (i + 1, true),
            None => (available.len(), false),
        };
        if !over {
            let content = available.get(..used).unwrap_or_default();
            let content = content.strip_suffix(b"\n").unwrap_or(content);
            if buf.len() - start + content.len() > limit.saturating_add(1) {
                // Over the limit (a `\r` before the newline aside): drop
                // what was kept, count the rest as it goes by.
                over = true;
                buf.truncate(start);
            } else {
                buf.extend_from_slice(content);
            }
        }
        reader.consume(used);
        read += used;
        if done {
            ended = true;
            break;
        }
    }
    if read == 0 {
        return Ok(None);
    }
    if !over && buf.len() > start && buf.last() == Some(&b'\r') {
        buf.pop();
    }
    if buf.len() - start > limit {
        over = true;
        buf.truncate(start);
    }
    Ok(Some((read, over.then(|| read - usize::from(ended)))))
}

/// What one line came to.
enum Outcome<'a> {
    Verdict { carried: Carried<'a>, verdict: Checked<'a> },
    Broken(String),
}

/// A reply's verdict, held as little as its output line needs.
enum Checked<'a> {
    /// Accepted as sent, with no repair and no finding: its verdict is
    /// written from the reply itself ([`Brief::write_json`]), none built.
    PassedAsSent(Cow<'a, str>),
    Verdict(Verdict),
}

/// Check one reply as `vouch check` does (every refusal reported).
fn check<'a>(contract: &Contract, reply: Cow<'a, str>) -> Checked<'a> {
    match contract.check_str_briefly(&reply, Refusals::Reported) {
        Brief::PassedAsSent => Checked::PassedAsSent(reply),
        Brief::Verdict(verdict) => Checked::Verdict(verdict),
        // Not said where refusals are reported; were it, the whole verdict.
        Brief::Refused => Checked::Verdict(contract.check_str(&reply)),
    }
}

/// The fields of an input line carried into its output line, in order.
enum Carried<'a> {
    /// Read by the core's reader (a line with a nested or fractional field).
    Read(Map<String, Value>),
    /// Strings, integers, booleans and nulls, borrowed from the line where unescaped.
    Plain(PlainFieldList<'a>),
}

#[derive(Default)]
struct Summary {
    lines: usize,
    accepted: usize,
    repaired: usize,
    with_findings: usize,
    refused: usize,
    broken: usize,
    by_code: BTreeMap<&'static str, usize>,
    bytes: u64,
}

/// What the summary needs of one line, computed on the worker.
enum Tally {
    Broken,
    Accepted { repaired: bool, findings: bool },
    Refused { codes: Vec<&'static str> },
}

impl Tally {
    fn of(outcome: &Outcome<'_>) -> Tally {
        match outcome {
            Outcome::Broken(_) => Tally::Broken,
            Outcome::Verdict { verdict: Checked::PassedAsSent(_), .. } => {
                Tally::Accepted { repaired: false, findings: false }
            }
            Outcome::Verdict { verdict: Checked::Verdict(Verdict::Accepted(a)), .. } => {
                Tally::Accepted { repaired: !a.repairs.is_empty(), findings: !a.findings.is_empty() }
            }
            Outcome::Verdict { verdict: Checked::Verdict(Verdict::Refused(r)), .. } => {
                let mut codes: Vec<&'static str> = r.problems.iter().map(|p| p.code.as_str()).collect();
                codes.sort_unstable();
                codes.dedup();
                Tally::Refused { codes }
            }
        }
    }
}

impl Summary {
    fn merge(&mut self, other: Summary) {
        self.lines += other.lines;
        self.accepted += other.accepted;
        self.repaired += other.repaired;
        self.with_findings += other.with_findings;
        self.refused += other.refused;
        self.broken += other.broken;
        self.bytes += other.bytes;
        for (code, n) in other.by_code {
            *self.by_code.entry(code).or_default() += n;
        }
    }

    fn add(&mut self, tally: Tally, bytes: usize) {
        self.lines += 1;
        self.bytes += bytes as u64;
        match tally {
            Tally::Broken => self.broken += 1,
            Tally::Accepted { repaired, findings } => {
                self.accepted += 1;
                self.repaired += usize::from(repaired);
                self.with_findings += usize::from(findings);
            }
            Tally::Refused { codes } => {
                self.refused += 1;
                for code in codes {
                    *self.by_code.entry(code).or_default() += 1;
                }
            }
        }
    }

    fn to_json(&self, seconds: f64) -> Value {
        json!({
            "lines": self.lines,
            "accepted": self.accepted,
            "repaired": self.repaired,
            "with_findings": self.with_findings,
            "refused": self.refused,
            "input_errors": self.broken,
            "refusals_by_code": self.by_code,
            "seconds": seconds,
            "lines_per_second": rate(self.lines as f64, seconds),
            "mb_per_second": rate(self.bytes as f64 / 1e6, seconds),
        })
    }

    fn human(&self, seconds: f64) -> String {
        let mut out = format!(
            "{} lines: {} accepted ({} repaired, {} with findings), {} refused, {} input errors\n",
            self.lines, self.accepted, self.repaired, self.with_findings, self.refused, self.broken
        );
        for (code, n) in &self.by_code {
            out.push_str(&format!("  refused {code:<20} {n}\n"));
        }
        out.push_str(&format!(
            "{:.2} s, {:.0} lines/s, {:.1} MB/s\n",
            seconds,
            rate(self.lines as f64, seconds),
            rate(self.bytes as f64 / 1e6, seconds)
        ));
        out
    }

    fn exit_code(&self) -> u8 {
        if self.broken > 0 {
            EXIT_BROKEN
        } else if self.refused > 0 {
            1
        } else if self.with_findings > 0 {
            3
        } else {
            0
        }
    }
}

fn rate(amount: f64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        amount / seconds
    } else {
        0.0
    }
}

/// Deepest nesting read in an input line (the carried fields).
const LINE_DEPTH: usize = vouch::Limits::MAX_DEPTH_CAP;

/// Read one input line into a raw reply and the fields to carry. Its
/// input errors are worded as `vouch check` words the same problem in a
/// reply (the core's reader's sentences, the size limit's).
fn judge<'a>(contract: &Contract, field: &str, line: &Line, raw: &'a [u8]) -> Outcome<'a> {
    if let Some(len) = line.over {
        let limit = line_limit(contract.limits().max_bytes);
        return Outcome::Broken(format!(
            "line {}: (root): the line is {len} bytes, over the limit of {limit} (twice the contract's max_bytes, plus 1024)",
            line.number
        ));
    }
    let text = match std::str::from_utf8(raw) {
        Ok(text) => text,
        Err(e) => {
            let valid = raw.get(..e.valid_up_to()).and_then(|b| std::str::from_utf8(b).ok()).unwrap_or("");
            let column = valid.chars().count() + 1;
            return Outcome::Broken(format!(
                "line {}: (root): not JSON: invalid UTF-8 at line 1, column {column}",
                line.number
            ));
        }
    };
    if let Some((carried, reply)) = plain_line(text, field) {
        return Outcome::Verdict { carried: Carried::Plain(carried), verdict: check(contract, reply) };
    }
    read_line_json(contract, field, line.number, text)
}

/// A line read by the core's reader, as `vouch check` reads a reply: what
/// every line not taken by [`plain_line`] gets, and the sentence of every
/// input error.
fn read_line_json<'a>(contract: &Contract, field: &str, number: usize, text: &str) -> Outcome<'a> {
    let parsed: Value = match vouch::read_json(text, LINE_DEPTH) {
        Ok(v) => v,
        Err(e) => return Outcome::Broken(format!("line {number}: {}", e.message)),
    };
    let carried = |fields| Carried::Read(fields);
    match parsed {
        Value::String(raw) => Outcome::Verdict { carried: carried(Map::new()), verdict: check(contract, raw.into()) },
        Value::Object(mut fields) => match fields.shift_remove(field) {
            Some(Value::String(raw)) => {
                Outcome::Verdict { carried: carried(fields), verdict: check(contract, raw.into()) }
            }
            // A reply of null: the model did not answer (refused `empty_reply`, as a null
            // reply is in Spark's and Dask's verdict columns), with the line's id carried.
            Some(Value::Null) => Outcome::Verdict { carried: carried(fields), verdict: check(contract, "".into()) },
            Some(_) => Outcome::Broken(format!("line {number}: the field {field:?} is not a string")),
            None => Outcome::Broken(format!("line {number}: no field {field:?}")),
        },
        _ => Outcome::Broken(format!("line {number}: neither a JSON string nor an object")),
    }
}

/// Append one output line (and its newline) to `out`: the carried fields,
/// `line` and `verdict` (each in the place of a carried field of that name,
/// else after them), the verdict written from the vouched text
/// ([`Verdict::write_json`]): no tree built, nothing cloned.
fn write_output_line(number: usize, outcome: &Outcome<'_>, out: &mut Vec<u8>) {
    match outcome {
        Outcome::Verdict { carried, verdict } => {
            out.push(b'{');
            // A carried field named `line` or `verdict` is written as that, in its place.
            let entry = |out: &mut Vec<u8>, key: &str, write: &mut dyn FnMut(&mut Vec<u8>)| {
                if out.last() != Some(&b'{') {
                    out.push(b',');
                }
                write_str(out, key);
                out.push(b':');
                match key {
                    "line" => out.extend_from_slice(itoa::Buffer::new().format(number).as_bytes()),
                    "verdict" => match verdict {
                        Checked::PassedAsSent(reply) => {
                            Brief::PassedAsSent.write_json(reply, out);
                        }
                        Checked::Verdict(verdict) => verdict.write_json(out),
                    },
                    _ => write(out),
                }
            };
            let has = |name: &str| match carried {
                Carried::Read(fields) => fields.contains_key(name),
                Carried::Plain(fields) => fields.iter().any(|(k, _)| k == name),
            };
            let (line, verdict_carried) = (has("line"), has("verdict"));
            match carried {
                Carried::Read(fields) => {
                    for (k, v) in fields {
                        entry(out, k, &mut |out| out.extend_from_slice(vouch::to_json_string(v).as_bytes()));
                    }
                }
                Carried::Plain(fields) => {
                    for (k, v) in fields {
                        entry(out, k, &mut |out| write_plain(out, v));
                    }
                }
            }
            if !line {
                entry(out, "line", &mut |_| {});
            }
            if !verdict_carried {
                entry(out, "verdict", &mut |_| {});
            }
            out.push(b'}');
        }
        Outcome::Broken(why) => {
            out.extend_from_slice(vouch::to_json_string(&json!({"line": number, "input_error": why})).as_bytes());
        }
    }
    out.push(b'\n');
}

/// A string as JSON (serde_json's escaping, which vouch's writer shares).
fn write_str(out: &mut Vec<u8>, s: &str) {
    if s.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
        // Nothing to escape (most keys and carried values): as serde_json writes it.
        out.push(b'"');
        out.extend_from_slice(s.as_bytes());
        out.push(b'"');
        return;
    }
    // Writing into a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *out, s);
}

fn write_plain(out: &mut Vec<u8>, value: &Plain<'_>) {
    match value {
        Plain::Str(s) => write_str(out, s),
        Plain::Unsigned(n) => out.extend_from_slice(itoa::Buffer::new().format(*n).as_bytes()),
        Plain::Signed(n) => out.extend_from_slice(itoa::Buffer::new().format(*n).as_bytes()),
        Plain::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Plain::Null => out.extend_from_slice(b"null"),
    }
}

/// Read the next chunk of lines into `chunk` (emptied first): `None` at
/// the end of the input. `number` is the number of the last line read.
fn read_chunk(
    reader: &mut impl BufRead,
    number: &mut usize,
    limit: usize,
    mut chunk: Chunk,
) -> io::Result<Option<Chunk>> {
    chunk.data.clear();
    chunk.lines.clear();
    while chunk.lines.len() < CHUNK_LINES && chunk.data.len() < CHUNK_BYTES {
        let from = chunk.data.len();
        let Some((n, over)) = read_line(reader, &mut chunk.data, limit)? else { break };
        *number += 1;
        // A line over the limit is not kept: it does not fill the chunk.
        // Invalid UTF-8 on a line is that line's input error, not the end.
        chunk.lines.push(Line { number: *number, raw: from..chunk.data.len(), bytes: n, over });
    }
    Ok((!chunk.lines.is_empty()).then_some(chunk))
}

impl Chunk {
    fn new() -> Self {
        Self { data: Vec::with_capacity(CHUNK_BYTES + (1 << 16)), lines: Vec::with_capacity(CHUNK_LINES) }
    }
}

/// Write a chunk's output buffers in order, emptied for use again.
fn write_texts(out: &mut dyn Write, texts: &mut [Vec<u8>]) -> io::Result<()> {
    for text in texts {
        out.write_all(text)?;
        text.clear();
    }
    Ok(())
}

/// The lines of a chunk cut into groups (see [`GROUP_BYTES`]).
fn groups(lines: &[Line]) -> Vec<&[Line]> {
    let mut groups = Vec::new();
    let (mut from, mut bytes) = (0, 0);
    for (i, line) in lines.iter().enumerate() {
        bytes += line.raw.len();
        if bytes >= GROUP_BYTES || i + 1 - from >= GROUP_LINES {
            groups.extend(lines.get(from..=i));
            (from, bytes) = (i + 1, 0);
        }
    }
    groups.extend(lines.get(from..).filter(|rest| !rest.is_empty()));
    groups
}

/// Check a chunk's lines on the pool, a group of lines into one summary
/// and one output buffer (one of `spare`'s, when there is one).
fn check_chunk(contract: &Contract, args: &Args, chunk: &Chunk, spare: &mut Vec<Vec<u8>>) -> Vec<(Summary, Vec<u8>)> {
    let groups = groups(&chunk.lines);
    let buffers: Vec<Vec<u8>> = groups.iter().map(|_| spare.pop().unwrap_or_default()).collect();
    groups
        .into_par_iter()
        .zip(buffers)
        .map(|(group, mut text)| {
            let mut summary = Summary::default();
            for line in group {
                let raw = chunk.data.get(line.raw.clone()).unwrap_or_default();
                let outcome = judge(contract, &args.field, line, raw);
                summary.add(Tally::of(&outcome), line.bytes);
                if !args.summary_only {
                    write_output_line(line.number, &outcome, &mut text);
                }
            }
            (summary, text)
        })
        .collect()
}

fn progress(args: &Args, total: Option<u64>) -> Option<indicatif::ProgressBar> {
    if args.quiet || !io::stderr().is_terminal() {
        return None;
    }
    let bar = match total {
        Some(t) => indicatif::ProgressBar::new(t).with_style(
            indicatif::ProgressStyle::with_template(
                "{bar:40} {bytes}/{total_bytes} {binary_bytes_per_sec} eta {eta} {msg}",
            )
            .ok()?,
        ),
        None => indicatif::ProgressBar::new_spinner().with_style(
            indicatif::ProgressStyle::with_template("{spinner} {bytes} {binary_bytes_per_sec} {msg}").ok()?,
        ),
    };
    Some(bar)
}

pub fn run(args: &Args) -> u8 {
    let contract = match load::contract_or_exit(&args.contract) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let (input, total): (Box<dyn Read + Send>, Option<u64>) = match args.input.as_deref() {
        None => (Box::new(io::stdin()), None),
        Some(p) if p.as_os_str() == "-" => (Box::new(io::stdin()), None),
        Some(p) => match File::open(p) {
            Ok(f) => {
                let len = f.metadata().ok().map(|m| m.len());
                (Box::new(f), len)
            }
            Err(e) => {
                eprintln!("vouch: {}: cannot read the input: {e}", p.display());
                return EXIT_USAGE;
            }
        },
    };
    let out: Box<dyn Write + Send> = match (&args.out, args.summary_only) {
        (_, true) => Box::new(io::sink()),
        (Some(p), false) => match File::create(p) {
            Ok(f) => Box::new(BufWriter::with_capacity(1 << 20, f)),
            Err(e) => {
                eprintln!("vouch: {}: cannot write the output: {e}", p.display());
                return EXIT_USAGE;
            }
        },
        (None, false) => Box::new(BufWriter::with_capacity(1 << 20, crate::output::Stdout)),
    };
    let mut out = out;
    let pool = match rayon::ThreadPoolBuilder::new().num_threads(args.threads.unwrap_or(0)).build() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("vouch: cannot start worker threads: {e}");
            return EXIT_USAGE;
        }
    };
    let bar = progress(args, total);
    let started = Instant::now();
    let mut summary = Summary::default();
    let limit = line_limit(contract.limits().max_bytes);
    let mut reader = BufReader::with_capacity(1 << 20, input);
    let mut number = 0;
    // Reading the next chunk, checking this one and writing the last one's
    // output are tasks on the same pool: `--threads N` is N threads doing
    // all the work, and only the writing waits for the order.
    let mut spare_chunk = Chunk::new();
    let mut spare_texts: Vec<Vec<u8>> = Vec::new();
    let mut texts: Vec<Vec<u8>> = Vec::new();
    let mut next = read_chunk(&mut reader, &mut number, limit, Chunk::new());
    loop {
        let chunk = match next {
            Ok(Some(c)) => c,
            Ok(None) => break,
            Err(e) => {
                eprintln!("vouch: cannot read the input: {e}");
                // What was checked before is still written.
                let _ = write_texts(&mut *out, &mut texts).and_then(|()| out.flush());
                return EXIT_USAGE;
            }
        };
        let (read, (results, wrote)) = pool.install(|| {
            rayon::join(
                || {
                    read_chunk(
                        &mut reader,
                        &mut number,
                        limit,
                        std::mem::replace(&mut spare_chunk, Chunk { data: Vec::new(), lines: Vec::new() }),
                    )
                },
                || {
                    rayon::join(
                        || check_chunk(&contract, args, &chunk, &mut spare_texts),
                        || write_texts(&mut *out, &mut texts),
                    )
                },
            )
        });
        if wrote.is_err() {
            eprintln!("vouch: writing the output failed");
            return EXIT_USAGE;
        }
        next = read;
        spare_chunk = chunk;
        spare_texts.append(&mut texts);
        for (group, text) in results {
            if let Some(b) = &bar {
                b.inc(group.bytes);
            }
            summary.merge(group);
            texts.push(text);
        }
        if let Some(b) = &bar {
            b.set_message(format!("{} lines, {} refused", summary.lines, summary.refused));
        }
    }
    if write_texts(&mut *out, &mut texts).and_then(|()| out.flush()).is_err() {
        eprintln!("vouch: writing the output failed");
        return EXIT_USAGE;
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let seconds = started.elapsed().as_secs_f64();
    let text = if args.json { format!("{}\n", summary.to_json(seconds)) } else { summary.human(seconds) };
    if args.summary_only {
        out!("{text}");
    } else {
        eprint!("{text}");
    }
    summary.exit_code()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]
    use super::*;

    /// The output line of `text`, read by `plain_line` (when it takes it)
    /// and by the core's reader.
    fn both_ways(contract: &Contract, text: &str) -> (Option<Vec<u8>>, Vec<u8>) {
        let fast = plain_line(text, "raw").map(|(carried, reply)| {
            let outcome = Outcome::Verdict { carried: Carried::Plain(carried), verdict: check(contract, reply) };
            let mut out = Vec::new();
            write_output_line(7, &outcome, &mut out);
            out
        });
        let mut read = Vec::new();
        write_output_line(7, &read_line_json(contract, "raw", 7, text), &mut read);
        (fast, read)
    }

    /// Lines made of every JSONTestSuite parsing case (one-line ones) in
    /// the places a batch line holds values, and lines made by hand around
    /// what the two readers could take differently: `plain_line` takes a
    /// line only where the core's reader reads it to the very same output.
    #[test]
    fn plain_lines_read_as_the_core_reads_them() {
        let contract = Contract::from_json_str(r#"{"type": "object"}"#).unwrap();
        let mut lines: Vec<String> = [
            r#""{}""#,
            r#"  "{\"a\": 1}"  "#,
            r#"{"raw": "{}", "id": 1, "n": -3, "ok": true, "no": null, "s": "a\u00e9\n"}"#,
            r#"{"raw": "{}", "raw": "{}"}"#,
            r#"{"raw": "{}", "id": 1, "id": 2}"#,
            r#"{"r\u0061w": "{}", "id": "x"}"#,
            r#"{"raw": "{}", "id": -0}"#,
            r#"{"raw": "{}", "id": 1.0}"#,
            r#"{"raw": "{}", "id": 1e2}"#,
            r#"{"raw": "{}", "id": 18446744073709551615}"#,
            r#"{"raw": "{}", "id": 18446744073709551616}"#,
            r#"{"raw": "{}", "id": -9223372036854775808}"#,
            r#"{"raw": "{}", "id": -9223372036854775809}"#,
            r#"{"raw": "{}", "id": "\ud800"}"#,
            r#"{"raw": "{}", "id": "\ud83d\ude00"}"#,
            r#"{"raw": "\ud800"}"#,
            "\u{feff}{\"raw\": \"{}\"}",
            r#"{"raw": "{}", "line": "old", "verdict": 3}"#,
            r#"{"raw": 1}"#,
            r#"{"id": 1}"#,
            r#"{"raw": "{}", "nested": {"a": 1, "a": 2}}"#,
            r#"{"raw": "{}",}"#,
            r#"["{}"]"#,
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
        let many: String = (0..40).map(|i| format!("\"k{i}\": {i}, ")).collect();
        lines.push(format!("{{{many}\"raw\": \"{{}}\"}}"));
        let suite = std::env::var_os("VOUCH_SHARED")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|| std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared"))
            .join("suites/json-test-suite/test_parsing");
        match std::fs::read_dir(&suite) {
            Ok(entries) => {
                for entry in entries {
                    let Ok(text) = String::from_utf8(std::fs::read(entry.unwrap().path()).unwrap()) else { continue };
                    if text.contains(['\n', '\r']) {
                        continue;
                    }
                    lines.push(text.clone());
                    // Most cases are one value in an array: that value too, in a line's places.
                    let inner = text.trim().strip_prefix('[').and_then(|t| t.strip_suffix(']')).unwrap_or("");
                    if !inner.trim().is_empty() {
                        lines.push(format!(r#"{{"raw": "{{}}", "k": {inner}}}"#));
                        lines.push(format!(r#"{{"raw": {inner}, "k": 0}}"#));
                        lines.push(format!(r#"{{{inner}: true, "raw": "{{}}"}}"#));
                    }
                    lines.push(format!(r#"{{"raw": "{{}}", "k": {text}}}"#));
                    lines.push(format!(r#"{{"k": {text}, "raw": "{{\"a\": 1}}"}}"#));
                    lines.push(format!(r#"{{"raw": {text}}}"#));
                    lines.push(format!(r#"{{{text}: 1, "raw": "{{}}"}}"#));
                }
            }
            Err(e) => {
                let msg = format!("SHARED DATA MISSING: {} ({e})", suite.display());
                assert!(std::env::var("CI").map_or(true, |v| v != "true"), "{msg}");
                eprintln!("\n!!!!! {msg}: SKIPPING THE SUITE'S LINES !!!!!\n");
            }
        }
        let mut taken = 0;
        for text in &lines {
            let (fast, read) = both_ways(&contract, text);
            if let Some(fast) = fast {
                taken += 1;
                assert_eq!(String::from_utf8_lossy(&fast), String::from_utf8_lossy(&read), "{text}");
            }
        }
        // Written past the test harness's capture, as the suites' figures are.
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stderr(),
            "batch lines: {} lines, {taken} read without a tree, each as the core's reader reads it",
            lines.len()
        );
        assert!(taken >= 10, "{taken}");
    }

    /// Replies of every kind of character, written into lines with every
    /// kind of escape (and some broken ones): `plain_line` reads each line
    /// it takes as the core's reader does, and takes every well-formed one.
    #[test]
    fn escaped_replies_read_as_the_core_reads_them() {
        let contract = Contract::from_json_str(r#"{"type": "object"}"#).unwrap();
        let palette = [
            'a', ' ', '"', '\\', '/', '\n', '\r', '\t', '\u{8}', '\u{c}', '\u{1}', '\u{1f}', '\u{7f}', 'é', '€',
            '\u{2028}', '😀', '{', '}', ':', ',',
        ];
        // A small linear congruential generator: the same lines on every run.
        let mut seed: u64 = 0x5eed;
        let mut next = |n: usize| {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            (seed >> 33) as usize % n
        };
        let (mut lines, mut well_formed) = (0, 0);
        for _ in 0..3000 {
            let len = next(24);
            let content: String = (0..len).map(|_| palette[next(palette.len())]).collect();
            // serde_json's escapes, then some characters as `\u` escapes (astral ones as a
            // surrogate pair), then now and then a broken escape or a lone surrogate.
            let mut quoted = String::from("\"");
            for c in content.chars() {
                match next(4) {
                    0 => {
                        let mut units = [0u16; 2];
                        for unit in c.encode_utf16(&mut units) {
                            quoted.push_str(&format!("\\u{unit:04x}"));
                        }
                    }
                    _ => {
                        let written = serde_json::to_string(&c.to_string()).unwrap();
                        quoted.push_str(&written[1..written.len() - 1]);
                    }
                }
            }
            let broken = match next(10) {
                0 => Some(["\\ud800", "\\udc00x", "\\x", "\\u12", "\u{1}", "\\"][next(6)]),
                _ => None,
            };
            if let Some(b) = broken {
                quoted.push_str(b);
            }
            quoted.push('"');
            for text in [format!(r#"{{"id": {len}, "raw": {quoted}, "note": {quoted}}}"#), quoted.clone()] {
                lines += 1;
                let (fast, read) = both_ways(&contract, &text);
                match fast {
                    Some(fast) => {
                        well_formed += 1;
                        assert!(broken.is_none(), "taken with a broken escape: {text}");
                        assert_eq!(String::from_utf8_lossy(&fast), String::from_utf8_lossy(&read), "{text}");
                    }
                    None => assert!(broken.is_some(), "a well-formed line not taken: {text:?}"),
                }
            }
        }
        assert!(well_formed > lines / 2, "{well_formed} of {lines}");
    }
}
