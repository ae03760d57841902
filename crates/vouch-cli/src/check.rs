//! `vouch check`: one reply, one verdict.
//!
//! With `--stream`, the reply is read from standard input as it arrives and
//! fed to the core's [`vouch::StreamCheck`]: the command exits as soon as no
//! completion of what came can be accepted, without reading the rest, and
//! at the end of input gives the verdict `vouch check` gives on the whole
//! reply.

use std::io::Read;
use std::path::{Path, PathBuf};

use vouch::{Contract, Progress, Refused, Verdict};

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
    /// Print exactly one JSON object: {"outcome","pass","value","repairs","findings","problems"}
    /// (with --stream, and "decided_at").
    #[arg(long)]
    json: bool,
    /// Read the reply from standard input as it arrives (a pipe from curl or a model's
    /// command) and exit as soon as it is certainly refused, without waiting for the rest.
    ///
    /// At the end of input, the verdict is `vouch check`'s on the whole reply. With --json
    /// the object also has "decided_at": the bytes read when the verdict became certain
    /// (the reply's length when only its end decided). Standard input only: a REPLY other
    /// than `-` is a bad invocation (redirect it: `vouch check --stream -c C < FILE`).
    #[arg(long)]
    stream: bool,
}

pub fn run(args: &Args) -> u8 {
    if args.stream {
        if let Some(path) = args.reply.as_deref().filter(|p| *p != Path::new("-")) {
            eprintln!(
                "vouch: --stream reads the reply from standard input as it arrives, not from {}; \
                 pipe or redirect it in (vouch check --stream -c CONTRACT < {0}), or drop --stream",
                path.display()
            );
            return EXIT_USAGE;
        }
    }
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
    if args.stream {
        return stream(args, &contract);
    }
    let max_bytes = contract.limits().max_bytes;
    let reply = match load::reply(args.reply.as_deref(), max_bytes) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("vouch: {e}");
            return EXIT_USAGE;
        }
    };
    let verdict = reply.check(&contract);
    print(args, &verdict, None);
    render::exit_code(&verdict)
}

/// The verdict as `vouch check` prints it; `decided_at` (with `--stream`)
/// is added as the JSON object's last member.
fn print(args: &Args, verdict: &Verdict, decided_at: Option<usize>) {
    if args.json {
        let mut json = verdict.to_json();
        if let (Some(at), Some(object)) = (decided_at, json.as_object_mut()) {
            object.insert("decided_at".to_owned(), at.into());
        }
        outln!("{}", vouch::to_json_string(&json));
    } else {
        out!("{}", render::human(verdict));
    }
}

/// How much one read asks for: a pipe's read returns what has arrived, up
/// to this, so each piece is fed as soon as it comes.
const PIECE: usize = 8 * 1024;

/// `vouch check --stream`: feed standard input to the stream check a read
/// at a time; stop at the first refusal, else take the verdict at the end.
fn stream(args: &Args, contract: &Contract) -> u8 {
    use std::io::IsTerminal as _;
    if std::io::stdin().is_terminal() {
        eprintln!("vouch: reading the reply from standard input (paste it, then Ctrl-D)");
    }
    let mut check = contract.stream();
    let mut stdin = std::io::stdin().lock();
    let mut buf = vec![0u8; PIECE];
    loop {
        let n = match stdin.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                eprintln!("vouch: cannot read standard input: {e}");
                return EXIT_USAGE;
            }
        };
        if check.feed(buf.get(..n).unwrap_or_default()) == Progress::Refused {
            // Certain whatever follows: say so now, and leave the rest unread.
            let decided_at = check.decided_at().unwrap_or_else(|| check.received());
            let verdict = Verdict::Refused(Refused { problems: check.problems().to_vec() });
            print(args, &verdict, Some(decided_at));
            if !args.json {
                eprintln!("vouch: refused after {decided_at} bytes; the rest of the reply was not read");
            }
            return render::exit_code(&verdict);
        }
    }
    let length = check.received();
    let verdict = check.finish();
    print(args, &verdict, Some(length));
    render::exit_code(&verdict)
}
