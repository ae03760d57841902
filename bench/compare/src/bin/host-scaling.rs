//! `host-scaling CORPUS_FILE [--contracts DIR] [--rounds N]`: how far this
//! machine lets vouch's check scale from one thread to two, with nothing
//! else in the way (no binding, no I/O, no hand-over): the corpus's replies
//! checked in Rust on rayon, in chunks of 32, on a pool of one thread and
//! on a pool of two, the two taking turns `--rounds` times (5 unless told),
//! each keeping its best.
//!
//! The bindings' and `vouch batch`'s scaling floors (1.8× on two cores)
//! are measured on shared virtual machines whose two cores do not always
//! add up to two: this is the ceiling they run under on the same host at
//! the same hour, printed beside them by `bench/python/run`,
//! `bench/node/run` and `bench/batch-scaling`.
//!
//! Output: one line for people, then `host-scaling ratio R`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use rayon::prelude::*;
use vouch::Contract;

#[path = "../../../types/corpus.rs"]
#[allow(dead_code)]
mod corpus;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let (mut file, mut contracts, mut rounds) = (None, PathBuf::from("../shared/bench/contracts"), 5usize);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--contracts" => contracts = args.next().map(PathBuf::from).unwrap_or(contracts),
            "--rounds" => rounds = args.next().and_then(|n| n.parse().ok()).filter(|n| *n > 0).unwrap_or(5),
            _ => file = Some(PathBuf::from(a)),
        }
    }
    let Some(file) = file else {
        eprintln!(
            "usage: host-scaling CORPUS_FILE [--contracts DIR] [--rounds N]   (e.g. target/bench-corpus/small.jsonl)"
        );
        return ExitCode::from(2);
    };
    match run(&file, &contracts, rounds) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("host-scaling: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(file: &Path, dir: &Path, rounds: usize) -> Result<(), String> {
    let replies = corpus::load_corpus(file)?;
    let mut contracts = BTreeMap::new();
    for reply in &replies {
        if !contracts.contains_key(&reply.contract) {
            let path = dir.join(format!("{}.schema.json", reply.contract));
            let doc = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            let compiled = Contract::from_json_str(&doc).map_err(|e| format!("{}: {e}", reply.contract))?;
            contracts.insert(reply.contract.clone(), compiled);
        }
    }
    let checked: Vec<(&Contract, &str)> =
        replies.iter().filter_map(|r| Some((contracts.get(&r.contract)?, r.raw.as_str()))).collect();
    let pool = |threads| rayon::ThreadPoolBuilder::new().num_threads(threads).build().map_err(|e| e.to_string());
    let (one, two) = (pool(1)?, pool(2)?);
    let (mut best_one, mut best_two) = (0f64, 0f64);
    let mut accepted = 0;
    for _ in 0..rounds {
        for (threads, best) in [(&one, &mut best_one), (&two, &mut best_two)] {
            let start = Instant::now();
            accepted = threads.install(|| {
                checked
                    .par_chunks(32)
                    .map(|chunk| chunk.iter().filter(|(c, raw)| c.check_str(raw).is_accepted()).count())
                    .sum::<usize>()
            });
            *best = best.max(checked.len() as f64 / start.elapsed().as_secs_f64());
        }
    }
    let ratio = best_two / best_one;
    println!(
        "host-scaling: vouch's check in Rust on rayon, {} replies ({accepted} accepted), 1 thread {:.0}/s, 2 threads {:.0}/s: {ratio:.2}x (best of {rounds}, taking turns)",
        checked.len(),
        best_one,
        best_two
    );
    println!("host-scaling ratio {ratio:.2}");
    Ok(())
}
