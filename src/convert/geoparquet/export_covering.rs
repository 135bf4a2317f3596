//! The bbox covering columns of a GeoParquet export (GeoParquet 1.1 `covering`, restored in
//! 2.0 final; issue #22): a root-level struct `xmin, ymin, xmax, ymax` per geometry column
//! whose row-group and page statistics let any Parquet reader skip rows
//! (`geopandas.read_parquet(path, bbox=…)` needs one).
//!
//! A geometry column gets one by [`CoveringChoice`]: the table's own covering column
//! (HEP002 §10.5: float64, or float32 rounded outward) when it has one, otherwise float64
//! boxes computed from the WKB as the rows stream past (under the column's edges, ruling R8,
//! as Marquet's covering values are). A row without a geometry, or with an empty one, has
//! a null box (an infinite box would spoil the row group's statistics). GeoParquet 1.0 knows no `covering`; a 1.0 export with coverings writes the
//! 1.1 key, which 1.0 readers ignore (GeoParquet: readers SHOULD NOT reject unknown keys).

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Float64Type;
use arrow_array::{Array, ArrayRef, BinaryArray, RecordBatch, StructArray};
use arrow_buffer::NullBuffer;
use arrow_schema::{DataType, Field, Schema, SchemaRef};

use crate::convert::err_at;
use crate::convert::hub::plan;
use crate::error::{MarquetError, Result};
use crate::marquet::{bounds, types, GeometryColumnInfo, StorageForm};
use crate::spatial::geodesic::EdgeModel;
use crate::spec::GeometryKind;
use crate::wkb;

/// Which geometry columns of a GeoParquet export get a bbox covering column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CoveringChoice {
    /// Columns that are not point columns (the default; a point's box repeats its
    /// coordinates, HEP002 §10.5).
    #[default]
    NonPoint,
    /// Every geometry column, points too (`convert --covering`).
    All,
    /// None (`convert --no-covering`): the table's covering columns are left out too.
    None,
}

/// One output field of the export.
#[derive(Debug, Clone)]
enum Out {
    /// Field `i` of the table's Arrow plan, as it is.
    Source(usize),
    /// Field `i` of the plan, the table's own covering column: an empty geometry's box
    /// (stored as ±∞, HEP002 §10.5) becomes null, as in a computed covering.
    Own(usize),
    /// A computed box of the geometry at field `geom` of the plan.
    Computed { geom: usize, path: String, model: EdgeModel, ccw: bool },
}

/// How the table's Arrow plan becomes the exported schema, coverings included.
#[derive(Debug, Clone)]
pub(crate) struct CoveringPlan {
    outs: Vec<Out>,
    schema: SchemaRef,
    /// Geometry column → the covering struct column written for it.
    pub covering: HashMap<String, String>,
}

fn is_point_column(info: &GeometryColumnInfo) -> bool {
    matches!(info.form, StorageForm::Point { .. })
        || info.types.as_ref().is_some_and(|t| !t.is_empty() && t.iter().all(|t| t.kind == GeometryKind::Point))
}

/// Plan the coverings of `infos` (the plan's geometry columns, primary first) in `schema`.
pub(crate) fn plan_coverings(schema: &Schema, infos: &[GeometryColumnInfo], choice: CoveringChoice) -> CoveringPlan {
    let wants = |info: &GeometryColumnInfo| match choice {
        CoveringChoice::NonPoint => !is_point_column(info),
        CoveringChoice::All => true,
        CoveringChoice::None => false,
    };
    let has = |n: &str| schema.fields().iter().any(|f| f.name() == n);
    let mut covering: HashMap<String, String> = HashMap::new();
    let mut dropped: Vec<String> = Vec::new();
    let mut computed: HashMap<String, String> = HashMap::new();
    let mut taken: Vec<String> = schema.fields().iter().map(|f| f.name().clone()).collect();
    for (k, info) in infos.iter().enumerate() {
        let own = info.covering.clone().filter(|c| has(c));
        match (wants(info), own) {
            (true, Some(c)) => {
                covering.insert(info.name.clone(), c);
            }
            (true, None) => {
                let name = crate::marquet::layout::covering_name(&info.name, k == 0, &|n| taken.iter().any(|t| t == n));
                taken.push(name.clone());
                covering.insert(info.name.clone(), name.clone());
                computed.insert(info.name.clone(), name);
            }
            (false, Some(c)) => dropped.push(c),
            (false, None) => {}
        }
    }
    let by_name: HashMap<&str, &GeometryColumnInfo> = infos.iter().map(|i| (i.name.as_str(), i)).collect();
    let own: Vec<&String> = covering.iter().filter(|(g, _)| !computed.contains_key(*g)).map(|(_, c)| c).collect();
    let mut outs = Vec::new();
    let mut fields: Vec<Field> = Vec::new();
    for (i, f) in schema.fields().iter().enumerate() {
        if dropped.contains(f.name()) {
            continue;
        }
        outs.push(if own.contains(&f.name()) { Out::Own(i) } else { Out::Source(i) });
        fields.push(f.as_ref().clone());
        if let (Some(name), Some(info)) = (computed.get(f.name()), by_name.get(f.name().as_str())) {
            let names = types::box_field_names(false, false);
            let sf: Vec<Field> = names.iter().map(|n| Field::new(*n, DataType::Float64, true)).collect();
            fields.push(Field::new(name, DataType::Struct(sf.into()), true));
            outs.push(Out::Computed { geom: i, path: info.path.clone(), model: bounds::edge_model(&info.edges), ccw: info.orientation_ccw });
        }
    }
    CoveringPlan { outs, schema: Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone())), covering }
}

/// Refuse, before anything is written, a schema with two fields of one name: readers such as
/// pyarrow cannot read such a file ("Multiple matches for FieldRef.Name(bbox)", issue #32).
/// The covering plan never adds one and the renesting never makes one; this is the net.
pub(crate) fn check_unique_names(schema: &Schema, out_path: &str) -> Result<()> {
    let mut seen = std::collections::HashSet::new();
    for f in schema.fields() {
        if !seen.insert(f.name().as_str()) {
            return Err(MarquetError::InvalidArgument(format!(
                "{out_path}: the export would have two fields named {:?}; no GeoParquet reader could read it",
                f.name()
            )));
        }
    }
    Ok(())
}

impl CoveringPlan {
    /// The exported schema.
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    /// The exported batch of one batch of the plan whose first row is table row `first`.
    pub fn batch(&self, b: &RecordBatch, first: u64, out_path: &str) -> Result<RecordBatch> {
        let mut cols: Vec<ArrayRef> = Vec::with_capacity(self.outs.len());
        for o in &self.outs {
            cols.push(match o {
                Out::Source(i) => b.column(*i).clone(),
                Out::Own(i) => null_empty_boxes(b.column(*i), out_path)?,
                Out::Computed { geom, path, model, ccw } => {
                    let g = b.column(*geom).as_any().downcast_ref::<BinaryArray>().ok_or_else(|| {
                        MarquetError::InvalidArgument(format!("{path}: a covering needs the geometry as WKB"))
                    })?;
                    boxes(g, path, first, *model, *ccw)?
                }
            });
        }
        let opts = arrow_array::RecordBatchOptions::new().with_row_count(Some(b.num_rows()));
        RecordBatch::try_new_with_options(self.schema.clone(), cols, &opts).map_err(|e| err_at(out_path, e))
    }
}

/// A covering struct with null rows where the box is empty (`xmin` = +∞).
fn null_empty_boxes(a: &ArrayRef, out_path: &str) -> Result<ArrayRef> {
    let Some(s) = a.as_any().downcast_ref::<StructArray>() else { return Ok(a.clone()) };
    let x = arrow_cast::cast(s.column(0), &DataType::Float64).map_err(|e| err_at(out_path, e))?;
    let x = x.as_primitive::<Float64Type>();
    if !x.iter().any(|v| v == Some(f64::INFINITY)) {
        return Ok(a.clone());
    }
    let valid: Vec<bool> = (0..s.len()).map(|r| s.is_valid(r) && x.value(r) != f64::INFINITY).collect();
    let nulls = NullBuffer::from(valid);
    let cols: Vec<ArrayRef> = s
        .columns()
        .iter()
        .map(|c| {
            let d = c.to_data().into_builder().nulls(Some(nulls.clone())).build().map_err(|e| err_at(out_path, e))?;
            Ok(arrow_array::make_array(d))
        })
        .collect::<Result<_>>()?;
    Ok(Arc::new(StructArray::try_new(s.fields().clone(), cols, Some(nulls)).map_err(|e| err_at(out_path, e))?))
}

/// The float64 box struct of each WKB value: null for a null or empty geometry; a box that
/// crosses the antimeridian (geodesic edges) spans every longitude, as a 1.x covering
/// cannot say otherwise.
fn boxes(g: &BinaryArray, path: &str, first: u64, model: EdgeModel, ccw: bool) -> Result<ArrayRef> {
    let n = g.len();
    let mut vals: Vec<Vec<f64>> = (0..4).map(|_| Vec::with_capacity(n)).collect();
    let mut missing = vec![false; n];
    for (r, w) in g.iter().enumerate() {
        let bx = match w {
            None => None,
            Some(w) => {
                let info = wkb::scan(w).map_err(|e| e.into_marquet(path.to_string(), Some(first + r as u64)))?;
                if info.is_empty {
                    None
                } else if model == EdgeModel::Planar {
                    Some(info.bbox)
                } else {
                    Some(bounds::geometry_box(w, model, ccw).map_err(|e| e.into_marquet(path.to_string(), Some(first + r as u64)))?)
                }
            }
        };
        let (xmin, ymin, xmax, ymax) = match bx {
            Some(b) if b.xmin > b.xmax => (-180.0, b.ymin, 180.0, b.ymax),
            Some(b) => (b.xmin, b.ymin, b.xmax, b.ymax),
            None => {
                missing[r] = true;
                (0.0, 0.0, 0.0, 0.0)
            }
        };
        for (k, v) in [xmin, ymin, xmax, ymax].into_iter().enumerate() {
            vals[k].push(v);
        }
    }
    plan::covering_struct(&types::box_field_names(false, false), false, vals, &missing)
}
