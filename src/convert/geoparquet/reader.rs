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
use crate::convert::hub::source::{ArrowSource, Batches, Encoding, GeoColumnMeta, GeoField, SourceSchema};
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
    metadata: ArrowReaderMetadata,
    schema: SourceSchema,
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
        Ok(GeoParquetSource { file, metadata, schema })
    }
}

impl ArrowSource for GeoParquetSource {
    fn describe(&self) -> &SourceSchema {
        &self.schema
    }

    fn may_have_nulls(&self, root: usize) -> bool {
        column_may_have_nulls(self.metadata.metadata(), self.metadata.parquet_schema(), root)
    }

    fn batches(&mut self, roots: &[usize], batch_rows: usize) -> Result<Batches<'_>> {
        let path = self.schema.path.clone();
        let f = self.file.try_clone().map_err(|e| MarquetError::Io { path: path.clone(), source: e })?;
        let b = ParquetRecordBatchReaderBuilder::new_with_metadata(f, self.metadata.clone());
        let mask = ProjectionMask::roots(b.parquet_schema(), roots.iter().copied());
        let reader = b
            .with_batch_size(batch_rows.max(1))
            .with_projection(mask)
            .build()
            .map_err(|e| MarquetError::Parquet { path: path.clone(), source: e })?;
        Ok(Box::new(reader.map(move |b| b.map_err(|e| MarquetError::Arrow { path: path.clone(), source: e }))))
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
