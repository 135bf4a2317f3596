//! Names and vocabularies of HEP001 (H5Col) and HEP002 (Marquet). No I/O.
//!
//! Every reserved attribute, group, member and token name is a constant here; no
//! attribute-name string literal appears anywhere else in the crate.

pub mod bbox;
pub mod geometry_type;
pub mod names;

pub use bbox::BBox;
pub use geometry_type::{all_geometry_types, Dimensions, GeometryKind, GeometryType};
