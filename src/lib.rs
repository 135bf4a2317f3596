#![doc = include_str!("../README.md")]
#![deny(unsafe_code)]

pub mod arrays;
pub mod crs;
pub mod error;
#[cfg(feature = "geoparquet")]
pub mod convert;
pub mod h5;
pub mod h5col;
pub mod spatial;
pub mod marquet;
pub mod progress;
pub mod query;
pub mod spec;
pub mod validate;
pub mod wkb;
#[cfg(test)]
mod test_rng;

pub use error::{check_regular_file, MarquetError, Result};
pub use progress::Progress;
pub use spec::{BBox, Dimensions, GeometryKind, GeometryType};
/// The `ndarray` of [`arrays`]' signatures (the version hdf5-metno uses), so that callers
/// need no version of their own to match.
pub use ndarray;
/// The `geo-types` of [`marquet::MarquetTable::read_geo`] and
/// [`marquet::GeometryValues::from_geo`].
pub use geo_types;
