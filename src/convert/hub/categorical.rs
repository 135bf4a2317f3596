//! Dictionary-encoded string columns (pandas `category`, pyarrow `dictionary`, DuckDB
//! `ENUM` handed over as Arrow) as HEP001 categorical columns (§8.7), and back to Arrow
//! `Dictionary<int, utf8>` on export (issue #22).
//!
//! Import gathers the labels of every batch's dictionary in the pre-scan (first-seen
//! order, so a file whose row groups share one dictionary keeps its order, which an
//! ordered categorical needs), writes them once as the categories dataset, and stores each
//! row's code into it. A dictionary of more than [`DEFAULT_MAX_CATEGORIES`] labels, or
//! with labels longer than the fixed-string limit, stays an ordinary string column.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int16Type, Int32Type, Int64Type, Int8Type};
use arrow_array::{Array, ArrayRef, DictionaryArray, PrimitiveArray, StringArray};
use arrow_schema::DataType;

use crate::error::{MarquetError, Result};
use crate::h5col::{Array as H5Array, ColumnValues, Dtype};

/// Most labels a dictionary column keeps as an HEP001 categorical column; a dictionary
/// with more is stored as plain strings (a categories dataset is written in one piece).
pub const DEFAULT_MAX_CATEGORIES: usize = 1 << 16;

/// The labels of a dictionary column seen in the pre-scan, in first-seen order.
#[derive(Debug, Clone, Default)]
pub struct CategoryStats {
    labels: Vec<String>,
    index: HashMap<String, usize>,
    max_len: usize,
    too_many: bool,
}

impl CategoryStats {
    /// Add the dictionary values of `a` (a dictionary array of strings; any other array
    /// adds nothing). Null dictionary entries are not labels.
    pub fn add(&mut self, a: &ArrayRef) -> Result<()> {
        if self.too_many || !matches!(a.data_type(), DataType::Dictionary(_, _)) {
            return Ok(());
        }
        let d = a.as_any_dictionary();
        for s in super::cells::strings(d.values())?.into_iter().flatten() {
            if self.index.contains_key(s) {
                continue;
            }
            if self.labels.len() >= DEFAULT_MAX_CATEGORIES {
                self.too_many = true;
                self.labels.clear();
                self.index.clear();
                return Ok(());
            }
            self.max_len = self.max_len.max(s.len());
            self.index.insert(s.to_string(), self.labels.len());
            self.labels.push(s.to_string());
        }
        Ok(())
    }

    /// The categorical plan, or `None` when the column stays a string column (too many
    /// labels, a label longer than `max_fixed` bytes, or a label holding NUL, which the
    /// variable-length labels cannot hold, local ruling L17).
    pub fn finish(self, ordered: bool, max_fixed: usize) -> Option<CatPlan> {
        if self.too_many || self.max_len > max_fixed || self.labels.iter().any(|l| l.contains('\0')) {
            return None;
        }
        // The recommended fill of a signed code type (its minimum + 1, HEP001 §8.5) is
        // negative, so it never collides with a code (HEP001 §13 req 8).
        let n = self.labels.len();
        let dtype = if n <= i8::MAX as usize {
            Dtype::I8
        } else if n <= i16::MAX as usize {
            Dtype::Int { size: 2, signed: true, big_endian: false }
        } else {
            Dtype::Int { size: 4, signed: true, big_endian: false }
        };
        let codes = self.index.into_iter().map(|(k, v)| (k, v as i64)).collect();
        Some(CatPlan { labels: self.labels, ordered, dtype, codes })
    }
}

/// How a dictionary column is stored as an HEP001 categorical column.
#[derive(Debug, Clone)]
pub struct CatPlan {
    /// The labels, code `i` = `labels[i]`.
    pub labels: Vec<String>,
    /// The dictionary was ordered (the categories dataset's `ordered`).
    pub ordered: bool,
    /// The code datatype (signed, sized to the number of labels).
    pub dtype: Dtype,
    codes: HashMap<String, i64>,
}

impl CatPlan {
    /// The codes of one batch's array (a dictionary of strings, or plain strings): missing
    /// rows are nulls; a label the pre-scan did not see is an error naming `column`.
    pub fn values(&self, a: &ArrayRef, column: &str) -> Result<ColumnValues> {
        let code_of = |s: &str| {
            self.codes.get(s).copied().ok_or_else(|| {
                MarquetError::InvalidArgument(format!("column {column:?}: label {s:?} is not among the categories of the pre-scan"))
            })
        };
        let n = a.len();
        let mut missing = vec![false; n];
        let mut codes = vec![0i64; n];
        if let DataType::Dictionary(_, _) = a.data_type() {
            let d = a.as_any_dictionary();
            let dict: Vec<Option<i64>> =
                super::cells::strings(d.values())?.into_iter().map(|s| s.map(code_of).transpose()).collect::<Result<_>>()?;
            let keys = d.normalized_keys();
            for i in 0..n {
                match (a.is_null(i), keys.get(i).and_then(|&k| dict.get(k)).copied().flatten()) {
                    (false, Some(c)) => codes[i] = c,
                    _ => missing[i] = true,
                }
            }
        } else {
            for (i, s) in super::cells::strings(a)?.into_iter().enumerate() {
                match s {
                    Some(s) => codes[i] = code_of(s)?,
                    None => missing[i] = true,
                }
            }
        }
        let values = match self.dtype.size() {
            1 => H5Array::from_i8(&codes.iter().map(|&c| c as i8).collect::<Vec<_>>()),
            2 => H5Array::from_i16(&codes.iter().map(|&c| c as i16).collect::<Vec<_>>()),
            _ => H5Array::from_i32(&codes.iter().map(|&c| c as i32).collect::<Vec<_>>()),
        };
        Ok(ColumnValues::Array { values, missing: Some(missing) })
    }
}

/// The Arrow dictionary key type of a categorical column of code type `codes`: the signed
/// type of the same width (unsigned codes: the next wider signed type), as pandas reads
/// signed codes only.
pub fn key_type(codes: &Dtype) -> DataType {
    match codes {
        Dtype::Int { size: 1, signed: true, .. } => DataType::Int8,
        Dtype::Int { size: 1, signed: false, .. } | Dtype::Int { size: 2, signed: true, .. } => DataType::Int16,
        Dtype::Int { size: 2, signed: false, .. } | Dtype::Int { size: 4, signed: true, .. } => DataType::Int32,
        _ => DataType::Int64,
    }
}

/// The Arrow dictionary array of a categorical column's rows: codes `a` (missing rows and
/// codes outside the labels are nulls) into `labels`, keys of type `key`.
pub fn dictionary_array(key: &DataType, labels: &Arc<StringArray>, a: &H5Array, missing: &[bool]) -> Result<ArrayRef> {
    let n = labels.len() as i128;
    let codes: Vec<Option<i64>> = (0..a.len())
        .map(|i| if missing.get(i).copied().unwrap_or(true) { None } else { a.get_i128(i).filter(|c| (0..n).contains(c)).map(|c| c as i64) })
        .collect();
    let values: ArrayRef = labels.clone();
    let err = |e: arrow_schema::ArrowError| MarquetError::Unsupported(format!("categorical column: {e}"));
    Ok(match key {
        DataType::Int8 => {
            let k: PrimitiveArray<Int8Type> = codes.iter().map(|c| c.map(|c| c as i8)).collect();
            Arc::new(DictionaryArray::try_new(k, values).map_err(err)?)
        }
        DataType::Int16 => {
            let k: PrimitiveArray<Int16Type> = codes.iter().map(|c| c.map(|c| c as i16)).collect();
            Arc::new(DictionaryArray::try_new(k, values).map_err(err)?)
        }
        DataType::Int32 => {
            let k: PrimitiveArray<Int32Type> = codes.iter().map(|c| c.map(|c| c as i32)).collect();
            Arc::new(DictionaryArray::try_new(k, values).map_err(err)?)
        }
        _ => {
            let k: PrimitiveArray<Int64Type> = codes.into_iter().collect();
            Arc::new(DictionaryArray::try_new(k, values).map_err(err)?)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_in_first_seen_order_and_codes_remapped() {
        let mut st = CategoryStats::default();
        let d1: ArrayRef = Arc::new(DictionaryArray::<Int8Type>::from_iter(["b", "a", "b"]));
        let d2: ArrayRef = Arc::new(DictionaryArray::<Int32Type>::from_iter([Some("c"), None, Some("a")]));
        st.add(&d1).unwrap();
        st.add(&d2).unwrap();
        let p = st.finish(false, 10).unwrap();
        assert_eq!(p.labels, ["b", "a", "c"]);
        assert_eq!(p.dtype, Dtype::I8);
        let ColumnValues::Array { values, missing } = p.values(&d2, "x").unwrap() else { panic!() };
        assert_eq!(missing.unwrap(), [false, true, false]);
        assert_eq!((values.get_i128(0), values.get_i128(2)), (Some(2), Some(1)));
        let plain: ArrayRef = Arc::new(StringArray::from(vec![Some("z")]));
        assert!(p.values(&plain, "x").unwrap_err().to_string().contains("label \"z\""));
        // Back to Arrow.
        let labels = Arc::new(StringArray::from(p.labels.clone()));
        let out = dictionary_array(&DataType::Int8, &labels, &values, &[false, true, false]).unwrap();
        let s = arrow_cast::cast(&out, &DataType::Utf8).unwrap();
        let s = s.as_string::<i32>();
        assert_eq!((s.value(0), s.is_null(1), s.value(2)), ("c", true, "a"));
    }

    #[test]
    fn too_many_or_too_long_labels_stay_strings() {
        let mut st = CategoryStats::default();
        let d: ArrayRef = Arc::new(DictionaryArray::<Int8Type>::from_iter(["long label"]));
        st.add(&d).unwrap();
        assert!(st.clone().finish(false, 4).is_none());
        assert!(st.finish(false, 10).is_some());
        let many: Vec<String> = (0..=DEFAULT_MAX_CATEGORIES).map(|i| i.to_string()).collect();
        let d: ArrayRef = Arc::new(DictionaryArray::<Int32Type>::from_iter(many.iter().map(String::as_str)));
        let mut st = CategoryStats::default();
        st.add(&d).unwrap();
        assert!(st.finish(false, 10).is_none());
    }
}
