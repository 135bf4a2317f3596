//! Nested Arrow values that HEP001 cannot hold — lists of structs, maps, nested lists
//! (Overture's `sources`, `names.common`, …) — as JSON text (issue #22).
//!
//! Each row becomes one JSON document: structs are objects, lists arrays, maps objects
//! when every key of the row is a distinct string (otherwise arrays of `[key, value]`
//! pairs), numbers numbers (a non-finite float is `null`, as JSON has no such number),
//! strings strings, and everything else the text Arrow's display kernel gives it
//! (timestamps in ISO 8601, binary in hex). A null row stays null.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef, StringArray};
use arrow_schema::DataType;
use serde_json::{Map, Number, Value};

use crate::error::{MarquetError, Result};

/// What an import does with a nested Arrow column HEP001 cannot hold (a list of structs,
/// a map, a nested list).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NestedPolicy {
    /// Keep it as a JSON text column, with a warning, recording its Arrow type in the
    /// column's `arrow_field` attribute (the default: nothing is dropped).
    #[default]
    Json,
    /// Refuse the import with an error naming the column.
    Refuse,
}

/// The Arrow canonical extension type of JSON text (`Utf8` storage).
pub const ARROW_JSON: &str = "arrow.json";

/// The type as users know it from pyarrow and DuckDB: `list<struct<a: string>>`,
/// `map<string, int64>`, `dictionary<int32, string>`.
pub fn type_name(dt: &DataType) -> String {
    match dt {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => "string".into(),
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView => "binary".into(),
        DataType::Boolean => "bool".into(),
        DataType::Float16 => "float16".into(),
        DataType::Float32 => "float32".into(),
        DataType::Float64 => "float64".into(),
        DataType::List(f) | DataType::LargeList(f) | DataType::ListView(f) | DataType::LargeListView(f) => format!("list<{}>", type_name(f.data_type())),
        DataType::FixedSizeList(f, n) => format!("list<{}, {n}>", type_name(f.data_type())),
        DataType::Struct(fs) => format!("struct<{}>", fs.iter().map(|f| format!("{}: {}", f.name(), type_name(f.data_type()))).collect::<Vec<_>>().join(", ")),
        DataType::Map(f, _) => match f.data_type() {
            DataType::Struct(kv) if kv.len() == 2 => format!("map<{}, {}>", type_name(kv[0].data_type()), type_name(kv[1].data_type())),
            other => format!("map<{}>", type_name(other)),
        },
        DataType::Dictionary(k, v) => format!("dictionary<{}, {}>", type_name(k), type_name(v)),
        other => other.to_string().to_lowercase(),
    }
}

/// Does `dt` need JSON text to be kept (a value HEP001 has no column for)?
pub fn needs_json(dt: &DataType) -> bool {
    match dt {
        DataType::Map(_, _) | DataType::Union(_, _) | DataType::FixedSizeList(_, _) | DataType::ListView(_) | DataType::LargeListView(_) => true,
        DataType::List(f) | DataType::LargeList(f) => {
            !(f.data_type().is_primitive() || matches!(f.data_type(), DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View | DataType::Dictionary(_, _)))
        }
        _ => false,
    }
}

/// The rows of `a` as JSON text (a `Utf8` array; null rows null).
pub fn json_text(a: &ArrayRef, column: &str) -> Result<ArrayRef> {
    let mut out: Vec<Option<String>> = Vec::with_capacity(a.len());
    for i in 0..a.len() {
        out.push(if a.is_null(i) { None } else { Some(value(a.as_ref(), i, column)?.to_string()) });
    }
    Ok(Arc::new(StringArray::from(out)))
}

fn number(v: f64) -> Value {
    Number::from_f64(v).map(Value::Number).unwrap_or(Value::Null)
}

/// Row `i` of `a` as a JSON value.
fn value(a: &dyn Array, i: usize, column: &str) -> Result<Value> {
    if a.is_null(i) {
        return Ok(Value::Null);
    }
    Ok(match a.data_type() {
        DataType::Boolean => Value::Bool(a.as_boolean().value(i)),
        DataType::Int8 => Value::from(a.as_primitive::<Int8Type>().value(i)),
        DataType::Int16 => Value::from(a.as_primitive::<Int16Type>().value(i)),
        DataType::Int32 => Value::from(a.as_primitive::<Int32Type>().value(i)),
        DataType::Int64 => Value::from(a.as_primitive::<Int64Type>().value(i)),
        DataType::UInt8 => Value::from(a.as_primitive::<UInt8Type>().value(i)),
        DataType::UInt16 => Value::from(a.as_primitive::<UInt16Type>().value(i)),
        DataType::UInt32 => Value::from(a.as_primitive::<UInt32Type>().value(i)),
        DataType::UInt64 => Value::from(a.as_primitive::<UInt64Type>().value(i)),
        DataType::Float16 => number(a.as_primitive::<Float16Type>().value(i).to_f64()),
        DataType::Float32 => number(a.as_primitive::<Float32Type>().value(i) as f64),
        DataType::Float64 => number(a.as_primitive::<Float64Type>().value(i)),
        DataType::Utf8 => Value::String(a.as_string::<i32>().value(i).to_string()),
        DataType::LargeUtf8 => Value::String(a.as_string::<i64>().value(i).to_string()),
        DataType::Utf8View => Value::String(a.as_string_view().value(i).to_string()),
        DataType::Struct(fields) => {
            let s = a.as_struct();
            let mut m = Map::new();
            for (k, f) in fields.iter().enumerate() {
                m.insert(f.name().clone(), value(s.column(k).as_ref(), i, column)?);
            }
            Value::Object(m)
        }
        DataType::List(_) => seq(a.as_list::<i32>().value(i).as_ref(), column)?,
        DataType::LargeList(_) => seq(a.as_list::<i64>().value(i).as_ref(), column)?,
        DataType::FixedSizeList(_, _) => seq(a.as_fixed_size_list().value(i).as_ref(), column)?,
        DataType::Map(_, _) => {
            let m = a.as_map();
            let entries = m.value(i);
            let (keys, vals) = (entries.column(0), entries.column(1));
            let ks: Vec<Value> = (0..keys.len()).map(|k| value(keys.as_ref(), k, column)).collect::<Result<_>>()?;
            let mut distinct = std::collections::BTreeSet::new();
            let all_strings = ks.iter().all(|k| k.as_str().is_some_and(|s| distinct.insert(s.to_string())));
            if all_strings {
                let mut o = Map::new();
                for (k, key) in ks.into_iter().enumerate() {
                    if let Value::String(key) = key {
                        o.insert(key, value(vals.as_ref(), k, column)?);
                    }
                }
                Value::Object(o)
            } else {
                let mut pairs = Vec::with_capacity(ks.len());
                for (k, key) in ks.into_iter().enumerate() {
                    pairs.push(Value::Array(vec![key, value(vals.as_ref(), k, column)?]));
                }
                Value::Array(pairs)
            }
        }
        DataType::Dictionary(_, _) => {
            let d = a.as_any_dictionary();
            let k = d.normalized_keys().get(i).copied().unwrap_or(0);
            value(d.values().as_ref(), k, column)?
        }
        _ => {
            let f = arrow_cast::display::ArrayFormatter::try_new(a, &Default::default())
                .map_err(|e| MarquetError::Unsupported(format!("column {column:?}: {} values as JSON: {e}", a.data_type())))?;
            Value::String(f.value(i).to_string())
        }
    })
}

fn seq(a: &dyn Array, column: &str) -> Result<Value> {
    Ok(Value::Array((0..a.len()).map(|k| value(a, k, column)).collect::<Result<_>>()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::builder::{Int32Builder, ListBuilder, MapBuilder, StringBuilder};
    use arrow_array::{Float64Array, StructArray};
    use arrow_schema::Field;

    #[test]
    fn lists_of_structs_and_maps_as_json() {
        let s = StructArray::from(vec![
            (Arc::new(Field::new("d", DataType::Utf8, true)), Arc::new(StringArray::from(vec![Some("osm"), None])) as ArrayRef),
            (Arc::new(Field::new("c", DataType::Float64, true)), Arc::new(Float64Array::from(vec![0.5, f64::NAN])) as ArrayRef),
        ]);
        let l = arrow_array::ListArray::try_new(
            Arc::new(Field::new("item", s.data_type().clone(), true)),
            arrow_buffer::OffsetBuffer::new(vec![0, 2, 2].into()),
            Arc::new(s),
            Some(vec![true, false].into()),
        )
        .unwrap();
        let j = json_text(&(Arc::new(l) as ArrayRef), "x").unwrap();
        let j = j.as_string::<i32>();
        assert_eq!(j.value(0), r#"[{"c":0.5,"d":"osm"},{"c":null,"d":null}]"#);
        assert!(j.is_null(1));

        let mut m = MapBuilder::new(None, StringBuilder::new(), Int32Builder::new());
        m.keys().append_value("en");
        m.values().append_value(1);
        m.keys().append_value("de");
        m.values().append_null();
        m.append(true).unwrap();
        m.append(false).unwrap();
        let j = json_text(&(Arc::new(m.finish()) as ArrayRef), "x").unwrap();
        let j = j.as_string::<i32>();
        assert_eq!(j.value(0), r#"{"de":null,"en":1}"#);
        assert!(j.is_null(1));

        let mut ll = ListBuilder::new(ListBuilder::new(Int32Builder::new()));
        ll.values().values().append_value(7);
        ll.values().append(true);
        ll.append(true);
        let a: ArrayRef = Arc::new(ll.finish());
        assert!(needs_json(a.data_type()));
        assert!(!needs_json(&DataType::List(Arc::new(Field::new("item", DataType::Int32, true)))));
        assert_eq!(json_text(&a, "x").unwrap().as_string::<i32>().value(0), "[[7]]");
    }
}
