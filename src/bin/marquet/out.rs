//! Standard output for scripts: every line the command prints goes through here, so that a
//! closed pipe (`marquet query … | head -1`) ends the output quietly — no panic, no message,
//! exit status as if the output had been read — as it ends `cat`. Large outputs (`dump`,
//! `query --format`) write through one buffered [`Out`] and stop at the first closed pipe.

use std::io::{BufWriter, ErrorKind, StdoutLock, Write};

/// Buffered standard output that remembers whether the reader went away.
pub struct Out {
    w: BufWriter<StdoutLock<'static>>,
    closed: bool,
}

impl Out {
    /// Lock standard output for the whole command.
    pub fn new() -> Out {
        Out { w: BufWriter::with_capacity(1 << 16, std::io::stdout().lock()), closed: false }
    }

    /// Write `text`; `Ok(false)` once the reader has closed the pipe (the caller stops),
    /// an error for any other failure to write.
    pub fn put(&mut self, text: &str) -> Result<bool, String> {
        if self.closed {
            return Ok(false);
        }
        match self.w.write_all(text.as_bytes()) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(false)
            }
            Err(e) => Err(format!("cannot write to standard output: {e}")),
        }
    }

    /// Flush what is buffered (a closed pipe is not an error).
    pub fn finish(mut self) -> Result<(), String> {
        if self.closed {
            return Ok(());
        }
        match self.w.flush() {
            Err(e) if e.kind() != ErrorKind::BrokenPipe => Err(format!("cannot write to standard output: {e}")),
            _ => Ok(()),
        }
    }
}

/// Print `text` as it is: `false` when the pipe was closed or the write failed (there is
/// nobody left to tell).
pub fn print(text: &str) -> bool {
    let mut o = Out::new();
    let ok = matches!(o.put(text), Ok(true));
    ok && o.finish().is_ok()
}

/// Print `text` and a newline (see [`print`]).
pub fn println(text: &str) -> bool {
    print(&format!("{text}\n"))
}
