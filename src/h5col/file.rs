//! HDF5 files holding H5Col tables (HEP001 §3): open, create, find the tables in a file.


use crate::error::{MarquetError, Result};
use crate::h5::{self};
use crate::spec::names;

use super::*;

/// An open file (read-only or read-write).
pub struct File {
    pub(super) inner: hdf5::File,
    pub(super) path: String,
    /// Opened read-only by [`File::open`] or [`File::open_url`] from `path`, so a reader
    /// of that path by byte range sees what libhdf5 sees ([`File::byte_range_source`]).
    pub(super) by_path_read_only: bool,
}

impl Drop for File {
    fn drop(&mut self) {
        // The close's flush gets its space reserved, or (a full disk, or a handle sealed by
        // a failed flush) drops the metadata instead of writing it half (issue #38,
        // docs/FAULTS.md "A full disk inside a flush").
        h5::prepare_close(self.inner.id());
    }
}

/// Whether `p` is a URL the `cloud` feature reads.
fn is_url(p: &str) -> bool {
    #[cfg(feature = "cloud")]
    return crate::remote::is_url(p);
    #[cfg(not(feature = "cloud"))]
    {
        let _ = p;
        false
    }
}

impl File {
    /// Create (truncate) a file.
    pub fn create(path: impl AsRef<std::path::Path>) -> Result<File> {
        let p = path.as_ref().display().to_string();
        let inner = h5::file_create(&p)?;
        Ok(File { inner, path: p, by_path_read_only: false })
    }
    /// A file in memory only, never written to a disk (HDF5's core driver without a backing store):
    /// for table definitions that are compared, not kept.
    pub fn create_in_memory(name: &str) -> Result<File> {
        let inner = h5::file_create_in_memory(name)?;
        Ok(File { inner, path: name.to_string(), by_path_read_only: false })
    }
    /// Open, read-only, a file whose bytes are in memory (`name` names it in errors).
    pub fn open_image(name: &str, bytes: &[u8]) -> Result<File> {
        let inner = h5::file_open_image(name, bytes)?;
        Ok(File { inner, path: name.to_string(), by_path_read_only: false })
    }
    /// Open, read-only, the file at `url` (`http(s)://`, `s3://`, `gs://`, `az://`,
    /// `file://`; issue #34). A file of at least
    /// [`crate::remote::RemoteOptions::whole_below`] bytes (256 MiB) is read by range
    /// through a block cache: each object and chunk libhdf5 asks for, with a read-ahead
    /// that grows while reads follow each other in the file (a conversion then reads it in
    /// few large requests); a smaller one is fetched whole, in concurrent requests. Window
    /// queries read by range without libhdf5: [`crate::SpatialReader::open_url`].
    #[cfg(feature = "cloud")]
    pub fn open_url(url: &str) -> Result<File> {
        File::open_remote(crate::remote::RemoteFile::open(url)?)
    }
    /// [`File::open_url`] with options (timeouts, the cache, `whole_below`, the store's
    /// settings).
    #[cfg(feature = "cloud")]
    pub fn open_url_with(url: &str, opts: &crate::remote::RemoteOptions) -> Result<File> {
        File::open_remote(crate::remote::RemoteFile::open_with(url, opts)?)
    }
    /// [`File::open_url`] of an object already opened (its block cache shared).
    #[cfg(feature = "cloud")]
    pub(crate) fn open_remote(r: std::sync::Arc<crate::remote::RemoteFile>) -> Result<File> {
        let path = r.url().to_string();
        Ok(File { inner: h5::file_open_remote(r)?, path, by_path_read_only: true })
    }
    /// Open read-only. A URL (`http(s)://`, `s3://`, `gs://`, `az://`, `file://`; feature
    /// `cloud`) is read by range: [`File::open_url`].
    pub fn open(path: impl AsRef<std::path::Path>) -> Result<File> {
        let p = path.as_ref().display().to_string();
        if !path.as_ref().exists() && !is_url(&p) {
            return Err(MarquetError::Io {
                path: p,
                source: std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"),
            });
        }
        let inner = h5::file_open(path.as_ref(), false)?;
        Ok(File { inner, path: p, by_path_read_only: true })
    }
    /// Open read-write. An in-place update that a killed writer left half done is rolled
    /// back first (its undo record is replayed; docs/FAULTS.md F10).
    pub fn open_rw(path: impl AsRef<std::path::Path>) -> Result<File> {
        let p = path.as_ref().display().to_string();
        let inner = h5::file_open(path.as_ref(), true)?;
        let f = File { inner, path: p, by_path_read_only: false };
        super::undo::recover(&f)?;
        Ok(f)
    }
    /// The file of a file or group identifier that the caller opened with the same HDF5
    /// library this crate links (only meaningful without the `static-hdf5` feature: a
    /// statically linked HDF5 has an id table of its own). Returns the file, which holds
    /// its own reference (the caller still closes `id`), and the group's path (`"/"` for a
    /// file identifier). See `h5::file_from_caller_id`.
    pub fn from_caller_id(id: hdf5_sys::h5i::hid_t) -> Result<(File, String)> {
        let (inner, group) = h5::file_from_caller_id(id)?;
        let path = inner.filename();
        Ok((File { inner, path, by_path_read_only: false }, group))
    }
    /// The file's size in bytes (HDF5's view of it: the end of the file its driver holds;
    /// also for a file read by URL into memory).
    pub fn size(&self) -> u64 {
        self.inner.size()
    }
    /// The file's name on disk.
    pub fn filename(&self) -> &str {
        &self.path
    }
    /// The path or URL a byte-range reader can read this file from with the same result
    /// as libhdf5: `Some` for a file opened read-only from a path or URL ([`File::open`],
    /// [`File::open_url`]); `None` for a file open for writing (its last changes may still
    /// sit in libhdf5's caches), one handed over by a caller's identifier, or one in
    /// memory.
    pub fn byte_range_source(&self) -> Option<&str> {
        self.by_path_read_only.then_some(self.path.as_str())
    }
    internal_pub! {
        /// The raw HDF5 file id (for interop).
        fn id(&self) -> hdf5_sys::h5i::hid_t {
            self.inner.id()
        }
    }
    /// Create a new table group at `path` (intermediate groups are created).
    pub fn create_table(&self, path: &str) -> Result<Table> {
        Table::create_at(self.inner.id(), path)
    }
    /// Open the table group at `path`.
    pub fn table(&self, path: &str) -> Result<Table> {
        Table::open_at(self.inner.id(), path)
    }
    /// Paths of every table group in the file (a traversal, HEP001 §1.3, that does not
    /// search below a table group: no table may lie inside one, §7.6).
    pub fn tables(&self) -> Result<Vec<String>> {
        let mut out = Vec::new();
        let root = self.inner.group("/").map_err(|e| MarquetError::hdf5("/", e))?;
        find_tables(&root, "/", &mut out, 0)?;
        Ok(out)
    }
    /// Flush to disk.
    pub fn flush(&self) -> Result<()> {
        h5::flush(self.inner.id())
    }
}

fn find_tables(g: &hdf5::Group, path: &str, out: &mut Vec<String>, depth: usize) -> Result<()> {
    if depth > 64 {
        return Ok(());
    }
    // A table group is not searched further (HEP001 §7.6: no table lies inside one; the
    // validator's discovery stops there too).
    if is_table_group(g.id())? {
        out.push(path.to_string());
        return Ok(());
    }
    let names = g.member_names().map_err(|e| MarquetError::hdf5(path, e))?;
    for n in names {
        if let Ok(child) = g.group(&n) {
            let p = if path == "/" { format!("/{n}") } else { format!("{path}/{n}") };
            find_tables(&child, &p, out, depth + 1)?;
        }
    }
    Ok(())
}

internal_pub! {
    /// Does the group carry `CLASS == "COLUMN_TABLE"` (leniently read, HEP001 §7.1)?
    fn is_table_group(id: hdf5_sys::h5i::hid_t) -> Result<bool> {
        Ok(read_token(id, names::CLASS)?.as_deref() == Some(names::COLUMN_TABLE))
    }
}

internal_pub! {
    /// Read a string token attribute leniently (any string storage, R3). `Ok(None)` when absent
    /// or not a string.
    fn read_token(id: hdf5_sys::h5i::hid_t, name: &str) -> Result<Option<String>> {
        Ok(h5::attr_read(id, name)?.and_then(|a| a.as_str().map(|s| s.trim_end_matches(' ').to_string())))
    }
}

/// Parse "MAJOR.MINOR[.PATCH]" numerically.
pub fn parse_version(v: &str) -> Option<(u64, u64, u64)> {
    let mut it = v.trim().split('.');
    let major = it.next()?.parse().ok()?;
    let minor = it.next().map(|s| s.parse().ok()).unwrap_or(Some(0))?;
    let patch = it.next().map(|s| s.parse().ok()).unwrap_or(Some(0))?;
    if it.next().is_some() {
        return None;
    }
    Some((major, minor, patch))
}


pub(crate) fn object_is_group(id: hdf5_sys::h5i::hid_t) -> bool {
    h5::is_group(id)
}

impl File {
    /// Unlink the table group at `path` (and everything below it) — for undoing a table a
    /// failed import created. The file's space is not reclaimed (HDF5; `h5repack` does).
    pub fn remove_table(&self, path: &str) -> Result<()> {
        let p = normalize_table_path(path);
        if p == "/" {
            return Err(MarquetError::InvalidArgument("the root group cannot be removed".into()));
        }
        self.table(&p)?;
        h5::link_delete(self.id(), &p)?;
        h5::flush(self.id())
    }
}

impl File {
    /// Could tables be published at `paths` ([`File::copy_tables_from`])? Refused, naming the
    /// rule, when a readable object is at one of them or a group on the way is a table
    /// (HEP001 §7.6); a link whose object cannot be read is no obstacle (the copy replaces
    /// it). Run before any work by `convert` into an existing file.
    pub fn copy_tables_check(&self, paths: &[String]) -> Result<()> {
        for p in paths.iter().map(|p| normalize_table_path(p)) {
            let prefix = |e: MarquetError| match e {
                MarquetError::InvalidArgument(m) => MarquetError::InvalidArgument(format!("{}: {m}", self.path)),
                e => e,
            };
            super::table::check_no_table_above(self.id(), &p).map_err(prefix)?;
            if p != "/" && h5::path_exists(self.id(), &p)? && h5::object_open(self.id(), &p).is_ok() {
                return Err(self.new_table_path_error(&p));
            }
        }
        Ok(())
    }

    /// The error for a new table at `p`, where a readable object already is.
    fn new_table_path_error(&self, p: &str) -> MarquetError {
        MarquetError::InvalidArgument(format!("{}: {}", self.path, super::table::path_taken(self.id(), p)))
    }
}

impl File {
    /// Copy the tables at `paths` of `src` (each with every column and index below it)
    /// into this file at the same paths (`H5Ocopy`: chunks are copied as stored), flushed,
    /// then linked and flushed again: a kill leaves the old state or the new one. Refused, before anything is
    /// copied, when this file already has an object at one of the paths. Used to publish
    /// tables staged in a file of their own (issue #19, docs/FAULTS.md F2).
    pub fn copy_tables_from(&self, src: &File, paths: &[String]) -> Result<()> {
        self.copy_tables_check(paths)?;
        let paths: Vec<String> = paths.iter().map(|p| normalize_table_path(p)).collect();
        for p in &paths {
            src.table(p)?;
            if p == "/" {
                return Err(MarquetError::InvalidArgument("the root group cannot be copied as a table".into()));
            }
            if h5::path_exists(self.id(), p)? {
                if h5::object_open(self.id(), p).is_ok() {
                    return Err(self.new_table_path_error(p));
                }
                // A link whose object cannot be read: a copy killed inside its final flush
                // wrote the parent's link before the object it names (HDF5 writes
                // metadata in no fixed order, L9). Nothing is there to lose.
                h5::link_delete(self.id(), p)?;
            }
        }
        // Two steps, each ended by a flush (docs/FAULTS.md F2). HDF5 writes dirty metadata
        // in address order, not in the order it was made: a group header changed in place
        // (the root's, low in the file) can reach the disk before the new objects it links
        // (at the end), and a kill between the two left a link to an object past the end of
        // the file (issue #19's fault injection, session 23). So the copies are made below
        // groups no link names, and flushed: on disk, nothing reachable has changed. Only
        // then are they linked, each by one move that writes headers of objects already on
        // disk.
        // (holder, name below it, where it is linked); tables under one new group share
        // its holder (`/a/x` and `/a/y` with no `/a` yet: one holder, `a/x` and `a/y`).
        let mut staged: Vec<(h5::Hid, String, String)> = Vec::with_capacity(paths.len());
        for p in &paths {
            // The first group on the way that does not exist yet (or the table itself) is
            // what gets linked: `/a/b/t` with `/a` present copies `b/t` below the holder.
            let parts: Vec<&str> = p.split('/').filter(|s| !s.is_empty()).collect();
            let mut top = 1;
            while top < parts.len() && h5::path_exists(self.id(), &format!("/{}", parts[..top].join("/")))? {
                top += 1;
            }
            let at = format!("/{}", parts[..top].join("/"));
            let below = parts[top - 1..].join("/");
            match staged.iter().find(|s| s.2 == at) {
                Some((holder, _, _)) => h5::object_copy(src.id(), p, holder.id(), &below)?,
                None => {
                    let holder = h5::group_create_anon(self.id())?;
                    h5::object_copy(src.id(), p, holder.id(), &below)?;
                    staged.push((holder, parts[top - 1].to_string(), at));
                }
            }
        }
        h5::flush(self.id())?;
        for (holder, name, at) in &staged {
            h5::link_move_between(holder.id(), name, self.id(), at)?;
        }
        drop(staged);
        h5::flush(self.id())
    }
}

/// The canonical form of a table path as a user may type it (issue #19): one leading `/`,
/// no repeated or trailing `/` — `//countries`, `countries` and `/countries/` all name
/// `/countries` (HDF5 resolves them alike; the validator and the table list compare paths
/// as strings).
pub fn normalize_table_path(p: &str) -> String {
    let parts: Vec<&str> = p.split('/').filter(|s| !s.is_empty()).collect();
    format!("/{}", parts.join("/"))
}

#[cfg(test)]
mod normalize_tests {
    #[test]
    fn table_paths_normalize() {
        for (a, b) in [("//countries", "/countries"), ("/countries/", "/countries"), ("countries", "/countries"), ("/a//b/", "/a/b"), ("/", "/")] {
            assert_eq!(super::normalize_table_path(a), b);
        }
    }
}
