//! Progress bars on stderr (indicatif), drawn only when stderr is a terminal so that tests,
//! pipes and CI logs stay clean.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

/// A bar or spinner, or nothing when stderr is not a terminal.
pub struct Bar(Option<ProgressBar>);

impl Bar {
    /// A bar counting rows; its length is set by the first report that knows the total.
    pub fn rows(msg: &str) -> Bar {
        if !std::io::stderr().is_terminal() {
            return Bar(None);
        }
        let b = ProgressBar::new(0);
        let style = ProgressStyle::with_template("{msg} [{bar:40}] {human_pos}/{human_len} rows, {elapsed} (eta {eta})")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
        b.set_style(style);
        b.set_message(msg.to_string());
        Bar(Some(b))
    }

    /// A spinner for work that reports no progress (validation, index builds).
    pub fn spinner(msg: &str) -> Bar {
        if !std::io::stderr().is_terminal() {
            return Bar(None);
        }
        let b = ProgressBar::new_spinner();
        b.set_message(msg.to_string());
        b.enable_steady_tick(Duration::from_millis(120));
        Bar(Some(b))
    }

    /// The library-side sink that moves this bar.
    pub fn progress(&self) -> marquet::Progress {
        match &self.0 {
            None => marquet::Progress::default(),
            Some(b) => {
                let b = b.clone();
                marquet::Progress::new(move |done, total| {
                    if let Some(t) = total {
                        if b.length() != Some(t) {
                            b.set_length(t);
                        }
                    }
                    b.set_position(done);
                })
            }
        }
    }

    /// Remove the bar from the terminal.
    pub fn finish(&self) {
        if let Some(b) = &self.0 {
            b.finish_and_clear();
        }
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        self.finish();
    }
}
