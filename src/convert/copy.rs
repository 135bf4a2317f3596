//! Copying a table between HDF5 files (issue #32): `marquet convert a.h5 b.h5 --table /t`.
//!
//! A Marquet or H5Col table is copied as stored — every column dataset with its chunking,
//! filters and fill value, every attribute (`BBOX`, `GEOMETRY_TYPES`, CRS, the validity
//! tokens of its indexes), and every index below it — with one `H5Ocopy` of the table group
//! ([`File::copy_tables_from`], the step that publishes a staged conversion). Object
//! references expand: a reference to an object inside the table points at that object's
//! copy in the new file; one to an object outside the table is copied with it (HEP001's
//! references never leave the file they are in). Nothing is decoded or re-encoded, so the
//! layout options of an import (order, indexes, coverings) do not apply: the copy keeps the
//! source's.
//!
//! [`super::convert`] runs the copy like every conversion into HDF5 (docs/FAULTS.md F2):
//! into a staging file that then becomes the new output (a rename) or whose table is
//! copied into an existing output (one more `H5Ocopy`); a failure leaves the output as it
//! was. An existing table of that name in the output is refused before any work.

use std::path::Path;

use super::hub::tables::single_table_of;
use crate::error::{MarquetError, Result};
use crate::h5col::{normalize_table_path, File};

/// What an HDF5-to-HDF5 [`convert`](super::convert) copied.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CopyReport {
    /// The table's path, the same in both files.
    pub table: String,
    /// Its rows (`NROWS`).
    pub rows: u64,
    /// Is it a Marquet table (else an H5Col table)?
    pub marquet: bool,
}

impl std::fmt::Display for CopyReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = if self.marquet { "Marquet" } else { "H5Col" };
        writeln!(f, "copied {kind} table {} ({} rows) with its layout and indexes", self.table, self.rows)
    }
}

/// The table of `input` to copy: `table` (`ConvertOptions::table`), or the file's only
/// table (a Marquet table when there are several tables and one of them is).
fn source_table(src: &File, table: Option<&str>) -> Result<String> {
    if let Some(t) = table {
        let t = normalize_table_path(t);
        src.table(&t).map_err(|e| match e {
            MarquetError::NotATable { path, reason } => MarquetError::NotATable { path: format!("{}: {path}", src.filename()), reason },
            e => e,
        })?;
        return Ok(t);
    }
    let all = src.tables()?;
    if all.len() == 1 {
        return Ok(all[0].clone());
    }
    single_table_of(src).map_err(|e| match e {
        MarquetError::InvalidArgument(_) if !all.is_empty() => MarquetError::InvalidArgument(format!(
            "{}: several tables ({}); choose the one to copy with --table (Rust: ConvertOptions::table)",
            src.filename(),
            all.join(", ")
        )),
        MarquetError::InvalidArgument(_) => MarquetError::InvalidArgument(format!("{}: no H5Col or Marquet table in the file", src.filename())),
        e => e,
    })
}

/// Copy `table` (or the only table) of the HDF5 file `input` into the new HDF5 file
/// `output` (the staging file of [`super::convert`]), as described in the module
/// documentation; `output` is removed again when the copy fails.
pub(crate) fn copy_table(input: &Path, output: &Path, table: Option<&str>) -> Result<CopyReport> {
    let src = File::open(input)?;
    let table = source_table(&src, table)?;
    let marquet = crate::marquet::is_marquet_table(&src.table(&table)?)?;
    let dst = File::create(output)?;
    let res = dst.copy_tables_from(&src, std::slice::from_ref(&table)).and_then(|()| dst.table(&table)?.nrows());
    drop(dst);
    match res {
        Ok(rows) => Ok(CopyReport { table, rows, marquet }),
        Err(e) => {
            let _ = std::fs::remove_file(output);
            Err(e)
        }
    }
}
