//! Marquet → GeoParquet (HEP002 §14.2): 2.0 with Parquet GEOMETRY / GEOGRAPHY logical types
//! and per-row-group geospatial statistics, or the 1.1 / 1.0 flavours (WKB BYTE_ARRAY with
//! `geo` metadata only). Rows are read in row ranges of one row group each (bounded memory);
//! `geometry_types` and `bbox` are computed exactly while the rows stream past and the `geo`
//! key is written into the footer at the end.

use std::collections::HashMap;
use std::path::Path;

use arrow_array::{Array, BinaryArray};
use parquet::arrow::arrow_writer::ArrowWriterOptions;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;

use crate::convert::hub::export::{ExportShape, ExportSource, TableSource};
pub use super::export_covering::CoveringChoice;
use crate::convert::hub::meta::{self, WriteColumn};
use crate::convert::{err_at, DEFAULT_BATCH_ROWS};
use crate::error::{MarquetError, Result};
use crate::h5col::File;
use crate::marquet::{GeometryColumnInfo, MarquetTable};

/// The GeoParquet flavour to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GeoParquetVersion {
    /// 2.0: Parquet GEOMETRY / GEOGRAPHY logical types + `geo` version "2.0.0".
    #[default]
    V2_0,
    /// 1.1: WKB BYTE_ARRAY + `geo` version "1.1.0" (with covering).
    V1_1,
    /// 1.0: WKB BYTE_ARRAY + `geo` version "1.0.0" (no covering metadata).
    V1_0,
}

impl GeoParquetVersion {
    /// The `geo` `version` string.
    pub fn geo_version(self) -> &'static str {
        match self {
            GeoParquetVersion::V2_0 => "2.0.0",
            GeoParquetVersion::V1_1 => "1.1.0",
            GeoParquetVersion::V1_0 => "1.0.0",
        }
    }
    /// Parse "2", "2.0", "2.0.0", "1.1", "1.0" …
    pub fn parse(s: &str) -> Option<GeoParquetVersion> {
        match meta::parse_version(s)? {
            (2, _) => Some(GeoParquetVersion::V2_0),
            (1, 1) => Some(GeoParquetVersion::V1_1),
            (1, 0) => Some(GeoParquetVersion::V1_0),
            _ => None,
        }
    }
}

/// Parquet compression for the exported file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ExportCompression {
    /// Zstandard at its default level (the default).
    #[default]
    Zstd,
    /// Snappy.
    Snappy,
    /// No compression.
    None,
}

/// Options for [`export_geoparquet`].
#[derive(Debug, Clone)]
pub struct ExportOptions {
    /// GeoParquet version to write (default 2.0, HEP002 §14.2).
    pub version: GeoParquetVersion,
    /// Rows per row group (and per read): one row block by default.
    pub row_group_rows: usize,
    /// Parquet compression codec of every column chunk.
    pub compression: ExportCompression,
    /// Called after each row group with the rows written so far.
    pub progress: crate::Progress,
    /// Which geometry columns get a bbox covering column (default: those that are not
    /// point columns; `convert --covering` / `--no-covering`, issue #22).
    pub covering: CoveringChoice,
}

impl Default for ExportOptions {
    fn default() -> Self {
        ExportOptions {
            version: GeoParquetVersion::V2_0,
            row_group_rows: DEFAULT_BATCH_ROWS,
            compression: ExportCompression::Zstd,
            progress: crate::Progress::default(),
            covering: CoveringChoice::default(),
        }
    }
}

pub use crate::convert::hub::arrow::ExportReport;

pub(crate) use crate::convert::hub::arrow::Summary;

/// Export table `table` of `file` to a GeoParquet file at `output` (HEP002 §14.2).
pub fn export_geoparquet(file: &File, table: &str, output: &Path, opts: &ExportOptions) -> Result<ExportReport> {
    let t = MarquetTable::open(file, table)?;
    write_geoparquet(&mut TableSource::for_export(&t, shape(opts))?, output, opts)
}

/// The columns as the GeoParquet writer wants them: GeoArrow extension fields for 2.0 (the
/// Parquet logical types), struct columns nested again (issue #22), the table's own
/// covering columns (reused when [`ExportOptions::covering`] keeps them).
pub fn shape(opts: &ExportOptions) -> ExportShape {
    ExportShape { geoarrow: opts.version == GeoParquetVersion::V2_0, renest: true, coverings: true }
}

/// The GeoParquet writer (HEP002 §14.2): writes the batches of `src` — the hub's form, in
/// `shape` — to a GeoParquet file at `output`, one row group per `row_group_rows`.
pub fn write_geoparquet(src: &mut dyn ExportSource, output: &Path, opts: &ExportOptions) -> Result<ExportReport> {
    let out_path = output.display().to_string();
    let mut report = ExportReport {
        version: opts.version.geo_version().into(),
        native_types: opts.version == GeoParquetVersion::V2_0,
        ..Default::default()
    };
    // Geometry columns this library cannot interpret (ruling R16, HEP002 §6.2) are exported
    // as the ordinary H5Col data they also are, and reported (crate::convert::hub::arrow::ArrowPlan).
    report.notes.extend(src.notes().iter().cloned());
    report.skipped.extend(src.skipped().iter().cloned());
    let geometry_columns = src.geometry_columns().to_vec();
    let geo_names: Vec<String> = geometry_columns.iter().map(|g| g.name.clone()).collect();
    let primary = geo_names.first().cloned();
    let infos: HashMap<String, GeometryColumnInfo> = geometry_columns.iter().map(|g| (g.name.clone(), g.clone())).collect();
    // Bbox covering columns: the table's own or computed (super::export_covering).
    let cov = super::export_covering::plan_coverings(&src.schema(), &geometry_columns, opts.covering);
    let schema = cov.schema();
    super::export_covering::check_unique_names(&schema, &out_path)?;
    let geo_fields: Vec<(usize, String)> =
        schema.fields().iter().enumerate().filter(|(_, f)| infos.contains_key(f.name())).map(|(i, f)| (i, f.name().clone())).collect();
    let compression = match opts.compression {
        ExportCompression::Zstd => Compression::ZSTD(ZstdLevel::default()),
        ExportCompression::Snappy => Compression::SNAPPY,
        ExportCompression::None => Compression::UNCOMPRESSED,
    };
    let rg = opts.row_group_rows.max(1);
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(rg))
        .set_compression(compression)
        .set_created_by(format!("marquet version {}", env!("CARGO_PKG_VERSION")))
        .build();
    let out = std::fs::File::create(output).map_err(|e| MarquetError::Io { path: out_path.clone(), source: e })?;
    // No ARROW:schema up front: it would lack the `geo` key, which is only known (exactly)
    // once every row is written; it is appended to the footer at the end.
    let mut wopts = ArrowWriterOptions::new().with_properties(props).with_skip_arrow_metadata(true);
    if opts.version == GeoParquetVersion::V2_0 {
        // OGC:CRS84 stated in the logical type too (super::export_crs, issue #22).
        if let Some(sd) = super::export_crs::schema_with_lonlat_crs(&schema, &infos, &out_path)? {
            wopts = wopts.with_parquet_schema(sd);
        }
    }
    let mut w = ArrowWriter::try_new_with_options(out, schema.clone(), wopts).map_err(|e| err_at(&out_path, e))?;
    let n = src.rows();
    let mut summaries: HashMap<String, Summary> = geo_names.iter().map(|g| (g.clone(), Summary::for_column(&infos[g]))).collect();
    let mut seen = super::pandas_meta::Seen::new(schema.fields().len());
    let mut s = 0u64;
    for batch in src.batches(rg)? {
        let batch = cov.batch(&batch?, s, &out_path)?;
        let e = s + batch.num_rows() as u64;
        seen.add(&batch);
        for (i, name) in &geo_fields {
            let info = &infos[name];
            let sm = summaries.get_mut(name).ok_or_else(|| MarquetError::InvalidArgument(name.clone()))?;
            let b = batch.column(*i).as_any().downcast_ref::<BinaryArray>().ok_or_else(|| MarquetError::InvalidArgument(name.clone()))?;
            for (k, w) in b.iter().enumerate() {
                if let Some(w) = w {
                    sm.add(w, &info.path, s + k as u64)?;
                }
            }
        }
        w.write(&batch).map_err(|e| err_at(&out_path, e))?;
        w.flush().map_err(|e| err_at(&out_path, e))?;
        report.row_groups += 1;
        s = e;
        opts.progress.report(s, Some(n));
    }
    // The `geo` key, exact.
    let mut wcols = Vec::new();
    for g in &geo_names {
        let info = &infos[g];
        let sm = &summaries[g];
        let mut types = sm.sorted_types();
        if n == 0 {
            types = info.types.clone().unwrap_or_default();
        }
        if opts.version != GeoParquetVersion::V2_0 && types.iter().any(|t| t.dims.has_m()) {
            report.notes.push(format!(
                "column {g}: M coordinates in a {} file (its geometry_types allow only \" Z\")",
                opts.version.geo_version()
            ));
        }
        if opts.version != GeoParquetVersion::V2_0 && !matches!(info.edges, crate::marquet::Edges::Planar | crate::marquet::Edges::Spherical) {
            report.notes.push(format!(
                "column {g}: edges {} written to a {} file (which knows only planar and spherical)",
                info.edges.geoparquet_name(),
                opts.version.geo_version()
            ));
        }
        report.geometry_columns.push((g.clone(), types.clone()));
        wcols.push(WriteColumn {
            name: g.clone(),
            types,
            crs: info.crs.clone(),
            edges: info.edges.clone(),
            orientation_ccw: info.orientation_ccw,
            epoch: info.epoch,
            bbox: sm.bbox_vec(opts.version == GeoParquetVersion::V2_0),
            covering: cov.covering.get(g).cloned(),
            encoding: "WKB",
        });
    }
    if opts.version == GeoParquetVersion::V1_0 && wcols.iter().any(|c| c.covering.is_some()) {
        report.notes.push("1.0 has no covering: the bbox columns are described with the 1.1 `covering` key, which 1.0 readers ignore".into());
    }
    let mut kv: HashMap<String, String> = HashMap::new();
    match &primary {
        Some(primary) => {
            kv.insert("geo".to_string(), meta::write_geo(opts.version.geo_version(), primary, &wcols));
        }
        None => report.notes.push("no geometry column can be interpreted: written as plain Parquet without `geo` metadata".into()),
    }
    // pandas dtypes (issue #22), and the Arrow schema written last, with the whole footer
    // metadata in it, as pyarrow writes it: readers take dictionary (categorical) types and
    // timezones from it.
    // An ordered categorical whose row groups met its labels out of order comes back from
    // the dictionary pages in another order: it is declared unordered (see pandas_meta::Seen).
    let fields: Vec<arrow_schema::Field> = schema
        .fields()
        .iter()
        .enumerate()
        .map(|(i, f)| {
            if f.dict_is_ordered() == Some(true) && !seen.in_order(i) {
                report.notes.push(format!(
                    "column {}: an ordered categorical whose rows do not meet its labels in order: written unordered (a Parquet dictionary page lists the labels as the rows meet them)",
                    f.name()
                ));
                return f.as_ref().clone().with_dict_is_ordered(false);
            }
            f.as_ref().clone()
        })
        .collect();
    let schema = arrow_schema::Schema::new(fields);
    kv.insert(super::pandas_meta::PANDAS_KEY.to_string(), super::pandas_meta::pandas_metadata(&schema, &seen));
    let arrow_schema = parquet::arrow::encode_arrow_schema(&schema.clone().with_metadata(kv.clone()));
    let mut kv: Vec<(String, String)> = kv.into_iter().collect();
    kv.sort();
    for (k, v) in kv {
        w.append_key_value_metadata(KeyValue::new(k, v));
    }
    w.append_key_value_metadata(KeyValue::new(parquet::arrow::ARROW_SCHEMA_META_KEY.to_string(), arrow_schema));
    w.close().map_err(|e| err_at(&out_path, e))?;
    report.rows = s;
    Ok(report)
}
