//! Parallel chunk compression and decompression around HDF5's single lock.
//!
//! The HDF5 library serializes every call, so its filter pipeline compresses and
//! decompresses on one core. For the datasets Marquet writes (rank 1, fixed-size
//! elements stored in the same layout as in memory, filters from [`codec`]) this module
//! does the filter work itself on all cores with rayon and moves finished chunks with
//! direct chunk I/O; the HDF5 calls stay short and serial.
//!
//! Writes: only whole chunks go direct. A chunk the write covers only in part (the first
//! and last of most appends) goes through HDF5's pipeline, which merges it with the stored
//! chunk or the fill value exactly as before. For a whole chunk HDF5's pipeline applies the
//! filters to the written bytes alone; the chunks stored here are ones HDF5's pipeline (and
//! any other HDF5 reader) decodes to the written bytes — the same bytes HDF5 would store
//! for shuffle and zstd, libdeflate's zlib streams for deflate (tested in
//! `tests/direct_chunks.rs`).
//!
//! Reads: reads of at least one chunk's worth of elements whose chunks are all allocated
//! read the stored chunks, decode them in parallel (deflate with libdeflate, straight into
//! the caller's buffer for whole chunks) and copy the requested rows. Smaller reads keep
//! HDF5's pipeline and its chunk cache (many small query reads hit one chunk) — except for
//! deflate, whose decoder in HDF5's pipeline (zlib's `inflate`) is several times slower
//! than libdeflate: those read the few chunks they touch here, decode them with libdeflate
//! and keep them in a small per-thread cache of decoded chunks ([`CACHE_BYTES`]), which
//! plays the part of HDF5's chunk cache for the many small reads of one query.
//!
//! The cache is keyed by the dataset's identity for this process (HDF5's per-open file
//! serial number and the object's address) and the chunk; an entry is used only while the
//! chunk's stored address, size and filter mask are unchanged and no write, extent change
//! or link change has been made through `h5` since it was decoded
//! (`super::write_generation`). A program that shares the file through the C ABI and
//! rewrites a Marquet dataset's chunks with its own HDF5 calls should not do so while
//! libmarquet reads the same dataset (HDF5 itself gives no such guarantee across handles
//! outside its chunk cache either).
#![forbid(unsafe_code)]

use rayon::prelude::*;

use super::codec::{self, Stage};
use super::{Dtype, Filter};
use crate::error::{MarquetError, Result};
use hdf5_sys::h5i::hid_t;

/// How many chunks are compressed or decompressed per round (bounded memory).
const CHUNKS_PER_ROUND: usize = 64;

thread_local! {
    /// Chunks moved by direct chunk I/O from this thread: (written, read).
    static MOVED: std::cell::Cell<(u64, u64)> = const { std::cell::Cell::new((0, 0)) };
}

/// Chunks this thread has written and read with direct chunk I/O so far (for I/O-pattern
/// tests: the HDF5 calls of one write or read all run on the calling thread).
pub fn chunks_moved() -> (u64, u64) {
    MOVED.with(|m| m.get())
}

fn tally(w: u64, r: u64) {
    MOVED.with(|m| {
        let (a, b) = m.get();
        m.set((a + w, b + r));
    });
}

struct Plan {
    stages: Vec<Stage>,
    /// Chunk length in elements.
    chunk: u64,
    /// Bytes per element.
    elem: usize,
}

/// Can this dataset's chunks be encoded here, for data in layout `mem`?
fn plan(ds: hid_t, mem: &Dtype, path: &str) -> Result<Option<Plan>> {
    let info = super::dataset_info(ds, path)?;
    let (1, Some(chunk)) = (info.dims.len(), info.chunk.as_ref().and_then(|c| (c.len() == 1).then(|| c[0]))) else {
        return Ok(None);
    };
    if chunk == 0 || info.dtype != *mem || !fixed_layout(mem) {
        return Ok(None);
    }
    let elem = mem.size();
    // The filters of HDF5's pipeline that matter for bytes are those in the list; an
    // unknown one (or a deflate level above HDF5's 9) keeps the pipeline.
    let Some(stages) = codec::stages(&info.filters, elem) else { return Ok(None) };
    if stages.is_empty() && info.filters.iter().any(|f| !matches!(f, Filter::Shuffle)) {
        return Ok(None);
    }
    Ok(Some(Plan { stages, chunk, elem }))
}

/// Element types whose memory bytes are the file bytes (no pointers, no conversion).
pub(crate) fn fixed_layout(d: &Dtype) -> bool {
    match d {
        Dtype::Int { big_endian, .. } | Dtype::Float { big_endian, .. } => !big_endian,
        Dtype::FixedString { .. } | Dtype::Opaque { .. } => d.size() > 0,
        Dtype::Enum { base, .. } => fixed_layout(base),
        Dtype::Compound { fields, .. } => fields.iter().all(|f| fixed_layout(&f.dtype)),
        Dtype::VarString { .. } | Dtype::StdRef | Dtype::ObjRef | Dtype::Other { .. } => false,
    }
}

fn chunk_err(path: &str, row: u64, msg: String) -> MarquetError {
    MarquetError::spec(path, "HDF5 chunk", format!("chunk at element {row}: {msg}"))
}

/// Write `data` (whole elements of `mem`) at element `start`.
pub(super) fn write(ds: hid_t, start: u64, mem: &Dtype, data: &[u8], path: &str) -> Result<()> {
    let es = mem.size() as u64;
    let count = data.len() as u64 / es;
    let end = start + count;
    let plan = if count >= 2 { plan(ds, mem, path)? } else { None };
    let Some(p) = plan else {
        return super::dataset_write_pipeline(ds, start, mem, data, path);
    };
    let c = p.chunk;
    let first_full = start.div_ceil(c) * c;
    let full_end = (end / c) * c;
    if first_full >= full_end {
        return super::dataset_write_pipeline(ds, start, mem, data, path);
    }
    let byte = |row: u64| ((row - start) * es) as usize;
    // Partial head and tail through the pipeline (merged with what is stored).
    if start < first_full {
        super::dataset_write_pipeline(ds, start, mem, &data[..byte(first_full)], path)?;
    }
    let offsets: Vec<u64> = (first_full..full_end).step_by(c as usize).collect();
    let chunk_bytes = (c * es) as usize;
    for round in offsets.chunks(CHUNKS_PER_ROUND) {
        let encoded: Vec<Result<Vec<u8>>> = round
            .par_iter()
            .map(|&o| {
                let raw = &data[byte(o)..byte(o) + chunk_bytes];
                codec::encode(&p.stages, raw).map_err(|m| chunk_err(path, o, m))
            })
            .collect();
        for (&o, e) in round.iter().zip(encoded) {
            super::chunk_write_raw(ds, o, &e?, path)?;
            tally(1, 0);
        }
    }
    if full_end < end {
        super::dataset_write_pipeline(ds, full_end, mem, &data[byte(full_end)..], path)?;
    }
    Ok(())
}

/// Read `count` elements at `start` into `buf`; `Ok(false)` when the read is not one for
/// the direct path (the caller then uses the pipeline).
pub(super) fn read(ds: hid_t, start: u64, count: u64, mem: &Dtype, path: &str, buf: &mut [u8]) -> Result<bool> {
    if count < 2 {
        return Ok(false);
    }
    // A file read by URL (issue #34): HDF5's pipeline finds each chunk by descending its
    // index; the chunk tables here would fetch every index node.
    #[cfg(all(feature = "cloud", hdf5_1_14))]
    if super::is_ranged(ds) {
        return Ok(false);
    }
    let Some(p) = plan(ds, mem, path)? else { return Ok(false) };
    if count < p.chunk {
        if p.stages.iter().any(|s| matches!(s, Stage::Deflate { .. })) {
            return read_cached(ds, start, count, &p, path, buf);
        }
        return Ok(false);
    }
    let c = p.chunk;
    let es = p.elem as u64;
    let end = start + count;
    let chunk_bytes = usize::try_from(c * es).map_err(|_| chunk_err(path, 0, "chunk too large".into()))?;
    // Stored chunks are never larger than the worst encoding of a chunk.
    let max_stored = (chunk_bytes as u64) + (chunk_bytes as u64 >> 7) + 4096;
    let first = (start / c) * c;
    let offsets: Vec<u64> = (first..end).step_by(c as usize).collect();
    let mut infos = Vec::with_capacity(offsets.len());
    let (locations, by_offset) = super::chunk_locations(ds, &offsets, path)?;
    for (&o, loc) in offsets.iter().zip(locations) {
        match loc {
            // An unallocated chunk reads as the fill value: HDF5's pipeline knows the rules.
            None => return Ok(false),
            Some(l @ (_, _, size)) if size <= max_stored => infos.push(l),
            Some((_, _, size)) => {
                return Err(chunk_err(path, o, format!("stores {size} bytes, more than any encoding of {chunk_bytes} bytes")))
            }
        }
    }
    // Output slices, one per chunk, in order.
    let mut slices: Vec<&mut [u8]> = Vec::with_capacity(offsets.len());
    let mut rest = buf;
    for &o in &offsets {
        let lo = o.max(start);
        let hi = (o + c).min(end);
        let (head, tail) = rest.split_at_mut(((hi - lo) * es) as usize);
        slices.push(head);
        rest = tail;
    }
    // The stored chunks of one round, their buffers reused round after round (zeroing a
    // fresh buffer per chunk cost as much as HDF5's read itself).
    let mut raw: Vec<(u32, Vec<u8>)> = Vec::new();
    let mut idx = 0;
    while idx < offsets.len() {
        let n = CHUNKS_PER_ROUND.min(offsets.len() - idx);
        raw.resize_with(raw.len().max(n), Default::default);
        // Unfiltered whole chunks are read straight into the caller's buffer (an append
        // streams an R-tree's leaf level this way, 400 MB at 10,000,000 rows; issue #31).
        let mut placed = [false; CHUNKS_PER_ROUND];
        for (k, slot) in (idx..idx + n).zip(raw.iter_mut()) {
            let size = infos[k].2;
            if p.stages.is_empty() && size == chunk_bytes as u64 && slices[k].len() == chunk_bytes {
                super::chunk_read_located(ds, offsets[k], infos[k], by_offset, path, slices[k])?;
                placed[k - idx] = true;
            } else {
                // `size` ≤ max_stored, checked above.
                slot.1.resize(size as usize, 0);
                slot.0 = super::chunk_read_located(ds, offsets[k], infos[k], by_offset, path, &mut slot.1)?;
            }
            tally(0, 1);
        }
        let round = slices[idx..idx + n].par_iter_mut().zip(raw[..n].par_iter()).zip(offsets[idx..idx + n].par_iter());
        round.zip(placed[..n].par_iter()).try_for_each(
            |(((out, (mask, stored)), &o), &done)| -> Result<()> {
                if done {
                    return Ok(());
                }
                if out.len() == chunk_bytes {
                    // The whole chunk is wanted: decode straight into the caller's buffer.
                    return codec::decode_into(&p.stages, *mask, stored, out).map_err(|m| chunk_err(path, o, m));
                }
                let dec = codec::decode(&p.stages, *mask, stored, chunk_bytes).map_err(|m| chunk_err(path, o, m))?;
                let lo = (o.max(start) - o) * es;
                out.copy_from_slice(&dec[lo as usize..lo as usize + out.len()]);
                Ok(())
            },
        )?;
        idx += n;
    }
    Ok(true)
}

/// Bytes of decoded chunks each thread keeps for small reads (HDF5's own chunk cache is
/// 1 MiB per dataset; a query reads a few datasets).
pub const CACHE_BYTES: usize = 4 << 20;

/// One decoded chunk of [`read_cached`].
struct Cached {
    /// (file serial number, object address, chunk offset in elements).
    key: (u64, [u8; 16], u64),
    /// The stored chunk it was decoded from: filter mask, address, size.
    stored: (u32, u64, u64),
    /// [`super::write_generation`] before the chunk was located and read.
    generation: u64,
    stages: Vec<Stage>,
    data: std::rc::Rc<Vec<u8>>,
}

thread_local! {
    /// Decoded chunks of small reads, least recently used first.
    static CACHE: std::cell::RefCell<Vec<Cached>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Read `count` (< one chunk) elements at `start` through the decoded-chunk cache;
/// `Ok(false)` when a chunk is unallocated (the pipeline knows the fill rules).
fn read_cached(ds: hid_t, start: u64, count: u64, p: &Plan, path: &str, buf: &mut [u8]) -> Result<bool> {
    let c = p.chunk;
    let es = p.elem as u64;
    let end = start + count;
    let chunk_bytes = usize::try_from(c * es).map_err(|_| chunk_err(path, 0, "chunk too large".into()))?;
    let max_stored = (chunk_bytes as u64) + (chunk_bytes as u64 >> 7) + 4096;
    let (fileno, token) = super::object_identity(ds, path)?;
    let mut o = (start / c) * c;
    while o < end {
        let generation = super::write_generation();
        let (loc, by_offset) = super::chunk_place(ds, o, path)?;
        let Some((mask, addr, size)) = loc else { return Ok(false) };
        if size > max_stored {
            return Err(chunk_err(path, o, format!("stores {size} bytes, more than any encoding of {chunk_bytes} bytes")));
        }
        let key = (fileno, token, o);
        let hit = CACHE.with(|cache| {
            let mut cache = cache.borrow_mut();
            let i = cache.iter().position(|e| {
                e.key == key && e.stored == (mask, addr, size) && e.generation == generation && e.stages == p.stages && e.data.len() == chunk_bytes
            })?;
            let e = cache.remove(i);
            let data = e.data.clone();
            cache.push(e);
            Some(data)
        });
        let data = match hit {
            Some(d) => d,
            None => {
                let mut stored = vec![0u8; size as usize];
                let m = super::chunk_read_located(ds, o, (mask, addr, size), by_offset, path, &mut stored)?;
                tally(0, 1);
                let mut dec = vec![0u8; chunk_bytes];
                codec::decode_into(&p.stages, m, &stored, &mut dec).map_err(|msg| chunk_err(path, o, msg))?;
                let data = std::rc::Rc::new(dec);
                CACHE.with(|cache| {
                    let mut cache = cache.borrow_mut();
                    cache.retain(|e| e.key != key);
                    cache.push(Cached { key, stored: (m, addr, size), generation, stages: p.stages.clone(), data: data.clone() });
                    let mut total: usize = cache.iter().map(|e| e.data.len()).sum();
                    while total > CACHE_BYTES && cache.len() > 1 {
                        total -= cache.remove(0).data.len();
                    }
                });
                data
            }
        };
        let lo = o.max(start);
        let hi = (o + c).min(end);
        let dst = &mut buf[((lo - start) * es) as usize..((hi - start) * es) as usize];
        let src = ((lo - o) * es) as usize;
        dst.copy_from_slice(&data[src..src + dst.len()]);
        o += c;
    }
    Ok(true)
}
