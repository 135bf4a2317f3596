//! GeoArrow's native (coordinate) encodings of line and polygon columns, for readers that
//! build geometries from coordinate arrays instead of parsing WKB (geopandas'
//! `from_arrow` → `shapely.from_ragged_array`, several times faster than `from_wkb`; issue
//! #33 item 6). Coordinates are "separated" (a struct of `x`, `y`[, `z`] float64 arrays, as
//! the point columns of [`super::arrow::ArrowPlan::with_native_points`]), the encoding the
//! hub's import reads back ([`super::geoarrow`]) and GeoParquet 1.1 stores, or
//! "interleaved" (a fixed-size list `xy`/`xyz` of float64), the one geopandas builds
//! geometries from without copying the coordinates ([`Coords`]).
//!
//! A column is read natively when its `GEOMETRY_TYPES` are exactly one of the kinds below,
//! all XY or all XYZ (a column of Polygons and MultiPolygons stays WKB: read natively its
//! polygons would come back as one-member multipolygons).
//! Every value goes through the crate's strict WKB walker; a value of another kind or
//! dimension than the column declares is an error naming the row.

use std::sync::Arc;

use arrow_array::{ArrayRef, FixedSizeListArray, Float64Array, ListArray, StructArray};
use arrow_buffer::{NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field};

use crate::error::{MarquetError, Result};
use crate::marquet::WkbBuffer;
use crate::spec::{Dimensions, GeometryKind, GeometryType};
use crate::wkb::{self, CoordSeq, Header, WkbVisitor};

/// How GeoArrow native arrays hold coordinates (the GeoArrow specification's two layouts).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Coords {
    /// A struct of `x`, `y`[, `z`] float64 arrays (GeoParquet 1.1's only layout).
    Separated,
    /// A fixed-size list `xy` (or `xyz`) of float64: the ordinates of each coordinate
    /// together, as WKB holds them. geopandas' `from_arrow` uses the values as they are;
    /// separated, it first copies them into one array (a seventh of `from_arrow` for the
    /// benchmark's 200,000 polygons).
    Interleaved,
}

impl Coords {
    /// The Arrow type of one coordinate with `z` or without.
    pub(crate) fn data_type(self, z: bool) -> DataType {
        match self {
            Coords::Separated => coord_type(z),
            Coords::Interleaved => DataType::FixedSizeList(Arc::new(Field::new(if z { "xyz" } else { "xy" }, DataType::Float64, false)), if z { 3 } else { 2 }),
        }
    }

    /// The coordinates array of `ordinates` (separated: one vector each; interleaved: one
    /// vector of all).
    pub(crate) fn array(self, z: bool, mut ordinates: Vec<Vec<f64>>, nulls: Option<NullBuffer>, path: &str) -> Result<ArrayRef> {
        Ok(match (self, self.data_type(z)) {
            (Coords::Separated, DataType::Struct(fields)) => {
                let cols: Vec<ArrayRef> = ordinates.into_iter().map(|v| Arc::new(Float64Array::from(v)) as ArrayRef).collect();
                Arc::new(StructArray::try_new(fields, cols, nulls).map_err(|e| crate::convert::err_at(path, e))?)
            }
            (_, DataType::FixedSizeList(field, n)) => {
                let values = Arc::new(Float64Array::from(ordinates.pop().unwrap_or_default()));
                Arc::new(FixedSizeListArray::try_new(field, n, values, nulls).map_err(|e| crate::convert::err_at(path, e))?)
            }
            (_, t) => return Err(MarquetError::Unsupported(format!("{path}: coordinates of type {t}"))),
        })
    }
}

/// The native GeoArrow layout of a column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NativeKind {
    LineString,
    Polygon,
    MultiLineString,
    MultiPolygon,
}

impl NativeKind {
    /// The layout for a column of `types`, when it has one: one kind, all XY or all XYZ.
    /// Returns the kind and whether it has Z.
    pub(crate) fn for_types(types: &[GeometryType]) -> Option<(NativeKind, bool)> {
        let dims = types.first()?.dims;
        if !matches!(dims, Dimensions::Xy | Dimensions::Xyz) || types.iter().any(|t| t.dims != dims) {
            return None;
        }
        let kind = match types[0].kind {
            _ if types.iter().any(|t| t.kind != types[0].kind) => return None,
            GeometryKind::Polygon => NativeKind::Polygon,
            GeometryKind::MultiPolygon => NativeKind::MultiPolygon,
            GeometryKind::LineString => NativeKind::LineString,
            GeometryKind::MultiLineString => NativeKind::MultiLineString,
            _ => return None,
        };
        Some((kind, dims == Dimensions::Xyz))
    }

    /// The GeoArrow extension name.
    pub(crate) fn extension_name(self) -> &'static str {
        match self {
            NativeKind::LineString => "geoarrow.linestring",
            NativeKind::Polygon => "geoarrow.polygon",
            NativeKind::MultiLineString => "geoarrow.multilinestring",
            NativeKind::MultiPolygon => "geoarrow.multipolygon",
        }
    }

    /// Names of the nested list fields, outermost first, down to the vertices.
    fn levels(self) -> &'static [&'static str] {
        match self {
            NativeKind::LineString => &["vertices"],
            NativeKind::Polygon => &["rings", "vertices"],
            NativeKind::MultiLineString => &["linestrings", "vertices"],
            NativeKind::MultiPolygon => &["polygons", "rings", "vertices"],
        }
    }

    /// The Arrow type of the column.
    pub(crate) fn data_type(self, z: bool, coords: Coords) -> DataType {
        let mut t = coords.data_type(z);
        for name in self.levels().iter().rev() {
            t = DataType::List(Arc::new(Field::new(*name, t, false)));
        }
        t
    }
}

/// The separated coordinate struct: `x`, `y`[, `z`], non-nullable float64.
fn coord_type(z: bool) -> DataType {
    let names: &[&str] = if z { &["x", "y", "z"] } else { &["x", "y"] };
    DataType::Struct(names.iter().map(|n| Field::new(*n, DataType::Float64, false)).collect::<Vec<_>>().into())
}

/// Coordinates and offsets of the rows read so far.
struct Flat {
    kind: NativeKind,
    dims: Dimensions,
    /// Interleaved: every ordinate in `x`.
    interleaved: bool,
    x: Vec<f64>,
    y: Vec<f64>,
    z: Vec<f64>,
    /// Offsets of each level, outermost (rows) first; each starts with 0.
    offsets: Vec<Vec<i64>>,
    /// The first problem met in the current value.
    bad: Option<String>,
}

impl Flat {
    /// Close the current member at `level`: it holds the members of the level below (or
    /// the coordinates) added since it began.
    fn close(&mut self, level: usize) {
        let below = match self.offsets.get(level + 1) {
            Some(o) => o.len() as i64 - 1,
            None if self.interleaved => (self.x.len() / self.dims.size()) as i64,
            None => self.x.len() as i64,
        };
        self.offsets[level].push(below);
    }
}

impl WkbVisitor for Flat {
    fn begin_geometry(&mut self, h: &Header) {
        let want = match (self.kind, h.level) {
            (NativeKind::LineString, 0) => h.geometry_type.kind == GeometryKind::LineString,
            (NativeKind::Polygon, 0) => h.geometry_type.kind == GeometryKind::Polygon,
            (NativeKind::MultiLineString, 0) => h.geometry_type.kind == GeometryKind::MultiLineString,
            (NativeKind::MultiPolygon, 0) => h.geometry_type.kind == GeometryKind::MultiPolygon,
            (NativeKind::MultiLineString, 1) => h.geometry_type.kind == GeometryKind::LineString,
            (NativeKind::MultiPolygon, 1) => h.geometry_type.kind == GeometryKind::Polygon,
            _ => false,
        };
        if (!want || h.geometry_type.dims != self.dims) && self.bad.is_none() {
            self.bad = Some(format!("{:?} {:?} where the column's GEOMETRY_TYPES make it {}", h.geometry_type.kind, h.geometry_type.dims, self.kind.extension_name()));
        }
    }

    fn coords(&mut self, _ring: Option<usize>, seq: CoordSeq<'_>) {
        if self.bad.is_some() {
            return;
        }
        // `begin_geometry` checked the dimensions: 2 or 3 ordinates, x and y first.
        if self.interleaved {
            seq.extend_interleaved(&mut self.x);
        } else {
            seq.extend_ordinate(0, &mut self.x);
            seq.extend_ordinate(1, &mut self.y);
            if self.dims == Dimensions::Xyz {
                seq.extend_ordinate(2, &mut self.z);
            }
        }
        // A ring or a member line ends with its coordinates (a LineString row's list of
        // vertices is closed at the row's end).
        let last = self.offsets.len() - 1;
        if last > 0 {
            self.close(last);
        }
    }

    fn end_geometry(&mut self, h: &Header) {
        if self.bad.is_some() {
            return;
        }
        // A polygon member of a multipolygon closes its rings; a line member of a
        // multilinestring is closed by `coords` already.
        if self.kind == NativeKind::MultiPolygon && h.geometry_type.kind == GeometryKind::Polygon {
            self.close(1);
        }
    }
}

/// The native GeoArrow array of the WKB values in `b` (null rows stay null).
pub(crate) fn native_array(b: &WkbBuffer, kind: NativeKind, z: bool, coords: Coords, path: &str, first_row: u64) -> Result<ArrayRef> {
    let dims = if z { Dimensions::Xyz } else { Dimensions::Xy };
    let levels = kind.levels().len();
    let interleaved = coords == Coords::Interleaved;
    // About 16 bytes of WKB per XY coordinate.
    let cap = b.bytes.len() / (8 * dims.size());
    let mut f = Flat {
        kind,
        dims,
        interleaved,
        x: Vec::with_capacity(if interleaved { cap * dims.size() } else { cap }),
        y: Vec::with_capacity(if interleaved { 0 } else { cap }),
        z: Vec::with_capacity(if z && !interleaved { cap } else { 0 }),
        offsets: vec![vec![0i64]; levels],
        bad: None,
    };
    for i in 0..b.len() {
        if let Some(w) = b.get(i) {
            // A value's own failure leaves the arrays half-built: the read fails with it.
            wkb::visit(w, &mut f).map_err(|e| e.into_marquet(path.to_string(), Some(first_row + i as u64)))?;
            if let Some(why) = f.bad.take() {
                return Err(MarquetError::InvalidWkb { path: path.to_string(), row: Some(first_row + i as u64), message: why });
            }
        }
        f.close(0);
    }
    let too_big = || MarquetError::Unsupported(format!("{path}: more than 2^31 coordinates or parts in one batch"));
    let ordinates = match (interleaved, z) {
        (true, _) => vec![f.x],
        (false, false) => vec![f.x, f.y],
        (false, true) => vec![f.x, f.y, f.z],
    };
    let mut arr = coords.array(z, ordinates, None, path)?;
    let names = kind.levels();
    for level in (0..levels).rev() {
        let offsets: Vec<i32> = f.offsets[level].iter().map(|&o| i32::try_from(o)).collect::<std::result::Result<_, _>>().map_err(|_| too_big())?;
        let field = Arc::new(Field::new(names[level], arr.data_type().clone(), false));
        let nulls = (level == 0 && b.valid.iter().any(|v| !v)).then(|| NullBuffer::from(b.valid.clone()));
        arr = Arc::new(
            ListArray::try_new(field, OffsetBuffer::new(ScalarBuffer::from(offsets)), arr, nulls).map_err(|e| crate::convert::err_at(path, e))?,
        );
    }
    Ok(arr)
}
