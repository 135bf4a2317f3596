//! Read access to a file's objects by path, through either read path (issue #33 item 2).
//!
//! A reader of a table's metadata and geometry (the query snapshot of
//! `crate::marquet::snapshot`) asks four things of a file: what an object is, its
//! attributes, its reference attributes resolved to paths, and a dataset's description
//! and element ranges. [`Objects`] is that question set; [`LibObjects`] answers it through
//! libhdf5 (the path writers use, and the one any file opens with) and
//! [`super::pure::PureFile`] by byte range, without libhdf5. The checks a reader makes
//! are written once, over `&dyn Objects`, so the two paths cannot drift apart.
#![forbid(unsafe_code)]

use hdf5_sys::h5i::hid_t;
use std::sync::Arc;

use super::pure::{ObjKind, PureDataset, PureFile};
use super::{DatasetInfo, Dtype, Hid, RawAttr, RefAttr};
use crate::error::{MarquetError, Result};

/// The questions a reader asks of a file's objects (see the module documentation). Paths
/// are absolute.
pub trait Objects {
    /// What the object at `path` is; `None` when no link leads there or it cannot be opened.
    fn kind(&self, path: &str) -> Result<Option<ObjKind>>;
    /// Attribute `name` of the object at `path` (`None` when absent).
    fn attr(&self, path: &str, name: &str) -> Result<Option<RawAttr>>;
    /// A reference attribute with its targets' paths (see [`super::attr_read_refs`]).
    fn attr_refs(&self, path: &str, name: &str) -> Result<Option<RefAttr>>;
    /// Open the dataset at `path`.
    fn dataset(&self, path: &str) -> Result<Elements>;
    /// Which read path this is, for messages and statistics: `"libhdf5"` or `"byte-range"`.
    fn path_name(&self) -> &'static str;
}

/// An open dataset of either read path: its description and its element ranges.
#[derive(Debug)]
pub struct Elements {
    /// The dataset's path.
    pub path: String,
    /// Its description (shared with the byte-range reader's description of the dataset,
    /// which a table's open asks for several times).
    pub info: Arc<DatasetInfo>,
    src: Src,
}

#[derive(Debug)]
enum Src {
    Lib(Hid),
    Pure(Box<PureDataset>),
}

impl Elements {
    /// A dataset opened through libhdf5.
    pub fn lib(ds: Hid, info: DatasetInfo, path: &str) -> Elements {
        Elements { path: path.to_string(), info: Arc::new(info), src: Src::Lib(ds) }
    }

    /// Refuse, before any data is read, a read as `mem` this dataset's path cannot make
    /// (the byte-range path reads stored bytes only: [`PureDataset::can_read`]).
    pub fn check_readable(&self, mem: &Dtype) -> Result<()> {
        match &self.src {
            Src::Lib(_) => Ok(()),
            Src::Pure(p) if p.can_read(mem) => Ok(()),
            Src::Pure(_) => Err(MarquetError::Unsupported(format!(
                "{}: not read by the byte-range path ({:?} as {mem:?}, filters {:?})",
                self.path, self.info.dtype, self.info.filters
            ))),
        }
    }

    /// Whether the dataset is read on the byte-range path (a local file or a URL).
    pub fn is_byte_range(&self) -> bool {
        matches!(&self.src, Src::Pure(_))
    }

    /// Whether the dataset is read by URL, where [`Elements::prefetch`] pays off.
    pub fn is_remote(&self) -> bool {
        matches!(&self.src, Src::Pure(p) if p.is_remote())
    }

    /// Fetch ahead, together, what reading the element ranges `(start, count)` will need,
    /// for a file read by URL (issue #34: independent range requests in flight at once);
    /// nothing otherwise.
    pub fn prefetch(&self, ranges: &[(u64, u64)]) -> Result<()> {
        match &self.src {
            Src::Lib(_) => Ok(()),
            Src::Pure(p) => p.prefetch(ranges),
        }
    }

    /// The byte ranges reading the element ranges `(start, count)` needs, for one
    /// prefetch joined with other datasets' ([`PureDataset::byte_ranges`]); empty unless
    /// the dataset is read by URL.
    pub fn byte_ranges(&self, ranges: &[(u64, u64)]) -> Result<Vec<(u64, u64)>> {
        match &self.src {
            Src::Lib(_) => Ok(Vec::new()),
            Src::Pure(p) => p.byte_ranges(ranges),
        }
    }

    /// The file the dataset is read from by URL (`None`: a local file or libhdf5).
    #[cfg(feature = "cloud")]
    pub fn remote(&self) -> Option<&std::sync::Arc<crate::remote::RemoteFile>> {
        match &self.src {
            Src::Lib(_) => None,
            Src::Pure(p) => p.remote(),
        }
    }

    /// Elements `[start, start + count)` in the layout of `mem`.
    pub fn read(&self, start: u64, count: u64, mem: &Dtype) -> Result<Vec<u8>> {
        match &self.src {
            Src::Lib(ds) => super::dataset_read(ds.id(), start, count, mem, &self.path),
            Src::Pure(p) => p.read(start, count, mem),
        }
    }
}

/// [`Objects`] through libhdf5, from any location id of the file.
#[derive(Debug, Clone, Copy)]
pub struct LibObjects(pub hid_t);

impl Objects for LibObjects {
    fn kind(&self, path: &str) -> Result<Option<ObjKind>> {
        if !super::path_exists(self.0, path)? {
            return Ok(None);
        }
        Ok(match super::object_open(self.0, path) {
            Ok(o) if super::is_group(o.id()) => Some(ObjKind::Group),
            Ok(_) => Some(ObjKind::Dataset),
            Err(_) => None,
        })
    }
    fn attr(&self, path: &str, name: &str) -> Result<Option<RawAttr>> {
        super::attr_read(super::object_open(self.0, path)?.id(), name)
    }
    fn attr_refs(&self, path: &str, name: &str) -> Result<Option<RefAttr>> {
        super::attr_read_refs(super::object_open(self.0, path)?.id(), name)
    }
    fn dataset(&self, path: &str) -> Result<Elements> {
        let ds = super::dataset_open(self.0, path)?;
        let info = super::dataset_info(ds.id(), path)?;
        Ok(Elements::lib(ds, info, path))
    }
    fn path_name(&self) -> &'static str {
        "libhdf5"
    }
}

impl Objects for PureFile {
    fn kind(&self, path: &str) -> Result<Option<ObjKind>> {
        PureFile::kind(self, path)
    }
    fn attr(&self, path: &str, name: &str) -> Result<Option<RawAttr>> {
        PureFile::attr(self, path, name)
    }
    fn attr_refs(&self, path: &str, name: &str) -> Result<Option<RefAttr>> {
        PureFile::attr_refs(self, path, name)
    }
    fn dataset(&self, path: &str) -> Result<Elements> {
        let d = PureFile::dataset(self, path)?;
        Ok(Elements { path: path.to_string(), info: d.info.clone(), src: Src::Pure(Box::new(d)) })
    }
    fn path_name(&self) -> &'static str {
        "byte-range"
    }
}
