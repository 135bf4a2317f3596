//! The `marquet` command: parsing and printing only; the work is in the library.
//!
//! ```text
//! marquet info PATH [--table PATH] [--json]
//! marquet dump PATH [--table PATH] [--rows A..B] [--format wkt|csv]
//! marquet validate PATH [--table PATH] [--json] [--strict]
//! marquet convert IN OUT [--table T] [--geoparquet-version 2.0|1.1|1.0]
//! marquet query PATH [--table T] (--bbox X0,Y0,X1,Y1 | --bbox-file F) [--predicate P] [--count] [--stats] [--no-index]
//! marquet index PATH [--table T] (--build block_bbox,packed_rtree | --drop KIND | --list)
//! marquet demo [--out DIR]
//! ```
//! Exit codes: 0 success, 1 the answer is "no" (e.g. not conformant), 2 usage or I/O error.
//! Exit codes of `validate`: 0 conformant, 1 non-conformant, 2 unreadable or not HDF5.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use marquet::validate::{validate_file, Options, Severity, Status};

#[derive(Parser)]
#[command(name = "marquet", version, about = "Marquet (HEP002) geospatial tables on H5Col (HEP001) in HDF5")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check a file against HEP001 §13 and HEP002 §12 (exit 0 conformant, 1 not, 2 unreadable).
    Validate(ValidateArgs),
    /// Describe every table: rows, columns with types and stored bytes, geometry columns
    /// (storage form, types, CRS, edges, orientation, BBOX), indexes with their validity.
    ///
    /// Example: `marquet info stations.h5 --json`
    Info(InfoArgs),
    /// Print rows of a table, geometries as WKT.
    ///
    /// Example: `marquet dump lakes.h5 --table /lakes --rows 0..10 --format csv`
    Dump(DumpArgs),
    /// Convert between GeoParquet, GeoJSON and Marquet HDF5, by file extension.
    ///
    /// Example: `marquet convert countries.parquet countries.h5`
    Convert(ConvertArgs),
    /// Rows of a geometry column meeting a window.
    ///
    /// Example: `marquet query lakes.h5 --table /lakes --bbox 0,0,10,10 --stats`
    Query(QueryArgs),
    /// Build, drop or list the spatial indexes of the primary geometry column.
    ///
    /// Example: `marquet index lakes.h5 --build block_bbox,packed_rtree`
    Index(IndexArgs),
    /// The main job on bundled Natural Earth data: import, index, query, validate, export.
    Demo(DemoArgs),
    /// The Marquet side of the cross-format comparison (issue #10): generate the seeded
    /// data, write it in raw form for benches/compare/compare.py, measure Marquet.
    ///
    /// The whole comparison: `bash scripts/bench-compare.sh [--quick]`
    Bench(BenchArgs),
}

#[derive(Args)]
struct ConvertArgs {
    input: PathBuf,
    output: PathBuf,
    /// Table path inside the HDF5 file.
    #[arg(long)]
    table: Option<String>,
    /// GeoParquet flavour to write.
    #[arg(long, value_parser = ["2.0", "1.1", "1.0"])]
    geoparquet_version: Option<String>,
}

#[derive(Args)]
struct QueryArgs {
    path: PathBuf,
    #[arg(long)]
    table: Option<String>,
    /// Geometry column (default: the primary one).
    #[arg(long)]
    column: Option<String>,
    /// XMIN,YMIN,XMAX,YMAX.
    #[arg(long, conflicts_with = "bbox_file", allow_hyphen_values = true)]
    bbox: Option<String>,
    /// One XMIN,YMIN,XMAX,YMAX per line; the file is opened afresh for each window.
    #[arg(long)]
    bbox_file: Option<PathBuf>,
    #[arg(long, value_parser = ["intersects", "within", "contains", "bbox"], default_value = "intersects")]
    predicate: String,
    /// Print only the number of matching rows.
    #[arg(long)]
    count: bool,
    /// Print what each pruning layer skipped and the bytes read (to stderr).
    #[arg(long)]
    stats: bool,
    /// Ignore every index (full scan).
    #[arg(long)]
    no_index: bool,
}

#[derive(Args)]
struct IndexArgs {
    path: PathBuf,
    #[arg(long)]
    table: Option<String>,
    #[arg(long)]
    column: Option<String>,
    /// Kinds to build: block_bbox, packed_rtree (comma-separated).
    #[arg(long)]
    build: Option<String>,
    /// Kind to drop.
    #[arg(long)]
    drop: Option<String>,
}

#[derive(Args)]
struct DemoArgs {
    /// Where to write the demo files.
    #[arg(long, default_value = "marquet-demo")]
    out: PathBuf,
}

fn fail(e: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {e}");
    ExitCode::from(EXIT_UNREADABLE)
}

fn convert(a: ConvertArgs) -> ExitCode {
    use marquet::geoparquet::{convert, ConvertOptions, GeoParquetVersion};
    let v = match a.geoparquet_version.as_deref() {
        Some("1.0") => Some(GeoParquetVersion::V1_0),
        Some("1.1") => Some(GeoParquetVersion::V1_1),
        Some(_) => Some(GeoParquetVersion::V2_0),
        None => None,
    };
    let opts = ConvertOptions { table: a.table, geoparquet_version: v, ..ConvertOptions::default() };
    match convert(&a.input, &a.output, &opts) {
        Ok(r) => {
            print!("{r}");
            ExitCode::SUCCESS
        }
        Err(e) => fail(e),
    }
}

fn parse_bbox(s: &str) -> Result<marquet::BBox, String> {
    let v: Vec<f64> = s.split(',').map(|x| x.trim().parse::<f64>()).collect::<Result<_, _>>().map_err(|_| format!("bad window {s:?}"))?;
    if v.len() != 4 || v.iter().any(|x| x.is_nan()) {
        return Err(format!("a window is XMIN,YMIN,XMAX,YMAX, got {s:?}"));
    }
    Ok(marquet::BBox::xy(v[0], v[1], v[2], v[3]))
}

fn query(a: QueryArgs) -> ExitCode {
    use marquet::query::{Predicate, Query};
    let windows: Vec<String> = match (&a.bbox, &a.bbox_file) {
        (Some(b), _) => vec![b.clone()],
        (None, Some(f)) => match std::fs::read_to_string(f) {
            Ok(t) => t.lines().filter(|l| !l.trim().is_empty()).map(|l| l.to_string()).collect(),
            Err(e) => return fail(format!("{}: {e}", f.display())),
        },
        (None, None) => return fail("give --bbox or --bbox-file"),
    };
    let pred = match a.predicate.as_str() {
        "within" => Predicate::Within,
        "contains" => Predicate::Contains,
        "bbox" => Predicate::BBoxOnly,
        _ => Predicate::Intersects,
    };
    for w in windows {
        let run = || -> Result<(Vec<u64>, String), String> {
            let b = parse_bbox(&w)?;
            let f = marquet::h5col::File::open(&a.path).map_err(|e| e.to_string())?;
            let tp = pick_table(&f, a.table.clone())?;
            let t = marquet::marquet::MarquetTable::open(&f, &tp).map_err(|e| e.to_string())?;
            let col = match &a.column {
                Some(c) => c.clone(),
                None => t.primary_geometry_column().map_err(|e| e.to_string())?,
            };
            let r = t.query(&col, &Query::bbox(b).with_predicate(pred).with_indexes(!a.no_index)).map_err(|e| e.to_string())?;
            let s = r.stats;
            let stats = format!(
                "rows {} | blocks skipped {}/{} | r-tree candidates {} | covering rejected {} | exact tests {} | matched {} | bytes read {}{}",
                s.rows_total, s.blocks_skipped, s.blocks_total, s.rtree_candidates, s.covering_rejected, s.exact_tested, s.rows_matched, s.bytes_read,
                if s.stale_indexes.is_empty() { String::new() } else { format!(" | stale indexes ignored: {}", s.stale_indexes.join(", ")) }
            );
            Ok((r.rows, stats))
        };
        match run() {
            Ok((rows, stats)) => {
                if a.count {
                    println!("{}", rows.len());
                } else {
                    for r in rows {
                        println!("{r}");
                    }
                }
                if a.stats {
                    eprintln!("{stats}");
                }
            }
            Err(e) => return fail(e),
        }
    }
    ExitCode::SUCCESS
}

fn index(a: IndexArgs) -> ExitCode {
    use marquet::marquet::spatial_index::SpatialIndexKind;
    let run = || -> Result<String, String> {
        let f = marquet::h5col::File::open_rw(&a.path).map_err(|e| e.to_string())?;
        let tp = pick_table(&f, a.table.clone())?;
        let t = marquet::marquet::MarquetTable::open(&f, &tp).map_err(|e| e.to_string())?;
        let col = match &a.column {
            Some(c) => c.clone(),
            None => t.primary_geometry_column().map_err(|e| e.to_string())?,
        };
        let mut out = String::new();
        for k in a.build.as_deref().unwrap_or("").split(',').filter(|k| !k.is_empty()) {
            let p = match k.trim() {
                "block_bbox" => t.build_block_bbox(&col, None),
                "packed_rtree" => t.build_rtree(&col, None),
                o => return Err(format!("unknown index kind {o:?} (block_bbox, packed_rtree)")),
            }
            .map_err(|e| e.to_string())?;
            out += &format!("built {p}\n");
        }
        if let Some(k) = &a.drop {
            let kind = match k.as_str() {
                "block_bbox" => SpatialIndexKind::BlockBBox,
                "packed_rtree" => SpatialIndexKind::PackedRTree,
                o => return Err(format!("unknown index kind {o:?}")),
            };
            let n = t.drop_index(&col, kind).map_err(|e| e.to_string())?;
            out += &format!("dropped {n} index(es)\n");
        }
        for i in t.spatial_indexes(&col).map_err(|e| e.to_string())? {
            out += &format!("{} {} ({})\n", i.info.kind.as_deref().unwrap_or("?"), i.info.path, if i.valid { "valid" } else { "stale" });
        }
        Ok(out)
    };
    match run() {
        Ok(s) => {
            print!("{s}");
            ExitCode::SUCCESS
        }
        Err(e) => fail(e),
    }
}

fn demo(a: DemoArgs) -> ExitCode {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    match marquet::demo::run(root, &a.out) {
        Ok(s) => {
            print!("{s}");
            ExitCode::SUCCESS
        }
        Err(e) => fail(e),
    }
}

#[derive(Args)]
struct InfoArgs {
    /// The HDF5 file.
    path: PathBuf,
    /// Describe only this table group.
    #[arg(long)]
    table: Option<String>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
struct DumpArgs {
    /// The HDF5 file.
    path: PathBuf,
    /// The table group (default: the file's only table).
    #[arg(long)]
    table: Option<String>,
    /// Row range A..B (half-open; default all rows).
    #[arg(long)]
    rows: Option<String>,
    /// Output format.
    #[arg(long, value_parser = ["wkt", "csv"], default_value = "wkt")]
    format: String,
}

/// The table to use: the one given, or the file's only table (else an error listing them).
fn pick_table(f: &marquet::h5col::File, given: Option<String>) -> Result<String, String> {
    if let Some(t) = given {
        return Ok(t);
    }
    let all = f.tables().map_err(|e| e.to_string())?;
    match all.len() {
        1 => Ok(all[0].clone()),
        0 => Err("the file holds no table".into()),
        _ => Err(format!("the file holds several tables, choose one with --table: {}", all.join(", "))),
    }
}

fn parse_rows(s: &str) -> Option<(u64, u64)> {
    let (a, b) = s.split_once("..")?;
    let a = if a.is_empty() { 0 } else { a.parse().ok()? };
    let b = if b.is_empty() { u64::MAX } else { b.parse().ok()? };
    Some((a, b))
}

fn info(a: InfoArgs) -> ExitCode {
    match marquet::info::describe_file(&a.path, a.table.as_deref()) {
        Ok(v) => {
            if a.json {
                println!("{v}");
            } else {
                print!("{}", marquet::info::render_text(&v));
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(EXIT_UNREADABLE)
        }
    }
}

fn dump(a: DumpArgs) -> ExitCode {
    let run = || -> Result<String, String> {
        let f = marquet::h5col::File::open(&a.path).map_err(|e| e.to_string())?;
        let t = pick_table(&f, a.table.clone())?;
        let (s, e) = match &a.rows {
            Some(r) => parse_rows(r).ok_or_else(|| format!("--rows {r:?} is not A..B"))?,
            None => (0, u64::MAX),
        };
        let fmt = if a.format == "csv" { marquet::info::DumpFormat::Csv } else { marquet::info::DumpFormat::Wkt };
        marquet::info::dump_rows(&f, &t, s, e, fmt).map_err(|e| e.to_string())
    };
    match run() {
        Ok(s) => {
            print!("{s}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(EXIT_UNREADABLE)
        }
    }
}

#[derive(Args)]
struct ValidateArgs {
    /// The HDF5 file.
    path: PathBuf,
    /// Validate only the table group at this HDF5 path (default: every table group).
    #[arg(long)]
    table: Option<String>,
    /// Print one machine-readable JSON report.
    #[arg(long)]
    json: bool,
    /// Treat warnings (lenient-only forms, ruling R3) as non-conformance.
    #[arg(long)]
    strict: bool,
}

const EXIT_CONFORMANT: u8 = 0;
const EXIT_NON_CONFORMANT: u8 = 1;
const EXIT_UNREADABLE: u8 = 2;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Validate(a) => validate(a),
        Command::Info(a) => info(a),
        Command::Dump(a) => dump(a),
        Command::Convert(a) => convert(a),
        Command::Query(a) => query(a),
        Command::Index(a) => index(a),
        Command::Demo(a) => demo(a),
        Command::Bench(a) => bench(a),
    }
}

fn validate(a: ValidateArgs) -> ExitCode {
    let opts = Options { table: a.table, strict: a.strict, ..Options::default() };
    let report = match validate_file(&a.path, &opts) {
        Ok(r) => r,
        Err(e) => {
            if a.json {
                let v = serde_json::json!({
                    "file": a.path.display().to_string(),
                    "status": "unreadable",
                    "error": e.to_string(),
                });
                println!("{v}");
            } else {
                eprintln!("error: cannot read {} as hdf5: {e}", a.path.display());
            }
            return ExitCode::from(EXIT_UNREADABLE);
        }
    };
    if a.json {
        println!("{}", report.to_json());
    } else {
        for f in report.findings() {
            println!("{f}");
        }
        let errors = report.errors().count();
        let warnings = report.findings().filter(|f| f.severity == Severity::Warning).count();
        let verdict = match report.status {
            Status::Conformant => "conformant",
            Status::NonConformant => "non-conformant",
        };
        println!("{}: {verdict} ({} tables, {errors} errors, {warnings} warnings)", report.file, report.tables.len());
    }
    ExitCode::from(match report.status {
        Status::Conformant => EXIT_CONFORMANT,
        Status::NonConformant => EXIT_NON_CONFORMANT,
    })
}

#[derive(Args)]
struct BenchArgs {
    /// 100,000 points, 20,000 polygons, 50 windows (instead of 1,000,000 / 200,000 / 200).
    #[arg(long)]
    quick: bool,
    /// Directory for the raw data, the Marquet files and marquet.json.
    #[arg(long, default_value = "target/bench-compare")]
    out: PathBuf,
    #[arg(long)]
    points: Option<usize>,
    #[arg(long)]
    polygons: Option<usize>,
    #[arg(long)]
    windows: Option<usize>,
    /// Repetitions of the write and the full read.
    #[arg(long)]
    reps: Option<usize>,
}

fn bench(a: BenchArgs) -> ExitCode {
    use marquet::bench::{run, BenchConfig};
    let mut c = if a.quick { BenchConfig::quick(&a.out) } else { BenchConfig::full(&a.out) };
    c.points = a.points.unwrap_or(c.points);
    c.polygons = a.polygons.unwrap_or(c.polygons);
    c.windows = a.windows.unwrap_or(c.windows);
    c.reps = a.reps.unwrap_or(c.reps);
    match run(&c) {
        Ok(r) => {
            print!("{}", r.summary());
            ExitCode::SUCCESS
        }
        Err(e) => fail(e),
    }
}
