//! Verifying a geometry column's spatial indexes against its geometries (the
//! `marquet index --verify` command): the validator's HEP002 §12 req 16 checks, narrowed to
//! the `BLOCK_BBOX` and `PACKED_RTREE` datasets of one column.

use std::path::Path;

use super::{validate_file, Finding, Options, Severity};
use crate::error::Result;
use crate::h5col::File;
use crate::marquet::MarquetTable;

/// The verdict on one index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexVerdict {
    /// Valid tokens (HEP001 §12.2) and every entry agrees with the geometries.
    Matches,
    /// The validity tokens do not match the table: readers ignore it; its content is not
    /// checked. `marquet index --build` rebuilds it.
    Stale,
    /// Valid tokens but content that disagrees with the geometries or the layout rules.
    Mismatch,
    /// Valid tokens, but rows of the column could not be read, so the content is unverified.
    Unverified,
}

impl IndexVerdict {
    /// Lowercase name, as printed by the CLI.
    pub fn as_str(&self) -> &'static str {
        match self {
            IndexVerdict::Matches => "matches",
            IndexVerdict::Stale => "stale",
            IndexVerdict::Mismatch => "mismatch",
            IndexVerdict::Unverified => "unverified",
        }
    }
}

/// One index of a column and what verification found.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexCheck {
    /// Absolute HDF5 path of the index dataset.
    pub path: String,
    /// `BLOCK_BBOX` or `PACKED_RTREE`.
    pub kind: &'static str,
    /// What verification concluded.
    pub verdict: IndexVerdict,
    /// The validator's findings about this dataset.
    pub findings: Vec<Finding>,
}

/// Verify every Marquet spatial index of geometry column `column` of table `table` in the
/// HDF5 file at `path` against the column's rows. Streams the column like the validator
/// (bounded memory, an R-tree's entries read whole). `Err` when the file, table or column
/// cannot be opened.
pub fn verify_indexes(path: &Path, table: &str, column: &str) -> Result<Vec<IndexCheck>> {
    let listed = {
        let f = File::open(path)?;
        let t = MarquetTable::open(&f, table)?;
        t.spatial_indexes(column)?
    };
    if listed.is_empty() {
        return Ok(Vec::new());
    }
    let report = validate_file(path, &Options { table: Some(table.to_string()), ..Options::default() })?;
    Ok(listed
        .into_iter()
        .map(|i| {
            let findings: Vec<Finding> = report.findings().filter(|f| f.path == i.info.path).cloned().collect();
            let verdict = if !i.valid {
                IndexVerdict::Stale
            } else if findings.iter().any(|f| f.severity == Severity::Error) {
                IndexVerdict::Mismatch
            } else if !findings.is_empty() {
                IndexVerdict::Unverified
            } else {
                IndexVerdict::Matches
            };
            IndexCheck { path: i.info.path, kind: i.kind.kind(), verdict, findings }
        })
        .collect())
}
