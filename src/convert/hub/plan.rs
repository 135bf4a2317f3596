//! Non-geometry columns between Arrow (as read from / written to Parquet) and H5Col
//! (HEP001): integers of every width, floats, booleans, strings (also dictionary-encoded),
//! timestamps and dates (int64 / int32 with `units`), binary, lists; structs are flattened.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{
    Array, ArrayRef, BinaryArray, BooleanArray, Date32Array, Float32Array, Float64Array, Int16Array, Int32Array,
    Int64Array, Int8Array, LargeListArray, ListArray as ArrowListArray, StringArray, StructArray, TimestampMicrosecondArray,
    TimestampMillisecondArray, TimestampNanosecondArray, TimestampSecondArray, UInt16Array, UInt32Array, UInt64Array,
    UInt8Array,
};
use arrow_buffer::{NullBuffer, OffsetBuffer};
use arrow_schema::{DataType, Field, TimeUnit};

use super::categorical::{CatPlan, CategoryStats};
use super::nested_json::NestedPolicy;
use crate::error::{MarquetError, Result};
use crate::h5col::Dtype;
use crate::marquet::{Compression, Elements};
use crate::h5col::list::ListSpec;
use crate::h5col::{Array as H5Array, ColumnSpec, ColumnValues, ListArray, ListValues};

/// The description we write on list-of-bytes columns that hold UTF-8 text, so the exporter,
/// `dump` and `query` read them back as strings (local ruling L17).
pub const TEXT_BYTES_DESCRIPTION: &str = crate::spec::names::TEXT_BYTES_DESCRIPTION;

/// True for the description of a list-of-bytes column that holds text.
pub fn is_text_bytes(description: Option<&str>) -> bool {
    description == Some(TEXT_BYTES_DESCRIPTION)
}

/// Statistics of a string column gathered in the pre-scan.
#[derive(Debug, Clone, Copy, Default)]
pub struct StrStats {
    /// The longest value in bytes.
    pub max_len: usize,
    /// Some value holds NUL, which a null-terminated HDF5 string cannot hold.
    pub has_nul: bool,
}

impl StrStats {
    /// Count one value.
    pub fn add(&mut self, s: &str) {
        self.max_len = self.max_len.max(s.len());
        self.has_nul |= s.as_bytes().contains(&0);
    }
}

/// The string storage rule (local ruling L17) for a table written into `file`: text as a
/// list of bytes when the file is a netCDF-4 file (its root has `_NCProperties`), because
/// netCDF-C crashes on fixed-length string columns with a fill value (issue #35 bug A).
pub fn text_as_bytes(file: &crate::h5col::File) -> Result<bool> {
    crate::h5::attr_exists(file.id(), "_NCProperties")
}

/// How one Arrow column becomes an H5Col column.
#[derive(Debug, Clone)]
pub enum Plan {
    Int(Dtype),
    Float { f16: bool, f32: bool },
    Bool { nullable: bool },
    /// Fixed-length null-terminated UTF-8 of `size` bytes with fill 0xFF (local ruling L17).
    FixedStr { size: usize },
    /// UTF-8 text as a list of bytes with a mask.
    TextBytes,
    Binary,
    Timestamp(TimeUnit),
    Date32,
    Date64,
    /// List of a numeric leaf.
    ListOf(Dtype),
    /// List of strings (STRING_VALUES).
    ListOfStr,
    /// A dictionary of strings as an HEP001 categorical column (§8.7, issue #22).
    Categorical(Arc<CatPlan>),
}

/// A planned column: where it comes from (field index path, struct children flattened).
#[derive(Debug, Clone)]
pub struct Planned {
    pub name: String,
    pub path: Vec<usize>,
    pub plan: Plan,
    pub spec_units: Option<String>,
    pub description: Option<String>,
    /// Needs string statistics before the plan is final.
    pub needs_str_stats: bool,
    /// The source is a dictionary of strings (`Some(ordered)`): a categorical column when
    /// the pre-scan's labels allow ([`Planned::finish_categories`]).
    pub dictionary: Option<bool>,
    /// The Arrow type of a nested value kept as JSON text ([`super::nested_json`]), or
    /// `arrow.json` for a source column that already is JSON text.
    pub json: Option<String>,
    /// The source's values are turned into JSON text (a nested value, not `arrow.json`).
    pub to_json: bool,
    /// The field names from the root, for a child of a flattened struct.
    pub struct_path: Option<Vec<String>>,
}

fn int_dtype(size: usize, signed: bool) -> Dtype {
    Dtype::Int { size, signed, big_endian: false }
}

fn unit_word(u: TimeUnit) -> &'static str {
    match u {
        TimeUnit::Second => "seconds",
        TimeUnit::Millisecond => "milliseconds",
        TimeUnit::Microsecond => "microseconds",
        TimeUnit::Nanosecond => "nanoseconds",
    }
}

/// `units` for a timestamp: "microseconds since 1970-01-01 00:00:00 UTC" (UTC-adjusted) or
/// without " UTC" for timezone-naive values.
pub fn timestamp_units(u: TimeUnit, utc: bool) -> String {
    format!("{} since 1970-01-01 00:00:00{}", unit_word(u), if utc { " UTC" } else { "" })
}

fn parse_timestamp_units(s: &str) -> Option<(TimeUnit, bool)> {
    let (w, rest) = s.split_once(" since 1970-01-01 00:00:00")?;
    let u = match w {
        "seconds" => TimeUnit::Second,
        "milliseconds" => TimeUnit::Millisecond,
        "microseconds" => TimeUnit::Microsecond,
        "nanoseconds" => TimeUnit::Nanosecond,
        _ => return None,
    };
    match rest {
        "" => Some((u, false)),
        " UTC" => Some((u, true)),
        _ => None,
    }
}

fn leaf_dtype(dt: &DataType) -> Option<Dtype> {
    Some(match dt {
        DataType::Int8 => int_dtype(1, true),
        DataType::Int16 => int_dtype(2, true),
        DataType::Int32 => int_dtype(4, true),
        DataType::Int64 => int_dtype(8, true),
        DataType::UInt8 => int_dtype(1, false),
        DataType::UInt16 => int_dtype(2, false),
        DataType::UInt32 => int_dtype(4, false),
        DataType::UInt64 => int_dtype(8, false),
        DataType::Float32 => Dtype::F32,
        DataType::Float64 => Dtype::F64,
        _ => return None,
    })
}

fn is_string_type(dt: &DataType) -> bool {
    match dt {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => true,
        DataType::Dictionary(_, v) => is_string_type(v),
        _ => false,
    }
}

/// Plan the columns of `field` (index path `path`, field names `names` from the root);
/// structs are flattened into `parent.child` columns whose `arrow_field` attribute records
/// the nesting; nested values HEP001 cannot hold are JSON text or refused (`nested`).
/// Other unsupported types go to `skipped`.
#[allow(clippy::too_many_arguments)]
pub fn plan_field(
    field: &Field,
    name: String,
    path: Vec<usize>,
    names: Vec<String>,
    may_have_nulls: bool,
    nested: NestedPolicy,
    out: &mut Vec<Planned>,
    skipped: &mut Vec<(String, String)>,
) -> Result<()> {
    let mk = |plan: Plan| Planned {
        name: name.clone(),
        path: path.clone(),
        plan,
        spec_units: None,
        description: None,
        needs_str_stats: false,
        dictionary: None,
        json: None,
        to_json: false,
        struct_path: (names.len() > 1).then(|| names.clone()),
    };
    let dt = field.data_type();
    if super::nested_json::needs_json(dt) {
        if nested == NestedPolicy::Refuse {
            return Err(MarquetError::Unsupported(format!(
                "column {name:?}: Arrow type {} (a list of structs, a map or a nested list) has no HEP001 column; \
                 keep it as JSON text with --nested json (Rust: ImportOptions::nested)",
                super::nested_json::type_name(dt)
            )));
        }
        out.push(Planned {
            needs_str_stats: true,
            json: Some(super::nested_json::type_name(dt)),
            to_json: true,
            description: Some(format!(
                "JSON text of the source's nested Arrow values ({}), which HEP001 cannot hold",
                super::nested_json::type_name(dt)
            )),
            ..mk(Plan::FixedStr { size: 2 })
        });
        return Ok(());
    }
    if let Some(d) = leaf_dtype(dt) {
        out.push(match dt {
            DataType::Float32 => mk(Plan::Float { f16: false, f32: true }),
            DataType::Float64 => mk(Plan::Float { f16: false, f32: false }),
            _ => mk(Plan::Int(d)),
        });
        return Ok(());
    }
    match dt {
        DataType::Float16 => out.push(Planned {
            description: Some("converted from a Parquet float16 column (exactly, to float32)".into()),
            ..mk(Plan::Float { f16: true, f32: true })
        }),
        DataType::Boolean => out.push(mk(Plan::Bool { nullable: may_have_nulls && field.is_nullable() })),
        DataType::Dictionary(_, v) if is_string_type(v) => out.push(Planned {
            needs_str_stats: true,
            dictionary: Some(field.dict_is_ordered().unwrap_or(false)),
            ..mk(Plan::FixedStr { size: 2 })
        }),
        d if is_string_type(d) => out.push(Planned {
            needs_str_stats: true,
            // JSON text already (the Arrow canonical extension type, as our export writes it).
            json: (field.metadata().get(super::EXTENSION_NAME).map(String::as_str) == Some(super::nested_json::ARROW_JSON))
                .then(|| super::nested_json::ARROW_JSON.to_string()),
            ..mk(Plan::FixedStr { size: 2 })
        }),
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView => out.push(mk(Plan::Binary)),
        // What pandas gives for a column of None: kept as a string column whose rows are
        // all missing (issue #38), so a later batch with text can be appended to it.
        DataType::Null => out.push(Planned {
            needs_str_stats: true,
            description: Some("every value missing in the source (Arrow type null)".into()),
            ..mk(Plan::FixedStr { size: 2 })
        }),
        DataType::Timestamp(u, tz) => {
            let utc = tz.is_some();
            let mut p = Planned { spec_units: Some(timestamp_units(*u, utc)), ..mk(Plan::Timestamp(*u)) };
            if let Some(tz) = tz {
                if !matches!(tz.as_ref(), "UTC" | "utc" | "+00:00" | "Etc/UTC" | "Z") {
                    p.description = Some(format!("timestamps are UTC instants; the source's display timezone was {tz}"));
                }
            } else {
                p.description = Some("timezone-naive timestamps (Parquet isAdjustedToUTC = false)".into());
            }
            out.push(p)
        }
        DataType::Date32 => out.push(Planned { spec_units: Some("days since 1970-01-01".into()), ..mk(Plan::Date32) }),
        DataType::Date64 => {
            out.push(Planned { spec_units: Some(timestamp_units(TimeUnit::Millisecond, true)), ..mk(Plan::Date64) })
        }
        DataType::List(f) | DataType::LargeList(f) => {
            if let Some(d) = leaf_dtype(f.data_type()) {
                out.push(mk(Plan::ListOf(d)));
            } else if is_string_type(f.data_type()) {
                out.push(mk(Plan::ListOfStr));
            } else {
                skipped.push((name, format!("list of {} has no HEP001 list-column mapping here", f.data_type())));
            }
        }
        DataType::Struct(fields) => {
            for (i, f) in fields.iter().enumerate() {
                let mut p = path.clone();
                p.push(i);
                let mut n = names.clone();
                n.push(f.name().clone());
                plan_field(f, format!("{name}.{}", f.name()), p, n, true, nested, out, skipped)?;
            }
        }
        other => skipped.push((name, format!("arrow type {other} has no HEP001 counterpart"))),
    }
    Ok(())
}

impl Planned {
    /// Finalize a string plan from pre-scan statistics.
    /// One rule for every string column (local ruling L17): fixed-length null-terminated
    /// UTF-8 sized to the longest value, fill 0xFF (no text equals it, so `''`, U+FFFF and
    /// every other value stay values); UTF-8 bytes in a list column with a null mask when a
    /// value holds NUL (which a null-terminated string would cut), is longer than
    /// `max_fixed` bytes, or `text_as_bytes` ([`text_as_bytes`]: a netCDF-4 target).
    pub fn finish_strings(&mut self, st: &StrStats, max_fixed: usize, text_as_bytes: bool) {
        if !self.needs_str_stats {
            return;
        }
        self.plan = if st.max_len > max_fixed || st.has_nul || text_as_bytes {
            self.description = Some(TEXT_BYTES_DESCRIPTION.into());
            Plan::TextBytes
        } else {
            Plan::FixedStr { size: (st.max_len + 1).max(2) }
        };
    }

    /// Make a dictionary column categorical (HEP001 §8.7) when the pre-scan's labels allow
    /// (see [`CategoryStats::finish`]); otherwise it keeps its string plan.
    pub fn finish_categories(&mut self, st: CategoryStats, max_fixed: usize) {
        let Some(ordered) = self.dictionary else { return };
        if let Some(cp) = st.finish(ordered, max_fixed) {
            self.description = None;
            self.plan = Plan::Categorical(Arc::new(cp));
        }
    }

    /// Create the H5Col column, with its `arrow_field` attribute.
    /// `checksum` adds HDF5's Fletcher-32 filter to its datasets
    /// ([`crate::marquet::WriteLayout::checksums`]).
    pub fn create(&self, t: &crate::marquet::MarquetTable, chunk_rows: u64, checksum: bool, compression: Compression) -> Result<()> {
        self.create_column(t, chunk_rows, checksum, compression)?;
        match self.arrow_field() {
            Some(a) => t.table().set_column_text_attr(&self.name, crate::spec::names::ARROW_FIELD, &a),
            None => Ok(()),
        }
    }

    fn create_column(&self, t: &crate::marquet::MarquetTable, chunk_rows: u64, checksum: bool, compression: Compression) -> Result<()> {
        // The layout's compression, as for the geometry column, with shuffle first for
        // multi-byte numbers: an Int64 id's zero high bytes become whole planes of zeros
        // (the benchmark's points file 5 % smaller, and read faster: docs/PERFORMANCE.md).
        let filters = |dtype: &Dtype| crate::marquet::checksummed(compression.filters(elements_of(dtype)), checksum);
        let col = |dtype: Dtype| {
            let mut s = ColumnSpec::new(dtype).with_chunk_rows(chunk_rows);
            s.filters = filters(&s.dtype);
            s.units = self.spec_units.clone();
            s.description = self.description.clone();
            s
        };
        let list = |mut s: ListSpec| -> Result<()> {
            s.offsets_chunk = chunk_rows;
            s.offsets_filters = filters(&Dtype::U64);
            if let crate::h5col::list::LeafSpec::Dataset { filters: f, dtype, .. } = &mut s.leaf {
                *f = filters(dtype);
            }
            s.description = self.description.clone();
            s.with_mask = true;
            t.table().add_list_column(&self.name, &s).map(|_| ())
        };
        match &self.plan {
            Plan::Int(d) => t.add_column(&self.name, &col(d.clone())).map(|_| ()),
            Plan::Float { f32, .. } => t.add_column(&self.name, &col(if *f32 { Dtype::F32 } else { Dtype::F64 })).map(|_| ()),
            Plan::Bool { nullable: false } => t.add_column(&self.name, &col(Dtype::hep001_bool())).map(|_| ()),
            Plan::Bool { nullable: true } => t.add_column(&self.name, &col(nullable_bool())).map(|_| ()),
            Plan::FixedStr { size } => {
                let d = Dtype::FixedString { size: *size, utf8: true, nullterm: true, spacepad: false };
                let s = col(d.clone()).with_fill(crate::h5col::recommended_fill(&d)?.unwrap_or_default());
                t.add_column(&self.name, &s).map(|_| ())
            }
            Plan::TextBytes | Plan::Binary => list(ListSpec::bytes(Vec::new())),
            Plan::Timestamp(_) | Plan::Date64 => t.add_column(&self.name, &col(Dtype::I64)).map(|_| ()),
            Plan::Date32 => t.add_column(&self.name, &col(int_dtype(4, true))).map(|_| ()),
            Plan::ListOf(d) => list(ListSpec::of(d.clone())),
            Plan::ListOfStr => list(ListSpec::strings()),
            Plan::Categorical(cp) => {
                let labels: Vec<&str> = cp.labels.iter().map(String::as_str).collect();
                let cats = crate::h5col::categorical::create_categories(t.table(), &self.name, &labels, cp.ordered)?;
                crate::h5col::categorical::add_categorical_column(t.table(), &self.name, &col(cp.dtype.clone()), &cats).map(|_| ())
            }
        }
    }

    /// The array this plan stores, from the source's array `a`: JSON text for a nested
    /// value ([`super::nested_json`]), `a` itself otherwise.
    pub fn prepare(&self, a: ArrayRef) -> Result<ArrayRef> {
        match self.to_json {
            true => super::nested_json::json_text(&a, &self.name),
            false => Ok(a),
        }
    }

    /// The `arrow_field` attribute of the column (see [`crate::spec::names::ARROW_FIELD`]).
    pub fn arrow_field(&self) -> Option<String> {
        if self.json.is_none() && self.struct_path.is_none() {
            return None;
        }
        let mut m = serde_json::Map::new();
        if let Some(p) = &self.struct_path {
            m.insert("path".into(), serde_json::json!(p));
        }
        if let Some(j) = &self.json {
            m.insert("json".into(), serde_json::json!(j));
        }
        Some(serde_json::Value::Object(m).to_string())
    }

    /// Convert one batch's array to H5Col values.
    pub fn values(&self, a: &ArrayRef) -> Result<ColumnValues> {
        if self.to_json {
            let a = self.prepare(a.clone())?;
            return Planned { to_json: false, ..self.clone() }.values(&a);
        }
        let n = a.len();
        // Logical nulls: an Arrow `null` array has no validity buffer, yet every row is null.
        let missing: Vec<bool> = match a.logical_nulls() {
            Some(nb) => (0..n).map(|i| nb.is_null(i)).collect(),
            None => vec![false; n],
        };
        let arr = |values: H5Array| ColumnValues::Array { values, missing: Some(missing.clone()) };
        Ok(match &self.plan {
            Plan::Int(_) => arr(int_values(a)?),
            Plan::Float { f16: true, .. } => {
                let v: Vec<f32> = a.as_primitive::<Float16Type>().values().iter().map(|h| h.to_f32()).collect();
                arr(H5Array::from_f32(&v))
            }
            Plan::Float { f32: true, .. } => arr(H5Array::from_f32(a.as_primitive::<Float32Type>().values())),
            Plan::Float { .. } => arr(H5Array::from_f64(a.as_primitive::<Float64Type>().values())),
            Plan::Bool { nullable } => {
                let b = a.as_boolean();
                let v: Vec<bool> = (0..n).map(|i| b.value(i)).collect();
                if *nullable {
                    let codes: Vec<i64> = (0..n).map(|i| if missing[i] { 2 } else { v[i] as i64 }).collect();
                    arr(H5Array::from_enum_codes(nullable_bool(), &codes)?)
                } else {
                    ColumnValues::array(H5Array::from_bools(&v))
                }
            }
            Plan::FixedStr { size } => {
                let s = strings(a)?;
                let v: Vec<&str> = s.iter().map(|x| x.unwrap_or("")).collect();
                arr(H5Array::from_strings_sized(&v, true, *size).map_err(|e| {
                    MarquetError::InvalidArgument(format!("column {:?}: {e}", self.name))
                })?)
            }
            Plan::TextBytes => {
                let s = strings(a)?;
                ColumnValues::List(ListArray::from_bytes_rows(s.iter().map(|x| x.map(|s| s.as_bytes()))))
            }
            Plan::Binary => {
                let b = binaries(a)?;
                ColumnValues::List(ListArray::from_bytes_rows(b.iter().map(|x| x.as_deref())))
            }
            Plan::Timestamp(u) => {
                let v: Vec<i64> = match u {
                    TimeUnit::Second => a.as_primitive::<TimestampSecondType>().values().to_vec(),
                    TimeUnit::Millisecond => a.as_primitive::<TimestampMillisecondType>().values().to_vec(),
                    TimeUnit::Microsecond => a.as_primitive::<TimestampMicrosecondType>().values().to_vec(),
                    TimeUnit::Nanosecond => a.as_primitive::<TimestampNanosecondType>().values().to_vec(),
                };
                arr(H5Array::from_i64(&v))
            }
            Plan::Date32 => arr(H5Array::from_i32(a.as_primitive::<Date32Type>().values())),
            Plan::Date64 => arr(H5Array::from_i64(a.as_primitive::<Date64Type>().values())),
            Plan::ListOf(d) => {
                let (offs, vals) = list_parts(a)?;
                let fill = crate::h5col::recommended_fill(d)?.unwrap_or_default();
                let mut leaf = int_or_float_values(&vals)?;
                // Null leaf elements → the leaf fill value (HEP001 §9.3).
                let w = d.size();
                for i in 0..vals.len() {
                    if vals.is_null(i) {
                        leaf.bytes[i * w..(i + 1) * w].copy_from_slice(&fill);
                    }
                }
                let r = offs_range(&offs);
                let leaf = leaf.slice_elems(&r);
                ColumnValues::List(rebase(offs, &missing, ListValues::Leaf(leaf)))
            }
            Plan::Categorical(cp) => cp.values(a, &self.name)?,
            Plan::ListOfStr => {
                let (offs, vals) = list_parts(a)?;
                let s = strings(&vals)?;
                let (lo, hi) = offs_range(&offs);
                let mut so = vec![0u64];
                let mut chars = Vec::new();
                let mut mask = Vec::new();
                for x in &s[lo..hi] {
                    if let Some(x) = x {
                        chars.extend_from_slice(x.as_bytes());
                    }
                    mask.push(x.is_some());
                    so.push(chars.len() as u64);
                }
                let mask = mask.iter().any(|m| !m).then_some(mask);
                ColumnValues::List(rebase(offs, &missing, ListValues::Strings { offsets: so, chars, mask }))
            }
        })
    }
}

trait SliceElems {
    fn slice_elems(self, r: &(usize, usize)) -> H5Array;
}
impl SliceElems for H5Array {
    fn slice_elems(self, r: &(usize, usize)) -> H5Array {
        self.slice(r.0, r.1)
    }
}

fn offs_range(offs: &[usize]) -> (usize, usize) {
    (offs.first().copied().unwrap_or(0), offs.last().copied().unwrap_or(0))
}

fn rebase(offs: Vec<usize>, missing: &[bool], values: ListValues) -> ListArray {
    let base = offs.first().copied().unwrap_or(0);
    let mut o: Vec<u64> = Vec::with_capacity(offs.len());
    // Null rows must occupy no elements (HEP001 §9.2).
    let mut acc = 0u64;
    o.push(0);
    let mut keep: Vec<(usize, usize)> = Vec::new();
    for i in 0..missing.len() {
        if !missing[i] {
            acc += (offs[i + 1] - offs[i]) as u64;
            keep.push((offs[i] - base, offs[i + 1] - base));
        }
        o.push(acc);
    }
    let all_kept = !missing.iter().any(|m| *m) || keep.iter().map(|(a, b)| b - a).sum::<usize>() == offs_range(&offs).1 - base;
    let values = if all_kept { values } else { compact(values, &keep) };
    let mask = missing.iter().any(|m| *m).then(|| missing.iter().map(|m| !m).collect());
    ListArray { offsets: o, mask, values }
}

fn compact(values: ListValues, keep: &[(usize, usize)]) -> ListValues {
    match values {
        ListValues::Leaf(a) => {
            let w = a.dtype.size();
            let mut bytes = Vec::new();
            for (s, e) in keep {
                bytes.extend_from_slice(&a.bytes[s * w..e * w]);
            }
            ListValues::Leaf(H5Array { dtype: a.dtype, bytes })
        }
        ListValues::Strings { offsets, chars, mask } => {
            let mut no = vec![0u64];
            let mut nc = Vec::new();
            let mut nm = Vec::new();
            for (s, e) in keep {
                for j in *s..*e {
                    nc.extend_from_slice(&chars[offsets[j] as usize..offsets[j + 1] as usize]);
                    no.push(nc.len() as u64);
                    nm.push(mask.as_ref().map(|m| m[j]).unwrap_or(true));
                }
            }
            let nm = nm.iter().any(|m| !m).then_some(nm);
            ListValues::Strings { offsets: no, chars: nc, mask: nm }
        }
        other => other,
    }
}

/// Whether shuffle goes before the compressor for a column of `d`: numbers of more than
/// one byte (integers, floats, categorical codes), not strings, booleans or bytes.
fn elements_of(d: &Dtype) -> Elements {
    match d {
        Dtype::Int { size, .. } | Dtype::Float { size, .. } if *size > 1 => Elements::Numbers,
        _ => Elements::Bytes,
    }
}

/// The nullable boolean of HEP001 §8.8 (option 1): enum FALSE=0, TRUE=1, MISSING=2.
pub fn nullable_bool() -> Dtype {
    Dtype::Enum {
        base: Box::new(Dtype::I8),
        members: vec![("FALSE".into(), 0), ("TRUE".into(), 1), ("MISSING".into(), 2)],
    }
}

fn list_parts(a: &ArrayRef) -> Result<(Vec<usize>, ArrayRef)> {
    if let Some(l) = a.as_any().downcast_ref::<ArrowListArray>() {
        return Ok((l.value_offsets().iter().map(|&o| o as usize).collect(), l.values().clone()));
    }
    if let Some(l) = a.as_any().downcast_ref::<LargeListArray>() {
        return Ok((l.value_offsets().iter().map(|&o| o as usize).collect(), l.values().clone()));
    }
    Err(MarquetError::Unsupported(format!("expected a list array, found {}", a.data_type())))
}

fn int_values(a: &ArrayRef) -> Result<H5Array> {
    int_or_float_values(a)
}

fn int_or_float_values(a: &ArrayRef) -> Result<H5Array> {
    Ok(match a.data_type() {
        DataType::Int8 => H5Array::from_i8(a.as_primitive::<Int8Type>().values()),
        DataType::Int16 => H5Array::from_i16(a.as_primitive::<Int16Type>().values()),
        DataType::Int32 => H5Array::from_i32(a.as_primitive::<Int32Type>().values()),
        DataType::Int64 => H5Array::from_i64(a.as_primitive::<Int64Type>().values()),
        DataType::UInt8 => H5Array::from_u8(a.as_primitive::<UInt8Type>().values()),
        DataType::UInt16 => H5Array::from_u16(a.as_primitive::<UInt16Type>().values()),
        DataType::UInt32 => H5Array::from_u32(a.as_primitive::<UInt32Type>().values()),
        DataType::UInt64 => H5Array::from_u64(a.as_primitive::<UInt64Type>().values()),
        DataType::Float32 => H5Array::from_f32(a.as_primitive::<Float32Type>().values()),
        DataType::Float64 => H5Array::from_f64(a.as_primitive::<Float64Type>().values()),
        other => return Err(MarquetError::Unsupported(format!("numeric values of type {other}"))),
    })
}

pub use super::cells::{array_at, binaries, binary_slices, strings};

// ---------------------------------------------------------------------------------------
// Export: H5Col → Arrow.

/// How an H5Col column is written to Arrow.
#[derive(Debug, Clone)]
pub enum OutPlan {
    Numeric(Dtype),
    Bool,
    NullableBool,
    EnumNames(Vec<(String, i64)>),
    Str,
    Timestamp(TimeUnit, bool),
    Date32,
    Bytes { text: bool },
    ListOf(Dtype),
    ListOfStr,
    /// A categorical column (HEP001 §8.7) as `Dictionary<key, utf8>` over its labels.
    Categorical { key: DataType, labels: Arc<StringArray> },
}

/// The export plan of a categorical column with code type `codes` and `labels`:
/// `Dictionary<key, utf8>` (see [`super::categorical::key_type`]).
pub fn categorical_out_plan(codes: &Dtype, labels: &[String]) -> (OutPlan, DataType) {
    let key = super::categorical::key_type(codes);
    let dt = DataType::Dictionary(Box::new(key.clone()), Box::new(DataType::Utf8));
    (OutPlan::Categorical { key, labels: Arc::new(StringArray::from_iter_values(labels)) }, dt)
}

/// Plan the export of column `name` (dataset dtype or list leaf); `None` = not exportable.
pub fn out_plan(
    dtype: &Dtype,
    is_list: bool,
    units: Option<&str>,
    description: Option<&str>,
    list_strings: bool,
) -> std::result::Result<(OutPlan, DataType), String> {
    if is_list {
        if list_strings {
            return Ok((OutPlan::ListOfStr, DataType::List(Arc::new(Field::new("element", DataType::Utf8, true)))));
        }
        if *dtype == Dtype::U8 || matches!(dtype, Dtype::Int { size: 1, signed: false, .. }) {
            let text = is_text_bytes(description);
            return Ok((OutPlan::Bytes { text }, if text { DataType::Utf8 } else { DataType::Binary }));
        }
        let Some(adt) = arrow_numeric(dtype) else { return Err(format!("list of {dtype} is not exported")) };
        return Ok((OutPlan::ListOf(dtype.clone()), DataType::List(Arc::new(Field::new("element", adt, true)))));
    }
    if dtype.is_boolean() {
        return Ok((OutPlan::Bool, DataType::Boolean));
    }
    match dtype {
        Dtype::Int { size: 8, signed: true, .. } => {
            if let Some((u, utc)) = units.and_then(parse_timestamp_units) {
                let tz = utc.then(|| Arc::<str>::from("UTC"));
                return Ok((OutPlan::Timestamp(u, utc), DataType::Timestamp(u, tz)));
            }
            Ok((OutPlan::Numeric(dtype.clone()), DataType::Int64))
        }
        Dtype::Int { size: 4, signed: true, .. } if units == Some("days since 1970-01-01") => {
            Ok((OutPlan::Date32, DataType::Date32))
        }
        Dtype::Int { .. } | Dtype::Float { .. } => {
            let adt = arrow_numeric(dtype).ok_or_else(|| format!("{dtype} is not exported"))?;
            Ok((OutPlan::Numeric(dtype.clone()), adt))
        }
        Dtype::FixedString { .. } | Dtype::VarString { .. } => Ok((OutPlan::Str, DataType::Utf8)),
        Dtype::Enum { members, .. } => {
            let names: Vec<&str> = members.iter().map(|(n, _)| n.as_str()).collect();
            if names.len() == 3 && names.contains(&"FALSE") && names.contains(&"TRUE") && names.contains(&"MISSING") {
                return Ok((OutPlan::NullableBool, DataType::Boolean));
            }
            Ok((OutPlan::EnumNames(members.clone()), DataType::Utf8))
        }
        other => Err(format!("{other} has no Parquet mapping here")),
    }
}

fn arrow_numeric(d: &Dtype) -> Option<DataType> {
    Some(match d {
        Dtype::Int { size: 1, signed: true, .. } => DataType::Int8,
        Dtype::Int { size: 2, signed: true, .. } => DataType::Int16,
        Dtype::Int { size: 4, signed: true, .. } => DataType::Int32,
        Dtype::Int { size: 8, signed: true, .. } => DataType::Int64,
        Dtype::Int { size: 1, signed: false, .. } => DataType::UInt8,
        Dtype::Int { size: 2, signed: false, .. } => DataType::UInt16,
        Dtype::Int { size: 4, signed: false, .. } => DataType::UInt32,
        Dtype::Int { size: 8, signed: false, .. } => DataType::UInt64,
        Dtype::Float { size: 4, .. } => DataType::Float32,
        Dtype::Float { size: 8, .. } => DataType::Float64,
        _ => return None,
    })
}

fn nulls_of(missing: &[bool]) -> Option<NullBuffer> {
    missing.iter().any(|m| *m).then(|| NullBuffer::from(missing.iter().map(|m| !m).collect::<Vec<bool>>()))
}

macro_rules! prim {
    ($arr:ty, $t:ty, $bytes:expr, $nulls:expr) => {{
        let w = std::mem::size_of::<$t>();
        let v: Vec<$t> = $bytes.chunks_exact(w).map(|c| <$t>::from_le_bytes(c.try_into().unwrap_or([0; std::mem::size_of::<$t>()]))).collect();
        Arc::new(<$arr>::new(v.into(), $nulls)) as ArrayRef
    }};
}

fn numeric_array(d: &Dtype, bytes: &[u8], nulls: Option<NullBuffer>) -> Result<ArrayRef> {
    Ok(match d {
        Dtype::Int { size: 1, signed: true, .. } => prim!(Int8Array, i8, bytes, nulls),
        Dtype::Int { size: 2, signed: true, .. } => prim!(Int16Array, i16, bytes, nulls),
        Dtype::Int { size: 4, signed: true, .. } => prim!(Int32Array, i32, bytes, nulls),
        Dtype::Int { size: 8, signed: true, .. } => prim!(Int64Array, i64, bytes, nulls),
        Dtype::Int { size: 1, signed: false, .. } => prim!(UInt8Array, u8, bytes, nulls),
        Dtype::Int { size: 2, signed: false, .. } => prim!(UInt16Array, u16, bytes, nulls),
        Dtype::Int { size: 4, signed: false, .. } => prim!(UInt32Array, u32, bytes, nulls),
        Dtype::Int { size: 8, signed: false, .. } => prim!(UInt64Array, u64, bytes, nulls),
        Dtype::Float { size: 4, .. } => prim!(Float32Array, f32, bytes, nulls),
        Dtype::Float { size: 8, .. } => prim!(Float64Array, f64, bytes, nulls),
        other => return Err(MarquetError::Unsupported(format!("{other} values"))),
    })
}

/// Build the Arrow array of a dataset column's rows.
pub fn out_array(p: &OutPlan, a: &H5Array, missing: &[bool]) -> Result<ArrayRef> {
    let nulls = nulls_of(missing);
    let n = a.len();
    Ok(match p {
        OutPlan::Numeric(d) => numeric_array(&d.to_le(), &a.bytes, nulls)?,
        OutPlan::Bool => Arc::new(BooleanArray::from((0..n).map(|i| a.element(i)[0] != 0).collect::<Vec<bool>>())),
        OutPlan::NullableBool | OutPlan::EnumNames(_) => {
            let codes: Vec<i64> = (0..n).map(|i| a.get_i128(i).unwrap_or(0) as i64).collect();
            if let OutPlan::EnumNames(m) = p {
                let v: Vec<Option<&str>> = (0..n)
                    .map(|i| {
                        if missing[i] {
                            None
                        } else {
                            m.iter().find(|(_, c)| *c == codes[i]).map(|(s, _)| s.as_str())
                        }
                    })
                    .collect();
                Arc::new(StringArray::from(v))
            } else {
                let v: Vec<Option<bool>> =
                    (0..n).map(|i| if missing[i] || codes[i] == 2 { None } else { Some(codes[i] == 1) }).collect();
                Arc::new(BooleanArray::from(v))
            }
        }
        OutPlan::Str => {
            let v: Vec<Option<String>> = (0..n).map(|i| if missing[i] { None } else { a.get_str(i) }).collect();
            Arc::new(StringArray::from(v))
        }
        OutPlan::Timestamp(u, utc) => {
            let v: Vec<i64> = a.bytes.chunks_exact(8).map(|c| i64::from_le_bytes(c.try_into().unwrap_or([0; 8]))).collect();
            let tz = utc.then(|| Arc::<str>::from("UTC"));
            match u {
                TimeUnit::Second => Arc::new(TimestampSecondArray::new(v.into(), nulls).with_timezone_opt(tz)),
                TimeUnit::Millisecond => Arc::new(TimestampMillisecondArray::new(v.into(), nulls).with_timezone_opt(tz)),
                TimeUnit::Microsecond => Arc::new(TimestampMicrosecondArray::new(v.into(), nulls).with_timezone_opt(tz)),
                TimeUnit::Nanosecond => Arc::new(TimestampNanosecondArray::new(v.into(), nulls).with_timezone_opt(tz)),
            }
        }
        OutPlan::Date32 => {
            let v: Vec<i32> = a.bytes.chunks_exact(4).map(|c| i32::from_le_bytes(c.try_into().unwrap_or([0; 4]))).collect();
            Arc::new(Date32Array::new(v.into(), nulls))
        }
        OutPlan::Categorical { key, labels } => super::categorical::dictionary_array(key, labels, a, missing)?,
        _ => return Err(MarquetError::Unsupported("list plan for a dataset column".into())),
    })
}

/// Build the Arrow array of a list column's rows.
pub fn out_list_array(p: &OutPlan, l: &ListArray) -> Result<ArrayRef> {
    let n = l.len();
    let missing: Vec<bool> = (0..n).map(|i| l.is_null(i)).collect();
    let nulls = nulls_of(&missing);
    let offsets: Vec<i32> = l.offsets.iter().map(|&o| i32::try_from(o).unwrap_or(i32::MAX)).collect();
    if l.offsets.last().copied().unwrap_or(0) > i32::MAX as u64 {
        return Err(MarquetError::Unsupported("list column batch larger than 2 GiB".into()));
    }
    Ok(match (p, &l.values) {
        (OutPlan::Bytes { text }, ListValues::Leaf(a)) => {
            let v: Vec<Option<&[u8]>> = (0..n).map(|i| l.bytes_of(i)).collect();
            let _ = a;
            if *text {
                let s: Vec<Option<String>> = v.iter().map(|b| b.map(|b| String::from_utf8_lossy(b).into_owned())).collect();
                Arc::new(StringArray::from(s))
            } else {
                Arc::new(BinaryArray::from(v))
            }
        }
        (OutPlan::ListOf(d), ListValues::Leaf(a)) => {
            let fill = crate::h5col::recommended_fill(d).ok().flatten();
            let leaf_missing = a.missing(fill.as_deref());
            let values = numeric_array(&d.to_le(), &a.bytes, nulls_of(&leaf_missing))?;
            let f = Arc::new(Field::new("element", values.data_type().clone(), true));
            Arc::new(ArrowListArray::try_new(f, OffsetBuffer::new(offsets.into()), values, nulls).map_err(|e| MarquetError::Unsupported(e.to_string()))?)
        }
        (OutPlan::ListOfStr, ListValues::Strings { offsets: so, chars, mask }) => {
            let k = so.len().saturating_sub(1);
            let v: Vec<Option<String>> = (0..k)
                .map(|j| {
                    if mask.as_ref().is_some_and(|m| !m[j]) {
                        None
                    } else {
                        Some(String::from_utf8_lossy(&chars[so[j] as usize..so[j + 1] as usize]).into_owned())
                    }
                })
                .collect();
            let values: ArrayRef = Arc::new(StringArray::from(v));
            let f = Arc::new(Field::new("element", DataType::Utf8, true));
            Arc::new(ArrowListArray::try_new(f, OffsetBuffer::new(offsets.into()), values, nulls).map_err(|e| MarquetError::Unsupported(e.to_string()))?)
        }
        _ => return Err(MarquetError::Unsupported("list column layout not exported".into())),
    })
}

/// A struct array for a covering column (`xmin, ymin[, zmin], xmax, ymax[, zmax]`).
pub fn covering_struct(names: &[&str], f32: bool, cols: Vec<Vec<f64>>, missing: &[bool]) -> Result<ArrayRef> {
    let nulls = nulls_of(missing);
    let mut fields = Vec::new();
    let mut arrays: Vec<ArrayRef> = Vec::new();
    for (n, v) in names.iter().zip(cols) {
        if f32 {
            let v: Vec<f32> = v.iter().map(|x| *x as f32).collect();
            fields.push(Field::new(*n, DataType::Float32, true));
            arrays.push(Arc::new(Float32Array::new(v.into(), nulls.clone())));
        } else {
            fields.push(Field::new(*n, DataType::Float64, true));
            arrays.push(Arc::new(Float64Array::new(v.into(), nulls.clone())));
        }
    }
    Ok(Arc::new(
        StructArray::try_new(fields.into(), arrays, nulls).map_err(|e| MarquetError::Unsupported(e.to_string()))?,
    ))
}
