//! The byte-range read path (issue #33 item 2): HDF5 objects read without libhdf5.
//!
//! [`PureFile`] opens a file with the `hdf5-reader` crate — a pure-Rust, read-only parser of
//! the HDF5 format (superblock, object headers, attributes, links, every chunk-index type),
//! bounded against hostile files (object header and chunk size limits, nesting limits) —
//! and answers what a reader of a Marquet table asks: which objects exist, their
//! attributes as [`RawAttr`], reference attributes resolved to paths, a dataset's
//! description as [`DatasetInfo`], and ranges of a rank-1 dataset's elements. It takes
//! none of libhdf5's global lock, library initialisation or metadata cache: opening a file
//! and reading a table's metadata costs the bytes it reads (the reason for this path:
//! `H5open` + `H5Fopen` alone cost more than FlatGeobuf's whole query, issue #33).
//!
//! A dataset's chunk index (any of HDF5's six kinds) is walked once, by the crate's
//! index parsers, on its first read; then each chunk is one byte range, decoded with the
//! project's own codecs ([`super::codec`]: shuffle, libdeflate for deflate, zstd for the
//! registered filter 32015 — the ones the libhdf5 path's direct chunk reads use) and the
//! crate's Fletcher-32 check. Contiguous and compact datasets are read as they lie.
//!
//! What this path does not read — datatype conversions (a big-endian dataset read as
//! little-endian, compound fields by name in another layout), filters other than those
//! above (szip, n-bit, scale-offset and plugins), external storage — is refused with [`MarquetError::Unsupported`] before
//! any data is read, and callers then read through libhdf5 ([`crate::query`] does so for
//! a whole query): answers never depend on which path read them (`tests/read_paths.rs`).
#![forbid(unsafe_code)]

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

use hdf5_reader::messages::HdfMessage;
use hdf5_reader::chunk_index::ChunkEntry;
use hdf5_reader::messages::layout::DataLayout;
use hdf5_reader::{Datatype as PDtype, Hdf5File, OpenOptions};

use super::codec;
use super::{DatasetInfo, Dtype, Field, Filter, RawAttr, Space};
use crate::error::{MarquetError, Result};

/// What an object at a path is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjKind {
    /// A group.
    Group,
    /// A dataset.
    Dataset,
}

/// A group's member names: (groups, datasets).
type Members = (Vec<String>, Vec<String>);

/// An HDF5 file opened for the byte-range read path (see the module documentation).
pub struct PureFile {
    f: Hdf5File,
    name: String,
    /// Each object's attributes, parsed once ([`PureFile::attr`] is asked for several
    /// attributes of one object).
    attrs: Mutex<HashMap<String, Arc<Vec<hdf5_reader::Attribute>>>>,
    /// Each group's member names (groups, datasets), listed once.
    members: Mutex<HashMap<String, Arc<Members>>>,
    /// Each dataset's description, read once: a table's open asks for the geometry
    /// column's dataset up to four times (what it is, its rank, its facts, its reader).
    datasets: Mutex<HashMap<String, Arc<Described>>>,
    /// The byte source of a file opened by URL (issue #34).
    #[cfg(feature = "cloud")]
    remote: Option<Arc<crate::remote::RemoteFile>>,
}

impl std::fmt::Debug for PureFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PureFile").field("name", &self.name).finish()
    }
}

/// Largest decoded chunk accepted, checked before anything is allocated (Marquet writes
/// chunks of at most a few MiB; other producers' 64 MiB chunks still read).
const MAX_CHUNK_BYTES: usize = 256 << 20;

/// A cache's lock; a panic elsewhere while it was held leaves a usable map.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Whether a failed lookup says only that no object of the kind asked for is at the path.
fn is_not_found(e: &hdf5_reader::error::Error) -> bool {
    use hdf5_reader::error::Error as E;
    match e {
        E::GroupNotFound(_) | E::DatasetNotFound(_) => true,
        E::Context { source, .. } => is_not_found(source),
        _ => false,
    }
}

fn perr(path: &str, e: hdf5_reader::error::Error) -> MarquetError {
    remote_or(MarquetError::hdf5(path, e))
}

/// A failed read of a file opened by URL as the typed [`MarquetError::Remote`] its byte
/// source reported (the parser passes on only its own error type), else `e`.
fn remote_or(e: MarquetError) -> MarquetError {
    #[cfg(feature = "cloud")]
    if let Some(r) = crate::remote::take_last_error() {
        return r;
    }
    e
}

/// A local file as the parser's byte source: read without zeroing on Unix
/// (`super::local::LocalStorage`), by `hdf5-reader`'s own `FileStorage` elsewhere.
fn local_storage(file: std::fs::File) -> std::io::Result<hdf5_reader::storage::DynStorage> {
    #[cfg(unix)]
    return Ok(Arc::new(super::local::LocalStorage::new(file)?));
    #[cfg(not(unix))]
    return hdf5_reader::storage::FileStorage::from_file(file).map(|s| Arc::new(s) as _).map_err(|e| std::io::Error::other(e.to_string()));
}

impl PureFile {
    /// Open `path` read-only. Nothing but the superblock is read until objects are asked
    /// for.
    pub fn open(path: &Path) -> Result<PureFile> {
        let name = path.display().to_string();
        crate::error::check_regular_file(path)?;
        let file = std::fs::File::open(path).map_err(|e| MarquetError::Io { path: name.clone(), source: e })?;
        PureFile::from_storage(name.clone(), local_storage(file).map_err(|e| MarquetError::Io { path: name, source: e })?)
    }

    /// Open a file on a web server or in object storage, read through `remote`'s block
    /// cache (issue #34).
    #[cfg(feature = "cloud")]
    pub fn open_remote(remote: Arc<crate::remote::RemoteFile>) -> Result<PureFile> {
        let mut f = PureFile::from_storage(remote.url().to_string(), remote.clone())?;
        f.remote = Some(remote);
        Ok(f)
    }

    /// The file that the HDF5 object `id` lies in, read by byte range through a
    /// descriptor of its own for the file libhdf5 has open — when libhdf5 opened it
    /// read-only with its default driver and without a user block (`super::ByOffset`: what
    /// libhdf5 sees is then what is on disk); `None` otherwise. `name` names it in errors.
    pub fn of_object(id: hdf5_sys::h5i::hid_t, name: &str) -> Result<Option<PureFile>> {
        let Some(by) = super::ByOffset::of(id) else { return Ok(None) };
        let io = |e: std::io::Error| MarquetError::Io { path: name.to_string(), source: e };
        let storage = local_storage(by.dup().map_err(io)?).map_err(io)?;
        PureFile::from_storage(name.to_string(), storage).map(Some)
    }

    /// The parser over `storage` (`name` names the file in errors). Chunks are located and
    /// decoded here (`PureDataset`), not by the parser's own chunk reader: its chunk cache
    /// is not used.
    fn from_storage(name: String, storage: hdf5_reader::storage::DynStorage) -> Result<PureFile> {
        let opts = OpenOptions::default().with_chunk_cache_bytes(0).with_max_chunk_bytes(MAX_CHUNK_BYTES);
        let f = Hdf5File::from_storage_with_options(storage, opts).map_err(|e| perr(&name, e))?;
        Ok(PureFile {
            f,
            name,
            attrs: Mutex::default(),
            members: Mutex::default(),
            datasets: Mutex::default(),
            #[cfg(feature = "cloud")]
            remote: None,
        })
    }

    /// The byte source of a file opened by URL.
    #[cfg(feature = "cloud")]
    pub fn remote(&self) -> Option<&Arc<crate::remote::RemoteFile>> {
        self.remote.as_ref()
    }

    /// Whether the file `remote` reads is laid out for reading by range, told from the
    /// bytes it holds already (the open's first read) without a request: every object
    /// header among them, and every dataset stored contiguous or in one chunk — the cloud
    /// layout (`marquet::write_cloud_copy`). libhdf5 then reads such a file in a few
    /// requests (`h5::file_open_remote`). At most 100,000 objects are looked at.
    #[cfg(feature = "cloud")]
    pub fn held_layout_is_plain(remote: &Arc<crate::remote::RemoteFile>) -> bool {
        /// The bytes held, and nothing else.
        struct Held(Arc<crate::remote::RemoteFile>);
        impl hdf5_reader::storage::Storage for Held {
            fn len(&self) -> u64 {
                self.0.len()
            }
            fn read_range(&self, offset: u64, len: usize) -> hdf5_reader::error::Result<hdf5_reader::storage::StorageBuffer> {
                if !self.0.holds(offset, len as u64) {
                    return Err(hdf5_reader::error::Error::OffsetOutOfBounds(offset));
                }
                hdf5_reader::storage::Storage::read_range(&*self.0, offset, len)
            }
        }
        let opts = OpenOptions::default().with_chunk_cache_bytes(0).with_max_chunk_bytes(MAX_CHUNK_BYTES);
        let Ok(f) = Hdf5File::from_storage_with_options(Arc::new(Held(remote.clone())), opts) else { return false };
        let file = PureFile { f, name: remote.url().to_string(), attrs: Mutex::default(), members: Mutex::default(), datasets: Mutex::default(), remote: None };
        let (mut todo, mut seen) = (vec!["/".to_string()], 0usize);
        while let Some(g) = todo.pop() {
            let Ok(Some(m)) = file.member_names(&g) else { return false };
            let (groups, datasets) = &*m;
            seen += groups.len() + datasets.len();
            if seen > 100_000 {
                return false;
            }
            for d in datasets {
                let Ok(ds) = file.dataset(&join(&g, d)) else { return false };
                if ds.info.chunk.is_some() && !ds.info.one_chunk() {
                    return false;
                }
            }
            todo.extend(groups.iter().map(|s| join(&g, s)));
        }
        true
    }

    /// The file's name as given to [`PureFile::open`].
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What the object at absolute `path` is, `None` when no link leads there.
    pub fn kind(&self, path: &str) -> Result<Option<ObjKind>> {
        if path == "/" {
            return Ok(Some(ObjKind::Group));
        }
        if lock(&self.datasets).contains_key(path) {
            return Ok(Some(ObjKind::Dataset));
        }
        let (parent, leaf) = split(path);
        let listed = lock(&self.members).get(parent).cloned();
        if let Some(m) = listed {
            let (groups, datasets) = &*m;
            return Ok(if groups.iter().any(|n| n == leaf) {
                Some(ObjKind::Group)
            } else if datasets.iter().any(|n| n == leaf) {
                Some(ObjKind::Dataset)
            } else {
                None
            });
        }
        // Only this object's header is read: listing the parent would read every sibling's,
        // which for a table's column is every column's (a cold query's open cost grew with
        // the table's width, issue #33).
        match self.f.dataset(path) {
            Ok(ds) => {
                // Described now, for the open of it that usually follows; a dataset this
                // path cannot describe is still a dataset (`dataset` reports why).
                if let Ok(d) = self.describe(path, &ds) {
                    lock(&self.datasets).insert(path.to_string(), Arc::new(d));
                }
                return Ok(Some(ObjKind::Dataset));
            }
            Err(e) if !is_not_found(&e) => return Err(perr(path, e)),
            Err(_) => {}
        }
        match self.f.group(path) {
            Ok(_) => Ok(Some(ObjKind::Group)),
            Err(e) if is_not_found(&e) => Ok(None),
            Err(e) => Err(perr(path, e)),
        }
    }

    /// Group `path`'s member names (`None`: not a group), listed once.
    fn member_names(&self, path: &str) -> Result<Option<Arc<Members>>> {
        if let Some(m) = lock(&self.members).get(path) {
            return Ok(Some(m.clone()));
        }
        let g = match self.f.group(path) {
            Ok(g) => g,
            // Not a group, unless the byte source failed (a file read by URL).
            Err(e) => {
                return match perr(path, e) {
                    e @ MarquetError::Remote { .. } => Err(e),
                    _ => Ok(None),
                }
            }
        };
        let m = Arc::new(g.member_names().map_err(|e| perr(path, e))?);
        lock(&self.members).insert(path.to_string(), m.clone());
        Ok(Some(m))
    }

    fn attributes(&self, path: &str) -> Result<Arc<Vec<hdf5_reader::Attribute>>> {
        if let Some(a) = lock(&self.attrs).get(path) {
            return Ok(a.clone());
        }
        let a = Arc::new(match self.kind(path)? {
            Some(ObjKind::Group) => self.f.group(path).and_then(|g| g.attributes()).map_err(|e| perr(path, e))?,
            Some(ObjKind::Dataset) => self.f.dataset(path).map_err(|e| perr(path, e))?.attributes(),
            None => return Err(MarquetError::hdf5(path, "no such object")),
        });
        lock(&self.attrs).insert(path.to_string(), a.clone());
        Ok(a)
    }

    /// Attribute `name` of the object at `path`, as libhdf5's path returns it
    /// ([`super::attr_read`]); `None` when absent.
    pub fn attr(&self, path: &str, name: &str) -> Result<Option<RawAttr>> {
        let all = self.attributes(path)?;
        let Some(a) = all.iter().find(|a| a.name == name) else { return Ok(None) };
        let mut r = raw_attr(a).map_err(|m| MarquetError::Unsupported(format!("{path}: attribute {name}: {m}")))?;
        if r.space == Space::Null && self.attr_null_in_header(path, name) == Some(false) {
            // An empty one-dimensional attribute (e.g. GEOMETRY_TYPES of a column whose
            // rows were all removed), which libhdf5's path reads as such.
            r.space = Space::Simple(vec![0]);
        }
        Ok(Some(r))
    }

    /// Whether attribute `name` of the object at `path` has the null dataspace, read from
    /// its message in the object header; `None` when it is not there (attributes in dense
    /// storage). The parser's attributes give a null dataspace and an empty
    /// one-dimensional one the same shape, `[0]`; without the message the attribute is
    /// taken as null (an unknown CRS, HEP002 §8.1, is the null attribute Marquet writes).
    fn attr_null_in_header(&self, path: &str, name: &str) -> Option<bool> {
        let addr = match self.kind(path).ok()?? {
            ObjKind::Group => self.f.group(path).ok()?.address(),
            ObjKind::Dataset => self.f.dataset(path).ok()?.address(),
        };
        let header = self.f.get_or_parse_header(addr).ok()?;
        header.messages.iter().find_map(|m| match m {
            HdfMessage::Attribute(a) if a.name == name => Some(a.dataspace.dataspace_type == hdf5_reader::messages::dataspace::DataspaceType::Null),
            _ => None,
        })
    }

    /// A reference attribute resolved to the absolute paths of its targets (`None` for a
    /// null reference or a target that cannot be found), with its datatype and shape, as
    /// [`super::attr_read_refs`] returns it. Targets are looked up among the objects two
    /// levels below the object's parent group (a table's columns, list columns' datasets
    /// and indexes: where Marquet's references point).
    pub fn attr_refs(&self, path: &str, name: &str) -> Result<Option<super::RefAttr>> {
        let all = self.attributes(path)?;
        let Some(a) = all.iter().find(|a| a.name == name) else { return Ok(None) };
        let (dtype, size) = match &a.datatype {
            PDtype::Reference { ref_type: hdf5_reader::ReferenceType::Object, size } => (if *size == 8 { Dtype::ObjRef } else { Dtype::StdRef }, *size as usize),
            other => return Err(MarquetError::spec(path, "HEP001 §5", format!("attribute {name} is not an object reference ({other:?})"))),
        };
        let space = space_of(&a.shape);
        let n = space.npoints() as usize;
        let (parent, _) = split(path);
        let mut addrs = Vec::with_capacity(n);
        for i in 0..n {
            let raw = a.raw_data.get(i * size..(i + 1) * size).ok_or_else(|| MarquetError::spec(path, "HEP001 §5", format!("attribute {name}: {} bytes for {n} references", a.raw_data.len())))?;
            addrs.push(self.ref_address(raw, path, name)?);
        }
        let mut out = Vec::with_capacity(n);
        for addr in addrs {
            out.push(match addr {
                Some(a) => self.path_of(parent, a)?,
                None => None,
            });
        }
        Ok(Some((out, dtype, space)))
    }

    /// The object address a stored reference points to (`None`: a null reference).
    /// An `H5T_STD_REF_OBJ` is the address itself; an `H5T_STD_REF` (HDF5 1.12) is its
    /// encoding: type (1 byte, 2 = `H5R_OBJECT2`), flags (1 byte), token size (1 byte)
    /// and the token, which for files of the native VOL is the object address in the
    /// file's offset size. (The `hdf5-reader` crate hands these over as raw bytes.)
    fn ref_address(&self, raw: &[u8], path: &str, name: &str) -> Result<Option<u64>> {
        let bad = |m: String| MarquetError::spec(path, "HEP001 §5", format!("attribute {name}: {m}"));
        if raw.len() == 8 {
            let a = u64::from_le_bytes(raw.try_into().unwrap_or([0; 8]));
            return Ok((a != 0 && a != u64::MAX).then_some(a));
        }
        // HDF5 1.12+ stores an object reference inline (type, flags, token size, token,
        // padding to the datatype's size); a reference it could not store inline is a
        // global-heap object holding the same encoding.
        let heap;
        let enc: &[u8] = if raw.first() == Some(&2) || raw.iter().all(|&b| b == 0) {
            raw
        } else {
            let root = self.f.root_group().map_err(|e| perr(path, e))?;
            heap = root.resolve_vlen_reference_bytes(raw, 1).map_err(|e| perr(path, e))?;
            &heap
        };
        if enc.iter().all(|&b| b == 0) {
            return Ok(None);
        }
        match enc {
            [] => Ok(None),
            [2, flags, tsize, token @ ..] => {
                if flags & 1 != 0 {
                    return Err(MarquetError::Unsupported(format!("{path}: attribute {name}: a reference to another file")));
                }
                let t = token.get(..*tsize as usize).ok_or_else(|| bad(format!("token of {tsize} bytes in {} bytes", token.len())))?;
                if t.is_empty() || t.len() > 8 {
                    return Err(bad(format!("token of {} bytes", t.len())));
                }
                let mut b = [0u8; 8];
                b[..t.len()].copy_from_slice(t);
                Ok(Some(u64::from_le_bytes(b)))
            }
            [t, ..] => Err(MarquetError::Unsupported(format!("{path}: attribute {name}: reference type {t}, not an object reference"))),
        }
    }

    /// Names of the groups directly below group `path`.
    pub fn child_groups(&self, path: &str) -> Result<Vec<String>> {
        Ok(self.member_names(path)?.ok_or_else(|| MarquetError::hdf5(path, "not a group"))?.0.clone())
    }

    /// The path of the object at `address` among the children of group `path` and of its
    /// child groups (where Marquet's references point: a table's columns, a list column's
    /// datasets, `SEARCH_INDEXES`' indexes), by link address without opening the objects;
    /// `None` when it is not there.
    fn path_of(&self, path: &str, address: u64) -> Result<Option<String>> {
        // Where a column's index references point (HEP002 §10: SEARCH_INDEXES), looked at
        // first: resolving the group's own links, and listing its child groups (which reads
        // the header of every member), costs in proportion to a table's columns.
        let indexes = join(path, crate::spec::names::SEARCH_INDEXES);
        if let Ok(g) = self.f.group(&indexes) {
            if let Some(n) = g.child_name_by_address(address).map_err(|e| perr(&indexes, e))? {
                return Ok(Some(join(&indexes, &n)));
            }
        }
        let g = self.f.group(path).map_err(|e| perr(path, e))?;
        if let Some(n) = g.child_name_by_address(address).map_err(|e| perr(path, e))? {
            return Ok(Some(join(path, &n)));
        }
        let Some(m) = self.member_names(path)? else { return Ok(None) };
        for sub in &m.0 {
            let sp = join(path, sub);
            let sg = self.f.group(&sp).map_err(|e| perr(&sp, e))?;
            if let Some(n) = sg.child_name_by_address(address).map_err(|e| perr(&sp, e))? {
                return Ok(Some(join(&sp, &n)));
            }
        }
        Ok(None)
    }

    /// Open the dataset at absolute `path`.
    pub fn dataset(&self, path: &str) -> Result<PureDataset> {
        let cached = lock(&self.datasets).get(path).cloned();
        let d = match cached {
            Some(d) => d,
            None => {
                let ds = self.f.dataset(path).map_err(|e| perr(path, e))?;
                let d = Arc::new(self.describe(path, &ds)?);
                lock(&self.datasets).insert(path.to_string(), d.clone());
                d
            }
        };
        Ok(PureDataset {
            #[cfg(feature = "cloud")]
            remote: self.remote.clone(),
            file: self.f.clone(),
            layout: d.layout.clone(),
            entries: std::sync::OnceLock::new(),
            looked_up: Mutex::default(),
            nodes: Mutex::default(),
            info: d.info.clone(),
            path: path.to_string(),
            readable: d.readable,
        })
    }

    /// The description of dataset `ds` at `path`: its facts, its storage layout, whether
    /// [`PureDataset::read`] can read it.
    fn describe(&self, path: &str, ds: &hdf5_reader::Dataset) -> Result<Described> {
        let header = self.f.get_or_parse_header(ds.address()).map_err(|e| perr(path, e))?;
        let mut filters = Vec::new();
        let mut external = false;
        let mut layout = None;
        for m in &header.messages {
            match m {
                HdfMessage::FilterPipeline(p) => {
                    filters = p.filters.iter().map(|f| filter_of(f.id, &f.client_data)).collect();
                }
                HdfMessage::ExternalFiles(_) => external = true,
                HdfMessage::DataLayout(l) => layout = Some(l.layout.clone()),
                _ => {}
            }
        }
        let dtype = dtype_of(ds.dtype()).map_err(|m| MarquetError::Unsupported(format!("{path}: {m}")))?;
        let fill = ds.fill_value().and_then(|f| f.value.clone()).filter(|v| !v.is_empty() && v.len() == dtype.size());
        let info = DatasetInfo {
            dims: ds.shape().to_vec(),
            maxdims: ds.max_dims().map(|m| m.to_vec()).unwrap_or_else(|| ds.shape().to_vec()),
            chunk: ds.chunks().map(|c| c.iter().map(|&x| x as u64).collect()),
            fill,
            filters,
            committed_type: false,
            dtype,
        };
        let readable = !external
            && info.filters.iter().all(|f| matches!(f, Filter::Shuffle | Filter::Deflate(_) | Filter::Zstd(_) | Filter::Fletcher32 | Filter::Other(codec::FILTER_ZSTD, _)));
        let readable = readable && layout.is_some();
        Ok(Described { info: Arc::new(info), layout, readable })
    }
}

/// What [`PureFile::describe`] finds of a dataset.
#[derive(Debug)]
struct Described {
    info: Arc<DatasetInfo>,
    layout: Option<DataLayout>,
    readable: bool,
}

/// A dataset opened by [`PureFile::dataset`].
pub struct PureDataset {
    file: Hdf5File,
    #[cfg(feature = "cloud")]
    remote: Option<Arc<crate::remote::RemoteFile>>,
    layout: Option<hdf5_reader::messages::layout::DataLayout>,
    /// The chunk index read once, on the first read: every allocated chunk's address,
    /// stored size and filter mask, by chunk number (index kinds other than HDF5's
    /// default v1 B-tree).
    entries: std::sync::OnceLock<std::result::Result<Vec<(u64, ChunkEntry)>, String>>,
    /// Chunks looked up one by one in a v1 B-tree (`None`: not allocated).
    looked_up: Mutex<HashMap<u64, Option<ChunkEntry>>>,
    /// The v1 B-tree nodes parsed so far, by address: chunks of one window share the root
    /// and mostly one leaf node, which are then read and parsed once.
    nodes: Mutex<HashMap<u64, Arc<hdf5_reader::btree_v1::BTreeV1Node>>>,
    /// Its description, as [`super::dataset_info`] gives it.
    pub info: Arc<DatasetInfo>,
    path: String,
    readable: bool,
}

impl std::fmt::Debug for PureDataset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PureDataset").field("path", &self.path).field("info", &self.info).finish()
    }
}

impl PureDataset {
    /// Can [`PureDataset::read`] read this dataset's elements as `mem`? (Stored bytes equal
    /// to `mem`'s, filters this path decodes, no external storage.)
    pub fn can_read(&self, mem: &Dtype) -> bool {
        self.readable && self.info.dtype == *mem && self.info.dims.len() == 1 && super::direct::fixed_layout(mem)
    }

    /// Elements `[start, start + count)` as stored (which [`PureDataset::can_read`] has
    /// checked equals `mem`): the bytes [`super::dataset_read`] returns.
    pub fn read(&self, start: u64, count: u64, mem: &Dtype) -> Result<Vec<u8>> {
        if !self.can_read(mem) {
            return Err(MarquetError::Unsupported(format!("{}: not read by the byte-range path ({:?} as {mem:?}, filters {:?})", self.path, self.info.dtype, self.info.filters)));
        }
        let len = self.info.dims[0];
        let end = start.checked_add(count).filter(|&e| e <= len).ok_or_else(|| {
            MarquetError::spec(&self.path, "HEP001 §6", format!("elements {start}+{count} past the extent {len}"))
        })?;
        if count == 0 {
            return Ok(Vec::new());
        }
        let es = mem.size() as u64;
        let bad = |m: String| MarquetError::spec(&self.path, "HDF5 chunk", m);
        let bytes_of = |n: u64| usize::try_from(n.checked_mul(es).ok_or_else(|| bad("size overflow".into()))?).map_err(|_| bad("size overflow".into()));
        match &self.layout {
            Some(DataLayout::Compact { data }) => {
                let r = (start * es) as usize..(end * es) as usize;
                data.get(r).map(|d| d.to_vec()).ok_or_else(|| bad(format!("compact data of {} bytes for {len} elements", data.len())))
            }
            Some(DataLayout::Contiguous { address, size }) => {
                if self.undefined(*address) {
                    return self.fill(count, es);
                }
                if size.checked_div(es).is_none_or(|n| n < len) {
                    return Err(bad(format!("contiguous storage of {size} bytes for {len} elements")));
                }
                // Never allocate for bytes the file does not hold.
                if address.checked_add(*size).is_none_or(|e| e > self.file.storage().len()) {
                    return Err(bad(format!("contiguous storage of {size} bytes at {address} past the end of the file")));
                }
                let b = self.file.storage().read_range(address + start * es, bytes_of(count)?).map_err(|e| perr(&self.path, e))?;
                let mut out = super::pool::take(b.len());
                out.extend_from_slice(&b);
                Ok(out)
            }
            Some(DataLayout::Chunked { address, dims, .. }) => {
                let c = u64::from(*dims.first().ok_or_else(|| bad("chunk of rank 0".into()))?);
                if c == 0 || c.saturating_mul(es) > MAX_CHUNK_BYTES as u64 {
                    return Err(bad(format!("chunks of {c} elements of {es} bytes (at most {MAX_CHUNK_BYTES} bytes are read)")));
                }
                let v1 = matches!(&self.layout, Some(DataLayout::Chunked { chunk_indexing: None, .. }));
                // From the pool, which `CachedDataset` gives its pieces back to (`super::pool`).
                let mut out = super::pool::take(bytes_of(count)?.min(MAX_CHUNK_BYTES));
                let mut i = start;
                while i < end {
                    let k = i / c;
                    let first = k * c;
                    let hi = (first + c).min(end);
                    let entry = self.entry(*address, dims, v1, k, c)?;
                    match entry {
                        // Stored as it is (no filter applies, the whole chunk stored): only
                        // the elements wanted are read (a small range over a network).
                        Some(e) if self.stored_plain(&e, c * es) => {
                            let b = self.file.storage().read_range(e.address + (i - first) * es, bytes_of(hi - i)?).map_err(|err| perr(&self.path, err))?;
                            out.extend_from_slice(&b);
                        }
                        // The whole chunk wanted (what the chunk caches ask for): decoded
                        // straight onto the output.
                        Some(e) if i == first && hi == first + c => self.decode_onto(&e, bytes_of(c)?, es as usize, first, &mut out)?,
                        entry => {
                            let chunk = match entry {
                                Some(e) => self.decode(&e, bytes_of(c)?, es as usize, first)?,
                                None => self.fill(c, es)?,
                            };
                            out.extend_from_slice(&chunk[((i - first) * es) as usize..((hi - first) * es) as usize]);
                        }
                    }
                    i = hi;
                }
                Ok(out)
            }
            None => Err(MarquetError::Unsupported(format!("{}: no data layout", self.path))),
        }
    }

    /// Whether chunk `e` holds its `bytes` bytes as they are: no filter of the pipeline
    /// applies to it, its stored size is the chunk's, and it lies within the file.
    fn stored_plain(&self, e: &ChunkEntry, bytes: u64) -> bool {
        let unfiltered = self.info.filters.iter().enumerate().all(|(i, _)| i < 32 && e.filter_mask & (1 << i) != 0);
        unfiltered && e.size == bytes && e.address.checked_add(e.size).is_some_and(|end| end <= self.file.storage().len())
    }

    /// The index entry of chunk `k` (chunks of `c` elements; `None`: not allocated).
    fn entry(&self, address: u64, dims: &[u32], v1: bool, k: u64, c: u64) -> Result<Option<ChunkEntry>> {
        let bad = |m: String| remote_or(MarquetError::spec(&self.path, "HDF5 chunk", format!("chunk index: {m}")));
        if v1 {
            return self.v1_lookup(address, k, c).map_err(|e| bad(e.to_string()));
        }
        let entries = self.entries.get_or_init(|| self.chunk_entries(address, dims).map_err(|e| e.to_string()));
        let entries = entries.as_ref().map_err(|e| bad(e.clone()))?;
        Ok(entries.binary_search_by_key(&k, |(n, _)| *n).ok().map(|j| entries[j].1.clone()))
    }

    /// Whether the dataset is read by URL (where [`PureDataset::prefetch`] pays off).
    pub fn is_remote(&self) -> bool {
        #[cfg(feature = "cloud")]
        return self.remote.is_some();
        #[cfg(not(feature = "cloud"))]
        return false;
    }

    /// Fetch at once, in concurrent range requests, the stored bytes of the elements
    /// `(start, count)` of `ranges` of a file read by URL (issue #34), so that the reads
    /// that follow are served from its block cache; nothing for a local file.
    pub fn prefetch(&self, ranges: &[(u64, u64)]) -> Result<()> {
        #[cfg(feature = "cloud")]
        if let Some(r) = &self.remote {
            return r.prefetch(&self.byte_ranges(ranges)?);
        }
        let _ = ranges;
        Ok(())
    }

    /// The file this dataset is read from by URL (`None`: a local file).
    #[cfg(feature = "cloud")]
    pub fn remote(&self) -> Option<&Arc<crate::remote::RemoteFile>> {
        self.remote.as_ref()
    }

    /// The byte ranges `(offset, length)` of the file that reading the elements
    /// `(start, count)` of `ranges` needs, for a [`crate::remote::RemoteFile::prefetch`]
    /// that joins them with other datasets' ranges in one round. For a chunked dataset
    /// whose chunk index is a v1 B-tree, the nodes on the way to the chunks are fetched
    /// first, a level a round. Empty for a local file.
    pub fn byte_ranges(&self, ranges: &[(u64, u64)]) -> Result<Vec<(u64, u64)>> {
        // Filled only for a file read by URL (the `cloud` feature).
        #[cfg_attr(not(feature = "cloud"), allow(unused_mut))]
        let mut bytes = Vec::new();
        #[cfg(feature = "cloud")]
        if let Some(r) = &self.remote {
            let es = self.info.dtype.size() as u64;
            let len = self.info.dims.first().copied().unwrap_or(0);
            match &self.layout {
                Some(DataLayout::Contiguous { address, .. }) if !self.undefined(*address) => {
                    bytes.extend(ranges.iter().filter(|&&(s, n)| n > 0 && s.saturating_add(n) <= len).map(|&(s, n)| (address + s * es, n * es)));
                }
                Some(DataLayout::Chunked { address, dims, chunk_indexing, .. }) => {
                    let c = u64::from(dims.first().copied().unwrap_or(0));
                    if c == 0 {
                        return Ok(bytes);
                    }
                    let wanted: Vec<(u64, u64)> = ranges.iter().filter(|&&(s, n)| n > 0 && s.saturating_add(n) <= len).copied().collect();
                    let mut ks: Vec<u64> = wanted.iter().flat_map(|&(s, n)| s / c..=(s + n - 1) / c).collect();
                    ks.sort_unstable();
                    ks.dedup();
                    if chunk_indexing.is_none() {
                        // The B-tree nodes on the way to every chunk wanted, a level a round.
                        self.v1_prefetch(r, *address, Some(&ks), c);
                    }
                    for k in ks {
                        if let Some(e) = self.entry(*address, dims, chunk_indexing.is_none(), k, c)? {
                            if self.undefined(e.address) || e.address.checked_add(e.size).is_none_or(|end| end > r.len()) {
                                continue;
                            }
                            if self.stored_plain(&e, c * es) {
                                // Stored as it is: only the elements wanted, as `read` reads them.
                                let (lo, hi) = (k * c, (k + 1) * c);
                                for &(s, n) in &wanted {
                                    let (a, b) = (s.max(lo), (s + n).min(hi));
                                    if a < b {
                                        bytes.push((e.address + (a - lo) * es, (b - a) * es));
                                    }
                                }
                            } else {
                                bytes.push((e.address, e.size));
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        let _ = ranges;
        Ok(bytes)
    }

    fn undefined(&self, address: u64) -> bool {
        hdf5_reader::io::Cursor::is_undefined_offset(address, self.file.superblock().offset_size)
    }

    /// `n` elements of the fill value (zeros without one), as HDF5 returns unallocated
    /// storage.
    fn fill(&self, n: u64, es: u64) -> Result<Vec<u8>> {
        let total = usize::try_from(n * es).map_err(|_| MarquetError::spec(&self.path, "HDF5 chunk", "size overflow"))?;
        Ok(match &self.info.fill {
            Some(f) if f.len() as u64 == es => f.iter().copied().cycle().take(total).collect(),
            _ => vec![0; total],
        })
    }

    /// Walk the chunk index once (any of HDF5's six kinds, parsed by `hdf5-reader`): the
    /// allocated chunks by chunk number, checked to lie on the chunk grid; chunks past the
    /// extent (HDF5 keeps them after a shrink) are dropped as libhdf5 ignores them.
    fn chunk_entries(&self, address: u64, dims: &[u32]) -> std::result::Result<Vec<(u64, ChunkEntry)>, hdf5_reader::error::Error> {
        use hdf5_reader::messages::layout::ChunkIndexing;
        let Some(DataLayout::Chunked { chunk_indexing, .. }) = &self.layout else { return Ok(Vec::new()) };
        if self.undefined(address) {
            return Ok(Vec::new());
        }
        let st = self.file.storage();
        let sb = self.file.superblock();
        let (os, ls) = (sb.offset_size, sb.length_size);
        let shape = &self.info.dims;
        let raw = match chunk_indexing {
            // v1 B-trees (HDF5's default) are searched chunk by chunk: `v1_lookup`.
            None => Vec::new(),
            Some(ChunkIndexing::SingleChunk { filtered_size, filters }) => vec![hdf5_reader::chunk_index::single_chunk_entry(address, *filtered_size, *filters, 1)],
            Some(ChunkIndexing::BTreeV2) => hdf5_reader::chunk_index::collect_v2_chunk_entries_storage(st, address, os, ls, 1, dims, None)?,
            Some(ChunkIndexing::Implicit) => hdf5_reader::chunk_index::collect_implicit_chunk_entries(address, shape, dims, self.info.dtype.size(), None, st.len())?,
            Some(ChunkIndexing::FixedArray { .. }) => hdf5_reader::fixed_array::collect_fixed_array_chunk_entries_storage(st, address, os, ls, shape, dims, None)?,
            Some(ChunkIndexing::ExtensibleArray { .. }) => {
                hdf5_reader::extensible_array::collect_extensible_array_chunk_entries_storage(st, address, os, ls, shape, Some(&self.info.maxdims), dims, None)?
            }
        };
        let c = u64::from(dims[0]);
        let len = shape.first().copied().unwrap_or(0);
        let mut out = Vec::with_capacity(raw.len());
        for e in raw {
            let o = *e.offsets.first().ok_or_else(|| hdf5_reader::error::Error::InvalidData("chunk entry without offsets".into()))?;
            if o % c != 0 {
                return Err(hdf5_reader::error::Error::InvalidData(format!("chunk at element {o} is off the chunk grid of {c}")));
            }
            if o >= len {
                continue;
            }
            out.push((o / c, e));
        }
        out.sort_by_key(|(k, _)| *k);
        if out.windows(2).any(|w| w[0].0 == w[1].0) {
            return Err(hdf5_reader::error::Error::InvalidData("two chunk index entries for one chunk".into()));
        }
        Ok(out)
    }

    /// Fetch, a tree level per round of concurrent requests, the v1 B-tree nodes at `root`
    /// that lead to the chunks `ks` (chunks of `c` elements; `None`: every node), so that
    /// the lookups which follow ([`PureDataset::v1_lookup`]) are served from the cache of
    /// a file read by URL (issue #34). Best effort: what cannot be fetched or parsed is left
    /// to the lookup, which reports it.
    #[cfg(feature = "cloud")]
    fn v1_prefetch(&self, r: &crate::remote::RemoteFile, root: u64, ks: Option<&[u64]>, c: u64) {
        use hdf5_reader::btree_v1::{BTreeV1Key, BTreeV1Node};
        // A rank-1 chunk node of HDF5's default 64 entries: 24 + 65 × 24 + 64 × 8 bytes.
        const NODE_BYTES: u64 = 2096;
        let st = self.file.storage();
        let sb = self.file.superblock();
        let (os, ls) = (sb.offset_size, sb.length_size);
        let offset_of = |key: &BTreeV1Key| match key {
            BTreeV1Key::RawData { offsets, .. } => offsets.first().copied(),
            BTreeV1Key::Group { .. } => None,
        };
        let mut level = vec![root];
        for _ in 0..64 {
            level.retain(|&a| !self.undefined(a) && a < r.len());
            if level.is_empty() || r.prefetch(&level.iter().map(|&a| (a, NODE_BYTES.min(r.len() - a))).collect::<Vec<_>>()).is_err() {
                return;
            }
            let mut next = Vec::new();
            for &addr in &level {
                let header_len = 8 + 2 * usize::from(os);
                let Ok(head) = st.read_range(addr, header_len) else { return };
                let used = usize::from(u16::from_le_bytes([head.get(6).copied().unwrap_or(0), head.get(7).copied().unwrap_or(0)]));
                let node_len = header_len + (used + 1) * 24 + used * usize::from(os);
                let Ok(bytes) = st.read_range(addr, node_len) else { return };
                let Ok(node) = BTreeV1Node::parse(&mut hdf5_reader::io::Cursor::new(&bytes), os, ls, Some(1)) else { return };
                if node.level == 0 || node.keys.len() != node.children.len() + 1 {
                    continue;
                }
                for (i, child) in node.children.iter().enumerate() {
                    let wanted = match ks {
                        None => true,
                        Some(ks) => {
                            let lo = offset_of(&node.keys[i]).unwrap_or(0);
                            let hi = if i + 1 < node.children.len() { offset_of(&node.keys[i + 1]).unwrap_or(u64::MAX) } else { u64::MAX };
                            ks.iter().any(|&k| (lo..hi).contains(&(k * c)))
                        }
                    };
                    if wanted {
                        next.push(*child);
                    }
                }
            }
            next.sort_unstable();
            next.dedup();
            level = next;
        }
    }

    /// The entry of chunk `k` (chunk length `c`) in the v1 B-tree at `root`, found by
    /// descending from the root through the nodes whose key range holds it (HDF5's own
    /// lookup): a window reads a few nodes, not the whole index. The nodes are parsed by
    /// `hdf5-reader` (`BTreeV1Node::parse`); the crate walks whole trees only, so the
    /// descent is ours. Bounded: at most 64 levels, each node read once per lookup.
    fn v1_lookup(&self, root: u64, k: u64, c: u64) -> std::result::Result<Option<ChunkEntry>, hdf5_reader::error::Error> {
        use hdf5_reader::btree_v1::{BTreeV1Key, BTreeV1Node};
        use hdf5_reader::error::Error;
        if let Some(e) = lock(&self.looked_up).get(&k) {
            return Ok(e.clone());
        }
        let st = self.file.storage();
        let sb = self.file.superblock();
        let (os, ls) = (sb.offset_size, sb.length_size);
        let target = k * c;
        let offset_of = |key: &BTreeV1Key| match key {
            BTreeV1Key::RawData { offsets, .. } => offsets.first().copied().ok_or_else(|| Error::InvalidData("chunk key without offsets".into())),
            BTreeV1Key::Group { .. } => Err(Error::InvalidData("group key in a chunk B-tree".into())),
        };
        let mut addr = root;
        let mut found = None;
        for _ in 0..64 {
            if self.undefined(addr) {
                break;
            }
            let cached = lock(&self.nodes).get(&addr).cloned();
            let node = match cached {
                Some(n) => n,
                None => {
                    // Header: signature, type, level, entries used, two sibling addresses;
                    // then entries used + 1 keys of 8 + 2 × 8 bytes (rank 1) and as many
                    // children.
                    let header_len = 8 + 2 * usize::from(os);
                    let head = st.read_range(addr, header_len)?;
                    let used = usize::from(u16::from_le_bytes([head.get(6).copied().unwrap_or(0), head.get(7).copied().unwrap_or(0)]));
                    let node_len = header_len + (used + 1) * 24 + used * usize::from(os);
                    let bytes = st.read_range(addr, node_len)?;
                    let node = BTreeV1Node::parse(&mut hdf5_reader::io::Cursor::new(&bytes), os, ls, Some(1))?;
                    if node.node_type != 1 || node.children.len() != usize::from(node.entries_used) || node.keys.len() != node.children.len() + 1 {
                        return Err(Error::InvalidData(format!("malformed chunk B-tree node at {addr:#x}")));
                    }
                    let node = Arc::new(node);
                    lock(&self.nodes).insert(addr, node.clone());
                    node
                }
            };
            // Child i holds the chunks from key i up to key i + 1.
            let mut pick = None;
            for (i, child) in node.children.iter().enumerate() {
                let lo = offset_of(&node.keys[i])?;
                if node.level == 0 {
                    if lo == target {
                        if let BTreeV1Key::RawData { chunk_size, filter_mask, .. } = &node.keys[i] {
                            found = Some(ChunkEntry { address: *child, size: u64::from(*chunk_size), filter_mask: *filter_mask, offsets: vec![lo] });
                        }
                        break;
                    }
                } else if lo <= target && (i + 1 == node.children.len() || target < offset_of(&node.keys[i + 1])?) {
                    pick = Some(*child);
                    break;
                }
            }
            match (node.level, pick) {
                (0, _) | (_, None) => break,
                (_, Some(next)) => addr = next,
            }
        }
        lock(&self.looked_up).insert(k, found.clone());
        Ok(found)
    }

    /// [`PureDataset::decode`] appended to `out`: the usual pipelines (deflate or zstd,
    /// after a shuffle or not) decode into `out` itself ([`codec::decode_into`]: no zeroed
    /// buffer per stage and no copy; a cold window's decode buffers were a tenth of its
    /// instructions), the others through `decode`. On an error `out` is as it was.
    fn decode_onto(&self, e: &ChunkEntry, expected: usize, es: usize, first: u64, out: &mut Vec<u8>) -> Result<()> {
        // The pipeline as the codec's stages (levels do not matter to a decoder); a filter
        // it does not name (Fletcher-32, …) goes through `decode`. The chunk's filter mask
        // is applied by `decode_into`.
        let stages: Option<Vec<codec::Stage>> = self
            .info
            .filters
            .iter()
            .map(|f| match f {
                Filter::Shuffle => Some(codec::Stage::Shuffle { elem: es }),
                Filter::Deflate(_) => Some(codec::Stage::Deflate { level: 0 }),
                Filter::Zstd(_) | Filter::Other(codec::FILTER_ZSTD, _) => Some(codec::Stage::Zstd { level: 0 }),
                _ => None,
            })
            .collect();
        let Some(stages) = stages else {
            out.extend_from_slice(&self.decode(e, expected, es, first)?);
            return Ok(());
        };
        let stored = self.stored(e, expected, first)?;
        let at = out.len();
        out.resize(at + expected, 0);
        codec::decode_into(&stages, e.filter_mask, &stored, &mut out[at..]).map_err(|m| {
            out.truncate(at);
            MarquetError::spec(&self.path, "HDF5 chunk", format!("chunk at element {first}: {m}"))
        })
    }

    /// The stored bytes of chunk `e` (of `expected` bytes decoded), refused when far larger
    /// than any encoding of that chunk.
    fn stored(&self, e: &ChunkEntry, expected: usize, first: u64) -> Result<hdf5_reader::storage::StorageBuffer> {
        let bad = |m: String| MarquetError::spec(&self.path, "HDF5 chunk", format!("chunk at element {first}: {m}"));
        let limit = expected.max(1 << 16) as u64 * 2 + (1 << 20);
        if e.size > limit {
            return Err(bad(format!("{} stored bytes for a chunk of {expected}", e.size)));
        }
        self.file.storage().read_range(e.address, e.size as usize).map_err(|err| remote_or(bad(err.to_string())))
    }

    /// Read a stored chunk and undo its filters (the project's codecs; Fletcher-32 verified
    /// by `hdf5-reader`'s implementation), checking it decodes to exactly `expected` bytes.
    fn decode(&self, e: &ChunkEntry, expected: usize, es: usize, first: u64) -> Result<Vec<u8>> {
        let bad = |m: String| MarquetError::spec(&self.path, "HDF5 chunk", format!("chunk at element {first}: {m}"));
        let stored = self.stored(e, expected, first)?;
        let mut cur: Option<Vec<u8>> = None;
        for (i, f) in self.info.filters.iter().enumerate().rev() {
            if i < 32 && e.filter_mask & (1 << i) != 0 {
                continue;
            }
            let input: &[u8] = cur.as_deref().unwrap_or(&stored);
            cur = Some(match f {
                Filter::Shuffle => codec::unshuffle(input, es),
                Filter::Deflate(_) => codec::inflate(input, expected).map_err(&bad)?,
                Filter::Zstd(_) | Filter::Other(codec::FILTER_ZSTD, _) => codec::zstd_decompress(input, expected).map_err(&bad)?,
                Filter::Fletcher32 => hdf5_reader::filters::fletcher32::verify_and_strip(input).map_err(|err| bad(err.to_string()))?,
                other => return Err(MarquetError::Unsupported(format!("{}: filter {other:?}", self.path))),
            });
        }
        let out = cur.unwrap_or_else(|| stored.to_vec());
        if out.len() != expected {
            return Err(bad(format!("decodes to {} bytes, expected {expected}", out.len())));
        }
        Ok(out)
    }
}

fn filter_of(id: u16, cd: &[u32]) -> Filter {
    match (id as i32, cd) {
        (codec::FILTER_SHUFFLE, _) => Filter::Shuffle,
        (codec::FILTER_DEFLATE, [l]) => Filter::Deflate(*l),
        (codec::FILTER_FLETCHER32, _) => Filter::Fletcher32,
        (codec::FILTER_ZSTD, [l]) => Filter::Zstd(*l),
        (i, cd) => Filter::Other(i, cd.to_vec()),
    }
}

fn split(path: &str) -> (&str, &str) {
    match path.trim_end_matches('/').rsplit_once('/') {
        Some(("", leaf)) => ("/", leaf),
        Some((p, leaf)) => (p, leaf),
        None => ("/", path),
    }
}

fn join(parent: &str, name: &str) -> String {
    if parent.ends_with('/') {
        format!("{parent}{name}")
    } else {
        format!("{parent}/{name}")
    }
}

fn space_of(shape: &[u64]) -> Space {
    match shape {
        [] => Space::Scalar,
        [0] => Space::Null,
        s => Space::Simple(s.to_vec()),
    }
}

/// The [`Dtype`] libhdf5's path reports for a stored datatype.
fn dtype_of(d: &PDtype) -> std::result::Result<Dtype, String> {
    use hdf5_reader::{ByteOrder, StringEncoding, StringPadding, StringSize};
    Ok(match d {
        PDtype::FixedPoint { size, signed, byte_order } => Dtype::Int { size: *size as usize, signed: *signed, big_endian: *byte_order == ByteOrder::BigEndian },
        PDtype::FloatingPoint { size, byte_order } => Dtype::Float { size: *size as usize, big_endian: *byte_order == ByteOrder::BigEndian },
        PDtype::String { size: StringSize::Fixed(n), encoding, padding } => Dtype::FixedString {
            size: *n as usize,
            utf8: *encoding == StringEncoding::Utf8,
            nullterm: *padding == StringPadding::NullTerminate,
            spacepad: *padding == StringPadding::SpacePad,
        },
        PDtype::String { size: StringSize::Variable, encoding, .. } => Dtype::VarString { utf8: *encoding == StringEncoding::Utf8 },
        PDtype::VarLen { kind: hdf5_reader::VarLenKind::String, encoding, .. } => Dtype::VarString { utf8: *encoding == StringEncoding::Utf8 },
        PDtype::Compound { size, fields } => {
            let mut fs = Vec::with_capacity(fields.len());
            for f in fields {
                fs.push(Field { name: f.name.clone(), offset: f.byte_offset as usize, dtype: dtype_of(&f.datatype)? });
            }
            fs.sort_by_key(|f| f.offset);
            Dtype::Compound { size: *size as usize, fields: fs }
        }
        PDtype::Enum { base, members } => {
            let b = dtype_of(base)?;
            let Dtype::Int { size, signed, big_endian } = b else { return Err(format!("enum of {b:?}")) };
            let mut ms = Vec::with_capacity(members.len());
            for m in members {
                let v = m.value.get(..size).ok_or("enum member value too short")?;
                let mut le = v.to_vec();
                if big_endian {
                    le.reverse();
                }
                ms.push((m.name.clone(), super::int_from_bytes(&le, signed, false)));
            }
            Dtype::Enum { base: Box::new(b), members: ms }
        }
        PDtype::Opaque { size, tag } => Dtype::Opaque { size: *size as usize, tag: tag.clone() },
        PDtype::Reference { ref_type: hdf5_reader::ReferenceType::Object, size: 8 } => Dtype::ObjRef,
        PDtype::Reference { .. } => Dtype::StdRef,
        other => return Err(format!("datatype {other:?} is not read by the byte-range path")),
    })
}

/// An attribute as [`super::attr_read`] returns it: elements little-endian, strings
/// decoded with padding and NULs stripped.
fn raw_attr(a: &hdf5_reader::Attribute) -> std::result::Result<RawAttr, String> {
    let dtype = dtype_of(&a.datatype)?;
    let space = space_of(&a.shape);
    let n = space.npoints() as usize;
    let mut strings = Vec::new();
    let mut data = Vec::new();
    match &dtype {
        Dtype::VarString { .. } => {
            strings = match &a.decoded_strings {
                Some(s) => s.clone(),
                None if n == 1 => vec![String::from_utf8_lossy(&a.raw_data).trim_end_matches('\0').to_string()],
                None => return Err("variable-length strings not resolved".into()),
            };
        }
        Dtype::FixedString { size, .. } => {
            let size = *size;
            for i in 0..n {
                let c = a.raw_data.get(i * size..(i + 1) * size).ok_or("string attribute shorter than its shape")?;
                strings.push(super::fixed_str(c));
            }
            data = a.raw_data.clone();
        }
        d => {
            let es = d.size();
            let want = es.checked_mul(n).ok_or("attribute too large")?;
            let raw = a.raw_data.get(..want).ok_or_else(|| format!("{} bytes for {n} elements of {es}", a.raw_data.len()))?;
            data = to_le(d, raw);
        }
    }
    Ok(RawAttr { dtype, space, data, strings })
}

/// Stored elements of `d` in little-endian order.
fn to_le(d: &Dtype, raw: &[u8]) -> Vec<u8> {
    if super::direct::fixed_layout(d) {
        return raw.to_vec();
    }
    let mut out = raw.to_vec();
    let es = d.size().max(1);
    for e in out.chunks_exact_mut(es) {
        swap_elem(d, e);
    }
    out
}

fn swap_elem(d: &Dtype, e: &mut [u8]) {
    match d {
        Dtype::Int { size, big_endian: true, .. } | Dtype::Float { size, big_endian: true } => {
            if let Some(x) = e.get_mut(..*size) {
                x.reverse();
            }
        }
        Dtype::Enum { base, .. } => swap_elem(base, e),
        Dtype::Compound { fields, .. } => {
            for f in fields {
                if let Some(x) = e.get_mut(f.offset..f.offset + f.dtype.size()) {
                    swap_elem(&f.dtype, x);
                }
            }
        }
        _ => {}
    }
}
