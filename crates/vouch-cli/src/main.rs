//! The `vouch` command: a thin shell over the vouch core.
//!
//! Exit codes: 0 accepted and passing, 1 refused, 2 bad invocation or a
//! contract that does not compile, 3 accepted with gate findings; `batch`
//! adds 4 (broken input lines) and `ask` 5 (refused, fallback returned).

/// Print to standard output, through the scrubbing writer ([`output`]);
/// when the reader has gone (`vouch … | head`), stop quietly as Unix tools
/// do, instead of panicking.
macro_rules! out {
    ($($arg:tt)*) => {{
        if crate::output::out(format_args!($($arg)*)).is_err() {
            std::process::exit(crate::EXIT_PIPE);
        }
    }};
}

/// [`out!`] with a newline.
macro_rules! outln {
    () => {
        out!("\n")
    };
    ($($arg:tt)*) => {
        out!("{}\n", format_args!($($arg)*))
    };
}

/// Standard error through the scrubbing writer ([`output`]). It shadows
/// std's `eprint!` in every module of the crate, so no message can bypass
/// the scrubber.
macro_rules! eprint {
    ($($arg:tt)*) => {
        crate::output::err(format_args!($($arg)*))
    };
}

/// [`eprint!`] with a newline; shadows std's `eprintln!`.
macro_rules! eprintln {
    () => {
        eprint!("\n")
    };
    ($($arg:tt)*) => {
        eprint!("{}\n", format_args!($($arg)*))
    };
}

/// The exit code of a Unix tool killed by SIGPIPE (128 + 13).
const EXIT_PIPE: i32 = 141;

mod ask;
mod audit;
mod batch;
mod check;
mod diff;
mod load;
mod output;
mod render;
mod schema;
mod serve;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// vouch: nothing a model says reaches your code unless vouch vouches for it.
#[derive(Parser)]
#[command(name = "vouch", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check one model reply against a contract.
    ///
    /// Exit codes: 0 accepted (pass), 1 refused, 2 bad invocation or contract,
    /// 3 accepted with gate findings. With --stream, the reply is read from standard input
    /// as it arrives and the command exits (1) as soon as no completion can be accepted.
    ///
    /// Example: vouch check --contract examples/contracts/plate.json examples/replies/plate/all_false.json
    Check(check::Args),
    /// Emit the schema to send to a provider, or the prompt text, from a contract.
    ///
    /// The emitted schema never weakens the contract: a reply that satisfies it is
    /// accepted by the contract (repairs allowed). Where the provider cannot express
    /// a keyword, exit 2 names it and its location.
    ///
    /// Example: vouch schema --contract examples/contracts/plate.json --for openai
    Schema(schema::Args),
    /// Check a JSON Lines file of replies: one verdict per line, in order, on all cores.
    ///
    /// Each input line is a JSON string (the raw reply) or an object whose --field
    /// (default `raw`) holds it (null there: an empty reply, refused); its other fields
    /// (an id) are carried into the output line, beside `line` and `verdict`. A summary goes to standard error. Exit codes:
    /// 0 all accepted, 3 some with findings, 1 some refused, 4 some input lines broken,
    /// 2 bad invocation.
    ///
    /// Example: vouch batch --contract examples/contracts/plate.json replies.jsonl --out verdicts.jsonl
    Batch(batch::Args),
    /// Compare two versions of a contract: every way NEW refuses what OLD accepted
    /// (breaking), what NEW accepts that OLD refused (loosening), each with its path,
    /// the change in words and a witness reply checked by both contracts; where the
    /// comparison cannot decide, undecided, never compatible.
    ///
    /// With --values FILE.jsonl, stored values (one JSON value a line) are checked
    /// against NEW on every core. Exit codes: 0 compatible, 1 breaking (or a stored
    /// value OLD accepts and NEW refuses; with --fail-on-loosening, a loosening), 2 bad
    /// invocation, 4 undecided.
    ///
    /// Example: vouch diff examples/diff/plate.v1.json examples/diff/plate.v2.json --values examples/diff/stored.jsonl
    Diff(diff::Args),
    /// Throw the hostile replies models really produce at a contract, or at your own gate.
    ///
    /// Without --against: a table of classes and every hostile reply the contract
    /// accepts as a good answer (a contract weakness); exit 1 if any; and notes on every
    /// string and array with no cap, which a model may loop in until max_tokens (notes do
    /// not change the exit code). With --against
    /// CMD: runs your gate (reply on standard input, exit 0 = passed) on every reply
    /// and lists each fail-open: a reply your gate passed while the contract does not;
    /// exit 1 if any.
    ///
    /// Example: vouch audit --contract examples/contracts/plate.json --against 'node examples/gates/plate_gate_failopen.mjs'
    Audit(audit::Args),
    /// Ask a model (any OpenAI-compatible API) and vouch for its answer: every reply is
    /// checked by the contract; a refused reply is asked again, told every problem.
    ///
    /// Up to --rounds requests (default 2), within --max-total-tokens and --deadline.
    /// Upstream failures are refusals with their own codes (class no_answer). The API key
    /// is read from the environment variable named by --api-key-env, never from a flag.
    /// Prints the accepted value (or, with --fallback, the last known good value). Exit
    /// codes: 0 accepted (pass), 1 refused, 2 bad invocation or contract, 3 accepted with
    /// gate findings, 5 refused and the fallback returned.
    ///
    /// Example: vouch ask --contract examples/contracts/plate.json --model gpt-4o-mini --prompt 'Read back the plate.' --image plate.jpg --fallback last_plate.json
    Ask(Box<ask::Args>),
    /// Serve an OpenAI-compatible gateway that checks every reply against its contract.
    ///
    /// Point any OpenAI SDK's base_url at it. The contract is named by
    /// response_format.json_schema.name (DIR/NAME.json), the x-vouch-contract header, or
    /// sent inline as the request's JSON Schema. Accepted: the completion with the vouched
    /// JSON as content and a `vouch` object; refused: HTTP 422 with type vouch_refused and
    /// every problem. See docs/gateway.md.
    ///
    /// Example: vouch serve --listen 127.0.0.1:8080 --upstream https://api.openai.com/v1 --contracts examples/contracts --api-key-env OPENAI_API_KEY
    Serve(Box<serve::Args>),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    ///
    /// Example: vouch completions bash > /etc/bash_completion.d/vouch
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
}

/// mimalloc, not glibc's malloc: the gateway's tasks move between worker
/// threads, and glibc's arena locks were contended where memory allocated on
/// one thread is freed on another (see bench/gateway). Built without its
/// transparent-huge-page advice (`no_thp`): see bench/soak.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    output::scrub_panics();
    let cli = Cli::parse();
    let code = match cli.command {
        Command::Check(args) => check::run(&args),
        Command::Schema(args) => schema::run(&args),
        Command::Batch(args) => batch::run(&args),
        Command::Audit(args) => audit::run(&args),
        Command::Diff(args) => diff::run(&args),
        Command::Ask(args) => ask::run(&args),
        Command::Serve(args) => serve::run(&args),
        Command::Completions { shell } => {
            clap_complete::generate(shell, &mut <Cli as clap::CommandFactory>::command(), "vouch", &mut output::Stdout);
            0
        }
    };
    if output::finish().is_err() {
        return ExitCode::from(u8::try_from(EXIT_PIPE).unwrap_or(1));
    }
    ExitCode::from(code)
}
