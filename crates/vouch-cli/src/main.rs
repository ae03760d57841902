//! The `vouch` command: a thin shell over the vouch core.
//!
//! Exit codes: 0 accepted and passing, 1 refused, 2 bad invocation or a
//! contract that does not compile, 3 accepted with gate findings.

mod check;
mod load;
mod render;
mod schema;

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
    /// 3 accepted with gate findings.
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
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let code = match cli.command {
        Command::Check(args) => check::run(&args),
        Command::Schema(args) => schema::run(&args),
    };
    ExitCode::from(code)
}
