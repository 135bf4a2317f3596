//! GeoParquet (HEP002 §14): the `geo` metadata of versions 0.x–2.0 and Parquet's native
//! geospatial types, import into a Marquet table, export from one, and GeoArrow point
//! encodings.

pub mod export;
mod export_covering;
mod export_crs;
pub mod pandas_meta;
pub mod reader;
