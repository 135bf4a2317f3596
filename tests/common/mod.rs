//! Shared helpers for the integration tests: temp dirs, finding and running h5dump,
//! golden-file comparison, and a small seeded RNG.
//!
//! Environment:
//! * `MARQUET_H5DUMP` — path of an h5dump >= 1.14 (set by CI). Without it the cached
//!   build of `scripts/build-h5dump.sh` (`~/.cache/marquet/h5dump-1.14.5/h5dump`) is used.
//! * `CI` or `MARQUET_REQUIRE_H5DUMP=1` — a missing h5dump fails the golden-DDL tests
//!   instead of skipping them. `scripts/test.sh` exports `MARQUET_REQUIRE_H5DUMP=1`.
//! * `MARQUET_BLESS=1` — (re)write golden files instead of comparing with them.

#![allow(dead_code)]

/// The synthetic data generators of `marquet bench` (compiled in from the binary).
pub use marquet_dev::synth;

pub mod crash;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, MutexGuard};

/// The placeholder that replaces the temp file path in the first line of h5dump output.
pub const FILE_PLACEHOLDER: &str = "<FILE>";

/// A fresh, empty directory for one test (`<tmp>/marquet-<tag>-<pid>-<n>`), removed on drop
/// unless the test panicked (so a failing test leaves its files for inspection).
pub struct TempDir {
    path: PathBuf,
}

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        static N: AtomicU32 = AtomicU32::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("marquet-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap_or_else(|e| panic!("cannot create {}: {e}", path.display()));
        TempDir { path }
    }
    pub fn path(&self) -> &Path {
        &self.path
    }
    pub fn join(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("keeping {} for inspection", self.path.display());
        } else {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

/// Hold this for the whole of a test that keeps HDF5 files open while another test of the
/// same binary may spawn a process (h5dump). HDF5 opens files without `O_CLOEXEC` and locks
/// them with `flock`, so a child forked meanwhile inherits the descriptor and keeps the
/// lock after the test closes the file; reopening it then fails with "unable to lock file"
/// (errno 11) until the child exits.
pub fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

fn env_set(name: &str) -> bool {
    std::env::var_os(name).is_some_and(|v| !v.is_empty())
}

/// Where h5dump should be: `MARQUET_H5DUMP`, else the cache of `scripts/build-h5dump.sh`.
/// `None` when neither exists. A `MARQUET_H5DUMP` that names no file is a setup error.
pub fn find_h5dump() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("MARQUET_H5DUMP").filter(|v| !v.is_empty()) {
        let p = PathBuf::from(p);
        assert!(p.is_file(), "MARQUET_H5DUMP={} is not a file", p.display());
        return Some(p);
    }
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    let p = cache.join("marquet").join("h5dump-1.14.5").join("h5dump");
    p.is_file().then_some(p)
}

/// Must the golden-DDL tests have an h5dump (env `CI`, or `MARQUET_REQUIRE_H5DUMP=1` as
/// `scripts/test.sh` exports it)?
pub fn h5dump_required() -> bool {
    env_set("CI") || std::env::var("MARQUET_REQUIRE_H5DUMP").is_ok_and(|v| v == "1")
}

/// What a golden test does with the h5dump it `found`: run it (`Ok(Some)`), skip
/// (`Ok(None)`), or fail (`Err`) when none was found but one is `required`.
pub fn h5dump_decision(test: &str, found: Option<PathBuf>, required: bool) -> Result<Option<PathBuf>, String> {
    match (found, required) {
        (Some(p), _) => Ok(Some(p)),
        (None, true) => Err(format!(
            "{test}: no h5dump found (set MARQUET_H5DUMP or run scripts/build-h5dump.sh); required under CI and scripts/test.sh"
        )),
        (None, false) => Ok(None),
    }
}

/// h5dump for a golden test: `Some(path)`, or `None` after printing a skip notice. When an
/// h5dump is required ([`h5dump_required`]) a missing one fails the test.
pub fn h5dump_or_skip(test: &str) -> Option<PathBuf> {
    match h5dump_decision(test, find_h5dump(), h5dump_required()) {
        Ok(Some(p)) => Some(p),
        Err(e) => panic!("{e}"),
        Ok(None) => {
            eprintln!(
                "SKIPPED {test}: no h5dump (set MARQUET_H5DUMP or run `bash scripts/build-h5dump.sh`)"
            );
            None
        }
    }
}

/// Run `h5dump <args> <file>`; panics unless it exits 0. Returns stdout.
pub fn run_h5dump(h5dump: &Path, args: &[&str], file: &Path) -> String {
    let out = Command::new(h5dump)
        .args(args)
        .arg(file)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", h5dump.display()));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{} {args:?} {} failed ({}):\n{}\n{stdout}",
        h5dump.display(),
        file.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// Replace the temp file path with [`FILE_PLACEHOLDER`]: in h5dump's first line
/// `HDF5 "<path>" {` and wherever h5dump names a referenced object
/// (`DATASET "<path>/my_table/row_id"` in reference attributes).
pub fn normalize_ddl(ddl: &str, file: &Path) -> String {
    let path = file.display().to_string();
    let (first, _) = ddl.split_once('\n').unwrap_or((ddl, ""));
    assert_eq!(first, format!("HDF5 \"{path}\" {{"), "unexpected first line of h5dump output");
    ddl.replace(&path, FILE_PLACEHOLDER)
}

/// `testdata/golden/<name>.ddl` in the crate.
pub fn golden_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata").join("golden").join(format!("{name}.ddl"))
}

/// Compare `actual` with the golden file exactly, or (re)write it when `MARQUET_BLESS=1`.
pub fn check_golden(name: &str, actual: &str) {
    let path = golden_path(name);
    if std::env::var("MARQUET_BLESS").as_deref() == Ok("1") {
        std::fs::create_dir_all(path.parent().expect("golden dir")).expect("create testdata/golden");
        std::fs::write(&path, actual).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
        eprintln!("blessed {}", path.display());
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!("cannot read {} ({e}); run with MARQUET_BLESS=1 to create it", path.display())
    });
    if expected != actual {
        let (e, a): (Vec<&str>, Vec<&str>) = (expected.lines().collect(), actual.lines().collect());
        let i = e.iter().zip(&a).position(|(x, y)| x != y).unwrap_or(e.len().min(a.len()));
        let ctx = |v: &[&str]| v[i.saturating_sub(3)..(i + 4).min(v.len())].join("\n");
        panic!(
            "h5dump output differs from {} at line {} (expected {} lines, got {}).\n\
             --- expected ---\n{}\n--- actual ---\n{}\n\
             Full output:\n{actual}\n(re-run with MARQUET_BLESS=1 to accept the new output)",
            path.display(),
            i + 1,
            e.len(),
            a.len(),
            ctx(&e),
            ctx(&a)
        );
    }
}

/// A seeded RNG (`synth::SplitMix64`) with the integer helpers the tests use for
/// choosing kill points and ranges.
pub struct Rng(synth::SplitMix64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(synth::SplitMix64::new(seed))
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }
    /// Uniform in `[0, n)` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
    /// Uniform in `[lo, hi]`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        self.0.int(lo, hi)
    }
    pub fn f64(&mut self) -> f64 {
        self.0.f64()
    }
}

/// HDF5 error texts that mean a kill inside `H5Fflush` damaged the file's structure (local
/// ruling L9: HDF5 does not journal metadata) — a superblock whose end-of-file address was
/// written before the data extending the file ("truncated file"), an object header half
/// written (it fails its metadata checksum) — counted and bounded by the crash tests, not
/// taken as H5Col data loss.
#[allow(dead_code)]
pub const STRUCTURAL: [&str; 9] = [
    "addr overflow",
    // A version-1 B-tree node of a chunk index (no checksum) torn by the kill: a write
    // across a page boundary that SIGKILL stops between pages leaves the first page new
    // (the entry count) and the next old, so a committed chunk is no longer found
    // (tests/crash_append.rs, a MASK node of 2,096 bytes across offset 12,288).
    "chunk address isn't defined",
    // An object header written past the end of allocation the superblock records (the
    // kill came before the superblock's write): "addr overflow" met by H5Oget_info.
    "len not positive after adjustment for EOA",
    "inflate() failed",
    "bad object header",
    "incorrect metadata checksum",
    "HEP001 §13 req 2: column extent",
    "differs from extent",
    "truncated file",
];

/// `strace`, or `None` (a skip) when it is not installed — never on CI, where
/// scripts/bootstrap.sh installs it for the tests.
#[allow(dead_code)]
pub fn strace() -> Option<std::path::PathBuf> {
    let found = ["/usr/bin/strace", "/bin/strace"].iter().map(std::path::PathBuf::from).find(|p| p.exists());
    if found.is_none() {
        assert!(std::env::var_os("CI").is_none(), "strace is missing on CI (scripts/bootstrap.sh installs it for tests)");
        eprintln!("skipped: strace is not installed");
    }
    found
}

/// The files a traced process created (successful `openat` with `O_CREAT` or `O_TMPFILE`,
/// `creat`) and the renames it made, from an `strace -f` log.
#[allow(dead_code)]
pub fn created_and_renamed(log: &str) -> (Vec<String>, Vec<(String, String)>) {
    let quoted = |l: &str| -> Vec<String> { l.split('"').skip(1).step_by(2).map(|s| s.to_string()).collect() };
    let mut created = Vec::new();
    let mut renamed = Vec::new();
    for l in log.lines() {
        if l.contains("= -1") {
            continue;
        }
        if (l.contains("openat(") && (l.contains("O_CREAT") || l.contains("O_TMPFILE"))) || l.contains("creat(") {
            created.extend(quoted(l).into_iter().take(1));
        } else if l.contains("rename") {
            let q = quoted(l);
            if q.len() >= 2 {
                renamed.push((q[0].clone(), q[1].clone()));
            }
        }
    }
    (created, renamed)
}

/// The test venv of scripts/pyvenv.sh: `$MARQUET_PYVENV`, else
/// `${XDG_CACHE_HOME:-$HOME/.cache}/marquet/pyvenv`, where the script makes it.
pub fn venv_dir() -> PathBuf {
    if let Some(v) = std::env::var_os("MARQUET_PYVENV").filter(|v| !v.is_empty()) {
        return PathBuf::from(v);
    }
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(&std::env::var_os("HOME").unwrap_or_default()).join(".cache"));
    cache.join("marquet/pyvenv")
}

/// The test venv's Python ([`venv_dir`]) when it can import `modules` (as Python's `import`
/// statement lists them: `"pyarrow, shapely"`); `None` (a skip, printed with `what`)
/// otherwise — never on CI, where a missing venv fails the test.
pub fn venv_python_with(modules: &str, what: &str) -> Option<PathBuf> {
    let py = venv_dir().join("bin/python");
    let ok = py.exists() && Command::new(&py).args(["-c", &format!("import {modules}")]).status().is_ok_and(|s| s.success());
    if !ok {
        assert!(std::env::var_os("CI").is_none_or(|v| v.is_empty()), "{what}: CI is set but the test venv {} cannot import {modules}: run scripts/pyvenv.sh", py.display());
        println!("NOTICE: skipping {what}: no venv with {modules} at {} (run scripts/pyvenv.sh)", py.display());
        return None;
    }
    Some(py)
}

/// Query windows over a column's extent (the whole world when it has none or a bad one):
/// the extent, its four quarters, a small window at its centre, its centre as a point, and
/// a window off the data. Used by the tests that compare read paths (tests/read_paths.rs,
/// tests/remote.rs).
pub fn windows(b: Option<marquet::BBox>) -> Vec<marquet::BBox> {
    use marquet::BBox;
    let b = match b {
        Some(b) if b.xmin <= b.xmax && b.ymin <= b.ymax && [b.xmin, b.ymin, b.xmax, b.ymax].iter().all(|v| v.is_finite()) => b,
        _ => BBox::xy(-180.0, -90.0, 180.0, 90.0),
    };
    let (cx, cy) = ((b.xmin + b.xmax) / 2.0, (b.ymin + b.ymax) / 2.0);
    let (w, h) = ((b.xmax - b.xmin).max(1e-9), (b.ymax - b.ymin).max(1e-9));
    vec![
        b,
        BBox::xy(b.xmin, b.ymin, cx, cy),
        BBox::xy(cx, b.ymin, b.xmax, cy),
        BBox::xy(b.xmin, cy, cx, b.ymax),
        BBox::xy(cx, cy, b.xmax, b.ymax),
        BBox::xy(cx - w / 20.0, cy - h / 20.0, cx + w / 20.0, cy + h / 20.0),
        BBox::xy(cx, cy, cx, cy),
        BBox::xy(b.xmax + w, b.ymax + h, b.xmax + 2.0 * w, b.ymax + 2.0 * h),
    ]
}
