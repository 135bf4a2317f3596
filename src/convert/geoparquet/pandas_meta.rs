//! The `pandas` schema metadata key of an exported GeoParquet file (issue #22), as
//! pyarrow's `Table.from_pandas` writes it, so that `geopandas.read_parquet` /
//! `pyarrow.Table.to_pandas` give the columns their pandas dtypes back: a nullable integer
//! column `Int32` (not float64), a nullable boolean `boolean` (not object), a dictionary
//! `category`, timestamps `datetime64[unit]` (with their timezone).
//!
//! pandas reads the pandas extension dtype from each column's `numpy_type`
//! (`pyarrow/pandas_compat.py`, `_get_extension_dtypes`): a column that holds a missing
//! value gets the nullable dtype (`Int32`, `UInt8`, `boolean`), one without the numpy
//! dtype (`int32`, `bool`), as pandas itself would have written the frame. No index is
//! stored (`index_columns` is empty: a default `RangeIndex`).

use arrow_array::cast::AsArray;
use arrow_schema::{DataType, Schema, TimeUnit};
use serde_json::{json, Value};

/// Schema metadata key pandas reads.
pub const PANDAS_KEY: &str = "pandas";

/// The pandas version we claim the metadata follows (the layout of pandas ≥ 1.0, which
/// pyarrow reads for every pandas since).
const PANDAS_VERSION: &str = "2.2.0";

/// What the written rows showed of each column: whether it held a missing value, the
/// number of categories of a dictionary column, and whether each batch (one row group)
/// meets its dictionary's entries in their order; gathered batch by batch.
///
/// The last matters because the Parquet writer builds each row group's dictionary page in
/// the order it meets the values, and readers take the categories from that page: an
/// ordered categorical keeps its order through Parquet only when every row group meets its
/// labels in order.
#[derive(Debug, Clone)]
pub struct Seen {
    nulls: Vec<bool>,
    categories: Vec<Option<usize>>,
    in_order: Vec<bool>,
}

impl Seen {
    /// Nothing seen yet, for a schema of `n` fields.
    pub fn new(n: usize) -> Seen {
        Seen { nulls: vec![false; n], categories: vec![None; n], in_order: vec![true; n] }
    }

    /// Note one record batch of the schema.
    pub fn add(&mut self, batch: &arrow_array::RecordBatch) {
        for (i, c) in batch.columns().iter().enumerate() {
            if let Some(n) = self.nulls.get_mut(i) {
                *n |= c.null_count() > 0;
            }
            if let (Some(d), Some(k)) = (c.as_any_dictionary_opt(), self.categories.get_mut(i)) {
                *k = Some(k.unwrap_or(0).max(d.values().len()));
                // Entries first met in increasing order?
                let mut met = vec![false; d.values().len()];
                let mut last: Option<usize> = None;
                for (r, key) in d.normalized_keys().into_iter().enumerate() {
                    if c.is_null(r) || met.get(key).copied().unwrap_or(true) {
                        continue;
                    }
                    met[key] = true;
                    if last.is_some_and(|l| key < l) {
                        self.in_order[i] = false;
                    }
                    last = Some(key);
                }
            }
        }
    }
}

fn unit(u: &TimeUnit) -> &'static str {
    match u {
        TimeUnit::Second => "s",
        TimeUnit::Millisecond => "ms",
        TimeUnit::Microsecond => "us",
        TimeUnit::Nanosecond => "ns",
    }
}

/// pyarrow's `pandas_type` of an Arrow type (`get_logical_type` in `pandas_compat.py`).
fn pandas_type(dt: &DataType) -> String {
    match dt {
        DataType::Boolean => "bool".into(),
        DataType::Int8 => "int8".into(),
        DataType::Int16 => "int16".into(),
        DataType::Int32 => "int32".into(),
        DataType::Int64 => "int64".into(),
        DataType::UInt8 => "uint8".into(),
        DataType::UInt16 => "uint16".into(),
        DataType::UInt32 => "uint32".into(),
        DataType::UInt64 => "uint64".into(),
        DataType::Float16 => "float16".into(),
        DataType::Float32 => "float32".into(),
        DataType::Float64 => "float64".into(),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => "unicode".into(),
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView | DataType::FixedSizeBinary(_) => "bytes".into(),
        DataType::Date32 | DataType::Date64 => "date".into(),
        DataType::Timestamp(_, Some(_)) => "datetimetz".into(),
        DataType::Timestamp(_, None) => "datetime".into(),
        DataType::Dictionary(_, _) => "categorical".into(),
        DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) => format!("list[{}]", pandas_type(f.data_type())),
        _ => "object".into(),
    }
}

/// The `numpy_type` pandas turns into the column's dtype; `nulls`: the column holds a
/// missing value (integers and booleans then use pandas' nullable dtypes).
fn numpy_type(dt: &DataType, nulls: bool) -> String {
    let nullable = |numpy: &str, pandas: &str| if nulls { pandas.to_string() } else { numpy.to_string() };
    match dt {
        DataType::Boolean => nullable("bool", "boolean"),
        DataType::Int8 => nullable("int8", "Int8"),
        DataType::Int16 => nullable("int16", "Int16"),
        DataType::Int32 => nullable("int32", "Int32"),
        DataType::Int64 => nullable("int64", "Int64"),
        DataType::UInt8 => nullable("uint8", "UInt8"),
        DataType::UInt16 => nullable("uint16", "UInt16"),
        DataType::UInt32 => nullable("uint32", "UInt32"),
        DataType::UInt64 => nullable("uint64", "UInt64"),
        DataType::Float16 => "float16".into(),
        DataType::Float32 => "float32".into(),
        DataType::Float64 => "float64".into(),
        DataType::Timestamp(u, _) => format!("datetime64[{}]", unit(u)),
        // A categorical's numpy_type is its codes' type.
        DataType::Dictionary(k, _) => numpy_type(k, false),
        _ => "object".into(),
    }
}

impl Seen {
    /// Did every batch meet column `i`'s dictionary entries in their order (see [`Seen`])?
    pub fn in_order(&self, i: usize) -> bool {
        self.in_order.get(i).copied().unwrap_or(true)
    }
}

/// The `pandas` metadata JSON of `schema`; `seen` over every written batch.
pub fn pandas_metadata(schema: &Schema, seen: &Seen) -> String {
    let columns: Vec<Value> = schema
        .fields()
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let dt = f.data_type();
            let metadata = match dt {
                DataType::Timestamp(_, Some(tz)) => json!({"timezone": tz.as_ref()}),
                DataType::Dictionary(_, _) => json!({"num_categories": seen.categories.get(i).copied().flatten().unwrap_or(0), "ordered": f.dict_is_ordered().unwrap_or(false)}),
                _ => Value::Null,
            };
            json!({
                "name": f.name(),
                "field_name": f.name(),
                "pandas_type": pandas_type(dt),
                "numpy_type": numpy_type(dt, seen.nulls.get(i).copied().unwrap_or(true)),
                "metadata": metadata,
            })
        })
        .collect();
    json!({
        "index_columns": [],
        "column_indexes": [{
            "name": null,
            "field_name": null,
            "pandas_type": "unicode",
            "numpy_type": "object",
            "metadata": {"encoding": "UTF-8"},
        }],
        "columns": columns,
        "creator": {"library": "marquet", "version": env!("CARGO_PKG_VERSION")},
        "pandas_version": PANDAS_VERSION,
    })
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_schema::Field;
    use std::sync::Arc;

    #[test]
    fn dtypes_as_pyarrow_writes_them() {
        let s = Schema::new(vec![
            Field::new("i", DataType::Int32, true),
            Field::new("j", DataType::Int32, true),
            Field::new("b", DataType::Boolean, true),
            Field::new("t", DataType::Timestamp(TimeUnit::Microsecond, Some(Arc::from("UTC"))), true),
            Field::new("c", DataType::Dictionary(Box::new(DataType::Int8), Box::new(DataType::Utf8)), true).with_dict_is_ordered(true),
            Field::new("l", DataType::List(Arc::new(Field::new("element", DataType::Utf8, true))), true),
        ]);
        let seen = Seen {
            nulls: vec![true, false, true, false, false, false],
            categories: vec![None, None, None, None, Some(3), None],
            in_order: vec![true; 6],
        };
        let v: Value = serde_json::from_str(&pandas_metadata(&s, &seen)).unwrap();
        let col = |k: usize, key: &str| v["columns"][k][key].clone();
        assert_eq!((col(0, "pandas_type"), col(0, "numpy_type")), (json!("int32"), json!("Int32")));
        assert_eq!(col(1, "numpy_type"), json!("int32"));
        assert_eq!((col(2, "pandas_type"), col(2, "numpy_type")), (json!("bool"), json!("boolean")));
        assert_eq!((col(3, "pandas_type"), col(3, "numpy_type")), (json!("datetimetz"), json!("datetime64[us]")));
        assert_eq!(col(3, "metadata"), json!({"timezone": "UTC"}));
        assert_eq!((col(4, "pandas_type"), col(4, "numpy_type")), (json!("categorical"), json!("int8")));
        assert_eq!(col(4, "metadata"), json!({"num_categories": 3, "ordered": true}));
        assert_eq!(col(5, "pandas_type"), json!("list[unicode]"));
        assert_eq!(v["index_columns"], json!([]));
    }
}
