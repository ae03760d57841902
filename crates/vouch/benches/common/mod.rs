//! What the benches share: where the shared folder and the corpus are, and
//! reading the corpus and the contracts.
//!
//! Benches are not tests: when the shared folder (`VOUCH_SHARED`, default
//! `../shared` from the project root) or `python3` is missing, a bench says so
//! loudly and measures nothing (exit 0).
// Each bench uses a part of this module.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use vouch::Contract;

/// The three contracts of the benchmark corpus (`../shared/bench/contracts`).
pub const BENCH_CONTRACTS: [&str; 3] = ["plate_check", "eligibility_verdict", "invoice_extraction"];

/// The project root (the workspace).
pub fn project_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Say loudly that a bench measures nothing, and why.
pub fn skip(why: &str) {
    eprintln!("\n!!!!! BENCH SKIPPED: {why} !!!!!\n");
}

/// The shared folder's `bench/` (`$VOUCH_SHARED/bench`), or `None` after a
/// loud message.
pub fn shared_bench() -> Option<PathBuf> {
    let root = std::env::var_os("VOUCH_SHARED").map(PathBuf::from).unwrap_or_else(|| project_root().join("../shared"));
    let dir = root.join("bench");
    if dir.join("gen.py").is_file() && dir.join("contracts").is_dir() {
        return Some(dir);
    }
    skip(&format!("SHARED DATA MISSING: {} not found (set VOUCH_SHARED to the shared folder)", dir.display()));
    None
}

/// `target/bench-corpus` under the project root, generated with
/// `python3 $VOUCH_SHARED/bench/gen.py` when a file is missing; `None` after
/// a loud message when it cannot be.
pub fn corpus_dir(shared_bench: &Path) -> Option<PathBuf> {
    let dir = project_root().join("target/bench-corpus");
    let files = ["small.jsonl", "large.jsonl"];
    if files.iter().all(|f| dir.join(f).is_file()) {
        return Some(dir);
    }
    eprintln!("generating the benchmark corpus into {} (python3 gen.py, a few seconds)", dir.display());
    // Into a scratch folder first, so that an interrupted run leaves no half file behind.
    let scratch = project_root().join(format!("target/bench-corpus.tmp-{}", std::process::id()));
    let status = Command::new("python3").arg(shared_bench.join("gen.py")).arg("--out").arg(&scratch).status();
    let moved = match status {
        Ok(s) if s.success() => std::fs::create_dir_all(&dir)
            .and_then(|()| files.iter().try_for_each(|f| std::fs::rename(scratch.join(f), dir.join(f)))),
        Ok(s) => {
            skip(&format!(
                "gen.py failed ({s}); run: python3 {}/gen.py --out {}",
                shared_bench.display(),
                dir.display()
            ));
            return None;
        }
        Err(e) => {
            skip(&format!("PYTHON3 MISSING: cannot run python3 ({e}) to generate the corpus into {}", dir.display()));
            return None;
        }
    };
    let _ = std::fs::remove_dir_all(&scratch);
    match moved {
        Ok(()) => Some(dir),
        Err(e) => {
            skip(&format!("cannot move the generated corpus into {}: {e}", dir.display()));
            None
        }
    }
}

/// One reply of the corpus.
pub struct Reply {
    pub contract: String,
    pub raw: String,
    /// `None`: the reply is valid against the strict contract.
    pub fault: Option<String>,
}

/// The first `limit` replies of a corpus file.
pub fn load_corpus(path: &Path, limit: usize) -> Option<Vec<Reply>> {
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) => {
            skip(&format!("{}: {e}", path.display()));
            return None;
        }
    };
    let mut replies = Vec::new();
    for (n, line) in BufReader::new(file).lines().take(limit).enumerate() {
        let parsed =
            line.map_err(|e| e.to_string()).and_then(|l| serde_json::from_str::<Value>(&l).map_err(|e| e.to_string()));
        let v = match parsed {
            Ok(v) => v,
            Err(e) => {
                skip(&format!("{} line {}: {e} (delete the corpus to regenerate it)", path.display(), n + 1));
                return None;
            }
        };
        let text = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
        replies.push(Reply {
            contract: text("contract").unwrap_or_default(),
            raw: text("raw").unwrap_or_default(),
            fault: text("fault"),
        });
    }
    Some(replies)
}

/// A contract file, read as text.
pub fn read_text(path: &Path) -> Option<String> {
    match std::fs::read_to_string(path) {
        Ok(t) => Some(t),
        Err(e) => {
            skip(&format!("{}: {e}", path.display()));
            None
        }
    }
}

/// Compile a contract file.
pub fn compile(path: &Path) -> Option<Contract> {
    let text = read_text(path)?;
    match Contract::from_json_str(&text) {
        Ok(c) => Some(c),
        Err(e) => {
            skip(&format!("{}: {e}", path.display()));
            None
        }
    }
}

/// The bench contracts by name: `NAME.schema.json` (strict) or
/// `NAME.lenient.json` (with repairs and unwraps), by `suffix`.
pub fn bench_contracts(shared_bench: &Path, suffix: &str) -> Option<BTreeMap<String, Contract>> {
    let mut out = BTreeMap::new();
    for name in BENCH_CONTRACTS {
        let contract = compile(&shared_bench.join("contracts").join(format!("{name}.{suffix}.json")))?;
        out.insert(name.to_owned(), contract);
    }
    Some(out)
}

/// Bytes of raw reply text in a set.
pub fn bytes_of<'a>(raws: impl IntoIterator<Item = &'a str>) -> u64 {
    raws.into_iter().map(|r| r.len() as u64).sum()
}
