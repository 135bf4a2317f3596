//! Flags of `convert` and `append` for lakehouse sources (CSV, plain Parquet, Iceberg,
//! GeoMesa): parsed here into [`marquet::convert::lake::LakeOptions`].

use clap::Args;
use marquet::convert::lake::{GeometrySource, LakeOptions};

/// How a CSV, plain Parquet or Iceberg source is read.
#[derive(Args, Debug, Default)]
pub struct LakeArgs {
    /// Geometry column and its encoding: COL[:wkb|ewkb|wkt|geojson] (repeatable; the first
    /// is primary). Without an encoding: binary = WKB/EWKB, text = WKT (GeoJSON when it
    /// starts with '{').
    #[arg(long, value_name = "COL[:ENC]", help_heading = "Sources")]
    geometry: Vec<String>,
    /// Longitude and latitude columns making a point column `geometry`.
    #[arg(long, value_name = "XCOL,YCOL", help_heading = "Sources")]
    lonlat: Option<String>,
    /// CRS of the geometry columns (OGC:CRS84, EPSG:N, srid:N or PROJJSON); default from the
    /// values' SRIDs or the source.
    #[arg(long, help_heading = "Sources")]
    crs: Option<String>,
    /// Store values that do not decode as null (with a warning) instead of failing.
    #[arg(long, help_heading = "Sources")]
    null_bad_geometry: bool,
    /// Recompute GeoMesa __<col>_bbox__ rows that do not contain their geometry instead of
    /// failing.
    #[arg(long, help_heading = "Sources")]
    recompute_bbox: bool,
    /// Keep only rows whose geometry box meets XMIN,YMIN,XMAX,YMAX (Iceberg data files
    /// whose bounds miss it are not read).
    #[arg(long, value_name = "XMIN,YMIN,XMAX,YMAX", allow_hyphen_values = true, help_heading = "Sources")]
    bbox: Option<String>,
}

impl LakeArgs {
    /// The library options.
    pub fn options(&self) -> Result<LakeOptions, String> {
        let mut o = LakeOptions::default();
        for g in &self.geometry {
            o.geometry.push(g.parse::<GeometrySource>().map_err(|e| e.to_string())?);
        }
        if let Some(l) = &self.lonlat {
            let (x, y) = l.split_once(',').ok_or_else(|| format!("--lonlat wants XCOL,YCOL, got {l:?}"))?;
            o.lonlat = Some((x.trim().to_string(), y.trim().to_string()));
        }
        o.crs = self.crs.clone();
        o.null_bad_geometry = self.null_bad_geometry;
        o.recompute_bbox = self.recompute_bbox;
        if let Some(b) = &self.bbox {
            o.bbox = Some(super::parse_bbox(b)?);
        }
        Ok(o)
    }
}
