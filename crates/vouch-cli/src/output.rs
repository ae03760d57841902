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
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, LazyLock, Mutex, MutexGuard, PoisonError};

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

/// `serve`'s log lines, written to standard error (through its scrubber)
/// by a thread of their own: a request's line is handed over and the
/// worker goes on, instead of taking standard error's lock and making a
/// system call on the request's path. Lines keep their order. When the
/// writer falls behind by [`LOG_QUEUE`] lines (standard error blocked),
/// further lines are dropped, counted, and the count is written once it
/// catches up: logging never stalls the gateway.
#[derive(Clone)]
pub struct LogLines {
    queue: mpsc::SyncSender<Logged>,
    dropped: Arc<AtomicU64>,
}

/// Lines the log writer may fall behind by before lines are dropped.
pub const LOG_QUEUE: usize = 65_536;

/// How long the log writer gathers lines after the first before writing them.
const LOG_COALESCE: std::time::Duration = std::time::Duration::from_millis(5);

enum Logged {
    Line(Vec<u8>),
    /// Everything before it is written: answer on the channel.
    Flushed(mpsc::SyncSender<()>),
}

impl LogLines {
    /// Start the writer thread.
    ///
    /// # Errors
    /// When the thread cannot be started.
    pub fn start() -> io::Result<Self> {
        let (queue, lines) = mpsc::sync_channel::<Logged>(LOG_QUEUE);
        let dropped = Arc::new(AtomicU64::new(0));
        let seen = Arc::clone(&dropped);
        std::thread::Builder::new().name("vouch-log".into()).spawn(move || {
            let mut batch = Vec::new();
            while let Ok(first) = lines.recv() {
                // Lines that come within a few milliseconds of each other go out in
                // one write: at thousands of requests a second, a wake-up and a
                // write per line cost the gateway's tail latency more than the
                // line is worth (a flush is written at once).
                if matches!(first, Logged::Line(_)) {
                    std::thread::sleep(LOG_COALESCE);
                }
                // Everything already queued goes out in one write.
                let mut answer = Vec::new();
                let mut next = Some(first);
                while let Some(logged) = next.take() {
                    match logged {
                        Logged::Line(line) => batch.extend_from_slice(&line),
                        Logged::Flushed(done) => answer.push(done),
                    }
                    if batch.len() >= 1 << 16 {
                        break;
                    }
                    next = lines.try_recv().ok();
                }
                let n = seen.swap(0, Ordering::Relaxed);
                if n > 0 {
                    let _ = writeln!(batch, "vouch: {n} log lines dropped (standard error did not keep up)");
                }
                let mut w = lock(&STDERR);
                let _ = w.write_all(&batch);
                let _ = w.flush();
                drop(w);
                batch.clear();
                for done in answer {
                    let _ = done.send(());
                }
            }
        })?;
        Ok(Self { queue, dropped })
    }

    /// Wait (at most `limit`) until every line handed over so far is written.
    pub fn flush(&self, limit: std::time::Duration) {
        let deadline = std::time::Instant::now() + limit;
        let (done, wait) = mpsc::sync_channel(1);
        let mut ask = Logged::Flushed(done);
        // A full queue (standard error blocked) is waited on until the deadline, no longer.
        loop {
            match self.queue.try_send(ask) {
                Ok(()) => break,
                Err(mpsc::TrySendError::Full(back)) if std::time::Instant::now() < deadline => {
                    ask = back;
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
                Err(_) => return,
            }
        }
        let _ = wait.recv_timeout(deadline.saturating_duration_since(std::time::Instant::now()));
    }
}

/// One log line being formatted; handed to the writer thread when dropped.
pub struct LogLine<'a> {
    line: Vec<u8>,
    to: &'a LogLines,
}

impl Write for LogLine<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.line.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Drop for LogLine<'_> {
    fn drop(&mut self) {
        if self.line.is_empty() {
            return;
        }
        let line = std::mem::take(&mut self.line);
        if let Err(mpsc::TrySendError::Full(_)) = self.to.queue.try_send(Logged::Line(line)) {
            self.to.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for LogLines {
    type Writer = LogLine<'a>;

    fn make_writer(&'a self) -> LogLine<'a> {
        LogLine { line: Vec::with_capacity(160), to: self }
    }
}
