//! `baseline CORPUS_DIR [--iterations N] [--contracts DIR]`: the rows of
//! `bench/compare` that do not use vouch — what users run today (parse,
//! validate, deserialize) — built in a workspace of their own, as those
//! users build them. Prints a table on standard error and one JSON line per
//! row on standard output (`compare` runs this binary and reads them).

#[path = "../../types/bench_types.rs"]
mod bench_types;
#[path = "../../types/corpus.rs"]
#[allow(dead_code)]
mod corpus;

use std::collections::BTreeMap;
use std::path::Path;

use corpus::{measure, Reply, Row};
use serde_json::Value;

fn validators(dir: &Path, names: &[&str]) -> Result<BTreeMap<String, jsonschema::Validator>, String> {
    let mut out = BTreeMap::new();
    for name in names {
        let p = dir.join(format!("{name}.schema.json"));
        let text = std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
        let doc: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
        out.insert((*name).to_owned(), jsonschema::validator_for(&doc).map_err(|e| format!("{name}: {e}"))?);
    }
    Ok(out)
}

/// The reply as the contract's Rust type, from a tree already parsed.
fn from_value(contract: &str, v: Value) -> bool {
    match contract {
        "plate_check" => serde_json::from_value::<bench_types::Plate>(v).is_ok(),
        "eligibility_verdict" => serde_json::from_value::<bench_types::Eligibility>(v).is_ok(),
        "invoice_extraction" => serde_json::from_value::<bench_types::Invoice>(v).is_ok(),
        _ => false,
    }
}

/// The reply as the contract's Rust type, straight from its bytes (no contract).
fn from_slice(contract: &str, raw: &[u8]) -> bool {
    match contract {
        "plate_check" => serde_json::from_slice::<bench_types::Plate>(raw).is_ok(),
        "eligibility_verdict" => serde_json::from_slice::<bench_types::Eligibility>(raw).is_ok(),
        "invoice_extraction" => serde_json::from_slice::<bench_types::Invoice>(raw).is_ok(),
        _ => false,
    }
}

fn rows(corpus: &[Reply], oracle: &BTreeMap<String, jsonschema::Validator>, iterations: usize) -> Vec<Row> {
    let all: Vec<&Reply> = corpus.iter().collect();
    let faulty: Vec<&Reply> = corpus.iter().filter(|r| r.fault.is_some()).collect();
    let valid = |r: &Reply, v: &Value| oracle.get(&r.contract).is_some_and(|o| o.is_valid(v));
    vec![
        measure("serde_json parse", &all, iterations, |r| serde_json::from_str::<Value>(&r.raw).is_ok()),
        measure("serde_json + jsonschema", &all, iterations, |r| {
            serde_json::from_str::<Value>(&r.raw).is_ok_and(|v| valid(r, &v))
        }),
        measure("serde_json + jsonschema + from_value::<T>", &all, iterations, |r| {
            serde_json::from_str::<Value>(&r.raw).is_ok_and(|v| valid(r, &v) && from_value(&r.contract, v))
        }),
        measure("serde derive from_slice::<T> (no contract)", &all, iterations, |r| {
            from_slice(&r.contract, r.raw.as_bytes())
        }),
        measure("simd-json parse", &all, iterations, |r| {
            // simd-json parses in place, so it needs its own copy of the bytes.
            let mut buf = r.raw.clone().into_bytes();
            let ok = simd_json::to_borrowed_value(&mut buf).is_ok();
            ok
        }),
        // The refusal a user can show: every error, each with its path, as
        // vouch's report has every problem with its path.
        measure("refusals: jsonschema, every error", &faulty, iterations, |r| {
            let errors: Vec<(String, String)> = match serde_json::from_str::<Value>(&r.raw) {
                Err(e) => vec![(String::new(), e.to_string())],
                Ok(v) => oracle.get(&r.contract).map_or_else(Vec::new, |o| {
                    o.iter_errors(&v).map(|e| (e.instance_path().to_string(), e.to_string())).collect()
                }),
            };
            std::hint::black_box(&errors).is_empty()
        }),
    ]
}

fn main() -> std::process::ExitCode {
    let Some(corpus::Args { dir, iterations, contracts, .. }) = corpus::args() else {
        eprintln!("usage: baseline CORPUS_DIR [--iterations N] [--contracts DIR]");
        return std::process::ExitCode::from(2);
    };
    let run = || -> Result<(), String> {
        for (file, names) in corpus::FILES {
            let corpus = corpus::load_file(&dir, file)?;
            let oracle = validators(&contracts, names)?;
            for r in rows(&corpus, &oracle, iterations) {
                eprintln!("baseline {file}: {:<44} {:>9.1} MB/s", r.name, r.bytes as f64 / 1e6 / r.seconds);
                println!("{}", corpus::row_json(file, &r));
            }
        }
        Ok(())
    };
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("baseline: {e}");
            std::process::ExitCode::from(1)
        }
    }
}
