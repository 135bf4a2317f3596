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

/// The reprojection of a column's values as they stream into a writer (`--to-crs`, issue
/// #31): applied to every batch before its rows are ordered, boxed and indexed, so the
/// order and the indexes are of the target coordinates and built once. Shareable between
/// threads (PROJ objects are not; one is used at a time).
pub struct ValuesReprojection {
    tr: std::sync::Mutex<Transformer>,
    path: String,
}

impl std::fmt::Debug for ValuesReprojection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ValuesReprojection({})", self.path)
    }
}

impl ValuesReprojection {
    /// From CRS `from` to `to` for the column `path` names in errors. An unknown source CRS
    /// is an error (state it first: `convert --crs`).
    pub fn new(from: &Crs, to: &Crs, path: &str) -> Result<ValuesReprojection> {
        let tr = Transformer::new(from, to).map_err(|e| MarquetError::InvalidArgument(format!("{path}: {e}")))?;
        Ok(ValuesReprojection { tr: std::sync::Mutex::new(tr), path: path.to_string() })
    }

    /// One WKB value with every coordinate transformed (little-endian ISO WKB out).
    pub fn apply_wkb(&self, w: &[u8]) -> Result<Vec<u8>> {
        let tr = self.tr.lock().map_err(|_| MarquetError::InvalidArgument(format!("{}: a reprojection failed before", self.path)))?;
        tr.transform_wkb(w).map_err(|e| MarquetError::InvalidArgument(format!("{}: {e}", self.path)))
    }

    /// The values with every coordinate transformed (X, Y and Z; M kept; null and empty
    /// values unchanged). Points are transformed in one call to PROJ.
    pub fn apply(&self, v: crate::marquet::GeometryValues) -> Result<crate::marquet::GeometryValues> {
        use crate::marquet::GeometryValues;
        let tr = self.tr.lock().map_err(|_| MarquetError::InvalidArgument(format!("{}: a reprojection failed before", self.path)))?;
        let err = |e: String| MarquetError::InvalidArgument(format!("{}: {e}", self.path));
        match v {
            GeometryValues::Wkb(vals) => {
                let out: Result<Vec<Option<Vec<u8>>>> = vals
                    .into_iter()
                    .map(|w| match w {
                        None => Ok(None),
                        Some(b) => tr.transform_wkb(&b).map(Some).map_err(err),
                    })
                    .collect();
                Ok(GeometryValues::Wkb(out?))
            }
            GeometryValues::Points { dims, mut x, mut y, mut z, m, valid } => {
                // Only live points: null rows and empty points (NaN) stay as they are.
                let live: Vec<usize> =
                    (0..x.len()).filter(|&i| valid.as_ref().is_none_or(|v| v[i]) && !(x[i].is_nan() && y[i].is_nan())).collect();
                let mut lx: Vec<f64> = live.iter().map(|&i| x[i]).collect();
                let mut ly: Vec<f64> = live.iter().map(|&i| y[i]).collect();
                let mut lz: Vec<f64> = match &z {
                    Some(zs) if live.iter().all(|&i| !zs[i].is_nan()) => live.iter().map(|&i| zs[i]).collect(),
                    _ => Vec::new(),
                };
                tr.transform(&mut lx, &mut ly, &mut lz).map_err(err)?;
                for (k, &i) in live.iter().enumerate() {
                    x[i] = lx[k];
                    y[i] = ly[k];
                    if let (Some(zs), false) = (z.as_mut(), lz.is_empty()) {
                        zs[i] = lz[k];
                    }
                }
                Ok(GeometryValues::Points { dims, x, y, z, m, valid })
            }
        }
    }
}
