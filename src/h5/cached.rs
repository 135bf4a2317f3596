//! A rank-1 dataset read through a cache of decoded chunks owned by the reader (issue #20).
//!
//! [`CachedDataset`] is what a long-lived reader (the warm spatial reader of
//! `crate::query::reader`) holds instead of a dataset id: the dataset's description is
//! read once, when it is opened, and every later read is served from decoded chunks kept
//! in the reader's own cache, so a read that hits the cache makes no HDF5 call at all.
//! A miss reads exactly one whole chunk (the dataset's chunk length, or
//! [`CONTIGUOUS_PIECE_BYTES`] for a contiguous dataset) through [`super::dataset_read`],
//! which decodes it with the parallel codecs of [`super::direct`] where it can and through
//! HDF5's pipeline otherwise; the bytes are exactly the ones `dataset_read` returns.
//!
//! The cache describes the dataset as it was when it was opened: its extent is fixed then,
//! and reads past it are refused. [`CachedDataset::generation`] is
//! `super::write_generation` at that moment; an owner that must see later changes made
//! through this process compares it with the current value and reopens (the spatial reader
//! does so before every query). Memory is bounded by the budget given at open (at least one
//! piece is kept).
#![forbid(unsafe_code)]

use std::collections::HashMap;
use std::sync::Arc;

use super::objects::Elements;
use super::{DatasetInfo, Dtype, Hid};
use crate::error::{MarquetError, Result};

/// Bytes per cached piece of a dataset that is not chunked.
pub const CONTIGUOUS_PIECE_BYTES: u64 = 64 << 10;
/// Bytes per cached piece of a dataset read by byte range whose stored bytes have no
/// filters (the packed R-tree; about one block of a URL's byte source), and of a
/// contiguous dataset read by URL.
pub const REMOTE_PIECE_BYTES: u64 = 4 << 10;

/// A rank-1 dataset with a private cache of decoded chunks (see the module documentation).
#[derive(Debug)]
pub struct CachedDataset {
    src: Elements,
    /// The dataset's path, for messages.
    pub path: String,
    /// The dataset's description when it was opened.
    pub info: Arc<DatasetInfo>,
    mem: Dtype,
    elem: usize,
    len: u64,
    /// Elements per cached piece (the chunk length).
    piece: u64,
    pieces: HashMap<u64, (Arc<Vec<u8>>, u64)>,
    tick: u64,
    held: usize,
    budget: usize,
    generation: u64,
    /// Pieces read from the file so far (cache misses).
    pub pieces_read: u64,
    /// Decoded bytes read from the file so far.
    pub bytes_read: u64,
}

/// A piece no one else holds goes back to the buffer pool (`super::pool`): the next reader
/// on this thread decodes into it instead of into new pages.
fn give_back(d: Arc<Vec<u8>>) {
    if let Ok(v) = Arc::try_unwrap(d) {
        super::pool::give_back(v);
    }
}

impl Drop for CachedDataset {
    fn drop(&mut self) {
        for (_, (d, _)) in self.pieces.drain() {
            give_back(d);
        }
    }
}

impl CachedDataset {
    /// Wrap an open dataset; `budget` bytes of decoded pieces are kept at most. Elements
    /// are returned in `mem` (converted by HDF5, e.g. compound fields by name), by default
    /// the stored type in little-endian order.
    pub fn new(ds: Hid, path: &str, mem: Option<Dtype>, budget: usize) -> Result<CachedDataset> {
        let info = super::dataset_info(ds.id(), path)?;
        CachedDataset::with_info(ds, info, path, mem, budget)
    }

    /// [`CachedDataset::new`] with the dataset's description already read.
    pub fn with_info(ds: Hid, info: DatasetInfo, path: &str, mem: Option<Dtype>, budget: usize) -> Result<CachedDataset> {
        CachedDataset::from_elements(Elements::lib(ds, info, path), mem, budget)
    }

    /// Wrap a dataset of either read path ([`super::objects`]); a read as `mem` the path
    /// cannot make is refused here, before any data is read.
    pub fn from_elements(src: Elements, mem: Option<Dtype>, budget: usize) -> Result<CachedDataset> {
        let generation = super::write_generation();
        let info = src.info.clone();
        let path = src.path.clone();
        let path = path.as_str();
        if info.dims.len() != 1 {
            return Err(MarquetError::spec(path, "HEP001 §6", format!("a column dataset of rank {}", info.dims.len())));
        }
        let mem = mem.unwrap_or_else(|| info.dtype.to_le());
        src.check_readable(&mem)?;
        let elem = mem.size();
        if elem == 0 {
            return Err(MarquetError::spec(path, "HEP001 §6", "an element type of size 0"));
        }
        let piece = match info.chunk.as_deref() {
            // By byte range, stored bytes without filters are read by the piece, not the
            // chunk (issue #34): one R-tree node costs its bytes, not its chunk's 40 KB —
            // over a network a round's bytes, locally the copy (and zeroing) of 40 KB per
            // chunk a cold window touches.
            Some([c]) if *c > 0 && src.is_byte_range() && info.filters.is_empty() => (*c).min((REMOTE_PIECE_BYTES / elem as u64).max(1)),
            Some([c]) if *c > 0 => *c,
            _ if src.is_remote() => (REMOTE_PIECE_BYTES / elem as u64).max(1),
            _ => (CONTIGUOUS_PIECE_BYTES / elem as u64).max(1),
        };
        Ok(CachedDataset {
            len: info.dims[0],
            src,
            path: path.to_string(),
            info,
            mem,
            elem,
            piece,
            pieces: HashMap::new(),
            tick: 0,
            held: 0,
            budget,
            generation,
            pieces_read: 0,
            bytes_read: 0,
        })
    }

    /// Open dataset `name` below `loc` and wrap it.
    pub fn open(loc: hdf5_sys::h5i::hid_t, name: &str, path: &str, mem: Option<Dtype>, budget: usize) -> Result<CachedDataset> {
        CachedDataset::new(super::dataset_open(loc, name)?, path, mem, budget)
    }

    /// Elements in the dataset when it was opened.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True when the dataset held no elements when it was opened.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The element type in memory (little-endian).
    pub fn dtype(&self) -> &Dtype {
        &self.mem
    }

    /// Bytes per element.
    pub fn elem_size(&self) -> usize {
        self.elem
    }

    /// Elements per cached piece.
    pub fn piece_len(&self) -> u64 {
        self.piece
    }

    /// `super::write_generation` when the dataset was opened.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The decoded piece holding element `i` and the element number it starts at.
    pub fn piece_of(&mut self, i: u64) -> Result<(Arc<Vec<u8>>, u64)> {
        if i >= self.len {
            return Err(self.past_end(i, 1));
        }
        let k = i / self.piece;
        self.tick += 1;
        let tick = self.tick;
        if let Some((data, t)) = self.pieces.get_mut(&k) {
            *t = tick;
            return Ok((data.clone(), k * self.piece));
        }
        let start = k * self.piece;
        let count = self.piece.min(self.len - start);
        let bytes = self.src.read(start, count, &self.mem)?;
        self.pieces_read += 1;
        self.bytes_read += bytes.len() as u64;
        let data = Arc::new(bytes);
        self.held += data.len();
        self.pieces.insert(k, (data.clone(), tick));
        while self.held > self.budget && self.pieces.len() > 1 {
            let Some((&old, _)) = self.pieces.iter().filter(|(&key, _)| key != k).min_by_key(|(_, (_, t))| *t) else { break };
            if let Some((d, _)) = self.pieces.remove(&old) {
                self.held -= d.len();
                give_back(d);
            }
        }
        Ok((data, start))
    }

    /// Whether the dataset is read by URL (see [`Elements::is_remote`]).
    pub fn is_remote(&self) -> bool {
        self.src.is_remote()
    }

    /// Fetch ahead, together, the pieces not held yet of the element ranges `(start, end)`
    /// (a file read by URL; see [`Elements::prefetch`]).
    pub fn prefetch(&self, ranges: &[(u64, u64)]) -> Result<()> {
        let want = self.missing_pieces(ranges);
        if want.is_empty() {
            return Ok(());
        }
        self.src.prefetch(&want)
    }

    /// The byte ranges of the file that the pieces not held yet of the element ranges
    /// `(start, end)` need (a file read by URL; empty otherwise), for one prefetch joined
    /// with other datasets' ([`Elements::byte_ranges`]).
    pub fn byte_ranges(&self, ranges: &[(u64, u64)]) -> Result<Vec<(u64, u64)>> {
        let want = self.missing_pieces(ranges);
        if want.is_empty() {
            return Ok(Vec::new());
        }
        self.src.byte_ranges(&want)
    }

    /// The file the dataset is read from by URL (`None`: a local file).
    #[cfg(feature = "cloud")]
    pub fn remote(&self) -> Option<&std::sync::Arc<crate::remote::RemoteFile>> {
        self.src.remote()
    }

    /// The pieces `(start, count)` not held yet of the element ranges `(start, end)`, for a
    /// dataset read by URL (empty otherwise).
    fn missing_pieces(&self, ranges: &[(u64, u64)]) -> Vec<(u64, u64)> {
        if !self.src.is_remote() {
            return Vec::new();
        }
        let mut want: Vec<(u64, u64)> = Vec::new();
        for &(s, e) in ranges {
            let e = e.min(self.len);
            if s >= e {
                continue;
            }
            for k in s / self.piece..=(e - 1) / self.piece {
                if !self.pieces.contains_key(&k) {
                    let start = k * self.piece;
                    want.push((start, self.piece.min(self.len - start)));
                }
            }
        }
        want.sort_unstable();
        want.dedup();
        want
    }

    /// Call `f(first, bytes)` for the elements `[start, start + count)` piece by piece, with
    /// the bytes borrowed from the cache (not copied): `bytes` holds the elements from
    /// `first` on, in order.
    pub fn visit(&mut self, start: u64, count: u64, mut f: impl FnMut(u64, &[u8]) -> Result<()>) -> Result<()> {
        let es = self.elem as u64;
        self.visit_pieces(start, count, |first, piece, r| f(r.start, &piece[((r.start - first) * es) as usize..((r.end - first) * es) as usize]))
    }

    /// Call `f(first, piece, rows)` for each cached piece holding elements of the range
    /// `[start, start + count)`: the element the piece starts at, the whole piece, and the
    /// elements `rows` of the range that lie in it.
    pub fn visit_pieces(&mut self, start: u64, count: u64, mut f: impl FnMut(u64, &[u8], std::ops::Range<u64>) -> Result<()>) -> Result<()> {
        let end = start.checked_add(count).filter(|&e| e <= self.len).ok_or_else(|| self.past_end(start, count))?;
        let es = self.elem as u64;
        let mut i = start;
        while i < end {
            let (data, first) = self.piece_of(i)?;
            let hi = (first + data.len() as u64 / es).min(end);
            if hi <= i {
                return Err(MarquetError::spec(&self.path, "HDF5 chunk", format!("piece at element {first} holds {} bytes", data.len())));
            }
            f(first, &data, i..hi)?;
            i = hi;
        }
        Ok(())
    }

    /// Append the bytes of elements `[start, start + count)` to `out`.
    pub fn read_into(&mut self, start: u64, count: u64, out: &mut Vec<u8>) -> Result<()> {
        self.visit(start, count, |_, b| {
            out.extend_from_slice(b);
            Ok(())
        })
    }

    /// The bytes of elements `[start, start + count)` as a range of a shared buffer: the
    /// cached piece itself when they lie in one piece (no copy), else a copy of them.
    pub fn shared(&mut self, start: u64, count: u64) -> Result<(Arc<Vec<u8>>, std::ops::Range<usize>)> {
        let end = start.checked_add(count).filter(|&e| e <= self.len).ok_or_else(|| self.past_end(start, count))?;
        if count > 0 {
            let (data, first) = self.piece_of(start)?;
            let es = self.elem as u64;
            if end <= first + data.len() as u64 / es {
                return Ok((data, ((start - first) * es) as usize..((end - first) * es) as usize));
            }
        }
        let b = self.read(start, count)?;
        let n = b.len();
        Ok((Arc::new(b), 0..n))
    }

    /// The bytes of elements `[start, start + count)`.
    pub fn read(&mut self, start: u64, count: u64) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity((count.min(self.len) as usize).saturating_mul(self.elem));
        self.read_into(start, count, &mut out)?;
        Ok(out)
    }

    fn past_end(&self, start: u64, count: u64) -> MarquetError {
        MarquetError::spec(&self.path, "HEP001 §6", format!("elements {start}+{count} past the extent {}", self.len))
    }
}
