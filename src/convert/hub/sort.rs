//! Hilbert order for streamed imports, in bounded memory (HEP002 §10.6).
//!
//! An import streams record batches; the rows must reach the table in Hilbert order of the
//! primary geometry column's box centres, the order [`crate::spatial::hilbert_order`] gives
//! an in-memory batch (ruling R13: ascending Hilbert index over the extent of all boxes,
//! ties by input position, null and empty geometries last).
//!
//! 1. A first pass over the geometry column only ([`KeyCollector`]) keeps each row's box
//!    centre (16 bytes a row) and the extent; [`KeyCollector::keys`] turns them into one
//!    `u64` sort key a row.
//! 2. [`HilbertSorter`] takes the full record batches in input order. When the whole input,
//!    estimated from the first batch, fits the memory budget it is kept in memory, then
//!    concatenated and permuted once. Otherwise the key range is cut into buckets of at most
//!    a third of the budget each (by the exact key counts of step 1), every batch's rows are
//!    routed to their bucket's spill file (Arrow IPC, uncompressed, in a temporary
//!    directory), and the buckets are read back one at a time in key order, each sorted in
//!    memory. Rows are never merged across buckets, so peak memory is one bucket plus one
//!    input batch, whatever the input's size, and the spill costs one write and one read of
//!    the rows.
//!
//! Arrow's own kernels (`take`, `concat_batches`) and IPC files do the data movement, for
//! every Arrow type the importer accepts; only the bucketing is ours.

use std::path::PathBuf;

use arrow_array::{RecordBatch, UInt32Array};
use arrow_schema::SchemaRef;

use crate::convert::err_at;
use crate::error::{MarquetError, Result};
use crate::spatial::hilbert::{box_centre, hilbert_of_centres};
use crate::spec::BBox;

/// The key of a null or empty geometry: after every Hilbert index (which is < 2³²).
pub const NULL_KEY: u64 = 1 << 32;

/// Collects the box centre of every row, in input order, and the extent of the boxes.
#[derive(Debug, Default)]
pub struct KeyCollector {
    centres: Vec<(f64, f64)>,
    extent: Option<BBox>,
}

impl KeyCollector {
    /// A collector for about `rows` rows.
    pub fn with_capacity(rows: usize) -> KeyCollector {
        KeyCollector { centres: Vec::with_capacity(rows), extent: None }
    }

    /// The next row's box ([`BBox::EMPTY`] for a null or empty geometry).
    pub fn push(&mut self, b: &BBox) {
        if b.is_empty() {
            self.centres.push((f64::NAN, f64::NAN));
            return;
        }
        self.centres.push(box_centre(b));
        // What `hilbert::extent_of` of the extent so far and `b` gives, without its
        // iterator for every row.
        let u = crate::spatial::geom_box::unwrap_box(b);
        let e = self.extent.get_or_insert(BBox::EMPTY);
        e.xmin = e.xmin.min(u.xmin);
        e.ymin = e.ymin.min(u.ymin);
        e.xmax = e.xmax.max(u.xmax);
        e.ymax = e.ymax.max(u.ymax);
    }

    /// Rows seen.
    pub fn len(&self) -> usize {
        self.centres.len()
    }

    /// No row seen.
    pub fn is_empty(&self) -> bool {
        self.centres.is_empty()
    }

    /// One sort key per row: the Hilbert index of the centre over the extent, or
    /// [`NULL_KEY`].
    pub fn keys(self) -> Vec<u64> {
        use rayon::prelude::*;
        let extent = self.extent.unwrap_or(BBox::EMPTY);
        // On every core, a slice of centres at a time (for 1,000,000 points this pass was
        // 30 ms of one thread between the survey and the write, with the other core idle).
        // The cells of 1,024 centres at a time on the stack: no array of them beside the
        // centres and the keys (a 10,000,000-point convert's peak).
        let mut keys = vec![0u64; self.centres.len()];
        keys.par_chunks_mut(1024).zip(self.centres.par_chunks(1024)).for_each(|(k, c)| {
            let mut cells = [0u32; 1024];
            hilbert_of_centres(c, &extent, &mut cells[..c.len()]);
            for ((k, &(x, y)), &h) in k.iter_mut().zip(c).zip(&cells) {
                *k = if x.is_nan() && y.is_nan() { NULL_KEY } else { u64::from(h) };
            }
        });
        keys
    }
}

/// Positions `0..keys.len()` by ascending key, ties by position (a stable sort).
fn order_of(keys: &[u64]) -> Vec<u32> {
    let mut idx: Vec<u32> = (0..keys.len() as u32).collect();
    idx.sort_by_key(|&i| keys[i as usize]);
    idx
}

/// One bucket's spill file.
struct Bucket {
    path: PathBuf,
    writer: Option<arrow_ipc::writer::FileWriter<std::io::BufWriter<std::fs::File>>>,
    /// Keys of the bucket's rows, in spill order.
    keys: Vec<u64>,
}

enum State {
    /// Nothing pushed yet.
    Undecided,
    /// The input fits the budget.
    InMemory(Vec<RecordBatch>),
    /// Rows routed to buckets; `bounds[b]` is the largest key of bucket `b`.
    Spilled { dir: TempDir, bounds: Vec<u64>, buckets: Vec<Bucket> },
}

/// A directory removed when dropped.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Puts streamed record batches into Hilbert order with bounded memory (see the module
/// documentation).
pub struct HilbertSorter {
    keys: Vec<u64>,
    next: usize,
    budget: usize,
    schema: Option<SchemaRef>,
    state: State,
    spill_dir: PathBuf,
}

impl HilbertSorter {
    /// A sorter for rows whose keys are `keys` (in input order), holding at most about
    /// `budget` bytes of rows in memory, spilling into a new directory under `spill_dir`.
    pub fn new(keys: Vec<u64>, budget: usize, spill_dir: PathBuf) -> HilbertSorter {
        HilbertSorter { keys, next: 0, budget: budget.max(64 << 10), schema: None, state: State::Undecided, spill_dir }
    }

    /// Did the sorter spill to disk?
    pub fn spilled(&self) -> bool {
        matches!(self.state, State::Spilled { .. })
    }

    /// The next rows of the input, in input order.
    pub fn push(&mut self, batch: RecordBatch) -> Result<()> {
        let n = batch.num_rows();
        if self.next + n > self.keys.len() {
            return Err(MarquetError::InvalidArgument(format!(
                "the input has more rows than its first pass counted ({} keys)",
                self.keys.len()
            )));
        }
        if matches!(self.state, State::Undecided) {
            self.decide(&batch)?;
        }
        let first = self.next;
        self.next += n;
        match &mut self.state {
            State::Undecided => unreachable!("decided above"),
            State::InMemory(v) => v.push(batch),
            State::Spilled { bounds, buckets, .. } => {
                let keys = &self.keys[first..first + n];
                let mut rows: Vec<Vec<u32>> = vec![Vec::new(); buckets.len()];
                for (i, k) in keys.iter().enumerate() {
                    rows[bounds.partition_point(|b| b < k)].push(i as u32);
                }
                for (b, r) in rows.into_iter().enumerate() {
                    if r.is_empty() {
                        continue;
                    }
                    let bucket = &mut buckets[b];
                    bucket.keys.extend(r.iter().map(|&i| keys[i as usize]));
                    let part = arrow_select::take::take_record_batch(&batch, &UInt32Array::from(r))
                        .map_err(|e| err_at("external sort (take)", e))?;
                    let w = bucket.writer.as_mut().ok_or_else(|| err_at("external sort", "bucket already closed"))?;
                    w.write(&part).map_err(|e| err_at(&bucket.path.display().to_string(), e))?;
                }
            }
        }
        Ok(())
    }

    /// Choose between memory and buckets from the first batch's size.
    fn decide(&mut self, batch: &RecordBatch) -> Result<()> {
        self.schema = Some(batch.schema());
        let n = batch.num_rows().max(1);
        let per_row = batch.get_array_memory_size().div_ceil(n).max(1);
        let total = per_row.saturating_mul(self.keys.len());
        // Concatenating and permuting holds the rows three times.
        if total.saturating_mul(3) <= self.budget {
            self.state = State::InMemory(Vec::new());
            return Ok(());
        }
        let rows_per_bucket = (self.budget / 3 / per_row).max(1);
        let mut sorted = self.keys.clone();
        sorted.sort_unstable();
        // Bucket bounds at key quantiles; equal keys stay in one bucket.
        let mut bounds = Vec::new();
        let mut i = rows_per_bucket;
        while i < sorted.len() {
            let k = sorted[i - 1];
            if bounds.last() != Some(&k) {
                bounds.push(k);
            }
            i += rows_per_bucket;
        }
        bounds.push(u64::MAX);
        drop(sorted);
        let dir = self.spill_dir.join(format!(
            "marquet-sort-{}-{}",
            std::process::id(),
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0)
        ));
        std::fs::create_dir_all(&dir).map_err(|e| MarquetError::Io { path: dir.display().to_string(), source: e })?;
        let dir = TempDir(dir);
        let schema = batch.schema();
        let mut buckets = Vec::with_capacity(bounds.len());
        for b in 0..bounds.len() {
            let path = dir.0.join(format!("bucket-{b}.arrow"));
            let f = std::fs::File::create(&path).map_err(|e| MarquetError::Io { path: path.display().to_string(), source: e })?;
            let w = arrow_ipc::writer::FileWriter::try_new(std::io::BufWriter::new(f), &schema)
                .map_err(|e| err_at(&path.display().to_string(), e))?;
            buckets.push(Bucket { path, writer: Some(w), keys: Vec::new() });
        }
        self.state = State::Spilled { dir, bounds, buckets };
        Ok(())
    }

    /// Every row pushed, in Hilbert order, in batches of at most `batch_rows` rows.
    pub fn finish(mut self, batch_rows: usize) -> Result<SortedBatches> {
        if self.next != self.keys.len() {
            return Err(MarquetError::InvalidArgument(format!(
                "the input has {} rows but its first pass counted {}",
                self.next,
                self.keys.len()
            )));
        }
        let batch_rows = batch_rows.max(1);
        let state = std::mem::replace(&mut self.state, State::Undecided);
        let mut queue: Vec<Source> = Vec::new();
        let mut dir = None;
        match state {
            State::Undecided => {}
            State::InMemory(batches) => queue.push(Source::Memory { batches, keys: std::mem::take(&mut self.keys) }),
            State::Spilled { dir: d, buckets, .. } => {
                for mut b in buckets {
                    if let Some(mut w) = b.writer.take() {
                        w.finish().map_err(|e| err_at(&b.path.display().to_string(), e))?;
                    }
                    if !b.keys.is_empty() {
                        queue.push(Source::File { path: b.path, keys: b.keys });
                    }
                }
                dir = Some(d);
            }
        }
        queue.reverse();
        Ok(SortedBatches { schema: self.schema.take(), queue, current: None, batch_rows, _dir: dir })
    }
}

/// Rows not yet sorted: the whole input, or one bucket.
enum Source {
    Memory { batches: Vec<RecordBatch>, keys: Vec<u64> },
    File { path: PathBuf, keys: Vec<u64> },
}

/// The sorted rows, batch by batch (see [`HilbertSorter::finish`]).
pub struct SortedBatches {
    schema: Option<SchemaRef>,
    /// Sources still to sort, last first.
    queue: Vec<Source>,
    current: Option<Loaded>,
    batch_rows: usize,
    _dir: Option<TempDir>,
}

/// One source's rows and their order: each output batch gathers its rows from the
/// source's batches as it is asked for (one copy of each row, made a batch at a time;
/// concatenating the source first and permuting it whole were two copies of everything,
/// made before the first batch could be written: a tenth of a polygon import on one core).
struct Loaded {
    batches: Vec<RecordBatch>,
    /// Row number of each batch's first row.
    starts: Vec<usize>,
    order: Vec<u32>,
    next: usize,
}

impl SortedBatches {
    fn load(&mut self, src: Source) -> Result<Loaded> {
        let (batches, keys) = match src {
            Source::Memory { batches, keys } => (batches, keys),
            Source::File { path, keys } => {
                let what = path.display().to_string();
                let f = std::fs::File::open(&path).map_err(|e| MarquetError::Io { path: what.clone(), source: e })?;
                let r = arrow_ipc::reader::FileReader::try_new(std::io::BufReader::new(f), None).map_err(|e| err_at(&what, e))?;
                let batches = r.collect::<std::result::Result<Vec<_>, _>>().map_err(|e| err_at(&what, e))?;
                let _ = std::fs::remove_file(&path);
                (batches, keys)
            }
        };
        let batches: Vec<RecordBatch> = batches.into_iter().filter(|b| b.num_rows() > 0).collect();
        let mut starts = Vec::with_capacity(batches.len());
        let mut rows = 0usize;
        for b in &batches {
            starts.push(rows);
            rows += b.num_rows();
        }
        if rows != keys.len() {
            return Err(err_at("external sort", format!("{rows} rows read back for {} keys", keys.len())));
        }
        Ok(Loaded { batches, starts, order: order_of(&keys), next: 0 })
    }

    /// The next `batch_rows` rows of `c` in order, gathered from its batches.
    fn gather(&self, c: &mut Loaded) -> Result<RecordBatch> {
        let schema = self.schema.clone().ok_or_else(|| err_at("external sort", "no schema"))?;
        let end = (c.next + self.batch_rows).min(c.order.len());
        let idx: Vec<(usize, usize)> = c.order[c.next..end]
            .iter()
            .map(|&r| {
                let r = r as usize;
                let b = c.starts.partition_point(|&s| s <= r) - 1;
                (b, r - c.starts[b])
            })
            .collect();
        c.next = end;
        let columns = (0..schema.fields().len())
            .map(|i| {
                let col: Vec<&dyn arrow_array::Array> = c.batches.iter().map(|b| b.column(i).as_ref()).collect();
                let parallel = match schema.field(i).data_type() {
                    arrow_schema::DataType::Binary => gather_binary::<i32>(&col, &idx),
                    arrow_schema::DataType::LargeBinary => gather_binary::<i64>(&col, &idx),
                    _ => None,
                };
                match parallel {
                    Some(a) => Ok(a),
                    None => arrow_select::interleave::interleave(&col, &idx),
                }
            })
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| err_at("external sort (gather)", e))?;
        let opts = arrow_array::RecordBatchOptions::new().with_row_count(Some(idx.len()));
        RecordBatch::try_new_with_options(schema, columns, &opts).map_err(|e| err_at("external sort (gather)", e))
    }
}

/// [`arrow_select::interleave::interleave`] of binary arrays (WKB: most of a batch's
/// bytes), with the values copied on every core; `None` (the caller interleaves) when an
/// array is not `GenericBinaryArray<O>` or the offsets would overflow `O`. The gather of
/// each sorted batch ran on one thread while the writer's workers waited for it.
fn gather_binary<O: arrow_array::OffsetSizeTrait>(cols: &[&dyn arrow_array::Array], idx: &[(usize, usize)]) -> Option<arrow_array::ArrayRef> {
    use arrow_array::{Array, GenericBinaryArray};
    use rayon::prelude::*;
    let arrays: Vec<&GenericBinaryArray<O>> = cols.iter().map(|a| a.as_any().downcast_ref::<GenericBinaryArray<O>>()).collect::<Option<_>>()?;
    let mut offsets: Vec<O> = Vec::with_capacity(idx.len() + 1);
    offsets.push(O::usize_as(0));
    let mut nulls = arrow_buffer::NullBufferBuilder::new(idx.len());
    let mut total = 0usize;
    for &(b, r) in idx {
        let a = arrays.get(b)?;
        if r >= a.len() {
            return None;
        }
        if a.is_null(r) {
            nulls.append_null();
        } else {
            nulls.append_non_null();
            total = total.checked_add(a.value(r).len())?;
        }
        offsets.push(O::from_usize(total)?);
    }
    const GROUP: usize = 4096;
    let mut values = vec![0u8; total];
    type Group<'r, 'b> = (&'r [(usize, usize)], &'b mut [u8]);
    let mut groups: Vec<Group> = Vec::with_capacity(idx.len().div_ceil(GROUP));
    let mut rest: &mut [u8] = &mut values;
    for (g, ix) in idx.chunks(GROUP).enumerate() {
        let len = offsets[g * GROUP + ix.len()].as_usize() - offsets[g * GROUP].as_usize();
        let (head, tail) = rest.split_at_mut(len);
        groups.push((ix, head));
        rest = tail;
    }
    groups.into_par_iter().for_each(|(ix, dst)| {
        let mut at = 0;
        for &(b, r) in ix {
            if !arrays[b].is_null(r) {
                let v = arrays[b].value(r);
                dst[at..at + v.len()].copy_from_slice(v);
                at += v.len();
            }
        }
    });
    let a = GenericBinaryArray::<O>::try_new(arrow_buffer::OffsetBuffer::new(offsets.into()), values.into(), nulls.finish()).ok()?;
    Some(std::sync::Arc::new(a))
}

impl Iterator for SortedBatches {
    type Item = Result<RecordBatch>;
    fn next(&mut self) -> Option<Result<RecordBatch>> {
        loop {
            if let Some(mut c) = self.current.take() {
                if c.next < c.order.len() {
                    let out = self.gather(&mut c);
                    self.current = Some(c);
                    if out.is_err() {
                        self.queue.clear();
                        self.current = None;
                    }
                    return Some(out);
                }
            }
            let src = self.queue.pop()?;
            match self.load(src) {
                Ok(l) => self.current = Some(l),
                Err(e) => {
                    self.queue.clear();
                    return Some(Err(e));
                }
            }
        }
    }
}

impl SortedBatches {
    /// The schema of the sorted batches (`None` when nothing was pushed).
    pub fn schema(&self) -> Option<SchemaRef> {
        self.schema.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use arrow_array::{Array, Int64Array, StringArray};
    use arrow_schema::{DataType, Field, Schema};

    fn batch(ids: &[i64]) -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false), Field::new("s", DataType::Utf8, true)]));
        let s: Vec<Option<String>> = ids.iter().map(|i| (i % 3 != 0).then(|| format!("v{i}"))).collect();
        RecordBatch::try_new(schema, vec![Arc::new(Int64Array::from(ids.to_vec())), Arc::new(StringArray::from(s))]).unwrap()
    }

    fn run(keys: Vec<u64>, chunk: usize, budget: usize) -> (Vec<i64>, Vec<Option<String>>, bool) {
        let n = keys.len();
        let dir = std::env::temp_dir();
        let mut s = HilbertSorter::new(keys, budget, dir);
        let ids: Vec<i64> = (0..n as i64).collect();
        for c in ids.chunks(chunk) {
            s.push(batch(c)).unwrap();
        }
        let spilled = s.spilled();
        let (mut out, mut strs) = (Vec::new(), Vec::new());
        for b in s.finish(7).unwrap() {
            let b = b.unwrap();
            assert!(b.num_rows() <= 7);
            let a = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
            out.extend(a.values().iter().copied());
            let t = b.column(1).as_any().downcast_ref::<StringArray>().unwrap();
            strs.extend((0..t.len()).map(|i| (!t.is_null(i)).then(|| t.value(i).to_string())));
        }
        (out, strs, spilled)
    }

    /// The expected order: stable sort of positions by key.
    fn expected(keys: &[u64]) -> Vec<i64> {
        order_of(keys).into_iter().map(i64::from).collect()
    }

    fn keys(n: usize, seed: u64) -> Vec<u64> {
        let mut r = crate::test_rng::SplitMix64::new(seed);
        (0..n).map(|_| if r.next_u64().is_multiple_of(10) { NULL_KEY } else { r.next_u64() % 50 }).collect()
    }

    #[test]
    fn in_memory_and_spilled_give_the_same_stable_order() {
        let k = keys(20_000, 7);
        let want = expected(&k);
        let (mem, mem_s, spilled) = run(k.clone(), 1000, 1 << 30);
        assert!(!spilled);
        assert_eq!(mem, want);
        // A 256 KiB budget over ~20 bytes a row spills into several buckets.
        let (disk, disk_s, spilled) = run(k, 1000, 256 << 10);
        assert!(spilled);
        assert_eq!(disk, want);
        assert_eq!(disk_s, mem_s);
        for (id, s) in disk.iter().zip(&disk_s) {
            assert_eq!(s.clone(), (id % 3 != 0).then(|| format!("v{id}")));
        }
    }

    /// Rows gathered a batch at a time from input batches of any size, empty ones too:
    /// every output batch but the last holds `batch_rows` rows, in key order.
    #[test]
    fn batches_are_gathered_across_uneven_input_batches() {
        let k = keys(100, 11);
        let want = expected(&k);
        let mut s = HilbertSorter::new(k, 1 << 30, std::env::temp_dir());
        let mut at = 0i64;
        for n in [0, 3, 0, 40, 1, 0, 56] {
            s.push(batch(&(at..at + n).collect::<Vec<_>>())).unwrap();
            at += n;
        }
        let out: Vec<RecordBatch> = s.finish(7).unwrap().collect::<Result<_>>().unwrap();
        assert_eq!(out.iter().map(|b| b.num_rows()).collect::<Vec<_>>(), [vec![7; 14], vec![2]].concat());
        let ids: Vec<i64> = out.iter().flat_map(|b| b.column(0).as_any().downcast_ref::<Int64Array>().unwrap().values().to_vec()).collect();
        assert_eq!(ids, want);
    }

    /// The parallel gather of binary values equals arrow's interleave, nulls included.
    #[test]
    fn binary_gather_equals_interleave() {
        use arrow_array::{BinaryArray, LargeBinaryArray};
        let a = BinaryArray::from(vec![Some(&b"ab"[..]), None, Some(b""), Some(b"xyz")]);
        let b = BinaryArray::from(vec![None, Some(&b"0123456789"[..])]);
        let cols: Vec<&dyn Array> = vec![&a, &b];
        let idx: Vec<(usize, usize)> = (0..9000).map(|i| if i % 3 == 0 { (1, i % 2) } else { (0, i % 4) }).collect();
        let got = gather_binary::<i32>(&cols, &idx).unwrap();
        let want = arrow_select::interleave::interleave(&cols, &idx).unwrap();
        assert_eq!(got.as_ref(), want.as_ref());
        let la = LargeBinaryArray::from(vec![Some(&b"ab"[..]), None]);
        let lc: Vec<&dyn Array> = vec![&la];
        assert_eq!(gather_binary::<i64>(&lc, &[(0, 1), (0, 0)]).unwrap().as_ref(), arrow_select::interleave::interleave(&lc, &[(0, 1), (0, 0)]).unwrap().as_ref());
        // Not binary, or a row past an array: left to interleave.
        assert!(gather_binary::<i32>(&lc, &[(0, 0)]).is_none());
        assert!(gather_binary::<i32>(&cols, &[(1, 2)]).is_none());
    }

    #[test]
    fn null_keys_come_last_in_input_order() {
        let k = vec![NULL_KEY, 5, NULL_KEY, 1, 5];
        let (out, _, _) = run(k, 2, 1 << 30);
        assert_eq!(out, vec![3, 1, 4, 0, 2]);
    }

    #[test]
    fn row_count_mismatch_is_an_error() {
        let mut s = HilbertSorter::new(vec![1, 2, 3], 1 << 30, std::env::temp_dir());
        assert!(s.push(batch(&[0, 1, 2, 3])).is_err());
        let mut s = HilbertSorter::new(vec![1, 2, 3], 1 << 30, std::env::temp_dir());
        s.push(batch(&[0, 1])).unwrap();
        assert!(s.finish(10).is_err());
    }

    #[test]
    fn collector_keys_match_hilbert_order() {
        let boxes: Vec<BBox> = (0..500)
            .map(|i| {
                let x = ((i * 37) % 101) as f64 - 50.0;
                let y = ((i * 53) % 89) as f64 - 40.0;
                if i % 17 == 0 {
                    BBox::EMPTY
                } else if i % 23 == 0 {
                    // Across the antimeridian: the extent takes the whole longitude range.
                    BBox { xmin: 170.0, ymin: y, xmax: -175.0, ymax: y + 1.0, ..BBox::EMPTY }
                } else {
                    BBox { xmin: x, ymin: y, xmax: x + (i % 5) as f64, ymax: y + 1.0, ..BBox::EMPTY }
                }
            })
            .collect();
        let mut c = KeyCollector::with_capacity(boxes.len());
        for b in &boxes {
            c.push(b);
        }
        let got: Vec<usize> = order_of(&c.keys()).into_iter().map(|i| i as usize).collect();
        assert_eq!(got, crate::spatial::hilbert_order(&boxes));
    }
}
