//! `vouch schema`: what to send to a provider, and the prompt text, from
//! the same contract.

use std::path::PathBuf;

use vouch::Provider;

use crate::load::{self, EXIT_USAGE};

#[derive(clap::Args)]
pub struct Args {
    /// The contract file.
    #[arg(long, short = 'c', value_name = "FILE")]
    contract: PathBuf,
    /// Where the schema goes: openai (response_format), anthropic (a strict tool),
    /// gemini (generationConfig fields), or json-schema (the contract without x-vouch).
    #[arg(long = "for", value_name = "PROVIDER", value_parser = ["openai", "anthropic", "gemini", "json-schema"], default_value = "json-schema")]
    provider: String,
    /// The name of the schema (OpenAI) or tool (Anthropic).
    #[arg(long, default_value = "answer")]
    name: String,
    /// Print only the schema, without the provider's request wrapper.
    #[arg(long)]
    bare: bool,
    /// Print the plain-language instructions for the model instead of a schema.
    #[arg(long)]
    prompt: bool,
}

pub fn run(args: &Args) -> u8 {
    let contract = match load::contract_or_exit(&args.contract) {
        Ok(c) => c,
        Err(code) => return code,
    };
    if args.prompt {
        out!("{}", contract.prompt());
        return 0;
    }
    let Some(provider) = Provider::from_name(&args.provider) else {
        eprintln!("vouch: unknown provider {:?}", args.provider);
        return EXIT_USAGE;
    };
    if !args.bare && matches!(provider, Provider::OpenAi | Provider::Anthropic) && !vouch::is_schema_name(&args.name) {
        eprintln!(
            "vouch: --name {:?}: {} takes 1 to 64 ASCII letters, digits, `_` or `-`",
            args.name,
            if provider == Provider::OpenAi { "OpenAI" } else { "Anthropic" }
        );
        return EXIT_USAGE;
    }
    let schema = if args.bare {
        contract.bare_provider_schema(provider)
    } else {
        contract.provider_schema(provider, &args.name)
    };
    match schema {
        Ok(s) => {
            outln!("{}", vouch::to_json_pretty(&s));
            0
        }
        Err(e) => {
            eprintln!(
                "vouch: {}: cannot be sent to {} without weakening it: {e}",
                args.contract.display(),
                args.provider
            );
            EXIT_USAGE
        }
    }
}
