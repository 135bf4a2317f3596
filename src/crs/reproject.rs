//! Reprojecting a Marquet table's geometry columns (`convert --to-crs`, issue #22).
//!
//! HEP002 §11.2: transformed coordinates and the new CRS attribute change together, so
//! each geometry column is replaced ([`MarquetTable::replace_geometry_column`]: the new
//! column is written in full with its BBOX and GEOMETRY_TYPES before the table points at
//! it). Step 3 of §11.2, the indexes, is done here: every Marquet index kind the column
//! had is built again on the new column (default block length / node size).

use super::{resolve, Crs, Transformer};
use crate::error::{MarquetError, Result};
use crate::marquet::{Edges, GeometryColumnSpec, MarquetTable, SpatialIndexKind};

/// What [`reproject_table`] did.
#[derive(Debug, Clone, Default)]
pub struct ReprojectReport {
    /// Columns reprojected: (name, CRS before, CRS after).
    pub columns: Vec<(String, String, String)>,
    /// Columns already in the target CRS.
    pub unchanged: Vec<String>,
    /// Indexes rebuilt (dataset paths).
    pub indexes: Vec<String>,
    /// Things the caller should tell the user (e.g. edges made planar).
    pub notes: Vec<String>,
}

impl std::fmt::Display for ReprojectReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (c, a, b) in &self.columns {
            writeln!(f, "  reprojected {c}: {a} -> {b}")?;
        }
        for n in &self.notes {
            writeln!(f, "  note: {n}")?;
        }
        Ok(())
    }
}

/// Reproject every geometry column of `t` to `target` (a definition [`resolve`] reads,
/// e.g. `EPSG:3857`). A column whose CRS is unknown is an error (state it first: `convert
/// --crs`), so is a coordinate outside the target's domain; nothing is changed then for
/// that column (§11.2 writes the new column completely before switching to it).
pub fn reproject_table(t: &mut MarquetTable, target: &str) -> Result<ReprojectReport> {
    let to = resolve(target).map_err(|e| MarquetError::InvalidArgument(format!("--to-crs {target}: {e}")))?;
    if to == Crs::Unknown {
        return Err(MarquetError::InvalidArgument(format!("--to-crs {target}: the target CRS must be known")));
    }
    let mut report = ReprojectReport::default();
    for name in t.geometry_column_names()? {
        let info = t.geometry_column(&name)?;
        if info.crs == to || (super::is_crs84(&info.crs) && super::is_crs84(&to)) {
            report.unchanged.push(name);
            continue;
        }
        let tr = Transformer::new(&info.crs, &to).map_err(|e| MarquetError::InvalidArgument(format!("column {name:?}: {e}")))?;
        let kinds: Vec<SpatialIndexKind> = t.spatial_indexes(&name)?.into_iter().map(|i| i.kind).collect();
        // Non-planar edges are defined on the ellipsoid of a geographic CRS only (R10).
        let edges = if info.edges.is_planar() {
            None
        } else if to.is_geographic() {
            Some(info.edges.clone())
        } else {
            report.notes.push(format!(
                "column {name:?}: edges {} need a geographic CRS; the reprojected column has planar edges",
                info.edges.geoparquet_name()
            ));
            None
        };
        let spec = GeometryColumnSpec {
            form: Some(info.form),
            crs: to.clone(),
            // A coordinate epoch means something only for a dynamic CRS (not the WGS 84
            // ensemble, docs/geoparquet-mapping.md "epoch").
            epoch: info.epoch.filter(|_| matches!(&to, Crs::ProjJson(d) if !d.contains("\"datum_ensemble\""))),
            edges: edges.filter(|e| *e != Edges::Planar),
            orientation_ccw: info.orientation_ccw,
            covering: info.covering.clone(),
            ..GeometryColumnSpec::default()
        };
        let path = info.path.clone();
        let f = move |mut g: crate::wkb::Geometry| -> Result<crate::wkb::Geometry> {
            tr.transform_geometry(&mut g).map_err(|e| MarquetError::InvalidArgument(format!("{path}: {e}")))?;
            Ok(g)
        };
        t.replace_geometry_column(&name, &spec, Some(&f))?;
        for k in kinds {
            report.indexes.push(match k {
                SpatialIndexKind::BlockBBox => t.build_block_bbox(&name, None)?,
                SpatialIndexKind::PackedRTree => t.build_rtree(&name, None)?,
            });
        }
        report.columns.push((name, info.crs.display_name(), to.display_name()));
    }
    Ok(report)
}
