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

use std::path::Path;

use crate::error::{MarquetError, Result};
use crate::h5::objects::{LibObjects, Objects};
use crate::h5::pure::PureFile;
use crate::marquet::facts::TableView;
use crate::marquet::snapshot::ColumnSnapshot;
use crate::marquet::MarquetTable;

use super::{Query, QueryResult};

/// Where a reader reads: through libhdf5 (a table opened by the caller) or by byte range.
enum Source {
    Lib(MarquetTable),
    Pure { file: PureFile, table: String },
}

/// A geometry column opened once for many spatial queries (see the module documentation).
pub struct SpatialReader {
    src: Source,
    interpretable: bool,
    column: String,
    snap: ColumnSnapshot,
    /// Queries answered since the reader was opened or last refreshed.
    queries: u64,
}

impl std::fmt::Debug for SpatialReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SpatialReader").field("column", &self.snap.info.path).field("path", &self.read_path()).field("queries", &self.queries).finish()
    }
}

fn view<'a>(src: &'a Source, lib: &'a mut Option<LibObjects>, interpretable: bool) -> TableView<'a> {
    match src {
        Source::Lib(t) => {
            let o: &'a LibObjects = lib.insert(LibObjects(t.table().id()));
            TableView::of(o as &dyn Objects, t.path(), t.is_interpretable())
        }
        Source::Pure { file, table } => TableView::of(file as &dyn Objects, table, interpretable),
    }
}

impl SpatialReader {
    /// A reader of geometry column `column` of `table` (`None`: the primary geometry
    /// column), reading through libhdf5. The reader keeps the table open.
    pub fn new(table: MarquetTable, column: Option<&str>) -> Result<SpatialReader> {
        let column = match column {
            Some(c) => c.to_string(),
            None => table.primary_geometry_column()?,
        };
        let interpretable = table.is_interpretable();
        let src = Source::Lib(table);
        let snap = ColumnSnapshot::open(&view(&src, &mut None, interpretable), &column)?;
        Ok(SpatialReader { src, interpretable, column, snap, queries: 0 })
    }

    /// Open table `table` of `file` and a reader of its geometry column `column`
    /// (`None`: the primary one), reading through libhdf5.
    pub fn open(file: &crate::marquet::File, table: &str, column: Option<&str>) -> Result<SpatialReader> {
        SpatialReader::new(MarquetTable::open(file, table)?, column)
    }

    /// Open table `table` of the file at `path` and a reader of its geometry column
    /// `column` (`None`: the primary one) on the byte-range read path (issue #33): no
    /// libhdf5 call at all, so opening costs the bytes it reads. A table the byte-range
    /// path does not read (a datatype conversion, a filter it does not decode — see
    /// `crate::h5::pure`) is opened through libhdf5 instead, at open or at the first
    /// query that meets it; answers are the same either way.
    pub fn open_path(path: &Path, table: &str, column: Option<&str>) -> Result<SpatialReader> {
        match SpatialReader::open_byte_range(path, table, column) {
            Err(MarquetError::Unsupported(_)) => SpatialReader::open_lib(path, table, column),
            r => r,
        }
    }

    /// [`SpatialReader::open_path`] without its fallback: the byte-range read path only,
    /// refusing with [`MarquetError::Unsupported`] what that path does not read (for
    /// tests and benchmarks that must know which path answered).
    pub fn open_byte_range(path: &Path, table: &str, column: Option<&str>) -> Result<SpatialReader> {
        let file = PureFile::open(path)?;
        let (interpretable, column) = {
            let tv = TableView::open(&file, table)?;
            let column = match column {
                Some(c) => c.to_string(),
                None => tv
                    .geometry_column_names()?
                    .into_iter()
                    .next()
                    .ok_or_else(|| MarquetError::spec(table, "HEP002 §5.2", "table has no geometry columns"))?,
            };
            (tv.is_interpretable(), column)
        };
        let src = Source::Pure { file, table: table.to_string() };
        let snap = ColumnSnapshot::open(&view(&src, &mut None, interpretable), &column)?;
        Ok(SpatialReader { src, interpretable, column, snap, queries: 0 })
    }

    fn open_lib(path: &Path, table: &str, column: Option<&str>) -> Result<SpatialReader> {
        let f = crate::marquet::File::open(path)?;
        SpatialReader::open(&f, table, column)
    }

    /// Which read path the reader uses: `"byte-range"` or `"libhdf5"`.
    pub fn read_path(&self) -> &'static str {
        match self.src {
            Source::Lib(_) => "libhdf5",
            Source::Pure { .. } => "byte-range",
        }
    }

    /// The geometry column's name.
    pub fn column(&self) -> &str {
        &self.column
    }

    /// The table the reader queries, when it reads through libhdf5 (`None` on the
    /// byte-range path).
    pub fn table(&self) -> Option<&MarquetTable> {
        match &self.src {
            Source::Lib(t) => Some(t),
            Source::Pure { .. } => None,
        }
    }

    /// NROWS when the reader was opened (or last refreshed).
    pub fn nrows(&self) -> u64 {
        self.snap.nrows
    }

    /// Forget everything read and read the column's metadata again (after another process
    /// changed the file; changes through this process are seen without it).
    pub fn refresh(&mut self) -> Result<()> {
        if let Source::Pure { file, table } = &self.src {
            // The parser's view of the file is the one it opened: open it again.
            let path = std::path::PathBuf::from(file.name());
            self.src = Source::Pure { file: PureFile::open(&path)?, table: table.clone() };
        }
        self.snap = ColumnSnapshot::open(&view(&self.src, &mut None, self.interpretable), &self.column)?;
        self.queries = 0;
        Ok(())
    }

    /// Answer one query (see [`crate::query`] for its semantics); rows ascending.
    pub fn query(&mut self, q: &Query) -> Result<QueryResult> {
        if !self.snap.is_current() {
            self.refresh()?;
        }
        self.queries += 1;
        let mut lib = None;
        let r = super::layers::run(&view(&self.src, &mut lib, self.interpretable), &mut self.snap, q);
        match (r, &self.src) {
            // An index or dataset the byte-range path does not read: the whole reader moves
            // to libhdf5 and answers from there.
            (Err(MarquetError::Unsupported(_)), Source::Pure { file, table }) => {
                let path = std::path::PathBuf::from(file.name());
                *self = SpatialReader::open_lib(&path, &table.clone(), Some(&self.column.clone()))?;
                self.query(q)
            }
            (r, _) => r,
        }
    }
}

/// Paths of every H5Col table group in the file at `path` (CLASS = COLUMN_TABLE, HEP001
/// §1.3), found on the byte-range read path: what [`crate::h5col::File::tables`] finds.
pub fn table_paths(path: &Path) -> Result<Vec<String>> {
    let file = PureFile::open(path)?;
    let mut out = Vec::new();
    let mut todo = vec![("/".to_string(), 0usize)];
    while let Some((g, depth)) = todo.pop() {
        if crate::marquet::facts::read_token(&file, &g, crate::spec::names::CLASS)?.as_deref() == Some(crate::spec::names::COLUMN_TABLE) {
            out.push(g.clone());
        }
        if depth >= 64 {
            continue;
        }
        let mut kids = file.child_groups(&g)?;
        kids.reverse();
        for k in kids {
            todo.push((if g == "/" { format!("/{k}") } else { format!("{g}/{k}") }, depth + 1));
        }
    }
    Ok(out)
}

impl SpatialReader {
    /// [`TableQuery::query_where`](crate::query::TableQuery::query_where) through the reader
    /// (attribute filters read through libhdf5: a byte-range reader opens the file there
    /// for them).
    pub fn query_where(&mut self, q: &Query, filters: &[(String, crate::h5col::predicate::ColumnFilter)]) -> Result<super::CombinedResult> {
        if filters.is_empty() {
            return super::combine(None, || self.query(q));
        }
        if let Source::Pure { file, table } = &self.src {
            let path = std::path::PathBuf::from(file.name());
            *self = SpatialReader::open_lib(&path, &table.clone(), Some(&self.column.clone()))?;
        }
        let Source::Lib(t) = &self.src else { unreachable!("the reader reads through libhdf5 here") };
        let attributes = super::attribute_rows(t, q, filters)?;
        super::combine(attributes, || self.query(q))
    }
}
