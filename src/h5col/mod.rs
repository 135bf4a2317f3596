//! HEP001 "H5Col" on HDF5: table groups, column datasets, list columns, search indexes,
//! and the append / truncate / update procedures of HEP001 §12.

pub mod array;
pub mod categorical;
pub mod predicate;
pub(crate) mod guard;
pub mod search_index;
pub mod list;
mod column;
mod file;
mod table;
mod write;

pub use column::*;
pub use file::*;
pub use table::*;


pub use array::{is_missing, recommended_fill, Array};
pub use list::{ListArray, ListValues};
/// The datatypes, dataset shapes and filters of HEP001 columns, as the HDF5 layer models
/// them: the vocabulary of [`ColumnSpec`], re-exported so that the layers above need not
/// reach below `h5col`.
pub use crate::h5::{DatasetInfo, Dtype, Field, Filter};
/// How long opening a file waits for another process's HDF5 file lock (docs/FAULTS.md F5).
pub use crate::h5::{is_lock_error, lock_timeout, set_lock_timeout};


/// Default chunk length (rows) of new column datasets.
pub const DEFAULT_CHUNK_ROWS: u64 = 65_536;
