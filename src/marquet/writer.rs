//! The one writer of Marquet tables (issue #31): every append and every import ends here.
//!
//! [`TableWriter`] has the shape of FlatGeobuf's `FgbWriter` and parquet's `ArrowWriter`:
//! opened on a table — new and empty, or holding rows — with one options value
//! ([`WriteOptions`]), fed [`GeoBatch`]es, ended by a fallible [`TableWriter::finish`]. In
//! between nothing is visible: every batch is checked, encoded and written past `NROWS`,
//! in the reserved tail that readers ignore (HEP001 §12.1), inside the target file itself;
//! `finish` then widens BBOX and GEOMETRY_TYPES, writes the spatial indexes tokens-first and
//! commits `NROWS` last, once for all the rows (HEP001 §12.3, HEP002 §11.1). A failure, a
//! kill or a writer dropped without `finish` leaves the table exactly as it was
//! (docs/FAULTS.md F2); the next write overwrites the unused tail.
//!
//! Each geometry value is checked, decoded and boxed **once**, by its encoding
//! ([`MarquetTable::prepare`]); that box gives the batch's Hilbert order, the covering
//! value, the column summaries, the block index entries and the R-tree items
//! ([`IndexPlan`]). No old row's geometry is read: block indexes are extended from their
//! last partial block, R-trees rebuilt from their stored leaves, and the indexes a new
//! table gets from its [`WriteLayout`] built from the boxes collected.
//!
//! ```
//! use marquet::h5col::File;
//! use marquet::{GeoBatch, GeometryColumnSpec, GeometryValues, Table, StorageForm, TableWriter, WriteOptions};
//! use marquet::Dimensions;
//!
//! let path = std::env::temp_dir().join(format!("marquet-doc-writer-{}.h5", std::process::id()));
//! let file = File::create(&path)?;
//! let mut t = Table::create(&file, "/stations")?;
//! let spec = GeometryColumnSpec::default().with_form(StorageForm::Point { dims: Dimensions::Xy, f32: false });
//! t.add_geometry_column("geometry", &spec)?;
//! let mut w = TableWriter::new(&t, WriteOptions::default())?;
//! for k in 0..3 {
//!     let x: Vec<f64> = (0..100).map(|i| (i * 7 % 100) as f64 + k as f64).collect();
//!     let y: Vec<f64> = (0..100).map(|i| (i * 13 % 100) as f64).collect();
//!     let v = GeometryValues::Points { dims: Dimensions::Xy, x, y, z: None, m: None, valid: None };
//!     w.write(&GeoBatch::new().with_geometry("geometry", v))?;
//! }
//! assert_eq!(t.nrows()?, 0); // nothing visible before finish
//! assert_eq!(w.finish()?, 300);
//! assert_eq!(t.nrows()?, 300);
//! # drop((t, file));
//! # std::fs::remove_file(&path).ok();
//! # Ok::<(), marquet::Error>(())
//! ```

use std::borrow::Cow;
use std::sync::Arc;

use crate::error::{MarquetError, Result};
use crate::progress::Progress;
use crate::spatial::hilbert_order;
use crate::spec::{names, BBox};
use crate::h5;

use super::order::permute_column_values;
use super::spatial_index::{IndexPlan, RTreeOnAppend};
use super::write::{prepare_at, widen_with, SummaryAcc};
use crate::h5col::Batch;
use super::{checks, GeoBatch, GeometryColumnInfo, MarquetTable, RowInfo, WriteLayout};

/// A transformation applied to every batch before anything else looks at it, such as a
/// reprojection: the order and the indexes are then of the transformed coordinates.
pub type BatchTransform = Arc<dyn Fn(GeoBatch) -> Result<GeoBatch> + Send + Sync>;

/// How a [`TableWriter`] writes (one value for every writer, new table or append).
#[derive(Clone)]
#[non_exhaustive]
pub struct WriteOptions {
    /// Order the rows of each batch along a Hilbert curve of the primary geometry column's
    /// boxes (HEP002 §10.6). Default on. Off when the rows are already in the order wanted
    /// (a streamed import sorts them globally first, `crate::convert::hub::sort`).
    pub spatial_order: bool,
    /// What the write does to a valid packed R-tree: rebuild it once, at the commit, from
    /// its stored leaves and the new boxes (default), or leave it stale.
    pub rtree: RTreeOnAppend,
    /// For a table that is empty and whose geometry columns have no index: the layout whose
    /// indexes (BLOCK_BBOX, PACKED_RTREE) it gets, built at the commit from the rows' boxes.
    /// `None`: no index is declared. Default [`WriteLayout::default`].
    pub layout: Option<WriteLayout>,
    /// The number of rows expected, when known (sets the block length of a small table:
    /// [`WriteLayout::block_length_for`]; reported to [`WriteOptions::progress`]).
    pub rows_hint: Option<u64>,
    /// Applied to every batch first ([`BatchTransform`]).
    pub transform: Option<BatchTransform>,
    /// Hears the rows written so far after each batch.
    pub progress: Progress,
}

impl std::fmt::Debug for WriteOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WriteOptions")
            .field("spatial_order", &self.spatial_order)
            .field("rtree", &self.rtree)
            .field("layout", &self.layout)
            .field("rows_hint", &self.rows_hint)
            .field("transform", &self.transform.as_ref().map(|_| "..."))
            .finish()
    }
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions { spatial_order: true, rtree: RTreeOnAppend::Rebuild, layout: Some(WriteLayout::default()), rows_hint: None, transform: None, progress: Progress::default() }
    }
}

impl WriteOptions {
    /// Rows in the order given, no index declared, valid R-trees rebuilt: what
    /// [`MarquetTable::append`] writes.
    pub fn in_order() -> WriteOptions {
        WriteOptions { spatial_order: false, layout: None, ..WriteOptions::default() }
    }
    /// See [`WriteOptions::spatial_order`].
    pub fn with_spatial_order(mut self, on: bool) -> Self {
        self.spatial_order = on;
        self
    }
    /// See [`WriteOptions::rtree`].
    pub fn with_rtree(mut self, r: RTreeOnAppend) -> Self {
        self.rtree = r;
        self
    }
    /// See [`WriteOptions::layout`].
    pub fn with_layout(mut self, layout: Option<WriteLayout>) -> Self {
        self.layout = layout;
        self
    }
    /// See [`WriteOptions::rows_hint`].
    pub fn with_rows_hint(mut self, rows: Option<u64>) -> Self {
        self.rows_hint = rows;
        self
    }
    /// See [`WriteOptions::transform`].
    pub fn with_transform(mut self, f: BatchTransform) -> Self {
        self.transform = Some(f);
        self
    }
    /// See [`WriteOptions::progress`].
    pub fn with_progress(mut self, p: Progress) -> Self {
        self.progress = p;
        self
    }
}

/// One geometry column's share of a write.
struct ColumnWrite {
    info: GeometryColumnInfo,
    summary: SummaryAcc,
    indexes: IndexPlan,
}

/// The streaming writer of a Marquet table (see the module documentation).
pub struct TableWriter<'a> {
    t: &'a MarquetTable,
    opts: WriteOptions,
    n_old: u64,
    at: u64,
    cols: Vec<ColumnWrite>,
    primary: Option<String>,
}

impl std::fmt::Debug for TableWriter<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableWriter").field("table", &self.t.path()).field("n_old", &self.n_old).field("staged", &(self.at - self.n_old)).finish()
    }
}

impl<'a> TableWriter<'a> {
    /// Begin a write to `t`. Refuses a table that is not interpretable or not conformant
    /// (docs/FAULTS.md F1, F3) before anything is written.
    pub fn new(t: &'a MarquetTable, mut opts: WriteOptions) -> Result<TableWriter<'a>> {
        t.require_interpretable()?;
        // A table that keeps its input order gets every batch in the order given (local
        // ruling L19): its producer chose that order, and an append remembers it.
        if t.keeps_input_order()? {
            opts.spatial_order = false;
        }
        let names = t.geometry_column_names()?;
        let mut infos = Vec::with_capacity(names.len());
        for name in &names {
            let info = t.geometry_column(name)?;
            // Contiguous geometry data (the cloud layout) cannot grow: refused before any work.
            super::cloud::refuse_fixed_storage(t, &info)?;
            infos.push(info);
        }
        // Refuse a non-conformant table, retire stale tokens (docs/FAULTS.md F1, F3).
        t.table.begin_mutation()?;
        let n_old = t.nrows()?;
        let declare = opts.layout.as_ref().map(|l| (l, opts.rows_hint));
        let mut cols = Vec::with_capacity(names.len());
        for info in infos {
            let indexes = IndexPlan::new(t, &info, n_old, opts.rtree, declare)?;
            cols.push(ColumnWrite { info, summary: SummaryAcc::default(), indexes });
        }
        let primary = if names.is_empty() { None } else { Some(t.primary_geometry_column()?) };
        Ok(TableWriter { t, opts, n_old, at: n_old, cols, primary })
    }

    /// The table written to.
    pub fn table(&self) -> &MarquetTable {
        self.t
    }

    /// Rows staged so far (not visible before [`TableWriter::finish`]).
    pub fn staged_rows(&self) -> u64 {
        self.at - self.n_old
    }

    /// Check, encode and stage one batch past the rows staged before it. On error nothing of
    /// this batch counts; the write should be dropped (the table stays as it was). Errors
    /// name the table row of the offending value, counted over the whole write.
    pub fn write(&mut self, batch: &GeoBatch) -> Result<u64> {
        let (cols, rows, _) = self.prepare(Cow::Borrowed(batch))?;
        let k = self.t.table.stage_unguarded(&cols, self.at)?;
        self.account(k, &rows);
        Ok(k)
    }

    /// [`TableWriter::write`] of every batch of `batches`, in order, each batch staged while
    /// the next is checked, encoded and ordered: the file's writes and the chunks'
    /// compression (on rayon's threads) run on a thread of their own, beside this one.
    /// One batch waits between the two. Returns the rows staged; on an error (the first in
    /// row order when both sides fail) the write should be dropped, as for `write`.
    ///
    /// Why: staging a batch after preparing it left a core idle in turn — a point convert
    /// used 1.45 of 2 cores while writing (docs/PERFORMANCE.md, "Session 31").
    pub fn write_all(&mut self, batches: impl Iterator<Item = Result<GeoBatch>>) -> Result<u64> {
        let table = &self.t.table;
        let first = self.at;
        std::thread::scope(|s| {
            let (tx, rx) = std::sync::mpsc::sync_channel::<(Batch, u64)>(1);
            let stager = s.spawn(move || -> Result<()> {
                for (cols, at) in rx {
                    table.stage_unguarded(&cols, at)?;
                }
                Ok(())
            });
            let mut prepared = Ok(());
            for batch in batches {
                let (cols, rows, k) = match batch.and_then(|b| self.prepare(Cow::Owned(b))) {
                    Ok(p) => p,
                    Err(e) => {
                        prepared = Err(e);
                        break;
                    }
                };
                let at = self.at;
                self.account(k, &rows);
                // The stager stopped at an error: it is reported below.
                if tx.send((cols, at)).is_err() {
                    break;
                }
            }
            drop(tx);
            let staged = stager.join().unwrap_or_else(|_| Err(MarquetError::InvalidArgument(format!("{}: the staging thread panicked", table.path()))));
            staged.and(prepared)
        })?;
        Ok(self.at - first)
    }

    /// Check, encode, box and order one batch ([`TableWriter::write`]): the rows to stage,
    /// each geometry column's row facts and the row count.
    fn prepare(&self, batch: Cow<'_, GeoBatch>) -> Result<(Batch, Vec<Vec<RowInfo>>, u64)> {
        let batch = match &self.opts.transform {
            Some(f) => Cow::Owned(f(batch.into_owned())?),
            None => batch,
        };
        let this = self.t;
        for name in batch.geometries.keys() {
            if !self.cols.iter().any(|c| &c.info.name == name) {
                return Err(MarquetError::InvalidArgument(format!("{} is not a geometry column", this.table.member_path(name))));
            }
        }
        let k = batch.nrows()?;
        // The ordinary columns are staged as given: moved out of a batch given by value,
        // copied from a borrowed one.
        let (geometries, mut cols) = match batch {
            Cow::Owned(b) => (Cow::Owned(b.geometries), b.columns),
            Cow::Borrowed(b) => (Cow::Borrowed(&b.geometries), b.columns.clone()),
        };
        // Encode every geometry column once: the values and each row's type and box.
        let mut encoded: Vec<(Option<super::ColumnValues>, Vec<RowInfo>)> = Vec::with_capacity(self.cols.len());
        for c in &self.cols {
            let name = &c.info.name;
            let Some(v) = geometries.get(name) else {
                if !cols.missing_rest {
                    return Err(MarquetError::InvalidArgument(format!("batch has no values for geometry column '{name}'")));
                }
                encoded.push((None, vec![RowInfo::Null; k]));
                continue;
            };
            let v = checks::check_values(&c.info, v, self.at, this.orientation_on_write)?;
            let (cv, rows) = prepare_at(&c.info, &v, self.at)?;
            encoded.push((Some(cv), rows));
        }
        // The batch's Hilbert order, from the boxes just computed (HEP002 §10.6).
        if let (true, Some(p)) = (self.opts.spatial_order && k > 1, &self.primary) {
            let pi = self.cols.iter().position(|c| &c.info.name == p).unwrap_or(0);
            let boxes: Vec<BBox> = encoded[pi]
                .1
                .iter()
                .map(|r| match r {
                    RowInfo::Geometry(g) if !g.is_empty => g.bbox,
                    _ => BBox::EMPTY,
                })
                .collect();
            let order = hilbert_order(&boxes);
            if order.iter().enumerate().any(|(i, &j)| i != j) {
                for (cv, rows) in encoded.iter_mut() {
                    if let Some(v) = cv.as_mut() {
                        *v = permute_column_values(v, &order);
                    }
                    *rows = order.iter().map(|&i| rows[i]).collect();
                }
                for v in cols.columns.values_mut() {
                    *v = permute_column_values(v, &order);
                }
            }
        }
        for (c, (cv, rows)) in self.cols.iter().zip(encoded.iter_mut()) {
            if let Some(v) = cv.take() {
                cols.columns.insert(c.info.name.clone(), v);
            }
            if let Some(cov) = &c.info.covering {
                cols.columns.insert(cov.clone(), this.covering_values(cov, rows)?);
            }
        }
        Ok((cols, encoded.into_iter().map(|(_, rows)| rows).collect(), k as u64))
    }

    /// Count `k` rows staged at `self.at` with their row facts `rows` (per geometry column)
    /// into the summaries and index plans.
    fn account(&mut self, k: u64, rows: &[Vec<RowInfo>]) {
        for (c, rows) in self.cols.iter_mut().zip(rows) {
            c.summary.add(rows);
            c.indexes.add(rows, self.at);
        }
        self.at += k;
        self.opts.progress.report(self.at - self.n_old, self.opts.rows_hint);
    }

    /// Publish every staged row at once: summaries widened, spatial indexes maintained or
    /// built (tokens first), `GENERATION` bumped, `NROWS` committed last. Returns the
    /// table's row count.
    pub fn finish(self) -> Result<u64> {
        let me = self.t;
        if self.at == self.n_old && !self.cols.iter().any(|c| c.indexes.declares()) {
            return Ok(self.n_old);
        }
        let (n_old, n_new) = (self.n_old, self.at);
        let mut cols = Some(self.cols);
        // The first write into a table records a choice of input order (local ruling L19),
        // committed with the rows (before NROWS).
        let keep_order = n_old == 0 && self.opts.layout.as_ref().is_some_and(|l| !l.spatial_order);
        me.table.commit_append(n_old, n_new, &mut |_, _, _| {
            if keep_order {
                h5::attr_write_ascii(me.table.id(), names::ROW_ORDER, names::ROW_ORDER_INPUT)?;
            }
            for c in cols.take().unwrap_or_default() {
                widen_with(me, &c.info, &c.summary)?;
                c.indexes.commit(me, n_old, n_new)?;
            }
            Ok(())
        })
    }
}

impl MarquetTable {
    /// Begin a write ([`TableWriter::new`]).
    pub fn writer(&self, opts: WriteOptions) -> Result<TableWriter<'_>> {
        TableWriter::new(self, opts)
    }

    /// Write one batch as one all-or-nothing write under `opts` (the expected row count is
    /// the batch's unless `opts` says otherwise): with [`WriteOptions::default`], into an
    /// empty table, the rows in Hilbert order and the default layout's indexes.
    pub fn write(&self, batch: &GeoBatch, mut opts: WriteOptions) -> Result<u64> {
        if opts.rows_hint.is_none() {
            opts.rows_hint = Some(batch.nrows()? as u64);
        }
        let mut w = TableWriter::new(self, opts)?;
        w.write(batch)?;
        w.finish()
    }

    /// Append one batch in the order given, as one all-or-nothing write
    /// ([`WriteOptions::in_order`]): BBOX and GEOMETRY_TYPES widened, covering rows
    /// computed, block indexes extended, R-trees as [`MarquetTable::set_rtree_on_append`]
    /// says. Returns the new row count.
    pub fn append(&self, batch: &GeoBatch) -> Result<u64> {
        let mut w = TableWriter::new(self, WriteOptions::in_order().with_rtree(self.rtree_on_append))?;
        w.write(batch)?;
        w.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::h5col::{Array, ColumnSpec, File};
    use crate::h5::Dtype;
    use crate::spec::Dimensions;
    use crate::marquet::{GeometryColumnSpec, GeometryValues, StorageForm};

    fn batch(seed: u64, n: usize) -> GeoBatch {
        let r = |i: usize, k: u64| ((i as u64 * 2_654_435_761 + seed * 97 + k) % 10_007) as f64 / 10.0;
        let v = GeometryValues::Points { dims: Dimensions::Xy, x: (0..n).map(|i| r(i, 1)).collect(), y: (0..n).map(|i| r(i, 5) - 500.0).collect(), z: None, m: None, valid: None };
        let ids: Vec<f64> = (0..n).map(|i| (seed * 100_000 + i as u64) as f64).collect();
        GeoBatch::new().with_geometry("geometry", v).with_array("id", Array::from_f64(&ids))
    }

    fn table(file: &File, path: &str) -> MarquetTable {
        let mut t = MarquetTable::create(file, path).unwrap();
        let spec = GeometryColumnSpec::default().with_form(StorageForm::Point { dims: Dimensions::Xy, f32: false });
        t.add_geometry_column("geometry", &spec).unwrap();
        t.add_column("id", &ColumnSpec::new(Dtype::F64)).unwrap();
        t
    }

    /// Every row, the summaries and every spatial index's bytes.
    fn contents(t: &MarquetTable) -> String {
        let n = t.nrows().unwrap();
        let mut out = format!("{n} rows\n");
        for c in ["geometry", "id"] {
            out.push_str(&format!("{c}: {:?}\n", t.table.read(c, 0, n).unwrap().bytes));
        }
        let info = t.geometry_column("geometry").unwrap();
        out.push_str(&format!("bbox {:?} types {:?}\n", info.bbox, info.types));
        for i in t.spatial_indexes("geometry").unwrap() {
            let ds = h5::dataset_open(t.table.id(), &i.info.path).unwrap();
            let di = h5::dataset_info(ds.id(), &i.info.path).unwrap();
            out.push_str(&format!("{:?} valid {}: {:?}\n", i.kind, i.valid, h5::dataset_read(ds.id(), 0, di.dims[0], &di.dtype.to_le(), &i.info.path).unwrap()));
        }
        out
    }

    /// `write_all` (each batch staged on a thread of its own while the next is prepared)
    /// writes what `write` batch by batch writes: the same rows in the same order, the same
    /// summaries and indexes. An error in the stream — a failing item, a batch whose
    /// columns disagree on their length — fails the write, and the dropped writer leaves
    /// the table as it was, ready for the next write.
    #[test]
    fn write_all_writes_what_write_writes_and_fails_as_it_does() {
        let dir = std::env::temp_dir().join(format!("marquet-write-all-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = File::create(dir.join("t.h5")).unwrap();
        let sizes = [5000usize, 1, 0, 12_000, 3333];
        let a = table(&file, "/a");
        let mut w = a.writer(WriteOptions::default().with_rows_hint(Some(20_334))).unwrap();
        for (s, &n) in sizes.iter().enumerate() {
            w.write(&batch(s as u64, n)).unwrap();
        }
        assert_eq!(w.finish().unwrap(), 20_334);
        let b = table(&file, "/b");
        let mut w = b.writer(WriteOptions::default().with_rows_hint(Some(20_334))).unwrap();
        assert_eq!(w.write_all(sizes.iter().enumerate().map(|(s, &n)| Ok(batch(s as u64, n)))).unwrap(), 20_334);
        assert_eq!(w.staged_rows(), 20_334);
        assert_eq!(w.finish().unwrap(), 20_334);
        let (ca, cb) = (contents(&a), contents(&b));
        assert!(ca.contains("BlockBBox valid true"), "{ca}");
        assert_eq!(ca, cb);

        // Failures: an item that is an error, and a batch of unequal columns, each after
        // batches that were staged.
        let before = contents(&b);
        let failing: Vec<Box<dyn Fn() -> Result<GeoBatch>>> = vec![
            Box::new(|| Err(MarquetError::InvalidArgument("the source failed".into()))),
            Box::new(|| Ok(batch(9, 10).with_array("id", Array::from_f64(&[1.0; 11])))),
        ];
        for bad in &failing {
            let mut w = b.writer(WriteOptions::in_order()).unwrap();
            let items = (0..3).map(|s| Ok(batch(20 + s, 4000))).chain(std::iter::once(bad())).chain((0..2).map(|s| Ok(batch(30 + s, 10))));
            assert!(w.write_all(items).is_err());
            drop(w);
            assert_eq!(contents(&b), before);
        }
        let mut w = b.writer(WriteOptions::in_order()).unwrap();
        w.write_all(std::iter::once(Ok(batch(40, 7)))).unwrap();
        assert_eq!(w.finish().unwrap(), 20_341);
        drop((a, b, file));
        std::fs::remove_dir_all(&dir).ok();
    }
}
