//! Running the `vouch` binary as a user would.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `vouch` started from the project root with piped standard streams.
pub fn spawn(args: &[&str]) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_vouch"))
        .args(args)
        .current_dir(root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

pub fn vouch(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut child = spawn(args);
    let mut input = child.stdin.take().unwrap();
    // The command may exit before reading (a bad contract): a closed pipe is fine.
    let _ = input.write_all(stdin.unwrap_or_default());
    drop(input);
    child.wait_with_output().unwrap()
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A scratch file unique to this test process.
pub fn scratch(name: &str, content: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("vouch-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, content).unwrap();
    path
}

/// A `vouch serve` process started by a test: killed and waited for when dropped.
pub struct Served {
    pub child: std::process::Child,
    pub addr: String,
    pub log: std::sync::mpsc::Receiver<String>,
}

impl Served {
    /// Every log line so far.
    pub fn lines(&self) -> Vec<String> {
        self.log.try_iter().collect()
    }

    /// Kill it with SIGKILL, now.
    pub fn sigkill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Send it a signal (`-HUP`, `-STOP`…).
    pub fn signal(&self, signal: &str) {
        assert!(Command::new("kill").args([signal, &self.child.id().to_string()]).status().unwrap().success());
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        self.sigkill();
    }
}

/// `vouch serve --config DIR/NAME.toml` (the file written from `config`),
/// with `env` set, once it says it listens.
// The child is killed and waited for by `Served`'s drop (a panic on the way
// kills the test process, and the child with its pipe).
#[allow(clippy::zombie_processes)]
pub fn serve_config(dir: &std::path::Path, name: &str, config: &str, env: &[(&str, &str)]) -> Served {
    use std::io::BufRead as _;
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, config).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_vouch"));
    cmd.args(["serve", "--config", path.to_str().unwrap()])
        .current_dir(root())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr).lines() {
            let Ok(line) = line else { return };
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    let start = std::time::Instant::now();
    let mut said = Vec::new();
    loop {
        let Ok(line) = rx.recv_timeout(std::time::Duration::from_secs(20)) else {
            panic!("vouch serve did not start: {said:?}");
        };
        if let Some(at) = line.find("listening on http://") {
            let addr = line[at + "listening on http://".len()..].split_whitespace().next().unwrap().to_owned();
            return Served { child, addr, log: rx };
        }
        said.push(line);
        assert!(start.elapsed() < std::time::Duration::from_secs(20), "no listening line: {said:?}");
    }
}
