//! HEP001 "H5Col" on HDF5: table groups, column datasets, list columns, search indexes,
//! and the append / truncate / update procedures of HEP001 §12.
//!
//! # Example
//!
//! A table of two column datasets, appended to twice (each append commits by writing
//! `NROWS` last, HEP001 §12.3) and read back:
//!
//! ```
//! use marquet::h5col::{Array, Batch, ColumnSpec, Dtype, File};
//!
//! let path = std::env::temp_dir().join(format!("marquet-doc-h5col-{}.h5", std::process::id()));
//! let file = File::create(&path)?;
//! let t = file.create_table("/readings")?;
//! t.add_column("station", &ColumnSpec::new(Dtype::I64))?;
//! t.add_column("temperature", &ColumnSpec::new(Dtype::F64).with_units("K"))?;
//! t.append(
//!     &Batch::new()
//!         .with_array("station", Array::from_i64(&[7, 7, 9]))
//!         .with_array("temperature", Array::from_f64(&[271.5, 272.0, 280.25])),
//! )?;
//! t.append(
//!     &Batch::new()
//!         .with_array("station", Array::from_i64(&[9]))
//!         .with_array("temperature", Array::from_f64(&[281.0])),
//! )?;
//! assert_eq!(t.nrows()?, 4);
//! assert_eq!(t.column_names()?, vec!["station", "temperature"]);
//! // Rows 1..4; columns without a given fill get HEP001's recommended one (§8.5).
//! let temperature = t.column("temperature")?;
//! assert_eq!(temperature.read(1, 3)?, Array::from_f64(&[272.0, 280.25, 281.0]));
//! assert_eq!(temperature.fill(), Some(&9.969_209_968_386_869e36f64.to_le_bytes()[..]));
//! # drop((temperature, t, file));
//! # std::fs::remove_file(&path).ok();
//! # Ok::<(), marquet::Error>(())
//! ```

internal_mod! {
    array;
    categorical;
    search_index;
    list;
    #[cfg(feature = "mpio")]
    mpio;
    grid;
}
pub mod predicate;
pub(crate) mod guard;
mod column;
mod file;
mod table;
pub(crate) mod undo;
mod write;

pub use column::*;
pub use file::*;
pub use table::*;


pub use array::{is_missing, recommended_fill, Array};
pub use list::{LeafSpec, ListArray, ListColumn, ListSpec, ListValues};
pub use search_index::{indexes_of, IndexInfo};
pub use categorical::{categories_of, read_labels, Categories};
pub use grid::{Grid, GridAttr, GridSpec};
/// The datatypes, dataset shapes and filters of HEP001 columns, as the HDF5 layer models
/// them: the vocabulary of [`ColumnSpec`], re-exported so that the layers above need not
/// reach below `h5col`.
pub use crate::h5::{DatasetInfo, Dtype, Field, Filter};
/// How long opening a file waits for another process's HDF5 file lock (docs/FAULTS.md F5).
pub use crate::h5::{is_lock_error, lock_timeout, set_lock_timeout};


/// Default chunk length (rows) of new column datasets.
pub const DEFAULT_CHUNK_ROWS: u64 = 65_536;
