//! Crash safety of Marquet modifications (HEP002 §11 over HEP001 §12): a child process runs
//! a deterministic sequence of appends, in-place geometry updates, truncations, index rebuilds and
//! geometry-column replacements (which change the storage form of a point column back and
//! forth, HEP002 §11.2) on a table with a covering column, a BLOCK_BBOX and a PACKED_RTREE,
//! and is killed with SIGKILL at random points. After every kill the test checks that
//!
//! * the file opens and the validator finds no HEP001/HEP002 error — except HEP002 §12
//!   requirement 3 while a replacement was in progress, the brief violation §11.2 itself
//!   admits between its two attribute writes (counted and reported);
//! * NROWS is that of the last reported state or of the next one;
//! * every row holds, column by column, its value in the last reported state or in the
//!   next one (so rows no operation touched are unchanged), a replaced column is entirely
//!   in its old or its new form, and geometries decode;
//! * spatial indexes are valid and answer a query exactly as a full scan does, or are
//!   detectably stale.
//!
//! The child is this test binary running [`marquet_crash_child`] (env [`CHILD_ENV`]); it
//! prints `committed <k>` after the k-th operation returned. The parent replays the same
//! operations on an in-memory [`Model`] to know every state.
//!
//! Env: `MARQUET_CRASH_TRIALS` (default 260; with tests/crash_append.rs's 4 × 60, 500 trials), `MARQUET_CRASH_SEED`.

mod common;

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::sync::mpsc;

use common::crash::{self, Event, SIGKILL};
use std::time::{Duration, Instant};

use marquet::h5col::{Array, File};
use marquet::marquet::spatial_index::RTreeOnAppend;
use marquet::marquet::{GeoBatch, GeometryColumnSpec, GeometryValues, MarquetTable, StorageForm};
use marquet::query::{Query, TableQuery};
use marquet::validate;
use marquet::{BBox, Dimensions};

const CHILD_ENV: &str = "MARQUET_MCRASH_CHILD";
const MARK: &str = "@@mcrash ";
const DEFAULT_TRIALS: u64 = 260;
const DEFAULT_SEED: u64 = 0x4D41_5251_5545_5432;
const TABLE: &str = "/features";
/// Rows per chunk (small: chunks span batches, the block index has many entries).
const CHUNK: u64 = 8;
const MAX_OPS: usize = 400;
/// Kills aim at operations among the first `MAX_TARGET`.
const MAX_TARGET: usize = 24;
const KINDS: [&str; 5] = ["append", "update", "truncate", "replace", "reindex"];
const CHILD_TIMEOUT: Duration = Duration::from_secs(60);
/// Size of a 2-D point's WKB (the fixed-length form of the `pt` column).
const POINT_WKB: usize = 21;

// ------------------------------------------------------------ deterministic content

fn le(v: &mut Vec<u8>, x: f64) {
    v.extend_from_slice(&x.to_le_bytes());
}

/// The `geom` value of feature `id` at version `ver`: null, a 2-point line or a square.
fn geom_of(id: u64, ver: u64) -> Option<Vec<u8>> {
    if id % 7 == 3 {
        return None;
    }
    let (cx, cy) = (((id * 37) % 100) as f64 + ver as f64 * 0.5, ((id * 11) % 50) as f64);
    let h = 0.5 + (id % 3) as f64 * 0.25;
    let mut w = vec![1u8];
    if id % 5 == 1 {
        w.extend_from_slice(&2u32.to_le_bytes());
        w.extend_from_slice(&2u32.to_le_bytes());
        for (x, y) in [(cx - h, cy), (cx + h, cy + h)] {
            le(&mut w, x);
            le(&mut w, y);
        }
    } else {
        w.extend_from_slice(&3u32.to_le_bytes());
        w.extend_from_slice(&1u32.to_le_bytes());
        w.extend_from_slice(&5u32.to_le_bytes());
        for (x, y) in [(cx - h, cy - h), (cx + h, cy - h), (cx + h, cy + h), (cx - h, cy + h), (cx - h, cy - h)] {
            le(&mut w, x);
            le(&mut w, y);
        }
    }
    Some(w)
}

/// The `pt` value of feature `id` at version `ver`, as 2-D point WKB (or null).
fn pt_of(id: u64, ver: u64) -> Option<Vec<u8>> {
    if id % 10 == 7 {
        return None;
    }
    let mut w = vec![1u8];
    w.extend_from_slice(&1u32.to_le_bytes());
    le(&mut w, id as f64 * 0.5 + ver as f64);
    le(&mut w, -(id as f64) * 0.25);
    Some(w)
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Op {
    Append { k: u64 },
    /// Update `geom` and then `pt` of rows `[start, start + len)` to version `ver`.
    Update { start: u64, len: u64, ver: u64 },
    Truncate { to: u64 },
    /// Replace `pt` by a column in the other storage form (point <-> fixed-length WKB).
    Replace,
    /// Rebuild both spatial indexes of `geom` in place (they go stale after updates).
    Reindex,
}

impl Op {
    fn kind(&self) -> &'static str {
        match self {
            Op::Append { .. } => "append",
            Op::Update { .. } => "update",
            Op::Truncate { .. } => "truncate",
            Op::Replace => "replace",
            Op::Reindex => "reindex",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
struct Row {
    id: u64,
    geom: Option<Vec<u8>>,
    pt: Option<Vec<u8>>,
}

/// The table as the operations leave it.
#[derive(Debug, Clone, Default, PartialEq)]
struct Model {
    rows: Vec<Row>,
    next_id: u64,
    /// `pt` is currently stored as fixed-length WKB (else as a point column).
    pt_fixed: bool,
}

impl Model {
    /// Operation `i` for the current state.
    fn op(&self, i: usize) -> Op {
        let n = self.rows.len() as u64;
        match i % 6 {
            _ if n < 4 => Op::Append { k: 1 + (i as u64 * 7 + 3) % 11 },
            // Every other truncation follows a rebuild, so it maintains valid indexes
            // (block index recomputed, R-tree rebuilt) and takes long enough to be hit.
            4 if i % 12 == 4 => Op::Truncate { to: n - n / 5 },
            2 | 4 => {
                let start = (i as u64 * 13) % n;
                Op::Update { start, len: 3.min(n - start), ver: i as u64 }
            }
            3 => Op::Reindex,
            5 if i % 12 == 11 => Op::Truncate { to: n - n / 5 },
            5 => Op::Replace,
            _ => Op::Append { k: 1 + (i as u64 * 7 + 3) % 11 },
        }
    }

    fn apply(&mut self, op: Op) {
        match op {
            Op::Append { k } => {
                for _ in 0..k {
                    let id = self.next_id;
                    self.next_id += 1;
                    self.rows.push(Row { id, geom: geom_of(id, 0), pt: pt_of(id, 0) });
                }
            }
            Op::Update { start, len, ver } => {
                for r in &mut self.rows[start as usize..(start + len) as usize] {
                    r.geom = geom_of(r.id, ver);
                    r.pt = pt_of(r.id, ver);
                }
            }
            Op::Truncate { to } => self.rows.truncate(to as usize),
            Op::Replace => self.pt_fixed = !self.pt_fixed,
            Op::Reindex => {}
        }
    }

    /// States after 0, 1, 2, ... operations, with the operation that led there.
    fn states(n: usize) -> Vec<(Option<Op>, Model)> {
        let mut m = Model::default();
        let mut v = vec![(None, m.clone())];
        for i in 0..n {
            let op = m.op(i);
            m.apply(op);
            v.push((Some(op), m.clone()));
        }
        v
    }
}

fn pt_form(fixed: bool) -> StorageForm {
    if fixed {
        StorageForm::FixedWkb { size: POINT_WKB }
    } else {
        StorageForm::Point { dims: Dimensions::Xy, f32: false }
    }
}

// ------------------------------------------------------------ the child

fn say(line: &str) {
    crash::say(MARK, line);
}

/// The writer process. A no-op unless [`CHILD_ENV`] names the file to write.
#[test]
fn marquet_crash_child() {
    let Some(path) = std::env::var_os(CHILD_ENV) else { return };
    let f = File::create(&path).unwrap();
    let mut t = MarquetTable::create(&f, TABLE).unwrap();
    t.table().add_column("id", &marquet::h5col::ColumnSpec::new(marquet::h5::Dtype::U64).with_chunk_rows(CHUNK)).unwrap();
    t.add_geometry_column("geom", &GeometryColumnSpec::default().with_form(StorageForm::VarWkb).with_covering("geom_bbox").with_chunk_rows(CHUNK))
        .unwrap();
    t.add_geometry_column("pt", &GeometryColumnSpec::default().with_form(pt_form(false)).with_chunk_rows(CHUNK)).unwrap();
    t.build_block_bbox("geom", Some(CHUNK)).unwrap();
    t.build_rtree("geom", Some(4)).unwrap();
    t.set_rtree_on_append(RTreeOnAppend::Rebuild);
    f.flush().unwrap();
    say("ready");
    let mut m = Model::default();
    for i in 0..MAX_OPS {
        let op = m.op(i);
        let t_op = std::time::Instant::now();
        m.apply(op);
        match op {
            Op::Append { k } => {
                let rows = &m.rows[m.rows.len() - k as usize..];
                let batch = GeoBatch::new()
                    .with_array("id", Array::from_u64(&rows.iter().map(|r| r.id).collect::<Vec<_>>()))
                    .with_geometry("geom", GeometryValues::Wkb(rows.iter().map(|r| r.geom.clone()).collect()))
                    .with_geometry("pt", GeometryValues::Wkb(rows.iter().map(|r| r.pt.clone()).collect()));
                t.append(&batch).unwrap();
            }
            Op::Update { start, len, .. } => {
                let rows = &m.rows[start as usize..(start + len) as usize];
                t.update_geometries("geom", start, &GeometryValues::Wkb(rows.iter().map(|r| r.geom.clone()).collect())).unwrap();
                t.update_geometries("pt", start, &GeometryValues::Wkb(rows.iter().map(|r| r.pt.clone()).collect())).unwrap();
            }
            Op::Truncate { to } => t.truncate(to).unwrap(),
            Op::Replace => {
                let spec = GeometryColumnSpec::default().with_form(pt_form(m.pt_fixed)).with_chunk_rows(CHUNK);
                t.replace_geometry_column("pt", &spec, None).unwrap();
            }
            Op::Reindex => {
                t.build_block_bbox("geom", Some(CHUNK)).unwrap();
                t.build_rtree("geom", Some(4)).unwrap();
            }
        }
        if std::env::var_os("MARQUET_MCRASH_TIMING").is_some() {
            eprintln!("op {i} {} took {:?}", op.kind(), t_op.elapsed());
        }
        say(&format!("committed {}", i + 1));
    }
    say("done");
}

// ------------------------------------------------------------ the parent


#[derive(Debug, Default)]
struct Summary {
    trials: u64,
    before_ready: u64,
    /// Kills while operation kind K was the next to complete.
    during: std::collections::BTreeMap<&'static str, u64>,
    completed: u64,
    unopenable: u64,
    ahead_of_report: u64,
    valid_indexes: u64,
    stale_indexes: u64,
    replace_window: u64,
    leftover_columns: u64,
    /// Kills between §11.2 steps 2 and 4: the new column is referenced under its temporary name.
    renamed_pending: u64,
    structural: u64,
}

use common::STRUCTURAL;

#[test]
fn sigkill_during_appends_updates_truncations_and_replacements() {
    if std::env::var_os(CHILD_ENV).is_some() {
        return;
    }
    let trials: u64 = std::env::var("MARQUET_CRASH_TRIALS").ok().map(|v| v.parse().unwrap()).unwrap_or(DEFAULT_TRIALS);
    let seed: u64 = std::env::var("MARQUET_CRASH_SEED").ok().map(|v| v.parse().unwrap()).unwrap_or(DEFAULT_SEED);
    let dir = common::TempDir::new("crash-marquet");
    let states = Model::states(MAX_OPS);
    let mut rng = common::Rng::new(seed);
    let mut sum = Summary::default();
    let mut failures = Vec::new();
    let start = Instant::now();
    for trial in 0..trials {
        let path = dir.join(&format!("trial{trial}.h5"));
        let err_path = dir.join(&format!("trial{trial}.stderr"));
        // Aim at one kind of operation: kill after a reported state whose next operation
        // is of that kind, after a short delay (some operations take well under 1 ms).
        let kind = KINDS[rng.below(KINDS.len() as u64) as usize];
        let targets: Vec<usize> = (0..MAX_TARGET).filter(|&j| states[j + 1].0.is_some_and(|o| o.kind() == kind)).collect();
        let commits = targets[rng.below(targets.len() as u64) as usize];
        let delay = Duration::from_micros(if rng.below(3) == 0 { rng.below(300) } else { rng.below(6_000) });
        let w = crash::spawn_writer("marquet_crash_child", &[(CHILD_ENV, Some(path.as_os_str()))], &err_path, MARK);
        loop {
            match w.events.recv_timeout(CHILD_TIMEOUT) {
                Ok(Event::Ready) if commits == 0 => break,
                Ok(Event::Committed(k)) if k as usize >= commits => break,
                Ok(Event::Done) | Err(mpsc::RecvTimeoutError::Disconnected) => break,
                Ok(_) => {}
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    w.kill();
                    panic!("trial {trial}: no output from the child for {CHILD_TIMEOUT:?}");
                }
            }
        }
        std::thread::sleep(delay);
        let (status, events) = w.kill();
        let done = events.contains(&Event::Done);
        assert!(
            status.signal() == Some(SIGKILL) || (done && status.success()),
            "trial {trial}: child exited with {status}; stderr:\n{}",
            std::fs::read_to_string(&err_path).unwrap_or_default()
        );
        let ready = events.contains(&Event::Ready);
        let last = events.iter().filter_map(|e| if let Event::Committed(k) = e { Some(*k as usize) } else { None }).max().unwrap_or(0);
        sum.trials += 1;
        if done {
            sum.completed += 1;
        } else if !ready {
            sum.before_ready += 1;
        } else if let Some((Some(op), _)) = states.get(last + 1) {
            *sum.during.entry(op.kind()).or_default() += 1;
        }
        let ctx = format!("trial {trial} (ready={ready}, last committed op {last}, next {:?}, file {})", states.get(last + 1).and_then(|s| s.0), path.display());
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| verify(&path, ready, last, done, &states, &mut sum, &ctx)));
        if let Err(e) = r {
            let msg = e.downcast_ref::<String>().cloned().or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default();
            if STRUCTURAL.iter().any(|p| msg.contains(p)) {
                sum.structural += 1;
                eprintln!("structural damage (kill during H5Fflush): {}", msg.lines().next().unwrap_or(""));
            } else {
                failures.push(msg);
                if std::env::var("MARQUET_CRASH_KEEP_GOING").as_deref() != Ok("1") {
                    break;
                }
            }
            continue;
        }
        let _ = std::fs::remove_file(&path);
        let _ = std::fs::remove_file(&err_path);
    }
    println!(
        "crash_marquet summary: {} trials in {:.1} s; killed before ready {}, during {:?}, completed {}, unopenable {}, \
         NROWS one op ahead of the report {}, indexes valid {} / stale {}, kills in the §11.2 replacement window {}, \
         leftover replacement columns {}, new column not yet renamed {}, structural {}",
        sum.trials,
        start.elapsed().as_secs_f64(),
        sum.before_ready,
        sum.during,
        sum.completed,
        sum.unopenable,
        sum.ahead_of_report,
        sum.valid_indexes,
        sum.stale_indexes,
        sum.replace_window,
        sum.leftover_columns,
        sum.renamed_pending,
        sum.structural
    );
    for f in &failures {
        eprintln!("FAILED {f}");
    }
    assert!(failures.is_empty(), "{} of {trials} trials failed (files kept in {})", failures.len(), dir.path().display());
    assert!(sum.structural * 10 <= trials.max(10), "too many structurally damaged files: {} of {trials}", sum.structural);
    if trials >= 100 {
        for kind in KINDS {
            let k = sum.during.get(kind).copied().unwrap_or(0);
            assert!(k * 50 >= trials, "only {k} of {trials} kills landed during a {kind}: recalibrate the kill timing");
        }
    }
}

/// Check one crashed file against the states the child may have left.
fn verify(path: &Path, ready: bool, last: usize, done: bool, states: &[(Option<Op>, Model)], sum: &mut Summary, ctx: &str) {
    let opened = File::open(path).and_then(|f| MarquetTable::open(&f, TABLE).map(|t| (f, t)));
    let (_f, t) = match opened {
        Ok(ft) => ft,
        Err(e) => {
            assert!(!ready, "{ctx}: file unreadable after `ready`: {e}");
            sum.unopenable += 1;
            return;
        }
    };
    if !ready {
        // The schema may be half-built; no row was ever committed.
        assert_eq!(t.nrows().unwrap_or(0), 0, "{ctx}");
        return;
    }
    let old = &states[last].1;
    let (next_op, new) = match states.get(last + 1) {
        Some((op, m)) if !done => (*op, m),
        _ => (None, old),
    };
    let replacing = next_op == Some(Op::Replace);

    // The validator: no error, except §12 req 3 inside the replacement window.
    let report = validate::validate_file(path, &validate::Options::default()).unwrap_or_else(|e| panic!("{ctx}: validate: {e}"));
    let mut window = false;
    for e in report.errors() {
        if replacing && e.rule == "HEP002 §12 req 3" {
            window = true;
            continue;
        }
        panic!("{ctx}: validator: {e}");
    }
    if window {
        sum.replace_window += 1;
    }

    let nrows = t.nrows().unwrap();
    let (n_old, n_new) = (old.rows.len() as u64, new.rows.len() as u64);
    assert!(nrows == n_old || nrows == n_new, "{ctx}: NROWS {nrows}, committed states have {n_old} or {n_new}");
    if nrows != n_old {
        sum.ahead_of_report += 1;
    }
    // Between §11.2 steps 2 and 4 the geometry column is the new `pt__replacing`, and the
    // old `pt` is an ordinary column until step 4 deletes it.
    let geo = t.geometry_column_names().unwrap();
    let pt_name = geo[1].clone();
    assert_eq!(geo[0], "geom", "{ctx}");
    assert!(pt_name == "pt" || (replacing && pt_name == "pt__replacing"), "{ctx}: geometry columns {geo:?}");
    if pt_name != "pt" {
        sum.renamed_pending += 1;
    }
    let mut cols = t.table().column_names().unwrap();
    if replacing && cols.iter().any(|c| c.ends_with("__replacing")) {
        sum.leftover_columns += 1;
        cols.retain(|c| !c.ends_with("__replacing"));
    }
    let mut sorted = cols.clone();
    sorted.sort();
    let expected: &[&str] = if replacing && !cols.iter().any(|c| c == "pt") { &["geom", "geom_bbox", "id"] } else { &["geom", "geom_bbox", "id", "pt"] };
    assert_eq!(sorted, expected, "{ctx}: columns {cols:?}");

    // Every row: its value in the old or the new state, column by column.
    let pick = |m: &Model, r: usize| m.rows.get(r).cloned();
    let ids = t.table().read("id", 0, nrows).unwrap();
    let geom = t.read_wkb("geom", 0, nrows).unwrap_or_else(|e| panic!("{ctx}: read geom: {e}"));
    let pt = t.read_wkb(&pt_name, 0, nrows).unwrap_or_else(|e| panic!("{ctx}: read pt: {e}"));
    for r in 0..nrows as usize {
        let (a, b) = (pick(old, r), pick(new, r));
        let id = ids.get_i128(r).unwrap() as u64;
        let g = geom.get(r).map(|s| s.to_vec());
        let p = pt.get(r).map(|s| s.to_vec());
        let ok = |f: &dyn Fn(&Row) -> bool| a.as_ref().is_some_and(f) || b.as_ref().is_some_and(f);
        assert!(ok(&|x: &Row| x.id == id), "{ctx}: row {r} id {id}");
        assert!(ok(&|x: &Row| x.geom == g), "{ctx}: row {r} geom {g:?}, states {:?} / {:?}", a.as_ref().map(|x| &x.geom), b.as_ref().map(|x| &x.geom));
        assert!(ok(&|x: &Row| x.pt == p), "{ctx}: row {r} pt {p:?}");
    }
    // The `pt` column is wholly in one of the two forms.
    let form = t.geometry_column(&pt_name).unwrap().form;
    assert!(form == pt_form(old.pt_fixed) || form == pt_form(new.pt_fixed), "{ctx}: pt form {form:?}");

    // Spatial indexes: valid and exact, or stale (and then not used).
    let idx = t.spatial_indexes("geom").unwrap();
    let w = BBox::xy(20.0, 5.0, 60.0, 30.0);
    let scan = t.query("geom", &Query::bbox(w).with_indexes(false)).unwrap();
    let with = t.query("geom", &Query::bbox(w)).unwrap_or_else(|e| panic!("{ctx}: indexed query: {e}"));
    assert_eq!(with.rows, scan.rows, "{ctx}: indexed query differs from a full scan");
    assert!(with.stats.ignored_indexes.is_empty(), "{ctx}: valid-looking index failed a structural check: {:?}", with.stats.ignored_indexes);
    for i in &idx {
        if i.valid {
            sum.valid_indexes += 1;
        } else {
            sum.stale_indexes += 1;
        }
    }
}
