//! The conformance validator: every numbered consistency requirement of HEP001 §13 and
//! HEP002 §12, plus the MUSTs HEP001 states outside §13 (CLASS, VERSION, fill values,
//! `H5T_STD_REF`, self-containment), one function per requirement.
//!
//! [`validate_file`] checks every table group of a file (or the one named in
//! [`Options::table`]) and returns a [`Report`] of [`Finding`]s. Reading problems inside a
//! table become findings that name the HDF5 object; only a file that cannot be opened as
//! HDF5 at all is an `Err`.
//!
//! Memory is bounded: columns are streamed in runs of [`DEFAULT_BATCH_ROWS`] rows (list
//! columns: a run of `OFFSETS` and the matching `VALUES` bytes), never read whole. The one
//! exception is a `PACKED_RTREE` index that passes its validity check, whose entries are
//! read whole for [`crate::spatial::packed_rtree::verify`] (40 bytes per entry).
//!
//! Severity: lenient-only forms that a consumer accepts but a producer must not write
//! (ruling R3: a variable-length `CLASS`, a `NROWS` narrower than 64 bits, a GEOMETRY_TYPES
//! enumeration with another base) are warnings; with [`Options::strict`] warnings also make
//! the file non-conformant.
//!
//! # Example
//!
//! A table written by this library is conformant; a group that claims `MARQUET_VERSION`
//! without `GEOMETRY_COLUMNS` is not (HEP002 §12 requirement 2):
//!
//! ```
//! use marquet::h5col::File;
//! use marquet::{GeoBatch, GeometryColumnSpec, GeometryValues, Table, StorageForm};
//! use marquet::spec::names;
//! use marquet::validate::{validate_file, Options, Status};
//! use marquet::Dimensions;
//!
//! let path = std::env::temp_dir().join(format!("marquet-doc-validate-{}.h5", std::process::id()));
//! {
//!     let file = File::create(&path)?;
//!     let mut t = Table::create(&file, "/stations")?;
//!     let form = StorageForm::Point { dims: Dimensions::Xy, f32: false };
//!     t.add_geometry_column("location", &GeometryColumnSpec::default().with_form(form))?;
//!     let pts = GeometryValues::Points { dims: Dimensions::Xy, x: vec![-88.2434, 2.3522], y: vec![40.1164, 48.8566], z: None, m: None, valid: None };
//!     t.append(&GeoBatch::new().with_geometry("location", pts))?;
//!     // A bare H5Col table that wrongly carries Marquet's marker attribute.
//!     file.create_table("/impostor")?.set_text_attr(names::MARQUET_VERSION, "1.0")?;
//! }
//! let good = validate_file(&path, &Options { table: Some("/stations".into()), ..Options::default() })?;
//! assert_eq!(good.status, Status::Conformant);
//! assert_eq!(good.errors().count(), 0);
//!
//! let all = validate_file(&path, &Options::default())?;
//! assert_eq!(all.status, Status::NonConformant);
//! let bad: Vec<_> = all.errors().map(|f| (f.path.as_str(), f.rule)).collect();
//! assert_eq!(bad, vec![("/impostor", "HEP002 §12 req 2")]);
//! std::fs::remove_file(&path).ok();
//! # Ok::<(), marquet::Error>(())
//! ```

internal_mod! {
    checks;
    full;
    indexes;
}
mod geodesic_check;
mod h5col_checks;
mod marquet_checks;
mod read;
mod rows;

use std::collections::{BTreeSet, HashMap};
use std::fmt;

use crate::error::{MarquetError, Result};
use crate::h5;

pub use checks::Check;
/// Every registered sub-check of the validator (each error [`Finding`] names one).
pub use checks::ALL as CHECKS;
/// The registered sub-check with identifier `id` (e.g. `"m14-bbox-contains"`).
pub use checks::by_id as check_by_id;
pub use indexes::{verify_indexes, IndexCheck, IndexVerdict};


/// Rows read at a time from a column (and `OFFSETS` entries from a list column).
pub const DEFAULT_BATCH_ROWS: u64 = 65_536;
/// Largest run of `VALUES` bytes read at once (a run is shortened to stay below it).
pub const DEFAULT_BATCH_BYTES: u64 = 64 << 20;
/// Per-row findings reported for one rule and object before the rest are only counted.
pub const DEFAULT_MAX_ROW_FINDINGS: usize = 20;
/// Tolerance for box containment in a geographic CRS, in degrees (ruling R8).
pub const GEOGRAPHIC_TOLERANCE: f64 = 1e-9;

/// What to validate and how strictly.
#[derive(Debug, Clone)]
pub struct Options {
    /// Validate only the table group at this path (else every table group in the file).
    pub table: Option<String>,
    /// Count warnings (lenient-only forms, R3) as non-conformance.
    pub strict: bool,
    /// Per-row findings kept per rule and object ([`DEFAULT_MAX_ROW_FINDINGS`]).
    pub max_row_findings: usize,
    /// Rows per streamed batch ([`DEFAULT_BATCH_ROWS`]).
    pub batch_rows: u64,
    /// Also read every element of every dataset below each table group, so that every
    /// chunk is decompressed and checksummed (`marquet validate --full`; `full`).
    pub full: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options { table: None, strict: false, max_row_findings: DEFAULT_MAX_ROW_FINDINGS, batch_rows: DEFAULT_BATCH_ROWS, full: false }
    }
}

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// The table is not conformant.
    Error,
    /// Accepted by a lenient reader (R3) or not checked; non-conformant only with `strict`.
    Warning,
}

impl Severity {
    /// `"error"` or `"warning"`, as printed in reports.
    pub fn as_str(&self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// One problem found in a table.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// Whether the finding makes the table non-conformant.
    pub severity: Severity,
    /// The requirement, e.g. `"HEP002 §12 req 14"` or `"HEP001 §13 req 3"`.
    pub rule: &'static str,
    /// The HDF5 object concerned.
    pub path: String,
    /// The row, for data-dependent findings.
    pub row: Option<u64>,
    /// Lowercase: what was found and what was expected.
    pub message: String,
    /// The registered sub-check ([`checks::ALL`]) an error comes from: its
    /// [`Check::id`], `"unreadable"` for an object that could not be read; `None` for
    /// warnings.
    pub check: Option<&'static str>,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}: {}", self.severity.as_str(), self.rule, self.path)?;
        if let Some(r) = self.row {
            write!(f, " row {r}")?;
        }
        write!(f, ": {}", self.message)
    }
}

/// The findings of one table group.
#[derive(Debug, Clone, PartialEq)]
pub struct TableReport {
    /// HDF5 path of the table group.
    pub path: String,
    /// Carries `MARQUET_VERSION` (and was checked against HEP002).
    pub is_marquet: bool,
    /// Every finding, errors and warnings, in the order the checks ran.
    pub findings: Vec<Finding>,
}

/// The overall verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// No error (and, with [`Options::strict`], no warning) in any table.
    Conformant,
    /// At least one error (or, with [`Options::strict`], a warning), or no table found.
    NonConformant,
}

/// The result of [`validate_file`].
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// The file validated, as given.
    pub file: String,
    /// One report per table group checked.
    pub tables: Vec<TableReport>,
    /// The verdict over all tables.
    pub status: Status,
}

impl Report {
    /// Every finding of every table.
    pub fn findings(&self) -> impl Iterator<Item = &Finding> {
        self.tables.iter().flat_map(|t| t.findings.iter())
    }
    /// The findings of severity error.
    pub fn errors(&self) -> impl Iterator<Item = &Finding> {
        self.findings().filter(|f| f.severity == Severity::Error)
    }
    /// The set of rules with at least one error.
    pub fn error_rules(&self) -> BTreeSet<&'static str> {
        self.errors().map(|f| f.rule).collect()
    }
    /// The set of sub-checks ([`Check::id`]) with at least one error.
    pub fn error_checks(&self) -> BTreeSet<&'static str> {
        self.errors().filter_map(|f| f.check).collect()
    }
    /// A machine-readable form (the CLI's `--json`).
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::json;
        let tables: Vec<_> = self
            .tables
            .iter()
            .map(|t| {
                let findings: Vec<_> = t
                    .findings
                    .iter()
                    .map(|f| {
                        json!({
                            "severity": f.severity.as_str(),
                            "rule": f.rule,
                            "check": f.check,
                            "path": f.path,
                            "row": f.row,
                            "message": f.message,
                        })
                    })
                    .collect();
                json!({ "path": t.path, "is_marquet": t.is_marquet, "findings": findings })
            })
            .collect();
        json!({
            "file": self.file,
            "status": match self.status { Status::Conformant => "conformant", Status::NonConformant => "non-conformant" },
            "errors": self.errors().count(),
            "warnings": self.findings().filter(|f| f.severity == Severity::Warning).count(),
            "tables": tables,
        })
    }
}

/// Validate the table groups of the HDF5 file at `path`. `Err` only when the file cannot
/// be opened as HDF5; everything else is a finding.
pub fn validate_file(path: impl AsRef<std::path::Path>, opts: &Options) -> Result<Report> {
    let p = path.as_ref().display().to_string();
    // Names a FIFO, directory or device as such, and never blocks on a FIFO (issue #19).
    crate::error::check_regular_file(path.as_ref())?;
    let file = h5::file_open(path.as_ref(), false)?;
    let mut tables = Vec::new();
    match &opts.table {
        Some(t) => {
            let norm = if t.starts_with('/') { t.clone() } else { format!("/{t}") };
            tables.push(validate_table(&file, &norm, opts));
        }
        None => {
            let mut found = Vec::new();
            let mut unreadable = Vec::new();
            let root = file.group("/").map_err(|e| MarquetError::hdf5(&p, e))?;
            find_tables(&root, "/", &mut found, &mut unreadable, 0);
            // An object HDF5 cannot open may be a table group (a full disk or a kill inside
            // H5Fflush can leave an object header pointing past the end of the file, local
            // ruling L9): name it with HDF5's reason rather than report "no table group".
            for (path, why) in unreadable {
                tables.push(TableReport {
                    path: path.clone(),
                    is_marquet: false,
                    findings: vec![Finding {
                        severity: Severity::Error,
                        rule: checks::H_TABLE_GROUP.rule,
                        path,
                        row: None,
                        message: format!("cannot open the object (the file is damaged; it may be a table group): {}", lower(&why)),
                        check: Some(checks::H_TABLE_GROUP.id),
                    }],
                });
            }
            if found.is_empty() && tables.is_empty() {
                tables.push(TableReport {
                    path: "/".into(),
                    is_marquet: false,
                    findings: vec![Finding {
                        severity: Severity::Error,
                        rule: checks::H_TABLE_GROUP.rule,
                        path: "/".into(),
                        row: None,
                        message: "no table group (a group with class \"COLUMN_TABLE\") found in the file".into(),
                        check: Some(checks::H_TABLE_GROUP.id),
                    }],
                });
            }
            for t in found {
                tables.push(validate_table(&file, &t, opts));
            }
        }
    }
    // An in-place update that did not finish (docs/FAULTS.md F10): the table may hold a
    // partial update until the next writer writes the saved rows back.
    for (table, record) in crate::h5col::undo::pending(path.as_ref()) {
        let i = tables.iter().position(|t| t.path == table).unwrap_or(0);
        if let Some(t) = tables.get_mut(i) {
            t.findings.push(Finding {
                severity: Severity::Warning,
                rule: "HEP001 §12.6",
                path: table.clone(),
                row: None,
                message: format!(
                    "an in-place update did not finish; its undo record {} is written back by the next read-write open (docs/FAULTS.md F10)",
                    record.display()
                ),
                check: None,
            });
        }
    }
    if opts.full {
        for t in tables.iter_mut().filter(|t| t.path != "/" || crate::h5col::is_table_group(file.id()).unwrap_or(false)) {
            full::read_everything(&file, &t.path, &mut t.findings);
        }
    }
    let bad = tables
        .iter()
        .flat_map(|t| t.findings.iter())
        .any(|f| f.severity == Severity::Error || (opts.strict && f.severity == Severity::Warning));
    Ok(Report { file: p, tables, status: if bad { Status::NonConformant } else { Status::Conformant } })
}

/// Depth-first search for table groups (HEP001 §1.3: discovery is a traversal). Table
/// groups are not searched further (a table inside a table is a stray object, reported by
/// the self-containment check).
/// The table groups below `g` into `out`; members HDF5 cannot open (their path and HDF5's
/// message) into `unreadable`.
fn find_tables(g: &hdf5::Group, path: &str, out: &mut Vec<String>, unreadable: &mut Vec<(String, String)>, depth: usize) {
    if depth > 64 {
        return;
    }
    if crate::h5col::is_table_group(g.id()).unwrap_or(false) {
        out.push(path.to_string());
        return;
    }
    // Follow hard links to groups only (soft and external links are not opened); a hard
    // link whose object HDF5 cannot open is reported.
    let mut groups = Vec::new();
    let walked = g.iter_visit_default(|name, info| {
        if info.link_type == hdf5::LinkType::Hard {
            match g.loc_type_by_name(name) {
                Ok(hdf5::LocationType::Group) => groups.push(name.to_string()),
                Ok(_) => {}
                Err(e) => unreadable.push((child_path(path, name), e.to_string())),
            }
        }
        Ok(())
    });
    if let Err(e) = walked {
        unreadable.push((path.to_string(), e.to_string()));
    }
    for n in groups {
        let p = child_path(path, &n);
        match g.group(&n) {
            Ok(child) => find_tables(&child, &p, out, unreadable, depth + 1),
            Err(e) => unreadable.push((p, e.to_string())),
        }
    }
}

fn child_path(path: &str, name: &str) -> String {
    if path == "/" {
        format!("/{name}")
    } else {
        format!("{path}/{name}")
    }
}

/// Collects findings, capping per-row findings per (sub-check, object).
pub(crate) struct Sink {
    findings: Vec<Finding>,
    row_counts: HashMap<(&'static str, String), (usize, &'static str)>,
    max_rows: usize,
}

impl Sink {
    fn new(max_rows: usize) -> Sink {
        Sink { findings: Vec::new(), row_counts: HashMap::new(), max_rows: max_rows.max(1) }
    }
    /// An error of sub-check `c`.
    pub(crate) fn error(&mut self, c: Check, path: &str, message: impl Into<String>) {
        self.push(Severity::Error, c.rule, Some(c.id), path, None, message.into());
    }
    /// An object the checks of `rule` need could not be read (sub-check
    /// [`checks::UNREADABLE`]).
    pub(crate) fn unreadable(&mut self, rule: &'static str, path: &str, message: impl Into<String>) {
        self.push(Severity::Error, rule, Some(checks::UNREADABLE.id), path, None, message.into());
    }
    pub(crate) fn warn(&mut self, rule: &'static str, path: &str, message: impl Into<String>) {
        self.push(Severity::Warning, rule, None, path, None, message.into());
    }
    /// A per-row error of sub-check `c`; after `max_rows` for the same sub-check and object
    /// only counted.
    pub(crate) fn row_error(&mut self, c: Check, path: &str, row: u64, message: impl Into<String>) {
        let n = self.row_counts.entry((c.id, path.to_string())).or_insert((0, c.rule));
        n.0 += 1;
        if n.0 <= self.max_rows {
            self.push(Severity::Error, c.rule, Some(c.id), path, Some(row), message.into());
        }
    }
    fn push(&mut self, severity: Severity, rule: &'static str, check: Option<&'static str>, path: &str, row: Option<u64>, message: String) {
        self.findings.push(Finding { severity, rule, path: path.to_string(), row, message, check });
    }
    /// Add "n more rows" summaries for capped per-row findings.
    fn finish(mut self) -> Vec<Finding> {
        let mut extra: Vec<_> = self.row_counts.iter().filter(|(_, n)| n.0 > self.max_rows).map(|(k, n)| (k.clone(), *n)).collect();
        extra.sort();
        for ((id, path), (n, rule)) in extra {
            self.findings.push(Finding {
                severity: Severity::Error,
                rule,
                path,
                row: None,
                message: format!("{} more rows with the same problem not listed", n - self.max_rows),
                check: Some(id),
            });
        }
        self.findings
    }
}

/// How a column of the table is stored (HEP001 §8.2).
#[derive(Debug, Clone)]
pub(crate) enum ColumnObj {
    Dataset(h5::DatasetInfo),
    List,
}

/// A discovered column.
#[derive(Debug, Clone)]
pub(crate) struct Col {
    pub name: String,
    pub path: String,
    pub obj: ColumnObj,
}

/// What the checks of one table share.
pub(crate) struct Ctx<'a> {
    pub grp: hdf5::Group,
    pub path: String,
    pub opts: &'a Options,
    pub sink: Sink,
    /// `NROWS` when readable.
    pub nrows: Option<u64>,
    pub generation: Option<u64>,
    pub columns: Vec<Col>,
    pub is_marquet: bool,
    /// (index dataset path, column name) for every `SEARCH_INDEX_LIST` element that resolves.
    pub index_links: Vec<(String, String)>,
    /// Named datatypes below the table group whose type HEP002 defines (req 17, Marquet only).
    pub named_marquet_types: Vec<String>,
    pub tolerance_geographic: f64,
}

impl Ctx<'_> {
    pub(crate) fn id(&self) -> hdf5_sys::h5i::hid_t {
        self.grp.id()
    }
    pub(crate) fn member_path(&self, name: &str) -> String {
        if self.path == "/" {
            format!("/{name}")
        } else {
            format!("{}/{name}", self.path)
        }
    }
    pub(crate) fn column(&self, name: &str) -> Option<&Col> {
        self.columns.iter().find(|c| c.name == name)
    }
    /// The column whose path is `p` (an absolute path from a reference).
    pub(crate) fn column_by_path(&self, p: &str) -> Option<&Col> {
        self.columns.iter().find(|c| c.path == p)
    }
}

fn validate_table(file: &hdf5::File, path: &str, opts: &Options) -> TableReport {
    let mut sink = Sink::new(opts.max_row_findings);
    let grp = match file.group(path) {
        Ok(g) => g,
        Err(e) => {
            sink.error(checks::H_TABLE_GROUP, path, format!("cannot open the table group: {}", lower(&e.to_string())));
            return TableReport { path: path.into(), is_marquet: false, findings: sink.finish() };
        }
    };
    if !crate::h5col::is_table_group(grp.id()).unwrap_or(false) {
        sink.error(checks::H_TABLE_GROUP, path, "not a table group: no class attribute equal to \"COLUMN_TABLE\"");
        return TableReport { path: path.into(), is_marquet: false, findings: sink.finish() };
    }
    let mut ctx = Ctx {
        grp,
        path: path.to_string(),
        opts,
        sink,
        nrows: None,
        generation: None,
        columns: Vec::new(),
        is_marquet: false,
        index_links: Vec::new(),
        named_marquet_types: Vec::new(),
        tolerance_geographic: GEOGRAPHIC_TOLERANCE,
    };
    h5col_checks::run(&mut ctx);
    marquet_checks::run(&mut ctx);
    TableReport { path: ctx.path.clone(), is_marquet: ctx.is_marquet, findings: ctx.sink.finish() }
}

/// Lowercase an error message's first letter(s) for the finding style.
pub(crate) fn lower(s: &str) -> String {
    let s = s.lines().next().unwrap_or("").trim();
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_lowercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

/// Turn a reading error into a message naming what failed.
pub(crate) fn read_err(e: &MarquetError) -> String {
    format!("cannot read: {}", lower(&e.to_string()))
}

pub(crate) use crate::spec::names as n;
