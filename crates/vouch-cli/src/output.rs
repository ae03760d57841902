//! Every byte the command writes goes through here: standard output and
//! standard error are each one [`ScrubbingWriter`], shared by the whole
//! process. `out!`/`outln!` write to the first; `eprint!`/`eprintln!` (the
//! crate's own, which shadow std's in every module) to the second; `batch`
//! writes its lines through [`Stdout`]; a panic's message goes through
//! standard error too.
//!
//! The scrubber changes nothing until a command that holds a secret
//! configures it ([`protect`]): `ask`, with its API key, as soon as it reads
//! it, so `check`, `batch`, `schema` and `audit` print their verdicts byte
//! for byte. A secret split across two writes is still found: the writers
//! keep an unfinished line until its line break or [`finish`].

use std::fmt;
use std::io::{self, Write};
use std::sync::{LazyLock, Mutex, MutexGuard, PoisonError};

use vouch_llm::{Scrubber, ScrubbingWriter};

static STDOUT: LazyLock<Mutex<ScrubbingWriter<io::Stdout>>> =
    LazyLock::new(|| Mutex::new(ScrubbingWriter::new(io::stdout(), Scrubber::none())));
static STDERR: LazyLock<Mutex<ScrubbingWriter<io::Stderr>>> =
    LazyLock::new(|| Mutex::new(ScrubbingWriter::new(io::stderr(), Scrubber::none())));

fn lock<W: Write>(w: &'static Mutex<ScrubbingWriter<W>>) -> MutexGuard<'static, ScrubbingWriter<W>> {
    w.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Scrub everything written from now on (both streams) with `scrubber`.
pub fn protect(scrubber: &Scrubber) {
    lock(&STDOUT).set_scrubber(scrubber.clone());
    lock(&STDERR).set_scrubber(scrubber.clone());
}

/// Write to standard output.
pub fn out(args: fmt::Arguments<'_>) -> io::Result<()> {
    let mut w = lock(&STDOUT);
    w.write_fmt(args)?;
    w.flush()
}

/// Write to standard error (errors are ignored: there is nowhere to report them).
pub fn err(args: fmt::Arguments<'_>) {
    let mut w = lock(&STDERR);
    let _ = w.write_fmt(args);
    let _ = w.flush();
}

/// Write the unfinished last lines of both streams. Call before exiting.
pub fn finish() -> io::Result<()> {
    let _ = lock(&STDERR).finish();
    lock(&STDOUT).finish()
}

/// Standard output through the scrubbing writer, as a [`Write`] of its own
/// (for `batch`'s writer thread).
pub struct Stdout;

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        lock(&STDOUT).write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        lock(&STDOUT).flush()
    }
}

/// A panic's message goes through standard error's scrubber too (if the
/// panic came while it was held, only a fixed sentence, written directly).
pub fn scrub_panics() {
    std::panic::set_hook(Box::new(|info| match STDERR.try_lock() {
        Ok(mut w) => {
            let _ = writeln!(w, "vouch: internal error: {info}");
            let _ = w.finish();
        }
        Err(_) => {
            let _ = writeln!(io::stderr(), "vouch: internal error (a panic while writing)");
        }
    }));
}

/// Standard error through the scrubbing writer, as a [`Write`] of its own
/// (for `serve`'s log lines).
pub struct Stderr;

impl Write for Stderr {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        lock(&STDERR).write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        lock(&STDERR).flush()
    }
}
