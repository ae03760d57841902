//! `vouch audit`: throw the hostile replies models really produce at a
//! contract — or at the user's own gate — and list what gets through.

mod corpus;
mod gate;
mod loops;

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::{json, Value};
use vouch::{Contract, Verdict};

use crate::load::{self, EXIT_USAGE};
use corpus::Hostile;

#[derive(clap::Args)]
pub struct Args {
    /// The contract file.
    #[arg(long, short = 'c', value_name = "FILE")]
    contract: PathBuf,
    /// A reply the contract accepts, to build the corpus around (default: one
    /// synthesized from the contract).
    #[arg(long, value_name = "FILE")]
    example: Option<PathBuf>,
    /// Run your own gate on every hostile reply: a shell command that reads the
    /// reply on standard input and exits 0 when it passes it.
    #[arg(long, value_name = "CMD")]
    against: Option<String>,
    /// Seconds each run of the gate may take before it counts as refusing.
    #[arg(long, default_value_t = 10.0, value_name = "SECONDS")]
    timeout: f64,
    /// Gates run at once (default: the number of cores).
    #[arg(long, value_name = "N")]
    jobs: Option<usize>,
    /// Write the corpus to DIR: one file per reply and index.json.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// The report as JSON.
    #[arg(long)]
    json: bool,
}

/// One hostile reply with vouch's verdict on it.
struct Judged {
    hostile: Hostile,
    verdict: Verdict,
}

impl Judged {
    /// Accepted with no declared repair and no finding although hostile: the
    /// contract lets it through as if it were a good answer.
    fn weakness(&self) -> bool {
        self.hostile.hostile && self.verdict.is_pass() && self.verdict.repairs().is_empty()
    }

    fn why(&self) -> String {
        match &self.verdict {
            Verdict::Refused(r) => {
                r.problems.first().map(|p| format!("{}: {}", p.code.as_str(), p.message)).unwrap_or_default()
            }
            Verdict::Accepted(a) if !a.findings.is_empty() => {
                format!("finding: {}", a.findings.iter().map(|f| f.message.as_str()).collect::<Vec<_>>().join("; "))
            }
            Verdict::Accepted(a) if !a.repairs.is_empty() => {
                format!("repaired: {}", a.repairs.iter().map(|r| r.message.as_str()).collect::<Vec<_>>().join("; "))
            }
            Verdict::Accepted(_) => "accepted as a good answer".to_owned(),
        }
    }

    fn label(&self) -> &'static str {
        match &self.verdict {
            Verdict::Refused(_) => "refused",
            Verdict::Accepted(a) if !a.findings.is_empty() => "findings",
            Verdict::Accepted(a) if !a.repairs.is_empty() => "repaired",
            Verdict::Accepted(_) => "pass",
        }
    }
}

/// A short, printable excerpt of a reply.
pub fn show(raw: &[u8]) -> String {
    let text = String::from_utf8_lossy(raw);
    let flat: String = text.chars().map(|c| if c == '\n' { '⏎' } else { c }).take(100).collect();
    if text.chars().count() > 100 {
        format!("{flat}…")
    } else {
        flat
    }
}

fn base_reply(args: &Args, contract: &Contract) -> Result<Option<Value>, String> {
    if let Some(path) = &args.example {
        let reply = load::reply(Some(path), contract.limits().max_bytes)?;
        return match reply.check(contract) {
            Verdict::Accepted(a) => Ok(Some(a.into_value())),
            Verdict::Refused(r) => Err(format!(
                "{}: the example is refused by the contract: {}",
                path.display(),
                r.problems.first().map(|p| p.message.as_str()).unwrap_or_default()
            )),
        };
    }
    // A synthesized reply, kept only if the contract accepts it as a pass.
    Ok(corpus::synthesize(contract.document()).filter(|v| contract.check(v.to_string()).is_pass()))
}

pub fn run(args: &Args) -> u8 {
    let contract = match load::contract_or_exit(&args.contract) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let base = match base_reply(args, &contract) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("vouch: {e}");
            return EXIT_USAGE;
        }
    };
    if base.is_none() {
        eprintln!(
            "vouch: could not build a valid reply from the contract; pass one with --example FILE for the full corpus"
        );
    }
    let judged: Vec<Judged> = corpus::generate(&contract, base.as_ref())
        .into_iter()
        .map(|hostile| {
            let verdict = contract.check(&hostile.raw);
            Judged { hostile, verdict }
        })
        .collect();
    if let Some(dir) = &args.out {
        if let Err(e) = write_corpus(dir, &judged) {
            eprintln!("vouch: {}: {e}", dir.display());
            return EXIT_USAGE;
        }
    }
    match &args.against {
        Some(cmd) => gate::run(args, cmd, &judged),
        None => report(args, &judged, &loops::notes(&contract)),
    }
}

/// The contract's own audit: counts per class, every weakness, and the
/// notes on the contract itself (loop risk); the notes do not change the
/// exit code.
fn report(args: &Args, judged: &[Judged], notes: &[loops::Note]) -> u8 {
    let mut classes: BTreeMap<&str, [usize; 4]> = BTreeMap::new();
    for j in judged.iter().filter(|j| j.hostile.hostile) {
        let slot = match j.label() {
            "refused" => 0,
            "findings" => 1,
            "repaired" => 2,
            _ => 3,
        };
        if let Some(c) = classes.get_mut(j.hostile.class).and_then(|row| row.get_mut(slot)) {
            *c += 1;
        } else {
            let mut row = [0; 4];
            if let Some(c) = row.get_mut(slot) {
                *c = 1;
            }
            classes.insert(j.hostile.class, row);
        }
    }
    let weak: Vec<&Judged> = judged.iter().filter(|j| j.weakness()).collect();
    let hostile = judged.iter().filter(|j| j.hostile.hostile).count();
    if args.json {
        let rows: Vec<Value> = classes
            .iter()
            .map(|(c, [r, f, rep, p])| json!({"class": c, "refused": r, "findings": f, "repaired": rep, "accepted": p}))
            .collect();
        let weaknesses: Vec<Value> = weak
            .iter()
            .map(|j| json!({"class": j.hostile.class, "name": j.hostile.name, "reply": show(&j.hostile.raw)}))
            .collect();
        let notes: Vec<Value> =
            notes.iter().map(|n| json!({"code": n.code, "location": n.location, "message": n.message()})).collect();
        outln!("{}", json!({"hostile": hostile, "classes": rows, "accepted": weaknesses, "notes": notes}));
    } else {
        outln!("{:<16} {:>7} {:>8} {:>8} {:>8}", "class", "refused", "findings", "repaired", "ACCEPTED");
        for (class, [r, f, rep, p]) in &classes {
            outln!("{class:<16} {r:>7} {f:>8} {rep:>8} {p:>8}");
        }
        if !weak.is_empty() {
            outln!("\nAccepted as good answers although hostile (contract weaknesses):");
            for j in &weak {
                outln!("  {:<16} {:<44} {}", j.hostile.class, j.hostile.name, show(&j.hostile.raw));
            }
        }
        if !notes.is_empty() {
            outln!("\nMay loop until max_tokens (no cap; see docs/contract.md, \"Capping fields a model loops on\"):");
            for n in notes {
                outln!("  {:<16} {:<44} {}", n.code, n.at(), n.what.trim_end_matches(','));
            }
        }
        if weak.is_empty() {
            outln!("\n{hostile} hostile replies: none accepted as a good answer.");
        } else {
            outln!("\n{hostile} hostile replies, {} accepted as good answers.", weak.len());
        }
    }
    u8::from(!weak.is_empty())
}

fn write_corpus(dir: &std::path::Path, judged: &[Judged]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut index = Vec::new();
    for (i, j) in judged.iter().enumerate() {
        let file = format!("{i:04}-{}.txt", j.hostile.class);
        std::fs::write(dir.join(&file), &j.hostile.raw)?;
        index.push(json!({
            "file": file,
            "class": j.hostile.class,
            "name": j.hostile.name,
            "hostile": j.hostile.hostile,
            "verdict": j.label(),
            "pass": j.verdict.is_pass(),
            "codes": j.verdict.problems().iter().map(|p| p.code.as_str()).collect::<Vec<_>>(),
            "why": j.why(),
        }));
    }
    let text = serde_json::to_string_pretty(&Value::Array(index)).unwrap_or_default();
    std::fs::write(dir.join("index.json"), text + "\n")
}
