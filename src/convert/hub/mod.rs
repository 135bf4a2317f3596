//! The hub of every conversion (issue #32): the whole mapping between Arrow and H5Col /
//! Marquet tables, both directions, in one place — in the shape of geoarrow-rs's format
//! crates.
//!
//! - In: a format reader describes its schema once ([`source::SourceSchema`]: the Arrow
//!   schema, the geometry fields with CRS, edges, encoding, covering) and yields record
//!   batches ([`source::ArrowSource`]); [`import::import`] plans the columns (`plan`,
//!   [`categorical`], [`nested_json`]), surveys the source once, puts the rows into Hilbert
//!   order ([`sort`]) and streams them into the one writer ([`target`]).
//! - Out: every format's writer consumes an [`export::ExportSource`]: record batches in
//!   the hub's form (WKB geometry fields described by the table's geometry column
//!   metadata); [`export::TableSource`] reads a Marquet table so, through
//!   [`arrow::ArrowPlan`] (GeoArrow extension fields, flattened structs nested again,
//!   [`renest`]).
//!
//! Format modules (`geoparquet`, `geojson`, `fgb`, `gpkg`, `shp`, `lake`) use the hub and
//! never each other; the hub uses no format module (`scripts/convert-import-graph.py`
//! checks that the import graph has no cycle).

pub mod arrow;
pub mod categorical;
pub mod cells;
pub mod covering_in;
pub mod export;
#[cfg(feature = "gis")]
pub mod features;
pub mod geoarrow;
pub mod geojson_geometry;
pub mod import;
pub mod meta;
pub mod nested_json;
pub(crate) mod native;
pub(crate) mod plan;
pub mod renest;
pub mod sort;
pub mod source;
pub mod tables;
pub mod target;

/// Arrow field metadata key of an extension type's name.
pub const EXTENSION_NAME: &str = "ARROW:extension:name";
/// Arrow field metadata key of an extension type's metadata.
pub const EXTENSION_METADATA: &str = "ARROW:extension:metadata";

/// Rows per record batch read or written, and per exported row group: one Marquet row block
/// at the default chunk length (HEP002 §10.2).
pub const DEFAULT_BATCH_ROWS: usize = 65_536;

/// Longest string (bytes, without the NUL) stored as a fixed-length UTF-8 column; longer
/// columns become list-of-bytes columns.
pub const DEFAULT_MAX_FIXED_STRING: usize = 4096;
