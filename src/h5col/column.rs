//! Columns (HEP001 §4, §8): kinds, creation specs, values to write, batches, and the
//! column dataset with its typed reads.

use std::collections::BTreeMap;

use crate::error::{MarquetError, Result};
use crate::h5::{self, Dtype, Filter, Hid};
use crate::spec::names;

use super::*;

/// How a column is stored.
#[derive(Debug, Clone, PartialEq)]
pub enum ColumnKind {
    /// A rank-1 column dataset.
    Dataset,
    /// A list column group (`CLASS="LIST_COLUMN"`).
    List,
}

/// The scalar value types a caller can name without spelling an HDF5 datatype (the C ABI's
/// `MARQUET_TYPE_*`): little-endian 32/64-bit signed integers, 64-bit floats, and UTF-8
/// strings stored as fixed-length, NUL-terminated strings (HEP001 §8.2–§8.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ScalarType {
    /// 32-bit signed integer.
    Int32,
    /// 64-bit signed integer.
    Int64,
    /// 64-bit IEEE float.
    Float64,
    /// UTF-8 string of at most `max_bytes` bytes.
    String {
        /// Longest value in bytes (the stored element is one byte longer, for the NUL).
        max_bytes: usize,
    },
}

/// Longest value a [`ScalarType::String`] column may declare: 1 MiB - 1 bytes.
pub const MAX_STRING_BYTES: usize = (1 << 20) - 1;

impl ScalarType {
    /// The stored datatype; a string of 0 or more than [`MAX_STRING_BYTES`] bytes is refused.
    pub fn dtype(self) -> Result<Dtype> {
        Ok(match self {
            ScalarType::Int32 => Dtype::Int { size: 4, signed: true, big_endian: false },
            ScalarType::Int64 => Dtype::I64,
            ScalarType::Float64 => Dtype::F64,
            ScalarType::String { max_bytes } => {
                if max_bytes == 0 || max_bytes > MAX_STRING_BYTES {
                    return Err(MarquetError::InvalidArgument(format!("max_bytes {max_bytes} is not in 1..{}", MAX_STRING_BYTES + 1)));
                }
                Dtype::FixedString { size: max_bytes + 1, utf8: true, nullterm: true, spacepad: false }
            }
        })
    }

    /// The scalar type of a stored datatype, `None` for every other datatype.
    pub fn of(dtype: &Dtype) -> Option<ScalarType> {
        Some(match dtype.to_le() {
            Dtype::Int { size: 4, signed: true, .. } => ScalarType::Int32,
            Dtype::Int { size: 8, signed: true, .. } => ScalarType::Int64,
            Dtype::Float { size: 8, .. } => ScalarType::Float64,
            Dtype::FixedString { size, .. } => ScalarType::String { max_bytes: size.saturating_sub(1) },
            _ => return None,
        })
    }
}

/// Options for a new column dataset.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ColumnSpec {
    /// Element datatype of the column dataset (HEP001 §8.3).
    pub dtype: Dtype,
    /// Fill value bytes; `None` = HEP001's recommended fill for the datatype.
    pub fill: Option<Vec<u8>>,
    /// Chunk length in rows (default [`DEFAULT_CHUNK_ROWS`]).
    pub chunk_rows: u64,
    /// Filter pipeline (default deflate level 4).
    pub filters: Vec<Filter>,
    /// The `units` attribute (HEP001 §8.6); `None` = dimensionless.
    pub units: Option<String>,
    /// The `units_vocabulary` attribute, overriding the table's default (HEP001 §8.6).
    pub units_vocabulary: Option<String>,
    /// The `description` attribute (HEP001 §8.6).
    pub description: Option<String>,
    /// `(valid_min, valid_max)` as element bytes.
    pub valid_range: Option<(Vec<u8>, Vec<u8>)>,
}

impl ColumnSpec {
    /// A column of `dtype` with the recommended fill, deflate level 4 and default chunking.
    pub fn new(dtype: Dtype) -> ColumnSpec {
        ColumnSpec {
            dtype,
            fill: None,
            chunk_rows: DEFAULT_CHUNK_ROWS,
            filters: vec![Filter::Deflate(4)],
            units: None,
            units_vocabulary: None,
            description: None,
            valid_range: None,
        }
    }
    /// Declare this fill value (element bytes, little-endian) instead of the recommended one;
    /// it must lie outside the column's logical range (HEP001 §8.5).
    pub fn with_fill(mut self, fill: Vec<u8>) -> Self {
        self.fill = Some(fill);
        self
    }
    /// Chunk length in rows (at least 1).
    pub fn with_chunk_rows(mut self, rows: u64) -> Self {
        self.chunk_rows = rows.max(1);
        self
    }
    /// Use this filter pipeline, in order (an empty one stores the data uncompressed).
    pub fn with_filters(mut self, f: Vec<Filter>) -> Self {
        self.filters = f;
        self
    }
    /// Set the `units` attribute (HEP001 §8.6).
    pub fn with_units(mut self, u: &str) -> Self {
        self.units = Some(u.into());
        self
    }
    /// Set the column's `units_vocabulary` attribute (HEP001 §8.6), e.g. `"UDUNITS-2"`.
    pub fn with_units_vocabulary(mut self, u: &str) -> Self {
        self.units_vocabulary = Some(u.into());
        self
    }
    /// Set the `description` attribute (HEP001 §8.6).
    pub fn with_description(mut self, d: &str) -> Self {
        self.description = Some(d.into());
        self
    }
}

/// Values for one column in an append or update batch.
#[derive(Debug, Clone)]
pub enum ColumnValues {
    /// Dataset values; rows flagged in `missing` are written as the column's fill value.
    Array {
        /// One element per row; elements of missing rows are ignored.
        values: Array,
        /// `Some(flags)`, `true` = missing, when some rows are missing.
        missing: Option<Vec<bool>>,
    },
    /// List column rows.
    List(ListArray),
}

impl ColumnValues {
    /// Plain values with no missing rows.
    pub fn array(values: Array) -> ColumnValues {
        ColumnValues::Array { values, missing: None }
    }
    pub(super) fn len(&self) -> usize {
        match self {
            ColumnValues::Array { values, .. } => values.len(),
            ColumnValues::List(l) => l.len(),
        }
    }
}

/// A batch of rows to append: column name → values (every column of the table must be
/// present, or be given as missing with [`Batch::missing_rest`]).
#[derive(Debug, Clone, Default)]
pub struct Batch {
    /// Values per column name; all must have the same number of rows.
    pub columns: BTreeMap<String, ColumnValues>,
    /// Columns not listed are filled with missing values (fill / null lists).
    pub missing_rest: bool,
}

impl Batch {
    /// An empty batch.
    pub fn new() -> Batch {
        Batch::default()
    }
    /// Add the values of column `name`.
    pub fn with(mut self, name: &str, v: ColumnValues) -> Batch {
        self.columns.insert(name.to_string(), v);
        self
    }
    /// Add the values of column `name` without missing rows.
    pub fn with_array(self, name: &str, a: Array) -> Batch {
        self.with(name, ColumnValues::array(a))
    }
    /// Number of rows (all columns must agree).
    pub fn nrows(&self) -> Result<u64> {
        let mut n: Option<usize> = None;
        for (name, c) in &self.columns {
            match n {
                None => n = Some(c.len()),
                Some(m) if m != c.len() => {
                    return Err(MarquetError::InvalidArgument(format!(
                        "column '{name}' has {} rows in the batch, others have {m}",
                        c.len()
                    )))
                }
                _ => {}
            }
        }
        Ok(n.unwrap_or(0) as u64)
    }
}


/// Is `name` reserved by HEP001 or HEP002 as something a column must not be called?
pub fn is_reserved_name(name: &str) -> bool {
    const RESERVED: &[&str] = &[
        names::CATEGORIES,
        names::SEARCH_INDEXES,
        names::CLASS,
        names::VERSION,
        names::NROWS,
        names::TITLE,
        names::INDEX_COLUMNS,
        names::GENERATION,
        names::SEARCH_INDEX_LIST,
        names::VALID_MIN,
        names::VALID_MAX,
        names::MASK,
        names::KIND,
        names::VALUES,
        names::OFFSETS,
        names::CHARS,
        names::SOURCE_GENERATION,
        names::SOURCE_NROWS,
        names::COLUMN_ORDER,
        names::INDEX_NAME,
        names::MARQUET_VERSION,
        names::GEOMETRY_COLUMNS,
        names::GEOMETRY_ENCODING,
        names::GEOMETRY_TYPES,
        names::CRS,
        names::EPOCH,
        names::EDGES,
        names::ORIENTATION,
        names::BBOX,
        names::COVERING,
    ];
    RESERVED.contains(&name)
}

/// An open column dataset.
#[derive(Debug)]
pub struct Column {
    pub(crate) ds: Hid,
    /// HDF5 path of the column dataset.
    pub path: String,
    /// The column name (its link name in the table group).
    pub name: String,
    /// Datatype, extent, chunking, fill value and filters, as read when the column was opened.
    pub info: h5::DatasetInfo,
}

impl Column {
    internal_pub! {
        /// The dataset id.
        fn id(&self) -> hdf5_sys::h5i::hid_t {
            self.ds.id()
        }
    }

    /// A text attribute of the column dataset (`UNITS`, `DESCRIPTION`, ...; HEP001 §8.6),
    /// `None` when absent or not text.
    pub fn text_attr(&self, name: &str) -> Result<Option<String>> {
        Ok(h5::attr_read(self.id(), name)?.and_then(|a| a.as_str().map(|s| s.to_string())))
    }
    /// The column's datatype as stored.
    pub fn dtype(&self) -> &Dtype {
        &self.info.dtype
    }
    /// The declared user-defined fill value, if any.
    pub fn fill(&self) -> Option<&[u8]> {
        self.info.fill.as_deref()
    }
    /// Chunk length in rows (None for contiguous).
    pub fn chunk_rows(&self) -> Option<u64> {
        self.info.chunk.as_ref().and_then(|c| c.first().copied())
    }
    /// Current extent.
    pub fn len(&self) -> u64 {
        self.info.dims[0]
    }
    /// True when the extent is 0.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Read rows `[start, start+count)`; the caller keeps reads below NROWS
    /// ([`Table::read`] does).
    pub fn read(&self, start: u64, count: u64) -> Result<Array> {
        if start.checked_add(count).map(|e| e > self.len()).unwrap_or(true) {
            return Err(MarquetError::spec(
                &self.path,
                "HEP001 §13 req 2",
                format!("rows {start}..{} past the dataset extent {}", start.saturating_add(count), self.len()),
            ));
        }
        if let Dtype::VarString { utf8 } = self.info.dtype {
            // Variable-length strings (HEP001 §8.3, other producers) are read into
            // fixed-length elements sized to this read's longest value: the same logical
            // bytes, compared with the fill by [`crate::h5col::is_missing`] (issue #35).
            let v = h5::dataset_read_vlen_strings(self.ds.id(), start, count, utf8, &self.path)?;
            return Array::from_byte_strings(&v, utf8).map_err(|e| MarquetError::InvalidArgument(format!("{}: {e}", self.path)));
        }
        let mem = self.info.dtype.to_le();
        let bytes = h5::dataset_read(self.ds.id(), start, count, &mem, &self.path)?;
        Ok(Array { dtype: mem, bytes })
    }

    /// Write rows encoded in the column's little-endian element layout (what
    /// [`Column::read`] returns and `encode_values` makes) from row `start`, within the
    /// extent; no NROWS, GENERATION or index handling (the callers keep HEP001 §12).
    pub(crate) fn write_encoded(&self, start: u64, bytes: &[u8]) -> Result<()> {
        h5::dataset_write(self.ds.id(), start, &self.info.dtype.to_le(), bytes, &self.path)
    }

    /// Read the rows `rows` (ascending, each below the extent), in that order: one read per
    /// span of nearby rows ([`take_spans`]), so rows in one chunk cost one decompression.
    pub fn take(&self, rows: &[u64]) -> Result<Array> {
        if let Dtype::VarString { utf8 } = self.info.dtype {
            let mut v: Vec<Vec<u8>> = Vec::with_capacity(rows.len());
            for span in take_spans(rows, &self.path)? {
                let a = self.read(span.start, span.end - span.start)?;
                for &r in &rows[span.first..span.last] {
                    v.push(crate::h5col::array::str_bytes(a.element((r - span.start) as usize)).to_vec());
                }
            }
            return Array::from_byte_strings(&v, utf8);
        }
        let mem = self.info.dtype.to_le();
        let es = mem.size();
        let mut bytes = Vec::with_capacity(rows.len() * es);
        for span in take_spans(rows, &self.path)? {
            let a = self.read(span.start, span.end - span.start)?;
            for &r in &rows[span.first..span.last] {
                let i = ((r - span.start) as usize) * es;
                bytes.extend_from_slice(&a.bytes[i..i + es]);
            }
        }
        Ok(Array { dtype: mem, bytes })
    }

    pub(super) fn ensure_len(&self, n: u64) -> Result<()> {
        let cur = h5::dataset_info(self.ds.id(), &self.path)?.dims[0];
        if cur < n {
            if self.info.chunk.is_none() {
                return Err(MarquetError::Unsupported(format!("{}: contiguous dataset cannot grow", self.path)));
            }
            h5::dataset_set_len(self.ds.id(), n, &self.path)?;
        }
        Ok(())
    }

    /// Encode batch values to bytes in the column's layout, writing fill for missing rows.
    pub(super) fn encode_values(&self, v: Option<&ColumnValues>, k: u64) -> Result<Vec<u8>> {
        if let Dtype::VarString { .. } = self.info.dtype {
            return Err(MarquetError::Unsupported(format!(
                "{}: writing to a variable-length string column (written by another producer) is not supported",
                self.path
            )));
        }
        let dt = self.info.dtype.to_le();
        let es = dt.size();
        let fill = self.info.fill.clone();
        match v {
            None => {
                let f = fill.ok_or_else(|| {
                    MarquetError::InvalidArgument(format!("{}: no fill value, values are required", self.path))
                })?;
                Ok(f.repeat(k as usize))
            }
            // Text stored as a list of bytes elsewhere (e.g. a staged batch, local ruling
            // L17) into a string column: the same bytes, nulls as missing.
            Some(ColumnValues::List(l)) if matches!(dt, Dtype::FixedString { .. }) && matches!(&l.values, ListValues::Leaf(a) if a.dtype.size() == 1) => {
                let missing: Vec<bool> = (0..l.len()).map(|i| l.is_null(i)).collect();
                let rows: Vec<&[u8]> = (0..l.len()).map(|i| l.bytes_of(i).unwrap_or_default()).collect();
                let Dtype::FixedString { size, utf8, .. } = dt else { unreachable!() };
                let values = Array::from_byte_strings_sized(&rows, utf8, size.max(rows.iter().map(|r| r.len() + 1).max().unwrap_or(1)))
                    .map_err(|e| MarquetError::InvalidArgument(format!("{}: {e}", self.path)))?;
                self.encode_values(Some(&ColumnValues::Array { values, missing: Some(missing) }), k)
            }
            Some(ColumnValues::List(_)) => {
                Err(MarquetError::InvalidArgument(format!("{} is not a list column", self.path)))
            }
            Some(ColumnValues::Array { values, missing }) => {
                let values = convert_array(values, &dt, &self.path)?;
                let nvals = values.len();
                if let Some(m) = missing {
                    if m.len() != nvals {
                        return Err(MarquetError::InvalidArgument("missing flags length mismatch".into()));
                    }
                }
                // A present value equal to the fill would read back as missing (HEP001
                // §8.5): refuse it, naming the row, instead of changing it (issue #38;
                // Marquet's own string fill cannot be met, local ruling L17).
                // Values given without missing flags are taken as already encoded.
                if let (Some(f), Some(m)) = (fill.as_deref(), missing.as_ref()) {
                    if let Some(i) = first_present_fill(&dt, &values, m, f) {
                        return Err(MarquetError::InvalidArgument(format!(
                            "{}: the value {} of batch row {i} equals the column's fill value, so it would read back as missing (HEP001 §8.5); the column cannot hold it",
                            self.path,
                            values.display(i).escape_debug()
                        )));
                    }
                }
                let mut bytes = values.bytes;
                if let Some(m) = missing {
                    let f = fill.as_ref().ok_or_else(|| {
                        MarquetError::InvalidArgument(format!("{}: column has no fill value for missing rows", self.path))
                    })?;
                    for (i, &is_m) in m.iter().enumerate() {
                        if is_m {
                            bytes[i * es..(i + 1) * es].copy_from_slice(f);
                        }
                    }
                }
                if dt.is_boolean() {
                    if let Some(b) = bytes.iter().find(|&&b| b > 1) {
                        return Err(MarquetError::InvalidArgument(format!(
                            "{}: boolean value {b} is neither FALSE nor TRUE (HEP001 §8.8)",
                            self.path
                        )));
                    }
                }
                Ok(bytes)
            }
        }
    }
}

/// Convert `a` to the column layout `dt` where that is lossless and unambiguous
/// (same type; numeric widening; fixed strings re-padded). Otherwise an error.
fn convert_array(a: &Array, dt: &Dtype, path: &str) -> Result<Array> {
    if a.dtype.to_le() == *dt {
        return Ok(a.clone());
    }
    match (dt, &a.dtype) {
        (Dtype::FixedString { size, utf8, nullterm: true, spacepad: false }, Dtype::FixedString { .. }) => {
            // Re-padded byte for byte: never through a lossy text decoding.
            let refs: Vec<&[u8]> = (0..a.len()).map(|i| a.get_str_bytes(i).unwrap_or_default()).collect();
            Array::from_byte_strings_sized(&refs, *utf8, *size).map_err(|e| MarquetError::InvalidArgument(format!("{path}: {e}")))
        }
        (Dtype::Float { size: 8, .. }, Dtype::Float { size: 4, .. }) => Ok(Array::from_f64(&a.to_f64_vec().unwrap_or_default())),
        (Dtype::Enum { base, .. }, Dtype::Int { .. }) => {
            let codes: Vec<i64> = (0..a.len()).map(|i| a.get_i128(i).unwrap_or(0) as i64).collect();
            let _ = base;
            Array::from_enum_codes(dt.clone(), &codes)
        }
        (Dtype::Int { size, signed, .. }, Dtype::Int { .. }) => {
            let mut bytes = Vec::with_capacity(a.len() * size);
            for i in 0..a.len() {
                let v = a.get_i128(i).unwrap_or(0);
                let ok = if *signed {
                    let bits = (*size * 8) as u32;
                    v >= -(1i128 << (bits - 1)) && v < (1i128 << (bits - 1))
                } else {
                    v >= 0 && (*size == 8 || v < (1i128 << (*size * 8)))
                };
                if !ok {
                    return Err(MarquetError::InvalidArgument(format!("{path}: value {v} does not fit the column type")));
                }
                bytes.extend_from_slice(&v.to_le_bytes()[..*size]);
            }
            Ok(Array { dtype: dt.clone(), bytes })
        }
        _ => Err(MarquetError::InvalidArgument(format!(
            "{path}: values of type {} cannot be written to a column of type {dt}",
            a.dtype
        ))),
    }
}

/// The first row of `values` flagged present whose value is the fill `f` (HEP001 §8.5's
/// missing test, [`crate::h5col::is_missing`]). Eight-byte values against a fill that is
/// not a NaN compare as words: the general test, a `memcmp` a row, was 2 % of a point
/// convert's time.
fn first_present_fill(dt: &Dtype, values: &Array, m: &[bool], f: &[u8]) -> Option<usize> {
    let nan_fill = match dt {
        Dtype::Float { size: 8, .. } => f.try_into().is_ok_and(|b: [u8; 8]| f64::from_le_bytes(b).is_nan()),
        _ => false,
    };
    if dt.size() == 8 && f.len() == 8 && !nan_fill && !matches!(dt, Dtype::FixedString { .. } | Dtype::VarString { .. }) {
        let fw = u64::from_ne_bytes(f.try_into().ok()?);
        return values.bytes.chunks_exact(8).zip(m).position(|(v, &mi)| !mi && v.try_into().is_ok_and(|b: [u8; 8]| u64::from_ne_bytes(b) == fw));
    }
    (0..values.len()).find(|&i| !m[i] && crate::h5col::is_missing(dt, values.element(i), Some(f)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The word compare finds the row the general missing test finds — integers and
    /// floats, a NaN fill (general test), a `-0.0` value against a `0.0` fill (bitwise:
    /// not the fill), rows flagged missing skipped — and a present value equal to the fill
    /// is refused by `encode_values`, naming its row.
    #[test]
    fn first_present_fill_is_the_missing_test() {
        let cases: Vec<(Dtype, Array, Vec<u8>)> = vec![
            (Dtype::I64, Array::from_i64(&[5, -1, 7, -1, 9]), (-1i64).to_le_bytes().to_vec()),
            (Dtype::U64, Array::from_u64(&[5, 6, 7, u64::MAX]), u64::MAX.to_le_bytes().to_vec()),
            (Dtype::F64, Array::from_f64(&[1.0, -0.0, f64::NAN, -9999.0, 2.0]), (-9999.0f64).to_le_bytes().to_vec()),
            (Dtype::F64, Array::from_f64(&[1.0, -0.0, 0.0]), 0.0f64.to_le_bytes().to_vec()),
            (Dtype::F64, Array::from_f64(&[1.0, 2.0, f64::NAN, 3.0]), f64::NAN.to_le_bytes().to_vec()),
            (Dtype::F32, Array::from_f32(&[1.0, f32::NAN]), f32::NAN.to_le_bytes().to_vec()),
            (Dtype::I64, Array::from_i64(&[1, 2, 3]), 0i64.to_le_bytes().to_vec()),
        ];
        for (dt, a, f) in &cases {
            for mask in 0..(1u32 << a.len()) {
                let m: Vec<bool> = (0..a.len()).map(|i| mask & (1 << i) != 0).collect();
                let want = (0..a.len()).find(|&i| !m[i] && crate::h5col::is_missing(dt, a.element(i), Some(f)));
                assert_eq!(first_present_fill(dt, a, &m, f), want, "{dt:?} {mask:b}");
            }
        }
        assert_eq!(first_present_fill(&Dtype::I64, &cases[0].1, &[false; 5], &cases[0].2), Some(1));
        assert_eq!(first_present_fill(&Dtype::F64, &cases[3].1, &[false; 3], &cases[3].2), Some(2), "-0.0 is not the fill 0.0");
        assert_eq!(first_present_fill(&Dtype::F64, &cases[4].1, &[false; 4], &cases[4].2), Some(2));
    }
}
