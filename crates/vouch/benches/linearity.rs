//! Hostile inputs at three sizes: each check's time at 2n against n and at 4n
//! against 2n (≈ 2 when linear; the first step can read higher when the
//! larger input leaves the caches), and its peak memory against the input's
//! size. Issue 5's resource limits, as a benchmark: the
//! tests in `tests/limits.rs` show the verdicts, this shows the cost.
//!
//! ```sh
//! cargo bench -p vouch --bench linearity
//! LINEARITY_DIVIDE=10 cargo bench -p vouch --bench linearity   # a tenth of the sizes
//! ```
//!
//! Prints one line per case, `linear CASE n=… t(n)=… t(2n)=… t(4n)=… ratios R1 R2 peak/input M (VERDICT)`,
//! where the peak is the process's peak resident memory during the check at 4n (reset before it through
//! `/proc/self/clear_refs`, Linux) minus what it held before, and `M` is that over the input's
//! size (`n/a` where the kernel does not allow the reset).

use std::hint::black_box;
use std::time::{Duration, Instant};

use vouch::{Contract, Limits};

/// A case: its name, the contract, and the reply for a size.
struct Case {
    name: &'static str,
    schema: &'static str,
    n: usize,
    reply: fn(usize) -> Vec<u8>,
}

fn wide_object(n: usize) -> Vec<u8> {
    let mut out = String::from("{");
    for i in 0..n {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&format!("\"k{i}\":{i}"));
    }
    out.push('}');
    out.into_bytes()
}

fn objects(n: usize) -> Vec<u8> {
    let items: Vec<String> = (0..n).map(|i| format!("{{\"id\":{i},\"tag\":\"x\"}}")).collect();
    format!("[{}]", items.join(",")).into_bytes()
}

/// `body` between quotes: a JSON string with nothing to escape.
fn quoted(body: impl Iterator<Item = u8>) -> Vec<u8> {
    std::iter::once(b'"').chain(body).chain(std::iter::once(b'"')).collect()
}

fn long_string(n: usize) -> Vec<u8> {
    quoted(std::iter::repeat_n(b'a', n))
}

fn long_fraction(n: usize) -> Vec<u8> {
    let mut raw = b"0.".to_vec();
    raw.extend(std::iter::repeat_n(b'1', n));
    raw
}

fn deep(n: usize) -> Vec<u8> {
    let mut raw = vec![b'['; n];
    raw.extend(std::iter::repeat_n(b']', n));
    raw
}

fn a_then_b(n: usize) -> Vec<u8> {
    quoted(std::iter::repeat_n(b'a', n).chain(std::iter::once(b'b')))
}

fn truncated_objects(n: usize) -> Vec<u8> {
    let mut raw = objects(n);
    raw.truncate(raw.len().saturating_sub(3));
    raw
}

/// `unit` `n` times, then `tail`: prose for the unwrap rows.
fn repeated(unit: &str, n: usize, tail: &str) -> Vec<u8> {
    let mut out = unit.repeat(n);
    out.push_str(tail);
    out.into_bytes()
}

/// `[[[…x` (100 deep, within the depth limit) again and again: each bracket
/// starts a broken attempt that reads to its `x`; refused at the search budget.
fn prose_brackets(n: usize) -> Vec<u8> {
    repeated(&format!("{}x ", "[".repeat(100)), n, "{\"a\": 1}")
}

/// Citations, each a complete candidate: searched to the end, `ambiguous_reply`.
fn prose_citations(n: usize) -> Vec<u8> {
    repeated("as [1] said ", n, "")
}

/// Links and footnotes (prose brackets), then the one answer: accepted.
fn prose_links(n: usize) -> Vec<u8> {
    repeated("see [the docs](https://x.y/z)[^1] ", n, "{\"a\": 1}")
}

/// Nested broken objects and arrays, `[{"a": [{"a": …x`, 40 deep, again and again.
fn prose_nested_broken(n: usize) -> Vec<u8> {
    repeated(&format!("{}x ", "[{\"a\": ".repeat(40)), n, "{\"a\": 1}")
}

/// An open string inside a bracket, again and again: `["aaaa…` never closed until the end.
fn prose_open_strings(n: usize) -> Vec<u8> {
    repeated("[\"a [b {c ", n, "\"")
}

/// Prose unwrap declared (the hostile rows for `read/unwrap.rs`).
const PROSE: &str = r#"{"x-vouch": {"unwrap": ["prose"]}}"#;

/// `n` items, `0` repeated (`[0,0,…]`): the review's reply under `clamp`.
fn zeros(n: usize) -> Vec<u8> {
    let mut raw = b"[".to_vec();
    for i in 0..n {
        raw.extend_from_slice(if i == 0 { b"0" } else { b",0" });
    }
    raw.push(b']');
    raw
}

/// `n` items, the first 500 `0` (clamped), the rest `1` (valid).
fn few_zeros(n: usize) -> Vec<u8> {
    let mut raw = b"[".to_vec();
    for i in 0..n {
        if i > 0 {
            raw.push(b',');
        }
        raw.push(if i < 500 { b'0' } else { b'1' });
    }
    raw.push(b']');
    raw
}

/// `n` items `"  a  "`, each trimmed.
fn spaced(n: usize) -> Vec<u8> {
    let mut raw = b"[".to_vec();
    for i in 0..n {
        raw.extend_from_slice(if i == 0 { br#""  a  ""# } else { br#","  a  ""# });
    }
    raw.push(b']');
    raw
}

const CLAMP: &str = r#"{"type":"array","items":{"type":"integer","minimum":1,"x-vouch":{"repair":["clamp"]}}}"#;
const CLAMP_UNCAPPED: &str = r#"{"type":"array","items":{"type":"integer","minimum":1,"x-vouch":{"repair":["clamp"]}},
    "x-vouch":{"limits":{"max_repairs":100000000}}}"#;
const TRIM: &str = r#"{"type":"array","items":{"type":"string","x-vouch":{"repair":["trim"]}}}"#;
const TRIM_UNCAPPED: &str = r#"{"type":"array","items":{"type":"string","x-vouch":{"repair":["trim"]}},
    "x-vouch":{"limits":{"max_repairs":100000000}}}"#;

const CASES: &[Case] = &[
    // Repair-heavy replies: every item repaired, the cap (1000) hit at once
    // (refused); 500 repaired, under the cap (accepted); every item repaired
    // with the cap raised past them (accepted, a log entry per item).
    Case { name: "clamp_capped", schema: CLAMP, n: 500_000, reply: zeros },
    Case { name: "clamp_under_cap", schema: CLAMP, n: 500_000, reply: few_zeros },
    Case { name: "clamp_uncapped", schema: CLAMP_UNCAPPED, n: 25_000, reply: zeros },
    Case { name: "trim_capped", schema: TRIM, n: 200_000, reply: spaced },
    Case { name: "trim_uncapped", schema: TRIM_UNCAPPED, n: 25_000, reply: spaced },
    Case { name: "keys", schema: "{}", n: 250_000, reply: wide_object },
    Case { name: "keys_refused", schema: r#"{"additionalProperties":false}"#, n: 250_000, reply: wide_object },
    Case { name: "unique_objects", schema: r#"{"type":"array","uniqueItems":true}"#, n: 50_000, reply: objects },
    Case { name: "truncated", schema: "{}", n: 100_000, reply: truncated_objects },
    Case { name: "string", schema: r#"{"type":"string","maxLength":10}"#, n: 8_000_000, reply: long_string },
    Case { name: "number_digits", schema: r#"{"type":"number"}"#, n: 1_000_000, reply: long_fraction },
    Case { name: "pattern", schema: r#"{"type":"string","pattern":"^(a+)+$"}"#, n: 1_000_000, reply: a_then_b },
    Case { name: "deep", schema: "{}", n: 1_000_000, reply: deep },
    Case { name: "prose_brackets", schema: PROSE, n: 10_000, reply: prose_brackets },
    Case { name: "prose_citations", schema: PROSE, n: 100_000, reply: prose_citations },
    Case { name: "prose_links", schema: PROSE, n: 50_000, reply: prose_links },
    Case { name: "prose_nested", schema: PROSE, n: 5_000, reply: prose_nested_broken },
    Case { name: "prose_strings", schema: PROSE, n: 100_000, reply: prose_open_strings },
];

/// Best of a few runs (the machine's noise only ever adds time).
fn best(contract: &Contract, raw: &[u8]) -> Duration {
    (0..5)
        .map(|_| {
            let started = Instant::now();
            black_box(contract.check(black_box(raw)));
            started.elapsed()
        })
        .min()
        .unwrap_or_default()
}

/// Peak resident memory in KiB (`VmHWM`), after resetting it when `reset`.
fn peak_kib(reset: bool) -> Option<u64> {
    if reset {
        std::fs::write("/proc/self/clear_refs", "5").ok()?;
    }
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn current_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn main() {
    // `LINEARITY_DIVIDE=10` runs every case at a tenth of its size (inside the caches).
    let divide = std::env::var("LINEARITY_DIVIDE").ok().and_then(|d| d.parse::<usize>().ok()).unwrap_or(1).max(1);
    for case in CASES {
        let n = (case.n / divide).max(1);
        let Ok(contract) = Contract::from_json_str(case.schema) else {
            eprintln!("linear {}: the contract does not compile", case.name);
            continue;
        };
        let small = (case.reply)(n);
        let middle = (case.reply)(2 * n);
        let large = (case.reply)(4 * n);
        let limits = Limits { max_bytes: large.len() + 16, ..contract.limits() };
        let Ok(contract) = contract.with_limits(limits) else { continue };
        let (t1, t2, t4) = (best(&contract, &small), best(&contract, &middle), best(&contract, &large));
        let memory = match (current_kib(), peak_kib(true)) {
            (Some(before), Some(_)) => {
                black_box(contract.check(black_box(&large)));
                peak_kib(false).map(|peak| {
                    let used = peak.saturating_sub(before) as f64 * 1024.0;
                    format!("{:.1}", used / large.len() as f64)
                })
            }
            _ => None,
        };
        println!(
            "linear {:<15} n={:<9} t(n)={:>9.2?} t(2n)={:>9.2?} t(4n)={:>9.2?} ratios {:.2} {:.2} peak/input {} ({})",
            case.name,
            n,
            t1,
            t2,
            t4,
            t2.as_secs_f64() / t1.as_secs_f64().max(1e-9),
            t4.as_secs_f64() / t2.as_secs_f64().max(1e-9),
            memory.unwrap_or_else(|| "n/a".to_owned()),
            contract.check(&large).problems().first().map_or("accepted", |p| p.code.as_str()),
        );
    }
}
