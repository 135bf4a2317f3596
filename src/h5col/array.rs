//! Column values in memory: little-endian bytes described by a [`Dtype`], plus the
//! fill-value rules of HEP001 §8.5.

use crate::error::{MarquetError, Result};
use crate::h5::{fixed_str, int_from_bytes, Dtype};
use crate::spec::names;

/// A run of column elements: `bytes` holds `len()` elements laid out as `dtype.to_le()`.
#[derive(Debug, Clone, PartialEq)]
pub struct Array {
    /// The element datatype (in memory always little-endian).
    pub dtype: Dtype,
    /// `len() * dtype.size()` bytes, elements back to back; missing rows hold the column's fill
    /// value (HEP001 §8.5).
    pub bytes: Vec<u8>,
}

macro_rules! typed_ctor {
    ($name:ident, $t:ty, $dt:expr) => {
        #[doc = concat!("An array of `", stringify!($t), "`.")]
        pub fn $name(v: &[$t]) -> Array {
            let mut bytes = Vec::with_capacity(v.len() * std::mem::size_of::<$t>());
            for x in v {
                bytes.extend_from_slice(&x.to_le_bytes());
            }
            Array { dtype: $dt, bytes }
        }
    };
}

impl Array {
    typed_ctor!(from_i8, i8, Dtype::Int { size: 1, signed: true, big_endian: false });
    typed_ctor!(from_i16, i16, Dtype::Int { size: 2, signed: true, big_endian: false });
    typed_ctor!(from_i32, i32, Dtype::Int { size: 4, signed: true, big_endian: false });
    typed_ctor!(from_i64, i64, Dtype::I64);
    typed_ctor!(from_u8, u8, Dtype::U8);
    typed_ctor!(from_u16, u16, Dtype::U16);
    typed_ctor!(from_u32, u32, Dtype::Int { size: 4, signed: false, big_endian: false });
    typed_ctor!(from_u64, u64, Dtype::U64);
    typed_ctor!(from_f32, f32, Dtype::F32);
    typed_ctor!(from_f64, f64, Dtype::F64);

    /// An empty array of `dtype`.
    pub fn empty(dtype: Dtype) -> Array {
        Array { dtype, bytes: Vec::new() }
    }

    /// Booleans as the HEP001 boolean enum (§6).
    pub fn from_bools(v: &[bool]) -> Array {
        Array { dtype: Dtype::hep001_bool(), bytes: v.iter().map(|&b| b as u8).collect() }
    }

    /// Fixed-length null-terminated strings, sized to the longest value + 1 (at least 2,
    /// so that the empty string, the recommended fill, stays distinct in size terms).
    pub fn from_strings(v: &[&str], utf8: bool) -> Array {
        let size = v.iter().map(|s| s.len()).max().unwrap_or(0) + 1;
        Array::from_strings_sized(v, utf8, size).expect("size fits by construction")
    }

    /// Fixed-length strings of an explicit byte size (values longer than `size - 1` are refused).
    /// A value holding NUL is refused naming its position: a null-terminated string ends
    /// at its first NUL, so it would be stored cut (issue #38).
    pub fn from_strings_sized(v: &[&str], utf8: bool, size: usize) -> Result<Array> {
        let b: Vec<&[u8]> = v.iter().map(|s| s.as_bytes()).collect();
        Array::from_byte_strings_sized(&b, utf8, size)
    }

    /// [`Array::from_strings_sized`] of byte strings.
    pub fn from_byte_strings_sized(v: &[&[u8]], utf8: bool, size: usize) -> Result<Array> {
        let mut bytes = vec![0u8; v.len() * size];
        for (i, s) in v.iter().enumerate() {
            if s.len() >= size {
                return Err(MarquetError::InvalidArgument(format!(
                    "string {:?} (element {i}) needs {} bytes, column holds {}",
                    String::from_utf8_lossy(s),
                    s.len() + 1,
                    size
                )));
            }
            if s.contains(&0) {
                return Err(MarquetError::InvalidArgument(format!(
                    "string {:?} (element {i}) holds a NUL byte, which a null-terminated HDF5 string cannot hold",
                    String::from_utf8_lossy(s)
                )));
            }
            bytes[i * size..i * size + s.len()].copy_from_slice(s);
        }
        Ok(Array { dtype: Dtype::FixedString { size, utf8, nullterm: true, spacepad: false }, bytes })
    }

    /// Byte strings (none holding NUL, e.g. read from a variable-length string dataset) as
    /// fixed-length null-terminated strings sized to the longest + 1.
    pub fn from_byte_strings(v: &[Vec<u8>], utf8: bool) -> Result<Array> {
        let size = v.iter().map(|s| s.len()).max().unwrap_or(0) + 1;
        let b: Vec<&[u8]> = v.iter().map(|s| s.as_slice()).collect();
        Array::from_byte_strings_sized(&b, utf8, size)
    }

    /// The bytes of string element `i` up to its terminator (padding kept for
    /// space-padded types), `None` for other types.
    pub fn get_str_bytes(&self, i: usize) -> Option<&[u8]> {
        match &self.dtype {
            Dtype::FixedString { .. } => Some(str_bytes(self.element(i))),
            _ => None,
        }
    }

    /// Opaque elements of `size` bytes with `tag`.
    pub fn from_opaque(size: usize, tag: &str, bytes: Vec<u8>) -> Result<Array> {
        if size == 0 || !bytes.len().is_multiple_of(size) {
            return Err(MarquetError::InvalidArgument("opaque data is not a whole number of elements".into()));
        }
        Ok(Array { dtype: Dtype::Opaque { size, tag: tag.to_string() }, bytes })
    }

    /// Enum codes (stored at the base width).
    pub fn from_enum_codes(dtype: Dtype, codes: &[i64]) -> Result<Array> {
        let Dtype::Enum { base, .. } = &dtype else {
            return Err(MarquetError::InvalidArgument("not an enum datatype".into()));
        };
        let w = base.size();
        let mut bytes = Vec::with_capacity(codes.len() * w);
        for c in codes {
            bytes.extend_from_slice(&c.to_le_bytes()[..w]);
        }
        Ok(Array { dtype, bytes })
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.bytes.len().checked_div(self.dtype.size()).unwrap_or(0)
    }

    /// True when the array holds no element.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes of element `i`.
    pub fn element(&self, i: usize) -> &[u8] {
        let s = self.dtype.size();
        &self.bytes[i * s..(i + 1) * s]
    }

    /// Elements `[start, end)` as a new array.
    pub fn slice(&self, start: usize, end: usize) -> Array {
        let s = self.dtype.size();
        Array { dtype: self.dtype.clone(), bytes: self.bytes[start * s..end * s].to_vec() }
    }

    /// Append another array of the same datatype (fixed-length strings of another size are
    /// re-padded to the longer of the two).
    pub fn extend(&mut self, other: &Array) -> Result<()> {
        if let (
            Dtype::FixedString { size: a, utf8, nullterm: true, spacepad: false },
            Dtype::FixedString { size: b, nullterm: true, spacepad: false, .. },
        ) = (&self.dtype, &other.dtype)
        {
            if a != b {
                let size = (*a).max(*b);
                let mut v: Vec<&[u8]> = (0..self.len()).map(|i| str_bytes(self.element(i))).collect();
                v.extend((0..other.len()).map(|i| str_bytes(other.element(i))));
                *self = Array::from_byte_strings_sized(&v, *utf8, size)?;
                return Ok(());
            }
        }
        if other.dtype.to_le() != self.dtype.to_le() {
            return Err(MarquetError::InvalidArgument("cannot concatenate arrays of different datatypes".into()));
        }
        self.bytes.extend_from_slice(&other.bytes);
        Ok(())
    }

    /// Element `i` as f64 (integers and floats), else `None`.
    pub fn get_f64(&self, i: usize) -> Option<f64> {
        let e = self.element(i);
        match &self.dtype {
            Dtype::Float { size: 8, .. } => Some(f64::from_le_bytes(e.try_into().ok()?)),
            Dtype::Float { size: 4, .. } => Some(f32::from_le_bytes(e.try_into().ok()?) as f64),
            Dtype::Int { signed: false, size: 8, .. } => Some(u64::from_le_bytes(e.try_into().ok()?) as f64),
            Dtype::Int { signed, .. } => Some(int_from_bytes(e, *signed, false) as f64),
            Dtype::Enum { base, .. } => Some(int_from_bytes(e, matches!(**base, Dtype::Int { signed: true, .. }), false) as f64),
            _ => None,
        }
    }

    /// Element `i` as i128 (all integer types exactly), else `None`.
    pub fn get_i128(&self, i: usize) -> Option<i128> {
        let e = self.element(i);
        match &self.dtype {
            Dtype::Int { signed: false, size: 8, .. } => Some(u64::from_le_bytes(e.try_into().ok()?) as i128),
            Dtype::Int { signed, .. } => Some(int_from_bytes(e, *signed, false) as i128),
            Dtype::Enum { base, .. } => Some(int_from_bytes(e, matches!(**base, Dtype::Int { signed: true, .. }), false) as i128),
            _ => None,
        }
    }

    /// Element `i` as a string (string types), padding stripped per HEP001 §11.5.
    pub fn get_str(&self, i: usize) -> Option<String> {
        match &self.dtype {
            Dtype::FixedString { spacepad, .. } => {
                let s = fixed_str(self.element(i));
                Some(if *spacepad { s.trim_end_matches(' ').to_string() } else { s })
            }
            _ => None,
        }
    }

    /// All elements as f64 (numeric types).
    pub fn to_f64_vec(&self) -> Option<Vec<f64>> {
        (0..self.len()).map(|i| self.get_f64(i)).collect()
    }

    /// All elements as strings (string types).
    pub fn to_string_vec(&self) -> Option<Vec<String>> {
        (0..self.len()).map(|i| self.get_str(i)).collect()
    }

    /// Per-element missing flags under the canonical test of HEP001 §8.5.
    pub fn missing(&self, fill: Option<&[u8]>) -> Vec<bool> {
        let n = self.len();
        let size = self.dtype.size();
        let Some(f) = fill else { return vec![false; n] };
        // The test of `is_missing`, with the type looked at once instead of per element
        // (a full read tests every row of every column; issue #33 item 6).
        let nan_fill = match &self.dtype {
            Dtype::FixedString { .. } | Dtype::VarString { .. } => {
                return (0..n).map(|i| is_missing(&self.dtype, self.element(i), fill)).collect();
            }
            _ if f.len() != size => return vec![false; n],
            Dtype::Float { size: 8, .. } => f64::from_le_bytes(f.try_into().unwrap_or([0; 8])).is_nan(),
            Dtype::Float { size: 4, .. } => f32::from_le_bytes(f.try_into().unwrap_or([0; 4])).is_nan(),
            _ => false,
        };
        let elems = self.bytes[..n * size].chunks_exact(size.max(1));
        match (nan_fill, size) {
            (true, 8) => elems.map(|e| f64::from_le_bytes(e.try_into().unwrap_or([0; 8])).is_nan()).collect(),
            (true, _) => elems.map(|e| f32::from_le_bytes(e.try_into().unwrap_or([0; 4])).is_nan()).collect(),
            (false, 8) => {
                let f = u64::from_ne_bytes(f.try_into().unwrap_or([0; 8]));
                elems.map(|e| u64::from_ne_bytes(e.try_into().unwrap_or([0; 8])) == f).collect()
            }
            (false, 16) => {
                let f = u128::from_ne_bytes(f.try_into().unwrap_or([0; 16]));
                elems.map(|e| u128::from_ne_bytes(e.try_into().unwrap_or([0; 16])) == f).collect()
            }
            (false, _) => elems.map(|e| e == f).collect(),
        }
    }

    /// A text rendering of element `i` for dumps.
    pub fn display(&self, i: usize) -> String {
        match &self.dtype {
            Dtype::Float { .. } => format!("{}", self.get_f64(i).unwrap_or(f64::NAN)),
            Dtype::Int { .. } => format!("{}", self.get_i128(i).unwrap_or(0)),
            Dtype::Enum { members, .. } => {
                let v = self.get_i128(i).unwrap_or(0) as i64;
                members.iter().find(|(_, m)| *m == v).map(|(n, _)| n.clone()).unwrap_or_else(|| v.to_string())
            }
            Dtype::FixedString { .. } => self.get_str(i).unwrap_or_default(),
            Dtype::Compound { fields, .. } => {
                let e = self.element(i);
                let parts: Vec<String> = fields
                    .iter()
                    .map(|f| {
                        let sub = Array { dtype: f.dtype.clone(), bytes: e[f.offset..f.offset + f.dtype.size()].to_vec() };
                        format!("{}: {}", f.name, sub.display(0))
                    })
                    .collect();
                format!("{{{}}}", parts.join(", "))
            }
            _ => self.element(i).iter().map(|b| format!("{b:02x}")).collect(),
        }
    }
}

/// The canonical missing-value test of HEP001 §8.5:
/// `missing(v, fill) = isnan(fill) ? isnan(v) : (v == fill)` (bitwise for non-floats).
pub fn is_missing(dtype: &Dtype, v: &[u8], fill: Option<&[u8]>) -> bool {
    let Some(fill) = fill else { return false };
    if let Dtype::FixedString { .. } | Dtype::VarString { .. } = dtype {
        // Strings compare by their bytes up to the terminator, whatever the storage size
        // (a variable-length column is read into fixed-length elements, `Column::read`).
        return str_bytes(v) == str_bytes(fill);
    }
    if fill.len() != v.len() {
        return false;
    }
    match dtype {
        Dtype::Float { size: 8, .. } => {
            let f = f64::from_le_bytes(fill.try_into().unwrap_or([0; 8]));
            if f.is_nan() {
                f64::from_le_bytes(v.try_into().unwrap_or([0; 8])).is_nan()
            } else {
                v == fill
            }
        }
        Dtype::Float { size: 4, .. } => {
            let f = f32::from_le_bytes(fill.try_into().unwrap_or([0; 4]));
            if f.is_nan() {
                f32::from_le_bytes(v.try_into().unwrap_or([0; 4])).is_nan()
            } else {
                v == fill
            }
        }
        _ => v == fill,
    }
}

/// The bytes of a string element up to its first NUL (the whole element when it has none).
pub fn str_bytes(e: &[u8]) -> &[u8] {
    &e[..e.iter().position(|&b| b == 0).unwrap_or(e.len())]
}

/// The fill value of every string column Marquet writes (local ruling L17): the single byte
/// 0xFF, which is neither UTF-8 nor ASCII, so no text value can ever equal it — an empty
/// string, U+FFFF or any other text stays a value and is never read as missing.
pub const STRING_FILL: &[u8] = b"\xff";

/// HEP001's recommended fill value for `dtype` (§8.5, and Marquet's opaque amendment,
/// ruling R14), except for strings: `STRING_FILL` (HEP001 §8.5 override rule for
/// strings, local ruling L17). `Ok(None)` for booleans (which must not declare one); an error for types
/// without a recommendation (the caller must choose).
pub fn recommended_fill(dtype: &Dtype) -> Result<Option<Vec<u8>>> {
    Ok(Some(match dtype {
        Dtype::Int { size, signed: true, .. } => {
            let v: i64 = match size {
                1 => -127,
                2 => -32767,
                4 => -2147483647,
                8 => -9223372036854775807,
                _ => return Err(MarquetError::Unsupported(format!("integer of {size} bytes"))),
            };
            v.to_le_bytes()[..*size].to_vec()
        }
        Dtype::Int { size, signed: false, .. } => vec![0xff; *size],
        Dtype::Float { size: 8, .. } => names::FILL_F64.to_le_bytes().to_vec(),
        Dtype::Float { size: 4, .. } => names::FILL_F32.to_le_bytes().to_vec(),
        Dtype::FixedString { size, .. } => {
            let mut f = vec![0u8; (*size).max(1)];
            f[0] = STRING_FILL[0];
            f
        }
        Dtype::Enum { .. } if dtype.is_boolean() => return Ok(None),
        Dtype::Enum { base, members } => {
            let Some((_, v)) = members.iter().find(|(n, _)| n == names::MISSING) else {
                return Err(MarquetError::InvalidArgument(
                    "an enum column needs a MISSING member to have a fill value (HEP001 §8.5)".into(),
                ));
            };
            v.to_le_bytes()[..base.size()].to_vec()
        }
        Dtype::Opaque { size, .. } => names::opaque_fill(*size),
        Dtype::Compound { size, fields } => {
            let mut b = vec![0u8; *size];
            for f in fields {
                let sub = recommended_fill(&f.dtype)?.ok_or_else(|| {
                    MarquetError::InvalidArgument(format!("compound field {} has no recommended fill", f.name))
                })?;
                b[f.offset..f.offset + sub.len()].copy_from_slice(&sub);
            }
            b
        }
        other => {
            return Err(MarquetError::InvalidArgument(format!(
                "no recommended fill value for {other:?}; give one explicitly"
            )))
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recommended_fills_have_canonical_bits() {
        let f = |d: Dtype| recommended_fill(&d).unwrap().unwrap();
        assert_eq!(f(Dtype::I8), vec![0x81]);
        assert_eq!(f(Dtype::Int { size: 2, signed: true, big_endian: false }), vec![0x01, 0x80]);
        assert_eq!(f(Dtype::Int { size: 4, signed: true, big_endian: false }), vec![0x01, 0, 0, 0x80]);
        assert_eq!(f(Dtype::I64), vec![1, 0, 0, 0, 0, 0, 0, 0x80]);
        assert_eq!(f(Dtype::U16), vec![0xff, 0xff]);
        assert_eq!(f(Dtype::F32), 0x7CF0_0000u32.to_le_bytes().to_vec());
        assert_eq!(f(Dtype::F64), 0x479E_0000_0000_0000u64.to_le_bytes().to_vec());
        assert_eq!(recommended_fill(&Dtype::hep001_bool()).unwrap(), None);
        assert!(recommended_fill(&Dtype::Enum { base: Box::new(Dtype::U8), members: vec![("A".into(), 0)] }).is_err());
    }

    #[test]
    #[allow(clippy::useless_vec)]
    fn canonical_missing_test() {
        let a = Array::from_f64(&[1.0, names::FILL_F64, f64::NAN]);
        let fill = names::FILL_F64.to_le_bytes();
        assert_eq!(a.missing(Some(&fill)), vec![false, true, false]);
        let nanfill = f64::NAN.to_le_bytes();
        assert_eq!(a.missing(Some(&nanfill)), vec![false, false, true]);
        assert_eq!(a.missing(None), vec![false, false, false]);
        let s = Array::from_strings(&["a", "", "bc"], true);
        assert_eq!(s.missing(Some(&vec![0u8; 3])), vec![false, true, false]);
    }

    /// Local ruling L17: the string fill 0xFF equals no text ('' and U+FFFF included),
    /// whatever the element size; fills compare by their bytes up to the terminator.
    #[test]
    fn string_fill_equals_no_text() {
        let f = recommended_fill(&Dtype::FixedString { size: 4, utf8: true, nullterm: true, spacepad: false }).unwrap().unwrap();
        assert_eq!(f, vec![0xff, 0, 0, 0]);
        let s = Array::from_strings_sized(&["", "\u{FFFF}", "\u{FFFD}", "a"], true, 4).unwrap();
        assert_eq!(s.missing(Some(&f)), vec![false; 4]);
        let mut with_fill = s.clone();
        with_fill.bytes[..4].copy_from_slice(&f);
        assert_eq!(with_fill.missing(Some(STRING_FILL)), vec![true, false, false, false], "a shorter fill compares by bytes");
        let e = Array::from_strings_sized(&["ok", "a\0b"], true, 8).unwrap_err().to_string();
        assert!(e.contains("element 1") && e.contains("NUL"), "{e}");
    }

    #[test]
    fn fixed_strings_of_other_sizes_concatenate_byte_for_byte() {
        let mut a = Array::from_byte_strings(&[b"ab".to_vec(), vec![0xff]], true).unwrap();
        a.extend(&Array::from_byte_strings(&[b"longer".to_vec(), Vec::new()], true).unwrap()).unwrap();
        let got: Vec<&[u8]> = (0..a.len()).map(|i| a.get_str_bytes(i).unwrap()).collect();
        assert_eq!(got, [&b"ab"[..], &[0xff][..], &b"longer"[..], &b""[..]]);
        assert_eq!(a.dtype.size(), 7);
    }
}
