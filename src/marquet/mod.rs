//! HEP002 "Marquet" on H5Col: geometry columns, their storage forms and attributes,
//! covering columns, and summary maintenance on append (§11.1).
//!
//! # Example
//!
//! A variable-length WKB column (HEP002 §7.2) with a covering column (§10.5): the append
//! writes `GEOMETRY_TYPES` and `BBOX` from the data, and the values read back are the bytes
//! written.
//!
//! ```
//! use marquet::h5col::File;
//! use marquet::{GeoBatch, GeometryColumnSpec, GeometryValues, Table, StorageForm};
//! use marquet::wkb::{self, ByteOrder, Coord, Geometry, Polygon};
//! use marquet::{Dimensions, GeometryType};
//!
//! let path = std::env::temp_dir().join(format!("marquet-doc-marquet-{}.h5", std::process::id()));
//! let file = File::create(&path)?;
//! let mut t = Table::create(&file, "/lakes")?;
//! let spec = GeometryColumnSpec::default().with_form(StorageForm::VarWkb).with_covering("shore_bbox");
//! t.add_geometry_column("shore", &spec)?;
//!
//! let square = |x: f64, y: f64, s: f64| {
//!     let ring = vec![Coord::xy(x, y), Coord::xy(x + s, y), Coord::xy(x + s, y + s), Coord::xy(x, y + s), Coord::xy(x, y)];
//!     wkb::encode(&Geometry::Polygon(Polygon { dims: Dimensions::Xy, rings: vec![ring] }), ByteOrder::LittleEndian)
//! };
//! let rows = vec![Some(square(0.0, 0.0, 1.0)), None, Some(square(5.0, 5.0, 2.0))];
//! t.append(&GeoBatch::new().with_geometry("shore", GeometryValues::Wkb(rows.clone())))?;
//! assert_eq!(t.nrows()?, 3);
//!
//! let info = t.geometry_column("shore")?;
//! assert_eq!(info.types, Some(vec![GeometryType::from_name("Polygon").unwrap()]));
//! let (bbox, _, _) = info.bbox.unwrap(); // the null row is not in the box (§7.5)
//! assert_eq!((bbox.xmin, bbox.ymin, bbox.xmax, bbox.ymax), (0.0, 0.0, 7.0, 7.0));
//! assert_eq!(info.covering.as_deref(), Some("shore_bbox"));
//!
//! let back = t.read_wkb("shore", 0, 3)?;
//! assert_eq!(back.get(0), rows[0].as_deref());
//! assert_eq!(back.get(1), None);
//! assert_eq!(back.get(2), rows[2].as_deref());
//! # drop((t, file));
//! # std::fs::remove_file(&path).ok();
//! # Ok::<(), marquet::Error>(())
//! ```

pub mod bounds;
pub mod checks;
pub mod cloud;
pub mod compression;
pub mod projjson;
pub mod layout;
pub mod facts;
pub mod snapshot;
pub mod point_groups;
pub mod spatial_index;
pub mod order;
pub mod types;
pub mod maintain;
pub mod modify;
pub mod append_from;
#[cfg(feature = "mpio")]
pub mod parallel;
mod geometry_column;
mod read;
mod table;
mod values;
mod write;
mod writer;

pub use geometry_column::*;
pub(crate) use read::*;
pub use table::*;
pub use values::*;
pub(crate) use write::*;


pub use checks::OrientationOnWrite;
pub use compression::{checksummed, Compression, Elements};
pub use layout::{RTreeChoice, WriteLayout};
pub use writer::{BatchTransform, TableWriter, WriteOptions};
pub use spatial_index::{RTreeOnAppend, SpatialIndexKind};
pub use types::{Crs, Edges, StorageForm};
/// The H5Col types in this layer's signatures, re-exported so that callers of the Marquet
/// layer (the CLI, the C ABI, the Python package) need not reach below it.
pub use crate::h5col::{Array, Batch, ColumnKind, ColumnSpec, ColumnValues, Dtype, File, ListArray, ListValues, ScalarType, Table};

/// The zstd level of geometry data compressed with [`Compression::zstd`]. Level 1 against
/// level 3 on the issue #10 data (`marquet bench`, 2 cores): 200,000 polygons written in
/// 0.53 s instead of 0.68 s for 0.3 % more bytes (78.45 vs 78.22 MB); WKB of random doubles
/// barely compresses further at any level (docs/PERFORMANCE.md).
pub const GEOMETRY_ZSTD_LEVEL: u32 = compression::DEFAULT_ZSTD_LEVEL;

/// Default chunk length in rows of geometry columns (point and fixed-WKB datasets, WKB
/// `OFFSETS`). A window query reads a few rows and HDF5 decompresses whole chunks: with
/// 65,536-row chunks a query over 1,000,000 points took 21 ms, with 8,192-row chunks 1.1 ms
/// (docs/PERFORMANCE.md, "Query layout round"); with deflate (the default since issue #16)
/// 2,048-row chunks cost 21 % fewer instructions per query than 8,192 for 0.9 % more bytes
/// (docs/PERFORMANCE.md, "Default layout").
pub const GEOMETRY_CHUNK_ROWS: u64 = 2_048;

/// Default chunk length in bytes of variable-length WKB `VALUES` (see
/// [`GEOMETRY_CHUNK_ROWS`]): a window query inflates the whole chunks holding its
/// candidates. With libhdf5 reading the chunks, 32 KiB cost 25 % fewer instructions per
/// polygon query than 256 KiB at the same file size. On the byte-range read path (issue
/// #33) 16 KiB cost 0.91× the instructions of 32 KiB cold and 0.87× warm (polygon windows
/// 0.85× and 0.70× the time against FlatGeobuf) for 0.2 % more bytes; 8 KiB saves a little
/// more there but costs the libhdf5 paths (`MarquetTable::query`, full reads) a chunk call
/// per 8 KiB (docs/PERFORMANCE.md, "Default layout" and "Session 17").
pub const GEOMETRY_VALUES_CHUNK_BYTES: u64 = 16 * 1024;
