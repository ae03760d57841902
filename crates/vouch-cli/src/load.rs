//! Loading contracts and replies from files, with errors that name the file.

use std::io::Read;
use std::path::Path;

use vouch::Contract;

/// Exit code for a bad invocation or a contract that does not compile.
pub const EXIT_USAGE: u8 = 2;

/// Read and compile a contract file. The error names the file and where in
/// it the problem is (line and column for JSON syntax, a JSON Pointer for the
/// schema).
pub fn contract(path: &Path) -> Result<Contract, String> {
    contract_or_errors(path).map_err(|(message, _)| message)
}

/// [`contract`] for a command that stops at a contract it cannot use: why
/// is printed (`vouch: …`), and the exit code is [`EXIT_USAGE`].
pub fn contract_or_exit(path: &Path) -> Result<Contract, u8> {
    contract(path).map_err(|e| {
        eprintln!("vouch: {e}");
        EXIT_USAGE
    })
}

/// [`contract`], keeping the compile errors for a caller that prints them
/// as JSON (`None`: the file could not be read).
pub fn contract_or_errors(path: &Path) -> Result<Contract, (String, Option<Box<vouch::CompileError>>)> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| (format!("{}: cannot read the contract: {e}", path.display()), None))?;
    Contract::from_json_str(&text).map_err(|e| {
        // Every mistake, one per line, each naming the file.
        let lines: Vec<String> = e.every().map(|err| format!("{}: {}", path.display(), one_error(err))).collect();
        (lines.join("\n"), Some(Box::new(e)))
    })
}

/// One compile error without the others it carries.
pub fn one_error(e: &vouch::CompileError) -> String {
    e.line()
}

/// A reply as read: at most the contract's `max_bytes` + 1 bytes.
pub struct Reply {
    /// The bytes read (all of the reply unless `over`).
    pub bytes: Vec<u8>,
    /// The reply has more than `max_bytes` bytes: reading stopped at
    /// `max_bytes + 1`, and the rest was left unread.
    pub over: bool,
    /// The reply's whole size, where it is known without reading it (a
    /// regular file's length).
    pub size: Option<u64>,
}

/// Read a reply from a file, or from standard input for `-` or no argument,
/// stopping after `max_bytes + 1` bytes: a reply over the limit is refused
/// without reading the rest, so memory stays ~`max_bytes` whatever the
/// input's size. Bytes, not text: invalid UTF-8 is the core's to refuse.
pub fn reply(path: Option<&Path>, max_bytes: usize) -> Result<Reply, String> {
    match path {
        None => stdin(max_bytes),
        Some(p) if p == Path::new("-") => stdin(max_bytes),
        Some(p) => {
            let file = std::fs::File::open(p).map_err(|e| format!("{}: cannot read the reply: {e}", p.display()))?;
            let size = file.metadata().ok().filter(std::fs::Metadata::is_file).map(|m| m.len());
            let mut reply =
                bounded(file, max_bytes).map_err(|e| format!("{}: cannot read the reply: {e}", p.display()))?;
            // A file that changed while read (shorter than what was read) has no size to trust.
            reply.size = size.filter(|&n| usize::try_from(n).is_ok_and(|n| n >= reply.bytes.len()));
            Ok(reply)
        }
    }
}

fn stdin(max_bytes: usize) -> Result<Reply, String> {
    use std::io::IsTerminal as _;
    if std::io::stdin().is_terminal() {
        // Nobody piped a reply in: say what vouch is waiting for.
        eprintln!("vouch: reading the reply from standard input (paste it, then Ctrl-D; or give a file)");
    }
    bounded(std::io::stdin().lock(), max_bytes).map_err(|e| format!("cannot read standard input: {e}"))
}

impl Reply {
    /// The contract's verdict on the reply. Over the limit, with its size
    /// known (a file): the core's verdict on the whole reply, the bytes read
    /// fed and the rest counted (`Contract::check_start`: the core reads
    /// no further either), so a file gets what the bindings give the
    /// same bytes. Over the limit, its size unknown (standard input, whose
    /// rest is not read): `too_large`, "at least N bytes".
    pub fn check(&self, contract: &Contract) -> vouch::Verdict {
        if !self.over {
            return contract.check(&self.bytes);
        }
        self.size
            .and_then(|n| usize::try_from(n).ok())
            .and_then(|len| contract.check_start(&self.bytes, len))
            .unwrap_or_else(|| contract.refuse_too_large(self.bytes.len()))
    }
}

/// At most `max_bytes + 1` bytes of `input`.
fn bounded(input: impl Read, max_bytes: usize) -> std::io::Result<Reply> {
    let cap = u64::try_from(max_bytes).unwrap_or(u64::MAX).saturating_add(1);
    let mut bytes = Vec::new();
    input.take(cap).read_to_end(&mut bytes)?;
    let over = bytes.len() > max_bytes;
    Ok(Reply { bytes, over, size: None })
}
