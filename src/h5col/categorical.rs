//! Categorical columns (HEP001 §8.7): integer codes into a categories dataset in the
//! table's `CATEGORIES` group, bound by the column's scalar `CATEGORIES` object reference.
//! One categories dataset may serve several columns; its `ordered` boolean says whether
//! the order of its entries means something.

use super::{ColumnKind, ColumnSpec, Table};
use crate::error::{MarquetError, Result};
use crate::h5::{self, DatasetSpec, Dtype, Space};
use crate::spec::names;

/// A categories dataset, read.
#[derive(Debug, Clone, PartialEq)]
pub struct Categories {
    /// Absolute HDF5 path of the categories dataset.
    pub path: String,
    /// The labels, code `i` = `labels[i]`.
    pub labels: Vec<String>,
    /// The `ordered` attribute (absent = false).
    pub ordered: bool,
}

impl Categories {
    /// The code of `label`, if it is a category.
    pub fn code_of(&self, label: &str) -> Option<i64> {
        self.labels.iter().position(|l| l == label).map(|i| i as i64)
    }
    /// The label of `code`, if it is in range.
    pub fn label_of(&self, code: i128) -> Option<&str> {
        usize::try_from(code).ok().and_then(|i| self.labels.get(i)).map(String::as_str)
    }
}

/// Create (or reuse, when it exists with the same labels) the categories dataset
/// `CATEGORIES/<name>`: variable-length UTF-8 labels without a fill value (HEP001 §8.7
/// "any datatype suitable for labels"; categories are not columns), with the HEP001
/// boolean `ordered`. Variable-length, because netCDF-C crashes on fixed-length strings
/// longer than one byte with a fill value and, before 4.9.1, without one (local ruling
/// L17, docs/netcdf-c-bug-fixed-string-fill.md). A label holding NUL is refused. Returns
/// its absolute path.
pub fn create_categories(t: &Table, name: &str, labels: &[&str], ordered: bool) -> Result<String> {
    let rel = format!("{}/{name}", names::CATEGORIES);
    let path = t.member_path(&rel);
    if h5::link_exists(t.id(), names::CATEGORIES)? && h5::link_exists(t.id(), &rel)? {
        let existing = read_categories(t, &path)?;
        if existing.labels.iter().map(String::as_str).ne(labels.iter().copied()) || existing.ordered != ordered {
            return Err(MarquetError::InvalidArgument(format!("{path}: other categories already exist at this name")));
        }
        return Ok(path);
    }
    if !h5::link_exists(t.id(), names::CATEGORIES)? {
        h5::group_create(t.id(), names::CATEGORIES)?;
    }
    if let Some(l) = labels.iter().find(|l| l.contains('\0')) {
        return Err(MarquetError::InvalidArgument(format!("{path}: category label {l:?} holds a NUL byte")));
    }
    let dtype = Dtype::VarString { utf8: true };
    let ds = h5::dataset_create(t.id(), &rel, &DatasetSpec { dtype, len: labels.len() as u64, chunk: None, filters: vec![], fill: None })?;
    let b: Vec<&[u8]> = labels.iter().map(|l| l.as_bytes()).collect();
    h5::dataset_write_vlen_strings(ds.id(), 0, &b, true, &path)?;
    h5::attr_write(ds.id(), names::ORDERED, &Dtype::hep001_bool(), &Space::Scalar, &[ordered as u8])?;
    Ok(path)
}

/// Add a categorical column: an integer column (`spec.dtype`) whose `CATEGORIES`
/// attribute references the categories dataset at `categories_path` (from
/// [`create_categories`]). The fill must not be a valid code (HEP001 §13 req 8).
pub fn add_categorical_column(t: &Table, name: &str, spec: &ColumnSpec, categories_path: &str) -> Result<super::Column> {
    if !matches!(spec.dtype, Dtype::Int { .. }) {
        return Err(MarquetError::InvalidArgument(format!("{}: a categorical column has an integer type (HEP001 §8.7)", t.member_path(name))));
    }
    let cats = read_categories(t, categories_path)?;
    let fill = match &spec.fill {
        Some(f) => Some(f.clone()),
        None => super::recommended_fill(&spec.dtype)?,
    };
    if let Some(f) = &fill {
        let code = super::Array { dtype: spec.dtype.to_le(), bytes: f.clone() }.get_i128(0).unwrap_or(-1);
        if code >= 0 && (code as usize) < cats.labels.len() {
            return Err(MarquetError::InvalidArgument(format!(
                "{}: fill value {code} is a valid category code (HEP001 §13 req 8)",
                t.member_path(name)
            )));
        }
    }
    let col = t.add_column(name, spec)?;
    h5::attr_write_refs(col.id(), names::CATEGORIES, &[categories_path.to_string()], true)?;
    Ok(col)
}

fn read_categories(t: &Table, path: &str) -> Result<Categories> {
    let ds = h5::dataset_open(t.id(), path)?;
    let info = h5::dataset_info(ds.id(), path)?;
    if info.dims.len() != 1 {
        return Err(MarquetError::spec(path, "HEP001 §8.7", format!("categories dataset has rank {}, not 1", info.dims.len())));
    }
    let n = info.dims[0];
    let labels = match &info.dtype {
        Dtype::FixedString { .. } => {
            let mem = info.dtype.to_le();
            let a = super::Array { dtype: mem.clone(), bytes: h5::dataset_read(ds.id(), 0, n, &mem, path)? };
            a.to_string_vec().unwrap_or_default()
        }
        Dtype::VarString { utf8 } => {
            h5::dataset_read_vlen_strings(ds.id(), 0, n, *utf8, path)?.into_iter().map(|b| String::from_utf8_lossy(&b).into_owned()).collect()
        }
        // Integer or float categories: their decimal text is the label.
        Dtype::Int { .. } | Dtype::Float { .. } => {
            let mem = info.dtype.to_le();
            let a = super::Array { dtype: mem.clone(), bytes: h5::dataset_read(ds.id(), 0, n, &mem, path)? };
            (0..a.len()).map(|i| a.display(i)).collect()
        }
        other => return Err(MarquetError::Unsupported(format!("{path}: categories of datatype {other:?}"))),
    };
    let ordered = super::search_index::read_bool_attr(ds.id(), names::ORDERED)? == Some(true);
    Ok(Categories { path: path.to_string(), labels, ordered })
}

/// The categories of column `column`, or `None` when it is not categorical (no
/// `CATEGORIES` attribute). A reference that does not resolve to a dataset in the
/// table's `CATEGORIES` group is a [`MarquetError::SpecViolation`] (HEP001 §13 req 5).
pub fn categories_of(t: &Table, column: &str) -> Result<Option<Categories>> {
    if t.kind_of(column)? != Some(ColumnKind::Dataset) {
        return Ok(None);
    }
    let col = h5::object_open(t.id(), column)?;
    let Some((refs, _, space)) = h5::attr_read_refs(col.id(), names::CATEGORIES)? else { return Ok(None) };
    let colpath = t.member_path(column);
    if space != Space::Scalar {
        return Err(MarquetError::spec(colpath, "HEP001 §8.7", "CATEGORIES is not a scalar reference"));
    }
    let target = refs.into_iter().flatten().next().unwrap_or_default();
    let prefix = format!("{}/", t.member_path(names::CATEGORIES));
    if !target.starts_with(&prefix) || target[prefix.len()..].contains('/') {
        return Err(MarquetError::spec(
            colpath,
            "HEP001 §13 req 5",
            format!("CATEGORIES references {target:?}, not a dataset directly in {}", t.member_path(names::CATEGORIES)),
        ));
    }
    Ok(Some(read_categories(t, &target)?))
}

/// The label of every row in `[start, start + count)` of a categorical column; `None`
/// for missing rows (the fill) and codes outside the categories.
pub fn read_labels(t: &Table, column: &str, start: u64, count: u64) -> Result<Vec<Option<String>>> {
    let cats = categories_of(t, column)?
        .ok_or_else(|| MarquetError::InvalidArgument(format!("{} is not a categorical column", t.member_path(column))))?;
    let col = t.column(column)?;
    let end = start.checked_add(count).filter(|&e| e <= t.nrows().unwrap_or(0));
    let Some(end) = end else { return Err(MarquetError::InvalidArgument(format!("rows {start}+{count} past NROWS"))) };
    let a = col.read(start, end - start)?;
    let miss = a.missing(col.fill());
    Ok((0..a.len()).map(|i| if miss[i] { None } else { a.get_i128(i).and_then(|c| cats.label_of(c)).map(str::to_string) }).collect())
}
