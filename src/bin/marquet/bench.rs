//! `marquet bench`: the Marquet side of the cross-format comparison (issue #10).
//!
//! [`run`] generates the seeded data of [`crate::synth`] (clustered points, 16–32-vertex
//! polygons, small query windows), writes it untimed to a neutral raw form that
//! `benches/compare/compare.py` reads for GeoParquet, FlatGeobuf and GeoPackage, and
//! measures Marquet on the same data through the public API only:
//!
//! * **write**: [`write_marquet`], the table `marquet convert` writes for the same rows with
//!   the default [`WriteLayout`] (Hilbert order; a 1,024-row BLOCK_BBOX; for non-point
//!   columns a covering column and a PACKED_RTREE built once after the rows); the file is
//!   closed inside the timed span;
//! * **size** of the file on disk;
//! * **full read** to WKB: open, read the `id` column and every geometry as WKB;
//! * **queries**: for each window, open the file afresh, [`Table::query`] with an
//!   `Intersects` box and [`Query::with_wkb`], then take the `id` of the matching rows.
//!
//! The raw form, in the output directory, per data set `NAME` (`points`, `polygons`):
//! `NAME.wkb` (little-endian ISO WKB values back to back; row `i` has `id` = `i`) and
//! `NAME.offsets` (`n + 1` little-endian `u64`, the byte offset of each value); and
//! `windows.txt`, one `XMIN,YMIN,XMAX,YMAX` per line (Rust `{}` formatting of `f64`, which
//! round-trips exactly). The measurements and the matching ids per window are in
//! `marquet.json` (see [`BenchReport::to_json`]).

// Also compiled into the tests, benches and examples through the workspace's dev crate
// (dev/lib.rs), which use items the binary does not.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::time::Instant;

use marquet::{Error as MarquetError, Result};
use marquet::h5col::{Array, File};
use marquet::covering_name;
use marquet::{choose_form, GeoBatch, GeometryColumnSpec, GeometryValues, Table, WriteLayout, WriteOptions};
use marquet::query::{Query, TableQuery};
use marquet::spec::{BBox, Dimensions};
use super::synth;
use marquet::wkb::{self, ByteOrder};

/// Points in the full run (issue #10).
pub const DEFAULT_POINTS: usize = 1_000_000;
/// Polygons in the full run (issue #10).
pub const DEFAULT_POLYGONS: usize = 200_000;
/// Query windows in the full run (issue #10).
pub const DEFAULT_WINDOWS: usize = 200;
/// Points with `--quick`.
pub const QUICK_POINTS: usize = 100_000;
/// Polygons with `--quick`.
pub const QUICK_POLYGONS: usize = 20_000;
/// Windows with `--quick`.
pub const QUICK_WINDOWS: usize = 50;
/// Side of a query window in degrees ([`synth::windows`]).
pub const DEFAULT_WINDOW_SIDE: f64 = 0.5;
/// The seed of every generator.
pub const DEFAULT_SEED: u64 = 42;
/// Repetitions of the write and the full read (the median is reported).
pub const DEFAULT_REPS: usize = 3;

/// Table path inside every benchmark file.
pub const TABLE: &str = "/bench";
/// Geometry column name.
pub const GEOMETRY: &str = "geometry";
/// Feature-id column name: row `i` of the generated data has `id = i`, so every format's
/// answer can be compared whatever order it stores the rows in.
pub const ID: &str = "id";

/// What to generate and how often to repeat.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchConfig {
    pub points: usize,
    pub polygons: usize,
    pub windows: usize,
    pub window_side: f64,
    pub seed: u64,
    pub reps: usize,
    /// Directory for the raw data, the Marquet files and `marquet.json`.
    pub out_dir: PathBuf,
    /// How the Marquet files are laid out: [`WriteLayout::default`], what `marquet convert`
    /// writes, unless an experiment changes it.
    pub layout: WriteLayout,
}

impl BenchConfig {
    /// The full issue #10 sizes.
    pub fn full(out_dir: impl Into<PathBuf>) -> BenchConfig {
        BenchConfig {
            points: DEFAULT_POINTS,
            polygons: DEFAULT_POLYGONS,
            windows: DEFAULT_WINDOWS,
            window_side: DEFAULT_WINDOW_SIDE,
            seed: DEFAULT_SEED,
            reps: DEFAULT_REPS,
            out_dir: out_dir.into(),
            layout: WriteLayout::default(),
        }
    }
    /// The `--quick` sizes.
    pub fn quick(out_dir: impl Into<PathBuf>) -> BenchConfig {
        BenchConfig { points: QUICK_POINTS, polygons: QUICK_POLYGONS, windows: QUICK_WINDOWS, ..BenchConfig::full(out_dir) }
    }
}

/// Measurements of one data set.
#[derive(Debug, Clone, PartialEq)]
pub struct DatasetReport {
    /// `points` or `polygons`.
    pub name: String,
    pub rows: usize,
    /// The Marquet file.
    pub path: PathBuf,
    /// Seconds per repetition.
    pub write_s: Vec<f64>,
    pub size_bytes: u64,
    /// Seconds per repetition.
    pub read_s: Vec<f64>,
    /// Bytes of WKB the full read returned (a check that it read everything).
    pub read_wkb_bytes: u64,
    /// Seconds per window (file opened, queried, ids and WKB read).
    pub query_s: Vec<f64>,
    /// Matching ids per window, ascending.
    pub query_ids: Vec<Vec<u64>>,
    /// Bytes of WKB the queries returned, per window.
    pub query_wkb_bytes: Vec<u64>,
}

/// Everything [`run`] measured.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchReport {
    pub config: BenchConfig,
    pub windows: Vec<BBox>,
    pub datasets: Vec<DatasetReport>,
}

/// The median of `v` (mean of the two middle values for an even length; NaN when empty).
pub fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    match s.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => s[n / 2],
        n => (s[n / 2 - 1] + s[n / 2]) / 2.0,
    }
}

impl DatasetReport {
    fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "rows": self.rows,
            "file": self.path.display().to_string(),
            "write_s": self.write_s,
            "size_bytes": self.size_bytes,
            "read_s": self.read_s,
            "read_wkb_bytes": self.read_wkb_bytes,
            "query_s": self.query_s,
            "query_ids": self.query_ids,
            "query_wkb_bytes": self.query_wkb_bytes,
            "median": {
                "write_s": median(&self.write_s),
                "read_s": median(&self.read_s),
                "query_s": median(&self.query_s),
            },
        })
    }
}

impl BenchReport {
    /// The report as JSON: `config`, `windows` (`[xmin, ymin, xmax, ymax]`), and per data set
    /// the raw timings, their medians, the file size and the ids of every window's answer.
    pub fn to_json(&self) -> serde_json::Value {
        let c = &self.config;
        let mut ds = serde_json::Map::new();
        for d in &self.datasets {
            ds.insert(d.name.clone(), d.to_json());
        }
        serde_json::json!({
            "config": {
                "points": c.points, "polygons": c.polygons, "windows": c.windows,
                "window_side": c.window_side, "seed": c.seed, "reps": c.reps,
                "marquet_version": env!("CARGO_PKG_VERSION"),
                "marquet_layout": {
                    "default": c.layout == WriteLayout::default(),
                    "spatial_order": c.layout.spatial_order,
                    "chunk_rows": c.layout.chunk_rows,
                    "values_chunk_bytes": c.layout.values_chunk_bytes,
                    "block_index": c.layout.block_index,
                    "block_length": c.layout.block_length,
                    "rtree": format!("{:?}", c.layout.rtree).to_lowercase(),
                    "covering": c.layout.covering,
                    "compression": c.layout.compression.to_string(),
                },
            },
            "windows": self.windows.iter().map(|w| [w.xmin, w.ymin, w.xmax, w.ymax]).collect::<Vec<_>>(),
            "datasets": ds,
        })
    }

    /// One line per data set: medians and the number of matching rows.
    pub fn summary(&self) -> String {
        let mut s = String::new();
        for d in &self.datasets {
            let hits: usize = d.query_ids.iter().map(|v| v.len()).sum();
            s += &format!(
                "marquet {:<8} {:>9} rows: write {:.3} s, size {} B, full read {:.3} s, query median {:.3} ms ({} windows, {} rows matched)\n",
                d.name,
                d.rows,
                median(&d.write_s),
                d.size_bytes,
                median(&d.read_s),
                median(&d.query_s) * 1e3,
                d.query_s.len(),
                hits
            );
        }
        s
    }
}

fn io_err(p: &Path, e: std::io::Error) -> MarquetError {
    MarquetError::Io { path: p.display().to_string(), source: e }
}

/// Point WKB (little-endian, XY) of the generated coordinates.
pub fn point_wkb(x: &[f64], y: &[f64]) -> Vec<Vec<u8>> {
    x.iter()
        .zip(y)
        .map(|(&x, &y)| {
            let c = wkb::Coord { x, y, z: f64::NAN, m: f64::NAN };
            wkb::encode(&wkb::Geometry::Point(wkb::Point { dims: Dimensions::Xy, coord: c }), ByteOrder::LittleEndian)
        })
        .collect()
}

/// Write `NAME.wkb` and `NAME.offsets` (see the module documentation).
pub fn write_raw(dir: &Path, name: &str, values: &[Vec<u8>]) -> Result<()> {
    let mut bytes = Vec::with_capacity(values.iter().map(|v| v.len()).sum());
    let mut offsets = Vec::with_capacity(8 * (values.len() + 1));
    offsets.extend_from_slice(&0u64.to_le_bytes());
    for v in values {
        bytes.extend_from_slice(v);
        offsets.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
    }
    let p = dir.join(format!("{name}.wkb"));
    std::fs::write(&p, &bytes).map_err(|e| io_err(&p, e))?;
    let p = dir.join(format!("{name}.offsets"));
    std::fs::write(&p, &offsets).map_err(|e| io_err(&p, e))
}

/// The windows as `windows.txt` lines.
pub fn windows_text(ws: &[BBox]) -> String {
    ws.iter().map(|w| format!("{},{},{},{}\n", w.xmin, w.ymin, w.xmax, w.ymax)).collect()
}

/// Write a Marquet file of `values` with ids `0..n` as `marquet convert` writes a
/// GeoParquet file of the same rows: an `id` column made as the importer makes a `uint64`
/// column, the geometry column's form chosen from the data, and everything else from
/// `layout` ([`WriteLayout`], the writers' one policy) — rows in Hilbert order, the block
/// index maintained by the write, the R-tree (non-point columns) built once after it.
/// `tests/bench_compare.rs` checks that this file and `convert`'s have the same layout.
pub fn write_marquet(path: &Path, values: &GeometryValues, layout: &WriteLayout) -> Result<()> {
    if path.exists() {
        std::fs::remove_file(path).map_err(|e| io_err(path, e))?;
    }
    let ids: Vec<u64> = (0..values.len() as u64).collect();
    let f = File::create(path)?;
    let mut t = Table::create(&f, TABLE)?;
    let form = choose_form(values)?;
    let spec = layout.geometry_spec(GeometryColumnSpec::default().with_form(form), &covering_name(GEOMETRY, true, &|n| n == ID));
    t.add_geometry_column(GEOMETRY, &spec)?;
    t.add_column(ID, &marquet::h5col::ColumnSpec::new(marquet::h5col::Dtype::U64).with_chunk_rows(layout.chunk_rows))?;
    layout.declare_indexes(&t, GEOMETRY, false, Some(values.len() as u64))?;
    let batch = GeoBatch::new().with_array(ID, Array::from_u64(&ids)).with_geometry(GEOMETRY, values.clone());
    let opts = WriteOptions::default().with_spatial_order(layout.spatial_order).with_rtree(layout.rtree_on_append).with_layout(None);
    t.write(&batch, opts)?;
    layout.finish(&t, GEOMETRY)?;
    Ok(())
}

fn ids_of(a: &Array) -> Vec<u64> {
    a.bytes.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8]))).collect()
}

/// Read every row: ids and WKB. Returns (rows, WKB bytes).
pub fn read_marquet(path: &Path) -> Result<(Vec<u64>, marquet::WkbBuffer)> {
    let f = File::open(path)?;
    let t = Table::open(&f, TABLE)?;
    let n = t.nrows()?;
    let ids = ids_of(&t.column(ID)?.read(0, n)?);
    let wkb = t.read_wkb(GEOMETRY, 0, n)?;
    Ok((ids, wkb))
}

/// One query as a user would run it: open the file, query the window (`Intersects`, every
/// index on, the matching rows' WKB returned with the answer: `Query::with_wkb`), then
/// take their ids (`Column::take`: one read per span of nearby rows). Returns
/// the ids (ascending) and the bytes of WKB returned.
pub fn query_marquet(path: &Path, w: &BBox) -> Result<(Vec<u64>, u64)> {
    let f = File::open(path)?;
    let t = Table::open(&f, TABLE)?;
    let r = t.query(GEOMETRY, &Query::bbox(*w).with_wkb(true))?;
    let mut ids = ids_of(&t.column(ID)?.take(&r.rows)?);
    let wkb_bytes = r.wkb.map_or(0, |b| b.bytes.len() as u64);
    ids.sort_unstable();
    Ok((ids, wkb_bytes))
}

fn measure(cfg: &BenchConfig, name: &str, values: &GeometryValues, windows: &[BBox]) -> Result<DatasetReport> {
    let path = cfg.out_dir.join(format!("{name}.h5"));
    let mut write_s = Vec::new();
    for _ in 0..cfg.reps.max(1) {
        let t0 = Instant::now();
        write_marquet(&path, values, &cfg.layout)?;
        write_s.push(t0.elapsed().as_secs_f64());
    }
    let size_bytes = std::fs::metadata(&path).map_err(|e| io_err(&path, e))?.len();
    let mut read_s = Vec::new();
    let mut read_wkb_bytes = 0;
    for _ in 0..cfg.reps.max(1) {
        let t0 = Instant::now();
        let (ids, wkb) = read_marquet(&path)?;
        read_s.push(t0.elapsed().as_secs_f64());
        if ids.len() != values.len() || wkb.len() != values.len() {
            return Err(MarquetError::InvalidArgument(format!(
                "{}: read {} ids and {} geometries, wrote {}",
                path.display(),
                ids.len(),
                wkb.len(),
                values.len()
            )));
        }
        read_wkb_bytes = wkb.bytes.len() as u64;
    }
    let (mut query_s, mut query_ids, mut query_wkb_bytes) = (Vec::new(), Vec::new(), Vec::new());
    for w in windows {
        let t0 = Instant::now();
        let (ids, b) = query_marquet(&path, w)?;
        query_s.push(t0.elapsed().as_secs_f64());
        query_ids.push(ids);
        query_wkb_bytes.push(b);
    }
    Ok(DatasetReport {
        name: name.to_string(),
        rows: values.len(),
        path,
        write_s,
        size_bytes,
        read_s,
        read_wkb_bytes,
        query_s,
        query_ids,
        query_wkb_bytes,
    })
}

/// Generate the data, write the raw form and measure Marquet (see the module documentation).
/// Writes `marquet.json` into `cfg.out_dir` too.
pub fn run(cfg: &BenchConfig) -> Result<BenchReport> {
    let dir = &cfg.out_dir;
    std::fs::create_dir_all(dir).map_err(|e| io_err(dir, e))?;
    let windows = synth::windows(cfg.windows, cfg.seed, cfg.window_side);
    let p = dir.join("windows.txt");
    std::fs::write(&p, windows_text(&windows)).map_err(|e| io_err(&p, e))?;

    let (x, y) = synth::clustered_points(cfg.points, cfg.seed);
    write_raw(dir, "points", &point_wkb(&x, &y))?;
    let points = GeometryValues::Points { dims: Dimensions::Xy, x, y, z: None, m: None, valid: None };
    let points_report = measure(cfg, "points", &points, &windows)?;
    drop(points);

    let polys = synth::polygons(cfg.polygons, cfg.seed);
    write_raw(dir, "polygons", &polys)?;
    let polys = GeometryValues::Wkb(polys.into_iter().map(Some).collect());
    let polygons_report = measure(cfg, "polygons", &polys, &windows)?;

    let report = BenchReport { config: cfg.clone(), windows, datasets: vec![points_report, polygons_report] };
    let p = dir.join("marquet.json");
    std::fs::write(&p, report.to_json().to_string()).map_err(|e| io_err(&p, e))?;
    Ok(report)
}

/// Runs of each command in [`process_start`].
pub const PROCESS_RUNS: usize = 41;

/// Issue #33 item 5 as a user meets it: this very binary started as a whole process,
/// [`PROCESS_RUNS`] times each, interleaved, wall time from spawn to exit (the loader, the
/// argument parser, the open of the file, the query and the exit included): `marquet
/// --version` and, per data set, `marquet query NAME.h5 --table /bench --bbox W --count`
/// for the first window, whose printed count must equal `report`'s answer. Returns the
/// table printed by `marquet bench` and writes `process_start.json` (every run's seconds
/// and the medians) next to `marquet.json`.
pub fn process_start(report: &BenchReport) -> Result<String> {
    use std::process::{Command, Stdio};
    let exe = std::env::current_exe().map_err(|e| io_err(Path::new("current_exe"), e))?;
    let dir = &report.config.out_dir;
    let Some(w) = report.windows.first() else { return Ok(String::new()) };
    let bbox = format!("{},{},{},{}", w.xmin, w.ymin, w.xmax, w.ymax);
    let mut cmds: Vec<(String, Vec<String>, Option<usize>)> = vec![("--version".into(), vec!["--version".into()], None)];
    for d in &report.datasets {
        let args = ["query", &d.path.display().to_string(), "--table", TABLE, "--bbox", &bbox, "--count"].map(String::from).to_vec();
        cmds.push((format!("query {} --count", d.name), args, d.query_ids.first().map(Vec::len)));
    }
    let mut secs = vec![Vec::with_capacity(PROCESS_RUNS); cmds.len()];
    for _ in 0..PROCESS_RUNS {
        for (k, (name, args, want)) in cmds.iter().enumerate() {
            let t0 = Instant::now();
            let out = Command::new(&exe).args(args).stdin(Stdio::null()).stderr(Stdio::inherit()).output().map_err(|e| io_err(&exe, e))?;
            secs[k].push(t0.elapsed().as_secs_f64());
            let printed = String::from_utf8_lossy(&out.stdout);
            let bad = !out.status.success() || want.is_some_and(|n| printed.trim() != n.to_string());
            if bad {
                return Err(MarquetError::InvalidArgument(format!("`marquet {name}` printed {printed:?} ({}), expected {want:?}", out.status)));
            }
        }
    }
    let mut s = format!("{:<34}{:>10}{:>10}   (whole processes, medians of {PROCESS_RUNS}, issue #33 item 5)\n", "command", "wall ms", "target");
    let mut json = serde_json::Map::new();
    for ((name, _, _), v) in cmds.iter().zip(&secs) {
        let target = if name == "--version" { 2.0 } else { 3.0 };
        s += &format!("{:<34}{:>10.3}{:>10}\n", format!("marquet {name}"), median(v) * 1e3, format!("<= {target}"));
        json.insert(name.clone(), serde_json::json!({ "wall_s": v, "median_s": median(v), "target_s": target / 1e3 }));
    }
    let p = dir.join("process_start.json");
    std::fs::write(&p, serde_json::Value::Object(json).to_string()).map_err(|e| io_err(&p, e))?;
    Ok(s)
}
