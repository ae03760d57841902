//! `vouch serve`: the gateway (crate `vouch-server`), configured from a
//! TOML file and flags, logging through the scrubbing standard error.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use vouch_server::{read_tokens, Gateway, ServerConfig, WithoutContract};

use crate::load::EXIT_USAGE;

/// `vouch serve` arguments: each flag (or its `VOUCH_…` environment
/// variable) overrides the file's key of the same name.
#[derive(clap::Args)]
pub struct Args {
    /// A TOML configuration file (every key: docs/gateway.md).
    #[arg(long, env = "VOUCH_CONFIG", value_name = "FILE")]
    config: Option<PathBuf>,
    /// Where to listen (default 127.0.0.1:8080).
    #[arg(long, env = "VOUCH_LISTEN", value_name = "ADDR")]
    listen: Option<SocketAddr>,
    /// The upstream's base URL: OpenAI, OpenRouter, Groq, Ollama, vLLM, llama.cpp…
    #[arg(long, env = "VOUCH_UPSTREAM", value_name = "BASE_URL")]
    upstream: Option<String>,
    /// The contracts folder: DIR/NAME.json is the contract NAME.
    #[arg(long, env = "VOUCH_CONTRACTS", value_name = "DIR")]
    contracts: Option<PathBuf>,
    /// The environment variable holding the upstream's API key (never a flag).
    #[arg(long, env = "VOUCH_API_KEY_ENV", value_name = "NAME")]
    api_key_env: Option<String>,
    /// Send each client's own upstream key (its Authorization: Bearer …)
    /// upstream; the gateway's own tokens then come in x-vouch-token.
    #[arg(long, env = "VOUCH_PASS_CLIENT_KEY")]
    pass_client_key: bool,
    /// A file of client bearer tokens, one per line.
    #[arg(long, env = "VOUCH_TOKENS_FILE", value_name = "FILE")]
    tokens_file: Option<PathBuf>,
    /// An environment variable of client bearer tokens, comma separated.
    #[arg(long, env = "VOUCH_TOKENS_ENV", value_name = "NAME")]
    tokens_env: Option<String>,
    /// What a request that names no contract gets: refuse (400, the default) or pass (unchecked).
    #[arg(long, env = "VOUCH_WITHOUT_CONTRACT", value_name = "WHAT", value_parser = ["refuse", "pass"])]
    without_contract: Option<String>,
    /// The model sent when a request names none.
    #[arg(long, env = "VOUCH_DEFAULT_MODEL", value_name = "MODEL")]
    default_model: Option<String>,
    /// The most requests in flight (503 with Retry-After beyond).
    #[arg(long, env = "VOUCH_MAX_CONCURRENCY", value_name = "N")]
    max_concurrency: Option<usize>,
    /// The largest request body in bytes (413 beyond).
    #[arg(long, env = "VOUCH_MAX_BODY_BYTES", value_name = "BYTES")]
    max_body_bytes: Option<usize>,
    /// After SIGTERM, keep taking connections this long (ms), /readyz answering 503,
    /// before the listener closes: the time a load balancer needs to see it.
    #[arg(long, env = "VOUCH_DRAIN_DELAY_MS", value_name = "MS")]
    drain_delay_ms: Option<u64>,
    /// Where jobs (POST /v1/jobs) are kept: a file (embedded SQLite),
    /// redis://HOST:PORT (shared by replicas), or off. Default: a file under
    /// $XDG_STATE_HOME/vouch (else ~/.local/state/vouch) named for the port.
    #[arg(long, env = "VOUCH_JOBS", value_name = "PATH|redis://HOST:PORT|off")]
    jobs: Option<String>,
    /// Serve without client tokens on a non-loopback address.
    #[arg(long)]
    allow_unauthenticated: bool,
    /// Log level: error, warn, info, debug, trace.
    #[arg(long, value_name = "LEVEL", default_value = "info")]
    log: tracing::Level,
    /// Worker threads (default: one per core).
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
}

fn configure(args: &Args) -> Result<ServerConfig, String> {
    let mut config = match &args.config {
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
            ServerConfig::from_toml_str(&text).map_err(|e| format!("{}: {e}", path.display()))?
        }
        None => ServerConfig::default(),
    };
    if let Some(v) = args.listen {
        config.listen = v;
    }
    if let Some(v) = &args.upstream {
        config.upstream.clone_from(v);
    }
    if let Some(v) = &args.contracts {
        config.contracts.clone_from(v);
    }
    if let Some(v) = &args.api_key_env {
        config.api_key_env = Some(v.clone());
    }
    if let Some(v) = &args.tokens_file {
        config.tokens_file = Some(v.clone());
    }
    if let Some(v) = &args.tokens_env {
        config.tokens_env = Some(v.clone());
    }
    if let Some(v) = &args.without_contract {
        config.without_contract = if v == "pass" { WithoutContract::Pass } else { WithoutContract::Refuse };
    }
    if let Some(v) = &args.default_model {
        config.default_model.clone_from(v);
    }
    if let Some(v) = args.max_concurrency {
        config.max_concurrency = v;
    }
    if let Some(v) = args.drain_delay_ms {
        config.drain_delay_ms = v;
    }
    if let Some(v) = args.max_body_bytes {
        config.max_body_bytes = v;
    }
    if let Some(v) = &args.jobs {
        config.jobs.store = Some(v.clone());
    }
    config.allow_unauthenticated |= args.allow_unauthenticated;
    config.pass_client_key |= args.pass_client_key;
    Ok(config)
}

/// Run the gateway until SIGINT or SIGTERM, then drain.
pub fn run(args: &Args) -> u8 {
    let config = match configure(args) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("vouch: {e}");
            return EXIT_USAGE;
        }
    };
    let key = match &config.api_key_env {
        Some(name) => match std::env::var(name) {
            Ok(k) => Some(k),
            Err(_) => {
                eprintln!("vouch: the API key variable {name} is not set");
                return EXIT_USAGE;
            }
        },
        None => None,
    };
    let tokens = match read_tokens(&config) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("vouch: {e}");
            return EXIT_USAGE;
        }
    };
    let (gateway, errors) = match Gateway::new(config, key, tokens) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("vouch: {e}");
            return EXIT_USAGE;
        }
    };
    crate::output::protect(gateway.scrubber());
    let log_lines = match logs(args.log) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("vouch: cannot start the log writer: {e}");
            return EXIT_USAGE;
        }
    };
    for e in &errors {
        tracing::warn!(contract = %e.name, "not loaded: {}", e.message);
    }
    let mut runtime = tokio::runtime::Builder::new_multi_thread();
    if let Some(n) = args.threads {
        runtime.worker_threads(n.max(1));
    }
    let runtime = match runtime.enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("vouch: cannot start the runtime: {e}");
            return EXIT_USAGE;
        }
    };
    let logged = log_lines.clone();
    let code = runtime.block_on(async move {
        // Every handler is in place before the gateway says it listens: a
        // signal with none would end the process instead.
        let stop = match stop_signal() {
            Ok(s) => s,
            Err(e) => {
                eprintln!("vouch: cannot handle signals: {e}");
                return EXIT_USAGE;
            }
        };
        let gateway = Arc::new(gateway);
        if let Err(e) = vouch_server::reload_on_sighup(Arc::clone(&gateway)) {
            eprintln!("vouch: cannot handle SIGHUP: {e}");
            return EXIT_USAGE;
        }
        let jobs = match vouch_server::open_jobs(&gateway).await {
            Ok(j) => j,
            Err(e) => {
                eprintln!("vouch: {e}");
                return EXIT_USAGE;
            }
        };
        if let Some(j) = &jobs {
            tracing::info!(store = %j.describe(), "jobs kept in {}", j.describe());
        }
        let listen = gateway.config().listen;
        let listener = match tokio::net::TcpListener::bind(listen).await {
            Ok(l) => l,
            Err(e) => {
                eprintln!("vouch: cannot listen on {listen}: {e}");
                return EXIT_USAGE;
            }
        };
        let shown = listener.local_addr().map_or_else(|_| listen.to_string(), |a| a.to_string());
        let names: Vec<String> = gateway.catalog().named.keys().cloned().collect();
        tracing::info!(contracts = ?names, upstream = %gateway.config().upstream, "vouch serve listening on http://{shown}");
        let served = vouch_server::serve(gateway, listener, stop).await;
        if let Some(j) = jobs {
            // Jobs still running after this are taken over when their lease ends.
            j.drain(std::time::Duration::from_secs(10)).await;
        }
        match served {
            Ok(()) => 0,
            Err(e) => {
                logged.flush(std::time::Duration::from_secs(5));
                eprintln!("vouch: the server failed: {e}");
                1
            }
        }
    });
    // The last lines (the drain, a failure) are written before the process ends.
    log_lines.flush(std::time::Duration::from_secs(5));
    code
}

/// One line per request at `info` (the gateway's own); the model client's
/// per-round and per-ask lines only at `debug` and below: at thousands of
/// requests a second, three scrubbed lines a request cost more than the
/// gateway's own work. Lines are written by a thread of their own
/// ([`crate::output::LogLines`]).
fn logs(level: tracing::Level) -> std::io::Result<crate::output::LogLines> {
    use tracing_subscriber::filter::{LevelFilter, Targets};
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    let client = if level >= tracing::Level::DEBUG { LevelFilter::from_level(level) } else { LevelFilter::WARN };
    let targets = Targets::new()
        .with_default(LevelFilter::from_level(level))
        .with_target("vouch_llm", client)
        .with_target("hyper", LevelFilter::WARN)
        .with_target("reqwest", LevelFilter::WARN);
    let lines = crate::output::LogLines::start()?;
    let fmt = tracing_subscriber::fmt::layer().with_target(false).with_ansi(false).with_writer(lines.clone());
    tracing_subscriber::registry().with(fmt).with(targets).init();
    Ok(lines)
}

/// SIGINT or SIGTERM, with both handlers installed now.
fn stop_signal() -> std::io::Result<impl std::future::Future<Output = ()> + Send + 'static> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let mut term = signal(SignalKind::terminate())?;
        let mut int = signal(SignalKind::interrupt())?;
        Ok(async move {
            tokio::select! {
                _ = int.recv() => {}
                _ = term.recv() => {}
            }
        })
    }
    #[cfg(not(unix))]
    {
        Ok(async {
            let _ = tokio::signal::ctrl_c().await;
        })
    }
}
