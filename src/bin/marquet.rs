//! The `marquet` command: parsing and printing only; the work is in the library.
//!
//! ```text
//! marquet info PATH [--table PATH] [--json]
//! marquet dump PATH [--table PATH] [--rows A..B] [--format wkt|csv]
//! marquet validate PATH [--table PATH] [--json] [--strict]
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
