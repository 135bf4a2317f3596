//! The `marquet` command: parsing and printing only; the work is in the library.
//!
//! ```text
//! marquet validate PATH [--table PATH] [--json] [--strict]
//! ```
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
