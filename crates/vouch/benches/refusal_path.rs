//! Per-reply cost of the accepted path against the refusal path (a refused
//! verdict with its full problem report), on comparable replies.
//!
//! The replies are the valid replies at the head of the corpus (`SMALL` lines
//! of small.jsonl, `LARGE` of large.jsonl), each re-serialised pretty-printed,
//! and the same replies with one field broken, serialised the same way, so the
//! two sides differ by a few bytes only:
//!
//! - `wrong_type_first`: the first property gets a value of another type
//!   (a boolean becomes `"no"`, a string `42`, a number `"42"`, an array or
//!   object `"n/a"`);
//! - `wrong_type_last`: the same on the last property (the whole reply is
//!   read and checked before the fault is met);
//! - `out_of_range`: a number outside its bounds, where the contract has one
//!   (eligibility_verdict `/matchScore` = 1000, invoice_extraction the last
//!   line item's `taxRate` = 7).
//!
//! Checked with the strict contracts (the lenient ones would repair some of
//! these). How to read it: criterion reports, per group
//! `refusal_path/CONTRACT`, the time of one iteration (every reply of the set
//! once) for `accepted` and for each broken variant, and the throughput in
//! replies per second (elem/s); `thrpt(accepted) / thrpt(variant)` is the
//! refusal-to-accepted cost ratio per reply (when every reply could be broken,
//! the sets hold the same replies and `time(variant) / time(accepted)` is the
//! same figure). Floor (issue 6): at most 3. Before criterion runs, the
//! bench prints that ratio from a quick best-of-7 timing (accepted and
//! refused passes interleaved), one line per contract and variant, ending
//! `refusal ratio CONTRACT VARIANT R`.
//!
//! `cargo bench -p vouch --bench refusal_path`

mod common;

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, SamplingMode, Throughput};
use serde_json::{Map, Value};
use vouch::Contract;

/// Lines read from the head of small.jsonl.
const SMALL: usize = 4_000;
/// Lines read from the head of large.jsonl.
const LARGE: usize = 200;
/// Floor of issue 6: refused per reply at most this many times accepted.
const FLOOR: f64 = 3.0;

/// A value of another type than `v`'s.
fn other_type(v: &Value) -> Value {
    match v {
        Value::Bool(_) => Value::from("no"),
        Value::String(_) => Value::from(42),
        Value::Number(_) => Value::from("42"),
        Value::Null => Value::from(false),
        Value::Array(_) | Value::Object(_) => Value::from("n/a"),
    }
}

fn break_first(map: &mut Map<String, Value>) -> Option<()> {
    let v = map.values_mut().next()?;
    *v = other_type(v);
    Some(())
}

fn break_last(map: &mut Map<String, Value>) -> Option<()> {
    let v = map.values_mut().last()?;
    *v = other_type(v);
    Some(())
}

fn out_of_range(contract: &str, map: &mut Map<String, Value>) -> Option<()> {
    match contract {
        "eligibility_verdict" => *map.get_mut("matchScore")? = Value::from(1000),
        "invoice_extraction" => {
            let item = map.get_mut("lineItems")?.as_array_mut()?.last_mut()?.as_object_mut()?;
            *item.get_mut("taxRate")? = Value::from(7);
        }
        _ => return None,
    }
    Some(())
}

type Breaker = fn(&str, &mut Map<String, Value>) -> Option<()>;

const VARIANTS: [(&str, Breaker); 3] = [
    ("wrong_type_first", |_, m| break_first(m)),
    ("wrong_type_last", |_, m| break_last(m)),
    ("out_of_range", out_of_range),
];

/// One contract's comparable sets: the accepted replies and each broken variant.
struct Sets {
    contract: &'static str,
    accepted: Vec<String>,
    /// Per variant: the originals that could be broken that way, and their twins.
    broken: Vec<(&'static str, Vec<String>, Vec<String>)>,
}

/// The valid replies of `name`, re-serialised, and their broken twins; only
/// replies whose original is accepted and whose twin is refused are kept, so
/// every set measures the path it names.
fn sets(name: &'static str, replies: &[common::Reply], contract: &Contract) -> Sets {
    let objects: Vec<Map<String, Value>> = replies
        .iter()
        .filter(|r| r.contract == name && r.fault.is_none())
        .filter_map(|r| match serde_json::from_str::<Value>(&r.raw) {
            Ok(Value::Object(m)) => Some(m),
            _ => None,
        })
        .collect();
    let pretty = |m: &Map<String, Value>| serde_json::to_string_pretty(m).ok();
    let accepted: Vec<String> = objects.iter().filter_map(pretty).collect();
    let mut broken = Vec::new();
    for (variant, breaker) in VARIANTS {
        let mut good = Vec::new();
        let mut bad = Vec::new();
        for m in &objects {
            let mut twin = m.clone();
            if breaker(name, &mut twin).is_none() {
                continue;
            }
            let (Some(g), Some(b)) = (pretty(m), pretty(&twin)) else { continue };
            if contract.check(&g).is_accepted() && !contract.check(&b).is_accepted() {
                good.push(g);
                bad.push(b);
            }
        }
        if bad.is_empty() {
            continue;
        }
        if good.len() != accepted.len() {
            println!("  {name}/{variant}: {} of {} replies could be broken that way", good.len(), accepted.len());
        }
        broken.push((variant, good, bad));
    }
    Sets { contract: name, accepted, broken }
}

/// One pass over `set`, per reply.
fn pass(contract: &Contract, set: &[String]) -> Duration {
    let t = Instant::now();
    for raw in set {
        black_box(contract.check(black_box(raw)));
    }
    t.elapsed() / u32::try_from(set.len().max(1)).unwrap_or(u32::MAX)
}

/// Per reply, the best of `passes` passes over each set, the passes of the
/// two sets interleaved so that a busy spell on the machine hits both alike.
fn per_reply_pair(contract: &Contract, good: &[String], bad: &[String], passes: usize) -> (Duration, Duration) {
    (0..passes)
        .fold((Duration::MAX, Duration::MAX), |(g, b), _| (g.min(pass(contract, good)), b.min(pass(contract, bad))))
}

fn main() {
    let Some(shared) = common::shared_bench() else { return };
    let Some(dir) = common::corpus_dir(&shared) else { return };
    let Some(small) = common::load_corpus(&dir.join("small.jsonl"), SMALL) else { return };
    let Some(large) = common::load_corpus(&dir.join("large.jsonl"), LARGE) else { return };
    let Some(strict) = common::bench_contracts(&shared, "schema") else { return };

    let mut all = Vec::new();
    for (name, replies) in [("plate_check", &small), ("eligibility_verdict", &small), ("invoice_extraction", &large)] {
        let Some(contract) = strict.get(name) else { continue };
        all.push((contract, sets(name, replies, contract)));
    }

    println!("refusal path vs accepted path, per reply (quick best-of-7, before criterion; floor: ratio <= {FLOOR}):");
    let mut lines = Vec::new();
    for (contract, s) in &all {
        for (variant, good, bad) in &s.broken {
            let (accepted, refused) = per_reply_pair(contract, good, bad, 7);
            let ratio = refused.as_secs_f64() / accepted.as_secs_f64().max(1e-12);
            let mark = if ratio <= FLOOR { "" } else { "  OVER THE FLOOR" };
            println!(
                "  {:<20} {:<17} accepted {:>8.2} µs  refused {:>8.2} µs  ratio {ratio:.2}{mark}",
                s.contract,
                variant,
                accepted.as_secs_f64() * 1e6,
                refused.as_secs_f64() * 1e6
            );
            lines.push(format!("refusal ratio {} {variant} {ratio:.2}", s.contract));
        }
    }
    for l in &lines {
        println!("{l}");
    }
    println!(
        "(criterion below: in each group refusal_path/CONTRACT, thrpt(accepted) / thrpt(variant) is the same ratio)"
    );

    let mut c = Criterion::default().configure_from_args();
    for (contract, s) in &all {
        let mut group = c.benchmark_group(format!("refusal_path/{}", s.contract));
        group.sampling_mode(SamplingMode::Flat).sample_size(20).warm_up_time(Duration::from_secs(1));
        group.throughput(Throughput::Elements(s.accepted.len() as u64));
        group.bench_function("accepted", |b| {
            b.iter(|| {
                for raw in &s.accepted {
                    black_box(contract.check(black_box(raw)));
                }
            });
        });
        for (variant, _, set) in &s.broken {
            group.throughput(Throughput::Elements(set.len() as u64));
            group.bench_function(*variant, |b| {
                b.iter(|| {
                    for raw in set {
                        black_box(contract.check(black_box(raw)));
                    }
                });
            });
        }
        group.finish();
    }
    c.final_summary();
}
