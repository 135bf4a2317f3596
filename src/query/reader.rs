//! The warm spatial reader (issue #20): open a table's geometry column once, answer many
//! windows.
//!
//! [`SpatialReader`] holds what every query of [`TableQuery::query`](crate::query::TableQuery::query)
//! otherwise reads again: the column's attributes, NROWS, the index list and its validity
//! tokens, the block index's entries, the R-tree's attributes, the covering column's
//! datatype, and the open geometry, index and covering datasets with their decoded chunks
//! (`src/marquet/snapshot.rs`). After the first windows the R-tree's upper levels and
//! the block boxes are in memory and a query makes HDF5 calls only for chunks it has not
//! seen yet.
//!
//! The answers are the one-shot query's, row for row, layer for layer: both are the one
//! engine (`query/layers.rs`, issue #33) over a snapshot of the column — a one-shot query
//! takes one for itself, the reader holds its own — with the same checks of every index
//! (HEP001 §12.2 tokens, HEP002 §17 structure) and of every range read (HEP001 §9.2), the
//! same semantics (module [`crate::query`]).
//!
//! The reader sees the table as it was when opened. When this process writes through the
//! library in the meantime (any write: an append, an index build, another file), the next
//! query reopens the reader first, so answers stay exact for changes made through this
//! process; [`SpatialReader::refresh`] does so on demand, e.g. after another process
//! changed the file.

use crate::error::Result;
use crate::marquet::snapshot::ColumnSnapshot;
use crate::marquet::MarquetTable;

use super::{Query, QueryResult};

/// A geometry column opened once for many spatial queries (see the module documentation).
pub struct SpatialReader {
    table: MarquetTable,
    column: String,
    snap: ColumnSnapshot,
    /// Queries answered since the reader was opened or last refreshed.
    queries: u64,
}

impl std::fmt::Debug for SpatialReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SpatialReader").field("column", &self.snap.info.path).field("queries", &self.queries).finish()
    }
}

impl SpatialReader {
    /// A reader of geometry column `column` of `table` (`None`: the primary geometry
    /// column). The reader keeps the table open.
    pub fn new(table: MarquetTable, column: Option<&str>) -> Result<SpatialReader> {
        let column = match column {
            Some(c) => c.to_string(),
            None => table.primary_geometry_column()?,
        };
        let snap = ColumnSnapshot::open(&table, &column)?;
        Ok(SpatialReader { table, column, snap, queries: 0 })
    }

    /// Open table `table` of `file` and a reader of its geometry column `column`
    /// (`None`: the primary one).
    pub fn open(file: &crate::marquet::File, table: &str, column: Option<&str>) -> Result<SpatialReader> {
        SpatialReader::new(MarquetTable::open(file, table)?, column)
    }

    /// The geometry column's name.
    pub fn column(&self) -> &str {
        &self.column
    }

    /// The table the reader queries.
    pub fn table(&self) -> &MarquetTable {
        &self.table
    }

    /// NROWS when the reader was opened (or last refreshed).
    pub fn nrows(&self) -> u64 {
        self.snap.nrows
    }

    /// Forget everything read and read the column's metadata again (after another process
    /// changed the file; changes through this process are seen without it).
    pub fn refresh(&mut self) -> Result<()> {
        self.snap = ColumnSnapshot::open(&self.table, &self.column)?;
        self.queries = 0;
        Ok(())
    }

    /// Answer one query (see [`crate::query`] for its semantics); rows ascending.
    pub fn query(&mut self, q: &Query) -> Result<QueryResult> {
        if !self.snap.is_current() {
            self.refresh()?;
        }
        self.queries += 1;
        super::layers::run(&self.table, &mut self.snap, q)
    }
}

impl SpatialReader {
    /// [`TableQuery::query_where`](crate::query::TableQuery::query_where) through the reader.
    pub fn query_where(&mut self, q: &Query, filters: &[(String, crate::h5col::predicate::ColumnFilter)]) -> Result<super::CombinedResult> {
        let attributes = super::attribute_rows(&self.table, q, filters)?;
        super::combine(attributes, || self.query(q))
    }
}
