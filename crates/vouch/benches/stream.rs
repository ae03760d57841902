//! The cost of streaming (issue #14): the benchmark corpus checked whole
//! (`Contract::check`) and streamed (`Contract::stream`, fed the whole reply
//! in one piece, in pieces of 16 bytes as SSE gives them, and one byte at a
//! time), each time against the check's in the same run; then single long
//! replies fed byte by byte at two sizes (time per byte flat when linear);
//! then the peak heap of a check and of a stream against the reply's size.
//!
//! ```sh
//! cargo bench -p vouch --bench stream
//! STREAM_SMALL=20000 STREAM_LARGE=400 STREAM_ITERATIONS=5 cargo bench -p vouch --bench stream
//! ```
//!
//! Corpus: the first `STREAM_SMALL` replies of small.jsonl and the first
//! `STREAM_LARGE` of large.jsonl (`$VOUCH_SHARED/bench/gen.py`, generated
//! into `target/bench-corpus` when missing), each against its own strict
//! (`*.schema.json`) and lenient (`*.lenient.json`) contract, split by the
//! check's verdict (accepted, refused). Times are the best of
//! `STREAM_ITERATIONS` passes (the machine's noise only ever adds time);
//! ratios are within one run. Every streamed verdict is compared with the
//! check's (`mismatches`, which must be 0).
//!
//! The heap is counted by a global allocator (this bench binary only):
//! peak bytes allocated while one reply is checked or streamed, minus what
//! was allocated before, over the reply's size. Its counting (two relaxed
//! atomics per allocation) is in every timed mode alike.

mod common;

use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::{Duration, Instant};

use peak_alloc::PeakAlloc;
use vouch::{Contract, Limits, Verdict};

#[global_allocator]
static HEAP: PeakAlloc = PeakAlloc;

/// How a reply is given to the checker.
#[derive(Clone, Copy)]
enum Mode {
    /// `Contract::check` on the whole reply: the base of every ratio.
    Check,
    /// A stream fed pieces of this many bytes (cut anywhere, a UTF-8
    /// character included); `usize::MAX`: the whole reply in one piece.
    Pieces(usize),
}

const MODES: [(&str, Mode); 4] =
    [("check", Mode::Check), ("whole", Mode::Pieces(usize::MAX)), ("16 B", Mode::Pieces(16)), ("1 B", Mode::Pieces(1))];

fn run(contract: &Contract, raw: &[u8], mode: Mode) -> Verdict {
    match mode {
        Mode::Check => contract.check(raw),
        Mode::Pieces(size) => {
            let mut s = contract.stream();
            for piece in raw.chunks(size.min(raw.len()).max(1)) {
                // A caller stops at a refusal; the bench feeds on, as a caller that
                // keeps the connection open would (the stream keeps nothing more).
                black_box(s.feed(piece));
            }
            s.finish()
        }
    }
}

/// Best time of `iterations` passes over `pairs` in `mode`.
fn time(pairs: &[(&Contract, &[u8])], mode: Mode, iterations: usize) -> Duration {
    (0..iterations.max(1))
        .map(|_| {
            let started = Instant::now();
            for (c, raw) in pairs {
                black_box(run(c, black_box(raw), mode));
            }
            started.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn env(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Peak heap (bytes) while `f` runs, above what was allocated before it.
fn peak_of<T>(f: impl FnOnce() -> T) -> (usize, T) {
    let before = HEAP.current_usage();
    HEAP.reset_peak_usage();
    let out = f();
    (HEAP.peak_usage().saturating_sub(before), out)
}

fn corpus_table(iterations: usize) -> Option<()> {
    let shared = common::shared_bench()?;
    let dir = common::corpus_dir(&shared)?;
    let small = common::load_corpus(&dir.join("small.jsonl"), env("STREAM_SMALL", 10_000))?;
    let large = common::load_corpus(&dir.join("large.jsonl"), env("STREAM_LARGE", 300))?;
    let strict = common::bench_contracts(&shared, "schema")?;
    let lenient = common::bench_contracts(&shared, "lenient")?;

    println!(
        "{:<24} {:>7} {:>8} {:>10} {:>10} {:>10} {:>10} {:>8} {:>8} {:>8} {:>5}",
        "corpus slice",
        "replies",
        "MB",
        "check MB/s",
        "whole/chk",
        "16B/chk",
        "1B/chk",
        "1B ns/B",
        "1B/16B",
        "1B/whl",
        "mism"
    );
    // The issue's measure: one byte at a time against the same stream fed
    // whole; `check` (the same engine, without the stream's bookkeeping) beside it.
    let (mut worst, mut worst_whole): (f64, f64) = (0.0, 0.0);
    for (kind, contracts) in [("strict", &strict), ("lenient", &lenient)] {
        for (size, replies) in [("small", &small), ("large", &large)] {
            for accepted in [true, false] {
                let pairs = slice(replies, contracts, accepted);
                if pairs.is_empty() {
                    continue;
                }
                let bytes: usize = pairs.iter().map(|(_, r)| r.len()).sum();
                let mut mismatches = 0;
                for (c, raw) in &pairs {
                    let whole = c.check(raw);
                    for &(name, m) in MODES.iter().skip(1) {
                        let streamed = run(c, raw, m);
                        if streamed != whole {
                            if mismatches == 0 {
                                eprintln!(
                                    "mismatch ({name}): {:?}…\n  check:  {}\n  stream: {}",
                                    String::from_utf8_lossy(raw).chars().take(80).collect::<String>(),
                                    whole.to_json(),
                                    streamed.to_json()
                                );
                            }
                            mismatches += 1;
                            break;
                        }
                    }
                }
                let t: Vec<f64> = MODES.iter().map(|&(_, m)| time(&pairs, m, iterations).as_secs_f64()).collect();
                let &[check, whole, sixteen, one] = t.as_slice() else { continue };
                worst = worst.max(one / check);
                worst_whole = worst_whole.max(one / whole);
                println!(
                    "{:<24} {:>7} {:>8.2} {:>10.1} {:>10.2} {:>10.2} {:>10.2} {:>8.2} {:>8.2} {:>8.2} {:>5}",
                    format!("{kind} {size} {}", if accepted { "accepted" } else { "refused" }),
                    pairs.len(),
                    bytes as f64 / 1e6,
                    bytes as f64 / 1e6 / check,
                    whole / check,
                    sixteen / check,
                    one / check,
                    one * 1e9 / bytes as f64,
                    one / sixteen,
                    one / whole,
                    mismatches,
                );
            }
        }
    }
    println!("worst 1-byte/whole ratio {worst_whole:.2} (requirement: at most 3); worst 1-byte/check ratio {worst:.2}");
    Some(())
}

/// The (contract, raw) pairs of one slice: replies the check accepts (or refuses) with `contracts`.
fn slice<'a>(
    replies: &'a [common::Reply],
    contracts: &'a BTreeMap<String, Contract>,
    accepted: bool,
) -> Vec<(&'a Contract, &'a [u8])> {
    replies
        .iter()
        .filter_map(|r| Some((contracts.get(&r.contract)?, r.raw.as_bytes())))
        .filter(|(c, raw)| c.check(raw).is_accepted() == accepted)
        .collect()
}

/// A long reply: its name, contract, and text for a size in bytes (about).
struct Long {
    name: &'static str,
    schema: &'static str,
    reply: fn(usize) -> Vec<u8>,
}

fn string_member(n: usize) -> Vec<u8> {
    let mut raw = b"{\"s\":\"".to_vec();
    raw.extend(std::iter::repeat_n(b'a', n.saturating_sub(8)));
    raw.extend_from_slice(b"\"}");
    raw
}

/// A string with an escape every 8 bytes (the slow path of the string scan).
fn escaped_string(n: usize) -> Vec<u8> {
    let mut raw = b"\"".to_vec();
    while raw.len() < n {
        raw.extend_from_slice(b"abc\\n\\u00e9");
    }
    raw.push(b'"');
    raw
}

fn objects(n: usize) -> Vec<u8> {
    let mut raw = b"[".to_vec();
    let mut i = 0u64;
    while raw.len() < n {
        if i > 0 {
            raw.push(b',');
        }
        raw.extend_from_slice(format!("{{\"id\":{i},\"tag\":\"x\",\"ok\":true}}").as_bytes());
        i += 1;
    }
    raw.push(b']');
    raw
}

const ITEMS: &str = r#"{"type":"array","items":{"type":"object",
    "properties":{"id":{"type":"integer"},"tag":{"type":"string","enum":["x","y"]},"ok":{"type":"boolean"}},
    "required":["id","tag","ok"],"additionalProperties":false}}"#;

const LONGS: &[Long] = &[
    Long {
        name: "string value",
        schema: r#"{"type":"object","properties":{"s":{"type":"string"}},"required":["s"]}"#,
        reply: string_member,
    },
    Long { name: "string maxLength", schema: r#"{"type":"string","maxLength":100000000}"#, reply: escaped_string },
    Long { name: "array of objects", schema: ITEMS, reply: objects },
    Long { name: "array, free ({})", schema: "{}", reply: objects },
];

fn linearity_table(iterations: usize) {
    const MB: usize = 1 << 20;
    println!(
        "\n{:<18} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "long reply", "chk 1M", "chk 4M", "1B 1M", "1B 4M", "16B 4M", "1B/chk 4M", "4M/1M 1B", "heap chk", "heap 1B"
    );
    println!(
        "{:<18} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "", "ns/B", "ns/B", "ns/B", "ns/B", "ns/B", "ratio", "per B", "/reply", "/reply"
    );
    for long in LONGS {
        let Ok(contract) = Contract::from_json_str(long.schema) else {
            eprintln!("{}: the contract does not compile", long.name);
            continue;
        };
        let (one, four) = ((long.reply)(MB), (long.reply)(4 * MB));
        let limits = Limits { max_bytes: four.len() + 16, ..contract.limits() };
        let Ok(contract) = contract.with_limits(limits) else { continue };
        let per_byte = |raw: &[u8], mode: Mode| {
            let pairs = [(&contract, raw)];
            time(&pairs, mode, iterations).as_secs_f64() * 1e9 / raw.len() as f64
        };
        let (c1, c4) = (per_byte(&one, Mode::Check), per_byte(&four, Mode::Check));
        let (b1, b4) = (per_byte(&one, Mode::Pieces(1)), per_byte(&four, Mode::Pieces(1)));
        let s4 = per_byte(&four, Mode::Pieces(16));
        let (heap_check, verdict) = peak_of(|| contract.check(&four));
        let (heap_stream, streamed) = peak_of(|| run(&contract, &four, Mode::Pieces(1)));
        let outcome = if streamed == verdict { verdict.outcome() } else { "MISMATCH" };
        println!(
            "{:<18} {:>9.2} {:>9.2} {:>9.2} {:>9.2} {:>9.2} {:>9.2} {:>9.2} {:>9.2} {:>9.2}  ({outcome})",
            long.name,
            c1,
            c4,
            b1,
            b4,
            s4,
            b4 / c4,
            b4 / b1,
            heap_check as f64 / four.len() as f64,
            heap_stream as f64 / four.len() as f64,
        );
    }
}

/// Peak heap over the reply's size for the largest corpus replies (check vs stream by one byte).
fn corpus_memory() -> Option<()> {
    let shared = common::shared_bench()?;
    let dir = common::corpus_dir(&shared)?;
    let mut large = common::load_corpus(&dir.join("large.jsonl"), env("STREAM_LARGE", 300))?;
    let strict = common::bench_contracts(&shared, "schema")?;
    let lenient = common::bench_contracts(&shared, "lenient")?;
    large.sort_by_key(|r| std::cmp::Reverse(r.raw.len()));
    println!(
        "\n{:<40} {:>8} {:>12} {:>12} {:>12} {:>12}",
        "largest corpus replies (heap / reply)", "KB", "strict chk", "strict 1B", "lenient chk", "lenient 1B"
    );
    for r in large.iter().take(5) {
        let raw = r.raw.as_bytes();
        let mut cells = Vec::new();
        for contracts in [&strict, &lenient] {
            let Some(c) = contracts.get(&r.contract) else { continue };
            let (whole, _) = peak_of(|| c.check(raw));
            let (one, _) = peak_of(|| run(c, raw, Mode::Pieces(1)));
            cells.push(whole as f64 / raw.len() as f64);
            cells.push(one as f64 / raw.len() as f64);
        }
        let &[a, b, c, d] = cells.as_slice() else { continue };
        println!(
            "{:<40} {:>8.1} {:>12.2} {:>12.2} {:>12.2} {:>12.2}",
            format!("{} ({})", r.contract, r.fault.as_deref().unwrap_or("valid")),
            raw.len() as f64 / 1e3,
            a,
            b,
            c,
            d
        );
    }
    Some(())
}

fn main() {
    let iterations = env("STREAM_ITERATIONS", 3);
    let args: Vec<String> = std::env::args().collect();
    let date = std::process::Command::new("date")
        .args(["-u", "+%Y-%m-%d %H:%M UTC"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();
    println!("stream bench, {date}: {} (best of {iterations})", args.join(" "));
    // `cargo bench` passes `--bench`; a filter word runs one table: `corpus`, `linear`, `memory`.
    let only = args.iter().skip(1).find(|a| !a.starts_with("--")).cloned();
    let wants = |t: &str| only.as_deref().is_none_or(|o| o == t);
    if wants("corpus") {
        corpus_table(iterations);
    }
    if wants("linear") {
        linearity_table(iterations);
    }
    if wants("memory") {
        corpus_memory();
    }
}
