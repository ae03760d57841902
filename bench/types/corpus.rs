//! The benchmark corpus in memory and the timing of one method over it,
//! shared (one file, `#[path]`-included) by `bench/compare` and
//! `bench/baseline`, so both sides load and time alike.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;

/// One reply of the corpus.
pub struct Reply {
    pub contract: String,
    pub raw: String,
    pub fault: Option<String>,
}

/// The replies of one corpus file. `COMPARE_SUBSET=valid|faulty|FAULT`
/// keeps only those (to split the cost); FAULT is one fault kind of the
/// corpus (`truncated`, `prose`…).
pub fn load_corpus(path: &Path) -> Result<Vec<Reply>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let subset = std::env::var("COMPARE_SUBSET").ok();
    let keep = |r: &Reply| match subset.as_deref() {
        Some("valid") => r.fault.is_none(),
        Some("faulty") => r.fault.is_some(),
        Some(kind) => r.fault.as_deref() == Some(kind),
        None => true,
    };
    let all: Result<Vec<Reply>, String> = text
        .lines()
        .map(|line| {
            let v: Value = serde_json::from_str(line).map_err(|e| e.to_string())?;
            Ok(Reply {
                contract: v.get("contract").and_then(Value::as_str).unwrap_or_default().to_owned(),
                raw: v.get("raw").and_then(Value::as_str).unwrap_or_default().to_owned(),
                fault: v.get("fault").and_then(Value::as_str).map(str::to_owned),
            })
        })
        .collect();
    Ok(all?.into_iter().filter(keep).collect())
}

/// What both binaries are told: `CORPUS_DIR [--iterations N] [--contracts DIR]`,
/// and `compare`'s `--baseline BIN` and `--rounds N`.
pub struct Args {
    pub dir: PathBuf,
    pub iterations: usize,
    pub contracts: PathBuf,
    pub baseline: Option<PathBuf>,
    /// Rounds of peers-then-vouch (compare's; 3 unless told).
    pub rounds: usize,
}

/// The command line's [`Args`]; `None` without a corpus folder (the caller prints its usage).
pub fn args() -> Option<Args> {
    let mut args = std::env::args().skip(1);
    let (mut dir, mut iterations, mut contracts, mut baseline, mut rounds) =
        (None, 5, PathBuf::from("../shared/bench/contracts"), None, 3);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--iterations" => iterations = args.next().and_then(|n| n.parse().ok()).unwrap_or(5),
            "--contracts" => contracts = args.next().map(PathBuf::from).unwrap_or(contracts),
            "--baseline" => baseline = args.next().map(PathBuf::from),
            "--rounds" => rounds = args.next().and_then(|n| n.parse().ok()).filter(|n| *n > 0).unwrap_or(3),
            _ => dir = Some(PathBuf::from(a)),
        }
    }
    Some(Args { dir: dir?, iterations, contracts, baseline, rounds })
}

/// The corpus files (and slices of them) the rows run over, with the bench
/// contracts of each: `eligibility` is the eligibility_verdict replies of
/// small.jsonl alone.
pub const FILES: &[(&str, &[&str])] = &[
    ("small", &["plate_check", "eligibility_verdict"]),
    ("eligibility", &["eligibility_verdict"]),
    ("large", &["invoice_extraction"]),
];

/// The replies of one of [`FILES`] under `dir`.
pub fn load_file(dir: &Path, file: &str) -> Result<Vec<Reply>, String> {
    Ok(match file {
        "eligibility" => {
            load_corpus(&dir.join("small.jsonl"))?.into_iter().filter(|r| r.contract == "eligibility_verdict").collect()
        }
        _ => load_corpus(&dir.join(format!("{file}.jsonl")))?,
    })
}

/// One measured method: its best time, and what it let through.
pub struct Row {
    pub name: String,
    /// Replies it ran over (a refusal row runs over the faulty ones only).
    pub replies: usize,
    pub bytes: usize,
    pub seconds: f64,
    pub accepted_faulty: usize,
    pub accepted_truncated: usize,
}

/// Time `accept` over `corpus`: best of `iterations` passes (the machine's
/// noise only ever slows a pass down). `COMPARE_ONLY=name` runs one method
/// alone, for a profiler.
pub fn measure(name: &str, corpus: &[&Reply], iterations: usize, accept: impl Fn(&Reply) -> bool) -> Row {
    let bytes = corpus.iter().map(|r| r.raw.len()).sum();
    let mut row = Row {
        name: name.to_owned(),
        replies: corpus.len(),
        bytes,
        seconds: f64::NAN,
        accepted_faulty: 0,
        accepted_truncated: 0,
    };
    if std::env::var("COMPARE_ONLY").is_ok_and(|only| only != name) {
        return row;
    }
    let mut best = Duration::MAX;
    for _ in 0..iterations.max(1) {
        let started = Instant::now();
        let (mut f, mut t) = (0, 0);
        for r in corpus {
            if std::hint::black_box(accept(r)) {
                f += usize::from(r.fault.is_some());
                t += usize::from(r.fault.as_deref() == Some("truncated"));
            }
        }
        best = best.min(started.elapsed());
        (row.accepted_faulty, row.accepted_truncated) = (f, t);
    }
    row.seconds = best.as_secs_f64();
    row
}

/// The row as one JSON line (what `baseline` prints and `compare` reads).
pub fn row_json(file: &str, r: &Row) -> String {
    serde_json::json!({
        "file": file, "name": r.name, "replies": r.replies, "bytes": r.bytes, "seconds": r.seconds,
        "accepted_faulty": r.accepted_faulty, "accepted_truncated": r.accepted_truncated,
    })
    .to_string()
}

/// A row read back from [`row_json`]'s line.
pub fn row_of_json(line: &str) -> Option<(String, Row)> {
    let v: Value = serde_json::from_str(line).ok()?;
    let n = |k: &str| v.get(k).and_then(Value::as_u64).and_then(|n| usize::try_from(n).ok()).unwrap_or(0);
    Some((
        v.get("file")?.as_str()?.to_owned(),
        Row {
            name: v.get("name")?.as_str()?.to_owned(),
            replies: n("replies"),
            bytes: n("bytes"),
            seconds: v.get("seconds").and_then(Value::as_f64).unwrap_or(f64::NAN),
            accepted_faulty: n("accepted_faulty"),
            accepted_truncated: n("accepted_truncated"),
        },
    ))
}
