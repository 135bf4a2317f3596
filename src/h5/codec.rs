//! The chunk filters Marquet writes (shuffle, deflate, zstd), implemented outside HDF5 so
//! that chunks can be compressed and decompressed on many cores and moved with direct
//! chunk I/O (`H5Dwrite_chunk` / `H5Dread_chunk`).
//!
//! Every chunk written here is one that HDF5's own pipeline decodes to the same data:
//!
//! * shuffle (filter 2) is `H5Z_filter_shuffle`'s byte transposition, with its rule that
//!   one-byte elements, single elements and trailing partial elements pass through (the
//!   same bytes as HDF5's);
//! * deflate (filter 1) is a zlib stream (RFC 1950: header, deflate data, Adler-32), which
//!   is what `H5Z_filter_deflate` reads with zlib's `inflate`. We encode and decode it with
//!   libdeflate (the `libdeflater` crate) at the dataset's level, several times faster than
//!   zlib; the bytes differ from zlib's `compress2`, the data they decode to does not
//!   (`tests/direct_chunks.rs` reads our chunks back through HDF5's pipeline, and
//!   `tests/plain_hdf5.rs` through h5py without hdf5plugin and through h5dump). After a
//!   shuffle, a chunk whose byte planes include noise (the low mantissa bytes of float
//!   coordinates) is one zlib stream of stored blocks for those planes and compressed
//!   blocks for the others ([`deflate_shuffled`]): still deflate, inflated several times
//!   faster and no larger;
//! * zstd (filter 32015, the registered Zstandard filter) is `ZSTD_compress` at
//!   `cd_values[0]` clamped to 1..=`ZSTD_maxCLevel()` (level 3, `ZSTD_CLEVEL_DEFAULT`, when
//!   there are no `cd_values`), as in the reference plugin (aparamon/HDF5Plugin-Zstandard,
//!   shipped by hdf5plugin): the same bytes. Our HDF5 filter callback (`h5::zstd_filter`)
//!   calls the same functions as this module.
//!
//! Decoders never trust the stored bytes: output is bounded by the size the chunk must
//! have, and any mismatch is an error rather than a panic.
// One `unsafe` call, to the SSE2 unshuffle (see its SAFETY note); nothing else here.
#![deny(unsafe_code)]

use super::Filter;

/// HDF5's deflate filter id (`H5Z_FILTER_DEFLATE`).
pub const FILTER_DEFLATE: i32 = 1;
/// HDF5's Fletcher-32 checksum filter id (`H5Z_FILTER_FLETCHER32`).
pub const FILTER_FLETCHER32: i32 = 3;
/// HDF5's shuffle filter id (`H5Z_FILTER_SHUFFLE`).
pub const FILTER_SHUFFLE: i32 = 2;
/// The registered Zstandard filter id (HDF Group registered filter 32015).
pub const FILTER_ZSTD: i32 = 32015;
/// The zstd level used by the 32015 filter when a dataset gives no `cd_values`
/// (`ZSTD_CLEVEL_DEFAULT`).
pub const ZSTD_PLUGIN_DEFAULT_LEVEL: u32 = 3;
/// The zstd level Marquet writes by default: level 3 was the best time/size trade-off on
/// `synth::polygons` and `synth::clustered_points` (see `benches/`); higher levels cost
/// several times the write time for a few percent of size.
pub const DEFAULT_ZSTD_LEVEL: u32 = 3;
/// Largest decoded size accepted by the HDF5 filter callback, where the chunk size is not
/// known: HDF5 chunks are limited to 4 GiB.
pub const MAX_CHUNK_BYTES: u64 = u32::MAX as u64;

/// One step of a chunk's filter pipeline, with its parameters resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Byte shuffle of elements of this many bytes.
    Shuffle {
        /// Element size in bytes.
        elem: usize,
    },
    /// A zlib stream at this deflate level (0–9), written by libdeflate.
    Deflate {
        /// Compression level, 0–9.
        level: u32,
    },
    /// `ZSTD_compress` at this level (already clamped).
    Zstd {
        /// Compression level.
        level: i32,
    },
}

/// Resolve a dataset's filters for elements of `elem` bytes; `None` when any filter is
/// one this module does not implement (the caller then uses HDF5's pipeline).
pub fn stages(filters: &[Filter], elem: usize) -> Option<Vec<Stage>> {
    filters
        .iter()
        .map(|f| match f {
            Filter::Shuffle => Some(Stage::Shuffle { elem }),
            Filter::Deflate(l) if *l <= 9 => Some(Stage::Deflate { level: *l }),
            Filter::Deflate(_) => None,
            Filter::Zstd(l) => Some(Stage::Zstd { level: zstd_level(&[*l]) }),
            Filter::Other(FILTER_ZSTD, cd) => Some(Stage::Zstd { level: zstd_level(cd) }),
            // Checksums are HDF5's to compute and verify: datasets with one go through
            // HDF5's pipeline (docs/FAULTS.md F8).
            Filter::Fletcher32 | Filter::Other(..) => None,
        })
        .collect()
}

/// The 32015 filter's level rule: `cd_values[0]` when present, else 3, clamped to
/// `1..=ZSTD_maxCLevel()`.
pub fn zstd_level(cd: &[u32]) -> i32 {
    let max = zstd::zstd_safe::max_c_level();
    match cd.first() {
        None => ZSTD_PLUGIN_DEFAULT_LEVEL as i32,
        Some(&l) => (l.min(i32::MAX as u32) as i32).clamp(1, max),
    }
}

/// HDF5's shuffle (`H5Z_filter_shuffle`, forward).
pub fn shuffle(src: &[u8], elem: usize) -> Vec<u8> {
    let n = src.len().checked_div(elem).unwrap_or(0);
    if elem <= 1 || n <= 1 {
        return src.to_vec();
    }
    let mut out = vec![0u8; src.len()];
    match elem {
        // SAFETY: SSE2 is part of every x86-64 processor (the target's baseline), so the
        // one feature `shuffle_sse2` enables is always present; its body is safe code.
        #[cfg(target_arch = "x86_64")]
        #[allow(unsafe_code)]
        8 => unsafe { shuffle_sse2::<8>(src, n, &mut out) },
        // SAFETY: as for 8.
        #[cfg(target_arch = "x86_64")]
        #[allow(unsafe_code)]
        16 => unsafe { shuffle_sse2::<16>(src, n, &mut out) },
        _ => {
            for b in 0..elem {
                let dst = &mut out[b * n..(b + 1) * n];
                for (j, d) in dst.iter_mut().enumerate() {
                    *d = src[j * elem + b];
                }
            }
        }
    }
    let done = n * elem;
    out[done..].copy_from_slice(&src[done..]);
    out
}

/// HDF5's unshuffle (`H5Z_filter_shuffle`, reverse).
pub fn unshuffle(src: &[u8], elem: usize) -> Vec<u8> {
    let mut out = vec![0u8; src.len()];
    unshuffle_into(src, elem, &mut out);
    out
}

thread_local! {
    /// One libdeflate compressor per thread, for the level it was last used at.
    static DEFLATER: std::cell::RefCell<Option<(u32, libdeflater::Compressor)>> = const { std::cell::RefCell::new(None) };
    /// One miniz_oxide compressor per thread, for the level it was last used at
    /// ([`compress_piece`]; reset once per chunk, each piece ending with a full flush, so
    /// its tables are neither allocated nor zeroed anew for each piece).
    static PIECE: std::cell::RefCell<Option<(u32, miniz_oxide::deflate::core::CompressorOxide)>> = const { std::cell::RefCell::new(None) };
    /// One libdeflate decompressor per thread.
    static INFLATER: std::cell::RefCell<Option<libdeflater::Decompressor>> = const { std::cell::RefCell::new(None) };
}

/// A zlib stream of `src` at deflate level `level` (0–9, HDF5's range; higher levels are
/// treated as 9), written by libdeflate: what HDF5's deflate filter decodes.
pub fn deflate(src: &[u8], level: u32) -> Result<Vec<u8>, String> {
    let level = level.min(9);
    let lvl = libdeflater::CompressionLvl::new(level as i32).map_err(|e| format!("deflate level {level}: {e:?}"))?;
    DEFLATER.with(|slot| {
        let mut slot = slot.borrow_mut();
        let (_, comp) = match slot.take() {
            Some((l, comp)) if l == level => slot.insert((l, comp)),
            _ => slot.insert((level, libdeflater::Compressor::new(lvl))),
        };
        let mut out = vec![0u8; comp.zlib_compress_bound(src.len())];
        let n = comp.zlib_compress(src, &mut out).map_err(|e| format!("deflate failed: {e}"))?;
        out.truncate(n);
        Ok(out)
    })
}

/// Fewest elements in a chunk for [`deflate_shuffled`] to look at its planes one by one:
/// below it, a plane's byte histogram says little and the stream is written whole.
const PLANE_MIN_ELEMENTS: usize = 256;

/// Deflate the shuffled bytes `s` (planes of `elem`-byte elements, as [`shuffle`] writes
/// them) as one zlib stream in which each plane that deflate cannot shrink is a *stored*
/// block and the runs of the other planes are compressed.
///
/// Why: the low mantissa bytes of float coordinates are noise. In the benchmark's
/// 1,000,000 points, 10 of a point chunk's 16 planes do not shrink at all under zlib
/// (ratio 1.005), 2 shrink by 5–7 % and 4 by 90–99 %. Deflated whole, the noise planes are
/// coded as Huffman literals anyway, and inflating them is most of the cost of reading a
/// point chunk (about 8.5 instructions a byte); stored, they inflate as a copy, and the
/// file is no larger (0.754–0.761 of the raw size against 0.761 for the whole chunk;
/// docs/PERFORMANCE.md, "Session 25"). The stream is ordinary deflate (RFC 1951 stored,
/// fixed and dynamic blocks in one zlib stream, RFC 1950), so every reader inflates it as
/// before: HDF5's deflate filter (zlib), h5py, netCDF-C, our libdeflate decoder.
///
/// A plane is stored when deflate would save less than 8 % of it ([`incompressible`]: a
/// flat byte histogram and no repeated runs in its first KiB, [`repeats`]). Session 26 raised the bar
/// from 2 %: the two planes that shrink by 5–7 % were decoded as Huffman literals for
/// little gain; stored, a warm point window costs 6 % fewer instructions and the file is
/// 0.04 % larger. Storing can make a chunk at most 8 % larger than deflating it whole.
/// When fewer than a quarter of the planes would be stored (every chunk of fill values,
/// small chunks, integer columns that compress), the chunk is deflated whole by libdeflate.
///
/// Hand-written because no crate composes a stream from stored and compressed pieces:
/// the compressed pieces come from miniz_oxide with a full flush (byte-aligned, not
/// final), the stored blocks' five header bytes are written here (RFC 1951 §3.2.4).
pub fn deflate_shuffled(s: &[u8], elem: usize, level: u32) -> Result<Vec<u8>, String> {
    let level = level.min(9);
    let n = s.len().checked_div(elem).unwrap_or(0);
    if elem < 2 || n < PLANE_MIN_ELEMENTS || level == 0 {
        return deflate(s, level);
    }
    let stored: Vec<bool> = s.chunks_exact(n).take(elem).map(incompressible).collect();
    // Each compressed piece costs a compressor reset (miniz_oxide zeroes about 160 KiB of
    // tables): worth it where noise fills a quarter of the chunk or more (coordinates),
    // not for one noisy plane among numbers that compress (an Int64 id column; session 27).
    if stored.iter().filter(|&&st| st).count() * 4 < elem {
        return deflate(s, level);
    }
    // Runs of planes alike; the bytes past the last whole element (none for the chunks
    // Marquet writes) go with the last run.
    let mut runs: Vec<(usize, usize, bool)> = Vec::new();
    for (p, &st) in stored.iter().enumerate() {
        match runs.last_mut() {
            Some(r) if r.2 == st => r.1 = (p + 1) * n,
            _ => runs.push((p * n, (p + 1) * n, st)),
        }
    }
    if let Some(r) = runs.last_mut() {
        r.1 = s.len();
    }
    // zlib header as libdeflate writes it for this level (FLEVEL), then the pieces, an
    // empty final stored block, and the Adler-32 of the data.
    let mut out = Vec::with_capacity(s.len() + 64);
    out.extend_from_slice(&[0x78, if level < 2 { 0x01 } else if level < 6 { 0x5E } else if level == 6 { 0x9C } else { 0xDA }]);
    let mut first_piece = true;
    for &(a, b, st) in &runs {
        if st {
            for piece in s[a..b].chunks(u16::MAX as usize) {
                let len = piece.len() as u16;
                out.push(0); // BFINAL 0, BTYPE 00 (stored), then padding to the byte
                out.extend_from_slice(&len.to_le_bytes());
                out.extend_from_slice(&(!len).to_le_bytes());
                out.extend_from_slice(piece);
            }
        } else {
            compress_piece(&s[a..b], level, first_piece, &mut out)?;
            first_piece = false;
        }
    }
    out.extend_from_slice(&[1, 0, 0, 0xFF, 0xFF]);
    out.extend_from_slice(&libdeflater::adler32(s).to_be_bytes());
    Ok(out)
}

/// Whether deflate saves less than 8 % of `plane`. A plane whose byte histogram is far
/// from flat (Huffman coding alone saves more than that) is compressible; a flat one may
/// still repeat (the low bytes of a counter), which [`repeats`] looks for.
fn incompressible(plane: &[u8]) -> bool {
    // Four histograms summed at the end: a plane of one repeated byte (a WKB header's, a
    // float's sign and exponent) would otherwise wait on the same counter at every byte
    // (a store-to-load chain of about 5 cycles), which made this count a ninth of a point
    // convert's CPU time.
    let mut hists = [[0u32; 256]; 4];
    let mut quads = plane.chunks_exact(4);
    for q in &mut quads {
        hists[0][q[0] as usize] += 1;
        hists[1][q[1] as usize] += 1;
        hists[2][q[2] as usize] += 1;
        hists[3][q[3] as usize] += 1;
    }
    for &b in quads.remainder() {
        hists[0][b as usize] += 1;
    }
    let mut hist = [0u32; 256];
    for (i, h) in hist.iter_mut().enumerate() {
        *h = hists[0][i] + hists[1][i] + hists[2][i] + hists[3][i];
    }
    // Σ c·log2(n/c) = n·log2(n) − Σ c·log2(c), the last from a table for the counts of
    // the usual planes (256 calls of log2 a plane were 2 % of a point convert).
    let n = plane.len() as f64;
    let table = c_log2_c();
    // In the order the counts come, as before; without a call in the loop, so the sum
    // stays in a register (with `log2` possible at every count it went through the stack
    // at each of the 256: a quarter of this function; session 32).
    let sum: f64 = if plane.len() < table.len() {
        hist.iter().fold(0.0, |s, &c| s + table[c as usize])
    } else {
        hist.iter().map(|&c| table.get(c as usize).copied().unwrap_or_else(|| f64::from(c) * f64::from(c).log2())).sum()
    };
    let bits = n * n.log2() - sum;
    if bits / 8.0 + 64.0 < 0.92 * n {
        return false;
    }
    // The first KiB says it: noise does not shrink anywhere, a repeating plane does.
    !repeats(&plane[..plane.len().min(1024)])
}

/// `c · log2(c)` for the counts `0..=4096` (0 for 0).
fn c_log2_c() -> &'static [f64] {
    static TABLE: std::sync::OnceLock<Vec<f64>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| (0..=4096u32).map(|c| if c == 0 { 0.0 } else { f64::from(c) * f64::from(c).log2() }).collect())
}

/// Whether runs of 4 bytes or more that occurred before would let deflate save 8 % of
/// `sample`: what LZ77 would find in a plane whose bytes are evenly spread (a counter's low byte, a
/// repeating pattern) and not in noise. A greedy pass with a table of each 4-byte
/// sequence's last position, as LZ4's matcher does; its 4 KiB table on the stack costs a
/// tenth of a level-1 libdeflate trial (which zeroes its hash tables at every call: 10 % of
/// a point convert's instructions, session 27). Hand-written because no crate exposes a
/// match finder without a compressor's setup.
fn repeats(sample: &[u8]) -> bool {
    let (covered, runs) = repeats_stats(sample);
    // What a deflate block saves by them: about 3 bytes a run for its length and distance,
    // about 48 bytes of Huffman tables (fitted to libdeflate's level-1 trial on 1 KiB
    // planes: `repeats_answers_as_a_level_one_trial_does`).
    covered.saturating_sub(3 * runs + 48) * 100 >= sample.len() * 8
}

/// Bytes covered by repeated runs in `sample`, and the number of runs ([`repeats`]).
/// Samples longer than 65,534 bytes are looked at up to there (the callers' are 1 KiB).
fn repeats_stats(sample: &[u8]) -> (usize, usize) {
    const BITS: u32 = 10;
    let sample = &sample[..sample.len().min(usize::from(u16::MAX) - 1)];
    // One unaligned load a key, not four byte loads (a third of this pass's instructions).
    let key = |i: usize| sample.get(i..i + 4).map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
    let hash = |k: u32| (k.wrapping_mul(2_654_435_761) >> (32 - BITS)) as usize;
    // The last position of each hash's sequence. A slot never written holds 0, and
    // position 0's own slot is written first: a slot holding 0 is then either position 0
    // or one whose sequence hashes elsewhere and so cannot equal the key looked up. This
    // leaves one branch a position, "a match", which noise never takes; testing for an
    // empty slot first was a second one, taken about half the time while the table
    // filled, and its mispredictions cost a third of this pass (session 32).
    let mut last = [0u16; 1 << BITS];
    let (mut i, mut covered, mut matches) = (1usize, 0usize, 0usize);
    while i + 4 <= sample.len() {
        let k = key(i);
        let prev = usize::from(std::mem::replace(&mut last[hash(k)], i as u16));
        if key(prev) == k {
            let len = 4 + sample[prev + 4..].iter().zip(&sample[i + 4..]).take_while(|(a, b)| a == b).count();
            covered += len;
            matches += 1;
            i += len;
        } else {
            i += 1;
        }
    }
    (covered, matches)
}

/// Raw deflate of `src` appended to `out`, ending byte-aligned in a block that is not the
/// last, with no reference before its own start: miniz_oxide's *full* flush, which is a
/// sync flush that also forgets the dictionary. The thread's compressor is reset for the
/// first piece of a chunk (`first`) and goes on from one piece to the next within it:
/// the full flush leaves what a reset is needed for, less the ~300 KiB a reset zeroes
/// (session 27). Resetting per chunk keeps a chunk's bytes independent of what the thread
/// compressed before it (without, sizes differed by a byte from run to run). A compressor
/// that failed is dropped.
fn compress_piece(src: &[u8], level: u32, first: bool, out: &mut Vec<u8>) -> Result<(), String> {
    use miniz_oxide::deflate::core::{create_comp_flags_from_zip_params, CompressorOxide};
    PIECE.with(|slot| {
        let mut slot = slot.borrow_mut();
        match slot.as_mut() {
            Some((l, c)) if *l == level => {
                if first {
                    c.reset();
                }
            }
            _ => *slot = Some((level, CompressorOxide::new(create_comp_flags_from_zip_params(level as i32, -15, 0)))),
        }
        let r = match slot.as_mut() {
            Some((_, c)) => compress_with(c, src, out),
            None => Err("no deflate compressor".into()),
        };
        if r.is_err() {
            *slot = None;
        }
        r
    })
}

/// [`compress_piece`] with the compressor `c`.
fn compress_with(c: &mut miniz_oxide::deflate::core::CompressorOxide, src: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
    use miniz_oxide::deflate::core::{compress, TDEFLFlush, TDEFLStatus};
    let start = out.len();
    // Room for the worst case (stored blocks) and the flush; grown if it is not enough.
    let mut room = src.len() + src.len() / 8 + 64;
    let mut input = src;
    for _ in 0..40 {
        let at = out.len();
        out.resize(at + room, 0);
        let (status, used, wrote) = compress(c, input, &mut out[at..], TDEFLFlush::Full);
        out.truncate(at + wrote);
        match status {
            TDEFLStatus::Okay if used == input.len() && wrote < room => return Ok(()),
            TDEFLStatus::Okay if used <= input.len() => {
                input = &input[used..];
                room *= 2;
            }
            other => {
                out.truncate(start);
                return Err(format!("deflate of a plane run failed: {other:?}"));
            }
        }
    }
    out.truncate(start);
    Err("deflate of a plane run made no progress".into())
}

/// Inflate the zlib stream `src` into `out`, which it must fill exactly.
pub fn inflate_into(src: &[u8], out: &mut [u8]) -> Result<(), String> {
    let n = inflate_upto(src, out)?;
    if n != out.len() {
        return Err(format!("chunk decodes to {n} bytes, expected {}", out.len()));
    }
    Ok(())
}

/// Inflate the zlib stream `src` into the start of `out`; the number of bytes decoded, an
/// error when the data would need more than `out.len()` bytes or is not a valid stream.
fn inflate_upto(src: &[u8], out: &mut [u8]) -> Result<usize, String> {
    INFLATER.with(|d| {
        let mut d = d.borrow_mut();
        let d = d.get_or_insert_with(libdeflater::Decompressor::new);
        d.zlib_decompress(src, out).map_err(|e| match e {
            libdeflater::DecompressionError::InsufficientSpace => format!("deflate data decodes to more than {} bytes", out.len()),
            libdeflater::DecompressionError::BadData => "corrupt deflate data".to_string(),
        })
    })
}

/// Inflate a zlib stream that must decode to at most `limit` bytes (`limit` is a chunk's
/// size: the buffer is allocated at once).
pub fn inflate(src: &[u8], limit: usize) -> Result<Vec<u8>, String> {
    let mut out = vec![0u8; limit];
    let n = inflate_upto(src, &mut out)?;
    out.truncate(n);
    Ok(out)
}

/// `ZSTD_compress(level)`: the bytes the 32015 filter writes.
pub fn zstd_compress(src: &[u8], level: i32) -> Result<Vec<u8>, String> {
    let mut out: Vec<u8> = Vec::with_capacity(zstd::zstd_safe::compress_bound(src.len()));
    zstd::zstd_safe::compress(&mut out, src, level).map_err(|c| format!("zstd compression failed: {}", zstd::zstd_safe::get_error_name(c)))?;
    Ok(out)
}

/// Decode one or more zstd frames (with or without a content size, as any writer of the
/// 32015 filter may produce them) into at most `limit` bytes.
pub fn zstd_decompress(src: &[u8], limit: usize) -> Result<Vec<u8>, String> {
    use std::io::Read;
    // Frames that declare their size (what ZSTD_compress writes) decode in one call into
    // an exactly sized buffer; others stream, bounded by `limit`.
    if let Ok(Some(n)) = zstd::zstd_safe::get_frame_content_size(src) {
        if n > limit as u64 {
            return Err(format!("zstd frame declares {n} bytes, more than the {limit} expected"));
        }
        if let Ok(v) = zstd::bulk::decompress(src, limit) {
            return Ok(v);
        }
    }
    let mut d = zstd::stream::read::Decoder::with_buffer(src).map_err(|e| format!("zstd: {e}"))?;
    let mut out = Vec::new();
    (&mut d).take(limit as u64 + 1).read_to_end(&mut out).map_err(|e| format!("corrupt zstd data: {e}"))?;
    if out.len() > limit {
        return Err(format!("zstd data decodes to more than {limit} bytes"));
    }
    Ok(out)
}

/// Apply `stages` in order (what HDF5 does when writing a chunk).
pub fn encode(stages: &[Stage], raw: &[u8]) -> Result<Vec<u8>, String> {
    if let [Stage::Shuffle { elem }, Stage::Deflate { level }] = *stages {
        return deflate_shuffled(&shuffle(raw, elem), elem, level);
    }
    let mut cur: Option<Vec<u8>> = None;
    for s in stages {
        let input = cur.as_deref().unwrap_or(raw);
        cur = Some(match *s {
            Stage::Shuffle { elem } => shuffle(input, elem),
            Stage::Deflate { level } => deflate(input, level)?,
            Stage::Zstd { level } => zstd_compress(input, level)?,
        });
    }
    Ok(cur.unwrap_or_else(|| raw.to_vec()))
}

/// Undo `stages` in reverse order, skipping those whose bit is set in `mask` (HDF5's
/// per-chunk filter mask); the result must be exactly `expected` bytes.
pub fn decode(stages: &[Stage], mask: u32, stored: &[u8], expected: usize) -> Result<Vec<u8>, String> {
    let mut cur: Option<Vec<u8>> = None;
    for (i, s) in stages.iter().enumerate().rev() {
        if i < 32 && mask & (1 << i) != 0 {
            continue;
        }
        let input = cur.as_deref().unwrap_or(stored);
        cur = Some(match *s {
            Stage::Shuffle { elem } => unshuffle(input, elem),
            Stage::Deflate { .. } => inflate(input, expected)?,
            Stage::Zstd { .. } => zstd_decompress(input, expected)?,
        });
    }
    let out = cur.unwrap_or_else(|| stored.to_vec());
    if out.len() != expected {
        return Err(format!("chunk decodes to {} bytes, expected {expected}", out.len()));
    }
    Ok(out)
}

/// [`decode`] straight into `out` (the whole chunk, `out.len()` bytes), without a buffer
/// per chunk for the usual pipelines: deflate or zstd alone decompresses into `out`;
/// shuffle + deflate or zstd decompresses into a per-thread scratch buffer and unshuffles
/// into `out`. Other pipelines go through [`decode`].
pub fn decode_into(stages: &[Stage], mask: u32, stored: &[u8], out: &mut [u8]) -> Result<(), String> {
    let active: Vec<&Stage> = stages.iter().enumerate().filter(|(i, _)| *i >= 32 || mask & (1 << i) == 0).map(|(_, s)| s).collect();
    match active.as_slice() {
        [c @ (Stage::Zstd { .. } | Stage::Deflate { .. })] => decompress_into(c, stored, out),
        [Stage::Shuffle { elem }, c @ (Stage::Zstd { .. } | Stage::Deflate { .. })] => {
            thread_local! {
                static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
            }
            SCRATCH.with(|s| {
                let mut s = s.borrow_mut();
                s.resize(out.len(), 0);
                decompress_into(c, stored, &mut s)?;
                unshuffle_into(&s, *elem, out);
                Ok(())
            })
        }
        _ => {
            let v = decode(stages, mask, stored, out.len())?;
            out.copy_from_slice(&v);
            Ok(())
        }
    }
}

/// Decode one compression stage's data into `dst`, which it must fill exactly.
fn decompress_into(stage: &Stage, src: &[u8], dst: &mut [u8]) -> Result<(), String> {
    match stage {
        Stage::Deflate { .. } => inflate_into(src, dst),
        Stage::Zstd { .. } => {
            thread_local! {
                static DCTX: std::cell::RefCell<zstd::zstd_safe::DCtx<'static>> = std::cell::RefCell::new(zstd::zstd_safe::DCtx::create());
            }
            let n = DCTX
                .with(|d| d.borrow_mut().decompress(&mut *dst, src))
                .map_err(|c| format!("corrupt zstd data: {}", zstd::zstd_safe::get_error_name(c)))?;
            if n != dst.len() {
                return Err(format!("chunk decodes to {n} bytes, expected {}", dst.len()));
            }
            Ok(())
        }
        Stage::Shuffle { .. } => Err("shuffle is not a compression stage".into()),
    }
}

/// [`unshuffle`] into `out` (`out.len() == src.len()`).
fn unshuffle_into(src: &[u8], elem: usize, out: &mut [u8]) {
    let n = src.len().checked_div(elem).unwrap_or(0);
    if elem <= 1 || n <= 1 {
        out.copy_from_slice(src);
        return;
    }
    // The element sizes Marquet writes get a loop the compiler unrolls (issue #20: the
    // byte-by-byte loop was a fifth of a warm point query's instructions).
    match elem {
        2 => unshuffle_fixed::<2>(src, n, out),
        4 => unshuffle_fixed::<4>(src, n, out),
        // SAFETY: SSE2 is part of every x86-64 processor (the target's baseline), so the
        // one feature `unshuffle8_sse2` enables is always present; its body is safe code.
        #[cfg(target_arch = "x86_64")]
        #[allow(unsafe_code)]
        8 => unsafe { unshuffle8_sse2(src, n, out) },
        #[cfg(not(target_arch = "x86_64"))]
        8 => unshuffle_fixed::<8>(src, n, out),
        // SAFETY: as for 8 above.
        #[cfg(target_arch = "x86_64")]
        #[allow(unsafe_code)]
        16 => unsafe { unshuffle16_sse2(src, n, out) },
        #[cfg(not(target_arch = "x86_64"))]
        16 => unshuffle_fixed::<16>(src, n, out),
        24 => unshuffle_fixed::<24>(src, n, out),
        32 => unshuffle_fixed::<32>(src, n, out),
        40 => unshuffle_fixed::<40>(src, n, out),
        _ => unshuffle_any(src, elem, n, out),
    }
    let done = n * elem;
    out[done..].copy_from_slice(&src[done..]);
}

/// Un-shuffle `n` elements of `elem` bytes (the byte planes of `src`) into `out`.
fn unshuffle_any(src: &[u8], elem: usize, n: usize, out: &mut [u8]) {
    for b in 0..elem {
        let s = &src[b * n..(b + 1) * n];
        for (j, v) in s.iter().enumerate() {
            out[j * elem + b] = *v;
        }
    }
}

/// [`unshuffle_any`] for a known element size: 16 elements at a time, each byte plane
/// read as one 16-byte slice.
fn unshuffle_fixed<const E: usize>(src: &[u8], n: usize, out: &mut [u8]) {
    const BLOCK: usize = 16;
    let planes: [&[u8]; E] = std::array::from_fn(|b| &src[b * n..(b + 1) * n]);
    let full = n / BLOCK * BLOCK;
    for (k, block) in out[..full * E].chunks_exact_mut(BLOCK * E).enumerate() {
        let j0 = k * BLOCK;
        let mut cols = [[0u8; BLOCK]; E];
        for (c, p) in cols.iter_mut().zip(planes.iter()) {
            c.copy_from_slice(&p[j0..j0 + BLOCK]);
        }
        for (j, o) in block.chunks_exact_mut(E).enumerate() {
            for (b, v) in o.iter_mut().enumerate() {
                *v = cols[b][j];
            }
        }
    }
    for j in full..n {
        for (b, p) in planes.iter().enumerate() {
            out[j * E + b] = p[j];
        }
    }
}

/// [`unshuffle_fixed`] for 8-byte elements (doubles, 64-bit integers: point coordinates,
/// ids, offsets) as a 16 × 8 byte transpose in SSE2 registers: three rounds of unpacks turn
/// the 16 bytes of each of the 8 planes into 16 whole elements, about a quarter of the
/// instructions of the scalar loop (which was 8 % of a cold point window). No `std` or
/// crate function does HDF5's unshuffle; the scalar loop stays for other sizes and targets.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
fn unshuffle8_sse2(src: &[u8], n: usize, out: &mut [u8]) {
    use std::arch::x86_64::{
        __m128i, _mm_cvtsi128_si64, _mm_set_epi64x, _mm_unpackhi_epi16 as hi16, _mm_unpackhi_epi32 as hi32, _mm_unpackhi_epi64,
        _mm_unpackhi_epi8 as hi8, _mm_unpacklo_epi16 as lo16, _mm_unpacklo_epi32 as lo32, _mm_unpacklo_epi8 as lo8,
    };
    const BLOCK: usize = 16;
    let planes: [&[u8]; 8] = std::array::from_fn(|b| &src[b * n..(b + 1) * n]);
    let full = n / BLOCK * BLOCK;
    for (k, block) in out[..full * 8].chunks_exact_mut(BLOCK * 8).enumerate() {
        let j = k * BLOCK;
        // r[b]: byte b of elements j..j+16.
        let mut r = [_mm_set_epi64x(0, 0); 8];
        for (v, p) in r.iter_mut().zip(planes) {
            let (mut lo, mut hi) = ([0u8; 8], [0u8; 8]);
            lo.copy_from_slice(&p[j..j + 8]);
            hi.copy_from_slice(&p[j + 8..j + 16]);
            *v = _mm_set_epi64x(i64::from_le_bytes(hi), i64::from_le_bytes(lo));
        }
        // Bytes 2b, 2b+1 of elements 0..8 (lo8) and 8..16 (hi8).
        let t: [__m128i; 8] = [lo8(r[0], r[1]), hi8(r[0], r[1]), lo8(r[2], r[3]), hi8(r[2], r[3]), lo8(r[4], r[5]), hi8(r[4], r[5]), lo8(r[6], r[7]), hi8(r[6], r[7])];
        // Bytes 0..4 of elements 0..4, 4..8, 8..12, 12..16, then bytes 4..8 of the same.
        let u: [__m128i; 8] = [lo16(t[0], t[2]), hi16(t[0], t[2]), lo16(t[1], t[3]), hi16(t[1], t[3]), lo16(t[4], t[6]), hi16(t[4], t[6]), lo16(t[5], t[7]), hi16(t[5], t[7])];
        // Elements (2i, 2i + 1), whole.
        let v: [__m128i; 8] = [lo32(u[0], u[4]), hi32(u[0], u[4]), lo32(u[1], u[5]), hi32(u[1], u[5]), lo32(u[2], u[6]), hi32(u[2], u[6]), lo32(u[3], u[7]), hi32(u[3], u[7])];
        for (o, x) in block.chunks_exact_mut(16).zip(v) {
            o[..8].copy_from_slice(&_mm_cvtsi128_si64(x).to_le_bytes());
            o[8..].copy_from_slice(&_mm_cvtsi128_si64(_mm_unpackhi_epi64(x, x)).to_le_bytes());
        }
    }
    for j in full..n {
        for (b, p) in planes.iter().enumerate() {
            out[j * 8 + b] = p[j];
        }
    }
}

/// [`unshuffle8_sse2`] for 16-byte elements (a point column's `{x, y}` doubles): a
/// 16 × 16 byte transpose ([`transpose16_sse2`]).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
fn unshuffle16_sse2(src: &[u8], n: usize, out: &mut [u8]) {
    const BLOCK: usize = 16;
    let planes: [&[u8]; 16] = std::array::from_fn(|b| &src[b * n..(b + 1) * n]);
    let full = n / BLOCK * BLOCK;
    for (k, block) in out[..full * 16].chunks_exact_mut(BLOCK * 16).enumerate() {
        let j = k * BLOCK;
        // Row b: byte b of elements j..j+16; transposed, row e is element j + e.
        let rows = transpose16_sse2(std::array::from_fn(|b| load16(&planes[b][j..j + 16])));
        for (o, x) in block.chunks_exact_mut(16).zip(rows) {
            store16(x, o);
        }
    }
    for j in full..n {
        for (b, p) in planes.iter().enumerate() {
            out[j * 16 + b] = p[j];
        }
    }
}

/// HDF5's shuffle of 8- or 16-byte elements (`E`) into `out` (the planes, `n` bytes each):
/// the transpose of [`unshuffle16_sse2`], 16 elements at a time (8-byte elements padded
/// to 16 bytes, the upper 8 rows of the result dropped). The scalar loop took about 6
/// instructions a byte, 5 % of a point convert's instructions.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
fn shuffle_sse2<const E: usize>(src: &[u8], n: usize, out: &mut [u8]) {
    const BLOCK: usize = 16;
    let full = n / BLOCK * BLOCK;
    for (k, block) in src[..full * E].chunks_exact(BLOCK * E).enumerate() {
        let j = k * BLOCK;
        // Row e: element j + e; transposed, row b is byte b of the 16 elements.
        let rows = transpose16_sse2(std::array::from_fn(|e| {
            let el = &block[e * E..(e + 1) * E];
            if E == 16 {
                load16(el)
            } else {
                std::arch::x86_64::_mm_set_epi64x(0, i64::from_le_bytes([el[0], el[1], el[2], el[3], el[4], el[5], el[6], el[7]]))
            }
        }));
        for (b, x) in rows.into_iter().take(E).enumerate() {
            store16(x, &mut out[b * n + j..b * n + j + 16]);
        }
    }
    for j in full..n {
        for b in 0..E {
            out[b * n + j] = src[j * E + b];
        }
    }
}

/// 16 bytes as an SSE2 register.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
#[inline]
fn load16(b: &[u8]) -> std::arch::x86_64::__m128i {
    let lo = i64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
    let hi = i64::from_le_bytes([b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]]);
    std::arch::x86_64::_mm_set_epi64x(hi, lo)
}

/// An SSE2 register's 16 bytes into `o`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
#[inline]
fn store16(x: std::arch::x86_64::__m128i, o: &mut [u8]) {
    use std::arch::x86_64::{_mm_cvtsi128_si64, _mm_unpackhi_epi64};
    o[..8].copy_from_slice(&_mm_cvtsi128_si64(x).to_le_bytes());
    o[8..16].copy_from_slice(&_mm_cvtsi128_si64(_mm_unpackhi_epi64(x, x)).to_le_bytes());
}

/// The transpose of a 16 × 16 byte matrix held as 16 rows: byte `c` of row `r` in, byte
/// `r` of row `c` out. Four rounds of unpacks (8-, 16-, 32- and 64-bit interleaves).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
#[inline]
fn transpose16_sse2(r: [std::arch::x86_64::__m128i; 16]) -> [std::arch::x86_64::__m128i; 16] {
    use std::arch::x86_64::{
        _mm_set_epi64x, _mm_unpackhi_epi16 as hi16, _mm_unpackhi_epi32 as hi32, _mm_unpackhi_epi64 as hi64,
        _mm_unpackhi_epi8 as hi8, _mm_unpacklo_epi16 as lo16, _mm_unpacklo_epi32 as lo32, _mm_unpacklo_epi64 as lo64,
        _mm_unpacklo_epi8 as lo8,
    };
    let zero = _mm_set_epi64x(0, 0);
    // t[2i + h]: columns 2i, 2i+1 of rows 8h..8h+8.
    let mut t = [zero; 16];
    for i in 0..8 {
        t[2 * i] = lo8(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = hi8(r[2 * i], r[2 * i + 1]);
    }
    // u[4m + g]: columns 4m..4m+4 of rows 4g..4g+4.
    let mut u = [zero; 16];
    for m in 0..4 {
        u[4 * m] = lo16(t[4 * m], t[4 * m + 2]);
        u[4 * m + 1] = hi16(t[4 * m], t[4 * m + 2]);
        u[4 * m + 2] = lo16(t[4 * m + 1], t[4 * m + 3]);
        u[4 * m + 3] = hi16(t[4 * m + 1], t[4 * m + 3]);
    }
    // w[8p + s]: columns 8p..8p+8 of rows 2s, 2s+1.
    let mut w = [zero; 16];
    for p in 0..2 {
        for g in 0..4 {
            w[8 * p + 2 * g] = lo32(u[8 * p + g], u[8 * p + 4 + g]);
            w[8 * p + 2 * g + 1] = hi32(u[8 * p + g], u[8 * p + 4 + g]);
        }
    }
    // Rows 2s and 2s + 1, whole.
    std::array::from_fn(|e| if e % 2 == 0 { lo64(w[e / 2], w[8 + e / 2]) } else { hi64(w[e / 2], w[8 + e / 2]) })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small xorshift generator: noise for the planes that do not compress.
    fn noise(seed: u64, n: usize) -> Vec<u8> {
        let mut x = seed | 1;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 24) as u8
            })
            .collect()
    }

    /// Chunks of clustered float coordinates, of integers, of fill values and of noise,
    /// with and without bytes past the last element and with planes longer than a stored
    /// block holds, at levels 1, 4 and 9: the stream `encode` writes for shuffle + deflate
    /// inflates to the shuffled data through libdeflate and through miniz_oxide (a second,
    /// independent decoder), and unshuffles to the chunk. Where planes are noise the
    /// stream stores them (it is larger than the raw chunk by at most its block headers,
    /// where libdeflate's whole-chunk stream is smaller than raw by a few bytes only);
    /// where no plane is noise it is libdeflate's stream, byte for byte.
    /// `repeats` against what it stands for, libdeflate's level-1 trial saving 8 % of a
    /// KiB: noise, noise with repeated runs let in at rising shares, counters' low bytes,
    /// periodic patterns. Every plane far from the bar gets the trial's answer.
    #[test]
    fn repeats_answers_as_a_level_one_trial_does() {
        let trial = |p: &[u8]| {
            let mut c = libdeflater::Compressor::new(libdeflater::CompressionLvl::new(1).unwrap());
            let mut buf = vec![0u8; c.deflate_compress_bound(p.len())];
            let z = c.deflate_compress(p, &mut buf).unwrap();
            1.0 - z as f64 / p.len() as f64
        };
        let mut planes: Vec<(String, Vec<u8>)> = Vec::new();
        for seed in 1..40u64 {
            planes.push((format!("noise {seed}"), noise(seed, 1024)));
            // Runs copied from earlier in the plane over a rising share of it.
            for share in [2usize, 5, 10, 20, 40, 70] {
                let mut p = noise(seed + 100, 1024);
                let mut at = 64;
                while at + 16 < 1024 && (at * 100 / 1024) < share.max(1) * 2 {
                    let from = (at * 7 + seed as usize) % (at - 16);
                    let len = 8 + (seed as usize + at) % 24;
                    let len = len.min(1024 - at);
                    for k in 0..len {
                        p[at + k] = p[from + k];
                    }
                    at += len + 1024 * share / 100 / 8 + 1;
                }
                planes.push((format!("repeats {seed} {share}"), p));
            }
            planes.push((format!("counter {seed}"), (0..1024u64).map(|i| (i * seed) as u8).collect()));
            let period = 3 + seed as usize * 7;
            let base = noise(seed + 7, period);
            planes.push((format!("period {period}"), (0..1024).map(|i| base[i % period]).collect()));
        }
        let (mut checked, mut yes, mut no) = (0, 0, 0);
        for (what, p) in &planes {
            let saving = trial(p);
            // Near the 8 % bar the two may differ; elsewhere they must agree.
            if (0.05..0.12).contains(&saving) {
                continue;
            }
            assert_eq!(repeats(p), saving >= 0.08, "{what}: level 1 saves {saving:.3}");
            checked += 1;
            if saving >= 0.08 {
                yes += 1;
            } else {
                no += 1;
            }
        }
        assert!(checked > 200 && yes > 50 && no > 50, "{checked} planes checked, {yes} repeating, {no} not");
    }

    /// A chunk's stream does not depend on what the thread compressed before it (the
    /// compressor goes on between pieces but is reset per chunk): the same chunk after
    /// others gives the same bytes.
    #[test]
    fn a_chunk_compresses_alike_whatever_came_before() {
        let coords = |seed: u64, n: usize| -> Vec<u8> { (0..n).flat_map(|i| (10.0 + (i as f64 * 0.37 + seed as f64).sin() * 0.5 + f64::from_bits(u64::from_le_bytes(noise(i as u64 + seed, 8).try_into().unwrap()) >> 30)).to_le_bytes()).collect() };
        let a = shuffle(&coords(1, 2 * 2048), 16);
        let first = deflate_shuffled(&a, 16, 4).unwrap();
        for seed in 2..8 {
            let b = shuffle(&coords(seed, 2 * (1000 + 300 * seed as usize)), 16);
            deflate_shuffled(&b, 16, 4).unwrap();
            assert_eq!(deflate_shuffled(&a, 16, 4).unwrap(), first, "after chunk {seed}");
        }
    }

    /// One noisy plane among eight is not worth the pieces: the chunk is libdeflate's
    /// stream of the whole (an Int64 column's shuffled chunk).
    #[test]
    fn one_noisy_plane_in_eight_is_deflated_whole() {
        let raw: Vec<u8> = (0..4096u64).flat_map(|i| (((i * 2_654_435_761) % 1_000_003) as f64).to_le_bytes()).collect();
        let sh = shuffle(&raw, 8);
        let stored = sh.chunks_exact(4096).filter(|p| incompressible(p)).count();
        assert!((1..2).contains(&stored), "{stored} planes stored");
        assert_eq!(deflate_shuffled(&sh, 8, 4).unwrap(), deflate(&sh, 4).unwrap());
    }

    #[test]
    fn deflate_shuffled_stores_noise_planes_and_inflates_everywhere() {
        let coords = |n: usize| -> Vec<u8> { (0..n).flat_map(|i| (10.0 + (i as f64 * 0.37).sin() * 0.5 + f64::from_bits(u64::from_le_bytes(noise(i as u64, 8).try_into().unwrap()) >> 30)).to_le_bytes()).collect() };
        let cases: Vec<(&str, Vec<u8>, usize, bool)> = vec![
            ("xy points", coords(2 * 2048), 16, true),
            ("xy points + tail", [coords(2 * 1000), vec![7, 8, 9]].concat(), 16, true),
            ("long planes", coords(2 * 70_000), 16, true),
            ("noise", noise(3, 8 * 4096), 8, true),
            ("integers", (0..4096u64).flat_map(|i| (i * 3).to_le_bytes()).collect(), 8, false),
            ("fill", [9.96921e36f64.to_le_bytes(); 2048].concat(), 8, false),
            ("few elements", coords(2 * 100), 16, false),
        ];
        for (what, raw, elem, has_noise) in cases {
            for level in [1u32, 4, 9] {
                let stages = [Stage::Shuffle { elem }, Stage::Deflate { level }];
                let z = encode(&stages, &raw).unwrap();
                let sh = shuffle(&raw, elem);
                assert_eq!(inflate(&z, sh.len()).unwrap(), sh, "{what}, level {level}: libdeflate");
                assert_eq!(miniz_oxide::inflate::decompress_to_vec_zlib(&z).unwrap(), sh, "{what}, level {level}: miniz_oxide");
                assert_eq!(decode(&stages, 0, &z, raw.len()).unwrap(), raw, "{what}, level {level}: decode");
                let mut out = vec![0u8; raw.len()];
                decode_into(&stages, 0, &z, &mut out).unwrap();
                assert_eq!(out, raw, "{what}, level {level}: decode_into");
                let whole = deflate(&sh, level).unwrap();
                if has_noise {
                    assert_ne!(z, whole, "{what}, level {level}: no plane was stored");
                    assert!(z.len() <= sh.len() + 5 * (sh.len() / 65_535 + 17) + 11, "{what}, level {level}: {} bytes for {}", z.len(), sh.len());
                } else {
                    assert_eq!(z, whole, "{what}, level {level}: not libdeflate's stream");
                }
            }
        }
    }

    #[test]
    fn unshuffle_of_every_element_size_matches_the_plain_loop() {
        for elem in [2usize, 3, 4, 8, 16, 24, 32, 40, 41] {
            for n in [0usize, 1, 2, 15, 16, 17, 100, 2048] {
                let src: Vec<u8> = (0..n * elem + 3).map(|i| (i.wrapping_mul(2654435761) >> 5) as u8).collect();
                let mut want = vec![0u8; src.len()];
                let mut got = vec![0u8; src.len()];
                // The planes cover whole elements; the last `len % elem` bytes stay as they are.
                let whole = src.len() / elem;
                if whole > 1 {
                    unshuffle_any(&src, elem, whole, &mut want);
                    want[whole * elem..].copy_from_slice(&src[whole * elem..]);
                } else {
                    want.copy_from_slice(&src);
                }
                unshuffle_into(&src, elem, &mut got);
                assert_eq!(got, want, "elem {elem}, n {n}");
            }
        }
    }

    #[test]
    fn decode_into_matches_decode_for_every_pipeline() {
        let raw: Vec<u8> = (0..4096u32).flat_map(|i| (i.wrapping_mul(2654435761) >> 7).to_le_bytes()).collect();
        for stages in [
            vec![Stage::Zstd { level: 1 }],
            vec![Stage::Shuffle { elem: 4 }, Stage::Zstd { level: 3 }],
            vec![Stage::Shuffle { elem: 4 }, Stage::Deflate { level: 4 }],
            vec![Stage::Deflate { level: 4 }],
        ] {
            let stored = encode(&stages, &raw).unwrap();
            let mut out = vec![0u8; raw.len()];
            decode_into(&stages, 0, &stored, &mut out).unwrap();
            assert_eq!(out, raw, "{stages:?}");
            // A wrong size or corrupt bytes are errors, not panics.
            let mut short = vec![0u8; raw.len() - 1];
            assert!(decode_into(&stages, 0, &stored, &mut short).is_err(), "{stages:?}");
            let mut bad = stored.clone();
            bad.truncate(bad.len() / 2);
            assert!(decode_into(&stages, 0, &bad, &mut out).is_err(), "{stages:?}");
        }
    }

    /// The SSE2 shuffles (8- and 16-byte elements) and the scalar loop give HDF5's
    /// definition, plane `b` holding byte `b` of every element, for every element count
    /// around the 16-element blocks, and undo into the input.
    #[test]
    fn shuffle_of_every_element_size_matches_the_definition() {
        for elem in [2usize, 3, 4, 8, 16, 24] {
            for n in [2usize, 15, 16, 17, 31, 33, 100, 2048] {
                let src: Vec<u8> = (0..n * elem + elem - 1).map(|i| (i.wrapping_mul(2654435761) >> 5) as u8).collect();
                let mut want = vec![0u8; src.len()];
                for j in 0..n {
                    for b in 0..elem {
                        want[b * n + j] = src[j * elem + b];
                    }
                }
                want[n * elem..].copy_from_slice(&src[n * elem..]);
                let got = shuffle(&src, elem);
                assert_eq!(got, want, "elem {elem}, n {n}");
                assert_eq!(unshuffle(&got, elem), src, "elem {elem}, n {n}");
            }
        }
    }

    #[test]
    fn shuffle_transposes_and_keeps_the_tail() {
        let src: Vec<u8> = (0u8..11).collect();
        // 3 elements of 3 bytes + 2 leftover bytes.
        assert_eq!(shuffle(&src, 3), vec![0, 3, 6, 1, 4, 7, 2, 5, 8, 9, 10]);
        assert_eq!(unshuffle(&shuffle(&src, 3), 3), src);
        assert_eq!(shuffle(&src, 1), src);
        assert_eq!(shuffle(&src[..3], 3), src[..3].to_vec(), "one element passes through");
    }

    #[test]
    fn zstd_level_follows_the_plugin() {
        assert_eq!(zstd_level(&[]), 3);
        assert_eq!(zstd_level(&[0]), 1);
        assert_eq!(zstd_level(&[7]), 7);
        assert_eq!(zstd_level(&[1000]), zstd::zstd_safe::max_c_level());
    }

    #[test]
    fn pipelines_round_trip_and_bound_output() {
        let raw: Vec<u8> = (0..40_000u32).flat_map(|i| ((i / 7) as f64).to_le_bytes()).collect();
        for st in [
            vec![Stage::Shuffle { elem: 8 }, Stage::Deflate { level: 4 }],
            vec![Stage::Shuffle { elem: 8 }, Stage::Zstd { level: 3 }],
            vec![Stage::Zstd { level: 19 }],
            vec![],
        ] {
            let enc = encode(&st, &raw).unwrap();
            assert_eq!(decode(&st, 0, &enc, raw.len()).unwrap(), raw, "{st:?}");
            if !st.is_empty() {
                assert!(enc.len() < raw.len() / 4, "{st:?}: {} bytes", enc.len());
                let e = decode(&st, 0, &enc, raw.len() - 1).unwrap_err();
                assert!(e.contains("more than") || e.contains("decodes to"), "{e}");
            }
        }
        // A skipped compression stage (mask bit 1) leaves shuffled bytes.
        let st = [Stage::Shuffle { elem: 8 }, Stage::Deflate { level: 4 }];
        assert_eq!(decode(&st, 0b10, &shuffle(&raw, 8), raw.len()).unwrap(), raw);
    }

    #[test]
    fn zstd_accepts_streamed_and_concatenated_frames() {
        let a = b"first frame ".repeat(100);
        let b = b"second".repeat(50);
        // A streamed frame has no content size.
        let mut e = zstd::stream::write::Encoder::new(Vec::new(), 5).unwrap();
        std::io::Write::write_all(&mut e, &a).unwrap();
        let mut s = e.finish().unwrap();
        assert_eq!(zstd::zstd_safe::get_frame_content_size(&s).unwrap(), None);
        s.extend_from_slice(&zstd_compress(&b, 3).unwrap());
        let want: Vec<u8> = a.iter().chain(b.iter()).copied().collect();
        assert_eq!(zstd_decompress(&s, want.len()).unwrap(), want);
        assert!(zstd_decompress(&s, want.len() - 1).is_err());
        assert!(zstd_decompress(&[0x28, 0xb5, 0x2f, 0xfd, 1, 2, 3], 100).is_err());
    }

    #[test]
    fn garbage_never_panics() {
        let st = [Stage::Shuffle { elem: 16 }, Stage::Zstd { level: 3 }];
        let st2 = [Stage::Deflate { level: 4 }];
        let mut r = crate::test_rng::SplitMix64::new(7);
        for len in [0usize, 1, 4, 5, 17, 300] {
            let g: Vec<u8> = (0..len).map(|_| r.next_u64() as u8).collect();
            assert!(decode(&st, 0, &g, 1024).is_err());
            assert!(decode(&st2, 0, &g, 1024).is_err());
        }
    }

    /// The repeat scan, which takes an untouched table slot for position 0, finds the
    /// runs the plain greedy scan with explicit empty slots finds: the same bytes covered
    /// and the same number of runs, over noise, small alphabets and copied runs.
    #[test]
    fn repeat_scan_equals_the_scan_with_empty_slots() {
        fn plain(sample: &[u8]) -> (usize, usize) {
            let sample = &sample[..sample.len().min(usize::from(u16::MAX) - 1)];
            let mut last: Vec<Option<usize>> = vec![None; 1024];
            let key = |i: usize| u32::from_le_bytes(sample[i..i + 4].try_into().unwrap());
            let (mut i, mut covered, mut runs) = (0, 0, 0);
            while i + 4 <= sample.len() {
                let h = (key(i).wrapping_mul(2_654_435_761) >> 22) as usize;
                match last[h].replace(i) {
                    Some(p) if key(p) == key(i) => {
                        let len = (4..).take_while(|&l| i + l < sample.len() && sample[p + l] == sample[i + l]).count() + 4;
                        covered += len;
                        runs += 1;
                        i += len;
                    }
                    _ => i += 1,
                }
            }
            (covered, runs)
        }
        let mut state = 0x1234_5678_9abc_def0u64;
        let mut rnd = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let (mut checked, mut with_runs) = (0, 0);
        for len in [0usize, 1, 3, 4, 5, 7, 8, 100, 1023, 1024, 2048, 70_000] {
            let trials = if len > 4096 { 4 } else { 60 };
            for alphabet in [1u64, 2, 3, 16, 256] {
                for _ in 0..trials {
                    let mut v: Vec<u8> = (0..len).map(|_| (rnd() % alphabet) as u8).collect();
                    if alphabet == 256 && len > 80 {
                        for _ in 0..rnd() % 20 {
                            let from = rnd() as usize % (len - 40);
                            let to = from + 1 + rnd() as usize % (len - from - 40);
                            let n = (4 + rnd() as usize % 30).min(len - to);
                            v.copy_within(from..from + n, to);
                        }
                    }
                    let got = repeats_stats(&v);
                    assert_eq!(got, plain(&v), "{len} bytes of {alphabet} values");
                    checked += 1;
                    with_runs += usize::from(got.1 > 0);
                }
            }
        }
        assert!(checked > 2000 && with_runs > 1000, "{checked} samples, {with_runs} with runs");
    }
}
