//! `vouch check`: one reply, one verdict.

use std::path::PathBuf;

use crate::load::{self, EXIT_USAGE};
use crate::render;

#[derive(clap::Args)]
pub struct Args {
    /// The contract: a JSON Schema (2020-12) file, optionally with x-vouch policy.
    #[arg(long, short = 'c', value_name = "FILE")]
    contract: PathBuf,
    /// The reply file, exactly as the model sent it; `-` or nothing reads standard input.
    #[arg(value_name = "REPLY")]
    reply: Option<PathBuf>,
    /// Print exactly one JSON object: {"outcome","pass","value","repairs","findings","problems"}.
    #[arg(long)]
    json: bool,
}

pub fn run(args: &Args) -> u8 {
    let contract = match load::contract_or_errors(&args.contract) {
        Ok(c) => c,
        Err((message, errors)) => {
            eprintln!("vouch: {}", message.replace('\n', "\nvouch: "));
            if args.json {
                // Still exactly one JSON object on standard output.
                let errors: Vec<serde_json::Value> = errors
                    .iter()
                    .flat_map(|e| e.every())
                    .map(|e| serde_json::json!({"kind": e.kind, "keyword": e.keyword, "location": e.location, "message": load::one_error(e)}))
                    .collect();
                let errors = if errors.is_empty() {
                    vec![serde_json::json!({"kind": "unreadable", "message": message})]
                } else {
                    errors
                };
                outln!("{}", serde_json::json!({"outcome": "contract_error", "pass": false, "errors": errors}));
            }
            return EXIT_USAGE;
        }
    };
    let max_bytes = contract.limits().max_bytes;
    let reply = match load::reply(args.reply.as_deref(), max_bytes) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("vouch: {e}");
            return EXIT_USAGE;
        }
    };
    let verdict = reply.check(&contract);
    if args.json {
        outln!("{}", vouch::to_json_string(&verdict.to_json()));
    } else {
        out!("{}", render::human(&verdict));
    }
    render::exit_code(&verdict)
}
