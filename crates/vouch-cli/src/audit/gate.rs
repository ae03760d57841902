//! `vouch audit --against CMD`: the user's own gate, in any language, on
//! every hostile reply. A fail-open is a reply the gate passed while the
//! contract's verdict is not a pass.

use std::collections::BTreeMap;
use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rayon::prelude::*;
use serde_json::json;

use super::{show, Args, Judged};

/// What the gate did with one reply.
#[derive(Debug, Clone, PartialEq)]
enum GateSaid {
    Passed,
    Refused(Option<i32>),
    TimedOut,
    CouldNotRun(String),
}

fn run_gate(cmd: &str, raw: &[u8], timeout: Duration) -> GateSaid {
    let child =
        Command::new("sh").arg("-c").arg(cmd).stdin(Stdio::piped()).stdout(Stdio::null()).stderr(Stdio::null()).spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => return GateSaid::CouldNotRun(e.to_string()),
    };
    // Feed stdin from another thread: a gate that stops reading must not block us.
    let feeder = child.stdin.take().map(|mut stdin| {
        let raw = raw.to_vec();
        std::thread::spawn(move || {
            let _ = stdin.write_all(&raw);
        })
    });
    let started = Instant::now();
    let said = loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => break GateSaid::Passed,
            Ok(Some(status)) => break GateSaid::Refused(status.code()),
            Ok(None) if started.elapsed() >= timeout => {
                let _ = child.kill();
                let _ = child.wait();
                break GateSaid::TimedOut;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(2)),
            Err(e) => break GateSaid::CouldNotRun(e.to_string()),
        }
    };
    if let Some(f) = feeder {
        let _ = f.join();
    }
    said
}

pub fn run(args: &Args, cmd: &str, judged: &[Judged]) -> u8 {
    let timeout = Duration::from_secs_f64(args.timeout.max(0.01));
    let pool = match rayon::ThreadPoolBuilder::new().num_threads(args.jobs.unwrap_or(0)).build() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("vouch: cannot start workers: {e}");
            return crate::load::EXIT_USAGE;
        }
    };
    let said: Vec<GateSaid> =
        pool.install(|| judged.par_iter().map(|j| run_gate(cmd, &j.hostile.raw, timeout)).collect());
    if let Some(GateSaid::CouldNotRun(e)) = said.iter().find(|s| matches!(s, GateSaid::CouldNotRun(_))) {
        eprintln!("vouch: could not run the gate {cmd:?}: {e}");
        return crate::load::EXIT_USAGE;
    }
    let mut fail_open: BTreeMap<&str, Vec<&Judged>> = BTreeMap::new();
    let mut over_strict: Vec<(&Judged, &GateSaid)> = Vec::new();
    for (j, s) in judged.iter().zip(&said) {
        let passed = *s == GateSaid::Passed;
        if passed && !j.verdict.is_pass() {
            fail_open.entry(j.hostile.class).or_default().push(j);
        }
        if !passed && j.verdict.is_pass() {
            over_strict.push((j, s));
        }
    }
    let hostile = judged.iter().filter(|j| j.hostile.hostile).count();
    let k: usize = fail_open.values().map(Vec::len).sum();
    if args.json {
        let open: Vec<_> = fail_open
            .values()
            .flatten()
            .map(|j| json!({"class": j.hostile.class, "name": j.hostile.name, "reply": show(&j.hostile.raw), "vouch": j.why()}))
            .collect();
        let strict: Vec<_> = over_strict
            .iter()
            .map(|(j, s)| json!({"class": j.hostile.class, "name": j.hostile.name, "reply": show(&j.hostile.raw), "gate": format!("{s:?}")}))
            .collect();
        outln!("{}", json!({"hostile": hostile, "passed_your_gate": k, "fail_open": open, "over_strict": strict}));
    } else {
        if k > 0 {
            outln!("FAIL-OPEN: your gate passed these replies; the contract does not:");
            for (class, list) in &fail_open {
                outln!("\n  {class} ({})", list.len());
                for j in list {
                    outln!("    {:<44} {}", j.hostile.name, show(&j.hostile.raw));
                    outln!("    {:<44} vouch: {}", "", j.why());
                }
            }
            outln!();
        }
        if !over_strict.is_empty() {
            outln!("Over-strict: your gate refused these replies; the contract passes them:");
            for (j, s) in &over_strict {
                outln!("    {:<16} {:<44} {} ({s:?})", j.hostile.class, j.hostile.name, show(&j.hostile.raw));
            }
            outln!();
        }
        outln!("{hostile} hostile replies, {k} passed your gate");
    }
    u8::from(k > 0)
}
