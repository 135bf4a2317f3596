//! GeoParquet as an Arrow source of the hub (HEP002 §14.1, §14.3; issue #32): the file's
//! metadata is loaded once (parquet's [`ArrowReaderMetadata`]), the `geo` key and the
//! Parquet GEOMETRY / GEOGRAPHY logical types are merged into one description of each
//! geometry field, and every pass of the import re-reads the row groups it needs with that
//! metadata.

use std::collections::BTreeMap;
use std::path::Path;

use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder};
use parquet::arrow::ProjectionMask;
use parquet::basic::{EdgeInterpolationAlgorithm, LogicalType};

use crate::convert::hub::meta;
use crate::convert::hub::import::{import, ImportOptions, ImportReport};
use crate::convert::hub::source::{project, ArrowSource, Batches, Encoding, FirstRead, GeoColumnMeta, GeoField, SourceSchema};
use arrow_array::RecordBatch;
use crate::convert::hub::target::ImportTarget;
use crate::h5col::File;
use crate::convert::{code, fail, Finding};
use crate::error::{MarquetError, Result};
use crate::marquet::{Crs, Edges};

/// Import a GeoParquet file as a new Marquet table in `file` (HEP002 §14.1, §14.3).
pub fn import_geoparquet(input: &Path, file: &File, opts: &ImportOptions) -> Result<ImportReport> {
    import_geoparquet_into(input, ImportTarget::New(file), opts)
}

/// [`import_geoparquet`] into a new table or appended to an existing one ([`ImportTarget`]):
/// the columns are planned from the file alike, the rows stream into the one writer.
pub fn import_geoparquet_into(input: &Path, target: ImportTarget<'_>, opts: &ImportOptions) -> Result<ImportReport> {
    import(&mut GeoParquetSource::open(input)?, target, opts)
}

/// A GeoParquet file opened for import.
pub struct GeoParquetSource {
    file: std::fs::File,
    /// The file's path: each thread decoding row groups opens it anew (clones of one
    /// descriptor share its offset, which parquet's reader seeks).
    input: std::path::PathBuf,
    metadata: ArrowReaderMetadata,
    schema: SourceSchema,
    /// [`ArrowSource::keep_next_read`]'s budget, until the read it applies to starts.
    keep: Option<usize>,
    /// The batches of a kept read (every field), valid when `complete`, handed to the next
    /// read.
    kept: Vec<RecordBatch>,
    complete: bool,
}

impl GeoParquetSource {
    /// Open `input`: read its footer once, describe its geometry fields (findings about the
    /// `geo` key in [`SourceSchema::findings`]).
    pub fn open(input: &Path) -> Result<GeoParquetSource> {
        let path = input.display().to_string();
        crate::error::check_regular_file(input)?; // a FIFO would block (issue #19)
        let file = std::fs::File::open(input).map_err(|e| MarquetError::Io { path: path.clone(), source: e })?;
        let metadata = ArrowReaderMetadata::load(&file, ArrowReaderOptions::new()).map_err(|e| MarquetError::Parquet { path: path.clone(), source: e })?;
        let schema = describe(&path, &metadata)?;
        Ok(GeoParquetSource { file, input: input.to_path_buf(), metadata, schema, keep: None, kept: Vec::new(), complete: false })
    }
}

impl ArrowSource for GeoParquetSource {
    fn describe(&self) -> &SourceSchema {
        &self.schema
    }

    fn may_have_nulls(&self, root: usize) -> bool {
        column_may_have_nulls(self.metadata.metadata(), self.metadata.parquet_schema(), root)
    }

    fn keep_next_read(&mut self, budget: usize) {
        // The uncompressed size of the row groups: about the Arrow memory of all fields.
        let size: i64 = self.metadata.metadata().row_groups().iter().map(|rg| rg.total_byte_size()).sum();
        self.keep = (usize::try_from(size).is_ok_and(|s| s <= budget)).then_some(budget);
    }

    fn batches(&mut self, roots: &[usize], batch_rows: usize) -> Result<Batches<'_>> {
        let path = self.schema.path.clone();
        let roots = roots.to_vec();
        if self.complete {
            // Handed over, not shared: the import's stream is the last read, and the
            // batches go as it consumes them (later reads, if any, read the file).
            self.complete = false;
            let kept = std::mem::take(&mut self.kept);
            return Ok(Box::new(kept.into_iter().map(move |b| project(&b, &roots, &path))));
        }
        if let Some(budget) = self.keep.take() {
            // Every field once, row groups decoded on every core, kept (within the budget)
            // for the read after this one; this read gets its projection.
            let src = GroupReader { input: self.input.clone(), metadata: self.metadata.clone(), path: path.clone(), batch_rows };
            let all = (0..self.schema.schema.fields().len()).collect();
            let groups = ParallelGroups::start(src, all, self.metadata.metadata().num_row_groups());
            let first = FirstRead::new(Box::new(groups), &mut self.kept, &mut self.complete, budget);
            return Ok(Box::new(first.map(move |b| project(&b?, &roots, &path))));
        }
        self.read(&roots, batch_rows)
    }
}

impl GeoParquetSource {
    /// The batches of root fields `roots`, read from the file.
    fn read(&self, roots: &[usize], batch_rows: usize) -> Result<Batches<'static>> {
        let path = self.schema.path.clone();
        let f = self.file.try_clone().map_err(|e| MarquetError::Io { path: path.clone(), source: e })?;
        reader(f, &self.metadata, roots, None, batch_rows, path)
    }
}

/// A record batch reader of `roots` (and row groups `groups`, all when `None`) of `f`.
fn reader(f: std::fs::File, md: &ArrowReaderMetadata, roots: &[usize], groups: Option<Vec<usize>>, batch_rows: usize, path: String) -> Result<Batches<'static>> {
    let b = ParquetRecordBatchReaderBuilder::new_with_metadata(f, md.clone());
    let mask = ProjectionMask::roots(b.parquet_schema(), roots.iter().copied());
    let mut b = b.with_batch_size(batch_rows.max(1)).with_projection(mask);
    if let Some(g) = groups {
        b = b.with_row_groups(g);
    }
    let reader = b.build().map_err(|e| MarquetError::Parquet { path: path.clone(), source: e })?;
    Ok(Box::new(reader.map(move |b| b.map_err(|e| MarquetError::Arrow { path: path.clone(), source: e }))))
}

/// What a thread needs to decode one row group: each opens the file anew (clones of one
/// descriptor share the offset that parquet's reader seeks).
#[derive(Clone)]
struct GroupReader {
    input: std::path::PathBuf,
    metadata: ArrowReaderMetadata,
    path: String,
    batch_rows: usize,
}

impl GroupReader {
    fn group(&self, roots: &[usize], g: usize) -> Result<Vec<RecordBatch>> {
        let f = std::fs::File::open(&self.input).map_err(|e| MarquetError::Io { path: self.path.clone(), source: e })?;
        reader(f, &self.metadata, roots, Some(vec![g]), self.batch_rows, self.path.clone())?.collect()
    }
}

/// Every row group's batches in order, decoded ahead of the consumer: a producer thread
/// decodes as many row groups at a time as there are cores, each on a thread of its own,
/// and hands them over through a channel that holds one such window. Memory holds at most
/// two windows besides what the consumer keeps (a dictionary-encoded column can decode to
/// many times its size in the file, so the whole file is never decoded ahead).
///
/// Why ahead and on threads of its own: decoding a window and then surveying it left a
/// core idle in turn (a point convert used 1.4 of 2 cores while reading), and rayon's
/// workers, busy with a row group each, would hold up the consumer's own parallel work.
/// Dropping the iterator closes the channel; the producer stops at its next hand-over.
struct ParallelGroups {
    rx: std::sync::mpsc::Receiver<Result<Vec<RecordBatch>>>,
    ready: std::collections::VecDeque<RecordBatch>,
}

impl ParallelGroups {
    fn start(src: GroupReader, all: Vec<usize>, count: usize) -> ParallelGroups {
        let window = std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(1, 16);
        let (tx, rx) = std::sync::mpsc::sync_channel(window);
        let path = src.path.clone();
        let producer = move || {
            let mut next = 0;
            while next < count {
                let end = (next + window).min(count);
                let decoded: Vec<Result<Vec<RecordBatch>>> = std::thread::scope(|s| {
                    let handles: Vec<_> = (next..end).map(|g| {
                        let (src, all) = (&src, &all);
                        s.spawn(move || src.group(all, g))
                    }).collect();
                    handles
                        .into_iter()
                        .map(|h| h.join().unwrap_or_else(|_| Err(MarquetError::InvalidArgument(format!("{}: a row group's decoder panicked", src.path)))))
                        .collect()
                });
                next = end;
                for d in decoded {
                    let failed = d.is_err();
                    // The consumer is gone (dropped, or stopped at an error): stop too.
                    if tx.send(d).is_err() || failed {
                        return;
                    }
                }
            }
        };
        let rx = match std::thread::Builder::new().name("marquet-parquet-read".into()).spawn(producer) {
            Ok(_) => rx,
            Err(e) => {
                let (tx, rx) = std::sync::mpsc::sync_channel(1);
                let _ = tx.send(Err(MarquetError::Io { path, source: e }));
                rx
            }
        };
        ParallelGroups { rx, ready: std::collections::VecDeque::new() }
    }
}

impl Iterator for ParallelGroups {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Result<RecordBatch>> {
        while self.ready.is_empty() {
            match self.rx.recv() {
                Ok(Ok(b)) => self.ready.extend(b),
                Ok(Err(e)) => return Some(Err(e)),
                // The producer has sent every row group.
                Err(_) => return None,
            }
        }
        self.ready.pop_front().map(Ok)
    }
}

/// The geometry fields of the file: the `geo` key merged with the native logical types.
fn describe(path: &str, md: &ArrowReaderMetadata) -> Result<SourceSchema> {
    let pmd = md.metadata();
    let schema = md.schema().clone();
    let sdescr = md.parquet_schema();
    let kvs: BTreeMap<String, String> = pmd
        .file_metadata()
        .key_value_metadata()
        .map(|v| v.iter().filter_map(|kv| kv.value.clone().map(|val| (kv.key.clone(), val))).collect())
        .unwrap_or_default();
    let kv = |k: &str| kvs.get(k).cloned();
    let mut findings: Vec<Finding> = Vec::new();
    let mut version = None;

    // Native logical types of root columns.
    let roots = sdescr.root_schema().get_fields();
    let mut native: BTreeMap<String, (Option<String>, Option<EdgeInterpolationAlgorithm>, bool)> = BTreeMap::new();
    for f in roots {
        if !f.is_primitive() {
            continue;
        }
        match f.get_basic_info().logical_type_ref() {
            Some(LogicalType::Geometry(g)) => {
                native.insert(f.name().to_string(), (g.crs.clone(), None, false));
            }
            Some(LogicalType::Geography(g)) => {
                native.insert(f.name().to_string(), (g.crs.clone(), g.algorithm(), true));
            }
            _ => {}
        }
    }

    // The `geo` key.
    let mut geo_cols: Vec<GeoColumnMeta> = match kvs.get("geo") {
        Some(json) => {
            let g = meta::parse_geo(path, json, &mut findings, &kv)?;
            version = Some(g.version.clone());
            g.columns
        }
        None => {
            if native.is_empty() {
                return Err(fail(
                    path,
                    code::METADATA_MISSING,
                    "no `geo` key in the Parquet metadata and no GEOMETRY/GEOGRAPHY column: not a GeoParquet file",
                ));
            }
            findings.push(Finding::new(
                code::METADATA_MISSING,
                None,
                "no `geo` key in the Parquet metadata; geometry columns taken from the Parquet GEOMETRY/GEOGRAPHY logical types",
            ));
            Vec::new()
        }
    };
    // Merge native types: columns only in the native schema join (in schema order);
    // for both, the native type decides edges, the `geo` PROJJSON the CRS.
    for f in roots {
        let Some((ncrs, alg, geog)) = native.get(f.name()) else { continue };
        let (crs, note) = match ncrs {
            None => (Crs::Default, None),
            Some(s) => meta::crs_from_string(s, &kv),
        };
        let nedges = if *geog { edges_from_algorithm(alg.unwrap_or_default()) } else { Edges::Planar };
        match geo_cols.iter_mut().find(|c| c.name == f.name()) {
            Some(c) => {
                c.native_type = true;
                if c.edges != nedges {
                    findings.push(Finding::new(
                        code::EDGES_MISMATCH,
                        Some(f.name()),
                        format!(
                            "`geo` says edges {} but the Parquet logical type says {}; the logical type wins",
                            c.edges.geoparquet_name(),
                            nedges.geoparquet_name()
                        ),
                    ));
                    c.edges = nedges;
                }
                // An explicit CRS wins over an implied default; two explicit ones that
                // differ are marked, and refused by the import unless --crs states the CRS
                // (meta::reconcile_crs, meta::check_crs_conflicts, issue #32).
                meta::reconcile_crs(c, ncrs.as_deref(), (crs, note), &mut findings);
            }
            None => {
                if let Some(n) = &note {
                    findings.push(Finding::new(code::CRS_NOT_PROJJSON, Some(f.name()), n.clone()));
                }
                let mut m = GeoColumnMeta::wkb(f.name(), crs);
                m.crs_note = note;
                m.crs_explicit = ncrs.is_some();
                m.edges = nedges;
                m.native_type = true;
                geo_cols.push(m);
            }
        }
    }

    // How the report names each field's origin (the hub checks the fields' types).
    let mut geometry = Vec::with_capacity(geo_cols.len());
    for g in geo_cols {
        let source = match (g.encoding, g.native_type) {
            (Encoding::Wkb, true) if g.edges.is_planar() => "WKB, Parquet GEOMETRY".to_string(),
            (Encoding::Wkb, true) => format!("WKB, Parquet GEOGRAPHY ({})", g.edges.geoparquet_name()),
            (Encoding::Wkb, false) => "WKB (BYTE_ARRAY)".to_string(),
            (e, _) => format!("geoarrow {}", e.name()),
        };
        let crs_text = g.crs_note.as_ref().map(|n| source_crs_text(&kvs, &g.name, n));
        geometry.push(GeoField { meta: g, source, crs_text });
    }
    Ok(SourceSchema {
        path: path.to_string(),
        schema,
        geometry,
        rows: u64::try_from(pmd.file_metadata().num_rows()).ok(),
        findings,
        geoparquet_version: version,
        native_types: !native.is_empty(),
    })
}

/// The CRS string as the `geo` JSON wrote it, for the column's description.
fn source_crs_text(kvs: &BTreeMap<String, String>, col: &str, note: &str) -> String {
    if let Some(geo) = kvs.get("geo") {
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(geo) {
            if let Some(s) = v.get("columns").and_then(|c| c.get(col)).and_then(|c| c.get("crs")).and_then(|c| c.as_str()) {
                return s.to_string();
            }
        }
    }
    note.to_string()
}

fn edges_from_algorithm(a: EdgeInterpolationAlgorithm) -> Edges {
    match a {
        EdgeInterpolationAlgorithm::SPHERICAL => Edges::Spherical,
        EdgeInterpolationAlgorithm::VINCENTY => Edges::Vincenty,
        EdgeInterpolationAlgorithm::THOMAS => Edges::Thomas,
        EdgeInterpolationAlgorithm::ANDOYER => Edges::Andoyer,
        EdgeInterpolationAlgorithm::KARNEY => Edges::Karney,
        EdgeInterpolationAlgorithm::_Unknown(n) => Edges::Unknown(format!("algorithm {n}")),
    }
}

/// Can root column `root` hold nulls? Only the row groups' statistics say it cannot.
fn column_may_have_nulls(md: &parquet::file::metadata::ParquetMetaData, sd: &parquet::schema::types::SchemaDescriptor, root: usize) -> bool {
    for leaf in 0..sd.num_columns() {
        if sd.get_column_root_idx(leaf) != root {
            continue;
        }
        for rg in md.row_groups() {
            match rg.column(leaf).statistics().and_then(|s| s.null_count_opt()) {
                Some(0) => {}
                _ => return true,
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The read after a kept one is served from memory (issue #31: the import's survey and
    /// stream read a GeoParquet file once): with the file emptied in between, it still
    /// gives every row; without keeping (a budget too small), it reads the emptied file.
    #[test]
    fn a_kept_read_serves_the_next_one() {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/crs/geopandas_25832.parquet");
        for budget in [usize::MAX, 1] {
            let dir = std::env::temp_dir().join(format!("marquet-keep-{}-{budget}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            let path = dir.join("k.parquet");
            std::fs::copy(&src, &path).unwrap();
            let mut s = GeoParquetSource::open(&path).unwrap();
            let n = s.describe().schema.fields().len();
            let rows = |b: Batches<'_>| b.map(|b| b.map(|b| (b.num_rows(), b.num_columns()))).collect::<Result<Vec<_>>>();
            s.keep_next_read(budget);
            let first = rows(s.batches(&[0], 1024).unwrap()).unwrap();
            assert!(first.iter().all(|&(_, c)| c == 1), "the first read is projected");
            std::fs::write(&path, b"").unwrap();
            let second = rows(s.batches(&(0..n).collect::<Vec<_>>(), 1024).unwrap());
            if budget == usize::MAX {
                let second = second.unwrap();
                assert_eq!(second.iter().map(|r| r.0).sum::<usize>(), first.iter().map(|r| r.0).sum::<usize>());
                assert!(second.iter().all(|&(_, c)| c == n));
            } else {
                assert!(second.is_err(), "a read past the budget goes to the file");
            }
            std::fs::remove_dir_all(&dir).ok();
        }
    }

    /// A file whose size in Parquet fits the budget but whose batches do not (a
    /// dictionary-encoded column decodes to many times its size): every row still comes
    /// through the first read, nothing is kept past the budget, and the read after it goes
    /// to the file.
    #[test]
    fn a_read_past_the_budget_is_not_kept() {
        use arrow_array::{ArrayRef, BinaryArray, StringArray};
        use std::sync::Arc;
        let dir = std::env::temp_dir().join(format!("marquet-keep-dict-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("d.parquet");
        let n = 20_000;
        let point: Vec<u8> = [vec![1u8, 1, 0, 0, 0], 1f64.to_le_bytes().to_vec(), 2f64.to_le_bytes().to_vec()].concat();
        let long = "x".repeat(1_000);
        let batch = RecordBatch::try_from_iter([
            ("geometry", Arc::new(BinaryArray::from_iter_values(std::iter::repeat_n(point.as_slice(), n))) as ArrayRef),
            ("label", Arc::new(StringArray::from_iter_values(std::iter::repeat_n(long.as_str(), n))) as ArrayRef),
        ])
        .unwrap();
        let geo = r#"{"version":"1.1.0","primary_column":"geometry","columns":{"geometry":{"encoding":"WKB","geometry_types":["Point"]}}}"#;
        let schema = batch.schema();
        let props = parquet::file::properties::WriterProperties::builder().set_max_row_group_row_count(Some(n / 4)).build();
        let mut w = parquet::arrow::ArrowWriter::try_new(std::fs::File::create(&path).unwrap(), schema, Some(props)).unwrap();
        w.write(&batch).unwrap();
        w.append_key_value_metadata(parquet::file::metadata::KeyValue::new("geo".to_string(), geo.to_string()));
        w.close().unwrap();
        let mut s = GeoParquetSource::open(&path).unwrap();
        let in_file: i64 = s.metadata.metadata().row_groups().iter().map(|rg| rg.total_byte_size()).sum();
        let budget = 4 << 20;
        assert!((in_file as usize) < budget, "{in_file} bytes in the file");
        s.keep_next_read(budget);
        assert!(s.keep.is_some(), "the file's size fits the budget");
        let rows: usize = s.batches(&[0, 1], 1024).unwrap().map(|b| b.unwrap().num_rows()).sum();
        assert_eq!(rows, n);
        assert!(!s.complete && s.kept.is_empty(), "20 MB of labels were not kept");
        std::fs::write(&path, b"").unwrap();
        assert!(s.batches(&[0], 1024).unwrap().collect::<Result<Vec<_>>>().is_err(), "the next read goes to the file");
        std::fs::remove_dir_all(&dir).ok();
    }

    /// The row groups decoded ahead on threads of their own come in file order; a row group
    /// that does not decode ends the read with its error; a read dropped part-way, with the
    /// producer still ahead, neither hangs nor holds the file (the source is read again).
    #[test]
    fn row_groups_read_ahead_in_order_and_stop_at_an_error_or_a_drop() {
        use arrow_array::{ArrayRef, BinaryArray, Int64Array};
        use std::sync::Arc;
        let dir = std::env::temp_dir().join(format!("marquet-read-ahead-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("g.parquet");
        let (n, per_group) = (24_000usize, 1_000usize);
        let point = |i: usize| [vec![1u8, 1, 0, 0, 0], (i as f64).to_le_bytes().to_vec(), 2f64.to_le_bytes().to_vec()].concat();
        let points: Vec<Vec<u8>> = (0..n).map(point).collect();
        let batch = RecordBatch::try_from_iter([
            ("geometry", Arc::new(BinaryArray::from_iter_values(points.iter().map(|p| p.as_slice()))) as ArrayRef),
            ("id", Arc::new(Int64Array::from_iter_values(0..n as i64)) as ArrayRef),
        ])
        .unwrap();
        let geo = r#"{"version":"1.1.0","primary_column":"geometry","columns":{"geometry":{"encoding":"WKB","geometry_types":["Point"]}}}"#;
        let props = parquet::file::properties::WriterProperties::builder()
            .set_max_row_group_row_count(Some(per_group))
            .set_compression(parquet::basic::Compression::ZSTD(Default::default()))
            .set_dictionary_enabled(false)
            .build();
        let mut w = parquet::arrow::ArrowWriter::try_new(std::fs::File::create(&path).unwrap(), batch.schema(), Some(props)).unwrap();
        w.write(&batch).unwrap();
        w.append_key_value_metadata(parquet::file::metadata::KeyValue::new("geo".to_string(), geo.to_string()));
        w.close().unwrap();
        let ids = |b: &RecordBatch| b.column(1).as_any().downcast_ref::<Int64Array>().unwrap().values().to_vec();
        let mut s = GeoParquetSource::open(&path).unwrap();
        assert_eq!(s.metadata.metadata().num_row_groups(), n / per_group);
        s.keep_next_read(usize::MAX);
        let got: Vec<i64> = s.batches(&[0, 1], 300).unwrap().flat_map(|b| ids(&b.unwrap())).collect();
        assert_eq!(got, (0..n as i64).collect::<Vec<_>>());

        // Dropped after one batch: the producer stops at its next hand-over.
        let mut s = GeoParquetSource::open(&path).unwrap();
        s.keep_next_read(usize::MAX);
        assert_eq!(ids(&s.batches(&[0, 1], 300).unwrap().next().unwrap().unwrap())[0], 0);
        s.keep_next_read(usize::MAX);
        assert_eq!(s.batches(&[0, 1], 300).unwrap().map(|b| b.unwrap().num_rows()).sum::<usize>(), n);

        // Row group 13's id column chunk damaged: the rows before it, then its error, then
        // nothing.
        let md = s.metadata.metadata().row_group(13).column(1).clone();
        let (start, len) = md.byte_range();
        let mut bytes = std::fs::read(&path).unwrap();
        for b in &mut bytes[start as usize + len as usize / 2..(start + len) as usize - 4] {
            *b = 0x5A;
        }
        std::fs::write(&path, &bytes).unwrap();
        let mut s = GeoParquetSource::open(&path).unwrap();
        s.keep_next_read(usize::MAX);
        let mut rows = 0;
        let mut errors = Vec::new();
        for b in s.batches(&[0, 1], 1_000).unwrap() {
            match b {
                Ok(b) if errors.is_empty() => rows += b.num_rows(),
                Ok(_) => panic!("a batch after the error"),
                Err(e) => errors.push(e.to_string()),
            }
        }
        assert_eq!((rows, errors.len()), (13 * per_group, 1), "{errors:?}");
        assert!(errors[0].contains("g.parquet"), "{errors:?}");
        std::fs::remove_dir_all(&dir).ok();
    }
}
