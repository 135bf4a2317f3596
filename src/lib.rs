#![doc = include_str!("../README.md")]
#![deny(unsafe_code)]

// The public API (docs/VERSIONING.md, "What is public API"): the root re-exports below
// and the modules declared `pub`. The layers underneath (the raw HDF5 shim `h5`, the
// Marquet layer's own modules) are private; the non-default, unstable cargo feature
// `internals` makes them `pub` and `#[doc(hidden)]` for this workspace's own tests,
// benches and examples (a dev-dependency of the crate on itself), outside semver.
macro_rules! internal_mod {
    ($($(#[$m:meta])* $name:ident;)*) => {$(
        $(#[$m])*
        #[cfg(feature = "internals")]
        #[doc(hidden)]
        pub mod $name;
        $(#[$m])*
        #[cfg(not(feature = "internals"))]
        // Their items are `pub` (rustc never reported unused `pub` items); what the public
        // API does not reach is used by the tests through `internals`.
        #[allow(dead_code, unused_imports)]
        pub(crate) mod $name;
    )*};
}

// `pub` with the feature `internals` (and `#[doc(hidden)]`), crate-private without it: the
// functions of public types that hand out HDF5 identifiers or the layers below.
macro_rules! internal_pub {
    ($(#[$m:meta])* fn $($t:tt)*) => {
        $(#[$m])*
        #[cfg(feature = "internals")]
        #[doc(hidden)]
        pub fn $($t)*
        $(#[$m])*
        #[cfg(not(feature = "internals"))]
        #[allow(dead_code)]
        pub(crate) fn $($t)*
    };
}

pub mod arrays;
pub mod crs;
#[cfg(feature = "geoparquet")]
pub mod convert;
pub mod h5col;
pub mod spatial;
pub mod query;
#[cfg(feature = "cloud")]
pub mod remote;
pub mod spec;
pub mod validate;
pub mod wkb;
internal_mod! {
    error;
    h5;
    marquet;
    progress;
}
#[cfg(test)]
mod test_rng;

pub use crate::error::{check_regular_file, Error, Location, RemoteErrorKind, Result};
pub use crate::h5col::File;
/// A Marquet table (HEP002 §5): an H5Col table group with geometry columns.
pub use crate::marquet::MarquetTable as Table;
/// MPI-parallel tables (feature `mpio`, docs/PARALLEL.md).
#[cfg(feature = "mpio")]
pub use crate::marquet::parallel;
pub use crate::marquet::append_from::DEFAULT_APPEND_BATCH_ROWS;
pub use crate::marquet::compression::{DEFAULT_DEFLATE_LEVEL, DEFAULT_ZSTD_LEVEL};
pub use crate::marquet::layout::covering_name;
pub use crate::marquet::{GEOMETRY_CHUNK_ROWS, GEOMETRY_VALUES_CHUNK_BYTES};
pub use crate::marquet::spatial_index::SpatialIndex;
pub use crate::marquet::cloud::{cloud_layout, write_cloud_copy, CloudLayout};
/// What [`write_cloud_copy`] copied.
pub use crate::h5::RelayoutReport as CloudCopyReport;
pub use crate::marquet::{
    choose_form, is_marquet_table, BatchTransform, Compression, Crs, Edges, Elements, GeoBatch, GeometryColumnInfo,
    GeometryColumnSpec, GeometryValues, OrientationOnWrite, PointArrays, RTreeChoice, RTreeOnAppend,
    SpatialIndexKind, StorageForm, TableWriter, ValueType, WkbBuffer, WriteLayout,
};
/// Options of a write through [`TableWriter`] / [`Table::write`].
pub use crate::marquet::WriteOptions;
pub use crate::progress::{Progress, ProgressFn};
pub use crate::query::reader::{ColumnReaders, SpatialReader};
pub use crate::query::{CombinedResult, Predicate, Query, QueryResult, QueryStats, TableQuery, Window};
pub use crate::spec::{BBox, Dimensions, GeometryKind, GeometryType};
/// The `ndarray` of [`arrays`]' signatures (the version hdf5-metno uses), so that callers
/// need no version of their own to match.
pub use ndarray;
/// The `geo-types` of [`Table::read_geo`] and [`GeometryValues::from_geo`].
pub use geo_types;
