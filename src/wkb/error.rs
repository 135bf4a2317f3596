//! The error of the WKB codec: what rule was broken, and at which byte offset.

use std::fmt;

use crate::error::MarquetError;

/// Why a byte string is not one ISO WKB value (HEP002 §7.1, §17).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum WkbErrorKind {
    /// The input ends inside a field.
    UnexpectedEnd {
        /// The field being read, e.g. `"type code"` or `"coordinate"`.
        what: &'static str,
        /// Bytes the field needs.
        needed: usize,
        /// Bytes left in the input.
        left: usize,
    },
    /// A count cannot fit in the bytes that remain (checked before allocating).
    CountTooLarge {
        /// What is counted, e.g. `"point"`, `"ring"` or `"member"`.
        what: &'static str,
        /// The count as read from the value.
        count: u32,
        /// Bytes left after the count.
        left: usize,
    },
    /// The byte-order flag is neither 0x00 nor 0x01.
    InvalidByteOrder(u8),
    /// An EWKB type code with the SRID flag (0x20000000).
    EwkbSrid(u32),
    /// An EWKB type code with the Z (0x80000000) or M (0x40000000) flag.
    EwkbFlags(u32),
    /// A type code that is not one of the 28 ISO codes of the seven types.
    UnknownType(u32),
    /// A member of a multi-geometry of the wrong kind, e.g. a LineString in a MultiPoint.
    WrongMemberType {
        /// The multi-geometry, e.g. `"multipoint"`.
        parent: &'static str,
        /// The member kind it requires, e.g. `"point"`.
        expected: &'static str,
        /// The ISO type code the member has.
        code: u32,
    },
    /// Bytes follow the one WKB value.
    TrailingBytes(usize),
    /// GeometryCollections nested deeper than [`MAX_NESTING`](super::MAX_NESTING).
    NestingLimit(usize),
}

/// A WKB decoding error: the rule broken and the byte offset where it was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WkbError {
    /// Byte offset into the value where the problem was detected.
    pub offset: usize,
    /// Which rule was broken, with its details.
    pub kind: WkbErrorKind,
}

impl WkbError {
    pub(crate) fn new(offset: usize, kind: WkbErrorKind) -> WkbError {
        WkbError { offset, kind }
    }

    /// Wrap as [`MarquetError::InvalidWkb`] for the column at `path`, optionally at `row`.
    pub fn into_marquet(self, path: impl Into<String>, row: Option<u64>) -> MarquetError {
        MarquetError::InvalidWkb {
            path: path.into(),
            row,
            message: self.to_string(),
        }
    }
}

/// Name a non-Simple-Features ISO code in messages (curves, surfaces, TIN).
fn extended_type_name(code: u32) -> Option<&'static str> {
    if code / 1000 > 3 {
        return None;
    }
    Some(match code % 1000 {
        8 => "circularstring",
        9 => "compoundcurve",
        10 => "curvepolygon",
        11 => "multicurve",
        12 => "multisurface",
        13 => "curve",
        14 => "surface",
        15 => "polyhedralsurface",
        16 => "tin",
        17 => "triangle",
        _ => return None,
    })
}

impl fmt::Display for WkbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let off = self.offset;
        match &self.kind {
            WkbErrorKind::UnexpectedEnd { what, needed, left } => write!(
                f,
                "unexpected end of input at offset {off}: {what} needs {needed} bytes, {left} left"
            ),
            WkbErrorKind::CountTooLarge { what, count, left } => {
                write!(
                    f,
                    "{what} count {count} exceeds the {left} bytes left at offset {off}"
                )
            }
            WkbErrorKind::InvalidByteOrder(b) => {
                write!(
                    f,
                    "invalid byte order 0x{b:02x} at offset {off} (expected 0x00 or 0x01)"
                )
            }
            WkbErrorKind::EwkbSrid(code) => {
                write!(
                    f,
                    "ewkb srid flag in type 0x{code:08x} at offset {off} (iso wkb required)"
                )
            }
            WkbErrorKind::EwkbFlags(code) => {
                write!(
                    f,
                    "ewkb z/m flag in type 0x{code:08x} at offset {off} (iso wkb required)"
                )
            }
            WkbErrorKind::UnknownType(code) => {
                write!(f, "unknown geometry type code {code} at offset {off}")?;
                if let Some(name) = extended_type_name(*code) {
                    write!(f, " ({name}: not one of the seven simple feature types)")?;
                }
                Ok(())
            }
            WkbErrorKind::WrongMemberType {
                parent,
                expected,
                code,
            } => write!(
                f,
                "{parent} member at offset {off} has type code {code}, expected {expected}"
            ),
            WkbErrorKind::TrailingBytes(n) => write!(f, "trailing bytes: {n} after offset {off}"),
            WkbErrorKind::NestingLimit(limit) => {
                write!(f, "nesting limit {limit} exceeded at offset {off}")
            }
        }
    }
}

impl std::error::Error for WkbError {}

/// Without a location; prefer [`WkbError::into_marquet`] where the column and row are known.
impl From<WkbError> for MarquetError {
    fn from(e: WkbError) -> MarquetError {
        e.into_marquet(String::new(), None)
    }
}
