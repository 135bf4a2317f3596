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

use std::collections::HashMap;
use std::path::Path;

use crate::error::{MarquetError, Result};
use crate::h5::cached::CachedDataset;
use crate::h5::objects::{LibObjects, Objects};
use crate::h5::Dtype;
use crate::h5col::Array;
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

/// Open the file behind a byte-range reader again (a refresh).
fn reopen(file: &PureFile) -> Result<PureFile> {
    #[cfg(feature = "cloud")]
    if let Some(r) = file.remote() {
        return PureFile::open_remote(crate::remote::RemoteFile::open_with(r.url(), r.options())?);
    }
    PureFile::open(Path::new(file.name()))
}

/// A geometry column opened once for many spatial queries (see the module documentation).
pub struct SpatialReader {
    src: Source,
    interpretable: bool,
    column: String,
    snap: ColumnSnapshot,
    /// Attribute columns read by [`SpatialReader::take`], opened on first use, each with
    /// its own cache of decoded chunks.
    attributes: HashMap<String, CachedDataset>,
    /// The table through libhdf5, opened on first use for what a byte-range reader's
    /// [`SpatialReader::take`] does not read (variable-length strings, conversions).
    lib: Option<MarquetTable>,
    /// Queries answered since the reader was opened or last refreshed.
    queries: u64,
}

/// Decoded bytes of one attribute column a reader keeps (its chunks; at least one).
const ATTRIBUTE_CACHE_BYTES: usize = 8 << 20;

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
        Ok(SpatialReader { src, interpretable, column, snap, attributes: HashMap::new(), lib: None, queries: 0 })
    }

    /// Open table `table` of `file` and a reader of its geometry column `column`
    /// (`None`: the primary one), reading through libhdf5.
    pub fn open(file: &crate::marquet::File, table: &str, column: Option<&str>) -> Result<SpatialReader> {
        SpatialReader::new(MarquetTable::open(file, table)?, column)
    }

    /// The reader of geometry column `column` (`None`: the primary one) of table `table`
    /// of an open file that answers fastest with the same answers: on the byte-range read
    /// path ([`SpatialReader::open_path`]) when the file was opened read-only from a path
    /// or URL ([`crate::File::byte_range_source`]), else through libhdf5
    /// ([`SpatialReader::open`]: a file open for writing, one handed over by a caller's
    /// identifier, one in memory). What the shells hold for a table's repeated queries.
    pub fn for_file(file: &crate::marquet::File, table: &str, column: Option<&str>) -> Result<SpatialReader> {
        match file.byte_range_source() {
            Some(p) => SpatialReader::open_path(Path::new(p), &crate::h5col::normalize_table_path(table), column),
            None => SpatialReader::open(file, table, column),
        }
    }

    /// Open table `table` of the file at `path` and a reader of its geometry column
    /// `column` (`None`: the primary one) on the byte-range read path (issue #33): no
    /// libhdf5 call at all, so opening costs the bytes it reads. A table the byte-range
    /// path does not read (a datatype conversion, a filter it does not decode — see
    /// `crate::h5::pure`) is opened through libhdf5 instead, at open or at the first
    /// query that meets it; answers are the same either way.
    ///
    /// A `path` that is a URL (`http(s)://`, `s3://`, `gs://`, `az://`, `file://`; feature
    /// `cloud`) is read by range from there: [`SpatialReader::open_url`].
    pub fn open_path(path: &Path, table: &str, column: Option<&str>) -> Result<SpatialReader> {
        SpatialReader::open_at(path, Some(table), column)
    }

    /// [`SpatialReader::open_path`] of the one table the file holds (an error naming the
    /// tables when it holds several or none), found with the same open of the file.
    pub fn open_path_single(path: &Path, column: Option<&str>) -> Result<SpatialReader> {
        SpatialReader::open_at(path, None, column)
    }

    fn open_at(path: &Path, table: Option<&str>, column: Option<&str>) -> Result<SpatialReader> {
        #[cfg(feature = "cloud")]
        if let Some(url) = path.to_str().filter(|s| crate::remote::is_url(s)) {
            return SpatialReader::open_url_at(url, table, column, &crate::remote::RemoteOptions::default());
        }
        match SpatialReader::open_pure(PureFile::open(path)?, table, column) {
            Err(MarquetError::Unsupported(_)) => SpatialReader::open_lib(&crate::marquet::File::open(path)?, table, column),
            r => r,
        }
    }

    /// [`SpatialReader::open_path`] without its fallback: the byte-range read path only,
    /// refusing with [`MarquetError::Unsupported`] what that path does not read (for
    /// tests and benchmarks that must know which path answered).
    pub fn open_byte_range(path: &Path, table: &str, column: Option<&str>) -> Result<SpatialReader> {
        SpatialReader::open_pure(PureFile::open(path)?, Some(table), column)
    }

    /// Open table `table` of the file at `url` — `http(s)://`, `s3://`, `gs://`, `az://` or
    /// `file://` (issue #34, [`crate::remote`]) — and a reader of its geometry column
    /// `column` (`None`: the primary one), on the byte-range read path with the default
    /// [`crate::remote::RemoteOptions`]. What that path does not read (see
    /// [`SpatialReader::open_path`]) is read through libhdf5, by range too, over the same
    /// block cache ([`crate::File::open_url`]).
    #[cfg(feature = "cloud")]
    pub fn open_url(url: &str, table: &str, column: Option<&str>) -> Result<SpatialReader> {
        SpatialReader::open_url_at(url, Some(table), column, &crate::remote::RemoteOptions::default())
    }

    /// [`SpatialReader::open_url`] with options.
    #[cfg(feature = "cloud")]
    pub fn open_url_with(url: &str, table: &str, column: Option<&str>, opts: &crate::remote::RemoteOptions) -> Result<SpatialReader> {
        SpatialReader::open_url_at(url, Some(table), column, opts)
    }

    #[cfg(feature = "cloud")]
    fn open_url_at(url: &str, table: Option<&str>, column: Option<&str>, opts: &crate::remote::RemoteOptions) -> Result<SpatialReader> {
        let remote = crate::remote::RemoteFile::open_with(url, opts)?;
        match SpatialReader::open_pure(PureFile::open_remote(remote.clone())?, table, column) {
            // What the byte-range path does not read: through libhdf5, by range too.
            Err(MarquetError::Unsupported(_)) => SpatialReader::open_lib(&crate::marquet::File::open_remote(remote)?, table, column),
            r => r,
        }
    }

    /// Requests and bytes fetched so far when the reader reads a file by URL.
    #[cfg(feature = "cloud")]
    pub fn remote_stats(&self) -> Option<crate::remote::RemoteStats> {
        match &self.src {
            Source::Pure { file, .. } => file.remote().map(|r| r.stats()),
            Source::Lib(_) => None,
        }
    }

    fn open_pure(file: PureFile, table: Option<&str>, column: Option<&str>) -> Result<SpatialReader> {
        let table = match table {
            Some(t) => t.to_string(),
            None => only_table(table_paths_in(&file)?, file.name())?,
        };
        let table = table.as_str();
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
        Ok(SpatialReader { src, interpretable, column, snap, attributes: HashMap::new(), lib: None, queries: 0 })
    }

    fn open_lib(f: &crate::marquet::File, table: Option<&str>, column: Option<&str>) -> Result<SpatialReader> {
        match table {
            Some(t) => SpatialReader::open(f, t, column),
            None => SpatialReader::open(f, &only_table(f.tables()?, f.filename())?, column),
        }
    }

    /// The same table through libhdf5, for what the byte-range path does not read; a
    /// file read by URL keeps its block cache.
    fn to_lib(&self) -> Result<SpatialReader> {
        SpatialReader::new(self.lib_table()?, Some(&self.column))
    }

    /// A byte-range reader's table opened through libhdf5 (a file read by URL keeps its
    /// block cache).
    fn lib_table(&self) -> Result<MarquetTable> {
        let Source::Pure { file, table } = &self.src else { unreachable!("a libhdf5 reader holds its table") };
        #[cfg(feature = "cloud")]
        if let Some(r) = file.remote() {
            return MarquetTable::open(&crate::marquet::File::open_remote(r.clone())?, table);
        }
        MarquetTable::open(&crate::marquet::File::open(Path::new(file.name()))?, table)
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

    /// The path of the table the reader queries.
    pub fn table_path(&self) -> &str {
        match &self.src {
            Source::Lib(t) => t.path(),
            Source::Pure { table, .. } => table.as_str(),
        }
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
            self.src = Source::Pure { file: reopen(file)?, table: table.clone() };
        }
        self.snap = ColumnSnapshot::open(&view(&self.src, &mut None, self.interpretable), &self.column)?;
        self.attributes.clear();
        self.lib = None;
        self.queries = 0;
        Ok(())
    }

    /// The values of attribute column `name` at `rows` (strictly ascending, each below
    /// NROWS — what [`SpatialReader::query`] returns), in that order: the ids, names or
    /// measurements of a query's answer, read by the same engine as the query. What
    /// [`crate::h5col::Column::take`] returns for the same rows (missing rows hold the
    /// column's fill, HEP001 §8.5; elements little-endian).
    ///
    /// A byte-range reader reads the column by byte range too, keeping its decoded chunks
    /// for later calls; a column that path does not read (variable-length strings, a
    /// datatype conversion, a filter it does not decode) is read through libhdf5. List
    /// columns are refused, as by [`crate::Table::column`].
    pub fn take(&mut self, name: &str, rows: &[u64]) -> Result<Array> {
        if !self.snap.is_current() {
            self.refresh()?;
        }
        let nrows = self.snap.nrows;
        if let Some(&last) = rows.last().filter(|&&r| r >= nrows) {
            return Err(MarquetError::InvalidArgument(format!("{}: row {last} to take is not below NROWS = {nrows}", self.column_path(name))));
        }
        let spans = crate::h5col::take_spans(rows, &self.column_path(name))?;
        if !self.attributes.contains_key(name) {
            let mut lib = None;
            let opened = view(&self.src, &mut lib, self.interpretable).column(name).and_then(|c| match c.info.dtype {
                Dtype::VarString { .. } => Err(MarquetError::Unsupported(format!("{}: variable-length strings", c.path))),
                _ => CachedDataset::from_elements(c, None, ATTRIBUTE_CACHE_BYTES),
            });
            match opened {
                Ok(c) => {
                    self.attributes.insert(name.to_string(), c);
                }
                Err(MarquetError::Unsupported(_)) => {
                    if self.lib.is_none() && matches!(self.src, Source::Pure { .. }) {
                        self.lib = Some(self.lib_table()?);
                    }
                    let ((Source::Lib(t), _) | (_, Some(t))) = (&self.src, &self.lib) else { unreachable!("opened above") };
                    return t.column(name)?.take(rows);
                }
                Err(e) => return Err(e),
            }
        }
        let Some(c) = self.attributes.get_mut(name) else { unreachable!("inserted above") };
        let es = c.elem_size();
        let mut bytes = Vec::with_capacity(rows.len() * es);
        for s in spans {
            let (mut data, mut first) = c.piece_of(s.start)?;
            for &r in &rows[s.first..s.last] {
                if r >= first + (data.len() / es) as u64 {
                    (data, first) = c.piece_of(r)?;
                }
                let i = (r - first) as usize * es;
                bytes.extend_from_slice(&data[i..i + es]);
            }
        }
        Ok(Array { dtype: c.dtype().clone(), bytes })
    }

    fn column_path(&self, name: &str) -> String {
        format!("{}/{name}", self.table_path().trim_end_matches('/'))
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
            (Err(MarquetError::Unsupported(_)), Source::Pure { .. }) => {
                *self = self.to_lib()?;
                self.query(q)
            }
            (r, _) => r,
        }
    }
}

/// Paths of every H5Col table group in the file at `path` (CLASS = COLUMN_TABLE, HEP001
/// §1.3; a table group is not searched further), found on the byte-range read path: what
/// [`crate::h5col::File::tables`] finds.
/// A `path` that is a URL (feature `cloud`) is read by range from there.
pub fn table_paths(path: &Path) -> Result<Vec<String>> {
    #[cfg(feature = "cloud")]
    if let Some(url) = path.to_str().filter(|s| crate::remote::is_url(s)) {
        return table_paths_in(&PureFile::open_remote(crate::remote::RemoteFile::open(url)?)?);
    }
    table_paths_in(&PureFile::open(path)?)
}

/// The one table of a file, or an error naming what it holds.
fn only_table(all: Vec<String>, file: &str) -> Result<String> {
    match all.len() {
        1 => Ok(all.into_iter().next().unwrap_or_default()),
        0 => Err(MarquetError::InvalidArgument(format!("{file}: the file holds no table"))),
        _ => Err(MarquetError::InvalidArgument(format!("{file}: the file holds several tables, choose one: {}", all.join(", ")))),
    }
}

fn table_paths_in(file: &PureFile) -> Result<Vec<String>> {
    let mut out = Vec::new();
    let mut todo = vec![("/".to_string(), 0usize)];
    while let Some((g, depth)) = todo.pop() {
        // A table group is not searched further, as the validator's discovery does: no
        // table may lie inside one (HEP001 §7.6), and listing its members reads the header
        // of every column (a seventh of a one-window query without `--table`).
        if crate::marquet::facts::read_token(file, &g, crate::spec::names::CLASS)?.as_deref() == Some(crate::spec::names::COLUMN_TABLE) {
            out.push(g.clone());
            continue;
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
        if let Source::Pure { .. } = &self.src {
            *self = self.to_lib()?;
        }
        let Source::Lib(t) = &self.src else { unreachable!("the reader reads through libhdf5 here") };
        let attributes = super::attribute_rows(t, q, filters)?;
        super::combine(attributes, || self.query(q))
    }
}

/// The warm readers of one table's geometry columns, opened on first use: what a shell
/// that answers many windows on one open table holds (Python's `Table`, the C ABI's
/// `marquet_table`), so that each window reuses the metadata, index nodes and chunks the
/// earlier ones read (issue #33). One statement of the rule for both shells:
/// [`ColumnReaders::query`].
#[derive(Default)]
pub struct ColumnReaders {
    readers: std::sync::Mutex<HashMap<String, SpatialReader>>,
}

impl std::fmt::Debug for ColumnReaders {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.readers.lock().map(|r| r.len()).unwrap_or(0);
        f.debug_struct("ColumnReaders").field("open", &n).finish()
    }
}

impl ColumnReaders {
    /// No reader open yet.
    pub fn new() -> ColumnReaders {
        ColumnReaders::default()
    }

    /// Spatial query `q` of geometry column `column` of `table` in `file`. When the file was
    /// opened read-only from a path or URL ([`crate::File::byte_range_source`]) it goes
    /// through the column's held reader ([`SpatialReader::for_file`], opened by the first
    /// query of the column); otherwise it is the table's one-shot query
    /// ([`TableQuery::query`](crate::query::TableQuery::query)): the file may change under
    /// a held snapshot in ways this library does not see (a caller's HDF5 identifier written
    /// through its own calls). The answers are the same either way.
    pub fn query(&self, file: &crate::marquet::File, table: &MarquetTable, column: &str, q: &Query) -> Result<QueryResult> {
        if file.byte_range_source().is_none() {
            return crate::query::TableQuery::query(table, column, q);
        }
        // A query that panicked may have left its reader half updated: drop them all.
        let mut readers = self.readers.lock().unwrap_or_else(|poisoned| {
            let mut r = poisoned.into_inner();
            r.clear();
            r
        });
        self.readers.clear_poison();
        let reader = match readers.entry(column.to_string()) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(v) => v.insert(SpatialReader::for_file(file, table.path(), Some(column))?),
        };
        reader.query(q)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::marquet::{GeoBatch, GeometryColumnSpec, StorageForm};
    use crate::{BBox, Dimensions};

    /// Session 30: a cold window (a reader opened, one query, the reader dropped) leaves its
    /// buffers — stored chunks read, chunks decoded, metadata blocks — in the pool of its
    /// thread, and the next cold window on that thread takes every one of them from there
    /// instead of from new pages; both answer alike.
    #[test]
    fn a_cold_reader_reuses_the_buffers_of_the_one_before() {
        let path = std::env::temp_dir().join(format!("marquet-unit-cold-pool-{}.h5", std::process::id()));
        {
            let f = crate::File::create(&path).unwrap();
            let mut t = MarquetTable::create(&f, "/t").unwrap();
            t.add_geometry_column("g", &GeometryColumnSpec::default().with_form(StorageForm::Point { dims: Dimensions::Xy, f32: false })).unwrap();
            // 10,000 points: five chunks of 2,048 rows, 32 KiB each decoded.
            let mut state = 0x9e37_79b9_7f4a_7c15u64;
            let xy = ndarray::Array2::from_shape_fn((10_000, 2), |_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 11) as f64 / (1u64 << 53) as f64
            });
            t.append(&GeoBatch::new().with_geometry("g", crate::arrays::point_values(Dimensions::Xy, xy.view(), None).unwrap())).unwrap();
        }
        let p = path.clone();
        // A thread of its own: the pool is per thread.
        std::thread::spawn(move || {
            let cold = |w: BBox| {
                let mut r = SpatialReader::open_path(&p, "/t", Some("g")).unwrap();
                r.query(&Query::bbox(w)).unwrap().rows
            };
            for w in [BBox::xy(-1.0, -1.0, 2.0, 2.0), BBox::xy(0.25, 0.25, 0.5, 0.5)] {
                let first = cold(w);
                let before = crate::h5::pool::misses();
                let second = cold(w);
                assert_eq!(crate::h5::pool::misses() - before, 0, "buffers the second cold window of {w:?} allocated afresh");
                assert_eq!(first, second);
                assert!(!first.is_empty());
            }
            assert!(crate::h5::pool::misses() > 0, "the first window took its buffers from the allocator");
        })
        .join()
        .unwrap();
        let _ = std::fs::remove_file(&path);
    }
}
