//! `compare CORPUS_DIR [--iterations N]`: in one process, on one core, over
//! the benchmark corpus held in memory, the throughput of vouch and of what
//! users would otherwise run (parse, then validate), and how many faulty
//! replies each accepts. Ends with machine-readable `ratio …` lines.
//!
//! The corpus comes from `../shared/bench/gen.py` (see its README).

mod typed;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;
use vouch::Contract;

/// One reply of the corpus.
struct Reply {
    contract: String,
    raw: String,
    fault: Option<String>,
}

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

fn load_corpus(path: &Path) -> Result<Vec<Reply>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    // `COMPARE_SUBSET=valid|faulty|FAULT` keeps only those replies (to split
    // the cost); FAULT is one fault kind of the corpus (`truncated`, `prose`…).
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

/// One measured method: accepts a reply or not.
struct Row {
    name: &'static str,
    seconds: f64,
    accepted_faulty: usize,
    accepted_truncated: usize,
}

/// Time `accept` over the corpus: best of `iterations` passes (the machine's
/// noise only ever slows a pass down).
fn measure(name: &'static str, corpus: &[Reply], iterations: usize, accept: impl Fn(&Reply) -> bool) -> Row {
    // `COMPARE_ONLY=name` runs one method alone, for a profiler.
    if std::env::var("COMPARE_ONLY").is_ok_and(|only| only != name) {
        return Row { name, seconds: f64::NAN, accepted_faulty: 0, accepted_truncated: 0 };
    }
    let mut best = Duration::MAX;
    let (mut faulty, mut truncated) = (0, 0);
    for _ in 0..iterations.max(1) {
        let started = Instant::now();
        let (mut f, mut t) = (0, 0);
        for r in corpus {
            if std::hint::black_box(accept(r)) {
                if r.fault.is_some() {
                    f += 1;
                }
                if r.fault.as_deref() == Some("truncated") {
                    t += 1;
                }
            }
        }
        best = best.min(started.elapsed());
        (faulty, truncated) = (f, t);
    }
    Row { name, seconds: best.as_secs_f64(), accepted_faulty: faulty, accepted_truncated: truncated }
}

struct FileResult {
    rows: Vec<Row>,
}

impl FileResult {
    fn seconds(&self, name: &str) -> f64 {
        self.rows.iter().find(|r| r.name == name).map_or(f64::NAN, |r| r.seconds)
    }
    fn row(&self, name: &str) -> Option<&Row> {
        self.rows.iter().find(|r| r.name == name)
    }
}

fn run_file(label: &str, corpus: &[Reply], contracts: &Contracts, iterations: usize) -> FileResult {
    let bytes: usize = corpus.iter().map(|r| r.raw.len()).sum();
    let faulty = corpus.iter().filter(|r| r.fault.is_some()).count();
    let any = Contract::from_json_str("{}").unwrap_or_else(|_| unreachable!("{{}} compiles"));
    println!("\n{label}: {} replies ({faulty} faulty), {:.1} MB of replies", corpus.len(), bytes as f64 / 1e6);
    let rows = vec![
        measure("serde_json parse", corpus, iterations, |r| serde_json::from_str::<Value>(&r.raw).is_ok()),
        measure("serde_json + jsonschema", corpus, iterations, |r| {
            serde_json::from_str::<Value>(&r.raw)
                .is_ok_and(|v| contracts.oracle.get(&r.contract).is_some_and(|o| o.is_valid(&v)))
        }),
        measure("simd-json parse", corpus, iterations, |r| {
            // simd-json parses in place, so it needs its own copy of the bytes.
            let mut buf = r.raw.clone().into_bytes();
            let ok = simd_json::to_borrowed_value(&mut buf).is_ok();
            ok
        }),
        measure("serde derive (typed)", corpus, iterations, |r| typed::accepts(&r.contract, &r.raw)),
        measure("vouch reader only ({})", corpus, iterations, |r| any.check_str(&r.raw).is_accepted()),
        measure("vouch strict", corpus, iterations, |r| {
            contracts.strict.get(&r.contract).is_some_and(|c| c.check_str(&r.raw).is_accepted())
        }),
        // What a caller that wants the generic tree pays on top: the
        // accepted value read from the vouched text (refusals as above).
        measure("vouch strict + value()", corpus, iterations, |r| {
            contracts.strict.get(&r.contract).is_some_and(|c| c.check_str(&r.raw).value().is_some())
        }),
        measure("vouch lenient", corpus, iterations, |r| {
            contracts.lenient.get(&r.contract).is_some_and(|c| c.check_str(&r.raw).is_accepted())
        }),
    ];
    let base = rows.iter().find(|r| r.name == "serde_json + jsonschema").map_or(f64::NAN, |r| r.seconds);
    println!(
        "{:<26} {:>12} {:>9} {:>9} {:>16} {:>10}",
        "method", "replies/s", "MB/s", "ratio", "faulty accepted", "truncated"
    );
    for r in &rows {
        println!(
            "{:<26} {:>12.0} {:>9.1} {:>9.2} {:>16} {:>10}",
            r.name,
            corpus.len() as f64 / r.seconds,
            bytes as f64 / 1e6 / r.seconds,
            base / r.seconds,
            r.accepted_faulty,
            r.accepted_truncated
        );
    }
    FileResult { rows }
}

fn main() -> std::process::ExitCode {
    let mut args = std::env::args().skip(1);
    let mut dir: Option<PathBuf> = None;
    let mut iterations = 5;
    let mut contracts_dir = PathBuf::from("../shared/bench/contracts");
    while let Some(a) = args.next() {
        match a.as_str() {
            "--iterations" => iterations = args.next().and_then(|n| n.parse().ok()).unwrap_or(5),
            "--contracts" => contracts_dir = args.next().map(PathBuf::from).unwrap_or(contracts_dir),
            _ => dir = Some(PathBuf::from(a)),
        }
    }
    let Some(dir) = dir else {
        eprintln!("usage: compare CORPUS_DIR [--iterations N] [--contracts DIR]   (make the corpus with ../shared/bench/gen.py)");
        return std::process::ExitCode::from(2);
    };
    let run = || -> Result<(), String> {
        let small = load_corpus(&dir.join("small.jsonl"))?;
        let large = load_corpus(&dir.join("large.jsonl"))?;
        let small_contracts = load_contracts(&contracts_dir, &["plate_check", "eligibility_verdict"])?;
        let large_contracts = load_contracts(&contracts_dir, &["invoice_extraction"])?;
        let s = run_file("small", &small, &small_contracts, iterations);
        let l = run_file("large", &large, &large_contracts, iterations);
        let base = "serde_json + jsonschema";
        println!();
        println!("ratio strict small {:.2}", s.seconds(base) / s.seconds("vouch strict"));
        println!("ratio strict large {:.2}", l.seconds(base) / l.seconds("vouch strict"));
        println!("ratio lenient small {:.2}", s.seconds(base) / s.seconds("vouch lenient"));
        let faulty = s.row("vouch strict").map_or(0, |r| r.accepted_faulty)
            + l.row("vouch strict").map_or(0, |r| r.accepted_faulty);
        let truncated = s.row("vouch lenient").map_or(0, |r| r.accepted_truncated)
            + l.row("vouch lenient").map_or(0, |r| r.accepted_truncated);
        println!("accepted-faulty strict {faulty}");
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
