//! The protocol of the crash tests (tests/crash_append.rs, tests/crash_marquet.rs): a
//! writer child — the test binary itself running one test — prints `ready`, then
//! `committed <k>` after each operation returned, then `done`, each line behind a mark
//! the harness's own output cannot contain; the parent reads those lines as they come and
//! kills the child with SIGKILL when it chooses.

use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread::JoinHandle;

/// Signal number of SIGKILL (9 on Linux and the BSDs).
pub const SIGKILL: i32 = 9;

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Event {
    Ready,
    Committed(u64),
    Done,
}

/// In the child: print one protocol line behind `mark` and flush.
pub fn say(mark: &str, line: &str) {
    let mut out = std::io::stdout().lock();
    writeln!(out, "\n{mark}{line}").unwrap();
    out.flush().unwrap();
}

fn parse(mark: &str, line: &str) -> Option<Event> {
    let rest = &line[line.find(mark)? + mark.len()..];
    match rest.trim() {
        "ready" => Some(Event::Ready),
        "done" => Some(Event::Done),
        s => s.strip_prefix("committed ").map(|n| Event::Committed(n.parse().expect("committed count"))),
    }
}

/// A running writer child.
pub struct Writer {
    child: Child,
    /// Events as the child reports them.
    pub events: mpsc::Receiver<Event>,
    reader: JoinHandle<Vec<Event>>,
}

/// Start this test binary running test `test` alone, with `envs` set (a `None` value
/// removes the variable) and stderr going to `stderr`.
pub fn spawn_writer(test: &str, envs: &[(&str, Option<&OsStr>)], stderr: &Path, mark: &'static str) -> Writer {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([test, "--exact", "--nocapture", "--test-threads=1"]);
    for (k, v) in envs {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(stderr).unwrap())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, events) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut seen = Vec::new();
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if let Some(e) = parse(mark, &line) {
                seen.push(e);
                let _ = tx.send(e);
            }
        }
        seen
    });
    Writer { child, events, reader }
}

impl Writer {
    /// SIGKILL the child (a no-op if it has exited) and return its exit status and every
    /// event it reported.
    pub fn kill(mut self) -> (ExitStatus, Vec<Event>) {
        let _ = self.child.kill();
        let status = self.child.wait().unwrap();
        (status, self.reader.join().unwrap())
    }
}
