//! Names and vocabularies of HEP001 (H5Col) and HEP002 (Marquet). No I/O.
//!
//! Every reserved attribute, group, member and token name is a constant here; no
//! attribute-name string literal appears anywhere else in the crate.
//!
//! # Example
//!
//! ```
//! use marquet::spec::{names, BBox, Dimensions, GeometryKind, GeometryType};
//!
//! // One enumeration member carries both vocabularies (HEP002 §6.3, ruling R1).
//! let t = GeometryType::from_iso_code(1003).unwrap();
//! assert_eq!(t, GeometryType::new(GeometryKind::Polygon, Dimensions::Xyz));
//! assert_eq!(t.name(), "Polygon Z");
//! assert_eq!(GeometryType::from_name("Polygon Z"), Some(t));
//! assert_eq!(GeometryType::from_iso_code(0x2000_0003), None); // EWKB flags are not ISO codes
//!
//! // Boxes ignore NaN ordinates; the empty box intersects nothing (HEP002 §6.4, §10.3).
//! let mut b = BBox::EMPTY;
//! b.add_xy(1.0, 2.0);
//! b.add_xy(f64::NAN, 5.0);
//! assert_eq!((b.xmin, b.ymin, b.xmax, b.ymax), (1.0, 2.0, 1.0, 5.0));
//! assert!(!BBox::EMPTY.intersects_xy(&b));
//!
//! // Reserved names are constants; the recommended fill is exact in f32 and f64.
//! assert_eq!(names::GEOMETRY_COLUMNS, "GEOMETRY_COLUMNS");
//! assert_eq!(names::FILL_F32 as f64, names::FILL_F64);
//! assert_eq!(&names::opaque_fill(6), b"FILL\x01\x02");
//! ```

pub mod bbox;
pub mod geometry_type;
pub mod names;

pub use bbox::BBox;
pub use geometry_type::{all_geometry_types, Dimensions, GeometryKind, GeometryType};
