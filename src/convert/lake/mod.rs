//! Spatial tables from the lakehouse (issue #24): plain Parquet and CSV with a geometry in
//! any column, Iceberg tables (Havasu geometry encodings, Iceberg v3 geometry / geography
//! types) and GeoMesa's Trino layout — in and out of Marquet tables.
//!
//! Every source becomes a stream of Arrow record batches ([`Source`]). [`Converter`] turns
//! each batch's geometry columns (EWKB, WKB, WKT, GeoJSON text, lon/lat pairs) into ISO
//! WKB (HEP002 §7.1), checks GeoMesa `__<col>_bbox__` companions against the geometries
//! and drops the derived `__<col>_z2__` / `__<col>_xz2__` columns. The converted batches
//! are spooled to an uncompressed GeoParquet 1.1 file whose `geo` key says what was learnt
//! (the CRS from the values' SRIDs or the Iceberg type, the companion as `covering`), and
//! [`super::import_geoparquet`] / [`super::append_file`]
//! read it: one column mapping and one layout for every writer, memory bounded by one
//! batch (plus the import's external sort).
//!
//! - [`import_lake`] / `crate::convert::append::append_lake`: the entry points; [`super::convert`] and
//!   [`super::append_file`] call them for `.csv` / `.tsv` inputs, Iceberg tables (a table
//!   directory or a `*.metadata.json`), Parquet without GeoParquet metadata, Parquet with
//!   GeoMesa companions, and whenever [`LakeOptions`] names a geometry.
//! - `geomesa::export_geomesa`: a Marquet table → Parquet in GeoMesa's Trino layout.

internal_mod! {
    converter;
    decode;
    geomesa;
    iceberg;
    options;
}
pub mod raster;
mod source;

pub use converter::{import_lake, import_lake_into, wants_lake, Converter};
pub(crate) use converter::{lake_source, table_name};
pub use decode::{srid_crs, TextOrBinary};
pub(crate) use options::{arrow_err, pq_err, PARQUET_FIELD_ID};
pub use options::{geomesa_columns, FoundColumn, GeometrySource, LakeOptions, LakeReport, Source, SourceGeometry, SourceKind};
pub use source::{open_source, open_source_batched};
