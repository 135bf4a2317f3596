//! Marquet: geospatial vector tables (HEP002) on H5Col column tables (HEP001) in HDF5.
#![deny(unsafe_code)]

pub mod error;
pub mod h5;
pub mod h5col;
pub mod index;
pub mod marquet;
pub mod spec;
pub mod wkb;

pub use error::{MarquetError, Result};
pub use spec::{BBox, Dimensions, GeometryKind, GeometryType};
