//! The file formats conversions read and write, told by extension.

use std::path::Path;

/// A file format [`super::convert`] reads or writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// GeoParquet 0.x–2.0 (HEP002 §14).
    GeoParquet,
    /// An RFC 7946 GeoJSON FeatureCollection.
    GeoJson,
    /// HDF5 with Marquet tables.
    Marquet,
    /// FlatGeobuf (`.fgb`, feature `gis`).
    FlatGeobuf,
    /// OGC GeoPackage (`.gpkg`, feature `gis`).
    GeoPackage,
    /// ESRI Shapefile (`.shp` with `.dbf`, `.prj`, feature `gis`).
    Shapefile,
}

impl Format {
    /// From a file extension: `.parquet`/`.geoparquet`, `.geojson`/`.json`,
    /// `.h5`/`.hdf5`/`.he5`/`.hdf` and netCDF-4's `.nc`/`.nc4`, `.fgb`, `.gpkg`, `.shp`.
    pub fn from_path(p: &Path) -> Option<Format> {
        let ext = p.extension()?.to_str()?.to_ascii_lowercase();
        Some(match ext.as_str() {
            "parquet" | "geoparquet" | "pq" => Format::GeoParquet,
            "geojson" | "json" => Format::GeoJson,
            // netCDF-4 files are HDF5 files (issue #35).
            "h5" | "hdf5" | "he5" | "hdf" | "nc" | "nc4" => Format::Marquet,
            "fgb" => Format::FlatGeobuf,
            "gpkg" => Format::GeoPackage,
            "shp" => Format::Shapefile,
            _ => return None,
        })
    }
}

/// The default table path for a file: `/` + its stem.
pub(crate) fn default_table_name(p: &Path) -> String {
    let stem = p.file_stem().and_then(|s| s.to_str()).unwrap_or("table");
    let clean: String = stem.chars().map(|c| if c == '/' || c == '.' { '_' } else { c }).collect();
    format!("/{}", if clean.is_empty() { "table" } else { &clean })
}

