//! Columns as [`ndarray`] arrays and geometry columns as [`geo_types`] geometries: the API
//! where scientists meet Marquet.
//!
//! | you have / want | read | write |
//! |---|---|---|
//! | a numeric column as `Array1<T>` | [`read_column`], [`read_column_masked`] | [`array_from_view`], [`column_values`] |
//! | a point column as `Array2<f64>` (rows × dims) | [`read_points`] | [`point_values`] |
//! | any geometry column as `geo_types::Geometry` | [`MarquetTable::read_geo`] | [`GeometryValues::from_geo`] |
//!
//! `T` is any of `i8 i16 i32 i64 u8 u16 u32 u64 f32 f64` ([`Element`]). A column is read as
//! `T` when every stored value converts exactly: its own type, a wider integer of the same
//! signedness, a wider signed integer for an unsigned one, `f32` → `f64`, integers of up
//! to 16 bits → `f32` and up to 32 bits → `f64`. Anything else (say `f64` read as `f32`,
//! or `i64` as `f64`) is refused with [`MarquetError::InvalidArgument`] naming the column
//! and both types, rather than rounded.
//!
//! Reads go straight from HDF5 into the array's buffer (the parallel direct-chunk path
//! when the type matches the stored one, HDF5's conversion otherwise): no intermediate
//! copy. Writes copy a view once into the batch's little-endian buffer; the append path
//! encodes its chunks from there (HEP001 §12.3, `NROWS` committed last).
//!
//! Missing values follow HEP001 §8.5 (a value equal to the column's fill value): the
//! `_masked` reads return them as `valid == false`; [`read_points`] sets the coordinates
//! of null rows and empty points to NaN and tells them apart with its `valid` mask.
//!
//! A geometry column of any form reads as `geo_types` geometries (XY; Z and M are dropped,
//! an empty point is `Point(NaN, NaN)`) and writes from them as WKB:
//!
//! ```
//! use geo_types::{line_string, point, Geometry};
//! use marquet::h5col::File;
//! use marquet::{GeoBatch, GeometryColumnSpec, GeometryValues, Table, StorageForm};
//!
//! let path = std::env::temp_dir().join(format!("marquet-doc-geo-{}.h5", std::process::id()));
//! let f = File::create(&path)?;
//! let mut t = Table::create(&f, "/roads")?;
//! t.add_geometry_column("geom", &GeometryColumnSpec::default().with_form(StorageForm::VarWkb))?;
//! let roads: Vec<Option<Geometry<f64>>> = vec![
//!     Some(line_string![(x: 0.0, y: 0.0), (x: 1.0, y: 1.0)].into()),
//!     None,
//!     Some(point!(x: 5.0, y: 6.0).into()),
//! ];
//! t.append(&GeoBatch::new().with_geometry("geom", GeometryValues::from_geo(&roads)))?;
//! assert_eq!(t.read_geo("geom", 0, 3)?, roads);
//! # drop((t, f)); std::fs::remove_file(&path).ok();
//! # Ok::<(), marquet::Error>(())
//! ```
//!
//! For zero-copy reads of WKB geometries, [`MarquetTable::read_wkb`] returns one buffer
//! whose [`WkbBuffer::get`](crate::marquet::WkbBuffer::get) slices any WKB reader accepts
//! (e.g. the `wkb` crate's `geo_traits` view).

use ndarray::{Array1, Array2, ArrayView1, ArrayView2};

use crate::error::{MarquetError, Result};
use crate::h5::{self, Dtype};
use crate::h5col::{Array, ColumnValues, Table};
use crate::marquet::types::{point_dtype, point_layout};
#[cfg(doc)]
use crate::marquet::GeoBatch;
use crate::marquet::{GeometryValues, MarquetTable, StorageForm};
use crate::spec::Dimensions;

mod sealed {
    pub trait Sealed {}
}

/// A numeric element type that a column can be read as and written from: `i8`, `i16`,
/// `i32`, `i64`, `u8`, `u16`, `u32`, `u64`, `f32`, `f64` (HEP001 §7 numeric types,
/// little-endian). Sealed: the list follows HEP001, not the caller.
pub trait Element: sealed::Sealed + bytemuck::Pod + PartialEq + std::fmt::Debug + Send + Sync + 'static {
    /// The HEP001 datatype of this element type (little-endian).
    const DTYPE: Dtype;
    /// Element `i` of `a` converted exactly to `Self` (`None` if it does not convert).
    #[doc(hidden)]
    fn from_array(a: &Array, i: usize) -> Option<Self>;
    /// Is `self` the fill value `fill` under HEP001 §8.5 (NaN fill: any NaN; else bitwise)?
    #[doc(hidden)]
    fn is_fill(self, fill: Self) -> bool;
    /// `self` read from little-endian bytes in memory, in native byte order.
    #[doc(hidden)]
    fn le_swapped(self) -> Self;
}

macro_rules! int_element {
    ($t:ty, $dt:expr) => {
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const DTYPE: Dtype = $dt;
            fn from_array(a: &Array, i: usize) -> Option<Self> {
                a.get_i128(i).and_then(|v| <$t>::try_from(v).ok())
            }
            fn is_fill(self, fill: Self) -> bool {
                self == fill
            }
            fn le_swapped(self) -> Self {
                <$t>::from_le(self)
            }
        }
    };
}

int_element!(i8, Dtype::I8);
int_element!(i16, Dtype::Int { size: 2, signed: true, big_endian: false });
int_element!(i32, Dtype::Int { size: 4, signed: true, big_endian: false });
int_element!(i64, Dtype::I64);
int_element!(u8, Dtype::U8);
int_element!(u16, Dtype::U16);
int_element!(u32, Dtype::Int { size: 4, signed: false, big_endian: false });
int_element!(u64, Dtype::U64);

macro_rules! float_element {
    ($t:ty, $dt:expr) => {
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const DTYPE: Dtype = $dt;
            fn from_array(a: &Array, i: usize) -> Option<Self> {
                // Exact by `lossless`: f32 → f32/f64, ints of ≤ 16 / 32 bits.
                a.get_f64(i).map(|v| v as $t)
            }
            fn is_fill(self, fill: Self) -> bool {
                if fill.is_nan() {
                    self.is_nan()
                } else {
                    self.to_bits() == fill.to_bits()
                }
            }
            fn le_swapped(self) -> Self {
                <$t>::from_bits(self.to_bits().to_le())
            }
        }
    };
}

float_element!(f32, Dtype::F32);
float_element!(f64, Dtype::F64);

/// Does every value of a `from` column convert exactly to `to`?
fn lossless(from: &Dtype, to: &Dtype) -> bool {
    match (from, to) {
        (Dtype::Int { size: s, signed: a, .. }, Dtype::Int { size: t, signed: b, .. }) => {
            (a == b && t >= s) || (!a && *b && t > s)
        }
        (Dtype::Float { size: s, .. }, Dtype::Float { size: t, .. }) => t >= s,
        (Dtype::Int { size: s, .. }, Dtype::Float { size: t, .. }) => (*t == 4 && *s <= 2) || (*t == 8 && *s <= 4),
        _ => false,
    }
}

/// A short name of a datatype for messages ("int16", "uint64", "float32", ...).
fn type_name(d: &Dtype) -> String {
    match d {
        Dtype::Int { size, signed, .. } => format!("{}int{}", if *signed { "" } else { "u" }, size * 8),
        Dtype::Float { size, .. } => format!("float{}", size * 8),
        Dtype::FixedString { .. } | Dtype::VarString { .. } => "string".into(),
        Dtype::Enum { .. } => "enumeration".into(),
        Dtype::Compound { .. } => "compound".into(),
        Dtype::Opaque { .. } => "opaque".into(),
        other => format!("{other:?}").to_lowercase(),
    }
}

fn check_range(table: &Table, start: u64, end: u64) -> Result<()> {
    let n = table.nrows()?;
    if end > n || start > end {
        return Err(MarquetError::InvalidArgument(format!("{}: rows {start}..{end} out of range for {n} rows", table.path())));
    }
    Ok(())
}

/// `count` elements of `dtype` read from dataset `ds` at `start` straight into a new
/// vector of `T` (whose bytes are `dtype`'s little-endian layout).
fn read_into<T: bytemuck::Pod>(ds: hdf5_sys::h5i::hid_t, start: u64, count: u64, per_row: usize, dtype: &Dtype, path: &str) -> Result<Vec<T>> {
    let len = usize::try_from(count)
        .ok()
        .and_then(|c| c.checked_mul(per_row))
        .ok_or_else(|| MarquetError::InvalidArgument(format!("{path}: read of {count} rows overflows")))?;
    let mut v = vec![T::zeroed(); len];
    h5::dataset_read_into(ds, start, count, dtype, path, bytemuck::cast_slice_mut(&mut v))?;
    Ok(v)
}

/// Values and missing flags of rows `[start, end)` of `name` as `T`.
fn read_typed<T: Element>(table: &Table, name: &str, start: u64, end: u64) -> Result<(Vec<T>, Option<T>)> {
    check_range(table, start, end)?;
    let c = table.column(name)?;
    let stored = c.dtype().to_le();
    if !lossless(&stored, &T::DTYPE) {
        return Err(MarquetError::InvalidArgument(format!(
            "{}: a {} column cannot be read as {} without loss",
            c.path,
            type_name(&stored),
            type_name(&T::DTYPE)
        )));
    }
    let mut v: Vec<T> = read_into(c.id(), start, end - start, 1, &T::DTYPE, &c.path)?;
    if cfg!(target_endian = "big") {
        v.iter_mut().for_each(|x| *x = x.le_swapped());
    }
    // The fill value in `T` (exact by `lossless`), for the HEP001 §8.5 missing test.
    let fill = c.fill().and_then(|f| T::from_array(&Array { dtype: stored, bytes: f.to_vec() }, 0));
    Ok((v, fill))
}

/// Read rows `[start, end)` of the numeric column `name` as an `Array1<T>`. Missing rows
/// hold the column's fill value; [`read_column_masked`] says which they are.
///
/// Errors: the rows are out of range, `name` is not a column dataset, or its type does
/// not convert to `T` exactly (see the [module docs](self)).
///
/// ```
/// use marquet::arrays;
/// use marquet::h5col::{Array, Batch, ColumnSpec, File};
///
/// let path = std::env::temp_dir().join(format!("marquet-doc-read-column-{}.h5", std::process::id()));
/// let f = File::create(&path)?;
/// let t = f.create_table("/obs")?;
/// t.add_column("temperature", &ColumnSpec::new(<f32 as arrays::Element>::DTYPE))?;
/// t.append(&Batch::new().with_array("temperature", Array::from_f32(&[12.5, 13.0, 11.75])))?;
///
/// let temps = arrays::read_column::<f64>(&t, "temperature", 0, 3)?; // float32 → f64, exact
/// assert_eq!(temps, ndarray::array![12.5, 13.0, 11.75]);
/// assert!(arrays::read_column::<i64>(&t, "temperature", 0, 3).is_err()); // not exact
/// # drop((t, f)); std::fs::remove_file(&path).ok();
/// # Ok::<(), marquet::Error>(())
/// ```
pub fn read_column<T: Element>(table: &Table, name: &str, start: u64, end: u64) -> Result<Array1<T>> {
    Ok(Array1::from_vec(read_typed::<T>(table, name, start, end)?.0))
}

/// Like [`read_column`], with the HEP001 §8.5 validity of each row: `valid[i]` is false
/// where the stored value equals the column's fill value (a missing value).
///
/// ```
/// use marquet::arrays;
/// use marquet::h5col::{Array, Batch, ColumnSpec, ColumnValues, File};
///
/// let path = std::env::temp_dir().join(format!("marquet-doc-masked-{}.h5", std::process::id()));
/// let f = File::create(&path)?;
/// let t = f.create_table("/cities")?;
/// t.add_column("population", &ColumnSpec::new(<i32 as arrays::Element>::DTYPE))?;
/// let values = ColumnValues::Array { values: Array::from_i32(&[1_200, 0, 56_000]), missing: Some(vec![false, true, false]) };
/// t.append(&Batch::new().with("population", values))?;
///
/// let (pop, valid) = arrays::read_column_masked::<i64>(&t, "population", 0, 3)?;
/// assert_eq!(valid, ndarray::array![true, false, true]);
/// assert_eq!((pop[0], pop[2]), (1_200, 56_000));
/// assert_eq!(pop[1], -2_147_483_647); // the int32 fill value, widened
/// # drop((t, f)); std::fs::remove_file(&path).ok();
/// # Ok::<(), marquet::Error>(())
/// ```
pub fn read_column_masked<T: Element>(table: &Table, name: &str, start: u64, end: u64) -> Result<(Array1<T>, Array1<bool>)> {
    let (v, fill) = read_typed::<T>(table, name, start, end)?;
    let valid = match fill {
        Some(f) => v.iter().map(|x| !x.is_fill(f)).collect(),
        None => Array1::from_elem(v.len(), true),
    };
    Ok((Array1::from_vec(v), valid))
}

/// A column's values from any 1-D view (contiguous or strided), for
/// [`Batch::with_array`](crate::h5col::Batch::with_array) and
/// [`GeoBatch::with_array`]. One copy, into the batch's little-endian buffer.
///
/// ```
/// use marquet::arrays;
/// use marquet::h5col::{Batch, ColumnSpec, File};
///
/// let path = std::env::temp_dir().join(format!("marquet-doc-from-view-{}.h5", std::process::id()));
/// let f = File::create(&path)?;
/// let t = f.create_table("/grid")?;
/// t.add_column("depth", &ColumnSpec::new(<f64 as arrays::Element>::DTYPE))?;
/// let grid = ndarray::array![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]];
/// // The second column of the grid: a strided view.
/// t.append(&Batch::new().with_array("depth", arrays::array_from_view(grid.column(1))))?;
/// assert_eq!(arrays::read_column::<f64>(&t, "depth", 0, 2)?, ndarray::array![2.0, 5.0]);
/// # drop((t, f)); std::fs::remove_file(&path).ok();
/// # Ok::<(), marquet::Error>(())
/// ```
pub fn array_from_view<T: Element>(values: ArrayView1<'_, T>) -> Array {
    let mut bytes = Vec::with_capacity(values.len() * std::mem::size_of::<T>());
    match values.as_slice() {
        Some(s) if cfg!(target_endian = "little") => bytes.extend_from_slice(bytemuck::cast_slice(s)),
        _ => {
            for x in values.iter() {
                // le_swapped is its own inverse: native → little-endian.
                bytes.extend_from_slice(bytemuck::bytes_of(&x.le_swapped()));
            }
        }
    }
    Array { dtype: T::DTYPE, bytes }
}

/// Column values with a validity mask (`valid[i] == false` writes the column's fill
/// value: a missing value, HEP001 §8.5), for [`Batch::with`](crate::h5col::Batch::with)
/// and [`GeoBatch::with_column`]. `valid` must be as long as `values`.
///
/// ```
/// use marquet::arrays;
/// use marquet::h5col::{Batch, ColumnSpec, File};
///
/// let path = std::env::temp_dir().join(format!("marquet-doc-column-values-{}.h5", std::process::id()));
/// let f = File::create(&path)?;
/// let t = f.create_table("/rain")?;
/// t.add_column("mm", &ColumnSpec::new(<f64 as arrays::Element>::DTYPE))?;
/// let mm = ndarray::array![0.0, 4.5, f64::NAN];
/// let valid = mm.mapv(|v: f64| !v.is_nan()); // NaN marks a gap in this data set
/// t.append(&Batch::new().with("mm", arrays::column_values(mm.view(), Some(valid.view()))?))?;
///
/// let (back, ok) = arrays::read_column_masked::<f64>(&t, "mm", 0, 3)?;
/// assert_eq!(ok, ndarray::array![true, true, false]);
/// assert_eq!((back[0], back[1]), (0.0, 4.5));
/// assert!(arrays::column_values(mm.view(), Some(valid.slice(ndarray::s![..2]))).is_err());
/// # drop((t, f)); std::fs::remove_file(&path).ok();
/// # Ok::<(), marquet::Error>(())
/// ```
pub fn column_values<T: Element>(values: ArrayView1<'_, T>, valid: Option<ArrayView1<'_, bool>>) -> Result<ColumnValues> {
    let missing = match valid {
        None => None,
        Some(v) if v.len() == values.len() => Some(v.iter().map(|ok| !ok).collect()),
        Some(v) => {
            return Err(MarquetError::InvalidArgument(format!(
                "validity mask has {} entries for {} values",
                v.len(),
                values.len()
            )))
        }
    };
    Ok(ColumnValues::Array { values: array_from_view(values), missing })
}

/// Rows of a point column (HEP002 §7.4) as one coordinate matrix.
#[derive(Debug, Clone, PartialEq)]
pub struct PointCoords {
    /// The column's dimensions: `coords` has `dims.size()` columns, in the order
    /// x, y[, z][, m].
    pub dims: Dimensions,
    /// Rows × dimensions, as `f64` whatever the stored width. NaN in every coordinate
    /// for an empty point (`POINT EMPTY`) and for a null row.
    pub coords: Array2<f64>,
    /// `false` for a null row (the column's fill value, HEP001 §8.5).
    pub valid: Array1<bool>,
}

/// Read rows `[start, end)` of the point column `name` as a rows × dims matrix.
///
/// A `float64` column is read straight into the matrix (the compound `{x, y[, z][, m]}`
/// has the matrix's row layout); a `float32` one is widened by HDF5 on the way.
/// Other storage forms are refused: read them with [`MarquetTable::read_geo`].
///
/// ```
/// use marquet::arrays;
/// use marquet::h5col::File;
/// use marquet::{GeoBatch, GeometryColumnSpec, Table, StorageForm};
/// use marquet::Dimensions;
///
/// let path = std::env::temp_dir().join(format!("marquet-doc-read-points-{}.h5", std::process::id()));
/// let f = File::create(&path)?;
/// let mut t = Table::create(&f, "/stations")?;
/// let form = StorageForm::Point { dims: Dimensions::Xyz, f32: false };
/// t.add_geometry_column("location", &GeometryColumnSpec::default().with_form(form))?;
/// let xyz = ndarray::array![[-88.2434, 40.1164, 222.0], [0.0, 0.0, 0.0], [f64::NAN, f64::NAN, f64::NAN]];
/// let valid = ndarray::array![true, false, true]; // row 1 is null, row 2 an empty point
/// let values = arrays::point_values(Dimensions::Xyz, xyz.view(), Some(valid.view()))?;
/// t.append(&GeoBatch::new().with_geometry("location", values))?;
///
/// let p = arrays::read_points(&t, "location", 0, 3)?;
/// assert_eq!(p.coords.dim(), (3, 3));
/// assert_eq!(p.coords.row(0), ndarray::aview1(&[-88.2434, 40.1164, 222.0]));
/// assert_eq!(p.valid, valid);
/// assert!(p.coords.row(1).iter().chain(p.coords.row(2)).all(|c| c.is_nan()));
/// # drop((t, f)); std::fs::remove_file(&path).ok();
/// # Ok::<(), marquet::Error>(())
/// ```
pub fn read_points(table: &MarquetTable, name: &str, start: u64, end: u64) -> Result<PointCoords> {
    let info = table.geometry_column(name)?;
    let StorageForm::Point { dims, .. } = info.form else {
        return Err(MarquetError::InvalidArgument(format!(
            "{} is a {} column, not a point column (read it with read_geo)",
            info.path,
            info.form.describe()
        )));
    };
    check_range(table.table(), start, end)?;
    let c = table.table().column(name)?;
    let stored = c.dtype().to_le();
    let Some((stored_dims, _)) = point_layout(&stored).filter(|(d, _)| *d == dims) else {
        return Err(MarquetError::spec(&info.path, "HEP002 §7.4", "point column datatype is not {x, y[, z][, m]} of one float width"));
    };
    let k = stored_dims.size();
    let mem = point_dtype(dims, false);
    let n = (end - start) as usize;
    let mut v: Vec<f64> = read_into(c.id(), start, end - start, k, &mem, &info.path)?;
    if cfg!(target_endian = "big") {
        v.iter_mut().for_each(|x| *x = x.le_swapped());
    }
    // The fill compound in f64 (exact: f32 → f64), compared bitwise as HEP001 §8.5 does
    // for compounds.
    let fill: Option<Vec<u64>> = c.fill().and_then(|f| {
        let a = Array { dtype: stored.clone(), bytes: f.to_vec() };
        let Dtype::Compound { fields, .. } = &a.dtype else { return None };
        fields
            .iter()
            .map(|fd| {
                let raw = f.get(fd.offset..fd.offset + fd.dtype.size())?;
                Some(match fd.dtype.size() {
                    4 => f32::from_le_bytes(raw.try_into().ok()?) as f64,
                    _ => f64::from_le_bytes(raw.try_into().ok()?),
                })
            })
            .map(|x| x.map(f64::to_bits))
            .collect()
    });
    let mut valid = Vec::with_capacity(n);
    for row in v.chunks_exact_mut(k) {
        let null = fill.as_ref().is_some_and(|f| row.iter().zip(f).all(|(x, b)| x.to_bits() == *b));
        if null {
            row.fill(f64::NAN);
        }
        valid.push(!null);
    }
    let coords = Array2::from_shape_vec((n, k), v)
        .map_err(|e| MarquetError::InvalidArgument(format!("{}: {e}", info.path)))?;
    Ok(PointCoords { dims, coords, valid: Array1::from_vec(valid) })
}

/// Point geometries for [`GeoBatch::with_geometry`] from a rows × dims matrix (columns
/// x, y[, z][, m] as `dims` says; NaN x and y = an empty point) and an optional validity
/// mask (`false` = a null row, whose coordinates are ignored).
///
/// ```
/// use marquet::arrays;
/// use marquet::h5col::File;
/// use marquet::{GeoBatch, GeometryColumnSpec, Table, StorageForm};
/// use marquet::Dimensions;
///
/// let path = std::env::temp_dir().join(format!("marquet-doc-point-values-{}.h5", std::process::id()));
/// let f = File::create(&path)?;
/// let mut t = Table::create(&f, "/samples")?;
/// let form = StorageForm::Point { dims: Dimensions::Xy, f32: false };
/// t.add_geometry_column("where", &GeometryColumnSpec::default().with_form(form))?;
/// let xy = ndarray::Array2::from_shape_fn((1000, 2), |(i, d)| if d == 0 { i as f64 } else { -(i as f64) });
/// t.append(&GeoBatch::new().with_geometry("where", arrays::point_values(Dimensions::Xy, xy.view(), None)?))?;
/// assert_eq!(arrays::read_points(&t, "where", 0, 1000)?.coords, xy);
/// // A matrix whose width does not match the dimensions is refused.
/// assert!(arrays::point_values(Dimensions::Xyz, xy.view(), None).is_err());
/// # drop((t, f)); std::fs::remove_file(&path).ok();
/// # Ok::<(), marquet::Error>(())
/// ```
pub fn point_values(dims: Dimensions, coords: ArrayView2<'_, f64>, valid: Option<ArrayView1<'_, bool>>) -> Result<GeometryValues> {
    let (n, k) = coords.dim();
    if k != dims.size() {
        return Err(MarquetError::InvalidArgument(format!(
            "coordinates have {k} columns, {dims:?} points need {}",
            dims.size()
        )));
    }
    if let Some(v) = &valid {
        if v.len() != n {
            return Err(MarquetError::InvalidArgument(format!("validity mask has {} entries for {n} points", v.len())));
        }
    }
    let col = |i: usize| coords.column(i).to_vec();
    let mut next = 2;
    let mut take = |present: bool| {
        present.then(|| {
            next += 1;
            col(next - 1)
        })
    };
    let z = take(dims.has_z());
    let m = take(dims.has_m());
    Ok(GeometryValues::Points { dims, x: col(0), y: col(1), z, m, valid: valid.map(|v| v.to_vec()) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::h5col::{Batch, ColumnSpec, File};
    use crate::marquet::{GeoBatch, GeometryColumnSpec};
    use ndarray::{array, s};

    fn scratch(name: &str) -> std::path::PathBuf {
        std::env::temp_dir().join(format!("marquet-arrays-{}-{name}.h5", std::process::id()))
    }

    #[test]
    fn lossless_conversions() {
        let i = |size, signed| Dtype::Int { size, signed, big_endian: false };
        let fl = |size| Dtype::Float { size, big_endian: false };
        assert!(lossless(&i(4, true), &i(8, true)));
        assert!(!lossless(&i(8, true), &i(4, true)));
        assert!(lossless(&i(4, false), &i(8, true)));
        assert!(!lossless(&i(4, false), &i(4, true)));
        assert!(!lossless(&i(4, true), &i(8, false)));
        assert!(lossless(&fl(4), &fl(8)));
        assert!(!lossless(&fl(8), &fl(4)));
        assert!(lossless(&i(2, true), &fl(4)));
        assert!(!lossless(&i(4, true), &fl(4)));
        assert!(lossless(&i(4, false), &fl(8)));
        assert!(!lossless(&i(8, true), &fl(8)));
        assert!(!lossless(&fl(4), &i(8, true)));
        assert!(!lossless(&Dtype::hep001_bool(), &i(1, true)));
    }

    /// Every element type against every stored type: read exactly when lossless, refused
    /// otherwise; values and masks compared with the h5col reader's.
    #[test]
    fn every_type_pair_reads_exactly_or_is_refused() {
        let path = scratch("pairs");
        let f = File::create(&path).unwrap();
        let t = f.create_table("/t").unwrap();
        let stored: Vec<(&str, Array)> = vec![
            // Extremes that are not the recommended fills (MIN + 1, unsigned MAX).
            ("i8", Array::from_i8(&[-128, 0, 127, 5])),
            ("i16", Array::from_i16(&[-32768, 1, 32767, 5])),
            ("i32", Array::from_i32(&[i32::MIN, 2, i32::MAX, 5])),
            ("i64", Array::from_i64(&[i64::MIN, 3, i64::MAX, 5])),
            ("u8", Array::from_u8(&[0, 1, 254, 5])),
            ("u16", Array::from_u16(&[0, 1, 65534, 5])),
            ("u32", Array::from_u32(&[0, 1, u32::MAX - 1, 5])),
            ("u64", Array::from_u64(&[0, 1, u64::MAX - 1, 5])),
            ("f32", Array::from_f32(&[-1.5, 0.1, f32::MAX, 5.0])),
            ("f64", Array::from_f64(&[-1.5, 0.1, f64::MAX, 5.0])),
        ];
        let mut batch = Batch::new();
        for (n, a) in &stored {
            t.add_column(n, &ColumnSpec::new(a.dtype.clone())).unwrap();
            // Row 3 missing: written as the recommended fill.
            batch = batch.with(n, ColumnValues::Array { values: a.clone(), missing: Some(vec![false, false, false, true]) });
        }
        t.append(&batch).unwrap();

        fn check<T: Element>(t: &Table, stored: &[(&str, Array)]) -> usize {
            let mut ok = 0;
            for (n, a) in stored {
                let want_ok = lossless(&a.dtype, &T::DTYPE);
                match read_column_masked::<T>(t, n, 0, 4) {
                    Ok((v, valid)) => {
                        assert!(want_ok, "{n} read as {:?}", T::DTYPE);
                        let full = t.read(n, 0, 4).unwrap();
                        let c = t.column(n).unwrap();
                        let miss = full.missing(c.fill());
                        assert_eq!(valid.to_vec(), miss.iter().map(|m| !m).collect::<Vec<_>>(), "{n}");
                        assert_eq!(valid.to_vec(), vec![true, true, true, false], "{n}");
                        for i in 0..4 {
                            assert_eq!(Some(v[i]), T::from_array(&full, i), "{n} row {i}");
                        }
                        assert_eq!(read_column::<T>(t, n, 1, 3).unwrap(), v.slice(s![1..3]));
                        ok += 1;
                    }
                    Err(e) => {
                        assert!(!want_ok, "{n} as {:?}: {e}", T::DTYPE);
                        assert!(e.to_string().contains("cannot be read as") && e.to_string().contains(&format!("/t/{n}")), "{e}");
                    }
                }
            }
            ok
        }
        // How many stored types each element type accepts.
        assert_eq!(check::<i8>(&t, &stored), 1);
        assert_eq!(check::<i16>(&t, &stored), 3); // i8 i16 u8
        assert_eq!(check::<i32>(&t, &stored), 5); // + i32 u16
        assert_eq!(check::<i64>(&t, &stored), 7); // + i64 u32
        assert_eq!(check::<u8>(&t, &stored), 1);
        assert_eq!(check::<u16>(&t, &stored), 2);
        assert_eq!(check::<u32>(&t, &stored), 3);
        assert_eq!(check::<u64>(&t, &stored), 4);
        assert_eq!(check::<f32>(&t, &stored), 5); // i8 i16 u8 u16 f32
        assert_eq!(check::<f64>(&t, &stored), 8); // + i32 u32 f64
        // Exact values across a widening.
        assert_eq!(read_column::<i64>(&t, "u32", 0, 3).unwrap(), array![0, 1, u32::MAX as i64 - 1]);
        assert_eq!(read_column::<f64>(&t, "f32", 0, 2).unwrap(), array![-1.5, 0.1f32 as f64]);
        drop((t, f));
        std::fs::remove_file(&path).ok();
    }

    #[test]
    fn errors_name_the_column_and_range() {
        let path = scratch("errors");
        let f = File::create(&path).unwrap();
        let t = f.create_table("/t").unwrap();
        t.add_column("s", &ColumnSpec::new(Dtype::ascii_for("abc"))).unwrap();
        t.add_column("x", &ColumnSpec::new(Dtype::F64)).unwrap();
        t.append(&Batch::new().with_array("s", Array::from_strings(&["abc"], false)).with_array("x", Array::from_f64(&[1.0])))
            .unwrap();
        let e = read_column::<f64>(&t, "s", 0, 1).unwrap_err().to_string();
        assert_eq!(e, "invalid argument: /t/s: a string column cannot be read as float64 without loss");
        let e = read_column::<f64>(&t, "x", 0, 2).unwrap_err().to_string();
        assert_eq!(e, "invalid argument: /t: rows 0..2 out of range for 1 rows");
        assert!(read_column::<f64>(&t, "nope", 0, 1).unwrap_err().to_string().contains("/t/nope is not a column"));
        assert_eq!(read_column::<f64>(&t, "x", 1, 1).unwrap().len(), 0);
        let e = column_values(array![1.0, 2.0].view(), Some(array![true].view())).unwrap_err().to_string();
        assert_eq!(e, "invalid argument: validity mask has 1 entries for 2 values");
        drop((t, f));
        std::fs::remove_file(&path).ok();
    }

    /// Point reads of every dimension and width against `MarquetTable::read_points` (the
    /// per-field reader) and against the WKB the table returns.
    #[test]
    fn points_match_the_row_readers_in_every_layout() {
        let path = scratch("points");
        let f = File::create(&path).unwrap();
        let mut t = MarquetTable::create(&f, "/p").unwrap();
        let n = 20_000; // more than one 8,192-row chunk: the direct-chunk path runs
        let mut batch = GeoBatch::new();
        for dims in Dimensions::ALL {
            for f32 in [false, true] {
                let name = format!("{dims:?}_{f32}").to_lowercase();
                let form = StorageForm::Point { dims, f32 };
                t.add_geometry_column(&name, &GeometryColumnSpec::default().with_form(form)).unwrap();
                let k = dims.size();
                let mut c = Array2::from_shape_fn((n, k), |(i, d)| (i as f64) * 0.25 + d as f64 * 1000.0 - 3.0);
                c.row_mut(7).fill(f64::NAN); // empty point
                let valid = Array1::from_shape_fn(n, |i| i % 97 != 5);
                batch = batch.with_geometry(&name, point_values(dims, c.view(), Some(valid.view())).unwrap());
            }
        }
        t.append(&batch).unwrap();
        for dims in Dimensions::ALL {
            for f32 in [false, true] {
                let name = format!("{dims:?}_{f32}").to_lowercase();
                let (a, b) = (3, n as u64 - 11);
                let p = read_points(&t, &name, a, b).unwrap();
                let q = t.read_points(&name, a, b).unwrap();
                assert_eq!(p.dims, dims);
                assert_eq!(p.coords.dim(), ((b - a) as usize, dims.size()));
                assert_eq!(p.valid.to_vec(), q.valid, "{name}");
                let wkb = t.read_wkb(&name, a, b).unwrap();
                for i in 0..(b - a) as usize {
                    let row = p.coords.row(i);
                    if !q.valid[i] {
                        assert!(row.iter().all(|v| v.is_nan()), "{name} null row {i}");
                        assert!(wkb.get(i).is_none());
                        continue;
                    }
                    let mut want = vec![q.x[i], q.y[i]];
                    want.extend(q.z.as_ref().map(|z| z[i]));
                    want.extend(q.m.as_ref().map(|m| m[i]));
                    let same = row.iter().zip(&want).all(|(x, y)| x.to_bits() == y.to_bits());
                    assert!(same, "{name} row {i}: {row:?} vs {want:?}");
                    if i + a as usize == 7 {
                        assert!(row.iter().all(|v| v.is_nan()));
                    } else {
                        let exp = (i + a as usize) as f64 * 0.25 - 3.0;
                        assert_eq!(row[0], if f32 { exp as f32 as f64 } else { exp }, "{name} row {i}");
                    }
                }
            }
        }
        let e = point_values(Dimensions::Xy, Array2::zeros((2, 2)).view(), Some(array![true].view())).unwrap_err();
        assert_eq!(e.to_string(), "invalid argument: validity mask has 1 entries for 2 points");
        drop((t, f));
        std::fs::remove_file(&path).ok();
    }

    #[test]
    fn read_points_refuses_wkb_columns() {
        let path = scratch("wkb");
        let f = File::create(&path).unwrap();
        let mut t = MarquetTable::create(&f, "/w").unwrap();
        t.add_geometry_column("g", &GeometryColumnSpec::default().with_form(StorageForm::VarWkb)).unwrap();
        let g = vec![Some(geo_types::Geometry::Point(geo_types::Point::new(1.0, 2.0)))];
        t.append(&GeoBatch::new().with_geometry("g", GeometryValues::from_geo(&g))).unwrap();
        let e = read_points(&t, "g", 0, 1).unwrap_err().to_string();
        assert_eq!(e, "invalid argument: /w/g is a variable-length WKB column, not a point column (read it with read_geo)");
        assert_eq!(t.read_geo("g", 0, 1).unwrap(), g);
        drop((t, f));
        std::fs::remove_file(&path).ok();
    }

    #[test]
    fn strided_and_contiguous_views_write_the_same() {
        let a = array![[1i32, 2], [3, 4], [5, 6]];
        assert_eq!(array_from_view(a.column(1)).bytes, Array::from_i32(&[2, 4, 6]).bytes);
        assert_eq!(array_from_view(a.row(2)), Array::from_i32(&[5, 6]));
        assert_eq!(array_from_view(array![0.5f32, -1.0].view()), Array::from_f32(&[0.5, -1.0]));
    }
}
