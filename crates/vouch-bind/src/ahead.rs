//! [`CheckAhead`]: many replies checked on a pool while the calling
//! thread is still handing them over and wrapping the verdicts already made.
//!
//! A binding's own work per reply (reading a string out of its runtime,
//! making the verdict object) runs on the thread that holds the runtime
//! (Python's GIL), one reply at a time. Done before and after a parallel
//! check, that work adds to it (Amdahl: the cores wait for it); done
//! *beside* it, in chunks that cross to the pool as soon as they are full,
//! it overlaps the check and the cores stay busy.

use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex, OnceLock};

use vouch::{Contract, Verdict};

/// Replies per task on the pool: large enough that a task's cost (a spawn,
/// a message) is small beside its checks, small enough that the first
/// verdicts come back while the caller is still handing replies over.
const CHUNK: usize = 32;

/// A reply as a binding holds it: checked as text when it is known to be
/// text (no second UTF-8 validation), else as bytes.
pub trait Reply: Send + 'static {
    /// The contract's verdict on this reply (`Contract::check`'s).
    fn check_with(&self, contract: &Contract) -> Verdict;
}

impl Reply for &'static str {
    fn check_with(&self, contract: &Contract) -> Verdict {
        contract.check_str(self)
    }
}

impl Reply for String {
    fn check_with(&self, contract: &Contract) -> Verdict {
        contract.check_str(self)
    }
}

impl Reply for Vec<u8> {
    fn check_with(&self, contract: &Contract) -> Verdict {
        contract.check(self)
    }
}

/// A chunk's replies and their verdicts, in order, or why it could not be
/// checked.
pub type Chunk<R> = Result<(Vec<R>, Vec<Verdict>), String>;

/// A chunk to check, with its place.
type Job<R> = (usize, Vec<R>);

/// A chunk back from the pool, with its place.
type Checked<R> = (usize, Chunk<R>);

/// The chunks no one has taken yet, and how many pool tasks are taking them.
struct Queue<R> {
    jobs: VecDeque<Job<R>>,
    workers: usize,
}

/// Replies checked ahead of the caller, on a pool of their own (one thread
/// fewer than the cores), handed back in the order they were pushed.
///
/// The caller [`push`](Self::push)es replies, takes what is [`ready`](Self::ready)
/// (in order) whenever it likes, calls [`finish`](Self::finish) after the last,
/// then [`wait`](Self::wait)s (with its runtime's lock released) and takes
/// the rest. Each reply comes back with its verdict, so the caller drops
/// its own handles where it may.
///
/// ```
/// use std::sync::Arc;
/// let contract = Arc::new(vouch_bind::compile(br#"{"type": "boolean"}"#).map_err(|m| m[0].message.clone())?);
/// let mut ahead = vouch_bind::CheckAhead::new(contract);
/// for reply in ["true", "1", "false"] {
///     ahead.push(reply);
/// }
/// ahead.finish();
/// let mut outcomes = Vec::new();
/// while ahead.pending() {
///     ahead.wait();
///     while let Some(chunk) = ahead.ready() {
///         let (_replies, verdicts) = chunk?;
///         outcomes.extend(verdicts.iter().map(|v| v.outcome()));
///     }
/// }
/// assert_eq!(outcomes, ["accepted", "refused", "accepted"]);
/// # Ok::<(), String>(())
/// ```
pub struct CheckAhead<R> {
    contract: Arc<Contract>,
    chunk: Vec<R>,
    /// Chunks sent to the pool.
    sent: usize,
    /// The next chunk to hand back.
    next: usize,
    /// Chunks back from the pool, from `next` on (`None`: not back yet).
    arrived: VecDeque<Option<Chunk<R>>>,
    /// Chunks sent and not yet taken by a task (or by `wait`).
    queue: Arc<Mutex<Queue<R>>>,
    /// At most this many pool tasks check at once (see [`workers_beside`]).
    max_workers: usize,
    done: Sender<Checked<R>>,
    back: Receiver<Checked<R>>,
}

impl<R: Reply> CheckAhead<R> {
    /// Nothing pushed yet.
    #[must_use]
    pub fn new(contract: Arc<Contract>) -> Self {
        let (done, back) = channel();
        Self {
            contract,
            chunk: Vec::with_capacity(CHUNK),
            sent: 0,
            next: 0,
            arrived: VecDeque::new(),
            queue: Arc::new(Mutex::new(Queue { jobs: VecDeque::new(), workers: 0 })),
            max_workers: pool()
                .map_or_else(|| workers_beside(rayon::current_num_threads()), rayon::ThreadPool::current_num_threads),
            done,
            back,
        }
    }

    /// One more reply; a full chunk goes to the pool at once.
    pub fn push(&mut self, reply: R) {
        self.chunk.push(reply);
        if self.chunk.len() >= CHUNK {
            self.send();
        }
    }

    /// No more replies: the last chunk goes to the pool.
    pub fn finish(&mut self) {
        if !self.chunk.is_empty() {
            self.send();
        }
    }

    /// Chunks sent and not yet handed back.
    #[must_use]
    pub fn pending(&self) -> bool {
        self.next < self.sent
    }

    /// The next chunk, in order, if it is back: its replies and their
    /// verdicts, or why it could not be checked (a panic in the check,
    /// which the core is built never to raise, as a message).
    pub fn ready(&mut self) -> Option<Chunk<R>> {
        while let Ok(checked) = self.back.try_recv() {
            self.arrive(checked);
        }
        if !matches!(self.arrived.front(), Some(Some(_))) {
            return None;
        }
        self.next += 1;
        self.arrived.pop_front().flatten()
    }

    /// Block until the next chunk in order is back (at once when it is, or
    /// when nothing is pending). A binding calls this with its runtime's
    /// lock released.
    pub fn wait(&mut self) {
        while self.pending() && !matches!(self.arrived.front(), Some(Some(_))) {
            // A chunk no task has taken yet is checked here: the pool's last
            // chunks are not waited for while this thread idles.
            let job = lock(&self.queue).jobs.pop_front();
            if let Some(job) = job {
                let checked = check_chunk(&self.contract, job);
                self.arrive(checked);
                continue;
            }
            match self.back.recv() {
                Ok(checked) => self.arrive(checked),
                // Unreachable while `self` holds a sender; nothing to wait for.
                Err(_) => break,
            }
        }
    }

    fn arrive(&mut self, (index, result): Checked<R>) {
        let Some(at) = index.checked_sub(self.next) else { return };
        while self.arrived.len() <= at {
            self.arrived.push_back(None);
        }
        if let Some(slot) = self.arrived.get_mut(at) {
            *slot = Some(result);
        }
    }

    fn send(&mut self) {
        let replies = std::mem::replace(&mut self.chunk, Vec::with_capacity(CHUNK));
        let index = self.sent;
        self.sent += 1;
        let start_one = {
            let mut queue = lock(&self.queue);
            queue.jobs.push_back((index, replies));
            let start_one = queue.workers < self.max_workers;
            queue.workers += usize::from(start_one);
            start_one
        };
        if start_one {
            let (queue, contract, done) = (Arc::clone(&self.queue), Arc::clone(&self.contract), self.done.clone());
            spawn(move || drain(&queue, &contract, &done));
        }
    }
}

/// Pool tasks beside a caller on `threads` threads: one fewer, and at least
/// one. The caller's thread hands replies over and wraps verdicts the whole
/// time (holding its runtime's lock, which only it can do), and checks
/// chunks itself while it waits, so it needs a core of its own: a task on
/// every core took turns with it on one, and every core then waited for
/// it. Measured with Python's `check_many` on 2 cores (2026-12-05, the
/// bench corpus's replies): 1.42 M/s plate replies with two tasks beside
/// the caller, 2.24 M/s with one.
fn workers_beside(threads: usize) -> usize {
    threads.saturating_sub(1).max(1)
}

/// The pool chunks are checked on: its own, of [`workers_beside`] the
/// global pool's threads (`RAYON_NUM_THREADS`, else one per core), so that
/// every thread it has is one a caller's chunks keep busy. On rayon's
/// global pool the one thread no task was given did not sleep: woken by
/// each spawn, it looked for work and yielded, over and over, and took the
/// core from the caller and the task in turn (Python's `check_many` on 2
/// cores, 2026-12-07: 11–16 involuntary context switches a pool thread
/// per call of 500 replies; none with a pool of one).
/// `None` if its threads could not be started: then the global pool.
fn pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: OnceLock<Option<rayon::ThreadPool>> = OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(workers_beside(rayon::current_num_threads()))
            .thread_name(|i| format!("vouch-check-{i}"))
            .build()
            .ok()
    })
    .as_ref()
}

/// `task` on [`pool`].
fn spawn(task: impl FnOnce() + Send + 'static) {
    match pool() {
        Some(pool) => pool.spawn(task),
        None => rayon::spawn(task),
    }
}

/// A pool task: checks the first chunk in the queue until none is left.
/// It takes its leave under the queue's lock, so a chunk pushed meanwhile
/// finds it still counted and starts another.
fn drain<R: Reply>(queue: &Mutex<Queue<R>>, contract: &Contract, done: &Sender<Checked<R>>) {
    loop {
        let job = {
            let mut queue = lock(queue);
            let job = queue.jobs.pop_front();
            if job.is_none() {
                queue.workers = queue.workers.saturating_sub(1);
            }
            job
        };
        let Some(job) = job else { return };
        // The caller may have gone (an error while handing replies over):
        // its drop emptied the queue, so this task ends at its next look.
        let _ = done.send(check_chunk(contract, job));
    }
}

impl<R> Drop for CheckAhead<R> {
    /// Chunks no task has taken are dropped here, on the caller's thread
    /// (a binding's handles with it, where its runtime's lock is held), not
    /// checked for nobody: the caller stopped early (an error in its input).
    fn drop(&mut self) {
        let left = std::mem::take(&mut lock(&self.queue).jobs);
        drop(left);
    }
}

/// A chunk's verdicts. A panic must not abort the caller's process
/// (rayon's default for a spawned task): it comes back as the chunk's error.
fn check_chunk<R: Reply>(contract: &Contract, (index, replies): Job<R>) -> Checked<R> {
    let checked = catch_unwind(AssertUnwindSafe(|| replies.iter().map(|r| r.check_with(contract)).collect()));
    let result = match checked {
        Ok(verdicts) => Ok((replies, verdicts)),
        Err(_) => Err("vouch: internal error while checking a chunk of replies (a bug: please report it)".to_owned()),
    };
    (index, result)
}

/// The queue, whether or not a holder panicked (none checks while holding it).
fn lock<T>(queue: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    queue.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    // A test that cannot go on says why (input here is the test's own).
    #![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn verdicts_come_back_in_order_with_their_replies() {
        let contract = Arc::new(
            crate::compile(
                br#"{"type":"object","required":["n"],"properties":{"n":{"type":"integer","maximum":500}}}"#,
            )
            .unwrap(),
        );
        let mut ahead = CheckAhead::new(Arc::clone(&contract));
        let replies: Vec<String> = (0..1000).map(|n| format!(r#"{{"n": {n}}}"#)).collect();
        let mut back = Vec::new();
        for (i, r) in replies.iter().enumerate() {
            ahead.push(r.clone());
            // Taking what is ready while pushing, as a binding does.
            if i % 100 == 0 {
                while let Some(chunk) = ahead.ready() {
                    back.push(chunk.unwrap());
                }
            }
        }
        ahead.finish();
        while ahead.pending() {
            ahead.wait();
            while let Some(chunk) = ahead.ready() {
                back.push(chunk.unwrap());
            }
        }
        let (texts, verdicts): (Vec<String>, Vec<Verdict>) =
            back.into_iter().flat_map(|(r, v)| r.into_iter().zip(v)).unzip();
        assert_eq!(texts, replies, "every reply handed back once, in order");
        let outcomes: Vec<&str> = verdicts.iter().map(Verdict::outcome).collect();
        let want: Vec<&str> = (0..1000).map(|n| if n <= 500 { "accepted" } else { "refused" }).collect();
        assert_eq!(outcomes, want);
        for (r, v) in replies.iter().zip(&verdicts) {
            assert_eq!(crate::verdict_json(v), crate::verdict_json(&contract.check(r.as_bytes())));
        }
    }

    #[test]
    fn chunks_left_when_the_caller_stops_are_not_checked() {
        // Every pool thread held at a gate first (the pool takes spawned
        // tasks in order), so no task takes a chunk before the drop.
        let gate = Arc::new((Mutex::new(false), std::sync::Condvar::new()));
        for _ in 0..pool().map_or_else(rayon::current_num_threads, rayon::ThreadPool::current_num_threads) {
            let gate = Arc::clone(&gate);
            spawn(move || {
                let (open, opened) = &*gate;
                let mut is_open = lock(open);
                while !*is_open {
                    is_open = opened.wait(is_open).unwrap();
                }
            });
        }
        let contract = Arc::new(crate::compile(b"true").unwrap());
        let mut ahead: CheckAhead<String> = CheckAhead::new(contract);
        for _ in 0..CHUNK * 100 {
            ahead.push("{}".to_owned());
        }
        let queue = Arc::clone(&ahead.queue);
        let before = lock(&queue).jobs.len();
        drop(ahead);
        let left = lock(&queue).jobs.len();
        // The gate opened before any assertion, so a failure cannot hang the pool.
        *lock(&gate.0) = true;
        gate.1.notify_all();
        assert_eq!(before, 100);
        assert_eq!(left, 0, "the caller's drop empties the queue");
    }

    /// A reply that counts how many pool threads check at once.
    struct Counted(Arc<(std::sync::atomic::AtomicUsize, std::sync::atomic::AtomicUsize)>);

    impl Reply for Counted {
        fn check_with(&self, contract: &Contract) -> Verdict {
            use std::sync::atomic::Ordering::SeqCst;
            let (now, most) = &*self.0;
            let on_pool = rayon::current_thread_index().is_some();
            if on_pool {
                most.fetch_max(now.fetch_add(1, SeqCst) + 1, SeqCst);
            }
            std::thread::sleep(std::time::Duration::from_micros(200));
            if on_pool {
                now.fetch_sub(1, SeqCst);
            }
            contract.check_str("{}")
        }
    }

    #[test]
    fn the_pool_checks_on_one_thread_fewer_than_it_has() {
        let contract = Arc::new(crate::compile(b"true").unwrap());
        let counts = Arc::new(Default::default());
        let mut ahead = CheckAhead::new(contract);
        for _ in 0..CHUNK * 20 {
            ahead.push(Counted(Arc::clone(&counts)));
        }
        ahead.finish();
        let mut verdicts = 0;
        while ahead.pending() {
            ahead.wait();
            while let Some(chunk) = ahead.ready() {
                verdicts += chunk.unwrap().1.len();
            }
        }
        assert_eq!(verdicts, CHUNK * 20);
        // (Another test may hold the pool meanwhile: then the caller checked
        // every chunk itself, and none ran on the pool.)
        let most = counts.1.load(std::sync::atomic::Ordering::SeqCst);
        let threads = rayon::current_num_threads();
        assert!(most <= workers_beside(threads), "{most} pool threads checked at once, of {threads}");
        // The pool has no thread more than its tasks: an idle one would spin.
        assert_eq!(pool().map(rayon::ThreadPool::current_num_threads), Some(workers_beside(threads)));
        assert_eq!((workers_beside(1), workers_beside(2), workers_beside(8)), (1, 1, 7));
    }

    #[test]
    fn a_chunk_pushed_after_the_pool_ran_dry_is_checked_without_waiting() {
        // The pool's task ends when the queue is empty; a chunk pushed after
        // that starts another, so it comes back while the caller only polls.
        let contract = Arc::new(crate::compile(br#"{"type":"object"}"#).unwrap());
        let mut ahead: CheckAhead<String> = CheckAhead::new(contract);
        for round in 0..3 {
            for _ in 0..CHUNK {
                ahead.push("{}".to_owned());
            }
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
            let chunk = loop {
                if let Some(chunk) = ahead.ready() {
                    break chunk.unwrap();
                }
                assert!(std::time::Instant::now() < deadline, "round {round}: the chunk was never checked");
                std::thread::sleep(std::time::Duration::from_millis(1));
            };
            assert_eq!(chunk.1.len(), CHUNK);
            assert!(chunk.1.iter().all(Verdict::is_accepted));
            // The task leaves once it finds the queue empty.
            while lock(&ahead.queue).workers > 0 {
                assert!(std::time::Instant::now() < deadline, "round {round}: the task never left");
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        }
        assert!(!ahead.pending());
    }

    #[test]
    fn nothing_pushed_is_nothing_pending() {
        let contract = Arc::new(crate::compile(b"true").unwrap());
        let mut ahead: CheckAhead<Vec<u8>> = CheckAhead::new(contract);
        ahead.finish();
        assert!(!ahead.pending());
        ahead.wait();
        assert!(ahead.ready().is_none());
    }
}
