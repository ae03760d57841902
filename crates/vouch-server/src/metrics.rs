//! Prometheus metrics, kept in memory per replica and written in the text
//! exposition format at `/metrics`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use vouch_llm::Outcome;

/// Upper bounds of the upstream latency histogram, in seconds.
const LATENCY_BUCKETS: [f64; 14] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0];
/// Upper bounds of the rounds-per-ask histogram.
const ROUND_BUCKETS: [f64; 5] = [1.0, 2.0, 3.0, 5.0, 10.0];
/// Upper bounds of the job latency histograms, in seconds.
const JOB_BUCKETS: [f64; 14] = [0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 900.0, 3600.0];

#[derive(Default)]
struct Histogram {
    counts: Vec<u64>,
    sum: f64,
    count: u64,
}

impl Histogram {
    fn observe(&mut self, bounds: &[f64], v: f64) {
        if self.counts.len() != bounds.len() {
            self.counts = vec![0; bounds.len()];
        }
        for (c, b) in self.counts.iter_mut().zip(bounds) {
            if v <= *b {
                *c = c.saturating_add(1);
            }
        }
        self.sum += v;
        self.count = self.count.saturating_add(1);
    }

    fn write(&self, out: &mut String, name: &str, labels: &str, bounds: &[f64]) {
        let sep = if labels.is_empty() { "" } else { "," };
        for (i, b) in bounds.iter().enumerate() {
            let c = self.counts.get(i).copied().unwrap_or(0);
            let _ = writeln!(out, "{name}_bucket{{{labels}{sep}le=\"{b}\"}} {c}");
        }
        let _ = writeln!(out, "{name}_bucket{{{labels}{sep}le=\"+Inf\"}} {}", self.count);
        let braces = if labels.is_empty() { String::new() } else { format!("{{{labels}}}") };
        let _ = writeln!(out, "{name}_sum{braces} {}", self.sum);
        let _ = writeln!(out, "{name}_count{braces} {}", self.count);
    }
}

#[derive(Default)]
struct Series {
    /// `name{labels}` → value, per counter family.
    counters: BTreeMap<&'static str, BTreeMap<String, u64>>,
    latency: BTreeMap<String, Histogram>,
    rounds: BTreeMap<String, Histogram>,
    job_wait: Histogram,
    job_run: Histogram,
    job_total: Histogram,
}

/// The gateway's metrics.
#[derive(Default)]
pub struct Metrics {
    series: Mutex<Series>,
    in_flight: AtomicI64,
    jobs_queued: AtomicI64,
    jobs_running: AtomicI64,
}

/// A label value as Prometheus reads it (`\`, `"` and line breaks escaped).
fn label(v: &str) -> std::borrow::Cow<'_, str> {
    if v.contains(['\\', '"', '\n']) {
        v.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n").into()
    } else {
        v.into()
    }
}

const HELP: [(&str, &str); 13] = [
    ("vouch_http_requests_total", "HTTP requests answered, by route and status."),
    ("vouch_verdicts_total", "Asks ended, by contract, outcome (accepted, fallback, refused) and problem code."),
    ("vouch_rounds_total", "Upstream requests made, by contract."),
    ("vouch_tokens_total", "Tokens reported by the upstream, by direction (in: prompt, out: completion)."),
    ("vouch_early_refusals_total", "Streamed replies dropped as soon as the streaming check refused them."),
    ("vouch_tokens_saved_total", "Completion tokens not generated thanks to early refusal (max_tokens minus tokens received, when the request set max_tokens)."),
    ("vouch_config_reloads_total", "Contract reloads, by result."),
    ("vouch_limit_refusals_total", "Requests refused by a limit, by limit (body_size, body_time, concurrency)."),
    ("vouch_jobs_submitted_total", "Jobs posted and kept (a replayed idempotent POST is not counted)."),
    ("vouch_jobs_rejected_total", "Jobs refused at POST, by reason (queue_full)."),
    ("vouch_jobs_finished_total", "Jobs whose result this replica recorded, by outcome (accepted, fallback, refused, cancelled)."),
    ("vouch_jobs_results_discarded_total", "Runs that ended after their job was cancelled or taken over: nothing recorded."),
    ("vouch_webhook_deliveries_total", "Webhook tries, by result (delivered, retried, failed)."),
];

impl Series {
    /// Add `n` to a counter (the labels are copied only the first time).
    fn bump(&mut self, family: &'static str, labels: &str, n: u64) {
        let series = self.counters.entry(family).or_default();
        match series.get_mut(labels) {
            Some(v) => *v = v.saturating_add(n),
            None => {
                series.insert(labels.to_owned(), n);
            }
        }
    }
}

impl Metrics {
    fn add(&self, family: &'static str, labels: String, n: u64) {
        if let Ok(mut s) = self.series.lock() {
            s.bump(family, &labels, n);
        }
    }

    /// One HTTP request answered.
    pub fn request(&self, route: &str, status: u16) {
        self.add("vouch_http_requests_total", format!("route=\"{}\",status=\"{status}\"", label(route)), 1);
    }

    /// A request refused by a limit.
    pub fn limit(&self, which: &str) {
        self.add("vouch_limit_refusals_total", format!("limit=\"{}\"", label(which)), 1);
    }

    /// A reload of the contracts.
    pub fn reload(&self, ok: bool) {
        self.add("vouch_config_reloads_total", format!("result=\"{}\"", if ok { "ok" } else { "errors" }), 1);
    }

    /// A request started / ended (the in-flight gauge).
    pub fn in_flight(&self, delta: i64) {
        self.in_flight.fetch_add(delta, Ordering::Relaxed);
    }

    /// A job kept.
    pub fn job_submitted(&self) {
        self.add("vouch_jobs_submitted_total", String::new(), 1);
    }

    /// A job refused at POST.
    pub fn job_rejected(&self, reason: &str) {
        self.add("vouch_jobs_rejected_total", format!("reason=\"{}\"", label(reason)), 1);
    }

    /// A job started for the first time, `wait_ms` after it was posted.
    pub fn job_started(&self, wait_ms: u64) {
        if let Ok(mut s) = self.series.lock() {
            #[allow(clippy::cast_precision_loss)] // milliseconds, far below 2^52
            s.job_wait.observe(&JOB_BUCKETS, wait_ms as f64 / 1000.0);
        }
    }

    /// A job's result recorded, `run_ms` after this run started and
    /// `total_ms` after it was posted (a cancel: neither).
    pub fn job_finished(&self, outcome: &str, run_ms: u64, total_ms: u64) {
        self.add("vouch_jobs_finished_total", format!("outcome=\"{}\"", label(outcome)), 1);
        if outcome != "cancelled" {
            if let Ok(mut s) = self.series.lock() {
                #[allow(clippy::cast_precision_loss)] // milliseconds, far below 2^52
                {
                    s.job_run.observe(&JOB_BUCKETS, run_ms as f64 / 1000.0);
                    s.job_total.observe(&JOB_BUCKETS, total_ms as f64 / 1000.0);
                }
            }
        }
    }

    /// A run whose result was not recorded (cancelled or taken over).
    pub fn job_discarded(&self) {
        self.add("vouch_jobs_results_discarded_total", String::new(), 1);
    }

    /// A webhook try.
    pub fn webhook(&self, result: &str) {
        self.add("vouch_webhook_deliveries_total", format!("result=\"{}\"", label(result)), 1);
    }

    /// The queue's depth (across replicas) and the jobs this replica runs.
    pub fn jobs_gauges(&self, queued: u64, running: usize) {
        self.jobs_queued.store(i64::try_from(queued).unwrap_or(i64::MAX), Ordering::Relaxed);
        self.jobs_running.store(i64::try_from(running).unwrap_or(i64::MAX), Ordering::Relaxed);
    }

    /// One ask's outcome, its rounds and tokens.
    pub fn ask(&self, contract: &str, outcome: &Outcome, max_tokens: Option<u64>) {
        let c = label(contract);
        let per_contract = format!("contract=\"{c}\"");
        let kind = crate::reply::outcome_kind(outcome);
        let mut codes: Vec<&str> = outcome.problems.iter().map(vouch_llm::AskProblem::code).collect();
        codes.sort_unstable();
        codes.dedup();
        if codes.is_empty() {
            codes.push("");
        }
        let verdicts: Vec<String> =
            codes.iter().map(|code| format!("contract=\"{c}\",outcome=\"{kind}\",code=\"{code}\"")).collect();
        let rounds = u64::try_from(outcome.rounds.len()).unwrap_or(u64::MAX);
        // One lock for the whole ask: at thousands a second, taking it once a
        // counter made two workers wait on each other.
        let Ok(mut s) = self.series.lock() else { return };
        for v in &verdicts {
            s.bump("vouch_verdicts_total", v, 1);
        }
        s.bump("vouch_rounds_total", &per_contract, rounds);
        let (mut tin, mut tout) = (0u64, 0u64);
        for r in &outcome.rounds {
            if let Some(u) = r.usage {
                tin = tin.saturating_add(u.prompt_tokens.unwrap_or(0));
                tout = tout.saturating_add(u.completion_tokens.unwrap_or(0));
            }
            if let Some(st) = r.stream.filter(|st| st.dropped && st.decided_at_bytes.is_some()) {
                s.bump("vouch_early_refusals_total", &per_contract, 1);
                if let Some(max) = max_tokens {
                    let saved = max.saturating_sub(st.decided_at_tokens.unwrap_or(st.tokens));
                    s.bump("vouch_tokens_saved_total", &per_contract, saved);
                }
            }
            if r.http_status.is_some() {
                if !s.latency.contains_key(&per_contract) {
                    s.latency.insert(per_contract.clone(), Histogram::default());
                }
                if let Some(h) = s.latency.get_mut(&per_contract) {
                    h.observe(&LATENCY_BUCKETS, secs(r.latency));
                }
            }
        }
        s.bump("vouch_tokens_total", "direction=\"in\"", tin);
        s.bump("vouch_tokens_total", "direction=\"out\"", tout);
        if !s.rounds.contains_key(&per_contract) {
            s.rounds.insert(per_contract.clone(), Histogram::default());
        }
        if let Some(h) = s.rounds.get_mut(&per_contract) {
            #[allow(clippy::cast_precision_loss)] // a count of rounds is small
            h.observe(&ROUND_BUCKETS, rounds as f64);
        }
    }

    /// The text exposition format.
    #[must_use]
    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "# HELP vouch_in_flight Requests being answered.\n# TYPE vouch_in_flight gauge");
        let _ = writeln!(out, "vouch_in_flight {}", self.in_flight.load(Ordering::Relaxed));
        let _ =
            writeln!(out, "# HELP vouch_jobs_queued Jobs waiting (across replicas).\n# TYPE vouch_jobs_queued gauge");
        let _ = writeln!(out, "vouch_jobs_queued {}", self.jobs_queued.load(Ordering::Relaxed));
        let _ = writeln!(out, "# HELP vouch_jobs_running Jobs this replica runs.\n# TYPE vouch_jobs_running gauge");
        let _ = writeln!(out, "vouch_jobs_running {}", self.jobs_running.load(Ordering::Relaxed));
        let Ok(s) = self.series.lock() else { return out };
        for (family, help) in HELP {
            let _ = writeln!(out, "# HELP {family} {help}\n# TYPE {family} counter");
            if let Some(series) = s.counters.get(family) {
                for (labels, v) in series {
                    if labels.is_empty() {
                        let _ = writeln!(out, "{family} {v}");
                    } else {
                        let _ = writeln!(out, "{family}{{{labels}}} {v}");
                    }
                }
            }
        }
        let _ = writeln!(
            out,
            "# HELP vouch_upstream_latency_seconds Upstream request latency, per round.\n# TYPE vouch_upstream_latency_seconds histogram"
        );
        for (labels, h) in &s.latency {
            h.write(&mut out, "vouch_upstream_latency_seconds", labels, &LATENCY_BUCKETS);
        }
        let _ = writeln!(out, "# HELP vouch_ask_rounds Rounds per ask.\n# TYPE vouch_ask_rounds histogram");
        for (labels, h) in &s.rounds {
            h.write(&mut out, "vouch_ask_rounds", labels, &ROUND_BUCKETS);
        }
        let _ = writeln!(
            out,
            "# HELP vouch_job_wait_seconds From a job's POST to its first start.\n# TYPE vouch_job_wait_seconds histogram"
        );
        s.job_wait.write(&mut out, "vouch_job_wait_seconds", "", &JOB_BUCKETS);
        let _ = writeln!(
            out,
            "# HELP vouch_job_run_seconds From a run's start to its result recorded.\n# TYPE vouch_job_run_seconds histogram"
        );
        s.job_run.write(&mut out, "vouch_job_run_seconds", "", &JOB_BUCKETS);
        let _ = writeln!(
            out,
            "# HELP vouch_job_seconds From a job's POST to its result recorded.\n# TYPE vouch_job_seconds histogram"
        );
        s.job_total.write(&mut out, "vouch_job_seconds", "", &JOB_BUCKETS);
        out
    }
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}
