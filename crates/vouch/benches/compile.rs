//! Contract compile time (`Contract::from_json_str`, from the text), for each
//! example contract (`examples/contracts/*.json`) and each benchmark contract
//! (`$VOUCH_SHARED/bench/contracts/*.json`, strict and lenient).
//!
//! Floor (issue 6): under 1 ms per contract. Before criterion runs, a quick
//! line per contract prints the median of a few hundred compiles against it.
//!
//! `cargo bench -p vouch --bench compile`

mod common;

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use criterion::Criterion;
use vouch::Contract;

/// `*.json` files of a folder, sorted, as (label, text).
fn contracts_in(dir: &Path, prefix: &str) -> Vec<(String, String)> {
    let mut paths: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(entries) => entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect(),
        Err(e) => {
            common::skip(&format!("{}: {e}", dir.display()));
            Vec::new()
        }
    };
    paths.sort();
    paths
        .into_iter()
        .filter_map(|p| {
            let stem = p.file_stem()?.to_string_lossy().into_owned();
            Some((format!("{prefix}/{stem}"), common::read_text(&p)?))
        })
        .collect()
}

/// Median time of `runs` compiles.
fn median_compile(text: &str, runs: usize) -> Duration {
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            let _ = black_box(Contract::from_json_str(black_box(text)));
            t.elapsed()
        })
        .collect();
    times.sort();
    times.get(runs / 2).copied().unwrap_or_default()
}

fn main() {
    let mut contracts = contracts_in(&common::project_root().join("examples/contracts"), "examples");
    match common::shared_bench() {
        Some(dir) => contracts.extend(contracts_in(&dir.join("contracts"), "bench")),
        None => common::skip("the benchmark contracts are not measured, only the examples"),
    }
    let mut broken = false;
    for (label, text) in &contracts {
        if let Err(e) = Contract::from_json_str(text) {
            common::skip(&format!("{label} does not compile: {e}"));
            broken = true;
        }
    }
    if broken || contracts.is_empty() {
        return;
    }

    println!("compile, median of 300 (quick, before criterion; floor < 1 ms each):");
    for (label, text) in &contracts {
        let m = median_compile(text, 300);
        let verdict = if m < Duration::from_millis(1) { "ok" } else { "OVER THE 1 ms FLOOR" };
        println!("  {label:<40} {:>9.1} µs  {verdict}", m.as_secs_f64() * 1e6);
    }

    let mut c = Criterion::default().configure_from_args();
    let mut group = c.benchmark_group("compile");
    for (label, text) in &contracts {
        group.bench_function(label.as_str(), |b| b.iter(|| Contract::from_json_str(black_box(text))));
    }
    group.finish();
    c.final_summary();
}
