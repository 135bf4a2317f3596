//! Values of Arrow arrays as the hub reads them: strings and byte strings of any string or
//! binary layout, and a struct field's array with its parents' nulls.

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef};
use arrow_buffer::NullBuffer;
use arrow_schema::DataType;

use crate::error::{MarquetError, Result};

/// The strings of a Utf8 / LargeUtf8 / Utf8View / dictionary-of-strings array.
pub fn strings(a: &ArrayRef) -> Result<Vec<Option<&str>>> {
    let n = a.len();
    match a.data_type() {
        DataType::Null => Ok(vec![None; a.len()]),
        DataType::Utf8 => Ok(a.as_string::<i32>().iter().collect()),
        DataType::LargeUtf8 => Ok(a.as_string::<i64>().iter().collect()),
        DataType::Utf8View => Ok(a.as_string_view().iter().collect()),
        DataType::Dictionary(_, _) => {
            let d = a.as_any_dictionary();
            let vals = strings(d.values())?;
            if vals.is_empty() {
                return Ok(vec![None; n]);
            }
            let keys = d.normalized_keys();
            Ok((0..n).map(|i| if a.is_null(i) { None } else { vals[keys[i]] }).collect())
        }
        other => Err(MarquetError::Unsupported(format!("string values of type {other}"))),
    }
}

/// The byte strings of a Binary / LargeBinary / BinaryView array.
/// Copied on every core: a batch of polygons is tens of MB, copied value by value.
pub fn binaries(a: &ArrayRef) -> Result<Vec<Option<Vec<u8>>>> {
    use rayon::prelude::*;
    fn copy<'a>(n: usize, get: impl Fn(usize) -> Option<&'a [u8]> + Sync) -> Vec<Option<Vec<u8>>> {
        (0..n).into_par_iter().with_min_len(1024).map(|i| get(i).map(|b| b.to_vec())).collect()
    }
    let n = a.len();
    Ok(match a.data_type() {
        DataType::Binary => {
            let b = a.as_binary::<i32>();
            copy(n, |i| (!b.is_null(i)).then(|| b.value(i)))
        }
        DataType::LargeBinary => {
            let b = a.as_binary::<i64>();
            copy(n, |i| (!b.is_null(i)).then(|| b.value(i)))
        }
        DataType::BinaryView => {
            let b = a.as_binary_view();
            copy(n, |i| (!b.is_null(i)).then(|| b.value(i)))
        }
        other => return Err(MarquetError::Unsupported(format!("binary values of type {other}"))),
    })
}

/// The values of a binary array, borrowed (for passes that only look at them: the
/// survey's WKB scan and Hilbert keys, which copied every value before, issue #31).
pub fn binary_slices(a: &ArrayRef) -> Result<Box<dyn Iterator<Item = Option<&[u8]>> + '_>> {
    Ok(match a.data_type() {
        DataType::Binary => Box::new(a.as_binary::<i32>().iter()),
        DataType::LargeBinary => Box::new(a.as_binary::<i64>().iter()),
        DataType::BinaryView => Box::new(a.as_binary_view().iter()),
        other => return Err(MarquetError::Unsupported(format!("binary values of type {other}"))),
    })
}

/// The array at a field index path, with parent struct nulls propagated.
pub fn array_at(batch: &arrow_array::RecordBatch, path: &[usize]) -> ArrayRef {
    let mut a = batch.column(path[0]).clone();
    for &i in &path[1..] {
        let s = a.as_struct();
        let child = s.column(i).clone();
        let nulls = NullBuffer::union(s.nulls(), child.nulls());
        a = match nulls {
            Some(nb) if child.nulls() != Some(&nb) => {
                let data = child.to_data().into_builder().nulls(Some(nb)).build();
                match data {
                    Ok(d) => arrow_array::make_array(d),
                    Err(_) => child,
                }
            }
            _ => child,
        };
    }
    a
}

