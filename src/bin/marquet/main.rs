//! The `marquet` command: parsing and printing only; the work is in the library.
//!
//! ```text
//! marquet info PATH [--table PATH] [--json]
//! marquet dump PATH [--table PATH] [--rows A..B] [--format wkt|csv]
//! marquet validate PATH [--table PATH] [--json] [--strict]
//! marquet convert IN OUT [--table T] [--geoparquet-version 2.0|1.1|1.0]
//! marquet query PATH [--table T] (--bbox X0,Y0,X1,Y1 | --bbox-file F [--reopen]) [--predicate P] [--count] [--stats] [--no-index]
//! marquet index PATH [--table T] [--build block_bbox,packed_rtree | --drop KIND | --verify] [--json]
//! marquet append PATH [--table T] --from FILE [--rtree rebuild|stale] [--json]
//! marquet demo [--out DIR]
//! ```
//! Progress bars and spinners go to stderr, only when stderr is a terminal.
//! Exit codes: 0 success, 1 the answer is "no" (e.g. not conformant), 2 usage or I/O error.
//! Exit codes of `validate`: 0 conformant, 1 non-conformant, 2 unreadable or not HDF5.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser};
use marquet::validate::{validate_file, Options, Severity, Status};

#[cfg(feature = "mimalloc")]
mod alloc;
mod anchor;
mod append;
mod bar;
mod bench;
#[cfg(feature = "geoparquet")]
mod demo;
mod dump;
// pub(crate): the Python package compiles this file in and describes tables with it.
pub(crate) mod info;
mod lake;
mod out;
// The test HTTP server (issue #34): the server of `bench --remote`, and of the tests
// through the dev crate.
#[cfg(feature = "fgb-http")]
#[allow(dead_code)]
mod range_server;
#[cfg(feature = "fgb-http")]
mod remote_bench;
#[cfg(feature = "geoparquet")]
mod svg;
mod synth;

use bar::Bar;

#[derive(Parser)]
#[command(name = "marquet", version, about = "Marquet (HEP002) geospatial tables on H5Col (HEP001) in HDF5")]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Seconds to wait for another process's lock on an HDF5 file (HDF5 file locking: one
    /// writer or any number of readers), retrying with backoff (docs/FAULTS.md F5).
    #[arg(long, global = true, value_name = "SECONDS", default_value_t = 10.0)]
    lock_timeout: f64,
}

/// The subcommands. Their arguments are declared by each `…Args` type; `Subcommand` and
/// `FromArgMatches` are implemented by [`subcommands!`] so that clap builds the arguments
/// of the one subcommand a command line names, not of all nine (issue #33 item 5: building
/// every subcommand was 0.24 M instructions, an eighth of `marquet --version`).
enum Command {
    Validate(ValidateArgs),
    Info(InfoArgs),
    Dump(DumpArgs),
    Convert(ConvertArgs),
    Query(QueryArgs),
    Index(IndexArgs),
    Append(append::AppendArgs),
    Demo(DemoArgs),
    Bench(BenchArgs),
}

/// `Subcommand` and `FromArgMatches` for [`Command`], as `#[derive(Subcommand)]` writes them
/// (the name, `about` and `long_about` of each subcommand, its arguments by its `Args`
/// type), except that each subcommand's arguments are added by `Command::defer`: when clap
/// parses or prints that subcommand, not before. The unit test
/// `tests::deferred_subcommands_print_and_parse_as_the_derive_did` compares every help text
/// with the derive's.
macro_rules! subcommands {
    ($($variant:ident($args:ty) = $name:literal, $about:literal $(, $long:literal)?;)*) => {
        impl clap::Subcommand for Command {
            fn augment_subcommands(cmd: clap::Command) -> clap::Command {
                cmd$(.subcommand(subcommand($name, $about, None $(.or(Some($long)))?).defer(|c| with_args(c, <$args as clap::Args>::augment_args))))*
            }
            fn augment_subcommands_for_update(cmd: clap::Command) -> clap::Command {
                cmd$(.subcommand(subcommand($name, $about, None $(.or(Some($long)))?).defer(|c| with_args(c, <$args as clap::Args>::augment_args_for_update))))*
            }
            fn has_subcommand(name: &str) -> bool {
                matches!(name, $($name)|*)
            }
        }
        impl clap::FromArgMatches for Command {
            fn from_arg_matches(m: &clap::ArgMatches) -> Result<Self, clap::Error> {
                Self::from_arg_matches_mut(&mut m.clone())
            }
            fn from_arg_matches_mut(m: &mut clap::ArgMatches) -> Result<Self, clap::Error> {
                match m.remove_subcommand() {
                    Some((name, mut sub)) => match name.as_str() {
                        $($name => Ok(Command::$variant(<$args as clap::FromArgMatches>::from_arg_matches_mut(&mut sub)?)),)*
                        _ => Err(clap::Error::raw(clap::error::ErrorKind::InvalidSubcommand, format!("the subcommand '{name}' wasn't recognized"))),
                    },
                    None => Err(clap::Error::raw(clap::error::ErrorKind::MissingSubcommand, "a subcommand is required but one was not provided")),
                }
            }
            fn update_from_arg_matches(&mut self, m: &clap::ArgMatches) -> Result<(), clap::Error> {
                self.update_from_arg_matches_mut(&mut m.clone())
            }
            fn update_from_arg_matches_mut(&mut self, m: &mut clap::ArgMatches) -> Result<(), clap::Error> {
                let Some(name) = m.subcommand_name() else { return Ok(()) };
                let same = match (&*self, name) {
                    $((Command::$variant(_), $name) => true,)*
                    _ => false,
                };
                if !same {
                    *self = Self::from_arg_matches_mut(m)?;
                    return Ok(());
                }
                if let Some((name, mut sub)) = m.remove_subcommand() {
                    match (self, name.as_str()) {
                        $((Command::$variant(a), $name) => <$args as clap::FromArgMatches>::update_from_arg_matches_mut(a, &mut sub)?,)*
                        _ => {}
                    }
                }
                Ok(())
            }
        }
    };
}

/// A subcommand's arguments added to its shell `c` by `add` (an `Args::augment_args`), the
/// shell's help texts kept over any the arguments' type sets (the derive's order).
fn with_args(c: clap::Command, add: fn(clap::Command) -> clap::Command) -> clap::Command {
    let (about, long) = (c.get_about().cloned(), c.get_long_about().cloned());
    let mut c = add(c);
    if let Some(a) = about {
        c = c.about(a);
    }
    if let Some(l) = long {
        c = c.long_about(l);
    }
    c
}

/// A subcommand's shell: its name and help texts (its arguments come later, deferred).
fn subcommand(name: &'static str, about: &'static str, long: Option<&'static str>) -> clap::Command {
    let c = clap::Command::new(name).about(about);
    match long {
        Some(l) => c.long_about(l),
        None => c.long_about(None::<&str>),
    }
}

subcommands! {
    Validate(ValidateArgs) = "validate", "Check a file against HEP001 §13 and HEP002 §12 (exit 0 conformant, 1 not, 2 unreadable)";
    Info(InfoArgs) = "info",
        "Describe every table: rows, columns with types and stored bytes, geometry columns (storage form, types, CRS, edges, orientation, BBOX), indexes with their validity",
        "Describe every table: rows, columns with types and stored bytes, geometry columns (storage form, types, CRS, edges, orientation, BBOX), indexes with their validity.\n\nExample: `marquet info stations.h5 --json`";
    Dump(DumpArgs) = "dump", "Print rows of a table, geometries as WKT",
        "Print rows of a table, geometries as WKT.\n\nExample: `marquet dump lakes.h5 --table /lakes --rows 0..10 --format csv`";
    Convert(ConvertArgs) = "convert", "Convert between GeoParquet, GeoJSON and Marquet HDF5, by file extension",
        "Convert between GeoParquet, GeoJSON and Marquet HDF5, by file extension.\n\nExample: `marquet convert countries.parquet countries.h5`";
    Query(QueryArgs) = "query", "Rows of a geometry column meeting a window",
        "Rows of a geometry column meeting a window.\n\nExample: `marquet query lakes.h5 --table /lakes --bbox 0,0,10,10 --stats`";
    Index(IndexArgs) = "index", "Build, drop or list the spatial indexes of the primary geometry column",
        "Build, drop or list the spatial indexes of the primary geometry column.\n\nExample: `marquet index lakes.h5 --build block_bbox,packed_rtree`";
    Append(append::AppendArgs) = "append",
        "Append the rows of a GeoParquet, GeoJSON or Marquet file to a table, maintaining its summaries and indexes",
        "Append the rows of a GeoParquet, GeoJSON or Marquet file to a table, maintaining its summaries and indexes.\n\nExample: `marquet append cities.h5 --table /cities --from more.parquet`";
    Demo(DemoArgs) = "demo", "The main job on bundled Natural Earth data: import, index, query, validate, export, and an SVG map of the query window";
    Bench(BenchArgs) = "bench",
        "The Marquet side of the cross-format comparison: generate the seeded data, write it in raw form for benches/compare/compare.py, measure Marquet",
        "The Marquet side of the cross-format comparison: generate the seeded data, write it in raw form for benches/compare/compare.py, measure Marquet.\n\nThe whole comparison: `bash scripts/bench-compare.sh [--quick]`";
}

#[derive(Args)]
#[command(after_help = "Examples:
  marquet convert countries.parquet countries.h5            # GeoParquet -> new table /countries
  marquet convert countries.h5 countries.parquet            # the file's only table -> GeoParquet 2.0
  marquet convert world.h5 cities.geojson --table /cities   # one table of several -> GeoJSON
  marquet convert old.parquet new.parquet --geoparquet-version 1.1
  marquet convert points.csv points.h5 --lonlat lon,lat       # CSV with coordinates
  marquet convert parcels.csv parcels.h5 --geometry wkt:wkt    # CSV with a WKT column
  marquet convert export.parquet out.h5 --geometry geom:ewkb  # DuckDB/Spark Parquet, EWKB
  marquet convert warehouse/db/roads out.h5 --bbox 5,45,10,48 # an Iceberg table (Havasu, v3)
  marquet convert roads.h5 roads.parquet --layout geomesa     # GeoMesa Trino layout
  marquet convert roads.geojson roads.h5 --crs EPSG:25832      # state a missing or wrong CRS
  marquet convert roads.h5 roads_4326.parquet --to-crs EPSG:4326   # reproject
  marquet convert warehouse/db/scenes scenes.h5               # Havasu rasters: arrays + footprints
  marquet convert scenes.h5 scenes.parquet                    # ... back to Havasu v1 Parquet
  marquet convert scenes.h5 warehouse/db/scenes2              # ... or an Iceberg table
  marquet convert all.h5 one.he5 --table /roads               # copy a table as stored, indexes too

Formats by extension: .parquet/.geoparquet, .geojson/.json, .h5/.hdf5/.hdf/.he5, .csv/.tsv; an Iceberg
table is its directory or a metadata/*.metadata.json. Parquet without GeoParquet metadata
needs --geometry or --lonlat unless it has GeoMesa __<col>_bbox__ companions, or Havasu
raster columns (docs/lakehouse.md: each raster an HDF5 array, the table its footprints). Both
directions stream in batches of 65,536 rows. Exit 0 converted, 2 error.")]
struct ConvertArgs {
    /// The file to read.
    input: PathBuf,
    /// The file to write (an existing HDF5 file gets a new table).
    output: PathBuf,
    /// Table path inside the HDF5 file.
    #[arg(long)]
    table: Option<String>,
    /// GeoParquet flavour to write.
    #[arg(long, value_parser = ["2.0", "1.1", "1.0"])]
    geoparquet_version: Option<String>,
    /// Parquet layout to write: geomesa = GeoMesa's Trino layout (WKB with __<col>_bbox__
    /// and hex __<col>_z2__/__<col>_xz2__ companions, rows in curve order).
    #[arg(long = "layout", value_parser = ["geomesa"])]
    parquet_layout: Option<String>,
    /// Reproject the geometry columns to this CRS (EPSG:3857, OGC:CRS84, srid:N, an OGC URN,
    /// WKT or PROJJSON); BBOX and spatial indexes are rebuilt. `--crs` states the input's
    /// CRS when it is missing or wrong (coordinates unchanged).
    #[arg(long, value_name = "CODE")]
    to_crs: Option<String>,
    /// Nested columns an HDF5 table cannot hold (a list of structs, a map, a nested list):
    /// json = keep each value as JSON text, with a warning (default); refuse = stop with an
    /// error naming the column. Structs are always kept, as `parent.child` columns nested
    /// again on GeoParquet export.
    #[arg(long, value_parser = ["json", "refuse"], value_name = "POLICY")]
    nested: Option<String>,
    /// How string columns are stored in an HDF5 output: fixed = fixed-length UTF-8 with the
    /// fill value 0xFF (default); bytes = UTF-8 bytes in a list column with a null mask, the
    /// form netCDF-C reads (always so in a netCDF-4 file; docs/RULINGS-LOCAL.md L17).
    #[arg(long, value_parser = ["fixed", "bytes"], value_name = "FORM")]
    strings: Option<String>,
    /// Write a new HDF5 file laid out for queries over HTTP and object storage: metadata
    /// first, every dataset contiguous and uncompressed (block indexes one compressed
    /// chunk each), R-trees before the data (few round trips a window; about 20 % larger;
    /// its tables take no appends). Works from
    /// any input, an HDF5 file too (README "Files on a web server or in object storage").
    #[arg(long)]
    cloud: bool,
    #[command(flatten)]
    layout: LayoutArgs,
    #[command(flatten)]
    lake: lake::LakeArgs,
}

/// How a written table is laid out (marquet::WriteLayout). The defaults are the
/// measured fast layout; each flag turns one part off or changes it.
#[derive(Args, Debug, Default)]
struct LayoutArgs {
    /// Keep the input's row order (default: Hilbert order of the geometries, HEP002 §10.6).
    /// The table remembers it: later appends keep their rows' order too.
    #[arg(long, help_heading = "Layout")]
    keep_order: bool,
    /// Build no spatial index (default: BLOCK_BBOX, plus a PACKED_RTREE for non-point columns).
    #[arg(long, help_heading = "Layout")]
    no_index: bool,
    /// Packed R-tree: auto (non-point columns), on, off.
    #[arg(long, value_parser = ["auto", "on", "off"], help_heading = "Layout")]
    rtree: Option<String>,
    /// BLOCK_BBOX block length in rows (default 1024).
    #[arg(long, help_heading = "Layout")]
    block_length: Option<u64>,
    /// No covering (bbox) column: none in an HDF5 table; in GeoParquet output, none either
    /// (default: one for each non-point geometry column).
    #[arg(long, help_heading = "Layout", conflicts_with = "covering")]
    no_covering: bool,
    /// A covering (bbox) column in GeoParquet output for every geometry column, point
    /// columns too (GeoParquet 1.1 `covering`, also written in 1.0 and 2.0 output;
    /// `geopandas.read_parquet(bbox=...)` needs one).
    #[arg(long, help_heading = "Layout")]
    covering: bool,
    /// Chunk length in rows of geometry and attribute columns (default 2048).
    #[arg(long, help_heading = "Layout")]
    chunk_rows: Option<u64>,
    /// Chunk length in bytes of variable-length WKB values (default 16384).
    #[arg(long, help_heading = "Layout")]
    values_chunk_bytes: Option<u64>,
    /// Memory budget of the external Hilbert sort, in MiB (default 256).
    #[arg(long, help_heading = "Layout")]
    sort_memory_mib: Option<usize>,
    /// Compression of geometry and attribute data, after shuffle for numbers of more than
    /// one byte: deflate[:LEVEL] (default deflate:4; any HDF5 reader opens it),
    /// zstd[:LEVEL] (faster and needs the HDF5 zstd plugin 32015 outside Marquet) or none.
    #[arg(long, help_heading = "Layout")]
    compression: Option<String>,
    /// Store HDF5's Fletcher-32 checksum with every chunk of every dataset written, so that
    /// a damaged chunk reads as an error (and `validate --full` names it) instead of as
    /// other values; 4 bytes a chunk, written through HDF5's serial filter pipeline.
    #[arg(long, help_heading = "Layout")]
    checksums: bool,
}

impl LayoutArgs {
    /// The bbox coverings of GeoParquet output (`--covering`, `--no-covering`).
    fn covering(&self) -> marquet::convert::CoveringChoice {
        use marquet::convert::CoveringChoice;
        match (self.covering, self.no_covering) {
            (true, _) => CoveringChoice::All,
            (_, true) => CoveringChoice::None,
            _ => CoveringChoice::NonPoint,
        }
    }

    fn layout(&self) -> Result<marquet::WriteLayout, marquet::Error> {
        let mut l = marquet::WriteLayout::default().with_spatial_order(!self.keep_order);
        if self.no_index {
            l = l.without_indexes();
        }
        if let Some(r) = &self.rtree {
            l = l.with_rtree(r.parse()?);
        }
        if let Some(b) = self.block_length {
            if b == 0 {
                return Err(marquet::Error::InvalidArgument("--block-length must be at least 1".into()));
            }
            l = l.with_block_length(b);
        }
        l = l.with_covering(!self.no_covering);
        if let Some(n) = self.chunk_rows {
            l = l.with_chunk_rows(n);
        }
        if let Some(n) = self.values_chunk_bytes {
            l = l.with_values_chunk_bytes(n);
        }
        if let Some(m) = self.sort_memory_mib {
            l = l.with_sort_memory(m.saturating_mul(1 << 20));
        }
        if let Some(c) = &self.compression {
            l = l.with_compression(c.parse().map_err(|e: String| marquet::Error::InvalidArgument(format!("--compression: {e}")))?);
        }
        Ok(l.with_checksums(self.checksums))
    }
}

#[derive(Args)]
#[command(after_help = "Examples:
  marquet query ne.h5 --table /cities --bbox -10,35,20,60
  marquet query ne.h5 --table /countries --bbox -10,35,20,60 --predicate within --count --stats
  marquet query ne.h5 --table /cities --bbox-file windows.txt --count   # one count per line
  marquet query ne.h5 --table /cities --bbox 129,30,146,46 --json
  marquet query ne.h5 --table /cities --bbox -10,35,20,60 --format geojson > cities.geojson

Prints matching row numbers, one per line, or with --format the matching rows themselves
(as `marquet dump` prints them; `--format arrays` on a table of Havasu raster footprints: each
hit's raster with its pixels, one JSON object per line). --stats (stderr) shows the rows total, blocks
skipped by BLOCK_BBOX, r-tree candidates, rows rejected by the covering column, exact
predicate tests and bytes read. Exit 0 answered (also with no match), 2 error.")]
struct QueryArgs {
    /// The HDF5 file.
    path: PathBuf,
    /// The table (default: the file's only table).
    #[arg(long)]
    table: Option<String>,
    /// Geometry column (default: the primary one).
    #[arg(long)]
    column: Option<String>,
    /// XMIN,YMIN,XMAX,YMAX.
    #[arg(long, conflicts_with = "bbox_file", allow_hyphen_values = true)]
    bbox: Option<String>,
    /// One XMIN,YMIN,XMAX,YMAX per line, all answered through one reader that opens the
    /// file and the column once (`SpatialReader`).
    #[arg(long)]
    bbox_file: Option<PathBuf>,
    /// Open the file and table afresh for every window (the cold path, for benchmarks).
    #[arg(long)]
    reopen: bool,
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
    /// Attribute filter "COLUMN OP VALUE" (OP: = == < <= > >= in); repeat to AND several.
    /// Alone (no window) it filters any H5Col table.
    #[arg(long = "where", value_name = "PREDICATE", allow_hyphen_values = true)]
    where_: Vec<String>,
    /// One JSON object per window: bbox, count, rows (unless --count), stats.
    #[arg(long)]
    json: bool,
    /// rows: row numbers; wkt / csv / geojson: the matching rows, as `marquet dump` prints
    /// them (one table or FeatureCollection per window); arrays: on a raster footprint
    /// table (`convert` of Havasu rasters), one JSON object per hit with the raster's
    /// facts and its pixels (`values[band][row][column]`).
    #[arg(long, value_parser = ["rows", "wkt", "csv", "geojson", "arrays"], default_value = "rows", conflicts_with_all = ["count", "json"])]
    format: String,
}

#[derive(Args)]
#[command(after_help = "Examples:
  marquet index ne.h5 --table /cities                                # list, with validity
  marquet index ne.h5 --table /cities --build block_bbox,packed_rtree
  marquet index ne.h5 --table /cities --drop packed_rtree
  marquet index ne.h5 --table /cities --verify --json

--verify checks every BLOCK_BBOX and PACKED_RTREE of the column against its geometries
(HEP002 §12 req 16, §17). Exit 0 done (with --verify: every index matches), 1 with --verify
when an index is stale, does not match or could not be verified, 2 error.")]
struct IndexArgs {
    /// The HDF5 file.
    path: PathBuf,
    /// The table (default: the file's only table).
    #[arg(long)]
    table: Option<String>,
    /// Geometry column (default: the primary one).
    #[arg(long)]
    column: Option<String>,
    /// Kinds to build: block_bbox, packed_rtree (comma-separated).
    #[arg(long)]
    build: Option<String>,
    /// Kind to drop.
    #[arg(long)]
    drop: Option<String>,
    /// Check every index against the geometries; exit 1 when one does not match.
    #[arg(long, conflicts_with_all = ["build", "drop"])]
    verify: bool,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
#[command(after_help = "Examples:
  marquet demo                      # writes ./marquet-demo/
  marquet demo --out /tmp/demo      # natural_earth.h5, window.svg, countries.parquet

Exit 0 done, 2 error.")]
struct DemoArgs {
    /// Where to write the demo files.
    #[arg(long, default_value = "marquet-demo")]
    out: PathBuf,
    /// A repository root holding testdata/peers to read the inputs from (default: the copies
    /// compiled into the command, written into --out).
    #[arg(long)]
    data: Option<PathBuf>,
}

fn fail(e: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {e}");
    ExitCode::from(EXIT_UNREADABLE)
}

fn convert(a: ConvertArgs) -> ExitCode {
    use marquet::convert::{convert, ConvertOptions, GeoParquetVersion};
    let v = match a.geoparquet_version.as_deref() {
        Some("1.0") => Some(GeoParquetVersion::V1_0),
        Some("1.1") => Some(GeoParquetVersion::V1_1),
        Some(_) => Some(GeoParquetVersion::V2_0),
        None => None,
    };
    let layout = match a.layout.layout() {
        Ok(l) => l,
        Err(e) => return fail(e),
    };
    let mut lake = match a.lake.options() {
        Ok(l) => l,
        Err(e) => return fail(e),
    };
    lake.geomesa_export = a.parquet_layout.as_deref() == Some("geomesa");
    let bar = Bar::rows("convert");
    let covering = a.layout.covering();
    let nested = match a.nested.as_deref() {
        Some("refuse") => marquet::convert::NestedPolicy::Refuse,
        _ => marquet::convert::NestedPolicy::Json,
    };
    let opts = ConvertOptions {
        table: a.table,
        geoparquet_version: v,
        progress: bar.progress(),
        covering,
        nested,
        layout,
        // One --crs for every source (the lakehouse readers' and issue #22's).
        crs: lake.crs.clone(),
        to_crs: a.to_crs,
        lake,
        text_as_bytes: a.strings.as_deref() == Some("bytes"),
        cloud: a.cloud,
        ..ConvertOptions::default()
    };
    let res = convert(&a.input, &a.output, &opts);
    bar.finish();
    match res {
        Ok(r) => {
            for w in r.import.iter().flat_map(|i| &i.warnings) {
                eprintln!("warning: {w}");
            }
            out::print(&r.to_string());
            ExitCode::SUCCESS
        }
        Err(e) => fail(e),
    }
}

fn parse_bbox(s: &str) -> Result<marquet::BBox, String> {
    let v: Vec<f64> = s.split(',').map(|x| x.trim().parse::<f64>()).collect::<Result<_, _>>().map_err(|_| format!("bad window {s:?}"))?;
    if v.len() != 4 {
        return Err(format!("a window is XMIN,YMIN,XMAX,YMAX, got {s:?}"));
    }
    marquet::query::Window::try_bbox(v[0], v[1], v[2], v[3]).map_err(|e| e.to_string())?;
    Ok(marquet::BBox::xy(v[0], v[1], v[2], v[3]))
}

/// `query --format arrays`: the hits of a raster footprint table with their pixels, one JSON
/// object per line (issue #37).
fn print_rasters(a: &QueryArgs, rows: &[u64]) -> Result<(), String> {
    use marquet::convert::lake::raster::read::{raster_columns, read_rasters};
    let f = marquet::h5col::File::open(&a.path).map_err(|e| e.to_string())?;
    let tp = pick_table(&f, a.table.clone())?;
    let t = marquet::Table::open(&f, &tp).map_err(|e| e.to_string())?;
    let col = match &a.column {
        Some(c) => c.clone(),
        None => t.primary_geometry_column().map_err(|e| e.to_string())?,
    };
    if !raster_columns(&t).map_err(|e| e.to_string())?.contains(&col) {
        return Err(format!("{tp}: {col} is not a raster footprint column (--format arrays reads tables that `convert` made of Havasu rasters)"));
    }
    let mut out = out::Out::new();
    // A bounded number of rasters in memory at once.
    for chunk in rows.chunks(64) {
        for r in read_rasters(&f, &t, &col, chunk).map_err(|e| e.to_string())? {
            if !out.put(&format!("{}\n", r.to_json(true)))? {
                return out.finish();
            }
        }
    }
    out.finish()
}

fn query(a: QueryArgs) -> ExitCode {
    use marquet::h5col::predicate::{filter_all, parse_where, FilterStats};
    use marquet::query::{Predicate, Query, TableQuery};
    let filters = match a.where_.iter().map(|w| parse_where(w)).collect::<Result<Vec<_>, _>>() {
        Ok(f) => f,
        Err(e) => return fail(e),
    };
    let windows: Vec<Option<String>> = match (&a.bbox, &a.bbox_file) {
        (Some(b), _) => vec![Some(b.clone())],
        (None, Some(f)) => match std::fs::read_to_string(f) {
            Ok(t) => t.lines().filter(|l| !l.trim().is_empty()).map(|l| Some(l.to_string())).collect(),
            Err(e) => return fail(format!("{}: {e}", f.display())),
        },
        (None, None) if !filters.is_empty() => vec![None],
        (None, None) => return fail("give --bbox, --bbox-file or --where"),
    };
    let pred = match a.predicate.as_str() {
        "within" => Predicate::Within,
        "contains" => Predicate::Contains,
        "bbox" => Predicate::BBoxOnly,
        _ => Predicate::Intersects,
    };
    let attr_stats = |st: &[FilterStats]| -> String {
        st.iter()
            .zip(&filters)
            .map(|(s, (c, _))| {
                format!(
                    " | where {c}: {} examined {} rows, skipped {}/{} chunks{}",
                    s.index_used.as_deref().unwrap_or("scan"),
                    s.rows_examined,
                    s.chunks_skipped,
                    s.chunks_total,
                    if s.stale_indexes > 0 { format!(", {} stale indexes ignored", s.stale_indexes) } else { String::new() }
                )
            })
            .collect()
    };
    let attr_json = |st: &[FilterStats]| -> serde_json::Value {
        st.iter()
            .zip(&filters)
            .map(|(s, (c, _))| {
                serde_json::json!({
                    "column": c, "index": s.index_used, "rows_examined": s.rows_examined,
                    "chunks_skipped": s.chunks_skipped, "chunks_total": s.chunks_total,
                    "stale_indexes": s.stale_indexes,
                })
            })
            .collect()
    };
    // What one window returns: its rows, its --stats text and JSON, and the rows' WKB when
    // the rows are printed (--format: the query returns them, nothing reads them again).
    type Answer = (Vec<u64>, String, serde_json::Value, Option<marquet::WkbBuffer>);
    let prints_rows = !a.count && !a.json && matches!(a.format.as_str(), "wkt" | "csv" | "geojson");
    let describe = |b: marquet::BBox, r: marquet::query::CombinedResult| -> Answer {
        let stats = match &r.spatial {
            Some(s) => format!(
                "rows {} | blocks skipped {}/{} | r-tree candidates {} (by box {}) | covering rejected {} | exact tests {} | spatial matched {} | bytes read {}{}",
                s.rows_total, s.blocks_skipped, s.blocks_total, s.rtree_candidates, s.rows_by_box, s.covering_rejected, s.exact_tested, s.rows_matched, s.bytes_read,
                if s.stale_indexes.is_empty() { String::new() } else { format!(" | stale indexes ignored: {}", s.stale_indexes.join(", ")) }
            ),
            None => "spatial query skipped: the attribute filters matched nothing".to_string(),
        } + &attr_stats(&r.attributes)
            + &if filters.is_empty() { String::new() } else { format!(" | matched {}", r.rows.len()) };
        let mut json = serde_json::json!({ "bbox": [b.xmin, b.ymin, b.xmax, b.ymax], "count": r.rows.len() });
        json["stats"] = match &r.spatial {
            Some(s) => {
                let mut o: serde_json::Map<String, serde_json::Value> = s.counters().iter().map(|(k, v)| (k.to_string(), (*v).into())).collect();
                o.insert("stale_indexes".into(), serde_json::json!(s.stale_indexes));
                serde_json::Value::Object(o)
            }
            None => serde_json::json!({ "spatial_skipped": true }),
        };
        if !filters.is_empty() {
            json["where"] = serde_json::json!(a.where_);
            json["stats"]["attributes"] = attr_json(&r.attributes);
        }
        (r.rows, stats, json, r.wkb)
    };
    // One reader for every window unless --reopen (issue #20).
    let mut warm: Option<marquet::query::reader::SpatialReader> = None;
    // A window query without attribute filters reads by byte range, without libhdf5
    // (issue #33): the reader falls back to libhdf5 by itself for what that path does not
    // read.
    let byte_range = filters.is_empty();
    for w in windows {
        let mut run = || -> Result<(Answer, Option<String>), String> {
            if let (Some(wt), true) = (&w, byte_range) {
                let b = parse_bbox(wt)?;
                if warm.is_none() || a.reopen {
                    use marquet::query::reader::SpatialReader;
                    let col = a.column.as_deref();
                    let r = match &a.table {
                        Some(t) => SpatialReader::open_path(&a.path, &marquet::h5col::normalize_table_path(t), col),
                        // The one table, found with the reader's own open of the file.
                        None => SpatialReader::open_path_single(&a.path, col),
                    };
                    warm = Some(r.map_err(|e| e.to_string())?);
                }
                let reader = warm.as_mut().ok_or("no reader")?;
                let q = Query::bbox(b).with_predicate(pred).with_indexes(!a.no_index).with_wkb(prints_rows);
                let r = reader.query_where(&q, &filters).map_err(|e| e.to_string())?;
                let (rows, stats, mut json, wkb) = describe(b, r);
                json["stats"]["read_path"] = reader.read_path().into();
                let mut stats = stats + " | read path " + reader.read_path();
                #[cfg(feature = "cloud")]
                if let Some(r) = reader.remote_stats() {
                    json["stats"]["requests"] = r.requests.into();
                    json["stats"]["bytes_fetched"] = r.bytes_fetched.into();
                    stats += &format!(" | requests {} | bytes fetched {}", r.requests, r.bytes_fetched);
                }
                return Ok(((rows, stats, json, wkb), Some(reader.column().to_string())));
            }
            if let (Some(wt), false) = (&w, a.reopen) {
                let b = parse_bbox(wt)?;
                if warm.is_none() {
                    let f = marquet::h5col::File::open(&a.path).map_err(|e| e.to_string())?;
                    let tp = pick_table(&f, a.table.clone())?;
                    warm = Some(marquet::query::reader::SpatialReader::open(&f, &tp, a.column.as_deref()).map_err(|e| e.to_string())?);
                }
                let reader = warm.as_mut().ok_or("no reader")?;
                let q = Query::bbox(b).with_predicate(pred).with_indexes(!a.no_index).with_wkb(prints_rows);
                let r = reader.query_where(&q, &filters).map_err(|e| e.to_string())?;
                return Ok((describe(b, r), Some(reader.column().to_string())));
            }
            let f = marquet::h5col::File::open(&a.path).map_err(|e| e.to_string())?;
            let tp = pick_table(&f, a.table.clone())?;
            let Some(w) = &w else {
                let t = f.table(&tp).map_err(|e| e.to_string())?;
                let (rows, st) = filter_all(&t, &filters, !a.no_index).map_err(|e| e.to_string())?;
                let nrows = t.nrows().map_err(|e| e.to_string())?;
                let stats = format!("rows {nrows} | matched {}{}", rows.len(), attr_stats(&st));
                let json = serde_json::json!({
                    "where": a.where_, "count": rows.len(),
                    "stats": { "rows_total": nrows, "attributes": attr_json(&st) },
                });
                return Ok(((rows, stats, json, None), None));
            };
            let b = parse_bbox(w)?;
            let t = marquet::Table::open(&f, &tp).map_err(|e| e.to_string())?;
            let col = match &a.column {
                Some(c) => c.clone(),
                None => t.primary_geometry_column().map_err(|e| e.to_string())?,
            };
            let q = Query::bbox(b).with_predicate(pred).with_indexes(!a.no_index).with_wkb(prints_rows);
            let r = t.query_where(&col, &q, &filters).map_err(|e| e.to_string())?;
            Ok((describe(b, r), Some(col)))
        };
        match run() {
            Ok(((rows, _, mut json, _), _)) if a.json => {
                if !a.count {
                    json["rows"] = serde_json::json!(rows);
                }
                out::println(&json.to_string());
            }
            Ok(((rows, stats, _, wkb), col)) => {
                if a.count {
                    out::println(&rows.len().to_string());
                } else if a.format == "arrays" {
                    if let Err(e) = print_rasters(&a, &rows) {
                        return fail(e);
                    }
                } else if a.format != "rows" {
                    let fmt = match a.format.as_str() {
                        "csv" => dump::DumpFormat::Csv,
                        "geojson" => dump::DumpFormat::GeoJson,
                        _ => dump::DumpFormat::Wkt,
                    };
                    let printed = marquet::h5col::File::open(&a.path).map_err(|e| e.to_string()).and_then(|f| {
                        let tp = pick_table(&f, a.table.clone())?;
                        let mut out = out::Out::new();
                        let given = col.as_deref().zip(wkb.as_ref());
                        dump::print_rows(&mut out, &f, &tp, dump::Rows::List(&rows), fmt, given)?;
                        out.finish()
                    });
                    if let Err(e) = printed {
                        return fail(e);
                    }
                } else {
                    let mut out = out::Out::new();
                    for r in rows {
                        match out.put(&format!("{r}\n")) {
                            Ok(true) => {}
                            Ok(false) => break,
                            Err(e) => return fail(e),
                        }
                    }
                    if let Err(e) = out.finish() {
                        return fail(e);
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
    use marquet::SpatialIndexKind;
    let kind_of = |k: &str| match k.trim() {
        "block_bbox" => Ok(SpatialIndexKind::BlockBBox),
        "packed_rtree" => Ok(SpatialIndexKind::PackedRTree),
        o => Err(format!("unknown index kind {o:?} (block_bbox, packed_rtree)")),
    };
    let spin = Bar::spinner(if a.verify { "verifying indexes" } else { "indexes" });
    // Build / drop / list with the file open; --verify after it is closed (the validator
    // opens the file itself).
    let run = || -> Result<(String, String, String, serde_json::Value), String> {
        let f = if a.build.is_some() || a.drop.is_some() {
            marquet::h5col::File::open_rw(&a.path)
        } else {
            marquet::h5col::File::open(&a.path)
        }
        .map_err(|e| e.to_string())?;
        let tp = pick_table(&f, a.table.clone())?;
        let t = marquet::Table::open(&f, &tp).map_err(|e| e.to_string())?;
        let col = match &a.column {
            Some(c) => c.clone(),
            None => t.primary_geometry_column().map_err(|e| e.to_string())?,
        };
        let mut out = String::new();
        let mut built = Vec::new();
        for k in a.build.as_deref().unwrap_or("").split(',').filter(|k| !k.trim().is_empty()) {
            let p = match kind_of(k)? {
                SpatialIndexKind::BlockBBox => t.build_block_bbox(&col, None),
                SpatialIndexKind::PackedRTree => t.build_rtree(&col, None),
            }
            .map_err(|e| e.to_string())?;
            out += &format!("built {p}\n");
            built.push(p);
        }
        let mut dropped = 0;
        if let Some(k) = &a.drop {
            dropped = t.drop_index(&col, kind_of(k)?).map_err(|e| e.to_string())?;
            out += &format!("dropped {dropped} index(es)\n");
        }
        let mut list = Vec::new();
        for i in t.spatial_indexes(&col).map_err(|e| e.to_string())? {
            if !a.verify {
                out += &format!("{} {} ({})\n", i.kind.kind(), i.info.path, if i.valid { "valid" } else { "stale" });
            }
            list.push(serde_json::json!({ "kind": i.kind.kind(), "path": i.info.path, "valid": i.valid }));
        }
        let json = serde_json::json!({ "table": tp, "column": col, "built": built, "dropped": dropped, "indexes": list });
        Ok((out, tp, col, json))
    };
    let (out, tp, col, mut json) = match run() {
        Ok(v) => v,
        Err(e) => return fail(e),
    };
    let mut code = ExitCode::SUCCESS;
    let mut text = out;
    if a.verify {
        let checks = match marquet::validate::verify_indexes(&a.path, &tp, &col) {
            Ok(c) => c,
            Err(e) => return fail(e),
        };
        if checks.is_empty() {
            text += &format!("{tp} column {col}: no spatial index\n");
        }
        let mut v = Vec::new();
        for c in &checks {
            text += &format!("{} {}: {}\n", c.kind, c.path, c.verdict.as_str());
            for f in &c.findings {
                text += &format!("  {f}\n");
            }
            if c.verdict == marquet::validate::IndexVerdict::Stale {
                text += "  its validity tokens do not match the table: rebuild it with --build\n";
            }
            if c.verdict != marquet::validate::IndexVerdict::Matches {
                code = ExitCode::from(EXIT_NON_CONFORMANT);
            }
            let findings: Vec<String> = c.findings.iter().map(|f| f.to_string()).collect();
            v.push(serde_json::json!({ "kind": c.kind, "path": c.path, "verdict": c.verdict.as_str(), "findings": findings }));
        }
        json["verify"] = serde_json::json!(v);
    }
    spin.finish();
    if a.json {
        out::println(&json.to_string());
    } else {
        out::print(&text.to_string());
    }
    code
}

fn demo(a: DemoArgs) -> ExitCode {
    let spin = Bar::spinner("demo");
    let res = demo::run(a.data.as_deref(), &a.out);
    spin.finish();
    match res {
        Ok(s) => {
            out::print(&s.to_string());
            ExitCode::SUCCESS
        }
        Err(e) => fail(e),
    }
}

#[derive(Args)]
#[command(after_help = "Examples:
  marquet info ne.h5
  marquet info ne.h5 --table /cities --json | jq '.tables[0].geometry_columns'

Exit 0 described, 2 error.")]
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
#[command(after_help = "Examples:
  marquet dump ne.h5 --table /cities --rows 0..10
  marquet dump stations.h5 --format csv > stations.csv
  marquet dump ne.h5 --table /countries --rows 5..6 --format geojson

Rows are half-open (A..B; A.. and ..B work). Exit 0 printed, 2 error.")]
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
    #[arg(long, value_parser = ["wkt", "csv", "geojson"], default_value = "wkt")]
    format: String,
}

/// The table to use: the one given, or the file's only table (else an error listing them).
fn pick_table(f: &marquet::h5col::File, given: Option<String>) -> Result<String, String> {
    if let Some(t) = given {
        return Ok(marquet::h5col::normalize_table_path(&t));
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
    match info::describe_file(&a.path, a.table.as_deref().map(marquet::h5col::normalize_table_path).as_deref()) {
        Ok(v) => {
            if a.json {
                out::println(&v.to_string());
            } else {
                out::print(&info::render_text(&v).to_string());
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
    let run = || -> Result<(), String> {
        let f = marquet::h5col::File::open(&a.path).map_err(|e| e.to_string())?;
        let t = pick_table(&f, a.table.clone())?;
        let (s, e) = match &a.rows {
            Some(r) => parse_rows(r).ok_or_else(|| format!("--rows {r:?} is not A..B"))?,
            None => (0, u64::MAX),
        };
        let fmt = match a.format.as_str() {
            "csv" => dump::DumpFormat::Csv,
            "geojson" => dump::DumpFormat::GeoJson,
            _ => dump::DumpFormat::Wkt,
        };
        if let Some(r) = &a.rows {
            let n = f.table(&t).and_then(|t| t.nrows()).map_err(|e| e.to_string())?;
            if s > e || (s > 0 && s >= n) {
                return Err(format!("--rows {r} is outside the table's {n} rows"));
            }
        }
        let mut out = out::Out::new();
        dump::print_rows(&mut out, &f, &t, dump::Rows::Range(s, e), fmt, None)?;
        out.finish()
    };
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(EXIT_UNREADABLE)
        }
    }
}

#[derive(Args)]
#[command(after_help = "Examples:
  marquet validate ne.h5
  marquet validate ne.h5 --table /cities --strict
  marquet validate ne.h5 --full
  marquet validate ne.h5 --json | jq .status

Exit 0 conformant, 1 not conformant, 2 unreadable or not HDF5.")]
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
    /// Also read every chunk of every dataset (data integrity: a damaged chunk of any
    /// column is an error, not only those the checks read; docs/FAULTS.md).
    #[arg(long)]
    full: bool,
}

const EXIT_CONFORMANT: u8 = 0;
const EXIT_NON_CONFORMANT: u8 = 1;
const EXIT_UNREADABLE: u8 = 2;

fn main() -> ExitCode {
    tune_malloc();
    // The commands that only read take mimalloc (alloc.rs); the first word that is not an
    // option names the command.
    #[cfg(feature = "mimalloc")]
    {
        let command = std::env::args_os().skip(1).find(|a| !a.to_string_lossy().starts_with('-'));
        if command.is_some_and(|c| READ_COMMANDS.iter().any(|r| c == *r)) {
            alloc::use_mimalloc();
        }
    }
    run(std::env::args_os())
}

/// The subcommands that write nothing and so run on mimalloc (alloc.rs). `bench` writes
/// its files first, then times reads.
#[cfg(feature = "mimalloc")]
const READ_COMMANDS: [&str; 5] = ["query", "info", "dump", "validate", "bench"];

/// The process's allocator, set by the program that owns the process (never by the
/// library, which shares its host's): buffers up to 32 MiB from the heap rather than from
/// fresh mappings, and up to 64 MiB of freed heap kept rather than handed back. glibc's
/// defaults (mappings from 128 KiB, trimming past twice that, both raised as buffers are
/// freed) fault in the pages of each batch's buffers again: a convert of 1,000,000
/// points took 29,000 page faults, 21,500 with these (0.94× its wall time), and one of
/// 10,000,000 points peaks lower (267 MB against 298 MB without a fixed threshold;
/// docs/PERFORMANCE.md, "Session 31").
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
fn tune_malloc() {
    // SAFETY: mallopt only sets allocator parameters; called before any other thread
    // exists, with parameters glibc documents; a refusal (return 0) leaves the defaults.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 64 << 20);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn tune_malloc() {}

/// The command line `args` (program name first): also the entry point of the `marquet`
/// command the Python wheel installs (python/src/lib.rs includes this file).
pub fn run<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let cli = Cli::parse_from(args);
    if !(cli.lock_timeout.is_finite() && cli.lock_timeout >= 0.0) {
        return fail(format!("--lock-timeout {} is not a number of seconds", cli.lock_timeout));
    }
    marquet::h5col::set_lock_timeout(std::time::Duration::from_secs_f64(cli.lock_timeout.min(86_400.0)));
    match cli.command {
        Command::Validate(a) => validate(a),
        Command::Info(a) => info(a),
        Command::Dump(a) => dump(a),
        Command::Convert(a) => convert(a),
        Command::Query(a) => query(a),
        Command::Index(a) => index(a),
        Command::Append(a) => append::run(a),
        Command::Demo(a) => demo(a),
        Command::Bench(a) => bench(a),
    }
}

fn validate(a: ValidateArgs) -> ExitCode {
    let table = a.table.as_deref().map(marquet::h5col::normalize_table_path);
    // A table that is not there is a usage error (exit 2), not a non-conformant file.
    if let Some(t) = &table {
        match marquet::h5col::File::open(&a.path).and_then(|f| f.tables()) {
            Ok(all) if !all.contains(t) => {
                return fail(format!("{}: no table {t} (tables: {})", a.path.display(), if all.is_empty() { "none".to_string() } else { all.join(", ") }));
            }
            _ => {}
        }
    }
    let opts = Options { table, strict: a.strict, full: a.full, ..Options::default() };
    let spin = Bar::spinner("validating");
    let res = validate_file(&a.path, &opts);
    spin.finish();
    let report = match res {
        Ok(r) => r,
        Err(e) => {
            if a.json {
                let v = serde_json::json!({
                    "file": a.path.display().to_string(),
                    "status": "unreadable",
                    "error": e.to_string(),
                });
                out::println(&v.to_string());
            } else {
                eprintln!("error: cannot read {} as hdf5: {e}", a.path.display());
            }
            return ExitCode::from(EXIT_UNREADABLE);
        }
    };
    if a.json {
        out::println(&report.to_json().to_string());
    } else {
        for f in report.findings() {
            if !out::println(&f.to_string()) {
                break;
            }
        }
        let errors = report.errors().count();
        let warnings = report.findings().filter(|f| f.severity == Severity::Warning).count();
        let verdict = match report.status {
            Status::Conformant => "conformant",
            Status::NonConformant => "non-conformant",
        };
        out::println(&format!("{}: {verdict} ({} tables, {errors} errors, {warnings} warnings)", report.file, report.tables.len()));
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
    /// Points in the point dataset (default 1,000,000; 100,000 with --quick).
    #[arg(long)]
    points: Option<usize>,
    /// Polygons in the polygon dataset (default 200,000; 20,000 with --quick).
    #[arg(long)]
    polygons: Option<usize>,
    /// Query windows, each 0.5° × 0.5° (default 200; 50 with --quick).
    #[arg(long)]
    windows: Option<usize>,
    /// Repetitions of the write and the full read.
    #[arg(long)]
    reps: Option<usize>,
    /// Skip the native FlatGeobuf anchor (cold and warm queries, anchor.json).
    #[arg(long)]
    no_anchor: bool,
    /// Issue #34: read the files of an earlier `marquet bench --out DIR` over HTTP (an
    /// in-process test server) with Marquet, FlatGeobuf's own HTTP reader and h5coro,
    /// instead of generating data; writes DIR/remote.json. Needs the `fgb-http` feature:
    /// `bash scripts/bench-remote.sh`.
    #[arg(long)]
    remote: bool,
    /// With --remote: injected latency per request, milliseconds (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "0,50", requires = "remote")]
    latency_ms: Vec<u64>,
    /// With --remote: the Python with h5coro (default: the test venv's, when it has h5coro).
    #[arg(long, requires = "remote")]
    python: Option<PathBuf>,
    /// With --remote: skip the `marquet query URL` process per window.
    #[arg(long, requires = "remote")]
    no_cli: bool,
    /// Layout experiments; without them the files are what `marquet convert` writes.
    #[command(flatten)]
    layout: LayoutArgs,
}

/// `bench --remote` (issue #34).
#[cfg(feature = "fgb-http")]
fn bench_remote(a: &BenchArgs) -> ExitCode {
    let python = a.python.clone().or_else(|| {
        let py = PathBuf::from(std::env::var("HOME").unwrap_or_default()).join(".cache/marquet/pyvenv/bin/python");
        let ok = std::process::Command::new(&py).args(["-c", "import h5coro.webdriver"]).output().map(|o| o.status.success()).unwrap_or(false);
        ok.then_some(py)
    });
    let cfg = remote_bench::RemoteConfig { dir: a.out.clone(), latencies_ms: a.latency_ms.clone(), windows: a.windows, python, cli: !a.no_cli };
    match remote_bench::run(&cfg) {
        Ok(table) => {
            out::print(&format!("over HTTP, marquet vs flatgeobuf's HttpFgbReader and h5coro (issue #34):\n{table}"));
            ExitCode::SUCCESS
        }
        Err(e) => fail(e),
    }
}

#[cfg(not(feature = "fgb-http"))]
fn bench_remote(_: &BenchArgs) -> ExitCode {
    fail("bench --remote needs the fgb-http feature: bash scripts/bench-remote.sh")
}

fn bench(a: BenchArgs) -> ExitCode {
    use self::bench::{run, BenchConfig};
    if a.remote {
        return bench_remote(&a);
    }
    let mut c = if a.quick { BenchConfig::quick(&a.out) } else { BenchConfig::full(&a.out) };
    c.points = a.points.unwrap_or(c.points);
    c.polygons = a.polygons.unwrap_or(c.polygons);
    c.windows = a.windows.unwrap_or(c.windows);
    c.reps = a.reps.unwrap_or(c.reps);
    c.layout = match a.layout.layout() {
        Ok(l) => l,
        Err(e) => return fail(e),
    };
    match run(&c) {
        Ok(r) => {
            out::print(&r.summary().to_string());
            match self::bench::process_start(&r) {
                Ok(table) => {
                    out::print(&table);
                }
                Err(e) => return fail(e),
            }
            if !a.no_anchor {
                match anchor::run(&c.out_dir, &r) {
                    Ok(table) => {
                        out::print(&format!("query medians per window, marquet vs native flatgeobuf (issue #20):\n{table}"));
                    }
                    Err(e) => return fail(e),
                }
            }
            ExitCode::SUCCESS
        }
        Err(e) => fail(e),
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// The subcommands as `#[derive(Subcommand)]` declared them before their arguments were
    /// deferred: the reference that [`subcommands!`] must print alike.
    #[derive(clap::Parser)]
    #[command(name = "marquet", version, about = "Marquet (HEP002) geospatial tables on H5Col (HEP001) in HDF5")]
    struct Derived {
        #[command(subcommand)]
        command: DerivedCommand,
        /// Seconds to wait for another process's lock on an HDF5 file (HDF5 file locking: one
        /// writer or any number of readers), retrying with backoff (docs/FAULTS.md F5).
        #[arg(long, global = true, value_name = "SECONDS", default_value_t = 10.0)]
        lock_timeout: f64,
    }

    #[derive(clap::Subcommand)]
    enum DerivedCommand {
        /// Check a file against HEP001 §13 and HEP002 §12 (exit 0 conformant, 1 not, 2 unreadable).
        Validate(super::ValidateArgs),
        /// Describe every table: rows, columns with types and stored bytes, geometry columns
        /// (storage form, types, CRS, edges, orientation, BBOX), indexes with their validity.
        ///
        /// Example: `marquet info stations.h5 --json`
        Info(super::InfoArgs),
        /// Print rows of a table, geometries as WKT.
        ///
        /// Example: `marquet dump lakes.h5 --table /lakes --rows 0..10 --format csv`
        Dump(super::DumpArgs),
        /// Convert between GeoParquet, GeoJSON and Marquet HDF5, by file extension.
        ///
        /// Example: `marquet convert countries.parquet countries.h5`
        Convert(super::ConvertArgs),
        /// Rows of a geometry column meeting a window.
        ///
        /// Example: `marquet query lakes.h5 --table /lakes --bbox 0,0,10,10 --stats`
        Query(super::QueryArgs),
        /// Build, drop or list the spatial indexes of the primary geometry column.
        ///
        /// Example: `marquet index lakes.h5 --build block_bbox,packed_rtree`
        Index(super::IndexArgs),
        /// Append the rows of a GeoParquet, GeoJSON or Marquet file to a table, maintaining
        /// its summaries and indexes.
        ///
        /// Example: `marquet append cities.h5 --table /cities --from more.parquet`
        Append(super::append::AppendArgs),
        /// The main job on bundled Natural Earth data: import, index, query, validate, export,
        /// and an SVG map of the query window.
        Demo(super::DemoArgs),
        /// The Marquet side of the cross-format comparison: generate the seeded
        /// data, write it in raw form for benches/compare/compare.py, measure Marquet.
        ///
        /// The whole comparison: `bash scripts/bench-compare.sh [--quick]`
        Bench(super::BenchArgs),
    }

    /// Every help text — the command's, and each subcommand's short and long help — is the
    /// derive's, byte for byte; and a parsed command line gives the same arguments.
    #[test]
    fn deferred_subcommands_print_and_parse_as_the_derive_did() {
        let (mut ours, mut theirs) = (super::Cli::command(), Derived::command());
        assert_eq!(ours.render_long_help().to_string(), theirs.render_long_help().to_string());
        assert_eq!(ours.render_help().to_string(), theirs.render_help().to_string());
        let names: Vec<String> = theirs.get_subcommands().map(|c| c.get_name().to_string()).collect();
        assert_eq!(names.len(), 10, "{names:?}: nine and `help`");
        for n in &names {
            let (mut a, mut b) = (ours.clone(), theirs.clone());
            a.build();
            b.build();
            let (a, b) = (a.find_subcommand_mut(n).unwrap(), b.find_subcommand_mut(n).unwrap());
            assert_eq!(a.render_long_help().to_string(), b.render_long_help().to_string(), "{n} --help");
            assert_eq!(a.render_help().to_string(), b.render_help().to_string(), "{n} -h");
            assert!(n == "help" || a.get_arguments().count() > 2, "{n}: its arguments were built");
        }
        let line = ["marquet", "--lock-timeout", "3", "query", "x.h5", "--bbox", "0,0,1,1", "--count"];
        let cli = <super::Cli as clap::Parser>::try_parse_from(line).unwrap();
        assert_eq!(cli.lock_timeout, 3.0);
        let super::Command::Query(q) = cli.command else { panic!("not the query subcommand") };
        assert!(q.count && q.bbox.as_deref() == Some("0,0,1,1"));
        let err = <super::Cli as clap::Parser>::try_parse_from(["marquet", "qurey"]).err().unwrap();
        let want = <Derived as clap::Parser>::try_parse_from(["marquet", "qurey"]).err().unwrap();
        assert_eq!(err.to_string(), want.to_string());
    }
}
