//! Where an import writes (issue #31): a new table, or rows appended to a table that
//! exists — through the one writer, [`TableWriter`], either way.
//!
//! An importer plans its columns from the source (names, types, storage forms) and defines
//! them on a table. For a new table that is the table itself. For an append it is a
//! *template*: the same table defined in an HDF5 file held in memory
//! ([`File::create_in_memory`]), never on a disk, which is compared with the target
//! ([`MarquetTable::check_append_source`]: the same columns, geometry columns in the same
//! places, the same CRS, every category known) before a row is read; the rows then stream
//! from the source straight into the target's writer. So an append maps a source to
//! columns exactly as `convert` would (a file converted once and appended later lands in
//! the same columns), without the temporary HDF5 file the append used to import into
//! first.

use crate::error::Result;
use crate::h5col::File;
use crate::marquet::append_from::CategoryRecode;
use crate::marquet::{GeoBatch, MarquetTable, RTreeOnAppend, TableWriter, WriteLayout, WriteOptions};
use crate::progress::Progress;

/// Where an import writes.
#[derive(Clone, Copy)]
pub enum ImportTarget<'a> {
    /// A new table, at [`crate::convert::ImportOptions::table`] of this file.
    New(&'a File),
    /// The rows appended to this table, whose R-trees are treated as `rtree` says.
    Append {
        /// The table appended to.
        table: &'a MarquetTable,
        /// What the append does to a valid packed R-tree.
        rtree: RTreeOnAppend,
    },
}

impl std::fmt::Debug for ImportTarget<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ImportTarget::New(file) => write!(f, "New({})", file.filename()),
            ImportTarget::Append { table, rtree } => write!(f, "Append({}, {rtree:?})", table.path()),
        }
    }
}

impl<'a> ImportTarget<'a> {
    /// The table an importer defines its planned columns on: the new table, or a template
    /// in an in-memory file (returned too, to keep it open) for an append.
    pub(crate) fn define(&self, path: &str) -> Result<(Option<File>, MarquetTable)> {
        match self {
            ImportTarget::New(file) => Ok((None, MarquetTable::create(file, path)?)),
            ImportTarget::Append { table, .. } => {
                let mem = File::create_in_memory(&format!("{}:import-plan", self.file_name()?))?;
                let t = MarquetTable::create(&mem, table.path())?;
                Ok((Some(mem), t))
            }
        }
    }

    /// Run the import `f`; when it fails after it created the new table `table`, the table
    /// is removed again, so the file holds what it held before (Python's `write`, the C
    /// ABI's Arrow writer, `import_geoparquet` on an open file). An append needs nothing:
    /// the writer commits all or nothing. A kill still leaves an empty table group, which
    /// is conformant (`convert` stages into a file of its own, docs/FAULTS.md F2).
    pub(crate) fn or_nothing<T>(&self, table: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
        let ImportTarget::New(file) = self else { return f() };
        let path = crate::h5col::normalize_table_path(table);
        let existed = crate::h5::path_exists(file.id(), &path).unwrap_or(true);
        let r = f();
        if r.is_err() && !existed && file.table(&path).is_ok() {
            let _ = file.remove_table(&path);
        }
        r
    }

    /// The name of the file written: the external sort spills next to it.
    pub(crate) fn file_name(&self) -> Result<String> {
        match self {
            ImportTarget::New(f) => Ok(f.filename().to_string()),
            ImportTarget::Append { table, .. } => crate::h5::file_name(table.table().id()),
        }
    }

    /// Does the string rule of a netCDF-4 file apply (text as a list of bytes, local ruling
    /// L17)? For an append the target's columns decide, whatever the template says.
    pub(crate) fn text_as_bytes(&self) -> Result<bool> {
        match self {
            ImportTarget::New(f) => super::plan::text_as_bytes(f),
            ImportTarget::Append { .. } => Ok(false),
        }
    }

    /// The writer of an import whose rows arrive in the order they are to be stored (the
    /// importer sorted them): into the new table `defined`, with `layout`'s indexes built at
    /// the commit; or, after the template `defined` is found to match, into the target.
    pub(crate) fn writer<'t>(&self, defined: &'t MarquetTable, layout: &WriteLayout, rows: Option<u64>, progress: &Progress) -> Result<ImportSink<'t>>
    where
        'a: 't,
    {
        match *self {
            ImportTarget::New(_) => {
                let o = WriteOptions::default().with_spatial_order(false).with_layout(Some(layout.clone())).with_rows_hint(rows).with_progress(progress.clone());
                Ok(ImportSink { w: TableWriter::new(defined, o)?, recode: None })
            }
            ImportTarget::Append { table, rtree } => {
                table.check_append_source(defined)?;
                let recode = CategoryRecode::new(table, defined)?;
                let o = WriteOptions::in_order().with_rtree(rtree).with_rows_hint(rows).with_progress(progress.clone());
                Ok(ImportSink { w: TableWriter::new(table, o)?, recode: Some(recode) })
            }
        }
    }
}

/// An import's rows on their way into the writer.
pub(crate) struct ImportSink<'t> {
    w: TableWriter<'t>,
    recode: Option<CategoryRecode>,
}

impl<'t> ImportSink<'t> {
    /// Stage every batch of `batches` (categorical codes renumbered to the target's, for an
    /// append; [`TableWriter::write_all`]: each staged while the next is prepared).
    pub(crate) fn write_all(&mut self, batches: impl Iterator<Item = Result<GeoBatch>>) -> Result<u64> {
        let recode = &self.recode;
        self.w.write_all(batches.map(|b| recoded(recode, b?)))
    }

    /// Rows staged so far.
    pub(crate) fn staged_rows(&self) -> u64 {
        self.w.staged_rows()
    }

    /// Commit every row at once; returns the table's row count.
    pub(crate) fn finish(self) -> Result<u64> {
        self.w.finish()
    }
}

/// `gb` with its categorical codes renumbered to the target's (an append), as given otherwise.
fn recoded(recode: &Option<CategoryRecode>, mut gb: GeoBatch) -> Result<GeoBatch> {
    if let Some(r) = recode {
        let cols = std::mem::take(&mut gb.columns.columns);
        for (k, v) in cols {
            let v = r.apply(&k, v)?;
            gb.columns.columns.insert(k, v);
        }
    }
    Ok(gb)
}
