//! Progress reports from long operations (conversion, append), for the CLI's progress
//! bars. The library only calls the function; drawing is the caller's business.

use std::sync::Arc;

/// A progress sink: called with (rows done, rows in total when known) after each batch.
/// The default reports nowhere.
#[derive(Clone, Default)]
pub struct Progress(Option<Arc<ProgressFn>>);

/// The function behind a [`Progress`]: (rows done, rows in total when known).
pub type ProgressFn = dyn Fn(u64, Option<u64>) + Send + Sync;

impl Progress {
    /// A sink that calls `f(done, total)`.
    pub fn new(f: impl Fn(u64, Option<u64>) + Send + Sync + 'static) -> Progress {
        Progress(Some(Arc::new(f)))
    }

    /// Report `done` of `total` rows.
    pub fn report(&self, done: u64, total: Option<u64>) {
        if let Some(f) = &self.0 {
            f(done, total);
        }
    }

    /// Does this sink report anywhere?
    pub fn is_active(&self) -> bool {
        self.0.is_some()
    }
}

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() { "Progress(active)" } else { "Progress(none)" })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn reports_reach_the_function_in_order() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = seen.clone();
        let p = Progress::new(move |d, t| s.lock().unwrap().push((d, t)));
        assert!(p.is_active());
        p.report(10, Some(20));
        p.clone().report(20, None);
        assert_eq!(*seen.lock().unwrap(), vec![(10, Some(20)), (20, None)]);
        let none = Progress::default();
        assert!(!none.is_active());
        none.report(1, None);
        assert_eq!(format!("{none:?}"), "Progress(none)");
    }
}
