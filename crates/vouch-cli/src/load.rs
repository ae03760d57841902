//! Loading contracts and replies from files, with errors that name the file.

use std::io::Read;
use std::path::Path;

use vouch::{CompileErrorKind, Contract};

/// Exit code for a bad invocation or a contract that does not compile.
pub const EXIT_USAGE: u8 = 2;

/// Read and compile a contract file. The error names the file and where in
/// it the problem is (line and column for JSON syntax, a JSON Pointer for the
/// schema).
pub fn contract(path: &Path) -> Result<Contract, String> {
    let text =
        std::fs::read_to_string(path).map_err(|e| format!("{}: cannot read the contract: {e}", path.display()))?;
    Contract::from_json_str(&text).map_err(|e| match e.kind {
        CompileErrorKind::NotJson => format!("{}: {}", path.display(), e.message),
        _ => format!("{}: {e}", path.display()),
    })
}

/// Read a reply from a file, or from standard input for `-` or no argument.
/// Bytes, not text: invalid UTF-8 is the core's to refuse.
pub fn reply(path: Option<&Path>) -> Result<Vec<u8>, String> {
    match path {
        None => stdin(),
        Some(p) if p == Path::new("-") => stdin(),
        Some(p) => std::fs::read(p).map_err(|e| format!("{}: cannot read the reply: {e}", p.display())),
    }
}

fn stdin() -> Result<Vec<u8>, String> {
    let mut buf = Vec::new();
    std::io::stdin().read_to_end(&mut buf).map_err(|e| format!("cannot read standard input: {e}"))?;
    Ok(buf)
}
