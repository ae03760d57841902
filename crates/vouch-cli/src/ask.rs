//! `vouch ask`: ask a model, check every reply, ask again told why, within
//! a budget; then refuse, and keep the last good value.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use vouch_llm::{
    Answer, ApiKey, Asker, Backoff, Config, Headers, ImageUrl, Message, Mode, Outcome, Round, SetupError, Timeouts,
    OPENAI_BASE_URL,
};

use crate::load::{self, EXIT_USAGE};

/// Exit code: every round was refused, and the fallback (last known good value) is printed.
pub const EXIT_FALLBACK: u8 = 5;

#[derive(clap::Args)]
pub struct Args {
    /// The contract: a JSON Schema (2020-12) file, optionally with x-vouch policy.
    #[arg(long, short = 'c', value_name = "FILE")]
    contract: PathBuf,
    /// The question (the user message).
    #[arg(long, value_name = "TEXT", required_unless_present = "prompt_file", conflicts_with = "prompt_file")]
    prompt: Option<String>,
    /// Read the question from a file.
    #[arg(long, value_name = "FILE")]
    prompt_file: Option<PathBuf>,
    /// An image to send with the question (repeatable): an http(s) or data: URL,
    /// or a local .png, .jpg, .gif or .webp file (sent as a data: URL).
    #[arg(long, value_name = "FILE_OR_URL")]
    image: Vec<String>,
    /// Print exactly one JSON object: the fields of `vouch check --json` plus
    /// "source" ("model" or "fallback") and "rounds".
    #[arg(long)]
    json: bool,
    /// The API's base URL (requests go to BASE_URL/chat/completions).
    /// Default: $OPENAI_BASE_URL, else https://api.openai.com/v1.
    #[arg(long, value_name = "URL")]
    base_url: Option<String>,
    /// The model name.
    #[arg(long, value_name = "NAME")]
    model: String,
    /// The environment variable holding the API key (never a flag: flags land in
    /// shell history). A local server may need none.
    #[arg(long, value_name = "NAME", default_value = "OPENAI_API_KEY")]
    api_key_env: String,
    /// An extra request header, `Name: value` (repeatable).
    #[arg(long = "header", value_name = "NAME: VALUE")]
    headers: Vec<String>,
    /// How the contract is put to the model: schema (OpenAI strict structured
    /// outputs), json (JSON mode) or plain (no response_format). Every reply is
    /// checked by the contract in every mode.
    #[arg(long, value_name = "MODE", value_parser = ["schema", "json", "plain"], default_value = "schema")]
    mode: String,
    /// The schema name sent in schema mode.
    #[arg(long, value_name = "NAME", default_value = "answer")]
    schema_name: String,
    /// The most requests: a refused reply is asked again, told why; a failed
    /// request (5xx, 429, network) is repeated. Each is a round.
    #[arg(long, value_name = "N", default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..))]
    rounds: u32,
    /// The most tokens the whole exchange may spend (from the responses' usage); each
    /// round's completion is capped at what is left.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    max_total_tokens: Option<u64>,
    /// The longest the whole exchange may take, waits included (250ms, 30s, 2m).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    deadline: Option<Duration>,
    /// `temperature`.
    #[arg(long, value_name = "T")]
    temperature: Option<f64>,
    /// `max_tokens`: the reply's token limit. A reply cut off at it is refused (cut_off).
    #[arg(long, value_name = "N")]
    max_tokens: Option<u32>,
    /// Timeout to connect.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "10s")]
    connect_timeout: Duration,
    /// Timeout from sending a request to the response's first byte.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "120s")]
    first_byte_timeout: Duration,
    /// Timeout for one whole request.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "180s")]
    timeout: Duration,
    /// The longest wait before repeating a failed request (a longer Retry-After is cut to it).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "30s")]
    max_retry_wait: Duration,
    /// Stream each reply (`stream: true`): it is checked as it arrives, and the
    /// request is dropped (the connection closed, so the model stops) as soon as
    /// no ending of it can be accepted; the next round asks again, told why.
    /// `--json` rounds then carry "stream": bytes and tokens received, where the
    /// refusal was decided, whether the request was dropped.
    #[arg(long)]
    stream: bool,
    /// The last known good value (a JSON file): returned, marked "source": "fallback"
    /// and with exit 5, when every round is refused, if the contract accepts it.
    #[arg(long, value_name = "FILE")]
    fallback: Option<PathBuf>,
}

/// `250ms`, `1.5s`, `2m`, `1h`, or plain seconds.
fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let (number, unit) = match t.find(|c: char| c.is_ascii_alphabetic()) {
        Some(i) => t.split_at(i),
        None => (t, "s"),
    };
    let n: f64 = number.trim().parse().map_err(|_| format!("{text:?} is not a duration like 250ms, 30s or 2m"))?;
    let secs = match unit {
        "ms" => n / 1000.0,
        "s" => n,
        "m" => n * 60.0,
        "h" => n * 3600.0,
        _ => return Err(format!("{text:?}: unknown unit {unit:?} (use ms, s, m or h)")),
    };
    Duration::try_from_secs_f64(secs).map_err(|_| format!("{text:?} is not a duration"))
}

pub fn run(args: &Args) -> u8 {
    match prepare(args) {
        Ok((asker, messages, fallback)) => ask(args, &asker, messages, fallback.as_ref()),
        Err(e) => {
            eprintln!("vouch: {e}");
            EXIT_USAGE
        }
    }
}

type Prepared = (Asker, Vec<Message>, Option<serde_json::Value>);

/// Everything read and checked before a single token is spent.
fn prepare(args: &Args) -> Result<Prepared, String> {
    let contract = load::contract(&args.contract)?;
    let prompt = match (&args.prompt, &args.prompt_file) {
        (Some(p), _) => p.clone(),
        (None, Some(f)) => {
            std::fs::read_to_string(f).map_err(|e| format!("{}: cannot read the prompt: {e}", f.display()))?
        }
        (None, None) => return Err("give the question with --prompt TEXT or --prompt-file FILE".into()),
    };
    let images = args
        .image
        .iter()
        .map(|i| ImageUrl::from_file_or_url(i).map_err(|e| e.to_string()))
        .collect::<Result<_, _>>()?;
    let fallback = args.fallback.as_deref().map(read_fallback).transpose()?;

    let base_url = args
        .base_url
        .clone()
        .or_else(|| std::env::var("OPENAI_BASE_URL").ok().filter(|u| !u.trim().is_empty()))
        .unwrap_or_else(|| OPENAI_BASE_URL.to_owned());
    let api_key = ApiKey::from_env(&args.api_key_env);
    if api_key.is_none() && base_url.trim_end_matches('/') == OPENAI_BASE_URL {
        return Err(format!(
            "{} is not set: the API key is read from the environment variable named by --api-key-env \
             (a local server may need none: give its --base-url)",
            args.api_key_env
        ));
    }
    let mut headers = Vec::new();
    for h in &args.headers {
        let Some((name, value)) = h.split_once(':') else {
            let name: String = h.chars().take_while(|c| !c.is_whitespace() && *c != '=').collect();
            return Err(format!("--header {name:?}…: expected `Name: value`"));
        };
        headers.push((name.trim().to_owned(), value.trim().to_owned()));
    }
    let mut config = Config::new(base_url, args.model.clone());
    config.api_key = api_key;
    config.headers = Headers(headers);
    config.temperature = args.temperature;
    config.max_tokens = args.max_tokens;
    config.mode = Mode::from_name(&args.mode).unwrap_or_default();
    config.schema_name.clone_from(&args.schema_name);
    config.rounds = args.rounds;
    config.max_total_tokens = args.max_total_tokens;
    config.deadline = args.deadline;
    config.timeouts = Timeouts {
        connect: args.connect_timeout,
        first_byte: args.first_byte_timeout,
        total: args.timeout,
        idle: args.timeout,
    };
    config.backoff = Backoff { max_wait: args.max_retry_wait, ..Backoff::default() };
    config.stream = args.stream;
    let asker = Asker::new(contract, config).map_err(|e| match e {
        SetupError::Export(e) => format!(
            "{}: cannot be sent to OpenAI strict structured outputs without weakening it: {e}; \
             use --mode json (every reply is still checked against the contract)",
            args.contract.display()
        ),
        other => other.to_string(),
    })?;
    // From here on every byte written, to either stream, is scrubbed of the key
    // (and of `Bearer …` and `sk-…` tokens), whatever prints it: the asker's own
    // scrubber, built once. Nothing written before holds anything but local text.
    crate::output::protect(asker.scrubber());
    Ok((asker, vec![Message::user_with_images(prompt, images)], fallback))
}

/// Read the fallback file with vouch's strict reader, `vouch::read_json` (a
/// duplicate key in the last good value is as ambiguous as in a reply; and
/// the file is read as it is: no repair, no unwrapping of a fence). The
/// contract checks it only if every round is refused.
fn read_fallback(path: &Path) -> Result<serde_json::Value, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: cannot read the fallback: {e}", path.display()))?;
    let text = std::str::from_utf8(&bytes)
        .map_err(|e| format!("{}: the fallback is not UTF-8 text (at byte {})", path.display(), e.valid_up_to()))?;
    vouch::read_json(text, vouch::Limits::default().max_depth)
        .map_err(|e| format!("{}: the fallback is not JSON: {}", path.display(), e.message))
}

fn ask(args: &Args, asker: &Asker, messages: Vec<Message>, fallback: Option<&serde_json::Value>) -> u8 {
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("vouch: cannot start the async runtime: {e}");
            return EXIT_USAGE;
        }
    };
    let outcome = runtime.block_on(asker.ask_with_fallback(messages, fallback));
    if args.json {
        outln!("{}", vouch::to_json_string(&outcome.to_json()));
    } else {
        let report = report(&outcome, args.fallback.as_deref());
        if !report.is_empty() {
            eprint!("{report}");
        }
        if let Some(value) = outcome.value() {
            outln!("{}", vouch::to_json_pretty(value));
        }
    }
    exit_code(&outcome)
}

/// 0 pass, 1 refused, 3 accepted with findings, 5 refused with the fallback returned.
fn exit_code(outcome: &Outcome) -> u8 {
    match &outcome.answer {
        Answer::Model(a) if a.findings.is_empty() => 0,
        Answer::Model(_) => 3,
        Answer::Fallback(_) => EXIT_FALLBACK,
        Answer::Refused => 1,
    }
}

/// What goes to standard error: each round when there was more than one, or
/// any was refused; then the outcome, findings and repairs. Empty for a
/// first-round pass without repairs.
fn report(outcome: &Outcome, fallback: Option<&Path>) -> String {
    let mut out = String::new();
    let clean = outcome.rounds.len() == 1 && outcome.is_pass() && outcome.repairs().is_empty();
    if clean {
        return out;
    }
    for r in &outcome.rounds {
        let _ = writeln!(out, "{}", round_line(r));
        for p in r.problems() {
            let _ = writeln!(out, "  {:<20} {}", p.code(), p.message());
        }
    }
    let n = outcome.rounds.len();
    let rounds = format!("{n} round{}", if n == 1 { "" } else { "s" });
    match &outcome.answer {
        Answer::Model(a) if a.findings.is_empty() => {
            let _ = writeln!(out, "accepted: pass (after {rounds})");
        }
        Answer::Model(a) => {
            let k = a.findings.len();
            let _ = writeln!(
                out,
                "accepted with {k} finding{}: the model answered, and the answer fails the gate",
                if k == 1 { "" } else { "s" }
            );
        }
        Answer::Fallback(_) | Answer::Refused => {
            let class = outcome.class().map_or("no_answer", vouch::ProblemClass::as_str);
            let _ = writeln!(out, "refused ({class}) after {rounds}");
            for p in outcome.problems.iter().filter(|p| !outcome.rounds.iter().any(|r| r.problems().contains(p))) {
                let _ = writeln!(out, "  {:<20} {}", p.code(), p.message());
            }
        }
    }
    if let (Answer::Fallback(_), Some(file)) = (&outcome.answer, fallback) {
        let _ = writeln!(
            out,
            "returning the fallback from {} (the last known good value, not a fresh answer)",
            file.display()
        );
    }
    for p in &outcome.fallback_problems {
        let _ = writeln!(out, "    fallback: {:<20} {}", p.code.as_str(), p.message);
    }
    for f in outcome.findings() {
        let _ = writeln!(out, "  finding  {}: {}", if f.path.is_empty() { "(root)" } else { &f.path }, f.message);
    }
    for r in outcome.repairs() {
        let _ = writeln!(out, "  repaired {:<18} {}", r.rule, r.message);
    }
    out
}

fn round_line(r: &Round) -> String {
    let mut line = format!("round {}: {}", r.index, r.outcome());
    if !r.waited.is_zero() {
        let _ = write!(line, " after waiting {} ms", r.waited.as_millis());
    }
    let _ = write!(line, ", {} ms", r.latency.as_millis());
    if let Some(s) = r.http_status {
        let _ = write!(line, ", HTTP {s}");
    }
    if let Some(t) = r.usage.and_then(|u| u.spent()) {
        let _ = write!(line, ", {t} tokens");
    }
    if let Some(f) = &r.finish_reason {
        let _ = write!(line, ", finish_reason {f}");
    }
    if let Some(s) = &r.stream {
        let unit = if s.tokens_from_usage { "tokens" } else { "deltas" };
        match (s.dropped, s.decided_at_bytes, s.decided_at_tokens) {
            (true, Some(at), Some(t)) => {
                let _ = write!(line, ", streamed: refused at byte {at} ({t} {unit}), request dropped");
            }
            (true, _, _) => {
                let _ = write!(line, ", streamed: request dropped after {} bytes", s.bytes);
            }
            (false, _, _) => {
                let _ = write!(line, ", streamed {} bytes ({} {unit})", s.bytes, s.tokens);
            }
        }
    }
    line
}

#[cfg(test)]
mod tests {
    use super::parse_duration;
    use std::time::Duration;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("30"), Ok(Duration::from_secs(30)));
        assert!(parse_duration("soon").is_err());
        assert!(parse_duration("5d").is_err());
        assert!(parse_duration("-1s").is_err());
    }
}
