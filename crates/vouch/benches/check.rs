//! `Contract::check` throughput (bytes of raw reply per second) on the
//! benchmark corpus (`$VOUCH_SHARED/bench/gen.py`, generated into
//! `target/bench-corpus` when missing), split by valid (`fault == null`) and
//! faulty replies, with the strict contracts (`*.schema.json`) and the lenient
//! ones (`*.lenient.json`: unwraps and repairs).
//!
//! A fixed subset keeps one iteration short: the first `SMALL` replies of
//! small.jsonl (plate_check and eligibility_verdict) and the first `LARGE` of
//! large.jsonl (invoice_extraction, 2–60 KB each). Each reply is checked
//! against its own contract; the verdict (value, repairs, problems) is built
//! and dropped, as a caller would.
//!
//! `cargo bench -p vouch --bench check` (filter: `-- check/large`).

mod common;

use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, SamplingMode, Throughput};
use vouch::Contract;

/// Replies taken from the head of small.jsonl.
const SMALL: usize = 4_000;
/// Replies taken from the head of large.jsonl.
const LARGE: usize = 200;

/// The (contract, raw) pairs of one slice of the corpus.
fn pairs<'a>(
    replies: &'a [common::Reply],
    contracts: &'a BTreeMap<String, Contract>,
    valid: bool,
) -> Vec<(&'a Contract, &'a str)> {
    replies
        .iter()
        .filter(|r| r.fault.is_none() == valid)
        .filter_map(|r| Some((contracts.get(&r.contract)?, r.raw.as_str())))
        .collect()
}

fn main() {
    let Some(shared) = common::shared_bench() else { return };
    let Some(dir) = common::corpus_dir(&shared) else { return };
    let Some(small) = common::load_corpus(&dir.join("small.jsonl"), SMALL) else { return };
    let Some(large) = common::load_corpus(&dir.join("large.jsonl"), LARGE) else { return };
    let Some(strict) = common::bench_contracts(&shared, "schema") else { return };
    let Some(lenient) = common::bench_contracts(&shared, "lenient") else { return };

    let mut c = Criterion::default().configure_from_args();
    for (file, replies) in [("small", &small), ("large", &large)] {
        let mut group = c.benchmark_group(format!("check/{file}"));
        // One iteration is milliseconds (the whole subset): flat sampling, fewer samples.
        group.sampling_mode(SamplingMode::Flat).sample_size(20).warm_up_time(Duration::from_secs(1));
        for (mode, contracts) in [("strict", &strict), ("lenient", &lenient)] {
            for (split, valid) in [("valid", true), ("faulty", false)] {
                let set = pairs(replies, contracts, valid);
                let bytes = common::bytes_of(set.iter().map(|(_, raw)| *raw));
                let accepted = set.iter().filter(|(c, raw)| c.check(raw).is_accepted()).count();
                println!(
                    "check/{file}/{mode}/{split}: {} replies, {:.2} MB, {accepted} accepted",
                    set.len(),
                    bytes as f64 / 1e6
                );
                // The strict contracts are the corpus's ground truth: all valid in, all faulty out.
                let expected = if valid { set.len() } else { 0 };
                if mode == "strict" && accepted != expected {
                    println!("  !!! strict: expected {expected} accepted (every valid reply, no faulty one)");
                }
                group.throughput(Throughput::Bytes(bytes));
                group.bench_function(format!("{mode}/{split}"), |b| {
                    b.iter(|| {
                        for (contract, raw) in &set {
                            black_box(contract.check(black_box(raw)));
                        }
                    });
                });
            }
        }
        group.finish();
    }
    c.final_summary();
}
