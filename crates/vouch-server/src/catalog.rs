//! The contracts the gateway enforces: the configured folder's, by name,
//! and inline ones compiled from a request's own schema, cached by content.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use vouch::Contract;
use vouch_llm::{ApiKey, Asker, Backoff, Config, Limits, Mode, SetupError};

use crate::config::ServerConfig;

/// One contract, ready to ask with.
pub struct Entry {
    /// Its name (the file stem, or `inline` for a request's own schema).
    pub name: String,
    /// The asker: contract, upstream client, prompt and `response_format`.
    pub asker: Asker,
    /// What one ask may spend (a request may only tighten it).
    pub limits: Limits,
    /// Set when the contract is sent as `json_object` because OpenAI strict
    /// mode cannot express it: why.
    pub json_mode_because: Option<String>,
    /// The contract's version: the first 16 bytes of the SHA-256 of its
    /// text, in hex. A job records it when posted and is refused, not run,
    /// if the contract it runs under is another.
    pub version: String,
}

/// The version of a contract's text (see [`Entry::version`]).
#[must_use]
pub fn version_of(text: &[u8]) -> String {
    crate::digest16(text)
}

/// Whether a name can be a contract's: what OpenAI allows as a schema name.
#[must_use]
pub fn is_contract_name(name: &str) -> bool {
    vouch::is_schema_name(name)
}

/// Build the entry of one compiled contract.
///
/// # Errors
/// A sentence: the upstream URL or key cannot be used.
pub fn entry(
    name: &str,
    contract: Contract,
    version: String,
    config: &ServerConfig,
    key: Option<&ApiKey>,
) -> Result<Entry, String> {
    let settings = config.settings_for(name);
    let mut c = Config::new(config.upstream.clone(), config.default_model.clone());
    c.api_key = key.cloned();
    c.schema_name = if is_contract_name(name) { name.to_owned() } else { "answer".to_owned() };
    c.rounds = settings.rounds.unwrap_or(2).max(1);
    c.max_total_tokens = settings.max_total_tokens;
    c.deadline = settings.deadline_ms.map(Duration::from_millis);
    c.timeouts = config.timeouts.timeouts();
    c.backoff = Backoff { max_wait: Duration::from_millis(config.max_retry_wait_ms), ..Backoff::default() };
    c.mode = if settings.mode.as_deref() == Some("json") { Mode::Json } else { Mode::Schema };
    let limits = c.limits();
    let mut json_mode_because = None;
    let asker = match Asker::new(contract.clone(), c.clone()) {
        Ok(a) => a,
        Err(SetupError::Export(e)) => {
            json_mode_because = Some(e.to_string());
            c.mode = Mode::Json;
            Asker::new(contract, c).map_err(|e| e.to_string())?
        }
        Err(e) => return Err(e.to_string()),
    };
    Ok(Entry { name: name.to_owned(), asker, limits, json_mode_because, version })
}

/// The folder's contracts, by name.
#[derive(Default)]
pub struct Catalog {
    /// Name → entry.
    pub named: BTreeMap<String, Arc<Entry>>,
}

/// A contract file that could not be loaded, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadError {
    /// The contract's name (file stem).
    pub name: String,
    /// Every mistake, one sentence each.
    pub message: String,
}

impl Catalog {
    /// Load every `NAME.json` of the folder. A file that does not compile
    /// keeps `previous`'s contract of that name, if there is one, and is
    /// reported; a file that is gone is dropped.
    ///
    /// # Errors
    /// The folder cannot be read.
    pub fn load(
        dir: &Path,
        config: &ServerConfig,
        key: Option<&ApiKey>,
        previous: Option<&Catalog>,
    ) -> Result<(Catalog, Vec<LoadError>), String> {
        let listing =
            std::fs::read_dir(dir).map_err(|e| format!("{}: cannot read the contracts folder: {e}", dir.display()))?;
        let mut paths: Vec<_> = listing
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        paths.sort();
        let mut named = BTreeMap::new();
        let mut errors = Vec::new();
        for path in paths {
            let Some(name) = path.file_stem().and_then(|s| s.to_str()).map(str::to_owned) else { continue };
            if !is_contract_name(&name) {
                errors.push(LoadError {
                    name: name.clone(),
                    message: format!(
                        "{}: a contract's name is 1 to 64 letters, digits, '_' or '-' (it is sent as the schema name)",
                        path.display()
                    ),
                });
                continue;
            }
            let loaded = read_contract_file(&path)
                .map_err(|e| format!("{}: cannot read the contract: {e}", path.display()))
                .and_then(|text| {
                    let contract = Contract::from_json_str(&text).map_err(|e| {
                        let lines: Vec<String> = e.every().map(|err| format!("{}: {err}", path.display())).collect();
                        lines.join("; ")
                    })?;
                    entry(&name, contract, version_of(text.as_bytes()), config, key)
                });
            match loaded {
                Ok(e) => {
                    named.insert(name, Arc::new(e));
                }
                Err(message) => {
                    if let Some(old) = previous.and_then(|p| p.named.get(&name)) {
                        named.insert(name.clone(), Arc::clone(old));
                    }
                    errors.push(LoadError { name, message });
                }
            }
        }
        Ok((Catalog { named }, errors))
    }
}

/// Inline contracts, compiled once per distinct schema text, the oldest
/// dropped past `capacity` entries or `max_bytes` of memory (each weighed by
/// [`Contract::size_estimate`] and its text: a schema of a few bytes of
/// pattern can compile to megabytes).
pub struct InlineCache {
    inner: Mutex<Inline>,
    capacity: usize,
    max_bytes: usize,
}

#[derive(Default)]
struct Inline {
    /// Each entry with its weight.
    by_text: HashMap<String, (Arc<Entry>, usize)>,
    order: VecDeque<String>,
    bytes: usize,
}

/// What a request's own schema comes to.
pub enum InlineContract {
    /// Compiled (now or before).
    Ready(Arc<Entry>),
    /// It does not compile: every mistake.
    Invalid(Vec<String>),
}

impl InlineCache {
    /// An empty cache.
    #[must_use]
    pub fn new(capacity: usize, max_bytes: usize) -> Self {
        Self { inner: Mutex::new(Inline::default()), capacity: capacity.max(1), max_bytes }
    }

    /// How many are cached.
    #[must_use]
    pub fn len(&self) -> usize {
        self.inner.lock().map_or(0, |i| i.by_text.len())
    }

    /// Whether none is cached.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The entry of this schema, compiling it on first sight.
    pub fn get_or_compile(&self, schema: &Value, config: &ServerConfig, key: Option<&ApiKey>) -> InlineContract {
        let text = vouch::to_json_string(schema);
        if let Some((e, _)) = self.inner.lock().ok().and_then(|i| i.by_text.get(&text).cloned()) {
            return InlineContract::Ready(e);
        }
        let contract = match Contract::from_value(schema.clone()) {
            Ok(c) => c,
            Err(e) => return InlineContract::Invalid(e.every().map(ToString::to_string).collect()),
        };
        let weight = contract.size_estimate().saturating_add(text.len());
        let entry = match entry("inline", contract, version_of(text.as_bytes()), config, key) {
            Ok(e) => Arc::new(e),
            Err(message) => return InlineContract::Invalid(vec![message]),
        };
        if let Ok(mut inner) = self.inner.lock() {
            if weight <= self.max_bytes && !inner.by_text.contains_key(&text) {
                while inner.by_text.len() >= self.capacity || inner.bytes.saturating_add(weight) > self.max_bytes {
                    let Some(oldest) = inner.order.pop_front() else { break };
                    if let Some((_, w)) = inner.by_text.remove(&oldest) {
                        inner.bytes = inner.bytes.saturating_sub(w);
                    }
                }
                inner.bytes = inner.bytes.saturating_add(weight);
                inner.order.push_back(text.clone());
                inner.by_text.insert(text, (Arc::clone(&entry), weight));
            }
        }
        InlineContract::Ready(entry)
    }
}

/// Largest contract file read (a contract is a schema, not data).
const MAX_CONTRACT_FILE: u64 = 4 * 1024 * 1024;

/// A contract file's text: a regular file (after symlinks), read only up to
/// [`MAX_CONTRACT_FILE`]. A FIFO would block the reload (and with it every
/// request waiting on the catalog), a link to `/dev/zero` would fill memory.
fn read_contract_file(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    if meta.len() > MAX_CONTRACT_FILE {
        return Err(std::io::Error::other(format!("larger than {MAX_CONTRACT_FILE} bytes")));
    }
    let mut text = String::new();
    std::fs::File::open(path)?.take(MAX_CONTRACT_FILE + 1).read_to_string(&mut text)?;
    if text.len() as u64 > MAX_CONTRACT_FILE {
        return Err(std::io::Error::other(format!("larger than {MAX_CONTRACT_FILE} bytes")));
    }
    Ok(text)
}
