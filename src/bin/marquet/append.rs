//! `marquet append`: rows of a GeoParquet, GeoJSON or Marquet file appended to a table
//! through the library's append path ([`marquet::convert::append_file`]).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use marquet::convert::{append_file, AppendOptions};
use marquet::RTreeOnAppend;

use super::bar::Bar;
use super::{fail, pick_table};

#[derive(Args)]
#[command(after_help = "Examples:
  marquet append cities.h5 --table /cities --from more_cities.parquet
  marquet append cities.h5 --from more_cities.geojson --rtree stale --json
  marquet append all.h5 --table /cities --from other.h5 --from-table /cities
  marquet append pts.h5 --from more.csv --lonlat lon,lat       # CSV, plain Parquet, Iceberg

The source must have the same columns as the table (covering columns aside). Block indexes
are extended; packed R-trees are rebuilt (--rtree rebuild, the default) or left stale for a
later `marquet index --build packed_rtree` (--rtree stale). Exit 0 appended, 2 error.")]
pub struct AppendArgs {
    /// The HDF5 file holding the table.
    path: PathBuf,
    /// The table to append to (default: the file's only table).
    #[arg(long)]
    table: Option<String>,
    /// The rows to append: .parquet (GeoParquet, or plain with --geometry), .geojson, .csv,
    /// an Iceberg table directory, or .h5 (a Marquet table).
    #[arg(long)]
    from: PathBuf,
    /// The table to read when --from is an HDF5 file (default: its only Marquet table).
    #[arg(long)]
    from_table: Option<String>,
    /// What happens to valid packed R-trees (HEP002 §10.4).
    #[arg(long, value_parser = ["rebuild", "stale"], default_value = "rebuild")]
    rtree: String,
    /// Print a JSON report.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    lake: super::lake::LakeArgs,
}

pub fn run(a: AppendArgs) -> ExitCode {
    let bar = Bar::rows("append");
    let res = (|| -> Result<marquet::convert::AppendReport, String> {
        let f = marquet::h5col::File::open_rw(&a.path).map_err(|e| e.to_string())?;
        let table = pick_table(&f, a.table.clone())?;
        let opts = AppendOptions {
            lake: a.lake.options()?,
            source_table: a.from_table.clone(),
            rtree: if a.rtree == "stale" { RTreeOnAppend::LeaveStale } else { RTreeOnAppend::Rebuild },
            progress: bar.progress(),
            ..AppendOptions::default()
        };
        append_file(&f, &table, &a.from, &opts).map_err(|e| e.to_string())
    })();
    bar.finish();
    match res {
        Ok(r) => {
            if a.json {
                let v = serde_json::json!({
                    "source": r.source.display().to_string(),
                    "table": r.table,
                    "rows_appended": r.rows,
                    "nrows": r.nrows,
                });
                super::out::println(&v.to_string());
            } else {
                super::out::print(&r.to_string());
            }
            ExitCode::SUCCESS
        }
        Err(e) => fail(e),
    }
}
