//! GeoParquet and GeoJSON in and out of Marquet tables (HEP002 §14).
//!
//! - [`import_geoparquet`]: GeoParquet 0.x / 1.0 / 1.1 (WKB and the GeoArrow native
//!   encodings) / 2.0 (Parquet GEOMETRY and GEOGRAPHY logical types, with or without `geo`
//!   metadata) → a Marquet table, streamed record batch by record batch.
//! - [`export_geoparquet`]: a Marquet table → GeoParquet 2.0 (native logical types, `geo`
//!   metadata 2.0.0, per-row-group geospatial statistics) or the 1.1 / 1.0 flavours, one
//!   row group per row block.
//! - [`import_geojson`] / [`export_geojson`]: RFC 7946 FeatureCollections.
//! - [`convert`]: picks the direction from the file extensions (for the CLI).
//! - [`append_file`]: appends a GeoParquet, GeoJSON or Marquet file to an existing table.
//! - [`ArrowPlan`], [`import_record_batches`], [`append_record_batches`]: Marquet tables as
//!   in-memory Arrow record batches and back (for bindings: `python/`).
//!
//! The mapping is documented in `docs/geoparquet-mapping.md`. Nothing is dropped
//! silently: columns that have no HEP001 counterpart are listed in
//! [`ImportReport::skipped`], and deviations from the GeoParquet specification in
//! [`ImportReport::findings`] with the failure codes of the geoparquet-testing corpus
//! (`bad_data/manifest.json`); with [`ImportOptions::strict`] every finding is an error.
//!
//! # Example
//!
//! Natural Earth's 243 cities from GeoParquet into a Marquet point column (HEP002 §7.6),
//! out to GeoParquet 2.0 and in again: the geometries survive the round trip byte for byte.
//!
//! ```
//! use std::path::Path;
//! use marquet::convert::{export_geoparquet, import_geoparquet, ExportOptions, ImportOptions};
//! use marquet::h5col::File;
//! use marquet::{Table, StorageForm};
//! use marquet::Dimensions;
//!
//! let src = Path::new(env!("CARGO_MANIFEST_DIR"))
//!     .join("testdata/peers/geoarrow-data/natural-earth/natural-earth_cities_geo.parquet");
//! let h5 = std::env::temp_dir().join(format!("marquet-doc-convert-{}.h5", std::process::id()));
//! let parquet = h5.with_extension("parquet");
//! let file = File::create(&h5)?;
//!
//! let imported = import_geoparquet(&src, &file, &ImportOptions::new("/cities"))?;
//! assert_eq!(imported.rows, 243);
//! let geometry = &imported.geometry_columns[0];
//! assert_eq!(geometry.form, StorageForm::Point { dims: Dimensions::Xy, f32: false });
//!
//! let exported = export_geoparquet(&file, "/cities", &parquet, &ExportOptions::default())?;
//! assert_eq!((exported.rows, exported.version.as_str()), (243, "2.0.0"));
//! let again = import_geoparquet(&parquet, &file, &ImportOptions::new("/again"))?;
//! assert_eq!(again.rows, 243);
//!
//! let (a, b) = (Table::open(&file, "/cities")?, Table::open(&file, "/again")?);
//! assert_eq!(a.read_wkb(&geometry.name, 0, 243)?, b.read_wkb(&geometry.name, 0, 243)?);
//! # drop((a, b, file));
//! # std::fs::remove_file(&h5).ok();
//! # std::fs::remove_file(&parquet).ok();
//! # Ok::<(), marquet::Error>(())
//! ```

internal_mod! {
    append;
    copy;
    error;
    #[cfg(feature = "gis")]
    fgb;
    format;
    geojson;
    geojson_crs;
    geoparquet;
    #[cfg(feature = "gis")]
    gpkg;
    hub;
    options;
    run;
    #[cfg(feature = "gis")]
    shp;
}
pub mod lake;
mod stage;

pub use append::{append_file, append_record_batches, AppendOptions, AppendReport};
pub use error::{code, failure_code, Finding, FindingCode};
pub(crate) use error::{fail, err_at};
pub use format::Format;
pub use self::geojson::{export_geojson, import_geojson, write_geojson};
pub use geoparquet::export::{export_geoparquet, write_geoparquet, CoveringChoice, ExportCompression, ExportOptions, GeoParquetVersion};
pub use geoparquet::reader::{import_geoparquet, import_geoparquet_into};
pub use hub::arrow::{import_record_batches, ArrowPlan, Coords, ExportReport, PlanCache};
pub use hub::export::{ExportShape, ExportSource, TableSource};
pub use hub::import::{GeometryImport, ImportOptions, ImportReport, PointForm};
pub use copy::CopyReport;
pub use hub::nested_json::NestedPolicy;
pub use hub::target::ImportTarget;
pub use hub::{DEFAULT_BATCH_ROWS, DEFAULT_MAX_FIXED_STRING};
pub use options::{ConvertOptions, ConvertReport};
pub use run::convert;
pub use self::geojson::{to_geojson_json, FeatureWriter};
pub use geojson_crs::to_crs84;
pub(crate) use hub::tables::single_table_of;
pub(crate) use run::import_any;
