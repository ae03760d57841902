//! `compare CORPUS_DIR [--iterations N] [--rounds N] [--contracts DIR] [--baseline BIN]`:
//! in one run, on one core, over the benchmark corpus held in memory, the
//! throughput of vouch and of what users would otherwise run (parse,
//! validate, deserialize), and how many faulty replies each accepts. Ends
//! with machine-readable `ratio …` lines.
//!
//! The peers and vouch take turns, `--rounds` times (3 unless told): the
//! peers' binary, then vouch's rows, then the peers again… Each row keeps
//! its best time over the rounds, so a slow spell of a shared machine (they
//! last seconds) falls on both sides instead of on whichever ran in it.
//!
//! The peers' rows come from `bench/baseline`, a workspace of its own built
//! as those users build it (no feature this workspace turns on, serde_json's
//! `preserve_order` above all, reaches it): this binary runs it first and
//! reads its rows. One peer row also runs here, in this build, to show what
//! the feature costs a crate that depends on vouch.
//!
//! The corpus comes from `../shared/bench/gen.py` (see its README).

#[path = "../../types/bench_types.rs"]
mod bench_types;
#[path = "../../types/corpus.rs"]
#[allow(dead_code)]
mod corpus;

use std::collections::BTreeMap;
use std::path::Path;

use corpus::{measure, Reply, Row};
use serde_json::Value;
use vouch::Contract;

/// The contracts of one corpus file, compiled for every method.
struct Contracts {
    strict: BTreeMap<String, Contract>,
    lenient: BTreeMap<String, Contract>,
    oracle: BTreeMap<String, jsonschema::Validator>,
}

fn load_contracts(dir: &Path, names: &[&str]) -> Result<Contracts, String> {
    let mut c = Contracts { strict: BTreeMap::new(), lenient: BTreeMap::new(), oracle: BTreeMap::new() };
    for name in names {
        let read = |suffix: &str| -> Result<String, String> {
            let p = dir.join(format!("{name}.{suffix}.json"));
            std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))
        };
        let strict = read("schema")?;
        let lenient = read("lenient")?;
        c.strict.insert((*name).into(), Contract::from_json_str(&strict).map_err(|e| format!("{name}: {e}"))?);
        c.lenient.insert((*name).into(), Contract::from_json_str(&lenient).map_err(|e| format!("{name}: {e}"))?);
        let doc: Value = serde_json::from_str(&strict).map_err(|e| e.to_string())?;
        c.oracle.insert((*name).into(), jsonschema::validator_for(&doc).map_err(|e| format!("{name}: {e}"))?);
    }
    Ok(c)
}

/// The reply checked and handed over as the contract's Rust type.
fn check_as(c: &Contract, contract: &str, raw: &str) -> bool {
    match contract {
        "plate_check" => c.check_as::<bench_types::Plate>(raw).is_ok(),
        "eligibility_verdict" => c.check_as::<bench_types::Eligibility>(raw).is_ok(),
        "invoice_extraction" => c.check_as::<bench_types::Invoice>(raw).is_ok(),
        _ => false,
    }
}

/// The reply checked, then its vouched text read again by serde derive.
fn check_then_from_str(c: &Contract, contract: &str, raw: &str) -> bool {
    let vouch::Verdict::Accepted(a) = c.check_str(raw) else { return false };
    let json = a.json();
    match contract {
        "plate_check" => serde_json::from_str::<bench_types::Plate>(&json).is_ok(),
        "eligibility_verdict" => serde_json::from_str::<bench_types::Eligibility>(&json).is_ok(),
        "invoice_extraction" => serde_json::from_str::<bench_types::Invoice>(&json).is_ok(),
        _ => false,
    }
}

const BASE: &str = "serde_json + jsonschema";
const PARSE_HERE: &str = "serde_json parse (in this build: preserve_order)";
const BASE_REFUSALS: &str = "refusals: jsonschema, every error";

fn vouch_rows(corpus: &[Reply], contracts: &Contracts, iterations: usize) -> Vec<Row> {
    let all: Vec<&Reply> = corpus.iter().collect();
    let faulty: Vec<&Reply> = corpus.iter().filter(|r| r.fault.is_some()).collect();
    let strict = |r: &Reply| contracts.strict.get(&r.contract);
    vec![
        // What the feature vouch turns on costs a crate that depends on
        // vouch and parses its own JSON (against the baseline's same row).
        measure(PARSE_HERE, &all, iterations, |r| serde_json::from_str::<Value>(&r.raw).is_ok()),
        measure("serde_json + jsonschema (in this build: preserve_order)", &all, iterations, |r| {
            serde_json::from_str::<Value>(&r.raw)
                .is_ok_and(|v| contracts.oracle.get(&r.contract).is_some_and(|o| o.is_valid(&v)))
        }),
        measure("vouch strict", &all, iterations, |r| strict(r).is_some_and(|c| c.check_str(&r.raw).is_accepted())),
        // What a caller that wants the generic tree pays on top: the
        // accepted value read from the vouched text (refusals as above).
        measure("vouch strict + value()", &all, iterations, |r| {
            strict(r).is_some_and(|c| c.check_str(&r.raw).value().is_some())
        }),
        // The generic tree asked for up front: built in the check's own walk.
        measure("vouch check_as::<Value> (value up front)", &all, iterations, |r| {
            strict(r).is_some_and(|c| c.check_as::<serde_json::Value>(&r.raw).is_ok())
        }),
        measure("vouch check_as::<T>", &all, iterations, |r| {
            strict(r).is_some_and(|c| check_as(c, &r.contract, &r.raw))
        }),
        measure("vouch check, then from_str::<T>(json())", &all, iterations, |r| {
            strict(r).is_some_and(|c| check_then_from_str(c, &r.contract, &r.raw))
        }),
        measure("vouch lenient", &all, iterations, |r| {
            contracts.lenient.get(&r.contract).is_some_and(|c| c.check_str(&r.raw).is_accepted())
        }),
        measure("refusals: vouch, every problem", &faulty, iterations, |r| {
            strict(r).is_some_and(|c| std::hint::black_box(c.check_str(&r.raw)).problems().is_empty())
        }),
    ]
}

/// The peers' rows, from the baseline binary, by corpus file.
fn baseline_rows(
    bin: &Path,
    dir: &Path,
    contracts: &Path,
    iterations: usize,
) -> Result<BTreeMap<String, Vec<Row>>, String> {
    let out = std::process::Command::new(bin)
        .arg(dir)
        .args(["--iterations", &iterations.to_string(), "--contracts"])
        .arg(contracts)
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| {
            format!(
                "cannot run the baseline {} ({e}); build it with: cargo build --release --manifest-path bench/baseline/Cargo.toml --target-dir target",
                bin.display()
            )
        })?;
    if !out.status.success() {
        return Err(format!("the baseline {} failed: {}", bin.display(), out.status));
    }
    let mut rows: BTreeMap<String, Vec<Row>> = BTreeMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        if let Some((file, row)) = corpus::row_of_json(line) {
            rows.entry(file).or_default().push(row);
        }
    }
    Ok(rows)
}

/// Each row of `round` into `best`: its time where it beat the rounds before.
fn keep_best(best: &mut Vec<Row>, round: Vec<Row>) {
    for row in round {
        match best.iter_mut().find(|b| b.name == row.name) {
            Some(b) if row.seconds < b.seconds => *b = row,
            Some(_) => {}
            None => best.push(row),
        }
    }
}

fn seconds(rows: &[Row], name: &str) -> f64 {
    rows.iter().find(|r| r.name == name).map_or(f64::NAN, |r| r.seconds)
}

fn print_table(label: &str, corpus: &[Reply], rows: &[Row]) {
    let bytes: usize = corpus.iter().map(|r| r.raw.len()).sum();
    let faulty = corpus.iter().filter(|r| r.fault.is_some()).count();
    println!("\n{label}: {} replies ({faulty} faulty), {:.1} MB of replies", corpus.len(), bytes as f64 / 1e6);
    println!(
        "{:<56} {:>9} {:>11} {:>9} {:>9} {:>10}",
        "method (peers: bench/baseline, their own build)", "replies", "replies/s", "MB/s", "ratio", "faulty acc"
    );
    for r in rows {
        // A refusal row is held to the peers' refusal row (both over the faulty replies).
        let base = if r.name.starts_with("refusals:") { seconds(rows, BASE_REFUSALS) } else { seconds(rows, BASE) };
        println!(
            "{:<56} {:>9} {:>11.0} {:>9.1} {:>9.2} {:>10}",
            r.name,
            r.replies,
            r.replies as f64 / r.seconds,
            r.bytes as f64 / 1e6 / r.seconds,
            base / r.seconds,
            r.accepted_faulty,
        );
    }
}

fn main() -> std::process::ExitCode {
    let Some(corpus::Args { dir, iterations, contracts: contracts_dir, baseline, rounds }) = corpus::args() else {
        eprintln!("usage: compare CORPUS_DIR [--iterations N] [--rounds N] [--contracts DIR] [--baseline BIN]   (make the corpus with ../shared/bench/gen.py)");
        return std::process::ExitCode::from(2);
    };
    // Built beside this binary by default: target/release/baseline.
    let baseline =
        baseline.or_else(|| Some(std::env::current_exe().ok()?.parent()?.join("baseline"))).unwrap_or_default();
    let run = || -> Result<(), String> {
        let mut loaded = Vec::new();
        for (file, names) in corpus::FILES {
            loaded.push((*file, corpus::load_file(&dir, file)?, load_contracts(&contracts_dir, names)?));
        }
        let mut results: BTreeMap<&str, Vec<Row>> = BTreeMap::new();
        for round in 1..=rounds {
            eprintln!("compare: round {round} of {rounds}: the peers, then vouch");
            let mut peers = baseline_rows(&baseline, &dir, &contracts_dir, iterations)?;
            for (file, corpus, contracts) in &loaded {
                let mut rows = peers.remove(*file).ok_or_else(|| format!("the baseline gave no rows for {file}"))?;
                rows.extend(vouch_rows(corpus, contracts, iterations));
                keep_best(results.entry(file).or_default(), rows);
            }
        }
        for (file, corpus, _) in &loaded {
            print_table(file, corpus, results.get(file).map_or(&[][..], Vec::as_slice));
        }
        println!();
        let ratio = |file: &str, base: &str, name: &str| {
            results.get(file).map_or(f64::NAN, |rows| seconds(rows, base) / seconds(rows, name))
        };
        let from_value = "serde_json + jsonschema + from_value::<T>";
        let from_slice = "serde derive from_slice::<T> (no contract)";
        println!("ratio strict small {:.2}", ratio("small", BASE, "vouch strict"));
        println!("ratio strict large {:.2}", ratio("large", BASE, "vouch strict"));
        println!("ratio lenient small {:.2}", ratio("small", BASE, "vouch lenient"));
        println!("ratio value small {:.2}", ratio("small", BASE, "vouch strict + value()"));
        println!("ratio value large {:.2}", ratio("large", BASE, "vouch strict + value()"));
        let up_front = "vouch check_as::<Value> (value up front)";
        println!("ratio value-up-front small {:.2}", ratio("small", BASE, up_front));
        println!("ratio value-up-front large {:.2}", ratio("large", BASE, up_front));
        println!(
            "ratio check_as/from_value eligibility {:.2}",
            ratio("eligibility", from_value, "vouch check_as::<T>")
        );
        println!("ratio check_as/from_value large {:.2}", ratio("large", from_value, "vouch check_as::<T>"));
        println!(
            "ratio check_as/from_slice eligibility {:.2}",
            ratio("eligibility", from_slice, "vouch check_as::<T>")
        );
        println!("ratio check_as/from_slice large {:.2}", ratio("large", from_slice, "vouch check_as::<T>"));
        println!("ratio refusals small {:.2}", ratio("small", BASE_REFUSALS, "refusals: vouch, every problem"));
        println!("ratio refusals large {:.2}", ratio("large", BASE_REFUSALS, "refusals: vouch, every problem"));
        println!(
            "ratio handicap small {:.2} (the peers' build over this one's, for serde_json + jsonschema)",
            ratio("small", BASE, "serde_json + jsonschema (in this build: preserve_order)").recip()
        );
        for file in ["small", "large"] {
            println!(
                "ratio preserve_order-cost {file} {:.2} (serde_json parse to Value: the peers' build over this one's)",
                ratio(file, "serde_json parse", PARSE_HERE).recip()
            );
        }
        let faulty = |name: &str| -> usize {
            ["small", "large"]
                .iter()
                .filter_map(|f| results.get(f)?.iter().find(|r| r.name == name))
                .map(|r| r.accepted_faulty)
                .sum()
        };
        let truncated: usize = ["small", "large"]
            .iter()
            .filter_map(|f| results.get(f)?.iter().find(|r| r.name == "vouch lenient"))
            .map(|r| r.accepted_truncated)
            .sum();
        println!("accepted-faulty strict {}", faulty("vouch strict"));
        println!("accepted-faulty check_as {}", faulty("vouch check_as::<T>"));
        println!("accepted-truncated lenient {truncated}");
        Ok(())
    };
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("compare: {e}");
            std::process::ExitCode::from(1)
        }
    }
}
