//! Crash safety of appends (HEP001 §12.3): a child process appends batches to a table and
//! is killed with SIGKILL at random points; the file must then read as exactly one of the
//! committed states, with search indexes either correct or detectably stale (§12.2).
//!
//! The child is this same test binary running [`crash_child`] (selected with `--exact`,
//! marked by env [`CHILD_ENV`]). It creates the file, table and CHUNK_MINMAX indexes,
//! flushes, prints `ready`, then after every successful `Table::append` (which commits
//! NROWS and flushes) prints `committed <nrows>`. Lines carry the [`MARK`] prefix so the
//! test harness's own output cannot be mistaken for them.
//!
//! Env: `MARQUET_CRASH_TRIALS` (default 60), `MARQUET_CRASH_SEED` (default fixed).

mod common;

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::sync::mpsc;

use common::crash::{self, Event, SIGKILL};
use std::time::{Duration, Instant};

use marquet::h5::{self, Dtype};
use marquet::h5col::search_index::{self as index, range_filter};
use marquet::h5col::list::{LeafSpec, ListSpec};
use marquet::h5col::{Array, Batch, ColumnSpec, ColumnValues, File, ListArray, ListValues, Table};
use marquet::spec::names;

const CHILD_ENV: &str = "MARQUET_CRASH_CHILD";
/// Set for the child when its data columns should use the default deflate filter.
const DEFLATE_ENV: &str = "MARQUET_CRASH_CHILD_DEFLATE";
const MARK: &str = "@@crash ";
const DEFAULT_TRIALS: u64 = 60;
const DEFAULT_SEED: u64 = 0x4D41_5251_5545_5431;
/// Rows per chunk of every column (small, so chunks span batches and indexes have many
/// entries that appends rewrite).
const CHUNK: u64 = 8;
/// The child stops after this many batches (the parent normally kills it long before).
const MAX_BATCHES: usize = 300;
const TABLE: &str = "/log";
const COLUMNS: [&str; 4] = ["row", "x", "name", "vals"];
const INDEXED: [&str; 2] = ["row", "x"];
const NAME_SIZE: usize = 16;
/// How long the parent waits for any line from the child before giving up.
const CHILD_TIMEOUT: Duration = Duration::from_secs(60);

// ------------------------------------------------------------ deterministic content

/// Rows in batch `b`: 1..=11.
fn batch_len(b: usize) -> u64 {
    1 + (b as u64 * 7 + 3) % 11
}

/// NROWS after each number of committed batches: `boundaries()[j]` = rows after j batches.
fn boundaries() -> Vec<u64> {
    let mut v = vec![0];
    for b in 0..MAX_BATCHES {
        v.push(v[b] + batch_len(b));
    }
    v
}

/// `x` of global row `r`: `None` = missing (fill), some rows NaN, others exact quarters.
fn x_of(r: u64) -> Option<f64> {
    if r % 11 == 5 {
        None
    } else if r % 13 == 6 {
        Some(f64::NAN)
    } else {
        Some(((r * 37) % 101) as f64 * 0.25 - 7.0)
    }
}

fn name_of(r: u64) -> String {
    format!("row-{r}")
}

/// `vals` of row `r`: null every 7th row, else `r % 4` floats.
fn vals_of(r: u64) -> Option<Vec<f32>> {
    (r % 7 != 3).then(|| (0..r % 4).map(|j| r as f32 + j as f32 * 0.25).collect())
}

fn vals_array(a: u64, b: u64) -> ListArray {
    let (mut offsets, mut mask, mut values) = (vec![0u64], Vec::new(), Vec::new());
    for r in a..b {
        let v = vals_of(r);
        mask.push(v.is_some());
        values.extend(v.unwrap_or_default());
        offsets.push(values.len() as u64);
    }
    ListArray { offsets, mask: Some(mask), values: ListValues::Leaf(Array::from_f32(&values)) }
}

fn make_batch(a: u64, k: u64) -> Batch {
    let rows: Vec<u64> = (a..a + k).collect();
    let xs: Vec<f64> = rows.iter().map(|&r| x_of(r).unwrap_or(0.0)).collect();
    let missing: Vec<bool> = rows.iter().map(|&r| x_of(r).is_none()).collect();
    let names: Vec<String> = rows.iter().map(|&r| name_of(r)).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    Batch::new()
        .with_array("row", Array::from_u64(&rows))
        .with("x", ColumnValues::Array { values: Array::from_f64(&xs), missing: Some(missing) })
        .with_array("name", Array::from_strings_sized(&names, true, NAME_SIZE).unwrap())
        .with("vals", ColumnValues::List(vals_array(a, a + k)))
}

// ------------------------------------------------------------ the child

fn say(line: &str) {
    crash::say(MARK, line);
}

/// The writer process. A no-op unless [`CHILD_ENV`] names the file to write.
#[test]
fn crash_child() {
    let Some(path) = std::env::var_os(CHILD_ENV) else { return };
    let f = File::create(&path).unwrap();
    let t = f.create_table(TABLE).unwrap();
    // Uncompressed columns by default: see `sigkill_during_appends_with_deflate_columns`.
    let deflate = std::env::var_os(DEFLATE_ENV).is_some();
    let spec = |d: Dtype| {
        let s = ColumnSpec::new(d).with_chunk_rows(CHUNK);
        if deflate { s } else { s.with_filters(vec![]) }
    };
    t.add_column("row", &spec(Dtype::U64)).unwrap();
    t.add_column("x", &spec(Dtype::F64)).unwrap();
    t.add_column("name", &spec(Dtype::FixedString { size: NAME_SIZE, utf8: true, nullterm: true, spacepad: false }))
        .unwrap();
    let mut vals = ListSpec::of(Dtype::F32).with_mask();
    vals.leaf = LeafSpec::Dataset { dtype: Dtype::F32, fill: None, chunk: 4 * CHUNK, filters: vec![] };
    vals.offsets_chunk = CHUNK;
    t.add_list_column("vals", &vals).unwrap();
    for c in INDEXED {
        index::build_chunk_minmax(&t, c).unwrap();
    }
    f.flush().unwrap();
    say("ready");
    let mut n = 0;
    for b in 0..MAX_BATCHES {
        let k = batch_len(b);
        let got = t.append(&make_batch(n, k)).unwrap();
        assert_eq!(got, n + k);
        n = got;
        say(&format!("committed {n}"));
    }
    say("done");
}

// ------------------------------------------------------------ the parent


/// When the parent kills the child.
#[derive(Debug, Clone, Copy)]
enum KillPlan {
    /// This long after spawning, whatever the child is doing (often file creation).
    Early(Duration),
    /// After the child reported `commits` committed appends (0 = right after `ready`),
    /// plus `delay`.
    AfterCommits { commits: u64, delay: Duration },
}

#[derive(Debug, Default)]
struct Summary {
    trials: u64,
    killed_before_ready: u64,
    killed_before_first_commit: u64,
    killed_during_appends: u64,
    completed: u64,
    unopenable: u64,
    nrows_ahead_of_report: u64,
    stale_indexes: u64,
    valid_indexes: u64,
    /// Indexes that passed the validity check but were wrong or unreadable.
    index_bug: u64,
    index_bug_examples: Vec<String>,
    max_rows: u64,
    /// Trials whose file HDF5 itself could not read back (kill during H5Fflush).
    structural: u64,
}

/// HDF5 error texts that mean the file structure, not the table, was damaged.
/// Unequal column extents are the same phenomenon seen from H5Col: each dataset's extent is
/// its own object header, the extents are flushed (all equal) before any data is written,
/// and only a kill inside that H5Fflush can leave some headers written and others not.
/// Damage HDF5 itself can leave when the kill lands inside `H5Fflush` (local ruling L9),
/// among them a superblock whose end-of-file address was written before the data that
/// extends the file ("truncated file").
use common::STRUCTURAL;

/// Data and NROWS must always be exactly a committed state. A search index that passes
/// the validity check but is wrong or unreadable is the known library bug described at
/// [`sigkill_during_appends_keeps_valid_indexes_correct`]: counted and reported here, fatal
/// there.
///
/// The data columns are uncompressed: their chunks keep their size and are rewritten in
/// place, so committed bytes never move (see the known bug at
/// [`sigkill_during_appends_with_deflate_columns`]). List-column OFFSETS/MASK and the index
/// datasets are deflated by the library whatever we ask.
#[test]
fn sigkill_during_appends_leaves_a_committed_state() {
    run_trials(false, false);
}

/// FIXED (index tokens are flushed before content): used to fail when, after a SIGKILL during `Table::append`, a
/// CHUNK_MINMAX index can pass the HEP001 §12.2 validity check (its on-disk
/// SOURCE_GENERATION/SOURCE_NROWS still match GENERATION/NROWS of the last committed
/// state) while its content already describes the interrupted append (wrong `n`, counts or
/// min/max for the last chunk) or cannot be read at all ("inflate() failed": the chunk index
/// points at file space that was freed and reused). Cause: `index::maintain_after_append`
/// writes the new tokens and then the content with no `H5Fflush` in between, and HDF5 writes
/// raw chunk data to the file when the dataset is closed but the attribute (tokens) and
/// chunk-index metadata only at the final flush, so on disk the content overtakes the
/// tokens. Fix: flush after writing the tokens, before touching index content (the "MUST
/// call H5Fflush after step 4" of §12.3 is not enough: the flush must separate tokens from
/// content). Run with `cargo test --test crash_append -- --ignored` to check a fix.
#[test]
fn sigkill_during_appends_keeps_valid_indexes_correct() {
    run_trials(true, false);
}

/// FIXED (files are created with H5F_FSPACE_STRATEGY_NONE, see `h5::file_create`): with deflated data columns (the `ColumnSpec::new`
/// default), a SIGKILL during `Table::append` can destroy rows that were already committed:
/// reading the column then fails with "inflate() failed". Appending rewrites the partly
/// filled last chunk; its compressed size changes, so HDF5 moves it and frees the old space,
/// which a later allocation in the same append reuses and writes (raw data goes to the file
/// when a dataset is closed). The chunk index on disk still points at the old place until
/// the final `H5Fflush`, so a kill before that flush leaves committed rows pointing at
/// foreign bytes. HEP001 §12.3's "crash in steps 1-4 => pre-append state" then fails.
/// Possible fixes: never rewrite a compressed chunk that holds committed rows (stage the
/// partial tail chunk uncompressed, or flush before reusing freed space), or create files
/// with a file-space strategy that does not reuse space freed since the last flush.
#[test]
fn sigkill_during_appends_with_deflate_columns() {
    run_trials(false, true);
}

fn run_trials(strict_index: bool, deflate: bool) {
    if std::env::var_os(CHILD_ENV).is_some() {
        return; // never recurse inside a child
    }
    let trials: u64 = std::env::var("MARQUET_CRASH_TRIALS").ok().map(|v| v.parse().expect("MARQUET_CRASH_TRIALS")).unwrap_or(DEFAULT_TRIALS);
    let seed: u64 = std::env::var("MARQUET_CRASH_SEED").ok().map(|v| v.parse().expect("MARQUET_CRASH_SEED")).unwrap_or(DEFAULT_SEED);
    let dir = common::TempDir::new("crash-append");
    let bounds = boundaries();
    let mut rng = common::Rng::new(seed);
    let mut sum = Summary::default();
    let start = Instant::now();
    eprintln!("crash_append: {trials} trials, seed {seed} (MARQUET_CRASH_TRIALS, MARQUET_CRASH_SEED)");

    // Diagnostics: MARQUET_CRASH_KEEP_GOING=1 checks every trial and reports all failures.
    let keep_going = std::env::var("MARQUET_CRASH_KEEP_GOING").as_deref() == Ok("1");
    let mut failures: Vec<String> = Vec::new();
    for trial in 0..trials {
        let path = dir.join(&format!("trial{trial}.h5"));
        let err_path = dir.join(&format!("trial{trial}.stderr"));
        // One trial in eight kills blindly early; the rest kill during the appends.
        let plan = if rng.below(8) == 0 {
            KillPlan::Early(Duration::from_micros(rng.below(40_000)))
        } else {
            KillPlan::AfterCommits { commits: rng.below(40), delay: Duration::from_micros(rng.below(4_000)) }
        };
        let deflate_env = deflate.then_some(std::ffi::OsStr::new("1"));
        let w = crash::spawn_writer("crash_child", &[(CHILD_ENV, Some(path.as_os_str())), (DEFLATE_ENV, deflate_env)], &err_path, MARK);
        match plan {
            KillPlan::Early(d) => std::thread::sleep(d),
            KillPlan::AfterCommits { commits, delay } => {
                let mut seen = 0;
                loop {
                    match w.events.recv_timeout(CHILD_TIMEOUT) {
                        Ok(Event::Ready) if commits == 0 => break,
                        Ok(Event::Ready) => {}
                        Ok(Event::Committed(_)) => {
                            seen += 1;
                            if seen >= commits {
                                break;
                            }
                        }
                        Ok(Event::Done) | Err(mpsc::RecvTimeoutError::Disconnected) => break,
                        Err(mpsc::RecvTimeoutError::Timeout) => {
                            w.kill();
                            panic!("trial {trial}: no output from the child for {CHILD_TIMEOUT:?}");
                        }
                    }
                }
                std::thread::sleep(delay);
            }
        }
        let (status, events) = w.kill();
        let killed = status.signal() == Some(SIGKILL);
        let done = events.contains(&Event::Done);
        assert!(
            killed || (done && status.success()),
            "trial {trial}: child exited with {status} without being killed; stderr:\n{}",
            std::fs::read_to_string(&err_path).unwrap_or_default()
        );
        let ready = events.contains(&Event::Ready);
        let last = events.iter().filter_map(|e| if let Event::Committed(n) = e { Some(*n) } else { None }).max();
        match (ready, last, done) {
            (_, _, true) => sum.completed += 1,
            (false, _, _) => sum.killed_before_ready += 1,
            (true, None, _) => sum.killed_before_first_commit += 1,
            (true, Some(_), _) => sum.killed_during_appends += 1,
        }
        sum.trials += 1;
        let ctx = format!("trial {trial} ({plan:?}, ready={ready}, last committed={last:?}, file {})", path.display());
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            verify(&path, ready, last, done, &bounds, &mut rng, &mut sum, strict_index, &ctx)
        }));
        if let Err(e) = r {
            let msg = e.downcast_ref::<String>().cloned().or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()));
            let msg = msg.unwrap_or_default();
            // HDF5 does not journal metadata: a kill *inside* H5Fflush can leave file
            // structures that point past the end of the file or at partly written chunks.
            // HEP001 §12.2 scopes its crash guarantees to files that survive structurally;
            // such trials are counted, bounded below, and reported, never taken as data loss
            // in the H5Col sense. Any other failure (wrong values, wrong NROWS, a valid
            // index with wrong content) fails the test.
            if STRUCTURAL.iter().any(|p| msg.contains(p)) {
                sum.structural += 1;
                eprintln!("structural damage (kill during H5Fflush): {}", msg.lines().next().unwrap_or(""));
            } else {
                failures.push(msg);
                if !keep_going {
                    break;
                }
            }
            continue; // keep the file
        }
        let _ = std::fs::remove_file(&path);
        let _ = std::fs::remove_file(&err_path);
    }
    println!(
        "crash_append summary: trials {}, kills during writes {} (before ready {}, after ready before first commit {}, \
         after >=1 commit {}), completed without kill {}, unopenable {}, NROWS one batch ahead of the last report {}, \
         indexes valid {} / stale {} / valid-but-wrong {} (known bug), max rows seen {}, {:.1} s",
        sum.trials,
        sum.killed_before_ready + sum.killed_before_first_commit + sum.killed_during_appends,
        sum.killed_before_ready,
        sum.killed_before_first_commit,
        sum.killed_during_appends,
        sum.completed,
        sum.unopenable,
        sum.nrows_ahead_of_report,
        sum.valid_indexes,
        sum.stale_indexes,
        sum.index_bug,
        sum.max_rows,
        start.elapsed().as_secs_f64()
    );
    for e in &sum.index_bug_examples {
        eprintln!("KNOWN BUG (index valid by its tokens but wrong): {e}");
    }
    for f in &failures {
        eprintln!("FAILED {}", f.lines().next().unwrap_or(""));
    }
    eprintln!("crash_append: {} of {trials} trials hit structural HDF5 damage", sum.structural);
    assert!(sum.structural * 10 <= trials.max(10), "too many structurally damaged files: {} of {trials}", sum.structural);
    assert!(failures.is_empty(), "{} of {trials} trials failed (files kept in {})", failures.len(), dir.path().display());
    assert!(
        trials < 10 || sum.killed_during_appends * 2 >= trials,
        "too few kills landed during appends ({} of {trials}): the kill timing needs recalibrating",
        sum.killed_during_appends
    );
}


/// Check one crashed file against what the child reported.
#[allow(clippy::too_many_arguments)]
#[allow(clippy::single_element_loop)]
fn verify(
    path: &Path,
    ready: bool,
    last: Option<u64>,
    done: bool,
    bounds: &[u64],
    rng: &mut common::Rng,
    sum: &mut Summary,
    strict_index: bool,
    ctx: &str,
) {
    let opened = File::open(path).and_then(|f| f.table(TABLE).map(|t| (f, t)));
    let (_f, t) = match opened {
        Ok(ft) => ft,
        Err(e) => {
            // Killed while the file or table was being created: nothing was ever committed.
            assert!(last.is_none(), "{ctx}: file unreadable after a committed append: {e}");
            sum.unopenable += 1;
            return;
        }
    };
    let nrows = t.nrows().unwrap_or_else(|e| panic!("{ctx}: NROWS: {e}"));
    let reported = last.unwrap_or(0);
    let j = bounds.iter().position(|&b| b == reported).unwrap_or_else(|| panic!("{ctx}: {reported} is no batch boundary"));
    // The kill may land between append's final flush and the print: one batch ahead.
    let allowed: Vec<u64> = if done { vec![reported] } else { bounds[j..(j + 2).min(bounds.len())].to_vec() };
    assert!(allowed.contains(&nrows), "{ctx}: NROWS {nrows} is not one of the committed states {allowed:?}");
    if nrows != reported {
        sum.nrows_ahead_of_report += 1;
    }
    sum.max_rows = sum.max_rows.max(nrows);
    if !ready {
        // The schema may be half-built; it committed no rows.
        assert_eq!(nrows, 0, "{ctx}");
        return;
    }
    let commits = bounds.iter().position(|&b| b == nrows).unwrap() as u64;

    // Schema and extents (HEP001 §13 req 2): equal, and covering NROWS.
    assert_eq!(t.column_names().unwrap(), COLUMNS, "{ctx}");
    let extent = t.extent().unwrap_or_else(|e| panic!("{ctx}: column extents: {e}")).unwrap();
    assert!(extent >= nrows, "{ctx}: extent {extent} < NROWS {nrows}");
    for c in ["vals"] {
        let lc = t.list_column(c).unwrap();
        let off = lc.offsets(0, nrows).unwrap_or_else(|e| panic!("{ctx}: {c}/OFFSETS: {e}"));
        assert_eq!(off[0], 0, "{ctx}: {c}");
        assert!(off.windows(2).all(|w| w[0] <= w[1]), "{ctx}: {c} offsets decrease");
        if let Some(info) = lc.values_info() {
            assert!(off[nrows as usize] <= info.dims[0], "{ctx}: {c} offsets run past VALUES");
        }
        if lc.has_mask() {
            assert_eq!(lc.mask(0, nrows).unwrap().unwrap().len() as u64, nrows);
        }
    }

    // Every committed row holds exactly its deterministic values.
    if nrows > 0 {
        let row = t.read("row", 0, nrows).unwrap();
        for r in 0..nrows {
            assert_eq!(row.get_i128(r as usize), Some(r as i128), "{ctx}: row {r}");
        }
        let xcol = t.column("x").unwrap();
        let x = t.read("x", 0, nrows).unwrap();
        let miss = x.missing(xcol.fill());
        for r in 0..nrows {
            let got = x.get_f64(r as usize).unwrap();
            match x_of(r) {
                None => assert!(miss[r as usize], "{ctx}: x row {r} should be missing, got {got}"),
                Some(v) if v.is_nan() => assert!(got.is_nan() && !miss[r as usize], "{ctx}: x row {r}: {got}"),
                Some(v) => assert!(got.to_bits() == v.to_bits() && !miss[r as usize], "{ctx}: x row {r}: {got} != {v}"),
            }
        }
        let names = t.read("name", 0, nrows).unwrap().to_string_vec().unwrap();
        assert_eq!(names, (0..nrows).map(name_of).collect::<Vec<_>>(), "{ctx}: name");
        assert_eq!(t.read_list("vals", 0, nrows).unwrap(), vals_array(0, nrows), "{ctx}: vals");
    }

    // GENERATION: one increment per committed append, or one more if the kill fell between
    // the GENERATION and NROWS writes reaching the disk.
    let g = t.generation().unwrap().unwrap_or_else(|| panic!("{ctx}: table with indexes has no GENERATION"));
    assert!(g == commits || g == commits + 1, "{ctx}: GENERATION {g} after {commits} committed appends");

    // Indexes: valid and correct, or detectably stale (then unused).
    for c in INDEXED {
        let idx = index::indexes_of(&t, c).unwrap();
        assert_eq!(idx.len(), 1, "{ctx}: indexes of {c}");
        let info = &idx[0];
        assert_eq!(info.kind.as_deref(), Some(names::KIND_CHUNK_MINMAX));
        let valid = info.is_valid(Some(g), nrows);
        if !valid {
            sum.stale_indexes += 1;
        }
        match check_index(&t, c, &info.path, valid, nrows, rng) {
            Ok(()) if valid => sum.valid_indexes += 1,
            Ok(()) => {}
            Err(e) => {
                let msg = format!("{ctx}: index on {c} passes the validity check but {e}");
                assert!(!strict_index, "{msg}");
                if sum.index_bug_examples.len() < 3 {
                    sum.index_bug_examples.push(msg);
                }
                sum.index_bug += 1;
            }
        }
    }
}

/// Query the column through [`range_filter`] and compare with brute force; a valid index
/// must be used and must describe every chunk exactly, a stale one must not be used.
/// `Err` only for a valid index that is wrong or unreadable (the known library bug).
fn check_index(t: &Table, c: &str, path: &str, valid: bool, nrows: u64, rng: &mut common::Rng) -> Result<(), String> {
    if valid {
        check_minmax_entries(t, c, path, nrows)?;
    }
    for _ in 0..4 {
        let (lo, hi) = if c == "x" {
            let lo = rng.below(120) as f64 * 0.25 - 10.0;
            (lo, lo + rng.below(40) as f64 * 0.25)
        } else {
            let lo = rng.below(nrows + 10) as f64;
            (lo, lo + rng.below(30) as f64)
        };
        let brute: Vec<u64> = (0..nrows)
            .filter(|&r| {
                let v = if c == "x" { x_of(r) } else { Some(r as f64) };
                v.is_some_and(|v| v >= lo && v <= hi)
            })
            .collect();
        let (rows, st) = match range_filter(t, c, lo, hi) {
            Ok(r) => r,
            Err(e) if valid => return Err(format!("range_filter({c}, {lo}, {hi}) failed: {e}")),
            Err(e) => panic!("range_filter({c}, {lo}, {hi}) with a stale index failed: {e}"),
        };
        assert_eq!(st.used_index, valid, "a stale index must not be used, a valid one should be");
        assert_eq!(st.chunks_total, nrows.div_ceil(CHUNK));
        if rows != brute {
            assert!(valid, "range_filter({c}, {lo}, {hi}) without an index: {rows:?} != {brute:?}");
            return Err(format!("range_filter({c}, {lo}, {hi}) = {rows:?}, brute force {brute:?}"));
        }
    }
    Ok(())
}

/// A valid CHUNK_MINMAX index must describe every chunk of `[0, NROWS)` exactly (§11.4).
fn check_minmax_entries(t: &Table, column: &str, path: &str, nrows: u64) -> Result<(), String> {
    let col = t.column(column).unwrap();
    let nchunks = nrows.div_ceil(CHUNK);
    let ds = h5::dataset_open(t.id(), path).unwrap();
    let di = h5::dataset_info(ds.id(), path).unwrap();
    if di.dims[0] < nchunks {
        return Err(format!("{path} has {} entries for {nchunks} chunks", di.dims[0]));
    }
    if nchunks == 0 {
        return Ok(());
    }
    let dt = index::chunk_minmax_dtype(col.dtype());
    let bytes = h5::dataset_read(ds.id(), 0, nchunks, &dt, path).map_err(|e| format!("cannot be read: {e}"))?;
    let es = col.dtype().size();
    assert_eq!(es, 8);
    let u = |b: &[u8]| u64::from_le_bytes(b.try_into().unwrap());
    for (c, e) in bytes.chunks_exact(dt.size()).enumerate() {
        let rows = (c as u64 * CHUNK)..((c as u64 + 1) * CHUNK).min(nrows);
        let (mut nan, mut fill, mut lo, mut hi) = (0u64, 0u64, f64::INFINITY, f64::NEG_INFINITY);
        for r in rows.clone() {
            let v = if column == "x" { x_of(r) } else { Some(r as f64) };
            match v {
                None => fill += 1,
                Some(v) if v.is_nan() => nan += 1,
                Some(v) => {
                    lo = lo.min(v);
                    hi = hi.max(v);
                }
            }
        }
        let got_counts = (u(&e[16..24]), u(&e[24..32]), u(&e[32..40]));
        let want = (nan, fill, rows.end - rows.start);
        if got_counts != want {
            return Err(format!("chunk {c} has (nan, fill, n) = {got_counts:?}, the data give {want:?}"));
        }
        if lo <= hi {
            let (gmin, gmax) = if column == "x" {
                (f64::from_le_bytes(e[0..8].try_into().unwrap()), f64::from_le_bytes(e[8..16].try_into().unwrap()))
            } else {
                (u(&e[0..8]) as f64, u(&e[8..16]) as f64)
            };
            if (gmin, gmax) != (lo, hi) {
                return Err(format!("chunk {c} has (min, max) = {:?}, the data give {:?}", (gmin, gmax), (lo, hi)));
            }
        }
    }
    Ok(())
}
