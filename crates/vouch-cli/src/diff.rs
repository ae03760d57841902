//! `vouch diff OLD NEW`: what a contract change refuses that the old
//! contract accepted, before it ships; with `--values`, which stored values
//! the new contract would refuse.

use std::collections::BTreeMap;
use std::io::{BufRead, Read};
use std::path::PathBuf;

use rayon::prelude::*;
use serde_json::json;
use vouch::{ChangeKind, Contract, ContractDiff};

use crate::load::{self, EXIT_USAGE};

/// Exit code: a breaking change, or a stored value the new contract refuses.
const EXIT_BREAKING: u8 = 1;
/// Exit code: no breaking change shown, but one the comparison cannot decide.
const EXIT_UNDECIDED: u8 = 4;
/// Lines of stored values checked at a time (constant memory, every core).
const CHUNK: usize = 8192;
/// Bytes of stored values held at a time, at most (and one line more).
const CHUNK_BYTES: usize = 64 << 20;
/// Line numbers kept for each problem.
const FIRST_LINES: usize = 5;

#[derive(clap::Args)]
pub struct Args {
    /// The contract as it is (what the stored values were vouched by).
    #[arg(value_name = "OLD")]
    old: PathBuf,
    /// The contract as it would become.
    #[arg(value_name = "NEW")]
    new: PathBuf,
    /// Stored values, one JSON value per line (a database export, last known
    /// good values, a batch's accepted output): each is checked against NEW,
    /// and every one OLD accepts that NEW refuses is counted, per problem.
    #[arg(long, value_name = "FILE.jsonl")]
    values: Option<PathBuf>,
    /// One JSON object instead of the report (see docs/diff.md).
    #[arg(long)]
    json: bool,
    /// Loosening changes do not fail the diff (the default).
    #[arg(long, conflicts_with = "fail_on_loosening")]
    allow_loosening: bool,
    /// A loosening change fails the diff too (exit 1): for a contract that must not admit more.
    #[arg(long)]
    fail_on_loosening: bool,
}

/// What the stored values came to.
#[derive(Default)]
struct Stored {
    lines: usize,
    /// Lines OLD accepts.
    kept: usize,
    /// Lines OLD accepts and NEW refuses.
    refused: usize,
    /// Lines OLD refuses too (not what OLD vouched for).
    old_refused: usize,
    /// Per (code, path): how many, and the first line numbers.
    problems: BTreeMap<(String, String), (usize, Vec<usize>)>,
}

pub fn run(args: &Args) -> u8 {
    let (old, new) = match (load::contract(&args.old), load::contract(&args.new)) {
        (Ok(o), Ok(n)) => (o, n),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("vouch: {e}");
            return EXIT_USAGE;
        }
    };
    let diff = old.diff(&new);
    let stored = match &args.values {
        Some(path) => match stored(&old, &new, path) {
            Ok(s) => Some(s),
            Err(e) => {
                eprintln!("vouch: {}: {e}", path.display());
                return EXIT_USAGE;
            }
        },
        None => None,
    };
    let code = exit_code(&diff, stored.as_ref(), args.fail_on_loosening);
    if args.json {
        outln!("{}", report_json(&diff, stored.as_ref(), code));
    } else {
        report(&diff, stored.as_ref(), code);
    }
    code
}

fn exit_code(diff: &ContractDiff, stored: Option<&Stored>, fail_on_loosening: bool) -> u8 {
    let breaking = diff.count(ChangeKind::Breaking) > 0
        || stored.is_some_and(|s| s.refused > 0)
        || (fail_on_loosening && diff.count(ChangeKind::Loosening) > 0);
    if breaking {
        EXIT_BREAKING
    } else if diff.count(ChangeKind::Undecided) > 0 {
        EXIT_UNDECIDED
    } else {
        0
    }
}

fn stored(old: &Contract, new: &Contract, path: &std::path::Path) -> std::io::Result<Stored> {
    let file = std::fs::File::open(path)?;
    let mut reader = std::io::BufReader::new(file);
    let mut out = Stored::default();
    // A line is read up to the larger contract's byte limit and one byte
    // more (past that, OLD refuses it as too large); the rest is skipped.
    let limit = old.limits().max_bytes.max(new.limits().max_bytes).saturating_add(1);
    let mut chunk: Vec<Vec<u8>> = Vec::with_capacity(CHUNK);
    loop {
        chunk.clear();
        let mut bytes = 0usize;
        while chunk.len() < CHUNK && bytes < CHUNK_BYTES {
            let mut line = Vec::new();
            let n = reader.by_ref().take(u64::try_from(limit).unwrap_or(u64::MAX)).read_until(b'\n', &mut line)?;
            if n == 0 {
                break;
            }
            if line.last() != Some(&b'\n') && line.len() >= limit {
                reader.skip_until(b'\n')?;
            }
            bytes += line.len();
            chunk.push(line);
        }
        if chunk.is_empty() {
            return Ok(out);
        }
        let first = out.lines;
        // Each line: (accepted by OLD, NEW's problems when it refuses).
        let judged: Vec<(bool, Vec<(String, String)>)> = chunk
            .par_iter()
            .map(|line| {
                let text = line.strip_suffix(b"\n").unwrap_or(line);
                let text = text.strip_suffix(b"\r").unwrap_or(text);
                if !old.check(text).is_accepted() {
                    return (false, Vec::new());
                }
                let problems =
                    new.check(text).problems().iter().map(|p| (p.code.as_str().to_owned(), p.path.clone())).collect();
                (true, problems)
            })
            .collect();
        for (i, (kept, problems)) in judged.into_iter().enumerate() {
            let line_no = first + i + 1;
            out.lines += 1;
            if !kept {
                out.old_refused += 1;
                continue;
            }
            out.kept += 1;
            if problems.is_empty() {
                continue;
            }
            out.refused += 1;
            for key in problems {
                let entry = out.problems.entry(key).or_default();
                entry.0 += 1;
                if entry.1.len() < FIRST_LINES {
                    entry.1.push(line_no);
                }
            }
        }
        if chunk.len() < CHUNK && bytes < CHUNK_BYTES {
            return Ok(out);
        }
    }
}

fn kind_word(k: ChangeKind) -> &'static str {
    match k {
        ChangeKind::Breaking => "breaking",
        ChangeKind::Loosening => "loosening",
        ChangeKind::Undecided => "undecided",
    }
}

fn report(diff: &ContractDiff, stored: Option<&Stored>, code: u8) {
    for c in &diff.changes {
        outln!("{:<9}  {}", kind_word(c.kind), c.message);
        match (&c.witness, c.kind) {
            (Some(w), ChangeKind::Breaking) => outln!("           OLD accepts, NEW refuses: {w}"),
            (Some(w), _) => outln!("           NEW accepts, OLD refused: {w}"),
            (None, _) => {
                outln!("           at {}: vouch diff cannot tell whether NEW refuses what OLD accepted here", c.path)
            }
        }
    }
    if let Some(s) = stored {
        outln!(
            "stored values: {} lines, {} accepted by OLD, {} of them refused by NEW{}",
            s.lines,
            s.kept,
            s.refused,
            if s.old_refused > 0 {
                format!(" ({} lines OLD refuses too, left out)", s.old_refused)
            } else {
                String::new()
            }
        );
        for ((code, path), (n, lines)) in &s.problems {
            let path = if path.is_empty() { "(root)" } else { path };
            let shown: Vec<String> = lines.iter().map(usize::to_string).collect();
            outln!("  {n:>8}  {code} at {path}  (lines {})", shown.join(", "));
        }
    }
    let verdict = match code {
        0 => "compatible: every reply OLD accepts, NEW accepts",
        EXIT_BREAKING => "breaking",
        _ => "undecided: no breaking change shown, but not every change could be decided",
    };
    outln!(
        "{verdict} ({} breaking, {} undecided, {} loosening)",
        diff.count(ChangeKind::Breaking),
        diff.count(ChangeKind::Undecided),
        diff.count(ChangeKind::Loosening)
    );
}

fn report_json(diff: &ContractDiff, stored: Option<&Stored>, code: u8) -> String {
    let outcome = match code {
        0 => "compatible",
        EXIT_BREAKING => "breaking",
        _ => "undecided",
    };
    let mut v = serde_json::Map::new();
    v.insert("outcome".into(), json!(outcome));
    v.insert("exit".into(), json!(code));
    v.insert("changes".into(), json!(diff.changes));
    if let Some(s) = stored {
        let problems: Vec<_> = s
            .problems
            .iter()
            .map(|((code, path), (n, lines))| json!({"code": code, "path": path, "count": n, "first_lines": lines}))
            .collect();
        v.insert(
            "values".into(),
            json!({
                "lines": s.lines,
                "accepted_by_old": s.kept,
                "refused_by_new": s.refused,
                "refused_by_old": s.old_refused,
                "problems": problems,
            }),
        );
    }
    vouch::to_json_string(&serde_json::Value::Object(v))
}
