//! `vouch batch`: a whole file of replies, one verdict per line, in order,
//! on every core, in constant memory.
//!
//! A reader thread cuts the input into chunks bounded in lines and bytes and
//! hands them over a bounded channel; the main thread checks each chunk in
//! parallel (rayon keeps the order) and writes it out. At most a few chunks
//! are alive at once, whatever the file's size.
//!
//! A line is bounded before it is parsed: one longer than
//! [`line_limit`] (twice the contract's `max_bytes`, plus 1 KiB: room for
//! the JSON-string quoting of a reply at the limit and the fields beside
//! it) is an input error with its line number, read to its newline and
//! discarded without being kept, and the run goes on. Each line is read
//! with the core's strict reader (`vouch::read_json`), as a reply is: a
//! repeated key anywhere in a line is an input error, never resolved.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, IsTerminal, Read, Write};
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Instant;

use rayon::prelude::*;
use serde_json::{json, Map, Value};
use vouch::{Contract, Verdict};

use crate::load::{self, EXIT_USAGE};

/// Lines per chunk, and bytes per chunk: whichever comes first.
const CHUNK_LINES: usize = 2048;
const CHUNK_BYTES: usize = 4 << 20;
/// Chunks read ahead of the one being checked.
const READ_AHEAD: usize = 2;

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

/// One input line: its number and bytes.
struct Line {
    number: usize,
    /// The line as read (UTF-8 is checked on the workers, not the reader);
    /// empty for a line over the limit.
    raw: Vec<u8>,
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

/// Read one line into `buf` (its newline and a `\r` before it dropped),
/// keeping at most `limit` bytes of it: `None` at the end of the input,
/// else the bytes read (newline included) and, for a line over the limit,
/// its length without the newline — then `buf` is empty, and the rest of
/// the line was read and discarded a buffer at a time, never kept.
fn read_line(reader: &mut impl BufRead, buf: &mut Vec<u8>, limit: usize) -> io::Result<Option<(usize, Option<usize>)>> {
    let (mut read, mut over, mut ended) = (0usize, false, false);
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
            if buf.len() + content.len() > limit.saturating_add(1) {
                // Over the limit (a `\r` before the newline aside): drop
                // what was kept, count the rest as it goes by.
                over = true;
                *buf = Vec::new();
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
    if buf.last() == Some(&b'\r') {
        buf.pop();
    }
    if buf.len() > limit {
        over = true;
        *buf = Vec::new();
    }
    Ok(Some((read, over.then(|| read - usize::from(ended)))))
}

/// What one line came to.
enum Outcome {
    Verdict { carried: Map<String, Value>, verdict: Verdict },
    Broken(String),
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
    fn of(outcome: &Outcome) -> Tally {
        match outcome {
            Outcome::Broken(_) => Tally::Broken,
            Outcome::Verdict { verdict: Verdict::Accepted(a), .. } => {
                Tally::Accepted { repaired: !a.repairs.is_empty(), findings: !a.findings.is_empty() }
            }
            Outcome::Verdict { verdict: Verdict::Refused(r), .. } => {
                let mut codes: Vec<&'static str> = r.problems.iter().map(|p| p.code.as_str()).collect();
                codes.sort_unstable();
                codes.dedup();
                Tally::Refused { codes }
            }
        }
    }
}

impl Summary {
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
fn judge(contract: &Contract, field: &str, line: &Line) -> Outcome {
    if let Some(len) = line.over {
        let limit = line_limit(contract.limits().max_bytes);
        return Outcome::Broken(format!(
            "line {}: (root): the line is {len} bytes, over the limit of {limit} (twice the contract's max_bytes, plus 1024)",
            line.number
        ));
    }
    let text = match std::str::from_utf8(&line.raw) {
        Ok(text) => text,
        Err(e) => {
            let valid = line.raw.get(..e.valid_up_to()).and_then(|b| std::str::from_utf8(b).ok()).unwrap_or("");
            let column = valid.chars().count() + 1;
            return Outcome::Broken(format!(
                "line {}: (root): not JSON: invalid UTF-8 at line 1, column {column}",
                line.number
            ));
        }
    };
    let parsed: Value = match vouch::read_json(text, LINE_DEPTH) {
        Ok(v) => v,
        Err(e) => return Outcome::Broken(format!("line {}: {}", line.number, e.message)),
    };
    match parsed {
        Value::String(raw) => Outcome::Verdict { carried: Map::new(), verdict: contract.check_str(&raw) },
        Value::Object(mut fields) => match fields.shift_remove(field) {
            Some(Value::String(raw)) => Outcome::Verdict { carried: fields, verdict: contract.check_str(&raw) },
            Some(_) => Outcome::Broken(format!("line {}: the field {field:?} is not a string", line.number)),
            None => Outcome::Broken(format!("line {}: no field {field:?}", line.number)),
        },
        _ => Outcome::Broken(format!("line {}: neither a JSON string nor an object", line.number)),
    }
}

/// One output line: the carried fields, `line` and `verdict` (each in the
/// place of a carried field of that name, else after them), serialized
/// straight from the verdict: the accepted value is written from the
/// vouched text, with no tree built and nothing cloned.
struct OutputLine<'a> {
    number: usize,
    outcome: &'a Outcome,
}

impl serde::Serialize for OutputLine<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        match self.outcome {
            Outcome::Verdict { carried, verdict } => {
                let mut map = serializer.serialize_map(None)?;
                for (k, v) in carried {
                    match k.as_str() {
                        "line" => map.serialize_entry(k, &self.number)?,
                        "verdict" => map.serialize_entry(k, verdict)?,
                        _ => map.serialize_entry(k, v)?,
                    }
                }
                if !carried.contains_key("line") {
                    map.serialize_entry("line", &self.number)?;
                }
                if !carried.contains_key("verdict") {
                    map.serialize_entry("verdict", verdict)?;
                }
                map.end()
            }
            Outcome::Broken(why) => json!({"line": self.number, "input_error": why}).serialize(serializer),
        }
    }
}

/// Write the output lines on a thread of their own, in the order received,
/// so the workers check the next chunk while this one is written.
fn spawn_writer(
    mut out: Box<dyn Write + Send>,
) -> (mpsc::SyncSender<Vec<String>>, std::thread::JoinHandle<io::Result<()>>) {
    let (tx, rx) = mpsc::sync_channel::<Vec<String>>(READ_AHEAD);
    let handle = std::thread::spawn(move || {
        for texts in rx {
            for text in texts {
                out.write_all(text.as_bytes())?;
                out.write_all(b"\n")?;
            }
        }
        out.flush()
    });
    (tx, handle)
}

/// Cut the input into bounded chunks on a reader thread.
fn spawn_reader(input: Box<dyn Read + Send>, limit: usize) -> mpsc::Receiver<io::Result<Vec<Line>>> {
    let (tx, rx) = mpsc::sync_channel(READ_AHEAD);
    std::thread::spawn(move || {
        let mut reader = BufReader::with_capacity(1 << 20, input);
        let mut number = 0;
        loop {
            let mut chunk = Vec::with_capacity(CHUNK_LINES);
            let mut bytes = 0;
            while chunk.len() < CHUNK_LINES && bytes < CHUNK_BYTES {
                let mut buf = Vec::new();
                match read_line(&mut reader, &mut buf, limit) {
                    Ok(None) => break,
                    Ok(Some((n, over))) => {
                        number += 1;
                        // A line over the limit is not kept: it does not fill the chunk.
                        bytes += n.min(limit);
                        // Invalid UTF-8 on a line is that line's input error, not the end.
                        chunk.push(Line { number, raw: buf, bytes: n, over });
                    }
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        return;
                    }
                }
            }
            if chunk.is_empty() || tx.send(Ok(chunk)).is_err() {
                return;
            }
        }
    });
    rx
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
    let contract = match load::contract(&args.contract) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("vouch: {e}");
            return EXIT_USAGE;
        }
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
    let (write, writer) = spawn_writer(out);
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
    for chunk in spawn_reader(input, line_limit(contract.limits().max_bytes)) {
        let chunk = match chunk {
            Ok(c) => c,
            Err(e) => {
                eprintln!("vouch: cannot read the input: {e}");
                return EXIT_USAGE;
            }
        };
        // Check and serialize on the workers; only writing stays in order here.
        let results: Vec<(usize, Tally, Option<String>)> = pool.install(|| {
            chunk
                .par_iter()
                .map(|line| {
                    let outcome = judge(&contract, &args.field, line);
                    let tally = Tally::of(&outcome);
                    let text = (!args.summary_only)
                        .then(|| vouch::to_json_string(&OutputLine { number: line.number, outcome: &outcome }));
                    (line.bytes, tally, text)
                })
                .collect()
        });
        drop(chunk);
        let mut texts = Vec::with_capacity(results.len());
        for (bytes, tally, text) in results {
            summary.add(tally, bytes);
            if let Some(b) = &bar {
                b.inc(bytes as u64);
            }
            texts.extend(text);
        }
        // The writer ends only on an error: then stop.
        if write.send(texts).is_err() {
            break;
        }
        if let Some(b) = &bar {
            b.set_message(format!("{} lines, {} refused", summary.lines, summary.refused));
        }
    }
    drop(write);
    if !writer.join().is_ok_and(|written| written.is_ok()) {
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
